//! The synthetic contextual linear bandit of Shariff & Sheffet 2018, App. D.
//!
//! theta* is uniform on the unit sphere of R^d. Each round brings a fresh
//! decision set of `k` unit actions: one optimal action uniform on
//! {||x|| = 1, <x, theta*> = r*} (r* = 0.75 in the paper) and k - 1
//! suboptimal actions uniform on {||x|| = 1, <x, theta*> in [-r*, r* - gap]}
//! (gap 0.1 in D.1 and the right half of D.2; 0 in the left half). The
//! optimal action sits at a uniformly random index so that argmax
//! tie-breaking cannot favour it. Rewards are +-1 with mean <x, theta*>
//! (sigma^2 = 1 subgaussian, |y| <= 1) or Gaussian N(<x, theta*>, 1)
//! (D.1's second sub-experiment; unbounded, so a private learner clips it).

use rand::Rng;
use rand_distr::StandardNormal;

use super::{DecisionSet, Environment, Feedback};
use crate::error::{Error, Result};
use crate::rng::{SeedSequence, SimulationNormals, SimulationRng};

/// Reward distribution given the mean mu = <x, theta*>.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RewardModel {
    /// y = +1 with probability (1 + mu)/2, else -1.
    PlusMinusOne,
    /// y = mu + N(0, 1).
    Gaussian,
}

/// Parameters of App. D's generator: what a simulation needs to build one
/// instance per replicate.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShariffSheffetConfig {
    pub d: usize,
    pub k: usize,
    pub gap: f64,
    pub optimal_reward: f64,
    pub reward: RewardModel,
}

impl crate::sim::EnvironmentFactory for ShariffSheffetConfig {
    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Environment>> {
        Ok(Box::new(ShariffSheffetEnv::new(self.d, self.k, self.gap, self.optimal_reward, self.reward, seeds)?))
    }
}

/// App. D's generator.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ShariffSheffetEnv {
    d: usize,
    k: usize,
    gap: f64,
    optimal_reward: f64,
    reward: RewardModel,
    theta: Vec<f64>,
    means: Vec<f64>,
    /// Normals (and the optimal index) of the decision sets.
    contexts: SimulationNormals,
    rewards: SimulationRng,
    scratch: Vec<f64>,
}

/// Most entries (k * d) a generated decision set may have (512 MB of f64).
pub const MAX_DECISION_ENTRIES: usize = 1 << 26;

impl ShariffSheffetEnv {
    /// Serialized state (generators included): a restored environment
    /// continues with the same decision sets and rewards.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an environment written by [`ShariffSheffetEnv::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let env: ShariffSheffetEnv = crate::state::decode(bytes)?;
        if env.theta.len() != env.d
            || env.means.len() != env.k
            || env.scratch.len() != env.d
            || !env.contexts.is_consistent()
        {
            return Err(Error::Decode("inconsistent environment state".into()));
        }
        Ok(env)
    }
}

impl ShariffSheffetEnv {
    /// A new instance; `theta*` is drawn from `seeds`' `"environment/theta"`
    /// stream, decision sets from `"environment/contexts"` (block-generated
    /// normals, see [`SimulationNormals`]), reward noise from
    /// `"environment/rewards"`.
    pub fn new(
        d: usize,
        k: usize,
        gap: f64,
        optimal_reward: f64,
        reward: RewardModel,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        if d < 2 {
            return Err(Error::invalid(
                "d",
                format!("must be >= 2 (the optimal action lives on a (d-2)-sphere), got {d}"),
            ));
        }
        if k < 1 {
            return Err(Error::invalid("k", "must be >= 1"));
        }
        // Bug fix (hostile-input fuzzing): k = 2^40 tried to allocate k x d
        // floats and aborted the whole process; a decision set must fit.
        if d.checked_mul(k).is_none_or(|n| n > MAX_DECISION_ENTRIES) {
            return Err(Error::invalid(
                "k",
                format!("k * d = {k} * {d} exceeds {MAX_DECISION_ENTRIES} entries per decision set"),
            ));
        }
        if !(optimal_reward.is_finite() && optimal_reward > 0.0 && optimal_reward < 1.0) {
            return Err(Error::invalid("optimal_reward", format!("must lie in (0, 1), got {optimal_reward}")));
        }
        if !(gap.is_finite() && (0.0..2.0 * optimal_reward).contains(&gap)) {
            return Err(Error::invalid("gap", format!("must lie in [0, 2 * optimal_reward), got {gap}")));
        }
        let mut theta_rng = seeds.simulation_stream("environment/theta");
        let theta = unit_vector(&mut theta_rng, d);
        Ok(ShariffSheffetEnv {
            d,
            k,
            gap,
            optimal_reward,
            reward,
            theta,
            means: vec![0.0; k],
            contexts: seeds.simulation_normals("environment/contexts"),
            rewards: seeds.simulation_stream("environment/rewards"),
            scratch: vec![0.0; d],
        })
    }

