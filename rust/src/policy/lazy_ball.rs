//! Lazy-to-private online linear optimization on the unit Euclidean ball:
//! continuous exponential weights played lazily through a batched shrinking
//! dartboard with a switching floor, after the L2P transformation of Asi,
//! Koren, Liu & Talwar, "Private online learning via lazy algorithms"
//! (NeurIPS 2024, arXiv 2406.03620), for online convex optimization (the
//! reconstruction and its accounting are in
//! `dpbandits.privacy.private_experts`).
//!
//! Decisions x lie in the unit ball of R^n, losses are linear, <l_t, x>
//! with ||l_t||_2 <= 1. p_k(x) is proportional to exp(-eta <L_k, x>) on
//! the ball, L_k the cumulative loss vector through batch k. At the end of
//! batch k, with g the batch's loss sum, the current point x is kept with
//! probability (1 - gamma) exp(-eta (<g, x> + ||g||)) (in (0, 1], a
//! history-local rule reading batch k only); otherwise a new point is
//! drawn from p_k. The keep probability is a constant times
//! exp(-eta <g, x>) = p_k(x) / p_{k-1}(x) up to normalization, so the
//! point of batch k + 1 has law exactly p_k (the dartboard argument): the
//! regret is that of batched continuous exponential weights. After
//! `max_switches` draws the point is frozen.
//!
//! Sampling p_k: with u = -L / ||L|| and kappa = eta ||L||, the coordinate
//! s = <u, x> has density proportional to exp(kappa s) (1 - s^2)^((n-1)/2)
//! on [-1, 1] (log-concave: drawn by rejection from a three-piece
//! exponential envelope of tangents) and, given s, the rest of x is
//! uniform in the (n - 1)-ball of radius sqrt(1 - s^2) orthogonal to u.
//! These draws are floating point (`sampler="float"`; the guarantee says
//! so).
//!
//! Exact draws (a [`BallLattice`], the default of
//! `dpbandits.LazyPrivateOCO`): losses rounded toward zero to a lattice
//! 2^-j, points on the lattice points of the ball (coordinates multiples
//! of 2^-k), the exponential mechanism over them sampled exactly and the
//! keep coin exact, with the public batch length B in place of ||g||
//! ([`super::lattice_ball`]).

use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use super::exact_draws::bernoulli_dyadic;
pub use super::lattice_ball::BallLattice;
use super::loss_batches::{check_lazy_rates, check_sizes, lazy_keeps, loss_vector, BatchClock};
use super::Learner;
use crate::env::geometry::enforce_bounds;
use crate::env::{DecisionSet, Feedback, Geometry};
use crate::error::{check_finite, try_filled, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::rng::{open_unit, standard_normal, SeedSequence};

/// Plain-number configuration of [`LazyBall`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LazyBallConfig {
    /// Dimension n of the ball.
    pub n: usize,
    pub horizon: u64,
    /// Batch length B.
    pub batch: u64,
    /// Learning rate eta of exponential weights (per unit of loss).
    pub eta: f64,
    /// Switching floor gamma in [0, 1): every batch switches with probability >= gamma.
    pub gamma: f64,
    /// Draws after which the point is frozen.
    pub max_switches: u64,
    /// Loss vectors of norm above 1 are divided by their norm (true) or refused.
    pub clip: bool,
    /// The loss and point lattices of exact draws; None: floating-point draws.
    pub lattice: Option<BallLattice>,
}

impl LazyBallConfig {
    fn validate(&self) -> Result<()> {
        check_sizes("n", self.n, self.horizon, "batch", self.batch)?;
        check_lazy_rates(self.eta, self.gamma)?;
        match self.lattice {
            Some(lattice) => lattice.check(self.horizon, self.batch, self.eta, self.gamma),
            None => Ok(()),
        }
    }
}

impl super::LearnerFactory for LazyBallConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(LazyBall::new(*self, seeds)?))
    }
}

/// Batched shrinking-dartboard exponential weights on the unit ball.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LazyBall {
    config: LazyBallConfig,
    /// The point played.
    x: Vec<f64>,
    /// Cumulative loss vector L.
    cumulative: Vec<f64>,
    /// The current batch's loss sum g.
    batch_sum: Vec<f64>,
    switches: u64,
    /// Rounds, batch ends, and the loss vectors the bounds policy scaled into the unit ball.
    clock: BatchClock,
    scratch: Vec<f64>,
    /// Integer centres and remainders of the exact draws.
    #[serde(skip)]
    work: Vec<(i128, i128)>,
    /// Coins and draws: the seeded stream, or the operating system (secure mode).
    sampling: NoiseRng,
}

