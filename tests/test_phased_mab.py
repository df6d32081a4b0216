"""The phased private K-armed learners (dpbandits.learners.phased_mab) and
their formulas (dpbandits.privacy.azize), checked as the papers claim:

- d_eps equals its closed form and hand-computed values, d_eps(x, 1) =
  eps (1 - x); the indices and the lower bounds equal hand-computed values;
- with the noise switched off, each learner's decisions equal a NumPy
  re-implementation of the same schedule, decision for decision;
- released values are exact multiples of the lattice step;
- an audit of the exact released phase sums stays below the claim, and
  a planted bug (half the noise) is flagged (slow);
- regret ordering at T = 1e5, eps = 1 (Welch test, fixed seeds):
  DP-KLUCB < AdaP-KLUCB < PrivateUCB(calibration="tight");
- the learner API: privacy, simulate, save / load, fork, pickle, bad input.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.learners.mab import PrivateUCB
from dpbandits.learners.online import research_replay
from dpbandits.learners.phased_mab import (
    DPIMED,
    DPKLUCB,
    DPSE,
    DPTS,
    KLUCB,
    AdaCKLUCB,
    AdaCUCB,
    AdaPKLUCB,
    AdaPUCB,
)
from dpbandits.privacy import azize

MEANS = [0.75, 0.625, 0.5, 0.375, 0.25]

# --------------------------------------------------------------------------
# Formulas against hand-computed values
# --------------------------------------------------------------------------


def test_d_eps_at_y_equal_one_is_eps_times_one_minus_x() -> None:
    for eps in (0.1, 0.5, 1.0, 3.0):
        for x in (0.0, 0.3, 0.75, 1.0):
            assert azize.d_eps(x, 1.0, eps) == pytest.approx(eps * (1 - x), abs=1e-12)


def test_d_eps_closed_form_by_hand() -> None:
    # eps = 1, y = 0.75: z* = 0.75 e^-1 / (0.25 + 0.75 e^-1) = 0.524614...
    z = 0.75 * math.exp(-1) / (0.25 + 0.75 * math.exp(-1))
    assert z == pytest.approx(0.5246, abs=1e-4)
    # x = 0.5 < z*: -0.5 - ln(0.25 + 0.75 e^-1) = -0.5 + 0.642626 = 0.142626
    assert azize.d_eps(0.5, 0.75, 1.0) == pytest.approx(0.142626, abs=1e-6)
    # x = 0.625 > z*: kl(0.625, 0.75) = 0.625 ln(5/6) + 0.375 ln(1.5) = -0.113951 + 0.152049 = 0.038098
    assert azize.d_eps(0.625, 0.75, 1.0) == pytest.approx(0.038098, abs=1e-6)
    # x above y (mirror): eps = 1, y = 0.25, x = 0.9 > z* = 0.25e/(0.75+0.25e) = 0.4754
    assert azize.d_eps(0.9, 0.25, 1.0) == pytest.approx(0.9 - math.log(0.75 + 0.25 * math.e), abs=1e-12)
    assert azize.d_eps(0.4, 0.4, 2.0) == 0.0


def test_d_eps_is_the_infimum_over_z() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        x, y = rng.uniform(0.01, 0.99, size=2)
        eps = rng.uniform(0.05, 4.0)
        zs = np.linspace(min(x, y), max(x, y), 20001)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = np.nan_to_num(zs * np.log(zs / y)) + np.nan_to_num((1 - zs) * np.log((1 - zs) / (1 - y)))
        f = eps * np.abs(zs - x) + kl
        assert azize.d_eps(x, y, eps) == pytest.approx(f.min(), abs=1e-6)
        assert azize.d_eps(x, y, eps) <= azize.kl_bernoulli(x, y) + 1e-15


def test_indices_by_hand() -> None:
    # DP-KLUCB: m = 5/10 = 0.5, t = 100: c = ln(100)/10 = 0.460517 > eps (1 - 0.5) = 0.5 * 0.5 at eps=0.5
    assert azize.dp_klucb_index(5.0, 10, 100, 0.5) == 1.0
    # at eps = 1: d_1(0.5, 1) = 0.5 > 0.4605: the root y of -0.5 - ln(1 - y + y/e) = 0.4605
    y = (1 - math.exp(-0.5 - math.log(100) / 10)) / (1 - math.exp(-1))
    assert azize.dp_klucb_index(5.0, 10, 100, 1.0) == pytest.approx(y, abs=1e-9)
    # KL-UCB (no eps): kl(0.5, U) = ln(100)/10
    u = azize.dp_klucb_index(5.0, 10, 100, None)
    assert azize.kl_bernoulli(0.5, u) == pytest.approx(math.log(100) / 10, abs=1e-9)
    # noisy sums outside [0, n] are clipped before the index
    assert azize.dp_klucb_index(-3.0, 10, 100, 1.0) == azize.dp_klucb_index(0.0, 10, 100, 1.0)
    # DP-IMED: 10 d_1(0.5, 0.75) + ln 10 = 1.426260 + 2.302585
    assert azize.dp_imed_index(0.5, 0.75, 10, 1.0) == pytest.approx(1.426260 + 2.302585, abs=1e-5)


def test_lower_bounds_by_hand() -> None:
    # Azize et al. 2025 Thm 1 at eps = 1 on the 5-arm instance: sum Delta / d_1 =
    # 0.125/0.038098 + 0.25/0.142626 + 0.375/0.267626 + 0.5/0.392626 = 7.7085; x ln(1e6)
    c = 0.125 / 0.038098 + 0.25 / 0.142626 + 0.375 / 0.267626 + 0.5 / 0.392626
    assert azize.azize2025_lower_bound(MEANS, 1.0, 10**6) == pytest.approx(c * math.log(1e6), rel=1e-4)
    assert azize.azize2025_lower_bound(MEANS, 1.0, 10**6) == pytest.approx(106.5, abs=0.5)
    assert azize.azize2025_lower_bound(MEANS, 0.1, 10**6) == pytest.approx(575.3, abs=1.0)
    # Azize & Basu 2022 Thm 3 at eps = 0.1: min(kl, 0.6 Delta): kl(0.625, 0.75) = 0.038098 < 0.075,
    # kl(0.5, 0.75) = 0.5 ln(2/3) + 0.5 ln 2 = 0.143841 < 0.15, then 0.6 Delta (kl 0.312749, 0.549306):
    # 0.125/0.038098 + 0.25/0.143841 + 1/0.6 + 1/0.6
    assert azize.azize_basu2022_lower_bound(MEANS, 0.1, 10**6) == pytest.approx(
        (0.125 / 0.038098 + 0.25 / 0.143841 + 2 / 0.6) * math.log(1e6), rel=1e-4)


def test_noise_scales_and_lattice_guarantees_by_hand() -> None:
    assert azize.phase_laplace_scale(0.5) == 2.0
    assert azize.phase_gaussian_sigma(0.125) == 2.0
    # scale 1 = 2^19 steps of 2^-19: epsilon exactly 1
    assert azize.lattice_laplace_epsilon(1.0) == 1.0
    # scale 10: j = 16, t = ceil(655360) = 655360 -> 65536 / 655360 = 0.1
    assert azize.lattice_laplace_epsilon(10.0) == pytest.approx(0.1, rel=1e-15)
    assert azize.lattice_laplace_epsilon(3.0) <= 1 / 3.0
    assert azize.lattice_gaussian_rho(2.0) == pytest.approx(0.125, rel=1e-12)
    assert azize.adap_index_coefficients(0.5, 3.0) == (3.0, 6.0)
    explore, root = azize.adac_index_coefficients(0.125, 2.0)
    assert (explore, root) == (2.0, pytest.approx(4.0))
    s = azize.dp_se_schedule(5, 10**6, 1.0)
    # R_1 = max(32 ln(40e6) * 4, 8 ln(20e6) * 2) = 128 * 17.5044 = 2240.6 -> 2241
    assert s.pulls[0] == math.ceil(128 * math.log(40e6)) and s.gaps[0] == 0.25
    assert 5 * sum(s.pulls) >= 10**6


def test_adaptive_min_phase_by_hand() -> None:
    assert azize.adaptive_min_phase(0.1, 2.0) == 20
    assert azize.adaptive_min_phase(0.5, 2.0) == 4
    assert azize.adaptive_min_phase(1.0, 2.0) == 2
    assert azize.adaptive_min_phase(1.0, 0.5) == 1  # ceil(0.5), never below one pull
    assert azize.adaptive_min_phase(0.3, 1.0) == 4  # ceil(3.33)
    assert azize.adaptive_min_phase(0.01, 4.0, horizon=100) == 100  # 400 capped at the horizon
    assert azize.adaptive_min_phase(1e-320, 4.0, horizon=7) == 7  # 4 / 1e-320 = inf, capped
    with pytest.raises(ValueError, match="floor"):
        azize.adaptive_min_phase(1.0, 0.0)


def test_dpklucb_defaults_to_the_adaptive_grid() -> None:
    learner = DPKLUCB(5, 1000, 0.5)
    assert (learner.alpha, learner.phase_floor, learner.min_phase) == (1.2, 4.0, 8)
    paper = DPKLUCB(5, 1000, 0.5, alpha=1.5, phase_floor=None)
    assert paper.min_phase is None and "geometric phases, ratio 1.5" in paper.privacy.basis
    assert DPKLUCB(5, 3, 0.01).min_phase == 3  # a floor of 400 pulls, capped at the horizon


def test_adaptive_grid_lengths() -> None:
    """DP-KLUCB(phase_floor=2) at eps = 0.1: every released phase is at
    least 20 pulls, and the phase ends follow the grid of _grid_step."""
    learner = DPKLUCB(5, 20_000, 0.1, alpha=1.1, phase_floor=2.0, seed=3)
    assert learner.min_phase == 20 and "adaptive phases" in learner.privacy.basis
    _play(learner, 20_000)
    rel = learner.releases()
    assert np.all(rel[:, 3] >= 20)
    for arm in range(5):
        lens = rel[rel[:, 0] == arm, 3].astype(int)
        x, pulls = np.ones(5), np.zeros(5, dtype=np.int64)
        for length in lens:
            assert length == _grid_step(x, pulls, arm, 1.1, 20)
            pulls[arm] += length


# --------------------------------------------------------------------------
# With the noise off: decision for decision against NumPy
# --------------------------------------------------------------------------

T_REF = 2500


def _kl(x: float, y: float) -> float:
    return azize.kl_bernoulli(x, y)


def _reference(kind: str, table: np.ndarray, ranks: np.ndarray, **p) -> list[int]:  # type: ignore[no-untyped-def]
    """The phased schedule in plain Python/NumPy: phases n_0 = 1,
    n_l = max(n_{l-1} + 1, ceil(x_l)), x_l = x_{l-1} alpha; decisions at
    phase ends; ties to fewer pulls, then to the lower tie rank."""
    T, k = table.shape
    alpha = p.get("alpha", 2.0)
    min_len = p.get("min_len")
    pulls = np.zeros(k, dtype=np.int64)
    x = np.ones(k)
    s_all = np.zeros(k)
    last = np.zeros(k)
    last_n = np.zeros(k)
    out: list[int] = []
    t = 0
    while t < T:
        ln_t = math.log(t + 1)
        score = np.full(k, np.inf)
        mean = {a: min(max((last[a] / last_n[a]) if p.get("forget") else (s_all[a] / pulls[a]), 0.0), 1.0)
                for a in range(k) if pulls[a] > 0}
        best = max(mean.values()) if mean else 0.0
        for a in mean:
            n = last_n[a] if p.get("forget") else pulls[a]
            m = mean[a]
            if kind == "imed":
                score[a] = -(n * azize.d_eps(m, best, p["eps"]) + math.log(n))
            elif kind == "greedy":
                score[a] = m
            else:
                c = p["explore"] * ln_t / n
                if kind == "kl":
                    div = (lambda u, v: azize.d_eps(u, v, p["eps"])) if p.get("eps") else _kl
                    base = azize._upper(m, c, div)
                else:
                    base = m + math.sqrt(p["explore"] * ln_t / (2 * n))
                score[a] = base + p.get("linear", 0.0) * ln_t / n + p.get("root", 0.0) * math.sqrt(ln_t) / n
        arm = min(range(k), key=lambda a: (-score[a], pulls[a], ranks[a]))
        length = _grid_step(x, pulls, arm, alpha, min_len)
        length = min(length, T - t)
        phase = table[t:t + length, arm]
        out += [arm] * length
        t += length
        pulls[arm] += length
        s_all[arm] += phase.sum()
        last[arm], last_n[arm] = phase.sum(), length
    return out


def _grid_step(x: np.ndarray, pulls: np.ndarray, arm: int, alpha: float, min_len: int | None) -> int:
    """The next phase length of ``arm`` (x updated): geometric
    n' = max(n + 1, ceil(x alpha)); adaptive (``min_len``)
    n' = max(n + min_len, ceil(x alpha)), x <- max(x alpha, n')."""
    n = int(pulls[arm])
    if min_len is None:
        if n == 0 or alpha == 0.0:
            return 1
        x[arm] *= alpha
        return max(n + 1, math.ceil(x[arm])) - n
    if n == 0:
        return min_len
    x[arm] *= alpha
    target = max(n + min_len, math.ceil(x[arm]))
    x[arm] = max(x[arm], float(target))
    return target - n


def _engine_decisions(engine, table: np.ndarray) -> list[int]:  # type: ignore[no-untyped-def]
    out = []
    for t in range(table.shape[0]):
        a = engine.select()
        engine.observe(a, float(table[t, a]))
        out.append(a)
    return out


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    rng = np.random.default_rng(11)
    return (rng.random((T_REF, 5)) < np.array(MEANS)[rng.permutation(5)]).astype(float)


CASES = {
    "DPKLUCB": (dict(index="optimistic_kl", divergence_epsilon=0.5, explore=1.0, alpha=1.5),
                ("kl", dict(eps=0.5, explore=1.0, alpha=1.5))),
    "DPIMED": (dict(index="imed", divergence_epsilon=1.0, alpha=2.0), ("imed", dict(eps=1.0, alpha=2.0))),
    "AdaPUCB": (dict(index="optimistic", explore=3.1, linear=3.1, alpha=2.0, forget=True),
                ("ucb", dict(explore=3.1, linear=3.1, alpha=2.0, forget=True))),
    "AdaPKLUCB": (dict(index="optimistic_kl", explore=3.1, linear=3.1, alpha=2.0, forget=True),
                  ("kl", dict(explore=3.1, linear=3.1, alpha=2.0, forget=True))),
    "AdaCKLUCB": (dict(index="optimistic_kl", explore=3.1, root=2.5, alpha=1.1, forget=True),
                  ("kl", dict(explore=3.1, root=2.5, alpha=1.1, forget=True))),
    "KLUCB": (dict(index="optimistic_kl", explore=1.0, alpha=0.0), ("kl", dict(explore=1.0, alpha=0.0))),
    "DPKLUCB adaptive": (dict(index="optimistic_kl", divergence_epsilon=0.5, explore=1.0, alpha=1.1, min_len=4),
                         ("kl", dict(eps=0.5, explore=1.0, alpha=1.1, min_len=4))),
    "DPIMED adaptive": (dict(index="imed", divergence_epsilon=1.0, alpha=1.2, min_len=3),
                        ("imed", dict(eps=1.0, alpha=1.2, min_len=3))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_noise_off_decisions_equal_numpy(name: str, table: np.ndarray) -> None:
    engine_kw, (kind, ref_kw) = CASES[name]
    engine = _core.PhasedMabEngine(5, T_REF, noise=("zero",), seed=3, **engine_kw)
    ranks = engine.tie_ranks()
    want = _reference(kind, table, ranks, **ref_kw)
    assert _engine_decisions(engine, table) == want


def _reference_uncommitted(table: np.ndarray, ranks: np.ndarray, alpha: float,
                           min_len: int | None = None) -> list[int]:
    """DP-TS with vanishing posterior variance: a greedy decision every
    round on the released means; each arm's open phase (the same grid) is
    released when the arm's pull count reaches its end."""
    T, k = table.shape
    rel_n = np.zeros(k, dtype=np.int64)
    rel_s = np.zeros(k)
    x = np.ones(k)
    open_len = np.zeros(k, dtype=np.int64)
    open_done = np.zeros(k, dtype=np.int64)
    open_sum = np.zeros(k)
    out = []
    for t in range(T):
        score = [np.inf if rel_n[a] == 0 else min(max(rel_s[a] / rel_n[a], 0.0), 1.0) for a in range(k)]
        arm = min(range(k), key=lambda a: (-score[a], rel_n[a], ranks[a]))
        if open_len[arm] == 0:
            open_len[arm] = _grid_step(x, rel_n, arm, alpha, min_len)
        open_sum[arm] += table[t, arm]
        open_done[arm] += 1
        if open_done[arm] == open_len[arm]:
            rel_n[arm] += open_len[arm]
            rel_s[arm] += open_sum[arm]
            open_len[arm] = open_done[arm] = 0
            open_sum[arm] = 0.0
        out.append(arm)
    return out


