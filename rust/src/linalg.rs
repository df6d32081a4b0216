//! Small dense linear algebra on row-major `n x n` slices.
//!
//! The learners work with (d+1) x (d+1) matrices, d in the single or low
//! double digits, refreshed every round. At that size a general-purpose
//! library's dispatch and allocation cost more than the arithmetic, so these
//! kernels are written directly on slices, allocate only when asked to,
//! and are checked against nalgebra in the tests.

use crate::error::{check_finite, Error, Result};

/// sum_i a_i b_i over the common length, with four partial sums so that
/// long dot products run at the adder's throughput instead of its latency.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    let mut acc = [0.0; 4];
    for (x, y) in ca.zip(cb) {
        for j in 0..4 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// out_i = init + m_i0 x_0 + m_i1 x_1 + ..., each row's sum in that order
/// (the bits of a serial loop or of `Iterator::sum` from `init`, -0.0
/// for the latter), for the row-major m with rows as long as x. Rows go
/// `MATVEC_ROWS` at a time: one row at a time, each addition waits on the
/// one before, and the d-long chains of a d x d product set the pace.
#[allow(clippy::needless_range_loop)]
pub fn matvec_in_order(m: &[f64], x: &[f64], init: f64, out: &mut [f64]) {
    let n = x.len();
    assert!(m.len() == out.len() * n, "one row of m per entry of out");
    if n == 0 {
        out.fill(init);
        return;
    }
    let mut rows = m.chunks_exact(MATVEC_ROWS * n);
    let mut outs = out.chunks_exact_mut(MATVEC_ROWS);
    for (block, o) in (&mut rows).zip(&mut outs) {
        let r: [&[f64]; MATVEC_ROWS] = std::array::from_fn(|t| &block[t * n..(t + 1) * n]);
        let mut acc = [init; MATVEC_ROWS];
        for j in 0..n {
            for t in 0..MATVEC_ROWS {
                acc[t] += r[t][j] * x[j];
            }
        }
        o.copy_from_slice(&acc);
    }
    for (o, row) in outs.into_remainder().iter_mut().zip(rows.remainder().chunks_exact(n)) {
        *o = row.iter().zip(x).fold(init, |a, (v, w)| a + v * w);
    }
}

/// Rows of [`matvec_in_order`] in flight together.
const MATVEC_ROWS: usize = 8;

/// Cholesky factorization A = L L^T of a symmetric positive definite matrix,
/// written into `l` (lower triangle; the strict upper triangle is zeroed).
///
/// Only the lower triangle of `a` is read. Fails with
/// [`Error::NotPositiveDefinite`] when a pivot is not strictly positive.
pub fn cholesky_into(a: &[f64], n: usize, l: &mut [f64]) -> Result<()> {
    debug_assert_eq!(a.len(), n * n);
    debug_assert_eq!(l.len(), n * n);
    for i in 0..n {
        for j in 0..=i {
            let s = a[i * n + j] - dot(&l[i * n..i * n + j], &l[j * n..j * n + j]);
            if i == j {
                if s.is_nan() || s <= 0.0 {
                    return Err(Error::NotPositiveDefinite { name: "matrix", pivot: i, value: s });
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
        for j in (i + 1)..n {
            l[i * n + j] = 0.0;
        }
    }
    Ok(())
}

/// [`cholesky_into`] for a compile-time side `N`, also writing 1 / L_ii:
/// straight-line code, and each column's entries multiply by the pivot's
/// reciprocal instead of dividing by the pivot (one division per column
/// on the dependency chain instead of one per entry). Entries agree with
/// [`cholesky_into`]'s to rounding.
#[allow(clippy::needless_range_loop)]
fn cholesky_fixed<const N: usize>(a: &[f64], l: &mut [f64], inv_diag: &mut [f64]) -> Result<()> {
    assert!(a.len() == N * N && l.len() == N * N && inv_diag.len() == N, "n x n matrix");
    let mut f = [[0.0; N]; N];
    let mut inv = [0.0; N];
    for j in 0..N {
        let mut s = a[j * N + j];
        for k in 0..j {
            s -= f[j][k] * f[j][k];
        }
        if s.is_nan() || s <= 0.0 {
            return Err(Error::NotPositiveDefinite { name: "matrix", pivot: j, value: s });
        }
        let pivot = s.sqrt();
        f[j][j] = pivot;
        inv[j] = 1.0 / pivot;
        for i in (j + 1)..N {
            let mut s = a[i * N + j];
            for k in 0..j {
                s -= f[i][k] * f[j][k];
            }
            f[i][j] = s * inv[j];
        }
    }
    for (row, fr) in l.chunks_exact_mut(N).zip(&f) {
        row.copy_from_slice(fr);
    }
    inv_diag.copy_from_slice(&inv);
    Ok(())
}

/// a * b + c, fused (one rounding) in the AVX2 + FMA build, two roundings
/// in the baseline build (where `f64::mul_add` would call libm).
#[allow(clippy::inline_always)]
#[inline(always)]
fn mul_add<const FUSED: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FUSED {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// [`cholesky_into`] by outer products on the transposed factor: U = L^T
/// is built row by row in the factor's work space (rows of
/// [`wide_stride`] entries), and the update of the rows below by two
/// finished rows at a time is a multiply-add over whole groups of four contiguous entries, which
/// vectorises across columns (the dot products of [`cholesky_into`] run one
/// short sum per entry). Each row's groups start at the group holding its
/// diagonal: the entries left of the diagonal in that group are scratch
/// (finite, never read as the factor). Every entry is updated in the order
/// of the rank-one steps (k = 0, 1, ...). Only the lower triangle of `a` is
/// read; L goes to the factor (strict upper triangle zeroed) with 1 / L_ii.
/// The same factor as [`cholesky_into`] to rounding.
#[allow(clippy::inline_always)]
#[inline(always)]
fn cholesky_outer<const FUSED: bool>(a: &[f64], factor: &mut Cholesky) -> Result<()> {
    let Cholesky { n, l, inv_diag, work: u } = factor;
    let n = *n;
    let s = wide_stride(n);
    assert!(a.len() == n * n && u.len() == n * s && l.len() == n * n && inv_diag.len() == n, "n x n matrix");
    for (i, row) in u.chunks_exact_mut(s).enumerate() {
        row[i & !3..i].fill(0.0);
        // Column i of the lower triangle of `a`.
        for (v, &x) in row[i..n].iter_mut().zip(a[i * n + i..].iter().step_by(n)) {
            *v = x;
        }
        row[n..].fill(0.0);
    }
    let mut k = 0;
    while k < n {
        let pair = k + 1 < n;
        let (done, below) = u.split_at_mut((k + 1 + usize::from(pair)) * s);
        let (first, second) = done[k * s..].split_at_mut(s);
        pivot_row(first, k, n, inv_diag)?;
        if pair {
            let c = -first[k + 1];
            for (w, &x) in second[k + 1..n].iter_mut().zip(&first[k + 1..n]) {
                *w = mul_add::<FUSED>(c, x, *w);
            }
            pivot_row(second, k + 1, n, inv_diag)?;
        }
        for (i, target) in (k + 1 + usize::from(pair)..n).zip(below.chunks_exact_mut(s)) {
            let from = i & !3;
            let (c0, c1) = (-first[i], if pair { -second[i] } else { 0.0 });
            let groups = target[from..].chunks_exact_mut(4).zip(first[from..].chunks_exact(4));
            if pair {
                for ((w, x0), x1) in groups.zip(second[from..].chunks_exact(4)) {
                    let mut v = [0.0; 4];
                    for t in 0..4 {
                        v[t] = mul_add::<FUSED>(c1, x1[t], mul_add::<FUSED>(c0, x0[t], w[t]));
                    }
                    w.copy_from_slice(&v);
                }
            } else {
                for (w, x0) in groups {
                    for t in 0..4 {
                        w[t] = mul_add::<FUSED>(c0, x0[t], w[t]);
                    }
                }
            }
        }
        k += 1 + usize::from(pair);
    }
    // L = U^T: row j of U is column j of L.
    for (j, row) in u.chunks_exact(s).enumerate() {
        l[j * n + j + 1..(j + 1) * n].fill(0.0);
        for (v, &x) in l[j * n + j..].iter_mut().step_by(n).zip(&row[j..n]) {
            *v = x;
        }
    }
    Ok(())
}

/// Row stride of [`cholesky_outer`]'s work space: n rounded up to whole
/// groups of four.
fn wide_stride(n: usize) -> usize {
    n.next_multiple_of(4)
}

/// Row k of U from its updated entries: the pivot's square root, the
/// entries right of it divided by it.
#[allow(clippy::inline_always)]
#[inline(always)]
fn pivot_row(row: &mut [f64], k: usize, n: usize, inv_diag: &mut [f64]) -> Result<()> {
    let s = row[k];
    if s.is_nan() || s <= 0.0 {
        return Err(Error::NotPositiveDefinite { name: "matrix", pivot: k, value: s });
    }
    let pivot = s.sqrt();
    let inv = 1.0 / pivot;
    row[k] = pivot;
    inv_diag[k] = inv;
    for v in &mut row[k + 1..n] {
        *v *= inv;
    }
    Ok(())
}

/// [`cholesky_outer`] compiled for AVX2 + FMA.
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use crate::error::Result;

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn cholesky_outer(a: &[f64], factor: &mut super::Cholesky) -> Result<()> {
        super::cholesky_outer::<true>(a, factor)
    }
}

/// [`Cholesky::solve_in_place`] for a compile-time side `N` (straight-line
/// substitutions; the general path's blocked dot products cost more than
/// the arithmetic at this size).
#[allow(clippy::needless_range_loop)]
fn solve_fixed<const N: usize>(l: &[f64], inv_diag: &[f64], b: &mut [f64]) {
    assert!(l.len() == N * N && inv_diag.len() == N && b.len() == N, "n x n system");
    let mut y = [0.0; N];
    y.copy_from_slice(b);
    for i in 0..N {
        let mut s = y[i];
        for k in 0..i {
            s -= l[i * N + k] * y[k];
        }
        y[i] = s * inv_diag[i];
    }
    for i in (0..N).rev() {
        let mut s = y[i];
        for k in (i + 1)..N {
            s -= l[k * N + i] * y[k];
        }
        y[i] = s * inv_diag[i];
    }
    b.copy_from_slice(&y);
}

/// Cholesky factor of `a` in a new buffer. See [`cholesky_into`].
pub fn cholesky(a: &[f64], n: usize) -> Result<Vec<f64>> {
    if a.len() != n * n {
        return Err(Error::invalid("matrix", format!("expected {n} x {n} = {} entries, got {}", n * n, a.len())));
    }
    check_finite("matrix", a)?;
    let mut l = vec![0.0; n * n];
    cholesky_into(a, n, &mut l)?;
    Ok(l)
}

/// Solves L y = b in place (forward substitution, L lower triangular).
#[inline]
pub fn forward_substitute(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i * n + k] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

/// Solves L^T x = y in place (back substitution).
#[inline]
pub fn backward_substitute(l: &[f64], n: usize, y: &mut [f64]) {
    for i in (0..n).rev() {
        let mut s = y[i];
        for k in (i + 1)..n {
            s -= l[k * n + i] * y[k];
        }
        y[i] = s / l[i * n + i];
    }
}

/// A Cholesky factorization kept for repeated solves.
#[derive(Clone, Debug)]
pub struct Cholesky {
    n: usize,
    l: Vec<f64>,
    /// 1 / L_ii: substitutions multiply instead of divide (a division costs
    /// several multiplications, and UCB scores run one substitution per
    /// action per round).
    inv_diag: Vec<f64>,
    /// Work space of [`Cholesky::refactor_wide`] (empty until used).
    work: Vec<f64>,
}

impl Cholesky {
    /// Factors the SPD matrix `a` (row-major `n x n`).
    pub fn factor(a: &[f64], n: usize) -> Result<Self> {
        Self::factor_by(a, n, Self::refactor)
    }

    /// [`Cholesky::factor`] by [`Cholesky::refactor_wide`].
    pub fn factor_wide(a: &[f64], n: usize) -> Result<Self> {
        Self::factor_by(a, n, Self::refactor_wide)
    }

    fn factor_by(a: &[f64], n: usize, refactor: fn(&mut Self, &[f64]) -> Result<()>) -> Result<Self> {
        if a.len() != n * n {
            return Err(Error::invalid("matrix", format!("expected {n} x {n} = {} entries, got {}", n * n, a.len())));
        }
        check_finite("matrix", a)?;
        let mut c = Cholesky { n, l: vec![0.0; n * n], inv_diag: vec![0.0; n], work: Vec::new() };
        refactor(&mut c, a)?;
        Ok(c)
    }

    /// Refactors in place for a new matrix of the same size (no allocation).
    /// On failure the previous factor is left unusable and the error returned.
    pub fn refactor(&mut self, a: &[f64]) -> Result<()> {
        macro_rules! fixed {
            ($($n:literal)*) => {
                match self.n {
                    $($n => return cholesky_fixed::<$n>(a, &mut self.l, &mut self.inv_diag),)*
                    _ => {}
                }
            };
        }
        // A private learner refactors its d x d statistic every round.
        fixed!(2 3 4 5 6 7 8);
        cholesky_into(a, self.n, &mut self.l)?;
        for i in 0..self.n {
            self.inv_diag[i] = 1.0 / self.l[i * self.n + i];
        }
        Ok(())
    }

    /// [`Cholesky::refactor`] for larger n: outer products on the
    /// transposed factor, vectorised across columns (the AVX2 + FMA build
    /// where the CPU has it, see [`crate::cpu_dispatch`]). The same factor
    /// to rounding; at (d = 40) about a quarter of the time of the dot
    /// product form.
    pub fn refactor_wide(&mut self, a: &[f64]) -> Result<()> {
        let n = self.n;
        if self.work.len() != n * wide_stride(n) {
            self.work = vec![0.0; n * wide_stride(n)];
        }
        crate::cpu_dispatch::on_avx2_fma!(avx2_fma::cholesky_outer(a, self));
        cholesky_outer::<false>(a, self)
    }

    /// Solves L y = b in place.
    #[inline]
    pub fn forward_in_place(&self, b: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let s = dot(&self.l[i * n..i * n + i], &b[..i]);
            b[i] = (b[i] - s) * self.inv_diag[i];
        }
    }

    /// Side of the factored matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The lower factor L, row-major.
    pub fn lower(&self) -> &[f64] {
        &self.l
    }

    /// 1 / L_ii.
    pub fn inv_diag(&self) -> &[f64] {
        &self.inv_diag
    }

    /// Solves A x = b in place.
    pub fn solve_in_place(&self, b: &mut [f64]) {
        macro_rules! fixed {
            ($($n:literal)*) => {
                match self.n {
                    $($n => return solve_fixed::<$n>(&self.l, &self.inv_diag, b),)*
                    _ => {}
                }
            };
        }
        fixed!(2 3 4 5 6 7 8);
        self.forward_in_place(b);
        let n = self.n;
        for i in (0..n).rev() {
            let s: f64 = ((i + 1)..n).map(|k| self.l[k * n + i] * b[k]).sum();
            b[i] = (b[i] - s) * self.inv_diag[i];
        }
    }

    /// log det A = 2 sum log L_ii.
    pub fn log_det(&self) -> f64 {
        // One logarithm of the product instead of n logarithms (this runs
        // every round); the sum of logs when the product leaves the normal
        // range.
        let prod: f64 = (0..self.n).map(|i| self.l[i * self.n + i]).product();
        if prod.is_normal() {
            2.0 * prod.ln()
        } else {
            2.0 * (0..self.n).map(|i| self.l[i * self.n + i].ln()).sum::<f64>()
        }
    }

    /// x^T A^{-1} x = ||L^{-1} x||^2, using `scratch` (length n).
    #[inline]
    pub fn inv_quad(&self, x: &[f64], scratch: &mut [f64]) -> f64 {
        scratch.copy_from_slice(x);
        self.forward_in_place(scratch);
        scratch.iter().map(|v| v * v).sum()
    }

    /// A^{-1}, row-major (symmetric).
    pub fn inverse(&self) -> Vec<f64> {
        let n = self.n;
        let mut inv = vec![0.0; n * n];
        let mut col = vec![0.0; n];
        for j in 0..n {
            col.fill(0.0);
            col[j] = 1.0;
            self.solve_in_place(&mut col);
            for i in 0..n {
                inv[i * n + j] = col[i];
            }
        }
        inv
    }
}

/// The inverse of a symmetric positive definite matrix A kept current under
/// rank-one updates A <- c A + w x x^T by the Sherman–Morrison formula,
/// refactored from the exact A every `refactor_every` updates so that
/// rounding drift stays bounded.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RankOneInverse {
    n: usize,
    a: Vec<f64>,
    inv: Vec<f64>,
    /// Work space, not state.
    #[serde(skip)]
    scratch: Vec<f64>,
    updates: u64,
    refactor_every: u64,
}

impl RankOneInverse {
    /// Starts from the SPD matrix `a`.
    pub fn new(a: &[f64], n: usize, refactor_every: u64) -> Result<Self> {
        if refactor_every == 0 {
            return Err(Error::invalid("refactor_every", "must be >= 1"));
        }
        let inv = Cholesky::factor(a, n)?.inverse();
        Ok(RankOneInverse { n, a: a.to_vec(), inv, scratch: vec![0.0; n], updates: 0, refactor_every })
    }

    /// Side of the matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Updates between refactorizations.
    pub fn refactor_every(&self) -> u64 {
        self.refactor_every
    }

    /// The current A (exact, accumulated).
    pub fn matrix(&self) -> &[f64] {
        &self.a
    }

    /// The current A^{-1}.
    pub fn inverse(&self) -> &[f64] {
        &self.inv
    }

    /// x^T A^{-1} x = sum_i x_i (A^{-1} x)_i, each sum in index order.
    /// Uses the work space (not state).
    pub fn inv_quad(&mut self, x: &[f64]) -> f64 {
        let n = self.n;
        self.scratch.resize(n, 0.0);
        matvec_in_order(&self.inv, &x[..n], 0.0, &mut self.scratch);
        x.iter().zip(&self.scratch).fold(0.0, |s, (v, r)| s + v * r)
    }

    /// A <- `scale` * A + `weight` * x x^T, with `scale` > 0 and `weight` >= 0
    /// (so A stays positive definite).
    pub fn update(&mut self, scale: f64, weight: f64, x: &[f64]) -> Result<()> {
        let n = self.n;
        debug_assert!(scale > 0.0 && weight >= 0.0);
        if self.scratch.len() != n {
            self.scratch = vec![0.0; n];
        }
        let x = &x[..n];
        for (row, &xi) in self.a.chunks_exact_mut(n).zip(x) {
            for (v, &xj) in row.iter_mut().zip(x) {
                *v = scale * *v + weight * xi * xj;
            }
        }
        self.updates += 1;
        if self.updates.is_multiple_of(self.refactor_every) {
            self.inv = Cholesky::factor(&self.a, n)?.inverse();
            return Ok(());
        }
        // (cA + w x x^T)^{-1} = B - (w B x)(B x)^T / (1 + w x^T B x), B = A^{-1}/c.
        // Multiplying by 1 changes no bit (non-private LinUCB's scale).
        #[allow(clippy::float_cmp)] // exactly 1, not near it
        if scale != 1.0 {
            let inv_scale = 1.0 / scale;
            for v in &mut self.inv {
                *v *= inv_scale;
            }
        }
        matvec_in_order(&self.inv, x, -0.0, &mut self.scratch);
        let q: f64 = self.scratch.iter().zip(x).map(|(u, v)| u * v).sum();
        let f = weight / (1.0 + weight * q);
        for (row, &si) in self.inv.chunks_exact_mut(n).zip(&self.scratch) {
            let fs = f * si;
            for (v, &sj) in row.iter_mut().zip(&self.scratch) {
                *v -= fs * sj;
            }
        }
        Ok(())
    }

    /// Recomputes A^{-1} from A now.
    pub fn refactor(&mut self) -> Result<()> {
        self.inv = Cholesky::factor(&self.a, self.n)?.inverse();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    fn spd(n: usize, seed: u64) -> Vec<f64> {
        // B^T B + n I with a deterministic B.
        let b: Vec<f64> = (0..n * n).map(|i| (((i as u64 + 1) * (seed * 2 + 7)) % 17) as f64 / 17.0 - 0.5).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| b[k * n + i] * b[k * n + j]).sum::<f64>();
            }
            a[i * n + i] += n as f64;
        }
        a
    }

    #[test]
    fn fixed_size_factors_and_solves_agree_with_the_general_ones() {
        for n in 2..=9 {
            // SPD: diagonally dominant with varied off-diagonal entries.
            let mut a = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    a[i * n + j] = if i == j { 3.0 + i as f64 } else { 1.0 / (1.0 + (i + 2 * j) as f64 % 5.0) };
                }
            }
            for i in 0..n {
                for j in 0..i {
                    a[i * n + j] = a[j * n + i];
                }
            }
            let general = cholesky(&a, n).unwrap();
            let mut c = Cholesky::factor(&a, n).unwrap();
            c.refactor(&a).unwrap();
            for (x, y) in c.lower().iter().zip(&general) {
                assert!((x - y).abs() < 1e-14 * y.abs().max(1.0), "n {n}: {x} vs {y}");
            }
            for i in 0..n {
                assert!((c.inv_diag()[i] * general[i * n + i] - 1.0).abs() < 1e-15);
            }
            // Solves: A x = b to rounding.
            let b: Vec<f64> = (0..n).map(|i| 0.3 * i as f64 - 1.0).collect();
            let mut x = b.clone();
            c.solve_in_place(&mut x);
            for i in 0..n {
                let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
                assert!((ax - b[i]).abs() < 1e-13, "n {n}: row {i}");
            }
            // Not positive definite at the last pivot: same error either way.
            let mut bad = a.clone();
            bad[n * n - 1] = -1.0;
            let err = c.refactor(&bad).unwrap_err();
            assert!(matches!(err, Error::NotPositiveDefinite { pivot, .. } if pivot == n - 1), "n {n}: {err:?}");
            assert!(c.refactor(&vec![f64::NAN; n * n]).is_err());
        }
    }

    #[test]
    fn wide_factor_agrees_with_the_dot_product_one() {
        for n in [1usize, 2, 9, 17, 40, 64] {
            let a = spd(n, 5);
            let dots = Cholesky::factor(&a, n).unwrap();
            let mut wide = Cholesky::factor_wide(&a, n).unwrap();
            for _ in 0..2 {
                // Refactoring reuses the work space.
                for (x, y) in wide.lower().iter().zip(dots.lower()) {
                    assert!((x - y).abs() <= 1e-13 * y.abs().max(1.0), "n {n}: {x} vs {y}");
                }
                for (x, y) in wide.inv_diag().iter().zip(dots.inv_diag()) {
                    assert!((x - y).abs() <= 1e-13 * y.abs(), "n {n}: {x} vs {y}");
                }
                wide.refactor_wide(&a).unwrap();
            }
            // Only the lower triangle is read.
            let mut lower_only = a.clone();
            for i in 0..n {
                for j in i + 1..n {
                    lower_only[i * n + j] = f64::NAN;
                }
            }
            wide.refactor_wide(&lower_only).unwrap();
            assert!(wide.lower().iter().all(|v| v.is_finite()));
            // Not positive definite at the last pivot, as the dot product form says.
            let mut bad = a.clone();
            bad[n * n - 1] = -1.0;
            let err = wide.refactor_wide(&bad).unwrap_err();
            assert!(matches!(err, Error::NotPositiveDefinite { pivot, .. } if pivot == n - 1), "n {n}: {err:?}");
            assert!(wide.refactor_wide(&vec![f64::NAN; n * n]).is_err());
        }
    }

    #[test]
    fn cholesky_matches_nalgebra() {
        for n in [1, 2, 6, 11] {
            let a = spd(n, n as u64);
            let ours = Cholesky::factor(&a, n).unwrap();
            let theirs = DMatrix::from_row_slice(n, n, &a).cholesky().unwrap();
            let l = theirs.l();
            for i in 0..n {
                for j in 0..n {
                    assert!((ours.lower()[i * n + j] - l[(i, j)]).abs() < 1e-12);
                }
            }
            let det = DMatrix::from_row_slice(n, n, &a).determinant();
            assert!((ours.log_det() - det.ln()).abs() < 1e-10);
        }
    }

    #[test]
    fn solve_and_inverse_agree() {
        let n = 6;
        let a = spd(n, 3);
        let c = Cholesky::factor(&a, n).unwrap();
        let b: Vec<f64> = (0..n).map(|i| i as f64 - 2.5).collect();
        let mut x = b.clone();
        c.solve_in_place(&mut x);
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
            assert!((ax - b[i]).abs() < 1e-12);
        }
        let inv = c.inverse();
        let mut scratch = vec![0.0; n];
        let q1 = c.inv_quad(&b, &mut scratch);
        let q2: f64 = (0..n).map(|i| b[i] * (0..n).map(|j| inv[i * n + j] * b[j]).sum::<f64>()).sum();
        assert!((q1 - q2).abs() < 1e-12);
    }

    #[test]
    fn not_positive_definite_is_an_error() {
        let a = [1.0, 2.0, 2.0, 1.0];
        assert!(matches!(Cholesky::factor(&a, 2), Err(Error::NotPositiveDefinite { pivot: 1, .. })));
        assert!(Cholesky::factor(&[f64::NAN], 1).is_err());
        assert!(Cholesky::factor(&[1.0, 0.0, 0.0], 2).is_err());
    }

    #[test]
    fn sherman_morrison_tracks_the_exact_inverse() {
        let n = 5;
        let mut inv = RankOneInverse::new(&spd(n, 1), n, 1_000_000).unwrap();
        for t in 0..2_000 {
            let x: Vec<f64> = (0..n).map(|i| ((t * 7 + i * 3) % 11) as f64 / 11.0 - 0.5).collect();
            inv.update(if t % 3 == 0 { 0.99 } else { 1.0 }, 0.7, &x).unwrap();
        }
        let exact = Cholesky::factor(inv.matrix(), n).unwrap().inverse();
        let err = exact.iter().zip(inv.inverse()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        let size = exact.iter().map(|v| v.abs()).fold(0.0, f64::max);
        assert!(err < 1e-9 * size, "relative drift {}", err / size);
    }

    /// The loops as first written (one serial sum per row): the interleaved
    /// rows of `matvec_in_order` and the row-wise updates keep their bits
    /// (hashed traces of the learners depend on them).
    #[test]
    fn rank_one_inverse_keeps_the_bits_of_the_plain_loops() {
        for n in [1usize, 5, 8, 9, 16, 17, 40] {
            let every = 7;
            let mut fast = RankOneInverse::new(&spd(n, 4), n, every).unwrap();
            let (mut a, mut inv) = (fast.matrix().to_vec(), fast.inverse().to_vec());
            for t in 0..30u64 {
                let x: Vec<f64> = (0..n).map(|i| ((t as usize * 5 + i * 3) % 13) as f64 / 13.0 - 0.5).collect();
                let (scale, weight) = if t % 4 == 1 { (0.9, 0.3) } else { (1.0, 1.0) };
                let mut quad = 0.0;
                for i in 0..n {
                    let mut r = 0.0;
                    for j in 0..n {
                        r += inv[i * n + j] * x[j];
                    }
                    quad += x[i] * r;
                }
                assert_eq!(fast.inv_quad(&x).to_bits(), quad.to_bits(), "n {n} round {t}");
                for i in 0..n {
                    for j in 0..n {
                        a[i * n + j] = scale * a[i * n + j] + weight * x[i] * x[j];
                    }
                }
                if (t + 1) % every == 0 {
                    inv = Cholesky::factor(&a, n).unwrap().inverse();
                } else {
                    let inv_scale = 1.0 / scale;
                    for v in &mut inv {
                        *v *= inv_scale;
                    }
                    let s: Vec<f64> =
                        (0..n).map(|i| inv[i * n..(i + 1) * n].iter().zip(&x).map(|(r, v)| r * v).sum()).collect();
                    let q: f64 = s.iter().zip(&x).map(|(u, v)| u * v).sum();
                    let f = weight / (1.0 + weight * q);
                    for i in 0..n {
                        for j in 0..n {
                            inv[i * n + j] -= f * s[i] * s[j];
                        }
                    }
                }
                fast.update(scale, weight, &x).unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(fast.matrix()), bits(&a), "n {n} round {t}");
                assert_eq!(bits(fast.inverse()), bits(&inv), "n {n} round {t}");
            }
        }
    }

    #[test]
    fn periodic_refactor_resets_to_exact() {
        let n = 4;
        let mut inv = RankOneInverse::new(&spd(n, 2), n, 10).unwrap();
        let x = [0.3, -0.2, 0.5, 0.1];
        for _ in 0..10 {
            inv.update(1.0, 1.0, &x).unwrap();
        }
        let exact = Cholesky::factor(inv.matrix(), n).unwrap().inverse();
        assert_eq!(exact, inv.inverse());
        assert!(RankOneInverse::new(&spd(n, 2), n, 0).is_err());
    }
}
