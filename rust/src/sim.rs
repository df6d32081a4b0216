//! The one simulation loop, and replicates in parallel.
//!
//! Every learner and environment of the catalog runs through
//! [`run_episode`]: the environment draws a decision set, the learner
//! selects, the environment answers, the learner updates, and the regret
//! of the choice is accumulated: pseudo-regret for bandit environments
//! with known means; on loss environments, the realized regret against the
//! best fixed decision in hindsight, for an index or, for learners that
//! play points of a convex set ([`Learner::played_point`]: FTRL/FTPL over
//! the ball or the cube, SCRiBLe), for the point. Replicates run on rayon's
//! pool, one seed each; learner and environment streams derive from that
//! seed, so every learner run on the same seeds meets the same contexts
//! and reward noise.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::env::{DecisionSet, Environment, Feedback, KArmedBandit, ShariffSheffetEnv};
use crate::error::{try_with_capacity, Error, Result};
use crate::policy::phased_mab::PhasedMab;
use crate::policy::{Geometry, Learner, LinUcb, Mab};

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
///
/// The list is allocated fallibly: a horizon / record_every too large for
/// memory is [`Error::Allocation`] naming `record_every`, not an abort.
pub fn record_points(horizon: u64, record_every: u64) -> Result<Vec<u64>> {
    let every = record_every.max(1);
    let count = usize::try_from(horizon / every).ok().and_then(|c| c.checked_add(1)).ok_or_else(|| {
        Error::Allocation { name: "record_every", what: format!("{horizon} / {every} record points") }
    })?;
    let mut pts: Vec<u64> = try_with_capacity("record_every", count)?;
    pts.extend((1..=horizon / every).map(|i| i * every));
    if pts.last() != Some(&horizon) {
        pts.push(horizon);
    }
    Ok(pts)
}

/// Progress is published in batches of this many rounds (an atomic add
/// per round would cost more than some learners' rounds).
const PROGRESS_BATCH: u64 = 4096;

/// Before round t + 1 of `n` learners: publishes the last batch of rounds
/// every [`PROGRESS_BATCH`] rounds; true when the caller asked to stop.
#[allow(clippy::inline_always)] // one test a round in the loops' hot path
#[inline(always)]
fn progress_stops(progress: Option<&Progress>, t: u64, n: u64) -> bool {
    if t.is_multiple_of(PROGRESS_BATCH) {
        if let Some(p) = progress {
            if t > 0 {
                p.rounds.fetch_add(PROGRESS_BATCH * n, Ordering::Relaxed);
            }
            return p.cancel.load(Ordering::Relaxed);
        }
    }
    false
}

/// The record points of an episode and the next one due.
struct Records {
    at: Vec<u64>,
    next: usize,
    /// The next record point (u64::MAX past the last: never reached).
    due: u64,
}

impl Records {
    fn new(horizon: u64, record_every: u64) -> Result<Self> {
        let at = record_points(horizon, record_every)?;
        let due = at.first().copied().unwrap_or(u64::MAX);
        Ok(Records { at, next: 0, due })
    }

    /// Moves past the record point just reached.
    fn advance(&mut self) {
        self.next += 1;
        self.due = self.at.get(self.next).copied().unwrap_or(u64::MAX);
    }

    /// The episode's traces after `t` rounds, one per learner's regret
    /// record (the last batch of progress published).
    fn finish(&self, regret: Vec<Vec<f64>>, t: u64, start: Instant, progress: Option<&Progress>) -> Vec<EpisodeTrace> {
        if let Some(p) = progress {
            p.rounds.fetch_add((t % PROGRESS_BATCH) * regret.len() as u64, Ordering::Relaxed);
        }
        let seconds = start.elapsed().as_secs_f64();
        regret
            .into_iter()
            .map(|r| EpisodeTrace { record_at: self.at[..r.len()].to_vec(), regret: r, rounds: t, seconds })
            .collect()
    }
}

/// Runs `learner` on `env` for `horizon` rounds (the one loop,
/// [`run_shared_episode`], with a single learner).
pub fn run_episode(
    learner: &mut dyn Learner,
    env: &mut dyn Environment,
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
) -> Result<EpisodeTrace> {
    let mut traces = run_shared_episode(&mut [learner], env, horizon, record_every, progress)?;
    Ok(traces.pop().expect("one trace per learner"))
}

