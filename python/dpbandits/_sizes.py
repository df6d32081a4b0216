"""The memory a size argument implies, checked before anything is allocated.

Every argument that sets an allocation (``k``, ``n``, ``d``, action
counts, ``seeds``, record points, ...) goes through :func:`check_bytes`
with a lower bound on the bytes the object will hold once it has played a
round (measured against the Rust engines' buffers). When that exceeds
:func:`memory_limit` the call raises :class:`dpbandits.errors.AllocationError`
(a ``MemoryError``, and a ``ValueError`` since the argument is what is
wrong) with NumPy's wording, e.g.::

    AllocationError: invalid argument `k`: Unable to allocate 708 GiB for
    the per-arm statistics of 1000000000 arms (k = 1000000000); at most
    22.7 GiB can be allocated (available memory)

The limit (documented here and in README.md, "Sizes"): the memory
available now (``MemAvailable`` on Linux; the physical memory elsewhere),
lowered to what is left under the process's address-space and data
limits (``RLIMIT_AS``, ``RLIMIT_DATA``) when those are set, and to the
``DPBANDITS_MAX_BYTES`` environment variable when it is set (an integer
number of bytes). The estimates are lower bounds, so nothing that fits is
refused; what slips between estimate and limit meets the Rust core's
fallible allocation (``try_reserve``), which raises the same error class.
"""

from __future__ import annotations

import math
import os

from dpbandits.errors import AllocationError

__all__ = [
    "MAX_TREE_ENTRIES",
    "check_bytes",
    "check_learner_rounds",
    "check_tree_entries",
    "check_work",
    "format_bytes",
    "format_seconds",
    "memory_limit",
    "tree_bytes",
    "work_limit",
]

#: The most work an argument may set, in seconds of a lower-bound estimate
#: (see :func:`check_work`), unless ``DPBANDITS_MAX_WORK_SECONDS`` says otherwise.
DEFAULT_MAX_WORK_SECONDS = 3600.0

#: A lower bound on the time of one learner-round of a simulation (one
#: decision, one reward from the environment, one update), in seconds: the
#: fastest pair, UCB1 on a two-armed Bernoulli bandit in Rust, takes about
#: 20 ns a round; 2 ns leaves a factor of ten for faster machines.
LEARNER_ROUND_SECONDS = 2e-9

#: Most float64 node entries (levels x values) one tree counter holds
#: (1 GiB a buffer): ``MAX_STATE_ENTRIES`` of rust/src/counter/mod.rs.
MAX_TREE_ENTRIES = 1 << 27

#: Allocations this small are not looked up (see :func:`check_bytes`).
_SMALL = 16 << 20

_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")

#: A lower bound on the fixed cost of one tree counter (struct, generator,
#: its six heap buffers), in bytes: measured at 650 bytes (a PrivateUCB arm
#: costs 808 bytes at T = 100, of which 24 are the arm's statistics and
#: 136 its node buffers).
_TREE_OVERHEAD = 600


def format_bytes(nbytes: int) -> str:
    """``nbytes`` as NumPy writes sizes in its MemoryError: "7.28 TiB",
    "16.0 GiB", "512 bytes" (three significant digits)."""
    if nbytes < 1024:
        return f"{int(nbytes)} bytes"
    value, unit = float(nbytes), -1
    while value >= 1024.0 and unit < len(_UNITS) - 1:
        value /= 1024.0
        unit += 1
    decimals = max(0, 2 - math.floor(math.log10(value))) if value >= 1.0 else 2
    return f"{value:.{decimals}f} {_UNITS[unit]}"


def _available_memory() -> int | None:
    """MemAvailable of /proc/meminfo (Linux): what can be allocated now
    without swapping or the out-of-memory killer; None elsewhere."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _address_space_used() -> int:
    """The process's current virtual size (Linux), else 0."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def _physical_memory() -> int | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - platforms without sysconf
        return None
    return int(pages) * int(size) if pages > 0 and size > 0 else None


def memory_limit() -> tuple[int, str]:
    """(bytes, what bounds them): the most one object's buffers may take."""
    limits: list[tuple[int, str]] = []
    phys = _physical_memory()
    if phys is not None:
        limits.append((phys, "physical memory"))
    available = _available_memory()
    if available is not None:
        limits.append((available, "available memory"))
    try:
        import resource

        for which, label in ((resource.RLIMIT_AS, "RLIMIT_AS"), (resource.RLIMIT_DATA, "RLIMIT_DATA")):
            soft = resource.getrlimit(which)[0]
            if soft != resource.RLIM_INFINITY and soft > 0:
                # What is left of the address space under the limit.
                used = _address_space_used() if which == resource.RLIMIT_AS else 0
                limits.append((max(0, int(soft) - used), f"what is left under the process limit {label}"))
    except (ImportError, OSError, ValueError):  # pragma: no cover - Windows
        pass
    env = os.environ.get("DPBANDITS_MAX_BYTES")
    if env:
        try:
            limits.append((int(env), "DPBANDITS_MAX_BYTES"))
        except ValueError:
            pass
    if not limits:  # pragma: no cover - nothing known: the largest address space
        return 2**63 - 1, "the address space"
    return min(limits)


