//! Continual counting by a factorization of the prefix-sum matrix.
//!
//! The prefix-sum matrix A (lower-triangular ones, T x T) is factored as
//! A = B C with both factors lower-triangular Toeplitz. The mechanism
//! privatizes the *encoded* stream C x with i.i.d. Gaussian noise z and
//! releases the decoded B (C x + z) = A x + B z (Henzinger, Upadhyay &
//! Upadhyay, SODA 2023; Fichtenberger, Henzinger & Upadhyay, ICML 2023;
//! Dvijotham, McMahan, Pillutla, Steinke & Thakurta 2024). Changing one
//! x_s changes C x by that change times column s of C, so the L2
//! sensitivity is the largest column norm of C times the input's; the
//! noise scale is decided by `dpbandits.privacy.factorization`.
//!
//! Two encoders C (coefficients c_0 = 1, c_1, c_2, ... down the diagonals):
//! - [`Factorization::Sqrt`]: C = B = A^{1/2}, c_k = binom(2k, k) / 4^k;
//!   O(T) memory and O(t) work per step (the whole history is kept);
//! - [`Factorization::Blt`]: a buffered linear Toeplitz encoder
//!   c_k = sum_i omega_i theta_i^(k-1) (k >= 1) (Dvijotham et al. 2024,
//!   Def. of BLT): C v and C^{-1} v are computed with one buffer per
//!   (theta_i, omega_i) pair, so memory does not grow with T. The decoder is
//!   B = A C^{-1}: the release is the running sum of C^{-1} (C x + z).
//!
//! Noise laws.
//! - Floating point: the release is the exact sum plus the decoded noise,
//!   A x + B z, with z drawn once per step and never redrawn.
//! - Lattice ([`NoiseSpec::Lattice`]): the encoded value of step t is
//!   rounded to the lattice and the discrete Gaussian is added:
//!   w_t = round_g((C x)_t) + z_t, an exact lattice value (the privatized
//!   object). The release B w is computed from w alone in floating point:
//!   post-processing of an exact lattice release, so it carries no
//!   floating-point artefact of the data (Mironov 2012) even though it is
//!   not itself a lattice value. Rounding moves each entry by at most g/2,
//!   and the floating-point evaluation of (C x)_t by at most g/4 (enforced:
//!   [`FactorizationCounter::add`] refuses inputs large enough to break
//!   it), so a change of one input moves every coordinate of w by at most
//!   1.5 g more than C times the change: the privacy layer adds
//!   1.5 g sqrt(T dim) to the L2 sensitivity.
//!
//! Invariants: noise is drawn once per step (one draw of the noise shape),
//! stored only through its effect on the buffers, never redrawn; the
//! buffers and the generator are serialized, so a restored counter
//! continues identically; no more than `horizon` values are accepted.

use serde::{Deserialize, Serialize};

use super::smooth_binary;
use super::{
    check_arguments, check_room, checked_dim, matrix_side, release_runs, too_large, zeros, Counter, MAX_STATE_ENTRIES,
    MAX_VALUE,
};
use crate::error::{check_finite, Error, Result};
use crate::noise::entropy::EntropyCell;
use crate::noise::lattice::{round_to_integer, SecureKind, MAX_EXACT_STEPS};
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// The encoder C of A = B C (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Factorization {
    /// C = B = A^{1/2}: c_k = binom(2k, k) / 4^k.
    Sqrt,
    /// c_0 = 1, c_k = sum_i omega_i theta_i^(k-1) for k >= 1.
    Blt { theta: Vec<f64>, omega: Vec<f64> },
    /// The smooth binary mechanism (Andersson & Pagh 2023): a binary tree
    /// of `height` levels read only at leaves of weight `ones`
    /// ([`super::smooth_binary`]). Not Toeplitz: C is the 0/1 incidence of
    /// read nodes and leaves, B sums the `ones` nodes of each query. Serves
    /// Laplace as well as Gaussian noise.
    SmoothBinary { height: u32, ones: u32 },
}

/// Most BLT buffers accepted.
pub const MAX_BLT_BUFFERS: usize = 16;

/// Most BLT buffers an engine configuration ([`FactorSpec`]) holds.
pub const MAX_SPEC_BUFFERS: usize = 8;

/// A [`Factorization`] in a fixed-size (`Copy`) form, for engine
/// configurations: `buffers == 0` is `Sqrt`, [`SMOOTH_SPEC_TAG`] is
/// `SmoothBinary` with (height, ones) in `theta[0]`, `theta[1]` (exact
/// small integers; keeps the serialized layout of older configurations),
/// else the first `buffers` (at most [`MAX_SPEC_BUFFERS`]) entries of
/// `theta` and `omega` are the BLT pairs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactorSpec {
    buffers: u8,
    theta: [f64; MAX_SPEC_BUFFERS],
    omega: [f64; MAX_SPEC_BUFFERS],
}

impl FactorSpec {
    /// The spec of `factor` (validated).
    pub fn new(factor: &Factorization) -> Result<Self> {
        factor.validate()?;
        let mut spec = FactorSpec { buffers: 0, theta: [0.0; MAX_SPEC_BUFFERS], omega: [0.0; MAX_SPEC_BUFFERS] };
        if let Factorization::SmoothBinary { height, ones } = factor {
            spec.buffers = SMOOTH_SPEC_TAG;
            spec.theta[0] = f64::from(*height);
            spec.theta[1] = f64::from(*ones);
        }
        if let Factorization::Blt { theta, omega } = factor {
            if theta.len() > MAX_SPEC_BUFFERS {
                return Err(Error::invalid("blt", format!("engines take at most {MAX_SPEC_BUFFERS} BLT buffers")));
            }
            spec.buffers = theta.len() as u8;
            spec.theta[..theta.len()].copy_from_slice(theta);
            spec.omega[..omega.len()].copy_from_slice(omega);
        }
        Ok(spec)
    }

    /// The factorization it describes.
    pub fn factorization(&self) -> Factorization {
        match self.buffers as usize {
            0 => Factorization::Sqrt,
            d if d == SMOOTH_SPEC_TAG as usize => {
                Factorization::SmoothBinary { height: self.theta[0] as u32, ones: self.theta[1] as u32 }
            }
            d => Factorization::Blt {
                theta: self.theta[..d.min(MAX_SPEC_BUFFERS)].to_vec(),
                omega: self.omega[..d.min(MAX_SPEC_BUFFERS)].to_vec(),
            },
        }
    }
}

/// `FactorSpec::buffers` value marking the smooth binary mechanism.
pub const SMOOTH_SPEC_TAG: u8 = u8::MAX;

