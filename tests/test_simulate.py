"""simulate(): replicates of one learner on one environment (``dpbandits.sim``).

Claims checked:

- a replicate is a function of its seed: the same learner simulated twice
  gives identical regret, other seeds give other regret, and the learner
  object's own seed plays no part (each replicate is re-instantiated);
- common random numbers: learners simulated on the same seeds meet the
  same contexts (DESIGN.md: separate learner and environment streams);
- regret is recorded every ``record_every`` rounds and always at the last
  round, and coarse records are the fine ones subsampled;
- a horizon beyond the learner's calibrated one is refused;
- custom Python environments (an object, or a callable seed -> env) run
  through the same loop: regret is the pseudo-regret of the actions played,
  a wrapper of the built-in environment is statistically indistinguishable
  from the built-in (two-sided Welch t test at level 1e-3 over the seeds),
  and regret is NaN without ``mean_rewards``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpbandits as dp
from dpbandits.envs import Environment, ShariffSheffetEnv
from dpbandits.learners.linucb import JointDPLinUCB, LinUCB
from dpbandits.sim import SimulationResult, simulate

D, K = 5, 25


def env_spec() -> ShariffSheffetEnv:
    return ShariffSheffetEnv(D, K, gap=0.1)


class DelegatingEnv:
    """A custom environment that forwards to ShariffSheffetEnv(seed=seed)."""

    def __init__(self, seed: int) -> None:
        self.inner = ShariffSheffetEnv(D, K, gap=0.1, seed=seed)
        self.seen: list[np.ndarray] = []

    def decision_set(self, t: int) -> np.ndarray:
        actions = self.inner.decision_set(t)
        self.seen.append(actions.copy())
        return actions

    def reward(self, t: int, index: int) -> float:
        return self.inner.reward(t, index)

    def mean_rewards(self, t: int) -> np.ndarray:
        return self.inner.mean_rewards(t)


class NoMeansEnv:
    """The same environment without ``mean_rewards``: regret is unknown."""

    def __init__(self, seed: int) -> None:
        self.inner = ShariffSheffetEnv(D, K, gap=0.1, seed=seed)

    def decision_set(self, t: int) -> np.ndarray:
        return self.inner.decision_set(t)

    def reward(self, t: int, index: int) -> float:
        return self.inner.reward(t, index)


class RotatingArmsEnv:
    """A small hand-written environment: three unit actions in the plane,
    rotating by 0.7 radians a round; theta* = (0.6, -0.3); rewards are the
    mean plus uniform noise on [-0.25, 0.25] from the environment's own
    generator."""

    theta = np.array([0.6, -0.3])

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.actions = np.zeros((3, 2))

    def decision_set(self, t: int) -> np.ndarray:
        angles = 0.7 * t + 2.0 * np.pi * np.arange(3) / 3.0
        self.actions = np.column_stack([np.cos(angles), np.sin(angles)])
        return self.actions

    def reward(self, t: int, index: int) -> float:
        return float(self.actions[index] @ self.theta + self.rng.uniform(-0.25, 0.25))

    def mean_rewards(self, t: int) -> np.ndarray:
        return self.actions @ self.theta


# ------------------------------------------------ replicates are seeded


@pytest.mark.parametrize("make", [
    lambda n: LinUCB(D, n),
    lambda n: JointDPLinUCB(D, n, 1.0, 0.1),
], ids=["linucb", "gaussian"])
def test_a_replicate_is_a_function_of_its_seed(make) -> None:
    n = 3000
    first = simulate(make(n), env_spec(), seeds=[0, 1, 2], record_every=100)
    again = simulate(make(n), env_spec(), seeds=[0, 1, 2], record_every=100)
    other = simulate(make(n), env_spec(), seeds=[3, 4, 5], record_every=100)
    np.testing.assert_array_equal(first.regret, again.regret)
    for row in first.regret:
        for other_row in other.regret:
            assert not np.array_equal(row, other_row)
    # The three seeds of one call are three different replicates too.
    assert len({tuple(row) for row in first.regret}) == 3


def test_the_objects_own_seeds_are_honoured() -> None:
    # seed=None: the replicate seed alone; seed=k: mixed with each replicate
    # seed, so different object seeds give different replicates and the
    # same object seed the same ones.
    n = 2000

    def run(learner_seed, env_seed):
        env = ShariffSheffetEnv(D, K, gap=0.1, seed=env_seed)
        return simulate(JointDPLinUCB(D, n, 1.0, 0.1, seed=learner_seed), env, seeds=[7, 8]).regret

    base = run(None, None)
    np.testing.assert_array_equal(base, run(None, None))
    np.testing.assert_array_equal(run(1, 123), run(1, 123))
    assert not np.array_equal(run(None, 123), run(None, 0))
    assert not np.array_equal(run(None, 123), base)
    assert not np.array_equal(run(1, None), run(2, None))
    assert not np.array_equal(run(1, None), base)


def test_a_seeded_replicate_is_spawn_of_the_replicate_seed() -> None:
    # Replicate s of objects seeded k is learner.spawn(replicate_seed(k, s))
    # on the environment seeded replicate_seed(k_env, s).
    n, d, s = 300, 3, 5
    learner = JointDPLinUCB(d, n, 1.0, 0.1, seed=42)
    spec = ShariffSheffetEnv(d, k=6, gap=0.1, seed=9)
    got = simulate(learner, spec, seeds=[s], record_every=n).final_regret[0]
    agent = learner.spawn(dp.sim.replicate_seed(42, s))
    env = ShariffSheffetEnv(d, k=6, gap=0.1, seed=dp.sim.replicate_seed(9, s))
    total = 0.0
    for t in range(1, n + 1):
        i = agent.select(env.decision_set(t))
        mu = env.mean_rewards(t)
        total += float(mu.max() - mu[i])
        agent.update(env.reward(t, i))
    assert got == total
    assert dp.sim.replicate_seed(None, 17) == 17
    assert dp.sim.replicate_seed(3, 17) != dp.sim.replicate_seed(4, 17)


def test_repeated_seeds_are_refused() -> None:
    with pytest.raises(ValueError, match=r"`seeds`.*distinct"):
        simulate(LinUCB(D, 100), env_spec(), seeds=[1, 1])


def test_simulate_many_with_different_horizons_needs_an_explicit_horizon() -> None:
    learners = {"short": LinUCB(D, 100), "long": LinUCB(D, 200)}
    with pytest.raises(ValueError, match="different horizons"):
        dp.simulate_many(learners, env_spec(), seeds=1)
    out = dp.simulate_many(learners, env_spec(), horizon=100, seeds=1)
    assert all(r.horizon == 100 for r in out.values())


def test_simulate_does_not_advance_the_learner() -> None:
    learner = JointDPLinUCB(D, 500, 1.0, 0.1, seed=0)
    simulate(learner, env_spec(), seeds=2)
    simulate(learner, lambda seed: DelegatingEnv(seed), seeds=1)
    assert learner.t == 0


# -------------------------------------------- common random numbers


def test_learners_on_the_same_seed_meet_the_same_contexts() -> None:
    # Through the Python loop, record every decision set each learner sees.
    n = 300
    seen: dict[tuple[str, int], list[np.ndarray]] = {}

    def recorded(name: str):
        def make(seed: int) -> DelegatingEnv:
            env = DelegatingEnv(seed)
            seen[(name, seed)] = env.seen
            return env
        return make

    simulate(LinUCB(D, n), recorded("linucb"), seeds=[0, 1])
    simulate(JointDPLinUCB(D, n, 1.0, 0.1), recorded("gaussian"), seeds=[0, 1])
    for seed in (0, 1):
        a, b = seen[("linucb", seed)], seen[("gaussian", seed)]
        assert len(a) == len(b) == n
        np.testing.assert_array_equal(np.stack(a), np.stack(b))
    assert not np.array_equal(np.stack(seen[("linucb", 0)]), np.stack(seen[("linucb", 1)]))


def test_builtin_environment_stream_does_not_depend_on_the_learner() -> None:
    # Two LinUCB configurations that make the same decisions (the inverse
    # refactored every round or every 64) but differ as learners must get
    # the same regret, round by round, on the same seeds; a different
    # environment per learner would show up at once.
    n = 3000
    a = simulate(LinUCB(D, n, refactor_every=64), env_spec(), seeds=[0, 1], record_every=1)
    b = simulate(LinUCB(D, n, refactor_every=1), env_spec(), seeds=[0, 1], record_every=1)
    np.testing.assert_allclose(a.regret, b.regret, rtol=0.0, atol=1e-9)
    # ... and the private learner, run on the same seeds, is compared
    # against that same sequence of environments: its regret differs.
    c = simulate(JointDPLinUCB(D, n, 1.0, 0.1), env_spec(), seeds=[0, 1], record_every=1)
    assert not np.allclose(a.regret, c.regret)


# ---------------------------------------------------------- record points


@pytest.mark.parametrize(("n", "every", "expected"), [
    (50, 7, [7, 14, 21, 28, 35, 42, 49, 50]),
    (50, 10, [10, 20, 30, 40, 50]),
    (50, 50, [50]),
    (50, 80, [50]),
    (1, 1, [1]),
])
@pytest.mark.parametrize("path", ["builtin", "python"])
def test_record_points_every_k_rounds_and_the_last(n: int, every: int, expected, path: str) -> None:
    env = env_spec() if path == "builtin" else (lambda seed: DelegatingEnv(seed))
    horizon = max(n, 2)
    r = simulate(LinUCB(D, horizon), env, horizon=n, seeds=2, record_every=every)
    assert r.record_at.tolist() == expected
    assert r.regret.shape == (2, len(expected))


@pytest.mark.parametrize(("n", "every"), [(1000, 5), (150, 1), (20_000, 100)])
def test_default_record_every_is_horizon_over_200(n: int, every: int) -> None:
    r = simulate(LinUCB(D, n), env_spec(), seeds=1)
    assert r.record_at.tolist() == list(range(every, n + 1, every))


@pytest.mark.parametrize("path", ["builtin", "python"])
def test_coarse_records_are_the_per_round_regret_subsampled(path: str) -> None:
    n = 400
    env = env_spec() if path == "builtin" else (lambda seed: DelegatingEnv(seed))
    learner = JointDPLinUCB(D, n, 1.0, 0.1)
    fine = simulate(learner, env, seeds=[2, 3], record_every=1)
    coarse = simulate(learner, env, seeds=[2, 3], record_every=30)
    assert fine.record_at.tolist() == list(range(1, n + 1))
    np.testing.assert_array_equal(coarse.regret, fine.regret[:, coarse.record_at.astype(int) - 1])
    # Pseudo-regret accumulates non-negative gaps.
    assert np.all(fine.regret >= 0.0) and np.all(np.diff(fine.regret, axis=1) >= 0.0)
    assert np.all(fine.regret[:, -1] > 0.0)


# ------------------------------------------------------------ bad inputs


@pytest.mark.parametrize("path", ["builtin", "python"])
def test_horizon_beyond_the_learners_calibrated_horizon_is_refused(path: str) -> None:
    env = env_spec() if path == "builtin" else (lambda seed: DelegatingEnv(seed))
    with pytest.raises(ValueError, match="`horizon`"):
        simulate(LinUCB(D, 100), env, horizon=101, seeds=1)
    with pytest.raises(ValueError, match="`horizon`"):
        simulate(JointDPLinUCB(D, 100, 1.0, 0.1), env, horizon=101, seeds=1)
    with pytest.raises(ValueError, match="`horizon`"):
        simulate(LinUCB(D, 100), env, horizon=0, seeds=1)
    # A shorter run than calibrated is allowed.
    assert simulate(LinUCB(D, 100), env, horizon=60, seeds=1).record_at[-1] == 60


def test_bad_seeds_and_record_every_are_refused() -> None:
    with pytest.raises(ValueError, match="`seeds`"):
        simulate(LinUCB(D, 100), env_spec(), seeds=[])
    with pytest.raises(ValueError, match="`seeds`"):
        simulate(LinUCB(D, 100), env_spec(), seeds=0)
    with pytest.raises(ValueError, match="`seeds`"):
        simulate(LinUCB(D, 100), env_spec(), seeds=[1, -2])
    with pytest.raises(ValueError, match="`record_every`"):
        simulate(LinUCB(D, 100), env_spec(), record_every=0)


def test_an_object_without_the_protocol_is_refused() -> None:
    class NoReward:
        def decision_set(self, t: int) -> np.ndarray:
            return np.eye(D)

    with pytest.raises(TypeError, match="`env`"):
        simulate(LinUCB(D, 10), lambda seed: NoReward(), seeds=1)


# ------------------------------------------------ custom environments


def test_custom_environment_regret_is_the_pseudo_regret_of_the_actions_played() -> None:
    # Replay each seed by hand: spawn the learner for the seed, play, and
    # add max(mean) - mean(chosen) every round.
    n, every, seeds = 500, 25, [4, 9]
    learner = JointDPLinUCB(2, n, 1.0, 0.1)
    assert isinstance(RotatingArmsEnv(0), Environment)
    result = simulate(learner, lambda seed: RotatingArmsEnv(seed), seeds=seeds, record_every=every)
    for row, seed in enumerate(seeds):
        agent, env = learner.spawn(seed), RotatingArmsEnv(seed)
        total, want = 0.0, []
        for t in range(1, n + 1):
            actions = env.decision_set(t)
            i = agent.select(actions)
            mu = env.mean_rewards(t)
            total += float(mu.max() - mu[i])
            agent.update(env.reward(t, i))
            if t % every == 0:
                want.append(total)
        np.testing.assert_array_equal(result.regret[row], want)
    # A learner does learn this environment: the second half costs less
    # than the first (LinUCB: 0.79 per round is the regret of the worst row).
    lin = simulate(
        LinUCB(2, n), lambda seed: RotatingArmsEnv(seed), seeds=seeds, record_every=n // 2
    ).regret
    assert np.all(lin[:, 1] - lin[:, 0] < lin[:, 0])


def test_an_environment_class_is_a_seed_to_env_callable() -> None:
    # The protocol: "for several seeds, pass a callable seed -> Environment";
    # the class itself is the most natural such callable.
    # Regression: a class has `decision_set`, yet it is a seed -> env factory.
    n = 100
    by_class = simulate(LinUCB(D, n), DelegatingEnv, seeds=[5, 6])
    by_lambda = simulate(LinUCB(D, n), lambda seed: DelegatingEnv(seed), seeds=[5, 6])
    np.testing.assert_array_equal(by_class.regret, by_lambda.regret)


def test_instance_and_callable_forms_agree() -> None:
    # A single environment object serves one seed; a callable serves many.
    n = 300
    learner = LinUCB(D, n)
    by_instance = simulate(learner, DelegatingEnv(5), seeds=[5])
    by_callable = simulate(learner, lambda seed: DelegatingEnv(seed), seeds=[5, 6])
    np.testing.assert_array_equal(by_instance.regret[0], by_callable.regret[0])
    raw = simulate(learner, lambda seed: ShariffSheffetEnv(D, K, gap=0.1, seed=seed), seeds=[5, 6])
    np.testing.assert_array_equal(raw.regret, by_callable.regret)


@pytest.mark.parametrize("make", [
    lambda n: LinUCB(D, n),
    lambda n: JointDPLinUCB(D, n, 1.0, 0.1),
], ids=["linucb", "gaussian"])
def test_wrapped_environment_regret_is_consistent_with_the_builtin(make) -> None:
    # Built-in replicates and Python replicates draw from different streams
    # of each seed, so they agree in distribution, not number for number:
    # two-sided Welch t test on the final regret over 8 seeds each, level 1e-3.
    n, seeds = 2000, list(range(8))
    learner = make(n)
    builtin = simulate(learner, env_spec(), seeds=seeds).final_regret
    python = simulate(
        learner, lambda seed: DelegatingEnv(seed), seeds=[100 + s for s in seeds]
    ).final_regret
    _, p_value = stats.ttest_ind(builtin, python, equal_var=False)
    print(f"\n{learner!r}: built-in {builtin.mean():.1f} +- {builtin.std(ddof=1):.1f}, "
          f"Python {python.mean():.1f} +- {python.std(ddof=1):.1f}, Welch p = {p_value:.3f}")
    assert p_value > 1e-3
    assert np.all(builtin > 0.0) and np.all(python > 0.0)


def test_regret_is_nan_without_mean_rewards() -> None:
    n = 200
    r = simulate(LinUCB(D, n), lambda seed: NoMeansEnv(seed), seeds=3, record_every=50)
    assert r.regret.shape == (3, 4)
    assert np.all(np.isnan(r.regret)) and np.all(np.isnan(r.final_regret))
    assert r.rounds.tolist() == [n] * 3


# ------------------------------------------------------------- the result


def test_simulation_result_fields() -> None:
    n = 1000
    learner = JointDPLinUCB(D, n, 1.0, 0.1)
    r = simulate(learner, env_spec(), seeds=[3, 1, 4], record_every=100)
    assert isinstance(r, SimulationResult)
    assert r.seeds.tolist() == [3, 1, 4]
    assert r.regret.shape == (3, 10)
    np.testing.assert_array_equal(r.final_regret, r.regret[:, -1])
    assert r.rounds.tolist() == [n] * 3
    assert np.all(r.seconds > 0.0) and np.all(np.isfinite(r.rounds_per_second))
    assert r.learner == repr(learner) and r.environment == repr(env_spec())
    assert r.privacy == str(learner.privacy)
    assert r.guarantee == learner.privacy and r.config == learner.config
    exported = r.to_dict()
    assert exported["guarantee"]["model"] == "joint" and exported["seeds"] == [3, 1, 4]
    assert np.array_equal(np.asarray(exported["regret"]), r.regret)
    import json

    json.dumps(exported)
    line = r.summary()
    mean = r.final_regret.mean()
    assert repr(learner) in line and f"{mean:.1f}" in line and "3 seeds" in line
    assert "joint DP" in line
    # Seeds given as a count are 0..count-1.
    assert simulate(learner, env_spec(), seeds=2).seeds.tolist() == [0, 1]


def test_progress_reporting_does_not_change_results() -> None:
    n = 2000
    learner = LinUCB(D, n)
    quiet = simulate(learner, env_spec(), seeds=2)
    loud = simulate(learner, env_spec(), seeds=2, progress=True)
    np.testing.assert_array_equal(quiet.regret, loud.regret)
    assert math.isfinite(float(loud.final_regret.sum()))


def test_simulate_many_shares_the_environment_and_matches_separate_runs() -> None:
    # All learners of a seed run on one environment (one decision set and one
    # reward draw per round); each learner's regret equals its solo run.
    env = dp.ShariffSheffetEnv(4, k=9, gap=0.1)
    learners = {
        "linucb": dp.LinUCB(4, 3_000),
        "gaussian": dp.JointDPLinUCB(4, 3_000, 1.0, 0.1, seed=0),
        "wishart": dp.JointDPLinUCB(4, 3_000, 1.0, 0.1, noise="wishart", seed=0),
    }
    together = dp.simulate_many(learners, env, seeds=[3, 4], record_every=500)
    assert list(together) == list(learners)
    for name, learner in learners.items():
        alone = dp.simulate(learner, env, seeds=[3, 4], record_every=500)
        np.testing.assert_array_equal(together[name].regret, alone.regret)
        np.testing.assert_array_equal(together[name].record_at, alone.record_at)
    with pytest.raises(ValueError, match="learners"):
        dp.simulate_many({}, env)
    with pytest.raises(ValueError, match="horizon"):
        dp.simulate_many(learners, env, horizon=3_001)


def test_a_replicate_is_exactly_the_online_loop_with_the_same_seed() -> None:
    # simulate(seed=s) runs learner.spawn(s) on ShariffSheffetEnv(seed=s):
    # the same numbers as driving both by hand through the online API, and
    # as the same environment wrapped as a custom (Python) environment.
    n, d, seed = 400, 3, 11
    learner = JointDPLinUCB(d, n, 1.0, 0.1)
    spec = ShariffSheffetEnv(d, k=6, gap=0.1)
    built_in = simulate(learner, spec, seeds=[seed], record_every=n).final_regret[0]
    agent, env, total = learner.spawn(seed), ShariffSheffetEnv(d, k=6, gap=0.1, seed=seed), 0.0
    for t in range(1, n + 1):
        i = agent.select(env.decision_set(t))
        mu = env.mean_rewards(t)
        total += float(mu.max() - mu[i])
        agent.update(env.reward(t, i))
    custom = simulate(learner, lambda s: ShariffSheffetEnv(d, k=6, gap=0.1, seed=s), seeds=[seed], record_every=n)
    assert built_in == total
    assert custom.final_regret[0] == total


def test_an_exception_in_a_custom_environment_reaches_the_caller() -> None:
    class Broken:
        def decision_set(self, t: int) -> np.ndarray:
            if t == 7:
                raise KeyError("no data for round 7")
            return np.eye(2)

        def reward(self, t: int, index: int) -> float:
            return 0.5

    with pytest.raises(KeyError, match="round 7"):
        simulate(LinUCB(2, 20), Broken(), seeds=[0])


# --- the results API: one rule, curve(), at(), to_frame() -----------------------------


def test_result_curve_gives_rounds_mean_se_and_quantiles() -> None:
    res = dp.simulate(dp.UCB1(3, 2000), dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=5, record_every=100)
    rounds, mean, se, q = res.curve((0.1, 0.5, 0.9))
    assert rounds.tolist() == res.record_at.tolist()
    np.testing.assert_allclose(mean, res.regret.mean(axis=0))
    np.testing.assert_allclose(se, res.regret.std(axis=0, ddof=1) / np.sqrt(5))
    np.testing.assert_allclose(q, np.quantile(res.regret, [0.1, 0.5, 0.9], axis=0))
    assert np.all(q[0] <= q[1]) and np.all(q[1] <= q[2])
    with pytest.raises(ValueError, match="`quantiles`"):
        res.curve((0.5, 1.5))


def test_result_at_keeps_the_chosen_record_points() -> None:
    res = dp.simulate(dp.UCB1(3, 1000), dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=2, record_every=10)
    part = res.at([1000, 10, 500])
    assert part.record_at.tolist() == [10, 500, 1000]
    np.testing.assert_array_equal(part.regret, res.regret[:, [0, 49, 99]])
    assert part.final_regret.tolist() == res.final_regret.tolist()
    with pytest.raises(ValueError, match="`rounds`"):
        res.at([15])


def test_result_to_frame_is_long_format() -> None:
    pd = pytest.importorskip("pandas")
    res = dp.simulate(dp.UCB1(3, 400), dp.BernoulliBandit([0.9, 0.5, 0.4]), seeds=3, record_every=100)
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["learner", "seed", "round", "regret"] and len(frame) == 3 * res.record_at.size
    np.testing.assert_array_equal(frame["regret"].to_numpy().reshape(res.regret.shape), res.regret)


def test_result_interface_follows_one_rule() -> None:
    # Per-replicate values read off the record are properties; statistics across
    # replicates and exports are methods.
    properties = {n for n, v in vars(SimulationResult).items() if isinstance(v, property)}
    methods = {n for n, v in vars(SimulationResult).items() if callable(v) and not n.startswith("_")}
    assert properties == {"privacy", "horizon", "final_regret", "rounds_per_second"}
    assert {"mean_regret", "sd_regret", "curve", "at", "summary", "to_dict", "to_frame"} <= methods
