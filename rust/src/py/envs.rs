//! Bindings for built-in environments.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;

use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::sim::PyEnvironmentFactory;
use crate::env::{DecisionSet, Environment, Feedback, RewardModel, ShariffSheffetConfig, ShariffSheffetEnv};
use crate::error::Error;

pub fn reward_model(name: &str) -> PyResult<RewardModel> {
    match name {
        "pm1" => Ok(RewardModel::PlusMinusOne),
        "gaussian" => Ok(RewardModel::Gaussian),
        _ => Err(Error::invalid("reward", format!("must be \"pm1\" or \"gaussian\", got {name:?}"))).py_err(),
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
    PyShariffSheffetEnv { env: ShariffSheffetEnv }, restore _restore_shariff_sheffet_env, shared [pickle];

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

    /// Draws the next round's decision set, shape (k, d).
    fn next_round<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.t += 1;
        self.env.next_round(self.t, &mut self.set).py_err()?;
        let arr = self.set.features.clone().into_pyarray(py);
        arr.reshape([self.set.k, self.set.d])
    }

    /// Realized reward of `index` in the current round.
    fn reward(&mut self, index: usize) -> PyResult<f64> {
        if self.t == 0 {
            return Err(Error::State("call next_round() before reward()".into())).py_err();
        }
        match self.env.feedback(index).py_err()? {
            Feedback::Reward(y) => Ok(y),
            Feedback::Losses(_) => unreachable!("bandit environment"),
        }
    }

    /// Mean rewards of the current round's actions.
    fn mean_rewards<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.means().to_vec().into_pyarray(py)
    }

    /// The hidden parameter theta*.
    fn theta<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.theta().to_vec().into_pyarray(py)
    }

    #[getter]
    fn t(&self) -> u64 {
        self.t
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyShariffSheffetEnv::register(m)?;
    Ok(())
}