/// Runs several learners on one realization of `env`: each round the
/// environment draws one decision set, every learner selects from it, and
/// the rewards share the round's noise draw
/// ([`Environment::shared_rewards`]). Each learner's trace is identical to
/// running it alone on the same seed, and the environment's cost is paid
/// once per round instead of once per learner.
pub fn run_shared_episode(
    learners: &mut [&mut dyn Learner],
    env: &mut dyn Environment,
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
) -> Result<Vec<EpisodeTrace>> {
    // The same loop, compiled again for the common single learner: with one
    // learner known at compile time its per-learner loops and bookkeeping
    // fold away. For the
    // hottest pairs of a learner and a built-in environment it is also
    // compiled for the concrete types, so that the engine's and the
    // environment's calls are direct, inlined into the loop, and the
    // checks one side makes of the other's values fold away (K-armed
    // rounds cost tens of nanoseconds, several calls a round among them).
    match learners {
        [one] => {
            macro_rules! run {
                ($learner:ty, $env:ty, $episode:expr) => {{
                    let (learner, env_any): (&mut dyn Any, &mut dyn Any) = (&mut **one, &mut *env);
                    let l = learner.downcast_mut::<$learner>().expect("recognised by concrete_pair");
                    let e = env_any.downcast_mut::<$env>().expect("recognised by concrete_pair");
                    $episode(l, e)
                }};
                ($learner:ty, $env:ty) => {
                    run!($learner, $env, |l, e| shared_episode(&mut [l], e, horizon, record_every, progress))
                };
            }
            match concrete_pair(&**one, &*env) {
                Some(ConcretePair::MabKArmed) => {
                    run!(Mab, KArmedBandit, |l, e| karmed_episode(l, e, horizon, record_every, progress))
                }
                Some(ConcretePair::PhasedMabKArmed) => {
                    run!(PhasedMab, KArmedBandit, |l, e| phased_episode(l, e, horizon, record_every, progress))
                }
                Some(ConcretePair::LinUcbShariffSheffet) => run!(LinUcb, ShariffSheffetEnv),
                None => shared_episode(std::slice::from_mut(one), env, horizon, record_every, progress),
            }
        }
        _ => shared_episode(learners, env, horizon, record_every, progress),
    }
}

/// The pairs of an engine and a built-in environment that
/// [`run_shared_episode`] runs in a copy of the loop compiled for their
/// types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConcretePair {
    MabKArmed,
    PhasedMabKArmed,
    LinUcbShariffSheffet,
}

/// Which [`ConcretePair`] `learner` and `env` are, if any.
fn concrete_pair(learner: &dyn Learner, env: &dyn Environment) -> Option<ConcretePair> {
    let (learner, env): (&dyn Any, &dyn Any) = (learner, env);
    if env.is::<KArmedBandit>() {
        if learner.is::<Mab>() {
            return Some(ConcretePair::MabKArmed);
        }
        if learner.is::<PhasedMab>() {
            return Some(ConcretePair::PhasedMabKArmed);
        }
    }
    (env.is::<ShariffSheffetEnv>() && learner.is::<LinUcb>()).then_some(ConcretePair::LinUcbShariffSheffet)
}

