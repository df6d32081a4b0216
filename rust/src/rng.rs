//! Seeded, splittable random-number streams.
//!
//! One root seed gives any number of independent, named streams
//! (`"learner"`, `"environment"`, `"tree"`, ...), each optionally indexed
//! (replicate, node, arm). Two objects built from the same root and the same
//! stream name draw the same numbers on every platform: this is what makes
//! common-random-number comparisons between learners possible
//! (environments and learners draw from separate streams).
//!
//! The generator is ChaCha with 8 rounds. ChaCha is a pseudo-random function
//! of (key, stream, counter), so a child key read from the root at
//! (stream = hash(name), counter = index) is computationally independent of
//! every other child; ChaCha8 has no known distinguisher and is several
//! times faster than ChaCha20, which matters because noise and environment
//! draws dominate the simulation cost. For deployment, [`SeedSequence::from_entropy`]
//! takes the root key from the operating system, so no seed exists that an
//! adversary could guess.
//!
//! Environments of simulations draw from [`SimulationRng`] instead
//! (Xoshiro256++, seeded from the same ChaCha derivation): their draws play
//! no part in any privacy guarantee, and generating a fresh decision set
//! each round costs over a hundred Gaussian draws, so a generator several
//! times faster than ChaCha8 is what makes the D.2 workload run at more
//! than a million rounds per second. Everything that produces privacy
//! noise stays on ChaCha.
//!
//! Their Gaussian draws come from [`SimulationNormals`]: four interleaved
//! Xoshiro256++ lanes (the compiler vectorises the lanes' steps) feed a
//! 256-layer ziggurat (Marsaglia & Tsang 2000) that turns a block of
//! [`NORMAL_BLOCK`] raw words into as many exact standard normals at once,
//! instead of one generator call and one sampler call per normal.
//! [`SimulationUniforms`] gives uniforms from the same kind of lanes (with
//! xoshiro256+'s output function, the one meant for floats), for
//! environments' rejection samplers and angles.
//!
//! Privacy noise draws its Gaussians with [`standard_normal`]: the same
//! ziggurat, one ChaCha8 word at a time (no block, so no drawn-ahead noise
//! in the serialized state).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_core::{OsRng, RngCore, TryRngCore};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The generator behind every stream that produces privacy noise.
pub type StreamRng = ChaCha8Rng;

/// The generator of simulated environments (never of privacy noise).
pub type SimulationRng = rand_xoshiro::Xoshiro256PlusPlus;

/// A root key from which named streams are derived.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedSequence {
    key: [u8; 32],
}

/// SplitMix64 step: expands a 64-bit seed into well-mixed words.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a: a fixed, platform-independent hash of a stream name.
fn fnv1a(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

impl SeedSequence {
    /// A reproducible root from a 64-bit seed.
    pub fn from_seed(seed: u64) -> Self {
        let mut state = seed;
        let mut key = [0u8; 32];
        for chunk in key.chunks_exact_mut(8) {
            chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
        }
        SeedSequence { key }
    }

    /// A root keyed by the operating system's entropy source (deployment
    /// mode: nothing about the noise can be reproduced from a seed).
    pub fn from_entropy() -> Result<Self> {
        let mut key = [0u8; 32];
        OsRng
            .try_fill_bytes(&mut key)
            .map_err(|e| Error::State(format!("operating-system entropy unavailable: {e}")))?;
        Ok(SeedSequence { key })
    }

    /// A root from raw key bytes (used when restoring state).
    pub fn from_key(key: [u8; 32]) -> Self {
        SeedSequence { key }
    }

    /// The stream `name`, index 0.
    pub fn stream(&self, name: &str) -> StreamRng {
        self.substream(name, 0)
    }

    /// The `index`-th stream called `name` (e.g. one per replicate).
    pub fn substream(&self, name: &str, index: u64) -> StreamRng {
        StreamRng::from_seed(self.child_key(name, index))
    }

    /// The stream `name` as a fast simulation generator (environments
    /// only; see the module documentation).
    pub fn simulation_stream(&self, name: &str) -> SimulationRng {
        SimulationRng::from_seed(self.child_key(name, 0))
    }

    /// The stream `name` as a block generator of standard normals
    /// (environments only; see [`SimulationNormals`]).
    pub fn simulation_normals(&self, name: &str) -> SimulationNormals {
        SimulationNormals::from_key(self.child_key(name, 0))
    }

    /// The stream `name` as a block generator of uniforms on (0, 1)
    /// (environments only; see [`SimulationUniforms`]).
    pub fn simulation_uniforms(&self, name: &str) -> SimulationUniforms {
        SimulationUniforms::from_key(self.child_key(name, 0))
    }

    /// A child root: everything derived from it is independent of the
    /// parent's other children. Used to give each replicate its own tree.
    #[must_use]
    pub fn child(&self, name: &str, index: u64) -> SeedSequence {
        SeedSequence { key: self.child_key(name, index) }
    }

    fn child_key(&self, name: &str, index: u64) -> [u8; 32] {
        let mut root = ChaCha8Rng::from_seed(self.key);
        root.set_stream(fnv1a(name));
        // 8 words of 32 bits = one 32-byte child key per index.
        root.set_word_pos(u128::from(index) * 8);
        let mut key = [0u8; 32];
        root.fill_bytes(&mut key);
        key
    }
}

/// Normals per refill of [`SimulationNormals`].
pub const NORMAL_BLOCK: usize = 256;

// Rejected positions are flagged in 64-bit masks.
const _: () = assert!(NORMAL_BLOCK.is_multiple_of(64));

/// Interleaved generator lanes of [`SimulationNormals`].
pub(crate) const LANES: usize = 4;

/// The xoshiro256 jump polynomial: 2^128 steps.
const JUMP: [u64; 4] = [0x180e_c6d3_3cfd_0aba, 0xd5a6_1266_f0c9_392c, 0xa958_2618_e03f_c9aa, 0x39ab_dc45_29b1_661c];

/// One Xoshiro256++ step on a single state: returns the output word.
#[inline]
fn xoshiro_step(s: &mut [u64; 4]) -> u64 {
    let out = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
    let t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3].rotate_left(45);
    out
}

