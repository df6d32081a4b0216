//! Stochastic K-armed bandits: Bernoulli and Gaussian arms (the instances
//! of Mishra & Thakurta 2015, §5, and the MAB of Shariff & Sheffet §5).
//!
//! The decision set has `k` actions and no features (`d = 0`). Arm `a`
//! pays Bernoulli(mu_a) or N(mu_a, sigma^2). Each round draws ONE uniform
//! (Bernoulli: arm a pays 1 when u < mu_a) or ONE standard normal z
//! (Gaussian: arm a pays mu_a + sigma z), shared by every arm: each arm's
//! rewards are i.i.d. over rounds with the stated law, which is all a
//! bandit learner (seeing one arm per round) can observe, and every learner
//! run on the same seed meets the same draws (common random numbers).
//!
//! The draws come from the `"environment/rewards"` stream as a
//! [`SimulationRng`] (xoshiro256++, keyed by the seed's ChaCha derivation):
//! fast, not cryptographic, and never a source of privacy noise (the
//! learners draw theirs from their own ChaCha8 streams with exact
//! samplers). A Bernoulli round uses the word's top 53 bits as a uniform on
//! [0, 1); the simulation loop's phase runs draw the same words and compare
//! them as integers ([`KArmedBandit::bernoulli_pull`]).

use rand::Rng;
use rand_core::RngCore;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use super::{DecisionSet, Environment, Feedback};
use crate::error::{check_finite, check_positive, Error, Result};
use crate::rng::{SeedSequence, SimulationRng};

/// The law of each arm's reward given its mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ArmReward {
    /// Bernoulli(mu_a): means in [0, 1].
    Bernoulli,
    /// N(mu_a, sigma^2).
    Gaussian { sigma: f64 },
}

/// What a simulation needs to build one instance per replicate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KArmedConfig {
    pub means: Vec<f64>,
    pub reward: ArmReward,
}

impl KArmedConfig {
    /// Checks the means and the reward law.
    pub fn validate(&self) -> Result<()> {
        if self.means.is_empty() {
            return Err(Error::invalid("means", "give at least one arm"));
        }
        check_finite("means", &self.means)?;
        match self.reward {
            ArmReward::Bernoulli => {
                if let Some(m) = self.means.iter().find(|m| !(0.0..=1.0).contains(*m)) {
                    return Err(Error::invalid("means", format!("Bernoulli means must lie in [0, 1], got {m}")));
                }
            }
            ArmReward::Gaussian { sigma } => check_positive("sigma", sigma)?,
        }
        Ok(())
    }
}

impl super::EnvironmentFactory for KArmedConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(KArmedBandit::new(self.clone(), seeds)?))
    }
}

/// A stochastic K-armed bandit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KArmedBandit {
    config: KArmedConfig,
    best: f64,
    rewards: SimulationRng,
}

impl KArmedBandit {
    /// A new instance drawing rewards from `seeds`' `"environment/rewards"` stream.
    pub fn new(config: KArmedConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let best = config.means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Ok(KArmedBandit { config, best, rewards: seeds.simulation_stream("environment/rewards") })
    }

    /// The configuration (for the simulation factory).
    pub fn config(&self) -> &KArmedConfig {
        &self.config
    }

    /// Serialized state (generator included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an environment written by [`KArmedBandit::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let env: KArmedBandit = crate::state::decode(bytes)?;
        env.config.validate().map_err(|e| Error::Decode(e.to_string()))?;
        Ok(env)
    }
}

impl KArmedBandit {
    /// For a Bernoulli arm, the integer cut c = ceil(mu_a 2^53) with which
    /// [`KArmedBandit::bernoulli_pull`] draws its rewards; `None` for
    /// Gaussian arms or an index out of range.
    pub fn bernoulli_cut(&self, arm: usize) -> Option<u64> {
        let mu = *self.config.means.get(arm)?;
        match self.config.reward {
            // mu 2^53 is exact (a power-of-two scaling of mu in [0, 1]).
            ArmReward::Bernoulli => Some((mu * UNIT_SCALE).ceil() as u64),
            ArmReward::Gaussian { .. } => None,
        }
    }

