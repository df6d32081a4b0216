//! Bindings for learner engines.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArrayDyn};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use super::arrays::{expect_shape, row_major};
use super::errors::IntoPy;
use super::mechanisms::{noise_spec, seeds};
use super::sim::PyLearnerFactory;
use crate::counter::FactorSpec;
use crate::env::DecisionSet;
use crate::error::Error;
use crate::policy::linucb::StatisticsConfig;
use crate::policy::{BoundsPolicy, InputBounds, Learner, LinUcb, LinUcbConfig, Radius};

/// A (k, d) float64 array as a decision set.
pub fn decision_set(actions: &PyReadonlyArrayDyn<'_, f64>, d: usize) -> PyResult<DecisionSet> {
    let (shape, features) = row_major(actions);
    let k = shape.first().copied().unwrap_or(0);
    expect_shape("actions", &shape, &[k, d])?;
    Ok(DecisionSet { k, d, features })
}

/// LinUCB engine (Shariff & Sheffet Alg. 1); built by `dpbandits.learners`.
#[pyclass(module = "dpbandits._core", name = "LinUcbEngine")]
pub struct PyLinUcb {
    pub(crate) inner: LinUcb,
}

#[pymethods]
impl PyLinUcb {
    #[new]
    #[pyo3(signature = (d, horizon, *, regularizer=None, refactor_every=64, noise_kind=None, noise_params=Vec::new(), shift=0.0, pad_to=0,
                        beta_noise_sd=1.0, beta_log_offset=0.0, beta_offset=0.0, beta_constant=None, l=1.0, b_tilde=1.0, clip=true, seed=None,
                        counter=None, theta=Vec::new(), omega=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        d: usize,
        horizon: u64,
        regularizer: Option<f64>,
        refactor_every: u64,
        noise_kind: Option<&str>,
        noise_params: Vec<f64>,
        shift: f64,
        pad_to: u32,
        beta_noise_sd: f64,
        beta_log_offset: f64,
        beta_offset: f64,
        beta_constant: Option<f64>,
        l: f64,
        b_tilde: f64,
        clip: bool,
        seed: Option<u64>,
        counter: Option<&str>,
        theta: Vec<f64>,
        omega: Vec<f64>,
    ) -> PyResult<Self> {
        let statistics = match (noise_kind, regularizer) {
            // A factorization counter ("sqrt", "blt" with theta, omega) instead of the tree.
            (Some(kind), None) if counter.is_some_and(|c| c != "binary") => {
                let factor = super::mechanisms::factorization(counter.unwrap_or_default(), theta, omega)?;
                if pad_to != 0 {
                    return Err(Error::invalid("pad_to", "only the binary tree pads its releases")).py_err();
                }
                StatisticsConfig::Factorized {
                    noise: noise_spec(kind, &noise_params)?,
                    shift,
                    factor: FactorSpec::new(&factor).py_err()?,
                }
            }
            (Some(kind), None) => StatisticsConfig::Tree { noise: noise_spec(kind, &noise_params)?, shift, pad_to },
            (None, Some(regularizer)) => StatisticsConfig::Exact { regularizer, refactor_every },
            _ => {
                return Err(Error::invalid(
                    "noise_kind",
                    "give exactly one of `noise_kind` (tree statistics) and `regularizer` (exact)",
                ))
                .py_err()
            }
        };
        let radius = match beta_constant {
            Some(beta) => Radius::Constant(beta),
            None => Radius::LogDet { noise_sd: beta_noise_sd, log_offset: beta_log_offset, offset: beta_offset },
        };
        let bounds = InputBounds { l, b_tilde, policy: if clip { BoundsPolicy::Clip } else { BoundsPolicy::Error } };
        let config = LinUcbConfig { d, horizon, statistics, radius, bounds };
        Ok(PyLinUcb { inner: LinUcb::new(config, &seeds(seed)?).py_err()? })
    }

    /// Index of the action (row of `actions`) with the largest UCB.
    fn select(&mut self, actions: PyReadonlyArrayDyn<'_, f64>) -> PyResult<usize> {
        let set = decision_set(&actions, self.inner.config().d)?;
        self.inner.select(&set).py_err()
    }

    /// UCB_t of every row of `actions`.
    fn ucb<'py>(
        &mut self,
        py: Python<'py>,
        actions: PyReadonlyArrayDyn<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let set = decision_set(&actions, self.inner.config().d)?;
        Ok(self.inner.ucb(&set).py_err()?.into_pyarray(py))
    }

    /// Records the played features `x` and its reward.
    fn observe(&mut self, x: PyReadonlyArrayDyn<'_, f64>, reward: f64) -> PyResult<()> {
        let (shape, data) = row_major(&x);
        expect_shape("x", &shape, &[self.inner.config().d])?;
        self.inner.observe(&data, reward).py_err()
    }

    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }

    /// The configuration, for the simulation loop (one engine per replicate).
    fn _factory(&self) -> PyLearnerFactory {
        PyLearnerFactory::with_entropy(*self.inner.config(), self.inner.os_entropy())
    }

    #[getter]
    fn psd_failures(&self) -> u64 {
        self.inner.psd_failures()
    }

    #[getter]
    fn d(&self) -> usize {
        self.inner.config().d
    }

    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.config().horizon
    }

    /// Every privacy noise draw from the operating system from now on
    /// (secure mode; before the first round).
    fn use_os_entropy(&mut self) -> PyResult<()> {
        self.inner.use_os_entropy().py_err()
    }

    /// Whether privacy noise comes from the operating system.
    #[getter]
    fn os_entropy(&self) -> bool {
        self.inner.os_entropy()
    }
    /// Draws all future noise from a new root (`None`: operating-system
    /// entropy). Past releases are unchanged.
    #[pyo3(signature = (seed=None))]
    fn reseed(&mut self, seed: Option<u64>) -> PyResult<()> {
        self.inner.reseed(&seeds(seed)?);
        Ok(())
    }

    /// The configuration this engine was built with, as plain values
    /// (`as_json`: their JSON text); see `dpbandits.checkpoint`; read-only.
    #[pyo3(signature = (as_json=false))]
    fn noise_parameters<'py>(&self, py: Python<'py>, as_json: bool) -> PyResult<Bound<'py, PyAny>> {
        super::config_values(py, self.inner.config(), as_json)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyLinUcb { inner: LinUcb::from_bytes(state).py_err()? })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_linucb")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `LinUcbEngine`.
#[pyfunction]
fn _restore_linucb(state: &[u8]) -> PyResult<PyLinUcb> {
    PyLinUcb::from_bytes(state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLinUcb>()?;
    m.add_function(wrap_pyfunction!(_restore_linucb, m)?)?;
    Ok(())
}
