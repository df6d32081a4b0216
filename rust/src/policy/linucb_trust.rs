//! LinUCB whose statistics come from users' privatized reports: the local
//! model (Zheng, Cai, Huang, Li & Wang, NeurIPS 2020, "Locally
//! Differentially Private (Contextual) Bandits Learning", Sec. 5) and the
//! shuffle model (Chowdhury & Zhou, ICML 2022, "Shuffle Private Linear
//! Contextual Bandits": batched LinUCB with a shuffle protocol per batch).
//!
//! Each user t turns its (x_t, y_t) (bounds enforced first) into the report
//! vector z_t of m = d(d+1)/2 + d coordinates: the upper triangle of
//! x_t x_t^T (row by row) followed by y_t x_t. The server only ever sees
//! released sums of reports. Rounds are grouped in batches of `batch`
//! users (1 for the local model: every report is used at once); when a
//! batch is complete its released sum is added to the server's running
//! sum S_k (k = batches released so far) and the estimates are refreshed:
//!
//!   V = mat(S_k) + (lambda + 2 Upsilon_k) I,   u~ = vec(S_k),
//!   theta~ = V^{-1} u~,   Upsilon_k = `upsilon_rate` sqrt(k),
//!   beta = noise_sd sqrt(max(0, log_offset + ln det V - d ln rho_min))
//!          + S sqrt(rho_max) + `gamma_rate` sqrt(k) / sqrt(rho_min),
//!   rho_min = lambda + Upsilon_k,  rho_max = lambda + 3 Upsilon_k
//!
//! (Shariff & Sheffet Prop. 4 with the regularizer bounds of the summed
//! report noise, the shift 2 Upsilon of their Prop. 11 applied once to the
//! release). Every constant arrives from `dpbandits.privacy.linucb_trust`.
//!
//! How a batch's sum is released ([`ReportPrivatizer`]):
//! - `Exact`: no privacy (noise off; the equivalence tests);
//! - `Noisy`: every coordinate of each report is rounded to the noise's
//!   lattice and one draw added at the user (the local randomizer; with
//!   `batch` > 1 the shuffle model by amplification of that randomizer);
//! - `BitSum`: each coordinate of the batch's sum is one run of the
//!   shuffled scalar sum of Cheu, Joseph, Mao & Peng 2021 (Alg. 1) on the
//!   coordinate mapped from [-range, range] to [0, 1]: the user rounds it
//!   to {0..g} (one Bernoulli), the analyzer adds Binomial(b n, p) to the
//!   count of one-bits (its exact output law whatever the permutation, see
//!   `super::elimination`) and maps the estimate back.
//!
//! Decisions read only the released sums (post-processing).

use serde::{Deserialize, Serialize};

use super::elimination::{analyze_bits, round_to_bits, ShuffleSumCoefficients};
use super::linucb::{InputBounds, ReleasedEstimates, MAX_DIMENSION};
use super::{Learner, UcbLearner};
use crate::env::{DecisionRows, DecisionSet};
use crate::error::{check_finite, Error, Result};
use crate::noise::entropy::NoiseRng;
use crate::noise::lattice::MAX_EXACT_STEPS;
use crate::noise::NoiseSpec;
use crate::rng::SeedSequence;

/// How the users' reports reach the server (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ReportPrivatizer {
    Exact,
    Noisy { noise: NoiseSpec },
    BitSum { coefficients: ShuffleSumCoefficients, range: f64 },
}

/// The constants of beta (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrustRadius {
    pub noise_sd: f64,
    pub log_offset: f64,
    pub s: f64,
    pub gamma_rate: f64,
}

/// Everything a [`TrustLinUcb`] engine needs, as plain numbers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrustLinUcbConfig {
    pub d: usize,
    pub horizon: u64,
    /// Users per batch (>= 1).
    pub batch: u64,
    pub privatizer: ReportPrivatizer,
    /// lambda > 0.
    pub regularizer: f64,
    /// Upsilon_k = `upsilon_rate` sqrt(k) (>= 0).
    pub upsilon_rate: f64,
    pub radius: TrustRadius,
    pub bounds: InputBounds,
}

/// m = d(d+1)/2 + d coordinates of a report.
pub fn report_len(d: usize) -> usize {
    d * (d + 1) / 2 + d
}

