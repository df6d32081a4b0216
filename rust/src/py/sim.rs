//! Bindings for the simulation loop: built-in environments run entirely in
//! Rust with the GIL released; the caller's thread polls progress and
//! Ctrl-C while rayon runs the replicates.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use numpy::{IntoPyArray, PyArray1, PyArray3, PyArrayMethods};
use pyo3::prelude::*;

use super::errors::IntoPy;
use crate::env::{Environment, EnvironmentFactory};
use crate::error::{try_filled, Error, Result};
use crate::policy::{Learner, LearnerFactory, OsEntropyFactory};
use crate::rng::SeedSequence;
use crate::sim::{record_points, run_shared_replicates, EpisodeTrace, Progress};

type SimOutput<'py> =
    (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray3<f64>>, Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<f64>>);

/// Simulations of at most this many rounds in all (learners x replicates
/// x horizon) run on the calling thread: a watcher thread for progress
/// and Ctrl-C would cost more than the run. Small, because such a run
/// cannot be interrupted: 1024 rounds of the costliest learners (about a
/// millisecond a round at d = 64, K = 4096) stay near a second.
const INLINE_ROUNDS: u64 = 1 << 10;

/// Runs `work` on another thread with the GIL released, calling
/// `progress(rounds_done)` at most five times a second and stopping the
/// work at the next round boundary on Ctrl-C or a raising callback; a
/// `short` run (see [`INLINE_ROUNDS`]) runs on this thread, GIL released.
fn with_progress<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    short: bool,
    work: impl FnOnce(&Progress) -> T + Send,
) -> PyResult<T> {
    let state = Progress::default();
    if short {
        return Ok(py.detach(|| work(&state)));
    }
    let mut interrupted = None;
    let out = py.detach(|| {
        std::thread::scope(|scope| {
            let state_ref = &state;
            // The worker says when it is done, so a short run returns at
            // once (no fixed nap before the first check); meanwhile the
            // caller wakes five times a second for progress and Ctrl-C.
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let handle = scope.spawn(move || {
                let out = work(state_ref);
                let _ = done_tx.send(());
                out
            });
            while let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(Duration::from_millis(200)) {
                Python::attach(|py| {
                    let result = py.check_signals().and_then(|()| match &progress {
                        Some(cb) => cb.bind(py).call1((state.rounds.load(Ordering::Relaxed),)).map(|_| ()),
                        None => Ok(()),
                    });
                    if let Err(e) = result {
                        state.cancel.store(true, Ordering::Relaxed);
                        interrupted.get_or_insert(e);
                    }
                });
            }
            handle.join().expect("simulation thread panicked")
        })
    });
    match interrupted {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// A learner configuration handed to the simulation loop; every engine
/// class returns one from its `_factory()` method.
#[pyclass(module = "dpbandits._core", name = "LearnerFactory", frozen)]
pub struct PyLearnerFactory {
    pub(crate) inner: Arc<dyn LearnerFactory>,
}

impl PyLearnerFactory {
    /// The factory of `inner`; with `os_entropy`, every replicate draws its
    /// privacy noise from the operating system (secure mode).
    pub fn with_entropy(inner: impl LearnerFactory + 'static, os_entropy: bool) -> Self {
        let inner: Arc<dyn LearnerFactory> =
            if os_entropy { Arc::new(OsEntropyFactory(inner)) } else { Arc::new(inner) };
        PyLearnerFactory { inner }
    }
}

#[pymethods]
impl PyLearnerFactory {
    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.horizon()
    }
}

/// A built-in environment's configuration handed to the simulation loop;
/// every built-in environment class returns one from `_factory()`.
#[pyclass(module = "dpbandits._core", name = "EnvironmentFactory", frozen)]
pub struct PyEnvironmentFactory {
    pub(crate) inner: Arc<dyn EnvironmentFactory>,
}

impl PyEnvironmentFactory {
    pub fn new(inner: impl EnvironmentFactory + 'static) -> Self {
        PyEnvironmentFactory { inner: Arc::new(inner) }
    }
}

/// Checks the replicate seed tables: one environment seed per replicate
/// and, per learner, one learner seed per replicate.
fn check_replicates(horizon: u64, n_learners: usize, env_seeds: &[u64], learner_seeds: &[Vec<u64>]) -> Result<()> {
    if horizon == 0 {
        return Err(Error::invalid("horizon", "must be >= 1"));
    }
    if n_learners == 0 {
        return Err(Error::invalid("learners", "give at least one learner"));
    }
    if env_seeds.is_empty() {
        return Err(Error::invalid("seeds", "give at least one seed"));
    }
    if learner_seeds.len() != n_learners || learner_seeds.iter().any(|s| s.len() != env_seeds.len()) {
        return Err(Error::invalid("learner_seeds", "need one row per learner and one seed per replicate"));
    }
    Ok(())
}

/// The record points and the NaN-filled `learners x seeds x records`
/// regret buffer, allocated fallibly before any work is done.
fn result_buffers(horizon: u64, record_every: u64, n_learners: usize, n_seeds: usize) -> Result<(Vec<u64>, Vec<f64>)> {
    let record_at = record_points(horizon, record_every)?;
    let total = n_learners.checked_mul(n_seeds).and_then(|v| v.checked_mul(record_at.len())).ok_or_else(|| {
        Error::Allocation {
            name: "seeds",
            what: format!("{n_learners} x {n_seeds} x {} regret records (overflow)", record_at.len()),
        }
    })?;
    Ok((record_at, try_filled("seeds", total, f64::NAN)?))
}

/// The learners and the environment of one replicate.
type Replicate = (Vec<Box<dyn Learner>>, Box<dyn Environment>);

/// Runs `learners` together on the built-in environment `env` (one shared
/// realization per replicate, common random numbers), replicates in
/// parallel. Replicate r builds the environment from `env_seeds[r]` and
/// learner l from `learner_seeds[l][r]`. Returns (record_at,
/// regret[learners, replicates, records], rounds[replicates],
/// seconds[replicates]).
#[pyfunction]
#[pyo3(signature = (learners, env, horizon, env_seeds, learner_seeds, record_every, progress=None))]
fn simulate_builtin<'py>(
    py: Python<'py>,
    learners: Vec<PyRef<'py, PyLearnerFactory>>,
    env: PyRef<'py, PyEnvironmentFactory>,
    horizon: u64,
    env_seeds: Vec<u64>,
    learner_seeds: Vec<Vec<u64>>,
    record_every: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<SimOutput<'py>> {
    check_replicates(horizon, learners.len(), &env_seeds, &learner_seeds).py_err()?;
    let factories: Vec<Arc<dyn LearnerFactory>> = learners.iter().map(|l| Arc::clone(&l.inner)).collect();
    if let Some(h) = factories.iter().map(|f| f.horizon()).find(|&h| horizon > h) {
        return Err(Error::invalid("horizon", format!("exceeds a learner's calibrated horizon {h}"))).py_err();
    }
    let (record_at, mut regret) = result_buffers(horizon, record_every, factories.len(), env_seeds.len()).py_err()?;
    let env_factory = Arc::clone(&env.inner);
    let replicates: Vec<u64> = (0..env_seeds.len() as u64).collect();
    let make = |r: u64| -> Result<Replicate> {
        let r = r as usize;
        // Learner noise ("tree", ...) and environment ("environment/...")
        // streams have distinct names, so with equal seeds a replicate is
        // exactly `learner.spawn(seed)` on the environment built with `seed`.
        let built = factories
            .iter()
            .zip(&learner_seeds)
            .map(|(f, seeds)| f.build(&SeedSequence::from_seed(seeds[r])))
            .collect::<Result<Vec<_>>>()?;
        Ok((built, env_factory.build(&SeedSequence::from_seed(env_seeds[r]))?))
    };
    let total = horizon.saturating_mul(env_seeds.len() as u64).saturating_mul(factories.len() as u64);
    let results: Vec<Result<Vec<EpisodeTrace>>> = with_progress(py, progress, total <= INLINE_ROUNDS, |state| {
        run_shared_replicates(&replicates, horizon, record_every, Some(state), make)
    })?;
    let (n_learners, n_seeds, n_records) = (factories.len(), env_seeds.len(), record_at.len());
    let mut rounds = Vec::with_capacity(n_seeds);
    let mut seconds = Vec::with_capacity(n_seeds);
    for (s, r) in results.into_iter().enumerate() {
        let traces = r.py_err()?;
        for (l, trace) in traces.iter().enumerate() {
            let at = (l * n_seeds + s) * n_records;
            regret[at..at + trace.regret.len()].copy_from_slice(&trace.regret);
        }
        rounds.push(traces[0].rounds);
        seconds.push(traces[0].seconds);
    }
    Ok((
        record_at.into_pyarray(py),
        regret.into_pyarray(py).reshape([n_learners, n_seeds, n_records])?,
        rounds.into_pyarray(py),
        seconds.into_pyarray(py),
    ))
}

