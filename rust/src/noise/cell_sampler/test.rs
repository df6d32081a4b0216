use rand_core::RngCore;

use super::*;
use crate::noise::bernoulli::bernoulli_exp_neg_unit;
use crate::noise::discrete_gaussian::DiscreteGaussian;
use crate::noise::discrete_laplace::discrete_laplace_von_neumann;
use crate::noise::goodness_of_fit::{chi_square_p, GaussianLaw, LaplaceLaw, FIT_DRAWS};
use crate::noise::uniform::uniform_below_u64;
use crate::rng::SeedSequence;

#[test]
fn shared_samplers_are_built_once_per_law() {
    let a = shared_sampler(Shape::Laplace { t: 977 });
    let b = shared_sampler(Shape::Laplace { t: 977 });
    let c = shared_sampler(Shape::Gaussian { var: 977 });
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(c.shape(), Shape::Gaussian { var: 977 });
}

#[test]
fn alias_table_reproduces_integer_weights() {
    // Weights 3, 1, 0, 4 of capacity 2 each: P[i] = w_i / 8, counted
    // exactly over every (column, threshold value) pair.
    let cap = CAPACITY;
    let weights = vec![3 * cap / 2, cap / 2, 0, 2 * cap];
    let (threshold, alias) = alias_table(weights.clone());
    let mut mass = [0u128; 4];
    for col in 0..4 {
        mass[col] += u128::from(threshold[col]);
        mass[alias[col] as usize] += u128::from(cap - threshold[col]);
    }
    for i in 0..4 {
        assert_eq!(mass[i], u128::from(weights[i]), "item {i}");
    }
}

/// Laws the tests of the tables run on: scale 1 (cells of one
/// magnitude), small and large scales, an odd variance.
const TEST_SHAPES: [Shape; 9] = [
    Shape::Laplace { t: 1 },
    Shape::Laplace { t: 3 },
    Shape::Laplace { t: 1000 },
    Shape::Laplace { t: 1 << 20 },
    Shape::Gaussian { var: 1 },
    Shape::Gaussian { var: 9 },
    Shape::Gaussian { var: 7 },
    Shape::Gaussian { var: 1_000_000 },
    Shape::Gaussian { var: 1 << 40 },
];

#[test]
fn the_integer_shortcut_implies_the_first_test() {
    for shape in TEST_SHAPES {
        let s = CellSampler::new(shape);
        let w = 1u64 << s.cell_bits;
        // It fires in the central cells (the far ones, of weight about
        // one table unit, have theta near 0 and rarely come up).
        assert!(s.sure[0] as f64 > 0.9 * s.theta[0].0, "{shape:?}: {} vs {}", s.sure[0], s.theta[0].0);
        for (c, (&sure, &(theta_lo, _))) in s.sure.iter().zip(&s.theta).enumerate() {
            for offset in [0, w / 2, w - 1] {
                let m = c as u64 * w + offset;
                let bound = (1.0 - delta_num(shape, m, offset) * s.inv_den_up) * theta_lo;
                // digits = sure - 1 passes the shortcut; the first test
                // must accept it too.
                assert!(sure as f64 <= bound, "{shape:?} cell {c} offset {offset}: {sure} > {bound}");
            }
        }
    }
}

#[test]
fn weights_bound_the_cell_heads_and_theta_is_certified() {
    for shape in [
        Shape::Laplace { t: 1 },
        Shape::Laplace { t: 1000 },
        Shape::Gaussian { var: 9 },
        Shape::Gaussian { var: 1 << 40 },
    ] {
        let s = CellSampler::new(shape);
        let w = 1u64 << s.cell_bits;
        let f = s.factor_mant as f64 * 2f64.powi(s.factor_exp as i32);
        let scale = (1u64 << s.value_bits) as f64;
        for (c, (&wc, &(lo, hi))) in s.weight.iter().zip(&s.theta).enumerate() {
            let (lo, hi) = (lo / scale, hi / scale);
            let m = c as f64 * w as f64;
            let q = match shape {
                Shape::Laplace { t } => m / t as f64,
                Shape::Gaussian { var } => m * m / (2.0 * var as f64),
            };
            let theta = f * (-q).exp() / wc as f64;
            assert!(
                lo <= theta * (1.0 + 1e-12) && theta <= hi * (1.0 + 1e-12),
                "{shape:?} cell {c}: {lo} {theta} {hi}"
            );
            assert!(hi <= 1.0 + 1e-12);
            if q < 30.0 {
                assert!(hi - lo < 1e-12, "{shape:?} cell {c}: theta bounds too wide");
            }
        }
    }
}

