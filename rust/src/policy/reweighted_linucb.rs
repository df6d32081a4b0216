//! Batched, information-weighted private regression for contextual linear
//! bandits: the engine behind `dpbandits.JointDPReweightedLinUCB` (after
//! Chen, Li, Rakhlin & Simchi-Levi, "Near-optimal private learning in
//! linear contextual bandits", arXiv 2502.13115, 2025; the construction is
//! documented, with what is reconstructed, in
//! `python/dpbandits/privacy/reweighted.py`).
//!
//! Rounds are cut into epochs of n_0, 2 n_0, 4 n_0, ... recorded rewards.
//! Throughout epoch k the learner plays the UCB of one released estimate,
//! argmax_x <theta_k, x> + beta_k ||x||_{Lambda_k^-1}, fixed for the epoch.
//! Each reward of epoch k enters one statistic: with H_k = L L^T the
//! whitening matrix of the epoch (released, from epoch k - 1) and
//! gamma_k = c d / n_k, the row x gets the weight w = min(1, gamma_k /
//! ||L^-1 x||^2), and u = sqrt(w / gamma_k) L^-1 x (||u|| <= 1) adds
//! (upper triangle of u u^T, sqrt(w) y u) to the epoch's sums. At the
//! epoch's end the sums are released once with i.i.d. noise on every entry
//! (one Gaussian mechanism per user: each reward enters one epoch), and
//! everything the next epoch uses is computed from the release: in
//! original coordinates G = L (gamma A) L^T and u = L sqrt(gamma) b, the
//! epoch's Lambda = G + rho I with the isotropic ridge rho = 2 N_b +
//! lambda_0 (N_b bounds the operator norm of the transformed noise), its
//! confidence radius (`next_estimate`), theta = Lambda^-1 u over the last
//! two epochs, and H_{k+1} = 2 (G + (N_b + lambda_0) I). Decisions read
//! only released values.
//! The noise and the confidence constants are plain numbers from the
//! privacy layer.

use serde::{Deserialize, Serialize};

use super::linear_policy::{LinearPolicy, PolicyForm};
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

/// Plain-number configuration of [`ReweightedLinUcb`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReweightedLinUcbConfig {
    pub d: usize,
    pub horizon: u64,
    /// Length n_0 of the first epoch (recorded rewards); epoch k has n_0 2^k.
    pub first_epoch: u64,
    /// c in gamma_k = c d / n_k, the largest weighted leverage of one row.
    pub leverage: f64,
    /// Noise on every entry of an epoch's (normalized) statistic: zero,
    /// Gaussian or lattice Gaussian.
    pub noise: NoiseSpec,
    /// Bound on the operator norm of the symmetric noise matrix (normalized
    /// units, probability 1 - alpha'); 0 without noise.
    pub op_bound: f64,
    /// Bound on the Euclidean norm of the vector noise (normalized units).
    pub chi_bound: f64,
    /// c_r: lambda_0 = c_r L^2, the ridge beyond twice the noise's operator-norm bound.
    pub ridge: f64,
    /// sigma_r chi_d(alpha'): the reward-noise part of beta.
    pub reward_chi: f64,
    /// S >= ||theta*||.
    pub s: f64,
    /// Factor on the theoretical radius (1: the radius of the analysis).
    pub beta_scale: f64,
    /// L >= ||x||, B >= |y|; inputs outside are clipped or refused.
    pub l: f64,
    pub b: f64,
    pub clip: bool,
}

impl ReweightedLinUcbConfig {
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
        if self.first_epoch < 1 || self.first_epoch > self.horizon.max(1) {
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
            ("b", self.b),
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

    /// Largest step count of one entry on the lattice: sums of `horizon`
    /// entries, plus noise, stay exact in f64.
    fn lattice_limit(&self) -> f64 {
        MAX_EXACT_STEPS / 4.0 / self.horizon as f64
    }
}

impl super::LearnerFactory for ReweightedLinUcbConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(ReweightedLinUcb::new(*self, seeds)?))
    }
}

