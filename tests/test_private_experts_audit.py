"""Privacy audit of PrivateStochasticExperts on its exact released values
(dpbandits.audit): one report-noisy-min selection, computed by the
engine's own selection code (``_selection_runs``) with the learner's own
noise value (``noise_wire``, read from the learner, never re-derived here).

Neighbouring batches of one round, d = 32 experts: side 0 has loss vector
(0, 1, ..., 1), side 1 (1, 0, ..., 0) (every score moves by the
sensitivity 1, expert 0 against all others: the case where the factor 2 of
report-noisy-min is attained in the tail). The statistic is the indicator
"expert 0 selected". A correct selection must not exceed its claim; the
planted bug (half the noise) must be flagged. N = 10^6 outputs per side
(+ N/2 for the event selection). Each loss vector enters exactly one
selection, so this selection's epsilon is the learner's (parallel
composition, dpbandits.privacy.private_experts).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpbandits import _core
from dpbandits.audit import audit
from dpbandits.learners.private_experts import PrivateStochasticExperts

N = 1_000_000
D = 32
# Pure DP attained in the tails: a 95% lower bound may exceed a tight claim
# by chance; at 0.9999 a correct mechanism fails with probability <= 1e-4
# while the planted bug (eps 2 at claim 1) is still flagged.
AT_CLAIM = 0.9999


def selection(wire: tuple, horizon: int):  # type: ignore[no-untyped-def, type-arg]
    batches = [np.ones((1, D)), np.zeros((1, D))]
    batches[0][0, 0], batches[1][0, 0] = 0.0, 1.0

    def mechanism(side: int, count: int, seed: int) -> np.ndarray:
        engine = _core.StochasticExpertsEngine(D, horizon, noise=wire, seed=seed)
        return (engine._selection_runs(batches[side], count) == 0).astype(np.float64)

    return mechanism


def _report(name: str, result, record_property) -> None:  # type: ignore[no-untyped-def]
    line = f"[audit] {name}: {result}"
    print(line)
    record_property(name, line)


def test_selection_runs_use_the_learners_noise_and_code() -> None:
    lr = PrivateStochasticExperts(D, 1000, 1.0, seed=0)
    mech = selection(lr.noise_wire, lr.horizon)
    a, b = mech(0, 20_000, 1), mech(1, 20_000, 1)
    # Expert 0 is favoured on side 0 (loss 0) and disfavoured on side 1.
    assert a.mean() > b.mean() > 0.0
    engine = _core.StochasticExpertsEngine(D, 1000, noise=lr.noise_wire, seed=0)
    with pytest.raises(ValueError, match="losses"):
        engine._selection_runs(np.zeros((1, D + 1)), 3)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 0.25])
def test_selection_meets_epsilon_and_half_noise_is_flagged(epsilon: float, record_property) -> None:  # type: ignore[no-untyped-def]
    lr = PrivateStochasticExperts(D, 10_000, epsilon, seed=0)
    eps, wire = lr.privacy.epsilon, lr.noise_wire
    assert eps <= epsilon and wire[0] == "lattice_laplace"
    ok = audit(selection(wire, lr.horizon), epsilon=eps, n=N, seed=4201, confidence=AT_CLAIM)
    _report(f"PrivateStochasticExperts selection, eps {eps:g}, {wire}", ok, record_property)
    assert ok.passed and ok.epsilon_lower_bound > 0.6 * eps
    kind, steps, exponent = wire
    bug = audit(selection((kind, steps // 2, exponent), lr.horizon), epsilon=eps, n=N, seed=4202)
    _report(f"PrivateStochasticExperts selection, eps {eps:g}, planted bug: half the noise", bug, record_property)
    assert not bug.passed
