use super::*;
use crate::noise::discrete_laplace::test::laplace_draws;
use crate::noise::goodness_of_fit::{assert_second_moment, chi_square_p, GaussianLaw, LaplaceLaw, Law, FIT_DRAWS};
use crate::rng::SeedSequence;

#[test]
fn proposal_scale_is_near_sigma() {
    let big = [1 << 20, (1 << 21) - 1, 1 << 40, (1 << 40) + (1 << 39), 2 << 42, 2_000_000, 1 << 50, (1 << 50) - 1];
    let spread = (0..3000u32).map(|i| (1u128 << 20) + u128::from(i) * 1_234_567_891);
    for var in (1u128..5000).chain(big).chain(spread) {
        let t = proposal_scale(var) as f64;
        let sigma = (var as f64).sqrt();
        let bound = if var < 1 << 20 { 0.5 } else { 0.005 * sigma };
        assert!((t - sigma).abs() <= bound, "var {var}: t {t}, sigma {sigma}");
    }
}

fn gaussian_draws(seed: u64, var: u128, n: usize, slow: bool) -> Vec<i64> {
    let mut rng = SeedSequence::from_seed(seed).stream("gaussian-fit");
    let g = DiscreteGaussian::new(var);
    if slow {
        (0..n).map(|_| g.sample::<_, true>(&mut rng)).collect()
    } else {
        (0..n).map(|_| g.sample::<_, false>(&mut rng)).collect()
    }
}

#[test]
fn discrete_gaussian_has_the_exact_law() {
    for (i, var) in [1u128, 9, 1_000_000, 1 << 40].into_iter().enumerate() {
        let draws = gaussian_draws(20 + i as u64, var, FIT_DRAWS, false);
        let v = var as f64;
        let sigma = v.sqrt();
        let r = (5.0 * sigma).ceil() as i64;
        let p = chi_square_p(&draws, &GaussianLaw::new(v), r);
        assert!(p > 1e-4, "var = {var}: chi-square p = {p}");
        // Power: sigma + 1 for small sigma, sigma (1 + 1/20) for large.
        let wrong = if sigma < 10.0 { (sigma + 1.0).powi(2) } else { v * 1.05f64.powi(2) };
        let p_wrong = chi_square_p(&draws, &GaussianLaw::new(wrong), r);
        assert!(p_wrong < 1e-4, "var = {var}: the wrong variance {wrong} is not rejected (p = {p_wrong})");
        // Exact moments by summation of the pmf (for var >= 10^6 they
        // equal var and 3 var^2 up to a relative exp(-2 pi^2 var)).
        let (m2, m4) = if var < 100 {
            let law = GaussianLaw::new(v);
            let r = law.r;
            (-r..=r).fold((0.0, 0.0), |(a, b), y| {
                let pm = law.mass(y, y);
                let y2 = (y * y) as f64;
                (a + pm * y2, b + pm * y2 * y2)
            })
        } else {
            (v, 3.0 * v * v)
        };
        assert_second_moment(&draws, m2, m4, &format!("Gaussian var = {var}"));
    }
}

#[test]
fn slow_paths_alone_give_the_exact_laws() {
    // The general paths (lazily extended uniforms), which the fast paths
    // reach with probability ~1e-4, forced on every trial.
    let n = 50_000;
    for (i, t) in [3u64, 1000].into_iter().enumerate() {
        let draws = laplace_draws(30 + i as u64, t, n, true);
        let p = chi_square_p(&draws, &LaplaceLaw(t as f64), 8 * t as i64);
        assert!(p > 1e-4, "slow Laplace t = {t}: p = {p}");
    }
    for (i, var) in [9u128, 1_000_000].into_iter().enumerate() {
        let draws = gaussian_draws(40 + i as u64, var, n, true);
        let r = (5.0 * (var as f64).sqrt()).ceil() as i64;
        let p = chi_square_p(&draws, &GaussianLaw::new(var as f64), r);
        assert!(p > 1e-4, "slow Gaussian var = {var}: p = {p}");
    }
}
