"""Empirical privacy audits of the merged learners' mechanisms
(dpbandits.audit), each built from the scales the learner object itself
uses (read from the learner, never re-derived here):

- Hanna et al. Alg. 1 (central): one per-action reward sum + Lap(s / eps);
- Hanna et al. Alg. 2 (local): one reward report r + Lap(s / eps0);
- Hanna et al. Alg. 3 (shuffle): the sum of a shuffled batch of n_i local
  reports at eps0^(i), audited at the claimed (eps, delta); the sum of n
  i.i.d. Laplace(b) is drawn exactly as b (G1 - G2), G1, G2 ~ Gamma(n, 1);
- Agarwal & Singh Alg. 4 (EXP2): the noisy loss l + Lap(lambda) the
  reduction feeds to EXP2, for neighbouring losses 0 and 1;
- Mishra & Thakurta Alg. 1 (PrivateUCB): one arm's Laplace tree
  (dpbandits.audit.laplace_tree_mechanism on the learner's node scale);
- Mishra & Thakurta Alg. 2 / Lemma 9 (PrivateThompsonSampling): one
  released batch mean of the gap-estimation phase, at its epsilon / 2.

Laplace draws go through the package's Rust sampler (a horizon-1
TreeCounter's batched ``_release_runs``). Each audit: N = 10^6 outputs per
side (+ N/2 for the event selection), 95% Clopper–Pearson. A correct
mechanism must not exceed its claim; a planted bug (half the noise) must
be flagged. Numbers are printed (run with -s).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpbandits.audit import audit, laplace_tree_mechanism
from dpbandits.learners.elimination import EliminationLinearBandit
from dpbandits.learners.mab import PrivateUCB
from dpbandits.learners.online_learning import EXP2
from dpbandits.mechanisms import LaplaceNoise, TreeCounter

N = 1_000_000
# The lattice Laplace releases sit exactly at their claims (pure DP is
# attained in the tails; t = scale 2^j steps exactly for power-of-two
# scales), so a 95% lower bound exceeds the claim with probability up to 5%
# for any seed, without any bug (it did, at eps_lb 1.00025, when the
# samplers' draws changed with the same law). At 0.9999 a correct mechanism
# fails with probability at most 1e-4; the planted bugs (eps 2) are still
# flagged far above the claim.
AT_CLAIM = 0.9999
ACTIONS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])
REWARD_RANGE = (-1.0, 1.0)


def _report(name: str, result, record_property) -> None:  # type: ignore[no-untyped-def]
    line = f"[audit] {name}: {result}"
    print(line)
    record_property(name, line)


def laplace_release(scale: float, sensitivity: float):  # type: ignore[no-untyped-def]
    """x + Lap(scale) with x = 0 (side 0) or ``sensitivity`` (side 1),
    drawn by the package's Laplace sampler (batched in Rust)."""
    xs = [np.zeros(1), np.full(1, sensitivity)]

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        counter = TreeCounter((), 1, LaplaceNoise(scale=scale), seed=seed)
        return counter._release_runs(xs[side], count)[:, 0]

    return mechanism


def shuffled_sum(scale: float, n_reports: int, lo: float, hi: float):  # type: ignore[no-untyped-def]
    """Sum of a shuffled batch of n local reports r_j + Lap(scale): one user's
    reward is ``lo`` (side 0) or ``hi`` (side 1), the other n - 1 are 0. The
    sum is permutation invariant (the shuffle does not change it); the sum
    of n i.i.d. Laplace(b) is b (G1 - G2) with G1, G2 ~ Gamma(n, 1)."""

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        g = rng.standard_gamma(n_reports, size=(2, count))
        return (hi if side else lo) + scale * (g[0] - g[1])

    return mechanism


def _elim(privacy: str, epsilon: float, delta: float | None = None, horizon: int = 10_000, **kw):  # type: ignore[no-untyped-def]
    return EliminationLinearBandit(ACTIONS, horizon, privacy, epsilon, delta, reward_range=REWARD_RANGE,
                                   seed=0, **kw)


def test_the_learners_expose_the_scales_audited() -> None:
    central = _elim("central", 1.0)
    assert central.noise_scales == (2.0,) * central.schedule.batches  # s = r_max - r_min = 2
    assert _elim("local", 0.5).noise_scales[0] == pytest.approx(4.0)
    assert EXP2(3, 1000, 0.5).noise_scale == pytest.approx(2.0)
    sh = _elim("shuffle", 1.0, 1e-3, shuffle_method="numerical")
    assert len(sh.batch_epsilons) == sh.schedule.batches and max(sh.batch_epsilons) > 1.0  # amplified


# --- Hanna et al. Alg. 1: central Laplace per-action sums --------------------------


