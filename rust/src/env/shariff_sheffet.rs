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
//!
//! The sets are drawn through the law's factorisation (see
//! `fill_set_with_this_build`): each action's inner product t with theta*
//! from its marginal on the sphere, restricted to the band, then a uniform
//! direction orthogonal to theta*. That is the same law as rejecting
//! uniform points of the sphere outside the band, with fewer random
//! draws (the band's rejections are never drawn); a seed fixes the sets
//! of this construction, not those of a rejection sampler. For d = 3, 4, 5
//! the direction comes from uniform angles instead of normals (the same
//! law; see `angle_uniforms`).

use rand::Rng;
use rand_distr::StandardNormal;

use super::circle::circle_point;
use super::{DecisionSet, Environment, Feedback};
use crate::error::{Error, Result};
use crate::rng::{SeedSequence, SimulationNormals, SimulationRng, SimulationUniforms};

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

impl super::EnvironmentFactory for ShariffSheffetConfig {
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
    /// The current set's inner products <x, theta*> (the first k entries;
    /// the rest is `draw_dots`'s slack, so that the rejection sampler
    /// writes here directly).
    means: Vec<f64>,
    /// Normals (and the optimal index) of the decision sets.
    contexts: SimulationNormals,
    /// Uniforms of the inner-product proposals and (d = 3, 4, 5) of the
    /// directions (see [`angle_uniforms`]).
    dot_uniforms: SimulationUniforms,
    rewards: SimulationRng,
    /// Derived from theta* or overwritten each round, so not serialized:
    /// the reflection into theta*'s orthogonal complement (see
    /// `reflector`), one row's normals, and directions.
    #[serde(skip)]
    reflector: Vec<f64>,
    #[serde(skip)]
    reflector_scale: f64,
    #[serde(skip)]
    normals: Vec<f64>,
    /// Directions from angles (d = 3, 4, 5) of up to `DIRECTION_CHUNK`
    /// groups, each lane-minor.
    #[serde(skip)]
    directions: Vec<f64>,
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
            || env.means.len() < env.k
            || !env.contexts.is_consistent()
            || !env.dot_uniforms.is_consistent()
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
        // A decision set must fit: k = 2^40 would try to allocate k x d
        // floats and abort the whole process.
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
            dot_uniforms: seeds.simulation_uniforms("environment/dots"),
            rewards: seeds.simulation_stream("environment/rewards"),
            reflector: Vec::new(),
            reflector_scale: 0.0,
            normals: Vec::new(),
            directions: Vec::new(),
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
        &self.means[..self.k]
    }
}

/// Rows generated together by [`ShariffSheffetEnv::fill_set_with_this_build`].
pub(crate) const GROUP: usize = 4;

/// What one group's rows are made of, lane l for row `first + l`: t, the
/// factor sqrt(1 - t^2) / ||w||, c <v, (0, w)>, and the direction's
/// coordinates lane-minor (`w[j * GROUP + l]`).
pub(crate) struct GroupLanes<'a> {
    pub t: &'a [f64; GROUP],
    pub factor: &'a [f64; GROUP],
    pub proj: &'a [f64; GROUP],
    pub w: &'a [f64],
}

/// The band test of `draw_dots`: a proposal t = lo + width u is accepted
/// when a^2 top < (1 - t^2)^power, for u, a uniform (the squared ratio of
/// t's density on the sphere to its largest value on the band).
pub(crate) struct DotTest {
    pub lo: f64,
    pub width: f64,
    pub top: f64,
    /// d - 3: -1 at d = 2, where the density is 1 / (1 - t^2).
    pub power: i32,
}

impl DotTest {
    /// The test for the band [lo, hi] at dimension d: (1 - t^2)^(d-3) is
    /// monotone in |t|, so its largest value on the band, `top`, is at an
    /// end or at 0.
    pub fn new(lo: f64, hi: f64, d: usize) -> Self {
        let mut test = DotTest { lo, width: hi - lo, top: 0.0, power: i32::try_from(d).unwrap_or(i32::MAX) - 3 };
        test.top = test.density(lo).max(test.density(hi)).max(if lo <= 0.0 && hi >= 0.0 { 1.0 } else { 0.0 });
        test
    }

    /// (1 - t^2)^power by binary powering (and a division for a negative
    /// power), the same steps in every build: O(log d) multiplications.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn density(&self, t: f64) -> f64 {
        let (mut base, mut p, mut e) = (1.0 - t * t, 1.0, self.power.unsigned_abs());
        while e > 0 {
            if e & 1 == 1 {
                p *= base;
            }
            base *= base;
            e >>= 1;
        }
        if self.power < 0 {
            1.0 / p
        } else {
            p
        }
    }
}

