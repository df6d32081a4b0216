//! Bindings for the private experts learners past Agarwal & Singh
//! (`dpbandits.learners.private_experts`).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use super::arrays::row_major;
use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::error::Error;
use crate::noise::NoiseSpec;
use crate::policy::{
    BallLattice, BatchedExp3, BatchedExp3Config, DartboardExperts, DartboardExpertsConfig, LazyBall, LazyBallConfig,
    LazyExperts, LazyExpertsConfig, StochasticExperts, StochasticExpertsConfig,
};

/// The doubling-batch learner for stochastic losses (Asi, Feldman, Koren &
/// Talwar 2023, Sec. 3); built by `dpbandits.PrivateStochasticExperts`.
#[pyclass(module = "dpbandits._core", name = "StochasticExpertsEngine")]
pub struct PyStochasticExperts {
    pub(crate) inner: StochasticExperts,
}

engine_methods! {
    PyStochasticExperts { inner: StochasticExperts }, restore _restore_stochastic_experts,
    shared [learner, secure, state], getters [selections: u64, batch_remaining: u64];

    #[new]
    #[pyo3(signature = (n, horizon, *, noise=Noise(NoiseSpec::Zero), first_batch=1, clip=true, seed=None))]
    fn new(n: usize, horizon: u64, noise: Noise, first_batch: u64, clip: bool, seed: Option<u64>) -> PyResult<Self> {
        let config = StochasticExpertsConfig { n, horizon, first_batch, noise: noise.0, clip };
        Ok(PyStochasticExperts { inner: StochasticExperts::new(config, &seeds(seed)?).py_err()? })
    }

    /// The expert played this round.
    fn select(&self) -> usize {
        self.inner.current()
    }

    /// Records the round's loss vector (length n); True when it is the
    /// first the bounds policy clipped.
    fn observe(&mut self, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<bool> {
        let (shape, data) = row_major(&losses);
        super::arrays::expect_shape("losses", &shape, &[self.inner.config().n])?;
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(&data).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }

    /// Records many rounds' loss vectors ((rounds, n)); releases the GIL.
    fn observe_many(&mut self, py: Python<'_>, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<Vec<usize>> {
        let n = self.inner.config().n;
        let (shape, data) = row_major(&losses);
        if shape.len() != 2 || shape[1] != n {
            return Err(Error::invalid("losses", format!("expected shape (rounds, {n}), got {shape:?}"))).py_err();
        }
        let inner = &mut self.inner;
        let played = py.detach(|| {
            let mut played = Vec::with_capacity(shape[0]);
            for row in data.chunks_exact(n) {
                played.push(inner.current());
                inner.observe(row)?;
            }
            Ok::<_, Error>(played)
        });
        played.py_err()
    }

    /// `runs` independent selections on one batch of losses ((rounds, n)),
    /// fresh noise each: the released values, for privacy audits.
    fn _selection_runs<'py>(
        &mut self,
        py: Python<'py>,
        losses: PyReadonlyArrayDyn<'py, f64>,
        runs: usize,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let (_, data) = row_major(&losses);
        let inner = &mut self.inner;
        let out = py.detach(|| inner.selection_runs(&data, runs)).py_err()?;
        Ok(out.into_pyarray(py))
    }
}

/// Lazy multiplicative weights through a batched shrinking dartboard
/// (after Asi, Koren, Liu & Talwar 2024, L2P); built by `dpbandits.LazyPrivateExperts`.
#[pyclass(module = "dpbandits._core", name = "LazyExpertsEngine")]
pub struct PyLazyExperts {
    pub(crate) inner: LazyExperts,
}

engine_methods! {
    PyLazyExperts { inner: LazyExperts }, restore _restore_lazy_experts, shared [learner, secure, state],
    getters [switches: u64];

    #[new]
    #[pyo3(signature = (n, horizon, batch, eta, gamma, max_switches, *, clip=true, lattice=None, seed=None))]
    fn new(
        n: usize,
        horizon: u64,
        batch: u64,
        eta: f64,
        gamma: f64,
        max_switches: u64,
        clip: bool,
        lattice: Option<u32>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let config = LazyExpertsConfig { n, horizon, batch, eta, gamma, max_switches, clip, lattice };
        Ok(PyLazyExperts { inner: LazyExperts::new(config, &seeds(seed)?).py_err()? })
    }

    /// The expert played this round.
    fn select(&self) -> usize {
        self.inner.current()
    }

    /// Records the round's loss vector (length n); True when it is the
    /// first the bounds policy clipped.
    fn observe(&mut self, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<bool> {
        let (shape, data) = row_major(&losses);
        super::arrays::expect_shape("losses", &shape, &[self.inner.config().n])?;
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(&data).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }
}

/// The batched private shrinking dartboard (after Asi, Feldman, Koren &
/// Talwar 2023, oblivious adversaries); built by `dpbandits.PrivateDartboardExperts`.
#[pyclass(module = "dpbandits._core", name = "DartboardExpertsEngine")]
pub struct PyDartboardExperts {
    pub(crate) inner: DartboardExperts,
}

engine_methods! {
    PyDartboardExperts { inner: DartboardExperts }, restore _restore_dartboard_experts,
    shared [learner, secure, state], getters [switches: u64];

    #[new]
    #[pyo3(signature = (n, horizon, batch, eta, shift, max_switches, *, noise=Noise(NoiseSpec::Zero), clip=true,
                        seed=None))]
    fn new(
        n: usize,
        horizon: u64,
        batch: u64,
        eta: f64,
        shift: f64,
        max_switches: u64,
        noise: Noise,
        clip: bool,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let config = DartboardExpertsConfig { n, horizon, batch, eta, shift, max_switches, noise: noise.0, clip };
        Ok(PyDartboardExperts { inner: DartboardExperts::new(config, &seeds(seed)?).py_err()? })
    }

    /// The expert played this round.
    fn select(&self) -> usize {
        self.inner.current()
    }

    /// Records the round's loss vector (length n); True when it is the
    /// first the bounds policy clipped.
    fn observe(&mut self, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<bool> {
        let (shape, data) = row_major(&losses);
        super::arrays::expect_shape("losses", &shape, &[self.inner.config().n])?;
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(&data).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }

    /// `runs` switching tests of an expert with these batch losses (true:
    /// switch), fresh noise each: the released coins, for privacy audits.
    fn _switch_runs<'py>(
        &mut self,
        py: Python<'py>,
        losses: PyReadonlyArrayDyn<'py, f64>,
        runs: usize,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let (_, data) = row_major(&losses);
        let inner = &mut self.inner;
        let out = py.detach(|| inner.switch_runs(&data, runs)).py_err()?;
        Ok(out.into_pyarray(py))
    }

    /// `runs` draws from P ∝ exp(-eta L), L the sums of `losses`' rows
    /// ((rounds, n)), fresh randomness each: the released experts, for audits.
    fn _draw_runs<'py>(
        &mut self,
        py: Python<'py>,
        losses: PyReadonlyArrayDyn<'py, f64>,
        runs: usize,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let (_, data) = row_major(&losses);
        let inner = &mut self.inner;
        let out = py.detach(|| inner.draw_runs(&data, runs)).py_err()?;
        Ok(out.into_pyarray(py))
    }
}