/// Unit roundoff of f64.
const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// c_k = binom(2k, k) / 4^k for k < n, by c_k = c_{k-1} (2k - 1) / (2k).
pub fn sqrt_coefficients(n: usize) -> Vec<f64> {
    let mut c = Vec::with_capacity(n);
    let mut v = 1.0;
    for k in 0..n {
        if k > 0 {
            v *= (2 * k - 1) as f64 / (2 * k) as f64;
        }
        c.push(v);
    }
    c
}

impl Factorization {
    /// Checks the parameters: BLT needs 1 to 16 pairs with theta in [0, 1)
    /// and omega finite >= 0 (the form the fp-error bound assumes).
    pub fn validate(&self) -> Result<()> {
        match self {
            Factorization::Sqrt => Ok(()),
            Factorization::SmoothBinary { height, ones } => smooth_binary::validate(*height, *ones, 0),
            Factorization::Blt { theta, omega } => {
                if theta.is_empty() || theta.len() != omega.len() || theta.len() > MAX_BLT_BUFFERS {
                    return Err(Error::invalid(
                        "blt",
                        format!("needs 1 to {MAX_BLT_BUFFERS} (theta, omega) pairs of equal length"),
                    ));
                }
                if !theta.iter().all(|t| (0.0..1.0).contains(t)) || !omega.iter().all(|w| w.is_finite() && *w >= 0.0) {
                    return Err(Error::invalid("blt", "theta must lie in [0, 1) and omega be finite >= 0"));
                }
                Ok(())
            }
        }
    }

    /// Buffers of the noise shape the BLT form holds (0 for `Sqrt`).
    pub fn buffers(&self) -> usize {
        match self {
            Factorization::Sqrt | Factorization::SmoothBinary { .. } => 0,
            Factorization::Blt { theta, .. } => theta.len(),
        }
    }

    /// Rows of the noise shape in the counter's `dec` state: the BLT
    /// buffers, or one node noise per tree level (smooth binary).
    fn state_rows(&self) -> usize {
        match self {
            Factorization::SmoothBinary { height, .. } => *height as usize,
            f => f.buffers(),
        }
    }

    /// The first `n` encoder coefficients c_0..c_{n-1} (tests, accounting);
    /// empty for the smooth binary mechanism (not Toeplitz).
    pub fn encoder(&self, n: usize) -> Vec<f64> {
        match self {
            Factorization::Sqrt => sqrt_coefficients(n),
            Factorization::SmoothBinary { .. } => Vec::new(),
            Factorization::Blt { theta, omega } => {
                let mut c = Vec::with_capacity(n);
                let mut pow: Vec<f64> = vec![1.0; theta.len()];
                for k in 0..n {
                    if k == 0 {
                        c.push(1.0);
                    } else {
                        c.push(omega.iter().zip(&pow).map(|(w, p)| w * p).sum());
                        for (p, t) in pow.iter_mut().zip(theta) {
                            *p *= t;
                        }
                    }
                }
                c
            }
        }
    }

    /// F with |fl((C x)_t) - (C x)_t| <= F u max|x| for t <= n (u the unit
    /// roundoff): a first-order bound with a factor 2 of margin. Dense:
    /// a dot product of n terms errs by <= n u sum_k |c_k| |x|. BLT: with
    /// m_i = min(n, 1 / (1 - theta_i)), the double-double buffer
    /// S_i = theta_i S_i + x holds at most m_i max|x|; an update's product
    /// and sum errors are exact (Dekker's product, TwoSum) and only theta
    /// lo, the tail sum and the renormalization round, each by <= u^2
    /// max|S_i| up to
    /// lower order, so an update errs by <= 4 u^2 max|S_i| and, errors
    /// decaying by theta_i, |err S_i| <= 4 u^2 m_i^2 max|x|; the output
    /// combination (in double) adds (d + 2) u (1 + sum_i omega_i m_i) max|x|.
    fn fp_error_factor(&self, n: u64) -> f64 {
        let n = n as f64;
        let bound = match self {
            // Inputs are rounded directly (no encoder arithmetic).
            Factorization::SmoothBinary { .. } => 0.0,
            Factorization::Sqrt => {
                // sum_{k < n} c_k <= 2 sqrt(n / pi) + 1.
                let sum_c = 2.0 * (n / std::f64::consts::PI).sqrt() + 1.0;
                n * sum_c
            }
            Factorization::Blt { theta, omega } => {
                let d = theta.len() as f64;
                let m = |t: &f64| n.min(1.0 / (1.0 - t));
                let buffers: f64 = theta.iter().zip(omega).map(|(t, w)| 4.0 * UNIT_ROUNDOFF * w * m(t) * m(t)).sum();
                let gain: f64 = 1.0 + theta.iter().zip(omega).map(|(t, w)| w * m(t)).sum::<f64>();
                buffers + (d + 2.0) * gain
            }
        };
        2.0 * bound
    }
}

/// A continual-release counter by a Toeplitz factorization A = B C.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FactorizationCounter {
    shape: Vec<usize>,
    dim: usize,
    side: usize,
    horizon: u64,
    noise: NoiseSpec,
    factor: Factorization,
    t: u64,
    /// Float noise: the exact prefix sum. Lattice: unused (empty), except
    /// for the smooth binary mechanism (the prefix sum of rounded inputs).
    exact: Vec<f64>,
    /// Float noise: the decoded noise (B z)_t; lattice: the release.
    /// Smooth binary: the sum of the read nodes' noise.
    decoded: Vec<f64>,
    /// Sqrt: past inputs (lattice only), `t x dim`.
    past_x: Vec<f64>,
    /// Sqrt: past noise draws z (float) or encoded releases w (lattice).
    past_w: Vec<f64>,
    /// BLT: buffers of the encoder on x (lattice only) in double-double
    /// precision: `d x dim` high parts, then `d x dim` low parts.
    enc: Vec<f64>,
    /// BLT: buffers of C^{-1} on z (float) or w (lattice), `d x dim`.
    /// Smooth binary: the noise of the node read at each level, `height x dim`
    /// (the data-free nodes of a leaf's trailing ones hold their sum in the
    /// lowest row and zeros above; see `add_smooth_binary`).
    dec: Vec<f64>,
    release: Vec<f64>,
    rng: StreamRng,
    os_entropy: bool,
    #[serde(skip)]
    entropy: EntropyCell,
    #[serde(skip)]
    draw: Vec<f64>,
    /// Lattice: the encoded value w_t of the step (scratch, `dim`).
    #[serde(skip)]
    work: Vec<f64>,
    /// [`FactorizationCounter::lattice_input_limit`] (a function of the
    /// encoder and the horizon), computed on first use.
    #[serde(skip)]
    input_limit: Option<f64>,
    #[serde(skip)]
    coeffs: Vec<f64>,
    /// Smooth binary: the query leaf b_{t+1} (a function of t; not state).
    #[serde(skip)]
    leaf: u64,
    /// Smooth binary: levels whose `dec` row is known to be zero (the
    /// summed block's upper rows); empty after a restore (not state).
    #[serde(skip)]
    zero_rows: u64,
}

