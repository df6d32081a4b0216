//! numpy <-> flat row-major buffers.

use numpy::{PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The entries of `array` in row-major (C) order, with its shape.
/// Borrows without copying when the array is C-contiguous; otherwise (e.g.
/// Fortran order or a strided view) copies once in logical order.
pub fn row_major(array: &PyReadonlyArrayDyn<'_, f64>) -> (Vec<usize>, Vec<f64>) {
    let shape = array.shape().to_vec();
    let data = match array.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => array.as_array().iter().copied().collect(),
    };
    (shape, data)
}

/// Error unless `shape` equals `want`.
pub fn expect_shape(name: &str, shape: &[usize], want: &[usize]) -> PyResult<()> {
    if shape == want {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "invalid argument `{name}`: expected shape {want:?}, got {shape:?}"
        )))
    }
}
