//! Delayed, out-of-order and batched feedback for every K-armed engine:
//! the queued reduction QPM-D of Joulani, György & Szepesvári, "Online
//! Learning under Delayed Feedback", ICML 2013, Sec. 3.2 (stochastic
//! feedback), Algorithm 1 ("Queued Partial Monitoring with Delays").
//!
//! # The reduction
//!
//! A base algorithm written for immediate feedback (any [`ArmedEngine`]:
//! [`Mab`], [`PhasedMab`]) is run unchanged. Its current proposal p (the
//! arm it would pull next) is what every selection returns, and it is
//! asked once and cached: a Thompson engine does not redraw per selection,
//! and a phased engine keeps its committed arm. A reward of arm a, whenever
//! it arrives, is appended to a FIFO queue of a; whenever the queue of the
//! current proposal p is non-empty, its head is fed to the base
//! (`observe(p, r)`) and the base is asked for a new proposal. The base
//! therefore sees exactly the interaction it was written for (it is told
//! the reward of each arm it proposed, one at a time), on rewards of its
//! proposed arm taken from the queue instead of from the environment; the
//! rewards of one arm are i.i.d., so the queue changes nothing in law. The
//! paper's regret bound for this reduction is the base's own regret plus an
//! additive term of order sum over arms of the expected largest number of
//! missing rewards of that arm (about K times the expected delay), not a
//! multiplicative one (Sec. 3.2).
//!
//! With strict alternation (one selection, then its reward) every reward is
//! fed at once and the proposal is asked lazily at the next selection:
//! the base sees exactly the calls, in the order, that it saw without the
//! reduction (bit-identical runs).
//!
//! # Privacy semantics
//!
//! The protected unit is one reward. Each accepted reward enters the base's
//! private statistics at most once (queued rewards that the base never
//! proposes again stay in their queue, never released), in per-arm arrival
//! order; trees and phases count the rewards fed, not the selections. Which
//! queued reward is fed next depends only on the arms chosen (functions of
//! earlier releases and the base's own sampling randomness) and on arrival
//! times, assumed independent of the reward values, never on the values:
//! the base's guarantee over its input sequence carries over unchanged, and
//! every selection is post-processing of what the base released.
//!
//! # Arms added and retired
//!
//! [`Delayed::add_arm`] gives the base a new arm (fresh statistics, its own
//! noise; see the bases) with an empty queue; [`Delayed::retire_arm`] makes
//! the base never propose the arm again. Either drops the cached proposal
//! (the arm set changed: the base is asked anew). A retired arm's
//! outstanding selections and later rewards are still accepted (they count
//! towards the horizon) and queued, but never fed: the base only feeds its
//! proposal's queue. They are the dropped rewards ([`Delayed::dropped`]),
//! which never enter the private statistics.
//!
//! # Accounting
//!
//! The base is calibrated for `horizon` rewards: rewards accepted (fed +
//! queued) never exceed it, and a selection is refused once fed + queued +
//! outstanding selections reach it. A reward may also be reported for a
//! pull the wrapper did not issue (a decision served from a published
//! policy); it is then queued like any other.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::mab::{Mab, RewardRange};
use super::phased_mab::PhasedMab;
use crate::error::{Error, Result};

/// What the reduction needs of a K-armed base algorithm.
pub trait ArmedEngine: Send + Sized + 'static {
    /// Number of arms.
    fn arms(&self) -> usize;
    /// Rewards the base is calibrated for.
    fn rounds_allowed(&self) -> u64;
    /// Rewards fed so far.
    fn rounds_fed(&self) -> u64;
    /// The declared reward range and its policy (checked on arrival).
    fn reward_range(&self) -> &RewardRange;
    /// The arm the base pulls next (may draw the base's sampling randomness).
    fn propose(&mut self) -> Result<usize>;
    /// The reward of pulling `arm`, the base's current proposal.
    fn feed(&mut self, arm: usize, reward: f64) -> Result<()>;
    /// Adds an arm with fresh statistics; returns its index.
    fn add_arm(&mut self) -> Result<usize>;
    /// Retires `arm`: the base never proposes it again.
    fn retire_arm(&mut self, arm: usize) -> Result<()>;
    /// Whether each arm is retired.
    fn retired(&self) -> &[bool];
    /// The base's serialized state.
    fn engine_bytes(&self) -> Vec<u8>;
    /// A base written by [`ArmedEngine::engine_bytes`] (checked).
    fn from_engine_bytes(bytes: &[u8]) -> Result<Self>;
}

