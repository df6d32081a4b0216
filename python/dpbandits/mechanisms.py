"""Continual-release counters and the noise they add.

The tree-based (binary) mechanism releases every prefix sum of a stream
with the noise of at most m = 1 + ceil(log2 n) tree nodes per release
(Shariff & Sheffet 2018, App. A.2; Mishra & Thakurta 2015, App. A;
Agarwal & Singh 2017, Alg. 2). The noise *distribution* of each node is a
spec from this module; its *scale* is decided by ``dpbandits.privacy``.
The arithmetic runs in Rust (``rust/src/counter/``, ``rust/src/noise/``).

Example
-------
>>> from dpbandits.mechanisms import TreeCounter, LaplaceNoise
>>> c = TreeCounter(shape=(), horizon=1000, noise=LaplaceNoise(scale=10.0), seed=0)
>>> c.add(1.0)
>>> c.t, c.noise_terms
(1, 1)
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._replay import _REPLAY
from dpbandits._sizes import check_bytes, format_bytes
from dpbandits._validation import float_array, positive, positive_int, seed_or_none
from dpbandits.errors import AllocationError, StateError
from dpbandits.noise import (
    GaussianNoise,
    LaplaceNoise,
    NoiseSpec,
    NoiseWire,
    SymmetricGaussianNoise,
    WishartNoise,
    ZeroNoise,
    spec_of_wire,
)
from dpbandits.privacy.factorization import counter_choice, counter_parameters
from dpbandits.privacy.secure import LatticeNoise, exact_lattice_noise
from dpbandits.privacy.tree import tree_depth

__all__ = [
    "EpochCounter",
    "GaussianNoise",
    "LaplaceNoise",
    "NoiseSpec",
    "SymmetricGaussianNoise",
    "TreeCounter",
    "WishartNoise",
    "ZeroNoise",
    "gaussian",
    "laplace",
    "symmetric_gaussian",
    "wishart",
]


# Largest array of draws or values made in one call, in bytes (2 GiB).
# Not the 2**63 - 1 bytes numpy can address: with memory overcommit,
# size=2**32 "allocates" and filling it gets the process killed. Draw in
# chunks for more.
_MAX_BYTES = 2**31


def _dims(name: str, value: int | Sequence[int], minimum: int, entries: int = 1) -> tuple[int, ...]:
    """``value`` (an integer or a sequence of them) as a tuple of dimensions.

    Every size argument goes through here, so that a float (``size=2.5``),
    an integer >= 2**64 or a product that would overflow u64 in Rust is a
    TypeError or ValueError naming the argument. ``entries`` multiplies the
    element count (p*p per matrix) for the size bound.
    """
    items: Iterable[Any] = value if isinstance(value, Iterable) and not isinstance(value, (str, bytes)) else (value,)
    dims = tuple(positive_int(name, s, minimum=minimum) for s in items)
    nbytes = math.prod(dims) * entries * 8
    if nbytes > _MAX_BYTES or any(s >= 2**63 for s in dims):
        raise AllocationError(
            f"invalid argument `{name}`: Unable to allocate {format_bytes(nbytes)} for an array of shape {dims}: "
            f"{dims} is too large for one array (at most {format_bytes(_MAX_BYTES)} per call; draw in chunks)"
        )
    check_bytes(name, dims, nbytes, f"an array of shape {dims}")
    return dims


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    return _dims("shape", shape, minimum=1)


class _Counter:
    """What the continual counters share: reading the release and the configuration."""

    __slots__ = ("_inner", "_lock")
    _inner: _core._Counter
    _lock: threading.RLock

    def release(self) -> NDArray[np.float64] | float:
        """The noisy running sum after the last addition (an epoch counter:
        the sum of the released epoch sums, zeros before the first epoch
        end): a float for a scalar counter (``shape=()``), else a new array
        of the counter's shape. (Methods compute or change something;
        properties read stored attributes.)"""
        with self.lock:
            out = self._inner.release()
            return float(out) if self.shape == () else out

    @property
    def t(self) -> int:
        """Number of values added so far."""
        with self.lock:
            return self._inner.t

    @property
    def horizon(self) -> int:
        """The most values the counter accepts (its calibrated horizon)."""
        with self.lock:
            return self._inner.horizon

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of each counted value (and of each release)."""
        with self.lock:
            return tuple(self._inner.shape)

    @property
    def noise(self) -> NoiseSpec:
        """The noise spec of each draw (a tree node, an epoch's release; its
        scale as drawn: rounded up to whole lattice steps for lattice noise)."""
        with self.lock:
            return spec_of_wire(self._inner.noise)

    @property
    def secure(self) -> bool:
        """Whether the noise is exact discrete noise on a lattice."""
        with self.lock:
            return self._inner.secure_exponent is not None

    @property
    def os_entropy(self) -> bool:
        """Whether draws come from the operating system (``secure=True`` without a seed)."""
        with self.lock:
            return bool(self._inner.os_entropy)

    @property
    def lattice_step(self) -> float | None:
        """g = 2^-j of secure mode (releases are multiples of it), else None."""
        with self.lock:
            j = self._inner.secure_exponent
            return None if j is None else math.ldexp(1.0, -j)

    @property
    def lock(self) -> threading.RLock:
        """This counter's reentrant lock, held by every method and
        property: a thread reading the counter while another adds values
        (``add_many`` releases the GIL) waits for it instead of failing."""
        try:
            return self._lock
        except AttributeError:
            with _LOCK_GUARD:
                try:
                    return self._lock
                except AttributeError:
                    self._lock = threading.RLock()
                    return self._lock



