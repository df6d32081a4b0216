"""Private contextual UCB and Thompson sampling of Mishra & Thakurta 2015
(App. D.2, Alg. 3; App. D.3, Alg. 4): the baselines Shariff & Sheffet 2018
compare against.

Both keep A = I + sum z z^T and b = sum z y through one Laplace tree per
entry A_ij (i <= j) and b_i, each eps0 = 2 epsilon / (d^2 + 3d)-DP
(line 2); decisions read only the released A~ and b~ (line 5). When A~ is
not positive definite (line 6) the fallback branch (lines 8-9) is taken;
``fallbacks`` counts those rounds. The engine is ``rust/src/policy/mt_contextual.rs``.

Readings of the appendix's typesetting (our choices, stated once here):

- Alg. 3 line 7 prints the width alpha sqrt(z^T A~ z); we use
  alpha sqrt(z^T A~^-1 z), the LinUCB width the algorithm is built on (with
  A~ the width would grow with the data instead of shrinking).
- Alg. 4 line 7 prints mu~ ~ N(mu^, alpha A~); we use N(mu^, alpha A~^-1),
  the linear Thompson sampling posterior (Agrawal & Goyal 2013), and line
  11 plays argmax z^T mu~ (it prints mu^, which would make the draw unused).
- Line 1's A = I_d is added to every release once (A~ = I + released sum).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._sizes import MAX_TREE_ENTRIES, check_bytes, check_tree_entries, tree_bytes
from dpbandits._validation import epsilon_range, integral_arguments, non_negative, positive, positive_int, seed_or_none
from dpbandits.learners.online import OnlineLearner
from dpbandits.noise import NoiseWire
from dpbandits.privacy.factorization import counter_choice, counter_parameters, default_counter
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.mishra_thakurta import (
    contextual_entry_epsilon,
    contextual_node_scales,
    contextual_realized_epsilon,
)
from dpbandits.privacy.mishra_thakurta import reported_epsilon as _reported_epsilon
from dpbandits.privacy.secure import lattice_laplace, sampler_choice

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = ["PrivateContextualThompsonSampling", "PrivateContextualUCB"]


class _MishraThakurtaContextual(OnlineLearner):
    _rule: str

    @epsilon_range
    def __init__(
        self,
        d: int,
        horizon: int,
        epsilon: float,
        alpha: float = 1.0,
        L: float = 1.0,
        B: float = 1.0,
        bounds: Literal["clip", "error"] = "clip",
        calibration: Literal["paper", "tight"] = "tight",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        counter: Literal["binary", "smooth-binary"] | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(type(self), {
            "d": d, "horizon": horizon, "epsilon": epsilon, "alpha": alpha, "L": L, "B": B,
            "bounds": bounds, "calibration": calibration, "seed": seed, "sampler": sampler,
            "secure": secure, "counter": counter,
        })
        self.sampler = sampler_choice(sampler)
        self.d = positive_int("d", d)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        entries = self.d * (self.d + 1) // 2 + self.d
        check_bytes("d", self.d, tree_bytes(entries, self.horizon) + 2 * 8 * self.d * self.d,
                    f"the {entries} tree-counted entries of a {self.d} x {self.d} matrix and a {self.d}-vector")
        # The largest d whose d(d+1)/2 matrix entries fit one tree at this horizon.
        most = MAX_TREE_ENTRIES // max(1, self.horizon.bit_length())
        check_tree_entries("d", self.d, self.d * (self.d + 1) // 2, self.horizon, (math.isqrt(8 * most + 1) - 1) // 2)
        self.epsilon = positive("epsilon", epsilon)
        self.alpha = non_negative("alpha", alpha)
        self.L = positive("L", L)
        self.B = positive("B", B)
        if bounds not in ("clip", "error"):
            raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
        if calibration not in ("paper", "tight"):
            raise ValueError(f"invalid argument `calibration`: must be 'paper' or 'tight', got {calibration!r}")
        self.calibration = calibration
        self.entry_epsilon = contextual_entry_epsilon(self.epsilon, self.d)
        self.counter = counter_choice(default_counter(counter, calibration), "laplace")
        self.scale_a, self.scale_b = contextual_node_scales(
            self.d, self.horizon, self.epsilon, self.L, self.B, calibration, counter=self.counter
        )
        noise_a: NoiseWire = ("laplace", self.scale_a)
        noise_b: NoiseWire = ("laplace", self.scale_b)
        if self.sampler == "lattice":
            # Each entry tree's input is rounded to its lattice (one step of
            # allowance on its sensitivity: L^2 for A_ij, 2 L B for b_i).
            bound = self.horizon * max(self.L * self.L, self.L * self.B)
            noise_a = lattice_laplace(self.scale_a, self.L * self.L, sum_bound=bound).wire()
            noise_b = lattice_laplace(self.scale_b, 2.0 * self.L * self.B, sum_bound=bound).wire()
        #: (A-entry noise, b-entry noise) of the trees' nodes, as the engine gets them.
        self.noise_wire = (noise_a, noise_b)
        self._engine = _core.MtContextualEngine(
            self.d, self.horizon, rule=self._rule, alpha=self.alpha,
            noise_a=noise_a, noise_b=noise_b, l=self.L, b_tilde=self.B,
            clip=bounds == "clip", seed=seed_or_none("seed", seed),
            counter=self.counter, theta=counter_parameters(self.counter, self.horizon, "laplace")[0],
        )
        self._use_secure(secure, self.sampler)
        self._pending = None

    @property
    def fallbacks(self) -> int:
        """Selections that took the fallback branch (released A~ not positive definite)."""
        return int(self._engine.fallbacks)

    @property
    def last_fallback(self) -> bool:
        """Whether the last selection took the fallback branch."""
        return bool(self._engine.last_fallback)

    def released(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The released (A~, b~) the next selection reads."""
        return self._engine.released()

    def policy(self, seed: int | None = None) -> Any:
        """A read-only, picklable policy from the released (A~, b~) only
        (:class:`dpbandits.serving_linear.MishraThakurtaPolicy`; ``seed``:
        its own generator for Thompson draws). Serving it costs no privacy."""
        from dpbandits.serving_linear import MishraThakurtaPolicy

        with self.lock:
            a, b = self._engine.released()
            return MishraThakurtaPolicy(self._rule, self.alpha, a, b, self.policy_version, seed=seed)

    @property
    def privacy(self) -> Guarantee:
        """epsilon-joint DP of contexts and rewards.

        Basic composition of the d(d+1)/2 + d entry trees (line 2), each
        accounted exactly (tree_levels(T) nodes per leaf, sensitivities L^2
        and 2 L B): the sum is epsilon under ``"tight"``, and
        epsilon tree_levels(T) / log2 T under ``"paper"`` (the appendix's
        log2 T count), which is what is reported. Joint DP (as Shariff &
        Sheffet Claim 7): round t's choice also reads round t's own contexts.
        """
        realized = contextual_realized_epsilon(
            self.d, self.horizon, self.scale_a, self.scale_b, self.L, self.B, counter=self.counter
        )
        basis = ("Mishra & Thakurta 2015, Alg. 3/4 line 2 (per-entry Laplace trees, eps0 = 2 eps/(d^2+3d)); "
                 "exact node count")
        if self.counter != "binary":
            basis += ("; entry sums by the smooth binary mechanism (Andersson & Pagh 2023), H - w nodes per round "
                      "(dpbandits.privacy.smooth_binary)")
        return self._secure_guarantee(Guarantee(
            model="joint", epsilon=_reported_epsilon(self.epsilon, realized), delta=0.0,
            protects="contexts and rewards",
            basis=basis,
            calibration=self.calibration,  # type: ignore[arg-type]
            sampler=self.sampler,
        ))


