//! K-armed learners that release one noisy sum per phase: DP-KLUCB and
//! DP-IMED (Azize, Wu, Honda, Orabona, Ito & Basu 2025), AdaP-UCB /
//! AdaP-KLUCB (Azize & Basu 2022, Alg. 1), their zCDP counterparts AdaC-UCB
//! / AdaC-KLUCB (Azize & Basu 2024), DP-SE (Sajed & Sheffet 2019), a phased
//! private Thompson sampling, and non-private KL-UCB (phases of one round,
//! no noise).
//!
//! The engine plays in phases. An index phase belongs to one arm: when no
//! phase is running, the engine scores every arm from the released sums
//! and commits the best one for its next phase; the phase's rewards are
//! summed, and at its end the sum is released once with its own noise
//! draw. Each reward enters exactly one phase sum (parallel composition),
//! and every decision reads only released sums and pull counts (functions
//! of earlier releases): the privacy argument is in the Python docstrings
//! (`dpbandits.learners.phased_mab`).
//!
//! Released values (the project's noise rule): with lattice noise ([`NoiseSpec::Lattice`])
//! each reward, normalised to [0, 1], is rounded to the lattice 2^-j and
//! summed as an integer number of steps; the noise is an exact discrete
//! Laplace or Gaussian number of steps (`crate::noise::cell_sampler`); the
//! released sum is an exact multiple of 2^-j. Changing one reward moves
//! the integer sum by at most 2^j steps (0 and 1 are lattice points and
//! rounding is monotone), i.e. by exactly the sensitivity 1. The float
//! sampler is an explicit opt-in.
//!
//! Every constant (noise scale, lattice exponent, index coefficients, phase
//! ratio, DP-SE epoch lengths) arrives from Python as a plain number.

use rand::Rng;
use rand_core::RngCore;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::mab::{RewardPolicy, RewardRange};
use super::Learner;
use crate::env::{DecisionSet, Feedback};
use crate::error::{check_finite, Error, Result};
use crate::noise::cell_sampler::{discrete_gaussian, discrete_laplace};
use crate::noise::entropy::EntropyCell;
use crate::noise::laplace;
use crate::noise::lattice::{SecureKind, SecureNoise};
use crate::noise::NoiseSpec;
use crate::rng::{standard_normal, SeedSequence, StreamRng};

/// Most arms an engine accepts (checked before anything is allocated).
pub const MAX_ARMS: usize = 1 << 24;

/// 2^53: integers up to it are exact in f64.
const MAX_EXACT_COUNT: f64 = 9_007_199_254_740_992.0;

/// The score of an arm when a phase is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum PhasedIndex {
    /// Optimistic index on the mean m = clip(S / n, 0, 1):
    /// `kl`: max{y in [m, 1] : n d(m, y) <= explore ln t}, with d the
    /// divergence d_eps of Azize et al. 2025 when `divergence_epsilon` is
    /// given and the Bernoulli kl otherwise; not `kl`:
    /// m + sqrt(explore ln t / (2 n)). Both plus `linear` ln t / n +
    /// `root` sqrt(ln t) / n (the privacy terms of AdaP / AdaC).
    Optimistic { kl: bool, divergence_epsilon: Option<f64>, explore: f64, linear: f64, root: f64 },
    /// IMED (Honda & Takemura 2015) with d (as above): argmin over arms of
    /// n_a d(m_a, m*) + ln n_a, m* the largest mean.
    Imed { divergence_epsilon: Option<f64> },
    /// One Gaussian draw per arm: N(m, reward_var / n + L noise_var / n^2),
    /// L the number of released phases summed into the mean.
    Thompson { reward_var: f64, noise_var: f64 },
    /// Successive elimination (DP-SE): only with [`PhaseSchedule::Epochs`].
    Elimination,
}

/// The phases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PhaseSchedule {
    /// Arm-dependent geometric phases: an arm's phase l (from 0) ends when
    /// its pull count reaches n_l, with x_0 = 1, x_l = x_{l-1} * alpha (in
    /// floating point) and n_l = max(n_{l-1} + 1, ceil(x_l)). `forget`:
    /// the index reads the last phase's release only (AdaP, AdaC);
    /// otherwise the sums of all of the arm's releases (DP-KLUCB, DP-IMED).
    /// `alpha` = 0 means phases of one round (KL-UCB).
    Geometric { alpha: f64, forget: bool },
    /// DP-SE: in epoch e every active arm is pulled `pulls[e]` times in a
    /// row (arm order), each arm's epoch sum is released, and arms whose
    /// released mean is below the best released mean minus `gaps[e]` are
    /// eliminated. The last entry repeats.
    Epochs { pulls: Vec<u64>, gaps: Vec<f64> },
    /// Geometric phases with a floor on their length (the adaptive ratio
    /// of `dpbandits.learners.phased_mab`): an arm at pull count n >= 1
    /// ends its next phase at n_next = max(n + `min_len`, ceil(x alpha)),
    /// and x becomes max(x alpha, n_next) (x_0 = 1): the effective ratio
    /// n_next / n is max(alpha, 1 + `min_len` / n), long phases while the
    /// count is small (one noise draw per `min_len` pulls at least) and
    /// ratio alpha once n >= `min_len` / (alpha - 1). A data-independent
    /// function of the pull count, as the plain geometric grid.
    /// `min_len` = 1 is not the plain grid (x follows n here).
    Adaptive { alpha: f64, min_len: u64, forget: bool },
}

/// Everything a [`PhasedMab`] needs, as plain numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhasedMabConfig {
    pub k: usize,
    pub horizon: u64,
    pub index: PhasedIndex,
    pub schedule: PhaseSchedule,
    /// The noise of each phase's release (on the sum of rewards normalised
    /// to [0, 1]), as the privacy layer computed it: `Zero` (non-private),
    /// exact discrete Laplace or Gaussian on a lattice (the default), or the
    /// floating-point opt-in (open to low-bit attacks).
    pub noise: NoiseSpec,
    /// Draw the noise from operating-system entropy (not reproducible).
    pub secure: bool,
    /// True: the chosen arm is committed for its whole phase (decisions
    /// only at phase ends). False: a decision every round; each arm's
    /// rewards accumulate into its open phase, released when the arm's
    /// pull count reaches the phase's end (Hu & Hegde's lazy updates).
    pub commit: bool,
    pub rewards: RewardRange,
}

/// One released phase sum.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Release {
    pub arm: usize,
    /// Round (from 0) of the phase's first pull.
    pub start: u64,
    /// Round (from 0) of its last pull (start + len - 1 when the arm was
    /// committed for the phase).
    pub end: u64,
    pub len: u64,
    /// Released noisy sum of the phase's rewards (normalised to [0, 1]).
    pub value: f64,
}

/// The phase being played.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Current {
    arm: usize,
    start: u64,
    len: u64,
    done: u64,
    /// Exact sum in lattice steps (lattice sampler) ...
    steps: i64,
    /// ... or in floating point (float sampler, zero noise).
    sum: f64,
}

/// The engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhasedMab {
    config: PhasedMabConfig,
    /// Integer parameters of the lattice noise (lattice sampler).
    lattice: Option<SecureNoise>,
    /// 2^j (lattice sampler), 1 otherwise.
    up: f64,
    /// Pulls of each arm in finished phases.
    pulls: Vec<u64>,
    /// Released phases of each arm.
    phases: Vec<u32>,
    /// x_l of each arm's geometric grid (see [`PhaseSchedule::Geometric`]).
    grid_x: Vec<f64>,
    /// Sum of each arm's released values (exact lattice multiples).
    released_sum: Vec<f64>,
    /// The arm's last release and its length.
    last_value: Vec<f64>,
    last_len: Vec<u64>,
    /// Tie-break rank of each arm (a random permutation drawn at construction).
    tie_rank: Vec<u32>,
    /// DP-SE: active arms, epoch, next arm to play in the epoch, epoch means.
    active: Vec<bool>,
    epoch: usize,
    epoch_next: usize,
    epoch_means: Vec<f64>,
    current: Option<Current>,
    /// Uncommitted mode: each arm's open phase (len 0: none) and the arm
    /// selected for the running round.
    open: Vec<Current>,
    pending: Option<usize>,
    /// Thompson: each arm's posterior mean and standard deviation (they
    /// change only at the arm's releases).
    post_mean: Vec<f64>,
    post_sd: Vec<f64>,
    /// The arm of the last decision (the leader the KL filter starts from).
    last_arm: usize,
    t: u64,
    releases: Vec<Release>,
    rng: StreamRng,
    /// Retired arms: never chosen again (`phased_mab_arms.rs`).
    retired: Vec<bool>,
    #[serde(skip)]
    entropy: EntropyCell,
    /// Derived from the configuration (set by [`PhasedMab::derive`]).
    #[serde(skip)]
    fast: Derived,
    /// KL-UCB's upper bounds of the indices (a cache: speed only).
    #[serde(skip)]
    bounds: IndexBounds,
}

