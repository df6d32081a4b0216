//! Arms added and retired during a run ([`Mab::add_arm`], [`Mab::retire_arm`]).
//!
//! A new arm gets the statistics a fresh engine gives every arm: no pulls,
//! an exact sum of 0 or a fresh tree (or factorization counter) calibrated
//! for the horizon with the configuration's node noise, drawing from its
//! own generator (keyed from the engine's sampling generator and the arm's
//! index, [`Mab::added_arm_seeds`], also when the engine is reseeded later:
//! reproducible for a seeded engine, so a fork with a seed keys its added
//! arms as an engine built from that seed and given the same arms does;
//! from operating-system entropy for a re-keyed one, and from the operating
//! system directly in secure mode). A retired arm keeps its statistics and is never selected again:
//! its index is -inf. Both are refused during gap estimation and random
//! pulling (those phases pull the arms round robin), except that an arm
//! may be added before the first round.
//!
//! Privacy: each reward enters exactly one arm's counter, so the per-arm
//! counters compose in parallel whatever the number of arms, and the
//! guarantee covers every arm, added ones included; the horizon bounds the
//! rewards fed over all arms.

use super::{Mab, MabStatistics, Phase, Sums};
use crate::counter::tree::TreeCounter;
use crate::counter::FactorizationCounter;
use crate::error::{Error, Result};

impl Mab {
    /// Whether each arm is retired.
    pub fn retired(&self) -> &[bool] {
        &self.retired
    }

    fn check_arm_phase(&self, what: &str, fresh_ok: bool) -> Result<()> {
        let fresh = self.t == 0 && self.phase == Phase::Gap { batch: 0, done: 0 };
        if self.phase != Phase::Index && !(fresh_ok && fresh) {
            return Err(Error::State(format!(
                "{what} during gap estimation or random pulling is refused: those phases pull every arm round robin"
            )));
        }
        Ok(())
    }

    /// Adds an arm with fresh statistics; returns its index (the old k).
    pub fn add_arm(&mut self) -> Result<usize> {
        self.check_arm_phase("adding an arm", true)?;
        let a = self.config.k;
        let seeds = Mab::added_arm_seeds(&self.rng, a);
        let os = self.noise.is_os();
        let horizon = self.config.horizon;
        match (&mut self.sums, self.config.statistics) {
            (Sums::Exact(s), MabStatistics::Exact) => s.push(0.0),
            (Sums::Tree(trees), MabStatistics::Tree { noise }) => {
                let mut tree = TreeCounter::new(&[], horizon, noise, false, &seeds)?;
                if os {
                    tree.use_os_entropy()?;
                }
                trees.push(tree);
            }
            (Sums::Counters(cs), MabStatistics::Factorized { noise, factor }) => {
                let mut counter = FactorizationCounter::new(&[], horizon, noise, factor.factorization(), &seeds)?;
                if os {
                    counter.use_os_entropy()?;
                }
                cs.push(counter);
            }
            _ => return Err(Error::State("the reward sums are not of the configuration's kind".into())),
        }
        self.pulls.push(0);
        self.batch_sums.push(0.0);
        self.retired.push(false);
        self.config.k = a + 1;
        // The UCB caches are rebuilt from the state at the next selection.
        self.ucb_base.clear();
        self.ucb_width.clear();
        Ok(a)
    }

    /// Retires `arm`: never selected again (its statistics are kept). The
    /// last arm not retired cannot be retired.
    pub fn retire_arm(&mut self, arm: usize) -> Result<()> {
        let k = self.config.k;
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        self.check_arm_phase("retiring an arm", false)?;
        if self.retired[arm] {
            return Ok(());
        }
        if self.retired.iter().filter(|&&r| !r).count() == 1 {
            return Err(Error::invalid("arm", format!("arm {arm} is the last arm not retired")));
        }
        self.retired[arm] = true;
        self.ucb_base.clear();
        self.ucb_width.clear();
        Ok(())
    }
}
