//! G-optimal design by Frank–Wolfe: the core sets of batched elimination.
//!
//! Given K actions a_1, ..., a_K spanning R^d (the rows of a K x d
//! row-major matrix), a design is a distribution pi over the actions with
//! V(pi) = sum_a pi(a) a a^T. Its G-value is
//! g(pi) = max_a ||a||^2_{V(pi)^{-1}}. By the Kiefer–Wolfowitz theorem
//! (Lattimore & Szepesvári, *Bandit Algorithms*, Ch. 21, Thm. 21.1) every
//! design has g(pi) >= d, the minimum is exactly d, and a minimizer exists
//! with support of at most d(d+1)/2 points.
//!
//! Hanna, Girgis, Fragouli & Diggavi, Lemma 2, need a "core set": a small
//! support C and weights pi with g(pi) <= 2d (Eq. 5). Alg. 1 (line 7) then
//! pulls each a in C exactly n_a = ceil(pi(a) q^i) times ([`pull_counts`]),
//! so Laplace noise is added to |C| reward sums only.
//!
//! [`core_set`] computes one in two steps:
//!
//! 1. **Frank–Wolfe** (Hanna et al., App. A): start from the uniform
//!    design pi_0 over all K actions; at step k take
//!    a_k = argmax_a ||a||^2_{V(pi_k)^{-1}} with value g_k (first index on
//!    ties), and move pi_{k+1} = (1 - gamma_k) pi_k + gamma_k 1{a_k} with
//!    gamma_k = ((1/d) g_k - 1) / (g_k - 1), the exact line search for
//!    log det V. Stop as soon as g(pi_k) <= `stop_at` (default 2d, Eq. 5).
//!    Since g_k > stop_at >= d the step lies in (0, 1]; it is 1 only for
//!    d = 1, where the design jumps to the longest action and is optimal.
//! 2. **Support reduction** (optional, on by default): a Carathéodory
//!    argument brings the support down to at most d(d+1)/2 points without
//!    increasing any ||a||^2_{V^{-1}} (see [`DesignOptions::reduce_support`]).
//!
//! One Frank–Wolfe step costs O(K d) (see `FrankWolfe`); the reduction
//! O(K d^2 + d^6 log(K / d^2)).

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut, Dyn};

use crate::error::{check_positive, Error, Result};
use crate::linalg::{forward_substitute, Cholesky, RankOneInverse};

/// Default bound on Frank–Wolfe steps. From the uniform start the
/// stopping rule 2d is typically met within a few d steps; a tolerance
/// `stop_at = (1 + eps) d` needs O(d / eps) more.
pub const DEFAULT_MAX_ITER: usize = 10_000;

/// The quadratic forms are recomputed exactly (fresh Cholesky of V(pi)
/// from the weights) every this many Frank–Wolfe steps, so that the O(K d)
/// incremental updates never drift far. One refresh costs about as much as
/// 2d incremental steps, so for d <= 25 refreshing adds at most the cost
/// of the steps themselves, and much less for small d.
const REFRESH_EVERY: usize = 50;

/// Incremental values within this relative margin of `stop_at` are
/// confirmed by an exact refresh before the loop stops (or continues).
const NEAR_STOP: f64 = 1e-8;

/// Actions are declared not to span R^d when a Cholesky pivot of the
/// uniform design falls below this fraction of its diagonal entry
/// (1 - R^2 of that coordinate on the previous ones; invariant to the
/// scale of each coordinate).
const RANK_TOL: f64 = 1e-12;

/// In the support reduction, a column whose residual after elimination is
/// below this fraction of its largest entry is treated as linearly
/// dependent on the columns before it.
const DEPENDENCE_TOL: f64 = 1e-10;

/// The Kiefer–Wolfowitz support bound d(d+1)/2: the dimension of the space
/// of symmetric d x d matrices.
pub fn support_bound(d: usize) -> usize {
    d * (d + 1) / 2
}

/// Options of [`core_set`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DesignOptions {
    /// Stop when max_a ||a||^2_{V(pi)^{-1}} <= `stop_at`. `None` means 2d,
    /// Hanna et al. Lemma 2, Eq. (5). Must be finite and >= d (no design
    /// does better than d); a relative tolerance eps is
    /// `stop_at = (1 + eps) d`. Values close to d need many steps.
    pub stop_at: Option<f64>,
    /// Maximum number of Frank–Wolfe steps; reaching it without meeting
    /// the stopping rule is an error naming `max_iter`. 0 accepts only a
    /// uniform design that already meets the rule.
    pub max_iter: usize,
    /// After Frank–Wolfe, reduce the support to at most d(d+1)/2 points
    /// (Lattimore & Szepesvári, Ch. 21, proof of Thm. 21.1).
    ///
    /// While more than m = d(d+1)/2 points carry weight, the matrices
    /// a a^T of the support, as vectors vech(a a^T) in R^m, are linearly
    /// dependent: sum_a c_a a a^T = 0 for some c != 0, signed so that
    /// sum_a c_a >= 0. Moving pi <- pi - t c with the largest t that keeps
    /// pi >= 0 zeroes at least one weight, leaves V(pi) unchanged and does
    /// not increase the total weight s. Renormalizing pi / s at the end
    /// scales V by 1/s >= 1, so every ||a||^2_{V^{-1}} is multiplied by
    /// s <= 1 and the stopping rule still holds.
    ///
    /// Deterministic, in two phases. (i) While more than 2m points remain,
    /// they are cut, in index order, into 2m contiguous groups; each group
    /// becomes one "point", the weighted mean of its vech(a a^T) with the
    /// group's total weight, and the step above is applied to these 2m
    /// group points (scaling every weight of a group by the same factor
    /// keeps V, and a dropped group drops all its actions). At most m
    /// groups survive, so of n points at most n/2 + m remain (the fast
    /// Carathéodory of Maalouf, Jubran & Feldman, NeurIPS 2019). (ii) The
    /// last <= 2m points are reduced individually. In both phases the null
    /// vectors come from Gaussian elimination with partial pivoting of the
    /// m x n matrix of columns (one per dependent column: the row-echelon
    /// null basis) and are applied in column order, each first made zero
    /// on the points already dropped. Cost O(K d^2 + d^6 log(K / d^2)).
    pub reduce_support: bool,
}

