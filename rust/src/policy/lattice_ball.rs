//! Exact draws of the lazy ball learner ([`super::lazy_ball`]): the
//! exponential mechanism over the lattice points of the unit ball, and the
//! exact keep coin.
//!
//! Losses are rounded toward zero to the lattice 2^-j coordinate by
//! coordinate (no coordinate grows, so ||l||_2 <= 1 still holds), so the
//! cumulative loss L and a batch's sum g are exact integers times 2^-j;
//! eta = a 2^-b is a dyadic rational (every f64 is). Points lie on
//! S = ball ∩ h Z^n, h = 2^-k, and every coordinate of a released point is
//! an integer times h: an exactly representable double.
//!
//! The draw: P(x) ∝ exp(-eta <L, x>) on S, by rejection from a product of
//! discrete Gaussians (z = x / h in lattice steps, variance s^2 steps^2):
//! exp(-|z|^2 / (2 s^2) - eta h <L, z>) factorizes over coordinates into
//! discrete Gaussians centred at c_i = -eta L_i h s^2 = M_i / 2^e
//! (e = b + j + k, M_i = -a (L_i 2^j) s^2 an integer). Each coordinate is
//! drawn exactly ([`DyadicCentreGaussian`]) at its centre rounded to the
//! sampler's fractional precision 2^-g, C_i / 2^g, with remainder
//! d_i / 2^e (d_i = M_i - C_i 2^(e - g)); a proposal inside the ball is
//! accepted with probability exp(-gamma),
//!
//!   gamma = (2^(2k) - |z|^2) / (2 s^2) + (D 2^k - <z, d>) / (s^2 2^e),
//!
//! D = sum |d_i| >= ||d||_2 >= <z, d> / 2^k on the ball (so gamma >= 0).
//! Target over proposal is proportional to exp(|z|^2 / (2 s^2) +
//! <z, d> / (s^2 2^e)) on S, of which exp(-gamma) is the ratio to its bound
//! on the ball, so the accepted point has exactly the law P. The variance
//! s^2 = max(1, floor(2^(2k) / (n + kappa))), kappa = eta ||L|| (sigma^2
//! about 1 / (n + kappa), the acceptance rate's optimum at kappa = 0), is
//! computed from L in floating point: any s^2 >= 1 gives the same law, so
//! only the running time depends on it. gamma is a fraction of integers
//! with denominator s^2 2^(e + 1) <= 2^112, decided by the exact Bernoulli
//! of Canonne, Kamath & Steinke 2020 (`noise::bernoulli`).
//!
//! The keep coin at a batch's end: Bernoulli(1 - gamma_floor) (dyadic,
//! exact) times Bernoulli(exp(-eta (<g, x> + B))) with the public batch
//! length B >= ||g|| >= -<g, x> in place of ||g||: the exponent is an
//! exact fraction, and the coin keeps the dartboard identity (a constant
//! times exp(-eta <g, x>)).

use rand_core::RngCore;
use serde::{Deserialize, Serialize};

use super::exact_draws::{check_dyadic_probability, dyadic};
use crate::error::{Error, Result};
use crate::noise::bernoulli::bernoulli_exp_neg;
use crate::noise::discrete_gaussian::DyadicCentreGaussian;

/// The lattices of the exact draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BallLattice {
    /// j: losses on the lattice 2^-j.
    pub loss_bits: u32,
    /// k: points on the lattice 2^-k.
    pub point_bits: u32,
}

/// Largest point exponent k (x = z 2^-k with s^2 <= 2^(2k) <= 2^48).
pub const MAX_POINT_BITS: u32 = 24;

fn bits(v: u128) -> u32 {
    128 - v.leading_zeros()
}

impl BallLattice {
    /// Refuses lattices and rates whose exact exponents outgrow the
    /// integer arithmetic of the draws and coins (every bound below is the
    /// product it keeps within 128 bits, or the exact Bernoulli's 2^112).
    pub(crate) fn check(self, horizon: u64, batch: u64, eta: f64, gamma: f64) -> Result<()> {
        let (j, k) = (self.loss_bits, self.point_bits);
        if u128::from(horizon) << j.min(64) > 1 << 51 {
            return Err(Error::invalid(
                "horizon",
                format!("{horizon} rounds of losses on 2^-{j} do not sum exactly (at most 2^51 steps)"),
            ));
        }
        if !(1..=MAX_POINT_BITS).contains(&k) || j > 52 {
            return Err(Error::invalid(
                "lattice",
                format!("losses on 2^-{j} and points on 2^-{k} are out of range for exact draws over {horizon} rounds"),
            ));
        }
        let (a, b) = dyadic(eta);
        let a_bits = bits(u128::from(a));
        // Denominator s^2 2^(b + j + k + 1) <= 2^112; M = a (L 2^j) s^2 in
        // i128; centres |M| / 2^e <= eta T 2^k below 2^60; the coin's
        // a (<q, z> + B 2^(j + k)) <= a B 2^(j + k + 1).
        if b + j + 3 * k + 1 > 112
            || a_bits + 51 + 2 * k > 125
            || eta * horizon as f64 * 2f64.powi(k as i32) >= 2f64.powi(60)
            || a_bits + bits(u128::from(batch)) + j + k + 1 > 126
        {
            return Err(Error::invalid(
                "eta",
                format!("{eta} has too many binary digits for exact draws on losses 2^-{j} and points 2^-{k}"),
            ));
        }
        check_dyadic_probability("gamma", gamma)
    }

