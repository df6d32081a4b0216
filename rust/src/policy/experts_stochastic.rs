//! Private prediction from experts with stochastic losses: the doubling-batch
//! algorithm of Asi, Feldman, Koren & Talwar, "Private online prediction
//! from experts: separations and faster rates" (COLT 2023, arXiv
//! 2210.13537, Sec. 3, the algorithm for stochastic adversaries).
//!
//! Rounds are cut into consecutive batches B_0, B_1, ... of lengths
//! b_0, 2 b_0, 4 b_0, ... (the last one cut at the horizon). During batch
//! B_{i+1} the learner plays one expert x_{i+1}, chosen at the end of B_i by
//! report-noisy-min over the losses of B_i only:
//!
//!   x_{i+1} = argmin_x ( S_i(x) + Z_x ),  S_i(x) = sum_{t in B_i} l_t(x),
//!
//! Z_x i.i.d. Laplace (discrete Laplace on the lattice by default), ties to
//! the lowest index. x_0 is uniform (no data). Each loss vector enters
//! exactly one selection, so the whole transcript is as private as one
//! selection (parallel composition); the noise scale is a plain number
//! computed by `dpbandits.privacy.private_experts`.
//!
//! On a lattice every loss is clipped into [0, 1] and rounded to the
//! lattice first (monotone: it stays in [0, 1]), so S_i(x) is an exact sum
//! of integers times 2^-j, the noise is an exact integer times 2^-j and the
//! selection is an exact function of integers.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::loss_batches::{check_sizes, clip_unit, expert_in, is_laplace_family, loss_vector, BatchClock};
use super::Learner;
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, try_filled, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::noise::NoiseSpec;
use crate::rng::SeedSequence;

/// Plain-number configuration of [`StochasticExperts`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StochasticExpertsConfig {
    /// Number of experts d.
    pub n: usize,
    /// Horizon T the noise was calibrated for.
    pub horizon: u64,
    /// Length b_0 of the first batch (batch i has b_0 2^i rounds).
    pub first_batch: u64,
    /// Per-expert noise Z_x of the selection (Laplace, lattice Laplace, or
    /// zero for the non-private algorithm).
    pub noise: NoiseSpec,
    /// Losses outside [0, 1] are clipped (true) or refused.
    pub clip: bool,
}

impl StochasticExpertsConfig {
    fn validate(&self) -> Result<()> {
        check_sizes("n", self.n, self.horizon, "first_batch", self.first_batch)?;
        if !is_laplace_family(&self.noise) {
            return Err(Error::invalid("noise", "must be zero, Laplace or lattice Laplace (report-noisy-min)"));
        }
        self.noise.validate(&[self.n])?;
        if let Some(s) = self.noise.lattice() {
            // Batch sums of up to `horizon` losses in [0, 1] stay exact in f64.
            let steps_per_loss = s.step().recip();
            if steps_per_loss * (self.horizon as f64) > 2f64.powi(51) {
                return Err(Error::invalid(
                    "noise",
                    format!("the lattice 2^-{} is too fine for exact sums over {} rounds", s.exponent(), self.horizon),
                ));
            }
        }
        Ok(())
    }

    /// Steps an input may reach on the lattice (losses lie in [0, 1]).
    fn input_limit(&self) -> f64 {
        self.noise.lattice().map_or(f64::INFINITY, |s| s.step().recip() + 1.0)
    }
}

impl super::LearnerFactory for StochasticExpertsConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(StochasticExperts::new(*self, seeds)?))
    }
}

/// The doubling-batch learner (Asi, Feldman, Koren & Talwar 2023, Sec. 3).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StochasticExperts {
    config: StochasticExpertsConfig,
    /// The expert played in the current batch.
    current: usize,
    /// S_i(x) of the current batch so far (rounded losses).
    sums: Vec<f64>,
    /// Length of the current batch.
    batch_len: u64,
    /// Selections made (batches closed).
    selections: u64,
    clock: BatchClock,
    scratch: Vec<f64>,
    noise: NoiseRng,
}

const STATE_VERSION: u8 = 2;

impl StochasticExperts {
    /// A fresh learner: x_0 uniform from `seeds`' `"sampling"` stream, the
    /// selections' noise from `"selection_noise"`.
    pub fn new(config: StochasticExpertsConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let mut sampling = seeds.stream("sampling");
        let current = sampling.random_range(0..config.n);
        Ok(StochasticExperts {
            config,
            current,
            sums: try_filled("n", config.n, 0.0)?,
            batch_len: config.first_batch,
            selections: 0,
            clock: BatchClock::new(config.first_batch),
            scratch: try_filled("n", config.n, 0.0)?,
            noise: NoiseRng::seeded(seeds.stream("selection_noise")),
        })
    }

    pub fn config(&self) -> &StochasticExpertsConfig {
        &self.config
    }

    pub fn t(&self) -> u64 {
        self.clock.t()
    }

    /// Recorded loss vectors the bounds policy clipped into [0, 1]^n.
    pub fn clipped_rewards(&self) -> u64 {
        self.clock.clipped()
    }

