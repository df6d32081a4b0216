"""Loss-sequence environments for online learning (Agarwal & Singh 2017, §2).

Each round fixes a loss vector l_t before the learners act (a stochastic or
oblivious adversary; :class:`ChasingAdversary` is adaptive: it reads the
learner's previous play). ``geometry`` is the decision set X and the loss set it
pairs with (§2):

- ``"simplex"`` (default; experts): X the simplex, l_t in [0, 1]^N;
- ``"ball"``: X the unit Euclidean ball, ||l_t||_2 <= 1;
- ``"cube"``: X = [-1, 1]^N, ||l_t||_1 <= 1.

Generated losses are mapped into the loss set by the learners' clip rule
(clamp to [0, 1]; divide by the norm when it exceeds 1), so a learner of the
same geometry sees exactly the losses it is scored on; :class:`LossArray`
rows must already lie in it.

Full-information learners (:class:`dpbandits.PrivateFTRL`,
:class:`dpbandits.PrivateFTPL`) see the whole vector; bandit learners see
the loss of their play: :class:`dpbandits.EXP2` the loss l_t(i) of its arm,
:class:`dpbandits.SCRiBLe` the loss <l_t, y_t> of its point.
:func:`dpbandits.simulate` reports the regret against the best fixed
decision in hindsight, sum_t <l_t, x_t> - min_{x in X} <L_T, x> (L_T the
cumulative loss; the min is min_a L_T(a) on the simplex, -||L_T||_2 on the
ball, -||L_T||_1 on the cube), with x_t the learner's play: the sampled
index (a vertex) of simplex learners and EXP2, the point x_t of ball and
cube learners, the sampled point y_t of SCRiBLe. It is realized regret
(realized losses and plays), not pseudo-regret. A learner and an
environment of different geometries, or of different dimensions, are
refused with a ValueError. Run in Rust (``rust/src/env/losses.rs``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes
from dpbandits._validation import float_array, positive_int, real, seed_or_none

__all__ = ["ChasingAdversary", "LossArray", "StochasticLosses", "SwitchingBestExpert", "UniformLosses"]

_GEOMETRIES = ("simplex", "ball", "cube")


def _geometry(geometry: str) -> str:
    if geometry not in _GEOMETRIES:
        raise ValueError(f"invalid argument `geometry`: must be one of {_GEOMETRIES}, got {geometry!r}")
    return geometry


class _LossEnvironment:
    _engine: _core.LossEnvEngine
    seed: int | None

    @property
    def n(self) -> int:
        """Number of actions / dimension N."""
        return int(self._engine.n)

    @property
    def geometry(self) -> str:
        """The decision set: "simplex", "ball" or "cube"."""
        return str(self._engine.geometry)

    def next_round(self) -> NDArray[np.float64]:
        """Generates the next round; returns its loss vector."""
        return self._engine.next_round()

    def regret(self, index: int) -> float:
        """This round's contribution to the regret of playing ``index``
        (simplex only): l_t(index) - (min_a L_t(a) - min_a L_{t-1}(a)) (sums
        to the regret)."""
        return float(self._engine.regret(positive_int("index", index, minimum=0)))

    def point_loss(self, x: ArrayLike) -> float:
        """<l_t, x> for a point ``x`` of the decision set."""
        return float(self._engine.point_loss(float_array("x", x, ndim=1)))

    def point_regret(self, x: ArrayLike) -> float:
        """This round's contribution to the regret of playing the point ``x``:
        <l_t, x> - (B_t - B_{t-1}) with B_t = :meth:`best` (sums to the regret;
        can be negative)."""
        return float(self._engine.point_regret(float_array("x", x, ndim=1)))

    def best(self) -> float:
        """B_t = min_{x in X} <L_t, x>: the cumulative loss of the best fixed
        decision in hindsight after the current round."""
        return float(self._engine.best())

    def cumulative(self) -> NDArray[np.float64]:
        """The cumulative loss vector L_t."""
        return self._engine.cumulative()


class StochasticLosses(_LossEnvironment):
    """l_t(i) ~ Bernoulli(means[i]), independent over rounds and actions
    (on the ball or the cube, then divided by its norm when it exceeds 1).

    ``seed``: None draws from operating-system entropy online and from the
    replicate seed alone in a simulation (as every built-in environment).

    Parameters
    ----------
    means:
        Each action's loss probability, in [0, 1].
    seed:
        None (default) or an integer, as above.
    geometry:
        ``"simplex"`` (default, experts), ``"ball"`` or ``"cube"``.

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> env = dp.StochasticLosses([0.4, 0.5, 0.5], seed=0)
    >>> env.next_round().shape
    (3,)
    """

    def __init__(self, means: ArrayLike, seed: int | None = None, geometry: str = "simplex") -> None:
        m = float_array("means", means, ndim=1)
        if m.size == 0 or np.any((m < 0) | (m > 1)):
            raise ValueError("invalid argument `means`: give at least one mean, each in [0, 1]")
        self.means = m
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.LossEnvEngine.stochastic(m.tolist(), self.seed, _geometry(geometry))

    def __repr__(self) -> str:
        g = "" if self.geometry == "simplex" else f", geometry={self.geometry!r}"
        return f"StochasticLosses(means={self.means.tolist()!r}, seed={self.seed!r}{g})"


class SwitchingBestExpert(_LossEnvironment):
    """Oblivious adversary: phase j lasts ``first_phase * 2**j`` rounds; in
    phase j expert j mod 2 has loss 0 and all others loss 1 (the leader
    switches, fooling follow-the-leader; the best expert in hindsight is the
    last phase's leader). ``n`` >= 2. On the ball or the cube the vector
    is divided by its norm.

    Parameters
    ----------
    n:
        Number of experts, an integer >= 2.
    first_phase:
        Length of the first phase, an integer >= 1 (default 1).
    seed:
        None (default) or an integer.
    geometry:
        ``"simplex"`` (default), ``"ball"`` or ``"cube"``.

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> env = dp.SwitchingBestExpert(3)
    >>> env.next_round().tolist(), env.next_round().tolist()
    ([0.0, 1.0, 1.0], [1.0, 0.0, 1.0])
    """

    def __init__(self, n: int, first_phase: int = 1, seed: int | None = None, geometry: str = "simplex") -> None:
        self.n_actions = positive_int("n", n, minimum=2)
        check_bytes("n", self.n_actions, 8 * 2 * self.n_actions, f"the loss vectors of {self.n_actions} experts")
        self.first_phase = positive_int("first_phase", first_phase)
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.LossEnvEngine.switching_best(
            self.n_actions, self.first_phase, self.seed, _geometry(geometry)
        )

    def __repr__(self) -> str:
        g = "" if self.geometry == "simplex" else f", geometry={self.geometry!r}"
        return f"SwitchingBestExpert(n={self.n_actions}, first_phase={self.first_phase}{g})"


class ChasingAdversary(_LossEnvironment):
    """Adaptive adversary: round t charges loss 1 to the expert the learner
    played in round t - 1 and loss 0 to every other expert (round 1: all
    zero). Experts only (the simplex).

    It separates adaptive from oblivious adversaries: a learner that keeps
    its expert for a batch (:class:`dpbandits.PrivateStochasticExperts`,
    :class:`dpbandits.LazyPrivateExperts`,
    :class:`dpbandits.PrivateDartboardExperts`: their guarantees assume an
    oblivious adversary) pays 1 nearly every round while the experts it
    does not play stay at 0, regret about T; a learner drawing afresh each
    round from a spread-out law (:class:`dpbandits.PrivateFTRL`) pays about
    1/d a round. This is the standard construction against lazy
    (low-switching) learners, which Asi, Feldman, Koren & Talwar 2023
    contrast with their lower bounds for adaptive adversaries.

    The losses depend on the plays, so one environment serves one learner:
    :func:`dpbandits.simulate` tells it each play (several learners in one
    call are refused with a StateError); online, call :meth:`record_play`
    with the expert played after each :meth:`next_round`.

    Parameters
    ----------
    n:
        Number of experts, an integer >= 2.
    seed:
        None (default) or an integer (the sequence uses no randomness).

    Raises
    ------
    ValueError
        If ``n`` < 2 or ``seed`` is negative; the message names the argument.
    TypeError
        If an argument has the wrong type.

    Examples
    --------
    >>> import dpbandits as dp
    >>> env = dp.ChasingAdversary(3)
    >>> env.next_round().tolist()
    [0.0, 0.0, 0.0]
    >>> env.record_play(2)
    >>> env.next_round().tolist()
    [0.0, 0.0, 1.0]
    """

    def __init__(self, n: int, seed: int | None = None) -> None:
        self.n_actions = positive_int("n", n, minimum=2)
        check_bytes("n", self.n_actions, 8 * 2 * self.n_actions, f"the loss vectors of {self.n_actions} experts")
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.LossEnvEngine.chase_played(self.n_actions, self.seed)

    def record_play(self, index: int) -> None:
        """The expert the learner played this round (before the next :meth:`next_round`)."""
        self._engine.record_play(positive_int("index", index, minimum=0))

    def __repr__(self) -> str:
        return f"ChasingAdversary(n={self.n_actions})"


class LossArray(_LossEnvironment):
    """User-supplied losses: a (rounds, n) array; row t - 1 is round t's
    loss vector (a simulation may not run longer). Each row must lie in the
    geometry's loss set: entries in [0, 1] (simplex), ||row||_2 <= 1 (ball),
    ||row||_1 <= 1 (cube); nothing is clipped.

    Parameters
    ----------
    losses:
        A (rounds, n) array of finite losses.
    geometry:
        ``"simplex"`` (default), ``"ball"`` or ``"cube"``.

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> env = dp.LossArray([[0.1, 0.9], [0.8, 0.2]])
    >>> env.next_round().tolist()
    [0.1, 0.9]
    """

    def __init__(self, losses: ArrayLike, geometry: str = "simplex") -> None:
        arr = float_array("losses", losses, ndim=2)
        geometry = _geometry(geometry)
        if arr.shape[0] == 0 or arr.shape[1] == 0:
            raise ValueError("invalid argument `losses`: need a non-empty (rounds, n) array")
        if geometry == "simplex" and np.any((arr < 0) | (arr > 1)):
            raise ValueError("invalid argument `losses`: entries must lie in [0, 1] (geometry 'simplex')")
        self.losses = np.ascontiguousarray(arr)
        self.seed = None
        self._engine = _core.LossEnvEngine.from_array(self.losses, None, geometry)

    def __repr__(self) -> str:
        g = "" if self.geometry == "simplex" else f", geometry={self.geometry!r}"
        return f"LossArray(shape={self.losses.shape}{g})"


class UniformLosses(_LossEnvironment):
    """Stochastic linear losses: l_t = center + U(-spread, spread)^N
    (independent over rounds and coordinates), mapped into the geometry's
    loss set (default the ball: divided by ||l_t||_2 when it exceeds 1).

    With ||center|| well inside the loss set this is online linear
    optimization with a fixed best point in expectation (-center /
    ||center||_2 on the ball, -sign(center) on the cube). ``spread`` >= 0;
    ``seed`` as :class:`StochasticLosses`.

    Parameters
    ----------
    center:
        The mean loss vector, finite.
    spread:
        Half-width of the uniform noise, finite and >= 0 (default 0.3).
    geometry:
        ``"ball"`` (default) or ``"cube"``.
    seed:
        None (default) or an integer.

    Raises
    ------
    ValueError
        If an argument lies outside the range given above; the message names
        the argument and the range.
    TypeError
        If an argument has the wrong type (e.g. a string for ``epsilon``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> env = dp.UniformLosses([0.3, -0.4, 0.0], seed=0)
    >>> l = env.next_round()
    >>> l.shape, bool((l ** 2).sum() <= 1.0)
    ((3,), True)
    """

    def __init__(
        self, center: ArrayLike, spread: float = 0.3, geometry: str = "ball", seed: int | None = None
    ) -> None:
        c = float_array("center", center, ndim=1)
        if c.size == 0:
            raise ValueError("invalid argument `center`: give at least one coordinate")
        self.center = c
        self.spread = real("spread", spread)
        if not (math.isfinite(self.spread) and self.spread >= 0.0):
            raise ValueError(f"invalid argument `spread`: must be finite and >= 0, got {spread!r}")
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.LossEnvEngine.uniform(c.tolist(), self.spread, self.seed, _geometry(geometry))

    def __repr__(self) -> str:
        return (
            f"UniformLosses(center={self.center.tolist()!r}, spread={self.spread!r}, "
            f"geometry={self.geometry!r}, seed={self.seed!r})"
        )
