//! K-armed stochastic bandits: UCB1, Thompson sampling and their private
//! versions of Mishra & Thakurta 2015 (Private UCB, Alg. 1 with Lemma 5;
//! Private Thompson sampling, Alg. 2 with Lemma 9; App. D.1).
//!
//! An engine keeps, per arm, the number of pulls n_a (a function of the
//! engine's own past choices only) and the reward sum, either exact
//! ([`MabStatistics::Exact`], non-private) or released by one tree counter
//! per arm over that arm's rewards ([`MabStatistics::Tree`], App. A): the
//! index of a private engine reads only the released sums.
//!
//! Every constant (node scale, Lemma 5 bound, batch sizes and noise of the
//! gap estimation) arrives from `dpbandits.privacy.mishra_thakurta` as a
//! plain number.

use rand::Rng;
use rand_distr::{Beta, Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::Learner;
use crate::counter::tree::TreeCounter;
use crate::counter::{FactorSpec, FactorizationCounter};
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, try_filled, try_with_capacity, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::noise::lattice::MAX_EXACT_STEPS;
use crate::noise::{NoiseSpec, SecureKind};
use crate::rng::{SeedSequence, StreamRng};

/// What to do with a reward outside the declared range [lo, hi].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RewardPolicy {
    /// Clip into [lo, hi].
    Clip,
    /// Refuse the update with an error.
    Error,
    /// Take it as it is (non-private engines only: no proof depends on it).
    Unchecked,
}

/// The declared reward range, its policy, and its width (which scales the
/// exploration terms, written for rewards in [0, 1]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewardRange {
    pub lo: f64,
    pub hi: f64,
    pub policy: RewardPolicy,
}

impl RewardRange {
    /// A reward inside [lo, hi] passes unchanged under every policy, so
    /// that case is tested inline and the rest is a call: the error
    /// messages' formatting would keep the whole function from being
    /// inlined into the K-armed round.
    #[inline]
    pub(crate) fn enforce(&self, y: f64) -> Result<f64> {
        if self.lo <= y && y <= self.hi {
            Ok(y)
        } else {
            self.enforce_outside(y)
        }
    }

    /// [`RewardRange::enforce`] for a reward outside [lo, hi] or NaN.
    #[cold]
    #[inline(never)]
    fn enforce_outside(&self, y: f64) -> Result<f64> {
        if !y.is_finite() {
            return Err(Error::invalid("reward", format!("must be finite, got {y}")));
        }
        match self.policy {
            RewardPolicy::Unchecked => Ok(y),
            RewardPolicy::Clip => Ok(y.clamp(self.lo, self.hi)),
            RewardPolicy::Error => {
                if y < self.lo || y > self.hi {
                    Err(Error::invalid(
                        "reward",
                        format!("{y} lies outside the declared reward range [{}, {}]", self.lo, self.hi),
                    ))
                } else {
                    Ok(y)
                }
            }
        }
    }

    fn width(&self) -> f64 {
        self.hi - self.lo
    }
}

/// Where the per-arm reward sums come from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum MabStatistics {
    /// Exact sums (non-private).
    Exact,
    /// One tree counter per arm over that arm's rewards (leaf j = the
    /// arm's j-th reward), node noise `noise` (Mishra & Thakurta App. A).
    Tree { noise: NoiseSpec },
    /// One counter per arm of the factorization `factor` (the smooth
    /// binary mechanism for Laplace noise), noise `noise` as the privacy
    /// layer set it for that counter (appended: older states decode).
    Factorized { noise: NoiseSpec, factor: FactorSpec },
}

/// The index played each round.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum MabIndex {
    /// mean + w sqrt(2 ln t / n_a) + `noise_bound` / n_a (UCB1 with
    /// `noise_bound` = 0; Mishra & Thakurta Alg. 1 with the Lemma 5 bound).
    Ucb { noise_bound: f64 },
    /// App. D.1: sqrt(max(r_a, 0) ln t) / n_a + w ln t / n_a on the
    /// (released) sum r_a of rewards shifted to [0, w].
    Empirical,
    /// Beta(1 + s_a, 1 + n_a - s_a) on binarized rewards (Agrawal & Goyal
    /// 2012), s_a clamped to [0, n_a].
    ThompsonBeta,
    /// N(S_a / (n_a + 1), w^2 / (n_a + 1)) (Agrawal & Goyal 2013).
    ThompsonGaussian,
}

/// Gap estimation and random pulling before Thompson sampling (Mishra &
/// Thakurta Alg. 2). Batch i (from 0) pulls every arm `batch_sizes[i]`
/// times round-robin and releases each arm's batch mean plus
/// the noise `batch_noise[i]` on its sum over m_i; the phase stops after the first batch whose
/// two largest released means differ by more than `gaps[i]`, after which
/// every arm is pulled `random_pulls[i]` times (random-pulling phase), and
/// Thompson sampling takes over. When the batches run out the phase ends
/// with the last batch's entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    pub gaps: Vec<f64>,
    pub batch_sizes: Vec<u64>,
    pub random_pulls: Vec<u64>,
    /// The noise on batch i's released *sum* of m_i rewards, as the privacy
    /// layer computed it: exact discrete Laplace on a lattice (rewards
    /// rounded to it first) or the floating-point opt-in, `Zero` for a
    /// non-private batch. The mean is the released sum / m_i.
    pub batch_noise: Vec<NoiseSpec>,
}

