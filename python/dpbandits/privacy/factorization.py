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
:func:`dpbandits.privacy.calibration.gaussian_tree_sigma`): the whole
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
accounting of sigma holds in zCDP; exact (epsilon, delta) accounting of the
discrete noise would need :func:`dpbandits.privacy.secure.discrete_gaussian_delta_allowance`
for T * dim coordinates, which is large for long streams.
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
    "COUNTERS",
    "Counter",
    "FactorizationNoise",
    "binary_release_variances",
    "blt_parameters",
    "counter_choice",
    "decoder_coefficients",
    "encoder_coefficients",
    "factorization_gaussian_sigma",
    "lattice_factorization_sensitivity",
    "max_column_norm",
    "max_release_variance",
    "release_variances",
    "sqrt_coefficients",
]

Counter = Literal["binary", "sqrt", "blt"]
"""A continual counter: the binary tree, the square-root factorization or BLT."""

#: The counters a learner or TreeCounter accepts.
COUNTERS: tuple[str, ...] = ("binary", "sqrt", "blt")

#: (theta, omega) of the four-buffer BLT encoder fitted at T = 2^20 (see
#: the module docstring).
BLT_4: tuple[tuple[float, ...], tuple[float, ...]] = (
    (0.65126656, 0.99982155, 0.99128357, 0.99999764),
    (0.46541862, 0.01751684, 0.11483117, 0.00268727),
)

#: Four-buffer BLT encoders fitted at T = 2^k (k -> (theta, omega)); see
#: :func:`blt_parameters`. Only T = 2^20 so far: the exact objective at
#: longer horizons costs seconds per evaluation, and a partial-fraction
#: closed form tried for it was numerically ill-conditioned (poles near 1).
#: At T = 5e7 :data:`BLT_4` still gives 0.33x the tree's max variance
#: (tests/test_counters.py prints it); a fit for that horizon should do
#: better.
BLT_BY_LOG2_HORIZON: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = {
    20: BLT_4,
}


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


def counter_choice(counter: str, noise_family: str = "gaussian") -> str:
    """Validates ``counter`` for noise of ``noise_family`` ("gaussian",
    "laplace", "wishart"): factorizations serve Gaussian noise only (their
    L1 column norms grow like sqrt(T), far worse than the tree's log T)."""
    if counter not in COUNTERS:
        raise ValueError(f"invalid argument `counter`: must be one of {COUNTERS}, got {counter!r}")
    if counter != "binary" and noise_family != "gaussian":
        raise ValueError(
            f"invalid argument `counter`: {counter!r} serves Gaussian noise only (its sensitivity is an L2 "
            f"column norm); {noise_family} noise needs counter='binary'"
        )
    return counter


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
    u = C^{-1} e_1 (for "sqrt", b = c exactly). BLT: u by the rational
    generating function of C (scipy.signal.lfilter, exact recursion)."""
    n = positive_int("n", n)
    if counter == "sqrt":
        return sqrt_coefficients(n)
    if counter == "blt":
        from scipy.signal import lfilter

        num, den = _blt_rational(horizon or n)
        e1 = np.zeros(n)
        e1[0] = 1.0
        return np.cumsum(lfilter(den, num, e1))
    raise ValueError(f"invalid argument `counter`: no decoder for {counter!r}")


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
    (binary: sqrt(floor(log2 T) + 1)). BLT in closed form:
    1 + sum_{i,j} omega_i omega_j (1 - (theta_i theta_j)^(T-1)) / (1 - theta_i theta_j)."""
    horizon = positive_int("horizon", horizon)
    if counter == "binary":
        return math.sqrt(horizon.bit_length())
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
    largest popcount, floor(log2(T + 1))."""
    horizon = positive_int("horizon", horizon)
    if counter == "binary":
        return float((horizon + 1).bit_length() - 1)
    if counter == "sqrt":
        return _sqrt_sum_of_squares(horizon)
    if counter == "blt":
        from scipy.signal import lfilter, lfilter_zi

        num, den = _blt_rational(horizon)
        zi = lfilter_zi(den, num) * 0.0
        total, carry, start = 0.0, 0.0, 0
        while start < horizon:
            n = min(_CHUNK, horizon - start)
            e = np.zeros(n)
            if start == 0:
                e[0] = 1.0
            u, zi = lfilter(den, num, e, zi=zi)
            b = carry + np.cumsum(u)
            carry = float(b[-1])
            total += math.fsum(b * b)
            start += n
        return total
    raise ValueError(f"invalid argument `counter`: unknown counter {counter!r}")


def _blt_rational(horizon: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(N, D) with c(x) = 1 + sum_i omega_i x / (1 - theta_i x) = N(x) / D(x)."""
    theta, omega = blt_parameters(horizon)
    den = np.array([1.0])
    for th in theta:
        den = np.convolve(den, [1.0, -th])
    num = den.copy()
    for i, w in enumerate(omega):
        part = np.array([0.0, w])
        for j, th in enumerate(theta):
            if j != i:
                part = np.convolve(part, [1.0, -th])
        num = num + np.pad(part, (0, len(num) - len(part)))
    return num, den


def release_variances(counter: str, horizon: int) -> NDArray[np.float64]:
    """(F2): Var_t / sigma^2 for t = 1..horizon (binary: popcount(t))."""
    horizon = positive_int("horizon", horizon)
    if counter == "binary":
        return binary_release_variances(horizon)
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
    :func:`dpbandits.privacy.calibration.gaussian_tree_sigma`)."""
    from dpbandits.privacy.analytic_gaussian import gaussian_mu

    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    sensitivity = positive("sensitivity", sensitivity)
    norm = max_column_norm(counter_choice(counter), horizon)
    return norm * sensitivity / gaussian_mu(epsilon, delta) * (1.0 + 1e-12)


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
