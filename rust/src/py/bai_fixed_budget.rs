//! Bindings for the fixed-budget best-arm identification engine
//! (`crate::policy::bai_fixed_budget`); built by
//! `dpbandits.learners.bai_fixed_budget`. Conversion, validation of shapes
//! and GIL release only.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::{to_py, IntoPy};
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::error::Error;
use crate::noise::NoiseSpec;
use crate::policy::bai_fixed_budget::{self as fb, FixedBudgetBai, FixedBudgetConfig};

/// Fixed-budget best-arm identification engine (DP-BAI phases); built by
/// `dpbandits.learners.bai_fixed_budget`.
#[pyclass(module = "dpbandits._core", name = "FixedBudgetBaiEngine")]
pub struct PyFixedBudgetBai {
    pub(crate) inner: FixedBudgetBai,
}

fn arm_index(arm: i64, k: usize) -> PyResult<usize> {
    if arm < 0 || arm as u64 >= k as u64 {
        return Err(to_py(Error::invalid("arm", format!("must lie in [0, {k}), got {arm}"))));
    }
    Ok(arm as usize)
}

#[pymethods]
impl PyFixedBudgetBai {
    /// `k` arms (K-armed) or the rows of `arms` (k x d features), budget
    /// `budget`, the noise of each phase sum.
    #[new]
    #[pyo3(signature = (k, budget, *, arms=None, noise=Noise(NoiseSpec::Zero), secure=false, seed=None))]
    fn new(
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
        Ok(PyFixedBudgetBai { inner: FixedBudgetBai::new(config, &seeds(seed)?).py_err()? })
    }

    /// The next arm to pull.
    fn select(&mut self) -> PyResult<usize> {
        self.inner.select_arm().py_err()
    }

    /// `n` selections in a row; none is made when the phase's schedule has
    /// fewer than `n` left (the error of `select` then).
    fn select_many<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyArray1<i64>>> {
        if n as u64 > self.inner.remaining() {
            if self.inner.remaining() == 0 {
                self.inner.select_arm().py_err()?;
            }
            return Err(to_py(Error::State(format!(
                "{n} selections asked, the phase's schedule has {} left (the next phase's arms depend on its rewards)",
                self.inner.remaining()
            ))));
        }
        let mut out = Vec::with_capacity(n.min(1 << 20));
        for _ in 0..n {
            out.push(self.inner.select_arm().py_err()? as i64);
        }
        Ok(out.into_pyarray(py))
    }

    /// Records a reward in [0, 1] of `arm`.
    fn observe(&mut self, arm: i64, reward: f64) -> PyResult<()> {
        let a = arm_index(arm, self.inner.config().k)?;
        self.inner.observe(a, reward).py_err()
    }

    /// Records `rewards[i]` of `arms[i]` in order (stops at the first error,
    /// after the pairs before it).
    fn observe_many(&mut self, arms: PyReadonlyArray1<'_, i64>, rewards: PyReadonlyArray1<'_, f64>) -> PyResult<()> {
        let (arms, rewards) = (arms.as_slice()?, rewards.as_slice()?);
        if arms.len() != rewards.len() {
            return Err(to_py(Error::invalid(
                "rewards",
                format!("needs one reward per arm: {} arms, {} rewards", arms.len(), rewards.len()),
            )));
        }
        let k = self.inner.config().k;
        for (&a, &r) in arms.iter().zip(rewards) {
            self.inner.observe(arm_index(a, k)?, r).py_err()?;
        }
        Ok(())
    }

    #[getter]
    fn k(&self) -> usize {
        self.inner.config().k
    }

    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }

    #[getter]
    fn samples(&self) -> u64 {
        self.inner.samples()
    }

    #[getter]
    fn finished(&self) -> bool {
        self.inner.finished()
    }

    #[getter]
    fn recommendation(&self) -> Option<usize> {
        self.inner.recommendation()
    }

    #[getter]
    fn phase(&self) -> u32 {
        self.inner.phase()
    }

    #[getter]
    fn phases(&self) -> u32 {
        self.inner.config().phases()
    }

    /// Selections the engine can make now (the rest of the phase's schedule).
    #[getter]
    fn remaining(&self) -> u64 {
        self.inner.remaining()
    }

    #[getter]
    fn releases(&self) -> u64 {
        self.inner.releases()
    }

    /// Pulls of each arm the current phase pulls (in the order of `pulled`).
    fn quotas<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.quotas().into_pyarray(py)
    }

    fn active<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.active().into_iter().map(|a| a as u64).collect::<Vec<_>>().into_pyarray(py)
    }

    fn pulled<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.pulled().iter().map(|&a| a as u64).collect::<Vec<_>>().into_pyarray(py)
    }

    fn pulls<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.pulls().to_vec().into_pyarray(py)
    }

    fn estimates<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.estimates().to_vec().into_pyarray(py)
    }

    /// Draws future noise from `seed` (None: operating-system entropy).
    #[pyo3(signature = (seed=None))]
    fn reseed(&mut self, seed: Option<u64>) -> PyResult<()> {
        self.inner.reseed(&seeds(seed)?);
        Ok(())
    }

    /// Whether privacy noise comes from the operating system.
    #[getter]
    fn os_entropy(&self) -> bool {
        self.inner.config().secure
    }

    /// The configuration this engine was built with, as plain values
    /// (`as_json`: their JSON text); see `dpbandits.checkpoint`.
    #[pyo3(signature = (as_json=false))]
    fn noise_parameters<'py>(&self, py: Python<'py>, as_json: bool) -> PyResult<Bound<'py, PyAny>> {
        super::config_values(py, self.inner.config(), as_json)
    }

    /// The configuration the engine was built with, as JSON text.
    fn config_json(&self, py: Python<'_>) -> PyResult<String> {
        super::config_values(py, self.inner.config(), true)?.extract()
    }

    /// The 32-byte keys of the engine's seeded (ChaCha8) generators.
    fn _generator_keys<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        super::generator_keys::generator_keys(&self.inner).iter().map(|key| PyBytes::new(py, key)).collect()
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_fixed_budget_bai_engine")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyFixedBudgetBai { inner: FixedBudgetBai::from_bytes(state).py_err()? })
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
        let config = self.inner.config().clone();
        let runs = py.detach(|| fb::simulate(&config, &means, reps, seed)).py_err()?;
        Ok((runs.recommendations.into_pyarray(py), runs.samples.into_pyarray(py)))
    }

    /// The engine `simulate` runs for replicate `index` of root `seed`.
    fn _replicate(&self, seed: u64, index: u64) -> PyResult<Self> {
        Ok(PyFixedBudgetBai { inner: fb::replicate_engine(self.inner.config(), seed, index).py_err()? })
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
        let config = self.inner.config().clone();
        let out = py.detach(|| fb::audit_runs(&config, &rewards, round, count, seed)).py_err()?;
        Ok(out.into_pyarray(py))
    }
}

/// Unpickling entry point for `FixedBudgetBaiEngine`.
#[pyfunction]
fn _restore_fixed_budget_bai_engine(state: &[u8]) -> PyResult<PyFixedBudgetBai> {
    PyFixedBudgetBai::from_bytes(state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_restore_fixed_budget_bai_engine, m)?)?;
    m.add_class::<PyFixedBudgetBai>()?;
    Ok(())
}
