"""Figures: cumulative regret over time, mean and spread over seeds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dpbandits.sim import SimulationResult


def regret_plot(results: Sequence[tuple[str, SimulationResult]], path: str | Path, title: str) -> Path:
    """Writes a PNG of mean cumulative pseudo-regret (+- one standard
    deviation over seeds) against rounds, one curve per labelled result."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=120)
    for label, res in results:
        t = res.record_at.astype(float)
        mean = res.regret.mean(axis=0)
        sd = res.regret.std(axis=0, ddof=1) if res.regret.shape[0] > 1 else np.zeros_like(mean)
        (line,) = ax.plot(t, mean, label=label)
        ax.fill_between(t, mean - sd, mean + sd, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative pseudo-regret")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
