//! Lazy-to-private experts: multiplicative weights played lazily through a
//! batched shrinking dartboard with a switching floor, after the L2P
//! transformation of Asi, Koren, Liu & Talwar, "Private online learning via
//! lazy algorithms" (NeurIPS 2024, arXiv 2406.03620), applied to
//! multiplicative weights (the reconstruction and its privacy accounting are
//! in `dpbandits.privacy.private_experts`).
//!
//! Rounds are cut into batches of B. P_k(x) is proportional to
//! exp(-eta L_k(x)), L_k the cumulative loss through batch k. At the end of
//! batch k the current expert x is kept with probability
//! (1 - gamma) exp(-eta a_k(x)), a_k(x) its loss over the batch (a
//! history-local rule: it reads only batch k); otherwise a new expert is
//! drawn from P_k and a switch is counted. Because
//! P_{k-1}(x) (1 - gamma) exp(-eta a_k(x)) <= P_k(x) with remainder
//! proportional to P_k, the expert of batch k + 1 has law exactly P_k (the
//! lazy algorithm's distribution): the regret is that of batched
//! multiplicative weights. After `max_switches` switches the expert is
//! frozen (the privacy accounting counts at most that many draws).
//!
//! Exact draws (a loss lattice 2^-j, the default of
//! `dpbandits.LazyPrivateExperts`): every loss is rounded to the nearest
//! lattice point, eta and gamma are dyadic rationals, the keep coin is
//! Bernoulli(1 - gamma) times an exact Bernoulli(exp(-eta a)), and P_k is
//! sampled exactly by rejection from the uniform law
//! (`super::exact_draws`, shared with the private shrinking dartboard).
//! Without a lattice the coin and the draw (inverse CDF) are floating
//! point (the guarantee says so).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::exact_draws::{
    bernoulli_dyadic, check_dyadic_probability, exponential_draw, round_unit_to_lattice, Exponent,
};
use super::loss_batches::{check_lazy_rates, check_sizes, clip_unit, expert_in, lazy_keeps, loss_vector, BatchClock};
use super::Learner;
use crate::env::{DecisionSet, Feedback};
use crate::error::{try_filled, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::rng::SeedSequence;

/// Plain-number configuration of [`LazyExperts`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LazyExpertsConfig {
    /// Number of experts d.
    pub n: usize,
    pub horizon: u64,
    /// Batch length B.
    pub batch: u64,
    /// Learning rate eta of multiplicative weights (per unit of loss).
    pub eta: f64,
    /// Switching floor gamma in [0, 1): every batch switches with probability >= gamma.
    pub gamma: f64,
    /// Switches after which the expert is frozen.
    pub max_switches: u64,
    /// Losses outside [0, 1] are clipped (true) or refused.
    pub clip: bool,
    /// Exponent j of the loss lattice 2^-j of exact draws; None: floating-point draws.
    pub lattice: Option<u32>,
}

impl LazyExpertsConfig {
    fn validate(&self) -> Result<()> {
        check_sizes("n", self.n, self.horizon, "batch", self.batch)?;
        check_lazy_rates(self.eta, self.gamma)?;
        if let Some(j) = self.lattice {
            if j > 52 || 2f64.powi(j as i32) * (self.horizon as f64) > 2f64.powi(51) {
                return Err(Error::invalid(
                    "lattice",
                    format!("2^-{j} is too fine for exact cumulative losses over {} rounds", self.horizon),
                ));
            }
            Exponent::check(self.eta, j)?;
            check_dyadic_probability("gamma", self.gamma)?;
        }
        Ok(())
    }
}

impl super::LearnerFactory for LazyExpertsConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(LazyExperts::new(*self, seeds)?))
    }
}