/// Advances `s` by 2^128 steps (Blackman & Vigna's jump function).
fn xoshiro_jump(s: &mut [u64; 4]) {
    let mut acc = [0u64; 4];
    for word in JUMP {
        for bit in 0..64 {
            if word & (1u64 << bit) != 0 {
                for (a, v) in acc.iter_mut().zip(s.iter()) {
                    *a ^= v;
                }
            }
            xoshiro_step(s);
        }
    }
    *s = acc;
}

/// The 256-layer ziggurat for the standard normal (Marsaglia & Tsang 2000,
/// "The Ziggurat Method for Generating Random Variables", J. Stat. Softw.
/// 5(8)): layer i >= 1 is the box [0, x[i]] x [f(x[i]), f(x[i+1])] of
/// area V under f(x) = exp(-x^2/2); layer 0 is the box [0, R] x [0, f(R)]
/// plus the tail beyond R, also of area V, and x[0] = V / f(R).
struct Ziggurat {
    x: [f64; 257],
    f: [f64; 257],
}

/// Start of the tail and common layer area of the 256-layer ziggurat
/// (Marsaglia & Tsang 2000, Section 3, n = 256).
const ZIG_R: f64 = 3.654_152_885_361_009;
const ZIG_V: f64 = 0.004_928_673_233_99;

static ZIGGURAT: std::sync::LazyLock<Ziggurat> = std::sync::LazyLock::new(|| {
    let f = |x: f64| (-0.5 * x * x).exp();
    let mut x = [0.0; 257];
    x[0] = ZIG_V / f(ZIG_R);
    x[1] = ZIG_R;
    for i in 1..255 {
        x[i + 1] = (-2.0 * (ZIG_V / x[i] + f(x[i])).ln()).sqrt();
    }
    x[256] = 0.0;
    let mut fx = [0.0; 257];
    for i in 0..257 {
        fx[i] = f(x[i]);
    }
    Ziggurat { x, f: fx }
});

/// A uniform in (0, 1) from the top 53 bits of a word (never 0: logarithms
/// of it are finite).
#[inline]
fn open01(bits: u64) -> f64 {
    ((bits >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// A uniform in [-1, 1) from the top 52 bits of a word (disjoint from the
/// low 8 bits that choose the layer).
#[inline]
fn symmetric01(bits: u64) -> f64 {
    f64::from_bits((bits >> 12) | 0x3FF0_0000_0000_0000) * 2.0 - 3.0
}

/// Standard normals for simulated environments, a block at a time.
///
/// Four Xoshiro256++ lanes, 2^128 steps apart (jumps 1 to 4 from the
/// stream's key), produce [`NORMAL_BLOCK`] words per refill; each word
/// becomes one normal through the ziggurat's fast path (its low 8 bits pick
/// a layer, its top 52 bits the abscissa), which accepts about 99% of them.
/// The rest finish the ziggurat's exact rejection step (tail and wedges)
/// with words from a scalar Xoshiro256++ on the key itself (jump 0), so
/// every value is an exact N(0, 1) draw and values are independent.
/// Never for privacy noise (see the module documentation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimulationNormals {
    /// `lanes[j][l]`: state word j of lane l (word-major so that one lane
    /// step is a handful of vector instructions over the lanes).
    lanes: [[u64; LANES]; 4],
    /// Words for the slow path and for any other scalar draw of the owner.
    scalar: SimulationRng,
    block: Vec<f64>,
    next: usize,
}

impl SimulationNormals {
    /// The generator keyed by `key` (see [`SeedSequence::simulation_normals`]).
    pub fn from_key(key: [u8; 32]) -> Self {
        let scalar = SimulationRng::from_seed(key);
        SimulationNormals { lanes: jumped_lanes(key), scalar, block: vec![0.0; NORMAL_BLOCK], next: NORMAL_BLOCK }
    }

    /// The scalar generator (the owner's uniform draws come from here).
    pub fn scalar(&mut self) -> &mut SimulationRng {
        &mut self.scalar
    }

    /// Checks the invariants of a deserialized generator.
    pub fn is_consistent(&self) -> bool {
        self.block.len() == NORMAL_BLOCK && self.next <= NORMAL_BLOCK
    }

    /// Fills `out` with the next standard normals.
    #[inline]
    pub fn fill(&mut self, out: &mut [f64]) {
        let mut done = 0;
        while done < out.len() {
            if self.next == NORMAL_BLOCK {
                self.refill();
            }
            let n = (out.len() - done).min(NORMAL_BLOCK - self.next);
            out[done..done + n].copy_from_slice(&self.block[self.next..self.next + n]);
            self.next += n;
            done += n;
        }
    }

    /// The next standard normal.
    #[inline]
    pub fn next_normal(&mut self) -> f64 {
        let mut z = [0.0];
        self.fill(&mut z);
        z[0]
    }

    /// The lanes' next `NORMAL_BLOCK` words, lane-interleaved.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn next_words(&mut self, words: &mut [u64; NORMAL_BLOCK]) {
        step_lanes(&mut self.lanes, words);
    }

    /// The next `n` (at most [`NORMAL_BLOCK`]) standard normals, in place.
    /// When fewer than `n` remain in the block, they are skipped and a new
    /// block is drawn (values are independent, so skipping some does not
    /// change the law of the rest).
    #[inline]
    pub fn take(&mut self, n: usize) -> &[f64] {
        assert!(n <= NORMAL_BLOCK, "at most NORMAL_BLOCK normals at a time");
        if NORMAL_BLOCK - self.next < n {
            self.refill();
        }
        let start = self.next;
        self.next += n;
        &self.block[start..start + n]
    }

    /// Draws a fresh block (through [`crate::cpu_dispatch`]: the AVX2
    /// build steps all four lanes in one instruction; both builds draw the
    /// same values bit for bit, as the block uses no fused arithmetic).
    fn refill(&mut self) {
        refill_normals(self);
    }

    /// The body of [`SimulationNormals::refill`] with the portable lane
    /// steps and fast path, inlined into each build.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn refill_with_this_build(&mut self) {
        self.refill_with(Self::next_words, fast_path_portable);
    }

    /// A fresh block: `next_words` fills the lanes' next words (it must
    /// equal [`SimulationNormals::next_words`]), then `fast` runs over each
    /// 64 of them (it writes x = U(-1, 1) x[i] for each word, i its low 8
    /// bits, and returns the mask of |x| >= x[i + 1]: the ~1% outside
    /// their layer's inner box, finished afterwards by the exact slow
    /// path, so the fast path has no branch and no data-dependent store).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn refill_with(
        &mut self,
        next_words: impl FnOnce(&mut Self, &mut [u64; NORMAL_BLOCK]),
        fast: impl Fn(&[f64; 257], &[u64], &mut [f64]) -> u64,
    ) {
        let zig = &*ZIGGURAT;
        let mut words = [0u64; NORMAL_BLOCK];
        next_words(self, &mut words);
        let mut masks = [0u64; NORMAL_BLOCK / 64];
        for (mask, (zs, ws)) in masks.iter_mut().zip(self.block.chunks_exact_mut(64).zip(words.chunks_exact(64))) {
            *mask = fast(&zig.x, ws, zs);
        }
        for (c, &mask) in masks.iter().enumerate() {
            let mut m = mask;
            while m != 0 {
                let j = c * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                let i = (words[j] & 0xff) as usize;
                self.block[j] = slow_normal(zig, &mut self.scalar, i, self.block[j]);
            }
        }
        self.next = 0;
    }

    /// The lane states, word-major (`lanes[j][l]`: word j of lane l).
    pub(crate) fn lanes_mut(&mut self) -> &mut [[u64; LANES]; 4] {
        &mut self.lanes
    }
}