impl Phases {
    /// The noise on batch i's sum of m_i rewards.
    fn sum_noise(&self, i: usize) -> Result<NoiseSpec> {
        let spec = self.batch_noise[i];
        spec.validate(&[])?;
        match spec {
            NoiseSpec::Zero | NoiseSpec::Laplace { .. } => Ok(spec),
            NoiseSpec::Lattice(s) if matches!(s.kind(), SecureKind::Laplace { .. } | SecureKind::Zero) => Ok(spec),
            _ => Err(Error::invalid("phases", "batch noise must be Laplace (exact on a lattice or floating point)")),
        }
    }
}

/// Everything a [`Mab`] engine needs, as plain numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MabConfig {
    pub k: usize,
    pub horizon: u64,
    pub statistics: MabStatistics,
    pub index: MabIndex,
    pub rewards: RewardRange,
    pub phases: Option<Phases>,
}

/// Where an engine with [`Phases`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Phase {
    /// Batch `batch`, `done` pulls of it made so far.
    Gap { batch: usize, done: u64 },
    /// Random pulling after stopping at batch `batch`: `done` pulls made.
    Random { batch: usize, done: u64 },
    /// Index-driven play.
    Index,
}

/// Per-arm reward sums.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Sums {
    Exact(Vec<f64>),
    Tree(Vec<TreeCounter>),
    Counters(Vec<FactorizationCounter>),
}

/// The K-armed engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Mab {
    config: MabConfig,
    sums: Sums,
    /// Pulls counted by the index statistics (excludes gap-estimation pulls).
    pulls: Vec<u64>,
    /// Completed rounds.
    t: u64,
    phase: Phase,
    /// Exact sums of the current gap-estimation batch (never read by a
    /// decision; only their noisy release at the end of the batch is).
    batch_sums: Vec<f64>,
    /// Released noisy batch means of every finished batch.
    released_means: Vec<Vec<f64>>,
    /// Learner randomness: posterior draws and binarization (ChaCha8,
    /// never the environment's).
    rng: StreamRng,
    /// The gap-estimation phase's privacy noise (seeded or, in secure mode,
    /// the operating system).
    noise: NoiseRng,
    /// Retired arms: never selected again (`mab_arms.rs`).
    retired: Vec<bool>,
    /// The arms the engine was built with: arm a < `initial_k` draws its
    /// statistics' noise from the root's `"mab/arm"` child a, an added arm
    /// from the sampling generator's key (see [`Mab::arm_seeds`]).
    initial_k: usize,
    /// UCB rule: per arm, (released sum + noise bound) / n_a (+inf for an
    /// unpulled arm) ...
    #[serde(skip)]
    ucb_base: Vec<f64>,
    /// ... and 1 / sqrt(n_a) (0 unpulled), so that a round's index is one
    /// multiply-add per arm: base_a + w sqrt(2 ln t) / sqrt(n_a). Two
    /// arrays rather than pairs, so that the scan loads whole registers of
    /// each. Derived from the state, rebuilt when missing (not serialized).
    #[serde(skip)]
    ucb_width: Vec<f64>,
    /// The UCB rule's c for the round after the one last selected, and
    /// that round's `t` (see [`Mab::select_ucb`]); derived, not serialized.
    #[serde(skip)]
    next_c: Option<(u64, f64)>,
}

impl Mab {
    /// A fresh engine. Arm a's tree draws from `seeds.child("mab/arm", a)`
    /// ([`Mab::arm_seeds`]); sampling, binarization and gap-estimation noise
    /// from the `"mab/sampling"` stream (ChaCha8).
    pub fn new(config: MabConfig, seeds: &SeedSequence) -> Result<Self> {
        let k = config.k;
        if k == 0 {
            return Err(Error::invalid("k", "must be >= 1"));
        }
        if config.horizon == 0 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        check_finite("reward_range", &[config.rewards.lo, config.rewards.hi])?;
        if config.rewards.hi <= config.rewards.lo {
            return Err(Error::invalid("reward_range", "needs lo < hi"));
        }
        if let MabIndex::Ucb { noise_bound } = config.index {
            if !(noise_bound.is_finite() && noise_bound >= 0.0) {
                return Err(Error::invalid("noise_bound", format!("must be finite and >= 0, got {noise_bound}")));
            }
        }
        if let Some(p) = &config.phases {
            let n = p.gaps.len();
            if n == 0 || p.batch_sizes.len() != n || p.batch_noise.len() != n || p.random_pulls.len() != n {
                return Err(Error::invalid("phases", "needs equally long, non-empty schedules"));
            }
            check_finite("phases", &p.gaps)?;
            if p.batch_sizes.contains(&0) {
                return Err(Error::invalid("phases", "batch sizes must be >= 1"));
            }
            for i in 0..n {
                p.sum_noise(i)?;
            }
        }
        // Every buffer sized by k is allocated fallibly: an impossible k is
        // an error naming `k`, never an abort.
        let sampling = seeds.stream("mab/sampling");
        let sums = match config.statistics {
            MabStatistics::Exact => Sums::Exact(try_filled("k", k, 0.0)?),
            MabStatistics::Tree { noise } => {
                let mut trees = try_with_capacity("k", k)?;
                for a in 0..k {
                    let seeds = Mab::arm_seeds(seeds, &sampling, k, a);
                    trees.push(TreeCounter::new(&[], config.horizon, noise, false, &seeds)?);
                }
                Sums::Tree(trees)
            }
            MabStatistics::Factorized { noise, factor } => {
                let mut counters = try_with_capacity("k", k)?;
                for a in 0..k {
                    let seeds = Mab::arm_seeds(seeds, &sampling, k, a);
                    counters.push(FactorizationCounter::new(
                        &[],
                        config.horizon,
                        noise,
                        factor.factorization(),
                        &seeds,
                    )?);
                }
                Sums::Counters(counters)
            }
        };
        let phase = if config.phases.is_some() { Phase::Gap { batch: 0, done: 0 } } else { Phase::Index };
        Ok(Mab {
            sums,
            pulls: try_filled("k", k, 0)?,
            t: 0,
            phase,
            batch_sums: try_filled("k", k, 0.0)?,
            released_means: Vec::new(),
            rng: sampling,
            noise: NoiseRng::seeded(seeds.stream("mab/noise")),
            retired: try_filled("k", k, false)?,
            initial_k: k,
            ucb_base: Vec::new(),
            ucb_width: Vec::new(),
            next_c: None,
            config,
        })
    }

