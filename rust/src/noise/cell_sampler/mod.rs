//! Exact discrete Laplace and Gaussian draws from a table of cells: the
//! fast sampler behind every lattice release.
//!
//! The law is exactly the one of the rejection samplers
//! [`super::discrete_laplace`] and [`super::discrete_gaussian`]
//! (P[Y = y] ∝ rho(|y|) with rho(m) = exp(-m / t) for the discrete Laplace
//! and exp(-m^2 / (2 var)) for the discrete Gaussian, Canonne, Kamath &
//! Steinke 2020, "The discrete Gaussian for differential privacy"), so the
//! calibrations and audits of those laws apply; only the way the
//! generator's words are spent differs (so seeded draws differ from
//! theirs). Cost: about one generator word and twenty floating-point
//! operations a draw, where von Neumann's Laplace and CKS Alg. 3's Gaussian
//! spend several words and unpredictable branches.
//!
//! Two paths draw from a table: the constant-time path
//! ([`CellSampler::sample_constant_time`], what [`CellSampler::sample`] and
//! every release use), whose running time does not depend on the value
//! drawn, and the branching path ([`CellSampler::sample_branching`]), with
//! shortcuts taken according to the cell and offset drawn, kept as the
//! reference the first is benchmarked and timed against. The description
//! of a draw below is the branching path's; the constant-time path makes
//! the same decisions with a fixed amount of work a proposal (see its
//! documentation).
//!
//! Valid inputs: a discrete Laplace scale t >= 1, a discrete Gaussian
//! variance 1 <= var <= 2^50 ([`MAX_GAUSSIAN_VAR`]). [`discrete_laplace`]
//! and [`discrete_gaussian`] draw from the cached table of a law.
//!
//! Construction, for a fixed law (once per law and thread, cached):
//! - magnitudes m >= 0 are cut into cells [c w, (c + 1) w) of width
//!   w = 2^b, with scale / w in [16, 32) for the Laplace and [32, 64) for
//!   the Gaussian (scale = t, or sqrt(var)), up to X = (number of cells) w,
//!   40 t or 8.5 sigma but at most 510 cells (X > 16 t, X > 7.9 sigma;
//!   the wide layout of [`CellSampler::wide`]: 40 t or 12 sigma, up to
//!   4094 cells); beyond X a tail item;
//! - cell c gets an integer weight W_c >= F rho(c w) (F = f 2^e, a dyadic
//!   factor), the tail W_T >= F rho(X) / (w (1 - exp(-1/t'))), and a dummy
//!   item pads the total to S = N 2^52 for N = 2^k columns; Walker's alias
//!   table over these integers picks item i with probability W_i / S
//!   exactly (one word: k column bits, 52 threshold bits);
//! - rho(c w) is bracketed in 192-bit fixed point by a recurrence with
//!   outward rounding ([`super::exp_bounds`]), so W_c is a certified upper
//!   bound and theta_c = F rho(c w) / W_c <= 1 has certified double bounds.
//!
//! A draw: pick an item. A cell c: a second word gives the sign, the offset
//! o in [0, w) (m = c w + o) and the first digits of a uniform u; accept
//! when u < F rho(m) / W_c = theta_c exp(-delta), delta = q(m) - q(c w) in
//! [0, 1/2]. Then P[m, sign] = W_c/S * 1/w * 1/2 * F rho(m)/W_c =
//! F rho(m) / (2 S w) for every m < X: proportional to rho(m). The
//! comparison is decided by the bounds S_3(delta) <= exp(-delta) <=
//! S_2(delta) (Taylor partial sums) with certified floating-point margins
//! (the exact value lies between, so deciding early changes nothing) and,
//! when u falls between them (about one draw in 10^6), by further digits
//! of u against 192-bit-and-up bounds ([`super::exp_bounds::uniform_below`]).
//! The tail: accept with probability F rho(X) / (w (1 - r) W_T), r =
//! exp(-1/t'), then m = X + G with G geometric(1 - r) (von Neumann) and
//! accept with probability rho(X + G) / (rho(X) r^G); t' = t for the
//! Laplace (that probability is 1) and ceil(var / X) for the Gaussian (so
//! it is at most 1): again F rho(m) / (2 S w). The dummy item and
//! (negative, 0) restart the draw. Hence P[Y = y] ∝ rho(|y|) for all y:
//! no truncation. The one departure is the von Neumann geometric's own
//! (a tail of 2^64, see [`super::discrete_laplace`]) and, for the Gaussian
//! tail, a rejection when G t' (2X + G) overflows 128 bits (G > 2^40:
//! probability below exp(-2^40 / t') after a tail pick of probability
//! below e^-72).

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use num_bigint::BigUint;
use num_traits::One;
use rand_core::RngCore;

use super::bernoulli::bernoulli_exp_neg;
use super::discrete_gaussian::MAX_GAUSSIAN_VAR;
use super::discrete_laplace::{is_negative_zero, signed, two_sided_geometric};
use super::exp_bounds::{ceil_shr, exp_neg_bounds, ratio_bounds, to_f64_bound, uniform_below, Bounds};
use super::isqrt::isqrt;

/// The law's shape: rho(m) = exp(-num(m) / den).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// rho(m) = exp(-m / t), t >= 1.
    Laplace { t: u64 },
    /// rho(m) = exp(-m^2 / (2 var)), 1 <= var <= 2^50.
    Gaussian { var: u128 },
}

impl Shape {
    fn exponent_num(self, m: u128) -> u128 {
        match self {
            Shape::Laplace { .. } => m,
            Shape::Gaussian { .. } => m * m,
        }
    }

    fn exponent_den(self) -> u128 {
        match self {
            Shape::Laplace { t } => u128::from(t),
            Shape::Gaussian { var } => 2 * var,
        }
    }
}

/// Bits of the alias threshold (the column's capacity is 2^20): the
/// column, threshold, sign, offset and the uniform's first digits share one
/// generator word.
const THRESHOLD_BITS: u32 = 20;
const CAPACITY: u64 = 1 << THRESHOLD_BITS;
/// Largest number of alias columns (2^12: 4096 items).
const MAX_COLUMN_BITS: u32 = 12;
/// Digits of the uniform the closer test reads (a second word's).
const CLOSE_BITS: u32 = 52;
/// Fixed-point precision of the cell heads rho(c w).
const HEAD_PREC: u32 = 192;
/// Relative margin of the floating-point acceptance bounds: their
/// evaluation (at most eight roundings of numbers in [0, 1], the smallest
/// result above 1/2) errs by less than 2^-49, so 2^-44 certifies them with
/// room to spare. Applied to theta's bounds once, at construction.
const MARGIN: f64 = 1.0 / (1u64 << 44) as f64;
/// Relative margin on delta = num (1/den): the roundings of 1/den, of the
/// product and of the widened 1/den err by at most 3 2^-53 together.
const DELTA_MARGIN: f64 = 1.0 / (1u64 << 50) as f64;

