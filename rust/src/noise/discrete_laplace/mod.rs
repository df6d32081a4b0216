//! The exact discrete Laplace law by von Neumann's exponential: the
//! reference sampler the cell tables ([`super::cell_sampler`]) are tested
//! against, and the two-sided geometric their tail draws from.
//!
//! Discrete Laplace with integer scale t >= 1 (0 is read as 1),
//! P[Y = y] ∝ exp(-|y|/t) (the law of Canonne, Kamath & Steinke 2020, "The
//! discrete Gaussian for differential privacy"): |Y| = floor(t E) with
//! E ~ Exp(1) by von Neumann's (1951) method (E = K + U_1: K rejected
//! trials, U_1 the first uniform of the accepted descending run), a sign
//! bit, (negative, 0) rejected. Every decision is an integer comparison of
//! exact uniform bits, with no floating point (Mironov 2012; see
//! [`super::lattice`]).
//!
//! Uniforms are revealed lazily ([`super::uniform`]): one 64-bit word holds
//! the 12-bit heads of five uniforms; a von Neumann trial compares heads
//! with flag arithmetic (no branch), and only a tie between heads the run
//! reaches (chance below 2^-10) or a run of 5 or more sends the trial to
//! the general path, which draws further digits (64-bit words) until every
//! comparison is decided. The heads a von Neumann run never examined are
//! still independent uniform digits, and serve as U_1's next digits: the
//! integer part floor(t U_1) reads further digits only when the known ones
//! cannot settle it (chance about t / 2^48 or t / 2^24). At t ~ 2^20 a draw
//! takes about 1.6 generator words; CKS Alg. 2 (uniform in [0, t) accepted
//! with probability exp(-U/t), then a geometric number of
//! Bernoulli(exp(-1))) needs more words and more branches even with the
//! same fast Bernoulli draws.
//!
//! Departure from exactness (probability below 2^-100): a magnitude of 2^63
//! or more (E >= 2^63/t, probability below exp(-2^37) for t <= 2^26) is
//! saturated to i64::MAX.

use rand_core::RngCore;

use super::uniform::{floor_mul_words, heads, lazy_less, LazyUniform, HEAD_BITS};

/// The magnitude and sign bit of a two-sided geometric draw with
/// P[|Y| = m] ∝ exp(-m/t), before the rejection of (negative, 0).
///
/// |Y| = floor(t E) for E ~ Exp(1), since P[floor(t E) >= m] = exp(-m/t).
/// E = K + U_1 by von Neumann (1951): a trial draws a descending run
/// U_1 > U_2 > ... > U_N (ended by the first U_{N+1} > U_N) and is
/// accepted when N is odd (probability exp(-U_1) given U_1); K counts the
/// rejected trials (P[K >= k] = exp(-k)) and U_1 of the accepted trial has
/// density ∝ exp(-u) on [0, 1). Then floor(t E) = t K + floor(t U_1)
/// exactly. A trial is one word: five 12-bit heads and the sign in bit 0;
/// no branch but the accept/reject one unless the run meets a tie between
/// heads (chance below 2^-10) or reaches 5 (chance 1/120). The heads the
/// run did not look at (not even for a tie test, so they are still
/// independent uniform digits given everything decided) are further
/// digits of U_1: for N = 1 (U_2 > U_1) the last three
/// (U_1 known to 48 digits), for N = 3 the last one (24 digits), so that
/// floor(t U_1) = floor(t D / 2^P) for the P known digits D unless
/// (t D mod 2^P) + t > 2^P (chance t/2^P); only then are further digits
/// drawn ([`floor_mul_words`]: floor(t U_1) = (t D + floor(t T)) >> P with
/// U_1 = (D + T) / 2^P, T uniform).
#[allow(clippy::needless_bitwise_bool)] // branch-free flags, as in `bernoulli_exp_neg_frac`
#[inline]
pub(crate) fn two_sided_geometric<R: RngCore + ?Sized, const SLOW_ONLY: bool>(rng: &mut R, t: u64) -> (u64, bool) {
    let mut k: u64 = 0;
    loop {
        let w = rng.next_u64();
        let h = heads(w);
        let [a, b, c, d, e] = h;
        let (d1, d2, d3, d4) = (a > b, b > c, c > d, d > e);
        // Only ties the run reaches count: the heads after the run's end
        // must stay untouched uniform digits (they become U_1's digits).
        let slow = (a == b) | (d1 & ((b == c) | (d2 & ((c == d) | (d3 & ((d == e) | d4))))));
        let frac = if SLOW_ONLY || slow {
            let Some(mut u1) = von_neumann_slow(rng, h) else {
                k += 1;
                continue;
            };
            let mut i = 0;
            let tail = floor_mul_words(t, &mut || {
                i += 1;
                u1.word(rng, i - 1)
            });
            (u128::from(t) * u128::from(u1.head) + u128::from(tail)) >> HEAD_BITS
        } else {
            // N = 1 (b > a) and N = 3 (a > b > c, d > c) accept; N = 2
            // (a > b, c > b) and N = 4 (a > b > c > d, e > d) reject: with
            // g = (a > b) + 2 (b > c) + 4 (c > d), reject for g in {1, 5, 7}
            // (g = 3 is N = 3). A bit mask rather than boolean logic, so
            // that the compiler emits one branch (it splits the boolean
            // test into two unpredictable branches).
            let (g1, g2, g3) = (b.wrapping_sub(a) >> 63, c.wrapping_sub(b) >> 63, d.wrapping_sub(c) >> 63);
            if (0xA2u64 >> (g1 | g2 << 1 | g3 << 2)) & 1 != 0 {
                k += 1;
                continue;
            }
            // Unused heads as U_1's next digits: c, d, e when N = 1 (!d1),
            // e when N = 3.
            let spare = 36 - 24 * g1 as u32;
            let bits = HEAD_BITS + spare;
            let known = (a << spare) | ((w >> 4) & ((1 << spare) - 1));
            let p = u128::from(t) * u128::from(known);
            let low = p & ((1 << bits) - 1);
            if low + u128::from(t) > 1 << bits {
                let tail = floor_mul_words(t, &mut || rng.next_u64());
                (p + u128::from(tail)) >> bits
            } else {
                p >> bits
            }
        };
        // |Y| >= 2^64 needs K >= 2^64 / t, probability below exp(-2^40)
        // at t <= 2^24: saturated (documented in the module).
        let m = u128::from(t) * u128::from(k) + frac;
        return (u64::try_from(m).unwrap_or(u64::MAX), w & 1 == 1);
    }
}

