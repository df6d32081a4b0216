//! Runs UCB1, Private UCB (K = 10 Bernoulli arms) or DP-KLUCB (K = 5)
//! through the simulation loop the way `dp.simulate` does (boxed
//! factories, one replicate), for profiling:
//! `cargo run --profile profiling --example karmed_profile -- private_lattice 1000000`.
//! Variants: `ucb1`, `private_float`, `private_lattice` (node scale and
//! Lemma 5 bound of `benches/mab.rs`), `dp_klucb` (eps = 1 on the default
//! adaptive grid, alpha 1.2 and first phases of 4 pulls, lattice Laplace
//! noise 2^-19; means 0.75 .. 0.25).

use _core::env::{ArmReward, EnvironmentFactory, KArmedConfig};
use _core::noise::NoiseSpec;
use _core::policy::phased_mab::{PhaseSchedule, PhasedIndex, PhasedMabConfig};
use _core::policy::{LearnerFactory, MabConfig, MabIndex, MabStatistics, RewardPolicy, RewardRange};
use _core::rng::SeedSequence;
use _core::sim::run_shared_replicates;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = args.get(1).map_or("ucb1", String::as_str);
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let rewards = RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip };
    let (learner, k): (Box<dyn LearnerFactory>, usize) = if variant == "dp_klucb" {
        let learner = PhasedMabConfig {
            k: 5,
            horizon: n,
            index: PhasedIndex::Optimistic {
                kl: true,
                divergence_epsilon: Some(1.0),
                explore: 1.0,
                linear: 0.0,
                root: 0.0,
            },
            schedule: PhaseSchedule::Adaptive { alpha: 1.2, min_len: 4, forget: false },
            noise: NoiseSpec::Laplace { scale: 1.0 }.on_lattice(19).expect("valid lattice"),
            secure: false,
            commit: true,
            rewards,
        };
        (Box::new(learner), 5)
    } else {
        let (statistics, noise_bound) = match variant {
            "ucb1" => (MabStatistics::Exact, 0.0),
            "private_float" => (MabStatistics::Tree { noise: NoiseSpec::Laplace { scale: 199.3 } }, 1.3e5),
            _ => (
                MabStatistics::Tree {
                    noise: NoiseSpec::Laplace { scale: 199.3 }.on_lattice(12).expect("valid lattice"),
                },
                1.3e5,
            ),
        };
        let learner =
            MabConfig { k: 10, horizon: n, statistics, index: MabIndex::Ucb { noise_bound }, rewards, phases: None };
        (Box::new(learner), 10)
    };
    let means: Vec<f64> =
        if k == 5 { vec![0.75, 0.625, 0.5, 0.375, 0.25] } else { (0..10).map(|i| 0.9 - 0.05 * f64::from(i)).collect() };
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
