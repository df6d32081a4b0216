"""The tree-based (binary) mechanism of ``dpbandits.mechanisms.TreeCounter``.

Claims checked (Shariff & Sheffet 2018 App. A.2; Mishra & Thakurta 2015
App. A; Agarwal & Singh 2017 Alg. 2):

- with no noise the counter releases the exact running sum;
- a release is the exact prefix sum plus the noise of exactly the dyadic
  nodes of [1, t], so it carries popcount(t) <= m = 1 + ceil(log2 n) noise
  terms; the padded variant carries exactly max(1, ceil(log2 n));
- each leaf is covered by at most m noisy nodes, and node noise does not
  depend on the data;
- node noise is drawn once: reading, pickling and restoring never redraw it;
- memory is O(log n) values.

Statistical thresholds follow tests/test_samplers.py: fixed seeds, Z = 5
standard errors, variance bounds from the fourth moment, KS at p > 1e-3.
"""

from __future__ import annotations

import copy
import math
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

from dpbandits import _core
from dpbandits.errors import StateError
from dpbandits.learners.online import research_replay
from dpbandits.mechanisms import (
    GaussianNoise,
    LaplaceNoise,
    SymmetricGaussianNoise,
    TreeCounter,
    WishartNoise,
    ZeroNoise,
)

ALPHA = 1e-3
Z = 5.0
EPS = np.finfo(np.float64).eps

# ---------------------------------------------------------------- helpers


def ceil_log2(n: int) -> int:
    return (n - 1).bit_length()


def max_terms(n: int) -> int:
    """m = 1 + ceil(log2 n) (Shariff & Sheffet §2)."""
    return 1 + ceil_log2(n)


def dyadic(t: int) -> list[tuple[int, int, int]]:
    """(level, first, last) of the dyadic decomposition of [1, t], highest first."""
    out, start = [], 0
    for level in reversed(range(t.bit_length())):
        if t >> level & 1:
            out.append((level, start + 1, start + 2**level))
            start += 2**level
    return out


def trailing_zeros(t: int) -> int:
    return (t & -t).bit_length() - 1


def stream(rng: np.random.Generator, n: int, shape: tuple[int, ...], integer: bool) -> np.ndarray:
    if integer:
        return rng.integers(-1000, 1001, size=(n, *shape)).astype(np.float64)
    return rng.standard_normal((n, *shape)) * 10.0


def symmetric_stream(rng: np.random.Generator, n: int, p: int, integer: bool) -> np.ndarray:
    x = stream(rng, n, (p, p), integer)
    return x + np.swapaxes(x, 1, 2)


# ------------------------------------------------------------ exactness


@pytest.mark.parametrize("padded", [False, True])
def test_zero_noise_scalar_counter_is_exact_at_every_step(padded: bool) -> None:
    # Integer data: every partial sum is exact in float64, so any order of
    # summation must agree with np.cumsum to the last bit.
    n = 100_000
    x = stream(np.random.default_rng(1), n, (), integer=True)
    c = TreeCounter((), n, ZeroNoise(), seed=1, padded=padded)
    releases = np.empty(n)
    for t in range(n):
        c.add(x[t])
        releases[t] = c.release()
    np.testing.assert_array_equal(releases, np.cumsum(x))


@pytest.mark.parametrize("shape", [(7,), (3, 3)])
def test_zero_noise_counter_is_exact_with_add_and_add_many(shape) -> None:
    # A 1e5-round integer stream: every release after add(), and the release
    # after each random-length add_many() batch of a second counter.
    n = 100_000
    rng = np.random.default_rng(2)
    x = stream(rng, n, shape, integer=True)
    exact = np.cumsum(x, axis=0)
    one = TreeCounter(shape, n, ZeroNoise(), seed=2)
    releases = np.empty_like(x)
    for t in range(n):
        one.add(x[t])
        releases[t] = one.release()
    np.testing.assert_array_equal(releases, exact)
    batched = TreeCounter(shape, n, ZeroNoise(), seed=2)
    t = 0
    while t < n:
        step = min(int(rng.integers(1, 5000)), n - t)
        batched.add_many(x[t : t + step])
        t += step
        assert batched.t == t
        np.testing.assert_array_equal(batched.release(), exact[t - 1])
    for c in (one, batched):
        with pytest.raises(StateError):
            c.add(x[0])


