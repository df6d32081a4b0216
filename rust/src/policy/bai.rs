//! Fixed-confidence best-arm identification (BAI) with a stopping rule:
//! Top Two samplers on per-arm batches released with Laplace noise, and
//! their simulation. Built by `dpbandits.learners.bai` (the private Top Two
//! of Jourdan & Azize 2025, AdaP-TT of Azize, Jourdan, Al Marjani & Basu
//! 2023, and the non-private Top Two with the GLR stopping rule).
//!
//! Statistics. Each arm plays in batches: its j-th batch ends when its
//! observed reward count reaches n_j (n_1 = `first`,
//! n_{j+1} = max(n_j + 1, ceil(`ratio` n_j))); at the end of a batch its
//! reward sum is released once with its own noise draw. The engine's means
//! are m_a = clip(S_a / N_a, 0, 1) with N_a the rewards in released batches
//! and S_a the sum of the released batch sums (`forget` = false), or the
//! last batch's released sum over its length (`forget` = true, AdaP-TT).
//! Every decision (leader, challenger, stopping, recommendation) reads only
//! these released values and the selection counts (functions of past
//! decisions): never a reward inside an open batch.
//!
//! Released values (the project's noise rule): with lattice noise each
//! reward in [0, 1] is rounded to the lattice 2^-j and summed as an integer
//! number of steps; the noise is an exact discrete Laplace number of steps;
//! the released sum is an exact multiple of 2^-j.
//!
//! Stopping (every rule): with the leader a (largest mean) and for every
//! other arm b, the means shifted by the noise radii,
//! x = m_a - R_a / N_a and y = m_b + R_b / N_b (R: `radii[j - 1]` after the
//! arm's j-th batch, 0 without noise), must satisfy x > y and
//! N_a kl(x, z) + N_b kl(y, z) >= c0 + c1 (ln(1 + ln N_a) + ln(1 + ln N_b)),
//! z = (N_a x + N_b y) / (N_a + N_b) (the Bernoulli GLR of the shifted
//! means); c0 = `thresholds[j - 1]` with j the larger batch index of the
//! two arms (one entry: constant). The constants and why the rule is
//! delta-correct: `dpbandits.privacy.bai` and `dpbandits.learners.bai`.
//!
//! Or (`stop` = [`BaiStop::Chernoff`]): stop when, for the leader a and
//! every other arm b, the pair statistic W(a, b) of
//! [`crate::policy::bai_stop`] (the Chernoff exponent of the noisy sums,
//! equation (C3) of `dpbandits.privacy.bai`) reaches
//! `thresholds[j_a + j_b - 2]`, j the arms' released batches; with
//! `forget` an arm's statistic is its last batch (its rewards and its one
//! noise draw), a fresh sample for each batch index (AdaP-TT*).

use rand_core::RngCore;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::noise::cell_sampler::discrete_laplace;
use crate::noise::entropy::EntropyCell;
use crate::noise::laplace;
use crate::noise::lattice::{SecureKind, SecureNoise};
use crate::noise::NoiseSpec;
use crate::policy::bai_stop::{ids_leader_probability, pair_at_least, pair_cost, NoiseMgf, Released};
use crate::rng::{unit_f64, SeedSequence, SimulationRng, StreamRng};

/// Most arms a BAI engine accepts.
pub const MAX_ARMS: usize = 1 << 20;

/// How the leader and the challenger are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum BaiRule {
    /// Leader: the largest mean (ties: the random tie order). Challenger:
    /// argmin over b of W(a, b) + ln N_b with
    /// W(a, b) = inf_z N_a d(m_a, z) + N_b d(m_b, z) (0 when m_b >= m_a),
    /// d = d_eps (`divergence_epsilon`) or the Bernoulli kl (None): the
    /// transportation-cost challenger with its ln N penalty (TCI, Jourdan et
    /// al. 2022), on the private costs of Jourdan & Azize 2025.
    TopTwo { divergence_epsilon: Option<f64> },
    /// Leader: the largest mean. Challenger: the arm b whose test in the
    /// stopping rule is furthest from passing: first the arms with
    /// x <= y (largest y - x first), then the smallest GLR(x, y) + ln N_b, on
    /// the noise-shifted means x, y of the stopping rule (without noise:
    /// the TCI challenger with the kl cost).
    StoppingTopTwo,
    /// AdaP-TT (Azize et al. 2023): leader argmax of
    /// m_a + ln t / (eps s_a) + sqrt(ln t / (2 s_a)) (s_a the last batch's
    /// length, t the selections so far); challenger argmin over b of
    /// (m_a - m_b + 1 / (1 + sqrt t)) / sqrt(1 / n_a + 1 / n_b), n the
    /// selection counts.
    AdaP { epsilon: f64 },
    /// Leader: the largest mean. Challenger: argmin over b of
    /// W(a, b) + ln N_b with W the Chernoff pair statistic of the stopping
    /// rule ([`crate::policy::bai_stop::pair_cost`]: the cost of the noisy
    /// sums, which counts the noise draws each arm's mean holds).
    ChernoffTopTwo,
    /// The challenger of [`BaiRule::ChernoffTopTwo`]; the leader is played
    /// with the information-directed probability of
    /// [`crate::policy::bai_stop::ids_leader_probability`] instead of `beta`.
    ChernoffIds,
    /// AdaP-TT* (Azize, Jourdan, Al Marjani & Basu, extended version): the
    /// leader of [`BaiRule::AdaP`] (its private UCB index, moving with t);
    /// challenger argmin over b of W(a, b) + ln N_b with W the Chernoff
    /// pair statistic of the released statistics
    /// ([`crate::policy::bai_stop::pair_cost`]; with `forget`, each arm's
    /// last batch and its one noise draw).
    AdaPChernoff { epsilon: f64 },
}

/// Which stopping rule reads the released statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BaiStop {
    /// The GLR of the noise-shifted means with `thresholds`, `c1`, `radii`.
    #[default]
    Shifted,
    /// The Chernoff pair statistic with `thresholds` indexed by j_a + j_b - 2.
    Chernoff,
}

/// Cells the Chernoff certificate may evaluate per pair before it gives up
/// (and does not stop).
const CERTIFICATE_BUDGET: usize = 400;

/// Everything the engine needs, as plain numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BaiConfig {
    pub k: usize,
    pub rule: BaiRule,
    /// Probability of playing the leader (Top Two's beta).
    pub beta: f64,
    /// First batch length and growth ratio (>= 1) of the per-arm batches.
    pub first: u64,
    pub ratio: f64,
    /// Means from the last batch only (AdaP-TT).
    pub forget: bool,
    /// Noise of each batch sum (sensitivity 1: rewards in [0, 1]).
    pub noise: NoiseSpec,
    /// Noise from the operating system instead of the seeded stream.
    pub secure: bool,
    /// GLR threshold: c0 (one entry) or c0 per batch index (no stop past
    /// the table), and c1.
    pub thresholds: Vec<f64>,
    pub c1: f64,
    /// Noise radius of an arm's sum after its j-th batch (j = 1, 2, ...;
    /// no stop past the table).
    pub radii: Vec<f64>,
    /// Most samples the engine takes (keeps lattice sums exact).
    pub max_samples: u64,
    /// The stopping rule.
    pub stop: BaiStop,
    /// Local randomised response of every reward before it enters (CTB-TT);
    /// None: rewards enter as they are.
    #[serde(default)]
    pub local: Option<LocalResponse>,
}

