"""A checkpointed long run: save, stop, resume.

A long online run saves its learner and environment every ``every``
rounds (``learner.save`` writes atomically; ``JointDPLinUCB.load``
rebuilds the learner from the file's configuration and refuses a file
whose noise does not match it). Here the run is "killed" half way, resumed
from the last checkpoint, and the resumed run is checked to equal an
uninterrupted one bit for bit. The environment pickles mid-stream too.

The data here are simulated, so the resume is a research replay
(``load(..., replay=True)``: the noise the saved learner would have drawn).
On real data, restore with the default instead: the restored learner's
future noise is re-keyed from the operating system, and a ledger refuses a
second restore of the same file (docs/guide/restarts-and-ledger.md). A
checkpoint holds exact statistics: store it like the raw data, and for
files others can write pass ``key=`` (HMAC-SHA256) to ``save`` and ``load``.

    python examples/checkpointed_run.py [horizon]    # default 200000
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
from pathlib import Path

import dpbandits as dp


def run(learner: dp.JointDPLinUCB, env: dp.ShariffSheffetEnv, start: int, stop: int, ckpt: Path | None,
        every: int, regret: float = 0.0) -> float:
    """Rounds start..stop; returns the cumulative regret (``regret`` carried in)."""
    for t in range(start, stop + 1):
        actions = env.decision_set(t)
        i = learner.select(actions)
        learner.update(env.reward(t, i))
        means = env.mean_rewards(t)
        regret += float(means.max() - means[i])
        if ckpt is not None and t % every == 0:
            learner.save(ckpt / "learner.ckpt")
            (ckpt / "env.pkl").write_bytes(pickle.dumps((t, regret, env)))
    return regret


def main(horizon: int) -> None:
    every = max(horizon // 10, 1)

    def fresh() -> tuple[dp.JointDPLinUCB, dp.ShariffSheffetEnv]:
        return (dp.JointDPLinUCB(d=5, horizon=horizon, epsilon=1.0, delta=0.1, calibration="tight", seed=3),
                dp.ShariffSheffetEnv(d=5, gap=0.1, seed=4))

    whole = run(*fresh(), 1, horizon, None, every)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = Path(tmp)
        learner, env = fresh()
        run(learner, env, 1, horizon // 2 + every // 2, ckpt, every)  # "killed" between two checkpoints
        del learner, env
        t, regret, env = pickle.loads((ckpt / "env.pkl").read_bytes())
        learner = dp.JointDPLinUCB.load(ckpt / "learner.ckpt", replay=True)
        print(f"resumed after round {t}: {learner.privacy}")
        regret = run(learner, env, t + 1, horizon, ckpt, every, regret)
    print(f"regret after {horizon} rounds: uninterrupted {whole:.3f}, resumed {regret:.3f}")
    assert regret == whole  # the same choices in every round, hence the same sum


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("DPBANDITS_EXAMPLE_HORIZON", 200_000)))
