//! Bindings for the fixed-budget best-arm identification engine
//! (`crate::policy::bai_fixed_budget`); built by
//! `dpbandits.learners.bai_fixed_budget`. Conversion, validation of the
//! online call's arguments and GIL release only.
//!
//! The online protocol of the learners is here: `select`, and
//! `update(arm, reward)` / `update(reward)` with the learners' checks and
//! messages (an int arm in [0, k), a reward converted to a float in
//! [0, 1], an arm with an outstanding selection), which the learner's
//! `select` and `update` call (`super::engine_base`). Every method takes the engine's [`EngineLock`] once
//! for the call (the learner's `lock`, reentrant, as `threading.RLock`);
//! the engine sits in a `Mutex` that the lock makes uncontended, and a
//! call that reaches Python (a reward of another numeric type) does so
//! without holding it.

use std::sync::{Mutex, MutexGuard, TryLockError};

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyTuple, PyType};

use super::errors::{state_error, to_py, IntoPy};
use super::karmed::{EngineLock, Held};
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::error::Error;
use crate::noise::NoiseSpec;
use crate::policy::bai_fixed_budget::{self as fb, FixedBudgetBai, FixedBudgetConfig};

/// Fixed-budget best-arm identification engine (DP-BAI phases) with its
/// lock; built by `dpbandits.learners.bai_fixed_budget`.
#[pyclass(frozen, module = "dpbandits._core", name = "FixedBudgetBaiEngine")]
pub struct PyFixedBudgetBai {
    lock: Py<EngineLock>,
    inner: Mutex<FixedBudgetBai>,
    /// The number of arms (fixed at construction).
    k: usize,
}

fn arm_index(arm: i64, k: usize) -> PyResult<usize> {
    if arm < 0 || arm as u64 >= k as u64 {
        return Err(to_py(Error::invalid("arm", format!("must lie in [0, {k}), got {arm}"))));
    }
    Ok(arm as usize)
}

fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr().map_or_else(|_| "?".into(), |r| r.to_string())
}

/// `obj` as an arm of `k`: an int or a NumPy integer, not a bool
/// (TypeError), in [0, k) (ValueError); the messages name the value.
#[inline]
fn update_arm(obj: &Bound<'_, PyAny>, k: usize) -> PyResult<usize> {
    static INTEGER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let integral = obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() || {
        let py = obj.py();
        let integer = INTEGER.get_or_try_init(py, || -> PyResult<Py<PyType>> {
            Ok(py.import("numpy")?.getattr("integer")?.cast_into::<PyType>()?.unbind())
        })?;
        obj.is_instance(integer.bind(py))?
    };
    if !integral {
        return Err(PyTypeError::new_err(format!("invalid argument `arm`: expected an integer, got {}", repr(obj))));
    }
    match obj.extract::<i64>() {
        Ok(a) if a >= 0 && (a as u64) < k as u64 => Ok(a as usize),
        _ => Err(PyValueError::new_err(format!("invalid argument `arm`: must lie in [0, {k}), got {}", repr(obj)))),
    }
}

/// `obj` as a reward: a float or an int (not a bool) converted here, other
/// real numbers by the package's one check of a real number
/// (`dpbandits._validation.real`, its TypeError otherwise); finite and in
/// [0, 1] (ValueError naming the value).
#[inline]
fn update_reward(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    static REAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let value = if let Ok(f) = obj.cast::<PyFloat>() {
        Some(f.value())
    } else if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        obj.extract::<f64>().ok() // None: too large for a float, out of range
    } else {
        let py = obj.py();
        let real = REAL.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py.import("dpbandits._validation")?.getattr("real")?.unbind())
        })?;
        Some(real.bind(py).call1(("reward", obj))?.extract::<f64>()?)
    };
    match value {
        Some(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(PyValueError::new_err(format!(
            "invalid argument `reward`: must be finite and in [0, 1], got {}",
            repr(obj)
        ))),
    }
}

/// A positional argument that may be left out: unlike `Option`, an
/// explicit `None` is an argument (a refused reward), not a missing one.
enum Given<'py> {
    Missing,
    Value(Bound<'py, PyAny>),
}

