//! The smooth binary mechanism (Andersson & Pagh, "A smooth binary
//! mechanism for efficient private continual observation", NeurIPS 2023,
//! arXiv:2306.09666, Sec. 3 and the authors' reference implementation
//! `mechanism_noise_generation.py`).
//!
//! A complete binary tree of height H (leaves 0..2^H - 1 as H-bit
//! numbers) is used only at the leaves with exactly `ones` = w set bits,
//! in increasing order b_1 < b_2 < ...: input x_t sits at leaf b_t, the
//! other leaves hold zero. Release t is the tree's prefix sum over leaves
//! [0, b_{t+1}), i.e. x_1 + ... + x_t, read from one node per set bit of
//! b_{t+1} (node of level i: leaves with b_{t+1}'s bits above i and bit
//! i = 0). So:
//!
//! - every release sums exactly w noisy nodes: the same noise law at every
//!   step (variance w sigma^2 per entry, Gaussian; 2 w b^2, Laplace);
//! - a node at level i is only ever read by a query with bit i = 1, and it
//!   covers leaves with bit i = 0; a leaf with w ones has H - w zeros, so
//!   changing one input changes at most H - w read nodes: the L2 column
//!   norm is at most sqrt(H - w), the L1 column norm at most H - w
//!   (`dpbandits.privacy.smooth_binary` decides the noise from these);
//! - the paper's Gaussian choice is H even, w = H / 2, H the smallest with
//!   binom(H, H/2) > T; any (H, w) with binom(H, w) >= T + 1 is accepted
//!   here (the privacy layer picks the best for the noise family).
//!
//! Moving from query b_t to b_{t+1} (Gosper's successor) changes the nodes
//! at and below the highest bit where they differ; each new node's noise
//! is drawn once, when it is first read (all its leaves are then added),
//! stored with its level, and never redrawn. The nodes of b_{t+1}'s
//! trailing ones cover no leaf of weight w (no input: padding) and are
//! read by that release only; the counter draws their sum at once (in
//! law for floating-point noise; on a lattice the rounded closed form,
//! as padding: `FactorizationCounter::add_smooth_binary`). State: H node noises of the
//! value's shape, the prefix sum, and their live total; the leaf b_{t+1}
//! is recomputed from t (combinatorial unranking) on restore.

use crate::error::{Error, Result};

/// Largest tree height accepted (leaves are u64 and binomials fit u128).
pub const MAX_HEIGHT: u32 = 62;

/// binom(n, k) in u128 (exact for n <= 128 up to overflow; n <= 62 here).
pub fn binomial(n: u32, k: u32) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * u128::from(n - i) / u128::from(i + 1);
    }
    r
}

/// Checks (height, ones) for a counter of `horizon` steps: 1 <= ones <
/// height <= 62 and binom(height, ones) >= horizon + 1 leaves (the first
/// leaf holds x_1 and is never a query).
pub fn validate(height: u32, ones: u32, horizon: u64) -> Result<()> {
    if height == 0 || height > MAX_HEIGHT || ones == 0 || ones >= height {
        return Err(Error::invalid(
            "smooth_binary",
            format!("needs 1 <= ones < height <= {MAX_HEIGHT}, got height {height}, ones {ones}"),
        ));
    }
    if binomial(height, ones) < u128::from(horizon) + 1 {
        return Err(Error::invalid(
            "smooth_binary",
            format!(
                "a tree of height {height} has binom({height}, {ones}) = {} leaves of weight {ones}, fewer than \
                 horizon + 1 = {}",
                binomial(height, ones),
                u128::from(horizon) + 1
            ),
        ));
    }
    Ok(())
}

/// The next larger number with the same popcount (Gosper's hack); x > 0.
pub fn next_leaf(x: u64) -> u64 {
    let c = x & x.wrapping_neg();
    let r = x + c;
    (((r ^ x) >> 2) / c) | r
}

