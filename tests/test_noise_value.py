"""One noise value from the privacy layer to the sampler.

Every private learner's noise is computed once in ``dpbandits.privacy``
(a ``LatticeNoise``: kind, integer scale in lattice steps, lattice
exponent) and crosses into Rust as that tuple (``rust/src/py/noise.rs``);
Rust rounds and rescales nothing. These tests walk each learner's noise
from its constructor to the engine and check that the engine holds exactly
the integers the privacy layer computed, and that the one conversion at the
binding refuses what is not a noise value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import dpbandits as dp
from dpbandits import _core
from dpbandits.privacy.secure import LatticeNoise, exact_lattice_noise, lattice_laplace

ACTIONS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])


def _contexts(rng: np.random.Generator) -> np.ndarray:
    x = rng.normal(size=(3, 2))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _engine_lattices(config: Any) -> Iterator[tuple[str, int, int]]:
    """Every lattice noise in an engine's configuration (``noise_parameters()``),
    as (kind, steps, exponent); the Gaussian variance must be a square."""
    if isinstance(config, dict):
        if set(config) == {"Lattice"}:
            lattice = config["Lattice"]
            ((law, params),) = lattice["kind"].items()
            if law == "Laplace":
                steps = int(params["t"])
            else:
                var = int(params["var"])
                steps = math.isqrt(var)
                assert steps * steps == var, f"variance {var} is not a whole number of steps squared"
            kind = {"Laplace": "lattice_laplace", "Gaussian": "lattice_gaussian",
                    "SymmetricGaussian": "lattice_symmetric_gaussian"}[law]
            yield kind, steps, int(lattice["exponent"])
            return
        for value in config.values():
            yield from _engine_lattices(value)
    elif isinstance(config, list):
        for value in config:
            yield from _engine_lattices(value)


def _wires(*values: Any) -> list[tuple[str, int, int]]:
    """The lattice values among the learner's noise values (flattening tuples of them)."""
    out: list[tuple[str, int, int]] = []
    for v in values:
        if isinstance(v, tuple) and v and isinstance(v[0], str):
            if v[0].startswith("lattice_"):
                out.append((v[0], int(v[1]), int(v[2])))
        elif isinstance(v, tuple):
            out.extend(_wires(*v))
    return out


