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
// `inline(always)` throughout: each kernel must be generated inside the
// `target_feature` function of `avx2_fma` below, or the AVX2 build would
// call baseline code (and `f64::mul_add` would become a libm call).
#![allow(clippy::inline_always)]

/// Largest d with a compile-time kernel; above it the blocked kernels run.
pub const FIXED_MAX_D: usize = 16;

/// How V^-1 is given.
#[derive(Clone, Copy, Debug)]
pub enum InverseForm<'a> {
    /// Row-major lower-triangular F with F^T F = V^-1.
    LowerFactor(&'a [f64]),
    /// Row-major symmetric V^-1.
    Symmetric(&'a [f64]),
    /// The row-major Cholesky factor L of V (V = L L^T) and 1 / L_ii:
    /// ||x||^2_{V^-1} = ||L^-1 x||^2 by one blocked forward substitution
    /// over all actions (no inverse formed; always the blocked kernel).
    Cholesky { lower: &'a [f64], inv_diag: &'a [f64] },
}

/// Writes UCB_i for every row of `features` (row-major k x d) into `out`.
///
/// Runs the kernels compiled for AVX2 + FMA when the CPU has them (see
/// [`crate::cpu_dispatch`]), the baseline x86-64 build otherwise. The two
/// agree to rounding (fused multiply-adds round once instead of twice).
pub fn ucb_scores(inverse: InverseForm<'_>, theta: &[f64], beta: f64, features: &[f64], d: usize, out: &mut [f64]) {
    crate::cpu_dispatch::on_avx2_fma!(avx2_fma::ucb_scores(inverse, theta, beta, features, d, out));
    ucb_scores_with::<Separate, BASELINE_BLOCK>(inverse, theta, beta, features, d, out);
}

/// The kernels compiled for AVX2 + FMA (fused multiply-adds, wider blocks).
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use super::{ucb_scores_with, Fused, InverseForm, WIDE_BLOCK};

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn ucb_scores(inv: InverseForm<'_>, theta: &[f64], beta: f64, x: &[f64], d: usize, out: &mut [f64]) {
        ucb_scores_with::<Fused, WIDE_BLOCK>(inv, theta, beta, x, d, out);
    }
}

/// How a kernel forms a * b + c: the baseline build has no fused
/// multiply-add instruction (`f64::mul_add` would call libm there), so the
/// kernels are generic over it and each build picks its own.
pub(crate) trait MulAdd {
    fn mul_add(a: f64, b: f64, c: f64) -> f64;
}

/// a * b + c with two roundings (baseline x86-64).
pub(crate) struct Separate;

impl MulAdd for Separate {
    #[inline(always)]
    fn mul_add(a: f64, b: f64, c: f64) -> f64 {
        a * b + c
    }
}

/// a * b + c with one rounding; only for code compiled with the `fma`
/// target feature, where it is one instruction.
pub(crate) struct Fused;

