//! Laplace(0, b): density exp(-|x|/b) / (2b).

use rand::distr::Open01;
use rand::Rng;

/// One Laplace(0, `scale`) draw by inversion of the CDF.
#[inline]
pub fn laplace<R: Rng + ?Sized>(rng: &mut R, scale: f64) -> f64 {
    // Bug fix: this used `random::<f64>()`, which is in [0, 1) and can be
    // exactly 0; then u = 1/2, 1 - 2|u| = 0 and the draw was +inf (once in
    // 2^53 draws: rare, but one infinite node noise poisons every later
    // release of a tree counter).
    // Open01 excludes both ends, so u is in (-1/2, 1/2), 1 - 2|u| in (0, 1],
    // and the attainable values of u are symmetric about 0.
    let u: f64 = 0.5 - rng.sample::<f64, _>(Open01);
    let mag = -scale * (1.0 - 2.0 * u.abs()).ln();
    if u < 0.0 {
        -mag
    } else {
        mag
    }
}

/// Fills `out` with i.i.d. Laplace(0, `scale`) draws.
pub fn fill_laplace<R: Rng + ?Sized>(rng: &mut R, scale: f64, out: &mut [f64]) {
    for v in out.iter_mut() {
        *v = laplace(rng, scale);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;
    use rand_core::RngCore;

    /// A generator stuck at one 64-bit word: drives the uniform draw to the
    /// ends of its range.
    struct Constant(u64);

    impl RngCore for Constant {
        fn next_u32(&mut self) -> u32 {
            (self.0 >> 32) as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0
        }
        fn fill_bytes(&mut self, dst: &mut [u8]) {
            for (i, b) in dst.iter_mut().enumerate() {
                *b = self.0.to_le_bytes()[i % 8];
            }
        }
    }

    #[test]
    fn extreme_uniform_draws_give_finite_noise() {
        // A uniform of exactly 0 once made 1 - 2|u| = 0 and returned +inf.
        for word in [0, 1, 1 << 11, u64::MAX, u64::MAX - (1 << 11), 1 << 63, (1 << 63) - 1] {
            let x = laplace(&mut Constant(word), 1.0);
            assert!(x.is_finite(), "word {word:#x} gave {x}");
        }
    }

    #[test]
    fn moments_match_laplace() {
        let mut rng = SeedSequence::from_seed(1).stream("test");
        let n = 200_000;
        let b = 2.0;
        let xs: Vec<f64> = (0..n).map(|_| laplace(&mut rng, b)).collect();
        let mean = xs.iter().sum::<f64>() / f64::from(n);
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / f64::from(n);
        // Var = 2b^2 = 8; sd of the mean = sqrt(8/n) ~ 0.0063: 5 sd bound.
        assert!(mean.abs() < 5.0 * (8.0 / f64::from(n)).sqrt(), "mean {mean}");
        // Var of the sample variance ~ (mu4 - sigma^4)/n = (24 b^4 - 4 b^4)/n.
        let sd_var = (20.0 * b.powi(4) / f64::from(n)).sqrt();
        assert!((var - 8.0).abs() < 5.0 * sd_var, "var {var}");
        assert!(xs.iter().all(|x| x.is_finite()));
    }
}