@pytest.mark.parametrize("min_len", [None, 5])
def test_noise_off_dp_ts_equals_numpy(table: np.ndarray, min_len: int | None) -> None:
    engine = _core.PhasedMabEngine(5, T_REF, index="thompson", reward_var=1e-300, noise_var=0.0, alpha=1.5,
                                   commit=False, noise=("zero",), seed=4, min_len=min_len)
    want = _reference_uncommitted(table, engine.tie_ranks(), 1.5, min_len)
    assert _engine_decisions(engine, table) == want


def test_noise_off_dp_se_equals_numpy(table: np.ndarray) -> None:
    pulls, gaps = [40, 160, 640], [0.25, 0.125, 0.0625]
    engine = _core.PhasedMabEngine(5, T_REF, index="elimination", epochs=(pulls, gaps), noise=("zero",), seed=0)
    got = _engine_decisions(engine, table)
    # NumPy: epochs over active arms in order, eliminate below best - gap.
    active, want, t, e = [True] * 5, [], 0, 0
    while t < T_REF:
        if sum(active) == 1:
            want += [active.index(True)] * (T_REF - t)
            break
        r, means = pulls[min(e, 2)], {}
        for a in range(5):
            if active[a] and t < T_REF:
                n = min(r, T_REF - t)
                want += [a] * n
                means[a] = table[t:t + n, a].sum() / r
                t += n
        best = max(means.values())
        for a in means:
            if means[a] < best - gaps[min(e, 2)]:
                active[a] = False
        e += 1
    assert got == want[:T_REF]