/// The tail beyond the last cell.
#[derive(Clone, Debug)]
struct Tail {
    /// X: the first magnitude past the cells.
    start: u64,
    /// t': the geometric proposal's scale.
    scale: u64,
    /// W_T.
    weight: u64,
}

/// An exact sampler of one discrete Laplace or Gaussian law (see the module
/// documentation for the construction and the proof of the law).
#[derive(Clone, Debug)]
pub struct CellSampler {
    shape: Shape,
    cell_bits: u32,
    cells: u64,
    /// Bit positions in the word: column on top, then threshold, sign,
    /// offset, and the uniform's first `value_bits` digits at the bottom.
    column_shift: u32,
    threshold_shift: u32,
    offset_shift: u32,
    /// The masks of the word's sign bit, of an offset (after its shift)
    /// and of the uniform's digits: fields, so that a draw does not build
    /// them from the shifts.
    sign_mask: u64,
    offset_mask: u64,
    value_mask: u64,
    threshold: Vec<u64>,
    /// Per column c, [alias(c), c]: the item is `outcome[2 c + keep]`, an
    /// address computed from the threshold test instead of a branch on it
    /// (a coin flip per draw that mispredicts about half the time; the
    /// compiler turns a select on it back into a branch).
    outcome: Vec<u32>,
    /// Certified bounds on theta_c = F rho(c w) / W_c per cell, widened by
    /// the floating-point margin and scaled by 2^value_bits (the units of
    /// the uniform's digits in the first word).
    theta: Vec<(f64, f64)>,
    /// Per cell, the first test at the cell's largest delta (its last
    /// offset) in integer digits: a draw whose digits lie below it passes
    /// the first test at every offset of the cell (see `accept`), so it is
    /// accepted without evaluating delta.
    sure: Vec<u64>,
    weight: Vec<u64>,
    /// F = factor_mant 2^factor_exp.
    factor_mant: u64,
    factor_exp: i64,
    /// 1 / den in floating point, widened up and down by the margin that
    /// covers the roundings of 1/den and of num / den.
    inv_den_up: f64,
    inv_den_down: f64,
    /// Digits of the uniform in the first word.
    value_bits: u32,
    tail: Tail,
    /// The constant-time path's table: one record (one cache line) per
    /// alias column, holding everything a proposal from that column reads.
    columns: Vec<Column>,
    /// exp(-j / 16) for j = 0..8, rounded down (certified), in one cache
    /// line.
    exp_sixteenths: Sixteenths,
    /// 1 / den rounded to nearest (the constant-time path's delta).
    inv_den: f64,
    /// w = 2^cell_bits (a multiplication costs less than a shift by a
    /// variable count).
    width: u64,
    /// [`THETA_SLACK`] in units of the first word's digits.
    theta_slack: f64,
    /// h = floor(w / 2), the offset the Gaussian's first test expands
    /// about.
    mid: u64,
    /// A wide table's constant-time draws: the default table of the same
    /// law (built with the wide table: a field with interior mutability
    /// would cost every draw, the compiler then reloading the table's
    /// fields after each call).
    default_table: Option<Arc<CellSampler>>,
    /// Bounds on the theta the records hold a lower bound of.
    #[cfg(test)]
    record_theta: Vec<(f64, f64)>,
}

/// What one proposal of the constant-time path reads: the alias column's
/// threshold and both of its candidate items (the alias first, then the
/// column's own item) with a lower bound on their theta in units of the
/// first word's digits of the uniform, rounded down to single precision
/// (so that theta <= theta_lo (1 + [`THETA_WIDTH`]) + slack). 16 bytes a
/// column, at an address the proposal's column (uniform over the columns)
/// names, whichever item it yields: the cache sees the same access pattern
/// for every value drawn, and the default table of 512 columns takes 8 KiB.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
struct Column {
    threshold: u32,
    item: [u16; 2],
    theta_lo: [f32; 2],
}

/// theta <= theta_lo (1 + THETA_WIDTH) + THETA_SLACK 2^-52 for a record's
/// single-precision lower bound theta_lo (a rounding down by at most 2^-24
/// relative, of a certified bound within 2^-43 relative and 2^-64 of
/// theta): checked at construction (in the digits' units).
const THETA_WIDTH: f64 = 1.0 / (1u64 << 22) as f64;
const THETA_SLACK: f64 = 1.0 / 256.0;

/// Eight doubles aligned to a cache line: an index into them costs the
/// same whatever its value.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Sixteenths([f64; 8]);

/// A bound on |P - exp(-x)| for the first test's estimate P: for the
/// Laplace, x = delta in [0, 1/16) and P = S_3(x) ([`fast_exp_3`]; the
/// truncation is below 16^-4 / 4! = 6.36e-7); for the Gaussian, x =
/// delta(o) - delta(h) in (-0.14, 0.14) (the expansion about the cell's
/// middle offset h = floor(w/2), whose exp(-delta(h)) the records' theta
/// carry) and P = S_4(x) ([`fast_exp_4_less`]; truncation below e^0.14 0.14^5
/// / 5! = 5.2e-7). The roundings (x = num * (1/den): two, 2^-53 relative
/// at most, exp being 1.16-Lipschitz there; at most ten in the
/// evaluation, of numbers below 1.2) add below 1e-14: 6.36e-7 + 1e-14,
/// rounded up.
const FAST_ERROR: f64 = 6.4e-7;
/// |delta(o) - delta(h)| stays below this in every cell of a Gaussian
/// table of the default layout (checked at construction).
const FIRST_TEST_GAUSSIAN_REACH: f64 = 0.14;

/// S_3(x) = 1 - x + x^2/2 - x^3/6 (Estrin's scheme: the square beside the
/// linear terms, a shorter chain of dependent operations than Horner's).
#[allow(clippy::inline_always)]
#[inline(always)]
fn fast_exp_3(x: f64) -> f64 {
    (1.0 - x) + (x * x) * (0.5 - x * (1.0 / 6.0))
}

/// S_4(x) less [`FAST_ERROR`], as ((1 - FAST_ERROR) - x) + x^2 (1/2 -
/// x (1/6 - x/24)) (the square beside the linear terms, Horner's scheme
/// inside: eight operations, the error bound folded into the constant
/// term). For |x| < [`FIRST_TEST_GAUSSIAN_REACH`] it lies below exp(-x),
/// and adding 2 FAST_ERROR brings it above: the roundings of the folded
/// constant and of the sum (below 1e-15) are within the allowance of
/// FAST_ERROR.
#[allow(clippy::inline_always)]
#[inline(always)]
fn fast_exp_4_less(x: f64) -> f64 {
    (ONE_LESS_FAST_ERROR - x) + (x * x) * (0.5 - x * (1.0 / 6.0 - x * (1.0 / 24.0)))
}