/// What the hot path reads from the configuration, worked out once.
#[derive(Clone, Copy, Debug, Default)]
struct Derived {
    /// The index reads the last phase only (AdaP, AdaC).
    forget: bool,
    /// The reward range is [0, 1] (normalising is the identity).
    unit: bool,
    /// Releases are recorded (not for phases of one round without noise:
    /// KL-UCB would keep one record per round).
    record: bool,
}

/// Per arm, an upper bound `value` of its KL-UCB index at every round up
/// to `until`, valid while its released pull count is `pulls`; and the
/// leader's certificate.
#[derive(Clone, Debug, Default)]
struct IndexBounds {
    value: Vec<f64>,
    until: Vec<u64>,
    pulls: Vec<u64>,
    lead: Option<LeadCertificate>,
}

/// Proof material that the leader's index exceeds `w`, checked each round
/// without a logarithm: d(m, w) <= `d_ref` + `slope` (`m_ref` - m) for m in
/// [`m_lo`, `m_ref`] (|d d(x, w) / dx| <= `slope` there: it decreases in x
/// up to w, and is at most eps for d_eps), and d(m, w) decreases in m; the
/// threshold c is at least `c_log` / n (ln t only grows).
#[derive(Clone, Copy, Debug)]
struct LeadCertificate {
    arm: usize,
    w: f64,
    d_ref: f64,
    m_ref: f64,
    m_lo: f64,
    slope: f64,
    c_log: f64,
}

impl LeadCertificate {
    /// From d = d(m, w) at the leader's mean m over n pulls. The range
    /// [m_lo, m] is a few steps 1/n wide: the slope bound stays close to
    /// the slope at m, so the certificate survives many pulls.
    fn new(arm: usize, w: f64, m: f64, n: f64, d: f64, c_log: f64, eps: Option<f64>) -> Option<Self> {
        if !(m > 0.0 && m < w) {
            return None;
        }
        let m_lo = (m - 16.0 / n).max(0.5 * m);
        let kl_slope = (m_lo * (1.0 - w) / (w * (1.0 - m_lo))).ln().abs();
        let slope = eps.map_or(kl_slope, |e| e.min(kl_slope)) * (1.0 + 1e-12);
        Some(LeadCertificate { arm, w, d_ref: d, m_ref: m, m_lo, slope, c_log })
    }

    /// The leader's index provably exceeds `w` at mean `m` over `n` pulls.
    fn holds(&self, m: f64, n: f64) -> bool {
        if m >= self.w {
            return true;
        }
        m >= self.m_lo && self.d_ref + self.slope * (self.m_ref - m).max(0.0) <= self.c_log / n - D_MARGIN
    }
}

/// round(x) for 0 <= x < 2^52 without a library call (half away from zero,
/// as `f64::round`): x - trunc(x) is exact there.
#[inline]
fn round_nonnegative(x: f64) -> i64 {
    let f = x as i64;
    if x - f as f64 >= 0.5 {
        f + 1
    } else {
        f
    }
}

/// The lattice steps of a normalised reward u in [0, 1] on the lattice
/// 2^-j (`up` = 2^j): round(u 2^j); 0 and 1 (Bernoulli rewards) are
/// lattice points, taken without rounding.
#[allow(clippy::float_cmp)] // exact lattice points
#[inline]
fn lattice_steps(u: f64, up: f64) -> i64 {
    if u == 1.0 {
        up as i64
    } else if u == 0.0 {
        0
    } else {
        round_nonnegative(u * up)
    }
}

fn kl_bernoulli(x: f64, y: f64) -> f64 {
    const TINY: f64 = 1e-15;
    let y = y.clamp(TINY, 1.0 - TINY);
    let mut v = 0.0;
    if x > 0.0 {
        v += x * (x / y).ln();
    }
    if x < 1.0 {
        v += (1.0 - x) * ((1.0 - x) / (1.0 - y)).ln();
    }
    v.max(0.0)
}

/// d_eps(x, y) = inf over z between x and y of eps |z - x| + kl(z, y)
/// (Azize et al. 2025). Closed form (`dpbandits.privacy.azize.d_eps`):
/// for x <= y the minimiser is z = max(x, z*), z* = y e^-eps /
/// (1 - y + y e^-eps), and at z = z* the value is
/// -eps x - ln(1 - y + y e^-eps); symmetrically for x > y with +eps.
/// `eps` = None gives kl(x, y).
pub fn d_eps(x: f64, y: f64, eps: Option<f64>) -> f64 {
    let Some(eps) = eps else { return kl_bernoulli(x, y) };
    if x <= y {
        let e = (-eps).exp();
        let den = 1.0 - y + y * e;
        let z = y * e / den;
        if x >= z {
            kl_bernoulli(x, y)
        } else {
            (-eps * x - den.ln()).max(0.0)
        }
    } else {
        let e = eps.exp();
        let den = 1.0 - y + y * e;
        let z = y * e / den;
        if x <= z {
            kl_bernoulli(x, y)
        } else {
            (eps * x - den.ln()).max(0.0)
        }
    }
}

/// d_eps(x, y) for x <= y and its derivative in y (kl: (y - x) / (y (1 - y));
/// the closed-form branch: (1 - e^-eps) / (1 - y + y e^-eps)).
fn d_eps_slope(x: f64, y: f64, eps: Option<f64>) -> (f64, f64) {
    let kl = |x: f64, y: f64| (kl_bernoulli(x, y), (y - x) / (y * (1.0 - y)));
    let Some(eps) = eps else { return kl(x, y) };
    let e = (-eps).exp();
    let den = 1.0 - y + y * e;
    if x >= y * e / den {
        kl(x, y)
    } else {
        ((-eps * x - den.ln()).max(0.0), (1.0 - e) / den)
    }
}

/// Bounds the rounding error of a computed d_eps (its terms are at most
/// ln 1e15 ~ 35 in size): a predicate d <= c is decided by a value at least
/// this far from c.
const D_MARGIN: f64 = 1e-13;

/// A bracket (a, b) of the root of d(m, .) = c with d(m, a) <= c - margin
/// and d(m, b) > c + margin, from Newton's method on the convex increasing
/// d(m, .) (None when it fails: the caller bisects without it).
fn kl_bracket(m: f64, c: f64, eps: Option<f64>) -> Option<(f64, f64)> {
    let mut y = (m + (0.5 * c).sqrt()).min(0.5 * (1.0 + m)).max(m + 0.5 * (1.0 - m) * f64::EPSILON);
    for _ in 0..30 {
        let (d, slope) = d_eps_slope(m, y, eps);
        if !(slope.is_finite() && slope > 0.0 && d.is_finite()) {
            return None;
        }
        let mut next = y - (d - c) / slope;
        if next <= m {
            next = 0.5 * (m + y);
        } else if next >= 1.0 {
            next = 0.5 * (y + 1.0);
        }
        let done = (next - y).abs() <= 1e-13;
        y = next;
        if done {
            break;
        }
    }
    for delta in [4e-12, 1e-9] {
        let (a, b) = (y - delta, y + delta);
        if a > m && b < 1.0 && d_eps(m, a, eps) <= c - D_MARGIN && d_eps(m, b, eps) > c + D_MARGIN {
            return Some((a, b));
        }
    }
    None
}