const STATE_VERSION: u8 = 3;

/// sqrt(sum v^2).
fn norm(v: &[f64]) -> f64 {
    v.iter().map(|a| a * a).sum::<f64>().sqrt()
}

/// A draw from the density proportional to exp(kappa s) (1 - s^2)^m on
/// [-1, 1] (kappa >= 0, m >= 0), by rejection from the envelope of
/// the log-density's tangents at the mode -+ one curvature width (module
/// documentation).
fn tilted_coordinate(rng: &mut dyn RngCore, kappa: f64, m: f64) -> f64 {
    if m == 0.0 {
        // exp(kappa s) on [-1, 1]: the inverse CDF, 1 + ln(U + (1 - U) e^(-2 kappa)) / kappa.
        let u = open_unit(rng);
        if kappa < 1e-12 {
            return 2.0 * u - 1.0;
        }
        return (1.0 + (u + (1.0 - u) * (-2.0 * kappa).exp()).ln() / kappa).clamp(-1.0, 1.0);
    }
    let h = |s: f64| kappa * s + m * (1.0 - s * s).ln();
    let dh = |s: f64| kappa - 2.0 * m * s / (1.0 - s * s);
    let mode = if kappa == 0.0 { 0.0 } else { ((m * m + kappa * kappa).sqrt() - m) / kappa };
    let curvature = 2.0 * m * (1.0 + mode * mode) / (1.0 - mode * mode).powi(2);
    let width = curvature.sqrt().recip();
    let top = h(mode);
    // Left tangent at t1 (slope > 0) meets the flat top at z1; right at t2, z2.
    let (t1, t2) = (mode - width, mode + width);
    let (b1, z1) = if t1 > -1.0 { (dh(t1), t1 + (top - h(t1)) / dh(t1)) } else { (0.0, -1.0) };
    let (b2, z2) = if t2 < 1.0 { (dh(t2), t2 + (top - h(t2)) / dh(t2)) } else { (0.0, 1.0) };
    let (z1, z2) = (z1.max(-1.0), z2.min(1.0));
    // Masses relative to exp(top): the envelope equals top at z1 and z2.
    let left = if b1 > 0.0 { -(-b1 * (z1 + 1.0)).exp_m1() / b1 } else { 0.0 };
    let flat = z2 - z1;
    let right = if b2 < 0.0 { -(b2 * (1.0 - z2)).exp_m1() / -b2 } else { 0.0 };
    let total = left + flat + right;
    loop {
        let pick = open_unit(rng) * total;
        let v = open_unit(rng);
        let (s, envelope) = if pick < left {
            // Density e^(b1 (s - z1)) on [-1, z1].
            let s = z1 + (v * (-b1 * (z1 + 1.0)).exp_m1()).ln_1p() / b1;
            (s, top + b1 * (s - z1))
        } else if pick < left + flat {
            (z1 + v * flat, top)
        } else {
            // Density e^(b2 (s - z2)) on [z2, 1] (b2 < 0).
            let s = z2 + (v * (b2 * (1.0 - z2)).exp_m1()).ln_1p() / b2;
            (s, top + b2 * (s - z2))
        };
        if s <= -1.0 || s >= 1.0 {
            continue;
        }
        if open_unit(rng).ln() <= h(s) - envelope {
            return s;
        }
    }
}

/// A draw from p(x) proportional to exp(-eta <big_l, x>) on the unit ball
/// of R^n, written into `x` (`scratch`: n entries).
fn ball_draw(rng: &mut dyn RngCore, eta: f64, big_l: &[f64], x: &mut [f64], scratch: &mut [f64]) {
    let n = x.len();
    let len = norm(big_l);
    let kappa = eta * len;
    // Direction u = -L / ||L|| (any unit vector when L = 0: the law is then uniform).
    if len > 0.0 {
        for (ui, li) in scratch.iter_mut().zip(big_l) {
            *ui = -li / len;
        }
    } else {
        scratch.fill(0.0);
        scratch[0] = 1.0;
    }
    let s = tilted_coordinate(rng, if len > 0.0 { kappa } else { 0.0 }, (n as f64 - 1.0) / 2.0);
    if n == 1 {
        x[0] = s * scratch[0];
        return;
    }
    // w: a uniform unit vector orthogonal to u (a Gaussian, projected, normalized).
    loop {
        for xi in x.iter_mut() {
            *xi = standard_normal(rng);
        }
        let along: f64 = x.iter().zip(&*scratch).map(|(a, b)| a * b).sum();
        for (xi, ui) in x.iter_mut().zip(&*scratch) {
            *xi -= along * ui;
        }
        let w = norm(x);
        if w > 1e-12 {
            let radius = (1.0 - s * s).max(0.0).sqrt() * open_unit(rng).powf(1.0 / (n as f64 - 1.0));
            for (xi, ui) in x.iter_mut().zip(&*scratch) {
                *xi = s * ui + radius * *xi / w;
            }
            let r = norm(x);
            if r > 1.0 {
                for xi in x.iter_mut() {
                    *xi /= r;
                }
            }
            return;
        }
    }
}

