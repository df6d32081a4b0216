//! Continual counters: one interface over the ways of releasing every
//! prefix sum of a stream privately.
//!
//! - [`CounterKind::Binary`]: the binary tree mechanism ([`TreeCounter`],
//!   [`tree`]), any noise;
//! - [`CounterKind::Sqrt`] and [`CounterKind::Blt`]: factorizations of the
//!   prefix-sum matrix with Gaussian noise ([`FactorizationCounter`]);
//! - the smooth binary mechanism (`Factorization::SmoothBinary`,
//!   [`smooth_binary`]): a binary tree read at leaves of fixed weight,
//!   Laplace or Gaussian noise, O(log T) memory, served by the same
//!   [`FactorizationCounter`] state;
//! - the epoch counter ([`EpochCounter`], [`epoch`]): each value enters
//!   one release, at the end of its geometric epoch; the release is the
//!   prefix sum up to the last epoch end (used by the contextual
//!   learners, which read a lagged release).
//!
//! Learners that release prefix sums hold a [`ContinualCounter`] and do not
//! care which one it is; the noise scale for each kind comes from
//! `dpbandits.privacy` (binary: `calibration.py`; factorizations:
//! `factorization.py`).

pub mod epoch;
pub mod factorization;
pub mod smooth_binary;
pub mod tree;

use serde::{Deserialize, Serialize};

pub use epoch::EpochCounter;
pub use factorization::{sqrt_coefficients, FactorSpec, Factorization, FactorizationCounter, FACTOR_STATE_TAG};
pub use tree::{Padding, TreeCounter};

use crate::error::{Error, Result};
use crate::noise::NoiseSpec;
use crate::rng::SeedSequence;

/// Most f64 entries one counter's state may hold (1 GiB): the tree's nodes
/// (levels x values), a factorization's buffers and history.
pub const MAX_STATE_ENTRIES: usize = 1 << 27;

/// Largest magnitude of an added entry (see [`TreeCounter::add`]).
pub const MAX_VALUE: f64 = 1e280;

/// What the tree and factorization counters share, as the code written
/// once for both needs it: adding values and reading the release, and the
/// two steps of an audit run ([`release_runs`]): back to t = 0, and the
/// generator handed back.
pub(crate) trait Counter: Clone {
    /// Adds the value of round t + 1 and updates the release.
    fn add(&mut self, value: &[f64]) -> Result<()>;

    /// The release after the last addition (zeros before any).
    fn release(&self) -> &[f64];

    /// Number of values added so far.
    fn t(&self) -> u64;

    /// Entries per value.
    fn dim(&self) -> usize;

    /// The declared horizon n.
    fn horizon(&self) -> u64;

    /// Back to t = 0 with the generator where it is (one audit run ends).
    /// Crate-private: a restarted counter would accept more than `horizon`
    /// values in all; audit runs restart a clone.
    fn restart(&mut self);

    /// Takes the generator and entropy source of `from`, a clone of this
    /// counter that drew after it, so that no later draw of this counter
    /// repeats one of `from`'s.
    fn take_generator(&mut self, from: Self);
}

/// The `release_runs` of every counter (see [`TreeCounter::release_runs`]):
/// `runs` runs of a clone of `counter`, restarted before each, on the rows
/// of `values`; `counter` then continues from the clone's generator.
fn release_runs<C: Counter>(counter: &mut C, values: &[f64], runs: usize) -> Result<Vec<f64>> {
    let dim = counter.dim();
    let mut out = release_runs_buffer(counter.t(), dim, counter.horizon(), values, runs)?;
    let mut work = counter.clone();
    for _ in 0..runs {
        work.restart();
        for row in values.chunks_exact(dim) {
            work.add(row)?;
            out.extend_from_slice(work.release());
        }
    }
    counter.take_generator(work);
    Ok(out)
}