#[test]
fn discrete_laplace_and_gaussian_have_the_right_variance() {
    let mut rng = SeedSequence::from_seed(3).stream("test");
    let n = 40_000;
    let t = 3u64;
    let q = (-1.0 / t as f64).exp();
    // Var of the discrete Laplace: 2q / (1 - q)^2.
    let var_l = 2.0 * q / (1.0 - q).powi(2);
    let xs: Vec<f64> = (0..n).map(|_| discrete_laplace(&mut rng, t) as f64).collect();
    let v = xs.iter().map(|x| x * x).sum::<f64>() / f64::from(n);
    assert!((v - var_l).abs() < 0.05 * var_l, "{v} vs {var_l}");
    let ys: Vec<f64> = (0..n).map(|_| discrete_gaussian(&mut rng, 9) as f64).collect();
    let v = ys.iter().map(|x| x * x).sum::<f64>() / f64::from(n);
    // The discrete Gaussian with sigma^2 = 9 has variance within 1e-9 of 9.
    assert!((v - 9.0).abs() < 0.05 * 9.0, "{v}");
}

/// Draws of a cell table (cells up to `reach` when given) by the
/// constant-time path (`slow` false), or with the exact digit-by-digit
/// acceptance on every draw (`slow`: the branching path's and the
/// constant-time path's forced).
fn cell_draws(seed: u64, shape: Shape, reach: Option<u64>, n: usize, slow: bool) -> Vec<i64> {
    let mut rng = SeedSequence::from_seed(seed).stream("cell-fit");
    let s = CellSampler::with_reach(shape, reach);
    (0..n)
        .map(|i| match (slow, i % 2) {
            (false, _) => s.sample(&mut rng),
            (true, 0) => s.sample_impl::<_, true>(&mut rng),
            (true, _) => match shape {
                Shape::Laplace { .. } => s.constant_time_impl::<_, false, true>(&mut rng),
                Shape::Gaussian { .. } => s.constant_time_impl::<_, true, true>(&mut rng),
            },
        })
        .collect()
}

#[test]
fn the_branching_path_has_the_exact_laws() {
    for (i, shape) in TEST_SHAPES.into_iter().enumerate() {
        let mut rng = SeedSequence::from_seed(300 + i as u64).stream("cell-fit");
        let s = CellSampler::wide(shape);
        let draws: Vec<i64> = (0..FIT_DRAWS).map(|_| s.sample_branching(&mut rng)).collect();
        assert_cell_law(&draws, shape, "branching path");
    }
}

#[test]
fn a_wide_table_draws_in_constant_time_from_the_default_table() {
    // The wide layout has no records of its own: its constant-time draws
    // (`sample`, `sample_constant_time`, `fill_scaled`) are the default
    // table's of the same law, word for word, and never a panic.
    for (i, shape) in TEST_SHAPES.into_iter().enumerate() {
        let (wide, default) = (CellSampler::wide(shape), CellSampler::new(shape));
        assert!(wide.columns.is_empty() && default.columns.len() == 512, "{shape:?}");
        let seeds = SeedSequence::from_seed(320 + i as u64);
        let (mut a, mut b) = (seeds.stream("wide"), seeds.stream("wide"));
        for _ in 0..2000 {
            assert_eq!(wide.sample(&mut a), default.sample_constant_time(&mut b), "{shape:?}");
        }
        let mut out = vec![0.0; 64];
        wide.fill_scaled(&mut a, 0.5, &mut out);
        let want: Vec<f64> = (0..64).map(|_| default.sample_constant_time(&mut b) as f64 * 0.5).collect();
        assert_eq!(out, want, "{shape:?}");
        assert_eq!(a.next_u64(), b.next_u64(), "{shape:?}: the same words spent");
    }
    let shape = Shape::Gaussian { var: 1_000_000 };
    let wide = CellSampler::wide(shape);
    let mut rng = SeedSequence::from_seed(330).stream("cell-fit");
    let draws: Vec<i64> = (0..FIT_DRAWS).map(|_| wide.sample_constant_time(&mut rng)).collect();
    assert_cell_law(&draws, shape, "wide table, constant-time path");
}

