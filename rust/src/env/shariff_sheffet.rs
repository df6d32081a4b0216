//! The synthetic contextual linear bandit of Shariff & Sheffet 2018, App. D.
//!
//! theta* is uniform on the unit sphere of R^d. Each round brings a fresh
//! decision set of `k` unit actions: one optimal action uniform on
//! {||x|| = 1, <x, theta*> = r*} (r* = 0.75 in the paper) and k - 1
//! suboptimal actions uniform on {||x|| = 1, <x, theta*> in [-r*, r* - gap]}
//! (gap 0.1 in D.1 and the right half of D.2; 0 in the left half). The
//! optimal action sits at a uniformly random index so that argmax
//! tie-breaking cannot favour it. Rewards are +-1 with mean <x, theta*>
//! (sigma^2 = 1 subgaussian, |y| <= 1) or Gaussian N(<x, theta*>, 1)
//! (D.1's second sub-experiment; unbounded, so a private learner clips it).

use rand::Rng;
use rand_distr::StandardNormal;

use super::{DecisionSet, Environment, Feedback};
use crate::error::{Error, Result};
use crate::rng::{SeedSequence, SimulationRng};

/// Reward distribution given the mean mu = <x, theta*>.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RewardModel {
    /// y = +1 with probability (1 + mu)/2, else -1.
    PlusMinusOne,
    /// y = mu + N(0, 1).
    Gaussian,
}

/// Parameters of App. D's generator: what a simulation needs to build one
/// instance per replicate.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShariffSheffetConfig {
    pub d: usize,
    pub k: usize,
    pub gap: f64,
    pub optimal_reward: f64,
    pub reward: RewardModel,
}

impl crate::sim::EnvironmentFactory for ShariffSheffetConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(ShariffSheffetEnv::new(self.d, self.k, self.gap, self.optimal_reward, self.reward, seeds)?))
    }
}

/// App. D's generator.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ShariffSheffetEnv {
    d: usize,
    k: usize,
    gap: f64,
    optimal_reward: f64,
    reward: RewardModel,
    theta: Vec<f64>,
    means: Vec<f64>,
    contexts: SimulationRng,
    rewards: SimulationRng,
    scratch: Vec<f64>,
}

/// Most entries (k * d) a generated decision set may have (512 MB of f64).
pub const MAX_DECISION_ENTRIES: usize = 1 << 26;

impl ShariffSheffetEnv {
    /// Serialized state (generators included): a restored environment
    /// continues with the same decision sets and rewards.
    pub fn to_bytes(&self) -> Vec<u8> {
        postcard::to_stdvec(self).expect("serializing plain data cannot fail")
    }

    /// Restores an environment written by [`ShariffSheffetEnv::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let env: ShariffSheffetEnv = postcard::from_bytes(bytes).map_err(|e| Error::Decode(e.to_string()))?;
        if env.theta.len() != env.d || env.means.len() != env.k || env.scratch.len() != env.d {
            return Err(Error::Decode("inconsistent environment state".into()));
        }
        Ok(env)
    }
}

impl ShariffSheffetEnv {
    /// A new instance; `theta*` is drawn from `seeds`' `"environment/theta"`
    /// stream, decision sets from `"environment/contexts"`, reward noise
    /// from `"environment/rewards"`.
    pub fn new(
        d: usize,
        k: usize,
        gap: f64,
        optimal_reward: f64,
        reward: RewardModel,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        if d < 2 {
            return Err(Error::invalid(
                "d",
                format!("must be >= 2 (the optimal action lives on a (d-2)-sphere), got {d}"),
            ));
        }
        if k < 1 {
            return Err(Error::invalid("k", "must be >= 1"));
        }
        // Bug fix (hostile-input fuzzing): k = 2^40 tried to allocate k x d
        // floats and aborted the whole process; a decision set must fit.
        if d.checked_mul(k).is_none_or(|n| n > MAX_DECISION_ENTRIES) {
            return Err(Error::invalid(
                "k",
                format!("k * d = {k} * {d} exceeds {MAX_DECISION_ENTRIES} entries per decision set"),
            ));
        }
        if !(optimal_reward.is_finite() && optimal_reward > 0.0 && optimal_reward < 1.0) {
            return Err(Error::invalid("optimal_reward", format!("must lie in (0, 1), got {optimal_reward}")));
        }
        if !(gap.is_finite() && (0.0..2.0 * optimal_reward).contains(&gap)) {
            return Err(Error::invalid("gap", format!("must lie in [0, 2 * optimal_reward), got {gap}")));
        }
        let mut theta_rng = seeds.simulation_stream("environment/theta");
        let theta = unit_vector(&mut theta_rng, d);
        Ok(ShariffSheffetEnv {
            d,
            k,
            gap,
            optimal_reward,
            reward,
            theta,
            means: vec![0.0; k],
            contexts: seeds.simulation_stream("environment/contexts"),
            rewards: seeds.simulation_stream("environment/rewards"),
            scratch: vec![0.0; d],
        })
    }