# --------------------------------------------------------------------------
# Released values, learners' API
# --------------------------------------------------------------------------

ALL = [
    lambda **kw: DPKLUCB(5, 3000, 1.0, **kw),
    lambda **kw: DPIMED(5, 3000, 1.0, **kw),
    lambda **kw: AdaPUCB(5, 3000, 1.0, **kw),
    lambda **kw: AdaPKLUCB(5, 3000, 1.0, **kw),
    lambda **kw: AdaCUCB(5, 3000, 0.5, **kw),
    lambda **kw: AdaCKLUCB(5, 3000, 0.5, **kw),
    lambda **kw: DPSE(5, 3000, 1.0, **kw),
    lambda **kw: DPTS(5, 3000, 1.0, **kw),
]


def _play(learner, rounds: int, seed: int = 0) -> list[int]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    arms = []
    for _ in range(rounds):
        a = learner.select()
        learner.update(float(rng.random() < MEANS[a]))
        arms.append(a)
    return arms


@pytest.mark.parametrize("make", ALL)
def test_released_sums_are_exact_lattice_multiples(make) -> None:  # type: ignore[no-untyped-def]
    learner = make(seed=1)
    _play(learner, 1500)
    rel = learner.releases()
    assert len(rel) > 0
    step = 2.0 ** -learner.lattice_exponent
    # The engine's noise value is on that lattice.
    assert learner.noise_wire[0].startswith("lattice_") and learner.noise_wire[2] == learner.lattice_exponent
    assert np.all(np.mod(rel[:, 4], step) == 0.0)
    assert "lattice" in learner.privacy.basis
    # The guarantee's sampler field says how the noise is drawn, once
    # (it used to say "float" for lattice noise as well).
    assert learner.privacy.sampler == "lattice" and "not protected" not in str(learner.privacy)
    float_learner = make(seed=1, sampler="float")
    assert float_learner.privacy.sampler == "float"
    assert str(float_learner.privacy).count("not protected against low-bit attacks") == 1


