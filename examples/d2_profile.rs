//! Runs the D.2 workload for profiling: `cargo run --release --example d2_profile -- gaussian 2000000`.

use _core::env::{RewardModel, ShariffSheffetEnv};
use _core::noise::NoiseSpec;
use _core::policy::linucb::StatisticsConfig;
use _core::policy::{BoundsPolicy, InputBounds, LinUcb, LinUcbConfig, Radius};
use _core::rng::SeedSequence;
use _core::sim::run_episode;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = args.get(1).map_or("gaussian", String::as_str);
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2_000_000);
    let statistics = match variant {
        "nonprivate" => StatisticsConfig::Exact { regularizer: 1.0, refactor_every: 64 },
        "wishart" => StatisticsConfig::Tree {
            noise: NoiseSpec::Wishart { scale: 2.0, df: 139_115.0 },
            shift: 7_258_941.3,
            pad_to: 27,
        },
        _ => StatisticsConfig::Tree {
            noise: NoiseSpec::SymmetricGaussian { sigma: 153.34 },
            shift: 183_090.9,
            pad_to: 0,
        },
    };
    let config = LinUcbConfig {
        d: 5,
        horizon: 50_000_000,
        statistics,
        radius: Radius::LogDet { noise_sd: 1.0, log_offset: -20.3, offset: 552.3 },
        bounds: InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip },
    };
    let seeds = SeedSequence::from_seed(1);
    if variant == "envonly" {
        use _core::env::{DecisionSet, Environment};
        let mut env = ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
        let mut set = DecisionSet::default();
        let start = std::time::Instant::now();
        let mut acc = 0.0;
        for t in 1..=n {
            env.next_round(t, &mut set).unwrap();
            acc += set.features[0];
        }
        let s = start.elapsed().as_secs_f64();
        println!("envonly: {:.0} ns/round ({acc:.1})", s / n as f64 * 1e9);
        return;
    }
    let mut learner = LinUcb::new(config, &seeds.child("learner", 0)).unwrap();
    let mut env =
        ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds.child("environment", 0)).unwrap();
    let trace = run_episode(&mut learner, &mut env, n, n, None).unwrap();
    println!(
        "{variant}: {} rounds in {:.2} s = {:.0} rounds/s, regret {:.1}",
        trace.rounds,
        trace.seconds,
        trace.rounds as f64 / trace.seconds,
        trace.regret[0]
    );
}
