//! Cost of one round of a tree counter over (d+1) x (d+1) matrices: add the
//! round's value and read the release, as JDP-LinUCB does every round
//! (Shariff–Sheffet §4, horizon n = 5 x 10^7 as in App. D).
//!
//! Run: `cargo bench --bench tree -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use _core::noise::NoiseSpec;
use _core::rng::SeedSequence;
use _core::tree::TreeCounter;

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

criterion_group!(benches, add_and_release);
criterion_main!(benches);