/// Batched shrinking-dartboard multiplicative weights with a switching floor.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LazyExperts {
    config: LazyExpertsConfig,
    current: usize,
    /// Cumulative losses L(x).
    cumulative: Vec<f64>,
    /// The current expert's loss over the current batch.
    batch_loss: f64,
    switches: u64,
    clock: BatchClock,
    scratch: Vec<f64>,
    /// Coins and draws: the seeded stream, or the operating system (secure mode).
    sampling: NoiseRng,
}

const STATE_VERSION: u8 = 4;

impl LazyExperts {
    /// A fresh learner: x_0 uniform (P_0), coins and draws from `seeds`'
    /// `"sampling"` stream.
    pub fn new(config: LazyExpertsConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let mut sampling = seeds.stream("sampling");
        let current = sampling.random_range(0..config.n);
        Ok(LazyExperts {
            config,
            current,
            cumulative: try_filled("n", config.n, 0.0)?,
            batch_loss: 0.0,
            switches: 0,
            clock: BatchClock::new(config.batch),
            scratch: try_filled("n", config.n, 0.0)?,
            sampling: NoiseRng::seeded(sampling),
        })
    }

    pub fn config(&self) -> &LazyExpertsConfig {
        &self.config
    }

    pub fn t(&self) -> u64 {
        self.clock.t()
    }

    pub fn current(&self) -> usize {
        self.current
    }

    /// Switches made (draws from P_k).
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// Recorded loss vectors the bounds policy clipped into [0, 1]^n.
    pub fn clipped_rewards(&self) -> u64 {
        self.clock.clipped()
    }

    /// Records the round's loss vector; at a batch's end, keeps or redraws the expert.
    pub fn observe(&mut self, losses: &[f64]) -> Result<()> {
        let c = self.config;
        self.clock.admit(losses, c.n, c.horizon)?;
        self.scratch.copy_from_slice(losses);
        let clipped = clip_unit(&mut self.scratch, c.clip)?;
        if let Some(j) = c.lattice {
            round_unit_to_lattice(&mut self.scratch, j);
        }
        for (s, l) in self.cumulative.iter_mut().zip(&self.scratch) {
            *s += l;
        }
        self.batch_loss += self.scratch[self.current];
        if self.clock.tick(clipped) {
            self.end_batch()?;
            self.clock.open_batch(c.batch, c.horizon);
        }
        Ok(())
    }

    fn end_batch(&mut self) -> Result<()> {
        let c = self.config;
        let loss = std::mem::take(&mut self.batch_loss);
        let rng = self.sampling.source()?;
        if let Some(j) = c.lattice {
            if self.switches >= c.max_switches {
                return Ok(());
            }
            // Keep with probability (1 - gamma) exp(-eta a), both coins exact.
            let exponent = Exponent::new(c.eta, Some(j));
            if !bernoulli_dyadic(rng, c.gamma) && exponent.keep(rng, loss) {
                return Ok(());
            }
            self.current = exponential_draw(rng, &exponent, &self.cumulative);
            self.switches += 1;
            return Ok(());
        }
        if lazy_keeps(&mut &mut *rng, c.eta, c.gamma, loss, self.switches, c.max_switches) {
            return Ok(());
        }
        // A draw from P_k(x) ∝ exp(-eta L(x)), by the inverse CDF.
        let lo = self.cumulative.iter().copied().fold(f64::INFINITY, f64::min);
        let mut total = 0.0;
        for (w, l) in self.scratch.iter_mut().zip(&self.cumulative) {
            *w = (-c.eta * (l - lo)).exp();
            total += *w;
        }
        let target = rng.random::<f64>() * total;
        let mut acc = 0.0;
        let mut pick = self.scratch.iter().rposition(|&w| w > 0.0).unwrap_or(0);
        for (i, w) in self.scratch.iter().enumerate() {
            acc += w;
            if target < acc {
                pick = i;
                break;
            }
        }
        self.current = pick;
        self.switches += 1;
        Ok(())
    }

