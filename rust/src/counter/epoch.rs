//! The epoch counter: every value enters exactly one noisy release.
//!
//! Rounds are cut into geometric epochs that end at e_1 = n_0,
//! e_{k+1} = max(e_k + 1, ceil(r e_k)) (the last one at the horizon).
//! At the end of epoch k the exact sum of its values is released once,
//! plus one draw of the noise; the counter's release is the sum of all
//! released epoch sums, i.e. the prefix sum up to the last completed epoch
//! plus k independent draws. Between epoch ends the release does not
//! change.
//!
//! Each value reaches one draw (not the ~log2 n nodes of the binary tree),
//! so the whole stream of releases is one Gaussian mechanism per value:
//! the noise scale is that of a single release
//! (`dpbandits.privacy.epoch`). The price is the lag: a release at t sums
//! the values up to the last epoch end, at least t / r of them.

use serde::{Deserialize, Serialize};

use super::{check_arguments, check_room, checked_dim, matrix_side, release_runs, too_large, zeros, Counter};
use super::{MAX_STATE_ENTRIES, MAX_VALUE};
use crate::error::{check_finite, Error, Result};
use crate::noise::entropy::EntropyCell;
use crate::noise::lattice::MAX_EXACT_STEPS;
use crate::noise::NoiseSpec;
use crate::rng::{SeedSequence, StreamRng};

/// Largest ratio between consecutive epoch ends accepted.
pub const MAX_RATIO: f64 = 64.0;

/// First byte of a serialized epoch counter, then its format version.
pub const EPOCH_STATE_TAG: u8 = b'E';
const EPOCH_STATE_VERSION: u8 = 1;

/// The end of the epoch after the one ending at `end` (rounds), for
/// epochs growing by `ratio`: max(end + 1, ceil(ratio * end)), capped at
/// `horizon`.
pub fn next_epoch_end(end: u64, ratio: f64, horizon: u64) -> u64 {
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let grown = (ratio * end as f64).ceil().min(horizon as f64) as u64;
    grown.max(end + 1).min(horizon)
}

/// The epoch ends of a horizon: n_0 (capped at the horizon), then
/// [`next_epoch_end`] until the horizon.
pub fn epoch_ends(horizon: u64, first: u64, ratio: f64) -> Vec<u64> {
    let mut ends = Vec::new();
    let mut end = first.min(horizon);
    loop {
        ends.push(end);
        if end >= horizon {
            return ends;
        }
        end = next_epoch_end(end, ratio, horizon);
    }
}

/// A continual counter that releases each epoch's sum once (see the
/// module documentation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EpochCounter {
    shape: Vec<usize>,
    dim: usize,
    side: usize,
    horizon: u64,
    noise: NoiseSpec,
    first: u64,
    ratio: f64,
    t: u64,
    /// Released epochs k.
    epochs: u32,
    /// The end (round) of the current epoch.
    end: u64,
    /// Exact sum of the current epoch's values (on the lattice with
    /// lattice noise).
    exact: Vec<f64>,
    /// Sum of the released epoch sums (exact sums + their draws).
    release: Vec<f64>,
    rng: StreamRng,
    os_entropy: bool,
    #[serde(skip)]
    entropy: EntropyCell,
    /// Scratch for one draw and for a value rounded to the lattice (not state).
    #[serde(skip)]
    draw: Vec<f64>,
    #[serde(skip)]
    rounded: Vec<f64>,
}

impl EpochCounter {
    /// A fresh counter of values of `shape` over `horizon` rounds, epochs
    /// of first length `first` growing by `ratio` (>= 1; 1 makes every
    /// epoch after the first one round long), noise `noise` per release,
    /// drawn from the `"epoch"` stream of `seeds`.
    pub fn new(
        shape: &[usize],
        horizon: u64,
        noise: NoiseSpec,
        first: u64,
        ratio: f64,
        seeds: &SeedSequence,
    ) -> Result<Self> {
        check_arguments(shape, horizon, noise)?;
        if first == 0 || first > horizon {
            return Err(Error::invalid("first_epoch", format!("must lie in [1, horizon = {horizon}], got {first}")));
        }
        if !(ratio.is_finite() && (1.0..=MAX_RATIO).contains(&ratio)) {
            return Err(Error::invalid("epoch_ratio", format!("must lie in [1, {MAX_RATIO}], got {ratio}")));
        }
        let dim = checked_dim(shape).ok_or_else(|| too_large(shape))?;
        if dim.checked_mul(2).is_none_or(|n| n > MAX_STATE_ENTRIES) {
            return Err(too_large(shape));
        }
        Ok(EpochCounter {
            shape: shape.to_vec(),
            dim,
            side: matrix_side(shape),
            horizon,
            noise,
            first,
            ratio,
            t: 0,
            epochs: 0,
            end: first,
            exact: zeros(dim, shape)?,
            release: zeros(dim, shape)?,
            rng: seeds.stream("epoch"),
            os_entropy: false,
            entropy: EntropyCell::default(),
            draw: zeros(dim, shape)?,
            rounded: Vec::new(),
        })
    }