/// First byte of a serialized factorization counter (tree states start with
/// their version, 3): 'F'.
pub const FACTOR_STATE_TAG: u8 = b'F';
/// 2: double-double BLT encoder buffers (lattice). Version-1 states are
/// read unless they hold single-precision lattice BLT buffers.
const FACTOR_STATE_VERSION: u8 = 2;

impl FactorizationCounter {
    /// A counter of values of `shape` over `horizon` rounds with encoder
    /// `factor` and per-step noise `noise` (Gaussian, symmetric Gaussian,
    /// their lattice forms, or zero), drawing from the `"tree"` stream of
    /// `seeds`. Laplace and Wishart noise are refused: the factorization's
    /// guarantee is an L2 (Gaussian) one.
    pub fn new(
        shape: &[usize],
        horizon: u64,
        noise: NoiseSpec,
        factor: Factorization,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        check_arguments(shape, horizon, noise)?;
        check_noise(noise, &factor)?;
        factor.validate()?;
        if let Factorization::SmoothBinary { height, ones } = factor {
            smooth_binary::validate(height, ones, horizon)?;
        }
        let dim = checked_dim(shape).ok_or_else(|| too_large(shape))?;
        let side = matrix_side(shape);
        let lattice = noise.lattice().is_some();
        let (hist, bufs) = match &factor {
            Factorization::Sqrt => {
                let h =
                    usize::try_from(horizon).ok().and_then(|h| h.checked_mul(dim)).ok_or_else(|| too_large(shape))?;
                (h, 0)
            }
            f => (0, f.state_rows() * dim),
        };
        let smooth = matches!(factor, Factorization::SmoothBinary { .. });
        let entries = hist.saturating_mul(2).saturating_add(bufs.saturating_mul(2));
        if entries > MAX_STATE_ENTRIES {
            return Err(too_large(shape));
        }
        let mut c = FactorizationCounter {
            shape: shape.to_vec(),
            dim,
            side,
            horizon,
            noise,
            factor,
            t: 0,
            exact: if lattice && !smooth { Vec::new() } else { zeros(dim, shape)? },
            decoded: zeros(dim, shape)?,
            past_x: Vec::new(),
            past_w: Vec::new(),
            enc: if lattice && !smooth { zeros(2 * bufs, shape)? } else { Vec::new() },
            dec: zeros(bufs, shape)?,
            release: zeros(dim, shape)?,
            rng: seeds.stream("tree"),
            os_entropy: false,
            entropy: EntropyCell::default(),
            draw: zeros(dim, shape)?,
            work: Vec::new(),
            input_limit: None,
            coeffs: Vec::new(),
            leaf: 0,
            zero_rows: 0,
        };
        c.prepare();
        Ok(c)
    }

    /// Rebuilds the non-state caches (coefficients, scratch).
    fn prepare(&mut self) {
        if self.draw.len() != self.dim {
            self.draw = vec![0.0; self.dim];
        }
        if self.work.len() != self.dim {
            self.work = vec![0.0; self.dim];
        }
        if matches!(self.factor, Factorization::Sqrt) && self.coeffs.len() as u64 != self.horizon {
            self.coeffs = sqrt_coefficients(self.horizon as usize);
        }
        // The query leaf b_{t+1} (never 0: it has `ones` >= 1 set bits) is
        // unranked from t only when missing (new, restored, restarted).
        if let Factorization::SmoothBinary { height, ones } = self.factor {
            if self.leaf == 0 {
                self.leaf = smooth_binary::leaf_at(height, ones, self.t);
            }
        }
    }

    /// This (fresh) counter with lattice noise on 2^-`exponent` (see the
    /// module documentation for what is exact) and the given entropy source.
    pub fn into_secure(mut self, exponent: i32, os_entropy: bool) -> Result<Self> {
        if self.t != 0 {
            return Err(Error::State("secure mode must be chosen before the first addition".into()));
        }
        if self.noise.lattice().is_none() {
            self.noise = self.noise.on_lattice(exponent)?;
            if self.noise.lattice().is_some() && !matches!(self.factor, Factorization::SmoothBinary { .. }) {
                self.exact = Vec::new();
                self.enc = vec![0.0; 2 * self.dec.len()];
            }
        }
        self.with_os_entropy(os_entropy)
    }

    /// This (fresh) counter drawing from the operating system (`true`) or
    /// its seeded stream.
    pub fn with_os_entropy(mut self, os_entropy: bool) -> Result<Self> {
        if self.t != 0 {
            return Err(Error::State("the entropy source must be chosen before the first addition".into()));
        }
        self.os_entropy = os_entropy;
        if os_entropy {
            self.entropy.get()?;
        }
        Ok(self)
    }

