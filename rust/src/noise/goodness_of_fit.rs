//! Test support: goodness of fit of integer draws against the exact
//! discrete Laplace and Gaussian laws.
//!
//! Chi-square test of the empirical pmf (binned for large scales: bins of
//! equal width over [-R, R] plus the two tails, adjacent bins merged
//! until each expects at least 20 draws) against the exact pmf. A law
//! passes when p > 1e-4 (significance level 1e-4: a correct sampler
//! fails with probability 1e-4 per case; the seeds are fixed, so the
//! outcome is deterministic). The same test must REJECT (p < 1e-4) the
//! same draws against a deliberately wrong law, so it can fail.

/// ln Gamma(x), x > 0 (Lanczos, g = 7, n = 9; relative error < 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Q(a, x) = Gamma(a, x) / Gamma(a): series below a + 1, Lentz's
/// continued fraction above.
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let ln_pre = -x + a * x.ln() - ln_gamma(a);
    if x < a + 1.0 {
        let (mut sum, mut term, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * ln_pre.exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -f64::from(i) * (f64::from(i) - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        ln_pre.exp() * h
    }
}

#[test]
fn chi_square_tail_matches_known_values() {
    // Upper 1e-4 points: chi2(1) 15.137, chi2(10) 35.564, chi2(50) 95.969.
    for (df, x) in [(1.0, 15.137), (10.0, 35.564), (50.0, 95.969)] {
        let p = gamma_q(df / 2.0, x / 2.0);
        assert!((p / 1e-4 - 1.0).abs() < 2e-3, "df {df}: {p}");
    }
    assert!((gamma_q(1.0, 1.0) - (-1.0f64).exp()).abs() < 1e-14);
}

/// A law on the integers given by its mass on [lo, hi].
pub(super) trait Law {
    fn mass(&self, lo: i64, hi: i64) -> f64;
}

/// P[Y = y] = (1 - q) / (1 + q) q^|y|, q = exp(-1/t), t real > 0.
pub(super) struct LaplaceLaw(pub(super) f64);

impl LaplaceLaw {
    /// P[Y <= y].
    fn cdf(&self, y: i64) -> f64 {
        let q = (-1.0 / self.0).exp();
        if y >= 0 {
            1.0 - q.powf(y as f64 + 1.0) / (1.0 + q)
        } else {
            q.powf(-y as f64) / (1.0 + q)
        }
    }
}

impl Law for LaplaceLaw {
    fn mass(&self, lo: i64, hi: i64) -> f64 {
        if hi < 0 {
            self.cdf(hi) - self.cdf(lo - 1)
        } else {
            // Upper tails, accurate when both are small.
            let q = (-1.0 / self.0).exp();
            let above = |y: i64| if y >= 0 { q.powf(y as f64 + 1.0) / (1.0 + q) } else { 1.0 - self.cdf(y) };
            above(lo - 1) - above(hi)
        }
    }
}

/// P[Y = y] ∝ exp(-y^2 / (2 var)), var >= 1. The normaliser by
/// Poisson summation: sum_y exp(-y^2 / (2 var)) =
/// sqrt(2 pi var) sum_k exp(-2 pi^2 k^2 var) (|k| <= 3 here: the next
/// term is below exp(-300)); bin masses by summing the terms over
/// |y| <= 12 sigma (beyond weighs below exp(-72)) with the recurrence
/// w(y + 1) = w(y) r(y), r(y + 1) = r(y) exp(-1/var).
pub(super) struct GaussianLaw {
    var: f64,
    z: f64,
    pub(super) r: i64,
}

impl GaussianLaw {
    pub(super) fn new(var: f64) -> Self {
        let pi2 = std::f64::consts::PI.powi(2);
        let theta: f64 = 1.0 + 2.0 * (1..=3).map(|k| (-2.0 * pi2 * f64::from(k * k) * var).exp()).sum::<f64>();
        let z = (2.0 * std::f64::consts::PI * var).sqrt() * theta;
        GaussianLaw { var, z, r: (12.0 * var.sqrt()).ceil() as i64 }
    }
}

impl Law for GaussianLaw {
    fn mass(&self, lo: i64, hi: i64) -> f64 {
        let (lo, hi) = (lo.max(-self.r), hi.min(self.r));
        let (mut acc, v) = (0.0, self.var);
        let lof = lo as f64;
        let mut w = (-lof * lof / (2.0 * v)).exp();
        let mut ratio = (-(2.0 * lof + 1.0) / (2.0 * v)).exp();
        let step = (-1.0 / v).exp();
        for _ in lo..=hi {
            acc += w;
            w *= ratio;
            ratio *= step;
        }
        acc / self.z
    }
}

/// Chi-square p-value of `draws` against `law`, on bins of width
/// ceil(2 r / 40) over [-r, r] plus the two tails, merged to expect >= 20.
pub(super) fn chi_square_p(draws: &[i64], law: &dyn Law, r: i64) -> f64 {
    let w = ((2 * r + 39) / 40).max(1);
    // Bin edges: (-inf, -r), [-r, -r + w), ..., [.., r], (r, inf).
    let mut bins: Vec<(i64, i64)> = vec![(i64::MIN / 2, -r - 1)];
    let mut lo = -r;
    while lo <= r {
        let hi = (lo + w - 1).min(r);
        bins.push((lo, hi));
        lo = hi + 1;
    }
    bins.push((r + 1, i64::MAX / 2));
    let n = draws.len() as f64;
    let probs: Vec<f64> = bins.iter().map(|&(a, b)| law.mass(a, b)).collect();
    let mut counts = vec![0u64; bins.len()];
    for &y in draws {
        let i = bins.partition_point(|&(_, b)| b < y);
        counts[i] += 1;
    }
    // Merge adjacent bins until each expects at least 20.
    let (mut merged_p, mut merged_c) = (Vec::new(), Vec::new());
    let (mut p_acc, mut c_acc) = (0.0, 0u64);
    for (p, c) in probs.iter().zip(&counts) {
        p_acc += p;
        c_acc += c;
        if p_acc * n >= 20.0 {
            merged_p.push(p_acc);
            merged_c.push(c_acc);
            (p_acc, c_acc) = (0.0, 0);
        }
    }
    *merged_p.last_mut().unwrap() += p_acc;
    *merged_c.last_mut().unwrap() += c_acc;
    let stat: f64 = merged_p
        .iter()
        .zip(&merged_c)
        .map(|(&p, &c)| {
            let e = p * n;
            (c as f64 - e).powi(2) / e
        })
        .sum();
    let df = (merged_p.len() - 1) as f64;
    gamma_q(df / 2.0, stat / 2.0)
}

/// Sample mean of y^2 within 5 standard errors of `var`, the standard
/// error from the exact fourth moment `m4`.
pub(super) fn assert_second_moment(draws: &[i64], var: f64, m4: f64, what: &str) {
    let n = draws.len() as f64;
    let got = draws.iter().map(|&y| (y as f64).powi(2)).sum::<f64>() / n;
    let se = ((m4 - var * var) / n).sqrt();
    assert!((got - var).abs() < 5.0 * se, "{what}: E[Y^2] {got} vs exact {var} (se {se})");
}

pub(super) const FIT_DRAWS: usize = 100_000;

/// P[Y = y] ∝ exp(-(y - centre)^2 / (2 var)), var >= 1, any real centre:
/// masses and normaliser by direct summation over |y - centre| <= 14 sigma
/// (beyond weighs below exp(-98)).
pub(super) struct CentredGaussianLaw {
    var: f64,
    centre: f64,
    lo: i64,
    hi: i64,
    z: f64,
}

impl CentredGaussianLaw {
    pub(super) fn new(var: f64, centre: f64) -> Self {
        let w = 14.0 * var.sqrt();
        let (lo, hi) = ((centre - w).floor() as i64, (centre + w).ceil() as i64);
        let mut law = CentredGaussianLaw { var, centre, lo, hi, z: 1.0 };
        law.z = law.weight(lo, hi);
        law
    }

    fn weight(&self, lo: i64, hi: i64) -> f64 {
        (lo.max(self.lo)..=hi.min(self.hi)).map(|y| (-(y as f64 - self.centre).powi(2) / (2.0 * self.var)).exp()).sum()
    }
}

impl Law for CentredGaussianLaw {
    fn mass(&self, lo: i64, hi: i64) -> f64 {
        self.weight(lo, hi) / self.z
    }
}
