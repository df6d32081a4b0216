//! Exact coins and exact exponential-mechanism draws of the experts
//! engines on a loss lattice (the private shrinking dartboard and lazy
//! multiplicative weights).
//!
//! On the lattice every loss is an integer number of steps 2^-j and the
//! learning rate eta is a dyadic rational m 2^-e (every f64 is), so each
//! exponent eta q of a loss amount q is an exact fraction: the coin
//! Bernoulli(exp(-eta q)) is drawn exactly (`noise::bernoulli`, Canonne,
//! Kamath & Steinke 2020), and the law P(y) ∝ exp(-eta (L(y) - min L)) is
//! sampled exactly by rejection from the uniform law (expected trials at
//! most d). A dyadic probability p = m 2^-e (e <= 64) is one comparison of
//! e uniform bits with m. The released values are then exact functions of
//! uniform bits, not of floating-point arithmetic (Mironov 2012; Ilvento
//! 2020 for the exponential mechanism).

use rand::Rng;
use rand_core::RngCore;

use crate::error::{Error, Result};
use crate::noise::bernoulli::bernoulli_exp_neg;

/// Largest denominator exponent of an exact exponent eta q (the exact
/// Bernoulli's fast path takes denominators up to 2^112).
pub(crate) const MAX_DEN_BITS: u32 = 112;

/// Largest binary denominator exponent of a dyadic probability drawn by
/// [`bernoulli_dyadic`].
pub(crate) const MAX_PROBABILITY_BITS: u32 = 64;

/// x = m / 2^e exactly, for x finite and >= 0 (m odd unless e = 0).
/// Integers of 2^64 and more (whose exp(-x) is 0 to any precision) come
/// back as m = 2^64 - 1.
pub(crate) fn dyadic(x: f64) -> (u64, u32) {
    if x == 0.0 {
        return (0, 0);
    }
    let bits = x.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let (mut mant, mut exp) = if exp_field == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), exp_field - 1075)
    };
    let tz = mant.trailing_zeros();
    mant >>= tz;
    exp += tz as i32;
    if exp >= 0 {
        let exp = exp.unsigned_abs();
        (if mant.leading_zeros() >= exp { mant << exp } else { u64::MAX }, 0)
    } else {
        (mant, exp.unsigned_abs())
    }
}

/// Bernoulli(exp(-x)) for a finite x >= 0, exactly for the f64 value x
/// (denominators beyond 2^112 are cut to it: x below 2^-60 then).
pub(crate) fn bernoulli_exp_neg_f64(rng: &mut dyn RngCore, x: f64) -> bool {
    let (mut m, mut e) = dyadic(x);
    while e > MAX_DEN_BITS {
        m >>= 1;
        e -= 1;
    }
    bernoulli_exp_neg(rng, u128::from(m), 1u128 << e)
}

/// Refuses a probability `p` in [0, 1] that is not m 2^-e with e <= 64
/// (the exact draws of [`bernoulli_dyadic`]).
pub(crate) fn check_dyadic_probability(name: &'static str, p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) || dyadic(p).1 > MAX_PROBABILITY_BITS {
        return Err(Error::invalid(
            name,
            format!("{p} must lie in [0, 1] with at most {MAX_PROBABILITY_BITS} binary digits for exact draws"),
        ));
    }
    Ok(())
}

/// Bernoulli(p) exactly for p = m 2^-e, e <= 64 ([`check_dyadic_probability`]).
pub(crate) fn bernoulli_dyadic(rng: &mut dyn RngCore, p: f64) -> bool {
    let (m, e) = dyadic(p);
    match e {
        0 => m >= 1,
        64 => rng.next_u64() < m,
        _ => (rng.next_u64() >> (64 - e)) < m,
    }
}

/// Exact exponents eta q of the draws: q an integer number of lattice steps
/// of 2^-j, or a plain f64 without a lattice.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Exponent {
    /// eta = eta_num / 2^eta_bits.
    eta_num: u64,
    eta_bits: u32,
    /// Lattice exponent j (steps of 2^-j), None without a lattice.
    lattice: Option<u32>,
    eta: f64,
    step: f64,
}

impl Exponent {
    /// The exponents of `eta` on the lattice 2^-`lattice` (None: no lattice).
    pub(crate) fn new(eta: f64, lattice: Option<u32>) -> Self {
        let (eta_num, eta_bits) = dyadic(eta);
        let step = lattice.map_or(1.0, |j| 2f64.powi(-(j as i32)));
        Exponent { eta_num, eta_bits, lattice, eta, step }
    }