@pytest.mark.parametrize("make", ALL)
def test_save_load_fork_pickle(make, tmp_path) -> None:  # type: ignore[no-untyped-def]
    learner = make(seed=5)
    _play(learner, 400)
    path = tmp_path / "ckpt"
    learner.save(path)
    back = type(learner).load(path, replay=True)  # bit-identical replay (for use: re-keyed)
    assert _play(back, 600, seed=1) == _play(learner, 600, seed=1)
    np.testing.assert_array_equal(back.releases(), learner.releases())
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        again = pickle.loads(pickle.dumps(learner))
    assert _play(again, 300, seed=2) == _play(learner, 300, seed=2)
    fork = learner.fork(seed=99)
    np.testing.assert_array_equal(fork.releases(), learner.releases())
    assert learner.privacy.is_private


def test_guarantees() -> None:
    g = DPKLUCB(5, 100, 0.3).privacy
    assert g.model == "central" and g.delta == 0.0 and g.epsilon <= 0.3
    assert g.epsilon == pytest.approx(0.3, rel=1e-5)
    c = AdaCKLUCB(5, 100, rho=0.125, delta=1e-6).privacy
    assert c.rho == pytest.approx(0.125, rel=1e-5)
    assert c.epsilon == pytest.approx(0.125 + 2 * math.sqrt(0.125 * math.log(1e6)), rel=1e-5)
    assert not KLUCB(5, 100).privacy.is_private
    assert DPKLUCB(5, 100, 1.0, secure=True).privacy.basis.count("OS entropy") == 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(phase_floor=0.0), "phase_floor"),
        (dict(phase_floor=float("nan")), "phase_floor"),
        (dict(k=0), "k"),
        (dict(k=10**12), "k"),
        (dict(horizon=0), "horizon"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=float("nan")), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(alpha=1.0), "alpha"),
        (dict(alpha=float("inf")), "alpha"),
        (dict(bounds="ignore"), "bounds"),
        (dict(sampler="fast"), "sampler"),
        (dict(reward_range=(1.0, 0.0)), "reward_range"),
    ],
)
def test_bad_input_names_the_argument(kwargs, name) -> None:  # type: ignore[no-untyped-def]
    args = dict(k=5, horizon=100, epsilon=1.0) | kwargs
    with pytest.raises((ValueError, TypeError), match=name):
        DPKLUCB(**args)