    /// Rounds each loss coordinate toward zero to the lattice 2^-j (exact;
    /// no coordinate grows).
    pub(crate) fn round_losses(self, values: &mut [f64]) {
        let up = 2f64.powi(self.loss_bits as i32);
        for v in values.iter_mut() {
            *v = (*v * up).trunc() / up;
        }
    }

    /// Whether every value is an integer multiple of 2^-`bits`.
    pub(crate) fn on_lattice(values: &[f64], bits: u32) -> bool {
        let up = 2f64.powi(bits as i32);
        values.iter().all(|v| (v * up).fract() == 0.0)
    }

    /// Bernoulli(exp(-eta (<g, x> + B))) exactly, g = `batch_sum` (on the
    /// loss lattice, ||g|| <= B), x = `point` (on the point lattice).
    pub(crate) fn keep_coin(
        self,
        rng: &mut dyn RngCore,
        eta: f64,
        batch: u64,
        batch_sum: &[f64],
        point: &[f64],
    ) -> bool {
        let (a, b) = dyadic(eta);
        let (j, k) = (self.loss_bits, self.point_bits);
        let inner: i128 = batch_sum
            .iter()
            .zip(point)
            .map(|(g, x)| (g * 2f64.powi(j as i32)) as i128 * (x * 2f64.powi(k as i32)) as i128)
            .sum();
        // <q, z> >= -||q|| ||z|| >= -B 2^(j + k).
        let shifted = (inner + (i128::from(batch) << (j + k))).max(0) as u128;
        bernoulli_exp_neg(rng, u128::from(a) * shifted, 1u128 << (b + j + k))
    }

