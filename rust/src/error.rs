//! The one error type of the Rust core.
//!
//! Every fallible function in the core returns [`Result`]. The Python layer
//! maps each variant to one Python exception (`py/errors.rs`), so no panic is
//! needed to signal bad input.

use thiserror::Error;

/// Why a core operation refused to run.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// An argument is outside its documented range (non-positive scale,
    /// NaN, wrong length, ...). `name` is the argument as the caller spells it.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument { name: &'static str, reason: String },

    /// A matrix that must be symmetric positive definite is not.
    #[error("matrix `{name}` is not positive definite (pivot {pivot} is {value:e})")]
    NotPositiveDefinite { name: &'static str, pivot: usize, value: f64 },

    /// The input is well-formed but degenerate for the algorithm
    /// (for example, actions that do not span R^d).
    #[error("degenerate input `{name}`: {reason}")]
    Degenerate { name: &'static str, reason: String },

    /// A stateful object was used out of order (for example, adding past
    /// the declared horizon of a tree counter).
    #[error("invalid state: {0}")]
    State(String),

    /// Serialized state could not be decoded.
    #[error("could not decode state: {0}")]
    Decode(String),
}

impl Error {
    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument { name, reason: reason.into() }
    }
}

/// Result alias used across the core.
pub type Result<T> = std::result::Result<T, Error>;

/// `Ok(())` when `value` is finite and strictly positive, else an
/// [`Error::InvalidArgument`] naming `name`.
pub fn check_positive(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(name, format!("must be finite and > 0, got {value}")))
    }
}

/// `Ok(())` when every entry of `values` is finite.
pub fn check_finite(name: &'static str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::invalid(name, format!("entry {i} is not finite ({})", values[i]))),
    }
}
