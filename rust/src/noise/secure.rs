//! Secure sampling: exact discrete Laplace and Gaussian noise on a
//! power-of-two lattice, from operating-system entropy.
//!
//! Why: a floating-point Laplace or Gaussian draw added to a floating-point
//! value has a lattice of attainable outputs that depends on the value, so
//! an output can reveal the input exactly (Mironov 2012, "On significance of
//! the least significant bits for differential privacy"). Here every
//! sampling decision is made with integers, and every output is k * 2^-j
//! for an integer k, so no floating-point artefact exists to leak.
//!
//! The lattice (Mironov 2012, the snapping idea): values are multiples of
//! g = 2^-j. The exponent j is chosen by the Python privacy layer
//! (`dpbandits.privacy.secure.lattice_exponent`) so that the noise scale
//! spans about 2^19..2^20 lattice steps. Inputs are rounded to the lattice
//! (round to nearest), the noise is an integer number of steps, and sums of
//! lattice values stay exact in `f64` while they are below 2^53 steps
//! (checked: [`SecureNoise::to_lattice`]).
//!
//! Samplers (exact laws; every decision is an integer comparison of exact
//! uniform bits, no floating point):
//! - discrete Laplace with integer scale t, P[Y = y] ∝ exp(-|y|/t):
//!   |Y| = floor(t E) with E ~ Exp(1) by von Neumann's (1951) method
//!   (E = K + U_1: K rejected trials, U_1 the first uniform of the accepted
//!   descending run), a sign bit, (negative, 0) rejected;
//! - Bernoulli(exp(-x)) for x = num/den in [0, 1] by Forsythe's runs
//!   (x > U_1 > U_2 > ... > U_N; return N even), exp(-gamma) for gamma > 1
//!   as a product of floor(gamma) Bernoulli(exp(-1)) and one of the
//!   fraction;
//! - discrete Gaussian with integer variance sigma^2 = `var`,
//!   P[Y = y] ∝ exp(-y^2 / (2 var)) (Canonne, Kamath & Steinke 2020, "The
//!   discrete Gaussian for differential privacy", Alg. 3: discrete Laplace
//!   proposal with t ~ sqrt(var), accepted with probability
//!   exp(-(|Y| t - var)^2 / (2 var t^2))).
//!
//! Speed without giving up exactness: uniforms are revealed lazily. One
//! 64-bit word holds the 12-bit heads (first binary digits) of five
//! uniforms; a von Neumann trial or a Forsythe run compares heads with flag
//! arithmetic (no branch), and only a tie between heads the run reaches
//! (chance below 2^-10) or a run of 5 or more sends the trial to the
//! general path, which draws further digits (64-bit words) until every
//! comparison is decided. The heads a von Neumann run never examined are
//! still independent uniform digits, and serve as U_1's next digits: the
//! integer part floor(t U_1) reads further digits only when the known ones
//! cannot settle it (chance about t / 2^48 or t / 2^24). At t ~ 2^20 a
//! Laplace draw takes about 1.6 generator words and 0.6 unpredictable
//! branches; CKS Alg. 2 (uniform in [0, t) accepted with probability
//! exp(-U/t), then a geometric number of Bernoulli(exp(-1))) needs about
//! 5.8 words and more branches even with the same fast Bernoulli draws,
//! and took 1.5 times as long; with the previous bit-by-bit Bernoulli
//! draws it took 9.6 words and 4-5 times as long.
//!
//! Departures from exactness (each of probability below 2^-100, listed
//! rather than hidden): a Laplace magnitude of 2^63 or more (E >= 2^63/t,
//! probability below exp(-2^37) for t <= 2^26) is saturated to i64::MAX;
//! a Gaussian proposal with (|Y| t - var)^2 >= 2^128 is rejected (it needs
//! |Y| >= 2^64/t, probability below exp(-2^12), and its acceptance
//! probability is below exp(-2^26) at var <= 2^50, t <= 2^25 + 1). The
//! public [`bernoulli_exp_neg`] keeps CKS Alg. 1 for den > 2^112, with its
//! own departure (documented there); the samplers never reach it.
//!
//! Entropy: [`OsEntropy`] is a ChaCha20 stream keyed and rekeyed from the
//! operating system's generator (`getrandom`); the seeded ChaCha stream is
//! accepted by the same samplers for reproducible research runs.

use std::sync::Arc;

use rand_core::{OsRng, RngCore, SeedableRng, TryRngCore};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::noise::cell_sampler::{self, CellSampler, Shape};
use crate::noise::NoiseSpec;
use crate::rng::StreamRng;

/// Largest scale, in lattice steps, a discrete Laplace accepts.
pub const MAX_SCALE_STEPS: u64 = 1 << 21;

/// Largest sigma, in lattice steps, a discrete Gaussian accepts (variance
/// at most [`MAX_GAUSSIAN_VAR`] = 2^50, the cell sampler's range).
pub const MAX_GAUSSIAN_SCALE_STEPS: u64 = 1 << 25;

/// Largest sigma, in lattice steps, of the symmetric matrix Gaussian (its
/// diagonal draws variance 2 sigma^2, which must stay within 2^50).
pub const MAX_SYMMETRIC_SCALE_STEPS: u64 = 1 << 24;

/// Largest |k| of a lattice value k * 2^-j that stays exact in `f64`.
pub const MAX_EXACT_STEPS: f64 = 9_007_199_254_740_992.0; // 2^53

/// Words drawn from one key before the generator is rekeyed from the
/// operating system.
const REKEY_WORDS: u32 = 1 << 16;

/// Randomness from the operating system: a ChaCha20 stream keyed with 256
/// fresh bits from `getrandom` and rekeyed every [`REKEY_WORDS`] words (the
/// construction of the kernel's own generator; reading the kernel for
/// every word cost about 10 ns a word, several times a noise draw). No
/// seed exists that reproduces it, and it is never serialized.
///
/// `OsRng` can only fail when the kernel has no entropy pool at all; the
/// constructor keys the stream, so such a system fails there with an error
/// instead of later. A later failure (not known to happen on Linux once the
/// pool is initialised) panics inside `next_u64`, which PyO3 turns into a
/// `PanicException`: it cannot silently produce predictable noise.
pub struct OsEntropy {
    stream: rand_chacha::ChaCha20Rng,
    words_left: u32,
}

fn os_key() -> std::result::Result<[u8; 32], rand_core::OsError> {
    let mut key = [0u8; 32];
    OsRng.try_fill_bytes(&mut key)?;
    Ok(key)
}

impl OsEntropy {
    /// A source keyed from the operating system.
    pub fn new() -> Result<Self> {
        let key = os_key().map_err(|e| Error::State(format!("operating-system entropy unavailable: {e}")))?;
        Ok(OsEntropy { stream: rand_chacha::ChaCha20Rng::from_seed(key), words_left: REKEY_WORDS })
    }
}

impl std::fmt::Debug for OsEntropy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OsEntropy")
    }
}

impl RngCore for OsEntropy {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    fn next_u64(&mut self) -> u64 {
        if self.words_left == 0 {
            let key = os_key().expect("operating-system entropy failed after start-up");
            self.stream = rand_chacha::ChaCha20Rng::from_seed(key);
            self.words_left = REKEY_WORDS;
        }
        self.words_left -= 1;
        self.stream.next_u64()
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

/// A lazily opened [`OsEntropy`] held by a counter. Cloning gives an
/// unopened cell (a clone must never replay another object's entropy), and
/// it is never serialized: there is no state to restore.
#[derive(Default)]
pub struct EntropyCell(Option<OsEntropy>);

impl EntropyCell {
    /// The source, opened on first use.
    pub fn get(&mut self) -> Result<&mut OsEntropy> {
        if self.0.is_none() {
            self.0 = Some(OsEntropy::new()?);
        }
        Ok(self.0.as_mut().expect("just opened"))
    }
}

impl Clone for EntropyCell {
    fn clone(&self) -> Self {
        EntropyCell(None)
    }
}

impl std::fmt::Debug for EntropyCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EntropyCell")
    }
}

/// The entropy source of a privacy-noise stream: the seeded ChaCha stream
/// (reproducible research runs) or the operating system (secure mode).
///
/// The choice is state (serialized); the operating-system source is not
/// (nothing to restore): a restored secure stream reopens it, and never
/// falls back to the seeded stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NoiseRng {
    seeded: StreamRng,
    os: bool,
    #[serde(skip)]
    cell: EntropyCell,
}

impl NoiseRng {
    /// A stream drawing from `rng`.
    pub fn seeded(rng: StreamRng) -> Self {
        NoiseRng { seeded: rng, os: false, cell: EntropyCell::default() }
    }

    /// From now on, draw from the operating system (opened here, so that a
    /// system without entropy fails now rather than at a later draw).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.cell.get()?;
        self.os = true;
        Ok(())
    }

    /// Whether draws come from the operating system.
    pub fn is_os(&self) -> bool {
        self.os
    }

    /// Replaces the seeded stream (`fork`); a secure stream stays secure.
    pub fn reseed(&mut self, rng: StreamRng) {
        self.seeded = rng;
    }

    /// The generator to draw from.
    pub fn source(&mut self) -> Result<&mut dyn RngCore> {
        if self.os {
            Ok(self.cell.get()?)
        } else {
            Ok(&mut self.seeded)
        }
    }
}

