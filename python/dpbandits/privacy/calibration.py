"""Noise calibration of the joint-DP LinUCB learners of Shariff & Sheffet 2018.

Each function turns (d, horizon n, epsilon, delta, alpha, bounds L and
B_tilde) into the numbers a learner hands to the Rust engine: the per-node
noise of the tree-based mechanism, the shift applied to each release, and the
(alpha/2n)-accurate bounds rho_min, rho_max, gamma of Def. 3 that Prop. 4
turns into the confidence radius beta_t (:mod:`dpbandits.privacy.confidence`).
Every formula appears once, next to its equation/proposition number. All
logarithms are natural (``math.log``), including ln(8n/alpha) in Eq. (4).
What follows from the tree alone (its depth m, the nodes one row reaches,
the tight per-node sigma, the per-node target of App. A.2) is in
:mod:`dpbandits.privacy.tree`.

Notation (Shariff & Sheffet §2, Assumption 6): m = 1 + ceil(log2 n) is the
tree depth; Ltilde^2 = L^2 + Btilde^2 bounds ||x_t||^2 + y_t^2, where
||x_t|| <= L (Assumption 1) and |y_t| <= Btilde. The tree releases
M_t + N_t with M_t = A_t^T A_t the (d+1)x(d+1) Gram matrix of the rows
(x_s, y_s), s < t (§4); H_t is the top-left d x d block of N_t (after the
shift) and h_t the first d entries of its last column.

Arguments common to all functions, with their valid ranges:

- ``d``: integer >= 1, dimension of the actions.
- ``horizon``: integer n >= 1 (an integral float such as 5e7 is accepted).
- ``epsilon``: finite, > 0. ``delta``: 0 < delta < 1.
- ``alpha``: 0 < alpha < 1, total failure probability of the confidence
  sets (Prop. 4); ``None`` means 1/n (App. D), which needs n >= 2.
- ``L``, ``B_tilde``: finite, > 0 (App. D: L = 1, Btilde = 1).

Known traps this module avoids: the Wishart scale is
Ltilde^2 I, not Ltilde I (§4.1 writes W(Ltilde I, k) once; Thm 8, Prop. 9
and Thm 23 use Ltilde^2 I); Eq. (4) uses natural logarithms; the shift is
applied once to each release, never to each tree node.
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.noise import SymmetricGaussianNoise, WishartNoise
from dpbandits.privacy.composition import advanced_composition_epsilon, zcdp_to_dp_epsilon
from dpbandits.privacy.confidence import RegularizerBounds
from dpbandits.privacy.discrete_gaussian import lattice_gaussian_calibration_delta_checked
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import LatticeNoise, capped_lattice_exponent, lattice_gaussian
from dpbandits.privacy.tree import (
    gaussian_tree_sigma_checked,
    tree_depth_checked,
    tree_levels,
    tree_node_epsilon_checked,
)

__all__ = [
    "GaussianCalibration",
    "WishartCalibration",
    "shariff_sheffet_gaussian",
    "shariff_sheffet_wishart",
    "wishart_degrees_of_freedom",
    "wishart_node_degrees_of_freedom",
]

_PROTECTS = "contexts and rewards"


def failure_probability(alpha: float | None, horizon: int) -> float:
    """The confidence sets' failure probability: ``alpha`` in (0, 1), or
    ``None`` for the default 1/horizon (which needs horizon >= 2). The
    radii take ln(8 n / alpha) (Prop. 4, Claim 17), so alpha must keep
    8 n / alpha a finite float."""
    if alpha is None:
        if horizon < 2:
            raise ValueError(
                "invalid argument `alpha`: the default alpha = 1/horizon is 1 for horizon = 1, "
                "outside (0, 1); pass alpha explicitly"
            )
        return 1.0 / horizon
    a = in_open_unit("alpha", alpha)
    if not math.isfinite(8.0 * horizon / a):
        smallest = 8.0 * horizon / sys.float_info.max * 1.001
        raise ValueError(f"invalid argument `alpha`: {alpha!r} is too small: ln(8 n / alpha) overflows; "
                         f"alpha in [{smallest:.4g}, 1) works")
    return a


def _l_tilde_sq(L: float, B_tilde: float) -> float:
    """Ltilde^2 = L^2 + B_tilde^2 (Assumption 6), checked so that the noise
    formulas' Ltilde^4 stays a finite float."""
    l_tilde_sq = L * L + B_tilde * B_tilde
    if not math.isfinite(l_tilde_sq * l_tilde_sq):
        raise ValueError(f"invalid arguments `L`, `B_tilde`: Ltilde^4 = (L^2 + B_tilde^2)^2 overflows a float "
                         f"(L = {L!r}, B_tilde = {B_tilde!r}); L^2 + B_tilde^2 <= 1e154 works")
    return l_tilde_sq


def _finite_real(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"invalid argument `{name}`: expected a real number or a bool, got {value!r}"
        )
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"invalid argument `{name}`: must be finite, got {value!r}")
    return v


