//! Whole episodes of the phased K-armed engines in the one simulation loop
//! (`sim::run_episode`), K = 5 Bernoulli arms (0.75, 0.625, 0.5, 0.375,
//! 0.25), eps = 1: DP-KLUCB (alpha 1.5, lattice Laplace noise 2^-19, the
//! numbers `dpbandits.privacy.azize` and `lattice_exponent(1.0)` give),
//! DP-KLUCB on its default adaptive grid, AdaP-KLUCB (beta 3.1), DP-TS (a
//! posterior draw every round) and non-private KL-UCB (a decision every
//! round: cached index bounds and the leader's certificate). Throughput is
//! rounds per second (target >= 20 M).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use _core::env::{ArmReward, KArmedBandit, KArmedConfig};
use _core::noise::NoiseSpec;
use _core::policy::mab::{RewardPolicy, RewardRange};
use _core::policy::phased_mab::{PhaseSchedule, PhasedIndex, PhasedMab, PhasedMabConfig};
use _core::rng::SeedSequence;
use _core::sim::run_episode;

const MEANS: [f64; 5] = [0.75, 0.625, 0.5, 0.375, 0.25];

fn config(horizon: u64, index: PhasedIndex, alpha: f64, forget: bool, private: bool, commit: bool) -> PhasedMabConfig {
    PhasedMabConfig {
        k: 5,
        horizon,
        index,
        schedule: PhaseSchedule::Geometric { alpha, forget },
        noise: if private {
            NoiseSpec::Laplace { scale: 1.0 }.on_lattice(19).expect("valid lattice")
        } else {
            NoiseSpec::Zero
        },
        secure: false,
        commit,
        rewards: RewardRange { lo: 0.0, hi: 1.0, policy: RewardPolicy::Clip },
    }
}

fn episodes(c: &mut Criterion) {
    let mut group = c.benchmark_group("phased_mab_episode");
    group.sample_size(10);
    let n = 1_000_000;
    let variants = [
        (
            "dp_klucb",
            n,
            config(
                n,
                PhasedIndex::Optimistic {
                    kl: true,
                    divergence_epsilon: Some(1.0),
                    explore: 1.0,
                    linear: 0.0,
                    root: 0.0,
                },
                1.5,
                false,
                true,
                true,
            ),
        ),
        (
            "adap_klucb",
            n,
            config(
                n,
                PhasedIndex::Optimistic { kl: true, divergence_epsilon: None, explore: 3.1, linear: 3.1, root: 0.0 },
                2.0,
                true,
                true,
                true,
            ),
        ),
        ("dp_klucb_adaptive", n, {
            // The default grid: alpha 1.2, phases of >= ceil(4 / eps) = 4 pulls.
            let mut c = config(
                n,
                PhasedIndex::Optimistic {
                    kl: true,
                    divergence_epsilon: Some(1.0),
                    explore: 1.0,
                    linear: 0.0,
                    root: 0.0,
                },
                1.1,
                false,
                true,
                true,
            );
            c.schedule = PhaseSchedule::Adaptive { alpha: 1.2, min_len: 4, forget: false };
            c
        }),
        ("dp_ts", n, config(n, PhasedIndex::Thompson { reward_var: 0.25, noise_var: 2.0 }, 1.5, false, true, false)),
        (
            "klucb",
            n,
            config(
                n,
                PhasedIndex::Optimistic { kl: true, divergence_epsilon: None, explore: 1.0, linear: 0.0, root: 0.0 },
                0.0,
                false,
                false,
                true,
            ),
        ),
    ];
    for (name, horizon, cfg) in variants {
        group.throughput(Throughput::Elements(horizon));
        let mut seed = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                seed += 1;
                let seeds = SeedSequence::from_seed(seed);
                let mut env =
                    KArmedBandit::new(KArmedConfig { means: MEANS.to_vec(), reward: ArmReward::Bernoulli }, &seeds)
                        .unwrap();
                let mut learner = PhasedMab::new(cfg.clone(), &seeds).unwrap();
                run_episode(&mut learner, &mut env, horizon, horizon, None).unwrap()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, episodes);
criterion_main!(benches);