#[test]
fn default_gaussian_tables_keep_the_first_test_in_reach_at_every_scale() {
    // The construction refuses a table whose first-test argument |delta(o)
    // - delta(h)| reaches FIRST_TEST_GAUSSIAN_REACH (where S_4 stays within
    // FAST_ERROR); the largest arguments come at sigma / w = 32 and the
    // shortest reach at sigma / w near 64: sigma = 2^k - 1, 2^k, 2^k + 1
    // up to var = 2^50. The cells reach past 7.9 sigma (the tail below
    // e^-31) and the first test's argument stays below the bound.
    let mut widest = 0.0f64;
    for k in 0..=25u32 {
        let s = 1u128 << k;
        for sigma in [s.saturating_sub(1).max(1), s, s + 1] {
            let var = (sigma * sigma).min(MAX_GAUSSIAN_VAR);
            let t = CellSampler::new(Shape::Gaussian { var });
            let sd = (var as f64).sqrt();
            assert!(t.tail.start as f64 > 7.9 * sd, "var = {var}: cells reach {}", t.tail.start);
            let (w, c) = (t.width, t.cells - 1);
            let num = |o: u64| (o as f64 - t.mid as f64) * ((2 * (c * w + o) + t.mid - o) as f64);
            let reach = num(0).abs().max(num(w - 1).abs()) * t.inv_den_up;
            assert!(reach < FIRST_TEST_GAUSSIAN_REACH, "var = {var}: {reach}");
            widest = widest.max(reach);
        }
    }
    // 8.5 sigma in cells of sigma / 32: about 8.5 / 64.
    assert!(widest > 0.13, "widest first-test argument {widest}");
}

#[test]
fn the_constant_time_exp_estimates_are_within_their_error_bounds() {
    // Against certified 96-bit bounds on exp(-x): the Laplace's estimate
    // on a grid of x in [0, 1/16), the Gaussian's on (-0.14, 0.14), the
    // rare path's on [0, 1/2) including every table boundary j/16 and its
    // neighbours (where r is largest).
    let s = CellSampler::new(Shape::Gaussian { var: 1 << 40 });
    let den: u128 = 1 << 41; // 2 var: inv_den is exact
    let grid = |end: u128, boundaries: &[u128]| -> Vec<u128> {
        let mut nums: Vec<u128> = (0..20_000u128).map(|i| i * end / 20_000).collect();
        for &b in boundaries {
            nums.extend([b - 1, b, b + 1]);
        }
        nums.push(end - 1);
        nums
    };
    let error = |num: u128, p: f64| {
        let (lo, hi) = exp_neg_bounds(num, den, 96);
        let (lo, hi) = (to_f64_bound(&lo, 96, false), to_f64_bound(&hi, 96, true));
        (p - lo).max(hi - p)
    };
    let mut small = 0.0f64;
    for num in grid(den / 16, &[]) {
        let err = error(num, fast_exp_3(num as f64 * s.inv_den));
        assert!(err <= FAST_ERROR, "delta = {num}/{den}: Laplace fast error {err:e}");
        small = small.max(err);
    }
    // The Gaussian's: x in (-0.14, 0.14), exp(|x|) bounded by the
    // reciprocals of the bounds on exp(-|x|).
    let mut wide = 0.0f64;
    let reach = (FIRST_TEST_GAUSSIAN_REACH * den as f64) as u128;
    for num in grid(reach, &[]) {
        for negative in [false, true] {
            let x = if negative { -(num as f64) } else { num as f64 } * s.inv_den;
            let (lo, hi) = exp_neg_bounds(num, den, 96);
            let (lo, hi) = (to_f64_bound(&lo, 96, false), to_f64_bound(&hi, 96, true));
            let (lo, hi) = if negative { (1.0 / hi * (1.0 - 1e-15), 1.0 / lo * (1.0 + 1e-15)) } else { (lo, hi) };
            // The estimate less its bound lies below exp(-x), and 2
            // FAST_ERROR more above.
            let less = fast_exp_4_less(x);
            assert!(less <= lo && less + 2.0 * FAST_ERROR >= hi, "x = {x}: Gaussian bounds {less:e}");
            let p = less + FAST_ERROR;
            let err = (p - lo).max(hi - p);
            assert!(err <= FAST_ERROR, "x = {x}: Gaussian fast error {err:e}");
            wide = wide.max(err);
        }
    }
    let mut precise = 0.0f64;
    let sixteenths: Vec<u128> = (1..8u128).map(|j| j * den / 16).collect();
    for num in grid(den / 2, &sixteenths) {
        let err = error(num, s.exp_neg_estimate::<PRECISE_DEGREE>(num as f64));
        assert!(err <= EXP_ERROR, "delta = {num}/{den}: precise error {err:e}");
        precise = precise.max(err);
    }
    // The bounds are nearly attained where the truncation is largest
    // (delta near 1/16; |x| near 0.14, whose truncation is most of the
    // bound; r near 1/16): not slack.
    assert!(small > 0.9 * FAST_ERROR && wide > 0.5 * FAST_ERROR, "worst errors {small:e} {wide:e}");
    assert!(precise > 0.2 * EXP_ERROR, "worst precise error {precise:e}");
}