/// Factors rebuilt from the state (not serialized).
#[derive(Clone, Debug, Default)]
struct Factors {
    /// Cholesky factor of H (lower, row-major).
    h: Vec<f64>,
    scratch: Vec<f64>,
    row: Vec<f64>,
}

/// The batched information-weighted private LinUCB engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReweightedLinUcb {
    config: ReweightedLinUcbConfig,
    /// Epoch index k and its recorded rewards so far.
    epoch: u32,
    count: u64,
    t: u64,
    /// Whitening matrix H_k (d x d).
    h: Vec<f64>,
    /// Released Lambda_k, theta_k, beta_k (the UCB of the epoch).
    lam: Vec<f64>,
    /// The last release's own Lambda, u = L b and confidence radius (empty before the first).
    prev_lam: Vec<f64>,
    prev_u: Vec<f64>,
    prev_bias: f64,
    theta: Vec<f64>,
    beta: f64,
    /// UCB_k(x) = <theta_k, x> + beta_k ||x||_{Lambda_k^-1}, from the releases.
    policy: LinearPolicy,
    /// The epoch's exact (lattice) sums.
    sums: Vec<f64>,
    /// The last released statistic (sums + noise), empty before the first release.
    release: Vec<f64>,
    releases: u64,
    psd_failures: u64,
    /// Recorded rounds whose (x, y) the bounds policy clipped.
    clipped: u64,
    noise_rng: NoiseRng,
    /// The uniform choice among the rows before the first release (its
    /// own stream: the noise generator is not read).
    pre_release: PreReleaseChoice,
    #[serde(skip)]
    work: Factors,
}

const STATE_VERSION: u8 = 3;

impl ReweightedLinUcb {
    /// A fresh engine; epoch noise from `seeds`' `"epoch_noise"` stream.
    pub fn new(config: ReweightedLinUcbConfig, seeds: &SeedSequence) -> Result<Self> {
        config.validate()?;
        let d = config.d;
        let mut h = vec![0.0; d * d];
        let mut lam = vec![0.0; d * d];
        // Before any release: H_0 = (n_0 / d) L^2 I, the Gram matrix of n_0
        // isotropic rows of norm L; Lambda_0 = I, theta_0 = 0.
        let h0 = config.first_epoch as f64 / d as f64 * config.l * config.l;
        for i in 0..d {
            h[i * d + i] = h0;
            lam[i * d + i] = 1.0;
        }
        let lam0 = lam.clone();
        let mut e = ReweightedLinUcb {
            config,
            epoch: 0,
            count: 0,
            t: 0,
            h,
            lam,
            prev_lam: Vec::new(),
            prev_u: Vec::new(),
            prev_bias: 0.0,
            theta: vec![0.0; d],
            beta: 1.0,
            policy: LinearPolicy::new(d, 1.0, PolicyForm::Released { v: lam0, u: vec![0.0; d] })?,
            sums: vec![0.0; config.stat_len()],
            release: Vec::new(),
            releases: 0,
            psd_failures: 0,
            clipped: 0,
            noise_rng: NoiseRng::seeded(seeds.stream("epoch_noise")),
            pre_release: PreReleaseChoice::new(seeds, "reweighted/pre_release_choice"),
            work: Factors::default(),
        };
        e.refactor()?;
        Ok(e)
    }

    fn refactor(&mut self) -> Result<()> {
        let d = self.config.d;
        self.work = Factors { h: cholesky(&self.h, d)?, scratch: vec![0.0; d], row: vec![0.0; self.config.stat_len()] };
        Ok(())
    }

    pub fn config(&self) -> &ReweightedLinUcbConfig {
        &self.config
    }

    /// Rewards recorded so far.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Recorded rounds whose (x, y) the bounds policy clipped (||x|| above
    /// L beyond rounding, or |y| above B).
    pub fn clipped_rewards(&self) -> u64 {
        self.clipped
    }

    /// Epochs released so far.
    pub fn releases(&self) -> u64 {
        self.releases
    }