/// A Python object following the environment protocol
/// (`decision_set(t)`, `reward(t, index)`, optional `mean_rewards(t)`),
/// driven by the same loop as the built-in environments. Each call takes
/// the GIL; a Python exception stops the run and is re-raised afterwards.
struct PythonEnvironment {
    obj: Py<PyAny>,
    has_means: bool,
    t: u64,
    d: usize,
    k: usize,
    means: Vec<f64>,
    error: Option<PyErr>,
}

impl PythonEnvironment {
    fn new(obj: Py<PyAny>) -> PyResult<Self> {
        let (has_means, ok) = Python::attach(|py| {
            let b = obj.bind(py);
            let ok = b.hasattr("decision_set").unwrap_or(false) && b.hasattr("reward").unwrap_or(false);
            (b.hasattr("mean_rewards").unwrap_or(false), ok)
        });
        if !ok {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "invalid argument `env`: needs decision_set(t) and reward(t, index)",
            ));
        }
        Ok(PythonEnvironment { obj, has_means, t: 0, d: 0, k: 0, means: Vec::new(), error: None })
    }

    /// Runs `f` with the GIL; a Python error is kept for the caller.
    fn call<T>(&mut self, f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<T>) -> Result<T> {
        let obj = &self.obj;
        match Python::attach(|py| f(py, obj.bind(py))) {
            Ok(v) => Ok(v),
            Err(e) => {
                self.error = Some(e);
                Err(Error::State("the Python environment raised".into()))
            }
        }
    }
}

