//! LinUCB with changing regularizers (Shariff & Sheffet 2018, Alg. 1), the
//! engine of both the non-private `LinUCB` and `JointDPLinUCB`.
//!
//! Round t: V_t = G_t + H_t, u~_t = u_t + h_t, theta~_t = V_t^{-1} u~_t,
//! beta_t from Prop. 4, play argmax_x <theta~_t, x> + beta_t ||x||_{V_t^{-1}}.
//!
//! Where (G_t + H_t, u_t + h_t) come from is the [`Statistics`]:
//! - `Exact`: G_t + rho I and u_t, kept with a Sherman–Morrison inverse
//!   (non-private LinUCB; never used by a private learner);
//! - `Tree`: the (d+1) x (d+1) matrix M_t = A_t^T A_t released by a tree
//!   counter (§4): V_t is its top-left d x d block plus `shift` * I added
//!   once per release (2 Upsilon for the Gaussian mechanism, -c of Eq. (4)
//!   for shifted Wishart), u~_t the first d entries of its last column.
//!   Only the released matrix is read; the exact M_t is never formed here.
//!
//! Every constant (noise scale, shift, beta_t's constants) arrives from the
//! Python privacy layer as a plain number.

use serde::{Deserialize, Serialize};

use super::linear_policy::{LinearPolicy, PolicyForm};
use super::ucb_scores::{lower_inverse, ucb_scores, InverseForm, FIXED_MAX_D};
use super::{Learner, PreReleaseChoice, UcbLearner};
use crate::counter::tree::{Padding, TreeCounter};
use crate::counter::{EpochCounter, FactorSpec, FactorizationCounter};
use crate::env::{DecisionRows, DecisionSet};
use crate::error::{Error, Result};
use crate::linalg::{Cholesky, RankOneInverse};
use crate::noise::NoiseSpec;
use crate::rng::SeedSequence;

/// What to do with an input outside the bounds the privacy proof assumes
/// (||x|| <= L, |y| <= Btilde: Shariff & Sheffet Assumption 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BoundsPolicy {
    /// Scale x to norm L and clip y to [-Btilde, Btilde].
    Clip,
    /// Refuse the update with an error.
    Error,
}

/// The declared bounds on each (x, y) and the policy enforcing them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputBounds {
    pub l: f64,
    pub b_tilde: f64,
    pub policy: BoundsPolicy,
}

impl InputBounds {
    /// Checks or clips (x, y) in place. NaN is always an error. True when
    /// the clip changed the pair beyond rounding: ||x|| above L (with the
    /// relative slack below) or |y| above Btilde.
    pub fn enforce(&self, x: &mut [f64], y: &mut f64) -> Result<bool> {
        if !y.is_finite() {
            return Err(Error::invalid("reward", format!("must be finite, got {y}")));
        }
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !norm.is_finite() {
            return Err(Error::invalid("x", "contains NaN or infinite entries"));
        }
        // A relative slack of 1e-12 lets unit vectors built in floating
        // point through; the clip itself restores the exact bound.
        let slack = 1.0 + 1e-12;
        match self.policy {
            BoundsPolicy::Error => {
                if norm > self.l * slack {
                    return Err(Error::invalid(
                        "x",
                        format!("||x|| = {norm} exceeds the declared bound L = {}", self.l),
                    ));
                }
                if y.abs() > self.b_tilde * slack {
                    return Err(Error::invalid(
                        "reward",
                        format!("|y| = {} exceeds the declared bound B_tilde = {}", y.abs(), self.b_tilde),
                    ));
                }
            }
            BoundsPolicy::Clip => {}
        }
        let clipped = norm > self.l * slack || y.abs() > self.b_tilde;
        if norm > self.l {
            let s = self.l / norm;
            for v in x.iter_mut() {
                *v *= s;
            }
        }
        *y = y.clamp(-self.b_tilde, self.b_tilde);
        Ok(clipped)
    }
}

/// beta_t of Prop. 4: `noise_sd * sqrt(log_offset + log det V_t) + offset`
/// (log-det form), or a constant (the upper-bound form).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Radius {
    LogDet { noise_sd: f64, log_offset: f64, offset: f64 },
    Constant(f64),
}

impl Radius {
    #[inline]
    fn at(&self, log_det: f64) -> f64 {
        match *self {
            // The argument is >= 0 whenever rho_min is a true lower bound;
            // the max guards the rare round where the noise breaks it.
            Radius::LogDet { noise_sd, log_offset, offset } => {
                noise_sd * (log_offset + log_det).max(0.0).sqrt() + offset
            }
            Radius::Constant(beta) => beta,
        }
    }
}

/// Where V_t and u~_t come from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum StatisticsConfig {
    /// Exact statistics, constant regularizer rho I (non-private).
    Exact { regularizer: f64, refactor_every: u64 },
    /// M_t released by a tree counter with `noise` per node; `shift` * I is
    /// added to the top-left d x d block of every release; every release is
    /// padded to `pad_to` node draws (0: none; Prop. 9 needs m for Wishart).
    Tree { noise: NoiseSpec, shift: f64, pad_to: u32 },
    /// M_t released by a factorization counter (`crate::counter`, square
    /// root or BLT) with per-step Gaussian noise `noise`; `shift` as for
    /// `Tree`. (Appended: older states keep their variant indices.)
    Factorized { noise: NoiseSpec, shift: f64, factor: FactorSpec },
    /// As `Tree`, with the padding of every release kept per tree level
    /// while that level's bit of t is 0 ([`Padding::Persistent`], the
    /// pan-private tree of Shariff & Sheffet's code) instead of drawn anew
    /// every round. (Appended, as `Factorized`.)
    PersistentTree { noise: NoiseSpec, shift: f64, pad_to: u32 },
    /// M_t released by an epoch counter ([`EpochCounter`]: epochs of
    /// `first_epoch` rounds, then growing by `ratio`; each epoch's sum
    /// released once with `noise`), read with the radius that adapts to the
    /// release ([`EpochRadius`]). (Appended, as `Factorized`.)
    Epoch { noise: NoiseSpec, first_epoch: u64, ratio: f64, radius: EpochRadius },
}

/// The noise-dependent part of the radius of the epoch statistics, as
/// plain numbers from `dpbandits.privacy.epoch`.
///
/// After k released epochs the release's noise block N (d x d) and vector
/// n_b satisfy ||N|| <= `op_bound` sqrt(k) and ||n_b|| <= `vec_bound`
/// sqrt(k) (probability >= 1 - alpha/2 over all k); the release is
/// shifted by c_k = `op_bound` sqrt(k) + `ridge`, so that V_t >= G + ridge I.
/// With B_N, B_b those bounds and lambda = lambda_min(V_t),
///
///   beta_t = noise_sd sqrt(log_offset + ln det V_t)
///            + min(s sqrt(ridge) + s min(sqrt(2 B_N), 2 B_N / sqrt(lambda)) + B_b / sqrt(lambda),
///                  (B_w + s c_k) / sqrt(lambda))
///
/// (B_w = `mixed_bound` sqrt(k), a bound on ||n_b - N theta*||; the second
/// form only when `mixed_bound` > 0)
/// (`noise_sd`, `log_offset` are the `Radius::LogDet` constants of the
/// engine, those of non-private LinUCB with regularizer `ridge`; the
/// derivation is in `dpbandits.privacy.epoch`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochRadius {
    pub op_bound: f64,
    pub vec_bound: f64,
    pub ridge: f64,
    pub s: f64,
    /// Euclidean-norm bound of n_b - N theta* after one epoch (after k:
    /// times sqrt(k)); 0: that form of the radius is not used.
    pub mixed_bound: f64,
}

