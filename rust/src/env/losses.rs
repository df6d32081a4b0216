//! Loss-sequence environments for online learning (Agarwal & Singh 2017, §2).
//!
//! Each round the environment fixes a loss vector l_t in [0, 1]^N before the
//! learners act (stochastic or oblivious adversary: the sequence does not
//! depend on the learners' choices). Full-information learners read the
//! whole vector ([`Environment::losses`]); bandit learners get the played
//! loss as the reward -l_t(i) ([`Environment::shared_rewards`]).
//!
//! Regret is against the best fixed action in hindsight, kept as a per-round
//! sum so that the one loop (`sim::run_shared_episode`) can accumulate it:
//! round t contributes l_t(i_t) - (min_a L_t(a) - min_a L_{t-1}(a)), with
//! L_t the cumulative loss vector; the sum over t = 1..T telescopes to
//! sum_t l_t(i_t) - min_a L_T(a). The second term is the same for every
//! learner, so shared runs stay exact.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{DecisionSet, Environment, Feedback};
use crate::error::{Error, Result};
use crate::rng::{SeedSequence, SimulationRng};

/// How the loss vectors are generated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LossSequence {
    /// Stochastic: l_t(i) ~ Bernoulli(means[i]), independent over rounds
    /// and actions (drawn from the `"environment/losses"` stream).
    Stochastic { means: Vec<f64> },
    /// Oblivious adversary with a switching best expert: phase j (j = 0, 1,
    /// ...) lasts `first_phase * 2^j` rounds; in phase j expert j mod 2 has
    /// loss 0 and every other expert loss 1. Follow-the-leader is fooled at
    /// every switch; the best expert in hindsight is the last phase's leader.
    SwitchingBest { n: usize, first_phase: u64 },
    /// User-supplied losses: `rows x n`, row-major, entries in [0, 1]; row
    /// t - 1 is round t's loss vector.
    Array { n: usize, losses: Vec<f64> },
}

impl LossSequence {
    /// Number of actions N.
    pub fn num_actions(&self) -> usize {
        match self {
            LossSequence::Stochastic { means } => means.len(),
            LossSequence::SwitchingBest { n, .. } | LossSequence::Array { n, .. } => *n,
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        match self {
            LossSequence::Stochastic { means } => {
                if means.is_empty() {
                    return Err(Error::invalid("means", "give at least one action"));
                }
                if let Some(m) = means.iter().find(|m| !(0.0..=1.0).contains(*m)) {
                    return Err(Error::invalid("means", format!("Bernoulli means must lie in [0, 1], got {m}")));
                }
            }
            LossSequence::SwitchingBest { n, first_phase } => {
                if *n < 2 {
                    return Err(Error::invalid("n", format!("must be >= 2, got {n}")));
                }
                if *first_phase < 1 {
                    return Err(Error::invalid("first_phase", "must be >= 1"));
                }
            }
            LossSequence::Array { n, losses } => {
                if *n < 1 || losses.is_empty() || losses.len() % n != 0 {
                    return Err(Error::invalid(
                        "losses",
                        format!("expected a non-empty (rounds, n) array, got {} entries for n = {n}", losses.len()),
                    ));
                }
                if let Some(v) = losses.iter().find(|v| !(0.0..=1.0).contains(*v)) {
                    return Err(Error::invalid("losses", format!("entries must lie in [0, 1], got {v}")));
                }
            }
        }
        Ok(())
    }
}

/// What a simulation needs to build one loss environment per replicate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossEnvConfig {
    pub sequence: LossSequence,
}

impl crate::sim::EnvironmentFactory for LossEnvConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(LossEnv::new(self.sequence.clone(), seeds)?))
    }
}

/// A loss-sequence environment (see the module documentation).
#[derive(Clone, Debug)]
pub struct LossEnv {
    sequence: LossSequence,
    n: usize,
    t: u64,
    loss: Vec<f64>,
    cumulative: Vec<f64>,
    /// min_a L_t(a) - min_a L_{t-1}(a) of the current round.
    best_increment: f64,
    best: f64,
    rng: SimulationRng,
}

impl LossEnv {
    /// A new environment; stochastic losses come from `seeds`'
    /// `"environment/losses"` stream.
    pub fn new(sequence: LossSequence, seeds: &SeedSequence) -> Result<Self> {
        sequence.validate()?;
        let n = sequence.num_actions();
        Ok(LossEnv {
            sequence,
            n,
            t: 0,
            loss: vec![0.0; n],
            cumulative: vec![0.0; n],
            best_increment: 0.0,
            best: 0.0,
            rng: seeds.simulation_stream("environment/losses"),
        })
    }

    /// The cumulative loss vector L_t after the current round.
    pub fn cumulative(&self) -> &[f64] {
        &self.cumulative
    }

    /// Rounds generated so far.
    pub fn t(&self) -> u64 {
        self.t
    }