    /// One round's reward (0 or 1) of the Bernoulli arm whose cut is `cut`
    /// ([`KArmedBandit::bernoulli_cut`]), from the round's draw: the same
    /// word and the same reward as [`Environment::shared_rewards`] gives
    /// that arm. There the reward is 1{u < mu} with u = m 2^-53, m the
    /// word's top 53 bits; for an integer m, m 2^-53 < mu exactly when
    /// m < ceil(mu 2^53), so the comparison is one of integers. For the
    /// simulation loop's phase runs, where the rewards of one arm are
    /// drawn in a row.
    #[allow(clippy::inline_always)] // the whole round of a phase run
    #[inline(always)]
    pub fn bernoulli_pull(&mut self, cut: u64) -> u64 {
        u64::from((self.rewards.next_u64() >> 11) < cut)
    }

    /// The reward of pulling `arm` alone this round: the draw and the value
    /// of [`Environment::shared_rewards`] with the one index `arm`.
    #[allow(clippy::inline_always)] // the whole round of a phase run
    #[inline(always)]
    pub fn pull(&mut self, arm: usize) -> Result<f64> {
        let mut y = [0.0];
        self.shared_rewards(&[arm], &mut y)?;
        Ok(y[0])
    }
}

/// 2^53: the resolution of the uniforms of the Bernoulli draws.
const UNIT_SCALE: f64 = 9_007_199_254_740_992.0;

impl Environment for KArmedBandit {
    fn dim(&self) -> usize {
        0
    }

    fn num_actions(&self) -> usize {
        self.config.means.len()
    }

    #[inline]
    fn next_round(&mut self, _t: u64, set: &mut DecisionSet) -> Result<()> {
        let k = self.config.means.len();
        if set.k != k || set.d != 0 {
            *set = DecisionSet::zeros(k, 0);
        }
        Ok(())
    }

    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>> {
        let mut y = [0.0];
        self.shared_rewards(&[index], &mut y)?;
        Ok(Feedback::Reward(y[0]))
    }