/// The set builder's vector kernels. Every implementation performs the same
/// operations in the same order (no fused multiply-add), so all draw the
/// same bits.
pub(crate) trait SetKernels {
    /// Computes a group's rows x = t theta* + factor ((0, w) - proj v) and
    /// stores them row-major into `out` (`GROUP * D` entries).
    fn rows<const D: usize>(lanes: &GroupLanes<'_>, theta: &[f64; D], v: &[f64; D], out: &mut [f64]);

    /// Writes the proposals t = lo + width u[i] that `test` accepts with
    /// a[i] to the front of `window`, in order, and returns how many; the
    /// rest of `window` is scratch.
    fn keep_accepted(test: &DotTest, u: &Proposals, a: &Proposals, window: &mut Proposals) -> usize;
}

/// [`SetKernels`] in portable code.
pub(crate) struct PortableKernels;

impl SetKernels for PortableKernels {
    /// Lane-minor, then transposed entry by entry.
    #[allow(clippy::inline_always, clippy::needless_range_loop)]
    #[inline(always)]
    fn rows<const D: usize>(lanes: &GroupLanes<'_>, theta: &[f64; D], v: &[f64; D], out: &mut [f64]) {
        let GroupLanes { t, factor, proj, w } = *lanes;
        let out = &mut out[..GROUP * D];
        let mut x = [[0.0; GROUP]; D];
        for i in 0..D {
            for l in 0..GROUP {
                let wi = if i == 0 { 0.0 } else { w[(i - 1) * GROUP + l] };
                x[i][l] = t[l] * theta[i] + factor[l] * (wi - proj[l] * v[i]);
            }
        }
        for l in 0..GROUP {
            for i in 0..D {
                out[l * D + i] = x[i][l];
            }
        }
    }

    /// Branch-free: each proposal is written at the next free slot, which
    /// advances only when it is accepted (the slot never passes the
    /// proposal's own index, so the mask keeps the stores in bounds
    /// without changing them).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn keep_accepted(test: &DotTest, u: &Proposals, a: &Proposals, window: &mut Proposals) -> usize {
        let mut j = 0;
        for (&u, &a) in u.iter().zip(a) {
            let t = test.lo + test.width * u;
            window[j & (PROPOSALS - 1)] = t;
            j += usize::from(a * a * test.top < test.density(t));
        }
        j
    }
}

/// Groups whose directions `fill_set_with` draws before their rows.
const DIRECTION_CHUNK: usize = 16;

/// Inner-product proposals drawn together by `draw_dots`.
pub(crate) const PROPOSALS: usize = 16;

/// One batch of `draw_dots`'s proposals (or of their uniforms).
pub(crate) type Proposals = [f64; PROPOSALS];
const _: () = assert!(PROPOSALS.is_power_of_two() && PROPOSALS >= GROUP);

/// Uniforms that make one uniform direction on theta*'s orthogonal
/// complement, the unit sphere S^(d-2), without rejection, or 0 where the
/// direction is d - 1 normalised normals. With u, v, v' uniform and
/// (cos 2 pi v, sin 2 pi v) from [`circle_point`]:
/// - S^1 (d = 3): (cos 2 pi v, sin 2 pi v);
/// - S^2 (d = 4): (r cos 2 pi v, r sin 2 pi v, 2u - 1), r = 2 sqrt(u (1 - u))
///   = sqrt(1 - (2u - 1)^2): the height of a uniform point of S^2 is
///   uniform (Archimedes), its longitude independent and uniform;
/// - S^3 (d = 5): (sqrt(u) cos 2 pi v, sqrt(u) sin 2 pi v,
///   sqrt(1 - u) cos 2 pi v', sqrt(1 - u) sin 2 pi v'): the squared norm of
///   a uniform point of S^3's first two coordinates is Beta(1, 1), uniform,
///   and the two pairs' angles are independent and uniform.
///
/// At d = 5 (App. D.2) a direction costs 3 uniforms and two polynomial
/// circle points, where 4 normals cost about 16 uniforms' worth and two
/// disk points by rejection (the previous method) 5 uniforms and a
/// branch-free rejection loop.
const fn angle_uniforms(d: usize) -> usize {
    match d {
        3 => 1,
        4 => 2,
        5 => 3,
        _ => 0,
    }
}

