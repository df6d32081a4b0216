//! Private contextual UCB and Thompson sampling of Mishra & Thakurta 2015,
//! App. D.2 (Alg. 3) and D.3 (Alg. 4).
//!
//! The entries A_ij (i <= j) of A = sum z z^T and b_i of b = sum z y are
//! each released by their own tree (line 2). One vector-shaped
//! [`TreeCounter`] with i.i.d. Laplace noise per entry is exactly one tree
//! per entry; A's d(d+1)/2 entries and b's d entries use two counters
//! because their sensitivities (hence node scales) differ. The released
//! matrix is A~ = I + the released sum, symmetrized (line 1: A starts at
//! I_d; line 5: A~_ji = A~_ij).
//!
//! Line 6: when A~ is positive definite (a Cholesky factorization
//! succeeds), UCB plays argmax z^T A~^-1 b~ + alpha sqrt(z^T A~^-1 z) and
//! Thompson sampling draws mu~ ~ N(A~^-1 b~, alpha A~^-1) and plays
//! argmax z^T mu~; otherwise (lines 8-9) UCB plays argmax z^T b~ +
//! alpha ||z|| and Thompson sampling draws mu~ ~ N(b~, alpha I).
//! Corrections of the appendix's typesetting, chosen and documented in the
//! Python classes: the width uses A~^-1 (the appendix prints A~), the
//! covariance of Alg. 4 is alpha A~^-1 (printed alpha A~), and Alg. 4 plays
//! the sampled mu~ (printed mu^).
//!
//! Node scales arrive from `dpbandits.privacy.mishra_thakurta`.

use rand::Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use super::linucb::InputBounds;
use super::Learner;
use crate::counter::{ContinualCounter, FactorSpec};
use crate::env::{DecisionSet, Feedback};
use crate::error::{Error, Result};
use crate::linalg::Cholesky;
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// UCB (Alg. 3) or Thompson sampling (Alg. 4), with the explore/exploit
/// multiplier alpha.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ContextualRule {
    Ucb { alpha: f64 },
    Thompson { alpha: f64 },
}

/// Everything an [`MtContextual`] engine needs, as plain numbers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MtContextualConfig {
    pub d: usize,
    pub horizon: u64,
    pub rule: ContextualRule,
    /// Node noise of each A_ij tree.
    pub noise_a: NoiseSpec,
    /// Node noise of each b_i tree.
    pub noise_b: NoiseSpec,
    /// ||z|| <= L and |y| <= B (B = `b_tilde`), clipped or refused.
    pub bounds: InputBounds,
    /// The counter of A's and b's prefix sums: `None` for the binary tree
    /// (App. A), else a factorization counter (the smooth binary mechanism
    /// for Laplace noise) whose noise the privacy layer set for it.
    pub counter: Option<FactorSpec>,
}

/// The engine of Alg. 3 / Alg. 4.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MtContextual {
    config: MtContextualConfig,
    /// Upper-triangle entries of A, row by row.
    tree_a: ContinualCounter,
    tree_b: ContinualCounter,
    t: u64,
    /// Rounds whose released A~ was not positive definite (fallback taken).
    fallbacks: u64,
    /// Whether the fallback branch was taken in the last selection.
    last_fallback: bool,
    /// Recorded rounds whose (z, y) the bounds policy clipped.
    clipped: u64,
    rng: StreamRng,
    #[serde(skip)]
    work: Work,
}

#[derive(Clone, Debug, Default)]
struct Work {
    a: Vec<f64>,
    b: Vec<f64>,
    mu: Vec<f64>,
    scratch: Vec<f64>,
    chol: Option<Cholesky>,
    x: Vec<f64>,
    tri: Vec<f64>,
}

