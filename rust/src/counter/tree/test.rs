use super::*;

fn stream(n: usize, dim: usize) -> Vec<Vec<f64>> {
    (0..n).map(|t| (0..dim).map(|i| ((t * 31 + i * 7) % 13) as f64 - 6.0).collect()).collect()
}

/// The releases of the counter computed with one pass per node (same
/// draws): the merged path must give them bit for bit.
fn releases_node_by_node(shape: &[usize], n: u64, noise: NoiseSpec, pad_to: u32, values: &[Vec<f64>]) -> Vec<f64> {
    let dim: usize = shape.iter().product();
    let side = matrix_side(shape);
    let mut rng = SeedSequence::from_seed(5).stream("tree");
    let levels = levels_for(n);
    let (mut exact, mut noisy) = (vec![0.0; levels * dim], vec![0.0; levels * dim]);
    let (mut release, mut padding, mut z) = (vec![0.0; dim], vec![0.0; dim], vec![0.0; dim]);
    let mut out = Vec::new();
    for (t, value) in (1..=n).zip(values) {
        let level = t.trailing_zeros() as usize;
        let incremental = level < INCREMENTAL_BELOW;
        if incremental {
            for (r, p) in release.iter_mut().zip(&padding) {
                *r -= p;
            }
            for j in 0..level {
                for (r, v) in release.iter_mut().zip(&noisy[j * dim..(j + 1) * dim]) {
                    *r -= v;
                }
            }
        }
        let mut node = value.clone();
        for j in 0..level {
            for (e, l) in node.iter_mut().zip(&exact[j * dim..(j + 1) * dim]) {
                *e += l;
            }
        }
        exact[level * dim..(level + 1) * dim].copy_from_slice(&node);
        noise.sample_into(&mut rng, side, &mut z);
        for ((o, e), z) in noisy[level * dim..(level + 1) * dim].iter_mut().zip(&node).zip(&z) {
            *o = e + z;
        }
        padding.fill(0.0);
        let missing = pad_to.saturating_sub(t.count_ones());
        if missing > 0 {
            noise.sample_sum_into(&mut rng, missing, side, &mut padding);
        }
        if incremental {
            for ((r, v), p) in release.iter_mut().zip(&noisy[level * dim..(level + 1) * dim]).zip(&padding) {
                *r += if pad_to > 0 { v + p } else { *v };
            }
        } else {
            release.copy_from_slice(&padding);
            for j in (0..levels).filter(|j| t >> j & 1 == 1) {
                for (r, v) in release.iter_mut().zip(&noisy[j * dim..(j + 1) * dim]) {
                    *r += v;
                }
            }
        }
        out.extend_from_slice(&release);
    }
    out
}

#[test]
fn merged_nodes_release_what_node_by_node_passes_released() {
    // Shapes with and without a remainder past the merge's chunks of
    // four, unpadded and padded, floating point and on a lattice (the
    // integer values are lattice values), past several re-summing
    // rounds.
    let n = 300;
    for (shape, noise) in [
        (vec![6, 6], NoiseSpec::SymmetricGaussian { sigma: 2.5 }),
        (vec![7], NoiseSpec::Gaussian { sigma: 0.5 }),
        (vec![3], NoiseSpec::Laplace { scale: 1.5 }),
        (vec![6, 6], NoiseSpec::SymmetricGaussian { sigma: 1.0 }.on_lattice(10).unwrap()),
    ] {
        let dim: usize = shape.iter().product();
        let values = stream(n as usize, dim);
        for pad_to in [0, ceil_log2(n) + 1] {
            if pad_to > 0 && noise.sum_of(2).is_none() {
                continue;
            }
            let want = releases_node_by_node(&shape, n, noise, pad_to, &values);
            let seeds = SeedSequence::from_seed(5);
            let mut c = TreeCounter::with_padding(&shape, n, noise, pad_to, &seeds).unwrap();
            let mut got = Vec::new();
            for v in &values {
                c.add(v).unwrap();
                got.extend_from_slice(c.release());
            }
            let same = got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same && got.len() == want.len(), "shape {shape:?}, pad_to {pad_to}");
        }
    }
}