impl Default for DesignOptions {
    fn default() -> Self {
        DesignOptions { stop_at: None, max_iter: DEFAULT_MAX_ITER, reduce_support: true }
    }
}

/// A design: weights on a subset of the actions.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreSet {
    /// Indices (rows of the input) of the actions with positive weight,
    /// increasing.
    pub support: Vec<usize>,
    /// pi(a) for each index of `support`; positive, summing to 1 (up to
    /// rounding).
    pub weights: Vec<f64>,
    /// max over all K actions of ||a||^2_{V(pi)^{-1}} for the returned
    /// weights, computed afresh. At most `stop_at`.
    pub value: f64,
    /// Frank–Wolfe steps taken.
    pub iterations: usize,
    /// The stopping threshold that was used (2d unless given).
    pub stop_at: f64,
}

impl CoreSet {
    /// Pull counts n_a = ceil(pi(a) q) of Hanna et al. Alg. 1, line 7,
    /// aligned with `support`.
    pub fn pulls(&self, q: f64) -> Result<Vec<u64>> {
        pull_counts(&self.weights, q)
    }
}

/// n_a = ceil(pi(a) q) for each weight (Hanna et al., Alg. 1, line 7:
/// q = q^i, the nominal length of batch i). Every action with positive
/// weight is pulled at least once; the batch has sum_a n_a < q + |C| pulls.
///
/// `q` must be finite and > 0, each weight finite and >= 0.
pub fn pull_counts(weights: &[f64], q: f64) -> Result<Vec<u64>> {
    check_positive("q", q)?;
    weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if !(w.is_finite() && w >= 0.0) {
                return Err(Error::invalid("weights", format!("entry {i} must be finite and >= 0, got {w}")));
            }
            let n = (w * q).ceil();
            if n >= u64::MAX as f64 {
                return Err(Error::invalid("q", format!("pull count ceil({w} * {q}) does not fit in 64 bits")));
            }
            Ok(n as u64)
        })
        .collect()
}

/// Computes a core set of the actions (rows of the `k x d` row-major
/// matrix `actions`): Frank–Wolfe from the uniform design until
/// max_a ||a||^2_{V(pi)^{-1}} <= `stop_at` (Hanna et al., App. A and
/// Lemma 2), then, if asked, the support reduction to at most d(d+1)/2
/// points described at [`DesignOptions::reduce_support`].
///
/// Errors:
/// - [`Error::InvalidArgument`] (`actions`): d = 0, K = 0, a length other
///   than K d, a NaN or infinite entry; (`stop_at`) not finite or below d;
///   (`max_iter`) the stopping rule was not met within `max_iter` steps.
/// - [`Error::Degenerate`] (`actions`): a zero row (it carries no
///   information and its ||a||_{V^{-1}} is always 0: remove it), K < d, or
///   actions that do not span R^d (numerically: a Cholesky pivot of the
///   uniform design below 1e-12 of its diagonal entry).
pub fn core_set(actions: &[f64], k: usize, d: usize, options: &DesignOptions) -> Result<CoreSet> {
    let acts = Actions::new(actions, k, d)?;
    let stop_at = match options.stop_at {
        None => 2.0 * d as f64,
        Some(s) if s.is_finite() && s >= d as f64 => s,
        Some(s) => {
            return Err(Error::invalid(
                "stop_at",
                format!(
                    "must be finite and >= d = {d} (every design has \
                     max_a ||a||^2_{{V^-1}} >= d), got {s}"
                ),
            ))
        }
    };
    let mut fw = FrankWolfe::new(acts)?;
    fw.run(stop_at, options.max_iter)?;

    let reduced = if options.reduce_support { reduce_support(&acts, &mut fw.pi) } else { None };
    let (support, weights, value) = if let Some(points) = reduced {
        // Renormalize: the total weight s <= 1 left by the reduction.
        let pi = &fw.pi;
        let support: Vec<usize> = points.into_iter().filter(|&i| pi[i] > 0.0).collect();
        let total: f64 = support.iter().map(|&i| pi[i]).sum();
        let weights: Vec<f64> = support.iter().map(|&i| pi[i] / total).collect();
        let g = variances_into(&acts, &support, &weights, &mut fw.ws)?;
        (support, weights, max_of(&g))
    } else {
        // The Frank–Wolfe weights as they are (they sum to 1 up to
        // rounding); the loop stopped on forms computed exactly from them.
        let support: Vec<usize> = (0..k).filter(|&i| fw.pi[i] > 0.0).collect();
        let weights: Vec<f64> = support.iter().map(|&i| fw.pi[i]).collect();
        (support, weights, max_of(&fw.g))
    };
    if value > stop_at * (1.0 + 1e-9) {
        // Only possible through rounding in a badly conditioned reduction.
        return Err(Error::Degenerate {
            name: "actions",
            reason: format!(
                "the support reduction lost accuracy (value {value} > stop_at {stop_at}); \
                 the actions are badly conditioned, use reduce_support = false"
            ),
        });
    }
    Ok(CoreSet { support, weights, value, iterations: fw.iterations, stop_at })
}

/// ||a_i||^2_{V^{-1}} for every action (row of the `k x d` matrix
/// `actions`), with V = sum_j weights[j] a_{support[j]} a_{support[j]}^T:
/// the variance factor of the least-squares estimate of <a_i, theta> under
/// the design (Lattimore & Szepesvári, Ch. 21). Errors when V is not
/// positive definite or the inputs do not match.
pub fn design_variances(actions: &[f64], k: usize, d: usize, support: &[usize], weights: &[f64]) -> Result<Vec<f64>> {
    let acts = Actions::new(actions, k, d)?;
    if support.len() != weights.len() {
        return Err(Error::invalid(
            "weights",
            format!("length {} differs from the support's {}", weights.len(), support.len()),
        ));
    }
    if let Some(&i) = support.iter().find(|&&i| i >= k) {
        return Err(Error::invalid("support", format!("index {i} is out of range for K = {k}")));
    }
    variances_into(&acts, support, weights, &mut Workspace::new(d, k))
}