const ONE_LESS_FAST_ERROR: f64 = 1.0 - FAST_ERROR;

/// Degree of the rare second test's polynomial: truncation below
/// 16^-8 / 8! = 5.78e-15.
const PRECISE_DEGREE: usize = 7;
/// The second test's bound, as [`FAST_ERROR`]: 5.78e-15 for the
/// truncation, below 2.2e-15 for the roundings (fifteen in Horner's
/// scheme, delta's, the table's and the product's).
const EXP_ERROR: f64 = 1e-14;

/// delta (den) = q(m) - q(c w) for the magnitude m = c w + o, exactly: o
/// for the Laplace, o (2 c w + o) for the Gaussian (below 2^51, so exact as
/// a double, and the signed conversion is one instruction).
#[inline(always)]
#[allow(clippy::inline_always)] // in the loop of `CellSampler::fill_scaled`
fn delta_num(shape: Shape, m: u64, offset: u64) -> f64 {
    (match shape {
        Shape::Laplace { .. } => offset,
        Shape::Gaussian { .. } => offset * (2 * (m - offset) + offset),
    }) as i64 as f64
}

/// Per cell, the first test of `CellSampler::accept` at the cell's last
/// offset (its largest delta), floored to an integer number of digits:
/// digits < sure iff digits + 1 <= sure <= that bound.
fn sure_digits(shape: Shape, w: u64, inv_den_up: f64, theta: &[(f64, f64)]) -> Vec<u64> {
    let last = w - 1;
    theta
        .iter()
        .enumerate()
        .map(|(c, &(theta_lo, _))| {
            let d_up = delta_num(shape, (c as u64) * w + last, last) * inv_den_up;
            ((1.0 - d_up) * theta_lo).max(0.0) as u64
        })
        .collect()
}

/// 1/k! for k = 0..7 (Horner's coefficients; each within half a unit in
/// the last place, inside the error bounds' allowance for roundings).
const INV_FACTORIAL: [f64; 8] = [1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0];

/// The record position of alias column `c` of `n` (a power of two): a
/// fixed odd multiplier, a bijection that spreads consecutive columns (a
/// heavy cell is the alias of a run of them) over the table's cache lines
/// and sets. The column a word names is uniform, so any bijection gives
/// the same law.
fn column_position(c: usize, n: usize) -> usize {
    let multiplier = ((n as f64 * 0.618_034) as usize) | 1;
    c.wrapping_mul(multiplier) & (n - 1)
}

/// The constant-time path's records: per column, its threshold, and for
/// the alias and the column's own item the item and a lower bound on its
/// theta in units of the first word's digits (the units `theta` is kept
/// in), at the column's position ([`column_position`]). The tail item
/// carries NaN (no comparison holds: the rare path), the dummy 0.
fn column_records(threshold: &[u64], alias: &[u32], theta: &[(f64, f64)], cells: u64, slack: f64) -> Vec<Column> {
    let bound = |item: u32| -> f32 {
        let Some(&(lo, hi)) = theta.get(item as usize) else {
            return if u64::from(item) == cells { f32::NAN } else { 0.0 };
        };
        // Round down to single precision (the conversion rounds to nearest).
        let mut lo32 = lo as f32;
        if f64::from(lo32) > lo {
            lo32 = lo32.next_down();
        }
        assert!(
            hi <= f64::from(lo32) * (1.0 + THETA_WIDTH) + slack,
            "cell table: theta bounds [{lo}, {hi}] wider than the record allows"
        );
        lo32
    };
    let n = threshold.len();
    let mut records = vec![Column::default(); n];
    for (c, (&t, &a)) in threshold.iter().zip(alias).enumerate() {
        records[column_position(c, n)] = Column {
            threshold: u32::try_from(t).expect("alias thresholds are at most 2^20"),
            item: [u16::try_from(a).expect("at most 4096 items"), u16::try_from(c).expect("at most 4096 columns")],
            theta_lo: [bound(a), bound(c as u32)],
        };
    }
    records
}

/// Outward-rounded product of fixed-point bounds at `p` bits.
fn mul_bounds(a: &Bounds, b: &Bounds, p: u32) -> Bounds {
    ((&a.0 * &b.0) >> p, ceil_shr(&(&a.1 * &b.1), p))
}

/// Bounds times a positive integer (exact).
fn times(a: &Bounds, k: u64) -> Bounds {
    (&a.0 * k, &a.1 * k)
}

/// Exact bounds (k, k).
fn exact(k: u128) -> Bounds {
    (BigUint::from(k), BigUint::from(k))
}

/// rho(c w) for c = 0..=cells (the last is rho(X)), at `HEAD_PREC` bits.
fn cell_heads(shape: Shape, w: u64, cells: u64) -> Vec<Bounds> {
    let p = HEAD_PREC;
    let one = BigUint::one() << p;
    let mut heads = Vec::with_capacity(cells as usize + 1);
    let mut rho: Bounds = (one.clone(), one);
    match shape {
        Shape::Laplace { t } => {
            // rho((c + 1) w) = rho(c w) exp(-w / t).
            let r = exp_neg_bounds(u128::from(w), u128::from(t), p);
            for _ in 0..=cells {
                heads.push(rho.clone());
                rho = mul_bounds(&rho, &r, p);
            }
        }
        Shape::Gaussian { var } => {
            // rho((c + 1) w) = rho(c w) a b^c with a = exp(-w^2 / (2 var)),
            // b = exp(-w^2 / var).
            let w2 = u128::from(w) * u128::from(w);
            let b = exp_neg_bounds(w2, var, p);
            let mut g = exp_neg_bounds(w2, 2 * var, p);
            for _ in 0..=cells {
                heads.push(rho.clone());
                rho = mul_bounds(&rho, &g, p);
                g = mul_bounds(&g, &b, p);
            }
        }
    }
    heads
}

/// Walker's alias table for integer weights summing to exactly
/// `weights.len()` * CAPACITY (Vose's construction, in integers: exact).
fn alias_table(mut weights: Vec<u64>) -> (Vec<u64>, Vec<u32>) {
    let n = weights.len();
    let mut threshold = vec![CAPACITY; n];
    let mut alias: Vec<u32> = (0..n as u32).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| weights[i] < CAPACITY);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        threshold[s] = weights[s];
        alias[s] = l as u32;
        weights[l] -= CAPACITY - weights[s];
        if weights[l] < CAPACITY {
            large.pop();
            small.push(l);
        }
    }
    assert!(small.is_empty(), "alias table: the weights do not sum to the capacity");
    (threshold, alias)
}

/// How the magnitudes are cut into cells: scale / w in
/// [2^scale_bits, 2^(scale_bits + 1)), and at most `max_cells` cells,
/// reaching past 40 t for the Laplace and `gaussian_reach_halves` / 2
/// sigma for the Gaussian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    scale_bits: u32,
    max_cells: u64,
    gaussian_reach_halves: u64,
}