impl EpochRadius {
    /// (B_N, B_b, c_k) after `epochs` released epochs.
    fn bounds(&self, epochs: u32) -> (f64, f64, f64) {
        let root = f64::from(epochs).sqrt();
        let op = self.op_bound * root;
        (op, self.vec_bound * root, op + self.ridge)
    }

    /// The terms of beta_t beyond the log-det one for a release after
    /// `epochs` epochs whose V has smallest eigenvalue >= `lambda_min` > 0:
    /// S sqrt(rho) (non-private LinUCB's) + S min(sqrt(2 B_N), 2 B_N /
    /// sqrt(lambda_min)) + B_b / sqrt(lambda_min), or (B_w + S c_k) /
    /// sqrt(lambda_min) where smaller.
    fn extra(&self, epochs: u32, lambda_min: f64) -> f64 {
        let (op, vec, shift) = self.bounds(epochs);
        let root = lambda_min.sqrt();
        let split = self.s * (self.ridge.sqrt() + (2.0 * op).sqrt().min(2.0 * op / root)) + vec / root;
        if self.mixed_bound > 0.0 {
            let mixed = (self.mixed_bound * f64::from(epochs).sqrt() + self.s * shift) / root;
            split.min(mixed)
        } else {
            split
        }
    }

    fn validate(&self) -> Result<()> {
        crate::error::check_finite(
            "epoch radius",
            &[self.op_bound, self.vec_bound, self.ridge, self.s, self.mixed_bound],
        )?;
        if self.op_bound < 0.0 || self.vec_bound < 0.0 || self.mixed_bound < 0.0 {
            return Err(Error::invalid("op_bound", "the noise bounds must be >= 0"));
        }
        crate::error::check_positive("ridge", self.ridge)?;
        crate::error::check_positive("s", self.s)
    }
}

/// A lower bound on the smallest eigenvalue of the positive definite d x d
/// `v`: the largest mu of a bisection on [0, min_i v_ii] for which v - mu I
/// still has a Cholesky factor (Sylvester's inertia), minus a relative
/// 1e-12. Exact to 2^-48 of min_i v_ii.
pub(crate) fn smallest_eigenvalue_lower_bound(v: &[f64], d: usize) -> f64 {
    let mut hi = (0..d).map(|i| v[i * d + i]).fold(f64::INFINITY, f64::min);
    let mut lo = 0.0f64;
    let mut shifted = v.to_vec();
    let factors = |m: &[f64]| {
        if d > FIXED_MAX_D {
            Cholesky::factor_wide(m, d).is_ok()
        } else {
            Cholesky::factor(m, d).is_ok()
        }
    };
    for _ in 0..48 {
        let mid = 0.5 * (lo + hi);
        for i in 0..d {
            shifted[i * d + i] = v[i * d + i] - mid;
        }
        if factors(&shifted) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo * (1.0 - 1e-12)
}

/// Everything a [`LinUcb`] engine needs, as plain numbers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinUcbConfig {
    pub d: usize,
    pub horizon: u64,
    pub statistics: StatisticsConfig,
    pub radius: Radius,
    pub bounds: InputBounds,
}

/// Running statistics (see the module documentation).
// An engine holds one variant for its whole life; boxing the larger one
// would add an indirection to every round and save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Statistics {
    Exact {
        inv: RankOneInverse,
        u: Vec<f64>,
        log_det: f64,
    },
    Tree {
        tree: TreeCounter,
        shift: f64,
    },
    Factorized {
        counter: FactorizationCounter,
        shift: f64,
    },
    /// `choice`: the uniform choice among the rows before the first epoch
    /// ends (no release yet; [`super::PreReleaseChoice`]).
    Epoch {
        counter: EpochCounter,
        radius: EpochRadius,
        choice: PreReleaseChoice,
    },
}

impl Statistics {
    /// The released (noisy) M_t and the shift, for the private variants.
    fn noisy_release(&self) -> Option<(&[f64], f64)> {
        match self {
            Statistics::Tree { tree, shift } => Some((tree.release(), *shift)),
            Statistics::Factorized { counter, shift } => Some((counter.release(), *shift)),
            Statistics::Exact { .. } | Statistics::Epoch { .. } => None,
        }
    }
}

/// The LinUCB engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinUcb {
    config: LinUcbConfig,
    stats: Statistics,
    /// Completed rounds (updates).
    t: u64,
    /// Rounds in which the released V_t was not positive definite.
    psd_failures: u64,
    /// Recorded rounds whose (x, y) the bounds policy clipped.
    clipped: u64,
    /// The round (value of `t`) of the last counted failure, so that
    /// `ucb` then `select` in one round count it once.
    failure_counted_at: Option<u64>,
    /// The last released (V, u~) that factored, for the fallback (empty
    /// until one has).
    last_good_v: Vec<f64>,
    last_good_u: Vec<f64>,
    #[serde(skip)]
    work: Workspace,
}

/// Per-round buffers (no state: rebuilt on demand).
#[derive(Clone, Debug, Default)]
struct Workspace {
    est: ReleasedEstimates,
    row: Vec<f64>,
    outer: Vec<f64>,
    /// The round (value of `t`) whose estimates `est` holds, with that
    /// round's (beta_t, factored): the release changes only when a reward
    /// is recorded, so the selections of one round (a batch of selections
    /// awaiting their rewards) compute them once, with the same bits.
    prepared: Option<(u64, f64, bool)>,
    /// Epoch statistics: the released epochs whose estimates `est` holds,
    /// with their (beta, factored); the release changes only at epoch ends.
    epoch_prepared: Option<(u32, f64, bool)>,
}

/// theta~ = V^{-1} u~ and the UCB scores from a released (V, u~): the
/// per-round work of every engine that reads released statistics (this
/// one's `Tree` and `Factorized` variants, the trust-model learners of
/// `super::linucb_trust`). The engine writes V and u~ into `v` and `u`,
/// then calls [`ReleasedEstimates::factor`].
#[derive(Clone, Debug, Default)]
pub(crate) struct ReleasedEstimates {
    pub(crate) v: Vec<f64>,
    pub(crate) u: Vec<f64>,
    theta: Vec<f64>,
    chol: Option<Cholesky>,
    /// L^{-1} of the current factor (d <= `FIXED_MAX_D`: the unrolled kernels).
    factor_inv: Vec<f64>,
    /// Scores (first half) and means (second half) of the current set.
    scores: Vec<f64>,
}

impl ReleasedEstimates {
    pub(crate) fn new(d: usize) -> Self {
        ReleasedEstimates {
            v: vec![0.0; d * d],
            u: vec![0.0; d],
            theta: vec![0.0; d],
            chol: None,
            factor_inv: vec![0.0; d * d],
            scores: Vec::new(),
        }
    }

    /// Factors V and solves for theta~. When V is not positive definite
    /// (a noisy release can fail to be), the last (V, u~) that factored is
    /// used instead, or `fallback_diag` I and u~ = 0 before any did:
    /// post-processing of earlier releases, no privacy cost. `last_good_*`
    /// hold that pair (empty until one factors; state of the engine).
    /// Returns false when it fell back.
    pub(crate) fn factor(
        &mut self,
        last_good_v: &mut Vec<f64>,
        last_good_u: &mut Vec<f64>,
        fallback_diag: f64,
    ) -> bool {
        let ok = self.factor_release(last_good_v, last_good_u, fallback_diag);
        if ok {
            self.remember(last_good_v, last_good_u);
        }
        ok
    }

    /// [`ReleasedEstimates::factor`] without recording (V, u~) as the last
    /// pair that factored: that is [`ReleasedEstimates::remember`]'s, once
    /// the round's decision set is accepted.
    pub(crate) fn factor_release(&mut self, last_good_v: &[f64], last_good_u: &[f64], fallback_diag: f64) -> bool {
        let d = self.u.len();
        let ok = refactor(&mut self.chol, &self.v, d);
        self.solve_after_factor(ok, last_good_v, last_good_u, fallback_diag);
        ok
    }

