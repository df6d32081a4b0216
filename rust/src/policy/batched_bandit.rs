//! Private adversarial bandits by batching: the conversion of Asi, Raman &
//! Talwar, "Faster rates for private adversarial bandits" (ICML 2025, arXiv
//! 2505.21790), applied to EXP3 with an exploration floor.
//!
//! Rounds are cut into batches of tau. Throughout a batch the learner plays
//! one arm i ~ p = (1 - gamma) q + gamma / K; at the batch's end the base
//! algorithm receives one noisy loss, (S + Z) / m with S the sum of the m
//! losses of the batch (m = tau except for a last, shorter batch) and Z one
//! Laplace draw (discrete Laplace on the lattice by default), as the loss
//! of arm i in one base round: the importance-weighted update
//! log q(i) -= eta (S + Z) / (m p(i)). Each loss enters one noisy sum of
//! sensitivity 1, so Laplace(1 / epsilon) makes the learner epsilon-DP
//! (parallel composition; the rest is post-processing). The noise scale,
//! eta, gamma and tau are plain numbers from `dpbandits.privacy.private_experts`.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::loss_batches::{check_sizes, is_laplace_family};
use super::Learner;
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, check_positive, try_filled, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// Plain-number configuration of [`BatchedExp3`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchedExp3Config {
    /// Number of arms K.
    pub k: usize,
    pub horizon: u64,
    /// Batch length tau.
    pub batch: u64,
    pub eta: f64,
    /// Exploration floor gamma in [0, 1].
    pub gamma: f64,
    /// Noise Z of each batch's loss sum (Laplace, lattice Laplace or zero).
    pub noise: NoiseSpec,
    /// Losses outside [0, 1] are clipped (true) or refused.
    pub clip: bool,
}

impl BatchedExp3Config {
    fn validate(&self) -> Result<()> {
        check_sizes("k", self.k, self.horizon, "batch", self.batch)?;
        check_positive("eta", self.eta)?;
        if !(0.0..=1.0).contains(&self.gamma) {
            return Err(Error::invalid("gamma", format!("must lie in [0, 1], got {}", self.gamma)));
        }
        if !is_laplace_family(&self.noise) {
            return Err(Error::invalid("noise", "must be zero, Laplace or lattice Laplace"));
        }
        self.noise.validate(&[1])?;
        if let Some(s) = self.noise.lattice() {
            if s.step().recip() * (self.batch as f64) > 2f64.powi(51) {
                return Err(Error::invalid("noise", "the lattice is too fine for exact batch sums"));
            }
        }
        Ok(())
    }
}

impl super::LearnerFactory for BatchedExp3Config {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(BatchedExp3::new(*self, seeds)?))
    }
}

/// EXP3 behind the batched private conversion.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BatchedExp3 {
    config: BatchedExp3Config,
    log_q: Vec<f64>,
    p: Vec<f64>,
    current: usize,
    /// Rounded loss sum and count of the current batch.
    batch_sum: f64,
    batch_count: u64,
    t: u64,
    /// Recorded losses the bounds policy clipped into [0, 1].
    clipped: u64,
    sampling: StreamRng,
    noise: NoiseRng,
}

const STATE_VERSION: u8 = 1;

impl BatchedExp3 {
    /// A fresh learner: arms from `seeds`' `"sampling"` stream, batch noise
    /// from `"batch_noise"`.
    pub fn new(config: BatchedExp3Config, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let mut e = BatchedExp3 {
            config,
            log_q: try_filled("k", config.k, 0.0)?,
            p: try_filled("k", config.k, 1.0 / config.k as f64)?,
            current: 0,
            batch_sum: 0.0,
            batch_count: 0,
            t: 0,
            clipped: 0,
            sampling: seeds.stream("sampling"),
            noise: NoiseRng::seeded(seeds.stream("batch_noise")),
        };
        e.current = e.draw();
        Ok(e)
    }

    pub fn config(&self) -> &BatchedExp3Config {
        &self.config
    }

    pub fn t(&self) -> u64 {
        self.t
    }

    /// The arm played this round (fixed within a batch).
    pub fn current(&self) -> usize {
        self.current
    }

    /// p = (1 - gamma) q + gamma / K.
    pub fn probabilities(&self) -> &[f64] {
        &self.p
    }

    fn draw(&mut self) -> usize {
        let u: f64 = self.sampling.random();
        let mut acc = 0.0;
        for (i, p) in self.p.iter().enumerate() {
            acc += p;
            if u < acc {
                return i;
            }
        }
        self.p.iter().rposition(|&p| p > 0.0).unwrap_or(0)
    }