#[test]
fn every_column_record_matches_the_alias_table() {
    for shape in TEST_SHAPES {
        let s = CellSampler::new(shape);
        let n = s.threshold.len();
        assert_eq!(s.columns.len(), n);
        let mut seen = vec![false; n];
        for c in 0..n {
            let position = column_position(c, n);
            assert!(!std::mem::replace(&mut seen[position], true), "{shape:?}: position {position} taken twice");
            let r = &s.columns[position];
            assert_eq!(u64::from(r.threshold), s.threshold[c]);
            for keep in 0..2 {
                let item = u32::from(r.item[keep]);
                assert_eq!(item, s.outcome[2 * c + keep], "{shape:?} column {c}");
                let lo = f64::from(r.theta_lo[keep]);
                match s.record_theta.get(item as usize) {
                    Some(&(theta_lo, theta_hi)) => {
                        // A lower bound, and within the width the upper
                        // bound of the constant-time path assumes.
                        assert!(lo <= theta_lo, "{shape:?} column {c}");
                        assert!(theta_hi <= lo * (1.0 + THETA_WIDTH) + s.theta_slack, "{shape:?} column {c}");
                    }
                    None if u64::from(item) == s.cells => assert!(lo.is_nan(), "{shape:?}: the tail's theta"),
                    None => assert_eq!(lo.to_bits(), 0),
                }
            }
        }
        assert_eq!(std::mem::size_of::<Column>(), 16);
        // The default tables take at most 512 columns (8 KiB).
        assert!(n <= 512, "{shape:?}: {n} columns");
    }
}

/// Chi-square against the exact law, and a wrong scale rejected.
fn assert_cell_law(draws: &[i64], shape: Shape, what: &str) {
    match shape {
        Shape::Laplace { t } => {
            let r = 8 * t as i64;
            let p = chi_square_p(draws, &LaplaceLaw(t as f64), r);
            assert!(p > 1e-4, "{what} Laplace t = {t}: chi-square p = {p}");
            let wrong = if t < 10 { t as f64 + 1.0 } else { t as f64 * 1.05 };
            assert!(chi_square_p(draws, &LaplaceLaw(wrong), r) < 1e-4, "{what} t = {t}: wrong scale accepted");
        }
        Shape::Gaussian { var } => {
            let v = var as f64;
            let r = (5.0 * v.sqrt()).ceil() as i64;
            let p = chi_square_p(draws, &GaussianLaw::new(v), r);
            assert!(p > 1e-4, "{what} Gaussian var = {var}: chi-square p = {p}");
            let sigma = v.sqrt();
            let wrong = if sigma < 10.0 { (sigma + 1.0).powi(2) } else { v * 1.05f64.powi(2) };
            assert!(
                chi_square_p(draws, &GaussianLaw::new(wrong), r) < 1e-4,
                "{what} var = {var}: wrong variance accepted"
            );
        }
    }
}

#[test]
fn cell_tables_have_the_exact_laws() {
    let shapes = TEST_SHAPES;
    for (i, shape) in shapes.into_iter().enumerate() {
        let draws = cell_draws(200 + i as u64, shape, None, FIT_DRAWS, false);
        assert_cell_law(&draws, shape, "cell table");
    }
}

#[test]
fn cell_tables_exact_acceptance_alone_gives_the_exact_laws() {
    // The digit-by-digit comparison against certified bounds, which the
    // floating-point test leaves to about one draw in 10^6, on every draw.
    let shapes = [
        Shape::Laplace { t: 3 },
        Shape::Laplace { t: 1000 },
        Shape::Gaussian { var: 9 },
        Shape::Gaussian { var: 1_000_000 },
    ];
    for (i, shape) in shapes.into_iter().enumerate() {
        let draws = cell_draws(220 + i as u64, shape, None, 20_000, true);
        assert_cell_law(&draws, shape, "exact acceptance");
    }
}

#[test]
fn cell_tables_tail_gives_the_exact_laws() {
    // Cells up to one scale only: the tail item (geometric proposal
    // beyond X, certified acceptance) carries e^-1 of the Laplace mass
    // and about 32% of the Gaussian's.
    let cases = [
        (Shape::Laplace { t: 1000 }, 1000),
        (Shape::Laplace { t: 2 }, 2),
        (Shape::Gaussian { var: 1_000_000 }, 1000),
        (Shape::Gaussian { var: 9 }, 3),
    ];
    for (i, (shape, reach)) in cases.into_iter().enumerate() {
        let draws = cell_draws(240 + i as u64, shape, Some(reach), FIT_DRAWS, false);
        assert_cell_law(&draws, shape, "short table");
    }
}

