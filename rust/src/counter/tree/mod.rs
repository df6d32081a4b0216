//! Continual release of prefix sums: the tree-based (binary) mechanism.
//!
//! Shariff–Sheffet App. A.2, Mishra–Thakurta App. A and Agarwal–Singh
//! Alg. 2 all release the running sum S_t = x_1 + ... + x_t for every t by
//! the same construction (Dwork et al. 2010; Chan, Shi and Song 2011): leaf
//! t is covered by one dyadic node per level, node (i, j) sums leaves
//! (j 2^i, (j+1) 2^i], and S_t is the sum of the nodes of t's dyadic
//! decomposition, one per set bit of t. Each node carries its own noise, so
//! a release carries popcount(t) <= m = 1 + ceil(log2 n) noise terms, and
//! changing one leaf changes at most one node per level: at most
//! floor(log2 n) + 1 <= m noisy nodes.
//!
//! Only the nodes of the current decomposition are needed later, so the
//! counter holds one exact sum and one noise value per level: memory
//! O(log n) values, not O(n).
//!
//! Invariants the privacy proofs rest on, enforced here:
//! - a node's noise is drawn exactly once, when the node is completed, and
//!   is stored with it; it is never redrawn, and a serialized counter
//!   carries it (and the generator state), so a restored counter continues
//!   with the same noise;
//! - the padded variant (Agarwal–Singh Alg. 2, lines 4-6) tops every
//!   release up to exactly P = max(1, ceil(log2 T)) noise draws; the
//!   padding of round t is drawn once, when round t's value is added, so
//!   reading the release twice cannot average its noise away. Other
//!   targets are allowed ([`TreeCounter::with_padding`]): Shariff–Sheffet
//!   Prop. 9 assumes every Wishart release sums exactly m node draws;
//! - persistent padding ([`Padding::Persistent`]) keeps one padding draw
//!   per tree level whose bit of t is 0, drawn when that bit becomes 0 and
//!   discarded when it becomes 1, so a release sums popcount(t) node draws
//!   and pad_to - popcount(t) padding draws (exactly pad_to, as with fresh
//!   padding) and most of its noise persists from round to round, as in
//!   the pan-private tree of Shariff & Sheffet's own code
//!   (PrivateBandits.jl). The padding is independent of the data either
//!   way, so the releases are post-processing of the noisy nodes and the
//!   privacy proof is unchanged; each release has the same law, so Prop.
//!   9's bounds hold too; only the correlation across rounds differs;
//! - no more than `horizon` values are accepted (the noise calibration
//!   assumes at most that many).

use serde::{Deserialize, Serialize};

use super::{
    check_arguments, check_room, checked_dim, matrix_side, release_runs, too_large, zeros, Counter, MAX_STATE_ENTRIES,
    MAX_VALUE,
};
use crate::error::{check_finite, Error, Result};
use crate::noise::entropy::EntropyCell;
use crate::noise::lattice::{EntrySampler, LatticeRounding, MAX_EXACT_STEPS};
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// Number of tree levels needed for `horizon` leaves: floor(log2 n) + 1.
pub fn levels_for(horizon: u64) -> usize {
    (64 - horizon.leading_zeros()) as usize
}

/// m = 1 + ceil(log2 n): the bound on noise terms per release used by
/// Shariff–Sheffet (§2 notation, App. A.2).
pub fn max_noise_terms(horizon: u64) -> u32 {
    1 + ceil_log2(horizon)
}

/// The most nodes any release of t <= n sums: max popcount(t) = floor(log2(n + 1)).
pub fn max_popcount(horizon: u64) -> u32 {
    levels_for(horizon.saturating_add(1)) as u32 - 1
}

/// ceil(log2 n) for n >= 1.
pub fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

/// The dyadic decomposition of [1, t]: one node (level, first leaf, last
/// leaf) per set bit of t, highest level first. Leaves are 1-indexed.
pub fn dyadic_nodes(t: u64) -> Vec<(u32, u64, u64)> {
    let mut out = Vec::with_capacity(t.count_ones() as usize);
    let mut start = 0u64;
    for level in (0..64u32).rev() {
        if t & (1u64 << level) != 0 {
            out.push((level, start + 1, start + (1u64 << level)));
            start += 1u64 << level;
        }
    }
    out
}

/// How a padded release is topped up to its fixed number of draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Padding {
    /// The missing draws are drawn anew every round (Agarwal–Singh Alg. 2,
    /// lines 4-6; Shariff–Sheffet as printed do not say how).
    Fresh,
    /// One draw per tree level whose bit of t is 0, kept while that bit
    /// stays 0 (the pan-private tree of Shariff & Sheffet's code).
    Persistent,
}

