"""Accounting one privacy budget across several learners.

Several private learners that learn from the same users compose: their
guarantees add up. ``dpbandits.privacy.PrivacyBudget`` holds a declared
(epsilon, delta) for the whole deployment, records each learner's
guarantee (``learner.privacy``) before the learner runs, and refuses
(``PrivacyBudgetError``) one that would take the composition past the
budget. Pure epsilon-DP and rho-zCDP parts are pooled in zCDP where that is
tighter (Bun & Steinke 2016; Canonne, Kamath & Steinke 2020): the module
docstring of ``dpbandits.privacy.budget`` gives the rule.

Here: two K-armed learners (DP-KLUCB, pure epsilon-DP; AdaC-UCB,
rho-zCDP) and a jointly private LinUCB share a (2, 1e-3) budget; a fourth
learner is refused.

    python examples/budget_across_learners.py [horizon]    # default 100000
"""

from __future__ import annotations

import os
import sys

import dpbandits as dp
from dpbandits.errors import PrivacyBudgetError
from dpbandits.privacy import PrivacyBudget


def main(horizon: int) -> None:
    budget = PrivacyBudget(epsilon=2.0, delta=1e-3)
    arms = dp.BernoulliBandit([0.7, 0.6, 0.5, 0.4])
    plan = {
        "DP-KLUCB (eps = 0.5)": (dp.DPKLUCB(k=4, horizon=horizon, epsilon=0.5), arms),
        "AdaC-UCB (rho = 0.005)": (dp.AdaCUCB(k=4, horizon=horizon, rho=0.005), arms),
        "JDP-LinUCB (eps = 0.5, delta = 1e-7)": (
            dp.JointDPLinUCB(d=5, horizon=horizon, epsilon=0.5, delta=1e-7, calibration="tight"),
            dp.ShariffSheffetEnv(d=5, gap=0.1),
        ),
        "PrivateUCB (eps = 1)": (dp.PrivateUCB(k=4, horizon=horizon, epsilon=1.0, calibration="tight"), arms),
    }
    for name, (learner, env) in plan.items():
        try:
            budget.spend(learner.privacy, name)  # before the learner sees any data
        except PrivacyBudgetError:
            print(f"refused {name}: {learner.privacy.epsilon:g}-DP more would exceed the budget "
                  f"(remaining {budget.remaining})")
            continue
        res = dp.simulate(learner, env, horizon=horizon, seeds=2)
        print(f"{name}: regret {res.final_regret.mean():.1f}; spent so far {budget.spent} "
              f"({budget.accounting}), remaining {budget.remaining}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("DPBANDITS_EXAMPLE_HORIZON", 100_000)))