impl MtContextual {
    /// A fresh engine: A's trees draw from `seeds.child("mt-contextual/A", 0)`,
    /// b's from `seeds.child("mt-contextual/b", 0)`, Thompson draws from the
    /// `"mt-contextual/sampling"` stream.
    pub fn new(config: MtContextualConfig, seeds: &SeedSequence) -> Result<Self> {
        let d = config.d;
        if d == 0 {
            return Err(Error::invalid("d", "must be >= 1"));
        }
        if config.horizon == 0 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        let alpha = match config.rule {
            ContextualRule::Ucb { alpha } | ContextualRule::Thompson { alpha } => alpha,
        };
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(Error::invalid("alpha", format!("must be finite and >= 0, got {alpha}")));
        }
        crate::error::check_positive("L", config.bounds.l)?;
        crate::error::check_positive("B_tilde", config.bounds.b_tilde)?;
        // Checked: d (d + 1) / 2 and the d x d work buffers wrap for huge d.
        let tri = d
            .checked_add(1)
            .and_then(|d1| d.checked_mul(d1))
            .filter(|_| d.checked_mul(d).is_some())
            .map(|v| v / 2)
            .ok_or_else(|| Error::Allocation { name: "d", what: format!("a {d} x {d} matrix (overflow)") })?;
        let (n, f) = (config.horizon, config.counter);
        let tree_a = ContinualCounter::of_choice(&[tri], n, config.noise_a, f, 0, &seeds.child("mt-contextual/A", 0))?;
        let tree_b = ContinualCounter::of_choice(&[d], n, config.noise_b, f, 0, &seeds.child("mt-contextual/b", 0))?;
        Ok(MtContextual {
            config,
            tree_a,
            tree_b,
            t: 0,
            fallbacks: 0,
            last_fallback: false,
            clipped: 0,
            rng: seeds.stream("mt-contextual/sampling"),
            work: Work::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &MtContextualConfig {
        &self.config
    }

    /// Completed rounds.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Selections that took the fallback branch (A~ not positive definite).
    pub fn fallbacks(&self) -> u64 {
        self.fallbacks
    }

    /// Recorded rounds whose (z, y) the bounds policy clipped.
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// Whether the last selection took the fallback branch.
    pub fn last_fallback(&self) -> bool {
        self.last_fallback
    }

    /// The released (A~, b~) the next selection reads: A~ = I + released
    /// sum, symmetric, row-major d x d.
    pub fn released(&self) -> (Vec<f64>, Vec<f64>) {
        let d = self.config.d;
        let r = self.tree_a.release();
        let mut a = vec![0.0; d * d];
        let mut idx = 0;
        for i in 0..d {
            for j in i..d {
                a[i * d + j] = r[idx];
                a[j * d + i] = r[idx];
                idx += 1;
            }
            a[i * d + i] += 1.0;
        }
        (a, self.tree_b.release().to_vec())
    }

    fn ensure_work(&mut self) {
        let d = self.config.d;
        if self.work.mu.len() != d {
            self.work = Work {
                a: vec![0.0; d * d],
                b: vec![0.0; d],
                mu: vec![0.0; d],
                scratch: vec![0.0; d],
                chol: None,
                x: vec![0.0; d],
                tri: vec![0.0; d * (d + 1) / 2],
            };
        }
    }

    /// Line 6: factors A~; on success mu = A~^-1 b~, else mu = b~. Returns
    /// whether A~ was positive definite.
    fn prepare(&mut self) -> bool {
        self.ensure_work();
        let d = self.config.d;
        let (a, b) = self.released();
        self.work.a.copy_from_slice(&a);
        self.work.b.copy_from_slice(&b);
        let ok = match self.work.chol.as_mut() {
            Some(c) => c.refactor(&self.work.a).is_ok(),
            None => match Cholesky::factor(&self.work.a, d) {
                Ok(c) => {
                    self.work.chol = Some(c);
                    true
                }
                Err(_) => false,
            },
        };
        if !ok {
            // A failed refactor leaves the factor unusable.
            self.work.chol = None;
        }
        self.work.mu.copy_from_slice(&self.work.b);
        if ok {
            self.work.chol.as_ref().expect("factored").solve_in_place(&mut self.work.mu);
        }
        ok
    }

    /// Scores of every action of `set` for this round (one Thompson draw).
    fn scores(&mut self, set: &DecisionSet) -> Vec<f64> {
        let pd = self.prepare();
        self.last_fallback = !pd;
        let d = self.config.d;
        let mut out = Vec::with_capacity(set.k);
        match self.config.rule {
            ContextualRule::Ucb { alpha } => {
                for i in 0..set.k {
                    let z = set.action(i);
                    let mean: f64 = z.iter().zip(&self.work.mu).map(|(a, b)| a * b).sum();
                    let width = if pd {
                        let chol = self.work.chol.as_ref().expect("factored");
                        chol.inv_quad(z, &mut self.work.scratch).max(0.0).sqrt()
                    } else {
                        z.iter().map(|v| v * v).sum::<f64>().sqrt()
                    };
                    out.push(mean + alpha * width);
                }
            }
            ContextualRule::Thompson { alpha } => {
                let s = alpha.sqrt();
                let mut draw: Vec<f64> = (0..d).map(|_| self.rng.sample::<f64, _>(StandardNormal)).collect();
                if pd {
                    // L^-T z ~ N(0, A~^-1).
                    let chol = self.work.chol.as_ref().expect("factored");
                    crate::linalg::backward_substitute(chol.lower(), d, &mut draw);
                }
                for (v, m) in draw.iter_mut().zip(&self.work.mu) {
                    *v = m + s * *v;
                }
                for i in 0..set.k {
                    out.push(set.action(i).iter().zip(&draw).map(|(a, b)| a * b).sum());
                }
            }
        }
        out
    }

    /// Line 11-12 (Alg. 3) / 12-13 (Alg. 4): inserts z z^T and z y after
    /// enforcing the bounds.
    pub fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        let d = self.config.d;
        if x.len() != d {
            return Err(Error::invalid("x", format!("expected {d} entries, got {}", x.len())));
        }
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is reached", self.config.horizon)));
        }
        self.ensure_work();
        let mut y = y;
        self.work.x.copy_from_slice(x);
        let clipped = self.config.bounds.enforce(&mut self.work.x, &mut y)?;
        let mut idx = 0;
        for i in 0..d {
            for j in i..d {
                self.work.tri[idx] = self.work.x[i] * self.work.x[j];
                idx += 1;
            }
        }
        for (b, xi) in self.work.b.iter_mut().zip(&self.work.x) {
            *b = xi * y;
        }
        self.tree_a.add(&self.work.tri)?;
        self.tree_b.add(&self.work.b)?;
        self.clipped += u64::from(clipped);
        self.t += 1;
        Ok(())
    }