/// Checks the arguments of a counter's `release_runs` (a fresh counter,
/// whole rows, at most `horizon` of them) and allocates the output of
/// `runs x rows x dim` releases fallibly.
fn release_runs_buffer(t: u64, dim: usize, horizon: u64, values: &[f64], runs: usize) -> Result<Vec<f64>> {
    if t != 0 {
        return Err(Error::State("release_runs needs a fresh counter (t = 0)".into()));
    }
    if !values.len().is_multiple_of(dim) {
        return Err(Error::invalid("values", format!("length {} is not a multiple of {dim}", values.len())));
    }
    let rows = values.len() / dim;
    if rows as u64 > horizon {
        return Err(Error::invalid("values", format!("{rows} rows exceed the horizon {horizon}")));
    }
    let total = runs
        .checked_mul(rows)
        .and_then(|x| x.checked_mul(dim))
        .ok_or_else(|| Error::invalid("runs", "too many releases for one array"))?;
    let mut out = Vec::new();
    out.try_reserve_exact(total).map_err(|_| Error::invalid("runs", "too many releases for one array"))?;
    Ok(out)
}

/// The checks every counter's constructor starts with: a horizon of at
/// least one round, no zero dimension, noise that fits the shape.
fn check_arguments(shape: &[usize], horizon: u64, noise: NoiseSpec) -> Result<()> {
    if horizon == 0 {
        return Err(Error::invalid("horizon", "must be >= 1"));
    }
    if shape.contains(&0) {
        return Err(Error::invalid("shape", format!("dimensions must be >= 1, got {shape:?}")));
    }
    noise.validate(shape)
}

/// Refuses an addition once `horizon` values have been added (the noise
/// was calibrated for that many).
fn check_room(t: u64, horizon: u64) -> Result<()> {
    if t >= horizon {
        return Err(Error::State(format!(
            "the counter's horizon of {horizon} additions is used up; the noise was calibrated for it"
        )));
    }
    Ok(())
}

/// Entries of a value of `shape`, or `None` when the product overflows.
fn checked_dim(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s))
}

/// The matrix side used by matrix noise: `p` for a `(p, p)` shape, else 0.
fn matrix_side(shape: &[usize]) -> usize {
    match shape {
        [p, q] if p == q => *p,
        _ => 0,
    }
}

fn too_large(shape: &[usize]) -> Error {
    Error::invalid("shape", format!("{shape:?} is too large for the counter's state"))
}

/// A zeroed buffer of `len` entries, or an error naming `shape` when the
/// allocation fails (instead of aborting the process).
fn zeros(len: usize, shape: &[usize]) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_large(shape))?;
    v.resize(len, 0.0);
    Ok(v)
}

/// Which counter releases the prefix sums.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CounterKind {
    /// The binary tree, every release padded to `pad_to` draws (0: none).
    Binary { pad_to: u32 },
    /// A factorization A = B C of the prefix-sum matrix.
    Factorization(Factorization),
}

/// A continual-release counter of any kind.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ContinualCounter {
    Binary(TreeCounter),
    Factorization(FactorizationCounter),
}

macro_rules! each {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            ContinualCounter::Binary($c) => $e,
            ContinualCounter::Factorization($c) => $e,
        }
    };
}

impl ContinualCounter {
    /// A fresh counter of `kind` (see the kinds' constructors).
    pub fn new(
        shape: &[usize],
        horizon: u64,
        noise: NoiseSpec,
        kind: CounterKind,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        Ok(match kind {
            CounterKind::Binary { pad_to } => {
                ContinualCounter::Binary(TreeCounter::with_padding(shape, horizon, noise, pad_to, seeds)?)
            }
            CounterKind::Factorization(f) => {
                ContinualCounter::Factorization(FactorizationCounter::new(shape, horizon, noise, f, seeds)?)
            }
        })
    }

    /// Adds the value of round t + 1.
    pub fn add(&mut self, value: &[f64]) -> Result<()> {
        each!(self, c => c.add(value))
    }

