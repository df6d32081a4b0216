"""A declared (epsilon, delta) budget shared by several releases on the same users.

:class:`PrivacyBudget` records what each learner or release spends and
refuses (:class:`dpbandits.errors.PrivacyBudgetError`) a spend after which
the composition would no longer be (epsilon, delta)-DP.

Accounting. Each part has an (eps_i, delta_i), a rho_i, or both:
:class:`ZCDP` has only rho; :class:`ApproxDP` with delta > 0 and a
:class:`Guarantee` without ``rho`` have only (eps, delta); every pure part
(:class:`PureDP`, an ApproxDP or Guarantee with delta = 0) also has
rho = eps^2/2 (Bun & Steinke 2016, Prop. 1.4), and a Guarantee that states
``rho`` has both. The parts are split into a zCDP pool and the rest:

    epsilon = CKS(sum_pool rho_i, delta_budget - sum_rest delta_i) + sum_rest eps_i,
    delta   = delta_budget            (or sum_rest (eps_i, delta_i) if the pool is empty)

The pool's rhos add (Bun & Steinke, Lemma 2.3), the pool is converted to
(epsilon, delta)-DP at the delta the rest leaves (Canonne, Kamath & Steinke
2020, Cor. 13), and the result composes with the rest by basic composition
(Dwork & Roth 2014, Thm. 3.16). Two splits are tried, both valid for
adaptive composition with parameters fixed in advance, and the budget uses
whichever fits, preferring the smaller epsilon (:attr:`accounting` says
which):

1. pool = the parts with only a rho (``"basic"`` when there are none:
   plain (sum eps_i, sum delta_i));
2. pool = every part with a rho (``"zcdp"``, or ``"zcdp+basic"`` when some
   parts have no rho).

zCDP wins for many small parts (k pure eps-DP parts cost about
eps sqrt(2 k ln(1/delta)) instead of k eps); basic wins for a few parts and
for a pure budget (delta = 0, which no zCDP part fits).

The budget assumes every part protects the same unit (one user's data) under
the same neighbouring relation. Trust models: a budget declared in a model
(``model="joint"``, ...) takes only parts whose guarantee implies a guarantee
in that model, by :func:`model_implies` (local => shuffle => central =>
joint); a budget without a model takes every part and the composition holds
in the weakest model among them.

Copies. A pickled (or copied) budget is a read-only snapshot: its entries and
:attr:`spent` read as the original's, but :meth:`~PrivacyBudget.spend`
refuses, so two copies in two processes cannot spend one budget twice. For a
budget shared by processes and surviving restarts use
:class:`dpbandits.Ledger` (SQLite, a transaction per spend).

Comparisons are exact on exactly rounded sums (``math.fsum``), so a
composition that lands exactly on the budget is accepted.

>>> from dpbandits.privacy import PrivacyBudget, PureDP, ZCDP
>>> budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
>>> _ = budget.spend(PureDP(0.5), "arm means")
>>> _ = budget.spend(PureDP(0.5), "gap estimate")
>>> print(budget.spent, budget.accounting)
(1, 0)-DP basic
>>> budget.spend(ZCDP(0.01), "one more release")
Traceback (most recent call last):
...
dpbandits.errors.PrivacyBudgetError: ...
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from dpbandits._validation import delta_in_unit, positive
from dpbandits.errors import PrivacyBudgetError
from dpbandits.privacy.conversion import (
    max_zcdp_rho,
    pure_dp_to_zcdp_rho,
    zcdp_to_dp_epsilon_cks,
)
from dpbandits.privacy.guarantees import Guarantee
from dpbandits.privacy.notions import ZCDP, ApproxDP, PureDP

__all__ = ["BudgetEntry", "PrivacyBudget", "model_implies"]

Spendable = Guarantee | PureDP | ApproxDP | ZCDP
Accounting = Literal["none", "basic", "zcdp", "zcdp+basic"]
_MAX_ROUNDING_STEPS = 64


#: How strong each trust model is: a guarantee in a model implies one with the
#: same parameters in every model below it. Local => shuffle: the shuffled
#: multiset is post-processing of the DP reports. Shuffle => central: what
#: the analyzer releases is post-processing of the DP shuffled view. Central
#: => joint: the actions shown to the other users are post-processing of the
#: DP output (Shariff & Sheffet 2018, Claim 7; Kearns et al. 2014).
_MODEL_STRENGTH = {"local": 3, "shuffle": 2, "central": 1, "joint": 0}


def model_implies(part: str | None, budget: str | None) -> bool:
    """Whether a guarantee in trust model ``part`` (None: a bare notion,
    whose caller states its model) counts against a budget in model
    ``budget`` (None: any model), by the order local => shuffle => central
    => joint (:data:`_MODEL_STRENGTH`). ValueError for an unknown model."""
    for name, model in (("part", part), ("budget", budget)):
        if model is not None and model not in _MODEL_STRENGTH:
            raise ValueError(f"invalid argument `{name}`: a trust model in {sorted(_MODEL_STRENGTH)} or None, "
                             f"got {model!r}")
    if part is None or budget is None:
        return True
    return _MODEL_STRENGTH[part] >= _MODEL_STRENGTH[budget]


def _pool_bare_zcdp(entry: BudgetEntry) -> bool:
    return entry.epsilon is None


def _pool_every_rho(entry: BudgetEntry) -> bool:
    return entry.rho is not None


_PoolRule = Callable[["BudgetEntry"], bool]
_POOL_RULES: tuple[_PoolRule, ...] = (_pool_bare_zcdp, _pool_every_rho)


@dataclass(frozen=True)
class BudgetEntry:
    """One recorded spend: its label and the parameters the accountings use.

    ``epsilon``/``delta`` are None for a bare :class:`ZCDP`; ``rho`` is None
    for an (epsilon, delta > 0) part without a zCDP guarantee. ``model`` is
    the :class:`Guarantee` model, or None for a bare notion.
    """

    label: str
    epsilon: float | None
    delta: float | None
    rho: float | None
    model: str | None = None


@dataclass(frozen=True)
class _Composition:
    epsilon: float
    delta: float
    accounting: Accounting


def _entry(item: Spendable, label: str) -> BudgetEntry:
    if isinstance(item, Guarantee):
        if not item.is_private:
            raise PrivacyBudgetError(
                f"cannot spend {label!r}: a non-private learner ({item}) exceeds every budget"
            )
        rho = item.rho
        if rho is None and item.delta == 0.0:
            rho = pure_dp_to_zcdp_rho(item.epsilon)  # Bun & Steinke, Prop. 1.4
        return BudgetEntry(label, item.epsilon, item.delta, rho, item.model)
    if isinstance(item, PureDP):
        return BudgetEntry(label, item.epsilon, 0.0, item.to_zcdp().rho)
    if isinstance(item, ApproxDP):
        rho = pure_dp_to_zcdp_rho(item.epsilon) if item.delta == 0.0 else None
        return BudgetEntry(label, item.epsilon, item.delta, rho)
    if isinstance(item, ZCDP):
        return BudgetEntry(label, None, None, item.rho)
    raise TypeError(
        "invalid argument `item`: expected a Guarantee, PureDP, ApproxDP or ZCDP, "
        f"got {type(item).__name__}"
    )


class PrivacyBudget:
    """An (epsilon, delta) budget that composes what is spent against it.

    ``epsilon`` > 0 finite; 0 <= ``delta`` < 1 (0: a pure-DP budget, which
    only pure parts can fit, by basic composition). ``model``: the trust
    model the budget is declared in (``"central"``, ``"joint"``,
    ``"local"``, ``"shuffle"``), or None for any (module docstring).

    See the module docstring for the two accountings. A pickled or copied
    budget is a read-only snapshot (:attr:`read_only`): it reads as the
    original and refuses to spend.
    """

    def __init__(self, epsilon: float, delta: float, model: str | None = None) -> None:
        self._epsilon = positive("epsilon", epsilon)
        self._delta = delta_in_unit("delta", delta)
        model_implies(None, model)  # checks the name
        self._model = model
        self._entries: list[BudgetEntry] = []
        self._read_only = False

    @classmethod
    def _of_entries(cls, epsilon: float, delta: float, model: str | None,
                    entries: list[BudgetEntry]) -> PrivacyBudget:
        """A budget holding ``entries`` already checked to fit (a ledger's rows)."""
        budget = cls(epsilon, delta, model)
        budget._entries = list(entries)
        return budget

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_entries": list(self._entries), "_read_only": True}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_model", None)
        self._read_only = True

    # ----------------------------------------------------------- accounting

    def _compose(self, entries: list[BudgetEntry], pooled: _PoolRule) -> _Composition | None:
        """Pool the rho of the parts ``pooled`` selects (it selects every part
        without (epsilon, delta)), convert at the delta left by the others,
        and add the others by basic composition; None if no delta is left."""
        pool = [e.rho for e in entries if pooled(e)]
        rest = [e for e in entries if not pooled(e)]
        rest_epsilon = math.fsum(e.epsilon for e in rest)  # type: ignore[misc]
        rest_delta = math.fsum(e.delta for e in rest)  # type: ignore[misc]
        if not pool:
            return _Composition(rest_epsilon, rest_delta, "basic")
        kind: Accounting = "zcdp+basic" if rest else "zcdp"
        rho = math.fsum(pool)  # type: ignore[arg-type]
        if rho == 0.0:
            return _Composition(rest_epsilon, rest_delta, kind)
        conversion_delta = self._delta - rest_delta
        if not conversion_delta > 0.0:
            return None
        epsilon = zcdp_to_dp_epsilon_cks(rho, conversion_delta) + rest_epsilon
        return _Composition(epsilon, self._delta, kind)

    def _best(self, entries: list[BudgetEntry]) -> _Composition | None:
        """The fitting accounting with the smaller (epsilon, delta), or None."""
        if not entries:
            return _Composition(0.0, 0.0, "none")
        fitting = [
            c for c in (self._compose(entries, rule) for rule in _POOL_RULES)
            if c is not None and c.epsilon <= self._epsilon and c.delta <= self._delta
        ]
        return min(fitting, key=lambda c: (c.epsilon, c.delta)) if fitting else None

    # ------------------------------------------------------------ public API

    def can_spend(self, item: Spendable) -> bool:
        """Whether :meth:`spend` would accept ``item`` (nothing is recorded)."""
        try:
            entry = _entry(item, "")
        except PrivacyBudgetError:
            return False
        if self._read_only or not model_implies(entry.model, self._model):
            return False
        return self._best([*self._entries, entry]) is not None

    def spend(self, item: Spendable, label: str) -> BudgetEntry:
        """Record ``item`` (a :class:`Guarantee`, :class:`PureDP`,
        :class:`ApproxDP` or :class:`ZCDP`) under ``label`` (a non-empty
        string naming the release) and return its entry.

        Raises :class:`dpbandits.errors.PrivacyBudgetError`, recording
        nothing, when no accounting of the parts so far plus ``item`` fits
        the budget, when ``item`` is not private or its trust model does
        not imply the budget's, or when this budget is a read-only copy.
        """
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"invalid argument `label`: must be a non-empty string, got {label!r}")
        if self._read_only:
            raise PrivacyBudgetError(
                f"cannot spend {label!r} ({item}): this PrivacyBudget is a pickled or copied snapshot, which only "
                "reads; spend on the original, or share a dpbandits.Ledger between processes"
            )
        entry = _entry(item, label)
        if not model_implies(entry.model, self._model):
            raise PrivacyBudgetError(
                f"cannot spend {label!r} ({item}): a {entry.model}-DP guarantee does not imply {self._model} DP, "
                f"the trust model of this budget"
            )
        if self._best([*self._entries, entry]) is None:
            raise PrivacyBudgetError(
                f"cannot spend {label!r} ({item}): the composition would exceed the "
                f"({self._epsilon:g}, {self._delta:g})-DP budget; spent so far {self.spent} "
                f"by {self.accounting} accounting over {len(self._entries)} release(s)"
            )
        self._entries.append(entry)
        return entry

    @property
    def epsilon(self) -> float:
        """The declared epsilon."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """The declared delta."""
        return self._delta

    @property
    def model(self) -> str | None:
        """The trust model the budget is declared in (None: any)."""
        return self._model

    @property
    def read_only(self) -> bool:
        """True for a pickled or copied snapshot, which refuses to spend."""
        return self._read_only

    @property
    def entries(self) -> tuple[BudgetEntry, ...]:
        """The recorded spends, in order."""
        return tuple(self._entries)

    def _current(self) -> _Composition:
        best = self._best(self._entries)
        assert best is not None  # every recorded state was checked to fit
        return best

    @property
    def spent(self) -> ApproxDP:
        """The (epsilon, delta) of the composition so far, by :attr:`accounting`."""
        c = self._current()
        return ApproxDP(c.epsilon, c.delta)

    @property
    def accounting(self) -> Accounting:
        """Which accounting :attr:`spent` comes from: ``"basic"``, ``"zcdp"``,
        ``"zcdp+basic"`` (zCDP pool plus parts without rho), ``"none"`` (empty)."""
        return self._current().accounting

    @property
    def remaining(self) -> ApproxDP:
        """(epsilon - spent.epsilon, delta - spent.delta). Under zCDP
        accounting the whole delta is committed to the conversion, so the
        remaining delta is 0 and further spends must have a rho; see
        :attr:`remaining_rho`."""
        s = self.spent
        return ApproxDP(max(0.0, self._epsilon - s.epsilon), max(0.0, self._delta - s.delta))

    @property
    def rho(self) -> float:
        """Sum of the rho of the recorded parts that have one (0.0 if none)."""
        return math.fsum(e.rho for e in self._entries if e.rho is not None)

    @property
    def remaining_rho(self) -> float:
        """Largest rho such that spending :class:`ZCDP` (rho) is accepted
        (zCDP accounting, CKS conversion; :func:`max_zcdp_rho`); 0.0 when
        none is."""
        extra = 0.0
        for pooled in _POOL_RULES:
            rho = math.fsum(e.rho for e in self._entries if pooled(e))  # type: ignore[misc]
            rest = [e for e in self._entries if not pooled(e)]
            epsilon = self._epsilon - math.fsum(e.epsilon for e in rest)  # type: ignore[misc]
            delta = self._delta - math.fsum(e.delta for e in rest)  # type: ignore[misc]
            if epsilon > 0.0 and delta > 0.0:
                extra = max(extra, max_zcdp_rho(epsilon, delta) - rho)
        # spend() recomputes the composition from the entries; step below any
        # rounding difference so that spending exactly this much is accepted
        for _ in range(_MAX_ROUNDING_STEPS):
            if extra <= 0.0:
                break
            if self._best([*self._entries, BudgetEntry("", None, None, extra)]) is not None:
                return extra
            extra *= 1.0 - 1e-14
        return 0.0

    def __repr__(self) -> str:
        model = "" if self._model is None else f", model={self._model!r}"
        return (
            f"PrivacyBudget(epsilon={self._epsilon!r}, delta={self._delta!r}{model}; spent {self.spent} "
            f"by {self.accounting} accounting over {len(self._entries)} release(s))"
        )
