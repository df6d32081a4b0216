"""The epoch counter as a public mechanism (dpbandits.mechanisms.EpochCounter).

Released values are the exact prefix sums up to the last epoch end plus one
noise draw per released epoch (sigma from
dpbandits.privacy.epoch.epoch_counter_calibration), on the lattice with
the default noise; state round trips; hostile input; the privacy grid.
"""

from __future__ import annotations

import copy
import itertools
import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.errors import CheckpointError, StateError
from dpbandits.mechanisms import EpochCounter
from dpbandits.privacy.analytic_gaussian import gaussian_mu
from dpbandits.privacy.epoch import epoch_counter_calibration, epoch_ends


def _values(n: int, rng: np.random.Generator, dim: int = 3) -> np.ndarray:
    v = rng.normal(size=(n, dim))
    return 0.9 * v / np.linalg.norm(v, axis=1, keepdims=True)


def _lagged_exact(values: np.ndarray, ends: list[int], step: float | None) -> np.ndarray:
    """The exact prefix sum up to the last epoch end after each round (inputs on the lattice)."""
    v = values if step is None else np.round(values / step) * step
    sums = np.cumsum(v, axis=0)
    out = np.zeros_like(sums)
    last = np.zeros(values.shape[1:])
    for t in range(len(values)):
        if t + 1 in ends:
            last = sums[t]
        out[t] = last
    return out


def test_noise_off_release_is_the_lagged_exact_sum() -> None:
    ends = epoch_ends(40, 3, 1.5)
    c = _core.EpochCounter([2], 40, ("zero",), 3, 1.5)
    values = np.array([[0.25 * t, -0.5] for t in range(40)])
    exact = _lagged_exact(values, ends, None)
    for t, v in enumerate(values):
        c.add(v)
        assert np.array_equal(c.release(), exact[t]), t
        assert c.epochs == sum(e <= t + 1 for e in ends)
    assert c.epochs == len(ends)


def test_release_is_exact_sum_plus_noise_of_the_stated_scale() -> None:
    # Releases of R independent runs on one stream: release - lagged exact
    # sum is the sum of k i.i.d. draws of scale sigma after k epochs. The
    # discrete Gaussian of s >= 2^10 lattice steps has variance sigma^2 up
    # to a relative exp(-2 pi^2 s^2): the sample variance over N entries is
    # chi^2_N / N times k sigma^2 (standard deviation sqrt(2 / N)) and the
    # sample mean has standard deviation sqrt(k sigma^2 / N): 5 of each.
    n, runs = 60, 4000
    c = EpochCounter((3,), n, epsilon=1.0, delta=1e-6, first_epoch=4, epoch_ratio=2.0, seed=7)
    sigma, step = c.calibration.sigma, c.lattice_step
    assert step is not None and c.noise.sigma == sigma  # type: ignore[attr-defined]
    values = _values(n, np.random.default_rng(1))
    releases = c._release_runs(values, runs)
    assert releases.shape == (runs, n, 3)
    ends = c.epoch_ends
    exact = _lagged_exact(values, ends, step)
    for t in (3, 7, 40, n - 1):
        k = sum(e <= t + 1 for e in ends)
        z = (releases[:, t] - exact[t]).ravel()
        if k == 0:
            assert np.array_equal(z, np.zeros_like(z))
            continue
        N = z.size
        ratio = float(z.var()) / (k * sigma**2)
        assert abs(ratio - 1.0) < 5.0 * math.sqrt(2.0 / N), (t, ratio)
        assert abs(float(z.mean())) < 5.0 * math.sqrt(k * sigma**2 / N), (t, z.mean())
    # The float sampler: the same scale, sigma = 2 B / mu*(eps, delta) (one release per value).
    f = epoch_counter_calibration(1.0, 1e-6, 1.0, entries=3, horizon=n, sampler="float")
    assert f.sigma == pytest.approx(2.0 / gaussian_mu(1.0, 1e-6), rel=1e-9)
    assert c.calibration.sigma >= f.sigma


def test_released_values_are_exact_lattice_multiples() -> None:
    c = EpochCounter((2, 2), 50, epsilon=0.5, delta=1e-9, bound=2.0, first_epoch=2, seed=3)
    step = c.lattice_step
    assert step is not None and c.secure
    rng = np.random.default_rng(2)
    for _ in range(50):
        v = rng.normal(size=(2, 2))
        c.add(1.9 * v / np.linalg.norm(v))
        r = np.asarray(c.release())
        assert np.array_equal(r / step, np.round(r / step))
    assert c.epochs == len(c.epoch_ends)


def test_schedule_and_lag() -> None:
    c = EpochCounter((), 100, epsilon=1.0, delta=1e-6, bound=0.5, first_epoch=10, epoch_ratio=2.0, seed=0)
    assert c.epoch_ends == [10, 20, 40, 80, 100]
    last = c.release()
    for t in range(1, 101):
        c.add(0.5)
        changed = c.release() != last
        assert changed == (t in c.epoch_ends), t
        last = c.release()
    assert isinstance(last, float) and c.noise_terms == c.epochs == 5
    with pytest.raises(StateError):
        c.add(0.0)