def test_zero_noise_counter_on_real_data_is_within_summation_error() -> None:
    # Any summation order of t terms is within (t - 1) u sum|x_i| of the true
    # sum (u = eps / 2), so the tree and np.cumsum are within twice that.
    n = 100_000
    rng = np.random.default_rng(3)
    x = symmetric_stream(rng, n, 3, integer=False)
    c = TreeCounter((3, 3), n, ZeroNoise(), seed=3)
    exact = np.cumsum(x, axis=0)
    bound = np.cumsum(np.abs(x), axis=0) * EPS * np.arange(1, n + 1)[:, None, None]
    for t in range(2000):
        c.add(x[t])
        assert np.all(np.abs(c.release() - exact[t]) <= bound[t])
    for start in range(2000, n, 7919):
        stop = min(start + 7919, n)
        c.add_many(x[start:stop])
        assert np.all(np.abs(c.release() - exact[stop - 1]) <= bound[stop - 1])
    assert c.t == n


def test_release_before_any_addition_is_zero() -> None:
    c = TreeCounter((2, 2), 10, GaussianNoise(1.0), seed=0, padded=True)
    assert c.t == 0 and c.noise_terms == 0
    np.testing.assert_array_equal(c.release(), np.zeros((2, 2)))
    assert c.live_nodes() == []


# ------------------------------------------------------- noise-term count

HORIZONS = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000, 1023, 1024, 1025]


@pytest.mark.parametrize("n", HORIZONS)
def test_every_release_has_popcount_t_at_most_m_noise_terms(n: int) -> None:
    c = TreeCounter((), n, LaplaceNoise(1.0), seed=4)
    assert c.max_noise_terms == max_terms(n) == 1 + math.ceil(math.log2(n))
    for t in range(1, n + 1):
        c.add(0.0)
        assert c.noise_terms == bin(t).count("1") == len(c.live_nodes())
        assert c.noise_terms <= max_terms(n)


@pytest.mark.parametrize("n", HORIZONS)
def test_padded_release_has_exactly_max_1_ceil_log2_n_terms(n: int) -> None:
    # Agarwal & Singh Alg. 2, lines 4-6.
    want = max(1, ceil_log2(n))
    c = TreeCounter((), n, GaussianNoise(1.0), seed=5, padded=True)
    for _ in range(n):
        c.add(0.0)
        assert c.noise_terms == want


@pytest.mark.parametrize("n", [10**5, 2**17, 10**6])
def test_noise_term_bound_at_the_worst_rounds_of_long_horizons(n: int) -> None:
    # popcount(t) peaks at t = 2^k - 1; reach those rounds with add_many.
    plain = TreeCounter((), n, GaussianNoise(1.0), seed=6)
    padded = TreeCounter((), n, GaussianNoise(1.0), seed=6, padded=True)
    t = 0
    for k in range(1, n.bit_length() + 1):
        target = min(2**k - 1, n)
        for c in (plain, padded):
            c.add_many(np.zeros(target - t))
        t = target
        assert plain.noise_terms == bin(t).count("1") <= max_terms(n)
        assert padded.noise_terms == max(1, ceil_log2(n))


# ------------------------------------- release = exact sum + live-node noise

NOISY_SPECS = [
    pytest.param((4,), LaplaceNoise(1.5), id="laplace-vector"),
    pytest.param((), GaussianNoise(2.0), id="gaussian-scalar"),
    pytest.param((3, 3), SymmetricGaussianNoise(1.0), id="symmetric-gaussian"),
    pytest.param((3, 3), WishartNoise(1.0, 6.0), id="wishart"),
]


