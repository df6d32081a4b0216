use super::*;
use crate::rng::SeedSequence;

#[test]
fn bernoulli_exp_matches_its_probability() {
    let mut rng = SeedSequence::from_seed(2).stream("test");
    let n = 100_000;
    for (num, den) in [(1u128, 2u128), (3, 1), (7, 3), (0, 5)] {
        let hits = (0..n).filter(|_| bernoulli_exp_neg(&mut rng, num, den)).count();
        let p = (-(num as f64) / den as f64).exp();
        let sd = (p * (1.0 - p) / f64::from(n)).sqrt().max(1e-9);
        let got = hits as f64 / f64::from(n);
        assert!((got - p).abs() < 5.0 * sd + 1e-12, "gamma {num}/{den}: {got} vs {p}");
    }
}

#[test]
fn bernoulli_exp_paths_match_their_probability() {
    // Fast, slow-only, and CKS (den > 2^112) paths, gamma below and above 1.
    let n = 100_000;
    let big = 1u128 << 120;
    let cases: [(u128, u128, u8); 7] =
        [(1, 3, 0), (1, 3, 1), (1, 1, 1), (5, 2, 1), (big / 3, big, 2), (3 * big / 2, big, 2), (0, 7, 1)];
    for (seed, (num, den, path)) in cases.into_iter().enumerate() {
        let mut rng = SeedSequence::from_seed(70 + seed as u64).stream("bern");
        let hits = (0..n)
            .filter(|_| match path {
                0 => bernoulli_exp_neg_fast::<_, false>(&mut rng, num, den),
                1 => bernoulli_exp_neg_fast::<_, true>(&mut rng, num, den),
                _ => bernoulli_exp_neg(&mut rng, num, den),
            })
            .count();
        let p = (-(num as f64) / den as f64).exp();
        let sd = (p * (1.0 - p) / f64::from(n)).sqrt().max(1e-9);
        let got = hits as f64 / f64::from(n);
        assert!((got - p).abs() < 5.0 * sd + 1e-12, "gamma {num}/{den} path {path}: {got} vs {p}");
    }
}
