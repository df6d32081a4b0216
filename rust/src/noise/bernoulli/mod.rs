//! Exact Bernoulli draws of Bernoulli(num/den) and Bernoulli(exp(-num/den))
//! for integers num, den.
//!
//! - [`bernoulli_ratio`] (0 <= num <= den, 1 <= den <= 2^127): a uniform
//!   drawn bit by bit against the binary expansion of num/den;
//! - [`bernoulli_exp_neg`] (num >= 0, 1 <= den <= 2^127): for x = num/den
//!   in [0, 1] by Forsythe's runs (x > U_1 > U_2 > ... > U_N; return N
//!   even) of lazily revealed uniforms ([`super::uniform`]), exp(-gamma)
//!   for gamma > 1 as a product of floor(gamma) Bernoulli(exp(-1)) and one
//!   of the fraction. For den > 2^112 it keeps Canonne, Kamath & Steinke
//!   2020 ("The discrete Gaussian for differential privacy"), Alg. 1, with
//!   its own departure from exactness (documented at
//!   `bernoulli_exp_neg_cks`); the samplers never reach it.
//!
//! Every decision is an integer comparison of exact uniform bits, with no
//! floating point (Mironov 2012; see [`super::lattice`]). A Forsythe run
//! compares the heads of five uniforms from one generator word with flag
//! arithmetic (no branch); only a tie between heads the run reaches (chance
//! below 2^-10) or a run of 5 or more sends it to the general path, which
//! draws further digits until every comparison is decided.

use rand_core::RngCore;

use super::uniform::{heads, lazy_below_ratio, lazy_less, LazyUniform, FAST_DEN_MAX, HEAD_BITS};

/// Bernoulli(num / den), exactly (0 <= num <= den, 1 <= den <= 2^127).
///
/// Compares a uniform u in [0, 1), drawn bit by bit, with the binary
/// expansion of num/den produced by long division, and stops at the first
/// bit where they differ: u < num/den exactly when u's bit is the smaller.
/// Two bits are needed on average, one generator word almost always, and
/// no 128-bit division.
pub fn bernoulli_ratio<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    debug_assert!(num <= den && (1..=1 << 127).contains(&den));
    if den <= 1 << 62 {
        return bernoulli_ratio_u64(rng, num as u64, den as u64);
    }
    let mut rem = num;
    loop {
        let word = rng.next_u64();
        for i in (0..64).rev() {
            // Next bit of num/den: rem / den in [0, 1], doubled.
            rem <<= 1;
            let ratio_bit = rem >= den;
            if ratio_bit {
                rem -= den;
            }
            let u_bit = (word >> i) & 1 == 1;
            if u_bit != ratio_bit {
                return ratio_bit;
            }
        }
    }
}

/// [`bernoulli_ratio`] in 64-bit arithmetic (den <= 2^62).
fn bernoulli_ratio_u64<R: RngCore + ?Sized>(rng: &mut R, num: u64, den: u64) -> bool {
    let mut rem = num;
    loop {
        let word = rng.next_u64();
        for i in (0..64).rev() {
            rem <<= 1;
            let ratio_bit = rem >= den;
            if ratio_bit {
                rem -= den;
            }
            if ((word >> i) & 1 == 1) != ratio_bit {
                return ratio_bit;
            }
        }
    }
}

/// Bernoulli(exp(-num/den)) for 0 <= num <= den <= 2^112 (von Neumann
/// 1951; Forsythe 1972): with x = num/den, let N be the length of the
/// descending run x > U_1 > U_2 > ... > U_N of uniforms; then
/// P[N >= n] = x^n / n!, so P[N even] = sum_n (-x)^n / n! = exp(-x).
/// One word gives U_1..U_5 (heads); no branch unless a head ties
/// (probability < 2^-10) or the run reaches 5 (probability <= 1/120).
// Non-short-circuit `&`, `|` on booleans on purpose: they compile to flag
// arithmetic, where `&&`, `||` would add the unpredictable branches this
// code exists to avoid.
#[allow(clippy::needless_bitwise_bool)]
#[inline]
fn bernoulli_exp_neg_frac<R: RngCore + ?Sized, const SLOW_ONLY: bool>(rng: &mut R, num: u128, den: u128) -> bool {
    let h = heads(rng.next_u64());
    let [a, b, c, d, e] = h;
    let lhs = u128::from(a) * den;
    let target = num << HEAD_BITS;
    let c0 = lhs + den <= target; // U_1 < x for sure
    let undecided = !c0 & (lhs < target);
    let (c1, c2, c3, c4) = (b < a, c < b, d < c, e < d);
    let tie = (a == b) | (b == c) | (c == d) | (d == e);
    if SLOW_ONLY || undecided | tie | (c0 & c1 & c2 & c3 & c4) {
        return bernoulli_exp_neg_frac_slow(rng, h, num, den);
    }
    let n = u32::from(c0) + u32::from(c0 & c1) + u32::from(c0 & c1 & c2) + u32::from(c0 & c1 & c2 & c3);
    n & 1 == 0
}