    /// The configuration the engine was built with.
    pub fn config(&self) -> &MabConfig {
        &self.config
    }

    /// Completed rounds.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Pulls of each arm counted by the index statistics.
    pub fn pulls(&self) -> &[u64] {
        &self.pulls
    }

    /// The current phase.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The released noisy batch means of the gap estimation, one row per batch.
    pub fn released_batch_means(&self) -> &[Vec<f64>] {
        &self.released_means
    }

    /// The reward sum of each arm the index reads: exact for a
    /// non-private engine, the tree release for a private one.
    pub fn sums(&self) -> Vec<f64> {
        match &self.sums {
            Sums::Exact(s) => s.clone(),
            Sums::Tree(trees) => trees.iter().map(|tr| tr.release()[0]).collect(),
            Sums::Counters(cs) => cs.iter().map(|c| c.release()[0]).collect(),
        }
    }

    #[inline]
    fn sum_of(&self, a: usize) -> f64 {
        match &self.sums {
            Sums::Exact(s) => s[a],
            Sums::Tree(trees) => trees[a].release()[0],
            Sums::Counters(cs) => cs[a].release()[0],
        }
    }

    /// The index of every arm for the coming round (+inf for unpulled arms
    /// of a UCB rule; a fresh posterior draw for Thompson rules).
    pub fn indices(&mut self) -> Vec<f64> {
        let k = self.config.k;
        let w = self.config.rewards.width();
        let lo = self.config.rewards.lo;
        let ln_t = ((self.t + 1) as f64).ln();
        let mut out = Vec::with_capacity(k);
        for a in 0..k {
            if self.retired[a] {
                out.push(f64::NEG_INFINITY);
                continue;
            }
            let n = self.pulls[a] as f64;
            let s = self.sum_of(a);
            let v = match self.config.index {
                MabIndex::Ucb { noise_bound } => {
                    if self.pulls[a] == 0 {
                        f64::INFINITY
                    } else {
                        s / n + w * (2.0 * ln_t / n).sqrt() + noise_bound / n
                    }
                }
                MabIndex::Empirical => {
                    if self.pulls[a] == 0 {
                        f64::INFINITY
                    } else {
                        let r = (s - lo * n).max(0.0);
                        s / n + (r * ln_t).sqrt() / n + w * ln_t / n
                    }
                }
                MabIndex::ThompsonBeta => {
                    // Sums of binarized rewards in {0, 1} (see `observe`).
                    let succ = s.clamp(0.0, n);
                    Beta::new(1.0 + succ, 1.0 + n - succ).expect("positive parameters").sample(&mut self.rng)
                }
                MabIndex::ThompsonGaussian => {
                    let z: f64 = self.rng.sample(StandardNormal);
                    s / (n + 1.0) + w * z / (n + 1.0).sqrt()
                }
            };
            out.push(v);
        }
        out
    }

    #[inline]
    fn check_round(&self) -> Result<()> {
        if self.t >= self.config.horizon {
            return Err(self.horizon_reached());
        }
        Ok(())
    }

    /// The error of a round past the horizon (out of line: the formatting
    /// kept `check_round`, twice a round, from being inlined).
    #[cold]
    #[inline(never)]
    fn horizon_reached(&self) -> Error {
        Error::State(format!("the horizon of {} rounds is reached", self.config.horizon))
    }

    /// The cached (base, 1 / sqrt(n)) of arm `a` under the UCB rule.
    #[inline]
    fn ucb_entry(&self, a: usize, noise_bound: f64) -> (f64, f64) {
        if self.retired[a] {
            return (f64::NEG_INFINITY, 0.0);
        }
        ucb_terms(self.sum_of(a), self.pulls[a], noise_bound)
    }

    /// argmax over arms of the UCB index (ties to the lowest arm), from the
    /// per-arm cache: one multiply-add per arm and one square root a round.
    ///
    /// The next round's c is computed here, after the scan, and used then
    /// (the same value: it depends on the round number alone). Why: the
    /// logarithm then runs beside this round's update instead of between
    /// the update and the next scan, on the round's chain of dependent
    /// operations.
    #[allow(clippy::inline_always)] // into the loop's K-armed instantiation with `select_arm` and the argmax
    #[inline(always)]
    fn select_ucb(&mut self, noise_bound: f64) -> usize {
        let k = self.config.k;
        if self.ucb_base.len() != k || self.ucb_width.len() != k {
            let (base, width) = (0..k).map(|a| self.ucb_entry(a, noise_bound)).unzip();
            (self.ucb_base, self.ucb_width) = (base, width);
        }
        let c = match self.next_c {
            Some((t, c)) if t == self.t => c,
            _ => self.ucb_c(self.t),
        };
        let arm = first_ucb_argmax(&self.ucb_base, &self.ucb_width, c);
        self.next_c = Some((self.t + 1, self.ucb_c(self.t + 1)));
        arm
    }

    /// The UCB rule's c = w sqrt(2 ln t') for the round after `t`
    /// completed rounds (t' = t + 1).
    #[inline]
    fn ucb_c(&self, t: u64) -> f64 {
        self.config.rewards.width() * (2.0 * (t.saturating_add(1) as f64).ln()).sqrt()
    }

