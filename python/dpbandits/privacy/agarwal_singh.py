"""Calibration of Agarwal & Singh, "The Price of Differential Privacy for
Online Learning", ICML 2017: every noise scale, step size and mixing
coefficient of the private online learners, each formula once.

Conventions (stated once, used everywhere below):

- ``log T`` in a tree count is log2 (TreeBasedAgg, Alg. 2, pads every
  release to ceil(log2 T) draws); every other logarithm (regret tuning,
  log N of exponential weights, log(log T / delta)) is natural.
- Loss sets (§2): experts and multi-armed bandits take losses in [0, 1]^N;
  the ball takes ||l||_2 <= 1; the cube ||l||_1 <= 1. Neighbouring loss
  sequences differ in one whole loss vector (Def. 2.1), so the L1
  sensitivity of a prefix sum is max ||l - l'||_1 over the loss set: N for
  [0, 1]^N, 2 sqrt(N) for the ball, 2 for the cube. The paper uses
  ||Y||_1 (N, sqrt(N), 1): right for [0, 1]^N, a factor 2 short for the
  symmetric sets (two losses of the set can differ by twice its radius).
- The paper's tree calibration (Lemma 3.3) counts log2 T noisy nodes per
  leaf; a leaf reaches floor(log2 T) + 1 of them
  (:func:`dpbandits.privacy.tree.tree_levels`).

Hence two calibrations: ``"paper"`` (the published formula, exactly; the
guarantee reports the epsilon it truly meets) and ``"tight"`` (the exact
sensitivity and node count: the guarantee is the requested epsilon).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.discrete_gaussian import lattice_gaussian_calibration_delta_checked
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import LatticeNoise, capped_lattice_exponent, lattice_gaussian
from dpbandits.privacy.tree import gaussian_tree_sigma, tree_levels

__all__ = [
    "PROTECTS",
    "Geometry",
    "LaplaceCalibration",
    "exp2_parameters",
    "ftpl_sigma",
    "ftrl_eta",
    "ftrl_laplace_scale",
    "loss_sensitivity_l1",
    "loss_sensitivity_l2",
    "loss_set_l1_norm",
    "loss_set_l2_norm",
    "scrible_parameters",
    "scrible_regret_bound",
]

Geometry = Literal["simplex", "ball", "cube"]
"""Decision set of an online learner: the simplex (experts), the unit ball or the unit cube."""
Calibration = Literal["paper", "tight"]

PROTECTS = "the loss sequence (one round's loss vector)"
"""What the online learners' guarantees protect (Def. 2.1's neighbouring loss sequences)."""
_GEOMETRIES = ("simplex", "ball", "cube")


def _geometry(geometry: str) -> str:
    if geometry not in _GEOMETRIES:
        raise ValueError(f"invalid argument `geometry`: must be one of {_GEOMETRIES}, got {geometry!r}")
    return geometry


def _calibration(calibration: str) -> str:
    if calibration not in ("paper", "tight"):
        raise ValueError(f"invalid argument `calibration`: must be 'paper' or 'tight', got {calibration!r}")
    return calibration


def loss_set_l1_norm(geometry: Geometry, n: int) -> float:
    """||Y||_1 = max ||l||_1 over the loss set (§2 notation): N for the
    simplex's losses (||l||_inf <= 1), sqrt(N) for the ball's (||l||_2 <= 1),
    1 for the cube's (||l||_1 <= 1); the lambda of Cor. 3.2 is ||Y||_1 log T / eps."""
    g, n = _geometry(geometry), positive_int("n", n)
    return {"simplex": float(n), "ball": math.sqrt(n), "cube": 1.0}[g]


def loss_set_l2_norm(geometry: Geometry, n: int) -> float:
    """||Y||_2 = max ||l||_2 over the loss set (Thm 3.5): sqrt(N) for [0, 1]^N,
    1 for the ball and for the cube (||l||_2 <= ||l||_1 <= 1)."""
    g, n = _geometry(geometry), positive_int("n", n)
    return {"simplex": math.sqrt(n), "ball": 1.0, "cube": 1.0}[g]


