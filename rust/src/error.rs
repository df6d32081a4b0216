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

    /// A buffer whose size a user argument sets cannot be allocated: the
    /// size overflows, or the allocator refused it. `name` is that
    /// argument; Python sees `dpbandits.errors.AllocationError` (a
    /// `MemoryError`) instead of an abort.
    #[error("invalid argument `{name}`: unable to allocate {what}")]
    Allocation { name: &'static str, what: String },
}

impl Error {
    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument { name, reason: reason.into() }
    }
}

/// `bytes` in the units NumPy's `MemoryError` uses ("7.28 TiB").
pub fn format_bytes(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    // Three significant digits, as NumPy writes them ("7.28 TiB", "16.0 GiB").
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {}", UNITS[unit])
}

/// An empty `Vec` with room for `len` items, or [`Error::Allocation`]
/// naming `name` (never the abort of a failed `Vec::with_capacity`).
pub fn try_with_capacity<T>(name: &'static str, len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        let bytes = (len as u128) * (std::mem::size_of::<T>() as u128);
        Error::Allocation { name, what: format!("{} for {len} entries", format_bytes(bytes)) }
    })?;
    Ok(v)
}

/// `vec![value; len]` by fallible allocation: [`Error::Allocation`] naming
/// `name` when the buffer cannot be had.
pub fn try_filled<T: Clone>(name: &'static str, len: usize, value: T) -> Result<Vec<T>> {
    let mut v = try_with_capacity(name, len)?;
    v.resize(len, value);
    Ok(v)
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

/// Whether no entry is NaN or infinite: no exponent of all ones. Tested
/// on the high 32 bits, eight independent lanes: the baseline x86-64 build
/// has no 64-bit integer compare to vectorize, and a float fold would be
/// kept in order.
pub fn all_finite(values: &[f64]) -> bool {
    const EXPONENT: u32 = 0x7ff0_0000;
    let high = |v: &f64| (v.to_bits() >> 32) as u32 & EXPONENT;
    let blocks = values.chunks_exact(8);
    let rest = blocks.remainder();
    let mut hits = [0u32; 8];
    for block in blocks {
        for (hit, v) in hits.iter_mut().zip(block) {
            *hit |= u32::from(high(v) == EXPONENT);
        }
    }
    hits == [0; 8] && rest.iter().all(|v| high(v) != EXPONENT)
}

/// `Ok(())` when every entry of `values` is finite.
pub fn check_finite(name: &'static str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::invalid(name, format!("entry {i} is not finite ({})", values[i]))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_allocation_errors_naming_the_argument() {
        // More than isize::MAX bytes: a capacity overflow, which
        // `vec![0.0; n]` would turn into a panic.
        let err = try_filled("k", usize::MAX / 2, 0.0f64).unwrap_err();
        assert!(matches!(err, Error::Allocation { name: "k", .. }));
        assert!(err.to_string().starts_with("invalid argument `k`: unable to allocate"), "{err}");
        let err = try_with_capacity::<u64>("n", usize::MAX).unwrap_err();
        assert!(matches!(err, Error::Allocation { name: "n", .. }));
        assert_eq!(try_filled("k", 3, 1u8).unwrap(), vec![1, 1, 1]);
    }

    #[test]
    fn impossible_record_points_are_an_error_not_an_abort() {
        let err = crate::sim::record_points(u64::MAX, 1).unwrap_err();
        assert!(matches!(err, Error::Allocation { name: "record_every", .. }), "{err}");
        assert_eq!(crate::sim::record_points(10, 4).unwrap(), vec![4, 8, 10]);
    }

    #[test]
    fn bytes_are_formatted_like_numpy() {
        assert_eq!(format_bytes(512), "512 bytes");
        assert_eq!(format_bytes(16 << 30), "16.0 GiB");
        assert_eq!(format_bytes(8_004_337_332_060), "7.28 TiB");
    }
}