    /// Factors V and solves for theta~ with no fallback: false (and nothing
    /// solved) when V is not positive definite. For a policy frozen from a
    /// pair that factored ([`super::linear_policy::LinearPolicy`]).
    pub(crate) fn factor_release_only(&mut self, d: usize) -> bool {
        if !refactor(&mut self.chol, &self.v, d) {
            return false;
        }
        self.solve_after_factor(true, &[], &[], 1.0);
        true
    }

    /// theta~ given directly (an engine that keeps V^{-1} itself).
    pub(crate) fn set_theta_direct(&mut self, theta: &[f64]) {
        self.theta.copy_from_slice(theta);
    }

    /// The released (V, u~) of the round: after [`ReleasedEstimates::factor_release`],
    /// the pair that factored (a fallback's when the release did not).
    pub(crate) fn released_pair(&self) -> (Vec<f64>, Vec<f64>) {
        (self.v.clone(), self.u.clone())
    }

    fn solve_after_factor(&mut self, ok: bool, last_good_v: &[f64], last_good_u: &[f64], fallback_diag: f64) {
        let d = self.u.len();
        if !ok {
            if last_good_v.is_empty() {
                self.v.fill(0.0);
                for i in 0..d {
                    self.v[i * d + i] = fallback_diag;
                }
                self.u.fill(0.0);
            } else {
                self.v.copy_from_slice(last_good_v);
                self.u.copy_from_slice(last_good_u);
            }
            assert!(refactor(&mut self.chol, &self.v, d), "fallback matrix is positive definite");
        }
        let chol = self.chol.as_ref().expect("factor set above");
        self.theta.copy_from_slice(&self.u);
        chol.solve_in_place(&mut self.theta);
        if d <= FIXED_MAX_D {
            // Small d: F = L^-1 (d^3/6 flops) feeds the unrolled kernels.
            lower_inverse(chol.lower(), chol.inv_diag(), d, &mut self.factor_inv);
        }
    }

    /// Records the (V, u~) just factored as the last pair that did.
    pub(crate) fn remember(&self, last_good_v: &mut Vec<f64>, last_good_u: &mut Vec<f64>) {
        // Reuse the buffers: this runs every round.
        last_good_v.clear();
        last_good_v.extend_from_slice(&self.v);
        last_good_u.clear();
        last_good_u.extend_from_slice(&self.u);
    }

    /// log det V of the last [`ReleasedEstimates::factor`].
    pub(crate) fn log_det(&self) -> f64 {
        self.chol.as_ref().expect("factored").log_det()
    }

    pub(crate) fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// UCB scores of every action of `set`, in order: with the factored V,
    /// or with `exact_inverse` = V^{-1} kept by the engine (theta~ written
    /// by [`ReleasedEstimates::set_theta`]). The symmetric V^{-1} scores
    /// at d^2 / 2 multiply-adds an action at large d too (see
    /// [`super::ucb_scores`]), so it is never factored.
    pub(crate) fn score(&mut self, set: DecisionRows<'_>, beta: f64, exact_inverse: Option<&[f64]>) -> &[f64] {
        let d = self.u.len();
        self.scores.resize(2 * set.k, 0.0);
        let inverse = match exact_inverse {
            Some(vinv) => InverseForm::Symmetric(vinv),
            None if d <= FIXED_MAX_D => InverseForm::LowerFactor(&self.factor_inv),
            // Larger d: one blocked forward substitution over all actions.
            None => {
                let chol = self.chol.as_ref().expect("factored");
                InverseForm::Cholesky { lower: chol.lower(), inv_diag: chol.inv_diag() }
            }
        };
        ucb_scores(inverse, &self.theta, beta, set.features, d, &mut self.scores);
        &self.scores[..set.k]
    }

    /// theta~ = `vinv` u for an engine that keeps V^{-1} itself.
    pub(crate) fn set_theta(&mut self, vinv: &[f64], u: &[f64]) {
        crate::linalg::matvec_in_order(vinv, u, -0.0, &mut self.theta);
    }
}

/// Factors the d x d `v` into `chol` (made on first use); false when `v`
/// is not positive definite. Above the fixed-size kernels' d, by
/// [`Cholesky::refactor_wide`] (the same factor to rounding; d <= 16 keep
/// their bits).
fn refactor(chol: &mut Option<Cholesky>, v: &[f64], d: usize) -> bool {
    let wide = d > FIXED_MAX_D;
    match chol.as_mut() {
        Some(c) if wide => c.refactor_wide(v).is_ok(),
        Some(c) => c.refactor(v).is_ok(),
        None => {
            let factored = if wide { Cholesky::factor_wide(v, d) } else { Cholesky::factor(v, d) };
            factored.map(|c| *chol = Some(c)).is_ok()
        }
    }
}

/// The stream of the epoch statistics' choice before their first release.
const PRE_RELEASE_STREAM: &str = "linucb/pre_release_choice";

/// Largest feature dimension an engine accepts: its (d + 1) x (d + 1)
/// matrices then take at most 8 MB each.
pub const MAX_DIMENSION: usize = 1024;

impl LinUcb {
    /// A fresh engine. Tree noise is drawn from `seeds`' `"tree"` stream.
    pub fn new(config: LinUcbConfig, seeds: &SeedSequence) -> Result<Self> {
        let d = config.d;
        if d == 0 {
            return Err(Error::invalid("d", "must be >= 1"));
        }
        // d * d must not wrap around (d = 2^32 would give a buffer of length
        // 0 and a panic on an index), and (d + 1)^2 entries per matrix must
        // fit in memory.
        if d > MAX_DIMENSION {
            return Err(Error::invalid("d", format!("must be <= {MAX_DIMENSION}, got {d}")));
        }
        if config.horizon == 0 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        crate::error::check_positive("L", config.bounds.l)?;
        crate::error::check_positive("B_tilde", config.bounds.b_tilde)?;
        match config.radius {
            Radius::LogDet { noise_sd, log_offset, offset } => {
                crate::error::check_finite("radius", &[noise_sd, log_offset, offset])?;
            }
            Radius::Constant(beta) => crate::error::check_finite("radius", &[beta])?,
        }
        let stats = match config.statistics {
            StatisticsConfig::Exact { regularizer, refactor_every } => {
                crate::error::check_positive("regularizer", regularizer)?;
                let mut v = vec![0.0; d * d];
                for i in 0..d {
                    v[i * d + i] = regularizer;
                }
                Statistics::Exact {
                    inv: RankOneInverse::new(&v, d, refactor_every)?,
                    u: vec![0.0; d],
                    log_det: d as f64 * regularizer.ln(),
                }
            }
            StatisticsConfig::Tree { noise, shift, pad_to }
            | StatisticsConfig::PersistentTree { noise, shift, pad_to } => {
                crate::error::check_finite("shift", &[shift])?;
                let p = d + 1;
                let padding = if matches!(config.statistics, StatisticsConfig::PersistentTree { .. }) {
                    Padding::Persistent
                } else {
                    Padding::Fresh
                };
                let mut tree = TreeCounter::with_padding_mode(&[p, p], config.horizon, noise, pad_to, padding, seeds)?;
                // A_1 = 0 (§4): the first leaf is the zero row, so that the
                // release used in round 1 already carries node noise.
                tree.add(&vec![0.0; p * p])?;
                Statistics::Tree { tree, shift }
            }
            StatisticsConfig::Factorized { noise, shift, factor } => {
                crate::error::check_finite("shift", &[shift])?;
                let p = d + 1;
                let mut counter =
                    FactorizationCounter::new(&[p, p], config.horizon, noise, factor.factorization(), seeds)?;
                // A_1 = 0, as for the tree.
                counter.add(&vec![0.0; p * p])?;
                Statistics::Factorized { counter, shift }
            }
            StatisticsConfig::Epoch { noise, first_epoch, ratio, radius } => {
                radius.validate()?;
                if !matches!(config.radius, Radius::LogDet { offset, .. } if offset == 0.0) {
                    return Err(Error::invalid(
                        "radius",
                        "the epoch statistics take the log-det radius without an offset (the bias term is theirs)",
                    ));
                }
                let p = d + 1;
                let counter =
                    EpochCounter::new(&[p, p], config.horizon, noise, first_epoch.min(config.horizon), ratio, seeds)?;
                Statistics::Epoch { counter, radius, choice: PreReleaseChoice::new(seeds, PRE_RELEASE_STREAM) }
            }
        };
        Ok(LinUcb {
            config,
            stats,
            t: 0,
            psd_failures: 0,
            clipped: 0,
            failure_counted_at: None,
            last_good_v: Vec::new(),
            last_good_u: Vec::new(),
            work: Workspace::default(),
        })
    }

