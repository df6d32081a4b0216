//! Bindings for samplers and tree counters.

use numpy::{IntoPyArray, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use super::arrays::{expect_shape, row_major, zeroed};
use super::errors::IntoPy;
use super::noise::Noise;
use crate::counter::tree::{Padding, TreeCounter};
use crate::counter::{EpochCounter, Factorization, FactorizationCounter};
use crate::error::Error;
use crate::noise::{fill_gaussian, fill_laplace, fill_symmetric_gaussian, NoiseSpec, WishartSampler};
use crate::rng::SeedSequence;

/// Above this many draws the GIL is released while sampling.
const DETACH_AT: usize = 4096;

pub fn seeds(seed: Option<u64>) -> PyResult<SeedSequence> {
    match seed {
        Some(s) => Ok(SeedSequence::from_seed(s)),
        None => SeedSequence::from_entropy().py_err(),
    }
}

fn run<T: Send>(py: Python<'_>, work: usize, f: impl FnOnce() -> T + Send) -> T {
    if work >= DETACH_AT {
        py.detach(f)
    } else {
        f()
    }
}

/// Sampler output: an array of draws.
pub type Draws<'py> = PyResult<Bound<'py, PyArrayDyn<f64>>>;

/// `dims[0]` draws of shape `dims[1..]`, written by `fill` from `rng` into
/// one fresh buffer; the GIL released for large draws.
pub fn draws<'py, R: Send>(
    py: Python<'py>,
    mut rng: R,
    dims: &[usize],
    fill: impl FnOnce(&mut R, &mut [f64]) + Send,
) -> Draws<'py> {
    let mut v = zeroed(dims[0], dims[1..].iter().product())?;
    let out = run(py, v.len(), move || {
        fill(&mut rng, &mut v);
        v
    });
    out.into_pyarray(py).reshape(dims.to_vec())
}

/// `count` i.i.d. Laplace(0, scale) draws.
#[pyfunction]
#[pyo3(signature = (scale, count, seed=None))]
fn sample_laplace(py: Python<'_>, scale: f64, count: usize, seed: Option<u64>) -> Draws<'_> {
    NoiseSpec::Laplace { scale }.validate(&[]).py_err()?;
    draws(py, seeds(seed)?.stream("sampler"), &[count], |rng, v| fill_laplace(rng, scale, v))
}

/// `count` i.i.d. N(0, sigma^2) draws.
#[pyfunction]
#[pyo3(signature = (sigma, count, seed=None))]
fn sample_gaussian(py: Python<'_>, sigma: f64, count: usize, seed: Option<u64>) -> Draws<'_> {
    NoiseSpec::Gaussian { sigma }.validate(&[]).py_err()?;
    draws(py, seeds(seed)?.stream("sampler"), &[count], |rng, v| fill_gaussian(rng, sigma, v))
}

/// `count` draws of W_p(scale_matrix, df) by the Bartlett decomposition.
#[pyfunction]
#[pyo3(signature = (scale_matrix, df, count, seed=None))]
fn sample_wishart<'py>(
    py: Python<'py>,
    scale_matrix: PyReadonlyArrayDyn<'py, f64>,
    df: f64,
    count: usize,
    seed: Option<u64>,
) -> Draws<'py> {
    let (shape, s) = row_major(&scale_matrix);
    let p = shape.first().copied().unwrap_or(0);
    expect_shape("scale_matrix", &shape, &[p, p])?;
    let sampler = WishartSampler::new(&s, p, df).py_err()?;
    draws(py, seeds(seed)?.stream("sampler"), &[count, p, p], |rng, v| {
        v.chunks_exact_mut(p * p).for_each(|m| sampler.sample_into(rng, m));
    })
}

/// `count` symmetric Gaussian p x p matrices (Z + Z^T)/sqrt(2).
#[pyfunction]
#[pyo3(signature = (sigma, p, count, seed=None))]
fn sample_symmetric_gaussian(py: Python<'_>, sigma: f64, p: usize, count: usize, seed: Option<u64>) -> Draws<'_> {
    NoiseSpec::Gaussian { sigma }.validate(&[]).py_err()?;
    if p == 0 {
        return Err(Error::invalid("p", "must be >= 1")).py_err();
    }
    let p2 = p.checked_mul(p).ok_or_else(|| Error::invalid("p", "too large")).py_err()?;
    draws(py, seeds(seed)?.stream("sampler"), &[count, p, p], |rng, v| {
        v.chunks_exact_mut(p2).for_each(|m| fill_symmetric_gaussian(rng, sigma, p, m));
    })
}

/// (level, first leaf, last leaf, noisy sum) of one node.
type LiveNode<'py> = (u32, u64, u64, Bound<'py, PyArrayDyn<f64>>);

