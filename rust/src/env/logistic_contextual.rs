//! A contextual bandit with logistic (Bernoulli) rewards on the decision
//! sets of Shariff & Sheffet 2018, App. D.
//!
//! The decision sets are those of [`ShariffSheffetEnv`] (theta* uniform on
//! the unit sphere, one optimal action with <x, theta*> = r*, the others in
//! the band [-r*, r* - gap]); the reward of action x is y in {0, 1} with
//! P(y = 1) = mu(s <x, theta*>), mu(z) = 1 / (1 + e^-z) the logistic link
//! and s > 0 the `scale` (a generalized linear model, Filippi, Cappé,
//! Garivier & Szepesvári 2010, Sec. 2; Li, Lu & Zhou 2017, Sec. 2). The
//! pseudo-regret of x is mu(s r*) - mu(s <x, theta*>). The contexts come
//! from the inner environment's streams and the rewards from one uniform
//! per round of `"environment/logistic-rewards"`, shared by every learner
//! of the round (common random numbers).

use rand::Rng;

use super::{DecisionSet, Environment, Feedback, RewardModel, ShariffSheffetEnv};
use crate::error::{Error, Result};
use crate::rng::{SeedSequence, SimulationRng};

/// Largest link scale accepted (mu(s) is 1 to double precision well below).
pub const MAX_SCALE: f64 = 1e6;

/// Parameters of the logistic environment: what a simulation needs to
/// build one instance per replicate.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LogisticContextualConfig {
    pub d: usize,
    pub k: usize,
    pub gap: f64,
    pub optimal_reward: f64,
    pub scale: f64,
}

impl super::EnvironmentFactory for LogisticContextualConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(LogisticContextualEnv::new(self.d, self.k, self.gap, self.optimal_reward, self.scale, seeds)?))
    }
}

/// The logistic link mu(z) = 1 / (1 + e^-z), without overflow for any z.
#[inline]
pub fn logistic(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// App. D's decision sets with Bernoulli(mu(s <x, theta*>)) rewards.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LogisticContextualEnv {
    inner: ShariffSheffetEnv,
    scale: f64,
    rewards: SimulationRng,
}

impl LogisticContextualEnv {
    /// A new instance: contexts and theta* as [`ShariffSheffetEnv::new`]
    /// draws them from `seeds`, rewards from `"environment/logistic-rewards"`.
    pub fn new(d: usize, k: usize, gap: f64, optimal_reward: f64, scale: f64, seeds: &SeedSequence) -> Result<Self> {
        if !(scale.is_finite() && scale > 0.0 && scale <= MAX_SCALE) {
            return Err(Error::invalid("scale", format!("must lie in (0, {MAX_SCALE:e}], got {scale}")));
        }
        let inner = ShariffSheffetEnv::new(d, k, gap, optimal_reward, RewardModel::PlusMinusOne, seeds)?;
        Ok(LogisticContextualEnv { inner, scale, rewards: seeds.simulation_stream("environment/logistic-rewards") })
    }

    /// The parameters the instance was built with.
    pub fn config(&self) -> LogisticContextualConfig {
        let c = self.inner.config();
        LogisticContextualConfig { d: c.d, k: c.k, gap: c.gap, optimal_reward: c.optimal_reward, scale: self.scale }
    }

    /// The hidden parameter theta*.
    pub fn theta(&self) -> &[f64] {
        self.inner.theta()
    }

    /// <x, theta*> of the current decision set's actions.
    pub fn dots(&self) -> &[f64] {
        self.inner.means()
    }

    /// Mean rewards mu(s <x, theta*>) of the current decision set.
    pub fn means(&self) -> Vec<f64> {
        self.dots().iter().map(|&m| logistic(self.scale * m)).collect()
    }

    /// Serialized state (generators included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(&(self.inner.to_bytes(), self.scale, &self.rewards))
    }

    /// Restores an environment written by [`LogisticContextualEnv::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (inner, scale, rewards): (Vec<u8>, f64, SimulationRng) = crate::state::decode(bytes)?;
        if !(scale.is_finite() && scale > 0.0 && scale <= MAX_SCALE) {
            return Err(Error::Decode("inconsistent environment state (scale)".into()));
        }
        Ok(LogisticContextualEnv { inner: ShariffSheffetEnv::from_bytes(&inner)?, scale, rewards })
    }
}