/// Counts the words drawn from the inner generator.
struct Counting<R>(R, u64);

impl<R: RngCore> RngCore for Counting<R> {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.1 += 1;
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        rand_core::impls::fill_bytes_via_next(self, dest);
    }
}

#[test]
fn generator_words_per_draw_are_as_designed() {
    // Wide cell table (t = 2^20, cells of w = t/32): a trial is one word; it
    // is accepted with probability a = (1 - 2^-10) 32 (1 - e^{-1/32}) =
    // 0.98351 (the dummy's share, and the mean of exp(-o/t) over a
    // cell), and takes a second word when the first test (u < 1 - delta,
    // on 17 digits) fails: (1 - 2^-10) E[delta] = 0.99902 (2^15 - 1) /
    // 2^21 = 0.01561 of the trials. (1 + 0.01561) / 0.98351 = 1.0326
    // words per draw.
    let n = 20_000u32;
    let mut rng = Counting(SeedSequence::from_seed(79).stream("count"), 0);
    for _ in 0..n {
        discrete_laplace(&mut rng, 1 << 20);
    }
    let per = rng.1 as f64 / f64::from(n);
    // The constant-time path on the default table (cells of w = t/16):
    // one word a proposal, accepted with probability (1 - 2^-10) 16 (1 -
    // e^{-1/16}) = 0.96829, and a second word when the first 18 digits of
    // the uniform straddle the bounds (2^-18 of the proposals): (1 +
    // 2^-18) / 0.96829 = 1.0328 words per draw.
    assert!((per - 1.0328).abs() < 0.006, "constant-time Laplace: {per} words per draw");
    let mut rng = Counting(SeedSequence::from_seed(79).stream("count"), 0);
    let table = CellSampler::wide(Shape::Laplace { t: 1 << 20 });
    for _ in 0..n {
        table.sample_branching(&mut rng);
    }
    let per = rng.1 as f64 / f64::from(n);
    assert!((per - 1.0326).abs() < 0.006, "cell-table Laplace, branching path: {per} words per draw");
    // von Neumann: 1/(1 - e^-1) = 1.582 trials per draw, each one word plus
    // one per uniform after the fifth (sum_{j >= 5} 1/j! = 0.00995),
    // plus one tail word when the trial accepted on the slow path
    // (N odd >= 5: 1/120 - 1/720 per trial) or when floor(t U_1) is
    // not settled by U_1's 24 known digits after N = 3 (1/8 per trial,
    // then chance t / 2^24 = 1/16): 1.582 * (1.00995 + 0.00694) +
    // 1.582 * 0.125 / 16 = 1.621.
    let mut rng = Counting(SeedSequence::from_seed(80).stream("count"), 0);
    for _ in 0..n {
        discrete_laplace_von_neumann(&mut rng, 1 << 20);
    }
    let per = rng.1 as f64 / f64::from(n);
    assert!((per - 1.621).abs() < 0.02, "von Neumann Laplace: {per} words per draw");
    let mut old = Counting(SeedSequence::from_seed(80).stream("count"), 0);
    for _ in 0..n {
        cks_discrete_laplace(&mut old, 1 << 20);
    }
    let mut rng = Counting(SeedSequence::from_seed(81).stream("count"), 0);
    let g = DiscreteGaussian::new(1 << 40);
    for _ in 0..n {
        g.sample::<_, false>(&mut rng);
    }
    eprintln!(
        "words per draw: Laplace {per:.3} (CKS Alg. 2: {:.3}), Gaussian {:.3}",
        old.1 as f64 / f64::from(n),
        rng.1 as f64 / f64::from(n)
    );
}

/// CKS 2020, Alg. 2 with the bit-by-bit Bernoulli draws: the reference
/// the table sampler is compared against.
fn cks_discrete_laplace<R: RngCore + ?Sized>(rng: &mut R, t: u64) -> i64 {
    let t64 = t.max(1);
    let t = u128::from(t64);
    loop {
        let u = u128::from(uniform_below_u64(rng, t64));
        if !bernoulli_exp_neg_unit(rng, u, t) {
            continue;
        }
        let mut v: u128 = 0;
        while bernoulli_exp_neg_unit(rng, 1, 1) {
            v += 1;
        }
        let magnitude = u + t * v;
        let negative = rng.next_u64() & 1 == 1;
        if negative && magnitude == 0 {
            continue;
        }
        let y = i64::try_from(magnitude).unwrap_or(i64::MAX);
        return if negative { -y } else { y };
    }
}