impl ArmedEngine for Mab {
    fn arms(&self) -> usize {
        self.config().k
    }
    fn rounds_allowed(&self) -> u64 {
        self.config().horizon
    }
    fn rounds_fed(&self) -> u64 {
        self.t()
    }
    fn reward_range(&self) -> &RewardRange {
        &self.config().rewards
    }
    #[inline]
    fn propose(&mut self) -> Result<usize> {
        self.select_arm()
    }
    #[inline]
    fn feed(&mut self, arm: usize, reward: f64) -> Result<()> {
        self.observe(arm, reward)
    }
    fn add_arm(&mut self) -> Result<usize> {
        Self::add_arm(self)
    }
    fn retire_arm(&mut self, arm: usize) -> Result<()> {
        Self::retire_arm(self, arm)
    }
    fn retired(&self) -> &[bool] {
        Self::retired(self)
    }
    fn engine_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
    fn from_engine_bytes(bytes: &[u8]) -> Result<Self> {
        Mab::from_bytes(bytes)
    }
}

impl ArmedEngine for PhasedMab {
    fn arms(&self) -> usize {
        self.config().k
    }
    fn rounds_allowed(&self) -> u64 {
        self.config().horizon
    }
    fn rounds_fed(&self) -> u64 {
        self.t()
    }
    fn reward_range(&self) -> &RewardRange {
        &self.config().rewards
    }
    #[inline]
    fn propose(&mut self) -> Result<usize> {
        self.select_arm()
    }
    #[inline]
    fn feed(&mut self, arm: usize, reward: f64) -> Result<()> {
        self.observe(arm, reward)
    }
    fn add_arm(&mut self) -> Result<usize> {
        Self::add_arm(self)
    }
    fn retire_arm(&mut self, arm: usize) -> Result<()> {
        Self::retire_arm(self, arm)
    }
    fn retired(&self) -> &[bool] {
        Self::retired(self)
    }
    fn engine_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
    fn from_engine_bytes(bytes: &[u8]) -> Result<Self> {
        PhasedMab::from_bytes(bytes)
    }
}

/// The reduction's own state (queues, outstanding selections, proposal).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[allow(clippy::struct_field_names)] // `queues`: the per-arm FIFO queues of the paper
struct Queues {
    /// The base's current proposal, once asked (None: ask at the next use).
    proposal: Option<usize>,
    /// The last proposal asked, and the number of distinct consecutive
    /// proposals so far (the policy version).
    last: Option<usize>,
    version: u64,
    /// Per arm, the rewards received and not yet fed, oldest first.
    queues: Vec<VecDeque<f64>>,
    /// Their total.
    queued: u64,
    /// Per arm, selections issued and not yet answered by a reward.
    outstanding: Vec<u64>,
    /// Their total.
    pending: u64,
    /// Rewards accepted outside the declared range and clipped into it
    /// (the range policy `Clip`), counted on arrival.
    clipped: u64,
}

/// Leading bytes of a serialized [`Delayed`] (refuses a bare engine's bytes).
const MAGIC: [u8; 8] = *b"QPMD\x00\x00\x00\x01";

/// A K-armed base algorithm under the QPM-D reduction (module docs).
#[derive(Clone, Debug)]
pub struct Delayed<E> {
    engine: E,
    q: Queues,
}

impl<E> std::ops::Deref for Delayed<E> {
    type Target = E;
    fn deref(&self) -> &E {
        &self.engine
    }
}

impl<E: ArmedEngine> Delayed<E> {
    /// The reduction over a fresh (or restored) base.
    pub fn new(engine: E) -> Self {
        let k = engine.arms();
        let q = Queues {
            proposal: None,
            last: None,
            version: 0,
            queues: vec![VecDeque::new(); k],
            queued: 0,
            outstanding: vec![0; k],
            pending: 0,
            clipped: 0,
        };
        Delayed { engine, q }
    }

    /// The base, for operations that do not feed it (reseeding, secure mode).
    /// Any cached proposal is dropped: it is asked again from the base.
    pub fn engine_mut(&mut self) -> &mut E {
        self.q.proposal = None;
        &mut self.engine
    }

    /// The base, read-only.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// Rewards accepted outside the declared range and clipped into it.
    pub fn clipped_rewards(&self) -> u64 {
        self.q.clipped
    }