impl Padding {
    /// The Python name (`"fresh"`, `"persistent"`).
    pub fn name(self) -> &'static str {
        match self {
            Padding::Fresh => "fresh",
            Padding::Persistent => "persistent",
        }
    }

    /// The variant of a Python name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "fresh" => Ok(Padding::Fresh),
            "persistent" => Ok(Padding::Persistent),
            _ => Err(Error::invalid("padding", format!("must be \"fresh\" or \"persistent\", got {name:?}"))),
        }
    }
}

/// A node of the current decomposition, as released (noisy).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeView<'a> {
    /// Level i: the node sums 2^i leaves.
    pub level: u32,
    /// First leaf covered (1-indexed).
    pub first: u64,
    /// Last leaf covered.
    pub last: u64,
    /// Exact node sum plus the node's noise.
    pub noisy: &'a [f64],
}

/// A continual-release counter over values of a fixed shape.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TreeCounter {
    shape: Vec<usize>,
    dim: usize,
    side: usize,
    horizon: u64,
    noise: NoiseSpec,
    /// Noise draws every release is topped up to (0: no padding).
    pad_to: u32,
    t: u64,
    /// Exact sum of each level's newest node, `levels x dim`.
    exact: Vec<f64>,
    /// Exact sum + noise of each level's newest node, `levels x dim`.
    noisy: Vec<f64>,
    /// Sum of the padding draws of round t (padded variant only), then,
    /// with persistent padding only, `pad_to` per-level draws (zero while
    /// the level's bit of t is 1). One vector, so that counters with fresh
    /// padding keep their serialized layout; its length tells the variant.
    padding: Vec<f64>,
    /// The current release: sum of the noisy nodes of t (+ padding).
    release: Vec<f64>,
    noise_terms: u32,
    rng: StreamRng,
    /// Draws come from the operating system rather than `rng`.
    os_entropy: bool,
    /// The operating-system source (not state: nothing to restore).
    #[serde(skip)]
    entropy: EntropyCell,
    /// Scratch for one noise draw (not state; kept to avoid allocation).
    #[serde(skip)]
    draw: Vec<f64>,
    /// Scratch for a value rounded to the lattice (not state).
    #[serde(skip)]
    rounded: Vec<f64>,
    /// The scalar path's handles (not state: derived from `noise` and
    /// `horizon` on first use).
    #[serde(skip)]
    scalar: Option<ScalarPath>,
}

/// What [`TreeCounter::add_scalar`] keeps between rounds: the lattice
/// rounding with its limit, and the table of the node noise's law (a
/// scalar counter draws once a round, where looking the table up would
/// cost as much as the draw). `None`s for floating-point noise.
#[derive(Clone, Debug)]
struct ScalarPath {
    rounding: Option<LatticeRounding>,
    sampler: Option<EntrySampler>,
}

/// What one addition at level L updates, entry by entry (see
/// [`merge_node`]): x_t, the exact and noisy nodes of the levels below
/// (`L x dim`, the nodes of t - 1 that the new node covers), the new
/// node's exact and noisy slots (the noisy one holding the new node's
/// noise), and, for an incremental update, the release.
struct NodeMerge<'a> {
    value: &'a [f64],
    exact_lower: &'a [f64],
    noisy_lower: &'a [f64],
    exact: &'a mut [f64],
    noisy: &'a mut [f64],
    release: Option<&'a mut [f64]>,
    /// Whether the new noisy node enters the release in this pass.
    add: bool,
}

impl NodeMerge<'_> {
    /// Entries k..k + N of every node, in local arrays (vector registers).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn entries<const N: usize>(&mut self, level: usize, k: usize) {
        let dim = self.value.len();
        let at = |j: usize| j * dim + k..j * dim + k + N;
        let mut node: [f64; N] = self.value[at(0)].try_into().expect("N entries");
        for j in 0..level {
            let lower: &[f64; N] = self.exact_lower[at(j)].try_into().expect("N entries");
            for (e, l) in node.iter_mut().zip(lower) {
                *e += l;
            }
        }
        self.exact[at(0)].copy_from_slice(&node);
        let noise: &[f64; N] = self.noisy[at(0)].try_into().expect("N entries");
        for (e, z) in node.iter_mut().zip(noise) {
            *e += z;
        }
        self.noisy[at(0)].copy_from_slice(&node);
        if let Some(release) = self.release.as_deref_mut() {
            let mut r: [f64; N] = release[at(0)].try_into().expect("N entries");
            for j in 0..level {
                let lower: &[f64; N] = self.noisy_lower[at(j)].try_into().expect("N entries");
                for (r, l) in r.iter_mut().zip(lower) {
                    *r -= l;
                }
            }
            if self.add {
                for (r, v) in r.iter_mut().zip(&node) {
                    *r += v;
                }
            }
            release[at(0)].copy_from_slice(&r);
        }
    }

    /// Every entry, four at a time, then one at a time.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn all_entries(&mut self, level: usize) {
        let dim = self.value.len();
        let whole = dim - dim % 4;
        for k in (0..whole).step_by(4) {
            self.entries::<4>(level, k);
        }
        for k in whole..dim {
            self.entries::<1>(level, k);
        }
    }
}