/// max{y in [m, 1] : d(m, y) <= c} by bisection (d(m, .) increases on [m, 1]).
///
/// The bisection's mids are decided without evaluating d where a Newton
/// bracket (a, b) of the root settles them (mid <= a: d <= c; mid >= b:
/// d > c, with a margin above rounding): the same path, hence the same
/// value, as evaluating d at every mid, for a handful of evaluations
/// instead of about forty.
pub fn kl_upper(m: f64, c: f64, eps: Option<f64>) -> f64 {
    if c <= 0.0 {
        return m;
    }
    if d_eps(m, 1.0, eps) <= c {
        return 1.0;
    }
    let (a, b) = kl_bracket(m, c, eps).unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
    let (mut lo, mut hi) = (m, 1.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        let below = if mid <= a {
            true
        } else if mid >= b {
            false
        } else {
            d_eps(m, mid, eps) <= c
        };
        if below {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 {
            break;
        }
    }
    lo
}

/// [`kl_upper`] evaluating d at every mid (the reference its bracket must match).
#[cfg(test)]
fn kl_upper_plain(m: f64, c: f64, eps: Option<f64>) -> f64 {
    if c <= 0.0 {
        return m;
    }
    if d_eps(m, 1.0, eps) <= c {
        return 1.0;
    }
    let (mut lo, mut hi) = (m, 1.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if d_eps(m, mid, eps) <= c {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 {
            break;
        }
    }
    lo
}

impl PhasedMab {
    /// A fresh engine; learner randomness (noise unless `secure`, tie
    /// ranks, Thompson draws) from the `"phased_mab"` stream of `seeds`.
    pub fn new(config: PhasedMabConfig, seeds: &SeedSequence) -> Result<Self> {
        let k = config.k;
        if k == 0 || k > MAX_ARMS {
            return Err(Error::invalid("k", format!("must lie in [1, {MAX_ARMS}], got {k}")));
        }
        if config.horizon == 0 {
            return Err(Error::invalid("horizon", "must be >= 1"));
        }
        check_finite("reward_range", &[config.rewards.lo, config.rewards.hi])?;
        if config.rewards.hi <= config.rewards.lo {
            return Err(Error::invalid("reward_range", "needs lo < hi"));
        }
        let private = !matches!(config.noise, NoiseSpec::Zero);
        if private && config.rewards.policy == RewardPolicy::Unchecked {
            return Err(Error::invalid("bounds", "a private learner must clip or refuse out-of-range rewards"));
        }
        let spec = config.noise;
        spec.validate(&[1])?;
        let scalar_law = match spec {
            NoiseSpec::Zero | NoiseSpec::Laplace { .. } | NoiseSpec::Gaussian { .. } => true,
            NoiseSpec::Lattice(s) => matches!(s.kind(), SecureKind::Laplace { .. } | SecureKind::Gaussian { .. }),
            _ => false,
        };
        if !scalar_law {
            return Err(Error::invalid(
                "noise",
                format!("phase releases take Laplace or Gaussian noise, got {spec:?}"),
            ));
        }
        let (lattice, up) = match spec.lattice() {
            Some(noise) => {
                let exponent = noise.exponent();
                let up = 2f64.powi(exponent);
                // Sums of up to `horizon` rewards of 2^j steps, plus noise
                // (about 2^20 steps a draw), stay below 2^53 steps: exact
                // in i64 and in the f64 sums of released values.
                if (config.horizon as f64) * up > 2f64.powi(52) {
                    return Err(Error::invalid(
                        "lattice_exponent",
                        format!(
                            "horizon * 2^{exponent} exceeds 2^52: the lattice sums would not stay exact \
                             (a horizon this long at this noise scale needs sampler=\"float\")"
                        ),
                    ));
                }
                (Some(noise), up)
            }
            None => (None, 1.0),
        };
        check_rules(&config)?;
        let mut rng = seeds.stream("phased_mab");
        // A random tie order (drawn first, so that it is reproducible from the seed).
        let mut order: Vec<u32> = (0..k as u32).collect();
        for i in (1..k).rev() {
            let j = rng.random_range(0..=i);
            order.swap(i, j);
        }
        let mut tie_rank = vec![0u32; k];
        for (rank, &a) in order.iter().enumerate() {
            tie_rank[a as usize] = rank as u32;
        }
        Ok(PhasedMab {
            lattice,
            up,
            pulls: vec![0; k],
            phases: vec![0; k],
            grid_x: vec![1.0; k],
            released_sum: vec![0.0; k],
            last_value: vec![0.0; k],
            last_len: vec![0; k],
            tie_rank,
            active: vec![true; k],
            epoch: 0,
            epoch_next: 0,
            epoch_means: vec![0.0; k],
            current: None,
            open: vec![Current { arm: 0, start: 0, len: 0, done: 0, steps: 0, sum: 0.0 }; k],
            pending: None,
            post_mean: vec![0.0; k],
            post_sd: vec![0.0; k],
            last_arm: 0,
            t: 0,
            releases: Vec::new(),
            rng,
            retired: vec![false; k],
            entropy: EntropyCell::default(),
            fast: Derived::default(),
            bounds: IndexBounds::default(),
            config,
        }
        .derive())
    }

    /// Fills the fields derived from the configuration (after `new` and
    /// after decoding a checkpoint).
    #[allow(clippy::float_cmp)]
    fn derive(mut self) -> Self {
        let (forget, one_round) = match self.config.schedule {
            PhaseSchedule::Geometric { alpha, forget } => (forget, alpha == 0.0),
            PhaseSchedule::Adaptive { forget, .. } => (forget, false),
            PhaseSchedule::Epochs { .. } => (false, false),
        };
        let r = &self.config.rewards;
        self.fast = Derived {
            forget,
            unit: r.lo == 0.0 && r.hi == 1.0,
            record: !(one_round && matches!(self.config.noise, NoiseSpec::Zero)),
        };
        self
    }

    pub fn config(&self) -> &PhasedMabConfig {
        &self.config
    }

    /// Completed rounds.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Pulls of each arm in finished (released) phases.
    pub fn pulls(&self) -> &[u64] {
        &self.pulls
    }

    /// Sum of each arm's released phase sums.
    pub fn released_sums(&self) -> &[f64] {
        &self.released_sum
    }

    /// Every release so far, in order.
    pub fn releases(&self) -> &[Release] {
        &self.releases
    }

    /// The tie-break rank of each arm (lower wins a tie).
    pub fn tie_ranks(&self) -> &[u32] {
        &self.tie_rank
    }

    /// Arms still active (DP-SE; all true otherwise).
    pub fn active(&self) -> &[bool] {
        &self.active
    }

    /// The phase being played: (arm, rounds left), if any.
    pub fn current_phase(&self) -> Option<(usize, u64)> {
        self.current.map(|c| (c.arm, c.len - c.done))
    }

    /// Length of `arm`'s next phase under the geometric grid (alpha = 0:
    /// one round, an exact sentinel).
    #[allow(clippy::float_cmp)]
    fn next_len(&self, arm: usize) -> (u64, f64) {
        let n = self.pulls[arm];
        match self.config.schedule {
            PhaseSchedule::Geometric { alpha, .. } => {
                if alpha == 0.0 || n == 0 {
                    return (1, self.grid_x[arm]);
                }
                let x = self.grid_x[arm] * alpha;
                let target = (n + 1).max(x.ceil() as u64);
                (target - n, x)
            }
            PhaseSchedule::Adaptive { alpha, min_len, .. } => {
                if n == 0 {
                    return (min_len, self.grid_x[arm]);
                }
                let x = self.grid_x[arm] * alpha;
                let target = (n + min_len).max(x.ceil() as u64);
                (target - n, x.max(target as f64))
            }
            PhaseSchedule::Epochs { .. } => unreachable!("epochs have no per-arm grid"),
        }
    }

    /// The mean, its count and its number of releases, as the index reads them.
    fn stats(&self, a: usize) -> (f64, f64, f64) {
        if self.fast.forget {
            let n = self.last_len[a] as f64;
            ((self.last_value[a] / n).clamp(0.0, 1.0), n, 1.0)
        } else {
            let n = self.pulls[a] as f64;
            ((self.released_sum[a] / n).clamp(0.0, 1.0), n, f64::from(self.phases[a]))
        }
    }

    /// The score of every arm for a decision at round t + 1 (larger is
    /// better; +inf for an arm without a release). Draws Thompson samples.
    pub fn scores(&mut self) -> Vec<f64> {
        let k = self.config.k;
        let ln_t = ((self.t + 1) as f64).ln();
        let mut out = vec![f64::INFINITY; k];
        let best_mean = if let PhasedIndex::Imed { .. } = self.config.index {
            (0..k)
                .filter(|&a| self.pulls[a] > 0 && !self.retired[a])
                .map(|a| self.stats(a).0)
                .fold(f64::NEG_INFINITY, f64::max)
        } else {
            0.0
        };
        for (a, score) in out.iter_mut().enumerate() {
            if self.retired[a] {
                *score = f64::NEG_INFINITY;
                continue;
            }
            if self.pulls[a] == 0 {
                continue;
            }
            let (m, n, phases) = self.stats(a);
            *score = match self.config.index {
                PhasedIndex::Optimistic { kl, divergence_epsilon, explore, linear, root } => {
                    let base = if kl {
                        kl_upper(m, explore * ln_t / n, divergence_epsilon)
                    } else {
                        m + (explore * ln_t / (2.0 * n)).sqrt()
                    };
                    base + linear * ln_t / n + root * ln_t.sqrt() / n
                }
                PhasedIndex::Imed { divergence_epsilon } => -(n * d_eps(m, best_mean, divergence_epsilon) + n.ln()),
                PhasedIndex::Thompson { reward_var, noise_var } => {
                    let sd = (reward_var / n + phases * noise_var / (n * n)).sqrt();
                    m + sd * standard_normal(&mut self.rng)
                }
                PhasedIndex::Elimination => 0.0,
            };
        }
        out
    }

    /// The scores of a KL-type optimistic index without privacy terms,
    /// computing the bisection only where it can matter: U_lead of the arm
    /// played last, then arm a is scored only if d(m_a, U_lead) <= c_a
    /// (U_a >= U_lead possible); every other arm has U_a < U_lead (d(m_a, .)
    /// increases on [m_a, 1], so its bisection stays below U_lead) and gets
    /// -inf. The argmax, ties included, is the same as with every score.
    fn scores_kl_filtered(&self, lead: usize, explore: f64, eps: Option<f64>) -> Vec<f64> {
        let k = self.config.k;
        let ln_t = ((self.t + 1) as f64).ln();
        let mut out = vec![f64::NEG_INFINITY; k];
        let (ml, nl, _) = self.stats(lead);
        let u_lead = kl_upper(ml, explore * ln_t / nl, eps);
        out[lead] = u_lead;
        for (a, score) in out.iter_mut().enumerate() {
            if a == lead || self.retired[a] {
                continue;
            }
            if self.pulls[a] == 0 {
                *score = f64::INFINITY;
                continue;
            }
            let (m, n, _) = self.stats(a);
            let c = explore * ln_t / n;
            if m >= u_lead || d_eps(m, u_lead, eps) <= c {
                *score = kl_upper(m, c, eps);
            }
        }
        out
    }

    /// KL-UCB's arm when the leader `lead` wins outright, without scoring
    /// the others: each other arm's index is bounded by its cached upper
    /// bound (its index at a later round `until`; the index grows with ln t
    /// and the bisection is monotone in its threshold), refreshed when the
    /// round passes `until` or the arm's releases change; when the
    /// leader's index provably exceeds every bound (d(m, v + 2e-12) <= c
    /// with a rounding margin puts the bisection's result above v + 1e-12)
    /// no other arm can win or tie. None: score as usual.
    fn lazy_leader(&mut self, lead: usize, explore: f64, eps: Option<f64>) -> Option<usize> {
        let k = self.config.k;
        let t1 = self.t + 1;
        if self.bounds.value.len() != k {
            self.bounds = IndexBounds { value: vec![0.0; k], until: vec![0; k], pulls: vec![0; k], lead: None };
        }
        let mut top = usize::MAX;
        let mut v = f64::NEG_INFINITY;
        for a in 0..k {
            if a == lead || self.retired[a] {
                continue;
            }
            if self.pulls[a] == 0 {
                return None;
            }
            if self.bounds.until[a] < t1 || self.bounds.pulls[a] != self.pulls[a] {
                // Valid for about t / 256 rounds: the bound's slack stays
                // small against the gaps between indices, and a refresh (a
                // bisection) comes every t / 256 rounds only.
                self.refresh_bound(a, t1 + (t1 >> 8).max(1), explore, eps);
            }
            if self.bounds.value[a] > v {
                v = self.bounds.value[a];
                top = a;
            }
        }
        if top == usize::MAX {
            return Some(lead); // every other arm is retired
        }
        let (m, n, _) = self.stats(lead);
        // The leader's certificate for threshold w (from an earlier round)
        // settles it without a logarithm ...
        if let Some(cert) = self.bounds.lead {
            let w = v + 2e-12;
            if m >= w || (cert.arm == lead && w <= cert.w && cert.holds(m, n)) {
                return Some(lead);
            }
        }
        // ... else a fresh one (c_log at this round). When the runner-up's
        // bound is in the way, its window shrinks (a tighter bound) before
        // giving up: a near-tie then costs one bisection now and then, not
        // a scoring of every arm every round.
        let c_log = explore * (t1 as f64).ln();
        for _ in 0..3 {
            let w = v + 2e-12;
            if w >= 1.0 {
                return None;
            }
            if m >= w {
                // The index is at least the mean.
                return Some(lead);
            }
            let d = d_eps(m, w, eps);
            if d <= c_log / n - D_MARGIN {
                self.bounds.lead = LeadCertificate::new(lead, w, m, n, d, c_log, eps);
                return Some(lead);
            }
            let window = (self.bounds.until[top] - t1) / 16;
            if window == 0 && self.bounds.until[top] == t1 {
                break;
            }
            self.refresh_bound(top, t1 + window, explore, eps);
            v = f64::NEG_INFINITY;
            for a in (0..k).filter(|&a| a != lead && !self.retired[a]) {
                if self.bounds.value[a] > v {
                    v = self.bounds.value[a];
                    top = a;
                }
            }
        }
        self.bounds.lead = None;
        None
    }

    /// Arm `a`'s index bound for the rounds up to `until`.
    fn refresh_bound(&mut self, a: usize, until: u64, explore: f64, eps: Option<f64>) {
        let (m, n, _) = self.stats(a);
        self.bounds.value[a] = kl_upper(m, explore * (until as f64).ln() / n, eps);
        self.bounds.until[a] = until;
        self.bounds.pulls[a] = self.pulls[a];
    }

    /// Best score; ties to fewer pulls, then to the lower tie rank (ties
    /// are exact equalities by design, e.g. several indices capped at 1).
    #[allow(clippy::float_cmp)]
    fn argmax(&self, scores: &[f64]) -> usize {
        let mut best = 0;
        for a in 1..scores.len() {
            let better = scores[a] > scores[best]
                || (scores[a] == scores[best]
                    && (self.pulls[a], self.tie_rank[a]) < (self.pulls[best], self.tie_rank[best]));
            if better {
                best = a;
            }
        }
        best
    }

    fn check_round(&self) -> Result<()> {
        if self.t >= self.config.horizon {
            return Err(Error::State(format!("the horizon of {} rounds is reached", self.config.horizon)));
        }
        Ok(())
    }

    /// Commits the next phase when none is running (the KL filter applies
    /// when the privacy terms are exactly zero).
    #[allow(clippy::float_cmp)]
    fn decide(&mut self) {
        let (arm, len) = match &self.config.schedule {
            PhaseSchedule::Geometric { .. } | PhaseSchedule::Adaptive { .. } => {
                let arm = match self.config.index {
                    PhasedIndex::Optimistic { kl: true, divergence_epsilon, explore, linear, root }
                        if linear == 0.0
                            && root == 0.0
                            && self.pulls[self.last_arm] > 0
                            && !self.retired[self.last_arm] =>
                    {
                        let lead = self.last_arm;
                        self.lazy_leader(lead, explore, divergence_epsilon).unwrap_or_else(|| {
                            let scores = self.scores_kl_filtered(lead, explore, divergence_epsilon);
                            self.argmax(&scores)
                        })
                    }
                    _ => {
                        let scores = self.scores();
                        self.argmax(&scores)
                    }
                };
                let (len, x) = self.next_len(arm);
                if self.pulls[arm] > 0 {
                    self.grid_x[arm] = x;
                }
                (arm, len)
            }
            PhaseSchedule::Epochs { pulls, .. } => {
                let len = pulls[self.epoch.min(pulls.len() - 1)];
                if self.active.iter().filter(|&&x| x).count() == 1 {
                    let arm = self.active.iter().position(|&x| x).expect("one active arm");
                    (arm, self.config.horizon - self.t) // the survivor plays to the end
                } else {
                    let arm = (self.epoch_next..self.config.k).find(|&a| self.active[a]).expect("epoch not over");
                    (arm, len)
                }
            }
        };
        self.last_arm = arm;
        self.current = Some(Current { arm, start: self.t, len, done: 0, steps: 0, sum: 0.0 });
    }

    /// The arm to pull this round.
    pub fn select_arm(&mut self) -> Result<usize> {
        self.check_round()?;
        if !self.config.commit {
            return Ok(self.choose_uncommitted());
        }
        if self.current.is_none() {
            self.decide();
        }
        Ok(self.current.expect("a phase is running").arm)
    }

    /// Uncommitted mode: the arm of this round (drawn once per round), and
    /// its open phase started if it has none (exact ties as in `argmax`).
    #[allow(clippy::float_cmp)]
    fn choose_uncommitted(&mut self) -> usize {
        if let Some(a) = self.pending {
            return a;
        }
        let a = if let PhasedIndex::Thompson { .. } = self.config.index {
            // The hot path: one draw per arm from the cached posteriors
            // (slices zipped: no bounds checks; the tie rule is read only
            // on an exact tie).
            let mut best = 0;
            let mut best_score = f64::NEG_INFINITY;
            let rng = &mut self.rng;
            for (b, ((&mean, &sd), &pulls)) in self.post_mean.iter().zip(&self.post_sd).zip(&self.pulls).enumerate() {
                let score = if self.retired[b] {
                    f64::NEG_INFINITY
                } else if pulls == 0 {
                    f64::INFINITY
                } else {
                    mean + sd * standard_normal(rng)
                };
                if score > best_score {
                    best = b;
                    best_score = score;
                } else if score == best_score && (pulls, self.tie_rank[b]) < (self.pulls[best], self.tie_rank[best]) {
                    best = b;
                }
            }
            best
        } else {
            let scores = self.scores();
            self.argmax(&scores)
        };
        if self.open[a].len == 0 {
            let (len, x) = self.next_len(a);
            if self.pulls[a] > 0 {
                self.grid_x[a] = x;
            }
            self.open[a] = Current { arm: a, start: self.t, len, done: 0, steps: 0, sum: 0.0 };
        }
        self.pending = Some(a);
        a
    }

    /// Records the reward of pulling `arm` (range policy applied).
    pub fn observe(&mut self, arm: usize, reward: f64) -> Result<()> {
        let k = self.config.k;
        if arm >= k {
            return Err(Error::invalid("arm", format!("must be < {k}, got {arm}")));
        }
        self.check_round()?;
        if self.config.commit && self.current.is_none() {
            self.decide();
        }
        let u = self.normalised(reward)?;
        let cur = if self.config.commit {
            let cur = self.current.as_mut().expect("decided above");
            if arm != cur.arm {
                return Err(Error::invalid(
                    "arm",
                    format!(
                        "arm {} is committed for its phase ({} rounds left), got {arm}",
                        cur.arm,
                        cur.len - cur.done
                    ),
                ));
            }
            cur
        } else {
            let chosen = self.choose_uncommitted();
            if arm != chosen {
                return Err(Error::invalid("arm", format!("arm {chosen} was selected this round, got {arm}")));
            }
            self.pending = None;
            &mut self.open[arm]
        };
        if self.lattice.is_some() {
            cur.steps += lattice_steps(u, self.up);
        } else {
            cur.sum += u;
        }
        cur.done += 1;
        self.t += 1;
        if cur.done == cur.len {
            let finished = *cur;
            if self.config.commit {
                self.current = None;
            } else {
                self.open[arm].len = 0;
            }
            self.finish_phase(finished)?;
        }
        Ok(())
    }

    /// A reward as the phase sum takes it: checked finite, the range
    /// policy applied, normalised to [0, 1] (the identity on [0, 1]).
    #[inline]
    fn normalised(&self, reward: f64) -> Result<f64> {
        let r = &self.config.rewards;
        if !reward.is_finite() {
            return Err(Error::invalid("reward", format!("must be finite, got {reward}")));
        }
        let y = match r.policy {
            RewardPolicy::Error if reward < r.lo || reward > r.hi => {
                return Err(Error::invalid(
                    "reward",
                    format!("{reward} lies outside the declared reward range [{}, {}]", r.lo, r.hi),
                ))
            }
            _ => reward.clamp(r.lo, r.hi),
        };
        Ok(if self.fast.unit { y } else { ((y - r.lo) / (r.hi - r.lo)).clamp(0.0, 1.0) })
    }

    /// The committed phase to play next, as (arm, rounds): its arm and
    /// its rounds left, at most the rounds left to the horizon, deciding
    /// the next phase when none is running (as [`PhasedMab::select_arm`]
    /// does). `None` when the engine decides every round (`commit` false)
    /// or the horizon is reached. The simulation loop plays these rounds
    /// through [`PhasedMab::observe_run`] or
    /// [`PhasedMab::observe_counted_run`]: the decisions are made only at
    /// phase ends, so a round is a reward draw and a sum.
    pub fn committed_phase(&mut self) -> Option<(usize, u64)> {
        if !self.config.commit || self.t >= self.config.horizon {
            return None;
        }
        if self.current.is_none() {
            self.decide();
        }
        let cur = self.current.expect("a phase is running");
        Some((cur.arm, (cur.len - cur.done).min(self.config.horizon - self.t)))
    }

    /// Records `n` rounds of the committed phase (at most the rounds of
    /// [`PhasedMab::committed_phase`]), the reward of each from
    /// `reward`, called once a round in order: the same phase sums,
    /// releases and noise draws as n calls of [`PhasedMab::observe`] with
    /// these rewards. On an error (a reward the range policy refuses, or
    /// one `reward` returns) the rounds before it are recorded, as they
    /// would have been one at a time.
    #[inline]
    pub fn observe_run(&mut self, n: u64, mut reward: impl FnMut() -> Result<f64>) -> Result<()> {
        let mut cur = self.run_phase(n)?;
        let mut outcome = Ok(());
        let mut done = 0;
        while done < n {
            let u = match reward().and_then(|y| self.normalised(y)) {
                Ok(u) => u,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            };
            if self.lattice.is_some() {
                cur.steps += lattice_steps(u, self.up);
            } else {
                cur.sum += u;
            }
            done += 1;
        }
        self.end_run(cur, done)?;
        outcome
    }

    /// Whether [`PhasedMab::observe_counted_run`] applies: rewards 0 and 1
    /// both pass the range policy and, with the floating-point sampler,
    /// normalise to 0 and 1 (so that a sum of them is an exact count in
    /// any order).
    #[allow(clippy::float_cmp)] // exact values
    pub fn takes_counted_runs(&self) -> bool {
        match (self.normalised(0.0), self.normalised(1.0)) {
            (Ok(zero), Ok(one)) => self.lattice.is_some() || (zero == 0.0 && one == 1.0),
            _ => false,
        }
    }

    /// Records `n` rounds of the committed phase with rewards in {0, 1},
    /// `ones` of them 1 (Bernoulli arms): the same phase sum as
    /// [`PhasedMab::observe_run`] with those rewards in any order (integer
    /// lattice steps, or an exact count in floating point), the same
    /// releases and noise draws. Only when
    /// [`PhasedMab::takes_counted_runs`].
    #[inline]
    pub fn observe_counted_run(&mut self, n: u64, ones: u64) -> Result<()> {
        if ones > n || !self.takes_counted_runs() {
            return Err(Error::invalid("ones", format!("a counted run of {n} rounds needs ones <= n, got {ones}")));
        }
        let mut cur = self.run_phase(n)?;
        let (zero, one) = (self.normalised(0.0)?, self.normalised(1.0)?);
        if self.lattice.is_some() {
            let (zero, one) = (lattice_steps(zero, self.up), lattice_steps(one, self.up));
            cur.steps += ones as i64 * one + (n - ones) as i64 * zero;
        } else if cur.sum.fract() == 0.0 && cur.sum + ones as f64 <= MAX_EXACT_COUNT {
            // Adding 0.0 changes no sum, adding 1.0 to an integer below
            // 2^53 is exact: the count is the sum in any order.
            cur.sum += ones as f64;
        } else {
            for _ in 0..ones {
                cur.sum += 1.0;
            }
        }
        self.end_run(cur, n)
    }

    /// The committed phase, checked to have `n` rounds to play.
    fn run_phase(&mut self, n: u64) -> Result<Current> {
        match self.committed_phase() {
            Some((_, left)) if n <= left => Ok(self.current.expect("a phase is running")),
            Some((_, left)) => Err(Error::invalid("n", format!("the committed phase has {left} rounds left, got {n}"))),
            None => {
                self.check_round()?;
                Err(Error::State("the engine decides every round: no committed phase".into()))
            }
        }
    }

    /// Stores the phase `cur` after `done` more rounds, releasing it when it ends.
    fn end_run(&mut self, mut cur: Current, done: u64) -> Result<()> {
        cur.done += done;
        self.t += done;
        if cur.done == cur.len {
            self.current = None;
            self.finish_phase(cur)
        } else {
            self.current = Some(cur);
            Ok(())
        }
    }

    /// One noise draw (in lattice steps for the lattice sampler).
    fn draw(&mut self) -> Result<f64> {
        if matches!(self.config.noise, NoiseSpec::Zero) {
            return Ok(0.0);
        }
        let secure = self.config.secure;
        let rng: &mut dyn RngCore = if secure { self.entropy.get()? } else { &mut self.rng };
        Ok(match (self.lattice, self.config.noise) {
            (Some(lat), _) => match lat.kind() {
                SecureKind::Laplace { t } => discrete_laplace(rng, t) as f64,
                SecureKind::Gaussian { var } => discrete_gaussian(rng, var) as f64,
                _ => 0.0,
            },
            (None, NoiseSpec::Laplace { scale }) => laplace(rng, scale),
            (None, NoiseSpec::Gaussian { sigma }) => sigma * standard_normal(rng),
            (None, _) => 0.0,
        })
    }

    /// Releases the finished phase's sum with its own noise draw.
    fn finish_phase(&mut self, cur: Current) -> Result<()> {
        let noise = self.draw()?;
        let value = match self.lattice {
            Some(lat) => (cur.steps as f64 + noise) * lat.step(),
            None => cur.sum + noise,
        };
        let a = cur.arm;
        if self.fast.record {
            self.releases.push(Release { arm: a, start: cur.start, end: self.t - 1, len: cur.len, value });
        }
        self.pulls[a] += cur.len;
        self.phases[a] += 1;
        self.released_sum[a] += value;
        self.last_value[a] = value;
        self.last_len[a] = cur.len;
        if let PhasedIndex::Thompson { reward_var, noise_var } = self.config.index {
            let (m, n, phases) = self.stats(a);
            self.post_mean[a] = m;
            self.post_sd[a] = (reward_var / n + phases * noise_var / (n * n)).sqrt();
        }
        if let PhaseSchedule::Epochs { gaps, .. } = &self.config.schedule {
            self.epoch_means[a] = value / cur.len as f64;
            self.epoch_next = a + 1;
            if !(self.epoch_next..self.config.k).any(|b| self.active[b]) {
                // End of the epoch: eliminate on the released means.
                let gap = gaps[self.epoch.min(gaps.len() - 1)];
                let best = (0..self.config.k)
                    .filter(|&b| self.active[b])
                    .map(|b| self.epoch_means[b])
                    .fold(f64::NEG_INFINITY, f64::max);
                for b in 0..self.config.k {
                    if self.active[b] && self.epoch_means[b] < best - gap {
                        self.active[b] = false;
                    }
                }
                self.epoch += 1;
                self.epoch_next = 0;
            }
        }
        Ok(())
    }

    /// Draws future noise from `seeds` (the fork of a learner).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("phased_mab");
        self.entropy = EntropyCell::default();
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        crate::state::encode(self)
    }

    /// Restores an engine written by [`PhasedMab::to_bytes`], refusing
    /// ([`Error::Decode`]) a state whose parts disagree (see
    /// [`PhasedMab::check_state`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let engine = crate::state::decode::<Self>(bytes)?.derive();
        engine.check_state()?;
        Ok(engine)
    }

    /// Every invariant a decoded state must meet for the next rounds to
    /// run as they would have: the configuration passes the constructor's
    /// checks (a reference engine is built from it), the lattice is the
    /// configuration's, every per-arm buffer has K entries, the tie ranks
    /// are a permutation, the phases (committed or open) are consistent
    /// with the round count (finished pulls plus pulls of running phases
    /// make t <= horizon), every index names an arm, and the released
    /// values are finite.
    #[allow(clippy::float_cmp)] // `up` is an exact power of two
    fn check_state(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Decode(format!("inconsistent phased bandit state: {what}")));
        let reference = PhasedMab::new(self.config.clone(), &SeedSequence::from_seed(0))
            .map_err(|e| Error::Decode(format!("phased bandit state with an invalid configuration: {e}")))?;
        let k = self.config.k;
        if self.lattice != reference.lattice || self.up != reference.up {
            return bad("the lattice differs from the configuration's noise");
        }
        let lengths = [
            self.pulls.len(),
            self.phases.len(),
            self.grid_x.len(),
            self.released_sum.len(),
            self.last_value.len(),
            self.last_len.len(),
            self.tie_rank.len(),
            self.active.len(),
            self.epoch_means.len(),
            self.open.len(),
            self.post_mean.len(),
            self.post_sd.len(),
            self.retired.len(),
        ];
        if lengths.iter().any(|&n| n != k) {
            return bad("a per-arm buffer does not have K entries");
        }
        if self.retired.iter().all(|&r| r)
            || self.current.is_some_and(|c| c.arm < k && self.retired[c.arm])
            || self.pending.is_some_and(|a| a < k && self.retired[a])
            || self.open.iter().zip(&self.retired).any(|(c, &r)| r && c.len != 0)
        {
            return bad("every arm is retired, or a retired arm has a running phase");
        }
        let mut seen = vec![false; k];
        for &r in &self.tie_rank {
            match seen.get_mut(r as usize) {
                Some(s) if !*s => *s = true,
                _ => return bad("the tie ranks are not a permutation of the arms"),
            }
        }
        if self.t > self.config.horizon || self.last_arm >= k {
            return bad("round or last arm out of range");
        }
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if !(finite(&self.released_sum)
            && finite(&self.last_value)
            && finite(&self.epoch_means)
            && finite(&self.post_mean)
            && finite(&self.post_sd)
            && self.post_sd.iter().all(|&x| x >= 0.0)
            && self.grid_x.iter().all(|&x| x.is_finite() && x >= 1.0))
        {
            return bad("a released value, posterior or phase grid entry is not finite");
        }
        self.check_phases()
    }

    /// The phase part of [`PhasedMab::check_state`]: per-arm counts agree,
    /// the running or open phases are consistent with the round count, and
    /// the epoch state (DP-SE) and the release records with the schedule.
    fn check_phases(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Decode(format!("inconsistent phased bandit state: {what}")));
        let k = self.config.k;
        let mut counted: u64 = 0;
        for a in 0..k {
            let (n, phases, last) = (self.pulls[a], self.phases[a], self.last_len[a]);
            if (n == 0) != (phases == 0) || (n == 0) != (last == 0) || last > n || u64::from(phases) > n {
                return bad("an arm's pulls, phases and last phase length disagree");
            }
            counted = match counted.checked_add(n) {
                Some(c) => c,
                None => return bad("pull counts overflow"),
            };
        }
        let phase_ok = |c: &Current, arm: usize| {
            c.arm == arm
                && c.len >= 1
                && c.done < c.len
                && c.start <= self.t
                && c.steps >= 0
                && (c.steps as f64) <= c.done as f64 * self.up
                && c.sum.is_finite()
        };
        let mut running: u64 = 0;
        if self.config.commit {
            if self.pending.is_some() || self.open.iter().any(|c| c.len != 0) {
                return bad("an open phase or a pending arm in committed play");
            }
            if let Some(c) = &self.current {
                if c.arm >= k || !phase_ok(c, c.arm) || c.start + c.done != self.t {
                    return bad("the running phase is inconsistent");
                }
                running = c.done;
            }
        } else {
            if self.current.is_some() {
                return bad("a committed phase in uncommitted play");
            }
            for (a, c) in self.open.iter().enumerate() {
                if c.len != 0 {
                    if !phase_ok(c, a) {
                        return bad("an open phase is inconsistent");
                    }
                    running += c.done;
                }
            }
            if let Some(a) = self.pending {
                if a >= k || self.open[a].len == 0 {
                    return bad("the pending arm has no open phase");
                }
            }
        }
        if counted.checked_add(running) != Some(self.t) {
            return bad("the pulls of finished and running phases do not add up to the round count");
        }
        if let PhaseSchedule::Epochs { .. } = self.config.schedule {
            if self.epoch_next >= k || !(self.epoch_next..k).any(|b| self.active[b]) {
                return bad("the epoch position or the active arms are out of range");
            }
            if let Some(c) = &self.current {
                if !self.active[c.arm] {
                    return bad("the running phase's arm was eliminated");
                }
            }
        } else if self.epoch != 0 || self.epoch_next != 0 || self.active.iter().any(|&x| !x) {
            return bad("epoch state outside the epoch schedule");
        }
        if self.fast.record
            && self.releases.iter().map(|r| u64::from(r.arm < k && r.len >= 1)).sum::<u64>()
                != self.phases.iter().map(|&p| u64::from(p)).sum::<u64>()
        {
            return bad("the release records disagree with the phase counts");
        }
        if !self.fast.record && !self.releases.is_empty() {
            return bad("release records of an engine that keeps none");
        }
        Ok(())
    }

    /// For audits: `count` independent runs (seeds `seed`, run index) that
    /// receive `rewards[i]` in round i whatever arm is played; returns, per
    /// run, the released value of the phase containing round `round`
    /// (NaN when that phase does not end within the rewards given).
    pub fn audit_runs(
        config: &PhasedMabConfig,
        rewards: &[f64],
        round: usize,
        count: usize,
        seed: u64,
    ) -> Result<Vec<f64>> {
        let root = SeedSequence::from_seed(seed);
        // Runs are independent (one seed each): in parallel.
        (0..count)
            .into_par_iter()
            .map(|r| {
                let mut e = PhasedMab::new(config.clone(), &root.child("audit", r as u64))?;
                let mut arm_at_round = usize::MAX;
                for (i, &y) in rewards.iter().enumerate() {
                    let a = e.select_arm()?;
                    if i == round {
                        arm_at_round = a;
                    }
                    e.observe(a, y)?;
                }
                Ok(e.releases
                    .iter()
                    .find(|rel| rel.arm == arm_at_round && (rel.start as usize) <= round && round <= rel.end as usize)
                    .map_or(f64::NAN, |rel| rel.value))
            })
            .collect()
    }
}