def test_rewards_outside_the_range_are_clipped_or_refused() -> None:
    strict = DPKLUCB(3, 50, 1.0, bounds="error", seed=0)
    strict.select()
    with pytest.raises(ValueError, match="reward"):
        strict.update(1.5)
    clip = DPKLUCB(3, 50, 1.0, sampler="float", seed=0)
    ref = DPKLUCB(3, 50, 1.0, sampler="float", seed=0)
    for y in (5.0, -3.0, 1.0):
        clip.select()
        ref.select()
        clip.update(y)
        ref.update(min(max(y, 0.0), 1.0))
    np.testing.assert_array_equal(clip.releases(), ref.releases())


def test_klucb_keeps_no_per_round_records() -> None:
    """KL-UCB (phases of one round, no noise) records no releases: one
    record per round would hold 40 bytes x T."""
    learner = KLUCB(3, 500, seed=0)
    _play(learner, 500)
    assert learner.releases().shape == (0, 5)
    assert learner._engine.pulls().sum() == 500


def test_committed_arm_is_enforced_and_horizon_ends() -> None:
    engine = _core.PhasedMabEngine(2, 3, noise=("zero",), seed=0)
    a = engine.select()
    with pytest.raises(ValueError, match="arm"):
        engine.observe(1 - a, 1.0)
    engine.observe(a, 1.0)  # answers the selection above (a refused reward answers none)
    for _ in range(2):
        engine.observe(engine.select(), 1.0)
    with pytest.raises(Exception, match="horizon"):
        engine.select()


