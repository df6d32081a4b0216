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
mod mab;
mod mechanisms;
mod online_learning;
mod phased_mab;
mod replay;
mod secure;
mod sim;

use pyo3::prelude::*;

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