impl TrustLinUcbConfig {
    /// Checks every field (errors name the field).
    pub fn validate(&self) -> Result<()> {
        let d = self.d;
        if d == 0 || d > MAX_DIMENSION {
            return Err(Error::invalid("d", format!("must be in 1..={MAX_DIMENSION}, got {d}")));
        }
        if self.horizon == 0 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        if self.batch == 0 || self.batch > self.horizon {
            return Err(Error::invalid("batch_size", format!("must be in 1..=horizon, got {}", self.batch)));
        }
        crate::error::check_positive("regularizer", self.regularizer)?;
        check_finite("upsilon", &[self.upsilon_rate])?;
        if self.upsilon_rate < 0.0 {
            return Err(Error::invalid("upsilon", "must be >= 0"));
        }
        let r = self.radius;
        check_finite("radius", &[r.noise_sd, r.log_offset, r.s, r.gamma_rate])?;
        if r.noise_sd < 0.0 || r.s < 0.0 || r.gamma_rate < 0.0 {
            return Err(Error::invalid("radius", "noise_sd, S and gamma must be >= 0"));
        }
        crate::error::check_positive("L", self.bounds.l)?;
        crate::error::check_positive("B_tilde", self.bounds.b_tilde)?;
        match self.privatizer {
            ReportPrivatizer::Exact => {}
            ReportPrivatizer::Noisy { noise } => {
                if matches!(noise, NoiseSpec::SymmetricGaussian { .. } | NoiseSpec::Wishart { .. }) {
                    return Err(Error::invalid("noise", "reports take i.i.d. scalar noise per coordinate"));
                }
                if let Some(s) = noise.lattice() {
                    if matches!(s.kind(), crate::noise::SecureKind::SymmetricGaussian { .. }) {
                        return Err(Error::invalid("noise", "reports take i.i.d. scalar noise per coordinate"));
                    }
                }
                noise.validate(&[report_len(d)])?;
            }
            ReportPrivatizer::BitSum { coefficients, range } => {
                crate::error::check_positive("range", range)?;
                // Validates the constants and that b n fits 64 bits.
                coefficients.parameters(self.batch).map_err(|e| Error::invalid("shuffle_sum", e.to_string()))?;
            }
        }
        Ok(())
    }
}

impl super::LearnerFactory for TrustLinUcbConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(TrustLinUcb::new(*self, seeds)?))
    }
}

/// The engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrustLinUcb {
    config: TrustLinUcbConfig,
    /// S_k: the sum of the released batch sums (m coordinates).
    released: Vec<f64>,
    /// The current batch, held by the users / shuffler: privatized reports
    /// summed (`Noisy`, `Exact`) or counts of rounding one-bits (`BitSum`).
    pending: Vec<f64>,
    in_batch: u64,
    /// Batches released (k).
    batches: u64,
    t: u64,
    psd_failures: u64,
    /// Recorded rounds whose (x, y) the bounds policy clipped.
    clipped: u64,
    /// The last (V, u~) that factored, for the fallback (empty until one has).
    last_good_v: Vec<f64>,
    last_good_u: Vec<f64>,
    noise: NoiseRng,
    #[serde(skip)]
    work: Workspace,
}

/// Per-round buffers; `current` says the estimates match `released`.
#[derive(Clone, Debug, Default)]
struct Workspace {
    current: bool,
    est: ReleasedEstimates,
    beta: f64,
    report: ReportScratch,
}

/// One user's buffers: x after the bounds, the report z, its noise.
#[derive(Clone, Debug, Default)]
struct ReportScratch {
    x: Vec<f64>,
    z: Vec<f64>,
    drawn: Vec<f64>,
}

impl ReportScratch {
    fn new(d: usize) -> Self {
        let m = report_len(d);
        ReportScratch { x: vec![0.0; d], z: vec![0.0; m], drawn: vec![0.0; m] }
    }
}

impl TrustLinUcb {
    /// A fresh engine; noise from `seeds`' `"linucb_trust/noise"` stream.
    pub fn new(config: TrustLinUcbConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let m = report_len(config.d);
        Ok(TrustLinUcb {
            config,
            released: vec![0.0; m],
            pending: vec![0.0; m],
            in_batch: 0,
            batches: 0,
            t: 0,
            psd_failures: 0,
            clipped: 0,
            last_good_v: Vec::new(),
            last_good_u: Vec::new(),
            noise: NoiseRng::seeded(seeds.stream("linucb_trust/noise")),
            work: Workspace::default(),
        })
    }

    pub fn config(&self) -> &TrustLinUcbConfig {
        &self.config
    }

