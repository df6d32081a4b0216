//! Batched, information-weighted private logistic regression for
//! generalized linear (logistic) contextual bandits: the engine behind
//! `dpbandits.ReweightedLogisticUCB`, `dpbandits.JointDPReweightedLogisticUCB`
//! and `dpbandits.LocalDPReweightedLogisticUCB` (after Chen, Li, Rakhlin &
//! Simchi-Levi, arXiv 2502.13115, 2025; the construction, its privacy
//! proof and what is reconstructed are in
//! `python/dpbandits/privacy/reweighted_glm.py`).
//!
//! Rounds are cut into epochs of n_0, 2 n_0, ... recorded rewards. Epoch k
//! plays the UCB argmax <theta_k, x> + beta_k ||x||_{Lambda_k^-1} of one
//! released estimate, fixed for the epoch. With H_k = L L^T (released),
//! gamma_k = c d / n_k and the pilot theta_k, the row x with reward
//! y in [0, 1] gets p = mu(<x, theta_k>), q = 4 p (1 - p) in (0, 1], the
//! weight w = min(1, gamma_k / ||L^-1 x||^2) and u = sqrt(w / gamma_k) L^-1 x
//! (||u|| <= 1); it adds (upper triangle of q u u^T, sqrt(w) (y - p) u) to
//! the epoch's sums. Joint model: the sums are released once at the end of
//! the epoch with i.i.d. noise on every entry. Local model: each row's
//! contribution is released (noised) on its own and the epoch's release is
//! the sum of the reports. From the release: V = gamma A + rho I (rho =
//! gamma (c_r + op)), the
//! Newton step theta_{k+1} = Pi_S(theta_k + 4 L^-T V^-1 sqrt(gamma) b) (Pi_S
//! the projection on the ball of radius S), the Fisher information
//! Lambda_{k+1} = L V L^T / 4 and H_{k+1} = 2 L V L^T. Decisions read only
//! released values; noise and confidence constants are plain numbers from
//! the privacy layer.

use serde::{Deserialize, Serialize};

use super::linear_policy::{LinearPolicy, PolicyForm};
use super::logistic::logistic;
use super::{Learner, PreReleaseChoice, UcbLearner};
use crate::env::DecisionRows;
use crate::error::{all_finite, check_positive, Error, Result};
use crate::linalg::{backward_substitute, cholesky, forward_substitute};
use crate::noise::entropy::NoiseRng;
use crate::noise::lattice::MAX_EXACT_STEPS;
use crate::noise::{NoiseSpec, SecureKind};
use crate::rng::SeedSequence;

/// Largest dimension accepted (the statistic has d (d + 1) / 2 + d entries).
pub const MAX_DIM: usize = 1024;

/// Where the noise is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TrustModel {
    /// Once on each epoch's sums (joint DP; also the noise-free reference).
    Joint,
    /// On each row's contribution, before it is summed (local DP).
    Local,
}

/// Plain-number configuration of [`ReweightedGlm`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReweightedGlmConfig {
    pub d: usize,
    pub horizon: u64,
    /// n_0: epoch k has n_0 2^k recorded rewards.
    pub first_epoch: u64,
    /// c in gamma_k = c d / n_k.
    pub leverage: f64,
    pub model: TrustModel,
    /// Noise on every entry of a release (joint) or of a report (local).
    pub noise: NoiseSpec,
    /// Operator-norm bound of one noise matrix (normalized units); local:
    /// of one report's (the engine multiplies by sqrt(n_k)).
    pub op_bound: f64,
    /// Euclidean-norm bound of one noise vector (as `op_bound`).
    pub chi_bound: f64,
    /// c_r: the whitened ridge in units of gamma_k.
    pub ridge: f64,
    /// chi_d(alpha'): the reward-noise part of beta.
    pub reward_chi: f64,
    /// S >= ||theta*|| (the projection radius).
    pub s: f64,
    pub beta_scale: f64,
    /// L >= ||x||; rewards lie in [0, 1]. Inputs outside are clipped or refused.
    pub l: f64,
    pub clip: bool,
}

