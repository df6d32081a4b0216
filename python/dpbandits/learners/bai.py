"""Fixed-confidence best-arm identification (BAI): learners that stop when
they can name the best of k arms with error probability at most ``delta``,
under epsilon-global differential privacy (Rust engine
``rust/src/policy/bai.rs``).

- :class:`DPTopTwo` (the default): the private Top Two of Jourdan & Azize
  2025, "Optimal best arm identification under differential privacy"
  (arXiv 2510.17348): means from arm-dependent geometric batches released
  with Laplace noise (no forgetting), a Top Two sampling rule on the
  transportation costs of the noisy sums, and a stopping rule on the
  Chernoff exponent of a Bernoulli sum plus Laplace sums (equations
  (C1)-(C5) of :mod:`dpbandits.privacy.bai`; its per-reward limit is the
  divergence d_eps that mixes KL and eps-scaled TV);
- :class:`AdaPTT`: AdaP-TT of Azize, Jourdan, Al Marjani & Basu 2023,
  "On the complexity of differentially private best-arm identification
  with fixed confidence" (NeurIPS, arXiv 2309.02202): arm-dependent
  doubling episodes, the mean of the last episode only with
  Laplace(1 / (eps n)) noise, a private-UCB leader and a Gaussian
  transportation-cost challenger;
- :class:`TopTwoBAI`: the non-private reference, Top Two with the
  empirical-best leader, the KL transportation-cost challenger with its
  ln N penalty (EB-TCI, Jourdan, Degenne, Baudry, de Heide & Kaufmann 2022,
  "Top Two algorithms revisited") and the GLR stopping rule.

Online use (the library's protocol): ``arm = learner.select()``, then
``learner.update(arm, reward)`` (or ``learner.update(reward)`` when exactly
one selection is outstanding); ``learner.should_stop``,
``learner.recommendation``, ``learner.samples``. Rewards must lie in
[0, 1] (Bernoulli arms in the papers; the guarantee holds for any reward in
[0, 1]). ``learner.simulate(means, reps, seed)`` runs replicates on
Bernoulli arms in Rust.

The shifted stopping rule, used by AdaP-TT, the non-private reference and
``DPTopTwo(stopping="shifted")`` (what the papers' rules reduce to,
written so that its correctness has a short proof; reconstructed, see
below; :class:`DPTopTwo`'s default is the Chernoff rule of its
docstring). With N_a the rewards of arm a in released batches, m_a its
released mean clipped to [0, 1] and R_a the radius of its noise
(:func:`dpbandits.privacy.bai.noise_radii`: every arm's noise sum stays
within its radius at every batch with probability >= 1 - delta / 2), the
learner stops when for the leader a (largest m_a) and every other arm b,
x = m_a - R_a / N_a > y = m_b + R_b / N_b and the Bernoulli GLR of (x, y)
N_a kl(x, z) + N_b kl(y, z), z = (N_a x + N_b y) / (N_a + N_b), reaches
c0 + 3 (ln(1 + ln N_a) + ln(1 + ln N_b)), c0 from
:func:`dpbandits.privacy.bai.glr_threshold` at level delta / 2
(non-private: level delta and radii 0).

Why this is delta-correct. On the noise event (probability >= 1 - delta/2)
the noiseless empirical means satisfy mu^_a >= x and mu^_b <= y; the GLR of
two means x > y increases in x and decreases in y, so the noiseless GLR of
(a, b) is at least the one tested. An error means some b with
mu_b >= mu_a; then N_a kl(mu^_a, mu_a) + N_b kl(mu^_b, mu_b) is at least
that GLR, and Kaufmann & Koolen 2021 (Thm 7, union over the k - 1 arms
that can be mistaken for the best) bound the probability that this ever
exceeds the threshold by delta / 2. With forgetting (AdaP-TT) the
statistic is the last batch's, a fresh sample: the union also runs over
the pair's batch indices, threshold indexed by the larger one j with
level delta / (2 (k - 1) S j^3), S = 2 zeta(2) - zeta(3) (the number of
index pairs of maximum j is 2j - 1). The error rate is measured in
``tests/test_bai.py`` and in the ``private-bai`` experiment.

Privacy (every private learner here), the protected unit is one reward.
Each reward enters exactly one batch sum; a batch's end is a fixed
function of its arm's reward count (public constants: first length,
ratio); which arm is selected depends only on released batch sums,
selection counts and the learner's own coin flips; each batch sum of
rewards in [0, 1] (sensitivity 1) is released once with its own
Laplace(1 / eps) draw. By parallel composition over the disjoint batches
(the adaptive-episode argument of Azize & Basu 2022 and Azize et al.
2023) the sequence of releases is eps-DP, and everything else (samples,
stopping time, recommendation) is post-processing. The order in which
rewards enter depends only on the arms chosen and on arrival times
(assumed independent of the values), never on the values. Released
values: by default exact discrete Laplace on the lattice 2^-j
(:func:`dpbandits.privacy.secure.exact_lattice_noise`; 0 and 1 are lattice
points and rounding is monotone, so the sensitivity stays 1 step-exact);
``privacy`` reports the exact lattice epsilon 2^j / t <= epsilon. Audited in
``tests/test_bai.py`` (released sums of neighbouring reward sequences).

What is reconstructed. The text of the papers we could reach (abstracts
and the opening of the 2025 paper's HTML version, the authors' experiment
code for the 2023 paper, github.com/achraf-azize/DP-BAI and
github.com/Aymen97am/DP_BAI) has no algorithm box for the 2025 learner;
the batch schedule (first batch ceil(f / eps) rewards, then ratio
``ratio``), the TCI challenger, the information-directed leader
probability (You et al. 2023, on our Chernoff cost) and both stopping
rules are ours: the shifted rule above (which splits delta between the
GLR and the noise radii) and :class:`DPTopTwo`'s default Chernoff rule
(one concentration inequality for the Bernoulli + Laplace sums,
equations (C1)-(C5) of :mod:`dpbandits.privacy.bai`, proved there; the
paper's own inequality was not reachable). AdaP-TT follows the authors' code (doubling episodes, forgetting,
the leader's private UCB index and the challenger's kappa_t =
1 / (1 + sqrt t)), with the stopping rule above in place of the code's
threshold.
"""

from __future__ import annotations

import abc
import json
import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import _core
from dpbandits._sizes import check_bytes
from dpbandits._validation import in_open_unit, positive, positive_int, real, seed_or_none
from dpbandits.errors import CheckpointError, StateError
from dpbandits.learners.online import LearnerBase
from dpbandits.learners.online_call import BoundOnlineCall
from dpbandits.noise import NoiseWire
from dpbandits.privacy.azize import lattice_laplace_epsilon
from dpbandits.privacy.bai import (
    batch_sum_laplace_scale,
    chernoff_pair_thresholds,
    forgetting_thresholds,
    glr_threshold,
    noise_radii,
    randomised_response,
)
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.secure import exact_lattice_noise