def _data(shape: tuple[int, ...], n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if len(shape) == 2:
        return symmetric_stream(rng, n, shape[0], integer=False)
    return stream(rng, n, shape, integer=False)


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize(("shape", "noise"), NOISY_SPECS)
def test_release_is_exact_sum_plus_noise_of_the_live_dyadic_nodes(shape, noise, padded) -> None:
    n = 300
    x = _data(shape, n, seed=7)
    exact = np.cumsum(x, axis=0)
    c = TreeCounter(shape, n, noise, seed=7, padded=padded)
    seen: dict[tuple[int, int], np.ndarray] = {}
    for t in range(1, n + 1):
        c.add(x[t - 1])
        nodes = c.live_nodes()
        assert [(lv, a, b) for lv, a, b, _ in nodes] == dyadic(t)
        noise_sum = np.zeros(shape)
        for level, first, last, noisy in nodes:
            assert last - first + 1 == 2**level
            node_exact = x[first - 1 : last].sum(axis=0)
            node_noise = noisy - node_exact
            assert np.all(node_noise != 0.0), "a node carries no noise"
            noise_sum += node_noise
            # Stored with the node: bit-identical every time the node is live.
            key = (first, last)
            if key in seen:
                np.testing.assert_array_equal(noisy, seen[key])
            seen[key] = noisy
        residual = c.release() - exact[t - 1] - noise_sum
        scale = np.abs(x[:t]).sum(axis=0) + sum(np.abs(nd[3]) for nd in nodes) + 1.0
        if padded and len(nodes) < max(1, ceil_log2(n)):
            # The residual is the round's padding noise: present, data-free.
            assert np.any(np.abs(residual) > 64 * t * EPS * scale)
        else:
            assert np.all(np.abs(residual) <= 4 * t * EPS * scale), residual


# ---------------------------------------------- neighbouring streams (privacy)


def _created_nodes(c: TreeCounter, x: np.ndarray) -> tuple[dict, list[np.ndarray]]:
    """Adds ``x`` row by row; returns {(first, last): noisy} of the node created
    at each round (the live node at level trailing_zeros(t)) and all releases."""
    created, releases = {}, []
    for t in range(1, len(x) + 1):
        c.add(x[t - 1])
        level = trailing_zeros(t)
        (node,) = [nd for nd in c.live_nodes() if nd[0] == level]
        assert (node[1], node[2]) == (t - 2**level + 1, t)
        created[(node[1], node[2])] = node[3]
        releases.append(c.release())
    return created, releases


@pytest.mark.parametrize(
    ("n", "leaves"),
    [
        (64, range(1, 65)),
        (1000, [1, 2, 3, 255, 256, 257, 500, 511, 512, 513, 999, 1000]),
        (37, range(1, 38)),
    ],
)
@pytest.mark.parametrize("padded", [False, True])
def test_one_leaf_changes_at_most_m_node_noises_exactly_its_ancestors(n, leaves, padded) -> None:
    shape = (2,)
    x = _data(shape, n, seed=8)
    delta = np.array([1.0, -2.0])
    m = max_terms(n)
    for s in leaves:
        y = x.copy()
        y[s - 1] += delta
        a_nodes, a_rel = _created_nodes(
            TreeCounter(shape, n, LaplaceNoise(1.0), seed=9, padded=padded), x
        )
        b_nodes, b_rel = _created_nodes(
            TreeCounter(shape, n, LaplaceNoise(1.0), seed=9, padded=padded), y
        )
        assert a_nodes.keys() == b_nodes.keys()
        differ = {r for r in a_nodes if not np.array_equal(a_nodes[r], b_nodes[r])}
        cover = {r for r in a_nodes if r[0] <= s <= r[1]}
        assert differ == cover, (s, sorted(differ ^ cover))
        assert 1 <= len(differ) <= m
        for (first, last), noisy in a_nodes.items():
            # Node noise does not depend on the data: same draw in both runs.
            noise_a = noisy - x[first - 1 : last].sum(axis=0)
            noise_b = b_nodes[(first, last)] - y[first - 1 : last].sum(axis=0)
            np.testing.assert_allclose(noise_a, noise_b, rtol=0, atol=1e-9)
        for t in range(1, n + 1):
            if t < s:
                np.testing.assert_array_equal(a_rel[t - 1], b_rel[t - 1])
            else:
                np.testing.assert_allclose(b_rel[t - 1] - a_rel[t - 1], delta, rtol=0, atol=1e-9)


# --------------------------------------------------------------- pickling


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize(("shape", "noise"), NOISY_SPECS)
@pytest.mark.parametrize("cut", [0, 1, 137, 512])
def test_pickle_mid_stream_continues_with_the_same_noise(shape, noise, padded, cut) -> None:
    n = 1000
    x = _data(shape, n, seed=10)
    a = TreeCounter(shape, n, noise, seed=10, padded=padded)
    if cut:
        a.add_many(x[:cut])
    before = a.release()
    with research_replay():  # bit-identical copies (outside it, each copy is re-keyed)
        state = pickle.dumps(a)
    b = pickle.loads(state)
    c = pickle.loads(state)
    # Not redrawn on restore: the very next read is bit-identical.
    np.testing.assert_array_equal(b.release(), before)
    np.testing.assert_array_equal(a.release(), before)
    assert (b.t, b.noise_terms, b.horizon, b.shape, b.padded, b.noise) == (
        a.t,
        a.noise_terms,
        a.horizon,
        a.shape,
        a.padded,
        a.noise,
    )
    for (la, fa, ea, va), (lb, fb, eb, vb) in zip(a.live_nodes(), b.live_nodes(), strict=True):
        assert (la, fa, ea) == (lb, fb, eb)
        np.testing.assert_array_equal(va, vb)
    # The generator state travels too: all three continue identically.
    for t in range(cut, n):
        for k in (a, b, c):
            k.add(x[t])
        np.testing.assert_array_equal(a.release(), b.release())
        np.testing.assert_array_equal(a.release(), c.release())


def test_core_object_and_copies_round_trip() -> None:
    x = _data((3, 3), 100, seed=11)
    a = TreeCounter((3, 3), 100, WishartNoise(2.0, 5.0), seed=11, padded=True)
    a.add_many(x[:41])
    raw = pickle.loads(pickle.dumps(a._inner))
    assert isinstance(raw, _core.TreeCounter)
    with research_replay():
        copies = (copy.copy(a), copy.deepcopy(a))
    for other in copies:
        np.testing.assert_array_equal(other.release(), a.release())
        assert other._inner is not a._inner
    np.testing.assert_array_equal(raw.release(), a.release())
    for row in x[41:]:
        a.add(row)
        raw.add(row)
        np.testing.assert_array_equal(raw.release(), a.release())


def test_a_full_counter_stays_full_after_restore() -> None:
    a = TreeCounter((), 8, LaplaceNoise(1.0), seed=12)
    a.add_many(np.ones(8))
    b = pickle.loads(pickle.dumps(a))
    with pytest.raises(StateError):
        b.add(1.0)


# --------------------------------------------------------- repeated reads


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize(("shape", "noise"), NOISY_SPECS)
def test_reading_a_release_twice_gives_the_same_values(shape, noise, padded) -> None:
    n = 64
    x = _data(shape, n, seed=13)
    c = TreeCounter(shape, n, noise, seed=13, padded=padded)
    for t in range(n):
        c.add(x[t])
        r1 = c.release()
        r2 = c.release()
        np.testing.assert_array_equal(r1, r2)
        if np.ndim(r1):
            r1[...] = 0.0  # a new array each time: the caller cannot edit the state
        c.live_nodes()
        pickle.dumps(c)
        np.testing.assert_array_equal(c.release(), r2)


# ------------------------------------------------------------------ memory


def _levels(n: int) -> int:
    return n.bit_length()  # floor(log2 n) + 1


def test_state_size_is_logarithmic_in_the_horizon_and_constant_in_t() -> None:
    # The state holds, per level, one exact and one noisy node sum (8-byte
    # floats), plus the padding and release buffers: 8 (2 L + 2) dim bytes,
    # and a constant for shape, horizon, t, noise spec and the generator.
    shape, dim, overhead = (6, 6), 36, 512
    sizes = {}
    for n in (10**2, 10**6):
        c = TreeCounter(shape, n, GaussianNoise(1.0), seed=14)
        sizes[n] = len(pickle.dumps(c))
        assert sizes[n] <= 8 * (2 * _levels(n) + 2) * dim + overhead, (n, sizes[n])
    extra_levels = _levels(10**6) - _levels(10**2)
    grown = sizes[10**6] - sizes[10**2]
    # Exactly the extra levels, give or take varint widths (horizon, lengths).
    assert 16 * dim * extra_levels <= grown <= 16 * dim * extra_levels + 16, grown

    c = TreeCounter(shape, 10**6, GaussianNoise(1.0), seed=14)
    base = len(pickle.dumps(c))
    x = np.random.default_rng(14).standard_normal((10**5, *shape))
    done = 0
    for t in (1, 1000, 10**5):
        c.add_many(x[done:t])
        done = t
        # Only varints (t, generator position) may widen.
        assert base <= len(pickle.dumps(c)) <= base + 32, (t, len(pickle.dumps(c)) - base)


# ------------------------------------------------------------------ errors


def _raises_naming(call, exc, name: str) -> None:
    with pytest.raises(exc) as info:
        call()
    assert f"`{name}`" in str(info.value), f"message does not name `{name}`: {info.value}"


def test_adding_past_the_horizon_is_a_state_error_and_changes_nothing() -> None:
    c = TreeCounter((2,), 5, LaplaceNoise(1.0), seed=15)
    c.add_many(np.ones((3, 2)))
    before = c.release()
    with pytest.raises(StateError):
        c.add_many(np.ones((3, 2)))  # only 2 would fit
    assert c.t == 3
    np.testing.assert_array_equal(c.release(), before)
    c.add_many(np.ones((2, 2)))
    assert c.t == 5
    full = c.release()
    with pytest.raises(StateError, match="horizon"):
        c.add(np.ones(2))
    with pytest.raises(RuntimeError):  # StateError is a RuntimeError
        c.add_many(np.ones((1, 2)))
    assert c.t == 5
    np.testing.assert_array_equal(c.release(), full)


@pytest.mark.parametrize(
    ("shape", "value", "method", "name"),
    [
        ((3,), np.ones(4), "add", "value"),
        ((3,), np.ones((3, 1)), "add", "value"),
        ((), np.ones(2), "add", "value"),
        ((2, 2), np.ones(4), "add", "value"),
        ((3,), np.ones(3), "add_many", "values"),
        ((3,), np.ones((2, 4)), "add_many", "values"),
        ((2, 2), np.ones((2, 2, 3)), "add_many", "values"),
        ((), 1.0, "add_many", "values"),
    ],
)
def test_wrong_shape_is_a_value_error_naming_the_argument(shape, value, method, name) -> None:
    c = TreeCounter(shape, 10, LaplaceNoise(1.0), seed=16)
    _raises_naming(lambda: getattr(c, method)(value), ValueError, name)
    assert c.t == 0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_rejected_and_change_nothing(bad: float) -> None:
    c = TreeCounter((3,), 10, LaplaceNoise(1.0), seed=17)
    c.add(np.ones(3))
    before = c.release()
    _raises_naming(lambda: c.add(np.array([1.0, bad, 1.0])), ValueError, "value")
    _raises_naming(
        lambda: c.add_many(np.array([[1.0, 1.0, 1.0], [bad, 0.0, 0.0]])), ValueError, "values"
    )
    assert c.t == 1
    np.testing.assert_array_equal(c.release(), before)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda v: LaplaceNoise(v), "scale"),
        (lambda v: GaussianNoise(v), "sigma"),
        (lambda v: SymmetricGaussianNoise(v), "sigma"),
        (lambda v: WishartNoise(v, 5.0), "scale"),
        (lambda v: WishartNoise(1.0, v), "df"),
    ],
)
def test_non_positive_noise_parameters_are_rejected(make, name, bad) -> None:
    _raises_naming(lambda: make(bad), ValueError, name)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 2, 2)])
