"""Figures: cumulative regret over time, median and quantile band over seeds.

Needs matplotlib (``pip install 'dpbandits[plot]'``). Regret of private and
non-private learners differs by orders of magnitude, so the y axis is
logarithmic; the x axis is logarithmic too, so that the learning phase of
the first rounds is as visible as the long run. The band is a quantile
band (10% to 90% over seeds by default): unlike mean +- sd it stays
positive on a log axis and shows a heavy tail as it is.
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


def regret_plot(
    results: Sequence[tuple[str, SimulationResult]],
    path: str | Path,
    title: str,
    band: tuple[float, float] = (0.1, 0.9),
) -> Path:
    """Writes a PNG of cumulative regret against rounds, both axes logarithmic.

    One curve per labelled result: the median over seeds, with a band from
    the ``band[0]`` to the ``band[1]`` quantile over seeds (said in the
    legend); the legend sits outside the axes. Record points with zero
    regret (the first rounds) are left out, a log axis cannot show them.

    Parameters
    ----------
    results:
        ``(label, result)`` pairs, one curve each.
    path:
        The PNG file to write (its folder is created).
    title:
        The figure's title.
    band:
        Lower and upper quantile levels of the band, in [0, 1].

    Returns
    -------
    pathlib.Path
        The path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    lo_q, hi_q = band
    fig, ax = plt.subplots(figsize=(9.0, 5.0), dpi=DPI)
    n_seeds = {res.regret.shape[0] for _, res in results}
    for label, res in results:
        rounds, _, _, q = res.curve((lo_q, 0.5, hi_q))
        t = rounds.astype(float)
        lo, median, hi = q
        keep = (t > 0) & (median > 0)
        (line,) = ax.plot(t[keep], median[keep], label=label, linewidth=1.6)
        ax.fill_between(t[keep], np.maximum(lo, median * 1e-3)[keep], hi[keep],
                        color=line.get_color(), alpha=0.2, linewidth=0)
    seeds = n_seeds.pop() if len(n_seeds) == 1 else "N"
    ax.fill_between([], [], [], color="grey", alpha=0.2,
                    label=f"line: median; band: {lo_q:.0%} to {hi_q:.0%} quantiles over {seeds} seeds")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: round_label(v)))
    ax.set_xlabel("round t (log scale)")
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
