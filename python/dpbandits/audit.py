"""Empirical privacy audits: a statistical lower bound on a mechanism's epsilon.

An (epsilon, delta)-DP mechanism M satisfies, for neighbouring inputs x, x'
and every event E, P[M(x) in E] <= e^epsilon P[M(x') in E] + delta. So any
event with P[M(x) in E] = p_hi and P[M(x') in E] = p_lo proves
epsilon >= ln((p_hi - delta) / p_lo). The audit estimates such a bound
from samples, in the style of DP-Sniper (Bichsel et al., S&P 2021) and
Delta-Siege (Lokna et al., S&P 2023):

1. *Selection.* ``n_select`` outputs per side (a scalar statistic per run);
   the events are thresholds {s >= c} and {s <= c} at the quantiles of the
   pooled sample, for both orderings of the two sides; the one with the
   largest projected lower bound is kept.
2. *Estimation.* ``n`` fresh outputs per side (independent of the
   selection, so the chosen event is a fixed event for them); one-sided
   Clopper–Pearson bounds p_hi_lower and p_lo_upper, each at level
   1 - (1 - confidence) / 2 (Bonferroni), give with probability at least
   ``confidence`` over the estimation samples

       epsilon >= eps_lb = ln((p_hi_lower - delta) / p_lo_upper).

A correct mechanism gives eps_lb <= claimed epsilon except with probability
at most 1 - confidence; eps_lb above the claim is evidence of a privacy bug
(or of a claim that does not hold). A lower bound never proves privacy: it
only fails to find a violation.

Auditing a mechanism takes one function ``mechanism(side, count, seed)``
returning ``count`` scalar outputs (float array) for the neighbouring
input ``side`` (0 or 1), independent across calls with different seeds::

    def mechanism(side, count, seed):
        rng = np.random.default_rng(seed)
        return side + rng.laplace(scale=1.0, size=count)  # Laplace, Delta = 1

    result = audit(mechanism, epsilon=1.0, n=10**6)
    print(result)   # eps_lb ~ 0.97 <= 1

The builders below produce such functions for the mechanisms of this
package (tree counters with Laplace / Gaussian noise, one Wishart node),
with the statistic that is (close to) the privacy-loss random variable.
Draws are vectorised in Rust (``TreeCounter._release_runs``), so 10^6 runs
per side take about a second.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes
from dpbandits._validation import in_open_unit, non_negative, positive, positive_int, seed_or_none
from dpbandits.mechanisms import GaussianNoise, LaplaceNoise, TreeCounter, WishartNoise

__all__ = [
    "AuditResult",
    "Mechanism",
    "audit",
    "clopper_pearson",
    "factorization_mechanism",
    "gaussian_tree_mechanism",
    "laplace_tree_mechanism",
    "smooth_binary_mechanism",
    "wishart_node_mechanism",
]

#: ``mechanism(side, count, seed) -> count scalar outputs`` for input ``side`` in {0, 1}.
Mechanism = Callable[[int, int, int], NDArray[np.float64]]

_N_THRESHOLDS = 400


def _beta() -> object:
    try:
        from scipy.stats import beta
    except ImportError as exc:  # pragma: no cover - scipy is in the test extra
        raise ImportError("dpbandits.audit needs scipy (pip install 'dpbandits[test]')") from exc
    return beta


def clopper_pearson(k: float, n: float, level: float) -> tuple[float, float]:
    """One-sided Clopper–Pearson bounds (lower, upper) of a binomial
    proportion from ``k`` successes in ``n`` trials, each holding with
    probability >= ``level``: lower = Beta(1 - level; k, n - k + 1),
    upper = Beta(level; k + 1, n - k) (0 and 1 at the ends).
    """
    beta = _beta()
    lower = 0.0 if k <= 0 else float(beta.ppf(1.0 - level, k, n - k + 1))  # type: ignore[attr-defined]
    upper = 1.0 if k >= n else float(beta.ppf(level, k + 1, n - k))  # type: ignore[attr-defined]
    return lower, upper


def _log_ratio(p_hi: float, p_lo: float, delta: float) -> float:
    if p_hi - delta <= 0.0:
        return -math.inf
    if p_lo <= 0.0:
        return math.inf
    return math.log((p_hi - delta) / p_lo)


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit`.

    ``epsilon_lower_bound`` holds with probability >= ``confidence`` (over
    the ``n`` estimation samples per side) for the chosen ``event``;
    ``passed`` is ``epsilon_lower_bound <= claimed_epsilon``.
    """

    epsilon_lower_bound: float
    epsilon_estimate: float
    claimed_epsilon: float
    claimed_delta: float
    n: int
    n_select: int
    confidence: float
    event: str
    count_high: int
    count_low: int
    p_high_lower: float
    p_low_upper: float

    @property
    def passed(self) -> bool:
        """No violation found: the lower bound does not exceed the claim."""
        return self.epsilon_lower_bound <= self.claimed_epsilon

    def __str__(self) -> str:
        return (
            f"eps_lb = {self.epsilon_lower_bound:.4f} (point estimate {self.epsilon_estimate:.4f}) vs claimed "
            f"({self.claimed_epsilon:g}, {self.claimed_delta:g}); N = {self.n} per side "
            f"(+{self.n_select} for selection), {self.confidence:.0%} Clopper-Pearson; event {self.event}: "
            f"{self.count_high} vs {self.count_low} hits -> {'pass' if self.passed else 'VIOLATION'}"
        )