    /// The release after the last addition.
    pub fn release(&self) -> &[f64] {
        each!(self, c => c.release())
    }

    pub fn t(&self) -> u64 {
        each!(self, c => c.t())
    }

    pub fn horizon(&self) -> u64 {
        each!(self, c => c.horizon())
    }

    pub fn dim(&self) -> usize {
        each!(self, c => c.dim())
    }

    pub fn noise(&self) -> NoiseSpec {
        each!(self, c => c.noise())
    }

    pub fn os_entropy(&self) -> bool {
        each!(self, c => c.os_entropy())
    }

    /// Noise draws in the current release (see the kinds' `noise_terms`).
    pub fn noise_terms(&self) -> u32 {
        each!(self, c => c.noise_terms())
    }

    /// A fresh counter of an engine configuration's choice: the binary tree
    /// (padded to `pad_to` draws, 0 for none) when `factor` is `None`,
    /// else the factorization it describes (no padding).
    pub fn of_choice(
        shape: &[usize],
        horizon: u64,
        noise: NoiseSpec,
        factor: Option<FactorSpec>,
        pad_to: u32,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        let kind = match factor {
            None => CounterKind::Binary { pad_to },
            Some(f) => CounterKind::Factorization(f.factorization()),
        };
        Self::new(shape, horizon, noise, kind, seeds)
    }

    pub fn use_os_entropy(&mut self) -> Result<()> {
        each!(self, c => c.use_os_entropy())
    }

    pub fn reseed(&mut self, seeds: &SeedSequence) {
        each!(self, c => c.reseed(seeds));
    }

    /// Serialized state: a binary counter's bytes are exactly
    /// [`TreeCounter::to_bytes`]; a factorization counter's start with
    /// [`FACTOR_STATE_TAG`].
    pub fn to_bytes(&self) -> Vec<u8> {
        each!(self, c => c.to_bytes())
    }

    /// Refuses a counter restored inside an engine's state unless it is
    /// consistent and of the kind and layout of `reference`, the counter
    /// the engine's configuration builds (see [`TreeCounter::check_restored`]).
    pub(crate) fn check_restored(&self, reference: &ContinualCounter) -> Result<()> {
        match (self, reference) {
            (ContinualCounter::Binary(c), ContinualCounter::Binary(r)) => c.check_restored(r),
            (ContinualCounter::Factorization(c), ContinualCounter::Factorization(r)) => c.check_restored(r),
            _ => Err(Error::Decode("a counter in the state is not of the kind its configuration builds".into())),
        }
    }

    /// Restores either kind from [`ContinualCounter::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.first() == Some(&FACTOR_STATE_TAG) {
            Ok(ContinualCounter::Factorization(FactorizationCounter::from_bytes(bytes)?))
        } else {
            Ok(ContinualCounter::Binary(TreeCounter::from_bytes(bytes)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_bytes_are_the_tree_counters() {
        let seeds = SeedSequence::from_seed(1);
        let noise = NoiseSpec::Gaussian { sigma: 1.0 };
        let mut a = ContinualCounter::new(&[2], 16, noise, CounterKind::Binary { pad_to: 0 }, &seeds).unwrap();
        let mut b = TreeCounter::new(&[2], 16, noise, false, &seeds).unwrap();
        for t in 0..10 {
            let x = [f64::from(t), 1.0];
            a.add(&x).unwrap();
            b.add(&x).unwrap();
            assert_eq!(a.release(), b.release());
        }
        assert_eq!(a.to_bytes(), b.to_bytes());
        let f =
            ContinualCounter::new(&[2], 16, noise, CounterKind::Factorization(Factorization::Sqrt), &seeds).unwrap();
        assert!(matches!(ContinualCounter::from_bytes(&f.to_bytes()).unwrap(), ContinualCounter::Factorization(_)));
        assert!(matches!(ContinualCounter::from_bytes(&a.to_bytes()).unwrap(), ContinualCounter::Binary(_)));
    }
}
