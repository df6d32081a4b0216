"""The Wishart constants of Shariff & Sheffet's own experiment code.

The App. D.2 figure of Shariff & Sheffet 2018 was produced by the authors'
Julia package PrivateBandits.jl (github.com/roshanshariff/PrivateBandits.jl,
its final published version: ``src/DifferentialPrivacy.jl``,
``src/LinearBandits.jl``, ``src/Experiments.jl``, ``experiment2.jl``). Its
Wishart learners depart from the paper's printed constants (§4.1, Eq. (4),
Prop. 9), which :func:`dpbandits.privacy.calibration.shariff_sheffet_wishart`
implements. This module reproduces the code's constants so that our engine
can be run with them (docs/reproduction-notes.md). It is
for reproduction only: the library's learners never use it.

What the code computes, with d the action dimension, n the horizon,
Ltilde^2 = L^2 + Btilde^2 and m = 1 + ceil(log2 n) (the code's
``1 + nbits(n - 1)`` for its pan-private tree, which also releases exactly m
noise draws every round, as our padded tree does):

- ``WishartMechanism``: ``advanced_composition(m, dp; δfail = δ/(m+1))``
  gives epsilon_0 = epsilon / sqrt(8 m ln((m+1)/delta)) and
  delta_0 = (delta - delta/(m+1))/m = delta/(m+1); then
  k = (d + 1) + floor(28 ln(4/delta_0) / epsilon_0^2). The paper (§4.1):
  k = d + 1 + ceil(224 m epsilon^-2 ln(8m/delta) ln(2/delta)), from
  epsilon_0 = epsilon / sqrt(8 m ln(2/delta)), delta_0 = delta/(2m).
- The learner's alpha is 1/(2n) (``make_alg``), and the tree divides it by
  its padded horizon H = 2^ceil(log2 n) before the bounds
  (``regparams(s::ComposedStrategy)``): alpha' = 1/(2 n H). The paper uses
  alpha = 1/n, with ln(8n/alpha) and ln(2n/alpha) in Prop. 9.
- Unshifted (``regparams(::WishartMechanism)``), with
  a' = sqrt(d) + sqrt(2 ln(4/alpha')):
  rho_min = Ltilde^2 (sqrt(mk) - a')^2, rho_max = Ltilde^2 (sqrt(mk) + a')^2,
  gamma = Ltilde (sqrt(d) + sqrt(2 ln(1/alpha'))). Prop. 9's forms, with the
  code's alpha'.
- Shifted (``ShiftedWishart`` through ``Shifted``): rho'_min =
  4 Ltilde^2 sqrt(mk) a' (Prop. 9), c = rho_min - rho'_min (Eq. (4)),
  rho'_max = rho_max - c (= 2 rho'_min, Prop. 9), and
  gamma' = gamma sqrt(rho_min / rho'_min): Claim 20's bound, the first line
  of Prop. 9's proof, not the relaxed gamma' = Ltilde sqrt(sqrt(mk) b)
  that Prop. 9 prints.
- The radius (``Ellipsoid``) is Prop. 4's log-det form with the learner's
  alpha = 1/(2n): beta_t = sigma sqrt(max(0, 2 ln(2/alpha) + ln det V_t -
  d ln rho_min)) + S sqrt(rho_max) + gamma, sigma = S = 1.

Check against the authors' notebook (``private-bandits.ipynb``, Experiment 3,
printed output): rho_min = 1.28101e7 (unshifted) and 2.22336e5 (shifted)
for d = 5, n = 5e7, epsilon = 1, delta = 0.1, L = Btilde = 1.
"""

from __future__ import annotations

import math
from dataclasses import replace

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.calibration import WishartCalibration, shariff_sheffet_wishart
from dpbandits.privacy.tree import tree_depth

__all__ = ["authors_code_wishart", "authors_code_wishart_dof"]


def authors_code_wishart_dof(d: int, m: int, epsilon: float, delta: float) -> int:
    """k = (d + 1) + floor(28 ln(4/delta_0) / epsilon_0^2) with the code's
    epsilon_0 = epsilon / sqrt(8 m ln((m+1)/delta)), delta_0 = delta/(m+1)
    (PrivateBandits.jl ``WishartMechanism`` and ``advanced_composition``).

    ``d``, ``m`` integers >= 1; ``epsilon`` finite > 0; 0 < ``delta`` < 1.
    """
    d = positive_int("d", d)
    m = positive_int("m", m)
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    delta_fail = delta / (m + 1)
    epsilon_0 = epsilon / math.sqrt(8.0 * m * math.log(1.0 / delta_fail))
    delta_0 = (delta - delta_fail) / m
    return d + 1 + math.floor(28.0 * math.log(4.0 / delta_0) / epsilon_0**2)


def authors_code_wishart(
    d: int,
    horizon: int,
    epsilon: float,
    delta: float,
    L: float = 1.0,
    B_tilde: float = 1.0,
    shift: bool = True,
) -> WishartCalibration:
    """The Wishart learner's constants as PrivateBandits.jl computes them
    (see the module docstring for each line's source), as a
    :class:`~dpbandits.privacy.calibration.WishartCalibration` whose
    ``alpha`` is the code's 1/(2n). ``shift``: True (``ShiftedWishart``) or
    False (``WishartMechanism``). Other arguments as in
    :func:`~dpbandits.privacy.calibration.shariff_sheffet_wishart`.

    >>> c = authors_code_wishart(5, 50_000_000, 1.0, 0.1, shift=False)
    >>> c.k, f"{c.rho_min:.5e}"
    (239278, '1.28101e+07')
    >>> f"{authors_code_wishart(5, 50_000_000, 1.0, 0.1).rho_min:.5e}"
    '2.22336e+05'
    """
    if not isinstance(shift, bool):
        raise ValueError(f"invalid argument `shift`: must be True or False, got {shift!r}")
    n = positive_int("horizon", horizon)
    if n < 2:
        raise ValueError("invalid argument `horizon`: must be >= 2")
    # The paper's calibration validates the common arguments and fills the
    # fields the code shares with it (m, Ltilde, the guarantee's inputs).
    paper = shariff_sheffet_wishart(d, n, epsilon, delta, L=L, B_tilde=B_tilde, shift=shift)
    m = tree_depth(n)
    k = authors_code_wishart_dof(paper.d, m, paper.epsilon, paper.delta)
    alpha = 1.0 / (2.0 * n)  # make_alg
    alpha_tree = alpha / (1 << (n - 1).bit_length())  # regparams(::ComposedStrategy): alpha / H
    l_tilde_sq = paper.L_tilde**2
    sqrt_mk = math.sqrt(m * k)
    a = math.sqrt(paper.d) + math.sqrt(2.0 * math.log(4.0 / alpha_tree))
    rho_min = l_tilde_sq * (sqrt_mk - a) ** 2
    rho_max = l_tilde_sq * (sqrt_mk + a) ** 2
    gamma = paper.L_tilde * (math.sqrt(paper.d) + math.sqrt(2.0 * math.log(1.0 / alpha_tree)))
    c = 0.0
    if shift:
        shifted_min = 4.0 * l_tilde_sq * sqrt_mk * a
        c = rho_min - shifted_min
        rho_max -= c
        gamma *= math.sqrt(rho_min / shifted_min)  # Claim 20
        rho_min = shifted_min
    return replace(paper, alpha=alpha, k=k, shift=c, rho_min=rho_min, rho_max=rho_max, gamma=gamma)