#[test]
fn scalar_path_releases_what_the_general_path_releases() {
    // Same seed, same stream: one counter through `add_scalar`, one
    // through the general shape code; every release bit-identical over
    // 3000 rounds (re-summed every 16th), for each kind of node noise,
    // seeded and in secure mode's lattice; then both refuse the same
    // inputs with the same errors and stay equal.
    let laws = [
        NoiseSpec::Zero,
        NoiseSpec::Laplace { scale: 3.7 },
        NoiseSpec::Gaussian { sigma: 2.5 },
        NoiseSpec::Laplace { scale: 199.3 }.on_lattice(12).unwrap(),
        NoiseSpec::Gaussian { sigma: 2.5 }.on_lattice(16).unwrap(),
    ];
    let seeds = SeedSequence::from_seed(11);
    for noise in laws {
        let mut fast = TreeCounter::new(&[], 4000, noise, false, &seeds).unwrap();
        let mut general = fast.clone();
        for t in 0..3000u32 {
            let v = f64::from(t % 7) * 0.3 - 0.9;
            fast.add_scalar(v).unwrap();
            general.add_entries(&[v]).unwrap();
            assert_eq!(fast.release()[0].to_bits(), general.release()[0].to_bits(), "{noise:?}, round {t}");
            // The scalar path counts its noise terms incrementally.
            assert_eq!(fast.noise_terms(), fast.t().count_ones(), "{noise:?}, round {t}");
            assert_eq!(fast.noise_terms(), general.noise_terms(), "{noise:?}, round {t}");
        }
        for bad in [f64::NAN, f64::INFINITY, 2e280, 1e300] {
            let (a, b) = (fast.add_scalar(bad), general.add_entries(&[bad]));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{noise:?}, input {bad}");
            assert!(a.is_err());
        }
        fast.add(&[0.5]).unwrap();
        general.add_entries(&[0.5]).unwrap();
        assert_eq!(fast.release()[0].to_bits(), general.release()[0].to_bits());
        assert_eq!(fast.t(), general.t());
        // A restored counter continues the count; a state with a wrong
        // count is refused.
        let mut forged = fast.clone();
        forged.noise_terms += 1;
        assert!(TreeCounter::from_bytes(&forged.to_bytes()).is_err());
        let mut restored = TreeCounter::from_bytes(&fast.to_bytes()).unwrap();
        for _ in 0..40 {
            restored.add_scalar(0.25).unwrap();
            assert_eq!(restored.noise_terms(), restored.t().count_ones());
        }
    }
}

#[test]
fn scalar_path_follows_a_switch_to_secure_mode() {
    // The scalar path's cached law is derived from the noise spec: a
    // failed first addition (which builds it) followed by a switch to
    // the lattice must draw from the lattice law, as the general path.
    let seeds = SeedSequence::from_seed(5);
    let mut fast = TreeCounter::new(&[], 100, NoiseSpec::Laplace { scale: 2.0 }, false, &seeds).unwrap();
    let mut general = fast.clone();
    assert!(fast.add_scalar(f64::NAN).is_err());
    let mut fast = fast.into_secure(10, false).unwrap();
    general = general.into_secure(10, false).unwrap();
    for v in [0.25, 1.0, -0.5, 0.125] {
        fast.add_scalar(v).unwrap();
        general.add_entries(&[v]).unwrap();
        assert_eq!(fast.release()[0].to_bits(), general.release()[0].to_bits());
        assert_eq!((fast.release()[0] * 1024.0).fract(), 0.0, "on the lattice 2^-10");
    }
}

#[test]
fn zero_noise_is_exact() {
    let seeds = SeedSequence::from_seed(1);
    let n = 1000;
    let xs = stream(n, 3);
    let mut c = TreeCounter::new(&[3], n as u64, NoiseSpec::Zero, false, &seeds).unwrap();
    let mut exact = [0.0; 3];
    for x in &xs {
        c.add(x).unwrap();
        for (e, v) in exact.iter_mut().zip(x) {
            *e += v;
        }
        assert_eq!(c.release(), &exact);
    }
}

#[test]
fn release_is_exact_sum_plus_live_node_noise() {
    let seeds = SeedSequence::from_seed(2);
    let n = 300u64;
    let xs = stream(n as usize, 2);
    let noise = NoiseSpec::Laplace { scale: 1.0 };
    let mut c = TreeCounter::new(&[2], n, noise, false, &seeds).unwrap();
    for (t, x) in xs.iter().enumerate() {
        c.add(x).unwrap();
        let t = t as u64 + 1;
        let nodes = c.live_nodes();
        assert_eq!(nodes.len() as u32, t.count_ones());
        assert!(c.noise_terms() <= max_noise_terms(n));
        let mut sum = [0.0; 2];
        for nd in &nodes {
            for (s, v) in sum.iter_mut().zip(nd.noisy) {
                *s += v;
            }
        }
        for (a, b) in sum.iter().zip(c.release()) {
            assert!((a - b).abs() < 1e-9);
        }
    }
}

