//! Bindings for the secure (exact discrete) samplers of `noise/` (the
//! lattice noise of `noise/lattice`, from `noise/entropy`).

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use super::errors::IntoPy;
use super::mechanisms::{draws, seeds, Draws};
use super::noise::Noise;
use crate::error::Error;
use crate::noise::entropy::OsEntropy;
use crate::noise::timing_audit::{measure, TimedKind};
use crate::noise::{NoiseSpec, SecureKind};

/// `count` draws of the lattice noise value `noise` (integers k times
/// 2^-exponent, P[k] ∝ exp(-|k| / t) for the discrete Laplace with t steps,
/// exp(-k^2 / (2 s^2)) for the discrete Gaussian with sigma s steps); from
/// the operating system when `seed` is None, else from the seeded stream
/// "secure-sampler" (tests and reproduction). The scale arrives in whole
/// steps, computed by the privacy layer; nothing is rounded here.
#[pyfunction]
#[pyo3(signature = (noise, count, seed=None))]
fn sample_lattice(py: Python<'_>, noise: Noise, count: usize, seed: Option<u64>) -> Draws<'_> {
    let secure = match noise.0 {
        NoiseSpec::Lattice(s) if !matches!(s.kind(), SecureKind::SymmetricGaussian { .. }) => s,
        other => return Err(Error::invalid("noise", format!("expected scalar lattice noise, got {other:?}"))).py_err(),
    };
    match seed {
        Some(s) => draws(py, seeds(Some(s))?.stream("secure-sampler"), &[count], |r, v| secure.sample_into(r, 0, v)),
        None => draws(py, OsEntropy::new().py_err()?, &[count], |rng, v| secure.sample_into(rng, 0, v)),
    }
}

/// `count` releases of `kind` (see `noise::timing_audit`), each timed
/// alone in processor ticks: (noise values, ticks, rounds).
#[pyfunction]
#[pyo3(signature = (kind, count, seed))]
#[allow(clippy::type_complexity)]
fn timing_audit<'py>(
    py: Python<'py>,
    kind: &str,
    count: usize,
    seed: u64,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>)> {
    let kind = TimedKind::from_name(kind).py_err()?;
    let m = py.detach(|| measure(kind, count, seed)).py_err()?;
    Ok((m.values.into_pyarray(py), m.ticks.into_pyarray(py), m.rounds.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sample_lattice, m)?)?;
    m.add_function(wrap_pyfunction!(timing_audit, m)?)?;
    Ok(())
}