class PrivateContextualUCB(_MishraThakurtaContextual):
    """Private contextual UCB (Mishra & Thakurta 2015, Alg. 3; module docstring).

    A~ positive definite: play argmax z^T A~^-1 b~ + alpha sqrt(z^T A~^-1 z);
    otherwise argmax z^T b~ + alpha ||z||. Inputs: ||z|| <= ``L``,
    |y| <= ``B`` (clipped with ``bounds="clip"``, refused with ``"error"``);
    node scales from :func:`dpbandits.privacy.mishra_thakurta.contextual_node_scales`.
    ``calibration="tight"``
    (default: node scales from the exact node count, so the reported epsilon
    is the requested one) or ``"paper"`` (the appendix's log2 T count, for
    reproduction; it meets only epsilon tree_levels(T) / log2 T, which
    ``privacy`` reports). ``counter``: ``"smooth-binary"`` (the default
    with ``"tight"``; not in the paper: the entry sums by the smooth binary
    mechanism, Andersson & Pagh 2023, :mod:`dpbandits.privacy.smooth_binary`)
    or ``"binary"`` (the appendix's trees; the default with ``"paper"``).

    Parameters
    ----------
    d:
        Dimension of the contexts, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 2.
    epsilon:
        Privacy parameter, finite and > 0: epsilon-joint DP of contexts and
        rewards.
    alpha:
        Exploration weight, finite and >= 0 (default 1).
    L, B:
        Bounds on ||z|| and |y|, finite and > 0 (default 1).
    bounds:
        ``"clip"`` (default) or ``"error"`` for a context or reward beyond
        them.
    calibration:
        ``"tight"`` (default) or ``"paper"``.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise (not protected against
        low-bit attacks; the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (lattice sampler
        only); False (default) from the seeded generator.
    counter:
        ``"smooth-binary"`` or ``"binary"``; None (default) for the
        calibration's default.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

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
    >>> learner = dp.PrivateContextualUCB(d=5, horizon=1000, epsilon=1.0, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=1)
    >>> for t in range(1, 51):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.t, learner.privacy.model
    (50, 'joint')
    """

    _rule = "ucb"