if TYPE_CHECKING:
    from dpbandits.ledger import Ledger
    from dpbandits.serving_sampled import BAIPolicy

__all__ = ["CTBTT", "AdaPTT", "AdaPTTStar", "BAIRuns", "BestArmIdentifier", "DPTopTwo", "TopTwoBAI"]

Sampler = Literal["lattice", "float"]

_MAGIC = b"DPBAI1"


@dataclass(frozen=True)
class BAIRuns:
    """Replicates of a BAI learner on Bernoulli arms: per replicate the
    stopping time (rewards used), the recommended arm (-1: none), whether
    the rule stopped within ``max_samples`` and whether the recommendation
    is wrong (not the arm of largest mean; a run that did not stop counts as
    an error)."""

    means: tuple[float, ...]
    stopping_times: NDArray[np.uint64]
    recommendations: NDArray[np.int64]
    stopped: NDArray[np.bool_]
    errors: NDArray[np.bool_]

    @property
    def error_rate(self) -> float:
        """Fraction of replicates with an error."""
        return float(self.errors.mean())

    @property
    def mean_stopping_time(self) -> float:
        """Mean stopping time over the replicates."""
        return float(self.stopping_times.astype(np.float64).mean())


def _k(k: int) -> int:
    k = positive_int("k", k)
    if k < 2:
        raise ValueError(f"invalid argument `k`: best-arm identification needs k >= 2 arms, got {k}")
    # Per arm: pulls, sums, released statistics and the outstanding count
    # (a lower bound of 64 bytes).
    check_bytes("k", k, k * 64, f"the per-arm statistics of {k} arms")
    return k


def _beta(beta: float) -> float:
    return in_open_unit("beta", beta)


def _sampler(sampler: str) -> str:
    if sampler not in ("lattice", "float"):
        raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
    return sampler


#: Most batches per arm the radius tables cover.
MAX_BATCHES = 4096


def _batches(first: int, ratio: float, max_samples: int) -> int:
    """How many batches an arm can release within ``max_samples`` rewards
    (ValueError naming ``ratio`` beyond :data:`MAX_BATCHES`)."""
    n, j = first, 1
    while n < max_samples:
        n = max(n + 1, math.ceil(ratio * n))
        j += 1
        if j > MAX_BATCHES:
            raise ValueError(
                f"invalid argument `ratio`: {ratio!r} makes more than {MAX_BATCHES} batches per arm within "
                f"max_samples = {max_samples}; use a larger ratio or a smaller max_samples"
            )
    return j