/// Randomised response with the flip probability `num` / 2^`bits`
/// (exactly; <= 1/2): a reward y in [0, 1] is rounded to the lattice
/// 2^-32, made a bit b ~ Bernoulli(y) (exact on the lattice), and b is
/// flipped when `bits` uniform bits, read as an integer, fall below `num`;
/// the bit is the reward the engine sees (the library's local privatiser
/// of CTB-TT, `dpbandits.learners.bai.CTBTT`; its epsilon,
/// ln((2^bits - num) / num), is computed in `dpbandits.privacy.bai`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalResponse {
    pub num: u64,
    pub bits: u32,
}

/// Bits of the lattice a reward is rounded to before it is made a bit.
const RESPONSE_BITS: u32 = 32;

/// A draw of Bernoulli(`num` / 2^`bits`), exactly (`bits` in 1..=64).
pub fn dyadic_bernoulli(rng: &mut dyn RngCore, num: u64, bits: u32) -> bool {
    (rng.next_u64() >> (64 - bits)) < num
}

/// One arm's state.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Arm {
    /// Selections made (decisions).
    selected: u64,
    /// Rewards observed (released or in the open batch).
    observed: u64,
    /// Released batches, rewards in them, sum of the released sums.
    batches: u32,
    released: u64,
    released_sum: f64,
    /// The last batch: its released sum and length.
    last_sum: f64,
    last_len: u64,
    /// End of the open batch (observed count), its lattice steps / sum.
    batch_end: u64,
    open_steps: i64,
    open_sum: f64,
}

/// One arm's terms on the noiseless GLR path ([`Bai::noiseless_glr`]),
/// functions of its released values.
#[derive(Clone, Copy, Debug, Default)]
struct GlrTerms {
    /// n (x ln x + (1 - x) ln(1 - x)).
    h: f64,
    /// ln n and ln(1 + ln n).
    ln_n: f64,
    ln_ln_n: f64,
    /// The released mean (as [`Bai::means`]) and count.
    mean: f64,
    n: u64,
    /// The released sum as a count of ones, when it is an integer.
    ones: Option<u64>,
}

/// The engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bai {
    config: BaiConfig,
    lattice: Option<SecureNoise>,
    up: f64,
    arms: Vec<Arm>,
    tie_rank: Vec<u32>,
    t: u64,
    observed: u64,
    /// Cached after every release: leader, challenger, stop.
    leader: usize,
    challenger: usize,
    stop: bool,
    /// The Chernoff challenger's costs W(leader, b) for `costs_leader`
    /// (a function of released values, recomputed after a restore).
    #[serde(skip)]
    costs: Vec<f64>,
    #[serde(skip)]
    costs_leader: Option<usize>,
    /// The Chernoff stopping rule's verdict per pair (leader `verdict_leader`, b).
    #[serde(skip)]
    verdicts: Vec<Option<bool>>,
    #[serde(skip)]
    verdict_leader: Option<usize>,
    /// [`BaiRule::ChernoffIds`]: the probability of playing the leader (a
    /// function of released values, recomputed after a restore).
    #[serde(skip)]
    lead_prob: f64,
    /// The pair `lead_prob` was computed for.
    #[serde(skip)]
    lead_pair: Option<(usize, usize)>,
    /// The noiseless GLR path ([`Bai::noiseless_glr`]): per arm
    /// n (x ln x + (1 - x) ln(1 - x)), ln n and ln(1 + ln n), and per
    /// challenger the GLR with the leader `costs_leader` (functions of the
    /// released values, recomputed after a restore).
    #[serde(skip)]
    entropy_terms: Vec<GlrTerms>,
    #[serde(skip)]
    glrs: Vec<f64>,
    /// Every arm has a release (false after a restore until the next release).
    #[serde(skip)]
    all_released: bool,
    rng: StreamRng,
    #[serde(skip)]
    entropy: EntropyCell,
}

fn kl(x: f64, y: f64) -> f64 {
    const TINY: f64 = 1e-15;
    let y = y.clamp(TINY, 1.0 - TINY);
    let mut v = 0.0;
    if x > 0.0 {
        v += x * (x / y).ln();
    }
    if x < 1.0 {
        v += (1.0 - x) * ((1.0 - x) / (1.0 - y)).ln();
    }
    v.max(0.0)
}

/// The Bernoulli GLR cost of two arms with means x > y over na, nb samples
/// (0 when x <= y).
pub fn glr_cost(x: f64, na: f64, y: f64, nb: f64) -> f64 {
    if x <= y {
        return 0.0;
    }
    let z = (na * x + nb * y) / (na + nb);
    na * kl(x, z) + nb * kl(y, z)
}

/// The private transportation cost inf_z na d_eps(x, z) + nb d_eps(y, z)
/// over z in [y, x] (convex in z: golden section), or the kl cost.
fn tc_cost(x: f64, na: f64, y: f64, nb: f64, eps: Option<f64>) -> f64 {
    const G: f64 = 0.618_033_988_749_894_8;
    let Some(eps) = eps else { return glr_cost(x, na, y, nb) };
    if x <= y {
        return 0.0;
    }
    let f = |z: f64| {
        na * crate::policy::phased_mab::d_eps(x, z, Some(eps)) + nb * crate::policy::phased_mab::d_eps(y, z, Some(eps))
    };
    let (mut a, mut b) = (y, x);
    let mut c = b - G * (b - a);
    let mut d = a + G * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..48 {
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - G * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + G * (b - a);
            fd = f(d);
        }
    }
    fc.min(fd)
}

/// Counts below this read their logarithms from tables built once per
/// process (2 MiB per table).
const LOG_TABLE_LEN: usize = 1 << 18;

/// ln k, ln(1 + ln k) and k ln k (0 at 0) of the counts k < [`LOG_TABLE_LEN`],
/// each bit-equal to the direct computation.
struct LogTables {
    ln: Box<[f64]>,
    ln_ln: Box<[f64]>,
    x_ln_x: Box<[f64]>,
}

impl LogTables {
    fn get() -> &'static LogTables {
        static TABLES: std::sync::OnceLock<LogTables> = std::sync::OnceLock::new();
        TABLES.get_or_init(|| {
            let ln: Box<[f64]> = (0..LOG_TABLE_LEN).map(|k| (k as f64).ln()).collect();
            let ln_ln = ln.iter().map(|l| (1.0 + l).ln()).collect();
            let x_ln_x = ln.iter().enumerate().map(|(k, l)| if k == 0 { 0.0 } else { k as f64 * l }).collect();
            LogTables { ln, ln_ln, x_ln_x }
        })
    }

    /// ln n of a count, bit-equal to `(n as f64).ln()`.
    #[inline]
    fn ln(&self, n: u64) -> f64 {
        match self.ln.get(usize::try_from(n).unwrap_or(usize::MAX)) {
            Some(&v) => v,
            None => (n as f64).ln(),
        }
    }

    /// ln(1 + ln n) of a count, bit-equal to `(1.0 + (n as f64).ln()).ln()`.
    #[inline]
    fn ln_ln(&self, n: u64) -> f64 {
        match self.ln_ln.get(usize::try_from(n).unwrap_or(usize::MAX)) {
            Some(&v) => v,
            None => (1.0 + (n as f64).ln()).ln(),
        }
    }

    /// k ln k of a count (0 at 0).
    #[inline]
    fn x_ln_x(&self, k: u64) -> f64 {
        match self.x_ln_x.get(usize::try_from(k).unwrap_or(usize::MAX)) {
            Some(&v) => v,
            None => k as f64 * (k as f64).ln(),
        }
    }
}

/// An arm's released mean: of all its released batches, or of the last
/// one (`forget`), clipped to [0, 1].
#[inline]
fn arm_mean(s: &Arm, forget: bool) -> f64 {
    let m = if forget { s.last_sum / s.last_len as f64 } else { s.released_sum / s.released as f64 };
    m.clamp(0.0, 1.0)
}

