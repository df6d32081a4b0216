//! Batched phased elimination with core sets (Hanna, Girgis, Fragouli &
//! Diggavi, "Differentially Private Stochastic Linear Bandits: (Almost) for
//! Free": Alg. 1 central, Alg. 2 local, Alg. 3 and Alg. 4 shuffle model).
//!
//! One engine, four privatizers. The action set A (K rows of R^d) is
//! fixed. Batch i = 1, ..., m (m = floor(ln T) - 1, at least 1) has the
//! nominal length q^i, q = (2T)^{1/ln T}; the Python layer passes the m
//! values q^i. At the start of batch i the engine computes a core set C_i
//! and design pi_i of the surviving set A_i (Frank–Wolfe, App. A and
//! Lemma 2, [`crate::design::core_set`]; in the span of A_i when A_i does
//! not span R^d, as Alg. 1 line 6 allows) and pulls each a in C_i
//! n_ia = ceil(pi_i(a) q^i) times (line 7). At the end of the batch the
//! per-action reward sums are privatized:
//!
//! - [`Privatizer::CentralSum`] (Alg. 1 line 8): Laplace noise on each
//!   per-action sum, drawn once when the batch closes;
//! - [`Privatizer::LocalReward`] (Alg. 2 line 7): Laplace noise on each
//!   reward when it arrives (the engine never stores a raw reward);
//! - [`Privatizer::ShuffledReward`] (Alg. 3 lines 9–12): Laplace noise on
//!   each reward with the batch's own scale, and the batch's action list is
//!   played in a uniformly random order (the shuffler's permutation, line
//!   11); the server side of the engine receives only the batch's multiset
//!   of (action, privatized reward) pairs when the batch closes;
//! - [`Privatizer::ShuffledSum`] (Alg. 4 line 9): each per-action sum is
//!   one run of the shuffled scalar sum of Cheu, Joseph, Mao & Peng 2021
//!   (Alg. 1, R_1D / A_1D): the user maps its reward to x in [0, 1] and
//!   sends x̄ = floor(x g) + Ber(x g - floor(x g)) one-bits, g - x̄
//!   zero-bits and b Ber(p) bits; the analyzer releases
//!   (ones - p b n) / g, mapped back to the reward scale. The count of
//!   one-bits is sum_j x̄_j + Binomial(b n, p) whatever the shuffler's
//!   permutation, so the engine draws one Bernoulli per reward when it
//!   arrives and one Binomial(b n, p) per sum when the batch closes: the
//!   protocol's exact output distribution. (g, b, p) are evaluated for
//!   each n = n_ia from constants the Python layer passes
//!   ([`ShuffleSumCoefficients`]).
//!
//! Then theta_i = V^{-1} sum_a r^_ia a with V = sum_a n_ia a a^T (line 9),
//! and A_{i+1} = {a in A_i : <a, theta_i> >= max_{b in A_i} <b, theta_i> -
//! 2 gamma_i} (line 10, with the max over A_i as in Alg. 2 line 15 and
//! Alg. 3 line 22). After batch m the engine plays
//! argmax_{a in A_m} <a, theta_m> to the horizon (line 11).
//!
//! Rust decides no noise scale and no confidence constant: the Python
//! layer (`dpbandits.privacy.elimination`) passes one Laplace scale per
//! batch and per batch the coefficients of
//! gamma_i = c_1 sqrt(L) + c_2 L + c_3 + c_4 sqrt(n_i L), L = ln(4 |A_i| T^2),
//! which covers the gamma_i of Alg. 1 line 5, Alg. 2 line 12 and Alg. 3
//! line 19 (|A_i| and n_i are known only when the batch runs).
//!
//! Privacy: every decision (core sets, eliminations, the final arm) is a
//! function of the released sums r^_ia and of data-independent counts, so
//! the guarantee of the privatizer carries over by post-processing.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;
use rand_distr::{Binomial, Distribution};
use serde::{Deserialize, Serialize};

use super::{BoundsPolicy, Learner};
use crate::design::{core_set, design_variances, pull_counts, DesignOptions};
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, try_with_capacity, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::noise::lattice::MAX_EXACT_STEPS;
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// Where the noise is added.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Privatizer {
    /// No noise (the non-private batched elimination).
    None,
    /// Alg. 1: one Laplace draw on each per-action reward sum of a batch.
    CentralSum,
    /// Alg. 2: one Laplace draw on each reward, before the server sees it.
    LocalReward,
    /// Alg. 3: one Laplace draw on each reward with the batch's scale, the
    /// batch played in a random order and handed over as a multiset.
    ShuffledReward,
    /// Alg. 4: each per-action sum by the shuffled scalar sum of Cheu,
    /// Joseph, Mao & Peng 2021 (Alg. 1) with the given constants. (Added
    /// last: states written before it decode unchanged.)
    ShuffledSum(ShuffleSumCoefficients),
}

/// The constants of the shuffled scalar sum (computed by
/// `dpbandits.privacy.shuffle_sum.shuffle_sum_coefficients` from epsilon
/// and delta, CJMP21 Lemma 3.1): for n users,
/// g = max(ceil(`g_sqrt_n` sqrt(n)), `g_min`), b = ceil(`bits` g^2 / n),
/// p = `ones` g^2 / (b n).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShuffleSumCoefficients {
    pub g_sqrt_n: f64,
    pub g_min: f64,
    pub bits: f64,
    pub ones: f64,
}

/// (g, b, p) of one run of the protocol.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShuffleSumParameters {
    /// Rounding resolution: each user sends g bits for its value.
    pub g: u64,
    /// Extra Ber(p) bits per user.
    pub b: u64,
    pub p: f64,
}

impl ShuffleSumCoefficients {
    fn validate(&self) -> Result<()> {
        check_finite("shuffle_sum", &[self.g_sqrt_n, self.g_min, self.bits, self.ones])?;
        if !(self.g_sqrt_n > 0.0 && self.g_min >= 1.0 && self.bits > 0.0 && self.ones > 0.0) {
            return Err(Error::invalid("shuffle_sum", "need g_sqrt_n > 0, g_min >= 1, bits > 0 and ones > 0"));
        }
        if self.ones > 0.5 * self.bits {
            return Err(Error::invalid("shuffle_sum", "need ones <= bits / 2 (p <= 1/2)"));
        }
        Ok(())
    }