/// The index and schedule parameters, and that they fit together
/// (alpha = 0 is an exact sentinel: phases of one round).
#[allow(clippy::float_cmp)]
fn check_rules(config: &PhasedMabConfig) -> Result<()> {
    match &config.index {
        PhasedIndex::Optimistic { divergence_epsilon, explore, linear, root, .. } => {
            check_finite("index", &[*explore, *linear, *root])?;
            if *explore < 0.0 || *linear < 0.0 || *root < 0.0 {
                return Err(Error::invalid("index", "coefficients must be >= 0"));
            }
            check_divergence(*divergence_epsilon)?;
        }
        PhasedIndex::Imed { divergence_epsilon } => check_divergence(*divergence_epsilon)?,
        PhasedIndex::Thompson { reward_var, noise_var } => {
            if !(reward_var.is_finite() && *reward_var > 0.0 && noise_var.is_finite() && *noise_var >= 0.0) {
                return Err(Error::invalid("index", "Thompson variances must be finite, reward_var > 0"));
            }
        }
        PhasedIndex::Elimination => {
            if !config.commit {
                return Err(Error::invalid("commit", "elimination commits each arm for its epoch"));
            }
        }
    }
    match (&config.schedule, &config.index) {
        (PhaseSchedule::Geometric { alpha, .. }, index) => {
            if matches!(index, PhasedIndex::Elimination) {
                return Err(Error::invalid("schedule", "elimination needs the epoch schedule"));
            }
            if !(alpha.is_finite() && (*alpha > 1.0 || *alpha == 0.0)) {
                return Err(Error::invalid("alpha", format!("must be > 1 (or 0: phases of one round), got {alpha}")));
            }
        }
        (PhaseSchedule::Adaptive { alpha, min_len, .. }, index) => {
            if matches!(index, PhasedIndex::Elimination) {
                return Err(Error::invalid("schedule", "elimination needs the epoch schedule"));
            }
            if !(alpha.is_finite() && *alpha > 1.0) {
                return Err(Error::invalid("alpha", format!("must be > 1, got {alpha}")));
            }
            if *min_len == 0 || *min_len > config.horizon {
                return Err(Error::invalid(
                    "min_len",
                    format!("must lie in [1, horizon = {}], got {min_len}", config.horizon),
                ));
            }
        }
        (PhaseSchedule::Epochs { pulls, gaps }, index) => {
            if !matches!(index, PhasedIndex::Elimination) {
                return Err(Error::invalid("schedule", "the epoch schedule needs the elimination rule"));
            }
            if pulls.is_empty() || pulls.len() != gaps.len() || pulls.contains(&0) {
                return Err(Error::invalid("schedule", "needs equally long, non-empty epochs of >= 1 pull"));
            }
            check_finite("schedule", gaps)?;
        }
    }
    Ok(())
}