/// An arm's released reward sum as a count of ones, when it is an integer
/// in [0, released] (Bernoulli rewards, the bits of randomised response).
#[inline]
fn integral_sum(s: &Arm) -> Option<u64> {
    let v = s.released_sum;
    if !(v >= 0.0 && v <= s.released as f64) {
        return None;
    }
    let ones = v as u64;
    #[allow(clippy::float_cmp)] // exact integers
    (ones as f64 == v).then_some(ones)
}

impl Bai {
    /// A fresh engine; noise and coin flips from the `"bai"` stream of `seeds`.
    pub fn new(config: BaiConfig, seeds: &SeedSequence) -> Result<Self> {
        let k = config.k;
        if !(2..=MAX_ARMS).contains(&k) {
            return Err(Error::invalid("k", format!("must lie in [2, {MAX_ARMS}], got {k}")));
        }
        if !(config.beta > 0.0 && config.beta < 1.0) {
            return Err(Error::invalid("beta", format!("must lie in (0, 1), got {}", config.beta)));
        }
        if config.first == 0 {
            return Err(Error::invalid("first_batch", "must be >= 1"));
        }
        if !(config.ratio.is_finite() && config.ratio >= 1.0) {
            return Err(Error::invalid("ratio", format!("must be finite and >= 1, got {}", config.ratio)));
        }
        if config.thresholds.is_empty() || config.thresholds.iter().any(|c| !c.is_finite() || *c < 0.0) {
            return Err(Error::invalid("thresholds", "must be a non-empty list of finite values >= 0"));
        }
        if !(config.c1.is_finite() && config.c1 >= 0.0) {
            return Err(Error::invalid("c1", "must be finite and >= 0"));
        }
        if config.radii.iter().any(|r| !r.is_finite() || *r < 0.0) {
            return Err(Error::invalid("radii", "must be finite values >= 0"));
        }
        if config.max_samples == 0 {
            return Err(Error::invalid("max_samples", "must be >= 1"));
        }
        match config.rule {
            BaiRule::TopTwo { divergence_epsilon: Some(e) }
            | BaiRule::AdaP { epsilon: e }
            | BaiRule::AdaPChernoff { epsilon: e }
                if !(e > 0.0 && e.is_finite()) =>
            {
                return Err(Error::invalid("epsilon", format!("must be finite and > 0, got {e}")));
            }
            _ => {}
        }
        let spec = config.noise;
        let (lattice, up) = laplace_sum_noise(spec, config.max_samples, "max_samples", "batch releases")?;
        if let Some(rr) = config.local {
            if !(1..=64).contains(&rr.bits) || rr.num == 0 || u128::from(rr.num) > (1u128 << (rr.bits - 1)) {
                return Err(Error::invalid(
                    "local",
                    "randomised response needs 1 <= bits <= 64 and a flip probability num / 2^bits in (0, 1/2]",
                ));
            }
            if !matches!(config.noise, NoiseSpec::Zero) {
                return Err(Error::invalid("noise", "randomised response rewards take no further noise"));
            }
        }
        if !matches!(spec, NoiseSpec::Zero) && config.stop == BaiStop::Shifted && config.radii.is_empty() {
            return Err(Error::invalid("radii", "a private engine needs its noise radii"));
        }
        let mut rng = seeds.stream("bai");
        let mut order: Vec<u32> = (0..k as u32).collect();
        for i in (1..k).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut tie_rank = vec![0u32; k];
        for (rank, &a) in order.iter().enumerate() {
            tie_rank[a as usize] = rank as u32;
        }
        let first = config.first;
        Ok(Bai {
            lattice,
            up,
            arms: vec![Arm { batch_end: first, ..Arm::default() }; k],
            tie_rank,
            t: 0,
            observed: 0,
            leader: 0,
            challenger: 1,
            stop: false,
            costs: Vec::new(),
            costs_leader: None,
            verdicts: Vec::new(),
            verdict_leader: None,
            lead_prob: 0.5,
            lead_pair: None,
            entropy_terms: Vec::new(),
            glrs: Vec::new(),
            all_released: false,
            rng,
            entropy: EntropyCell::default(),
            config,
        })
    }

    pub fn config(&self) -> &BaiConfig {
        &self.config
    }

    /// Selections made.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Rewards observed.
    pub fn samples(&self) -> u64 {
        self.observed
    }

    /// Selections of each arm.
    pub fn pulls(&self) -> Vec<u64> {
        self.arms.iter().map(|a| a.selected).collect()
    }

    /// Rewards of each arm in released batches.
    pub fn released_counts(&self) -> Vec<u64> {
        self.arms.iter().map(|a| a.released).collect()
    }

    /// Sum of each arm's released batch sums.
    pub fn released_sums(&self) -> Vec<f64> {
        self.arms.iter().map(|a| a.released_sum).collect()
    }

    /// Each arm's released mean (NaN before its first release).
    pub fn means(&self) -> Vec<f64> {
        (0..self.config.k).map(|a| if self.arms[a].batches == 0 { f64::NAN } else { self.mean(a) }).collect()
    }

    pub fn should_stop(&self) -> bool {
        self.stop
    }

    /// The recommended arm: the largest released mean (the leader of the
    /// stopping rule); None before every arm has a release.
    pub fn recommendation(&self) -> Option<usize> {
        self.ready().then(|| self.empirical_best())
    }

    fn ready(&self) -> bool {
        self.arms.iter().all(|a| a.batches > 0)
    }

    fn mean(&self, a: usize) -> f64 {
        arm_mean(&self.arms[a], self.config.forget)
    }

    /// Released pulls of the statistic (last batch when forgetting).
    fn weight(&self, a: usize) -> f64 {
        let s = &self.arms[a];
        (if self.config.forget { s.last_len } else { s.released }) as f64
    }

    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn better(&self, a: usize, ma: f64, b: usize, mb: f64) -> bool {
        ma > mb || (ma == mb && self.tie_rank[a] < self.tie_rank[b])
    }

    fn empirical_best(&self) -> usize {
        let mut best = 0;
        let mut mb = self.mean(0);
        for a in 1..self.config.k {
            let m = self.mean(a);
            if self.better(a, m, best, mb) {
                best = a;
                mb = m;
            }
        }
        best
    }

    /// Batches released so far (over all arms).
    pub fn releases(&self) -> u64 {
        self.arms.iter().map(|a| u64::from(a.batches)).sum()
    }

    /// The law of the next selection as a function of released values and
    /// selection counts only (the served policy): before every arm has a
    /// release, uniform over the arms without one (the engine takes the
    /// least-selected of them); then the leader probability (`beta`, or
    /// the information-directed one of this state) on the leader and the
    /// rest on the challenger of this state.
    pub fn sampling_probabilities(&self) -> Vec<f64> {
        let k = self.config.k;
        let mut p = vec![0.0; k];
        let waiting: Vec<usize> = (0..k).filter(|&a| self.arms[a].batches == 0).collect();
        if !waiting.is_empty() {
            let w = 1.0 / waiting.len() as f64;
            for a in waiting {
                p[a] = w;
            }
            return p;
        }
        let (leader, challenger) = if let BaiRule::AdaP { .. } | BaiRule::AdaPChernoff { .. } = self.config.rule {
            let mut e = self.clone();
            e.moving_pair();
            (e.leader, e.challenger)
        } else {
            (self.leader, self.challenger)
        };
        let beta = self.leader_probability();
        p[leader] += beta;
        p[challenger] += 1.0 - beta;
        p
    }

    /// The probability of playing the leader: `beta`, or the
    /// information-directed one of this state (`ChernoffIds`).
    fn leader_probability(&self) -> f64 {
        if self.config.rule == BaiRule::ChernoffIds {
            self.lead_prob
        } else {
            self.config.beta
        }
    }