impl super::engine_base::ArmedCall for PyFixedBudgetBai {
    fn call_select(&self, py: Python<'_>) -> PyResult<usize> {
        self.select(py)
    }

    fn call_update(&self, py: Python<'_>, first: &Bound<'_, PyAny>, second: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.update(py, first, second.map_or(Given::Missing, |b| Given::Value(b.clone())))
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Given<'py> {
    type Error = std::convert::Infallible;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> Result<Self, Self::Error> {
        Ok(Given::Value(obj.to_owned()))
    }
}

fn poisoned() -> PyErr {
    to_py(Error::State("an earlier call panicked inside this engine; its state cannot be trusted".into()))
}

impl PyFixedBudgetBai {
    fn wrap(py: Python<'_>, engine: FixedBudgetBai) -> PyResult<Self> {
        let k = engine.config().k;
        Ok(PyFixedBudgetBai { lock: Py::new(py, EngineLock::default())?, inner: Mutex::new(engine), k })
    }

    /// The engine; the caller holds the lock (which makes the mutex uncontended).
    #[inline]
    fn engine(&self) -> PyResult<MutexGuard<'_, FixedBudgetBai>> {
        match self.inner.try_lock() {
            Ok(g) => Ok(g),
            Err(TryLockError::Poisoned(_)) => Err(poisoned()),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err("engine re-entered")),
        }
    }

    /// `f` on the engine with the lock held for the call.
    #[inline]
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&mut FixedBudgetBai) -> R) -> PyResult<R> {
        let _held = Held::new(py, self.lock.get());
        Ok(f(&mut *self.engine()?))
    }

    /// The configuration (for the calls that run without the GIL).
    fn config(&self, py: Python<'_>) -> PyResult<FixedBudgetConfig> {
        self.with(py, |e| e.config().clone())
    }
}

#[pymethods]
impl PyFixedBudgetBai {
    /// `k` arms (K-armed) or the rows of `arms` (k x d features), budget
    /// `budget`, the noise of each phase sum.
    #[new]
    #[pyo3(signature = (k, budget, *, arms=None, noise=Noise(NoiseSpec::Zero), secure=false, seed=None))]
    fn new(
        py: Python<'_>,
        k: usize,
        budget: u64,
        arms: Option<PyReadonlyArray2<'_, f64>>,
        noise: Noise,
        secure: bool,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let (d, features) = match arms {
            None => (0, Vec::new()),
            Some(a) => {
                let view = a.as_array();
                let (rows, d) = view.dim();
                if rows != k {
                    return Err(to_py(Error::invalid("arms", format!("needs k = {k} rows, got {rows}"))));
                }
                (d, view.iter().copied().collect())
            }
        };
        let config = FixedBudgetConfig { k, d, features, budget, noise: noise.0, secure };
        Self::wrap(py, FixedBudgetBai::new(config, &seeds(seed)?).py_err()?)
    }

