//! Bindings for the logistic contextual learners: the recursive-Newton
//! UCB / Thompson engine (`crate::policy::logistic`) and the batched
//! information-weighted private engine (`crate::policy::reweighted_glm`);
//! built by `dpbandits.learners.logistic`.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use super::errors::IntoPy;
use super::learners::SelectRows;
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::env::DecisionRows;
use crate::noise::NoiseSpec;
use crate::policy::first_argmax;
use crate::policy::logistic::{GlmRule, OnlineLogistic, OnlineLogisticConfig};
use crate::policy::reweighted_glm::{ReweightedGlm, ReweightedGlmConfig, TrustModel};

impl SelectRows for OnlineLogistic {
    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize> {
        Ok(first_argmax(self.scores(set)?))
    }
}

impl SelectRows for ReweightedGlm {
    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize> {
        let best = first_argmax(crate::policy::UcbLearner::scores(self, set)?);
        Ok(self.pre_release_choice(set.k).unwrap_or(best))
    }
}

/// Recursive-Newton logistic learner (UCB-GLM index or Laplace Thompson sampling).
#[pyclass(module = "dpbandits._core", name = "OnlineLogisticEngine")]
pub struct PyOnlineLogistic {
    inner: OnlineLogistic,
}

engine_methods! {
    PyOnlineLogistic { inner: OnlineLogistic }, restore _restore_online_logistic,
    shared [contextual, learner, seeded, state], getters [beta: f64];

    #[new]
    #[pyo3(signature = (d, horizon, *, rule, ridge=1.0, width=1.0, log_inv_alpha=0.0, beta_scale=1.0, l=1.0,
                        clip=true, seed=None))]
    fn new(
        d: usize,
        horizon: u64,
        rule: &str,
        ridge: f64,
        width: f64,
        log_inv_alpha: f64,
        beta_scale: f64,
        l: f64,
        clip: bool,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let rule = match rule {
            "ucb" => GlmRule::Ucb,
            "thompson" => GlmRule::Thompson,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "invalid argument `rule`: must be 'ucb' or 'thompson', got {other:?}"
                )))
            }
        };
        let config = OnlineLogisticConfig { d, horizon, rule, ridge, width, log_inv_alpha, beta_scale, l, clip };
        Ok(PyOnlineLogistic { inner: OnlineLogistic::new(config, &seeds(seed)?).py_err()? })
    }

    /// Scores of every row of `actions` (UCB index, or a fresh posterior draw's <x, theta~>).
    fn scores<'py>(
        &mut self,
        py: Python<'py>,
        actions: numpy::PyReadonlyArrayDyn<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let d = self.inner.config().d;
        let (shape, data) = super::arrays::row_major(&actions);
        if shape.len() != 2 || shape[1] != d || !crate::error::all_finite(&data) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "invalid argument `decision_set`: must be a finite (k, {d}) array"
            )));
        }
        let set = DecisionRows { k: shape[0], d, features: &data };
        Ok(self.inner.scores(set).py_err()?.to_vec().into_pyarray(py))
    }

    /// The current estimate theta.
    fn theta<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.theta().to_vec().into_pyarray(py)
    }
}

/// Batched information-weighted logistic UCB (joint or local DP, or noise-free).
#[pyclass(module = "dpbandits._core", name = "ReweightedGlmEngine")]
pub struct PyReweightedGlm {
    inner: ReweightedGlm,
}

engine_methods! {
    PyReweightedGlm { inner: ReweightedGlm }, restore _restore_reweighted_glm,
    shared [contextual, ucb, learner, secure, state],
    getters [releases: u64, psd_failures: u64, epoch_length: u64, gamma: f64, beta: f64];

    #[new]
    #[pyo3(signature = (d, horizon, *, first_epoch, leverage, model="joint", noise=None, op_bound=0.0, chi_bound=0.0,
                        ridge=1.0, reward_chi=1.0, s=1.0, beta_scale=1.0, l=1.0, clip=true, seed=None))]
    fn new(
        d: usize,
        horizon: u64,
        first_epoch: u64,
        leverage: f64,
        model: &str,
        noise: Option<Noise>,
        op_bound: f64,
        chi_bound: f64,
        ridge: f64,
        reward_chi: f64,
        s: f64,
        beta_scale: f64,
        l: f64,
        clip: bool,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let model = match model {
            "joint" => TrustModel::Joint,
            "local" => TrustModel::Local,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "invalid argument `model`: must be 'joint' or 'local', got {other:?}"
                )))
            }
        };
        let noise = noise.map_or(NoiseSpec::Zero, |n| n.0);
        let config = ReweightedGlmConfig {
            d, horizon, first_epoch, leverage, model, noise, op_bound, chi_bound, ridge, reward_chi, s, beta_scale, l,
            clip,
        };
        Ok(PyReweightedGlm { inner: ReweightedGlm::new(config, &seeds(seed)?).py_err()? })
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
    PyOnlineLogistic::register(m)?;
    PyReweightedGlm::register(m)?;
    Ok(())
}