/// Continual-release counter (see `dpbandits.mechanisms.TreeCounter`).
#[pyclass(module = "dpbandits._core", name = "TreeCounter")]
pub struct PyTreeCounter {
    inner: TreeCounter,
}

engine_methods! {
    PyTreeCounter { inner: TreeCounter }, restore _restore_tree_counter, shared [counter, state],
    getters [padded: bool, pad_to: u32];

    #[new]
    #[pyo3(signature = (shape, horizon, noise, seed=None, padded=false, pad_to=None, os_entropy=false, padding="fresh"))]
    fn new(
        shape: Vec<usize>,
        horizon: u64,
        noise: Noise,
        seed: Option<u64>,
        padded: bool,
        pad_to: Option<u32>,
        os_entropy: bool,
        padding: &str,
    ) -> PyResult<Self> {
        let spec = noise.0;
        let inner = match (pad_to, Padding::from_name(padding).py_err()?) {
            (None, Padding::Fresh) => TreeCounter::new(&shape, horizon, spec, padded, &seeds(seed)?),
            (Some(p), mode) => TreeCounter::with_padding_mode(&shape, horizon, spec, p, mode, &seeds(seed)?),
            (None, Padding::Persistent) => {
                Err(Error::invalid("padding", "persistent padding needs pad_to (one draw per tree level)"))
            }
        }
        .py_err()?;
        let inner = inner.with_os_entropy(os_entropy).py_err()?;
        Ok(PyTreeCounter { inner })
    }

    /// Draws all future node noise and padding from a new root (`None`:
    /// operating-system entropy); noise already drawn is kept.
    #[pyo3(signature = (seed=None))]
    fn reseed(&mut self, seed: Option<u64>) -> PyResult<()> {
        self.inner.reseed(&seeds(seed)?);
        Ok(())
    }

    /// How releases are padded: "fresh" (also when not padded) or "persistent".
    #[getter]
    fn padding(&self) -> &'static str {
        self.inner.padding_mode().name()
    }

    /// (level, first_leaf, last_leaf, noisy_sum) of the live nodes.
    fn live_nodes<'py>(&self, py: Python<'py>) -> PyResult<Vec<LiveNode<'py>>> {
        self.inner
            .live_nodes()
            .into_iter()
            .map(|n| {
                Ok((n.level, n.first, n.last, n.noisy.to_vec().into_pyarray(py).reshape(self.inner.shape().to_vec())?))
            })
            .collect()
    }
}

/// The encoder of a factorization counter from its Python name and
/// parameters: "sqrt", "blt" (with `theta`, `omega`) or "smooth-binary"
/// (`theta` = [height, ones]).
pub fn factorization(kind: &str, theta: Vec<f64>, omega: Vec<f64>) -> PyResult<Factorization> {
    let f = match (kind, &theta[..]) {
        ("sqrt", []) if omega.is_empty() => Factorization::Sqrt,
        ("blt", _) => Factorization::Blt { theta, omega },
        ("smooth-binary", &[h, w])
            if omega.is_empty()
                && h.fract() == 0.0
                && w.fract() == 0.0
                && h >= 0.0
                && w >= 0.0
                && h < 64.0
                && w < 64.0 =>
        {
            Factorization::SmoothBinary { height: h as u32, ones: w as u32 }
        }
        _ => {
            return Err(Error::invalid(
                "counter",
                format!(
                    "unknown factorization {kind:?} (\"sqrt\" without parameters, \"blt\", or \"smooth-binary\" \
                     with [height, ones])"
                ),
            ))
            .py_err()
        }
    };
    f.validate().py_err()?;
    Ok(f)
}

/// Continual counter by a Toeplitz factorization of the prefix-sum matrix
/// (see `dpbandits.mechanisms.TreeCounter(counter=...)`).
#[pyclass(module = "dpbandits._core", name = "FactorizationCounter")]
pub struct PyFactorizationCounter {
    inner: FactorizationCounter,
}

