//! UCB scores of a whole decision set: <theta, x> + beta ||x||_{V^-1}.
//!
//! The hot loop of every LinUCB round. Two forms of V^-1 arrive here:
//! a lower-triangular F with F^T F = V^-1 (F = L^-1 from the Cholesky
//! factor of a released V_t: ||x||^2_{V^-1} = ||F x||^2), or the symmetric
//! V^-1 itself (kept by Sherman–Morrison for non-private LinUCB). For the
//! small d of the papers' experiments, the kernels are instantiated for a
//! compile-time d (fully unrolled, no bounds checks) and the square roots
//! are taken in a separate pass so that the K independent widths overlap
//! in the pipeline instead of waiting on one another.

/// How V^-1 is given.
#[derive(Clone, Copy, Debug)]
pub enum InverseForm<'a> {
    /// Row-major lower-triangular F with F^T F = V^-1.
    LowerFactor(&'a [f64]),
    /// Row-major symmetric V^-1.
    Symmetric(&'a [f64]),
}

/// Writes UCB_i for every row of `features` (row-major k x d) into `out`.
pub fn ucb_scores(inverse: InverseForm<'_>, theta: &[f64], beta: f64, features: &[f64], d: usize, out: &mut [f64]) {
    macro_rules! fixed {
        ($($n:literal)*) => {
            match d {
                $($n => widths_fixed::<$n>(inverse, theta, features, out),)*
                _ => widths_dynamic(inverse, theta, features, d, out),
            }
        };
    }
    // `out` holds ||x||^2_{V^-1} after the first pass and the means go in
    // place: see `widths_*`; finish with the square roots.
    fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    let k = out.len();
    let (q, m) = out.split_at_mut(k / 2);
    for (qi, mi) in q.iter_mut().zip(m.iter()) {
        *qi = mi + beta * qi.max(0.0).sqrt();
    }
}

/// Fills out[..k] with ||x_i||^2_{V^-1} and out[k..2k] with <theta, x_i>.
fn widths_fixed<const D: usize>(inverse: InverseForm<'_>, theta: &[f64], features: &[f64], out: &mut [f64]) {
    let k = out.len() / 2;
    let theta: &[f64; D] = theta.try_into().expect("theta has d entries");
    let (q, m) = out.split_at_mut(k);
    match inverse {
        InverseForm::LowerFactor(f) => {
            let f: &[f64] = &f[..D * D];
            for ((x, qi), mi) in features.chunks_exact(D).zip(q.iter_mut()).zip(m.iter_mut()) {
                let x: &[f64; D] = x.try_into().expect("row of d features");
                let mut s = 0.0;
                let mut mean = 0.0;
                for r in 0..D {
                    let mut y = 0.0;
                    for c in 0..=r {
                        y += f[r * D + c] * x[c];
                    }
                    s += y * y;
                    mean += theta[r] * x[r];
                }
                *qi = s;
                *mi = mean;
            }
        }
        InverseForm::Symmetric(v) => {
            let v: &[f64] = &v[..D * D];
            for ((x, qi), mi) in features.chunks_exact(D).zip(q.iter_mut()).zip(m.iter_mut()) {
                let x: &[f64; D] = x.try_into().expect("row of d features");
                let mut s = 0.0;
                let mut mean = 0.0;
                for r in 0..D {
                    let mut y = 0.0;
                    for c in 0..D {
                        y += v[r * D + c] * x[c];
                    }
                    s += x[r] * y;
                    mean += theta[r] * x[r];
                }
                *qi = s;
                *mi = mean;
            }
        }
    }
}

fn widths_dynamic(inverse: InverseForm<'_>, theta: &[f64], features: &[f64], d: usize, out: &mut [f64]) {
    let k = out.len() / 2;
    let (q, m) = out.split_at_mut(k);
    for ((x, qi), mi) in features.chunks_exact(d).zip(q.iter_mut()).zip(m.iter_mut()) {
        let (mut s, mut mean) = (0.0, 0.0);
        for r in 0..d {
            let y: f64 = match inverse {
                InverseForm::LowerFactor(f) => (0..=r).map(|c| f[r * d + c] * x[c]).sum(),
                InverseForm::Symmetric(v) => (0..d).map(|c| v[r * d + c] * x[c]).sum::<f64>(),
            };
            s += match inverse {
                InverseForm::LowerFactor(_) => y * y,
                InverseForm::Symmetric(_) => x[r] * y,
            };
            mean += theta[r] * x[r];
        }
        *qi = s;
        *mi = mean;
    }
}

/// F = L^{-1} for a row-major lower-triangular `l` (n x n), into `out`.
pub fn lower_inverse(l: &[f64], n: usize, out: &mut [f64]) {
    out.fill(0.0);
    for i in 0..n {
        let inv = 1.0 / l[i * n + i];
        out[i * n + i] = inv;
        for j in 0..i {
            let mut s = 0.0;
            for k in j..i {
                s += l[i * n + k] * out[k * n + j];
            }
            out[i * n + j] = -s * inv;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(vinv: &[f64], theta: &[f64], beta: f64, x: &[f64], d: usize) -> f64 {
        let q: f64 = (0..d).map(|r| x[r] * (0..d).map(|c| vinv[r * d + c] * x[c]).sum::<f64>()).sum();
        let m: f64 = theta.iter().zip(x).map(|(a, b)| a * b).sum();
        m + beta * q.sqrt()
    }

    #[test]
    fn both_forms_and_all_sizes_agree_with_the_definition() {
        for d in [1usize, 3, 5, 8, 17] {
            // V = B B^T + I with a deterministic B.
            let b: Vec<f64> = (0..d * d).map(|i| ((i * 7 + 3) % 11) as f64 / 11.0 - 0.4).collect();
            let mut v = vec![0.0; d * d];
            for i in 0..d {
                for j in 0..d {
                    v[i * d + j] =
                        (0..d).map(|k| b[i * d + k] * b[j * d + k]).sum::<f64>() + if i == j { 1.0 } else { 0.0 };
                }
            }
            let chol = crate::linalg::Cholesky::factor(&v, d).unwrap();
            let vinv = chol.inverse();
            let mut f = vec![0.0; d * d];
            lower_inverse(chol.lower(), d, &mut f);
            let theta: Vec<f64> = (0..d).map(|i| i as f64 * 0.1 - 0.2).collect();
            let k = 7;
            let feats: Vec<f64> = (0..k * d).map(|i| ((i * 5 + 1) % 13) as f64 / 13.0 - 0.5).collect();
            let mut a = vec![0.0; 2 * k];
            let mut s = vec![0.0; 2 * k];
            ucb_scores(InverseForm::LowerFactor(&f), &theta, 1.7, &feats, d, &mut a);
            ucb_scores(InverseForm::Symmetric(&vinv), &theta, 1.7, &feats, d, &mut s);
            for i in 0..k {
                let want = direct(&vinv, &theta, 1.7, &feats[i * d..(i + 1) * d], d);
                assert!((a[i] - want).abs() < 1e-12, "d {d} lower");
                assert!((s[i] - want).abs() < 1e-12, "d {d} symmetric");
            }
        }
    }
}