    /// The parameters the instance was built with.
    pub fn config(&self) -> ShariffSheffetConfig {
        ShariffSheffetConfig {
            d: self.d,
            k: self.k,
            gap: self.gap,
            optimal_reward: self.optimal_reward,
            reward: self.reward,
        }
    }

    /// The hidden parameter theta*.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// Mean rewards <x, theta*> of the current decision set.
    pub fn means(&self) -> &[f64] {
        &self.means
    }

    /// Fills `x` with a uniform unit vector x such that <x, theta> = `dot`
    /// (x = dot theta + sqrt(1 - dot^2) u, u uniform on the sphere of theta's
    /// orthogonal complement).
    fn on_slice(&mut self, dot: f64, x: &mut [f64]) {
        loop {
            self.contexts.fill(&mut self.scratch);
            let proj: f64 = self.scratch.iter().zip(&self.theta).map(|(a, b)| a * b).sum();
            for (s, t) in self.scratch.iter_mut().zip(&self.theta) {
                *s -= proj * t;
            }
            let norm = self.scratch.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 1e-12 {
                let r = (1.0 - dot * dot).sqrt() / norm;
                for ((xi, s), t) in x.iter_mut().zip(&self.scratch).zip(&self.theta) {
                    *xi = dot * t + r * s;
                }
                return;
            }
        }
    }

    /// Uniform unit vector conditioned on <x, theta> in [lo, hi], by
    /// rejection from the uniform sphere (acceptance >= 0.9 for the paper's
    /// intervals and d >= 4). Returns the inner product.
    fn in_band(&mut self, lo: f64, hi: f64, x: &mut [f64]) -> f64 {
        loop {
            // (Any d: `fill` crosses block boundaries.)
            self.contexts.fill(x);
            let (mut sq, mut raw) = (0.0, 0.0);
            for (v, t) in x.iter().zip(&self.theta) {
                sq += v * v;
                raw += v * t;
            }
            if sq < 1e-300 {
                continue;
            }
            // lo <= raw / ||g|| <= hi without the square root and division
            // (they would sit between the draw and the branch).
            if scaled_at_least(raw, lo, sq) && !scaled_above(raw, hi, sq) {
                let inv = 1.0 / sq.sqrt();
                for xi in x.iter_mut() {
                    *xi *= inv;
                }
                return (raw * inv).clamp(lo, hi);
            }
        }
    }
}

impl ShariffSheffetEnv {
    /// A whole decision set for a compile-time d: the optimal action at
    /// `best`, then the suboptimal ones by rejection, `CANDIDATES` proposals
    /// at a time: their norms and projections are computed without a branch
    /// in between (independent work the processor overlaps), the accepted
    /// ones listed branch-free, then normalised into the free rows in order.
    /// Proposals are i.i.d., so the accepted ones are i.i.d. from the band's
    /// law; accepted proposals left over once the set is full are dropped.
    fn fill_set<const D: usize>(&mut self, best: usize, features: &mut [f64]) {
        const CANDIDATES: usize = 8;
        let k = self.k;
        let theta: [f64; D] = self.theta[..].try_into().expect("theta has d entries");
        self.on_slice(self.optimal_reward, &mut features[best * D..(best + 1) * D]);
        self.means[best] = self.optimal_reward;
        let (lo, hi) = (-self.optimal_reward, self.optimal_reward - self.gap);
        let (mut row, mut filled) = (0, 0);
        while filled + 1 < k {
            let g = self.contexts.take(CANDIDATES * D);
            let mut sq = [0.0; CANDIDATES];
            let mut raw = [0.0; CANDIDATES];
            for ((v, s), r) in g.chunks_exact(D).zip(&mut sq).zip(&mut raw) {
                let v: &[f64; D] = v.try_into().expect("D normals");
                for j in 0..D {
                    *s += v[j] * v[j];
                    *r += v[j] * theta[j];
                }
            }
            let mut accepted = [0u8; CANDIDATES];
            let mut n = 0;
            for c in 0..CANDIDATES {
                accepted[n] = c as u8;
                n += usize::from(
                    (sq[c] >= 1e-300) & scaled_at_least(raw[c], lo, sq[c]) & !scaled_above(raw[c], hi, sq[c]),
                );
            }
            for &c in &accepted[..n] {
                if filled + 1 == k {
                    break;
                }
                if row == best {
                    row += 1;
                }
                let c = usize::from(c);
                let inv = 1.0 / sq[c].sqrt();
                let x: &mut [f64; D] = (&mut features[row * D..(row + 1) * D]).try_into().expect("row of d");
                let v: &[f64; D] = g[c * D..(c + 1) * D].try_into().expect("D normals");
                for j in 0..D {
                    x[j] = v[j] * inv;
                }
                self.means[row] = (raw[c] * inv).clamp(lo, hi);
                row += 1;
                filled += 1;
            }
        }
    }
}