/// [`design_variances`] on validated input.
fn variances_into(acts: &Actions<'_>, support: &[usize], weights: &[f64], ws: &mut Workspace) -> Result<Vec<f64>> {
    let d = acts.d;
    let mut rows = Vec::with_capacity(support.len() * d);
    for &i in support {
        rows.extend_from_slice(acts.row(i));
    }
    let v = weighted_gram(&rows, d, Some(weights), 1.0, ws);
    let chol = Cholesky::factor(v.as_slice(), d).map_err(|_| Error::Degenerate {
        name: "weights",
        reason: "the design matrix V is not positive definite".into(),
    })?;
    Ok(quadratic_forms(acts, &chol, ws))
}

/// A validated view of the K x d action matrix.
#[derive(Clone, Copy)]
struct Actions<'a> {
    data: &'a [f64],
    k: usize,
    d: usize,
}

impl<'a> Actions<'a> {
    fn new(data: &'a [f64], k: usize, d: usize) -> Result<Self> {
        if d == 0 {
            return Err(Error::invalid("actions", "need d >= 1 columns, got 0"));
        }
        if k == 0 {
            return Err(Error::invalid("actions", "need at least one action (K >= 1), got 0 rows"));
        }
        if k.checked_mul(d) != Some(data.len()) {
            return Err(Error::invalid("actions", format!("expected K x d = {k} x {d} entries, got {}", data.len())));
        }
        if let Some(pos) = data.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "actions",
                format!("entry ({}, {}) is not finite ({})", pos / d, pos % d, data[pos]),
            ));
        }
        if let Some(i) = data.chunks_exact(d).position(|row| row.iter().all(|&v| v == 0.0)) {
            return Err(Error::Degenerate {
                name: "actions",
                reason: format!(
                    "row {i} is the zero vector; it carries no information about theta \
                     (its ||a||_{{V^-1}} is always 0), remove it"
                ),
            });
        }
        if k < d {
            return Err(Error::Degenerate {
                name: "actions",
                reason: format!("{k} actions cannot span R^{d}: need K >= d"),
            });
        }
        Ok(Actions { data, k, d })
    }

    fn row(&self, i: usize) -> &'a [f64] {
        &self.data[i * self.d..(i + 1) * self.d]
    }
}

