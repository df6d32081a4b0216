"""counter= on the learners that release prefix sums: PrivateFTRL
(Laplace), PrivateFTPL (Gaussian), PrivateUCB and the Mishra–Thakurta
contextual learners (Laplace).

Claims checked: the noise scale follows the counter's column norm (by
hand); ``privacy`` names the counter; a counter that cannot serve the noise
family, or the paper calibration with another counter, is a ValueError
naming ``counter`` / ``calibration``; the binary default is unchanged; a
pickled learner continues identically and a fork draws new noise; the
smooth binary releases carry exactly w draws.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from dpbandits.learners.mab import PrivateUCB
from dpbandits.learners.mishra_thakurta import PrivateContextualUCB
from dpbandits.learners.online import research_replay
from dpbandits.learners.online_learning import PrivateFTPL, PrivateFTRL
from dpbandits.privacy.agarwal_singh import ftrl_laplace_scale, loss_sensitivity_l1, loss_sensitivity_l2
from dpbandits.privacy.analytic_gaussian import gaussian_mu
from dpbandits.privacy.factorization import max_column_norm
from dpbandits.privacy.mishra_thakurta import contextual_entry_epsilon
from dpbandits.privacy.smooth_binary import smooth_binary_shape

T = 1000


def _continues_and_forks(make_copy_step):  # type: ignore[no-untyped-def]
    """(learner, step) -> asserts a pickled copy continues identically and a fork diverges."""
    lrn, step = make_copy_step
    rng = np.random.default_rng(0)
    for _ in range(50):
        step(lrn, rng)
    with research_replay():  # bit-identical (outside it, a pickle round trip is re-keyed)
        copy = pickle.loads(pickle.dumps(lrn))
    fork = lrn.fork(seed=123)
    diverged = False
    for _ in range(100):
        state = rng.bit_generator.state
        a = step(lrn, rng)
        rng.bit_generator.state = state
        b = step(copy, rng)
        rng.bit_generator.state = state
        c = step(fork, rng)
        np.testing.assert_array_equal(a, b)
        diverged |= not np.array_equal(a, c)
    assert diverged


def _ftl_step(lrn, rng):  # type: ignore[no-untyped-def]
    released = lrn._engine.released()
    lrn.update(rng.uniform(0.0, 1.0, size=lrn.n))
    return released


# --- PrivateFTRL --------------------------------------------------------------


def test_ftrl_smooth_binary_scale_privacy_and_draws() -> None:
    lrn = PrivateFTRL(8, T, 1.0, counter="smooth-binary", seed=1, sampler="float")
    tree = smooth_binary_shape(T, "laplace")  # (20, 17): binom(20, 17) = 1140 >= 1001
    assert (tree.height, tree.ones) == (20, 17)
    # lambda = Delta_1 (H - w) / epsilon = 8 * 3 / 1 against the tree's 8 * 10.
    assert lrn.noise_scale == pytest.approx(8 * 3 / 1.0)
    assert ftrl_laplace_scale("simplex", 8, T, 1.0).scale == pytest.approx(8 * 10 / 1.0)
    assert "smooth binary" in lrn.privacy.basis and lrn.privacy.epsilon == 1.0
    assert lrn.counter == "smooth-binary" and lrn.noise_terms == 17
    for _ in range(40):
        lrn.update(np.full(8, 0.5))
        assert lrn.noise_terms == 17
    _continues_and_forks((PrivateFTRL(8, T, 1.0, counter="smooth-binary", seed=2), _ftl_step))


def test_ftrl_smooth_binary_release_variance_is_w_laplace_draws() -> None:
    # The released L~_t - L_t is a sum of w = 17 Laplace(24) draws at every t:
    # variance 17 * 2 * 24^2 = 19,584; 400 seeds, 5 sd of the sample variance
    # (kurtosis of a sum of 17 Laplace draws: 3 + 3/17).
    want = 17 * 2 * 24.0**2
    vals = []
    for seed in range(400):
        lrn = PrivateFTRL(8, T, 1.0, counter="smooth-binary", seed=seed, sampler="float")
        for _ in range(37):
            lrn.update(np.zeros(8))
        vals.append(lrn._engine.released())
    ms = float(np.mean(np.square(vals)))
    n = 400 * 8
    assert abs(ms - want) < 5 * want * math.sqrt((2 + 3 / 17) / n), (ms, want)


def test_ftrl_counter_errors_and_defaults() -> None:
    with pytest.raises(ValueError, match="counter"):
        PrivateFTRL(4, T, 1.0, counter="blt")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="calibration"):
        PrivateFTRL(4, T, 1.0, counter="smooth-binary", calibration="paper")
    # Default: smooth binary under the (default) tight calibration, the
    # paper's tree under the paper's calibration.
    a, b = PrivateFTRL(4, T, 1.0, seed=3), PrivateFTRL(4, T, 1.0, seed=3, counter="smooth-binary")
    assert a.counter == "smooth-binary" and a.noise_scale == b.noise_scale
    assert pickle.dumps(a._engine) == pickle.dumps(b._engine)
    assert PrivateFTRL(4, T, 1.0, calibration="paper").counter == "binary"
    assert PrivateFTPL(4, T, 1.0, 1e-3).counter == "smooth-binary"
    assert PrivateFTPL(4, T, 1.0, 1e-3, calibration="paper").counter == "binary"
    assert PrivateContextualUCB(2, T, 1.0).counter == "smooth-binary"
    assert PrivateContextualUCB(2, T, 1.0, calibration="paper").counter == "binary"


# --- PrivateFTPL --------------------------------------------------------------


@pytest.mark.parametrize("counter", ["smooth-binary", "sqrt", "blt"])
@pytest.mark.parametrize("sampler", ["float", "lattice"])
def test_ftpl_counters(counter: str, sampler: str) -> None:
    eps, delta, n = 1.0, 1e-3, 4
    lrn = PrivateFTPL(n, T, eps, delta, counter=counter, seed=4, sampler=sampler)  # type: ignore[arg-type]
    assert counter in lrn.privacy.basis and lrn.counter == counter
    if sampler == "float":
        privacy_sigma = max_column_norm(counter, T) * loss_sensitivity_l2("simplex", n) / gaussian_mu(eps, delta)
        assert lrn.sigma >= privacy_sigma * (1 - 1e-9)
    _continues_and_forks((PrivateFTPL(n, T, eps, delta, counter=counter, seed=5, sampler=sampler), _ftl_step))  # type: ignore[arg-type]


def test_ftpl_smooth_binary_privacy_term_by_hand() -> None:
    # At a tiny epsilon the privacy term dominates: sigma = sqrt(H - w) * 2 / mu*(eps, delta)
    # (simplex Delta_2 = sqrt(4) = 2), against the tree's sqrt(10) * 2 / mu*.
    eps, delta = 0.05, 1e-3
    lrn = PrivateFTPL(4, T, eps, delta, counter="smooth-binary", sampler="float")
    tree = PrivateFTPL(4, T, eps, delta, sampler="float", counter="binary")
    shape = smooth_binary_shape(T, "gaussian")
    assert lrn.sigma == pytest.approx(math.sqrt(shape.zeros) * 2.0 / gaussian_mu(eps, delta), rel=1e-9)
    assert tree.sigma == pytest.approx(math.sqrt(10) * 2.0 / gaussian_mu(eps, delta), rel=1e-9)
    with pytest.raises(ValueError, match="calibration"):
        PrivateFTPL(4, T, eps, delta, counter="sqrt", calibration="paper")


# --- PrivateUCB ---------------------------------------------------------------


def _ucb_step(lrn, rng):  # type: ignore[no-untyped-def]
    arm = lrn.select()
    lrn.update(float(rng.uniform()))
    return np.array([arm, *lrn._engine.sums()])


def test_private_ucb_smooth_binary() -> None:
    lrn = PrivateUCB(5, T, 1.0, calibration="tight", counter="smooth-binary", seed=6, sampler="float")
    # Node scale w (H - w) / epsilon = 1 * 3 / 1 (tree: 10); Lemma 5 bound with N = w = 17 nodes.
    assert lrn.node_scale == pytest.approx(3.0)
    assert lrn.noise_bound == pytest.approx(17 * 3.0 * math.log(5 * T * 17 / lrn.gamma))
    assert "smooth binary" in lrn.privacy.basis and lrn.privacy.epsilon == 1.0
    _continues_and_forks((PrivateUCB(5, T, 1.0, calibration="tight", counter="smooth-binary", seed=7), _ucb_step))
    with pytest.raises(ValueError, match="counter"):
        PrivateUCB(5, T, 1.0, calibration="tight", counter="sqrt")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="calibration"):
        PrivateUCB(5, T, 1.0, counter="smooth-binary")


# --- Mishra–Thakurta contextual ----------------------------------------------


def _ctx_step(lrn, rng):  # type: ignore[no-untyped-def]
    actions = rng.normal(size=(6, 3)) / 2.0
    i = lrn.select(actions)
    lrn.update(float(rng.uniform(-1, 1)))
    a, b = lrn.released()
    return np.concatenate([[i], a.ravel(), b])


def test_contextual_ucb_smooth_binary() -> None:
    d = 3
    lrn = PrivateContextualUCB(d, T, 1.0, counter="smooth-binary", seed=8, sampler="float")
    eps0 = contextual_entry_epsilon(1.0, d)
    assert lrn.scale_a == pytest.approx(3 / eps0) and lrn.scale_b == pytest.approx(2 * 3 / eps0)
    assert "smooth binary" in lrn.privacy.basis and lrn.privacy.epsilon == pytest.approx(1.0)
    _continues_and_forks((PrivateContextualUCB(d, T, 1.0, counter="smooth-binary", seed=9), _ctx_step))
    with pytest.raises(ValueError, match="counter"):
        PrivateContextualUCB(d, T, 1.0, counter="blt")  # type: ignore[arg-type]


def test_sensitivities_used_by_hand() -> None:
    assert loss_sensitivity_l1("simplex", 8) == 8.0 and loss_sensitivity_l2("simplex", 4) == 2.0