@pytest.mark.parametrize("noise", [WishartNoise(1.0, 5.0), SymmetricGaussianNoise(1.0)])
def test_matrix_noise_needs_a_square_shape(shape, noise) -> None:
    _raises_naming(lambda: TreeCounter(shape, 10, noise, seed=0), ValueError, "shape")


@pytest.mark.parametrize("df", [2.0, 1.5, 0.5])
def test_wishart_noise_needs_df_above_p_minus_one(df: float) -> None:
    _raises_naming(lambda: TreeCounter((3, 3), 10, WishartNoise(1.0, df), seed=0), ValueError, "df")
    TreeCounter((3, 3), 10, WishartNoise(1.0, 2.0001), seed=0).add(np.eye(3))


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        ({"horizon": 0}, ValueError, "horizon"),
        ({"horizon": -3}, ValueError, "horizon"),
        ({"horizon": 2**64}, ValueError, "horizon"),
        ({"horizon": 2.5}, TypeError, "horizon"),
        ({"horizon": "10"}, TypeError, "horizon"),
        ({"shape": 0}, ValueError, "shape"),
        ({"shape": (3, 0)}, ValueError, "shape"),
        ({"shape": (-1,)}, ValueError, "shape"),
        ({"shape": 2.5}, TypeError, "shape"),
        ({"shape": ("a",)}, TypeError, "shape"),
        ({"noise": "laplace"}, TypeError, "noise"),
        ({"noise": None}, TypeError, "noise"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 2**64}, ValueError, "seed"),
        ({"seed": "1"}, TypeError, "seed"),
    ],
)
def test_bad_constructor_arguments(kwargs, exc, name) -> None:
    args = {"shape": (2,), "horizon": 10, "noise": LaplaceNoise(1.0), "seed": 0}
    args.update(kwargs)
    _raises_naming(lambda: TreeCounter(**args), exc, name)


