//! Certified bounds on exp(-num/den) to any precision, and the exact
//! comparison of a lazily drawn uniform against a number known only
//! through such bounds.
//!
//! Why: the table samplers of [`super::cell_sampler`] decide almost every
//! draw from a few floating-point operations with a certified error
//! margin; the remaining draws (the uniform falls within the margin, about
//! one in a million) must still be decided exactly, or the sampled law
//! would only be close to the discrete Laplace / Gaussian law its privacy
//! proof assumes. Those draws reveal further binary digits of the uniform
//! and compare them against bounds on the acceptance probability computed
//! here in integer arithmetic, tightened until the comparison is settled.
//! No floating-point number enters; every rounding is directed (down for
//! a lower bound, up for an upper bound), so the bounds are proofs.
//!
//! exp(-x) for x in [0, 1] is bracketed by consecutive partial sums of its
//! alternating Taylor series (terms x^k / k! are non-increasing from
//! k = 0), and exp(-x) = exp(-1)^floor(x) exp(-frac(x)) for larger x.

use num_bigint::BigUint;
use num_traits::{One, Zero};
use rand_core::RngCore;

/// Fixed-point bounds: [lo, hi] * 2^-prec.
pub type Bounds = (BigUint, BigUint);

/// ceil(x / 2^s).
pub fn ceil_shr(x: &BigUint, s: u32) -> BigUint {
    if s == 0 {
        return x.clone();
    }
    let q = x >> s;
    if (&q << s) == *x {
        q
    } else {
        q + 1u32
    }
}

/// ceil(a / b) for b > 0.
pub fn ceil_div(a: &BigUint, b: &BigUint) -> BigUint {
    let q = a / b;
    if &q * b == *a {
        q
    } else {
        q + 1u32
    }
}

/// Bounds on exp(-r/den) for 0 <= r <= den, den >= 1, at `p` fractional
/// bits: the partial sums S_K <= exp(-x) <= S_{K+1} for odd K, each term
/// bounded below and above by directed rounding.
fn exp_neg_unit(r: u128, den: u128, p: u32) -> Bounds {
    debug_assert!(r <= den && den >= 1);
    let one = BigUint::one() << p;
    let (r_big, den_big) = (BigUint::from(r), BigUint::from(den));
    // Sums of the even-index and odd-index terms, lower and upper.
    let (mut even_lo, mut even_hi) = (one.clone(), one.clone());
    let (mut odd_lo, mut odd_hi) = (BigUint::zero(), BigUint::zero());
    let (mut term_lo, mut term_hi) = (one.clone(), one);
    let mut k: u32 = 0;
    // Stop after an even k whose upper term bound is at most 1 unit: then
    // S_{k-1} (odd) <= exp(-x) <= S_k (even), and they differ by <= 1 unit.
    let mut last_even_lo = BigUint::zero();
    loop {
        k += 1;
        let div = &den_big * BigUint::from(k);
        term_lo = (&term_lo * &r_big) / &div;
        term_hi = ceil_div(&(&term_hi * &r_big), &div);
        if k % 2 == 1 {
            odd_lo += &term_lo;
            odd_hi += &term_hi;
        } else {
            last_even_lo.clone_from(&term_lo);
            even_lo += &term_lo;
            even_hi += &term_hi;
            if term_hi <= BigUint::one() {
                break;
            }
        }
    }
    // Lower: S_{k-1} = even terms up to k - 2 minus odd terms up to k - 1.
    let even_before = &even_lo - &last_even_lo;
    let lo = if even_before > odd_hi { even_before - &odd_hi } else { BigUint::zero() };
    // Upper: S_k = even terms up to k minus odd terms up to k - 1.
    let hi = if even_hi > odd_lo { &even_hi - &odd_lo } else { BigUint::zero() };
    (lo, hi)
}

/// (lo, hi)^n at `p` fractional bits by binary powering, each product
/// rounded outward.
fn pow_bounds(base: &Bounds, mut n: u128, p: u32) -> Bounds {
    let one = BigUint::one() << p;
    let (mut acc_lo, mut acc_hi) = (one.clone(), one);
    let (mut b_lo, mut b_hi) = base.clone();
    while n > 0 {
        if n & 1 == 1 {
            acc_lo = (&acc_lo * &b_lo) >> p;
            acc_hi = ceil_shr(&(&acc_hi * &b_hi), p);
        }
        n >>= 1;
        if n > 0 {
            b_lo = (&b_lo * &b_lo) >> p;
            b_hi = ceil_shr(&(&b_hi * &b_hi), p);
        }
    }
    (acc_lo, acc_hi)
}

