//! Bindings for core sets (`crate::design`).

use numpy::{IntoPyArray, PyArray1, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;

use super::errors::IntoPy;
use crate::design::{core_set as compute_core_set, CoreSet, DesignOptions, DEFAULT_MAX_ITER};
use crate::error::Error;

/// Frank–Wolfe core set of the rows of `actions` (Hanna et al., App. A);
/// see `dpbandits.design.core_set`. Returns
/// (support: int64[n], weights: float64[n], value, iterations, stop_at).
#[pyfunction]
#[pyo3(signature = (actions, stop_at=None, max_iter=DEFAULT_MAX_ITER, reduce_support=true))]
// PyO3 extracts the array argument by value.
#[allow(clippy::type_complexity, clippy::needless_pass_by_value)]
fn core_set<'py>(
    py: Python<'py>,
    actions: PyReadonlyArrayDyn<'py, f64>,
    stop_at: Option<f64>,
    max_iter: usize,
    reduce_support: bool,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>, f64, usize, f64)> {
    let &[k, d] = actions.shape() else {
        return Err(Error::invalid("actions", format!("expected a 2-D (K, d) array, got shape {:?}", actions.shape())))
            .py_err();
    };
    let options = DesignOptions { stop_at, max_iter, reduce_support };
    let run = |data: &[f64]| -> crate::Result<CoreSet> { py.detach(|| compute_core_set(data, k, d, &options)) };
    // A C-contiguous array is read in place (the read-only borrow is held
    // for the whole call); anything else (Fortran order, strides) is first
    // copied in row-major order: `as_slice` alone would hand back a
    // Fortran array's column-major buffer.
    let design = if actions.is_c_contiguous() {
        run(actions.as_slice()?)
    } else {
        run(&actions.as_array().iter().copied().collect::<Vec<f64>>())
    }
    .py_err()?;
    let support: Vec<i64> = design.support.iter().map(|&i| i as i64).collect();
    Ok((support.into_pyarray(py), design.weights.into_pyarray(py), design.value, design.iterations, design.stop_at))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_set, m)?)?;
    Ok(())
}
