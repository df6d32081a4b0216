//! Noise samplers and the per-node noise specification of tree counters.
//!
//! Rust never decides a noise scale: the Python privacy layer
//! computes `scale`, `sigma`, `df` from (epsilon, delta, horizon, bounds) and
//! hands them here as plain numbers. This module only draws.
//!
//! Two noise laws (Mironov 2012, "On significance of the least significant
//! bits for differential privacy"): a floating-point Laplace or Gaussian
//! draw added to a floating-point value lands on a grid that depends on the
//! value, so the low bits of a released double can name the input. The
//! floating-point variants below (`Laplace`, `Gaussian`, ...) are kept for
//! reproduction of the papers' experiments and as an explicit opt-in; the
//! default of every private learner is [`NoiseSpec::Lattice`]: exact
//! discrete noise on a power-of-two lattice ([`lattice`]), with the input
//! rounded to the same lattice, so that a release is an exact function of
//! an integer (data steps + noise steps). The entropy source is separate:
//! any generator (the seeded ChaCha stream for reproducible runs) or the
//! operating system ([`entropy::OsEntropy`]).
//!
//! The exact samplers, each module using only those listed before it:
//! - [`uniform`]: uniform integers, and uniforms in [0, 1) revealed lazily;
//! - [`bernoulli`]: Bernoulli(num/den) and Bernoulli(exp(-num/den));
//! - [`discrete_laplace`]: von Neumann's discrete Laplace (the reference);
//! - [`isqrt`], [`discrete_gaussian`]: Canonne, Kamath & Steinke 2020,
//!   Alg. 3 (the reference), and its extension to dyadic centres
//!   (the exponential mechanism over the lattice points of the ball);
//! - [`exp_bounds`], [`cell_sampler`]: the same laws from cached tables of
//!   cells, the sampler every lattice release draws from;
//! - [`lattice`]: the noise specification in lattice steps
//!   ([`SecureNoise`]) and the rounding of inputs;
//! - [`entropy`]: the operating-system source and the seeded alternative;
//! - [`timing_audit`]: the running time of single releases against the
//!   value drawn (the measurements of the timing test).

pub mod bernoulli;
pub mod cell_sampler;
pub mod discrete_gaussian;
pub mod discrete_laplace;
pub mod entropy;
pub mod exp_bounds;
pub mod gaussian;
#[cfg(test)]
mod goodness_of_fit;
pub mod isqrt;
pub mod laplace;
pub mod lattice;
pub mod timing_audit;
pub mod uniform;
pub mod wishart;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::{check_positive, Error, Result};
pub use lattice::{LatticeLaw, SecureKind, SecureNoise};

pub use gaussian::{fill_gaussian, fill_symmetric_gaussian, gaussian};
pub use laplace::{fill_laplace, laplace};
pub use wishart::WishartSampler;

/// The distribution of the noise attached to one node of a tree counter.
///
/// Values are flat `f64` buffers; matrix-valued noise (`SymmetricGaussian`,
/// `Wishart`) needs a square `p x p` shape and is written row-major.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum NoiseSpec {
    /// No noise (exact counter; used by tests and non-private learners).
    Zero,
    /// i.i.d. Laplace(0, `scale`) in every entry (Mishra–Thakurta App. A;
    /// Agarwal–Singh Lemma 3.3).
    Laplace { scale: f64 },
    /// i.i.d. N(0, `sigma`^2) in every entry (Agarwal–Singh Thm. A.1).
    Gaussian { sigma: f64 },
    /// (Z + Z^T)/sqrt(2) with Z_ij ~ N(0, `sigma`^2) i.i.d. (Shariff–Sheffet §4.2).
    SymmetricGaussian { sigma: f64 },
    /// W_p(`scale` * I, `df`) (Shariff–Sheffet §4.1; the scale is
    /// Ltilde^2, not Ltilde).
    Wishart { scale: f64, df: f64 },
    /// Exact discrete Laplace / Gaussian / symmetric Gaussian noise on the
    /// lattice 2^-j ([`SecureNoise`]); inputs are rounded to the lattice by
    /// the consumer ([`NoiseSpec::round_input`]) before the noise is added.
    Lattice(SecureNoise),
}