impl LazyBall {
    /// A fresh learner: x_0 uniform in the ball (p_0); coins and draws from
    /// `seeds`' `"sampling"` stream.
    pub fn new(config: LazyBallConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let mut sampling = seeds.stream("sampling");
        let mut x = try_filled("n", config.n, 0.0)?;
        let mut scratch = try_filled("n", config.n, 0.0)?;
        let zeros = try_filled("n", config.n, 0.0)?;
        let mut work = Vec::new();
        match config.lattice {
            Some(lattice) => lattice.draw(&mut sampling, config.eta, &zeros, &mut x, &mut work),
            None => ball_draw(&mut sampling, config.eta, &zeros, &mut x, &mut scratch),
        }
        Ok(LazyBall {
            config,
            x,
            cumulative: zeros.clone(),
            batch_sum: zeros,
            switches: 0,
            clock: BatchClock::new(config.batch),
            scratch,
            work,
            sampling: NoiseRng::seeded(sampling),
        })
    }

    pub fn config(&self) -> &LazyBallConfig {
        &self.config
    }

    pub fn t(&self) -> u64 {
        self.clock.t()
    }

    /// The point played this round.
    pub fn point(&self) -> &[f64] {
        &self.x
    }

    /// Draws made (switches).
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// Recorded loss vectors the bounds policy scaled into the unit ball.
    pub fn clipped_rewards(&self) -> u64 {
        self.clock.clipped()
    }

    /// Records the round's loss vector (||l||_2 <= 1); at a batch's end
    /// (before the horizon), keeps or redraws the point.
    pub fn observe(&mut self, losses: &[f64]) -> Result<()> {
        let horizon = self.config.horizon;
        self.clock.admit(losses, self.config.n, horizon)?;
        self.scratch.copy_from_slice(losses);
        let clipped = enforce_bounds(Geometry::Ball, self.config.clip, &mut self.scratch)?;
        // The accounting takes ||l||_2 <= 1 exactly (the check's tolerance is 1e-12).
        let len = norm(&self.scratch);
        if len > 1.0 {
            for v in &mut self.scratch {
                *v /= len;
            }
        }
        if let Some(lattice) = self.config.lattice {
            lattice.round_losses(&mut self.scratch);
        }
        for ((c, g), l) in self.cumulative.iter_mut().zip(&mut self.batch_sum).zip(&self.scratch) {
            *c += l;
            *g += l;
        }
        if self.clock.tick(clipped) {
            if self.clock.t() < horizon {
                self.end_batch()?;
            }
            self.batch_sum.fill(0.0);
            self.clock.open_batch(self.config.batch, horizon);
        }
        Ok(())
    }

    fn end_batch(&mut self) -> Result<()> {
        let c = self.config;
        let rng = self.sampling.source()?;
        if let Some(lattice) = c.lattice {
            if self.switches >= c.max_switches {
                return Ok(());
            }
            // Keep with probability (1 - gamma) exp(-eta (<g, x> + B)), both coins exact.
            if !bernoulli_dyadic(rng, c.gamma) && lattice.keep_coin(rng, c.eta, c.batch, &self.batch_sum, &self.x) {
                return Ok(());
            }
            lattice.draw(rng, c.eta, &self.cumulative, &mut self.x, &mut self.work);
            self.switches += 1;
            return Ok(());
        }
        let inner: f64 = self.batch_sum.iter().zip(&self.x).map(|(g, x)| g * x).sum();
        let a = (inner + norm(&self.batch_sum)).max(0.0);
        if lazy_keeps(&mut &mut *rng, c.eta, c.gamma, a, self.switches, c.max_switches) {
            return Ok(());
        }
        ball_draw(rng, c.eta, &self.cumulative, &mut self.x, &mut self.scratch);
        self.switches += 1;
        Ok(())
    }