    fn check_set(&self, set: &DecisionSet) -> Result<()> {
        super::check_decision_set(set.rows(), self.config.d)?;
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is reached", self.config.horizon)));
        }
        Ok(())
    }

    /// Future noise from `seeds`.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.tree_a.reseed(&seeds.child("mt-contextual/A", 0));
        self.tree_b.reseed(&seeds.child("mt-contextual/b", 0));
        self.rng = seeds.stream("mt-contextual/sampling");
    }

    /// Tree noise from the operating system from now on (secure mode;
    /// before the first update).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.tree_a.use_os_entropy()?;
        self.tree_b.use_os_entropy()
    }

    /// Whether tree noise comes from the operating system.
    pub fn os_entropy(&self) -> bool {
        self.tree_a.os_entropy()
    }

    /// Serialized state (tree noise and generators included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an engine written by [`MtContextual::to_bytes`]; a state
    /// whose trees disagree with d (an index panic later) is refused.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let e: MtContextual = crate::state::decode(bytes)?;
        // The configuration passes the constructor's checks, and both
        // counters are the ones it builds (kind, shape, horizon, noise).
        let reference = MtContextual::new(e.config, &SeedSequence::from_seed(0))
            .map_err(|err| Error::Decode(format!("contextual state with an invalid configuration: {err}")))?;
        e.tree_a.check_restored(&reference.tree_a)?;
        e.tree_b.check_restored(&reference.tree_b)?;
        if e.tree_a.t() != e.t
            || e.tree_b.t() != e.t
            || e.tree_a.os_entropy() != e.tree_b.os_entropy()
            || e.clipped > e.t
        {
            return Err(Error::Decode("inconsistent contextual state".into()));
        }
        Ok(e)
    }
}