    /// Rewards received and not yet fed to the base.
    pub fn queued(&self) -> u64 {
        self.q.queued
    }

    /// Selections issued and not yet answered, in total ...
    pub fn outstanding(&self) -> u64 {
        self.q.pending
    }

    /// ... and per arm.
    pub fn outstanding_by_arm(&self) -> &[u64] {
        &self.q.outstanding
    }

    /// Adds an arm (module docs); returns its index.
    pub fn add_arm(&mut self) -> Result<usize> {
        self.q.queues.try_reserve(1).map_err(|_| Error::invalid("k", "no memory for another arm"))?;
        self.q.outstanding.try_reserve(1).map_err(|_| Error::invalid("k", "no memory for another arm"))?;
        let a = self.engine.add_arm()?;
        self.q.queues.push(VecDeque::new());
        self.q.outstanding.push(0);
        self.q.proposal = None;
        Ok(a)
    }

    /// Retires `arm` (module docs); the rewards queued for other arms are
    /// then fed as the new proposal asks for them.
    pub fn retire_arm(&mut self, arm: usize) -> Result<()> {
        self.engine.retire_arm(arm)?;
        if self.q.proposal == Some(arm) {
            self.q.proposal = None;
        }
        self.drain()
    }

    /// Whether each arm is retired.
    pub fn retired(&self) -> &[bool] {
        self.engine.retired()
    }

    /// Rewards queued for retired arms: accepted, never fed.
    pub fn dropped(&self) -> u64 {
        let retired = self.engine.retired();
        self.q.queues.iter().zip(retired).filter(|(_, &r)| r).map(|(q, _)| q.len() as u64).sum()
    }

    /// Per arm, the number of queued rewards.
    pub fn queue_lengths(&self) -> Vec<u64> {
        self.q.queues.iter().map(|q| q.len() as u64).collect()
    }

    /// The number of distinct consecutive proposals so far (asks the base
    /// for its proposal if none is cached; 0 before the first).
    pub fn policy_version(&mut self) -> Result<u64> {
        self.proposal()?;
        Ok(self.q.version)
    }

    /// The current proposal and its version (None once the horizon is fed).
    pub fn policy(&mut self) -> Result<Option<(usize, u64)>> {
        Ok(self.proposal()?.map(|p| (p, self.q.version)))
    }

    /// The base's proposal, asked once and cached; None when the base has
    /// been fed its horizon.
    #[inline]
    fn proposal(&mut self) -> Result<Option<usize>> {
        if let Some(p) = self.q.proposal {
            return Ok(Some(p));
        }
        if self.engine.rounds_fed() >= self.engine.rounds_allowed() {
            return Ok(None);
        }
        let p = self.engine.propose()?;
        if self.q.last != Some(p) {
            self.q.version += 1;
            self.q.last = Some(p);
        }
        self.q.proposal = Some(p);
        Ok(Some(p))
    }

    #[cold]
    #[inline(never)]
    fn horizon_reached(&self, what: &str) -> Error {
        Error::State(format!(
            "the horizon of {} rounds is reached ({} rewards fed, {} queued, {} selections outstanding): {what}",
            self.engine.rounds_allowed(),
            self.engine.rounds_fed(),
            self.q.queued,
            self.q.pending
        ))
    }

    /// Room for `n` more selections.
    #[inline]
    fn check_room(&self, n: u64) -> Result<()> {
        let used = self.engine.rounds_fed() + self.q.queued + self.q.pending;
        if used.saturating_add(n) > self.engine.rounds_allowed() {
            return Err(self.horizon_reached("no further selection"));
        }
        Ok(())
    }

    /// One selection: the base's current proposal, counted as outstanding.
    #[inline]
    pub fn select(&mut self) -> Result<usize> {
        self.check_room(1)?;
        let p = self.proposal()?.ok_or_else(|| self.horizon_reached("no further selection"))?;
        self.q.outstanding[p] += 1;
        self.q.pending += 1;
        Ok(p)
    }

    /// `n` selections (all the current proposal: without feedback the base
    /// does not move), counted as outstanding.
    pub fn select_many(&mut self, n: u64) -> Result<usize> {
        self.check_room(n)?;
        let p = self.proposal()?.ok_or_else(|| self.horizon_reached("no further selection"))?;
        self.q.outstanding[p] += n;
        self.q.pending += n;
        Ok(p)
    }

