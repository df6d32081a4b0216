"""Noise and confidence constants of the batched information-weighted LinUCB.

Source: Chen, Li, Rakhlin & Simchi-Levi, "Near-optimal private learning in
linear contextual bandits", arXiv 2502.13115 (2025). What the reachable text
states (abstract, v1 and v2): a re-weighted ("information-weighted")
regression whose weights make one user's influence bounded in the
geometry of the data (the L1 analogue of the covariance, not the
covariance itself, governs private estimation); regret of order
sqrt(T) + 1/alpha under joint alpha-privacy and sqrt(T)/alpha under local
privacy, for generalized linear contextual bandits; a secondary summary
of the paper gives the joint rate as O~(d^2 sqrt(T) + d^(5/2) / alpha).
The algorithm boxes, theorem statements and constants of the paper, and
any code of the authors, were not reachable; the
construction below is a reconstruction with its own privacy proof, checked
by an exact sensitivity computation and an audit on exact released values
(tests/test_reweighted_linucb.py, tests/test_audit_reweighted.py).

The reconstructed mechanism (``rust/src/policy/reweighted_linucb.rs``):

1. Epochs of n_0, 2 n_0, 4 n_0, ... recorded rewards; the policy of epoch k
   is fixed at its start (UCB on the release of epoch k - 1), so the data
   of an epoch do not influence its own decisions (a batched design: the
   regression of each epoch is a fixed-design regression).
2. Information weights. H_k = L L^T is the released information matrix of
   epoch k - 1 (doubled: epoch k is twice as long); gamma_k = c d / n_k.
   Row x gets w = min(1, gamma_k / ||L^-1 x||^2), and u = sqrt(w / gamma_k)
   L^-1 x has ||u|| <= 1. The epoch's statistic sums, per reward y with
   |y| <= B, the vector (upper triangle of u u^T, sqrt(w) y u) of
   m = d (d + 1) / 2 + d entries.
3. One release per epoch: the sums plus i.i.d. N(0, sigma^2) on every entry
   (exact discrete Gaussian on a lattice by default, inputs rounded first).
   Each reward enters exactly one epoch's sums, so each user's data meets
   one Gaussian mechanism (parallel composition over the disjoint epochs;
   later epochs depend on it only through post-processing of its release
   and through other users' data). The sequence of releases is then
   (epsilon, delta)-DP in each user's (context, reward), and every action
   shown to other users is a function of the releases and their own
   contexts, so the learner is (epsilon, delta)-jointly DP (billboard lemma,
   Hsu, Huang, Roth, Roughgarden & Wu 2014, Lemma 9; Shariff & Sheffet
   2018, Claim 7).

Sensitivity (:func:`reweighted_sensitivity`, exact). For neighbours that
replace one user's row, with a = u, a' = u' (norms <= 1, c = <a, a'>) and
scalars s = sqrt(w) y, s' in [-B, B]:

    ||ut(a a^T) - ut(a' a'^T)||^2 + ||s a - s' a'||^2
        <= ||a||^4 + ||a'||^4 - 2 c^2 + B^2 (||a||^2 + ||a'||^2 + 2 |c|)
        <= 2 - 2 c^2 + 2 B^2 (1 + |c|),

(the upper-triangle map keeps each off-diagonal product once, so its norm
is at most the Frobenius norm), whose maximum over |c| is at
|c| = min(1, B^2 / 2): Delta^2 = 2 + 2 B^2 + B^4 / 2 for B^2 <= 2 and
4 B^2 above. At B = 1, Delta = sqrt(4.5) = 2.1213. An upper bound on the
L2 sensitivity (the noise is calibrated to it); the test suite's search
over pairs of rows reaches within 3% of it (2.0767 at B = 1: unit rows at
60 degrees, opposite rewards).

Noise (:func:`reweighted_calibration`). sigma = Delta / mu with mu the
largest normalized sensitivity of the Gaussian mechanism meeting
(epsilon, delta') on its exact privacy curve (Balle & Wang 2018, Thm. 8);
with the lattice sampler delta' comes from
:func:`dpbandits.privacy.discrete_gaussian.lattice_gaussian_calibration_delta`
(m coordinates reached per user) and the rounding allowance from
:func:`dpbandits.privacy.secure.lattice_gaussian`. Any delta in (0, 1)
works, 1e-12 included.

Confidence (reconstructed; affects regret, not privacy). With
alpha' = alpha / (3 K) over the K epochs, chi_d(a) = sqrt(d + 2 sqrt(d
ln(1/a)) + 2 ln(1/a)) (Laurent & Massart 2000, Lemma 1; Hsu, Kakade &
Zhang 2012, Thm. 2.1 for sub-Gaussian noise): the reward-noise term
sigma_r chi_d(alpha') (fixed design: an epoch's policy and weights are
fixed at its start), the vector noise ||z|| <= sigma chi_d(alpha') and the
symmetric noise matrix ||Z|| <= op = sigma (2 sqrt(d) + 2 sqrt(ln
(1/alpha'))) (Gaussian concentration of the operator norm, a sqrt(2)
sigma-Lipschitz function of the m Gaussian entries). In original
coordinates the epoch's release is G = G_w + N, u = G_w theta* + S_w + n
with ||N|| <= N_b = gamma op lmax(H) and ||n|| <= sqrt(gamma lmax(H)) chi;
the ridge rho = 2 N_b + lambda_0 (lambda_0 = c_r L^2) makes
Lambda = G + rho I >= G_w + (N_b + lambda_0) I, and the epoch's radius is
sigma_r chi + (sqrt(gamma lmax H) chi + (N_b + rho) S) / sqrt(lmin
Lambda), with the eigenvalues bounded by min(Frobenius, max row sum)
norms of H and Lambda^-1. The UCB pools the last two epochs, Lambda =
Lambda_k + Lambda_{k-1}, and its radius is sqrt(r_k^2 + r_{k-1}^2) (the
matrix-fractional function x^T A^-1 x is jointly convex and homogeneous).
This radius is valid on the event above but wide: on D.2 (d = 5) it
explores far more than LinUCB; ``beta_scale`` below 1 trades the
guarantee for regret.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.analytic_gaussian import gaussian_mu_checked
from dpbandits.privacy.discrete_gaussian import lattice_gaussian_calibration_delta_checked
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import LatticeNoise, capped_lattice_exponent, lattice_gaussian

__all__ = [
    "ReweightedCalibration",
    "chi_bound",
    "epoch_count",
    "operator_norm_factor",
    "reweighted_calibration",
    "reweighted_sensitivity",
    "statistic_length",
]

BASIS = ("Chen, Li, Rakhlin & Simchi-Levi 2025 (arXiv 2502.13115), information-weighted regression, one "
         "release per epoch (reconstructed: dpbandits.privacy.reweighted); joint DP by the billboard lemma")


def reweighted_sensitivity(B: float) -> float:
    """L2 sensitivity of one user's normalized contribution (module
    docstring): sqrt(2 + 2 B^2 + B^4 / 2) for B^2 <= 2, else 2 B.

    >>> round(reweighted_sensitivity(1.0), 6)
    2.12132
    >>> reweighted_sensitivity(2.0)
    4.0
    """
    b2 = positive("B", B) ** 2
    return math.sqrt(2.0 + 2.0 * b2 + b2 * b2 / 2.0) if b2 <= 2.0 else 2.0 * math.sqrt(b2)


def statistic_length(d: int) -> int:
    """m = d (d + 1) / 2 + d entries of one epoch's statistic."""
    return d * (d + 1) // 2 + d


