//! EXP2 with exploration (Agarwal & Singh 2017, Alg. 5) behind the private
//! bandit reduction (Alg. 4), for adversarial multi-armed bandits.
//!
//! Round t plays i_t ~ p_t = (1 - gamma) q_t + gamma mu with mu uniform
//! (the exploration floor: p_t(i) >= gamma / N), observes the loss
//! l_t(i_t) in [0, 1], and forwards l_t(i_t) + <Z_t, e_{i_t}> with
//! Z_t ~ Lap^N(lambda) (Alg. 4 line 5). Only the coordinate Z_t(i_t)
//! reaches the learner and it is Lap(lambda) whatever i_t is (Z_t is drawn
//! independently of i_t), so one Laplace draw per round has exactly the law
//! of Alg. 4. The importance-weighted estimate is l~_t = P_t^+ e_i e_i^T
//! (l_t + Z_t): value / p_t(i) in coordinate i, 0 elsewhere; the weights
//! update multiplicatively, q_{t+1}(i) ∝ exp(-eta l~_t(i)) q_t(i), kept in
//! log space. eta, gamma and lambda are plain numbers (Thm 4.1, computed
//! by `dpbandits.privacy.agarwal_singh`).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::Learner;
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, check_positive, try_filled, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::noise::{NoiseSpec, SecureKind};
use crate::rng::{SeedSequence, StreamRng};

/// Plain-number configuration of [`Exp2`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exp2Config {
    /// Number of arms N.
    pub n: usize,
    pub horizon: u64,
    /// Learning rate eta.
    pub eta: f64,
    /// Mixing coefficient gamma in [0, 1].
    pub gamma: f64,
    /// Distribution of Z_t(i) (Laplace(lambda), or zero for the non-private EXP2).
    pub noise: NoiseSpec,
    /// Out-of-range losses are clipped to [0, 1] (true) or refused.
    pub clip: bool,
}

impl Exp2Config {
    fn validate(&self) -> Result<()> {
        if self.n < 1 {
            return Err(Error::invalid("n", "must be >= 1"));
        }
        if self.horizon < 1 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        check_positive("eta", self.eta)?;
        if !(0.0..=1.0).contains(&self.gamma) {
            return Err(Error::invalid("gamma", format!("must lie in [0, 1], got {}", self.gamma)));
        }
        let lattice_laplace = self.noise.lattice().is_some_and(|s| matches!(s.kind(), SecureKind::Laplace { .. }));
        if !(lattice_laplace || matches!(self.noise, NoiseSpec::Zero | NoiseSpec::Laplace { .. })) {
            return Err(Error::invalid("noise", "must be zero or Laplace (Alg. 4 with Lap^N(lambda))"));
        }
        self.noise.validate(&[1])
    }
}

impl super::LearnerFactory for Exp2Config {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(Exp2::new(*self, seeds)?))
    }
}

/// EXP2 with exploration inside the private reduction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exp2 {
    config: Exp2Config,
    log_q: Vec<f64>,
    p: Vec<f64>,
    t: u64,
    /// Recorded losses the bounds policy clipped into [0, 1].
    clipped: u64,
    sampling: StreamRng,
    noise: NoiseRng,
}

const STATE_VERSION: u8 = 1;

impl Exp2 {
    /// A fresh engine: arm sampling from `seeds`' `"sampling"` stream,
    /// reduction noise from `"reduction_noise"`.
    pub fn new(config: Exp2Config, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let n = config.n;
        let mut e = Exp2 {
            config,
            log_q: try_filled("n", n, 0.0)?,
            p: try_filled("n", n, 0.0)?,
            t: 0,
            clipped: 0,
            sampling: seeds.stream("sampling"),
            noise: NoiseRng::seeded(seeds.stream("reduction_noise")),
        };
        e.refresh();
        Ok(e)
    }

    pub fn config(&self) -> &Exp2Config {
        &self.config
    }

    pub fn t(&self) -> u64 {
        self.t
    }

    /// p_t = (1 - gamma) q_t + gamma / N (Alg. 5 line 3).
    pub fn probabilities(&self) -> &[f64] {
        &self.p
    }

    /// Draws i_t ~ p_t.
    pub fn sample_index(&mut self) -> usize {
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

    /// Alg. 4 lines 3-5 and Alg. 5 lines 4-5 for the loss of arm `index`.
    pub fn observe(&mut self, index: usize, loss: f64) -> Result<()> {
        self.observe_drawn(index, loss, None)
    }

    /// [`Exp2::observe`] for an arm drawn from an earlier released
    /// distribution that gave it probability `probability` (a decision of
    /// a served policy): the importance weight is 1 / `probability`.
    pub fn observe_served(&mut self, index: usize, loss: f64, probability: f64) -> Result<()> {
        if !(probability.is_finite() && probability > 0.0 && probability <= 1.0) {
            return Err(Error::invalid("probability", format!("must lie in (0, 1], got {probability}")));
        }
        self.observe_drawn(index, loss, Some(probability))
    }

    fn observe_drawn(&mut self, index: usize, loss: f64, probability: Option<f64>) -> Result<()> {
        if index >= self.config.n {
            return Err(Error::invalid("index", format!("must be < {}, got {index}", self.config.n)));
        }
        check_finite("loss", &[loss])?;
        if self.t >= self.config.horizon {
            return Err(Error::State(format!(
                "the horizon of {} rounds is used up; the noise was calibrated for it",
                self.config.horizon
            )));
        }
        let inside = (0.0..=1.0).contains(&loss);
        let loss = if inside {
            loss
        } else if self.config.clip {
            loss.clamp(0.0, 1.0)
        } else {
            return Err(Error::invalid("loss", format!("must lie in [0, 1], got {loss}")));
        };
        // On a lattice the loss is rounded first (monotone, so a loss in
        // [0, 1] stays in [0, 1]: the sensitivity is unchanged) and the
        // forwarded value is an exact lattice point.
        let mut forwarded = [loss];
        self.config.noise.round_input("loss", &mut forwarded, f64::INFINITY)?;
        let forwarded = forwarded[0] + self.config.noise.sample(self.noise.source()?);
        let p = probability.unwrap_or(self.p[index]);
        self.log_q[index] -= self.config.eta * forwarded / p;
        self.clipped += u64::from(!inside);
        self.t += 1;
        self.refresh();
        Ok(())
    }

    /// Recorded losses the bounds policy clipped into [0, 1].
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// Draws future noise and samples from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.sampling = seeds.stream("sampling");
        self.noise.reseed(seeds.stream("reduction_noise"));
    }

