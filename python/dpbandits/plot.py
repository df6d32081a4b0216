"""Figures: cumulative regret over time, mean and spread over seeds.

Needs matplotlib (``pip install 'dpbandits[plot]'``). Regret of private and
non-private learners differs by orders of magnitude (D.2: about 65 against
60,000), so the y axis is logarithmic.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dpbandits.sim import SimulationResult

#: Resolution of saved figures.
DPI = 150


def round_label(v: float) -> str:
    """A round count as a short axis label: 400, 250k, 2.5M, 1.2B."""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.0f}"


def regret_plot(results: Sequence[tuple[str, SimulationResult]], path: str | Path, title: str) -> Path:
    """Writes a PNG of mean cumulative pseudo-regret against rounds, one
    curve per labelled result, with a band of +- one standard deviation over
    seeds (said in the legend), a log y axis, and the legend outside the
    axes. Returns the path written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(9.0, 5.0), dpi=DPI)
    n_seeds = {res.regret.shape[0] for _, res in results}
    for label, res in results:
        t = res.record_at.astype(float)
        mean, sd = res.mean_regret(), res.sd_regret()
        keep = mean > 0  # a log axis cannot show the zero regret of the first rounds
        (line,) = ax.plot(t[keep], mean[keep], label=label, linewidth=1.6)
        lo = np.maximum(mean - sd, mean * 1e-3)
        ax.fill_between(t[keep], lo[keep], (mean + sd)[keep], color=line.get_color(), alpha=0.2, linewidth=0)
    seeds = n_seeds.pop() if len(n_seeds) == 1 else "N"
    ax.fill_between([], [], [], color="grey", alpha=0.2, label=f"band: mean ± sd over {seeds} seeds")
    ax.set_yscale("log")
    # Short round labels ("2.5M", not "2,500,000"), at most 6 of them:
    # full digits ran into each other at the millions of the paper's horizons.
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=6))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: round_label(v)))
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative pseudo-regret (log scale)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=9)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return out
