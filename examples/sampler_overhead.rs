//! The cost of the constant-time path of the cell-table samplers against
//! the branching path it replaced (on the wide table that path was tuned
//! on), as a ratio measured by interleaved blocks of draws in one process:
//! `cargo run --release --example sampler_overhead -- paired 41 200000`
//! (blocks, draws a block). Each block times both paths of one law in turn
//! (their order alternating from block to block), so a change of the
//! machine's speed falls on both alike; it prints the median ns a draw of
//! each path and the median of the per-block ratios.
//!
//! `cargo run --release --example sampler_overhead -- loop gaussian 1000000`
//! draws that many values by one path (`laplace`, `gaussian`,
//! `laplace-branching`, `gaussian-branching`), for instruction counts under
//! `valgrind --tool=callgrind`.

use std::hint::black_box;
use std::time::Instant;

use _core::noise::cell_sampler::{CellSampler, Shape};
use _core::rng::{SeedSequence, StreamRng};

const T: u64 = 1 << 20;
const VAR: u128 = 1 << 40;

#[inline(never)]
fn constant_time(table: &CellSampler, rng: &mut StreamRng, n: usize) -> i64 {
    let mut acc = 0i64;
    for _ in 0..n {
        acc = acc.wrapping_add(table.sample_constant_time(black_box(&mut *rng)));
    }
    acc
}

#[inline(never)]
fn branching(table: &CellSampler, rng: &mut StreamRng, n: usize) -> i64 {
    let mut acc = 0i64;
    for _ in 0..n {
        acc = acc.wrapping_add(table.sample_branching(black_box(&mut *rng)));
    }
    acc
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn paired(blocks: usize, draws: usize) {
    let mut rng = SeedSequence::from_seed(1).stream("overhead");
    for (name, shape) in [("laplace", Shape::Laplace { t: T }), ("gaussian", Shape::Gaussian { var: VAR })] {
        let (compact, wide) = (CellSampler::new(shape), CellSampler::wide(shape));
        let time = |constant: bool, rng: &mut StreamRng| {
            let start = Instant::now();
            let acc = if constant { constant_time(&compact, rng, draws) } else { branching(&wide, rng, draws) };
            black_box(acc);
            start.elapsed().as_secs_f64() * 1e9 / draws as f64
        };
        // A warm-up block of each.
        time(true, &mut rng);
        time(false, &mut rng);
        let (mut ct, mut br, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for b in 0..blocks {
            let (c, r) = if b % 2 == 0 {
                let c = time(true, &mut rng);
                (c, time(false, &mut rng))
            } else {
                let r = time(false, &mut rng);
                (time(true, &mut rng), r)
            };
            ct.push(c);
            br.push(r);
            ratio.push(c / r);
        }
        let (lo, hi) = (
            ratio.iter().copied().fold(f64::INFINITY, f64::min),
            ratio.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        println!(
            "{name}: constant-time {:.2} ns, branching {:.2} ns a draw (medians of {blocks} blocks of {draws}); \
             ratio median {:.3} (min {lo:.3}, max {hi:.3})",
            median(ct),
            median(br),
            median(ratio),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("loop") {
        let variant = args.get(2).map_or("gaussian", String::as_str);
        let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
        let laplace = variant.starts_with("laplace");
        let shape = if laplace { Shape::Laplace { t: T } } else { Shape::Gaussian { var: VAR } };
        let mut rng = SeedSequence::from_seed(1).stream("overhead");
        let acc = if variant.ends_with("-branching") {
            branching(&CellSampler::wide(shape), &mut rng, n)
        } else {
            constant_time(&CellSampler::new(shape), &mut rng, n)
        };
        println!("{variant}: {n} draws, sum {acc}");
    } else {
        let blocks: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(41);
        let draws: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200_000);
        paired(blocks, draws);
    }
}