    /// Adds the value of round t + 1; at an epoch's end, releases the
    /// epoch's sum with one draw of the noise.
    pub fn add(&mut self, value: &[f64]) -> Result<()> {
        if value.len() != self.dim {
            return Err(Error::invalid(
                "value",
                format!("expected {} entries (shape {:?}), got {}", self.dim, self.shape, value.len()),
            ));
        }
        if !value.iter().fold(true, |ok, v| ok & (v.abs() <= MAX_VALUE)) {
            check_finite("value", value)?;
            return Err(Error::invalid("value", format!("entries must have magnitude <= {MAX_VALUE:e}")));
        }
        check_room(self.t, self.horizon)?;
        let mut rounded = std::mem::take(&mut self.rounded);
        let value = match self.noise.lattice() {
            Some(s) => {
                rounded.clear();
                rounded.extend_from_slice(value);
                if let Err(e) = s.to_lattice("value", &mut rounded, MAX_EXACT_STEPS / 4.0 / self.horizon as f64) {
                    self.rounded = rounded;
                    return Err(e);
                }
                &rounded[..]
            }
            None => value,
        };
        if self.os_entropy {
            self.entropy.get()?;
        }
        for (s, v) in self.exact.iter_mut().zip(value) {
            *s += v;
        }
        self.rounded = rounded;
        self.t += 1;
        if self.t == self.end {
            self.release_epoch()?;
        }
        Ok(())
    }

    /// Releases the current epoch's sum (one draw) and starts the next.
    fn release_epoch(&mut self) -> Result<()> {
        if self.draw.len() != self.dim {
            self.draw = vec![0.0; self.dim];
        }
        if self.os_entropy {
            self.noise.sample_into(self.entropy.get()?, self.side, &mut self.draw);
        } else {
            self.noise.sample_into(&mut self.rng, self.side, &mut self.draw);
        }
        for ((r, s), z) in self.release.iter_mut().zip(&self.exact).zip(&self.draw) {
            *r += s + z;
        }
        self.exact.fill(0.0);
        self.epochs += 1;
        self.end = next_epoch_end(self.end, self.ratio, self.horizon);
        Ok(())
    }

    /// `runs` independent runs on the rows of `values`, releases after
    /// each addition (see [`super::TreeCounter::release_runs`]).
    pub fn release_runs(&mut self, values: &[f64], runs: usize) -> Result<Vec<f64>> {
        release_runs(self, values, runs)
    }

    /// The sum of the released epoch sums (zeros before the first).
    pub fn release(&self) -> &[f64] {
        &self.release
    }

    /// Number of values added so far.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Released epochs (noise draws in the release).
    pub fn epochs(&self) -> u32 {
        self.epochs
    }

    /// Noise draws in the current release (the released epochs).
    pub fn noise_terms(&self) -> u32 {
        self.epochs
    }

    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn noise(&self) -> NoiseSpec {
        self.noise
    }

    /// First epoch length n_0 and growth ratio r.
    pub fn schedule(&self) -> (u64, f64) {
        (self.first, self.ratio)
    }

    pub fn os_entropy(&self) -> bool {
        self.os_entropy
    }

    /// Every future draw from the operating system.
    pub fn use_os_entropy(&mut self) -> Result<()> {
        self.entropy.get()?;
        self.os_entropy = true;
        Ok(())
    }

    /// Future draws from the `"epoch"` stream of `seeds` (released epochs kept).
    pub fn reseed(&mut self, seeds: &SeedSequence) {
        self.rng = seeds.stream("epoch");
    }

