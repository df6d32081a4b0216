//! Floor timings of the D.2 round on a shared, noisy machine: the fastest of
//! many short batches (a batch that was not descheduled), next to the median.
//!
//!     cargo bench --bench round_floor
//!
//! Workload: Shariff & Sheffet App. D.2, d = 5, K = 25, gap 0.1, Gaussian
//! and Wishart JDP-LinUCB with the noise constants of `benches/linucb.rs`
//! (the learners alone cycle through 256 pre-drawn decision sets).

use std::time::Instant;

use _core::env::{DecisionSet, Environment, Feedback, RewardModel, ShariffSheffetEnv};
use _core::noise::NoiseSpec;
use _core::policy::linucb::StatisticsConfig;
use _core::policy::{BoundsPolicy, InputBounds, Learner, LinUcb, LinUcbConfig, Radius};
use _core::rng::SeedSequence;

const BATCH: u64 = 500;
const BATCHES: usize = 3000;

fn report(name: &str, mut per_round: Vec<f64>) {
    per_round.sort_by(f64::total_cmp);
    println!(
        "{name:<28} min {:>7.0} ns   median {:>7.0} ns   ({BATCHES} batches of {BATCH} rounds)",
        per_round[0],
        per_round[per_round.len() / 2]
    );
}

fn config(statistics: StatisticsConfig) -> LinUcbConfig {
    LinUcbConfig {
        d: 5,
        horizon: 50_000_000,
        statistics,
        radius: Radius::LogDet { noise_sd: 1.0, log_offset: 10.0, offset: 50.0 },
        bounds: InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip },
    }
}

/// One learner's select + update, alone, over pre-drawn sets.
fn learner_only(name: &str, statistics: StatisticsConfig, sets: &[DecisionSet]) {
    let mut learner = LinUcb::new(config(statistics), &SeedSequence::from_seed(3)).unwrap();
    let mut i = 0usize;
    let per_round: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..BATCH {
                let set = &sets[i % sets.len()];
                let a = learner.select(set).unwrap();
                learner.update(set, a, Feedback::Reward(if i.is_multiple_of(3) { -1.0 } else { 1.0 })).unwrap();
                i += 1;
            }
            start.elapsed().as_secs_f64() / BATCH as f64 * 1e9
        })
        .collect();
    report(name, per_round);
}

fn main() {
    let gaussian =
        StatisticsConfig::Tree { noise: NoiseSpec::SymmetricGaussian { sigma: 153.34 }, shift: 40_000.0, pad_to: 0 };
    let wishart =
        StatisticsConfig::Tree { noise: NoiseSpec::Wishart { scale: 2.0, df: 3.0e6 }, shift: 9.0e7, pad_to: 27 };
    let config = config(gaussian);
    let seeds = SeedSequence::from_seed(1);
    let mut env = ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
    let mut set = DecisionSet::default();
    let mut t = 0;
    let mut acc = 0.0;
    let env_only: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..BATCH {
                t += 1;
                env.next_round(t, &mut set).unwrap();
                acc += set.features[0];
            }
            start.elapsed().as_secs_f64() / BATCH as f64 * 1e9
        })
        .collect();
    report("environment only", env_only);

    let mut learner = LinUcb::new(config, &seeds).unwrap();
    let full: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..BATCH {
                t += 1;
                env.next_round(t, &mut set).unwrap();
                let a = learner.select(&set).unwrap();
                let fb = env.feedback(a).unwrap();
                learner.update(&set, a, fb).unwrap();
            }
            start.elapsed().as_secs_f64() / BATCH as f64 * 1e9
        })
        .collect();
    report("Gaussian JDP round with env", full);
    let sets: Vec<DecisionSet> = (0..256)
        .map(|_| {
            t += 1;
            let mut s = DecisionSet::default();
            env.next_round(t, &mut s).unwrap();
            s
        })
        .collect();
    learner_only("Gaussian learner only", gaussian, &sets);
    learner_only("Wishart learner only", wishart, &sets);
    std::hint::black_box(acc);
}
