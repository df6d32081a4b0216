"""simulate() and simulate_many(): replicates of learners on one environment.

Built-in environments run entirely in Rust (``rust/src/sim.rs``) with the
GIL released and one replicate per seed on rayon's thread pool. Any learner
and any built-in environment take this path: each engine hands the loop a
factory (``_engine._factory()``) that builds a fresh instance per replicate.
Custom Python environments (the :class:`dpbandits.envs.Environment`
protocol) run through the same Rust loop, which calls into Python for each
decision set and reward; their replicates run one after the other.

Seed policy (the same for every learner, environment and counter)
-----------------------------------------------------------------
Every object takes ``seed: int | None = None``.

- Online use: ``seed=None`` draws the root key from the operating system
  (nothing about a private learner's noise can be reproduced); an integer
  seed makes the object reproducible.
- In a simulation with replicate seed ``s``, an object with ``seed=None``
  is built from ``s`` alone, and an object with ``seed=k`` from
  :func:`replicate_seed` ``(k, s)``. So ``ShariffSheffetEnv(seed=123)`` and
  ``ShariffSheffetEnv(seed=0)`` give different replicates, and replicate
  ``s`` is exactly ``learner.spawn(replicate_seed(learner.seed, s))`` on
  ``env`` built with ``replicate_seed(env.seed, s)``.

Learner and environment draw from separate streams, so two learners
simulated with the same seeds (and the same environment) meet the same
contexts and reward noise: common random numbers, which make their regret
difference low-variance.

Generators: each stream's key is derived from the seed through ChaCha8.
Built-in environments draw their contexts and rewards from xoshiro256++
generators on their streams (fast, not cryptographic: no privacy guarantee
rests on them); learners draw their privacy noise from their own ChaCha8
streams through exact samplers (or from the operating system with
``secure=True``). The K-armed learners that commit an arm for a phase run a
phase at a time in the simulation loop, with the same draws and results as
round by round (see the documentation's page on K-armed simulations).

Restores and privacy spending
-----------------------------
A simulation never restores a learner's state: it reads the learner's
configuration and seed and builds a fresh engine per replicate, so
simulating a learner that has recorded rounds, or a copy of it, gives the
same numbers as simulating its configuration (the restore rules of
:class:`dpbandits.learners.online.LearnerBase` do not enter). Simulations run
on simulated data and spend nothing on real data: they never touch a
:class:`dpbandits.Ledger`, also for learners registered on one.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes, check_learner_rounds
from dpbandits._validation import positive_int, real, seed_or_none
from dpbandits.errors import IrreproducibleRunWarning
from dpbandits.privacy.guarantees import Guarantee

__all__ = ["SimulationResult", "replicate_seed", "simulate", "simulate_many"]

#: The unit every throughput figure of the package is given in.
THROUGHPUT_UNIT = "rounds/s"


def replicate_seed(object_seed: int | None, seed: int) -> int:
    """The seed an object with ``seed=object_seed`` is built from in the
    replicate with seed ``seed`` (see the module docstring): ``seed`` itself
    when ``object_seed`` is None, else a 64-bit mix of both (numpy's
    SeedSequence, which is stable across platforms and versions)."""
    s = seed_or_none("seed", seed)
    if object_seed is None:
        return int(s)  # type: ignore[arg-type]
    k = seed_or_none("seed", object_seed)
    return int(np.random.SeedSequence([int(k), int(s)]).generate_state(1, np.uint64)[0])  # type: ignore[arg-type]


@dataclass(frozen=True)
class SimulationResult:
    """Cumulative regret of each seed at each record point.

    Bandit environments with known means record pseudo-regret (sum of the
    gaps of the chosen actions; NaN for a custom environment without
    ``mean_rewards``). Loss environments (:mod:`dpbandits.envs.losses`)
    record the realized regret against the best fixed decision in
    hindsight: sum_t <l_t, x_t> - min_{x in X} <L_t, x> at each record
    point t, for the played index (a vertex) or point x_t; it can decrease
    between record points.

    One rule for the interface: fields and properties are the record itself
    and values read off it per replicate (``regret``, ``record_at``,
    ``final_regret``, ``rounds_per_second``, ``horizon``, ``privacy``);
    methods compute statistics across replicates or exports
    (:meth:`mean_regret`, :meth:`sd_regret`, :meth:`curve`,
    :meth:`summary`, :meth:`at`, :meth:`to_dict`, :meth:`to_frame`).

    Attributes
    ----------
    learner, environment:
        ``repr`` of the learner and the environment that produced the run.
    guarantee:
        The learner's :class:`~dpbandits.privacy.Guarantee`.
    config:
        The learner's constructor arguments.
    seeds:
        The replicate seeds, shape (n_seeds,).
    record_at:
        The rounds at which regret was recorded, shape (n_records,): the
        x-axis of every curve.
    regret:
        Cumulative regret, shape (n_seeds, n_records).
    rounds:
        Rounds each replicate ran in all (its length, equal to
        ``horizon``), shape (n_seeds,); not the x-axis (that is
        ``record_at``).
    seconds:
        Wall time of each replicate, shape (n_seeds,).

    Examples
    --------
    >>> import dpbandits as dp
    >>> res = dp.simulate(dp.UCB1(k=3, horizon=1000), dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=3)
    >>> rounds, mean, se, q = res.curve()
    >>> rounds.shape == mean.shape == se.shape, q.shape == (3, rounds.size)
    (True, True)
    >>> res.at([10, 100, 1000]).record_at.tolist()
    [10, 100, 1000]
    """

    learner: str
    environment: str
    guarantee: Guarantee
    config: Mapping[str, Any]
    seeds: NDArray[np.uint64]
    record_at: NDArray[np.uint64]
    regret: NDArray[np.float64] = field(repr=False)
    rounds: NDArray[np.uint64] = field(repr=False)
    seconds: NDArray[np.float64] = field(repr=False)

    @property
    def privacy(self) -> str:
        """The guarantee on one line (``str(self.guarantee)``)."""
        return str(self.guarantee)

    @property
    def horizon(self) -> int:
        """Rounds per replicate."""
        return int(self.record_at[-1])

    @property
    def final_regret(self) -> NDArray[np.float64]:
        """Regret at the last round, one value per seed."""
        return self.regret[:, -1]

    @property
    def rounds_per_second(self) -> NDArray[np.float64]:
        """Throughput of each replicate (its own wall time), in rounds/s."""
        return self.rounds / np.maximum(self.seconds, 1e-12)

    def mean_regret(self) -> NDArray[np.float64]:
        """Mean cumulative regret over seeds at each record point."""
        return self.regret.mean(axis=0)

    def sd_regret(self) -> NDArray[np.float64]:
        """Sample standard deviation over seeds at each record point (0 for one seed)."""
        if self.regret.shape[0] < 2:
            return np.zeros(self.regret.shape[1])
        return self.regret.std(axis=0, ddof=1)

    def summary(self) -> str:
        """One line: final regret mean +- sd over seeds, throughput, guarantee."""
        f = self.final_regret
        sd = f.std(ddof=1) if f.size > 1 else 0.0
        return (
            f"{self.learner}: regret {f.mean():.1f} +- {sd:.1f} over {f.size} seeds, "
            f"{np.median(self.rounds_per_second):,.0f} {THROUGHPUT_UNIT}, {self.privacy}"
        )

    def curve(
        self, quantiles: Sequence[float] = (0.1, 0.5, 0.9)
    ) -> tuple[NDArray[np.uint64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """The regret curve across replicates.

        Parameters
        ----------
        quantiles:
            Levels in [0, 1] of the quantiles to compute over seeds.

        Returns
        -------
        rounds:
            ``record_at``, shape (n_records,).
        mean:
            Mean cumulative regret over seeds at each record point.
        se:
            Standard error of that mean (sd / sqrt(n_seeds); 0 for one seed).
        quantiles:
            Shape (len(quantiles), n_records): row i is the
            ``quantiles[i]``-quantile over seeds (linear interpolation).

        Raises
        ------
        ValueError
            If a quantile level lies outside [0, 1].
        """
        levels = np.asarray([real("quantiles", q) for q in quantiles], dtype=np.float64)
        if levels.size == 0 or not np.all((levels >= 0.0) & (levels <= 1.0)):
            raise ValueError(f"invalid argument `quantiles`: levels must lie in [0, 1], got {list(quantiles)}")
        n = self.regret.shape[0]
        se = self.sd_regret() / np.sqrt(n)
        return self.record_at, self.mean_regret(), se, np.quantile(self.regret, levels, axis=0)

    def at(self, rounds: Sequence[int] | NDArray[np.integer[Any]]) -> SimulationResult:
        """The same result restricted to the record points ``rounds``.

        Parameters
        ----------
        rounds:
            Record points to keep; each must be one of ``record_at``.

        Returns
        -------
        SimulationResult
            A result whose ``record_at`` is the sorted distinct ``rounds``.

        Raises
        ------
        ValueError
            If a round was not recorded.
        """
        want = np.unique(np.asarray(rounds, dtype=np.int64))
        recorded = self.record_at.astype(np.int64)
        index = np.searchsorted(recorded, want)
        ok = (index < recorded.size) & (recorded[np.minimum(index, recorded.size - 1)] == want)
        if not np.all(ok):
            missing = want[~ok][:5].tolist()
            raise ValueError(f"invalid argument `rounds`: {missing} not among the record points `record_at`")
        return replace(self, record_at=self.record_at[index], regret=self.regret[:, index])

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python values (JSON-serializable)."""
        g = self.guarantee
        return {
            "learner": self.learner,
            "environment": self.environment,
            "config": {k: _plain(v) for k, v in self.config.items()},
            "guarantee": {
                "model": g.model, "epsilon": _plain(g.epsilon), "delta": g.delta, "rho": g.rho,
                "protects": g.protects, "basis": g.basis, "calibration": g.calibration, "sampler": g.sampler,
            },
            "seeds": self.seeds.tolist(),
            "record_at": self.record_at.tolist(),
            "regret": [[_plain(v) for v in row] for row in self.regret.tolist()],
            "rounds": self.rounds.tolist(),
            "seconds": self.seconds.tolist(),
        }

    def to_frame(self) -> Any:
        """A long-format ``pandas.DataFrame`` with columns learner, seed,
        round (the record point) and regret; needs pandas."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("to_frame() needs pandas: pip install pandas") from None
        n_seeds, n_records = self.regret.shape
        return pd.DataFrame({
            "learner": self.learner,
            "seed": np.repeat(self.seeds, n_records),
            "round": np.tile(self.record_at, n_seeds),
            "regret": self.regret.ravel(),
        })


def _plain(v: Any) -> Any:
    """JSON-friendly value: non-finite floats as strings, tuples as lists."""
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def results_table(results: Mapping[str, SimulationResult]) -> str:
    """A plain-text table, one row per learner: final regret mean +- sd,
    throughput, and the short guarantee (model, epsilon, delta)."""
    first = next(iter(results.values()))
    head = (
        f"horizon {first.horizon:,}, {first.seeds.size} seeds; "
        f"regret = cumulative pseudo-regret at the horizon, mean +- sd over seeds"
    )
    cols = f"{'learner':<18} {'regret':>12} {'+- sd':>10}  {'model':<8} {'epsilon':>8} {'delta':>8}  calibration"
    lines = [head, cols, "-" * len(cols)]
    for name, r in results.items():
        f = r.final_regret
        sd = f.std(ddof=1) if f.size > 1 else 0.0
        g = r.guarantee
        eps = "-" if not g.is_private else f"{g.epsilon:g}"
        delta = "-" if not g.is_private else f"{g.delta:g}"
        lines.append(
            f"{name:<18} {f.mean():>12.1f} {sd:>10.1f}  {g.model:<8} {eps:>8} {delta:>8}  {g.calibration}"
        )
    return "\n".join(lines)


class _Progress:
    """One live progress bar (tqdm) over rounds of all replicates, in rounds/s."""

    def __init__(self, total: int, label: str) -> None:
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - tqdm is a dependency
            tqdm = None
        self.bar = None
        if tqdm is not None:
            self.bar = tqdm(total=total, desc=label, unit="rounds", unit_scale=True, file=sys.stderr,
                            dynamic_ncols=True, leave=True, mininterval=0.5)
        self.total = total
        self.done = 0

    def __call__(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(max(0, done - self.done))
        self.done = done

    def finish(self) -> None:
        """The work is complete: the bar shows 100%."""
        self(self.total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


#: A lower bound on the bytes one replicate seed costs before any work (the
#: Python integer and its list slot, and the seed arrays handed to Rust).
_SEED_BYTES = 48


def _seeds(seeds: int | Sequence[int], per_seed_bytes: int = 0) -> list[int]:
    """The replicate seeds; a count is checked against memory (its list,
    and ``per_seed_bytes`` of results per seed) before the list is made."""
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        count = positive_int("seeds", int(seeds))
        check_bytes("seeds", count, count * (_SEED_BYTES + per_seed_bytes), f"the results of {count} replicates")
        return list(range(count))
    if isinstance(seeds, (str, bytes, bool)):
        raise TypeError(f"invalid argument `seeds`: expected a count or a list of seeds, got {seeds!r}")
    out = [int(seed_or_none("seeds", s)) for s in seeds]  # type: ignore[arg-type]
    if not out:
        raise ValueError("invalid argument `seeds`: give at least one seed")
    if len(set(out)) != len(out):
        dup = sorted({s for s in out if out.count(s) > 1})
        raise ValueError(
            f"invalid argument `seeds`: seeds must be distinct (repeated: {dup}); "
            "a repeated seed is the same replicate twice"
        )
    return out


def _learner_factory(learner: Any) -> Any:
    own = getattr(learner, "_simulation_factory", None)
    if own is not None:
        return own()  # a K-armed learner whose arm set changed: its constructor's arms
    engine = getattr(learner, "_engine", None)
    make = getattr(engine, "_factory", None)
    if make is None:
        raise TypeError(f"invalid argument `learner`: {type(learner).__name__} is not a dpbandits learner")
    return make()


def _environment_factory(env: Any) -> Any | None:
    """The Rust factory of a built-in environment, or None for a custom one."""
    if isinstance(env, type):
        return None
    make = getattr(getattr(env, "_engine", None), "_factory", None)
    return None if make is None else make()


def _common_horizon(learners: Mapping[str, Any], horizon: int | None) -> int:
    for lrn in learners.values():  # a clear error for a non-learner, before any attribute is read
        _learner_factory(lrn)
    horizons = {name: int(lrn.horizon) for name, lrn in learners.items()}
    if horizon is None:
        if len(set(horizons.values())) > 1:
            raise ValueError(
                "invalid argument `horizon`: the learners are calibrated for different horizons "
                f"{horizons}; pass horizon=N (at most {min(horizons.values())}) to run them all for N rounds"
            )
        return next(iter(horizons.values()))
    n = positive_int("horizon", horizon)
    for name, h in horizons.items():
        if n > h:
            raise ValueError(
                f"invalid argument `horizon`: {n} exceeds {name}'s calibrated horizon {h} "
                "(its privacy guarantee holds for that many rounds)"
            )
    return n


def _config(learner: Any) -> dict[str, Any]:
    config = getattr(learner, "config", None)
    return dict(config) if isinstance(config, Mapping) else {}


def simulate(
    learner: Any,
    env: Any,
    horizon: int | None = None,
    seeds: int | Sequence[int] = 4,
    record_every: int | None = None,
    progress: bool | Callable[[int], None] = False,
) -> SimulationResult:
    """Runs ``learner`` on ``env`` once per seed.

    Parameters
    ----------
    learner:
        A dpbandits learner (e.g. :class:`dpbandits.JointDPLinUCB`); its
        configuration is re-instantiated for each replicate, so the object
        itself is not advanced.
    env:
        A built-in environment (runs in Rust), or a custom environment
        following :class:`dpbandits.envs.Environment`, or a callable
        ``seed -> env`` (a class works).
    horizon:
        Rounds per replicate (default: the learner's horizon; at most that).
    seeds:
        A count (seeds 0..count-1) or a list of distinct seeds. How they
        combine with the objects' own seeds: see the module docstring.
    record_every:
        Record cumulative regret every this many rounds (default horizon/200).
        What the regret is (pseudo-regret, or realized regret against the
        best fixed decision for loss environments, where learners that play
        points of the ball or the cube run too): see :class:`SimulationResult`.
    progress:
        Show a progress bar on stderr; or a callable, called (at most five
        times a second, and once at the end) with the number of
        learner-rounds done so far.

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.JointDPLinUCB(d=5, horizon=2000, epsilon=1.0, delta=0.1)
    >>> res = dp.simulate(learner, dp.ShariffSheffetEnv(d=5, gap=0.1), seeds=3)
    >>> res.final_regret.shape, res.seeds.tolist()
    ((3,), [0, 1, 2])
    >>> res.regret.shape  # one row per seed, one column per record point (every horizon/200 rounds)
    (3, 200)
    >>> res.guarantee.model, res.guarantee.epsilon
    ('joint', 1.0)
    """
    return simulate_many({repr(learner): learner}, env, horizon, seeds, record_every, progress)[repr(learner)]


def simulate_many(
    learners: Mapping[str, Any],
    env: Any,
    horizon: int | None = None,
    seeds: int | Sequence[int] = 4,
    record_every: int | None = None,
    progress: bool | Callable[[int], None] = False,
) -> dict[str, SimulationResult]:
    """Runs several learners on the same realizations of ``env``.

    For a built-in environment all learners of a replicate run together in
    Rust on one environment: each round draws one decision set and one
    reward noise, shared by every learner (``Environment::shared_rewards``),
    so the environment is generated once instead of once per learner, and
    each learner's regret is identical to what :func:`simulate` gives it
    alone with the same seeds. Replicates run in parallel.
    ``rounds_per_second`` of each result is then the shared run's rate
    (every learner steps each round). Custom environments run each learner
    through the Python-environment loop.

    Learners calibrated for different horizons need an explicit
    ``horizon`` (at most the smallest): nothing is truncated silently.
    Other arguments as for :func:`simulate`; ``learners`` maps labels to
    learners.

    Examples
    --------
    >>> import dpbandits as dp
    >>> learners = {"UCB1": dp.UCB1(k=3, horizon=1000), "private": dp.PrivateUCB(k=3, horizon=1000, epsilon=1.0)}
    >>> res = dp.simulate_many(learners, dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=2)
    >>> sorted(res), res["private"].final_regret.shape
    (['UCB1', 'private'], (2,))
    """
    if not learners:
        raise ValueError("invalid argument `learners`: give at least one learner")
    secure = [k for k, v in learners.items() if getattr(v, "secure", False)]
    if secure:
        warnings.warn(
            f"learner(s) {secure} draw their privacy noise from the operating system (secure=True): "
            "the seeds do not reproduce their runs",
            IrreproducibleRunWarning,
            stacklevel=2,
        )
    n = _common_horizon(learners, horizon)
    every = max(1, n // 200) if record_every is None else positive_int("record_every", record_every)
    # The regret record is checked against memory before anything runs:
    # first one seed's share, then all seeds'. Per seed: each episode's
    # trace (record points, and a regret row per learner) and its row of
    # the result (float64).
    records = n // every + 1
    per_seed = 8 * records * (2 * len(learners) + 1)
    check_bytes(
        "record_every", every, per_seed,
        f"the regret record of {len(learners)} learner(s) x {records} record points per seed "
        f"(one every `record_every` rounds of `horizon` = {n})",
    )
    seed_list = _seeds(seeds, per_seed + 8 * len(learners))
    check_learner_rounds(n, len(seed_list), len(learners))
    names = list(learners)
    factories = [_learner_factory(learners[k]) for k in names]
    learner_seeds = [[replicate_seed(getattr(learners[k], "seed", None), s) for s in seed_list] for k in names]
    env_factory = _environment_factory(env)
    if env_factory is not None:
        env_seeds = [replicate_seed(getattr(env, "seed", None), s) for s in seed_list]
        show_bar = bool(progress) and not callable(progress)
        bar = _Progress(n * len(seed_list) * len(names), ", ".join(names)) if show_bar else None
        try:
            record_at, regret, rounds, seconds = _core.simulate_builtin(
                factories, env_factory, n, env_seeds, learner_seeds, every, progress if callable(progress) else bar
            )
            if bar is not None:
                bar.finish()
            if callable(progress):
                progress(n * len(seed_list) * len(names))  # complete: the loop reports at most 5 times a second
        finally:
            if bar is not None:
                bar.close()
        per_learner = {name: (regret[i], rounds, seconds) for i, name in enumerate(names)}
    else:
        make_env = _python_env_factory(env)
        per_learner = {}
        for i, name in enumerate(names):
            bar = _Progress(n * len(seed_list), name) if progress and not callable(progress) else None
            done_before = i * n * len(seed_list)
            report = (lambda done, base=done_before: progress(base + done)) if callable(progress) else bar
            try:
                record_at, regret, rounds, seconds = _core.simulate_python_env(
                    factories[i], make_env, n, seed_list, learner_seeds[i], every, report
                )
                if bar is not None:
                    bar.finish()
                if callable(progress):
                    progress(done_before + n * len(seed_list))
            finally:
                if bar is not None:
                    bar.close()
            per_learner[name] = (regret[0], rounds, seconds)
    return {
        name: SimulationResult(
            learner=repr(learners[name]),
            environment=repr(env),
            guarantee=learners[name].privacy,
            config=_config(learners[name]),
            seeds=np.asarray(seed_list, dtype=np.uint64),
            record_at=np.asarray(record_at, dtype=np.uint64),
            regret=np.asarray(reg, dtype=np.float64),
            rounds=np.asarray(rnd, dtype=np.uint64),
            seconds=np.asarray(sec, dtype=np.float64),
        )
        for name, (reg, rnd, sec) in per_learner.items()
    }


def _python_env_factory(env: Any) -> Callable[[int], Any]:
    """``seed -> environment`` for a custom environment object or callable."""
    is_factory = isinstance(env, type) or (callable(env) and not hasattr(env, "decision_set"))
    if is_factory:
        return env  # type: ignore[no-any-return]
    if not (hasattr(env, "decision_set") and hasattr(env, "reward")):
        raise TypeError(
            "invalid argument `env`: needs decision_set(t) and reward(t, index), or be a seed -> env callable"
        )
    used: list[int] = []

    def one_instance(seed: int) -> Any:
        if used:
            warnings.warn(
                "one environment object serves every seed in turn (it continues its own stream); "
                "pass a callable seed -> env for independent replicates",
                stacklevel=4,
            )
        used.append(seed)
        return env

    return one_instance
