"""D.2 (Shariff & Sheffet App. D: d = 5, K = 25, gap 0) at the delta a
deployment uses: the lattice learner's regret against the float opt-in's.

    python3 benches/lattice_regret_deployment_delta.py [--horizon 1000000] [--seeds 4]

Prints, for each counter, the final regret (mean and standard error over
seeds) of JointDPLinUCB (tight calibration, epsilon = 1, delta = 1e-6) with
sampler="lattice" (the default) and sampler="float", the lattice sigma
over the float sigma, and non-private LinUCB as the reference.
"""

from __future__ import annotations

import argparse
import math

import dpbandits as dp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    args = parser.parse_args()
    n, seeds = args.horizon, list(range(args.seeds))
    env = dp.ShariffSheffetEnv(5, 25, gap=0.0)

    def final(learner: object) -> tuple[float, float]:
        final = dp.simulate(learner, env, n, seeds=seeds).final_regret
        return float(final.mean()), float(final.std(ddof=1)) / math.sqrt(len(seeds))

    m, se = final(dp.LinUCB(5, n))
    print(f"LinUCB (non-private): {m:.1f} +- {se:.1f}")
    for counter in ("binary", "blt"):
        row = {}
        for sampler in ("lattice", "float"):
            lr = dp.JointDPLinUCB(5, n, args.epsilon, args.delta, calibration="tight", counter=counter,
                                  sampler=sampler)
            row[sampler] = (final(lr), lr.calibration.sigma)
        (ml, sl), sig_l = row["lattice"]
        (mf, sf), sig_f = row["float"]
        z = (ml - mf) / math.hypot(sl, sf)
        print(f"{counter:>6}: lattice {ml:.1f} +- {sl:.1f}, float {mf:.1f} +- {sf:.1f} "
              f"(difference {z:+.2f} se), sigma lattice / float = {sig_l / sig_f:.4f}")


if __name__ == "__main__":
    main()