@pytest.mark.slow
def test_elimination_central_sums_meet_epsilon_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    lr = _elim("central", 1.0)
    eps, scale, sens = lr.privacy.epsilon, lr.noise_scales[0], REWARD_RANGE[1] - REWARD_RANGE[0]
    ok = audit(laplace_release(scale, sens), epsilon=eps, n=N, seed=101, confidence=AT_CLAIM)
    _report(f"Elimination Alg. 1 central sum, Lap({scale:g})", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.9
    bug = audit(laplace_release(scale / 2, sens), epsilon=eps, n=N, seed=102)
    _report("Elimination Alg. 1 central sum, planted bug: half the noise", bug, record_property)
    assert not bug.passed


# --- Hanna et al. Alg. 2: local Laplace reports -------------------------------------


@pytest.mark.slow
def test_elimination_local_report_meets_eps0_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    lr = _elim("local", 1.0)
    eps, scale, sens = lr.privacy.epsilon, lr.noise_scales[0], REWARD_RANGE[1] - REWARD_RANGE[0]
    ok = audit(laplace_release(scale, sens), epsilon=eps, n=N, seed=201, confidence=AT_CLAIM)
    _report(f"Elimination Alg. 2 local report, Lap({scale:g})", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.9
    bug = audit(laplace_release(scale / 2, sens), epsilon=eps, n=N, seed=202)
    _report("Elimination Alg. 2 local report, planted bug: half the noise", bug, record_property)
    assert not bug.passed


# --- Hanna et al. Alg. 3: shuffled batches ------------------------------------------


@pytest.mark.slow
def test_elimination_shuffled_batch_sum_meets_eps_delta_and_bugs_are_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    lo, hi = REWARD_RANGE
    # Smallest batch (n_1 = floor(q) reports, no amplification: eps0 = eps).
    lr = _elim("shuffle", 1.0, 1e-3)
    eps, delta = lr.privacy.epsilon, lr.privacy.delta
    n1, scale1 = lr.schedule.min_batch_sizes()[0], lr.noise_scales[0]
    ok = audit(shuffled_sum(scale1, n1, lo, hi), epsilon=eps, delta=delta, n=N, seed=301)
    _report(f"Elimination Alg. 3 shuffled sum, batch 1 (n = {n1}, Lap({scale1:.4g}))", ok, record_property)
    assert ok.passed
    bug = audit(shuffled_sum(scale1 / 2, n1, lo, hi), epsilon=eps, delta=delta, n=N, seed=302)
    _report("Elimination Alg. 3 shuffled sum, batch 1, planted bug: half the noise", bug, record_property)
    assert not bug.passed
    # Last batch, amplified (numerical FMT bound): eps0 > eps per report.
    amp = _elim("shuffle", 1.0, 1e-3, shuffle_method="numerical")
    i = len(amp.noise_scales) - 1
    n_i, scale_i = amp.schedule.min_batch_sizes()[i], amp.noise_scales[i]
    assert amp.batch_epsilons[i] > eps
    ok2 = audit(shuffled_sum(scale_i, n_i, lo, hi), epsilon=eps, delta=delta, n=N, seed=303)
    _report(f"Elimination Alg. 3 shuffled sum, batch {i + 1} (n = {n_i}, eps0 = {amp.batch_epsilons[i]:.3f})",
            ok2, record_property)
    assert ok2.passed
    # Planted bug: the shuffler omitted (a single report at the amplified eps0 is released as is).
    bug2 = audit(laplace_release(scale_i, hi - lo), epsilon=eps, delta=delta, n=N, seed=304)
    _report(f"Elimination Alg. 3, planted bug: unshuffled report at eps0 = {amp.batch_epsilons[i]:.3f}",
            bug2, record_property)
    assert not bug2.passed


# --- Agarwal & Singh Alg. 4: EXP2's noisy loss --------------------------------------


@pytest.mark.slow
def test_exp2_noisy_loss_meets_epsilon_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    lr = EXP2(4, 10_000, 1.0, seed=0)
    eps, scale = lr.privacy.epsilon, lr.noise_scale
    # Losses 0 vs 1 (Lemma 4.2, B = 1).
    ok = audit(laplace_release(scale, 1.0), epsilon=eps, n=N, seed=401, confidence=AT_CLAIM)
    _report(f"EXP2 (Alg. 4) noisy loss, Lap({scale:g})", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.9
    bug = audit(laplace_release(scale / 2, 1.0), epsilon=eps, n=N, seed=402)
    _report("EXP2 (Alg. 4) noisy loss, planted bug: half the noise", bug, record_property)
    assert not bug.passed


# --- Mishra & Thakurta Alg. 1: PrivateUCB's per-arm Laplace tree -------------------


@pytest.mark.slow
def test_private_ucb_arm_tree_meets_epsilon_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    lr = PrivateUCB(2, 8, 1.0, calibration="tight", seed=0)
    eps, scale, w = lr.privacy.epsilon, lr.node_scale, lr.width
    ok = audit(laplace_tree_mechanism(lr.horizon, scale, w), epsilon=eps, n=N, seed=501, confidence=AT_CLAIM)
    _report(f"PrivateUCB arm tree (T = {lr.horizon}, Lap({scale:g}))", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.9
    bug = audit(laplace_tree_mechanism(lr.horizon, scale / 2, w), epsilon=eps, n=N, seed=502)
    _report("PrivateUCB arm tree, planted bug: half the noise", bug, record_property)
    assert not bug.passed


# --- Mishra & Thakurta Alg. 2 / Lemma 9: PrivateThompsonSampling's batch means ------


@pytest.mark.slow
def test_private_ts_gap_batch_mean_meets_half_epsilon_and_half_noise_is_flagged(record_property) -> None:  # type: ignore[no-untyped-def]
    from dpbandits.learners.mab import PrivateThompsonSampling

    lr = PrivateThompsonSampling(2, 10**6, 1.0, calibration="tight", seed=0)
    assert lr.schedule is not None
    m, b = lr.schedule.batch_sizes[0], lr.schedule.batch_scales[0]
    eps_phase = lr.privacy.epsilon / 2  # the gap-estimation half of the budget
    # One reward replaced moves one arm's batch mean by w / m.
    ok = audit(laplace_release(b, lr.width / m), epsilon=eps_phase, n=N, seed=601, confidence=AT_CLAIM)
    _report(f"PrivateTS batch mean (m = {m}, Lap({b:.3g}))", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.45
    bug = audit(laplace_release(b / 2, lr.width / m), epsilon=eps_phase, n=N, seed=602)
    _report("PrivateTS batch mean, planted bug: half the noise", bug, record_property)
    assert not bug.passed
