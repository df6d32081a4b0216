//! Batched elimination (Hanna et al. Alg. 1, central model) on Fig. 2b's
//! setting: K = 1000 unit actions in R^2, theta* fixed.
//!
//! - `batch_start`: a fresh engine, i.e. the first batch's Frank–Wolfe
//!   core set over all K actions plus its pull counts;
//! - `batch_end`: the rounds of the first five batches (about q + ... + q^5
//!   pulls) including each batch's privatization, least-squares estimate,
//!   elimination over A_i and the next core set;
//! - `rounds`: 10^5 rounds of select/update with Laplace-privatized sums.

use std::hint::black_box;

use _core::env::{DecisionSet, Environment, LinearBanditConfig, LinearBanditEnv};
use _core::noise::NoiseSpec;
use _core::policy::elimination::{Elimination, EliminationConfig, Exploration, GammaCoefficients, Privatizer};
use _core::policy::{BoundsPolicy, Learner};
use _core::rng::SeedSequence;
use criterion::{criterion_group, criterion_main, Criterion};

const K: usize = 1000;
const T: u64 = 10_000_000;

fn config(env: &LinearBanditEnv) -> EliminationConfig {
    let t = T as f64;
    let m = (t.ln().floor() as usize - 1).max(1);
    let q = (2.0 * t).powf(1.0 / t.ln());
    let lengths: Vec<f64> = (1..=m).map(|i| q.powi(i as i32)).collect();
    EliminationConfig {
        k: K,
        d: 2,
        actions: env.actions().to_vec(),
        horizon: T,
        gamma: lengths
            .iter()
            .map(|qi| GammaCoefficients {
                sqrt_log: (8.0 / qi).sqrt(),
                log: 8.0 / qi,
                constant: 24.0 / qi,
                sqrt_n_log: 0.0,
            })
            .collect(),
        noise: vec![NoiseSpec::Laplace { scale: 2.0 }; m],
        batch_lengths: lengths,
        log_offset: (4.0 * t * t).ln(),
        privatizer: Privatizer::CentralSum,
        exploration: Exploration::CoreSet,
        reward_min: -1.0,
        reward_max: 1.0,
        bounds: BoundsPolicy::Clip,
    }
}

fn run(learner: &mut Elimination, env: &mut LinearBanditEnv, set: &mut DecisionSet, rounds: u64) {
    for t in 1..=rounds {
        env.next_round(t, set).unwrap();
        let i = learner.select(set).unwrap();
        let y = env.draw(i).unwrap();
        learner.observe(i, y).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let seeds = SeedSequence::from_seed(7);
    let env0 = LinearBanditEnv::new(LinearBanditConfig { k: K, d: 2, actions: None }, &seeds).unwrap();
    let cfg = config(&env0);
    let mut group = c.benchmark_group("elimination");
    group.bench_function("batch_start", |b| b.iter(|| black_box(Elimination::new(cfg.clone(), &seeds).unwrap())));
    let first_five: u64 = cfg.batch_lengths[..5].iter().map(|q| q.ceil() as u64 + 3).sum::<u64>();
    group.bench_function("batch_end", |b| {
        b.iter(|| {
            let mut l = Elimination::new(cfg.clone(), &seeds).unwrap();
            let mut env = env0.clone();
            let mut set = DecisionSet::default();
            run(&mut l, &mut env, &mut set, first_five);
            black_box(l.batch_index())
        });
    });
    group.bench_function("rounds_1e5", |b| {
        b.iter(|| {
            let mut l = Elimination::new(cfg.clone(), &seeds).unwrap();
            let mut env = env0.clone();
            let mut set = DecisionSet::default();
            run(&mut l, &mut env, &mut set, 100_000);
            black_box(l.t())
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
