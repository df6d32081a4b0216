//! Bindings for built-in environments.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

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

#[pymethods]
impl PyShariffSheffetEnv {
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

    /// Serialized state: the round, the current decision set and the
    /// generators, so a restored environment continues identically.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let state = (self.t, self.set.features.clone(), self.env.to_bytes());
        PyBytes::new(py, &postcard::to_stdvec(&state).expect("plain data"))
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        let (t, features, env): (u64, Vec<f64>, Vec<u8>) =
            postcard::from_bytes(state).map_err(|e| Error::Decode(e.to_string())).py_err()?;
        let env = ShariffSheffetEnv::from_bytes(&env).py_err()?;
        let (d, k) = (env.dim(), env.num_actions());
        if features.len() != d * k {
            return Err(Error::Decode("inconsistent environment state".into())).py_err();
        }
        Ok(PyShariffSheffetEnv { env, set: DecisionSet { k, d, features }, t })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_shariff_sheffet_env")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `ShariffSheffetEnvEngine`.
#[pyfunction]
fn _restore_shariff_sheffet_env(state: &[u8]) -> PyResult<PyShariffSheffetEnv> {
    PyShariffSheffetEnv::from_bytes(state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyShariffSheffetEnv>()?;
    m.add_function(wrap_pyfunction!(_restore_shariff_sheffet_env, m)?)?;
    Ok(())
}