#: name -> (make, the learner's noise values as its privacy layer computed them)
LEARNERS: dict[str, tuple[Callable[[], Any], Callable[[Any], list[tuple[str, int, int]]]]] = {
    "PrivateUCB": (lambda: dp.PrivateUCB(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "PrivateUCB smooth-binary": (
        lambda: dp.PrivateUCB(3, 1000, 1.0, calibration="tight", counter="smooth-binary"),
        lambda lr: _wires(lr.noise_wire)),
    "PrivateThompsonSampling": (
        lambda: dp.PrivateThompsonSampling(2, 10**8, 1.0), lambda lr: _wires(lr.noise_wire, lr.batch_noise)),
    "PrivateContextualUCB": (lambda: dp.PrivateContextualUCB(2, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "PrivateContextualThompsonSampling": (
        lambda: dp.PrivateContextualThompsonSampling(2, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "JointDPLinUCB binary": (
        lambda: dp.JointDPLinUCB(2, 1000, 1.0, 1e-6, calibration="tight"),
        lambda lr: _wires(lr.calibration.noise.wire())),
    "JointDPLinUCB blt": (
        lambda: dp.JointDPLinUCB(2, 1000, 1.0, 1e-6, calibration="tight", counter="blt"),
        lambda lr: _wires(lr.calibration.noise.wire())),
    "LocalLinUCB gaussian": (lambda: dp.LocalLinUCB(2, 1000, 1.0, 1e-6), lambda lr: _wires(lr.noise_wire)),
    "LocalLinUCB laplace": (
        lambda: dp.LocalLinUCB(2, 1000, 1.0, noise="laplace"), lambda lr: _wires(lr.noise_wire)),
    "ShuffleLinUCB amplification": (
        lambda: dp.ShuffleLinUCB(2, 1000, 1.0, 1e-6, protocol="amplification"), lambda lr: _wires(lr.noise_wire)),
    "EliminationLinearBandit central": (
        lambda: dp.EliminationLinearBandit(ACTIONS, 1000, "central", 1.0), lambda lr: _wires(lr.noise_wire)),
    "EliminationLinearBandit shuffle": (
        lambda: dp.EliminationLinearBandit(ACTIONS, 1000, "shuffle", 1.0, 1e-6), lambda lr: _wires(lr.noise_wire)),
    "ContextualEliminationBandit local": (
        lambda: dp.ContextualEliminationBandit(ACTIONS, _contexts, 1000, "local", 1.0, n_samples=50),
        lambda lr: _wires(lr.linear.noise_wire)),
    "PrivateFTRL": (lambda: dp.PrivateFTRL(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "PrivateFTPL": (lambda: dp.PrivateFTPL(3, 1000, 1.0, 1e-6), lambda lr: _wires(lr.noise_wire)),
    "PrivateFTPL blt": (lambda: dp.PrivateFTPL(3, 1000, 1.0, 1e-6, counter="blt"), lambda lr: _wires(lr.noise_wire)),
    "EXP2": (lambda: dp.EXP2(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "DPKLUCB": (lambda: dp.DPKLUCB(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "DPIMED": (lambda: dp.DPIMED(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "DPSE": (lambda: dp.DPSE(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "DPTS": (lambda: dp.DPTS(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "AdaPUCB": (lambda: dp.AdaPUCB(3, 1000, 1.0), lambda lr: _wires(lr.noise_wire)),
    "AdaCKLUCB": (lambda: dp.AdaCKLUCB(3, 1000, 0.5, delta=1e-6), lambda lr: _wires(lr.noise_wire)),
}


@pytest.mark.parametrize("name", list(LEARNERS))
def test_the_engine_holds_exactly_the_integers_the_privacy_layer_computed(name: str) -> None:
    make, computed = LEARNERS[name]
    learner = make()
    expected = computed(learner)
    assert expected, f"{name}: no lattice noise value computed (the default sampler is the lattice)"
    engine = learner.linear._engine if hasattr(learner, "linear") else learner._engine
    held = list(_engine_lattices(engine.noise_parameters(False)))
    assert sorted(set(held)) == sorted(set(expected)), (name, held, expected)


def test_a_lattice_value_is_its_integers_and_its_scale_is_exact() -> None:
    n = lattice_laplace(3.7, 1.0, value_range=(0.0, 1.0), sum_bound=1000.0)
    kind, steps, exponent = n.wire()
    assert (kind, steps, exponent) == ("lattice_laplace", n.steps, n.exponent)
    assert isinstance(steps, int) and isinstance(exponent, int)
    assert n.scale == math.ldexp(steps, -exponent)
    g = exact_lattice_noise("gaussian", 2.5)
    assert g == LatticeNoise("gaussian", math.ldexp(g.steps, -g.exponent), g.exponent, math.ceil(2.5 * 2**g.exponent))


def test_a_counter_reports_the_value_it_took() -> None:
    for wire in [("lattice_laplace", 524_289, 19), ("lattice_gaussian", 2**25, 7), ("laplace", 1.5), ("zero",)]:
        assert _core.TreeCounter([], 8, wire, 0).noise == wire
    assert _core.TreeCounter([2, 2], 8, ("lattice_symmetric_gaussian", 2**24, 3), 0).noise[1] == 2**24


@pytest.mark.parametrize(
    ("wire", "match"),
    [
        (("lattice_laplace", 2**21 + 1, 19), "1 to 2097152 steps"),
        (("lattice_gaussian", 2**25 + 1, 19), "1 to 33554432 steps"),
        (("lattice_laplace", 0, 19), "steps"),
        (("lattice_laplace", 5.0, 19), "must be an integer"),
        (("lattice_laplace", 5, 2000), "lattice_exponent"),
        (("lattice_laplace", -5, 3), "out of range"),
        (("lattice_wishart", 5, 3), "expected a noise value"),
        (("laplace", -1.0), "scale"),
        (("gaussian", float("nan")), "sigma"),
        (("laplace", 1.0, 2.0), "expected a noise value"),
        ("laplace", "expected a noise value"),
        ((), "expected a noise value"),
    ],
)
def test_the_binding_refuses_what_is_not_a_noise_value(wire: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _core.TreeCounter([], 8, wire, 0)


def test_the_symmetric_gaussian_is_limited_so_that_its_diagonal_stays_in_range() -> None:
    with pytest.raises(ValueError, match="1 to 16777216 steps"):
        _core.TreeCounter([2, 2], 8, ("lattice_symmetric_gaussian", 2**24 + 1, 3), 0)
