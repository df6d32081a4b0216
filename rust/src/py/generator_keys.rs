//! The keys of an engine's seeded generators, for the checkpoint check of
//! a header's `seed` (`dpbandits.checkpoint`).
//!
//! Every seeded stream of an engine is a ChaCha8 generator derived from
//! the engine's root seed when it is built (or reseeded): its key is fixed
//! for its life, only its position moves. So the keys of an engine built
//! from a seed are the keys of every engine restored from a run that
//! started from that seed, and a header that names another seed than the
//! one the engine bytes were drawn from is seen. The keys are read from the
//! engine's serde serialization (ChaCha8's abstract state
//! `{"seed": [32 bytes], "stream": .., "word_pos": ..}`), scanned as the
//! JSON text is written: memory stays constant whatever the state's size.

use std::io::Write;

use serde::Serialize;

/// The 32-byte keys of the ChaCha generators in `value`'s serialization,
/// in serialization order (empty when it has none).
pub(crate) fn generator_keys<T: Serialize>(value: &T) -> Vec<[u8; 32]> {
    let mut scan = KeyScan::default();
    // Writing to the scanner cannot fail; a value that does not serialize
    // has no keys to report.
    if serde_json::to_writer(&mut scan, value).is_err() {
        return Vec::new();
    }
    scan.keys
}

/// The JSON text that opens a ChaCha generator's abstract state.
const MARKER: &[u8] = b"{\"seed\":[";

/// A writer that keeps nothing of the text but the generators' keys.
#[derive(Default)]
struct KeyScan {
    /// Bytes of [`MARKER`] matched so far.
    matched: usize,
    /// Inside a key's array: its bytes so far and the number being read.
    in_key: bool,
    bytes: Vec<u8>,
    current: u32,
    keys: Vec<[u8; 32]>,
}

impl KeyScan {
    fn push(&mut self, b: u8) {
        if self.in_key {
            match b {
                b'0'..=b'9' => self.current = (self.current * 10 + u32::from(b - b'0')).min(256),
                b',' | b']' => {
                    self.bytes.push(u8::try_from(self.current).unwrap_or(u8::MAX));
                    self.current = 0;
                    if b == b']' {
                        if let Ok(key) = <[u8; 32]>::try_from(self.bytes.as_slice()) {
                            self.keys.push(key);
                        }
                        self.in_key = false;
                        self.bytes.clear();
                    }
                }
                _ => {
                    self.in_key = false;
                    self.bytes.clear();
                    self.current = 0;
                }
            }
            return;
        }
        // '{' occurs only first in the marker: a mismatch restarts the match.
        if b == MARKER[self.matched] {
            self.matched += 1;
            if self.matched == MARKER.len() {
                self.matched = 0;
                self.in_key = true;
            }
        } else {
            self.matched = usize::from(b == MARKER[0]);
        }
    }
}

impl Write for KeyScan {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            self.push(b);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;

    #[test]
    fn keys_of_the_streams_of_one_seed_are_found_and_differ_between_seeds() {
        #[derive(Serialize)]
        struct Engine {
            x: Vec<f64>,
            a: crate::rng::StreamRng,
            b: crate::rng::StreamRng,
        }
        let make = |seed: u64| {
            let root = SeedSequence::from_seed(seed);
            Engine { x: vec![1.5, -2.0], a: root.stream("a"), b: root.stream("b") }
        };
        let keys = generator_keys(&make(1));
        assert_eq!(keys.len(), 2);
        assert_ne!(keys[0], keys[1]);
        assert_eq!(keys, generator_keys(&make(1)));
        assert_ne!(keys, generator_keys(&make(2)));
    }
}
