//! Secure node noise on a power-of-two lattice: the exact discrete Laplace
//! and Gaussian laws in lattice steps ([`SecureNoise`]), and the rounding
//! of inputs to the same lattice.
//!
//! Why: a floating-point Laplace or Gaussian draw added to a floating-point
//! value has a lattice of attainable outputs that depends on the value, so
//! an output can reveal the input exactly (Mironov 2012, "On significance of
//! the least significant bits for differential privacy"). Here every
//! sampling decision is made with integers, and every output is k * 2^-j
//! for an integer k, so no floating-point artefact exists to leak.
//!
//! The lattice (Mironov 2012, the snapping idea): values are multiples of
//! g = 2^-j. The exponent j is chosen by the Python privacy layer
//! (`dpbandits.privacy.secure.lattice_exponent`) so that the noise scale
//! spans about 2^19..2^20 lattice steps. Inputs are rounded to the lattice
//! (round to nearest), the noise is an integer number of steps, and sums of
//! lattice values stay exact in `f64` while they are below 2^53 steps
//! (checked: [`SecureNoise::to_lattice`]).
//!
//! Valid parameters: a scale of 1 to 2^21 steps for the Laplace
//! ([`MAX_SCALE_STEPS`]), 2^25 for the Gaussian
//! ([`MAX_GAUSSIAN_SCALE_STEPS`]), 2^24 for the symmetric matrix Gaussian
//! ([`MAX_SYMMETRIC_SCALE_STEPS`]); an exponent j in [-1000, 1000]. The integer draws come from the cell tables
//! ([`super::cell_sampler`]) of the discrete Laplace and Gaussian laws
//! (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential
//! privacy").

use std::sync::Arc;

use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use super::cell_sampler::{self, CellSampler, Shape};
use super::NoiseSpec;
use crate::error::{Error, Result};

/// Largest scale, in lattice steps, a discrete Laplace accepts.
pub const MAX_SCALE_STEPS: u64 = 1 << 21;

/// Largest sigma, in lattice steps, a discrete Gaussian accepts (variance
/// at most [`MAX_GAUSSIAN_VAR`](super::discrete_gaussian::MAX_GAUSSIAN_VAR)
/// = 2^50, the cell sampler's range).
pub const MAX_GAUSSIAN_SCALE_STEPS: u64 = 1 << 25;

/// Largest sigma, in lattice steps, of the symmetric matrix Gaussian (its
/// diagonal draws variance 2 sigma^2, which must stay within 2^50).
pub const MAX_SYMMETRIC_SCALE_STEPS: u64 = 1 << 24;

/// Largest |k| of a lattice value k * 2^-j that stays exact in `f64`.
pub const MAX_EXACT_STEPS: f64 = 9_007_199_254_740_992.0; // 2^53

/// 1.5 2^52: adding and subtracting it rounds any |y| < 2^51 to the
/// nearest integer (see [`round_to_integer`]).
const ROUNDING_SHIFT: f64 = 6_755_399_441_055_744.0;
/// 2^51: below it, [`ROUNDING_SHIFT`] rounds exactly.
const EXACT_BELOW: f64 = 2_251_799_813_685_248.0;

/// The integer nearest to y (ties to even), as a double. For |y| < 2^51
/// by adding and subtracting 1.5 2^52: the sum lies in [2^52, 2^53), where
/// doubles are the integers, so the addition rounds y to an integer (in
/// the default rounding mode, which Rust assumes) and the subtraction is
/// exact. `f64::round` is a library call on the baseline x86-64 target (no
/// SSE4.1 rounding instruction), and every released entry is rounded to
/// the lattice. Beyond 2^51 (and for NaN) the library's rounding; any
/// nearest-integer rounding keeps the lattice accounting (within half a
/// step, monotone).
#[inline]
pub fn round_to_integer(y: f64) -> f64 {
    if y.abs() < EXACT_BELOW {
        (y + ROUNDING_SHIFT) - ROUNDING_SHIFT
    } else {
        y.round()
    }
}

/// values[i] = round(values[i] up) down, for up = 1/down a power of two;
/// without a branch per value when every |values[i] up| < 2^51.
pub fn round_to_lattice(values: &mut [f64], up: f64, down: f64) {
    if values.iter().fold(true, |ok, v| ok & ((*v * up).abs() < EXACT_BELOW)) {
        for v in values.iter_mut() {
            *v = ((*v * up + ROUNDING_SHIFT) - ROUNDING_SHIFT) * down;
        }
    } else {
        for v in values.iter_mut() {
            *v = round_to_integer(*v * up) * down;
        }
    }
}