    #[allow(clippy::inline_always)] // into the loop's K-armed instantiation (sim::run_shared_episode)
    #[inline(always)]
    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        let means = &self.config.means;
        if let Some(&bad) = indices.iter().find(|&&i| i >= means.len()) {
            return Err(Error::invalid("index", format!("must be < {}, got {bad}", means.len())));
        }
        // One draw a round, shared by every learner: Bernoulli rewards are
        // 1{u < mu_a}, Gaussian ones mu_a + sigma z (common random numbers).
        match self.config.reward {
            ArmReward::Bernoulli => {
                let u = crate::rng::unit_f64(&mut self.rewards);
                for (y, &i) in out.iter_mut().zip(indices) {
                    *y = f64::from(u8::from(u < means[i]));
                }
            }
            ArmReward::Gaussian { sigma } => {
                let z: f64 = self.rewards.sample(StandardNormal);
                for (y, &i) in out.iter_mut().zip(indices) {
                    *y = means[i] + sigma * z;
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn regret(&self, index: usize) -> Option<f64> {
        self.config.means.get(index).map(|m| self.best - m)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_rewards_have_the_stated_means() {
        let config = KArmedConfig { means: vec![0.9, 0.5, 0.1], reward: ArmReward::Bernoulli };
        let mut env = KArmedBandit::new(config, &SeedSequence::from_seed(1)).unwrap();
        let n = 40_000;
        let mut sums = [0.0; 3];
        for _ in 0..n {
            let mut out = [0.0; 3];
            env.shared_rewards(&[0, 1, 2], &mut out).unwrap();
            for (s, y) in sums.iter_mut().zip(out) {
                assert!(y == 0.0 || y == 1.0);
                *s += y;
            }
        }
        for (s, mu) in sums.iter().zip([0.9, 0.5, 0.1]) {
            // 5 standard errors of a Bernoulli mean.
            let se = (mu * (1.0 - mu) / f64::from(n)).sqrt();
            assert!((s / f64::from(n) - mu).abs() < 5.0 * se, "{s} vs {mu}");
        }
        assert!((env.regret(2).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(env.regret(0), Some(0.0));
    }

    /// The integer draw of the phase runs gives the reward of the
    /// floating-point comparison from the same word: for means at the
    /// edges (0, 1, the smallest and largest below 1, halves, values
    /// between two uniforms' grid points) and words whose top 53 bits
    /// fall on, just below and just above each mean's cut.
    #[test]
    fn bernoulli_pulls_equal_the_shared_rewards() {
        let means = vec![0.0, 1.0, f64::MIN_POSITIVE, 5e-324, 1.0 - f64::EPSILON / 2.0, 0.5, 0.3, 0.75, 1.0 / 3.0];
        let config = KArmedConfig { means: means.clone(), reward: ArmReward::Bernoulli };
        let env = KArmedBandit::new(config.clone(), &SeedSequence::from_seed(3)).unwrap();
        for (arm, &mu) in means.iter().enumerate() {
            let cut = env.bernoulli_cut(arm).unwrap();
            for m in [0, 1, cut.saturating_sub(1), cut, cut + 1, (1 << 53) - 1] {
                let m = m.min((1 << 53) - 1);
                let u = m as f64 * (1.0 / (1u64 << 53) as f64);
                assert_eq!(m < cut, u < mu, "mean {mu}, m {m}");
            }
        }
        assert_eq!(env.bernoulli_cut(means.len()), None);
        let gaussian = KArmedConfig { means: vec![0.5], reward: ArmReward::Gaussian { sigma: 1.0 } };
        assert_eq!(KArmedBandit::new(gaussian, &SeedSequence::from_seed(3)).unwrap().bernoulli_cut(0), None);
        // Drawn in a row, the same rewards from the same stream.
        let (mut a, mut b) = (env.clone(), env);
        for round in 0..20_000 {
            let arm = round % means.len();
            let cut = a.bernoulli_cut(arm).unwrap();
            assert_eq!(a.bernoulli_pull(cut) as f64, b.pull(arm).unwrap());
        }
        assert_eq!(a.to_bytes(), b.to_bytes());
    }

    #[test]
    fn gaussian_rewards_and_bad_configs() {
        let config = KArmedConfig { means: vec![1.0, -1.0], reward: ArmReward::Gaussian { sigma: 2.0 } };
        let mut env = KArmedBandit::new(config, &SeedSequence::from_seed(2)).unwrap();
        let n = 20_000;
        let ys: Vec<f64> = (0..n)
            .map(|_| match env.feedback(1).unwrap() {
                Feedback::Reward(y) => y,
                Feedback::Losses(_) => unreachable!(),
            })
            .collect();
        let mean = ys.iter().sum::<f64>() / f64::from(n);
        assert!((mean + 1.0).abs() < 5.0 * 2.0 / f64::from(n).sqrt(), "mean {mean}");
        let bad =
            |means: Vec<f64>, reward| KArmedBandit::new(KArmedConfig { means, reward }, &SeedSequence::from_seed(0));
        assert!(bad(vec![], ArmReward::Bernoulli).is_err());
        assert!(bad(vec![1.5], ArmReward::Bernoulli).is_err());
        assert!(bad(vec![f64::NAN], ArmReward::Gaussian { sigma: 1.0 }).is_err());
        assert!(bad(vec![0.5], ArmReward::Gaussian { sigma: 0.0 }).is_err());
        assert!(env.feedback(2).is_err());
    }
}