#[allow(clippy::inline_always)] // one copy per instantiation, see `run_shared_episode`
#[inline(always)]
fn shared_episode<L: Learner + ?Sized, E: Environment + ?Sized>(
    learners: &mut [&mut L],
    env: &mut E,
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
) -> Result<Vec<EpisodeTrace>> {
    let start = Instant::now();
    let mut records = Records::new(horizon, record_every)?;
    let n = learners.len();
    let mut regret: Vec<Vec<f64>> = Vec::with_capacity(n);
    for _ in 0..n {
        regret.push(try_with_capacity("record_every", records.at.len())?);
    }
    let mut totals = vec![0.0; n];
    let mut indices = vec![0usize; n];
    let mut rewards = vec![0.0; n];
    let mut t = 0;
    let mut set = DecisionSet::default();
    let full_info: Vec<bool> = learners.iter().map(|l| l.full_information()).collect();
    let any_bandit = full_info.iter().any(|&f| !f);
    let env_points = env.point_geometry();
    let mut plays_points = Vec::with_capacity(n);
    for learner in learners.iter() {
        plays_points.push(check_decisions(learner.point_geometry(), env_points)?);
    }
    // Bandit feedback of point learners: the reward -<l_t, y_t> of the played point.
    let mut point_rewards = vec![0.0; n];
    let any_point_bandit = plays_points.iter().zip(&full_info).any(|(&points, &full)| points && !full);
    while t < horizon {
        if progress_stops(progress, t, n as u64) {
            break;
        }
        t += 1;
        env.next_round(t, &mut set)?;
        for (j, learner) in learners.iter_mut().enumerate() {
            let index = learner.select(&set)?;
            if index >= set.k {
                return Err(Error::State(format!("learner chose index {index} of a set of {}", set.k)));
            }
            indices[j] = index;
            if plays_points[j] {
                // Online linear optimization: the learner's point is scored
                // against the best fixed point of X in hindsight.
                let x = learner
                    .played_point()
                    .ok_or_else(|| Error::State("a point learner reported no played point".into()))?;
                totals[j] += env.point_regret(x)?;
                if !full_info[j] {
                    point_rewards[j] = -env.point_loss(x)?;
                }
            } else {
                totals[j] += env.regret(index).unwrap_or(f64::NAN);
            }
        }
        env.observe_plays(&indices)?;
        if any_bandit {
            env.shared_rewards(&indices, &mut rewards)?;
            if any_point_bandit {
                for ((y, &p), (&points, &full)) in
                    rewards.iter_mut().zip(&point_rewards).zip(plays_points.iter().zip(&full_info))
                {
                    if points && !full {
                        *y = p;
                    }
                }
            }
        }
        for (((learner, &index), &y), &full) in learners.iter_mut().zip(&indices).zip(&rewards).zip(&full_info) {
            let feedback = if full {
                // Full-information learners see the round's loss vector
                // (Agarwal & Singh §2); it is the same for every learner.
                Feedback::Losses(env.losses().ok_or_else(|| {
                    Error::State("a full-information learner needs an environment with loss vectors".into())
                })?)
            } else {
                Feedback::Reward(y)
            };
            learner.update(&set, index, feedback)?;
        }
        if t == records.due {
            for (r, total) in regret.iter_mut().zip(&totals) {
                r.push(*total);
            }
            records.advance();
        }
    }
    Ok(records.finish(regret, t, start, progress))
}

/// [`shared_episode`] for one [`Mab`] on a [`KArmedBandit`] (the catalog's
/// K-armed UCB and private UCB on built-in arms): the same rounds, draws,
/// errors and records, without the general loop's decision set and
/// per-learner bookkeeping, which the compiler cannot fold (its vectors'
/// lengths are run-time values). The engine is asked for its arm and told
/// the reward directly; the decision set's checks (k arms, no features,
/// the index in range) hold by construction once the arm counts agree.
fn karmed_episode(
    mab: &mut Mab,
    env: &mut KArmedBandit,
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
) -> Result<Vec<EpisodeTrace>> {
    if env.num_actions() != mab.config().k {
        // The general loop's first round reports the mismatch.
        return shared_episode(&mut [mab], env, horizon, record_every, progress);
    }
    let start = Instant::now();
    let mut records = Records::new(horizon, record_every)?;
    let mut regret = try_with_capacity("record_every", records.at.len())?;
    let (mut t, mut total) = (0, 0.0);
    while t < horizon {
        if progress_stops(progress, t, 1) {
            break;
        }
        t += 1;
        let arm = mab.select_arm()?;
        total += env.regret(arm).unwrap_or(f64::NAN);
        let mut y = [0.0];
        env.shared_rewards(&[arm], &mut y)?;
        mab.observe(arm, y[0])?;
        if t == records.due {
            regret.push(total);
            records.advance();
        }
    }
    Ok(records.finish(vec![regret], t, start, progress))
}

