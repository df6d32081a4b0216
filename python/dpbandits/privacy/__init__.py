"""Privacy decisions of dpbandits: guarantees, calibration, confidence radii.

This package is the only place noise scales are computed (DESIGN.md). A
learner calls one calibration function, hands its numbers to the Rust
engine, and reports its ``guarantee``:

>>> from dpbandits.privacy import shariff_sheffet_gaussian, confidence_radius
>>> cal = shariff_sheffet_gaussian(d=5, horizon=50_000_000, epsilon=1.0, delta=0.1)
>>> cal.m, round(cal.sigma, 4)
(27, 153.3438)
>>> radius = confidence_radius(cal, sigma=1.0, S=1.0)
>>> print(cal.guarantee)  # doctest: +ELLIPSIS
(1, 0.1)-joint DP (0.002296-zCDP) of contexts and rewards [Shariff & Sheffet 2018, ...]

Modules: ``guarantees`` (:class:`Guarantee`), ``calibration`` (Shariff &
Sheffet §4: tree depth, Wishart and Gaussian noise, Prop. 9 and 11 bounds),
``confidence`` (Prop. 4 radius, non-private LinUCB bounds), ``composition``
(advanced composition and zCDP conversion used as checks).
"""

from __future__ import annotations

from dpbandits.privacy.calibration import (
    GaussianCalibration,
    WishartCalibration,
    shariff_sheffet_gaussian,
    shariff_sheffet_wishart,
    tree_depth,
    tree_node_epsilon,
    wishart_degrees_of_freedom,
)
from dpbandits.privacy.composition import advanced_composition_epsilon, zcdp_to_dp_epsilon
from dpbandits.privacy.confidence import (
    ConfidenceRadius,
    RegularizerBounds,
    confidence_radius,
    linucb_constant,
)
from dpbandits.privacy.guarantees import Guarantee

__all__ = [
    "ConfidenceRadius",
    "GaussianCalibration",
    "Guarantee",
    "RegularizerBounds",
    "WishartCalibration",
    "advanced_composition_epsilon",
    "confidence_radius",
    "linucb_constant",
    "shariff_sheffet_gaussian",
    "shariff_sheffet_wishart",
    "tree_depth",
    "tree_node_epsilon",
    "wishart_degrees_of_freedom",
    "zcdp_to_dp_epsilon",
]