    /// The reward of a pull of `arm`, in any order and at any time: queued,
    /// then fed while the proposal's queue is non-empty. Refused (nothing
    /// changes) for an arm out of range, a reward the range policy refuses,
    /// or past the horizon.
    #[inline]
    pub fn update(&mut self, arm: usize, reward: f64) -> Result<()> {
        let k = self.engine.arms();
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        // The range policy's verdict now, not when the reward is fed: the
        // clipped value is what is queued or fed.
        let clipped = self.engine.reward_range().enforce(reward)?;
        if self.engine.rounds_fed() + self.q.queued >= self.engine.rounds_allowed() {
            return Err(self.horizon_reached("no further reward is accepted"));
        }
        // Fast path (strict alternation, and batches answered in order):
        // the reward of the proposal with nothing queued is fed at once,
        // without the queue (what `drain` would do: ask the proposal, feed
        // its queue's head); the next proposal is asked lazily.
        if self.q.queued == 0 && self.proposal()? == Some(arm) {
            self.feed_now(arm, clipped)?;
            self.count_clip(reward, clipped);
            self.answer(arm);
            return Ok(());
        }
        self.q.queues[arm].push_back(clipped);
        self.q.queued += 1;
        self.count_clip(reward, clipped);
        self.answer(arm);
        self.drain()
    }

    /// Counts `reward` as clipped when the range policy changed it into
    /// `clipped` (only `Clip` does, and only outside the range).
    #[inline]
    #[allow(clippy::float_cmp)] // the policy returns the reward itself or its clip
    fn count_clip(&mut self, reward: f64, clipped: f64) {
        if clipped != reward {
            self.q.clipped += 1;
        }
    }

    /// One outstanding selection of `arm` answered (if there is one: the
    /// pull may have been served elsewhere).
    #[inline]
    fn answer(&mut self, arm: usize) {
        if self.q.outstanding[arm] > 0 {
            self.q.outstanding[arm] -= 1;
            self.q.pending -= 1;
        }
    }

    /// Feeds `reward` of the proposal `arm` and forgets the proposal.
    #[inline]
    fn feed_now(&mut self, arm: usize, reward: f64) -> Result<()> {
        self.engine.feed(arm, reward)?;
        self.q.proposal = None;
        Ok(())
    }

    /// Feeds the head of the proposal's queue while there is one.
    fn drain(&mut self) -> Result<()> {
        while self.q.queued > 0 {
            let Some(p) = self.proposal()? else { return Ok(()) };
            let Some(r) = self.q.queues[p].pop_front() else { return Ok(()) };
            self.q.queued -= 1;
            if let Err(e) = self.feed_now(p, r) {
                // Not fed: back at the head of its queue.
                self.q.queues[p].push_front(r);
                self.q.queued += 1;
                return Err(e);
            }
        }
        Ok(())
    }

    /// `update(arm, reward)` for the one outstanding selection; a state
    /// error naming the outstanding arms when there are none or several.
    pub fn update_last(&mut self, reward: f64) -> Result<()> {
        if self.q.pending != 1 {
            return Err(self.not_one_outstanding());
        }
        let arm = self.q.outstanding.iter().position(|&n| n > 0).expect("one outstanding");
        self.update(arm, reward)
    }

    #[cold]
    #[inline(never)]
    fn not_one_outstanding(&self) -> Error {
        if self.q.pending == 0 {
            return Error::State(
                "update(reward) needs exactly one outstanding selection and none is outstanding: call select() \
                 first, or pass update(arm, reward) for a pull served elsewhere"
                    .into(),
            );
        }
        let arms: Vec<String> = self
            .q
            .outstanding
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .take(10)
            .map(|(a, &n)| if n == 1 { format!("arm {a}") } else { format!("arm {a} x{n}") })
            .collect();
        let more = if self.q.outstanding.iter().filter(|&&n| n > 0).count() > 10 { ", ..." } else { "" };
        Error::State(format!(
            "update(reward) needs exactly one outstanding selection, and {} are outstanding ({}{more}): pass \
             update(arm, reward) to say which pull the reward belongs to",
            self.q.pending,
            arms.join(", ")
        ))
    }

