//! Bindings for the secure (exact discrete) samplers of `noise/` (the
//! lattice noise of `noise/lattice`, from `noise/entropy`).

use pyo3::prelude::*;

use super::errors::IntoPy;
use super::mechanisms::{draws, seeds, Draws};
use crate::noise::entropy::OsEntropy;
use crate::noise::{NoiseSpec, SecureNoise};

/// `count` draws of `spec` made exact on the lattice 2^-`exponent`; from
/// the operating system when `seed` is None, else from the seeded stream
/// "secure-sampler" (tests and reproduction). The one check of the scale is
/// `SecureNoise::new`'s (1 to 2^21 lattice steps: NaN, infinite, zero and
/// negative scales are refused there, naming the argument); the public
/// functions (`dpbandits.laplace`, `gaussian`) check theirs before.
fn draw(py: Python<'_>, spec: NoiseSpec, exponent: i32, count: usize, seed: Option<u64>) -> Draws<'_> {
    let secure = SecureNoise::new(spec, exponent).py_err()?;
    match seed {
        Some(s) => draws(py, seeds(Some(s))?.stream("secure-sampler"), &[count], |r, v| secure.sample_into(r, 0, v)),
        None => draws(py, OsEntropy::new().py_err()?, &[count], |rng, v| secure.sample_into(rng, 0, v)),
    }
}

/// `count` discrete Laplace draws: integers k times 2^-exponent with
/// P[k] ∝ exp(-|k| / t), t = ceil(scale * 2^exponent).
#[pyfunction]
#[pyo3(signature = (scale, exponent, count, seed=None))]
fn sample_discrete_laplace(py: Python<'_>, scale: f64, exponent: i32, count: usize, seed: Option<u64>) -> Draws<'_> {
    draw(py, NoiseSpec::Laplace { scale }, exponent, count, seed)
}

/// `count` discrete Gaussian draws: integers k times 2^-exponent with
/// P[k] ∝ exp(-k^2 / (2 s^2)), s = ceil(sigma * 2^exponent).
#[pyfunction]
#[pyo3(signature = (sigma, exponent, count, seed=None))]
fn sample_discrete_gaussian(py: Python<'_>, sigma: f64, exponent: i32, count: usize, seed: Option<u64>) -> Draws<'_> {
    draw(py, NoiseSpec::Gaussian { sigma }, exponent, count, seed)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sample_discrete_laplace, m)?)?;
    m.add_function(wrap_pyfunction!(sample_discrete_gaussian, m)?)?;
    Ok(())
}
