"""Accounting of continual counters that factor the prefix-sum matrix.

The prefix-sum matrix A (T x T, ones on and below the diagonal) is written
A = B C with B, C lower-triangular Toeplitz. The mechanism releases
A x + B z = B (C x + z), z ~ N(0, sigma^2 I): the Gaussian mechanism on the
encoded stream C x, followed by the decoder B (post-processing). Changing
one input x_s by a vector of L2 norm Delta changes C x by Delta times
column s of C, so (Henzinger, Upadhyay & Upadhyay, SODA 2023;
Fichtenberger, Henzinger & Upadhyay, ICML 2023; Dvijotham, McMahan,
Pillutla, Steinke & Thakurta 2024)

    sensitivity of C x = Delta * max_s ||C e_s||_2 = Delta * sqrt(sum_{k<T} c_k^2)   (F1)

(the first column of a lower-triangular Toeplitz matrix is its longest), and
release t carries the noise (B z)_t with variance

    Var_t = sigma^2 * sum_{k<t} b_k^2   (per entry; b the first column of B)   (F2)

The binary tree is the special case with 0/1 factors: sensitivity
sqrt(levels) Delta, levels = floor(log2 T) + 1, and Var_t = popcount(t) sigma^2.

Encoders here (the Rust side is ``rust/src/counter/factorization.rs``):

- ``"sqrt"``: C = B = A^{1/2}, the lower-triangular Toeplitz square root,
  c_k = binom(2k, k) / 4^k (the Taylor coefficients of (1 - x)^{-1/2}, so
  that (sum c_k x^k)^2 = 1 / (1 - x), the generating function of A)   (F3)
  O(T) memory. The exact identity sum_{j<=k} c_j c_{k-j} = 1 is tested.
- ``"blt"``: a buffered linear Toeplitz encoder (Dvijotham et al. 2024):
  c_0 = 1, c_k = sum_i omega_i theta_i^(k-1) for k >= 1, with four pairs
  chosen by :func:`blt_parameters` for the horizon; C v and C^{-1} v are
  computed with one buffer per pair, so memory does not grow with T.
  B = A C^{-1}. The pairs were fitted here (Nelder-Mead on
  log(1 - theta), log omega) to minimise max_t Var_t * sensitivity^2 at
  T = 2^20 (:data:`BLT_4`; :data:`BLT_BY_LOG2_HORIZON` holds fits by
  horizon); they are not from the paper. The accounting below is exact
  for every T, whatever their optimality.

The Gaussian calibration (``calibration="tight"``, as
:func:`dpbandits.privacy.tree.gaussian_tree_sigma`): the whole
release sequence is one Gaussian mechanism with mu = sensitivity / sigma,
(epsilon, delta)-DP iff mu <= gaussian_mu(epsilon, delta) (Balle & Wang
2018, Thm. 8), so sigma = column_norm * Delta / mu*(epsilon, delta).

Lattice noise (``sampler="lattice"``). The released object is
w = round_g(C x) + z, z the discrete Gaussian on g Z (an exact lattice
value); the prefix sums B w are post-processing of w (no floating-point
artefact of the data can appear in them, Mironov 2012, because they are a
function of w alone). Rounding and the floating-point evaluation of C x
(bounded by g/4 per coordinate, enforced by the engine) move each of the
T * dim coordinates of w by at most 1.5 g beyond C times the change, so

    sensitivity of w <= column_norm * Delta + 1.5 g sqrt(T dim)   (F4)

(:func:`lattice_factorization_sensitivity`). The discrete Gaussian with
integer shifts of L2 norm S (in steps) and variance s^2 steps^2 is
(S^2 / 2 s^2)-zCDP (Canonne, Kamath & Steinke 2020, Thm. 4): the lattice
sigma is scaled by (F4) / (column_norm * Delta) so that the continuous
accounting of sigma holds in zCDP; the exact (epsilon, delta) calibration
of the discrete noise is made at the delta of
:func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
(T * dim coordinates reached: the Renyi argument, which does not grow with
T, takes over from the coupling allowance for long streams).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = [
    "BLT_4",
    "BLT_BY_LOG2_HORIZON",
    "BLT_EARLY_FITS",
    "COUNTERS",
    "COUNTERS_BY_FAMILY",
    "Counter",
    "FactorizationNoise",
    "binary_release_variances",
    "blt_dyadic_release_variances",
    "blt_early_variance",
    "blt_max_release_variance",
    "blt_parameters",
    "counter_choice",
    "counter_parameters",
    "decoder_coefficients",
    "default_counter",
    "encoder_coefficients",
    "factorization_gaussian_sigma",
    "fit_blt_parameters",
    "lattice_factorization_sensitivity",
    "max_column_norm",
    "max_release_variance",
    "release_variances",
    "sqrt_coefficients",
]

Counter = Literal["binary", "smooth-binary", "sqrt", "blt"]
"""A continual counter: the binary tree, the smooth binary mechanism, the square-root factorization or BLT."""

#: The counters a learner or TreeCounter accepts.
COUNTERS: tuple[str, ...] = ("binary", "smooth-binary", "sqrt", "blt")

#: The counters that serve each noise family (factorizations: Gaussian only,
#: their L1 column norms grow like sqrt(T); the smooth binary mechanism,
#: :mod:`dpbandits.privacy.smooth_binary`, serves Laplace and Gaussian).
COUNTERS_BY_FAMILY: dict[str, tuple[str, ...]] = {
    "gaussian": ("binary", "smooth-binary", "sqrt", "blt"),
    "laplace": ("binary", "smooth-binary"),
    "wishart": ("binary",),
}

#: (theta, omega) of the four-buffer BLT encoder fitted at T = 2^20 (see
#: the module docstring).
BLT_4: tuple[tuple[float, ...], tuple[float, ...]] = (
    (0.65126656, 0.99982155, 0.99128357, 0.99999764),
    (0.46541862, 0.01751684, 0.11483117, 0.00268727),
)

#: Four-buffer BLT encoders fitted at T = 2^k (k -> (theta, omega)); see
#: :func:`blt_parameters`. Fit (:func:`fit_blt_parameters`, run once, the
#: results tabulated here): Nelder-Mead (scipy, adaptive) on
#: (log(1 - theta_i), log omega_i) from geometrically spaced decay rates
#: 1 - theta in [2 / T, 0.4], four rounds of restarts from the best point;
#: every quantity exact: the column norm in closed form, release variances
#: by the finite-horizon Gramian of the decoder's state-space form
#: (:func:`blt_max_release_variance`, O(d^3 log T) by doubling).
#:
#: - 2^10 to 2^20 minimise the largest release: log(max_column_norm^2 *
#:   max_t Var_t) at T = 2^k. 2^20 uses the fit :data:`BLT_4` (0.0753x
#:   the tree, within the target of <= 0.12x).
#: - 2^26 (the D.2 horizon, n = 5e7) minimises what the learners' regret
#:   follows: the early releases' variance, max_column_norm^2 times the
#:   mean of Var_t over t = 1, 2, 3, 5, ..., 2^j + 1 <= 2^17
#:   (:func:`blt_early_variance`; ``window=2**17``), with the largest
#:   release variance held to 0.5x the tree's (``cap=0.5``). On D.2 the
#:   tight Gaussian learner's regret is all spent by t ~ 1e4 at gap 0.1
#:   (mostly by 2.5e5 at gap 0), while the max-variance fit at 2^26
#:   (0.0728x the tree, theta up to 1 - 4e-8) pays for its long memory
#:   with a larger column norm: 207 regret against 159 for this fit
#:   (docs/reproduction-notes.md). Without the cap the last release would
#:   reach 11x the tree's for 3% less early variance.
#:
#: Fits for 2^16, 2^18, 2^22, 2^24 and beyond 2^26 were not run (a horizon
#: between tabulated ones takes the next larger fit). The long-memory fits
#: (1 - theta ~ 5e-8 at 2^26) need the engine's double-double encoder
#: buffers on the lattice (rust/src/counter/factorization.rs).
#: The trailing comment of each entry is its ratio to the binary tree's
#: max variance at T = 2^k.
BLT_BY_LOG2_HORIZON: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = {
    10: ((0.5627954839, 0.9218360516, 0.9889009697, 0.9992293192),
         (0.230562429, 0.1600495536, 0.0689715692, 0.03715651436)),  # 0.0974x
    12: ((0.6684023823, 0.9605157192, 0.9960497191, 0.9997748409),
         (0.2814193895, 0.1396293012, 0.04735542688, 0.0204660112)),  # 0.0885x
    14: ((0.7523678398, 0.9800342625, 0.9985841572, 0.9999345696),
         (0.3144709537, 0.1163158225, 0.0320592219, 0.01125718034)),  # 0.0825x
    20: BLT_4,  # 0.0753x
    26: ((0.8725918238, 0.9962332968, 0.999917422, 0.9999999505),
         (0.3377158435, 0.06256185074, 0.009632843040, 5.944536948e-05)),  # 0.500x; early variance 11.74
}

#: The window and cap of the regret fits of :data:`BLT_BY_LOG2_HORIZON`
#: (k -> (window, cap)); the other entries minimise the largest release.
BLT_EARLY_FITS: dict[int, tuple[int, float]] = {26: (2**17, 0.5)}


def blt_parameters(horizon: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The (theta, omega) a ``"blt"`` counter of ``horizon`` steps uses: the
    fit at the smallest tabulated 2^k >= horizon (the largest for longer
    horizons). A BLT fitted for T keeps a constant decoder tail beyond
    about 1 / (1 - max theta) steps, so its variance grows linearly past
    the horizon it was fitted for; the accounting is exact for any choice."""
    horizon = positive_int("horizon", horizon)
    k = max(10, (horizon - 1).bit_length())
    keys = sorted(BLT_BY_LOG2_HORIZON)
    for key in keys:
        if key >= k:
            return BLT_BY_LOG2_HORIZON[key]
    return BLT_BY_LOG2_HORIZON[keys[-1]]