/// x . y with four independent accumulators (vectorizes; a single running
/// sum is latency-bound).
#[inline]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let (xs, ys) = (x.chunks_exact(4), y.chunks_exact(4));
    let tail: f64 = xs.remainder().iter().zip(ys.remainder()).map(|(a, b)| a * b).sum();
    let mut acc = [0.0; 4];
    for (a, b) in xs.zip(ys) {
        for l in 0..4 {
            acc[l] += a[l] * b[l];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Actions per GEMM in the exact recomputations. The K x d data are
/// processed in column blocks so that the work buffer is d x 512 (at most
/// ~100 kB for d <= 25: cache-resident, and small enough that the
/// allocator never maps and unmaps fresh pages for it on every call).
const BLOCK: usize = 512;

/// A reusable d x [`BLOCK`] work buffer.
struct Workspace {
    buf: Vec<f64>,
}

impl Workspace {
    fn new(d: usize, k: usize) -> Self {
        Workspace { buf: vec![0.0; d * k.min(BLOCK)] }
    }

    /// The first `len` entries, growing the buffer if needed.
    fn slice(&mut self, len: usize) -> &mut [f64] {
        if self.buf.len() < len {
            self.buf.resize(len, 0.0);
        }
        &mut self.buf[..len]
    }
}

/// V = sum_i w_i x_i x_i^T for the rows x_i of the `n x d` row-major
/// `rows` (`weights` of length n; `None` means every w_i = `alpha`), as
/// GEMMs over blocks of rows: d x b (the columns w_i x_i) times b x d.
fn weighted_gram(rows: &[f64], d: usize, weights: Option<&[f64]>, alpha: f64, ws: &mut Workspace) -> DMatrix<f64> {
    let mut v = DMatrix::zeros(d, d);
    for (b, block) in rows.chunks(BLOCK * d).enumerate() {
        let len = block.len() / d;
        let xt = DMatrixView::<f64, Dyn, Dyn>::from_slice_with_strides(block, len, d, d, 1);
        let beta = if b == 0 { 0.0 } else { 1.0 };
        if let Some(w) = weights {
            let w = &w[b * BLOCK..b * BLOCK + len];
            let scaled = ws.slice(len * d);
            for ((dst, src), &wi) in scaled.chunks_exact_mut(d).zip(block.chunks_exact(d)).zip(w) {
                for (o, &x) in dst.iter_mut().zip(src) {
                    *o = wi * x;
                }
            }
            v.gemm(1.0, &DMatrixView::from_slice(scaled, d, len), &xt, beta);
        } else {
            v.gemm(alpha, &DMatrixView::from_slice(block, d, len), &xt, beta);
        }
    }
    // Average the two triangles (GEMM rounds them differently).
    for i in 0..d {
        for j in 0..i {
            let m = 0.5 * (v[(i, j)] + v[(j, i)]);
            v[(i, j)] = m;
            v[(j, i)] = m;
        }
    }
    v
}

/// ||a_i||^2_{V^{-1}} = ||L^{-1} a_i||^2 for all K actions, V = L L^T.
///
/// L^{-1} is formed once (d^3/3) and applied to the actions by d x d times
/// d x b GEMMs (matrixmultiply through nalgebra, with runtime AVX/FMA
/// dispatch), several times faster than K triangular solves or K separate
/// quadratic forms; the squared-norm form cannot lose positivity to
/// cancellation.
fn quadratic_forms(acts: &Actions<'_>, chol: &Cholesky, ws: &mut Workspace) -> Vec<f64> {
    let d = acts.d;
    let mut l_inv = DMatrix::zeros(d, d);
    for j in 0..d {
        let col = &mut l_inv.as_mut_slice()[j * d..(j + 1) * d];
        col[j] = 1.0;
        forward_substitute(chol.lower(), d, col);
    }
    let mut g = Vec::with_capacity(acts.k);
    for block in acts.data.chunks(BLOCK * d) {
        let len = block.len() / d;
        let out = ws.slice(len * d);
        DMatrixViewMut::from_slice(out, d, len).gemm(1.0, &l_inv, &DMatrixView::from_slice(block, d, len), 0.0);
        g.extend(out.chunks_exact(d).map(|c| c.iter().map(|v| v * v).sum::<f64>()));
    }
    g
}

fn max_of(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// First index of the largest entry (ties go to the lowest index, like
/// `numpy.argmax`).
fn argmax(values: &[f64]) -> (usize, f64) {
    let mut best = (0, values[0]);
    for (i, &v) in values.iter().enumerate().skip(1) {
        if v > best.1 {
            best = (i, v);
        }
    }
    best
}

/// Frank–Wolfe state: the weights, V(pi)^{-1} and every ||a||^2_{V^{-1}}.
///
/// Cost per step. Recomputing all K quadratic forms from V^{-1} is a
/// K x d by d x d GEMM, O(K d^2). But a step changes V by a rank-one term,
/// V' = (1 - gamma) (V + rho x x^T) with rho = gamma / (1 - gamma), so by
/// Sherman–Morrison, with u = V^{-1} x and g_x = x^T u,
///
///   ||a||^2_{V'^{-1}} = (||a||^2_{V^{-1}} - rho (a^T u)^2 / (1 + rho g_x)) / (1 - gamma),
///
/// which needs only the K inner products a^T u: one GEMV, O(K d), d times
/// less arithmetic than the GEMM (and one pass over the K x d actions).
/// V^{-1} itself is kept current by [`RankOneInverse`] (O(d^2) per step).
/// Every [`REFRESH_EVERY`] steps, and before the loop may stop, V(pi) is
/// rebuilt from the weights and every form recomputed exactly (Cholesky +
/// GEMM), so the stopping decision and the reported value never rest on
/// drifted numbers.
struct FrankWolfe<'a> {
    acts: Actions<'a>,
    pi: Vec<f64>,
    g: Vec<f64>,
    inv: RankOneInverse,
    u: Vec<f64>,
    iterations: usize,
    /// Whether `g` was computed exactly from the current weights.
    exact: bool,
    /// argmax of `g` (first index) and its value.
    best: (usize, f64),
    /// Work space of the exact recomputations.
    ws: Workspace,
}

impl<'a> FrankWolfe<'a> {
    /// The uniform design pi_0 and its exact forms; checks that the
    /// actions span R^d.
    fn new(acts: Actions<'a>) -> Result<Self> {
        let (k, d) = (acts.k, acts.d);
        let pi = vec![1.0 / k as f64; k];
        let mut ws = Workspace::new(d, k);
        let v = weighted_gram(acts.data, d, None, 1.0 / k as f64, &mut ws);
        let not_spanning = |detail: String| Error::Degenerate {
            name: "actions",
            reason: format!("the actions do not span R^{d} ({detail})"),
        };
        let chol = Cholesky::factor(v.as_slice(), d)
            .map_err(|e| not_spanning(format!("the uniform design matrix is singular: {e}")))?;
        let l = chol.lower();
        for i in 0..d {
            let ratio = l[i * d + i] * l[i * d + i] / v[(i, i)];
            if ratio <= RANK_TOL {
                return Err(not_spanning(format!(
                    "coordinate {i} is a linear combination of the previous ones \
                     up to a relative {ratio:e}"
                )));
            }
        }
        let g = quadratic_forms(&acts, &chol, &mut ws);
        Ok(FrankWolfe {
            acts,
            pi,
            best: argmax(&g),
            g,
            inv: RankOneInverse::new(v.as_slice(), d, u64::MAX)?,
            u: vec![0.0; d],
            iterations: 0,
            exact: true,
            ws,
        })
    }

    /// Rebuilds V(pi), V^{-1} and all forms from the weights.
    fn refresh(&mut self) -> Result<()> {
        let d = self.acts.d;
        let v = weighted_gram(self.acts.data, d, Some(&self.pi), 1.0, &mut self.ws);
        let chol = Cholesky::factor(v.as_slice(), d).map_err(|e| Error::Degenerate {
            name: "actions",
            reason: format!("the design matrix lost positive definiteness: {e}"),
        })?;
        self.g = quadratic_forms(&self.acts, &chol, &mut self.ws);
        self.best = argmax(&self.g);
        self.inv = RankOneInverse::new(v.as_slice(), d, u64::MAX)?;
        self.exact = true;
        Ok(())
    }

    fn run(&mut self, stop_at: f64, max_iter: usize) -> Result<()> {
        loop {
            let (j, gj) = self.best;
            if gj <= stop_at * (1.0 + NEAR_STOP) && !self.exact {
                self.refresh()?;
                continue;
            }
            if gj <= stop_at {
                return Ok(());
            }
            if self.iterations == max_iter {
                return Err(Error::invalid(
                    "max_iter",
                    format!(
                        "Frank–Wolfe did not reach max_a ||a||^2_{{V^-1}} <= {stop_at} within \
                         max_iter = {max_iter} steps (it is at {gj}); raise max_iter or stop_at"
                    ),
                ));
            }
            self.step(j, gj)?;
            self.iterations += 1;
            if self.iterations.is_multiple_of(REFRESH_EVERY) {
                self.refresh()?;
            }
        }
    }

    /// One Frank–Wolfe step towards action `j`, with g_j = `gj` > d.
    fn step(&mut self, j: usize, gj: f64) -> Result<()> {
        let d = self.acts.d;
        let gamma = (gj / d as f64 - 1.0) / (gj - 1.0);
        self.exact = false;
        if gamma >= 1.0 {
            // d = 1: the whole weight moves to a_j.
            self.pi.fill(0.0);
            self.pi[j] = 1.0;
            return self.refresh();
        }
        let x = self.acts.row(j);
        for (ui, row) in self.u.iter_mut().zip(self.inv.inverse().chunks_exact(d)) {
            *ui = dot(row, x);
        }
        let gx = dot(&self.u, x);
        let rho = gamma / (1.0 - gamma);
        let c = rho / (1.0 + rho * gx);
        let shrink = 1.0 / (1.0 - gamma);
        let u = &self.u;
        let mut best = (0, f64::NEG_INFINITY);
        for (i, (g, a)) in self.g.iter_mut().zip(self.acts.data.chunks_exact(d)).enumerate() {
            let h = dot(a, u);
            *g = (*g - c * h * h) * shrink;
            if *g > best.1 {
                best = (i, *g);
            }
        }
        self.best = best;
        for p in &mut self.pi {
            *p *= 1.0 - gamma;
        }
        self.pi[j] += gamma;
        self.inv.update(1.0 - gamma, gamma, x)
    }
}

/// Carathéodory reduction of the weights `pi` (length K) to at most
/// m = d(d+1)/2 positive entries, keeping V(pi) and not increasing sum(pi)
/// (see [`DesignOptions::reduce_support`]). Dropped actions get weight 0.
/// Returns, increasing, the indices that may still carry weight, or `None`
/// when the support is already small enough (nothing changed).
fn reduce_support(acts: &Actions<'_>, pi: &mut [f64]) -> Option<Vec<usize>> {
    let d = acts.d;
    let m = support_bound(d);
    let mut points: Vec<usize> = (0..acts.k).filter(|&i| pi[i] > 0.0).collect();
    if points.len() <= m {
        return None;
    }
    let mut block = DependenceBlock::default();
    let mut vech = vec![0.0; m];

    // Phase (i): groups of points, 2m groups at a time.
    while points.len() > 2 * m {
        let groups = 2 * m;
        let n = points.len();
        let bounds: Vec<usize> = (0..=groups).map(|g| g * n / groups).collect();
        block.reset(m, groups);
        let mut mass = vec![0.0; groups];
        for g in 0..groups {
            let members = &points[bounds[g]..bounds[g + 1]];
            mass[g] = members.iter().map(|&i| pi[i]).sum();
            let mut mean = vec![0.0; m];
            for &i in members {
                vech_outer(acts.row(i), &mut vech);
                let w = pi[i] / mass[g];
                for (s, v) in mean.iter_mut().zip(&vech) {
                    *s += w * v;
                }
            }
            block.set_column(g, &mean);
        }
        let mut kept_mass = mass.clone();
        let dropped = block.drop_dependent(&mut kept_mass);
        let mut survivors = Vec::with_capacity(n / 2 + m);
        for g in 0..groups {
            let members = &points[bounds[g]..bounds[g + 1]];
            if dropped[g] || kept_mass[g] <= 0.0 {
                for &i in members {
                    pi[i] = 0.0;
                }
            } else {
                let factor = kept_mass[g] / mass[g];
                for &i in members {
                    pi[i] *= factor;
                    survivors.push(i);
                }
            }
        }
        points = survivors;
    }

    // Phase (ii): the last <= 2m points one by one.
    if points.len() > m {
        let n = points.len();
        block.reset(m, n);
        for (c, &i) in points.iter().enumerate() {
            vech_outer(acts.row(i), &mut vech);
            block.set_column(c, &vech);
        }
        let mut w: Vec<f64> = points.iter().map(|&i| pi[i]).collect();
        let dropped = block.drop_dependent(&mut w);
        for (c, &i) in points.iter().enumerate() {
            pi[i] = if dropped[c] { 0.0 } else { w[c] };
        }
        points.retain(|&i| pi[i] > 0.0);
    }
    Some(points)
}

/// vech(a a^T): the upper triangle of a a^T row by row.
fn vech_outer(a: &[f64], out: &mut [f64]) {
    let mut r = 0;
    for (p, &ap) in a.iter().enumerate() {
        for &aq in &a[p..] {
            out[r] = ap * aq;
            r += 1;
        }
    }
}

/// Workspace of one elimination of the support reduction: an m x n matrix
/// of columns (points in R^m) with one weight per column.
#[derive(Default)]
struct DependenceBlock {
    m: usize,
    n: usize,
    /// m x n row-major.
    mat: Vec<f64>,
    /// Largest |entry| of each column (for the dependence tolerance).
    scale: Vec<f64>,
    pivot_row: Vec<f64>,
    upper: Vec<f64>,
    /// One null vector per dependent column, each of length n.
    null: Vec<f64>,
}

impl DependenceBlock {
    fn reset(&mut self, m: usize, n: usize) {
        self.m = m;
        self.n = n;
        self.mat.clear();
        self.mat.resize(m * n, 0.0);
        self.scale.clear();
        self.scale.resize(n, 0.0);
    }

    fn set_column(&mut self, c: usize, values: &[f64]) {
        for (r, &v) in values.iter().enumerate() {
            self.mat[r * self.n + c] = v;
        }
        self.scale[c] = values.iter().fold(0.0, |s, v| s.max(v.abs()));
    }

    /// Changes the column weights `w` (>= 0) until the columns with weight
    /// left are linearly independent, keeping sum_c w_c column_c fixed and
    /// not increasing sum_c w_c. Returns which columns were dropped (their
    /// weight is then 0). Consumes the matrix.
    #[allow(clippy::too_many_lines)]
    fn drop_dependent(&mut self, w: &mut [f64]) -> Vec<bool> {
        let (m, n) = (self.m, self.n);
        // Forward elimination with partial pivoting (row echelon form).
        let mut pivots: Vec<usize> = Vec::with_capacity(m);
        let mut free: Vec<(usize, usize)> = Vec::new(); // (column, pivots before it)
        for c in 0..n {
            let row = pivots.len();
            if row == m {
                free.push((c, row));
                continue;
            }
            let (p, val) = (row..m).map(|r| (r, self.mat[r * n + c].abs())).fold((row, -1.0), |best, cur| {
                if cur.1 > best.1 {
                    cur
                } else {
                    best
                }
            });
            if val <= DEPENDENCE_TOL * self.scale[c] {
                free.push((c, row));
                continue;
            }
            if p != row {
                for col in c..n {
                    self.mat.swap(p * n + col, row * n + col);
                }
            }
            self.pivot_row.clear();
            self.pivot_row.extend_from_slice(&self.mat[row * n + c..(row + 1) * n]);
            let piv = self.pivot_row[0];
            for r in row + 1..m {
                let f = self.mat[r * n + c] / piv;
                if f != 0.0 {
                    let dst = &mut self.mat[r * n + c + 1..(r + 1) * n];
                    for (x, y) in dst.iter_mut().zip(&self.pivot_row[1..]) {
                        *x -= f * y;
                    }
                }
            }
            pivots.push(c);
        }
        let mut dropped = vec![false; n];
        if free.is_empty() {
            return dropped;
        }

        // The pivot block U (r x r upper triangular), contiguous.
        let r_all = pivots.len();
        self.upper.clear();
        self.upper.resize(r_all * r_all, 0.0);
        for i in 0..r_all {
            for (j, &pc) in pivots.iter().enumerate().skip(i) {
                self.upper[i * r_all + j] = self.mat[i * n + pc];
            }
        }
        // Null vector of free column f: 1 at f, 0 on the other free
        // columns, and on the pivot columns before f the solution y of
        // U y = -M[.., f] (back substitution).
        let nfree = free.len();
        self.null.clear();
        self.null.resize(nfree * n, 0.0);
        let mut y = vec![0.0; r_all];
        for (q, &(f, rf)) in free.iter().enumerate() {
            for i in (0..rf).rev() {
                let urow = &self.upper[i * r_all..i * r_all + rf];
                let s = dot(&urow[i + 1..], &y[i + 1..rf]);
                y[i] = (-self.mat[i * n + f] - s) / urow[i];
            }
            let z = &mut self.null[q * n..(q + 1) * n];
            for (&pc, &yi) in pivots.iter().take(rf).zip(&y) {
                z[pc] = yi;
            }
            z[f] = 1.0;
        }

        // Apply the null vectors in order; each drops one column.
        for (q, &(f, _)) in free.iter().enumerate() {
            let (head, later) = self.null.split_at_mut((q + 1) * n);
            // z is zero after its own free column f: it lives on the pivot
            // columns before f, the earlier free columns and f.
            let z = &mut head[q * n..=q * n + f];
            if z.iter().sum::<f64>() < 0.0 {
                for v in z.iter_mut() {
                    *v = -*v;
                }
            }
            // Largest t keeping w - t z >= 0 (first index on ties). z has a
            // positive entry: it is +-1 at its own free column (no earlier
            // step touches a later free column) and its entries sum to >= 0.
            let mut best: Option<(usize, f64)> = None;
            for (c, &zc) in z.iter().enumerate() {
                if zc > 0.0 {
                    let t = w[c] / zc;
                    if best.is_none_or(|(_, bt)| t < bt) {
                        best = Some((c, t));
                    }
                }
            }
            let Some((j, t)) = best else { continue };
            for (wc, &zc) in w.iter_mut().zip(z.iter()) {
                if zc != 0.0 {
                    *wc = (*wc - t * zc).max(0.0);
                }
            }
            w[j] = 0.0;
            dropped[j] = true;
            // Keep the remaining null vectors zero on the dropped column.
            let zj = z[j];
            for other in later.chunks_exact_mut(n) {
                let alpha = other[j] / zj;
                if alpha != 0.0 {
                    for (o, &v) in other.iter_mut().zip(z.iter()) {
                        *o -= alpha * v;
                    }
                    other[j] = 0.0;
                }
            }
        }
        dropped
    }
}

#[cfg(test)]
// Exact float comparisons are intended: the hand-checkable cases are exact.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;
    use rand_distr::{Distribution, StandardNormal};

    fn unit_rows(k: usize, d: usize, seed: u64) -> Vec<f64> {
        let mut rng = SeedSequence::from_seed(seed).stream("design-test");
        let mut a = vec![0.0; k * d];
        for row in a.chunks_exact_mut(d) {
            for v in row.iter_mut() {
                *v = StandardNormal.sample(&mut rng);
            }
            let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            for v in row.iter_mut() {
                *v /= norm;
            }
        }
        a
    }

    /// Rows with very different scales per coordinate, so that Frank–Wolfe
    /// needs several steps to reach 2d.
    fn anisotropic_rows(k: usize, d: usize, seed: u64) -> Vec<f64> {
        let mut a = unit_rows(k, d, seed);
        for row in a.chunks_exact_mut(d) {
            for (j, v) in row.iter_mut().enumerate() {
                *v *= 0.02 + (j as f64 / d as f64).powi(2);
            }
        }
        a
    }

    /// max_a ||a||^2_{V^{-1}} with a general inverse (nalgebra), independent
    /// of the code under test.
    fn reference_value(a: &[f64], k: usize, d: usize, support: &[usize], w: &[f64]) -> f64 {
        let mut v = DMatrix::<f64>::zeros(d, d);
        for (&i, &wi) in support.iter().zip(w) {
            let x = nalgebra::DVector::from_row_slice(&a[i * d..(i + 1) * d]);
            v += wi * &x * x.transpose();
        }
        let inv = v.try_inverse().unwrap();
        (0..k)
            .map(|i| {
                let x = nalgebra::DVector::from_row_slice(&a[i * d..(i + 1) * d]);
                (x.transpose() * &inv * &x)[(0, 0)]
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Plain Frank–Wolfe of App. A with a fresh inverse every step.
    fn reference_frank_wolfe(a: &[f64], k: usize, d: usize, stop_at: f64) -> (Vec<f64>, usize) {
        let mut pi = vec![1.0 / k as f64; k];
        for it in 0.. {
            let mut v = DMatrix::<f64>::zeros(d, d);
            for i in 0..k {
                let x = nalgebra::DVector::from_row_slice(&a[i * d..(i + 1) * d]);
                v += pi[i] * &x * x.transpose();
            }
            let inv = v.try_inverse().unwrap();
            let g: Vec<f64> = (0..k)
                .map(|i| {
                    let x = nalgebra::DVector::from_row_slice(&a[i * d..(i + 1) * d]);
                    (x.transpose() * &inv * &x)[(0, 0)]
                })
                .collect();
            let (j, gj) = argmax(&g);
            if gj <= stop_at {
                return (pi, it);
            }
            let gamma = (gj / d as f64 - 1.0) / (gj - 1.0);
            for p in &mut pi {
                *p *= 1.0 - gamma;
            }
            pi[j] += gamma;
        }
        unreachable!()
    }

    fn opts(stop_at: Option<f64>, reduce_support: bool) -> DesignOptions {
        DesignOptions { stop_at, max_iter: DEFAULT_MAX_ITER, reduce_support }
    }

    #[test]
    fn standard_basis_gives_the_uniform_design_with_value_exactly_d() {
        let d = 4;
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            a[i * d + i] = 1.0;
        }
        let cs = core_set(&a, d, d, &DesignOptions::default()).unwrap();
        assert_eq!(cs.support, vec![0, 1, 2, 3]);
        assert_eq!(cs.weights, vec![0.25; 4]);
        assert_eq!(cs.value, 4.0);
        assert_eq!(cs.iterations, 0);
        assert_eq!(cs.stop_at, 8.0);
        // Even the tightest rule holds: this design is G-optimal.
        let tight = core_set(&a, d, d, &opts(Some(4.0), true)).unwrap();
        assert_eq!(tight.value, 4.0);
    }

    #[test]
    fn one_dimension_puts_all_weight_on_the_longest_action() {
        let a = [1.0, -3.0, 2.0];
        let cs = core_set(&a, 3, 1, &opts(Some(1.0), true)).unwrap();
        assert_eq!(cs.support, vec![1]);
        assert_eq!(cs.weights, vec![1.0]);
        assert!((cs.value - 1.0).abs() < 1e-15);
        assert_eq!(cs.iterations, 1);
    }

    #[test]
    fn weights_sum_to_one_and_the_stopping_rule_holds() {
        for (k, d, seed) in [(50, 3, 1), (300, 6, 2), (200, 8, 3), (1300, 4, 6)] {
            let a = anisotropic_rows(k, d, seed);
            for reduce in [false, true] {
                let cs = core_set(&a, k, d, &opts(None, reduce)).unwrap();
                let sum: f64 = cs.weights.iter().sum();
                assert!((sum - 1.0).abs() < 1e-12, "sum {sum}");
                assert!(cs.weights.iter().all(|&w| w > 0.0));
                assert!(cs.value <= 2.0 * d as f64, "value {}", cs.value);
                let check = reference_value(&a, k, d, &cs.support, &cs.weights);
                assert!((check - cs.value).abs() < 1e-9 * cs.value);
                assert!(cs.support.windows(2).all(|w| w[0] < w[1]));
                if reduce {
                    assert!(cs.support.len() <= support_bound(d), "support {}", cs.support.len());
                } else {
                    assert_eq!(cs.support.len(), k);
                }
            }
        }
    }

    #[test]
    fn incremental_updates_match_a_plain_frank_wolfe() {
        let (k, d) = (120, 5);
        let a = anisotropic_rows(k, d, 11);
        for stop in [2.0 * d as f64, 1.01 * d as f64] {
            let (pi, iters) = reference_frank_wolfe(&a, k, d, stop);
            let cs = core_set(&a, k, d, &opts(Some(stop), false)).unwrap();
            assert_eq!(cs.iterations, iters);
            assert!(iters > 0 || stop > 1.5 * d as f64);
            for (w, p) in cs.weights.iter().zip(&pi) {
                assert!((w - p).abs() < 1e-12, "{w} vs {p}");
            }
            let all: Vec<usize> = (0..k).collect();
            assert!((cs.value - reference_value(&a, k, d, &all, &pi)).abs() < 1e-9);
        }
    }

    #[test]
    fn reduction_keeps_the_design_valid_and_never_worse() {
        let (k, d) = (400, 6);
        let a = anisotropic_rows(k, d, 5);
        for stop in [2.0 * d as f64, 1.05 * d as f64] {
            let full = core_set(&a, k, d, &opts(Some(stop), false)).unwrap();
            let reduced = core_set(&a, k, d, &opts(Some(stop), true)).unwrap();
            assert_eq!(full.iterations, reduced.iterations);
            assert!(reduced.support.len() <= support_bound(d));
            assert!(reduced.value <= full.value * (1.0 + 1e-9));
            assert!(reduced.value <= stop);
        }
    }

    #[test]
    fn reduction_keeps_v_up_to_a_factor_of_at_least_one() {
        // V_reduced = V_frank_wolfe / s with total weight s <= 1 before
        // renormalization.
        let (k, d) = (700, 5);
        let a = anisotropic_rows(k, d, 8);
        let gram = |cs: &CoreSet| {
            let mut v = DMatrix::<f64>::zeros(d, d);
            for (&i, &w) in cs.support.iter().zip(&cs.weights) {
                let x = nalgebra::DVector::from_row_slice(&a[i * d..(i + 1) * d]);
                v += w * &x * x.transpose();
            }
            v
        };
        let full = gram(&core_set(&a, k, d, &opts(None, false)).unwrap());
        let reduced = gram(&core_set(&a, k, d, &opts(None, true)).unwrap());
        let s = full.trace() / reduced.trace();
        assert!(s <= 1.0 + 1e-12, "total weight {s}");
        assert!((reduced * s - &full).amax() < 1e-12 * full.amax());
    }

    #[test]
    fn reduction_handles_exact_dependence_and_duplicates() {
        // All nonzero vectors of {-1, 0, 1}^3 (26 actions, many exactly
        // dependent outer products), each listed twice.
        let mut a = Vec::new();
        for _ in 0..2 {
            for code in 0..27u8 {
                let x = [f64::from(code % 3) - 1.0, f64::from((code / 3) % 3) - 1.0, f64::from(code / 9) - 1.0];
                if x != [0.0; 3] {
                    a.extend_from_slice(&x);
                }
            }
        }
        let k = a.len() / 3;
        let cs = core_set(&a, k, 3, &opts(Some(3.3), true)).unwrap();
        assert!(cs.support.len() <= 6);
        assert!(cs.value <= 3.3);
        assert!((reference_value(&a, k, 3, &cs.support, &cs.weights) - cs.value).abs() < 1e-9);
    }

    #[test]
    fn results_are_deterministic() {
        let a = unit_rows(500, 7, 9);
        let first = core_set(&a, 500, 7, &opts(Some(7.5), true)).unwrap();
        let second = core_set(&a, 500, 7, &opts(Some(7.5), true)).unwrap();
        assert_eq!(first, second);
    }

    #[test]
    fn degenerate_and_invalid_inputs_are_clear_errors() {
        let degenerate = |r: Result<CoreSet>| matches!(r, Err(Error::Degenerate { name: "actions", .. }));
        let invalid =
            |r: Result<CoreSet>, want: &str| matches!(r, Err(Error::InvalidArgument { name, .. }) if name == want);
        let o = DesignOptions::default();
        // Rows in the plane x_3 = x_1 + x_2: rank 2 < 3.
        let plane = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, -1.0, 1.0];
        assert!(degenerate(core_set(&plane, 4, 3, &o)));
        // K < d.
        assert!(degenerate(core_set(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0], 2, 3, &o)));
        // A zero row.
        assert!(degenerate(core_set(&[1.0, 0.0, 0.0, 0.0, 0.0, 1.0], 3, 2, &o)));
        // A coordinate that is zero in every action.
        assert!(degenerate(core_set(&[1.0, 0.0, 2.0, 0.0, 3.0, 0.0], 3, 2, &o)));
        assert!(invalid(core_set(&[1.0, f64::NAN, 0.0, 1.0], 2, 2, &o), "actions"));
        assert!(invalid(core_set(&[1.0, f64::INFINITY, 0.0, 1.0], 2, 2, &o), "actions"));
        assert!(invalid(core_set(&[], 0, 2, &o), "actions"));
        assert!(invalid(core_set(&[], 2, 0, &o), "actions"));
        assert!(invalid(core_set(&[1.0, 0.0, 0.0], 2, 2, &o), "actions"));
        let eye = [1.0, 0.0, 0.0, 1.0];
        assert!(invalid(core_set(&eye, 2, 2, &opts(Some(1.9), true)), "stop_at"));
        assert!(invalid(core_set(&eye, 2, 2, &opts(Some(f64::NAN), true)), "stop_at"));
        let a = anisotropic_rows(200, 6, 4);
        let few = DesignOptions { stop_at: Some(6.06), max_iter: 3, reduce_support: true };
        let err = core_set(&a, 200, 6, &few).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { name: "max_iter", .. }));
        assert!(err.to_string().contains("max_iter = 3"), "{err}");
    }

    #[test]
    fn pull_counts_round_up() {
        assert_eq!(pull_counts(&[0.25, 0.5, 0.25], 8.0).unwrap(), vec![2, 4, 2]);
        assert_eq!(pull_counts(&[0.1, 0.9], 5.0).unwrap(), vec![1, 5]);
        assert_eq!(pull_counts(&[1e-9], 1.0).unwrap(), vec![1]);
        assert!(matches!(pull_counts(&[0.5], 0.0), Err(Error::InvalidArgument { name: "q", .. })));
        assert!(matches!(pull_counts(&[-0.5], 2.0), Err(Error::InvalidArgument { name: "weights", .. })));
        let cs = CoreSet { support: vec![0, 3], weights: vec![0.3, 0.7], value: 2.0, iterations: 0, stop_at: 4.0 };
        assert_eq!(cs.pulls(10.0).unwrap(), vec![3, 7]);
    }

    #[test]
    fn design_variances_average_to_d_over_the_support() {
        // sum_a pi(a) ||a||^2_{V(pi)^{-1}} = trace(V^{-1} V) = d.
        let (k, d) = (80, 4);
        let a = unit_rows(k, d, 21);
        let cs = core_set(&a, k, d, &DesignOptions::default()).unwrap();
        let g = design_variances(&a, k, d, &cs.support, &cs.weights).unwrap();
        let avg: f64 = cs.support.iter().zip(&cs.weights).map(|(&i, w)| w * g[i]).sum();
        assert!((avg - d as f64).abs() < 1e-10);
        assert!(design_variances(&a, k, d, &[0], &[1.0]).is_err());
        // Repeated indices just add up.
        let twice: Vec<usize> = cs.support.iter().chain(&cs.support).copied().collect();
        let halves: Vec<f64> = cs.weights.iter().chain(&cs.weights).map(|w| w / 2.0).collect();
        let again = design_variances(&a, k, d, &twice, &halves).unwrap();
        assert!(g.iter().zip(&again).all(|(x, y)| (x - y).abs() < 1e-10));
        assert!(design_variances(&a, k, d, &[k], &[1.0]).is_err());
    }
}