    /// Completed rounds (updates).
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Batches released so far (k).
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// Rounds whose V was not positive definite (the last one that was is used).
    pub fn psd_failures(&self) -> u64 {
        self.psd_failures
    }

    /// Recorded rounds whose (x, y) the bounds policy clipped.
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// S_k, the released sum of reports (what the server knows).
    pub fn released(&self) -> &[f64] {
        &self.released
    }

    /// Draws future noise from `seeds`.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.noise.reseed(seeds.stream("linucb_trust/noise"));
    }

    /// Privacy noise from the operating system from now on (secure mode).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        if self.config.privatizer == ReportPrivatizer::Exact {
            return Err(Error::invalid("secure", "the non-private learner draws no noise"));
        }
        self.noise.use_os_entropy()
    }

    pub fn os_entropy(&self) -> bool {
        self.noise.is_os()
    }

    /// Serialized state (generator included).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an engine written by [`TrustLinUcb::to_bytes`]; inconsistent
    /// buffers are refused.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let e: TrustLinUcb = crate::state::decode(bytes)?;
        e.config.validate().map_err(|err| Error::Decode(err.to_string()))?;
        let d = e.config.d;
        let m = report_len(d);
        let fallback_ok = (e.last_good_v.is_empty() && e.last_good_u.is_empty())
            || (e.last_good_v.len() == d * d && e.last_good_u.len() == d);
        // Rounds are whole batches plus the open one's reports, within the
        // horizon; the sums are finite.
        let rounds = e.batches.checked_mul(e.config.batch).and_then(|r| r.checked_add(e.in_batch));
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if e.released.len() != m
            || e.pending.len() != m
            || !fallback_ok
            || e.in_batch >= e.config.batch
            || rounds != Some(e.t)
            || e.t > e.config.horizon
            || e.clipped > e.t
            || !(finite(&e.released) && finite(&e.pending) && finite(&e.last_good_v) && finite(&e.last_good_u))
        {
            return Err(Error::Decode("inconsistent TrustLinUCB state".into()));
        }
        Ok(e)
    }

    fn ensure_workspace(&mut self) {
        let d = self.config.d;
        if self.work.report.x.len() != d {
            self.work =
                Workspace { current: false, est: ReleasedEstimates::new(d), beta: 0.0, report: ReportScratch::new(d) };
        }
    }

    /// theta~, beta and V^{-1}'s factor from S_k (only when S_k changed).
    fn refresh(&mut self) {
        self.ensure_workspace();
        if self.work.current {
            return;
        }
        let d = self.config.d;
        let k = self.batches as f64;
        let upsilon = self.config.upsilon_rate * k.sqrt();
        let shift = self.config.regularizer + 2.0 * upsilon;
        let w = &mut self.work;
        let v = &mut w.est.v;
        let mut pos = 0;
        for i in 0..d {
            for j in i..d {
                v[i * d + j] = self.released[pos];
                v[j * d + i] = self.released[pos];
                pos += 1;
            }
            v[i * d + i] += shift;
        }
        w.est.u.copy_from_slice(&self.released[pos..pos + d]);
        if !w.est.factor(&mut self.last_good_v, &mut self.last_good_u, shift) {
            self.psd_failures += 1;
        }
        let r = self.config.radius;
        let rho_min = self.config.regularizer + upsilon;
        let rho_max = self.config.regularizer + 3.0 * upsilon;
        let log_term = (r.log_offset + w.est.log_det() - d as f64 * rho_min.ln()).max(0.0);
        w.beta = r.noise_sd * log_term.sqrt() + r.s * rho_max.sqrt() + r.gamma_rate * k.sqrt() / rho_min.sqrt();
        w.current = true;
    }

    fn check_budget(&self) -> Result<()> {
        if self.t >= self.config.horizon {
            return Err(Error::State(format!(
                "the horizon of {} rounds is reached; the noise was calibrated for it",
                self.config.horizon
            )));
        }
        Ok(())
    }

    /// UCB of every action of `set`, in order (for inspection).
    pub fn ucb(&mut self, set: &DecisionSet) -> Result<Vec<f64>> {
        Ok(UcbLearner::scores(self, set.rows())?.to_vec())
    }

    /// The policy the next selection follows, from the released sums only:
    /// the regularised released (V, u~) (or the pair the round falls back
    /// to) and beta of the current batch.
    pub fn policy(&mut self) -> Result<super::linear_policy::LinearPolicy> {
        self.refresh();
        let (v, u) = self.work.est.released_pair();
        super::linear_policy::LinearPolicy::new(
            self.config.d,
            self.work.beta,
            super::linear_policy::PolicyForm::Released { v, u },
        )
    }

    /// (theta~, beta) of the current round.
    pub fn estimates(&mut self) -> (Vec<f64>, f64) {
        self.refresh();
        (self.work.est.theta().to_vec(), self.work.beta)
    }

    /// User t's side: bounds, report, privatizer; then the server's side
    /// when the batch is complete.
    pub fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        let d = self.config.d;
        if x.len() != d {
            return Err(Error::invalid("x", format!("expected {d} entries, got {}", x.len())));
        }
        self.check_budget()?;
        self.ensure_workspace();
        // A batch of one report released as it is (the local model) goes
        // straight into S_k: the same sum without the pending buffer.
        let direct = self.config.batch == 1 && !matches!(self.config.privatizer, ReportPrivatizer::BitSum { .. });
        let into = if direct { &mut self.released } else { &mut self.pending };
        let clipped = privatize(&self.config, &mut self.noise, x, y, &mut self.work.report, into)?;
        self.clipped += u64::from(clipped);
        self.t += 1;
        self.in_batch += 1;
        if self.in_batch == self.config.batch {
            if !direct {
                analyze(&self.config, &mut self.noise, &self.pending, &mut self.released)?;
                self.pending.fill(0.0);
            }
            self.in_batch = 0;
            self.batches += 1;
            self.work.current = false;
        }
        Ok(())
    }

    /// `count` independent runs of one user's randomizer on (x, y)
    /// (row-major `count` x m; for `BitSum` the rounded counts), drawn
    /// from this engine's noise generator by the code path of
    /// [`TrustLinUcb::observe`] (for audits; the engine's statistics are
    /// untouched).
    pub fn report_runs(&mut self, x: &[f64], y: f64, count: usize) -> Result<Vec<f64>> {
        let d = self.config.d;
        if x.len() != d {
            return Err(Error::invalid("x", format!("expected {d} entries, got {}", x.len())));
        }
        let m = report_len(d);
        let mut out = crate::error::try_with_capacity::<f64>("count", count.saturating_mul(m))?;
        out.resize(count * m, 0.0);
        let mut scratch = ReportScratch::new(d);
        for row in out.chunks_mut(m) {
            privatize(&self.config, &mut self.noise, x, y, &mut scratch, row)?;
        }
        Ok(out)
    }

    /// `count` independent runs of a whole batch: users (rows of `xs`,
    /// row-major n x d, with rewards `ys`) through the randomizer, the
    /// shuffler and the analyzer; returns the released sums (`count` x m).
    /// n must be the batch size (the protocol's constants depend on it).
    pub fn batch_release_runs(&mut self, xs: &[f64], ys: &[f64], count: usize) -> Result<Vec<f64>> {
        let d = self.config.d;
        let n = ys.len();
        if xs.len() != n * d || n as u64 != self.config.batch {
            return Err(Error::invalid(
                "xs",
                format!("need batch_size = {} users of d = {d} features and one reward each", self.config.batch),
            ));
        }
        let m = report_len(d);
        let mut out = crate::error::try_with_capacity::<f64>("count", count.saturating_mul(m))?;
        out.resize(count * m, 0.0);
        let (mut scratch, mut pending) = (ReportScratch::new(d), vec![0.0; m]);
        for row in out.chunks_mut(m) {
            pending.fill(0.0);
            for (x, &y) in xs.chunks(d).zip(ys) {
                privatize(&self.config, &mut self.noise, x, y, &mut scratch, &mut pending)?;
            }
            analyze(&self.config, &mut self.noise, &pending, row)?;
        }
        Ok(out)
    }
}