/// 2^e, exactly as `2f64.powi(e)` (which is exact for powers of two) but
/// built from the bits when 2^e is a normal double: `powi` is a library
/// call (a loop of multiplications) made for every noise value.
fn pow2(e: i32) -> f64 {
    // No `powi` even in a cold branch: the compiler hoists that call above
    // the range test.
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((1023 + e) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074)) // subnormal
    } else {
        0.0
    }
}

/// Rounding to the lattice 2^-j with a bound on the step count
/// ([`SecureNoise::rounding`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatticeRounding {
    up: f64,
    down: f64,
    /// |v 2^j| must stay below this (limit - 1/2).
    bound: f64,
}

impl LatticeRounding {
    /// `v` on the lattice, or `None` when `v` is NaN, reaches the limit, or
    /// the limit is too large for the one-step rounding (then
    /// [`SecureNoise::to_lattice`] decides, with its error message).
    #[inline]
    pub fn round(&self, v: f64) -> Option<f64> {
        ((v * self.up).abs() < self.bound && self.bound <= EXACT_BELOW).then(|| self.round_checked(v))
    }

    /// The rounding of a `v` already checked: |v 2^j| < bound <= 2^51.
    #[inline]
    fn round_checked(&self, v: f64) -> f64 {
        ((v * self.up + ROUNDING_SHIFT) - ROUNDING_SHIFT) * self.down
    }
}

/// One noise entry at a time from a shared table ([`SecureNoise::entry_sampler`]).
#[derive(Clone)]
pub struct EntrySampler {
    sampler: Arc<CellSampler>,
    step: f64,
}

impl EntrySampler {
    /// One draw: an integer of the law times the lattice step. Always
    /// inlined: the tree's scalar step makes one draw a round, and a call
    /// there spills the round's registers.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> f64 {
        self.sampler.sample(rng) as f64 * self.step
    }
}

impl std::fmt::Debug for EntrySampler {
    // The table itself is thousands of entries: its law and step say it all.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntrySampler").field("shape", &self.sampler.shape()).field("step", &self.step).finish()
    }
}

/// Integer parameters of secure node noise on the lattice 2^-exponent.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum SecureKind {
    /// No noise (values are still rounded to the lattice).
    Zero,
    /// Discrete Laplace with scale `t` steps in every entry.
    Laplace { t: u64 },
    /// Discrete Gaussian with variance `var` steps^2 in every entry.
    Gaussian { var: u128 },
    /// Symmetric matrix: discrete Gaussian with variance `var` off the
    /// diagonal and `2 var` on it (the law of (Z + Z^T)/sqrt(2),
    /// Shariff–Sheffet §4.2, footnote 4), one draw per upper entry.
    SymmetricGaussian { var: u128 },
}

/// The law of lattice noise, without its scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatticeLaw {
    /// Discrete Laplace, scale t steps.
    Laplace,
    /// Discrete Gaussian, sigma s steps (variance s^2).
    Gaussian,
    /// Symmetric matrix discrete Gaussian, sigma s steps off the diagonal.
    SymmetricGaussian,
}

/// Secure node noise: integer parameters and the lattice they live on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecureNoise {
    kind: SecureKind,
    /// The lattice is multiples of 2^-exponent.
    exponent: i32,
}

impl SecureNoise {
    /// Lattice noise of `law` whose scale is `steps` lattice steps (the
    /// Laplace t, or the Gaussian sigma) on the lattice 2^-`exponent`: the
    /// integers the privacy layer computed
    /// (`dpbandits.privacy.secure.LatticeNoise`), taken as they are; nothing
    /// is rounded or rescaled here. `steps` must lie in [1, 2^21] for the
    /// Laplace, [1, 2^25] for the Gaussian and [1, 2^24] for the symmetric
    /// matrix Gaussian (whose diagonal has twice the variance); `exponent`
    /// in [-1000, 1000].
    pub fn from_steps(law: LatticeLaw, steps: u64, exponent: i32) -> Result<Self> {
        if !(-1000..=1000).contains(&exponent) {
            return Err(Error::invalid("lattice_exponent", format!("must lie in [-1000, 1000], got {exponent}")));
        }
        let (name, max) = match law {
            LatticeLaw::Laplace => ("scale", MAX_SCALE_STEPS),
            LatticeLaw::Gaussian => ("sigma", MAX_GAUSSIAN_SCALE_STEPS),
            LatticeLaw::SymmetricGaussian => ("sigma", MAX_SYMMETRIC_SCALE_STEPS),
        };
        if !(1..=max).contains(&steps) {
            return Err(Error::invalid(name, format!("{steps} lattice steps; secure sampling needs 1 to {max} steps")));
        }
        let s = u128::from(steps);
        let kind = match law {
            LatticeLaw::Laplace => SecureKind::Laplace { t: steps },
            LatticeLaw::Gaussian => SecureKind::Gaussian { var: s * s },
            LatticeLaw::SymmetricGaussian => SecureKind::SymmetricGaussian { var: s * s },
        };
        Ok(SecureNoise { kind, exponent })
    }

