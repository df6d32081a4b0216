//! Non-private logistic contextual bandits: the engine behind
//! `dpbandits.LogisticUCB` and `dpbandits.LogisticThompsonSampling`.
//!
//! The model: a reward y in [0, 1] with mean mu(<x, theta*>), mu(z) =
//! 1 / (1 + e^-z) (Filippi, Cappé, Garivier & Szepesvári 2010, Sec. 2; Li,
//! Lu & Zhou 2017, Sec. 2). The estimate is the recursive Newton (Laplace)
//! approximation of the regularized maximum-likelihood estimate
//! (Chapelle & Li 2011, Alg. 3, with the full precision matrix instead of
//! its diagonal): after the pair (x, y), with p = mu(<x, theta>) and
//! q = p (1 - p),
//!
//! ```text
//! A <- A + q x x^T,    theta <- theta + A^-1 x (y - p),
//! ```
//!
//! from A = lambda I, theta = 0 (one Newton step on the newest term of the
//! log-likelihood, the curvature of the older terms kept in A).
//!
//! - UCB (`GlmRule::Ucb`, after UCB-GLM, Li, Lu & Zhou 2017, Alg. 1): plays
//!   argmax <x, theta> + beta_t ||x||_{V^-1} with V = lambda I + sum x x^T
//!   (the design matrix of their Alg. 1) and beta_t = beta_scale
//!   (sigma / kappa) sqrt((d / 2) ln(1 + 2 t / d) + ln(1 / alpha)) (their
//!   Eq. (6)); sigma = 1/2 (a reward in [0, 1] is 1/2-sub-Gaussian), kappa
//!   a lower bound on mu' over the parameter set. The MLE of their Alg. 1
//!   is replaced by the recursive Newton estimate above (constant work per
//!   round) and their random initial exploration by the regularizer.
//! - Thompson sampling (`GlmRule::Thompson`, Chapelle & Li 2011, Alg. 3):
//!   plays argmax <x, theta~> with theta~ ~ N(theta, v^2 A^-1), a fresh
//!   draw at every selection.

use serde::{Deserialize, Serialize};

use super::{check_decision_set, UcbLearner};
use crate::env::DecisionRows;
use crate::error::{all_finite, check_positive, Error, Result};
use crate::linalg::{cholesky, RankOneInverse};
use crate::rng::{standard_normal, SeedSequence, StreamRng};

/// Largest dimension accepted.
pub const MAX_DIM: usize = 1024;

/// Rank-one updates between two exact refactorizations of an inverse.
const REFACTOR_EVERY: u64 = 4096;

/// The logistic link mu(z) = 1 / (1 + e^-z), without overflow for any z.
#[inline]
pub fn logistic(z: f64) -> f64 {
    crate::env::logistic_contextual::logistic(z)
}

/// How the engine selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GlmRule {
    /// UCB-GLM's index with the design matrix V.
    Ucb,
    /// Laplace-approximation Thompson sampling.
    Thompson,
}

/// Plain-number configuration of [`OnlineLogistic`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OnlineLogisticConfig {
    pub d: usize,
    pub horizon: u64,
    pub rule: GlmRule,
    /// lambda > 0: the ridge of A and V.
    pub ridge: f64,
    /// UCB: the factor sigma / kappa of beta_t; Thompson: unused.
    pub width: f64,
    /// UCB: ln(1 / alpha) in beta_t; Thompson: unused.
    pub log_inv_alpha: f64,
    /// Factor on beta_t (UCB) or v (Thompson sampling).
    pub beta_scale: f64,
    /// L >= ||x||; rows above are scaled to L or refused, rewards clipped
    /// to [0, 1] or refused.
    pub l: f64,
    pub clip: bool,
}

impl OnlineLogisticConfig {
    fn validate(&self) -> Result<()> {
        if self.d < 1 || self.d > MAX_DIM {
            return Err(Error::invalid("d", format!("must lie in [1, {MAX_DIM}], got {}", self.d)));
        }
        if self.horizon < 1 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        for (name, v) in [("ridge", self.ridge), ("width", self.width), ("beta_scale", self.beta_scale), ("l", self.l)]
        {
            check_positive(name, v)?;
        }
        if !(self.log_inv_alpha.is_finite() && self.log_inv_alpha >= 0.0) {
            return Err(Error::invalid("log_inv_alpha", "must be finite and >= 0"));
        }
        Ok(())
    }
}

impl super::LearnerFactory for OnlineLogisticConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn super::Learner>> {
        Ok(Box::new(OnlineLogistic::new(*self, seeds)?))
    }
}

/// Work space (not state).
#[derive(Clone, Debug, Default)]
struct Work {
    scores: Vec<f64>,
    draw: Vec<f64>,
    row: Vec<f64>,
}

/// The recursive-Newton logistic learner (UCB or Thompson sampling).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnlineLogistic {
    config: OnlineLogisticConfig,
    t: u64,
    theta: Vec<f64>,
    /// A = lambda I + sum q x x^T and its inverse.
    a: RankOneInverse,
    /// V = lambda I + sum x x^T and its inverse (UCB only).
    v: RankOneInverse,
    clipped: u64,
    rng: StreamRng,
    #[serde(skip)]
    work: Work,
}

