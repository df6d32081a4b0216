"""Type stubs of the Rust extension ``dpbandits._core`` (rust/src/py/).

Hand-written, checked by ``mypy.stubtest`` (tests/test_typing.py): every
class, signature, default and ``__all__`` entry must match the extension.
The surface that ``engine_methods!`` shares in Rust is written once here
too, as stub-only protocols (``_Pickled``, ``_Learner``, ...) the engine
classes derive from. Users
should prefer the Python wrappers (``dpbandits.mechanisms``,
``dpbandits.design``, ``dpbandits.learners``), which validate arguments and
document the papers' equations; these functions assume float64 input and
raise ValueError (or a ``dpbandits.errors`` subclass) on bad values.
"""

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, final, overload

import numpy as np
from numpy.typing import NDArray
from typing_extensions import Self, disjoint_base

# A noise value, as the privacy layer computes it once (rust/src/py/noise.rs).
from dpbandits.noise import NoiseWire as _Noise

__version__: str
__all__ = [
    "BaiBernoulliRewards",
    "BaiEngine",
    "BatchedExp3Engine",
    "ClientCall",
    "DartboardExpertsEngine",
    "EliminationEngine",
    "EngineBase",
    "EngineLock",
    "EnvironmentFactory",
    "EpochCounter",
    "Exp2Engine",
    "FactorizationCounter",
    "FixedBudgetBaiEngine",
    "FollowTheLeaderEngine",
    "KArmedBanditEngine",
    "LazyBallEngine",
    "LazyExpertsEngine",
    "LearnerFactory",
    "LinUcbEngine",
    "LinearBanditEnvEngine",
    "LinearPolicyEngine",
    "LogisticContextualEnvEngine",
    "LossEnvEngine",
    "MabEngine",
    "MtContextualEngine",
    "OnlineBase",
    "OnlineCall",
    "OnlineLogisticEngine",
    "PhasedMabEngine",
    "ReplayEnvEngine",
    "ReweightedGlmEngine",
    "ReweightedLinUcbEngine",
    "RowQueue",
    "ScribleEngine",
    "ShariffSheffetEnvEngine",
    "StochasticExpertsEngine",
    "TreeCounter",
    "TrustLinUcbEngine",
    "__version__",
    "_restore_bai_engine",
    "_restore_batched_exp3",
    "_restore_dartboard_experts",
    "_restore_elimination",
    "_restore_epoch_counter",
    "_restore_exp2",
    "_restore_factorization_counter",
    "_restore_fixed_budget_bai_engine",
    "_restore_follow_the_leader",
    "_restore_k_armed_bandit",
    "_restore_lazy_ball",
    "_restore_lazy_experts",
    "_restore_linear_bandit_env",
    "_restore_linear_policy",
    "_restore_linucb",
    "_restore_logistic_contextual_env",
    "_restore_mab",
    "_restore_mt_contextual",
    "_restore_online_logistic",
    "_restore_phased_mab",
    "_restore_reweighted_glm",
    "_restore_reweighted_linucb",
    "_restore_scrible",
    "_restore_shariff_sheffet_env",
    "_restore_stochastic_experts",
    "_restore_tree_counter",
    "_restore_trust_linucb",
    "best_row",
    "core_set",
    "kernel_build",
    "learner_method",
    "sample_gaussian",
    "sample_laplace",
    "sample_lattice",
    "sample_symmetric_gaussian",
    "sample_wishart",
    "simulate_builtin",
    "simulate_python_env",
    "timing_audit",
]

def kernel_build() -> str:
    """Which build of the hot kernels runs: ``"avx2-fma"`` (chosen at
    import when the CPU has AVX2 and FMA) or ``"baseline"`` (x86-64 SSE2;
    forced by ``DPBANDITS_CPU_DISPATCH=baseline`` for runs reproducible bit
    for bit across CPUs)."""

# --- shared surfaces (rust/src/py/mod.rs, engine_methods!) ------------------
# Stub-only protocols: the methods every engine of a kind has, written once
# here as the macro writes them once in Rust. They do not exist at runtime.

class _Pickled(Protocol):
    """A class whose whole state round-trips through bytes and pickle."""

    def to_bytes(self) -> bytes:
        """Whole state, node noise and generators included (secret as the data)."""
    def __reduce__(self) -> tuple[Callable[[bytes], Self], tuple[bytes]]: ...

class _Learner(_Pickled, Protocol):
    """The surface every learner engine shares."""

    @property
    def t(self) -> int: ...
    @property
    def horizon(self) -> int: ...
    @property
    def clipped_rewards(self) -> int:
        """Inputs recorded outside the declared bounds and clipped into them."""
    def reseed(self, seed: int | None = None) -> None:
        """Draws all future noise from a new root (None: operating-system
        entropy); past releases are unchanged."""
    @overload
    def noise_parameters(self, as_json: Literal[False] = False) -> dict[str, Any]:
        """The configuration this engine was built with (noise law and
        scales, lattice exponents, shift, padding, horizon, bounds,
        confidence constants) as nested plain values, or (``as_json``) the
        JSON text of them; read-only. Checkpoint loading compares it with
        the engine built from the header."""
    @overload
    def noise_parameters(self, as_json: Literal[True]) -> str: ...
    def _factory(self) -> LearnerFactory:
        """The configuration, for the simulation loop (one engine per replicate)."""
    def _generator_keys(self) -> list[bytes]:
        """The 32-byte keys of the engine's seeded (ChaCha8) generators, fixed
        from construction or reseeding; checkpoint loading compares them with
        those of the engine built from the header's seed."""

class _SecureLearner(_Learner, Protocol):
    """A learner with a secure mode: privacy noise from the operating system."""

    def use_os_entropy(self) -> None:
        """Every privacy noise draw from the operating system from now on (secure mode)."""
    @property
    def os_entropy(self) -> bool:
        """Whether privacy noise comes from the operating system."""

class _Counter(_Pickled, Protocol):
    """The surface both continual counters share."""

    def add(self, value: NDArray[np.float64]) -> None:
        """Adds the next value (shape must equal the counter's)."""
    def add_many(self, values: NDArray[np.float64]) -> None:
        """Adds values[0], values[1], ... (first axis = rounds); GIL released."""
    def release(self) -> NDArray[np.float64]:
        """The noisy prefix sum after the last addition."""
    @property
    def t(self) -> int: ...
    @property
    def noise_terms(self) -> int: ...
    @property
    def horizon(self) -> int: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def noise(self) -> _Noise:
        """The noise value the counter took."""
    @property
    def os_entropy(self) -> bool:
        """Whether draws come from the operating system."""
    @property
    def secure_exponent(self) -> int | None:
        """Secure mode: lattice exponent j (values are multiples of 2^-j); None otherwise."""
    def _release_runs(self, values: NDArray[np.float64], runs: int) -> NDArray[np.float64]:
        """``runs`` independent runs on ``values`` (rounds first): every release,
        shape (runs, rounds, *shape). Fresh counters only; for privacy audits."""

