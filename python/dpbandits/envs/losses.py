"""Loss-sequence environments for online learning (Agarwal & Singh 2017, §2).

Each round fixes a loss vector l_t in [0, 1]^N before the learners act.
Full-information learners (:class:`dpbandits.PrivateFTRL`,
:class:`dpbandits.PrivateFTPL` on the simplex) see the whole vector; bandit
learners (:class:`dpbandits.EXP2`) see the loss of the arm they played.
:func:`dpbandits.simulate` reports regret against the best fixed action in
hindsight, sum_t l_t(i_t) - min_a L_T(a). Run in Rust
(``rust/src/env/losses.rs``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._validation import float_array, positive_int, seed_or_none

__all__ = ["LossArray", "StochasticLosses", "SwitchingBestExpert"]


class _LossEnvironment:
    _engine: _core.LossEnvEngine
    seed: int | None

    @property
    def n(self) -> int:
        """Number of actions N."""
        return int(self._engine.n)

    def next_round(self) -> NDArray[np.float64]:
        """Generates the next round; returns its loss vector."""
        return self._engine.next_round()

    def regret(self, index: int) -> float:
        """This round's contribution to the regret of playing ``index``:
        l_t(index) - (min_a L_t(a) - min_a L_{t-1}(a)) (sums to the regret)."""
        return float(self._engine.regret(positive_int("index", index, minimum=0)))

    def cumulative(self) -> NDArray[np.float64]:
        """The cumulative loss vector L_t."""
        return self._engine.cumulative()


class StochasticLosses(_LossEnvironment):
    """l_t(i) ~ Bernoulli(means[i]), independent over rounds and actions.

    ``seed``: None draws from operating-system entropy online and from the
    replicate seed alone in a simulation (as every built-in environment).
    """

    def __init__(self, means: ArrayLike, seed: int | None = None) -> None:
        m = float_array("means", means, ndim=1)
        if m.size == 0 or np.any((m < 0) | (m > 1)):
            raise ValueError("invalid argument `means`: give at least one mean, each in [0, 1]")
        self.means = m
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.LossEnvEngine.stochastic(m.tolist(), self.seed)

    def __repr__(self) -> str:
        return f"StochasticLosses(means={self.means.tolist()!r}, seed={self.seed!r})"


class SwitchingBestExpert(_LossEnvironment):
    """Oblivious adversary: phase j lasts ``first_phase * 2**j`` rounds; in
    phase j expert j mod 2 has loss 0 and all others loss 1 (the leader
    switches, fooling follow-the-leader; the best expert in hindsight is the
    last phase's leader). ``n`` >= 2."""

    def __init__(self, n: int, first_phase: int = 1, seed: int | None = None) -> None:
        self.n_actions = positive_int("n", n, minimum=2)
        self.first_phase = positive_int("first_phase", first_phase)
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.LossEnvEngine.switching_best(self.n_actions, self.first_phase, self.seed)

    def __repr__(self) -> str:
        return f"SwitchingBestExpert(n={self.n_actions}, first_phase={self.first_phase})"


class LossArray(_LossEnvironment):
    """User-supplied losses: a (rounds, n) array with entries in [0, 1];
    row t - 1 is round t's loss vector (a simulation may not run longer)."""

    def __init__(self, losses: ArrayLike) -> None:
        arr = float_array("losses", losses, ndim=2)
        if arr.shape[0] == 0 or arr.shape[1] == 0 or np.any((arr < 0) | (arr > 1)):
            raise ValueError("invalid argument `losses`: need a non-empty (rounds, n) array with entries in [0, 1]")
        self.losses = np.ascontiguousarray(arr)
        self.seed = None
        self._engine = _core.LossEnvEngine.from_array(self.losses, None)

    def __repr__(self) -> str:
        return f"LossArray(shape={self.losses.shape})"