const STATE_VERSION: u8 = 1;

impl OnlineLogistic {
    /// A fresh learner; Thompson draws from `seeds`' `"logistic/sampling"` stream.
    pub fn new(config: OnlineLogisticConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let d = config.d;
        let mut eye = crate::error::try_filled("d", d * d, 0.0)?;
        for i in 0..d {
            eye[i * d + i] = config.ridge;
        }
        let a = RankOneInverse::new(&eye, d, REFACTOR_EVERY)?;
        Ok(OnlineLogistic {
            config,
            t: 0,
            theta: vec![0.0; d],
            v: a.clone(),
            a,
            clipped: 0,
            rng: seeds.stream("logistic/sampling"),
            work: Work::default(),
        })
    }

    pub fn config(&self) -> &OnlineLogisticConfig {
        &self.config
    }

    /// Rewards recorded so far.
    pub fn t(&self) -> u64 {
        self.t
    }

    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// The current estimate theta.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// A = lambda I + sum q x x^T (the Laplace approximation's precision).
    pub fn precision(&self) -> &[f64] {
        self.a.matrix()
    }

    /// beta_t of the UCB rule at the current round.
    pub fn beta(&self) -> f64 {
        let c = &self.config;
        let d = c.d as f64;
        let t = self.t as f64;
        c.beta_scale * c.width * (d / 2.0 * (2.0 * t / d).ln_1p() + c.log_inv_alpha).sqrt()
    }

    /// Scores of every row of `set`: the UCB index, or <x, theta~> of a
    /// fresh posterior draw (Thompson sampling).
    pub fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        let d = self.config.d;
        check_decision_set(set, d)?;
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is used up", self.config.horizon)));
        }
        let mut scores = std::mem::take(&mut self.work.scores);
        scores.clear();
        match self.config.rule {
            GlmRule::Ucb => {
                let beta = self.beta();
                for x in set.features.chunks_exact(d) {
                    let mean: f64 = x.iter().zip(&self.theta).map(|(a, b)| a * b).sum();
                    let q = self.v.inv_quad(x).max(0.0);
                    scores.push(mean + beta * q.sqrt());
                }
            }
            GlmRule::Thompson => {
                let draw = self.draw()?;
                for x in set.features.chunks_exact(d) {
                    scores.push(x.iter().zip(&draw).map(|(a, b)| a * b).sum());
                }
                self.work.draw = draw;
            }
        }
        self.work.scores = scores;
        Ok(&self.work.scores)
    }

    /// theta~ = theta + v C^-T z with A = C C^T and z standard normal, so
    /// that theta~ ~ N(theta, v^2 A^-1).
    fn draw(&mut self) -> Result<Vec<f64>> {
        let d = self.config.d;
        let c = cholesky(self.a.matrix(), d)?;
        let mut z: Vec<f64> = (0..d).map(|_| standard_normal(&mut self.rng)).collect();
        crate::linalg::backward_substitute(&c, d, &mut z);
        let v = self.config.beta_scale;
        Ok(self.theta.iter().zip(&z).map(|(t, z)| t + v * z).collect())
    }

    /// Records the played row `x` and its reward `y` (one Newton step).
    pub fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        let d = self.config.d;
        if x.len() != d {
            return Err(Error::invalid("x", format!("must have d = {d} entries, got {}", x.len())));
        }
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is used up", self.config.horizon)));
        }
        if !all_finite(x) || !y.is_finite() {
            return Err(Error::invalid("x", "the row and the reward must be finite"));
        }
        let l = self.config.l;
        let mut row = std::mem::take(&mut self.work.row);
        row.clear();
        row.extend_from_slice(x);
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        let outside = norm > l * (1.0 + 1e-12) || !(0.0..=1.0).contains(&y);
        if outside && !self.config.clip {
            self.work.row = row;
            return Err(if norm > l * (1.0 + 1e-12) {
                Error::invalid("x", format!("||x|| = {norm} exceeds L = {l}"))
            } else {
                Error::invalid("reward", format!("must lie in [0, 1], got {y}"))
            });
        }
        if norm > l {
            for v in &mut row {
                *v *= l / norm;
            }
        }
        let y = y.clamp(0.0, 1.0);
        let z: f64 = row.iter().zip(&self.theta).map(|(a, b)| a * b).sum();
        let p = logistic(z);
        let q = (p * (1.0 - p)).max(1e-12);
        self.a.update(1.0, q, &row)?;
        if self.config.rule == GlmRule::Ucb {
            self.v.update(1.0, 1.0, &row)?;
        }
        let inv = self.a.inverse();
        let r = y - p;
        for (i, t) in self.theta.iter_mut().enumerate() {
            let s: f64 = inv[i * d..(i + 1) * d].iter().zip(&row).map(|(a, b)| a * b).sum();
            *t += s * r;
        }
        self.work.row = row;
        self.clipped += u64::from(outside);
        self.t += 1;
        Ok(())
    }

    /// Draws future samples from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("logistic/sampling");
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// The engine `to_bytes` wrote; refuses inconsistent state.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let Some((&STATE_VERSION, body)) = bytes.split_first() else {
            return Err(Error::Decode("unknown logistic-learner state version".into()));
        };
        let e: OnlineLogistic = crate::state::decode(body)?;
        e.config.validate().map_err(|err| Error::Decode(format!("invalid logistic-learner configuration: {err}")))?;
        let d = e.config.d;
        let consistent = e.theta.len() == d
            && all_finite(&e.theta)
            && e.a.n() == d
            && e.v.n() == d
            && e.a.matrix().len() == d * d
            && e.v.matrix().len() == d * d
            && e.a.inverse().len() == d * d
            && e.v.inverse().len() == d * d
            && all_finite(e.a.matrix())
            && all_finite(e.v.matrix())
            && all_finite(e.a.inverse())
            && all_finite(e.v.inverse())
            && e.t <= e.config.horizon
            && e.clipped <= e.t
            && e.a.refactor_every() == REFACTOR_EVERY
            && e.v.refactor_every() == REFACTOR_EVERY;
        if !consistent {
            return Err(Error::Decode("inconsistent logistic-learner state".into()));
        }
        // Both matrices must be positive definite (their inverses are kept as
        // stored: a restored engine continues bit for bit).
        for (m, name) in [(&e.a, "A"), (&e.v, "V")] {
            if cholesky(m.matrix(), d).is_err() || cholesky(m.inverse(), d).is_err() {
                return Err(Error::Decode(format!("logistic-learner state: {name} is not positive definite")));
            }
        }
        Ok(e)
    }
}