def loss_sensitivity_l1(geometry: Geometry, n: int) -> float:
    """max ||l - l'||_1 over two losses of the set: N ([0, 1]^N), 2 sqrt(N)
    (ball: ||l - l'||_1 <= sqrt(N) ||l - l'||_2 <= 2 sqrt(N)), 2 (cube)."""
    g, n = _geometry(geometry), positive_int("n", n)
    return {"simplex": float(n), "ball": 2.0 * math.sqrt(n), "cube": 2.0}[g]


def loss_sensitivity_l2(geometry: Geometry, n: int) -> float:
    """max ||l - l'||_2 over two losses of the set: sqrt(N) ([0, 1]^N), 2 (ball, cube)."""
    g, n = _geometry(geometry), positive_int("n", n)
    return {"simplex": math.sqrt(n), "ball": 2.0, "cube": 2.0}[g]


@dataclass(frozen=True)
class LaplaceCalibration:
    """Laplace scale ``scale`` of a private learner and the guarantee it meets."""

    scale: float
    guarantee: Guarantee


def ftrl_laplace_scale(
    geometry: Geometry, n: int, horizon: int, epsilon: float, calibration: Calibration = "tight",
    counter: str = "binary",
) -> LaplaceCalibration:
    """Laplace scale lambda of every draw of TreeBasedAgg for private FTRL.

    - ``"paper"``: Cor. 3.2 (from Thm 3.1 / Lemma 3.3),
      lambda = ||Y||_1 log2 T / epsilon: N log T / eps (experts),
      sqrt(N) log T / eps (sphere), log T / eps (cube).
    - ``"tight"``: lambda = Delta_1 * (floor(log2 T) + 1) / epsilon with
      Delta_1 = :func:`loss_sensitivity_l1`: pure DP composes over the
      tree_levels(T) noisy nodes one loss vector reaches, each moving by at
      most Delta_1 in L1.

    Padding draws and L~_0 (Alg. 1 lines 2-3) are data-independent and cost
    nothing. The guarantee reports the epsilon actually met,
    Delta_1 * tree_levels(T) / lambda (pure, central DP of the loss
    sequence). ``horizon`` >= 2 for "paper" (log2 1 = 0).

    ``counter="smooth-binary"`` (``"tight"`` only; not in the paper): the
    prefix sums come from the smooth binary mechanism
    (:mod:`dpbandits.privacy.smooth_binary`), whose releases all sum w
    draws (identically distributed, as Alg. 2 asks, without padding) and
    whose nodes a loss vector reaches number H - w (its L1 column norm):
    lambda = Delta_1 (H - w) / epsilon.
    """
    from dpbandits.privacy.factorization import counter_choice

    n = positive_int("n", n)
    T = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    sensitivity = loss_sensitivity_l1(geometry, n)
    levels = tree_levels(T)
    if counter_choice(counter, "laplace") != "binary":
        from dpbandits.privacy.smooth_binary import smooth_binary_column_norm

        if _calibration(calibration) != "tight":
            raise ValueError(
                f"invalid argument `calibration`: counter={counter!r} needs calibration='tight' (the paper's "
                "formula is the tree's)"
            )
        levels = round(smooth_binary_column_norm(T, "laplace"))
    if _calibration(calibration) == "paper":
        if T < 2:
            raise ValueError("invalid argument `horizon`: the paper's log2(T) is 0 for T = 1")
        scale = loss_set_l1_norm(geometry, n) * math.log2(T) / epsilon
    else:
        scale = sensitivity * levels / epsilon
    met = sensitivity * levels / scale
    basis = "Agarwal & Singh 2017, Thm 3.1 / Cor. 3.2 (Laplace tree, Lemma 3.3)"
    if counter != "binary":
        basis += ("; prefix sums by the smooth binary mechanism (Andersson & Pagh 2023), L1 column norm H - w "
                  "(dpbandits.privacy.smooth_binary)")
    return LaplaceCalibration(
        scale=scale,
        guarantee=Guarantee("central", met, 0.0, protects=PROTECTS, basis=basis, calibration=calibration),
    )


