"""Which BLT fit serves D.2's horizon: the tight Gaussian
JointDPLinUCB calibrated for n = 5e7 with each candidate fit as the 2^26
entry of ``BLT_BY_LOG2_HORIZON``, run for the first ``--rounds`` rounds
only (on D.2 the regret is spent early: by ~1.25e4 rounds at gap 0.1),
on the same environment realizations; paired differences against the
first candidate.

    nice -n 10 python benches/blt_fit_prefix.py --rounds 100000 --seeds 40 --gap 0.1
    nice -n 10 python benches/blt_fit_prefix.py --rounds 2000000 --seeds 8 --gap 0

Candidates: the 2^20 fit (``BLT_4``), the 2^26 max-variance fit the
regret fit replaced, and the tabulated 2^26 entry; ``--fit NAME=WINDOW,CAP``
adds a fit made here by ``fit_blt_parameters(2**26, window=WINDOW,
cap=CAP)`` (CAP "none" for no cap; about a minute each).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import dpbandits as dp
import dpbandits.privacy.factorization as fz
from dpbandits.envs.shariff_sheffet import ShariffSheffetEnv

MAX_VARIANCE_2_26 = ((0.9585159004, 0.9995513479, 0.9999952511, 0.9999999564),
                     (0.2684297078, 0.0291112957, 0.002994391088, 0.0003479538585))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=float, default=1e5)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--gap", type=float, default=0.1)
    ap.add_argument("--fit", action="append", default=[], help="NAME=WINDOW,CAP (e.g. early17=131072,none)")
    args = ap.parse_args()
    fits = {"2^20 fit": fz.BLT_4, "2^26 max-variance fit": MAX_VARIANCE_2_26,
            "2^26 tabulated": fz.BLT_BY_LOG2_HORIZON[26]}
    for spec in args.fit:
        name, _, rest = spec.partition("=")
        window, cap = rest.split(",")
        theta, omega, value = fz.fit_blt_parameters(2**26, window=int(window),
                                                    cap=None if cap == "none" else float(cap))
        print(f"{name}: theta {theta} omega {omega} objective {value:.4f}")
        fits[name] = (theta, omega)
    n, tabulated = 50_000_000, fz.BLT_BY_LOG2_HORIZON[26]
    learners: dict[str, Any] = {}
    try:
        for name, params in fits.items():
            fz.BLT_BY_LOG2_HORIZON[26] = params
            lrn = dp.JointDPLinUCB(5, n, 1.0, 0.1, calibration="tight", counter="blt")
            c = lrn.calibration
            print(f"{name}: sigma {c.sigma:.3f}, max release variance {c.release_variance:.2f}, shift {c.shift:.0f}, "
                  f"early variance {fz.blt_early_variance(*params, n, 2**17):.2f}")
            learners[name] = lrn
    finally:
        fz.BLT_BY_LOG2_HORIZON[26] = tabulated
    rounds = int(args.rounds)
    started = time.time()
    res = dp.simulate_many(learners, ShariffSheffetEnv(d=5, k=25, gap=args.gap), horizon=rounds, seeds=args.seeds,
                           record_every=max(1, rounds // 8))
    print(f"\n## D.2 calibrated for n = 5e7, first {rounds:,} rounds, gap {args.gap}, {args.seeds} seeds "
          f"({time.time() - started:.0f} s)")
    base = np.asarray(next(iter(res.values())).final_regret)
    for name, r in res.items():
        f = np.asarray(r.final_regret)
        d = f - base
        print(f"{name:28s} mean {f.mean():8.1f} se {f.std(ddof=1) / np.sqrt(f.size):6.1f}   "
              f"minus first: {d.mean():7.1f} se {d.std(ddof=1) / np.sqrt(d.size):5.1f}   "
              f"mean curve {np.round(r.mean_regret(), 0).tolist()}")


if __name__ == "__main__":
    main()