# --------------------------------------------------------------------------
# §4.2: shifted symmetric Gaussian noise
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _TreeCalibration:
    """What both Shariff & Sheffet calibrations hold: the validated inputs,
    the tree depth m, Ltilde, the per-node target and the (alpha/2n)-accurate
    bounds rho_min, rho_max, gamma of Def. 3 (see the subclasses)."""

    d: int
    horizon: int
    epsilon: float
    delta: float
    alpha: float
    L: float
    B_tilde: float
    m: int
    L_tilde: float
    node_epsilon: float
    node_delta: float
    rho_min: float
    rho_max: float
    gamma: float

    @property
    def bounds(self) -> RegularizerBounds:
        """rho_min, rho_max, gamma (Def. 3) with what Prop. 4 needs."""
        return RegularizerBounds(d=self.d, horizon=self.horizon, alpha=self.alpha, L=self.L,
                                 rho_min=self.rho_min, rho_max=self.rho_max, gamma=self.gamma)


@dataclass(frozen=True)
class GaussianCalibration(_TreeCalibration):
    """Calibration of the tree-based mechanism with symmetrized Gaussian noise
    (Shariff & Sheffet §4.2, Prop. 11). Build it with
    :func:`shariff_sheffet_gaussian`.

    Attributes
    ----------
    d, horizon, epsilon, delta, alpha, L, B_tilde:
        The validated inputs (alpha resolved: 1/n by default).
    m:
        Tree depth 1 + ceil(log2 n); every release sums at most m nodes.
    L_tilde:
        sqrt(L^2 + Btilde^2) (Assumption 6).
    node_epsilon, node_delta:
        What one tree node is: with ``calibration="paper"``,
        (epsilon / sqrt(8 m ln(2/delta)), delta/2), the per-node target the
        paper states for sigma (§4.2 and its footnote 5); with ``"tight"``,
        the exact (epsilon, delta/2) of one node, a Gaussian mechanism with
        mu = Ltilde^2 / sigma (the tight sigma targets the whole tree, not a
        per-node budget).
    sigma:
        sigma_noise: each node adds (Z' + Z'^T)/sqrt(2) with
        Z'_ij ~ N(0, sigma^2) i.i.d. over the (d+1)x(d+1) matrix.
    upsilon:
        Upsilon, the high-probability bound on the operator norm of the
        top-left d x d block of the summed noise.
    shift:
        c added to the top-left d x d block of each *release* (not each
        node): 2 Upsilon by default.
    rho_min, rho_max, gamma:
        (alpha/2n)-accurate bounds of Def. 3 for the shifted regularizer.
    zcdp_rho:
        rho of the rho-zCDP guarantee of the whole tree, m Ltilde^4 /
        (2 sigma^2) = epsilon^2 / (32 ln(4/delta)^2) (footnote 5).
    """

    sigma: float
    upsilon: float
    shift: float
    zcdp_rho: float
    calibration: str = "paper"
    sampler: str = "float"
    lattice_exponent: int | None = None
    counter: str = "binary"
    #: max_t of the release noise variance in units of sigma^2 (binary: the
    #: paper's m; factorizations: max_t sum_{k<t} b_k^2).
    release_variance: float = 0.0

    @property
    def noise(self) -> SymmetricGaussianNoise | LatticeNoise:
        """The per-node noise spec for :class:`dpbandits.mechanisms.TreeCounter`
        (exact on the lattice 2^-lattice_exponent with ``sampler="lattice"``)."""
        if self.lattice_exponent is not None:
            steps = round(math.ldexp(self.sigma, self.lattice_exponent))
            return LatticeNoise("symmetric_gaussian", self.sigma, self.lattice_exponent, steps)
        return SymmetricGaussianNoise(self.sigma)

    @property
    def guarantee(self) -> Guarantee:
        """(epsilon, delta)-joint DP and zcdp_rho-zCDP of each user's row (x_t, y_t)."""
        if self.calibration == "tight":
            basis = ("Shariff & Sheffet 2018, Claim 7 + §4.2 mechanism; exact Gaussian accounting "
                     "of the whole tree (Balle & Wang 2018 Thm 8, Dong-Roth-Su Cor. 3.3)")
        else:
            basis = ("Shariff & Sheffet 2018, Claim 7 + §4.2 (tree-based mechanism, symmetrized "
                     "Gaussian noise, zCDP composition per footnote 5)")
        if self.counter == "smooth-binary":
            basis = ("Shariff & Sheffet 2018, Claim 7; M_t released by the smooth binary mechanism "
                     "(Andersson & Pagh 2023) instead of the tree: each row reaches at most H - w nodes, "
                     "sensitivity = Ltilde^2 sqrt(H - w) (dpbandits.privacy.smooth_binary); exact Gaussian "
                     "accounting (Balle & Wang 2018 Thm 8)")
            if self.sampler == "lattice":
                basis += ("; discrete Gaussian on a lattice, inputs rounded "
                          "(dpbandits.privacy.secure.lattice_gaussian; delta by "
                          "dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta)")
        elif self.counter != "binary":
            basis = ("Shariff & Sheffet 2018, Claim 7; M_t released by the "
                     f"{self.counter!r} factorization counter instead of the tree (Gaussian mechanism on the encoded "
                     "stream, sensitivity = Ltilde^2 x the encoder's max column norm, "
                     "dpbandits.privacy.factorization); exact Gaussian accounting (Balle & Wang 2018 Thm 8)")
            if self.sampler == "lattice":
                basis += ("; discrete Gaussian on the encoded stream round(C x) + z, prefix sums by "
                          "post-processing, rounding allowance (F4); delta by "
                          "dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta")
        elif self.sampler == "lattice":
            allowance = (
                "; delta by dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta"
                if self.calibration == "tight" else ""
            )
            basis += ("; discrete Gaussian on a lattice, inputs rounded "
                      f"(dpbandits.privacy.secure.lattice_gaussian{allowance})")
        return Guarantee(
            model="joint", epsilon=self.epsilon, delta=self.delta, rho=self.zcdp_rho,
            protects=_PROTECTS, basis=basis, calibration=self.calibration,  # type: ignore[arg-type]
            sampler=self.sampler,  # type: ignore[arg-type]
        )