def ftrl_eta(geometry: Geometry, n: int, horizon: int) -> float:
    """The eta that minimizes the Thm 3.1 / 3.4 bound.

    Thm 3.4's proof bounds the regret by eta sum_t max_x (||l_t||*_{grad^2 R(x)})^2
    + D_R / eta + D_Z (Eq. (2), (4)); with G^2 the largest squared dual norm
    the minimizer is eta = sqrt(D_R / (T G^2)), which does not depend on the
    noise (it enters only through D_Z). Per geometry (Cor. 3.2):

    - simplex, R = sum x log x: D_R = log N; grad^2 R = diag(1/x), so
      ||l||*^2 = sum_i x_i l_i^2 <= ||l||_inf^2 = 1: eta = sqrt(log N / T);
    - ball, R = ||x||^2: D_R = 1; grad^2 R = 2 I, ||l||*^2 = ||l||_2^2 / 2 <= 1/2:
      eta = sqrt(2 / T);
    - cube, R = ||x||^2: D_R = N; ||l||*^2 = ||l||_2^2 / 2 <= ||l||_1^2 / 2 <= 1/2:
      eta = sqrt(2 N / T).

    ``n`` >= 2 for the simplex (log 1 = 0), ``horizon`` >= 1.
    """
    g = _geometry(geometry)
    n = positive_int("n", n, minimum=2 if g == "simplex" else 1)
    T = positive_int("horizon", horizon)
    d_r, g2 = {"simplex": (math.log(n), 1.0), "ball": (1.0, 0.5), "cube": (float(n), 0.5)}[g]
    return math.sqrt(d_r / (T * g2))


