//! Bindings for the phased K-armed engine (DP-KLUCB, DP-IMED, AdaP, AdaC,
//! DP-SE, phased private Thompson sampling, KL-UCB); built by
//! `dpbandits.learners.phased_mab`.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::sim::PyLearnerFactory;
use crate::error::Error;
use crate::policy::mab::{RewardPolicy, RewardRange};
use crate::policy::phased_mab::{NoiseSampler, PhaseSchedule, PhasedIndex, PhasedMab, PhasedMabConfig, ReleaseNoise};

fn reward_policy(name: &str) -> PyResult<RewardPolicy> {
    match name {
        "clip" => Ok(RewardPolicy::Clip),
        "error" => Ok(RewardPolicy::Error),
        "unchecked" => Ok(RewardPolicy::Unchecked),
        _ => Err(Error::invalid("bounds", format!("must be \"clip\", \"error\" or \"unchecked\", got {name:?}")))
            .py_err(),
    }
}

/// The plain-number configuration from the keyword arguments.
#[allow(clippy::too_many_arguments)]
fn build_config(
    k: usize,
    horizon: u64,
    index: &str,
    divergence_epsilon: Option<f64>,
    explore: f64,
    linear: f64,
    root: f64,
    reward_var: f64,
    noise_var: f64,
    alpha: f64,
    forget: bool,
    min_len: Option<u64>,
    epochs: Option<(Vec<u64>, Vec<f64>)>,
    noise: &str,
    noise_param: f64,
    lattice_exponent: Option<i32>,
    secure: bool,
    commit: bool,
    lo: f64,
    hi: f64,
    bounds: &str,
) -> PyResult<PhasedMabConfig> {
    let index = match index {
        "optimistic_kl" | "optimistic" => {
            PhasedIndex::Optimistic { kl: index == "optimistic_kl", divergence_epsilon, explore, linear, root }
        }
        "imed" => PhasedIndex::Imed { divergence_epsilon },
        "thompson" => PhasedIndex::Thompson { reward_var, noise_var },
        "elimination" => PhasedIndex::Elimination,
        _ => {
            return Err(Error::invalid(
                "index",
                format!("must be optimistic_kl, optimistic, imed, thompson or elimination, got {index:?}"),
            ))
            .py_err()
        }
    };
    let schedule = match epochs {
        Some((pulls, gaps)) => PhaseSchedule::Epochs { pulls, gaps },
        None => match min_len {
            Some(min_len) => PhaseSchedule::Adaptive { alpha, min_len, forget },
            None => PhaseSchedule::Geometric { alpha, forget },
        },
    };
    let noise = match noise {
        "zero" => ReleaseNoise::Zero,
        "laplace" => ReleaseNoise::Laplace { scale: noise_param },
        "gaussian" => ReleaseNoise::Gaussian { sigma: noise_param },
        _ => return Err(Error::invalid("noise", format!("must be zero, laplace or gaussian, got {noise:?}"))).py_err(),
    };
    let sampler = match lattice_exponent {
        Some(exponent) => NoiseSampler::Lattice { exponent },
        None => NoiseSampler::Float,
    };
    Ok(PhasedMabConfig {
        k,
        horizon,
        index,
        schedule,
        noise,
        sampler,
        secure,
        commit,
        rewards: RewardRange { lo, hi, policy: reward_policy(bounds)? },
    })
}

/// Phased K-armed engine; built by `dpbandits.learners.phased_mab`.
#[pyclass(module = "dpbandits._core", name = "PhasedMabEngine")]
pub struct PyPhasedMab {
    inner: PhasedMab,
}

#[pymethods]
impl PyPhasedMab {
    #[new]
    #[pyo3(signature = (k, horizon, *, index="optimistic_kl", divergence_epsilon=None, explore=1.0, linear=0.0,
                        root=0.0, reward_var=1.0, noise_var=0.0, alpha=2.0, forget=false, min_len=None, epochs=None,
                        noise="zero", noise_param=0.0, lattice_exponent=None, secure=false, commit=true, lo=0.0, hi=1.0,
                        bounds="clip", seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        k: usize,
        horizon: u64,
        index: &str,
        divergence_epsilon: Option<f64>,
        explore: f64,
        linear: f64,
        root: f64,
        reward_var: f64,
        noise_var: f64,
        alpha: f64,
        forget: bool,
        min_len: Option<u64>,
        epochs: Option<(Vec<u64>, Vec<f64>)>,
        noise: &str,
        noise_param: f64,
        lattice_exponent: Option<i32>,
        secure: bool,
        commit: bool,
        lo: f64,
        hi: f64,
        bounds: &str,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let config = build_config(
            k,
            horizon,
            index,
            divergence_epsilon,
            explore,
            linear,
            root,
            reward_var,
            noise_var,
            alpha,
            forget,
            min_len,
            epochs,
            noise,
            noise_param,
            lattice_exponent,
            secure,
            commit,
            lo,
            hi,
            bounds,
        )?;
        Ok(PyPhasedMab { inner: PhasedMab::new(config, &seeds(seed)?).py_err()? })
    }

    /// The arm to pull this round.
    fn select(&mut self) -> PyResult<usize> {
        self.inner.select_arm().py_err()
    }

    /// Records the reward of pulling `arm`.
    fn observe(&mut self, arm: usize, reward: f64) -> PyResult<()> {
        self.inner.observe(arm, reward).py_err()
    }

    /// Sum of each arm's released phase sums (rewards normalised to [0, 1]).
    fn sums<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.released_sums().to_vec().into_pyarray(py)
    }

    /// Pulls of each arm in released phases.
    fn pulls<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.pulls().to_vec().into_pyarray(py)
    }

    /// Every release: rows (arm, first round, last round, length, released value).
    fn releases<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = self.inner.releases();
        let flat: Vec<f64> =
            rows.iter().flat_map(|r| [r.arm as f64, r.start as f64, r.end as f64, r.len as f64, r.value]).collect();
        flat.into_pyarray(py).reshape([rows.len(), 5])
    }

    /// Tie-break rank of each arm (lower wins a tie).
    fn tie_ranks<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.inner.tie_ranks().to_vec().into_pyarray(py)
    }

    /// Arms still active (DP-SE).
    fn active<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        self.inner.active().to_vec().into_pyarray(py)
    }

    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }

    #[getter]
    fn k(&self) -> usize {
        self.inner.config().k
    }

    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.config().horizon
    }

    /// The configuration, for the simulation loop (one engine per replicate).
    fn _factory(&self) -> PyLearnerFactory {
        PyLearnerFactory::new(self.inner.config().clone())
    }

    /// Audit runs: `count` fresh engines fed `rewards` (round i gets
    /// `rewards[i]`); the released value of the phase containing `round`.
    fn _audit_runs<'py>(
        &self,
        py: Python<'py>,
        rewards: Vec<f64>,
        round: usize,
        count: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let config = self.inner.config().clone();
        let out = py.detach(|| PhasedMab::audit_runs(&config, &rewards, round, count, seed)).py_err()?;
        Ok(out.into_pyarray(py))
    }

    /// Draws all future noise from a new root (`None`: operating-system entropy).
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
        Ok(PyPhasedMab { inner: PhasedMab::from_bytes(state).py_err()? })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_phased_mab")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `PhasedMabEngine`.
#[pyfunction]
fn _restore_phased_mab(state: &[u8]) -> PyResult<PyPhasedMab> {
    PyPhasedMab::from_bytes(state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPhasedMab>()?;
    m.add_function(wrap_pyfunction!(_restore_phased_mab, m)?)?;
    Ok(())
}
