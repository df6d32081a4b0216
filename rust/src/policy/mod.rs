//! Learners: the engines behind the Python learner classes.
//!
//! A learner sees a [`DecisionSet`], returns the index it plays, and is told
//! the [`Feedback`] for it. The one simulation loop (`crate::sim`) drives
//! every learner of the catalog through this trait, whatever the family.

pub mod bai;
pub mod bai_fixed_budget;
pub mod bai_stop;
pub mod batched_bandit;
pub mod dartboard_experts;
pub mod delayed;
pub mod elimination;
mod exact_draws;
pub mod exp2;
pub mod experts_stochastic;
pub mod follow_the_leader;
pub mod lattice_ball;
pub mod lazy_ball;
pub mod lazy_experts;
pub mod linear_policy;
pub mod linucb;
pub mod linucb_trust;
pub mod logistic;
mod loss_batches;
pub mod mab;
pub mod max_det;
pub mod mt_contextual;
pub mod phased_mab;
pub mod reweighted_glm;
pub mod reweighted_linucb;
pub mod scrible;
pub mod ucb_scores;

use crate::env::{DecisionRows, DecisionSet, Feedback};
use crate::error::Result;
use crate::rng::SeedSequence;
use serde::{Deserialize, Serialize};

pub use crate::env::Geometry;
pub use batched_bandit::{BatchedExp3, BatchedExp3Config};
pub use dartboard_experts::{DartboardExperts, DartboardExpertsConfig};
pub use exp2::{Exp2, Exp2Config};
pub use experts_stochastic::{StochasticExperts, StochasticExpertsConfig};
pub use follow_the_leader::{FollowTheLeader, FollowTheLeaderConfig, LeaderRule};
pub use lazy_ball::{BallLattice, LazyBall, LazyBallConfig};
pub use lazy_experts::{LazyExperts, LazyExpertsConfig};
pub use linucb::{BoundsPolicy, InputBounds, LinUcb, LinUcbConfig, Radius, Statistics};
pub use linucb_trust::{ReportPrivatizer, TrustLinUcb, TrustLinUcbConfig, TrustRadius};
pub use mab::{Mab, MabConfig, MabIndex, MabStatistics, Phases, RewardPolicy, RewardRange};
pub use mt_contextual::{ContextualRule, MtContextual, MtContextualConfig};
pub use scrible::{Scrible, ScribleConfig};

/// The index of the largest score; ties go to the lowest index (strict
/// comparison), as every UCB-type learner here breaks them.
pub(crate) fn first_argmax(scores: &[f64]) -> usize {
    let (mut best, mut best_score) = (0, f64::NEG_INFINITY);
    for (i, &s) in scores.iter().enumerate() {
        if s > best_score {
            best_score = s;
            best = i;
        }
    }
    best
}

/// The choice among the rows of a decision set while a learner has no
/// released statistics to read (before its first release).
///
/// Until then every row's score is the prior's (Shariff & Sheffet 2018,
/// Alg. 1 with theta = 0: beta ||x||_{V^{-1}} with V a multiple of the
/// identity), so the scores tie up to the floating-point rounding of
/// ||x||, and a first-index argmax would let that rounding pick the row:
/// a choice correlated with the instance (on the D.2 instance with the
/// optimal row), not the algorithm's. The learner plays a row uniformly
/// at random instead, from this dedicated seeded stream (derived from the
/// learner's root like its other non-noise streams, never its privacy
/// noise generator, which it neither reads nor advances). Such a
/// decision reads no data, so it costs no privacy. The stream's state is
/// part of the engine's serialized state, and restores for continued use
/// and forks re-key it with the learner's other streams.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PreReleaseChoice {
    rng: crate::rng::StreamRng,
}

impl PreReleaseChoice {
    /// The stream `name` of `seeds`.
    pub(crate) fn new(seeds: &SeedSequence, name: &str) -> Self {
        PreReleaseChoice { rng: seeds.stream(name) }
    }

    /// A row of a set of `k` rows (k >= 1), uniformly at random.
    pub(crate) fn pick(&mut self, k: usize) -> usize {
        use rand::Rng;
        self.rng.random_range(0..k as u64) as usize
    }
}