    /// The parameters the instance was built with.
    pub fn config(&self) -> ShariffSheffetConfig {
        ShariffSheffetConfig {
            d: self.d,
            k: self.k,
            gap: self.gap,
            optimal_reward: self.optimal_reward,
            reward: self.reward,
        }
    }

    /// The hidden parameter theta*.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// Mean rewards <x, theta*> of the current decision set.
    pub fn means(&self) -> &[f64] {
        &self.means
    }

    /// Fills `x` with a uniform unit vector x such that <x, theta> = `dot`
    /// (x = dot theta + sqrt(1 - dot^2) u, u uniform on the sphere of theta's
    /// orthogonal complement).
    fn on_slice(&mut self, dot: f64, x: &mut [f64]) {
        loop {
            for v in &mut self.scratch {
                *v = self.contexts.sample::<f64, _>(StandardNormal);
            }
            let proj: f64 = self.scratch.iter().zip(&self.theta).map(|(a, b)| a * b).sum();
            for (s, t) in self.scratch.iter_mut().zip(&self.theta) {
                *s -= proj * t;
            }
            let norm = self.scratch.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 1e-12 {
                let r = (1.0 - dot * dot).sqrt() / norm;
                for ((xi, s), t) in x.iter_mut().zip(&self.scratch).zip(&self.theta) {
                    *xi = dot * t + r * s;
                }
                return;
            }
        }
    }

    /// Uniform unit vector conditioned on <x, theta> in [lo, hi], by
    /// rejection from the uniform sphere (acceptance >= 0.9 for the paper's
    /// intervals and d >= 4). Returns the inner product.
    fn in_band(&mut self, lo: f64, hi: f64, x: &mut [f64]) -> f64 {
        loop {
            let mut sq = 0.0;
            for v in x.iter_mut() {
                *v = self.contexts.sample::<f64, _>(StandardNormal);
                sq += *v * *v;
            }
            if sq < 1e-300 {
                continue;
            }
            let inv = 1.0 / sq.sqrt();
            let mut dot = 0.0;
            for (v, t) in x.iter_mut().zip(&self.theta) {
                *v *= inv;
                dot += *v * t;
            }
            if (lo..=hi).contains(&dot) {
                return dot;
            }
        }
    }
}

/// A uniform unit vector in R^d.
fn unit_vector(rng: &mut SimulationRng, d: usize) -> Vec<f64> {
    loop {
        let v: Vec<f64> = (0..d).map(|_| rng.sample::<f64, _>(StandardNormal)).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 1e-12 {
            return v.into_iter().map(|x| x / n).collect();
        }
    }
}

impl Environment for ShariffSheffetEnv {
    fn dim(&self) -> usize {
        self.d
    }

    fn num_actions(&self) -> usize {
        self.k
    }

