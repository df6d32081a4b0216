use super::*;
use crate::noise::cell_sampler::discrete_gaussian;
use crate::noise::goodness_of_fit::{chi_square_p, GaussianLaw, FIT_DRAWS};
use crate::rng::SeedSequence;

#[test]
fn pow2_is_powi() {
    for e in -1023..=1100 {
        assert_eq!(pow2(e).to_bits(), 2f64.powi(e).to_bits(), "e = {e}");
    }
    // Below, powi computes 1 / 2^-e and underflows to 0 from e = -1024;
    // pow2 keeps the exact subnormal powers, then 0 below 2^-1074.
    for e in -1074..-1023 {
        assert_eq!(pow2(e) * 2f64.powi(600) * 2f64.powi(600), 2f64.powi(e + 1200), "e = {e}");
    }
    assert_eq!(pow2(-1075), 0.0);
}

#[test]
fn lattice_scale_is_rounded_up_and_wishart_refused() {
    let s = SecureNoise::new(NoiseSpec::Laplace { scale: 1.3 }, 4).unwrap();
    assert_eq!(s.kind(), SecureKind::Laplace { t: 21 }); // ceil(20.8)
    assert!(SecureNoise::new(NoiseSpec::Wishart { scale: 1.0, df: 5.0 }, 4).is_err());
    assert!(SecureNoise::new(NoiseSpec::Laplace { scale: 1.0 }, 30).is_err());
    let mut v = [0.26, -1.0];
    s.to_lattice("value", &mut v, 1e6).unwrap();
    assert_eq!(v, [0.25, -1.0]);
    assert!(s.to_lattice("value", &mut [1e300], 1e6).is_err());
    assert!(s.to_lattice("value", &mut [f64::NAN], 1e6).is_err());
}

#[test]
fn rounding_to_integers_is_nearest_with_ties_to_even() {
    for (y, want) in
        [(0.4, 0.0), (0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-2.5, -2.0), (-0.6, -1.0), (3.0, 3.0), (1e15 + 0.5, 1e15)]
    {
        assert_eq!(round_to_integer(y), want, "{y}");
    }
    // Beyond 2^51 (integers and half-integers only), and NaN.
    assert_eq!(round_to_integer(2f64.powi(51) + 0.5), 2f64.powi(51) + 1.0);
    assert_eq!(round_to_integer(1e300), 1e300);
    assert!(round_to_integer(f64::NAN).is_nan());
    // Against the library's rounding away from exact ties.
    let mut rng = SeedSequence::from_seed(5).stream("round");
    for _ in 0..100_000 {
        let y = (rng.next_u64() as f64 / 2f64.powi(64) - 0.5) * 2f64.powi((rng.next_u64() % 60) as i32);
        if (y - y.trunc()).abs() != 0.5 {
            assert_eq!(round_to_integer(y), y.round(), "{y}");
        }
    }
}

#[test]
fn odd_variances_and_the_symmetric_diagonal_have_the_exact_law() {
    // var not a perfect square (t = round(sqrt(var)) != sqrt(var)), and
    // the sample_into path of the symmetric matrix (diagonal 2 var).
    for (i, var) in [2u128, 7, 2 * 1_000_000].into_iter().enumerate() {
        let mut rng = SeedSequence::from_seed(50 + i as u64).stream("odd-var");
        let draws: Vec<i64> = (0..FIT_DRAWS).map(|_| discrete_gaussian(&mut rng, var)).collect();
        let r = (5.0 * (var as f64).sqrt()).ceil() as i64;
        let p = chi_square_p(&draws, &GaussianLaw::new(var as f64), r);
        assert!(p > 1e-4, "var = {var}: p = {p}");
    }
    let s = SecureNoise::new(NoiseSpec::SymmetricGaussian { sigma: 3.0 }, 0).unwrap();
    let mut rng = SeedSequence::from_seed(60).stream("symmetric");
    let (mut diag, mut off) = (Vec::new(), Vec::new());
    let mut out = [0.0; 9];
    for _ in 0..20_000 {
        s.sample_into(&mut rng, 3, &mut out);
        diag.extend([out[0], out[4], out[8]].map(|v| v as i64));
        off.extend([out[1], out[2], out[5]].map(|v| v as i64));
        assert!(out[1] == out[3] && out[2] == out[6] && out[5] == out[7]);
    }
    assert!(chi_square_p(&diag, &GaussianLaw::new(18.0), 22) > 1e-4);
    assert!(chi_square_p(&off, &GaussianLaw::new(9.0), 16) > 1e-4);
    assert!(chi_square_p(&diag, &GaussianLaw::new(9.0), 22) < 1e-4);
}