    /// g alone: what each user's randomizer needs (no b or p per reward).
    pub fn rounding_levels(&self, n: u64) -> u64 {
        self.levels(n.max(1) as f64) as u64
    }

    fn levels(&self, nf: f64) -> f64 {
        (self.g_sqrt_n * nf.sqrt()).ceil().max(self.g_min.ceil())
    }

    /// (g, b, p) for `n` >= 1 users; an error when b n overflows 64 bits.
    pub fn parameters(&self, n: u64) -> Result<ShuffleSumParameters> {
        let nf = n.max(1) as f64;
        let g = self.levels(nf);
        let b = (self.bits * g * g / nf).ceil();
        let p = self.ones * g * g / (b * nf);
        if !(b * nf < 1.8e19 && g < 1.8e19) {
            return Err(Error::invalid("epsilon", "the shuffled sum needs more than 2^64 noise bits"));
        }
        Ok(ShuffleSumParameters { g: g as u64, b: b as u64, p })
    }
}

/// R_1D's randomized rounding of x in [0, 1] (CJMP21 Alg. 1):
/// floor(x g) + Ber(x g - floor(x g)), in {0, ..., g}.
pub fn round_to_bits<R: Rng + ?Sized>(x: f64, g: u64, rng: &mut R) -> u64 {
    let v = x.clamp(0.0, 1.0) * g as f64;
    let fl = v.floor();
    let up = rng.random::<f64>() < v - fl;
    (fl as u64 + u64::from(up)).min(g)
}

/// A_1D on the shuffled bits of `n` users whose rounded values sum to
/// `rounded` (CJMP21 Alg. 1): the one-bits number `rounded` +
/// Binomial(b n, p); the estimate of sum_j x_j is (ones - p b n) / g.
pub fn analyze_bits<R: Rng + ?Sized>(rounded: u64, n: u64, params: &ShuffleSumParameters, rng: &mut R) -> Result<f64> {
    let bits = params.b.checked_mul(n).ok_or_else(|| Error::invalid("epsilon", "b n overflows 64 bits"))?;
    let noise = Binomial::new(bits, params.p)
        .map_err(|e| Error::invalid("shuffle_sum", format!("Binomial({bits}, {}): {e}", params.p)))?
        .sample(rng);
    let ones = rounded as f64 + noise as f64;
    Ok((ones - params.p * bits as f64) / params.g as f64)
}

/// How the actions of a batch are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exploration {
    /// The Frank–Wolfe core set of A_i (Lemma 2, App. A).
    CoreSet,
    /// The ablation of Fig. 2b ("no core set"): every a in A_i with
    /// pi_i(a) = 1 / |A_i|.
    Uniform,
}

/// The coefficients of gamma_i = `sqrt_log` sqrt(L) + `log` L + `constant`
/// + `sqrt_n_log` sqrt(n_i L), with L = ln(4 |A_i| T^2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GammaCoefficients {
    pub sqrt_log: f64,
    pub log: f64,
    pub constant: f64,
    pub sqrt_n_log: f64,
}

impl GammaCoefficients {
    /// gamma_i for |A_i| = `active` actions and a batch of `n` pulls;
    /// `log_offset` = ln(4 T^2).
    pub fn gamma(&self, active: usize, n: u64, log_offset: f64) -> f64 {
        let l = (active as f64).ln() + log_offset;
        self.sqrt_log * l.sqrt() + self.log * l + self.constant + self.sqrt_n_log * (n as f64 * l).sqrt()
    }
}

/// Plain-number configuration of the engine (built by
/// `dpbandits.EliminationLinearBandit`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EliminationConfig {
    /// Number of actions K.
    pub k: usize,
    /// Dimension d.
    pub d: usize,
    /// The K x d actions, row-major.
    pub actions: Vec<f64>,
    /// The horizon T.
    pub horizon: u64,
    /// Nominal batch lengths q^1, ..., q^m.
    pub batch_lengths: Vec<f64>,
    /// gamma_i coefficients, one per batch.
    pub gamma: Vec<GammaCoefficients>,
    /// ln(4 T^2), the data-independent part of L.
    pub log_offset: f64,
    pub privatizer: Privatizer,
    /// The Laplace noise of batch i as the privacy layer computed it: exact
    /// on a lattice (rewards rounded to it first) or the floating-point
    /// opt-in (ignored for [`Privatizer::None`]; for
    /// [`Privatizer::ShuffledSum`], whose integer messages carry their own
    /// noise, the law of a released sum's error, reported in the history only).
    pub noise: Vec<NoiseSpec>,
    pub exploration: Exploration,
    /// Declared reward range [reward_min, reward_max].
    pub reward_min: f64,
    pub reward_max: f64,
    /// What happens to a reward outside the declared range.
    pub bounds: BoundsPolicy,
}