impl NoiseSpec {
    /// Checks the parameters and that the noise fits a value of `shape`.
    pub fn validate(&self, shape: &[usize]) -> Result<()> {
        match *self {
            NoiseSpec::Zero => Ok(()),
            NoiseSpec::Laplace { scale } => check_scale("scale", scale),
            NoiseSpec::Gaussian { sigma } => check_scale("sigma", sigma),
            NoiseSpec::SymmetricGaussian { sigma } => {
                check_scale("sigma", sigma)?;
                square_side(shape).map(|_| ())
            }
            NoiseSpec::Wishart { scale, df } => {
                check_scale("scale", scale)?;
                let mean = scale * df;
                if mean.is_nan() || mean > MAX_NOISE_SCALE {
                    return Err(Error::invalid(
                        "df",
                        format!("scale * df must be <= {MAX_NOISE_SCALE:e} (finite draws), got {}", scale * df),
                    ));
                }
                let p = square_side(shape)?;
                WishartSampler::check_df(p, df)
            }
            NoiseSpec::Lattice(s) => {
                if !s.is_valid() {
                    return Err(Error::invalid("noise", format!("lattice parameters out of range: {s:?}")));
                }
                match s.kind() {
                    SecureKind::SymmetricGaussian { .. } => square_side(shape).map(|_| ()),
                    _ => Ok(()),
                }
            }
        }
    }

    /// The same noise drawn exactly on the lattice 2^-`exponent`
    /// (`Lattice`); `Zero` stays `Zero`. Errors: Wishart (no exact
    /// discrete sampler), a spec already on a lattice, a scale outside
    /// 1..2^21 steps (Laplace), 1..2^25 (Gaussian).
    pub fn on_lattice(self, exponent: i32) -> Result<NoiseSpec> {
        match self {
            NoiseSpec::Zero => Ok(NoiseSpec::Zero),
            NoiseSpec::Lattice(_) => Err(Error::invalid("noise", "the noise is already on a lattice")),
            spec => Ok(NoiseSpec::Lattice(SecureNoise::new(spec, exponent)?)),
        }
    }

    /// The lattice parameters, when the noise is drawn on a lattice.
    pub fn lattice(&self) -> Option<SecureNoise> {
        match self {
            NoiseSpec::Lattice(s) => Some(*s),
            _ => None,
        }
    }

    /// Rounds an input to this noise's lattice in place (a no-op for
    /// floating-point noise), refusing entries of `limit` steps or more so
    /// that later sums stay exact. Rounding to nearest is monotone, so an
    /// input confined to [lo, hi] stays in [round(lo), round(hi)]: the
    /// privacy layer accounts for the rounding from that
    /// (`dpbandits.privacy.secure`).
    pub fn round_input(&self, name: &'static str, values: &mut [f64], limit: f64) -> Result<()> {
        match self {
            NoiseSpec::Lattice(s) => s.to_lattice(name, values, limit),
            _ => Ok(()),
        }
    }

    /// Draws one noise value of `out.len()` entries into `out`
    /// (overwriting it). `side` is the matrix side for matrix noise.
    ///
    /// The spec must have passed [`NoiseSpec::validate`] for this shape.
    pub fn sample_into<R: Rng + ?Sized>(&self, rng: &mut R, side: usize, out: &mut [f64]) {
        match *self {
            NoiseSpec::Zero => out.fill(0.0),
            NoiseSpec::Laplace { scale } => fill_laplace(rng, scale, out),
            NoiseSpec::Gaussian { sigma } => fill_gaussian(rng, sigma, out),
            NoiseSpec::SymmetricGaussian { sigma } => fill_symmetric_gaussian(rng, sigma, side, out),
            NoiseSpec::Wishart { scale, df } => wishart::fill_isotropic_wishart(rng, scale, df, side, out),
            NoiseSpec::Lattice(s) => s.sample_into(rng, side, out),
        }
    }