    /// Every future draw from the operating system.
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.entropy.get()?;
        self.os_entropy = true;
        Ok(())
    }

    /// Future noise from the `"tree"` stream of `seeds` (noise already
    /// drawn stays in the buffers).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("tree");
    }

    /// Largest |input entry| in lattice steps for which the floating-point
    /// evaluation of (C x)_t errs by at most a quarter step.
    fn lattice_input_limit(&self) -> f64 {
        if let Factorization::SmoothBinary { .. } = self.factor {
            // Exact sums: `horizon` inputs plus noise stay below 2^53 steps.
            return MAX_EXACT_STEPS / 4.0 / self.horizon as f64;
        }
        0.25 / (self.factor.fp_error_factor(self.horizon) * UNIT_ROUNDOFF)
    }

    fn cached_input_limit(&mut self) -> f64 {
        match self.input_limit {
            Some(v) => v,
            None => *self.input_limit.insert(self.lattice_input_limit()),
        }
    }

    /// Adds the value of round t + 1 and updates the release.
    pub fn add(&mut self, value: &[f64]) -> Result<()> {
        if value.len() != self.dim {
            return Err(Error::invalid(
                "value",
                format!("expected {} entries (shape {:?}), got {}", self.dim, self.shape, value.len()),
            ));
        }
        let lattice = self.noise.lattice();
        let limit = match lattice {
            Some(s) => self.cached_input_limit() * s.step(),
            None => f64::INFINITY,
        };
        // One branch-free pass for the common case (NaN fails the
        // comparison); the checks are told apart only when it fails.
        let bound = MAX_VALUE.min(limit);
        if !value.iter().fold(true, |ok, v| ok & (v.abs() <= bound)) {
            check_finite("value", value)?;
            if let Some(v) = value.iter().find(|v| v.abs() > MAX_VALUE) {
                return Err(Error::invalid(
                    "value",
                    format!("entries must have magnitude <= {MAX_VALUE:e}, got {v:e}"),
                ));
            }
            check_room(self.t, self.horizon)?;
            let v = value.iter().find(|v| v.abs() > limit).expect("an entry failed the bound");
            return Err(Error::invalid(
                "value",
                format!(
                    "{v} is too large for an exact lattice encoding (|entries| <= {limit:e}, so that the \
                     floating-point encoder errs by at most a quarter step)"
                ),
            ));
        }
        check_room(self.t, self.horizon)?;
        if self.os_entropy {
            self.entropy.get()?;
        }
        self.prepare();
        if let Factorization::SmoothBinary { .. } = self.factor {
            return self.add_smooth_binary(value);
        }
        // One draw of the noise shape for this step, never redrawn.
        if self.os_entropy {
            self.noise.sample_into(self.entropy.get()?, self.side, &mut self.draw);
        } else {
            self.noise.sample_into(&mut self.rng, self.side, &mut self.draw);
        }
        let dim = self.dim;
        let t = self.t as usize;
        match lattice {
            None => {
                for (e, v) in self.exact.iter_mut().zip(value) {
                    *e += v;
                }
                // decoded = (B z)_t.
                match &self.factor {
                    Factorization::Sqrt => {
                        self.past_w.extend_from_slice(&self.draw);
                        toeplitz_row(&self.coeffs, &self.past_w, dim, t, &mut self.decoded);
                    }
                    Factorization::Blt { theta, omega } => {
                        blt_inverse_step(theta, omega, &mut self.dec, &mut self.draw, dim);
                        for (d, u) in self.decoded.iter_mut().zip(&self.draw) {
                            *d += u;
                        }
                    }
                    // Stepped by `add_smooth_binary`.
                    Factorization::SmoothBinary { .. } => {}
                }
                for ((r, e), d) in self.release.iter_mut().zip(&self.exact).zip(&self.decoded) {
                    *r = e + d;
                }
            }
            Some(s) => {
                // 1/step is exact (a power of two); no library call per step.
                let (up, step) = (1.0 / s.step(), s.step());
                // w_t = round_g((C x)_t) + z_t (exact lattice value).
                let w = &mut self.work;
                match &self.factor {
                    Factorization::Sqrt => {
                        self.past_x.extend_from_slice(value);
                        toeplitz_row(&self.coeffs, &self.past_x, dim, t, w);
                    }
                    Factorization::Blt { theta, omega } => blt_forward_step(theta, omega, &mut self.enc, value, w),
                    Factorization::SmoothBinary { .. } => {}
                }
                for (wi, z) in w.iter_mut().zip(&self.draw) {
                    *wi = round_to_integer(*wi * up) * step + z;
                }
                // release = (B w)_t, post-processing.
                match &self.factor {
                    Factorization::Sqrt => {
                        self.past_w.extend_from_slice(w);
                        toeplitz_row(&self.coeffs, &self.past_w, dim, t, &mut self.decoded);
                    }
                    Factorization::Blt { theta, omega } => {
                        blt_inverse_step(theta, omega, &mut self.dec, w, dim);
                        for (d, u) in self.decoded.iter_mut().zip(w.iter()) {
                            *d += u;
                        }
                    }
                    Factorization::SmoothBinary { .. } => {}
                }
                self.release.copy_from_slice(&self.decoded);
            }
        }
        self.t += 1;
        Ok(())
    }

    /// The smooth binary step: x_{t+1} enters the prefix sum (it sits at
    /// leaf b_{t+1}, below the next query b_{t+2}); the nodes of b_{t+1}
    /// at and below the highest bit where it differs from b_{t+2} leave the
    /// release, and b_{t+2}'s nodes there enter it, each with a fresh draw
    /// (all its leaves are b_{t+1} or earlier: it is complete).
    fn add_smooth_binary(&mut self, value: &[f64]) -> Result<()> {
        let dim = self.dim;
        match self.noise.lattice() {
            Some(s) => {
                // `draw` is free here (node noise is drawn into `dec`).
                let limit = self.lattice_input_limit();
                self.draw.copy_from_slice(value);
                s.to_lattice("value", &mut self.draw, limit)?;
                for (e, v) in self.exact.iter_mut().zip(&self.draw) {
                    *e += v;
                }
            }
            None => {
                for (e, v) in self.exact.iter_mut().zip(value) {
                    *e += v;
                }
            }
        }
        let old = self.leaf;
        let new = smooth_binary::next_leaf(old);
        let top = (old ^ new).ilog2();
        // Lattice node noise is whole steps, far below 2^53 of them (a draw
        // would need 2^26 scales), so its sums are exact in any order and
        // the live total moves by the changed nodes only. Floating-point
        // sums re-sum every node past level 4 (bounding drift); below it
        // they move by the few changed nodes.
        let lattice = self.noise.lattice().is_some();
        let incremental = top < 4 || lattice;
        if incremental {
            for level in (0..=top as usize).filter(|l| (old & !self.zero_rows) >> l & 1 == 1) {
                for (d, z) in self.decoded.iter_mut().zip(&self.dec[level * dim..(level + 1) * dim]) {
                    *d -= z;
                }
            }
        }
        // The entering nodes: each run of adjacent levels in one call when
        // the noise is entrywise (a call per node costs about as much as a
        // draw), node by node for matrix noise.
        let entering = new & ((2u64 << top) - 1);
        let mut bits = entering;
        // The new leaf's trailing ones (all below `top`, which b_{t+1}
        // has clear) are nodes over no input: a node of level l below them
        // covers leaves with the leaf's bits above l (ones - l - 1 ones) and
        // bit l clear, at most ones - 1 ones, and inputs sit at leaves of
        // `ones` ones. Their noise is data-independent (padding), read by
        // this release only (the next leaf clears them all), so only its
        // sum is used: it is drawn as one draw of the sum's law
        // (`NoiseSpec::sample_sum_into`: exact in law for floating-point noise) into the
        // lowest row, the others zero. On a lattice that is the rounded
        // floating-point sum, as the tree's padding: an exact lattice value
        // of nearly the discrete sum's law (no input is under these nodes,
        // so their law carries no privacy; the nodes over inputs keep exact
        // discrete draws).
        let free = new.trailing_ones();
        let summed = free >= 2;
        // The summed block's rows above its lowest: zero, skipped below.
        let zero_rows = if summed { ((1u64 << free) - 1) & !1 } else { 0 };
        // Rows of levels at or below `top` are now this step's.
        self.zero_rows = (self.zero_rows & !((2u64 << top) - 1)) | zero_rows;
        if summed {
            let (sum, rest) = self.dec[..free as usize * dim].split_at_mut(dim);
            if self.os_entropy {
                self.noise.sample_sum_into(self.entropy.get()?, free, self.side, sum);
            } else {
                self.noise.sample_sum_into(&mut self.rng, free, self.side, sum);
            }
            rest.fill(0.0);
            bits &= !((1u64 << free) - 1);
        }
        while bits != 0 {
            let low = bits.trailing_zeros() as usize;
            let high = if self.noise.is_entrywise() { low + (bits >> low).trailing_ones() as usize } else { low + 1 };
            bits &= !(((1u64 << (high - low)) - 1) << low);
            let nodes = &mut self.dec[low * dim..high * dim];
            if self.os_entropy {
                self.noise.sample_into(self.entropy.get()?, self.side, nodes);
            } else {
                self.noise.sample_into(&mut self.rng, self.side, nodes);
            }
        }
        if incremental {
            for level in (0..=top as usize).filter(|l| (entering & !zero_rows) >> l & 1 == 1) {
                for (d, z) in self.decoded.iter_mut().zip(&self.dec[level * dim..(level + 1) * dim]) {
                    *d += z;
                }
            }
        }
        if !incremental {
            self.decoded.fill(0.0);
            let mut bits = new & !zero_rows;
            while bits != 0 {
                let level = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                for (d, z) in self.decoded.iter_mut().zip(&self.dec[level * dim..(level + 1) * dim]) {
                    *d += z;
                }
            }
        }
        for ((r, e), d) in self.release.iter_mut().zip(&self.exact).zip(&self.decoded) {
            *r = e + d;
        }
        self.leaf = new;
        self.t += 1;
        Ok(())
    }

    /// `runs` independent runs on `values` (as [`super::TreeCounter::release_runs`]).
    pub fn release_runs(&mut self, values: &[f64], runs: usize) -> Result<Vec<f64>> {
        release_runs(self, values, runs)
    }

    /// The release after the last addition (zeros before any).
    pub fn release(&self) -> &[f64] {
        &self.release
    }

    pub fn t(&self) -> u64 {
        self.t
    }

    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn noise(&self) -> NoiseSpec {
        self.noise
    }

    pub fn factorization(&self) -> &Factorization {
        &self.factor
    }

    pub fn secure_exponent(&self) -> Option<i32> {
        self.noise.lattice().map(|s| s.exponent())
    }

    pub fn os_entropy(&self) -> bool {
        self.os_entropy
    }

    /// Noise draws mixed into the current release: t (every step's draw
    /// enters with its decoder coefficient); smooth binary: `ones` nodes
    /// (0 before any addition).
    pub fn noise_terms(&self) -> u32 {
        match self.factor {
            Factorization::SmoothBinary { ones, .. } if self.t > 0 => ones,
            _ => u32::try_from(self.t).unwrap_or(u32::MAX),
        }
    }

    /// The whole state (buffers, history, generator). As secret as the data.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![FACTOR_STATE_TAG, FACTOR_STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// Restores a counter written by [`FactorizationCounter::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        match bytes {
            [FACTOR_STATE_TAG, FACTOR_STATE_VERSION, body @ ..] => {
                let mut c: FactorizationCounter = crate::state::decode(body)?;
                c.check_consistent()?;
                c.prepare();
                Ok(c)
            }
            [FACTOR_STATE_TAG, 1, body @ ..] => {
                let mut c: FactorizationCounter = crate::state::decode(body)?;
                if !c.enc.is_empty() {
                    return Err(Error::Decode(
                        "a version-1 lattice BLT counter state (single-precision encoder buffers) cannot continue \
                         under this version's error bound; this version writes version 2"
                            .into(),
                    ));
                }
                c.check_consistent()?;
                c.prepare();
                Ok(c)
            }
            [FACTOR_STATE_TAG, v, ..] => Err(Error::Decode(format!("unknown factorization counter state version {v}"))),
            _ => Err(Error::Decode("not a factorization counter state".into())),
        }
    }

    /// Refuses a decoded state whose parts disagree (also run on counters
    /// restored inside an engine's state).
    pub(crate) fn check_consistent(&self) -> Result<()> {
        let smooth = matches!(self.factor, Factorization::SmoothBinary { .. });
        let lattice = self.noise.lattice().is_some() && !smooth;
        let bufs = self.factor.state_rows() * self.dim;
        let hist = self.t as usize * self.dim;
        let sqrt = matches!(self.factor, Factorization::Sqrt);
        let ok = checked_dim(&self.shape) == Some(self.dim)
            && self.side == matrix_side(&self.shape)
            && self.factor.validate().is_ok()
            && match self.factor {
                Factorization::SmoothBinary { height, ones } => {
                    smooth_binary::validate(height, ones, self.horizon).is_ok()
                }
                _ => true,
            }
            && self.noise.validate(&self.shape).is_ok()
            && check_noise(self.noise, &self.factor).is_ok()
            && self.t <= self.horizon
            && self.exact.len() == if lattice { 0 } else { self.dim }
            && self.decoded.len() == self.dim
            && self.release.len() == self.dim
            && self.dec.len() == bufs
            && self.enc.len() == if lattice { 2 * bufs } else { 0 }
            && self.past_w.len() == if sqrt { hist } else { 0 }
            && self.past_x.len() == if sqrt && lattice { hist } else { 0 };
        if ok {
            Ok(())
        } else {
            Err(Error::Decode("inconsistent factorization counter state".into()))
        }
    }

    /// Refuses a counter restored inside an engine's state unless it is
    /// consistent ([`FactorizationCounter::check_consistent`]), holds
    /// finite buffers, and has the layout of `reference`, the counter the
    /// engine's configuration builds: the same shape, horizon, noise and
    /// factorization (see [`crate::counter::TreeCounter::check_restored`]).
    pub(crate) fn check_restored(&self, reference: &FactorizationCounter) -> Result<()> {
        self.check_consistent()?;
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let same = self.shape == reference.shape
            && self.horizon == reference.horizon
            && self.noise == reference.noise
            && self.factor == reference.factor
            && [&self.exact, &self.decoded, &self.past_x, &self.past_w, &self.enc, &self.dec, &self.release]
                .iter()
                .all(|v| finite(v));
        if same {
            Ok(())
        } else {
            Err(Error::Decode(
                "a factorization counter in the state differs from the one its configuration builds".into(),
            ))
        }
    }
}

