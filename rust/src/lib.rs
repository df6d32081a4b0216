//! dpbandits core: the arithmetic of differentially private bandit and
//! online-learning algorithms, in pure Rust.
//!
//! Privacy decisions (noise scales, confidence constants) are made in the
//! Python package `dpbandits.privacy` and arrive here as plain numbers; this
//! crate draws noise, keeps tree counters, factors matrices and runs
//! simulations. The Python bindings live in `py/` behind the `python`
//! feature, so `cargo test` and `cargo bench` need no Python.

pub mod counter;
pub mod cpu_dispatch;
pub mod design;
pub mod env;
pub mod error;
pub mod linalg;
pub mod noise;
pub mod policy;
pub mod rng;
pub mod sim;
pub mod state;

#[cfg(feature = "python")]
mod py;

pub use error::{Error, Result};
