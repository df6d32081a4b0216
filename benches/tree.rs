//! Cost of one round of a tree counter over (d+1) x (d+1) matrices: add the
//! round's value and read the release, as JDP-LinUCB does every round
//! (Shariff–Sheffet §4, horizon n = 5 x 10^7 as in App. D).
//!
//! Run: `cargo bench --bench tree -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use _core::counter::tree::TreeCounter;
use _core::counter::{ContinualCounter, CounterKind, Factorization};
use _core::noise::NoiseSpec;
use _core::rng::SeedSequence;

const P: usize = 6;
const HORIZON: u64 = 50_000_000;

/// A fixed symmetric round value (x x^T for the augmented x = (z, y)).
fn round_value() -> Vec<f64> {
    let x = [0.3, -0.2, 0.5, 0.1, -0.4, 0.7];
    let mut v = vec![0.0; P * P];
    for i in 0..P {
        for j in 0..P {
            v[i * P + j] = x[i] * x[j];
        }
    }
    v
}

fn add_and_release(c: &mut Criterion) {
    let mut group = c.benchmark_group("tree_6x6_horizon_5e7");
    group.throughput(Throughput::Elements(1));
    let value = round_value();
    let specs = [
        ("zero", NoiseSpec::Zero),
        ("symmetric_gaussian", NoiseSpec::SymmetricGaussian { sigma: 1.0 }),
        ("wishart_df_1e5", NoiseSpec::Wishart { scale: 1.0, df: 1e5 }),
    ];
    for (name, noise) in specs {
        let seeds = SeedSequence::from_seed(4);
        let fresh = || TreeCounter::new(&[P, P], HORIZON, noise, false, &seeds).expect("valid counter");
        let mut counter = fresh();
        group.bench_function(name, |b| {
            b.iter(|| {
                // Criterion runs far fewer than 5e7 rounds; start over if not.
                if counter.t() == HORIZON {
                    counter = fresh();
                }
                counter.add(black_box(&value)).expect("within the horizon");
                black_box(counter.release()[P + 1])
            });
        });
    }
    group.finish();
}

/// The BLT encoder of `dpbandits.privacy.factorization.BLT_4`.
fn blt4() -> Factorization {
    Factorization::Blt {
        theta: vec![0.651_266_56, 0.999_821_55, 0.991_283_57, 0.999_997_64],
        omega: vec![0.465_418_62, 0.017_516_84, 0.114_831_17, 0.002_687_27],
    }
}

/// The smooth binary trees `dpbandits.privacy.smooth_binary.smooth_binary_shape`
/// picks at n = 5e7: Gaussian (29, 12), Laplace (46, 39).
const SMOOTH_GAUSSIAN: Factorization = Factorization::SmoothBinary { height: 29, ones: 12 };
const SMOOTH_LAPLACE: Factorization = Factorization::SmoothBinary { height: 46, ones: 39 };

/// Per-step cost of the streaming counters (BLT, smooth binary) against the
/// binary tree (target: <= 2x), scalar and 6 x 6, float and
/// lattice noise; Laplace noise: smooth binary against the tree.
fn counters(c: &mut Criterion) {
    let mut group = c.benchmark_group("counter_step_horizon_5e7");
    group.throughput(Throughput::Elements(1));
    for (shape, noise) in [
        (vec![], NoiseSpec::Gaussian { sigma: 1.0 }),
        (vec![P, P], NoiseSpec::SymmetricGaussian { sigma: 1.0 }),
        (vec![], NoiseSpec::Laplace { scale: 1.0 }),
        (vec![P, P], NoiseSpec::Laplace { scale: 1.0 }),
    ] {
        let laplace = matches!(noise, NoiseSpec::Laplace { .. });
        let dim: usize = shape.iter().product();
        let value = if dim == 1 { vec![0.5] } else { round_value() };
        for lattice in [false, true] {
            let noise = if lattice { noise.on_lattice(19).expect("valid lattice") } else { noise };
            let kinds = if laplace {
                vec![
                    ("binary_laplace", CounterKind::Binary { pad_to: 0 }),
                    ("smooth_binary_laplace", CounterKind::Factorization(SMOOTH_LAPLACE)),
                ]
            } else {
                vec![
                    ("binary", CounterKind::Binary { pad_to: 0 }),
                    ("blt", CounterKind::Factorization(blt4())),
                    ("smooth_binary", CounterKind::Factorization(SMOOTH_GAUSSIAN)),
                ]
            };
            for (name, kind) in kinds {
                let seeds = SeedSequence::from_seed(4);
                let fresh =
                    || ContinualCounter::new(&shape, HORIZON, noise, kind.clone(), &seeds).expect("valid counter");
                let mut counter = fresh();
                let label = format!(
                    "{name}_{}_{}",
                    if dim == 1 { "scalar" } else { "6x6" },
                    if lattice { "lattice" } else { "float" }
                );
                group.bench_function(label, |b| {
                    b.iter(|| {
                        if counter.t() == HORIZON {
                            counter = fresh();
                        }
                        counter.add(black_box(&value)).expect("within the horizon");
                        black_box(counter.release()[0])
                    });
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, add_and_release, counters);
criterion_main!(benches);
