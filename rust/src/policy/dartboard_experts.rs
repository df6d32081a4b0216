//! Private experts against an oblivious adversary: a batched shrinking
//! dartboard whose switching test is a noisy threshold and whose new
//! experts come from the exponential mechanism, after the oblivious-
//! adversary algorithm of Asi, Feldman, Koren & Talwar, "Private online
//! prediction from experts: separations and faster rates" (COLT 2023,
//! arXiv 2210.13537). The reconstruction and its accounting are written
//! out in `dpbandits.privacy.private_experts`.
//!
//! Rounds are cut into batches of B. P_k(x) is proportional to
//! exp(-eta L_k(x)), L_k the cumulative losses through batch k. At the end
//! of batch k, with a the current expert's loss over the batch, Z one noise
//! draw (discrete Laplace on the lattice by default) and c >= 0 a public
//! shift, the expert is kept with probability exp(-eta max(0, a + Z + c))
//! (the test reads batch k only); otherwise a new expert is drawn from P_k
//! and a switch is counted. After `max_switches` switches the expert is
//! frozen.
//!
//! Exact draws: on the lattice every loss is an integer number of steps
//! 2^-j and eta is a dyadic rational m 2^-e, so each exponent eta q is an
//! exact fraction; the keep coin is Bernoulli(exp(-eta q)) drawn exactly
//! (`noise::bernoulli`), and P_k is sampled exactly by rejection: a uniform
//! expert y is accepted with probability exp(-eta (L_k(y) - min L_k))
//! (expected trials at most d). Decisions read only these draws.

use rand::Rng;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use super::exact_draws::{exponential_draw, Exponent};

use super::loss_batches::{check_sizes, clip_unit, expert_in, is_laplace_family, loss_vector, BatchClock};
use super::Learner;
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, check_positive, try_filled, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::noise::NoiseSpec;
use crate::rng::SeedSequence;

/// Plain-number configuration of [`DartboardExperts`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DartboardExpertsConfig {
    /// Number of experts d.
    pub n: usize,
    pub horizon: u64,
    /// Batch length B.
    pub batch: u64,
    /// Learning rate eta per unit of loss (a dyadic rational, as every f64).
    pub eta: f64,
    /// Shift c >= 0 of the switching test (a lattice value on the lattice).
    pub shift: f64,
    /// Switches after which the expert is frozen.
    pub max_switches: u64,
    /// Noise Z of the switching test (zero, Laplace or lattice Laplace).
    pub noise: NoiseSpec,
    /// Losses outside [0, 1] are clipped (true) or refused.
    pub clip: bool,
}

impl DartboardExpertsConfig {
    fn validate(&self) -> Result<()> {
        check_sizes("n", self.n, self.horizon, "batch", self.batch)?;
        check_positive("eta", self.eta)?;
        if !(self.shift.is_finite() && self.shift >= 0.0) {
            return Err(Error::invalid("shift", format!("must be finite and >= 0, got {}", self.shift)));
        }
        if !is_laplace_family(&self.noise) {
            return Err(Error::invalid("noise", "must be zero, Laplace or lattice Laplace"));
        }
        self.noise.validate(&[1])?;
        if let Some(s) = self.noise.lattice() {
            if s.exponent() < 0 {
                return Err(Error::invalid("noise", "the lattice step must be at most 1"));
            }
            if s.step().recip() * (self.horizon as f64) > 2f64.powi(51) {
                return Err(Error::invalid("noise", "the lattice is too fine for exact cumulative losses"));
            }
            if (self.shift / s.step()).fract() != 0.0 || self.shift / s.step() > 2f64.powi(51) {
                return Err(Error::invalid("shift", "must be a lattice value below 2^51 steps"));
            }
            Exponent::check(self.eta, s.exponent().unsigned_abs())?;
        }
        Ok(())
    }
}

impl super::LearnerFactory for DartboardExpertsConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(DartboardExperts::new(*self, seeds)?))
    }
}

/// The batched private shrinking dartboard (module documentation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DartboardExperts {
    config: DartboardExpertsConfig,
    current: usize,
    /// Cumulative (rounded) losses L(x).
    cumulative: Vec<f64>,
    /// The current expert's (rounded) loss over the current batch.
    batch_loss: f64,
    switches: u64,
    clock: BatchClock,
    scratch: Vec<f64>,
    noise: NoiseRng,
}