def shariff_sheffet_gaussian(
    d: int,
    horizon: int,
    epsilon: float,
    delta: float,
    alpha: float | None = None,
    L: float = 1.0,
    B_tilde: float = 1.0,
    shift: bool | float = True,
    calibration: str = "paper",
    sampler: str = "float",
    counter: str = "binary",
) -> GaussianCalibration:
    """Noise and confidence bounds of JDP-LinUCB with shifted Gaussian noise.

    Shariff & Sheffet 2018, §4.2 and Prop. 11 (paper calibration, exactly):

    - sigma_noise^2 = 16 m Ltilde^4 ln(4/delta)^2 / epsilon^2   (§4.2)
    - Upsilon = sigma_noise sqrt(2m) (4 sqrt(d) + 2 ln(2n/alpha))  (§4.2)
    - shift c = 2 Upsilon, so rho_min = Upsilon, rho_max = 3 Upsilon  (Prop. 11)
    - gamma = sigma_noise sqrt(m / Upsilon) (sqrt(d) + sqrt(2 ln(2n/alpha)))  (Prop. 11)

    Noise scale. The Gaussian mechanism of App. A.1 (variance
    2 GS^2 ln(2/delta0) / epsilon0^2) with sensitivity Ltilde^2 and the
    per-node target (epsilon / sqrt(8 m ln(2/delta)), delta/2) gives exactly
    sigma^2 = 16 m Ltilde^4 ln(4/delta) ln(2/delta) / epsilon^2. The paper
    writes ln(4/delta)^2, a slight over-estimate; this function implements
    the paper's ln(4/delta)^2.

    Why the sensitivity is Ltilde^2. Changing one row from v to v' (Def. 1)
    changes a node's sum by Delta = v v^T - v' v'^T with
    ||Delta||_F^2 = ||v||^4 + ||v'||^4 - 2 <v, v'>^2 <= 2 Ltilde^4.
    The symmetrized noise has variance sigma^2 off the diagonal and
    2 sigma^2 on it, so the mechanism is a Gaussian mechanism on the upper
    triangle with effective sensitivity ||Delta||_F / sqrt(2) <= Ltilde^2.

    Guarantee. Each node is then (Ltilde^4 / (2 sigma^2))-zCDP and each row
    lies in m nodes, so the tree is rho-zCDP with
    rho = m Ltilde^4 / (2 sigma^2) = epsilon^2 / (32 ln(4/delta)^2)
    (Bun & Steinke 2016, Prop. 1.6 and Lemma 2.3; the paper's footnote 5),
    which implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP. That epsilon
    is checked to be <= ``epsilon`` (it is far below it: 0.148 for
    epsilon = 1, delta = 0.1); Claim 7 turns it into joint DP.

    General shift (App. D.3 sweep). ``shift=c`` (a float) adds c I instead of
    2 Upsilon I. The same derivation as Prop. 11 gives, on the same event
    ||noise block|| <= Upsilon: rho_min = c - Upsilon, rho_max = c + Upsilon,
    and ||h_t||_{H_t^-1} <= ||h_t|| / sqrt(rho_min) with
    ||h_t|| <= sigma sqrt(m) (sqrt(d) + sqrt(2 ln(2n/alpha))) (Claim 17), so
    gamma = sigma sqrt(m / rho_min) (sqrt(d) + sqrt(2 ln(2n/alpha))).
    It needs c > Upsilon; c = 2 Upsilon gives Prop. 11 exactly.

    Tight calibration (``calibration="tight"``). The same mechanism with the
    smallest sigma that meets (epsilon, delta) under exact accounting of the
    whole tree: :func:`dpbandits.privacy.tree.gaussian_tree_sigma` with
    whitened sensitivity Ltilde^2 (replacement of one row, derived above) and
    tree_levels(n) = floor(log2 n) + 1 nodes per row, i.e.
    sigma = sqrt(levels) Ltilde^2 / mu*(epsilon, delta) with mu* the largest
    mu of a Gaussian mechanism meeting (epsilon, delta) (Balle & Wang 2018).
    Upsilon, the shift, rho_min, rho_max and gamma are then recomputed from
    that sigma by the formulas above (they only need the noise law), and the
    reported zCDP rho is levels Ltilde^4 / (2 sigma^2).

    ``shift``: ``True`` (2 Upsilon) or a finite float > Upsilon. ``False`` is
    refused: without a shift the noisy Gram matrix need not be positive
    definite, and the paper has no unshifted Gaussian variant (App. D.3).

    ``sampler="lattice"`` (the learners' default): each node draws the
    discrete Gaussian on the lattice of
    :func:`dpbandits.privacy.secure.lattice_gaussian` (off-diagonal
    variance sigma'^2, diagonal 2 sigma'^2, one draw per upper entry), the
    rows' Gram entries rounded to it; sigma' >= sigma keeps the whitened
    sensitivity-to-sigma ratio with the rounding allowance p g / sqrt(2)
    (p = d + 1), so the zCDP rho above holds (CKS 2020, Thm. 4); the tight
    calibration meets the exact curve at the delta of
    :func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
    for the tree_levels(n) p (p + 1) / 2 draws a row reaches. Upsilon,
    the shift, rho_min, rho_max and gamma are computed from sigma' (the
    discrete Gaussian is sigma'-subgaussian, CKS 2020 Cor. 23).

    ``counter="sqrt" | "blt"`` (with ``calibration="tight"`` only; not in
    the paper): M_t is released by a factorization counter
    (:mod:`dpbandits.privacy.factorization`). The whitened encoded stream
    C M is a Gaussian mechanism with sensitivity ||C||_col Ltilde^2, so
    sigma = ||C||_col Ltilde^2 / mu*(epsilon, delta) (the tree's
    sqrt(levels) replaced by the column norm, F1), and every release's
    noise is a symmetrized Gaussian of variance at most V sigma^2,
    V = max_t sum_{k<t} b_k^2 (F2), so Upsilon and gamma above hold with
    m replaced by V (they only use that the block is the sum of noise of
    total variance m sigma^2 per entry). Lattice sampler: the discrete
    Gaussian on round(C M) + Z, sigma' scaled by the rounding allowance
    (F4, whitened: 1.5 g p sqrt(n / 2)), calibrated at the delta of
    :func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
    for the n p (p + 1) / 2 draws a row reaches.
    Other arguments: see the module docstring.
    """
    d = positive_int("d", d)
    n = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    alpha = failure_probability(alpha, n)
    L = positive("L", L)
    B_tilde = positive("B_tilde", B_tilde)
    return shariff_sheffet_gaussian_checked(
        d, n, epsilon, delta, alpha, L, B_tilde, shift=shift, calibration=calibration, sampler=sampler,
        counter=counter,
    )