#[test]
fn padded_releases_carry_exactly_ceil_log2_terms() {
    for n in [1u64, 2, 5, 8, 100, 1024] {
        let mut c =
            TreeCounter::new(&[], n, NoiseSpec::Gaussian { sigma: 1.0 }, true, &SeedSequence::from_seed(3)).unwrap();
        for _ in 0..n {
            c.add(&[1.0]).unwrap();
            assert_eq!(c.noise_terms(), ceil_log2(n).max(1), "n = {n}, t = {}", c.t());
        }
    }
}

#[test]
fn padding_to_m_gives_every_release_m_draws() {
    let n = 100;
    let m = max_noise_terms(n);
    let mut c =
        TreeCounter::with_padding(&[], n, NoiseSpec::Laplace { scale: 1.0 }, m, &SeedSequence::from_seed(5)).unwrap();
    for _ in 0..n {
        c.add(&[0.0]).unwrap();
        assert_eq!(c.noise_terms(), m);
    }
    assert!(TreeCounter::with_padding(&[], 7, NoiseSpec::Zero, 2, &SeedSequence::from_seed(5)).is_err());
}

#[test]
fn horizon_is_enforced() {
    let mut c = TreeCounter::new(&[], 2, NoiseSpec::Zero, false, &SeedSequence::from_seed(0)).unwrap();
    c.add(&[1.0]).unwrap();
    c.add(&[1.0]).unwrap();
    assert!(matches!(c.add(&[1.0]), Err(Error::State(_))));
    assert!(c.add(&[f64::NAN]).is_err());
    assert!(TreeCounter::new(&[], 0, NoiseSpec::Zero, false, &SeedSequence::from_seed(0)).is_err());
    assert!(TreeCounter::new(&[3], 5, NoiseSpec::Wishart { scale: 1.0, df: 5.0 }, false, &SeedSequence::from_seed(0))
        .is_err());
}

#[test]
fn huge_shapes_are_an_error_not_an_abort() {
    let seeds = SeedSequence::from_seed(0);
    // 2^32 * 2^32 wraps to 0 in usize; 10^8 * 10^8 cannot be allocated.
    for shape in [[1usize << 32, 1 << 32], [100_000_000, 100_000_000]] {
        let err = TreeCounter::new(&shape, 10, NoiseSpec::Zero, false, &seeds).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { name: "shape", .. }), "{err}");
    }
}

#[test]
fn out_of_range_values_are_refused_and_leave_the_counter_as_it_was() {
    let mut c =
        TreeCounter::new(&[3], 10, NoiseSpec::Gaussian { sigma: 1.0 }, false, &SeedSequence::from_seed(2)).unwrap();
    c.add(&[1.0, 2.0, 3.0]).unwrap();
    let release = c.release().to_vec();
    for (bad, says) in [(f64::NAN, "not finite"), (f64::INFINITY, "not finite"), (-1e300, "magnitude")] {
        let err = c.add(&[0.5, bad, 0.5]).unwrap_err().to_string();
        assert!(err.contains(says) && err.contains("value"), "{err}");
        assert_eq!(c.t(), 1);
        assert_eq!(c.release(), &release[..]);
    }
    c.add(&[MAX_VALUE, -MAX_VALUE, 0.0]).unwrap();
}

#[test]
fn restore_rejects_a_state_with_the_wrong_matrix_side() {
    let noise = NoiseSpec::Wishart { scale: 1.0, df: 5.0 };
    let mut c = TreeCounter::new(&[3, 3], 8, noise, false, &SeedSequence::from_seed(5)).unwrap();
    c.add(&[0.0; 9]).unwrap();
    c.side = 0;
    assert!(matches!(TreeCounter::from_bytes(&c.to_bytes()), Err(Error::Decode(_))));
    let mut d =
        TreeCounter::new(&[], 100, NoiseSpec::Gaussian { sigma: 1.0 }, true, &SeedSequence::from_seed(5)).unwrap();
    d.pad_to = 2; // releases of 100 rounds can sum 6 nodes
    assert!(matches!(TreeCounter::from_bytes(&d.to_bytes()), Err(Error::Decode(_))));
}

