//! UCB scores of a whole decision set: <theta, x> + beta ||x||_{V^-1}.
//!
//! The hot loop of every LinUCB round. Two forms of V^-1 arrive here:
//! a lower-triangular F with F^T F = V^-1 (F = L^-1 from the Cholesky
//! factor of a released V_t: ||x||^2_{V^-1} = ||F x||^2), or the symmetric
//! V^-1 itself (kept by Sherman–Morrison for non-private LinUCB). For the
//! small d of the papers' experiments, the kernels are instantiated for a
//! compile-time d (fully unrolled, no bounds checks) and the square roots
//! are taken in a separate pass so that the K independent widths overlap
//! in the pipeline instead of waiting on one another. For large d the
//! AVX2 build scores like a GEMM ([`widths_gemm`]: Y = X F^T with a
//! register tile of actions x columns of F, or Y = X T^T for the
//! symmetric form, T its lower triangle with the strictly-lower entries
//! doubled, so that x^T V^-1 x = <x, T x> costs the multiply-adds of
//! ||F x||^2), on several threads when the set is large enough to pay for
//! them.
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
    ucb_scores_with::<Separate, BASELINE_BLOCK, BaselineTile>(inverse, theta, beta, features, d, out);
}

/// The kernels compiled for AVX2 + FMA (fused multiply-adds, wider blocks,
/// and a register tile of [`widths_gemm`] written with the intrinsics,
/// which the vectoriser does not find on its own).
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use std::arch::x86_64::{__m256d, _mm256_add_pd, _mm256_fmadd_pd, _mm256_set1_pd, _mm256_setzero_pd};

    use super::{eight, ucb_scores_with, Fused, GemmTile, InverseForm, WIDE_BLOCK};
    use crate::cpu_dispatch::avx::{load_pd, store_pd};

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn ucb_scores(inv: InverseForm<'_>, theta: &[f64], beta: f64, x: &[f64], d: usize, out: &mut [f64]) {
        ucb_scores_with::<Fused, WIDE_BLOCK, Tile>(inv, theta, beta, x, d, out);
    }

    /// 6 actions x 8 columns: twelve accumulators (enough independent FMA
    /// chains to cover two ports' latency), two panel rows and a broadcast
    /// fill 15 of the 16 registers.
    pub(super) struct Tile;

    impl GemmTile for Tile {
        const ACTIONS: usize = 6;
        const COLUMNS: usize = 8;
        const BEATS_SOLVE: bool = true;

        #[inline(always)]
        fn tile<const SYMMETRIC: bool>(
            panels: &[f64],
            theta: &[f64],
            actions: &[f64],
            sq: &mut [f64],
            mean: &mut [f64],
        ) {
            let d = theta.len();
            // Reached only from `ucb_scores` above, an AVX2 + FMA function.
            crate::cpu_dispatch::within_avx2_fma!(tile_x8::<6, SYMMETRIC>(panels, theta, actions, d, sq, mean));
        }

        #[inline(always)]
        fn prefetch(actions: &[f64]) {
            crate::cpu_dispatch::avx::prefetch(actions);
        }
    }

    /// Sum of the four lanes, (l0 + l2) + (l1 + l3).
    #[target_feature(enable = "avx2,fma")]
    fn lanes_sum(v: __m256d) -> f64 {
        let mut l = [0.0; 4];
        store_pd(&mut l, v);
        (l[0] + l[2]) + (l[1] + l[3])
    }

    /// [`GemmTile::tile`] for `MR` actions and panels of 8 columns.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::needless_range_loop)]
    fn tile_x8<const MR: usize, const SYMMETRIC: bool>(
        panels: &[f64],
        theta: &[f64],
        actions: &[f64],
        d: usize,
        sq_out: &mut [f64],
        mean_out: &mut [f64],
    ) {
        let mut xs: [&[f64]; MR] = [&[]; MR];
        for (i, x) in actions.chunks_exact(d).take(MR).enumerate() {
            xs[i] = x;
        }
        let zero = _mm256_setzero_pd();
        let mut sq = [[zero; 2]; MR];
        let mut start = 0;
        for j0 in (0..d).step_by(8) {
            let depth = d.min(j0 + 8);
            let panel = &panels[start..start + depth * 8];
            start += depth * 8;
            // Rows from j0 + 4 on are zero in the first four columns (the
            // triangle's edge): the symmetric reduction skips those
            // products, a twelfth of the tile's at d = 40. (A zero product
            // changes a finite ||F x||^2 by no bit either, but the
            // private learners' F path keeps its instruction sequence.)
            let split = if SYMMETRIC { depth.min(j0 + 4) } else { depth };
            let (both, high) = panel.split_at(split * 8);
            // The same length as the panel's rows, so that indexing by the
            // row's index needs no bounds check.
            let mut xd = xs;
            for x in &mut xd {
                *x = &x[..depth];
            }
            let mut acc = [[zero; 2]; MR];
            for (c, row) in both.chunks_exact(8).enumerate() {
                let p0 = load_pd(row[..4].try_into().expect("four lanes"));
                let p1 = load_pd(row[4..].try_into().expect("four lanes"));
                for i in 0..MR {
                    let x = _mm256_set1_pd(xd[i][c]);
                    acc[i][0] = _mm256_fmadd_pd(x, p0, acc[i][0]);
                    acc[i][1] = _mm256_fmadd_pd(x, p1, acc[i][1]);
                }
            }
            for (c, row) in (split..depth).zip(high.chunks_exact(8)) {
                let p1 = load_pd(row[4..].try_into().expect("four lanes"));
                for i in 0..MR {
                    acc[i][1] = _mm256_fmadd_pd(_mm256_set1_pd(xd[i][c]), p1, acc[i][1]);
                }
            }
            for i in 0..MR {
                let (w0, w1) = if SYMMETRIC {
                    let x = match xs[i].get(j0..j0 + 8) {
                        Some(full) => full,
                        None => &eight(xs[i], j0),
                    };
                    (load_pd(x[..4].try_into().expect("four")), load_pd(x[4..].try_into().expect("four")))
                } else {
                    (acc[i][0], acc[i][1])
                };
                sq[i][0] = _mm256_fmadd_pd(acc[i][0], w0, sq[i][0]);
                sq[i][1] = _mm256_fmadd_pd(acc[i][1], w1, sq[i][1]);
            }
        }
        let theta_chunks = theta.chunks_exact(4);
        let theta_rest = theta_chunks.remainder();
        for i in 0..MR {
            let chunks = xs[i].chunks_exact(4);
            let x_rest = chunks.remainder();
            let mut m = zero;
            for (x, w) in chunks.zip(theta_chunks.clone()) {
                m = _mm256_fmadd_pd(load_pd(x.try_into().expect("four")), load_pd(w.try_into().expect("four")), m);
            }
            let tail = x_rest.iter().zip(theta_rest).fold(0.0, |t, (&x, &w)| w.mul_add(x, t));
            mean_out[i] = lanes_sum(m) + tail;
            sq_out[i] = lanes_sum(_mm256_add_pd(sq[i][0], sq[i][1]));
        }
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

/// The body of [`ucb_scores`] for one multiply-add and one set of block
/// sizes (`B`: [`widths_dynamic`]; `G`: [`widths_gemm`]); inlined
/// into each build (baseline, `avx2_fma`), so every kernel below is
/// compiled for it.
#[inline(always)]
pub(crate) fn ucb_scores_with<M: MulAdd, const B: usize, G: GemmTile>(
    inverse: InverseForm<'_>,
    theta: &[f64],
    beta: f64,
    features: &[f64],
    d: usize,
    out: &mut [f64],
) {
    let k = out.len() / 2;
    macro_rules! fixed {
        ($($n:literal)*) => {
            match (d, inverse) {
                (_, InverseForm::Cholesky { lower, inv_diag }) if G::BEATS_SOLVE && gemm_pays(d, k) => {
                    let mut f = vec![0.0; d * d];
                    lower_inverse_rows::<M>(lower, inv_diag, d, &mut f);
                    widths_gemm::<G, false>(&f, theta, features, d, out);
                }
                (_, InverseForm::Cholesky { .. }) => widths_dynamic::<M, B>(inverse, theta, features, d, out),
                $(($n, _) => widths_fixed::<M, $n>(inverse, theta, features, out),)*
                (_, InverseForm::LowerFactor(f)) if G::BEATS_SOLVE => {
                    widths_gemm::<G, false>(f, theta, features, d, out);
                }
                (_, InverseForm::Symmetric(v)) if G::BEATS_SOLVE => widths_gemm::<G, true>(v, theta, features, d, out),
                _ => widths_dynamic::<M, B>(inverse, theta, features, d, out),
            }
        };
    }
    // `out` holds ||x||^2_{V^-1} after the first pass and the means go in
    // place: see `widths_*`; finish with the square roots.
    fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    let (q, m) = out.split_at_mut(k);
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

/// One register tile of [`widths_gemm`]: the width into `sq` and
/// <theta, x> into `mean` for `ACTIONS` actions (the rows of `actions`,
/// each d long), from a lower-triangular P packed in panels of `COLUMNS`
/// columns of P^T ([`pack_panels`]). The tile accumulates y = P x over
/// the inner dimension and reduces: ||y||^2 = ||F x||^2 for P = F, or
/// (`SYMMETRIC`) <x, y> = x^T A x for P = T, the lower triangle of a
/// symmetric A with the strictly-lower entries doubled
/// (x^T A x = sum_r x_r (A_rr x_r + 2 sum_{c<r} A_rc x_c)).
pub(crate) trait GemmTile {
    const ACTIONS: usize;
    const COLUMNS: usize;
    /// Whether [`ucb_scores`] takes [`widths_gemm`] with this tile over the
    /// simple blocked kernels of [`widths_dynamic`] (false where the tile
    /// is not faster, so that build's results stay those of the simple
    /// kernels).
    const BEATS_SOLVE: bool;
    /// (d is `theta`'s length.)
    fn tile<const SYMMETRIC: bool>(panels: &[f64], theta: &[f64], actions: &[f64], sq: &mut [f64], mean: &mut [f64]);

    /// Asks for the next tile's actions ahead of their use (a hint; none
    /// by default).
    #[inline(always)]
    fn prefetch(_actions: &[f64]) {}
}

/// The baseline build's tile (4 actions x 4 columns: eight accumulators),
/// which [`ucb_scores`] does not take (see [`GemmTile::BEATS_SOLVE`]).
pub(crate) type BaselineTile = PortableTile<Separate, 4, 4>;

/// A tile in plain Rust for any target (see [`gemm_tile`]).
pub(crate) struct PortableTile<M, const MR: usize, const NR: usize>(std::marker::PhantomData<M>);

impl<M: MulAdd, const MR: usize, const NR: usize> GemmTile for PortableTile<M, MR, NR> {
    const ACTIONS: usize = MR;
    const COLUMNS: usize = NR;
    // The vectoriser does not turn this tile into vector code (on baseline
    // x86-64 it is slower than the transposed blocks), so builds with it
    // keep the simple kernels; it is the reference for the tiles written
    // with intrinsics.
    const BEATS_SOLVE: bool = false;

    #[inline(always)]
    fn tile<const SYMMETRIC: bool>(panels: &[f64], theta: &[f64], actions: &[f64], sq: &mut [f64], mean: &mut [f64]) {
        let (s, m) = gemm_tile::<M, MR, NR, SYMMETRIC>(panels, theta, actions, theta.len());
        sq.copy_from_slice(&s);
        mean.copy_from_slice(&m);
    }
}

/// Whether forming F = L^-1 (d^3 / 6 multiply-adds) for [`widths_gemm`]
/// pays against the forward substitution of [`solve_tile`]: when the K
/// actions' d^2 / 2 each are at least one and a half times as many.
fn gemm_pays(d: usize, k: usize) -> bool {
    2 * k >= d
}

/// F = L^-1 row by row, F_i = (e_i - sum_{c<i} L_ic F_c) / L_ii, as
/// multiply-adds of whole (contiguous) rows of F, which vectorise; the
/// sums run in another order than [`lower_inverse`]'s, so the two agree to
/// rounding. `f` must arrive zeroed (a fresh buffer: zeroing it here
/// again was a second pass over d^2 entries every select).
#[inline(always)]
fn lower_inverse_rows<M: MulAdd>(l: &[f64], inv_diag: &[f64], d: usize, f: &mut [f64]) {
    debug_assert!(f.iter().all(|&v| v == 0.0));
    for i in 0..d {
        let (done, rest) = f.split_at_mut(i * d);
        let row = &mut rest[..=i];
        for (c, &a) in l[i * d..i * d + i].iter().enumerate() {
            for (r, &v) in row[..=c].iter_mut().zip(&done[c * d..=c * d + c]) {
                *r = M::mul_add(a, v, *r);
            }
        }
        let inv = inv_diag[i];
        for r in &mut row[..i] {
            *r *= -inv;
        }
        row[i] = inv;
    }
}

/// Fills out[..k] with ||F x_i||^2 and out[k..2k] with <theta, x_i> for a
/// row-major lower-triangular F, as a GEMM would compute Y = X F^T: F^T
/// is packed once into panels of `G::COLUMNS` columns ([`pack_panels`]),
/// and a register tile of `G::ACTIONS` actions x those columns of Y
/// accumulates over the inner dimension, one broadcast feature times one
/// panel row per step, reading the actions where they lie (row-major, no
/// transposition). Each panel stops at the triangle's edge, so the zero
/// upper triangle of F costs at most `G::COLUMNS`^2 / 2 per panel. Actions
/// are independent: an action's results are the same bits in any tile
/// position (a last, partial tile runs padded with zero actions).
///
/// `SYMMETRIC`: `f` is a row-major symmetric A instead, and out[..k] gets
/// x_i^T A x_i from the same tile over T, A's lower triangle with the
/// strictly-lower entries doubled (see [`GemmTile`]): the same
/// multiply-adds as ||F x||^2, half those of the full quadratic form.
#[inline(always)]
fn widths_gemm<G: GemmTile, const SYMMETRIC: bool>(
    f: &[f64],
    theta: &[f64],
    features: &[f64],
    d: usize,
    out: &mut [f64],
) {
    let k = out.len() / 2;
    let (q, m) = out.split_at_mut(k);
    let panels = pack_panels::<SYMMETRIC>(f, d, G::COLUMNS);
    if k * d * d < PARALLEL_WORK || rayon::current_num_threads() < 2 {
        gemm_rows::<G, SYMMETRIC>(&panels, theta, features, d, q, m);
        return;
    }
    // Tiles are independent and each action's bits do not depend on its
    // tile's position, so the split changes no result. Pieces of about
    // 2^20 multiply-adds (some 50 us) let idle workers steal from busy
    // ones on a shared machine. The pieces run on rayon's threads, still
    // only when this build was chosen for the CPU (the condition of the
    // tile's entry into its target-feature code).
    let tiles = (PARALLEL_WORK / 4 / (G::ACTIONS * d * d)).max(1);
    let actions = tiles * G::ACTIONS;
    rayon::scope(|scope| {
        for ((x, qo), mo) in features.chunks(actions * d).zip(q.chunks_mut(actions)).zip(m.chunks_mut(actions)) {
            let panels = &panels;
            scope.spawn(move |_| gemm_rows::<G, SYMMETRIC>(panels, theta, x, d, qo, mo));
        }
    });
}

/// Multiply-adds (K d^2) from which [`widths_gemm`] spreads its tiles over
/// rayon's threads: about 4 million, some 200 us of one core, far above
/// the cost of handing out the pieces (below it, e.g. (d, K) = (40, 400),
/// one thread).
const PARALLEL_WORK: usize = 1 << 22;

/// How many tiles ahead [`gemm_rows`] asks for its actions.
const PREFETCH_TILES: usize = 4;

/// [`widths_gemm`] on one run of actions (`q`, `m`: their outputs).
#[inline(always)]
fn gemm_rows<G: GemmTile, const SYMMETRIC: bool>(
    panels: &[f64],
    theta: &[f64],
    features: &[f64],
    d: usize,
    q: &mut [f64],
    m: &mut [f64],
) {
    debug_assert_eq!(theta.len(), d, "theta has d entries (the tile reads d from it)");
    let k = q.len();
    let mr = G::ACTIONS;
    let groups = features.chunks_exact(mr * d);
    let rest = groups.remainder();
    // The tile reads its actions a few entries at a time over several
    // passes, an order the hardware prefetchers do not follow: a set
    // larger than the caches then waits on memory (about a fifth of a
    // (64, 4096) round) unless the tiles are asked for ahead. Four tiles
    // ahead into the second-level cache: far enough ahead to cover the
    // memory latency, without evicting from the first level the entries
    // the tile's own passes read again.
    let mut next = features.chunks(mr * d).skip(PREFETCH_TILES);
    for ((g, qo), mo) in groups.zip(q.chunks_exact_mut(mr)).zip(m.chunks_exact_mut(mr)) {
        if let Some(ahead) = next.next() {
            G::prefetch(ahead);
        }
        G::tile::<SYMMETRIC>(panels, theta, g, qo, mo);
    }
    if !rest.is_empty() {
        let mut padded = vec![0.0; mr * d];
        padded[..rest.len()].copy_from_slice(rest);
        let (mut s, mut mean) = (vec![0.0; mr], vec![0.0; mr]);
        G::tile::<SYMMETRIC>(panels, theta, &padded, &mut s, &mut mean);
        let (n, first) = (rest.len() / d, k - rest.len() / d);
        q[first..].copy_from_slice(&s[..n]);
        m[first..].copy_from_slice(&mean[..n]);
    }
}

/// F^T in panels of `nr` columns (rows j0..j0+nr of F): each panel holds,
/// for each inner index c < min(d, j0 + nr), the `nr` entries F_{j0+t, c}
/// (zero above the diagonal and past row d), one after the other.
/// `SYMMETRIC`: T in place of F, 2 F_{j,c} below the diagonal (see
/// [`GemmTile`]; doubling is exact).
fn pack_panels<const SYMMETRIC: bool>(f: &[f64], d: usize, nr: usize) -> Vec<f64> {
    let panels_len: usize = (0..d).step_by(nr).map(|j0| d.min(j0 + nr) * nr).sum();
    let mut panels = vec![0.0; panels_len];
    let below = if SYMMETRIC { 2.0 } else { 1.0 };
    let mut start = 0;
    // Row by row of F (contiguous reads), each entry to its panel row.
    for j0 in (0..d).step_by(nr) {
        let depth = d.min(j0 + nr);
        let panel = &mut panels[start..start + depth * nr];
        for (t, row) in f[j0 * d..depth * d].chunks_exact(d).enumerate() {
            let j = j0 + t;
            for (slot, &v) in panel.iter_mut().skip(t).step_by(nr).zip(&row[..j]) {
                *slot = below * v;
            }
            panel[j * nr + t] = row[j];
        }
        start += depth * nr;
    }
    panels
}

/// x[j0..j0 + 8], zero past the end of x: the entries of an action that
/// the symmetric reduction multiplies with one panel's 8 outputs. Entry
/// by entry, not a copy of the slice: a `memcpy` call in the tile made
/// the compiler keep the accumulators on the stack (the AVX2 tile ran
/// at less than half its speed).
#[inline(always)]
fn eight(x: &[f64], j0: usize) -> [f64; 8] {
    std::array::from_fn(|t| x.get(j0 + t).copied().unwrap_or(0.0))
}

/// ||F x||^2 (or, `SYMMETRIC`, x^T A x: see [`GemmTile`]) and <theta, x>
/// of the `MR` actions (rows of `actions`) from the packed panels: the
/// `MR` x `NR` accumulators of one panel stay in registers over the inner
/// dimension, then add their squares (or their products with the action's
/// own entries) into per-action, per-lane sums.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn gemm_tile<M: MulAdd, const MR: usize, const NR: usize, const SYMMETRIC: bool>(
    panels: &[f64],
    theta: &[f64],
    actions: &[f64],
    d: usize,
) -> ([f64; MR], [f64; MR]) {
    let xs: [&[f64]; MR] = std::array::from_fn(|i| &actions[i * d..(i + 1) * d]);
    let mut sq = [[0.0; NR]; MR];
    let mut start = 0;
    for j0 in (0..d).step_by(NR) {
        let depth = d.min(j0 + NR);
        let panel = &panels[start..start + depth * NR];
        start += depth * NR;
        let rows = panel.chunks_exact(NR);
        // The same length as `rows`: no bounds checks in the loop below.
        let mut xd = xs;
        for x in &mut xd {
            *x = &x[..rows.len()];
        }
        let mut acc = [[0.0; NR]; MR];
        for (c, row) in rows.enumerate() {
            for i in 0..MR {
                let x = xd[i][c];
                for t in 0..NR {
                    acc[i][t] = M::mul_add(x, row[t], acc[i][t]);
                }
            }
        }
        for i in 0..MR {
            for t in 0..NR {
                let w = match xs[i].get(j0 + t) {
                    _ if !SYMMETRIC => acc[i][t],
                    Some(&x) => x,
                    None => 0.0,
                };
                sq[i][t] = M::mul_add(acc[i][t], w, sq[i][t]);
            }
        }
    }
    // <theta, x> along the features, LANES at a time (independent chains).
    let mut mean = [0.0; MR];
    let theta_chunks = theta.chunks_exact(LANES);
    let theta_rest = theta_chunks.remainder();
    for i in 0..MR {
        let mut lanes = [0.0; LANES];
        let chunks = xs[i].chunks_exact(LANES);
        let x_rest = chunks.remainder();
        for (x, w) in chunks.zip(theta_chunks.clone()) {
            for t in 0..LANES {
                lanes[t] = M::mul_add(w[t], x[t], lanes[t]);
            }
        }
        let mut tail = 0.0;
        for (&x, &w) in x_rest.iter().zip(theta_rest) {
            tail = M::mul_add(w, x, tail);
        }
        mean[i] = lanes_sum(&lanes) + tail;
    }
    (sq.map(|s| lanes_sum(&s)), mean)
}

/// Independent sums of [`gemm_tile`]'s <theta, x>.
const LANES: usize = 8;

/// The sum of a few lanes, pairwise.
#[inline(always)]
fn lanes_sum<const N: usize>(lanes: &[f64; N]) -> f64 {
    let mut v = *lanes;
    let mut n = N;
    while n > 1 {
        let h = n / 2;
        for t in 0..h {
            v[t] += v[n - h + t];
        }
        n -= h;
    }
    v[0]
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
    // Zeros above the diagonal only, row by row: a whole-buffer fill was a
    // `memset` call a round on the D.2 path whose cost swung with code
    // layout (perf: 71 against 1,061 samples in two builds of one source).
    for i in 0..n {
        out[i * n + i + 1..(i + 1) * n].fill(0.0);
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
                ucb_scores_with::<Separate, BASELINE_BLOCK, BaselineTile>(form, &theta, 1.3, &feats, d, &mut base);
                // Fused through software fma on a CPU without it: slow, exact.
                ucb_scores_with::<Fused, WIDE_BLOCK, PortableTile<Fused, 6, 8>>(
                    form, &theta, 1.3, &feats, d, &mut fused,
                );
                ucb_scores(form, &theta, 1.3, &feats, d, &mut dispatched);
                for i in 0..k {
                    let scale = base[k + i].abs().max(1.0);
                    assert!((base[i] - fused[i]).abs() < 1e-12 * scale, "d {d}: {} vs {}", base[i], fused[i]);
                    assert!((base[i] - dispatched[i]).abs() < 1e-12 * scale, "d {d}");
                }
            }
        }
    }

    /// A well-conditioned SPD V = B B^T + I, its Cholesky factor and F = L^-1.
    fn spd_factor(d: usize) -> (crate::linalg::Cholesky, Vec<f64>, Vec<f64>) {
        let b: Vec<f64> = (0..d * d).map(|i| ((i * 7 + 3) % 11) as f64 / 11.0 - 0.4).collect();
        let mut v = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                v[i * d + j] = (0..d).map(|t| b[i * d + t] * b[j * d + t]).sum::<f64>() + f64::from(u8::from(i == j));
            }
        }
        let chol = crate::linalg::Cholesky::factor(&v, d).unwrap();
        let inv_diag: Vec<f64> = (0..d).map(|i| 1.0 / chol.lower()[i * d + i]).collect();
        let mut f = vec![0.0; d * d];
        lower_inverse(chol.lower(), &inv_diag, d, &mut f);
        (chol, inv_diag, f)
    }

    #[test]
    fn row_inverse_agrees_with_the_columnwise_one() {
        for d in [1usize, 2, 5, 17, 64] {
            let (chol, inv_diag, f) = spd_factor(d);
            let mut rows = vec![0.0; d * d];
            lower_inverse_rows::<Separate>(chol.lower(), &inv_diag, d, &mut rows);
            let scale = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            for (i, (a, b)) in f.iter().zip(&rows).enumerate() {
                assert!((a - b).abs() <= 1e-13 * scale, "d {d} entry {i}: {a} vs {b}");
            }
        }
    }

    /// The GEMM-like kernel (every build's tile, and the dispatched one)
    /// against the simple blocked kernels, at d and K below, at and above
    /// multiples of the tile sizes.
    #[test]
    fn blocked_kernel_agrees_with_the_simple_one() {
        for d in [1usize, 2, 5, 8, 17, 40, 63, 64, 65] {
            let (chol, inv_diag, f) = spd_factor(d);
            let theta: Vec<f64> = (0..d).map(|i| 0.07 * i as f64 - 0.5).collect();
            for k in [1usize, 5, 6, 7, 13, 50, 97] {
                let feats: Vec<f64> = (0..k * d).map(|i| ((i * 5 + 1) % 13) as f64 / 13.0 - 0.5).collect();
                let mut simple = vec![0.0; 2 * k];
                widths_dynamic::<Separate, BASELINE_BLOCK>(
                    InverseForm::LowerFactor(&f),
                    &theta,
                    &feats,
                    d,
                    &mut simple,
                );
                let mut solved = vec![0.0; 2 * k];
                let by_solve = InverseForm::Cholesky { lower: chol.lower(), inv_diag: &inv_diag };
                widths_dynamic::<Separate, BASELINE_BLOCK>(by_solve, &theta, &feats, d, &mut solved);
                let mut baseline = vec![0.0; 2 * k];
                widths_gemm::<BaselineTile, false>(&f, &theta, &feats, d, &mut baseline);
                let mut fused = vec![0.0; 2 * k];
                widths_gemm::<PortableTile<Fused, 6, 8>, false>(&f, &theta, &feats, d, &mut fused);
                let mut odd = vec![0.0; 2 * k];
                widths_gemm::<PortableTile<Separate, 3, 5>, false>(&f, &theta, &feats, d, &mut odd);
                // Dispatched: the Cholesky form takes this CPU's tile when
                // 2K >= d, the lower-factor form above the fixed-d kernels.
                let mut dispatched = vec![0.0; 2 * k];
                ucb_scores(by_solve, &theta, 1.0, &feats, d, &mut dispatched);
                let mut by_factor = vec![0.0; 2 * k];
                ucb_scores(InverseForm::LowerFactor(&f), &theta, 1.0, &feats, d, &mut by_factor);
                for i in 0..k {
                    let (w, mean) = (simple[i], simple[k + i]);
                    let tol = 1e-13 * (w + mean.abs() + 1.0);
                    for (name, got) in [("solve", &solved), ("baseline", &baseline), ("fused", &fused), ("3x5", &odd)] {
                        assert!((got[i] - w).abs() < tol, "d {d} k {k} {name} width: {} vs {w}", got[i]);
                        assert!((got[k + i] - mean).abs() < tol, "d {d} k {k} {name} mean: {} vs {mean}", got[k + i]);
                    }
                    let ucb = mean + w.sqrt();
                    let tol = 1e-13 * (ucb.abs() + 1.0);
                    assert!((dispatched[i] - ucb).abs() < tol, "d {d} k {k} dispatched: {} vs {ucb}", dispatched[i]);
                    assert!((by_factor[i] - ucb).abs() < tol, "d {d} k {k} factor form: {} vs {ucb}", by_factor[i]);
                }
            }
        }
    }

    /// The symmetric form through the GEMM tile (every build's tile, and
    /// the dispatched one: the AVX2 tile on a CPU with it) against x^T A x
    /// by plain loops over the whole A, at d and K below, at and above
    /// multiples of the tile sizes.
    #[test]
    fn symmetric_gemm_matches_the_definition() {
        for d in [17usize, 24, 40, 63, 64, 65] {
            let (chol, _, _) = spd_factor(d);
            let vinv = chol.inverse();
            let theta: Vec<f64> = (0..d).map(|i| 0.07 * i as f64 - 0.5).collect();
            for k in [1usize, 5, 6, 7, 13, 50, 97] {
                let feats: Vec<f64> = (0..k * d).map(|i| ((i * 5 + 1) % 13) as f64 / 13.0 - 0.5).collect();
                let run = |f: &dyn Fn(&mut [f64])| {
                    let mut out = vec![0.0; 2 * k];
                    f(&mut out);
                    out
                };
                let fused = run(&|o| widths_gemm::<PortableTile<Fused, 6, 8>, true>(&vinv, &theta, &feats, d, o));
                let tiles = [
                    ("baseline", run(&|o| widths_gemm::<BaselineTile, true>(&vinv, &theta, &feats, d, o))),
                    ("3x5", run(&|o| widths_gemm::<PortableTile<Separate, 3, 5>, true>(&vinv, &theta, &feats, d, o))),
                    ("fused", fused.clone()),
                ];
                let dispatched = run(&|o| ucb_scores(InverseForm::Symmetric(&vinv), &theta, 1.0, &feats, d, o));
                for i in 0..k {
                    let x = &feats[i * d..(i + 1) * d];
                    let (mut quad, mut size) = (0.0, 0.0);
                    for a in 0..d {
                        for b in 0..d {
                            quad += x[a] * vinv[a * d + b] * x[b];
                            size += (x[a] * vinv[a * d + b] * x[b]).abs();
                        }
                    }
                    let mean: f64 = theta.iter().zip(x).map(|(w, v)| w * v).sum();
                    let mean_size: f64 = theta.iter().zip(x).map(|(w, v)| (w * v).abs()).sum();
                    for (name, got) in &tiles {
                        assert!((got[i] - quad).abs() <= 1e-12 * size, "d {d} k {k} {name}: {} vs {quad}", got[i]);
                        let m = got[k + i];
                        assert!((m - mean).abs() <= 1e-12 * mean_size, "d {d} k {k} {name} mean: {m} vs {mean}");
                    }
                    // The dispatched build against the portable fused tile: the
                    // same products, summed in another order only in the mean.
                    let want = fused[k + i] + fused[i].max(0.0).sqrt();
                    let scale = mean_size + quad.sqrt();
                    assert!((dispatched[i] - want).abs() <= 1e-13 * scale, "d {d} k {k}: {} vs {want}", dispatched[i]);
                }
            }
        }
    }

    /// A NaN or infinite entry makes its action's score non-finite on the
    /// symmetric path too, where theta is zero at that entry (the first
    /// round of LinUCB): the engine's finiteness check rides on the scores.
    #[test]
    fn non_finite_entries_give_non_finite_symmetric_scores() {
        for d in [5usize, 17, 40] {
            let (chol, _, _) = spd_factor(d);
            let vinv = chol.inverse();
            let k = 13;
            for theta in [vec![0.0; d], (0..d).map(|i| 0.1 * i as f64).collect()] {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    for at in [0, d - 1, 6 * d + 3, k * d - 1] {
                        let mut feats: Vec<f64> = (0..k * d).map(|i| ((i * 5 + 1) % 13) as f64 / 13.0 - 0.5).collect();
                        feats[at] = bad;
                        let mut out = vec![0.0; 2 * k];
                        ucb_scores(InverseForm::Symmetric(&vinv), &theta, 1.0, &feats, d, &mut out);
                        assert!(!out[at / d].is_finite(), "d {d} at {at}: {}", out[at / d]);
                        let finite = (0..k).filter(|&i| i != at / d).all(|i| out[i].is_finite());
                        assert!(finite, "d {d} at {at}: other actions stay finite");
                    }
                }
            }
        }
    }

    /// Spreading the tiles over threads changes no bit (large K d^2).
    #[test]
    fn parallel_split_changes_no_bits() {
        let d = 64;
        let k = PARALLEL_WORK / (d * d) + 7;
        let (_, _, f) = spd_factor(d);
        let theta: Vec<f64> = (0..d).map(|i| 0.01 * i as f64 - 0.3).collect();
        let feats: Vec<f64> = (0..k * d).map(|i| ((i * 5 + 3) % 23) as f64 / 23.0 - 0.5).collect();
        let mut split = vec![0.0; 2 * k];
        widths_gemm::<BaselineTile, false>(&f, &theta, &feats, d, &mut split);
        let (mut q, mut m) = (vec![0.0; k], vec![0.0; k]);
        gemm_rows::<BaselineTile, false>(
            &pack_panels::<false>(&f, d, BaselineTile::COLUMNS),
            &theta,
            &feats,
            d,
            &mut q,
            &mut m,
        );
        for i in 0..k {
            assert_eq!(split[i].to_bits(), q[i].to_bits(), "width {i}");
            assert_eq!(split[k + i].to_bits(), m[i].to_bits(), "mean {i}");
        }
    }
}
