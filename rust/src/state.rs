//! Serialized state of engines, environments and counters: one encoding
//! (postcard) and one decode error, shared by every `to_bytes`/`from_bytes`.
//! A restored object continues exactly: stored node noise and generator
//! states are part of the encoded value, so nothing is ever redrawn.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{Error, Result};

/// The bytes of `value` (plain data: encoding cannot fail).
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("serializing plain data cannot fail")
}

/// A value written by [`encode`], or [`Error::Decode`].
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    postcard::from_bytes(bytes).map_err(|e| Error::Decode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corrupt_input() {
        let value = (3u64, vec![1.5f64, -2.0], String::from("tree"));
        let back: (u64, Vec<f64>, String) = decode(&encode(&value)).unwrap();
        assert_eq!(back, value);
        assert!(matches!(decode::<(u64, Vec<f64>, String)>(&[0xff, 0xff]), Err(Error::Decode(_))));
    }
}
