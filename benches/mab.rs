//! One round (select + update) of the K-armed engines: UCB1 and Private
//! UCB (Mishra & Thakurta Alg. 1, per-arm Laplace trees, Lemma 5 term),
//! k = 10, T = 10^6, eps = 1 (node scale k log2 T / eps = 199.3 and Lemma 5
//! bound 1.3e5, the values `dpbandits.privacy.mishra_thakurta` computes;
//! only their magnitude matters for cost), with the Bernoulli environment.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use _core::env::{ArmReward, DecisionSet, Environment, Feedback, KArmedBandit, KArmedConfig};
use _core::noise::NoiseSpec;
use _core::policy::{Learner, Mab, MabConfig, MabIndex, MabStatistics, RewardPolicy, RewardRange};
use _core::rng::SeedSequence;

const N: u64 = 1_000_000;
const K: usize = 10;

fn config(statistics: MabStatistics, index: MabIndex) -> MabConfig {
    MabConfig {
        k: K,
        horizon: N,
        statistics,
        index,
        rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
        phases: None,
    }
}

fn mab_round(c: &mut Criterion) {
    let mut group = c.benchmark_group("mab_round");
    group.throughput(Throughput::Elements(1));
    let variants = [
        ("ucb1", config(MabStatistics::Exact, MabIndex::Ucb { noise_bound: 0.0 })),
        (
            "private_ucb",
            config(
                MabStatistics::Tree { noise: NoiseSpec::Laplace { scale: 199.3 } },
                MabIndex::Ucb { noise_bound: 1.3e5 },
            ),
        ),
        (
            // The default law: exact discrete Laplace on the lattice 2^-12
            // (199.3 = 0.78 * 2^8 spans 2^19..2^20 steps of 2^-12).
            "private_ucb_lattice",
            config(
                MabStatistics::Tree {
                    noise: NoiseSpec::Laplace { scale: 199.3 }.on_lattice(12).expect("valid lattice"),
                },
                MabIndex::Ucb { noise_bound: 1.3e5 },
            ),
        ),
        (
            "private_thompson",
            config(MabStatistics::Tree { noise: NoiseSpec::Laplace { scale: 199.3 } }, MabIndex::ThompsonBeta),
        ),
    ];
    for (name, cfg) in variants {
        let seeds = SeedSequence::from_seed(1);
        let means: Vec<f64> = (0..K).map(|i| 0.9 - 0.05 * i as f64).collect();
        let mut env = KArmedBandit::new(KArmedConfig { means, reward: ArmReward::Bernoulli }, &seeds).unwrap();
        let mut set = DecisionSet::default();
        let mut learner = Mab::new(cfg.clone(), &seeds).unwrap();
        let mut t = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                if learner.t() >= N {
                    learner = Mab::new(cfg.clone(), &seeds).unwrap();
                }
                t += 1;
                env.next_round(t, &mut set).unwrap();
                let a = learner.select(&set).unwrap();
                let Feedback::Reward(y) = env.feedback(a).unwrap() else { unreachable!() };
                learner.update(&set, a, Feedback::Reward(y)).unwrap();
            });
        });
    }
    group.finish();
}

criterion_group!(benches, mab_round);
criterion_main!(benches);
