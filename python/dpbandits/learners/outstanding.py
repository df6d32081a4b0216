"""The selections a learner made and has not yet received feedback for.

The online protocol (``select`` / ``update``) lets rewards arrive late and
out of order. A learner keeps its outstanding selections first in, first
out: ``update(reward)`` is unambiguous only when exactly one is
outstanding, and a reward given with its action (``update(x, reward)``,
``update(index, reward)``) settles the oldest outstanding selection of that
action. The queues hold what was played, never a reward: they are not part
of any private statistic.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.errors import StateError

__all__ = ["OutstandingIndices", "OutstandingRows", "only_row"]

#: How many outstanding selections a StateError message lists.
_SHOWN = 5


class OutstandingRows:
    """First-in-first-out feature rows (length ``d``) of played actions,
    stored in one growing (capacity, d) float64 buffer: a batch of n
    selections is one copy, and a batch of updates in selection order is
    one comparison."""

    __slots__ = ("_buf", "_head", "_tail")

    def __init__(self, d: int) -> None:
        self._buf = np.empty((4, d), dtype=np.float64)
        self._head = 0
        self._tail = 0

    def __len__(self) -> int:
        return self._tail - self._head

    def rows(self) -> NDArray[np.float64]:
        """The outstanding rows, oldest first (a copy)."""
        return self._buf[self._head:self._tail].copy()

    def clear(self) -> None:
        """Forgets every outstanding row."""
        self._head = self._tail = 0

    def _reserve(self, n: int) -> None:
        live = self._tail - self._head
        cap, d = self._buf.shape
        if self._tail + n <= cap:
            return
        if live + n <= cap // 2:
            # Compact in place: the live rows move to the front.
            self._buf[:live] = self._buf[self._head:self._tail]
        else:
            grown = np.empty((max(2 * cap, live + n), d), dtype=np.float64)
            grown[:live] = self._buf[self._head:self._tail]
            self._buf = grown
        self._head, self._tail = 0, live

    def push(self, row: NDArray[np.float64]) -> None:
        """Appends a copy of ``row`` (the caller may reuse its array)."""
        if self._tail == len(self._buf):
            self._reserve(1)
        self._buf[self._tail] = row
        self._tail += 1

    def push_many(self, rows: NDArray[np.float64]) -> None:
        """Appends a copy of every row of ``rows`` (shape (n, d)), in order."""
        n = rows.shape[0]
        self._reserve(n)
        self._buf[self._tail:self._tail + n] = rows
        self._tail += n

    def only(self, what: str) -> NDArray[np.float64]:
        """The one outstanding row, for ``update(reward)``; StateError
        unless exactly one selection is outstanding."""
        if self._tail - self._head == 1:
            return self._buf[self._head]
        raise _rows_error(what, self._buf[self._head:self._tail])

    def pop_first(self) -> None:
        """Removes the oldest outstanding row."""
        self._head += 1
        if self._head == self._tail:
            self._head = self._tail = 0

    def settle(self, x: NDArray[np.float64]) -> None:
        """Removes the oldest outstanding row equal to ``x``, if any (a
        row given without a selection, e.g. logged data, settles nothing)."""
        live = self._buf[self._head:self._tail]
        if len(live) == 0:
            return
        if np.array_equal(live[0], x):
            self.pop_first()
            return
        hits = np.flatnonzero((live == x).all(axis=1))
        if len(hits):
            j = self._head + int(hits[0])
            # Keep the order of the others: the older rows move up by one.
            self._buf[self._head + 1:j + 1] = self._buf[self._head:j].copy()
            self.pop_first()

    def settle_many(self, xs: NDArray[np.float64]) -> None:
        """:meth:`settle` of every row of ``xs``, in order."""
        n = xs.shape[0]
        if n == 0:
            return
        if self._tail - self._head >= n and np.array_equal(self._buf[self._head:self._head + n], xs):
            # Updates in selection order (the common case): one comparison.
            self._head += n
            if self._head == self._tail:
                self._head = self._tail = 0
            return
        for x in xs:
            self.settle(x)


def _rows_error(what: str, live: NDArray[np.float64]) -> StateError:
    n = len(live)
    if n == 0:
        return StateError(
            f"update({what}) needs a preceding select(); pass update(x, {what}) to record another action"
        )
    shown = "; ".join(np.array2string(r, precision=4, separator=", ") for r in live[:_SHOWN])
    more = f" and {n - _SHOWN} more" if n > _SHOWN else ""
    return StateError(
        f"update({what}) is ambiguous: {n} selections are outstanding (their feature rows, oldest first: "
        f"{shown}{more}); pass update(x, {what}) with the played row x"
    )


def only_row(queue: Any, what: str) -> NDArray[np.float64]:
    """The one outstanding row of ``queue`` (an :class:`OutstandingRows` or
    the engine-side ``dpbandits._core.RowQueue``), for ``update(reward)``;
    StateError unless exactly one selection is outstanding."""
    if isinstance(queue, OutstandingRows):
        return queue.only(what)
    row: NDArray[np.float64] | None = queue.only()
    if row is None:
        raise _rows_error(what, queue.rows())
    return row


class OutstandingIndices:
    """First-in-first-out indices of played actions (arms, rows of a fixed
    action set)."""

    __slots__ = ("_queue",)

    def __init__(self, items: Iterable[int] = ()) -> None:
        self._queue: deque[int] = deque(items)

    def __len__(self) -> int:
        return len(self._queue)

    def indices(self) -> list[int]:
        """The outstanding indices, oldest first."""
        return list(self._queue)

    def clear(self) -> None:
        """Forgets every outstanding index."""
        self._queue.clear()

    def push(self, index: int) -> None:
        """Appends a selection of ``index``."""
        self._queue.append(index)

    def oldest(self) -> int:
        """The oldest outstanding index."""
        return self._queue[0]

    def describe(self) -> str:
        """The outstanding indices for a message (the first few, oldest first)."""
        shown = ", ".join(str(i) for i in list(self._queue)[:_SHOWN])
        more = f" and {len(self._queue) - _SHOWN} more" if len(self._queue) > _SHOWN else ""
        return f"{shown}{more}"

    def only(self, what: str) -> int:
        """The one outstanding index, for ``update(reward)``; StateError
        unless exactly one selection is outstanding."""
        if len(self._queue) == 1:
            return self._queue[0]
        if not self._queue:
            raise StateError(f"update({what}) needs a preceding select()")
        raise StateError(
            f"update({what}) is ambiguous: {len(self._queue)} selections are outstanding (actions "
            f"{self.describe()}, oldest first); pass update(index, {what})"
        )

    def settle(self, index: int) -> bool:
        """Removes the oldest outstanding selection of ``index``; whether there was one."""
        try:
            self._queue.remove(index)
        except ValueError:
            return False
        return True
