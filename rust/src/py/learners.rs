//! Bindings for learner engines.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::arrays::{py_shape, row_major};
use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::counter::tree::Padding;
use crate::counter::FactorSpec;
use crate::env::{DecisionRows, DecisionSet};
use crate::error::{all_finite, Error};
use crate::policy::linucb::{EpochRadius, StatisticsConfig};
use crate::policy::{first_argmax, UcbLearner};
use crate::policy::{BoundsPolicy, InputBounds, Learner, LinUcb, LinUcbConfig, MtContextual, Radius, TrustLinUcb};

/// `f` of `actions`, a (k, d) float64 array of finite entries, as a
/// decision set: the one check of a decision set passed to `ucb` (the
/// Python layer, `engine_decision_set` in `dpbandits.learners.online`,
/// only converts what is not already a float64 ndarray). Finiteness first,
/// then shape, as the Python check this replaces did, with its messages. A
/// C-contiguous array is checked and scored in place: the copy it replaced
/// cost about a fifth of a (64, 4096) round
/// (benches/compare_select_update.py, column `convert`). Any other layout
/// is copied once into row-major order.
pub fn with_decision_set<R>(
    actions: &PyReadonlyArrayDyn<'_, f64>,
    d: usize,
    f: impl FnOnce(DecisionRows<'_>) -> R,
) -> PyResult<R> {
    decision_rows(actions, d, true, f)
}

/// `select` of a contextual engine on `actions`, with the checks of
/// [`with_decision_set`]; an engine that refuses a non-finite set itself
/// ([`SelectRows::CHECKS_FINITE`]) gets the set unread, so that a valid
/// set is read once, by the scoring.
pub fn select_in_place<E: SelectRows>(
    engine: &mut E,
    actions: &PyReadonlyArrayDyn<'_, f64>,
    d: usize,
) -> PyResult<usize> {
    decision_rows(actions, d, !E::CHECKS_FINITE, |set| engine.select_rows(set))?.py_err()
}

/// [`with_decision_set`], reading the entries for finiteness only when
/// `check_finite` or the shape is wrong (the finiteness error comes first
/// either way).
fn decision_rows<R>(
    actions: &PyReadonlyArrayDyn<'_, f64>,
    d: usize,
    check_finite: bool,
    f: impl FnOnce(DecisionRows<'_>) -> R,
) -> PyResult<R> {
    let copied: Vec<f64>;
    let features = match actions.as_slice() {
        // `as_slice` also succeeds on a Fortran-ordered array: only a
        // C-contiguous one is row-major.
        Ok(s) if actions.is_c_contiguous() => s,
        _ => {
            copied = actions.as_array().iter().copied().collect();
            &copied
        }
    };
    let shape = actions.shape();
    let rows = match *shape {
        [k, cols] if cols == d && k >= 1 => Some(k),
        _ => None,
    };
    if (check_finite || rows.is_none()) && !all_finite(features) {
        return Err(PyValueError::new_err("invalid argument `decision_set`: contains NaN or infinite entries"));
    }
    match (rows, shape) {
        (Some(k), _) => Ok(f(DecisionRows { k, d, features })),
        // As scikit-learn refuses a 1-d X: a (d,) vector is ambiguous
        // (one action of d features, or d actions of one feature).
        (None, [_]) => Err(PyValueError::new_err(format!(
            "invalid argument `decision_set`: expected a 2-d (k, {d}) array, got a 1-d array of shape {}; \
             a single action is x[None, :]",
            py_shape(shape)
        ))),
        (None, _) => Err(PyValueError::new_err(format!(
            "invalid argument `decision_set`: expected shape (k, {d}) with k >= 1, got {}",
            py_shape(shape)
        ))),
    }
}

/// The outcome of a batch call: the results of the calls made, in order,
/// and the error that stopped the batch (None: every call was made). The
/// Python layer records what was made, then raises the error, so a batch
/// leaves the learner as the loop of single calls would have.
pub(crate) type Batch<'py, T> = (Bound<'py, PyArray1<T>>, Option<Py<PyAny>>);

/// The Python exception of a core error, as a value.
fn error_value(py: Python<'_>, err: Error) -> Py<PyAny> {
    super::errors::to_py(err).into_value(py).into_any()
}

/// `select` of a contextual engine on each of the n decision sets of
/// `sets` (shape (n, k, d)), in order, the GIL released: the selections
/// made and the error that stopped the batch. A set with a NaN or infinite
/// entry stops it where the loop of single `select` calls would have
/// raised, with the same error.
pub fn select_many<'py, E: SelectRows + Send>(
    py: Python<'py>,
    engine: &mut E,
    sets: &PyReadonlyArrayDyn<'py, f64>,
    d: usize,
) -> PyResult<Batch<'py, i64>> {
    let (n, k) = match *sets.shape() {
        [n, k, cols] if cols == d && k >= 1 => (n, k),
        _ => {
            return Err(PyValueError::new_err(format!(
                "invalid argument `decision_sets`: expected shape (n, k, {d}) with k >= 1, got {}",
                py_shape(sets.shape())
            )))
        }
    };
    // One copy: the engine reads it with the GIL released.
    let (_, data) = row_major(sets);
    let mut chosen: Vec<i64> = Vec::with_capacity(n);
    let failed = py.detach(|| {
        for features in data.chunks_exact(k * d) {
            if !E::CHECKS_FINITE && !all_finite(features) {
                return Some(Error::invalid("decision_set", "contains NaN or infinite entries"));
            }
            match engine.select_rows(DecisionRows { k, d, features }) {
                Ok(i) => chosen.push(i as i64),
                Err(e) => return Some(e),
            }
        }
        None
    });
    Ok((chosen.into_pyarray(py), failed.map(|e| error_value(py, e))))
}

