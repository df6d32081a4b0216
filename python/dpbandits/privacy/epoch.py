"""Epoch releases for jointly private LinUCB, and the radius that adapts to them.

The mechanism (``JointDPLinUCB(counter="epoch")``). Rounds are cut into
geometric epochs ending at e_1 = n_0, e_{k+1} = max(e_k + 1, ceil(r e_k))
(the last at the horizon n; :func:`epoch_ends`). At the end of epoch k
the (d+1) x (d+1) sum of the epoch's rows z z^T, z = (x, y), is released
once, plus one draw of the symmetrized Gaussian noise of Shariff &
Sheffet §4.2 (off-diagonal variance sigma^2, diagonal 2 sigma^2; exact
discrete Gaussian on a lattice by default). The learner reads the sum of
all released epoch sums: M_k = sum_{j <= k} (S_j + Z_j).

Privacy. Each user's row enters exactly one release (its epoch's), a
Gaussian mechanism with whitened sensitivity Ltilde^2 (replacement of one
row, Ltilde^2 = L^2 + Btilde^2: the derivation in
:func:`dpbandits.privacy.calibration.shariff_sheffet_gaussian`). The rows
of different epochs are disjoint and each later row depends on earlier
releases only (and on its own user's context), so the whole sequence of
releases is (epsilon, delta)-DP in each user's row, and the learner is
(epsilon, delta)-jointly DP by Shariff & Sheffet's Claim 7 (every action
is post-processing of the releases and of the acting user's own context).
sigma is therefore that of ONE release: sigma = Ltilde^2 / mu*(epsilon,
delta), mu* the exact Gaussian mechanism's (Balle & Wang 2018, Thm 8), the
binary tree's sqrt(levels) factor gone. On the lattice the input rounding
and the discreteness are accounted as for a one-level tree
(:func:`dpbandits.privacy.secure.lattice_gaussian`, the delta of
:func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
for the p (p + 1) / 2 draws one row reaches, p = d + 1).

The radius. After k epochs write the released block as V = G + N + c_k I
and u = X^T y + n_b, with G = X^T X the Gram matrix of the released rows,
N the d x d noise block, n_b the noise of the last column and c_k a
public shift. If ||N|| <= B_N and c_k = B_N + rho, then
rho I <= A := N + c_k I <= (c_k + B_N) I and V >= G + rho I. With
theta~ = V^-1 u and y = X theta* + eta,

    theta~ - theta* = V^-1 (X^T eta + n_b - A theta*),

so ||theta~ - theta*||_V <= ||X^T eta||_{V^-1} + ||n_b||_{V^-1} + ||A theta*||_{V^-1}:

- ||X^T eta||_{V^-1} <= ||X^T eta||_{(G + rho I)^-1}
  <= sigma_r sqrt(2 ln(2/alpha) + ln det(G + rho I) - d ln rho)
  (Abbasi-Yadkori et al. 2011, Thm 1, probability 1 - alpha/2 for all t),
  and det(G + rho I) <= det V because G + rho I <= V (indeed
  V - G - rho I = N + B_N I >= 0): the first term is non-private LinUCB's
  log-det radius with regularizer rho, evaluated at the released V;
- ||n_b||_{V^-1} <= B_b / sqrt(lambda_min(V)) when ||n_b|| <= B_b;
- ||A theta*||_{V^-1} <= ||rho theta*||_{V^-1} + ||A' theta*||_{V^-1} with
  A' = N + B_N I. As rho I <= V, the first is <= S sqrt(rho) (non-private
  LinUCB's term). As 0 <= A' <= 2 B_N I and A' <= V (V - A' = G + rho I),
  A' V^-1 A' <= A', so the second is <= sqrt(theta*^T A' theta*)
  <= S sqrt(2 B_N); it is also <= ||A'|| S / sqrt(lambda_min(V))
  <= 2 B_N S / sqrt(lambda_min(V)).

Hence, on the events ||N_k|| <= B_N(k), ||n_b,k|| <= B_b(k) for every k,

    beta_t = sigma_r sqrt(2 ln(2/alpha) + ln det V_t - d ln rho) + S sqrt(rho)
             + S min(sqrt(2 B_N), 2 B_N / sqrt(lambda_min(V_t)))
             + B_b / sqrt(lambda_min(V_t)),

everything read from the release (post-processing). As lambda_min(V_t)
grows the noise terms decay like 1 / sqrt(lambda_min); with no noise
(B_N = B_b = 0) beta_t is exactly non-private LinUCB's radius with
regularizer rho.

A second form bounds the two noise terms together. Write
n_b - A theta* = w - c_k theta*, w = n_b - N theta*. Then
||n_b - A theta*||_{V^-1} <= (||w|| + c_k S) / sqrt(lambda_min(V)), and w
is a fixed linear image of the independent noise entries (theta* is not
random): its covariance proxy is s^2 ((1 + ||theta*||^2) I + theta*
theta*^T), because E[N_ij N_kl] = s^2 (delta_ik delta_jl + delta_il
delta_jk) for the symmetrized noise. Its eigenvalues are s^2 (1 + S^2)
(d - 1 times) and s^2 (1 + 2 S^2) at most, so Hsu, Kakade & Zhang
(Thm 2.1, for x = M g, g isotropic subgaussian) give, with probability
>= 1 - p,

    ||w|| <= B_w = s sqrt(tr C + 2 sqrt(tr(C^2) ln(1/p)) + 2 ||C|| ln(1/p)),

C = (1 + S^2) I_{d-1} (+) (1 + 2 S^2) (:func:`mixed_norm_bound`). On the
events of both forms the radius may take the smaller:

    beta_t = sigma_r sqrt(2 ln(2/alpha) + ln det V_t - d ln rho)
             + min(S sqrt(rho) + S min(sqrt(2 B_N), 2 B_N / sqrt(lambda_min))
                   + B_b / sqrt(lambda_min),
                   (B_w + c_k S) / sqrt(lambda_min)).

The second is the smaller once lambda_min(V_t) is a few times c_k: it
does not pay the triangle inequality between n_b and N theta*, nor the
factor 2 of A' <= 2 B_N I.

The noise bounds (:func:`operator_norm_bound`, :func:`vector_norm_bound`).
After k epochs every entry of N_k is a sum of k independent draws, each
subgaussian with variance proxy sigma^2 off the diagonal and 2 sigma^2 on
it (the continuous Gaussian; the discrete Gaussian on the lattice is
sigma'-subgaussian, Canonne, Kamath & Steinke 2020, Cor. 23), so s^2 =
k sigma^2. For a unit v, v^T N v = sum_i v_i^2 N_ii + 2 sum_{i<j} v_i v_j
N_ij has proxy 2 s^2 (sum_i v_i^2)^2 = 2 s^2, so
P(|v^T N v| > x) <= 2 exp(-x^2 / (4 s^2)). On an eta-net of the sphere
(at most (1 + 2/eta)^d points) a symmetric matrix has
||N|| <= max_net |v^T N v| / (1 - 2 eta) (Vershynin, High-dimensional
probability, Exercise 4.4.3), so with probability >= 1 - p

    ||N|| <= B_N = 2 s sqrt(ln(2 (1 + 2/eta)^d / p)) / (1 - 2 eta),

eta chosen on a grid to make it smallest. The vector n_b has d independent
off-diagonal entries (proxy s^2 each); by Hsu, Kakade & Zhang 2012
(Thm 2.1) with probability >= 1 - p

    ||n_b|| <= B_b = s sqrt(d + 2 sqrt(d ln(1/p)) + 2 ln(1/p)).

The failure probability alpha/2 is split over the 3 E events (E epochs;
B_N, B_b and B_w after each): p = alpha / (6 E). All three bounds are
B(1) sqrt(k); the engine receives B_N(1), B_b(1), B_w(1) and rho and
forms beta_t each time an epoch is released.

>>> from dpbandits.privacy.epoch import epoch_ends, mixed_norm_bound, vector_norm_bound
>>> epoch_ends(100, 10, 2.0)
[10, 20, 40, 80, 100]
>>> round(vector_norm_bound(1.0, 5, 0.01), 4)
4.8793
>>> round(mixed_norm_bound(1.0, 5, 1.0, 0.01), 4)
7.7518
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.noise import GaussianNoise, SymmetricGaussianNoise
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import LatticeNoise

__all__ = [
    "EpochCalibration",
    "EpochCounterCalibration",
    "default_first_epoch",
    "epoch_counter_calibration",
    "epoch_ends",
    "epoch_gaussian",
    "epoch_radius_extra",
    "mixed_norm_bound",
    "operator_norm_bound",
    "vector_norm_bound",
]

#: Largest epoch growth ratio accepted (as the Rust counter).
MAX_RATIO = 64.0
#: Net resolutions tried by :func:`operator_norm_bound`.
_NET_GRID = tuple(i / 200.0 for i in range(1, 100))


def epoch_ends(horizon: int, first: int, ratio: float) -> list[int]:
    """The rounds at which epochs end: min(n_0, n), then
    max(e + 1, ceil(r e)) capped at n, until n (the Rust counter's
    schedule, the same floating-point arithmetic)."""
    n = positive_int("horizon", horizon)
    first = positive_int("first_epoch", first)
    ratio = _ratio(ratio)
    ends = [min(first, n)]
    while ends[-1] < n:
        e = ends[-1]
        grown = min(float(math.ceil(ratio * float(e))), float(n))
        ends.append(min(max(int(grown), e + 1), n))
    return ends


def _ratio(ratio: float) -> float:
    r = float(ratio)
    if not (math.isfinite(r) and 1.0 <= r <= MAX_RATIO):
        raise ValueError(f"invalid argument `epoch_ratio`: must lie in [1, {MAX_RATIO:g}], got {ratio!r}")
    return r


def operator_norm_bound(scale: float, d: int, failure: float) -> float:
    """B with P(||N|| > B) <= ``failure`` for a d x d symmetric noise block
    whose entries are independent, subgaussian with proxy ``scale``^2 off
    the diagonal and 2 ``scale``^2 on it: the eta-net bound of the module
    documentation, smallest over eta in (0, 1/2) on a grid."""
    s = positive("scale", scale)
    d = positive_int("d", d)
    p = in_open_unit("failure", failure)
    return min(
        2.0 * s * math.sqrt(math.log(2.0 / p) + d * math.log1p(2.0 / eta)) / (1.0 - 2.0 * eta) for eta in _NET_GRID
    )


def vector_norm_bound(scale: float, d: int, failure: float) -> float:
    """B with P(||n|| > B) <= ``failure`` for d independent entries, each
    subgaussian with proxy ``scale``^2 (Hsu, Kakade & Zhang 2012, Thm 2.1):
    scale sqrt(d + 2 sqrt(d t) + 2 t), t = ln(1 / failure)."""
    s = positive("scale", scale)
    d = positive_int("d", d)
    t = math.log(1.0 / in_open_unit("failure", failure))
    return s * math.sqrt(d + 2.0 * math.sqrt(d * t) + 2.0 * t)


def mixed_norm_bound(scale: float, d: int, S: float, failure: float) -> float:
    """B_w with P(||n_b - N theta*|| > B_w) <= ``failure`` for every fixed
    ||theta*|| <= ``S``, the noise entries subgaussian with proxy
    ``scale``^2 (2 ``scale``^2 on N's diagonal): Hsu, Kakade & Zhang 2012
    (Thm 2.1) for the covariance proxy C = scale^2 ((1 + S^2) I + S^2 u
    u^T), u a unit vector (the module documentation):
    scale sqrt(tr C + 2 sqrt(tr(C^2) t) + 2 ||C|| t), t = ln(1 / failure)."""
    s = positive("scale", scale)
    d = positive_int("d", d)
    S = positive("S", S)
    t = math.log(1.0 / in_open_unit("failure", failure))
    rest, top = 1.0 + S * S, 1.0 + 2.0 * S * S
    trace, trace_sq = (d - 1) * rest + top, (d - 1) * rest * rest + top * top
    return s * math.sqrt(trace + 2.0 * math.sqrt(trace_sq * t) + 2.0 * top * t)


def epoch_radius_extra(
    op_bound: float, vec_bound: float, ridge: float, S: float, epochs: int, lambda_min: float,
    mixed_bound: float = 0.0,
) -> float:
    """The terms of beta_t beyond the log-det one after ``epochs`` released
    epochs, for a released V with smallest eigenvalue ``lambda_min``:
    min(S sqrt(ridge) + S min(sqrt(2 B_N), 2 B_N / sqrt(lambda_min)) + B_b / sqrt(lambda_min),
    (B_w + c_k S) / sqrt(lambda_min)), B_N = op_bound sqrt(k), B_b =
    vec_bound sqrt(k), B_w = mixed_bound sqrt(k), c_k = B_N + ridge (the
    second form only when ``mixed_bound`` > 0; the engine's formula, for
    tests and reports)."""
    root = math.sqrt(epochs)
    b_n, b_b = op_bound * root, vec_bound * root
    lam = math.sqrt(lambda_min)
    split = S * (math.sqrt(ridge) + min(math.sqrt(2.0 * b_n), 2.0 * b_n / lam)) + b_b / lam
    if mixed_bound > 0.0:
        return min(split, (mixed_bound * root + S * (b_n + ridge)) / lam)
    return split


@dataclass(frozen=True)
class EpochCalibration:
    """Noise and radius constants of ``JointDPLinUCB(counter="epoch")``
    (build it with :func:`epoch_gaussian`; the derivation is in the module
    documentation).

    Attributes
    ----------
    d, horizon, epsilon, delta, alpha, L, B_tilde:
        The validated inputs (alpha: 1/n by default).
    L_tilde:
        sqrt(L^2 + Btilde^2).
    first_epoch, ratio, epochs:
        The schedule (n_0, r) and its number of epochs E.
    sigma:
        Per-release noise: (Z + Z^T)/sqrt(2), Z_ij ~ N(0, sigma^2) (on the
        lattice: the discrete Gaussian of scale sigma).
    op_bound, vec_bound, mixed_bound:
        B_N, B_b and B_w after one epoch (after k: times sqrt(k)).
    ridge:
        rho: the shift after k epochs is op_bound sqrt(k) + rho.
    S:
        The bound on ||theta*|| that B_w assumes.
    failure:
        p = alpha / (6 E), the failure probability of each noise bound.
    zcdp_rho:
        Ltilde^4 / (2 sigma^2) (one release per row).
    """

    d: int
    horizon: int
    epsilon: float
    delta: float
    alpha: float
    L: float
    B_tilde: float
    L_tilde: float
    first_epoch: int
    ratio: float
    epochs: int
    sigma: float
    op_bound: float
    vec_bound: float
    ridge: float
    failure: float
    zcdp_rho: float
    mixed_bound: float = 0.0
    S: float = 1.0
    sampler: str = "lattice"
    lattice_exponent: int | None = None
    calibration: str = "tight"
    counter: str = "epoch"

    @property
    def noise(self) -> SymmetricGaussianNoise | LatticeNoise:
        """The per-release noise spec."""
        if self.lattice_exponent is not None:
            steps = round(math.ldexp(self.sigma, self.lattice_exponent))
            return LatticeNoise("symmetric_gaussian", self.sigma, self.lattice_exponent, steps)
        return SymmetricGaussianNoise(self.sigma)

    @property
    def guarantee(self) -> Guarantee:
        """(epsilon, delta)-joint DP of each user's row (x_t, y_t)."""
        basis = ("Shariff & Sheffet 2018, Claim 7; M_t released by epochs: each row enters one release of its "
                 "epoch's sum (dpbandits.privacy.epoch), a Gaussian mechanism with sensitivity Ltilde^2; exact "
                 "Gaussian accounting (Balle & Wang 2018 Thm 8)")
        if self.sampler == "lattice":
            basis += ("; discrete Gaussian on a lattice, inputs rounded (dpbandits.privacy.secure.lattice_gaussian; "
                      "delta by dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta)")
        return Guarantee(
            model="joint", epsilon=self.epsilon, delta=self.delta, rho=self.zcdp_rho,
            protects="contexts and rewards", basis=basis, calibration="tight",
            sampler=self.sampler,  # type: ignore[arg-type]
        )


def epoch_gaussian(
    d: int,
    horizon: int,
    epsilon: float,
    delta: float,
    alpha: float | None = None,
    L: float = 1.0,
    B_tilde: float = 1.0,
    first_epoch: int | None = None,
    ratio: float = 1.5,
    ridge: float = 1.0,
    sampler: str = "lattice",
    S: float = 1.0,
) -> EpochCalibration:
    """The noise and radius constants of the epoch releases.

    ``first_epoch``: n_0 (None: :func:`default_first_epoch`), capped at the
    horizon; ``ratio``: r in [1, 64]; ``ridge``: rho > 0 (1, as non-private
    LinUCB's regularizer on App. D); ``S``: the bound on ||theta*|| (for
    B_w). Other arguments as
    :func:`dpbandits.privacy.calibration.shariff_sheffet_gaussian`.
    """
    from dpbandits.privacy.calibration import _l_tilde_sq, failure_probability

    d = positive_int("d", d)
    n = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    alpha = failure_probability(alpha, n)
    L = positive("L", L)
    B_tilde = positive("B_tilde", B_tilde)
    return epoch_gaussian_checked(
        d, n, epsilon, delta, alpha, L, B_tilde, first_epoch=first_epoch, ratio=ratio,
        ridge=positive("ridge", ridge), sampler=sampler, l_tilde_sq=_l_tilde_sq(L, B_tilde), S=positive("S", S),
    )


def default_first_epoch(d: int) -> int:
    """n_0 = 4 (d + 1)^2: a first release that already holds a few rows
    per entry of the released matrix."""
    return 4 * (d + 1) ** 2


def epoch_gaussian_checked(
    d: int, n: int, epsilon: float, delta: float, alpha: float, L: float, B_tilde: float, *,
    first_epoch: int | None, ratio: float, ridge: float, sampler: str, l_tilde_sq: float, S: float = 1.0,
) -> EpochCalibration:
    """:func:`epoch_gaussian` on arguments its caller validated."""
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    first = default_first_epoch(d) if first_epoch is None else positive_int("first_epoch", first_epoch)
    first = min(first, n)
    ratio = _ratio(ratio)
    epochs = len(epoch_ends(n, first, ratio))
    p = d + 1
    sigma, accounted, exponent = _one_release_sigma(
        epsilon, delta, l_tilde_sq, sampler=sampler, coordinates=p * (p + 1) // 2, dim=p * p / 2.0,
        kind="symmetric_gaussian", sum_bound=n * l_tilde_sq,
    )
    failure = alpha / (6.0 * epochs)
    return EpochCalibration(
        d=d, horizon=n, epsilon=epsilon, delta=delta, alpha=alpha, L=L, B_tilde=B_tilde,
        L_tilde=math.sqrt(l_tilde_sq), first_epoch=first, ratio=ratio, epochs=epochs, sigma=sigma,
        op_bound=operator_norm_bound(sigma, d, failure), vec_bound=vector_norm_bound(sigma, d, failure),
        ridge=ridge, failure=failure, zcdp_rho=l_tilde_sq**2 / (2.0 * accounted**2),
        mixed_bound=mixed_norm_bound(sigma, d, S, failure), S=S, sampler=sampler, lattice_exponent=exponent,
    )


def _one_release_sigma(
    epsilon: float, delta: float, sensitivity: float, *, sampler: str, coordinates: int, dim: float, kind: str,
    sum_bound: float,
) -> tuple[float, float, int | None]:
    """(sigma, the sigma the accounting uses, the lattice exponent or None)
    of a Gaussian mechanism on a statistic of L2 sensitivity
    ``sensitivity`` released once per value: the exact Gaussian mechanism's
    sigma = sensitivity / mu*(epsilon, delta) (Balle & Wang 2018, Thm 8; the
    tree's formula with one level). On the lattice (``sampler="lattice"``)
    mu* is met at the delta of
    :func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
    for the ``coordinates`` draws one value reaches, and the input rounding
    of ``dim`` entries is accounted by
    :func:`dpbandits.privacy.secure.lattice_gaussian` (sums up to
    ``sum_bound`` stay exact)."""
    from dpbandits.privacy.discrete_gaussian import lattice_gaussian_calibration_delta_checked
    from dpbandits.privacy.secure import capped_lattice_exponent, lattice_gaussian
    from dpbandits.privacy.tree import gaussian_tree_sigma_checked

    sigma = gaussian_tree_sigma_checked(1, epsilon, delta, sensitivity)
    if sampler != "lattice":
        return sigma, sigma, None
    steps = math.ldexp(sigma, capped_lattice_exponent(sigma, sum_bound)) / 2.0
    budget, _ = lattice_gaussian_calibration_delta_checked(epsilon, delta, coordinates, steps)
    accounted = gaussian_tree_sigma_checked(1, epsilon, budget, sensitivity)
    lattice = lattice_gaussian(accounted, sensitivity, dim=dim, kind=kind, sum_bound=sum_bound)
    return lattice.scale, accounted, lattice.exponent


@dataclass(frozen=True)
class EpochCounterCalibration:
    """The noise of :class:`dpbandits.mechanisms.EpochCounter` (build it
    with :func:`epoch_counter_calibration`).

    Attributes
    ----------
    epsilon, delta, bound, horizon, entries, sampler:
        The validated inputs (``bound``: B >= ||v||_2 of every value;
        ``entries``: entries of one value).
    sensitivity:
        2 B: replacing one value by another of norm <= B moves its epoch's
        sum by at most 2 B in L2 norm.
    sigma:
        Per-entry noise of each release: N(0, sigma^2) i.i.d. (on the
        lattice: the discrete Gaussian of scale sigma, a whole number of
        lattice steps).
    lattice_exponent:
        j of the lattice 2^-j Z (None: floating-point noise).
    zcdp_rho:
        sensitivity^2 / (2 sigma_accounted^2): one release per value.
    """

    epsilon: float
    delta: float
    bound: float
    horizon: int
    entries: int
    sampler: str
    sensitivity: float
    sigma: float
    lattice_exponent: int | None
    zcdp_rho: float

    @property
    def noise(self) -> GaussianNoise | LatticeNoise:
        """The per-release noise spec."""
        if self.lattice_exponent is not None:
            steps = round(math.ldexp(self.sigma, self.lattice_exponent))
            return LatticeNoise("gaussian", self.sigma, self.lattice_exponent, steps)
        return GaussianNoise(self.sigma)

    @property
    def guarantee(self) -> Guarantee:
        """(epsilon, delta)-DP of the whole stream of releases in each value."""
        basis = ("epoch counter (dpbandits.privacy.epoch): each value enters one release, its epoch's sum, a "
                 "Gaussian mechanism with L2 sensitivity 2B; exact Gaussian accounting (Balle & Wang 2018 Thm 8)")
        if self.sampler == "lattice":
            basis += ("; discrete Gaussian on a lattice, inputs rounded (dpbandits.privacy.secure.lattice_gaussian; "
                      "delta by dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta)")
        return Guarantee(
            model="central", epsilon=self.epsilon, delta=self.delta, rho=self.zcdp_rho,
            protects="each value of the stream", basis=basis, calibration="tight",
            sampler=self.sampler,  # type: ignore[arg-type]
        )


def epoch_counter_calibration(
    epsilon: float, delta: float, bound: float, *, entries: int, horizon: int, sampler: str = "lattice"
) -> EpochCounterCalibration:
    """The noise of an epoch counter over ``horizon`` values of ``entries``
    entries and L2 norm <= ``bound``: (epsilon, delta)-DP of the whole
    stream of releases for any two streams that differ in one value.

    Every value enters exactly one release (the sum of its epoch, released
    once at the epoch's end) and the epochs are disjoint, so the stream of
    releases is a single Gaussian mechanism in each value, of L2
    sensitivity 2 ``bound`` (replacement of the value): sigma =
    2 B / mu*(epsilon, delta), whatever the horizon and the schedule
    (:func:`_one_release_sigma`; no sqrt(log n) factor of a tree).

    >>> cal = epoch_counter_calibration(1.0, 1e-6, 1.0, entries=3, horizon=1000, sampler="float")
    >>> round(cal.sigma, 4), cal.sensitivity
    (8.4494, 2.0)
    """
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    bound = positive("bound", bound)
    entries = positive_int("entries", entries)
    horizon = positive_int("horizon", horizon)
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    sensitivity = 2.0 * bound
    sigma, accounted, exponent = _one_release_sigma(
        epsilon, delta, sensitivity, sampler=sampler, coordinates=entries, dim=float(entries), kind="gaussian",
        sum_bound=horizon * bound,
    )
    if not math.isfinite(sigma):
        raise ValueError(f"invalid argument `epsilon`: {epsilon!r} gives a noise too large to use")
    return EpochCounterCalibration(
        epsilon=epsilon, delta=delta, bound=bound, horizon=horizon, entries=entries, sampler=sampler,
        sensitivity=sensitivity, sigma=sigma, lattice_exponent=exponent,
        zcdp_rho=sensitivity**2 / (2.0 * accounted**2),
    )
