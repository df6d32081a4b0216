//! Bindings for the K-armed engines, the K-armed environments and the
//! Mishra–Thakurta contextual engine.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use super::arrays::{expect_shape, row_major};
use super::errors::IntoPy;
use super::learners::decision_set;
use super::mechanisms::{noise_spec, seeds};
use super::sim::{PyEnvironmentFactory, PyLearnerFactory};
use crate::counter::FactorSpec;
use crate::env::{ArmReward, Environment, Feedback, KArmedBandit, KArmedConfig};
use crate::error::Error;
use crate::policy::mab::Phase;
use crate::policy::{
    BoundsPolicy, ContextualRule, InputBounds, Learner, Mab, MabConfig, MabIndex, MabStatistics, MtContextual,
    MtContextualConfig, Phases, RewardPolicy, RewardRange,
};

/// (gaps, batch sizes, batch noise scales, random pulls) of the phases.
type PhaseLists = (Vec<f64>, Vec<u64>, Vec<f64>, Vec<u64>);

/// A released (A~, b~) pair as arrays.
type Released<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<f64>>);

fn reward_policy(name: &str) -> PyResult<RewardPolicy> {
    match name {
        "clip" => Ok(RewardPolicy::Clip),
        "error" => Ok(RewardPolicy::Error),
        "unchecked" => Ok(RewardPolicy::Unchecked),
        _ => Err(Error::invalid("bounds", format!("must be \"clip\", \"error\" or \"unchecked\", got {name:?}")))
            .py_err(),
    }
}

/// K-armed engine (UCB1, private UCB, Thompson sampling); built by `dpbandits.learners.mab`.
#[pyclass(module = "dpbandits._core", name = "MabEngine")]
pub struct PyMab {
    inner: Mab,
}

#[pymethods]
impl PyMab {
    #[new]
    #[pyo3(signature = (k, horizon, *, index="ucb", noise_bound=0.0, noise_kind=None, noise_params=Vec::new(),
                        lo=0.0, hi=1.0, bounds="clip", phases=None, seed=None, phase_lattice_exponents=Vec::new(),
                        counter=None, theta=Vec::new(), omega=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        k: usize,
        horizon: u64,
        index: &str,
        noise_bound: f64,
        noise_kind: Option<&str>,
        noise_params: Vec<f64>,
        lo: f64,
        hi: f64,
        bounds: &str,
        phases: Option<PhaseLists>,
        seed: Option<u64>,
        phase_lattice_exponents: Vec<i32>,
        counter: Option<&str>,
        theta: Vec<f64>,
        omega: Vec<f64>,
    ) -> PyResult<Self> {
        let index = match index {
            "ucb" => MabIndex::Ucb { noise_bound },
            "empirical" => MabIndex::Empirical,
            "thompson_beta" => MabIndex::ThompsonBeta,
            "thompson_gaussian" => MabIndex::ThompsonGaussian,
            _ => {
                return Err(Error::invalid(
                    "index",
                    format!("must be ucb, empirical, thompson_beta or thompson_gaussian, got {index:?}"),
                ))
                .py_err()
            }
        };
        let statistics = match noise_kind {
            None => MabStatistics::Exact,
            Some(kind) => match counter {
                None | Some("binary") => MabStatistics::Tree { noise: noise_spec(kind, &noise_params)? },
                // Another counter per arm (see `dpbandits.privacy.factorization`).
                Some(c) => MabStatistics::Factorized {
                    noise: noise_spec(kind, &noise_params)?,
                    factor: FactorSpec::new(&super::mechanisms::factorization(c, theta, omega)?).py_err()?,
                },
            },
        };
        let phases = phases.map(|(gaps, batch_sizes, batch_scales, random_pulls)| Phases {
            gaps,
            batch_sizes,
            batch_scales,
            random_pulls,
            lattice_exponents: phase_lattice_exponents,
        });
        let config = MabConfig {
            k,
            horizon,
            statistics,
            index,
            rewards: RewardRange { lo, hi, policy: reward_policy(bounds)? },
            phases,
        };
        Ok(PyMab { inner: Mab::new(config, &seeds(seed)?).py_err()? })
    }

    /// The arm to pull this round.
    fn select(&mut self) -> PyResult<usize> {
        self.inner.select_arm().py_err()
    }

    /// Records the reward of pulling `arm`.
    fn observe(&mut self, arm: usize, reward: f64) -> PyResult<()> {
        self.inner.observe(arm, reward).py_err()
    }

    /// The per-arm reward sums the index reads (released ones when private).
    fn sums<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.sums().into_pyarray(py)
    }

    /// Pulls of each arm counted by the index statistics.
    fn pulls<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.pulls().to_vec().into_pyarray(py)
    }

    /// Released noisy batch means of the gap-estimation phase (batches x k).
    fn released_batch_means<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = self.inner.released_batch_means();
        let k = self.inner.config().k;
        let flat: Vec<f64> = rows.iter().flatten().copied().collect();
        flat.into_pyarray(py).reshape([rows.len(), k])
    }

    /// "gap", "random" or "index".
    #[getter]
    fn phase(&self) -> &'static str {
        match self.inner.phase() {
            Phase::Gap { .. } => "gap",
            Phase::Random { .. } => "random",
            Phase::Index => "index",
        }
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
        PyLearnerFactory::with_entropy(self.inner.config().clone(), self.inner.os_entropy())
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
        Ok(PyMab { inner: Mab::from_bytes(state).py_err()? })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_mab")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `MabEngine`.