/// One user's randomizer: bounds on (x, y), the report z, its privatized
/// form added into `out`; true when the bounds policy clipped (x, y).
fn privatize(
    config: &TrustLinUcbConfig,
    noise: &mut NoiseRng,
    x: &[f64],
    y: f64,
    scratch: &mut ReportScratch,
    out: &mut [f64],
) -> Result<bool> {
    let d = config.d;
    let ReportScratch { x: xb, z, drawn } = scratch;
    let mut y = y;
    xb.copy_from_slice(x);
    let clipped = config.bounds.enforce(xb, &mut y)?;
    let (mut upper, yx) = z.split_at_mut(report_len(d) - d);
    for (i, &xi) in xb.iter().enumerate() {
        let (row, rest) = std::mem::take(&mut upper).split_at_mut(d - i);
        for (zij, &xj) in row.iter_mut().zip(&xb[i..]) {
            *zij = xi * xj;
        }
        upper = rest;
    }
    for (zi, &xi) in yx.iter_mut().zip(xb.iter()) {
        *zi = y * xi;
    }
    match config.privatizer {
        ReportPrivatizer::Exact => {
            for (p, v) in out.iter_mut().zip(z.iter()) {
                *p += v;
            }
        }
        ReportPrivatizer::Noisy { noise: spec } => {
            // On a lattice the report enters rounded, so sums of reports
            // are exact lattice values (a no-op for floating-point noise).
            let limit = MAX_EXACT_STEPS / 4.0 / config.horizon as f64;
            spec.round_input("x", z, limit)?;
            // The whole report's noise in one call: one sampler lookup per
            // report, not per coordinate (the same draws, in the same order).
            spec.sample_into(noise.source()?, 0, drawn);
            for ((p, v), e) in out.iter_mut().zip(z.iter()).zip(drawn.iter()) {
                *p += v + e;
            }
        }
        ReportPrivatizer::BitSum { coefficients, range } => {
            let g = coefficients.rounding_levels(config.batch);
            let rng = noise.source()?;
            for (p, v) in out.iter_mut().zip(z.iter()) {
                *p += round_to_bits((v + range) / (2.0 * range), g, rng) as f64;
            }
        }
    }
    Ok(clipped)
}