/// [`shared_episode`] for one [`PhasedMab`] on a [`KArmedBandit`] (DP-KLUCB,
/// DP-IMED, AdaP / AdaC, DP-SE, the phased Thompson sampling and KL-UCB
/// on built-in arms), a phase at a time: an engine that commits its arm for
/// a phase decides only at the phase's end, so the loop asks it for the
/// committed arm and the phase's rounds left ([`PhasedMab::committed_phase`])
/// and plays them in a row, up to the next record point, progress batch
/// or the horizon: each round draws the arm's reward and adds its
/// pseudo-regret, and the run's rewards go to the engine at once. Bernoulli
/// arms count their 1-rewards (one generator word and an integer
/// comparison a round, [`KArmedBandit::bernoulli_pull`]) and the engine adds
/// the count to the phase sum ([`PhasedMab::observe_counted_run`]); other
/// arms hand each reward over ([`PhasedMab::observe_run`]). The same
/// draws in the same order, the same phase sums, releases and noise draws,
/// the same regret additions (one per round, in order: the records are
/// equal bit for bit) and the same errors as the general loop. Engines
/// that decide every round (`commit` false) run in the general loop.
fn phased_episode(
    mab: &mut PhasedMab,
    env: &mut KArmedBandit,
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
) -> Result<Vec<EpisodeTrace>> {
    if env.num_actions() != mab.config().k || !mab.config().commit {
        // The general loop's first round reports a mismatch.
        return shared_episode(&mut [mab], env, horizon, record_every, progress);
    }
    let start = Instant::now();
    let mut records = Records::new(horizon, record_every)?;
    let mut regret = try_with_capacity("record_every", records.at.len())?;
    let counted = mab.takes_counted_runs();
    let (mut t, mut total) = (0, 0.0);
    while t < horizon {
        if progress_stops(progress, t, 1) {
            break;
        }
        let Some((arm, left)) = mab.committed_phase() else {
            // Past the engine's horizon: the round fails as in the general loop.
            mab.select_arm()?;
            return Err(Error::State("a committed engine without a phase to play".into()));
        };
        let next_batch = (t / PROGRESS_BATCH + 1) * PROGRESS_BATCH;
        let n = left.min(horizon.min(records.due).min(next_batch) - t);
        let gap = env.regret(arm).unwrap_or(f64::NAN);
        match env.bernoulli_cut(arm).filter(|_| counted) {
            Some(cut) => {
                let mut ones = 0;
                for _ in 0..n {
                    total += gap;
                    ones += env.bernoulli_pull(cut);
                }
                mab.observe_counted_run(n, ones)?;
            }
            None => mab.observe_run(n, || {
                total += gap;
                env.pull(arm)
            })?,
        }
        t += n;
        if t == records.due {
            regret.push(total);
            records.advance();
        }
    }
    Ok(records.finish(vec![regret], t, start, progress))
}

/// Whether a learner plays points (true) or indices (false) on an
/// environment, or a clear error when the two do not fit: a point learner
/// needs an environment that scores points of the same decision set X, and
/// an index learner one whose decisions are indices (any environment
/// without points, or the experts' simplex, whose vertices are indices).
fn check_decisions(learner: Option<Geometry>, env: Option<Geometry>) -> Result<bool> {
    match (learner, env) {
        (None, None | Some(Geometry::Simplex)) => Ok(false),
        (Some(a), Some(b)) if a == b => Ok(true),
        (Some(a), Some(b)) => Err(Error::invalid(
            "env",
            format!("the learner plays points of the {}, the environment's decision set is the {}", a.name(), b.name()),
        )),
        (Some(a), None) => Err(Error::invalid(
            "env",
            format!(
                "the learner plays points of the {}; this environment has no loss vectors to score points \
                 (use a loss environment with geometry={:?})",
                a.name(),
                a.name()
            ),
        )),
        (None, Some(b)) => Err(Error::invalid(
            "env",
            format!(
                "the environment's decisions are points of the {}; this learner plays indices \
                 (use a learner with geometry={:?})",
                b.name(),
                b.name()
            ),
        )),
    }
}

