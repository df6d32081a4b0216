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
//!   [`FactorizationCounter`] state.
//!
//! Learners that release prefix sums hold a [`ContinualCounter`] and do not
//! care which one it is; the noise scale for each kind comes from
//! `dpbandits.privacy` (binary: `calibration.py`; factorizations:
//! `factorization.py`).

pub mod factorization;
pub mod smooth_binary;
pub mod tree;

use serde::{Deserialize, Serialize};

pub use factorization::{sqrt_coefficients, FactorSpec, Factorization, FactorizationCounter, FACTOR_STATE_TAG};
pub use tree::{Padding, TreeCounter};

use crate::error::Result;
use crate::noise::NoiseSpec;
use crate::rng::SeedSequence;

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
