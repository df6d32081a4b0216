//! The Chernoff stopping statistic of the private Top Two: the exponent of
//! a mean of n rewards in [0, 1] plus j released noise draws, and the pair
//! statistic of a leader and a challenger, computed from below (a stop is
//! never declared on an approximation that overestimates the statistic).
//! The inequalities and thresholds: `dpbandits.privacy.bai`, equations
//! (C1)-(C5).

/// The log moment generating function of one noise draw of a batch sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NoiseMgf {
    /// No noise.
    Zero,
    /// Laplace of scale `b`: -ln(1 - b^2 s^2), |s| < 1 / b.
    Laplace { b: f64 },
    /// `g` times a discrete Laplace of `t` steps (P(y) proportional to
    /// exp(-|y| / t)): 2 ln(1 - p) - ln(1 - p e^{sg}) - ln(1 - p e^{-sg}),
    /// p = e^{-1/t}, |s| < 1 / (t g).
    Lattice { t: f64, g: f64 },
}

impl NoiseMgf {
    /// s_max: the log-MGF is finite for |s| < s_max.
    pub fn cap(&self) -> f64 {
        match *self {
            NoiseMgf::Zero => f64::INFINITY,
            NoiseMgf::Laplace { b } => 1.0 / b,
            NoiseMgf::Lattice { t, g } => 1.0 / (t * g),
        }
    }

    /// (Lambda(s), Lambda'(s), Lambda''(s)) for |s| < cap.
    fn eval(&self, s: f64) -> (f64, f64, f64) {
        match *self {
            NoiseMgf::Zero => (0.0, 0.0, 0.0),
            NoiseMgf::Laplace { b } => {
                let u = b * s;
                let q = 1.0 - u * u;
                (-(-u * u).ln_1p(), 2.0 * b * u / q, 2.0 * b * b * (1.0 + u * u) / (q * q))
            }
            NoiseMgf::Lattice { t, g } => {
                let a = 1.0 / t;
                let u = s * g;
                let (ep, em) = ((u - a).exp(), (-u - a).exp());
                let (dp, dm) = (-(u - a).exp_m1(), -(-u - a).exp_m1());
                let v = 2.0 * (-(-a).exp_m1()).ln() - dp.ln() - dm.ln();
                let d1 = g * (ep / dp - em / dm);
                let d2 = g * g * (ep / (dp * dp) + em / (dm * dm));
                (v, d1, d2)
            }
        }
    }
}

/// ln(1 - z + z e^s) and its first two derivatives in s.
fn psi(z: f64, s: f64) -> (f64, f64, f64) {
    if z <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    if z >= 1.0 {
        return (s, 1.0, 0.0);
    }
    let v = (z * s.exp_m1()).ln_1p();
    // p = z e^s / (1 - z + z e^s), computed without overflow.
    let p = if s > 0.0 { z / (z + (1.0 - z) * (-s).exp()) } else { z * s.exp() / (1.0 - z + z * s.exp()) };
    (v, p, p * (1.0 - p))
}

/// D(m; n, j, z) = sup_{|s| < cap} s n m - n psi_z(s) - j Lambda(s)
/// (equation (C1)), from below: the exponent at the point a safeguarded
/// Newton iteration reaches (every s gives a lower bound); 0 when m == z.
pub fn deviation(m: f64, n: f64, j: f64, z: f64, noise: &NoiseMgf) -> f64 {
    deviation_minorant(m, n, j, z, noise).0
}