/// raw >= b sqrt(sq), for sq > 0, compared through squares (branch-free:
/// the sign of `raw` is a coin flip the branch predictor cannot learn).
#[allow(clippy::needless_bitwise_bool)]
#[inline]
fn scaled_at_least(raw: f64, b: f64, sq: f64) -> bool {
    let (r2, b2) = (raw * raw, b * b * sq);
    if b <= 0.0 {
        (raw >= 0.0) | (r2 <= b2)
    } else {
        (raw > 0.0) & (r2 >= b2)
    }
}

/// raw > b sqrt(sq), for sq > 0, compared through squares (branch-free).
#[allow(clippy::needless_bitwise_bool)]
#[inline]
fn scaled_above(raw: f64, b: f64, sq: f64) -> bool {
    let (r2, b2) = (raw * raw, b * b * sq);
    if b >= 0.0 {
        (raw > 0.0) & (r2 > b2)
    } else {
        (raw >= 0.0) | (r2 < b2)
    }
}

/// A uniform unit vector in R^d.
fn unit_vector(rng: &mut SimulationRng, d: usize) -> Vec<f64> {
    loop {
        let v: Vec<f64> = (0..d).map(|_| rng.sample::<f64, _>(StandardNormal)).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 1e-12 {
            return v.into_iter().map(|x| x / n).collect();
        }
    }
}

impl Environment for ShariffSheffetEnv {
    fn dim(&self) -> usize {
        self.d
    }

    fn num_actions(&self) -> usize {
        self.k
    }

    fn next_round(&mut self, _t: u64, set: &mut DecisionSet) -> Result<()> {
        let (d, k) = (self.d, self.k);
        if set.k != k || set.d != d {
            *set = DecisionSet::zeros(k, d);
        }
        let best = self.contexts.scalar().random_range(0..k);
        macro_rules! fixed {
            ($($n:literal)*) => {
                match d {
                    $($n => {
                        self.fill_set::<$n>(best, &mut set.features);
                        return Ok(());
                    })*
                    _ => {}
                }
            };
        }
        fixed!(2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
        let features = &mut set.features;
        for i in 0..k {
            let x = &mut features[i * d..(i + 1) * d];
            self.means[i] = if i == best {
                self.on_slice(self.optimal_reward, x);
                self.optimal_reward
            } else {
                self.in_band(-self.optimal_reward, self.optimal_reward - self.gap, x)
            };
        }
        Ok(())
    }

    fn feedback(&mut self, index: usize) -> Result<Feedback<'_>> {
        let mut y = [0.0];
        self.shared_rewards(&[index], &mut y)?;
        Ok(Feedback::Reward(y[0]))
    }

    fn shared_rewards(&mut self, indices: &[usize], out: &mut [f64]) -> Result<()> {
        if let Some(&bad) = indices.iter().find(|&&i| i >= self.k) {
            return Err(Error::invalid("index", format!("must be < {}, got {bad}", self.k)));
        }
        // One draw per round whatever the model and however many learners,
        // so reward streams stay aligned across learners: a +-1 reward is
        // +1 when the shared uniform falls below (1 + mu)/2.
        match self.reward {
            RewardModel::PlusMinusOne => {
                let u = self.rewards.random::<f64>();
                for (y, &i) in out.iter_mut().zip(indices) {
                    *y = if u < 0.5 * (1.0 + self.means[i]) { 1.0 } else { -1.0 };
                }
            }
            RewardModel::Gaussian => {
                let z = self.rewards.sample::<f64, _>(StandardNormal);
                for (y, &i) in out.iter_mut().zip(indices) {
                    *y = self.means[i] + z;
                }
            }
        }
        Ok(())
    }

