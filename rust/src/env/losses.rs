//! Loss-sequence environments for online learning (Agarwal & Singh 2017, §2).
//!
//! Each round the environment fixes a loss vector l_t before the learners
//! act (stochastic or oblivious adversary: the sequence does not depend on
//! the learners' choices). The environment's [`Geometry`] is the decision
//! set X and the loss set it pairs with (§2): the experts' simplex with
//! l_t in [0, 1]^N, the unit Euclidean ball with ||l_t||_2 <= 1, the cube
//! [-1, 1]^N with ||l_t||_1 <= 1. Generated losses are mapped into the loss
//! set by the learners' clip rule (clamp to [0, 1]; divide by the norm when
//! it exceeds 1), so a learner of the same geometry sees exactly the losses
//! it is scored on; user-supplied arrays must already lie in it.
//! Full-information learners read the whole vector
//! ([`Environment::losses`]); bandit learners get the played loss as the
//! reward: -l_t(i) for an index ([`Environment::shared_rewards`]), -<l_t, y>
//! for a point ([`Environment::point_loss`]).
//!
//! Regret is against the best fixed decision in hindsight, kept as a
//! per-round sum so that the one loop (`sim::run_shared_episode`) can
//! accumulate it: with L_t the cumulative loss vector and
//! B_t = min_{x in X} <L_t, x> (simplex: min_a L_t(a); ball: -||L_t||_2;
//! cube: -||L_t||_1), round t contributes <l_t, x_t> - (B_t - B_{t-1})
//! (l_t(i_t) for an index); the sum over t = 1..T telescopes to
//! sum_t <l_t, x_t> - B_T, the regret at T. A term can be negative (the
//! best point moves). B is the same for every learner, so shared runs stay
//! exact. The regret is realized, not pseudo-regret: the realized losses
//! (Bernoulli or uniform draws) and the learner's realized plays (its
//! sampled index or point), against the best decision for the realized
//! sequence.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::geometry::enforce_bounds;
use super::{DecisionSet, Environment, Feedback, Geometry};
use crate::error::{check_finite, try_filled, Error, Result};
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
    /// User-supplied losses: `rows x n`, row-major, each row in the
    /// geometry's loss set; row t - 1 is round t's loss vector.
    Array { n: usize, losses: Vec<f64> },
    /// Adaptive adversary (experts only): round t charges loss 1 to the
    /// expert the learner played in round t - 1 and loss 0 to every other
    /// (round 1: all zero). It reads the learner's plays
    /// ([`Environment::observe_plays`]), so it serves one learner per run.
    /// A learner that keeps its expert for a batch pays 1 a round while the
    /// experts it did not play stay at 0 (regret about T); one that draws
    /// afresh each round from a spread-out law pays about 1/d a round.
    ChasePlayed { n: usize },
    /// Stochastic linear losses: l_t(i) = center[i] + U(-spread, spread),
    /// independent over rounds and coordinates (from the
    /// `"environment/losses"` stream), then mapped into the loss set.
    Uniform { center: Vec<f64>, spread: f64 },
}

impl LossSequence {
    /// Number of actions N.
    pub fn num_actions(&self) -> usize {
        match self {
            LossSequence::Stochastic { means } => means.len(),
            LossSequence::Uniform { center, .. } => center.len(),
            LossSequence::SwitchingBest { n, .. } | LossSequence::Array { n, .. } | LossSequence::ChasePlayed { n } => {
                *n
            }
        }
    }

