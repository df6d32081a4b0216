"""Tree-based (binary-mechanism) counters: depth, levels and noise scales.

A tree counter over n inputs keeps one noisy node per dyadic interval and
releases every prefix sum as a sum of at most m = 1 + ceil(log2 n) nodes,
while each input lies in floor(log2 n) + 1 nodes (one per level). This
module holds what follows from that structure alone, whatever the statistic
and the learner:

- :func:`tree_depth` (m, Shariff & Sheffet 2018 §2 and §4 / App. A.2) and
  :func:`tree_levels` (the nodes one leaf reaches; Mishra & Thakurta App. A
  and Agarwal & Singh Lemma 3.3 count log2 T, one too few);
- :func:`gaussian_tree_sigma`: the per-node Gaussian sigma for which the
  whole tree is (epsilon, delta)-DP under exact accounting (Balle & Wang
  2018, Thm. 8; Dong, Roth & Su 2022, Cor. 3.3);
- :func:`laplace_tree_scale`: the per-node Laplace scale for pure DP of the
  whole tree (Mishra & Thakurta App. A; Agarwal & Singh Lemma 3.3);
- :func:`tree_node_epsilon`: the per-node target of advanced composition
  over the m nodes of a row (Shariff & Sheffet App. A.2).

Each public function validates its arguments; its ``_checked`` form is the
formula alone, for callers that validated them at their own public
boundary. The Shariff & Sheffet calibrations built on these helpers live in
:mod:`dpbandits.privacy.calibration`.
"""

from __future__ import annotations

import math

from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = [
    "gaussian_tree_sigma",
    "laplace_tree_scale",
    "tree_depth",
    "tree_levels",
    "tree_node_epsilon",
]


def tree_depth(horizon: int) -> int:
    """m = 1 + ceil(log2 n), the depth of the tree-based mechanism.

    Shariff & Sheffet §2 (m := ceil(log2(n) + 1)) and §4 / App. A.2: every
    prefix sum is a sum of at most m tree nodes, and every input row lies in
    exactly m nodes (one per level). Computed exactly with integers:
    ceil(log2 n) = (n - 1).bit_length() for n >= 1, so n = 1 -> 1,
    n = 2 -> 2, n = 5 * 10^7 -> 27.

    ``horizon``: integer n >= 1.
    """
    return tree_depth_checked(positive_int("horizon", horizon))


def tree_depth_checked(n: int) -> int:
    """:func:`tree_depth` of an integer n >= 1 its caller validated."""
    return 1 + (n - 1).bit_length()


def tree_levels(horizon: int) -> int:
    """floor(log2 n) + 1: the number of tree nodes any one leaf lies in.

    A leaf of a tree over n leaves lies in one node per level, and the
    binary mechanism completes (and releases) every node whose leaves are
    all <= n, so a leaf's value reaches exactly floor(log2 n) + 1 noisy
    nodes in the worst case (the first leaf, when n is a power of two: the
    leaf, its ancestors and the root). This is m - 1 when n is not a power
    of two and m = 1 + log2 n when it is; Mishra & Thakurta App. A and
    Agarwal & Singh Lemma 3.3 count log2 T, one too few for every T.

    ``horizon``: integer n >= 1.
    """
    return positive_int("horizon", horizon).bit_length()


def gaussian_tree_sigma(
    horizon: int, epsilon: float, delta: float, sensitivity: float, *, calibration: str
) -> float:
    """Smallest per-node Gaussian noise for which the whole tree is (epsilon, delta)-DP.

    ``calibration="tight"``: exact accounting. A node adding N(0, sigma^2)
    noise in whitened coordinates to a sum of L2 sensitivity ``sensitivity``
    is a Gaussian mechanism with mu = sensitivity / sigma; one leaf reaches
    ``tree_levels(n)`` nodes, so the tree is a Gaussian mechanism with
    mu_tree = sqrt(levels) sensitivity / sigma (Dong, Roth & Su 2022,
    Cor. 3.3: Gaussian compositions are exactly Gaussian), and it is
    (epsilon, delta)-DP iff mu_tree <= gaussian_mu(epsilon, delta) (Balle &
    Wang 2018, Thm. 8: the exact privacy curve). Hence
    sigma = sqrt(levels) * sensitivity / gaussian_mu(epsilon, delta).

    For the symmetrized (d+1) x (d+1) node noise of Shariff & Sheffet §4.2
    the whitened sensitivity is Ltilde^2 (see
    :func:`dpbandits.privacy.calibration.shariff_sheffet_gaussian`).

    ``calibration`` must be given (no default, so that no call silently
    differs from the learners, whose default is "paper"): only ``"tight"``
    is defined here; each paper's formula lives with its learner's
    calibration function.
    """
    if calibration != "tight":
        raise ValueError(f"invalid argument `calibration`: only 'tight' is defined here, got {calibration!r}")
    return gaussian_tree_sigma_checked(
        positive_int("horizon", horizon),
        positive("epsilon", epsilon),
        in_open_unit("delta", delta),
        positive("sensitivity", sensitivity),
    )


