//! Bindings for built-in environments.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;

use super::errors::IntoPy;
use super::mechanisms::seeds;
use crate::env::{DecisionSet, Environment, Feedback, RewardModel, ShariffSheffetEnv};
use crate::error::Error;
use crate::rng::SeedSequence;

/// Parameters of Shariff & Sheffet App. D's environment.
#[derive(Clone, Copy, Debug)]
pub struct ShariffSheffetParams {
    pub d: usize,
    pub k: usize,
    pub gap: f64,
    pub optimal_reward: f64,
    pub reward: RewardModel,
}

impl ShariffSheffetParams {
    pub fn build(&self, seeds: &SeedSequence) -> crate::error::Result<ShariffSheffetEnv> {
        ShariffSheffetEnv::new(self.d, self.k, self.gap, self.optimal_reward, self.reward, seeds)
    }
}

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
    pub(crate) params: ShariffSheffetParams,
    env: ShariffSheffetEnv,
    set: DecisionSet,
    t: u64,
}

#[pymethods]
impl PyShariffSheffetEnv {
    #[new]
    #[pyo3(signature = (d, k, gap, optimal_reward, reward, seed=None))]
    fn new(d: usize, k: usize, gap: f64, optimal_reward: f64, reward: &str, seed: Option<u64>) -> PyResult<Self> {
        let params = ShariffSheffetParams { d, k, gap, optimal_reward, reward: reward_model(reward)? };
        let env = params.build(&seeds(seed)?).py_err()?;
        Ok(PyShariffSheffetEnv { params, env, set: DecisionSet::zeros(k, d), t: 0 })
    }

    /// Draws the next round's decision set, shape (k, d).
    fn next_round<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.t += 1;
        self.env.next_round(self.t, &mut self.set).py_err()?;
        let arr = self.set.features.clone().into_pyarray(py);
        Ok(arr.reshape([self.set.k, self.set.d])?)
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyShariffSheffetEnv>()?;
    Ok(())
}