def ftpl_sigma(
    geometry: Geometry,
    n: int,
    horizon: int,
    epsilon: float | None,
    delta: float | None = None,
    calibration: Calibration = "tight",
    sampler: str = "float",
    counter: str = "binary",
) -> tuple[float | LatticeNoise, Guarantee]:
    """Gaussian sigma of every draw of TreeBasedAgg for private FTPL (Thm 3.5).

    sigma = max{ ||Y||_2 sqrt(T / (sqrt(N) log T)),  privacy term }: the first
    term is the regret-optimal perturbation (Thm 3.5's proof, Abernethy et
    al. 2014 Cor. 4 / Lemma 13), the second makes the tree
    (epsilon, delta)-DP:

    - ``"paper"``: ||Y||_2 log2 T log(log2 T / delta) / epsilon (Thm A.1;
      Thm 3.5 writes sqrt(N) for ||Y||_2). It is used only when it meets
      (epsilon, delta) under exact accounting (otherwise ValueError);
    - ``"tight"``: :func:`dpbandits.privacy.tree.gaussian_tree_sigma`
      with L2 sensitivity :func:`loss_sensitivity_l2`: the exact Gaussian
      mechanism over the tree_levels(T) nodes a loss vector reaches.

    ``epsilon=None``: non-private FTPL, sigma is the regret term alone.
    Returns (sigma, guarantee). ``horizon`` >= 2 (log T > 0).

    ``sampler="lattice"``: the noise is the discrete Gaussian of
    :func:`dpbandits.privacy.secure.lattice_gaussian` (sigma, rounding
    allowance), returned as its :class:`~dpbandits.privacy.secure.LatticeNoise`
    (integer steps and lattice exponent) in place of sigma; the exact accounting then meets the continuous
    curve at the delta of
    :func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
    for the tree_levels(T) N coordinates a loss vector reaches (T N for the
    Toeplitz encoders).

    ``counter`` (``"tight"`` only for other than ``"binary"``; not in the
    paper): ``"smooth-binary"``, ``"sqrt"`` or ``"blt"`` release the prefix
    sums by that counter (:mod:`dpbandits.privacy.factorization`): the
    privacy term is its column norm times Delta_2 over mu*(epsilon, delta)
    (coordinates reached: (H - w) N for smooth binary, T N for the Toeplitz
    encoders), and the regret term is rescaled by sqrt(log2 T / V), V the
    counter's largest release variance in draws, so that the released
    perturbation's size stays the paper's.
    """
    from dpbandits.privacy.factorization import (
        counter_choice,
        factorization_gaussian_sigma,
        max_column_norm,
        max_release_variance,
    )

    n = positive_int("n", n)
    T = positive_int("horizon", horizon, minimum=2)
    counter = counter_choice(counter, "gaussian")
    y2 = loss_set_l2_norm(geometry, n)
    log_t = math.log2(T)
    regret_term = y2 * math.sqrt(T / (math.sqrt(n) * log_t))
    if counter != "binary":
        regret_term *= math.sqrt(log_t / max_release_variance(counter, T))
    if epsilon is None:
        return regret_term, Guarantee.none("non-private FTPL (Agarwal & Singh 2017, Alg. 3)")
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", 0.0 if delta is None else delta)
    sens = loss_sensitivity_l2(geometry, n)

    def privacy_sigma(budget: float) -> float:
        if counter == "binary":
            return gaussian_tree_sigma(T, epsilon, budget, sens, calibration="tight")
        return factorization_gaussian_sigma(counter, T, epsilon, budget, sens)

    needed = privacy_sigma(delta)
    if sampler == "lattice":
        # Reserve the discreteness allowance; halved steps: a sigma that
        # crosses a power of two changes the lattice exponent.
        steps = math.ldexp(needed, capped_lattice_exponent(needed, float(T))) / 2.0
        reached = {"binary": tree_levels(T), "smooth-binary": round(max_column_norm(counter, T) ** 2)}.get(counter, T)
        budget, _ = lattice_gaussian_calibration_delta_checked(epsilon, delta, reached * n, steps)
        needed = privacy_sigma(budget)
    if counter != "binary" and _calibration(calibration) != "tight":
        raise ValueError(
            f"invalid argument `calibration`: counter={counter!r} needs calibration='tight' (the paper's "
            "formula is the tree's)"
        )
    if _calibration(calibration) == "paper":
        privacy_term = y2 * log_t * math.log(log_t / delta) / epsilon
        if privacy_term < needed:
            raise ValueError(
                f"invalid argument `calibration`: the paper's sigma {privacy_term:.4g} is below the "
                f"{needed:.4g} that (epsilon, delta) = ({epsilon}, {delta}) needs under exact accounting; "
                "use calibration='tight'"
            )
    else:
        privacy_term = needed
    basis = "Agarwal & Singh 2017, Thm 3.5 / Thm A.1 (Gaussian tree)"
    if counter != "binary":
        basis += (f"; prefix sums by the {counter!r} counter instead of the tree, sensitivity = its max column "
                  "norm x Delta_2 (dpbandits.privacy.factorization); exact Gaussian accounting")
    guarantee = Guarantee("central", epsilon, delta, protects=PROTECTS, basis=basis, calibration=calibration,
                          sampler=sampler)  # type: ignore[arg-type]
    if sampler == "lattice":
        return _ftpl_lattice_noise(geometry, n, T, counter, max(regret_term, privacy_term), privacy_term), guarantee
    return max(regret_term, privacy_term), guarantee