/// [`run_shared_episode`] once per seed, in parallel. `make` builds the
/// learners and the environment of a seed.
pub fn run_shared_replicates<F>(
    seeds: &[u64],
    horizon: u64,
    record_every: u64,
    progress: Option<&Progress>,
    make: F,
) -> Vec<Result<Vec<EpisodeTrace>>>
where
    F: Fn(u64) -> Result<(Vec<Box<dyn Learner>>, Box<dyn Environment>)> + Sync,
{
    let replicate = |&seed: &u64| {
        let (mut learners, mut env) = make(seed)?;
        let mut views: Vec<&mut dyn Learner> = learners.iter_mut().map(|l| &mut **l as &mut dyn Learner).collect();
        // The box's own vtable, not `Box<dyn Environment>`'s forwarding
        // impl (two indirect calls per environment call).
        run_shared_episode(&mut views, env.as_mut(), horizon, record_every, progress)
    };
    if seeds.len() == 1 {
        // No hand-over to the pool (and back) for a single replicate.
        return seeds.iter().map(replicate).collect();
    }
    seeds.par_iter().map(replicate).collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{RewardModel, ShariffSheffetEnv};
    use crate::noise::NoiseSpec;
    use crate::policy::linucb::StatisticsConfig;
    use crate::policy::{BoundsPolicy, InputBounds, LinUcb, LinUcbConfig, Radius};
    use crate::rng::SeedSequence;

    fn learner(statistics: StatisticsConfig, seeds: &SeedSequence) -> LinUcb {
        let config = LinUcbConfig {
            d: 4,
            horizon: 3000,
            statistics,
            radius: Radius::LogDet { noise_sd: 1.0, log_offset: 20.0, offset: 1.0 },
            bounds: InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip },
        };
        LinUcb::new(config, seeds).unwrap()
    }

    #[test]
    fn shared_episode_equals_separate_episodes() {
        let stats = [
            StatisticsConfig::Exact { regularizer: 1.0, refactor_every: 64 },
            StatisticsConfig::Tree { noise: NoiseSpec::SymmetricGaussian { sigma: 2.0 }, shift: 60.0, pad_to: 0 },
        ];
        for reward in [RewardModel::PlusMinusOne, RewardModel::Gaussian] {
            let root = SeedSequence::from_seed(3);
            let env = || ShariffSheffetEnv::new(4, 16, 0.1, 0.75, reward, &root.child("environment", 0)).unwrap();
            let alone: Vec<EpisodeTrace> = stats
                .iter()
                .map(|s| run_episode(&mut learner(*s, &root), &mut env(), 3000, 500, None).unwrap())
                .collect();
            let mut both: Vec<LinUcb> = stats.iter().map(|s| learner(*s, &root)).collect();
            let mut views: Vec<&mut dyn Learner> = both.iter_mut().map(|l| l as &mut dyn Learner).collect();
            let shared = run_shared_episode(&mut views, &mut env(), 3000, 500, None).unwrap();
            for (a, b) in alone.iter().zip(&shared) {
                assert_eq!(a.regret, b.regret);
                assert_eq!(a.record_at, b.record_at);
            }
            assert_ne!(shared[0].regret, shared[1].regret);
        }
    }

    /// Forwards to the engine inside, so the loop cannot recognise it and
    /// runs its general (dynamically dispatched) instantiation.
    struct Opaque<L>(L);

    impl<L: Learner> Learner for Opaque<L> {
        fn select(&mut self, set: &DecisionSet) -> Result<usize> {
            self.0.select(set)
        }

        fn update(&mut self, set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
            self.0.update(set, index, feedback)
        }
    }

    #[test]
    fn concrete_instantiations_equal_the_general_loop() {
        use crate::env::{ArmReward, KArmedConfig};
        use crate::policy::phased_mab::{PhaseSchedule, PhasedIndex, PhasedMabConfig};
        use crate::policy::{MabConfig, MabIndex, MabStatistics, RewardPolicy, RewardRange};
        let root = SeedSequence::from_seed(5);
        let karmed = || {
            let config = KArmedConfig { means: vec![0.9, 0.8, 0.8, 0.5, 0.3], reward: ArmReward::Bernoulli };
            crate::env::KArmedBandit::new(config, &root.child("environment", 0)).unwrap()
        };
        let statistics = [
            MabStatistics::Exact,
            MabStatistics::Tree { noise: NoiseSpec::Laplace { scale: 3.0 }.on_lattice(10).unwrap() },
        ];
        for statistics in statistics {
            let config = MabConfig {
                k: 5,
                horizon: 4000,
                statistics,
                index: MabIndex::Ucb { noise_bound: 2.0 },
                rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
                phases: None,
            };
            let mab = || Mab::new(config.clone(), &root).unwrap();
            let (mut concrete, mut env) = (mab(), karmed());
            assert_eq!(concrete_pair(&concrete, &env), Some(ConcretePair::MabKArmed));
            let fast = run_shared_episode(&mut [&mut concrete], &mut env, 4000, 100, None).unwrap();
            let mut general = Opaque(mab());
            assert_eq!(concrete_pair(&general, &env), None);
            let slow = run_episode(&mut general, &mut karmed(), 4000, 100, None).unwrap();
            assert_eq!(fast[0].regret, slow.regret);
            assert_eq!(fast[0].record_at, slow.record_at);
            assert_eq!(fast[0].rounds, slow.rounds);
            assert_eq!(concrete.pulls(), general.0.pulls());
            // The K-armed loop (`karmed_episode`) fails as the general one
            // does: past the engine's horizon, and on a bandit with another
            // number of arms; and it publishes the same progress.
            let few_arms = || {
                let config = KArmedConfig { means: vec![0.9, 0.8, 0.5, 0.3], reward: ArmReward::Bernoulli };
                crate::env::KArmedBandit::new(config, &root.child("environment", 0)).unwrap()
            };
            for (rounds, mut env) in [(4001, karmed()), (10, few_arms())] {
                let mut again = env.clone();
                let fast = run_shared_episode(&mut [&mut mab()], &mut env, rounds, 100, None).unwrap_err();
                let slow = run_episode(&mut Opaque(mab()), &mut again, rounds, 100, None).unwrap_err();
                assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
            }
            let (fast, slow) = (Progress::default(), Progress::default());
            run_shared_episode(&mut [&mut mab()], &mut karmed(), 4000, 100, Some(&fast)).unwrap();
            run_episode(&mut Opaque(mab()), &mut karmed(), 4000, 100, Some(&slow)).unwrap();
            assert_eq!(fast.rounds.load(Ordering::Relaxed), 4000);
            assert_eq!(slow.rounds.load(Ordering::Relaxed), 4000);
            let stopped = Progress::default();
            stopped.cancel.store(true, Ordering::Relaxed);
            let fast = run_shared_episode(&mut [&mut mab()], &mut karmed(), 4000, 100, Some(&stopped)).unwrap();
            assert_eq!((fast[0].rounds, fast[0].regret.len()), (0, 0));
        }
        let phased = || {
            let config = PhasedMabConfig {
                k: 5,
                horizon: 4000,
                index: PhasedIndex::Optimistic {
                    kl: true,
                    divergence_epsilon: Some(1.0),
                    explore: 1.0,
                    linear: 0.0,
                    root: 0.0,
                },
                schedule: PhaseSchedule::Geometric { alpha: 2.0, forget: false },
                noise: NoiseSpec::Laplace { scale: 1.0 }.on_lattice(19).unwrap(),
                secure: false,
                commit: true,
                rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
            };
            PhasedMab::new(config, &root).unwrap()
        };
        assert_eq!(concrete_pair(&phased(), &karmed()), Some(ConcretePair::PhasedMabKArmed));
        let fast = run_episode(&mut phased(), &mut karmed(), 4000, 100, None).unwrap();
        let slow = run_episode(&mut Opaque(phased()), &mut karmed(), 4000, 100, None).unwrap();
        assert_eq!(fast.regret, slow.regret);
        let stats =
            StatisticsConfig::Tree { noise: NoiseSpec::SymmetricGaussian { sigma: 2.0 }, shift: 60.0, pad_to: 0 };
        let env =
            || ShariffSheffetEnv::new(4, 16, 0.1, 0.75, RewardModel::Gaussian, &root.child("environment", 0)).unwrap();
        assert_eq!(concrete_pair(&learner(stats, &root), &env()), Some(ConcretePair::LinUcbShariffSheffet));
        let fast = run_episode(&mut learner(stats, &root), &mut env(), 2000, 100, None).unwrap();
        let general = run_episode(&mut Opaque(learner(stats, &root)), &mut env(), 2000, 100, None).unwrap();
        assert_eq!(fast.regret, general.regret);
    }

    /// The phased engines on K-armed bandits: the phase-run loop
    /// (`phased_episode`) against the general loop, for every index and
    /// schedule, lattice, floating-point and no noise, Bernoulli and
    /// Gaussian arms, reward ranges other than [0, 1] (counted runs on the
    /// lattice, reward by reward in floating point), record points inside
    /// phases: the same records bit for bit, the same engine and
    /// environment states afterwards (every noise and reward draw), the
    /// same progress, and the same errors.
    #[test]
    fn phase_runs_equal_the_general_loop() {
        use crate::env::{ArmReward, KArmedBandit, KArmedConfig};
        use crate::policy::phased_mab::{PhaseSchedule, PhasedIndex, PhasedMabConfig};
        use crate::policy::{RewardPolicy, RewardRange};
        let root = SeedSequence::from_seed(9);
        let means = vec![0.7, 0.55, 0.5, 0.3, 0.0];
        let env = |reward| {
            KArmedBandit::new(KArmedConfig { means: means.clone(), reward }, &root.child("environment", 0)).unwrap()
        };
        let kl =
            PhasedIndex::Optimistic { kl: true, divergence_epsilon: Some(1.0), explore: 1.0, linear: 0.0, root: 0.0 };
        let adap =
            PhasedIndex::Optimistic { kl: false, divergence_epsilon: None, explore: 1.0, linear: 2.0, root: 0.5 };
        let geometric = |alpha| PhaseSchedule::Geometric { alpha, forget: false };
        let lattice = NoiseSpec::Laplace { scale: 1.0 }.on_lattice(19).unwrap();
        let gaussian = NoiseSpec::Gaussian { sigma: 2.0 }.on_lattice(12).unwrap();
        let unit = RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip };
        let wide = RewardRange { lo: -1.0, hi: 2.0, policy: RewardPolicy::Clip };
        let cases = [
            (kl, geometric(1.5), lattice, unit),
            (kl, PhaseSchedule::Adaptive { alpha: 1.2, min_len: 40, forget: false }, gaussian, unit),
            (adap, PhaseSchedule::Adaptive { alpha: 1.5, min_len: 3, forget: true }, lattice, unit),
            (PhasedIndex::Imed { divergence_epsilon: Some(0.5) }, geometric(2.0), lattice, wide),
            (kl, geometric(1.5), NoiseSpec::Laplace { scale: 1.0 }, unit),
            (kl, geometric(1.5), NoiseSpec::Laplace { scale: 1.0 }, wide),
            (kl, geometric(0.0), NoiseSpec::Zero, unit),
            (PhasedIndex::Thompson { reward_var: 0.25, noise_var: 4.0 }, geometric(1.5), lattice, unit),
            (
                PhasedIndex::Elimination,
                PhaseSchedule::Epochs { pulls: vec![30, 60, 120], gaps: vec![0.3, 0.2, 0.1] },
                lattice,
                wide,
            ),
        ];
        for (index, schedule, noise, rewards) in cases {
            let config =
                PhasedMabConfig { k: 5, horizon: 6000, index, schedule, noise, secure: false, commit: true, rewards };
            let engine = || PhasedMab::new(config.clone(), &root).unwrap();
            for reward in [ArmReward::Bernoulli, ArmReward::Gaussian { sigma: 0.5 }] {
                for (rounds, every) in [(6000, 1), (6000, 7), (5000, 1000), (5999, 6000)] {
                    let (mut fast, mut fast_env) = (engine(), env(reward));
                    assert_eq!(concrete_pair(&fast, &fast_env), Some(ConcretePair::PhasedMabKArmed));
                    let (mut slow, mut slow_env) = (Opaque(engine()), env(reward));
                    let (p_fast, p_slow) = (Progress::default(), Progress::default());
                    let a = run_episode(&mut fast, &mut fast_env, rounds, every, Some(&p_fast)).unwrap();
                    let b = run_episode(&mut slow, &mut slow_env, rounds, every, Some(&p_slow)).unwrap();
                    let case = format!("{config:?} {reward:?} {rounds} {every}");
                    assert_eq!(a.regret, b.regret, "{case}");
                    assert_eq!((a.record_at, a.rounds), (b.record_at, b.rounds), "{case}");
                    assert_eq!(fast.to_bytes(), slow.0.to_bytes(), "{case}");
                    assert_eq!(fast_env.to_bytes(), slow_env.to_bytes(), "{case}");
                    assert_eq!(p_fast.rounds.load(Ordering::Relaxed), p_slow.rounds.load(Ordering::Relaxed));
                    assert!(!fast.releases().is_empty() || matches!(noise, NoiseSpec::Zero), "{case}");
                }
                // Past the engine's horizon, both fail alike.
                let fast = run_episode(&mut engine(), &mut env(reward), 6001, 100, None).unwrap_err();
                let slow = run_episode(&mut Opaque(engine()), &mut env(reward), 6001, 100, None).unwrap_err();
                assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
            }
        }
        // A reward the range policy refuses fails at the same round (the
        // first 0 reward of Bernoulli arms, the first Gaussian reward
        // outside the range), with the same message.
        let strict = RewardRange { lo: 0.5, hi: 1.0, policy: RewardPolicy::Error };
        let config = PhasedMabConfig {
            k: 5,
            horizon: 6000,
            index: kl,
            schedule: geometric(1.5),
            noise: lattice,
            secure: false,
            commit: true,
            rewards: strict,
        };
        for reward in [ArmReward::Bernoulli, ArmReward::Gaussian { sigma: 0.5 }] {
            let mut fast = PhasedMab::new(config.clone(), &root).unwrap();
            let mut slow = Opaque(PhasedMab::new(config.clone(), &root).unwrap());
            let a = run_episode(&mut fast, &mut env(reward), 6000, 10, None).unwrap_err();
            let b = run_episode(&mut slow, &mut env(reward), 6000, 10, None).unwrap_err();
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(fast.to_bytes(), slow.0.to_bytes());
        }
        // A cancelled run stops before its first round.
        let stopped = Progress::default();
        stopped.cancel.store(true, Ordering::Relaxed);
        let mut fast = PhasedMab::new(PhasedMabConfig { rewards: unit, ..config }, &root).unwrap();
        let trace = run_episode(&mut fast, &mut env(ArmReward::Bernoulli), 6000, 10, Some(&stopped)).unwrap();
        assert_eq!((trace.rounds, trace.regret.len(), fast.t()), (0, 0, 0));
    }

    mod points {
        use super::super::*;
        use crate::env::{LossEnv, LossSequence};
        use crate::noise::NoiseSpec;
        use crate::policy::{FollowTheLeader, FollowTheLeaderConfig, LeaderRule, Scrible, ScribleConfig};
        use crate::rng::SeedSequence;

        fn env(geometry: Geometry, n: usize) -> LossEnv {
            let center: Vec<f64> = (0..n).map(|i| 0.3 - 0.2 * i as f64).collect();
            let seq = LossSequence::Uniform { center, spread: 0.3 };
            LossEnv::with_geometry(seq, geometry, &SeedSequence::from_seed(11)).unwrap()
        }

        fn ftrl(geometry: Geometry, n: usize) -> FollowTheLeader {
            let config = FollowTheLeaderConfig {
                n,
                horizon: 1000,
                geometry,
                rule: LeaderRule::Regularized { eta: 0.05 },
                noise: NoiseSpec::Laplace { scale: 3.0 },
                clip: true,
                counter: None,
            };
            FollowTheLeader::new(config, &SeedSequence::from_seed(4)).unwrap()
        }

        #[test]
        fn point_regret_in_the_loop_equals_the_regret_of_the_online_decisions() {
            for geometry in [Geometry::Ball, Geometry::Cube] {
                let trace = run_episode(&mut ftrl(geometry, 3), &mut env(geometry, 3), 1000, 100, None).unwrap();
                // The same learner and losses, step by step.
                let (mut learner, mut e) = (ftrl(geometry, 3), env(geometry, 3));
                let (mut played, mut cum) = (0.0, [0.0; 3]);
                let mut set = DecisionSet::default();
                let mut want = Vec::new();
                for t in 1..=1000u64 {
                    e.next_round(t, &mut set).unwrap();
                    let l = e.losses().unwrap().to_vec();
                    played += learner.decision().iter().zip(&l).map(|(a, b)| a * b).sum::<f64>();
                    learner.observe(&l).unwrap();
                    for (c, v) in cum.iter_mut().zip(&l) {
                        *c += v;
                    }
                    if t % 100 == 0 {
                        want.push(played - crate::env::losses::best_fixed_loss(geometry, &cum));
                    }
                }
                for (a, b) in trace.regret.iter().zip(&want) {
                    assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{geometry:?}: {a} vs {b}");
                }
            }
        }

        /// SCRiBLe whose every round in the loop is checked: the iterate
        /// strictly inside the ball, the played point inside it.
        struct Checked(Scrible, u64);

        impl Learner for Checked {
            fn select(&mut self, set: &DecisionSet) -> Result<usize> {
                assert!(self.0.iterate().iter().map(|v| v * v).sum::<f64>() < 1.0);
                let index = Learner::select(&mut self.0, set);
                assert!(self.played_point().unwrap().iter().map(|v| v * v).sum::<f64>() <= 1.0 + 1e-12);
                self.1 += 1;
                index
            }

            fn update(&mut self, set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
                self.0.update(set, index, feedback)
            }

            fn point_geometry(&self) -> Option<Geometry> {
                self.0.point_geometry()
            }

            fn played_point(&self) -> Option<&[f64]> {
                Learner::played_point(&self.0)
            }
        }

        #[test]
        fn scrible_runs_in_the_loop_strictly_inside_the_ball() {
            let config =
                ScribleConfig { n: 3, horizon: 5000, eta: 0.05, noise: NoiseSpec::Laplace { scale: 1.0 }, clip: true };
            let mut learner = Checked(Scrible::new(config, &SeedSequence::from_seed(1)).unwrap(), 0);
            let trace = run_episode(&mut learner, &mut env(Geometry::Ball, 3), 5000, 1000, None).unwrap();
            assert_eq!(learner.1, 5000);
            assert_eq!(learner.0.t(), 5000);
            assert!(trace.regret.iter().all(|r| r.is_finite()));
        }

        #[test]
        fn mismatched_decision_sets_are_refused_clearly() {
            let mut ball = ftrl(Geometry::Ball, 3);
            let err = run_episode(&mut ball, &mut env(Geometry::Cube, 3), 10, 1, None).unwrap_err();
            assert!(err.to_string().contains("points of the ball"), "{err}");
            let mut simplex = ftrl(Geometry::Simplex, 3);
            let err = run_episode(&mut simplex, &mut env(Geometry::Ball, 3), 10, 1, None).unwrap_err();
            assert!(err.to_string().contains("plays indices"), "{err}");
            let err = run_episode(&mut ftrl(Geometry::Ball, 4), &mut env(Geometry::Ball, 3), 10, 1, None).unwrap_err();
            assert!(err.to_string().contains("dimension 4"), "{err}");
            assert!(matches!(err, Error::InvalidArgument { .. }));
        }
    }
}
