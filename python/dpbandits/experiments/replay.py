"""Real data: private and non-private LinUCB on classification data replayed
as a contextual bandit (``dpbandits.envs.replay``).

Data sets bundled with scikit-learn (no download): digits (1,797 samples,
10 classes), wine (178, 3 classes), breast cancer (569, 2 classes). Features
are standardized, projected on a few principal components, given an
intercept and scaled to unit norm; arm a's vector is e_a ⊗ f_t. Reward 1 for
the true class, 0 otherwise. Learners: non-private LinUCB (rho = 1) and
JointDPLinUCB with Gaussian noise (paper and tight calibration) at several
epsilon, delta = 0.1. No paper reports these numbers: the summary compares
them with the non-private learner and with guessing uniformly at random.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpbandits.envs.replay import ReplayEnv
from dpbandits.experiments import RunOptions, register
from dpbandits.experiments.report import Report, mean_se
from dpbandits.learners.linucb import JointDPLinUCB, LinUCB

#: data set -> principal components kept (arm dimension d = classes x (components + 1)).
COMPONENTS = {"wine": 6, "breast_cancer": 8, "digits": 6}
EPSILONS = (0.5, 2.0, 8.0)
DELTA = 0.1


def replay_learners(d: int, horizon: int) -> dict[str, Any]:
    """Non-private LinUCB and Gaussian JDP-LinUCB (paper and tight) at each epsilon."""
    out: dict[str, Any] = {"NonPrivate": (LinUCB, {"d": d, "horizon": horizon, "regularizer": 1.0})}
    for eps in EPSILONS:
        base = {"d": d, "horizon": horizon, "epsilon": eps, "delta": DELTA, "noise": "gaussian"}
        out[f"Gaussian eps={eps:g}"] = (JointDPLinUCB, base)
        out[f"GaussianTight eps={eps:g}"] = (JointDPLinUCB, {**base, "calibration": "tight"})
    return out


@register("real-data", title="Replay of scikit-learn data sets as contextual bandits: private vs non-private",
          paper="Shariff & Sheffet 2018 learners on real data (no paper figure; supervised-to-bandit replay)",
          quick_seconds=20)
def real_data(opts: RunOptions) -> Report:
    """Each data set replayed for several passes (fresh order per pass and
    seed): 10 passes, 10 seeds by default; --quick: at most 600 rounds
    (one pass, or part of one), 2 seeds."""
    name = "real-data"
    report = Report(opts, name)
    passes = 1 if opts.quick else 10
    quick_rounds = 600
    seeds = opts.seed_count(2 if opts.quick else 10)
    specs = {ds: ReplayEnv.from_dataset(ds, components=c) for ds, c in COMPONENTS.items()}
    rounds = {ds: min(s.n, quick_rounds) if opts.quick else passes * s.n for ds, s in specs.items()}
    grid = {ds: {"learners": replay_learners(s.d, rounds[ds]), "env": s,
                 "meta": {"dataset": ds, "n": s.n, "k": s.k, "d": s.d, "rounds": rounds[ds]}}
            for ds, s in specs.items()}
    res = opts.sweep(name, grid, default_seeds=2 if opts.quick else 10)
    results = res.results()
    report.settings.update(rounds=rounds, seeds=seeds, epsilons=list(EPSILONS), delta=DELTA,
                           components=dict(COMPONENTS))
    labels = list(replay_learners(2, 2))
    for ds, s in specs.items():
        horizon = rounds[ds]
        random_regret = horizon * (1.0 - 1.0 / s.k)
        for lrn in labels:
            r = results[(ds, lrn)]
            mean, se = mean_se(r.final_regret)
            report.add_row(dataset=ds, n=s.n, classes=s.k, d=s.d, learner=lrn, rounds=horizon,
                           mistakes_mean=mean, mistakes_se=se, error_rate=mean / horizon,
                           random_error_rate=random_regret / horizon)
    report.table_columns = ["dataset", "classes", "d", "rounds", "learner", "mistakes_mean", "mistakes_se",
                            "error_rate", "random_error_rate"]
    for ds in specs:
        rows = {r["learner"]: r for r in report.rows if r["dataset"] == ds}
        npr = rows["NonPrivate"]["error_rate"]
        rnd = rows["NonPrivate"]["random_error_rate"]
        best = min((r for k, r in rows.items() if k != "NonPrivate"), key=lambda r: r["error_rate"])
        horizon = rows["NonPrivate"]["rounds"]
        se = np.hypot(rows["NonPrivate"]["mistakes_se"], best["mistakes_se"]) / horizon
        if best["error_rate"] < npr - 2 * se:
            verdict = "differs: a private learner beat the non-private one (by > 2 standard errors)"
        elif best["error_rate"] > npr + 2 * se:
            verdict = "as expected: every private learner does worse"
        else:
            verdict = "best private learner within 2 standard errors of non-private"
        report.compare(f"{ds}: private learners pay for privacy", "expected: no private learner does better",
                       f"error rate non-private {npr:.3f}, best private {best['error_rate']:.3f} "
                       f"({best['learner']}), random guessing {rnd:.3f}", verdict)
    report.notes.append("regret here = number of mistakes (reward 1 for the true class, 0 otherwise), so the "
                        "error rate is regret / rounds; random guessing makes a mistake with probability 1 - 1/K.")
    report.notes.append("The joint-DP noise is calibrated for the whole run's horizon; over a few thousand rounds "
                        "its regularizer is large against the data's Gram matrix, and the paper calibration "
                        "(eps = 0.5, 2) stays close to random guessing while the tight calibration (same "
                        "guarantee, less noise) learns.")
    report.notes.append("Where a private learner beats the non-private one (wine), a likely cause, not "
                        "investigated further: non-private LinUCB's Prop. 4 radius with alpha = 1/n keeps "
                        "exploring on a small, nearly separable data set, while the large shifted regularizer "
                        "of the private learners narrows their confidence widths.")

    def draw(path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(specs), figsize=(5 * len(specs), 5.0), dpi=150)
        for ax, (ds, s) in zip(np.atleast_1d(axes), specs.items(), strict=True):
            horizon = rounds[ds]
            for lrn in labels:
                r = results[(ds, lrn)]
                t = r.record_at.astype(float)
                m = r.mean_regret()
                style = "-" if lrn == "NonPrivate" else ("--" if "Tight" in lrn else ":")
                ax.plot(t, m / np.maximum(t, 1), style, label=lrn, linewidth=1.3)
            ax.axhline(1 - 1 / s.k, color="grey", linewidth=0.8, label="random guessing")
            ax.set_title(f"{ds}: n = {s.n}, K = {s.k}, d = {s.d}, {horizon:,} rounds, {seeds} seeds", fontsize=8)
            ax.set_xlabel("round t")
            ax.set_ylabel("running error rate (regret / t)")
            ax.set_ylim(0, 1.05)
            ax.set_xlim(0, horizon)
            ax.grid(alpha=0.3)
        handles, names = np.atleast_1d(axes)[0].get_legend_handles_labels()
        fig.legend(handles, names, loc="lower center", ncol=4, fontsize=7)
        fig.tight_layout(rect=(0, 0.14, 1, 1))
        fig.savefig(path)
        plt.close(fig)

    report.figure = draw
    return report