def gaussian_tree_sigma_checked(n: int, epsilon: float, delta: float, sensitivity: float) -> float:
    """:func:`gaussian_tree_sigma` (``calibration="tight"``) on an integer
    n >= 1, finite epsilon > 0 and sensitivity > 0 and a delta in (0, 1)
    that its caller validated at its own public boundary."""
    from dpbandits.privacy.analytic_gaussian import gaussian_mu_checked

    levels = n.bit_length()  # tree_levels
    # gaussian_mu returns the private side of the boundary; the relative
    # 1e-12 keeps it there after the divisions here and in any re-check.
    return _finite_scale(
        math.sqrt(levels) * sensitivity / gaussian_mu_checked(epsilon, delta) * (1.0 + 1e-12), "sigma"
    )


def laplace_tree_scale(
    horizon: int, epsilon: float, sensitivity: float = 1.0, calibration: str = "paper"
) -> float:
    """Laplace scale b of each node of a tree counter for epsilon-DP of the whole tree.

    Pure DP composes by addition over the nodes one leaf reaches, and a
    change of L1 size ``sensitivity`` in one leaf moves each of them by at
    most that much, so the tree is (levels * sensitivity / b)-DP.

    - ``"paper"``: b = sensitivity * log2(T) / epsilon (Mishra & Thakurta
      App. A, Lap(log T / epsilon); Agarwal & Singh Lemma 3.3,
      lambda >= ||D||_1 log T / epsilon). One leaf reaches
      tree_levels(T) = floor(log2 T) + 1 nodes, so the paper's count log2 T
      falls short for every T >= 2: by exactly one node when T is a power
      of two, by 1 - frac(log2 T) < 1 otherwise. The true guarantee is
      (tree_levels(T) / log2 T) * epsilon: 1.1 epsilon at T = 1024, but
      only 1.0035 epsilon at T = 10^6. Kept for reproduction only.
    - ``"tight"``: b = sensitivity * tree_levels(T) / epsilon, the exact count.

    ``horizon`` integer T >= 2 for "paper" (log2 1 = 0), >= 1 for "tight".
    """
    n = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    sensitivity = positive("sensitivity", sensitivity)
    if calibration not in ("paper", "tight"):
        raise ValueError(f"invalid argument `calibration`: must be 'paper' or 'tight', got {calibration!r}")
    if calibration == "paper" and n < 2:
        raise ValueError("invalid argument `horizon`: the paper's log2(T) is 0 for T = 1")
    return laplace_tree_scale_checked(n, epsilon, sensitivity, calibration)


def laplace_tree_scale_checked(n: int, epsilon: float, sensitivity: float, calibration: str) -> float:
    """:func:`laplace_tree_scale` on arguments its caller validated at its own
    public boundary (an integer n >= 2, or >= 1 for "tight"; finite positive
    floats; "paper" or "tight"): the formula alone, nothing checked twice.
    The result is still checked to be a finite scale (an overflow of the
    arithmetic, not an input error)."""
    levels = math.log2(n) if calibration == "paper" else n.bit_length()
    return _finite_scale(sensitivity * levels / epsilon, "scale")


def _finite_scale(value: float, what: str) -> float:
    """``value``, or ValueError when the inputs made it overflow to inf (a
    huge sensitivity or a subnormal epsilon would give an infinite noise
    scale)."""
    if not math.isfinite(value):
        raise ValueError(f"invalid arguments: the noise {what} overflows (epsilon too small or sensitivity too large)")
    return value


def tree_node_epsilon(epsilon: float, delta: float, m: int) -> float:
    """Per-node epsilon_0 = epsilon / sqrt(8 m ln(2/delta)) (App. A.2, §4).

    With this epsilon_0 each of the m nodes containing a row spends
    epsilon_0 sqrt(2 m ln(2/delta)) = epsilon / 2 of the budget in the
    leading term of advanced composition with delta' = delta/2.

    ``epsilon`` finite > 0, 0 < ``delta`` < 1, ``m`` integer >= 1.
    """
    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    m = positive_int("m", m)
    return tree_node_epsilon_checked(epsilon, delta, m)


def tree_node_epsilon_checked(epsilon: float, delta: float, m: int) -> float:
    """:func:`tree_node_epsilon` on arguments its caller validated at its own
    public boundary (see :func:`laplace_tree_scale_checked`)."""
    return epsilon / math.sqrt(8.0 * m * math.log(2.0 / delta))