def _seed(seed: int, phase: int, side: int) -> int:
    state = np.random.SeedSequence([seed, phase, side]).generate_state(2, np.uint32)
    return int(state[0]) << 32 | int(state[1])


def _outputs(mechanism: Mechanism, side: int, count: int, seed: int) -> NDArray[np.float64]:
    out = np.asarray(mechanism(side, count, seed), dtype=np.float64).reshape(-1)
    if out.shape[0] != count:
        raise ValueError(f"the mechanism returned {out.shape[0]} outputs for side {side}, expected {count}")
    if np.isnan(out).any():
        raise ValueError(f"the mechanism returned NaN outputs for side {side}")
    return out


def _counts(sorted_out: NDArray[np.float64], c: NDArray[np.float64], upper: bool) -> NDArray[np.int64]:
    """Number of outputs >= c (``upper``) or <= c, for each threshold."""
    if upper:
        return sorted_out.shape[0] - np.searchsorted(sorted_out, c, side="left")
    return np.searchsorted(sorted_out, c, side="right")


def audit(
    mechanism: Mechanism,
    *,
    epsilon: float,
    delta: float = 0.0,
    n: int = 1_000_000,
    n_select: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AuditResult:
    """Clopper–Pearson lower bound on the epsilon of ``mechanism`` at ``delta``.

    Parameters
    ----------
    mechanism:
        ``mechanism(side, count, seed)``: ``count`` scalar outputs of the
        mechanism on neighbouring input ``side`` (0 or 1).
    epsilon, delta:
        The claim audited: (epsilon, delta)-DP (delta = 0: pure DP).
        epsilon finite > 0; 0 <= delta < 1.
    n:
        Estimation outputs per side (>= 1000; 10^6 for the package's tests).
    n_select:
        Selection outputs per side (default n // 2), drawn separately.
    confidence:
        Joint confidence of the bound, in (0, 1) (default 0.95; each
        one-sided Clopper–Pearson bound at 1 - (1 - confidence)/2).
    seed:
        Root of the per-phase, per-side seeds handed to ``mechanism``.

    Examples
    --------
    Audit a Laplace tree counter calibrated for 1-DP (each leaf lies in 3
    nodes of a tree of horizon 4, so scale 3 / epsilon):

    >>> from dpbandits.audit import audit, laplace_tree_mechanism
    >>> result = audit(laplace_tree_mechanism(horizon=4, scale=3.0), epsilon=1.0, n=20_000, seed=1)
    >>> result.passed, result.epsilon_lower_bound < 1.0
    (True, True)
    """
    epsilon = positive("epsilon", epsilon)
    delta = non_negative("delta", delta)
    if not delta < 1.0:
        raise ValueError(f"invalid argument `delta`: must lie in [0, 1), got {delta!r}")
    n = positive_int("n", n, minimum=1000)
    n_select = n // 2 if n_select is None else positive_int("n_select", n_select, minimum=1000)
    # Two sides of float64 outputs each, held at once with their sorted copies.
    check_bytes("n", n, 2 * 2 * 8 * n, f"the {n} outputs per side of the estimation phase")
    check_bytes("n_select", n_select, 2 * 2 * 8 * n_select, f"the {n_select} outputs per side of the selection phase")
    confidence = in_open_unit("confidence", confidence)
    seed = seed_or_none("seed", seed)  # type: ignore[assignment]
    if seed is None:
        raise ValueError("invalid argument `seed`: an integer is required")
    level = 1.0 - (1.0 - confidence) / 2.0
    beta = _beta()

    # 1. Selection on its own samples.
    sel = [np.sort(_outputs(mechanism, side, n_select, _seed(seed, 0, side))) for side in (0, 1)]
    pooled = np.concatenate(sel)
    finite = pooled[np.isfinite(pooled)]
    cands = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, _N_THRESHOLDS))) if finite.size else np.zeros(1)
    scale = n / n_select
    best = (-math.inf, 1, True, float(cands[0]))
    for upper in (True, False):
        counts = [_counts(s, cands, upper) for s in sel]
        for hi in (0, 1):
            k_hi_proj, k_lo_proj = counts[hi] * scale, counts[1 - hi] * scale
            # Projected bounds at the estimation size n.
            with np.errstate(divide="ignore", invalid="ignore"):
                lo_b = np.where(k_hi_proj > 0, beta.ppf(1.0 - level, k_hi_proj, n - k_hi_proj + 1), 0.0)  # type: ignore[attr-defined]
                up_b = np.where(k_lo_proj < n, beta.ppf(level, k_lo_proj + 1, n - k_lo_proj), 1.0)  # type: ignore[attr-defined]
                score = np.where(lo_b > delta, np.log(np.maximum(lo_b - delta, 1e-300) / up_b), -np.inf)
            i = int(np.nanargmax(score)) if np.isfinite(score).any() else 0
            if score[i] > best[0]:
                best = (float(score[i]), hi, upper, float(cands[i]))
    _, hi, upper, c = best

    # 2. Estimation on fresh samples: the event is now fixed.
    est = [_outputs(mechanism, side, n, _seed(seed, 1, side)) for side in (0, 1)]
    hits = [int(np.count_nonzero(e >= c)) if upper else int(np.count_nonzero(e <= c)) for e in est]
    k_hi, k_lo = hits[hi], hits[1 - hi]
    p_hi_lower, _ = clopper_pearson(k_hi, n, level)
    _, p_lo_upper = clopper_pearson(k_lo, n, level)
    eps_lb = _log_ratio(p_hi_lower, p_lo_upper, delta)
    eps_hat = _log_ratio(k_hi / n, k_lo / n, delta)
    event = f"{{s {'>=' if upper else '<='} {c:.6g}}}, side {hi} high"
    return AuditResult(
        epsilon_lower_bound=eps_lb,
        epsilon_estimate=eps_hat,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        n=n,
        n_select=n_select,
        confidence=confidence,
        event=event,
        count_high=k_hi,
        count_low=k_lo,
        p_high_lower=p_hi_lower,
        p_low_upper=p_lo_upper,
    )