    /// Releases whose V was not positive definite (the previous estimate kept).
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

    /// The current released estimate theta_k, beta_k and Lambda_k.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    pub fn beta(&self) -> f64 {
        self.beta
    }

    pub fn lambda(&self) -> &[f64] {
        &self.lam
    }

    /// The last released statistic (exact lattice values with lattice noise).
    pub fn last_release(&self) -> &[f64] {
        &self.release
    }

    /// The current epoch's exact sums (for tests of the statistic; never read by decisions).
    pub fn sums(&self) -> &[f64] {
        &self.sums
    }

    /// The normalized contribution (upper triangle of u u^T, sqrt(w) y u)
    /// of the row `x` with reward `y` in the current epoch, into `out`;
    /// returns w. Inputs must be within bounds.
    fn contribution(&mut self, x: &[f64], y: f64, out: &mut [f64]) -> f64 {
        let d = self.config.d;
        let gamma = self.gamma();
        let a = &mut self.work.scratch;
        a.copy_from_slice(x);
        forward_substitute(&self.work.h, d, a);
        let lev: f64 = a.iter().map(|v| v * v).sum();
        let w = if lev > gamma { gamma / lev } else { 1.0 };
        let scale = (w / gamma).sqrt();
        for v in a.iter_mut() {
            *v *= scale;
        }
        // ||u||^2 = w lev / gamma <= 1 up to rounding: renormalize the rare excess.
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
                out[at] = a[i] * a[j];
                at += 1;
            }
        }
        let sw = w.sqrt();
        for i in 0..d {
            out[at + i] = sw * y * a[i];
        }
        w
    }

    /// Records the played row `x` and its reward `y`.
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
        let mut row = x.to_vec();
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        let clipped = norm > self.config.l * (1.0 + 1e-12) || y.abs() > self.config.b;
        if norm > self.config.l {
            if !self.config.clip {
                return Err(Error::invalid("x", format!("||x|| = {norm} exceeds L = {}", self.config.l)));
            }
            for v in &mut row {
                *v *= self.config.l / norm;
            }
        }
        let b = self.config.b;
        let y = if y.abs() <= b {
            y
        } else if self.config.clip {
            y.clamp(-b, b)
        } else {
            return Err(Error::invalid("reward", format!("|y| = {} exceeds B = {b}", y.abs())));
        };
        let mut c = std::mem::take(&mut self.work.row);
        self.contribution(&row, y, &mut c);
        let rounded = self.config.noise.round_input("x", &mut c, self.config.lattice_limit());
        if let Err(e) = rounded {
            self.work.row = c;
            return Err(e);
        }
        for (s, v) in self.sums.iter_mut().zip(&c) {
            *s += v;
        }
        self.work.row = c;
        self.clipped += u64::from(clipped);
        self.t += 1;
        self.count += 1;
        if self.count == self.epoch_length() {
            self.end_epoch()?;
        }
        Ok(())
    }

    /// Releases the epoch's statistic and computes the next epoch's UCB from it.
    fn end_epoch(&mut self) -> Result<()> {
        let mut z = vec![0.0; self.config.stat_len()];
        self.config.noise.sample_into(self.noise_rng.source()?, 0, &mut z);
        let release: Vec<f64> = self.sums.iter().zip(&z).map(|(s, z)| s + z).collect();
        let gamma = self.gamma();
        self.next_estimate(&release, gamma);
        self.release = release;
        self.releases += 1;
        self.sums.iter_mut().for_each(|s| *s = 0.0);
        self.count = 0;
        self.epoch += 1;
        Ok(())
    }

    /// Post-processing of one release (`release`, the epoch's gamma): the
    /// epoch's estimate, its confidence radius, the UCB of the next epoch
    /// and the next H. A release whose matrices are not positive definite
    /// (off the event of the noise bounds) keeps the previous estimate (H is
    /// doubled).
    ///
    /// In original coordinates the release gives G = L (gamma A~) L^T =
    /// G_w + N and u = L sqrt(gamma) b~ = G_w theta* + S_w + n, where G_w
    /// and S_w = sum w x eta are the epoch's weighted Gram matrix and noise
    /// sum, N = gamma L Z L^T with ||N|| <= N_b = gamma op lmax(H) and
    /// n = sqrt(gamma) L z with ||n|| <= sqrt(gamma lmax(H)) chi_z. With the
    /// isotropic ridge rho = 2 N_b + lambda_0 (lambda_0 = c_r L^2),
    /// Lambda = G + rho I >= G_w + (N_b + lambda_0) I on that event, and
    /// Lambda (theta - theta*) = S_w + n - (N + rho I) theta*, so (fixed
    /// design within the epoch: its policy and weights are fixed at its
    /// start) ||theta - theta*||_Lambda <= sigma_r chi +
    /// (sqrt(gamma lmax H) chi_z + (N_b + rho) S) / sqrt(lmin Lambda).
    fn next_estimate(&mut self, release: &[f64], gamma: f64) {
        let d = self.config.d;
        let c = self.config;
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
        let lh = &self.work.h;
        // u = L b; G = L a L^T.
        let u: Vec<f64> = (0..d).map(|i| (0..=i).map(|k| lh[i * d + k] * b[k]).sum()).collect();
        let mut la = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                la[i * d + j] = (0..=i).map(|k| lh[i * d + k] * a[k * d + j]).sum();
            }
        }
        let mut g = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..=i {
                let s: f64 = (0..=j).map(|k| la[i * d + k] * lh[j * d + k]).sum();
                g[i * d + j] = s;
                g[j * d + i] = s;
            }
        }
        // Upper bounds lmax(H) <= min(||H||_F, ||H||_inf), 1 / lmin(Lambda) <= the same of Lambda^-1.
        let h_bound = norm_bound(&self.h, d);
        let n_bound = gamma * c.op_bound * h_bound;
        let lam0 = c.ridge * c.l * c.l;
        let rho = 2.0 * n_bound + lam0;
        let with_ridge = |r: f64| -> Vec<f64> {
            let mut m = g.clone();
            for i in 0..d {
                m[i * d + i] += r;
            }
            m
        };
        let lam = with_ridge(rho);
        // The next epoch (twice as long) is whitened by twice this epoch's
        // Gram estimate, G + (N_b + lambda_0) I >= G_w + lambda_0 I.
        let h: Vec<f64> = with_ridge(n_bound + lam0).iter().map(|x| 2.0 * x).collect();
        let (Ok(lv), Ok(lh2), true) = (cholesky(&lam, d), cholesky(&h, d), all_finite(&u)) else {
            self.psd_failures += 1;
            self.double_h();
            return;
        };
        let lmin_inv = inverse_norm_bound(&lv, d);
        let radius = c.reward_chi + ((gamma * h_bound).sqrt() * c.chi_bound + (n_bound + rho) * c.s) * lmin_inv.sqrt();
        // The UCB combines this release with the previous one (disjoint data:
        // post-processing): Lambda = Lambda_k + Lambda_{k-1}, theta = Lambda^-1
        // (u_k + u_{k-1}); since x^T (sum A_j)^-1 x is jointly convex and
        // homogeneous, ||theta - theta*||_Lambda <= sqrt(radius_k^2 + radius_{k-1}^2).
        let mut both = lam.clone();
        let mut ub = u.clone();
        let mut r2 = radius * radius;
        if !self.prev_lam.is_empty() {
            both.iter_mut().zip(&self.prev_lam).for_each(|(a, b)| *a += b);
            ub.iter_mut().zip(&self.prev_u).for_each(|(a, b)| *a += b);
            r2 += self.prev_bias * self.prev_bias;
        }
        let beta = c.beta_scale * r2.sqrt();
        let policy = LinearPolicy::new(d, beta, PolicyForm::Released { v: both.clone(), u: ub });
        let (Ok(mut policy), true) = (policy, radius.is_finite()) else {
            self.psd_failures += 1;
            self.double_h();
            return;
        };
        let Ok(theta) = policy.theta() else {
            self.psd_failures += 1;
            return;
        };
        self.theta = theta;
        self.beta = beta;
        self.policy = policy;
        self.h = h;
        self.work.h = lh2;
        self.prev_lam = lam;
        self.prev_u = u;
        self.prev_bias = radius;
        self.lam = both;
    }

    /// `count` runs of the current epoch completed by the rows `xs`
    /// (row-major, d each) with rewards `ys`, from this state: each run a
    /// copy fed the rows, its release collected (runs x m values). The
    /// noise stream advances from run to run (this engine's own stream:
    /// for audits of the exact released values).
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

    /// H <- 2 H (a release that could not be used: the next epoch is twice as long).
    fn double_h(&mut self) {
        self.h.iter_mut().for_each(|x| *x *= 2.0);
        if let Ok(l) = cholesky(&self.h, self.config.d) {
            self.work.h = l;
        }
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

    /// The policy the current epoch follows (released values only).
    pub fn policy(&self) -> LinearPolicy {
        self.policy.clone()
    }

    /// Draws future epoch noise from a new root (`fork`); a secure stream stays secure.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.noise_rng.reseed(seeds.stream("epoch_noise"));
        self.pre_release = PreReleaseChoice::new(seeds, "reweighted/pre_release_choice");
    }

    /// Epoch noise from the operating system from now on (secure mode).
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
                    "reweighted-LinUCB state version {v} was written before the engine chose uniformly among the rows \
                     before its first release (a stream that state lacks); this version reads version \
                     {STATE_VERSION}"
                )))
            }
            _ => return Err(Error::Decode("unknown reweighted-LinUCB state version".into())),
        };
        let mut e: ReweightedLinUcb = crate::state::decode(body)?;
        let c = e.config;
        c.validate().map_err(|err| Error::Decode(format!("invalid reweighted-LinUCB configuration: {err}")))?;
        let (d, m) = (c.d, c.stat_len());
        let consistent = e.h.len() == d * d
            && e.lam.len() == d * d
            && e.theta.len() == d
            && (e.prev_lam.is_empty() && e.prev_u.is_empty() || e.prev_lam.len() == d * d && e.prev_u.len() == d)
            && all_finite(&e.prev_lam)
            && all_finite(&e.prev_u)
            && e.prev_bias.is_finite()
            && e.prev_bias >= 0.0
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
            && all_finite(&e.release)
            && e.sums.iter().all(|s| s.abs() <= e.count as f64 * c.b.max(1.0) * (1.0 + 1e-9) + 1.0);
        if !consistent {
            return Err(Error::Decode("inconsistent reweighted-LinUCB state".into()));
        }
        e.refactor().map_err(|_| Error::Decode("reweighted-LinUCB state: a matrix is not positive definite".into()))?;
        e.policy = LinearPolicy::new(d, e.policy.beta(), e.policy.form().clone())
            .map_err(|err| Error::Decode(format!("reweighted-LinUCB state: {err}")))?;
        Ok(e)
    }
}

