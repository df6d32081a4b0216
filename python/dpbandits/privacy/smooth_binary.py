"""Accounting of the smooth binary mechanism (Andersson & Pagh, "A smooth
binary mechanism for efficient private continual observation", NeurIPS
2023, arXiv:2306.09666).

What we could reach of the paper: its abstract (noise generation in
constant average time per value, variance about 4x below the binary
mechanism's, the same noise distribution at every step) and its summary
result Var[M(t)] = (1 + o(1)) log^2 T / (8 rho) under rho-zCDP; not the
numbered algorithm and theorem statements. The construction below follows
the authors' reference implementation (github.com/jodander/smooth-binary-mechanism,
``smooth_binary_mechanism_noise``), and every quantity used
here is checked exactly (enumeration of the encoder's columns, the per-step
law) and empirically (audits) in tests/test_smooth_binary.py.

The mechanism (Rust: ``rust/src/counter/smooth_binary.rs``). A binary tree
of height H is read only at the leaves with exactly w set bits, in
increasing order b_1 < b_2 < ...; x_t sits at leaf b_t, and release t is
the tree's prefix sum over leaves [0, b_{t+1}): one noisy node per set bit
of b_{t+1}. A node of level i is only read by queries with bit i set and
covers only leaves with bit i clear, so:

    release variance = w * (node variance), the same at every t          (S1)
    read nodes covering one leaf <= H - w (its zero bits)                 (S2)

so the mechanism's encoder (0/1 incidence of read nodes and leaves) has L2
column norm <= sqrt(H - w) and L1 column norm <= H - w (times the input's
L2 / L1 sensitivity). The bound (S2) is attained at every horizon tested
(enumeration in the tests); it is what the calibration uses. The leaves
must number binom(H, w) >= T + 1 (b_1 is never a query).

Choice of (H, w) (:func:`smooth_binary_shape`). The authors' Gaussian
choice is w = H / 2, H the smallest even height with binom(H, H/2) > T.
Here every 1 <= w < H <= 62 with enough leaves is a candidate and the one
minimising the largest release variance at a fixed guarantee is taken:

    Gaussian (sigma ~ sqrt(H - w)):  (H - w) * w                          (S3)
    Laplace (b ~ (H - w)):           (H - w)^2 * w                        (S4)

(ties: the smaller H, then the smaller w). At T = 2^20 this gives
(H, w) = (23, 10), cost 130 against the binary tree's 21 * 20 = 420
(Gaussian), and (33, 27), cost 972 against 21^2 * 20 = 8820 (Laplace).

Calibration. Gaussian: the released node collection is one Gaussian
mechanism of L2 sensitivity sqrt(H - w) Delta, so sigma = sqrt(H - w) Delta
/ mu*(epsilon, delta) (Balle & Wang 2018, Thm. 8; as
:func:`dpbandits.privacy.tree.gaussian_tree_sigma` for the tree).
Laplace: L1 sensitivity (H - w) Delta_1, so b = (H - w) Delta_1 / epsilon
(pure epsilon-DP). Lattice noise rounds each input to the lattice before it
enters the tree (as the binary tree does): the per-input allowance of
:mod:`dpbandits.privacy.secure` applies to Delta before it is multiplied
by the column norm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits._validation import in_open_unit, positive, positive_int

__all__ = [
    "MAX_HEIGHT",
    "SmoothBinaryShape",
    "smooth_binary_column_norm",
    "smooth_binary_gaussian_sigma",
    "smooth_binary_laplace_scale",
    "smooth_binary_leaves",
    "smooth_binary_matrices",
    "smooth_binary_release_variance",
    "smooth_binary_shape",
]

#: Largest tree height the engine accepts (leaves are 64-bit integers).
MAX_HEIGHT = 62

Family = Literal["gaussian", "laplace"]


@dataclass(frozen=True)
class SmoothBinaryShape:
    """The tree of a smooth binary counter: ``height`` H levels, queries
    at leaves of weight ``ones`` w; ``zeros`` = H - w nodes cover a leaf (S2)."""

    height: int
    ones: int

    @property
    def zeros(self) -> int:
        """H - w: the nodes that cover one leaf (an input reaches this many)."""
        return self.height - self.ones


def _family(noise_family: str) -> Family:
    if noise_family not in ("gaussian", "laplace"):
        raise ValueError(
            f"invalid argument `noise_family`: the smooth binary mechanism serves 'gaussian' or 'laplace' "
            f"noise, got {noise_family!r}"
        )
    return noise_family  # type: ignore[return-value]


def smooth_binary_shape(horizon: int, noise_family: str = "gaussian") -> SmoothBinaryShape:
    """(H, w) minimising (S3) (Gaussian) or (S4) (Laplace) among trees with
    binom(H, w) >= horizon + 1 leaves of weight w, 1 <= w < H <= 62."""
    horizon = positive_int("horizon", horizon)
    family = _family(noise_family)
    power = 1 if family == "gaussian" else 2
    best: tuple[int, int, int] | None = None
    for height in range(2, MAX_HEIGHT + 1):
        for ones in range(1, height):
            if math.comb(height, ones) < horizon + 1:
                continue
            cost = (height - ones) ** power * ones
            if best is None or cost < best[0]:
                best = (cost, height, ones)
    if best is None:
        raise ValueError(f"invalid argument `horizon`: {horizon} exceeds the smooth binary tree's capacity")
    return SmoothBinaryShape(best[1], best[2])


def smooth_binary_column_norm(horizon: int, noise_family: str = "gaussian") -> float:
    """(S2): the encoder's largest column norm, sqrt(H - w) (L2, Gaussian)
    or H - w (L1, Laplace), for the tree :func:`smooth_binary_shape` picks."""
    shape = smooth_binary_shape(horizon, noise_family)
    return math.sqrt(shape.zeros) if noise_family == "gaussian" else float(shape.zeros)


def smooth_binary_release_variance(horizon: int, noise_family: str = "gaussian") -> float:
    """(S1): every release's variance per entry in units of one node's
    variance: w, at every t (sigma^2 w for Gaussian nodes, 2 b^2 w for
    Laplace nodes)."""
    return float(smooth_binary_shape(horizon, noise_family).ones)


def smooth_binary_gaussian_sigma(horizon: int, epsilon: float, delta: float, sensitivity: float) -> float:
    """Node sigma for (epsilon, delta)-DP of every release: sqrt(H - w)
    sensitivity / mu*(epsilon, delta) (module docstring)."""
    from dpbandits.privacy.analytic_gaussian import gaussian_mu

    epsilon = positive("epsilon", epsilon)
    delta = in_open_unit("delta", delta)
    sensitivity = positive("sensitivity", sensitivity)
    norm = smooth_binary_column_norm(horizon, "gaussian")
    return norm * sensitivity / gaussian_mu(epsilon, delta) * (1.0 + 1e-12)


def smooth_binary_laplace_scale(horizon: int, epsilon: float, sensitivity_l1: float) -> float:
    """Node Laplace scale for epsilon-DP of every release: (H - w) Delta_1 / epsilon."""
    epsilon = positive("epsilon", epsilon)
    sensitivity_l1 = positive("sensitivity_l1", sensitivity_l1)
    return smooth_binary_column_norm(horizon, "laplace") * sensitivity_l1 / epsilon


def smooth_binary_leaves(height: int, ones: int, count: int) -> list[int]:
    """b_1 < b_2 < ... < b_count: the ``height``-bit numbers with ``ones``
    set bits in increasing order (Gosper's successor, as the engine)."""
    x, out = (1 << ones) - 1, []
    for _ in range(count):
        if x >> height:
            raise ValueError(f"invalid argument `count`: only binom({height}, {ones}) leaves of weight {ones}")
        out.append(x)
        low = x & -x
        r = x + low
        x = (((r ^ x) >> 2) // low) | r
    return out


def smooth_binary_matrices(
    height: int, ones: int, horizon: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Dense (B, C) of the mechanism over ``horizon`` steps, for tests and
    audits at small horizons: C (nodes x steps) is 1 where a read node
    covers leaf b_s, B (steps x nodes) is 1 where release t reads the node;
    B C = A (prefix sums), release t = A x + B z. Nodes are numbered in the
    order the engine first reads (and draws) them."""
    horizon = positive_int("horizon", horizon)
    leaves = smooth_binary_leaves(height, ones, horizon + 1)
    index: dict[tuple[int, int], int] = {}
    reads: list[list[int]] = []
    for t in range(1, horizon + 1):
        query = leaves[t]
        row = []
        for level in range(height):
            if query >> level & 1:
                row.append(index.setdefault((level, query >> (level + 1)), len(index)))
        reads.append(row)
    B = np.zeros((horizon, len(index)))
    for t, row in enumerate(reads):
        B[t, row] = 1.0
    C = np.zeros((len(index), horizon))
    for (level, prefix), j in index.items():
        for s, leaf in enumerate(leaves[:horizon]):
            if leaf >> (level + 1) == prefix and not leaf >> level & 1:
                C[j, s] = 1.0
    return B, C