    fn next_round(&mut self, _t: u64, set: &mut DecisionSet) -> Result<()> {
        let (d, k) = (self.d, self.k);
        if set.k != k || set.d != d {
            *set = DecisionSet::zeros(k, d);
        }
        let best = self.contexts.random_range(0..k);
        let features = &mut set.features;
        for i in 0..k {
            let x = &mut features[i * d..(i + 1) * d];
            self.means[i] = if i == best {
                self.on_slice(self.optimal_reward, x);
                self.optimal_reward
            } else {
                self.in_band(-self.optimal_reward, self.optimal_reward - self.gap, x)
            };
        }
        Ok(())
    }

    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>> {
        let mut y = [0.0];
        self.shared_rewards(&[index], &mut y)?;
        Ok(Feedback::Reward(y[0]))
    }

    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        if let Some(&bad) = indices.iter().find(|&&i| i >= self.k) {
            return Err(Error::invalid("index", format!("must be < {}, got {bad}", self.k)));
        }
        // One draw per round whatever the model and however many learners,
        // so reward streams stay aligned across learners: a +-1 reward is
        // +1 when the shared uniform falls below (1 + mu)/2.
        match self.reward {
            RewardModel::PlusMinusOne => {
                let u = self.rewards.random::<f64>();
                for (y, &i) in out.iter_mut().zip(indices) {
                    *y = if u < 0.5 * (1.0 + self.means[i]) { 1.0 } else { -1.0 };
                }
            }
            RewardModel::Gaussian => {
                let z = self.rewards.sample::<f64, _>(StandardNormal);
                for (y, &i) in out.iter_mut().zip(indices) {
                    *y = self.means[i] + z;
                }
            }
        }
        Ok(())
    }

    fn regret(&self, index: usize) -> Option<f64> {
        self.means.get(index).map(|m| self.optimal_reward - m)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp, clippy::needless_range_loop)]
mod tests {
    use super::*;

    #[test]
    fn decision_sets_follow_appendix_d() {
        let mut env =
            ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(1)).unwrap();
        let theta = env.theta().to_vec();
        assert!((theta.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
        let mut best_positions = [0usize; 25];
        for t in 1..=2000 {
            let mut set = DecisionSet::default();
            env.next_round(t, &mut set).unwrap();
            let mut n_opt = 0;
            for i in 0..25 {
                let x = set.action(i);
                assert!((x.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-9);
                let dot: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
                assert!((dot - env.means()[i]).abs() < 1e-9);
                if (dot - 0.75).abs() < 1e-9 {
                    n_opt += 1;
                    best_positions[i] += 1;
                } else {
                    assert!((-0.75..=0.65).contains(&dot), "dot {dot}");
                }
            }
            assert_eq!(n_opt, 1);
        }
        // The optimal index is spread over all positions.
        assert!(best_positions.iter().all(|&c| c > 20));
    }

    #[test]
    fn same_seed_same_contexts_regardless_of_choices() {
        let seeds = SeedSequence::from_seed(9);
        let mut a = ShariffSheffetEnv::new(4, 16, 0.0, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let mut b = ShariffSheffetEnv::new(4, 16, 0.0, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        for t in 1..100 {
            let (mut sa, mut sb) = (DecisionSet::default(), DecisionSet::default());
            a.next_round(t, &mut sa).unwrap();
            b.next_round(t, &mut sb).unwrap();
            assert_eq!(sa, sb);
            a.feedback((t % 16) as usize).unwrap();
            b.feedback(((t * 7) % 16) as usize).unwrap();
        }
    }

    #[test]
    fn plus_minus_one_rewards_have_the_right_mean() {
        let mut env =
            ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(2)).unwrap();
        let n = 40_000;
        let (mut sum, mut mean_sum) = (0.0, 0.0);
        let mut set = DecisionSet::default();
        for t in 1..=n {
            env.next_round(t, &mut set).unwrap();
            let i = (t % 25) as usize;
            mean_sum += env.means()[i];
            match env.feedback(i).unwrap() {
                Feedback::Reward(y) => {
                    assert!(y == 1.0 || y == -1.0);
                    sum += y;
                }
                Feedback::Losses(_) => unreachable!(),
            }
        }
        // Each y - mu has variance <= 1: 5 sd bound on the mean.
        assert!(((sum - mean_sum) / n as f64).abs() < 5.0 / (n as f64).sqrt());
    }

    #[test]
    fn rejects_bad_parameters() {
        let s = SeedSequence::from_seed(0);
        assert!(ShariffSheffetEnv::new(1, 4, 0.1, 0.75, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 0, 0.1, 0.75, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 4, 1.6, 0.75, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 4, 0.1, 1.5, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 4, f64::NAN, 0.75, RewardModel::PlusMinusOne, &s).is_err());
    }
}
