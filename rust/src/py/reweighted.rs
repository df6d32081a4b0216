//! Bindings for the batched information-weighted LinUCB engine
//! (`crate::policy::reweighted_linucb`); built by
//! `dpbandits.learners.reweighted`.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use super::errors::IntoPy;
use super::learners::SelectRows;
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::env::DecisionRows;
use crate::noise::NoiseSpec;
use crate::policy::first_argmax;
use crate::policy::reweighted_linucb::{ReweightedLinUcb, ReweightedLinUcbConfig};

impl SelectRows for ReweightedLinUcb {
    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize> {
        let best = first_argmax(self.scores(set)?);
        Ok(self.pre_release_choice(set.k).unwrap_or(best))
    }
}

/// Batched information-weighted LinUCB (joint DP through one release per epoch).
#[pyclass(module = "dpbandits._core", name = "ReweightedLinUcbEngine")]
pub struct PyReweightedLinUcb {
    inner: ReweightedLinUcb,
}

engine_methods! {
    PyReweightedLinUcb { inner: ReweightedLinUcb }, restore _restore_reweighted_linucb,
    shared [contextual, ucb, learner, secure, state],
    getters [releases: u64, psd_failures: u64, epoch_length: u64, gamma: f64, beta: f64];

    #[new]
    #[pyo3(signature = (d, horizon, *, first_epoch, leverage, noise=None, op_bound=0.0, chi_bound=0.0, ridge=1.0,
                        reward_chi=1.0, s=1.0, beta_scale=1.0, l=1.0, b=1.0, clip=true, seed=None))]
    fn new(
        d: usize,
        horizon: u64,
        first_epoch: u64,
        leverage: f64,
        noise: Option<Noise>,
        op_bound: f64,
        chi_bound: f64,
        ridge: f64,
        reward_chi: f64,
        s: f64,
        beta_scale: f64,
        l: f64,
        b: f64,
        clip: bool,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let noise = noise.map_or(NoiseSpec::Zero, |n| n.0);
        let config = ReweightedLinUcbConfig {
            d, horizon, first_epoch, leverage, noise, op_bound, chi_bound, ridge, reward_chi, s, beta_scale, l, b, clip,
        };
        Ok(PyReweightedLinUcb { inner: ReweightedLinUcb::new(config, &seeds(seed)?).py_err()? })
    }

    /// The policy the next selection follows, from released values only.
    fn policy(&mut self) -> super::linear_policy::PyLinearPolicy {
        super::linear_policy::PyLinearPolicy { inner: self.inner.policy() }
    }

    /// The released estimate theta_k of the current epoch.
    fn theta<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.theta().to_vec().into_pyarray(py)
    }

    /// `count` releases of the current epoch completed by the rows `xs`
    /// (n, d) and rewards `ys` (n,), the noise stream advancing (audits).
    fn _release_runs<'py>(
        &mut self,
        py: Python<'py>,
        xs: numpy::PyReadonlyArrayDyn<'py, f64>,
        ys: numpy::PyReadonlyArrayDyn<'py, f64>,
        count: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (_, x) = super::arrays::row_major(&xs);
        let (_, y) = super::arrays::row_major(&ys);
        let inner = &mut self.inner;
        let out = py.detach(|| inner.release_runs(&x, &y, count)).py_err()?;
        Ok(out.into_pyarray(py))
    }

    /// The last released statistic (empty before the first release).
    fn last_release<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.last_release().to_vec().into_pyarray(py)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyReweightedLinUcb::register(m)?;
    Ok(())
}
