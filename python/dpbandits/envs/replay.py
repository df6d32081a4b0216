"""Supervised-to-bandit replay: a labelled data set as a contextual bandit.

Each round presents one sample; the arms are the classes. Arm a's feature
vector is the disjoint encoding x_{t,a} = e_a ⊗ f_t (the sample's features
f_t in block a of a K·p vector, zeros elsewhere), so a linear learner fits
one weight vector per class. The reward is 1 for the true class and
``wrong_reward`` (0 or -1) otherwise; it is deterministic, so the
pseudo-regret of a round is exactly 1 - wrong_reward when the learner picks
a wrong class (the usual "replay" or "classification as bandit" benchmark,
e.g. Dudík, Langford & Li 2011).

Bounds the privacy proofs rely on hold by construction: ||x_{t,a}|| =
||f_t|| <= 1 (features are scaled to the unit ball: :func:`prepare_features`)
and |y| <= 1.

A built-in environment (``rust/src/env/replay.rs``): :func:`dpbandits.simulate`
runs it entirely in Rust, the data shared by every replicate; each replicate
visits the samples in its own random order (a fresh permutation per pass
over the data, drawn from the replicate seed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import _core
from dpbandits._validation import positive_int, seed_or_none

__all__ = ["DATASETS", "ReplayEnv", "load_dataset", "prepare_features"]

#: scikit-learn's bundled data sets (no download) -> the loader's name.
DATASETS = {"digits": "load_digits", "wine": "load_wine", "breast_cancer": "load_breast_cancer"}


def prepare_features(x: ArrayLike, components: int | None = None) -> NDArray[np.float64]:
    """Standardizes each column, projects on the first ``components``
    principal components (all columns if None), appends a constant 1 (an
    intercept per class) and scales each row to unit Euclidean norm, so
    ||f_t|| = 1 <= L."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] < 2 or not np.all(np.isfinite(a)):
        raise ValueError(f"invalid argument `x`: expected a finite (n >= 2, p) matrix, got shape {a.shape}")
    sd = a.std(axis=0)
    a = (a - a.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if components is not None:
        c = positive_int("components", components)
        if c < a.shape[1]:
            _, _, vt = np.linalg.svd(a, full_matrices=False)
            a = a @ vt[:c].T
    a = np.hstack([a, np.ones((a.shape[0], 1))])
    return a / np.linalg.norm(a, axis=1, keepdims=True)


#: data set -> (file in sklearn/datasets/data, has a "n_samples,n_features,..." header line, n_samples).
_BUNDLED_FILES = {"digits": ("digits.csv.gz", False, 1797), "wine": ("wine_data.csv", True, 178),
                  "breast_cancer": ("breast_cancer.csv", True, 569)}


def _read_bundled(name: str) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """The data set read straight from scikit-learn's bundled CSV file, which
    avoids importing scikit-learn (and SciPy, pandas: seconds); None when
    the file is not where scikit-learn keeps it or not as expected."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")  # locates the package without importing it
    if spec is None or spec.origin is None:
        return None
    file, header, n = _BUNDLED_FILES[name]
    path = Path(spec.origin).parent / "datasets" / "data" / file
    try:
        table = np.loadtxt(path, delimiter=",", skiprows=1 if header else 0, ndmin=2)
    except (OSError, ValueError):
        return None
    if table.shape[0] != n or not np.all(table[:, -1] == np.round(table[:, -1])):
        return None
    return table[:, :-1], table[:, -1].astype(np.int64)


def load_dataset(name: str, components: int | None = None) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """(features, labels) of a scikit-learn bundled data set (``digits``,
    ``wine``, ``breast_cancer``), features prepared by
    :func:`prepare_features`. Needs scikit-learn installed (``pip install
    'dpbandits[data]'``); nothing is downloaded. The bundled CSV file is
    read directly when it is where scikit-learn keeps it (the same numbers
    as its ``load_*`` function; tests/test_replay.py checks this), else
    through the ``load_*`` function."""
    if name not in DATASETS:
        raise ValueError(f"invalid argument `name`: must be one of {', '.join(map(repr, DATASETS))}, got {name!r}")
    raw = _read_bundled(name)
    if raw is None:
        try:
            import sklearn.datasets
        except ImportError:
            raise ImportError("replay data sets need scikit-learn: pip install 'dpbandits[data]'") from None
        bunch = getattr(sklearn.datasets, DATASETS[name])()
        raw = np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target, dtype=np.int64)
    return prepare_features(raw[0], components), raw[1]


def _check(features: ArrayLike, labels: ArrayLike, wrong_reward: float) -> tuple[NDArray[np.float64],
                                                                                    NDArray[np.int64], int]:
    if np.iscomplexobj(features):
        # np.array(..., dtype=float64) would drop the imaginary part with only a warning.
        raise TypeError("invalid argument `features`: expected real numbers, got a complex array")
    f = np.array(features, dtype=np.float64)  # copies: the environment keeps its own read-only data
    y = np.array(labels)
    if f.ndim != 2 or f.shape[0] < 1 or not np.all(np.isfinite(f)):
        raise ValueError(f"invalid argument `features`: expected a finite (n, p) matrix, got shape {f.shape}")
    if y.shape != (f.shape[0],) or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise ValueError("invalid argument `labels`: expected n non-negative integer class labels")
    norms = np.linalg.norm(f, axis=1)
    if norms.max() > 1.0 + 1e-12:
        raise ValueError(
            f"invalid argument `features`: rows must have norm <= 1 (the bound L = 1 the learners assume), "
            f"got max norm {norms.max():.6g}; use prepare_features()"
        )
    if wrong_reward not in (0.0, -1.0):
        raise ValueError(f"invalid argument `wrong_reward`: must be 0 or -1, got {wrong_reward!r}")
    k = int(y.max()) + 1
    if k < 2:
        raise ValueError("invalid argument `labels`: need at least two classes")
    absent = np.setdiff1d(np.arange(k), y)
    if absent.size:
        # Each class in [0, K) is an arm: a label that never occurs would be
        # an arm that is never right, a class the data does not have.
        shown = ", ".join(map(str, absent[:5].tolist())) + (", ..." if absent.size > 5 else "")
        raise ValueError(
            f"invalid argument `labels`: the classes are 0..{k - 1}, but no sample has label {shown}; "
            "number the classes that occur 0..K-1 (np.unique(labels, return_inverse=True)[1])"
        )
    return f, y.astype(np.int64), k


class ReplayEnv:
    """The replay bandit of a labelled data set (see the module docstring).

    ``features``: (n, p) rows of norm <= 1 (:func:`prepare_features`);
    ``labels``: n integers in [0, K), each class occurring at least once;
    the arms are the K classes and d = K·p. ``wrong_reward``: 0 or -1. ``name`` labels the data in reports.

    Runs in Rust (``rust/src/env/replay.rs``): as a spec,
    :func:`dpbandits.simulate` builds one instance per replicate sharing
    the data; round by round it follows the Python environment protocol.
    ``seed``: the order of the samples (a fresh permutation per pass); None
    draws it from operating-system entropy online and from the replicate
    seed alone in a simulation (as for every environment: see
    :mod:`dpbandits.sim`). Rounds continue past n with a new pass.
    """

    def __init__(self, features: ArrayLike, labels: ArrayLike, wrong_reward: float = 0.0, name: str = "replay",
                 seed: int | None = None) -> None:
        self.features, self.labels, self.k = _check(features, labels, float(wrong_reward))
        self.features.setflags(write=False)
        self.labels.setflags(write=False)
        self.wrong_reward = float(wrong_reward)
        if not isinstance(name, str):
            raise TypeError(f"invalid argument `name`: expected a str, got {name!r}")
        self.name = name
        self.seed = seed_or_none("seed", seed)
        self.n, self.p = self.features.shape
        self.d = self.k * self.p
        self._engine = _core.ReplayEnvEngine(
            np.ascontiguousarray(self.features).ravel(), self.p, self.labels.astype(np.uint32).tolist(),
            self.wrong_reward, self.seed,
        )

    @classmethod
    def from_dataset(cls, name: str, components: int | None = None, wrong_reward: float = 0.0,
                     seed: int | None = None) -> ReplayEnv:
        """The replay of a scikit-learn bundled data set (:func:`load_dataset`)."""
        f, y = load_dataset(name, components)
        return cls(f, y, wrong_reward, name, seed)

    def decision_set(self, t: int) -> NDArray[np.float64]:
        """The (K, K·p) disjoint encoding of round t's sample (rounds in order)."""
        if t != self._engine.t + 1:
            raise ValueError(f"invalid argument `t`: expected round {self._engine.t + 1}, got {t}")
        return self._engine.next_round()

    def reward(self, t: int, index: int) -> float:
        """1 for the true class, ``wrong_reward`` otherwise."""
        if t != self._engine.t:
            raise ValueError(f"invalid argument `t`: the current round is {self._engine.t}, got {t}")
        i = positive_int("index", index, minimum=0)
        if not i < self.k:
            raise ValueError(f"invalid argument `index`: must lie in [0, {self.k}), got {index}")
        return self._engine.reward(i)

    def mean_rewards(self, t: int) -> NDArray[np.float64]:
        """The (deterministic) reward of every arm this round."""
        positive_int("t", t, minimum=0)
        return self._engine.mean_rewards()

    @property
    def config(self) -> dict[str, Any]:
        """The constructor arguments (:func:`dpbandits.sweep` hashes the arrays)."""
        return {"features": self.features, "labels": self.labels, "wrong_reward": self.wrong_reward,
                "name": self.name, "seed": self.seed}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_replay_env, (self.config, self._engine.state()))

    def __repr__(self) -> str:
        return (f"ReplayEnv(name={self.name!r}, n={self.n}, k={self.k}, d={self.d}, "
                f"wrong_reward={self.wrong_reward}, seed={self.seed!r})")


def _restore_replay_env(config: dict[str, Any], state: bytes) -> ReplayEnv:
    """Unpickling: the same data, continued from ``state``."""
    env = ReplayEnv(**config)
    env._engine.set_state(state)
    return env