/// A uniform integer in [0, n) (n >= 1), exactly: rejection sampling on
/// 128-bit words below the largest multiple of n.
pub fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, n: u128) -> u128 {
    debug_assert!(n > 0);
    if n.is_power_of_two() {
        return random_u128(rng) & (n - 1);
    }
    // Accept words below zone = 2^128 - (2^128 mod n), a multiple of n.
    let rem = (u128::MAX % n + 1) % n;
    loop {
        let w = random_u128(rng);
        if rem == 0 || w < u128::MAX - rem + 1 {
            return w % n;
        }
    }
}

fn random_u128<R: RngCore + ?Sized>(rng: &mut R) -> u128 {
    (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())
}

/// Bernoulli(num / den), exactly (0 <= num <= den, 1 <= den <= 2^127).
///
/// Compares a uniform u in [0, 1), drawn bit by bit, with the binary
/// expansion of num/den produced by long division, and stops at the first
/// bit where they differ: u < num/den exactly when u's bit is the smaller.
/// Two bits are needed on average, one generator word almost always, and
/// no 128-bit division (which cost more than the rest of a draw).
pub fn bernoulli_ratio<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    debug_assert!(num <= den && (1..=1 << 127).contains(&den));
    if den <= 1 << 62 {
        return bernoulli_ratio_u64(rng, num as u64, den as u64);
    }
    let mut rem = num;
    loop {
        let word = rng.next_u64();
        for i in (0..64).rev() {
            // Next bit of num/den: rem / den in [0, 1], doubled.
            rem <<= 1;
            let ratio_bit = rem >= den;
            if ratio_bit {
                rem -= den;
            }
            let u_bit = (word >> i) & 1 == 1;
            if u_bit != ratio_bit {
                return ratio_bit;
            }
        }
    }
}

/// [`bernoulli_ratio`] in 64-bit arithmetic (den <= 2^62).
fn bernoulli_ratio_u64<R: RngCore + ?Sized>(rng: &mut R, num: u64, den: u64) -> bool {
    let mut rem = num;
    loop {
        let word = rng.next_u64();
        for i in (0..64).rev() {
            rem <<= 1;
            let ratio_bit = rem >= den;
            if ratio_bit {
                rem -= den;
            }
            if ((word >> i) & 1 == 1) != ratio_bit {
                return ratio_bit;
            }
        }
    }
}

/// A uniform integer in [0, n) for 1 <= n <= 2^64 - 1, exactly (Lemire
/// 2019, "Fast random integer generation in an interval": multiply, and
/// reject the few products that would bias the result).
pub fn uniform_below_u64<R: RngCore + ?Sized>(rng: &mut R, n: u64) -> u64 {
    debug_assert!(n > 0);
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as u64
}

// ---------------------------------------------------------------------------
// Fast exact samplers.
//
// A uniform U in [0, 1) is revealed lazily: a 12-bit head (U's first 12
// binary digits) and, only when a decision needs them, 64-bit tail words
// (the following digits). Five heads come from one generator word, so a
// comparison between uniforms costs a few integer instructions and no
// branch; only a tie between heads (probability 2^-12) or a long
// descending run sends a draw to the general (slow, equally exact) path,
// which extends the uniforms word by word.
// ---------------------------------------------------------------------------

/// Binary digits in the head of a lazily drawn uniform.
const HEAD_BITS: u32 = 12;
const HEAD_MASK: u64 = (1 << HEAD_BITS) - 1;

/// Largest `den` for which the fast Bernoulli(exp(-num/den)) is used
/// (num * 2^12 and head * den stay below 2^127).
const FAST_DEN_MAX: u128 = 1 << 112;

/// Largest variance [`discrete_gaussian`] accepts (2^50 steps^2: every
/// product it forms stays below 2^127 except in the documented events).
pub const MAX_GAUSSIAN_VAR: u128 = 1 << 50;

/// The five 12-bit heads in one word: bits 63..52, 51..40, 39..28, 27..16,
/// 15..4 (bits 3..0 are left for the caller: bit 0 is a Laplace sign).
#[inline]
fn heads(w: u64) -> [u64; 5] {
    [w >> 52, (w >> 40) & HEAD_MASK, (w >> 28) & HEAD_MASK, (w >> 16) & HEAD_MASK, (w >> 4) & HEAD_MASK]
}

/// A uniform in [0, 1) with lazily drawn digits: head / 2^12 +
/// sum_i tail[i] 2^-(12 + 64 (i + 1)). Used by the rare slow paths only
/// (the tail vector allocates only when a digit beyond the head is needed).
struct LazyUniform {
    head: u64,
    tail: Vec<u64>,
}

impl LazyUniform {
    fn new(head: u64) -> Self {
        LazyUniform { head, tail: Vec::new() }
    }

    /// A uniform with a fresh head (the top 12 bits of a new word).
    fn fresh<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        LazyUniform::new(rng.next_u64() >> (64 - HEAD_BITS))
    }

    /// Tail word i, drawn on first use.
    fn word<R: RngCore + ?Sized>(&mut self, rng: &mut R, i: usize) -> u64 {
        while self.tail.len() <= i {
            self.tail.push(rng.next_u64());
        }
        self.tail[i]
    }
}

/// a < b, exactly (digits drawn until they differ; equality has
/// probability 0 and would loop on forever drawing digits).
fn lazy_less<R: RngCore + ?Sized>(rng: &mut R, a: &mut LazyUniform, b: &mut LazyUniform) -> bool {
    if a.head != b.head {
        return a.head < b.head;
    }
    for i in 0.. {
        let (x, y) = (a.word(rng, i), b.word(rng, i));
        if x != y {
            return x < y;
        }
    }
    unreachable!()
}

/// u < num/den for 0 <= num <= den <= 2^112, exactly: the head against
/// num/den by two products, then (when the head does not decide, chance
/// 2^-12) the tail's bits against the long-division expansion.
fn lazy_below_ratio<R: RngCore + ?Sized>(rng: &mut R, u: &mut LazyUniform, num: u128, den: u128) -> bool {
    debug_assert!(num <= den && den <= FAST_DEN_MAX);
    let lhs = u128::from(u.head) * den;
    let target = num << HEAD_BITS;
    if lhs >= target {
        return false; // u >= head / 2^12 >= num/den
    }
    if lhs + den <= target {
        return true; // u < (head + 1) / 2^12 <= num/den
    }
    // u < num/den  <=>  tail < rem/den, rem = num 2^12 - head den in (0, den).
    let mut rem = target - lhs;
    for i in 0.. {
        let w = u.word(rng, i);
        for bit in (0..64).rev() {
            if rem == 0 {
                return false; // the expansion ends: tail >= rem/den
            }
            rem <<= 1;
            let ratio_bit = rem >= den;
            if ratio_bit {
                rem -= den;
            }
            if ((w >> bit) & 1 == 1) != ratio_bit {
                return ratio_bit;
            }
        }
    }
    unreachable!()
}

/// floor(t * T) for T = sum_i w_i 2^-64(i+1), the words w_0, w_1, ...
/// coming from `next`. A word after the first is used only when
/// (t w_0 mod 2^64) + t > 2^64 (probability below t / 2^64): otherwise the
/// digits after w_0 cannot carry into the integer part.
fn floor_mul_words<F: FnMut() -> u64>(t: u64, next: &mut F) -> u64 {
    let p = u128::from(t) * u128::from(next());
    let (q, low) = ((p >> 64) as u64, p as u64);
    // t T = q + (low + t T') / 2^64 with T' in [0, 1), so t T' in [0, t).
    match low.overflowing_add(t) {
        (r, true) if r > 0 => {
            // Carry iff t T' >= 2^64 - low = t - r, i.e. floor(t T') >= t - r.
            q + u64::from(floor_mul_words(t, next) >= t - r)
        }
        _ => q,
    }
}

/// Bernoulli(exp(-num/den)) for 0 <= num <= den <= 2^112 (von Neumann
/// 1951; Forsythe 1972): with x = num/den, let N be the length of the
/// descending run x > U_1 > U_2 > ... > U_N of uniforms; then
/// P[N >= n] = x^n / n!, so P[N even] = sum_n (-x)^n / n! = exp(-x).
/// One word gives U_1..U_5 (heads); no branch unless a head ties
/// (probability < 2^-10) or the run reaches 5 (probability <= 1/120).
// Non-short-circuit `&`, `|` on booleans on purpose: they compile to flag
// arithmetic, where `&&`, `||` would add the unpredictable branches this
// code exists to avoid.
#[allow(clippy::needless_bitwise_bool)]
#[inline]
fn bernoulli_exp_neg_frac<R: RngCore + ?Sized, const SLOW_ONLY: bool>(rng: &mut R, num: u128, den: u128) -> bool {
    let h = heads(rng.next_u64());
    let [a, b, c, d, e] = h;
    let lhs = u128::from(a) * den;
    let target = num << HEAD_BITS;
    let c0 = lhs + den <= target; // U_1 < x for sure
    let undecided = !c0 & (lhs < target);
    let (c1, c2, c3, c4) = (b < a, c < b, d < c, e < d);
    let tie = (a == b) | (b == c) | (c == d) | (d == e);
    if SLOW_ONLY || undecided | tie | (c0 & c1 & c2 & c3 & c4) {
        return bernoulli_exp_neg_frac_slow(rng, h, num, den);
    }
    let n = u32::from(c0) + u32::from(c0 & c1) + u32::from(c0 & c1 & c2) + u32::from(c0 & c1 & c2 & c3);
    n & 1 == 0
}

