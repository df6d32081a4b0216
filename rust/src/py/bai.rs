//! Bindings for the best-arm identification engine (`crate::policy::bai`);
//! built by `dpbandits.learners.bai`. Conversion, validation of shapes and
//! GIL release only.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::{to_py, unknown, IntoPy};
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::error::Error;
use crate::noise::NoiseSpec;
use crate::policy::bai::{self, Bai, BaiConfig, BaiRule, BaiStop, BernoulliRewards, LocalResponse};

/// Best-arm identification engine (Top Two samplers with a stopping rule);
/// built by `dpbandits.learners.bai`.
#[pyclass(module = "dpbandits._core", name = "BaiEngine")]
pub struct PyBai {
    pub(crate) inner: Bai,
}

fn arm_index(arm: i64, k: usize) -> PyResult<usize> {
    if arm < 0 || arm as u64 >= k as u64 {
        return Err(to_py(Error::invalid("arm", format!("must lie in [0, {k}), got {arm}"))));
    }
    Ok(arm as usize)
}

#[pymethods]
impl PyBai {
    #[new]
    #[pyo3(signature = (k, *, rule="top_two", epsilon=None, beta=0.5, first=1, ratio=1.0, forget=false,
                        noise=Noise(NoiseSpec::Zero), secure=false, thresholds=vec![0.0], c1=3.0, radii=vec![],
                        max_samples=100_000_000, seed=None, stop="shifted", local=None))]
    fn new(
        k: usize,
        rule: &str,
        epsilon: Option<f64>,
        beta: f64,
        first: u64,
        ratio: f64,
        forget: bool,
        noise: Noise,
        secure: bool,
        thresholds: Vec<f64>,
        c1: f64,
        radii: Vec<f64>,
        max_samples: u64,
        seed: Option<u64>,
        stop: &str,
        local: Option<(u64, u32)>,
    ) -> PyResult<Self> {
        let stop = match stop {
            "shifted" => BaiStop::Shifted,
            "chernoff" => BaiStop::Chernoff,
            _ => return unknown("stop", "'shifted' or 'chernoff'", stop),
        };
        let rule = match rule {
            "top_two" => BaiRule::TopTwo { divergence_epsilon: epsilon },
            "top_two_stopping" => BaiRule::StoppingTopTwo,
            "top_two_chernoff" => BaiRule::ChernoffTopTwo,
            "top_two_chernoff_ids" => BaiRule::ChernoffIds,
            "adap" => match epsilon {
                Some(e) => BaiRule::AdaP { epsilon: e },
                None => return Err(to_py(Error::invalid("epsilon", "AdaP-TT needs epsilon"))),
            },
            "adap_chernoff" => match epsilon {
                Some(e) => BaiRule::AdaPChernoff { epsilon: e },
                None => return Err(to_py(Error::invalid("epsilon", "AdaP-TT* needs epsilon"))),
            },
            _ => {
                return unknown(
                    "rule",
                    "'top_two', 'top_two_stopping', 'top_two_chernoff', 'top_two_chernoff_ids', 'adap' or \
                     'adap_chernoff'",
                    rule,
                )
            }
        };
        let config = BaiConfig {
            k,
            rule,
            beta,
            first,
            ratio,
            forget,
            noise: noise.0,
            secure,
            thresholds,
            c1,
            radii,
            max_samples,
            stop,
            local: local.map(|(num, bits)| LocalResponse { num, bits }),
        };
        Ok(PyBai { inner: Bai::new(config, &seeds(seed)?).py_err()? })
    }

    /// The next arm to pull.
    fn select(&mut self) -> PyResult<usize> {
        self.inner.select_arm().py_err()
    }

    /// Records a reward in [0, 1] of `arm`.
    fn observe(&mut self, arm: i64, reward: f64) -> PyResult<()> {
        let a = arm_index(arm, self.inner.config().k)?;
        self.inner.observe(a, reward).py_err()
    }

    /// Records `rewards[i]` of `arms[i]` in order (stops at the first error,
    /// after the pairs before it).
    fn observe_many(
        &mut self,
        py: Python<'_>,
        arms: PyReadonlyArray1<i64>,
        rewards: PyReadonlyArray1<f64>,
    ) -> PyResult<()> {
        let (arms, rewards) = (arms.as_slice()?.to_vec(), rewards.as_slice()?.to_vec());
        if arms.len() != rewards.len() {
            return Err(to_py(Error::invalid(
                "rewards",
                format!("needs one reward per arm: {} arms, {} rewards", arms.len(), rewards.len()),
            )));
        }
        let k = self.inner.config().k;
        for &a in &arms {
            arm_index(a, k)?;
        }
        let inner = &mut self.inner;
        py.detach(|| {
            for (&a, &r) in arms.iter().zip(&rewards) {
                inner.observe(a as usize, r)?;
            }
            Ok(())
        })
        .py_err()
    }

    /// `n` decisions in a row (without rewards in between).
    fn select_many<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let inner = &mut self.inner;
        let out: crate::error::Result<Vec<i64>> =
            py.detach(|| (0..n).map(|_| inner.select_arm().map(|a| a as i64)).collect());
        Ok(out.py_err()?.into_pyarray(py))
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
    fn should_stop(&self) -> bool {
        self.inner.should_stop()
    }

    #[getter]
    fn recommendation(&self) -> Option<usize> {
        self.inner.recommendation()
    }

    fn pulls<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.pulls().into_pyarray(py)
    }

    fn released_counts<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        self.inner.released_counts().into_pyarray(py)
    }

    fn released_sums<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.released_sums().into_pyarray(py)
    }

    fn means<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.means().into_pyarray(py)
    }

    /// Draws all future noise and coin flips from a new root (`None`:
    /// operating-system entropy).
    #[pyo3(signature = (seed=None))]
    fn reseed(&mut self, seed: Option<u64>) -> PyResult<()> {
        self.inner.reseed(&seeds(seed)?);
        Ok(())
    }

    /// Batches released so far (the learner's policy version).
    #[getter]
    fn releases(&self) -> u64 {
        self.inner.releases()
    }

    /// The law of the next selection from released values and selection
    /// counts (the served policy).
    fn sampling_probabilities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.sampling_probabilities().into_pyarray(py)
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

    /// The 32-byte keys of the engine's seeded (ChaCha8) generators (see
    /// `generator_keys`).
    fn _generator_keys<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        super::generator_keys::generator_keys(&self.inner).iter().map(|key| PyBytes::new(py, key)).collect()
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let restore = py.import("dpbandits._core")?.getattr("_restore_bai_engine")?;
        (restore, (self.to_bytes(py),)).into_pyobject(py)
    }

    /// The configuration the engine was built with, as JSON text (compared
    /// with a fresh engine's when a checkpoint is restored).
    fn config_json(&self, py: Python<'_>) -> PyResult<String> {
        super::config_values(py, self.inner.config(), true)?.extract()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyBai { inner: Bai::from_bytes(state).py_err()? })
    }

    /// `reps` replicates on Bernoulli arms `means` (GIL released, in
    /// parallel): stopping times, recommended arms (-1: none) and whether
    /// the rule stopped within `max_samples`.
    #[allow(clippy::type_complexity)]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        means: Vec<f64>,
        reps: usize,
        seed: u64,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<bool>>)> {
        let config = self.inner.config().clone();
        let runs = py.detach(|| bai::simulate(&config, &means, reps, seed)).py_err()?;
        Ok((runs.stopping_times.into_pyarray(py), runs.recommendations.into_pyarray(py), runs.stopped.into_pyarray(py)))
    }

    /// The engine `simulate` runs for replicate `index` of root `seed`.
    fn _replicate(&self, seed: u64, index: u64) -> PyResult<Self> {
        Ok(PyBai { inner: bai::replicate_engine(self.inner.config(), seed, index).py_err()? })
    }

    /// Audit runs: `count` fresh engines (seeds (`seed`, run)) fed reward
    /// `rewards[i]` at their i-th observation, whatever the arm; per run the
    /// released sum of the batch holding observation `round` (NaN when it
    /// does not end within the rewards given).
    fn _audit_runs<'py>(
        &self,
        py: Python<'py>,
        rewards: Vec<f64>,
        round: usize,
        count: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let config = self.inner.config().clone();
        let out = py.detach(|| bai::audit_runs(&config, &rewards, round, count, seed)).py_err()?;
        Ok(out.into_pyarray(py))
    }
}

/// The Bernoulli rewards of one replicate of `BaiEngine.simulate`.
#[pyclass(module = "dpbandits._core", name = "BaiBernoulliRewards")]
pub struct PyBaiRewards {
    inner: BernoulliRewards,
    k: usize,
}

#[pymethods]
impl PyBaiRewards {
    #[new]
    fn new(means: Vec<f64>, seed: u64, index: u64) -> PyResult<Self> {
        let k = means.len();
        Ok(PyBaiRewards { inner: BernoulliRewards::new(&means, seed, index).py_err()?, k })
    }

    /// The next reward of `arm`.
    fn pull(&mut self, arm: i64) -> PyResult<f64> {
        let a = arm_index(arm, self.k)?;
        Ok(self.inner.pull(a))
    }
}

/// Unpickling entry point for `BaiEngine`.
#[pyfunction]
fn _restore_bai_engine(state: &[u8]) -> PyResult<PyBai> {
    PyBai::from_bytes(state)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_restore_bai_engine, m)?)?;
    m.add_class::<PyBai>()?;
    m.add_class::<PyBaiRewards>()?;
    Ok(())
}