/// Steps the four interleaved Xoshiro256++ lanes (`lanes[j][l]`: state
/// word j of lane l) through `words.len() / LANES` steps, writing their
/// outputs lane-interleaved. The portable build; `avx2_fma` below has the
/// AVX2 one, which yields the same words.
// One loop per operation over the lanes: the shape the vectoriser wants.
// inline(always): generated inside the AVX2 build (`avx2_fma`) too.
#[allow(clippy::needless_range_loop, clippy::inline_always)]
#[inline(always)]
pub(crate) fn step_lanes(lanes: &mut [[u64; LANES]; 4], words: &mut [u64; NORMAL_BLOCK]) {
    step_lanes_with::<PLUS_PLUS>(lanes, words);
}

/// The output functions of the xoshiro256 family (Blackman & Vigna,
/// "Scrambled linear pseudorandom number generators", ACM TOMS 47(4), 2021,
/// Section 4): `++`, rotl(s0 + s3, 23) + s0, for words whose every bit is
/// used (the ziggurat takes its layer from the low bits); `+`, s0 + s3,
/// whose lowest bits are weak (low linear complexity) but whose top bits
/// are as good: the generator the authors give for floating-point numbers,
/// for [`SimulationUniforms`], which keeps only the top 52 bits. Both share
/// the state update.
pub(crate) const PLUS_PLUS: bool = true;
pub(crate) const PLUS: bool = false;

/// [`step_lanes`] with the output function chosen by `SCRAMBLER` ([`PLUS_PLUS`]
/// or [`PLUS`]).
#[allow(clippy::needless_range_loop, clippy::inline_always)]
#[inline(always)]
pub(crate) fn step_lanes_with<const SCRAMBLER: bool>(lanes: &mut [[u64; LANES]; 4], words: &mut [u64; NORMAL_BLOCK]) {
    // Local copies keep the state in registers for the whole block.
    let [mut s0, mut s1, mut s2, mut s3] = *lanes;
    for chunk in words.chunks_exact_mut(LANES) {
        for l in 0..LANES {
            let sum = s0[l].wrapping_add(s3[l]);
            chunk[l] = if SCRAMBLER == PLUS_PLUS { sum.rotate_left(23).wrapping_add(s0[l]) } else { sum };
        }
        let mut t = [0u64; LANES];
        for l in 0..LANES {
            t[l] = s1[l] << 17;
        }
        for l in 0..LANES {
            s2[l] ^= s0[l];
        }
        for l in 0..LANES {
            s3[l] ^= s1[l];
        }
        for l in 0..LANES {
            s1[l] ^= s2[l];
        }
        for l in 0..LANES {
            s0[l] ^= s3[l];
        }
        for l in 0..LANES {
            s2[l] ^= t[l];
        }
        for l in 0..LANES {
            s3[l] = s3[l].rotate_left(45);
        }
    }
    *lanes = [s0, s1, s2, s3];
}

/// Four Xoshiro256++ lanes from a stream key, lane l at 2^128 (l + 1)
/// steps from the key's own state (which stays the scalar stream's), so
/// no lane overlaps another or the scalar stream.
fn jumped_lanes(key: [u8; 32]) -> [[u64; LANES]; 4] {
    let mut state = [0u64; 4];
    for (w, chunk) in state.iter_mut().zip(key.chunks_exact(8)) {
        *w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
    }
    if state == [0; 4] {
        // The all-zero state is a fixed point of xoshiro.
        state = [0x9E37_79B9_7F4A_7C15, 1, 2, 3];
    }
    let mut lanes = [[0u64; LANES]; 4];
    for l in 0..LANES {
        xoshiro_jump(&mut state);
        for (word, &v) in lanes.iter_mut().zip(&state) {
            word[l] = v;
        }
    }
    lanes
}