/// Guard bits carried inside the computations and dropped at the end.
const GUARD: u32 = 32;

/// [lo, hi] with lo <= exp(-num/den) 2^prec <= hi, den >= 1. The width is
/// a few units for num/den below about 2^20 (powering more factors of
/// exp(-1) widens it only in proportion to their number's logarithm).
pub fn exp_neg_bounds(num: u128, den: u128, prec: u32) -> Bounds {
    assert!(den >= 1, "exp_neg_bounds: den must be >= 1");
    let p = prec + GUARD;
    let whole = num / den;
    let frac = exp_neg_unit(num % den, den, p);
    let (lo, hi) = if whole == 0 {
        frac
    } else {
        let e = pow_bounds(&exp_neg_unit(1, 1, p), whole, p);
        ((&frac.0 * &e.0) >> p, ceil_shr(&(&frac.1 * &e.1), p))
    };
    (lo >> GUARD, ceil_shr(&hi, GUARD))
}

/// u < p exactly, for a uniform u in [0, 1) whose first `known_bits`
/// binary digits are `known` (further digits drawn from `rng`, 64 at a
/// time), with p known through `bounds(prec)` = [lo, hi] such that
/// lo <= p 2^prec <= hi, whose width stays bounded as prec grows.
///
/// u lies in [k, k + 1) 2^-len for its known digits k: below p for sure
/// when (k + 1) 2^(prec - len) <= lo, above when k 2^(prec - len) >= hi;
/// otherwise one more word of digits and 64 more bits of precision. Each
/// round settles the comparison except with probability about
/// (hi - lo + 2) / 2^64, so it ends after one round in practice and with
/// probability 1 always (u = p has probability 0).
pub fn uniform_below<R, F>(rng: &mut R, known: u64, known_bits: u32, mut bounds: F) -> bool
where
    R: RngCore + ?Sized,
    F: FnMut(u32) -> Bounds,
{
    let mut k = BigUint::from(known);
    let mut len = known_bits;
    loop {
        let prec = len + 64;
        let (lo, hi) = bounds(prec);
        let below = &k << (prec - len);
        let above = (&k + 1u32) << (prec - len);
        if above <= lo {
            return true;
        }
        if below >= hi {
            return false;
        }
        k = (k << 64u32) | BigUint::from(rng.next_u64());
        len += 64;
    }
}

/// Bounds on a 2^shift / b from bounds on a and on b > 0 (any sign of
/// shift), rounded outward: floor(a_lo 2^shift / b_hi) and
/// ceil(a_hi 2^shift / b_lo).
pub fn ratio_bounds(a: &Bounds, shift: i64, b: &Bounds) -> Bounds {
    assert!(!b.0.is_zero(), "ratio_bounds: the divisor's lower bound must be positive");
    let s = shift.unsigned_abs() as u32;
    if shift >= 0 {
        ((&a.0 << s) / &b.1, ceil_div(&(&a.1 << s), &b.0))
    } else {
        (&a.0 / (&b.1 << s), ceil_div(&a.1, &(&b.0 << s)))
    }
}

/// The value of fixed-point `x` at `prec` bits as a double, rounded
/// towards zero or away by two units in the last place (`up`): a certified
/// bound whatever rounding the conversion used.
pub fn to_f64_bound(x: &BigUint, prec: u32, up: bool) -> f64 {
    let bits = x.bits();
    // The 64 leading bits (truncated: below by less than 2^-63 relative),
    // converted with one rounding (half a unit in the last place).
    let drop = bits.saturating_sub(64);
    let mant = (x >> drop).iter_u64_digits().next().unwrap_or(0);
    let Some(v) = ldexp(mant as f64, drop as i64 - i64::from(prec)) else {
        // Below 2^-1020.
        return if up { 2f64.powi(-1000) } else { 0.0 };
    };
    if up {
        v.next_up().next_up()
    } else {
        v.next_down().next_down().max(0.0)
    }
}

