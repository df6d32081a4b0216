//! Gaussian draws: scalars, vectors and the symmetric matrix of
//! Shariff–Sheffet §4.2.

use rand::Rng;

use crate::rng::standard_normal;

/// One N(0, `sigma`^2) draw (the 256-layer ziggurat of Marsaglia & Tsang
/// 2000, [`standard_normal`]: a table lookup and one 64-bit draw in ~99%
/// of calls, which matters because noise draws are a large part of a
/// private learner's round).
#[inline]
pub fn gaussian<R: Rng + ?Sized>(rng: &mut R, sigma: f64) -> f64 {
    sigma * standard_normal(rng)
}

/// Fills `out` with i.i.d. N(0, `sigma`^2).
pub fn fill_gaussian<R: Rng + ?Sized>(rng: &mut R, sigma: f64, out: &mut [f64]) {
    for v in out.iter_mut() {
        *v = gaussian(rng, sigma);
    }
}

/// Fills the row-major `p x p` buffer `out` with (Z + Z^T)/sqrt(2),
/// Z_ij ~ N(0, sigma^2) i.i.d. (Shariff–Sheffet §4.2).
///
/// Sampled directly in distribution: an off-diagonal entry
/// (Z_ij + Z_ji)/sqrt(2) is N(0, sigma^2), a diagonal entry
/// 2 Z_ii / sqrt(2) is N(0, 2 sigma^2) (footnote 4 of the paper), and the
/// p(p+1)/2 entries on and above the diagonal are independent. So one draw
/// per upper-triangular entry gives the same law with half the draws.
pub fn fill_symmetric_gaussian<R: Rng + ?Sized>(rng: &mut R, sigma: f64, p: usize, out: &mut [f64]) {
    assert_eq!(out.len(), p * p, "buffer must hold a p x p matrix");
    let diag_sigma = sigma * std::f64::consts::SQRT_2;
    for i in 0..p {
        out[i * p + i] = gaussian(rng, diag_sigma);
        for j in (i + 1)..p {
            let z = gaussian(rng, sigma);
            out[i * p + j] = z;
            out[j * p + i] = z;
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp, clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;

    #[test]
    fn symmetric_matrix_has_the_documented_variances() {
        let mut rng = SeedSequence::from_seed(3).stream("test");
        let p = 4;
        let n = 50_000;
        let sigma = 1.5;
        let mut buf = vec![0.0; p * p];
        let mut sum_sq = vec![0.0; p * p];
        for _ in 0..n {
            fill_symmetric_gaussian(&mut rng, sigma, p, &mut buf);
            for i in 0..p {
                for j in 0..p {
                    assert_eq!(buf[i * p + j], buf[j * p + i]);
                }
            }
            for (s, v) in sum_sq.iter_mut().zip(&buf) {
                *s += v * v;
            }
        }
        for i in 0..p {
            for j in 0..p {
                let want = if i == j { 2.0 } else { 1.0 } * sigma * sigma;
                let got = sum_sq[i * p + j] / f64::from(n);
                // Var of a chi-square mean: 2 want^2 / n; 5 sd bound.
                let tol = 5.0 * want * (2.0 / f64::from(n)).sqrt();
                assert!((got - want).abs() < tol, "({i},{j}) var {got} want {want}");
            }
        }
    }
}