/// `GROUP` uniform directions on S^(D-2) from `angle_uniforms(D) * GROUP`
/// uniforms (see [`angle_uniforms`]), times the rows' factors
/// sqrt(1 - t^2), lane-minor into `out` (`out[j * GROUP + l]`, j < D - 1):
/// lane l reads uniforms l, GROUP + l and 2 GROUP + l. At d = 5 the
/// factor goes under the radii's square roots (two square roots per lane,
/// not three: the square-root unit is the one a group waits on).
#[allow(clippy::inline_always)]
#[inline(always)]
fn angle_directions<const D: usize>(u: &[f64], t: &[f64; GROUP], out: &mut [f64]) {
    let (u, out) = (&u[..angle_uniforms(D) * GROUP], &mut out[..(D - 1) * GROUP]);
    for l in 0..GROUP {
        let across = 1.0 - t[l] * t[l];
        match D {
            3 => {
                let (cos, sin) = circle_point(u[l]);
                let f = across.sqrt();
                (out[l], out[GROUP + l]) = (f * cos, f * sin);
            }
            4 => {
                let (cos, sin) = circle_point(u[GROUP + l]);
                let (f, h) = (across.sqrt(), 2.0 * u[l] - 1.0);
                let r = 2.0 * (u[l] * (1.0 - u[l])).sqrt();
                (out[l], out[GROUP + l], out[2 * GROUP + l]) = (f * (r * cos), f * (r * sin), f * h);
            }
            5 => {
                let ((cos, sin), (cos2, sin2)) = (circle_point(u[GROUP + l]), circle_point(u[2 * GROUP + l]));
                let (r, r2) = ((across * u[l]).sqrt(), (across * (1.0 - u[l])).sqrt());
                (out[l], out[GROUP + l]) = (r * cos, r * sin);
                (out[2 * GROUP + l], out[3 * GROUP + l]) = (r2 * cos2, r2 * sin2);
            }
            _ => unreachable!("angle_uniforms is 0 for d = {D}"),
        }
    }
}

/// Smallest squared norm of a direction's normals that is normalised
/// (anything below is a null event, about 2^-52 per normal: the row's
/// normals, or in the fixed-d path the whole set, are drawn again).
const MIN_NORM2: f64 = 1e-200;

impl ShariffSheffetEnv {
    /// The Householder reflection H = I - c v v^T, v = theta* +
    /// sign(theta*_0) e_0, c = 2 / (v^T v), which maps e_0 to
    /// -sign(theta*_0) theta*: so (0, w) -> H (0, w) maps R^(d-1) onto
    /// theta*'s orthogonal complement, preserving norms (v^T v >= 1, so
    /// nothing cancels). Returns (v, c); applied in O(d), never formed.
    fn reflector(theta: &[f64]) -> (Vec<f64>, f64) {
        let mut v = theta.to_vec();
        v[0] += if theta[0] >= 0.0 { 1.0 } else { -1.0 };
        let c = 2.0 / v.iter().map(|x| x * x).sum::<f64>();
        (v, c)
    }