def shariff_sheffet_gaussian_checked(
    d: int, n: int, epsilon: float, delta: float, alpha: float, L: float, B_tilde: float, *,
    shift: bool | float, calibration: str, sampler: str, counter: str,
) -> GaussianCalibration:
    """:func:`shariff_sheffet_gaussian` on d, n, epsilon, delta, alpha, L and
    B_tilde that its caller validated at its own public boundary (integers
    >= 1, finite positive floats, delta and alpha in (0, 1)): the formulas,
    with the checks that depend on them (shift, calibration, sampler,
    counter), nothing checked twice."""
    if shift is False:
        raise ValueError(
            "invalid argument `shift`: the Gaussian mechanism has no unshifted variant "
            "(Shariff & Sheffet App. D.3): symmetric Gaussian noise can make the regularizer "
            "indefinite; pass True (2 Upsilon, Prop. 11) or a float > Upsilon"
        )

    m = tree_depth_checked(n)
    l_tilde_sq = _l_tilde_sq(L, B_tilde)  # Assumption 6
    if counter != "binary":
        return _factorized_gaussian(
            d, n, epsilon, delta, alpha, L, B_tilde, shift, calibration, sampler, counter, m, l_tilde_sq
        )
    if calibration == "paper":
        sigma = math.sqrt(16.0 * m * l_tilde_sq**2 * math.log(4.0 / delta) ** 2) / epsilon  # §4.2
    elif calibration == "tight":
        sigma = gaussian_tree_sigma_checked(n, epsilon, delta, l_tilde_sq)
        if sampler == "lattice":
            # Reserve the discreteness allowance (the lattice sigma in steps
            # only grows when delta shrinks, so the first one bounds it).
            p = d + 1
            # Halved: a sigma that crosses a power of two changes the exponent.
            steps = math.ldexp(sigma, capped_lattice_exponent(sigma, n * l_tilde_sq)) / 2.0
            budget, _ = lattice_gaussian_calibration_delta_checked(
                epsilon, delta, n.bit_length() * p * (p + 1) // 2, steps
            )
            sigma = gaussian_tree_sigma_checked(n, epsilon, budget, l_tilde_sq)
    else:
        raise ValueError(f"invalid argument `calibration`: must be 'paper' or 'tight', got {calibration!r}")
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    # The privacy accounting below is that of the continuous sigma; the
    # lattice sigma' is at least as private (see the docstring).
    accounted_sigma = sigma
    lattice_exponent = None
    if sampler == "lattice":
        lattice = lattice_gaussian(
            sigma, l_tilde_sq, dim=(d + 1) ** 2 / 2.0, kind="symmetric_gaussian", sum_bound=n * l_tilde_sq
        )
        sigma, lattice_exponent = lattice.scale, lattice.exponent
    upsilon, c, rho_min, rho_max, gamma = _prop11_bounds(sigma, m, d, n, alpha, shift)

    if calibration == "paper":
        node_epsilon = tree_node_epsilon_checked(epsilon, delta, m)
    else:
        # What the tight sigma makes each node: a Gaussian mechanism with
        # mu = Ltilde^2 / sigma, whose epsilon at delta/2 is reported (the
        # paper's epsilon / sqrt(8 m ln(2/delta)) is not what is targeted).
        from dpbandits.privacy.analytic_gaussian import gaussian_epsilon_checked

        node_epsilon = gaussian_epsilon_checked(l_tilde_sq / accounted_sigma, delta / 2.0)
    nodes_per_row = m if calibration == "paper" else tree_levels(n)
    zcdp_rho = nodes_per_row * l_tilde_sq**2 / (2.0 * accounted_sigma**2)  # footnote 5
    implied = zcdp_to_dp_epsilon(zcdp_rho, delta)
    if calibration == "paper" and implied > epsilon:
        raise ValueError(
            f"invalid argument `epsilon`: the paper's sigma gives a {zcdp_rho!r}-zCDP tree, "
            f"which only implies ({implied!r}, {delta!r})-DP, more than epsilon = {epsilon!r}"
        )
    return GaussianCalibration(
        d=d, horizon=n, epsilon=epsilon, delta=delta, alpha=alpha, L=L, B_tilde=B_tilde,
        m=m, L_tilde=math.sqrt(l_tilde_sq),
        node_epsilon=node_epsilon, node_delta=delta / 2.0,
        sigma=sigma, upsilon=upsilon, shift=c, rho_min=rho_min, rho_max=rho_max, gamma=gamma,
        zcdp_rho=zcdp_rho, calibration=calibration, sampler=sampler, lattice_exponent=lattice_exponent,
        release_variance=float(m),
    )