const STATE_VERSION: u8 = 2;

impl DartboardExperts {
    /// A fresh learner: x_0 uniform (P_0) from `seeds`' `"sampling"`
    /// stream; the tests' noise, coins and draws from `"dartboard_noise"`.
    pub fn new(config: DartboardExpertsConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let current = seeds.stream("sampling").random_range(0..config.n);
        Ok(DartboardExperts {
            config,
            current,
            cumulative: try_filled("n", config.n, 0.0)?,
            batch_loss: 0.0,
            switches: 0,
            clock: BatchClock::new(config.batch),
            scratch: try_filled("n", config.n, 0.0)?,
            noise: NoiseRng::seeded(seeds.stream("dartboard_noise")),
        })
    }

    pub fn config(&self) -> &DartboardExpertsConfig {
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

    /// Records the round's loss vector; at a batch's end (before the
    /// horizon), keeps or redraws the expert.
    pub fn observe(&mut self, losses: &[f64]) -> Result<()> {
        let (n, horizon) = (self.config.n, self.config.horizon);
        self.clock.admit(losses, n, horizon)?;
        self.scratch.copy_from_slice(losses);
        let clipped = clip_unit(&mut self.scratch, self.config.clip)?;
        let limit = self.config.noise.lattice().map_or(f64::INFINITY, |s| s.step().recip() + 1.0);
        self.config.noise.round_input("losses", &mut self.scratch, limit)?;
        for (c, l) in self.cumulative.iter_mut().zip(&self.scratch) {
            *c += l;
        }
        self.batch_loss += self.scratch[self.current];
        if self.clock.tick(clipped) {
            if self.clock.t() < horizon {
                self.end_batch()?;
            }
            self.batch_loss = 0.0;
            self.clock.open_batch(self.config.batch, horizon);
        }
        Ok(())
    }

    fn end_batch(&mut self) -> Result<()> {
        if self.switches >= self.config.max_switches {
            return Ok(());
        }
        let exponent = exponent(&self.config);
        let (keep, rng) = keep_coin(&self.config, &exponent, &mut self.noise, self.batch_loss)?;
        if !keep {
            self.current = exponential_draw(rng, &exponent, &self.cumulative);
            self.switches += 1;
        }
        Ok(())
    }

    /// `runs` switching tests (true: switch) of an expert whose batch loss
    /// sums `losses` (its losses over one batch), fresh noise each: the
    /// released coins, for privacy audits. Only the noise stream advances.
    pub fn switch_runs(&mut self, losses: &[f64], runs: usize) -> Result<Vec<bool>> {
        let a = self.rounded_sum(losses)?;
        let exponent = exponent(&self.config);
        let mut out = crate::error::try_with_capacity("runs", runs)?;
        for _ in 0..runs {
            let (keep, _) = keep_coin(&self.config, &exponent, &mut self.noise, a)?;
            out.push(!keep);
        }
        Ok(out)
    }

    /// `runs` draws from P ∝ exp(-eta L) for cumulative losses L given as
    /// `rows` loss vectors (rows of n entries), fresh randomness each: the
    /// released experts, for privacy audits. Only the noise stream advances.
    pub fn draw_runs(&mut self, rows: &[f64], runs: usize) -> Result<Vec<u64>> {
        let n = self.config.n;
        if rows.is_empty() || !rows.len().is_multiple_of(n) {
            return Err(Error::invalid("losses", format!("expected rows of {n} entries, got {} values", rows.len())));
        }
        let mut sums = vec![0.0; n];
        for row in rows.chunks_exact(n) {
            let mut r = row.to_vec();
            check_finite("losses", &r)?;
            clip_unit(&mut r, self.config.clip)?;
            let limit = self.config.noise.lattice().map_or(f64::INFINITY, |s| s.step().recip() + 1.0);
            self.config.noise.round_input("losses", &mut r, limit)?;
            for (s, l) in sums.iter_mut().zip(&r) {
                *s += l;
            }
        }
        let exponent = exponent(&self.config);
        let rng = self.noise.source()?;
        let mut out = crate::error::try_with_capacity("runs", runs)?;
        for _ in 0..runs {
            out.push(exponential_draw(rng, &exponent, &sums) as u64);
        }
        Ok(out)
    }

    fn rounded_sum(&self, losses: &[f64]) -> Result<f64> {
        let mut r = losses.to_vec();
        check_finite("losses", &r)?;
        clip_unit(&mut r, self.config.clip)?;
        let limit = self.config.noise.lattice().map_or(f64::INFINITY, |s| s.step().recip() + 1.0);
        self.config.noise.round_input("losses", &mut r, limit)?;
        Ok(r.iter().sum())
    }

    /// Draws future noise from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.noise.reseed(seeds.stream("dartboard_noise"));
    }

