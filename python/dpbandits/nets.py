"""zeta-nets of the unit ball and the unit sphere (Hanna et al., Lemma 1).

Alg. 1-3 (line 2) replace a continuous action set A by a finite
zeta-net N subset of A: every a in A has some a' in N with ||a - a'|| <= zeta
(zeta = 1/T in the paper). Lemma 1 (Vershynin, Cor. 4.2.13) shows a net of
at most (3/zeta)^d + d points exists; we build explicit nets, which may be
somewhat larger, and refuse (ValueError naming ``zeta``) when the net
would have more than ``max_actions`` points, so a net is for small d only.

- sphere, d = 2: n = ceil(pi / zeta) equally spaced unit vectors; a point
  of the circle is within 2 sin(pi / (2n)) <= pi / n <= zeta of one.
- ball, any d: the grid h Z^d with h = 2 zeta / sqrt(d) (every point of
  R^d is within h sqrt(d) / 2 = zeta of a grid point), restricted to
  ||g|| <= 1 + zeta, with points outside the ball projected onto it
  (projection onto a convex set does not increase distances to its points).
- sphere, d >= 3: the grid with h = zeta / sqrt(d) (distance zeta / 2),
  restricted to | ||g|| - 1 | <= zeta / 2 and normalized; the
  normalization moves a point by at most zeta / 2 more.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits._sizes import check_bytes
from dpbandits._validation import positive, positive_int

__all__ = ["zeta_net"]

_MAX_GRID = 20_000_000


def zeta_net(
    kind: Literal["sphere", "ball"], d: int, zeta: float, max_actions: int = 1_000_000
) -> NDArray[np.float64]:
    """A zeta-net (rows) of the unit sphere or ball of R^d (Lemma 1).

    ``d`` an integer >= 2 for the sphere (>= 1 for the ball), ``zeta`` in
    (0, 1], ``max_actions`` an integer >= 1: the largest net accepted.
    """
    d = positive_int("d", d)
    zeta = positive("zeta", zeta)
    if zeta > 1.0:
        raise ValueError(f"invalid argument `zeta`: must lie in (0, 1], got {zeta!r}")
    max_actions = positive_int("max_actions", max_actions)
    if kind == "sphere":
        if d < 2:
            raise ValueError("invalid argument `d`: the unit sphere needs d >= 2")
        if d == 2:
            n = math.ceil(math.pi / zeta)
            _check_size(n, max_actions, zeta, kind, d)
            angles = 2.0 * math.pi * np.arange(n) / n
            return np.column_stack([np.cos(angles), np.sin(angles)])
        h = zeta / math.sqrt(d)
        shell = (1.0 - zeta / 2.0, 1.0 + zeta / 2.0)
    elif kind == "ball":
        h = 2.0 * zeta / math.sqrt(d)
        shell = (0.0, 1.0 + zeta)
    else:
        raise ValueError(f"invalid argument `actions`: must be an array, 'sphere' or 'ball', got {kind!r}")
    # The size estimate is kept in logarithms (area * zeta / h**d overflows
    # for d in the thousands), and a d for which no zeta <= 1 fits is named.
    log_estimate = _log_net_size(kind, d, zeta)
    if log_estimate > math.log(max_actions):
        if _log_net_size(kind, d, 1.0) > math.log(max_actions):
            digits = log_estimate / math.log(10)
            raise ValueError(
                f"invalid argument `d`: a zeta-net of the unit {kind} in d = {d} has more than max_actions = "
                f"{max_actions:,} points at every zeta <= 1 (about 10^{digits:.4g} at zeta = {zeta:g}); "
                f"d <= {_largest_d(kind, zeta, max_actions)} works at this zeta"
            )
        _check_size(math.ceil(math.exp(min(log_estimate, 700.0))), max_actions, zeta, kind, d)
    j = math.ceil(shell[1] / h)
    log_grid = d * math.log(2 * j + 1)
    if log_grid > math.log(_MAX_GRID):
        raise ValueError(
            f"invalid argument `zeta`: a zeta-net of the {kind} in d = {d} at zeta = {zeta:g} needs a grid of "
            f"{math.exp(min(log_grid, 700.0)):.3g} points to build (limit {_MAX_GRID:.0e}); use a larger zeta"
        )
    # The grid, its stacked copy and its norms: checked before numpy allocates them.
    check_bytes("zeta", zeta, 3 * 8 * (d + 1) * (2 * j + 1) ** d,
                f"the {(2 * j + 1) ** d:,}-point grid of a zeta-net in R^{d}")
    axis = h * np.arange(-j, j + 1)
    grid = np.stack(np.meshgrid(*([axis] * d), indexing="ij"), axis=-1).reshape(-1, d)
    norms = np.linalg.norm(grid, axis=1)
    keep = (norms >= shell[0]) & (norms <= shell[1])
    pts, nrm = grid[keep], norms[keep]
    if kind == "sphere":
        pts = pts / nrm[:, None]
        pts = np.unique(np.round(pts, 12), axis=0)
    else:
        outside = nrm > 1.0
        pts[outside] /= nrm[outside][:, None]
        pts = np.unique(np.round(pts, 12), axis=0)
    _check_size(len(pts), max_actions, zeta, kind, d)
    return np.ascontiguousarray(pts)


def _check_size(n: int, max_actions: int, zeta: float, kind: str, d: int) -> None:
    if n > max_actions:
        raise ValueError(
            f"invalid argument `zeta`: the zeta-net of the unit {kind} in d = {d} at zeta = {zeta:g} has about "
            f"{n:,} points, more than max_actions = {max_actions:,}; use a larger zeta or raise max_actions"
        )


def _log_net_size(kind: str, d: int, zeta: float) -> float:
    """log of the net's size estimate: area(S^{d-1}) zeta / h^d for the
    sphere (h = zeta / sqrt(d)), vol(B^d) / h^d for the ball
    (h = 2 zeta / sqrt(d)), in logarithms (no overflow at any d)."""
    if kind == "sphere":
        log_measure = math.log(2.0) + (d / 2) * math.log(math.pi) - math.lgamma(d / 2) + math.log(zeta)
        h = zeta / math.sqrt(d)
    else:
        log_measure = (d / 2) * math.log(math.pi) - math.lgamma(d / 2 + 1)
        h = 2.0 * zeta / math.sqrt(d)
    return log_measure - d * math.log(h)


def _largest_d(kind: str, zeta: float, max_actions: int) -> int:
    """The largest d whose net at ``zeta`` fits in ``max_actions`` (the
    estimate grows with d; 0 when none does)."""
    best, d = 0, 2 if kind == "sphere" else 1
    while d < 100_000 and _log_net_size(kind, d, zeta) <= math.log(max_actions):
        best, d = d, d + 1
    return best