    /// This (fresh) counter drawing from the operating system (`true`) or
    /// its seeded stream.
    pub fn with_os_entropy(mut self, os_entropy: bool) -> Result<Self> {
        if self.t != 0 {
            return Err(Error::State("the entropy source must be chosen before the first addition".into()));
        }
        if os_entropy {
            self.use_os_entropy()?;
        }
        Ok(self)
    }

    /// Shape of each value (and of the release).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The lattice exponent j of lattice noise (None: floating-point noise).
    pub fn secure_exponent(&self) -> Option<i32> {
        self.noise.lattice().map(|s| s.exponent())
    }

    /// The whole state (the current epoch's exact sum, the released sum,
    /// the generator). As secret as the data.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![EPOCH_STATE_TAG, EPOCH_STATE_VERSION];
        out.extend(crate::state::encode(self));
        out
    }

    /// Restores a counter written by [`EpochCounter::to_bytes`]; refuses a
    /// state whose parts disagree with the counter its configuration builds.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        match bytes {
            [EPOCH_STATE_TAG, EPOCH_STATE_VERSION, body @ ..] => {
                let c: EpochCounter = crate::state::decode(body)?;
                let fresh = |c: &EpochCounter| {
                    EpochCounter::new(&c.shape, c.horizon, c.noise, c.first, c.ratio, &SeedSequence::from_seed(0))
                };
                let reference =
                    fresh(&c).map_err(|e| Error::Decode(format!("invalid epoch counter configuration: {e}")))?;
                c.check_restored(&reference)?;
                Ok(c)
            }
            [EPOCH_STATE_TAG, v, ..] => Err(Error::Decode(format!("unknown epoch counter state version {v}"))),
            _ => Err(Error::Decode("not an epoch counter state".into())),
        }
    }

    /// The epoch end that follows `epochs` released epochs.
    fn end_after(&self, epochs: u32) -> Option<u64> {
        let mut end = self.first.min(self.horizon);
        for _ in 0..epochs {
            if end >= self.horizon {
                return None;
            }
            end = next_epoch_end(end, self.ratio, self.horizon);
        }
        Some(end)
    }

    /// Refuses a restored counter whose parts disagree with each other or
    /// with `reference`, the counter its engine's configuration builds.
    pub(crate) fn check_restored(&self, reference: &EpochCounter) -> Result<()> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        // The epoch count fixes the current epoch's end and the rounds it spans.
        let schedule_ok = self.epochs as usize <= epoch_ends(self.horizon, self.first, self.ratio).len()
            && match self.end_after(self.epochs) {
                Some(end) => {
                    let start = if self.epochs == 0 { 0 } else { self.end_after(self.epochs - 1).unwrap_or(0) };
                    end == self.end && self.t >= start && self.t < end
                }
                // Every epoch released: the horizon is reached.
                None => self.t == self.horizon && self.end >= self.horizon,
            };
        let ok = self.shape == reference.shape
            && checked_dim(&self.shape) == Some(self.dim)
            && self.side == matrix_side(&self.shape)
            && self.horizon == reference.horizon
            && self.noise == reference.noise
            && self.first == reference.first
            && self.ratio.to_bits() == reference.ratio.to_bits()
            && self.exact.len() == self.dim
            && self.release.len() == self.dim
            && self.t <= self.horizon
            && schedule_ok
            && finite(&self.exact)
            && finite(&self.release);
        if ok {
            Ok(())
        } else {
            Err(Error::Decode("an epoch counter in the state differs from the one its configuration builds".into()))
        }
    }
}

impl Counter for EpochCounter {
    fn add(&mut self, value: &[f64]) -> Result<()> {
        EpochCounter::add(self, value)
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
        self.epochs = 0;
        self.end = self.first;
        self.exact.fill(0.0);
        self.release.fill(0.0);
    }