def blt_max_release_variance(theta: tuple[float, ...], omega: tuple[float, ...], horizon: int) -> float:
    """max_t sum_{k<t} b_k^2 = sum_{k<T} b_k^2 of the BLT (theta, omega) by
    its state space: with buffers S (S_1 = 1) and the running sum b,
    S_{t+1} = (diag(theta) - 1 omega^T) S_t, b_t = b_{t-1} - omega^T S_t
    (t >= 1, b_0 = 1), so b_t = h^T F^{t-1} z_1 and the sum is
    1 + h^T (sum_{j < T-1} F^j z_1 z_1^T F^{jT}) h, accumulated by binary
    doubling (O(d^3 log T); the fitting objective of :data:`BLT_BY_LOG2_HORIZON`,
    checked against the chunked recursion in the tests)."""
    horizon = positive_int("horizon", horizon)
    F, z1, h = _blt_state_space(np.asarray(theta, dtype=np.float64), np.asarray(omega, dtype=np.float64))
    total, power = np.zeros_like(F), np.eye(F.shape[0])
    block, block_power = np.outer(z1, z1), F.copy()
    m = horizon - 1
    while m:
        if m & 1:
            total = total + power @ block @ power.T
            power = power @ block_power
        block = block + block_power @ block @ block_power.T
        block_power = block_power @ block_power
        m >>= 1
    return float(1.0 + h @ total @ h)