/// The default layout: at most 510 cells (with the tail and the dummy, 512
/// columns: an 8 KiB table of [`Column`] records, a quarter of a 32 KiB
/// first-level cache, so that other data evict its lines rarely and alike;
/// a 32 KiB table measurably did not: the time of a proposal depended on
/// the cache set of its column), of width about scale / 16 for the
/// Laplace (delta < 1/16 in a cell: the first test needs no table) and
/// scale / 32 for the Gaussian. The cells reach past 16 t (the tail then
/// weighs below e^-16 = 1.1e-7) and past min(8.5 sigma, 7.9 sigma) (below
/// e^-31); 8.5 sigma keeps |delta(o) - delta(h)| below
/// [`FIRST_TEST_GAUSSIAN_REACH`] (w X / (2 var) <= 8.5 / 64 in a cell of
/// width w <= sigma / 32), where four Taylor terms suffice.
pub(crate) const COMPACT: Layout = Layout { scale_bits: 4, max_cells: 510, gaussian_reach_halves: 24 };
const COMPACT_GAUSSIAN: Layout = Layout { scale_bits: 5, max_cells: 510, gaussian_reach_halves: 17 };
/// The wide layout: cells of about scale / 32 up to 40 t or 12 sigma (up
/// to 4096 columns, 64 KiB): the table the branching path was tuned on,
/// kept as the reference of the benchmarks and the timing audit. It has
/// no records of its own: its constant-time draws are the default
/// table's of the same law.
const WIDE: Layout = Layout { scale_bits: 5, max_cells: u64::MAX, gaussian_reach_halves: 24 };
/// Column bits of the default layout's tables (512 columns).
const COMPACT_COLUMN_BITS: u32 = 9;
/// The default layout's word: column on top, then threshold, sign.
const COMPACT_COLUMN_SHIFT: u32 = 64 - COMPACT_COLUMN_BITS;
const COMPACT_THRESHOLD_SHIFT: u32 = COMPACT_COLUMN_SHIFT - THRESHOLD_BITS;
const COMPACT_SIGN_MASK: u64 = 1 << (COMPACT_THRESHOLD_SHIFT - 1);

impl CellSampler {
    /// The sampler of `shape` (t >= 1; 1 <= var <= 2^50).
    pub fn new(shape: Shape) -> Self {
        Self::with_reach(shape, None)
    }

    /// The sampler of `shape` on the wide layout (cells of about scale / 32
    /// up to 40 t or 12 sigma, up to 4096 columns): the same law, the table
    /// the branching path ([`CellSampler::sample_branching`]) was tuned on;
    /// the reference of the benchmarks and the timing audit.
    pub fn wide(shape: Shape) -> Self {
        Self::with_layout(shape, WIDE, None)
    }

    /// The sampler with its cells up to about `reach` (default: see
    /// [`COMPACT`]): any reach gives the same law; tests shorten it to
    /// exercise the tail.
    pub(crate) fn with_reach(shape: Shape, reach: Option<u64>) -> Self {
        let layout = match shape {
            Shape::Laplace { .. } => COMPACT,
            Shape::Gaussian { .. } => COMPACT_GAUSSIAN,
        };
        Self::with_layout(shape, layout, reach)
    }