/// The general path of [`bernoulli_exp_neg_frac`], from the same heads.
#[cold]
fn bernoulli_exp_neg_frac_slow<R: RngCore + ?Sized>(rng: &mut R, h: [u64; 5], num: u128, den: u128) -> bool {
    let mut prev = LazyUniform::new(h[0]);
    if !lazy_below_ratio(rng, &mut prev, num, den) {
        return true; // N = 0
    }
    let mut n = 1u64;
    let mut i = 1;
    loop {
        let mut next = if i < h.len() { LazyUniform::new(h[i]) } else { LazyUniform::fresh(rng) };
        i += 1;
        if !lazy_less(rng, &mut next, &mut prev) {
            return n.is_multiple_of(2);
        }
        n += 1;
        prev = next;
    }
}

/// Bernoulli(exp(-num/den)) for any num/den >= 0 with den <= 2^112:
/// exp(-gamma) = exp(-1)^floor(gamma) exp(-frac(gamma)), one independent
/// Bernoulli per factor, stopping at the first 0 (by subtraction: no
/// division, and rarely more than two steps).
fn bernoulli_exp_neg_fast<R: RngCore + ?Sized, const SLOW_ONLY: bool>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut num = num;
    while num > den {
        if !bernoulli_exp_neg_frac::<R, SLOW_ONLY>(rng, 1, 1) {
            return false;
        }
        num -= den;
    }
    bernoulli_exp_neg_frac::<R, SLOW_ONLY>(rng, num, den)
}

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
            // that the compiler emits one branch (it split the boolean
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
/// one predictable branch (`negative && m == 0` compiled to a branch on
/// the sign first, which mispredicts half the time).
#[inline]
pub(crate) fn is_negative_zero(m: u64, negative: bool) -> bool {
    m | u64::from(!negative) == 0
}

/// One discrete Laplace draw with integer scale `t` >= 1 (0 is read as 1):
/// P[Y = y] = (1 - e^{-1/t}) / (1 + e^{-1/t}) * exp(-|y| / t), from the
/// cached cell table of that law ([`super::cell_sampler`]).
pub fn discrete_laplace<R: RngCore + ?Sized>(rng: &mut R, t: u64) -> i64 {
    cell_sampler::with_sampler(Shape::Laplace { t: t.max(1) }, |s| s.sample(rng))
}

/// The same law by von Neumann's exponential and a sign bit, (negative, 0)
/// rejected (see [`two_sided_geometric`]): the reference the cell tables
/// are tested against, and their tail's geometric.
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

/// Bernoulli(exp(-num/den)) for any num >= 0, den >= 1 (den <= 2^127),
/// exactly: by [`bernoulli_exp_neg_frac`]'s runs of uniforms when
/// den <= 2^112, else by CKS 2020, Alg. 1.
pub fn bernoulli_exp_neg<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    if den <= FAST_DEN_MAX {
        bernoulli_exp_neg_fast::<R, false>(rng, num, den)
    } else {
        bernoulli_exp_neg_cks(rng, num, den)
    }
}

/// Bernoulli(exp(-num/den)) for 0 <= num/den <= 1 (CKS 2020, Alg. 1, first
/// case): draw A_K ~ Bernoulli(gamma / K) for K = 1, 2, ... until the first
/// 0; return 1 iff that K is odd.
fn bernoulli_exp_neg_unit<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut k: u128 = 1;
    loop {
        let Some(dk) = den.checked_mul(k).filter(|&dk| dk <= 1 << 127) else {
            // Reached only after K > 2^40 successes (probability 1/(2^40)!):
            // treat the next Bernoulli(gamma / K) as 0.
            return k % 2 == 1;
        };
        if !bernoulli_ratio(rng, num, dk) {
            return k % 2 == 1;
        }
        k += 1;
    }
}

/// Bernoulli(exp(-num/den)) for any num/den >= 0 (CKS 2020, Alg. 1; the
/// path of [`bernoulli_exp_neg`] for den > 2^112): floor(gamma)
/// independent Bernoulli(exp(-1)) all 1, then one
/// Bernoulli(exp(-frac(gamma))). Stops at the first 0, so the expected
/// number of steps is below 1/(1 - e^-1) whatever gamma is. Departure: a
/// Bernoulli(gamma / K) that needs den K > 2^127 (after K > 2^40 successes
/// in a row, probability below 1/(2^40)!) is treated as 0.
fn bernoulli_exp_neg_cks<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut whole = num / den;
    while whole > 0 {
        if !bernoulli_exp_neg_unit(rng, 1, 1) {
            return false;
        }
        whole -= 1;
    }
    bernoulli_exp_neg_unit(rng, num % den, den)
}

/// floor(sqrt(m)) exactly for m < 2^64, where the conversion to `f64` is
/// one instruction. Not inlined: inlined into [`isqrt`], the compiler
/// merged it with the 128-bit path and called the slow 128-bit
/// conversions for every m.
#[inline(never)]
fn isqrt_u64(m: u64) -> u64 {
    let mut r = (m as f64).sqrt() as u64;
    while r.checked_mul(r).is_none_or(|sq| sq > m) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= m) {
        r += 1;
    }
    r
}

/// floor(sqrt(n)) exactly.
pub fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    if let Ok(m) = u64::try_from(n) {
        return u128::from(isqrt_u64(m));
    }
    if n < 1 << 104 {
        // An estimate (within 1 of the root below 2^52), then exact
        // integer corrections: the result is checked, not trusted.
        let mut r = (n as f64).sqrt() as u128;
        while r * r > n {
            r -= 1;
        }
        while (r + 1) * (r + 1) <= n {
            r += 1;
        }
        return r;
    }
    // Newton's iteration from above, in integers.
    let mut x = 1u128 << (128 - n.leading_zeros()).div_ceil(2);
    loop {
        let y = x.midpoint(n / x);
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// floor(sqrt(m + 1/2) 2^12) for m in [64, 256), indexed by m - 64.
const SQRT_TABLE: [u16; 192] = {
    let mut table = [0u16; 192];
    let mut i = 0;
    while i < 192 {
        // floor(sqrt(n)) for n = (m + 1/2) 2^24 < 2^32, by bisection
        // (at compile time).
        let n = (2 * (i as u64 + 64) + 1) << 23;
        let (mut lo, mut hi) = (0u64, 1u64 << 16);
        while hi - lo > 1 {
            let mid = lo.midpoint(hi);
            if mid * mid <= n {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        table[i] = lo as u16;
        i += 1;
    }
    table
};

/// The discrete Laplace scale of the Gaussian proposal: sqrt(var) rounded
/// to the nearest integer below 2^20 (exact `isqrt`), else an integer
/// within 0.5% of sqrt(var) from var's leading 8 bits and a table of
/// square roots, in a few instructions (the exact `isqrt`, a floating-point
/// estimate and integer checks, cost 15% of a scalar Gaussian draw). Any
/// t >= 1 gives the exact law; t within 0.5% of sigma lowers the
/// acceptance rate by less than 10^-4.
fn proposal_scale(var: u128) -> u64 {
    if var < 1 << 20 {
        let s = isqrt(var);
        // sqrt(var) >= s + 1/2  <=>  var > s^2 + s (integers).
        return (if var > s * s + s { s + 1 } else { s }) as u64;
    }
    // var = m 2^(e - 6) + rest, rest < 2^(e - 6), with e even and m in
    // [64, 256); var / 2^(e - 6) lies within 1/2 of m + 1/2, so within a
    // factor 1 + 1/129 of it, and its root within 1 + 1/258 (then the
    // floors: below 2^-12 relative, and 1 absolute, 1/1024 of sigma).
    let e = var.ilog2() & !1;
    let m = (var >> (e - 6)) as usize;
    // sqrt(var) ~ sqrt(m + 1/2) 2^(e/2 - 3) = SQRT_TABLE[m - 64] 2^(e/2 - 15).
    ((u128::from(SQRT_TABLE[m - 64]) << (e / 2)) >> 15) as u64
}

/// Discrete Gaussian parameters, computed once per noise value.
#[derive(Clone, Copy, Debug)]
struct DiscreteGaussian {
    var: u128,
    /// Scale of the discrete Laplace proposal: within 0.5% of sqrt(var)
    /// ([`proposal_scale`]; any t >= 1 gives the exact law; t near sigma
    /// maximises the acceptance rate, about 0.76 for large sigma).
    t: u64,
    /// 2 var t^2: gamma = (|Y| t - var)^2 / den.
    den: u128,
}

impl DiscreteGaussian {
    fn new(var: u128) -> Self {
        let var = var.max(1);
        assert!(var <= MAX_GAUSSIAN_VAR, "discrete Gaussian variance {var} exceeds 2^50");
        let t = u128::from(proposal_scale(var));
        DiscreteGaussian { var, t: t as u64, den: 2 * var * t * t }
    }

    /// CKS 2020, Alg. 3 with scale t: Y ~ DLap(t), accepted with
    /// probability exp(-(|Y| - var/t)^2 / (2 var)) = exp(-gamma).
    #[inline]
    fn sample<R: RngCore + ?Sized, const SLOW_ONLY: bool>(&self, rng: &mut R) -> i64 {
        loop {
            let (m, negative) = two_sided_geometric::<R, SLOW_ONLY>(rng, self.t);
            if is_negative_zero(m, negative) {
                continue;
            }
            let diff = (u128::from(m) * u128::from(self.t)).abs_diff(self.var);
            // diff^2 >= 2^128 means gamma > 2^26: acceptance probability
            // below exp(-2^26), decided as a rejection (documented).
            let Some(num) = diff.checked_mul(diff) else {
                continue;
            };
            let accept = bernoulli_exp_neg_fast::<R, SLOW_ONLY>(rng, num, self.den);
            if accept {
                return signed(m, negative);
            }
        }
    }
}

/// One discrete Gaussian draw with integer variance parameter `var`
/// (1 <= var <= 2^50; 0 is read as 1): P[Y = y] ∝ exp(-y^2 / (2 var)),
/// from the cached cell table of that law ([`super::cell_sampler`]).
pub fn discrete_gaussian<R: RngCore + ?Sized>(rng: &mut R, var: u128) -> i64 {
    let var = var.max(1);
    assert!(var <= MAX_GAUSSIAN_VAR, "discrete Gaussian variance {var} exceeds 2^50");
    cell_sampler::with_sampler(Shape::Gaussian { var }, |s| s.sample(rng))
}

/// The same law by CKS 2020, Alg. 3 (with the proposal scale t within 0.5%
/// of sqrt(var) instead of floor(sqrt(var)) + 1: any t >= 1 gives the same
/// law, and t ~ sigma accepts most often): Y ~ DLap(t) accepted with
/// probability exp(-(|Y| t - var)^2 / (2 var t^2)). The reference the cell
/// tables are tested against.
pub fn discrete_gaussian_cks<R: RngCore + ?Sized>(rng: &mut R, var: u128) -> i64 {
    DiscreteGaussian::new(var).sample::<R, false>(rng)
}

/// 1.5 2^52: adding and subtracting it rounds any |y| < 2^51 to the
/// nearest integer (see [`round_to_integer`]).
const ROUNDING_SHIFT: f64 = 6_755_399_441_055_744.0;
/// 2^51: below it, [`ROUNDING_SHIFT`] rounds exactly.
const EXACT_BELOW: f64 = 2_251_799_813_685_248.0;

/// The integer nearest to y (ties to even), as a double. For |y| < 2^51
/// by adding and subtracting 1.5 2^52: the sum lies in [2^52, 2^53), where
/// doubles are the integers, so the addition rounds y to an integer (in
/// the default rounding mode, which Rust assumes) and the subtraction is
/// exact. `f64::round` is a library call on the baseline x86-64 target (no
/// SSE4.1 rounding instruction), and every released entry is rounded to
/// the lattice. Beyond 2^51 (and for NaN) the library's rounding; any
/// nearest-integer rounding keeps the lattice accounting (within half a
/// step, monotone).
#[inline]
pub fn round_to_integer(y: f64) -> f64 {
    if y.abs() < EXACT_BELOW {
        (y + ROUNDING_SHIFT) - ROUNDING_SHIFT
    } else {
        y.round()
    }
}

/// values[i] = round(values[i] up) down, for up = 1/down a power of two;
/// without a branch per value when every |values[i] up| < 2^51.
pub fn round_to_lattice(values: &mut [f64], up: f64, down: f64) {
    if values.iter().fold(true, |ok, v| ok & ((*v * up).abs() < EXACT_BELOW)) {
        for v in values.iter_mut() {
            *v = ((*v * up + ROUNDING_SHIFT) - ROUNDING_SHIFT) * down;
        }
    } else {
        for v in values.iter_mut() {
            *v = round_to_integer(*v * up) * down;
        }
    }
}

/// 2^e, exactly as `2f64.powi(e)` (which is exact for powers of two) but
/// built from the bits when 2^e is a normal double: `powi` is a library
/// call (a loop of multiplications) made for every noise value.
fn pow2(e: i32) -> f64 {
    // No `powi` even in a cold branch: the compiler hoisted that call above
    // the range test (measured: one library call per use).
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((1023 + e) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074)) // subnormal
    } else {
        0.0
    }
}

/// Rounding to the lattice 2^-j with a bound on the step count
/// ([`SecureNoise::rounding`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatticeRounding {
    up: f64,
    down: f64,
    /// |v 2^j| must stay below this (limit - 1/2).
    bound: f64,
}