    /// Checks the parameters (an array's rows against `geometry`'s loss set).
    pub fn validate(&self, geometry: Geometry) -> Result<()> {
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
            LossSequence::ChasePlayed { n } => {
                if *n < 2 {
                    return Err(Error::invalid("n", format!("must be >= 2, got {n}")));
                }
                if geometry != Geometry::Simplex {
                    return Err(Error::invalid("geometry", "the chasing adversary plays experts: use the simplex"));
                }
            }
            LossSequence::Array { n, losses } => {
                if *n < 1 || losses.is_empty() || losses.len() % n != 0 {
                    return Err(Error::invalid(
                        "losses",
                        format!("expected a non-empty (rounds, n) array, got {} entries for n = {n}", losses.len()),
                    ));
                }
                check_finite("losses", losses)?;
                let mut row = vec![0.0; *n];
                for chunk in losses.chunks(*n) {
                    row.copy_from_slice(chunk);
                    enforce_bounds(geometry, false, &mut row)?;
                }
            }
            LossSequence::Uniform { center, spread } => {
                if center.is_empty() {
                    return Err(Error::invalid("center", "give at least one coordinate"));
                }
                check_finite("center", center)?;
                if !(spread.is_finite() && *spread >= 0.0) {
                    return Err(Error::invalid("spread", format!("must be finite and >= 0, got {spread}")));
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
    /// The decision set X and its loss set.
    pub geometry: Geometry,
}

impl super::EnvironmentFactory for LossEnvConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(LossEnv::with_geometry(self.sequence.clone(), self.geometry, seeds)?))
    }
}

/// B = min_{x in X} <big_l, x> over the geometry's decision set X: the
/// smallest entry (simplex: a vertex), -||big_l||_2 (unit ball: at
/// -big_l / ||big_l||_2), -||big_l||_1 (cube [-1, 1]^N: at -sign(big_l)).
pub fn best_fixed_loss(geometry: Geometry, big_l: &[f64]) -> f64 {
    match geometry {
        Geometry::Simplex => smallest_entry(big_l),
        Geometry::Ball => -big_l.iter().map(|v| v * v).sum::<f64>().sqrt(),
        Geometry::Cube => -big_l.iter().map(|v| v.abs()).sum::<f64>(),
    }
}

/// The smallest entry of finite values (+inf for none), in eight
/// independent lanes: a sequential fold is a chain of dependent compares
/// (about 4 cycles an entry; paid every round over the N cumulative
/// losses, and by FTRL over L~). The minimum of finite values does not
/// depend on the order (only the sign of a zero minimum can).
pub fn smallest_entry(v: &[f64]) -> f64 {
    let mut lanes = [f64::INFINITY; 8];
    let chunks = v.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (m, &x) in lanes.iter_mut().zip(chunk) {
            *m = if x < *m { x } else { *m };
        }
    }
    lanes.iter().chain(rest).fold(f64::INFINITY, |m, &x| if x < m { x } else { m })
}

/// Tolerance of the membership check of played points (rounding of the
/// learners' projections).
const POINT_TOL: f64 = 1e-9;

/// An error when `x` is not a point of X (up to [`POINT_TOL`]).
fn check_point(geometry: Geometry, n: usize, x: &[f64]) -> Result<()> {
    if x.len() != n {
        return Err(Error::invalid(
            "env",
            format!("the learner played a point of dimension {}, the environment has dimension {n}", x.len()),
        ));
    }
    // NaN coordinates count as outside.
    let outside = x.iter().any(|v| v.is_nan())
        || match geometry {
            Geometry::Simplex => x.iter().any(|v| *v < -POINT_TOL) || (x.iter().sum::<f64>() - 1.0).abs() > POINT_TOL,
            Geometry::Ball => x.iter().map(|v| v * v).sum::<f64>().sqrt() > 1.0 + POINT_TOL,
            Geometry::Cube => x.iter().any(|v| v.abs() > 1.0 + POINT_TOL),
        };
    if outside {
        return Err(Error::State(format!("the learner played a point outside the {}: {x:?}", geometry.name())));
    }
    Ok(())
}

/// A loss-sequence environment (see the module documentation).
#[derive(Clone, Debug)]
pub struct LossEnv {
    sequence: LossSequence,
    geometry: Geometry,
    n: usize,
    t: u64,
    loss: Vec<f64>,
    cumulative: Vec<f64>,
    /// B_t - B_{t-1} of the current round (module documentation).
    best_increment: f64,
    /// B_t = min_{x in X} <L_t, x>.
    best: f64,
    /// The expert played in the last round (the chasing adversary's input).
    last_play: Option<usize>,
    /// Whether the plays of the current round were recorded.
    played: bool,
    rng: SimulationRng,
}

