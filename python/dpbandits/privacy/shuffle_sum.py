"""Shuffled summation of scalars for batched elimination (Hanna et al. Alg. 4).

Hanna, Girgis, Fragouli & Diggavi, "Differentially Private Stochastic
Linear Bandits: (Almost) for Free", App. C, Alg. 4: line 9 computes each
per-action reward sum of a batch with the shuffle protocol for summing
scalars of Cheu, Joseph, Mao & Peng 2021 ("Shuffle Private Stochastic
Convex Optimization", arXiv 2106.09805, ICLR 2022; CJMP21 below), Alg. 1,
with the parameters of its Lemma 3.1.

The protocol P_1D = (R_1D, A_1D) for n users with inputs x_j in [0, 1]:

- randomizer R_1D (user j): x̄_j = floor(x_j g) + Ber(x_j g - floor(x_j g))
  (randomized rounding to {0, ..., g}); send x̄_j one-bits, g - x̄_j
  zero-bits, and b further bits drawn i.i.d. Ber(p);
- shuffler: a uniform permutation of all (g + b) n bits;
- analyzer A_1D: (number of one-bits - p b n) / g.

E[x̄_j] = x_j g, so the estimate is unbiased. The analyzer's output is a
function of the count of one-bits only, which the permutation does not
change: the count is sum_j x̄_j + Binomial(b n, p) exactly, and that is
how the engine simulates the protocol (one Bernoulli per reward at the
user, one Binomial(b n, p) per sum at the analyzer), an exact simulation
of the protocol's output distribution.

Parameters (:func:`shuffle_sum_parameters`), for 0 < epsilon <= 15 and
0 < delta < 1:

    g = max(ceil(2 sqrt(n)), 4),
    b = ceil(180 g^2 ln(2/delta) / (epsilon^2 n)),
    p = 90 g^2 ln(2/delta) / (b epsilon^2 n)   (so p <= 1/2).

Source note. The stored copy of the CJMP21 ar5iv page that the search
tool reaches holds only the paper's opening (abstract, introduction); the
body with Alg. 1 and Lemma 3.1 could not be read. The protocol's structure
(rounding, g and b bits, debiasing by p b n and division by g) is
confirmed by a public implementation of CJMP21's vector protocol; the
constants 180 and 90 are the ones Hanna et al. rely on (Lemma 6: the
error is (180 ln(2/delta) / epsilon^2)-subgaussian, which matches a
Binomial(b n, p) / g with variance b n p (1 - p) / g^2 <= 90 ln(2/delta) /
epsilon^2); the floor 4 in g and the range epsilon <= 15 are from memory of
the paper and could not be confirmed. Conservative safeguard: the analyzer
sees sum_j x̄_j + Binomial(b n, p), and one user moves sum_j x̄_j by at
most g, so the protocol is exactly the binomial mechanism with integer
sensitivity g; ``tests/test_elimination_shuffle_sum.py`` computes its
exact (epsilon, delta) curve (a hockey-stick divergence of two shifted
binomials, by the monotone likelihood ratio of the binomial) and checks
that the parameters above give delta_exact <= delta over a grid of
(epsilon, delta, n), epsilon from 0.05 to 15.

Privacy accounting for Alg. 4. Each per-action sum of each batch is its own
run of P_1D on the n_ia users who pulled that action in that batch, with
the (epsilon, delta) parameters for n = n_ia; each user (reward)
contributes to exactly one sum of one batch, so by parallel composition the
released sums of the whole run are (epsilon, delta)-DP in the shuffle model
(Hanna Thm 4, "follows from Lemma 3.1 in [33]"); every decision is
post-processing of the released sums.

Rewards. P_1D takes inputs in [0, 1]; rewards declared in [r_min, r_max]
are mapped to x = (r - r_min) / w, w = r_max - r_min (after clipping or
refusal by the bounds policy), and the released sum mapped back:
sum = r_min n + w sum01. Replacing one reward moves x by at most 1 whatever
w is, so the guarantee is the requested (epsilon, delta) for every reward
range and both calibrations; the error of the sum is w times the error of
sum01. ``calibration`` affects only the confidence width gamma_i
(:func:`shuffle_sum_gamma_scale`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.guarantees import Guarantee

__all__ = [
    "EPSILON_MAX",
    "ShuffleSumParameters",
    "shuffle_sum_coefficients",
    "shuffle_sum_error_variance",
    "shuffle_sum_gamma_scale",
    "shuffle_sum_guarantee",
    "shuffle_sum_parameters",
    "shuffle_sum_subgaussian",
]

#: Largest epsilon for which the CJMP21 Lemma 3.1 parameters are used
#: (see the module's source note).
EPSILON_MAX = 15.0

# The constants of CJMP21 Lemma 3.1: g >= 2 sqrt(n) (rounding variance
# <= n / (4 g^2) <= 1/16), g >= 4, b n / g^2 >= 180 ln(2/delta) / epsilon^2
# noise bits, b n p / g^2 = 90 ln(2/delta) / epsilon^2 expected noise ones.
_G_SQRT_N = 2.0
_G_MIN = 4.0
_BITS = 180.0
_ONES = 90.0


@dataclass(frozen=True)
class ShuffleSumParameters:
    """(g, b, p) of one run of CJMP21 Alg. 1 on n users."""

    n: int
    g: int
    b: int
    p: float

    @property
    def noise_variance(self) -> float:
        """Variance of the analyzer's binomial noise on the [0, 1] scale:
        b n p (1 - p) / g^2."""
        return self.b * self.n * self.p * (1.0 - self.p) / self.g**2


def check_epsilon_delta(epsilon: float | None, delta: float | None) -> tuple[float, float]:
    """Validates (epsilon, delta) for CJMP21 Lemma 3.1: 0 < epsilon <= 15,
    0 < delta < 1 (errors name the argument)."""
    if epsilon is None:
        raise ValueError("invalid argument `epsilon`: privacy='shuffle-sum' needs 0 < epsilon <= 15")
    eps = positive("epsilon", epsilon)
    if eps > EPSILON_MAX:
        raise ValueError(
            f"invalid argument `epsilon`: the shuffled sum of CJMP21 Lemma 3.1 needs epsilon <= {EPSILON_MAX:g}, "
            f"got {epsilon!r}"
        )
    if delta is None:
        raise ValueError("invalid argument `delta`: privacy='shuffle-sum' needs delta in (0, 1)")
    return eps, in_open_unit("delta", delta)


def shuffle_sum_parameters(epsilon: float, delta: float, n: int) -> ShuffleSumParameters:
    """g, b, p of CJMP21 Alg. 1 / Lemma 3.1 for n users (Hanna Alg. 4 line 9).

    g = max(ceil(2 sqrt(n)), 4), b = ceil(180 g^2 ln(2/delta) / (epsilon^2 n)),
    p = 90 g^2 ln(2/delta) / (b epsilon^2 n). Valid for 0 < epsilon <= 15,
    0 < delta < 1, n >= 1.

    >>> s = shuffle_sum_parameters(1.0, 1e-5, 100)
    >>> s.g, s.b, round(s.p, 5)
    (20, 8789, 0.49996)
    """
    eps, dlt = check_epsilon_delta(epsilon, delta)
    n = positive_int("n", n)
    g = max(math.ceil(_G_SQRT_N * math.sqrt(n)), int(_G_MIN))
    _, _, bits, ones = shuffle_sum_coefficients(eps, dlt)
    # The same floating-point operations as the engine's evaluation.
    b = math.ceil(bits * g * g / n)
    p = ones * g * g / (b * n)
    return ShuffleSumParameters(n, g, b, p)


def shuffle_sum_coefficients(epsilon: float, delta: float) -> tuple[float, float, float, float]:
    """The constants the engine evaluates g, b, p with for each per-action
    count n known only when a batch runs (as gamma_i's coefficients are):
    (c_g, g_min, c_b, c_p) with g = max(ceil(c_g sqrt(n)), g_min),
    b = ceil(c_b g^2 / n), p = c_p g^2 / (b n); c_b = 180 ln(2/delta) / epsilon^2,
    c_p = 90 ln(2/delta) / epsilon^2 (CJMP21 Lemma 3.1).
    ``tests/test_elimination_shuffle_sum.py`` checks the engine's values
    against :func:`shuffle_sum_parameters`."""
    eps, dlt = check_epsilon_delta(epsilon, delta)
    c = math.log(2.0 / dlt) / eps**2
    return (_G_SQRT_N, _G_MIN, _BITS * c, _ONES * c)


def shuffle_sum_error_variance(params: ShuffleSumParameters, fractions: list[float] | None = None) -> float:
    """Variance of A_1D's output minus the true sum of the x_j (the [0, 1] scale).

    The rounding of x_j adds f_j (1 - f_j) / g^2 with f_j = x_j g - floor(x_j g)
    (at most 1/4 each, so at most n / (4 g^2) <= 1/16 in all); the binomial
    noise adds b n p (1 - p) / g^2. ``fractions`` are the f_j (None: the
    worst case 1/2 for each user)."""
    if fractions is None:
        rounding = params.n * 0.25
    else:
        rounding = sum(f * (1.0 - f) for f in fractions)
    return rounding / params.g**2 + params.noise_variance


def shuffle_sum_subgaussian(epsilon: float, delta: float) -> float:
    """180 ln(2/delta) / epsilon^2: the subgaussian parameter of the error
    of each released sum (on the [0, 1] scale) that Hanna et al. use in
    Lemma 6 (App. C) for Alg. 4."""
    eps, dlt = check_epsilon_delta(epsilon, delta)
    return _BITS * math.log(2.0 / dlt) / eps**2


Calibration = Literal["tight", "paper"]


def shuffle_sum_gamma_scale(
    epsilon: float, delta: float, reward_range: tuple[float, float], calibration: Calibration = "tight"
) -> float:
    """The scale s of gamma_i in Alg. 4 line 10,

        gamma_i = sqrt(4d L / q^i) + (2 B d^2 + 2 d L) s / q^i,

    which is Alg. 1's gamma_i (line 5) with its Laplace scale replaced by
    s = sqrt(180 ln(2/delta)) / epsilon (the square root of Lemma 6's
    subgaussian parameter) on the protocol's [0, 1] scale.

    ``"tight"``: s times w = r_max - r_min, since the released sum's error
    is w times the protocol's. ``"paper"``: s as printed (w = 1), which
    under-covers the noise when w > 1 (rewards in [-1, 1]: w = 2); the
    privacy guarantee is (epsilon, delta) in both cases.
    """
    lo, hi = (float(v) for v in reward_range)
    s = math.sqrt(shuffle_sum_subgaussian(epsilon, delta))
    if calibration == "tight":
        return s * (hi - lo)
    if calibration == "paper":
        return s
    raise ValueError(f"invalid argument `calibration`: must be 'tight' or 'paper', got {calibration!r}")


def shuffle_sum_guarantee(epsilon: float, delta: float, calibration: Calibration) -> Guarantee:
    """(epsilon, delta)-DP in the shuffle model (Hanna Thm 4 with CJMP21
    Lemma 3.1; parallel composition over the per-action sums, each reward
    in one sum). The affine map to [0, 1] makes the guarantee independent
    of the reward range and of ``calibration``."""
    eps, dlt = check_epsilon_delta(epsilon, delta)
    return Guarantee(
        "shuffle", eps, dlt, protects="rewards", calibration=calibration,
        basis="Hanna et al. Thm 4 (Alg. 4): each per-action sum by the shuffled scalar sum of Cheu, Joseph, Mao "
              "& Peng 2021, Alg. 1 with the parameters of Lemma 3.1 (rewards mapped to [0, 1]); parallel "
              "composition, each reward in one sum; messages are integers (bits), the binomial noise "
              "rand_distr's integer sampler (floating-point internals, no low-bit channel in the integer output)",
        sampler="mixed",
    )
