//! Max-Det collections (Chen, Karthik, Chee & Tan 2024, "Fixed-budget
//! differentially private best arm identification", ICLR, arXiv
//! 2401.09073, Definition 3.1): among vectors v_1, ..., v_n of rank r, r
//! of them, B = (b_1, ..., b_r), spanning the same space with the largest
//! volume |det| (in coordinates of that span), and every v_i written as
//! v_i = sum_j alpha_ij b_j.
//!
//! What the fixed-budget learner uses is the bound |alpha_ij| <= 1: by
//! Cramer's rule alpha_ij is the ratio of the volume of B with b_j
//! replaced by v_i to the volume of B, so it holds for every collection
//! that no single exchange makes larger. This module computes such a
//! collection: a greedy start (pivoted Gram-Schmidt: each step takes the
//! vector of largest residual norm), then exchanges while some
//! |alpha_ij| > 1 + 1e-9 (each multiplies the volume by |alpha_ij|, so the
//! search ends). The global maximum of Definition 3.1 is NP-hard in
//! general; the exchange-stable collection keeps its bound.
//!
//! Deterministic: the result is a function of the vectors and their order
//! (ties go to the lower index).

/// A Max-Det collection of `n` vectors and the coefficients of each vector
/// in it.
#[derive(Clone, Debug, PartialEq)]
pub struct MaxDet {
    /// Indices (into the given vectors) of the collection, r of them.
    pub chosen: Vec<usize>,
    /// n x r, row-major: vector i = sum_j coef[i * r + j] * vector chosen[j].
    pub coef: Vec<f64>,
}

impl MaxDet {
    /// The rank r (size of the collection).
    pub fn rank(&self) -> usize {
        self.chosen.len()
    }
}

/// Relative tolerance below which a residual is taken as 0 (rank).
const RANK_TOLERANCE: f64 = 1e-10;
/// Exchanges are made while some |alpha| exceeds 1 + this.
const EXCHANGE_SLACK: f64 = 1e-9;

/// The collection of `vectors` (n x d, row-major); see the module docs.
pub fn max_det(vectors: &[f64], n: usize, d: usize) -> MaxDet {
    debug_assert_eq!(vectors.len(), n * d);
    let row = |i: usize| &vectors[i * d..(i + 1) * d];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let largest = (0..n).map(|i| dot(row(i), row(i))).fold(0.0_f64, f64::max);
    let mut chosen = Vec::new();
    if largest > 0.0 && largest.is_finite() {
        // Greedy start: pivoted Gram-Schmidt on the residuals.
        let mut residual = vectors.to_vec();
        let mut taken = vec![false; n];
        let tol = RANK_TOLERANCE * largest;
        for _ in 0..d.min(n) {
            let mut best = usize::MAX;
            let mut norm = tol;
            for i in 0..n {
                let r = &residual[i * d..(i + 1) * d];
                let v = dot(r, r);
                if !taken[i] && v > norm {
                    norm = v;
                    best = i;
                }
            }
            if best == usize::MAX {
                break;
            }
            taken[best] = true;
            chosen.push(best);
            let q: Vec<f64> = residual[best * d..(best + 1) * d].iter().map(|x| x / norm.sqrt()).collect();
            for i in 0..n {
                let r = &mut residual[i * d..(i + 1) * d];
                let p = dot(r, &q);
                for (x, qx) in r.iter_mut().zip(&q) {
                    *x -= p * qx;
                }
            }
        }
    }
    let r = chosen.len();
    let mut coef = coefficients(vectors, n, d, &chosen);
    // Exchanges while some coefficient exceeds 1 in absolute value.
    let cap = 64 * (r + 1) * (r + 1);
    for _ in 0..cap {
        let mut best = (0usize, 0usize, 1.0 + EXCHANGE_SLACK);
        for i in 0..n {
            if chosen.contains(&i) {
                continue;
            }
            for j in 0..r {
                let a = coef[i * r + j].abs();
                if a > best.2 {
                    best = (i, j, a);
                }
            }
        }
        if best.2 <= 1.0 + EXCHANGE_SLACK {
            break;
        }
        chosen[best.1] = best.0;
        coef = coefficients(vectors, n, d, &chosen);
    }
    MaxDet { chosen, coef }
}

