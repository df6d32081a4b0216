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
//! Samplers (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for
//! differential privacy"):
//! - Bernoulli(exp(-gamma)) for rational gamma = num/den (Alg. 1): only
//!   integer comparisons against exact uniform integers;
//! - discrete Laplace with integer scale t, P[Y = y] ∝ exp(-|y|/t) (Alg. 2
//!   with s = 1);
//! - discrete Gaussian with integer variance sigma^2 = `var`,
//!   P[Y = y] ∝ exp(-y^2 / (2 var)) (Alg. 3: rejection from discrete
//!   Laplace with t = floor(sigma) + 1).
//!
//! Arithmetic is `u128`. The bounds (scale <= 2^21 steps, variance <=
//! 2^44 steps^2, checked at construction) keep every product below 2^127
//! except in events of probability below exp(-2^19): there the overflowing
//! Bernoulli(exp(-gamma)) with gamma > 2^40 (probability < exp(-2^40)) is
//! decided as 0, and Bernoulli(gamma / K) with K > 2^40 as 0 (K reaches
//! 2^40 with probability 1/(2^40)!). These are the only departures from
//! exactness and they are documented here rather than hidden.
//!
//! Entropy: [`OsEntropy`] reads the operating system's generator
//! (`getrandom`) in blocks; the seeded ChaCha stream is accepted by the
//! same samplers for tests and reproduction only.

use rand_core::{OsRng, RngCore, TryRngCore};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::noise::NoiseSpec;
use crate::rng::StreamRng;

/// Largest scale, in lattice steps, a discrete Laplace or Gaussian accepts.
pub const MAX_SCALE_STEPS: u64 = 1 << 21;

/// Largest |k| of a lattice value k * 2^-j that stays exact in `f64`.
pub const MAX_EXACT_STEPS: f64 = 9_007_199_254_740_992.0; // 2^53

/// Bytes read from the operating system at a time.
const ENTROPY_BLOCK: usize = 4096;

/// Random bits straight from the operating system, read in blocks.
///
/// `OsRng` can only fail when the kernel has no entropy pool at all; the
/// constructor reads one block, so such a system fails there with an error
/// instead of later. A later failure (not known to happen on Linux once the
/// pool is initialised) panics inside `next_u64`, which PyO3 turns into a
/// `PanicException`: it cannot silently produce predictable noise.
pub struct OsEntropy {
    block: Box<[u8; ENTROPY_BLOCK]>,
    pos: usize,
}

impl OsEntropy {
    /// A source that has already read its first block.
    pub fn new() -> Result<Self> {
        let mut block = Box::new([0u8; ENTROPY_BLOCK]);
        OsRng
            .try_fill_bytes(&mut block[..])
            .map_err(|e| Error::State(format!("operating-system entropy unavailable: {e}")))?;
        Ok(OsEntropy { block, pos: 0 })
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
        if self.pos + 8 > ENTROPY_BLOCK {
            OsRng.try_fill_bytes(&mut self.block[..]).expect("operating-system entropy failed after start-up");
            self.pos = 0;
        }
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.block[self.pos..self.pos + 8]);
        self.pos += 8;
        u64::from_le_bytes(w)
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

/// Bernoulli(exp(-num/den)) for any num/den >= 0 (CKS 2020, Alg. 1):
/// floor(gamma) independent Bernoulli(exp(-1)) all 1, then one
/// Bernoulli(exp(-frac(gamma))). Stops at the first 0, so the expected
/// number of steps is below 1/(1 - e^-1) whatever gamma is.
pub fn bernoulli_exp_neg<R: RngCore + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut whole = num / den;
    while whole > 0 {
        if !bernoulli_exp_neg_unit(rng, 1, 1) {
            return false;
        }
        whole -= 1;
    }
    bernoulli_exp_neg_unit(rng, num % den, den)
}

/// One discrete Laplace draw with integer scale `t` >= 1:
/// P[Y = y] = (1 - e^{-1/t}) / (1 + e^{-1/t}) * exp(-|y| / t)
/// (CKS 2020, Alg. 2 with s = 1).
pub fn discrete_laplace<R: RngCore + ?Sized>(rng: &mut R, t: u64) -> i64 {
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
        // |Y| > 2^62 has probability below exp(-2^41) at t <= 2^21.
        let y = i64::try_from(magnitude).unwrap_or(i64::MAX);
        return if negative { -y } else { y };
    }
}

/// floor(sqrt(n)) exactly.
pub fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
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