impl EliminationConfig {
    /// Checks every field (errors name the field).
    pub fn validate(&self) -> Result<()> {
        if self.k == 0 || self.d == 0 {
            return Err(Error::invalid(
                "actions",
                format!("need K >= 1 and d >= 1, got K = {}, d = {}", self.k, self.d),
            ));
        }
        if self.actions.len() != self.k * self.d {
            return Err(Error::invalid(
                "actions",
                format!("length {} is not K d = {}", self.actions.len(), self.k * self.d),
            ));
        }
        check_finite("actions", &self.actions)?;
        if self.horizon == 0 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        let m = self.batch_lengths.len();
        if m == 0 {
            return Err(Error::invalid("batch_lengths", "need at least one batch"));
        }
        if let Some(q) = self.batch_lengths.iter().find(|q| !(q.is_finite() && **q > 0.0)) {
            return Err(Error::invalid("batch_lengths", format!("entries must be finite and > 0, got {q}")));
        }
        if self.gamma.len() != m {
            return Err(Error::invalid(
                "gamma",
                format!("need one set of coefficients per batch ({m}), got {}", self.gamma.len()),
            ));
        }
        for g in &self.gamma {
            check_finite("gamma", &[g.sqrt_log, g.log, g.constant, g.sqrt_n_log])?;
            if g.sqrt_log < 0.0 || g.log < 0.0 || g.constant < 0.0 || g.sqrt_n_log < 0.0 {
                return Err(Error::invalid("gamma", "coefficients must be >= 0"));
            }
        }
        if !self.log_offset.is_finite() {
            return Err(Error::invalid("log_offset", "must be finite"));
        }
        if let Privatizer::ShuffledSum(c) = &self.privatizer {
            c.validate()?;
        }
        if self.privatizer != Privatizer::None {
            if self.noise.len() != m {
                return Err(Error::invalid(
                    "noise",
                    format!("need one noise value per batch ({m}), got {}", self.noise.len()),
                ));
            }
            for spec in &self.noise {
                spec.validate(&[])?;
                if laplace_scale(*spec).is_none() {
                    return Err(Error::invalid("noise", format!("batch noise must be Laplace, got {spec:?}")));
                }
            }
        }
        if !(self.reward_min.is_finite() && self.reward_max.is_finite() && self.reward_min < self.reward_max) {
            return Err(Error::invalid(
                "reward_range",
                format!("need finite reward_min < reward_max, got [{}, {}]", self.reward_min, self.reward_max),
            ));
        }
        Ok(())
    }

    fn action(&self, i: usize) -> &[f64] {
        &self.actions[i * self.d..(i + 1) * self.d]
    }

    /// The Laplace noise of batch i (Zero without a privatizer).
    fn batch_noise(&self, i: usize) -> NoiseSpec {
        if self.privatizer == Privatizer::None {
            return NoiseSpec::Zero;
        }
        self.noise[i]
    }
}

/// The scale of Laplace noise, exact on a lattice (t 2^-j) or floating
/// point; `None` for any other law.
fn laplace_scale(spec: NoiseSpec) -> Option<f64> {
    match spec {
        NoiseSpec::Laplace { scale } => Some(scale),
        NoiseSpec::Lattice(s) => match s.continuous() {
            NoiseSpec::Laplace { scale } => Some(scale),
            _ => None,
        },
        _ => None,
    }
}

impl super::LearnerFactory for EliminationConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(Elimination::new(self.clone(), seeds)?))
    }
}

/// What one finished batch released and decided (all of it public: a
/// function of the privatized sums and of data-independent counts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchRecord {
    /// |A_i| (surviving actions at the start of the batch).
    pub active: usize,
    /// Dimension of span(A_i).
    pub rank: usize,
    /// The actions played (indices into A), the core set C_i.
    pub support: Vec<usize>,
    /// pi_i on `support`.
    pub weights: Vec<f64>,
    /// n_ia for each action of `support`.
    pub pulls: Vec<u64>,
    /// max_{a in A_i} ||a||^2_{V(pi_i)^{-1}} in span(A_i) (<= 2 rank for a
    /// core set, Eq. (5)).
    pub design_value: f64,
    /// gamma_i.
    pub gamma: f64,
    /// The Laplace scale of the batch (0 without privacy).
    pub noise_scale: f64,
    /// The released sums r^_ia, aligned with `support`.
    pub released_sums: Vec<f64>,
    /// theta_i in R^d (its component in span(A_i)).
    pub theta: Vec<f64>,
    /// |A_{i+1}|.
    pub survivors: usize,
}

/// The batch being played.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Batch {
    support: Vec<usize>,
    weights: Vec<f64>,
    pulls: Vec<u64>,
    /// Orthonormal basis (d x rank, column-major) of span(A_i); empty when
    /// A_i spans R^d (coordinates are used as they are).
    basis: Vec<f64>,
    rank: usize,
    design_value: f64,
    total: u64,
    /// Rounds of the batch played so far.
    done: u64,
    /// Sequential play: current position in `support` and pulls made there.
    pos: usize,
    pos_done: u64,
    /// Shuffled play (Alg. 3): the position in `support` of each slot.
    order: Vec<u32>,
    /// Reward sums per support position (privatized per reward for the
    /// local and shuffle models; exact, never read before privatization,
    /// for the central model).
    sums: Vec<f64>,
}

/// The batched elimination engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Elimination {
    config: EliminationConfig,
    /// A_i (indices into A), increasing.
    active: Vec<usize>,
    /// 0-based index of the current batch.
    batch_index: usize,
    batch: Batch,
    committed: Option<usize>,
    /// Support position of the action selected and not yet updated.
    pending: Option<usize>,
    /// The decision set was compared with A since the batch started.
    set_checked: bool,
    t: u64,
    /// Recorded rewards the bounds policy clipped into the declared range.
    clipped: u64,
    history: Vec<BatchRecord>,
    noise: NoiseRng,
    shuffler: StreamRng,
    /// The current batch's noise specification and that batch's index,
    /// built on first use in the batch: a lattice specification costs
    /// about as much to build as a draw (a local report per round).
    #[serde(skip)]
    batch_spec: Option<(usize, NoiseSpec)>,
}

impl Elimination {
    /// A fresh engine; noise from `seeds`' `"elimination/noise"` stream,
    /// the shuffler's permutations from `"elimination/shuffle"`.
    pub fn new(config: EliminationConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let active = (0..config.k).collect();
        let mut engine = Elimination {
            config,
            active,
            batch_index: 0,
            batch: Batch::default(),
            committed: None,
            pending: None,
            set_checked: false,
            t: 0,
            clipped: 0,
            history: Vec::new(),
            noise: NoiseRng::seeded(seeds.stream("elimination/noise")),
            shuffler: seeds.stream("elimination/shuffle"),
            batch_spec: None,
        };
        engine.start_batch()?;
        Ok(engine)
    }

    pub fn config(&self) -> &EliminationConfig {
        &self.config
    }

    /// Rounds played (updates).
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Recorded rewards the bounds policy clipped into the declared range.
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// The surviving set A_i (indices into A).
    pub fn active(&self) -> &[usize] {
        &self.active
    }