impl ReweightedGlmConfig {
    /// Entries of one epoch's statistic.
    pub fn stat_len(&self) -> usize {
        self.d * (self.d + 1) / 2 + self.d
    }

    fn validate(&self) -> Result<()> {
        if self.d < 1 || self.d > MAX_DIM {
            return Err(Error::invalid("d", format!("must lie in [1, {MAX_DIM}], got {}", self.d)));
        }
        if self.horizon < 1 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        if self.first_epoch < 1 || self.first_epoch > self.horizon {
            return Err(Error::invalid(
                "first_epoch",
                format!("must lie in [1, horizon = {}], got {}", self.horizon, self.first_epoch),
            ));
        }
        for (name, v) in [
            ("leverage", self.leverage),
            ("ridge", self.ridge),
            ("s", self.s),
            ("beta_scale", self.beta_scale),
            ("l", self.l),
        ] {
            check_positive(name, v)?;
        }
        for (name, v) in [("op_bound", self.op_bound), ("chi_bound", self.chi_bound), ("reward_chi", self.reward_chi)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::invalid(name, format!("must be finite and >= 0, got {v}")));
            }
        }
        let gaussian = match self.noise {
            NoiseSpec::Zero | NoiseSpec::Gaussian { .. } => true,
            NoiseSpec::Lattice(s) => matches!(s.kind(), SecureKind::Gaussian { .. }),
            _ => false,
        };
        if !gaussian {
            return Err(Error::invalid("noise", "must be zero, Gaussian or lattice Gaussian"));
        }
        self.noise.validate(&[self.stat_len()])
    }

    /// Largest step count of one input entry on the lattice (sums of
    /// `horizon` entries, plus noise, stay exact in f64).
    fn lattice_limit(&self) -> f64 {
        MAX_EXACT_STEPS / 4.0 / self.horizon as f64
    }
}

impl super::LearnerFactory for ReweightedGlmConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(ReweightedGlm::new(*self, seeds)?))
    }
}

/// Factors rebuilt from the state (not serialized).
#[derive(Clone, Debug, Default)]
struct Factors {
    /// Cholesky factor of H (lower, row-major).
    h: Vec<f64>,
    scratch: Vec<f64>,
    row: Vec<f64>,
    noise: Vec<f64>,
}

/// The batched information-weighted private logistic-regression engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReweightedGlm {
    config: ReweightedGlmConfig,
    epoch: u32,
    count: u64,
    t: u64,
    /// Whitening matrix H_k (d x d).
    h: Vec<f64>,
    /// The pilot theta_k (released), the epoch's beta_k and Lambda_k.
    theta: Vec<f64>,
    beta: f64,
    lam: Vec<f64>,
    policy: LinearPolicy,
    /// The epoch's sums (exact lattice sums; local: of noised reports).
    sums: Vec<f64>,
    /// The last released statistic (empty before the first release).
    release: Vec<f64>,
    releases: u64,
    psd_failures: u64,
    clipped: u64,
    noise_rng: NoiseRng,
    /// The uniform choice among the rows before the first release (its
    /// own stream: the noise generator is not read).
    pre_release: PreReleaseChoice,
    #[serde(skip)]
    work: Factors,
}

const STATE_VERSION: u8 = 2;