    /// A whole decision set (App. D's law, sampled through its
    /// factorisation): for x uniform on the unit sphere of R^d, t =
    /// <x, theta*> has density proportional to (1 - t^2)^((d-3)/2) on
    /// [-1, 1], and given t, x = t theta* + sqrt(1 - t^2) w with w uniform
    /// on the unit sphere of theta*'s orthogonal complement. So the optimal
    /// action takes t = r*, and each suboptimal one a t drawn from that
    /// density restricted to the band [-r*, r* - gap] (rejection from the
    /// uniform on the band, two uniforms per proposal); w is uniform on
    /// the unit sphere of R^(d-1), from angles for d = 3, 4, 5 (see
    /// [`angle_uniforms`]) and from d - 1 normalised normals otherwise, mapped
    /// into theta*'s orthogonal complement by the reflection of
    /// [`Self::reflector`].
    ///
    /// This spends d - 1 normals (or d - 2 uniforms) per action and none
    /// on rejected proposals, where rejecting whole Gaussian vectors outside
    /// the band spent about 1.15 d normals, and the directions of `GROUP`
    /// actions are computed together (laid out lane-minor, so every step is
    /// one vector operation over the group). `D` is d when known at compile
    /// time, 0 otherwise.
    #[allow(clippy::needless_range_loop, clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn fill_set_with_this_build<const D: usize>(&mut self, best: usize, features: &mut [f64]) {
        self.fill_set_with::<D, PortableKernels>(best, features);
    }

    /// [`Self::fill_set_with_this_build`] with the rows of each group
    /// computed and stored by `S` (the AVX2 build, `avx2_fma`, passes its own).
    #[allow(clippy::needless_range_loop, clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn fill_set_with<const D: usize, S: SetKernels>(&mut self, best: usize, features: &mut [f64]) {
        let (d, k) = (if D == 0 { self.d } else { D }, self.k);
        let angles = angle_uniforms(D);
        if self.reflector.len() != d {
            (self.reflector, self.reflector_scale) = Self::reflector(&self.theta);
            // Keeps a restored state's means.
            self.means.resize(k + PROPOSALS, 0.0);
            self.normals = vec![0.0; d - 1];
            self.directions = vec![0.0; (d - 1) * GROUP * DIRECTION_CHUNK];
        }
        self.draw_dots::<S>(d, best);
        if D == 0 {
            // Large d: one row at a time (d - 1 normals of scratch).
            for (i, row) in features.chunks_exact_mut(d).enumerate() {
                self.fill_row(i, row);
            }
            return;
        }
        let theta: &[f64; D] = self.theta[..].try_into().expect("theta has d entries");
        let v: &[f64; D] = self.reflector[..].try_into().expect("reflector has d entries");
        let c = self.reflector_scale;
        let (mut first, mut null) = (0, false);
        let width = (D - 1) * GROUP;
        while first < k {
            // Directions from angles for up to DIRECTION_CHUNK groups first,
            // then the rows: computed group by group, each group's long
            // chain of latencies (circle points, projection, rows) left the
            // core waiting; in two loops of independent groups it overlaps.
            let groups = (k - first).div_ceil(GROUP).min(DIRECTION_CHUNK);
            if angles > 0 {
                for (g, out) in self.directions.chunks_exact_mut(width).take(groups).enumerate() {
                    let at = first + g * GROUP;
                    let t = self.means[at..at + GROUP].try_into().expect("GROUP entries");
                    angle_directions::<D>(self.dot_uniforms.take(angles * GROUP), t, out);
                }
            }
            for g in 0..groups {
                // Lanes past the set read the slack past the round's draws
                // (finite or not, their rows are not stored).
                let t: [f64; GROUP] = self.means[first..first + GROUP].try_into().expect("GROUP entries");
                // Lane l's j-th coordinate is w[j * GROUP + l].
                let w =
                    if angles == 0 { self.contexts.take(width) } else { &self.directions[g * width..(g + 1) * width] };
                // c <v, (0, w)> (and ||w||^2 of normals).
                let mut proj = [0.0; GROUP];
                for j in 0..D - 1 {
                    for l in 0..GROUP {
                        proj[l] += w[j * GROUP + l] * v[j + 1];
                    }
                }
                // sqrt(1 - t^2) / ||w||, as one vector division and square
                // root.
                let mut factor = [0.0; GROUP];
                if angles == 0 {
                    let mut norm2 = [0.0; GROUP];
                    for j in 0..D - 1 {
                        for l in 0..GROUP {
                            norm2[l] += w[j * GROUP + l] * w[j * GROUP + l];
                        }
                    }
                    // Null events are flagged, not branched on (a branch
                    // here, once a group, cost more than the rest of the
                    // group's arithmetic); a set with one is drawn again
                    // once complete.
                    null |= norm2.iter().fold(0u8, |b, &v| b | u8::from(v < MIN_NORM2)) != 0;
                    for l in 0..GROUP {
                        factor[l] = ((1.0 - t[l] * t[l]) / norm2[l].max(MIN_NORM2)).sqrt();
                    }
                } else {
                    // `angle_directions` applied it.
                    factor = [1.0; GROUP];
                }
                for p in &mut proj {
                    *p *= c;
                }
                let lanes = GroupLanes { t: &t, factor: &factor, proj: &proj, w: &w[..(D - 1) * GROUP] };
                let rows = (k - first).min(GROUP);
                if rows == GROUP {
                    S::rows(&lanes, theta, v, &mut features[first * D..(first + GROUP) * D]);
                } else {
                    let mut x = [[0.0; D]; GROUP];
                    S::rows(&lanes, theta, v, x.as_flattened_mut());
                    // Row by row: copies of a constant length are inlined
                    // (one of rows * D entries was a call to memmove).
                    for (r, row) in x.iter().enumerate().take(rows) {
                        let out: &mut [f64; D] =
                            (&mut features[(first + r) * D..(first + r + 1) * D]).try_into().expect("D entries");
                        *out = *row;
                    }
                }
                first += GROUP;
            }
        }
        if null {
            self.redraw_set::<D>(best, features);
        }
    }

    /// Draws the whole set again after a null event (some group's normals
    /// all but zero, so its row was not normalised). Rejecting a null event
    /// and drawing again leaves the law of the set unchanged; being flagged
    /// per set, not per row, the fixed-d loop stores nothing per group.
    #[cold]
    #[inline(never)]
    fn redraw_set<const D: usize>(&mut self, best: usize, features: &mut [f64]) {
        self.fill_set_with_this_build::<D>(best, features);
    }

    /// Row `i` alone: t = dots[i] and a fresh direction (d - 1 normals,
    /// drawn again on a null event).
    fn fill_row(&mut self, i: usize, row: &mut [f64]) {
        let w = &mut self.normals[..];
        let norm2 = loop {
            self.contexts.fill(w);
            let norm2 = w.iter().map(|v| v * v).sum::<f64>();
            if norm2 >= MIN_NORM2 {
                break norm2;
            }
        };
        let (v, t) = (&self.reflector, self.means[i]);
        let factor = ((1.0 - t * t) / norm2).sqrt();
        let proj = self.reflector_scale * w.iter().zip(&v[1..]).map(|(a, b)| a * b).sum::<f64>();
        for (c, x) in row.iter_mut().enumerate() {
            let wc = if c == 0 { 0.0 } else { w[c - 1] };
            *x = t * self.theta[c] + factor * (wc - proj * v[c]);
        }
    }

    /// The round's inner products into `means`: r* at `best`, and the
    /// suboptimal ones by rejection, `PROPOSALS` at a time (their first
    /// `PROPOSALS` uniforms give t, the next ones the acceptance test), each
    /// batch's accepted ones written at the next free slot by
    /// [`SetKernels::keep_accepted`] (`means` has `PROPOSALS` slots of slack;
    /// accepted proposals past the set's need are dropped).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn draw_dots<S: SetKernels>(&mut self, d: usize, best: usize) {
        let test = DotTest::new(-self.optimal_reward, self.optimal_reward - self.gap, d);
        let need = self.k - 1;
        let mut n = 0;
        let dots = &mut self.means[..];
        while n < need {
            let (u, a) = self.dot_uniforms.take(2 * PROPOSALS).split_at(PROPOSALS);
            let window = (&mut dots[n..n + PROPOSALS]).try_into().expect("PROPOSALS slots");
            n += S::keep_accepted(&test, u.try_into().expect("PROPOSALS"), a.try_into().expect("PROPOSALS"), window);
        }
        // r* at `best`, the suboptimal t it displaces moved to the end (the
        // suboptimal ones are i.i.d., so their order carries nothing).
        dots[need] = dots[best];
        dots[best] = self.optimal_reward;
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
                        fill_set::<$n>(self, best, &mut set.features);
                        return Ok(());
                    })*
                    _ => {}
                }
            };
        }
        fixed!(2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
        fill_set::<0>(self, best, &mut set.features);
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
        self.means().get(index).map(|m| self.optimal_reward - m)
    }
}