/// The new node of an addition at `level`, in one pass over the entries:
/// exact = x_t + the lower exact nodes (level 0 first), noisy = exact +
/// noise; with a release, the lower noisy nodes are subtracted from it
/// (level 0 first) and, with `add`, the new noisy node added. The same
/// operations in the same order per entry as one pass per node did (so
/// the same bits), without storing and reloading each entry in every
/// pass. Compiled for each incremental level (the lower nodes' loops
/// unrolled) and once for the rest.
fn merge_node(level: usize, mut merge: NodeMerge<'_>) {
    match level {
        0 => merge.all_entries(0),
        1 => merge.all_entries(1),
        2 => merge.all_entries(2),
        3 => merge.all_entries(3),
        _ => merge.all_entries(level),
    }
}

/// Releases after an addition at a tree level below this are updated
/// incrementally; at this level or above (every 16th round) re-summed.
const INCREMENTAL_BELOW: usize = 4;

/// Version tag of the serialized layout.
const STATE_VERSION: u8 = 3;

impl TreeCounter {
    /// A counter of values of `shape` (`[]` for scalars) over `horizon`
    /// rounds, with node noise `noise`, drawing from the `"tree"` stream of
    /// `seeds`.
    ///
    /// With `padded`, every release carries exactly max(1, ceil(log2 n))
    /// draws (Agarwal–Singh Alg. 2).
    pub fn new(shape: &[usize], horizon: u64, noise: NoiseSpec, padded: bool, seeds: &SeedSequence) -> Result<Self> {
        let pad_to = if padded { ceil_log2(horizon).max(1) } else { 0 };
        Self::with_padding(shape, horizon, noise, pad_to, seeds)
    }

    /// As [`TreeCounter::new`], with every release topped up to exactly
    /// `pad_to` noise draws (0 for none). `pad_to` must be at least the
    /// largest popcount of t <= n, floor(log2(n + 1)).
    pub fn with_padding(
        shape: &[usize],
        horizon: u64,
        noise: NoiseSpec,
        pad_to: u32,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        Self::with_padding_mode(shape, horizon, noise, pad_to, Padding::Fresh, seeds)
    }

    /// As [`TreeCounter::with_padding`], with the padding drawn as
    /// `padding` says. Persistent padding needs a draw per tree level:
    /// `pad_to` >= floor(log2 n) + 1 (m = 1 + ceil(log2 n) always is).
    pub fn with_padding_mode(
        shape: &[usize],
        horizon: u64,
        noise: NoiseSpec,
        pad_to: u32,
        padding: Padding,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        check_arguments(shape, horizon, noise)?;
        let most = max_popcount(horizon);
        if pad_to != 0 && pad_to < most {
            return Err(Error::invalid(
                "pad_to",
                format!("must be 0 or >= {most}, the most nodes a release of {horizon} rounds can sum; got {pad_to}"),
            ));
        }
        // The product and the buffer sizes are checked: a huge shape would
        // wrap around (shape (2^32, 2^32) would give dim = 0) or abort the
        // process on a failed allocation; instead, an error naming `shape`.
        let dim = checked_dim(shape).ok_or_else(|| too_large(shape))?;
        let side = matrix_side(shape);
        let levels = levels_for(horizon);
        if padding == Padding::Persistent && (pad_to as usize) < levels {
            return Err(Error::invalid(
                "pad_to",
                format!(
                    "persistent padding keeps one draw per tree level: pad_to must be >= {levels} for {horizon} \
                     rounds, got {pad_to}"
                ),
            ));
        }
        let slots = if padding == Padding::Persistent { pad_to as usize } else { 0 };
        let state = levels.checked_mul(dim).ok_or_else(|| too_large(shape))?;
        // With memory overcommit a huge state "allocates" and the zero fill
        // then gets the process killed: refused up front.
        if state > MAX_STATE_ENTRIES {
            return Err(too_large(shape));
        }
        // Past that, only the persistent padding's slots can be too many.
        let too_many_slots = || {
            Error::invalid(
                "pad_to",
                format!("{pad_to} persistent padding draws of shape {shape:?} are too large for the counter's state"),
            )
        };
        let with_slots = (levels + slots).checked_mul(dim).ok_or_else(too_many_slots)?;
        if with_slots > MAX_STATE_ENTRIES {
            return Err(too_many_slots());
        }
        Ok(TreeCounter {
            shape: shape.to_vec(),
            dim,
            side,
            horizon,
            noise,
            pad_to,
            t: 0,
            exact: zeros(state, shape)?,
            noisy: zeros(state, shape)?,
            padding: zeros((1 + slots) * dim, shape)?,
            release: zeros(dim, shape)?,
            noise_terms: 0,
            rng: seeds.stream("tree"),
            os_entropy: false,
            entropy: EntropyCell::default(),
            draw: zeros(dim, shape)?,
            rounded: Vec::new(),
            scalar: None,
        })
    }