class _Arms(Protocol):
    """A K-armed engine under the delayed-feedback reduction QPM-D
    (rust/src/policy/delayed.rs; bindings rust/src/py/karmed.rs). Every
    method takes the engine's lock (``lock``) for the call."""

    def select(self) -> int:
        """The current proposal, counted as outstanding until its reward arrives."""
    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` selections (all the proposal), outstanding."""
    @overload
    def update(self, arm_or_reward: float, reward: None = None) -> None:
        """``update(reward)``: the one outstanding selection's reward."""
    @overload
    def update(self, arm_or_reward: int, reward: float) -> None: ...
    def update_many(self, arms: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        """The loop of ``update(arms[i], rewards[i])`` (GIL released)."""
    def observe(self, arm: int, reward: float) -> None:
        """The engine's own call: ``reward`` of ``arm`` fed at once."""
    def _set_label(self, name: str) -> None:
        """Names the learner holding the engine (in its clipped-reward warning)."""
    @property
    def outstanding(self) -> int: ...
    def outstanding_by_arm(self) -> NDArray[np.uint64]: ...
    def queue_lengths(self) -> NDArray[np.uint64]: ...
    def add_arm(self) -> int:
        """Adds an arm with fresh statistics; returns its index."""
    def retire_arm(self, arm: int) -> None:
        """Retires ``arm``: never selected again."""
    def retired(self) -> NDArray[np.bool_]: ...
    @property
    def dropped(self) -> int:
        """Rewards queued for retired arms: accepted, never fed."""
    def policy(self) -> tuple[int, int]:
        """(arm, version) of the current proposal."""
    @property
    def policy_version(self) -> int: ...
    @property
    def lock(self) -> EngineLock: ...
    def pulls(self) -> NDArray[np.uint64]:
        """Pulls of each arm that the index statistics count (released phases for phased engines)."""
    @property
    def k(self) -> int: ...
    def _simulate_delayed(self, means: Sequence[float], horizon: int, max_delay: int, env_seed: int) -> float:
        """Delayed-feedback simulation on Bernoulli arms; the pseudo-regret."""

@final
class EngineLock:
    """The reentrant lock of a K-armed engine (as ``threading.RLock``)."""

    def acquire(self, blocking: bool = True, timeout: float = ...) -> bool:
        """As ``threading.RLock.acquire`` (``timeout`` -1: no limit)."""
    def release(self) -> None: ...
    def __enter__(self) -> bool: ...
    def __exit__(self, *_args: object) -> None: ...
    def _is_owned(self) -> bool: ...

@disjoint_base
class OnlineBase:
    """The native base of the learners with an online call: ``select`` and
    ``update`` reach the learner's :class:`OnlineCall` in one Rust call
    (see ``dpbandits.learners.online_call``)."""

    def __new__(cls, *_args: Any, **_kwargs: Any) -> Self: ...
    # select and update: each learner class documents and types its own
    # (native descriptors of the class, `learner_method`, take their place).
    @property
    def _online_call(self) -> OnlineCall | None: ...
    @_online_call.setter
    def _online_call(self, call: OnlineCall | None) -> None: ...

@disjoint_base
class EngineBase:
    """The native base of the learners whose ``select`` and ``update`` are
    their engine's own (the K-armed and fixed-budget best-arm
    identification learners; see ``dpbandits.learners.online.EngineMethods``)."""

    def __new__(cls, *_args: Any, **_kwargs: Any) -> Self: ...
    @property
    def _armed_engine(self) -> Any: ...
    @_armed_engine.setter
    def _armed_engine(self, engine: Any) -> None: ...

@final
class OnlineCall:
    """``select`` / ``update`` of a learner bound in Rust (EXP2, SCRiBLe,
    batched elimination, FTRL / FTPL, the private experts, batched EXP3,
    the best-arm identification and the contextual linear learners), with
    the learner's lock and
    outstanding selections (see ``dpbandits.learners.online_call``)."""

    def __new__(
        cls,
        engine: Any,
        checked_select: Callable[..., Any],
        checked_update: Callable[..., Any],
        *,
        simplex: bool = True,
        queue: RowQueue | None = None,
    ) -> OnlineCall: ...
    @property
    def lock(self) -> EngineLock: ...
    @property
    def queue(self) -> RowQueue | None: ...
    @property
    def pending(self) -> Any: ...
    @pending.setter
    def pending(self, value: Any) -> None: ...
    def select(self, *args: Any) -> Any: ...
    def update(self, *args: Any, policy_version: int | None = None) -> None: ...

@final
class ClientCall:
    """``select(features)`` / ``update(reward)`` of the contextual
    reduction of batched elimination, bound in Rust on the linear
    learner's ``OnlineCall`` (see ``ContextualEliminationBandit``)."""

    def __new__(
        cls,
        call: OnlineCall,
        thetas: NDArray[np.float64],
        checked_select: Callable[..., Any],
        checked_update: Callable[..., Any],
    ) -> ClientCall: ...
    def select(self, *args: Any) -> Any: ...
    def update(self, *args: Any) -> None: ...

def learner_method(cls: type[OnlineBase] | type[EngineBase], name: str) -> Any:
    """The method descriptor ``name`` with ``cls`` as its type: for a
    subclass of :class:`OnlineBase`, ``"select_noargs"``, ``"select"``,
    ``"update"`` or ``"update_losses"`` (``select()``, ``select(*args,
    **kwargs)``, ``update(*args, policy_version=None)``,
    ``update(losses)``); for a subclass of :class:`EngineBase`,
    ``"engine_select"`` or ``"engine_update"`` (the engine's ``select()``
    / ``update(*args)``). The learner class sets it as its ``select`` or
    ``update`` (see ``dpbandits.learners.online_call`` and
    ``dpbandits.learners.online``)."""

def best_row(phi: NDArray[np.float64], theta: NDArray[np.float64]) -> int:
    """The first row of ``phi`` (k >= 1, d) with the largest inner product with ``theta`` (d,)."""

@final
class RowQueue:
    """First-in-first-out feature rows of a contextual learner's outstanding
    selections (the interface of ``dpbandits.learners.outstanding.OutstandingRows``)."""

    def __new__(cls, d: int) -> RowQueue: ...
    def __len__(self) -> int: ...
    def rows(self) -> NDArray[np.float64]: ...
    def clear(self) -> None: ...
    def push(self, row: NDArray[np.float64]) -> None: ...
    def push_many(self, rows: NDArray[np.float64]) -> None: ...
    def only(self) -> NDArray[np.float64] | None: ...
    def pop_first(self) -> None: ...
    def settle(self, x: NDArray[np.float64]) -> bool: ...
    def settle_many(self, xs: NDArray[np.float64]) -> None: ...

class _Contextual(Protocol):
    """A contextual linear learner (part ``contextual``)."""

    def select(self, actions: NDArray[np.float64]) -> int:
        """Index of the row of ``actions`` (k, d) to play."""
    def observe(self, x: NDArray[np.float64], reward: float) -> bool:
        """Records a played row and its reward (bounds enforced); True when
        it is the first pair the bounds policy clipped."""
    def select_many(self, decision_sets: NDArray[np.float64]) -> tuple[NDArray[np.int64], BaseException | None]:
        """``select`` on each (k, d) set of ``decision_sets`` (n, k, d), GIL released:
        (the selections made, the error that stopped the batch or None)."""
    def observe_many(
        self, xs: NDArray[np.float64], rewards: NDArray[np.float64]
    ) -> tuple[int, BaseException | None]:
        """``observe`` of each row of ``xs`` (n, d) with its reward, GIL released:
        (rows recorded, the error that stopped the batch or None)."""
    @property
    def d(self) -> int: ...

class _Rounds(Protocol):
    """An environment played round by round (part ``rounds``)."""

    def next_round(self) -> NDArray[np.float64]:
        """The next round's (k, d) decision set."""
    def reward(self, index: int) -> float:
        """Reward of ``index`` in the current round."""
    @property
    def t(self) -> int: ...

# --- samplers (rust/src/noise/) ---------------------------------------------

def sample_laplace(scale: float, count: int, seed: int | None = None) -> NDArray[np.float64]:
    """``count`` i.i.d. Laplace(0, scale) draws (stream "sampler" of ``seed``;
    operating-system entropy when ``seed`` is None)."""

def sample_gaussian(sigma: float, count: int, seed: int | None = None) -> NDArray[np.float64]:
    """``count`` i.i.d. N(0, sigma^2) draws."""

def sample_symmetric_gaussian(
    sigma: float, p: int, count: int, seed: int | None = None
) -> NDArray[np.float64]:
    """``count`` p x p matrices (Z + Z^T)/sqrt(2), Z_ij ~ N(0, sigma^2); shape (count, p, p)."""

def sample_wishart(
    scale_matrix: NDArray[np.float64], df: float, count: int, seed: int | None = None
) -> NDArray[np.float64]:
    """``count`` draws of W_p(scale_matrix, df) by the Bartlett decomposition; shape (count, p, p)."""

# --- tree counters (rust/src/counter/) ---------------------------------------

@final
class TreeCounter(_Counter):
    """Continual-release counter (binary mechanism); see dpbandits.mechanisms.TreeCounter."""

    def __new__(
        cls,
        shape: Sequence[int],
        horizon: int,
        noise: _Noise,
        seed: int | None = None,
        padded: bool = False,
        pad_to: int | None = None,
        os_entropy: bool = False,
        padding: str = "fresh",
    ) -> Self: ...
    def live_nodes(self) -> list[tuple[int, int, int, NDArray[np.float64]]]:
        """(level, first_leaf, last_leaf, noisy_sum) of the current decomposition."""
    def reseed(self, seed: int | None = None) -> None:
        """Future node noise and padding from a new root (None: operating-system entropy)."""
    @property
    def padded(self) -> bool: ...
    @property
    def pad_to(self) -> int: ...
    @property
    def padding(self) -> str:
        """How releases are padded: "fresh" (also when not padded) or "persistent"."""
    @staticmethod
    def from_bytes(state: bytes) -> TreeCounter: ...

def _restore_tree_counter(state: bytes) -> TreeCounter: ...

@final
class FactorizationCounter(_Counter):
    """Continual counter by a factorization A = B C (rust/src/counter/factorization.rs): Toeplitz
    ("sqrt", "blt" with ``theta``, ``omega``) or the smooth binary mechanism ("smooth-binary" with
    ``theta`` = [height, ones]); see dpbandits.mechanisms.TreeCounter(counter=...)."""

    def __new__(
        cls,
        shape: Sequence[int],
        horizon: int,
        noise: _Noise,
        factorization_kind: str,
        theta: Sequence[float] = ...,
        omega: Sequence[float] = ...,
        seed: int | None = None,
        os_entropy: bool = False,
    ) -> Self: ...
    def encoder(self, n: int) -> NDArray[np.float64]:
        """The first ``n`` encoder coefficients c_0..c_{n-1} (empty for "smooth-binary")."""
    def reseed(self, seed: int | None = None) -> None:
        """Future noise from a new root (None: operating-system entropy)."""
    @property
    def factorization(self) -> tuple[str, list[float], list[float]]:
        """("sqrt" | "blt" | "smooth-binary", theta, omega)."""
    @property
    def padded(self) -> bool: ...
    @staticmethod
    def from_bytes(state: bytes) -> FactorizationCounter: ...

def _restore_factorization_counter(state: bytes) -> FactorizationCounter: ...

@final
class EpochCounter(_Counter):
    """Continual counter releasing each geometric epoch's sum once (rust/src/counter/epoch.rs);
    see dpbandits.mechanisms.EpochCounter."""

    def __new__(
        cls,
        shape: Sequence[int],
        horizon: int,
        noise: _Noise,
        first_epoch: int,
        epoch_ratio: float,
        seed: int | None = None,
        os_entropy: bool = False,
    ) -> Self: ...
    def reseed(self, seed: int | None = None) -> None:
        """Future epoch noise from a new root (None: operating-system entropy)."""
    @property
    def epochs(self) -> int:
        """Released epochs."""
    @property
    def schedule(self) -> tuple[int, float]:
        """(first epoch length n_0, growth ratio r)."""
    @staticmethod
    def from_bytes(state: bytes) -> EpochCounter: ...

def _restore_epoch_counter(state: bytes) -> EpochCounter: ...

# --- core sets (rust/src/design.rs) -----------------------------------------

def core_set(
    actions: NDArray[np.float64],
    stop_at: float | None = None,
    max_iter: int = ...,
    reduce_support: bool = True,
) -> tuple[NDArray[np.int64], NDArray[np.float64], float, int, float]:
    """Frank-Wolfe core set of the rows of ``actions`` (Hanna et al., App. A).

    ``actions`` is a (K, d) float64 array (C or Fortran order, any strides).
    Starts from the uniform design and runs Frank-Wolfe until
    max_a ||a||^2_{V(pi)^{-1}} <= ``stop_at`` (None means 2d, Lemma 2 Eq. 5;
    must be >= d), for at most ``max_iter`` steps; then, if
    ``reduce_support``, reduces the support to at most d(d+1)/2 actions
    (Kiefer-Wolfowitz; Lattimore & Szepesvari Ch. 21) without increasing any
    ||a||^2_{V^{-1}}. The GIL is released during the computation.

    Returns ``(support, weights, value, iterations, stop_at)``. Raises
    ValueError (not 2-D, NaN/inf, K = 0, d = 0, stop_at < d, max_iter
    reached) and dpbandits.errors.DegenerateInputError (a zero row, K < d,
    actions not spanning R^d). Prefer ``dpbandits.design.core_set``.
    """

# --- learners (rust/src/policy/) --------------------------------------------

@final
class LinUcbEngine(_Contextual, _SecureLearner):
    """LinUCB with changing regularizers (Shariff & Sheffet Alg. 1).

    Exactly one of ``regularizer`` (exact statistics, non-private) and
    ``noise`` (statistics released by a (d+1) x (d+1) tree counter,
    ``shift`` added to the top-left block of each release, releases padded to
    ``pad_to`` node draws, ``padding`` "fresh" every round or "persistent" per
    tree level) must be given. beta_t is
    ``beta_noise_sd * sqrt(max(0, beta_log_offset + log det V_t)) + beta_offset``,
    or ``beta_constant``. ``counter`` "sqrt", "blt" (with ``theta``,
    ``omega``) or "smooth-binary" (``theta`` = [height, ones]) releases the statistics by a
    factorization counter instead of the tree (rust/src/counter/); "epoch" by the epoch
    counter (epochs of ``first_epoch`` rounds growing by ``epoch_ratio``, one release each)
    with the radius of ``dpbandits.privacy.epoch`` (``op_bound``, ``vec_bound``, ``ridge``,
    ``s``, ``mixed_bound``; ``beta_offset`` must be 0). Rows (x, y) are clipped to ||x|| <= l, |y| <= b_tilde
    when ``clip``, else rejected.
    """

    def __new__(
        cls,
        d: int,
        horizon: int,
        *,
        regularizer: float | None = None,
        refactor_every: int = 64,
        noise: _Noise | None = None,
        shift: float = 0.0,
        pad_to: int = 0,
        padding: str = "fresh",
        beta_noise_sd: float = 1.0,
        beta_log_offset: float = 0.0,
        beta_offset: float = 0.0,
        beta_constant: float | None = None,
        l: float = 1.0,
        b_tilde: float = 1.0,
        clip: bool = True,
        seed: int | None = None,
        counter: str | None = None,
        theta: Sequence[float] = ...,
        omega: Sequence[float] = ...,
        first_epoch: int = 1,
        epoch_ratio: float = 2.0,
        op_bound: float = 0.0,
        vec_bound: float = 0.0,
        ridge: float = 1.0,
        s: float = 1.0,
        mixed_bound: float = 0.0,
    ) -> Self: ...
    def ucb(self, actions: NDArray[np.float64]) -> NDArray[np.float64]:
        """UCB of every row of ``actions``."""
    def _release_runs(self, values: NDArray[np.float64], runs: int) -> NDArray[np.float64]:
        """``runs`` runs of a fresh engine's epoch counter on the (rows, d + 1, d + 1)
        matrices ``values``: (runs, rows, d + 1, d + 1) releases (audits)."""
    @property
    def psd_failures(self) -> int: ...
    def policy(self) -> LinearPolicyEngine:
        """The policy the next selection follows, from released values only."""
    @staticmethod
    def from_bytes(state: bytes) -> LinUcbEngine: ...

def _restore_linucb(state: bytes) -> LinUcbEngine: ...

@final
class LinearPolicyEngine(_Pickled):
    """A LinUCB policy frozen from released values (made by an engine's ``policy()``)."""

    @property
    def d(self) -> int: ...
    @property
    def beta(self) -> float: ...
    def theta(self) -> NDArray[np.float64]: ...
    def released(self) -> tuple[str, NDArray[np.float64], NDArray[np.float64]]: ...
    def select(self, actions: NDArray[np.float64]) -> int: ...
    def select_many(self, decision_sets: NDArray[np.float64]) -> tuple[NDArray[np.int64], BaseException | None]: ...
    def scores(self, actions: NDArray[np.float64]) -> NDArray[np.float64]: ...
    @staticmethod
    def from_bytes(state: bytes) -> LinearPolicyEngine: ...

def _restore_linear_policy(state: bytes) -> LinearPolicyEngine: ...

@final
class OnlineLogisticEngine(_Contextual, _Learner):
    """Recursive-Newton logistic learner (rust/src/policy/logistic.rs):
    UCB-GLM's index (``rule="ucb"``) or Laplace-approximation Thompson
    sampling (``rule="thompson"``); rewards in [0, 1]."""

    def __new__(
        cls,
        d: int,
        horizon: int,
        *,
        rule: str,
        ridge: float = 1.0,
        width: float = 1.0,
        log_inv_alpha: float = 0.0,
        beta_scale: float = 1.0,
        l: float = 1.0,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def scores(self, actions: NDArray[np.float64]) -> NDArray[np.float64]:
        """Score of every row of ``actions`` (UCB index or a posterior draw's)."""
    def theta(self) -> NDArray[np.float64]:
        """The current estimate."""
    @property
    def beta(self) -> float: ...
    @staticmethod
    def from_bytes(state: bytes) -> OnlineLogisticEngine: ...

def _restore_online_logistic(state: bytes) -> OnlineLogisticEngine: ...

@final
class ReweightedGlmEngine(_Contextual, _SecureLearner):
    """Batched information-weighted logistic UCB (rust/src/policy/reweighted_glm.rs):
    one weighted Newton step per epoch from the released statistic
    (m = d(d+1)/2 + d entries), ``noise`` on each epoch's sums
    (``model="joint"``) or on each row's report (``"local"``); None: no noise."""

    def __new__(
        cls,
        d: int,
        horizon: int,
        *,
        first_epoch: int,
        leverage: float,
        model: str = "joint",
        noise: _Noise | None = None,
        op_bound: float = 0.0,
        chi_bound: float = 0.0,
        ridge: float = 1.0,
        reward_chi: float = 1.0,
        s: float = 1.0,
        beta_scale: float = 1.0,
        l: float = 1.0,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def ucb(self, actions: NDArray[np.float64]) -> NDArray[np.float64]:
        """UCB of every row of ``actions``."""
    def policy(self) -> LinearPolicyEngine:
        """The policy the next selection follows, from released values only."""
    def theta(self) -> NDArray[np.float64]:
        """The current epoch's released estimate."""
    def last_release(self) -> NDArray[np.float64]:
        """The last released statistic (empty before the first release)."""
    def _release_runs(self, xs: NDArray[np.float64], ys: NDArray[np.float64], count: int) -> NDArray[np.float64]:
        """``count`` releases of the current epoch completed by ``xs``, ``ys`` (audits; flat)."""
    @property
    def releases(self) -> int: ...
    @property
    def psd_failures(self) -> int: ...
    @property
    def epoch_length(self) -> int: ...
    @property
    def gamma(self) -> float: ...
    @property
    def beta(self) -> float: ...
    @staticmethod
    def from_bytes(state: bytes) -> ReweightedGlmEngine: ...

def _restore_reweighted_glm(state: bytes) -> ReweightedGlmEngine: ...

@final
class ReweightedLinUcbEngine(_Contextual, _SecureLearner):
    """Batched information-weighted LinUCB (rust/src/policy/reweighted_linucb.rs):
    one release per epoch of the weighted statistic (m = d(d+1)/2 + d
    entries) with ``noise`` on every entry (None: no noise)."""

    def __new__(
        cls,
        d: int,
        horizon: int,
        *,
        first_epoch: int,
        leverage: float,
        noise: _Noise | None = None,
        op_bound: float = 0.0,
        chi_bound: float = 0.0,
        ridge: float = 1.0,
        reward_chi: float = 1.0,
        s: float = 1.0,
        beta_scale: float = 1.0,
        l: float = 1.0,
        b: float = 1.0,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def ucb(self, actions: NDArray[np.float64]) -> NDArray[np.float64]:
        """UCB of every row of ``actions``."""
    def policy(self) -> LinearPolicyEngine:
        """The policy the next selection follows, from released values only."""
    def theta(self) -> NDArray[np.float64]:
        """The current epoch's released estimate."""
    def last_release(self) -> NDArray[np.float64]:
        """The last released statistic (empty before the first release)."""
    def _release_runs(self, xs: NDArray[np.float64], ys: NDArray[np.float64], count: int) -> NDArray[np.float64]:
        """``count`` releases of the current epoch completed by ``xs``, ``ys`` (audits; flat)."""
    @property
    def releases(self) -> int: ...
    @property
    def psd_failures(self) -> int: ...
    @property
    def epoch_length(self) -> int: ...
    @property
    def gamma(self) -> float: ...
    @property
    def beta(self) -> float: ...
    @staticmethod
    def from_bytes(state: bytes) -> ReweightedLinUcbEngine: ...

def _restore_reweighted_linucb(state: bytes) -> ReweightedLinUcbEngine: ...

@final
class TrustLinUcbEngine(_Contextual, _SecureLearner):
    """LinUCB on released sums of users' reports (local / shuffle model;
    rust/src/policy/linucb_trust.rs). Each user's report is the upper
    triangle of x x^T and y x; ``batch`` users per released sum. Exactly
    one privatizer: none (``noise`` and ``shuffle_sum`` both None, no
    privacy), ``noise`` (per-coordinate noise on each report, the report
    rounded to the lattice for lattice noise), or ``shuffle_sum``
    (CJMP21's scalar sum per coordinate, coordinates in [-range, range]).
    V = S_k + (regularizer + 2 upsilon_rate sqrt(k)) I and beta as in
    ``dpbandits.privacy.linucb_trust`` Eq. (LT6).
    """

    def __new__(
        cls,
        d: int,
        horizon: int,
        *,
        batch: int,
        regularizer: float,
        upsilon_rate: float,
        noise_sd: float,
        log_offset: float,
        s: float,
        gamma_rate: float,
        l: float = 1.0,
        b_tilde: float = 1.0,
        clip: bool = True,
        seed: int | None = None,
        noise: _Noise | None = None,
        shuffle_sum: Sequence[float] | None = None,
        range: float = 1.0,
    ) -> Self: ...
    def ucb(self, actions: NDArray[np.float64]) -> NDArray[np.float64]:
        """UCB of every row of ``actions``."""
    def policy(self) -> LinearPolicyEngine:
        """The policy the next selection follows, from released sums only."""
    def estimates(self) -> tuple[NDArray[np.float64], float]:
        """(theta~, beta) of the coming round, from released sums only."""
    def released(self) -> NDArray[np.float64]:
        """S_k, the released sum of reports (m = d(d+1)/2 + d coordinates)."""
    def _report_runs(self, x: NDArray[np.float64], reward: float, count: int) -> NDArray[np.float64]:
        """``count`` runs of one user's randomizer on (x, reward), shape (count, m) (audits)."""
    def _batch_release_runs(
        self, xs: NDArray[np.float64], rewards: NDArray[np.float64], count: int
    ) -> NDArray[np.float64]:
        """``count`` released sums of the batch (xs, rewards) through randomizer, shuffler and analyzer (audits)."""
    @property
    def batches(self) -> int: ...
    @property
    def psd_failures(self) -> int: ...
    @staticmethod
    def from_bytes(state: bytes) -> TrustLinUcbEngine: ...

def _restore_trust_linucb(state: bytes) -> TrustLinUcbEngine: ...

@final
class MabEngine(_Arms, _SecureLearner):
    """K-armed engine (rust/src/policy/mab.rs): UCB1 / private UCB
    (``index="ucb"``, ``noise_bound`` = the Lemma 5 term), App. D.1
    (``"empirical"``), Thompson sampling (``"thompson_beta"``,
    ``"thompson_gaussian"``). Exact sums without ``noise``; one tree per
    arm otherwise. ``phases`` = (gaps, batch_sizes, batch_noise (the noise
    value of each batch's released sum), random_pulls) enables Mishra & Thakurta's gap estimation and random
    pulling. Rewards outside [lo, hi]: ``bounds`` "clip", "error" or
    "unchecked" (non-private only)."""

    def __new__(
        cls,
        k: int,
        horizon: int,
        *,
        index: str = "ucb",
        noise_bound: float = 0.0,
        noise: _Noise | None = None,
        lo: float = 0.0,
        hi: float = 1.0,
        bounds: str = "clip",
        phases: tuple[Sequence[float], Sequence[int], Sequence[_Noise], Sequence[int]] | None = None,
        seed: int | None = None,
        counter: str | None = None,
        theta: Sequence[float] = ...,
        omega: Sequence[float] = ...,
    ) -> Self: ...
    def sums(self) -> NDArray[np.float64]:
        """Per-arm reward sums the index reads (released when private)."""
    def released_batch_means(self) -> NDArray[np.float64]: ...
    @property
    def phase(self) -> str: ...
    @staticmethod
    def from_bytes(state: bytes) -> MabEngine: ...

def _restore_mab(state: bytes) -> MabEngine: ...

@final
class MtContextualEngine(_Contextual, _SecureLearner):
    """Mishra & Thakurta Alg. 3 (``rule="ucb"``) / Alg. 4 (``"thompson"``):
    per-entry Laplace trees for A (noise ``noise_a``) and b (``noise_b``),
    fallback when the released A~ is not positive definite."""

    def __new__(
        cls,
        d: int,
        horizon: int,
        *,
        rule: str = "ucb",
        alpha: float = 1.0,
        noise_a: _Noise = ...,
        noise_b: _Noise = ...,
        l: float = 1.0,
        b_tilde: float = 1.0,
        clip: bool = True,
        seed: int | None = None,
        counter: str | None = None,
        theta: Sequence[float] = ...,
        omega: Sequence[float] = ...,
    ) -> Self: ...
    def released(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The released (A~, b~) the next selection reads."""
    @property
    def fallbacks(self) -> int: ...
    @property
    def last_fallback(self) -> bool: ...
    @staticmethod
    def from_bytes(state: bytes) -> MtContextualEngine: ...

def _restore_mt_contextual(state: bytes) -> MtContextualEngine: ...

@final
class EliminationEngine(_SecureLearner):
    """Batched elimination with core sets (Hanna et al. Alg. 1-3).

    ``batch_lengths`` are the nominal q^i; ``gamma`` one row
    (c1, c2, c3, c4) per batch with
    gamma_i = c1 sqrt(L) + c2 L + c3 + c4 sqrt(n_i L), L = ln|A_i| + ``log_offset``;
    ``privatizer_kind`` is "none", "central", "local", "shuffle" or
    "shuffle-sum" (Alg. 4, with ``shuffle_sum`` = (c_g, g_min, c_b, c_p):
    g = max(ceil(c_g sqrt(n)), g_min), b = ceil(c_b g^2 / n),
    p = c_p g^2 / (b n) for each per-action count n);
    ``noise`` one Laplace noise value per batch (empty for "none"; for
    "shuffle-sum" the law of a released sum's error, reported only);
    ``exploration`` "core_set" or "uniform". Rewards outside
    [``reward_min``, ``reward_max``] are clipped when ``clip``, else refused.
    """

    def __new__(
        cls,
        actions: NDArray[np.float64],
        horizon: int,
        batch_lengths: Sequence[float],
        gamma: Sequence[Sequence[float]],
        log_offset: float,
        privatizer_kind: str,
        noise: Sequence[_Noise],
        exploration: str,
        reward_min: float,
        reward_max: float,
        clip: bool,
        seed: int | None = None,
        shuffle_sum: Sequence[float] | None = None,
    ) -> Self: ...
    def select(self) -> int:
        """Row of the action set to play this round."""
    def select_set(self, actions: NDArray[np.float64]) -> int:
        """``select`` after checking ``actions`` is the fixed action set."""
    def shuffle_sum_parameters(self, n: int) -> tuple[int, int, float]:
        """(g, b, p) of the shuffled sum over n users ("shuffle-sum" only)."""
    def update(self, index: int, reward: float) -> bool:
        """Reward of the last selected action; True when it is the first the
        bounds policy clipped."""
    @property
    def batch_index(self) -> int: ...
    @property
    def committed(self) -> int | None: ...
    def active(self) -> NDArray[np.uint64]:
        """The surviving set A_i."""
    def batch_plan(self) -> tuple[NDArray[np.uint64], NDArray[np.uint64], int]:
        """The current batch's core set, its pulls and the batch index."""
    def history(self) -> list[dict[str, object]]:
        """One dict of released data per finished batch."""
    @staticmethod
    def from_bytes(state: bytes) -> EliminationEngine: ...

def _restore_elimination(state: bytes) -> EliminationEngine: ...

@final
class FollowTheLeaderEngine(_SecureLearner):
    """Private FTRL / FTPL (Agarwal & Singh Alg. 1 / 3); see dpbandits.PrivateFTRL, PrivateFTPL."""

    def __new__(
        cls,
        n: int,
        horizon: int,
        geometry: str,
        noise: _Noise,
        *,
        eta: float | None = None,
        clip: bool = True,
        seed: int | None = None,
        counter: str | None = None,
        theta: Sequence[float] = ...,
        omega: Sequence[float] = ...,
    ) -> Self: ...
    def select(self) -> int:
        """An index drawn from the decision (simplex only)."""
    def decision(self) -> NDArray[np.float64]: ...
    def released(self) -> NDArray[np.float64]:
        """The noisy prefix sum L~_t the decision is computed from."""
    def observe(self, losses: NDArray[np.float64]) -> bool: ...
    def observe_many(self, losses: NDArray[np.float64]) -> tuple[int, BaseException | None]:
        """``observe`` of each row of ``losses`` (rounds, n), GIL released:
        (rows recorded, the error that stopped the batch or None)."""
    @property
    def noise_terms(self) -> int: ...
    @staticmethod
    def from_bytes(state: bytes) -> FollowTheLeaderEngine: ...

def _restore_follow_the_leader(state: bytes) -> FollowTheLeaderEngine: ...

@final
class Exp2Engine(_SecureLearner):
    """EXP2 with exploration behind the private reduction (Alg. 4/5); see dpbandits.EXP2."""

    def __new__(
        cls,
        n: int,
        horizon: int,
        eta: float,
        gamma: float,
        *,
        noise: _Noise = ...,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def select(self) -> int: ...
    def probabilities(self) -> NDArray[np.float64]: ...
    def observe(self, index: int, loss: float) -> bool: ...
    def observe_served(self, index: int, loss: float, probability: float) -> bool:
        """The loss of arm ``index`` drawn with ``probability`` from an earlier released p (a served decision)."""
    @staticmethod
    def from_bytes(state: bytes) -> Exp2Engine: ...

def _restore_exp2(state: bytes) -> Exp2Engine: ...

@final
class ScribleEngine(_Learner):
    """SCRiBLe over the unit ball behind the private reduction (Thm 4.5); see dpbandits.SCRiBLe.
    In the simulation loop (``_factory()``) it plays points of the ball."""

    def __new__(
        cls,
        n: int,
        horizon: int,
        eta: float,
        *,
        noise: _Noise = ...,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def select(self) -> NDArray[np.float64]: ...
    def iterate(self) -> NDArray[np.float64]: ...
    def observe(self, loss: float) -> bool: ...
    def observe_served(self, y: NDArray[np.float64], iterate: NDArray[np.float64], loss: float) -> bool:
        """The loss of a point ``y`` drawn around the earlier iterate ``iterate`` (a served decision)."""
    @staticmethod
    def from_bytes(state: bytes) -> ScribleEngine: ...

def _restore_scrible(state: bytes) -> ScribleEngine: ...

# --- environments (rust/src/env/) -------------------------------------------

@final
class ShariffSheffetEnvEngine(_Rounds, _Pickled):
    """Shariff & Sheffet App. D environment, round by round."""

    def __new__(
        cls, d: int, k: int, gap: float, optimal_reward: float, reward: str, seed: int | None = None
    ) -> Self: ...
    def mean_rewards(self) -> NDArray[np.float64]: ...
    def theta(self) -> NDArray[np.float64]: ...
    @staticmethod
    def from_bytes(state: bytes) -> ShariffSheffetEnvEngine: ...
    def _factory(self) -> EnvironmentFactory:
        """The configuration, for the simulation loop."""

def _restore_shariff_sheffet_env(state: bytes) -> ShariffSheffetEnvEngine: ...

@final
class LogisticContextualEnvEngine(_Rounds, _Pickled):
    """App. D's decision sets with logistic (Bernoulli) rewards, round by round."""

    def __new__(
        cls, d: int, k: int, gap: float, optimal_reward: float, scale: float, seed: int | None = None
    ) -> Self: ...
    def mean_rewards(self) -> NDArray[np.float64]: ...
    def theta(self) -> NDArray[np.float64]: ...
    @staticmethod
    def from_bytes(state: bytes) -> LogisticContextualEnvEngine: ...
    def _factory(self) -> EnvironmentFactory:
        """The configuration, for the simulation loop."""

def _restore_logistic_contextual_env(state: bytes) -> LogisticContextualEnvEngine: ...

@final
class KArmedBanditEngine(_Pickled):
    """Bernoulli (``sigma=None``) or Gaussian K-armed bandit (rust/src/env/k_armed.rs)."""

    def __new__(cls, means: Sequence[float], sigma: float | None = None, seed: int | None = None) -> Self: ...
    def pull(self, arm: int) -> float:
        """Realized reward of pulling ``arm``."""
    def means(self) -> NDArray[np.float64]: ...
    @staticmethod
    def from_bytes(state: bytes) -> KArmedBanditEngine: ...
    def _factory(self) -> EnvironmentFactory: ...

def _restore_k_armed_bandit(state: bytes) -> KArmedBanditEngine: ...

@final
class LinearBanditEnvEngine(_Pickled):
    """Hanna et al. Sec. VI: fixed K x d actions (given or uniform on the
    sphere), theta* uniform on the sphere, +-1 rewards with mean <a, theta*>."""

    def __new__(
        cls, k: int, d: int, actions: NDArray[np.float64] | None = None, seed: int | None = None
    ) -> Self: ...
    def _factory(self) -> EnvironmentFactory: ...
    def actions(self) -> NDArray[np.float64]: ...
    def theta(self) -> NDArray[np.float64]: ...
    def mean_rewards(self) -> NDArray[np.float64]: ...
    def reward(self, index: int) -> float: ...
    @staticmethod
    def from_bytes(state: bytes) -> LinearBanditEnvEngine: ...

def _restore_linear_bandit_env(state: bytes) -> LinearBanditEnvEngine: ...

@final
class LossEnvEngine:
    """Loss-sequence environments (rust/src/env/losses.rs); see dpbandits.envs.losses."""

    @staticmethod
    def stochastic(means: Sequence[float], seed: int | None = None, geometry: str = "simplex") -> LossEnvEngine: ...
    @staticmethod
    def switching_best(
        n: int, first_phase: int, seed: int | None = None, geometry: str = "simplex"
    ) -> LossEnvEngine: ...
    @staticmethod
    def from_array(
        losses: NDArray[np.float64], seed: int | None = None, geometry: str = "simplex"
    ) -> LossEnvEngine: ...
    @staticmethod
    def uniform(
        center: Sequence[float], spread: float, seed: int | None = None, geometry: str = "ball"
    ) -> LossEnvEngine:
        """l_t = center + U(-spread, spread)^N, mapped into the geometry's loss set."""
    @staticmethod
    def chase_played(n: int, seed: int | None = None) -> LossEnvEngine:
        """The adaptive adversary charging the expert played in the previous round."""
    def record_play(self, index: int) -> None:
        """Tells an adaptive adversary the expert played this round."""
    def next_round(self) -> NDArray[np.float64]: ...
    def regret(self, index: int) -> float: ...
    def point_loss(self, x: NDArray[np.float64]) -> float:
        """<l_t, x> for a point x of the decision set."""
    def point_regret(self, x: NDArray[np.float64]) -> float:
        """This round's regret term of playing the point x."""
    def best(self) -> float:
        """min over the decision set of <L_t, x>."""
    @property
    def geometry(self) -> str: ...
    def cumulative(self) -> NDArray[np.float64]: ...
    @property
    def t(self) -> int: ...
    @property
    def n(self) -> int: ...
    def _factory(self) -> EnvironmentFactory: ...

@final
class ReplayEnvEngine(_Rounds):
    """Supervised-to-bandit replay of a labelled data set (rust/src/env/replay.rs).
    Each round's decision set is (k, k p), the disjoint encoding; the reward
    is 1 for the true class, ``wrong_reward`` otherwise."""

    def __new__(
        cls, features: NDArray[np.float64], p: int, labels: Sequence[int], wrong_reward: float,
        seed: int | None = None,
    ) -> Self:
        """``features``: the n x p rows flattened row-major, each of norm <= 1."""
    def mean_rewards(self) -> NDArray[np.float64]: ...
    def state(self) -> bytes:
        """The round, position and generator (not the data)."""
    def set_state(self, state: bytes) -> None:
        """Continues from ``state()`` of a replay of the same data."""
    def _factory(self) -> EnvironmentFactory:
        """The configuration, for the simulation loop."""

# --- simulation (rust/src/sim.rs) -------------------------------------------

@final
class LearnerFactory:
    """A learner configuration the simulation loop instantiates once per
    replicate (from any engine's ``_factory()``)."""

    @property
    def horizon(self) -> int: ...

@final
class EnvironmentFactory:
    """A built-in environment's configuration the simulation loop
    instantiates once per replicate (from ``_factory()``)."""

def simulate_builtin(
    learners: Sequence[LearnerFactory],
    env: EnvironmentFactory,
    horizon: int,
    env_seeds: Sequence[int],
    learner_seeds: Sequence[Sequence[int]],
    record_every: int,
    progress: Callable[[int], object] | None = None,
) -> tuple[NDArray[np.uint64], NDArray[np.float64], NDArray[np.uint64], NDArray[np.float64]]:
    """All ``learners`` on one shared realization of ``env`` per replicate
    (one decision set and one reward-noise draw per round, common random
    numbers); replicates in parallel, GIL released. Replicate r builds the
    environment from ``env_seeds[r]`` and learner l from
    ``learner_seeds[l][r]``. Returns (record_at, regret[learners,
    replicates, records], rounds[replicates], seconds[replicates])."""

def simulate_python_env(
    learner: LearnerFactory,
    factory: Callable[[int], object],
    horizon: int,
    env_seeds: Sequence[int],
    learner_seeds: Sequence[int],
    record_every: int,
    progress: Callable[[int], object] | None = None,
) -> tuple[NDArray[np.uint64], NDArray[np.float64], NDArray[np.uint64], NDArray[np.float64]]:
    """The same loop on Python environments: ``factory(env_seeds[r])``
    returns an object with ``decision_set(t)``, ``reward(t, index)`` and
    optionally ``mean_rewards(t)``; the learner of replicate r is built from
    ``learner_seeds[r]``; replicates run one after the other. Returns
    (record_at, regret[1, replicates, records], rounds, seconds)."""

# --- secure sampling (rust/src/noise/lattice/) --------------------------------

def sample_lattice(noise: _Noise, count: int, seed: int | None = None) -> NDArray[np.float64]:
    """``count`` draws of a scalar lattice noise value (``("lattice_laplace", t, j)``:
    k * 2^-j with P[k] ∝ exp(-|k|/t), t in [1, 2^21], Canonne-Kamath-Steinke Alg. 2;
    ``("lattice_gaussian", s, j)``: P[k] ∝ exp(-k^2/(2 s^2)), s in [1, 2^25], Alg. 3);
    operating-system entropy when ``seed`` is None."""

def timing_audit(
    kind: str, count: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.uint64], NDArray[np.uint64]]:
    """``count`` releases of ``kind`` ("laplace", "gaussian", "laplace-branching",
    "gaussian-branching", "von-neumann-laplace", "planted-laplace", "tree-release"), each timed alone
    in processor ticks: (noise values, ticks, rounds: the counter's t of each
    tree release, 0 for the samplers). See rust/src/noise/timing_audit.rs."""

@final
class PhasedMabEngine(_Arms, _Learner):
    """Phased K-armed engine (rust/src/policy/phased_mab.rs): one noisy
    release per phase. ``index``: "optimistic_kl" / "optimistic" (DP-KLUCB
    with ``divergence_epsilon``, KL-UCB, AdaP / AdaC with ``linear`` /
    ``root`` privacy terms), "imed" (DP-IMED), "thompson" (phased private
    Thompson sampling), "elimination" (DP-SE, with ``epochs`` = (pulls,
    gaps)). Geometric phases of ratio ``alpha`` (0: one round) with
    ``forget`` (last phase only); with ``min_len`` the adaptive grid
    (phases of at least ``min_len`` pulls, effective ratio
    max(alpha, 1 + min_len / n)). ``noise``: the noise value of each phase
    release (zero, Laplace or Gaussian; exact on a lattice by default, or
    the floating-point opt-in), OS entropy with ``secure``. ``commit``: the chosen arm plays its whole phase
    (False: a decision every round, each arm's phase released when its
    pull count reaches the phase end). ``select`` returns the committed
    arm inside a phase; ``observe`` ends the phase when due; ``pulls``
    counts released phases. Every constant comes from
    dpbandits.privacy.azize."""

    def __new__(
        cls,
        k: int,
        horizon: int,
        *,
        index: str = "optimistic_kl",
        divergence_epsilon: float | None = None,
        explore: float = 1.0,
        linear: float = 0.0,
        root: float = 0.0,
        reward_var: float = 1.0,
        noise_var: float = 0.0,
        alpha: float = 2.0,
        forget: bool = False,
        min_len: int | None = None,
        epochs: tuple[Sequence[int], Sequence[float]] | None = None,
        noise: _Noise = ...,
        secure: bool = False,
        commit: bool = True,
        lo: float = 0.0,
        hi: float = 1.0,
        bounds: str = "clip",
        seed: int | None = None,
    ) -> Self: ...
    def sums(self) -> NDArray[np.float64]:
        """Per arm, the sum of its released phase sums (normalised rewards)."""
    def releases(self) -> NDArray[np.float64]:
        """Rows (arm, first round, last round, length, released noisy sum), one per phase."""
    def tie_ranks(self) -> NDArray[np.uint32]:
        """The tie-break rank of each arm (lower wins a tie)."""
    def active(self) -> NDArray[np.bool_]:
        """Arms not eliminated (DP-SE)."""
    def _audit_runs(self, rewards: Sequence[float], round: int, count: int, seed: int) -> NDArray[np.float64]:
        """``count`` fresh engines fed ``rewards``; the release of the phase containing ``round`` (NaN if none)."""
    @staticmethod
    def from_bytes(state: bytes) -> PhasedMabEngine: ...

def _restore_phased_mab(state: bytes) -> PhasedMabEngine: ...

@final
class StochasticExpertsEngine(_SecureLearner):
    """Doubling-batch report-noisy-min for stochastic losses (Asi, Feldman,
    Koren & Talwar 2023, Sec. 3); see dpbandits.PrivateStochasticExperts."""

    def __new__(
        cls,
        n: int,
        horizon: int,
        *,
        noise: _Noise = ...,
        first_batch: int = 1,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def select(self) -> int: ...
    def observe(self, losses: NDArray[np.float64]) -> bool: ...
    def observe_many(self, losses: NDArray[np.float64]) -> list[int]: ...
    def _selection_runs(self, losses: NDArray[np.float64], runs: int) -> NDArray[np.uint64]: ...
    @property
    def selections(self) -> int: ...
    @property
    def batch_remaining(self) -> int: ...
    @staticmethod
    def from_bytes(state: bytes) -> StochasticExpertsEngine: ...

def _restore_stochastic_experts(state: bytes) -> StochasticExpertsEngine: ...

@final
class LazyExpertsEngine(_SecureLearner):
    """Lazy multiplicative weights through a batched shrinking dartboard (after
    Asi, Koren, Liu & Talwar 2024); see dpbandits.LazyPrivateExperts."""

    def __new__(
        cls,
        n: int,
        horizon: int,
        batch: int,
        eta: float,
        gamma: float,
        max_switches: int,
        *,
        clip: bool = True,
        lattice: int | None = None,
        seed: int | None = None,
    ) -> Self: ...
    def select(self) -> int: ...
    def observe(self, losses: NDArray[np.float64]) -> bool: ...
    @property
    def switches(self) -> int: ...
    @staticmethod
    def from_bytes(state: bytes) -> LazyExpertsEngine: ...

def _restore_lazy_experts(state: bytes) -> LazyExpertsEngine: ...

@final
class LazyBallEngine(_SecureLearner):
    """Lazy exponential weights on the unit ball (after Asi, Koren, Liu &
    Talwar 2024, L2P for OCO); see dpbandits.LazyPrivateOCO. ``lattice``
    (j, k): losses on 2^-j and points on 2^-k for exact draws; None:
    floating-point draws."""

    def __new__(
        cls,
        n: int,
        horizon: int,
        batch: int,
        eta: float,
        gamma: float,
        max_switches: int,
        *,
        clip: bool = True,
        lattice: tuple[int, int] | None = None,
        seed: int | None = None,
    ) -> Self: ...
    def decision(self) -> NDArray[np.float64]: ...
    def observe(self, losses: NDArray[np.float64]) -> bool: ...
    def _draw_runs(self, cumulative: NDArray[np.float64], runs: int) -> NDArray[np.float64]: ...
    @property
    def switches(self) -> int: ...
    @staticmethod
    def from_bytes(state: bytes) -> LazyBallEngine: ...

def _restore_lazy_ball(state: bytes) -> LazyBallEngine: ...

@final
class DartboardExpertsEngine(_SecureLearner):
    """The batched private shrinking dartboard (after Asi, Feldman, Koren &
    Talwar 2023, oblivious adversaries); see dpbandits.PrivateDartboardExperts."""

    def __new__(
        cls,
        n: int,
        horizon: int,
        batch: int,
        eta: float,
        shift: float,
        max_switches: int,
        *,
        noise: _Noise = ...,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def select(self) -> int: ...
    def observe(self, losses: NDArray[np.float64]) -> bool: ...
    def _switch_runs(self, losses: NDArray[np.float64], runs: int) -> NDArray[np.bool_]: ...
    def _draw_runs(self, losses: NDArray[np.float64], runs: int) -> NDArray[np.uint64]: ...
    @property
    def switches(self) -> int: ...
    @staticmethod
    def from_bytes(state: bytes) -> DartboardExpertsEngine: ...

def _restore_dartboard_experts(state: bytes) -> DartboardExpertsEngine: ...

@final
class BatchedExp3Engine(_SecureLearner):
    """EXP3 behind the batched private conversion (Asi, Raman & Talwar 2025);
    see dpbandits.BatchedPrivateEXP3."""

    def __new__(
        cls,
        k: int,
        horizon: int,
        batch: int,
        eta: float,
        gamma: float,
        *,
        noise: _Noise = ...,
        clip: bool = True,
        seed: int | None = None,
    ) -> Self: ...
    def select(self) -> int: ...
    def probabilities(self) -> NDArray[np.float64]: ...
    def observe(self, arm: int, loss: float) -> bool: ...
    @staticmethod
    def from_bytes(state: bytes) -> BatchedExp3Engine: ...

def _restore_batched_exp3(state: bytes) -> BatchedExp3Engine: ...

@final
class BaiEngine:
    """Best-arm identification engine (rust/src/policy/bai.rs): Top Two
    sampling on per-arm batches (first ``first`` rewards, then ratio
    ``ratio``) whose sums are released with ``noise`` (zero or Laplace, exact
    on a lattice by default), means from every release or the last one
    (``forget``), ``rule`` "top_two" (EB leader, TCI challenger on d_eps
    costs with ``epsilon``, kl without), "top_two_stopping" (the
    shifted-test challenger), "top_two_chernoff" (TCI on the Chernoff cost),
    "top_two_chernoff_ids" (the same challenger, the leader played with the
    information-directed probability instead of ``beta``), "adap"
    (AdaP-TT's leader and challenger) or "adap_chernoff" (AdaP-TT's leader,
    TCI on the Chernoff cost: AdaP-TT*); ``stop`` "shifted": the
    rule on noise-shifted means with GLR ``thresholds`` (one constant or
    one per batch index), ``c1`` and noise ``radii`` per batch index;
    "chernoff": the Chernoff pair statistic with ``thresholds`` indexed by
    j_a + j_b - 2 (with ``forget``, on each arm's last batch and its one
    noise draw); ``local`` (num, bits): every reward is first replaced by
    its randomised response at the exact epsilon num / 2^bits (CTB-TT).
    Every constant comes from dpbandits.privacy.bai."""

    def __new__(
        cls,
        k: int,
        *,
        rule: str = "top_two",
        epsilon: float | None = None,
        beta: float = 0.5,
        first: int = 1,
        ratio: float = 1.0,
        forget: bool = False,
        noise: _Noise = ...,
        secure: bool = False,
        thresholds: Sequence[float] = ...,
        c1: float = 3.0,
        radii: Sequence[float] = ...,
        max_samples: int = 100000000,
        seed: int | None = None,
        stop: str = "shifted",
        local: tuple[int, int] | None = None,
    ) -> Self: ...
    def select(self) -> int:
        """The next arm to pull."""
    def observe(self, arm: int, reward: float) -> None:
        """Records a reward in [0, 1] of ``arm``."""
    def observe_many(self, arms: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        """Records the pairs in order."""
    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` decisions in a row."""
    @property
    def k(self) -> int: ...
    @property
    def t(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def should_stop(self) -> bool: ...
    @property
    def recommendation(self) -> int | None: ...
    def pulls(self) -> NDArray[np.uint64]:
        """Selections of each arm."""
    def released_counts(self) -> NDArray[np.uint64]:
        """Rewards of each arm in released batches."""
    def released_sums(self) -> NDArray[np.float64]:
        """Sum of each arm's released batch sums."""
    def means(self) -> NDArray[np.float64]:
        """Each arm's released mean clipped to [0, 1] (NaN before a release)."""
    def reseed(self, seed: int | None = None) -> None:
        """Draws future noise and coin flips from a new root."""
    def config_json(self) -> str:
        """The engine's configuration as JSON text."""
    @property
    def releases(self) -> int:
        """Batches released so far (the learner's policy version)."""
    def sampling_probabilities(self) -> NDArray[np.float64]:
        """The law of the next selection from released values and selection counts."""
    @property
    def os_entropy(self) -> bool:
        """Whether privacy noise comes from the operating system."""
    @overload
    def noise_parameters(self, as_json: Literal[False] = False) -> dict[str, Any]:
        """The configuration this engine was built with, as plain values."""
    @overload
    def noise_parameters(self, as_json: Literal[True]) -> str: ...
    def _generator_keys(self) -> list[bytes]:
        """The 32-byte keys of the engine's seeded generators."""
    def __reduce__(self) -> tuple[Callable[[bytes], Self], tuple[bytes]]: ...
    def to_bytes(self) -> bytes:
        """The engine's state."""
    @staticmethod
    def from_bytes(state: bytes) -> BaiEngine: ...
    def simulate(
        self, means: Sequence[float], reps: int, seed: int
    ) -> tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.bool_]]:
        """``reps`` replicates on Bernoulli arms: stopping times, recommendations, stopped."""
    def _replicate(self, seed: int, index: int) -> BaiEngine:
        """The engine ``simulate`` runs as replicate ``index`` of ``seed``."""
    def _audit_runs(self, rewards: Sequence[float], round: int, count: int, seed: int) -> NDArray[np.float64]:
        """``count`` fresh engines fed ``rewards``; the release of the batch holding observation ``round``."""

