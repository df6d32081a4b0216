//! Bindings for the secure (exact discrete) samplers of `noise/` (the
//! lattice noise of `noise/lattice`, from `noise/entropy`).

use pyo3::prelude::*;

use super::errors::IntoPy;
use super::mechanisms::{draws, seeds, Draws};
use super::noise::Noise;
use crate::error::Error;
use crate::noise::entropy::OsEntropy;
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sample_lattice, m)?)?;
    Ok(())
}
