//! Frank–Wolfe core sets (Hanna et al., App. A) on seeded random unit-norm
//! actions: K = 1000, d = 10 and K = 10^4, d = 20.
//!
//! Three configurations per size: the paper's rule 2d with and without the
//! support reduction, and a tight rule 1.001 d (many Frank–Wolfe steps,
//! no reduction). Random unit vectors are nearly isotropic, so the uniform
//! start already meets 2d: the first two rows time the setup and the
//! reduction, the third the Frank–Wolfe loop.

use std::hint::black_box;
use std::time::Duration;

use _core::design::{core_set, DesignOptions, DEFAULT_MAX_ITER};
use _core::rng::SeedSequence;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand_distr::{Distribution, StandardNormal};

fn unit_actions(k: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = SeedSequence::from_seed(seed).stream("bench-actions");
    let mut a = vec![0.0; k * d];
    for row in a.chunks_exact_mut(d) {
        for v in row.iter_mut() {
            *v = StandardNormal.sample(&mut rng);
        }
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        for v in row.iter_mut() {
            *v /= norm;
        }
    }
    a
}

fn bench_core_set(c: &mut Criterion) {
    let mut group = c.benchmark_group("core_set");
    for (k, d, samples) in [(1000, 10, 30), (10_000, 20, 10)] {
        group.sample_size(samples);
        if k > 1000 {
            group.measurement_time(Duration::from_secs(5));
        }
        let a = unit_actions(k, d, 2024);
        let size = format!("K{k}_d{d}");
        let configs =
            [("2d_reduced", None, true), ("2d_full", None, false), ("1.001d_full", Some(1.001 * d as f64), false)];
        for (name, stop_at, reduce_support) in configs {
            let options = DesignOptions { stop_at, max_iter: DEFAULT_MAX_ITER, reduce_support };
            group.bench_with_input(BenchmarkId::new(name, &size), &a, |b, a| {
                b.iter(|| core_set(black_box(a), k, d, &options).unwrap());
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_core_set);
criterion_main!(benches);
