//! Wishart W_p(S, k) by the Bartlett decomposition.
//!
//! W = L A A^T L^T with S = L L^T and A lower triangular:
//! A_ii = sqrt(chi^2_{k-i}) (i = 0..p-1), A_ij ~ N(0, 1) below the diagonal.
//! The cost is O(p^3) whatever k is: k reaches 10^5-10^6 in
//! Shariff–Sheffet §4.1, where summing k outer products would cost O(k p^2).

use rand::Rng;
use rand_distr::{ChiSquared, Distribution};

use crate::rng::{open_unit, standard_normal};

use crate::error::{check_finite, check_positive, Error, Result};
use crate::linalg::cholesky;

/// A sampler of W_p(S, k) for fixed S and k.
#[derive(Clone, Debug)]
pub struct WishartSampler {
    p: usize,
    /// Lower Cholesky factor of S, row-major p x p.
    chol: Vec<f64>,
    /// Degrees of freedom k.
    df: f64,
}

impl WishartSampler {
    /// `Ok` when `df` is a valid number of degrees of freedom for side `p`
    /// (real df > p - 1 makes the Bartlett chi-squares proper).
    pub fn check_df(p: usize, df: f64) -> Result<()> {
        if df.is_finite() && df > (p as f64) - 1.0 {
            Ok(())
        } else {
            Err(Error::invalid(
                "df",
                format!("degrees of freedom must be finite and > p - 1 = {}, got {df}", p as f64 - 1.0),
            ))
        }
    }

    /// W_p(`scale` * I, `df`).
    pub fn isotropic(p: usize, scale: f64, df: f64) -> Result<Self> {
        check_positive("scale", scale)?;
        let mut s = vec![0.0; p * p];
        for i in 0..p {
            s[i * p + i] = scale;
        }
        Self::new(&s, p, df)
    }

    /// W_p(S, `df`) for a symmetric positive definite row-major `scale_matrix`.
    pub fn new(scale_matrix: &[f64], p: usize, df: f64) -> Result<Self> {
        if p == 0 || scale_matrix.len() != p * p {
            return Err(Error::invalid(
                "scale",
                format!("scale matrix must be p x p with p > 0, got {} entries for p = {p}", scale_matrix.len()),
            ));
        }
        check_finite("scale", scale_matrix)?;
        Self::check_df(p, df)?;
        let chol = cholesky(scale_matrix, p).map_err(|e| match e {
            Error::NotPositiveDefinite { pivot, value, .. } => {
                Error::NotPositiveDefinite { name: "scale", pivot, value }
            }
            other => other,
        })?;
        Ok(WishartSampler { p, chol, df })
    }

    /// Side of the sampled matrices.
    pub fn side(&self) -> usize {
        self.p
    }

    /// Writes one draw into the row-major `p x p` buffer `out`.
    pub fn sample_into<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) {
        let p = self.p;
        assert_eq!(out.len(), p * p, "buffer must hold a p x p matrix");
        let mut a = vec![0.0; p * p];
        bartlett_factor(rng, self.df, p, &mut a);
        // B = L A (both lower triangular, so B is lower triangular).
        let l = &self.chol;
        let mut b = vec![0.0; p * p];
        for i in 0..p {
            for j in 0..=i {
                let mut s = 0.0;
                for k in j..=i {
                    s += l[i * p + k] * a[k * p + j];
                }
                b[i * p + j] = s;
            }
        }
        // W = B B^T.
        for i in 0..p {
            for j in 0..=i {
                let mut s = 0.0;
                for k in 0..=j {
                    s += b[i * p + k] * b[j * p + k];
                }
                out[i * p + j] = s;
                out[j * p + i] = s;
            }
        }
    }
}

/// One draw of W_p(`scale` * I, `df`) into `out` (row-major p x p):
/// `scale` * A A^T with the Bartlett factor A. The isotropic case skips the
/// Cholesky factor of S and the sampler set-up, which matters when a tree
/// draws a fresh node every round. `df` must exceed p - 1.
pub fn fill_isotropic_wishart<R: Rng + ?Sized>(rng: &mut R, scale: f64, df: f64, p: usize, out: &mut [f64]) {
    assert_eq!(out.len(), p * p, "buffer must hold a p x p matrix");
    // On the stack up to p = 8 (a tree draws one or two of these a round).
    let (mut small, mut large) = ([0.0; 64], Vec::new());
    let a = if p * p <= small.len() {
        &mut small[..p * p]
    } else {
        large.resize(p * p, 0.0);
        &mut large[..]
    };
    bartlett_factor(rng, df, p, a);
    for i in 0..p {
        for j in 0..=i {
            let s: f64 = (0..=j).map(|k| a[i * p + k] * a[j * p + k]).sum::<f64>() * scale;
            out[i * p + j] = s;
            out[j * p + i] = s;
        }
    }
}

/// The Bartlett factor of W_p(I, `df`) into the lower triangle of the
/// row-major `p x p` buffer `a`: A_ii = sqrt(chi^2_{df-i}), A_ij ~ N(0, 1)
/// for j < i (entries above the diagonal are left as they are).
fn bartlett_factor<R: Rng + ?Sized>(rng: &mut R, df: f64, p: usize, a: &mut [f64]) {
    for i in 0..p {
        a[i * p + i] = chi_square(rng, df - i as f64);
        for j in 0..i {
            a[i * p + j] = standard_normal(rng);
        }
    }
    // The square roots after the draws, off the draws' dependency chain.
    for i in 0..p {
        a[i * p + i] = a[i * p + i].sqrt();
    }
}

