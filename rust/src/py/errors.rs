//! The one mapping from core errors to Python exceptions.
//!
//! The exception classes are defined in Python (`dpbandits/errors.py`) so
//! that they pickle and can be caught by users without importing the
//! extension. Every variant derives from a built-in (`ValueError` or
//! `RuntimeError`), so generic handlers keep working.

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::error::Error;

/// An instance of `dpbandits.errors.<name>(msg)`, or `fallback(msg)` when
/// the Python package is not importable (the extension used on its own).
fn raise(name: &str, msg: String, fallback: fn(String) -> PyErr) -> PyErr {
    Python::attach(|py| {
        let made =
            py.import("dpbandits.errors").and_then(|m| m.getattr(name)).and_then(|cls| cls.call1((msg.clone(),)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(_) => fallback(msg),
        }
    })
}

/// `dpbandits.errors.StateError(msg)`: a refusal whose message is the
/// learner's own (no core error's prefix).
#[cold]
pub fn state_error(msg: String) -> PyErr {
    raise("StateError", msg, PyRuntimeError::new_err)
}

/// Converts a core error into the documented Python exception.
pub fn to_py(err: Error) -> PyErr {
    let msg = err.to_string();
    match err {
        Error::InvalidArgument { .. } | Error::Decode(_) => PyValueError::new_err(msg),
        Error::NotPositiveDefinite { .. } => raise("NotPositiveDefiniteError", msg, PyValueError::new_err),
        Error::Degenerate { .. } => raise("DegenerateInputError", msg, PyValueError::new_err),
        Error::State(_) => raise("StateError", msg, PyRuntimeError::new_err),
        Error::Allocation { .. } => raise("AllocationError", msg, PyMemoryError::new_err),
    }
}

/// Converts the error of restoring saved state (`from_bytes`, unpickling)
/// into `dpbandits.errors.CheckpointError` (a `ValueError`), whatever the
/// core error: a state that does not restore is bad saved state.
pub fn checkpoint_error(err: Error) -> PyErr {
    raise("CheckpointError", format!("the saved state does not restore: {err}"), PyValueError::new_err)
}

/// Warns `dpbandits.errors.ClippedRewardWarning` for a learner's first
/// clipped input (the message is written by `dpbandits.errors`); nothing
/// when the Python package is not importable (the extension on its own).
/// `stacklevel` 1 names the Python code that called the Rust method, 2
/// its caller.
#[cold]
pub fn warn_clipped(py: Python<'_>, learner: &str, what: &str, declared: &str, stacklevel: u32) -> PyResult<()> {
    let Ok(warn) = py.import("dpbandits.errors").and_then(|m| m.getattr("_warn_clipped")) else {
        return Ok(());
    };
    warn.call1((learner, what, declared, stacklevel)).map(|_| ())
}

/// The error for the name `got` of argument `name` outside `choices`.
pub fn unknown<T>(name: &'static str, choices: &str, got: &str) -> PyResult<T> {
    Err(to_py(Error::invalid(name, format!("must be {choices}, got {got:?}"))))
}

/// `Result` of the core, as a `PyResult`.
pub trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for crate::error::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