def _blt_column_norm_sq(theta: NDArray[np.float64], omega: NDArray[np.float64], horizon: int) -> float:
    tt = np.outer(theta, theta)
    return float(1.0 + np.sum(np.outer(omega, omega) * -np.expm1((horizon - 1) * np.log(tt)) / (1.0 - tt)))


def blt_dyadic_release_variances(
    theta: tuple[float, ...], omega: tuple[float, ...], horizon: int
) -> NDArray[np.float64]:
    """sum_{k<t} b_k^2 (F2) at t = 1 and t = 2^j + 1 <= ``horizon``
    (j = 0, 1, ...): the release variances on a log-spaced grid, read off
    the doubling of :func:`blt_max_release_variance` in one pass (its block
    after j doublings is the Gramian of the first 2^j decoder steps)."""
    horizon = positive_int("horizon", horizon)
    F, z1, h = _blt_state_space(np.asarray(theta, dtype=np.float64), np.asarray(omega, dtype=np.float64))
    out = [1.0]
    block, block_power = np.outer(z1, z1), F.copy()
    for _ in range((horizon - 1).bit_length()):
        out.append(float(1.0 + h @ block @ h))
        block = block + block_power @ block @ block_power.T
        block_power = block_power @ block_power
    return np.asarray(out)


def blt_early_variance(theta: tuple[float, ...], omega: tuple[float, ...], horizon: int, window: int) -> float:
    """column_norm^2 * the mean of :func:`blt_dyadic_release_variances` at
    t <= ``window``: the variance of the early releases (equal weight per
    doubling of t, a log-time mean) at the sigma a counter of ``horizon``
    steps needs, the fitting objective of the regret fits of
    :data:`BLT_BY_LOG2_HORIZON`."""
    v = blt_dyadic_release_variances(theta, omega, horizon)
    points = 1 + (positive_int("window", window) - 1).bit_length()  # t = 1, 2, 3, 5, ..., 2^j + 1 <= window
    norm_sq = _blt_column_norm_sq(np.asarray(theta, dtype=np.float64), np.asarray(omega, dtype=np.float64), horizon)
    return float(norm_sq * v[:points].mean())