    fn regret(&self, index: usize) -> Option<f64> {
        self.means.get(index).map(|m| self.optimal_reward - m)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp, clippy::needless_range_loop)]
mod tests {
    use super::*;

    #[test]
    fn decision_sets_follow_appendix_d() {
        let mut env =
            ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(1)).unwrap();
        let theta = env.theta().to_vec();
        assert!((theta.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
        let mut best_positions = [0usize; 25];
        for t in 1..=2000 {
            let mut set = DecisionSet::default();
            env.next_round(t, &mut set).unwrap();
            let mut n_opt = 0;
            for i in 0..25 {
                let x = set.action(i);
                assert!((x.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-9);
                let dot: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
                assert!((dot - env.means()[i]).abs() < 1e-9);
                if (dot - 0.75).abs() < 1e-9 {
                    n_opt += 1;
                    best_positions[i] += 1;
                } else {
                    assert!((-0.75..=0.65).contains(&dot), "dot {dot}");
                }
            }
            assert_eq!(n_opt, 1);
        }
        // The optimal index is spread over all positions.
        assert!(best_positions.iter().all(|&c| c > 20));
    }

    /// sqrt(n) times the Kolmogorov–Smirnov distance of `sample` from `cdf`.
    fn ks(mut sample: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        sample.sort_by(f64::total_cmp);
        let n = sample.len() as f64;
        let d = sample
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let p = cdf(v);
                (p - i as f64 / n).abs().max(((i + 1) as f64 / n - p).abs())
            })
            .fold(0.0, f64::max);
        d * n.sqrt()
    }

    /// Decision sets follow App. D's law exactly (d = 5, so the marginal of
    /// <x, theta*> on the sphere has density proportional to 1 - t^2 and a
    /// coordinate of a uniform point of the 3-sphere orthogonal to theta*
    /// has density proportional to sqrt(1 - s^2)). KS tests at level 0.001
    /// (sqrt(n) D < 1.95) and 5-sd bounds.
    #[test]
    fn decision_sets_have_the_exact_distribution() {
        let (d, k, rounds) = (5usize, 25usize, 2000u64);
        let (lo, hi) = (-0.75, 0.65);
        let mut env =
            ShariffSheffetEnv::new(d, k, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(21)).unwrap();
        let theta = env.theta().to_vec();
        // A fixed unit direction e orthogonal to theta*.
        let mut e: Vec<f64> = (0..d).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
        let p0 = theta[0];
        for (v, t) in e.iter_mut().zip(&theta) {
            *v -= p0 * t;
        }
        let ne = e.iter().map(|v| v * v).sum::<f64>().sqrt();
        for v in &mut e {
            *v /= ne;
        }
        let (mut dots, mut sub_dirs, mut opt_dirs) = (Vec::new(), Vec::new(), Vec::new());
        let mut second = vec![0.0; d * d];
        let mut n_sub = 0.0;
        let mut set = DecisionSet::default();
        for t in 1..=rounds {
            env.next_round(t, &mut set).unwrap();
            for i in 0..k {
                let x = set.action(i);
                let dot: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
                // The part orthogonal to theta*, as a unit vector.
                let r = (1.0 - dot * dot).sqrt();
                let w: Vec<f64> = x.iter().zip(&theta).map(|(a, b)| (a - dot * b) / r).collect();
                let s: f64 = w.iter().zip(&e).map(|(a, b)| a * b).sum();
                if env.means()[i] == 0.75 {
                    opt_dirs.push(s);
                } else {
                    dots.push(dot);
                    sub_dirs.push(s);
                    n_sub += 1.0;
                    for a in 0..d {
                        for b in 0..d {
                            second[a * d + b] += w[a] * w[b];
                        }
                    }
                }
            }
        }
        let g = |t: f64| t - t * t * t / 3.0;
        let dot_cdf = |t: f64| ((g(t) - g(lo)) / (g(hi) - g(lo))).clamp(0.0, 1.0);
        let dir_cdf = |s: f64| {
            let s = s.clamp(-1.0, 1.0);
            0.5 + (s * (1.0 - s * s).sqrt() + s.asin()) / std::f64::consts::PI
        };
        assert!(ks(dots, dot_cdf) < 1.95, "<x, theta*> of suboptimal actions");
        assert!(ks(sub_dirs, dir_cdf) < 1.95, "direction of suboptimal actions");
        assert!(ks(opt_dirs, dir_cdf) < 1.95, "direction of optimal actions");
        // E[w w^T] = (I - theta theta^T) / (d - 1); |w_a w_b| <= 1/2 bounds each sd by 1/2.
        for a in 0..d {
            for b in 0..d {
                let want = (f64::from(u8::from(a == b)) - theta[a] * theta[b]) / (d - 1) as f64;
                let got = second[a * d + b] / n_sub;
                assert!((got - want).abs() < 5.0 * 0.5 / n_sub.sqrt(), "E[w w^T][{a}][{b}] = {got}, want {want}");
            }
        }
    }