impl Counter for FactorizationCounter {
    fn add(&mut self, value: &[f64]) -> Result<()> {
        FactorizationCounter::add(self, value)
    }

    fn release(&self) -> &[f64] {
        &self.release
    }

    fn t(&self) -> u64 {
        self.t
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn restart(&mut self) {
        self.t = 0;
        for b in [&mut self.exact, &mut self.decoded, &mut self.enc, &mut self.dec, &mut self.release] {
            b.fill(0.0);
        }
        self.past_x.clear();
        self.past_w.clear();
        self.leaf = 0;
        self.prepare();
    }

    fn take_generator(&mut self, from: Self) {
        self.rng = from.rng;
        self.entropy = from.entropy;
    }
}

/// Gaussian (or zero) noise only; the smooth binary mechanism also serves
/// Laplace noise (its L1 column norm is at most height - ones).
fn check_noise(noise: NoiseSpec, factor: &Factorization) -> Result<()> {
    let smooth = matches!(factor, Factorization::SmoothBinary { .. });
    let ok = match noise {
        NoiseSpec::Laplace { .. } | NoiseSpec::Lattice(_) if smooth => true,
        NoiseSpec::Zero | NoiseSpec::Gaussian { .. } | NoiseSpec::SymmetricGaussian { .. } => true,
        NoiseSpec::Lattice(s) => !matches!(s.kind(), SecureKind::Laplace { .. }),
        NoiseSpec::Laplace { .. } | NoiseSpec::Wishart { .. } => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "noise",
            format!(
                "factorization counters (sqrt, blt) serve Gaussian noise only (their sensitivity is an L2 column \
                 norm); got {noise:?}: use counter='binary' (or 'smooth-binary') for Laplace or Wishart noise"
            ),
        ))
    }
}