    /// The next arm to pull, counted as outstanding until its reward arrives.
    fn select(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, FixedBudgetBai::select_arm)?.py_err()
    }

    /// `n` selections in a row; none is made when the phase's schedule has
    /// fewer than `n` left (the error of `select` then).
    fn select_many<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let out = self.with(py, |e| -> crate::error::Result<Vec<i64>> {
            if n as u64 > e.remaining() {
                if e.remaining() == 0 {
                    e.select_arm()?;
                }
                return Err(Error::State(format!(
                    "{n} selections asked, the phase's schedule has {} left (the next phase's arms depend on its \
                     rewards)",
                    e.remaining()
                )));
            }
            let mut out = Vec::with_capacity(n.min(1 << 20));
            for _ in 0..n {
                out.push(e.select_arm()? as i64);
            }
            Ok(out)
        })?;
        Ok(out.py_err()?.into_pyarray(py))
    }

    /// `update(arm, reward)`: a reward in [0, 1] of an outstanding
    /// selection of `arm` (any order within the phase); `update(reward)`:
    /// the one outstanding selection's (StateError naming them otherwise).
    /// A reward of an arm with no outstanding selection is refused
    /// (StateError); a refused call records nothing.
    #[pyo3(signature = (arm_or_reward, reward=Given::Missing, /))]
    fn update(&self, py: Python<'_>, arm_or_reward: &Bound<'_, PyAny>, reward: Given<'_>) -> PyResult<()> {
        let _held = Held::new(py, self.lock.get());
        let (arm, reward) = match &reward {
            Given::Value(reward) => (update_arm(arm_or_reward, self.k)?, reward),
            Given::Missing => {
                let pending = {
                    let e = self.engine()?;
                    e.sole_outstanding().ok_or_else(|| (e.outstanding(), e.outstanding_by_arm()))
                };
                match pending {
                    Ok(arm) => (arm, arm_or_reward),
                    Err((n, by_arm)) => {
                        let arms: Vec<usize> =
                            by_arm.iter().flat_map(|&(a, c)| std::iter::repeat_n(a, c as usize)).take(10).collect();
                        return Err(state_error(format!(
                            "update(reward) needs exactly one outstanding selection, got {n} (arms {arms:?}); \
                             call update(arm, reward)"
                        )));
                    }
                }
            }
        };
        let r = update_reward(reward)?;
        if self.engine()?.observe_outstanding(arm, r).py_err()? {
            return Ok(());
        }
        Err(state_error(format!(
            "arm {arm} has no outstanding selection: a fixed-budget phase takes only the rewards of the pulls it \
             scheduled"
        )))
    }

    /// Selections not yet answered by a reward, per arm (length k).
    fn outstanding_by_arm<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let mut counts = vec![0u64; self.k];
        for (a, c) in self.with(py, |e| e.outstanding_by_arm())? {
            counts[a] = c;
        }
        Ok(counts.into_pyarray(py))
    }

    /// Selections not yet answered by a reward.
    #[getter]
    fn outstanding(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |e| e.outstanding())
    }

    /// The lock every method takes (reentrant; as `threading.RLock`).
    #[getter]
    fn lock(&self, py: Python<'_>) -> Py<EngineLock> {
        self.lock.clone_ref(py)
    }

    /// The engine's own call: records a reward in [0, 1] of `arm` (which
    /// must have an outstanding selection).
    fn observe(&self, py: Python<'_>, arm: i64, reward: f64) -> PyResult<()> {
        let a = arm_index(arm, self.k)?;
        self.with(py, |e| e.observe(a, reward))?.py_err()
    }

    /// Records `rewards[i]` of `arms[i]` in order (stops at the first error,
    /// after the pairs before it).
    fn observe_many(
        &self,
        py: Python<'_>,
        arms: PyReadonlyArray1<'_, i64>,
        rewards: PyReadonlyArray1<'_, f64>,
    ) -> PyResult<()> {
        let (arms, rewards) = (arms.as_slice()?, rewards.as_slice()?);
        if arms.len() != rewards.len() {
            return Err(to_py(Error::invalid(
                "rewards",
                format!("needs one reward per arm: {} arms, {} rewards", arms.len(), rewards.len()),
            )));
        }
        let k = self.k;
        self.with(py, |e| {
            for (&a, &r) in arms.iter().zip(rewards) {
                e.observe(arm_index(a, k)?, r).py_err()?;
            }
            Ok(())
        })?
    }

    #[getter]
    fn k(&self) -> usize {
        self.k
    }

    /// Selections made so far.
    #[getter]
    fn t(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |e| e.t())
    }

    /// Rewards received so far.
    #[getter]
    fn samples(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |e| e.samples())
    }

    #[getter]
    fn finished(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |e| e.finished())
    }

    #[getter]
    fn recommendation(&self, py: Python<'_>) -> PyResult<Option<usize>> {
        self.with(py, |e| e.recommendation())
    }

    #[getter]
    fn phase(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, |e| e.phase())
    }

    #[getter]
    fn phases(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, |e| e.config().phases())
    }

    /// Selections the engine can make now (the rest of the phase's schedule).
    #[getter]
    fn remaining(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |e| e.remaining())
    }

    #[getter]
    fn releases(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |e| e.releases())
    }

    /// Pulls of each arm the current phase pulls (in the order of `pulled`).
    fn quotas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(self.with(py, |e| e.quotas())?.into_pyarray(py))
    }

    fn active<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(self.with(py, |e| e.active().into_iter().map(|a| a as u64).collect::<Vec<_>>())?.into_pyarray(py))
    }

    fn pulled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(self.with(py, |e| e.pulled().iter().map(|&a| a as u64).collect::<Vec<_>>())?.into_pyarray(py))
    }

    fn pulls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(self.with(py, |e| e.pulls().to_vec())?.into_pyarray(py))
    }

    fn estimates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(self.with(py, |e| e.estimates().to_vec())?.into_pyarray(py))
    }

    /// Draws future noise from `seed` (None: operating-system entropy).
    #[pyo3(signature = (seed=None))]
    fn reseed(&self, py: Python<'_>, seed: Option<u64>) -> PyResult<()> {
        let seeds = seeds(seed)?;
        self.with(py, |e| e.reseed(&seeds))
    }

    /// Whether privacy noise comes from the operating system.
    #[getter]
    fn os_entropy(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |e| e.config().secure)
    }

    /// The configuration this engine was built with, as plain values
    /// (`as_json`: their JSON text); see `dpbandits.checkpoint`.
    #[pyo3(signature = (as_json=false))]
    fn noise_parameters<'py>(&self, py: Python<'py>, as_json: bool) -> PyResult<Bound<'py, PyAny>> {
        super::config_values(py, &self.config(py)?, as_json)
    }

    /// The configuration the engine was built with, as JSON text.
    fn config_json(&self, py: Python<'_>) -> PyResult<String> {
        super::config_values(py, &self.config(py)?, true)?.extract()
    }

    /// The 32-byte keys of the engine's seeded (ChaCha8) generators.
    fn _generator_keys<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let keys = self.with(py, |e| super::generator_keys::generator_keys(&*e))?;
        Ok(keys.iter().map(|key| PyBytes::new(py, key)).collect())
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_fixed_budget_bai_engine")?;
        (restore, (self.to_bytes(py)?,)).into_pyobject(py)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with(py, |e| e.to_bytes())?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, state: &[u8]) -> PyResult<Self> {
        Self::wrap(py, FixedBudgetBai::from_bytes(state).py_err()?)
    }

    /// `reps` replicates on Bernoulli arms of means `means` (GIL released,
    /// in parallel): recommended arms and rewards used.
    #[allow(clippy::type_complexity)]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        means: Vec<f64>,
        reps: usize,
        seed: u64,
    ) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u64>>)> {
        let config = self.config(py)?;
        let runs = py.detach(|| fb::simulate(&config, &means, reps, seed)).py_err()?;
        Ok((runs.recommendations.into_pyarray(py), runs.samples.into_pyarray(py)))
    }

    /// The engine `simulate` runs for replicate `index` of root `seed`.
    fn _replicate(&self, py: Python<'_>, seed: u64, index: u64) -> PyResult<Self> {
        let config = self.config(py)?;
        Self::wrap(py, fb::replicate_engine(&config, seed, index).py_err()?)
    }

    /// Audit runs: `count` fresh engines (seeds (`seed`, run)) fed reward
    /// `rewards[i]` at their i-th observation, whatever the arm; per run the
    /// released sum holding observation `round` (NaN when not released).
    fn _audit_runs<'py>(
        &self,
        py: Python<'py>,
        rewards: Vec<f64>,
        round: usize,
        count: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let config = self.config(py)?;
        let out = py.detach(|| fb::audit_runs(&config, &rewards, round, count, seed)).py_err()?;
        Ok(out.into_pyarray(py))
    }
}

/// Unpickling entry point for `FixedBudgetBaiEngine`.
#[pyfunction]
fn _restore_fixed_budget_bai_engine(py: Python<'_>, state: &[u8]) -> PyResult<PyFixedBudgetBai> {
    PyFixedBudgetBai::from_bytes(py, state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_restore_fixed_budget_bai_engine, m)?)?;
    m.add_class::<PyFixedBudgetBai>()?;
    Ok(())
}