/// Uniforms on (0, 1) for simulated environments, a block at a time, from
/// the same kind of four interleaved lanes as [`SimulationNormals`], with
/// xoshiro256+'s output function (see [`PLUS`]; 52-bit resolution, never
/// 0 or 1). One scalar generator's next word waits for
/// the previous one's state update; the lanes' words come four to an
/// instruction, which is what a rejection sampler that spends two
/// uniforms per proposal needs. Never for privacy noise.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimulationUniforms {
    lanes: [[u64; LANES]; 4],
    block: Vec<f64>,
    next: usize,
}

impl SimulationUniforms {
    /// The generator keyed by `key` (see [`SeedSequence::simulation_uniforms`]).
    pub fn from_key(key: [u8; 32]) -> Self {
        SimulationUniforms { lanes: jumped_lanes(key), block: vec![0.0; NORMAL_BLOCK], next: NORMAL_BLOCK }
    }

    /// Checks the invariants of a deserialized generator.
    pub fn is_consistent(&self) -> bool {
        self.block.len() == NORMAL_BLOCK && self.next <= NORMAL_BLOCK
    }

    /// The next `n` (at most [`NORMAL_BLOCK`]) uniforms; as
    /// [`SimulationNormals::take`], a block's remainder shorter than `n`
    /// is skipped.
    #[inline]
    pub fn take(&mut self, n: usize) -> &[f64] {
        assert!(n <= NORMAL_BLOCK, "at most NORMAL_BLOCK uniforms at a time");
        if NORMAL_BLOCK - self.next < n {
            let block: &mut [f64; NORMAL_BLOCK] = (&mut self.block[..]).try_into().expect("block has NORMAL_BLOCK");
            lane_uniforms(&mut self.lanes, block);
            self.next = 0;
        }
        let start = self.next;
        self.next += n;
        &self.block[start..start + n]
    }
}

/// The lanes' next [`NORMAL_BLOCK`] words as uniforms on (0, 1) (see
/// [`open01_vectorisable`]). The portable build; `avx2_fma` below has the
/// AVX2 one, which converts each step's words in registers with the same
/// constants, so the same values.
pub(crate) fn lane_uniforms_portable(lanes: &mut [[u64; LANES]; 4], out: &mut [f64; NORMAL_BLOCK]) {
    let mut words = [0u64; NORMAL_BLOCK];
    step_lanes_with::<PLUS>(lanes, &mut words);
    for (u, &w) in out.iter_mut().zip(&words) {
        *u = open01_vectorisable(w);
    }
}

/// The exponent bits of 1.0, under which [`open01_vectorisable`] places a
/// word's top 52 bits.
pub(crate) const UNIT_EXPONENT: u64 = 0x3FF0_0000_0000_0000;
/// 1 - 2^-53, subtracted by [`open01_vectorisable`].
pub(crate) const ONE_MINUS_HALF_ULP: f64 = 1.0 - 1.0 / (1u64 << 53) as f64;

/// A uniform on (0, 1) from the top 52 bits m of a word: (m + 1/2) 2^-52,
/// built without an integer-to-float conversion (x86-64 before AVX-512 has
/// none for 64-bit lanes, so `as f64` cost one scalar instruction per
/// word, most of a uniform block's cost): m under the exponent of 1.0 is
/// 1 + m 2^-52, and subtracting 1 - 2^-53 leaves (2m + 1) 2^-53 exactly.
/// Never 0 or 1, and 2u - 1 is never 0 either.
#[inline]
fn open01_vectorisable(bits: u64) -> f64 {
    f64::from_bits(UNIT_EXPONENT | (bits >> 12)) - ONE_MINUS_HALF_ULP
}

/// The ziggurat's fast path over 64 words, one at a time (see
/// [`SimulationNormals::refill_with`]).
#[allow(clippy::inline_always)]
#[inline(always)]
fn fast_path_portable(x_table: &[f64; 257], words: &[u64], out: &mut [f64]) -> u64 {
    let mut m = 0u64;
    for (j, (z, &bits)) in out.iter_mut().zip(words).enumerate() {
        let (_, x, inside) = layer_candidate(x_table, bits);
        *z = x;
        m |= u64::from(!inside) << j;
    }
    m
}

/// The ziggurat's proposal from one word: its low 8 bits pick layer i, its
/// top 52 bits an abscissa x uniform on the layer's width with a random
/// sign; `inside` when |x| falls in the layer's inner box, where x is
/// accepted at once. Returns (i, x, inside).
#[allow(clippy::inline_always)]
#[inline(always)]
fn layer_candidate(x_table: &[f64; 257], bits: u64) -> (usize, f64, bool) {
    let i = (bits & 0xff) as usize;
    let x = symmetric01(bits) * x_table[i];
    (i, x, x.abs() < x_table[i + 1])
}

/// One exact standard normal from `rng` by the same 256-layer ziggurat as
/// [`SimulationNormals`], one 64-bit word at a time: the sampler of the
/// privacy noise (Gaussian, Wishart), which stays on its ChaCha stream.
/// Cheaper than `rand_distr`'s `StandardNormal` on ChaCha8 (one word and
/// one table lookup on the fast path), with the same law: the fast path accepts the ~99% of words whose
/// abscissa falls inside its layer's inner box, the rest finish the exact
/// tail and wedge tests. Inlined into its callers: the phased Thompson
/// sampling draws one per arm every round, where the call itself showed.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn standard_normal<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    let zig = &*ZIGGURAT;
    let (i, x, inside) = layer_candidate(&zig.x, rng.next_u64());
    if inside {
        x
    } else {
        slow_normal(zig, rng, i, x)
    }
}

/// A uniform in (0, 1) from one word of `rng` (never 0 or 1).
#[inline]
pub fn open_unit<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    open01(rng.next_u64())
}

