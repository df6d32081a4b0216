"""Private best-arm identification with a fixed budget: the error
probability of DP-BAI (Chen, Karthik, Chee & Tan 2024, ICLR, arXiv
2401.09073; :class:`dpbandits.DPBAI` and :class:`dpbandits.LinearDPBAI`)
against the budget T and epsilon, beside its non-private reference
(:class:`dpbandits.SequentialHalving`: the same phases without noise).

Instances: two Bernoulli K-armed instances, I1 = (0.75, 0.625, 0.5,
0.375, 0.25) of the library's private K-armed experiments and
H = (0.5, 0.45, 0.45, 0.45, 0.45) (one small gap to many arms), and one
linear instance of the kind of Soare, Lazaric & Munos 2014: d = 4, arms
e_1, ..., e_4 and cos(w) e_1 + sin(w) e_j (j = 2, 3, 4, w = 0.5), theta =
(0.7, 0.1, 0.1, 0.1): means 0.7 (best), 0.1 (three arms) and 0.662
(three arms, the hard ones); K = 7 > d, so the Max-Det principle is at
work (the paper's Section 5 instance could not be read; this is ours).
Rewards are Bernoulli with those means.

Full run: T in {1,000, 2,000, 5,000, 10,000, 20,000}, epsilon in {0.1, 1,
10} and the non-private reference, 2,000 replicates per cell (the error
rate's standard error is at most 0.011). ``--quick``: T in {1,000,
5,000}, 200 replicates (``--seeds`` sets the replicate count).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from dpbandits.experiments import RunOptions, register
from dpbandits.experiments.report import Report
from dpbandits.learners.bai_fixed_budget import DPBAI, LinearDPBAI, SequentialHalving

NAME = "private-bai-fixed-budget"
EPSILONS = (0.1, 1.0, 10.0)
BUDGETS = (1_000, 2_000, 5_000, 10_000, 20_000)
QUICK_BUDGETS = (1_000, 5_000)


def linear_instance(w: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """The linear instance of the module docstring: (arms, theta)."""
    arms = [np.eye(4)[i] for i in range(4)]
    arms += [math.cos(w) * np.eye(4)[0] + math.sin(w) * np.eye(4)[j] for j in (1, 2, 3)]
    return np.array(arms), np.array([0.7, 0.1, 0.1, 0.1])


KARMED: dict[str, tuple[float, ...]] = {
    "I1": (0.75, 0.625, 0.5, 0.375, 0.25),
    "H": (0.5, 0.45, 0.45, 0.45, 0.45),
}


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@register(NAME, paper="Chen, Karthik, Chee & Tan 2024 (ICLR, arXiv 2401.09073)",
          title="fixed-budget private best-arm identification: error vs budget and epsilon", quick_seconds=10)
def private_bai_fixed_budget(opts: RunOptions) -> Report:
    """Runs the grid (module docstring) and returns its report."""
    budgets = QUICK_BUDGETS if opts.quick else BUDGETS
    reps = opts.seed_count(200 if opts.quick else 2000)
    arms, theta = linear_instance()
    instances: dict[str, np.ndarray] = {name: np.array(mu) for name, mu in KARMED.items()}
    instances["linear"] = arms @ theta
    report = Report(opts, NAME)
    report.settings.update(replicates=reps, budgets=list(budgets), epsilons=list(EPSILONS),
                           instances=list(instances))
    curves: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for inst, mu in instances.items():
        k = len(mu)
        for budget in budgets:
            learners: dict[str, Any] = {}
            for eps in EPSILONS:
                learners[f"eps={eps:g}"] = (LinearDPBAI(arms, budget, eps, seed=0) if inst == "linear"
                                           else DPBAI(k, budget, eps, seed=0))
            learners["non-private"] = SequentialHalving(k, budget, arms=arms if inst == "linear" else None, seed=0)
            for name, learner in learners.items():
                runs = learner.simulate(mu, reps, seed=1)
                p = runs.error_rate
                se = math.sqrt(p * (1 - p) / reps)
                curves.setdefault((inst, name), []).append((budget, p))
                report.add_row(instance=inst, budget=budget, learner=name, error_rate=round(p, 4),
                               se=round(se, 4), errors=int(runs.errors.sum()), reps=reps)
    rows = report.rows

    def err(inst: str, name: str, budget: int) -> float:
        return next(float(r["error_rate"]) for r in rows
                    if r["instance"] == inst and r["learner"] == name and r["budget"] == budget)

    lo, hi = budgets[0], budgets[-1]
    falls = [(i, n) for (i, n) in curves if err(i, n, hi) < err(i, n, lo) or err(i, n, lo) == 0.0]
    report.compare("the error probability decays with the budget T",
                   "Thm (upper bound): exp(-Omega(T / (H_BAI + H_pri / eps)))",
                   f"lower at T = {hi} than at T = {lo} in {len(falls)} of {len(curves)} curves",
                   "reproduced" if len(falls) == len(curves) else "partly")
    tight = [i for i in instances if err(i, "eps=0.1", hi) >= err(i, "eps=10", hi)]
    report.compare("smaller epsilon, larger error (the H_pri / eps term)",
                   "Thm: the exponent's privacy term grows as 1/eps",
                   f"error at eps = 0.1 >= at eps = 10 (T = {hi}) on {len(tight)} of {len(instances)} instances",
                   "reproduced" if len(tight) == len(instances) else "partly")
    near = [i for i in instances
            if abs(err(i, "eps=10", hi) - err(i, "non-private", hi)) <= 4 * math.sqrt(0.25 / reps) + 0.01]
    report.compare("at large epsilon DP-BAI is close to its non-private counterpart",
                   "Sec. 4: H_pri / eps vanishes as eps grows",
                   f"eps = 10 within 4 standard errors of the non-private error on {len(near)} of {len(instances)}",
                   "reproduced" if len(near) == len(instances) else "partly")
    report.notes.append("error_rate: fraction of replicates whose recommendation is not the arm of largest mean "
                        "(Bernoulli rewards); the budget is used in full by every replicate.")
    report.notes.append("the schedule (halving phases, T / M per phase) is the library's reconstruction; see "
                        "dpbandits.learners.bai_fixed_budget.")
    report.data["curves"] = {f"{i}|{n}": v for (i, n), v in curves.items()}

    def draw(path: Path) -> None:
        plt = _plt()
        fig, axes = plt.subplots(1, len(instances), figsize=(5 * len(instances), 4), dpi=130, squeeze=False)
        for ax, inst in zip(axes[0], instances, strict=True):
            for (i, name), pts in curves.items():
                if i != inst:
                    continue
                x, y = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
                ax.plot(x, np.maximum(y, 0.5 / reps), marker="o", label=name)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("budget T")
            ax.set_ylabel("error probability")
            ax.set_title(inst)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)

    report.figure = draw
    return report