/// (D, slope): D of [`deviation`] at the point s it reaches, and the slope
/// in z of h_s(z) = s n m - n psi_z(s) - j Lambda(s) there. h_s is convex
/// in z and below D everywhere, so D(z') >= D + slope (z' - z) for every z'
/// (a rigorous affine minorant, whatever the accuracy of s).
pub fn deviation_minorant(m: f64, n: f64, j: f64, z: f64, noise: &NoiseMgf) -> (f64, f64) {
    #[allow(clippy::float_cmp)] // the exponent is 0 exactly there
    if m == z {
        return (0.0, 0.0);
    }
    let cap = noise.cap();
    let g = |s: f64| {
        let (p, _, _) = psi(z, s);
        let (l, _, _) = noise.eval(s);
        s * n * m - n * p - j * l
    };
    let dg = |s: f64| {
        let (_, p1, p2) = psi(z, s);
        let (_, l1, l2) = noise.eval(s);
        (n * m - n * p1 - j * l1, -n * p2 - j * l2)
    };
    // g is concave with g(0) = 0 and g'(0) = n (m - z): the maximiser has the sign of m - z.
    let up = m > z;
    let edge = if cap.is_finite() { cap * (1.0 - 1e-12) } else { 50.0 };
    let (mut lo, mut hi) = if up { (0.0, edge) } else { (-edge, 0.0) };
    // Without noise the exponent can grow without bound near z in {0, 1}: widen the bracket.
    if !cap.is_finite() {
        while (if up { dg(hi).0 > 0.0 } else { dg(lo).0 < 0.0 }) && hi - lo < 1e6 {
            if up {
                hi *= 2.0;
            } else {
                lo *= 2.0;
            }
        }
    }
    // Start from the noiseless maximiser logit(m) - logit(z) (the noise pulls the maximiser towards 0).
    let logit = |x: f64| (x.clamp(1e-12, 1.0 - 1e-12) / (1.0 - x.clamp(1e-12, 1.0 - 1e-12))).ln();
    let s0 = logit(m) - logit(z);
    let mut s = if s0 > lo && s0 < hi { s0 } else { 0.5 * (lo + hi) };
    for _it in 0..100 {
        let (d1, d2) = dg(s);
        if d1 > 0.0 {
            lo = s;
        } else {
            hi = s;
        }
        // Near the maximiser the value is short of the maximum by about d1^2 / (2 |d2|).
        if d2 < 0.0 && d1 * d1 <= -2e-12 * d2 {
            break;
        }
        let newton = if d2 < 0.0 { s - d1 / d2 } else { f64::NAN };
        let next = if newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
        if (next - s).abs() <= 1e-13 * (1.0 + s.abs()) {
            s = next;
            break;
        }
        s = next;
    }
    let v = g(s);
    if v <= 0.0 {
        return (0.0, 0.0);
    }
    // d/dz of -n ln(1 - z + z e^s).
    let slope = -n * s.exp_m1() / (1.0 + z * s.exp_m1());
    (v, slope)
}

/// One arm's released statistic: mean (clipped to [0, 1]), rewards, batches.
#[derive(Clone, Copy, Debug)]
pub struct Released {
    pub mean: f64,
    pub n: f64,
    pub batches: f64,
}

/// Whether W(a, b) = inf_{z in [m_b, m_a]} D_a(m_a; z) + D_b(m_b; z)
/// (equation (C3)) is at least `c`, by bisection of [m_b, m_a]: a cell
/// [l, h] is certified when a lower bound of the infimum over it reaches
/// `c`, the larger of D_a(m_a; h) + D_b(m_b; l) (D_a decreases and D_b
/// increases in z there) and the minimum over the cell of the larger of the
/// two affine minorants of [`deviation_minorant`] at its ends. True only
/// when every cell is certified; false as soon as a point falls below `c`,
/// or after `budget` evaluations.
pub fn pair_at_least(a: Released, b: Released, noise: &NoiseMgf, c: f64, budget: usize) -> bool {
    if a.mean <= b.mean {
        return false;
    }
    // Per point z: (z, D_a, D_b, slope of the sum's minorant).
    let point = |z: f64| {
        let (da, sa) = deviation_minorant(a.mean, a.n, a.batches, z, noise);
        let (db, sb) = deviation_minorant(b.mean, b.n, b.batches, z, noise);
        (z, da, db, sa + sb)
    };
    let bound = |l: (f64, f64, f64, f64), h: (f64, f64, f64, f64)| {
        let monotone = h.1 + l.2;
        let (fl, fh) = (l.1 + l.2, h.1 + h.2);
        let line = |z: f64| (fl + l.3 * (z - l.0)).max(fh + h.3 * (z - h.0));
        let mut best = line(l.0).min(line(h.0));
        if (l.3 - h.3).abs() > 0.0 {
            let x = (fh - fl + l.3 * l.0 - h.3 * h.0) / (l.3 - h.3);
            if x > l.0 && x < h.0 {
                best = best.min(line(x));
            }
        }
        monotone.max(best)
    };
    let mut cells = vec![(point(b.mean), point(a.mean))];
    let mut evals = 2usize;
    while let Some((l, h)) = cells.pop() {
        if bound(l, h) >= c {
            continue;
        }
        let mid = 0.5 * (l.0 + h.0);
        if !(mid > l.0 && mid < h.0) || evals >= budget {
            return false;
        }
        let m = point(mid);
        evals += 1;
        if m.1 + m.2 < c {
            return false;
        }
        cells.push((l, m));
        cells.push((m, h));
    }
    true
}

/// W(a, b) of equation (C3) approximately, for the sampling rule only
/// (the stopping rule uses [`pair_at_least`]): the sum of the two
/// exponents at the weighted mean z = (n_a m_a + n_b m_b) / (n_a + n_b),
/// an upper bound of the infimum (the GLR's minimiser without noise); 0
/// when m_a <= m_b.
pub fn pair_cost(a: Released, b: Released, noise: &NoiseMgf) -> f64 {
    if a.mean <= b.mean {
        return 0.0;
    }
    let z = (a.n * a.mean + b.n * b.mean) / (a.n + b.n);
    deviation(a.mean, a.n, a.batches, z, noise) + deviation(b.mean, b.n, b.batches, z, noise)
}

