//! Runs UCB1 or Private UCB (K = 10 Bernoulli arms) through the simulation
//! loop the way `dp.simulate` does (boxed factories, one replicate), for
//! profiling: `cargo run --profile profiling --example karmed_profile -- private_lattice 1000000`.
//! Variants: `ucb1`, `private_float`, `private_lattice` (node scale and
//! Lemma 5 bound of `benches/mab.rs`).

use _core::env::{ArmReward, EnvironmentFactory, KArmedConfig};
use _core::noise::NoiseSpec;
use _core::policy::{LearnerFactory, MabConfig, MabIndex, MabStatistics, RewardPolicy, RewardRange};
use _core::rng::SeedSequence;
use _core::sim::run_shared_replicates;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = args.get(1).map_or("ucb1", String::as_str);
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let (statistics, noise_bound) = match variant {
        "ucb1" => (MabStatistics::Exact, 0.0),
        "private_float" => (MabStatistics::Tree { noise: NoiseSpec::Laplace { scale: 199.3 } }, 1.3e5),
        _ => (
            MabStatistics::Tree { noise: NoiseSpec::Laplace { scale: 199.3 }.on_lattice(12).expect("valid lattice") },
            1.3e5,
        ),
    };
    let learner = MabConfig {
        k: 10,
        horizon: n,
        statistics,
        index: MabIndex::Ucb { noise_bound },
        rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
        phases: None,
    };
    let means: Vec<f64> = (0..10).map(|i| 0.9 - 0.05 * f64::from(i)).collect();
    let env = KArmedConfig { means, reward: ArmReward::Bernoulli };
    let start = std::time::Instant::now();
    let traces = run_shared_replicates(&[1], n, n, None, |seed| {
        let seeds = SeedSequence::from_seed(seed);
        Ok((vec![learner.build(&seeds)?], env.build(&seeds)?))
    });
    let trace = traces.into_iter().next().expect("one replicate").expect("runs");
    let ns = start.elapsed().as_secs_f64() / n as f64 * 1e9;
    println!(
        "{variant}: regret {:.1} after {} rounds, {ns:.1} ns/round",
        trace[0].regret.last().unwrap(),
        trace[0].rounds
    );
}