class TreeCounter(_Counter):
    """Continual release of the running sum of a stream of arrays.

    After ``t`` calls to :meth:`add`, :meth:`release` returns the exact sum of
    the values plus the noise of the popcount(t) <= m = 1 + ceil(log2 n)
    nodes of t's dyadic decomposition (Shariff & Sheffet App. A.2). Each
    node's noise is drawn once, when the node is completed, and is stored
    with it: reading a release twice, pickling, or restoring never redraws
    it. Memory is O(log n) values.

    Restores and copies never repeat future noise. A counter restored for
    use (:meth:`load`, an unpickled copy, ``copy.copy``, ``copy.deepcopy``)
    keeps every noise value already drawn (completed nodes, the current
    round's padding, persistent padding draws, a factorization counter's
    buffers: each covers only values both copies hold, or none) and draws
    every future value from a generator re-keyed from operating-system
    entropy. Two restores of one state fed neighbouring values therefore
    release values with independent new noise, and their privacy losses
    compose; with one generator they would differ by exactly the data
    difference (epsilon = infinity). Bit-identical research replays, for
    simulated or public data only, are explicit: ``load(path,
    replay=True)``, or pickling and copying inside a
    ``dpbandits.research_replay()`` block.

    Parameters
    ----------
    shape:
        Shape of each value: ``()`` for scalars, ``(k,)`` for vectors,
        ``(p, p)`` for matrices (required by the matrix noises).
    horizon:
        The number n of values the noise is calibrated for; adding more
        raises :class:`dpbandits.errors.StateError`.
    noise:
        Per-node noise spec; its scale comes from ``dpbandits.privacy``.
    seed:
        Seed of the counter's random stream, or ``None`` (default) to key it
        from the operating system's entropy (use that in deployment); the
        package's one seed policy, see :mod:`dpbandits.sim`.
    padded:
        Pad every release to exactly max(1, ceil(log2 n)) noise draws
        (Agarwal & Singh 2017, Alg. 2: identically distributed noise). The
        padding of round t is drawn once, when round t is added.
    padding:
        How a padded release gets its missing draws. ``"fresh"`` (default,
        Alg. 2's rule): one new draw of the missing sum every round.
        ``"persistent"`` (the pan-private tree of Shariff & Sheffet's own
        code; docs/reproduction-notes.md): one draw per tree level whose bit of t is 0, kept while that bit stays 0, so
        consecutive releases share most of their noise; every release then
        carries floor(log2 n) + 1 draws (one per level). Same law of every
        release, hence the same guarantee; needs ``padded=True``.
    sampler:
        The noise law. ``"lattice"`` (the default for Laplace, Gaussian and
        symmetric Gaussian noise): exact discrete noise on a power-of-two
        lattice: every value is rounded to the lattice g Z, g = 2^-j with
        j = :func:`dpbandits.privacy.secure.lattice_exponent` (noise scale),
        and each node draws the discrete Laplace / Gaussian of Canonne,
        Kamath & Steinke (2020) with integer arithmetic only, so releases
        are exact multiples of g and carry no floating-point artefact
        (Mironov 2012). The rounding adds at most one step g to each
        entry's sensitivity: see :mod:`dpbandits.privacy.secure` for the
        resulting guarantee. ``"float"``: floating-point noise (the
        default, and the only law, for Wishart noise), whose releases are
        open to low-bit attacks.
    secure:
        Draw from the operating system's entropy (with ``seed=None``) instead
        of the seeded stream; implies ``sampler="lattice"``. With a seed the
        lattice draws come from the seeded stream (tests only).
    counter:
        ``"binary"`` (default): the tree above. ``"sqrt"``: the square-root
        factorization of the prefix-sum matrix (O(n) memory and O(t) work
        per step: for moderate horizons); ``"blt"``: a buffered linear
        Toeplitz factorization (four buffers of the value's shape,
        whatever n). Both release A x + B z with one Gaussian draw z_t per
        round, scaled through :mod:`dpbandits.privacy.factorization`
        (sensitivity = the encoder's largest column norm); they take
        Gaussian or symmetric Gaussian noise only (Laplace and Wishart
        raise ValueError) and no padding. With lattice noise the exact
        lattice object is the encoded release round(C x) + z and the
        prefix sums are its post-processing, so they are not themselves
        lattice multiples (see that module). ``"smooth-binary"``: the smooth
        binary mechanism (Andersson & Pagh 2023,
        :mod:`dpbandits.privacy.smooth_binary`): a binary tree of height H
        read only at leaves of weight w, (H, w) chosen for the horizon and
        the noise family; Laplace or Gaussian noise, every release sums
        exactly w node draws (no padding needed), one input touches at most
        H - w nodes (scale the noise by that column norm), O(H) memory.
        Its lattice releases are exact lattice sums, like the tree's.

    Pickled counters carry the exact node sums and the generator state:
    treat a pickle like the raw data.

    Examples
    --------
    A binary-tree counter of scalars with Laplace(2) node noise (the scale
    comes from ``dpbandits.privacy``; here a bare number):

    >>> from dpbandits.mechanisms import LaplaceNoise, TreeCounter
    >>> counter = TreeCounter((), horizon=8, noise=LaplaceNoise(scale=2.0), seed=0)
    >>> for value in [1.0, 0.0, 1.0]:
    ...     counter.add(value)
    >>> counter.t, counter.noise_terms  # 3 = 0b11: two noisy nodes
    (3, 2)
    >>> counter.release() == counter.release()  # node noise is drawn once and stored
    True
    """

    __slots__ = ()
    _inner: _core.TreeCounter | _core.FactorizationCounter

    def __init__(
        self,
        shape: int | Sequence[int],
        horizon: int,
        noise: NoiseSpec | LatticeNoise,
        seed: int | None = None,
        padded: bool = False,
        secure: bool = False,
        sampler: Literal["lattice", "float"] | None = None,
        counter: Literal["binary", "smooth-binary", "sqrt", "blt"] = "binary",
        padding: Literal["fresh", "persistent"] = "fresh",
    ) -> None:
        if padding not in ("fresh", "persistent"):
            raise ValueError(f"invalid argument `padding`: must be 'fresh' or 'persistent', got {padding!r}")
        if padding == "persistent" and not padded:
            raise ValueError("invalid argument `padding`: 'persistent' pads releases, so it needs padded=True")
        if not hasattr(noise, "wire"):
            raise TypeError(f"invalid argument `noise`: expected a noise spec, got {noise!r}")
        if not isinstance(secure, bool):
            raise TypeError(f"invalid argument `secure`: expected True or False, got {secure!r}")
        if not isinstance(padded, (bool, np.bool_)):
            # Not truthiness: padded=nan would read as True.
            raise TypeError(f"invalid argument `padded`: expected True or False, got {padded!r}")
        wire: NoiseWire = noise.wire()
        # Lattice noise computed by the privacy layer crosses as it is.
        on_lattice = isinstance(noise, LatticeNoise)
        kind = noise.kind if isinstance(noise, LatticeNoise) else wire[0]
        exact = kind in ("laplace", "gaussian", "symmetric_gaussian")
        if sampler is None:
            sampler = "lattice" if exact or secure else "float"
        if sampler not in ("lattice", "float"):
            raise ValueError(f"invalid argument `sampler`: must be 'lattice' or 'float', got {sampler!r}")
        if secure and sampler == "float":
            raise ValueError(
                "invalid argument `secure`: secure sampling is exact lattice noise; sampler='float' is not"
            )
        if sampler == "lattice":
            if not exact:
                raise ValueError(
                    f"invalid argument `sampler`: exact discrete (lattice) sampling covers Laplace and Gaussian "
                    f"noise, not {type(noise).__name__}"
                )
            # Sums of up to `horizon` values of the noise's magnitude (or 1)
            # stay exact; larger values are refused by add().
            if not on_lattice:
                scale = float(wire[1])  # type: ignore[misc]  # (kind, scale) of the exact kinds
                wire = exact_lattice_noise(kind, scale, _horizon(horizon) * max(1.0, scale)).wire()
        elif on_lattice:
            raise ValueError("invalid argument `sampler`: lattice noise cannot be drawn with sampler='float'")
        seed = seed_or_none("seed", seed)
        if counter != "binary":
            family = {"gaussian": "gaussian", "symmetric_gaussian": "gaussian", "zero": "gaussian"}
            counter_choice(counter, family.get(kind, kind))
            if padded:
                raise ValueError(
                    "invalid argument `padded`: only counter='binary' pads its releases (smooth-binary "
                    "releases already sum the same number of draws at every step)"
                )
            family_of_tree = "laplace" if kind == "laplace" else "gaussian"
            theta, omega = counter_parameters(counter, _horizon(horizon), family_of_tree)
            self._inner = _core.FactorizationCounter(
                list(_shape(shape)), _horizon(horizon), wire, counter, theta, omega, seed, secure and seed is None,
            )
            return
        if not isinstance(counter, str) or counter != "binary":
            raise ValueError(
                f"invalid argument `counter`: must be 'binary', 'smooth-binary', 'sqrt' or 'blt', got {counter!r}"
            )
        self._inner = _core.TreeCounter(
            list(_shape(shape)),
            _horizon(horizon),
            wire,
            seed,
            bool(padded),
            _horizon(horizon).bit_length() if padding == "persistent" else None,
            secure and seed is None,
            padding,
        )

    def add(self, value: ArrayLike) -> None:
        """Adds the value of the next round (finite, of the counter's shape)."""
        with self.lock:
            arr = float_array("value", value)
            self._inner.add(arr if arr.ndim else arr.reshape(()))

    def add_many(self, values: ArrayLike) -> None:
        """Adds several rounds at once (first axis = rounds), GIL released.

        Adds nothing when the rows would not all fit in the horizon."""
        with self.lock:
            arr = float_array("values", values)
            # Refuse the whole batch up front: the Rust loop adds rows until the
            # horizon is used up and then raises, which would leave the counter
            # part-way through the batch.
            if arr.ndim == len(self.shape) + 1 and self.t + arr.shape[0] > self.horizon:
                raise StateError(
                    f"adding {arr.shape[0]} values at t = {self.t} would exceed the horizon of "
                    f"{self.horizon} additions the noise was calibrated for"
                )
            self._inner.add_many(arr)

    def live_nodes(self) -> list[tuple[int, int, int, NDArray[np.float64]]]:
        """(level, first_leaf, last_leaf, noisy_sum) of the nodes whose sum is
        the current release. These are released (noisy) values. Binary
        counters only (a factorization counter has no nodes)."""
        with self.lock:
            if not isinstance(self._inner, _core.TreeCounter):
                raise ValueError(f"live_nodes: a {self.counter!r} counter has no tree nodes")
            return self._inner.live_nodes()

    @property
    def counter(self) -> str:
        """"binary", "smooth-binary", "sqrt" or "blt"."""
        with self.lock:
            if isinstance(self._inner, _core.TreeCounter):
                return "binary"
            return str(self._inner.factorization[0])

    @property
    def noise_terms(self) -> int:
        """Noise draws in the current release (popcount(t), or exactly
        max(1, ceil(log2 n)) when padded)."""
        with self.lock:
            return self._inner.noise_terms

    @property
    def padded(self) -> bool:
        """Whether every release is topped up to a fixed number of noise draws."""
        with self.lock:
            return self._inner.padded

    @property
    def max_noise_terms(self) -> int:
        """m = 1 + ceil(log2 n), the bound on noise terms per release (for
        a factorization counter: n, every draw enters every later release;
        smooth binary: w, every release sums exactly w node draws)."""
        with self.lock:
            inner = self._inner
            if isinstance(inner, _core.FactorizationCounter) and inner.factorization[0] == "smooth-binary":
                return int(inner.factorization[1][1])
            if self.counter != "binary":
                return self.horizon
            return tree_depth(self.horizon)

    def save(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
        """Writes the whole state (exact sums, every stored node noise, the
        padding, the generator) to ``path`` atomically (see
        :mod:`dpbandits.checkpoint`); with ``key``, authenticated with
        HMAC-SHA256 (without, the checksum only detects accidents). Treat
        the file like the raw data."""
        from dpbandits.checkpoint import write_checkpoint

        with self.lock:
            write_checkpoint(path, _TREE_KIND, {}, bytes(self._inner.to_bytes()), key=key)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, key: bytes | str | None = None,
             replay: bool = False) -> TreeCounter:
        """A counter saved by :meth:`save`, restored for use: every value it
        released and every noise value already drawn are kept, and its
        future noise comes from a generator re-keyed from operating-system
        entropy (two restores fed neighbouring values add independent new
        noise). ``replay=True``: a bit-identical research replay (the future
        noise the saved counter would have drawn), for simulated or public
        data only.
        Raises :class:`dpbandits.errors.CheckpointError` for a corrupted
        file, one from an unknown format version, or one failing
        authentication with ``key`` (or authenticated when no key is given)."""
        from dpbandits.checkpoint import read_checkpoint
        from dpbandits.errors import CheckpointError

        if not isinstance(replay, bool):
            raise TypeError(f"invalid argument `replay`: expected True or False, got {replay!r}")
        ckpt = read_checkpoint(path, expected_kind=_TREE_KIND, key=key)
        out = cls.__new__(cls)
        try:
            out._inner = _inner_from_bytes(ckpt.state)
        except ValueError as exc:
            raise CheckpointError(f"{os.fspath(path)!r}: the counter state does not decode: {exc}") from None
        if not replay:
            out._inner.reseed(None)
        return out

    def _release_runs(self, values: ArrayLike, runs: int) -> NDArray[np.float64]:
        """``runs`` independent runs of this (fresh) counter's mechanism on
        ``values`` (first axis = rounds): every release, shape
        (runs, rounds, *shape). For privacy audits (:mod:`dpbandits.audit`);
        the counter stays at t = 0 and its generator moves past the draws."""
        with self.lock:
            arr = float_array("values", values)
            return self._inner._release_runs(arr, positive_int("runs", runs, minimum=0))

    def __getstate__(self) -> bytes | tuple[bytes, str]:
        with self.lock:
            state = bytes(self._inner.to_bytes())
        # Pickled inside research_replay(): unpickles bit-identically.
        return (state, "replay") if _REPLAY.get() else state

    def __setstate__(self, state: bytes | tuple[bytes, str]) -> None:
        """A pickle round trip (and ``copy.copy`` / ``copy.deepcopy``) is a
        restore for use: future noise re-keyed from operating-system
        entropy, unless pickled or unpickled inside
        :func:`dpbandits.research_replay`."""
        replay = _REPLAY.get()
        if isinstance(state, tuple) and len(state) == 2 and state[1] == "replay":
            state, replay = state[0], True
        with self.lock:
            inner = _inner_from_bytes(state)  # type: ignore[arg-type]  # anything else is refused there
            if not replay:
                inner.reseed(None)
            self._inner = inner

    def __repr__(self) -> str:
        counter = "" if self.counter == "binary" else f"counter={self.counter!r}, "
        return (
            f"TreeCounter(shape={self.shape}, horizon={self.horizon}, noise={self.noise!r}, "
            f"padded={self.padded}, secure={self.secure}, {counter}t={self.t})"
        )