def _restore_bai_engine(state: bytes) -> BaiEngine: ...

@final
class BaiBernoulliRewards:
    """The Bernoulli rewards of replicate ``index`` of ``BaiEngine.simulate`` with root ``seed``."""

    def __new__(cls, means: Sequence[float], seed: int, index: int) -> Self: ...
    def pull(self, arm: int) -> float:
        """The next reward of ``arm``."""

@final
class FixedBudgetBaiEngine:
    """Fixed-budget best-arm identification engine
    (rust/src/policy/bai_fixed_budget.rs): DP-BAI phases of halving over
    ``k`` arms (or the rows of ``arms``: a Max-Det collection of the active
    arms is pulled), budget ``budget``, each pulled arm's phase sum released
    once with ``noise`` (zero or Laplace, exact on a lattice by default).
    The noise comes from dpbandits.privacy.fixed_budget_bai."""

    def __new__(
        cls,
        k: int,
        budget: int,
        *,
        arms: NDArray[np.float64] | None = None,
        noise: _Noise = ...,
        secure: bool = False,
        seed: int | None = None,
    ) -> Self: ...
    def select(self) -> int:
        """The next arm to pull, outstanding until its reward arrives."""
    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` decisions in a row (none when the phase has fewer left)."""
    @overload
    def update(self, arm_or_reward: float, /) -> None:
        """``update(reward)``: the one outstanding selection's reward in [0, 1]."""
    @overload
    def update(self, arm_or_reward: int, reward: float, /) -> None:
        """``update(arm, reward)``: a reward in [0, 1] of an outstanding selection of ``arm``."""
    @property
    def outstanding(self) -> int:
        """Selections not yet answered by a reward."""
    def outstanding_by_arm(self) -> NDArray[np.uint64]:
        """Per arm, the outstanding selections."""
    @property
    def lock(self) -> EngineLock:
        """The lock every method takes (reentrant; as ``threading.RLock``)."""
    def observe(self, arm: int, reward: float) -> None:
        """The engine's own call: records a reward in [0, 1] of ``arm``."""
    def observe_many(self, arms: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        """Records the pairs in order."""
    @property
    def k(self) -> int: ...
    @property
    def t(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def recommendation(self) -> int | None: ...
    @property
    def phase(self) -> int: ...
    @property
    def phases(self) -> int: ...
    @property
    def remaining(self) -> int:
        """Selections the engine can make now (the rest of the phase's schedule)."""
    @property
    def releases(self) -> int: ...
    def quotas(self) -> NDArray[np.uint64]:
        """Pulls of each arm the current phase pulls (in the order of ``pulled``)."""
    def active(self) -> NDArray[np.uint64]:
        """Active arms, ascending."""
    def pulled(self) -> NDArray[np.uint64]:
        """The arms the current phase pulls."""
    def pulls(self) -> NDArray[np.uint64]:
        """Selections of each arm."""
    def estimates(self) -> NDArray[np.float64]:
        """Each arm's estimate at its last phase (NaN before one)."""
    def reseed(self, seed: int | None = None) -> None:
        """Draws future noise from a new root."""
    @property
    def os_entropy(self) -> bool:
        """Whether privacy noise comes from the operating system."""
    @overload
    def noise_parameters(self, as_json: Literal[False] = False) -> dict[str, Any]:
        """The configuration this engine was built with, as plain values."""
    @overload
    def noise_parameters(self, as_json: Literal[True]) -> str: ...
    def config_json(self) -> str:
        """The engine's configuration as JSON text."""
    def _generator_keys(self) -> list[bytes]:
        """The 32-byte keys of the engine's seeded generators."""
    def __reduce__(self) -> tuple[Callable[[bytes], Self], tuple[bytes]]: ...
    def to_bytes(self) -> bytes:
        """The engine's state."""
    @staticmethod
    def from_bytes(state: bytes) -> FixedBudgetBaiEngine: ...
    def simulate(self, means: Sequence[float], reps: int, seed: int) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
        """``reps`` replicates on Bernoulli arms: recommendations and rewards used."""
    def _replicate(self, seed: int, index: int) -> FixedBudgetBaiEngine:
        """The engine ``simulate`` runs as replicate ``index`` of ``seed``."""
    def _audit_runs(self, rewards: Sequence[float], round: int, count: int, seed: int) -> NDArray[np.float64]:
        """``count`` fresh engines fed ``rewards``; the released phase sum holding observation ``round``."""

def _restore_fixed_budget_bai_engine(state: bytes) -> FixedBudgetBaiEngine: ...
