"""Stochastic K-armed bandits with Bernoulli or Gaussian arms (the
instances of Mishra & Thakurta 2015, §5). Run in Rust
(``rust/src/env/k_armed.rs``); the decision set of a round is
``DecisionSet{k, d: 0}``.

Each round draws one uniform (Bernoulli: arm a pays 1 when u < mu_a) or one
standard normal z (Gaussian: arm a pays mu_a + sigma z) shared by the arms:
every arm's rewards are i.i.d. over rounds with the stated law, and learners
run on the same seed meet the same draws (common random numbers).

Generators: the draws come from the environment's own xoshiro256++ stream
(the ``"environment/rewards"`` stream of the seed, keyed through ChaCha8 by
``dpbandits.sim``'s seed scheme), chosen for speed: they play no part in
any privacy guarantee. Every learner's privacy noise comes from the
learner's own ChaCha8 streams through exact samplers, never from this one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._validation import float_array, positive, positive_int, seed_or_none

__all__ = ["BernoulliBandit", "GaussianBandit"]


def _means(means: ArrayLike) -> NDArray[np.float64]:
    arr = float_array("means", means, ndim=1)
    if arr.size == 0:
        raise ValueError("invalid argument `means`: give at least one arm")
    return arr


class _KArmedBandit:
    _engine: _core.KArmedBanditEngine
    means: NDArray[np.float64]
    seed: int | None

    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.means.size)

    def pull(self, arm: int) -> float:
        """Realized reward of pulling ``arm`` (one round)."""
        a = positive_int("arm", arm, minimum=0)
        if not a < self.k:
            raise ValueError(f"invalid argument `arm`: must lie in [0, {self.k}), got {arm}")
        return float(self._engine.pull(a))

    def regret(self, arm: int) -> float:
        """Pseudo-regret max_a mu_a - mu_arm of pulling ``arm``."""
        a = positive_int("arm", arm, minimum=0)
        if not a < self.k:  # a negative index would silently wrap around
            raise ValueError(f"invalid argument `arm`: must lie in [0, {self.k}), got {arm}")
        return float(self.means.max() - self.means[a])


class BernoulliBandit(_KArmedBandit):
    """K arms paying Bernoulli(mu_a); ``means`` in [0, 1].

    ``seed``: None (operating-system entropy online; the replicate seed in
    :func:`dpbandits.simulate`) or an integer (see :mod:`dpbandits.sim`).

    Parameters
    ----------
    means:
        The arms' means, each in [0, 1] (at least one arm).
    seed:
        None (default) or an integer, as above.

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
    >>> env = dp.BernoulliBandit([0.9, 0.5], seed=0)
    >>> env.k, env.pull(0) in (0.0, 1.0), env.regret(1)
    (2, True, 0.4)
    """

    def __init__(self, means: ArrayLike, seed: int | None = None) -> None:
        self.means = _means(means)
        if np.any((self.means < 0) | (self.means > 1)):
            raise ValueError(f"invalid argument `means`: Bernoulli means must lie in [0, 1], got {self.means}")
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.KArmedBanditEngine(self.means.tolist(), None, self.seed)

    def __repr__(self) -> str:
        return f"BernoulliBandit(means={self.means.tolist()}, seed={self.seed!r})"


class GaussianBandit(_KArmedBandit):
    """K arms paying N(mu_a, sigma^2); ``sigma`` > 0.

    Rewards are unbounded: a private learner clips them into its declared
    ``reward_range`` (or refuses them, ``bounds="error"``).

    Parameters
    ----------
    means:
        The arms' means, finite (at least one arm).
    sigma:
        Standard deviation of every arm, finite and > 0 (default 1).
    seed:
        None (default: operating-system entropy) or an integer.

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
    >>> env = dp.GaussianBandit([0.5, 0.0], sigma=0.1, seed=0)
    >>> env.k, isinstance(env.pull(1), float)
    (2, True)
    """

    def __init__(self, means: ArrayLike, sigma: float = 1.0, seed: int | None = None) -> None:
        self.means = _means(means)
        self.sigma = positive("sigma", sigma)
        if self.sigma > 1e300:  # mu + sigma z would overflow to inf for |z| > ~1.8
            raise ValueError(f"invalid argument `sigma`: must be <= 1e300 (finite rewards), got {sigma!r}")
        self.seed = seed_or_none("seed", seed)
        self._engine = _core.KArmedBanditEngine(self.means.tolist(), self.sigma, self.seed)

    def __repr__(self) -> str:
        return f"GaussianBandit(means={self.means.tolist()}, sigma={self.sigma}, seed={self.seed!r})"