    /// Privacy noise from the operating system from now on (secure mode).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.noise.use_os_entropy()
    }

    /// Whether privacy noise comes from the operating system.
    pub fn os_entropy(&self) -> bool {
        self.noise.is_os()
    }

    fn refresh(&mut self) {
        let hi = self.log_q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Keep the log weights bounded: shifting them all changes nothing.
        for v in &mut self.log_q {
            *v -= hi;
        }
        let total: f64 = self.log_q.iter().map(|v| v.exp()).sum();
        let (gamma, n) = (self.config.gamma, self.config.n as f64);
        for (p, v) in self.p.iter_mut().zip(&self.log_q) {
            *p = (1.0 - gamma) * v.exp() / total + gamma / n;
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        match bytes.split_first() {
            Some((&STATE_VERSION, body)) => {
                let e: Exp2 = crate::state::decode(body)?;
                // The constructor's checks of the configuration; weights and
                // probabilities of the right length, finite (log weights may be
                // -inf), and a round inside the horizon.
                e.config.validate().map_err(|err| Error::Decode(format!("EXP2 state: {err}")))?;
                let probabilities = e.p.iter().all(|&x| (0.0..=1.0).contains(&x));
                if e.log_q.len() != e.config.n
                    || e.p.len() != e.config.n
                    || e.log_q.iter().any(|x| x.is_nan() || *x == f64::INFINITY)
                    || !probabilities
                    || e.t > e.config.horizon
                    || e.clipped > e.t
                {
                    return Err(Error::Decode("inconsistent EXP2 state".into()));
                }
                Ok(e)
            }
            _ => Err(Error::Decode("unknown EXP2 state version".into())),
        }
    }
}

impl Learner for Exp2 {
    fn use_os_entropy(&mut self) -> Result<()> {
        Exp2::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        if set.k != self.config.n {
            return Err(Error::invalid("set", format!("expected {} arms, got {}", self.config.n, set.k)));
        }
        Ok(self.sample_index())
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
mod tests {
    use super::*;

    #[test]
    fn probabilities_are_distributions_with_the_exploration_floor() {
        let config = Exp2Config {
            n: 5,
            horizon: 2000,
            eta: 0.05,
            gamma: 0.1,
            noise: NoiseSpec::Laplace { scale: 2.0 },
            clip: true,
        };
        let mut e = Exp2::new(config, &SeedSequence::from_seed(1)).unwrap();
        for t in 0..2000u64 {
            let p = e.probabilities();
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(p.iter().all(|&v| v >= 0.1 / 5.0 - 1e-15));
            let i = e.sample_index();
            e.observe(i, if i == 2 { 0.0 } else { f64::from((t % 3) as u32) / 2.0 }).unwrap();
        }
        assert!(e.observe(0, 0.5).is_err());
    }

    #[test]
    fn without_noise_the_best_arm_gains_the_weight() {
        let config = Exp2Config { n: 5, horizon: 3000, eta: 0.02, gamma: 0.05, noise: NoiseSpec::Zero, clip: true };
        let mut e = Exp2::new(config, &SeedSequence::from_seed(1)).unwrap();
        for _ in 0..3000 {
            let i = e.sample_index();
            e.observe(i, if i == 2 { 0.0 } else { 1.0 }).unwrap();
        }
        // Arm 2 (always loss 0) ends with nearly all of q.
        let p = e.probabilities();
        assert!(p[2] > 0.9, "{p:?}");
    }

    #[test]
    fn round_trip_continues_identically() {
        let config = Exp2Config {
            n: 3,
            horizon: 100,
            eta: 0.1,
            gamma: 0.2,
            noise: NoiseSpec::Laplace { scale: 1.0 },
            clip: false,
        };
        let mut a = Exp2::new(config, &SeedSequence::from_seed(2)).unwrap();
        for _ in 0..10 {
            let i = a.sample_index();
            a.observe(i, 0.3).unwrap();
        }
        let mut b = Exp2::from_bytes(&a.to_bytes()).unwrap();
        for _ in 0..20 {
            let (i, j) = (a.sample_index(), b.sample_index());
            assert_eq!(i, j);
            a.observe(i, 0.7).unwrap();
            b.observe(j, 0.7).unwrap();
            assert_eq!(a.probabilities(), b.probabilities());
        }
        assert!(a.observe(0, 1.5).is_err());
        assert!(Exp2::new(Exp2Config { gamma: 1.5, ..config }, &SeedSequence::from_seed(0)).is_err());
    }
}