    #[allow(clippy::too_many_lines)] // one construction, step by step
    pub(crate) fn with_layout(shape: Shape, layout: Layout, reach: Option<u64>) -> Self {
        let scale = match shape {
            Shape::Laplace { t } => {
                assert!(t >= 1, "discrete Laplace scale must be >= 1");
                t
            }
            Shape::Gaussian { var } => {
                assert!((1..=MAX_GAUSSIAN_VAR).contains(&var), "discrete Gaussian variance {var} outside [1, 2^50]");
                isqrt(var) as u64
            }
        };
        let cell_bits = scale.ilog2().saturating_sub(layout.scale_bits);
        let w = 1u64 << cell_bits;
        let cells = match reach {
            Some(reach) => reach.div_ceil(w),
            None => match shape {
                Shape::Laplace { t } => (40 * t).div_ceil(w),
                Shape::Gaussian { .. } => (layout.gaussian_reach_halves * (scale + 1)).div_ceil(2 * w),
            }
            .min(layout.max_cells),
        };
        let items = cells + 2; // the cells, the tail, the dummy
                               // The default layout always takes COMPACT_COLUMN_BITS (so that the
                               // constant-time path's shifts are constants).
        let column_bits = if layout == WIDE { items.next_power_of_two().ilog2().max(1) } else { COMPACT_COLUMN_BITS };
        assert!(items <= 1 << column_bits, "cell table: {items} items exceed the alias columns");
        assert!(column_bits <= MAX_COLUMN_BITS, "cell table: {items} items exceed the alias columns");
        let columns = 1u64 << column_bits;
        let total = u128::from(columns) << THRESHOLD_BITS;

        let heads = cell_heads(shape, w, cells);
        let start = cells * w;
        let tail_scale = match shape {
            Shape::Laplace { t } => t,
            Shape::Gaussian { var } => var.div_ceil(u128::from(start)) as u64,
        };
        let p = HEAD_PREC;
        let e = exp_neg_bounds(1, u128::from(tail_scale), p);
        let one = BigUint::one() << p;
        // 1 - exp(-1/t') in fixed point, and the tail's mass per unit F
        // over w, rho(X) / (w (1 - r)), as bounds at p bits.
        let one_minus_r: Bounds = (&one - &e.1, &one - &e.0);
        let tail_mass = ratio_bounds(&heads[cells as usize], i64::from(p), &times(&one_minus_r, w));

        // F: the cells' and tail's weights fill the table up to 2^-10
        // (the dummy), less the rounding up of each weight.
        let approx_sum: f64 = heads[..cells as usize].iter().map(|h| to_f64_bound(&h.1, p, true)).sum::<f64>()
            + to_f64_bound(&tail_mass.1, p, true);
        let room = (total - 2 * u128::from(items)) as f64 * (1.0 - 1.0 / 1024.0);
        let target = room / approx_sum;
        let factor_exp = i64::from(target.log2().floor() as i32) - 15;
        let mut factor_mant = (target / 2f64.powi(factor_exp as i32)) as u64;
        let (weight, tail_weight) = loop {
            // W = ceil(F x) from the upper bound of x (at p bits).
            let up = |x: &Bounds| -> u64 {
                let w = ratio_bounds(&times(x, factor_mant), factor_exp - i64::from(p), &exact(1)).1;
                u64::try_from(w).expect("cell weight fits 64 bits").max(1)
            };
            let weight: Vec<u64> = heads[..cells as usize].iter().map(up).collect();
            let tail_weight = up(&tail_mass);
            let sum: u128 = weight.iter().map(|&x| u128::from(x)).sum::<u128>() + u128::from(tail_weight);
            if sum <= total {
                break (weight, tail_weight);
            }
            factor_mant -= factor_mant / 64; // not reached: the room leaves a margin
        };
        let used: u128 = weight.iter().map(|&x| u128::from(x)).sum::<u128>() + u128::from(tail_weight);
        let mut table_weights = weight.clone();
        table_weights.push(tail_weight);
        table_weights.push(u64::try_from(total - used).expect("dummy weight fits 64 bits"));
        table_weights.resize(columns as usize, 0);
        let (threshold, alias) = alias_table(table_weights);

        // theta_c = F rho(c w) / W_c, certified, at 64 bits then as doubles,
        // with the margin and in units of the uniform's known digits.
        let offset_shift = 64 - column_bits - THRESHOLD_BITS - 1 - cell_bits;
        let value_bits = offset_shift;
        assert!(value_bits >= 8, "cell table: {value_bits} digits left for the uniform");
        let digit_scale = (1u64 << value_bits) as f64;
        let theta: Vec<(f64, f64)> = heads[..cells as usize]
            .iter()
            .zip(&weight)
            .map(|(h, &wc)| {
                let b = ratio_bounds(&times(h, factor_mant), factor_exp + 64 - i64::from(p), &exact(u128::from(wc)));
                let (lo, hi) = (to_f64_bound(&b.0, 64, false), to_f64_bound(&b.1, 64, true).min(1.0));
                (lo * (1.0 - MARGIN) * digit_scale, hi * (1.0 + MARGIN) * digit_scale)
            })
            .collect();
        let inv_den = 1.0 / shape.exponent_den() as f64;
        let inv_den_up = inv_den * (1.0 + DELTA_MARGIN);
        let sure = sure_digits(shape, w, inv_den_up, &theta);
        let theta_slack = THETA_SLACK * 2f64.powi(value_bits as i32 - CLOSE_BITS as i32);
        // The records' theta: theta_c for the Laplace; theta_c exp(-delta(h))
        // for the Gaussian, whose first test expands exp(-delta) about the
        // cell's middle offset h = floor(w/2) (delta(h) = h (2 c w + h) /
        // (2 var)), bounded outward; h = 0 in cells of one magnitude (w =
        // 1, where delta is 0).
        let mid = w / 2;
        let record_theta: Vec<(f64, f64)> = match shape {
            Shape::Laplace { .. } => theta.clone(),
            Shape::Gaussian { var } => theta
                .iter()
                .enumerate()
                .map(|(c, &(lo, hi))| {
                    let (c, w, h) = (c as u128, u128::from(w), u128::from(mid));
                    let e = exp_neg_bounds(h * (2 * c * w + h), 2 * var, 64);
                    let (e_lo, e_hi) = (to_f64_bound(&e.0, 64, false), to_f64_bound(&e.1, 64, true));
                    (lo * e_lo * (1.0 - f64::EPSILON), hi * e_hi * (1.0 + f64::EPSILON))
                })
                .collect(),
        };
        // The wide layout has no constant-time path of its own (see
        // `constant_time_impl`).
        let columns = if layout == WIDE {
            Vec::new()
        } else {
            column_records(&threshold, &alias, &record_theta, cells, theta_slack)
        };
        // The constant-time path's delta stays below 1/16 in every cell of
        // a Laplace table (its first test has no table) and below 7.5/16
        // in a Gaussian's (its exp(-j / 16) table has eight entries):
        // delta at the last offset of the last cell is the largest.
        let last = (cells - 1) * w + (w - 1);
        let largest = delta_num(shape, last, w - 1) * inv_den_up;
        assert!(largest < 0.5 * (1.0 - 1e-9), "cell table: delta reaches {largest}");
        // The first test's argument: delta < 1/16 for the Laplace; for the
        // Gaussian delta(o) - delta(h), largest in absolute value at the
        // last cell's ends.
        let reach_of_first_test = match shape {
            Shape::Laplace { .. } => largest,
            Shape::Gaussian { .. } => {
                let c = cells - 1;
                // (o - h) (2 m - (o - h)) at m = c w + o.
                let num = |o: u64| (o as f64 - mid as f64) * ((2 * (c * w + o) + mid - o) as f64);
                num(0).abs().max(num(w - 1).abs()) * inv_den_up
            }
        };
        let limit = if matches!(shape, Shape::Laplace { .. }) { 1.0 / 16.0 } else { FIRST_TEST_GAUSSIAN_REACH };
        assert!(
            layout == WIDE || reach_of_first_test < limit * (1.0 - 1e-9),
            "cell table: the first test's argument reaches {reach_of_first_test}"
        );
        let exp_sixteenths =
            Sixteenths(std::array::from_fn(|j| to_f64_bound(&exp_neg_bounds(j as u128, 16, 64).0, 64, false)));
        CellSampler {
            shape,
            cell_bits,
            cells,
            column_shift: 64 - column_bits,
            threshold_shift: 64 - column_bits - THRESHOLD_BITS,
            offset_shift,
            sign_mask: 1 << (63 - column_bits - THRESHOLD_BITS),
            offset_mask: (1 << cell_bits) - 1,
            value_mask: (1 << value_bits) - 1,
            threshold,
            outcome: alias.iter().enumerate().flat_map(|(c, &a)| [a, c as u32]).collect(),
            theta,
            sure,
            weight,
            factor_mant,
            factor_exp,
            inv_den_up,
            inv_den_down: inv_den * (1.0 - DELTA_MARGIN),
            value_bits,
            tail: Tail { start, scale: tail_scale, weight: tail_weight },
            columns,
            exp_sixteenths,
            inv_den,
            width: w,
            theta_slack,
            mid,
            default_table: (layout == WIDE).then(|| shared_sampler(shape)),
            #[cfg(test)]
            record_theta,
        }
    }

