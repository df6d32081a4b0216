//! Fixed-budget best-arm identification with epsilon-DP: DP-BAI of Chen,
//! Karthik, Chee & Tan 2024 ("Fixed-budget differentially private best arm
//! identification", ICLR, arXiv 2401.09073, Section 3, Algorithm 1), for
//! K-armed arms (unit vectors: every active arm is pulled) and linear arms
//! (feature vectors: the arms of a Max-Det collection of the active set are
//! pulled, [`crate::policy::max_det`]). Built by
//! `dpbandits.learners.bai_fixed_budget`.
//!
//! Phases p = 1..M, M = ceil(log2 k). Phase p has s_p active arms
//! (s_1 = k, s_{p+1} = ceil(s_p / 2)) and budget T_p = floor(T / M) (plus
//! one for the first T mod M phases). The pulled set B_p: the active arms
//! (K-armed), or a Max-Det collection of the active arms' vectors (its size
//! d_p is their rank). The phase's T_p pulls go round robin over B_p:
//! arm j of B_p is pulled n_pj = floor(T_p / |B_p|) times, plus one for the
//! first T_p mod |B_p| of them (the whole budget is used). Each pulled arm's n_p rewards are summed and the sum
//! is released once, with its own noise draw (sensitivity 1: rewards in
//! [0, 1]); its released mean is that sum over n_pj. The other active arms'
//! estimates are sum_j alpha_ij m_j over the collection ([`MaxDet`]
//! coefficients, |alpha| <= 1). The s_{p+1} active arms of largest estimate
//! stay (ties: a random order fixed when the engine is built); after phase
//! M one arm is left: the recommendation.
//!
//! Every decision reads only released sums and public constants (k, the
//! features, T): which arms phase p pulls, and how often, is a function of
//! the releases of phases < p. Each reward enters one release.
//!
//! Released values (the project's noise rule): with lattice noise each
//! reward is rounded to the lattice 2^-j and summed as an integer number of
//! steps; the noise is an exact discrete Laplace number of steps.

use rand_core::RngCore;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::noise::entropy::EntropyCell;
use crate::noise::lattice::SecureNoise;
use crate::noise::NoiseSpec;
use crate::policy::bai::{laplace_sum_draw, laplace_sum_noise, BernoulliRewards};
use crate::policy::max_det::max_det;
use crate::rng::{SeedSequence, StreamRng};

/// Most arms the engine accepts.
pub const MAX_ARMS: usize = 1 << 20;
/// Largest feature dimension.
pub const MAX_DIMENSION: usize = 1024;
/// Most feature entries (k * d).
pub const MAX_FEATURE_ENTRIES: usize = 1 << 24;

/// Everything the engine needs, as plain numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FixedBudgetConfig {
    pub k: usize,
    /// Feature dimension d (0: K-armed, no features).
    pub d: usize,
    /// k x d feature vectors, row-major (empty when d = 0).
    pub features: Vec<f64>,
    /// The budget T (selections).
    pub budget: u64,
    /// Noise of each pulled arm's phase sum (sensitivity 1).
    pub noise: NoiseSpec,
    /// Noise from the operating system instead of the seeded stream.
    pub secure: bool,
}

impl FixedBudgetConfig {
    /// The number of phases M = ceil(log2 k).
    pub fn phases(&self) -> u32 {
        let mut s = self.k;
        let mut m = 0;
        while s > 1 {
            s = s.div_ceil(2);
            m += 1;
        }
        m
    }

    /// Active arms in phase `p` (0-based): s_1 = k, s_{p+1} = ceil(s_p / 2).
    pub fn active_in(&self, p: u32) -> usize {
        let mut s = self.k;
        for _ in 0..p {
            s = s.div_ceil(2);
        }
        s
    }

    /// Budget of phase `p` (0-based).
    pub fn phase_budget(&self, p: u32) -> u64 {
        let m = u64::from(self.phases());
        self.budget / m + u64::from(u64::from(p) < self.budget % m)
    }