    /// The arm to pull this round.
    #[allow(clippy::inline_always)] // into the loop's K-armed instantiation (sim::run_shared_episode)
    #[inline(always)]
    pub fn select_arm(&mut self) -> Result<usize> {
        self.check_round()?;
        let k = self.config.k;
        match self.phase {
            Phase::Gap { done, .. } | Phase::Random { done, .. } => Ok((done % k as u64) as usize),
            Phase::Index => {
                if let MabIndex::Ucb { noise_bound } = self.config.index {
                    return Ok(self.select_ucb(noise_bound));
                }
                Ok(super::first_argmax(&self.indices()))
            }
        }
    }

    /// Records the reward of pulling `arm` (after enforcing the range).
    #[allow(clippy::inline_always)] // into the loop's K-armed instantiation (sim::run_shared_episode)
    #[inline(always)]
    pub fn observe(&mut self, arm: usize, reward: f64) -> Result<()> {
        let k = self.config.k;
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        self.check_round()?;
        let y = self.config.rewards.enforce(reward)?;
        match self.phase {
            Phase::Index => self.record(arm, y)?,
            _ => self.observe_in_phase(arm, y)?,
        }
        self.t += 1;
        Ok(())
    }

    /// [`Mab::observe`] during gap estimation or random pulling (kept out
    /// of the index phase's path, which runs every round).
    #[inline(never)]
    fn observe_in_phase(&mut self, arm: usize, y: f64) -> Result<()> {
        let k = self.config.k;
        match self.phase {
            Phase::Gap { batch, done } => {
                let expected = (done % k as u64) as usize;
                if arm != expected {
                    return Err(Error::invalid(
                        "arm",
                        format!("the gap-estimation phase pulls arm {expected} this round, got {arm}"),
                    ));
                }
                let noise = self.config.phases.as_ref().expect("phases exist").sum_noise(batch)?;
                let mut v = [y];
                noise.round_input("reward", &mut v, MAX_EXACT_STEPS / 4.0 / self.config.horizon as f64)?;
                self.batch_sums[arm] += v[0];
                self.end_gap_pull(batch, done + 1)?;
            }
            Phase::Random { batch, done } => {
                let expected = (done % k as u64) as usize;
                if arm != expected {
                    return Err(Error::invalid(
                        "arm",
                        format!("the random-pulling phase pulls arm {expected} this round, got {arm}"),
                    ));
                }
                self.record(arm, y)?;
                let phases = self.config.phases.as_ref().expect("phases exist");
                let done = done + 1;
                self.phase = if done >= phases.random_pulls[batch] * k as u64 {
                    Phase::Index
                } else {
                    Phase::Random { batch, done }
                };
            }
            Phase::Index => self.record(arm, y)?,
        }
        Ok(())
    }

    /// Adds a reward to the index statistics of `arm`.
    #[allow(clippy::inline_always)] // inlined into the index phase's path (observe + record, every round)
    #[inline(always)]
    fn record(&mut self, arm: usize, y: f64) -> Result<()> {
        let (lo, w) = (self.config.rewards.lo, self.config.rewards.width());
        let value = match self.config.index {
            // Binarization (Agrawal & Goyal 2012): a success with
            // probability (y - lo) / w, so the sums count successes.
            MabIndex::ThompsonBeta => {
                let p = ((y - lo) / w).clamp(0.0, 1.0);
                if self.rng.random::<f64>() < p {
                    1.0
                } else {
                    0.0
                }
            }
            _ => y,
        };
        // The arm's sum after the addition, as the index will read it.
        let sum = match &mut self.sums {
            Sums::Exact(s) => {
                s[arm] += value;
                s[arm]
            }
            Sums::Tree(trees) => {
                let tree = &mut trees[arm];
                tree.add_scalar(value)?;
                tree.release()[0]
            }
            Sums::Counters(cs) => {
                let counter = &mut cs[arm];
                counter.add(&[value])?;
                counter.release()[0]
            }
        };
        let pulls = &mut self.pulls[arm];
        *pulls += 1;
        let n = *pulls;
        if let (MabIndex::Ucb { noise_bound }, Some(base), Some(width)) =
            (self.config.index, self.ucb_base.get_mut(arm), self.ucb_width.get_mut(arm))
        {
            (*base, *width) = ucb_terms(sum, n, noise_bound);
        }
        Ok(())
    }

    fn end_gap_pull(&mut self, batch: usize, done: u64) -> Result<()> {
        let k = self.config.k;
        let phases = self.config.phases.as_ref().expect("phases exist");
        let m = phases.batch_sizes[batch];
        if done < m * k as u64 {
            self.phase = Phase::Gap { batch, done };
            return Ok(());
        }
        // End of batch: release each arm's mean + Laplace(scale), once:
        // the sum + Laplace(scale m) (exact on a lattice unless floating
        // point was asked for), divided by m.
        let noise = phases.sum_noise(batch).expect("checked at construction");
        let source = self.noise.source()?;
        let means: Vec<f64> = self.batch_sums.iter().map(|s| (s + noise.sample(&mut *source)) / m as f64).collect();
        self.batch_sums.fill(0.0);
        let mut sorted = means.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        let separated = k < 2 || sorted[0] - sorted[1] > phases.gaps[batch];
        self.released_means.push(means);
        let last = batch + 1 >= phases.gaps.len();
        // Stop when separated, or when no further batch fits the horizon.
        let next_fits = !last && {
            let used = self.t + 1;
            used + phases.batch_sizes[batch + 1] * k as u64 <= self.config.horizon
        };
        self.phase = if separated || !next_fits {
            if phases.random_pulls[batch] == 0 {
                Phase::Index
            } else {
                Phase::Random { batch, done: 0 }
            }
        } else {
            Phase::Gap { batch: batch + 1, done: 0 }
        };
        Ok(())
    }