    /// This (fresh) counter in secure mode: node noise is the exact
    /// discrete counterpart of its spec on the lattice 2^-`exponent`
    /// ([`SecureNoise`]: discrete Laplace / Gaussian of Canonne, Kamath &
    /// Steinke 2020), every added value is first rounded to that lattice,
    /// and all sums stay exact. With `os_entropy` every draw comes from the
    /// operating system; otherwise from the counter's seeded stream (tests
    /// and reproduction only).
    ///
    /// Privacy: rounding moves a value by at most half a step, so a change
    /// of one value by `Delta` changes each rounded entry by at most
    /// `Delta + 2^-j`; the Python layer accounts for that step
    /// (`dpbandits.privacy.secure`).
    pub fn into_secure(mut self, exponent: i32, os_entropy: bool) -> Result<Self> {
        if self.t != 0 {
            return Err(Error::State("secure mode must be chosen before the first addition".into()));
        }
        if self.noise.lattice().is_none() {
            self.noise = self.noise.on_lattice(exponent)?;
            self.scalar = None; // derived from the old law
        }
        self.with_os_entropy(os_entropy)
    }

    /// This (fresh) counter drawing its noise from the operating system
    /// (`true`) or from its seeded stream (`false`). The noise law is
    /// unchanged (a lattice [`NoiseSpec::Lattice`] or floating point).
    pub fn with_os_entropy(mut self, os_entropy: bool) -> Result<Self> {
        if self.t != 0 {
            return Err(Error::State("the entropy source must be chosen before the first addition".into()));
        }
        self.os_entropy = os_entropy;
        if os_entropy {
            self.entropy.get()?;
        }
        Ok(self)
    }