impl UcbLearner for OnlineLogistic {
    fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        OnlineLogistic::scores(self, set)
    }

    fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        OnlineLogistic::observe(self, x, y)
    }

    fn use_os_entropy(&mut self) -> Result<()> {
        Err(Error::invalid("secure", "this learner has no secure (operating-system entropy) mode"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{DecisionSet, Environment, LogisticContextualEnv};
    use crate::policy::Learner;

    fn config(rule: GlmRule) -> OnlineLogisticConfig {
        OnlineLogisticConfig {
            d: 3,
            horizon: 20_000,
            rule,
            ridge: 1.0,
            width: 0.5 / 0.1,
            log_inv_alpha: 9.9,
            beta_scale: 0.2,
            l: 1.0,
            clip: true,
        }
    }

    #[test]
    fn one_step_is_the_newton_step_of_the_penalized_likelihood() {
        let mut e = OnlineLogistic::new(config(GlmRule::Ucb), &SeedSequence::from_seed(0)).unwrap();
        e.observe(&[0.6, 0.0, 0.8], 1.0).unwrap();
        // From theta = 0: p = 1/2, q = 1/4, A = I + x x^T / 4, theta = A^-1 x / 2
        // = x / (2 (1 + 1/4)) (||x|| = 1).
        for (t, x) in e.theta().iter().zip([0.6, 0.0, 0.8]) {
            assert!((t - x / 2.5).abs() < 1e-15, "{t}");
        }
        let mut e2 = e.clone();
        e2.observe(&[0.0, 1.0, 0.0], 0.0).unwrap();
        assert!(e2.theta()[1] < 0.0);
        assert!(OnlineLogistic::from_bytes(&e2.to_bytes()).unwrap().theta() == e2.theta());
    }

    #[test]
    fn both_rules_learn_the_logistic_environment_and_bad_state_is_refused() {
        for rule in [GlmRule::Ucb, GlmRule::Thompson] {
            let mut e = OnlineLogistic::new(config(rule), &SeedSequence::from_seed(1)).unwrap();
            let mut env = LogisticContextualEnv::new(3, 9, 0.2, 0.75, 2.0, &SeedSequence::from_seed(2)).unwrap();
            let mut set = DecisionSet::default();
            let mut late = 0.0;
            for t in 1..=20_000 {
                env.next_round(t, &mut set).unwrap();
                let i = Learner::select(&mut e, &set).unwrap();
                if t > 18_000 {
                    late += env.regret(i).unwrap();
                }
                let fb = env.feedback(i).unwrap();
                Learner::update(&mut e, &set, i, fb).unwrap();
            }
            // A uniformly random action loses about 0.3 a round here; the learners far less.
            assert!(late < 0.03 * 2000.0, "{rule:?}: {late}");
            let cos: f64 = e.theta().iter().zip(env.theta()).map(|(a, b)| a * b).sum::<f64>()
                / e.theta().iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!(cos > 0.9, "{rule:?}: {cos}");
        }
        let e = OnlineLogistic::new(config(GlmRule::Ucb), &SeedSequence::from_seed(1)).unwrap();
        let mut bad = e.clone();
        bad.theta.push(0.0);
        assert!(OnlineLogistic::from_bytes(&bad.to_bytes()).is_err());
        assert!(OnlineLogistic::from_bytes(&[1, 0, 0]).is_err());
        assert!(OnlineLogistic::from_bytes(&[]).is_err());
    }
}