#[pyfunction]
fn _restore_mab(state: &[u8]) -> PyResult<PyMab> {
    PyMab::from_bytes(state)
}

/// Mishra & Thakurta Alg. 3 / Alg. 4 engine; built by `dpbandits.learners.mishra_thakurta`.
#[pyclass(module = "dpbandits._core", name = "MtContextualEngine")]
pub struct PyMtContextual {
    inner: MtContextual,
}

#[pymethods]
impl PyMtContextual {
    #[new]
    #[pyo3(signature = (d, horizon, *, rule="ucb", alpha=1.0, noise_kind="zero", noise_a=Vec::new(), noise_b=Vec::new(),
                        l=1.0, b_tilde=1.0, clip=true, seed=None, counter=None, theta=Vec::new(), omega=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        d: usize,
        horizon: u64,
        rule: &str,
        alpha: f64,
        noise_kind: &str,
        noise_a: Vec<f64>,
        noise_b: Vec<f64>,
        l: f64,
        b_tilde: f64,
        clip: bool,
        seed: Option<u64>,
        counter: Option<&str>,
        theta: Vec<f64>,
        omega: Vec<f64>,
    ) -> PyResult<Self> {
        let counter = match counter {
            None | Some("binary") => None,
            Some(c) => Some(FactorSpec::new(&super::mechanisms::factorization(c, theta, omega)?).py_err()?),
        };
        let rule = match rule {
            "ucb" => ContextualRule::Ucb { alpha },
            "thompson" => ContextualRule::Thompson { alpha },
            _ => return Err(Error::invalid("rule", format!("must be \"ucb\" or \"thompson\", got {rule:?}"))).py_err(),
        };
        let bounds = InputBounds { l, b_tilde, policy: if clip { BoundsPolicy::Clip } else { BoundsPolicy::Error } };
        let config = MtContextualConfig {
            d,
            horizon,
            rule,
            noise_a: noise_spec(noise_kind, &noise_a)?,
            noise_b: noise_spec(noise_kind, &noise_b)?,
            bounds,
            counter,
        };
        Ok(PyMtContextual { inner: MtContextual::new(config, &seeds(seed)?).py_err()? })
    }

    /// Index of the action (row of `actions`) to play.
    fn select(&mut self, actions: PyReadonlyArrayDyn<'_, f64>) -> PyResult<usize> {
        let set = decision_set(&actions, self.inner.config().d)?;
        self.inner.select(&set).py_err()
    }

    /// Records the played features `x` and its reward.
    fn observe(&mut self, x: PyReadonlyArrayDyn<'_, f64>, reward: f64) -> PyResult<()> {
        let (shape, data) = row_major(&x);
        expect_shape("x", &shape, &[self.inner.config().d])?;
        self.inner.observe(&data, reward).py_err()
    }

    /// The released (A~, b~) the next selection reads.
    fn released<'py>(&self, py: Python<'py>) -> PyResult<Released<'py>> {
        let d = self.inner.config().d;
        let (a, b) = self.inner.released();
        Ok((a.into_pyarray(py).reshape([d, d])?, b.into_pyarray(py)))
    }

    #[getter]
    fn fallbacks(&self) -> u64 {
        self.inner.fallbacks()
    }

    #[getter]
    fn last_fallback(&self) -> bool {
        self.inner.last_fallback()
    }

    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }

    #[getter]
    fn d(&self) -> usize {
        self.inner.config().d
    }

    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.config().horizon
    }

    /// The configuration, for the simulation loop.
    fn _factory(&self) -> PyLearnerFactory {
        PyLearnerFactory::with_entropy(*self.inner.config(), self.inner.os_entropy())
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
        Ok(PyMtContextual { inner: MtContextual::from_bytes(state).py_err()? })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_mt_contextual")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `MtContextualEngine`.
#[pyfunction]
fn _restore_mt_contextual(state: &[u8]) -> PyResult<PyMtContextual> {
    PyMtContextual::from_bytes(state)
}

/// Bernoulli or Gaussian K-armed bandit, usable arm by arm from Python.
#[pyclass(module = "dpbandits._core", name = "KArmedBanditEngine")]
pub struct PyKArmedBandit {
    env: KArmedBandit,
}

#[pymethods]
impl PyKArmedBandit {
    #[new]
    #[pyo3(signature = (means, sigma=None, seed=None))]
    fn new(means: Vec<f64>, sigma: Option<f64>, seed: Option<u64>) -> PyResult<Self> {
        let reward = match sigma {
            None => ArmReward::Bernoulli,
            Some(sigma) => ArmReward::Gaussian { sigma },
        };
        let env = KArmedBandit::new(KArmedConfig { means, reward }, &seeds(seed)?).py_err()?;
        Ok(PyKArmedBandit { env })
    }

    /// Realized reward of pulling `arm` (one round).
    fn pull(&mut self, arm: usize) -> PyResult<f64> {
        match self.env.feedback(arm).py_err()? {
            Feedback::Reward(y) => Ok(y),
            Feedback::Losses(_) => unreachable!("bandit environment"),
        }
    }

    /// The arms' means.
    fn means<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.config().means.clone().into_pyarray(py)
    }

    /// The configuration, for the simulation loop.
    fn _factory(&self) -> PyEnvironmentFactory {
        PyEnvironmentFactory::new(self.env.config().clone())
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.env.to_bytes())
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyKArmedBandit { env: KArmedBandit::from_bytes(state).py_err()? })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_k_armed_bandit")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `KArmedBanditEngine`.
#[pyfunction]
fn _restore_k_armed_bandit(state: &[u8]) -> PyResult<PyKArmedBandit> {
    PyKArmedBandit::from_bytes(state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMab>()?;
    m.add_function(wrap_pyfunction!(_restore_mab, m)?)?;
    m.add_class::<PyMtContextual>()?;
    m.add_function(wrap_pyfunction!(_restore_mt_contextual, m)?)?;
    m.add_class::<PyKArmedBandit>()?;
    m.add_function(wrap_pyfunction!(_restore_k_armed_bandit, m)?)?;
    Ok(())
}
