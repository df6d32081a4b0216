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
mod replay;
mod secure;
mod sim;

use pyo3::prelude::*;

/// The extension module. Declared once, here.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
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
    Ok(())
}