/// The least-squares coefficients of every vector on the chosen ones
/// (exact for vectors in their span); the chosen rows are exact unit rows.
fn coefficients(vectors: &[f64], n: usize, d: usize, chosen: &[usize]) -> Vec<f64> {
    let r = chosen.len();
    let row = |i: usize| &vectors[i * d..(i + 1) * d];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    // Gram matrix G = B B^T and its Cholesky factor L (G = L L^T).
    let mut l = vec![0.0; r * r];
    for i in 0..r {
        for j in 0..=i {
            let mut s = dot(row(chosen[i]), row(chosen[j]));
            for m in 0..j {
                s -= l[i * r + m] * l[j * r + m];
            }
            l[i * r + j] = if i == j { s.max(f64::MIN_POSITIVE).sqrt() } else { s / l[j * r + j] };
        }
    }
    let mut coef = vec![0.0; n * r];
    let mut y = vec![0.0; r];
    for i in 0..n {
        if let Some(j) = chosen.iter().position(|&c| c == i) {
            coef[i * r + j] = 1.0;
            continue;
        }
        // Solve L L^T alpha = B v_i.
        for a in 0..r {
            let mut s = dot(row(chosen[a]), row(i));
            for m in 0..a {
                s -= l[a * r + m] * y[m];
            }
            y[a] = s / l[a * r + a];
        }
        for a in (0..r).rev() {
            let mut s = y[a];
            for m in a + 1..r {
                s -= l[m * r + a] * coef[i * r + m];
            }
            coef[i * r + a] = s / l[a * r + a];
        }
    }
    coef
}

#[cfg(test)]
mod tests {
    use super::*;

    fn det3(m: [[f64; 3]; 3]) -> f64 {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    }

    #[test]
    fn the_standard_basis_is_its_own_collection() {
        let v = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let m = max_det(&v, 3, 3);
        let mut c = m.chosen.clone();
        c.sort_unstable();
        assert_eq!(c, vec![0, 1, 2]);
    }

    #[test]
    fn coefficients_are_bounded_and_reconstruct_every_vector() {
        // 12 vectors in R^3 from a fixed pseudo-random sequence.
        let mut x = 0.3_f64;
        let v: Vec<f64> = (0..36)
            .map(|_| {
                x = (x * 997.0 + 0.123).fract();
                x - 0.5
            })
            .collect();
        let m = max_det(&v, 12, 3);
        assert_eq!(m.rank(), 3);
        for i in 0..12 {
            for j in 0..3 {
                assert!(m.coef[i * 3 + j].abs() <= 1.0 + 1e-6);
            }
            for c in 0..3 {
                let rebuilt: f64 = (0..3).map(|j| m.coef[i * 3 + j] * v[m.chosen[j] * 3 + c]).sum();
                assert!((rebuilt - v[i * 3 + c]).abs() < 1e-9);
            }
        }
        // An exchange-stable collection holds at least best / r^(r/2) of the
        // largest volume (Hadamard's bound on the coefficient matrix).
        let rows = |a: usize, b: usize, c: usize| {
            let r = |i: usize| [v[i * 3], v[i * 3 + 1], v[i * 3 + 2]];
            [r(a), r(b), r(c)]
        };
        let mut best = 0.0_f64;
        for a in 0..12 {
            for b in a + 1..12 {
                for c in b + 1..12 {
                    best = best.max(det3(rows(a, b, c)).abs());
                }
            }
        }
        let got = det3(rows(m.chosen[0], m.chosen[1], m.chosen[2])).abs();
        assert!(got >= best / 3f64.powf(1.5) - 1e-12, "{got} vs {best}");
    }

    #[test]
    fn rank_deficient_sets_are_spanned() {
        // Four vectors in a plane of R^3.
        let v = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, -1.0, 1.0];
        let m = max_det(&v, 4, 3);
        assert_eq!(m.rank(), 2);
        assert!(m.coef.iter().all(|c| c.abs() <= 1.0 + 1e-6));
        assert_eq!(max_det(&[0.0; 6], 2, 3).rank(), 0);
    }
}
