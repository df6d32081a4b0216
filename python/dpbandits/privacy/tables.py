"""Tables of calibrated noise, for the documentation and its test.

``sigma_table()`` lists the per-node noise sigma of the Gaussian tree of
Shariff & Sheffet §4.2 under ``calibration="paper"`` and ``"tight"`` on
the grid the documentation shows; ``docs/privacy-calibration.md`` holds
its Markdown rendering, and a test keeps the two identical.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpbandits.privacy.calibration import shariff_sheffet_gaussian

DIMENSIONS = (5, 20)
HORIZONS = (100_000, 50_000_000)
EPSILONS = (0.1, 1.0, 10.0)
DELTAS = (0.1, 1e-6)


@dataclass(frozen=True)
class SigmaRow:
    d: int
    horizon: int
    epsilon: float
    delta: float
    paper: float | None
    tight: float
    shift_paper: float | None
    shift_tight: float


def _paper_or_none(d: int, n: int, eps: float, delta: float) -> tuple[float | None, float | None]:
    try:
        c = shariff_sheffet_gaussian(d, n, eps, delta, calibration="paper")
    except ValueError:
        # The paper's sigma does not certify this (eps, delta) (see
        # shariff_sheffet_gaussian): no paper value to show.
        return None, None
    return c.sigma, c.shift


def sigma_table() -> list[SigmaRow]:
    """sigma and the release shift 2 Upsilon under both calibrations
    (L = B_tilde = 1, alpha = 1/n)."""
    rows = []
    for d in DIMENSIONS:
        for n in HORIZONS:
            for eps in EPSILONS:
                for delta in DELTAS:
                    paper, shift_paper = _paper_or_none(d, n, eps, delta)
                    tight = shariff_sheffet_gaussian(d, n, eps, delta, calibration="tight")
                    rows.append(SigmaRow(d, n, eps, delta, paper, tight.sigma, shift_paper, tight.shift))
    return rows


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.4g}"


def markdown_sigma_table() -> str:
    """The table as Markdown (what docs/privacy-calibration.md shows)."""
    head = (
        "| d | n | epsilon | delta | sigma (paper) | sigma (tight) | ratio | shift 2 Upsilon (paper) "
        "| shift 2 Upsilon (tight) |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in sigma_table():
        ratio = "n/a" if r.paper is None else f"{r.paper / r.tight:.1f}x"
        lines.append(
            f"| {r.d} | {r.horizon:.0e} | {r.epsilon:g} | {r.delta:g} | {_fmt(r.paper)} | {_fmt(r.tight)} "
            f"| {ratio} | {_fmt(r.shift_paper)} | {_fmt(r.shift_tight)} |"
        )
    return head + "\n".join(lines) + "\n"