/// An upper bound on the largest eigenvalue of the symmetric positive
/// semidefinite `m` (d x d): min(||m||_F, max row sum of |m_ij|).
fn norm_bound(m: &[f64], d: usize) -> f64 {
    let frob = m.iter().map(|x| x * x).sum::<f64>().sqrt();
    let rows = m.chunks_exact(d).map(|r| r.iter().map(|x| x.abs()).sum::<f64>()).fold(0.0, f64::max);
    frob.min(rows)
}

/// An upper bound on 1 / lmin(V) from the Cholesky factor `l` of V:
/// [`norm_bound`] of V^-1.
fn inverse_norm_bound(l: &[f64], d: usize) -> f64 {
    let mut inv = vec![0.0; d * d];
    let mut col = vec![0.0; d];
    for j in 0..d {
        col.fill(0.0);
        col[j] = 1.0;
        forward_substitute(l, d, &mut col);
        backward_substitute(l, d, &mut col);
        for i in 0..d {
            inv[i * d + j] = col[i];
        }
    }
    norm_bound(&inv, d)
}

impl UcbLearner for ReweightedLinUcb {
    fn scores(&mut self, set: DecisionRows<'_>) -> Result<&[f64]> {
        ReweightedLinUcb::scores(self, set)
    }

    fn observe(&mut self, x: &[f64], y: f64) -> Result<()> {
        ReweightedLinUcb::observe(self, x, y)
    }

