"""Noise and confidence constants of the batched information-weighted
logistic UCB, jointly private and locally private.

Source: Chen, Li, Rakhlin & Simchi-Levi, "Near-optimal private learning in
linear contextual bandits", arXiv 2502.13115 (2025). The reachable text is
the abstract: a re-weighted regression gives regret of order
sqrt(T) + 1/alpha under joint alpha-privacy and sqrt(T)/alpha under local
privacy, for generalized linear contextual bandits. Their algorithm, its
GLM estimator and their constants were not reachable. What follows is a
reconstruction with its own privacy proof, verified by an exact
sensitivity computation and an audit on exact released values
(tests/test_reweighted_glm.py, tests/test_audit_reweighted_glm.py). The
linear counterpart is :mod:`dpbandits.privacy.reweighted`, whose helpers
(epoch count, chi and operator-norm bounds) this module reuses.

The reconstructed mechanism (``rust/src/policy/reweighted_glm.rs``):

1. Epochs of n_0, 2 n_0, ... recorded rewards y in [0, 1]; the policy of
   epoch k is fixed at its start from released values: the pilot
   theta_k, H_k = L L^T and gamma_k = c d / n_k.
2. One private Newton step per epoch (a one-step estimator of the
   logistic maximum-likelihood estimate from the pilot). Row x gets
   p = mu(<x, theta_k>), q = 4 p (1 - p) in (0, 1], w = min(1, gamma_k /
   ||L^-1 x||^2) and u = sqrt(w / gamma_k) L^-1 x (||u|| <= 1); its
   contribution is (upper triangle of q u u^T, s u) with s = sqrt(w)
   (y - p), |s| <= 1: m = d (d + 1) / 2 + d entries (the weighted
   Hessian and gradient of the log-likelihood at the pilot, whitened).
3. Joint model: the epoch's sums plus i.i.d. N(0, sigma^2) on every entry,
   released once. Each reward enters one epoch, so each user's data meets
   one Gaussian mechanism; later epochs use it only through the release
   (post-processing) and the other users' data. Every action shown to
   another user is a function of the releases and that user's own
   context, so the learner is (epsilon, delta)-jointly DP (billboard
   lemma: Hsu, Huang, Roth, Roughgarden & Wu 2014, Lemma 9; Shariff &
   Sheffet 2018, Claim 7).
   Local model: each user's contribution plus its own i.i.d.
   N(0, sigma^2) noise is the user's report (the Gaussian mechanism on one
   input: any two inputs of a user give contributions within Delta), and
   the epoch's release is the sum of the reports. The policy a user plays
   is computed from released values and the user's own context, so the
   server sees only the report: (epsilon, delta)-local DP of each user's
   context and reward (sequentially interactive).
4. From the release: V = gamma A + rho I with rho = gamma (c_r + op), op
   the noise matrix's operator-norm bound (a damped Newton step: V >=
   gamma A + gamma c_r I on that event; a release whose V does not factor
   keeps the previous estimate), the Newton
   step theta_{k+1} = Pi_S(theta_k + 4 L^-T V^-1 sqrt(gamma) b), the
   Fisher information Lambda_{k+1} = L V L^T / 4, and the UCB
   <theta, x> + beta ||x||_{Lambda^-1}; H_{k+1} = 2 L V L^T.

Sensitivity (:func:`glm_sensitivity`, exact bound). For two contributions
with (a, q, s) and (a', q', s'), ||a||, ||a'|| <= 1, q, q' in [0, 1],
|s|, |s'| <= 1 and c = <a, a'>: the upper-triangle map keeps each
off-diagonal product once, so its norm is at most the Frobenius norm, and

    f(q, q') = ||q a a^T - q' a' a'^T||_F^2
             = q^2 ||a||^4 + q'^2 ||a'||^4 - 2 q q' c^2

is convex in (q, q') (its Hessian has determinant
4 (||a||^4 ||a'||^4 - c^4) >= 0 by Cauchy-Schwarz), so its maximum over
[0, 1]^2 is at a vertex: max(||a||^4 + ||a'||^4 - 2 c^2, ||a||^4,
||a'||^4) <= max(2 - 2 c^2, 1). The vector part is
||s a - s' a'||^2 <= 2 + 2 |c|. Hence

    Delta^2 <= max over |c| in [0, 1] of max(2 - 2 c^2, 1) + 2 + 2 |c| = 5

(at |c| = 1: a' = -a, q = 1, q' = 0, s = s' = 1). Delta = sqrt(5). The
bound ignores the coupling of q and s through p (|y - p| <= max(p, 1 - p)
while q = 4 p (1 - p)), so it is an upper bound; the test suite's search
checks it and that the engine's statistic never exceeds it.

Noise (:func:`glm_calibration`): sigma = Delta / mu with mu the largest
normalized sensitivity of the Gaussian mechanism meeting (epsilon,
delta') on its exact privacy curve (Balle & Wang 2018, Thm. 8), delta'
from :func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
with the lattice sampler, the rounding allowance from
:func:`dpbandits.privacy.secure.lattice_gaussian`. The same sigma serves
both models (one mechanism per user either way); local sums carry n_k
draws, so the lattice leaves room for horizon * (1 + 64 sigma).

Confidence (reconstructed; affects regret, not privacy): alpha' =
alpha / (3 K) over the K epochs; the score's noise standardized by the
Fisher information gives chi_d(alpha') (its covariance is at most the
information, w <= 1); the noise terms use
:func:`dpbandits.privacy.reweighted.operator_norm_factor` and
:func:`dpbandits.privacy.reweighted.chi_bound` (per report in the local
model; the engine multiplies by sqrt(n_k)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.analytic_gaussian import gaussian_mu_checked
from dpbandits.privacy.discrete_gaussian import lattice_gaussian_calibration_delta_checked
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.reweighted import chi_bound, epoch_count, operator_norm_factor, statistic_length
from dpbandits.privacy.secure import LatticeNoise, capped_lattice_exponent, lattice_gaussian

__all__ = [
    "GLM_SENSITIVITY",
    "GlmCalibration",
    "glm_calibration",
    "glm_reward_chi",
    "glm_sensitivity",
    "ucb_glm_width",
]

#: Delta = sqrt(5): the L2 sensitivity bound of one contribution (module docstring).
GLM_SENSITIVITY = math.sqrt(5.0)

_BASIS = {
    "joint": "Chen, Li, Rakhlin & Simchi-Levi 2025 (arXiv 2502.13115), information-weighted one-step "
             "logistic estimator, one release per epoch (reconstructed: dpbandits.privacy.reweighted_glm); "
             "joint DP by the billboard lemma",
    "local": "Chen, Li, Rakhlin & Simchi-Levi 2025 (arXiv 2502.13115), information-weighted one-step "
             "logistic estimator, one Gaussian report per user (reconstructed: dpbandits.privacy.reweighted_glm)",
}


def glm_sensitivity() -> float:
    """L2 sensitivity bound of one user's contribution: sqrt(5) (module docstring).

    >>> round(glm_sensitivity(), 6)
    2.236068
    """
    return GLM_SENSITIVITY


@dataclass(frozen=True)
class GlmCalibration:
    """The noise of every release (joint) or report (local) and the confidence constants."""

    model: str
    d: int
    horizon: int
    epsilon: float
    delta: float
    alpha: float
    first_epoch: int
    sensitivity: float
    mu: float
    calibrated_delta: float
    sigma: float
    noise: LatticeNoise | None
    op_bound: float
    chi_bound: float
    reward_chi: float
    guarantee: Guarantee

    def wire(self) -> tuple[str, float] | tuple[str, int, int]:
        """The one noise value the engine takes."""
        return self.noise.wire() if self.noise is not None else ("gaussian", self.sigma)


def ucb_glm_width(S: float, L: float) -> float:
    """sigma / kappa of UCB-GLM's radius (Li, Lu & Zhou 2017, Eq. (6)) for
    logistic rewards in [0, 1]: sigma = 1/2 (a [0, 1] reward is
    1/2-sub-Gaussian) and kappa = mu'(S L) = mu(S L) (1 - mu(S L)), the
    smallest slope of the link over |<x, theta>| <= S L. Regret, not privacy.

    >>> round(ucb_glm_width(2.0, 1.0), 4)
    4.7622
    """
    z = positive("S", S) * positive("L", L)
    p = 1.0 / (1.0 + math.exp(-z))
    return 0.5 / (p * (1.0 - p))


def glm_reward_chi(d: int, horizon: int, *, alpha: float | None, first_epoch: int) -> float:
    """chi_d(alpha / (3 K)), the reward-noise part of beta (K epochs).

    >>> round(glm_reward_chi(5, 1000, alpha=0.01, first_epoch=100), 4)
    5.5757
    """
    alpha = 1.0 / horizon if alpha is None else in_open_unit("alpha", alpha)
    return chi_bound(d, alpha / (3.0 * epoch_count(horizon, first_epoch)))


def glm_calibration(
    d: int,
    horizon: int,
    epsilon: float,
    delta: float,
    *,
    model: Literal["joint", "local"] = "joint",
    alpha: float | None = None,
    first_epoch: int,
    sampler: str = "lattice",
) -> GlmCalibration:
    """The calibration of :class:`dpbandits.JointDPReweightedLogisticUCB`
    (``model="joint"``) and :class:`dpbandits.LocalDPReweightedLogisticUCB`
    (``model="local"``): (epsilon, delta)-joint or -local DP of every user's
    context and reward, for every epsilon > 0 and delta in (0, 1).

    >>> cal = glm_calibration(5, 10**6, 1.0, 1e-6, first_epoch=320, sampler="float")
    >>> round(cal.sensitivity, 4), round(cal.sigma, 3)
    (2.2361, 9.447)
    """
    d = positive_int("d", d)
    horizon = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    first_epoch = positive_int("first_epoch", first_epoch)
    if model not in ("joint", "local"):
        raise ValueError(f"invalid argument `model`: must be 'joint' or 'local', got {model!r}")
    alpha = 1.0 / horizon if alpha is None else in_open_unit("alpha", alpha)
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    m = statistic_length(d)
    sens = GLM_SENSITIVITY
    calibrated, noise = delta, None
    sigma0 = sens / gaussian_mu_checked(epsilon, delta)
    # Local sums carry one draw per report: room for horizon * (1 + 64 sigma).
    sum_bound = float(horizon) * (1.0 + (64.0 * sigma0 if model == "local" else 0.0))
    if sampler == "lattice":
        steps = math.ldexp(sigma0, capped_lattice_exponent(sigma0, sum_bound)) / 2.0
        calibrated, _ = lattice_gaussian_calibration_delta_checked(epsilon, delta, m, steps)
    mu = gaussian_mu_checked(epsilon, calibrated)
    sigma = sens / mu
    if sampler == "lattice":
        noise = lattice_gaussian(sigma, sens, dim=m, sum_bound=sum_bound)
        sigma = noise.scale
    a = alpha / (3.0 * epoch_count(horizon, first_epoch))
    guarantee = Guarantee(
        model, epsilon, delta, protects="contexts and rewards", basis=_BASIS[model], calibration="tight",
        sampler="lattice" if sampler == "lattice" else "float",
    )
    return GlmCalibration(
        model=model, d=d, horizon=horizon, epsilon=epsilon, delta=delta, alpha=alpha, first_epoch=first_epoch,
        sensitivity=sens, mu=mu, calibrated_delta=calibrated, sigma=sigma, noise=noise,
        op_bound=sigma * operator_norm_factor(d, a), chi_bound=sigma * chi_bound(d, a),
        reward_chi=chi_bound(d, a), guarantee=guarantee,
    )