@pytest.mark.parametrize(
    "kwargs", [{"horizon": True}, {"shape": (True,)}, {"shape": False}, {"seed": True}]
)
def test_bool_for_an_integer_argument_is_a_type_error(kwargs) -> None:
    args = {"shape": (2,), "horizon": 10, "noise": LaplaceNoise(1.0), "seed": 0}
    args.update(kwargs)
    (name,) = kwargs
    _raises_naming(lambda: TreeCounter(**args), TypeError, name)


@pytest.mark.parametrize("method", ["add", "add_many"])
def test_non_numeric_values_are_refused_naming_the_argument(method: str) -> None:
    c = TreeCounter((2,), 10, LaplaceNoise(1.0), seed=0)
    name = "value" if method == "add" else "values"
    # Strings are the wrong type (TypeError, as for rewards); a mapping is not
    # convertible to an array of the counter's shape (ValueError).
    for bad, exc in (("abc", TypeError), (["a", "b"], TypeError), ({"x": 1}, ValueError)):
        _raises_naming(lambda b=bad: getattr(c, method)(b), exc, name)
    assert c.t == 0


def test_seed_none_counters_draw_different_noise() -> None:
    a = TreeCounter((4,), 10, GaussianNoise(1.0), seed=None)
    b = TreeCounter((4,), 10, GaussianNoise(1.0), seed=None)
    a.add(np.zeros(4))
    b.add(np.zeros(4))
    assert np.all(np.isfinite(a.release()))
    assert not np.array_equal(a.release(), b.release())


