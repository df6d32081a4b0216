//! Bindings for batched elimination (Hanna et al. Alg. 1-4) and its
//! environment (Sec. VI).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use super::arrays::{expect_shape, row_major};
use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::sim::{PyEnvironmentFactory, PyLearnerFactory};
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
        _ => Err(Error::invalid(
            "privatizer",
            format!("must be none, central, local, shuffle or shuffle-sum, got {name:?}"),
        ))
        .py_err(),
    }
}

/// Batched elimination engine; built by `dpbandits.EliminationLinearBandit`.
#[pyclass(module = "dpbandits._core", name = "EliminationEngine")]
pub struct PyElimination {
    inner: Elimination,
}

#[pymethods]
impl PyElimination {
    #[new]
    #[pyo3(signature = (actions, horizon, batch_lengths, gamma, log_offset, privatizer_kind, noise_scales, exploration, reward_min, reward_max, clip, seed=None, shuffle_sum=None, lattice_exponents=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        actions: PyReadonlyArrayDyn<'_, f64>,
        horizon: u64,
        batch_lengths: Vec<f64>,
        gamma: Vec<[f64; 4]>,
        log_offset: f64,
        privatizer_kind: &str,
        noise_scales: Vec<f64>,
        exploration: &str,
        reward_min: f64,
        reward_max: f64,
        clip: bool,
        seed: Option<u64>,
        shuffle_sum: Option<[f64; 4]>,
        lattice_exponents: Vec<i32>,
    ) -> PyResult<Self> {
        let (shape, features) = row_major(&actions);
        if shape.len() != 2 {
            return Err(Error::invalid("actions", format!("expected a (K, d) array, got shape {shape:?}"))).py_err();
        }
        let exploration = match exploration {
            "core_set" => Exploration::CoreSet,
            "uniform" => Exploration::Uniform,
            _ => {
                return Err(Error::invalid("exploration", format!("must be core_set or uniform, got {exploration:?}")))
                    .py_err()
            }
        };
        let config = EliminationConfig {
            k: shape[0],
            d: shape[1],
            actions: features,
            horizon,
            batch_lengths,
            gamma: gamma
                .into_iter()
                .map(|[a, b, c, e]| GammaCoefficients { sqrt_log: a, log: b, constant: c, sqrt_n_log: e })
                .collect(),
            log_offset,
            privatizer: privatizer(privatizer_kind, shuffle_sum)?,
            noise_scales,
            lattice_exponents,
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

    /// Reward of the action `index` returned by the last `select`.
    fn update(&mut self, index: usize, reward: f64) -> PyResult<()> {
        self.inner.observe(index, reward).py_err()
    }

    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
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

    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.config().horizon
    }

    #[getter]
    fn batch_index(&self) -> usize {
        self.inner.batch_index()
    }

    #[getter]
    fn committed(&self) -> Option<usize> {
        self.inner.committed()
    }

    /// The surviving set A_i (indices into the action set).
    fn active<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.active().iter().map(|&i| i as u64).collect::<Vec<_>>().into_pyarray(py)
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
    /// Draws all future noise and permutations from a new root (`None`:
    /// operating-system entropy). Past releases are unchanged.
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
        Ok(PyElimination { inner: Elimination::from_bytes(state).py_err()? })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_elimination")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `EliminationEngine`.
#[pyfunction]
fn _restore_elimination(state: &[u8]) -> PyResult<PyElimination> {
    PyElimination::from_bytes(state)
}

/// Sec. VI's linear bandit, usable round by round from Python.
#[pyclass(module = "dpbandits._core", name = "LinearBanditEnvEngine")]
pub struct PyLinearBanditEnv {
    env: LinearBanditEnv,
}

#[pymethods]
impl PyLinearBanditEnv {
    #[new]
    #[pyo3(signature = (k, d, actions=None, seed=None))]
    fn new(k: usize, d: usize, actions: Option<PyReadonlyArrayDyn<'_, f64>>, seed: Option<u64>) -> PyResult<Self> {
        let actions = match actions {
            Some(a) => {
                let (shape, data) = row_major(&a);
                expect_shape("actions", &shape, &[k, d])?;
                Some(data)
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

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.env.to_bytes())
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyLinearBanditEnv { env: LinearBanditEnv::from_bytes(state).py_err()? })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_linear_bandit_env")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }
}

/// Unpickling entry point for `LinearBanditEnvEngine`.
#[pyfunction]
fn _restore_linear_bandit_env(state: &[u8]) -> PyResult<PyLinearBanditEnv> {
    PyLinearBanditEnv::from_bytes(state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyElimination>()?;
    m.add_function(wrap_pyfunction!(_restore_elimination, m)?)?;
    m.add_class::<PyLinearBanditEnv>()?;
    m.add_function(wrap_pyfunction!(_restore_linear_bandit_env, m)?)?;
    Ok(())
}
