//! The one simulation loop, and replicates in parallel.
//!
//! Every learner and environment of the catalog runs through
//! [`run_episode`]: the environment draws a decision set, the learner
//! selects, the environment answers, the learner updates, and the
//! pseudo-regret of the choice is accumulated. Replicates run on rayon's
//! pool, one seed each; learner and environment streams derive from that
//! seed, so every learner run on the same seeds meets the same contexts
//! and reward noise.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::env::{DecisionSet, Environment};
use crate::error::{Error, Result};
use crate::policy::Learner;

/// What one episode produced.
#[derive(Clone, Debug, PartialEq)]
pub struct EpisodeTrace {
    /// Rounds at which the cumulative regret was recorded.
    pub record_at: Vec<u64>,
    /// Cumulative pseudo-regret at each record point (NaN when the
    /// environment cannot tell the regret).
    pub regret: Vec<f64>,
    /// Rounds actually run (less than the horizon when cancelled).
    pub rounds: u64,
    /// Wall-clock seconds of the episode.
    pub seconds: f64,
}

/// Shared progress and cancellation between the loop and its caller.
#[derive(Debug, Default)]
pub struct Progress {
    /// Rounds completed, summed over all episodes.
    pub rounds: AtomicU64,
    /// Set to stop every episode at its next round boundary.
    pub cancel: AtomicBool,
}

/// The record points for `horizon` rounds: every `record_every` rounds and
/// always the last round.
pub fn record_points(horizon: u64, record_every: u64) -> Vec<u64> {
    let every = record_every.max(1);
    let mut pts: Vec<u64> = (1..=horizon / every).map(|i| i * every).collect();
    if pts.last() != Some(&horizon) {
        pts.push(horizon);
    }
    pts
}

/// Progress is published in batches of this many rounds (an atomic add
/// per round would cost more than some learners' rounds).
const PROGRESS_BATCH: u64 = 4096;

/// Runs `learner` on `env` for `horizon` rounds.
pub fn run_episode(
    learner: &mut dyn Learner,
    env: &mut dyn Environment,
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
) -> Result<EpisodeTrace> {
    let start = Instant::now();
    let record_at = record_points(horizon, record_every);
    let mut regret = Vec::with_capacity(record_at.len());
    let mut next = 0;
    let mut total = 0.0;
    let mut t = 0;
    let mut set = DecisionSet::default();
    while t < horizon {
        if t % PROGRESS_BATCH == 0 {
            if let Some(p) = progress {
                if t > 0 {
                    p.rounds.fetch_add(PROGRESS_BATCH, Ordering::Relaxed);
                }
                if p.cancel.load(Ordering::Relaxed) {
                    break;
                }
            }
        }
        t += 1;
        env.next_round(t, &mut set)?;
        let index = learner.select(&set)?;
        if index >= set.k {
            return Err(Error::State(format!("learner chose index {index} of a set of {}", set.k)));
        }
        total += env.regret(index).unwrap_or(f64::NAN);
        let feedback = env.feedback(index)?;
        learner.update(&set, index, feedback)?;
        if record_at.get(next) == Some(&t) {
            regret.push(total);
            next += 1;
        }
    }
    if let Some(p) = progress {
        p.rounds.fetch_add(t % PROGRESS_BATCH, Ordering::Relaxed);
    }
    Ok(EpisodeTrace {
        record_at: record_at[..regret.len()].to_vec(),
        regret,
        rounds: t,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Runs one episode per seed in parallel. `make` builds the learner and
/// environment of a seed.
pub fn run_replicates<F, L, E>(
    seeds: &[u64],
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
    make: F,
) -> Vec<Result<EpisodeTrace>>
where
    F: Fn(u64) -> Result<(L, E)> + Sync,
    L: Learner,
    E: Environment,
{
    seeds
        .par_iter()
        .map(|&seed| {
            let (mut learner, mut env) = make(seed)?;
            run_episode(&mut learner, &mut env, horizon, record_every, progress)
        })
        .collect()
}