    /// The root of arm `a`'s statistics noise, for an engine whose root is
    /// `seeds` and whose sampling generator is `sampling`, built with
    /// `initial_k` arms: `seeds.child("mab/arm", a)` for an arm it was built
    /// with, [`Mab::added_arm_seeds`] for an added one. The derivation of
    /// construction and [`Mab::reseed`]; [`Mab::add_arm`] uses the second
    /// half. So an engine reseeded with a root keys every arm as an engine
    /// built from that root and given the same added arms does.
    fn arm_seeds(seeds: &SeedSequence, sampling: &StreamRng, initial_k: usize, a: usize) -> SeedSequence {
        if a < initial_k {
            seeds.child("mab/arm", a as u64)
        } else {
            Mab::added_arm_seeds(sampling, a)
        }
    }

    /// The root of added arm `a`'s statistics noise: the `"mab/added_arm"`
    /// child a of the sampling generator's key (an engine keeps its
    /// generators, not its root; the key is fixed from construction or
    /// reseeding, so the derivation is the same whenever the arm is added).
    pub(super) fn added_arm_seeds(sampling: &StreamRng, a: usize) -> SeedSequence {
        SeedSequence::from_key(sampling.get_seed()).child("mab/added_arm", a as u64)
    }

    /// The arms the engine was built with (the later ones were added).
    pub fn initial_k(&self) -> usize {
        self.initial_k
    }

    /// Draws future noise (trees, sampling, gap estimation) from `seeds`.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("mab/sampling");
        let (rng, initial_k) = (&self.rng, self.initial_k);
        match &mut self.sums {
            Sums::Tree(trees) => {
                for (a, tr) in trees.iter_mut().enumerate() {
                    tr.reseed(&Mab::arm_seeds(seeds, rng, initial_k, a));
                }
            }
            Sums::Counters(cs) => {
                for (a, c) in cs.iter_mut().enumerate() {
                    c.reseed(&Mab::arm_seeds(seeds, rng, initial_k, a));
                }
            }
            Sums::Exact(_) => {}
        }
        self.noise.reseed(seeds.stream("mab/noise"));
    }

    /// Every privacy noise draw from the operating system from now on
    /// (secure mode; before the first round).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        match &mut self.sums {
            Sums::Tree(trees) => {
                for tree in trees.iter_mut() {
                    tree.use_os_entropy()?;
                }
            }
            Sums::Counters(cs) => {
                for c in cs.iter_mut() {
                    c.use_os_entropy()?;
                }
            }
            Sums::Exact(_) => {}
        }
        self.noise.use_os_entropy()
    }

    /// Whether privacy noise comes from the operating system.
    pub fn os_entropy(&self) -> bool {
        self.noise.is_os()
    }

    /// Serialized state (tree noise and generators included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an engine written by [`Mab::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let m: Mab = crate::state::decode(bytes)?;
        // A forged state whose buffers disagree with k would index out of
        // bounds (a panic) on the next round: refused here instead.
        let k = m.config.k;
        let sums = match &m.sums {
            Sums::Exact(v) => v.len(),
            Sums::Tree(v) => v.len(),
            Sums::Counters(v) => v.len(),
        };
        // Released batch means hold the arms of the gap-estimation phase
        // (arms are added only after it).
        if sums != k
            || m.pulls.len() != k
            || m.batch_sums.len() != k
            || m.retired.len() != k
            || m.retired.iter().all(|&r| r)
            || m.initial_k == 0
            || m.initial_k > k
            || m.released_means.iter().any(|r| r.len() > k || r.len() != m.released_means[0].len())
        {
            return Err(Error::Decode("inconsistent K-armed state".into()));
        }
        m.check_state()?;
        Ok(m)
    }

    /// Every invariant a decoded state must meet for the next rounds to
    /// run as they would have: the configuration passes the constructor's
    /// checks; each arm's counter is the one it builds (noise, horizon,
    /// padding) and has counted that arm's pulls; the phase names a batch
    /// of the schedule with a position inside it; the round count is the
    /// pulls of the index statistics plus those of the gap estimation;
    /// sums and released means are finite.
    fn check_state(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Decode(format!("inconsistent K-armed state: {what}")));
        let k = self.config.k;
        // A reference engine of one arm: the constructor's checks of the
        // configuration, and the counter an arm gets (the same for every arm).
        let reference = Mab::new(MabConfig { k: 1, ..self.config.clone() }, &SeedSequence::from_seed(0))
            .map_err(|e| Error::Decode(format!("K-armed state with an invalid configuration: {e}")))?;
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        match (&self.sums, &reference.sums) {
            (Sums::Exact(s), Sums::Exact(_)) => {
                if !finite(s) {
                    return bad("a reward sum is not finite");
                }
            }
            (Sums::Tree(trees), Sums::Tree(r)) => {
                for (tree, &n) in trees.iter().zip(&self.pulls) {
                    tree.check_restored(&r[0])?;
                    if tree.t() != n || tree.os_entropy() != self.noise.is_os() {
                        return bad("an arm's tree disagrees with its pulls or entropy source");
                    }
                }
            }
            (Sums::Counters(cs), Sums::Counters(r)) => {
                for (c, &n) in cs.iter().zip(&self.pulls) {
                    c.check_restored(&r[0])?;
                    if c.t() != n || c.os_entropy() != self.noise.is_os() {
                        return bad("an arm's counter disagrees with its pulls or entropy source");
                    }
                }
            }
            _ => return bad("the reward sums are not of the configuration's kind"),
        }
        if !finite(&self.batch_sums) || !self.released_means.iter().all(|r| finite(r)) {
            return bad("a batch sum or released mean is not finite");
        }
        let index_pulls = self.pulls.iter().try_fold(0u64, |acc, &n| acc.checked_add(n));
        let Some(index_pulls) = index_pulls else { return bad("pull counts overflow") };
        let (phase_ok, gap_rounds) = match (self.phase, &self.config.phases) {
            (Phase::Index, _) => (true, None),
            (Phase::Gap { batch, done }, Some(p)) => {
                let ok = batch < p.gaps.len()
                    && done < p.batch_sizes[batch].saturating_mul(k as u64)
                    && self.released_means.len() == batch;
                (ok, Some(p.batch_sizes[..batch.min(p.gaps.len())].iter().sum::<u64>() * k as u64 + done))
            }
            (Phase::Random { batch, done }, Some(p)) => {
                let ok = batch < p.gaps.len()
                    && done < p.random_pulls[batch].saturating_mul(k as u64)
                    && self.released_means.len() == batch + 1;
                (ok, None)
            }
            (_, None) => (false, None),
        };
        if !phase_ok {
            return bad("the phase is outside the schedule");
        }
        if let Some(rounds) = gap_rounds {
            if index_pulls != 0 || rounds != self.t {
                return bad("the gap-estimation position disagrees with the round count");
            }
        }
        if index_pulls > self.t || self.t > self.config.horizon {
            return bad("the round count is out of range");
        }
        Ok(())
    }
}