def test_checkpoint_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    values = _values(30, np.random.default_rng(4))
    c = EpochCounter((3,), 30, epsilon=1.0, delta=1e-6, first_epoch=3, epoch_ratio=2.0, seed=5)
    for v in values[:10]:
        c.add(v)
    path = tmp_path / "epoch.ckpt"
    c.save(path, key=b"k" * 32)
    replay = EpochCounter.load(path, key=b"k" * 32, replay=True)
    fresh = EpochCounter.load(path, key=b"k" * 32)
    assert np.array_equal(replay.release(), c.release()) and np.array_equal(fresh.release(), c.release())
    assert (replay.t, replay.epochs, replay.shape) == (c.t, c.epochs, c.shape)
    for v in values[10:]:
        c.add(v)
        replay.add(v)
        fresh.add(v)
    # Replayed: bit-identical. Restored for use: the same released epochs
    # and exact sums, new noise for the epochs released after the restore.
    assert np.array_equal(replay.release(), c.release())
    assert not np.array_equal(fresh.release(), c.release())
    step = c.lattice_step
    assert step is not None
    diff = (np.asarray(fresh.release()) - np.asarray(c.release())) / step
    assert np.array_equal(diff, np.round(diff))
    # Pickle and copies: restores for use unless inside research_replay().
    d = copy.deepcopy(c)
    assert np.array_equal(d.release(), c.release()) and d.calibration == c.calibration
    with dp.research_replay():
        p = pickle.loads(pickle.dumps(c))
    assert np.array_equal(p.release(), c.release())
    with pytest.raises(CheckpointError):
        EpochCounter.load(path)  # authenticated file, no key
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 1
    path.write_bytes(bytes(blob))
    with pytest.raises(CheckpointError):
        EpochCounter.load(path, key=b"k" * 32)


def test_restored_state_must_match_its_calibration() -> None:
    c = EpochCounter((2,), 20, epsilon=1.0, delta=1e-6, seed=1)
    state, params, replay = c.__getstate__()
    with pytest.raises(ValueError):
        EpochCounter.__new__(EpochCounter).__setstate__((state, {**params, "epsilon": 2.0}, replay))
    with pytest.raises(ValueError):
        EpochCounter.__new__(EpochCounter).__setstate__((state[:-4], params, replay))
    with pytest.raises(ValueError):
        _core.EpochCounter.from_bytes(b"E\x01garbage")
    with pytest.raises(ValueError):
        _core.TreeCounter.from_bytes(state)


@pytest.mark.parametrize(
    "bad",
    [
        [np.nan, 0.0],
        [np.inf, 0.0],
        [0.0, 0.0, 0.0],
        [[0.1, 0.1]],
        [0.8, 0.8],  # norm 1.13 > bound 1
        "ab",
        [True, False],
    ],
)
def test_hostile_values_are_refused_and_change_nothing(bad: object) -> None:
    c = EpochCounter((2,), 10, epsilon=1.0, delta=1e-6, first_epoch=1, seed=1)
    c.add([0.5, 0.5])
    before = np.asarray(c.release()).copy()
    with pytest.raises((ValueError, TypeError)):
        c.add(bad)  # type: ignore[arg-type]
    assert c.t == 1 and np.array_equal(c.release(), before)
    if not isinstance(bad, str) and not isinstance(np.asarray(bad).flat[0], np.bool_):
        # (A bool row beside a float row converts to floats, as for every float input.)
        with pytest.raises((ValueError, TypeError)):
            c.add_many([[0.1, 0.1], bad])  # type: ignore[list-item]
    assert c.t == 1
    with pytest.raises(StateError):
        c.add_many(np.zeros((10, 2)))
    assert c.t == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"first_epoch": 0},
        {"first_epoch": 11},
        {"epoch_ratio": 0.5},
        {"epoch_ratio": math.nan},
        {"epoch_ratio": 65.0},
        {"bound": 0.0},
        {"bound": math.inf},
        {"epsilon": 0.0},
        {"delta": 1.0},
        {"sampler": "exact"},
        {"secure": True, "sampler": "float"},
        {"shape": (0,)},
        {"horizon": 0},
    ],
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"shape": (2,), "horizon": 10, "epsilon": 1.0, "delta": 1e-6, **kwargs}
    with pytest.raises((ValueError, TypeError)):
        EpochCounter(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("epsilon", "delta"), list(itertools.product((0.01, 0.1, 1.0, 10.0), (0.1, 1e-3, 1e-6, 1e-9, 1e-12)))
)
def test_privacy_grid_with_default_lattice_noise(epsilon: float, delta: float) -> None:
    for horizon in (10**3, 10**9):
        c = EpochCounter((4,), horizon, epsilon=epsilon, delta=delta, seed=0)
        g = c.privacy
        assert g.epsilon <= epsilon and g.delta <= delta and g.sampler == "lattice"
        assert c.lattice_step is not None and math.isfinite(c.calibration.sigma)
        # The lattice noise is no smaller than the continuous calibration's.
        cal = epoch_counter_calibration(epsilon, delta, 1.0, entries=4, horizon=horizon, sampler="float")
        assert c.calibration.sigma >= cal.sigma
    for _ in range(20):
        c.add([0.5, 0.5, 0.5, 0.5])
    r = np.asarray(c.release())
    assert np.all(np.isfinite(r)) and np.array_equal(r / c.lattice_step, np.round(r / c.lattice_step))


def test_secure_draws_from_the_operating_system() -> None:
    c = EpochCounter((2,), 10, epsilon=1.0, delta=1e-6, first_epoch=1, secure=True)
    assert c.os_entropy and c.secure
    c.add([0.1, 0.2])
    assert c.epochs == 1
    seeded = EpochCounter((2,), 10, epsilon=1.0, delta=1e-6, secure=True, seed=1)
    assert not seeded.os_entropy