/// The general path of a von Neumann trial from the heads of one word:
/// `Some(U_1)` when the trial is accepted (its digits drawn so far kept),
/// `None` when it is rejected.
#[cold]
fn von_neumann_slow<R: RngCore + ?Sized>(rng: &mut R, h: [u64; 5]) -> Option<LazyUniform> {
    let mut first = LazyUniform::new(h[0]);
    let mut prev = LazyUniform::new(h[1]);
    if !lazy_less(rng, &mut prev, &mut first) {
        return Some(first); // N = 1
    }
    let mut n = 2u64;
    let mut i = 2;
    loop {
        let mut next = if i < h.len() { LazyUniform::new(h[i]) } else { LazyUniform::fresh(rng) };
        i += 1;
        if !lazy_less(rng, &mut next, &mut prev) {
            return if n % 2 == 1 { Some(first) } else { None };
        }
        n += 1;
        prev = next;
    }
}

/// +-m (saturated at |Y| = 2^63 - 1: see `two_sided_geometric`), in
/// arithmetic: a branch on the sign would mispredict half the time.
#[inline]
pub(crate) fn signed(m: u64, negative: bool) -> i64 {
    let y = m.min(i64::MAX as u64) as i64;
    let mask = -i64::from(negative);
    (y ^ mask) - mask
}

/// (negative, 0), the draw the two-sided geometric rejects, tested with
/// one predictable branch (`negative && m == 0` compiles to a branch on
/// the sign first, which mispredicts half the time).
#[inline]
pub(crate) fn is_negative_zero(m: u64, negative: bool) -> bool {
    m | u64::from(!negative) == 0
}

/// One discrete Laplace draw with integer scale `t` >= 1 (0 is read as 1),
/// P[Y = y] = (1 - e^{-1/t}) / (1 + e^{-1/t}) * exp(-|y| / t), by von
/// Neumann's exponential and a sign bit, (negative, 0) rejected (see
/// [`two_sided_geometric`]): the reference the cell tables are tested
/// against, and their tail's geometric.
pub fn discrete_laplace_von_neumann<R: RngCore + ?Sized>(rng: &mut R, t: u64) -> i64 {
    discrete_laplace_impl::<R, false>(rng, t)
}

#[inline]
fn discrete_laplace_impl<R: RngCore + ?Sized, const SLOW_ONLY: bool>(rng: &mut R, t: u64) -> i64 {
    let t = t.max(1);
    loop {
        let (m, negative) = two_sided_geometric::<R, SLOW_ONLY>(rng, t);
        if !is_negative_zero(m, negative) {
            return signed(m, negative);
        }
    }
}

#[cfg(test)]
pub(super) mod test;
