//! Floor timings of a D.2 round (d = 5, K = 25, gap 0.1, environment
//! included) for the local and shuffle LinUCB engines on a shared, noisy
//! machine: the fastest of many short batches next to the median (as
//! `round_floor.rs` does for JDP-LinUCB).
//!
//!     cargo bench --bench linucb_trust_floor
//!
//! Constants are those `LocalLinUCB(5, 10**6, 1.0, 0.1)` and
//! `ShuffleLinUCB(5, 10**6, 1.0, 0.1)` compute (lattice Gaussian sigma
//! 2.3035 on 2^-18; exact blanket bits for batches of 3982 users).

use std::time::Instant;

use _core::env::{DecisionSet, Environment, RewardModel, ShariffSheffetEnv};
use _core::noise::NoiseSpec;
use _core::policy::elimination::ShuffleSumCoefficients;
use _core::policy::{
    BoundsPolicy, InputBounds, Learner, ReportPrivatizer, TrustLinUcb, TrustLinUcbConfig, TrustRadius,
};
use _core::rng::SeedSequence;

const BATCH: u64 = 500;
const BATCHES: usize = 2000;

fn config(batch: u64, privatizer: ReportPrivatizer, upsilon_rate: f64) -> TrustLinUcbConfig {
    TrustLinUcbConfig {
        d: 5,
        horizon: 50_000_000,
        batch,
        privatizer,
        regularizer: 1.0,
        upsilon_rate,
        radius: TrustRadius { noise_sd: 1.0, log_offset: 29.0, s: 1.0, gamma_rate: 21.0 },
        bounds: InputBounds { l: 1.0, b_tilde: 1.0, policy: BoundsPolicy::Clip },
    }
}

fn run(name: &str, cfg: TrustLinUcbConfig) {
    let seeds = SeedSequence::from_seed(1);
    let mut env = ShariffSheffetEnv::new(5, 25, 0.1, 0.75, RewardModel::PlusMinusOne, &seeds).unwrap();
    let mut learner = TrustLinUcb::new(cfg, &seeds).unwrap();
    let mut set = DecisionSet::default();
    let mut t = 0;
    let mut per_round: Vec<f64> = (0..BATCHES)
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
    per_round.sort_by(f64::total_cmp);
    let (min, median) = (per_round[0], per_round[per_round.len() / 2]);
    println!(
        "{name:<34} min {min:>7.0} ns ({:.2} M rounds/s)   median {median:>7.0} ns ({:.2} M rounds/s)",
        1e3 / min,
        1e3 / median
    );
}

fn main() {
    let lattice = NoiseSpec::Gaussian { sigma: 2.303_516_387_939_453 }.on_lattice(18).unwrap();
    run("local, lattice Gaussian (default)", config(1, ReportPrivatizer::Noisy { noise: lattice }, 136.3));
    let float = NoiseSpec::Gaussian { sigma: 2.303_494_593_920_565_8 };
    run("local, float Gaussian", config(1, ReportPrivatizer::Noisy { noise: float }, 136.3));
    let coefficients =
        ShuffleSumCoefficients { g_sqrt_n: 2.0, g_min: 4.0, bits: 1_157.394_630_187_838, ones: 578.697_315_093_919 };
    run("shuffle, vector sum (default)", config(3982, ReportPrivatizer::BitSum { coefficients, range: 1.0 }, 2000.0));
    run("noise off (batch 1)", config(1, ReportPrivatizer::Exact, 0.0));
}
