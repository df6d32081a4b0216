//! Bindings for batched elimination (Hanna et al. Alg. 1-4) and its
//! environment (Sec. VI).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::arrays::{expect_shape, row_major};
use super::errors::{unknown, IntoPy};
use super::mechanisms::seeds;
use super::noise::Noise;
use super::sim::PyEnvironmentFactory;
use crate::env::{LinearBanditConfig, LinearBanditEnv};
use crate::error::Error;
use crate::policy::elimination::{
    Elimination, EliminationConfig, Exploration, GammaCoefficients, Privatizer, ShuffleSumCoefficients,
};
use crate::policy::BoundsPolicy;

fn privatizer(name: &str, shuffle_sum: Option<[f64; 4]>) -> PyResult<Privatizer> {
    if name != "shuffle-sum" && shuffle_sum.is_some() {
        return Err(Error::invalid("shuffle_sum", format!("only privatizer shuffle-sum takes it, got {name:?}")))
            .py_err();
    }
    match name {
        "none" => Ok(Privatizer::None),
        "central" => Ok(Privatizer::CentralSum),
        "local" => Ok(Privatizer::LocalReward),
        "shuffle" => Ok(Privatizer::ShuffledReward),
        "shuffle-sum" => match shuffle_sum {
            Some([g_sqrt_n, g_min, bits, ones]) => {
                Ok(Privatizer::ShuffledSum(ShuffleSumCoefficients { g_sqrt_n, g_min, bits, ones }))
            }
            None => Err(Error::invalid("shuffle_sum", "privatizer shuffle-sum needs its four constants")).py_err(),
        },
        _ => unknown("privatizer", "none, central, local, shuffle or shuffle-sum", name),
    }
}

/// Batched elimination engine; built by `dpbandits.EliminationLinearBandit`.
#[pyclass(module = "dpbandits._core", name = "EliminationEngine")]
pub struct PyElimination {
    pub(crate) inner: Elimination,
}

engine_methods! {
    PyElimination { inner: Elimination }, restore _restore_elimination, shared [learner, secure, state],
    getters [batch_index: usize, committed: Option<usize>];

    #[new]
    #[pyo3(signature = (actions, horizon, batch_lengths, gamma, log_offset, privatizer_kind, noise, exploration, reward_min, reward_max, clip, seed=None, shuffle_sum=None))]
    fn new(
        actions: PyReadonlyArrayDyn<'_, f64>,
        horizon: u64,
        batch_lengths: Vec<f64>,
        gamma: Vec<[f64; 4]>,
        log_offset: f64,
        privatizer_kind: &str,
        noise: Vec<Noise>,
        exploration: &str,
        reward_min: f64,
        reward_max: f64,
        clip: bool,
        seed: Option<u64>,
        shuffle_sum: Option<[f64; 4]>,
    ) -> PyResult<Self> {
        let (shape, features) = row_major(&actions);
        if shape.len() != 2 {
            return Err(Error::invalid("actions", format!("expected a (K, d) array, got shape {shape:?}"))).py_err();
        }
        let exploration = match exploration {
            "core_set" => Exploration::CoreSet,
            "uniform" => Exploration::Uniform,
            _ => return unknown("exploration", "core_set or uniform", exploration),
        };
        let config = EliminationConfig {
            k: shape[0],
            d: shape[1],
            actions: features.into_owned(),
            horizon,
            batch_lengths,
            gamma: gamma
                .into_iter()
                .map(|[a, b, c, e]| GammaCoefficients { sqrt_log: a, log: b, constant: c, sqrt_n_log: e })
                .collect(),
            log_offset,
            privatizer: privatizer(privatizer_kind, shuffle_sum)?,
            noise: noise.into_iter().map(|n| n.0).collect(),
            exploration,
            reward_min,
            reward_max,
            bounds: if clip { BoundsPolicy::Clip } else { BoundsPolicy::Error },
        };
        Ok(PyElimination { inner: Elimination::new(config, &seeds(seed)?).py_err()? })
    }

    /// Index (row of the action set) to play this round.
    fn select(&mut self) -> PyResult<usize> {
        self.inner.next_action().py_err()
    }

    /// Like `select`, after checking that `actions` is the fixed action set.
    fn select_set(&mut self, actions: PyReadonlyArrayDyn<'_, f64>) -> PyResult<usize> {
        let (shape, features) = row_major(&actions);
        let c = self.inner.config();
        expect_shape("decision_set", &shape, &[c.k, c.d])?;
        if features != c.actions {
            return Err(Error::invalid("decision_set", "must be the fixed action set given at construction")).py_err();
        }
        self.inner.next_action().py_err()
    }

    /// Reward of the action `index` returned by the last `select`; True
    /// when it is the first the bounds policy clipped.
    fn update(&mut self, index: usize, reward: f64) -> PyResult<bool> {
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(index, reward).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }

    /// (g, b, p) of the shuffled sum over `n` users (privatizer
    /// "shuffle-sum" only), as the engine evaluates them.
    fn shuffle_sum_parameters(&self, n: u64) -> PyResult<(u64, u64, f64)> {
        match self.inner.config().privatizer {
            Privatizer::ShuffledSum(c) => {
                let p = c.parameters(n).py_err()?;
                Ok((p.g, p.b, p.p))
            }
            _ => Err(Error::State("the engine's privatizer is not shuffle-sum".into())).py_err(),
        }
    }

    /// The surviving set A_i (indices into the action set).
    fn active<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.active().iter().map(|&i| i as u64).collect::<Vec<_>>().into_pyarray(py)
    }

    /// The current batch's core set (indices into the action set), the
    /// pulls of each and the batch index (both empty once an action is
    /// committed): a function of the surviving set only.
    fn batch_plan<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>, usize) {
        let (support, pulls) = self.inner.batch_plan();
        let support: Vec<u64> = support.iter().map(|&i| i as u64).collect();
        (support.into_pyarray(py), pulls.to_vec().into_pyarray(py), self.inner.batch_index())
    }

    /// One dict per finished batch (everything in it is released data).
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for r in self.inner.history() {
            let d = PyDict::new(py);
            d.set_item("active", r.active)?;
            d.set_item("rank", r.rank)?;
            d.set_item("support", r.support.clone())?;
            d.set_item("weights", r.weights.clone())?;
            d.set_item("pulls", r.pulls.clone())?;
            d.set_item("design_value", r.design_value)?;
            d.set_item("gamma", r.gamma)?;
            d.set_item("noise_scale", r.noise_scale)?;
            d.set_item("released_sums", r.released_sums.clone())?;
            d.set_item("theta", r.theta.clone())?;
            d.set_item("survivors", r.survivors)?;
            list.append(d)?;
        }
        Ok(list)
    }
}