impl Environment for LogisticContextualEnv {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn num_actions(&self) -> usize {
        self.inner.num_actions()
    }

    fn next_round(&mut self, t: u64, set: &mut DecisionSet) -> Result<()> {
        self.inner.next_round(t, set)
    }

    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>> {
        let mut y = [0.0];
        self.shared_rewards(&[index], &mut y)?;
        Ok(Feedback::Reward(y[0]))
    }

    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        let k = self.num_actions();
        if let Some(&bad) = indices.iter().find(|&&i| i >= k) {
            return Err(Error::invalid("index", format!("must be < {k}, got {bad}")));
        }
        // One uniform per round: y = 1 when it falls below mu(s <x, theta*>).
        let u = self.rewards.random::<f64>();
        let dots = self.inner.means();
        for (y, &i) in out.iter_mut().zip(indices) {
            *y = if u < logistic(self.scale * dots[i]) { 1.0 } else { 0.0 };
        }
        Ok(())
    }

    fn regret(&self, index: usize) -> Option<f64> {
        let best = logistic(self.scale * self.inner.config().optimal_reward);
        self.dots().get(index).map(|&m| best - logistic(self.scale * m))
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values: the link's ends, {0, 1} rewards, r*
mod tests {
    use super::*;

    fn env(seed: u64) -> LogisticContextualEnv {
        LogisticContextualEnv::new(4, 8, 0.1, 0.75, 2.0, &SeedSequence::from_seed(seed)).unwrap()
    }

    #[test]
    fn link_is_stable_at_both_ends() {
        assert_eq!(logistic(0.0), 0.5);
        assert!(logistic(-800.0) >= 0.0 && logistic(-800.0) < 1e-300);
        assert_eq!(logistic(800.0), 1.0);
        assert!((logistic(1.0) + logistic(-1.0) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn rewards_are_bernoulli_with_the_logistic_mean() {
        let mut e = env(3);
        let mut set = DecisionSet::default();
        let (mut sum, mut mean, n) = (0.0, 0.0, 40_000);
        for t in 1..=n {
            e.next_round(t, &mut set).unwrap();
            mean += e.means()[0];
            match e.feedback(0).unwrap() {
                Feedback::Reward(y) => {
                    assert!(y == 0.0 || y == 1.0);
                    sum += y;
                }
                Feedback::Losses(_) => unreachable!(),
            }
        }
        // Bernoulli sums: sd <= 0.5 sqrt(n) = 100; 5 sd.
        assert!((sum - mean).abs() < 500.0, "sum {sum} vs expected {mean}");
    }

    #[test]
    fn regret_is_zero_at_the_optimum_and_positive_elsewhere() {
        let mut e = env(5);
        let mut set = DecisionSet::default();
        e.next_round(1, &mut set).unwrap();
        let dots = e.dots().to_vec();
        for (i, &m) in dots.iter().enumerate() {
            let r = e.regret(i).unwrap();
            if m == 0.75 {
                assert_eq!(r, 0.0);
            } else {
                assert!(r > 0.0);
            }
        }
        assert!(e.regret(8).is_none());
    }

    #[test]
    fn state_round_trips_and_bad_scale_is_refused() {
        let mut e = env(7);
        let mut set = DecisionSet::default();
        e.next_round(1, &mut set).unwrap();
        let mut back = LogisticContextualEnv::from_bytes(&e.to_bytes()).unwrap();
        let (mut s1, mut s2) = (DecisionSet::default(), DecisionSet::default());
        e.next_round(2, &mut s1).unwrap();
        back.next_round(2, &mut s2).unwrap();
        assert_eq!(s1, s2);
        assert_eq!(e.feedback(1).unwrap(), back.feedback(1).unwrap());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e6] {
            assert!(LogisticContextualEnv::new(4, 8, 0.1, 0.75, bad, &SeedSequence::from_seed(0)).is_err());
        }
        assert!(LogisticContextualEnv::from_bytes(&[1, 2, 3]).is_err());
    }
}
