//! Python bindings (`dpbandits._core`). Conversion, shape checks and GIL
//! release only: every computation is a call into the pure-Rust core.

// PyO3 hands extracted arguments (array views, strings) to functions by
// value; borrowing them is not an option the macros offer.
#![allow(clippy::needless_pass_by_value)]

mod arrays;
mod design;
mod elimination;
mod envs;
mod errors;
mod learners;
mod linucb_trust;
mod mab;
mod mechanisms;
mod online_learning;
mod phased_mab;
mod replay;
mod secure;
mod sim;

use pyo3::prelude::*;

/// An engine's configuration (noise laws and scales, lattice exponents,
/// shift, padding, horizon, bounds, confidence constants) as nested plain
/// Python values (dicts, lists, numbers, strings), or with `as_json` as
/// the JSON text they decode from: what a checkpoint's engine bytes were
/// built with, compared on load with the configuration the checkpoint's
/// header calls for (`dpbandits.checkpoint`). Enum variants appear as
/// `{"Variant": {...}}` (or the bare name for unit variants); floats are
/// exact (shortest round-trip decimal).
pub(crate) fn config_values<'py, T: serde::Serialize>(
    py: Python<'py>,
    config: &T,
    as_json: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(config)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("engine configuration: {e}")))?;
    if as_json {
        return Ok(pyo3::types::PyString::new(py, &text).into_any());
    }
    py.import("json")?.call_method1("loads", (text,))
}

/// Which build of the hot kernels this process runs: "avx2-fma" or
/// "baseline" (see `cpu_dispatch`; `DPBANDITS_CPU_DISPATCH=baseline`
/// forces the latter).
#[pyfunction]
fn kernel_build() -> &'static str {
    match crate::cpu_dispatch::kernel_build() {
        crate::cpu_dispatch::KernelBuild::Avx2Fma => "avx2-fma",
        crate::cpu_dispatch::KernelBuild::Baseline => "baseline",
    }
}

/// The extension module. Declared once, here.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(kernel_build, m)?)?;
    mechanisms::register(m)?;
    design::register(m)?;
    learners::register(m)?;
    linucb_trust::register(m)?;
    envs::register(m)?;
    sim::register(m)?;
    mab::register(m)?;
    elimination::register(m)?;
    online_learning::register(m)?;
    replay::register(m)?;
    secure::register(m)?;
    phased_mab::register(m)?;
    Ok(())
}
