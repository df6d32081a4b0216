"""LinUCB with changing regularizers and its jointly private versions.

Shariff & Sheffet, "Differentially Private Contextual Linear Bandits",
NeurIPS 2018: Alg. 1 (LinUCB with changing perturbations), Prop. 4
(beta_t), §4 (M_t = A_t^T A_t through one tree-based mechanism, Claim 7:
joint DP by post-processing), §4.1 (Wishart noise, Eq. (4), Prop. 9) and
§4.2 (shifted symmetric Gaussian noise, Prop. 11).

Every noise scale and confidence constant is computed by
``dpbandits.privacy.calibration``; the Rust engine (``rust/src/policy/linucb.rs``)
receives plain numbers and reads only the released (noisy) statistics.
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._sizes import MAX_TREE_ENTRIES, check_tree_entries
from dpbandits._validation import epsilon_range, in_open_unit, integral_arguments, positive, positive_int, seed_or_none
from dpbandits.learners.online import OnlineLearner, engine_decision_set
from dpbandits.privacy import (
    ConfidenceRadius,
    Guarantee,
    confidence_radius,
    linucb_constant,
)
from dpbandits.privacy.calibration import (
    GaussianCalibration,
    WishartCalibration,
    failure_probability,
    shariff_sheffet_gaussian_checked,
    shariff_sheffet_wishart_checked,
)
from dpbandits.privacy.epoch import EpochCalibration, epoch_gaussian_checked
from dpbandits.privacy.secure import sampler_choice

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger

__all__ = ["JointDPLinUCB", "LinUCB"]

Bounds = Literal["clip", "error"]
RadiusForm = Literal["log_det", "upper_bound"]
"""Prop. 4's radius form (see :mod:`dpbandits.privacy.confidence`)."""


def _bounds_policy(bounds: str) -> bool:
    if bounds not in ("clip", "error"):
        raise ValueError(f"invalid argument `bounds`: must be 'clip' or 'error', got {bounds!r}")
    return bounds == "clip"


def _radius_form(radius: str) -> Literal["log_det", "upper_bound"]:
    if radius not in ("log_det", "upper_bound"):
        raise ValueError(f"invalid argument `radius`: must be 'log_det' or 'upper_bound', got {radius!r}")
    return "log_det" if radius == "log_det" else "upper_bound"


def _radius_kwargs(radius: ConfidenceRadius) -> dict[str, Any]:
    if radius.log_det_coefficient == 0.0:
        return {"beta_constant": radius.beta()}
    return {
        "beta_noise_sd": radius.noise_sd,
        "beta_log_offset": radius.log_offset,
        "beta_offset": radius.offset,
    }


class _LinUCBBase(OnlineLearner):
    _engine: _core.LinUcbEngine
    horizon: int
    _args: dict[str, object]

    def ucb(self, decision_set: ArrayLike) -> NDArray[np.float64]:
        """UCB_t(x) = <theta~_t, x> + beta_t ||x||_{V_t^-1} for every row (Eq. (1))."""
        actions = engine_decision_set(decision_set)
        with self.lock:
            return self._engine.ucb(actions)

    # Pickling needs nothing here: the engine pickles itself (its state,
    # tree noise and generator included; see rust/src/py/learners.rs).