    /// Records the loss of the played arm `arm` (it must be [`Self::current`]).
    pub fn observe(&mut self, arm: usize, loss: f64) -> Result<()> {
        if arm != self.current {
            return Err(Error::invalid("arm", format!("the batch plays arm {}, got {arm}", self.current)));
        }
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is used up", self.config.horizon)));
        }
        check_finite("loss", &[loss])?;
        let inside = (0.0..=1.0).contains(&loss);
        let loss = if inside {
            loss
        } else if self.config.clip {
            loss.clamp(0.0, 1.0)
        } else {
            return Err(Error::invalid("loss", format!("must lie in [0, 1], got {loss}")));
        };
        let mut rounded = [loss];
        let limit = self.config.noise.lattice().map_or(f64::INFINITY, |s| s.step().recip() + 1.0);
        self.config.noise.round_input("loss", &mut rounded, limit)?;
        self.batch_sum += rounded[0];
        self.batch_count += 1;
        self.clipped += u64::from(!inside);
        self.t += 1;
        if self.batch_count == self.config.batch || self.t == self.config.horizon {
            let z = self.config.noise.sample(self.noise.source()?);
            let value = (self.batch_sum + z) / self.batch_count as f64;
            let i = self.current;
            self.log_q[i] -= self.config.eta * value / self.p[i];
            self.refresh();
            self.batch_sum = 0.0;
            self.batch_count = 0;
            self.current = self.draw();
        }
        Ok(())
    }

    fn refresh(&mut self) {
        let hi = self.log_q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for v in &mut self.log_q {
            *v -= hi;
        }
        let total: f64 = self.log_q.iter().map(|v| v.exp()).sum();
        let (gamma, k) = (self.config.gamma, self.config.k as f64);
        for (p, v) in self.p.iter_mut().zip(&self.log_q) {
            *p = (1.0 - gamma) * v.exp() / total + gamma / k;
        }
    }

    /// Recorded losses the bounds policy clipped into [0, 1].
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// Draws future noise and arms from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.sampling = seeds.stream("sampling");
        self.noise.reseed(seeds.stream("batch_noise"));
    }

    /// Batch noise from the operating system from now on (secure mode).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.noise.use_os_entropy()
    }

    pub fn os_entropy(&self) -> bool {
        self.noise.is_os()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// The learner `to_bytes` wrote; refuses inconsistent state.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let Some((&STATE_VERSION, body)) = bytes.split_first() else {
            return Err(Error::Decode("unknown batched-EXP3 state version".into()));
        };
        let e: BatchedExp3 = crate::state::decode(body)?;
        let c = &e.config;
        c.validate().map_err(|err| Error::Decode(format!("invalid batched-EXP3 configuration: {err}")))?;
        let consistent = e.log_q.len() == c.k
            && e.p.len() == c.k
            && e.current < c.k
            && e.t <= c.horizon
            && e.clipped <= e.t
            && e.batch_count < c.batch
            && e.log_q.iter().all(|v| v.is_finite() && *v <= 0.0)
            && e.p.iter().all(|v| v.is_finite() && *v >= 0.0)
            && e.batch_sum.is_finite()
            && e.batch_sum >= 0.0
            && e.batch_sum <= e.batch_count as f64;
        if !consistent {
            return Err(Error::Decode("inconsistent batched-EXP3 state".into()));
        }
        Ok(e)
    }
}

impl Learner for BatchedExp3 {
    fn use_os_entropy(&mut self) -> Result<()> {
        BatchedExp3::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        if set.k != self.config.k {
            return Err(Error::invalid("set", format!("expected {} arms, got {}", self.config.k, set.k)));
        }
        Ok(self.current)
    }

    /// Bandit feedback: the reward is minus the loss (loss environments).
    fn update(&mut self, _set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
        let loss = match feedback {
            Feedback::Reward(y) => -y,
            Feedback::Losses(l) => *l.get(index).ok_or_else(|| Error::invalid("index", "out of range"))?,
        };
        self.observe(index, loss)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // lattice values are exact: equality is the test
mod tests {
    use super::*;

    fn config(noise: NoiseSpec) -> BatchedExp3Config {
        BatchedExp3Config { k: 4, horizon: 4000, batch: 5, eta: 0.05, gamma: 0.05, noise, clip: true }
    }

    #[test]
    fn arms_change_only_at_batch_ends_and_the_best_arm_wins() {
        let mut e = BatchedExp3::new(config(NoiseSpec::Laplace { scale: 1.0 }), &SeedSequence::from_seed(1)).unwrap();
        for t in 0..4000u64 {
            let i = e.current();
            e.observe(i, if i == 2 { 0.1 } else { 0.9 }).unwrap();
            if (t + 1) % 5 != 0 {
                assert_eq!(e.current(), i);
            }
        }
        assert!(e.probabilities()[2] > 0.8, "{:?}", e.probabilities());
        assert!(e.observe(e.current(), 0.5).is_err());
    }

    #[test]
    fn lattice_sums_are_exact_and_state_round_trips() {
        let lattice = NoiseSpec::Laplace { scale: 1.0 }.on_lattice(19).unwrap();
        let mut a = BatchedExp3::new(config(lattice), &SeedSequence::from_seed(2)).unwrap();
        for _ in 0..13 {
            let i = a.current();
            a.observe(i, 0.123_456_789).unwrap();
            assert_eq!((a.batch_sum * 2f64.powi(19)).fract(), 0.0);
        }
        let mut b = BatchedExp3::from_bytes(&a.to_bytes()).unwrap();
        for _ in 13..500 {
            let (i, j) = (a.current(), b.current());
            assert_eq!(i, j);
            a.observe(i, 0.4).unwrap();
            b.observe(j, 0.4).unwrap();
        }
        assert_eq!(a.probabilities(), b.probabilities());
        let wrong = (a.current() + 1) % 4;
        assert!(a.observe(wrong, 0.4).is_err());
        assert!(a.observe(a.current(), f64::NAN).is_err());
        let mut bad = b.clone();
        bad.batch_count = 5;
        assert!(BatchedExp3::from_bytes(&bad.to_bytes()).is_err());
        assert!(BatchedExp3::new(
            BatchedExp3Config { batch: 0, ..config(NoiseSpec::Zero) },
            &SeedSequence::from_seed(0)
        )
        .is_err());
    }
}