/// A contextual engine's `observe`, one call per row of `xs` (shape
/// (n, d)) with the reward of the same index in `rewards` (shape (n,)), in
/// order, the GIL released: the number of rows recorded and the error
/// that stopped the batch (every row before it is recorded, as in the
/// loop of single calls).
pub fn observe_many<'py, E: Send>(
    py: Python<'py>,
    engine: &mut E,
    xs: &PyReadonlyArrayDyn<'py, f64>,
    rewards: &PyReadonlyArrayDyn<'py, f64>,
    d: usize,
    observe: impl Fn(&mut E, &[f64], f64) -> crate::Result<()> + Send + Sync,
) -> PyResult<(usize, Option<Py<PyAny>>)> {
    let n = match *xs.shape() {
        [n, cols] if cols == d => n,
        _ => {
            return Err(PyValueError::new_err(format!(
                "invalid argument `X`: expected shape (n, {d}), got {}",
                py_shape(xs.shape())
            )))
        }
    };
    if rewards.shape() != [n] {
        return Err(PyValueError::new_err(format!(
            "invalid argument `rewards`: expected shape ({n},) (one per row of X), got {}",
            py_shape(rewards.shape())
        )));
    }
    let (_, x) = row_major(xs);
    let (_, y) = row_major(rewards);
    let mut done = 0;
    let failed = py.detach(|| {
        for (row, &r) in x.chunks_exact(d).zip(y.iter()) {
            if let Err(e) = observe(engine, row, r) {
                return Some(e);
            }
            done += 1;
        }
        None
    });
    Ok((done, failed.map(|e| error_value(py, e))))
}

/// A contextual engine's `select` on a decision set read in place: the UCB
/// learners score it there; the Mishra & Thakurta engine, which keeps its
/// own set type, gets a copy.
pub(crate) trait SelectRows {
    /// Whether `select_rows` refuses a set with a NaN or infinite entry
    /// itself, before any state changes, with the binding's error (then
    /// the binding does not read the set first).
    const CHECKS_FINITE: bool = false;

    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize>;
}

impl SelectRows for LinUcb {
    const CHECKS_FINITE: bool = true;

    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize> {
        self.select_unvalidated(set)
    }
}

impl SelectRows for TrustLinUcb {
    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize> {
        Ok(first_argmax(self.scores(set)?))
    }
}

impl SelectRows for MtContextual {
    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize> {
        self.select(&DecisionSet { k: set.k, d: set.d, features: set.features.to_vec() })
    }
}

/// LinUCB engine (Shariff & Sheffet Alg. 1); built by `dpbandits.learners`.
#[pyclass(module = "dpbandits._core", name = "LinUcbEngine")]
pub struct PyLinUcb {
    pub(crate) inner: LinUcb,
}