def test_simulate_many_and_sweep_run_the_engine() -> None:
    env = dp.BernoulliBandit(MEANS)
    res = dp.simulate(DPKLUCB(5, 20_000, 1.0), env, horizon=20_000, seeds=[0, 1, 2])
    reg = np.asarray(res.regret)
    assert reg.shape[-1] >= 1 and np.all(reg[..., -1] < 0.02 * 20_000)
    many = dp.simulate_many({"dpklucb": DPKLUCB(5, 5000, 1.0), "klucb": KLUCB(5, 5000)}, env, horizon=5000,
                            seeds=[0, 1])
    assert set(many) >= {"dpklucb", "klucb"}


# --------------------------------------------------------------------------
# Regret ordering (Welch test)
# --------------------------------------------------------------------------


def _final_regret(learner, seeds) -> np.ndarray:  # type: ignore[no-untyped-def]
    res = dp.simulate(learner, dp.BernoulliBandit(MEANS), horizon=learner.horizon, seeds=seeds)
    return np.asarray(res.regret)[..., -1].ravel()


def _welch_less(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import ttest_ind

    return float(ttest_ind(a, b, equal_var=False, alternative="less").pvalue)


def test_regret_ordering_at_1e5() -> None:
    T, seeds = 100_000, list(range(20))
    dpklucb = _final_regret(DPKLUCB(5, T, 1.0), seeds)
    adap = _final_regret(AdaPKLUCB(5, T, 1.0), seeds)
    ucb = _final_regret(PrivateUCB(5, T, 1.0, calibration="tight"), seeds[:8])
    print(f"T=1e5 eps=1: DP-KLUCB {dpklucb.mean():.0f}, AdaP-KLUCB {adap.mean():.0f}, "
          f"PrivateUCB tight {ucb.mean():.0f}")
    # One-sided Welch tests at 1e-3 (three ordered pairs of 20 / 8 runs).
    assert _welch_less(dpklucb, adap) < 1e-3
    assert _welch_less(adap, ucb) < 1e-3


# --------------------------------------------------------------------------
# Audits of the exact released phase sums (slow)
# --------------------------------------------------------------------------

AUDIT_N = 1_000_000


def _phase_release(engine, rewards: list[float], round_: int):  # type: ignore[no-untyped-def]
    """Neighbouring reward sequences differ in round ``round_`` (0 vs 1);
    the output is the release of the phase containing that round (a
    function of the whole released transcript; -1e9 when none)."""

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        r = list(rewards)
        r[round_] = float(side)
        out = engine._audit_runs(r, round_, count, seed)
        return np.nan_to_num(out, nan=-1e9)

    return mechanism


REWARDS = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0] * 3