def _run_isolated(body: str) -> subprocess.CompletedProcess[str]:
    """Runs ``body`` in a fresh interpreter: an abort must not take pytest down."""
    script = (
        "import pickle\nimport numpy as np\nfrom dpbandits import _core\n"
        "from dpbandits.mechanisms import *\n" + textwrap.dedent(body)
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


def test_hostile_shapes_are_a_value_error_not_an_abort() -> None:
    # (1e8, 1e8) must not abort the process on a failed allocation, and
    # (2^32, 2^32) must not wrap around to a 0-entry counter.
    proc = _run_isolated(
        """
        for shape in [(10**8, 10**8), (2**32, 2**32), (2**62, 4), (2**40, 2**40, 2**40)]:
            try:
                TreeCounter(shape, 10, ZeroNoise(), seed=0)
            except ValueError as e:
                assert "`shape`" in str(e), e
            else:
                raise SystemExit(f"accepted {shape}")
        print("survived")
        """
    )
    assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-2000:]


def test_corrupted_state_is_a_value_error_and_never_crashes() -> None:
    # Every single-byte corruption and every truncation of valid states is
    # either rejected with ValueError or yields a counter that still works;
    # never a panic or an abort.
    proc = _run_isolated(
        """
        specs = [((), LaplaceNoise(1.0), False), ((2, 2), WishartNoise(1.0, 3.0), True),
                 ((2, 2), SymmetricGaussianNoise(1.0), False), ((3,), GaussianNoise(1.0), True)]
        rejected = accepted = 0
        for shape, noise, padded in specs:
            c = TreeCounter(shape, 20, noise, seed=1, padded=padded)
            c.add_many(np.ones((5, *shape)))
            good = c._inner.to_bytes()
            variants = [good[:k] for k in range(len(good))]
            for i in range(len(good)):
                for v in (0, 1, 2, 0x7F, 0x80, 0xFF, good[i] ^ 1):
                    variants.append(good[:i] + bytes([v]) + good[i + 1:])
            for bad in variants:
                try:
                    d = _core.TreeCounter.from_bytes(bad)
                except ValueError:
                    rejected += 1
                    continue
                accepted += 1
                # A state that decodes must stay usable or fail as a Python
                # exception; PanicException is a BaseException, so a panic
                # escapes this handler and fails the test.
                for _ in range(3):
                    for use in (lambda: d.add(np.ones(d.shape)), d.release, d.live_nodes):
                        try:
                            use()
                        except Exception:
                            pass
        garbage = [b"", b"\\x01", b"\\x02" + good, bytes(range(256)), b"\\x01" + b"\\xff" * 64]
        for bad in garbage:
            shell = TreeCounter.__new__(TreeCounter)
            try:
                shell.__setstate__(bad)  # the path pickle.loads takes
            except ValueError:
                rejected += 1
        print("survived", rejected, accepted)
        """
    )
    assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-3000:]
    rejected = int(proc.stdout.split()[1])
    assert rejected > 0