    #[test]
    fn every_dimension_path_builds_valid_sets() {
        // d = 3 and 16: compile-time paths; d = 20 and 300: the general path.
        // d = 300: more normals per proposal than one block holds.
        for (d, k) in [(3usize, 9usize), (16, 40), (20, 7), (300, 3)] {
            let mut env =
                ShariffSheffetEnv::new(d, k, 0.2, 0.6, RewardModel::Gaussian, &SeedSequence::from_seed(d as u64))
                    .unwrap();
            let theta = env.theta().to_vec();
            let mut set = DecisionSet::default();
            for t in 1..=if d > 100 { 20 } else { 200 } {
                env.next_round(t, &mut set).unwrap();
                let mut n_opt = 0;
                for i in 0..k {
                    let x = set.action(i);
                    assert!((x.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-9, "d {d}");
                    let dot: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
                    assert!((dot - env.means()[i]).abs() < 1e-9, "d {d}");
                    if env.means()[i] == 0.6 {
                        n_opt += 1;
                    } else {
                        assert!((-0.6..=0.4).contains(&dot), "d {d}: dot {dot}");
                    }
                }
                assert_eq!(n_opt, 1, "d {d}");
            }
        }
    }

    #[test]
    fn band_test_through_squares_matches_the_quotient() {
        let mut rng = SeedSequence::from_seed(4).simulation_stream("environment/test");
        for _ in 0..100_000 {
            let raw = rng.random_range(-2.0..2.0);
            let sq: f64 = rng.random_range(1e-3..4.0);
            let b = rng.random_range(-1.0..1.0);
            let q = raw / sq.sqrt();
            // Away from the boundary (1e-9) both forms must agree.
            if (q - b).abs() > 1e-9 {
                assert_eq!(scaled_at_least(raw, b, sq), q >= b, "raw {raw} sq {sq} b {b}");
                assert_eq!(scaled_above(raw, b, sq), q > b, "raw {raw} sq {sq} b {b}");
            }
        }
    }

    #[test]
    fn same_seed_same_contexts_regardless_of_choices() {
        let seeds = SeedSequence::from_seed(9);
        let mut a = ShariffSheffetEnv::new(4, 16, 0.0, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let mut b = ShariffSheffetEnv::new(4, 16, 0.0, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        for t in 1..100 {
            let (mut sa, mut sb) = (DecisionSet::default(), DecisionSet::default());
            a.next_round(t, &mut sa).unwrap();
            b.next_round(t, &mut sb).unwrap();
            assert_eq!(sa, sb);
            a.feedback((t % 16) as usize).unwrap();
            b.feedback(((t * 7) % 16) as usize).unwrap();
        }
    }

    #[test]
    fn plus_minus_one_rewards_have_the_right_mean() {
        let mut env =
            ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(2)).unwrap();
        let n = 40_000;
        let (mut sum, mut mean_sum) = (0.0, 0.0);
        let mut set = DecisionSet::default();
        for t in 1..=n {
            env.next_round(t, &mut set).unwrap();
            let i = (t % 25) as usize;
            mean_sum += env.means()[i];
            match env.feedback(i).unwrap() {
                Feedback::Reward(y) => {
                    assert!(y == 1.0 || y == -1.0);
                    sum += y;
                }
                Feedback::Losses(_) => unreachable!(),
            }
        }
        // Each y - mu has variance <= 1: 5 sd bound on the mean.
        assert!(((sum - mean_sum) / n as f64).abs() < 5.0 / (n as f64).sqrt());
    }

    #[test]
    fn rejects_bad_parameters() {
        let s = SeedSequence::from_seed(0);
        assert!(ShariffSheffetEnv::new(1, 4, 0.1, 0.75, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 0, 0.1, 0.75, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 4, 1.6, 0.75, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 4, 0.1, 1.5, RewardModel::PlusMinusOne, &s).is_err());
        assert!(ShariffSheffetEnv::new(5, 4, f64::NAN, 0.75, RewardModel::PlusMinusOne, &s).is_err());
    }
}