    /// The configuration the engine was built with.
    pub fn config(&self) -> &LinUcbConfig {
        &self.config
    }

    /// Completed rounds.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Rounds whose released V_t was not positive definite (see
    /// [`LinUcb::estimates`] for the fallback).
    pub fn psd_failures(&self) -> u64 {
        self.psd_failures
    }

    /// Recorded rounds whose (x, y) the bounds policy clipped
    /// ([`InputBounds::enforce`]).
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    fn ensure_workspace(&mut self) {
        let d = self.config.d;
        if self.work.row.len() != d + 1 {
            self.work = Workspace {
                est: ReleasedEstimates::new(d),
                row: vec![0.0; d + 1],
                outer: vec![0.0; (d + 1) * (d + 1)],
                prepared: None,
                epoch_prepared: None,
            };
        }
    }

    /// Computes theta~_t and beta_t for the coming round in the workspace
    /// alone; returns beta_t and whether the release factored, for
    /// [`LinUcb::commit_estimates`] to record once the round's decision set
    /// is accepted.
    ///
    /// Fallback when a released V_t is not positive definite (the shifted
    /// Gaussian release fails with probability about alpha / 2n per round,
    /// Prop. 11): use the most recent release that was (post-processing of
    /// an earlier release, so privacy is unaffected); before any such
    /// release, use V = shift * I and u~ = 0.
    fn estimates_uncommitted(&mut self) -> (f64, bool) {
        self.ensure_workspace();
        if let Some((t, beta, factored)) = self.work.prepared {
            if t == self.t {
                return (beta, factored);
            }
        }
        let (beta, factored) = self.compute_estimates();
        self.work.prepared = Some((self.t, beta, factored));
        (beta, factored)
    }

    /// [`LinUcb::estimates_uncommitted`] without the per-round cache.
    fn compute_estimates(&mut self) -> (f64, bool) {
        let d = self.config.d;
        let radius = self.config.radius;
        let est = &mut self.work.est;
        match &self.stats {
            Statistics::Exact { inv, u, log_det } => {
                est.set_theta(inv.inverse(), u);
                (radius.at(*log_det), true)
            }
            noisy @ (Statistics::Tree { .. } | Statistics::Factorized { .. }) => {
                let p = d + 1;
                let (r, shift) = noisy.noisy_release().expect("a private variant");
                for i in 0..d {
                    est.v[i * d..(i + 1) * d].copy_from_slice(&r[i * p..i * p + d]);
                    est.v[i * d + i] += shift;
                    est.u[i] = r[i * p + d];
                }
                let fallback = shift.abs().max(f64::MIN_POSITIVE);
                let ok = est.factor_release(&self.last_good_v, &self.last_good_u, fallback);
                (radius.at(est.log_det()), ok)
            }
            Statistics::Epoch { counter, radius: epoch_radius, .. } => {
                let epochs = counter.epochs();
                if let Some((k, beta, factored)) = self.work.epoch_prepared {
                    if k == epochs {
                        return (beta, factored);
                    }
                }
                let p = d + 1;
                let (_, _, shift) = epoch_radius.bounds(epochs);
                let r = counter.release();
                for i in 0..d {
                    est.v[i * d..(i + 1) * d].copy_from_slice(&r[i * p..i * p + d]);
                    est.v[i * d + i] += shift;
                    est.u[i] = r[i * p + d];
                }
                let ok = est.factor_release(&self.last_good_v, &self.last_good_u, shift);
                // A fallback pair is an earlier release (fewer epochs, smaller
                // noise bounds): the current bounds hold for it too.
                let lambda = smallest_eigenvalue_lower_bound(&est.v, d).max(f64::MIN_POSITIVE);
                let beta = radius.at(est.log_det()) + epoch_radius.extra(epochs, lambda);
                self.work.epoch_prepared = Some((epochs, beta, ok));
                (beta, ok)
            }
        }
    }

    /// The engine state [`LinUcb::estimates_uncommitted`] leaves out: the
    /// release as the last that factored, or the round counted as a
    /// failure (once per round).
    fn commit_estimates(&mut self, factored: bool) {
        if matches!(self.stats, Statistics::Exact { .. }) {
            return;
        }
        if factored {
            self.work.est.remember(&mut self.last_good_v, &mut self.last_good_u);
        } else if self.failure_counted_at != Some(self.t) {
            self.psd_failures += 1;
            self.failure_counted_at = Some(self.t);
        }
    }

