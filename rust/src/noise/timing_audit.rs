//! The running time of single releases against the value drawn: the
//! measurements behind the timing test (dudect style: Reparaz, Balasch &
//! Verbauwhede 2017, "Dude, is my code constant time?").
//!
//! [`measure`] times `count` releases of one kind one at a time, each
//! between two reads of the processor's time-stamp counter (serialised
//! with `lfence`, on x86-64; a monotonic clock in nanoseconds elsewhere),
//! and returns each release's noise with its time. The releases' classes
//! (the largest noise draws against the median ones) are decided after the
//! fact from the values, so the classes are interleaved in random order
//! by construction, and whatever disturbs the machine while the loop runs
//! (other processes, frequency changes) falls on both classes alike.
//!
//! Kinds ([`TimedKind`]): the cell-table discrete Laplace (t = 2^20
//! steps) and discrete Gaussian (sigma = 2^20 steps) by the constant-time
//! path, the same by the branching path on the wide table it was tuned on,
//! von Neumann's discrete Laplace (whose running time grows with the
//! magnitude drawn: a positive control a timing test must flag), the
//! constant-time Laplace with a planted branch on the value (the other
//! positive control: a data-dependent branch in the caller, a few cycles
//! on the 1% largest draws), and a learner's release: one round of a
//! scalar tree counter with lattice Laplace node noise (the counter of the
//! K-armed learners), whose noise is the release minus the exact prefix
//! sum.

use std::hint::black_box;

use rand_core::RngCore;

use super::cell_sampler::{CellSampler, Shape};
use super::discrete_laplace::discrete_laplace_von_neumann;
use super::NoiseSpec;
use crate::counter::tree::TreeCounter;
use crate::error::{Error, Result};
use crate::rng::SeedSequence;

/// What one timed release is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimedKind {
    /// The cell-table discrete Laplace, t = 2^20, constant-time path.
    Laplace,
    /// The cell-table discrete Gaussian, var = 2^40, constant-time path.
    Gaussian,
    /// The wide cell-table discrete Laplace by the branching path.
    LaplaceBranching,
    /// The wide cell-table discrete Gaussian by the branching path.
    GaussianBranching,
    /// The constant-time Laplace followed by a branch on the magnitude
    /// (above 4.6 t, the 1% largest) into a few cycles of extra work.
    PlantedLaplace,
    /// Von Neumann's discrete Laplace, t = 2^20 (the positive control).
    VonNeumannLaplace,
    /// One add-and-release round of a scalar tree counter over 2^20
    /// rounds with lattice Laplace node noise.
    TreeRelease,
}

impl TimedKind {
    /// The kind named `name` (the names of the Python binding).
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "laplace" => TimedKind::Laplace,
            "gaussian" => TimedKind::Gaussian,
            "laplace-branching" => TimedKind::LaplaceBranching,
            "gaussian-branching" => TimedKind::GaussianBranching,
            "von-neumann-laplace" => TimedKind::VonNeumannLaplace,
            "planted-laplace" => TimedKind::PlantedLaplace,
            "tree-release" => TimedKind::TreeRelease,
            other => {
                return Err(Error::invalid(
                    "kind",
                    format!(
                        "expected 'laplace', 'gaussian', 'laplace-branching', 'gaussian-branching', \
                         'von-neumann-laplace', 'planted-laplace' or 'tree-release', got {other:?}"
                    ),
                ))
            }
        })
    }
}