    /// `runs` draws from p ∝ exp(-eta <L, x>) for the cumulative loss
    /// vector `big_l` (n entries), from a fresh stream per call: the
    /// released points, for checks of the sampler. Row-major (runs, n).
    pub fn draw_runs(&mut self, big_l: &[f64], runs: usize) -> Result<Vec<f64>> {
        let n = self.config.n;
        if big_l.len() != n {
            return Err(Error::invalid("losses", format!("expected {n} entries, got {}", big_l.len())));
        }
        check_finite("losses", big_l)?;
        let total = runs.checked_mul(n).ok_or_else(|| Error::invalid("runs", "too many"))?;
        let mut out = try_filled("runs", total, 0.0)?;
        let mut scratch = vec![0.0; n];
        let rng = self.sampling.source()?;
        match self.config.lattice {
            Some(lattice) => {
                // The cumulative loss as the engine holds it: on the loss lattice, within the horizon.
                let mut big_l = big_l.to_vec();
                lattice.round_losses(&mut big_l);
                if norm(&big_l) > self.config.horizon as f64 {
                    return Err(Error::invalid("losses", "the cumulative loss exceeds the horizon"));
                }
                for row in out.chunks_exact_mut(n) {
                    lattice.draw(rng, self.config.eta, &big_l, row, &mut self.work);
                }
            }
            None => {
                for row in out.chunks_exact_mut(n) {
                    ball_draw(rng, self.config.eta, big_l, row, &mut scratch);
                }
            }
        }
        Ok(out)
    }

    /// Draws future coins and points from a new root (`fork`); a secure
    /// learner stays secure.
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
            return Err(Error::Decode("unknown lazy-ball state version".into()));
        };
        let e: LazyBall = crate::state::decode(body)?;
        let c = &e.config;
        c.validate().map_err(|err| Error::Decode(format!("invalid lazy-ball configuration: {err}")))?;
        let finite = |v: &[f64]| v.iter().all(|a| a.is_finite());
        let consistent = e.x.len() == c.n
            && e.cumulative.len() == c.n
            && e.batch_sum.len() == c.n
            && e.scratch.len() == c.n
            && finite(&e.x)
            && finite(&e.cumulative)
            && finite(&e.batch_sum)
            && norm(&e.x) <= 1.0 + 1e-9
            && norm(&e.cumulative) <= e.clock.t() as f64 + 1e-6
            && norm(&e.batch_sum) <= c.batch as f64 + 1e-6
            && e.clock.consistent(c.horizon)
            && e.switches <= c.max_switches
            && c.lattice.is_none_or(|l| {
                BallLattice::on_lattice(&e.cumulative, l.loss_bits)
                    && BallLattice::on_lattice(&e.batch_sum, l.loss_bits)
                    && BallLattice::on_lattice(&e.x, l.point_bits)
            });
        if !consistent {
            return Err(Error::Decode("inconsistent lazy-ball state".into()));
        }
        Ok(e)
    }
}