    fn validate(&self) -> Result<()> {
        let k = self.k;
        if !(2..=MAX_ARMS).contains(&k) {
            return Err(Error::invalid("k", format!("must lie in [2, {MAX_ARMS}], got {k}")));
        }
        if self.d > MAX_DIMENSION {
            return Err(Error::invalid("arms", format!("dimension must be <= {MAX_DIMENSION}, got {}", self.d)));
        }
        if k.saturating_mul(self.d) > MAX_FEATURE_ENTRIES {
            return Err(Error::invalid("arms", format!("k * d must be <= {MAX_FEATURE_ENTRIES}")));
        }
        if self.features.len() != k * self.d {
            return Err(Error::invalid(
                "arms",
                format!("needs k * d = {} entries, got {}", k * self.d, self.features.len()),
            ));
        }
        if self.features.iter().any(|x| !x.is_finite()) {
            return Err(Error::invalid("arms", "feature vectors must be finite"));
        }
        // Every phase must pull each arm of its collection at least once;
        // the collection has at most min(s_p, d) arms (s_p: K-armed).
        for p in 0..self.phases() {
            let s = self.active_in(p) as u64;
            let most = if self.d == 0 { s } else { s.min(self.d as u64) };
            if self.phase_budget(p) < most {
                return Err(Error::invalid(
                    "budget",
                    format!(
                        "{} is too small: phase {} of {} needs up to {most} pulls (one per arm it pulls); \
                         a budget of at least {} is enough",
                        self.budget,
                        p + 1,
                        self.phases(),
                        u64::from(self.phases()) * (if self.d == 0 { k as u64 } else { (k as u64).min(self.d as u64) })
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The pulled set of the current phase (a function of the active set and
/// the features; recomputed after a restore).
#[derive(Clone, Debug, Default, PartialEq)]
struct Plan {
    /// Pulled arms (engine indices).
    pulled: Vec<usize>,
    /// active.len() x pulled.len() coefficients (empty: K-armed, identity).
    coef: Vec<f64>,
    /// The phase's pulls (T_p; 0 when nothing is pulled).
    budget: u64,
}

impl Plan {
    /// Pulls of the j-th pulled arm: T_p / r, plus one for the first T_p mod r.
    fn quota(&self, j: usize) -> u64 {
        let r = self.pulled.len() as u64;
        self.budget / r + u64::from((j as u64) < self.budget % r)
    }
}

/// The engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FixedBudgetBai {
    config: FixedBudgetConfig,
    lattice: Option<SecureNoise>,
    up: f64,
    /// Phase index (0-based; == phases once finished).
    phase: u32,
    /// Active arms, ascending.
    active: Vec<u32>,
    /// Per pulled arm of the phase: selections, rewards, open lattice
    /// steps / float sum, released sum (NaN until released).
    selected: Vec<u64>,
    observed: Vec<u64>,
    open_steps: Vec<i64>,
    open_sum: Vec<f64>,
    released: Vec<f64>,
    /// Selections made in this phase (round robin over the pulled arms).
    cursor: u64,
    t: u64,
    samples: u64,
    releases: u64,
    /// Per arm: its estimate at its last phase (NaN before one).
    estimates: Vec<f64>,
    /// Per arm: pulls so far.
    pulls: Vec<u64>,
    tie_rank: Vec<u32>,
    rng: StreamRng,
    #[serde(skip)]
    plan: Plan,
    /// The value of the last release (for audits).
    #[serde(skip)]
    last_release: f64,
    #[serde(skip)]
    entropy: EntropyCell,
}

impl FixedBudgetBai {
    /// A fresh engine; noise and the tie order from the `"bai_fixed_budget"` stream of `seeds`.
    pub fn new(config: FixedBudgetConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let (lattice, up) = laplace_sum_noise(config.noise, config.budget, "budget", "phase sums")?;
        let k = config.k;
        let mut rng = seeds.stream("bai_fixed_budget");
        let mut order: Vec<u32> = (0..k as u32).collect();
        for i in (1..k).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut tie_rank = vec![0u32; k];
        for (rank, &a) in order.iter().enumerate() {
            tie_rank[a as usize] = rank as u32;
        }
        let mut e = FixedBudgetBai {
            lattice,
            up,
            phase: 0,
            active: (0..k as u32).collect(),
            selected: Vec::new(),
            observed: Vec::new(),
            open_steps: Vec::new(),
            open_sum: Vec::new(),
            released: Vec::new(),
            cursor: 0,
            t: 0,
            samples: 0,
            releases: 0,
            estimates: vec![f64::NAN; k],
            pulls: vec![0; k],
            tie_rank,
            rng,
            plan: Plan::default(),
            last_release: f64::NAN,
            entropy: EntropyCell::default(),
            config,
        };
        e.start_phase()?;
        Ok(e)
    }

    pub fn config(&self) -> &FixedBudgetConfig {
        &self.config
    }

    /// The pulled set and pulls per arm of the current phase.
    fn make_plan(&self) -> Plan {
        let c = &self.config;
        if self.finished() {
            return Plan::default();
        }
        let budget = c.phase_budget(self.phase);
        if c.d == 0 {
            let pulled: Vec<usize> = self.active.iter().map(|&a| a as usize).collect();
            return Plan { pulled, coef: Vec::new(), budget };
        }
        let d = c.d;
        let mut vectors = Vec::with_capacity(self.active.len() * d);
        for &a in &self.active {
            vectors.extend_from_slice(&c.features[a as usize * d..(a as usize + 1) * d]);
        }
        let m = max_det(&vectors, self.active.len(), d);
        let pulled: Vec<usize> = m.chosen.iter().map(|&i| self.active[i] as usize).collect();
        let budget = if pulled.is_empty() { 0 } else { budget };
        Plan { pulled, coef: m.coef, budget }
    }

    /// Sets up the current phase's per-arm counters (or finishes when one arm is left).
    fn start_phase(&mut self) -> Result<()> {
        self.plan = self.make_plan();
        let n = self.plan.pulled.len();
        self.selected = vec![0; n];
        self.observed = vec![0; n];
        self.open_steps = vec![0; n];
        self.open_sum = vec![0.0; n];
        self.released = vec![f64::NAN; n];
        self.cursor = 0;
        if !self.finished() && n == 0 {
            // Nothing to pull (every active vector is 0): the estimates are 0.
            self.end_phase();
            return self.start_phase();
        }
        Ok(())
    }

    /// Whether the last phase has ended (the recommendation is ready).
    pub fn finished(&self) -> bool {
        self.phase >= self.config.phases()
    }

    /// Selections made.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Rewards observed.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Phase sums released so far.
    pub fn releases(&self) -> u64 {
        self.releases
    }

    /// The current phase (1-based; phases + 1 once finished).
    pub fn phase(&self) -> u32 {
        self.phase + 1
    }

    /// Active arms, ascending.
    pub fn active(&self) -> Vec<usize> {
        self.active.iter().map(|&a| a as usize).collect()
    }

    /// The arms the current phase pulls.
    pub fn pulled(&self) -> &[usize] {
        &self.plan.pulled
    }

    /// Pulls of each arm the current phase pulls.
    pub fn quotas(&self) -> Vec<u64> {
        (0..self.plan.pulled.len()).map(|j| self.plan.quota(j)).collect()
    }

    /// Selections of each arm.
    pub fn pulls(&self) -> &[u64] {
        &self.pulls
    }

    /// Each arm's estimate at the last phase it was active in (NaN before one).
    pub fn estimates(&self) -> &[f64] {
        &self.estimates
    }

    /// The recommended arm once the budget's phases are done.
    pub fn recommendation(&self) -> Option<usize> {
        self.finished().then(|| self.active[0] as usize)
    }

    /// Selections still outstanding in this phase's schedule.
    fn scheduled(&self) -> u64 {
        self.plan.budget
    }

    /// Selections the engine can make now (the rest of the phase's schedule).
    pub fn remaining(&self) -> u64 {
        if self.finished() {
            0
        } else {
            self.scheduled() - self.cursor
        }
    }

    /// The arm to pull next.
    pub fn select_arm(&mut self) -> Result<usize> {
        if self.finished() {
            return Err(Error::State(format!(
                "the budget's {} phases are done ({} selections): read the recommendation",
                self.config.phases(),
                self.t
            )));
        }
        if self.cursor >= self.scheduled() {
            let waiting: u64 = self.selected.iter().zip(&self.observed).map(|(s, o)| s - o).sum();
            return Err(Error::State(format!(
                "phase {} of {} has made its {} selections and waits for {waiting} outstanding rewards: \
                 the next phase's arms depend on them",
                self.phase + 1,
                self.config.phases(),
                self.scheduled()
            )));
        }
        let j = (self.cursor % self.plan.pulled.len() as u64) as usize;
        let arm = self.plan.pulled[j];
        self.cursor += 1;
        self.selected[j] += 1;
        self.pulls[arm] += 1;
        self.t += 1;
        Ok(arm)
    }

    /// Selections made and not yet answered by a reward (all in the
    /// current phase: a phase ends only when all its rewards are in).
    pub fn outstanding(&self) -> u64 {
        self.t - self.samples
    }

    /// The arms with outstanding selections and their number, ascending by arm.
    pub fn outstanding_by_arm(&self) -> Vec<(usize, u64)> {
        let mut out: Vec<(usize, u64)> = (self.plan.pulled.iter().zip(self.selected.iter().zip(&self.observed)))
            .filter(|(_, (s, o))| s > o)
            .map(|(&a, (s, o))| (a, s - o))
            .collect();
        out.sort_unstable();
        out
    }

    /// The arm of the one outstanding selection, when exactly one is (the
    /// latest selection's slot looked at first).
    pub fn sole_outstanding(&self) -> Option<usize> {
        if self.outstanding() != 1 {
            return None;
        }
        let open = |j: usize| self.observed[j] < self.selected[j];
        let j = self.last_slot().filter(|&j| open(j)).or_else(|| (0..self.plan.pulled.len()).find(|&j| open(j)));
        j.map(|j| self.plan.pulled[j])
    }

    /// The index among the phase's pulled arms of the latest selection.
    #[inline]
    fn last_slot(&self) -> Option<usize> {
        let n = self.plan.pulled.len() as u64;
        (n > 0 && self.cursor > 0).then(|| ((self.cursor - 1) % n) as usize)
    }

    /// The index of `arm` among the phase's pulled arms: the latest
    /// selection's first (the usual case), then the others.
    #[inline]
    fn slot(&self, arm: usize) -> Option<usize> {
        match self.last_slot() {
            Some(j) if self.plan.pulled[j] == arm => Some(j),
            _ => self.plan.pulled.iter().position(|&a| a == arm),
        }
    }

    fn check_observation(&self, arm: usize, reward: f64) -> Result<()> {
        let k = self.config.k;
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        if !(0.0..=1.0).contains(&reward) {
            return Err(Error::invalid("reward", format!("must lie in [0, 1], got {reward}")));
        }
        Ok(())
    }

    /// Records a reward of `arm` when it has an outstanding selection;
    /// `Ok(false)`, nothing recorded, when it has none.
    pub fn observe_outstanding(&mut self, arm: usize, reward: f64) -> Result<bool> {
        self.check_observation(arm, reward)?;
        match self.slot(arm) {
            Some(j) if self.observed[j] < self.selected[j] => self.record(j, reward).map(|()| true),
            _ => Ok(false),
        }
    }

    /// Records a reward of `arm` (which must have an outstanding selection).
    pub fn observe(&mut self, arm: usize, reward: f64) -> Result<()> {
        self.check_observation(arm, reward)?;
        let Some(j) = self.slot(arm) else {
            return Err(Error::State(format!(
                "arm {arm} has no outstanding selection: phase {} pulls only arms {:?}",
                self.phase + 1,
                &self.plan.pulled[..self.plan.pulled.len().min(10)]
            )));
        };
        if self.observed[j] >= self.selected[j] {
            return Err(Error::State(format!("arm {arm} has no outstanding selection")));
        }
        self.record(j, reward)
    }

    /// Adds a checked reward to the open sum of the `j`-th pulled arm
    /// (its release when the arm's quota is in).
    fn record(&mut self, j: usize, reward: f64) -> Result<()> {
        if self.lattice.is_some() {
            #[allow(clippy::float_cmp)] // exact lattice points
            let steps = if reward == 1.0 {
                self.up as i64
            } else if reward == 0.0 {
                0
            } else {
                (reward * self.up + 0.5).floor() as i64
            };
            self.open_steps[j] += steps;
        } else {
            self.open_sum[j] += reward;
        }
        self.observed[j] += 1;
        self.samples += 1;
        if self.observed[j] == self.plan.quota(j) {
            self.release(j)?;
        }
        Ok(())
    }

    fn draw(&mut self) -> Result<f64> {
        let rng: &mut dyn RngCore = if self.config.secure { self.entropy.get()? } else { &mut self.rng };
        Ok(laplace_sum_draw(rng, self.lattice, self.config.noise))
    }

    fn release(&mut self, j: usize) -> Result<()> {
        let noise = if matches!(self.config.noise, NoiseSpec::Zero) { 0.0 } else { self.draw()? };
        self.released[j] = match self.lattice {
            Some(lat) => (self.open_steps[j] as f64 + noise) * lat.step(),
            None => self.open_sum[j] + noise,
        };
        self.last_release = self.released[j];
        self.open_steps[j] = 0;
        self.open_sum[j] = 0.0;
        self.releases += 1;
        if self.released.iter().all(|v| !v.is_nan()) {
            self.end_phase();
            self.start_phase()?;
        }
        Ok(())
    }

    /// The estimates of the active arms from the released sums, then the
    /// elimination (s_{p+1} arms stay).
    fn end_phase(&mut self) {
        let means: Vec<f64> = self
            .released
            .iter()
            .enumerate()
            .map(|(j, s)| if s.is_nan() { 0.0 } else { s / self.plan.quota(j) as f64 })
            .collect();
        let r = self.plan.pulled.len();
        let mut scored: Vec<(f64, u32, u32)> = Vec::with_capacity(self.active.len());
        for (i, &a) in self.active.iter().enumerate() {
            let est =
                if self.config.d == 0 { means[i] } else { (0..r).map(|j| self.plan.coef[i * r + j] * means[j]).sum() };
            self.estimates[a as usize] = est;
            scored.push((est, self.tie_rank[a as usize], a));
        }
        scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        let keep = self.config.active_in(self.phase + 1);
        let mut next: Vec<u32> = scored.iter().take(keep).map(|x| x.2).collect();
        next.sort_unstable();
        self.active = next;
        self.phase += 1;
    }

    /// Draws future noise from `seeds` (the fork of a learner).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("bai_fixed_budget");
        self.entropy = EntropyCell::default();
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// A saved engine, checked for consistency (a corrupted or hand-made
    /// state is refused, never run).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let e: Self = crate::state::decode(bytes)?;
        let bad = |what: &str| Err(Error::Decode(format!("inconsistent fixed-budget BAI state: {what}")));
        // Rebuilding a fresh engine validates the configuration.
        let fresh = match FixedBudgetBai::new(e.config.clone(), &SeedSequence::from_seed(0)) {
            Ok(f) => f,
            Err(err) => return Err(Error::Decode(format!("inconsistent fixed-budget BAI state: {err}"))),
        };
        if fresh.lattice != e.lattice || fresh.up.to_bits() != e.up.to_bits() {
            return bad("noise");
        }
        let k = e.config.k;
        let phases = e.config.phases();
        if e.phase > phases {
            return bad("phase");
        }
        if e.active.len() != e.config.active_in(e.phase)
            || e.active.windows(2).any(|w| w[0] >= w[1])
            || e.active.iter().any(|&a| a as usize >= k)
        {
            return bad("active arms");
        }
        if e.tie_rank.len() != k || e.estimates.len() != k || e.pulls.len() != k {
            return bad("arm count");
        }
        let mut ranks = e.tie_rank.clone();
        ranks.sort_unstable();
        if ranks.iter().enumerate().any(|(i, &r)| r as usize != i) {
            return bad("tie order");
        }
        if e.estimates.iter().any(|x| x.is_infinite()) {
            return bad("estimates");
        }
        let mut e = e;
        e.plan = e.make_plan();
        let n = e.plan.pulled.len();
        if [e.selected.len(), e.observed.len(), e.open_steps.len(), e.open_sum.len(), e.released.len()]
            .iter()
            .any(|&l| l != n)
        {
            return bad("the phase's counters");
        }
        for j in 0..n {
            let per = e.plan.quota(j);
            let (s, o) = (e.selected[j], e.observed[j]);
            if o > s || s > per || (o == per) == e.released[j].is_nan() || e.released[j].is_infinite() {
                return bad("a pulled arm's counts");
            }
            if !e.open_sum[j].is_finite() || e.open_sum[j] < 0.0 || e.open_sum[j] > o as f64 {
                return bad("a pulled arm's sum");
            }
            if e.open_steps[j] < 0 || (e.open_steps[j] as f64) > (o as f64) * e.up {
                return bad("a pulled arm's lattice steps");
            }
        }
        let made: u64 = e.selected.iter().sum();
        if made != e.cursor || e.cursor > e.scheduled() {
            return bad("the phase's selections");
        }
        // Every selection of an earlier phase was observed, within those phases' budgets.
        let before: u64 = (0..e.phase).map(|p| e.config.phase_budget(p)).sum();
        let in_phase: u64 = e.observed.iter().sum();
        if e.t < made || e.samples < in_phase || e.t - made != e.samples - in_phase || e.t - made > before {
            return bad("totals");
        }
        if e.pulls.iter().try_fold(0u64, |a, &p| a.checked_add(p)) != Some(e.t) {
            return bad("pulls");
        }
        let released = e.released.iter().filter(|v| !v.is_nan()).count() as u64;
        if released > e.releases || e.releases > e.t {
            return bad("releases");
        }
        Ok(e)
    }
}

/// Per replicate: the recommended arm (all replicates finish).
#[derive(Clone, Debug, Default)]
pub struct FixedBudgetRuns {
    pub recommendations: Vec<i64>,
    pub samples: Vec<u64>,
}

/// The engine of replicate `index` of root `seed`.
pub fn replicate_engine(config: &FixedBudgetConfig, seed: u64, index: u64) -> Result<FixedBudgetBai> {
    let root = SeedSequence::from_seed(seed).child("bai_replicate", index);
    FixedBudgetBai::new(config.clone(), &root.child("learner", 0))
}

/// Runs `reps` independent replicates (in parallel) of `config` on Bernoulli
/// arms of means `means` (the arm's reward is 1{u < means[a]}; the same
/// reward stream as `crate::policy::bai::simulate`).
pub fn simulate(config: &FixedBudgetConfig, means: &[f64], reps: usize, seed: u64) -> Result<FixedBudgetRuns> {
    if means.len() != config.k {
        return Err(Error::invalid("means", format!("needs k = {} means, got {}", config.k, means.len())));
    }
    if config.secure {
        return Err(Error::invalid("secure", "simulations draw seeded noise (secure=False)"));
    }
    let results: Vec<Result<(i64, u64)>> = (0..reps as u64)
        .into_par_iter()
        .map(|r| {
            let mut engine = replicate_engine(config, seed, r)?;
            let mut env = BernoulliRewards::new(means, seed, r)?;
            while !engine.finished() {
                let arm = engine.select_arm()?;
                let y = env.pull(arm);
                engine.observe(arm, y)?;
            }
            Ok((engine.recommendation().map_or(-1, |a| a as i64), engine.samples()))
        })
        .collect();
    let mut runs = FixedBudgetRuns::default();
    for r in results {
        let (a, n) = r?;
        runs.recommendations.push(a);
        runs.samples.push(n);
    }
    Ok(runs)
}

/// For audits: `count` independent engines (seeds (`seed`, run)) whose
/// i-th observation is `rewards[i]` whatever arm they chose; per run, the
/// released sum that holds observation `round` (NaN when it is not
/// released within the rewards given).
pub fn audit_runs(
    config: &FixedBudgetConfig,
    rewards: &[f64],
    round: usize,
    count: usize,
    seed: u64,
) -> Result<Vec<f64>> {
    if round >= rewards.len() {
        return Err(Error::invalid("round", format!("must be < {} (the rewards given), got {round}", rewards.len())));
    }
    let root = SeedSequence::from_seed(seed);
    (0..count as u64)
        .into_par_iter()
        .map(|r| {
            let mut e = FixedBudgetBai::new(config.clone(), &root.child("audit", r))?;
            let mut target: Option<(u64, usize)> = None;
            for (i, &y) in rewards.iter().enumerate() {
                if e.finished() {
                    break;
                }
                let a = e.select_arm()?;
                let phase = u64::from(e.phase);
                let j = e.plan.pulled.iter().position(|&p| p == a).unwrap_or(0);
                e.observe(a, y)?;
                if i == round {
                    target = Some((phase, j));
                }
                if let Some((tp, tj)) = target {
                    if u64::from(e.phase) == tp && !e.released[tj].is_nan() {
                        return Ok(e.released[tj]);
                    }
                    if u64::from(e.phase) > tp {
                        // The phase ended with this release: it is the last one made.
                        return Ok(e.last_release);
                    }
                }
            }
            Ok(f64::NAN)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn karmed(k: usize, budget: u64, noise: NoiseSpec) -> FixedBudgetConfig {
        FixedBudgetConfig { k, d: 0, features: Vec::new(), budget, noise, secure: false }
    }

    #[test]
    fn schedule_halves_the_active_set() {
        let c = karmed(5, 1000, NoiseSpec::Zero);
        assert_eq!(c.phases(), 3);
        assert_eq!((c.active_in(0), c.active_in(1), c.active_in(2), c.active_in(3)), (5, 3, 2, 1));
        assert_eq!((c.phase_budget(0), c.phase_budget(1), c.phase_budget(2)), (334, 333, 333));
        assert!(FixedBudgetBai::new(karmed(5, 12, NoiseSpec::Zero), &SeedSequence::from_seed(0)).is_err());
        assert!(FixedBudgetBai::new(karmed(5, 15, NoiseSpec::Zero), &SeedSequence::from_seed(0)).is_ok());
    }

    #[test]
    fn outstanding_selections_are_counted_per_arm() {
        let mut e = FixedBudgetBai::new(karmed(3, 60, NoiseSpec::Zero), &SeedSequence::from_seed(0)).unwrap();
        assert_eq!((e.outstanding(), e.outstanding_by_arm()), (0, vec![]));
        let (a, b, c) = (e.select_arm().unwrap(), e.select_arm().unwrap(), e.select_arm().unwrap());
        e.select_arm().unwrap(); // round robin: arm `a` again
        assert_eq!(e.outstanding(), 4);
        let mut want = vec![(a, 2), (b, 1), (c, 1)];
        want.sort_unstable();
        assert_eq!(e.outstanding_by_arm(), want);
        assert_eq!(e.sole_outstanding(), None); // four
        assert!(e.observe_outstanding(b, 0.5).unwrap());
        assert!(!e.observe_outstanding(b, 0.5).unwrap()); // none left: nothing recorded
        assert_eq!((e.samples(), e.outstanding()), (1, 3));
        assert!(e.observe_outstanding(a, 1.5).is_err()); // out of [0, 1]
        assert!(e.observe_outstanding(a, f64::NAN).is_err());
        assert!(e.observe_outstanding(3, 0.5).is_err()); // no such arm
        assert_eq!(e.samples(), 1);
        e.observe(a, 0.0).unwrap();
        e.observe(c, 0.0).unwrap();
        assert_eq!(e.sole_outstanding(), Some(a));
    }

    #[test]
    fn non_private_finds_an_easy_best_arm() {
        let runs = simulate(&karmed(4, 4000, NoiseSpec::Zero), &[0.9, 0.5, 0.4, 0.1], 200, 3).unwrap();
        assert!(runs.recommendations.iter().all(|&a| a == 0));
        assert!(runs.samples.iter().all(|&n| n == 4000));
    }

    #[test]
    fn linear_arms_pull_a_collection() {
        // 6 arms in R^2: phase 1 pulls 2 of them.
        let features = vec![1.0, 0.0, 0.0, 1.0, 0.7, 0.7, 0.5, 0.2, 0.2, 0.5, 0.9, 0.1];
        let c = FixedBudgetConfig { k: 6, d: 2, features, budget: 3000, noise: NoiseSpec::Zero, secure: false };
        let e = FixedBudgetBai::new(c.clone(), &SeedSequence::from_seed(1)).unwrap();
        assert_eq!(e.pulled().len(), 2);
        assert_eq!(e.quotas(), vec![500, 500]);
        // theta = (0.6, 0.3): means 0.6, 0.3, 0.63, 0.36, 0.27, 0.57; best is arm 2.
        let means = [0.6, 0.3, 0.63, 0.36, 0.27, 0.57];
        let runs = simulate(&c, &means, 100, 2).unwrap();
        let right = runs.recommendations.iter().filter(|&&a| a == 2).count();
        assert!(right >= 50, "{right}");
    }

    #[test]
    fn checkpoint_round_trip_and_corruption() {
        let mut e = FixedBudgetBai::new(karmed(3, 600, NoiseSpec::Laplace { scale: 1.0 }), &SeedSequence::from_seed(1))
            .unwrap();
        let mut env = BernoulliRewards::new(&[0.9, 0.5, 0.1], 1, 0).unwrap();
        for _ in 0..250 {
            let a = e.select_arm().unwrap();
            e.observe(a, env.pull(a)).unwrap();
        }
        let bytes = e.to_bytes();
        let mut f = FixedBudgetBai::from_bytes(&bytes).unwrap();
        while !e.finished() {
            let a = e.select_arm().unwrap();
            assert_eq!(a, f.select_arm().unwrap());
            let y = env.pull(a);
            e.observe(a, y).unwrap();
            f.observe(a, y).unwrap();
        }
        assert_eq!(e.recommendation(), f.recommendation());
        assert!(FixedBudgetBai::from_bytes(&bytes[..bytes.len() / 2]).is_err());
        let mut g = e.clone();
        g.t += 1;
        assert!(FixedBudgetBai::from_bytes(&g.to_bytes()).is_err());
    }
}
