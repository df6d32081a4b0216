use super::*;
use crate::noise::discrete_laplace::test::laplace_draws;
use crate::noise::goodness_of_fit::{
    assert_second_moment, chi_square_p, CentredGaussianLaw, GaussianLaw, LaplaceLaw, Law, FIT_DRAWS,
};
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

fn centred_draws(seed: u64, var: u128, frac_bits: u32, centre: i128, n: usize) -> Vec<i64> {
    let mut rng = SeedSequence::from_seed(seed).stream("centred-fit");
    let g = DyadicCentreGaussian::new(var, frac_bits).unwrap();
    (0..n).map(|_| g.sample(&mut rng, centre)).collect()
}

#[test]
fn dyadic_centre_gaussian_has_the_exact_law() {
    // (var, g, C): centre C / 2^g, fractional parts 0, 1/2, 3/8, 5/16 and
    // a fine one, negative and positive, small and large sigma.
    let cases: [(u128, u32, i128); 6] =
        [(1, 1, 1), (1, 3, -37), (9, 4, 5), (9, 0, -4), (1_000_000, 20, (1000 << 20) + 699_051), (1 << 30, 8, -77)];
    for (i, (var, g, c)) in cases.into_iter().enumerate() {
        let draws = centred_draws(50 + i as u64, var, g, c, FIT_DRAWS);
        let centre = c as f64 / 2f64.powi(g as i32);
        let shift = centre.round() as i64;
        let shifted: Vec<i64> = draws.iter().map(|y| y - shift).collect();
        let sigma = (var as f64).sqrt();
        let r = (5.0 * sigma).ceil() as i64;
        let p = chi_square_p(&shifted, &CentredGaussianLaw::new(var as f64, centre - shift as f64), r);
        assert!(p > 1e-4, "var {var}, centre {centre}: chi-square p = {p}");
        // Power: the centre moved by 1/2 (small sigma) or sigma / 20.
        let moved = centre - shift as f64 + if sigma < 10.0 { 0.5 } else { sigma / 20.0 };
        let p_wrong = chi_square_p(&shifted, &CentredGaussianLaw::new(var as f64, moved), r);
        assert!(p_wrong < 1e-4, "var {var}, centre {centre}: a moved centre is not rejected (p = {p_wrong})");
    }
}

#[test]
fn dyadic_centre_gaussian_has_the_exact_probabilities_of_tiny_cases() {
    // var = 1, centre 1/4: P[y] = exp(-(y - 1/4)^2 / 2) / Z, each frequency
    // within 5 binomial standard errors (a false alarm below 6e-7 per cell).
    let n = 400_000usize;
    let draws = centred_draws(60, 1, 2, 1, n);
    let z: f64 = (-30i32..=30).map(|y| (-(f64::from(y) - 0.25).powi(2) / 2.0).exp()).sum();
    for y in -3i64..=4 {
        let p = (-((y as f64) - 0.25).powi(2) / 2.0).exp() / z;
        let freq = draws.iter().filter(|&&d| d == y).count() as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((freq - p).abs() < 5.0 * se, "y = {y}: frequency {freq}, exact {p}");
    }
    // Centre 1/2: 0 and 1 are exactly equally likely (and -1 and 2).
    let draws = centred_draws(61, 1, 1, 1, n);
    let count = |v: i64| draws.iter().filter(|&&d| d == v).count() as f64;
    for (a, b) in [(0, 1), (-1, 2)] {
        let (ca, cb) = (count(a), count(b));
        assert!((ca - cb).abs() < 5.0 * (ca + cb).sqrt(), "{a}: {ca}, {b}: {cb}");
    }
}

#[test]
fn dyadic_centre_gaussian_keeps_its_denominator_in_the_fast_path() {
    assert!(DyadicCentreGaussian::new(0, 0).is_none());
    assert!(DyadicCentreGaussian::new(MAX_GAUSSIAN_VAR + 1, 0).is_none());
    for var in [1u128, 9, 1 << 20, 1 << 30, 1 << 50] {
        let g = DyadicCentreGaussian::max_frac_bits(var).unwrap();
        assert!(DyadicCentreGaussian::new(var, g + 1).is_none(), "var {var}: g {g}");
        let t = u128::from(proposal_scale(var));
        assert!((2 * var * t * t) << (2 * g) <= 1 << 112);
    }
    assert_eq!(DyadicCentreGaussian::max_frac_bits(1 << 30), Some(25));
}