def fit_blt_parameters(
    horizon: int, buffers: int = 4, rounds: int = 4, window: int | None = None, cap: float | None = None
) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """(theta, omega, objective) of a ``buffers``-buffer BLT fitted at
    ``horizon`` (the method of :data:`BLT_BY_LOG2_HORIZON`; seconds to
    minutes: run offline, tabulate). Objective: column_norm^2 * max
    variance (``window`` None), else :func:`blt_early_variance` over
    t <= ``window``, with the largest release variance at ``horizon``
    held to ``cap`` times the binary tree's (a penalty) when given."""
    from scipy.optimize import minimize

    horizon = positive_int("horizon", horizon, minimum=2)
    d = positive_int("buffers", buffers)
    tree = max_column_norm("binary", horizon) ** 2 * max_release_variance("binary", horizon)

    def objective(p: NDArray[np.float64]) -> float:
        theta, omega = 1.0 - np.exp(p[:d]), np.exp(p[d:])
        if np.any(theta >= 1.0) or np.any(theta < 0.0):
            return 1e30
        norm_sq = _blt_column_norm_sq(theta, omega, horizon)
        worst = norm_sq * blt_max_release_variance(tuple(theta), tuple(omega), horizon)
        value = worst if window is None else blt_early_variance(tuple(theta), tuple(omega), horizon, window)
        if not (value > 0.0 and math.isfinite(value) and worst > 0.0 and math.isfinite(worst)):
            return 1e30
        penalty = 0.0 if cap is None else 100.0 * max(0.0, math.log(worst / tree / cap))
        return math.log(value) + penalty

    rates = np.geomspace(0.4, 2.0 / horizon, d)
    point = np.concatenate([np.log(rates), np.log(np.sqrt(rates) * 0.6)])
    best = None
    for _ in range(positive_int("rounds", rounds)):
        res = minimize(objective, point, method="Nelder-Mead",
                       options={"maxfev": 4000 * d, "xatol": 1e-9, "fatol": 1e-12, "adaptive": True})
        point = res.x
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    theta, omega = 1.0 - np.exp(best.x[:d]), np.exp(best.x[d:])
    return tuple(float(v) for v in theta), tuple(float(v) for v in omega), math.exp(best.fun)