/// The UCB rule's cached terms of an arm with released sum `sum` after `n`
/// pulls: ((sum + noise bound) / n, 1 / sqrt(n)); (+inf, 0) unpulled.
#[inline]
fn ucb_terms(sum: f64, n: u64, noise_bound: f64) -> (f64, f64) {
    if n == 0 {
        (f64::INFINITY, 0.0)
    } else {
        let n = n as f64;
        ((sum + noise_bound) / n, 1.0 / n.sqrt())
    }
}

/// [`super::first_argmax`] of the scores base_a + c width_a, computed where
/// they are compared (the index of the strict left-to-right scan: ties go
/// to the lowest arm). Scores are never NaN (bases are finite or +inf,
/// widths finite, c finite). Scores computed where they are compared
/// need no buffer (no store and load per arm a round, as `first_argmax`
/// over a buffer would), and a concrete loop vectorizes where one generic
/// over an iterator of scores does not.
///
/// Four running maxima, one per lane of a 256-bit register, instead of
/// one compare chain through every arm (which the compiler cannot
/// vectorize: it must keep the first maximum); then a scan for the first
/// arm reaching the maximum, computed by the same operations, so equal
/// bit for bit.
#[allow(clippy::float_cmp)] // the same operations on the same values
#[inline]
fn first_ucb_argmax(base: &[f64], width: &[f64], c: f64) -> usize {
    let n = base.len().min(width.len());
    let (base, width) = (&base[..n], &width[..n]);
    let whole = n - n % 4;
    let mut lanes = [f64::NEG_INFINITY; 4];
    for (b, w) in base[..whole].chunks_exact(4).zip(width[..whole].chunks_exact(4)) {
        for l in 0..4 {
            let s = b[l] + c * w[l];
            lanes[l] = if s > lanes[l] { s } else { lanes[l] };
        }
    }
    // `larger`, not `f64::max`: no NaN to handle, so one instruction
    // instead of `max`'s NaN-propagating sequence.
    let larger = |a: f64, b: f64| if b > a { b } else { a };
    let mut top = larger(larger(lanes[0], lanes[1]), larger(lanes[2], lanes[3]));
    for (b, w) in base[whole..].iter().zip(&width[whole..]) {
        top = larger(top, b + c * w);
    }
    base.iter().zip(width).position(|(b, w)| b + c * w == top).unwrap_or(0)
}

impl super::LearnerFactory for MabConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(Mab::new(self.clone(), seeds)?))
    }
}

impl Learner for Mab {
    fn use_os_entropy(&mut self) -> Result<()> {
        Mab::use_os_entropy(self)
    }

    #[allow(clippy::inline_always)] // into the loop's K-armed instantiation (sim::run_shared_episode)
    #[inline(always)]
    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        if set.k != self.config.k || set.d != 0 {
            return Err(Error::invalid(
                "decision_set",
                format!(
                    "this K-armed learner needs k = {} arms without features, got k = {}, d = {}",
                    self.config.k, set.k, set.d
                ),
            ));
        }
        self.select_arm()
    }

    #[allow(clippy::inline_always)] // into the loop's K-armed instantiation (sim::run_shared_episode)
    #[inline(always)]
    fn update(&mut self, set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
        if index >= set.k {
            return Err(Error::invalid("index", format!("must be < {}, got {index}", set.k)));
        }
        match feedback {
            Feedback::Reward(y) => self.observe(index, y),
            Feedback::Losses(_) => Err(Error::invalid("feedback", "K-armed learners take bandit feedback")),
        }
    }
}