fn check_divergence(eps: Option<f64>) -> Result<()> {
    match eps {
        Some(e) if !(e.is_finite() && e > 0.0) => {
            Err(Error::invalid("divergence_epsilon", format!("must be finite and > 0, got {e}")))
        }
        _ => Ok(()),
    }
}

impl super::LearnerFactory for PhasedMabConfig {
    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn build(&self, seeds: &SeedSequence) -> Result<Box<dyn Learner>> {
        Ok(Box::new(PhasedMab::new(self.clone(), seeds)?))
    }
}

impl Learner for PhasedMab {
    #[inline]
    fn select(&mut self, set: &DecisionSet) -> Result<usize> {
        if set.k != self.config.k || set.d != 0 {
            return Err(Error::invalid(
                "decision_set",
                format!(
                    "this K-armed learner needs k = {} arms without features, got k = {}, d = {}",
                    self.config.k, set.k, set.d
                ),
            ));
        }
        self.select_arm()
    }

    #[inline]
    fn update(&mut self, set: &DecisionSet, index: usize, feedback: Feedback<'_>) -> Result<()> {
        if index >= set.k {
            return Err(Error::invalid("index", format!("must be < {}, got {index}", set.k)));
        }
        match feedback {
            Feedback::Reward(y) => self.observe(index, y),
            Feedback::Losses(_) => Err(Error::invalid("feedback", "K-armed learners take bandit feedback")),
        }
    }
}

