//! The one shape in which noise crosses from Python: a tuple computed once
//! by the privacy layer (`dpbandits.privacy.secure.LatticeNoise.wire()`,
//! the floating-point specs' `wire()` in `dpbandits.noise`).
//!
//! - `("zero",)`;
//! - `("lattice_laplace" | "lattice_gaussian" | "lattice_symmetric_gaussian", steps, exponent)`:
//!   exact discrete noise whose scale is `steps` lattice steps (integer) on
//!   the lattice 2^-`exponent` (integer), taken as they are
//!   ([`SecureNoise::from_steps`]): Rust rounds and rescales nothing;
//! - the floating-point opt-in: `("laplace", scale)`, `("gaussian", sigma)`,
//!   `("symmetric_gaussian", sigma)`, `("wishart", scale, df)`.

use pyo3::prelude::*;
use pyo3::types::{PyAnyMethods, PyTuple, PyTupleMethods};

use super::errors::{to_py, IntoPy};
use crate::error::Error;
use crate::noise::{LatticeLaw, NoiseSpec, SecureKind, SecureNoise};

/// A noise value converted from its Python tuple (module doc).
#[derive(Clone, Copy, Debug)]
pub struct Noise(pub NoiseSpec);

fn invalid(message: String) -> PyErr {
    to_py(Error::invalid("noise", message))
}

impl<'a, 'py> FromPyObject<'a, 'py> for Noise {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let shown = obj.repr().map_or_else(|_| "?".to_string(), |r| r.to_string());
        let shape = "a noise value (kind, parameters...): ('zero',), ('lattice_laplace' | 'lattice_gaussian' | \
                     'lattice_symmetric_gaussian', steps, exponent), ('laplace' | 'gaussian' | \
                     'symmetric_gaussian', scale) or ('wishart', scale, df)";
        let Ok(tuple) = obj.cast::<PyTuple>() else {
            return Err(invalid(format!("expected {shape}, got {shown}")));
        };
        let Some(kind) = tuple.get_item(0).ok().and_then(|k| k.extract::<String>().ok()) else {
            return Err(invalid(format!("expected {shape}, got {shown}")));
        };
        let n = tuple.len();
        let float = |i: usize| -> PyResult<f64> { tuple.get_item(i)?.extract::<f64>() };
        let spec = match (kind.as_str(), n) {
            ("zero", 1) => NoiseSpec::Zero,
            ("laplace", 2) => NoiseSpec::Laplace { scale: float(1)? },
            ("gaussian", 2) => NoiseSpec::Gaussian { sigma: float(1)? },
            ("symmetric_gaussian", 2) => NoiseSpec::SymmetricGaussian { sigma: float(1)? },
            ("wishart", 3) => NoiseSpec::Wishart { scale: float(1)?, df: float(2)? },
            ("lattice_laplace" | "lattice_gaussian" | "lattice_symmetric_gaussian", 3) => {
                let law = match kind.as_str() {
                    "lattice_laplace" => LatticeLaw::Laplace,
                    "lattice_gaussian" => LatticeLaw::Gaussian,
                    _ => LatticeLaw::SymmetricGaussian,
                };
                let integer = |i: usize, name: &str| -> PyResult<i64> {
                    let item = tuple.get_item(i)?;
                    item.extract::<i64>()
                        .map_err(|_| invalid(format!("the lattice {name} must be an integer, got {item} in {shown}")))
                };
                let steps = integer(1, "steps")?;
                let exponent = integer(2, "exponent")?;
                let (Ok(steps), Ok(exponent)) = (u64::try_from(steps), i32::try_from(exponent)) else {
                    return Err(invalid(format!("lattice steps or exponent out of range in {shown}")));
                };
                NoiseSpec::Lattice(SecureNoise::from_steps(law, steps, exponent).py_err()?)
            }
            _ => return Err(invalid(format!("expected {shape}, got {shown}"))),
        };
        spec.validate(&[])
            .or_else(|e| match spec {
                // Matrix laws are checked against their shape by their consumer.
                NoiseSpec::SymmetricGaussian { .. } | NoiseSpec::Wishart { .. } | NoiseSpec::Lattice(_) => Ok(()),
                _ => Err(e),
            })
            .py_err()?;
        Ok(Noise(spec))
    }
}

/// The Python tuple of a noise value (the inverse of [`Noise`]'s conversion).
pub fn noise_wire(py: Python<'_>, spec: NoiseSpec) -> PyResult<Bound<'_, PyTuple>> {
    match spec {
        NoiseSpec::Zero => PyTuple::new(py, ["zero"]),
        NoiseSpec::Laplace { scale } => ("laplace", scale).into_pyobject(py),
        NoiseSpec::Gaussian { sigma } => ("gaussian", sigma).into_pyobject(py),
        NoiseSpec::SymmetricGaussian { sigma } => ("symmetric_gaussian", sigma).into_pyobject(py),
        NoiseSpec::Wishart { scale, df } => ("wishart", scale, df).into_pyobject(py),
        NoiseSpec::Lattice(s) => {
            let kind = match s.kind() {
                SecureKind::Zero => return PyTuple::new(py, ["zero"]),
                SecureKind::Laplace { .. } => "lattice_laplace",
                SecureKind::Gaussian { .. } => "lattice_gaussian",
                SecureKind::SymmetricGaussian { .. } => "lattice_symmetric_gaussian",
            };
            (kind, s.steps().unwrap_or(0), s.exponent()).into_pyobject(py)
        }
    }
}
