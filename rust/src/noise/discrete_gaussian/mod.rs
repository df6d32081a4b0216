//! The exact discrete Gaussian law by rejection from a discrete Laplace
//! proposal (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for
//! differential privacy", Alg. 3): the reference sampler the cell tables
//! ([`super::cell_sampler`]) are tested against.
//!
//! Discrete Gaussian with integer variance sigma^2 = `var`
//! (1 <= var <= 2^50, [`MAX_GAUSSIAN_VAR`]; 0 is read as 1),
//! P[Y = y] ∝ exp(-y^2 / (2 var)): discrete Laplace proposal
//! ([`super::discrete_laplace`]) with t ~ sqrt(var), accepted with
//! probability exp(-(|Y| t - var)^2 / (2 var t^2)) ([`super::bernoulli`]).
//! Every decision is an integer comparison of exact uniform bits, with no
//! floating point (Mironov 2012; see [`super::lattice`]).
//!
//! Departure from exactness (probability below 2^-100): a proposal with
//! (|Y| t - var)^2 >= 2^128 is rejected (it needs |Y| >= 2^64/t,
//! probability below exp(-2^12), and its acceptance probability is below
//! exp(-2^26) at var <= 2^50, t <= 2^25 + 1).

use rand_core::RngCore;

use super::bernoulli::bernoulli_exp_neg_fast;
use super::discrete_laplace::{is_negative_zero, signed, two_sided_geometric};
use super::isqrt::isqrt;
use super::uniform::FAST_DEN_MAX;

/// Largest variance the discrete Gaussian samplers accept (2^50 steps^2:
/// every product they form stays below 2^127 except in the documented
/// events).
pub const MAX_GAUSSIAN_VAR: u128 = 1 << 50;