impl super::LearnerFactory for MtContextualConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(MtContextual::new(*self, seeds)?))
    }
}

impl Learner for MtContextual {
    fn use_os_entropy(&mut self) -> Result<()> {
        MtContextual::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        self.check_set(set)?;
        let scores = self.scores(set);
        if self.last_fallback {
            self.fallbacks += 1;
        }
        Ok(super::first_argmax(&scores))
    }

    fn update(&mut self, set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
        let (x, y) = super::played_reward(set, index, feedback, "")?;
        self.observe(x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Environment, RewardModel, ShariffSheffetEnv};
    use crate::policy::linucb::BoundsPolicy;
    use crate::sim::run_episode;

    fn config(rule: ContextualRule, noise: f64) -> MtContextualConfig {
        let spec = if noise > 0.0 { NoiseSpec::Laplace { scale: noise } } else { NoiseSpec::Zero };
        MtContextualConfig {
            d: 3,
            horizon: 4000,
            rule,
            noise_a: spec,
            noise_b: spec,
            bounds: InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip },
            counter: None,
        }
    }

    #[test]
    fn zero_noise_release_is_identity_plus_exact_sums() {
        let seeds = SeedSequence::from_seed(1);
        let mut l = MtContextual::new(config(ContextualRule::Ucb { alpha: 1.0 }, 0.0), &seeds).unwrap();
        l.observe(&[0.6, 0.0, 0.8], 0.5).unwrap();
        l.observe(&[0.0, 1.0, 0.0], -1.0).unwrap();
        let (a, b) = l.released();
        let want_a = [1.36, 0.0, 0.48, 0.0, 2.0, 0.0, 0.48, 0.0, 1.64];
        for (x, w) in a.iter().zip(want_a) {
            assert!((x - w).abs() < 1e-12, "{a:?}");
        }
        let want_b = [0.3, -1.0, 0.4];
        for (x, w) in b.iter().zip(want_b) {
            assert!((x - w).abs() < 1e-12, "{b:?}");
        }
    }

    #[test]
    fn both_rules_learn_without_noise_and_fallback_counts_non_pd() {
        for rule in [ContextualRule::Ucb { alpha: 0.5 }, ContextualRule::Thompson { alpha: 0.05 }] {
            let seeds = SeedSequence::from_seed(2);
            let mut l = MtContextual::new(config(rule, 0.0), &seeds).unwrap();
            let mut env = ShariffSheffetEnv::new(3, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
            let trace = run_episode(&mut l, &mut env, 4000, 1000, None).unwrap();
            let (r1, r4) = (trace.regret[0], trace.regret[3]);
            assert!(r4 - r1 < 3.0 * r1, "{rule:?}: {r1} then {r4}");
            assert_eq!(l.fallbacks(), 0);
        }
        // Large noise: some releases are not PD; the engine counts them.
        let seeds = SeedSequence::from_seed(3);
        let mut l = MtContextual::new(config(ContextualRule::Ucb { alpha: 1.0 }, 5.0), &seeds).unwrap();
        let mut env = ShariffSheffetEnv::new(3, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let mut set = DecisionSet::default();
        let mut non_pd = 0;
        for t in 1..=500 {
            env.next_round(t, &mut set).unwrap();
            let (a, _) = l.released();
            non_pd += u64::from(Cholesky::factor(&a, 3).is_err());
            let i = l.select(&set).unwrap();
            let fb = env.feedback(i).unwrap();
            l.update(&set, i, fb).unwrap();
        }
        assert!(non_pd > 0);
        assert_eq!(l.fallbacks(), non_pd);
    }
}
