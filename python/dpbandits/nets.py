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
        estimate = _sphere_area(d) * zeta / h**d
    elif kind == "ball":
        h = 2.0 * zeta / math.sqrt(d)
        shell = (0.0, 1.0 + zeta)
        estimate = _ball_volume(d) / h**d
    else:
        raise ValueError(f"invalid argument `actions`: must be an array, 'sphere' or 'ball', got {kind!r}")
    _check_size(math.ceil(estimate), max_actions, zeta, kind, d)
    j = math.ceil(shell[1] / h)
    if (2 * j + 1) ** d > _MAX_GRID:
        raise ValueError(
            f"invalid argument `zeta`: a zeta-net of the {kind} in d = {d} at zeta = {zeta:g} needs a grid of "
            f"{(2 * j + 1) ** d:.3g} points to build (limit {_MAX_GRID:.0e}); use a larger zeta"
        )
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


def _ball_volume(d: int) -> float:
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1)


def _sphere_area(d: int) -> float:
    return 2 * math.pi ** (d / 2) / math.gamma(d / 2)
