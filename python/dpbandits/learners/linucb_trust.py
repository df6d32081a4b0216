"""LinUCB under the local and shuffle trust models.

- :class:`LocalLinUCB`: Zheng, Cai, Huang, Li & Wang, NeurIPS 2020
  ("Locally Differentially Private (Contextual) Bandits Learning", Sec. 5):
  each user privatizes its own (x x^T, y x) before sending it; the server
  runs LinUCB on the sum of the noisy reports with a regularizer growing
  as sqrt(t). Regret O~(T^{3/4}) (the paper's abstract).
- :class:`ShuffleLinUCB`: Chowdhury & Zhou, ICML 2022 ("Shuffle Private
  Linear Contextual Bandits"): batched LinUCB; each batch's reports pass a
  shuffler and the server sees only the batch's released sum. Two
  protocols, as the paper's two instantiations: ``"vector-sum"`` (a
  protocol for summing vectors and matrices of bounded norm: here CJMP21's
  scalar protocol per coordinate, Eq. (LT5)) and ``"amplification"`` (a
  Laplace local randomizer whose shuffled batch is amplified, FMT 2021).
  Regret O~(T^{3/5}) (abstract).

The papers' algorithm boxes and constants were not reachable (see
:mod:`dpbandits.privacy.linucb_trust`, which holds every formula with its
equation number and states what was verified instead). The Rust engine is
``rust/src/policy/linucb_trust.rs``; it reads only released sums.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes
from dpbandits._validation import epsilon_range, in_open_unit, integral_arguments, positive, positive_int, seed_or_none
from dpbandits.learners.online import OnlineLearner, engine_decision_set
from dpbandits.noise import NoiseWire
from dpbandits.privacy.calibration import failure_probability
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.linucb_trust import (
    amplified_local_epsilon_checked,
    coefficients_error_sd,
    exact_blanket_coefficients,
    lattice_report_noise,
    local_gaussian_sigma,
    local_gaussian_sigma_checked,
    local_laplace_scale_checked,
    report_dimension,
    report_l2_sensitivity,
    report_range,
    shuffle_batch_size,
    trust_guarantee,
    trust_radius,
    vector_sum_coordinate_budget_checked,
    vector_sum_error_sd,
)
from dpbandits.privacy.secure import sampler_choice
from dpbandits.privacy.shuffle_sum import shuffle_sum_coefficients

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = ["LocalLinUCB", "ShuffleLinUCB"]

Bounds = Literal["clip", "error"]


def _clip(bounds: str) -> bool:
    if bounds not in ("clip", "error"):
        raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
    return bounds == "clip"


def _regularizer(value: float) -> float:
    lam = positive("regularizer", value)
    if not math.isfinite(1.0 / lam):
        raise ValueError(f"invalid argument `regularizer`: {value!r} is too small (1/lambda overflows)")
    return lam



def _check_report_size(d: int) -> None:
    """AllocationError naming ``d`` before any formula or buffer uses it: the
    engine holds the released sum and a report of m = d(d+1)/2 + d
    coordinates and two d x d matrices (a lower bound on its memory)."""
    m = d * (d + 1) // 2 + d
    check_bytes("d", d, 8 * (2 * d * d + 2 * m), f"the {m}-coordinate reports and the d x d matrices")


class _TrustLinUCB(OnlineLearner):
    _engine: _core.TrustLinUcbEngine
    horizon: int
    regularizer: float
    _guarantee: Guarantee
    _describe: dict[str, Any]

    def _common(
        self, d: int, horizon: int, regularizer: float, sampler: str, alpha: float | None, L: float, B_tilde: float,
    ) -> tuple[float, float, float]:
        """The arguments both trust models share, validated once (d checked
        against memory before anything uses it): sets ``d``, ``horizon``,
        ``regularizer``, ``sampler``; returns (alpha, L, B_tilde)."""
        self.d = positive_int("d", d)
        self.horizon = positive_int("horizon", horizon, minimum=2)
        _check_report_size(self.d)
        self.regularizer = _regularizer(regularizer)
        self.sampler = sampler_choice(sampler)
        return failure_probability(alpha, self.horizon), positive("L", L), positive("B_tilde", B_tilde)

    def _build(
        self, *, batch: int, term_sd: float, alpha: float, sigma: float, S: float, L: float, B_tilde: float,
        bounds: str, seed: int | None, noise: NoiseWire | None = None,
        shuffle_sum: list[float] | None = None, range_: float = 1.0,
    ) -> None:
        self.batch_size = batch
        #: Each report's noise, as the engine gets it (rust/src/py/noise.rs); None without one.
        self.noise_wire = noise
        self.radius = trust_radius(term_sd, self.d, self.horizon, alpha, sigma=sigma, S=S)
        self._engine = _core.TrustLinUcbEngine(
            self.d, self.horizon, batch=batch, regularizer=self.regularizer,
            upsilon_rate=self.radius.upsilon_rate, noise_sd=self.radius.noise_sd,
            log_offset=self.radius.log_offset, s=self.radius.S, gamma_rate=self.radius.gamma_rate,
            l=L, b_tilde=B_tilde, clip=_clip(bounds),  # validated by _common
            seed=seed_or_none("seed", seed), noise=noise, shuffle_sum=shuffle_sum, range=range_,
        )
        self._pending = None

    @property
    def privacy(self) -> Guarantee:
        """The guarantee met, naming the trust model."""
        return self._secure_guarantee(self._guarantee)

    def ucb(self, decision_set: ArrayLike) -> NDArray[np.float64]:
        """<theta~, x> + beta ||x||_{V^-1} for every row, from released sums only."""
        actions = engine_decision_set(decision_set)
        with self.lock:
            return self._engine.ucb(actions)

    def released_sums(self) -> NDArray[np.float64]:
        """S_k: the sum of the released batch sums the server holds (the
        upper triangle of the Gram part row by row, then the y x part;
        Eq. (LT1)). Everything the learner decides from."""
        with self.lock:
            return self._engine.released()

    @property
    def policy_version(self) -> int:
        """Increments when a new policy is available: at each released
        batch sum S_k (the decisions read nothing else)."""
        return int(self._engine.batches)

    @property
    def batches(self) -> int:
        """Batches whose sum the server has received (k)."""
        return int(self._engine.batches)

    @property
    def psd_failures(self) -> int:
        """Refreshes whose V was not positive definite (the last good one was used)."""
        return int(self._engine.psd_failures)

    def describe(self) -> dict[str, Any]:
        """The calibration constants, for reports."""
        return dict(self._describe)


class LocalLinUCB(_TrustLinUCB):
    """LinUCB in the local model (Zheng et al. 2020, Sec. 5).

    User t sends z_t + noise, z_t = (upper triangle of x_t x_t^T, y_t x_t)
    (Eq. (LT1)); the server sums the reports and plays LinUCB with
    V = sum + (lambda + 2 Upsilon_t) I, Upsilon_t ~ sigma sqrt(t) (Eq. (LT6)).

    Parameters
    ----------
    d, horizon:
        Dimension and number of rounds T >= 2.
    epsilon, delta:
        Each report is (epsilon, delta)-DP in its user's (x, y)
        (``noise="gaussian"``: delta in (0, 1)) or epsilon-DP
        (``noise="laplace"``: delta None). Required: ``epsilon=None``,
        spelled out, turns the noise off (the same learner without
        privacy; plays as :class:`LinUCB` with the same regularizer and
        radius), and ``privacy`` then says "not private".
    noise:
        ``"gaussian"`` (default) or ``"laplace"`` (L1 sensitivity, Eq. (LT3)).
    calibration:
        ``"tight"`` (analytic Gaussian on Delta_2, Eq. (LT2)) or
        ``"classical"`` (Dwork & Roth Thm A.1, epsilon < 1); Laplace has one.
    regularizer, alpha, sigma, S, L, B_tilde:
        lambda > 0; the failure probability (default 1/T); reward-noise
        subgaussian parameter, ||theta*|| bound, ||x|| bound, |y| bound.
    bounds:
        ``"clip"`` (x scaled to norm L, y clipped to B_tilde) or ``"error"``,
        applied before the report is formed.
    sampler, secure, seed:
        ``"lattice"`` (default): each report is rounded to a power-of-two
        lattice and exact discrete noise added (the rounding accounted in
        the scale); ``"float"``: floating-point noise (open to low-bit
        attacks). ``secure=True``: noise from OS entropy. ``seed`` as every
        learner.
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
    >>> learner = dp.LocalLinUCB(d=5, horizon=1000, epsilon=1.0, delta=0.1, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=1)
    >>> for t in range(1, 51):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.t, learner.privacy.model
    (50, 'local')
    >>> print(dp.LocalLinUCB(d=5, horizon=1000, epsilon=None).privacy)  # doctest: +ELLIPSIS
    not private ...
    """

    @epsilon_range
    def __init__(
        self,
        d: int,
        horizon: int,
        epsilon: float | None,
        delta: float | None = None,
        *,
        noise: Literal["gaussian", "laplace"] = "gaussian",
        calibration: Literal["tight", "classical"] = "tight",
        regularizer: float = 1.0,
        alpha: float | None = None,
        sigma: float = 1.0,
        S: float = 1.0,
        L: float = 1.0,
        B_tilde: float = 1.0,
        bounds: Bounds = "clip",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        a, L, B_tilde = self._common(d, horizon, regularizer, sampler, alpha, L, B_tilde)
        self.epsilon = None if epsilon is None else positive("epsilon", epsilon)
        self.delta = delta
        wire: NoiseWire | None = None
        term_sd = 0.0
        if self.epsilon is None:
            if delta is not None:
                raise ValueError("invalid argument `delta`: epsilon=None (noise off) takes no delta")
            self._guarantee = Guarantee.none("LocalLinUCB with noise off (epsilon=None)")
            self._describe = {}
        else:
            if noise == "gaussian":
                if delta is None:
                    raise ValueError("invalid argument `delta`: noise='gaussian' needs delta in (0, 1)")
                if calibration == "classical":  # its own condition on epsilon (< 1)
                    scale = local_gaussian_sigma(self.epsilon, delta, self.d, L, B_tilde, calibration,
                                                 lattice=self.sampler == "lattice")
                else:
                    scale = local_gaussian_sigma_checked(
                        self.epsilon, in_open_unit("delta", delta), report_dimension(self.d),
                        report_l2_sensitivity(L, B_tilde), calibration, self.sampler == "lattice",
                    )
                term_sd = scale
                law = "analytic Gaussian mechanism (Balle & Wang 2018)" if calibration == "tight" else \
                    "Gaussian mechanism (Dwork & Roth Thm A.1)"
                basis = f"each report (x x^T, y x) with {law} on L2 sensitivity Eq. (LT2) (Zheng et al. 2020, Sec. 5)"
            elif noise == "laplace":
                if delta is not None:
                    raise ValueError("invalid argument `delta`: noise='laplace' is pure (delta = 0); pass delta=None")
                if calibration != "tight":
                    raise ValueError("invalid argument `calibration`: noise='laplace' has one calibration ('tight')")
                scale = local_laplace_scale_checked(self.epsilon, self.d, L, B_tilde)
                term_sd = math.sqrt(2.0) * scale
                basis = "each report (x x^T, y x) with Laplace noise on L1 sensitivity Eq. (LT3)"
            else:
                raise ValueError(f"invalid argument `noise`: must be 'gaussian' or 'laplace', got {noise!r}")
            if self.sampler == "lattice":
                lat = lattice_report_noise(noise, scale, self.d, L, B_tilde, self.horizon)
                wire, term_sd = lat.wire(), term_sd * lat.scale / scale
                basis += f"; exact discrete {noise} noise on the lattice 2^-{lat.exponent}, rounding accounted"
                scale = lat.scale
                self._lattice_exponent: int | None = lat.exponent
            else:
                wire = (noise, scale)
            self._guarantee = trust_guarantee("local", self.epsilon, 0.0 if delta is None else float(delta),
                                              basis, calibration, self.sampler)
            self._describe = {"noise": noise, "scale": scale, "coordinates": report_dimension(self.d)}
            if self.sampler == "lattice":
                self._describe["lattice_exponent"] = self._lattice_exponent
        self._build(batch=1, term_sd=term_sd, alpha=a, sigma=sigma, S=S, L=L, B_tilde=B_tilde, bounds=bounds,
                    seed=seed, noise=wire)
        self._describe.update(upsilon_rate=self.radius.upsilon_rate, gamma_rate=self.radius.gamma_rate)
        self._secure_if_private(secure, self.epsilon)


class ShuffleLinUCB(_TrustLinUCB):
    """Batched LinUCB in the shuffle model (Chowdhury & Zhou 2022).

    Rounds are grouped in batches of ``batch_size`` users (default
    ceil(T^{3/5}), Eq. (LT7)); the statistics change only when a batch's
    released sum arrives. Each user is in one batch, so the whole run is
    (epsilon, delta)-DP in the shuffle model when each batch's release is
    (parallel composition; decisions are post-processing).

    ``protocol``:
    - ``"vector-sum"`` (default): each of the m report coordinates is one
      run of CJMP21's scalar sum (Alg. 1, Lemma 3.1 parameters) at
      (epsilon_0, delta_0) of Eq. (LT5) (``calibration="paper"``: the
      advanced-composition split and Lemma 3.1's blanket bits;
      ``"tight"``: the largest eps_0 the better of basic/advanced
      composition allows and the exact binomial-mechanism bit count of
      Eq. (LT8); :meth:`describe` reports both error scales). Messages are bits; the
      released value is an exact function of integer counts, so there is no
      floating-point variant (``sampler`` must be ``"lattice"``).
    - ``"amplification"``: each user adds Laplace noise at eps_0 of the
      amplification bound for n = ``batch_size`` (``shuffle_method``:
      ``"closed-form"``, FMT Thm 3.1, or ``"numerical"``, Thm 3.2, default;
      :meth:`describe` reports both eps_0). Each report is also eps_0-LDP.

    Parameters
    ----------
    d, horizon:
        Dimension, an integer >= 1, and number of rounds T, an integer >= 2.
    epsilon, delta:
        The (epsilon, delta)-DP of the whole run in the shuffle model:
        epsilon finite and > 0, delta in (0, 1). Required: ``epsilon=None``,
        spelled out, turns the noise off (the batched non-private schedule).
    protocol:
        ``"vector-sum"`` (default) or ``"amplification"``, see above.
    calibration:
        ``"tight"`` (default) or ``"paper"``.
    shuffle_method:
        ``"numerical"`` (default) or ``"closed-form"`` amplification bound.
    batch_size:
        Users per batch, an integer >= 1; None (default) for ceil(T^(3/5)).
    regularizer, alpha, sigma, S, L, B_tilde, bounds, sampler, secure, seed:
        As :class:`LocalLinUCB`.
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
    >>> learner = dp.ShuffleLinUCB(d=5, horizon=1000, epsilon=1.0, delta=0.1, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=1)
    >>> for t in range(1, 51):
    ...     learner.update(env.reward(t, learner.select(env.decision_set(t))))
    >>> learner.t, learner.privacy.model
    (50, 'shuffle')
    """

    @epsilon_range
    def __init__(
        self,
        d: int,
        horizon: int,
        epsilon: float | None,
        delta: float | None = None,
        *,
        protocol: Literal["vector-sum", "amplification"] = "vector-sum",
        calibration: Literal["tight", "paper"] = "tight",
        shuffle_method: Literal["closed-form", "numerical"] = "numerical",
        batch_size: int | None = None,
        regularizer: float = 1.0,
        alpha: float | None = None,
        sigma: float = 1.0,
        S: float = 1.0,
        L: float = 1.0,
        B_tilde: float = 1.0,
        bounds: Bounds = "clip",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        a, L, B_tilde = self._common(d, horizon, regularizer, sampler, alpha, L, B_tilde)
        batch = shuffle_batch_size(self.horizon) if batch_size is None else positive_int("batch_size", batch_size)
        if batch > self.horizon:
            raise ValueError(f"invalid argument `batch_size`: must be <= horizon = {self.horizon}, got {batch}")
        if protocol not in ("vector-sum", "amplification"):
            raise ValueError(f"invalid argument `protocol`: must be 'vector-sum' or 'amplification', got {protocol!r}")
        if shuffle_method not in ("closed-form", "numerical"):
            raise ValueError(
                f"invalid argument `shuffle_method`: must be 'closed-form' or 'numerical', got {shuffle_method!r}")
        self.protocol = protocol
        self.epsilon = None if epsilon is None else positive("epsilon", epsilon)
        self.delta = delta
        wire: NoiseWire | None = None
        coefficients: list[float] | None = None
        c_z = report_range(L, B_tilde)
        term_sd = 0.0
        self._describe = {"batch_size": batch, "protocol": protocol}
        if self.epsilon is None:
            if delta is not None:
                raise ValueError("invalid argument `delta`: epsilon=None (noise off) takes no delta")
            self._guarantee = Guarantee.none("ShuffleLinUCB with noise off (epsilon=None): batched LinUCB")
        else:
            if delta is None:
                raise ValueError("invalid argument `delta`: the shuffle model needs delta in (0, 1)")
            delta = in_open_unit("delta", delta)
            if protocol == "vector-sum":
                if self.sampler != "lattice":
                    raise ValueError("invalid argument `sampler`: the vector-sum protocol's messages are bits; "
                                     "it has no floating-point variant (use sampler='lattice')")
                if calibration not in ("tight", "paper"):
                    raise ValueError(f"invalid argument `calibration`: must be 'tight' or 'paper', got {calibration!r}")
                e0, d0 = vector_sum_coordinate_budget_checked(self.epsilon, delta, report_dimension(self.d),
                                                              calibration)
                lemma = shuffle_sum_coefficients(e0, d0)
                lemma_sd = vector_sum_error_sd(e0, d0, batch, c_z)
                if calibration == "tight":
                    coef = exact_blanket_coefficients(e0, d0, batch)
                    term_sd = coefficients_error_sd(coef, batch, c_z)
                    bits_basis = "blanket bits from the exact binomial-mechanism delta at the batch size (Eq. (LT8))"
                else:
                    coef, term_sd = lemma, lemma_sd
                    bits_basis = "blanket bits of CJMP21 Lemma 3.1"
                coefficients = list(coef)
                self._describe.update(epsilon0=e0, delta0=d0, coordinates=report_dimension(self.d),
                                      coefficients=coefficients, error_sd=term_sd, error_sd_lemma_3_1=lemma_sd)
                basis = ("each report coordinate (Eq. (LT1)) summed per batch by the shuffled scalar sum of Cheu, "
                         f"Joseph, Mao & Peng 2021 (Alg. 1) at (eps0, delta0) = ({e0:.6g}, {d0:.3g}), {bits_basis}, "
                         "composed over the coordinates (Eq. (LT5)); parallel composition over batches "
                         "(Chowdhury & Zhou 2022); bit messages, binomial noise from rand_distr's integer sampler")
                sampler_kind = "mixed"
            else:
                e0 = amplified_local_epsilon_checked(self.epsilon, delta, batch, shuffle_method)
                other = "closed-form" if shuffle_method == "numerical" else "numerical"
                e0_other = amplified_local_epsilon_checked(self.epsilon, delta, batch, other)
                scale = local_laplace_scale_checked(e0, self.d, L, B_tilde)
                term_sd = math.sqrt(2.0 * batch) * scale
                self._describe.update({f"epsilon0_{shuffle_method}": e0, f"epsilon0_{other}": e0_other})
                basis = (f"Laplace reports at eps0 = {e0:.6g} (L1 sensitivity Eq. (LT3)), {batch} shuffled per batch, "
                         f"amplified by Feldman, McMillan & Talwar 2021 ({shuffle_method}); parallel composition "
                         "over batches (Chowdhury & Zhou 2022)")
                if self.sampler == "lattice":
                    lat = lattice_report_noise("laplace", scale, self.d, L, B_tilde, self.horizon)
                    wire, term_sd = lat.wire(), term_sd * lat.scale / scale
                    basis += f"; exact discrete Laplace on the lattice 2^-{lat.exponent}, rounding accounted"
                    scale = lat.scale
                else:
                    wire = ("laplace", scale)
                self._describe["scale"] = scale
                sampler_kind = self.sampler
            self._guarantee = trust_guarantee("shuffle", self.epsilon, delta, basis, calibration, sampler_kind)
        self._build(batch=batch, term_sd=term_sd, alpha=a, sigma=sigma, S=S, L=L, B_tilde=B_tilde, bounds=bounds,
                    seed=seed, noise=wire, shuffle_sum=coefficients, range_=c_z)
        self._describe.update(upsilon_rate=self.radius.upsilon_rate, gamma_rate=self.radius.gamma_rate)
        self._secure_if_private(secure, self.epsilon)
