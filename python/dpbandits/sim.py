"""simulate(): replicates of one learner on one environment.

Built-in environments run entirely in Rust (``rust/src/sim.rs``) with the
GIL released and one replicate per seed on rayon's thread pool. Learner and
environment draw from separate streams derived from each seed, so two
learners simulated with the same seeds meet the same contexts and reward
noise (common random numbers: their regret difference has low variance).
Custom Python environments (the :class:`dpbandits.envs.Environment`
protocol) run through the same Rust loop, which calls into Python for each
decision set and reward; their seeds run one after the other.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._validation import positive_int
from dpbandits.envs.shariff_sheffet import ShariffSheffetEnv

__all__ = ["SimulationResult", "simulate", "simulate_many"]


@dataclass(frozen=True)
class SimulationResult:
    """Cumulative pseudo-regret of each seed at each record point."""

    learner: str
    environment: str
    privacy: str
    seeds: NDArray[np.uint64]
    record_at: NDArray[np.uint64]
    regret: NDArray[np.float64] = field(repr=False)
    rounds: NDArray[np.uint64] = field(repr=False)
    seconds: NDArray[np.float64] = field(repr=False)

    @property
    def final_regret(self) -> NDArray[np.float64]:
        """Regret at the last round, one value per seed."""
        return self.regret[:, -1]

    @property
    def rounds_per_second(self) -> NDArray[np.float64]:
        """Throughput of each replicate (its own wall time)."""
        return self.rounds / np.maximum(self.seconds, 1e-12)

    def summary(self) -> str:
        """One line: final regret mean +- std over seeds, rounds/s, guarantee."""
        f = self.final_regret
        sd = f.std(ddof=1) if f.size > 1 else 0.0
        return (
            f"{self.learner}: regret {f.mean():.1f} +- {sd:.1f} over {f.size} seeds, "
            f"{np.median(self.rounds_per_second):,.0f} rounds/s, {self.privacy}"
        )


class _Progress:
    """Prints completed rounds to stderr at most every `every` seconds."""

    def __init__(self, total: int, label: str, every: float = 2.0) -> None:
        self.total, self.label, self.every = total, label, every
        self.start = self.last = time.perf_counter()

    def __call__(self, done: int) -> None:
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            rate = done / max(now - self.start, 1e-9)
            print(f"  {self.label}: {done / self.total:6.1%} ({rate:,.0f} rounds/s)", file=sys.stderr, flush=True)


def _seeds(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, (int, np.integer)):
        return list(range(positive_int("seeds", int(seeds))))
    out = [positive_int("seeds", s, minimum=0) for s in seeds]
    if not out:
        raise ValueError("invalid argument `seeds`: give at least one seed")
    return out


def simulate(
    learner: Any,
    env: Any,
    horizon: int | None = None,
    seeds: int | Sequence[int] = 4,
    record_every: int | None = None,
    progress: bool = False,
) -> SimulationResult:
    """Runs ``learner`` on ``env`` once per seed.

    Parameters
    ----------
    learner:
        A learner (e.g. :class:`dpbandits.JointDPLinUCB`); its configuration is
        re-instantiated for each seed, so the object itself is not advanced.
    env:
        A built-in environment spec (:class:`dpbandits.envs.ShariffSheffetEnv`:
        runs in Rust), or a custom environment following
        :class:`dpbandits.envs.Environment`, or a callable ``seed -> env``.
    horizon:
        Rounds per replicate (default: the learner's horizon; at most that).
    seeds:
        A count (seeds 0..count-1) or an explicit list.
    record_every:
        Record cumulative regret every this many rounds (default horizon/200).
    progress:
        Print progress to stderr every few seconds.
    """
    n = learner.horizon if horizon is None else positive_int("horizon", horizon)
    if n > learner.horizon:
        raise ValueError(f"invalid argument `horizon`: {n} exceeds the learner's calibrated horizon {learner.horizon}")
    seed_list = _seeds(seeds)
    every = max(1, n // 200) if record_every is None else positive_int("record_every", record_every)
    privacy = str(learner.privacy)
    if isinstance(env, ShariffSheffetEnv) and hasattr(learner, "_engine"):
        cb: Callable[[int], None] | None = _Progress(n * len(seed_list), repr(learner)) if progress else None
        record_at, regrets, rounds, seconds = _core.simulate_builtin(
            [learner._engine], env._engine, n, seed_list, every, cb
        )
        regret = regrets[0]
    else:
        record_at, regret, rounds, seconds = _simulate_python(learner, env, n, seed_list, every, progress)
    return SimulationResult(
        learner=repr(learner),
        environment=repr(env),
        privacy=privacy,
        seeds=np.asarray(seed_list, dtype=np.uint64),
        record_at=np.asarray(record_at, dtype=np.uint64),
        regret=np.asarray(regret, dtype=np.float64),
        rounds=np.asarray(rounds, dtype=np.uint64),
        seconds=np.asarray(seconds, dtype=np.float64),
    )


def simulate_many(
    learners: Mapping[str, Any],
    env: Any,
    horizon: int | None = None,
    seeds: int | Sequence[int] = 4,
    record_every: int | None = None,
    progress: bool = False,
) -> dict[str, SimulationResult]:
    """Runs several learners on the same realizations of ``env``.

    For a built-in environment all learners of a seed run together in Rust
    on one environment: each round draws one decision set and one reward
    noise, shared by every learner (``Environment::shared_rewards``), so the
    environment is generated once instead of once per learner, and each
    learner's regret is identical to what :func:`simulate` gives it alone
    with the same seeds. Seeds run in parallel. ``rounds_per_second`` of
    each result is then the shared run's rate (every learner steps each
    round). Other environments run each learner through :func:`simulate`.

    Arguments as for :func:`simulate`; ``learners`` maps labels to learners.
    """
    if not learners:
        raise ValueError("invalid argument `learners`: give at least one learner")
    n = min(lrn.horizon for lrn in learners.values()) if horizon is None else positive_int("horizon", horizon)
    builtin = isinstance(env, ShariffSheffetEnv) and all(hasattr(lrn, "_engine") for lrn in learners.values())
    if not builtin:
        return {
            name: simulate(lrn, env, n, seeds, record_every, progress) for name, lrn in learners.items()
        }
    for lrn in learners.values():
        if n > lrn.horizon:
            raise ValueError(f"invalid argument `horizon`: {n} exceeds {lrn!r}'s calibrated horizon")
    seed_list = _seeds(seeds)
    every = max(1, n // 200) if record_every is None else positive_int("record_every", record_every)
    names = list(learners)
    cb = _Progress(n * len(seed_list) * len(names), ", ".join(names)) if progress else None
    record_at, regret, rounds, seconds = _core.simulate_builtin(
        [learners[k]._engine for k in names], env._engine, n, seed_list, every, cb
    )
    return {
        name: SimulationResult(
            learner=repr(learners[name]),
            environment=repr(env),
            privacy=str(learners[name].privacy),
            seeds=np.asarray(seed_list, dtype=np.uint64),
            record_at=np.asarray(record_at, dtype=np.uint64),
            regret=np.asarray(regret[i], dtype=np.float64),
            rounds=np.asarray(rounds, dtype=np.uint64),
            seconds=np.asarray(seconds, dtype=np.float64),
        )
        for i, name in enumerate(names)
    }


def _simulate_python(learner: Any, env: Any, n: int, seeds: list[int], every: int, progress: bool) -> tuple[Any, ...]:
    """Custom environments through the same Rust loop, one seed at a time."""
    is_factory = isinstance(env, type) or (callable(env) and not hasattr(env, "decision_set"))
    if not is_factory and not (hasattr(env, "decision_set") and hasattr(env, "reward")):
        raise TypeError(
            "invalid argument `env`: needs decision_set(t) and reward(t, index), or be a seed -> env callable"
        )
    factory = env if is_factory else (lambda seed: env)
    cb = _Progress(n * len(seeds), repr(learner)) if progress else None
    record_at, regret, rounds, seconds = _core.simulate_python_env(learner._engine, factory, n, seeds, every, cb)
    return record_at, regret[0], rounds, seconds