impl ReweightedGlm {
    /// A fresh engine; noise from `seeds`' `"glm/noise"` stream.
    pub fn new(config: ReweightedGlmConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let d = config.d;
        let mut h = vec![0.0; d * d];
        let mut lam = vec![0.0; d * d];
        // Before any release: H_0 = (n_0 / d) L^2 I, Lambda_0 = I, theta_0 = 0.
        let h0 = config.first_epoch as f64 / d as f64 * config.l * config.l;
        for i in 0..d {
            h[i * d + i] = h0;
            lam[i * d + i] = 1.0;
        }
        let policy = LinearPolicy::new(d, 1.0, PolicyForm::Released { v: lam.clone(), u: vec![0.0; d] })?;
        let mut e = ReweightedGlm {
            config,
            epoch: 0,
            count: 0,
            t: 0,
            h,
            theta: vec![0.0; d],
            beta: 1.0,
            lam,
            policy,
            sums: vec![0.0; config.stat_len()],
            release: Vec::new(),
            releases: 0,
            psd_failures: 0,
            clipped: 0,
            noise_rng: NoiseRng::seeded(seeds.stream("glm/noise")),
            pre_release: PreReleaseChoice::new(seeds, "glm/pre_release_choice"),
            work: Factors::default(),
        };
        e.refactor()?;
        Ok(e)
    }

    fn refactor(&mut self) -> Result<()> {
        let (d, m) = (self.config.d, self.config.stat_len());
        self.work = Factors { h: cholesky(&self.h, d)?, scratch: vec![0.0; d], row: vec![0.0; m], noise: vec![0.0; m] };
        Ok(())
    }

    pub fn config(&self) -> &ReweightedGlmConfig {
        &self.config
    }

    pub fn t(&self) -> u64 {
        self.t
    }

    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    pub fn releases(&self) -> u64 {
        self.releases
    }

    pub fn psd_failures(&self) -> u64 {
        self.psd_failures
    }

    /// Length n_k of the current epoch.
    pub fn epoch_length(&self) -> u64 {
        self.config.first_epoch.saturating_mul(1u64 << self.epoch.min(62))
    }

    /// gamma_k = c d / n_k.
    pub fn gamma(&self) -> f64 {
        self.config.leverage * self.config.d as f64 / self.epoch_length() as f64
    }

    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    pub fn beta(&self) -> f64 {
        self.beta
    }

    pub fn lambda(&self) -> &[f64] {
        &self.lam
    }

    /// The last released statistic.
    pub fn last_release(&self) -> &[f64] {
        &self.release
    }

    /// The current epoch's sums (tests of the statistic; never read by decisions).
    pub fn sums(&self) -> &[f64] {
        &self.sums
    }

    /// The normalized contribution of (x, y) into `out` (inputs within bounds).
    fn contribution(&mut self, x: &[f64], y: f64, out: &mut [f64]) {
        let d = self.config.d;
        let gamma = self.gamma();
        let z: f64 = x.iter().zip(&self.theta).map(|(a, b)| a * b).sum();
        let p = logistic(z);
        let q = (4.0 * p * (1.0 - p)).min(1.0);
        let a = &mut self.work.scratch;
        a.copy_from_slice(x);
        forward_substitute(&self.work.h, d, a);
        let lev: f64 = a.iter().map(|v| v * v).sum();
        let w = if lev > gamma { gamma / lev } else { 1.0 };
        let scale = (w / gamma).sqrt();
        for v in a.iter_mut() {
            *v *= scale;
        }
        let n2: f64 = a.iter().map(|v| v * v).sum();
        if n2 > 1.0 {
            let r = n2.sqrt();
            for v in a.iter_mut() {
                *v /= r;
            }
        }
        let mut at = 0;
        for i in 0..d {
            for j in i..d {
                out[at] = q * a[i] * a[j];
                at += 1;
            }
        }
        let s = w.sqrt() * (y - p);
        for i in 0..d {
            out[at + i] = s * a[i];
        }
    }