    /// The arm to pull next.
    pub fn select_arm(&mut self) -> Result<usize> {
        if self.t >= self.config.max_samples {
            return Err(Error::State(format!(
                "max_samples = {} selections made: the experiment's budget is spent",
                self.config.max_samples
            )));
        }
        // Initialisation: the arm without a release with the fewest selections.
        let waiting = if self.all_released {
            None
        } else {
            (0..self.config.k)
                .filter(|&a| self.arms[a].batches == 0)
                .min_by_key(|&a| (self.arms[a].selected, self.tie_rank[a]))
        };
        let arm = if let Some(a) = waiting {
            a
        } else {
            self.moving_pair();
            let u = unit_f64(&mut self.rng);
            let beta = self.leader_probability();
            if u < beta {
                self.leader
            } else {
                self.challenger
            }
        };
        self.arms[arm].selected += 1;
        self.t += 1;
        Ok(arm)
    }

    /// The pair of the rules whose leader moves with t (AdaP-TT, AdaP-TT*);
    /// the other rules set theirs at each release.
    fn moving_pair(&mut self) {
        match self.config.rule {
            BaiRule::AdaP { epsilon } => self.adap_pair(epsilon),
            BaiRule::AdaPChernoff { epsilon } => self.adap_chernoff_pair(epsilon),
            _ => {}
        }
    }

    /// AdaP-TT's private UCB leader: argmax of
    /// m_a + ln t / (eps s_a) + sqrt(ln t / (2 s_a)), s_a the last batch's length.
    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn ucb_leader(&self, epsilon: f64) -> usize {
        let lt = (self.t.max(1) as f64).ln();
        let mut leader = 0;
        let mut best = f64::NEG_INFINITY;
        for a in 0..self.config.k {
            let s = self.arms[a].last_len as f64;
            let idx = self.mean(a) + lt / (epsilon * s) + (lt / (2.0 * s)).sqrt();
            if idx > best || (idx == best && self.tie_rank[a] < self.tie_rank[leader]) {
                best = idx;
                leader = a;
            }
        }
        leader
    }

    /// AdaP-TT's leader and challenger (they move with t).
    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn adap_pair(&mut self, epsilon: f64) {
        let leader = self.ucb_leader(epsilon);
        let kappa = 1.0 / (1.0 + (self.t as f64).sqrt());
        let nl = self.arms[leader].selected.max(1) as f64;
        let ml = self.mean(leader);
        let mut challenger = usize::MAX;
        let mut cost = f64::INFINITY;
        for b in 0..self.config.k {
            if b == leader {
                continue;
            }
            let nb = self.arms[b].selected.max(1) as f64;
            let c = (ml - self.mean(b) + kappa) / (1.0 / nl + 1.0 / nb).sqrt();
            if challenger == usize::MAX || c < cost || (c == cost && self.tie_rank[b] < self.tie_rank[challenger]) {
                cost = c;
                challenger = b;
            }
        }
        self.leader = leader;
        self.challenger = challenger;
    }

    /// AdaP-TT*'s leader (AdaP-TT's, moving with t) and its Chernoff-cost
    /// challenger; the costs W(leader, b) are kept while the leader stays
    /// and neither arm of a pair releases (they are functions of released
    /// values), the challenger with them.
    fn adap_chernoff_pair(&mut self, epsilon: f64) {
        let leader = self.ucb_leader(epsilon);
        if self.costs_leader != Some(leader) || self.costs.len() != self.config.k {
            let noise = self.noise_mgf();
            let ra = self.released_stat(leader);
            self.costs = vec![0.0; self.config.k];
            for b in 0..self.config.k {
                if b != leader {
                    self.costs[b] = pair_cost(ra, self.released_stat(b), &noise);
                }
            }
            self.costs_leader = Some(leader);
            self.challenger = self.cost_challenger(leader);
        }
        self.leader = leader;
    }

    /// argmin over b != leader of costs[b] + ln N_b (ties: the random tie order).
    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn cost_challenger(&self, leader: usize) -> usize {
        let mut challenger = usize::MAX;
        let mut cost = f64::INFINITY;
        for b in 0..self.config.k {
            if b == leader {
                continue;
            }
            let c = self.costs[b] + (self.arms[b].released as f64).ln();
            if challenger == usize::MAX || c < cost || (c == cost && self.tie_rank[b] < self.tie_rank[challenger]) {
                cost = c;
                challenger = b;
            }
        }
        challenger
    }

    /// Records a reward of `arm`.
    pub fn observe(&mut self, arm: usize, reward: f64) -> Result<()> {
        let k = self.config.k;
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        if !(0.0..=1.0).contains(&reward) {
            return Err(Error::invalid("reward", format!("must lie in [0, 1], got {reward}")));
        }
        if self.observed >= self.config.max_samples {
            return Err(Error::State(format!("max_samples = {} rewards observed", self.config.max_samples)));
        }
        let reward = match self.config.local {
            Some(rr) => self.respond(reward, rr)?,
            None => reward,
        };
        let lattice = self.lattice.is_some();
        let up = self.up;
        let s = &mut self.arms[arm];
        if lattice {
            #[allow(clippy::float_cmp)] // exact lattice points
            let steps = if reward == 1.0 {
                up as i64
            } else if reward == 0.0 {
                0
            } else {
                (reward * up + 0.5).floor() as i64
            };
            s.open_steps += steps;
        } else {
            s.open_sum += reward;
        }
        s.observed += 1;
        self.observed += 1;
        if s.observed == s.batch_end {
            self.release(arm)?;
        }
        Ok(())
    }

    /// The randomised response of one reward ([`LocalResponse`]).
    fn respond(&mut self, reward: f64, rr: LocalResponse) -> Result<f64> {
        let rng: &mut dyn RngCore = if self.config.secure { self.entropy.get()? } else { &mut self.rng };
        let scale = (1u64 << RESPONSE_BITS) as f64;
        let steps = (reward * scale + 0.5).floor() as u64;
        let bit = u64::from(rng.next_u32()) < steps;
        let flip = dyadic_bernoulli(rng, rr.num, rr.bits);
        Ok(f64::from(u8::from(bit ^ flip)))
    }

    fn draw(&mut self) -> Result<f64> {
        let rng: &mut dyn RngCore = if self.config.secure { self.entropy.get()? } else { &mut self.rng };
        Ok(laplace_sum_draw(rng, self.lattice, self.config.noise))
    }

    fn release(&mut self, arm: usize) -> Result<()> {
        let noise = if matches!(self.config.noise, NoiseSpec::Zero) { 0.0 } else { self.draw()? };
        let ratio = self.config.ratio;
        let s = &mut self.arms[arm];
        let value = match self.lattice {
            Some(lat) => (s.open_steps as f64 + noise) * lat.step(),
            None => s.open_sum + noise,
        };
        let len = s.observed - s.released;
        s.batches += 1;
        s.released = s.observed;
        s.released_sum += value;
        s.last_sum = value;
        s.last_len = len;
        s.open_steps = 0;
        s.open_sum = 0.0;
        let next = (ratio * s.observed as f64).ceil() as u64;
        s.batch_end = next.max(s.observed + 1);
        if self.noiseless_glr() {
            self.update_entropy_term(arm);
        }
        if !self.all_released {
            self.all_released = self.ready();
        }
        if self.all_released {
            match self.config.rule {
                BaiRule::TopTwo { divergence_epsilon: None } if self.noiseless_glr() => self.noiseless_pair(arm),
                BaiRule::TopTwo { divergence_epsilon } => self.top_two_pair(divergence_epsilon, arm),
                BaiRule::StoppingTopTwo => self.stopping_pair(),
                BaiRule::ChernoffTopTwo => self.chernoff_pair(arm),
                BaiRule::ChernoffIds => {
                    self.chernoff_pair(arm);
                    // A function of the pair's released statistics: kept while they stay.
                    let pair = (self.leader, self.challenger);
                    if self.lead_pair != Some(pair) || arm == pair.0 || arm == pair.1 {
                        self.update_lead_prob();
                    }
                }
                BaiRule::AdaP { .. } => {}
                BaiRule::AdaPChernoff { .. } => self.adap_chernoff_release(arm),
            }
            self.stop = match self.config.stop {
                BaiStop::Shifted if self.noiseless_glr() && self.glrs.len() == self.config.k => {
                    self.noiseless_stopping()
                }
                BaiStop::Shifted => self.stopping(),
                BaiStop::Chernoff => self.chernoff_stopping(arm),
            };
        }
        Ok(())
    }