class PrivateContextualThompsonSampling(_MishraThakurtaContextual):
    """Private contextual Thompson sampling (Mishra & Thakurta 2015, Alg. 4).

    A~ positive definite: mu~ ~ N(A~^-1 b~, alpha A~^-1); otherwise
    mu~ ~ N(b~, alpha I); play argmax z^T mu~ (module docstring). No
    gap-estimation or random-pulling phase (App. D.3). Arguments as
    :class:`PrivateContextualUCB`; ``alpha`` >= 0 scales the posterior
    covariance.

    Parameters
    ----------
    d:
        Dimension of the contexts, an integer >= 1.
    horizon:
        Number of rounds T, an integer >= 2.
    epsilon:
        Privacy parameter, finite and > 0: epsilon-joint DP of contexts and
        rewards.
    alpha:
        Exploration weight, finite and >= 0 (default 1).
    L, B:
        Bounds on ||z|| and |y|, finite and > 0 (default 1).
    bounds:
        ``"clip"`` (default) or ``"error"`` for a context or reward beyond
        them.
    calibration:
        ``"tight"`` (default) or ``"paper"``.
    seed:
        None (default: operating-system entropy) or an integer for a
        reproducible run.
    sampler:
        ``"lattice"`` (default): exact discrete noise on a power-of-two
        lattice; ``"float"``: floating-point noise (not protected against
        low-bit attacks; the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (lattice sampler
        only); False (default) from the seeded generator.
    counter:
        ``"smooth-binary"`` or ``"binary"``; None (default) for the
        calibration's default.
    ledger:
        A :class:`dpbandits.Ledger` to register the learner on at
        construction (with ``dataset``): its whole guarantee is charged
        there, as by ``ledger.register(learner, dataset=dataset)``; a
        charge past the budget fails the construction
        (:class:`~dpbandits.errors.PrivacyBudgetError`). Default None.
    dataset:
        The ledger's data set the learner's rewards come from (with
        ``ledger``).

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
    >>> learner = dp.PrivateContextualThompsonSampling(d=5, horizon=1000, epsilon=1.0, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=1)
    >>> for t in range(1, 51):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.t, learner.privacy.model
    (50, 'joint')
    """

    _rule = "thompson"