    /// The arm played to the horizon, once chosen.
    pub fn committed(&self) -> Option<usize> {
        self.committed
    }

    /// 0-based index of the current batch (= number of finished batches).
    pub fn batch_index(&self) -> usize {
        self.batch_index
    }

    /// Records of the finished batches.
    /// The current batch's plan: its core set (indices into A) and the
    /// pulls of each, fixed when the batch starts from the surviving set
    /// alone (released data); empty once an action is committed.
    pub fn batch_plan(&self) -> (&[usize], &[u64]) {
        if self.committed.is_some() {
            return (&[], &[]);
        }
        (&self.batch.support, &self.batch.pulls)
    }

    pub fn history(&self) -> &[BatchRecord] {
        &self.history
    }

    /// Draws all future noise and permutations from `seeds`.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.noise.reseed(seeds.stream("elimination/noise"));
        self.shuffler = seeds.stream("elimination/shuffle");
    }

    /// Privacy noise from the operating system from now on (secure mode).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.noise.use_os_entropy()
    }

    /// Whether privacy noise comes from the operating system.
    pub fn os_entropy(&self) -> bool {
        self.noise.is_os()
    }

    /// Serialized state (generators included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an engine written by [`Elimination::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let engine: Elimination = crate::state::decode(bytes)?;
        engine.config.validate().map_err(|e| Error::Decode(e.to_string()))?;
        engine.check_state()?;
        Ok(engine)
    }

    /// Every invariant a decoded state must meet for the next rounds to
    /// run as they would have: the surviving set is increasing and names
    /// actions of A; one history record per finished batch; the current
    /// batch is the one [`Elimination::start_batch`] builds for the
    /// surviving set and batch index (core set, weights, pulls, basis,
    /// design value, total; the shuffled order a permutation of its slots);
    /// the position in the batch, the pending selection and the round
    /// count agree with the rewards recorded; sums are finite.
    #[allow(clippy::float_cmp)] // the same computation on the same inputs
    fn check_state(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Decode(format!("inconsistent elimination state: {what}")));
        let k = self.config.k;
        let batches = self.config.batch_lengths.len();
        if self.active.is_empty() || self.active.iter().any(|&a| a >= k) || !self.active.windows(2).all(|w| w[0] < w[1])
        {
            return bad("the surviving set is not an increasing list of actions");
        }
        if self.t > self.config.horizon || self.batch_index > batches || self.history.len() != self.batch_index {
            return bad("round, batch index or history out of range");
        }
        if self.clipped > self.t {
            return bad("more clipped rewards than rounds");
        }
        let mut played: u64 = 0;
        for record in &self.history {
            for &n in &record.pulls {
                played = match played.checked_add(n) {
                    Some(p) => p,
                    None => return bad("the batch records' pulls overflow"),
                };
            }
        }
        if let Some(a) = self.committed {
            if a >= k || self.pending.is_some() || played > self.t {
                return bad("the committed action is out of range or rounds are missing");
            }
            return Ok(());
        }
        if self.batch_index == batches {
            return bad("every batch is finished but no action is committed");
        }
        let mut reference = self.clone();
        reference.batch = Batch::default();
        reference.start_batch().map_err(|e| Error::Decode(format!("inconsistent elimination state: {e}")))?;
        let (b, r) = (&self.batch, &reference.batch);
        let same_floats =
            |x: &[f64], y: &[f64]| x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits());
        if reference.committed.is_some()
            || b.support != r.support
            || !same_floats(&b.weights, &r.weights)
            || b.pulls != r.pulls
            || !same_floats(&b.basis, &r.basis)
            || b.rank != r.rank
            || b.design_value.to_bits() != r.design_value.to_bits()
            || b.total != r.total
        {
            return bad("the current batch is not the one its surviving set and index give");
        }
        if b.sums.len() != b.support.len() || !b.sums.iter().all(|x| x.is_finite()) || b.done >= b.total {
            return bad("the batch's sums or progress are out of range");
        }
        if r.order.is_empty() {
            if !b.order.is_empty() || b.pos >= b.support.len() || b.pos_done >= b.pulls[b.pos] {
                return bad("the batch position is out of range");
            }
            if b.pulls[..b.pos].iter().sum::<u64>() + b.pos_done != b.done {
                return bad("the batch position disagrees with its rounds");
            }
        } else {
            let mut counts = vec![0u64; b.support.len()];
            for &p in &b.order {
                match counts.get_mut(p as usize) {
                    Some(c) => *c += 1,
                    None => return bad("the shuffled order names a slot outside the batch"),
                }
            }
            if b.order.len() as u64 != b.total || counts != b.pulls {
                return bad("the shuffled order is not a permutation of the batch's slots");
            }
        }
        if let Some(p) = self.pending {
            let expected = if b.order.is_empty() { b.pos } else { b.order[b.done as usize] as usize };
            if p != expected {
                return bad("the pending selection is not the batch's next slot");
            }
        }
        if played.checked_add(b.done) != Some(self.t) {
            return bad("the rounds recorded disagree with the batches played");
        }
        Ok(())
    }

    /// The action (index into A) to play this round; a state error once
    /// the horizon is used up (the noise is calibrated for T rounds).
    pub fn next_action(&mut self) -> Result<usize> {
        self.check_budget()?;
        Ok(self.next_action_unchecked())
    }

    fn check_budget(&self) -> Result<()> {
        if self.t >= self.config.horizon {
            return Err(Error::State(format!(
                "the horizon of {} rounds is used up; the noise was calibrated for it",
                self.config.horizon
            )));
        }
        Ok(())
    }

    fn next_action_unchecked(&mut self) -> usize {
        if let Some(a) = self.committed {
            self.pending = None;
            return a;
        }
        let b = &self.batch;
        let pos = if b.order.is_empty() { b.pos } else { b.order[b.done as usize] as usize };
        self.pending = Some(pos);
        b.support[pos]
    }

    /// Records the reward of the action returned by the last
    /// [`Elimination::next_action`].
    pub fn observe(&mut self, index: usize, reward: f64) -> Result<()> {
        self.check_budget()?;
        let y = self.checked_reward(reward)?;
        // Clipped: the policy changed the reward (only `Clip` does).
        let clipped = u64::from(y.to_bits() != reward.to_bits());
        if let Some(a) = self.committed {
            if index != a {
                return Err(Error::invalid("index", format!("the learner plays action {a} now, got {index}")));
            }
            self.clipped += clipped;
            self.t += 1;
            return Ok(());
        }
        let pos = match self.pending {
            Some(pos) if self.batch.support[pos] == index => pos,
            Some(pos) => {
                return Err(Error::invalid(
                    "index",
                    format!("the last selected action is {}, got {index}", self.batch.support[pos]),
                ))
            }
            None => return Err(Error::State("update needs a preceding select".into())),
        };
        self.pending = None;
        let value = match self.config.privatizer {
            Privatizer::None => y,
            // On a lattice the reward enters rounded (monotone: a reward in
            // [lo, hi] stays in [round(lo), round(hi)]), so central sums
            // stay exact lattice values and a local report is one.
            Privatizer::CentralSum => {
                let noise = self.batch_noise();
                self.rounded_on(noise, y)?
            }
            Privatizer::LocalReward | Privatizer::ShuffledReward => {
                // One noise specification for the rounding and the draw.
                let noise = self.batch_noise();
                self.rounded_on(noise, y)? + noise.sample(self.noise.source()?)
            }
            // Alg. 4 / CJMP21 R_1D at the user: x in [0, 1], rounded to
            // {0, ..., g}; the sum holds the count of rounding one-bits.
            Privatizer::ShuffledSum(c) => {
                let (lo, hi) = (self.config.reward_min, self.config.reward_max);
                let g = c.rounding_levels(self.batch.pulls[pos]);
                round_to_bits((y - lo) / (hi - lo), g, self.noise.source()?) as f64
            }
        };
        let b = &mut self.batch;
        b.sums[pos] += value;
        b.done += 1;
        if b.order.is_empty() {
            b.pos_done += 1;
            if b.pos_done == b.pulls[b.pos] {
                b.pos += 1;
                b.pos_done = 0;
            }
        }
        self.clipped += clipped;
        self.t += 1;
        if self.batch.done == self.batch.total {
            self.finish_batch()?;
        }
        Ok(())
    }

    fn checked_reward(&self, reward: f64) -> Result<f64> {
        let (lo, hi) = (self.config.reward_min, self.config.reward_max);
        if reward.is_nan() {
            return Err(Error::invalid("reward", "is NaN"));
        }
        if (lo..=hi).contains(&reward) {
            return Ok(reward);
        }
        match self.config.bounds {
            BoundsPolicy::Clip => Ok(reward.clamp(lo, hi)),
            BoundsPolicy::Error => {
                Err(Error::invalid("reward", format!("{reward} lies outside the declared range [{lo}, {hi}]")))
            }
        }
    }

    /// Core set, pull counts and play order of the current batch.
    fn start_batch(&mut self) -> Result<()> {
        self.set_checked = false;
        // Zero actions carry no information (their mean is 0 whatever
        // theta*): the design is computed over the others.
        let informative: Vec<usize> =
            self.active.iter().copied().filter(|&i| self.config.action(i).iter().any(|v| *v != 0.0)).collect();
        if self.active.len() == 1 || informative.is_empty() {
            self.committed = Some(self.active[0]);
            return Ok(());
        }
        let (basis, rank) = span_basis(&self.config, &informative);
        let rows = project(&self.config, &informative, &basis, rank);
        let q = self.config.batch_lengths[self.batch_index];
        let (support, weights, design_value) = match self.config.exploration {
            Exploration::CoreSet => {
                let cs = core_set(&rows, informative.len(), rank, &DesignOptions::default())?;
                (cs.support, cs.weights, cs.value)
            }
            Exploration::Uniform => {
                let n = informative.len();
                let support: Vec<usize> = (0..n).collect();
                let weights = vec![1.0 / n as f64; n];
                let g = design_variances(&rows, n, rank, &support, &weights)?;
                (support, weights, g.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            }
        };
        let pulls = pull_counts(&weights, q)?;
        let total: u64 = pulls.iter().sum();
        if let Privatizer::ShuffledSum(c) = self.config.privatizer {
            // Fails here, before any reward of the batch, if b n overflows.
            for &n in &pulls {
                let params = c.parameters(n)?;
                params.b.checked_mul(n).ok_or_else(|| Error::invalid("epsilon", "b n overflows 64 bits"))?;
            }
        }
        let support: Vec<usize> = support.into_iter().map(|j| informative[j]).collect();
        let order = if self.config.privatizer == Privatizer::ShuffledReward {
            if total > u64::from(u32::MAX) {
                return Err(Error::invalid("horizon", "a shuffled batch longer than 2^32 rounds is not supported"));
            }
            // Up to 16 GiB for a 2^32-round batch: allocated fallibly.
            let mut order: Vec<u32> = try_with_capacity("horizon", total as usize)?;
            for (pos, &n) in pulls.iter().enumerate() {
                order.extend(std::iter::repeat_n(pos as u32, n as usize));
            }
            // Fisher–Yates: a uniform permutation of the batch's slots.
            for i in (1..order.len()).rev() {
                let j = self.shuffler.random_range(0..=i);
                order.swap(i, j);
            }
            order
        } else {
            Vec::new()
        };
        self.batch = Batch {
            sums: vec![0.0; support.len()],
            support,
            weights,
            pulls,
            basis,
            rank,
            design_value,
            total,
            done: 0,
            pos: 0,
            pos_done: 0,
            order,
        };
        Ok(())
    }

    /// The current batch's noise specification (see `batch_spec`).
    fn batch_noise(&mut self) -> NoiseSpec {
        match self.batch_spec {
            Some((i, spec)) if i == self.batch_index => spec,
            _ => {
                let spec = self.config.batch_noise(self.batch_index);
                self.batch_spec = Some((self.batch_index, spec));
                spec
            }
        }
    }

    /// A reward rounded to the lattice of `noise` (unchanged for
    /// floating-point noise).
    fn rounded_on(&self, noise: NoiseSpec, y: f64) -> Result<f64> {
        let mut v = [y];
        let limit = MAX_EXACT_STEPS / 4.0 / self.config.horizon as f64;
        noise.round_input("reward", &mut v, limit)?;
        Ok(v[0])
    }

    /// Privatizes the sums, estimates theta_i and eliminates.
    fn finish_batch(&mut self) -> Result<()> {
        let i = self.batch_index;
        let scale = match self.config.privatizer {
            Privatizer::None => 0.0,
            _ => laplace_scale(self.config.noise[i]).expect("checked at construction"),
        };
        if self.config.privatizer == Privatizer::CentralSum {
            let noise = self.config.batch_noise(i);
            for s in &mut self.batch.sums {
                *s += noise.sample(self.noise.source()?);
            }
        }
        if let Privatizer::ShuffledSum(c) = self.config.privatizer {
            // Alg. 4 line 9: A_1D per action, mapped back from [0, 1]:
            // sum = r_min n + (r_max - r_min) sum01.
            let (lo, hi) = (self.config.reward_min, self.config.reward_max);
            for (s, &n) in self.batch.sums.iter_mut().zip(&self.batch.pulls) {
                let params = c.parameters(n)?;
                let sum01 = analyze_bits(*s as u64, n, &params, self.noise.source()?)?;
                *s = lo * n as f64 + (hi - lo) * sum01;
            }
        }
        // Alg. 3: the server receives the multiset of (action, reward)
        // pairs; the per-action sums are all it uses, so the order in which
        // the shuffler hands them over does not reach the estimate.
        let d = self.config.d;
        let b = &self.batch;
        let r = b.rank;
        let coords = |a: usize| -> Vec<f64> { to_coords(self.config.action(a), &b.basis, d, r) };
        let mut v = DMatrix::<f64>::zeros(r, r);
        let mut rhs = DVector::<f64>::zeros(r);
        for ((&a, &n), &s) in b.support.iter().zip(&b.pulls).zip(&b.sums) {
            let x = DVector::from_vec(coords(a));
            v.ger(n as f64, &x, &x, 1.0);
            rhs.axpy(s, &x, 1.0);
        }
        let chol = v.cholesky().ok_or_else(|| Error::Degenerate {
            name: "actions",
            reason: "the batch's design matrix V is not positive definite".into(),
        })?;
        let theta_c = chol.solve(&rhs);
        let theta: Vec<f64> = from_coords(theta_c.as_slice(), &b.basis, d, r);
        let scores: Vec<f64> =
            self.active.iter().map(|&a| self.config.action(a).iter().zip(&theta).map(|(x, t)| x * t).sum()).collect();
        let gamma = self.config.gamma[i].gamma(self.active.len(), b.total, self.config.log_offset);
        let (best_pos, best) =
            scores.iter().enumerate().fold((0, f64::NEG_INFINITY), |acc, (j, &s)| if s > acc.1 { (j, s) } else { acc });
        let survivors: Vec<usize> =
            self.active.iter().zip(&scores).filter(|(_, &s)| s >= best - 2.0 * gamma).map(|(&a, _)| a).collect();
        self.history.push(BatchRecord {
            active: self.active.len(),
            rank: r,
            support: b.support.clone(),
            weights: b.weights.clone(),
            pulls: b.pulls.clone(),
            design_value: b.design_value,
            gamma,
            noise_scale: scale,
            released_sums: b.sums.clone(),
            theta,
            survivors: survivors.len(),
        });
        let best_action = self.active[best_pos];
        self.active = survivors;
        self.batch_index += 1;
        if self.batch_index == self.config.batch_lengths.len() {
            // Alg. 1 line 11: argmax over A_m of <a, theta_m>.
            self.committed = Some(best_action);
            self.batch = Batch::default();
            Ok(())
        } else {
            self.start_batch()
        }
    }

    fn check_set(&mut self, set: &DecisionSet) -> Result<()> {
        if set.k != self.config.k || set.d != self.config.d {
            return Err(Error::invalid(
                "decision_set",
                format!(
                    "must be the fixed ({}, {}) action set given at construction, got ({}, {})",
                    self.config.k, self.config.d, set.k, set.d
                ),
            ));
        }
        if !self.set_checked {
            if set.features != self.config.actions {
                return Err(Error::invalid(
                    "decision_set",
                    "must be the fixed action set given at construction (batched elimination plays one set)",
                ));
            }
            self.set_checked = true;
        }
        Ok(())
    }
}