class BestArmIdentifier(BoundOnlineCall, LearnerBase, abc.ABC):
    """What the BAI learners share: the online protocol, the stopping rule's
    read-outs, the served policy, checkpoints and simulation (module
    docstring).

    The online protocol is the library's (:class:`LearnerBase`):
    ``select`` and ``update`` are bound to the engine in Rust
    (:mod:`dpbandits.learners.online_call`), any number of selections may
    be outstanding, and rewards arrive in any order (``update(arm,
    reward)``). Delay and privacy: each reward enters its arm's open batch
    once, in arrival order; a batch ends on its arm's reward count and is
    released then; decisions read only released values, so a delayed
    reward changes which release a decision reads, never the guarantee.
    Checkpoints (:meth:`save` / :meth:`load`), pickles, copies and
    :meth:`fork` follow :class:`LearnerBase`'s rule: a restore for use
    re-keys every future noise draw and coin flip from operating-system
    entropy (``replay=True``: a bit-identical research replay); the
    constructor's ``ledger`` / ``dataset`` register the learner's
    guarantee on a :class:`dpbandits.Ledger`."""

    k: int
    delta: float
    _args: dict[str, Any]

    def _setup(self, k: int, delta: float, max_samples: int) -> None:
        self.k = _k(k)
        self.delta = in_open_unit("delta", delta)
        self.max_samples = positive_int("max_samples", max_samples)

    # -- the online protocol ------------------------------------------------
    def _counts(self) -> list[int]:
        """Outstanding selections per arm (held by the bound call)."""
        counts: list[int] = self._online_pending
        return counts

    def select(self) -> int:
        """The arm (0 <= arm < k) to pull next; counted as outstanding."""
        return int(self._online().select())

    def _checked_select(self, *args: Any) -> int:
        if args:
            raise TypeError(f"select() takes no arguments, got {len(args)}")
        with self.lock:  # pragma: no cover - the bound call answers select()
            arm = int(self._engine.select())
            counts = self._counts()
            counts[arm] += 1
            self._online_pending = counts
        return arm

    def select_many(self, n: int) -> NDArray[np.int64]:
        """``n`` decisions in a row (no reward in between), as int64; each
        is outstanding until its update."""
        n = int(n) if isinstance(n, (int, np.integer)) and not isinstance(n, bool) else -1
        if n < 0:
            raise ValueError("invalid argument `n`: must be an integer >= 0")
        with self.lock:
            arms: NDArray[np.int64] = self._engine.select_many(n)
            counts = np.asarray(self._counts(), dtype=np.int64) + np.bincount(arms, minlength=self.k)
            self._online_pending = [int(c) for c in counts]
        return arms

    @property
    def clipped_rewards(self) -> int:
        """Always 0: a reward outside [0, 1] is refused (ValueError), never
        clipped (the name every learner shares)."""
        return 0

    @property
    def outstanding(self) -> list[int]:
        """The arms of selections not yet updated, one entry per selection."""
        with self.lock:
            counts = self._counts()
        return [a for a in range(self.k) for _ in range(counts[a])]

    def update(self, *args: Any) -> None:
        """``update(arm, reward)``: a reward in [0, 1] of a pull of ``arm``
        (any order, any time: it settles one outstanding selection of
        ``arm``, if any; a reward of a decision served by :meth:`policy` is
        given the same way); ``update(reward)`` when exactly one selection
        is outstanding (StateError otherwise, naming them)."""
        self._online().update(*args)

    def _checked_update(self, *args: Any) -> None:
        with self.lock:
            if len(args) == 1:
                pending = self.outstanding
                if len(pending) != 1:
                    raise StateError(
                        f"update(reward) needs exactly one outstanding selection, got {len(pending)} "
                        f"(arms {pending[:10]}); call update(arm, reward)"
                    )
                arm, reward = pending[0], args[0]
            elif len(args) == 2:
                arm, reward = args
            else:
                raise TypeError("update takes (arm, reward) or (reward)")
            a = self._arm(arm)
            r = real("reward", reward)
            if not (math.isfinite(r) and 0.0 <= r <= 1.0):
                raise ValueError(f"invalid argument `reward`: must be finite and in [0, 1], got {reward!r}")
            self._engine.observe(a, r)
            counts = self._counts()
            if counts[a] > 0:
                counts[a] -= 1
                self._online_pending = counts

    def update_many(
        self, arms: Sequence[int] | NDArray[np.int64], rewards: Sequence[float] | NDArray[np.float64]
    ) -> None:
        """The loop of ``update(arm, reward)`` over the pairs, in Rust."""
        a = np.asarray(arms)
        r = np.asarray(rewards, dtype=np.float64)
        if a.ndim != 1 or r.ndim != 1 or a.shape != r.shape:
            raise ValueError(
                f"invalid argument `rewards`: needs 1-D arms and rewards of one length, got {a.shape}, {r.shape}"
            )
        if a.size and not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"invalid argument `arms`: expected integers, got dtype {a.dtype}")
        a = a.astype(np.int64)
        if a.size and (a.min() < 0 or a.max() >= self.k):
            raise ValueError(f"invalid argument `arms`: must lie in [0, {self.k})")
        if not np.all(np.isfinite(r) & (r >= 0.0) & (r <= 1.0)):
            raise ValueError("invalid argument `rewards`: must be finite and in [0, 1]")
        with self.lock:
            self._engine.observe_many(np.ascontiguousarray(a), np.ascontiguousarray(r))
            counts = self._counts()
            for arm in a:
                if counts[int(arm)] > 0:
                    counts[int(arm)] -= 1
            self._online_pending = counts

    def _arm(self, arm: Any) -> int:
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)):
            raise TypeError(f"invalid argument `arm`: expected an integer, got {arm!r}")
        if not 0 <= int(arm) < self.k:
            raise ValueError(f"invalid argument `arm`: must lie in [0, {self.k}), got {arm!r}")
        return int(arm)

    # -- serving ------------------------------------------------------------
    def policy(self) -> BAIPolicy:
        """The current sampling rule as a read-only, picklable
        :class:`~dpbandits.serving_sampled.BAIPolicy`, built from released
        values only (serving it elsewhere is post-processing: no privacy
        cost): before every arm has a release, uniform over the arms
        without one; then the leader with the leader probability (``beta``,
        or :class:`DPTopTwo`'s information-directed one) and the
        challenger otherwise, as computed from the released batch sums
        and the selection counts at this call (AdaP-TT's pair, which moves
        with the selections, is the one of this call). It also carries the
        ``recommendation`` and ``should_stop`` of this call. Send the
        rewards of the arms it serves to ``update(arm, reward)``: the
        stopping rule holds for any sampling rule (its proof does not use
        how the arms were chosen), so served decisions keep the guarantee
        and the correctness."""
        from dpbandits.serving_sampled import BAIPolicy

        with self.lock:
            return BAIPolicy(self._engine.sampling_probabilities(), self.policy_version,
                             recommendation=self.recommendation, should_stop=self.should_stop)

    @property
    def policy_version(self) -> int:
        """The number of batches released so far: increments when a new
        policy is available (every release may move the leader, the
        challenger and the stopping rule)."""
        return int(self._engine.releases)

    @property
    def t(self) -> int:
        """Selections made so far."""
        return int(self._engine.t)

    # -- what an experiment reads -------------------------------------------
    @property
    def should_stop(self) -> bool:
        """True once the stopping rule has fired (it reads released values only)."""
        return bool(self._engine.should_stop)

    @property
    def recommendation(self) -> int | None:
        """The arm of largest released mean (None before every arm has a release)."""
        r = self._engine.recommendation
        return None if r is None else int(r)

    @property
    def samples(self) -> int:
        """Rewards received so far."""
        return int(self._engine.samples)

    def pulls(self) -> NDArray[np.uint64]:
        """Selections of each arm."""
        return self._engine.pulls()

    def released_means(self) -> NDArray[np.float64]:
        """Each arm's released (noisy) mean, clipped to [0, 1]; NaN before its first release."""
        return self._engine.means()

    @property
    @abc.abstractmethod
    def privacy(self) -> Guarantee:
        """The learner's guarantee (model, epsilon, who is protected, the result it rests on)."""

    # -- checkpoints, forks, simulation -------------------------------------
    def _checkpoint_extra(self) -> dict[str, Any]:
        """The outstanding selections per arm (the engine holds the rest)."""
        return {"outstanding": self._counts()}

    def _restore_extra(self, extra: Mapping[str, Any]) -> None:
        counts = extra.get("outstanding", [0] * self.k)
        if (not isinstance(counts, list) or len(counts) != self.k
                or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts)):
            raise CheckpointError(f"the checkpoint's outstanding selections are not {self.k} counts >= 0")
        self._online_pending = counts

    def _restore_check(self, engine: Any) -> None:
        """CheckpointError unless ``engine`` was built with the constants of
        this learner's arguments (its engine's)."""
        if engine.config_json() != self._engine.config_json():
            raise CheckpointError("BAI checkpoint: the engine was built with other constants than its arguments give")

    def to_bytes(self) -> bytes:
        """The learner's state: its class, arguments and the engine's state
        (outstanding selections are not included; :meth:`save` keeps them)."""
        head = json.dumps({**self._args, "__class__": type(self).__name__}, sort_keys=True).encode()
        return _MAGIC + struct.pack("<I", len(head)) + head + bytes(self._engine.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes, *, replay: bool = False) -> BestArmIdentifier:
        """A learner saved by :meth:`to_bytes`; CheckpointError if the bytes
        are not one, are truncated or corrupted, or hold another class.

        A restore for use (default) draws every future noise and coin flip
        from operating-system entropy, so two restores of one state fed
        neighbouring rewards release independent noise (the rule of
        :meth:`dpbandits.learners.online.LearnerBase.load`); ``replay=True``
        continues bit-identically, for research on simulated data."""
        if not isinstance(replay, bool):
            raise TypeError(f"invalid argument `replay`: expected True or False, got {replay!r}")
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"invalid argument `data`: expected bytes, got {type(data).__name__}")
        data = bytes(data)
        if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 4:
            raise CheckpointError("not a BAI learner checkpoint (bad header)")
        (n,) = struct.unpack("<I", data[len(_MAGIC) : len(_MAGIC) + 4])
        start = len(_MAGIC) + 4
        try:
            args = json.loads(data[start : start + n].decode())
            name = args.pop("__class__")
        except (ValueError, KeyError, UnicodeDecodeError, AttributeError, TypeError) as e:
            raise CheckpointError(f"BAI checkpoint: unreadable arguments ({e})") from None
        classes = _bai_classes()
        if not isinstance(name, str) or name not in classes or not issubclass(classes[name], cls):
            raise CheckpointError(f"BAI checkpoint holds a {name!r}, not a {cls.__name__}")
        try:
            learner = classes[name](**args)
        except (TypeError, ValueError) as e:
            raise CheckpointError(f"BAI checkpoint: invalid arguments ({e})") from None
        try:
            engine = _core.BaiEngine.from_bytes(data[start + n :])
        except ValueError as e:
            raise CheckpointError(f"BAI checkpoint: corrupted engine state ({e})") from None
        learner._restore_check(engine)
        learner._engine = engine
        learner._restored("use", None, 1, replay=replay)
        if not replay:
            engine.reseed(None)  # also the coin flips of the non-private reference
        return learner

    def reseed(self, seed: int | None = None) -> None:
        """Draws future noise and coin flips from ``seed``."""
        self._engine.reseed(seed_or_none("seed", seed))

    def simulate(self, means: Sequence[float], reps: int, seed: int = 0) -> BAIRuns:
        """``reps`` independent replicates of this learner's configuration on
        Bernoulli arms ``means`` (fresh engines; this learner's state is not
        used), in Rust and in parallel. Replicate r is equal, sample for
        sample, to the step-by-step run of ``_replicate(seed, r)`` on
        ``dpbandits._core.BaiBernoulliRewards(means, seed, r)``."""
        mu = tuple(float(m) for m in means)
        if len(mu) != self.k or not all(math.isfinite(m) and 0.0 <= m <= 1.0 for m in mu):
            raise ValueError(f"invalid argument `means`: needs {self.k} Bernoulli means in [0, 1], got {means!r}")
        reps = positive_int("reps", reps)
        root = seed_or_none("seed", seed)
        if root is None:
            raise ValueError("invalid argument `seed`: simulations need an integer seed")
        if self.secure:
            raise ValueError(
                "invalid argument `secure`: simulations draw seeded noise; build the learner with secure=False"
            )
        tau, rec, stopped = self._engine.simulate(list(mu), reps, root)
        best = int(np.argmax(mu))
        errors = (rec != best) | ~stopped
        return BAIRuns(mu, tau, rec, stopped, errors)

    def _replicate(self, seed: int, index: int) -> BestArmIdentifier:
        """A fresh learner whose engine is the one :meth:`simulate` runs as replicate ``index``."""
        twin = type(self).from_bytes(self.to_bytes(), replay=True)
        twin._engine = self._engine._replicate(seed, index)
        twin._online_pending = [0] * self.k
        return twin