def default_counter(counter: str | None, calibration: str) -> str:
    """``counter``, or when None the default of the learners whose tight
    calibration is the default (PrivateFTRL, PrivateFTPL, the Mishra–Thakurta
    contextual learners): ``"smooth-binary"`` under ``calibration="tight"``
    (less noise than the tree for Laplace and Gaussian noise at every
    horizon, O(log T) memory, every release the same law), ``"binary"``
    under ``"paper"`` (the published mechanism, for reproduction)."""
    if counter is not None:
        return counter
    return "smooth-binary" if calibration == "tight" else "binary"


def counter_choice(counter: str, noise_family: str = "gaussian") -> str:
    """Validates ``counter`` for noise of ``noise_family`` ("gaussian",
    "laplace", "wishart") by :data:`COUNTERS_BY_FAMILY`: factorizations
    serve Gaussian noise only (their L1 column norms grow like sqrt(T), far
    worse than the tree's log T); Wishart noise only the binary tree."""
    if not isinstance(counter, str) or counter not in COUNTERS:
        raise ValueError(f"invalid argument `counter`: must be one of {COUNTERS}, got {counter!r}")
    allowed = COUNTERS_BY_FAMILY.get(noise_family, ("binary",))
    if counter not in allowed:
        why = "Gaussian noise only (its sensitivity is an L2 column norm)" if counter in ("sqrt", "blt") else (
            "Laplace or Gaussian noise only"
        )
        raise ValueError(
            f"invalid argument `counter`: {counter!r} serves {why}; {noise_family} noise needs counter in "
            f"{allowed}"
        )
    return counter


def counter_parameters(counter: str, horizon: int, noise_family: str = "gaussian") -> tuple[list[float], list[float]]:
    """The (theta, omega) the engine takes for ``counter`` at ``horizon``:
    the BLT pairs (:func:`blt_parameters`), [height, ones] of the smooth
    binary tree for ``noise_family``
    (:func:`dpbandits.privacy.smooth_binary.smooth_binary_shape`), else empty."""
    horizon = positive_int("horizon", horizon)
    if counter == "blt":
        theta, omega = blt_parameters(horizon)
        return list(theta), list(omega)
    if counter == "smooth-binary":
        from dpbandits.privacy.smooth_binary import smooth_binary_shape

        tree = smooth_binary_shape(horizon, noise_family)
        return [float(tree.height), float(tree.ones)], []
    return [], []


def sqrt_coefficients(n: int) -> NDArray[np.float64]:
    """c_0..c_{n-1} of (F3): c_k = binom(2k, k) / 4^k = c_{k-1} (2k - 1) / (2k)."""
    n = positive_int("n", n)
    k = np.arange(1, n, dtype=np.float64)
    return np.concatenate(([1.0], np.cumprod((2.0 * k - 1.0) / (2.0 * k))))


def encoder_coefficients(counter: str, n: int, horizon: int | None = None) -> NDArray[np.float64]:
    """The first column c_0..c_{n-1} of the encoder C of ``counter`` for a
    counter of ``horizon`` steps (default n; BLT parameters depend on it)."""
    n = positive_int("n", n)
    if counter == "sqrt":
        return sqrt_coefficients(n)
    if counter == "blt":
        theta, omega = (np.asarray(v) for v in blt_parameters(horizon or n))
        k = np.arange(1, n, dtype=np.float64)
        tail = (omega[None, :] * theta[None, :] ** (k[:, None] - 1.0)).sum(axis=1)
        return np.concatenate(([1.0], tail))
    raise ValueError(f"invalid argument `counter`: no encoder for {counter!r}")