# ------------------------------------------- noise distribution of a release

N_SEEDS = 2000
WIDTH = 50  # i.i.d. entries per counter: N_SEEDS * WIDTH samples per round
ROUNDS = (1, 7, 8, 13, 63)


def _releases(
    noise,
    padded: bool,
    shape: tuple[int, ...] = (WIDTH,),
    n_seeds: int = N_SEEDS,
    horizon: int = 64,
) -> dict[int, np.ndarray]:
    """Releases at ROUNDS of zero data for seeds 0..n_seeds-1: {t: (n_seeds, *shape)}."""
    out = {t: np.empty((n_seeds, *shape)) for t in ROUNDS}
    zero = np.zeros(shape)
    for seed in range(n_seeds):
        c = TreeCounter(shape, horizon, noise, seed=seed, padded=padded)
        for t in range(1, max(ROUNDS) + 1):
            c.add(zero)
            if t in out:
                out[t][seed] = c.release()
    return out


def _assert_sum_of_iid(x: np.ndarray, q: int, var: float, mu4: float, what: str) -> None:
    # Sum of q i.i.d. terms of variance var and fourth central moment mu4:
    # variance q var, fourth central moment q mu4 + 3 q (q - 1) var^2.
    n = x.size
    v_sum = q * var
    mu4_sum = q * mu4 + 3 * q * (q - 1) * var**2
    assert abs(float(np.mean(x))) <= Z * math.sqrt(v_sum / n), what
    tol = Z * math.sqrt((mu4_sum - v_sum**2) / n)
    assert abs(float(np.var(x, ddof=1)) - v_sum) <= tol, (what, np.var(x), v_sum, tol)


def test_laplace_release_variance_is_popcount_t_node_variances() -> None:
    b = 0.7
    rel = {t: v.ravel() for t, v in _releases(LaplaceNoise(b), padded=False).items()}
    for t, x in rel.items():
        _assert_sum_of_iid(x, bin(t).count("1"), 2 * b**2, 24 * b**4, f"t={t}")
    # Power: t = 7 (three nodes) is not one node's worth.
    assert abs(np.var(rel[7]) - 2 * b**2) > 10 * Z * math.sqrt(20 * b**4 / rel[7].size)