/// b_{index + 1}: the `index`-th (0-based) `height`-bit number with `ones`
/// set bits in increasing order (combinatorial number system).
pub fn leaf_at(height: u32, ones: u32, index: u64) -> u64 {
    let mut rank = u128::from(index);
    let mut left = ones;
    let mut out = 0u64;
    for bit in (0..height).rev() {
        if left == 0 {
            break;
        }
        // Numbers with this bit clear and `left` ones below it.
        let below = binomial(bit, left);
        if rank >= below {
            out |= 1u64 << bit;
            rank -= below;
            left -= 1;
        }
    }
    out
}

/// Read nodes covering each leaf b_1..b_T (the column counts of the
/// mechanism's 0/1 encoder), by enumeration: O(T H). For tests and
/// accounting checks at small T.
pub fn column_counts(height: u32, ones: u32, horizon: u64) -> Vec<u32> {
    let last_query = leaf_at(height, ones, horizon);
    let mut out = Vec::with_capacity(usize::try_from(horizon).unwrap_or(0));
    let mut leaf = leaf_at(height, ones, 0);
    for _ in 0..horizon {
        let mut count = 0;
        for i in 0..height {
            if leaf >> i & 1 == 1 {
                continue;
            }
            // The node of level i over `leaf` is read by queries q with
            // q's bits above i equal to leaf's and bit i set; the smallest
            // such q of weight `ones` puts the remaining ones lowest.
            let high = (leaf >> (i + 1) << (i + 1)) | (1u64 << i);
            let need = i64::from(ones) - i64::from(high.count_ones());
            if need < 0 || need > i64::from(i) {
                continue;
            }
            let q = high | ((1u64 << need) - 1);
            if q <= last_query {
                count += 1;
            }
        }
        out.push(count);
        leaf = next_leaf(leaf);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_are_the_weight_w_numbers_in_order() {
        for (h, w) in [(4u32, 2u32), (6, 3), (7, 2), (10, 7)] {
            let all: Vec<u64> = (0..1u64 << h).filter(|x| x.count_ones() == w).collect();
            assert_eq!(all.len() as u128, binomial(h, w));
            let mut x = leaf_at(h, w, 0);
            for (i, want) in all.iter().enumerate() {
                assert_eq!(leaf_at(h, w, i as u64), *want);
                assert_eq!(x, *want);
                x = next_leaf(x);
            }
        }
        assert_eq!(binomial(62, 31), 465_428_353_255_261_088);
    }

    #[test]
    fn the_nodes_of_a_querys_trailing_ones_hold_no_input() {
        // The counter draws their noise as one sum (padding): a node of
        // level l of query q (bit l set) covers the leaves with q's bits
        // above l and bit l clear; it holds an input iff one of them has
        // `ones` set bits, i.e. iff q's bits below l are not all set.
        for (h, w) in [(6u32, 3u32), (8, 4), (10, 7), (12, 3), (9, 8)] {
            let mut q = leaf_at(h, w, 0);
            while q < 1 << h {
                for l in (0..h).filter(|l| q >> l & 1 == 1) {
                    let prefix = q >> (l + 1) << (l + 1);
                    let holds_input = (0..1u64 << l).any(|low| (prefix | low).count_ones() == w);
                    assert_eq!(holds_input, l >= q.trailing_ones(), "({h}, {w}) query {q:#b} level {l}");
                }
                q = next_leaf(q);
            }
        }
    }

    #[test]
    fn column_counts_are_at_most_the_zeros_of_a_leaf() {
        for (h, w, n) in [(6u32, 3u32, 19u64), (8, 4, 69), (12, 3, 200)] {
            let counts = column_counts(h, w, n);
            assert!(counts.iter().all(|c| *c <= h - w));
            assert_eq!(*counts.iter().max().unwrap(), h - w, "({h}, {w}, {n})");
        }
        assert!(validate(6, 3, 19).is_ok());
        assert!(validate(6, 3, 20).is_err());
        assert!(validate(6, 6, 1).is_err());
        assert!(validate(63, 3, 1).is_err());
    }
}