    /// The expert played this round.
    pub fn current(&self) -> usize {
        self.current
    }

    /// Selections made so far (closed batches).
    pub fn selections(&self) -> u64 {
        self.selections
    }

    /// Rounds left in the current batch.
    pub fn batch_remaining(&self) -> u64 {
        self.clock.batch_remaining()
    }

    /// Records the round's loss vector; closes the batch (a new selection)
    /// at its last round.
    pub fn observe(&mut self, losses: &[f64]) -> Result<()> {
        let (n, horizon) = (self.config.n, self.config.horizon);
        self.clock.admit(losses, n, horizon)?;
        self.scratch.copy_from_slice(losses);
        let clipped = clip_unit(&mut self.scratch, self.config.clip)?;
        let limit = self.config.input_limit();
        self.config.noise.round_input("losses", &mut self.scratch, limit)?;
        for (s, l) in self.sums.iter_mut().zip(&self.scratch) {
            *s += l;
        }
        if self.clock.tick(clipped) {
            self.current = self.select_from_sums()?;
            self.selections += 1;
            self.sums.fill(0.0);
            self.batch_len = self.batch_len.saturating_mul(2);
            self.clock.open_batch(self.batch_len, horizon);
        }
        Ok(())
    }

    /// argmin_x (S(x) + Z_x), first index on ties.
    fn select_from_sums(&mut self) -> Result<usize> {
        let rng = self.noise.source()?;
        self.config.noise.sample_into(rng, 0, &mut self.scratch);
        Ok(noisy_argmin(&self.sums, &self.scratch))
    }

    /// `runs` independent selections on one batch of `losses` (rows of n
    /// entries), with fresh noise each: the exact released values, for
    /// privacy audits. The learner's state is unchanged except its noise
    /// stream.
    pub fn selection_runs(&mut self, losses: &[f64], runs: usize) -> Result<Vec<u64>> {
        let n = self.config.n;
        if losses.is_empty() || !losses.len().is_multiple_of(n) {
            return Err(Error::invalid("losses", format!("expected rows of {n} entries, got {} values", losses.len())));
        }
        check_finite("losses", losses)?;
        let mut rows = losses.to_vec();
        clip_unit(&mut rows, self.config.clip)?;
        self.config.noise.round_input("losses", &mut rows, self.config.input_limit())?;
        let mut sums = vec![0.0; n];
        for row in rows.chunks_exact(n) {
            for (s, l) in sums.iter_mut().zip(row) {
                *s += l;
            }
        }
        let mut z = vec![0.0; n];
        let mut out = crate::error::try_with_capacity("runs", runs)?;
        let rng = self.noise.source()?;
        for _ in 0..runs {
            self.config.noise.sample_into(rng, 0, &mut z);
            out.push(noisy_argmin(&sums, &z) as u64);
        }
        Ok(out)
    }

    /// Draws future noise from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.noise.reseed(seeds.stream("selection_noise"));
    }

    /// Selection noise from the operating system from now on (secure mode).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.noise.use_os_entropy()
    }

    /// Whether selection noise comes from the operating system.
    pub fn os_entropy(&self) -> bool {
        self.noise.is_os()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// The learner `to_bytes` wrote, continuing exactly; refuses bytes whose
    /// state is inconsistent with their configuration.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let Some((&STATE_VERSION, body)) = bytes.split_first() else {
            return Err(Error::Decode("unknown stochastic-experts state version".into()));
        };
        let e: StochasticExperts = crate::state::decode(body)?;
        let c = &e.config;
        c.validate().map_err(|err| Error::Decode(format!("invalid stochastic-experts configuration: {err}")))?;
        let consistent = e.sums.len() == c.n
            && e.scratch.len() == c.n
            && e.current < c.n
            && e.clock.consistent(c.horizon)
            && e.batch_len >= c.first_batch
            && e.sums.iter().all(|s| s.is_finite() && *s >= 0.0 && *s <= (e.clock.t() as f64) + 1.0);
        if !consistent {
            return Err(Error::Decode("inconsistent stochastic-experts state".into()));
        }
        Ok(e)
    }
}

/// The index of the smallest `sums[i] + noise[i]`; ties to the lowest index.
pub(crate) fn noisy_argmin(sums: &[f64], noise: &[f64]) -> usize {
    let (mut best, mut best_score) = (0, f64::INFINITY);
    for (i, (s, z)) in sums.iter().zip(noise).enumerate() {
        let score = s + z;
        if score < best_score {
            best_score = score;
            best = i;
        }
    }
    best
}

