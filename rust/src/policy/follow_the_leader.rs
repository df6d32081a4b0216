//! Private Follow-the-Regularized-Leader and Follow-the-Perturbed-Leader of
//! Agarwal & Singh 2017 (Alg. 1 and Alg. 3) for online linear optimization.
//!
//! Both play x_t = argmin_{x in X} eta <x, L~_{t-1}> + R(x) (FTRL; R = 0 for
//! FTPL), where L~_t is the noisy prefix sum of the loss vectors released by
//! TreeBasedAgg (Alg. 2): [`TreeCounter`] padded so that every release
//! carries exactly max(1, ceil(log2 T)) noise draws, and L~_0 (Alg. 1/3
//! lines 2-3) is the sum of that many draws, drawn at construction. The
//! decision reads only these releases; the noise scale arrives as a plain
//! [`NoiseSpec`] computed by `dpbandits.privacy.agarwal_singh`.
//!
//! Decision sets X and regularizers (Cor. 3.2):
//! - simplex (prediction with expert advice), R(x) = sum_i x_i log x_i:
//!   x_t(i) proportional to exp(-eta L~_{t-1}(i)) (exponential weights over
//!   the noisy cumulative loss); FTPL plays the vertex of the smallest entry;
//! - Euclidean ball, R(x) = ||x||^2: x_t = projection of -eta L~ / 2 onto
//!   the ball; FTPL: -L~ / ||L~||;
//! - cube [-1, 1]^N, R(x) = ||x||^2: x_t = clip(-eta L~ / 2, -1, 1); FTPL:
//!   -sign(L~).
//!
//! In the simulation loop a simplex learner plays an index drawn from x_t
//! (from its own `"sampling"` stream: post-processing), so the expected
//! per-round loss is <l_t, x_t>. Ball and cube learners play the point x_t
//! itself ([`Learner::played_point`]): the loop scores <l_t, x_t> against
//! the best fixed point of X in hindsight on a loss environment of the same
//! geometry (`env/losses.rs`).

use serde::{Deserialize, Serialize};

use super::Learner;
use crate::counter::tree::ceil_log2;
use crate::counter::{ContinualCounter, FactorSpec, Factorization};
use crate::env::geometry::enforce_bounds;
use crate::env::losses::smallest_entry;
use crate::env::{DecisionSet, Feedback, Geometry};
use crate::error::{check_finite, try_filled, Error, Result};
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// How x_t is chosen from L~_{t-1}.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum LeaderRule {
    /// FTRL (Alg. 1, line 5) with step `eta` and the geometry's regularizer.
    Regularized { eta: f64 },
    /// FTPL (Alg. 3, line 5): linear optimization over X.
    Perturbed,
}

/// Plain-number configuration of [`FollowTheLeader`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FollowTheLeaderConfig {
    /// Dimension N.
    pub n: usize,
    /// Horizon T the noise was calibrated for.
    pub horizon: u64,
    pub geometry: Geometry,
    pub rule: LeaderRule,
    /// Per-draw noise D of Alg. 2 (Laplace for FTRL, Gaussian for FTPL).
    pub noise: NoiseSpec,
    /// Out-of-range losses are clipped (true) or refused (false).
    pub clip: bool,
    /// The counter of the prefix sums: `None` for TreeBasedAgg (Alg. 2,
    /// padded binary tree), else a factorization counter (smooth binary for
    /// Laplace or Gaussian noise; sqrt / BLT for Gaussian), whose noise
    /// scale the privacy layer set for it.
    pub counter: Option<FactorSpec>,
}

impl FollowTheLeaderConfig {
    fn validate(&self) -> Result<()> {
        if self.n < 1 {
            return Err(Error::invalid("n", "must be >= 1"));
        }
        if self.horizon < 1 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        if let LeaderRule::Regularized { eta } = self.rule {
            crate::error::check_positive("eta", eta)?;
        }
        if matches!(self.noise, NoiseSpec::SymmetricGaussian { .. } | NoiseSpec::Wishart { .. }) {
            return Err(Error::invalid("noise", "must be zero, Laplace or Gaussian (vector noise)"));
        }
        self.noise.validate(&[self.n])
    }
}

impl super::LearnerFactory for FollowTheLeaderConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(FollowTheLeader::new(*self, seeds)?))
    }
}