    /// The TCI pair of [`BaiRule::TopTwo`] after a release of `released`:
    /// the scores W(a, b) + ln N_b are kept while the leader stays (they
    /// are functions of the released values of a and b), so only the
    /// released arm's is recomputed unless it is the leader.
    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn top_two_pair(&mut self, eps: Option<f64>, released: usize) {
        let leader = self.empirical_best();
        let ml = self.mean(leader);
        let nl = self.weight(leader);
        let all = self.costs_leader != Some(leader) || released == leader || self.costs.len() != self.config.k;
        if all {
            self.costs = vec![0.0; self.config.k];
        }
        for b in 0..self.config.k {
            if b != leader && (all || b == released) {
                let nb = self.weight(b);
                self.costs[b] = tc_cost(ml, nl, self.mean(b), nb, eps) + nb.ln();
            }
        }
        self.costs_leader = Some(leader);
        let mut challenger = usize::MAX;
        let mut cost = f64::INFINITY;
        for b in 0..self.config.k {
            if b == leader {
                continue;
            }
            let c = self.costs[b];
            if challenger == usize::MAX || c < cost || (c == cost && self.tie_rank[b] < self.tie_rank[challenger]) {
                cost = c;
                challenger = b;
            }
        }
        self.leader = leader;
        self.challenger = challenger;
    }

    /// The Chernoff-cost challenger ([`BaiRule::ChernoffTopTwo`]).
    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn chernoff_pair(&mut self, released: usize) {
        let leader = self.empirical_best();
        let noise = self.noise_mgf();
        let ra = self.released_stat(leader);
        // Only the pairs whose statistics moved are recomputed.
        let all = self.costs_leader != Some(leader) || released == leader || self.costs.len() != self.config.k;
        if all {
            self.costs = vec![0.0; self.config.k];
        }
        for b in 0..self.config.k {
            if b != leader && (all || b == released) {
                self.costs[b] = pair_cost(ra, self.released_stat(b), &noise);
            }
        }
        self.costs_leader = Some(leader);
        self.leader = leader;
        self.challenger = self.cost_challenger(leader);
    }

    /// AdaP-TT* after a release of `released`: its cost to the kept leader
    /// is recomputed (all of them, at the next selection, if it is the leader).
    fn adap_chernoff_release(&mut self, released: usize) {
        let Some(leader) = self.costs_leader else { return };
        if released == leader || self.costs.len() != self.config.k {
            self.costs_leader = None;
            return;
        }
        let noise = self.noise_mgf();
        self.costs[released] = pair_cost(self.released_stat(leader), self.released_stat(released), &noise);
        self.challenger = self.cost_challenger(leader);
    }

    /// The information-directed leader probability of the current pair.
    fn update_lead_prob(&mut self) {
        let noise = self.noise_mgf();
        let (a, b) = (self.released_stat(self.leader), self.released_stat(self.challenger));
        self.lead_prob = ids_leader_probability(a, b, &noise);
        self.lead_pair = Some((self.leader, self.challenger));
    }

    /// The stopping-aware challenger ([`BaiRule::StoppingTopTwo`]).
    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn stopping_pair(&mut self) {
        let leader = self.empirical_best();
        let na = self.weight(leader);
        let x = self.radius(leader).map_or(f64::NEG_INFINITY, |r| self.mean(leader) - r / na);
        // (violated, score): violated arms first, by the largest violation.
        let mut best: Option<(usize, bool, f64)> = None;
        for b in 0..self.config.k {
            if b == leader {
                continue;
            }
            let nb = self.weight(b);
            let y = self.radius(b).map_or(f64::INFINITY, |r| self.mean(b) + r / nb);
            let (violated, score) = if x > y {
                (false, glr_cost(x.clamp(0.0, 1.0), na, y.clamp(0.0, 1.0), nb) + nb.ln())
            } else {
                (true, x - y)
            };
            let take = match best {
                None => true,
                Some((c, v, sc)) => {
                    (violated && !v)
                        || (violated == v && (score < sc || (score == sc && self.tie_rank[b] < self.tie_rank[c])))
                }
            };
            if take {
                best = Some((b, violated, score));
            }
        }
        self.leader = leader;
        self.challenger = best.map_or(leader, |(c, _, _)| c);
    }

    /// The noise radius of arm a's statistic (None past the table: no stop).
    fn radius(&self, a: usize) -> Option<f64> {
        let r = &self.config.radii;
        if matches!(self.config.noise, NoiseSpec::Zero) {
            return Some(0.0);
        }
        let j = self.arms[a].batches as usize;
        r.get(j.max(1) - 1).copied()
    }

    /// Whether the noiseless GLR path applies (the non-private reference and
    /// CTB-TT): no noise, one reward per release, the kl TCI challenger and
    /// one GLR constant. The GLR of a pair is then
    /// H_a + H_b - H_ab with H = n (x ln x + (1 - x) ln(1 - x)) of an arm
    /// and of the two arms pooled (z = (n_a x + n_b y) / (n_a + n_b)):
    /// two logarithms per pair (none with integer reward sums: then
    /// H = k1 ln k1 + k0 ln k0 - n ln n of the counts of ones and zeros, from
    /// a table of ln k), and the per-arm terms and the pair GLRs change only
    /// when an arm of the pair releases.
    fn noiseless_glr(&self) -> bool {
        matches!(self.config.noise, NoiseSpec::Zero)
            && self.config.first == 1
            && self.config.ratio <= 1.0
            && !self.config.forget
            && self.config.thresholds.len() == 1
            && self.config.stop == BaiStop::Shifted
            && self.config.rule == BaiRule::TopTwo { divergence_epsilon: None }
    }

    /// Refreshes the per-arm terms of `arm` (all of them after a restore).
    fn update_entropy_term(&mut self, arm: usize) {
        let forget = self.config.forget;
        let tables = LogTables::get();
        let term = |s: &Arm| {
            let mean = arm_mean(s, forget);
            let ones = integral_sum(s);
            let h = if let Some(ones) = ones {
                tables.x_ln_x(ones) + tables.x_ln_x(s.released - ones) - tables.x_ln_x(s.released)
            } else {
                let n = s.released as f64;
                let x = if n > 0.0 { (s.released_sum / n).clamp(0.0, 1.0) } else { 0.0 };
                let mut h = 0.0;
                if x > 0.0 {
                    h += n * x * x.ln();
                }
                if x < 1.0 {
                    h += n * (1.0 - x) * (-x).ln_1p();
                }
                h
            };
            GlrTerms { h, ln_n: tables.ln(s.released), ln_ln_n: tables.ln_ln(s.released), mean, n: s.released, ones }
        };
        if self.entropy_terms.len() == self.config.k {
            self.entropy_terms[arm] = term(&self.arms[arm]);
        } else {
            self.entropy_terms = self.arms.iter().map(term).collect();
        }
    }