def _dp_se_small(eps: float):  # type: ignore[no-untyped-def]
    """DP-SE's mechanism (the learner's own noise value) with
    short epochs, so that an epoch ends within the audited rounds."""
    learner = DPSE(3, 40, eps, seed=0)
    return learner, _core.PhasedMabEngine(
        3, 40, index="elimination", epochs=([4, 8], [0.25, 0.125]), noise=learner.noise_wire, seed=0)


AUDITED = {
    # the default: the adaptive grid (alpha 1.2, phases of >= 4 pulls at eps = 1)
    "DPKLUCB": lambda: (lambda lr: (lr, lr._engine))(DPKLUCB(3, 40, 1.0, seed=0)),
    "DPKLUCB geometric": lambda: (lambda lr: (lr, lr._engine))(DPKLUCB(3, 40, 1.0, alpha=1.5, phase_floor=None,
                                                                      seed=0)),
    "DPIMED": lambda: (lambda lr: (lr, lr._engine))(DPIMED(3, 40, 1.0, seed=0)),
    "AdaPKLUCB": lambda: (lambda lr: (lr, lr._engine))(AdaPKLUCB(3, 40, 1.0, seed=0)),
    "AdaCKLUCB": lambda: (lambda lr: (lr, lr._engine))(AdaCKLUCB(3, 40, 0.5, delta=1e-6, seed=0)),
    "DPTS": lambda: (lambda lr: (lr, lr._engine))(DPTS(3, 40, 1.0, seed=0)),
    "DPSE": lambda: _dp_se_small(1.0),
    "DPTS adaptive": lambda: (lambda lr: (lr, lr._engine))(DPTS(3, 40, 1.0, alpha=1.1, phase_floor=2.0, seed=0)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AUDITED))
