"""Calibration of fixed-budget private best-arm identification: DP-BAI of
Chen, Karthik, Chee & Tan 2024, "Fixed-budget differentially private best
arm identification" (ICLR, arXiv 2401.09073), used by
:mod:`dpbandits.learners.bai_fixed_budget`.

DP-BAI (Section 3, Algorithm 1) adds to the empirical mean of the n
rewards in [0, 1] of each arm it pulls in a phase Laplace noise of scale
1 / (epsilon n): the mean's L1 sensitivity to one reward is 1 / n. The
engine releases the phase sum instead (sensitivity 1) with Laplace noise
of scale 1 / epsilon and divides by n afterwards, which is the same
release: sum + Lap(1 / eps) over n is mean + Lap(1 / (eps n)). Every
reward enters exactly one phase sum, so the releases compose in parallel
and the whole run is epsilon-DP in the rewards (the paper's Theorem on
privacy of DP-BAI; the adaptive argument is the one of the per-batch
releases in :func:`dpbandits.privacy.bai.batch_sum_laplace_scale`).
"""

from __future__ import annotations

from dpbandits._validation import positive, positive_int
from dpbandits.privacy.bai import batch_sum_laplace_scale

__all__ = ["phase_mean_laplace_scale", "phase_sum_laplace_scale"]


def phase_sum_laplace_scale(epsilon: float) -> float:
    """The Laplace scale of one released phase sum of rewards in [0, 1]:
    1 / epsilon (L1 sensitivity 1; the one formula of
    :func:`dpbandits.privacy.bai.batch_sum_laplace_scale`, which every
    per-batch sum of the library's BAI learners uses).

    Examples
    --------
    >>> phase_sum_laplace_scale(0.5)
    2.0
    """
    return batch_sum_laplace_scale(epsilon)


def phase_mean_laplace_scale(epsilon: float, n: int) -> float:
    """The scale of the same noise on the phase mean of ``n`` rewards,
    1 / (epsilon n) (Chen et al. 2024, Algorithm 1: Laplace noise on the
    empirical mean of each pulled arm): ``phase_sum_laplace_scale(epsilon)
    / n``, for reading the paper's form.

    Examples
    --------
    >>> phase_mean_laplace_scale(0.5, 4)
    0.5
    """
    return phase_sum_laplace_scale(positive("epsilon", epsilon)) / positive_int("n", n)