def _prop11_bounds(
    sigma: float, variance: float, d: int, n: int, alpha: float, shift: bool | float
) -> tuple[float, float, float, float, float]:
    """(Upsilon, c, rho_min, rho_max, gamma) of the shifted Gaussian release
    noise (§4.2 and Prop. 11).

    ``variance`` is the release noise variance per entry in units of
    sigma^2: the tree depth m for the binary tree, V = max_t sum_{k<t} b_k^2
    for a factorization counter (the bounds only use that total variance).
    ``shift`` is ``True`` (c = 2 Upsilon) or a float c > Upsilon (checked
    here, ValueError otherwise; see :func:`shariff_sheffet_gaussian`).
    """
    log_2n_alpha = math.log(2.0 * n / alpha)
    upsilon = sigma * math.sqrt(2.0 * variance) * (4.0 * math.sqrt(d) + 2.0 * log_2n_alpha)  # §4.2
    if shift is True:
        c = 2.0 * upsilon  # Prop. 11
    else:
        c = positive("shift", shift)
        if not c > upsilon:
            raise ValueError(
                f"invalid argument `shift`: must exceed Upsilon = {upsilon!r} so that "
                f"rho_min = shift - Upsilon > 0, got {shift!r}"
            )
    rho_min = c - upsilon
    rho_max = c + upsilon
    gamma = sigma * math.sqrt(variance / rho_min) * (math.sqrt(d) + math.sqrt(2.0 * log_2n_alpha))  # Prop. 11
    return upsilon, c, rho_min, rho_max, gamma


