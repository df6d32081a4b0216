//! Small dense kernels of `linalg.rs` at the learners' sizes: n = 6
//! ((d+1) x (d+1) with d = 5, the Shariff & Sheffet D.2 workload) and
//! n = 21 (d = 20).

use std::hint::black_box;

use _core::linalg::{Cholesky, RankOneInverse};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// A fixed, well-conditioned SPD matrix B^T B + n I.
fn spd(n: usize) -> Vec<f64> {
    let b: Vec<f64> = (0..n * n).map(|i| ((i * 7 + 3) % 13) as f64 / 13.0 - 0.5).collect();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|k| b[k * n + i] * b[k * n + j]).sum::<f64>();
        }
        a[i * n + i] += n as f64;
    }
    a
}

fn bench_cholesky(c: &mut Criterion) {
    let mut group = c.benchmark_group("cholesky_factor_solve_logdet");
    for n in [6, 21] {
        let a = spd(n);
        let rhs: Vec<f64> = (0..n).map(|i| i as f64 - 0.5 * n as f64).collect();
        let mut chol = Cholesky::factor(&a, n).unwrap();
        let mut x = vec![0.0; n];
        group.bench_with_input(BenchmarkId::from_parameter(n), &a, |b, a| {
            b.iter(|| {
                chol.refactor(black_box(a)).unwrap();
                x.copy_from_slice(&rhs);
                chol.solve_in_place(&mut x);
                black_box(chol.log_det() + x[0])
            });
        });
    }
    group.finish();

    // The three parts separately.
    let mut parts = c.benchmark_group("cholesky_parts");
    for n in [6, 21] {
        let a = spd(n);
        let rhs: Vec<f64> = (0..n).map(|i| i as f64 - 0.5 * n as f64).collect();
        let mut chol = Cholesky::factor(&a, n).unwrap();
        parts.bench_with_input(BenchmarkId::new("factor", n), &a, |b, a| {
            b.iter(|| chol.refactor(black_box(a)).unwrap());
        });
        let mut x = vec![0.0; n];
        parts.bench_with_input(BenchmarkId::new("solve", n), &rhs, |b, rhs| {
            b.iter(|| {
                x.copy_from_slice(black_box(rhs));
                chol.solve_in_place(&mut x);
                black_box(x[0])
            });
        });
        parts.bench_function(BenchmarkId::new("log_det", n), |b| {
            b.iter(|| black_box(&chol).log_det());
        });
    }
    parts.finish();
}

fn bench_rank_one(c: &mut Criterion) {
    let n = 6;
    let xs: Vec<Vec<f64>> =
        (0..64).map(|t| (0..n).map(|i| ((t * 5 + i * 3) % 11) as f64 / 11.0 - 0.5).collect()).collect();
    let mut inv = RankOneInverse::new(&spd(n), n, 1 << 40).unwrap();
    let mut t = 0;
    c.bench_function("rank_one_inverse_update/6", |b| {
        b.iter(|| {
            inv.update(1.0, 0.5, black_box(&xs[t % xs.len()])).unwrap();
            t += 1;
        });
    });
}

criterion_group!(benches, bench_cholesky, bench_rank_one);
criterion_main!(benches);