    /// The loop of [`Delayed::update`] over pairs, stopping at the first
    /// refusal (the earlier pairs stay recorded, as in the loop); the error
    /// names the index.
    pub fn update_many(&mut self, arms: &[usize], rewards: &[f64]) -> Result<()> {
        if arms.len() != rewards.len() {
            return Err(Error::invalid(
                "rewards",
                format!("needs one reward per arm, got {} arms and {} rewards", arms.len(), rewards.len()),
            ));
        }
        for (i, (&a, &r)) in arms.iter().zip(rewards).enumerate() {
            self.update(a, r).map_err(|e| at_index(e, i))?;
        }
        Ok(())
    }

    /// The base's own call: `reward` of `arm` fed at once, with the base's
    /// checks (a committed phase refuses another arm). The engine-level
    /// `observe` of the bindings; queued rewards are left where they are.
    pub fn observe_now(&mut self, arm: usize, reward: f64) -> Result<()> {
        if self.engine.retired().get(arm) == Some(&true) {
            return Err(Error::invalid("arm", format!("arm {arm} is retired")));
        }
        if self.engine.rounds_fed() + self.q.queued >= self.engine.rounds_allowed() {
            return Err(self.horizon_reached("no further reward is accepted"));
        }
        let k = self.engine.arms();
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        let clipped = self.engine.reward_range().enforce(reward)?;
        self.engine.feed(arm, clipped)?;
        self.count_clip(reward, clipped);
        self.q.proposal = None;
        self.answer(arm);
        Ok(())
    }

    /// Serialized state: the base's bytes and the queues (the proposal
    /// included, so that a restored Thompson engine serves the same arm).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(&(MAGIC, self.engine.engine_bytes(), &self.q))
    }

    /// Restores [`Delayed::to_bytes`], refusing a state whose queues do not
    /// fit the base (lengths, counts, the horizon, the proposal's range).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (magic, engine, q): ([u8; 8], Vec<u8>, Queues) = crate::state::decode(bytes)?;
        if magic != MAGIC {
            return Err(Error::Decode(
                "not a delayed-feedback K-armed state (a bare engine's, or another format)".into(),
            ));
        }
        let engine = E::from_engine_bytes(&engine)?;
        let k = engine.arms();
        let bad = |what: &str| Err(Error::Decode(format!("inconsistent delayed-feedback state: {what}")));
        if q.queues.len() != k || q.outstanding.len() != k {
            return bad("per-arm lengths differ from k");
        }
        if q.queues.iter().map(|x| x.len() as u64).sum::<u64>() != q.queued {
            return bad("queue lengths do not sum to the queued count");
        }
        if q.outstanding.iter().try_fold(0u64, |s, &n| s.checked_add(n)) != Some(q.pending) {
            return bad("outstanding selections do not sum to their count");
        }
        let horizon = engine.rounds_allowed();
        let accepted = engine.rounds_fed().checked_add(q.queued);
        if accepted.is_none_or(|a| a > horizon) || q.pending > horizon {
            return bad("more rewards or selections than the horizon");
        }
        if q.proposal.is_some_and(|p| p >= k) || q.last.is_some_and(|p| p >= k) {
            return bad("proposal out of range");
        }
        if q.clipped > engine.rounds_fed().saturating_add(q.queued) {
            return bad("more clipped rewards than rewards accepted");
        }
        if q.queues.iter().flatten().any(|r| !r.is_finite()) {
            return bad("a queued reward is not finite");
        }
        Ok(Delayed { engine, q })
    }
}

/// `e` with the index of the pair that caused it (for `update_many`).
fn at_index(e: Error, i: usize) -> Error {
    match e {
        Error::InvalidArgument { name, reason } => Error::InvalidArgument {
            name: if name == "arm" { "arms" } else { "rewards" },
            reason: format!("entry {i}: {reason}"),
        },
        Error::State(s) => Error::State(format!("at entry {i}: {s}")),
        other => other,
    }
}