    /// The Bernoulli GLR of arms a (mean x) and b (mean y), 0 when x <= y,
    /// from the cached per-arm terms (see [`Bai::noiseless_glr`]): with
    /// integer reward sums the pooled term is
    /// k1 ln k1 + k0 ln k0 - n ln n of the pooled counts of ones k1 and
    /// zeros k0 (logarithms of integers, read from a table).
    fn pooled_glr(&self, tables: &LogTables, a: usize, b: usize) -> f64 {
        let (ta, tb) = (&self.entropy_terms[a], &self.entropy_terms[b]);
        let (x, y) = (ta.mean, tb.mean);
        if x <= y {
            return 0.0;
        }
        let n = ta.n + tb.n;
        let pooled = if let (Some(oa), Some(ob)) = (ta.ones, tb.ones) {
            tables.x_ln_x(oa + ob) + tables.x_ln_x(n - oa - ob) - tables.x_ln_x(n)
        } else {
            let (na, nb) = (ta.n as f64, tb.n as f64);
            let n = na + nb;
            let z = (na * x + nb * y) / n;
            n * (z * z.ln() + (1.0 - z) * (-z).ln_1p())
        };
        (ta.h + tb.h - pooled).max(0.0)
    }

    /// [`Bai::empirical_best`] from the cached means of the noiseless GLR path.
    fn noiseless_best(&self) -> usize {
        let t = &self.entropy_terms;
        let mut best = 0;
        for a in 1..t.len() {
            if self.better(a, t[a].mean, best, t[best].mean) {
                best = a;
            }
        }
        best
    }

    /// [`BaiRule::TopTwo`]'s kl TCI pair on the noiseless GLR path: the same
    /// challenger argmin_b GLR(a, b) + ln N_b, the GLRs kept for the
    /// stopping rule.
    #[allow(clippy::float_cmp)] // exact ties go to the random tie order
    fn noiseless_pair(&mut self, released: usize) {
        let k = self.config.k;
        let leader = self.noiseless_best();
        let all = self.costs_leader != Some(leader) || released == leader || self.glrs.len() != k;
        let tables = LogTables::get();
        if all {
            self.glrs.clear();
            self.glrs.resize(k, 0.0);
            for b in 0..k {
                if b != leader {
                    self.glrs[b] = self.pooled_glr(tables, leader, b);
                }
            }
        } else {
            self.glrs[released] = self.pooled_glr(tables, leader, released);
        }
        self.costs_leader = Some(leader);
        let mut challenger = usize::MAX;
        let mut cost = f64::INFINITY;
        for b in 0..k {
            if b == leader {
                continue;
            }
            let c = self.glrs[b] + self.entropy_terms[b].ln_n;
            if challenger == usize::MAX || c < cost || (c == cost && self.tie_rank[b] < self.tie_rank[challenger]) {
                cost = c;
                challenger = b;
            }
        }
        self.leader = leader;
        self.challenger = challenger;
    }

    /// [`Bai::stopping`] on the noiseless GLR path: for the leader a and
    /// every other b, m_a > m_b and GLR(a, b) >= c0 + c1 (ln(1 + ln N_a) +
    /// ln(1 + ln N_b)) plus a margin for the rounding of the pooled
    /// difference (1e-12 of the terms' magnitude).
    fn noiseless_stopping(&self) -> bool {
        let a = self.costs_leader.unwrap_or(self.leader);
        let ta = self.entropy_terms[a];
        let c0 = self.config.thresholds[0];
        for b in 0..self.config.k {
            if b == a {
                continue;
            }
            let tb = self.entropy_terms[b];
            if ta.mean.partial_cmp(&tb.mean) != Some(std::cmp::Ordering::Greater) {
                return false;
            }
            let threshold = c0 + self.config.c1 * (ta.ln_ln_n + tb.ln_ln_n);
            if self.glrs[b] < threshold {
                return false;
            }
            // The terms' magnitudes bound their rounding: n ln n of the pooled
            // count for the integer path, |H| for the other.
            let pooled = LogTables::get().x_ln_x(ta.n + tb.n);
            if self.glrs[b] < threshold + 1e-12 * (1.0 + ta.h.abs() + tb.h.abs() + pooled) * 4.0 {
                return false;
            }
        }
        true
    }

    fn stopping(&self) -> bool {
        let a = self.empirical_best();
        let na = self.weight(a);
        let Some(ra) = self.radius(a) else { return false };
        let x = self.mean(a) - ra / na;
        let ln_a = (1.0 + na.ln()).ln();
        let th = &self.config.thresholds;
        for b in 0..self.config.k {
            if b == a {
                continue;
            }
            let nb = self.weight(b);
            let Some(rb) = self.radius(b) else { return false };
            let y = self.mean(b) + rb / nb;
            if x.partial_cmp(&y) != Some(std::cmp::Ordering::Greater) {
                return false;
            }
            // One entry: a constant threshold; a table: indexed by the larger batch index.
            let j = self.arms[a].batches.max(self.arms[b].batches) as usize;
            let c0 = if th.len() == 1 {
                th[0]
            } else {
                match th.get(j.max(1) - 1) {
                    Some(&c) => c,
                    None => return false,
                }
            };
            let c = c0 + self.config.c1 * (ln_a + (1.0 + nb.ln()).ln());
            if glr_cost(x.clamp(0.0, 1.0), na, y.clamp(0.0, 1.0), nb) < c {
                return false;
            }
        }
        true
    }

    /// The log-MGF of one batch's noise (in reward units).
    fn noise_mgf(&self) -> NoiseMgf {
        match (self.lattice, self.config.noise) {
            (Some(lat), _) => match lat.kind() {
                SecureKind::Laplace { t } => NoiseMgf::Lattice { t: t as f64, g: lat.step() },
                _ => NoiseMgf::Zero,
            },
            (None, NoiseSpec::Laplace { scale }) => NoiseMgf::Laplace { b: scale },
            _ => NoiseMgf::Zero,
        }
    }

    /// An arm's statistic as the Chernoff rule reads it: all its released
    /// batches (their rewards, their noise draws), or with `forget` the
    /// last batch and its one draw.
    fn released_stat(&self, a: usize) -> Released {
        let s = &self.arms[a];
        if self.config.forget {
            Released { mean: self.mean(a), n: s.last_len as f64, batches: 1.0 }
        } else {
            Released { mean: self.mean(a), n: s.released as f64, batches: f64::from(s.batches) }
        }
    }

    /// The Chernoff stopping rule ([`BaiStop::Chernoff`]) after a release
    /// of `released`: per pair, a cheap upper bound first (D <= n d_{s_max},
    /// so n_a d(m_a, z) + n_b d(m_b, z) at the weighted mean z bounds W from
    /// above), then the certificate of [`pair_at_least`]. The verdicts are
    /// kept while neither arm of a pair releases (they are functions of the
    /// released values).
    fn chernoff_stopping(&mut self, released: usize) -> bool {
        let a = self.empirical_best();
        let k = self.config.k;
        if self.verdict_leader != Some(a) || released == a || self.verdicts.len() != k {
            self.verdicts = vec![None; k];
        } else {
            self.verdicts[released] = None;
        }
        self.verdict_leader = Some(a);
        if self.verdicts.contains(&Some(false)) {
            return false;
        }
        let noise = self.noise_mgf();
        let cap = noise.cap();
        let div = cap.is_finite().then_some(cap);
        let ra = self.released_stat(a);
        for b in 0..k {
            if b == a || self.verdicts[b].is_some() {
                continue;
            }
            let rb = self.released_stat(b);
            let s = (self.arms[a].batches + self.arms[b].batches) as usize;
            let pass = match self.config.thresholds.get(s.max(2) - 2) {
                None => false,
                Some(&c) => {
                    // A margin for the rounding of the computed exponents.
                    let c = c + 1e-9 * (1.0 + c);
                    let z = (ra.n * ra.mean + rb.n * rb.mean) / (ra.n + rb.n);
                    let upper = ra.n * crate::policy::phased_mab::d_eps(ra.mean, z, div)
                        + rb.n * crate::policy::phased_mab::d_eps(rb.mean, z, div);
                    ra.mean > rb.mean && upper >= c && pair_at_least(ra, rb, &noise, c, CERTIFICATE_BUDGET)
                }
            };
            self.verdicts[b] = Some(pass);
            if !pass {
                return false;
            }
        }
        true
    }