    fn use_os_entropy(&mut self) -> Result<()> {
        ReweightedLinUcb::use_os_entropy(self)
    }

    fn pre_release_choice(&mut self, k: usize) -> Option<usize> {
        ReweightedLinUcb::pre_release_choice(self, k)
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // lattice sums are exact: equality is the test
mod tests {
    use super::*;
    use crate::env::{DecisionSet, Environment, RewardModel, ShariffSheffetEnv};
    use rand::Rng;

    fn config(noise: NoiseSpec) -> ReweightedLinUcbConfig {
        ReweightedLinUcbConfig {
            d: 3,
            horizon: 5000,
            first_epoch: 50,
            leverage: 4.0,
            noise,
            op_bound: 0.0,
            chi_bound: 0.0,
            ridge: 1.0,
            reward_chi: 1.0,
            s: 1.0,
            beta_scale: 1.0,
            l: 1.0,
            b: 1.0,
            clip: true,
        }
    }

    #[test]
    fn noiseless_release_is_the_weighted_ridge_regression() {
        let mut e = ReweightedLinUcb::new(config(NoiseSpec::Zero), &SeedSequence::from_seed(1)).unwrap();
        let theta_star = [0.6, -0.48, 0.64];
        let mut rng = SeedSequence::from_seed(2).simulation_stream("x");
        let (mut g, mut bw) = ([0.0; 9], [0.0; 3]);
        let h0 = 50.0 / 3.0;
        for _ in 0..50 {
            let x: Vec<f64> = (0..3).map(|_| rng.random::<f64>() - 0.5).collect();
            let y = x.iter().zip(&theta_star).map(|(a, b)| a * b).sum::<f64>();
            let lev = x.iter().map(|v| v * v).sum::<f64>() / h0;
            let w = (3.0 * 4.0 / 50.0 / lev).min(1.0);
            for i in 0..3 {
                bw[i] += w * y * x[i];
                for j in 0..3 {
                    g[i * 3 + j] += w * x[i] * x[j];
                }
            }
            e.observe(&x, y).unwrap();
        }
        assert_eq!(e.releases(), 1);
        // theta = (G_w + lambda_0 I)^-1 b_w with lambda_0 = c_r L^2 = 1.
        for i in 0..3 {
            g[i * 3 + i] += 1.0;
        }
        let l = cholesky(&g, 3).unwrap();
        let mut th = bw.to_vec();
        forward_substitute(&l, 3, &mut th);
        backward_substitute(&l, 3, &mut th);
        for i in 0..3 {
            assert!((th[i] - e.theta()[i]).abs() < 1e-9, "{:?} vs {:?}", th, e.theta());
        }
    }

    #[test]
    fn lattice_sums_are_exact_state_round_trips_and_bad_state_is_refused() {
        let lattice = NoiseSpec::Gaussian { sigma: 2.0 }.on_lattice(18).unwrap();
        let mut cfg = config(lattice);
        cfg.op_bound = 2.0 * 8.0;
        cfg.chi_bound = 2.0 * 3.0;
        let mut a = ReweightedLinUcb::new(cfg, &SeedSequence::from_seed(3)).unwrap();
        let mut env =
            ShariffSheffetEnv::new(3, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(4)).unwrap();
        let mut set = DecisionSet::default();
        for t in 1..=120 {
            env.next_round(t, &mut set).unwrap();
            let i = Learner::select(&mut a, &set).unwrap();
            let fb = env.feedback(i).unwrap();
            Learner::update(&mut a, &set, i, fb).unwrap();
            assert!(a.sums().iter().all(|s| (s * 2f64.powi(18)).fract() == 0.0));
        }
        assert_eq!(a.releases(), 1);
        assert!(a.last_release().iter().all(|s| (s * 2f64.powi(18)).fract() == 0.0));
        let mut b = ReweightedLinUcb::from_bytes(&a.to_bytes()).unwrap();
        for t in 121..=400 {
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
        assert!(ReweightedLinUcb::from_bytes(&bad.to_bytes()).is_err());
        let mut bad = a.clone();
        bad.h[0] = -1.0;
        assert!(ReweightedLinUcb::from_bytes(&bad.to_bytes()).is_err());
        assert!(ReweightedLinUcb::from_bytes(&[1, 2, 3]).is_err());
        assert!(ReweightedLinUcb::from_bytes(&[]).is_err());
        assert!(a.observe(&[f64::NAN, 0.0, 0.0], 0.0).is_err());
        assert!(ReweightedLinUcb::new(
            ReweightedLinUcbConfig { first_epoch: 0, ..config(NoiseSpec::Zero) },
            &SeedSequence::from_seed(0)
        )
        .is_err());
    }

    #[test]
    fn before_the_first_release_the_choice_is_uniform_then_the_ucb_argmax() {
        let cfg =
            ReweightedLinUcbConfig { first_epoch: 1800, horizon: 2500, ..config(NoiseSpec::Gaussian { sigma: 1.0 }) };
        let mut e = ReweightedLinUcb::new(cfg, &SeedSequence::from_seed(7)).unwrap();
        // The D.2 instance (Shariff & Sheffet 2018, App. D.2) at K = 9.
        let mut env =
            ShariffSheffetEnv::new(3, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(8)).unwrap();
        let noise = |e: &ReweightedLinUcb| crate::state::encode(&e.noise_rng);
        let (before, after) =
            crate::policy::assert_uniform_before_release(&mut e, &mut env, 2500, |e| e.releases() > 0, noise);
        assert_eq!((before, after), (1800, 700));
    }

    #[test]
    fn the_pre_release_stream_is_in_the_state_and_reseeded_with_the_noise() {
        let mut a =
            ReweightedLinUcb::new(config(NoiseSpec::Gaussian { sigma: 1.0 }), &SeedSequence::from_seed(9)).unwrap();
        let mut env =
            ShariffSheffetEnv::new(3, 9, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(10)).unwrap();
        let mut set = DecisionSet::default();
        env.next_round(1, &mut set).unwrap();
        let i = Learner::select(&mut a, &set).unwrap();
        let fb = env.feedback(i).unwrap();
        Learner::update(&mut a, &set, i, fb).unwrap();
        let mut b = ReweightedLinUcb::from_bytes(&a.to_bytes()).unwrap();
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
        old[0] = 2;
        let err = ReweightedLinUcb::from_bytes(&old).unwrap_err().to_string();
        assert!(err.contains("version 2") && err.contains("reads version 3"), "{err}");
    }

    #[test]
    fn noiseless_learner_finds_the_best_action() {
        let mut e = ReweightedLinUcb::new(config(NoiseSpec::Zero), &SeedSequence::from_seed(5)).unwrap();
        let mut env =
            ShariffSheffetEnv::new(3, 9, 0.2, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(6)).unwrap();
        let mut set = DecisionSet::default();
        let mut late_regret = 0.0;
        for t in 1..=5000 {
            env.next_round(t, &mut set).unwrap();
            let i = Learner::select(&mut e, &set).unwrap();
            if t > 4000 {
                late_regret += env.regret(i).unwrap();
            }
            let fb = env.feedback(i).unwrap();
            Learner::update(&mut e, &set, i, fb).unwrap();
        }
        // A uniformly random action loses about 0.75 a round; the learner far less.
        assert!(late_regret < 0.15 * 1000.0, "{late_regret}");
    }
}