/// Private FTRL / FTPL engine (see the module documentation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FollowTheLeader {
    config: FollowTheLeaderConfig,
    tree: ContinualCounter,
    /// L~_0 of Alg. 1 line 3.
    initial: Vec<f64>,
    /// The current decision x_{t+1}.
    x: Vec<f64>,
    sampling: StreamRng,
    scratch: Vec<f64>,
    /// Recorded loss vectors the bounds policy clipped into the loss set.
    clipped: u64,
}

/// 2: the counter is a [`ContinualCounter`] (1: always the padded tree).
const STATE_VERSION: u8 = 2;

impl FollowTheLeader {
    /// A fresh engine: tree noise from `seeds`' `"tree"` stream, L~_0 from
    /// `"initial_noise"`, index sampling from `"sampling"`.
    pub fn new(config: FollowTheLeaderConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let pad_to = ceil_log2(config.horizon).max(1);
        let tree =
            ContinualCounter::of_choice(&[config.n], config.horizon, config.noise, config.counter, pad_to, seeds)?;
        // Alg. 1 lines 2-3: L~_0 is the sum of ceil(log T) draws of D, the
        // same count as every padded release (max(1, .) for T = 1).
        let draws = initial_draws(&config);
        let mut initial = try_filled("n", config.n, 0.0)?;
        let mut draw = try_filled("n", config.n, 0.0)?;
        let mut rng = seeds.stream("initial_noise");
        for _ in 0..draws {
            config.noise.sample_into(&mut rng, 0, &mut draw);
            for (a, z) in initial.iter_mut().zip(&draw) {
                *a += z;
            }
        }
        let mut engine = FollowTheLeader {
            config,
            tree,
            initial,
            x: try_filled("n", config.n, 0.0)?,
            sampling: seeds.stream("sampling"),
            scratch: try_filled("n", config.n, 0.0)?,
            clipped: 0,
        };
        engine.refresh();
        Ok(engine)
    }

    /// Draws summed into L~_0 (Alg. 1 lines 2-3): as many as every padded
    /// release (tree), every smooth binary release, or the first release
    /// of a Toeplitz factorization (one).
    fn initial_draws(&self) -> u32 {
        initial_draws(&self.config)
    }

    pub fn config(&self) -> &FollowTheLeaderConfig {
        &self.config
    }

    /// Rounds observed.
    pub fn t(&self) -> u64 {
        self.tree.t()
    }

    /// The decision x_{t+1} for the next round.
    pub fn decision(&self) -> &[f64] {
        &self.x
    }

    /// The release L~_t the decision is computed from (L~_0 before any loss).
    pub fn released(&self) -> &[f64] {
        if self.tree.t() == 0 {
            &self.initial
        } else {
            self.tree.release()
        }
    }

    /// Noise draws in the current release: exactly max(1, ceil(log2 T))
    /// with the padded tree, `ones` with the smooth binary mechanism (L~_0
    /// included); t with a Toeplitz factorization (every draw enters).
    pub fn noise_terms(&self) -> u32 {
        if self.tree.t() == 0 {
            self.initial_draws()
        } else {
            self.tree.noise_terms()
        }
    }

    /// An index drawn from x_t (simplex only).
    pub fn sample_index(&mut self) -> Result<usize> {
        if self.config.geometry != Geometry::Simplex {
            return Err(Error::State("only simplex decisions are distributions over indices".into()));
        }
        let u: f64 = rand::Rng::random(&mut self.sampling);
        let mut acc = 0.0;
        for (i, p) in self.x.iter().enumerate() {
            acc += p;
            if u < acc {
                return Ok(i);
            }
        }
        // Rounding: the weights sum to 1 - O(eps).
        Ok(self.x.iter().rposition(|&p| p > 0.0).unwrap_or(0))
    }

    /// Records the loss vector of the round (Alg. 1 lines 6-7).
    pub fn observe(&mut self, losses: &[f64]) -> Result<()> {
        if losses.len() != self.config.n {
            return Err(Error::invalid("losses", format!("expected {} entries, got {}", self.config.n, losses.len())));
        }
        check_finite("losses", losses)?;
        self.scratch.copy_from_slice(losses);
        let clipped = enforce_bounds(self.config.geometry, self.config.clip, &mut self.scratch)?;
        self.tree.add(&self.scratch)?;
        self.clipped += u64::from(clipped);
        self.refresh();
        Ok(())
    }