impl Learner for StochasticExperts {
    fn use_os_entropy(&mut self) -> Result<()> {
        StochasticExperts::use_os_entropy(self)
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
#[allow(clippy::float_cmp)] // lattice values are exact: equality is the test
mod tests {
    use super::*;
    use crate::noise::SecureNoise;

    fn config(n: usize, horizon: u64, noise: NoiseSpec) -> StochasticExpertsConfig {
        StochasticExpertsConfig { n, horizon, first_batch: 1, noise, clip: true }
    }

    #[test]
    fn batches_double_and_the_expert_changes_only_at_their_ends() {
        let mut e = StochasticExperts::new(config(3, 100, NoiseSpec::Zero), &SeedSequence::from_seed(1)).unwrap();
        let mut ends = Vec::new();
        for t in 1..=100u64 {
            let before = e.selections();
            e.observe(&[0.5, 0.0, 1.0]).unwrap();
            if e.selections() > before {
                ends.push(t);
                assert_eq!(e.current(), 1, "non-private: the leader of the batch");
            }
        }
        // Batches of 1, 2, 4, 8, 16, 32, then the last one cut at 100.
        assert_eq!(ends, vec![1, 3, 7, 15, 31, 63, 100]);
        assert!(e.observe(&[0.0; 3]).is_err());
    }

    #[test]
    fn ties_go_to_the_lowest_index_and_noise_is_exact_on_the_lattice() {
        assert_eq!(noisy_argmin(&[1.0, 0.5, 0.5], &[0.0; 3]), 1);
        let lattice = NoiseSpec::Laplace { scale: 2.0 }.on_lattice(18).unwrap();
        let mut e = StochasticExperts::new(config(4, 64, lattice), &SeedSequence::from_seed(3)).unwrap();
        for _ in 0..64 {
            e.observe(&[0.3, 0.1, 0.7, 0.123_456_789]).unwrap();
            let step = 2f64.powi(-18);
            assert!(e.sums.iter().all(|s| (s / step).fract() == 0.0));
        }
    }

    #[test]
    fn hostile_inputs_are_refused() {
        let mut e = StochasticExperts::new(
            StochasticExpertsConfig { clip: false, ..config(2, 10, NoiseSpec::Laplace { scale: 1.0 }) },
            &SeedSequence::from_seed(0),
        )
        .unwrap();
        assert!(e.observe(&[f64::NAN, 0.0]).is_err());
        assert!(e.observe(&[1.5, 0.0]).is_err());
        assert!(e.observe(&[0.0]).is_err());
        assert_eq!(e.t(), 0);
        assert!(StochasticExperts::new(config(0, 10, NoiseSpec::Zero), &SeedSequence::from_seed(0)).is_err());
        let gauss = NoiseSpec::Gaussian { sigma: 1.0 };
        assert!(StochasticExperts::new(config(2, 10, gauss), &SeedSequence::from_seed(0)).is_err());
        let bad_batch = StochasticExpertsConfig { first_batch: 11, ..config(2, 10, NoiseSpec::Zero) };
        assert!(StochasticExperts::new(bad_batch, &SeedSequence::from_seed(0)).is_err());
        assert!(e.selection_runs(&[0.0, 1.0, 0.5], 3).is_err());
    }

    #[test]
    fn round_trip_continues_identically_and_bad_state_is_refused() {
        let lattice = NoiseSpec::Lattice(SecureNoise::new(NoiseSpec::Laplace { scale: 3.0 }, 16).unwrap());
        let mut a = StochasticExperts::new(config(5, 200, lattice), &SeedSequence::from_seed(2)).unwrap();
        let loss = |t: u64| -> Vec<f64> { (0..5).map(|i| ((t * 7 + i * 3) % 11) as f64 / 10.0).collect() };
        for t in 0..37 {
            a.observe(&loss(t)).unwrap();
        }
        let bytes = a.to_bytes();
        let mut b = StochasticExperts::from_bytes(&bytes).unwrap();
        for t in 37..200 {
            a.observe(&loss(t)).unwrap();
            b.observe(&loss(t)).unwrap();
            assert_eq!(a.current(), b.current());
        }
        assert!(StochasticExperts::from_bytes(&bytes[..bytes.len() - 3]).is_err());
        assert!(StochasticExperts::from_bytes(&[9]).is_err());
        let mut c = StochasticExperts::from_bytes(&bytes).unwrap();
        c.current = 7;
        assert!(StochasticExperts::from_bytes(&c.to_bytes()).is_err());
        let mut d = StochasticExperts::from_bytes(&bytes).unwrap();
        d.sums.pop();
        assert!(StochasticExperts::from_bytes(&d.to_bytes()).is_err());
    }

    #[test]
    fn the_private_learner_finds_a_clearly_better_expert() {
        let mut e =
            StochasticExperts::new(config(8, 4096, NoiseSpec::Laplace { scale: 2.0 }), &SeedSequence::from_seed(5))
                .unwrap();
        let mut rng = SeedSequence::from_seed(9).stream("losses");
        // 4095 = 1 + 2 + ... + 2048 rounds: the last selection read a batch of 2048.
        for _ in 0..4095 {
            let l: Vec<f64> =
                (0..8).map(|i| f64::from(u8::from(rng.random::<f64>() < if i == 3 { 0.2 } else { 0.5 }))).collect();
            e.observe(&l).unwrap();
        }
        assert_eq!(e.current(), 3);
    }
}