/// floor(sqrt(m + 1/2) 2^12) for m in [64, 256), indexed by m - 64.
const SQRT_TABLE: [u16; 192] = {
    let mut table = [0u16; 192];
    let mut i = 0;
    while i < 192 {
        // floor(sqrt(n)) for n = (m + 1/2) 2^24 < 2^32, by bisection
        // (at compile time).
        let n = (2 * (i as u64 + 64) + 1) << 23;
        let (mut lo, mut hi) = (0u64, 1u64 << 16);
        while hi - lo > 1 {
            let mid = lo.midpoint(hi);
            if mid * mid <= n {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        table[i] = lo as u16;
        i += 1;
    }
    table
};

/// The discrete Laplace scale of the Gaussian proposal: sqrt(var) rounded
/// to the nearest integer below 2^20 (exact `isqrt`), else an integer
/// within 0.5% of sqrt(var) from var's leading 8 bits and a table of
/// square roots, in a few instructions (fewer than the exact `isqrt`, a
/// floating-point estimate and integer checks). Any
/// t >= 1 gives the exact law; t within 0.5% of sigma lowers the
/// acceptance rate by less than 10^-4.
fn proposal_scale(var: u128) -> u64 {
    if var < 1 << 20 {
        let s = isqrt(var);
        // sqrt(var) >= s + 1/2  <=>  var > s^2 + s (integers).
        return (if var > s * s + s { s + 1 } else { s }) as u64;
    }
    // var = m 2^(e - 6) + rest, rest < 2^(e - 6), with e even and m in
    // [64, 256); var / 2^(e - 6) lies within 1/2 of m + 1/2, so within a
    // factor 1 + 1/129 of it, and its root within 1 + 1/258 (then the
    // floors: below 2^-12 relative, and 1 absolute, 1/1024 of sigma).
    let e = var.ilog2() & !1;
    let m = (var >> (e - 6)) as usize;
    // sqrt(var) ~ sqrt(m + 1/2) 2^(e/2 - 3) = SQRT_TABLE[m - 64] 2^(e/2 - 15).
    ((u128::from(SQRT_TABLE[m - 64]) << (e / 2)) >> 15) as u64
}

/// Discrete Gaussian parameters, computed once per noise value.
#[derive(Clone, Copy, Debug)]
pub(super) struct DiscreteGaussian {
    var: u128,
    /// Scale of the discrete Laplace proposal: within 0.5% of sqrt(var)
    /// ([`proposal_scale`]; any t >= 1 gives the exact law; t near sigma
    /// maximises the acceptance rate, about 0.76 for large sigma).
    t: u64,
    /// 2 var t^2: gamma = (|Y| t - var)^2 / den.
    den: u128,
}

impl DiscreteGaussian {
    pub(super) fn new(var: u128) -> Self {
        let var = var.max(1);
        assert!(var <= MAX_GAUSSIAN_VAR, "discrete Gaussian variance {var} exceeds 2^50");
        let t = u128::from(proposal_scale(var));
        DiscreteGaussian { var, t: t as u64, den: 2 * var * t * t }
    }

    /// CKS 2020, Alg. 3 with scale t: Y ~ DLap(t), accepted with
    /// probability exp(-(|Y| - var/t)^2 / (2 var)) = exp(-gamma).
    #[inline]
    pub(super) fn sample<R: RngCore + ?Sized, const SLOW_ONLY: bool>(&self, rng: &mut R) -> i64 {
        loop {
            let (m, negative) = two_sided_geometric::<R, SLOW_ONLY>(rng, self.t);
            if is_negative_zero(m, negative) {
                continue;
            }
            let diff = (u128::from(m) * u128::from(self.t)).abs_diff(self.var);
            // diff^2 >= 2^128 means gamma > 2^26: acceptance probability
            // below exp(-2^26), decided as a rejection (documented).
            let Some(num) = diff.checked_mul(diff) else {
                continue;
            };
            let accept = bernoulli_exp_neg_fast::<R, SLOW_ONLY>(rng, num, self.den);
            if accept {
                return signed(m, negative);
            }
        }
    }
}

/// One discrete Gaussian draw with integer variance parameter `var`
/// (1 <= var <= 2^50; 0 is read as 1), P[Y = y] ∝ exp(-y^2 / (2 var)), by
/// CKS 2020, Alg. 3 (with the proposal scale t within 0.5%
/// of sqrt(var) instead of floor(sqrt(var)) + 1: any t >= 1 gives the same
/// law, and t ~ sigma accepts most often): Y ~ DLap(t) accepted with
/// probability exp(-(|Y| t - var)^2 / (2 var t^2)). The reference the cell
/// tables are tested against.
pub fn discrete_gaussian_cks<R: RngCore + ?Sized>(rng: &mut R, var: u128) -> i64 {
    DiscreteGaussian::new(var).sample::<R, false>(rng)
}

/// The discrete Gaussian with a dyadic centre, P[Y = y] ∝
/// exp(-(y - c)^2 / (2 var)) on the integers, c = C / 2^g: the same
/// rejection from a discrete Laplace proposal as CKS 2020, Alg. 3, centred
/// at floor(c), with the acceptance exponent extended to the fractional
/// part f = m / 2^g in [0, 1) of the centre.
///
/// With Y' = Y - floor(c) ~ DLap(t) (P ∝ exp(-|Y'| / t)), the log of
/// target over proposal, -(Y' - f)^2 / (2 var) + |Y'| / t, is at most
/// var / (2 t^2) + f / t (its maxima over the reals, at Y' = f -+ var / t);
/// the acceptance probability is exp(-gamma) with
///
/// - Y' >= 0: gamma = (Y' - f - var/t)^2 / (2 var),
/// - Y' < 0: gamma = (Y' - f + var/t)^2 / (2 var) + 2 f / t,
///
/// both >= 0, and gamma = num / (2 var t^2 4^g) with num an integer
/// (A^2, plus 4 m var t 2^g for Y' < 0, A = Y' t 2^g - m t -+ var 2^g).
/// f = 0 is Alg. 3 exactly. Every decision is an integer comparison of
/// exact uniform bits ([`super::bernoulli`]); the denominator is kept
/// within the fast path of the exact Bernoulli (2^112), which bounds g
/// given var ([`DyadicCentreGaussian::new`]).
///
/// Departure from exactness (probability below 2^-184 per proposal): a
/// proposal whose A^2 does not fit 128 bits is rejected. It needs
/// |Y'| t 2^g >= 2^63, i.e. |Y'| / t >= 2^63 / (t^2 2^g); with
/// 2 var t^2 4^g <= 2^112 and t^2 <= 2 var, t^2 2^g <= 2^56, so |Y'| is at
/// least 128 proposal scales out: proposal mass below e^-128.
#[derive(Clone, Copy, Debug)]
pub struct DyadicCentreGaussian {
    var: u128,
    t: u64,
    /// g: centres are C / 2^g.
    frac_bits: u32,
    /// 2 var t^2 4^g.
    den: u128,
}

impl DyadicCentreGaussian {
    /// The sampler of variance `var` (1 <= var <= 2^50, [`MAX_GAUSSIAN_VAR`])
    /// for centres C / 2^`frac_bits`; None when 2 var t^2 4^g exceeds 2^112
    /// (at var = 2^30, g <= 25; see [`DyadicCentreGaussian::max_frac_bits`]).
    pub fn new(var: u128, frac_bits: u32) -> Option<Self> {
        if !(1..=MAX_GAUSSIAN_VAR).contains(&var) || frac_bits > 56 {
            return None;
        }
        let t = u128::from(proposal_scale(var));
        let den = (2 * var * t * t).checked_mul(1u128.checked_shl(2 * frac_bits)?)?;
        (den <= FAST_DEN_MAX).then_some(DyadicCentreGaussian { var, t: t as u64, frac_bits, den })
    }

    /// The largest g for which [`DyadicCentreGaussian::new`] accepts `var`
    /// (None when var is out of range).
    pub fn max_frac_bits(var: u128) -> Option<u32> {
        (0..=56).rev().find(|&g| Self::new(var, g).is_some())
    }

    pub fn frac_bits(&self) -> u32 {
        self.frac_bits
    }

    /// One draw centred at `centre` / 2^g (|centre| / 2^g below 2^62).
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R, centre: i128) -> i64 {
        let g = self.frac_bits;
        let base = centre >> g; // floor(c)
        let m = (centre - (base << g)) as u128; // in [0, 2^g)
        let (t, var) = (i128::from(self.t), self.var as i128);
        let (mt, var_g) = ((m as i128) * t, var << g);
        let extra = (4 * m * self.var * u128::from(self.t)) << g;
        loop {
            let (mag, negative) = two_sided_geometric::<R, false>(rng, self.t);
            if is_negative_zero(mag, negative) {
                continue;
            }
            let y = signed(mag, negative);
            let Some(yt) = i128::from(y).checked_mul(t).and_then(|v| v.checked_mul(1i128 << g)) else {
                continue;
            };
            let a = if negative { yt - mt + var_g } else { yt - mt - var_g };
            let Some(mut num) = a.unsigned_abs().checked_mul(a.unsigned_abs()) else {
                continue;
            };
            if negative {
                let Some(sum) = num.checked_add(extra) else { continue };
                num = sum;
            }
            if bernoulli_exp_neg_fast::<R, false>(rng, num, self.den) {
                return (base as i64).saturating_add(y);
            }
        }
    }
}

#[cfg(test)]
mod test;
