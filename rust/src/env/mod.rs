//! Environments: what the learner sees each round and what it gets back.
//!
//! One trait serves the whole catalog: K-armed bandits (a
//! decision set with no features), linear bandits with a changing decision
//! set (a fresh K x d matrix each round), batched elimination over a fixed
//! action set (the same matrix every round) and full-information online
//! learning (feedback is a loss vector over all actions).

pub(crate) mod circle;
pub mod geometry;
pub mod k_armed;
pub mod linear_bandit;
pub mod logistic_contextual;
pub mod losses;
pub mod replay;
pub mod shariff_sheffet;

use crate::error::Result;
use crate::rng::SeedSequence;

pub use geometry::Geometry;
pub use k_armed::{ArmReward, KArmedBandit, KArmedConfig};
pub use linear_bandit::{LinearBanditConfig, LinearBanditEnv};
pub use logistic_contextual::{LogisticContextualConfig, LogisticContextualEnv};
pub use losses::{LossEnv, LossEnvConfig, LossSequence};
pub use replay::{ReplayConfig, ReplayEnv};
pub use shariff_sheffet::{RewardModel, ShariffSheffetConfig, ShariffSheffetEnv};

/// The actions available in one round: `k` rows of `d` features, row-major.
/// `d == 0` for K-armed bandits without features.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DecisionSet {
    pub k: usize,
    pub d: usize,
    pub features: Vec<f64>,
}

impl DecisionSet {
    /// An empty set of `k` actions with `d` features each (zeros).
    pub fn zeros(k: usize, d: usize) -> Self {
        DecisionSet { k, d, features: vec![0.0; k * d] }
    }

    /// Features of action `i`.
    #[inline]
    pub fn action(&self, i: usize) -> &[f64] {
        &self.features[i * self.d..(i + 1) * self.d]
    }
}

/// A decision set read in place (e.g. a caller's NumPy array, without a
/// copy): `k` actions of `d` features, row-major in `features`. What the
/// scoring of the UCB learners reads; [`DecisionSet::rows`] views an owned set.
#[derive(Clone, Copy, Debug)]
pub struct DecisionRows<'a> {
    pub k: usize,
    pub d: usize,
    pub features: &'a [f64],
}

impl DecisionSet {
    /// This set, borrowed.
    #[inline]
    pub fn rows(&self) -> DecisionRows<'_> {
        DecisionRows { k: self.k, d: self.d, features: &self.features }
    }
}

/// What the learner observes after acting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feedback<'a> {
    /// Bandit feedback: the reward of the chosen action.
    Reward(f64),
    /// Full information: the loss of every action this round.
    Losses(&'a [f64]),
}

/// A sequential decision problem.
///
/// Each round the loop calls [`Environment::next_round`] once (which writes
/// the round's actions into the loop's buffer), lets the learner choose,
/// then calls [`Environment::regret`] and [`Environment::feedback`] once
/// each for the chosen index. Environments draw
/// contexts and reward noise from their own streams, never from the
/// learner's, so two learners run on the same seed face the same contexts
/// and reward noise (common random numbers).
///
/// `Any` as a supertrait lets the simulation loop recognise the
/// environments it runs in an instantiation of its own (see
/// `sim::run_shared_episode`).
pub trait Environment: Send + std::any::Any {
    /// Number of features per action (0 for plain K-armed bandits).
    fn dim(&self) -> usize;

    /// Number of actions per round.
    fn num_actions(&self) -> usize;

    /// Writes the decision set of round `t` (1-indexed) into `set`.
    fn next_round(&mut self, t: u64, set: &mut DecisionSet) -> Result<()>;

    /// Realized feedback of choosing `index` in the current round.
    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>>;

    /// Bandit rewards of several learners acting on the same round, one per
    /// entry of `indices`, written to `out`. All share the round's single
    /// draw of reward noise (common random numbers), so each learner gets
    /// exactly the reward it would get running alone on the same seed.
    /// Environments without bandit rewards, or that cannot share a round,
    /// keep the default, which serves one learner only.
    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        match (indices, out) {
            ([index], [y]) => match self.feedback(*index)? {
                Feedback::Reward(r) => {
                    *y = r;
                    Ok(())
                }
                Feedback::Losses(_) => {
                    Err(crate::error::Error::State("full-information feedback has no reward".into()))
                }
            },
            _ => Err(crate::error::Error::State("this environment serves one learner per round".into())),
        }
    }

    /// The indices the learners played this round, one per learner, after
    /// every learner selected and before any feedback: what an adaptive
    /// adversary reads to choose its next losses. The default ignores them
    /// (the environment's sequence does not depend on the plays).
    fn observe_plays(&mut self, _indices: &[usize]) -> Result<()> {
        Ok(())
    }

    /// Pseudo-regret of choosing `index` in the current round:
    /// max_a E[reward of a] - E[reward of index]. `None` when unknown.
    fn regret(&self, index: usize) -> Option<f64>;

    /// The current round's loss vector (one entry per action), for
    /// full-information learners (those whose `Learner::full_information`
    /// is true; the simulation loop asks).
    /// `None` (the default) for environments that only give bandit rewards.
    fn losses(&self) -> Option<&[f64]> {
        None
    }

    /// The convex decision set X whose points this environment scores
    /// (online linear optimization, Agarwal & Singh §2), for learners that
    /// play points (`Learner::point_geometry`). `None` (the
    /// default): decisions are indices of the decision set only.
    fn point_geometry(&self) -> Option<Geometry> {
        None
    }

    /// <l_t, x>: the current round's loss of the point `x` of X.
    fn point_loss(&self, _x: &[f64]) -> Result<f64> {
        Err(crate::error::Error::State("this environment does not score points".into()))
    }

    /// The current round's term of the regret of playing the point `x`
    /// against the best fixed point of X in hindsight; the terms of rounds
    /// 1..t sum to that regret at t (see `env/losses.rs`).
    fn point_regret(&self, _x: &[f64]) -> Result<f64> {
        Err(crate::error::Error::State("this environment does not score points".into()))
    }
}

/// An environment configuration that builds a fresh instance per replicate.
pub trait EnvironmentFactory: Send + Sync {
    /// A fresh environment whose random streams derive from `seeds`.
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>>;
}

/// A boxed environment is an environment (the simulation loop builds
/// environments through [`EnvironmentFactory`]).
impl<E: Environment + ?Sized> Environment for Box<E> {
    fn dim(&self) -> usize {
        (**self).dim()
    }

    fn num_actions(&self) -> usize {
        (**self).num_actions()
    }

    fn next_round(&mut self, t: u64, set: &mut DecisionSet) -> Result<()> {
        (**self).next_round(t, set)
    }

    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>> {
        (**self).feedback(index)
    }

    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        (**self).shared_rewards(indices, out)
    }

    fn observe_plays(&mut self, indices: &[usize]) -> Result<()> {
        (**self).observe_plays(indices)
    }

    fn regret(&self, index: usize) -> Option<f64> {
        (**self).regret(index)
    }

    fn losses(&self) -> Option<&[f64]> {
        (**self).losses()
    }

    fn point_geometry(&self) -> Option<Geometry> {
        (**self).point_geometry()
    }

    fn point_loss(&self, x: &[f64]) -> Result<f64> {
        (**self).point_loss(x)
    }

    fn point_regret(&self, x: &[f64]) -> Result<f64> {
        (**self).point_regret(x)
    }
}