def _factorized_gaussian(
    d: int, n: int, epsilon: float, delta: float, alpha: float, L: float, B_tilde: float, shift: bool | float,
    calibration: str, sampler: str, counter: str, m: int, l_tilde_sq: float,
) -> GaussianCalibration:
    """:func:`shariff_sheffet_gaussian` with a factorization counter (see there)."""
    from dpbandits.privacy.analytic_gaussian import gaussian_epsilon_checked
    from dpbandits.privacy.factorization import (
        counter_choice,
        factorization_gaussian_sigma_checked,
        max_column_norm,
        max_release_variance,
    )

    counter_choice(counter, "gaussian")
    if calibration != "tight":
        raise ValueError(
            f"invalid argument `calibration`: counter={counter!r} needs calibration='tight' (the paper's "
            "formula is the tree's)"
        )
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    p = d + 1
    norm = max_column_norm(counter, n)
    variance = max_release_variance(counter, n)
    sigma = factorization_gaussian_sigma_checked(counter, n, epsilon, delta, l_tilde_sq)
    lattice_exponent = None
    accounted_sigma = sigma
    if sampler == "lattice" and counter == "smooth-binary":
        # As the binary tree: inputs rounded to the lattice enter the nodes,
        # one row reaches H - w = norm^2 nodes of p (p + 1) / 2 coordinates.
        steps = math.ldexp(sigma, capped_lattice_exponent(sigma, n * l_tilde_sq)) / 2.0
        reached = round(norm * norm) * p * (p + 1) // 2
        budget, _ = lattice_gaussian_calibration_delta_checked(epsilon, delta, reached, steps)
        sigma = accounted_sigma = factorization_gaussian_sigma_checked(counter, n, epsilon, budget, l_tilde_sq)
        lattice = lattice_gaussian(
            sigma, l_tilde_sq, dim=(d + 1) ** 2 / 2.0, kind="symmetric_gaussian", sum_bound=n * l_tilde_sq
        )
        sigma, lattice_exponent = lattice.scale, lattice.exponent
    elif sampler == "lattice":
        steps = math.ldexp(sigma, capped_lattice_exponent(sigma, n * l_tilde_sq)) / 2.0
        budget, _ = lattice_gaussian_calibration_delta_checked(epsilon, delta, n * p * (p + 1) // 2, steps)
        sigma = accounted_sigma = factorization_gaussian_sigma_checked(counter, n, epsilon, budget, l_tilde_sq)
        # Whitened rounding allowance of the encoded stream (F4): each of the
        # n steps' symmetric p x p rounding error has entries <= 1.5 g,
        # whitened norm <= 1.5 g p / sqrt(2): dim = (1.5 p)^2 n / 2.
        lattice = lattice_gaussian(
            sigma, norm * l_tilde_sq, dim=1.125 * p * p * n, kind="symmetric_gaussian", sum_bound=n * l_tilde_sq
        )
        sigma, lattice_exponent = lattice.scale, lattice.exponent
    upsilon, c, rho_min, rho_max, gamma = _prop11_bounds(sigma, variance, d, n, alpha, shift)  # m -> V
    return GaussianCalibration(
        d=d, horizon=n, epsilon=epsilon, delta=delta, alpha=alpha, L=L, B_tilde=B_tilde,
        m=m, L_tilde=math.sqrt(l_tilde_sq),
        node_epsilon=gaussian_epsilon_checked(norm * l_tilde_sq / accounted_sigma, delta / 2.0), node_delta=delta / 2.0,
        sigma=sigma, upsilon=upsilon, shift=c, rho_min=rho_min, rho_max=rho_max, gamma=gamma,
        zcdp_rho=(norm * l_tilde_sq) ** 2 / (2.0 * accounted_sigma**2), calibration=calibration, sampler=sampler,
        lattice_exponent=lattice_exponent, counter=counter, release_variance=variance,
    )


# --------------------------------------------------------------------------
# §4.1: Wishart noise
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class WishartCalibration(_TreeCalibration):
    """Calibration of the tree-based mechanism with Wishart noise
    (Shariff & Sheffet §4.1, Thm 8, Eq. (4), Prop. 9). Build it with
    :func:`shariff_sheffet_wishart`.

    Attributes
    ----------
    d, horizon, epsilon, delta, alpha, L, B_tilde:
        The validated inputs (alpha resolved: 1/n by default).
    m:
        Tree depth 1 + ceil(log2 n).
    L_tilde:
        sqrt(L^2 + Btilde^2) (Assumption 6).
    node_epsilon, node_delta:
        (epsilon / sqrt(8 m ln(2/delta)), delta / (2m)), the per-node
        target of App. A.2.
    scale:
        Ltilde^2: each node adds W_{d+1}(scale * I, k). (Not Ltilde.)
    k:
        Degrees of freedom of each node's Wishart noise (Thm 8).
    shift:
        c that the learner SUBTRACTS from each release's top-left block:
        H'_t = H_t - c I. Eq. (4) for ``shift=True``, 0.0 for ``False``.
    rho_min, rho_max, gamma:
        (alpha/2n)-accurate bounds of Def. 3 for H'_t (Prop. 9).

    The bounds of Prop. 9 take the release noise to be W(Ltilde^2 I, m k),
    the sum of exactly m node draws. A tree release at round t sums
    popcount(t - 1) <= m nodes; with fewer draws the eigenvalues of H_t are
    far below rho_min + c and H_t - c I is indefinite. The learner must pad
    every release to exactly ``noise_terms`` = m Wishart(k) draws (padding
    is data-independent, so privacy is unchanged).
    """

    scale: float
    k: int
    shift: float

    @property
    def noise_terms(self) -> int:
        """Node draws each release must carry for Prop. 9 to hold: exactly m."""
        return self.m

    @property
    def noise(self) -> WishartNoise:
        """The per-node noise spec W_{d+1}(Ltilde^2 I, k) for the tree."""
        return WishartNoise(scale=self.scale, df=float(self.k))

    @property
    def guarantee(self) -> Guarantee:
        """(epsilon, delta)-joint DP of each user's row (x_t, y_t)."""
        return Guarantee(
            model="joint", epsilon=self.epsilon, delta=self.delta, protects=_PROTECTS,
            basis="Shariff & Sheffet 2018, Claim 7 + App. A.2 (tree-based mechanism, advanced "
                  "composition) + Thm 8 (Wishart)",
            calibration="paper",
        )


def wishart_degrees_of_freedom(d: int, m: int, epsilon: float, delta: float) -> int:
    """k = d + 1 + ceil(224 m epsilon^-2 ln(8m/delta) ln(2/delta))  (§4.1).

    Thm 8 (Sheffet 2015, Thm 4.1) with the per-node target of App. A.2,
    epsilon_0 = epsilon / sqrt(8 m ln(2/delta)) and delta_0 = delta/(2m):
    k_0 >= d + 1 + 28 epsilon_0^-2 ln(4/delta_0).

    ``d``, ``m`` integers >= 1; ``epsilon`` finite > 0; 0 < ``delta`` < 1.
    """
    d = positive_int("d", d)
    m = positive_int("m", m)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    return wishart_degrees_of_freedom_checked(d, m, epsilon, delta)


def wishart_degrees_of_freedom_checked(d: int, m: int, epsilon: float, delta: float) -> int:
    """:func:`wishart_degrees_of_freedom` on validated arguments (see
    :func:`dpbandits.privacy.tree.laplace_tree_scale_checked`); an overflow is still an error."""
    x = 224.0 * m * math.log(8.0 * m / delta) * math.log(2.0 / delta) / epsilon / epsilon
    return d + 1 + math.ceil(_finite_dof(x, epsilon))


def shariff_sheffet_wishart(
    d: int,
    horizon: int,
    epsilon: float,
    delta: float,
    alpha: float | None = None,
    L: float = 1.0,
    B_tilde: float = 1.0,
    shift: bool | float = True,
) -> WishartCalibration:
    """Noise and confidence bounds of JDP-LinUCB with Wishart noise.

    Shariff & Sheffet 2018, §4.1 (paper calibration, exactly). With
    a = sqrt(d) + sqrt(2 ln(8n/alpha)) and b = sqrt(d) + sqrt(2 ln(2n/alpha)):

    - each node adds W_{d+1}(Ltilde^2 I, k),
      k = d + 1 + ceil(224 m epsilon^-2 ln(8m/delta) ln(2/delta))  (Thm 8)
    - unshifted (``shift=False``), Prop. 9:
      rho_min = Ltilde^2 (sqrt(mk) - a)^2, rho_max = Ltilde^2 (sqrt(mk) + a)^2,
      gamma = Ltilde b
    - shifted by Eq. (4) (``shift=True``, the default):
      c = Ltilde^2 (sqrt(mk) - a)^2 - 4 Ltilde^2 sqrt(mk) a, and (Prop. 9)
      rho'_min = 4 Ltilde^2 sqrt(mk) a = rho_min - c, rho'_max = 2 rho'_min,
      gamma' = Ltilde sqrt(sqrt(mk) b)
    - any other shift ``shift=c`` (a finite float, App. D.3 sweep):
      rho_min = rho_min_unshifted - c (must be > 0),
      rho_max = rho_max_unshifted - c, and by Claim 20
      gamma = gamma_unshifted sqrt(rho_min_unshifted / rho_min) for c >= 0.
      For c < 0 (adding c I) Claim 20 does not apply; the same argument with
      H <= rho_max I gives (H + |c| I)^-1 <= (rho_max/(rho_max + |c|)) H^-1,
      so gamma = gamma_unshifted sqrt(rho_max_unshifted / rho_max).
      With the Eq. (4) value of c this is Claim 20's exact bound, which is
      smaller than the paper's gamma' (App. C relaxes it to gamma').

    Preconditions, each a ValueError: sqrt(mk) > a (Claim 19, needed for the
    eigenvalue bounds); epsilon_0 < 1 and delta_0 < 1/e (the range of
    Sheffet 2015, Thm 4.1, quoted as Thm 23); and the exact advanced
    composition of the m nodes, sqrt(2 m ln(2/delta)) epsilon_0 +
    m epsilon_0 (e^epsilon_0 - 1), must not exceed epsilon (App. A.2 states
    it only up to O(.)).

    ``shift``: ``True`` (Eq. (4)), ``False`` (no shift) or a finite float.
    Other arguments: see the module docstring. The release noise must carry
    exactly m node draws: see :class:`WishartCalibration`.
    """
    d = positive_int("d", d)
    n = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    alpha = failure_probability(alpha, n)
    L = positive("L", L)
    B_tilde = positive("B_tilde", B_tilde)
    return shariff_sheffet_wishart_checked(d, n, epsilon, delta, alpha, L, B_tilde, shift=shift)


def shariff_sheffet_wishart_checked(
    d: int, n: int, epsilon: float, delta: float, alpha: float, L: float, B_tilde: float, *, shift: bool | float
) -> WishartCalibration:
    """:func:`shariff_sheffet_wishart` on arguments its caller validated at
    its own public boundary (see :func:`shariff_sheffet_gaussian_checked`);
    ``shift`` is checked here, where it is used."""
    general_shift = None if isinstance(shift, bool) else _finite_real("shift", shift)

    m = tree_depth_checked(n)
    node_epsilon = tree_node_epsilon_checked(epsilon, delta, m)
    node_delta = delta / (2.0 * m)
    if not (node_epsilon < 1.0 and node_delta < math.exp(-1.0)):
        raise ValueError(
            f"invalid argument `epsilon`/`delta`: the per-node target (epsilon_0, delta_0) = "
            f"({node_epsilon!r}, {node_delta!r}) is outside the range epsilon_0 < 1, "
            f"delta_0 < 1/e of the Wishart mechanism (Sheffet 2015, Thm 4.1)"
        )
    composed = advanced_composition_epsilon(node_epsilon, m, delta / 2.0)
    if composed > epsilon:
        raise ValueError(
            f"invalid argument `epsilon`: advanced composition of the m = {m} nodes gives "
            f"epsilon' = {composed!r} > epsilon = {epsilon!r} (App. A.2); use a smaller epsilon"
        )

    l_tilde_sq = _l_tilde_sq(L, B_tilde)  # Assumption 6
    l_tilde = math.sqrt(l_tilde_sq)
    k = wishart_degrees_of_freedom_checked(d, m, epsilon, delta)
    sqrt_mk = math.sqrt(m * k)
    a = math.sqrt(d) + math.sqrt(2.0 * math.log(8.0 * n / alpha))
    b = math.sqrt(d) + math.sqrt(2.0 * math.log(2.0 * n / alpha))
    if not sqrt_mk > a:
        raise ValueError(
            f"invalid arguments: Claim 19 needs sqrt(m k) > sqrt(d) + sqrt(2 ln(8n/alpha)), "
            f"got sqrt(m k) = {sqrt_mk!r} <= {a!r} (d={d}, horizon={n}, alpha={alpha!r})"
        )

    # Prop. 9, unshifted
    rho_min_u = l_tilde_sq * (sqrt_mk - a) ** 2
    rho_max_u = l_tilde_sq * (sqrt_mk + a) ** 2
    gamma_u = l_tilde * b

    if shift is True:
        rho_min = 4.0 * l_tilde_sq * sqrt_mk * a  # Prop. 9, rho'_min
        c = rho_min_u - rho_min  # Eq. (4)
        rho_max = 8.0 * l_tilde_sq * sqrt_mk * a  # Prop. 9, rho'_max
        gamma = l_tilde * math.sqrt(sqrt_mk * b)  # Prop. 9, gamma'
    elif shift is False:
        c, rho_min, rho_max, gamma = 0.0, rho_min_u, rho_max_u, gamma_u
    else:
        assert general_shift is not None  # shift is a float here
        c = general_shift
        rho_min = rho_min_u - c
        rho_max = rho_max_u - c
        if not rho_min > 0.0:
            raise ValueError(
                f"invalid argument `shift`: must be below the unshifted rho_min = {rho_min_u!r} "
                f"so that rho_min = rho_min_unshifted - shift > 0, got {shift!r}"
            )
        ratio = rho_min_u / rho_min if c >= 0.0 else rho_max_u / rho_max  # Claim 20
        gamma = gamma_u * math.sqrt(ratio)

    return WishartCalibration(
        d=d, horizon=n, epsilon=epsilon, delta=delta, alpha=alpha, L=L, B_tilde=B_tilde,
        m=m, L_tilde=l_tilde, node_epsilon=node_epsilon, node_delta=node_delta,
        scale=l_tilde_sq, k=k, shift=c, rho_min=rho_min, rho_max=rho_max, gamma=gamma,
    )


def wishart_node_degrees_of_freedom(d: int, epsilon: float, delta: float) -> int:
    """k_0 = d + 1 + ceil(28 epsilon_0^-2 ln(4/delta_0)): the degrees of freedom
    for which one Wishart node W_{d+1}(Ltilde^2 I, k_0) added to the Gram
    matrix of rows of norm <= Ltilde is (epsilon_0, delta_0)-DP with respect
    to changing one row (Shariff & Sheffet Thm 8, from Sheffet 2015
    Thm 4.1; App. Thm 23 states it for epsilon_0 < 1 and delta_0 < 1/e).
    :func:`wishart_degrees_of_freedom` is this with the per-node target of
    App. A.2. Used by the empirical audit of a single node.

    ``d`` integer >= 1; ``epsilon`` finite > 0; 0 < ``delta`` < 1.
    """
    d = positive_int("d", d)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    return d + 1 + math.ceil(_finite_dof(28.0 * math.log(4.0 / delta) / epsilon / epsilon, epsilon))


def _finite_dof(x: float, epsilon: float) -> float:
    """``x``, or ValueError naming epsilon when it overflowed (a tiny
    epsilon such as 1e-271 gives inf, and ceil would raise a bare
    OverflowError)."""
    if not math.isfinite(x):
        raise ValueError(f"invalid argument `epsilon`: {epsilon!r} is too small (the degrees of freedom overflow)")
    return x