    /// Draws future coins and experts from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.sampling.reseed(seeds.stream("sampling"));
    }

    /// Coins and draws from the operating system from now on (secure mode).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.sampling.use_os_entropy()
    }

    pub fn os_entropy(&self) -> bool {
        self.sampling.is_os()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// The learner `to_bytes` wrote; refuses inconsistent state.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let Some((&STATE_VERSION, body)) = bytes.split_first() else {
            return Err(Error::Decode("unknown lazy-experts state version".into()));
        };
        let e: LazyExperts = crate::state::decode(body)?;
        let c = &e.config;
        c.validate().map_err(|err| Error::Decode(format!("invalid lazy-experts configuration: {err}")))?;
        let step = c.lattice.map(|j| 2f64.powi(-(j as i32)));
        let on_lattice = |v: f64| step.is_none_or(|s| (v / s).fract() == 0.0);
        let consistent = e.cumulative.len() == c.n
            && e.scratch.len() == c.n
            && e.current < c.n
            && e.clock.consistent(c.horizon)
            && e.switches <= c.max_switches
            && e.batch_loss.is_finite()
            && e.batch_loss >= 0.0
            && on_lattice(e.batch_loss)
            && e.cumulative.iter().all(|&v| v.is_finite() && v >= 0.0 && v <= e.clock.t() as f64 && on_lattice(v));
        if !consistent {
            return Err(Error::Decode("inconsistent lazy-experts state".into()));
        }
        Ok(e)
    }
}

impl Learner for LazyExperts {
    fn use_os_entropy(&mut self) -> Result<()> {
        LazyExperts::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        expert_in(set, self.config.n, self.current)
    }

    fn update(&mut self, _set: &DecisionSet, _index: usize, feedback: Feedback<'_>) -> Result<()> {
        self.observe(loss_vector(feedback)?)
    }