def epoch_count(horizon: int, first_epoch: int) -> int:
    """Epochs of n_0 2^k that start within the horizon."""
    k, start = 0, 0
    while start < horizon:
        start += first_epoch << k
        k += 1
    return k


def chi_bound(d: int, alpha: float) -> float:
    """chi_d(alpha) = sqrt(d + 2 sqrt(d ln(1/alpha)) + 2 ln(1/alpha)):
    P(chi^2_d >= chi_d(alpha)^2) <= alpha (Laurent & Massart 2000, Lemma 1).

    >>> round(chi_bound(5, 0.01), 4)
    4.8793
    """
    log = math.log(1.0 / alpha)
    return math.sqrt(d + 2.0 * math.sqrt(d * log) + 2.0 * log)


def operator_norm_factor(d: int, alpha: float) -> float:
    """2 sqrt(d) + 2 sqrt(ln(1/alpha)): the operator norm of the symmetric
    d x d matrix of i.i.d. N(0, 1) entries on and above the diagonal
    exceeds this with probability <= alpha."""
    return 2.0 * math.sqrt(d) + 2.0 * math.sqrt(math.log(1.0 / alpha))


@dataclass(frozen=True)
class ReweightedCalibration:
    """The noise of every epoch's release and the confidence constants."""

    d: int
    horizon: int
    epsilon: float
    delta: float
    alpha: float
    B: float
    first_epoch: int
    sensitivity: float
    #: mu = Delta / sigma met on the continuous curve at ``calibrated_delta``.
    mu: float
    calibrated_delta: float
    #: Per-entry noise sigma (after the lattice allowance).
    sigma: float
    noise: LatticeNoise | None
    op_bound: float
    chi_bound: float
    reward_chi: float
    guarantee: Guarantee

    def wire(self) -> tuple[str, float] | tuple[str, int, int]:
        """The one noise value the engine takes."""
        return self.noise.wire() if self.noise is not None else ("gaussian", self.sigma)


