//! One round of the Agarwal–Singh online learners on N = 10 experts / arms
//! with Bernoulli losses (the instance of benches/online_learning_effect.py):
//! PrivateFTRL (experts, Laplace tree padded to ceil(log2 T) draws, eps = 1)
//! and EXP2 behind the private reduction (eps = 1), each with and without
//! the environment's draw of the loss vector; and the point learners over
//! the unit ball in N = 3 (FTRL-ball, SCRiBLe) with the environment and the
//! regret bookkeeping of the simulation loop. The horizon is large enough
//! that the benchmark never exhausts it.
//!
//! Constants: lambda = N (floor(log2 T) + 1) / eps for FTRL (tight
//! calibration of dpbandits.privacy.agarwal_singh); eta and gamma of Thm 4.1
//! for EXP2 at T = 1e9. Only their magnitude matters for cost.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use _core::env::{DecisionSet, Environment, Feedback, LossEnv, LossSequence};
use _core::noise::NoiseSpec;
use _core::policy::{
    Exp2, Exp2Config, FollowTheLeader, FollowTheLeaderConfig, Geometry, LeaderRule, Learner, Scrible, ScribleConfig,
};
use _core::rng::SeedSequence;

const T: u64 = 1_000_000_000;
const N: usize = 10;

fn env() -> LossEnv {
    let mut means = vec![0.5; N];
    means[0] = 0.4;
    LossEnv::new(LossSequence::Stochastic { means }, &SeedSequence::from_seed(1)).unwrap()
}

fn ftrl() -> FollowTheLeader {
    let eta = ((N as f64).ln() / T as f64).sqrt();
    let config = FollowTheLeaderConfig {
        n: N,
        horizon: T,
        geometry: Geometry::Simplex,
        rule: LeaderRule::Regularized { eta },
        noise: NoiseSpec::Laplace { scale: N as f64 * 30.0 },
        clip: true,
        counter: None,
    };
    FollowTheLeader::new(config, &SeedSequence::from_seed(2)).unwrap()
}

fn exp2() -> Exp2 {
    let spread = 1.0 + 2.0 * ((N as f64) * T as f64).ln();
    let eta = ((N as f64).ln() / (2.0 * N as f64 * T as f64 * spread)).sqrt();
    let gamma = eta * N as f64 * spread.sqrt();
    let config = Exp2Config { n: N, horizon: T, eta, gamma, noise: NoiseSpec::Laplace { scale: 1.0 }, clip: true };
    Exp2::new(config, &SeedSequence::from_seed(3)).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("online_round");
    group.throughput(Throughput::Elements(1));

    let losses: Vec<f64> = (0..N).map(|i| if i % 3 == 0 { 1.0 } else { 0.0 }).collect();
    let mut learner = ftrl();
    group.bench_function("ftrl_experts/learner", |b| {
        b.iter(|| {
            let i = learner.sample_index().unwrap();
            learner.observe(&losses).unwrap();
            i
        });
    });
    let mut learner = ftrl();
    let mut e = env();
    let mut set = DecisionSet::default();
    let mut t = 0;
    group.bench_function("ftrl_experts/with_env", |b| {
        b.iter(|| {
            t += 1;
            e.next_round(t, &mut set).unwrap();
            let i = learner.select(&set).unwrap();
            learner.observe(e.losses().unwrap()).unwrap();
            i
        });
    });

    let mut learner = exp2();
    let mut k = 0usize;
    group.bench_function("exp2/learner", |b| {
        b.iter(|| {
            let i = learner.sample_index();
            k = k.wrapping_add(1);
            learner.observe(i, if k.is_multiple_of(2) { 1.0 } else { 0.0 }).unwrap();
            i
        });
    });
    let mut learner = exp2();
    let mut e = env();
    let mut t = 0;
    group.bench_function("exp2/with_env", |b| {
        b.iter(|| {
            t += 1;
            e.next_round(t, &mut set).unwrap();
            let i = learner.select(&set).unwrap();
            let l = e.losses().unwrap()[i];
            learner.observe(i, l).unwrap();
            i
        });
    });

    // Points of the unit ball in N = 3 (UniformLosses of
    // benches/online_learning_effect.py): the loop's work per round, regret
    // bookkeeping included (`point_regret`).
    let ball_env = || {
        let seq = LossSequence::Uniform { center: vec![0.3, -0.4, 0.0], spread: 0.3 };
        LossEnv::with_geometry(seq, Geometry::Ball, &SeedSequence::from_seed(1)).unwrap()
    };
    let mut learner = FollowTheLeader::new(
        FollowTheLeaderConfig {
            n: 3,
            horizon: T,
            geometry: Geometry::Ball,
            rule: LeaderRule::Regularized { eta: (2.0 / T as f64).sqrt() },
            noise: NoiseSpec::Laplace { scale: 2.0 * 3f64.sqrt() * 30.0 },
            clip: true,
            counter: None,
        },
        &SeedSequence::from_seed(2),
    )
    .unwrap();
    let mut e = ball_env();
    let mut t = 0;
    group.bench_function("ftrl_ball/with_env", |b| {
        b.iter(|| {
            t += 1;
            e.next_round(t, &mut set).unwrap();
            learner.select(&set).unwrap();
            let r = e.point_regret(learner.played_point().unwrap()).unwrap();
            learner.update(&set, 0, Feedback::Losses(e.losses().unwrap())).unwrap();
            r
        });
    });
    let config = ScribleConfig { n: 3, horizon: T, eta: 1e-4, noise: NoiseSpec::Laplace { scale: 2.0 }, clip: true };
    let mut learner = Scrible::new(config, &SeedSequence::from_seed(3)).unwrap();
    let mut e = ball_env();
    let mut t = 0;
    group.bench_function("scrible/with_env", |b| {
        b.iter(|| {
            t += 1;
            e.next_round(t, &mut set).unwrap();
            Learner::select(&mut learner, &set).unwrap();
            let y = Learner::played_point(&learner).unwrap();
            let r = e.point_regret(y).unwrap();
            let loss = e.point_loss(y).unwrap();
            learner.update(&set, 0, Feedback::Reward(-loss)).unwrap();
            r
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
