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

#[cfg(test)]
mod test;
