//! Supervised-to-bandit replay: a labelled data set as a contextual bandit.
//!
//! Each round presents one sample; the arms are the `k` classes. Arm a's
//! feature vector is the disjoint encoding x_{t,a} = e_a ⊗ f_t (the
//! sample's `p` features in block a of a k·p vector, zeros elsewhere). The
//! reward is 1 for the true class and `wrong_reward` (0 or -1) otherwise,
//! so the pseudo-regret of a wrong pick is 1 - wrong_reward. Every pass over
//! the data visits the samples in a fresh uniformly random order drawn from
//! the `"environment/order"` stream. The data are shared (not copied)
//! between the replicates of a simulation.

use std::sync::Arc;

use rand::Rng;

use super::{DecisionSet, Environment, Feedback};
use crate::error::{Error, Result};
use crate::rng::{SeedSequence, SimulationRng};

/// The data set: `n` rows of `p` features (row-major, each of norm <= 1)
/// and `n` class labels in [0, k).
#[derive(Debug, PartialEq)]
pub struct ReplayData {
    n: usize,
    p: usize,
    k: usize,
    features: Vec<f64>,
    labels: Vec<u32>,
    wrong_reward: f64,
}

/// What a simulation needs to build one replay instance per replicate.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayConfig {
    data: Arc<ReplayData>,
}

impl ReplayConfig {
    /// Checks the data: `features.len() == n p`, finite rows of norm <= 1
    /// (the bound L = 1 the learners assume), labels with at least two
    /// classes, `wrong_reward` 0 or -1.
    pub fn new(features: Vec<f64>, p: usize, labels: Vec<u32>, wrong_reward: f64) -> Result<Self> {
        let n = labels.len();
        if n == 0 || p == 0 || features.len() != n * p {
            return Err(Error::invalid(
                "features",
                format!("expected {n} rows of p >= 1 features (one per label), got {} values", features.len()),
            ));
        }
        for (i, row) in features.chunks_exact(p).enumerate() {
            let sq: f64 = row.iter().map(|v| v * v).sum();
            if !sq.is_finite() || sq > 1.0 + 1e-9 {
                return Err(Error::invalid(
                    "features",
                    format!("row {i} has norm {} > 1 (or is not finite)", sq.sqrt()),
                ));
            }
        }
        let k = labels.iter().copied().max().map_or(0, |m| m as usize + 1);
        if k < 2 {
            return Err(Error::invalid("labels", "need at least two classes"));
        }
        // Exactly 0 or -1: the two reward codings the replay benchmark uses.
        #[allow(clippy::float_cmp)]
        let valid = wrong_reward == 0.0 || wrong_reward == -1.0;
        if !valid {
            return Err(Error::invalid("wrong_reward", format!("must be 0 or -1, got {wrong_reward}")));
        }
        Ok(ReplayConfig { data: Arc::new(ReplayData { n, p, k, features, labels, wrong_reward }) })
    }

    /// Number of arms (classes).
    pub fn k(&self) -> usize {
        self.data.k
    }

    /// Features per sample.
    pub fn p(&self) -> usize {
        self.data.p
    }
}

impl super::EnvironmentFactory for ReplayConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(ReplayEnv::new(self.clone(), seeds)))
    }
}

/// The position of a replay in its data, serializable for pickling.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct ReplayState {
    order: Vec<u32>,
    pos: u64,
    label: u32,
    rng: SimulationRng,
}

/// One replicate of the replay bandit.
#[derive(Clone, Debug)]
pub struct ReplayEnv {
    config: ReplayConfig,
    state: ReplayState,
}

impl ReplayEnv {
    /// A replay whose sample order comes from `seeds`' `"environment/order"` stream.
    pub fn new(config: ReplayConfig, seeds: &SeedSequence) -> Self {
        let n = config.data.n;
        let state = ReplayState {
            order: (0..n as u32).collect(),
            pos: 0,
            label: 0,
            rng: seeds.simulation_stream("environment/order"),
        };
        ReplayEnv { config, state }
    }

    /// The configuration (shared data).
    pub fn config(&self) -> ReplayConfig {
        self.config.clone()
    }

    /// Rewards of every arm this round (1 for the true class).
    pub fn means(&self) -> Vec<f64> {
        (0..self.config.data.k).map(|a| self.reward(a)).collect()
    }

    /// Serialized position and generator (not the data): with the same
    /// configuration, [`ReplayEnv::restore`] continues identically.
    pub fn state_bytes(&self) -> Vec<u8> {
        crate::state::encode(&self.state)
    }

    /// The replay of `config` at the position saved by [`ReplayEnv::state_bytes`].
    pub fn restore(config: ReplayConfig, bytes: &[u8]) -> Result<Self> {
        let state: ReplayState = crate::state::decode(bytes)?;
        let n = config.data.n;
        let mut seen = vec![false; n];
        let is_permutation = state.order.len() == n
            && state.order.iter().all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true));
        if !is_permutation || state.label as usize >= config.data.k {
            return Err(Error::Decode("replay state does not match the data".into()));
        }
        Ok(ReplayEnv { config, state })
    }

    fn reward(&self, index: usize) -> f64 {
        if index == self.state.label as usize {
            1.0
        } else {
            self.config.data.wrong_reward
        }
    }
}

