"""Secure sampling: exact discrete Laplace / Gaussian on a power-of-two
lattice, from operating-system entropy (rust/src/noise/,
dpbandits.privacy.secure).

pmf checks are Pearson chi-square tests against the exact pmf at fixed
seeds, at level 0.1% (bins with expected count >= 5; tails merged).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpbandits import _core
from dpbandits.mechanisms import (
    GaussianNoise,
    LaplaceNoise,
    SymmetricGaussianNoise,
    TreeCounter,
    WishartNoise,
    gaussian,
    laplace,
)
from dpbandits.privacy.secure import (
    lattice_exponent,
    lattice_step,
    lattice_steps,
    secure_gaussian_sensitivity,
    secure_laplace_epsilon,
)

LEVEL = 1e-3


def _chi_square(values: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """p-value of the sample against pmf on integer ``support`` (mass
    outside it merged into the two end bins)."""
    n = values.size
    counts = np.array([np.count_nonzero(values == k) for k in support], dtype=float)
    counts[0] += np.count_nonzero(values < support[0])
    counts[-1] += np.count_nonzero(values > support[-1])
    expected = pmf * n
    tail = (1.0 - pmf.sum()) / 2 * n
    expected[0] += tail
    expected[-1] += tail
    assert expected.min() >= 5
    return float(chisquare(counts, expected).pvalue)


def _dlap_pmf(t: float, support: np.ndarray) -> np.ndarray:
    q = math.exp(-1.0 / t)
    return (1 - q) / (1 + q) * q ** np.abs(support)


def _dgauss_pmf(var: float, support: np.ndarray) -> np.ndarray:
    ks = np.arange(-200, 201)
    z = np.exp(-(ks**2) / (2 * var)).sum()
    return np.exp(-(support**2) / (2 * var)) / z


@pytest.mark.parametrize("t", [1, 3, 10])
def test_discrete_laplace_has_the_exact_pmf(t: int) -> None:
    # exponent 0: the lattice is the integers and the scale is t steps.
    x = _core.sample_lattice(("lattice_laplace", t, 0), 200_000, seed=t)
    assert np.all(x == np.round(x))
    support = np.arange(-4 * t, 4 * t + 1)
    p = _chi_square(x, support, _dlap_pmf(t, support))
    print(f"[secure] discrete Laplace t = {t}: chi-square p = {p:.3f}")
    assert p > LEVEL


@pytest.mark.parametrize("sigma", [1, 2, 5])
def test_discrete_gaussian_has_the_exact_pmf(sigma: int) -> None:
    # exponent 0: sigma is a whole number of steps.
    x = _core.sample_lattice(("lattice_gaussian", sigma, 0), 200_000, seed=sigma * 10)
    assert np.all(x == np.round(x))
    support = np.arange(-int(3 * sigma), int(3 * sigma) + 1)
    p = _chi_square(x, support, _dgauss_pmf(sigma**2, support))
    print(f"[secure] discrete Gaussian sigma = {sigma}: chi-square p = {p:.3f}")
    assert p > LEVEL


def test_non_integer_scale_is_rounded_up_to_whole_steps() -> None:
    # scale 2.5 with exponent 0 is t = ceil(2.5) = 3 steps: the privacy
    # layer rounds up (lattice_steps), Rust draws the steps it is given.
    t = lattice_steps(2.5, 0)
    assert t == 3
    x = _core.sample_lattice(("lattice_laplace", t, 0), 200_000, seed=7)
    support = np.arange(-12, 13)
    assert _chi_square(x, support, _dlap_pmf(3, support)) > LEVEL


def _binned_cdf_check(x: np.ndarray, step: float, cdf_steps) -> float:  # type: ignore[no-untyped-def]
    """Chi-square over 20 bins of the exact lattice distribution."""
    k = np.round(x / step)
    edges = np.linspace(-3.0, 3.0, 21) * cdf_steps.scale
    edges = np.round(edges)
    cdf = np.array([cdf_steps(e) for e in edges])
    probs = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    counts = np.diff(np.concatenate([[0], np.searchsorted(np.sort(k), edges, side="right"), [k.size]]))
    return float(chisquare(counts, probs * k.size).pvalue)


class _DlapCdf:
    """P[Y <= e] of the discrete Laplace with t steps, in closed form."""

    def __init__(self, t: int) -> None:
        self.t = t
        self.scale = t

    def __call__(self, e: float) -> float:
        q = math.exp(-1.0 / self.t)
        e = int(e)
        if e >= 0:
            return 1.0 - q ** (e + 1) / (1 + q)
        return q ** (-e) / (1 + q)


def test_public_laplace_secure_draws_the_lattice_distribution() -> None:
    scale = 3.7
    g = lattice_step(scale)
    t = math.ceil(scale / g)
    assert 2**19 <= t < 2**20
    x = laplace(scale, size=100_000, seed=3, secure=True)
    assert np.all(np.round(x / g) * g == x), "every output is an integer multiple of the lattice step"
    p = _binned_cdf_check(x, g, _DlapCdf(t))
    print(f"[secure] laplace(3.7, secure=True), lattice 2^-{lattice_exponent(scale)}: 20-bin chi-square p = {p:.3f}")
    assert p > LEVEL
    y = gaussian(0.3, size=100_000, seed=4, secure=True)
    gy = lattice_step(0.3)
    assert np.all(np.round(y / gy) * gy == y)
    # sd of the discrete Gaussian with s = ceil(0.3/g) steps is s g to 1e-9.
    s = math.ceil(0.3 / gy) * gy
    assert abs(y.std() / s - 1) < 5 * math.sqrt(1 / (2 * 100_000))


def test_os_entropy_runs_differ_and_seeded_runs_repeat() -> None:
    a, b = laplace(1.0, size=64, secure=True), laplace(1.0, size=64, secure=True)
    assert not np.array_equal(a, b)
    c, d = gaussian(1.0, size=64, secure=True), gaussian(1.0, size=64, secure=True)
    assert not np.array_equal(c, d)
    assert np.array_equal(laplace(1.0, size=64, seed=5, secure=True), laplace(1.0, size=64, seed=5, secure=True))
    counters = [TreeCounter((), 16, LaplaceNoise(1.0), secure=True) for _ in range(2)]
    for c_ in counters:
        c_.add(1.0)
    assert counters[0].release() != counters[1].release()


def test_secure_tree_counter_releases_exact_lattice_sums() -> None:
    for noise in (LaplaceNoise(2.0), GaussianNoise(0.7)):
        c = TreeCounter((3,), 100, noise, seed=1, secure=True)
        g = c.lattice_step
        assert c.secure and g == lattice_step(noise.scale if isinstance(noise, LaplaceNoise) else noise.sigma)
        rng = np.random.default_rng(0)
        for _ in range(37):
            c.add(rng.uniform(-1, 1, 3))
            r = c.release()
            assert np.all(np.round(r / g) * g == r)
            # The release is exactly (no rounding error) the sum of its nodes.
            nodes = sum(n for *_, n in c.live_nodes())
            assert np.array_equal(nodes, r)
    m = TreeCounter((3, 3), 20, SymmetricGaussianNoise(1.0), seed=2, secure=True)
    m.add(np.eye(3))
    r = m.release()
    assert np.array_equal(r, r.T)
    # Inputs are rounded to the lattice before they enter the tree.
    z = TreeCounter((), 4, LaplaceNoise(1.0), seed=3, secure=True)
    z.add(0.1)
    assert z.t == 1 and z.release() == np.round(z.release() / z.lattice_step) * z.lattice_step


def test_secure_mode_refuses_what_it_cannot_do() -> None:
    with pytest.raises(ValueError, match="not WishartNoise"):
        TreeCounter((2, 2), 4, WishartNoise(1.0, 3.0), secure=True)
    with pytest.raises(TypeError, match="secure"):
        TreeCounter((), 4, LaplaceNoise(1.0), secure=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="secure"):
        laplace(1.0, secure="yes")  # type: ignore[arg-type]
    # A value whose lattice step count could break exact sums is an error.
    c = TreeCounter((), 4, LaplaceNoise(1e-6), seed=0, secure=True)
    with pytest.raises(ValueError, match="too large for exact arithmetic"):
        c.add(1e12)
    assert c.t == 0
    with pytest.raises(ValueError, match="lattice"):
        _core.sample_lattice(("lattice_laplace", lattice_steps(1.0, 40), 40), 10, seed=0)  # 2^40 steps: out of range


def test_secure_counter_checkpoint_keeps_its_noise(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = TreeCounter((), 64, LaplaceNoise(1.0), secure=True)
    assert c.os_entropy
    for _ in range(5):
        c.add(1.0)
    c.save(tmp_path / "c.ckpt")
    d = TreeCounter.load(tmp_path / "c.ckpt")
    assert d.secure and d.release() == c.release() and d.t == 5
    c.add(1.0)
    d.add(1.0)
    # Operating-system entropy has no state: the next node noise differs.
    assert c.release() != d.release()


def test_lattice_and_guarantee_by_hand() -> None:
    assert lattice_exponent(1.0) == 19  # 1.0 = 0.5 * 2^1 -> 1.0 * 2^19 = 2^19 steps
    assert lattice_exponent(4.0) == 17
    assert lattice_exponent(3.0) == 18  # 3 * 2^18 in [2^19, 2^20)
    assert lattice_step(4.0) == 2.0**-17
    # eps = (ceil(1 * 2^17) + 1) / (4 * 2^17) = 1/4 + 2^-19.
    assert secure_laplace_epsilon(1.0, 4.0) == 0.25 + 2.0**-19
    assert secure_laplace_epsilon(1.0, 4.0, dim=3) == 0.25 + 3 * 2.0**-19
    assert secure_gaussian_sensitivity(1.0, 4.0, dim=4) == 1.0 + 2 * 2.0**-17
    with pytest.raises(ValueError):
        lattice_exponent(0.0)
    with pytest.raises(ValueError):
        lattice_exponent(1e-320)