    /// A point drawn exactly from P(x) ∝ exp(-eta <L, x>) on the lattice
    /// points of the unit ball, L = `cumulative` (on the loss lattice),
    /// written into `x`; `work`: n entries of scratch.
    pub(crate) fn draw(
        self,
        rng: &mut dyn RngCore,
        eta: f64,
        cumulative: &[f64],
        x: &mut [f64],
        work: &mut Vec<(i128, i128)>,
    ) {
        let n = x.len();
        let (j, k) = (self.loss_bits, self.point_bits);
        let (a, b) = dyadic(eta);
        let e = b + j + k;
        let len = cumulative.iter().map(|v| v * v).sum::<f64>().sqrt();
        let kappa = eta * len;
        let var = ((2f64.powi(2 * k as i32) / (n as f64 + kappa)).floor() as u128).max(1);
        let frac_bits = DyadicCentreGaussian::max_frac_bits(var).unwrap_or(0).min(e);
        let sampler = DyadicCentreGaussian::new(var, frac_bits).expect("s^2 <= 2^48 has a fractional precision");
        let drop = e - frac_bits;
        // (C_i, d_i): the rounded centre and the remainder.
        work.clear();
        let mut big_d: u128 = 0;
        for l in cumulative {
            let m = -(i128::from(a) * ((l * 2f64.powi(j as i32)) as i128) * var as i128);
            let c = if drop == 0 { m } else { (m + (1i128 << (drop - 1))) >> drop };
            let d = m - (c << drop);
            big_d += d.unsigned_abs();
            work.push((c, d));
        }
        let radius2 = 1u128 << (2 * k);
        let radius = 1i64 << k;
        let den = var << (e + 1);
        'propose: loop {
            let mut norm2: u128 = 0;
            let mut dot: i128 = 0;
            for (xi, &(c, d)) in x.iter_mut().zip(work.iter()) {
                let z = sampler.sample(rng, c);
                if z.unsigned_abs() > radius as u64 {
                    continue 'propose;
                }
                norm2 += u128::from(z.unsigned_abs()).pow(2);
                if norm2 > radius2 {
                    continue 'propose;
                }
                dot += i128::from(z) * d;
                *xi = z as f64;
            }
            // gamma = num / den (module documentation); >= 0 on the ball.
            let slack = ((big_d << k) as i128 - dot).max(0) as u128;
            let num = ((radius2 - norm2) << e) + 2 * slack;
            if bernoulli_exp_neg(rng, num, den) {
                let h = 2f64.powi(-(k as i32));
                for xi in x.iter_mut() {
                    *xi *= h;
                }
                return;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::rng::SeedSequence;

    const LATTICE: BallLattice = BallLattice { loss_bits: 8, point_bits: 3 };

    /// The exact law on the lattice points of the ball with h = 1/8 in
    /// n = 2: P(z) ∝ exp(-eta <L, z> / 8), |z| <= 8.
    fn exact_law(eta: f64, big_l: [f64; 2]) -> Vec<((i64, i64), f64)> {
        let mut out = Vec::new();
        for z0 in -8i64..=8 {
            for z1 in -8i64..=8 {
                if z0 * z0 + z1 * z1 <= 64 {
                    let w = (-eta * (big_l[0] * z0 as f64 + big_l[1] * z1 as f64) / 8.0).exp();
                    out.push(((z0, z1), w));
                }
            }
        }
        let z: f64 = out.iter().map(|p| p.1).sum();
        out.iter().map(|&(p, w)| (p, w / z)).collect()
    }

    #[test]
    fn draws_have_the_exact_law_on_the_lattice_points_of_the_ball() {
        // 197 points; chi-square over all of them against the exact pmf
        // (each expects >= 20 draws here), threshold the chi-square(196)
        // upper 1e-4 point, 196 + 3.72 sqrt(2 * 196) + ... = 287 (by the
        // Wilson-Hilferty approximation); the law at the wrong eta fails.
        let mut rng = SeedSequence::from_seed(3).stream("t");
        let (eta, big_l) = (0.125, [12.5, -4.0]);
        let law = exact_law(eta, big_l);
        let runs = 200_000;
        let mut counts = std::collections::HashMap::new();
        let mut x = [0.0; 2];
        let mut work = Vec::new();
        for _ in 0..runs {
            LATTICE.draw(&mut rng, eta, &big_l, &mut x, &mut work);
            assert!(x[0] * x[0] + x[1] * x[1] <= 1.0);
            *counts.entry(((x[0] * 8.0) as i64, (x[1] * 8.0) as i64)).or_insert(0u64) += 1;
            assert_eq!((x[0] * 8.0).fract(), 0.0);
        }
        let stat = |law: &[((i64, i64), f64)]| -> f64 {
            law.iter()
                .map(|(p, q)| {
                    let e = q * f64::from(runs);
                    (*counts.get(p).unwrap_or(&0) as f64 - e).powi(2) / e
                })
                .sum()
        };
        assert!(law.iter().all(|p| p.1 * f64::from(runs) >= 20.0));
        let df = (law.len() - 1) as f64;
        let w = 1.0 - 2.0 / (9.0 * df) + 3.719 * (2.0 / (9.0 * df)).sqrt();
        let threshold = df * w.powi(3);
        assert!(stat(&law) < threshold, "chi-square {} vs {threshold}", stat(&law));
        assert!(stat(&exact_law(0.15, big_l)) > threshold, "the wrong eta is not rejected");
    }

    #[test]
    fn the_keep_coin_has_its_exact_probability() {
        let mut rng = SeedSequence::from_seed(4).stream("t");
        let (g, x) = ([1.5, -0.25], [0.5, 0.625]);
        let (eta, batch) = (0.125, 2u64);
        let p = (-eta * (g[0] * x[0] + g[1] * x[1] + batch as f64)).exp();
        let runs = 200_000;
        let hits = (0..runs).filter(|_| LATTICE.keep_coin(&mut rng, eta, batch, &g, &x)).count() as f64;
        let se = (p * (1.0 - p) / f64::from(runs)).sqrt();
        assert!((hits / f64::from(runs) - p).abs() < 5.0 * se, "{} vs {p}", hits / f64::from(runs));
    }

    #[test]
    fn losses_round_toward_zero_and_the_bit_budget_is_checked() {
        let mut v = [0.999, -0.999, 0.5, -2f64.powi(-9)];
        LATTICE.round_losses(&mut v);
        assert_eq!(v, [255.0 / 256.0, -255.0 / 256.0, 0.5, 0.0]);
        assert!(BallLattice::on_lattice(&v, 8) && !BallLattice::on_lattice(&[0.1], 8));
        let fine = BallLattice { loss_bits: 16, point_bits: 16 };
        assert!(fine.check(1 << 16, 64, 0.000_5, 0.25).is_err(), "0.0005 has 52 binary digits");
        assert!(fine.check(1 << 16, 64, 2f64.powi(-40) * 12_345.0, 0.25).is_ok());
        assert!(fine.check(1 << 16, 64, 0.5, 1e-10).is_err(), "gamma 1e-10 has 86 binary digits");
        assert!(BallLattice { loss_bits: 16, point_bits: 25 }.check(16, 4, 0.5, 0.25).is_err());
    }
}