    /// Records the played row `x` and its reward `y` in [0, 1].
    pub fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        let d = self.config.d;
        if x.len() != d {
            return Err(Error::invalid("x", format!("must have d = {d} entries, got {}", x.len())));
        }
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is used up", self.config.horizon)));
        }
        if !all_finite(x) || !y.is_finite() {
            return Err(Error::invalid("x", "the row and the reward must be finite"));
        }
        let l = self.config.l;
        let mut row = x.to_vec();
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        let outside = norm > l * (1.0 + 1e-12) || !(0.0..=1.0).contains(&y);
        if outside && !self.config.clip {
            return Err(if norm > l * (1.0 + 1e-12) {
                Error::invalid("x", format!("||x|| = {norm} exceeds L = {l}"))
            } else {
                Error::invalid("reward", format!("must lie in [0, 1], got {y}"))
            });
        }
        if norm > l {
            for v in &mut row {
                *v *= l / norm;
            }
        }
        let y = y.clamp(0.0, 1.0);
        let mut c = std::mem::take(&mut self.work.row);
        self.contribution(&row, y, &mut c);
        if let Err(e) = self.config.noise.round_input("x", &mut c, self.config.lattice_limit()) {
            self.work.row = c;
            return Err(e);
        }
        if self.config.model == TrustModel::Local {
            // The user's report: the contribution plus its own noise.
            let mut z = std::mem::take(&mut self.work.noise);
            let source = match self.noise_rng.source() {
                Ok(s) => s,
                Err(e) => {
                    self.work.row = c;
                    self.work.noise = z;
                    return Err(e);
                }
            };
            self.config.noise.sample_into(source, 0, &mut z);
            c.iter_mut().zip(&z).for_each(|(c, z)| *c += z);
            self.work.noise = z;
        }
        self.sums.iter_mut().zip(&c).for_each(|(s, v)| *s += v);
        self.work.row = c;
        self.clipped += u64::from(outside);
        self.t += 1;
        self.count += 1;
        if self.count == self.epoch_length() {
            self.end_epoch()?;
        }
        Ok(())
    }

    /// Releases the epoch's statistic and computes the next epoch's UCB from it.
    fn end_epoch(&mut self) -> Result<()> {
        let mut release = self.sums.clone();
        if self.config.model == TrustModel::Joint {
            let mut z = vec![0.0; self.config.stat_len()];
            self.config.noise.sample_into(self.noise_rng.source()?, 0, &mut z);
            release.iter_mut().zip(&z).for_each(|(r, z)| *r += z);
        }
        let (gamma, n) = (self.gamma(), self.epoch_length());
        self.next_estimate(&release, gamma, n);
        self.release = release;
        self.releases += 1;
        self.sums.iter_mut().for_each(|s| *s = 0.0);
        self.count = 0;
        self.epoch += 1;
        Ok(())
    }

    /// Post-processing of one release: the Newton step, Lambda, beta and
    /// the next H. A V that is not positive definite keeps the previous
    /// estimate (H is doubled).
    fn next_estimate(&mut self, release: &[f64], gamma: f64, n: u64) {
        let d = self.config.d;
        let c = self.config;
        // Local reports: n noise draws in the sum.
        let spread = if c.model == TrustModel::Local { (n as f64).sqrt() } else { 1.0 };
        let (op, chi) = (c.op_bound * spread, c.chi_bound * spread);
        let mut a = vec![0.0; d * d];
        let mut at = 0;
        for i in 0..d {
            for j in i..d {
                a[i * d + j] = gamma * release[at];
                a[j * d + i] = gamma * release[at];
                at += 1;
            }
        }
        let b: Vec<f64> = release[at..].iter().map(|r| gamma.sqrt() * r).collect();
        // rho = gamma (c_r + op): on the event ||Z|| <= op, V >= gamma A + gamma c_r I
        // (a damped Newton step; the smallest ridge that factors V would leave
        // directions of V near zero, where the noise of b is amplified).
        let rho = gamma * (c.ridge + op);
        let mut v = a.clone();
        for i in 0..d {
            v[i * d + i] = a[i * d + i] + rho;
        }
        let factored = cholesky(&v, d).ok();
        let (Some(lv), true) = (factored, all_finite(&b)) else {
            self.psd_failures += 1;
            self.double_h();
            return;
        };
        // Newton step: s = V^-1 b, theta + 4 L^-T s, projected on ||theta|| <= S.
        let mut s = b.clone();
        forward_substitute(&lv, d, &mut s);
        backward_substitute(&lv, d, &mut s);
        let lh = &self.work.h;
        // L^-T s: solve L^T r = s.
        backward_substitute(lh, d, &mut s);
        let mut theta: Vec<f64> = self.theta.iter().zip(&s).map(|(t, r)| t + 4.0 * r).collect();
        let norm = theta.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > c.s {
            for x in &mut theta {
                *x *= c.s / norm;
            }
        }
        // L V L^T.
        let mut lvm = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                lvm[i * d + j] = (0..=i).map(|k| lh[i * d + k] * v[k * d + j]).sum();
            }
        }
        let mut full = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..=i {
                let x: f64 = (0..=j).map(|k| lvm[i * d + k] * lh[j * d + k]).sum();
                full[i * d + j] = x;
                full[j * d + i] = x;
            }
        }
        let lam: Vec<f64> = full.iter().map(|x| x / 4.0).collect();
        // bias = 2 ((gamma op + rho) S sqrt(||H||_F) / 4 + sqrt(gamma) chi) sqrt(||V^-1||_F).
        let h_frob = self.h.iter().map(|x| x * x).sum::<f64>().sqrt();
        let bias = 2.0
            * ((gamma * op + rho) * c.s * h_frob.sqrt() / 4.0 + gamma.sqrt() * chi)
            * frobenius_of_inverse(&lv, d).sqrt();
        let beta = c.beta_scale * (c.reward_chi + bias);
        let u: Vec<f64> = (0..d).map(|i| (0..d).map(|j| lam[i * d + j] * theta[j]).sum()).collect();
        let h: Vec<f64> = full.iter().map(|x| 2.0 * x).collect();
        let policy = LinearPolicy::new(d, beta, PolicyForm::Released { v: lam.clone(), u });
        let (Ok(lh2), Ok(policy), true) = (cholesky(&h, d), policy, beta.is_finite() && all_finite(&theta)) else {
            self.psd_failures += 1;
            self.double_h();
            return;
        };
        self.theta = theta;
        self.beta = beta;
        self.policy = policy;
        self.lam = lam;
        self.h = h;
        self.work.h = lh2;
    }

    /// H <- 2 H (a release that could not be used).
    fn double_h(&mut self) {
        self.h.iter_mut().for_each(|x| *x *= 2.0);
        if let Ok(l) = cholesky(&self.h, self.config.d) {
            self.work.h = l;
        }
    }

    /// `count` runs of the current epoch completed by the rows `xs`
    /// (row-major) with rewards `ys`, from this state: each run a copy fed
    /// the rows, its release collected (runs x m values); the noise stream
    /// advances from run to run (audits of the exact released values).
    pub fn release_runs(&mut self, xs: &[f64], ys: &[f64], count: usize) -> Result<Vec<f64>> {
        let (d, m) = (self.config.d, self.config.stat_len());
        if xs.len() != ys.len() * d || self.count + ys.len() as u64 != self.epoch_length() {
            return Err(Error::invalid("xs", "the rows must complete the current epoch"));
        }
        let mut out = crate::error::try_filled("count", count.saturating_mul(m), 0.0)?;
        for run in out.chunks_exact_mut(m) {
            let mut e = self.clone();
            for (x, &y) in xs.chunks_exact(d).zip(ys) {
                e.observe(x, y)?;
            }
            run.copy_from_slice(e.last_release());
            self.noise_rng = e.noise_rng;
        }
        Ok(out)
    }

    /// The row to play in a scored set of `k` rows before the first
    /// release: uniformly at random ([`PreReleaseChoice`]: the prior's
    /// scores tie up to the rounding of ||x||; the choice reads no data and
    /// costs no privacy); `None` once a release exists (the UCB's first
    /// maximum is played).
    pub fn pre_release_choice(&mut self, k: usize) -> Option<usize> {
        (self.releases == 0).then(|| self.pre_release.pick(k))
    }

    /// The UCB of every action of `set` (the epoch's released policy).
    pub fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        self.policy.scores(set)
    }

    pub fn policy(&self) -> LinearPolicy {
        self.policy.clone()
    }

    /// Draws future noise from a new root (`fork`); a secure stream stays secure.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.noise_rng.reseed(seeds.stream("glm/noise"));
        self.pre_release = PreReleaseChoice::new(seeds, "glm/pre_release_choice");
    }

    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.noise_rng.use_os_entropy()
    }

    pub fn os_entropy(&self) -> bool {
        self.noise_rng.is_os()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// The engine `to_bytes` wrote; refuses inconsistent state.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let body = match bytes.split_first() {
            Some((&STATE_VERSION, body)) => body,
            Some((v, _)) if *v < STATE_VERSION => {
                return Err(Error::Decode(format!(
                    "reweighted-GLM state version {v} was written before the engine chose uniformly among the rows \
                     before its first release (a stream that state lacks); this version reads version \
                     {STATE_VERSION}"
                )))
            }
            _ => return Err(Error::Decode("unknown reweighted-GLM state version".into())),
        };
        let mut e: ReweightedGlm = crate::state::decode(body)?;
        let c = e.config;
        c.validate().map_err(|err| Error::Decode(format!("invalid reweighted-GLM configuration: {err}")))?;
        let (d, m) = (c.d, c.stat_len());
        let consistent = e.h.len() == d * d
            && e.lam.len() == d * d
            && e.theta.len() == d
            && e.theta.iter().map(|x| x * x).sum::<f64>().sqrt() <= c.s * (1.0 + 1e-9)
            && e.sums.len() == m
            && (e.release.is_empty() || e.release.len() == m)
            && e.epoch < 63
            && e.count < e.epoch_length()
            && e.t <= c.horizon
            && e.clipped <= e.t
            && e.releases <= u64::from(e.epoch)
            && e.count <= e.t
            && e.policy.d() == d
            && e.beta.is_finite()
            && e.beta >= 0.0
            && all_finite(&e.h)
            && all_finite(&e.lam)
            && all_finite(&e.theta)
            && all_finite(&e.sums)
            && all_finite(&e.release);
        if !consistent {
            return Err(Error::Decode("inconsistent reweighted-GLM state".into()));
        }
        e.refactor().map_err(|_| Error::Decode("reweighted-GLM state: a matrix is not positive definite".into()))?;
        e.policy = LinearPolicy::new(d, e.policy.beta(), e.policy.form().clone())
            .map_err(|err| Error::Decode(format!("reweighted-GLM state: {err}")))?;
        Ok(e)
    }
}