    /// Noise, coins and draws from the operating system from now on (secure mode).
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
            return Err(Error::Decode("unknown dartboard-experts state version".into()));
        };
        let e: DartboardExperts = crate::state::decode(body)?;
        let c = &e.config;
        c.validate().map_err(|err| Error::Decode(format!("invalid dartboard-experts configuration: {err}")))?;
        let step = c.noise.lattice().map(|s| s.step());
        let on_lattice = |v: f64| step.is_none_or(|s| (v / s).fract() == 0.0);
        let consistent = e.cumulative.len() == c.n
            && e.scratch.len() == c.n
            && e.current < c.n
            && e.clock.consistent(c.horizon)
            && e.switches <= c.max_switches
            && e.batch_loss.is_finite()
            && e.batch_loss >= 0.0
            && e.batch_loss <= (c.batch.min(e.clock.t())) as f64
            && on_lattice(e.batch_loss)
            && e.cumulative.iter().all(|&v| v.is_finite() && v >= 0.0 && v <= e.clock.t() as f64 && on_lattice(v));
        if !consistent {
            return Err(Error::Decode("inconsistent dartboard-experts state".into()));
        }
        Ok(e)
    }
}

/// The exact exponents of `config`'s draws (on its noise's lattice, if any).
fn exponent(config: &DartboardExpertsConfig) -> Exponent {
    Exponent::new(config.eta, config.noise.lattice().map(|s| s.exponent().max(0).unsigned_abs()))
}

/// The switching test of an expert with batch loss `a`: (keep, the noise
/// source for the draw that follows a switch).
fn keep_coin<'a>(
    config: &DartboardExpertsConfig,
    exponent: &Exponent,
    noise: &'a mut NoiseRng,
    a: f64,
) -> Result<(bool, &'a mut dyn RngCore)> {
    let rng = noise.source()?;
    let z = config.noise.sample(&mut *rng);
    // On the lattice a, z and the shift are exact multiples of the step.
    let v = (a + z + config.shift).max(0.0);
    let keep = exponent.keep(&mut *rng, v);
    Ok((keep, rng))
}