class EpochCounter(_Counter):
    """Continual release of the running sum of a stream of arrays, one
    release per geometric epoch.

    Rounds are cut into epochs ending at e_1 = n_0, e_{k+1} = max(e_k + 1,
    ceil(r e_k)) (the last at the horizon n;
    :func:`dpbandits.privacy.epoch.epoch_ends`). At the end of epoch k the
    exact sum of its values is released once with one draw of i.i.d.
    Gaussian noise per entry; :meth:`release` returns the sum of the
    released epoch sums: the exact prefix sum up to the last epoch end plus
    k independent draws, unchanged between epoch ends. This is the counter
    of ``JointDPLinUCB(counter="epoch")`` (``rust/src/counter/epoch.rs``),
    with i.i.d. noise on any shape.

    Guarantee. Every value enters exactly one release and the epochs are
    disjoint, so the whole stream of releases is one Gaussian mechanism in
    each value, of L2 sensitivity 2 ``bound`` (one value replaced by
    another, both of norm <= ``bound``): it is (``epsilon``,
    ``delta``)-DP with sigma = 2 B / mu*(epsilon, delta), mu* the exact
    Gaussian mechanism's (Balle & Wang 2018, Thm 8), whatever the horizon;
    a binary tree pays sqrt(log2 n) more (Shariff & Sheffet 2018, App. A.2).
    The price is the lag: a release at round t sums the values up to the
    last epoch end, at least t / r of them. The noise and the guarantee
    come from :func:`dpbandits.privacy.epoch.epoch_counter_calibration`
    (:attr:`calibration`, :attr:`privacy`). Values of norm above ``bound``
    are refused (ValueError): the proof needs the bound. For values in
    [0, 1] (counting), add v - 1/2 with ``bound=0.5`` (sensitivity 1) and
    t/2 back.

    The default noise is the exact discrete Gaussian on a lattice 2^-j Z
    (Canonne, Kamath & Steinke 2020), inputs rounded to it first (the
    rounding accounted in the calibration, for every delta in (0, 1)): the
    released values are exact multiples of the lattice step
    (:attr:`lattice_step`), with no floating-point artefact (Mironov 2012).

    Restores and copies never repeat future noise, as for
    :class:`TreeCounter`: a counter restored for use (:meth:`load`, an
    unpickled copy, ``copy.copy``, ``copy.deepcopy``) keeps the released
    epochs and the current epoch's exact sum and draws every future epoch's
    noise from a generator re-keyed from operating-system entropy;
    ``load(path, replay=True)`` or a ``dpbandits.research_replay()`` block
    give bit-identical research replays (simulated or public data only).
    Pickles and checkpoints carry the current epoch's exact sum: treat them
    like the raw data.

    Parameters
    ----------
    shape:
        Shape of each value: ``()`` for scalars, ``(k,)`` for vectors, any
        array shape.
    horizon:
        The number n of values; adding more raises
        :class:`dpbandits.errors.StateError`.
    epsilon, delta:
        The (epsilon, delta)-DP of the stream of releases: epsilon finite
        and > 0, delta in (0, 1).
    bound:
        B > 0, the largest L2 norm of a value (default 1).
    first_epoch:
        n_0, an integer in [1, horizon] (default 1).
    epoch_ratio:
        r in [1, 64] (default 1.5).
    seed:
        None (default: noise keyed by the operating system, for
        deployment) or an integer (reproducible noise, research only).
    sampler:
        ``"lattice"`` (default) or ``"float"`` (floating-point Gaussian
        noise, open to low-bit attacks).
    secure:
        True draws the noise from operating-system entropy (with
        ``seed=None``; lattice only).

    Raises
    ------
    ValueError
        If an argument lies outside the range given above.
    TypeError
        If an argument has the wrong type.

    Examples
    --------
    >>> from dpbandits.mechanisms import EpochCounter
    >>> c = EpochCounter((2,), horizon=100, epsilon=1.0, delta=1e-6, first_epoch=4, epoch_ratio=2.0, seed=0)
    >>> for t in range(5):
    ...     c.add([0.6, 0.8])
    >>> c.t, c.epochs, c.epoch_ends[:3]  # released at t = 4; the next at 8
    (5, 1, [4, 8, 16])
    >>> print(c.privacy)  # doctest: +ELLIPSIS
    (1, 1e-06)-central DP ... of each value of the stream [epoch counter ...; exact lattice noise]
    """

    __slots__ = ("_calibration",)
    _inner: _core.EpochCounter

    def __init__(
        self,
        shape: int | Sequence[int],
        horizon: int,
        epsilon: float,
        delta: float,
        bound: float = 1.0,
        *,
        first_epoch: int = 1,
        epoch_ratio: float = 1.5,
        seed: int | None = None,
        sampler: Literal["lattice", "float"] = "lattice",
        secure: bool = False,
    ) -> None:
        from dpbandits.privacy.epoch import _ratio, epoch_counter_calibration

        dims = _shape(shape)
        n = _horizon(horizon)
        first = positive_int("first_epoch", first_epoch)
        if first > n:
            raise ValueError(f"invalid argument `first_epoch`: must lie in [1, horizon = {n}], got {first_epoch!r}")
        ratio = _ratio(epoch_ratio)
        secure = _secure_flag(secure)
        if secure and sampler == "float":
            raise ValueError(
                "invalid argument `secure`: secure sampling is exact lattice noise; sampler='float' is not"
            )
        cal = epoch_counter_calibration(epsilon, delta, bound, entries=math.prod(dims), horizon=n, sampler=sampler)
        seed = seed_or_none("seed", seed)
        self._calibration = cal
        self._inner = _core.EpochCounter(list(dims), n, cal.noise.wire(), first, ratio, seed, secure and seed is None)

    def _checked(self, name: str, values: ArrayLike, rows: bool) -> NDArray[np.float64]:
        """``values`` as floats, each value of L2 norm <= ``bound`` (shapes: the engine checks)."""
        arr = float_array(name, values)
        bound = self._calibration.bound
        if arr.ndim == 0 and not rows:
            norms = np.abs(arr).reshape(1)
        else:
            lead = arr.reshape(arr.shape[0], -1) if rows and arr.ndim >= 1 else arr.reshape(1, -1)
            norms = np.sqrt((lead * lead).sum(axis=1))
        if norms.size and float(norms.max()) > bound:
            raise ValueError(
                f"invalid argument `{name}`: a value has L2 norm {float(norms.max())!r} > bound = {bound!r} "
                "(the guarantee needs the bound)"
            )
        return arr

    def add(self, value: ArrayLike) -> None:
        """Adds the value of the next round (finite, of the counter's shape, L2 norm <= ``bound``)."""
        with self.lock:
            arr = self._checked("value", value, rows=False)
            self._inner.add(arr if arr.ndim else arr.reshape(()))

    def add_many(self, values: ArrayLike) -> None:
        """Adds several rounds at once (first axis = rounds), GIL released;
        adds nothing when a row is refused or the rows would not all fit in
        the horizon."""
        with self.lock:
            arr = self._checked("values", values, rows=True)
            if arr.ndim == len(self.shape) + 1 and self.t + arr.shape[0] > self.horizon:
                raise StateError(
                    f"adding {arr.shape[0]} values at t = {self.t} would exceed the horizon of "
                    f"{self.horizon} additions the noise was calibrated for"
                )
            self._inner.add_many(arr)

    @property
    def epochs(self) -> int:
        """Released epochs k (the noise draws in the release)."""
        with self.lock:
            return self._inner.epochs

    @property
    def noise_terms(self) -> int:
        """Noise draws in the current release (the released epochs)."""
        with self.lock:
            return self._inner.noise_terms

    @property
    def epoch_ends(self) -> list[int]:
        """The rounds at which epochs end (releases happen)."""
        from dpbandits.privacy.epoch import epoch_ends

        first, ratio = self._inner.schedule
        return epoch_ends(self.horizon, first, ratio)

    @property
    def calibration(self) -> Any:
        """The :class:`dpbandits.privacy.epoch.EpochCounterCalibration` of the noise."""
        return self._calibration

    @property
    def privacy(self) -> Any:
        """The (epsilon, delta)-DP guarantee of the stream of releases (a
        :class:`dpbandits.privacy.Guarantee`)."""
        return self._calibration.guarantee

    def _params(self) -> dict[str, Any]:
        c = self._calibration
        return {"epsilon": c.epsilon, "delta": c.delta, "bound": c.bound, "sampler": c.sampler}

    @classmethod
    def _restored(cls, state: bytes, params: dict[str, Any], replay: bool) -> EpochCounter:
        """A counter from its engine state and calibration inputs; refuses a
        state whose noise is not the calibration's."""
        from dpbandits.privacy.epoch import epoch_counter_calibration

        inner = _core.EpochCounter.from_bytes(state)
        cal = epoch_counter_calibration(
            params["epsilon"], params["delta"], params["bound"], entries=math.prod(inner.shape),
            horizon=inner.horizon, sampler=params["sampler"],
        )
        if tuple(inner.noise) != tuple(cal.noise.wire()):
            raise ValueError("the counter's noise is not the one its (epsilon, delta, bound) calibrate")
        if not replay:
            inner.reseed(None)
        out = cls.__new__(cls)
        out._calibration, out._inner = cal, inner
        return out

    def save(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
        """Writes the whole state (the released sum, the current epoch's
        exact sum, the generator) to ``path`` atomically (see
        :mod:`dpbandits.checkpoint`); with ``key``, authenticated with
        HMAC-SHA256. Treat the file like the raw data."""
        from dpbandits.checkpoint import write_checkpoint

        with self.lock:
            write_checkpoint(path, _EPOCH_KIND, self._params(), bytes(self._inner.to_bytes()), key=key)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, key: bytes | str | None = None,
             replay: bool = False) -> EpochCounter:
        """A counter saved by :meth:`save`, restored for use: the released
        epochs and the current epoch's sum are kept, and future noise comes
        from a generator re-keyed from operating-system entropy.
        ``replay=True``: a bit-identical research replay. Raises
        :class:`dpbandits.errors.CheckpointError` for a corrupted,
        inconsistent or unauthenticated file."""
        from dpbandits.checkpoint import read_checkpoint
        from dpbandits.errors import CheckpointError

        if not isinstance(replay, bool):
            raise TypeError(f"invalid argument `replay`: expected True or False, got {replay!r}")
        ckpt = read_checkpoint(path, expected_kind=_EPOCH_KIND, key=key)
        try:
            return cls._restored(ckpt.state, dict(ckpt.config), replay)
        except (ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{os.fspath(path)!r}: the counter state does not decode: {exc}") from None

    def _release_runs(self, values: ArrayLike, runs: int) -> NDArray[np.float64]:
        """``runs`` independent runs of this (fresh) counter's mechanism on
        ``values`` (first axis = rounds): every release, shape (runs,
        rounds, *shape). For privacy audits; the counter stays at t = 0."""
        with self.lock:
            arr = self._checked("values", values, rows=True)
            return self._inner._release_runs(arr, positive_int("runs", runs, minimum=0))

    def __getstate__(self) -> tuple[bytes, dict[str, Any], bool]:
        with self.lock:
            return bytes(self._inner.to_bytes()), self._params(), bool(_REPLAY.get())

    def __setstate__(self, state: tuple[bytes, dict[str, Any], bool]) -> None:
        """A pickle round trip (and ``copy.copy`` / ``copy.deepcopy``) is a
        restore for use (future noise re-keyed from operating-system
        entropy), unless pickled or unpickled inside
        :func:`dpbandits.research_replay`."""
        if not (isinstance(state, tuple) and len(state) == 3 and isinstance(state[1], dict)):
            raise ValueError("not an EpochCounter state")
        restored = EpochCounter._restored(bytes(state[0]), state[1], bool(state[2]) or bool(_REPLAY.get()))
        self._calibration, self._inner = restored._calibration, restored._inner

    def __repr__(self) -> str:
        c = self._calibration
        return (
            f"EpochCounter(shape={self.shape}, horizon={self.horizon}, epsilon={c.epsilon!r}, delta={c.delta!r}, "
            f"bound={c.bound!r}, schedule={tuple(self._inner.schedule)}, sampler={c.sampler!r}, t={self.t})"
        )


_EPOCH_KIND = "dpbandits.mechanisms:EpochCounter"


#: First byte of a serialized factorization counter (rust/src/counter/factorization.rs).
_FACTOR_STATE_TAG = ord("F")


def _inner_from_bytes(state: bytes) -> _core.TreeCounter | _core.FactorizationCounter:
    if state[:1] == bytes([_FACTOR_STATE_TAG]):
        return _core.FactorizationCounter.from_bytes(state)
    return _core.TreeCounter.from_bytes(state)


_TREE_KIND = "dpbandits.mechanisms:TreeCounter"
#: Guards the lazy creation of each counter's lock (restored counters are
#: made with ``__new__``).
_LOCK_GUARD = threading.Lock()


def _horizon(horizon: int) -> int:
    n = positive_int("horizon", horizon)
    if n >= 2**64:
        raise ValueError(f"invalid argument `horizon`: must be < 2**64, got {n}")
    return n


def _count(size: int | Sequence[int] | None, entries: int = 1) -> tuple[tuple[int, ...], int]:
    if size is None:
        return (), 1
    dims = _dims("size", size, minimum=0, entries=entries)
    return dims, math.prod(dims)


def _secure_flag(secure: bool) -> bool:
    if not isinstance(secure, bool):
        raise TypeError(f"invalid argument `secure`: expected True or False, got {secure!r}")
    return secure


def laplace(
    scale: float, size: int | Sequence[int] | None = None, seed: int | None = None, secure: bool = False
) -> NDArray[np.float64] | float:
    """Laplace(0, scale) draws: density exp(-|x|/scale) / (2 scale).

    ``secure=True``: the exact discrete Laplace on the lattice g Z,
    g = 2^-j, j = :func:`dpbandits.privacy.secure.lattice_exponent` (scale):
    P[X = k g] ∝ exp(-|k| / t), t = ceil(scale / g) (Canonne, Kamath &
    Steinke 2020, Alg. 2), drawn with integer arithmetic from the operating
    system (``seed=None``) or the seeded stream (tests)."""
    dims, n = _count(size)
    scale = positive("scale", scale)
    if _secure_flag(secure):

        noise = exact_lattice_noise("laplace", scale)
        out = _core.sample_lattice(noise.wire(), n, seed_or_none("seed", seed))
    else:
        out = _core.sample_laplace(scale, n, seed_or_none("seed", seed))
    return float(out[0]) if size is None else out.reshape(dims)


def gaussian(
    sigma: float, size: int | Sequence[int] | None = None, seed: int | None = None, secure: bool = False
) -> NDArray[np.float64] | float:
    """N(0, sigma^2) draws (Ziggurat sampler).

    ``secure=True``: the exact discrete Gaussian on the lattice g Z,
    g = 2^-j, j = :func:`dpbandits.privacy.secure.lattice_exponent` (sigma):
    P[X = k g] ∝ exp(-k^2 / (2 s^2)), s = ceil(sigma / g) (Canonne, Kamath
    & Steinke 2020, Alg. 3), integer arithmetic, operating-system entropy
    unless seeded."""
    dims, n = _count(size)
    sigma = positive("sigma", sigma)
    if _secure_flag(secure):

        noise = exact_lattice_noise("gaussian", sigma)
        out = _core.sample_lattice(noise.wire(), n, seed_or_none("seed", seed))
    else:
        out = _core.sample_gaussian(sigma, n, seed_or_none("seed", seed))
    return float(out[0]) if size is None else out.reshape(dims)


def symmetric_gaussian(sigma: float, p: int, size: int | None = None, seed: int | None = None) -> NDArray[np.float64]:
    """(Z + Z^T)/sqrt(2), Z_ij ~ N(0, sigma^2) i.i.d. (Shariff & Sheffet §4.2);
    shape (p, p), or (size, p, p)."""
    p = positive_int("p", p)
    if p * p * 8 > _MAX_BYTES:
        raise AllocationError(
            f"invalid argument `p`: Unable to allocate {format_bytes(p * p * 8)} for a {p} x {p} matrix: "
            f"too large for one array (at most {format_bytes(_MAX_BYTES)} per call)"
        )
    dims, n = _count(size, entries=p * p)
    sigma = positive("sigma", sigma)
    out = _core.sample_symmetric_gaussian(sigma, p, n, seed_or_none("seed", seed))
    return out[0] if size is None else out.reshape((*dims, p, p))


def wishart(scale: ArrayLike, df: float, size: int | None = None, seed: int | None = None) -> NDArray[np.float64]:
    """W_p(S, df) draws by the Bartlett decomposition (cost independent of df).

    ``scale`` is the p x p symmetric positive definite matrix S; df > p - 1.
    Mean: df * S.
    """
    s = float_array("scale", scale, ndim=2)
    if s.shape[0] != s.shape[1]:
        raise ValueError(f"invalid argument `scale`: must be square, got shape {s.shape}")
    if not np.allclose(s, s.T, rtol=1e-12, atol=0.0):
        raise ValueError("invalid argument `scale`: must be symmetric")
    dims, n = _count(size, entries=s.shape[0] ** 2)
    out = _core.sample_wishart(s, positive("df", df), n, seed_or_none("seed", seed))
    p = s.shape[0]
    return out[0] if size is None else out.reshape((*dims, p, p))