impl MulAdd for Fused {
    #[inline(always)]
    fn mul_add(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

/// The body of [`ucb_scores`] for one multiply-add; inlined into each
/// build (baseline, `avx2_fma`), so every kernel below is compiled for it.
#[inline(always)]
pub(crate) fn ucb_scores_with<M: MulAdd, const B: usize>(
    inverse: InverseForm<'_>,
    theta: &[f64],
    beta: f64,
    features: &[f64],
    d: usize,
    out: &mut [f64],
) {
    macro_rules! fixed {
        ($($n:literal)*) => {
            match (d, inverse) {
                (_, InverseForm::Cholesky { .. }) => widths_dynamic::<M, B>(inverse, theta, features, d, out),
                $(($n, _) => widths_fixed::<M, $n>(inverse, theta, features, out),)*
                _ => widths_dynamic::<M, B>(inverse, theta, features, d, out),
            }
        };
    }
    // `out` holds ||x||^2_{V^-1} after the first pass and the means go in
    // place: see `widths_*`; finish with the square roots.
    fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    let k = out.len();
    let (q, m) = out.split_at_mut(k / 2);
    for (qi, mi) in q.iter_mut().zip(m.iter()) {
        *qi = M::mul_add(beta, qi.max(0.0).sqrt(), *mi);
    }
}

/// Actions scored together by the fixed-d lower-factor kernel.
const ACTION_LANES: usize = 4;

/// ||F x||^2 and <theta, x> of `ACTION_LANES` actions (rows of `actions`),
/// transposed so that each step is one vector operation over the actions
/// (one action at a time, the chains of dependent multiply-adds set the
/// pace). Lanes are independent: an action's results are the same bits in
/// any lane.
#[allow(clippy::inline_always, clippy::needless_range_loop)]
#[inline(always)]
fn lower_factor_lanes<M: MulAdd, const D: usize>(
    f: &[f64],
    theta: &[f64; D],
    actions: &[f64],
) -> ([f64; ACTION_LANES], [f64; ACTION_LANES]) {
    assert_eq!(actions.len(), ACTION_LANES * D, "a group of actions");
    let mut xt = [[0.0; ACTION_LANES]; D];
    for (l, x) in actions.chunks_exact(D).enumerate() {
        for c in 0..D {
            xt[c][l] = x[c];
        }
    }
    let (mut s, mut mean) = ([0.0; ACTION_LANES], [0.0; ACTION_LANES]);
    for r in 0..D {
        let mut y = [0.0; ACTION_LANES];
        for c in 0..=r {
            let fv = f[r * D + c];
            for l in 0..ACTION_LANES {
                y[l] = M::mul_add(fv, xt[c][l], y[l]);
            }
        }
        for l in 0..ACTION_LANES {
            s[l] = M::mul_add(y[l], y[l], s[l]);
            mean[l] = M::mul_add(theta[r], xt[r][l], mean[l]);
        }
    }
    (s, mean)
}

/// Fills out[..k] with ||x_i||^2_{V^-1} and out[k..2k] with <theta, x_i>.
#[inline(always)]
fn widths_fixed<M: MulAdd, const D: usize>(inverse: InverseForm<'_>, theta: &[f64], features: &[f64], out: &mut [f64]) {
    let k = out.len() / 2;
    let theta: &[f64; D] = theta.try_into().expect("theta has d entries");
    let (q, m) = out.split_at_mut(k);
    match inverse {
        InverseForm::LowerFactor(f) => {
            let f: &[f64] = &f[..D * D];
            // ACTION_LANES actions at a time (see `lower_factor_lanes`); a
            // last, partial group runs padded with zero actions.
            let groups = features.chunks_exact(ACTION_LANES * D);
            let rest = groups.remainder();
            for ((g, qo), mo) in groups.zip(q.chunks_exact_mut(ACTION_LANES)).zip(m.chunks_exact_mut(ACTION_LANES)) {
                let (s, mean) = lower_factor_lanes::<M, D>(f, theta, g);
                qo.copy_from_slice(&s);
                mo.copy_from_slice(&mean);
            }
            if !rest.is_empty() {
                let mut padded = [[0.0; D]; ACTION_LANES];
                padded.as_flattened_mut()[..rest.len()].copy_from_slice(rest);
                let (s, mean) = lower_factor_lanes::<M, D>(f, theta, padded.as_flattened());
                let (n, first) = (rest.len() / D, k - rest.len() / D);
                q[first..].copy_from_slice(&s[..n]);
                m[first..].copy_from_slice(&mean[..n]);
            }
        }
        InverseForm::Cholesky { .. } => unreachable!("the Cholesky form always takes the blocked kernel"),
        InverseForm::Symmetric(v) => {
            let v: &[f64] = &v[..D * D];
            for ((x, qi), mi) in features.chunks_exact(D).zip(q.iter_mut()).zip(m.iter_mut()) {
                let x: &[f64; D] = x.try_into().expect("row of d features");
                let mut s = 0.0;
                let mut mean = 0.0;
                for r in 0..D {
                    let mut y = 0.0;
                    for c in 0..D {
                        y = M::mul_add(v[r * D + c], x[c], y);
                    }
                    s = M::mul_add(x[r], y, s);
                    mean = M::mul_add(theta[r], x[r], mean);
                }
                *qi = s;
                *mi = mean;
            }
        }
    }
}

/// Actions per block of the general-d kernel: the action index is the
/// vector dimension, so every multiply-add below works on `B` actions.
/// The baseline build takes 8 (four SSE2 registers per factor row); the
/// AVX2 build 16, so that two rows keep eight independent FMA chains in
/// flight (enough to hide the FMA latency on two ports).
pub(crate) const BASELINE_BLOCK: usize = 8;
/// See [`BASELINE_BLOCK`].
pub(crate) const WIDE_BLOCK: usize = 16;

/// General d: the actions are taken `B` at a time and transposed into
/// a d x `B` tile, so that applying one row of the factor (or of V^-1)
/// is a broadcast times a row of the tile added into `B` independent
/// sums: one blocked triangular matrix product per tile, which the
/// compiler vectorises across actions. Two rows of the factor are applied
/// per pass over the tile (each tile row loaded once for both).
#[inline(always)]
fn widths_dynamic<M: MulAdd, const B: usize>(
    inverse: InverseForm<'_>,
    theta: &[f64],
    features: &[f64],
    d: usize,
    out: &mut [f64],
) {
    let k = out.len() / 2;
    let (q, m) = out.split_at_mut(k);
    let mut tile = vec![[0.0f64; B]; d];
    let (mut solved, pairs) = match inverse {
        InverseForm::Cholesky { lower, .. } => {
            (vec![Row::default(); d], lower.iter().map(|&v| Pair([v, v])).collect::<Vec<_>>())
        }
        _ => (Vec::new(), Vec::new()),
    };
    for ((rows, qb), mb) in features.chunks(B * d).zip(q.chunks_mut(B)).zip(m.chunks_mut(B)) {
        let n = qb.len();
        for (b, x) in rows.chunks_exact(d).enumerate() {
            for (t, &v) in tile.iter_mut().zip(x) {
                t[b] = v;
            }
        }
        if n < B {
            for t in &mut tile {
                t[n..].fill(0.0);
            }
        }
        let mut mean = [0.0; B];
        for (t, &w) in tile.iter().zip(theta) {
            for b in 0..B {
                mean[b] = M::mul_add(w, t[b], mean[b]);
            }
        }
        let sq = match inverse {
            InverseForm::LowerFactor(f) => factor_tile::<M, B>(f, &tile, d),
            InverseForm::Symmetric(v) => symmetric_tile::<M, B>(v, &tile, d),
            InverseForm::Cholesky { lower, inv_diag } => {
                solve_tile::<M, B>(lower, &pairs, inv_diag, &tile, d, &mut solved)
            }
        };
        qb.copy_from_slice(&sq[..n]);
        mb.copy_from_slice(&mean[..n]);
    }
}

/// ||F x_b||^2 for the `B` actions of `tile` (d x `B`).
#[inline(always)]
fn factor_tile<M: MulAdd, const B: usize>(f: &[f64], tile: &[[f64; B]], d: usize) -> [f64; B] {
    let mut acc = [0.0; B];
    let mut r = 0;
    while r + 1 < d {
        // Rows r and r + 1 of F: (F x)_r and (F x)_{r+1} for every action.
        let f0 = &f[r * d..=r * d + r];
        let f1 = &f[(r + 1) * d..=(r + 1) * d + r + 1];
        let mut y0 = [0.0; B];
        let mut y1 = [0.0; B];
        for ((t, &a0), &a1) in tile.iter().zip(f0).zip(f1) {
            for b in 0..B {
                y0[b] = M::mul_add(a0, t[b], y0[b]);
                y1[b] = M::mul_add(a1, t[b], y1[b]);
            }
        }
        let a1 = f1[r + 1];
        let t = &tile[r + 1];
        for b in 0..B {
            y1[b] = M::mul_add(a1, t[b], y1[b]);
            acc[b] = M::mul_add(y1[b], y1[b], M::mul_add(y0[b], y0[b], acc[b]));
        }
        r += 2;
    }
    if r < d {
        let f0 = &f[r * d..=r * d + r];
        let mut y0 = [0.0; B];
        for (t, &a0) in tile.iter().zip(f0) {
            for b in 0..B {
                y0[b] = M::mul_add(a0, t[b], y0[b]);
            }
        }
        for b in 0..B {
            acc[b] = M::mul_add(y0[b], y0[b], acc[b]);
        }
    }
    acc
}

/// A factor entry twice over, 16-byte aligned: one vector register without
/// a broadcast shuffle in the inner loop (baseline x86-64 has no broadcast
/// load).
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Pair([f64; 2]);

/// A row of solved values, aligned for vector loads.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Row<const B: usize>([f64; B]);

impl<const B: usize> Default for Row<B> {
    fn default() -> Self {
        Row([0.0; B])
    }
}

/// ||L^-1 x_b||^2 for the `B` actions of `tile`: forward substitution
/// y_r = (x_r - sum_{c<r} L_rc y_c) / L_rr on all of them at once, into
/// `y` (d x `B`), two rows per pass over the solved part. `pairs` is
/// `l` with every entry duplicated.
// Indexed loops over the block lanes: the shape the vectoriser wants.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn solve_tile<M: MulAdd, const B: usize>(
    l: &[f64],
    pairs: &[Pair],
    inv_diag: &[f64],
    tile: &[[f64; B]],
    d: usize,
    y: &mut [Row<B>],
) -> [f64; B] {
    let mut acc = [0.0; B];
    let mut r = 0;
    while r + 1 < d {
        let l0 = &pairs[r * d..r * d + r];
        let l1 = &pairs[(r + 1) * d..(r + 1) * d + r];
        let mut s0 = tile[r];
        let mut s1 = tile[r + 1];
        for ((yc, a0), a1) in y[..r].iter().zip(l0).zip(l1) {
            for b in 0..B {
                s0[b] = M::mul_add(-a0.0[b & 1], yc.0[b], s0[b]);
                s1[b] = M::mul_add(-a1.0[b & 1], yc.0[b], s1[b]);
            }
        }
        let (i0, i1, a) = (inv_diag[r], inv_diag[r + 1], l[(r + 1) * d + r]);
        let mut y0 = [0.0; B];
        let mut y1 = [0.0; B];
        for b in 0..B {
            y0[b] = s0[b] * i0;
            y1[b] = M::mul_add(-a, y0[b], s1[b]) * i1;
            acc[b] = M::mul_add(y1[b], y1[b], M::mul_add(y0[b], y0[b], acc[b]));
        }
        y[r] = Row(y0);
        y[r + 1] = Row(y1);
        r += 2;
    }
    if r < d {
        let l0 = &pairs[r * d..r * d + r];
        let mut s0 = tile[r];
        for (yc, a0) in y[..r].iter().zip(l0) {
            for b in 0..B {
                s0[b] = M::mul_add(-a0.0[b & 1], yc.0[b], s0[b]);
            }
        }
        for b in 0..B {
            let v = s0[b] * inv_diag[r];
            acc[b] = M::mul_add(v, v, acc[b]);
        }
    }
    acc
}

/// x_b^T V^-1 x_b for the `B` actions of `tile`, from the lower
/// triangle of the symmetric V^-1: sum_r x_r (V_rr x_r + 2 sum_{c<r} V_rc x_c).
#[inline(always)]
fn symmetric_tile<M: MulAdd, const B: usize>(v: &[f64], tile: &[[f64; B]], d: usize) -> [f64; B] {
    let mut acc = [0.0; B];
    for r in 0..d {
        let row = &v[r * d..r * d + r];
        let mut y = [0.0; B];
        for (t, &a) in tile.iter().zip(row) {
            for b in 0..B {
                y[b] = M::mul_add(a, t[b], y[b]);
            }
        }
        let diag = v[r * d + r];
        let t = &tile[r];
        for b in 0..B {
            acc[b] = M::mul_add(t[b], M::mul_add(diag, t[b], 2.0 * y[b]), acc[b]);
        }
    }
    acc
}

/// F = L^{-1} for a row-major lower-triangular `l` (n x n) whose diagonal
/// reciprocals are `inv_diag`, into `out`. Runs every round of a private
/// LinUCB, so small n get straight-line code.
pub fn lower_inverse(l: &[f64], inv_diag: &[f64], n: usize, out: &mut [f64]) {
    macro_rules! fixed {
        ($($n:literal)*) => {
            match n {
                $($n => return lower_inverse_with::<$n>(l, inv_diag, out),)*
                _ => {}
            }
        };
    }
    fixed!(2 3 4 5 6 7 8);
    lower_inverse_with::<0>(l, inv_diag, out);
}

/// The body of [`lower_inverse`]; `N` is n when known at compile time, 0
/// otherwise.
#[allow(clippy::inline_always)]
#[inline(always)]
fn lower_inverse_with<const N: usize>(l: &[f64], inv_diag: &[f64], out: &mut [f64]) {
    let n = if N == 0 { inv_diag.len() } else { N };
    assert!(l.len() == n * n && out.len() == n * n && inv_diag.len() == n, "n x n factor");
    out.fill(0.0);
    for i in 0..n {
        let inv = inv_diag[i];
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

    /// The definition, and the scale |mean| + width the error is relative to.
    fn direct(vinv: &[f64], theta: &[f64], beta: f64, x: &[f64], d: usize) -> (f64, f64) {
        let q: f64 = (0..d).map(|r| x[r] * (0..d).map(|c| vinv[r * d + c] * x[c]).sum::<f64>()).sum();
        let m: f64 = theta.iter().zip(x).map(|(a, b)| a * b).sum();
        (m + beta * q.sqrt(), m.abs() + beta * q.sqrt())
    }

    #[test]
    fn action_lanes_score_the_same_bits_as_one_action_at_a_time() {
        let d = 5;
        let f: Vec<f64> = (0..d * d).map(|i| if i % (d + 1) == 0 { 0.7 } else { ((i * 5) % 7) as f64 / 9.0 }).collect();
        let theta: Vec<f64> = (0..d).map(|i| 0.2 * i as f64 - 0.3).collect();
        let k = 2 * ACTION_LANES + 3;
        let feats: Vec<f64> = (0..k * d).map(|i| ((i * 13 + 5) % 19) as f64 / 19.0 - 0.5).collect();
        let mut together = vec![0.0; 2 * k];
        widths_fixed::<Separate, 5>(InverseForm::LowerFactor(&f), &theta, &feats, &mut together);
        for i in 0..k {
            let mut alone = [0.0; 2];
            widths_fixed::<Separate, 5>(InverseForm::LowerFactor(&f), &theta, &feats[i * d..(i + 1) * d], &mut alone);
            assert_eq!(alone[0].to_bits(), together[i].to_bits(), "action {i}");
            assert_eq!(alone[1].to_bits(), together[k + i].to_bits(), "action {i}");
        }
    }

    #[test]
    fn both_forms_and_all_sizes_agree_with_the_definition() {
        for d in [1usize, 2, 3, 5, 8, 16, 17, 20, 31, 40, 64] {
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
            lower_inverse(chol.lower(), chol.inv_diag(), d, &mut f);
            let theta: Vec<f64> = (0..d).map(|i| i as f64 * 0.1 - 0.2).collect();
            // Odd K, K below, at and above multiples of the block size.
            for k in [1usize, 7, 8, 9, 25, 33] {
                let feats: Vec<f64> = (0..k * d).map(|i| ((i * 5 + 1) % 13) as f64 / 13.0 - 0.5).collect();
                let mut a = vec![0.0; 2 * k];
                let mut s = vec![0.0; 2 * k];
                let mut c = vec![0.0; 2 * k];
                let inv_diag: Vec<f64> = (0..d).map(|i| 1.0 / chol.lower()[i * d + i]).collect();
                let by_solve = InverseForm::Cholesky { lower: chol.lower(), inv_diag: &inv_diag };
                ucb_scores(by_solve, &theta, 1.7, &feats, d, &mut c);
                ucb_scores(InverseForm::LowerFactor(&f), &theta, 1.7, &feats, d, &mut a);
                ucb_scores(InverseForm::Symmetric(&vinv), &theta, 1.7, &feats, d, &mut s);
                // The blocked general-d kernel at every d, fixed-d sizes included.
                let mut ga = vec![0.0; 2 * k];
                let mut gs = vec![0.0; 2 * k];
                widths_dynamic::<Separate, BASELINE_BLOCK>(InverseForm::LowerFactor(&f), &theta, &feats, d, &mut ga);
                widths_dynamic::<Separate, BASELINE_BLOCK>(InverseForm::Symmetric(&vinv), &theta, &feats, d, &mut gs);
                for i in 0..k {
                    let (want, scale) = direct(&vinv, &theta, 1.7, &feats[i * d..(i + 1) * d], d);
                    let tol = 1e-12 * scale;
                    assert!((a[i] - want).abs() < tol, "d {d} k {k} lower: {} vs {want}", a[i]);
                    assert!((s[i] - want).abs() < tol, "d {d} k {k} symmetric: {} vs {want}", s[i]);
                    assert!((c[i] - want).abs() < tol, "d {d} k {k} solve: {} vs {want}", c[i]);
                    for (name, g) in [("lower", &ga), ("symmetric", &gs)] {
                        let got = g[k + i] + 1.7 * g[i].sqrt();
                        assert!((got - want).abs() < tol, "d {d} k {k} blocked {name}: {got} vs {want}");
                    }
                }
            }
        }
    }

    /// Both builds score the same set to rounding at every kernel size and
    /// form (the dispatched one is whichever this CPU gets).
    #[test]
    fn both_builds_agree_to_rounding() {
        for d in [3usize, 5, 16, 17, 40, 64] {
            let mut v = vec![0.0; d * d];
            for i in 0..d {
                for j in 0..d {
                    v[i * d + j] = if i == j { 2.0 + i as f64 * 0.1 } else { 0.3 / (1.0 + (i + j) as f64) };
                }
            }
            let chol = crate::linalg::Cholesky::factor(&v, d).unwrap();
            let inv_diag: Vec<f64> = (0..d).map(|i| 1.0 / chol.lower()[i * d + i]).collect();
            let vinv = chol.inverse();
            let theta: Vec<f64> = (0..d).map(|i| 0.05 * i as f64 - 0.3).collect();
            let k = 37;
            let feats: Vec<f64> = (0..k * d).map(|i| ((i * 7 + 2) % 17) as f64 / 17.0 - 0.45).collect();
            for form in
                [InverseForm::Cholesky { lower: chol.lower(), inv_diag: &inv_diag }, InverseForm::Symmetric(&vinv)]
            {
                let mut base = vec![0.0; 2 * k];
                let mut fused = vec![0.0; 2 * k];
                let mut dispatched = vec![0.0; 2 * k];
                ucb_scores_with::<Separate, BASELINE_BLOCK>(form, &theta, 1.3, &feats, d, &mut base);
                // Fused through software fma on a CPU without it: slow, exact.
                ucb_scores_with::<Fused, WIDE_BLOCK>(form, &theta, 1.3, &feats, d, &mut fused);
                ucb_scores(form, &theta, 1.3, &feats, d, &mut dispatched);
                for i in 0..k {
                    let scale = base[k + i].abs().max(1.0);
                    assert!((base[i] - fused[i]).abs() < 1e-12 * scale, "d {d}: {} vs {}", base[i], fused[i]);
                    assert!((base[i] - dispatched[i]).abs() < 1e-12 * scale, "d {d}");
                }
            }
        }
    }
}