def decoder_coefficients(counter: str, n: int, horizon: int | None = None) -> NDArray[np.float64]:
    """The first column b_0..b_{n-1} of B = A C^{-1}: the running sum of
    u = C^{-1} e_1 (for "sqrt", b = c exactly). BLT: by the decoder's
    state-space recursion (:func:`blt_max_release_variance`), in blocks of
    matrix powers; not through the rational transfer function, whose
    polynomial coefficients lose all precision when theta is within 1e-7
    of 1 (the long-horizon fits)."""
    n = positive_int("n", n)
    if counter == "sqrt":
        return sqrt_coefficients(n)
    if counter == "blt":
        theta, omega = blt_parameters(horizon or n)
        return _blt_decoder(np.asarray(theta), np.asarray(omega), n)
    raise ValueError(f"invalid argument `counter`: no decoder for {counter!r}")


def _blt_state_space(theta: NDArray[np.float64], omega: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """(F, z_1, h): b_t = h^T F^{t-1} z_1 for t >= 1 (b_0 = 1); see
    :func:`blt_max_release_variance`."""
    d = theta.size
    F = np.zeros((d + 1, d + 1))
    F[:d, :d] = np.diag(theta) - np.outer(np.ones(d), omega)
    F[d, :d] = -omega
    F[d, d] = 1.0
    return F, np.ones(d + 1), np.concatenate([-omega, [1.0]])


def _blt_decoder(theta: NDArray[np.float64], omega: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    F, z, h = _blt_state_space(theta, omega)
    block = min(4096, max(1, n))
    rows = np.empty((block, F.shape[0]))
    r = h.copy()
    for j in range(block):
        rows[j] = r
        r = r @ F
    step = np.linalg.matrix_power(F, block)
    out = np.empty(n)
    out[0] = 1.0
    t = 1
    while t < n:
        m = min(block, n - t)
        out[t : t + m] = rows[:m] @ z
        z = step @ z
        t += m
    return out


_CHUNK = 1 << 20


def _sqrt_sum_of_squares(horizon: int) -> float:
    """sum_{k<T} c_k^2 of (F3), in chunks (memory independent of T)."""
    total, last, start = 0.0, 1.0, 0
    while start < horizon:
        k = np.arange(max(start, 1), min(start + _CHUNK, horizon), dtype=np.float64)
        c = last * np.cumprod((2.0 * k - 1.0) / (2.0 * k))
        if start == 0:
            c = np.concatenate(([1.0], c))
        total += math.fsum(c * c)
        last = float(c[-1]) if c.size else last
        start += _CHUNK
    return total


def max_column_norm(counter: str, horizon: int) -> float:
    """(F1): the largest L2 column norm of the encoder over ``horizon`` steps
    (binary: sqrt(floor(log2 T) + 1); smooth binary: sqrt(H - w) of the
    Gaussian tree :func:`dpbandits.privacy.smooth_binary.smooth_binary_shape` picks). BLT in closed form:
    1 + sum_{i,j} omega_i omega_j (1 - (theta_i theta_j)^(T-1)) / (1 - theta_i theta_j)."""
    horizon = positive_int("horizon", horizon)
    if counter == "binary":
        return math.sqrt(horizon.bit_length())
    if counter == "smooth-binary":
        from dpbandits.privacy.smooth_binary import smooth_binary_column_norm

        return smooth_binary_column_norm(horizon, "gaussian")
    if counter == "sqrt":
        return math.sqrt(_sqrt_sum_of_squares(horizon))
    if counter == "blt":
        theta, omega = blt_parameters(horizon)
        tail = math.fsum(
            wi * wj * -math.expm1((horizon - 1) * math.log(ti * tj)) / (1.0 - ti * tj)
            for ti, wi in zip(theta, omega, strict=True)
            for tj, wj in zip(theta, omega, strict=True)
        )
        return math.sqrt(1.0 + tail)
    raise ValueError(f"invalid argument `counter`: unknown counter {counter!r}")


def max_release_variance(counter: str, horizon: int) -> float:
    """max_t Var_t / sigma^2 of (F2) over t <= ``horizon``: sum_{k<T} b_k^2
    (the sums grow with t), in chunks for long horizons; binary: the
    largest popcount, floor(log2(T + 1)); smooth binary: w, at every t."""
    horizon = positive_int("horizon", horizon)
    if counter == "binary":
        return float((horizon + 1).bit_length() - 1)
    if counter == "smooth-binary":
        from dpbandits.privacy.smooth_binary import smooth_binary_release_variance

        return smooth_binary_release_variance(horizon, "gaussian")
    if counter == "sqrt":
        return _sqrt_sum_of_squares(horizon)
    if counter == "blt":
        theta, omega = blt_parameters(horizon)
        return blt_max_release_variance(theta, omega, horizon)
    raise ValueError(f"invalid argument `counter`: unknown counter {counter!r}")


def release_variances(counter: str, horizon: int) -> NDArray[np.float64]:
    """(F2): Var_t / sigma^2 for t = 1..horizon (binary: popcount(t))."""
    horizon = positive_int("horizon", horizon)
    if counter == "binary":
        return binary_release_variances(horizon)
    if counter == "smooth-binary":
        return np.full(horizon, max_release_variance(counter, horizon))
    b = decoder_coefficients(counter, horizon)
    return np.cumsum(b * b)


def binary_release_variances(horizon: int) -> NDArray[np.float64]:
    """popcount(t) for t = 1..horizon: node draws in the tree's release t."""
    t = np.arange(1, positive_int("horizon", horizon) + 1, dtype=np.uint64)
    out = np.zeros(t.shape, dtype=np.float64)
    while np.any(t):
        out += (t & np.uint64(1)).astype(np.float64)
        t >>= np.uint64(1)
    return out


def factorization_gaussian_sigma(
    counter: str, horizon: int, epsilon: float, delta: float, sensitivity: float
) -> float:
    """Smallest per-step Gaussian sigma for which every release of ``counter``
    is (epsilon, delta)-DP under exact accounting: sigma = ||C||_col *
    sensitivity / mu*(epsilon, delta) (module docstring; "binary" gives
    :func:`dpbandits.privacy.tree.gaussian_tree_sigma`)."""
    return factorization_gaussian_sigma_checked(
        counter_choice(counter), horizon, positive("epsilon", epsilon), in_open_unit("delta", delta),
        positive("sensitivity", sensitivity),
    )


def factorization_gaussian_sigma_checked(
    counter: str, horizon: int, epsilon: float, delta: float, sensitivity: float
) -> float:
    """:func:`factorization_gaussian_sigma` on a known ``counter``, finite
    epsilon > 0 and sensitivity > 0 and a delta in (0, 1) that its caller
    validated at its own public boundary (``horizon`` is checked by the
    column norm)."""
    from dpbandits.privacy.analytic_gaussian import gaussian_mu_checked

    norm = max_column_norm(counter, horizon)
    return norm * sensitivity / gaussian_mu_checked(epsilon, delta) * (1.0 + 1e-12)


def lattice_factorization_sensitivity(
    counter: str, horizon: int, sensitivity: float, step: float, dim: int = 1
) -> float:
    """(F4): L2 sensitivity of the lattice release w = round_g(C x) + z of a
    statistic of ``dim`` entries whose inputs have L2 sensitivity
    ``sensitivity``: ||C||_col sensitivity + 1.5 g sqrt(T dim)."""
    horizon = positive_int("horizon", horizon)
    dim = positive_int("dim", dim)
    norm = max_column_norm(counter, horizon)
    return norm * positive("sensitivity", sensitivity) + 1.5 * positive("step", step) * math.sqrt(horizon * dim)


@dataclass(frozen=True)
class FactorizationNoise:
    """What a factorization counter's calibration says: its name, the
    encoder's column norm (F1), the largest release variance factor (F2)
    and sigma; for reports and ``learner.privacy``."""

    counter: str
    horizon: int
    column_norm: float
    max_variance_factor: float
    sigma: float

    @property
    def max_release_sd(self) -> float:
        """sigma sqrt(max_t sum_{k<t} b_k^2)."""
        return self.sigma * math.sqrt(self.max_variance_factor)