impl Learner for DartboardExperts {
    fn use_os_entropy(&mut self) -> Result<()> {
        DartboardExperts::use_os_entropy(self)
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
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn lattice() -> NoiseSpec {
        NoiseSpec::Laplace { scale: 4.0 }.on_lattice(10).unwrap()
    }

    fn config(n: usize, horizon: u64, noise: NoiseSpec) -> DartboardExpertsConfig {
        DartboardExpertsConfig { n, horizon, batch: 4, eta: 0.0625, shift: 0.0, max_switches: 1000, noise, clip: true }
    }

    #[test]
    fn draws_follow_exponential_weights_exactly() {
        // Cumulative losses (0, 2, 4): P ∝ (1, e^-1/8, e^-1/4) at eta = 1/16.
        let mut e = DartboardExperts::new(config(3, 100, lattice()), &SeedSequence::from_seed(3)).unwrap();
        let rows = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
        let runs = 200_000;
        let draws = e.draw_runs(&rows, runs).unwrap();
        let w = [1.0, (-0.125f64).exp(), (-0.25f64).exp()];
        let total: f64 = w.iter().sum();
        for (i, wi) in w.iter().enumerate() {
            let p = wi / total;
            let freq = draws.iter().filter(|&&d| d == i as u64).count() as f64 / runs as f64;
            let se = (p * (1.0 - p) / runs as f64).sqrt();
            assert!((freq - p).abs() < 4.5 * se, "expert {i}: {freq} vs {p}");
        }
    }

    #[test]
    fn the_switching_test_has_its_probability() {
        // Zero noise, shift 0: switch with probability 1 - exp(-eta a), a = 3.
        let mut e = DartboardExperts::new(config(2, 100, NoiseSpec::Zero), &SeedSequence::from_seed(4)).unwrap();
        let runs = 200_000;
        let hits = e.switch_runs(&[1.0, 1.0, 1.0, 0.0], runs).unwrap().iter().filter(|&&s| s).count();
        let p = 1.0 - (-0.0625f64 * 3.0).exp();
        let freq = hits as f64 / runs as f64;
        assert!((freq - p).abs() < 4.5 * (p * (1.0 - p) / runs as f64).sqrt(), "{freq} vs {p}");
    }

    #[test]
    fn experts_change_at_batch_ends_only_and_state_round_trips() {
        let mut a = DartboardExperts::new(config(5, 400, lattice()), &SeedSequence::from_seed(1)).unwrap();
        for t in 0..150u64 {
            let before = a.current();
            a.observe(&[(t % 2) as f64, 0.5, 0.2, 1.0, 0.0]).unwrap();
            if !a.t().is_multiple_of(4) {
                assert_eq!(a.current(), before);
            }
            let step = 2f64.powi(-10);
            assert!(a.cumulative.iter().all(|v| (v / step).fract() == 0.0));
        }
        let mut b = DartboardExperts::from_bytes(&a.to_bytes()).unwrap();
        for _ in 150..400 {
            a.observe(&[0.1, 0.5, 0.2, 1.0, 0.0]).unwrap();
            b.observe(&[0.1, 0.5, 0.2, 1.0, 0.0]).unwrap();
            assert_eq!(a.current(), b.current());
        }
        assert!(a.observe(&[0.0; 5]).is_err());
        let mut bad = b.clone();
        bad.switches = 2000;
        assert!(DartboardExperts::from_bytes(&bad.to_bytes()).is_err());
        let mut off = b.clone();
        off.cumulative[0] += 1e-9;
        assert!(DartboardExperts::from_bytes(&off.to_bytes()).is_err());
        assert!(DartboardExperts::from_bytes(&[7, 1, 2]).is_err());
    }

    #[test]
    fn bad_configurations_and_inputs_are_refused() {
        let c = config(3, 50, lattice());
        for bad in [
            DartboardExpertsConfig { batch: 0, ..c },
            DartboardExpertsConfig { eta: 0.0, ..c },
            DartboardExpertsConfig { shift: -1.0, ..c },
            DartboardExpertsConfig { shift: 0.1, ..c },
            DartboardExpertsConfig { noise: NoiseSpec::Gaussian { sigma: 1.0 }, ..c },
            DartboardExpertsConfig { n: 0, ..c },
        ] {
            assert!(DartboardExperts::new(bad, &SeedSequence::from_seed(0)).is_err(), "{bad:?}");
        }
        let mut strict =
            DartboardExperts::new(DartboardExpertsConfig { clip: false, ..c }, &SeedSequence::from_seed(0)).unwrap();
        assert!(strict.observe(&[f64::NAN, 0.0, 0.0]).is_err());
        assert!(strict.observe(&[2.0, 0.0, 0.0]).is_err());
        assert!(strict.observe(&[0.0, 0.0]).is_err());
        assert_eq!(strict.t(), 0);
    }

    #[test]
    fn the_learner_follows_a_clearly_better_expert() {
        let c = DartboardExpertsConfig { eta: 0.125, batch: 8, ..config(6, 4000, lattice()) };
        let mut e = DartboardExperts::new(c, &SeedSequence::from_seed(6)).unwrap();
        let mut loss = 0.0;
        for _ in 0..4000 {
            let l: Vec<f64> = (0..6).map(|i| if i == 4 { 0.1 } else { 0.9 }).collect();
            loss += l[e.current()];
            e.observe(&l).unwrap();
        }
        assert!(loss < 0.1 * 4000.0 + 400.0, "loss {loss}");
        assert_eq!(e.current(), 4);
    }
}