class LinUCB(_LinUCBBase):
    """Non-private LinUCB (Shariff & Sheffet Alg. 1 with H_t = rho I, h_t = 0).

    The inverse of V_t = G_t + rho I is kept by Sherman–Morrison rank-one
    updates, refactored from the exact V_t every ``refactor_every`` rounds;
    log det V_t by the matrix determinant lemma.

    Parameters
    ----------
    d, horizon:
        Feature dimension and number of rounds n.
    regularizer:
        rho > 0 (D.1/D.2 use 1.0).
    alpha:
        Failure probability of the confidence sets (default 1/n, App. D).
    sigma, S, L:
        Reward-noise subgaussian parameter, ||theta*|| bound, ||x|| bound
        (App. D: 1, 1, 1).
    radius:
        beta_t of Prop. 4: ``"log_det"`` (first line) or ``"upper_bound"``
        (second line, constant over t).
    bounds:
        ``"clip"`` scales ||x|| to L (rewards are not clipped: no privacy
        proof depends on them here) or ``"error"``.
    seed:
        The package's one seed policy (:mod:`dpbandits.sim`): None (default)
        keys the generator from the operating system online and uses the
        replicate seed in :func:`dpbandits.simulate`; an integer is
        reproducible online and mixed with each replicate seed in a
        simulation. (This learner draws no noise; the seed only fixes how
        its replicates are labelled.)
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
    >>> learner = dp.LinUCB(d=5, horizon=1000, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=0)
    >>> i = learner.select(env.decision_set(1))
    >>> 0 <= i < 25
    True
    >>> learner.update(env.reward(1, i))
    >>> learner.privacy.model
    'none'
    """


    def __init__(
        self,
        d: int,
        horizon: int,
        regularizer: float = 1.0,
        alpha: float | None = None,
        sigma: float = 1.0,
        S: float = 1.0,
        L: float = 1.0,
        radius: RadiusForm = "log_det",
        bounds: Bounds = "clip",
        refactor_every: int = 64,
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        self.d = positive_int("d", d)
        self.horizon = positive_int("horizon", horizon)
        self.regularizer = positive("regularizer", regularizer)
        if not math.isfinite(1.0 / self.regularizer):
            # A subnormal rho makes V^-1 infinite and every UCB NaN.
            raise ValueError(f"invalid argument `regularizer`: {regularizer!r} is too small (1/rho overflows)")
        bounds_ = linucb_constant(self.d, self.horizon, rho=self.regularizer, alpha=alpha, L=L)
        self.alpha = bounds_.alpha
        self.radius = confidence_radius(bounds_, sigma=sigma, S=S, form=_radius_form(radius))
        self._engine = _core.LinUcbEngine(
            self.d, self.horizon, regularizer=self.regularizer,
            refactor_every=positive_int("refactor_every", refactor_every),
            # L as validated by the bounds; rewards need no bound without a privacy proof to protect.
            l=bounds_.L, b_tilde=sys.float_info.max, clip=_bounds_policy(bounds),
            seed=seed_or_none("seed", seed), **_radius_kwargs(self.radius),
        )
        self._pending = None

    @property
    def privacy(self) -> Guarantee:
        """No privacy: this learner reads the exact statistics."""
        return Guarantee.none("non-private LinUCB (Shariff & Sheffet Alg. 1, H_t = rho I)")


class JointDPLinUCB(_LinUCBBase):
    """Jointly differentially private LinUCB (Shariff & Sheffet §4).

    The (d+1) x (d+1) matrix M_t = A_t^T A_t of past rows (x_s, y_s) is
    released by one tree-based mechanism; V_t and u~_t are read from the
    release only (H_t, h_t are its noise), so the sequence of (V_t, u~_t) is
    (epsilon, delta)-DP and the learner is (epsilon, delta)-jointly DP
    (Claim 7).

    - ``noise="gaussian"`` (§4.2): node noise (Z + Z^T)/sqrt(2) with
      sigma_noise^2 = 16 m Ltilde^4 ln(4/delta)^2 / epsilon^2, release shifted by
      +2 Upsilon I once (not per node); rho_min, rho_max, gamma of Prop. 11.
    - ``noise="wishart"`` (§4.1): node noise W_{d+1}(Ltilde^2 I, k),
      k = d + 1 + ceil(224 m eps^-2 ln(8m/delta) ln(2/delta)); with
      ``shift=True`` the release is shifted by -c I of Eq. (4), with
      ``shift=False`` unshifted; bounds of Prop. 9.
    - ``shift=<float>``: that shift magnitude instead (App. D.3 sweep), with
      the matching rho_min, rho_max and gamma in beta_t.
    - ``calibration="paper"`` (default: the published formulas, for
      reproduction) or ``"tight"`` (Gaussian only: the smallest sigma meeting
      the same (epsilon, delta) under exact accounting of the whole tree,
      see :func:`dpbandits.privacy.shariff_sheffet_gaussian`; Upsilon, the
      shift and beta_t follow from that sigma).
    - ``counter="binary"`` (default: the paper's tree), ``"sqrt"`` or
      ``"blt"`` (Gaussian noise with ``calibration="tight"`` only; not in
      the paper): M_t released by a factorization of the prefix-sum matrix
      (:mod:`dpbandits.privacy.factorization`): at n = 2^20 the largest
      release variance is 0.072x (sqrt) or 0.075x (blt) the tree's at the
      same (epsilon, delta). "sqrt" keeps the whole history (O(n (d+1)^2)
      memory: short horizons only); "blt" keeps four buffers.
      ``"smooth-binary"`` (Andersson & Pagh 2023,
      :mod:`dpbandits.privacy.smooth_binary`): a binary tree read at leaves
      of weight w, O(log n) memory, 0.31x the tree's largest release
      variance at n = 2^20. ``learner.privacy`` names the counter.
    - ``counter="epoch"`` (Gaussian noise, ``calibration="tight"``; not in
      the paper): rounds are cut into geometric epochs (``first_epoch``
      rounds, then each ``epoch_ratio`` times longer) and each epoch's sum
      of rows is released once, at its end, so each row enters one
      Gaussian release (sigma of a single release, no sqrt(log n) factor)
      and the learner reads the sum of the released epochs, a release that
      lags by at most one epoch. The shift and the radius follow the
      release (:mod:`dpbandits.privacy.epoch`): c_k = B_N(k) + 1 after k
      epochs and beta_t = non-private LinUCB's radius (regularizer 1) at
      the released V_t plus the smaller of S + S min(sqrt(2 B_N), 2 B_N /
      sqrt(lambda_min(V_t))) + B_b / sqrt(lambda_min(V_t)) and
      (B_w + c_k S) / sqrt(lambda_min(V_t)), with B_N, B_b, B_w
      high-probability bounds on the summed noise (B_w on n_b - N theta*
      as one Gaussian vector): the noise terms decay as the released V_t
      grows. Before the first epoch ends nothing is released (V_t = c_0 I,
      u~_t = 0: the UCBs tie across rows up to the rounding of ||x||), and
      the learner plays a row uniformly at random, from a seeded stream of
      its own (not the noise generator); such a decision reads no data and
      costs no privacy. ``learner.policy()`` then holds that prior and
      plays its first maximum.
    - ``padding`` (Wishart noise only): a release of t sums popcount(t)
      tree nodes and is topped up to m draws (Prop. 9 takes its noise to be
      W(Ltilde^2 I, m k)). ``"fresh"`` (default) draws the m - popcount(t)
      missing draws anew every round (the paper does not say how;
      Agarwal & Singh's Alg. 2 does this); ``"persistent"`` keeps one draw
      per tree level while that level's bit of t is 0, so most of the noise
      persists from round to round, as in the pan-private tree of the
      authors' code (PrivateBandits.jl). Each release has the same law
      either way, hence the same guarantee (docs/reproduction-notes.md).

    Inputs the proof bounds (||x|| <= L, |y| <= B_tilde, Assumption 6) are
    enforced before they reach the tree: ``bounds="clip"`` (default) scales
    x to norm L and clips y to [-B_tilde, B_tilde]; ``bounds="error"``
    raises ValueError instead.

    If a released V_t is not positive definite (probability about alpha/2n
    per round for the shifted Gaussian), the round uses the most recent
    release that was (post-processing: no privacy cost); ``psd_failures``
    counts such rounds.

    ``seed``: None (default) keys the tree noise from the operating system
    (use that in deployment: nobody can reproduce the noise); an integer
    makes the noise reproducible (research only). In
    :func:`dpbandits.simulate` None means the replicate seed alone and an
    integer is mixed with each replicate seed (:mod:`dpbandits.sim`).
    Copying a learner copies its generator: see :meth:`fork`.

    Parameters
    ----------
    d:
        Dimension of the actions, an integer >= 1.
    horizon:
        Number of rounds n, an integer >= 1 (the tree's depth and the
        calibration use it).
    epsilon, delta:
        The (epsilon, delta)-joint DP to meet: epsilon finite and > 0 (within
        the range the calibration's arithmetic supports), delta in (0, 1).
    noise:
        ``"gaussian"`` (default) or ``"wishart"``.
    shift:
        True (default: the paper's shift), False (Wishart: unshifted) or a
        shift magnitude (finite float).
    alpha:
        Failure probability of the confidence radius, in (0, 1); None
        (default) for 1 / n.
    sigma, S, L, B_tilde:
        Sub-Gaussian parameter of the reward noise, bound on ||theta*||, on
        ||x|| and on |y|: finite and > 0 (default 1).
    radius:
        Form of the confidence radius beta_t (default ``"log_det"``, Prop. 4).
    bounds:
        ``"clip"`` (default) or ``"error"``, see above.
    calibration:
        ``"paper"`` (default) or ``"tight"`` (Gaussian only).
    seed:
        None (default) or an integer, see above.
    sampler:
        ``"lattice"`` (exact discrete Gaussian, the default for Gaussian
        noise) or ``"float"``; None for the noise's default (Wishart noise is
        floating point).
    secure:
        True draws the noise from operating-system entropy (lattice only).
    counter:
        ``"binary"`` (default), ``"smooth-binary"``, ``"sqrt"``, ``"blt"`` or
        ``"epoch"``, see above.
    padding:
        ``"fresh"`` (default) or ``"persistent"`` (Wishart only), see above.
    first_epoch, epoch_ratio:
        ``counter="epoch"`` only: the first epoch's length n_0 (None, the
        default: 4 (d + 1)^2, capped at the horizon) and the growth ratio
        r in [1, 64] (default 1.5).
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
    Online, round by round (``simulate`` runs whole replicates in Rust):

    >>> import dpbandits as dp
    >>> learner = dp.JointDPLinUCB(d=5, horizon=1000, epsilon=1.0, delta=0.1, seed=0)
    >>> env = dp.ShariffSheffetEnv(d=5, gap=0.1, seed=0)
    >>> for t in range(1, 11):
    ...     i = learner.select(env.decision_set(t))
    ...     learner.update(env.reward(t, i))
    >>> learner.t
    10
    >>> print(learner.privacy)  # doctest: +ELLIPSIS
    (1, 0.1)-joint DP ... of contexts and rewards [Shariff & Sheffet 2018, Claim 7 + §4.2 ...; exact lattice noise]
    >>> dp.JointDPLinUCB(5, 1000, 1.0, 0.1, noise="wishart").calibration.m  # tree depth 1 + ceil(log2 n)
    11
    """


    calibration: GaussianCalibration | WishartCalibration | EpochCalibration

    @epsilon_range
    def __init__(
        self,
        d: int,
        horizon: int,
        epsilon: float,
        delta: float,
        noise: Literal["gaussian", "wishart"] = "gaussian",
        shift: bool | float = True,
        alpha: float | None = None,
        sigma: float = 1.0,
        S: float = 1.0,
        L: float = 1.0,
        B_tilde: float = 1.0,
        radius: RadiusForm = "log_det",
        bounds: Bounds = "clip",
        calibration: Literal["paper", "tight"] = "paper",
        seed: int | None = None,
        sampler: Literal["lattice", "float"] | None = None,
        secure: bool = False,
        counter: Literal["binary", "smooth-binary", "sqrt", "blt", "epoch"] = "binary",
        padding: Literal["fresh", "persistent"] = "fresh",
        first_epoch: int | None = None,
        epoch_ratio: float = 1.5,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = integral_arguments(
            type(self), {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        )
        # Every argument the calibration formulas read is validated here, once:
        # they are called in their checked forms, which trust these values.
        self.d = positive_int("d", d)
        self.horizon = positive_int("horizon", horizon)
        self.epsilon = positive("epsilon", epsilon)
        self.delta = in_open_unit("delta", delta)
        self.alpha = failure_probability(alpha, self.horizon)
        self._l, self._b_tilde = positive("L", L), positive("B_tilde", B_tilde)
        if padding not in ("fresh", "persistent"):
            raise ValueError(f"invalid argument `padding`: must be 'fresh' or 'persistent', got {padding!r}")
        if padding != "fresh" and noise != "wishart":
            raise ValueError(
                "invalid argument `padding`: only Wishart noise pads its releases (to m draws, Prop. 9); "
                f"noise={noise!r} has no padding to keep"
            )
        self.padding = padding
        from dpbandits.privacy.factorization import counter_choice, counter_parameters

        if counter == "epoch":
            if noise != "gaussian" or calibration != "tight" or shift is not True or radius != "log_det":
                raise ValueError(
                    "invalid argument `counter`: 'epoch' takes Gaussian noise, calibration='tight', shift=True and "
                    "radius='log_det' (its shift and radius follow from the release, dpbandits.privacy.epoch); got "
                    f"noise={noise!r}, calibration={calibration!r}, shift={shift!r}, radius={radius!r}"
                )
            self.counter = "epoch"
        else:
            self.counter = counter_choice(counter, "gaussian" if noise == "gaussian" else str(noise))
            if first_epoch is not None or epoch_ratio != 1.5:
                raise ValueError(
                    "invalid argument `first_epoch`: `first_epoch` and `epoch_ratio` belong to counter='epoch', "
                    f"not counter={counter!r}"
                )
        self._first_epoch, self._epoch_ratio = first_epoch, epoch_ratio
        # The (d+1) x (d+1) tree must fit before any calibration (the
        # lattice allowance of a huge matrix would fail first, naming `scale`).
        most = MAX_TREE_ENTRIES // max(1, self.horizon.bit_length())
        check_tree_entries("d", self.d, (self.d + 1) ** 2, self.horizon, math.isqrt(most) - 1)
        if sampler is None:
            sampler = "float" if noise == "wishart" else "lattice"
        self.sampler = sampler_choice(sampler)
        if noise == "wishart" and self.sampler == "lattice":
            raise ValueError(
                "invalid argument `sampler`: Wishart noise has no exact lattice sampler; it is drawn in floating "
                "point (sampler='float' or None), and its guarantee says so"
            )
        try:
            self._calibrate(noise, shift, sigma, S, radius, calibration)
        except (OverflowError, ZeroDivisionError):
            # Extreme epsilon / L / B_tilde overflow inside the calibration
            # formulas: one error naming the arguments.
            raise ValueError(
                f"invalid arguments: the calibration overflows for epsilon={epsilon!r}, delta={delta!r}, "
                f"L={L!r}, B_tilde={B_tilde!r}"
            ) from None
        if isinstance(self.calibration, EpochCalibration):
            ec = self.calibration
            self._engine = _core.LinUcbEngine(
                self.d, self.horizon, noise=ec.noise.wire(), counter="epoch", first_epoch=ec.first_epoch,
                epoch_ratio=ec.ratio, op_bound=ec.op_bound, vec_bound=ec.vec_bound, ridge=ec.ridge, s=self._s,
                mixed_bound=ec.mixed_bound,
                l=self._l, b_tilde=self._b_tilde,
                clip=_bounds_policy(bounds), seed=seed_or_none("seed", seed), **_radius_kwargs(self.radius),
            )
            self._use_secure(secure, self.sampler)
            self._pending = None
            return
        theta, omega = counter_parameters(self.counter, self.horizon, "gaussian")
        self._engine = _core.LinUcbEngine(
            self.d, self.horizon, noise=self.calibration.noise.wire(), shift=self._applied_shift,
            pad_to=self._pad_to, padding=self.padding, counter=self.counter, theta=theta, omega=omega,
            l=self._l, b_tilde=self._b_tilde, clip=_bounds_policy(bounds),
            seed=seed_or_none("seed", seed), **_radius_kwargs(self.radius),
        )
        self._use_secure(secure, self.sampler)
        self._pending = None

    def _calibrate(
        self, noise: str, shift: bool | float, sigma: float, S: float, radius: str, calibration: str
    ) -> None:
        c: GaussianCalibration | WishartCalibration | EpochCalibration
        args = (self.d, self.horizon, self.epsilon, self.delta, self.alpha, self._l, self._b_tilde)
        if self.counter == "epoch":
            from dpbandits.privacy.calibration import _l_tilde_sq

            self._s = positive("S", S)
            c = epoch_gaussian_checked(
                *args, first_epoch=self._first_epoch, ratio=self._epoch_ratio, ridge=1.0, sampler=self.sampler,
                l_tilde_sq=_l_tilde_sq(self._l, self._b_tilde), S=self._s,
            )
            self.noise = noise
            self.calibration = c
            # Non-private LinUCB's log-det radius with regularizer rho; the
            # S term is the engine's (it adapts to the release).
            bounds_ = linucb_constant(self.d, self.horizon, rho=c.ridge, alpha=self.alpha, L=self._l)
            self.radius = replace(confidence_radius(bounds_, sigma=sigma, S=self._s, form="log_det"), offset=0.0)
            self._applied_shift, self._pad_to = 0.0, 0
            return
        if noise == "gaussian":
            c = shariff_sheffet_gaussian_checked(
                *args, shift=shift, calibration=calibration, sampler=self.sampler, counter=self.counter
            )
            # Prop. 11 bounds hold for any number (<= m) of summed nodes.
            applied_shift, pad_to = c.shift, 0
        elif noise == "wishart":
            if calibration != "paper":
                raise ValueError(
                    "invalid argument `calibration`: only 'paper' is available for Wishart noise "
                    "(tight accounting of the Wishart mechanism is not implemented)"
                )
            c = shariff_sheffet_wishart_checked(*args, shift=shift)
            # Prop. 9 takes each release's noise to be W(Ltilde^2 I, m k):
            # exactly m node draws, so releases are padded to m (the padding
            # is data-independent: no privacy cost). The shift is subtracted.
            applied_shift, pad_to = -c.shift, c.noise_terms
        else:
            raise ValueError(f"invalid argument `noise`: must be 'gaussian' or 'wishart', got {noise!r}")
        self.noise = noise
        self.calibration = c
        self.radius = confidence_radius(c, sigma=sigma, S=S, form=_radius_form(radius))
        self._applied_shift, self._pad_to = applied_shift, pad_to

    @property
    def privacy(self) -> Guarantee:
        """(epsilon, delta)-joint DP of every user's (context, reward)."""
        guarantee = self.calibration.guarantee
        if self.padding == "persistent":
            # Same law of every release (m draws), so the same guarantee; the basis says which tree.
            guarantee = replace(
                guarantee,
                basis=f"{guarantee.basis}; persistent padding (one draw per tree level while its bit of t is 0, "
                "the pan-private tree of the authors' code)",
            )
        return self._secure_guarantee(guarantee)

    @property
    def psd_failures(self) -> int:
        """Rounds whose released V_t was not positive definite (fallback used)."""
        return int(self._engine.psd_failures)

    def describe(self) -> dict[str, object]:
        """The calibration constants, for reports."""
        return asdict(self.calibration)
