"""Privacy of the Laplace mechanism.

>>> from dpbandits.privacy import laplace_epsilon
>>> laplace_epsilon(sensitivity_l1=2.0, scale=4.0)
0.5
"""

from __future__ import annotations

import math

from dpbandits._validation import positive

__all__ = ["laplace_epsilon"]


def laplace_epsilon(sensitivity_l1: float, scale: float) -> float:
    """epsilon = Delta_1 / b: adding Lap(b) noise to each coordinate of a
    statistic of L1 sensitivity Delta_1 is epsilon-DP (Dwork, McSherry,
    Nissim & Smith 2006; Dwork & Roth 2014, Thm. 3.6), and no smaller
    epsilon holds (the privacy loss reaches Delta_1 / b).

    ``sensitivity_l1`` > 0 finite; ``scale`` b > 0 finite.
    """
    sensitivity_l1 = positive("sensitivity_l1", sensitivity_l1)
    scale = positive("scale", scale)
    epsilon = sensitivity_l1 / scale
    if not math.isfinite(epsilon):
        # A subnormal scale makes the quotient overflow to inf.
        raise ValueError(f"invalid argument `scale`: {scale!r} is too small (epsilon overflows)")
    return epsilon