/// ||V^-1||_F from the Cholesky factor of V.
fn frobenius_of_inverse(l: &[f64], d: usize) -> f64 {
    let mut total = 0.0;
    let mut col = vec![0.0; d];
    for j in 0..d {
        col.fill(0.0);
        col[j] = 1.0;
        forward_substitute(l, d, &mut col);
        backward_substitute(l, d, &mut col);
        total += col.iter().map(|v| v * v).sum::<f64>();
    }
    total.sqrt()
}

impl UcbLearner for ReweightedGlm {
    fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is used up", self.config.horizon)));
        }
        ReweightedGlm::scores(self, set)
    }

    fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        ReweightedGlm::observe(self, x, y)
    }

    fn use_os_entropy(&mut self) -> Result<()> {
        ReweightedGlm::use_os_entropy(self)
    }

    fn pre_release_choice(&mut self, k: usize) -> Option<usize> {
        ReweightedGlm::pre_release_choice(self, k)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // lattice sums are exact: equality is the test
mod tests {
    use super::*;
    use crate::env::{DecisionSet, Environment, LogisticContextualEnv};

    fn config(noise: NoiseSpec, model: TrustModel) -> ReweightedGlmConfig {
        ReweightedGlmConfig {
            d: 3,
            horizon: 40_000,
            first_epoch: 200,
            leverage: 4.0,
            model,
            noise,
            op_bound: 0.0,
            chi_bound: 0.0,
            ridge: 1.0,
            reward_chi: 1.0,
            s: 2.0,
            beta_scale: 1.0,
            l: 1.0,
            clip: true,
        }
    }

    #[test]
    fn first_release_is_one_weighted_newton_step_from_zero() {
        let mut e =
            ReweightedGlm::new(config(NoiseSpec::Zero, TrustModel::Joint), &SeedSequence::from_seed(1)).unwrap();
        let mut env = LogisticContextualEnv::new(3, 9, 0.1, 0.75, 2.0, &SeedSequence::from_seed(2)).unwrap();
        let mut set = DecisionSet::default();
        let h0 = 200.0 / 3.0;
        let gamma = 4.0 * 3.0 / 200.0;
        let (mut g, mut s) = ([0.0; 9], [0.0; 3]);
        for t in 1..=200 {
            env.next_round(t, &mut set).unwrap();
            let i = Learner::select(&mut e, &set).unwrap();
            let fb = env.feedback(i).unwrap();
            let crate::env::Feedback::Reward(y) = fb else { panic!() };
            let x = set.action(i).to_vec();
            let lev = x.iter().map(|v| v * v).sum::<f64>() / h0;
            let w = (gamma / lev).min(1.0);
            // theta = 0: p = 1/2, mu' = 1/4.
            for a in 0..3 {
                s[a] += w * (y - 0.5) * x[a];
                for b in 0..3 {
                    g[a * 3 + b] += 0.25 * w * x[a] * x[b];
                }
            }
            Learner::update(&mut e, &set, i, fb).unwrap();
        }
        assert_eq!(e.releases(), 1);
        // theta = (G_w + rho H_0 / 4)^-1 s_w with rho = gamma c_r, then projected.
        for a in 0..3 {
            g[a * 3 + a] += gamma * h0 / 4.0;
        }
        let l = cholesky(&g, 3).unwrap();
        let mut th = s.to_vec();
        forward_substitute(&l, 3, &mut th);
        backward_substitute(&l, 3, &mut th);
        let n = th.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 2.0 {
            for x in &mut th {
                *x *= 2.0 / n;
            }
        }
        for a in 0..3 {
            assert!((th[a] - e.theta()[a]).abs() < 1e-9, "{th:?} vs {:?}", e.theta());
        }
    }

    #[test]
    fn lattice_sums_are_exact_and_state_round_trips() {
        let lattice = NoiseSpec::Gaussian { sigma: 2.0 }.on_lattice(18).unwrap();
        for model in [TrustModel::Joint, TrustModel::Local] {
            let mut cfg = config(lattice, model);
            cfg.op_bound = 2.0 * 8.0;
            cfg.chi_bound = 2.0 * 3.0;
            let mut a = ReweightedGlm::new(cfg, &SeedSequence::from_seed(3)).unwrap();
            let mut env = LogisticContextualEnv::new(3, 9, 0.1, 0.75, 2.0, &SeedSequence::from_seed(4)).unwrap();
            let mut set = DecisionSet::default();
            for t in 1..=300 {
                env.next_round(t, &mut set).unwrap();
                let i = Learner::select(&mut a, &set).unwrap();
                let fb = env.feedback(i).unwrap();
                Learner::update(&mut a, &set, i, fb).unwrap();
                assert!(a.sums().iter().all(|s| (s * 2f64.powi(18)).fract() == 0.0));
            }
            assert_eq!(a.releases(), 1);
            assert!(a.last_release().iter().all(|s| (s * 2f64.powi(18)).fract() == 0.0));
            let mut b = ReweightedGlm::from_bytes(&a.to_bytes()).unwrap();
            for t in 301..=700 {
                env.next_round(t, &mut set).unwrap();
                let i = Learner::select(&mut a, &set).unwrap();
                assert_eq!(i, Learner::select(&mut b, &set).unwrap());
                let fb = env.feedback(i).unwrap();
                Learner::update(&mut a, &set, i, fb).unwrap();
                Learner::update(&mut b, &set, i, fb).unwrap();
            }
            assert_eq!(a.theta(), b.theta());
            let mut bad = a.clone();
            bad.count = bad.epoch_length();
            assert!(ReweightedGlm::from_bytes(&bad.to_bytes()).is_err());
            let mut bad = a.clone();
            bad.theta[0] = 10.0;
            assert!(ReweightedGlm::from_bytes(&bad.to_bytes()).is_err());
        }
        assert!(ReweightedGlm::from_bytes(&[1, 2, 3]).is_err());
        assert!(ReweightedGlm::from_bytes(&[]).is_err());
    }

    #[test]
    fn before_the_first_release_the_choice_is_uniform_then_the_ucb_argmax() {
        for model in [TrustModel::Joint, TrustModel::Local] {
            let cfg = ReweightedGlmConfig {
                first_epoch: 1800,
                horizon: 2500,
                ..config(NoiseSpec::Gaussian { sigma: 1.0 }, model)
            };
            let mut e = ReweightedGlm::new(cfg, &SeedSequence::from_seed(7)).unwrap();
            let mut env = LogisticContextualEnv::new(3, 9, 0.1, 0.75, 2.0, &SeedSequence::from_seed(8)).unwrap();
            let noise = |e: &ReweightedGlm| crate::state::encode(&e.noise_rng);
            let (before, after) =
                crate::policy::assert_uniform_before_release(&mut e, &mut env, 2500, |e| e.releases() > 0, noise);
            assert_eq!((before, after), (1800, 700));
        }
    }

    #[test]
    fn the_pre_release_stream_is_in_the_state_and_reseeded_with_the_noise() {
        let mut a = ReweightedGlm::new(
            config(NoiseSpec::Gaussian { sigma: 1.0 }, TrustModel::Joint),
            &SeedSequence::from_seed(9),
        )
        .unwrap();
        let mut env = LogisticContextualEnv::new(3, 9, 0.1, 0.75, 2.0, &SeedSequence::from_seed(10)).unwrap();
        let mut set = DecisionSet::default();
        env.next_round(1, &mut set).unwrap();
        let i = Learner::select(&mut a, &set).unwrap();
        let fb = env.feedback(i).unwrap();
        Learner::update(&mut a, &set, i, fb).unwrap();
        let mut b = ReweightedGlm::from_bytes(&a.to_bytes()).unwrap();
        let mut c = a.clone();
        c.reseed(&SeedSequence::from_seed(11));
        let (mut same, mut differ) = (true, false);
        for _ in 0..60 {
            let i = Learner::select(&mut a, &set).unwrap();
            same &= i == Learner::select(&mut b, &set).unwrap();
            differ |= i != Learner::select(&mut c, &set).unwrap();
        }
        assert!(same && differ);
        let mut old = a.to_bytes();
        old[0] = 1;
        let err = ReweightedGlm::from_bytes(&old).unwrap_err().to_string();
        assert!(err.contains("version 1") && err.contains("reads version 2"), "{err}");
    }

    #[test]
    fn noiseless_learner_finds_the_best_action() {
        let mut e =
            ReweightedGlm::new(config(NoiseSpec::Zero, TrustModel::Joint), &SeedSequence::from_seed(5)).unwrap();
        let mut env = LogisticContextualEnv::new(3, 9, 0.2, 0.75, 2.0, &SeedSequence::from_seed(6)).unwrap();
        let mut set = DecisionSet::default();
        let mut late = 0.0;
        for t in 1..=40_000 {
            env.next_round(t, &mut set).unwrap();
            let i = Learner::select(&mut e, &set).unwrap();
            if t > 36_000 {
                late += env.regret(i).unwrap();
            }
            let fb = env.feedback(i).unwrap();
            Learner::update(&mut e, &set, i, fb).unwrap();
        }
        // A uniformly random action loses about 0.3 a round here; the learner far less.
        assert!(late < 0.03 * 4000.0, "{late}");
    }
}
