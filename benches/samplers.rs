//! Cost of one noise draw, and of the generator behind every stream.
//!
//! Reference points for DESIGN.md "Performance": Gaussian draws dominate the
//! simulation cost, and the Wishart sampler must cost the same at the
//! paper's k ~ 1e5-1e6 as at k = 10 (Bartlett decomposition, O(p^3)).
//!
//! Run: `cargo bench --bench samplers -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand_core::RngCore;

use _core::noise::cell_sampler::{CellSampler, Shape};
use _core::noise::discrete_gaussian::discrete_gaussian_cks;
use _core::noise::discrete_laplace::discrete_laplace_von_neumann;
use _core::noise::{fill_symmetric_gaussian, gaussian, laplace, NoiseSpec, WishartSampler};
use _core::rng::SeedSequence;

/// Side of the matrices: (d + 1) with d = 5, the Shariff–Sheffet D.2 workload.
const P: usize = 6;

fn scalar_draws(c: &mut Criterion) {
    let mut group = c.benchmark_group("scalar");
    group.throughput(Throughput::Elements(1));
    let mut rng = SeedSequence::from_seed(1).stream("bench");
    group.bench_function("laplace", |b| b.iter(|| laplace(&mut rng, black_box(1.0))));
    group.bench_function("gaussian", |b| b.iter(|| gaussian(&mut rng, black_box(1.0))));
    // Exact discrete draws on a lattice (the default law of released
    // values): scale 1 on the lattice 2^-20, i.e. about 10^6 steps.
    let lattice_laplace = NoiseSpec::Laplace { scale: 1.0 }.on_lattice(20).expect("valid lattice");
    group.bench_function("lattice_laplace", |b| b.iter(|| lattice_laplace.sample(black_box(&mut rng))));
    let lattice_gaussian = NoiseSpec::Gaussian { sigma: 1.0 }.on_lattice(20).expect("valid lattice");
    group.bench_function("lattice_gaussian", |b| b.iter(|| lattice_gaussian.sample(black_box(&mut rng))));
    // The exact discrete samplers themselves at about 2^20 steps: the cell
    // tables (the default; table built once) against the rejection
    // samplers they replaced (von Neumann's Laplace, CKS Alg. 3's Gaussian).
    let (t, var) = (1u64 << 20, 1u128 << 40);
    let cell_laplace = CellSampler::new(Shape::Laplace { t });
    let cell_gaussian = CellSampler::new(Shape::Gaussian { var });
    let wide_laplace = CellSampler::wide(Shape::Laplace { t });
    let wide_gaussian = CellSampler::wide(Shape::Gaussian { var });
    // `sample` is the constant-time path on the default table (a release's
    // time independent of its value); `sample_branching` on the wide table
    // is the path with value-dependent shortcuts it replaced, as it ran:
    // the ratio of their medians is the cost of constant time.
    group.bench_function("cell_laplace", |b| b.iter(|| cell_laplace.sample(black_box(&mut rng))));
    group.bench_function("cell_laplace_branching", |b| b.iter(|| wide_laplace.sample_branching(black_box(&mut rng))));
    group.bench_function("von_neumann_laplace", |b| b.iter(|| discrete_laplace_von_neumann(&mut rng, black_box(t))));
    group.bench_function("cell_gaussian", |b| b.iter(|| cell_gaussian.sample(black_box(&mut rng))));
    group.bench_function("cell_gaussian_branching", |b| b.iter(|| wide_gaussian.sample_branching(black_box(&mut rng))));
    group.bench_function("cks_gaussian", |b| b.iter(|| discrete_gaussian_cks(&mut rng, black_box(var))));
    group.finish();
}

fn matrix_draws(c: &mut Criterion) {
    let mut group = c.benchmark_group("matrix_6x6");
    group.throughput(Throughput::Elements(1));
    let mut rng = SeedSequence::from_seed(2).stream("bench");
    let mut out = vec![0.0; P * P];

    let lattice = NoiseSpec::SymmetricGaussian { sigma: 1.0 }.on_lattice(20).expect("valid lattice");
    group.bench_function("lattice_symmetric_gaussian", |b| {
        b.iter(|| {
            lattice.sample_into(&mut rng, P, &mut out);
            black_box(out[P + 1])
        });
    });

    group.bench_function("symmetric_gaussian", |b| {
        b.iter(|| {
            fill_symmetric_gaussian(&mut rng, black_box(1.0), P, &mut out);
            black_box(out[P + 1])
        });
    });

    for (name, df) in [("wishart_df_10", 10.0), ("wishart_df_1e6", 1e6)] {
        let sampler = WishartSampler::isotropic(P, 1.0, df).expect("valid Wishart parameters");
        group.bench_function(name, |b| {
            b.iter(|| {
                sampler.sample_into(&mut rng, &mut out);
                black_box(out[P + 1])
            });
        });
    }

    // The path a tree counter takes: NoiseSpec draws W_p(scale I, df) with
    // no sampler set-up (isotropic fast path, no Cholesky factor).
    let spec = NoiseSpec::Wishart { scale: 1.0, df: 1e6 };
    group.bench_function("wishart_df_1e6_via_noise_spec", |b| {
        b.iter(|| {
            spec.sample_into(&mut rng, P, &mut out);
            black_box(out[P + 1])
        });
    });
    group.finish();
}

/// Words per generator iteration (amortises the benchmark loop).
const WORDS: usize = 1024;

fn generator(c: &mut Criterion) {
    let mut group = c.benchmark_group("chacha8");
    group.throughput(Throughput::Bytes((WORDS * 8) as u64));
    let mut rng = SeedSequence::from_seed(3).stream("bench");
    group.bench_function("u64_x1024", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for _ in 0..WORDS {
                acc ^= rng.next_u64();
            }
            black_box(acc)
        });
    });
    group.finish();
}

criterion_group!(benches, scalar_draws, matrix_draws, generator);
criterion_main!(benches);