    fn take_generator(&mut self, from: Self) {
        self.rng = from.rng;
        self.entropy = from.entropy;
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_geometric_and_ends_at_the_horizon() {
        assert_eq!(epoch_ends(100, 10, 2.0), vec![10, 20, 40, 80, 100]);
        assert_eq!(epoch_ends(5, 1, 1.0), vec![1, 2, 3, 4, 5]);
        assert_eq!(epoch_ends(7, 9, 2.0), vec![7]);
        assert_eq!(epoch_ends(30, 4, 1.5), vec![4, 6, 9, 14, 21, 30]);
    }

    #[test]
    fn noise_off_release_is_the_lagged_prefix_sum() {
        let seeds = SeedSequence::from_seed(3);
        let mut c = EpochCounter::new(&[2], 40, NoiseSpec::Zero, 4, 2.0, &seeds).unwrap();
        let mut exact = [0.0, 0.0];
        let mut at_end = [0.0, 0.0];
        for t in 1..=40u64 {
            let v = [t as f64, 1.0];
            exact[0] += v[0];
            exact[1] += v[1];
            c.add(&v).unwrap();
            if [4, 8, 16, 32, 40].contains(&t) {
                at_end = exact;
            }
            assert_eq!(c.release(), &at_end, "t = {t}");
        }
        assert_eq!(c.epochs(), 5);
        assert!(c.add(&[0.0, 0.0]).is_err());
    }

    #[test]
    fn one_draw_per_epoch_and_constant_between_ends() {
        let seeds = SeedSequence::from_seed(5);
        let mut c = EpochCounter::new(&[3], 64, NoiseSpec::Gaussian { sigma: 1.0 }, 8, 2.0, &seeds).unwrap();
        let mut last = c.release().to_vec();
        for t in 1..=64u64 {
            c.add(&[0.0; 3]).unwrap();
            let changed = c.release() != last.as_slice();
            assert_eq!(changed, [8, 16, 32, 64].contains(&t), "t = {t}");
            last = c.release().to_vec();
        }
        assert_eq!(c.noise_terms(), 4);
    }

    #[test]
    fn restored_state_is_checked_against_the_configuration() {
        let seeds = SeedSequence::from_seed(7);
        let mut c = EpochCounter::new(&[2], 50, NoiseSpec::Gaussian { sigma: 1.0 }, 3, 1.5, &seeds).unwrap();
        let reference = c.clone();
        for _ in 0..20 {
            c.add(&[1.0, 0.5]).unwrap();
            c.check_restored(&reference).unwrap();
        }
        let mut bad = c.clone();
        bad.epochs += 1;
        assert!(bad.check_restored(&reference).is_err());
        let mut bad = c.clone();
        bad.end += 1;
        assert!(bad.check_restored(&reference).is_err());
        let mut bad = c.clone();
        bad.t = 49;
        assert!(bad.check_restored(&reference).is_err());
        let mut bad = c.clone();
        bad.release[0] = f64::NAN;
        assert!(bad.check_restored(&reference).is_err());
        let other = EpochCounter::new(&[2], 50, NoiseSpec::Gaussian { sigma: 1.0 }, 3, 2.0, &seeds).unwrap();
        assert!(c.check_restored(&other).is_err());
    }

    #[test]
    fn state_round_trip_continues_exactly_and_bad_states_are_refused() {
        let seeds = SeedSequence::from_seed(11);
        let mut c = EpochCounter::new(&[2, 2], 30, NoiseSpec::Gaussian { sigma: 1.0 }, 3, 2.0, &seeds).unwrap();
        for _ in 0..7 {
            c.add(&[1.0, 0.5, 0.5, 2.0]).unwrap();
        }
        let bytes = c.to_bytes();
        let mut back = EpochCounter::from_bytes(&bytes).unwrap();
        assert_eq!(back.release(), c.release());
        for _ in 0..10 {
            c.add(&[1.0, 0.0, 0.0, 1.0]).unwrap();
            back.add(&[1.0, 0.0, 0.0, 1.0]).unwrap();
        }
        assert_eq!(back.release(), c.release());
        assert!(EpochCounter::from_bytes(&bytes[..bytes.len() - 3]).is_err());
        assert!(EpochCounter::from_bytes(&[EPOCH_STATE_TAG, 99]).is_err());
        assert!(EpochCounter::from_bytes(b"F").is_err());
        let mut bad = c.clone();
        bad.t = 2;
        assert!(EpochCounter::from_bytes(&bad.to_bytes()).is_err());
    }

    #[test]
    fn arguments_are_checked() {
        let seeds = SeedSequence::from_seed(1);
        let n = NoiseSpec::Zero;
        assert!(EpochCounter::new(&[2], 10, n, 0, 2.0, &seeds).is_err());
        assert!(EpochCounter::new(&[2], 10, n, 11, 2.0, &seeds).is_err());
        assert!(EpochCounter::new(&[2], 10, n, 1, 0.5, &seeds).is_err());
        assert!(EpochCounter::new(&[2], 10, n, 1, f64::NAN, &seeds).is_err());
        assert!(EpochCounter::new(&[2], 0, n, 1, 2.0, &seeds).is_err());
    }
}