/// One chi^2_k draw, k > 0: 2 Gamma(k / 2), by Marsaglia & Tsang's method
/// ("A simple method for generating gamma variables", ACM TOMS 26(3),
/// 2000) for shape k / 2 >= 1 (every diagonal entry of the privacy
/// mechanisms' draws, whose k is in the thousands or more); `rand_distr`'s
/// sampler below that. Marsaglia–Tsang with its squeeze is exact: a
/// proposal d v, v = (1 + c x)^3 with x ~ N(0, 1), is accepted with
/// probability proportional to the Gamma density over the proposal's.
fn chi_square<R: Rng + ?Sized>(rng: &mut R, k: f64) -> f64 {
    let shape = 0.5 * k;
    if shape < 1.0 {
        return ChiSquared::new(k).expect("df validated > p - 1").sample(rng);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let root = 1.0 + c * x;
        if root <= 0.0 {
            continue;
        }
        let v = root * root * root;
        let u = open_unit(rng);
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return 2.0 * d * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;

    #[test]
    fn mean_is_k_times_scale() {
        // E[W] = k S; Var(W_ij) = k (S_ij^2 + S_ii S_jj).
        let p = 3;
        let s = [2.0, 0.5, 0.0, 0.5, 1.0, 0.3, 0.0, 0.3, 1.5];
        let k = 7.5;
        let sampler = WishartSampler::new(&s, p, k).unwrap();
        let mut rng = SeedSequence::from_seed(11).stream("test");
        let n = 40_000;
        let mut sum = vec![0.0; p * p];
        let mut buf = vec![0.0; p * p];
        for _ in 0..n {
            sampler.sample_into(&mut rng, &mut buf);
            for (acc, v) in sum.iter_mut().zip(&buf) {
                *acc += v;
            }
        }
        for i in 0..p {
            for j in 0..p {
                let mean = sum[i * p + j] / f64::from(n);
                let want = k * s[i * p + j];
                let var = k * (s[i * p + j].powi(2) + s[i * p + i] * s[j * p + j]);
                let tol = 5.0 * (var / f64::from(n)).sqrt();
                assert!((mean - want).abs() < tol, "({i},{j}) mean {mean} want {want}");
            }
        }
    }

    #[test]
    fn isotropic_fast_path_has_mean_k_scale() {
        let (p, scale, k, n) = (4, 2.0, 9.0, 40_000);
        let mut rng = SeedSequence::from_seed(12).stream("test");
        let mut buf = vec![0.0; p * p];
        let mut sum = vec![0.0; p * p];
        for _ in 0..n {
            fill_isotropic_wishart(&mut rng, scale, k, p, &mut buf);
            for (acc, v) in sum.iter_mut().zip(&buf) {
                *acc += v;
            }
        }
        for i in 0..p {
            for j in 0..p {
                let s_ij = if i == j { scale } else { 0.0 };
                // Var(W_ij) = k (S_ij^2 + S_ii S_jj); 5 sd bound on the mean.
                let var = k * (s_ij * s_ij + scale * scale);
                let mean = sum[i * p + j] / f64::from(n);
                assert!((mean - k * s_ij).abs() < 5.0 * (var / f64::from(n)).sqrt(), "({i},{j}) {mean}");
            }
        }
    }

    #[test]
    fn chi_square_has_the_chi_square_moments() {
        // Both branches (shape k/2 below 1: rand_distr; from 1: Marsaglia–
        // Tsang), the boundary, and the huge k of the papers' node noise.
        for (k, seed) in [(1.2, 1u64), (2.0, 2), (5.5, 3), (57.3, 4), (3.0e6, 5)] {
            let mut rng = SeedSequence::from_seed(seed).stream("test/chi2");
            let n = 100_000;
            let draws: Vec<f64> = (0..n).map(|_| chi_square(&mut rng, k)).collect();
            let nf = f64::from(n);
            let mean = draws.iter().sum::<f64>() / nf;
            let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
            // E = k, Var = 2k; the sample variance's sd is
            // sqrt((mu_4 - sigma^4) / n), mu_4 = 12 k (k + 4). 5 sd bounds.
            assert!((mean - k).abs() < 5.0 * (2.0 * k / nf).sqrt(), "k {k}: mean {mean}");
            let var_sd = ((12.0 * k * (k + 4.0) - 4.0 * k * k) / nf).sqrt();
            assert!((var - 2.0 * k).abs() < 5.0 * var_sd, "k {k}: variance {var}");
            // Third central moment 8k (the skew Marsaglia–Tsang must keep).
            // Its estimate's asymptotic variance is (mu_6 - mu_3^2 - 6 mu_4
            // mu_2 + 9 mu_2^3) / n; with chi^2_k's cumulants 2^(j-1) (j-1)! k
            // that is (48 k^3 + 1440 k^2 + 3840 k) / n.
            let m3 = draws.iter().map(|x| (x - mean).powi(3)).sum::<f64>() / nf;
            let m3_sd = ((48.0 * k * k * k + 1440.0 * k * k + 3840.0 * k) / nf).sqrt();
            assert!((m3 - 8.0 * k).abs() < 5.0 * m3_sd, "k {k}: third moment {m3}");
            assert!(draws.iter().all(|&x| x > 0.0 && x.is_finite()));
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(WishartSampler::isotropic(3, 1.0, 1.5).is_err());
        assert!(WishartSampler::isotropic(3, -1.0, 10.0).is_err());
        assert!(WishartSampler::isotropic(3, 1.0, f64::NAN).is_err());
        let not_pd = [1.0, 2.0, 2.0, 1.0];
        assert!(matches!(WishartSampler::new(&not_pd, 2, 5.0), Err(Error::NotPositiveDefinite { name: "scale", .. })));
    }
}