    /// The law this sampler draws from.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// One draw from the exact law, by the constant-time path
    /// ([`CellSampler::sample_constant_time`]).
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        self.sample_constant_time(rng)
    }

    /// Independent draws times `step` into `out` (one call for a whole
    /// noise value: the table's fields stay in registers across draws).
    pub fn fill_scaled<R: RngCore + ?Sized>(&self, rng: &mut R, step: f64, out: &mut [f64]) {
        for v in out.iter_mut() {
            *v = self.sample_constant_time(rng) as f64 * step;
        }
    }

    /// One draw by the branching path: the same law, fewer generator words
    /// (one a proposal, a second only when the first digits do not decide)
    /// and shortcuts whose use depends on the cell and offset drawn, so its
    /// running time depends on the value. Kept as the reference the
    /// constant-time path is benchmarked and timed against.
    pub fn sample_branching<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        self.sample_impl::<R, false>(rng)
    }

    /// One draw whose running time does not depend on the value drawn,
    /// except on rare events whose probability does not depend on it
    /// either (below).
    ///
    /// A proposal draws one generator word and does the same work whatever
    /// it proposes: it reads the one record of its alias column (a uniform
    /// address: [`Column`]; the default tables have 512 columns, 8 KiB, and
    /// fixed bit positions for the column, threshold and sign), selects the
    /// candidate item, sign, offset and the first b digits of the uniform u
    /// (b = 34 - offset bits: 18 to 20 for the lattice releases' laws)
    /// without branches, and compares u with the lower bound theta_lo (P -
    /// E) on the acceptance probability theta_c exp(-delta), where P is a
    /// Taylor sum (degree 3 in delta for the Laplace; for the Gaussian,
    /// degree 4 in delta - delta(h) about the cell's middle offset h, the
    /// records' theta carrying exp(-delta(h))) that errs by at most E =
    /// [`FAST_ERROR`]. Accepted when u's b digits lie below the lower
    /// bound. Otherwise (work done on rejected proposals only, which are
    /// independent of the value finally accepted) rejected, a new
    /// proposal, when they lie above the upper bound (theta_lo (1 +
    /// [`THETA_WIDTH`]) + slack) (P + E), and on the dummy item and on -0.
    /// The number of proposals is geometric and independent of the value
    /// accepted (the proposals are independent and identically
    /// distributed), so the time of a draw is that of its rejected
    /// proposals, independent of the value, plus the fixed cost of the
    /// accepted one, but for:
    /// - u's b-digit interval straddling the bounds: probability below
    ///   2^-b + 2E + 2^-21 a proposal, whatever is proposed (an interval of
    ///   width 2^-b meets a point with that probability). For the proposal
    ///   that is accepted it is about 2^-(b+1) / a, a = theta_c
    ///   exp(-delta) >= 0.6 theta_c its acceptance probability, so it
    ///   depends on the value only through a (theta_c > 1 - 2^-10 but in
    ///   the far cells, which hold less than 2^-10 of the law): what the
    ///   timing can tell about the value rests on an event of probability
    ///   about 2^-b (b = 18: 3.8e-6) a draw. Then a second word gives 52
    ///   digits, compared with bounds from a degree-7 estimate (error
    ///   [`EXP_ERROR`]) and the double-precision theta, which decide
    ///   except with probability below 2^-40 a proposal (then the exact
    ///   digit-by-digit comparison, as in the branching path);
    /// - the tail item (probability below e^-16 = 1.1e-7 for the Laplace,
    ///   whose cells reach past 16 t, and e^-31 for the Gaussian), which
    ///   tells that the value lies beyond the cells.
    ///
    /// What the cache adds: the record's address is the column's, and a
    /// value's columns are fixed, so a column whose cache line other data
    /// evict more often than the rest is slower for the values it yields.
    /// A table a quarter of the first-level cache keeps these evictions
    /// rare, and spreading the columns of each item over the table
    /// ([`column_position`]) averages what remains over many lines.
    ///
    /// On a table of the wide layout ([`CellSampler::wide`]), which has no
    /// such path of its own, the draw is the default table's of the same
    /// law (the same law, and the same guarantee).
    ///
    /// The law is the branching path's: the same items and the same
    /// acceptance probabilities, decided exactly.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn sample_constant_time<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        // One branch on the law (the same for every draw of this table).
        match self.shape {
            Shape::Laplace { .. } => self.constant_time_impl::<R, false, false>(rng),
            Shape::Gaussian { .. } => self.constant_time_impl::<R, true, false>(rng),
        }
    }

    /// `GAUSSIAN`: the law's shape (so that the proposal's arithmetic is
    /// that of one law, with no selection between the two).
    /// `FORCE_EXACT`: every in-cell proposal decided by the exact
    /// comparison (tests of that path).
    ///
    /// Only the accepted proposal's work has to be the same whatever it
    /// yields: the proposals rejected before it are independent of it (and
    /// of one another), so the work that tells a rejection from the rare
    /// path is done after the acceptance test, on rejected proposals only.
    // Non-short-circuit `&`, `|` on booleans on purpose: flag arithmetic,
    // where `&&`, `||` would add branches on what was proposed.
    #[allow(clippy::inline_always, clippy::needless_bitwise_bool)]
    #[inline(always)]
    pub(crate) fn constant_time_impl<R: RngCore + ?Sized, const GAUSSIAN: bool, const FORCE_EXACT: bool>(
        &self,
        rng: &mut R,
    ) -> i64 {
        // A table of the default layout (a wide one has no records: it
        // draws from the default table of its law); the fixed length also
        // spares the index its bounds check.
        let Ok(columns) = <&[Column; 1 << COMPACT_COLUMN_BITS]>::try_from(self.columns.as_slice()) else {
            return self.constant_time_by_default_table::<R, GAUSSIAN, FORCE_EXACT>(rng);
        };
        loop {
            let word = rng.next_u64();
            let record = &columns[(word >> COMPACT_COLUMN_SHIFT) as usize];
            let keep = usize::from((word >> COMPACT_THRESHOLD_SHIFT) & (CAPACITY - 1) < u64::from(record.threshold));
            let item = u64::from(record.item[keep]);
            let offset = (word >> self.offset_shift) & self.offset_mask;
            let m = item * self.width + offset;
            // The first test's estimate of exp(-x): x = delta = o / t for
            // the Laplace; x = delta(o) - delta(h) = d (2 m - d) / den, d =
            // o - h, for the Gaussian (the numerator an integer below 2^52
            // in absolute value: exact as a double).
            // The Gaussian's p is the estimate less its error bound (a lower
            // bound on exp(-x), one operation fewer: see `fast_exp_4_less`).
            let p = if GAUSSIAN {
                let d = offset as i64 - self.mid as i64;
                fast_exp_4_less((d * (2 * m as i64 - d)) as f64 * self.inv_den)
            } else {
                fast_exp_3(offset as i64 as f64 * self.inv_den)
            };
            let theta = f64::from(record.theta_lo[keep]);
            let negative = word & COMPACT_SIGN_MASK != 0;
            let digits = word & self.value_mask;
            // Only item 0 holds m = 0.
            let negative_zero = (m == 0) & negative;
            // The tail's theta is NaN and the dummy's 0 (and p is finite):
            // neither is accepted. u + 1 added before the conversion (the
            // same value: both are exact below 2^52).
            let below = if GAUSSIAN { p } else { p - FAST_ERROR };
            let accept = !FORCE_EXACT & !negative_zero & ((digits + 1) as i64 as f64 <= theta * below);
            if accept {
                // The sign by a mask, not a branch (it is a coin flip).
                let mask = -i64::from(negative);
                return (m as i64 ^ mask) - mask;
            }
            let above = if GAUSSIAN { p + 2.0 * FAST_ERROR } else { p + FAST_ERROR };
            let upper = (theta * (1.0 + THETA_WIDTH) + self.theta_slack) * above;
            // Not rejected: the tail (NaN compares false), and a uniform
            // whose first digits straddle the bounds.
            let u = digits as i64 as f64; // exact: below 2^52
            let reject = (item > self.cells) | negative_zero | (!FORCE_EXACT & (u >= upper));
            if !reject {
                if let Some(y) = self.constant_time_rare::<R, FORCE_EXACT>(rng, item, m, offset, negative, digits) {
                    return y;
                }
            }
        }
    }

    /// A constant-time draw of a wide table: the default table's of the
    /// same law.
    #[cold]
    #[inline(never)]
    fn constant_time_by_default_table<R: RngCore + ?Sized, const GAUSSIAN: bool, const FORCE_EXACT: bool>(
        &self,
        rng: &mut R,
    ) -> i64 {
        match &self.default_table {
            Some(table) => table.constant_time_impl::<R, GAUSSIAN, FORCE_EXACT>(rng),
            // Every table without records has one; the shared one otherwise.
            None => shared_sampler(self.shape).constant_time_impl::<R, GAUSSIAN, FORCE_EXACT>(rng),
        }
    }

    /// exp(-delta) for delta = num / den in [0, 1/2): exp(-j/16)
    /// S_DEGREE(r), j = floor(16 delta), r = delta - j/16 in [0, 1/16)
    /// (exact: Sterbenz), within [`EXP_ERROR`] for [`PRECISE_DEGREE`] (the
    /// rare path's second test).
    /// Branch-free; an index past the table (a dummy item's meaningless
    /// delta) is masked.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn exp_neg_estimate<const DEGREE: usize>(&self, num: f64) -> f64 {
        let delta = num * self.inv_den;
        // A mask, not a clamp (a clamp compiles to branches taken according
        // to delta, and so to the value): delta < 1/2 in every cell, so the
        // mask changes nothing there.
        let j = ((delta * 16.0) as i64 as usize) & 7;
        let r = delta - j as f64 * 0.0625;
        let mut s = INV_FACTORIAL[DEGREE];
        for k in (1..DEGREE).rev() {
            s = INV_FACTORIAL[k] - r * s;
        }
        self.exp_sixteenths.0[j] * (1.0 - r * s)
    }

    /// The rare ends of a constant-time proposal: the tail item, and a
    /// uniform whose first digits straddle the bounds (then 52 digits
    /// against the double-precision bounds on theta, and the exact
    /// comparison when those too straddle them).
    #[cold]
    #[inline(never)]
    fn constant_time_rare<R: RngCore + ?Sized, const FORCE_EXACT: bool>(
        &self,
        rng: &mut R,
        item: u64,
        m: u64,
        offset: u64,
        negative: bool,
        digits: u64,
    ) -> Option<i64> {
        if item == self.cells {
            return self.tail_draw(rng);
        }
        let num = delta_num(self.shape, m, offset);
        let p = self.exp_neg_estimate::<PRECISE_DEGREE>(num);
        let more = CLOSE_BITS - self.value_bits;
        let digits = (digits << more) | (rng.next_u64() >> (64 - more));
        let u = digits as i64 as f64;
        let scale = (1u64 << more) as f64;
        let (theta_lo, theta_hi) = self.theta[item as usize];
        if !FORCE_EXACT {
            if u + 1.0 <= theta_lo * scale * (p - EXP_ERROR) {
                return Some(signed(m, negative));
            }
            if u >= theta_hi * scale * (p + EXP_ERROR) {
                return None;
            }
        }
        self.accept_exactly(rng, item as usize, m, digits).then(|| signed(m, negative))
    }

    /// `FORCE_SLOW`: every in-cell acceptance by the exact digit-by-digit
    /// path (tests of that path). Always inlined, so that a loop of draws
    /// ([`CellSampler::fill_scaled`]) loads the table's fields once.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn sample_impl<R: RngCore + ?Sized, const FORCE_SLOW: bool>(&self, rng: &mut R) -> i64 {
        loop {
            let word = rng.next_u64();
            let column = (word >> self.column_shift) as usize;
            let keep = (word >> self.threshold_shift) & (CAPACITY - 1) < self.threshold[column];
            let item = u64::from(self.outcome[2 * column + usize::from(keep)]);
            if item < self.cells {
                let negative = word & self.sign_mask != 0;
                let offset = (word >> self.offset_shift) & self.offset_mask;
                let m = (item << self.cell_bits) + offset;
                if is_negative_zero(m, negative) {
                    continue;
                }
                let digits = word & self.value_mask;
                if self.accept::<R, FORCE_SLOW>(rng, item as usize, offset, m, digits) {
                    // m < X (at most 40 t or 12 sigma + 12): no saturation
                    // to apply, as `signed` does for the tail.
                    // The sign by a mask, not a branch (it is a coin flip).
                    let mask = -i64::from(negative);
                    return (m as i64 ^ mask) - mask;
                }
            } else if item == self.cells {
                if let Some(y) = self.tail_draw(rng) {
                    return y;
                }
            }
            // The dummy item: draw again.
        }
    }

    /// u < theta_c exp(-delta) for the uniform whose first `value_bits`
    /// digits are `digits`.
    #[allow(clippy::inline_always)] // see `sample_impl`
    #[inline(always)]
    fn accept<R: RngCore + ?Sized, const FORCE_SLOW: bool>(
        &self,
        rng: &mut R,
        cell: usize,
        offset: u64,
        m: u64,
        digits: u64,
    ) -> bool {
        // The first test below is monotone in the offset (rounding is
        // monotone), so passing it at the cell's last offset (`sure`,
        // computed with the same operations) implies passing it here: the
        // same decision, and no word more or less, for most draws.
        if !FORCE_SLOW && digits < self.sure[cell] {
            return true;
        }
        let num = delta_num(self.shape, m, offset);
        // First test, a short chain of operations: 1 - delta <= exp(-delta),
        // with delta bounded above; it accepts all but about delta^2 / 2 of
        // the draws that the exact comparison accepts.
        let (theta_lo, theta_hi) = self.theta[cell];
        let d_up = num * self.inv_den_up;
        if !FORCE_SLOW && (digits + 1) as i64 as f64 <= (1.0 - d_up) * theta_lo {
            return true;
        }
        self.accept_closer::<R, FORCE_SLOW>(rng, cell, m, digits, (theta_lo, theta_hi), num)
    }

    /// The second test, on 52 digits of u (the first word's and the top of
    /// a new word's; the rest of that word is never looked at, so the exact
    /// comparison can take fresh words as further digits): Taylor bounds
    /// S_3 <= exp(-x) <= S_2 for x >= 0, both decreasing on [0, 1]. Then
    /// the exact comparison.
    #[inline(never)]
    fn accept_closer<R: RngCore + ?Sized, const FORCE_SLOW: bool>(
        &self,
        rng: &mut R,
        cell: usize,
        m: u64,
        digits: u64,
        (theta_lo, theta_hi): (f64, f64),
        num: f64,
    ) -> bool {
        let more = CLOSE_BITS - self.value_bits;
        let digits = (digits << more) | (rng.next_u64() >> (64 - more));
        let scale = (1u64 << more) as f64; // exact: theta's units to 2^-52
        let (d_up, d_down) = (num * self.inv_den_up, num * self.inv_den_down);
        let s3 = 1.0 - d_up * (1.0 - d_up * (0.5 - d_up * (1.0 / 6.0)));
        let s2 = 1.0 - d_down * (1.0 - 0.5 * d_down);
        if !FORCE_SLOW {
            if (digits + 1) as f64 <= theta_lo * scale * s3 {
                return true;
            }
            if digits as f64 >= theta_hi * scale * s2 {
                return false;
            }
        }
        self.accept_exactly(rng, cell, m, digits)
    }

    /// The exact comparison: further digits of u against certified bounds
    /// on F rho(m) / W_c.
    #[cold]
    fn accept_exactly<R: RngCore + ?Sized>(&self, rng: &mut R, cell: usize, m: u64, digits: u64) -> bool {
        let (num, den) = (self.shape.exponent_num(u128::from(m)), self.shape.exponent_den());
        let wc = exact(u128::from(self.weight[cell]));
        uniform_below(rng, digits, CLOSE_BITS, |prec| {
            let rho = exp_neg_bounds(num, den, prec + 64);
            ratio_bounds(&times(&rho, self.factor_mant), self.factor_exp - 64, &wc)
        })
    }

    /// The tail item: `None` when the draw is rejected.
    #[cold]
    fn tail_draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> Option<i64> {
        let Tail { start, scale, weight } = self.tail;
        let (num, den) = (self.shape.exponent_num(u128::from(start)), self.shape.exponent_den());
        let w = 1u64 << self.cell_bits;
        let first = rng.next_u64();
        // Accept with probability F rho(X) / (w (1 - r) W_T).
        let take = uniform_below(rng, first, 64, |prec| {
            let p = prec + 64;
            let rho = times(&exp_neg_bounds(num, den, p), self.factor_mant);
            let e = exp_neg_bounds(1, u128::from(scale), p);
            let one = BigUint::one() << p;
            let one_minus_r: Bounds = (&one - &e.1, &one - &e.0);
            let denominator = times(&one_minus_r, w.checked_mul(weight).expect("tail denominator fits 64 bits"));
            // rho 2^-p F / (w W_T (1 - r) 2^-p), at prec bits.
            ratio_bounds(&rho, self.factor_exp + i64::from(prec), &denominator)
        });
        if !take {
            return None;
        }
        let (g, _) = two_sided_geometric::<R, false>(rng, scale);
        if let Shape::Gaussian { var } = self.shape {
            // Accept with exp(-((2 X G + G^2) / (2 var) - G / t')) <= 1.
            let (x, g, t) = (u128::from(start), u128::from(g), u128::from(scale));
            let excess = g
                .checked_mul(2 * x)
                .and_then(|a| a.checked_add(g.checked_mul(g)?))
                .and_then(|a| a.checked_mul(t))
                .and_then(|a| a.checked_sub(2 * var * g));
            let Some(excess) = excess else {
                return None; // G > 2^40: documented departure
            };
            if !bernoulli_exp_neg(rng, excess, 2 * var * t) {
                return None;
            }
        }
        let m = start.checked_add(g)?;
        Some(signed(m, rng.next_u64() & 1 == 1))
    }
}