@pytest.mark.parametrize("padded", [False, True])
def test_gaussian_release_is_normal_with_popcount_t_node_variances(padded: bool) -> None:
    sigma = 1.5
    rel = {t: v.ravel() for t, v in _releases(GaussianNoise(sigma), padded=padded).items()}
    for t, x in rel.items():
        q = max(1, ceil_log2(64)) if padded else bin(t).count("1")
        _assert_sum_of_iid(x, q, sigma**2, 3 * sigma**4, f"t={t}")
        assert stats.kstest(x, stats.norm(0, sigma * math.sqrt(q)).cdf).pvalue > ALPHA / len(ROUNDS)


def _terms(t: int, padded: bool, horizon: int = 64) -> int:
    return max(1, ceil_log2(horizon)) if padded else bin(t).count("1")


@pytest.mark.parametrize("padded", [False, True])
def test_symmetric_gaussian_release_is_a_sum_of_popcount_t_node_noises(padded: bool) -> None:
    # Diagonal entries N(0, 2 q s^2), off-diagonal N(0, q s^2), symmetric.
    sigma, p = 0.9, 3
    rel = _releases(SymmetricGaussianNoise(sigma), padded, shape=(p, p), n_seeds=4000)
    for t, w in rel.items():
        q = _terms(t, padded)
        assert np.array_equal(w, np.swapaxes(w, 1, 2))
        for i, j in [(0, 0), (2, 2), (0, 1), (1, 2)]:
            var = q * (2.0 if i == j else 1.0) * sigma**2
            x = w[:, i, j]
            _assert_sum_of_iid(x, 1, var, 3 * var**2, f"t={t} ({i},{j})")
            pvalue = stats.kstest(x, stats.norm(0, math.sqrt(var)).cdf).pvalue
            assert pvalue > ALPHA / (4 * len(ROUNDS)), (t, i, j)


@pytest.mark.parametrize("padded", [False, True])
def test_wishart_release_is_wishart_with_popcount_t_times_df(padded: bool) -> None:
    # Independent W_p(sI, k) node noises add up to W_p(sI, q k): the release of
    # zero data at round t has mean q k s I, and a^T R a / (s |a|^2) ~ chi^2_{qk}
    # for every fixed a (checked for 3 directions, Bonferroni over directions
    # and rounds). The padded variant must give q = max(1, ceil(log2 n)).
    s, k, p = 0.8, 3.5, 3
    n_seeds = 3000
    rel = _releases(WishartNoise(s, k), padded, shape=(p, p), n_seeds=n_seeds)
    directions = [np.eye(p)[0], np.eye(p)[2], np.array([1.0, -1.0, 1.0])]
    for t, w in rel.items():
        q = _terms(t, padded)
        df = q * k
        assert np.array_equal(w, np.swapaxes(w, 1, 2))
        for i in range(p):
            for j in range(i, p):
                var = df * s**2 * (2.0 if i == j else 1.0)  # k (S_ij^2 + S_ii S_jj)
                mean = df * s if i == j else 0.0
                assert abs(w[:, i, j].mean() - mean) <= Z * math.sqrt(var / n_seeds), (t, i, j)
        for a in directions:
            ratio = np.einsum("i,nij,j->n", a, w, a) / (s * a @ a)
            pvalue = stats.kstest(ratio, stats.chi2(df).cdf).pvalue
            assert pvalue > ALPHA / (len(directions) * len(ROUNDS)), (t, a)


def test_fortran_order_values_are_read_in_logical_order() -> None:
    # A Fortran-contiguous array's buffer is column-major; the counter must
    # add the matrix, not its transpose.
    a = np.arange(6.0).reshape(2, 3)
    c_order = TreeCounter((2, 3), 4, ZeroNoise(), seed=0)
    f_order = TreeCounter((2, 3), 4, ZeroNoise(), seed=0)
    c_order.add(a)
    f_order.add(np.asfortranarray(a))
    np.testing.assert_array_equal(f_order.release(), a)
    np.testing.assert_array_equal(c_order.release(), f_order.release())