impl LatticeRounding {
    /// `v` on the lattice, or `None` when `v` is NaN, reaches the limit, or
    /// the limit is too large for the one-step rounding (then
    /// [`SecureNoise::to_lattice`] decides, with its error message).
    #[inline]
    pub fn round(&self, v: f64) -> Option<f64> {
        ((v * self.up).abs() < self.bound && self.bound <= EXACT_BELOW).then(|| self.round_checked(v))
    }

    /// The rounding of a `v` already checked: |v 2^j| < bound <= 2^51.
    #[inline]
    fn round_checked(&self, v: f64) -> f64 {
        ((v * self.up + ROUNDING_SHIFT) - ROUNDING_SHIFT) * self.down
    }
}

/// One noise entry at a time from a shared table ([`SecureNoise::entry_sampler`]).
#[derive(Clone)]
pub struct EntrySampler {
    sampler: Arc<CellSampler>,
    step: f64,
}

impl EntrySampler {
    /// One draw: an integer of the law times the lattice step. Always
    /// inlined: the tree's scalar step makes one draw a round, and a call
    /// there spills the round's registers.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> f64 {
        self.sampler.sample(rng) as f64 * self.step
    }
}

impl std::fmt::Debug for EntrySampler {
    // The table itself is thousands of entries: its law and step say it all.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntrySampler").field("shape", &self.sampler.shape()).field("step", &self.step).finish()
    }
}

/// Integer parameters of secure node noise on the lattice 2^-exponent.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum SecureKind {
    /// No noise (values are still rounded to the lattice).
    Zero,
    /// Discrete Laplace with scale `t` steps in every entry.
    Laplace { t: u64 },
    /// Discrete Gaussian with variance `var` steps^2 in every entry.
    Gaussian { var: u128 },
    /// Symmetric matrix: discrete Gaussian with variance `var` off the
    /// diagonal and `2 var` on it (the law of (Z + Z^T)/sqrt(2),
    /// Shariff–Sheffet §4.2, footnote 4), one draw per upper entry.
    SymmetricGaussian { var: u128 },
}

/// Secure node noise: integer parameters and the lattice they live on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecureNoise {
    kind: SecureKind,
    /// The lattice is multiples of 2^-exponent.
    exponent: i32,
}