    /// Recorded loss vectors the bounds policy clipped into the loss set.
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// Draws future noise and samples from a new root (`fork`).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.tree.reseed(seeds);
        self.sampling = seeds.stream("sampling");
    }

    /// Tree noise from the operating system from now on (secure mode;
    /// before the first update).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.tree.use_os_entropy()
    }

    /// Whether tree noise comes from the operating system.
    pub fn os_entropy(&self) -> bool {
        self.tree.os_entropy()
    }

    fn refresh(&mut self) {
        let released = if self.tree.t() == 0 { &self.initial } else { self.tree.release() };
        argmin(self.config.geometry, self.config.rule, released, &mut self.x);
    }

    /// Serialized state (tree noise and generators included).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// Restores an engine written by [`FollowTheLeader::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        match bytes.split_first() {
            Some((&STATE_VERSION, body)) => {
                let e: FollowTheLeader = crate::state::decode(body)?;
                // The configuration passes the constructor's checks, and the
                // counter is the one it builds (kind, shape, horizon, noise).
                let reference = FollowTheLeader::new(e.config, &SeedSequence::from_seed(0)).map_err(|err| {
                    Error::Decode(format!("follow-the-leader state with an invalid configuration: {err}"))
                })?;
                e.tree.check_restored(&reference.tree)?;
                let n = e.config.n;
                let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
                if e.initial.len() != n
                    || e.x.len() != n
                    || e.scratch.len() != n
                    || e.tree.dim() != n
                    || !finite(&e.initial)
                    || !finite(&e.x)
                    || e.clipped > e.tree.t()
                {
                    return Err(Error::Decode("inconsistent follow-the-leader state".into()));
                }
                Ok(e)
            }
            Some((1, _)) => Err(Error::Decode(
                "follow-the-leader state version 1 was written before the engine took a counter choice; this \
                 version reads version 2"
                    .into(),
            )),
            _ => Err(Error::Decode("unknown follow-the-leader state version".into())),
        }
    }
}

/// See [`FollowTheLeader::initial_draws`]: the smooth binary mechanism's
/// releases all sum `ones` draws; a Toeplitz factorization's first release
/// one (c_0 = b_0 = 1).
fn initial_draws(config: &FollowTheLeaderConfig) -> u32 {
    match config.counter.map(|f| f.factorization()) {
        None => ceil_log2(config.horizon).max(1),
        Some(Factorization::SmoothBinary { ones, .. }) => ones,
        Some(_) => 1,
    }
}

/// x = argmin_{x in X} eta <x, big_l> + R(x) (or <x, big_l> for FTPL).
fn argmin(geometry: Geometry, rule: LeaderRule, big_l: &[f64], x: &mut [f64]) {
    match (geometry, rule) {
        (Geometry::Simplex, LeaderRule::Regularized { eta }) => {
            let lo = smallest_entry(big_l);
            let mut total = 0.0;
            for (xi, &li) in x.iter_mut().zip(big_l) {
                *xi = (-eta * (li - lo)).exp();
                total += *xi;
            }
            for xi in x.iter_mut() {
                *xi /= total;
            }
        }
        (Geometry::Simplex, LeaderRule::Perturbed) => {
            let best = big_l
                .iter()
                .enumerate()
                .fold((0, f64::INFINITY), |(bi, bv), (i, &v)| if v < bv { (i, v) } else { (bi, bv) })
                .0;
            x.fill(0.0);
            x[best] = 1.0;
        }
        (Geometry::Ball, LeaderRule::Regularized { eta }) => {
            let norm = big_l.iter().map(|v| v * v).sum::<f64>().sqrt() * eta / 2.0;
            let scale = if norm > 1.0 { 1.0 / norm } else { 1.0 };
            for (xi, &li) in x.iter_mut().zip(big_l) {
                *xi = -eta / 2.0 * li * scale;
            }
        }
        (Geometry::Ball, LeaderRule::Perturbed) => {
            let norm = big_l.iter().map(|v| v * v).sum::<f64>().sqrt();
            for (xi, &li) in x.iter_mut().zip(big_l) {
                *xi = if norm > 0.0 { -li / norm } else { 0.0 };
            }
        }
        (Geometry::Cube, LeaderRule::Regularized { eta }) => {
            for (xi, &li) in x.iter_mut().zip(big_l) {
                *xi = (-eta / 2.0 * li).clamp(-1.0, 1.0);
            }
        }
        (Geometry::Cube, LeaderRule::Perturbed) => {
            for (xi, &li) in x.iter_mut().zip(big_l) {
                *xi = if li < 0.0 { 1.0 } else { -1.0 };
            }
        }
    }
}