#[test]
fn round_trip_mid_stream_continues_identically() {
    let n = 500u64;
    let xs = stream(n as usize, 9);
    let noise = NoiseSpec::SymmetricGaussian { sigma: 2.0 };
    let mut a = TreeCounter::new(&[3, 3], n, noise, true, &SeedSequence::from_seed(4)).unwrap();
    for x in &xs[..123] {
        a.add(x).unwrap();
    }
    let mut b = TreeCounter::from_bytes(&a.to_bytes()).unwrap();
    assert_eq!(a.release(), b.release());
    for x in &xs[123..] {
        a.add(x).unwrap();
        b.add(x).unwrap();
        assert_eq!(a.release(), b.release());
    }
    assert!(TreeCounter::from_bytes(&[]).is_err());
    assert!(TreeCounter::from_bytes(&[9, 1, 2]).is_err());
}

#[test]
fn release_runs_are_independent_and_leave_the_counter_fresh() {
    let mut c =
        TreeCounter::new(&[], 8, NoiseSpec::Laplace { scale: 1.0 }, false, &SeedSequence::from_seed(9)).unwrap();
    let values = [1.0, 0.0, 0.0, 0.0];
    let a = c.release_runs(&values, 3).unwrap();
    assert_eq!(a.len(), 12);
    assert_eq!(c.t(), 0);
    assert_ne!(a[..4], a[4..8]);
    // The generator moved on: a second batch draws new noise.
    let b = c.release_runs(&values, 3).unwrap();
    assert_ne!(a, b);
    assert!(c.release_runs(&[0.0; 9], 1).is_err()); // 9 rows > horizon 8
}

#[test]
fn secure_releases_are_exact_lattice_sums() {
    let c = TreeCounter::new(&[2], 64, NoiseSpec::Gaussian { sigma: 0.5 }, false, &SeedSequence::from_seed(1)).unwrap();
    let mut c = c.into_secure(21, false).unwrap();
    let step = 2f64.powi(-21);
    for t in 0..40 {
        c.add(&[0.1 * f64::from(t), -0.3]).unwrap();
        let nodes: Vec<f64> = c.live_nodes().iter().map(|n| n.noisy[0]).collect();
        assert_eq!(nodes.iter().sum::<f64>(), c.release()[0]);
        for v in c.release() {
            assert_eq!((v / step).round() * step, *v);
        }
    }
    let round_trip = TreeCounter::from_bytes(&c.to_bytes()).unwrap();
    assert_eq!(round_trip.secure_exponent(), Some(21));
    assert!(TreeCounter::new(
        &[2, 2],
        4,
        NoiseSpec::Wishart { scale: 1.0, df: 3.0 },
        false,
        &SeedSequence::from_seed(1)
    )
    .unwrap()
    .into_secure(10, false)
    .is_err());
}

#[test]
fn padded_lattice_releases_stay_on_the_lattice_with_the_padded_variance() {
    // Laplace(b) on the lattice 2^-18, T = 64: every release carries 6
    // draws' worth of noise (node draws + padding), so its variance is
    // 6 * 2 b^2, and every release is a multiple of the step.
    let (b, j, n) = (1.0, 18, 64u64);
    let step = 2f64.powi(-j);
    let spec = NoiseSpec::Laplace { scale: b }.on_lattice(j).unwrap();
    let runs = 4000;
    let mut at = vec![Vec::with_capacity(runs); n as usize];
    for r in 0..runs {
        let mut c = TreeCounter::new(&[], n, spec, true, &SeedSequence::from_seed(100 + r as u64)).unwrap();
        for releases in &mut at {
            c.add(&[0.0]).unwrap();
            let v = c.release()[0];
            assert_eq!((v / step).round() * step, v);
            releases.push(v);
        }
    }
    for t in [0usize, 1, 6, 31, 62, 63] {
        let var = at[t].iter().map(|v| v * v).sum::<f64>() / runs as f64;
        let want = 6.0 * 2.0 * b * b;
        // The sample variance of a sum of 6 Laplace(1) (kurtosis 4) over
        // 4000 runs has sd ~ want * sqrt(5 / 4000); 5 sd.
        assert!((var - want).abs() < 5.0 * want * (5.0f64 / 4000.0).sqrt(), "t = {}: {var} vs {want}", t + 1);
    }
}