/// out = sum_{k <= t} c_k h_{t-k} for the rows h_0..h_t of `hist` (`dim` each).
fn toeplitz_row(c: &[f64], hist: &[f64], dim: usize, t: usize, out: &mut [f64]) {
    out.fill(0.0);
    for k in 0..=t {
        let row = &hist[(t - k) * dim..(t - k + 1) * dim];
        let ck = c[k];
        for (o, h) in out.iter_mut().zip(row) {
            *o += ck * h;
        }
    }
}

/// out <- (C x)_t with buffers S_i (sum_{s<t} theta_i^(t-1-s) x_s):
/// (C x)_t = x_t + sum_i omega_i S_i; then S_i <- theta_i S_i + x_t.
///
/// The buffers are double-double (hi + lo, `bufs` = hi parts then lo
/// parts): the product's error is exact by Dekker's product (Veltkamp
/// splits; the same value an FMA gives, without the FMA instruction the
/// baseline target lacks) and the sum's by TwoSum, so an update errs by
/// O(u^2 |S_i|) instead of O(u |S_i|); with decay rates 1 - theta_i near
/// 1e-7 (long-horizon fits) single-precision buffers would accumulate
/// O(u / (1 - theta)^2) relative error, far more than the quarter lattice
/// step the privacy accounting allows ([`Factorization::fp_error_factor`]).
/// One buffer at a time over all entries (contiguous, branch-free, so
/// the compiler vectorizes it); each entry's sum keeps the order i = 0..d.
/// The AVX2 build runs the same operations four entries a register (no
/// fused arithmetic: the compiler never contracts, so the same bits).
fn blt_forward_step(theta: &[f64], omega: &[f64], bufs: &mut [f64], x: &[f64], out: &mut [f64]) {
    crate::cpu_dispatch::on_avx2_fma!(avx2_fma::blt_forward_step(theta, omega, bufs, x, out));
    blt_forward_step_body(theta, omega, bufs, x, out);
}

#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn blt_forward_step(theta: &[f64], omega: &[f64], bufs: &mut [f64], x: &[f64], out: &mut [f64]) {
        super::blt_forward_step_body(theta, omega, bufs, x, out);
    }
}

/// The body of [`blt_forward_step`], generated inside each build.
#[allow(clippy::inline_always)]
#[inline(always)]
fn blt_forward_step_body(theta: &[f64], omega: &[f64], bufs: &mut [f64], x: &[f64], out: &mut [f64]) {
    let dim = x.len();
    let (hi, lo) = bufs.split_at_mut(theta.len() * dim);
    out.copy_from_slice(x);
    for (((th, w), h), l) in theta.iter().zip(omega).zip(hi.chunks_exact_mut(dim)).zip(lo.chunks_exact_mut(dim)) {
        let (th, w) = (*th, *w);
        let (th_hi, th_lo) = split(th);
        for (((o, h), l), &x) in out.iter_mut().zip(h.iter_mut()).zip(l.iter_mut()).zip(x) {
            *o += w * (*h + *l);
            // S <- theta S + x in double-double.
            let p = th * *h;
            let (h_hi, h_lo) = split(*h);
            let p_err = ((th_hi * h_hi - p) + th_hi * h_lo + th_lo * h_hi) + th_lo * h_lo;
            let (s, e) = two_sum(p, x);
            let tail = p_err + th * *l + e;
            let (nh, nl) = two_sum(s, tail);
            *h = nh;
            *l = nl;
        }
    }
}

/// Veltkamp's split a = hi + lo with hi, lo of at most 26 significant
/// bits, so that products of halves are exact (Dekker 1971).
#[allow(clippy::inline_always)] // generated inside the AVX2 build too
#[inline(always)]
fn split(a: f64) -> (f64, f64) {
    const FACTOR: f64 = 134_217_729.0; // 2^27 + 1
    let c = FACTOR * a;
    let hi = c - (c - a);
    (hi, a - hi)
}

