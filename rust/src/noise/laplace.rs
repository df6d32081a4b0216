//! Laplace(0, b): density exp(-|x|/b) / (2b).

use rand::Rng;

/// One Laplace(0, `scale`) draw by inversion of the CDF.
#[inline]
pub fn laplace<R: Rng + ?Sized>(rng: &mut R, scale: f64) -> f64 {
    // u in (-1/2, 1/2]; 1 - 2|u| is in [0, 1), and is 0 only when u = 1/2,
    // which `random::<f64>()` (in [0, 1)) never yields after the shift below.
    let u: f64 = 0.5 - rng.random::<f64>();
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

    #[test]
    fn moments_match_laplace() {
        let mut rng = SeedSequence::from_seed(1).stream("test");
        let n = 200_000;
        let b = 2.0;
        let xs: Vec<f64> = (0..n).map(|_| laplace(&mut rng, b)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // Var = 2b^2 = 8; sd of the mean = sqrt(8/n) ~ 0.0063: 5 sd bound.
        assert!(mean.abs() < 5.0 * (8.0 / n as f64).sqrt(), "mean {mean}");
        // Var of the sample variance ~ (mu4 - sigma^4)/n = (24 b^4 - 4 b^4)/n.
        let sd_var = (20.0 * b.powi(4) / n as f64).sqrt();
        assert!((var - 8.0).abs() < 5.0 * sd_var, "var {var}");
        assert!(xs.iter().all(|x| x.is_finite()));
    }
}
