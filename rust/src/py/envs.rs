//! Bindings for built-in environments.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use super::errors::{unknown, IntoPy};
use super::mechanisms::seeds;
use super::sim::PyEnvironmentFactory;
use crate::env::{
    DecisionSet, Environment, LogisticContextualConfig, LogisticContextualEnv, RewardModel, ShariffSheffetConfig,
    ShariffSheffetEnv,
};
use crate::error::Error;

pub fn reward_model(name: &str) -> PyResult<RewardModel> {
    match name {
        "pm1" => Ok(RewardModel::PlusMinusOne),
        "gaussian" => Ok(RewardModel::Gaussian),
        _ => unknown("reward", r#""pm1" or "gaussian""#, name),
    }
}

/// Shariff & Sheffet App. D environment, usable round by round from Python.
#[pyclass(module = "dpbandits._core", name = "ShariffSheffetEnvEngine")]
pub struct PyShariffSheffetEnv {
    env: ShariffSheffetEnv,
    set: DecisionSet,
    t: u64,
}

engine_methods! {
    PyShariffSheffetEnv { env: ShariffSheffetEnv }, restore _restore_shariff_sheffet_env, shared [rounds, pickle];

    #[new]
    #[pyo3(signature = (d, k, gap, optimal_reward, reward, seed=None))]
    fn new(d: usize, k: usize, gap: f64, optimal_reward: f64, reward: &str, seed: Option<u64>) -> PyResult<Self> {
        let config = ShariffSheffetConfig { d, k, gap, optimal_reward, reward: reward_model(reward)? };
        let env = ShariffSheffetEnv::new(d, k, gap, optimal_reward, config.reward, &seeds(seed)?).py_err()?;
        Ok(PyShariffSheffetEnv { env, set: DecisionSet::zeros(k, d), t: 0 })
    }

    /// The configuration, for the simulation loop (one instance per replicate).
    fn _factory(&self) -> PyEnvironmentFactory {
        PyEnvironmentFactory::new(self.env.config())
    }

    /// Mean rewards of the current round's actions.
    fn mean_rewards<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.means().to_vec().into_pyarray(py)
    }

    /// The hidden parameter theta*.
    fn theta<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.theta().to_vec().into_pyarray(py)
    }
}

/// The round, the current decision set and the generators, so that a
/// restored environment continues identically.
impl super::Snapshot for PyShariffSheffetEnv {
    fn snapshot(&self) -> Vec<u8> {
        crate::state::encode(&(self.t, &self.set.features, self.env.to_bytes()))
    }

    fn restore(state: &[u8]) -> crate::Result<Self> {
        let (t, features, env): (u64, Vec<f64>, Vec<u8>) = crate::state::decode(state)?;
        let env = ShariffSheffetEnv::from_bytes(&env)?;
        let (d, k) = (env.dim(), env.num_actions());
        if features.len() != d * k {
            return Err(Error::Decode("inconsistent environment state".into()));
        }
        Ok(PyShariffSheffetEnv { env, set: DecisionSet { k, d, features }, t })
    }
}

/// The logistic-reward contextual environment, usable round by round from Python.
#[pyclass(module = "dpbandits._core", name = "LogisticContextualEnvEngine")]
pub struct PyLogisticContextualEnv {
    env: LogisticContextualEnv,
    set: DecisionSet,
    t: u64,
}

engine_methods! {
    PyLogisticContextualEnv { env: LogisticContextualEnv }, restore _restore_logistic_contextual_env,
    shared [rounds, pickle];

    #[new]
    #[pyo3(signature = (d, k, gap, optimal_reward, scale, seed=None))]
    fn new(d: usize, k: usize, gap: f64, optimal_reward: f64, scale: f64, seed: Option<u64>) -> PyResult<Self> {
        let env = LogisticContextualEnv::new(d, k, gap, optimal_reward, scale, &seeds(seed)?).py_err()?;
        Ok(PyLogisticContextualEnv { env, set: DecisionSet::zeros(k, d), t: 0 })
    }

    /// The configuration, for the simulation loop (one instance per replicate).
    fn _factory(&self) -> PyEnvironmentFactory {
        let config: LogisticContextualConfig = self.env.config();
        PyEnvironmentFactory::new(config)
    }

    /// Mean rewards mu(s <x, theta*>) of the current round's actions.
    fn mean_rewards<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.means().into_pyarray(py)
    }

    /// The hidden parameter theta*.
    fn theta<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.theta().to_vec().into_pyarray(py)
    }
}

impl super::Snapshot for PyLogisticContextualEnv {
    fn snapshot(&self) -> Vec<u8> {
        crate::state::encode(&(self.t, &self.set.features, self.env.to_bytes()))
    }

    fn restore(state: &[u8]) -> crate::Result<Self> {
        let (t, features, env): (u64, Vec<f64>, Vec<u8>) = crate::state::decode(state)?;
        let env = LogisticContextualEnv::from_bytes(&env)?;
        let (d, k) = (env.dim(), env.num_actions());
        if features.len() != d * k {
            return Err(Error::Decode("inconsistent environment state".into()));
        }
        Ok(PyLogisticContextualEnv { env, set: DecisionSet { k, d, features }, t })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyShariffSheffetEnv::register(m)?;
    PyLogisticContextualEnv::register(m)?;
    Ok(())
}