    /// Draws future noise and coin flips from `seeds` (the fork of a learner).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("bai");
        self.entropy = EntropyCell::default();
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// A saved engine, checked for consistency (a corrupted or hand-made
    /// state is refused, never run).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let e: Self = crate::state::decode(bytes)?;
        let bad = |what: &str| Err(Error::Decode(format!("inconsistent BAI state: {what}")));
        let k = e.config.k;
        if e.arms.len() != k || e.tie_rank.len() != k || !(2..=MAX_ARMS).contains(&k) {
            return bad("arm count");
        }
        let mut ranks = e.tie_rank.clone();
        ranks.sort_unstable();
        if ranks.iter().enumerate().any(|(i, &r)| r as usize != i) {
            return bad("tie order");
        }
        if e.leader >= k || e.challenger >= k {
            return bad("leader or challenger");
        }
        let (mut sel, mut obs) = (0u64, 0u64);
        for s in &e.arms {
            if s.released > s.observed
                || s.batch_end <= s.observed
                || !s.released_sum.is_finite()
                || !s.last_sum.is_finite()
            {
                return bad("an arm's counts or sums");
            }
            if (s.batches == 0) != (s.released == 0) || s.last_len > s.released {
                return bad("an arm's batches");
            }
            sel = sel.saturating_add(s.selected);
            obs = obs.saturating_add(s.observed);
        }
        if sel != e.t || obs != e.observed || e.observed > e.config.max_samples {
            return bad("totals");
        }
        let fresh = Bai::new(e.config.clone(), &SeedSequence::from_seed(0))?;
        if fresh.lattice != e.lattice {
            return bad("noise");
        }
        let mut e = e;
        e.lead_prob = 0.5;
        if e.config.rule == BaiRule::ChernoffIds && e.ready() && e.leader != e.challenger {
            e.update_lead_prob();
        }
        Ok(e)
    }
}

/// Per replicate: stopping time (rewards observed), recommended arm and
/// whether the rule stopped within `max_samples`.
#[derive(Clone, Debug, Default)]
pub struct BaiRuns {
    pub stopping_times: Vec<u64>,
    pub recommendations: Vec<i64>,
    pub stopped: Vec<bool>,
}

/// The Bernoulli rewards of one simulated replicate: arm a's n-th reward
/// is 1{u < mu_a} for the next uniform u of the replicate's stream.
pub struct BernoulliRewards {
    means: Vec<f64>,
    rng: SimulationRng,
}

impl BernoulliRewards {
    /// Replicate `index` of root `seed` (the stream `simulate` uses).
    pub fn new(means: &[f64], seed: u64, index: u64) -> Result<Self> {
        if means.iter().any(|m| !(0.0..=1.0).contains(m)) {
            return Err(Error::invalid("means", "Bernoulli means must lie in [0, 1]"));
        }
        let root = SeedSequence::from_seed(seed).child("bai_replicate", index);
        Ok(BernoulliRewards { means: means.to_vec(), rng: root.simulation_stream("env") })
    }

    #[inline]
    pub fn pull(&mut self, arm: usize) -> f64 {
        if unit_f64(&mut self.rng) < self.means[arm] {
            1.0
        } else {
            0.0
        }
    }
}

/// The engine of replicate `index` of root `seed`.
pub fn replicate_engine(config: &BaiConfig, seed: u64, index: u64) -> Result<Bai> {
    let root = SeedSequence::from_seed(seed).child("bai_replicate", index);
    Bai::new(config.clone(), &root.child("learner", 0))
}

/// Runs `reps` independent replicates (in parallel) of `config` on Bernoulli
/// arms `means` until the stopping rule fires or `max_samples` rewards.
pub fn simulate(config: &BaiConfig, means: &[f64], reps: usize, seed: u64) -> Result<BaiRuns> {
    if means.len() != config.k {
        return Err(Error::invalid("means", format!("needs k = {} means, got {}", config.k, means.len())));
    }
    if config.secure {
        return Err(Error::invalid("secure", "simulations draw seeded noise (secure=False)"));
    }
    let results: Vec<Result<(u64, i64, bool)>> = (0..reps as u64)
        .into_par_iter()
        .map(|r| {
            let mut engine = replicate_engine(config, seed, r)?;
            let mut env = BernoulliRewards::new(means, seed, r)?;
            while !engine.should_stop() && engine.samples() < config.max_samples {
                let arm = engine.select_arm()?;
                let y = env.pull(arm);
                engine.observe(arm, y)?;
            }
            let rec = engine.recommendation().map_or(-1, |a| a as i64);
            Ok((engine.samples(), rec, engine.should_stop()))
        })
        .collect();
    let mut runs = BaiRuns::default();
    for r in results {
        let (t, a, s) = r?;
        runs.stopping_times.push(t);
        runs.recommendations.push(a);
        runs.stopped.push(s);
    }
    Ok(runs)
}

/// For audits: `count` independent engines (seeds (`seed`, run)) whose
/// i-th observation is `rewards[i]` whatever arm they chose; per run, the
/// released sum of the batch that holds observation `round` (NaN when that
/// batch does not end within the rewards given).
pub fn audit_runs(config: &BaiConfig, rewards: &[f64], round: usize, count: usize, seed: u64) -> Result<Vec<f64>> {
    if round >= rewards.len() {
        return Err(Error::invalid("round", format!("must be < {} (the rewards given), got {round}", rewards.len())));
    }
    let root = SeedSequence::from_seed(seed);
    (0..count as u64)
        .into_par_iter()
        .map(|r| {
            let mut e = Bai::new(config.clone(), &root.child("audit", r))?;
            let mut target: Option<(usize, u32)> = None;
            for (i, &y) in rewards.iter().enumerate() {
                let a = e.select_arm()?;
                e.observe(a, y)?;
                if i == round {
                    // The batch holding this observation is the arm's next release
                    // (or the one just made, when this observation closed it).
                    let s = &e.arms[a];
                    target = Some((a, if s.released == s.observed { s.batches } else { s.batches + 1 }));
                }
                if let Some((ta, tb)) = target {
                    if e.arms[ta].batches == tb {
                        return Ok(e.arms[ta].last_sum);
                    }
                }
            }
            Ok(f64::NAN)
        })
        .collect()
}

/// Resolve the noise of released reward sums: none, floating-point Laplace,
/// or lattice Laplace with its lattice's scale-up factor. A lattice sum of up
/// to `cap` rewards must stay exact in a double (`cap * 2^exponent <= 2^52`);
/// `cap_name` names the argument that sets `cap` in the error, `what` the
/// releases in the error for a noise of another law.
pub(crate) fn laplace_sum_noise(
    spec: NoiseSpec,
    cap: u64,
    cap_name: &'static str,
    what: &str,
) -> Result<(Option<SecureNoise>, f64)> {
    spec.validate(&[1])?;
    match spec {
        NoiseSpec::Zero | NoiseSpec::Laplace { .. } => Ok((None, 1.0)),
        NoiseSpec::Lattice(s) if matches!(s.kind(), SecureKind::Laplace { .. }) => {
            let up = 2f64.powi(s.exponent());
            if (cap as f64) * up > 2f64.powi(52) {
                return Err(Error::invalid(
                    cap_name,
                    format!("{cap_name} * 2^{} exceeds 2^52: the lattice sums would not stay exact", s.exponent()),
                ));
            }
            Ok((Some(s), up))
        }
        _ => Err(Error::invalid("noise", format!("{what} take Laplace noise, got {spec:?}"))),
    }
}