def tree_bytes(entries: int, horizon: int) -> int:
    """A lower bound on a tree counter of ``entries`` values over ``horizon``
    rounds: two ``levels x entries`` float buffers (exact and noisy nodes)
    and three of ``entries`` (padding, release, scratch), plus its fixed
    cost (rust/src/counter/tree/)."""
    levels = max(1, int(horizon).bit_length())
    return _TREE_OVERHEAD + 8 * (2 * levels + 3) * entries


def check_tree_entries(name: str, value: int, entries: int, horizon: int, works: int) -> None:
    """AllocationError naming ``name`` when a tree counter over ``entries``
    values and ``horizon`` rounds exceeds :data:`MAX_TREE_ENTRIES` node
    entries (the Rust core would refuse it naming its ``shape``, which the
    caller never passed); ``works`` is the largest ``name`` that fits at
    this horizon."""
    levels = max(1, int(horizon).bit_length())
    if levels * entries > MAX_TREE_ENTRIES:
        raise AllocationError(
            f"invalid argument `{name}`: {name} = {value} needs a tree counter of {levels} levels x {entries} values "
            f"= {levels * entries} node entries ({format_bytes(8 * levels * entries)} a buffer), more than its "
            f"limit of {MAX_TREE_ENTRIES} ({format_bytes(8 * MAX_TREE_ENTRIES)}); {name} <= {works} works at "
            f"horizon = {horizon}"
        )


def check_bytes(name: str, value: object, nbytes: int, what: str) -> None:
    """AllocationError naming ``name`` unless ``nbytes`` (a lower bound on
    what argument ``name`` = ``value`` makes the object allocate, for
    ``what``) fits in :func:`memory_limit`. Sizes up to 16 MiB skip the
    look-up (it reads /proc: most of a small learner's construction time)
    unless ``DPBANDITS_MAX_BYTES`` is set; the Rust core's fallible
    allocation still covers them."""
    if nbytes <= _SMALL and "DPBANDITS_MAX_BYTES" not in os.environ:
        return
    limit, source = memory_limit()
    if nbytes > limit:
        raise AllocationError(
            f"invalid argument `{name}`: Unable to allocate {format_bytes(nbytes)} for {what} "
            f"({name} = {value}); at most {format_bytes(limit)} can be allocated ({source})"
        )


def format_seconds(seconds: float) -> str:
    """``seconds`` as a duration: "950 ms", "42.0 s", "1.6 hours", "3.1 days"."""
    if seconds < 1.0:
        return f"{seconds * 1e3:.0f} ms"
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def work_limit() -> tuple[float, str]:
    """The most seconds of work (a lower-bound estimate) one argument may
    set, and where the limit comes from: ``DPBANDITS_MAX_WORK_SECONDS`` when
    set (a positive number), else :data:`DEFAULT_MAX_WORK_SECONDS`."""
    raw = os.environ.get("DPBANDITS_MAX_WORK_SECONDS")
    if raw is not None:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value > 0:
            return value, "DPBANDITS_MAX_WORK_SECONDS"
    return DEFAULT_MAX_WORK_SECONDS, "the default; set DPBANDITS_MAX_WORK_SECONDS to allow more"


def check_work(name: str, value: object, seconds: float, what: str, works: object) -> None:
    """ValueError naming ``name`` unless ``seconds`` (a lower bound on the
    time that argument ``name`` = ``value`` makes a call spend, for
    ``what``) fits in :func:`work_limit`; ``works`` is the largest value
    that fits. Sizes are refused by the memory they imply
    (:func:`check_bytes`); work that takes hours is refused the same way,
    up front, instead of running until the process is killed."""
    limit, source = work_limit()
    if seconds > limit:
        raise ValueError(
            f"invalid argument `{name}`: {name} = {value} implies {what}, at least {format_seconds(seconds)} of "
            f"work; at most {format_seconds(limit)} is accepted ({source}); {name} <= {works} works"
        )


def check_learner_rounds(horizon: int, replicates: int, learners: int, what: str = "") -> None:
    """ValueError unless ``replicates`` x ``learners`` x ``horizon``
    learner-rounds (at least :data:`LEARNER_ROUND_SECONDS` each, on one
    core) fit in :func:`work_limit`. Names the larger of the two counts a
    caller chose: ``horizon`` (with the largest horizon that fits at these
    replicates) or ``seeds`` (the most replicates that fit at this horizon).
    ``what`` describes the run (e.g. "over 3 configurations")."""
    rounds = horizon * replicates * learners
    seconds = rounds * LEARNER_ROUND_SECONDS
    limit, _ = work_limit()
    if seconds <= limit:
        return
    described = (f"{replicates} replicate(s) x {learners} learner(s) x {horizon} rounds = {rounds} learner-rounds"
                 f"{' ' + what if what else ''} (each at least {LEARNER_ROUND_SECONDS * 1e9:.0f} ns on one core)")
    per_round = LEARNER_ROUND_SECONDS
    if replicates > horizon:
        check_work("seeds", replicates, seconds, described, max(1, int(limit / (per_round * horizon * learners))))
    check_work("horizon", horizon, seconds, described, max(1, int(limit / (per_round * replicates * learners))))