#[test]
fn laplace_sums_by_gamma_differences_have_the_sum_variance() {
    let mut rng = SeedSequence::from_seed(9).stream("test");
    let mut out = vec![0.0; 20_000];
    for m in [1u32, 3, 17] {
        NoiseSpec::Laplace { scale: 2.0 }.sample_sum_into(&mut rng, m, 0, &mut out);
        let var = out.iter().map(|v| v * v).sum::<f64>() / out.len() as f64;
        let want = f64::from(m) * 2.0 * 4.0;
        assert!((var - want).abs() < 5.0 * want * (5.0f64 / 20_000.0).sqrt(), "m = {m}: {var} vs {want}");
    }
}

/// Two-sample Kolmogorov–Smirnov statistic.
fn ks_two_sample(mut a: Vec<f64>, mut b: Vec<f64>) -> f64 {
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            i += 1;
        } else {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

#[test]
fn gamma_difference_padding_has_the_law_of_the_sum_of_laplace_draws() {
    // KS against direct sums of m Laplace(b) draws, n = 20,000 each:
    // the 0.1% critical value of the two-sample statistic is
    // 1.95 sqrt(2 / n) = 0.0195.
    let n = 20_000;
    let mut rng = SeedSequence::from_seed(31).stream("test");
    let spec = NoiseSpec::Laplace { scale: 1.5 };
    for m in [1u32, 2, 5, 20] {
        let mut by_gamma = vec![0.0; n];
        spec.sample_sum_into(&mut rng, m, 0, &mut by_gamma);
        let direct: Vec<f64> = (0..n).map(|_| (0..m).map(|_| crate::noise::laplace(&mut rng, 1.5)).sum()).collect();
        let d = ks_two_sample(by_gamma, direct);
        assert!(d < 1.95 * (2.0 / n as f64).sqrt(), "m = {m}: KS D = {d}");
    }
}

fn persistent(n: u64, noise: NoiseSpec, shape: &[usize], seed: u64) -> TreeCounter {
    let m = max_noise_terms(n);
    TreeCounter::with_padding_mode(shape, n, noise, m, Padding::Persistent, &SeedSequence::from_seed(seed)).unwrap()
}

#[test]
fn persistent_padding_keeps_a_level_draw_while_its_bit_is_0() {
    let n = 300u64;
    let m = max_noise_terms(n);
    let xs = stream(n as usize, 2);
    let mut c = persistent(n, NoiseSpec::Gaussian { sigma: 1.0 }, &[2], 7);
    assert_eq!(c.padding_mode(), Padding::Persistent);
    let mut kept: Vec<Option<Vec<f64>>> = vec![None; m as usize];
    let mut exact = [0.0; 2];
    for x in &xs {
        c.add(x).unwrap();
        for (e, v) in exact.iter_mut().zip(x) {
            *e += v;
        }
        let t = c.t();
        assert_eq!(c.noise_terms(), m);
        let mut noise = [0.0; 2];
        for nd in c.live_nodes() {
            for (s, v) in noise.iter_mut().zip(nd.noisy) {
                *s += v;
            }
        }
        let mut padding_draws = 0;
        for level in 0..m {
            let draw = c.padding_draw(level);
            let bit_is_0 = t >> level & 1 == 0;
            assert_eq!(draw.is_some(), bit_is_0, "t = {t}, level {level}");
            match (draw, &kept[level as usize]) {
                // A level whose bit was already 0 before this round keeps its draw.
                (Some(d), Some(old)) if (t - 1) >> level & 1 == 0 => {
                    assert_eq!(d, &old[..], "t = {t}, level {level}");
                }
                _ => {}
            }
            kept[level as usize] = draw.map(<[f64]>::to_vec);
            if let Some(d) = draw {
                padding_draws += 1;
                for (s, v) in noise.iter_mut().zip(d) {
                    *s += v;
                }
            }
        }
        assert_eq!(padding_draws + t.count_ones(), m);
        for ((r, s), e) in c.release().iter().zip(noise).zip(exact) {
            // live node values carry the exact sums; the rest is padding.
            assert!((r - s).abs() < 1e-9, "t = {t}: {r} vs {s} (exact {e})");
        }
    }
    assert_eq!(c.padding_draw(m), None);
    // The fresh variant stores no per-level draws.
    let f = TreeCounter::with_padding(&[], n, NoiseSpec::Zero, m, &SeedSequence::from_seed(7)).unwrap();
    assert_eq!((f.padding_mode(), f.padding_draw(1)), (Padding::Fresh, None));
}

#[test]
fn persistent_padding_needs_a_draw_per_level() {
    let seeds = SeedSequence::from_seed(1);
    // n = 64: 7 levels; m = 7; Agarwal–Singh's 6 is too few.
    assert!(TreeCounter::with_padding_mode(&[], 64, NoiseSpec::Zero, 6, Padding::Persistent, &seeds).is_err());
    assert!(TreeCounter::with_padding_mode(&[], 64, NoiseSpec::Zero, 0, Padding::Persistent, &seeds).is_err());
    assert!(TreeCounter::with_padding_mode(&[], 64, NoiseSpec::Zero, 7, Padding::Persistent, &seeds).is_ok());
    // A huge pad_to: an error naming it, before any allocation.
    let err = TreeCounter::with_padding_mode(&[1000, 1000], 64, NoiseSpec::Zero, u32::MAX, Padding::Persistent, &seeds)
        .unwrap_err();
    assert!(err.to_string().contains("pad_to"), "{err}");
    assert_eq!(Padding::from_name("persistent").unwrap(), Padding::Persistent);
    assert_eq!(Padding::from_name(Padding::Fresh.name()).unwrap(), Padding::Fresh);
    assert!(Padding::from_name("sticky").is_err());
}

#[test]
fn persistent_gaussian_releases_carry_m_draws_and_share_them_across_rounds() {
    // N(0, 1) nodes, n = 64, m = 7, zero data: each release is N(0, 7).
    // Rounds 2 (binary 10) and 3 (11) share node 1 and, persistent, the
    // draws of levels 2..6: Cov = 6 (fresh: 1, the node only).
    let (n, runs) = (64u64, 6000usize);
    let m = f64::from(max_noise_terms(n));
    for (padding, shared) in [(Padding::Persistent, m - 1.0), (Padding::Fresh, 1.0)] {
        let mut at = vec![Vec::with_capacity(runs); n as usize];
        for r in 0..runs {
            let seeds = SeedSequence::from_seed(1000 + r as u64);
            let mut c =
                TreeCounter::with_padding_mode(&[], n, NoiseSpec::Gaussian { sigma: 1.0 }, m as u32, padding, &seeds)
                    .unwrap();
            for releases in &mut at {
                c.add(&[0.0]).unwrap();
                releases.push(c.release()[0]);
            }
        }
        for t in [0usize, 1, 2, 7, 31, 62, 63] {
            // sum v^2 / m ~ chi^2(runs): the variance estimate has sd m sqrt(2 / runs); 5 sd.
            let var = at[t].iter().map(|v| v * v).sum::<f64>() / runs as f64;
            assert!((var - m).abs() < 5.0 * m * (2.0 / runs as f64).sqrt(), "{padding:?} t = {}: {var}", t + 1);
        }
        // E[X Y] = shared, Var[X Y] = m^2 + shared^2 for jointly normal X, Y; 5 sd.
        let cov = at[1].iter().zip(&at[2]).map(|(x, y)| x * y).sum::<f64>() / runs as f64;
        let sd = ((m * m + shared * shared) / runs as f64).sqrt();
        assert!((cov - shared).abs() < 5.0 * sd, "{padding:?}: Cov(R2, R3) = {cov}, want {shared}");
    }
}

#[test]
fn persistent_wishart_releases_have_the_law_of_m_draws() {
    // W_2(I, k) nodes, n = 16, m = 5: each release is W_2(I, 5k), whose
    // diagonal entries have mean 5k and variance 2 (5k), and whose
    // off-diagonal entry W_12 has E[W_12^2] = 5k, Var[W_12^2] = 2 (5k)^2 + 6 (5k).
    let (n, k, runs) = (16u64, 3.0, 4000usize);
    let m = f64::from(max_noise_terms(n));
    let mk = m * k;
    let mut diag = vec![0.0; n as usize];
    let mut off2 = vec![0.0; n as usize];
    for r in 0..runs {
        let mut c = persistent(n, NoiseSpec::Wishart { scale: 1.0, df: k }, &[2, 2], 5000 + r as u64);
        for t in 0..n as usize {
            c.add(&[0.0; 4]).unwrap();
            diag[t] += c.release()[0] / runs as f64;
            off2[t] += c.release()[1].powi(2) / runs as f64;
        }
    }
    for t in 0..n as usize {
        let z_diag = (diag[t] - mk) / (2.0 * mk / runs as f64).sqrt();
        let z_off = (off2[t] - mk) / ((2.0 * mk * mk + 6.0 * mk) / runs as f64).sqrt();
        assert!(z_diag.abs() < 5.0 && z_off.abs() < 5.0, "t = {}: z = {z_diag}, {z_off}", t + 1);
    }
}

#[test]
fn persistent_padding_round_trips_and_reseeds_like_the_nodes() {
    let n = 500u64;
    let xs = stream(n as usize, 9);
    let noise = NoiseSpec::Wishart { scale: 2.0, df: 4.0 };
    let mut a = persistent(n, noise, &[3, 3], 4);
    for x in &xs[..123] {
        a.add(x).unwrap();
    }
    let mut b = TreeCounter::from_bytes(&a.to_bytes()).unwrap();
    assert_eq!(b.padding_mode(), Padding::Persistent);
    assert_eq!(a.release(), b.release());
    // Through serde inside another type too (engines' checkpoints).
    let mut e: TreeCounter = crate::state::decode(&crate::state::encode(&a)).unwrap();
    let mut fork = a.clone();
    fork.reseed(&SeedSequence::from_seed(99));
    for level in 0..max_noise_terms(n) {
        assert_eq!(fork.padding_draw(level), a.padding_draw(level));
    }
    for x in &xs[123..] {
        a.add(x).unwrap();
        b.add(x).unwrap();
        e.add(x).unwrap();
        assert_eq!(a.release(), b.release());
        assert_eq!(a.release(), e.release());
    }
    // 123 = 0b111_1011: level 2's draw survives round 124 in the fork, whose new draws differ.
    let mut a2 = persistent(n, noise, &[3, 3], 4);
    for x in &xs[..123] {
        a2.add(x).unwrap();
    }
    let mut f2 = a2.clone();
    f2.reseed(&SeedSequence::from_seed(99));
    a2.add(&xs[123]).unwrap();
    f2.add(&xs[123]).unwrap();
    assert_eq!(a2.padding_draw(2), f2.padding_draw(2));
    assert_ne!(a2.padding_draw(0), f2.padding_draw(0));
    assert_ne!(a2.release(), f2.release());
    // A persistent state with too few levels is refused.
    let mut bad = persistent(n, noise, &[3, 3], 4);
    bad.pad_to = 8;
    bad.padding.truncate(9 * 9);
    assert!(matches!(TreeCounter::from_bytes(&bad.to_bytes()), Err(Error::Decode(_))));
}

#[test]
fn persistent_padding_without_noise_is_the_exact_sum_and_on_a_lattice_stays_on_it() {
    let n = 200u64;
    let xs = stream(n as usize, 3);
    let m = max_noise_terms(n);
    let mut p = persistent(n, NoiseSpec::Zero, &[3], 1);
    let mut f = TreeCounter::with_padding(&[3], n, NoiseSpec::Zero, m, &SeedSequence::from_seed(1)).unwrap();
    let step = 2f64.powi(-20);
    let spec = NoiseSpec::Laplace { scale: 1.0 }.on_lattice(20).unwrap();
    let mut l = persistent(n, spec, &[3], 2);
    for x in &xs {
        p.add(x).unwrap();
        f.add(x).unwrap();
        l.add(x).unwrap();
        assert_eq!(p.release(), f.release());
        for v in l.release() {
            assert_eq!((v / step).round() * step, *v);
        }
    }
}

#[test]
fn dyadic_decomposition_covers_prefix() {
    for t in 1..200u64 {
        let nodes = dyadic_nodes(t);
        let mut next = 1;
        for (level, first, last) in nodes {
            assert_eq!(first, next);
            assert_eq!(last - first + 1, 1 << level);
            next = last + 1;
        }
        assert_eq!(next, t + 1);
    }
    assert_eq!(ceil_log2(1), 0);
    assert_eq!(ceil_log2(2), 1);
    assert_eq!(ceil_log2(5), 3);
    assert_eq!(ceil_log2(8), 3);
    assert_eq!(max_noise_terms(50_000_000), 27);
    assert_eq!(levels_for(8), 4);
    for n in 1..300u64 {
        assert_eq!(max_popcount(n), (1..=n).map(u64::count_ones).max().unwrap(), "n = {n}");
    }
}