    /// The integer scale in lattice steps (the Laplace t, the Gaussian
    /// sigma = sqrt(var), exact for the values [`SecureNoise::from_steps`]
    /// builds), or `None` for the zero law.
    pub fn steps(&self) -> Option<u64> {
        match self.kind {
            SecureKind::Zero => None,
            SecureKind::Laplace { t } => Some(t),
            SecureKind::Gaussian { var } | SecureKind::SymmetricGaussian { var } => {
                let s = crate::noise::isqrt::isqrt(var);
                Some(s as u64)
            }
        }
    }

    /// The discrete counterpart of `spec` on the lattice 2^-`exponent`
    /// (Rust tests and benchmarks; the learners receive their integer
    /// scales from the privacy layer through [`SecureNoise::from_steps`]).
    ///
    /// The scale in steps is rounded UP: scale_steps = ceil(scale * 2^j)
    /// (more noise than asked, never less). It must lie in [1, 2^21] for the
    /// Laplace, [1, 2^25] for the Gaussian and [1, 2^24] for the symmetric
    /// matrix Gaussian (whose diagonal has twice the variance).
    /// Wishart noise has no exact discrete sampler here: an error.
    pub fn new(spec: NoiseSpec, exponent: i32) -> Result<Self> {
        if !(-1000..=1000).contains(&exponent) {
            return Err(Error::invalid("lattice_exponent", format!("must lie in [-1000, 1000], got {exponent}")));
        }
        let steps = |name: &'static str, x: f64, max: u64| -> Result<u64> {
            let s = (x * pow2(exponent)).ceil();
            if s.is_finite() && (1.0..=max as f64).contains(&s) {
                Ok(s as u64)
            } else {
                Err(Error::invalid(
                    name,
                    format!(
                        "{x} is {s} steps of the lattice 2^-{exponent}; secure sampling needs 1 to {max} steps \
                         (choose the exponent with dpbandits.privacy.secure.lattice_exponent)"
                    ),
                ))
            }
        };
        let kind = match spec {
            NoiseSpec::Zero => SecureKind::Zero,
            NoiseSpec::Laplace { scale } => SecureKind::Laplace { t: steps("scale", scale, MAX_SCALE_STEPS)? },
            NoiseSpec::Gaussian { sigma } => {
                let s = u128::from(steps("sigma", sigma, MAX_GAUSSIAN_SCALE_STEPS)?);
                SecureKind::Gaussian { var: s * s }
            }
            NoiseSpec::SymmetricGaussian { sigma } => {
                let s = u128::from(steps("sigma", sigma, MAX_SYMMETRIC_SCALE_STEPS)?);
                SecureKind::SymmetricGaussian { var: s * s }
            }
            NoiseSpec::Lattice(_) => return Err(Error::invalid("noise", "the noise is already on a lattice")),
            NoiseSpec::Wishart { .. } => {
                return Err(Error::invalid(
                    "noise",
                    "secure (exact discrete) sampling is available for Laplace and Gaussian noise, not Wishart",
                ))
            }
        };
        Ok(SecureNoise { kind, exponent })
    }

    /// The floating-point noise of the same scale (t g, or s g), for
    /// data-independent noise whose law carries no privacy (padding).
    pub fn continuous(&self) -> NoiseSpec {
        let step = self.step();
        match self.kind {
            SecureKind::Zero => NoiseSpec::Zero,
            SecureKind::Laplace { t } => NoiseSpec::Laplace { scale: t as f64 * step },
            SecureKind::Gaussian { var } => NoiseSpec::Gaussian { sigma: (var as f64).sqrt() * step },
            SecureKind::SymmetricGaussian { var } => NoiseSpec::SymmetricGaussian { sigma: (var as f64).sqrt() * step },
        }
    }

    /// Whether the parameters are in the ranges [`SecureNoise::new`]
    /// produces (a decoded state is checked with this).
    pub fn is_valid(&self) -> bool {
        let steps = 1..=u128::from(MAX_SCALE_STEPS);
        let var = 1..=u128::from(MAX_GAUSSIAN_SCALE_STEPS) * u128::from(MAX_GAUSSIAN_SCALE_STEPS);
        let symmetric_var = 1..=u128::from(MAX_SYMMETRIC_SCALE_STEPS) * u128::from(MAX_SYMMETRIC_SCALE_STEPS);
        (-1000..=1000).contains(&self.exponent)
            && match self.kind {
                SecureKind::Zero => true,
                SecureKind::Laplace { t } => steps.contains(&u128::from(t)),
                SecureKind::Gaussian { var: v } => var.contains(&v),
                SecureKind::SymmetricGaussian { var: v } => symmetric_var.contains(&v),
            }
    }

    /// The integer parameters.
    pub fn kind(&self) -> SecureKind {
        self.kind
    }

    /// j: values are multiples of 2^-j.
    pub fn exponent(&self) -> i32 {
        self.exponent
    }

    /// The lattice step 2^-j.
    pub fn step(&self) -> f64 {
        pow2(-self.exponent)
    }

    /// Rounds `values` to the nearest lattice points in place, refusing
    /// values whose step count reaches `limit` (so that later sums of them
    /// stay exact). The error leaves `values` unchanged.
    pub fn to_lattice(&self, name: &'static str, values: &mut [f64], limit: f64) -> Result<()> {
        let rounding = self.rounding(limit);
        let (up, bound) = (rounding.up, rounding.bound);
        // One branch-free pass (NaN fails the comparison): |v 2^j| below
        // limit - 1/2 keeps its rounding below limit.
        if !values.iter().fold(true, |ok, v| ok & ((*v * up).abs() < bound)) {
            let within = |v: &&f64| (**v * up).abs() < bound;
            let v = values.iter().find(|v| !within(v)).expect("an entry failed the bound");
            return Err(Error::invalid(
                name,
                format!(
                    "{v} is too large for exact arithmetic on the secure lattice 2^-{} (at most {limit:e} steps)",
                    self.exponent
                ),
            ));
        }
        if bound <= EXACT_BELOW {
            // The check above bounds every |v 2^j| below 2^51: round
            // without `round_to_lattice`'s second pass over the values.
            for v in values.iter_mut() {
                *v = rounding.round_checked(*v);
            }
        } else {
            round_to_lattice(values, up, self.step());
        }
        Ok(())
    }

    /// [`SecureNoise::to_lattice`]'s rounding for the limit `limit`, for
    /// callers that round one value at a time.
    pub fn rounding(&self, limit: f64) -> LatticeRounding {
        LatticeRounding { up: pow2(self.exponent), down: self.step(), bound: limit - 0.5 }
    }

    /// A handle drawing this noise one entry at a time, the same draws as
    /// [`SecureNoise::sample_into`] on a one-entry `out`; `None` for the
    /// zero and matrix laws.
    pub fn entry_sampler(&self) -> Option<EntrySampler> {
        let shape = match self.kind {
            SecureKind::Laplace { t } => Shape::Laplace { t: t.max(1) },
            SecureKind::Gaussian { var } => Shape::Gaussian { var: var.max(1) },
            SecureKind::Zero | SecureKind::SymmetricGaussian { .. } => return None,
        };
        Some(EntrySampler { sampler: cell_sampler::shared_sampler(shape), step: self.step() })
    }

    /// Writes one noise value (integers times 2^-j) into `out`; `side` is
    /// the matrix side for the symmetric Gaussian.
    pub fn sample_into<R: RngCore + ?Sized>(&self, rng: &mut R, side: usize, out: &mut [f64]) {
        let step = self.step();
        match self.kind {
            SecureKind::Zero => out.fill(0.0),
            SecureKind::Laplace { t } => {
                cell_sampler::with_sampler(Shape::Laplace { t: t.max(1) }, |s| s.fill_scaled(rng, step, out));
            }
            SecureKind::Gaussian { var } => {
                cell_sampler::with_sampler(Shape::Gaussian { var: var.max(1) }, |s| s.fill_scaled(rng, step, out));
            }
            SecureKind::SymmetricGaussian { var } => {
                // Row by row: the diagonal entry (variance 2 var), then the
                // row's upper entries in one call, mirrored below.
                let var = var.max(1);
                let p = side;
                cell_sampler::with_sampler(Shape::Gaussian { var: 2 * var }, |diag| {
                    cell_sampler::with_sampler(Shape::Gaussian { var }, |off| {
                        for i in 0..p {
                            out[i * p + i] = diag.sample(rng) as f64 * step;
                            off.fill_scaled(rng, step, &mut out[i * p + i + 1..(i + 1) * p]);
                            for j in (i + 1)..p {
                                out[j * p + i] = out[i * p + j];
                            }
                        }
                    });
                });
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod test;
