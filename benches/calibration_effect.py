"""Regret of Gaussian JDP-LinUCB under calibration="paper" versus "tight".

Shariff & Sheffet 2018 App. D.2 workload (d = 5, K = 25, gap 0.1,
eps = 1, delta = 0.1, alpha = 1/n); both calibrations meet the same
(eps, delta)-joint DP, "tight" with the least noise exact accounting allows
(docs/privacy-calibration.md). Same seeds for both (common random numbers).

    python3 benches/calibration_effect.py --horizon 1000000 --seeds 4
    python3 benches/calibration_effect.py --horizon 50000000 --seeds 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dpbandits as dp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=0.1)
    args = parser.parse_args()
    env = dp.ShariffSheffetEnv(5, gap=0.1)
    print(f"D.2, n = {args.horizon:,}, eps = {args.epsilon}, delta = {args.delta}, seeds 0..{args.seeds - 1}")
    print(f"{'calibration':<12} {'sigma':>9} {'shift':>11} {'regret mean':>12} {'sd':>9} {'wall s':>7}")
    finals = {}
    for calibration in ("paper", "tight"):
        learner = dp.JointDPLinUCB(5, args.horizon, args.epsilon, args.delta, calibration=calibration)
        start = time.perf_counter()
        res = dp.simulate(learner, env, seeds=args.seeds, progress=True)
        wall = time.perf_counter() - start
        f = res.final_regret
        finals[calibration] = f
        c = learner.calibration
        print(
            f"{calibration:<12} {c.sigma:>9.3f} {c.shift:>11.1f} {f.mean():>12.1f} {f.std(ddof=1):>9.1f} {wall:>7.1f}"
        )
    ratio = finals["paper"] / finals["tight"]
    print(f"paper / tight regret per seed: {np.array2string(ratio, precision=2)}; mean {ratio.mean():.2f}x")


if __name__ == "__main__":
    main()
