//! Laplace(0, b): density exp(-|x|/b) / (2b).

use rand::distr::Open01;
use rand::Rng;

use crate::rng::standard_normal;

/// One Laplace(0, `scale`) draw by inversion of the CDF.
#[inline]
pub fn laplace<R: Rng + ?Sized>(rng: &mut R, scale: f64) -> f64 {
    // Not `random::<f64>()`: it is in [0, 1) and can be exactly 0; then
    // u = 1/2, 1 - 2|u| = 0 and the draw is +inf (once in 2^53 draws: rare,
    // but one infinite node noise poisons every later release of a tree
    // counter).
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

/// Fills `out` with i.i.d. draws of the sum of `r` >= 1 independent
/// Laplace(0, `scale`) draws (data-independent padding), as
/// `scale` sqrt(2 G) Z with G ~ Gamma(r, 1) and Z ~ N(0, 1): Laplace(b) is
/// the normal scale mixture b sqrt(2 E) Z over E ~ Exp(1), so given the r
/// mixing variables the sum is N(0, 2 b^2 (E_1 + ... + E_r)), and that
/// sum is Gamma(r, 1). Exact in law; one Gamma and one normal per entry,
/// where b (G1 - G2) spends two Gammas.
pub fn fill_laplace_sum<R: Rng + ?Sized>(rng: &mut R, scale: f64, r: u32, out: &mut [f64]) {
    let gamma = GammaSampler::new(f64::from(r));
    for v in out.iter_mut() {
        let g = gamma.sample(rng);
        *v = scale * (2.0 * g).sqrt() * standard_normal(rng);
    }
}

/// Gamma(shape, 1) for shape >= 1 by Marsaglia & Tsang (2000), "A simple
/// method for generating gamma variables", on the crate's ziggurat normal.
struct GammaSampler {
    d: f64,
    c: f64,
}

impl GammaSampler {
    fn new(shape: f64) -> Self {
        debug_assert!(shape >= 1.0);
        let d = shape - 1.0 / 3.0;
        GammaSampler { d, c: 1.0 / (9.0 * d).sqrt() }
    }

    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        loop {
            let x = standard_normal(rng);
            let v = 1.0 + self.c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u: f64 = rng.sample(Open01);
            let x2 = x * x;
            // Squeeze first (accepts ~98%), then the exact test.
            if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + self.d * (1.0 - v + v.ln()) {
                return self.d * v;
            }
        }
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
    fn laplace_sums_have_the_law_of_direct_sums() {
        // Two-sample Kolmogorov-Smirnov against sums of r direct draws:
        // n = 40,000 a side, D above 1.95 sqrt(2 / n) = 0.0138 has
        // probability below 1e-3 under the same law (asymptotic Kolmogorov
        // tail 2 exp(-2 * 1.95^2)), for each of the r tried.
        let mut rng = SeedSequence::from_seed(2).stream("test");
        let n = 40_000;
        for r in [1u32, 2, 3, 8, 29] {
            let mut closed = vec![0.0; n];
            fill_laplace_sum(&mut rng, 1.5, r, &mut closed);
            let mut direct: Vec<f64> = (0..n).map(|_| (0..r).map(|_| laplace(&mut rng, 1.5)).sum()).collect();
            closed.sort_by(f64::total_cmp);
            direct.sort_by(f64::total_cmp);
            let (mut i, mut j, mut d) = (0, 0, 0.0f64);
            while i < n && j < n {
                if closed[i] <= direct[j] {
                    i += 1;
                } else {
                    j += 1;
                }
                d = d.max((i as f64 - j as f64).abs() / n as f64);
            }
            assert!(d < 1.95 * (2.0 / n as f64).sqrt(), "r = {r}: KS distance {d}");
            // Variance 2 r b^2 (sd of the sample variance about 3% here).
            let var = closed.iter().map(|x| x * x).sum::<f64>() / n as f64;
            let want = 2.0 * f64::from(r) * 1.5 * 1.5;
            assert!((var / want - 1.0).abs() < 0.06, "r = {r}: variance {var} vs {want}");
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
