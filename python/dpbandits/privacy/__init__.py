"""Privacy decisions of dpbandits: guarantees, calibration, confidence radii.

This package is the only place noise scales are computed. A
learner calls one calibration function, hands its numbers to the Rust
engine, and reports its ``guarantee``:

>>> from dpbandits.privacy import shariff_sheffet_gaussian, confidence_radius
>>> cal = shariff_sheffet_gaussian(d=5, horizon=50_000_000, epsilon=1.0, delta=0.1)
>>> cal.m, round(cal.sigma, 4)
(27, 153.3438)
>>> radius = confidence_radius(cal, sigma=1.0, S=1.0)
>>> print(cal.guarantee)  # doctest: +ELLIPSIS
(1, 0.1)-joint DP (0.002296-zCDP) of contexts and rewards [Shariff & Sheffet 2018, ...]

Privacy accounting: the notions (:class:`PureDP`, :class:`ApproxDP`,
:class:`ZCDP`) and models (:data:`PRIVACY_MODELS`), composition, conversions,
the exact Gaussian and Laplace mechanisms, and a :class:`PrivacyBudget`
shared by several releases:

>>> from dpbandits.privacy import PrivacyBudget, ZCDP, gaussian_epsilon
>>> round(gaussian_epsilon(mu=0.5, delta=1e-5), 4)
1.9931
>>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
>>> _ = budget.spend(ZCDP(0.01), "first release")
>>> round(budget.spent.epsilon, 4), budget.accounting
(0.5457, 'zcdp')

Modules: ``guarantees`` (:class:`Guarantee`), ``tree`` (tree-based
counters: depth, levels a leaf reaches, per-node Gaussian and Laplace noise,
App. A.2 per-node target), ``calibration`` (Shariff & Sheffet §4: Wishart
and Gaussian noise, Prop. 9 and 11 bounds),
``confidence`` (Prop. 4 radius, non-private LinUCB bounds), ``notions``
(privacy notions and models), ``composition`` (basic, advanced and zCDP
composition), ``conversion`` (pure DP -> zCDP -> (epsilon, delta): Bun &
Steinke, Canonne-Kamath-Steinke), ``analytic_gaussian`` (Balle & Wang's
exact Gaussian mechanism, GDP composition), ``discrete_gaussian`` (what
lattice Gaussian noise costs the exact calibration), ``laplace`` (Laplace
mechanism), ``budget`` (:class:`PrivacyBudget`).
"""

from __future__ import annotations

from dpbandits.privacy.analytic_gaussian import (
    analytic_gaussian_sigma,
    compose_gaussian_mu,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mu,
    gaussian_zcdp_rho,
)
from dpbandits.privacy.budget import BudgetEntry, PrivacyBudget
from dpbandits.privacy.calibration import (
    GaussianCalibration,
    WishartCalibration,
    shariff_sheffet_gaussian,
    shariff_sheffet_wishart,
    wishart_degrees_of_freedom,
)
from dpbandits.privacy.composition import (
    advanced_composition,
    advanced_composition_epsilon,
    basic_composition,
    compose_zcdp,
)
from dpbandits.privacy.confidence import (
    ConfidenceRadius,
    RegularizerBounds,
    confidence_radius,
    linucb_constant,
)
from dpbandits.privacy.conversion import (
    max_zcdp_rho,
    pure_dp_to_zcdp_rho,
    zcdp_to_dp_delta_cks,
    zcdp_to_dp_epsilon,
    zcdp_to_dp_epsilon_cks,
)
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.laplace import laplace_epsilon
from dpbandits.privacy.mishra_thakurta import (
    contextual_entry_epsilon,
    contextual_node_scales,
    gap_estimation_schedule,
    lemma5_noise_bound,
    lemma9_batch_size,
    private_mab_regret_lower_bound,
    private_ucb_node_scale,
)
from dpbandits.privacy.notions import PRIVACY_MODELS, ZCDP, ApproxDP, PureDP
from dpbandits.privacy.shuffle import (
    closed_form_validity_limit,
    shuffle_amplification,
    shuffle_local_epsilon,
)
from dpbandits.privacy.tree import (
    gaussian_tree_sigma,
    laplace_tree_scale,
    tree_depth,
    tree_levels,
    tree_node_epsilon,
)

__all__ = [
    "PRIVACY_MODELS",
    "ZCDP",
    "ApproxDP",
    "BudgetEntry",
    "ConfidenceRadius",
    "GaussianCalibration",
    "Guarantee",
    "PrivacyBudget",
    "PureDP",
    "RegularizerBounds",
    "WishartCalibration",
    "advanced_composition",
    "advanced_composition_epsilon",
    "analytic_gaussian_sigma",
    "basic_composition",
    "closed_form_validity_limit",
    "compose_gaussian_mu",
    "compose_zcdp",
    "confidence_radius",
    "contextual_entry_epsilon",
    "contextual_node_scales",
    "gap_estimation_schedule",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "gaussian_tree_sigma",
    "gaussian_zcdp_rho",
    "laplace_epsilon",
    "laplace_tree_scale",
    "lemma5_noise_bound",
    "lemma9_batch_size",
    "linucb_constant",
    "max_zcdp_rho",
    "private_mab_regret_lower_bound",
    "private_ucb_node_scale",
    "pure_dp_to_zcdp_rho",
    "shariff_sheffet_gaussian",
    "shariff_sheffet_wishart",
    "shuffle_amplification",
    "shuffle_local_epsilon",
    "tree_depth",
    "tree_levels",
    "tree_node_epsilon",
    "wishart_degrees_of_freedom",
    "zcdp_to_dp_delta_cks",
    "zcdp_to_dp_epsilon",
    "zcdp_to_dp_epsilon_cks",
]
