//! Bindings for the supervised-to-bandit replay environment.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::sim::PyEnvironmentFactory;
use crate::env::{DecisionSet, ReplayConfig, ReplayEnv};
use crate::error::Error;

/// Replay of a labelled data set, usable round by round from Python and
/// as a simulation factory (the data are shared by every replicate).
#[pyclass(module = "dpbandits._core", name = "ReplayEnvEngine")]
pub struct PyReplayEnv {
    env: ReplayEnv,
    set: DecisionSet,
    t: u64,
}

engine_methods! {
    PyReplayEnv { env: ReplayEnv }, shared [rounds];

    /// `features`: the n x p rows flattened (row-major); `labels`: n class
    /// indices; `wrong_reward`: 0 or -1.
    #[new]
    #[pyo3(signature = (features, p, labels, wrong_reward, seed=None))]
    fn new(
        features: PyReadonlyArray1<'_, f64>,
        p: usize,
        labels: Vec<u32>,
        wrong_reward: f64,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let config = ReplayConfig::new(features.as_array().to_vec(), p, labels, wrong_reward).py_err()?;
        let (k, d) = (config.k(), config.k() * config.p());
        let env = ReplayEnv::new(config, &seeds(seed)?);
        Ok(PyReplayEnv { env, set: DecisionSet::zeros(k, d), t: 0 })
    }

    /// The configuration, for the simulation loop (one instance per replicate).
    fn _factory(&self) -> PyEnvironmentFactory {
        PyEnvironmentFactory::new(self.env.config())
    }

    /// Rewards of every arm in the current round.
    fn mean_rewards<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.means().into_pyarray(py)
    }

    /// The round and the replay's position and generator (not the data).
    fn state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &crate::state::encode(&(self.t, &self.set.features, self.env.state_bytes())))
    }

    /// Continues from `state` (written by `state()` of a replay of the same data).
    fn set_state(&mut self, state: &[u8]) -> PyResult<()> {
        let (t, features, env): (u64, Vec<f64>, Vec<u8>) = crate::state::decode(state).py_err()?;
        if features.len() != self.set.features.len() {
            return Err(Error::Decode("replay state does not match the data".into())).py_err();
        }
        self.env = ReplayEnv::restore(self.env.config(), &env).py_err()?;
        self.set.features = features;
        self.t = t;
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyReplayEnv::register(m)?;
    Ok(())
}