impl SecureNoise {
    /// The discrete counterpart of `spec` on the lattice 2^-`exponent`.
    ///
    /// The scale in steps is rounded UP: scale_steps = ceil(scale * 2^j)
    /// (more noise than asked, never less). It must lie in [1, 2^21] for the
    /// Laplace, [1, 2^25] for the Gaussian and [1, 2^24] for the symmetric
    /// matrix Gaussian (whose diagonal has twice the variance).
    /// Wishart noise has no exact discrete sampler here: an error.
    pub fn new(spec: NoiseSpec, exponent: i32) -> Result<Self> {
        if !(-1000..=1000).contains(&exponent) {
            return Err(Error::invalid("lattice_exponent", format!("must lie in [-1000, 1000], got {exponent}")));
        }
        let steps = |name: &'static str, x: f64, max: u64| -> Result<u64> {
            let s = (x * pow2(exponent)).ceil();
            if s.is_finite() && (1.0..=max as f64).contains(&s) {
                Ok(s as u64)
            } else {
                Err(Error::invalid(
                    name,
                    format!(
                        "{x} is {s} steps of the lattice 2^-{exponent}; secure sampling needs 1 to {max} steps \
                         (choose the exponent with dpbandits.privacy.secure.lattice_exponent)"
                    ),
                ))
            }
        };
        let kind = match spec {
            NoiseSpec::Zero => SecureKind::Zero,
            NoiseSpec::Laplace { scale } => SecureKind::Laplace { t: steps("scale", scale, MAX_SCALE_STEPS)? },
            NoiseSpec::Gaussian { sigma } => {
                let s = u128::from(steps("sigma", sigma, MAX_GAUSSIAN_SCALE_STEPS)?);
                SecureKind::Gaussian { var: s * s }
            }
            NoiseSpec::SymmetricGaussian { sigma } => {
                let s = u128::from(steps("sigma", sigma, MAX_SYMMETRIC_SCALE_STEPS)?);
                SecureKind::SymmetricGaussian { var: s * s }
            }
            NoiseSpec::Lattice(_) => return Err(Error::invalid("noise", "the noise is already on a lattice")),
            NoiseSpec::Wishart { .. } => {
                return Err(Error::invalid(
                    "noise",
                    "secure (exact discrete) sampling is available for Laplace and Gaussian noise, not Wishart",
                ))
            }
        };
        Ok(SecureNoise { kind, exponent })
    }

    /// The floating-point noise of the same scale (t g, or s g), for
    /// data-independent noise whose law carries no privacy (padding).
    pub fn continuous(&self) -> NoiseSpec {
        let step = self.step();
        match self.kind {
            SecureKind::Zero => NoiseSpec::Zero,
            SecureKind::Laplace { t } => NoiseSpec::Laplace { scale: t as f64 * step },
            SecureKind::Gaussian { var } => NoiseSpec::Gaussian { sigma: (var as f64).sqrt() * step },
            SecureKind::SymmetricGaussian { var } => NoiseSpec::SymmetricGaussian { sigma: (var as f64).sqrt() * step },
        }
    }

    /// Whether the parameters are in the ranges [`SecureNoise::new`]
    /// produces (a decoded state is checked with this).
    pub fn is_valid(&self) -> bool {
        let steps = 1..=u128::from(MAX_SCALE_STEPS);
        let var = 1..=u128::from(MAX_GAUSSIAN_SCALE_STEPS) * u128::from(MAX_GAUSSIAN_SCALE_STEPS);
        let symmetric_var = 1..=u128::from(MAX_SYMMETRIC_SCALE_STEPS) * u128::from(MAX_SYMMETRIC_SCALE_STEPS);
        (-1000..=1000).contains(&self.exponent)
            && match self.kind {
                SecureKind::Zero => true,
                SecureKind::Laplace { t } => steps.contains(&u128::from(t)),
                SecureKind::Gaussian { var: v } => var.contains(&v),
                SecureKind::SymmetricGaussian { var: v } => symmetric_var.contains(&v),
            }
    }

    /// The integer parameters.
    pub fn kind(&self) -> SecureKind {
        self.kind
    }

    /// j: values are multiples of 2^-j.
    pub fn exponent(&self) -> i32 {
        self.exponent
    }

    /// The lattice step 2^-j.
    pub fn step(&self) -> f64 {
        pow2(-self.exponent)
    }

    /// Rounds `values` to the nearest lattice points in place, refusing
    /// values whose step count reaches `limit` (so that later sums of them
    /// stay exact). The error leaves `values` unchanged.
    pub fn to_lattice(&self, name: &'static str, values: &mut [f64], limit: f64) -> Result<()> {
        let rounding = self.rounding(limit);
        let (up, bound) = (rounding.up, rounding.bound);
        // One branch-free pass (NaN fails the comparison): |v 2^j| below
        // limit - 1/2 keeps its rounding below limit.
        if !values.iter().fold(true, |ok, v| ok & ((*v * up).abs() < bound)) {
            let within = |v: &&f64| (**v * up).abs() < bound;
            let v = values.iter().find(|v| !within(v)).expect("an entry failed the bound");
            return Err(Error::invalid(
                name,
                format!(
                    "{v} is too large for exact arithmetic on the secure lattice 2^-{} (at most {limit:e} steps)",
                    self.exponent
                ),
            ));
        }
        if bound <= EXACT_BELOW {
            // The check above bounds every |v 2^j| below 2^51: round
            // without `round_to_lattice`'s second pass over the values.
            for v in values.iter_mut() {
                *v = rounding.round_checked(*v);
            }
        } else {
            round_to_lattice(values, up, self.step());
        }
        Ok(())
    }

    /// [`SecureNoise::to_lattice`]'s rounding for the limit `limit`, for
    /// callers that round one value at a time.
    pub fn rounding(&self, limit: f64) -> LatticeRounding {
        LatticeRounding { up: pow2(self.exponent), down: self.step(), bound: limit - 0.5 }
    }

    /// A handle drawing this noise one entry at a time, the same draws as
    /// [`SecureNoise::sample_into`] on a one-entry `out`; `None` for the
    /// zero and matrix laws.
    pub fn entry_sampler(&self) -> Option<EntrySampler> {
        let shape = match self.kind {
            SecureKind::Laplace { t } => Shape::Laplace { t: t.max(1) },
            SecureKind::Gaussian { var } => Shape::Gaussian { var: var.max(1) },
            SecureKind::Zero | SecureKind::SymmetricGaussian { .. } => return None,
        };
        Some(EntrySampler { sampler: cell_sampler::shared_sampler(shape), step: self.step() })
    }

    /// Writes one noise value (integers times 2^-j) into `out`; `side` is
    /// the matrix side for the symmetric Gaussian.
    pub fn sample_into<R: RngCore + ?Sized>(&self, rng: &mut R, side: usize, out: &mut [f64]) {
        let step = self.step();
        match self.kind {
            SecureKind::Zero => out.fill(0.0),
            SecureKind::Laplace { t } => {
                cell_sampler::with_sampler(Shape::Laplace { t: t.max(1) }, |s| s.fill_scaled(rng, step, out));
            }
            SecureKind::Gaussian { var } => {
                cell_sampler::with_sampler(Shape::Gaussian { var: var.max(1) }, |s| s.fill_scaled(rng, step, out));
            }
            SecureKind::SymmetricGaussian { var } => {
                // Row by row: the diagonal entry (variance 2 var), then the
                // row's upper entries in one call, mirrored below.
                let var = var.max(1);
                let p = side;
                cell_sampler::with_sampler(Shape::Gaussian { var: 2 * var }, |diag| {
                    cell_sampler::with_sampler(Shape::Gaussian { var }, |off| {
                        for i in 0..p {
                            out[i * p + i] = diag.sample(rng) as f64 * step;
                            off.fill_scaled(rng, step, &mut out[i * p + i + 1..(i + 1) * p]);
                            for j in (i + 1)..p {
                                out[j * p + i] = out[i * p + j];
                            }
                        }
                    });
                });
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;

    #[test]
    fn integer_square_root_is_exact() {
        for n in 0u128..5000 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "n = {n}");
        }
        for big in [(1u128 << 100) + 12345, u128::from(u64::MAX), (1 << 64) + 1, (1 << 104) - 1, u128::MAX / 3] {
            let r = isqrt(big);
            assert!(r * r <= big && (r + 1).checked_mul(r + 1).is_none_or(|sq| sq > big), "{big}");
        }
        for s in [(1u128 << 32) - 1, 1 << 32, 94_906_265, 3_037_000_499] {
            for n in [s * s - 1, s * s, s * s + 1] {
                let r = isqrt(n);
                assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
            }
        }
    }

    #[test]
    fn proposal_scale_is_near_sigma() {
        let big = [1 << 20, (1 << 21) - 1, 1 << 40, (1 << 40) + (1 << 39), 2 << 42, 2_000_000, 1 << 50, (1 << 50) - 1];
        let spread = (0..3000u32).map(|i| (1u128 << 20) + u128::from(i) * 1_234_567_891);
        for var in (1u128..5000).chain(big).chain(spread) {
            let t = proposal_scale(var) as f64;
            let sigma = (var as f64).sqrt();
            let bound = if var < 1 << 20 { 0.5 } else { 0.005 * sigma };
            assert!((t - sigma).abs() <= bound, "var {var}: t {t}, sigma {sigma}");
        }
    }

    #[test]
    fn pow2_is_powi() {
        for e in -1023..=1100 {
            assert_eq!(pow2(e).to_bits(), 2f64.powi(e).to_bits(), "e = {e}");
        }
        // Below, powi computes 1 / 2^-e and underflows to 0 from e = -1024;
        // pow2 keeps the exact subnormal powers, then 0 below 2^-1074.
        for e in -1074..-1023 {
            assert_eq!(pow2(e) * 2f64.powi(600) * 2f64.powi(600), 2f64.powi(e + 1200), "e = {e}");
        }
        assert_eq!(pow2(-1075), 0.0);
    }

    #[test]
    fn uniform_below_covers_its_range_evenly() {
        let mut rng = SeedSequence::from_seed(1).stream("test");
        let mut counts = [0u32; 6];
        let n = 60_000;
        for _ in 0..n {
            counts[uniform_below(&mut rng, 6) as usize] += 1;
        }
        // Binomial(60000, 1/6): sd ~ 91; 5 sd bound.
        for c in counts {
            assert!((f64::from(c) - 10_000.0).abs() < 460.0, "{counts:?}");
        }
    }

    #[test]
    fn bernoulli_exp_matches_its_probability() {
        let mut rng = SeedSequence::from_seed(2).stream("test");
        let n = 100_000;
        for (num, den) in [(1u128, 2u128), (3, 1), (7, 3), (0, 5)] {
            let hits = (0..n).filter(|_| bernoulli_exp_neg(&mut rng, num, den)).count();
            let p = (-(num as f64) / den as f64).exp();
            let sd = (p * (1.0 - p) / f64::from(n)).sqrt().max(1e-9);
            let got = hits as f64 / f64::from(n);
            assert!((got - p).abs() < 5.0 * sd + 1e-12, "gamma {num}/{den}: {got} vs {p}");
        }
    }

    #[test]
    fn discrete_laplace_and_gaussian_have_the_right_variance() {
        let mut rng = SeedSequence::from_seed(3).stream("test");
        let n = 40_000;
        let t = 3u64;
        let q = (-1.0 / t as f64).exp();
        // Var of the discrete Laplace: 2q / (1 - q)^2.
        let var_l = 2.0 * q / (1.0 - q).powi(2);
        let xs: Vec<f64> = (0..n).map(|_| discrete_laplace(&mut rng, t) as f64).collect();
        let v = xs.iter().map(|x| x * x).sum::<f64>() / f64::from(n);
        assert!((v - var_l).abs() < 0.05 * var_l, "{v} vs {var_l}");
        let ys: Vec<f64> = (0..n).map(|_| discrete_gaussian(&mut rng, 9) as f64).collect();
        let v = ys.iter().map(|x| x * x).sum::<f64>() / f64::from(n);
        // The discrete Gaussian with sigma^2 = 9 has variance within 1e-9 of 9.
        assert!((v - 9.0).abs() < 0.05 * 9.0, "{v}");
    }

    #[test]
    fn lattice_scale_is_rounded_up_and_wishart_refused() {
        let s = SecureNoise::new(NoiseSpec::Laplace { scale: 1.3 }, 4).unwrap();
        assert_eq!(s.kind(), SecureKind::Laplace { t: 21 }); // ceil(20.8)
        assert!(SecureNoise::new(NoiseSpec::Wishart { scale: 1.0, df: 5.0 }, 4).is_err());
        assert!(SecureNoise::new(NoiseSpec::Laplace { scale: 1.0 }, 30).is_err());
        let mut v = [0.26, -1.0];
        s.to_lattice("value", &mut v, 1e6).unwrap();
        assert_eq!(v, [0.25, -1.0]);
        assert!(s.to_lattice("value", &mut [1e300], 1e6).is_err());
        assert!(s.to_lattice("value", &mut [f64::NAN], 1e6).is_err());
    }

    #[test]
    fn os_entropy_rekeys_and_keeps_giving_words() {
        let mut a = OsEntropy::new().unwrap();
        let words: Vec<u64> = (0..3 * REKEY_WORDS as usize + 7).map(|_| a.next_u64()).collect();
        // Across the rekeys no word repeats its predecessor, and the bits
        // are balanced (each of the 64 bit positions set in 50% +- 1%).
        assert!(words.windows(2).all(|w| w[0] != w[1]));
        for bit in 0..64 {
            let ones = words.iter().filter(|w| (*w >> bit) & 1 == 1).count() as f64 / words.len() as f64;
            assert!((ones - 0.5).abs() < 0.01, "bit {bit}: {ones}");
        }
    }

    #[test]
    fn os_entropy_gives_different_words() {
        let mut a = OsEntropy::new().unwrap();
        let mut b = OsEntropy::new().unwrap();
        assert_ne!(a.next_u64(), b.next_u64());
        let words: Vec<u64> = (0..1000).map(|_| a.next_u64()).collect();
        assert!(words.windows(2).all(|w| w[0] != w[1]));
    }

    // -- Goodness of fit against the exact laws ---------------------------
    //
    // Chi-square test of the empirical pmf (binned for large scales: bins of
    // equal width over [-R, R] plus the two tails, adjacent bins merged
    // until each expects at least 20 draws) against the exact pmf. A law
    // passes when p > 1e-4 (significance level 1e-4: a correct sampler
    // fails with probability 1e-4 per case; the seeds are fixed, so the
    // outcome is deterministic). The same test must REJECT (p < 1e-4) the
    // same draws against a deliberately wrong law, so it can fail.

    /// ln Gamma(x), x > 0 (Lanczos, g = 7, n = 9; relative error < 1e-13).
    fn ln_gamma(x: f64) -> f64 {
        const C: [f64; 9] = [
            0.999_999_999_999_809_9,
            676.520_368_121_885_1,
            -1_259.139_216_722_402_8,
            771.323_428_777_653_1,
            -176.615_029_162_140_6,
            12.507_343_278_686_905,
            -0.138_571_095_265_720_12,
            9.984_369_578_019_572e-6,
            1.505_632_735_149_311_6e-7,
        ];
        if x < 0.5 {
            return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
        }
        let x = x - 1.0;
        let mut a = C[0];
        let t = x + 7.5;
        for (i, c) in C.iter().enumerate().skip(1) {
            a += c / (x + i as f64);
        }
        0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
    }

    /// Q(a, x) = Gamma(a, x) / Gamma(a): series below a + 1, Lentz's
    /// continued fraction above.
    fn gamma_q(a: f64, x: f64) -> f64 {
        if x <= 0.0 {
            return 1.0;
        }
        let ln_pre = -x + a * x.ln() - ln_gamma(a);
        if x < a + 1.0 {
            let (mut sum, mut term, mut ap) = (1.0 / a, 1.0 / a, a);
            for _ in 0..10_000 {
                ap += 1.0;
                term *= x / ap;
                sum += term;
                if term.abs() < sum.abs() * 1e-16 {
                    break;
                }
            }
            1.0 - sum * ln_pre.exp()
        } else {
            let tiny = 1e-300;
            let mut b = x + 1.0 - a;
            let mut c = 1.0 / tiny;
            let mut d = 1.0 / b;
            let mut h = d;
            for i in 1..10_000 {
                let an = -f64::from(i) * (f64::from(i) - a);
                b += 2.0;
                d = an * d + b;
                if d.abs() < tiny {
                    d = tiny;
                }
                c = b + an / c;
                if c.abs() < tiny {
                    c = tiny;
                }
                d = 1.0 / d;
                let delta = d * c;
                h *= delta;
                if (delta - 1.0).abs() < 1e-16 {
                    break;
                }
            }
            ln_pre.exp() * h
        }
    }

    #[test]
    fn chi_square_tail_matches_known_values() {
        // Upper 1e-4 points: chi2(1) 15.137, chi2(10) 35.564, chi2(50) 95.969.
        for (df, x) in [(1.0, 15.137), (10.0, 35.564), (50.0, 95.969)] {
            let p = gamma_q(df / 2.0, x / 2.0);
            assert!((p / 1e-4 - 1.0).abs() < 2e-3, "df {df}: {p}");
        }
        assert!((gamma_q(1.0, 1.0) - (-1.0f64).exp()).abs() < 1e-14);
    }

    /// A law on the integers given by its mass on [lo, hi].
    trait Law {
        fn mass(&self, lo: i64, hi: i64) -> f64;
    }

    /// P[Y = y] = (1 - q) / (1 + q) q^|y|, q = exp(-1/t), t real > 0.
    struct LaplaceLaw(f64);

    impl LaplaceLaw {
        /// P[Y <= y].
        fn cdf(&self, y: i64) -> f64 {
            let q = (-1.0 / self.0).exp();
            if y >= 0 {
                1.0 - q.powf(y as f64 + 1.0) / (1.0 + q)
            } else {
                q.powf(-y as f64) / (1.0 + q)
            }
        }
    }

    impl Law for LaplaceLaw {
        fn mass(&self, lo: i64, hi: i64) -> f64 {
            if hi < 0 {
                self.cdf(hi) - self.cdf(lo - 1)
            } else {
                // Upper tails, accurate when both are small.
                let q = (-1.0 / self.0).exp();
                let above = |y: i64| if y >= 0 { q.powf(y as f64 + 1.0) / (1.0 + q) } else { 1.0 - self.cdf(y) };
                above(lo - 1) - above(hi)
            }
        }
    }

    /// P[Y = y] ∝ exp(-y^2 / (2 var)), var >= 1. The normaliser by
    /// Poisson summation: sum_y exp(-y^2 / (2 var)) =
    /// sqrt(2 pi var) sum_k exp(-2 pi^2 k^2 var) (|k| <= 3 here: the next
    /// term is below exp(-300)); bin masses by summing the terms over
    /// |y| <= 12 sigma (beyond weighs below exp(-72)) with the recurrence
    /// w(y + 1) = w(y) r(y), r(y + 1) = r(y) exp(-1/var).
    struct GaussianLaw {
        var: f64,
        z: f64,
        r: i64,
    }

    impl GaussianLaw {
        fn new(var: f64) -> Self {
            let pi2 = std::f64::consts::PI.powi(2);
            let theta: f64 = 1.0 + 2.0 * (1..=3).map(|k| (-2.0 * pi2 * f64::from(k * k) * var).exp()).sum::<f64>();
            let z = (2.0 * std::f64::consts::PI * var).sqrt() * theta;
            GaussianLaw { var, z, r: (12.0 * var.sqrt()).ceil() as i64 }
        }
    }

    impl Law for GaussianLaw {
        fn mass(&self, lo: i64, hi: i64) -> f64 {
            let (lo, hi) = (lo.max(-self.r), hi.min(self.r));
            let (mut acc, v) = (0.0, self.var);
            let lof = lo as f64;
            let mut w = (-lof * lof / (2.0 * v)).exp();
            let mut ratio = (-(2.0 * lof + 1.0) / (2.0 * v)).exp();
            let step = (-1.0 / v).exp();
            for _ in lo..=hi {
                acc += w;
                w *= ratio;
                ratio *= step;
            }
            acc / self.z
        }
    }

    /// Chi-square p-value of `draws` against `law`, on bins of width
    /// ceil(2 r / 40) over [-r, r] plus the two tails, merged to expect >= 20.
    fn chi_square_p(draws: &[i64], law: &dyn Law, r: i64) -> f64 {
        let w = ((2 * r + 39) / 40).max(1);
        // Bin edges: (-inf, -r), [-r, -r + w), ..., [.., r], (r, inf).
        let mut bins: Vec<(i64, i64)> = vec![(i64::MIN / 2, -r - 1)];
        let mut lo = -r;
        while lo <= r {
            let hi = (lo + w - 1).min(r);
            bins.push((lo, hi));
            lo = hi + 1;
        }
        bins.push((r + 1, i64::MAX / 2));
        let n = draws.len() as f64;
        let probs: Vec<f64> = bins.iter().map(|&(a, b)| law.mass(a, b)).collect();
        let mut counts = vec![0u64; bins.len()];
        for &y in draws {
            let i = bins.partition_point(|&(_, b)| b < y);
            counts[i] += 1;
        }
        // Merge adjacent bins until each expects at least 20.
        let (mut merged_p, mut merged_c) = (Vec::new(), Vec::new());
        let (mut p_acc, mut c_acc) = (0.0, 0u64);
        for (p, c) in probs.iter().zip(&counts) {
            p_acc += p;
            c_acc += c;
            if p_acc * n >= 20.0 {
                merged_p.push(p_acc);
                merged_c.push(c_acc);
                (p_acc, c_acc) = (0.0, 0);
            }
        }
        *merged_p.last_mut().unwrap() += p_acc;
        *merged_c.last_mut().unwrap() += c_acc;
        let stat: f64 = merged_p
            .iter()
            .zip(&merged_c)
            .map(|(&p, &c)| {
                let e = p * n;
                (c as f64 - e).powi(2) / e
            })
            .sum();
        let df = (merged_p.len() - 1) as f64;
        gamma_q(df / 2.0, stat / 2.0)
    }

    /// Draws of the discrete Laplace with scale t (the general slow path
    /// only when `slow`).
    fn laplace_draws(seed: u64, t: u64, n: usize, slow: bool) -> Vec<i64> {
        let mut rng = SeedSequence::from_seed(seed).stream("laplace-fit");
        if slow {
            (0..n).map(|_| discrete_laplace_impl::<_, true>(&mut rng, t)).collect()
        } else {
            (0..n).map(|_| discrete_laplace_von_neumann(&mut rng, t)).collect()
        }
    }

    fn gaussian_draws(seed: u64, var: u128, n: usize, slow: bool) -> Vec<i64> {
        let mut rng = SeedSequence::from_seed(seed).stream("gaussian-fit");
        let g = DiscreteGaussian::new(var);
        if slow {
            (0..n).map(|_| g.sample::<_, true>(&mut rng)).collect()
        } else {
            (0..n).map(|_| g.sample::<_, false>(&mut rng)).collect()
        }
    }

    /// Sample mean of y^2 within 5 standard errors of `var`, the standard
    /// error from the exact fourth moment `m4`.
    fn assert_second_moment(draws: &[i64], var: f64, m4: f64, what: &str) {
        let n = draws.len() as f64;
        let got = draws.iter().map(|&y| (y as f64).powi(2)).sum::<f64>() / n;
        let se = ((m4 - var * var) / n).sqrt();
        assert!((got - var).abs() < 5.0 * se, "{what}: E[Y^2] {got} vs exact {var} (se {se})");
    }

    const FIT_DRAWS: usize = 100_000;

    #[test]
    fn discrete_laplace_has_the_exact_law() {
        for (i, t) in [1u64, 3, 1000, 1 << 20].into_iter().enumerate() {
            let draws = laplace_draws(10 + i as u64, t, FIT_DRAWS, false);
            let r = 8 * t as i64;
            let p = chi_square_p(&draws, &LaplaceLaw(t as f64), r);
            assert!(p > 1e-4, "t = {t}: chi-square p = {p}");
            // Power: t + 1 for small t, t (1 + 1/20) for large t (a law
            // 1/1000 away needs ~10^8 draws to tell apart).
            let wrong = if t < 10 { t as f64 + 1.0 } else { t as f64 * 1.05 };
            let p_wrong = chi_square_p(&draws, &LaplaceLaw(wrong), r);
            assert!(p_wrong < 1e-4, "t = {t}: the wrong scale {wrong} is not rejected (p = {p_wrong})");
            // Exact moments: E[Y^2] = 2q/(1-q)^2,
            // E[Y^4] = 2q(1 + 11q + 11q^2 + q^3) / ((1 + q)(1 - q)^4).
            let q = (-1.0 / t as f64).exp();
            let omq = -(-1.0 / t as f64).exp_m1();
            let var = 2.0 * q / (omq * omq);
            let m4 = 2.0 * q * (1.0 + 11.0 * q + 11.0 * q * q + q * q * q) / ((1.0 + q) * omq.powi(4));
            assert_second_moment(&draws, var, m4, &format!("Laplace t = {t}"));
        }
    }

    #[test]
    fn discrete_gaussian_has_the_exact_law() {
        for (i, var) in [1u128, 9, 1_000_000, 1 << 40].into_iter().enumerate() {
            let draws = gaussian_draws(20 + i as u64, var, FIT_DRAWS, false);
            let v = var as f64;
            let sigma = v.sqrt();
            let r = (5.0 * sigma).ceil() as i64;
            let p = chi_square_p(&draws, &GaussianLaw::new(v), r);
            assert!(p > 1e-4, "var = {var}: chi-square p = {p}");
            // Power: sigma + 1 for small sigma, sigma (1 + 1/20) for large.
            let wrong = if sigma < 10.0 { (sigma + 1.0).powi(2) } else { v * 1.05f64.powi(2) };
            let p_wrong = chi_square_p(&draws, &GaussianLaw::new(wrong), r);
            assert!(p_wrong < 1e-4, "var = {var}: the wrong variance {wrong} is not rejected (p = {p_wrong})");
            // Exact moments by summation of the pmf (for var >= 10^6 they
            // equal var and 3 var^2 up to a relative exp(-2 pi^2 var)).
            let (m2, m4) = if var < 100 {
                let law = GaussianLaw::new(v);
                let r = law.r;
                (-r..=r).fold((0.0, 0.0), |(a, b), y| {
                    let pm = law.mass(y, y);
                    let y2 = (y * y) as f64;
                    (a + pm * y2, b + pm * y2 * y2)
                })
            } else {
                (v, 3.0 * v * v)
            };
            assert_second_moment(&draws, m2, m4, &format!("Gaussian var = {var}"));
        }
    }

    /// Draws of a cell table (cells up to `reach` when given; the exact
    /// digit-by-digit acceptance on every draw when `slow`).
    fn cell_draws(seed: u64, shape: Shape, reach: Option<u64>, n: usize, slow: bool) -> Vec<i64> {
        let mut rng = SeedSequence::from_seed(seed).stream("cell-fit");
        let s = cell_sampler::CellSampler::with_reach(shape, reach);
        (0..n).map(|_| if slow { s.sample_impl::<_, true>(&mut rng) } else { s.sample(&mut rng) }).collect()
    }

    /// Chi-square against the exact law, and a wrong scale rejected.
    fn assert_cell_law(draws: &[i64], shape: Shape, what: &str) {
        match shape {
            Shape::Laplace { t } => {
                let r = 8 * t as i64;
                let p = chi_square_p(draws, &LaplaceLaw(t as f64), r);
                assert!(p > 1e-4, "{what} Laplace t = {t}: chi-square p = {p}");
                let wrong = if t < 10 { t as f64 + 1.0 } else { t as f64 * 1.05 };
                assert!(chi_square_p(draws, &LaplaceLaw(wrong), r) < 1e-4, "{what} t = {t}: wrong scale accepted");
            }
            Shape::Gaussian { var } => {
                let v = var as f64;
                let r = (5.0 * v.sqrt()).ceil() as i64;
                let p = chi_square_p(draws, &GaussianLaw::new(v), r);
                assert!(p > 1e-4, "{what} Gaussian var = {var}: chi-square p = {p}");
                let sigma = v.sqrt();
                let wrong = if sigma < 10.0 { (sigma + 1.0).powi(2) } else { v * 1.05f64.powi(2) };
                assert!(
                    chi_square_p(draws, &GaussianLaw::new(wrong), r) < 1e-4,
                    "{what} var = {var}: wrong variance accepted"
                );
            }
        }
    }

    #[test]
    fn rounding_to_integers_is_nearest_with_ties_to_even() {
        for (y, want) in
            [(0.4, 0.0), (0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-2.5, -2.0), (-0.6, -1.0), (3.0, 3.0), (1e15 + 0.5, 1e15)]
        {
            assert_eq!(round_to_integer(y), want, "{y}");
        }
        // Beyond 2^51 (integers and half-integers only), and NaN.
        assert_eq!(round_to_integer(2f64.powi(51) + 0.5), 2f64.powi(51) + 1.0);
        assert_eq!(round_to_integer(1e300), 1e300);
        assert!(round_to_integer(f64::NAN).is_nan());
        // Against the library's rounding away from exact ties.
        let mut rng = SeedSequence::from_seed(5).stream("round");
        for _ in 0..100_000 {
            let y = (rng.next_u64() as f64 / 2f64.powi(64) - 0.5) * 2f64.powi((rng.next_u64() % 60) as i32);
            if (y - y.trunc()).abs() != 0.5 {
                assert_eq!(round_to_integer(y), y.round(), "{y}");
            }
        }
    }

    #[test]
    fn cell_tables_have_the_exact_laws() {
        let shapes = cell_sampler::tests::TEST_SHAPES;
        for (i, shape) in shapes.into_iter().enumerate() {
            let draws = cell_draws(200 + i as u64, shape, None, FIT_DRAWS, false);
            assert_cell_law(&draws, shape, "cell table");
        }
    }

    #[test]
    fn cell_tables_exact_acceptance_alone_gives_the_exact_laws() {
        // The digit-by-digit comparison against certified bounds, which the
        // floating-point test leaves to about one draw in 10^6, on every draw.
        let shapes = [
            Shape::Laplace { t: 3 },
            Shape::Laplace { t: 1000 },
            Shape::Gaussian { var: 9 },
            Shape::Gaussian { var: 1_000_000 },
        ];
        for (i, shape) in shapes.into_iter().enumerate() {
            let draws = cell_draws(220 + i as u64, shape, None, 20_000, true);
            assert_cell_law(&draws, shape, "exact acceptance");
        }
    }

    #[test]
    fn cell_tables_tail_gives_the_exact_laws() {
        // Cells up to one scale only: the tail item (geometric proposal
        // beyond X, certified acceptance) carries e^-1 of the Laplace mass
        // and about 32% of the Gaussian's.
        let cases = [
            (Shape::Laplace { t: 1000 }, 1000),
            (Shape::Laplace { t: 2 }, 2),
            (Shape::Gaussian { var: 1_000_000 }, 1000),
            (Shape::Gaussian { var: 9 }, 3),
        ];
        for (i, (shape, reach)) in cases.into_iter().enumerate() {
            let draws = cell_draws(240 + i as u64, shape, Some(reach), FIT_DRAWS, false);
            assert_cell_law(&draws, shape, "short table");
        }
    }

    #[test]
    fn slow_paths_alone_give_the_exact_laws() {
        // The general paths (lazily extended uniforms), which the fast paths
        // reach with probability ~1e-4, forced on every trial.
        let n = 50_000;
        for (i, t) in [3u64, 1000].into_iter().enumerate() {
            let draws = laplace_draws(30 + i as u64, t, n, true);
            let p = chi_square_p(&draws, &LaplaceLaw(t as f64), 8 * t as i64);
            assert!(p > 1e-4, "slow Laplace t = {t}: p = {p}");
        }
        for (i, var) in [9u128, 1_000_000].into_iter().enumerate() {
            let draws = gaussian_draws(40 + i as u64, var, n, true);
            let r = (5.0 * (var as f64).sqrt()).ceil() as i64;
            let p = chi_square_p(&draws, &GaussianLaw::new(var as f64), r);
            assert!(p > 1e-4, "slow Gaussian var = {var}: p = {p}");
        }
    }

    #[test]
    fn odd_variances_and_the_symmetric_diagonal_have_the_exact_law() {
        // var not a perfect square (t = round(sqrt(var)) != sqrt(var)), and
        // the sample_into path of the symmetric matrix (diagonal 2 var).
        for (i, var) in [2u128, 7, 2 * 1_000_000].into_iter().enumerate() {
            let mut rng = SeedSequence::from_seed(50 + i as u64).stream("odd-var");
            let draws: Vec<i64> = (0..FIT_DRAWS).map(|_| discrete_gaussian(&mut rng, var)).collect();
            let r = (5.0 * (var as f64).sqrt()).ceil() as i64;
            let p = chi_square_p(&draws, &GaussianLaw::new(var as f64), r);
            assert!(p > 1e-4, "var = {var}: p = {p}");
        }
        let s = SecureNoise::new(NoiseSpec::SymmetricGaussian { sigma: 3.0 }, 0).unwrap();
        let mut rng = SeedSequence::from_seed(60).stream("symmetric");
        let (mut diag, mut off) = (Vec::new(), Vec::new());
        let mut out = [0.0; 9];
        for _ in 0..20_000 {
            s.sample_into(&mut rng, 3, &mut out);
            diag.extend([out[0], out[4], out[8]].map(|v| v as i64));
            off.extend([out[1], out[2], out[5]].map(|v| v as i64));
            assert!(out[1] == out[3] && out[2] == out[6] && out[5] == out[7]);
        }
        assert!(chi_square_p(&diag, &GaussianLaw::new(18.0), 22) > 1e-4);
        assert!(chi_square_p(&off, &GaussianLaw::new(9.0), 16) > 1e-4);
        assert!(chi_square_p(&diag, &GaussianLaw::new(9.0), 22) < 1e-4);
    }

    /// A generator replaying fixed words (then panicking): exercises the
    /// lazy digit extension at chosen boundaries.
    struct Words(Vec<u64>, usize);

    impl RngCore for Words {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.1 += 1;
            self.0[self.1 - 1]
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {
            unimplemented!()
        }
    }

    #[test]
    fn lazy_digits_decide_boundary_cases_exactly() {
        // floor(t T) against exact arithmetic on two-word T (later words 0).
        let third = 0x5555_5555_5555_5555u64; // 3 * third = 2^64 - 1: ambiguous for t = 3
        for (t, w0, w1) in [
            (3u64, third, 0u64),
            (3, third, u64::MAX / 3),
            (3, third, u64::MAX / 3 + 1),
            (3, third, u64::MAX),
            (1 << 20, u64::MAX, u64::MAX),
            (1 << 20, 1 << 44, 0),
            (1000, 0x0041_8937_4bc6_a7f0, 0xffff_ffff_ffff_f000),
        ] {
            let exact = ((u128::from(t) * u128::from(w0) + ((u128::from(t) * u128::from(w1)) >> 64)) >> 64) as u64;
            let mut words = [w0, w1, 0, 0, 0].into_iter();
            let got = floor_mul_words(t, &mut || words.next().unwrap());
            assert_eq!(got, exact, "t = {t}, words {w0:#x} {w1:#x}");
        }
        // u < 1/3 with head floor(2^12 / 3) = 1365: the tail against
        // 1/3 = 0.010101...b.
        let alt = 0x5555_5555_5555_5555u64;
        for (tail, below) in [([alt, 0], true), ([alt, u64::MAX], false), ([alt - 1, 0], true), ([alt + 1, 0], false)] {
            let mut rng = Words(tail.to_vec(), 0);
            let mut u = LazyUniform::new(1365);
            assert_eq!(lazy_below_ratio(&mut rng, &mut u, 1, 3), below, "{tail:x?}");
        }
        // Heads tie: the first differing tail word decides.
        let mut rng = Words(vec![7, 7, 1, 2], 0);
        let (mut a, mut b) = (LazyUniform::new(5), LazyUniform::new(5));
        assert!(lazy_less(&mut rng, &mut a, &mut b));
        assert_eq!((a.tail.as_slice(), b.tail.as_slice()), ([7, 1].as_slice(), [7, 2].as_slice()));
    }

    #[test]
    fn bernoulli_exp_paths_match_their_probability() {
        // Fast, slow-only, and CKS (den > 2^112) paths, gamma below and above 1.
        let n = 100_000;
        let big = 1u128 << 120;
        let cases: [(u128, u128, u8); 7] =
            [(1, 3, 0), (1, 3, 1), (1, 1, 1), (5, 2, 1), (big / 3, big, 2), (3 * big / 2, big, 2), (0, 7, 1)];
        for (seed, (num, den, path)) in cases.into_iter().enumerate() {
            let mut rng = SeedSequence::from_seed(70 + seed as u64).stream("bern");
            let hits = (0..n)
                .filter(|_| match path {
                    0 => bernoulli_exp_neg_fast::<_, false>(&mut rng, num, den),
                    1 => bernoulli_exp_neg_fast::<_, true>(&mut rng, num, den),
                    _ => bernoulli_exp_neg(&mut rng, num, den),
                })
                .count();
            let p = (-(num as f64) / den as f64).exp();
            let sd = (p * (1.0 - p) / f64::from(n)).sqrt().max(1e-9);
            let got = hits as f64 / f64::from(n);
            assert!((got - p).abs() < 5.0 * sd + 1e-12, "gamma {num}/{den} path {path}: {got} vs {p}");
        }
    }

    /// Counts the words drawn from the inner generator.
    struct Counting<R>(R, u64);

    impl<R: RngCore> RngCore for Counting<R> {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.1 += 1;
            self.0.next_u64()
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {
            unimplemented!()
        }
    }

    #[test]
    fn generator_words_per_draw_are_as_designed() {
        // Cell table (t = 2^20, cells of w = t/32): a trial is one word; it
        // is accepted with probability a = (1 - 2^-10) 32 (1 - e^{-1/32}) =
        // 0.98351 (the dummy's share, and the mean of exp(-o/t) over a
        // cell), and takes a second word when the first test (u < 1 - delta,
        // on 17 digits) fails: (1 - 2^-10) E[delta] = 0.99902 (2^15 - 1) /
        // 2^21 = 0.01561 of the trials. (1 + 0.01561) / 0.98351 = 1.0326
        // words per draw.
        let n = 20_000u32;
        let mut rng = Counting(SeedSequence::from_seed(79).stream("count"), 0);
        for _ in 0..n {
            discrete_laplace(&mut rng, 1 << 20);
        }
        let per = rng.1 as f64 / f64::from(n);
        assert!((per - 1.0326).abs() < 0.006, "cell-table Laplace: {per} words per draw");
        // von Neumann: 1/(1 - e^-1) = 1.582 trials per draw, each one word plus
        // one per uniform after the fifth (sum_{j >= 5} 1/j! = 0.00995),
        // plus one tail word when the trial accepted on the slow path
        // (N odd >= 5: 1/120 - 1/720 per trial) or when floor(t U_1) is
        // not settled by U_1's 24 known digits after N = 3 (1/8 per trial,
        // then chance t / 2^24 = 1/16): 1.582 * (1.00995 + 0.00694) +
        // 1.582 * 0.125 / 16 = 1.621.
        let mut rng = Counting(SeedSequence::from_seed(80).stream("count"), 0);
        for _ in 0..n {
            discrete_laplace_von_neumann(&mut rng, 1 << 20);
        }
        let per = rng.1 as f64 / f64::from(n);
        assert!((per - 1.621).abs() < 0.02, "von Neumann Laplace: {per} words per draw");
        let mut old = Counting(SeedSequence::from_seed(80).stream("count"), 0);
        for _ in 0..n {
            cks_discrete_laplace(&mut old, 1 << 20);
        }
        let mut rng = Counting(SeedSequence::from_seed(81).stream("count"), 0);
        let g = DiscreteGaussian::new(1 << 40);
        for _ in 0..n {
            g.sample::<_, false>(&mut rng);
        }
        eprintln!(
            "words per draw: Laplace {per:.3} (CKS Alg. 2: {:.3}), Gaussian {:.3}",
            old.1 as f64 / f64::from(n),
            rng.1 as f64 / f64::from(n)
        );
    }

    /// CKS 2020, Alg. 2 with the bit-by-bit Bernoulli draws (the previous
    /// sampler), kept for comparison.
    fn cks_discrete_laplace<R: RngCore + ?Sized>(rng: &mut R, t: u64) -> i64 {
        let t64 = t.max(1);
        let t = u128::from(t64);
        loop {
            let u = u128::from(uniform_below_u64(rng, t64));
            if !bernoulli_exp_neg_unit(rng, u, t) {
                continue;
            }
            let mut v: u128 = 0;
            while bernoulli_exp_neg_unit(rng, 1, 1) {
                v += 1;
            }
            let magnitude = u + t * v;
            let negative = rng.next_u64() & 1 == 1;
            if negative && magnitude == 0 {
                continue;
            }
            let y = i64::try_from(magnitude).unwrap_or(i64::MAX);
            return if negative { -y } else { y };
        }
    }
}