def test_audit_released_phase_sums(name: str, record_property) -> None:  # type: ignore[no-untyped-def]
    learner, engine = AUDITED[name]()
    g = learner.privacy
    res = audit(_phase_release(engine, REWARDS, 9), epsilon=g.epsilon, delta=g.delta, n=AUDIT_N, seed=1)
    print(f"[audit] {name}: {res}")
    record_property(name, str(res))
    assert res.epsilon_lower_bound <= g.epsilon
    assert res.epsilon_lower_bound > 0.5 * min(g.epsilon, 1.0)  # the audit sees the release (not vacuous)


@pytest.mark.slow
def test_audit_flags_half_noise() -> None:
    eps = 1.0
    scale = azize.phase_laplace_scale(eps) / 2  # planted bug: half the noise
    from dpbandits.privacy.secure import lattice_exponent, lattice_steps

    j = lattice_exponent(scale)
    buggy = _core.PhasedMabEngine(3, 40, index="optimistic_kl", divergence_epsilon=eps, alpha=1.5,
                                  noise=("lattice_laplace", lattice_steps(scale, j), j), seed=0)
    res = audit(_phase_release(buggy, REWARDS, 9), epsilon=eps, n=AUDIT_N, seed=2)
    print(f"[audit] half noise: {res}")
    assert res.epsilon_lower_bound > eps


@pytest.mark.slow
def test_audit_flags_half_noise_on_the_adaptive_grid() -> None:
    """The adaptive grid's audit is not vacuous: the same mechanism with
    half the noise (the planted bug) is flagged."""
    eps = 1.0
    scale = azize.phase_laplace_scale(eps) / 2
    from dpbandits.privacy.secure import lattice_exponent, lattice_steps

    j = lattice_exponent(scale)
    buggy = _core.PhasedMabEngine(3, 40, index="optimistic_kl", divergence_epsilon=eps, alpha=1.1,
                                  min_len=azize.adaptive_min_phase(eps, 2.0),
                                  noise=("lattice_laplace", lattice_steps(scale, j), j), seed=0)
    res = audit(_phase_release(buggy, REWARDS, 9), epsilon=eps, n=AUDIT_N, seed=3)
    print(f"[audit] adaptive grid, half noise: {res}")
    assert res.epsilon_lower_bound > eps


# --------------------------------------------------------------------------
# Fixes of the Mishra & Thakurta learners
# --------------------------------------------------------------------------


def test_private_thompson_sampling_warns_when_it_cannot_start() -> None:
    import warnings

    from dpbandits.errors import LinearRegretWarning
    from dpbandits.learners.mab import PrivateThompsonSampling
    from dpbandits.privacy.mishra_thakurta import lemma9_batch_size, lemma9_first_batch_horizon

    need = lemma9_first_batch_horizon(5, 1.0)
    assert 5 * lemma9_batch_size(5, need, 1.0, 0.5) <= need
    assert 5 * lemma9_batch_size(5, need - 1, 1.0, 0.5) > need - 1
    with pytest.warns(LinearRegretWarning, match=f"at least {need:,} rounds"):
        PrivateThompsonSampling(5, 10**5, 1.0)
    with pytest.warns(LinearRegretWarning, match="random pulls"):
        PrivateThompsonSampling(5, 10**6, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivateThompsonSampling(5, 10**8, 1.0)
        PrivateThompsonSampling(5, 10**5, 1.0, gap_estimation=False)


def test_secure_noise_comes_from_os_entropy() -> None:
    """Same seed, secure=True: the decisions' randomness is seeded but the
    noise is not, so the releases differ; without secure they coincide."""
    a, b = DPKLUCB(3, 200, 1.0, secure=True, seed=7), DPKLUCB(3, 200, 1.0, secure=True, seed=7)
    _play(a, 60)
    _play(b, 60)
    assert not np.array_equal(a.releases()[:, 4], b.releases()[:, 4])
    c, d = DPKLUCB(3, 200, 1.0, seed=7), DPKLUCB(3, 200, 1.0, seed=7)
    _play(c, 60)
    _play(d, 60)
    np.testing.assert_array_equal(c.releases(), d.releases())
    with pytest.raises(ValueError, match="secure"):
        DPKLUCB(3, 200, 1.0, secure=True, sampler="float")