/// The analyzer: the released sum of a batch whose (privatized) reports
/// sum to `pending`, added into `out`.
fn analyze(config: &TrustLinUcbConfig, noise: &mut NoiseRng, pending: &[f64], out: &mut [f64]) -> Result<()> {
    match config.privatizer {
        ReportPrivatizer::Exact | ReportPrivatizer::Noisy { .. } => {
            for (s, p) in out.iter_mut().zip(pending) {
                *s += p;
            }
        }
        ReportPrivatizer::BitSum { coefficients, range } => {
            let n = config.batch;
            let params = coefficients.parameters(n)?;
            let rng = noise.source()?;
            for (s, p) in out.iter_mut().zip(pending) {
                let sum01 = analyze_bits(*p as u64, n, &params, rng)?;
                // [0, 1] back to [-range, range]: z = 2 range v - range.
                *s += 2.0 * range * sum01 - range * n as f64;
            }
        }
    }
    Ok(())
}

impl UcbLearner for TrustLinUcb {
    fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        super::check_decision_set(set, self.config.d)?;
        self.check_budget()?;
        self.refresh();
        Ok(self.work.est.score(set, self.work.beta, None))
    }

    fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        TrustLinUcb::observe(self, x, y)
    }

    fn use_os_entropy(&mut self) -> Result<()> {
        TrustLinUcb::use_os_entropy(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Environment, RewardModel, ShariffSheffetEnv};
    use crate::policy::linucb::{BoundsPolicy, LinUcb, LinUcbConfig, Radius, StatisticsConfig};

    fn bounds() -> InputBounds {
        InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip }
    }

    fn config(d: usize, horizon: u64, batch: u64, privatizer: ReportPrivatizer) -> TrustLinUcbConfig {
        TrustLinUcbConfig {
            d,
            horizon,
            batch,
            privatizer,
            regularizer: 1.0,
            upsilon_rate: 0.0,
            radius: TrustRadius {
                noise_sd: 1.0,
                log_offset: 2.0 * (2.0 * horizon as f64).ln(),
                s: 1.0,
                gamma_rate: 0.0,
            },
            bounds: bounds(),
        }
    }

    #[test]
    fn noise_off_batch_one_plays_as_exact_linucb() {
        let (d, n) = (5, 3000);
        let seeds = SeedSequence::from_seed(11);
        let lin = LinUcbConfig {
            d,
            horizon: n,
            statistics: StatisticsConfig::Exact { regularizer: 1.0, refactor_every: 64 },
            // log det V - d ln 1: the same beta as TrustRadius above.
            radius: Radius::LogDet { noise_sd: 1.0, log_offset: 2.0 * (2.0 * n as f64).ln(), offset: 1.0 },
            bounds: bounds(),
        };
        let mut exact = LinUcb::new(lin, &seeds).unwrap();
        let mut trust = TrustLinUcb::new(config(d, n, 1, ReportPrivatizer::Exact), &seeds).unwrap();
        let mut env = ShariffSheffetEnv::new(d, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        crate::policy::assert_same_play(&mut exact, &mut trust, &mut env, 1..=n, false);
    }

    #[test]
    fn batches_release_only_when_complete() {
        let seeds = SeedSequence::from_seed(12);
        let mut e = TrustLinUcb::new(config(2, 10, 3, ReportPrivatizer::Exact), &seeds).unwrap();
        e.observe(&[0.6, 0.8], 1.0).unwrap();
        e.observe(&[1.0, 0.0], -0.5).unwrap();
        assert_eq!(e.released(), &[0.0; 5]);
        e.observe(&[0.0, 1.0], 0.5).unwrap();
        // x1^2, x1 x2, x2^2, y x1, y x2 summed over the three users.
        let want = [0.36 + 1.0, 0.48, 0.64 + 1.0, 0.6 - 0.5, 0.8 + 0.5];
        for (a, b) in e.released().iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        assert_eq!(e.batches(), 1);
    }

    #[test]
    fn bit_sum_release_is_unbiased_with_the_protocol_variance() {
        // One coordinate's released sum minus the true sum, over many
        // batches: mean 0, variance <= (2 range)^2 (b n p (1-p) + n/4) / g^2.
        let coefficients = ShuffleSumCoefficients { g_sqrt_n: 2.0, g_min: 4.0, bits: 40.0, ones: 20.0 };
        let n = 50;
        let p = coefficients.parameters(n).unwrap();
        let priv_ = ReportPrivatizer::BitSum { coefficients, range: 1.0 };
        let seeds = SeedSequence::from_seed(13);
        let mut e = TrustLinUcb::new(config(1, 200_000, n, priv_), &seeds).unwrap();
        let reps = 2000u32;
        let (mut s1, mut s2) = (0.0, 0.0);
        let mut prev = 0.0;
        for _ in 0..reps {
            for _ in 0..n {
                e.observe(&[0.3], 0.5).unwrap();
            }
            // Coordinate 0 is x^2 = 0.09 per user.
            let err = e.released()[0] - prev - 0.09 * n as f64;
            prev = e.released()[0];
            s1 += err;
            s2 += err * err;
        }
        let mean = s1 / f64::from(reps);
        let var = s2 / f64::from(reps) - mean * mean;
        let bound = 4.0 * ((p.b * n) as f64 * p.p * (1.0 - p.p) + n as f64 / 4.0) / (p.g * p.g) as f64;
        let noise_var = 4.0 * (p.b * n) as f64 * p.p * (1.0 - p.p) / (p.g * p.g) as f64;
        assert!(mean.abs() < 5.0 * (bound / f64::from(reps)).sqrt(), "mean {mean}");
        assert!(var > 0.8 * noise_var && var < 1.2 * bound, "var {var}, noise {noise_var}, bound {bound}");
    }

    #[test]
    fn state_round_trips_mid_batch_and_bad_input_is_named() {
        let seeds = SeedSequence::from_seed(14);
        let noise = NoiseSpec::Gaussian { sigma: 0.5 }.on_lattice(20).unwrap();
        let mut a = TrustLinUcb::new(config(3, 100, 4, ReportPrivatizer::Noisy { noise }), &seeds).unwrap();
        let mut env = ShariffSheffetEnv::new(3, 5, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let mut set = DecisionSet::default();
        for t in 1..=10 {
            env.next_round(t, &mut set).unwrap();
            let i = a.select(&set).unwrap();
            a.update(&set, i, env.feedback(i).unwrap()).unwrap();
        }
        let mut b = TrustLinUcb::from_bytes(&a.to_bytes()).unwrap();
        crate::policy::assert_same_play(&mut a, &mut b, &mut env, 11..=60, true);
        // Released sums of lattice reports are lattice values.
        let step = 2f64.powi(-20);
        assert!(a.released().iter().all(|v| (v / step).fract() == 0.0));
        let err = TrustLinUcb::new(config(3, 10, 0, ReportPrivatizer::Exact), &seeds).unwrap_err();
        assert!(err.to_string().contains("batch_size"), "{err}");
        let mut c = config(3, 10, 1, ReportPrivatizer::Exact);
        c.regularizer = 0.0;
        assert!(TrustLinUcb::new(c, &seeds).unwrap_err().to_string().contains("regularizer"));
        assert!(a.observe(&[1.0, 0.0], 0.5).unwrap_err().to_string().contains('x'));
    }
}