/// `value` as a C-contiguous float64 array's (shape, entries).
fn float_array(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<(Vec<usize>, Vec<f64>)> {
    let arr = py.import("numpy")?.call_method1("ascontiguousarray", (value, "float64"))?;
    let view: numpy::PyReadonlyArrayDyn<'_, f64> = arr.extract()?;
    let (shape, data) = super::arrays::row_major(&view);
    Ok((shape, data.into_owned()))
}

impl crate::env::Environment for PythonEnvironment {
    fn dim(&self) -> usize {
        self.d
    }

    fn num_actions(&self) -> usize {
        self.k
    }

    fn next_round(&mut self, t: u64, set: &mut crate::env::DecisionSet) -> Result<()> {
        self.t = t;
        let has_means = self.has_means;
        let (shape, features, means) = self.call(|py, env| {
            let (shape, features) = float_array(py, &env.call_method1("decision_set", (t,))?)?;
            let means =
                if has_means { float_array(py, &env.call_method1("mean_rewards", (t,))?)?.1 } else { Vec::new() };
            Ok((shape, features, means))
        })?;
        let [k, d] = shape[..] else {
            return Err(Error::invalid("decision_set", format!("must return a (k, d) array, got shape {shape:?}")));
        };
        if k == 0 || (has_means && means.len() != k) {
            return Err(Error::invalid(
                "mean_rewards",
                format!("must hold one mean per action ({k}), got {}", means.len()),
            ));
        }
        crate::error::check_finite("decision_set", &features)?;
        (self.d, self.k, self.means) = (d, k, means);
        *set = crate::env::DecisionSet { k, d, features };
        Ok(())
    }

    fn feedback(&mut self, index: usize) -> Result<crate::env::Feedback<'_>> {
        let t = self.t;
        let y = self.call(|_, env| env.call_method1("reward", (t, index))?.extract::<f64>())?;
        Ok(crate::env::Feedback::Reward(y))
    }

    fn regret(&self, index: usize) -> Option<f64> {
        let best = self.means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        self.means.get(index).map(|m| best - m)
    }
}

/// Runs `learner`'s configuration on Python environments, one per
/// replicate: `factory(env_seeds[r])` returns the environment of replicate
/// r, and the learner is built from `learner_seeds[r]`. Same loop as
/// `simulate_builtin`, replicates one after the other (each round calls
/// into Python). Returns (record_at, regret[1, replicates, records],
/// rounds, seconds).
#[pyfunction]
#[pyo3(signature = (learner, factory, horizon, env_seeds, learner_seeds, record_every, progress=None))]
fn simulate_python_env<'py>(
    py: Python<'py>,
    learner: PyRef<'py, PyLearnerFactory>,
    factory: Py<PyAny>,
    horizon: u64,
    env_seeds: Vec<u64>,
    learner_seeds: Vec<u64>,
    record_every: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<SimOutput<'py>> {
    let learner_seeds = vec![learner_seeds];
    check_replicates(horizon, 1, &env_seeds, &learner_seeds).py_err()?;
    let learner = Arc::clone(&learner.inner);
    if horizon > learner.horizon() {
        return Err(Error::invalid("horizon", format!("must lie in [1, {}]", learner.horizon()))).py_err();
    }
    let (record_at, mut regret) = result_buffers(horizon, record_every, 1, env_seeds.len()).py_err()?;
    let (mut rounds, mut seconds) = (Vec::new(), Vec::new());
    for (s, &seed) in env_seeds.iter().enumerate() {
        let mut env = PythonEnvironment::new(factory.bind(py).call1((seed,))?.unbind())?;
        let mut engine = learner.build(&SeedSequence::from_seed(learner_seeds[0][s])).py_err()?;
        let run = with_progress(py, progress.as_ref().map(|p| p.clone_ref(py)), false, |state| {
            crate::sim::run_episode(engine.as_mut(), &mut env, horizon, record_every, Some(state))
        })?;
        if let Some(e) = env.error.take() {
            return Err(e);
        }
        let trace = run.py_err()?;
        let at = s * record_at.len();
        regret[at..at + trace.regret.len()].copy_from_slice(&trace.regret);
        rounds.push(trace.rounds);
        seconds.push(trace.seconds);
    }
    let n_seeds = env_seeds.len();
    let n_records = record_at.len();
    Ok((
        record_at.into_pyarray(py),
        regret.into_pyarray(py).reshape([1, n_seeds, n_records])?,
        rounds.into_pyarray(py),
        seconds.into_pyarray(py),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLearnerFactory>()?;
    m.add_class::<PyEnvironmentFactory>()?;
    m.add_function(wrap_pyfunction!(simulate_builtin, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_python_env, m)?)?;
    Ok(())
}