/// Samplers kept per thread (a learner uses one or two laws).
const CACHE_SIZE: usize = 16;

thread_local! {
    static CACHE: RefCell<Vec<(Shape, Arc<CellSampler>)>> = const { RefCell::new(Vec::new()) };
}

/// `f` applied to the sampler of `shape`, looked up in this thread's
/// cache, which takes its tables from [`shared_sampler`] (so each law is
/// built once per process, not once per thread). A hit runs `f` under the
/// cache's shared borrow (no reference count traffic: this is paid per
/// released value); a miss caches the table unless an enclosing call holds
/// the cache (nested calls for the two laws of a symmetric matrix).
#[inline]
pub fn with_sampler<T>(shape: Shape, f: impl FnOnce(&CellSampler) -> T) -> T {
    CACHE.with(|cache| {
        let hit = cache.borrow();
        if let Some((_, sampler)) = hit.iter().find(|(s, _)| *s == shape) {
            return f(sampler);
        }
        drop(hit);
        let table = shared_sampler(shape);
        if let Ok(mut cache) = cache.try_borrow_mut() {
            cache.insert(0, (shape, Arc::clone(&table)));
            cache.truncate(CACHE_SIZE);
        }
        f(&table)
    })
}

/// Laws kept by [`shared_sampler`] (holders keep theirs past eviction).
const SHARED_SIZE: usize = 64;