    fn full_information(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(n: usize, horizon: u64) -> LazyExpertsConfig {
        LazyExpertsConfig { n, horizon, batch: 4, eta: 0.05, gamma: 0.1, max_switches: 1000, clip: true, lattice: None }
    }

    fn exact(n: usize, horizon: u64) -> LazyExpertsConfig {
        LazyExpertsConfig { eta: 0.0625, gamma: 0.125, lattice: Some(20), ..config(n, horizon) }
    }

    #[test]
    fn the_played_expert_has_the_law_of_multiplicative_weights() {
        // Expert 0 has loss 0, expert 1 loss 1 every round: after k batches
        // P_k(0) = 1 / (1 + exp(-eta 4 k)). Over many seeds the frequency of
        // expert 0 in batch 3 (after 2 batches) must match P_2(0).
        let c = config(2, 40);
        let runs = 20_000;
        let mut hits = 0;
        for s in 0..runs {
            let mut e = LazyExperts::new(c, &SeedSequence::from_seed(s)).unwrap();
            for _ in 0..8 {
                e.observe(&[0.0, 1.0]).unwrap();
            }
            hits += usize::from(e.current() == 0);
        }
        let p = 1.0 / (1.0 + (-0.05f64 * 8.0).exp());
        let freq = hits as f64 / runs as f64;
        let se = (p * (1.0 - p) / runs as f64).sqrt();
        assert!((freq - p).abs() < 4.0 * se, "freq {freq}, P_2(0) {p}");
    }

    #[test]
    fn exact_draws_keep_the_law_of_multiplicative_weights() {
        // As above with exact coins and draws: expert 0 loss 0.3 (rounded
        // to the lattice), expert 1 loss 1, eta = 1/16, two batches of 4.
        let c = exact(2, 40);
        let runs = 20_000;
        let mut hits = 0;
        for s in 0..runs {
            let mut e = LazyExperts::new(c, &SeedSequence::from_seed(s)).unwrap();
            for _ in 0..8 {
                e.observe(&[0.3, 1.0]).unwrap();
            }
            hits += usize::from(e.current() == 0);
        }
        let l0 = (0.3f64 * 2f64.powi(20)).round() / 2f64.powi(20);
        let p = 1.0 / (1.0 + (-0.0625 * 8.0 * (1.0 - l0)).exp());
        let freq = hits as f64 / runs as f64;
        let se = (p * (1.0 - p) / runs as f64).sqrt();
        assert!((freq - p).abs() < 4.0 * se, "freq {freq}, P_2(0) {p}");
    }

    #[test]
    fn the_exact_keep_coin_has_its_probability() {
        // One batch of 4 rounds, loss 1 per round on the played expert and
        // on the other one: the expert switches with probability
        // 1 - (1 - gamma) exp(-eta 4), then is redrawn uniformly.
        let c = exact(2, 8);
        let runs = 100_000;
        let mut switched = 0;
        for s in 0..runs {
            let mut e = LazyExperts::new(c, &SeedSequence::from_seed(s)).unwrap();
            for _ in 0..4 {
                e.observe(&[1.0, 1.0]).unwrap();
            }
            switched += usize::from(e.switches() == 1);
        }
        let p = 1.0 - (1.0 - 0.125) * (-0.25f64).exp();
        let freq = switched as f64 / runs as f64;
        assert!((freq - p).abs() < 4.5 * (p * (1.0 - p) / runs as f64).sqrt(), "{freq} vs {p}");
    }

    #[test]
    fn exact_configurations_are_checked_and_restored_states_stay_on_the_lattice() {
        let c = exact(3, 100);
        for bad in [
            LazyExpertsConfig { gamma: 1e-10, ..c },
            LazyExpertsConfig { eta: 0.1, lattice: Some(70), ..c },
            LazyExpertsConfig { lattice: Some(48), ..c },
        ] {
            assert!(LazyExperts::new(bad, &SeedSequence::from_seed(0)).is_err(), "{bad:?}");
        }
        let mut a = LazyExperts::new(c, &SeedSequence::from_seed(2)).unwrap();
        for _ in 0..10 {
            a.observe(&[0.1, 0.7, 0.2]).unwrap();
        }
        assert!(a.cumulative.iter().all(|v| (v * 2f64.powi(20)).fract() == 0.0));
        assert!(LazyExperts::from_bytes(&a.to_bytes()).is_ok());
        let mut off = a.clone();
        off.cumulative[0] += 1e-9;
        assert!(LazyExperts::from_bytes(&off.to_bytes()).is_err());
    }

    #[test]
    fn switches_stop_at_the_budget_and_state_round_trips() {
        let c = LazyExpertsConfig { max_switches: 3, gamma: 0.9, ..config(5, 400) };
        let mut a = LazyExperts::new(c, &SeedSequence::from_seed(1)).unwrap();
        for t in 0..150u64 {
            a.observe(&[(t % 2) as f64, 0.5, 0.2, 1.0, 0.0]).unwrap();
        }
        assert_eq!(a.switches(), 3);
        let mut b = LazyExperts::from_bytes(&a.to_bytes()).unwrap();
        for _ in 150..400 {
            a.observe(&[0.1, 0.5, 0.2, 1.0, 0.0]).unwrap();
            b.observe(&[0.1, 0.5, 0.2, 1.0, 0.0]).unwrap();
            assert_eq!(a.current(), b.current());
        }
        assert!(a.observe(&[0.0; 5]).is_err());
        let mut bad = b.clone();
        bad.switches = 9;
        assert!(LazyExperts::from_bytes(&bad.to_bytes()).is_err());
        assert!(LazyExperts::from_bytes(&[7, 1, 2]).is_err());
        assert!(LazyExperts::new(LazyExpertsConfig { gamma: 1.0, ..c }, &SeedSequence::from_seed(0)).is_err());
        let mut strict = LazyExperts::new(LazyExpertsConfig { clip: false, ..c }, &SeedSequence::from_seed(0)).unwrap();
        assert!(strict.observe(&[f64::NAN, 0.0, 0.0, 0.0, 0.0]).is_err());
        assert!(strict.observe(&[2.0, 0.0, 0.0, 0.0, 0.0]).is_err());
    }
}