/// m 2^e (m < 2^65) by exact power-of-two steps, with one rounding at
/// most (a subnormal result); `None` when it is below 2^-1020.
fn ldexp(m: f64, e: i64) -> Option<f64> {
    let (mut v, mut e) = (m, e);
    while e > 1000 {
        v *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 && v >= 2f64.powi(-20) {
        v *= 2f64.powi(-1000);
        e += 1000;
    }
    if e < -1000 {
        return None;
    }
    Some(v * 2f64.powi(e as i32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;

    fn as_f64(b: &BigUint, prec: u32) -> f64 {
        to_f64_bound(b, prec, false)
    }

    #[test]
    fn bounds_bracket_exp_and_are_tight() {
        // exp(-1) = 0.36787944117144233..., exp(-1/2) = 0.6065306597126334...,
        // exp(-10) = 4.5399929762484852e-5, exp(-7/3) = 0.09697196786440506
        // (Python decimal, 40 digits).
        let cases = [
            (1u128, 1u128, 0.367_879_441_171_442_33),
            (1, 2, 0.606_530_659_712_633_4),
            (10, 1, 4.539_992_976_248_485_2e-5),
            (7, 3, 0.096_971_967_864_405_06),
            (0, 5, 1.0),
        ];
        for (num, den, want) in cases {
            for prec in [60u32, 128, 300] {
                let (lo, hi) = exp_neg_bounds(num, den, prec);
                assert!(lo <= hi);
                assert!(&hi - &lo <= BigUint::from(8u32), "{num}/{den} at {prec}: width {}", &hi - &lo);
                let (l, h) = (as_f64(&lo, prec), to_f64_bound(&hi, prec, true));
                assert!(l <= want * (1.0 + 1e-15) && want <= h * (1.0 + 1e-15), "{num}/{den}: {l} {want} {h}");
                // Within the fixed point's resolution 2^-prec (and the constant's digits).
                assert!(
                    (l - want).abs() <= 16.0 * 2f64.powi(-(prec as i32)) + 1e-15 * want,
                    "{num}/{den}: {l} vs {want}"
                );
            }
        }
    }

    #[test]
    fn bounds_at_higher_precision_nest() {
        // The 300-bit bounds, cut to 100 bits, lie inside the 100-bit ones.
        let (lo1, hi1) = exp_neg_bounds(123_456, 78_901, 100);
        let (lo2, hi2) = exp_neg_bounds(123_456, 78_901, 300);
        assert!(lo1 <= (&hi2 >> 200u32) + 1u32 && (&lo2 >> 200u32) <= hi1);
        assert!(lo1 <= ceil_shr(&hi2, 200) && (&lo2 >> 200u32) <= hi1);
    }

    #[test]
    fn uniform_below_is_a_bernoulli_of_p() {
        // p = exp(-1/2): the frequency of u < p with no known digits.
        let mut rng = SeedSequence::from_seed(7).stream("uniform-below");
        let n = 200_000;
        let hits = (0..n).filter(|_| uniform_below(&mut rng, 0, 0, |prec| exp_neg_bounds(1, 2, prec))).count();
        let p = 0.606_530_659_712_633_4;
        let se = (p * (1.0 - p) / f64::from(n)).sqrt();
        assert!((hits as f64 / f64::from(n) - p).abs() < 5.0 * se);
    }

    #[test]
    fn uniform_below_decides_from_known_digits_near_p() {
        // Known digits just below and just above the first 64 bits of p:
        // the comparison must read further words and still be right.
        let prec = 64;
        let (lo, _) = exp_neg_bounds(1, 2, prec);
        let k = lo.iter_u64_digits().next().unwrap();
        let mut rng = SeedSequence::from_seed(8).stream("near-p");
        assert!(uniform_below(&mut rng, k - 2, 64, |q| exp_neg_bounds(1, 2, q)));
        assert!(!uniform_below(&mut rng, k + 2, 64, |q| exp_neg_bounds(1, 2, q)));
    }

    #[test]
    fn scale_and_conversion_are_outward() {
        let a = exp_neg_bounds(3, 2, 80);
        let three = (BigUint::from(3u32), BigUint::from(3u32));
        let s = ratio_bounds(&a, 5, &three);
        let want = (-1.5f64).exp() * 32.0 / 3.0;
        assert!(to_f64_bound(&s.0, 80, false) <= want && want <= to_f64_bound(&s.1, 80, true));
        let s = ratio_bounds(&a, -5, &three);
        let want = (-1.5f64).exp() / 32.0 / 3.0;
        assert!(to_f64_bound(&s.0, 80, false) <= want && want <= to_f64_bound(&s.1, 80, true));
    }
}