/// Lazy exponential weights on the unit ball (after Asi, Koren, Liu &
/// Talwar 2024, L2P for OCO); built by `dpbandits.LazyPrivateOCO`.
#[pyclass(module = "dpbandits._core", name = "LazyBallEngine")]
pub struct PyLazyBall {
    pub(crate) inner: LazyBall,
}

engine_methods! {
    PyLazyBall { inner: LazyBall }, restore _restore_lazy_ball, shared [learner, secure, state],
    getters [switches: u64];

    /// `lattice`: (j, k), losses on 2^-j and points on 2^-k for exact
    /// draws; None: floating-point draws.
    #[new]
    #[pyo3(signature = (n, horizon, batch, eta, gamma, max_switches, *, clip=true, lattice=None, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        n: usize,
        horizon: u64,
        batch: u64,
        eta: f64,
        gamma: f64,
        max_switches: u64,
        clip: bool,
        lattice: Option<(u32, u32)>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let lattice = lattice.map(|(loss_bits, point_bits)| BallLattice { loss_bits, point_bits });
        let config = LazyBallConfig { n, horizon, batch, eta, gamma, max_switches, clip, lattice };
        Ok(PyLazyBall { inner: LazyBall::new(config, &seeds(seed)?).py_err()? })
    }

    /// The point played this round.
    fn decision<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.point().to_vec().into_pyarray(py)
    }

    /// Records the round's loss vector (length n, ||l||_2 <= 1); True when
    /// it is the first the bounds policy scaled into the ball.
    fn observe(&mut self, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<bool> {
        let (shape, data) = row_major(&losses);
        super::arrays::expect_shape("losses", &shape, &[self.inner.config().n])?;
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(&data).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }

    /// `runs` draws from p ∝ exp(-eta <L, x>) on the ball, (runs, n): the
    /// sampler's released points, for checks.
    fn _draw_runs<'py>(
        &mut self,
        py: Python<'py>,
        cumulative: PyReadonlyArrayDyn<'py, f64>,
        runs: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (_, data) = row_major(&cumulative);
        let n = self.inner.config().n;
        let inner = &mut self.inner;
        let out = py.detach(|| inner.draw_runs(&data, runs)).py_err()?;
        out.into_pyarray(py).reshape([runs, n])
    }
}

/// EXP3 behind the batched private conversion (Asi, Raman & Talwar 2025);
/// built by `dpbandits.BatchedPrivateEXP3`.
#[pyclass(module = "dpbandits._core", name = "BatchedExp3Engine")]
pub struct PyBatchedExp3 {
    pub(crate) inner: BatchedExp3,
}

engine_methods! {
    PyBatchedExp3 { inner: BatchedExp3 }, restore _restore_batched_exp3, shared [learner, secure, state];

    #[new]
    #[pyo3(signature = (k, horizon, batch, eta, gamma, *, noise=Noise(NoiseSpec::Zero), clip=true, seed=None))]
    fn new(
        k: usize,
        horizon: u64,
        batch: u64,
        eta: f64,
        gamma: f64,
        noise: Noise,
        clip: bool,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let config = BatchedExp3Config { k, horizon, batch, eta, gamma, noise: noise.0, clip };
        Ok(PyBatchedExp3 { inner: BatchedExp3::new(config, &seeds(seed)?).py_err()? })
    }

    /// The arm played this round (fixed within a batch).
    fn select(&self) -> usize {
        self.inner.current()
    }

    /// p = (1 - gamma) q + gamma / K.
    fn probabilities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.probabilities().to_vec().into_pyarray(py)
    }

    /// Records the loss of the played arm; True when it is the first the
    /// bounds policy clipped.
    fn observe(&mut self, arm: usize, loss: f64) -> PyResult<bool> {
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(arm, loss).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyStochasticExperts::register(m)?;
    PyLazyExperts::register(m)?;
    PyDartboardExperts::register(m)?;
    PyLazyBall::register(m)?;
    PyBatchedExp3::register(m)?;
    Ok(())
}