/// (s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth; branch-free,
/// the same pair Dekker's FastTwoSum gives when |a| >= |b|).
#[allow(clippy::inline_always)] // generated inside the AVX2 build too
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// In place v <- (C^{-1} v)_t: u_t = v_t - sum_i omega_i S_i with buffers
/// S_i of u; then S_i <- theta_i S_i + u_t.
fn blt_inverse_step(theta: &[f64], omega: &[f64], bufs: &mut [f64], v: &mut [f64], dim: usize) {
    for (s, w) in bufs.chunks_exact(dim).zip(omega) {
        for (o, si) in v.iter_mut().zip(s) {
            *o -= w * si;
        }
    }
    for (s, th) in bufs.chunks_exact_mut(dim).zip(theta) {
        for (si, u) in s.iter_mut().zip(v.iter()) {
            *si = th * *si + u;
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    /// BLT parameters of `dpbandits.privacy.factorization.BLT_4`.
    pub(crate) fn blt4() -> Factorization {
        Factorization::Blt {
            theta: vec![0.651_266_56, 0.999_821_55, 0.991_283_57, 0.999_997_64],
            omega: vec![0.465_418_62, 0.017_516_84, 0.114_831_17, 0.002_687_27],
        }
    }

    fn smooth() -> Factorization {
        Factorization::SmoothBinary { height: 12, ones: 6 }
    }

    fn stream(n: usize, dim: usize) -> Vec<Vec<f64>> {
        (0..n).map(|t| (0..dim).map(|i| ((t * 31 + i * 7) % 13) as f64 - 6.0).collect()).collect()
    }

    #[test]
    fn sqrt_coefficients_square_to_ones() {
        // A = C C: sum_{k <= n} c_k c_{n-k} = 1 for every n.
        let c = sqrt_coefficients(200);
        for n in 0..200 {
            let s: f64 = (0..=n).map(|k| c[k] * c[n - k]).sum();
            assert!((s - 1.0).abs() < 1e-12, "n = {n}: {s}");
        }
        assert_eq!(&c[..4], &[1.0, 0.5, 0.375, 0.3125]);
    }

    #[test]
    fn zero_noise_releases_the_prefix_sum() {
        for factor in [Factorization::Sqrt, blt4(), smooth()] {
            let xs = stream(300, 2);
            let mut c =
                FactorizationCounter::new(&[2], 300, NoiseSpec::Zero, factor.clone(), &SeedSequence::from_seed(1))
                    .unwrap();
            let mut sum = [0.0; 2];
            for x in &xs {
                c.add(x).unwrap();
                sum[0] += x[0];
                sum[1] += x[1];
                assert_eq!(c.release(), &sum);
            }
            // Lattice encode / decode with zero noise: B round(C x) = A x up to rounding.
            let mut c = FactorizationCounter::new(&[2], 300, NoiseSpec::Zero, factor, &SeedSequence::from_seed(1))
                .unwrap()
                .into_secure(20, false)
                .unwrap();
            let lattice = FactorizationCounter::new(
                &[],
                4,
                NoiseSpec::Gaussian { sigma: 1.0 },
                Factorization::Sqrt,
                &SeedSequence::from_seed(0),
            )
            .unwrap()
            .into_secure(19, false)
            .unwrap();
            assert!(lattice.noise().lattice().is_some());
            let mut sum = [0.0; 2];
            for x in &xs {
                c.add(x).unwrap();
                sum[0] += x[0];
                sum[1] += x[1];
                for (a, b) in c.release().iter().zip(&sum) {
                    assert!((a - b).abs() < 1e-3, "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn release_minus_sum_is_the_decoded_noise() {
        // Float noise: release_t - S_t = sum_s b_{t-s} z_s, checked against
        // the dense decoder b = first column of A C^{-1}.
        let n = 64;
        for factor in [Factorization::Sqrt, blt4()] {
            let c_coef = factor.encoder(n);
            // u = C^{-1} e_1 by forward substitution; b = cumsum(u).
            let mut u = vec![0.0; n];
            for t in 0..n {
                let s: f64 = (1..=t).map(|k| c_coef[k] * u[t - k]).sum();
                u[t] = f64::from(u8::from(t == 0)) - s;
            }
            let b: Vec<f64> = u
                .iter()
                .scan(0.0, |acc, v| {
                    *acc += v;
                    Some(*acc)
                })
                .collect();
            let noise = NoiseSpec::Gaussian { sigma: 1.0 };
            let mut cnt =
                FactorizationCounter::new(&[], n as u64, noise, factor.clone(), &SeedSequence::from_seed(3)).unwrap();
            let mut rng = SeedSequence::from_seed(3).stream("tree");
            let z: Vec<f64> = (0..n).map(|_| noise.sample(&mut rng)).collect();
            for t in 0..n {
                cnt.add(&[0.0]).unwrap();
                let want: f64 = (0..=t).map(|s| b[t - s] * z[s]).sum();
                assert!((cnt.release()[0] - want).abs() < 1e-9, "{factor:?} t = {t}");
            }
        }
    }

    #[test]
    fn round_trip_mid_stream_continues_identically() {
        for factor in [Factorization::Sqrt, blt4(), smooth()] {
            for lattice in [false, true] {
                let n = 200u64;
                let xs = stream(n as usize, 9);
                let mut a = FactorizationCounter::new(
                    &[3, 3],
                    n,
                    NoiseSpec::SymmetricGaussian { sigma: 2.0 },
                    factor.clone(),
                    &SeedSequence::from_seed(4),
                )
                .unwrap();
                if lattice {
                    a = a.into_secure(18, false).unwrap();
                }
                for x in &xs[..77] {
                    a.add(x).unwrap();
                }
                let mut b = FactorizationCounter::from_bytes(&a.to_bytes()).unwrap();
                assert_eq!(a.release(), b.release());
                for x in &xs[77..] {
                    a.add(x).unwrap();
                    b.add(x).unwrap();
                    assert_eq!(a.release(), b.release());
                }
                assert!(a.add(&xs[0]).is_err());
            }
        }
        assert!(FactorizationCounter::from_bytes(&[b'F', 9]).is_err());
        assert!(FactorizationCounter::from_bytes(&[3, 1]).is_err());
    }

    #[test]
    fn smooth_binary_releases_sum_the_query_leafs_nodes() {
        // Reference: the authors' loop (mechanism_noise_generation.py):
        // moving from leaf l1 to l2, every level up to the highest
        // differing bit drops l1's node and draws l2's, lowest level first;
        // here the data-free nodes of l2's trailing ones (two or more) come
        // as one draw of their sum, at level 0.
        let (h, w, n) = (10u32, 5u32, 251u64);
        for noise in [NoiseSpec::Gaussian { sigma: 1.0 }, NoiseSpec::Laplace { scale: 0.5 }] {
            let f = Factorization::SmoothBinary { height: h, ones: w };
            let mut c = FactorizationCounter::new(&[2], n, noise, f, &SeedSequence::from_seed(8)).unwrap();
            let mut rng = SeedSequence::from_seed(8).stream("tree");
            let mut nodes = vec![[0.0f64; 2]; h as usize];
            let mut leaf = smooth_binary::leaf_at(h, w, 0);
            let xs = stream(n as usize, 2);
            let mut sum = [0.0; 2];
            for x in &xs {
                c.add(x).unwrap();
                let next = smooth_binary::next_leaf(leaf);
                let free = next.trailing_ones();
                if free >= 2 {
                    let mut z = [0.0; 2];
                    noise.sample_sum_into(&mut rng, free, 0, &mut z);
                    nodes[0] = z;
                    nodes[1..free as usize].fill([0.0; 2]);
                }
                for level in 0..=(leaf ^ next).ilog2() {
                    if next >> level & 1 == 1 && (free < 2 || level >= free) {
                        let mut z = [0.0; 2];
                        noise.sample_into(&mut rng, 0, &mut z);
                        nodes[level as usize] = z;
                    }
                }
                leaf = next;
                sum[0] += x[0];
                sum[1] += x[1];
                assert_eq!(leaf.count_ones(), w);
                assert_eq!(c.noise_terms(), w);
                for e in 0..2 {
                    let noise: f64 = (0..h).filter(|l| leaf >> l & 1 == 1).map(|l| nodes[l as usize][e]).sum();
                    assert!((c.release()[e] - sum[e] - noise).abs() < 1e-9, "t = {}", c.t());
                }
            }
            assert!(c.add(&[0.0, 0.0]).is_err());
        }
        // Too few leaves of weight 5 in 10 levels for 252 steps.
        let f = Factorization::SmoothBinary { height: 10, ones: 5 };
        assert!(FactorizationCounter::new(&[], 252, NoiseSpec::Zero, f, &SeedSequence::from_seed(0)).is_err());
        let spec = FactorSpec::new(&smooth()).unwrap();
        assert_eq!(spec.factorization(), smooth());
    }

    #[test]
    fn lattice_smooth_binary_releases_are_the_exact_sum_of_the_leafs_nodes() {
        // The lattice live total moves by the changed nodes only: it must
        // equal, bit for bit, a fresh sum of the query leaf's node rows.
        let (h, w, n) = (12u32, 6u32, 900u64);
        let f = Factorization::SmoothBinary { height: h, ones: w };
        for noise in [NoiseSpec::Laplace { scale: 3.0 }, NoiseSpec::Gaussian { sigma: 2.0 }] {
            let noise = noise.on_lattice(10).unwrap();
            let mut c = FactorizationCounter::new(&[3], n, noise, f.clone(), &SeedSequence::from_seed(4)).unwrap();
            for x in stream(n as usize, 3) {
                c.add(&x).unwrap();
                let mut sum = [0.0f64; 3];
                for level in (0..h as usize).filter(|l| c.leaf >> l & 1 == 1) {
                    for (s, z) in sum.iter_mut().zip(&c.dec[level * 3..(level + 1) * 3]) {
                        *s += z;
                    }
                }
                assert_eq!(c.decoded, sum, "t = {}", c.t());
                for (r, (e, d)) in c.release().iter().zip(c.exact.iter().zip(&sum)) {
                    assert_eq!(*r, e + d);
                }
            }
        }
    }

    #[test]
    fn laplace_and_wishart_noise_are_refused() {
        let seeds = SeedSequence::from_seed(0);
        for noise in [NoiseSpec::Laplace { scale: 1.0 }, NoiseSpec::Wishart { scale: 1.0, df: 5.0 }] {
            let err = FactorizationCounter::new(&[2, 2], 8, noise, Factorization::Sqrt, &seeds).unwrap_err();
            assert!(err.to_string().contains("Gaussian noise only"), "{err}");
        }
        let lap = NoiseSpec::Laplace { scale: 1.0 }.on_lattice(19).unwrap();
        assert!(FactorizationCounter::new(&[], 8, lap, blt4(), &seeds).is_err());
        let bad = Factorization::Blt { theta: vec![1.0], omega: vec![0.1] };
        assert!(FactorizationCounter::new(&[], 8, NoiseSpec::Zero, bad, &seeds).is_err());
    }

    /// The encoder step as first written (FMA product error, FastTwoSum
    /// with a branch, entry by entry): the reference the vectorized step
    /// must match bit for bit.
    fn reference_forward_step(theta: &[f64], omega: &[f64], bufs: &mut [f64], v: &mut [f64], dim: usize) {
        let d = theta.len();
        let (hi, lo) = bufs.split_at_mut(d * dim);
        for j in 0..dim {
            let x = v[j];
            let mut out = x;
            for i in 0..d {
                let (h, l) = (&mut hi[i * dim + j], &mut lo[i * dim + j]);
                out += omega[i] * (*h + *l);
                let p = theta[i] * *h;
                let p_err = theta[i].mul_add(*h, -p);
                let (s, e) = two_sum(p, x);
                let tail = p_err + theta[i] * *l + e;
                let (nh, nl) = if s.abs() >= tail.abs() {
                    let r = s + tail;
                    (r, tail - (r - s))
                } else {
                    two_sum(s, tail)
                };
                *h = nh;
                *l = nl;
            }
            v[j] = out;
        }
    }

    #[test]
    fn forward_step_matches_the_fma_reference_bit_for_bit() {
        use rand::Rng;
        // Long-memory fit (1 - theta ~ 5e-8) and the T = 2^20 fit, 6 x 6
        // inputs of mixed magnitudes (learner-sized and lattice-sized).
        let fits = [
            (vec![0.872_591_823_8, 0.996_233_296_8, 0.999_917_422, 0.999_999_950_5], vec![0.34, 0.063, 0.0096, 5.9e-5]),
            match blt4() {
                Factorization::Blt { theta, omega } => (theta, omega),
                _ => unreachable!(),
            },
        ];
        let mut rng = SeedSequence::from_seed(9).stream("test");
        for (theta, omega) in fits {
            let dim = 36;
            let mut a = vec![0.0; 2 * theta.len() * dim];
            let mut b = a.clone();
            let mut out = vec![0.0; dim];
            for t in 0..20_000 {
                let scale = if t % 7 == 0 { 1e3 } else { 1.0 };
                let x: Vec<f64> = (0..dim).map(|_| (rng.random::<f64>() - 0.5) * scale).collect();
                let mut v = x.clone();
                reference_forward_step(&theta, &omega, &mut a, &mut v, dim);
                blt_forward_step(&theta, &omega, &mut b, &x, &mut out);
                assert_eq!(v, out, "step {t}");
                assert_eq!(a, b, "step {t}");
            }
        }
    }

    #[test]
    fn long_memory_blt_takes_learner_sized_inputs_on_the_lattice() {
        // The fit of `BLT_BY_LOG2_HORIZON[26]` (1 - theta down to 5e-8) at
        // n = 5e7 on the lattice 2^-17: double-double buffers keep the
        // encoder's error bound below a quarter step for |x| up to far
        // beyond the learners' inputs (|x x^T| <= Ltilde^2 = 2).
        let f = Factorization::Blt {
            theta: vec![0.872_591_823_8, 0.996_233_296_8, 0.999_917_422, 0.999_999_950_5],
            omega: vec![0.337_715_843_5, 0.062_561_850_74, 0.009_632_843_040, 0.000_059_445_369_48],
        };
        let c = FactorizationCounter::new(
            &[],
            50_000_000,
            NoiseSpec::Gaussian { sigma: 6.0 },
            f,
            &SeedSequence::from_seed(1),
        )
        .unwrap()
        .into_secure(17, false)
        .unwrap();
        let limit = c.lattice_input_limit() * 2f64.powi(-17);
        assert!(limit > 1e3, "{limit}");
    }

    #[test]
    fn lattice_encoded_values_are_exact_and_large_inputs_refused() {
        let mut c = FactorizationCounter::new(
            &[],
            1 << 10,
            NoiseSpec::Gaussian { sigma: 1.0 },
            blt4(),
            &SeedSequence::from_seed(2),
        )
        .unwrap()
        .into_secure(19, false)
        .unwrap();
        let limit = c.lattice_input_limit() * 2f64.powi(-19);
        assert!(limit > 1.0, "{limit}");
        c.add(&[1.0]).unwrap();
        assert!(c.add(&[limit * 2.0]).is_err());
        assert_eq!(c.t(), 1);
    }
}