#[path = "phased_mab_arms.rs"]
mod arms;

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are the point of these tests
mod tests {
    use super::*;
    use crate::env::{ArmReward, Environment, KArmedBandit, KArmedConfig};
    use crate::sim::run_episode;

    fn config(index: PhasedIndex, schedule: PhaseSchedule, noise: NoiseSpec) -> PhasedMabConfig {
        PhasedMabConfig {
            k: 3,
            horizon: 20_000,
            index,
            schedule,
            noise,
            secure: false,
            commit: true,
            rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
        }
    }

    fn dpklucb(eps: f64) -> PhasedMabConfig {
        config(
            PhasedIndex::Optimistic { kl: true, divergence_epsilon: Some(eps), explore: 1.0, linear: 0.0, root: 0.0 },
            PhaseSchedule::Geometric { alpha: 2.0, forget: false },
            NoiseSpec::Laplace { scale: 1.0 / eps }.on_lattice(19).unwrap(),
        )
    }

    #[test]
    fn d_eps_matches_hand_values() {
        assert!((d_eps(0.3, 1.0, Some(1.0)) - 0.7).abs() < 1e-12);
        // z* = 0.75 e^-1 / (0.25 + 0.75 e^-1) = 0.5246 > 0.5: closed form.
        let want = -0.5 - (0.25f64 + 0.75 * (-1.0f64).exp()).ln();
        assert!((d_eps(0.5, 0.75, Some(1.0)) - want).abs() < 1e-12);
        // x above z*: plain kl.
        assert!((d_eps(0.625, 0.75, Some(1.0)) - kl_bernoulli(0.625, 0.75)).abs() < 1e-15);
        assert!((d_eps(0.4, 0.4, Some(1.0))).abs() < 1e-15);
        assert!(kl_upper(0.5, 10.0, Some(1.0)) == 1.0);
        let u = kl_upper(0.5, 0.1, None);
        assert!((kl_bernoulli(0.5, u) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn bracketed_bisection_equals_the_plain_one() {
        let mut rng = SeedSequence::from_seed(9).stream("test");
        for i in 0..200_000 {
            let m: f64 = if i % 7 == 0 { 0.0 } else { rng.random() };
            let c = 10f64.powf(-8.0 + 9.0 * rng.random::<f64>());
            let eps = if i % 2 == 0 { None } else { Some(10f64.powf(-2.0 + 2.5 * rng.random::<f64>())) };
            assert_eq!(kl_upper(m, c, eps).to_bits(), kl_upper_plain(m, c, eps).to_bits(), "m {m} c {c} eps {eps:?}");
        }
    }

    /// KL-UCB (phases of one round, no noise) and DP-KLUCB: every decision
    /// of the cached / filtered scheme equals the argmax of all the scores.
    #[test]
    fn lazy_kl_decisions_equal_full_scoring() {
        for (alpha, eps, means) in [
            (0.0, None, vec![0.75, 0.625, 0.5, 0.375, 0.25]),
            (0.0, None, vec![0.5, 0.45, 0.45, 0.45]),
            (1.5, Some(0.5), vec![0.75, 0.7, 0.7, 0.7, 0.7]),
        ] {
            let mut cfg = config(
                PhasedIndex::Optimistic { kl: true, divergence_epsilon: eps, explore: 1.0, linear: 0.0, root: 0.0 },
                PhaseSchedule::Geometric { alpha, forget: false },
                NoiseSpec::Zero,
            );
            cfg.k = means.len();
            cfg.horizon = 300_000;
            let seeds = SeedSequence::from_seed(5);
            let mut e = PhasedMab::new(cfg, &seeds).unwrap();
            let mut env = KArmedBandit::new(KArmedConfig { means, reward: ArmReward::Bernoulli }, &seeds).unwrap();
            let mut set = DecisionSet::default();
            let mut lazy = 0;
            for t in 1..=300_000u64 {
                env.next_round(t, &mut set).unwrap();
                let want = if e.current.is_none() {
                    let s = e.scores();
                    Some(e.argmax(&s))
                } else {
                    None
                };
                let a = e.select_arm().unwrap();
                if let Some(w) = want {
                    assert_eq!(a, w, "round {t}");
                    lazy += 1;
                }
                let mut y = [0.0];
                env.shared_rewards(&[a], &mut y).unwrap();
                e.observe(a, y[0]).unwrap();
            }
            assert!(lazy > 100);
        }
    }

    /// Runs of a committed phase, handed over at once, equal the rounds
    /// one at a time: rewards in [0, 1] and outside (clipped), counted runs
    /// of 0/1 rewards on the lattice, in floating point and with a reward
    /// range whose 0 and 1 normalise elsewhere; bad runs are refused.
    #[test]
    fn phase_runs_equal_rounds_one_at_a_time() {
        let base = dpklucb(1.0);
        let float = PhasedMabConfig { noise: NoiseSpec::Laplace { scale: 1.0 }, ..base.clone() };
        let wide =
            PhasedMabConfig { rewards: RewardRange { lo: -1.0, hi: 2.0, policy: RewardPolicy::Clip }, ..base.clone() };
        let float_wide = PhasedMabConfig { noise: NoiseSpec::Laplace { scale: 1.0 }, ..wide.clone() };
        for cfg in [base, float, wide, float_wide] {
            let seeds = SeedSequence::from_seed(4);
            let (mut runs, mut rounds) =
                (PhasedMab::new(cfg.clone(), &seeds).unwrap(), PhasedMab::new(cfg, &seeds).unwrap());
            let mut rng = SeedSequence::from_seed(8).stream("rewards");
            let mut played = 0;
            while let Some((arm, left)) = runs.committed_phase() {
                let n = left.min(1 + rng.random_range(0..40));
                let binary = played % 2 == 0;
                let ys: Vec<f64> = (0..n)
                    .map(|_| {
                        if binary {
                            f64::from(u8::from(rng.random::<f64>() < 0.6))
                        } else {
                            rng.random_range(-0.5..1.5)
                        }
                    })
                    .collect();
                if binary && runs.takes_counted_runs() {
                    runs.observe_counted_run(n, ys.iter().filter(|&&y| y == 1.0).count() as u64).unwrap();
                } else {
                    let mut it = ys.iter();
                    runs.observe_run(n, || Ok(*it.next().unwrap())).unwrap();
                }
                for &y in &ys {
                    let a = rounds.select_arm().unwrap();
                    assert_eq!(a, arm);
                    rounds.observe(a, y).unwrap();
                }
                played += 1;
            }
            assert_eq!(runs.t(), 20_000);
            assert!(runs.releases().len() > 20);
            assert_eq!(runs.to_bytes(), rounds.to_bytes());
        }
        let mut e = PhasedMab::new(dpklucb(1.0), &SeedSequence::from_seed(4)).unwrap();
        let (_, left) = e.committed_phase().unwrap();
        assert!(e.observe_counted_run(left + 1, 0).is_err());
        assert!(e.observe_counted_run(1, 2).is_err());
        assert!(e.observe_run(left + 1, || Ok(0.5)).is_err());
        // A reward refused mid-run: the rounds before it are recorded.
        let mut strict = dpklucb(1.0);
        strict.rewards.policy = RewardPolicy::Error;
        let mut e = PhasedMab::new(strict.clone(), &SeedSequence::from_seed(4)).unwrap();
        while e.committed_phase().unwrap().1 < 3 {
            let a = e.select_arm().unwrap();
            e.observe(a, 1.0).unwrap();
        }
        let t = e.t();
        let mut ys = [0.5, 2.0, 0.5].into_iter();
        let err = e.observe_run(3, || Ok(ys.next().unwrap())).unwrap_err();
        assert!(err.to_string().contains("outside the declared reward range"), "{err}");
        assert_eq!(e.t(), t + 1);
        strict.rewards.lo = 0.5;
        assert!(!PhasedMab::new(strict, &SeedSequence::from_seed(4)).unwrap().takes_counted_runs());
        let mut open = dpklucb(1.0);
        open.commit = false;
        let mut e = PhasedMab::new(open, &SeedSequence::from_seed(4)).unwrap();
        assert_eq!(e.committed_phase(), None);
        assert!(e.observe_run(1, || Ok(0.5)).is_err());
    }

    #[test]
    fn adaptive_grid_floors_the_phase_length() {
        let mut cfg = dpklucb(1.0);
        cfg.schedule = PhaseSchedule::Adaptive { alpha: 1.1, min_len: 4, forget: false };
        let mut e = PhasedMab::new(cfg, &SeedSequence::from_seed(1)).unwrap();
        for _ in 0..5000 {
            let a = e.select_arm().unwrap();
            e.observe(a, 0.3).unwrap();
        }
        for a in 0..3 {
            let mut n = 0u64;
            let mut x = 1.0f64;
            for (l, rel) in e.releases().iter().filter(|r| r.arm == a).enumerate() {
                // n_next = max(n + 4, ceil(x 1.1)), x <- max(x 1.1, n_next); the first phase 4 pulls.
                let want = if l == 0 {
                    4
                } else {
                    let target = (n + 4).max((x * 1.1).ceil() as u64);
                    x = (x * 1.1).max(target as f64);
                    target - n
                };
                assert_eq!(rel.len, want, "arm {a} phase {l}");
                n += rel.len;
            }
        }
        let lens: Vec<u64> = e.releases().iter().map(|r| r.len).collect();
        assert!(lens.iter().all(|&l| l >= 4) && lens.iter().any(|&l| l > 40), "{lens:?}");
    }

    #[test]
    fn released_values_lie_on_the_lattice_and_phases_double() {
        let mut e = PhasedMab::new(dpklucb(1.0), &SeedSequence::from_seed(1)).unwrap();
        for _ in 0..500 {
            let a = e.select_arm().unwrap();
            e.observe(a, 0.3).unwrap();
        }
        let step = 2f64.powi(-19);
        for rel in e.releases() {
            assert_eq!((rel.value / step).fract(), 0.0);
        }
        for a in 0..3 {
            let lens: Vec<u64> = e.releases().iter().filter(|r| r.arm == a).map(|r| r.len).collect();
            for (l, len) in lens.iter().enumerate() {
                assert_eq!(*len, if l == 0 { 1 } else { 1 << (l - 1) });
            }
        }
    }

    #[test]
    fn dp_klucb_learns() {
        let seeds = SeedSequence::from_seed(2);
        let mut e = PhasedMab::new(dpklucb(1.0), &seeds).unwrap();
        let mut env =
            KArmedBandit::new(KArmedConfig { means: vec![0.3, 0.8, 0.5], reward: ArmReward::Bernoulli }, &seeds)
                .unwrap();
        let trace = run_episode(&mut e, &mut env, 20_000, 1000, None).unwrap();
        assert!(*trace.regret.last().unwrap() < 600.0, "{:?}", trace.regret.last());
        assert!(matches!(e.select_arm(), Err(Error::State(_))));
    }

    #[test]
    fn dp_se_eliminates() {
        let cfg = config(
            PhasedIndex::Elimination,
            PhaseSchedule::Epochs { pulls: vec![100, 400, 1600], gaps: vec![0.25, 0.125, 0.0625] },
            NoiseSpec::Laplace { scale: 1.0 },
        );
        let seeds = SeedSequence::from_seed(3);
        let mut e = PhasedMab::new(cfg, &seeds).unwrap();
        let mut env =
            KArmedBandit::new(KArmedConfig { means: vec![0.9, 0.1, 0.5], reward: ArmReward::Bernoulli }, &seeds)
                .unwrap();
        run_episode(&mut e, &mut env, 20_000, 1000, None).unwrap();
        assert_eq!(e.active(), &[true, false, false]);
    }

    #[test]
    fn bad_configs_are_refused_and_state_round_trips() {
        let mut c = dpklucb(1.0);
        c.k = MAX_ARMS + 1;
        assert!(PhasedMab::new(c, &SeedSequence::from_seed(0)).is_err());
        let mut c = dpklucb(1.0);
        c.schedule = PhaseSchedule::Geometric { alpha: 1.0, forget: false };
        assert!(PhasedMab::new(c, &SeedSequence::from_seed(0)).is_err());
        let mut c = dpklucb(1.0);
        c.rewards.policy = RewardPolicy::Unchecked;
        assert!(PhasedMab::new(c, &SeedSequence::from_seed(0)).is_err());
        let mut e = PhasedMab::new(dpklucb(0.5), &SeedSequence::from_seed(4)).unwrap();
        for _ in 0..37 {
            let a = e.select_arm().unwrap();
            e.observe(a, 0.6).unwrap();
        }
        let mut back = PhasedMab::from_bytes(&e.to_bytes()).unwrap();
        for _ in 0..300 {
            let (a, b) = (e.select_arm().unwrap(), back.select_arm().unwrap());
            assert_eq!(a, b);
            e.observe(a, 0.6).unwrap();
            back.observe(b, 0.6).unwrap();
        }
        assert_eq!(e.releases(), back.releases());
    }
}