    /// Every future draw from the operating system (engines that switch to
    /// secure mode after construction; noise already drawn is kept, as by
    /// [`TreeCounter::reseed`]).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.entropy.get()?;
        self.os_entropy = true;
        Ok(())
    }

    /// The lattice exponent j (values are multiples of 2^-j) when the
    /// noise is drawn on a lattice.
    pub fn secure_exponent(&self) -> Option<i32> {
        self.noise.lattice().map(|s| s.exponent())
    }

    /// Whether draws come from the operating system.
    pub fn os_entropy(&self) -> bool {
        self.os_entropy
    }

    /// Largest step count an added entry may have in secure mode: sums of
    /// `horizon` of them, plus noise, stay below 2^53 steps (exact in f64).
    fn lattice_limit(&self) -> f64 {
        MAX_EXACT_STEPS / 4.0 / self.horizon as f64
    }

    /// One draw of node noise into `out`.
    fn draw_noise(
        noise: NoiseSpec,
        os_entropy: bool,
        rng: &mut StreamRng,
        entropy: &mut EntropyCell,
        side: usize,
        out: &mut [f64],
    ) -> Result<()> {
        if os_entropy {
            noise.sample_into(entropy.get()?, side, out);
        } else {
            noise.sample_into(rng, side, out);
        }
        Ok(())
    }

    /// `runs` independent runs of this counter's mechanism on the stream
    /// `values` (rows of `dim` entries, at most `horizon` of them): the
    /// releases after each addition, run-major (`runs x rows x dim`).
    ///
    /// For empirical privacy audits, which need millions of runs. The
    /// counter must be fresh (t = 0); the runs draw from its generator,
    /// which is left advanced past every draw they used (so no later noise
    /// of this counter repeats theirs), and the counter stays at t = 0.
    pub fn release_runs(&mut self, values: &[f64], runs: usize) -> Result<Vec<f64>> {
        release_runs(self, values, runs)
    }

    /// Adds the value of round t + 1 and updates the release.
    pub fn add(&mut self, value: &[f64]) -> Result<()> {
        match value {
            [v] if self.dim == 1 => self.add_scalar(*v),
            _ => self.add_entries(value),
        }
    }

    /// [`TreeCounter::add`] of a scalar counter's value: the same
    /// operations in the same order (so the same releases bit for bit),
    /// without the general shape's buffers, and with the noise table held
    /// by the counter. Padded counters, and every input the general path
    /// refuses, go through the general path.
    #[allow(clippy::inline_always)] // into the K-armed engines' round (Mab::record)
    #[inline(always)]
    pub fn add_scalar(&mut self, value: f64) -> Result<()> {
        // NaN fails `within` too.
        let within = value.abs() <= MAX_VALUE;
        if self.dim != 1 || self.pad_to > 0 || !within || self.t >= self.horizon {
            return self.add_entries(&[value]);
        }
        if self.scalar.is_none() {
            let lattice = self.noise.lattice();
            self.scalar = Some(ScalarPath {
                rounding: lattice.map(|s| s.rounding(self.lattice_limit())),
                sampler: lattice.and_then(|s| s.entry_sampler()),
            });
        }
        let path = self.scalar.as_ref().expect("set above");
        let value = match path.rounding.map(|r| r.round(value)) {
            None => value,
            Some(Some(rounded)) => rounded,
            Some(None) => return self.add_entries(&[value]),
        };
        if self.os_entropy {
            self.entropy.get()?;
        }
        self.t += 1;
        let level = self.t.trailing_zeros() as usize;
        let incremental = level < INCREMENTAL_BELOW;
        let mut node = value;
        for j in 0..level {
            node += self.exact[j];
        }
        self.exact[level] = node;
        let z = match &path.sampler {
            Some(sampler) if self.os_entropy => sampler.sample(self.entropy.get()?),
            Some(sampler) => sampler.sample(&mut self.rng),
            None => {
                let mut z = [0.0];
                Self::draw_noise(self.noise, self.os_entropy, &mut self.rng, &mut self.entropy, self.side, &mut z)?;
                z[0]
            }
        };
        self.noisy[level] = node + z;
        // popcount(t) = popcount(t - 1) + 1 - (the trailing ones of t - 1,
        // which are the trailing zeros of t): an unpadded counter's
        // `noise_terms` is popcount(t) after every path's step (baseline
        // x86-64 has no popcount instruction).
        // No overflow either way: `level` trailing ones of t - 1 are among
        // its popcount(t - 1) = `noise_terms` ones (a restored count is
        // checked against t), and popcount(t) <= 64.
        self.noise_terms = self.noise_terms + 1 - level as u32;
        if incremental {
            let mut release = self.release[0];
            for j in 0..level {
                release -= self.noisy[j];
            }
            self.release[0] = release + self.noisy[level];
        } else {
            self.recompute_release();
        }
        Ok(())
    }

    /// [`TreeCounter::add`] for values of any shape.
    #[allow(clippy::too_many_lines)]
    fn add_entries(&mut self, value: &[f64]) -> Result<()> {
        if value.len() != self.dim {
            return Err(Error::invalid(
                "value",
                format!("expected {} entries (shape {:?}), got {}", self.dim, self.shape, value.len()),
            ));
        }
        // Two values of -1e308 would sum to -inf, and every later release
        // would be infinite. With |entries| <= MAX_VALUE, sums of up to 2^64
        // of them plus noise (scales <= noise::MAX_NOISE_SCALE) stay
        // finite. One branch-free pass (NaN fails the comparison too); the
        // errors are told apart only when it fails.
        if !value.iter().fold(true, |ok, v| ok & (v.abs() <= MAX_VALUE)) {
            check_finite("value", value)?;
            let v = value.iter().find(|v| v.abs() > MAX_VALUE).expect("an entry failed the bound");
            return Err(Error::invalid("value", format!("entries must have magnitude <= {MAX_VALUE:e}, got {v:e}")));
        }
        check_room(self.t, self.horizon)?;
        // Lattice noise: the value enters the tree rounded to the lattice
        // (into a scratch buffer: no allocation a round).
        let mut rounded = std::mem::take(&mut self.rounded);
        let value = match self.noise.lattice() {
            Some(s) => {
                rounded.clear();
                rounded.extend_from_slice(value);
                s.to_lattice("value", &mut rounded, self.lattice_limit())?;
                &rounded[..]
            }
            None => value,
        };
        if self.os_entropy {
            self.entropy.get()?;
        }
        self.t += 1;
        let dim = self.dim;
        let level = self.t.trailing_zeros() as usize;
        // Release update: the nodes of t - 1 below `level` leave the
        // decomposition and the new node at `level` enters it, so the
        // release moves by a few node values instead of being re-summed
        // over all popcount(t) live nodes. Every 2^INCREMENTAL_BELOW rounds
        // it is re-summed exactly, which bounds rounding drift.
        let incremental = level < INCREMENTAL_BELOW;
        let padded = self.pad_to > 0;
        if incremental && padded {
            for (r, p) in self.release.iter_mut().zip(&self.padding[..dim]) {
                *r -= p;
            }
        }
        // The new node's noise, drawn into its slot (the slot's old node
        // is in no decomposition from t on: bit `level` of t - 1 is 0).
        let (noisy_lower, noisy_rest) = self.noisy.split_at_mut(level * dim);
        let noisy = &mut noisy_rest[..dim];
        Self::draw_noise(self.noise, self.os_entropy, &mut self.rng, &mut self.entropy, self.side, noisy)?;
        // The new node at `level` covers the lower-level nodes of t - 1 and
        // x_t; the nodes leaving the release are taken out of it (and,
        // unpadded, the new one put in) in the same pass.
        let (exact_lower, exact_rest) = self.exact.split_at_mut(level * dim);
        let release = if incremental { Some(&mut self.release[..]) } else { None };
        merge_node(
            level,
            NodeMerge { value, exact_lower, noisy_lower, exact: &mut exact_rest[..dim], noisy, release, add: !padded },
        );
        let tree_terms = self.t.count_ones();
        self.noise_terms = tree_terms;
        if self.pad_to > 0 && self.persistent() {
            self.advance_persistent_padding(level, incremental)?;
            self.noise_terms = self.pad_to;
        } else if self.pad_to > 0 {
            let target = self.pad_to;
            self.padding.fill(0.0);
            let missing = target.saturating_sub(tree_terms);
            // The sum of `missing` draws is drawn in one go when its law is
            // known in closed form (Gaussian, Wishart): same distribution, a
            // fraction of the cost (padding Wishart releases to m draws
            // would otherwise cost up to m Bartlett draws per round). On a
            // lattice the padding is the closed-form floating-point sum of
            // the same scale, rounded to the lattice
            // (`NoiseSpec::sample_sum_into`): it is data-independent, so its
            // law carries no privacy, and m discrete draws per entry per
            // round would cost more than the rest of the learner.
            // Laplace: b sqrt(2 G) Z, G ~ Gamma(m, 1), the exact law of the
            // sum of m Laplace(b) draws (one Gamma and one normal per entry
            // instead of m Laplace draws).
            let by_repeats = self.noise.lattice().is_some() || matches!(self.noise, NoiseSpec::Laplace { .. });
            let closed_form = if by_repeats { Some(self.noise) } else { self.noise.sum_of(missing) };
            match closed_form {
                Some(sum) if missing > 0 => {
                    let repeats = if by_repeats { missing } else { 1 };
                    if self.os_entropy {
                        sum.sample_sum_into(self.entropy.get()?, repeats, self.side, &mut self.padding);
                    } else {
                        sum.sample_sum_into(&mut self.rng, repeats, self.side, &mut self.padding);
                    }
                }
                _ => {
                    // The scratch buffer is not serialized; a counter
                    // restored through an enclosing serde type arrives
                    // without it.
                    self.draw.resize(self.dim, 0.0);
                    for _ in 0..missing {
                        Self::draw_noise(
                            self.noise,
                            self.os_entropy,
                            &mut self.rng,
                            &mut self.entropy,
                            self.side,
                            &mut self.draw,
                        )?;
                        for (p, z) in self.padding.iter_mut().zip(&self.draw) {
                            *p += z;
                        }
                    }
                }
            }
            self.noise_terms = target.max(tree_terms);
        }
        if !incremental {
            self.recompute_release();
        } else if padded {
            let node = &self.noisy[level * dim..(level + 1) * dim];
            for ((r, v), p) in self.release.iter_mut().zip(node).zip(&self.padding[..dim]) {
                *r += v + p;
            }
        }
        self.rounded = rounded;
        Ok(())
    }

    /// Persistent padding after round t's addition, whose new node is at
    /// `level`: bit `level` of t became 1 (its draw leaves the release) and
    /// the bits below became 0 (each gets a new draw); at t = 1 every
    /// level above 0 gets its first draw. The running sum is updated by
    /// those few draws when `incremental`, else re-summed.
    fn advance_persistent_padding(&mut self, level: usize, incremental: bool) -> Result<()> {
        let dim = self.dim;
        let (sum, slots) = self.padding.split_at_mut(dim);
        let first = self.t == 1;
        // pad_to >= levels (checked at construction and restore), so every
        // bit of t <= n has a slot.
        let leaving = &mut slots[level * dim..(level + 1) * dim];
        if incremental && !first {
            for (s, v) in sum.iter_mut().zip(leaving.iter()) {
                *s -= v;
            }
        }
        leaving.fill(0.0);
        let redrawn = if first { 1..self.pad_to as usize } else { 0..level };
        for j in redrawn {
            let slot = &mut slots[j * dim..(j + 1) * dim];
            Self::draw_noise(self.noise, self.os_entropy, &mut self.rng, &mut self.entropy, self.side, slot)?;
            if incremental && !first {
                for (s, v) in sum.iter_mut().zip(slot.iter()) {
                    *s += v;
                }
            }
        }
        if !incremental || first {
            sum.fill(0.0);
            for slot in slots.chunks_exact(dim) {
                for (s, v) in sum.iter_mut().zip(slot) {
                    *s += v;
                }
            }
        }
        Ok(())
    }

    /// Whether the padding is persistent (per-level draws are stored).
    fn persistent(&self) -> bool {
        self.padding.len() > self.dim
    }

    fn recompute_release(&mut self) {
        let dim = self.dim;
        if dim == 1 {
            // The same sums in the same order, without slices of `dim`
            // entries per level.
            let mut release = self.padding[0];
            let mut bits = self.t;
            while bits != 0 {
                release += self.noisy[bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
            self.release[0] = release;
            return;
        }
        self.release.copy_from_slice(&self.padding[..dim]);
        let mut bits = self.t;
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            for (r, v) in self.release.iter_mut().zip(&self.noisy[j * dim..(j + 1) * dim]) {
                *r += v;
            }
        }
    }

    /// Replaces the generator of future node noise by the `"tree"` stream
    /// of `seeds`. Noise already drawn (completed nodes, this round's
    /// padding, persistent padding draws) is kept: it is part of the
    /// released history. Used by `fork`: two copies of one counter must
    /// not add the same future noise, or the difference of their releases
    /// would reveal their data.
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("tree");
    }

    /// The noisy prefix sum after the last addition (zeros before any).
    pub fn release(&self) -> &[f64] {
        &self.release
    }

    /// Number of values added so far.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Noise draws in the current release: popcount(t), or exactly
    /// max(1, ceil(log2 T)) for the padded variant (0 before any addition).
    pub fn noise_terms(&self) -> u32 {
        self.noise_terms
    }

    /// The declared horizon n.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// Shape of each value.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Entries per value.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Per-node noise distribution.
    pub fn noise(&self) -> NoiseSpec {
        self.noise
    }

    /// Whether releases are padded to a fixed number of noise draws.
    pub fn padded(&self) -> bool {
        self.pad_to > 0
    }

    /// The number of draws every release is padded to (0: no padding).
    pub fn pad_to(&self) -> u32 {
        self.pad_to
    }

    /// How releases are padded (fresh when not padded at all).
    pub fn padding_mode(&self) -> Padding {
        if self.persistent() {
            Padding::Persistent
        } else {
            Padding::Fresh
        }
    }

    /// The persistent padding draw of tree level `level` in the current
    /// release: `Some` with persistent padding, after the first addition,
    /// while bit `level` of t is 0 (`level` < pad_to); else `None`.
    pub fn padding_draw(&self, level: u32) -> Option<&[f64]> {
        let live = self.persistent() && self.t > 0 && level < self.pad_to && (level >= 64 || self.t >> level & 1 == 0);
        live.then(|| &self.padding[(1 + level as usize) * self.dim..(2 + level as usize) * self.dim])
    }

    /// The nodes of t's dyadic decomposition, highest level first, with
    /// their noisy sums. These are released objects: the privacy proof
    /// covers the whole collection of noisy nodes.
    pub fn live_nodes(&self) -> Vec<NodeView<'_>> {
        dyadic_nodes(self.t)
            .into_iter()
            .map(|(level, first, last)| NodeView {
                level,
                first,
                last,
                noisy: &self.noisy[level as usize * self.dim..(level as usize + 1) * self.dim],
            })
            .collect()
    }

    /// Serializes the whole state, node noise and generator included.
    ///
    /// The bytes hold exact sums and the generator state: treat them as
    /// secret as the raw data.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// Restores a counter written by [`TreeCounter::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        match bytes.split_first() {
            Some((&STATE_VERSION, body)) => {
                let mut c: TreeCounter = crate::state::decode(body)?;
                c.check_consistent()?;
                c.draw = vec![0.0; c.dim];
                Ok(c)
            }
            Some((v, _)) if *v < STATE_VERSION => Err(Error::Decode(format!(
                "state version {v} was written by an earlier dpbandits (before lattice noise became the default); \
                 this version reads version {STATE_VERSION}"
            ))),
            Some((v, _)) => Err(Error::Decode(format!("unknown state version {v}"))),
            None => Err(Error::Decode("empty state".into())),
        }
    }

    /// The noise draws in the release after `t` additions, as the steps
    /// set them: popcount(t) unpadded, exactly `pad_to` with persistent
    /// padding, at least `pad_to` with fresh padding, none before the first
    /// addition. (The scalar step counts them incrementally, so a restored
    /// count must be right.)
    fn noise_terms_after(&self, t: u64) -> u32 {
        match (t, self.pad_to) {
            (0, _) => 0,
            (_, 0) => t.count_ones(),
            _ if self.persistent() => self.pad_to,
            _ => self.pad_to.max(t.count_ones()),
        }
    }

    /// Sets the noise-term count, for tests of the restore checks.
    #[cfg(test)]
    pub(crate) fn forge_noise_terms(&mut self, n: u32) {
        self.noise_terms = n;
    }

    /// Refuses a decoded state whose parts disagree (also run on counters
    /// restored inside an engine's state).
    pub(crate) fn check_consistent(&self) -> Result<()> {
        let levels = levels_for(self.horizon);
        // `side` is checked too: a corrupted state with a matrix noise and a
        // wrong side would restore and then panic in the sampler on the next
        // `add`. Likewise `pad_to` must meet the constructor's bound, or
        // "exactly pad_to draws" is false.
        let ok = checked_dim(&self.shape) == Some(self.dim)
            && self.side == matrix_side(&self.shape)
            && (self.pad_to == 0 || self.pad_to >= max_popcount(self.horizon))
            && self.exact.len() == levels * self.dim
            && self.noisy.len() == levels * self.dim
            && (self.padding.len() == self.dim
                || (self.pad_to as usize >= levels && self.padding.len() == (1 + self.pad_to as usize) * self.dim))
            && self.release.len() == self.dim
            && self.t <= self.horizon
            && self.noise_terms == self.noise_terms_after(self.t)
            && self.noise.validate(&self.shape).is_ok();
        if ok {
            Ok(())
        } else {
            Err(Error::Decode("inconsistent tree counter state".into()))
        }
    }

    /// Refuses a counter restored inside an engine's state unless it is
    /// consistent ([`TreeCounter::check_consistent`]), holds finite sums,
    /// and has the layout of `reference`, the counter the engine's
    /// configuration builds: the same shape, horizon, noise (law, scale,
    /// lattice) and padding. A state whose counter carries other noise
    /// than its configuration names is refused here, since the checkpoint's
    /// check of the configuration against the library's calibration reads
    /// the configuration only.
    pub(crate) fn check_restored(&self, reference: &TreeCounter) -> Result<()> {
        self.check_consistent()?;
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let same = self.shape == reference.shape
            && self.horizon == reference.horizon
            && self.noise == reference.noise
            && self.pad_to == reference.pad_to
            && self.padding.len() == reference.padding.len()
            && finite(&self.exact)
            && finite(&self.noisy)
            && finite(&self.padding)
            && finite(&self.release);
        if same {
            Ok(())
        } else {
            Err(Error::Decode("a tree counter in the state differs from the one its configuration builds".into()))
        }
    }
}

impl Counter for TreeCounter {
    fn add(&mut self, value: &[f64]) -> Result<()> {
        TreeCounter::add(self, value)
    }

    fn release(&self) -> &[f64] {
        &self.release
    }

    fn t(&self) -> u64 {
        self.t
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn horizon(&self) -> u64 {
        self.horizon
    }

    fn restart(&mut self) {
        self.t = 0;
        self.noise_terms = 0;
        self.exact.fill(0.0);
        self.noisy.fill(0.0);
        self.padding.fill(0.0);
        self.release.fill(0.0);
    }

    fn take_generator(&mut self, from: Self) {
        self.rng = from.rng;
        self.entropy = from.entropy;
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod test;