    /// Checks `set` (and that rounds are left) and computes the round's
    /// estimates without committing them; returns (beta_t, factored).
    fn prepare_round(&mut self, set: DecisionRows<'_>) -> Result<(f64, bool)> {
        super::check_decision_set(set, self.config.d)?;
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is reached", self.config.horizon)));
        }
        Ok(self.estimates_uncommitted())
    }

    /// The UCB scores of `set` from the prepared estimates.
    fn score_prepared(&mut self, set: DecisionRows<'_>, beta: f64) -> &[f64] {
        let exact = match &self.stats {
            Statistics::Exact { inv, .. } => Some(inv.inverse()),
            Statistics::Tree { .. } | Statistics::Factorized { .. } | Statistics::Epoch { .. } => None,
        };
        self.work.est.score(set, beta, exact)
    }

    /// `select` on a decision set whose entries are not known to be finite
    /// (the Python binding's, which scores a NumPy array in place): a set
    /// with a NaN or infinite entry is refused with the binding's error,
    /// before the round changes any engine state, as if it had been checked
    /// first. The check rides on the scoring pass: a non-finite x_c makes
    /// the term theta_c x_c of the mean, hence the score, non-finite (a
    /// product with an infinity or a NaN is never finite, nor is a sum with
    /// one), so the set is read a second time only when a score is not
    /// finite. (At (d, K) = (64, 4096) the separate read of the 2 MB set
    /// cost about a tenth of the round.)
    pub fn select_unvalidated(&mut self, set: DecisionRows<'_>) -> Result<usize> {
        let (beta, factored) = self.prepare_round(set)?;
        let scores = self.score_prepared(set, beta);
        let best = super::first_argmax(scores);
        if !scores.iter().all(|s| s.is_finite()) && !crate::error::all_finite(set.features) {
            return Err(Error::invalid("decision_set", "contains NaN or infinite entries"));
        }
        self.commit_estimates(factored);
        Ok(self.pre_release_choice(set.k).unwrap_or(best))
    }

    /// The row to play in a scored set of `k` rows while the epoch
    /// statistics have released nothing (before the first epoch ends):
    /// uniformly at random ([`super::PreReleaseChoice`]: V = rho I and
    /// u~ = 0 then, so the UCBs tie up to the rounding of ||x||; the choice
    /// reads no data and costs no privacy). `None` otherwise (the first
    /// maximum is played): after the first release, and for the tree and
    /// factorization counters, whose releases carry noise from round 1,
    /// and exact statistics.
    pub fn pre_release_choice(&mut self, k: usize) -> Option<usize> {
        match &mut self.stats {
            Statistics::Epoch { counter, choice, .. } if counter.epochs() == 0 => Some(choice.pick(k)),
            _ => None,
        }
    }

    /// UCB_t(x) of every action in `set`, in order (for inspection).
    pub fn ucb(&mut self, set: &DecisionSet) -> Result<Vec<f64>> {
        Ok(UcbLearner::scores(self, set.rows())?.to_vec())
    }

    /// The policy the next selection follows, from released values only:
    /// the released (V_t, u~_t) (or, when it is not positive definite, the
    /// pair the round falls back to) and beta_t; for exact statistics,
    /// V_t^{-1} and theta_t. Nothing in the engine changes.
    pub fn policy(&mut self) -> Result<LinearPolicy> {
        let (beta, _) = self.estimates_uncommitted();
        let d = self.config.d;
        let form = match &self.stats {
            Statistics::Exact { inv, .. } => {
                PolicyForm::Inverse { inverse: inv.inverse().to_vec(), theta: self.work.est.theta().to_vec() }
            }
            Statistics::Tree { .. } | Statistics::Factorized { .. } | Statistics::Epoch { .. } => {
                let (v, u) = self.work.est.released_pair();
                PolicyForm::Released { v, u }
            }
        };
        LinearPolicy::new(d, beta, form)
    }

    /// Records (x, y) after enforcing the input bounds.
    pub fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        let d = self.config.d;
        if x.len() != d {
            return Err(Error::invalid("x", format!("expected {d} entries, got {}", x.len())));
        }
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is reached", self.config.horizon)));
        }
        self.ensure_workspace();
        let mut y = y;
        let row = &mut self.work.row;
        row[..d].copy_from_slice(x);
        let clipped = self.config.bounds.enforce(&mut row[..d], &mut y)?;
        row[d] = y;
        match &mut self.stats {
            Statistics::Exact { inv, u, log_det } => {
                let xr = &row[..d];
                // Matrix determinant lemma: det(V + x x^T) = det V (1 + x^T V^{-1} x).
                *log_det += (1.0 + inv.inv_quad(xr)).ln();
                inv.update(1.0, 1.0, xr)?;
                for (ui, xi) in u.iter_mut().zip(xr) {
                    *ui += y * xi;
                }
            }
            Statistics::Tree { tree, .. } => {
                // Round n's row would only enter releases after the horizon.
                if tree.t() < tree.horizon() {
                    let p = d + 1;
                    let outer = &mut self.work.outer;
                    for i in 0..p {
                        for j in 0..p {
                            outer[i * p + j] = row[i] * row[j];
                        }
                    }
                    tree.add(outer)?;
                }
            }
            Statistics::Factorized { counter, .. } => {
                if counter.t() < counter.horizon() {
                    let p = d + 1;
                    let outer = &mut self.work.outer;
                    for i in 0..p {
                        for j in 0..p {
                            outer[i * p + j] = row[i] * row[j];
                        }
                    }
                    counter.add(outer)?;
                }
            }
            Statistics::Epoch { counter, .. } => {
                let p = d + 1;
                let outer = &mut self.work.outer;
                for i in 0..p {
                    for j in 0..p {
                        outer[i * p + j] = row[i] * row[j];
                    }
                }
                counter.add(outer)?;
            }
        }
        self.clipped += u64::from(clipped);
        self.t += 1;
        Ok(())
    }

    /// `runs` runs of a fresh engine's epoch counter on the rows of
    /// `values` ((d + 1)^2 entries each): the releases after each addition
    /// (see [`crate::counter::TreeCounter::release_runs`]); for audits of
    /// the exact released values. Other statistics: an error.
    pub fn release_runs(&mut self, values: &[f64], runs: usize) -> Result<Vec<f64>> {
        match &mut self.stats {
            Statistics::Epoch { counter, .. } if self.t == 0 => counter.release_runs(values, runs),
            Statistics::Epoch { .. } => Err(Error::State("release_runs needs a fresh engine (t = 0)".into())),
            _ => Err(Error::State("release_runs is for the epoch statistics".into())),
        }
    }

    /// Draws future tree noise from `seeds` (see [`TreeCounter::reseed`]);
    /// exact statistics have no generator.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.work.prepared = None;
        self.work.epoch_prepared = None;
        match &mut self.stats {
            Statistics::Tree { tree, .. } => tree.reseed(seeds),
            Statistics::Factorized { counter, .. } => counter.reseed(seeds),
            Statistics::Epoch { counter, choice, .. } => {
                counter.reseed(seeds);
                *choice = PreReleaseChoice::new(seeds, PRE_RELEASE_STREAM);
            }
            Statistics::Exact { .. } => {}
        }
    }

    /// Tree noise from the operating system from now on (secure mode;
    /// before the first update).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.work.prepared = None;
        match &mut self.stats {
            Statistics::Tree { tree, .. } => tree.use_os_entropy(),
            Statistics::Factorized { counter, .. } => counter.use_os_entropy(),
            Statistics::Epoch { counter, .. } => counter.use_os_entropy(),
            Statistics::Exact { .. } => Ok(()),
        }
    }

    /// Whether tree noise comes from the operating system.
    pub fn os_entropy(&self) -> bool {
        match &self.stats {
            Statistics::Tree { tree, .. } => tree.os_entropy(),
            Statistics::Factorized { counter, .. } => counter.os_entropy(),
            Statistics::Epoch { counter, .. } => counter.os_entropy(),
            Statistics::Exact { .. } => false,
        }
    }

    /// Serialized state (tree noise and generator included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an engine written by [`LinUcb::to_bytes`]; a state whose
    /// buffers disagree with d (which would index out of bounds later) is
    /// refused.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let e: LinUcb = crate::state::decode(bytes)?;
        let d = e.config.d;
        let p = d + 1;
        let stats_ok = match &e.stats {
            Statistics::Exact { inv, u, .. } => inv.n() == d && inv.matrix().len() == d * d && u.len() == d,
            Statistics::Tree { tree, .. } => tree.dim() == p * p,
            Statistics::Factorized { counter, .. } => counter.dim() == p * p,
            Statistics::Epoch { counter, .. } => counter.dim() == p * p,
        };
        let fallback_ok = (e.last_good_v.is_empty() && e.last_good_u.is_empty())
            || (e.last_good_v.len() == d * d && e.last_good_u.len() == d);
        if d == 0 || d > MAX_DIMENSION || !stats_ok || !fallback_ok {
            return Err(Error::Decode("inconsistent LinUCB state".into()));
        }
        // The configuration passes the constructor's checks, and the
        // counter is the one it builds (noise, horizon, padding, shift),
        // with one addition more than the rounds (A_1 = 0) up to its
        // horizon (round n's row would enter no release).
        let added = e.t.saturating_add(1).min(e.config.horizon);
        let reference = LinUcb::new(e.config, &SeedSequence::from_seed(0))
            .map_err(|err| Error::Decode(format!("LinUCB state with an invalid configuration: {err}")))?;
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let counted = match (&e.stats, &reference.stats) {
            (Statistics::Exact { inv, u, log_det }, Statistics::Exact { .. }) => {
                finite(inv.matrix()) && finite(u) && log_det.is_finite()
            }
            (Statistics::Tree { tree, shift }, Statistics::Tree { tree: r, shift: rs }) => {
                tree.check_restored(r)?;
                shift.to_bits() == rs.to_bits() && tree.t() == added
            }
            (Statistics::Factorized { counter, shift }, Statistics::Factorized { counter: r, shift: rs }) => {
                counter.check_restored(r)?;
                shift.to_bits() == rs.to_bits() && counter.t() == added
            }
            (Statistics::Epoch { counter, radius, .. }, Statistics::Epoch { counter: r, radius: rr, .. }) => {
                counter.check_restored(r)?;
                radius == rr && counter.t() == e.t
            }
            _ => false,
        };
        if !counted || e.t > e.config.horizon || e.clipped > e.t || !finite(&e.last_good_v) || !finite(&e.last_good_u) {
            return Err(Error::Decode("inconsistent LinUCB state".into()));
        }
        Ok(e)
    }
}

