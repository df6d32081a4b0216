//! Entropy sources of the privacy noise: the operating system, or the
//! seeded ChaCha stream.
//!
//! The samplers of [`super`] draw from any generator: the seeded ChaCha
//! stream (`crate::rng`) for reproducible research runs, or [`OsEntropy`],
//! a ChaCha20 stream keyed and rekeyed from the operating system's
//! generator (`getrandom`), for secure mode. [`EntropyCell`] opens that
//! source lazily for a counter; [`NoiseRng`] is an engine's choice between
//! the two, kept as state (the operating-system source itself is never
//! serialized: there is nothing to restore).

use rand_core::{OsRng, RngCore, SeedableRng, TryRngCore};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::rng::StreamRng;

/// Words drawn from one key before the generator is rekeyed from the
/// operating system.
const REKEY_WORDS: u32 = 1 << 16;

/// Randomness from the operating system: a ChaCha20 stream keyed with 256
/// fresh bits from `getrandom` and rekeyed every [`REKEY_WORDS`] words (the
/// construction of the kernel's own generator, without a system call per
/// word). No seed exists that reproduces it, and it is never serialized.
///
/// `OsRng` can only fail when the kernel has no entropy pool at all; the
/// constructor keys the stream, so such a system fails there with an error
/// instead of later. A later failure (not known to happen on Linux once the
/// pool is initialised) panics inside `next_u64`, which PyO3 turns into a
/// `PanicException`: it cannot silently produce predictable noise.
pub struct OsEntropy {
    stream: rand_chacha::ChaCha20Rng,
    words_left: u32,
}

fn os_key() -> std::result::Result<[u8; 32], rand_core::OsError> {
    let mut key = [0u8; 32];
    OsRng.try_fill_bytes(&mut key)?;
    Ok(key)
}

impl OsEntropy {
    /// A source keyed from the operating system.
    pub fn new() -> Result<Self> {
        let key = os_key().map_err(|e| Error::State(format!("operating-system entropy unavailable: {e}")))?;
        Ok(OsEntropy { stream: rand_chacha::ChaCha20Rng::from_seed(key), words_left: REKEY_WORDS })
    }
}

impl std::fmt::Debug for OsEntropy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OsEntropy")
    }
}

impl RngCore for OsEntropy {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    fn next_u64(&mut self) -> u64 {
        if self.words_left == 0 {
            let key = os_key().expect("operating-system entropy failed after start-up");
            self.stream = rand_chacha::ChaCha20Rng::from_seed(key);
            self.words_left = REKEY_WORDS;
        }
        self.words_left -= 1;
        self.stream.next_u64()
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

/// A lazily opened [`OsEntropy`] held by a counter. Cloning gives an
/// unopened cell (a clone must never replay another object's entropy), and
/// it is never serialized: there is no state to restore.
#[derive(Default)]
pub struct EntropyCell(Option<OsEntropy>);

impl EntropyCell {
    /// The source, opened on first use.
    pub fn get(&mut self) -> Result<&mut OsEntropy> {
        if self.0.is_none() {
            self.0 = Some(OsEntropy::new()?);
        }
        Ok(self.0.as_mut().expect("just opened"))
    }
}

impl Clone for EntropyCell {
    fn clone(&self) -> Self {
        EntropyCell(None)
    }
}

impl std::fmt::Debug for EntropyCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EntropyCell")
    }
}

/// The entropy source of a privacy-noise stream: the seeded ChaCha stream
/// (reproducible research runs) or the operating system (secure mode).
///
/// The choice is state (serialized); the operating-system source is not
/// (nothing to restore): a restored secure stream reopens it, and never
/// falls back to the seeded stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NoiseRng {
    seeded: StreamRng,
    os: bool,
    #[serde(skip)]
    cell: EntropyCell,
}

impl NoiseRng {
    /// A stream drawing from `rng`.
    pub fn seeded(rng: StreamRng) -> Self {
        NoiseRng { seeded: rng, os: false, cell: EntropyCell::default() }
    }

    /// From now on, draw from the operating system (opened here, so that a
    /// system without entropy fails now rather than at a later draw).
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.cell.get()?;
        self.os = true;
        Ok(())
    }

    /// Whether draws come from the operating system.
    pub fn is_os(&self) -> bool {
        self.os
    }

    /// Replaces the seeded stream (`fork`); a secure stream stays secure.
    pub fn reseed(&mut self, rng: StreamRng) {
        self.seeded = rng;
    }

    /// The generator to draw from.
    pub fn source(&mut self) -> Result<&mut dyn RngCore> {
        if self.os {
            Ok(self.cell.get()?)
        } else {
            Ok(&mut self.seeded)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_entropy_rekeys_and_keeps_giving_words() {
        let mut a = OsEntropy::new().unwrap();
        let words: Vec<u64> = (0..3 * REKEY_WORDS as usize + 7).map(|_| a.next_u64()).collect();
        // Across the rekeys no word repeats its predecessor, and the bits
        // are balanced (each of the 64 bit positions set in 50% +- 1%).
        assert!(words.windows(2).all(|w| w[0] != w[1]));
        for bit in 0..64 {
            let ones = words.iter().filter(|w| (*w >> bit) & 1 == 1).count() as f64 / words.len() as f64;
            assert!((ones - 0.5).abs() < 0.01, "bit {bit}: {ones}");
        }
    }

    #[test]
    fn os_entropy_gives_different_words() {
        let mut a = OsEntropy::new().unwrap();
        let mut b = OsEntropy::new().unwrap();
        assert_ne!(a.next_u64(), b.next_u64());
        let words: Vec<u64> = (0..1000).map(|_| a.next_u64()).collect();
        assert!(words.windows(2).all(|w| w[0] != w[1]));
    }
}