/// A uniform in [0, 1) from one word of `rng`: the same value as
/// `rng.random::<f64>()` (rand's `StandardUniform`: the word's top 53
/// bits times 2^-53), always inlined: through `rand` the draw is a
/// function call on every K-armed round's path.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn unit_f64<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Finishes a ziggurat draw whose fast path failed: `x` was uniform on layer
/// `i`'s width (with a random sign) but outside its inner box.
#[cold]
fn slow_normal<R: RngCore + ?Sized>(zig: &Ziggurat, rng: &mut R, mut i: usize, mut x: f64) -> f64 {
    loop {
        if i == 0 {
            // The tail beyond R (Marsaglia 1964): R + E1 / R conditioned on
            // 2 E2 >= (E1 / R)^2, with E1, E2 exponential.
            loop {
                let t = -open01(rng.next_u64()).ln() / ZIG_R;
                let e = -open01(rng.next_u64()).ln();
                if 2.0 * e >= t * t {
                    return if x < 0.0 { -(ZIG_R + t) } else { ZIG_R + t };
                }
            }
        }
        // The wedge: accept when a uniform height in [f(x[i]), f(x[i+1])]
        // falls under the density.
        let y = zig.f[i] + open01(rng.next_u64()) * (zig.f[i + 1] - zig.f[i]);
        if y < (-0.5 * x * x).exp() {
            return x;
        }
        // Start over with a fresh word.
        let inside;
        (i, x, inside) = layer_candidate(&zig.x, rng.next_u64());
        if inside {
            return x;
        }
    }
}

/// A fresh block of normals, by the AVX2 build when the CPU has it (see
/// [`SimulationNormals`]'s `refill`). A free function: the dispatch's
/// `unsafe` call stays out of the generator's (deserializable) methods.
fn refill_normals(normals: &mut SimulationNormals) {
    crate::cpu_dispatch::on_avx2_fma!(avx2_fma::refill_normals(normals));
    normals.refill_with_this_build();
}

/// The lanes' next block of uniforms (see [`SimulationUniforms`]), by the
/// AVX2 build when the CPU has it; the same values in both builds.
fn lane_uniforms(lanes: &mut [[u64; LANES]; 4], out: &mut [f64; NORMAL_BLOCK]) {
    crate::cpu_dispatch::on_avx2_fma!(avx2_fma::lane_uniforms(lanes, out));
    lane_uniforms_portable(lanes, out);
}

/// Steps the lanes alone (see [`step_lanes`]), by the AVX2 build when the
/// CPU has it: only the tests do (the normals' refill calls the AVX2 body
/// directly).
#[cfg(test)]
fn lane_words(lanes: &mut [[u64; LANES]; 4], words: &mut [u64; NORMAL_BLOCK]) {
    crate::cpu_dispatch::on_avx2_fma!(avx2_fma::lane_words(lanes, words));
    step_lanes(lanes, words);
}