impl Learner for FollowTheLeader {
    fn use_os_entropy(&mut self) -> Result<()> {
        FollowTheLeader::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        if set.k != self.config.n {
            return Err(Error::invalid(
                "env",
                format!("the learner has dimension {}, the environment {}", self.config.n, set.k),
            ));
        }
        if self.config.geometry == Geometry::Simplex {
            self.sample_index()
        } else {
            // The point x_t is the decision (`played_point`); the index is unused.
            Ok(0)
        }
    }

    fn update(&mut self, _set: &DecisionSet, _index: usize, feedback: Feedback<'_>) -> Result<()> {
        match feedback {
            Feedback::Losses(l) => self.observe(l),
            Feedback::Reward(_) => Err(Error::State("a full-information learner needs the loss vector".into())),
        }
    }

    fn full_information(&self) -> bool {
        true
    }

    fn point_geometry(&self) -> Option<Geometry> {
        (self.config.geometry != Geometry::Simplex).then_some(self.config.geometry)
    }

    /// x_t (ball and cube), played until `update` records l_t.
    fn played_point(&self) -> Option<&[f64]> {
        (self.config.geometry != Geometry::Simplex).then_some(self.x.as_slice())
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn config(geometry: Geometry, rule: LeaderRule, noise: NoiseSpec) -> FollowTheLeaderConfig {
        FollowTheLeaderConfig { n: 4, horizon: 100, geometry, rule, noise, clip: true, counter: None }
    }

    #[test]
    fn smooth_binary_releases_carry_exactly_ones_draws() {
        let smooth = Factorization::SmoothBinary { height: 9, ones: 4 }; // binom(9, 4) = 126 leaves
        let c = FollowTheLeaderConfig {
            horizon: 100,
            counter: Some(FactorSpec::new(&smooth).unwrap()),
            ..config(Geometry::Simplex, LeaderRule::Regularized { eta: 0.1 }, NoiseSpec::Laplace { scale: 1.0 })
        };
        let mut e = FollowTheLeader::new(c, &SeedSequence::from_seed(1)).unwrap();
        assert_eq!(e.noise_terms(), 4);
        for _ in 0..100 {
            e.observe(&[0.5; 4]).unwrap();
            assert_eq!(e.noise_terms(), 4);
        }
        let back = FollowTheLeader::from_bytes(&e.to_bytes()).unwrap();
        assert_eq!(back.released(), e.released());
        let mut old = e.to_bytes();
        old[0] = 1;
        assert!(FollowTheLeader::from_bytes(&old).unwrap_err().to_string().contains("version 1"));
    }

    #[test]
    fn every_release_carries_exactly_ceil_log2_t_draws() {
        for horizon in [1u64, 2, 5, 64, 100] {
            let c = FollowTheLeaderConfig {
                horizon,
                ..config(Geometry::Simplex, LeaderRule::Perturbed, NoiseSpec::Laplace { scale: 1.0 })
            };
            let mut e = FollowTheLeader::new(c, &SeedSequence::from_seed(1)).unwrap();
            let want = ceil_log2(horizon).max(1);
            assert_eq!(e.noise_terms(), want);
            for _ in 0..horizon {
                e.observe(&[0.5; 4]).unwrap();
                assert_eq!(e.noise_terms(), want);
            }
            assert!(e.observe(&[0.5; 4]).is_err());
        }
    }

    #[test]
    fn zero_noise_ftrl_is_exponential_weights() {
        let eta = 0.3;
        let mut e = FollowTheLeader::new(
            config(Geometry::Simplex, LeaderRule::Regularized { eta }, NoiseSpec::Zero),
            &SeedSequence::from_seed(2),
        )
        .unwrap();
        let mut cum = [0.0; 4];
        for t in 0..50 {
            let l: Vec<f64> = (0..4).map(|i| f64::from((t * 7 + i * 3) % 5) / 4.0).collect();
            e.observe(&l).unwrap();
            for (c, v) in cum.iter_mut().zip(&l) {
                *c += v;
            }
            let w: Vec<f64> = cum.iter().map(|c| (-eta * c).exp()).collect();
            let s: f64 = w.iter().sum();
            for (a, b) in e.decision().iter().zip(&w) {
                assert!((a - b / s).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn ball_and_cube_decisions_stay_in_the_set() {
        for geometry in [Geometry::Ball, Geometry::Cube] {
            for rule in [LeaderRule::Regularized { eta: 0.5 }, LeaderRule::Perturbed] {
                let mut e = FollowTheLeader::new(
                    config(geometry, rule, NoiseSpec::Laplace { scale: 2.0 }),
                    &SeedSequence::from_seed(3),
                )
                .unwrap();
                for _ in 0..60 {
                    e.observe(&[0.1, -0.2, 0.3, 0.05]).unwrap();
                    let x = e.decision();
                    match geometry {
                        Geometry::Ball => assert!(x.iter().map(|v| v * v).sum::<f64>().sqrt() <= 1.0 + 1e-12),
                        _ => assert!(x.iter().all(|v| v.abs() <= 1.0)),
                    }
                }
            }
        }
    }

    #[test]
    fn bounds_are_enforced() {
        let mut c = config(Geometry::Simplex, LeaderRule::Perturbed, NoiseSpec::Zero);
        c.clip = false;
        let mut e = FollowTheLeader::new(c, &SeedSequence::from_seed(0)).unwrap();
        assert!(e.observe(&[1.5, 0.0, 0.0, 0.0]).is_err());
        assert!(e.observe(&[0.5, 0.0, 0.0]).is_err());
        let mut b = config(Geometry::Ball, LeaderRule::Perturbed, NoiseSpec::Zero);
        b.clip = false;
        let mut e = FollowTheLeader::new(b, &SeedSequence::from_seed(0)).unwrap();
        assert!(e.observe(&[1.0, 1.0, 0.0, 0.0]).is_err());
    }

    #[test]
    fn shared_run_of_full_information_and_bandit_learners_equals_separate_runs() {
        use crate::env::{LossEnv, LossSequence};
        use crate::policy::{Exp2, Exp2Config};
        use crate::sim::{run_episode, run_shared_episode};
        let root = SeedSequence::from_seed(7);
        let env = || LossEnv::new(LossSequence::Stochastic { means: vec![0.5, 0.4, 0.6, 0.5] }, &root).unwrap();
        let ftrl = || {
            FollowTheLeader::new(
                FollowTheLeaderConfig {
                    horizon: 2000,
                    ..config(
                        Geometry::Simplex,
                        LeaderRule::Regularized { eta: 0.05 },
                        NoiseSpec::Laplace { scale: 4.0 },
                    )
                },
                &root,
            )
            .unwrap()
        };
        let exp2 = || {
            Exp2::new(
                Exp2Config {
                    n: 4,
                    horizon: 2000,
                    eta: 0.01,
                    gamma: 0.05,
                    noise: NoiseSpec::Laplace { scale: 1.0 },
                    clip: true,
                },
                &root,
            )
            .unwrap()
        };
        let a = run_episode(&mut ftrl(), &mut env(), 2000, 100, None).unwrap();
        let b = run_episode(&mut exp2(), &mut env(), 2000, 100, None).unwrap();
        let (mut f, mut x) = (ftrl(), exp2());
        let shared = run_shared_episode(&mut [&mut f, &mut x], &mut env(), 2000, 100, None).unwrap();
        assert_eq!(shared[0].regret, a.regret);
        assert_eq!(shared[1].regret, b.regret);
        assert!(a.regret.iter().all(|r| r.is_finite()));
    }

    #[test]
    fn round_trip_continues_identically() {
        let c = config(Geometry::Simplex, LeaderRule::Regularized { eta: 0.2 }, NoiseSpec::Laplace { scale: 3.0 });
        let mut a = FollowTheLeader::new(c, &SeedSequence::from_seed(4)).unwrap();
        for _ in 0..17 {
            a.observe(&[0.1, 0.9, 0.4, 0.0]).unwrap();
        }
        let mut b = FollowTheLeader::from_bytes(&a.to_bytes()).unwrap();
        for _ in 0..30 {
            a.observe(&[0.3, 0.2, 0.4, 1.0]).unwrap();
            b.observe(&[0.3, 0.2, 0.4, 1.0]).unwrap();
            assert_eq!(a.decision(), b.decision());
            assert_eq!(a.sample_index().unwrap(), b.sample_index().unwrap());
        }
    }
}