/// The general path of [`bernoulli_exp_neg_frac`], from the same heads.
#[cold]
fn bernoulli_exp_neg_frac_slow<R: RngCore + ?Sized>(rng: &mut R, h: [u64; 5], num: u128, den: u128) -> bool {
    let mut prev = LazyUniform::new(h[0]);
    if !lazy_below_ratio(rng, &mut prev, num, den) {
        return true; // N = 0
    }
    let mut n = 1u64;
    let mut i = 1;
    loop {
        let mut next = if i < h.len() { LazyUniform::new(h[i]) } else { LazyUniform::fresh(rng) };
        i += 1;
        if !lazy_less(rng, &mut next, &mut prev) {
            return n.is_multiple_of(2);
        }
        n += 1;
        prev = next;
    }
}

/// Bernoulli(exp(-num/den)) for any num/den >= 0 with den <= 2^112:
/// exp(-gamma) = exp(-1)^floor(gamma) exp(-frac(gamma)), one independent
/// Bernoulli per factor, stopping at the first 0 (by subtraction: no
/// division, and rarely more than two steps).
pub(super) fn bernoulli_exp_neg_fast<R: RngCore + ?Sized, const SLOW_ONLY: bool>(
    rng: &mut R,
    num: u128,
    den: u128,
) -> bool {
    let mut num = num;
    while num > den {
        if !bernoulli_exp_neg_frac::<R, SLOW_ONLY>(rng, 1, 1) {
            return false;
        }
        num -= den;
    }
    bernoulli_exp_neg_frac::<R, SLOW_ONLY>(rng, num, den)
}

/// Bernoulli(exp(-num/den)) for any num >= 0, den >= 1 (den <= 2^127),
/// exactly: by [`bernoulli_exp_neg_frac`]'s runs of uniforms when
/// den <= 2^112, else by CKS 2020, Alg. 1.
pub fn bernoulli_exp_neg<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    if den <= FAST_DEN_MAX {
        bernoulli_exp_neg_fast::<R, false>(rng, num, den)
    } else {
        bernoulli_exp_neg_cks(rng, num, den)
    }
}

/// Bernoulli(exp(-num/den)) for 0 <= num/den <= 1 (CKS 2020, Alg. 1, first
/// case): draw A_K ~ Bernoulli(gamma / K) for K = 1, 2, ... until the first
/// 0; return 1 iff that K is odd.
pub(super) fn bernoulli_exp_neg_unit<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut k: u128 = 1;
    loop {
        let Some(dk) = den.checked_mul(k).filter(|&dk| dk <= 1 << 127) else {
            // Reached only after K > 2^40 successes (probability 1/(2^40)!):
            // treat the next Bernoulli(gamma / K) as 0.
            return k % 2 == 1;
        };
        if !bernoulli_ratio(rng, num, dk) {
            return k % 2 == 1;
        }
        k += 1;
    }
}

/// Bernoulli(exp(-num/den)) for any num/den >= 0 (CKS 2020, Alg. 1; the
/// path of [`bernoulli_exp_neg`] for den > 2^112): floor(gamma)
/// independent Bernoulli(exp(-1)) all 1, then one
/// Bernoulli(exp(-frac(gamma))). Stops at the first 0, so the expected
/// number of steps is below 1/(1 - e^-1) whatever gamma is. Departure: a
/// Bernoulli(gamma / K) that needs den K > 2^127 (after K > 2^40 successes
/// in a row, probability below 1/(2^40)!) is treated as 0.
fn bernoulli_exp_neg_cks<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut whole = num / den;
    while whole > 0 {
        if !bernoulli_exp_neg_unit(rng, 1, 1) {
            return false;
        }
        whole -= 1;
    }
    bernoulli_exp_neg_unit(rng, num % den, den)
}

#[cfg(test)]
mod test;
