//! One round of the LinUCB engines on the Shariff–Sheffet D.2 workload
//! (d = 5, K = 25, eps = 1, delta = 0.1, n = 5e7), with and without the
//! environment's generation of a fresh decision set.
//!
//! The noise constants are those `dpbandits.privacy` computes for this
//! workload (sigma = 153.34, shift 2 Upsilon; Wishart k and c of Eq. (4));
//! only their magnitude matters for cost.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use _core::env::{DecisionSet, Environment, Feedback, RewardModel, ShariffSheffetEnv};
use _core::linalg::Cholesky;
use _core::noise::NoiseSpec;
use _core::policy::linucb::StatisticsConfig;
use _core::policy::ucb_scores::{ucb_scores, InverseForm};
use _core::policy::{BoundsPolicy, InputBounds, Learner, LinUcb, LinUcbConfig, Radius};
use _core::rng::SeedSequence;

const N: u64 = 50_000_000;

fn config(statistics: StatisticsConfig) -> LinUcbConfig {
    LinUcbConfig {
        d: 5,
        horizon: N,
        statistics,
        radius: Radius::LogDet { noise_sd: 1.0, log_offset: 10.0, offset: 50.0 },
        bounds: InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip },
    }
}

fn variants() -> Vec<(&'static str, StatisticsConfig)> {
    vec![
        ("nonprivate", StatisticsConfig::Exact { regularizer: 1.0, refactor_every: 64 }),
        (
            "gaussian",
            StatisticsConfig::Tree {
                noise: NoiseSpec::SymmetricGaussian { sigma: 153.34 },
                shift: 40_000.0,
                pad_to: 0,
            },
        ),
        (
            "wishart",
            StatisticsConfig::Tree { noise: NoiseSpec::Wishart { scale: 2.0, df: 3.0e6 }, shift: 9.0e7, pad_to: 27 },
        ),
    ]
}

fn learner_round(c: &mut Criterion) {
    let mut group = c.benchmark_group("linucb_round");
    group.throughput(Throughput::Elements(1));
    for (name, stats) in variants() {
        let seeds = SeedSequence::from_seed(1);
        let mut env = ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        // 256 pre-drawn decision sets so the learner-only bench excludes generation.
        let sets: Vec<DecisionSet> = (1..=256)
            .map(|t| {
                let mut s = DecisionSet::default();
                env.next_round(t, &mut s).unwrap();
                s
            })
            .collect();
        let mut learner = LinUcb::new(config(stats), &seeds).unwrap();
        let mut i = 0usize;
        group.bench_function(format!("{name}/learner_only"), |b| {
            b.iter(|| {
                let set = &sets[i % sets.len()];
                i += 1;
                let a = learner.select(set).unwrap();
                learner.update(set, a, Feedback::Reward(if i.is_multiple_of(3) { -1.0 } else { 1.0 })).unwrap();
                a
            });
        });
        let mut learner = LinUcb::new(config(stats), &seeds).unwrap();
        let mut set = DecisionSet::default();
        let mut t = 0;
        group.bench_function(format!("{name}/with_environment"), |b| {
            b.iter(|| {
                t += 1;
                env.next_round(t, &mut set).unwrap();
                let a = learner.select(&set).unwrap();
                let fb = env.feedback(a).unwrap();
                learner.update(&set, a, fb).unwrap();
                a
            });
        });
    }
    let seeds = SeedSequence::from_seed(2);
    let mut env = ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
    let mut set = DecisionSet::default();
    let mut t = 0;
    group.bench_function("environment_only", |b| {
        b.iter(|| {
            t += 1;
            env.next_round(t, &mut set).unwrap();
            set.features[0]
        });
    });
    group.finish();
}

/// One Gaussian JDP-LinUCB `select` (release, factor, theta~, UCB of every
/// action, argmax) at the (d, K) of `benches/compare_scoring.py`; the
/// engine has seen 1000 rounds so that the release carries tree noise.
fn select_sweep(c: &mut Criterion) {
    let mut group = c.benchmark_group("linucb_select");
    for (d, k) in [(5usize, 25usize), (10, 100), (20, 400), (40, 400), (64, 400)] {
        let seeds = SeedSequence::from_seed(3);
        let mut env = ShariffSheffetEnv::new(d, k, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let mut cfg = config(StatisticsConfig::Tree {
            noise: NoiseSpec::SymmetricGaussian { sigma: 153.34 },
            shift: 40_000.0,
            pad_to: 0,
        });
        cfg.d = d;
        let mut learner = LinUcb::new(cfg, &seeds).unwrap();
        let mut set = DecisionSet::default();
        for t in 1..=1000 {
            env.next_round(t, &mut set).unwrap();
            let a = learner.select(&set).unwrap();
            let fb = env.feedback(a).unwrap();
            learner.update(&set, a, fb).unwrap();
        }
        env.next_round(1001, &mut set).unwrap();
        group.throughput(Throughput::Elements(k as u64));
        group.bench_function(format!("d{d}_k{k}"), |b| b.iter(|| learner.select(&set).unwrap()));
    }
    group.finish();
}

/// The scoring kernel alone on the Cholesky factor of a fixed SPD V (the
/// form a private LinUCB passes at d > 16), at the (d, K) of
/// `benches/scoring_gemm_rate.py`. Throughput counts K (d^2 + 4 d) flops
/// per call (see that script), so "elem/s" reads as flop/s.
fn scoring_kernel(c: &mut Criterion) {
    let mut group = c.benchmark_group("ucb_scores_cholesky");
    for (d, k) in [(64usize, 4096usize), (40, 400), (20, 400)] {
        let b: Vec<f64> = (0..d * d).map(|i| ((i * 7 + 3) % 13) as f64 / 13.0 - 0.5).collect();
        let mut v = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                v[i * d + j] = (0..d).map(|t| b[t * d + i] * b[t * d + j]).sum::<f64>();
            }
            v[i * d + i] += d as f64;
        }
        let chol = Cholesky::factor(&v, d).unwrap();
        let theta: Vec<f64> = (0..d).map(|i| 0.01 * i as f64 - 0.2).collect();
        let features: Vec<f64> = (0..k * d).map(|i| ((i * 5 + 1) % 17) as f64 / 17.0 - 0.5).collect();
        let mut out = vec![0.0; 2 * k];
        group.throughput(Throughput::Elements((k * (d * d + 4 * d)) as u64));
        group.bench_function(format!("d{d}_k{k}"), |bench| {
            bench.iter(|| {
                let form = InverseForm::Cholesky { lower: chol.lower(), inv_diag: chol.inv_diag() };
                ucb_scores(form, &theta, 1.5, black_box(&features), d, &mut out);
                out[0]
            });
        });
    }
    group.finish();
}

criterion_group!(benches, learner_round, select_sweep, scoring_kernel);
criterion_main!(benches);