impl super::LearnerFactory for LinUcbConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(LinUcb::new(*self, seeds)?))
    }
}

impl UcbLearner for LinUcb {
    fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        let (beta, factored) = self.prepare_round(set)?;
        self.commit_estimates(factored);
        Ok(self.score_prepared(set, beta))
    }

    fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        LinUcb::observe(self, x, y)
    }

    fn use_os_entropy(&mut self) -> Result<()> {
        LinUcb::use_os_entropy(self)
    }

    fn pre_release_choice(&mut self, k: usize) -> Option<usize> {
        LinUcb::pre_release_choice(self, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_eigenvalue_bound_is_tight_and_below() {
        let diag = [2.0, 0.0, 0.0, 5.0];
        let b = smallest_eigenvalue_lower_bound(&diag, 2);
        assert!(b <= 2.0 && b > 2.0 * (1.0 - 1e-9), "{b}");
        // [[2, 1], [1, 2]] has eigenvalues 1 and 3.
        let m = [2.0, 1.0, 1.0, 2.0];
        let b = smallest_eigenvalue_lower_bound(&m, 2);
        assert!(b <= 1.0 && b > 1.0 - 1e-9, "{b}");
    }

    #[test]
    fn epoch_radius_terms_by_hand() {
        let r = EpochRadius { op_bound: 3.0, vec_bound: 2.0, ridge: 1.0, s: 1.0, mixed_bound: 0.0 };
        // k = 4: B_N = 6, B_b = 4; lambda = 100: 1 + min(sqrt(12), 12 / 10) + 4 / 10 = 2.6.
        assert!((r.extra(4, 100.0) - 2.6).abs() < 1e-12);
        // No epoch yet: S sqrt(rho), non-private LinUCB's offset.
        assert!((r.extra(0, 1.0) - 1.0).abs() < 1e-12);
        // With B_w(1) = 5, k = 4: (10 + 6 + 1) / 10 = 1.7 < 2.6 at lambda = 100;
        // at lambda = 4: 17 / 2 = 8.5 > 1 + sqrt(12) + 2, the first form stays.
        let m = EpochRadius { mixed_bound: 5.0, ..r };
        assert!((m.extra(4, 100.0) - 1.7).abs() < 1e-12);
        assert!((m.extra(4, 4.0) - (3.0 + 12f64.sqrt())).abs() < 1e-12);
    }
    use crate::env::{Environment, Feedback, RewardModel, ShariffSheffetEnv};
    use crate::sim::run_episode;

    /// Each score is <theta, x> + beta sqrt(x^T V^-1 x) by plain loops,
    /// to 1e-12 relative.
    fn assert_scores_are_the_definition(
        scores: &[f64],
        set: &DecisionSet,
        vinv: &[f64],
        theta: &[f64],
        beta: f64,
        context: &str,
    ) {
        let d = set.d;
        for (i, score) in scores.iter().enumerate() {
            let x = set.action(i);
            let quad: f64 = (0..d).map(|a| (0..d).map(|b| x[a] * vinv[a * d + b] * x[b]).sum::<f64>()).sum();
            let mean: f64 = x.iter().zip(theta).map(|(a, b)| a * b).sum();
            let direct = mean + beta * quad.sqrt();
            let scale = mean.abs() + beta * quad.sqrt();
            assert!((score - direct).abs() <= 1e-12 * scale, "{context}, action {i}: {score} vs {direct}");
        }
    }

    fn config(d: usize, horizon: u64, statistics: StatisticsConfig) -> LinUcbConfig {
        LinUcbConfig {
            d,
            horizon,
            statistics,
            radius: Radius::LogDet { noise_sd: 1.0, log_offset: 2.0 * (2.0f64 * horizon as f64).ln(), offset: 1.0 },
            bounds: InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip },
        }
    }

    fn epoch_engine(first_epoch: u64, horizon: u64, seed: u64) -> LinUcb {
        let radius = EpochRadius { op_bound: 3.0, vec_bound: 2.0, ridge: 1.0, s: 1.0, mixed_bound: 0.0 };
        let statistics =
            StatisticsConfig::Epoch { noise: NoiseSpec::Gaussian { sigma: 0.5 }, first_epoch, ratio: 1.5, radius };
        let mut c = config(3, horizon, statistics);
        c.radius = Radius::LogDet { noise_sd: 1.0, log_offset: 2.0 * (2.0f64 * horizon as f64).ln(), offset: 0.0 };
        LinUcb::new(c, &SeedSequence::from_seed(seed)).unwrap()
    }

    fn epoch_counter_bytes(e: &LinUcb) -> Vec<u8> {
        match &e.stats {
            Statistics::Epoch { counter, .. } => crate::state::encode(counter),
            _ => unreachable!("an epoch engine"),
        }
    }

    #[test]
    fn epoch_statistics_choose_uniformly_before_their_first_release_then_the_ucb_argmax() {
        let mut e = epoch_engine(1800, 2500, 7);
        // The D.2 instance (Shariff & Sheffet 2018, App. D.2) at K = 9.
        let mut env =
            ShariffSheffetEnv::new(3, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(8)).unwrap();
        let released = |e: &LinUcb| matches!(&e.stats, Statistics::Epoch { counter, .. } if counter.epochs() > 0);
        let (before, after) =
            crate::policy::assert_uniform_before_release(&mut e, &mut env, 2500, released, epoch_counter_bytes);
        assert_eq!((before, after), (1800, 700));
    }

    #[test]
    fn the_epoch_pre_release_stream_is_in_the_state_reseeded_and_shared_by_both_selects() {
        let mut a = epoch_engine(500, 2000, 9);
        let mut env =
            ShariffSheffetEnv::new(3, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(10)).unwrap();
        let mut set = DecisionSet::default();
        env.next_round(1, &mut set).unwrap();
        let i = Learner::select(&mut a, &set).unwrap();
        let fb = env.feedback(i).unwrap();
        Learner::update(&mut a, &set, i, fb).unwrap();
        let mut b = LinUcb::from_bytes(&a.to_bytes()).unwrap();
        let mut c = a.clone();
        c.reseed(&SeedSequence::from_seed(11));
        let mut u = a.clone();
        let (mut same, mut differ) = (true, false);
        for _ in 0..60 {
            let i = Learner::select(&mut a, &set).unwrap();
            same &= i == Learner::select(&mut b, &set).unwrap();
            same &= i == u.select_unvalidated(set.rows()).unwrap();
            differ |= i != Learner::select(&mut c, &set).unwrap();
        }
        assert!(same && differ);
        // Exact, tree and factorization statistics keep the first maximum.
        let tree = StatisticsConfig::Tree { noise: NoiseSpec::Zero, shift: 1.0, pad_to: 0 };
        let mut t = LinUcb::new(config(3, 100, tree), &SeedSequence::from_seed(0)).unwrap();
        assert_eq!(t.pre_release_choice(9), None);
    }

    #[test]
    fn zero_noise_tree_with_shift_rho_matches_exact_linucb() {
        let (d, n, rho) = (5, 3000, 1.0);
        let seeds = SeedSequence::from_seed(5);
        let mut exact =
            LinUcb::new(config(d, n, StatisticsConfig::Exact { regularizer: rho, refactor_every: 64 }), &seeds)
                .unwrap();
        let mut tree =
            LinUcb::new(config(d, n, StatisticsConfig::Tree { noise: NoiseSpec::Zero, shift: rho, pad_to: 0 }), &seeds)
                .unwrap();
        let mut env = ShariffSheffetEnv::new(d, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        crate::policy::assert_same_play(&mut exact, &mut tree, &mut env, 1..=n, false);
        assert_eq!(tree.psd_failures(), 0);
    }

    #[test]
    fn zero_noise_factorized_statistics_match_the_tree_and_round_trip() {
        // With zero noise a factorization counter releases the exact M_t, so
        // its engine plays as the tree's; a mid-stream state continues identically.
        let (d, n) = (4, 600);
        let seeds = SeedSequence::from_seed(6);
        let blt = crate::counter::Factorization::Blt { theta: vec![0.9, 0.999], omega: vec![0.3, 0.01] };
        for factor in [crate::counter::Factorization::Sqrt, blt] {
            let spec = FactorSpec::new(&factor).unwrap();
            let mut tree = LinUcb::new(
                config(d, n, StatisticsConfig::Tree { noise: NoiseSpec::Zero, shift: 1.0, pad_to: 0 }),
                &seeds,
            )
            .unwrap();
            let fact = StatisticsConfig::Factorized { noise: NoiseSpec::Zero, shift: 1.0, factor: spec };
            let mut f = LinUcb::new(config(d, n, fact), &seeds).unwrap();
            let mut env = ShariffSheffetEnv::new(d, 10, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
            crate::policy::assert_same_play(&mut tree, &mut f, &mut env, 1..=n, false);
            let noisy = StatisticsConfig::Factorized {
                noise: NoiseSpec::SymmetricGaussian { sigma: 0.1 },
                shift: 2.0,
                factor: spec,
            };
            let mut a = LinUcb::new(config(d, n, noisy), &seeds).unwrap();
            let mut env = ShariffSheffetEnv::new(d, 10, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
            let mut set = DecisionSet::default();
            for t in 1..=50 {
                env.next_round(t, &mut set).unwrap();
                let i = a.select(&set).unwrap();
                a.update(&set, i, env.feedback(i).unwrap()).unwrap();
            }
            let mut b = LinUcb::from_bytes(&a.to_bytes()).unwrap();
            crate::policy::assert_same_play(&mut a, &mut b, &mut env, 51..=200, true);
        }
    }

    #[test]
    fn exact_scores_above_the_fixed_kernels_match_the_definition() {
        // Exact LinUCB at d > 16 scores with the symmetric V^{-1} through
        // the GEMM tile (the AVX2 build) or the blocked kernel: the scores
        // must be the definition's, from the engine's own V^{-1} and theta,
        // to 1e-12 relative, at d around the tile's multiples of 8 and K
        // around its multiples of 6.
        for d in [17usize, 24, 40, 63, 64, 65] {
            let mut learner = LinUcb::new(
                config(d, 1000, StatisticsConfig::Exact { regularizer: 1.0, refactor_every: 64 }),
                &SeedSequence::from_seed(2),
            )
            .unwrap();
            let feature = |i: usize, j: usize| (((i * 7 + j * 13) % 17) as f64 - 8.0) / (2.0 * d as f64);
            for t in 0..200 {
                let x: Vec<f64> = (0..d).map(|j| feature(t, j)).collect();
                learner.observe(&x, (t % 3) as f64 / 3.0).unwrap();
            }
            for k in [1, 3, 5, 6, 7, 14, 40, 97, 200] {
                let set = DecisionSet { k, d, features: (0..k * d).map(|n| feature(n / d + 500, n % d)).collect() };
                let scores = learner.ucb(&set).unwrap();
                let beta = learner.estimates_uncommitted().0;
                let Statistics::Exact { inv, .. } = &learner.stats else { unreachable!() };
                let (vinv, theta) = (inv.inverse().to_vec(), learner.work.est.theta().to_vec());
                assert_scores_are_the_definition(&scores, &set, &vinv, &theta, beta, &format!("d {d} k {k}"));
            }
        }
    }

    #[test]
    fn released_scores_above_the_fixed_kernels_match_the_definition() {
        // d > 16 factors by Cholesky::refactor_wide and scores through the
        // blocked kernels: another summation order than the dot-product
        // factor, the same scores to 1e-12 relative.
        for (d, k) in [(17usize, 40usize), (40, 400), (64, 300)] {
            let noise = NoiseSpec::SymmetricGaussian { sigma: 0.3 };
            let mut l = LinUcb::new(
                config(d, 1000, StatisticsConfig::Tree { noise, shift: 8.0, pad_to: 0 }),
                &SeedSequence::from_seed(4),
            )
            .unwrap();
            let feature = |n: usize| (((n * 11) % 23) as f64 - 11.0) / (11.0 * (d as f64).sqrt());
            for t in 0..40 {
                let x: Vec<f64> = (0..d).map(|j| feature(t * d + j)).collect();
                l.observe(&x, (t % 3) as f64 / 3.0 - 0.3).unwrap();
            }
            let set = DecisionSet { k, d, features: (0..k * d).map(|n| feature(n + 7)).collect() };
            let scores = l.ucb(&set).unwrap();
            let beta = l.estimates_uncommitted().0;
            let est = &l.work.est;
            let vinv = Cholesky::factor(&est.v, d).unwrap().inverse();
            let theta: Vec<f64> = (0..d).map(|i| (0..d).map(|j| vinv[i * d + j] * est.u[j]).sum()).collect();
            assert_scores_are_the_definition(&scores, &set, &vinv, &theta, beta, &format!("d {d}"));
        }
    }

    #[test]
    fn learns_the_gap_instance() {
        let (d, n) = (5, 20_000);
        let seeds = SeedSequence::from_seed(6);
        let mut learner =
            LinUcb::new(config(d, n, StatisticsConfig::Exact { regularizer: 1.0, refactor_every: 64 }), &seeds)
                .unwrap();
        let mut env = ShariffSheffetEnv::new(d, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let trace = run_episode(&mut learner, &mut env, n, 1000, None).unwrap();
        let last = *trace.regret.last().unwrap();
        let first_half = trace.regret[9];
        // Sublinear: the second half costs far less than the first.
        assert!(last - first_half < 0.5 * first_half, "regret {first_half} then {last}");
        assert_eq!(trace.rounds, n);
    }

    #[test]
    fn persistent_padding_plays_as_fresh_without_noise_and_round_trips_with_wishart_noise() {
        let (d, n) = (3, 400u64);
        let seeds = SeedSequence::from_seed(11);
        let m = crate::counter::tree::max_noise_terms(n);
        let zero = |persistent: bool| {
            let (noise, shift, pad_to) = (NoiseSpec::Zero, 1.0, m);
            let s = if persistent {
                StatisticsConfig::PersistentTree { noise, shift, pad_to }
            } else {
                StatisticsConfig::Tree { noise, shift, pad_to }
            };
            LinUcb::new(config(d, n, s), &seeds).unwrap()
        };
        let (mut fresh, mut kept) = (zero(false), zero(true));
        let wishart = StatisticsConfig::PersistentTree {
            noise: NoiseSpec::Wishart { scale: 2.0, df: 40.0 },
            shift: -80.0 * f64::from(m),
            pad_to: m,
        };
        let mut w = LinUcb::new(config(d, n, wishart), &seeds).unwrap();
        let mut env = ShariffSheffetEnv::new(d, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let mut set = DecisionSet::default();
        let mut restored: Option<LinUcb> = None;
        for t in 1..n {
            env.next_round(t, &mut set).unwrap();
            let a = fresh.select(&set).unwrap();
            assert_eq!(a, kept.select(&set).unwrap(), "round {t}");
            let b = w.select(&set).unwrap();
            if let Some(r) = restored.as_mut() {
                assert_eq!(w.ucb(&set).unwrap(), r.ucb(&set).unwrap(), "round {t}");
                assert_eq!(b, r.select(&set).unwrap());
            }
            let fb = env.feedback(a).unwrap();
            fresh.update(&set, a, fb).unwrap();
            kept.update(&set, a, fb).unwrap();
            // The Wishart learner sees the same reward as the zero-noise
            // pair (one draw a round from the environment).
            w.update(&set, b, fb).unwrap();
            if let Some(r) = restored.as_mut() {
                r.update(&set, b, fb).unwrap();
            }
            if t == 150 {
                restored = Some(LinUcb::from_bytes(&w.to_bytes()).unwrap());
            }
        }
        match &w.stats {
            Statistics::Tree { tree, .. } => assert_eq!(tree.padding_mode(), Padding::Persistent),
            _ => panic!("a tree engine"),
        }
    }

    #[test]
    fn bounds_are_enforced() {
        let seeds = SeedSequence::from_seed(7);
        let mut cfg = config(2, 10, StatisticsConfig::Tree { noise: NoiseSpec::Zero, shift: 1.0, pad_to: 0 });
        let mut l = LinUcb::new(cfg, &seeds).unwrap();
        l.observe(&[3.0, 4.0], 5.0).unwrap();
        // Clipped to x = (0.6, 0.8), y = 1: M gains [0.36 .48 .6; .48 .64 .8; .6 .8 1].
        if let Statistics::Tree { tree, .. } = &l.stats {
            let r = tree.release();
            assert!((r[0] - 0.36).abs() < 1e-12 && (r[2] - 0.6).abs() < 1e-12 && (r[8] - 1.0).abs() < 1e-12);
        }
        cfg.bounds.policy = BoundsPolicy::Error;
        let mut strict = LinUcb::new(cfg, &seeds).unwrap();
        assert!(strict.observe(&[3.0, 4.0], 0.5).is_err());
        assert!(strict.observe(&[0.3, 0.4], 1.5).is_err());
        assert!(strict.observe(&[0.3, 0.4], f64::NAN).is_err());
        assert!(strict.observe(&[f64::NAN, 0.4], 0.5).is_err());
        assert_eq!(strict.t(), 0);
        strict.observe(&[0.3, 0.4], 0.5).unwrap();
        assert_eq!(strict.t(), 1);
    }

    #[test]
    fn horizon_is_enforced_and_state_round_trips() {
        let seeds = SeedSequence::from_seed(8);
        let cfg = config(
            3,
            5,
            StatisticsConfig::Tree { noise: NoiseSpec::SymmetricGaussian { sigma: 0.1 }, shift: 2.0, pad_to: 0 },
        );
        let mut l = LinUcb::new(cfg, &seeds).unwrap();
        let set = DecisionSet { k: 2, d: 3, features: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0] };
        for _ in 0..3 {
            let i = l.select(&set).unwrap();
            l.update(&set, i, Feedback::Reward(0.5)).unwrap();
        }
        let mut back = LinUcb::from_bytes(&l.to_bytes()).unwrap();
        for _ in 0..2 {
            let (a, b) = (l.select(&set).unwrap(), back.select(&set).unwrap());
            assert_eq!(l.ucb(&set).unwrap(), back.ucb(&set).unwrap());
            assert_eq!(a, b);
            l.update(&set, a, Feedback::Reward(0.5)).unwrap();
            back.update(&set, b, Feedback::Reward(0.5)).unwrap();
        }
        assert!(matches!(l.select(&set), Err(Error::State(_))));
        assert!(l.select(&DecisionSet { k: 1, d: 2, features: vec![0.0, 1.0] }).is_err());
        // A forged counter is refused, as its own `from_bytes` refuses it.
        if let Statistics::Tree { tree, .. } = &mut l.stats {
            let n = tree.noise_terms();
            tree.forge_noise_terms(n + 1);
        }
        assert!(LinUcb::from_bytes(&l.to_bytes()).is_err());
    }

    #[test]
    fn unvalidated_select_refuses_non_finite_sets_before_any_state_changes() {
        // Every variant and kernel: fixed d, the blocked kernels (d = 20,
        // with few and with many actions), exact and released statistics;
        // above d = 16 the exact statistics score with the symmetric V^{-1}
        // through the GEMM tile in the AVX2 build, where theta is zero in
        // the first round (0 * inf and 0 * NaN are NaN).
        let tree = StatisticsConfig::Tree { noise: NoiseSpec::SymmetricGaussian { sigma: 0.5 }, shift: 4.0, pad_to: 0 };
        let exact = StatisticsConfig::Exact { regularizer: 1.0, refactor_every: 8 };
        for (d, k) in [(3usize, 5usize), (20, 4), (20, 60), (40, 13)] {
            for statistics in [tree, exact] {
                let mut l = LinUcb::new(config(d, 100, statistics), &SeedSequence::from_seed(3)).unwrap();
                let mut twin = LinUcb::new(config(d, 100, statistics), &SeedSequence::from_seed(3)).unwrap();
                let feature = |n: usize| (((n * 7) % 13) as f64 - 6.0) / (6.0 * (d as f64).sqrt());
                for t in 0..30 {
                    let set = DecisionSet { k, d, features: (0..k * d).map(|n| feature(n + t)).collect() };
                    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                        for at in [0, k * d / 2 + 1, k * d - 1] {
                            let mut f = set.features.clone();
                            f[at] = bad;
                            let rows = DecisionRows { k, d, features: &f };
                            let err = l.select_unvalidated(rows).unwrap_err();
                            assert_eq!(
                                err.to_string(),
                                "invalid argument `decision_set`: contains NaN or infinite entries"
                            );
                        }
                    }
                    // Nothing was recorded: the engine plays on as its twin.
                    assert_eq!(l.to_bytes(), twin.to_bytes(), "d {d} k {k} round {t}");
                    let i = l.select_unvalidated(set.rows()).unwrap();
                    assert_eq!(i, twin.select(&set).unwrap());
                    assert_eq!(l.ucb(&set).unwrap(), twin.ucb(&set).unwrap());
                    l.update(&set, i, Feedback::Reward(0.5)).unwrap();
                    twin.update(&set, i, Feedback::Reward(0.5)).unwrap();
                }
                // Finite entries whose scores overflow are scored, not refused.
                let huge = DecisionSet { k, d, features: vec![1e300; k * d] };
                assert_eq!(l.select_unvalidated(huge.rows()).unwrap(), twin.select(&huge).unwrap());
            }
        }
        // A failed release is counted only once the set is accepted.
        let cfg = config(2, 10, StatisticsConfig::Tree { noise: NoiseSpec::Zero, shift: -1.0, pad_to: 0 });
        let mut l = LinUcb::new(cfg, &SeedSequence::from_seed(9)).unwrap();
        let nan = [f64::NAN, 0.0, 0.0, 1.0];
        assert!(l.select_unvalidated(DecisionRows { k: 2, d: 2, features: &nan }).is_err());
        assert_eq!(l.psd_failures(), 0);
        assert_eq!(l.select_unvalidated(DecisionRows { k: 2, d: 2, features: &[0.6, 0.0, 0.0, 1.0] }).unwrap(), 1);
        assert_eq!(l.psd_failures(), 1);
    }

    #[test]
    fn non_positive_definite_release_falls_back() {
        // A negative shift makes V_1 = -I: not PD, no earlier release.
        let seeds = SeedSequence::from_seed(9);
        let cfg = config(2, 10, StatisticsConfig::Tree { noise: NoiseSpec::Zero, shift: -1.0, pad_to: 0 });
        let mut l = LinUcb::new(cfg, &seeds).unwrap();
        let set = DecisionSet { k: 2, d: 2, features: vec![0.6, 0.0, 0.0, 1.0] };
        assert_eq!(l.select(&set).unwrap(), 1);
        l.ucb(&set).unwrap();
        // One round, however often it is inspected.
        assert_eq!(l.psd_failures(), 1);
    }
}
