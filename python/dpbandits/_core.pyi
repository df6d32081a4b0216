"""Type stubs of the Rust extension ``dpbandits._core`` (rust/src/py/).

Hand-written: keep in step with the #[pyfunction]s and #[pyclass]es. Users
should prefer the Python wrappers (``dpbandits.mechanisms``,
``dpbandits.design``, ``dpbandits.learners``), which validate arguments and
document the papers' equations; these functions assume float64 input and
raise ValueError (or a ``dpbandits.errors`` subclass) on bad values.
"""

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

__version__: str

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

# --- tree counters (rust/src/tree.rs) ---------------------------------------

class TreeCounter:
    """Continual-release counter (binary mechanism); see dpbandits.mechanisms.TreeCounter."""

    def __init__(
        self,
        shape: Sequence[int],
        horizon: int,
        noise_kind: str,
        noise_params: Sequence[float],
        seed: int | None = None,
        padded: bool = False,
        pad_to: int | None = None,
        secure_exponent: int | None = None,
    ) -> None: ...
    def add(self, value: NDArray[np.float64]) -> None:
        """Adds the next value (shape must equal the counter's)."""
    def add_many(self, values: NDArray[np.float64]) -> None:
        """Adds values[0], values[1], ... (first axis = rounds); GIL released."""
    def release(self) -> NDArray[np.float64]:
        """The noisy prefix sum after the last addition."""
    def live_nodes(self) -> list[tuple[int, int, int, NDArray[np.float64]]]:
        """(level, first_leaf, last_leaf, noisy_sum) of the current decomposition."""
    @property
    def t(self) -> int: ...
    @property
    def noise_terms(self) -> int: ...
    @property
    def horizon(self) -> int: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def padded(self) -> bool: ...
    @property
    def pad_to(self) -> int: ...
    @property
    def noise(self) -> tuple[str, list[float]]: ...
    @property
    def secure_exponent(self) -> int | None:
        """Secure mode: lattice exponent j (values are multiples of 2^-j); None otherwise."""
    def _release_runs(self, values: NDArray[np.float64], runs: int) -> NDArray[np.float64]:
        """``runs`` independent runs on ``values`` (rounds first): every release,
        shape (runs, rounds, *shape). Fresh counters only; for privacy audits."""
    def to_bytes(self) -> bytes:
        """Whole state, node noise and generator included (secret as the data)."""
    @staticmethod
    def from_bytes(state: bytes) -> TreeCounter: ...
    def __reduce__(self) -> tuple[Callable[[bytes], TreeCounter], tuple[bytes]]: ...

def _restore_tree_counter(state: bytes) -> TreeCounter: ...

# --- core sets (rust/src/design.rs) -----------------------------------------

def core_set(
    actions: NDArray[np.float64],
    stop_at: float | None = None,
    max_iter: int = 10000,
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

class LinUcbEngine:
    """LinUCB with changing regularizers (Shariff & Sheffet Alg. 1).

    Exactly one of ``regularizer`` (exact statistics, non-private) and
    ``noise_kind`` (statistics released by a (d+1) x (d+1) tree counter,
    ``shift`` added to the top-left block of each release, releases padded to
    ``pad_to`` node draws) must be given. beta_t is
    ``beta_noise_sd * sqrt(max(0, beta_log_offset + log det V_t)) + beta_offset``,
    or ``beta_constant``. Rows (x, y) are clipped to ||x|| <= l, |y| <= b_tilde
    when ``clip``, else rejected.
    """

    def __init__(
        self,
        d: int,
        horizon: int,
        *,
        regularizer: float | None = None,
        refactor_every: int = 64,
        noise_kind: str | None = None,
        noise_params: Sequence[float] = ...,
        shift: float = 0.0,
        pad_to: int = 0,
        beta_noise_sd: float = 1.0,
        beta_log_offset: float = 0.0,
        beta_offset: float = 0.0,
        beta_constant: float | None = None,
        l: float = 1.0,
        b_tilde: float = 1.0,
        clip: bool = True,
        seed: int | None = None,
    ) -> None: ...
    def select(self, actions: NDArray[np.float64]) -> int:
        """Index of the row of ``actions`` (k, d) with the largest UCB."""
    def ucb(self, actions: NDArray[np.float64]) -> NDArray[np.float64]:
        """UCB_t of every row of ``actions``."""
    def observe(self, x: NDArray[np.float64], reward: float) -> None:
        """Records a played row (bounds enforced)."""
    @property
    def t(self) -> int: ...
    @property
    def psd_failures(self) -> int: ...
    @property
    def d(self) -> int: ...
    @property
    def horizon(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(state: bytes) -> LinUcbEngine: ...
    def __reduce__(self) -> tuple[Callable[[bytes], LinUcbEngine], tuple[bytes]]: ...
    def reseed(self, seed: int | None = None) -> None:
        """Draws all future noise from a new root (None: operating-system
        entropy); past releases are unchanged."""
    def _factory(self) -> LearnerFactory:
        """The configuration, for the simulation loop."""

def _restore_linucb(state: bytes) -> LinUcbEngine: ...

# --- environments (rust/src/env/) -------------------------------------------

class ShariffSheffetEnvEngine:
    """Shariff & Sheffet App. D environment, round by round."""

    def __init__(
        self, d: int, k: int, gap: float, optimal_reward: float, reward: str, seed: int | None = None
    ) -> None: ...
    def next_round(self) -> NDArray[np.float64]:
        """Draws the next (k, d) decision set."""
    def reward(self, index: int) -> float:
        """Realized reward of ``index`` this round."""
    def mean_rewards(self) -> NDArray[np.float64]: ...
    def theta(self) -> NDArray[np.float64]: ...
    @property
    def t(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(state: bytes) -> ShariffSheffetEnvEngine: ...
    def __reduce__(
        self,
    ) -> tuple[Callable[[bytes], ShariffSheffetEnvEngine], tuple[bytes]]: ...
    def _factory(self) -> EnvironmentFactory:
        """The configuration, for the simulation loop."""

def _restore_shariff_sheffet_env(state: bytes) -> ShariffSheffetEnvEngine: ...

# --- simulation (rust/src/sim.rs) -------------------------------------------

class LearnerFactory:
    """A learner configuration the simulation loop instantiates once per
    replicate (from any engine's ``_factory()``)."""

    @property
    def horizon(self) -> int: ...

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

# --- secure sampling (rust/src/noise/secure.rs) -------------------------------

def sample_discrete_laplace(scale: float, exponent: int, count: int, seed: int | None = None) -> NDArray[np.float64]:
    """``count`` exact discrete Laplace draws k * 2^-exponent, P[k] ∝ exp(-|k|/t),
    t = ceil(scale * 2^exponent) in [1, 2^21] (Canonne-Kamath-Steinke Alg. 2);
    operating-system entropy when ``seed`` is None."""

def sample_discrete_gaussian(sigma: float, exponent: int, count: int, seed: int | None = None) -> NDArray[np.float64]:
    """``count`` exact discrete Gaussian draws k * 2^-exponent, P[k] ∝ exp(-k^2/(2 s^2)),
    s = ceil(sigma * 2^exponent) in [1, 2^21] (Canonne-Kamath-Steinke Alg. 3);
    operating-system entropy when ``seed`` is None."""
