"""Core sets by Frank–Wolfe (Hanna et al., App. A and Lemma 2)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dpbandits.design import CoreSet, core_set
from dpbandits.errors import DegenerateInputError


def unit_rows(k: int, d: int, seed: int) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal((k, d))
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def anisotropic_rows(k: int, d: int, seed: int) -> np.ndarray:
    """Coordinates of very different scales: Frank–Wolfe needs real work."""
    return unit_rows(k, d, seed) * (0.02 + (np.arange(d) / d) ** 2)


def variances(actions: np.ndarray, support: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """||a||^2_{V^{-1}} of every action, V = sum_j w_j a_j a_j^T over the support."""
    s = actions[support]
    v = s.T @ (weights[:, None] * s)
    return np.einsum("ij,ij->i", actions @ np.linalg.inv(v), actions)


def numpy_frank_wolfe(actions: np.ndarray, stop_at: float) -> tuple[np.ndarray, float, int]:
    """App. A, straightforwardly: full recomputation of V^{-1} every step."""
    k, d = actions.shape
    pi = np.full(k, 1.0 / k)
    for it in range(100_000):
        v = actions.T @ (pi[:, None] * actions)
        g = np.einsum("ij,ij->i", actions @ np.linalg.inv(v), actions)
        j = int(np.argmax(g))
        if g[j] <= stop_at:
            return pi, float(g[j]), it
        gamma = (g[j] / d - 1.0) / (g[j] - 1.0)
        pi *= 1.0 - gamma
        pi[j] += gamma
    raise AssertionError("reference Frank-Wolfe did not stop")


CASES = [(40, 3, 1), (300, 5, 2), (500, 8, 3)]


@pytest.mark.parametrize("reduce_support", [True, False])
@pytest.mark.parametrize(("k", "d", "seed"), CASES)
def test_weights_are_a_distribution_on_the_support(k, d, seed, reduce_support):
    cs = core_set(anisotropic_rows(k, d, seed), reduce_support=reduce_support)
    assert cs.weights.shape == cs.support.shape
    assert cs.support.dtype == np.int64
    assert np.all(cs.weights > 0)
    assert cs.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(cs.support) > 0)
    assert 0 <= cs.support.min() and cs.support.max() < k


@pytest.mark.parametrize("reduce_support", [True, False])
@pytest.mark.parametrize("tight", [False, True])
@pytest.mark.parametrize(("k", "d", "seed"), CASES)
def test_every_action_satisfies_the_stopping_rule(k, d, seed, tight, reduce_support):
    a = anisotropic_rows(k, d, seed)
    stop_at = 1.02 * d if tight else None
    cs = core_set(a, stop_at=stop_at, reduce_support=reduce_support)
    assert cs.stop_at == (1.02 * d if tight else 2.0 * d)
    g = variances(a, cs.support, cs.weights)
    assert g.max() == pytest.approx(cs.value, rel=1e-9)
    assert g.max() <= cs.stop_at * (1 + 1e-12)
    # Kiefer–Wolfowitz: no design does better than d, and the
    # pi-average of ||a||^2_{V^{-1}} over the support is exactly d.
    assert g.max() >= d * (1 - 1e-12)
    assert cs.weights @ g[cs.support] == pytest.approx(d, rel=1e-10)


@pytest.mark.parametrize(("k", "d", "seed"), [*CASES, (2000, 6, 4)])
def test_support_is_at_most_d_d_plus_1_over_2(k, d, seed):
    for stop_at in (None, 1.05 * d):
        cs = core_set(anisotropic_rows(k, d, seed), stop_at=stop_at)
        assert len(cs) <= d * (d + 1) // 2


@pytest.mark.parametrize(("k", "d", "seed"), [*CASES, (1100, 4, 5)])
@pytest.mark.parametrize("factor", [2.0, 1.05, 1.01])
def test_unreduced_design_is_the_plain_numpy_frank_wolfe(k, d, seed, factor):
    a = anisotropic_rows(k, d, seed)
    pi, value, iterations = numpy_frank_wolfe(a, factor * d)
    cs = core_set(a, stop_at=factor * d, reduce_support=False)
    assert cs.iterations == iterations
    np.testing.assert_array_equal(cs.support, np.arange(k))
    np.testing.assert_allclose(cs.weights, pi, rtol=0, atol=1e-8)
    assert cs.value == pytest.approx(value, abs=1e-8)


@pytest.mark.parametrize(("k", "d", "seed"), CASES)
def test_reduction_keeps_the_design_valid_and_never_worse(k, d, seed):
    a = anisotropic_rows(k, d, seed)
    full = core_set(a, stop_at=1.1 * d, reduce_support=False)
    reduced = core_set(a, stop_at=1.1 * d)
    assert reduced.iterations == full.iterations
    assert len(reduced) <= d * (d + 1) // 2 < len(full)
    assert reduced.value <= full.value * (1 + 1e-9)
    assert variances(a, reduced.support, reduced.weights).max() <= 1.1 * d * (1 + 1e-12)


def test_reduction_with_exactly_dependent_and_repeated_actions():
    # All nonzero vectors of {-1, 0, 1}^3, twice.
    grid = np.array(np.meshgrid(*[[-1.0, 0.0, 1.0]] * 3, indexing="ij")).reshape(3, -1).T
    grid = grid[np.any(grid != 0, axis=1)]
    a = np.vstack([grid, grid])
    cs = core_set(a, stop_at=3.3)
    assert len(cs) <= 6
    assert variances(a, cs.support, cs.weights).max() <= 3.3 * (1 + 1e-12)


def test_standard_basis_gives_the_uniform_design_with_value_d():
    d = 4
    cs = core_set(np.eye(d), stop_at=float(d))
    np.testing.assert_array_equal(cs.support, np.arange(d))
    np.testing.assert_array_equal(cs.weights, np.full(d, 1 / d))
    assert cs.value == d
    assert cs.iterations == 0


def test_fortran_order_strided_and_list_input_give_the_same_answer():
    a = anisotropic_rows(400, 6, 7)
    ref = core_set(a, stop_at=6.5)
    assert core_set(np.asfortranarray(a), stop_at=6.5) == ref
    assert core_set(a.tolist(), stop_at=6.5) == ref
    wide = np.zeros((400, 12))
    wide[:, ::2] = a
    assert core_set(wide[:, ::2], stop_at=6.5) == ref
    assert core_set(np.asfortranarray(a[::3]), stop_at=6.5) == core_set(a[::3].copy(), stop_at=6.5)


def test_results_are_deterministic():
    a = unit_rows(800, 7, 8)
    assert core_set(a, stop_at=7.2) == core_set(a, stop_at=7.2)


def test_pulls_are_ceil_of_weight_times_q():
    cs = core_set(np.eye(4))
    np.testing.assert_array_equal(cs.pulls(10), [3, 3, 3, 3])
    np.testing.assert_array_equal(cs.pulls(8.0), [2, 2, 2, 2])
    a = anisotropic_rows(300, 5, 9)
    cs = core_set(a)
    q = 1234.5
    n = cs.pulls(q)
    assert n.dtype == np.int64
    np.testing.assert_array_equal(n, np.ceil(cs.weights * q))
    assert np.all(n >= 1)
    assert q <= n.sum() < q + len(cs)
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="`q`"):
            cs.pulls(bad)


def test_core_set_pickles_and_is_read_only():
    cs = core_set(anisotropic_rows(200, 4, 10))
    back = pickle.loads(pickle.dumps(cs))
    assert isinstance(back, CoreSet)
    assert back == cs
    np.testing.assert_array_equal(back.support, cs.support)
    assert back.value == cs.value and back.iterations == cs.iterations
    with pytest.raises(ValueError):
        cs.weights[0] = 1.0
    with pytest.raises(AttributeError):
        cs.value = 0.0  # type: ignore[misc]


_PLANE = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 2.0], [2.0, -1.0, 1.0]])


@pytest.mark.parametrize(
    ("actions", "kwargs", "error", "name"),
    [
        (np.ones(3), {}, ValueError, "actions"),
        (np.ones((2, 2, 2)), {}, ValueError, "actions"),
        ([[1.0, np.nan], [0.0, 1.0]], {}, ValueError, "actions"),
        ([[1.0, np.inf], [0.0, 1.0]], {}, ValueError, "actions"),
        (np.zeros((0, 3)), {}, ValueError, "actions"),
        (np.zeros((3, 0)), {}, ValueError, "actions"),
        ([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], {}, DegenerateInputError, "actions"),
        ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], {}, DegenerateInputError, "actions"),
        (_PLANE, {}, DegenerateInputError, "actions"),
        ([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]], {}, DegenerateInputError, "actions"),
        (np.eye(3), {"stop_at": 2.9}, ValueError, "stop_at"),
        (np.eye(3), {"stop_at": float("nan")}, ValueError, "stop_at"),
        (np.eye(3), {"stop_at": -1.0}, ValueError, "stop_at"),
        (np.eye(3), {"max_iter": -1}, ValueError, "max_iter"),
        (anisotropic_rows(200, 6, 11), {"stop_at": 6.06, "max_iter": 3}, ValueError, "max_iter"),
    ],
)
def test_bad_input_raises_naming_the_argument(actions, kwargs, error, name):
    with pytest.raises(error, match=f"`{name}`"):
        core_set(actions, **kwargs)


def test_degenerate_errors_are_value_errors():
    assert issubclass(DegenerateInputError, ValueError)
    with pytest.raises(DegenerateInputError, match="span"):
        core_set(_PLANE)
    with pytest.raises(DegenerateInputError, match="zero"):
        core_set([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