def reweighted_calibration(
    d: int,
    horizon: int,
    epsilon: float,
    delta: float,
    *,
    alpha: float | None = None,
    B: float = 1.0,
    sigma_r: float = 1.0,
    first_epoch: int,
    sampler: str = "lattice",
) -> ReweightedCalibration:
    """The calibration of :class:`dpbandits.JointDPReweightedLinUCB`
    (module docstring): (epsilon, delta)-joint DP of every user's context
    and reward, for every epsilon > 0 and delta in (0, 1).

    >>> cal = reweighted_calibration(5, 10**6, 1.0, 1e-6, first_epoch=256, sampler="float")
    >>> round(cal.sensitivity, 4), round(cal.sigma, 3)
    (2.1213, 8.962)
    """
    d = positive_int("d", d)
    horizon = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    B = positive("B", B)
    first_epoch = positive_int("first_epoch", first_epoch)
    alpha = 1.0 / horizon if alpha is None else in_open_unit("alpha", alpha)
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    m = statistic_length(d)
    sens = reweighted_sensitivity(B)
    calibrated, noise = delta, None
    sum_bound = float(horizon) * max(1.0, B)
    if sampler == "lattice":
        sigma0 = sens / gaussian_mu_checked(epsilon, delta)
        steps = math.ldexp(sigma0, capped_lattice_exponent(sigma0, sum_bound)) / 2.0
        calibrated, _ = lattice_gaussian_calibration_delta_checked(epsilon, delta, m, steps)
    mu = gaussian_mu_checked(epsilon, calibrated)
    sigma = sens / mu
    if sampler == "lattice":
        noise = lattice_gaussian(sigma, sens, dim=m, sum_bound=sum_bound)
        sigma = noise.scale
    a = alpha / (3.0 * epoch_count(horizon, first_epoch))
    guarantee = Guarantee(
        "joint", epsilon, delta, protects="contexts and rewards", basis=BASIS, calibration="tight",
        sampler="lattice" if sampler == "lattice" else "float",
    )
    return ReweightedCalibration(
        d=d, horizon=horizon, epsilon=epsilon, delta=delta, alpha=alpha, B=B, first_epoch=first_epoch,
        sensitivity=sens, mu=mu, calibrated_delta=calibrated, sigma=sigma, noise=noise,
        op_bound=sigma * operator_norm_factor(d, a), chi_bound=sigma * chi_bound(d, a),
        reward_chi=positive("sigma_r", sigma_r) * chi_bound(d, a), guarantee=guarantee,
    )


def non_private_constants(d: int, horizon: int, *, alpha: float | None, sigma_r: float, first_epoch: int) -> float:
    """sigma_r chi_d(alpha / (3 K)) of the non-private learner (no noise terms)."""
    alpha = 1.0 / horizon if alpha is None else in_open_unit("alpha", alpha)
    return positive("sigma_r", sigma_r) * chi_bound(d, alpha / (3.0 * epoch_count(horizon, first_epoch)))