    /// Refuses an `eta` whose exponents on the lattice 2^-`j` need a
    /// denominator beyond 2^112.
    pub(crate) fn check(eta: f64, j: u32) -> Result<()> {
        let (_, eta_bits) = dyadic(eta);
        if eta_bits + j > MAX_DEN_BITS {
            return Err(Error::invalid(
                "eta",
                format!("{eta} has too many binary digits for exact draws on the lattice 2^-{j}"),
            ));
        }
        Ok(())
    }

    /// Bernoulli(exp(-eta v)) for a loss amount v >= 0 (a lattice value on the lattice).
    pub(crate) fn keep(&self, rng: &mut dyn RngCore, v: f64) -> bool {
        match self.lattice {
            Some(j) => {
                // v / step is an exact integer below 2^53.
                let q = (v / self.step) as u128;
                bernoulli_exp_neg(rng, u128::from(self.eta_num) * q, 1u128 << (self.eta_bits + j))
            }
            None => bernoulli_exp_neg_f64(rng, self.eta * v),
        }
    }
}

/// A draw from P(y) proportional to exp(-eta (values(y) - min values)), by
/// rejection from the uniform law (exact when `exponent` is).
pub(crate) fn exponential_draw(rng: &mut dyn RngCore, exponent: &Exponent, values: &[f64]) -> usize {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    loop {
        let y = rng.random_range(0..values.len());
        if exponent.keep(rng, values[y] - lo) {
            return y;
        }
    }
}

/// Rounds `values` (in [0, 1]) to the nearest points of the lattice
/// 2^-`j` (ties to even; j <= 52: exact, and the result stays in [0, 1]).
pub(crate) fn round_unit_to_lattice(values: &mut [f64], j: u32) {
    // For 0 <= y <= 2^52, (y + 2^52) - 2^52 is y rounded to the nearest
    // integer (the sum's unit in the last place is 1): one vectorizable
    // add and subtract where `f64::round` is a library call per entry.
    const SHIFT: f64 = 4_503_599_627_370_496.0; // 2^52
    let up = 2f64.powi(j as i32);
    let down = up.recip();
    for v in values.iter_mut() {
        *v = ((*v * up + SHIFT) - SHIFT) * down;
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;

    #[test]
    fn dyadic_decomposition_is_exact() {
        for x in [0.0, 1.0, 0.0625, 0.1, 3.0, 1e-300, 12345.5, 2f64.powi(60)] {
            let (m, e) = dyadic(x);
            let half = (e / 2) as i32;
            assert_eq!(m as f64 * 2f64.powi(-half) * 2f64.powi(half - e as i32), x, "{x}");
            assert!(e == 0 || m % 2 == 1);
        }
        assert_eq!(dyadic(1e30), (u64::MAX, 0));
    }

    #[test]
    fn dyadic_coins_have_their_probability() {
        let mut rng = SeedSequence::from_seed(9).stream("t");
        assert!(check_dyadic_probability("p", 1e-10).is_err(), "1e-10 has 86 binary digits");
        assert!(check_dyadic_probability("p", 1.5).is_err());
        for p in [0.0, 1.0, 0.3125, 2f64.powi(-64) * 3.0, 1.0 - 2f64.powi(-40)] {
            check_dyadic_probability("p", p).unwrap();
        }
        assert!(!bernoulli_dyadic(&mut rng, 0.0) && bernoulli_dyadic(&mut rng, 1.0));
        let runs = 200_000_u32;
        let p = 0.3125;
        let hits = (0..runs).filter(|_| bernoulli_dyadic(&mut rng, p)).count() as f64 / f64::from(runs);
        assert!((hits - p).abs() < 4.5 * (p * (1.0 - p) / f64::from(runs)).sqrt(), "{hits}");
    }

    #[test]
    fn lattice_rounding_is_to_the_nearest_point_and_stays_in_the_unit_interval() {
        let mut v = [0.0, 1.0, 0.3, 0.999_999_9, 2f64.powi(-12), 2f64.powi(-11), 3.0 * 2f64.powi(-11)];
        round_unit_to_lattice(&mut v, 10);
        assert_eq!(v, [0.0, 1.0, 307.0 / 1024.0, 1.0, 0.0, 0.0, 2.0 / 1024.0]);
        let mut fine = [1.0, 0.5 + 2f64.powi(-53)];
        round_unit_to_lattice(&mut fine, 52);
        assert_eq!(fine, [1.0, 0.5]);
        assert!(Exponent::check(0.1, 60).is_err());
        assert!(Exponent::check(0.0625, 100).is_ok());
    }
}