engine_methods! {
    PyFactorizationCounter { inner: FactorizationCounter }, restore _restore_factorization_counter,
    shared [counter, state];

    #[new]
    #[pyo3(signature = (shape, horizon, noise, factorization_kind, theta=Vec::new(), omega=Vec::new(), seed=None, os_entropy=false))]
    fn new(
        shape: Vec<usize>,
        horizon: u64,
        noise: Noise,
        factorization_kind: &str,
        theta: Vec<f64>,
        omega: Vec<f64>,
        seed: Option<u64>,
        os_entropy: bool,
    ) -> PyResult<Self> {
        let f = factorization(factorization_kind, theta, omega)?;
        let inner = FactorizationCounter::new(&shape, horizon, noise.0, f, &seeds(seed)?).py_err()?;
        let inner = inner.with_os_entropy(os_entropy).py_err()?;
        Ok(PyFactorizationCounter { inner })
    }

    /// Draws all future noise from a new root (`None`: operating-system
    /// entropy); noise already drawn stays in the buffers.
    #[pyo3(signature = (seed=None))]
    fn reseed(&mut self, seed: Option<u64>) -> PyResult<()> {
        self.inner.reseed(&seeds(seed)?);
        Ok(())
    }

    /// ("sqrt" | "blt" | "smooth-binary", theta, omega).
    #[getter]
    fn factorization(&self) -> (&'static str, Vec<f64>, Vec<f64>) {
        match self.inner.factorization() {
            Factorization::Sqrt => ("sqrt", Vec::new(), Vec::new()),
            Factorization::Blt { theta, omega } => ("blt", theta.clone(), omega.clone()),
            Factorization::SmoothBinary { height, ones } => {
                ("smooth-binary", vec![f64::from(*height), f64::from(*ones)], Vec::new())
            }
        }
    }

    /// The first `n` encoder coefficients c_0..c_{n-1}.
    fn encoder<'py>(&self, py: Python<'py>, n: usize) -> Bound<'py, numpy::PyArray1<f64>> {
        self.inner.factorization().encoder(n).into_pyarray(py)
    }

    /// Factorization counters never pad.
    #[getter]
    #[allow(clippy::unused_self)]
    fn padded(&self) -> bool {
        false
    }
}

/// Continual counter releasing each geometric epoch's sum once (see
/// `dpbandits.mechanisms.EpochCounter`).
#[pyclass(module = "dpbandits._core", name = "EpochCounter")]
pub struct PyEpochCounter {
    inner: EpochCounter,
}

engine_methods! {
    PyEpochCounter { inner: EpochCounter }, restore _restore_epoch_counter, shared [counter, state],
    getters [epochs: u32];

    #[new]
    #[pyo3(signature = (shape, horizon, noise, first_epoch, epoch_ratio, seed=None, os_entropy=false))]
    fn new(
        shape: Vec<usize>,
        horizon: u64,
        noise: Noise,
        first_epoch: u64,
        epoch_ratio: f64,
        seed: Option<u64>,
        os_entropy: bool,
    ) -> PyResult<Self> {
        let inner = EpochCounter::new(&shape, horizon, noise.0, first_epoch, epoch_ratio, &seeds(seed)?).py_err()?;
        let inner = inner.with_os_entropy(os_entropy).py_err()?;
        Ok(PyEpochCounter { inner })
    }

    /// Draws all future epoch noise from a new root (`None`:
    /// operating-system entropy); released epochs are kept.
    #[pyo3(signature = (seed=None))]
    fn reseed(&mut self, seed: Option<u64>) -> PyResult<()> {
        self.inner.reseed(&seeds(seed)?);
        Ok(())
    }

    /// (first epoch length n_0, growth ratio r).
    #[getter]
    fn schedule(&self) -> (u64, f64) {
        self.inner.schedule()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sample_laplace, m)?)?;
    m.add_function(wrap_pyfunction!(sample_gaussian, m)?)?;
    m.add_function(wrap_pyfunction!(sample_symmetric_gaussian, m)?)?;
    m.add_function(wrap_pyfunction!(sample_wishart, m)?)?;
    PyTreeCounter::register(m)?;
    PyFactorizationCounter::register(m)?;
    PyEpochCounter::register(m)?;
    Ok(())
}