/// Ticks of the time-stamp counter, serialised so that the timed work
/// neither starts before the first read nor ends after the second.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::inline_always, unsafe_code)]
fn ticks() -> u64 {
    use std::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: lfence (SSE2, part of the x86-64 baseline) and rdtsc exist
    // on every x86-64 processor; neither touches memory.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
#[allow(clippy::inline_always)]
fn ticks() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Largest number of releases one call times (24 bytes each).
pub const MAX_TIMED: usize = 1 << 26;

/// Independent counters the tree-release kind steps in turn.
pub const COUNTERS: usize = 1024;

/// Timed releases: per release, its noise, its ticks and its round (the
/// counter's t for the tree-release kind, 0 for the samplers).
#[derive(Clone, Debug, Default)]
pub struct Timed {
    pub values: Vec<f64>,
    pub ticks: Vec<u64>,
    pub rounds: Vec<u64>,
}

/// `count` releases of `kind`, each timed alone. The seeded streams of
/// `seed` drive the noise; the first releases warm the caches and are
/// timed like the others (the caller drops them).
///
/// The tree-release kind steps [`COUNTERS`] independent counters (each
/// seeded from `seed` and its index), round by round, in a fresh random
/// order each round: a counter's releases share its noisy nodes, so the
/// large releases of one counter come in runs of consecutive rounds, and
/// interleaving the counters spreads them out in time (load on the machine
/// then falls on both classes alike).
pub fn measure(kind: TimedKind, count: usize, seed: u64) -> Result<Timed> {
    if count == 0 || count > MAX_TIMED {
        return Err(Error::invalid("count", format!("must lie in [1, {MAX_TIMED}], got {count}")));
    }
    let mut values = vec![0.0f64; count];
    let mut ticks = vec![0u64; count];
    let mut rounds = vec![0u64; count];
    let mut rng = SeedSequence::from_seed(seed).stream("timing");
    let t: u64 = 1 << 20;
    match kind {
        TimedKind::Laplace | TimedKind::LaplaceBranching | TimedKind::Gaussian | TimedKind::GaussianBranching => {
            let shape = if matches!(kind, TimedKind::Laplace | TimedKind::LaplaceBranching) {
                Shape::Laplace { t }
            } else {
                Shape::Gaussian { var: u128::from(t) * u128::from(t) }
            };
            // One closure a path: no test of the kind inside the timed code.
            if matches!(kind, TimedKind::LaplaceBranching | TimedKind::GaussianBranching) {
                let table = CellSampler::wide(shape);
                time_each(&mut values, &mut ticks, |_| table.sample_branching(&mut rng) as f64);
            } else {
                let table = CellSampler::new(shape);
                time_each(&mut values, &mut ticks, |_| table.sample_constant_time(&mut rng) as f64);
            }
        }
        TimedKind::PlantedLaplace => {
            let table = CellSampler::new(Shape::Laplace { t });
            // P[|Y| > 4.6 t] = 2 e^{-4.6} / (1 + e^{-1/t}) = 1.0%.
            let cut = (4.6 * t as f64) as i64;
            time_each(&mut values, &mut ticks, |_| {
                let y = table.sample_constant_time(&mut rng);
                if y.abs() > cut {
                    // The planted dependence: a branch taken on the value
                    // (mispredicted: it is rarely taken) and a few
                    // dependent operations.
                    return black_box(black_box(y) as f64 + 0.0);
                }
                y as f64
            });
        }
        TimedKind::VonNeumannLaplace => {
            time_each(&mut values, &mut ticks, |_| discrete_laplace_von_neumann(&mut rng, t) as f64);
        }
        TimedKind::TreeRelease => {
            let horizon = count.div_ceil(COUNTERS) as u64;
            let noise = NoiseSpec::Laplace { scale: 1.0 }.on_lattice(20)?;
            let mut counters = (0..COUNTERS)
                .map(|i| {
                    TreeCounter::new(
                        &[],
                        horizon,
                        noise,
                        false,
                        &SeedSequence::from_seed(seed).child("timing-counter", i as u64),
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            let mut exact = vec![0.0f64; COUNTERS];
            // The schedule: round by round, the counters in a random order.
            let mut order: Vec<usize> = (0..COUNTERS).collect();
            let mut schedule = Vec::with_capacity(count);
            while schedule.len() < count {
                for i in (1..COUNTERS).rev() {
                    order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
                }
                schedule.extend_from_slice(&order[..COUNTERS.min(count - schedule.len())]);
            }
            for (slot, &c) in rounds.iter_mut().zip(&schedule) {
                *slot = counters[c].t() + 1;
                counters[c].add_scalar(0.0).expect("within the horizon");
            }
            // Fresh counters for the timed pass (the pass above only
            // recorded each release's round).
            let mut counters = (0..COUNTERS)
                .map(|i| {
                    TreeCounter::new(
                        &[],
                        horizon,
                        noise,
                        false,
                        &SeedSequence::from_seed(seed).child("timing-counter", i as u64),
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            let step = 1.0 / f64::from(1u32 << 20);
            time_each(&mut values, &mut ticks, |i| {
                let c = schedule[i];
                // The rewards: an arbitrary fixed stream of lattice values,
                // the exact prefix sums alongside.
                let reward = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44) as f64 * step;
                exact[c] += reward;
                counters[c].add_scalar(reward).expect("within the horizon");
                counters[c].release()[0] - exact[c]
            });
        }
    }
    Ok(Timed { values, ticks, rounds })
}

/// values[i] = release(i), times[i] its ticks, one at a time.
#[inline(never)]
fn time_each(values: &mut [f64], times: &mut [u64], mut release: impl FnMut(usize) -> f64) {
    for (i, (v, t)) in values.iter_mut().zip(times.iter_mut()).enumerate() {
        let start = ticks();
        let y = black_box(release(black_box(i)));
        let end = ticks();
        *v = y;
        *t = end.wrapping_sub(start);
    }
}

/// `count` draws of a cell-table kind with the generator words each took:
/// (value, words) per draw (the tests of the fixed number of words).
pub fn words_per_release(kind: TimedKind, count: usize, seed: u64) -> Result<Vec<(f64, u64)>> {
    struct Counting<R>(R, u64);
    impl<R: RngCore> RngCore for Counting<R> {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.1 += 1;
            self.0.next_u64()
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            rand_core::impls::fill_bytes_via_next(self, dest);
        }
    }
    let shape = match kind {
        TimedKind::Laplace | TimedKind::LaplaceBranching => Shape::Laplace { t: 1 << 20 },
        TimedKind::Gaussian | TimedKind::GaussianBranching => Shape::Gaussian { var: 1 << 40 },
        _ => return Err(Error::invalid("kind", "words are counted for the cell tables only")),
    };
    let table = if matches!(kind, TimedKind::Laplace | TimedKind::Gaussian) {
        CellSampler::new(shape)
    } else {
        CellSampler::wide(shape)
    };
    let mut rng = Counting(SeedSequence::from_seed(seed).stream("timing"), 0);
    Ok((0..count)
        .map(|_| {
            let before = rng.1;
            let y = if matches!(kind, TimedKind::Laplace | TimedKind::Gaussian) {
                table.sample_constant_time(&mut rng)
            } else {
                table.sample_branching(&mut rng)
            };
            (y as f64, rng.1 - before)
        })
        .collect())
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn measures_every_kind_and_refuses_bad_counts() {
        for name in [
            "laplace",
            "gaussian",
            "laplace-branching",
            "gaussian-branching",
            "von-neumann-laplace",
            "planted-laplace",
            "tree-release",
        ] {
            let m = measure(TimedKind::from_name(name).unwrap(), 3000, 1).unwrap();
            assert_eq!((m.values.len(), m.ticks.len(), m.rounds.len()), (3000, 3000, 3000));
            assert!(m.values.iter().any(|&x| x != 0.0), "{name}");
            if name == "tree-release" {
                // Every counter plays rounds 1, 2, 3 in turn.
                assert!(m.rounds[..COUNTERS].iter().all(|&t| t == 1));
                assert!(m.rounds[2 * COUNTERS..].iter().all(|&t| t == 3));
            }
        }
        assert!(TimedKind::from_name("x").is_err());
        assert!(measure(TimedKind::Laplace, 0, 1).is_err());
    }

    #[test]
    fn the_constant_time_path_takes_as_many_words_whatever_the_value() {
        // A proposal takes one word (two with probability about 2^-17, for
        // any value); the count of proposals does not depend on the value
        // accepted: the mean words of the 1% largest draws and of the
        // others agree within sampling error.
        for kind in [TimedKind::Laplace, TimedKind::Gaussian] {
            let draws = words_per_release(kind, 200_000, 7).unwrap();
            assert!(draws.iter().all(|&(_, w)| w >= 1), "{kind:?}");
            let mut mags: Vec<f64> = draws.iter().map(|&(y, _)| y.abs()).collect();
            mags.sort_by(f64::total_cmp);
            let cut = mags[mags.len() * 99 / 100];
            let mean = |big: bool| {
                let w: Vec<f64> =
                    draws.iter().filter(|&&(y, _)| (y.abs() > cut) == big).map(|&(_, w)| w as f64).collect();
                w.iter().sum::<f64>() / w.len() as f64
            };
            let (large, rest) = (mean(true), mean(false));
            // Words per draw are about N, N geometric with success about
            // 0.98: sd about 0.15, so the mean of 2,000 draws errs by about
            // 0.003.
            assert!((large - rest).abs() < 0.02, "{kind:?}: {large} vs {rest}");
        }
    }
}
