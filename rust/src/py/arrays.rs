//! numpy <-> flat row-major buffers.

use std::borrow::Cow;

use numpy::{PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;

/// The entries of `array` in row-major (C) order, with its shape.
/// Borrows without copying when the array is C-contiguous; otherwise (e.g.
/// Fortran order or a strided view) copies once in logical order.
pub fn row_major<'a>(array: &'a PyReadonlyArrayDyn<'_, f64>) -> (Vec<usize>, Cow<'a, [f64]>) {
    let shape = array.shape().to_vec();
    // `as_slice` also succeeds on Fortran-contiguous arrays, returning
    // their column-major buffer: only a C-contiguous array is row-major.
    let data = match array.as_slice() {
        Ok(s) if array.is_c_contiguous() => Cow::Borrowed(s),
        _ => Cow::Owned(array.as_array().iter().copied().collect()),
    };
    (shape, data)
}

/// `shape` as Python prints a tuple (`()`, `(3,)`, `(2, 3)`), for messages
/// that match those of the Python layer.
pub fn py_shape(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// Error unless `shape` equals `want`.
pub fn expect_shape(name: &str, shape: &[usize], want: &[usize]) -> PyResult<()> {
    if shape == want {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("invalid argument `{name}`: expected shape {want:?}, got {shape:?}")))
    }
}

/// The entries of `values`, a stack (first axis = rounds) of arrays of
/// shape `each`, in row-major order, with the number of rounds.
pub fn rows(name: &str, values: &PyReadonlyArrayDyn<'_, f64>, each: &[usize]) -> PyResult<(usize, Vec<f64>)> {
    let (shape, data) = row_major(values);
    let rounds = shape.first().copied().unwrap_or(0);
    if shape.len() != each.len() + 1 || &shape[1..] != each {
        let want: Vec<usize> = std::iter::once(rounds).chain(each.iter().copied()).collect();
        expect_shape(name, &shape, &want)?;
    }
    Ok((rounds, data.into_owned()))
}

/// A zeroed buffer of `count * each` floats, or MemoryError / ValueError
/// instead of an abort when the size is impossible.
pub fn zeroed(count: usize, each: usize) -> PyResult<Vec<f64>> {
    let len = count
        .checked_mul(each)
        .ok_or_else(|| PyValueError::new_err(format!("invalid argument `size`: {count} x {each} entries overflow")))?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| PyMemoryError::new_err(format!("cannot allocate {len} float64 entries")))?;
    v.resize(len, 0.0);
    Ok(v)
}