impl LossEnv {
    /// A new experts environment (simplex); stochastic losses come from
    /// `seeds`' `"environment/losses"` stream.
    pub fn new(sequence: LossSequence, seeds: &SeedSequence) -> Result<Self> {
        Self::with_geometry(sequence, Geometry::Simplex, seeds)
    }

    /// A new environment over the decision set of `geometry`.
    pub fn with_geometry(sequence: LossSequence, geometry: Geometry, seeds: &SeedSequence) -> Result<Self> {
        sequence.validate(geometry)?;
        let n = sequence.num_actions();
        Ok(LossEnv {
            sequence,
            geometry,
            n,
            t: 0,
            loss: try_filled("n", n, 0.0)?,
            cumulative: try_filled("n", n, 0.0)?,
            best_increment: 0.0,
            best: 0.0,
            last_play: None,
            played: true,
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

    /// The decision set X and its loss set.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// B_t = min_{x in X} <L_t, x>, the cumulative loss of the best fixed
    /// decision in hindsight after the current round.
    pub fn best(&self) -> f64 {
        self.best
    }

    fn fill_losses(&mut self, t: u64) -> Result<()> {
        match &self.sequence {
            LossSequence::Stochastic { means } => {
                for (l, &m) in self.loss.iter_mut().zip(means) {
                    *l = if self.rng.random::<f64>() < m { 1.0 } else { 0.0 };
                }
                if self.geometry == Geometry::Simplex {
                    // 0 / 1 entries: already in [0, 1]^N.
                    return Ok(());
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
            LossSequence::ChasePlayed { .. } => {
                if !self.played {
                    return Err(Error::State(
                        "the chasing adversary needs the learner's play of every round (record_play)".into(),
                    ));
                }
                self.loss.fill(0.0);
                if let Some(i) = self.last_play {
                    self.loss[i] = 1.0;
                }
                self.played = false;
                // 0 / 1 entries on the simplex: nothing to map.
                return Ok(());
            }
            LossSequence::Uniform { center, spread } => {
                for (l, &c) in self.loss.iter_mut().zip(center) {
                    *l = c + spread * (2.0 * self.rng.random::<f64>() - 1.0);
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
                // Validated rows lie in the loss set: nothing to map.
                return Ok(());
            }
        }
        enforce_bounds(self.geometry, true, &mut self.loss).map(|_| ())
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
        for (c, l) in self.cumulative.iter_mut().zip(&self.loss) {
            *c += l;
        }
        let best = best_fixed_loss(self.geometry, &self.cumulative);
        self.best_increment = best - self.best;
        self.best = best;
        Ok(())
    }

    fn feedback(&mut self, _index: usize) -> Result<Feedback<'_>> {
        Ok(Feedback::Losses(&self.loss))
    }

    /// The chasing adversary records the play (one learner only); other
    /// sequences ignore the plays.
    fn observe_plays(&mut self, indices: &[usize]) -> Result<()> {
        if !matches!(self.sequence, LossSequence::ChasePlayed { .. }) {
            return Ok(());
        }
        match indices {
            [i] if *i < self.n => {
                self.last_play = Some(*i);
                self.played = true;
                Ok(())
            }
            [i] => Err(Error::invalid("index", format!("must be < {}, got {i}", self.n))),
            _ => Err(Error::State(format!(
                "the chasing adversary adapts to one learner; {} played this round (simulate them one at a time)",
                indices.len()
            ))),
        }
    }

    /// Bandit feedback: the reward -l_t(i) of each played action.
    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        for (y, &i) in out.iter_mut().zip(indices) {
            *y = -*self.loss.get(i).ok_or_else(|| Error::invalid("index", format!("must be < {}", self.n)))?;
        }
        Ok(())
    }

    /// Regret term of an index (an expert, a vertex of the simplex); `None`
    /// for the ball and the cube, whose decisions are points.
    fn regret(&self, index: usize) -> Option<f64> {
        if self.geometry != Geometry::Simplex {
            return None;
        }
        self.loss.get(index).map(|l| l - self.best_increment)
    }

    fn losses(&self) -> Option<&[f64]> {
        Some(&self.loss)
    }

    fn point_geometry(&self) -> Option<Geometry> {
        Some(self.geometry)
    }

    /// <l_t, x>, for `x` a point of X (else an error).
    fn point_loss(&self, x: &[f64]) -> Result<f64> {
        check_point(self.geometry, self.n, x)?;
        Ok(self.loss.iter().zip(x).map(|(l, v)| l * v).sum())
    }

    /// <l_t, x> - (B_t - B_{t-1}) (module documentation).
    fn point_regret(&self, x: &[f64]) -> Result<f64> {
        Ok(self.point_loss(x)? - self.best_increment)
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
    fn the_chasing_adversary_charges_the_last_play() {
        let mut env = LossEnv::new(LossSequence::ChasePlayed { n: 3 }, &SeedSequence::from_seed(0)).unwrap();
        let mut set = DecisionSet::default();
        env.next_round(1, &mut set).unwrap();
        assert_eq!(env.losses().unwrap(), &[0.0, 0.0, 0.0]);
        env.observe_plays(&[2]).unwrap();
        env.next_round(2, &mut set).unwrap();
        assert_eq!(env.losses().unwrap(), &[0.0, 0.0, 1.0]);
        env.observe_plays(&[0]).unwrap();
        env.next_round(3, &mut set).unwrap();
        assert_eq!(env.losses().unwrap(), &[1.0, 0.0, 0.0]);
        // A round without the play, two learners, an index out of range, the ball: refused.
        assert!(env.next_round(4, &mut set).is_err());
        assert!(env.observe_plays(&[0, 1]).is_err());
        assert!(env.observe_plays(&[3]).is_err());
        let ball =
            LossEnv::with_geometry(LossSequence::ChasePlayed { n: 3 }, Geometry::Ball, &SeedSequence::from_seed(0));
        assert!(ball.is_err());
        assert!(LossEnv::new(LossSequence::ChasePlayed { n: 1 }, &SeedSequence::from_seed(0)).is_err());
        // Other sequences ignore the plays.
        let mut obl =
            LossEnv::new(LossSequence::SwitchingBest { n: 2, first_phase: 1 }, &SeedSequence::from_seed(0)).unwrap();
        assert!(obl.observe_plays(&[0, 1]).is_ok());
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

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod point_tests {
    use super::*;

    /// min over X of <big_l, x> by brute force: the simplex's and the
    /// cube's vertices (a linear function is minimized at a vertex), and a
    /// fine grid of the unit circle (d = 2).
    fn brute_force(geometry: Geometry, big_l: &[f64]) -> f64 {
        let d = big_l.len();
        match geometry {
            Geometry::Simplex => (0..d).map(|i| big_l[i]).fold(f64::INFINITY, f64::min),
            Geometry::Cube => (0..1u32 << d)
                .map(|mask| (0..d).map(|i| if mask >> i & 1 == 1 { big_l[i] } else { -big_l[i] }).sum::<f64>())
                .fold(f64::INFINITY, f64::min),
            Geometry::Ball => {
                assert_eq!(d, 2);
                (0..200_000)
                    .map(|k| {
                        let a = f64::from(k) * std::f64::consts::TAU / 200_000.0;
                        big_l[0] * a.cos() + big_l[1] * a.sin()
                    })
                    .fold(f64::INFINITY, f64::min)
            }
        }
    }

    #[test]
    fn smallest_entry_is_the_sequential_minimum() {
        use rand::Rng;
        let mut rng = SeedSequence::from_seed(3).stream("test");
        for len in 0..70 {
            let v: Vec<f64> = (0..len).map(|_| rng.random_range(-5.0..5.0)).collect();
            assert_eq!(smallest_entry(&v), v.iter().copied().fold(f64::INFINITY, f64::min), "length {len}");
        }
    }

    #[test]
    fn best_fixed_loss_equals_brute_force() {
        let vectors: [&[f64]; 4] = [&[3.0, -4.0], &[-0.5, 0.25], &[0.0, 0.0], &[1.5, 2.5]];
        for v in vectors {
            for g in [Geometry::Simplex, Geometry::Ball, Geometry::Cube] {
                let (a, b) = (best_fixed_loss(g, v), brute_force(g, v));
                // The circle grid's step is 2 pi / 2e5: error <= ||L|| (1 - cos(step / 2)) < 1e-9 ||L||.
                assert!((a - b).abs() <= 1e-9 * (1.0 + v.iter().map(|x| x.abs()).sum::<f64>()), "{g:?} {v:?}");
            }
        }
        let v3 = [0.7, -1.2, 0.1];
        assert_eq!(best_fixed_loss(Geometry::Cube, &v3), brute_force(Geometry::Cube, &v3));
        assert_eq!(best_fixed_loss(Geometry::Simplex, &v3), -1.2);
    }

    #[test]
    fn point_regret_telescopes_to_the_regret_against_the_best_fixed_point() {
        for g in [Geometry::Ball, Geometry::Cube, Geometry::Simplex] {
            let seq = LossSequence::Uniform { center: vec![0.3, -0.4, 0.1], spread: 0.5 };
            let mut env = LossEnv::with_geometry(seq, g, &SeedSequence::from_seed(2)).unwrap();
            let mut set = DecisionSet::default();
            let (mut regret, mut played) = (0.0, 0.0);
            let mut cum = [0.0; 3];
            for t in 1..=400u64 {
                env.next_round(t, &mut set).unwrap();
                let l = env.losses().unwrap().to_vec();
                match g {
                    Geometry::Ball => assert!(l.iter().map(|v| v * v).sum::<f64>().sqrt() <= 1.0 + 1e-12),
                    Geometry::Cube => assert!(l.iter().map(|v| v.abs()).sum::<f64>() <= 1.0 + 1e-12),
                    Geometry::Simplex => assert!(l.iter().all(|v| (0.0..=1.0).contains(v))),
                }
                // Any point of X: a rotating one.
                let a = t as f64 * 0.1;
                let x = match g {
                    Geometry::Simplex => vec![0.5 + 0.5 * a.cos(), 0.5 - 0.5 * a.cos(), 0.0],
                    _ => vec![0.6 * a.cos(), 0.6 * a.sin(), 0.3],
                };
                regret += env.point_regret(&x).unwrap();
                played += l.iter().zip(&x).map(|(u, v)| u * v).sum::<f64>();
                for (c, v) in cum.iter_mut().zip(&l) {
                    *c += v;
                }
                let want = played - brute_force_best(g, &cum);
                assert!((regret - want).abs() <= 1e-9 * (1.0 + want.abs()), "{g:?} t={t}: {regret} vs {want}");
            }
            assert_eq!(env.regret(0).is_some(), g == Geometry::Simplex);
        }
    }

    fn brute_force_best(g: Geometry, big_l: &[f64]) -> f64 {
        match g {
            Geometry::Ball => -big_l.iter().map(|v| v * v).sum::<f64>().sqrt(),
            _ => brute_force(g, big_l),
        }
    }

    #[test]
    fn points_outside_the_set_and_wrong_dimensions_are_refused() {
        let seq = LossSequence::Uniform { center: vec![0.1, 0.2], spread: 0.1 };
        let mut env = LossEnv::with_geometry(seq, Geometry::Ball, &SeedSequence::from_seed(0)).unwrap();
        env.next_round(1, &mut DecisionSet::default()).unwrap();
        assert!(env.point_loss(&[0.6, 0.6]).is_ok());
        assert!(matches!(env.point_loss(&[0.8, 0.8]), Err(Error::State(_))));
        assert!(matches!(env.point_loss(&[0.1, 0.1, 0.1]), Err(Error::InvalidArgument { .. })));
        // Array rows must lie in the loss set; the ball takes signed entries.
        let ok = LossSequence::Array { n: 2, losses: vec![0.6, -0.8] };
        assert!(LossEnv::with_geometry(ok.clone(), Geometry::Ball, &SeedSequence::from_seed(0)).is_ok());
        assert!(LossEnv::with_geometry(ok, Geometry::Cube, &SeedSequence::from_seed(0)).is_err());
        let bad = LossSequence::Uniform { center: vec![0.1], spread: -1.0 };
        assert!(LossEnv::with_geometry(bad, Geometry::Ball, &SeedSequence::from_seed(0)).is_err());
    }
}