/// Orthonormal basis of span{a_i : i in `rows`} (column-major d x rank);
/// empty with rank d when the rows span R^d.
fn span_basis(config: &EliminationConfig, rows: &[usize]) -> (Vec<f64>, usize) {
    let d = config.d;
    let mut g = DMatrix::<f64>::zeros(d, d);
    for &i in rows {
        let x = DVector::from_column_slice(config.action(i));
        g.ger(1.0, &x, &x, 1.0);
    }
    let eig = SymmetricEigen::new(g);
    let max = eig.eigenvalues.iter().copied().fold(0.0, f64::max);
    let keep: Vec<usize> = (0..d).filter(|&j| eig.eigenvalues[j] > 1e-10 * max).collect();
    if keep.len() == d {
        return (Vec::new(), d);
    }
    let mut basis = Vec::with_capacity(d * keep.len());
    for &j in &keep {
        basis.extend(eig.eigenvectors.column(j).iter());
    }
    (basis, keep.len())
}

fn to_coords(x: &[f64], basis: &[f64], d: usize, rank: usize) -> Vec<f64> {
    if basis.is_empty() {
        return x.to_vec();
    }
    (0..rank).map(|j| basis[j * d..(j + 1) * d].iter().zip(x).map(|(u, v)| u * v).sum()).collect()
}