static SHARED: Mutex<Vec<(Shape, Arc<CellSampler>)>> = Mutex::new(Vec::new());

/// The sampler of `shape`, built once per law and process (construction
/// costs far more than a draw). Owners that draw one value at a time (a
/// scalar counter draws once a round) keep the handle, where the per-draw
/// thread-local lookup of [`with_sampler`] would cost about as much as
/// the draw.
pub fn shared_sampler(shape: Shape) -> Arc<CellSampler> {
    // A poisoned lock only means another thread panicked while holding
    // it; the list of built tables is still sound.
    let mut shared = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, sampler)) = shared.iter().find(|(s, _)| *s == shape) {
        return Arc::clone(sampler);
    }
    let built = Arc::new(CellSampler::new(shape));
    shared.insert(0, (shape, Arc::clone(&built)));
    shared.truncate(SHARED_SIZE);
    built
}

/// One discrete Laplace draw with integer scale `t` >= 1 (0 is read as 1):
/// P[Y = y] = (1 - e^{-1/t}) / (1 + e^{-1/t}) * exp(-|y| / t), from the
/// cached cell table of that law ([`with_sampler`]).
pub fn discrete_laplace<R: RngCore + ?Sized>(rng: &mut R, t: u64) -> i64 {
    with_sampler(Shape::Laplace { t: t.max(1) }, |s| s.sample(rng))
}

/// One discrete Gaussian draw with integer variance parameter `var`
/// (1 <= var <= 2^50; 0 is read as 1): P[Y = y] ∝ exp(-y^2 / (2 var)),
/// from the cached cell table of that law ([`with_sampler`]).
pub fn discrete_gaussian<R: RngCore + ?Sized>(rng: &mut R, var: u128) -> i64 {
    let var = var.max(1);
    assert!(var <= MAX_GAUSSIAN_VAR, "discrete Gaussian variance {var} exceeds 2^50");
    with_sampler(Shape::Gaussian { var }, |s| s.sample(rng))
}

#[cfg(test)]
mod test;