/// The information-directed leader probability of a leader `a` and a
/// challenger `b` (the IDS rule of You, Qin, Wang & Yang 2023, "Information-
/// directed selection for top-two algorithms", ICML, on the Chernoff cost):
/// D_a / (D_a + D_b) with D_a = D_a(m_a; z*), D_b = D_b(m_b; z*) the two
/// exponents of (C1) at the minimiser z* of their sum over [m_b, m_a] (the
/// share of the pair's cost that the leader's samples carry; without noise
/// and with Gaussian costs it is N_b / (N_a + N_b)). 1/2 when m_a <= m_b or
/// the cost is 0. For the sampling rule only.
///
/// The sum is convex in z with derivative D_a' + D_b' (each the slope in z
/// at the exponent's maximiser, the envelope theorem: the slopes of
/// [`deviation_minorant`]); z* is the root of that derivative, found by
/// regula falsi (Illinois) on the bracket [m_b, m_a], where it is negative
/// at m_b and positive at m_a, to 1e-10 of the bracket.
pub fn ids_leader_probability(a: Released, b: Released, noise: &NoiseMgf) -> f64 {
    if a.mean <= b.mean {
        return 0.5;
    }
    // Per z: (D_a, D_b, d/dz (D_a + D_b)).
    let point = |z: f64| {
        let (da, sa) = deviation_minorant(a.mean, a.n, a.batches, z, noise);
        let (db, sb) = deviation_minorant(b.mean, b.n, b.batches, z, noise);
        (da, db, sa + sb)
    };
    let (mut lo, mut hi) = (b.mean, a.mean);
    let tol = 1e-10 * (hi - lo);
    let (mut glo, mut ghi) = (point(lo).2, point(hi).2);
    let at = if glo >= 0.0 {
        (lo, point(lo))
    } else if ghi <= 0.0 {
        (hi, point(hi))
    } else {
        let mut last = (0.5 * (lo + hi), (0.0, 0.0, 0.0));
        let mut side = 0i8;
        for _ in 0..100 {
            let secant = hi - ghi * (hi - lo) / (ghi - glo);
            let z = if secant > lo && secant < hi { secant } else { 0.5 * (lo + hi) };
            let p = point(z);
            last = (z, p);
            if p.2 < 0.0 {
                lo = z;
                glo = p.2;
                if side == -1 {
                    ghi *= 0.5;
                }
                side = -1;
            } else if p.2 > 0.0 {
                hi = z;
                ghi = p.2;
                if side == 1 {
                    glo *= 0.5;
                }
                side = 1;
            } else {
                break;
            }
            if hi - lo <= tol {
                break;
            }
        }
        last
    };
    let (x, y, _) = at.1;
    if x + y > 0.0 {
        (x / (x + y)).clamp(0.0, 1.0)
    } else {
        0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kl(x: f64, y: f64) -> f64 {
        x * (x / y).ln() + (1.0 - x) * ((1.0 - x) / (1.0 - y)).ln()
    }

    #[test]
    fn no_noise_is_the_kl_exponent() {
        let d = deviation(0.7, 100.0, 0.0, 0.5, &NoiseMgf::Zero);
        assert!((d - 100.0 * kl(0.7, 0.5)).abs() < 1e-9, "{d}");
        let d = deviation(0.2, 50.0, 0.0, 0.6, &NoiseMgf::Zero);
        assert!((d - 50.0 * kl(0.2, 0.6)).abs() < 1e-9, "{d}");
    }

    #[test]
    fn noise_lowers_the_exponent_and_matches_the_reference() {
        // dpbandits.privacy.bai.bernoulli_laplace_deviation(0.7, 100, 3, 0.5, 1.0)
        let d = deviation(0.7, 100.0, 3.0, 0.5, &NoiseMgf::Laplace { b: 1.0 });
        assert!((d - 6.227_487_487_480_595).abs() < 1e-8, "{d}");
        // m = 1, n = 1, j = 1, z = 1/2, b = 1: 0.0544092603272...
        let d = deviation(1.0, 1.0, 1.0, 0.5, &NoiseMgf::Laplace { b: 1.0 });
        assert!((d - 0.054_409_260_327_227_16).abs() < 1e-10, "{d}");
    }

    #[test]
    fn lattice_mgf_tends_to_the_laplace_one() {
        // 2^-20 steps of scale t = 2^20 is Laplace(1) up to O(step^2).
        let t = 1_048_576.0;
        let (a, _, _) = NoiseMgf::Lattice { t, g: 1.0 / t }.eval(0.5);
        let (b, _, _) = NoiseMgf::Laplace { b: 1.0 }.eval(0.5);
        assert!((a - b).abs() < 1e-9, "{a} {b}");
    }

    #[test]
    fn pair_certificate_brackets_the_infimum() {
        let noise = NoiseMgf::Laplace { b: 1.0 };
        let a = Released { mean: 0.9, n: 400.0, batches: 3.0 };
        let b = Released { mean: 0.5, n: 400.0, batches: 3.0 };
        // The infimum (golden section on the reference
        // dpbandits.privacy.bai.bernoulli_laplace_deviation): 68.8995 at z = 0.6771.
        assert!(pair_at_least(a, b, &noise, 68.899, 64));
        assert!(!pair_at_least(a, b, &noise, 68.9, 400));
        assert!(!pair_at_least(b, a, &noise, 0.1, 400));
    }

    #[test]
    fn ids_probability_balances_the_pair() {
        // Without noise and with equal means-distance, the leader with fewer
        // samples is sampled more; a tie gives 1/2.
        let noise = NoiseMgf::Zero;
        let a = Released { mean: 0.6, n: 100.0, batches: 1.0 };
        let b = Released { mean: 0.4, n: 300.0, batches: 1.0 };
        let p = ids_leader_probability(a, b, &noise);
        // Gaussian approximation: N_b / (N_a + N_b) = 0.75.
        assert!((p - 0.75).abs() < 0.03, "{p}");
        let same = Released { mean: 0.6, n: 300.0, batches: 1.0 };
        assert!((ids_leader_probability(same, same, &noise) - 0.5).abs() < 1e-12);
        // Strong noise (the TV regime): the arm with fewer samples takes
        // most of the probability (0.862 and 0.140 by golden section on the
        // reference dpbandits.privacy.bai.bernoulli_laplace_deviation).
        let noise = NoiseMgf::Laplace { b: 100.0 };
        let a = Released { mean: 0.95, n: 20_000.0, batches: 3.0 };
        let b = Released { mean: 0.9, n: 40_000.0, batches: 4.0 };
        assert!((ids_leader_probability(a, b, &noise) - 0.862).abs() < 0.01);
        assert!((ids_leader_probability(b, a, &noise) - 0.5).abs() < 1e-12);
        let a = Released { mean: 0.95, n: 40_000.0, batches: 4.0 };
        let b = Released { mean: 0.9, n: 20_000.0, batches: 3.0 };
        assert!((ids_leader_probability(a, b, &noise) - 0.140).abs() < 0.01);
    }

    #[test]
    fn ids_probability_is_the_one_at_the_minimiser_of_the_sum() {
        // Against a golden-section search of the sum D_a + D_b over [m_b, m_a] (80 steps).
        let golden = |a: Released, b: Released, noise: &NoiseMgf| {
            const G: f64 = 0.618_033_988_749_894_8;
            let f = |z: f64| deviation(a.mean, a.n, a.batches, z, noise) + deviation(b.mean, b.n, b.batches, z, noise);
            let (mut lo, mut hi) = (b.mean, a.mean);
            for _ in 0..80 {
                let (c, d) = (hi - G * (hi - lo), lo + G * (hi - lo));
                if f(c) <= f(d) {
                    hi = d;
                } else {
                    lo = c;
                }
            }
            let z = 0.5 * (lo + hi);
            let (x, y) = (deviation(a.mean, a.n, a.batches, z, noise), deviation(b.mean, b.n, b.batches, z, noise));
            x / (x + y)
        };
        let noises = [
            NoiseMgf::Zero,
            NoiseMgf::Laplace { b: 1.0 },
            NoiseMgf::Laplace { b: 100.0 },
            NoiseMgf::Lattice { t: 64.0, g: 1.0 / 64.0 },
        ];
        for noise in &noises {
            for &(ma, na, ja, mb, nb, jb) in &[
                (0.75, 300.0, 3.0, 0.625, 200.0, 3.0),
                (0.6, 100.0, 1.0, 0.4, 300.0, 2.0),
                (0.95, 20_000.0, 3.0, 0.9, 40_000.0, 4.0),
                (1.0, 50.0, 2.0, 0.3, 40.0, 2.0),
                (0.52, 5_000.0, 8.0, 0.5, 9_000.0, 9.0),
            ] {
                let (a, b) = (Released { mean: ma, n: na, batches: ja }, Released { mean: mb, n: nb, batches: jb });
                let (p, q) = (ids_leader_probability(a, b, noise), golden(a, b, noise));
                assert!((p - q).abs() < 1e-6, "{noise:?} {ma} {mb}: {p} vs {q}");
            }
        }
    }
}