# Mechanism builders ----------------------------------------------------------


def _leaf_one_releases(horizon: int) -> list[int]:
    """Rounds t = 2^i <= n: the release S_t of round 2^i is the noisy node
    (i, leaves 1..2^i), and these are exactly the nodes containing leaf 1."""
    return [2**i - 1 for i in range(horizon.bit_length())]


def _tree_mechanism(
    counter: Callable[[int], TreeCounter],
    horizon: int,
    sensitivity: float,
    statistic: Callable[..., NDArray[np.float64]],
) -> Mechanism:
    check_bytes("horizon", horizon, 2 * 8 * horizon, f"the two input streams of {horizon} values")
    x = [np.zeros(horizon), np.zeros(horizon)]
    x[1][0] = sensitivity  # neighbours differ in the first leaf by the sensitivity
    cols = _leaf_one_releases(horizon)

    def mechanism(side: int, count: int, seed: int) -> NDArray[np.float64]:
        releases = counter(seed)._release_runs(x[side], count)
        return statistic(releases[:, cols])

    return mechanism


def laplace_tree_mechanism(
    horizon: int, scale: float, sensitivity: float = 1.0, secure: bool = False
) -> Mechanism:
    """A scalar Laplace tree counter (:class:`TreeCounter`, node noise
    Laplace(``scale``)) on two streams of ``horizon`` values differing in
    the first by ``sensitivity``: the statistic is
    sum over the nodes containing leaf 1 of clip(node, 0, sensitivity),
    an affine function of the privacy loss (Laplace log-likelihood ratio
    (|y| - |y - Delta|)/b). The node values are releases S_1, S_2, S_4, ...
    ``secure=True`` audits the exact discrete noise of secure mode.
    """
    horizon = positive_int("horizon", horizon)
    noise = LaplaceNoise(scale=scale)

    def stat(nodes: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.clip(nodes, 0.0, sensitivity).sum(axis=1)

    return _tree_mechanism(lambda s: TreeCounter((), horizon, noise, seed=s, secure=secure), horizon, sensitivity, stat)


def gaussian_tree_mechanism(horizon: int, sigma: float, sensitivity: float = 1.0) -> Mechanism:
    """A scalar Gaussian tree counter (node noise N(0, ``sigma``^2)) on two
    streams differing in the first value by ``sensitivity``: the statistic
    is the sum of the nodes containing leaf 1, the sufficient statistic of
    the privacy loss (so the optimal events are thresholds on it)."""
    horizon = positive_int("horizon", horizon)
    noise = GaussianNoise(sigma=sigma)

    def stat(nodes: NDArray[np.float64]) -> NDArray[np.float64]:
        return nodes.sum(axis=1)

    return _tree_mechanism(lambda s: TreeCounter((), horizon, noise, seed=s), horizon, sensitivity, stat)


def wishart_node_mechanism(p: int, scale: float, df: float, L_tilde: float = 1.0) -> Mechanism:
    """One node of the Wishart tree (Shariff & Sheffet Thm 8, Sheffet 2015
    Thm 4.1): the released Gram matrix A^T A + W, W ~ W_p(``scale`` I, ``df``),
    of a single row (neighbours change one row; the other rows add a known
    matrix and are left out): side 0 has the row u = L~ e_1, side 1 the
    row v = L~ e_2, both of norm ``L_tilde``. Drawn through a
    :class:`TreeCounter` of horizon 1 and shape (p, p).

    The statistic is log det(X - v v^T) - log det(X - u u^T), the
    privacy-loss random variable up to the factor (df - p - 1)/2 (the
    trace terms of the two Wishart densities cancel since |u| = |v|);
    -inf / +inf where X - v v^T / X - u u^T is not positive definite (an
    output impossible under that side).
    """
    p = positive_int("p", p, minimum=2)
    L_tilde = positive("L_tilde", L_tilde)
    noise = WishartNoise(scale=scale, df=df)
    rows = [np.zeros(p), np.zeros(p)]
    rows[0][0] = L_tilde
    rows[1][1] = L_tilde
    grams = [np.outer(r, r)[None] for r in rows]

    def logdet_minus(x: NDArray[np.float64], r: NDArray[np.float64]) -> NDArray[np.float64]:
        if p == 2:  # closed form: 10x faster than the batched LAPACK calls
            a = x[:, 0, 0] - r[0] ** 2
            det = a * (x[:, 1, 1] - r[1] ** 2) - (x[:, 0, 1] - r[0] * r[1]) ** 2
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where((a > 0) & (det > 0), np.log(np.maximum(det, 1e-300)), -np.inf)
        sign, logdet = np.linalg.slogdet(x - np.outer(r, r))
        # Positive definite iff every leading minor is positive; for a
        # symmetric matrix slogdet's sign alone is not enough.
        pd = sign > 0
        for k in range(1, p):
            pd &= np.linalg.det((x - np.outer(r, r))[:, :k, :k]) > 0
        return np.where(pd, logdet, -np.inf)

    def mechanism(side: int, count: int, seed: int) -> NDArray[np.float64]:
        counter = TreeCounter((p, p), 1, noise, seed=seed)
        x = counter._release_runs(grams[side], count)[:, 0]
        a, b = logdet_minus(x, rows[1]), logdet_minus(x, rows[0])
        with np.errstate(invalid="ignore"):
            s = a - b
        # Both impossible cannot happen (the true side is always possible).
        return np.where(np.isnan(s), 0.0, s)

    return mechanism


def factorization_mechanism(
    counter: str, horizon: int, sigma: float, sensitivity: float = 1.0, secure: bool = False
) -> Mechanism:
    """A scalar factorization counter (``counter`` "sqrt" or "blt",
    :class:`TreeCounter` with per-step noise N(0, ``sigma``^2); ``secure``:
    the lattice form) on two streams of ``horizon`` values differing in the
    first by ``sensitivity``. The statistic is the privacy loss's
    sufficient statistic <C e_1, w>, w = C A^{-1} y the encoded release
    recovered from the prefix sums y (w = C x + z: a Gaussian mechanism
    with mu = sensitivity ||C e_1|| / sigma)."""
    from dpbandits.privacy.factorization import encoder_coefficients

    horizon = positive_int("horizon", horizon)
    # The encoder (a horizon x horizon matrix) and the temporaries of its
    # construction.
    check_bytes("horizon", horizon, 3 * 8 * horizon * horizon, f"the {horizon} x {horizon} encoder matrix")
    c = encoder_coefficients(counter, horizon)
    # The lower-triangular Toeplitz encoder: enc[i, j] = c[i - j] for i >= j.
    lag = np.subtract.outer(np.arange(horizon), np.arange(horizon))
    enc = np.where(lag >= 0, c[np.maximum(lag, 0)], 0.0)
    del lag
    weights = enc.T @ c  # s = c^T C (A^{-1} y)
    x = [np.zeros(horizon), np.zeros(horizon)]
    x[1][0] = sensitivity
    noise = GaussianNoise(sigma=sigma)
    sampler = "lattice" if secure else "float"

    def mechanism(side: int, count: int, seed: int) -> NDArray[np.float64]:
        out = np.empty(count)
        chunk = 1 << 17
        k = TreeCounter((), horizon, noise, seed=seed, sampler=sampler, counter=counter)  # type: ignore[arg-type]
        for start in range(0, count, chunk):
            y = k._release_runs(x[side], min(chunk, count - start))
            d = np.diff(y, axis=1, prepend=0.0)
            out[start : start + y.shape[0]] = d @ weights
        return out

    return mechanism


def smooth_binary_mechanism(
    horizon: int,
    noise: Literal["gaussian", "laplace"],
    scale: float,
    sensitivity: float = 1.0,
    secure: bool = False,
    height: int | None = None,
    ones: int | None = None,
) -> Mechanism:
    """A scalar smooth binary counter (Andersson & Pagh 2023; tree of
    ``height`` levels read at leaves of weight ``ones``, default the shape
    :func:`dpbandits.privacy.smooth_binary.smooth_binary_shape` picks for
    ``horizon`` and ``noise``) with node noise N(0, ``scale``^2) or
    Laplace(``scale``), on two streams of ``horizon`` values differing at
    one step by ``sensitivity``. The releases y = A x + B z are reduced to
    s = a^T y, a = (B B^T)^{-1} A e_s: the sufficient statistic of the
    releases' Gaussian privacy loss (for Laplace nodes a valid, not optimal,
    statistic). The differing step s is the one whose releases reveal the
    most (largest e_s^T A^T (B B^T)^{-1} A e_s). ``secure``: lattice noise."""
    from dpbandits.privacy.smooth_binary import smooth_binary_matrices, smooth_binary_shape

    horizon = positive_int("horizon", horizon)
    # A, B B^T, their solve and its workspace: horizon x horizon matrices.
    check_bytes("horizon", horizon, 4 * 8 * horizon * horizon, f"the {horizon} x {horizon} release matrices")
    if height is None or ones is None:
        shape = smooth_binary_shape(horizon, noise)
        height, ones = shape.height, shape.ones
    B, _ = smooth_binary_matrices(height, ones, horizon)
    A = np.tril(np.ones((horizon, horizon)))
    weights = np.linalg.solve(B @ B.T, A)  # column s: (B B^T)^{-1} A e_s
    step = int(np.argmax(np.einsum("ts,ts->s", A, weights)))
    a = weights[:, step]
    x = [np.zeros(horizon), np.zeros(horizon)]
    x[1][step] = sensitivity
    spec = GaussianNoise(sigma=scale) if noise == "gaussian" else LaplaceNoise(scale=scale)
    wire = spec.wire()
    if secure:
        from dpbandits.privacy.secure import exact_lattice_noise

        wire = exact_lattice_noise(noise, scale, horizon * max(1.0, scale)).wire()

    def mechanism(side: int, count: int, seed: int) -> NDArray[np.float64]:
        out = np.empty(count)
        chunk = 1 << 17
        k = _core.FactorizationCounter([], horizon, wire, "smooth-binary", [float(height), float(ones)], [], seed)
        for start in range(0, count, chunk):
            y = k._release_runs(x[side], min(chunk, count - start))
            out[start : start + y.shape[0]] = y @ a
        return out

    return mechanism