/// A decision set of `d` features and at least one action.
pub(crate) fn check_decision_set(set: DecisionRows<'_>, d: usize) -> Result<()> {
    use crate::error::Error;
    if set.d != d {
        return Err(Error::invalid("decision_set", format!("actions must have d = {d} features, got {}", set.d)));
    }
    if set.k == 0 {
        return Err(Error::invalid("decision_set", "must hold at least one action"));
    }
    Ok(())
}

/// The played action and its reward, for learners that take bandit
/// feedback: `index` checked against `set`, full-information feedback
/// refused naming `who`.
pub(crate) fn played_reward<'a>(
    set: &'a DecisionSet,
    index: usize,
    feedback: Feedback<'_>,
    who: &str,
) -> Result<(&'a [f64], f64)> {
    use crate::error::Error;
    if index >= set.k {
        return Err(Error::invalid("index", format!("must be < {}, got {index}", set.k)));
    }
    match feedback {
        Feedback::Reward(y) => Ok((set.action(index), y)),
        Feedback::Losses(_) => Err(Error::invalid("feedback", format!("{who}takes bandit feedback (a reward)"))),
    }
}

/// A learner that plays the first maximum of its scores of the actions
/// and learns from the played action's features and reward (LinUCB and the
/// trust-model learners): its [`Learner`] implementation is this one.
pub(crate) trait UcbLearner: Send + 'static {
    /// Checks `set` (and that rounds are left) and scores its actions, in
    /// order. A borrowed set: the Python binding scores a NumPy array in place.
    fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]>;

    /// Learns from the played action's features `x` and reward `y`.
    fn observe(&mut self, x: &[f64], y: f64) -> Result<()>;

    /// As [`Learner::use_os_entropy`].
    fn use_os_entropy(&mut self) -> Result<()>;

    /// The row to play in a set of `k` rows instead of the first maximum,
    /// for a learner that has no released statistics to read yet (see
    /// [`PreReleaseChoice`]); `None` (the default): the first maximum.
    /// Called once per selection, after the set was scored and accepted.
    fn pre_release_choice(&mut self, _k: usize) -> Option<usize> {
        None
    }
}

impl<T: UcbLearner> Learner for T {
    fn use_os_entropy(&mut self) -> Result<()> {
        UcbLearner::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        let best = first_argmax(self.scores(set.rows())?);
        Ok(self.pre_release_choice(set.k).unwrap_or(best))
    }

    fn update(&mut self, set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
        let (x, y) = played_reward(set, index, feedback, "LinUCB ")?;
        UcbLearner::observe(self, x, y)
    }
}

/// Plays `a` and `b` side by side on `env` over `rounds` (both told the
/// reward of `a`'s action), asserting the same action every round and,
/// with `same_scores`, the same scores to the bit.
#[cfg(test)]
pub(crate) fn assert_same_play<A: UcbLearner, B: UcbLearner>(
    a: &mut A,
    b: &mut B,
    env: &mut impl crate::env::Environment,
    rounds: std::ops::RangeInclusive<u64>,
    same_scores: bool,
) {
    let mut set = DecisionSet::default();
    for t in rounds {
        env.next_round(t, &mut set).unwrap();
        let sa = a.scores(set.rows()).unwrap();
        let sb = b.scores(set.rows()).unwrap();
        let i = first_argmax(sa);
        assert_eq!(i, first_argmax(sb), "round {t}");
        if same_scores {
            assert_eq!(sa, sb, "round {t}");
        }
        let fb = env.feedback(i).unwrap();
        Learner::update(a, &set, i, fb).unwrap();
        Learner::update(b, &set, i, fb).unwrap();
    }
}

