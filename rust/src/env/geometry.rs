//! The decision sets X of online linear optimization (Agarwal & Singh
//! 2017, §2: simplex, Euclidean ball, cube) and the loss sets they pair
//! with. Environments (`env/losses.rs`) generate losses in a geometry's
//! loss set; learners (`policy/follow_the_leader.rs`, `policy/scrible.rs`)
//! play points of its decision set. Both read it from here.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The decision set X of Agarwal & Singh §2 and the loss set it pairs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Geometry {
    /// Simplex Delta_N, losses in [0, 1]^N.
    Simplex,
    /// Unit Euclidean ball, losses with ||l||_2 <= 1.
    Ball,
    /// Cube [-1, 1]^N, losses with ||l||_1 <= 1.
    Cube,
}

impl Geometry {
    /// The decision set's name in messages and in the Python API.
    pub fn name(self) -> &'static str {
        match self {
            Geometry::Simplex => "simplex",
            Geometry::Ball => "ball",
            Geometry::Cube => "cube",
        }
    }
}

/// Clips `l` into the geometry's loss set, or refuses it (`clip == false`);
/// true when it clipped.
pub fn enforce_bounds(geometry: Geometry, clip: bool, l: &mut [f64]) -> Result<bool> {
    const TOL: f64 = 1e-12;
    match geometry {
        Geometry::Simplex => {
            if let Some(v) = l.iter().find(|v| !(0.0..=1.0).contains(*v)) {
                if !clip {
                    return Err(Error::invalid("losses", format!("entries must lie in [0, 1], got {v}")));
                }
                for v in l.iter_mut() {
                    *v = v.clamp(0.0, 1.0);
                }
                return Ok(true);
            }
        }
        Geometry::Ball | Geometry::Cube => {
            let norm = if geometry == Geometry::Ball {
                l.iter().map(|v| v * v).sum::<f64>().sqrt()
            } else {
                l.iter().map(|v| v.abs()).sum::<f64>()
            };
            if norm > 1.0 + TOL {
                if !clip {
                    let which = if geometry == Geometry::Ball { "||losses||_2" } else { "||losses||_1" };
                    return Err(Error::invalid("losses", format!("{which} must be <= 1, got {norm}")));
                }
                for v in l.iter_mut() {
                    *v /= norm;
                }
                return Ok(true);
            }
        }
    }
    Ok(false)
}