impl Environment for ReplayEnv {
    fn dim(&self) -> usize {
        self.config.data.k * self.config.data.p
    }

    fn num_actions(&self) -> usize {
        self.config.data.k
    }

    fn next_round(&mut self, _t: u64, set: &mut DecisionSet) -> Result<()> {
        let data = &*self.config.data;
        let (k, p) = (data.k, data.p);
        let i = (self.state.pos % data.n as u64) as usize;
        if i == 0 {
            // A fresh pass: Fisher-Yates shuffle.
            for j in (1..data.n).rev() {
                let r = self.state.rng.random_range(0..=j);
                self.state.order.swap(j, r);
            }
        }
        self.state.pos += 1;
        let sample = self.state.order[i] as usize;
        self.state.label = data.labels[sample];
        let d = k * p;
        set.k = k;
        set.d = d;
        set.features.clear();
        set.features.resize(k * d, 0.0);
        let row = &data.features[sample * p..(sample + 1) * p];
        for a in 0..k {
            let start = a * d + a * p;
            set.features[start..start + p].copy_from_slice(row);
        }
        Ok(())
    }

    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>> {
        if index >= self.config.data.k {
            return Err(Error::invalid("index", format!("must lie in [0, {}), got {index}", self.config.data.k)));
        }
        Ok(Feedback::Reward(self.reward(index)))
    }

    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        for (y, &index) in out.iter_mut().zip(indices) {
            if index >= self.config.data.k {
                return Err(Error::invalid("index", format!("must lie in [0, {}), got {index}", self.config.data.k)));
            }
            *y = self.reward(index);
        }
        Ok(())
    }

    fn regret(&self, index: usize) -> Option<f64> {
        Some(1.0 - self.reward(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(wrong: f64) -> ReplayConfig {
        // 5 samples, p = 2, 3 classes
        let f = vec![0.6, 0.8, 1.0, 0.0, 0.0, 1.0, 0.3, 0.4, -0.6, 0.0];
        ReplayConfig::new(f, 2, vec![0, 1, 2, 0, 1], wrong).unwrap()
    }

    fn sample_of(set: &DecisionSet, cfg: &ReplayConfig) -> usize {
        let row = &set.features[0..2];
        (0..5).find(|&i| &cfg.data.features[2 * i..2 * i + 2] == row).unwrap()
    }

    #[test]
    fn disjoint_encoding_and_rewards() {
        let cfg = config(-1.0);
        let mut env = ReplayEnv::new(cfg.clone(), &SeedSequence::from_seed(3));
        let mut set = DecisionSet::zeros(3, 6);
        for t in 1..=10 {
            env.next_round(t, &mut set).unwrap();
            let s = sample_of(&set, &cfg);
            for a in 0..3 {
                for b in 0..3 {
                    let block = &set.features[a * 6 + b * 2..a * 6 + b * 2 + 2];
                    if a == b {
                        assert_eq!(block, &cfg.data.features[2 * s..2 * s + 2]);
                    } else {
                        assert!(block.iter().all(|&v| v == 0.0));
                    }
                }
            }
            let label = cfg.data.labels[s] as usize;
            for a in 0..3 {
                let expected = if a == label { 1.0 } else { -1.0 };
                assert_eq!(env.feedback(a).unwrap(), Feedback::Reward(expected));
                assert_eq!(env.regret(a), Some(1.0 - expected));
            }
        }
    }

    #[test]
    fn every_pass_is_a_permutation_fixed_by_the_seed() {
        let cfg = config(0.0);
        let visits = |seed: u64| {
            let mut env = ReplayEnv::new(cfg.clone(), &SeedSequence::from_seed(seed));
            let mut set = DecisionSet::zeros(3, 6);
            (1..=10)
                .map(|t| {
                    env.next_round(t, &mut set).unwrap();
                    sample_of(&set, &cfg)
                })
                .collect::<Vec<_>>()
        };
        let a = visits(1);
        for pass in a.chunks(5) {
            let mut sorted = pass.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        }
        assert_eq!(a, visits(1));
        assert_ne!(a, visits(2));
    }

    #[test]
    fn restored_state_continues_identically() {
        let cfg = config(0.0);
        let mut env = ReplayEnv::new(cfg.clone(), &SeedSequence::from_seed(9));
        let mut set = DecisionSet::zeros(3, 6);
        for t in 1..=7 {
            env.next_round(t, &mut set).unwrap();
        }
        let mut copy = ReplayEnv::restore(cfg.clone(), &env.state_bytes()).unwrap();
        let mut other = set.clone();
        for t in 8..=20 {
            env.next_round(t, &mut set).unwrap();
            copy.next_round(t, &mut other).unwrap();
            assert_eq!(set, other);
        }
    }

    #[test]
    fn bad_data_is_refused() {
        assert!(ReplayConfig::new(vec![1.0, 1.0, 0.0, 0.0], 2, vec![0, 1], 0.0).is_err()); // norm sqrt(2)
        assert!(ReplayConfig::new(vec![0.5, 0.5], 2, vec![0], 0.0).is_err()); // one class
        assert!(ReplayConfig::new(vec![0.5, 0.5, 0.1, 0.1], 2, vec![0, 1], 0.5).is_err());
        assert!(ReplayConfig::new(vec![0.5, 0.5, 0.1], 2, vec![0, 1], 0.0).is_err());
    }
}