/// Plays `learner` on `env` (K = 9 actions a round) for `rounds` rounds
/// and checks its choice: while `released` is false, uniform over the
/// rows (Pearson's chi-square statistic of the played indices against
/// chi2_8 at significance 1e-6: scipy.stats.chi2.isf(1e-6, 8) = 42.7009;
/// a first-index argmax of the prior's near-tied scores puts its plays on
/// few indices and fails it), and the learner's privacy noise stream
/// untouched by those choices (`noise_state`, compared with a copy that
/// selected nothing); once `released`, the first maximum of its scores.
/// Returns (pre-release rounds, post-release rounds).
#[cfg(test)]
pub(crate) fn assert_uniform_before_release<L: UcbLearner + Clone>(
    learner: &mut L,
    env: &mut impl crate::env::Environment,
    rounds: u64,
    released: impl Fn(&L) -> bool,
    noise_state: impl Fn(&L) -> Vec<u8>,
) -> (u64, u64) {
    let mut set = DecisionSet::default();
    let (mut counts, mut before, mut after) = ([0u64; 9], 0, 0);
    for t in 1..=rounds {
        env.next_round(t, &mut set).unwrap();
        assert_eq!(set.k, 9);
        let i = if released(learner) {
            let best = first_argmax(learner.scores(set.rows()).unwrap());
            let i = Learner::select(learner, &set).unwrap();
            assert_eq!(i, best, "round {t}");
            after += 1;
            i
        } else {
            let untouched = learner.clone();
            let i = Learner::select(learner, &set).unwrap();
            assert_eq!(noise_state(learner), noise_state(&untouched), "round {t}");
            counts[i] += 1;
            before += 1;
            i
        };
        let fb = env.feedback(i).unwrap();
        Learner::update(learner, &set, i, fb).unwrap();
    }
    let expected = before as f64 / 9.0;
    let chi2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
    assert!(chi2 < 42.7009, "chi-square {chi2} over {before} pre-release choices: {counts:?}");
    (before, after)
}

/// A sequential decision maker.
///
/// `Any` as a supertrait lets the simulation loop recognise the engines it
/// runs in an instantiation of its own (see `sim::run_shared_episode`).
pub trait Learner: Send + std::any::Any {
    /// The index of the action played in `set`.
    fn select(&mut self, set: &DecisionSet) -> Result<usize>;

    /// Feedback for playing `index` in `set` (the set passed to the last
    /// `select`, or any set when replaying logged data).
    fn update(&mut self, set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()>;

    /// True for full-information learners: the simulation loop then passes
    /// the round's whole loss vector ([`Feedback::Losses`], from
    /// [`crate::env::Environment::losses`]) instead of the played reward.
    fn full_information(&self) -> bool {
        false
    }

    /// The decision set X of a learner that plays points of X (online
    /// linear optimization over the ball or the cube, Agarwal & Singh §2)
    /// rather than indices; `None` (the default) for index learners. The
    /// simulation loop pairs it with [`crate::env::Environment::point_geometry`].
    fn point_geometry(&self) -> Option<Geometry> {
        None
    }

    /// Draws every privacy noise value from the operating system from now
    /// on (secure mode; before the first round). Learners without privacy
    /// noise, or without a secure mode, refuse.
    fn use_os_entropy(&mut self) -> Result<()> {
        Err(crate::error::Error::invalid("secure", "this learner has no secure (operating-system entropy) mode"))
    }

    /// The point played this round, valid between `select` (which then
    /// returns index 0: the index carries nothing) and `update`. `None`
    /// for index learners.
    fn played_point(&self) -> Option<&[f64]> {
        None
    }
}

/// A learner configuration that builds a fresh engine for each replicate.
///
/// Every engine of the catalog implements this for its (plain-number)
/// configuration, so one binding (`simulate_builtin`) runs any learner on
/// any built-in environment without knowing either type.
pub trait LearnerFactory: Send + Sync {
    /// The horizon the learner was calibrated for (a simulation may not
    /// run longer: the privacy guarantee is for that many rounds).
    fn horizon(&self) -> u64;

    /// A fresh engine whose random streams derive from `seeds`.
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>>;
}

/// A factory whose learners draw their privacy noise from the operating
/// system (secure mode): each replicate is built by the inner factory, then
/// switched with [`Learner::use_os_entropy`]. Such runs cannot be
/// reproduced.
pub struct OsEntropyFactory<F>(pub F);

impl<F: LearnerFactory> LearnerFactory for OsEntropyFactory<F> {
    fn horizon(&self) -> u64 {
        self.0.horizon()
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        let mut learner = self.0.build(seeds)?;
        learner.use_os_entropy()?;
        Ok(learner)
    }
}