def _ftpl_lattice_noise(
    geometry: Geometry, n: int, horizon: int, counter: str, sigma: float, privacy_sigma: float
) -> LatticeNoise:
    """The discrete Gaussian replacing N(0, ``sigma``^2) node noise, inputs
    rounded to the lattice (:func:`dpbandits.privacy.secure.lattice_gaussian`).

    Privacy needs sigma' / (Delta + r) >= privacy_sigma / Delta, r the
    rounding allowance: sigma' >= privacy_sigma (1 + r / Delta). The
    regret term may already exceed that, so the allowance is charged
    against the privacy term only: lattice_gaussian with sensitivity
    Delta sigma / privacy_sigma gives sigma' = sigma + privacy_sigma r / Delta.
    For the Toeplitz encoders (``"sqrt"``, ``"blt"``) Delta is the column
    norm times Delta_2 and r is 1.5 g per coordinate of the T n encoded
    entries (F4 of :mod:`dpbandits.privacy.factorization`).
    """
    from dpbandits.privacy.factorization import max_column_norm

    sens, dim = loss_sensitivity_l2(geometry, n), float(n)
    if counter in ("sqrt", "blt"):
        sens, dim = sens * max_column_norm(counter, horizon), 2.25 * horizon * n
    return lattice_gaussian(sigma, sens * (sigma / privacy_sigma), dim=dim, sum_bound=float(horizon))


@dataclass(frozen=True)
class BanditParameters:
    """Noise scale lambda (0: non-private), step eta, mixing gamma and the guarantee."""

    scale: float
    eta: float
    gamma: float
    guarantee: Guarantee


def exp2_parameters(n: int, horizon: int, epsilon: float | None) -> BanditParameters:
    """Thm 4.1: lambda = 1/epsilon (Lemma 4.2 with B = 1: with losses in
    [0, 1] and plays x = e_i, |<l - l', e_i>| <= 1),
    eta = sqrt(log N / (2 N T (1 + 2 lambda^2 log(NT)))),
    gamma = eta N sqrt(1 + 2 lambda^2 log(NT)), mu uniform.

    ``epsilon=None``: the non-private EXP2 (lambda = 0). gamma simplifies to
    sqrt(N log N / (2 T)) whatever lambda; it must be <= 1, so T >= N log N / 2
    (the theorem's "T sufficiently large"): ValueError otherwise.
    ``n`` >= 2.
    """
    n = positive_int("n", n, minimum=2)
    T = positive_int("horizon", horizon)
    lam = 0.0 if epsilon is None else 1.0 / positive("epsilon", epsilon)
    spread = 1.0 + 2.0 * lam**2 * math.log(n * T)
    eta = math.sqrt(math.log(n) / (2.0 * n * T * spread))
    gamma = eta * n * math.sqrt(spread)
    if gamma > 1.0:
        raise ValueError(
            f"invalid argument `horizon`: Thm 4.1's gamma = sqrt(N log N / (2T)) = {gamma:.3g} exceeds 1; "
            f"need horizon >= N log N / 2 = {n * math.log(n) / 2:.3g}"
        )
    if epsilon is None:
        guarantee = Guarantee.none("non-private EXP2 with exploration (Agarwal & Singh 2017, Alg. 5)")
    else:
        guarantee = Guarantee(
            "central", epsilon, 0.0, protects=PROTECTS,
            basis="Agarwal & Singh 2017, Thm 4.1 / Lemma 4.2 (Alg. 4 reduction)", calibration="paper",
        )
    return BanditParameters(scale=lam, eta=eta, gamma=gamma, guarantee=guarantee)