engine_methods! {
    PyLinUcb { inner: LinUcb }, restore _restore_linucb, shared [contextual, ucb, learner, secure, state],
    getters [psd_failures: u64];

    /// The policy the next selection follows, from released values only.
    fn policy(&mut self) -> PyResult<super::linear_policy::PyLinearPolicy> {
        Ok(super::linear_policy::PyLinearPolicy { inner: self.inner.policy().py_err()? })
    }

    /// `runs` runs of a fresh engine's epoch counter on the (rows, d + 1,
    /// d + 1) matrices `values`: the releases after each addition,
    /// (runs, rows, d + 1, d + 1), for privacy audits. Releases the GIL.
    fn _release_runs<'py>(
        &mut self,
        py: Python<'py>,
        values: numpy::PyReadonlyArray3<'py, f64>,
        runs: usize,
    ) -> PyResult<Bound<'py, numpy::PyArray4<f64>>> {
        let shape = values.shape().to_vec();
        let data = values.as_array().iter().copied().collect::<Vec<f64>>();
        let inner = &mut self.inner;
        let out = py.detach(|| inner.release_runs(&data, runs)).py_err()?;
        let arr = numpy::ndarray::Array4::from_shape_vec((runs, shape[0], shape[1], shape[2]), out)
            .map_err(|e| Error::invalid("values", e.to_string()))
            .py_err()?;
        Ok(arr.into_pyarray(py))
    }

    #[new]
    #[pyo3(signature = (d, horizon, *, regularizer=None, refactor_every=64, noise=None, shift=0.0, pad_to=0, padding="fresh",
                        beta_noise_sd=1.0, beta_log_offset=0.0, beta_offset=0.0, beta_constant=None, l=1.0, b_tilde=1.0, clip=true, seed=None,
                        counter=None, theta=Vec::new(), omega=Vec::new(), first_epoch=1, epoch_ratio=2.0, op_bound=0.0,
                        vec_bound=0.0, ridge=1.0, s=1.0, mixed_bound=0.0))]
    fn new(
        d: usize,
        horizon: u64,
        regularizer: Option<f64>,
        refactor_every: u64,
        noise: Option<Noise>,
        shift: f64,
        pad_to: u32,
        padding: &str,
        beta_noise_sd: f64,
        beta_log_offset: f64,
        beta_offset: f64,
        beta_constant: Option<f64>,
        l: f64,
        b_tilde: f64,
        clip: bool,
        seed: Option<u64>,
        counter: Option<&str>,
        theta: Vec<f64>,
        omega: Vec<f64>,
        first_epoch: u64,
        epoch_ratio: f64,
        op_bound: f64,
        vec_bound: f64,
        ridge: f64,
        s: f64,
        mixed_bound: f64,
    ) -> PyResult<Self> {
        let persistent = Padding::from_name(padding).py_err()? == Padding::Persistent;
        if persistent && (pad_to == 0 || noise.is_none() || counter.is_some_and(|c| c != "binary")) {
            return Err(Error::invalid(
                "padding",
                "persistent padding needs the binary tree with noise and pad_to > 0 (only padded releases have padding)",
            ))
            .py_err();
        }
        let statistics = match (noise.map(|n| n.0), regularizer) {
            // The epoch counter, with the radius that adapts to its release.
            (Some(kind), None) if counter == Some("epoch") => {
                if pad_to != 0 || shift != 0.0 {
                    return Err(Error::invalid("pad_to", "the epoch counter neither pads nor takes a fixed shift"))
                        .py_err();
                }
                StatisticsConfig::Epoch {
                    noise: kind,
                    first_epoch,
                    ratio: epoch_ratio,
                    radius: EpochRadius { op_bound, vec_bound, ridge, s, mixed_bound },
                }
            }
            // A factorization counter ("sqrt", "blt" with theta, omega) instead of the tree.
            (Some(kind), None) if counter.is_some_and(|c| c != "binary") => {
                let factor = super::mechanisms::factorization(counter.unwrap_or_default(), theta, omega)?;
                if pad_to != 0 {
                    return Err(Error::invalid("pad_to", "only the binary tree pads its releases")).py_err();
                }
                StatisticsConfig::Factorized {
                    noise: kind,
                    shift,
                    factor: FactorSpec::new(&factor).py_err()?,
                }
            }
            (Some(kind), None) if persistent => {
                StatisticsConfig::PersistentTree { noise: kind, shift, pad_to }
            }
            (Some(kind), None) => StatisticsConfig::Tree { noise: kind, shift, pad_to },
            (None, Some(regularizer)) => StatisticsConfig::Exact { regularizer, refactor_every },
            _ => {
                return Err(Error::invalid(
                    "noise",
                    "give exactly one of `noise` (tree statistics) and `regularizer` (exact)",
                ))
                .py_err()
            }
        };
        let radius = match beta_constant {
            Some(beta) => Radius::Constant(beta),
            None => Radius::LogDet { noise_sd: beta_noise_sd, log_offset: beta_log_offset, offset: beta_offset },
        };
        let bounds = InputBounds { l, b_tilde, policy: if clip { BoundsPolicy::Clip } else { BoundsPolicy::Error } };
        let config = LinUcbConfig { d, horizon, statistics, radius, bounds };
        Ok(PyLinUcb { inner: LinUcb::new(config, &seeds(seed)?).py_err()? })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyLinUcb::register(m)?;
    Ok(())
}