/// One draw of the noise resolved by [`laplace_sum_noise`]: a discrete
/// Laplace count of lattice steps (`lattice`), a floating-point Laplace
/// draw, or 0 when the sums are released without noise.
pub(crate) fn laplace_sum_draw(rng: &mut dyn RngCore, lattice: Option<SecureNoise>, spec: NoiseSpec) -> f64 {
    match (lattice, spec) {
        (Some(lat), _) => match lat.kind() {
            SecureKind::Laplace { t } => discrete_laplace(rng, t) as f64,
            _ => 0.0,
        },
        (None, NoiseSpec::Laplace { scale }) => laplace(rng, scale),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(noise: NoiseSpec, radii: Vec<f64>) -> BaiConfig {
        BaiConfig {
            k: 3,
            rule: BaiRule::TopTwo { divergence_epsilon: None },
            beta: 0.5,
            first: 1,
            ratio: 1.0,
            forget: false,
            noise,
            secure: false,
            thresholds: vec![5.0],
            c1: 3.0,
            radii,
            max_samples: 1_000_000,
            stop: BaiStop::Shifted,
            local: None,
        }
    }

    #[test]
    fn randomised_response_flips_with_the_exact_probability() {
        // P(flip) = num / 2^62 = 1 / (1 + e) rounded up to the lattice 2^-62.
        let mut rng = SeedSequence::from_seed(3).stream("rr");
        let n: u32 = 200_000;
        let num = 1_240_273_392_707_995_214u64; // ceil(2^62 / (1 + e))
        let flips = (0..n).filter(|_| dyadic_bernoulli(&mut rng, num, 62)).count() as f64;
        let p = num as f64 / 2f64.powi(62);
        let share = flips / f64::from(n);
        let sd = (p * (1.0 - p) / f64::from(n)).sqrt();
        assert!((share - p).abs() < 5.0 * sd, "{share} vs {p}");
        assert!((p - 1.0 / (1.0 + 1f64.exp())).abs() < 1e-15);
        // The extremes: a flip probability 2^-62 almost never flips, 1/2 half the time.
        assert!((0..1000).all(|_| !dyadic_bernoulli(&mut rng, 1, 62)));
        let halves = (0..n).filter(|_| dyadic_bernoulli(&mut rng, 1 << 61, 62)).count() as f64 / f64::from(n);
        assert!((halves - 0.5).abs() < 5.0 * (0.25 / f64::from(n)).sqrt());
    }

    #[test]
    fn log_tables_are_bit_equal_to_the_direct_logarithms() {
        let t = LogTables::get();
        for k in [1u64, 2, 3, 1000, 65_537, (LOG_TABLE_LEN as u64) - 1, LOG_TABLE_LEN as u64, 1 << 40] {
            let x = k as f64;
            assert_eq!(t.ln(k).to_bits(), x.ln().to_bits());
            assert_eq!(t.ln_ln(k).to_bits(), (1.0 + x.ln()).ln().to_bits());
            assert_eq!(t.x_ln_x(k).to_bits(), (x * x.ln()).to_bits());
        }
        assert_eq!(t.x_ln_x(0).to_bits(), 0f64.to_bits());
    }

    #[test]
    fn glr_of_integer_sums_is_the_kl_glr() {
        // Bernoulli rewards: the counts' k ln k terms give sum n kl(m, z) at the pooled mean.
        let mut e = Bai::new(config(NoiseSpec::Zero, vec![]), &SeedSequence::from_seed(5)).unwrap();
        let mut env = BernoulliRewards::new(&[0.8, 0.5, 0.3], 5, 0).unwrap();
        for _ in 0..3000 {
            let a = e.select_arm().unwrap();
            e.observe(a, env.pull(a)).unwrap();
            if e.should_stop() {
                break;
            }
        }
        assert!(e.entropy_terms.iter().all(|t| t.ones.is_some()));
        let l = e.noiseless_best();
        for b in (0..3).filter(|&b| b != l) {
            let (x, na, y, nb) = (e.mean(l), e.weight(l), e.mean(b), e.weight(b));
            let direct = glr_cost(x, na, y, nb);
            let pooled = e.pooled_glr(LogTables::get(), l, b);
            assert!((pooled - direct).abs() <= 1e-9 * (1.0 + direct), "{pooled} vs {direct}");
        }
        // A fractional sum takes the logarithms of the means, with the same value.
        let mut f = Bai::new(config(NoiseSpec::Zero, vec![]), &SeedSequence::from_seed(5)).unwrap();
        for y in [0.25, 0.5, 1.0, 0.75, 0.125, 0.5] {
            let a = f.select_arm().unwrap();
            f.observe(a, y).unwrap();
        }
        assert!(f.entropy_terms.iter().any(|t| t.ones.is_none()));
    }

    #[test]
    fn non_private_identifies_an_easy_instance() {
        let runs = simulate(&config(NoiseSpec::Zero, vec![]), &[0.9, 0.5, 0.1], 50, 7).unwrap();
        assert!(runs.stopped.iter().all(|&s| s));
        assert!(runs.recommendations.iter().all(|&a| a == 0));
        assert!(runs.stopping_times.iter().all(|&t| t > 3 && t < 2000));
    }

    #[test]
    fn private_identifies_and_is_reproducible() {
        let mut c = config(NoiseSpec::Laplace { scale: 1.0 }, vec![10.0, 14.0, 17.0, 19.0]);
        c.rule = BaiRule::TopTwo { divergence_epsilon: Some(1.0) };
        c.first = 4;
        c.ratio = 1.5;
        let a = simulate(&c, &[0.9, 0.5, 0.1], 20, 3).unwrap();
        let b = simulate(&c, &[0.9, 0.5, 0.1], 20, 3).unwrap();
        assert_eq!(a.stopping_times, b.stopping_times);
        assert!(a.recommendations.iter().all(|&r| r == 0));
    }

    #[test]
    fn hostile_input_is_refused() {
        let mut e = Bai::new(config(NoiseSpec::Zero, vec![]), &SeedSequence::from_seed(1)).unwrap();
        assert!(e.observe(3, 1.0).is_err());
        assert!(e.observe(0, f64::NAN).is_err());
        assert!(e.observe(0, 1.5).is_err());
        let mut c = config(NoiseSpec::Zero, vec![]);
        c.beta = 1.0;
        assert!(Bai::new(c, &SeedSequence::from_seed(1)).is_err());
        let mut c = config(NoiseSpec::Laplace { scale: 1.0 }, vec![]);
        c.k = 2;
        assert!(Bai::new(c, &SeedSequence::from_seed(1)).is_err());
    }

    #[test]
    fn checkpoint_round_trip_and_corruption() {
        let mut e = Bai::new(config(NoiseSpec::Zero, vec![]), &SeedSequence::from_seed(1)).unwrap();
        let mut env = BernoulliRewards::new(&[0.9, 0.5, 0.1], 1, 0).unwrap();
        for _ in 0..20 {
            let a = e.select_arm().unwrap();
            e.observe(a, env.pull(a)).unwrap();
        }
        let bytes = e.to_bytes();
        let mut f = Bai::from_bytes(&bytes).unwrap();
        for _ in 0..20 {
            let a = e.select_arm().unwrap();
            assert_eq!(a, f.select_arm().unwrap());
            let y = env.pull(a);
            e.observe(a, y).unwrap();
            f.observe(a, y).unwrap();
        }
        assert!(Bai::from_bytes(&bytes[..bytes.len() / 2]).is_err());
        let mut g = e.clone();
        g.t += 1;
        assert!(Bai::from_bytes(&g.to_bytes()).is_err());
    }
}