def _bai_classes() -> dict[str, type[BestArmIdentifier]]:
    """The BAI learner classes a :meth:`BestArmIdentifier.from_bytes` state
    may name, by class name (every concrete subclass defined here)."""
    found: dict[str, type[BestArmIdentifier]] = {}
    todo: list[Any] = [BestArmIdentifier]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__ == __name__ and not sub.__name__.startswith("_"):
                found[sub.__name__] = sub
    return found


class TopTwoBAI(BestArmIdentifier):
    """The non-private reference: Top Two with the empirical-best leader,
    the KL transportation-cost challenger argmin_b W(a, b) + ln N_b (EB-TCI,
    Jourdan et al. 2022), leader with probability ``beta``, and the GLR
    stopping rule with the Kaufmann & Koolen 2021 threshold at level
    ``delta`` (module docstring). Every reward is its own batch (no noise).

    Parameters
    ----------
    k:
        Number of arms, an integer >= 2.
    delta:
        Confidence level: the probability of recommending a wrong arm is at
        most ``delta``, in (0, 1).
    beta:
        Probability of sampling the leader rather than the challenger, in
        (0, 1) (default 0.5).
    max_samples:
        The budget of selections, an integer >= 1 (default 10^8): once it is
        spent ``select`` refuses.
    seed:
        None (default: operating-system entropy) or an integer in
        [0, 2^64) for reproducible coin flips.
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
        If an argument lies outside the range given above (``k`` < 2,
        ``delta`` or ``beta`` outside (0, 1), ``max_samples`` < 1, a
        negative ``seed``); the message names the argument and the range.
    TypeError
        If an argument has the wrong type (a non-integer ``k``,
        ``max_samples`` or ``seed``, a non-number ``delta`` or ``beta``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> runs = dp.TopTwoBAI(k=3, delta=0.01).simulate([0.9, 0.5, 0.1], reps=20, seed=1)
    >>> runs.error_rate, bool(runs.stopped.all())
    (0.0, True)
    """

    def __init__(
        self,
        k: int,
        delta: float,
        beta: float = 0.5,
        max_samples: int = 10**8,
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._setup(k, delta, max_samples)
        self.beta = _beta(beta)
        self._args = {"k": k, "delta": delta, "beta": beta, "max_samples": max_samples,
                      "seed": seed}
        c0, c1 = glr_threshold(self.k, self.delta)
        self._engine = _core.BaiEngine(
            self.k, rule="top_two", epsilon=None, beta=self.beta, first=1, ratio=1.0, forget=False,
            noise=("zero",), thresholds=[c0], c1=c1, radii=[], max_samples=self.max_samples,
            seed=seed_or_none("seed", seed),
        )

    @property
    def privacy(self) -> Guarantee:
        """Not private."""
        return Guarantee.none()


class CTBTT(BestArmIdentifier):
    """CTB-TT of Azize, Jourdan, Al Marjani & Basu (arXiv 2309.02202, the
    extended version "Differentially private best-arm identification":
    the epsilon-local-DP Top Two): every reward is privatised by randomised
    response before it reaches the learner, and the Top Two with the GLR
    stopping rule runs on the privatised bits; delta-correct, epsilon-local
    DP of each reward.

    Privatisation (:func:`dpbandits.privacy.bai.randomised_response`): a
    reward y in [0, 1] is rounded to the lattice 2^-32 and made a bit
    b ~ Bernoulli(y) (exact on that lattice; a {0, 1} reward is its own
    bit), then flipped with probability f = num / 2^62, the flip
    probability 1 / (1 + e^epsilon) rounded up to the lattice 2^-62 and
    drawn exactly from 62 uniform bits. Each output bit depends on one
    reward only and its likelihood ratio between any two rewards is at most
    (1 - f) / f = e^epsilon' with epsilon' <= epsilon: epsilon'-local DP,
    and everything the learner does afterwards is post-processing.

    Learning: the privatised bits of arm a are i.i.d. Bernoulli of mean
    f + (1 - 2 f) mu_a (f the flip probability), increasing in mu_a, so the
    best arm is the same; the learner is :class:`TopTwoBAI` on them (EB
    leader, TCI challenger on the kl cost of the privatised laws, which is
    the transportation cost of the local lower bound for randomised
    response, leader with probability ``beta``), stopping by the GLR
    threshold of Kaufmann & Koolen 2021 (Thm 7) at level ``delta``, valid
    because the bits are Bernoulli. ``released_means`` are the privatised
    means (the debiased mean is (m - f) / (1 - 2 f)).

    Reconstructed: the extended paper's algorithm box was not in the text
    we could reach (its abstract says CTB-TT plugs a randomised-response
    estimator of the means into a Top Two with the local transportation
    costs); running the Top Two on the privatised bits is our reading of
    it. delta-correctness is measured in ``tests/test_bai.py``.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 2.
    delta:
        Confidence level: the probability of recommending a wrong arm is at
        most ``delta``, in (0, 1).
    epsilon:
        Local privacy parameter, finite, > 0 and at most 2^19: each reward
        is epsilon-locally DP (exactly epsilon' <= epsilon, reported by
        ``privacy``; at most ln(2^62 - 1) = 42.97 however large epsilon).
    beta:
        Probability of sampling the leader rather than the challenger, in
        (0, 1) (default 0.5).
    secure:
        True draws the privatisation from operating-system entropy (such a
        learner cannot ``simulate``); False (default) from the seeded
        generator.
    max_samples:
        The budget of selections, an integer >= 1 (default 10^8): once it is
        spent ``select`` refuses.
    seed:
        None (default: operating-system entropy) or an integer in
        [0, 2^64) for reproducible coin flips and privatisation.
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
        If an argument lies outside the range given above (``k`` < 2;
        ``delta`` or ``beta`` outside (0, 1); ``epsilon`` not finite, not
        > 0 or above 2^19; ``max_samples`` < 1; a negative ``seed``); the
        message names the argument and the range.
    TypeError
        If an argument has the wrong type (a non-integer ``k``,
        ``max_samples`` or ``seed``, a non-number ``delta``, ``epsilon`` or
        ``beta``, a non-bool ``secure``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.CTBTT(k=3, delta=0.01, epsilon=1.0, seed=0)
    >>> runs = learner.simulate([0.9, 0.5, 0.1], reps=20, seed=1)
    >>> runs.error_rate, learner.privacy.model
    (0.0, 'local')
    """

    def __init__(
        self,
        k: int,
        delta: float,
        epsilon: float,
        beta: float = 0.5,
        secure: bool = False,
        max_samples: int = 10**8,
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._args = {"k": k, "delta": delta, "epsilon": epsilon, "beta": beta,
                      "secure": secure, "max_samples": max_samples, "seed": seed}
        self._setup(k, delta, max_samples)
        self.beta = _beta(beta)
        if not isinstance(secure, bool):
            raise TypeError(f"invalid argument `secure`: expected a bool, got {secure!r}")
        self.response = randomised_response(epsilon)
        self.epsilon = float(epsilon)
        c0, c1 = glr_threshold(self.k, self.delta)
        self._engine = _core.BaiEngine(
            self.k, rule="top_two", epsilon=None, beta=self.beta, first=1, ratio=1.0, forget=False,
            noise=("zero",), secure=secure, thresholds=[c0], c1=c1, radii=[], max_samples=self.max_samples,
            seed=seed_or_none("seed", seed), local=(self.response.num, self.response.bits),
        )

    @property
    def privacy(self) -> Guarantee:
        """epsilon'-local DP of each reward (randomised response)."""
        how = "OS entropy" if self.secure else "seeded ChaCha stream"
        return Guarantee(
            model="local", epsilon=self.response.epsilon, delta=0.0, protects="rewards",
            basis=("Azize, Jourdan, Al Marjani & Basu (arXiv 2406.06408), CTB-TT: randomised response of each "
                   f"reward, flip probability 1 / (1 + e^eps) rounded up to the lattice 2^-62, exact dyadic "
                   f"draw ({how}); the learner is post-processing"),
            calibration="paper", sampler="lattice",
        )


class _PrivateBAI(BestArmIdentifier):
    epsilon: float
    sampler: str
    secure: bool
    lattice_exponent: int | None
    noise_wire: NoiseWire

    def _noise(self, epsilon: float, sampler: str, secure: bool) -> tuple[NoiseWire, tuple[int, float] | None]:
        self.epsilon = positive("epsilon", epsilon)
        self.sampler = _sampler(sampler)
        if not isinstance(secure, bool):
            raise TypeError(f"invalid argument `secure`: expected a bool, got {secure!r}")
        if secure and self.sampler != "lattice":
            raise ValueError("invalid argument `secure`: secure=True needs sampler='lattice'")
        scale = batch_sum_laplace_scale(self.epsilon)
        if self.sampler == "float":
            self.lattice_exponent = None
            self.noise_wire = ("laplace", scale)
            return self.noise_wire, None
        try:
            lat = exact_lattice_noise("laplace", scale, float(self.max_samples))
        except ValueError:
            # The lattice bounds the sums of up to max_samples rewards.
            raise ValueError(
                f"invalid argument `max_samples`: batch sums of up to {self.max_samples} rewards cannot stay exact "
                f"on a lattice fine enough for Laplace noise of scale {scale:g}; use a smaller max_samples or "
                "sampler='float'"
            ) from None
        self.lattice_exponent = lat.exponent
        self.noise_wire = lat.wire()
        return self.noise_wire, (lat.steps, lat.step)

    def _guarantee(self, basis: str) -> Guarantee:
        eps = self.epsilon
        if self.sampler == "lattice":
            eps = lattice_laplace_epsilon(batch_sum_laplace_scale(self.epsilon), self.lattice_exponent)
            how = "OS entropy" if self.secure else "seeded ChaCha stream"
            basis += f"; exact discrete Laplace on the lattice 2^-{self.lattice_exponent} ({how})"
        return Guarantee(
            model="central", epsilon=eps, delta=0.0, protects="rewards",
            basis=basis + "; Laplace(1/eps) per batch sum, parallel composition over batches",
            calibration="paper", sampler=self.sampler,  # type: ignore[arg-type]
        )


class DPTopTwo(_PrivateBAI):
    """The private Top Two of Jourdan & Azize 2025 (arXiv 2510.17348), the
    library's default private BAI learner: epsilon-global DP, delta-correct.

    Statistics: arm-dependent geometric batches, the first of
    L = ceil(``first_batch`` / epsilon) rewards (at least 1), then arm a's
    next batch ends when its count reaches max(n + 1, ceil(``ratio`` n));
    each batch sum is released with Laplace(1 / epsilon) and the arm's mean
    is the sum of its releases over its released rewards (no forgetting:
    after j batches the noise is a sum of j Laplace draws). Sampling:
    leader the largest released mean, challenger argmin_b W(a, b) + ln N_b
    with W the Chernoff cost below (or the d_eps cost
    W_eps(a, b) = inf_z N_a d_eps(m_a, z) + N_b d_eps(m_b, z)), leader with
    probability ``beta`` (default: the information-directed probability
    of the pair, see ``beta``). Stopping (default): the Chernoff rule of
    :mod:`dpbandits.privacy.bai`, equations (C1)-(C5): with
    D(m; n, j, z) = sup_s [s n m - n ln(1 - z + z e^s) - j Lambda(s)]
    (Lambda the log-MGF of one noise draw) and
    W(a, b) = inf_{z in [m_b, m_a]} D_a(m_a; z) + D_b(m_b; z), stop when
    W(a, b) >= c_{j_a + j_b} for every b, (1 + c_s) e^-c_s =
    2 delta / ((k - 1) (s - 1) s (s + 1)); the engine certifies the
    infimum from below. Recommendation: the largest released mean.

    The first batch of f / epsilon rewards makes each batch mean's noise at
    most 1 / f per reward whatever epsilon (the library's adaptive phase
    floor of :class:`dpbandits.DPKLUCB`). Reconstructed parts: module
    docstring.

    Guarantee: epsilon-DP of the rewards (central; module docstring);
    ``privacy`` reports the exact lattice epsilon 2^j / ceil(2^j / epsilon).

    Parameters
    ----------
    k:
        Number of arms, an integer >= 2.
    delta:
        Confidence level: the probability of recommending a wrong arm is at
        most ``delta``, in (0, 1).
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    beta:
        Probability of sampling the leader rather than the challenger, in
        (0, 1), or None (default): with ``challenger="chernoff"`` the
        information-directed probability D_a / (D_a + D_b), the two
        exponents of (C1) at the minimiser z* of W(a, b) (You, Qin, Wang &
        Yang 2023, "Information-directed selection for top-two
        algorithms", ICML, Sec. 3, on the Chernoff cost), recomputed at
        every release; it plays the arm of the pair whose samples carry
        the cost, which in the high-privacy regime (cost about
        epsilon |m_a - m_b| min(N_a, N_b)) balances the leader with its
        challengers as the optimal allocation does; with the other
        challengers None means 0.5.
    first_batch:
        f, finite and > 0 (default 128): each arm's first batch is
        ceil(f / epsilon) rewards (at least 1, at most ``max_samples``).
        Every noise draw an arm's mean holds costs exponent in (C1), so
        fewer, longer batches stop sooner on the ``private-bai`` instances;
        the price is a first round of k ceil(f / epsilon) rewards, which
        dominates on easy instances (the default, with ``ratio``, was
        chosen on the ``private-bai`` grid among f in {16, 64, 128, 192,
        256}: the largest f that does not slow the easiest instance).
    ratio:
        Ratio of the geometric batches, finite and > 1 (default 1.7; chosen
        with ``first_batch`` among 1.2, 1.5, 1.7, 1.85, 2, 3 and 4: a
        smaller ratio stops closer to the time the test would pass but
        puts more noise draws into each mean); it must not make more than
        :data:`MAX_BATCHES` batches per arm within ``max_samples``.
    challenger:
        ``"chernoff"`` (default): argmin_b W(a, b) + ln N_b with W the
        Chernoff cost of the stopping rule (equation (C3) of
        :mod:`dpbandits.privacy.bai`, evaluated at the weighted mean
        z = (N_a m_a + N_b m_b) / (N_a + N_b)), which counts the noise
        draws each mean holds; ``"d_eps"``: the transportation-cost
        challenger argmin_b W_eps(a, b) + ln N_b above; ``"stopping"``
        (only with ``stopping="shifted"``): the arm whose shifted test is
        furthest from passing (first the arms whose test fails, largest
        violation first, then the smallest GLR + ln N_b on the
        noise-shifted means).
    stopping:
        ``"chernoff"`` (default): stop when W(a, b) >= c(j_a + j_b) for the
        leader a and every other arm b (equations (C1)-(C5) of
        :mod:`dpbandits.privacy.bai`: the Chernoff exponent of the noisy
        batch sums, no split of ``delta``); ``"shifted"``: the GLR of the
        noise-shifted means with ``noise_share`` of ``delta`` to the noise
        radii (module docstring).
    noise_share:
        With ``stopping="shifted"``: the share of ``delta`` given to the
        noise radii, in (0, 1) (default 0.5); the GLR threshold gets
        ``delta`` (1 - ``noise_share``).
    sampler:
        ``"lattice"`` (default): exact discrete Laplace noise on a
        power-of-two lattice; ``"float"``: floating-point Laplace noise,
        without protection against low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs
        ``sampler="lattice"``; such a learner cannot ``simulate``); False
        (default) from the seeded generator.
    max_samples:
        The budget of selections, an integer >= 1 (default 10^8): once it is
        spent ``select`` refuses.
    seed:
        None (default: operating-system entropy) or an integer in
        [0, 2^64) for reproducible coin flips and noise.
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
        If an argument lies outside the range given above (``k`` < 2;
        ``delta``, ``beta`` or ``noise_share`` outside (0, 1);
        ``epsilon`` or ``first_batch`` not finite and > 0; ``ratio`` not
        finite and > 1, or making more than :data:`MAX_BATCHES` batches per
        arm; ``challenger``, ``stopping`` or ``sampler`` not one of the
        choices, or ``challenger="stopping"`` with ``stopping="chernoff"``;
        ``secure=True`` with ``sampler="float"``; ``max_samples`` < 1, or
        too large for the lattice sums to stay exact at this ``epsilon``; a
        negative ``seed``); the message names the argument and the range.
    TypeError
        If an argument has the wrong type (a non-integer ``k``,
        ``max_samples`` or ``seed``, a non-number ``epsilon``, ``delta``,
        ``beta``, ``first_batch``, ``ratio`` or ``noise_share``, a
        non-bool ``secure``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.DPTopTwo(k=3, delta=0.01, epsilon=1.0, seed=0)
    >>> runs = learner.simulate([0.9, 0.5, 0.1], reps=20, seed=1)
    >>> runs.error_rate, learner.privacy.epsilon
    (0.0, 1.0)
    """

    def __init__(
        self,
        k: int,
        delta: float,
        epsilon: float,
        beta: float | None = None,
        first_batch: float = 128.0,
        ratio: float = 1.7,
        challenger: Literal["chernoff", "stopping", "d_eps"] = "chernoff",
        stopping: Literal["chernoff", "shifted"] = "chernoff",
        noise_share: float = 0.5,
        sampler: Sampler = "lattice",
        secure: bool = False,
        max_samples: int = 10**8,
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._setup(k, delta, max_samples)
        # None: the information-directed leader probability (chernoff challenger).
        self.beta = None if beta is None and challenger == "chernoff" else _beta(0.5 if beta is None else beta)
        self._args = {"k": k, "delta": delta, "epsilon": epsilon, "beta": beta,
                      "first_batch": first_batch, "ratio": ratio, "challenger": challenger, "stopping": stopping,
                      "noise_share": noise_share,
                      "sampler": sampler,
                      "secure": secure,
                      "max_samples": max_samples, "seed": seed}
        wire, lattice = self._noise(epsilon, sampler, secure)
        self.first_batch = positive("first_batch", first_batch)
        self.ratio = real("ratio", ratio)
        if not (math.isfinite(self.ratio) and self.ratio > 1.0):
            raise ValueError(f"invalid argument `ratio`: must be finite and > 1, got {ratio!r}")
        first = max(1, math.ceil(self.first_batch / self.epsilon))
        self.first_length = min(first, self.max_samples)
        self.noise_share = in_open_unit("noise_share", noise_share)
        if stopping not in ("chernoff", "shifted"):
            raise ValueError(f"invalid argument `stopping`: must be 'chernoff' or 'shifted', got {stopping!r}")
        if challenger not in ("chernoff", "stopping", "d_eps"):
            raise ValueError(
                f"invalid argument `challenger`: must be 'chernoff', 'stopping' or 'd_eps', got {challenger!r}"
            )
        if challenger == "stopping" and stopping == "chernoff":
            raise ValueError(
                "invalid argument `challenger`: 'stopping' reads the noise radii of stopping='shifted'; "
                "use challenger='d_eps' with stopping='chernoff'"
            )
        self.stopping = stopping
        self.challenger = challenger
        batches = _batches(self.first_length, self.ratio, self.max_samples)
        scale = batch_sum_laplace_scale(self.epsilon)
        if stopping == "chernoff":
            thresholds, c1, radii = chernoff_pair_thresholds(self.k, self.delta, 2 * batches), 0.0, []
        else:
            c0, c1 = glr_threshold(self.k, self.delta * (1.0 - self.noise_share))
            thresholds = [c0]
            radii = noise_radii(self.k, self.delta * self.noise_share, scale, batches, lattice, cumulative=True)
        rule = {"stopping": "top_two_stopping", "chernoff": "top_two_chernoff", "d_eps": "top_two"}[challenger]
        if self.beta is None:
            rule = "top_two_chernoff_ids"
        self._engine = _core.BaiEngine(
            self.k, rule=rule, epsilon=self.epsilon, beta=0.5 if self.beta is None else self.beta,
            first=self.first_length, ratio=self.ratio,
            forget=False, noise=wire, secure=secure, thresholds=thresholds, c1=c1, radii=radii,
            max_samples=self.max_samples, seed=seed_or_none("seed", seed), stop=stopping,
        )

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Jourdan & Azize 2025; parallel composition over batches)."""
        return self._guarantee("Jourdan & Azize 2025, private Top Two (geometric batches, no forgetting)")


class AdaPTT(_PrivateBAI):
    """AdaP-TT (Azize, Jourdan, Al Marjani & Basu 2023, NeurIPS, arXiv
    2309.02202): epsilon-global DP Top Two on arm-dependent doubling
    episodes.

    Episodes: arm a's episode ends when its reward count doubles (1, 2, 4,
    ...); the mean is the last episode's released sum over its length
    (forgetting), i.e. its mean plus Laplace(1 / (epsilon n)). Leader: the
    private UCB index m_a + ln t / (epsilon s_a) + sqrt(ln t / (2 s_a))
    (s_a the last episode's length, t the selections); challenger:
    argmin_b (m_a - m_b + kappa_t) / sqrt(1 / n_a + 1 / n_b) with
    kappa_t = 1 / (1 + sqrt t) and n the selection counts (the authors'
    code); leader with probability ``beta``. Stopping: the module
    docstring's rule on the last episodes (thresholds indexed by episode).
    Recommendation: the largest released mean.

    Guarantee: epsilon-DP of the rewards (central; module docstring).

    Parameters
    ----------
    k:
        Number of arms, an integer >= 2.
    delta:
        Confidence level: the probability of recommending a wrong arm is at
        most ``delta``, in (0, 1).
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    beta:
        Probability of sampling the leader rather than the challenger, in
        (0, 1) (default 0.5).
    sampler:
        ``"lattice"`` (default): exact discrete Laplace noise on a
        power-of-two lattice; ``"float"``: floating-point Laplace noise,
        without protection against low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs
        ``sampler="lattice"``; such a learner cannot ``simulate``); False
        (default) from the seeded generator.
    max_samples:
        The budget of selections, an integer >= 1 (default 10^8): once it is
        spent ``select`` refuses.
    seed:
        None (default: operating-system entropy) or an integer in
        [0, 2^64) for reproducible coin flips and noise.
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
        If an argument lies outside the range given above (``k`` < 2,
        ``delta`` or ``beta`` outside (0, 1), ``epsilon`` not finite and
        > 0, ``sampler`` not one of the choices, ``secure=True`` with
        ``sampler="float"``, ``max_samples`` < 1 or too large for the
        lattice sums to stay exact at this ``epsilon``, a negative
        ``seed``); the message names the argument and the range.
    TypeError
        If an argument has the wrong type (a non-integer ``k``,
        ``max_samples`` or ``seed``, a non-number ``epsilon``, ``delta`` or
        ``beta``, a non-bool ``secure``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.AdaPTT(k=3, delta=0.05, epsilon=1.0, seed=0)
    >>> for _ in range(5):
    ...     arm = learner.select()
    ...     learner.update(arm, 1.0 if arm == 0 else 0.0)
    >>> learner.samples, learner.privacy.model
    (5, 'central')
    >>> runs = learner.simulate([0.9, 0.5, 0.1], reps=20, seed=1)
    >>> runs.error_rate, bool(runs.stopped.all())
    (0.0, True)
    """

    def __init__(
        self,
        k: int,
        delta: float,
        epsilon: float,
        beta: float = 0.5,
        sampler: Sampler = "lattice",
        secure: bool = False,
        max_samples: int = 10**8,
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._setup(k, delta, max_samples)
        self.beta = _beta(beta)
        self._args = {"k": k, "delta": delta, "epsilon": epsilon, "beta": beta,
                      "sampler": sampler, "secure": secure, "max_samples": max_samples, "seed": seed}
        wire, lattice = self._noise(epsilon, sampler, secure)
        batches = _batches(1, 2.0, self.max_samples)
        thresholds = forgetting_thresholds(self.k, self.delta / 2.0, batches)
        scale = batch_sum_laplace_scale(self.epsilon)
        radii = noise_radii(self.k, self.delta / 2.0, scale, batches, lattice, cumulative=False)
        self._engine = _core.BaiEngine(
            self.k, rule="adap", epsilon=self.epsilon, beta=self.beta, first=1, ratio=2.0, forget=True,
            noise=wire, secure=secure, thresholds=thresholds, c1=3.0, radii=radii,
            max_samples=self.max_samples, seed=seed_or_none("seed", seed),
        )

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Azize et al. 2023; parallel composition over episodes)."""
        return self._guarantee("Azize et al. 2023, AdaP-TT (doubling episodes, forgetting)")


class AdaPTTStar(_PrivateBAI):
    """AdaP-TT* of Azize, Jourdan, Al Marjani & Basu (the extended version
    of the NeurIPS 2023 paper, "Differentially private best-arm
    identification", arXiv 2406.06408; the conference version is arXiv
    2309.02202): AdaP-TT's arm-dependent doubling episodes and Laplace
    noise, with transportation costs adapted to the noise in the
    challenger and in a private-GLR stopping rule; epsilon-global DP,
    delta-correct.

    Episodes and statistics (as :class:`AdaPTT`): arm a's episode ends when
    its reward count doubles (1, 2, 4, ...); its released statistic is the
    last episode's sum with one Laplace(1 / epsilon) draw, over the
    episode's length n (forgetting: a fresh sample of n rewards and one
    noise draw for each episode index). Transportation cost: the Chernoff
    exponent of a mean of n rewards plus one noise draw,
    D(m; n, 1, z) = sup_s [s n m - n ln(1 - z + z e^s) - Lambda(s)]
    (equation (C1) of :mod:`dpbandits.privacy.bai` with j = 1; Lambda the
    log-MGF of the noise), paired as
    W(a, b) = inf_{z in [m_b, m_a]} D_a(m_a; z) + D_b(m_b; z) (C3): the
    GLR of the noisy statistics, about N kl without noise and about
    epsilon |m_a - m_b| min(n_a, n_b) when the noise dominates, the two
    regimes of the lower bound. Leader: AdaP-TT's private UCB index
    m_a + ln t / (epsilon s_a) + sqrt(ln t / (2 s_a)) (s_a the last
    episode's length, t the selections); challenger
    argmin_b W(a, b) + ln N_b (N_b the rewards of b in released episodes);
    leader with probability ``beta``. Stopping: W(a, b) >= c(i_a + i_b)
    for the arm a of largest released statistic and every other b, i the
    arms' episode indices, (1 + c_s) e^-c_s =
    2 delta / ((k - 1) (s - 1) s (s + 1)) (C5). Recommendation: the
    largest released statistic.

    Why the stopping rule is delta-correct: for fixed episode indices
    (i, j) of a wrong leader a and the best arm a*, the two statistics are
    independent fresh samples, so (C2) and (C4) of
    :mod:`dpbandits.privacy.bai` bound P(W(a, a*) >= c) by (1 + c) e^-c;
    the union over the k - 1 wrong arms and over the pairs of episode
    indices (s - 1 pairs of sum s) is at most delta by (C5).

    Reconstructed: the extended paper's algorithm box and threshold were
    not in the text we could reach (its abstract: AdaP-TT* runs in
    arm-dependent adaptive episodes with Laplace noise and "adapts the
    transportation costs" to reach the lower bound up to constants); the
    cost W, the stopping rule and its threshold above are ours (the proof
    is the one of :class:`DPTopTwo`'s rule with one noise draw per
    statistic), and the leader is AdaP-TT's (the authors' 2023 code).
    delta-correctness is measured in ``tests/test_bai_star.py`` (2,000
    replicates) and in the ``private-bai`` experiment.

    Guarantee: epsilon-DP of the rewards (central; module docstring: each
    reward enters one episode sum, released once with its own draw);
    ``privacy`` reports the exact lattice epsilon.

    Parameters
    ----------
    k:
        Number of arms, an integer >= 2.
    delta:
        Confidence level: the probability of recommending a wrong arm is at
        most ``delta``, in (0, 1).
    epsilon:
        Privacy parameter, finite and > 0: the learner is epsilon-DP in the
        rewards.
    beta:
        Probability of sampling the leader rather than the challenger, in
        (0, 1) (default 0.5).
    sampler:
        ``"lattice"`` (default): exact discrete Laplace noise on a
        power-of-two lattice; ``"float"``: floating-point Laplace noise,
        without protection against low-bit attacks (the guarantee says so).
    secure:
        True draws the noise from operating-system entropy (needs
        ``sampler="lattice"``; such a learner cannot ``simulate``); False
        (default) from the seeded generator.
    max_samples:
        The budget of selections, an integer >= 1 (default 10^8): once it is
        spent ``select`` refuses.
    seed:
        None (default: operating-system entropy) or an integer in
        [0, 2^64) for reproducible coin flips and noise.
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
        If an argument lies outside the range given above (``k`` < 2,
        ``delta`` or ``beta`` outside (0, 1), ``epsilon`` not finite and
        > 0, ``sampler`` not one of the choices, ``secure=True`` with
        ``sampler="float"``, ``max_samples`` < 1 or too large for the
        lattice sums to stay exact at this ``epsilon``, a negative
        ``seed``); the message names the argument and the range.
    TypeError
        If an argument has the wrong type (a non-integer ``k``,
        ``max_samples`` or ``seed``, a non-number ``epsilon``, ``delta`` or
        ``beta``, a non-bool ``secure``).

    Examples
    --------
    >>> import dpbandits as dp
    >>> learner = dp.AdaPTTStar(k=3, delta=0.05, epsilon=1.0, seed=0)
    >>> for _ in range(5):
    ...     arm = learner.select()
    ...     learner.update(arm, 1.0 if arm == 0 else 0.0)
    >>> learner.samples, learner.privacy.model
    (5, 'central')
    >>> runs = learner.simulate([0.9, 0.5, 0.1], reps=20, seed=1)
    >>> runs.error_rate, bool(runs.stopped.all())
    (0.0, True)
    """

    def __init__(
        self,
        k: int,
        delta: float,
        epsilon: float,
        beta: float = 0.5,
        sampler: Sampler = "lattice",
        secure: bool = False,
        max_samples: int = 10**8,
        seed: int | None = None,
        *,
        ledger: Ledger | None = None,
        dataset: str | None = None,
    ) -> None:
        self._setup(k, delta, max_samples)
        self.beta = _beta(beta)
        self._args = {"k": k, "delta": delta, "epsilon": epsilon, "beta": beta,
                      "sampler": sampler, "secure": secure, "max_samples": max_samples, "seed": seed}
        wire, _ = self._noise(epsilon, sampler, secure)
        batches = _batches(1, 2.0, self.max_samples)
        self._engine = _core.BaiEngine(
            self.k, rule="adap_chernoff", epsilon=self.epsilon, beta=self.beta, first=1, ratio=2.0, forget=True,
            noise=wire, secure=secure, thresholds=chernoff_pair_thresholds(self.k, self.delta, 2 * batches),
            c1=0.0, max_samples=self.max_samples, seed=seed_or_none("seed", seed), stop="chernoff",
        )

    @property
    def privacy(self) -> Guarantee:
        """epsilon-DP of the rewards (Azize et al., extended version; parallel composition over episodes)."""
        return self._guarantee("Azize et al., AdaP-TT* (doubling episodes, forgetting, Chernoff transportation costs)")
