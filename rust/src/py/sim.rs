//! Bindings for the simulation loop: built-in environments run entirely in
//! Rust with the GIL released; the caller's thread polls progress and
//! Ctrl-C while rayon runs the replicates.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use numpy::{IntoPyArray, PyArray1, PyArray3, PyArrayMethods};
use pyo3::prelude::*;

use super::envs::PyShariffSheffetEnv;
use super::errors::IntoPy;
use super::learners::PyLinUcb;
use crate::env::ShariffSheffetEnv;
use crate::error::{Error, Result};
use crate::policy::{Learner, LinUcb};
use crate::rng::SeedSequence;
use crate::sim::{record_points, run_shared_replicates, EpisodeTrace, Progress};

type SimOutput<'py> =
    (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray3<f64>>, Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<f64>>);

/// Runs `work` on another thread with the GIL released, calling
/// `progress(rounds_done)` at most five times a second and stopping the
/// work at the next round boundary on Ctrl-C or a raising callback.
fn with_progress<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    work: impl FnOnce(&Progress) -> T + Send,
) -> PyResult<T> {
    let state = Progress::default();
    let mut interrupted = None;
    let out = py.detach(|| {
        std::thread::scope(|scope| {
            let handle = scope.spawn(|| work(&state));
            let mut last_report = Instant::now();
            while !handle.is_finished() {
                // Short naps keep small runs fast.
                std::thread::sleep(Duration::from_millis(5));
                if last_report.elapsed() < Duration::from_millis(200) {
                    continue;
                }
                last_report = Instant::now();
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

/// Runs the LinUCB-family `learners` together on the built-in environment
/// `env` (one shared realization per seed, common random numbers), one
/// replicate per seed in parallel. Returns (record_at,
/// regret[learners, seeds, records], rounds[seeds], seconds[seeds]).
#[pyfunction]
#[pyo3(signature = (learners, env, horizon, seeds, record_every, progress=None))]
fn simulate_builtin<'py>(
    py: Python<'py>,
    learners: Vec<PyRef<'py, PyLinUcb>>,
    env: &PyShariffSheffetEnv,
    horizon: u64,
    seeds: Vec<u64>,
    record_every: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<SimOutput<'py>> {
    if horizon == 0 {
        return Err(Error::invalid("horizon", "must be >= 1")).py_err();
    }
    if learners.is_empty() {
        return Err(Error::invalid("learners", "give at least one learner")).py_err();
    }
    let configs: Vec<_> = learners.iter().map(|l| *l.inner.config()).collect();
    if let Some(c) = configs.iter().find(|c| horizon > c.horizon) {
        return Err(Error::invalid("horizon", format!("exceeds a learner's calibrated horizon {}", c.horizon)))
            .py_err();
    }
    let params = env.params;
    let make = |seed: u64| -> Result<(Vec<Box<dyn Learner>>, ShariffSheffetEnv)> {
        let root = SeedSequence::from_seed(seed);
        let learner_root = root.child("learner", 0);
        let built = configs
            .iter()
            .map(|c| LinUcb::new(*c, &learner_root).map(|l| Box::new(l) as Box<dyn Learner>))
            .collect::<Result<Vec<_>>>()?;
        Ok((built, params.build(&root.child("environment", 0))?))
    };
    let results: Vec<Result<Vec<EpisodeTrace>>> =
        with_progress(py, progress, |state| run_shared_replicates(&seeds, horizon, record_every, Some(state), make))?;
    let record_at = record_points(horizon, record_every);
    let (n_learners, n_seeds, n_records) = (configs.len(), seeds.len(), record_at.len());
    let mut regret = vec![f64::NAN; n_learners * n_seeds * n_records];
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_builtin, m)?)?;
    Ok(())
}