/// Sec. VI's linear bandit, usable round by round from Python.
#[pyclass(module = "dpbandits._core", name = "LinearBanditEnvEngine")]
pub struct PyLinearBanditEnv {
    env: LinearBanditEnv,
}

engine_methods! {
    PyLinearBanditEnv { env: LinearBanditEnv }, restore _restore_linear_bandit_env, shared [state];

    #[new]
    #[pyo3(signature = (k, d, actions=None, seed=None))]
    fn new(k: usize, d: usize, actions: Option<PyReadonlyArrayDyn<'_, f64>>, seed: Option<u64>) -> PyResult<Self> {
        let actions = match actions {
            Some(a) => {
                let (shape, data) = row_major(&a);
                expect_shape("actions", &shape, &[k, d])?;
                Some(data.into_owned())
            }
            None => None,
        };
        let env = LinearBanditEnv::new(LinearBanditConfig { k, d, actions }, &seeds(seed)?).py_err()?;
        Ok(PyLinearBanditEnv { env })
    }

    /// The configuration for the simulation loop, with this instance's
    /// actions made explicit: every replicate plays the same action set
    /// (the learner's) and draws its own theta* and rewards.
    fn _factory(&self) -> PyEnvironmentFactory {
        let c = self.env.config();
        PyEnvironmentFactory::new(LinearBanditConfig { k: c.k, d: c.d, actions: Some(self.env.actions().to_vec()) })
    }

    /// The fixed (K, d) action set.
    fn actions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let c = self.env.config();
        self.env.actions().to_vec().into_pyarray(py).reshape([c.k, c.d])
    }

    fn theta<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.theta().to_vec().into_pyarray(py)
    }

    fn mean_rewards<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.means().to_vec().into_pyarray(py)
    }

    /// A realized +-1 reward of action `index`.
    fn reward(&mut self, index: usize) -> PyResult<f64> {
        self.env.draw(index).py_err()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyElimination::register(m)?;
    PyLinearBanditEnv::register(m)?;
    Ok(())
}
