"""Noise calibration of the private bandits of Mishra & Thakurta, UAI 2015.

Every formula of that paper the package uses lives here, once, next to the
appendix section it comes from (Mishra & Thakurta, "(Nearly) Optimal
Differentially Private Stochastic Multi-Arm Bandits", UAI 2015, appendix):

- App. A: tree-based aggregation with Laplace noise, Lap(log T / epsilon)
  per node (:func:`dpbandits.privacy.laplace_tree_scale`);
- Lemma 5 (App. B.1): per-arm Laplace trees with Lap(k log T / epsilon)
  nodes, and the bound |Noise_a(t)| <= k log^2 T log(k T log T / gamma) / epsilon
  holding for all arms and rounds with probability >= 1 - gamma
  (:func:`private_ucb_node_scale`, :func:`lemma5_noise_bound`);
- Lemma 9 (App. C.1): gap-estimation batch sizes
  m_i = 192 k log2 T / (epsilon Delta_i^2) with Delta_i = 2^-i and the batch
  means' Laplace noise of scale 2k / (epsilon m_i)
  (:func:`lemma9_batch_size`, :func:`gap_estimation_schedule`);
- Alg. 3 / Alg. 4 line 2 (App. D.2, D.3): eps0 = 2 epsilon / (d^2 + 3d) per
  entry tree (:func:`contextual_entry_epsilon`, :func:`contextual_node_scales`).

Calibrations (as :func:`dpbandits.privacy.laplace_tree_scale`):
``"paper"`` uses the published formulas exactly (log2 T nodes per leaf,
one fewer than there are; the guarantee then reports the true epsilon,
which can exceed the requested one), ``"tight"`` counts the nodes exactly
(``tree_levels(T)``) and drops composition factors the proof does not need
(see each function).

Logarithms: ``log T`` counting tree levels is log2; the Laplace tail
Pr(|w| > lambda log(1/alpha)) = alpha uses the natural logarithm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpbandits._validation import in_open_unit, positive, positive_int
from dpbandits.privacy.tree import laplace_tree_scale, laplace_tree_scale_checked, tree_levels

__all__ = [
    "GapSchedule",
    "contextual_entry_epsilon",
    "contextual_node_scales",
    "gap_estimation_schedule",
    "lemma5_noise_bound",
    "lemma9_batch_size",
    "lemma9_first_batch_horizon",
    "nodes_per_release",
    "private_mab_regret_lower_bound",
    "private_ucb_node_scale",
    "realized_tree_epsilon",
    "reported_epsilon",
]

_CALIBRATIONS = ("paper", "tight")


def _calibration(calibration: str) -> str:
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"invalid argument `calibration`: must be 'paper' or 'tight', got {calibration!r}")
    return calibration


def nodes_per_release(horizon: int, calibration: str = "paper") -> float:
    """The count of noisy nodes one value reaches / one release sums.

    ``"paper"``: log2 T (App. A, B.1); ``"tight"``: floor(log2 T) + 1
    (:func:`dpbandits.privacy.tree_levels`), which bounds both the nodes a
    leaf lies in and popcount(t) for t <= T. ``horizon`` T >= 2.
    """
    n = positive_int("horizon", horizon, minimum=2)
    return _nodes(n, _calibration(calibration))


def _nodes(n: int, calibration: str) -> float:
    return math.log2(n) if calibration == "paper" else float(n.bit_length())


def _smooth_binary(counter: str, calibration: str) -> bool:
    """Whether ``counter`` is the smooth binary mechanism (validated for
    Laplace noise; it needs ``calibration="tight"``: the paper's formulas
    are the tree's)."""
    from dpbandits.privacy.factorization import counter_choice

    if counter_choice(counter, "laplace") == "binary":
        return False
    if _calibration(calibration) != "tight":
        raise ValueError(
            f"invalid argument `calibration`: counter={counter!r} needs calibration='tight' (the paper's formula "
            "is the tree's)"
        )
    return True


def smooth_binary_nodes(horizon: int) -> tuple[int, int]:
    """(nodes a reward reaches, nodes a release sums) = (H - w, w) of the
    Laplace smooth binary tree for ``horizon`` (:mod:`dpbandits.privacy.smooth_binary`)."""
    from dpbandits.privacy.smooth_binary import smooth_binary_shape

    shape = smooth_binary_shape(horizon, "laplace")
    return shape.zeros, shape.ones


def private_ucb_node_scale(
    k: int, horizon: int, epsilon: float, width: float = 1.0, calibration: str = "paper", counter: str = "binary",
) -> float:
    """Laplace scale of every node of every arm's tree (Private UCB, Alg. 1).

    ``"paper"``: Lap(k log2 T / epsilon) (Lemma 5 proof, App. B.1) for
    rewards in [0, 1], times the reward-range width w for rewards in
    [lo, lo + w]: laplace_tree_scale(T, epsilon / k, w, "paper").

    ``"tight"``: laplace_tree_scale(T, epsilon, w, "tight") =
    w tree_levels(T) / epsilon. Each reward enters exactly one arm's tree
    (the arm pulled), so changing one round's reward moves at most
    tree_levels(T) node values of one tree by at most w: adaptive
    composition of Laplace mechanisms, no factor k (the paper's k composes
    the k trees as if one reward could enter all of them).

    ``counter="smooth-binary"`` (``"tight"`` only; not in the paper): each
    arm's sums come from the smooth binary mechanism (Andersson & Pagh
    2023), a reward reaches H - w nodes: w_r (H - w) / epsilon.

    ``k`` >= 1 arms, ``horizon`` T >= 2, ``epsilon`` > 0, ``width`` > 0.
    """
    k = positive_int("k", k)
    epsilon = positive("epsilon", epsilon)
    if _smooth_binary(counter, calibration):
        reached, _ = smooth_binary_nodes(positive_int("horizon", horizon, minimum=2))
        return positive("width", width) * reached / epsilon
    if _calibration(calibration) == "paper":
        return laplace_tree_scale(horizon, epsilon / k, width, "paper")
    positive_int("horizon", horizon, minimum=2)
    return laplace_tree_scale(horizon, epsilon, width, "tight")


def private_ucb_node_scale_checked(
    k: int, n: int, epsilon: float, width: float, calibration: str, counter: str = "binary"
) -> float:
    """:func:`private_ucb_node_scale` on arguments the learner validated at
    its public boundary (integers k >= 1, n >= 2; finite positive floats;
    "paper" or "tight"; a counter name)."""
    if _smooth_binary(counter, calibration):
        return width * smooth_binary_nodes(n)[0] / epsilon
    return laplace_tree_scale_checked(n, epsilon / k if calibration == "paper" else epsilon, width, calibration)


def realized_tree_epsilon(horizon: int, scale: float, sensitivity: float, counter: str = "binary") -> float:
    """The exact pure-DP epsilon of one Laplace tree with node scale ``scale``
    over leaves of L1 sensitivity ``sensitivity``: tree_levels(T) * s / b
    (a leaf reaches tree_levels(T) nodes; pure DP adds); smooth binary:
    (H - w) s / b."""
    reached = smooth_binary_nodes(horizon)[0] if counter == "smooth-binary" else tree_levels(horizon)
    return reached * positive("sensitivity", sensitivity) / positive("scale", scale)


def reported_epsilon(requested: float, realized: float) -> float:
    """The epsilon a learner reports: the requested one, or the exactly
    accounted one when that is larger (beyond floating-point rounding),
    e.g. the paper calibration's log2 T node count."""
    return realized if realized > requested * (1.0 + 1e-12) else requested


def lemma5_noise_bound(
    scale: float, k: int, horizon: int, gamma: float, calibration: str = "paper", counter: str = "binary",
) -> float:
    """Bound on |Noise_a(t)| for all arms and rounds, w.p. >= 1 - gamma (Lemma 5).

    A release sums at most N nodes of Lap(b); Pr(|Lap(b)| > b ln(1/alpha)) =
    alpha, so with alpha = gamma / (k T N) and a union bound over the N
    nodes, k arms and T rounds, |Noise| <= N b ln(k T N / gamma). With the
    paper's N = log2 T and b = k log2 T / epsilon this is App. B.1's
    k log2^2 T ln(k T log2 T / gamma) / epsilon. ``"tight"`` uses
    N = tree_levels(T); the smooth binary counter N = w.

    ``scale`` b > 0, ``k`` >= 1, ``horizon`` T >= 2, 0 < ``gamma`` < 1.
    """
    b = positive("scale", scale)
    k = positive_int("k", k)
    gamma = in_open_unit("gamma", gamma)
    nodes_per_release(horizon, calibration)
    return lemma5_noise_bound_checked(b, k, horizon, gamma, calibration, counter)


def lemma5_noise_bound_checked(
    scale: float, k: int, n: int, gamma: float, calibration: str, counter: str = "binary"
) -> float:
    """:func:`lemma5_noise_bound` on arguments the learner validated at its
    public boundary (scale > 0, integers k >= 1, n >= 2, 0 < gamma < 1,
    "paper" or "tight"; a counter name)."""
    nodes = _nodes(n, calibration)
    if _smooth_binary(counter, calibration):
        nodes = float(smooth_binary_nodes(n)[1])  # every release sums exactly w nodes
    return nodes * scale * math.log(k * n * nodes / gamma)


def lemma9_batch_size(k: int, horizon: int, epsilon: float, gap: float) -> int:
    """m_i = ceil(192 k log2 T / (epsilon Delta_i^2)) pulls of every arm in
    gap-estimation batch i (Lemma 9, App. C.1; rounded up to an integer).

    ``k`` >= 1, ``horizon`` T >= 2, ``epsilon`` > 0, 0 < ``gap`` < 1.
    """
    k = positive_int("k", k)
    n = positive_int("horizon", horizon, minimum=2)
    epsilon = positive("epsilon", epsilon)
    gap = in_open_unit("gap", gap)
    return math.ceil(192.0 * k * math.log2(n) / (epsilon * gap * gap))


def lemma9_first_batch_horizon(k: int, epsilon: float) -> int:
    """The smallest horizon T with k m_1(T) <= T, m_1 the first
    gap-estimation batch (Delta_1 = 1/2) of :func:`lemma9_batch_size`:
    below it, Lemma 9's first batch alone exceeds the horizon and the
    learner never leaves gap estimation (linear regret). k m_1(T) grows
    like log2 T, so T - k m_1(T) changes sign once; found by doubling
    and bisection. ``k`` >= 1, ``epsilon`` > 0.
    """
    k = positive_int("k", k)
    epsilon = positive("epsilon", epsilon)

    def fits(n: int) -> bool:
        return k * lemma9_batch_size(k, n, epsilon, 0.5) <= n

    hi = 2
    while not fits(hi):
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class GapSchedule:
    """Gap estimation and random pulling (Alg. 2 of Mishra & Thakurta).

    Row i: the gap threshold Delta_i = 2^-(i+1), the batch size m_i, the
    Laplace scale of each released batch mean, and the random pulls per arm
    that follow when the phase stops at batch i.
    """

    gaps: tuple[float, ...]
    batch_sizes: tuple[int, ...]
    batch_scales: tuple[float, ...]
    random_pulls: tuple[int, ...]


def gap_estimation_schedule(
    k: int, horizon: int, epsilon: float, width: float, tree_noise_bound: float,
    calibration: str = "paper",
) -> GapSchedule:
    """The batches of the gap-estimation phase that fit in T rounds.

    - Delta_i = 2^-i for i = 1, 2, ... (Lemma 9: "Delta^_i = 1/2^i"), halved
      each batch; batch i pulls every arm m_i = :func:`lemma9_batch_size`
      times; only batches with k m_i <= T are listed (at least one).
    - Noise (budget epsilon / 2 for this phase, the other half for the
      trees of the sampling phase): batch mean of arm a has sensitivity
      w / m_i (one reward in [lo, lo + w] changes). ``"paper"``:
      Lap(2 k w / (epsilon m_i)) (App. C.1: |mu^ - mu~| <= 2k log(.) /
      (epsilon m_i), i.e. the k means of a batch composed, epsilon / 2 in
      all); ``"tight"``: Lap(2 w / (epsilon m_i)) (each reward is in one
      batch mean of one arm: parallel composition over arms and batches).
    - Random pulls (our choice; the main paper's value is not in the
      appendix): ceil(tree_noise_bound / Delta_i) pulls of every arm, so
      that afterwards the Lemma 5 bound on each tree's noise, divided by
      the arm's pulls, is at most Delta_i: the sampling phase starts with
      noisy means whose noise is below the estimated gap's order
      (Lemma 9: Delta / 3 <= Delta^ <= 2 Delta).

    ``k`` >= 1, ``horizon`` T >= 2, ``epsilon`` > 0, ``width`` > 0,
    ``tree_noise_bound`` >= 0.
    """
    k = positive_int("k", k)
    n = positive_int("horizon", horizon, minimum=2)
    epsilon = positive("epsilon", epsilon)
    w = positive("width", width)
    if not (math.isfinite(tree_noise_bound) and tree_noise_bound >= 0):
        raise ValueError(f"invalid argument `tree_noise_bound`: must be finite and >= 0, got {tree_noise_bound!r}")
    factor = 2.0 * k if _calibration(calibration) == "paper" else 2.0
    gaps: list[float] = []
    sizes: list[int] = []
    scales: list[float] = []
    pulls: list[int] = []
    i = 1
    while True:
        gap = 2.0**-i
        m = lemma9_batch_size(k, n, epsilon, gap)
        if gaps and k * m > n:
            break
        gaps.append(gap)
        sizes.append(m)
        scales.append(factor * w / (epsilon * m))
        pulls.append(math.ceil(tree_noise_bound / gap))
        if k * m > n:
            break
        i += 1
    return GapSchedule(tuple(gaps), tuple(sizes), tuple(scales), tuple(pulls))


def contextual_entry_epsilon(epsilon: float, d: int) -> float:
    """eps0 = 2 epsilon / (d^2 + 3d) (Alg. 3 and Alg. 4, line 2).

    There are d(d+1)/2 trees for A_ij (i <= j) and d for b_i, (d^2 + 3d)/2
    in all; each eps0-DP, they compose to epsilon.
    ``epsilon`` > 0, ``d`` >= 1.
    """
    epsilon = positive("epsilon", epsilon)
    d = positive_int("d", d)
    return 2.0 * epsilon / (d * d + 3 * d)


def contextual_node_scales(
    d: int, horizon: int, epsilon: float, L: float = 1.0, B: float = 1.0, calibration: str = "paper",
    counter: str = "binary",
) -> tuple[float, float]:
    """(scale of every A_ij tree's nodes, scale of every b_i tree's nodes).

    Each tree is eps0-DP (:func:`contextual_entry_epsilon`) through
    :func:`dpbandits.privacy.laplace_tree_scale` with the entry's
    sensitivity under ||z|| <= L, |y| <= B (the appendix's trees assume
    unit sensitivity; with these bounds): z_i^2 lies in [0, L^2] and
    |z_i z_j| <= (z_i^2 + z_j^2) / 2 <= L^2 / 2, so an A entry changes by at
    most L^2; |z_i y| <= L B, so a b entry changes by at most 2 L B.

    ``counter="smooth-binary"`` (``"tight"`` only; not in the paper): the
    entry sums by the smooth binary mechanism, a round reaches H - w nodes
    of each entry's counter: scale = sensitivity (H - w) / eps0.

    ``d`` >= 1, ``horizon`` T >= 2, ``epsilon``, ``L``, ``B`` > 0.
    """
    eps0 = contextual_entry_epsilon(epsilon, d)
    L = positive("L", L)
    B = positive("B", B)
    _calibration(calibration)
    positive_int("horizon", horizon, minimum=2)
    if _smooth_binary(counter, calibration):
        reached, _ = smooth_binary_nodes(horizon)
        return L * L * reached / eps0, 2.0 * L * B * reached / eps0
    return (
        laplace_tree_scale(horizon, eps0, L * L, calibration),
        laplace_tree_scale(horizon, eps0, 2.0 * L * B, calibration),
    )


def contextual_realized_epsilon(
    d: int, horizon: int, scale_a: float, scale_b: float, L: float = 1.0, B: float = 1.0, counter: str = "binary",
) -> float:
    """The exact pure-DP epsilon of Alg. 3/4's trees with node scales
    (``scale_a``, ``scale_b``): basic composition of the d(d+1)/2 A-entry
    trees (sensitivity L^2) and the d b-entry trees (sensitivity 2 L B),
    each accounted by :func:`realized_tree_epsilon` (tree_levels(T) nodes
    per leaf). Equals epsilon for the ``"tight"`` scales of
    :func:`contextual_node_scales`, and epsilon tree_levels(T) / log2 T for
    the ``"paper"`` ones.
    """
    d = positive_int("d", d)
    L = positive("L", L)
    B = positive("B", B)
    return (d * (d + 1) / 2) * realized_tree_epsilon(horizon, scale_a, L * L, counter) + d * realized_tree_epsilon(
        horizon, scale_b, 2.0 * L * B, counter
    )


def private_mab_regret_lower_bound(k: int, horizon: int, epsilon: float) -> float:
    """(k - 1) ln(n) / (200 epsilon): Shariff & Sheffet 2018, Cor. 15.

    The proof of Cor. 15 sums Claim 14's log(n) / (100 epsilon Delta_a)
    pulls (w.p. >= 1/2) of each suboptimal arm a, at cost Delta_a each:
    sum_a Delta_a log(n) / (200 epsilon Delta_a) = (k - 1) log(n) / (200 epsilon).
    The logarithm is natural (the proof uses exp(0.06 log n) = n^0.06). It
    holds for sufficiently large n and algorithms with regret <= n^(3/4)
    (Claim 14), on top of the non-private Omega(sum_a log(n) / Delta_a).

    ``k`` >= 2, ``horizon`` n >= 1, ``epsilon`` > 0.
    """
    k = positive_int("k", k, minimum=2)
    n = positive_int("horizon", horizon)
    epsilon = positive("epsilon", epsilon)
    return (k - 1) * math.log(n) / (200.0 * epsilon)