def scrible_parameters(
    n: int, horizon: int, epsilon: float | None, calibration: Calibration = "tight"
) -> BanditParameters:
    """Thm 4.5 for SCRiBLe over the unit ball, losses ||l||_2 <= 1.

    lambda: ``"paper"`` ||Y||_1 / epsilon = sqrt(N) / epsilon; ``"tight"``
    max ||l - l'||_1 / epsilon = 2 sqrt(N) / epsilon (Lemma 4.2: the fictitious
    loss moves by |<l - l', y>| / ||y||_inf <= ||l - l'||_1). The guarantee
    reports the epsilon met, 2 sqrt(N) / lambda.
    eta = sqrt(nu log T / (2 N^2 T (M^2 + lambda^2 N ||X||_2^2))) with nu = 1
    (barrier -log(1 - ||x||^2)), M = max |<l, x>| = 1 and ||X||_2 = 1.
    ``epsilon=None``: non-private SCRiBLe (lambda = 0). ``horizon`` >= 2.
    """
    n = positive_int("n", n)
    T = positive_int("horizon", horizon, minimum=2)
    nu, m, x2 = 1.0, 1.0, 1.0
    if epsilon is None:
        lam = 0.0
        guarantee = Guarantee.none("non-private SCRiBLe (Abernethy, Hazan & Rakhlin 2012)")
    else:
        epsilon = positive("epsilon", epsilon)
        sensitivity = 2.0 * math.sqrt(n)
        norm = loss_set_l1_norm("ball", n) if _calibration(calibration) == "paper" else sensitivity
        lam = norm / epsilon
        guarantee = Guarantee(
            "central", sensitivity / lam, 0.0, protects=PROTECTS,
            basis="Agarwal & Singh 2017, Thm 4.5 / Lemma 4.2 (Alg. 4 reduction); the forwarded value "
                  "<l_t + Z_t, y_t> mixes the noise with the played point, so it has no exact lattice form here",
            calibration=calibration,
        )
    eta = math.sqrt(nu * math.log(T) / (2.0 * n**2 * T * (m**2 + lam**2 * n * x2**2)))
    return BanditParameters(scale=lam, eta=eta, gamma=0.0, guarantee=guarantee)


def scrible_regret_bound(n: int, horizon: int, epsilon: float | None, calibration: Calibration = "tight") -> float:
    """Thm 4.5's regret bound for private SCRiBLe over the unit ball, explicit.

    Thm 4.5 states only O(sqrt(T log T) sqrt(N^2 nu (M^2 + N ||X||_2^2
    ||Y||_1^2 / eps^2))). Its proof (App. D, last two lines before the O)
    gives, on the event F-bar that every ||Z_t||_2^2 < 10 lambda^2 N
    log^2(NT),

        E[Regret | F-bar] <= 2 eta T N^2 (M^2 + lambda^2 N ||X||_2^2)
                             + nu log(T) / eta + 8 lambda ||X||_2 sqrt(N) log(NT) + 2M,

    and E[Regret] <= E[Regret | F-bar] + P(F) T with P(F) <= 1/T (Eq. (9)),
    so + 1. With the theorem's eta (:func:`scrible_parameters`) the first
    two terms are equal, each sqrt(2 nu N^2 T log T (M^2 + lambda^2 N
    ||X||_2^2)). Evaluated with nu = 1, M = 1, ||X||_2 = 1 and the lambda of
    the learner's ``calibration`` (natural logarithms; the proof's
    sqrt(log^2 NT) is log NT). ``epsilon=None``: lambda = 0, the non-private
    SCRiBLe's bound from the same lines (Abernethy, Hazan & Rakhlin 2012,
    Thm 5.1 as restated in Thm D.1). ``n`` >= 1, ``horizon`` >= 2.

    >>> round(scrible_regret_bound(3, 100, None), 6)   # 2 sqrt(2 * 9 * 100 ln 100) + 2 + 1
    185.091256
    """
    p = scrible_parameters(n, horizon, epsilon, calibration)
    T, lam, eta = positive_int("horizon", horizon, minimum=2), p.scale, p.eta
    nu, m, x2 = 1.0, 1.0, 1.0
    spread = m**2 + lam**2 * n * x2**2
    return (2.0 * eta * T * n**2 * spread + nu * math.log(T) / eta
            + 8.0 * lam * x2 * math.sqrt(n) * math.log(n * T) + 2.0 * m + 1.0)
