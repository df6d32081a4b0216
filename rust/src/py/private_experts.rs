//! Bindings for the private experts learners past Agarwal & Singh
//! (`dpbandits.learners.private_experts`).

use numpy::{IntoPyArray, PyArray1, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use super::arrays::row_major;
use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::error::Error;
use crate::noise::NoiseSpec;
use crate::policy::{StochasticExperts, StochasticExpertsConfig};

/// The doubling-batch learner for stochastic losses (Asi, Feldman, Koren &
/// Talwar 2023, Sec. 3); built by `dpbandits.PrivateStochasticExperts`.
#[pyclass(module = "dpbandits._core", name = "StochasticExpertsEngine")]
pub struct PyStochasticExperts {
    inner: StochasticExperts,
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

    /// Records the round's loss vector (length n).
    fn observe(&mut self, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<()> {
        let (shape, data) = row_major(&losses);
        super::arrays::expect_shape("losses", &shape, &[self.inner.config().n])?;
        self.inner.observe(&data).py_err()
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyStochasticExperts::register(m)?;
    Ok(())
}