/// The normal and uniform generators compiled for AVX2 + FMA (entered
/// through [`crate::cpu_dispatch::on_avx2_fma!`]): the same operations in
/// the same order as the portable ones (no fused arithmetic), so the same
/// bits.
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use super::SimulationNormals;
    use crate::cpu_dispatch::avx::{load_epu64, store_epu64, store_pd};

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn refill_normals(normals: &mut SimulationNormals) {
        normals.refill_with(
            |n, words| lane_words(n.lanes_mut(), words),
            |table, words, out| fast_path_gather(table, words, out),
        );
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn lane_uniforms(lanes: &mut [[u64; 4]; 4], out: &mut [f64; super::NORMAL_BLOCK]) {
        use std::arch::x86_64::{
            _mm256_castsi256_pd, _mm256_or_si256, _mm256_set1_epi64x, _mm256_set1_pd, _mm256_srli_epi64, _mm256_sub_pd,
        };
        // `rng::open01_vectorisable` in registers, straight from each
        // step's words: no word buffer to clear, fill and read back.
        #[allow(clippy::cast_possible_wrap)] // the bits, reinterpreted
        let exponent = _mm256_set1_epi64x(super::UNIT_EXPONENT as i64);
        let offset = _mm256_set1_pd(super::ONE_MINUS_HALF_ULP);
        let mut chunks = out.chunks_exact_mut(4);
        lane_steps::<{ super::PLUS }>(lanes, |word| {
            let u =
                _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64::<12>(word), exponent)), offset);
            store_pd(chunks.next().expect("one chunk per step"), u);
        });
    }

    /// The four Xoshiro256++ lanes stepped together, one 256-bit register
    /// per state word (the compiler keeps the portable version scalar:
    /// AVX2 has no 64-bit rotate). Same words, same order as
    /// `SimulationNormals::next_words`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn lane_words(lanes: &mut [[u64; 4]; 4], words: &mut [u64; super::NORMAL_BLOCK]) {
        let mut chunks = words.chunks_exact_mut(4);
        lane_steps::<{ super::PLUS_PLUS }>(lanes, |word| {
            chunks.next().expect("one chunk per step").copy_from_slice(&store_epu64(word));
        });
    }

    /// `NORMAL_BLOCK / 4` steps of the lanes, each step's four output words
    /// (by the output function `SCRAMBLER`, see `rng::step_lanes_with`)
    /// handed to `emit` as one register.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn lane_steps<const SCRAMBLER: bool>(lanes: &mut [[u64; 4]; 4], mut emit: impl FnMut(std::arch::x86_64::__m256i)) {
        use std::arch::x86_64::{
            __m256i, _mm256_add_epi64, _mm256_or_si256, _mm256_slli_epi64, _mm256_srli_epi64, _mm256_xor_si256,
        };
        let [mut s0, mut s1, mut s2, mut s3] = lanes.map(|w| load_epu64(&w));
        for _ in 0..super::NORMAL_BLOCK / 4 {
            let sum = _mm256_add_epi64(s0, s3);
            if SCRAMBLER == super::PLUS_PLUS {
                let rotated = _mm256_or_si256(_mm256_slli_epi64::<23>(sum), _mm256_srli_epi64::<41>(sum));
                emit(_mm256_add_epi64(rotated, s0));
            } else {
                emit(sum);
            }
            let t: __m256i = _mm256_slli_epi64::<17>(s1);
            s2 = _mm256_xor_si256(s2, s0);
            s3 = _mm256_xor_si256(s3, s1);
            s1 = _mm256_xor_si256(s1, s2);
            s0 = _mm256_xor_si256(s0, s3);
            s2 = _mm256_xor_si256(s2, t);
            s3 = _mm256_or_si256(_mm256_slli_epi64::<45>(s3), _mm256_srli_epi64::<19>(s3));
        }
        *lanes = [store_epu64(s0), store_epu64(s1), store_epu64(s2), store_epu64(s3)];
    }

    /// The ziggurat's fast path four words at a time: the same operations in the same order as the
    /// portable path (no fused arithmetic), so the same bits.
    #[target_feature(enable = "avx2,fma")]
    fn fast_path_gather(x_table: &[f64; 257], words: &[u64], out: &mut [f64]) -> u64 {
        use std::arch::x86_64::{
            _mm256_and_pd, _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_movemask_pd, _mm256_mul_pd, _mm256_or_si256,
            _mm256_set1_epi64x, _mm256_set1_pd, _mm256_set_pd, _mm256_srli_epi64, _mm256_sub_pd, _CMP_GE_OQ,
        };
        assert!(words.len() == 64 && out.len() == 64, "the fast path takes 64 words");
        let exponent = _mm256_set1_epi64x(0x3FF0_0000_0000_0000);
        let magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
        let (two, three) = (_mm256_set1_pd(2.0), _mm256_set1_pd(3.0));
        let mut mask = 0u64;
        for (c, (w, z)) in words.chunks_exact(4).zip(out.chunks_exact_mut(4)).enumerate() {
            let w = load_epu64(w.try_into().expect("4 words"));
            // Scalar table loads: on AMD Zen vgatherqpd is microcoded and
            // no faster than four loads.
            let i = [0, 1, 2, 3].map(|j| (words[4 * c + j] & 0xff) as usize);
            let x_i = _mm256_set_pd(x_table[i[3]], x_table[i[2]], x_table[i[1]], x_table[i[0]]);
            let x_next = _mm256_set_pd(x_table[i[3] + 1], x_table[i[2] + 1], x_table[i[1] + 1], x_table[i[0] + 1]);
            // symmetric01: the top 52 bits as a float in [1, 2), times 2, minus 3.
            let unit = _mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64::<12>(w), exponent));
            let x = _mm256_mul_pd(_mm256_sub_pd(_mm256_mul_pd(unit, two), three), x_i);
            let outside = _mm256_cmp_pd::<_CMP_GE_OQ>(_mm256_and_pd(x, magnitude), x_next);
            store_pd(z, x);
            mask |= u64::from(_mm256_movemask_pd(outside) as u32) << (4 * c);
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn same_seed_same_stream_same_numbers() {
        let draw = || {
            let mut r = SeedSequence::from_seed(7).stream("env");
            (0..8).map(|_| r.random::<u64>()).collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
    }

    /// A generator that returns one fixed word.
    struct Word(u64);

    impl RngCore for Word {
        fn next_u32(&mut self) -> u32 {
            self.0 as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {
            unreachable!()
        }
    }

    #[test]
    fn unit_f64_is_rands_standard_uniform() {
        let seeds = SeedSequence::from_seed(11);
        let (mut a, mut b) = (seeds.simulation_stream("u"), seeds.simulation_stream("u"));
        for _ in 0..100_000 {
            assert_eq!(unit_f64(&mut a).to_bits(), b.random::<f64>().to_bits());
        }
        // The extremes of the word: 0 and the largest value below 1.
        for w in [0, 1 << 11, u64::MAX] {
            assert_eq!(unit_f64(&mut Word(w)).to_bits(), Word(w).random::<f64>().to_bits());
        }
        assert_eq!(unit_f64(&mut Word(u64::MAX)).to_bits(), (1.0 - 1.0 / (1u64 << 53) as f64).to_bits());
    }

    #[test]
    fn different_names_indices_and_seeds_differ() {
        let root = SeedSequence::from_seed(7);
        let first = |mut r: StreamRng| r.random::<u64>();
        let base = first(root.stream("env"));
        assert_ne!(base, first(root.stream("learner")));
        assert_ne!(base, first(root.substream("env", 1)));
        assert_ne!(base, first(SeedSequence::from_seed(8).stream("env")));
    }

    #[test]
    fn known_value_is_platform_independent() {
        // Pinned so that a change of derivation (which would silently change
        // every published result) fails loudly.
        let mut r = SeedSequence::from_seed(0).stream("environment");
        let v = r.next_u64();
        let mut again = SeedSequence::from_seed(0).stream("environment");
        assert_eq!(v, again.next_u64());
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    }

    /// Standard normal CDF: Abramowitz & Stegun 7.1.26 for erf (absolute
    /// error < 1.5e-7, far below the KS thresholds used here).
    fn phi(x: f64) -> f64 {
        let z = x.abs() / std::f64::consts::SQRT_2;
        let t = 1.0 / (1.0 + 0.327_591_1 * z);
        let poly =
            t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
        let erf = 1.0 - poly * (-z * z).exp();
        if x >= 0.0 {
            0.5 * (1.0 + erf)
        } else {
            0.5 * (1.0 - erf)
        }
    }

    #[test]
    fn normal_lanes_are_jumped_xoshiro_streams() {
        let key = SeedSequence::from_seed(3).child_key("environment/contexts", 0);
        let mut g = SimulationNormals::from_key(key);
        let mut words = [0u64; NORMAL_BLOCK];
        g.next_words(&mut words);
        let mut second = [0u64; NORMAL_BLOCK];
        g.next_words(&mut second);
        let mut reference = SimulationRng::from_seed(key);
        for l in 0..LANES {
            reference.jump();
            let mut r = reference.clone();
            for m in 0..2 * NORMAL_BLOCK / LANES {
                let w = if m < NORMAL_BLOCK / LANES {
                    words[m * LANES + l]
                } else {
                    second[(m - NORMAL_BLOCK / LANES) * LANES + l]
                };
                assert_eq!(w, r.next_u64(), "lane {l}, step {m}");
            }
        }
        // The scalar stream is the unjumped one.
        assert_eq!(g.scalar().next_u64(), SimulationRng::from_seed(key).next_u64());
    }

    #[test]
    fn ziggurat_tables_close_up() {
        let z = &*ZIGGURAT;
        // Layer 255's top reaches f(0) = 1: the recursion for the common
        // area V closes (to the precision of the published constants).
        assert!((ZIG_V / z.x[255] + z.f[255] - 1.0).abs() < 1e-9);
        // Layer 0 (box of width R under f(R) plus the tail) has area V.
        // Tail integral of exp(-x^2/2) over [R, R + 12] by Simpson's rule.
        let (m, h) = (20_000, 12.0 / 20_000.0);
        let f = |x: f64| (-0.5 * x * x).exp();
        let tail = (0..=m)
            .map(|j| {
                let w = if j == 0 || j == m {
                    1.0
                } else if j % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                w * f(ZIG_R + f64::from(j) * h)
            })
            .sum::<f64>()
            * h
            / 3.0;
        assert!((ZIG_R * z.f[1] + tail - ZIG_V).abs() < 1e-8);
        assert!(z.x.windows(2).all(|w| w[0] > w[1]));
    }

    #[test]
    fn block_normals_are_standard_normal() {
        let n = 200_000;
        let mut g = SeedSequence::from_seed(11).simulation_normals("environment/test");
        let mut z = vec![0.0; n];
        // Uneven pieces cross block boundaries.
        let mut done = 0;
        for piece in [1usize, 5, 7, 300, 1000].iter().cycle() {
            let m = (*piece).min(n - done);
            g.fill(&mut z[done..done + m]);
            done += m;
            if done == n {
                break;
            }
        }
        assert_standard_normal(&z);
    }

    #[test]
    fn scalar_ziggurat_on_chacha_is_standard_normal() {
        let mut rng = SeedSequence::from_seed(12).stream("noise/test");
        let z: Vec<f64> = (0..200_000).map(|_| standard_normal(&mut rng)).collect();
        assert_standard_normal(&z);
    }

    /// Moments, Kolmogorov–Smirnov, tail counts and lag correlations of an
    /// i.i.d. N(0, 1) sample, each at a bound that fails with probability
    /// about 1e-3 or less.
    fn assert_standard_normal(z: &[f64]) {
        let n = z.len();
        let nf = n as f64;
        let mean = z.iter().sum::<f64>() / nf;
        let m2 = z.iter().map(|v| v * v).sum::<f64>() / nf;
        let m4 = z.iter().map(|v| v.powi(4)).sum::<f64>() / nf;
        // Standard errors: sd(Z) = 1, sd(Z^2) = sqrt(2), sd(Z^4) = sqrt(96); 5 se bounds.
        assert!(mean.abs() < 5.0 / nf.sqrt(), "mean {mean}");
        assert!((m2 - 1.0).abs() < 5.0 * 2f64.sqrt() / nf.sqrt(), "second moment {m2}");
        assert!((m4 - 3.0).abs() < 5.0 * 96f64.sqrt() / nf.sqrt(), "fourth moment {m4}");
        // Kolmogorov–Smirnov: sqrt(n) D > 1.95 has probability 0.001.
        let mut sorted = z.to_vec();
        sorted.sort_by(f64::total_cmp);
        let d = sorted
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let p = phi(v);
                (p - i as f64 / nf).abs().max(((i + 1) as f64 / nf - p).abs())
            })
            .fold(0.0, f64::max);
        assert!(d * nf.sqrt() < 1.95, "KS statistic {}", d * nf.sqrt());
        // The tail beyond R (the ziggurat's separate tail sampler):
        // binomial count, 5 sd bound.
        let p_tail = 2.0 * (1.0 - phi(ZIG_R));
        let tail = z.iter().filter(|v| v.abs() > ZIG_R).count() as f64;
        assert!((tail - nf * p_tail).abs() < 5.0 * (nf * p_tail).sqrt() + 1.0, "tail count {tail}");
        // Beyond the tail's start it is still normal: P(|Z| > 4 | |Z| > R).
        let deep = z.iter().filter(|v| v.abs() > 4.0).count() as f64;
        let p_deep = 2.0 * (1.0 - phi(4.0));
        assert!((deep - nf * p_deep).abs() < 5.0 * (nf * p_deep).sqrt() + 1.0, "deep tail count {deep}");
        // Consecutive draws (within and across lanes) are uncorrelated: 5 se.
        for lag in [1usize, 3, 4, 5] {
            let c = z.iter().zip(&z[lag..]).map(|(a, b)| a * b).sum::<f64>() / (nf - lag as f64);
            assert!(c.abs() < 5.0 / nf.sqrt(), "lag {lag} correlation {c}");
        }
    }

    #[test]
    fn block_uniforms_are_uniform_and_restore_exactly() {
        let mut g = SeedSequence::from_seed(13).simulation_uniforms("environment/test");
        let n = 100_000;
        let mut u = Vec::with_capacity(n);
        // Uneven takes skip block remainders; values stay i.i.d.
        for piece in [1usize, 32, 7, 200].iter().cycle() {
            if u.len() >= n {
                break;
            }
            u.extend_from_slice(g.take(*piece));
        }
        u.truncate(n);
        assert!(u.iter().all(|&v| v > 0.0 && v < 1.0));
        let nf = n as f64;
        let mut sorted = u.clone();
        sorted.sort_by(f64::total_cmp);
        let d = sorted
            .iter()
            .enumerate()
            .map(|(i, &v)| (v - i as f64 / nf).abs().max(((i + 1) as f64 / nf - v).abs()))
            .fold(0.0, f64::max);
        assert!(d * nf.sqrt() < 1.95, "KS statistic {}", d * nf.sqrt());
        // Pairs (as the rejection samplers use them) are uncorrelated: 5 se, sd(U) = 1/sqrt(12).
        let c = u.chunks_exact(2).map(|p| (p[0] - 0.5) * (p[1] - 0.5)).sum::<f64>() / (nf / 2.0);
        assert!(c.abs() < 5.0 / 12.0 / (nf / 2.0).sqrt(), "pair correlation {c}");
        // A restored generator continues with the same values.
        let mut back: SimulationUniforms = postcard::from_bytes(&postcard::to_stdvec(&g).unwrap()).unwrap();
        assert!(back.is_consistent());
        assert_eq!(g.take(50), back.take(50));
    }

    #[test]
    fn dispatched_lane_words_equal_the_portable_ones() {
        let key = SeedSequence::from_seed(3).child_key("environment/dots", 0);
        let (mut a, mut b) = (jumped_lanes(key), jumped_lanes(key));
        let (mut wa, mut wb) = ([0u64; NORMAL_BLOCK], [0u64; NORMAL_BLOCK]);
        for _ in 0..3 {
            lane_words(&mut a, &mut wa);
            step_lanes(&mut b, &mut wb);
            assert_eq!(wa, wb);
        }
    }

    #[test]
    fn vectorisable_uniforms_are_odd_multiples_of_half_an_ulp() {
        let mut rng = SimulationRng::seed_from_u64(4);
        let edges = [0u64, 1, 0xFFF, 0x1000, 1 << 63, u64::MAX, u64::MAX - 0xFFF];
        let random = (0..100_000).map(|_| rng.next_u64());
        for bits in edges.into_iter().chain(random) {
            let u = open01_vectorisable(bits);
            let want = ((bits >> 12) as f64 + 0.5) / (1u64 << 52) as f64;
            assert_eq!(u.to_bits(), want.to_bits(), "{bits:#x}");
            assert!(u > 0.0 && u < 1.0 && 2.0 * u - 1.0 != 0.0);
        }
    }

    /// Each lane is its own generator: lane l's words are those of the
    /// reference xoshiro256++ (normals) or xoshiro256+ (uniforms) started
    /// from lane l's state.
    #[test]
    fn lanes_are_the_reference_generators() {
        fn check<const SCRAMBLER: bool, R: SeedableRng<Seed = [u8; 32]> + RngCore>() {
            let lanes = jumped_lanes(SeedSequence::from_seed(8).child_key("environment/dots", 0));
            let mut words = [0u64; NORMAL_BLOCK];
            step_lanes_with::<SCRAMBLER>(&mut lanes.clone(), &mut words);
            for l in 0..LANES {
                let mut seed = [0u8; 32];
                for (chunk, word) in seed.chunks_exact_mut(8).zip(&lanes) {
                    chunk.copy_from_slice(&word[l].to_le_bytes());
                }
                let mut reference = R::from_seed(seed);
                for step in 0..NORMAL_BLOCK / LANES {
                    assert_eq!(words[step * LANES + l], reference.next_u64(), "lane {l}, step {step}");
                }
            }
        }
        check::<PLUS_PLUS, rand_xoshiro::Xoshiro256PlusPlus>();
        check::<PLUS, rand_xoshiro::Xoshiro256Plus>();
    }

    #[test]
    fn dispatched_uniforms_equal_the_portable_ones() {
        let key = SeedSequence::from_seed(6).child_key("environment/dots", 0);
        let (mut a, mut b) = (jumped_lanes(key), jumped_lanes(key));
        let (mut ua, mut ub) = ([0.0; NORMAL_BLOCK], [0.0; NORMAL_BLOCK]);
        for _ in 0..3 {
            lane_uniforms(&mut a, &mut ua);
            lane_uniforms_portable(&mut b, &mut ub);
            assert_eq!(ua.map(f64::to_bits), ub.map(f64::to_bits));
        }
    }

    #[test]
    fn normals_state_round_trips() {
        let mut g = SeedSequence::from_seed(5).simulation_normals("environment/x");
        let mut a = vec![0.0; 100];
        g.fill(&mut a);
        let mut back: SimulationNormals = postcard::from_bytes(&postcard::to_stdvec(&g).unwrap()).unwrap();
        assert!(back.is_consistent());
        let (mut x, mut y) = (vec![0.0; 700], vec![0.0; 700]);
        g.fill(&mut x);
        back.fill(&mut y);
        assert_eq!(x, y);
    }

    #[test]
    fn entropy_roots_differ() {
        let a = SeedSequence::from_entropy().unwrap();
        let b = SeedSequence::from_entropy().unwrap();
        assert_ne!(a, b);
    }

    /// The dispatched sampler (AVX2 where available) and the baseline body
    /// give the same normals bit for bit.
    #[test]
    fn both_builds_draw_identical_normals() {
        let seeds = SeedSequence::from_seed(11);
        let mut a = seeds.simulation_normals("environment/test");
        let mut b = a.clone();
        let mut x = vec![0.0; 5000];
        a.fill(&mut x);
        let mut y = Vec::with_capacity(5000);
        while y.len() < 5000 {
            b.refill_with_this_build();
            let n = (5000 - y.len()).min(NORMAL_BLOCK);
            y.extend_from_slice(b.take(n));
        }
        assert_eq!(
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}