fn from_coords(c: &[f64], basis: &[f64], d: usize, rank: usize) -> Vec<f64> {
    if basis.is_empty() {
        return c.to_vec();
    }
    let mut x = vec![0.0; d];
    for j in 0..rank {
        for (xi, u) in x.iter_mut().zip(&basis[j * d..(j + 1) * d]) {
            *xi += c[j] * u;
        }
    }
    x
}

fn project(config: &EliminationConfig, rows: &[usize], basis: &[f64], rank: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(rows.len() * rank);
    for &i in rows {
        out.extend(to_coords(config.action(i), basis, config.d, rank));
    }
    out
}

impl Learner for Elimination {
    fn use_os_entropy(&mut self) -> Result<()> {
        Elimination::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        self.check_set(set)?;
        self.next_action()
    }

    fn update(&mut self, _set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
        match feedback {
            Feedback::Reward(y) => self.observe(index, y),
            Feedback::Losses(_) => Err(Error::State("batched elimination needs bandit feedback".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// K unit actions at angles 2 pi j / K in R^2.
    fn circle(k: usize) -> Vec<f64> {
        (0..k)
            .flat_map(|j| {
                let a = 2.0 * std::f64::consts::PI * j as f64 / k as f64;
                [a.cos(), a.sin()]
            })
            .collect()
    }

    fn config(privatizer: Privatizer, horizon: u64) -> EliminationConfig {
        let t = horizon as f64;
        let m = ((t.ln().floor() as usize).saturating_sub(1)).max(1);
        let q = (2.0 * t).powf(1.0 / t.ln());
        let lengths: Vec<f64> = (1..=m).map(|i| q.powi(i as i32)).collect();
        EliminationConfig {
            k: 8,
            d: 2,
            actions: circle(8),
            horizon,
            gamma: lengths
                .iter()
                .map(|qi| GammaCoefficients { sqrt_log: (8.0 / qi).sqrt(), log: 0.0, constant: 0.0, sqrt_n_log: 0.0 })
                .collect(),
            noise: vec![NoiseSpec::Laplace { scale: 2.0 }; m],
            batch_lengths: lengths,
            log_offset: (4.0 * t * t).ln(),
            privatizer,
            exploration: Exploration::CoreSet,
            reward_min: -1.0,
            reward_max: 1.0,
            bounds: BoundsPolicy::Clip,
        }
    }

    fn run(engine: &mut Elimination, theta: [f64; 2], rounds: u64, rng: &mut StreamRng) {
        for _ in 0..rounds {
            let a = engine.next_action().unwrap();
            let x = engine.config.action(a);
            let mean = x[0] * theta[0] + x[1] * theta[1];
            let y = if rng.random::<f64>() < 0.5 * (1.0 + mean) { 1.0 } else { -1.0 };
            engine.observe(a, y).unwrap();
        }
    }

    #[test]
    fn batches_follow_the_core_set_and_pull_counts() {
        let mut e = Elimination::new(config(Privatizer::None, 20_000), &SeedSequence::from_seed(1)).unwrap();
        let mut rng = SeedSequence::from_seed(2).stream("test");
        run(&mut e, [1.0, 0.0], 20_000, &mut rng);
        assert!(!e.history().is_empty());
        for (i, rec) in e.history().iter().enumerate() {
            assert!(rec.design_value <= 2.0 * rec.rank as f64 * (1.0 + 1e-9), "batch {i}: {}", rec.design_value);
            let q = e.config.batch_lengths[i];
            for (w, n) in rec.weights.iter().zip(&rec.pulls) {
                assert_eq!(*n, (w * q).ceil() as u64);
            }
        }
        // theta* = e_1: action 0 is optimal and must survive.
        assert_eq!(e.committed(), Some(0));
    }

    #[test]
    fn optimal_arm_survives_every_batch_across_seeds() {
        // Central model, eps = 1 with sensitivity 2 (scale 2) and Alg. 1's
        // gamma_i (B = 1.5, d = 2): Lemma 3 bounds the failure probability
        // of a run by 1/T, so 20 runs fail with probability <= 20/T.
        let mut c = config(Privatizer::CentralSum, 20_000);
        c.gamma = c
            .batch_lengths
            .iter()
            .map(|qi| GammaCoefficients {
                sqrt_log: (8.0 / qi).sqrt(),
                log: 8.0 / qi,
                constant: 24.0 / qi,
                sqrt_n_log: 0.0,
            })
            .collect();
        for seed in 0..20 {
            let mut e = Elimination::new(c.clone(), &SeedSequence::from_seed(seed)).unwrap();
            let mut rng = SeedSequence::from_seed(1000 + seed).stream("test");
            while e.committed().is_none() {
                assert!(e.active().contains(&1), "seed {seed}: arm 1 eliminated in batch {}", e.batch_index());
                run(&mut e, [0.6, 0.8], 1, &mut rng);
            }
            // theta* = (0.6, 0.8) is closest to arm 1 at angle pi/4.
            assert_eq!(e.committed(), Some(1), "seed {seed}");
        }
    }

    #[test]
    fn shuffled_batch_is_a_permutation_of_the_pull_list() {
        let e = Elimination::new(config(Privatizer::ShuffledReward, 20_000), &SeedSequence::from_seed(1)).unwrap();
        let b = &e.batch;
        let mut counts = vec![0u64; b.support.len()];
        for &p in &b.order {
            counts[p as usize] += 1;
        }
        assert_eq!(counts, b.pulls);
    }

    #[test]
    fn restore_continues_identically() {
        let mut a = Elimination::new(config(Privatizer::LocalReward, 5_000), &SeedSequence::from_seed(4)).unwrap();
        let mut rng = SeedSequence::from_seed(5).stream("test");
        run(&mut a, [0.6, 0.8], 300, &mut rng);
        let mut b = Elimination::from_bytes(&a.to_bytes()).unwrap();
        let mut r1 = rng.clone();
        run(&mut a, [0.6, 0.8], 3000, &mut rng);
        run(&mut b, [0.6, 0.8], 3000, &mut r1);
        assert_eq!(a.history(), b.history());
    }

    fn shuffle_sum(epsilon: f64, delta: f64) -> ShuffleSumCoefficients {
        // The constants of dpbandits.privacy.shuffle_sum (CJMP21 Lemma 3.1).
        let c = (2.0 / delta).ln() / (epsilon * epsilon);
        ShuffleSumCoefficients { g_sqrt_n: 2.0, g_min: 4.0, bits: 180.0 * c, ones: 90.0 * c }
    }

    #[test]
    fn shuffle_sum_parameters_match_hand_values() {
        // n = 100, epsilon = 1, delta = 1e-5: g = max(ceil(2 * 10), 4) = 20,
        // b = ceil(180 * 400 * ln(2e5) / 100) = ceil(8788.3) = 8789,
        // p = 90 * 400 * ln(2e5) / (8789 * 100) = 0.499964.
        let p = shuffle_sum(1.0, 1e-5).parameters(100).unwrap();
        assert_eq!((p.g, p.b), (20, 8789));
        assert!((p.p - 0.499_964).abs() < 1e-6, "{}", p.p);
        // n = 3: g = max(ceil(2 sqrt 3) = 4, 4) = 4.
        assert_eq!(shuffle_sum(1.0, 1e-5).parameters(3).unwrap().g, 4);
        assert_eq!(shuffle_sum(1.0, 1e-5).parameters(5).unwrap().g, 5);
    }

    #[test]
    fn shuffled_sum_is_unbiased_with_the_stated_variance() {
        // 40 users with fixed inputs; 4000 independent runs of the protocol.
        // Error variance: sum_j f_j (1 - f_j) / g^2 + b n p (1 - p) / g^2.
        // The mean error is within 5 standard errors of 0 and the sample
        // variance within 5 of its standard errors (sqrt(2 / (R - 1)) var
        // for this nearly Gaussian error) of the formula.
        let n = 40u64;
        let xs: Vec<f64> = (0..n).map(|j| (j as f64 * 0.137) % 1.0).collect();
        let params = shuffle_sum(2.0, 1e-3).parameters(n).unwrap();
        let g = params.g as f64;
        let truth: f64 = xs.iter().sum();
        let rounding: f64 = xs.iter().map(|x| (x * g - (x * g).floor()) * (1.0 - (x * g - (x * g).floor()))).sum();
        let var = (rounding + (params.b * n) as f64 * params.p * (1.0 - params.p)) / (g * g);
        let mut rng = SeedSequence::from_seed(11).stream("test");
        let reps: u32 = 4000;
        let errs: Vec<f64> = (0..reps)
            .map(|_| {
                let rounded: u64 = xs.iter().map(|&x| round_to_bits(x, params.g, &mut rng)).sum();
                analyze_bits(rounded, n, &params, &mut rng).unwrap() - truth
            })
            .collect();
        let mean = errs.iter().sum::<f64>() / f64::from(reps);
        let sample_var = errs.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / f64::from(reps - 1);
        assert!(mean.abs() < 5.0 * (var / f64::from(reps)).sqrt(), "mean error {mean}, var {var}");
        let se = var * (2.0 / f64::from(reps - 1)).sqrt();
        assert!((sample_var - var).abs() < 5.0 * se, "sample variance {sample_var}, formula {var}");
    }

    #[test]
    fn shuffled_sum_engine_restores_and_maps_the_range_back() {
        let mut c = config(Privatizer::ShuffledSum(shuffle_sum(10.0, 1e-5)), 5_000);
        c.reward_min = 0.0;
        c.reward_max = 4.0;
        let mut a = Elimination::new(c, &SeedSequence::from_seed(4)).unwrap();
        // Every reward is 4 = r_max (x = 1: rounding is exact): the released
        // sum of an action pulled n times is 4 n + 4 (Binomial - p b n) / g.
        let feed = |e: &mut Elimination, rounds: u64| {
            for _ in 0..rounds {
                let i = e.next_action().unwrap();
                e.observe(i, 7.0).unwrap(); // clipped to 4
            }
        };
        feed(&mut a, 300);
        let mut b = Elimination::from_bytes(&a.to_bytes()).unwrap();
        feed(&mut a, 3000);
        feed(&mut b, 3000);
        assert_eq!(a.history(), b.history());
        let rec = &a.history()[0];
        for (&n, &s) in rec.pulls.iter().zip(&rec.released_sums) {
            let p = shuffle_sum(10.0, 1e-5).parameters(n).unwrap();
            let sd = 4.0 * ((p.b * n) as f64 * p.p * (1.0 - p.p)).sqrt() / p.g as f64;
            assert!((s - 4.0 * n as f64).abs() < 6.0 * sd, "n = {n}: sum {s}, sd {sd}");
        }
    }

    #[test]
    fn the_horizon_is_enforced() {
        let mut e = Elimination::new(config(Privatizer::CentralSum, 50), &SeedSequence::from_seed(2)).unwrap();
        for _ in 0..50 {
            let a = e.next_action().unwrap();
            e.observe(a, 0.5).unwrap();
        }
        assert!(matches!(e.next_action(), Err(Error::State(_))));
        assert!(matches!(e.observe(0, 0.5), Err(Error::State(_))));
    }

    #[test]
    fn out_of_range_rewards_are_clipped_or_refused() {
        let mut c = config(Privatizer::None, 1000);
        c.bounds = BoundsPolicy::Error;
        let mut e = Elimination::new(c, &SeedSequence::from_seed(1)).unwrap();
        let a = e.next_action().unwrap();
        assert!(matches!(e.observe(a, 1.5), Err(Error::InvalidArgument { name: "reward", .. })));
    }

    #[test]
    fn degenerate_span_is_handled_in_the_subspace() {
        // Actions on one line of R^2: the core set lives in that span.
        let mut c = config(Privatizer::None, 5000);
        c.k = 3;
        c.actions = vec![1.0, 1.0, 0.5, 0.5, -0.7, -0.7];
        let mut e = Elimination::new(c, &SeedSequence::from_seed(1)).unwrap();
        let mut rng = SeedSequence::from_seed(2).stream("test");
        run(&mut e, [0.7, 0.7], 5000, &mut rng);
        assert_eq!(e.history()[0].rank, 1);
        assert_eq!(e.committed(), Some(0));
    }
}