/// Delayed-feedback simulation: `horizon` rounds on Bernoulli arms of
/// `means`; round s selects, draws the reward, and delivers it at the end
/// of round s + d, d uniform on {0, ..., `max_delay`} (0: at once, the
/// undelayed run); returns the pseudo-regret sum_s (max mean - mean of the
/// arm of round s). Environment draws and delays from `env_seed`'s streams
/// (ChaCha8), never the learner's.
pub fn simulate_delayed<E: ArmedEngine>(
    learner: &mut Delayed<E>,
    means: &[f64],
    horizon: u64,
    max_delay: u64,
    env_seed: u64,
) -> Result<f64> {
    use rand::Rng;
    let k = learner.engine.arms();
    if means.len() != k {
        return Err(Error::invalid("means", format!("needs one mean per arm ({k}), got {}", means.len())));
    }
    if means.iter().any(|m| !(0.0..=1.0).contains(m)) {
        return Err(Error::invalid("means", "Bernoulli means must lie in [0, 1]"));
    }
    if horizon > learner.engine.rounds_allowed() {
        return Err(Error::invalid("horizon", "exceeds the learner's horizon"));
    }
    let slots = usize::try_from(max_delay).ok().and_then(|d| d.checked_add(1)).filter(|&s| s <= 1 << 26);
    let Some(slots) = slots else {
        return Err(Error::invalid("max_delay", format!("must be < 2^26, got {max_delay}")));
    };
    let seeds = crate::rng::SeedSequence::from_seed(env_seed);
    let mut rewards = seeds.stream("delayed/rewards");
    let mut delays = seeds.stream("delayed/delays");
    let best = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut due: Vec<Vec<(usize, f64)>> = vec![Vec::new(); slots];
    let mut regret = 0.0;
    for s in 0..horizon {
        let arm = learner.select()?;
        regret += best - means[arm];
        let y = if rewards.random::<f64>() < means[arm] { 1.0 } else { 0.0 };
        let d = if max_delay == 0 { 0 } else { delays.random_range(0..=max_delay) };
        due[((s + d) % slots as u64) as usize].push((arm, y));
        let now = (s % slots as u64) as usize;
        let arrived = std::mem::take(&mut due[now]);
        for &(a, r) in &arrived {
            learner.update(a, r)?;
        }
        due[now] = arrived;
        due[now].clear();
    }
    Ok(regret)
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::noise::NoiseSpec;
    use crate::policy::mab::{MabConfig, MabIndex, MabStatistics, RewardPolicy};
    use crate::policy::phased_mab::{PhaseSchedule, PhasedIndex, PhasedMabConfig};
    use crate::rng::SeedSequence;

    fn dpklucb(k: usize, horizon: u64, seed: u64) -> PhasedMab {
        let config = PhasedMabConfig {
            k,
            horizon,
            index: PhasedIndex::Optimistic {
                kl: true,
                divergence_epsilon: Some(1.0),
                explore: 1.0,
                linear: 0.0,
                root: 0.0,
            },
            schedule: PhaseSchedule::Adaptive { alpha: 1.2, min_len: 4, forget: false },
            noise: NoiseSpec::Laplace { scale: 1.0 }.on_lattice(19).unwrap(),
            secure: false,
            commit: true,
            rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
        };
        PhasedMab::new(config, &SeedSequence::from_seed(seed)).unwrap()
    }

    fn thompson(k: usize, horizon: u64, seed: u64) -> Mab {
        let config = MabConfig {
            k,
            horizon,
            statistics: MabStatistics::Exact,
            index: MabIndex::ThompsonBeta,
            rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
            phases: None,
        };
        Mab::new(config, &SeedSequence::from_seed(seed)).unwrap()
    }

    fn reward(t: u64, a: usize) -> f64 {
        ((t * 7 + a as u64 * 3) % 5) as f64 / 4.0
    }

    #[test]
    fn strict_alternation_is_the_base_itself() {
        let mut base = dpklucb(3, 500, 4);
        let mut wrapped = Delayed::new(dpklucb(3, 500, 4));
        for t in 0..500 {
            let a = base.select_arm().unwrap();
            assert_eq!(wrapped.select().unwrap(), a);
            base.observe(a, reward(t, a)).unwrap();
            wrapped.update_last(reward(t, a)).unwrap();
        }
        assert_eq!(base.to_bytes(), wrapped.engine.to_bytes());
        assert!(wrapped.select().is_err());
        let mut base = thompson(3, 300, 5);
        let mut wrapped = Delayed::new(thompson(3, 300, 5));
        for t in 0..300 {
            let a = base.select_arm().unwrap();
            assert_eq!(wrapped.select().unwrap(), a);
            base.observe(a, reward(t, a)).unwrap();
            wrapped.update(a, reward(t, a)).unwrap();
        }
        assert_eq!(base.to_bytes(), wrapped.engine.to_bytes());
    }

    #[test]
    fn the_proposal_is_cached_and_queues_feed_in_arrival_order() {
        let mut d = Delayed::new(thompson(4, 100, 1));
        let p = d.select().unwrap();
        assert!((0..20).all(|_| d.select().unwrap() == p));
        assert_eq!(d.outstanding(), 21);
        // Rewards of another arm wait in its queue.
        let other = (p + 1) % 4;
        d.update(other, 1.0).unwrap();
        assert_eq!(d.queued(), 1);
        assert_eq!(d.outstanding(), 21, "not a selection of `other`");
        d.update(p, 0.0).unwrap();
        assert_eq!(d.outstanding(), 20);
        assert_eq!(d.rounds_fed() + d.queued(), 2);
        assert!(d.update_last(0.5).is_err());
    }

    #[test]
    fn out_of_order_arrivals_with_the_same_per_arm_order_give_the_same_state() {
        // Each arm's rewards in a fixed order; delivered arm by arm, or
        // round-robin across arms: the base consumes them identically.
        let per_arm: Vec<Vec<f64>> = (0..3).map(|a| (0..40).map(|t| reward(t, a)).collect()).collect();
        let arm_major: Vec<(usize, f64)> = (0..3).flat_map(|a| per_arm[a].iter().map(move |&r| (a, r))).collect();
        let round_robin: Vec<(usize, f64)> =
            (0..40).flat_map(|t| (0..3).map(move |a| (a, t))).map(|(a, t)| (a, per_arm[a][t])).collect();
        let run = |order: &[(usize, f64)]| {
            let mut d = Delayed::new(dpklucb(3, 400, 9));
            for &(a, r) in order {
                d.update(a, r).unwrap();
            }
            assert!(d.rounds_fed() > 3, "the base consumed the queues");
            d.to_bytes()
        };
        assert_eq!(run(&arm_major), run(&round_robin));
        let run = |order: &[(usize, f64)]| {
            let mut d = Delayed::new(thompson(3, 400, 9));
            for &(a, r) in order {
                d.update(a, r).unwrap();
            }
            d.to_bytes()
        };
        assert_eq!(run(&arm_major), run(&round_robin));
    }

    #[test]
    fn restored_state_is_checked() {
        let mut d = Delayed::new(dpklucb(3, 50, 2));
        d.select_many(5).unwrap();
        d.update(1, 1.0).unwrap();
        let bytes = d.to_bytes();
        let back = Delayed::<PhasedMab>::from_bytes(&bytes).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        // A bare engine's bytes are refused.
        assert!(Delayed::<PhasedMab>::from_bytes(&dpklucb(3, 50, 2).to_bytes()).is_err());
        // A forged queue count is refused.
        let mut forged = d.clone();
        forged.q.queued += 1;
        assert!(Delayed::<PhasedMab>::from_bytes(&forged.to_bytes()).is_err());
        let mut forged = d.clone();
        forged.q.proposal = Some(7);
        assert!(Delayed::<PhasedMab>::from_bytes(&forged.to_bytes()).is_err());
        let mut forged = d;
        forged.q.pending = 51;
        forged.q.outstanding = vec![51, 0, 0];
        assert!(Delayed::<PhasedMab>::from_bytes(&forged.to_bytes()).is_err());
    }

    #[test]
    fn horizon_counts_fed_queued_and_outstanding() {
        let mut d = Delayed::new(dpklucb(2, 10, 0));
        assert!(d.select_many(11).is_err());
        d.select_many(10).unwrap();
        assert!(d.select().is_err());
        for _ in 0..10 {
            d.update(0, 1.0).unwrap();
        }
        assert!(d.update(0, 1.0).is_err());
        assert!(d.update(5, 1.0).is_err());
    }

    #[test]
    fn delayed_simulation_learns() {
        let means = [0.75, 0.625, 0.5, 0.375, 0.25];
        let mut d0 = Delayed::new(dpklucb(5, 20_000, 1));
        let r0 = simulate_delayed(&mut d0, &means, 20_000, 0, 3).unwrap();
        let mut d1 = Delayed::new(dpklucb(5, 20_000, 1));
        let r1 = simulate_delayed(&mut d1, &means, 20_000, 100, 3).unwrap();
        // Far below the uniform policy's 0.25 T = 5,000.
        assert!(r0 < 1_500.0 && r1 < 1_500.0 + 5.0 * 5.0 * 100.0, "{r0} {r1}");
    }
}