    fn fill_losses(&mut self, t: u64) -> Result<()> {
        match &self.sequence {
            LossSequence::Stochastic { means } => {
                for (l, &m) in self.loss.iter_mut().zip(means) {
                    *l = if self.rng.random::<f64>() < m { 1.0 } else { 0.0 };
                }
            }
            LossSequence::SwitchingBest { first_phase, .. } => {
                // Phase j covers rounds (first_phase (2^j - 1), first_phase (2^(j+1) - 1)].
                let phase = ((t - 1) / first_phase + 1).ilog2();
                let leader = (phase % 2) as usize;
                for (i, l) in self.loss.iter_mut().enumerate() {
                    *l = if i == leader { 0.0 } else { 1.0 };
                }
            }
            LossSequence::Array { n, losses } => {
                let rows = (losses.len() / n) as u64;
                if t > rows {
                    return Err(Error::invalid(
                        "horizon",
                        format!("the loss array has {rows} rounds; round {t} was requested"),
                    ));
                }
                let start = (t as usize - 1) * n;
                self.loss.copy_from_slice(&losses[start..start + n]);
            }
        }
        Ok(())
    }
}

impl Environment for LossEnv {
    fn dim(&self) -> usize {
        0
    }

    fn num_actions(&self) -> usize {
        self.n
    }

    fn next_round(&mut self, t: u64, set: &mut DecisionSet) -> Result<()> {
        if set.k != self.n || set.d != 0 {
            *set = DecisionSet::zeros(self.n, 0);
        }
        self.fill_losses(t)?;
        self.t = t;
        let mut best = f64::INFINITY;
        for (c, l) in self.cumulative.iter_mut().zip(&self.loss) {
            *c += l;
            best = best.min(*c);
        }
        self.best_increment = best - self.best;
        self.best = best;
        Ok(())
    }

    fn feedback(&mut self, _index: usize) -> Result<Feedback<'_>> {
        Ok(Feedback::Losses(&self.loss))
    }

    /// Bandit feedback: the reward -l_t(i) of each played action.
    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        for (y, &i) in out.iter_mut().zip(indices) {
            *y = -*self.loss.get(i).ok_or_else(|| Error::invalid("index", format!("must be < {}", self.n)))?;
        }
        Ok(())
    }

    fn regret(&self, index: usize) -> Option<f64> {
        self.loss.get(index).map(|l| l - self.best_increment)
    }

    fn losses(&self) -> Option<&[f64]> {
        Some(&self.loss)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn regret_telescopes_to_best_fixed_action_in_hindsight() {
        let seqs = [
            LossSequence::Stochastic { means: vec![0.2, 0.5, 0.7] },
            LossSequence::SwitchingBest { n: 3, first_phase: 4 },
        ];
        for seq in seqs {
            let mut env = LossEnv::new(seq, &SeedSequence::from_seed(1)).unwrap();
            let mut set = DecisionSet::default();
            let (mut regret, mut played) = (0.0, 0.0);
            for t in 1..=500u64 {
                env.next_round(t, &mut set).unwrap();
                let i = (t % 3) as usize;
                regret += env.regret(i).unwrap();
                played += env.losses().unwrap()[i];
            }
            let best = env.cumulative().iter().copied().fold(f64::INFINITY, f64::min);
            assert!((regret - (played - best)).abs() < 1e-9);
        }
    }

    #[test]
    fn switching_best_phases_double() {
        let mut env =
            LossEnv::new(LossSequence::SwitchingBest { n: 2, first_phase: 2 }, &SeedSequence::from_seed(0)).unwrap();
        let mut set = DecisionSet::default();
        let mut leaders = Vec::new();
        for t in 1..=14u64 {
            env.next_round(t, &mut set).unwrap();
            leaders.push(env.losses().unwrap().iter().position(|&l| l == 0.0).unwrap());
        }
        // Phases of 2, 4, 8 rounds.
        assert_eq!(leaders, [0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn array_rows_are_served_in_order_and_bounded() {
        let seq = LossSequence::Array { n: 2, losses: vec![0.0, 1.0, 0.5, 0.25] };
        let mut env = LossEnv::new(seq, &SeedSequence::from_seed(0)).unwrap();
        let mut set = DecisionSet::default();
        env.next_round(1, &mut set).unwrap();
        assert_eq!(env.losses().unwrap(), &[0.0, 1.0]);
        let mut y = [0.0];
        env.shared_rewards(&[1], &mut y).unwrap();
        assert_eq!(y, [-1.0]);
        env.next_round(2, &mut set).unwrap();
        assert_eq!(env.losses().unwrap(), &[0.5, 0.25]);
        assert!(env.next_round(3, &mut set).is_err());
        let bad = LossSequence::Array { n: 2, losses: vec![0.0, 1.5] };
        assert!(LossEnv::new(bad, &SeedSequence::from_seed(0)).is_err());
        assert!(LossEnv::new(LossSequence::Stochastic { means: vec![1.2] }, &SeedSequence::from_seed(0)).is_err());
    }
}