#[path = "mab_arms.rs"]
mod arms;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{ArmReward, KArmedBandit, KArmedConfig};
    use crate::sim::run_episode;

    #[test]
    fn first_ucb_argmax_is_first_argmax_of_the_scores() {
        // The lane-wise argmax returns what the left-to-right strict scan
        // returns (the first maximum), on random scores with many ties,
        // unpulled arms (+inf base, 0 width) and every K from 1 to 13.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for trial in 0..20_000 {
            let k = 1 + trial % 13;
            let base: Vec<f64> = (0..k)
                .map(|_| match rng.random_range(0..6) {
                    0 => f64::INFINITY,
                    r => f64::from(rng.random_range(0..3 * r)) * 0.25,
                })
                .collect();
            let width: Vec<f64> =
                base.iter().map(|b| if b.is_infinite() { 0.0 } else { f64::from(rng.random_range(0..3)) }).collect();
            let c = f64::from(rng.random_range(0..4)) * 0.5;
            let scores: Vec<f64> = base.iter().zip(&width).map(|(b, w)| b + c * w).collect();
            assert_eq!(
                first_ucb_argmax(&base, &width, c),
                crate::policy::first_argmax(&scores),
                "{base:?} {width:?} {c}"
            );
        }
    }

    fn config(k: usize, horizon: u64, statistics: MabStatistics, index: MabIndex) -> MabConfig {
        MabConfig {
            k,
            horizon,
            statistics,
            index,
            rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
            phases: None,
        }
    }

    #[test]
    #[allow(clippy::float_cmp)] // equal noise gives bit-equal releases
    fn a_reseeded_engine_keys_its_added_arms_as_a_fresh_one_given_them() {
        // Built from root A, an arm added, reseeded with root B: the added
        // arm's tree draws what it draws in an engine built from B and
        // given the same arm (the checkpoint check of a fork's seed), and
        // not what it drew under A.
        let noise = NoiseSpec::Laplace { scale: 2.0 }.on_lattice(10).unwrap();
        let cfg = config(3, 1000, MabStatistics::Tree { noise }, MabIndex::Ucb { noise_bound: 1.0 });
        let mut engine = Mab::new(cfg.clone(), &SeedSequence::from_seed(1)).unwrap();
        for a in [0, 1, 2, 0] {
            engine.observe(a, 0.5).unwrap();
        }
        let new = engine.add_arm().unwrap();
        let mut unseeded = engine.clone();
        engine.reseed(&SeedSequence::from_seed(2));
        let mut fresh = Mab::new(cfg, &SeedSequence::from_seed(2)).unwrap();
        fresh.add_arm().unwrap();
        let mut restored = Mab::from_bytes(&engine.to_bytes()).unwrap();
        assert_eq!((restored.initial_k(), restored.config.k), (3, 4));
        for e in [&mut engine, &mut fresh, &mut unseeded, &mut restored] {
            for _ in 0..7 {
                e.observe(new, 0.5).unwrap();
            }
        }
        let sum = |e: &Mab| e.sums()[new];
        assert_eq!(sum(&engine), sum(&fresh));
        assert_eq!(sum(&engine), sum(&restored));
        assert_ne!(sum(&engine), sum(&unseeded));
    }

    #[test]
    fn zero_noise_private_ucb_is_ucb1() {
        let seeds = SeedSequence::from_seed(3);
        let n = 5000;
        let mut ucb = Mab::new(config(5, n, MabStatistics::Exact, MabIndex::Ucb { noise_bound: 0.0 }), &seeds).unwrap();
        let mut private = Mab::new(
            config(5, n, MabStatistics::Tree { noise: NoiseSpec::Zero }, MabIndex::Ucb { noise_bound: 0.0 }),
            &seeds,
        )
        .unwrap();
        let mut env = KArmedBandit::new(
            KArmedConfig { means: vec![0.9, 0.8, 0.7, 0.6, 0.5], reward: ArmReward::Bernoulli },
            &seeds,
        )
        .unwrap();
        for t in 0..n {
            let a = ucb.select_arm().unwrap();
            assert_eq!(a, private.select_arm().unwrap(), "round {t}");
            let Feedback::Reward(y) = crate::env::Environment::feedback(&mut env, a).unwrap() else { unreachable!() };
            ucb.observe(a, y).unwrap();
            private.observe(a, y).unwrap();
        }
    }

    #[test]
    fn the_c_computed_a_round_ahead_is_the_rounds_own() {
        // An engine restored every round (its cache and next c are not
        // serialized, so it computes each round's c afresh) chooses what
        // the engine carrying c from round to round chooses, and the
        // carried c equals the round's own at every round.
        let seeds = SeedSequence::from_seed(9);
        let n = 2000;
        let noise = NoiseSpec::Laplace { scale: 2.0 }.on_lattice(10).unwrap();
        let mut carried =
            Mab::new(config(6, n, MabStatistics::Tree { noise }, MabIndex::Ucb { noise_bound: 30.0 }), &seeds).unwrap();
        let mut fresh = carried.clone();
        let mut env = KArmedBandit::new(
            KArmedConfig { means: vec![0.9, 0.8, 0.7, 0.6, 0.5, 0.4], reward: ArmReward::Bernoulli },
            &seeds,
        )
        .unwrap();
        for t in 0..n {
            fresh = Mab::from_bytes(&fresh.to_bytes()).unwrap();
            assert!(fresh.next_c.is_none());
            if let Some((next_t, c)) = carried.next_c {
                assert_eq!((next_t, c.to_bits()), (t, carried.ucb_c(t).to_bits()), "round {t}");
            }
            let a = carried.select_arm().unwrap();
            assert_eq!(a, fresh.select_arm().unwrap(), "round {t}");
            let Feedback::Reward(y) = crate::env::Environment::feedback(&mut env, a).unwrap() else { unreachable!() };
            carried.observe(a, y).unwrap();
            fresh.observe(a, y).unwrap();
        }
    }

    #[test]
    fn ucb1_learns_and_horizon_is_enforced() {
        let seeds = SeedSequence::from_seed(4);
        let n = 20_000;
        let mut ucb = Mab::new(config(3, n, MabStatistics::Exact, MabIndex::Ucb { noise_bound: 0.0 }), &seeds).unwrap();
        let mut env =
            KArmedBandit::new(KArmedConfig { means: vec![0.2, 0.8, 0.5], reward: ArmReward::Bernoulli }, &seeds)
                .unwrap();
        let trace = run_episode(&mut ucb, &mut env, n, 1000, None).unwrap();
        let last = *trace.regret.last().unwrap();
        assert!(last < 0.05 * n as f64, "regret {last}");
        assert!(ucb.pulls()[1] > ucb.pulls()[0] + ucb.pulls()[2]);
        assert!(matches!(ucb.select_arm(), Err(Error::State(_))));
    }

    #[test]
    fn reward_range_is_enforced() {
        let seeds = SeedSequence::from_seed(5);
        let mut cfg = config(2, 10, MabStatistics::Exact, MabIndex::Ucb { noise_bound: 0.0 });
        let mut clip = Mab::new(cfg.clone(), &seeds).unwrap();
        clip.observe(0, 3.0).unwrap();
        clip.observe(1, -2.0).unwrap();
        assert_eq!(clip.sums(), vec![1.0, 0.0]);
        assert!(clip.observe(0, f64::NAN).is_err());
        assert!(clip.observe(2, 0.5).is_err());
        cfg.rewards.policy = RewardPolicy::Error;
        let mut strict = Mab::new(cfg.clone(), &seeds).unwrap();
        assert!(strict.observe(0, 1.5).is_err());
        assert_eq!(strict.t(), 0);
        cfg.rewards.hi = 0.0;
        assert!(Mab::new(cfg, &seeds).is_err());
        // The inline test of `enforce` (inside [lo, hi]) and its
        // out-of-line rest agree with the policies, at the edges too.
        for policy in [RewardPolicy::Clip, RewardPolicy::Error, RewardPolicy::Unchecked] {
            let range = RewardRange { lo: -1.0, hi: 2.0, policy };
            for y in [-1.0, -0.0, 0.25, 2.0] {
                assert_eq!(range.enforce(y).unwrap().to_bits(), y.to_bits(), "{policy:?} {y}");
            }
            for y in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                assert!(range.enforce(y).is_err(), "{policy:?} {y}");
            }
            let outside: [(f64, f64); 2] = [(-1.5, -1.0), (2.0 + 1e-12, 2.0)];
            for (y, clipped) in outside {
                match policy {
                    RewardPolicy::Clip => assert_eq!(range.enforce(y).unwrap().to_bits(), clipped.to_bits()),
                    RewardPolicy::Error => assert!(range.enforce(y).is_err()),
                    RewardPolicy::Unchecked => assert_eq!(range.enforce(y).unwrap().to_bits(), y.to_bits()),
                }
            }
        }
    }

    #[test]
    fn gap_estimation_runs_batches_then_random_pulls_then_sampling() {
        let seeds = SeedSequence::from_seed(6);
        let mut cfg = config(2, 10_000, MabStatistics::Tree { noise: NoiseSpec::Zero }, MabIndex::ThompsonBeta);
        cfg.phases = Some(Phases {
            gaps: vec![0.5, 0.25, 0.125],
            batch_sizes: vec![10, 40, 160],
            random_pulls: vec![3, 5, 7],
            batch_noise: vec![NoiseSpec::Zero; 3],
        });
        let mut l = Mab::new(cfg, &seeds).unwrap();
        // Arm 0 always pays 1, arm 1 pays 0.7 in batch 1: gap 0.3 > 0.25.
        let pay = |a: usize| if a == 0 { 1.0 } else { 0.7 };
        for _ in 0..20 {
            let a = l.select_arm().unwrap();
            l.observe(a, pay(a)).unwrap();
        }
        // Batch 0: 0.3 <= 0.5, not separated.
        assert_eq!(l.phase(), &Phase::Gap { batch: 1, done: 0 });
        for _ in 0..80 {
            let a = l.select_arm().unwrap();
            l.observe(a, pay(a)).unwrap();
        }
        assert_eq!(l.phase(), &Phase::Random { batch: 1, done: 0 });
        assert_eq!(l.released_batch_means().len(), 2);
        assert!(l.observe(1, 0.5).is_err(), "random pulling is round-robin");
        for _ in 0..10 {
            let a = l.select_arm().unwrap();
            l.observe(a, pay(a)).unwrap();
        }
        assert_eq!(l.phase(), &Phase::Index);
        assert_eq!(l.pulls(), &[5, 5]);
    }

    #[test]
    fn state_round_trips() {
        let seeds = SeedSequence::from_seed(7);
        let cfg =
            config(3, 100, MabStatistics::Tree { noise: NoiseSpec::Laplace { scale: 2.0 } }, MabIndex::ThompsonBeta);
        let mut l = Mab::new(cfg, &seeds).unwrap();
        for _ in 0..10 {
            let a = l.select_arm().unwrap();
            l.observe(a, 0.5).unwrap();
        }
        let mut back = Mab::from_bytes(&l.to_bytes()).unwrap();
        for _ in 0..20 {
            let (a, b) = (l.select_arm().unwrap(), back.select_arm().unwrap());
            assert_eq!(a, b);
            l.observe(a, 0.7).unwrap();
            back.observe(b, 0.7).unwrap();
        }
        assert_eq!(l.sums(), back.sums());
        // A forged arm counter is refused, as its own `from_bytes` refuses
        // it (its noise-term count must be the one its steps give for t).
        if let Sums::Tree(trees) = &mut l.sums {
            let n = trees[1].noise_terms();
            trees[1].forge_noise_terms(n + 1);
        }
        assert!(Mab::from_bytes(&l.to_bytes()).is_err());
    }
}