impl Learner for LazyBall {
    fn use_os_entropy(&mut self) -> Result<()> {
        LazyBall::use_os_entropy(self)
    }

    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        if set.k != self.config.n {
            return Err(Error::invalid(
                "env",
                format!("the learner has dimension {}, the environment {}", self.config.n, set.k),
            ));
        }
        // The point is the decision (`played_point`); the index is unused.
        Ok(0)
    }

    fn update(&mut self, _set: &DecisionSet, _index: usize, feedback: Feedback<'_>) -> Result<()> {
        self.observe(loss_vector(feedback)?)
    }

    fn full_information(&self) -> bool {
        true
    }

    fn point_geometry(&self) -> Option<Geometry> {
        Some(Geometry::Ball)
    }

    fn played_point(&self) -> Option<&[f64]> {
        Some(&self.x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(n: usize, horizon: u64) -> LazyBallConfig {
        LazyBallConfig { n, horizon, batch: 4, eta: 0.05, gamma: 0.1, max_switches: 1000, clip: true, lattice: None }
    }

    /// E[s] and E[s^2] of exp(kappa s) (1 - s^2)^m on [-1, 1] by a fine midpoint rule.
    fn moments(kappa: f64, m: f64) -> (f64, f64) {
        let k = 200_000;
        let (mut z, mut s1, mut s2) = (0.0, 0.0, 0.0);
        for i in 0..k {
            let s = -1.0 + (f64::from(i) + 0.5) * 2.0 / f64::from(k);
            let w = (kappa * s + m * (1.0 - s * s).ln()).exp();
            z += w;
            s1 += w * s;
            s2 += w * s * s;
        }
        (s1 / z, s2 / z)
    }

    #[test]
    fn the_tilted_coordinate_has_its_moments() {
        let mut rng = SeedSequence::from_seed(7).stream("test");
        for (kappa, m) in [(0.0, 0.0), (3.0, 0.0), (0.0, 1.5), (2.0, 0.5), (40.0, 2.0), (500.0, 4.5)] {
            let runs = 100_000;
            let draws: Vec<f64> = (0..runs).map(|_| tilted_coordinate(&mut rng, kappa, m)).collect();
            let (mean, second) = moments(kappa, m);
            let got = draws.iter().sum::<f64>() / f64::from(runs);
            let se = ((second - mean * mean).max(0.0) / f64::from(runs)).sqrt();
            assert!((got - mean).abs() < 5.0 * se + 1e-9, "kappa {kappa}, m {m}: {got} vs {mean}");
            assert!(draws.iter().all(|s| (-1.0..=1.0).contains(s)));
        }
    }

    #[test]
    fn ball_draws_lie_in_the_ball_and_lean_against_the_loss() {
        let mut e = LazyBall::new(config(3, 100), &SeedSequence::from_seed(1)).unwrap();
        let big_l = [20.0, 0.0, 0.0];
        let pts = e.draw_runs(&big_l, 20_000).unwrap();
        let (mut mean0, mut mean1) = (0.0, 0.0);
        for p in pts.chunks_exact(3) {
            assert!(norm(p) <= 1.0 + 1e-12);
            mean0 += p[0];
            mean1 += p[1];
        }
        // kappa = 1 along -e_1: E[x_1] = -E[s] for m = 1, the other coordinates centred.
        let (s_mean, _) = moments(1.0, 1.0);
        assert!((mean0 / 20_000.0 + s_mean).abs() < 0.01, "{}", mean0 / 20_000.0);
        assert!((mean1 / 20_000.0).abs() < 0.01);
    }

    #[test]
    fn the_played_point_has_the_law_of_exponential_weights() {
        // n = 1: the ball is [-1, 1]; loss +1 every round, after two batches
        // of 4 rounds L = 8 and p_2 ∝ exp(-0.4 x): E[x] = -E[s] at kappa = 0.4, m = 0.
        let c = config(1, 40);
        let runs = 40_000;
        let mut total = 0.0;
        for s in 0..runs {
            let mut e = LazyBall::new(c, &SeedSequence::from_seed(s)).unwrap();
            for _ in 0..8 {
                e.observe(&[1.0]).unwrap();
            }
            total += e.point()[0];
        }
        let (mean, second) = moments(0.4, 0.0);
        let se = ((second - mean * mean) / runs as f64).sqrt();
        let got = total / runs as f64;
        assert!((got + mean).abs() < 4.5 * se, "E[x] {got}, want {}", -mean);
    }

    #[test]
    fn switches_stop_at_the_budget_state_round_trips_and_bad_input_is_refused() {
        let c = LazyBallConfig { max_switches: 3, gamma: 0.9, ..config(2, 400) };
        let mut a = LazyBall::new(c, &SeedSequence::from_seed(1)).unwrap();
        for t in 0..150u64 {
            a.observe(&[0.6 * (t % 2) as f64, -0.8]).unwrap();
        }
        assert_eq!(a.switches(), 3);
        let mut b = LazyBall::from_bytes(&a.to_bytes()).unwrap();
        for _ in 150..400 {
            a.observe(&[0.1, 0.5]).unwrap();
            b.observe(&[0.1, 0.5]).unwrap();
            assert_eq!(a.point(), b.point());
        }
        assert!(a.observe(&[0.0; 2]).is_err());
        let mut bad = b.clone();
        bad.x = vec![2.0, 0.0];
        assert!(LazyBall::from_bytes(&bad.to_bytes()).is_err());
        assert!(LazyBall::from_bytes(&[7, 1, 2]).is_err());
        assert!(LazyBall::new(LazyBallConfig { gamma: 1.0, ..c }, &SeedSequence::from_seed(0)).is_err());
        let mut strict = LazyBall::new(LazyBallConfig { clip: false, ..c }, &SeedSequence::from_seed(0)).unwrap();
        assert!(strict.observe(&[f64::NAN, 0.0]).is_err());
        assert!(strict.observe(&[1.0, 1.0]).is_err());
        assert!(strict.observe(&[0.0]).is_err());
        assert_eq!(strict.t(), 0);
    }
}
