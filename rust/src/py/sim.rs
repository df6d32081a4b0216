//! Bindings for the simulation loop: built-in environments run entirely in
//! Rust with the GIL released; the caller's thread polls progress and
//! Ctrl-C while rayon runs the replicates.

use std::sync::atomic::Ordering;
use std::time::Duration;

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;

use super::envs::PyShariffSheffetEnv;
use super::errors::IntoPy;
use super::learners::PyLinUcb;
use crate::error::{Error, Result};
use crate::policy::LinUcb;
use crate::rng::SeedSequence;
use crate::sim::{record_points, run_replicates, EpisodeTrace, Progress};

type SimOutput<'py> =
    (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<f64>>);

/// Runs LinUCB-family `learner`'s configuration on the built-in
/// environment `env` for each seed. Returns (record_at, regret[seeds,
/// records], rounds[seeds], seconds[seeds]). `progress(rounds_done)` is
/// called about twice a second from the calling thread.
#[pyfunction]
#[pyo3(signature = (learner, env, horizon, seeds, record_every, progress=None))]
fn simulate_builtin<'py>(
    py: Python<'py>,
    learner: &PyLinUcb,
    env: &PyShariffSheffetEnv,
    horizon: u64,
    seeds: Vec<u64>,
    record_every: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<SimOutput<'py>> {
    if horizon == 0 {
        return Err(Error::invalid("horizon", "must be >= 1")).py_err();
    }
    if horizon > learner.inner.config().horizon {
        return Err(Error::invalid(
            "horizon",
            format!("exceeds the learner's calibrated horizon {}", learner.inner.config().horizon),
        ))
        .py_err();
    }
    let config = *learner.inner.config();
    let params = env.params;
    let state = Progress::default();
    let work = |seed: u64| -> Result<(LinUcb, crate::env::ShariffSheffetEnv)> {
        let root = SeedSequence::from_seed(seed);
        Ok((LinUcb::new(config, &root.child("learner", 0))?, params.build(&root.child("environment", 0))?))
    };
    let mut interrupted = None;
    let results: Vec<Result<EpisodeTrace>> = py.detach(|| {
        std::thread::scope(|scope| {
            let handle = scope.spawn(|| run_replicates(&seeds, horizon, record_every, Some(&state), work));
            let mut last_report = std::time::Instant::now();
            while !handle.is_finished() {
                // Short naps keep small runs fast; Python is called at most
                // five times a second.
                std::thread::sleep(Duration::from_millis(5));
                if last_report.elapsed() < Duration::from_millis(200) {
                    continue;
                }
                last_report = std::time::Instant::now();
                Python::attach(|py| {
                    if let Err(e) = py.check_signals() {
                        state.cancel.store(true, Ordering::Relaxed);
                        interrupted.get_or_insert(e);
                    } else if let Some(cb) = &progress {
                        let done = state.rounds.load(Ordering::Relaxed);
                        if let Err(e) = cb.bind(py).call1((done,)) {
                            state.cancel.store(true, Ordering::Relaxed);
                            interrupted.get_or_insert(e);
                        }
                    }
                });
            }
            handle.join().expect("simulation thread panicked")
        })
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let record_at = record_points(horizon, record_every);
    let mut regret = Vec::with_capacity(seeds.len() * record_at.len());
    let mut rounds = Vec::with_capacity(seeds.len());
    let mut seconds = Vec::with_capacity(seeds.len());
    for r in results {
        let trace = r.py_err()?;
        regret.extend_from_slice(&trace.regret);
        rounds.push(trace.rounds);
        seconds.push(trace.seconds);
    }
    let rows = seeds.len();
    let cols = record_at.len();
    Ok((
        record_at.into_pyarray(py),
        regret.into_pyarray(py).reshape([rows, cols])?,
        rounds.into_pyarray(py),
        seconds.into_pyarray(py),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_builtin, m)?)?;
    Ok(())
}