/// One decision set for a compile-time `D` (0: any d), by the AVX2 + FMA
/// build when the CPU has it (identical values: no fused arithmetic), else
/// by the baseline one. A free function: the dispatch's `unsafe` call
/// stays out of the environment's (deserializable) methods.
fn fill_set<const D: usize>(env: &mut ShariffSheffetEnv, best: usize, features: &mut [f64]) {
    crate::cpu_dispatch::on_avx2_fma!(avx2_fma::fill_set::<D>(env, best, features));
    env.fill_set_with_this_build::<D>(best, features);
}

/// The set builder compiled for AVX2 + FMA (entered through
/// [`crate::cpu_dispatch::on_avx2_fma!`]). Everything it calls is
/// `#[inline(always)]`, so the whole builder is generated with the features.
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use super::{DotTest, GroupLanes, Proposals, SetKernels, ShariffSheffetEnv, GROUP, PROPOSALS};
    use crate::cpu_dispatch::avx::{load_epi32, load_pd, store_pd};

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn fill_set<const D: usize>(env: &mut ShariffSheffetEnv, best: usize, features: &mut [f64]) {
        env.fill_set_with::<D, Avx2Kernels>(best, features);
    }

    /// The set builder's kernels in AVX2 (same operations, same order, same
    /// bits as the portable ones):
    /// - a group's rows with one register per coordinate (four rows),
    ///   stored through 4 x 4 transposes: the portable body is vectorised
    ///   by the compiler across coordinates instead, in half-width registers
    ///   with a shuffle per entry;
    /// - the band test four proposals at a time, the accepted ones packed
    ///   to the front of a register by a permutation looked up from the
    ///   test's mask (the portable loop spends a dozen scalar instructions
    ///   on each proposal).
    struct Avx2Kernels;

    // One register holds a group's lane of every row, or four proposals.
    const _: () = assert!(GROUP == 4 && PROPOSALS.is_multiple_of(4));

    impl SetKernels for Avx2Kernels {
        #[allow(clippy::inline_always)] // a wrapper: the call below is the kernel
        #[inline(always)]
        fn rows<const D: usize>(lanes: &GroupLanes<'_>, theta: &[f64; D], v: &[f64; D], out: &mut [f64]) {
            // `Avx2Kernels` is only used by `fill_set` above.
            crate::cpu_dispatch::within_avx2_fma!(rows_avx2::<D>(lanes, theta, v, out));
        }

        #[allow(clippy::inline_always)] // a wrapper: the call below is the kernel
        #[inline(always)]
        fn keep_accepted(test: &DotTest, u: &Proposals, a: &Proposals, window: &mut Proposals) -> usize {
            crate::cpu_dispatch::within_avx2_fma!(keep_accepted_avx2(test, u, a, window))
        }
    }

    /// For each 4-bit mask, the 32-bit lane indices that move the f64 lanes
    /// whose bits are set to the front, in order (the rest: lane 0).
    const PACK: [[i32; 8]; 16] = {
        let mut table = [[0i32; 8]; 16];
        let mut mask = 0;
        while mask < 16 {
            let (mut front, mut lane) = (0usize, 0i32);
            while lane < 4 {
                if (mask >> lane) & 1 == 1 {
                    table[mask][2 * front] = 2 * lane;
                    table[mask][2 * front + 1] = 2 * lane + 1;
                    front += 1;
                }
                lane += 1;
            }
            mask += 1;
        }
        table
    };

    #[target_feature(enable = "avx2,fma")]
    fn keep_accepted_avx2(test: &DotTest, u: &Proposals, a: &Proposals, window: &mut Proposals) -> usize {
        use std::arch::x86_64::{
            _mm256_add_pd, _mm256_castpd_si256, _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_div_pd, _mm256_movemask_pd,
            _mm256_mul_pd, _mm256_permutevar8x32_epi32, _mm256_set1_pd, _mm256_sub_pd, _CMP_LT_OQ,
        };
        let (lo, width, top, one) =
            (_mm256_set1_pd(test.lo), _mm256_set1_pd(test.width), _mm256_set1_pd(test.top), _mm256_set1_pd(1.0));
        let mut j = 0;
        for q in 0..PROPOSALS / 4 {
            let (u, a) = (
                load_pd(u[4 * q..4 * q + 4].try_into().expect("4")),
                load_pd(a[4 * q..4 * q + 4].try_into().expect("4")),
            );
            let t = _mm256_add_pd(lo, _mm256_mul_pd(width, u));
            // `DotTest::density`, lane-wise.
            let (mut base, mut density, mut e) =
                (_mm256_sub_pd(one, _mm256_mul_pd(t, t)), one, test.power.unsigned_abs());
            while e > 0 {
                if e & 1 == 1 {
                    density = _mm256_mul_pd(density, base);
                }
                base = _mm256_mul_pd(base, base);
                e >>= 1;
            }
            if test.power < 0 {
                density = _mm256_div_pd(one, density);
            }
            let accept = _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_mul_pd(_mm256_mul_pd(a, a), top), density);
            #[allow(clippy::cast_sign_loss)] // a 4-bit mask
            let mask = _mm256_movemask_pd(accept) as usize;
            let order = load_epi32(&PACK[mask]);
            let packed = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(t), order));
            // j <= 4 q: the four slots from j are inside the window.
            store_pd(&mut window[j..j + 4], packed);
            j += mask.count_ones() as usize;
        }
        j
    }

    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::needless_range_loop)]
    fn rows_avx2<const D: usize>(lanes: &GroupLanes<'_>, theta: &[f64; D], v: &[f64; D], out: &mut [f64]) {
        use std::arch::x86_64::{
            _mm256_add_pd, _mm256_mul_pd, _mm256_permute2f128_pd, _mm256_set1_pd, _mm256_setzero_pd, _mm256_sub_pd,
            _mm256_unpackhi_pd, _mm256_unpacklo_pd,
        };
        let out = &mut out[..GROUP * D];
        let (t, factor, proj) = (load_pd(lanes.t), load_pd(lanes.factor), load_pd(lanes.proj));
        let mut x = [_mm256_setzero_pd(); D];
        for i in 0..D {
            let wi = if i == 0 {
                _mm256_setzero_pd()
            } else {
                load_pd(lanes.w[(i - 1) * GROUP..i * GROUP].try_into().expect("GROUP lanes"))
            };
            let direction = _mm256_sub_pd(wi, _mm256_mul_pd(proj, _mm256_set1_pd(v[i])));
            x[i] = _mm256_add_pd(_mm256_mul_pd(t, _mm256_set1_pd(theta[i])), _mm256_mul_pd(factor, direction));
        }
        let mut c = 0;
        while c + 4 <= D {
            let (lo01, hi01) = (_mm256_unpacklo_pd(x[c], x[c + 1]), _mm256_unpackhi_pd(x[c], x[c + 1]));
            let (lo23, hi23) = (_mm256_unpacklo_pd(x[c + 2], x[c + 3]), _mm256_unpackhi_pd(x[c + 2], x[c + 3]));
            let rows = [
                _mm256_permute2f128_pd::<0x20>(lo01, lo23),
                _mm256_permute2f128_pd::<0x20>(hi01, hi23),
                _mm256_permute2f128_pd::<0x31>(lo01, lo23),
                _mm256_permute2f128_pd::<0x31>(hi01, hi23),
            ];
            for (l, row) in rows.into_iter().enumerate() {
                store_pd(&mut out[l * D + c..l * D + c + 4], row);
            }
            c += 4;
        }
        for i in c..D {
            let mut lanes = [0.0; GROUP];
            store_pd(&mut lanes, x[i]);
            for l in 0..GROUP {
                out[l * D + i] = lanes[l];
            }
        }
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

    /// For d = 2, 3 (the extremes of the marginal's exponent (d - 3)/2,
    /// -1/2 and 0), 4 (directions from angles), 9 (a compile-time
    /// path) and 24 (the general path), the
    /// suboptimal inner products follow the band-restricted marginal
    /// (1 - t^2)^((d-3)/2), and a fixed coordinate of the direction
    /// orthogonal to theta* is centred with variance 1/(d - 1). KS at
    /// level 0.001 (CDF by Simpson's rule on 20,000 panels, error far
    /// below the KS resolution) and 5-sd bounds.
    #[test]
    fn inner_products_follow_the_marginal_in_every_dimension() {
        for (d, gap) in [(2usize, 0.1), (3, 0.0), (4, 0.2), (9, 0.3), (24, 0.1)] {
            let (k, rounds, r) = (11usize, 1500u64, 0.75);
            let (lo, hi) = (-r, r - gap);
            let mut env =
                ShariffSheffetEnv::new(d, k, gap, r, RewardModel::Gaussian, &SeedSequence::from_seed(d as u64 + 40))
                    .unwrap();
            let theta = env.theta().to_vec();
            let (mut dots, mut coords) = (Vec::new(), Vec::new());
            let mut set = DecisionSet::default();
            for t in 1..=rounds {
                env.next_round(t, &mut set).unwrap();
                for i in 0..k {
                    if env.means()[i] == r {
                        continue;
                    }
                    let x = set.action(i);
                    let dot: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
                    assert!((dot - env.means()[i]).abs() < 1e-9 && (lo..=hi).contains(&dot), "d {d}: dot {dot}");
                    dots.push(dot);
                    // Coordinate 0 of the unit direction orthogonal to theta*,
                    // rescaled to unit variance: E = 0, Var = (1 - theta_0^2)/(d - 1).
                    let w0 = (x[0] - dot * theta[0]) / (1.0 - dot * dot).sqrt();
                    coords.push(w0 / ((1.0 - theta[0] * theta[0]) / (d - 1) as f64).sqrt());
                }
            }
            let density = |t: f64| (1.0 - t * t).powf((d as f64 - 3.0) / 2.0);
            let panels = 20_000;
            let h = (hi - lo) / f64::from(panels);
            let mut cdf_table = vec![0.0; panels as usize + 1];
            for j in 0..panels as usize {
                let a = lo + j as f64 * h;
                cdf_table[j + 1] = cdf_table[j] + h / 6.0 * (density(a) + 4.0 * density(a + 0.5 * h) + density(a + h));
            }
            let total = cdf_table[panels as usize];
            let cdf = |t: f64| {
                let pos = ((t - lo) / h).clamp(0.0, f64::from(panels));
                let j = (pos as usize).min(panels as usize - 1);
                let frac = pos - j as f64;
                (cdf_table[j] + frac * (cdf_table[j + 1] - cdf_table[j])) / total
            };
            let n = coords.len() as f64;
            assert!(ks(dots, cdf) < 1.95, "d {d}: <x, theta*> of suboptimal actions");
            let mean = coords.iter().sum::<f64>() / n;
            let var = coords.iter().map(|c| c * c).sum::<f64>() / n;
            // |c| <= sqrt((d - 1) / (1 - theta_0^2)) bounds the sds.
            let bound = ((d - 1) as f64 / (1.0 - theta[0] * theta[0])).sqrt();
            assert!(mean.abs() < 5.0 / n.sqrt(), "d {d}: direction mean {mean}");
            assert!((var - 1.0).abs() < 5.0 * bound * bound / n.sqrt(), "d {d}: direction variance {var}");
        }
    }

    /// The directions from angles (d = 3, 4, 5; see `angle_uniforms`) are
    /// uniform on theta*'s orthogonal unit sphere S^(d-2): the coordinate
    /// along a fixed unit direction e orthogonal to theta* has CDF
    /// 1/2 + asin(s)/pi on S^1, (1 + s)/2 on S^2 (Archimedes) and
    /// 1/2 + (s sqrt(1 - s^2) + asin(s))/pi on S^3 (KS at level 0.001),
    /// and E[w w^T] = (I - theta* theta*^T)/(d - 1) (5-sd bounds, |w_a w_b|
    /// <= 1/2). Optimal and suboptimal rows together: t does not enter w.
    #[test]
    fn angle_directions_are_uniform_on_the_orthogonal_sphere() {
        for d in [3usize, 4, 5] {
            let (k, rounds) = (13usize, 1500u64);
            let mut env =
                ShariffSheffetEnv::new(d, k, 0.1, 0.75, RewardModel::Gaussian, &SeedSequence::from_seed(60 + d as u64))
                    .unwrap();
            let theta = env.theta().to_vec();
            let mut e: Vec<f64> = (0..d).map(|i| if i == d - 1 { 1.0 } else { 0.0 }).collect();
            let p = theta[d - 1];
            for (v, t) in e.iter_mut().zip(&theta) {
                *v -= p * t;
            }
            let ne = e.iter().map(|v| v * v).sum::<f64>().sqrt();
            for v in &mut e {
                *v /= ne;
            }
            let (mut coords, mut second, mut n) = (Vec::new(), vec![0.0; d * d], 0.0);
            let mut set = DecisionSet::default();
            for t in 1..=rounds {
                env.next_round(t, &mut set).unwrap();
                for i in 0..k {
                    let x = set.action(i);
                    let dot = env.means()[i];
                    let r = (1.0 - dot * dot).sqrt();
                    let w: Vec<f64> = x.iter().zip(&theta).map(|(a, b)| (a - dot * b) / r).collect();
                    assert!((w.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-9, "d {d}");
                    coords.push(w.iter().zip(&e).map(|(a, b)| a * b).sum::<f64>());
                    for a in 0..d {
                        for b in 0..d {
                            second[a * d + b] += w[a] * w[b];
                        }
                    }
                    n += 1.0;
                }
            }
            let cdf = |s: f64| {
                let s = s.clamp(-1.0, 1.0);
                match d {
                    3 => 0.5 + s.asin() / std::f64::consts::PI,
                    4 => 0.5 * (1.0 + s),
                    _ => 0.5 + (s * (1.0 - s * s).sqrt() + s.asin()) / std::f64::consts::PI,
                }
            };
            assert!(ks(coords, cdf) < 1.95, "d {d}: coordinate along e");
            for a in 0..d {
                for b in 0..d {
                    let want = (f64::from(u8::from(a == b)) - theta[a] * theta[b]) / (d - 1) as f64;
                    let got = second[a * d + b] / n;
                    assert!(
                        (got - want).abs() < 5.0 * 0.5 / n.sqrt(),
                        "d {d}: E[w w^T][{a}][{b}] = {got}, want {want}"
                    );
                }
            }
        }
    }

    /// A set with a null event is drawn again whole: forced here by
    /// overwriting a row with t theta* (what a null draw leaves) and taking
    /// the redraw path.
    #[test]
    fn sets_with_a_null_row_are_redrawn() {
        let mut env =
            ShariffSheffetEnv::new(5, 6, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(8)).unwrap();
        let mut set = DecisionSet::default();
        env.next_round(1, &mut set).unwrap();
        let best = env.means().iter().position(|&m| m == 0.75).unwrap();
        let t = env.means[2];
        let null_row: Vec<f64> = env.theta.iter().map(|th| t * th).collect();
        set.features[10..15].copy_from_slice(&null_row);
        env.redraw_set::<5>(best, &mut set.features);
        assert_ne!(set.action(2), &null_row[..]);
        for i in 0..6 {
            let x = set.action(i);
            assert!((x.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12, "row {i}");
            let dot: f64 = x.iter().zip(&env.theta).map(|(a, b)| a * b).sum();
            assert!((dot - env.means()[i]).abs() < 1e-12, "row {i}");
            assert_eq!(env.means()[i] == 0.75, i == best, "row {i}");
        }
    }

    /// The dispatched generator (AVX2 where available) and the portable
    /// body draw the same sets bit for bit: directions from angles (d = 3,
    /// 4, 5) and from normals (d = 2, 8), band densities of power -1 to 5,
    /// with a partial last group (k = 25).
    #[test]
    fn both_builds_draw_identical_sets() {
        fn check<const D: usize>() {
            let mut a =
                ShariffSheffetEnv::new(D, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &SeedSequence::from_seed(9))
                    .unwrap();
            let mut b = a.clone();
            let (mut sa, mut sb) = (DecisionSet::default(), DecisionSet::zeros(25, D));
            for t in 1..=300 {
                a.next_round(t, &mut sa).unwrap();
                let best = b.contexts.scalar().random_range(0..25);
                b.fill_set_with_this_build::<D>(best, &mut sb.features);
                assert_eq!(
                    sa.features.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    sb.features.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "d {D}"
                );
                assert_eq!(a.means(), b.means());
            }
        }
        check::<2>();
        check::<3>();
        check::<4>();
        check::<5>();
        check::<8>();
    }

    /// The band test's density ratio against hand-computed powers: (1 -
    /// t^2)^(d-3) at t = 1/2 is 0.75^(d-3), exact in binary for these d.
    #[test]
    fn band_density_is_the_power_of_one_minus_t_squared() {
        let test = |power| DotTest { lo: -0.75, width: 1.4, top: 1.0, power };
        assert_eq!(test(0).density(0.5), 1.0);
        assert_eq!(test(2).density(0.5), 0.5625);
        assert_eq!(test(5).density(0.5), 243.0 / 1024.0);
        assert_eq!(test(13).density(0.5), 1_594_323.0 / 67_108_864.0);
        assert_eq!(test(-1).density(0.5), 4.0 / 3.0);
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