/// One discrete Gaussian draw with integer variance parameter `var` >= 1:
/// P[Y = y] ∝ exp(-y^2 / (2 var)) (CKS 2020, Alg. 3): Y ~ DLap(t) with
/// t = floor(sqrt(var)) + 1, accepted with probability
/// exp(-(|Y| - var/t)^2 / (2 var)) = exp(-(|Y| t - var)^2 / (2 var t^2)).
pub fn discrete_gaussian<R: RngCore + ?Sized>(rng: &mut R, var: u128) -> i64 {
    let var = var.max(1);
    let t = isqrt(var) + 1;
    let den = 2 * var * t * t;
    loop {
        let y = discrete_laplace(rng, t as u64);
        let a = u128::from(y.unsigned_abs());
        let diff = match a.checked_mul(t) {
            Some(at) => at.abs_diff(var),
            None => continue, // gamma > 2^40: acceptance probability < exp(-2^40)
        };
        let Some(num) = diff.checked_mul(diff) else {
            continue; // as above
        };
        if bernoulli_exp_neg(rng, num, den) {
            return y;
        }
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
    /// (more noise than asked, never less). It must lie in [1, 2^21].
    /// Wishart noise has no exact discrete sampler here: an error.
    pub fn new(spec: NoiseSpec, exponent: i32) -> Result<Self> {
        if !(-1000..=1000).contains(&exponent) {
            return Err(Error::invalid("lattice_exponent", format!("must lie in [-1000, 1000], got {exponent}")));
        }
        let steps = |name: &'static str, x: f64| -> Result<u64> {
            let s = (x * 2f64.powi(exponent)).ceil();
            if s.is_finite() && (1.0..=MAX_SCALE_STEPS as f64).contains(&s) {
                Ok(s as u64)
            } else {
                Err(Error::invalid(
                    name,
                    format!(
                        "{x} is {s} steps of the lattice 2^-{exponent}; secure sampling needs 1 to 2^21 steps \
                         (choose the exponent with dpbandits.privacy.secure.lattice_exponent)"
                    ),
                ))
            }
        };
        let kind = match spec {
            NoiseSpec::Zero => SecureKind::Zero,
            NoiseSpec::Laplace { scale } => SecureKind::Laplace { t: steps("scale", scale)? },
            NoiseSpec::Gaussian { sigma } => {
                let s = u128::from(steps("sigma", sigma)?);
                SecureKind::Gaussian { var: s * s }
            }
            NoiseSpec::SymmetricGaussian { sigma } => {
                let s = u128::from(steps("sigma", sigma)?);
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
        let var = 1..=u128::from(MAX_SCALE_STEPS) * u128::from(MAX_SCALE_STEPS);
        (-1000..=1000).contains(&self.exponent)
            && match self.kind {
                SecureKind::Zero => true,
                SecureKind::Laplace { t } => steps.contains(&u128::from(t)),
                SecureKind::Gaussian { var: v } | SecureKind::SymmetricGaussian { var: v } => var.contains(&v),
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
        2f64.powi(-self.exponent)
    }

    /// Rounds `values` to the nearest lattice points in place, refusing
    /// values whose step count reaches `limit` (so that later sums of them
    /// stay exact). The error leaves `values` unchanged.
    pub fn to_lattice(&self, name: &'static str, values: &mut [f64], limit: f64) -> Result<()> {
        let up = 2f64.powi(self.exponent);
        let out_of_range = |v: &&f64| {
            let k = (**v * up).round().abs();
            k.is_nan() || k >= limit
        };
        if let Some(v) = values.iter().find(out_of_range) {
            return Err(Error::invalid(
                name,
                format!(
                    "{v} is too large for exact arithmetic on the secure lattice 2^-{} (at most {limit:e} steps)",
                    self.exponent
                ),
            ));
        }
        let down = self.step();
        for v in values.iter_mut() {
            *v = (*v * up).round() * down;
        }
        Ok(())
    }

    /// Writes one noise value (integers times 2^-j) into `out`; `side` is
    /// the matrix side for the symmetric Gaussian.
    pub fn sample_into<R: RngCore + ?Sized>(&self, rng: &mut R, side: usize, out: &mut [f64]) {
        let step = self.step();
        match self.kind {
            SecureKind::Zero => out.fill(0.0),
            SecureKind::Laplace { t } => {
                for v in out.iter_mut() {
                    *v = discrete_laplace(rng, t) as f64 * step;
                }
            }
            SecureKind::Gaussian { var } => {
                for v in out.iter_mut() {
                    *v = discrete_gaussian(rng, var) as f64 * step;
                }
            }
            SecureKind::SymmetricGaussian { var } => {
                let p = side;
                for i in 0..p {
                    out[i * p + i] = discrete_gaussian(rng, 2 * var) as f64 * step;
                    for j in (i + 1)..p {
                        let z = discrete_gaussian(rng, var) as f64 * step;
                        out[i * p + j] = z;
                        out[j * p + i] = z;
                    }
                }
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
        let big = (1u128 << 100) + 12345;
        let r = isqrt(big);
        assert!(r * r <= big && (r + 1) * (r + 1) > big);
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
    fn os_entropy_gives_different_words() {
        let mut a = OsEntropy::new().unwrap();
        let mut b = OsEntropy::new().unwrap();
        assert_ne!(a.next_u64(), b.next_u64());
        let words: Vec<u64> = (0..1000).map(|_| a.next_u64()).collect();
        assert!(words.windows(2).all(|w| w[0] != w[1]));
    }
}
