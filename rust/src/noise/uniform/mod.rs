//! Exact uniform draws: integers below a bound, and uniforms in [0, 1)
//! whose binary digits are revealed lazily.
//!
//! [`uniform_below`] (1 <= n < 2^128) and [`uniform_below_u64`]
//! (1 <= n <= 2^64 - 1) draw an integer in [0, n) exactly, rejecting the
//! generator words that would bias it.
//!
//! The lazy uniform serves the exact samplers ([`super::bernoulli`],
//! [`super::discrete_laplace`]), whose every decision is an integer
//! comparison of exact uniform bits, with no floating point (Mironov 2012,
//! "On significance of the least significant bits for differential
//! privacy": see [`super::lattice`]). A uniform U in [0, 1) is revealed
//! lazily: a 12-bit head (U's first 12 binary digits) and, only when a
//! decision needs them, 64-bit tail words (the following digits). Five
//! heads come from one generator word, so a comparison between uniforms
//! costs a few integer instructions and no branch; only a tie between heads
//! (probability 2^-12) or a long descending run sends a draw to the general
//! (slow, equally exact) path, which extends the uniforms word by word.

use rand_core::RngCore;

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

/// Binary digits in the head of a lazily drawn uniform.
pub(super) const HEAD_BITS: u32 = 12;
const HEAD_MASK: u64 = (1 << HEAD_BITS) - 1;

/// Largest `den` of a ratio num/den a lazy uniform is compared with
/// ([`lazy_below_ratio`]), and so the largest for which the fast
/// Bernoulli(exp(-num/den)) is used (num * 2^12 and head * den stay below
/// 2^127).
pub(super) const FAST_DEN_MAX: u128 = 1 << 112;

/// The five 12-bit heads in one word: bits 63..52, 51..40, 39..28, 27..16,
/// 15..4 (bits 3..0 are left for the caller: bit 0 is a Laplace sign).
#[inline]
pub(super) fn heads(w: u64) -> [u64; 5] {
    [w >> 52, (w >> 40) & HEAD_MASK, (w >> 28) & HEAD_MASK, (w >> 16) & HEAD_MASK, (w >> 4) & HEAD_MASK]
}

/// A uniform in [0, 1) with lazily drawn digits: head / 2^12 +
/// sum_i tail[i] 2^-(12 + 64 (i + 1)). Used by the rare slow paths only
/// (the tail vector allocates only when a digit beyond the head is needed).
pub(super) struct LazyUniform {
    pub(super) head: u64,
    tail: Vec<u64>,
}

impl LazyUniform {
    pub(super) fn new(head: u64) -> Self {
        LazyUniform { head, tail: Vec::new() }
    }

    /// A uniform with a fresh head (the top 12 bits of a new word).
    pub(super) fn fresh<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        LazyUniform::new(rng.next_u64() >> (64 - HEAD_BITS))
    }

    /// Tail word i, drawn on first use.
    pub(super) fn word<R: RngCore + ?Sized>(&mut self, rng: &mut R, i: usize) -> u64 {
        while self.tail.len() <= i {
            self.tail.push(rng.next_u64());
        }
        self.tail[i]
    }
}

/// a < b, exactly (digits drawn until they differ; equality has
/// probability 0 and would loop on forever drawing digits).
pub(super) fn lazy_less<R: RngCore + ?Sized>(rng: &mut R, a: &mut LazyUniform, b: &mut LazyUniform) -> bool {
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
pub(super) fn lazy_below_ratio<R: RngCore + ?Sized>(rng: &mut R, u: &mut LazyUniform, num: u128, den: u128) -> bool {
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
pub(super) fn floor_mul_words<F: FnMut() -> u64>(t: u64, next: &mut F) -> u64 {
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

#[cfg(test)]
mod test;