    /// One scalar draw.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let mut z = [0.0];
        self.sample_into(rng, 0, &mut z);
        z[0]
    }

    /// A spec whose single draw has the law of the sum of `r` independent
    /// draws of `self`, when that law is in the family: Gaussian variances
    /// add, Wishart degrees of freedom add (W(S, a) + W(S, b) = W(S, a + b)).
    /// `None` for Laplace (a sum of Laplaces is not Laplace).
    pub fn sum_of(&self, r: u32) -> Option<NoiseSpec> {
        let rf = f64::from(r);
        match *self {
            NoiseSpec::Zero => Some(NoiseSpec::Zero),
            NoiseSpec::Gaussian { sigma } => Some(NoiseSpec::Gaussian { sigma: sigma * rf.sqrt() }),
            NoiseSpec::SymmetricGaussian { sigma } => Some(NoiseSpec::SymmetricGaussian { sigma: sigma * rf.sqrt() }),
            NoiseSpec::Wishart { scale, df } => Some(NoiseSpec::Wishart { scale, df: df * rf }),
            // A sum of Laplace draws is not Laplace, nor a sum of discrete
            // draws a discrete draw of the summed parameters.
            NoiseSpec::Laplace { .. } | NoiseSpec::Lattice(_) => None,
        }
    }

    /// One draw of the sum of `r` independent draws of `self`, into `out`,
    /// for data-independent noise (padding): Gaussian and Wishart by
    /// [`NoiseSpec::sum_of`]; Laplace as b sqrt(2 G) Z, G ~ Gamma(r, 1)
    /// ([`laplace::fill_laplace_sum`]: exact in law, one Gamma and one
    /// normal an entry); on a lattice, the floating-point sum of the same
    /// scale rounded to the lattice (the release stays an exact lattice
    /// value; the padding's law carries no privacy, so it need not be
    /// discrete).
    pub fn sample_sum_into<R: Rng + ?Sized>(&self, rng: &mut R, r: u32, side: usize, out: &mut [f64]) {
        if r == 0 {
            out.fill(0.0);
            return;
        }
        match *self {
            NoiseSpec::Lattice(s) => {
                s.continuous().sample_sum_into(rng, r, side, out);
                lattice::round_to_lattice(out, 1.0 / s.step(), s.step());
            }
            NoiseSpec::Laplace { scale } => laplace::fill_laplace_sum(rng, scale, r, out),
            spec => spec.sum_of(r).expect("closed form for Gaussian, Wishart, Zero").sample_into(rng, side, out),
        }
    }

    /// True when a draw into a buffer of several values' entries is the
    /// same as one draw per value (independent entries: no matrix law).
    pub fn is_entrywise(&self) -> bool {
        match self {
            NoiseSpec::Zero | NoiseSpec::Laplace { .. } | NoiseSpec::Gaussian { .. } => true,
            NoiseSpec::SymmetricGaussian { .. } | NoiseSpec::Wishart { .. } => false,
            NoiseSpec::Lattice(s) => !matches!(s.kind(), SecureKind::SymmetricGaussian { .. }),
        }
    }

    /// True when the spec adds no noise.
    pub fn is_zero(&self) -> bool {
        matches!(self, NoiseSpec::Zero)
    }
}

/// Largest noise scale a spec accepts: every draw (at most ~40 scales)
/// and sums of 64 of them stay finite.
pub const MAX_NOISE_SCALE: f64 = 1e300;

fn check_scale(name: &'static str, value: f64) -> Result<()> {
    check_positive(name, value)?;
    if value <= MAX_NOISE_SCALE {
        Ok(())
    } else {
        Err(Error::invalid(name, format!("must be <= {MAX_NOISE_SCALE:e}, got {value:e}")))
    }
}

/// The side `p` of a square `p x p` shape, or an error naming `shape`.
pub fn square_side(shape: &[usize]) -> Result<usize> {
    match shape {
        [p, q] if p == q && *p > 0 => Ok(*p),
        _ => {
            Err(Error::invalid("shape", format!("matrix noise needs a square (p, p) shape with p > 0, got {shape:?}")))
        }
    }
}
