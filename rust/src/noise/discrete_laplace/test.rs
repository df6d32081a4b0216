use super::*;
use crate::noise::goodness_of_fit::{assert_second_moment, chi_square_p, LaplaceLaw, FIT_DRAWS};
use crate::rng::SeedSequence;

/// Draws of the discrete Laplace with scale t (the general slow path
/// only when `slow`).
pub(crate) fn laplace_draws(seed: u64, t: u64, n: usize, slow: bool) -> Vec<i64> {
    let mut rng = SeedSequence::from_seed(seed).stream("laplace-fit");
    if slow {
        (0..n).map(|_| discrete_laplace_impl::<_, true>(&mut rng, t)).collect()
    } else {
        (0..n).map(|_| discrete_laplace_von_neumann(&mut rng, t)).collect()
    }
}

#[test]
fn discrete_laplace_has_the_exact_law() {
    for (i, t) in [1u64, 3, 1000, 1 << 20].into_iter().enumerate() {
        let draws = laplace_draws(10 + i as u64, t, FIT_DRAWS, false);
        let r = 8 * t as i64;
        let p = chi_square_p(&draws, &LaplaceLaw(t as f64), r);
        assert!(p > 1e-4, "t = {t}: chi-square p = {p}");
        // Power: t + 1 for small t, t (1 + 1/20) for large t (a law
        // 1/1000 away needs ~10^8 draws to tell apart).
        let wrong = if t < 10 { t as f64 + 1.0 } else { t as f64 * 1.05 };
        let p_wrong = chi_square_p(&draws, &LaplaceLaw(wrong), r);
        assert!(p_wrong < 1e-4, "t = {t}: the wrong scale {wrong} is not rejected (p = {p_wrong})");
        // Exact moments: E[Y^2] = 2q/(1-q)^2,
        // E[Y^4] = 2q(1 + 11q + 11q^2 + q^3) / ((1 + q)(1 - q)^4).
        let q = (-1.0 / t as f64).exp();
        let omq = -(-1.0 / t as f64).exp_m1();
        let var = 2.0 * q / (omq * omq);
        let m4 = 2.0 * q * (1.0 + 11.0 * q + 11.0 * q * q + q * q * q) / ((1.0 + q) * omq.powi(4));
        assert_second_moment(&draws, var, m4, &format!("Laplace t = {t}"));
    }
}
