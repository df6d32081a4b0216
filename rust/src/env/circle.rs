//! Points of the unit circle, (cos 2 pi v, sin 2 pi v), from a uniform v,
//! in plain arithmetic (no libm call, no branch): the environments' uniform
//! directions on S^1, S^2 and S^3 (see `ShariffSheffetEnv`) are built from
//! them without rejection, and a loop over lanes of them vectorises.
//!
//! The angle 2 pi v = q pi/2 + y with q the integer nearest to 4v and y in
//! [-pi/4, pi/4]; cos y and sin y come from their Taylor polynomials, and
//! the quarter turns q from swapping and negating. Every step is exact but
//! the multiplication by pi/2 and the polynomials' rounding: a few units in
//! the last place (the tests bound it against `f64::sin_cos`).

use std::f64::consts::FRAC_PI_2;

/// 1.5 * 2^52: for 0 <= x < 2^51, x + ROUNDER rounds x to the nearest
/// integer, which the sum's lowest mantissa bits then hold.
const ROUNDER: f64 = 6_755_399_441_055_744.0;

/// 1 / n!, correctly rounded (n! is exact in f64 up to n = 22).
const fn inverse_factorial(n: u32) -> f64 {
    let mut factorial = 1.0;
    let mut i = 2;
    while i <= n {
        factorial *= i as f64;
        i += 1;
    }
    1.0 / factorial
}

/// sin y on |y| <= pi/4: y (1 - y^2/3! + ... - y^14/15!). The first term
/// left out, y^17/17!, is at most 5.9e-17 |y| (|y|^16 / 17! at pi/4).
#[allow(clippy::inline_always)]
#[inline(always)]
fn sin_taylor(y: f64, z: f64) -> f64 {
    const S: [f64; 7] = [
        -inverse_factorial(3),
        inverse_factorial(5),
        -inverse_factorial(7),
        inverse_factorial(9),
        -inverse_factorial(11),
        inverse_factorial(13),
        -inverse_factorial(15),
    ];
    let (z2, z4) = (z * z, (z * z) * (z * z));
    let p = (S[0] + S[1] * z) + z2 * (S[2] + S[3] * z) + z4 * ((S[4] + S[5] * z) + z2 * S[6]);
    y + y * (z * p)
}

/// cos y on |y| <= pi/4: 1 - y^2/2! + ... + y^16/16!. The first term left
/// out, y^18/18!, is below 2.1e-18 at pi/4.
#[allow(clippy::inline_always)]
#[inline(always)]
fn cos_taylor(z: f64) -> f64 {
    const C: [f64; 8] = [
        -inverse_factorial(2),
        inverse_factorial(4),
        -inverse_factorial(6),
        inverse_factorial(8),
        -inverse_factorial(10),
        inverse_factorial(12),
        -inverse_factorial(14),
        inverse_factorial(16),
    ];
    let (z2, z4) = (z * z, (z * z) * (z * z));
    let p = (C[0] + C[1] * z) + z2 * (C[2] + C[3] * z) + z4 * ((C[4] + C[5] * z) + z2 * (C[6] + C[7] * z));
    1.0 + z * p
}

/// (cos 2 pi v, sin 2 pi v) for v in [0, 1]: a uniform point of the unit
/// circle when v is uniform. Written lane-wise (selects and sign flips on
/// bits, no branch) so that a loop over lanes vectorises; the same
/// operations in the same order in every build, so the same bits.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn circle_point(v: f64) -> (f64, f64) {
    let x = 4.0 * v;
    let rounded = x + ROUNDER;
    let q = rounded - ROUNDER;
    // Exact: q is within 1/2 of x (Sterbenz), and 4v is exact.
    let y = (x - q) * FRAC_PI_2;
    let z = y * y;
    let (c, s) = (cos_taylor(z), sin_taylor(y, z));
    let quarter_turns = rounded.to_bits();
    // An odd q turns (c, s) by pi/2, to (-s, c); q's second bit by pi.
    let (c, s) = if quarter_turns & 1 == 0 { (c, s) } else { (-s, c) };
    let half_turn = (quarter_turns & 2) << 62;
    (f64::from_bits(c.to_bits() ^ half_turn), f64::from_bits(s.to_bits() ^ half_turn))
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact values are the point
mod tests {
    use super::*;

    /// libm's (cos, sin) of the same reduced angle y = (4v - q) pi/2 (as
    /// exact as the argument can be), turned by q quarter turns.
    fn reference(v: f64) -> (f64, f64) {
        let x = 4.0 * v;
        let q = x.round();
        let (s, c) = ((x - q) * FRAC_PI_2).sin_cos();
        #[allow(clippy::cast_possible_truncation)] // q is 0..=4
        match (q as i64) & 3 {
            0 => (c, s),
            1 => (-s, c),
            2 => (-c, -s),
            _ => (s, -c),
        }
    }

    /// Each coordinate within 2^-52 (a unit in the last place of 1, two
    /// of a coordinate above 1/2) of libm on the same reduced angle (the
    /// polynomials' truncation is below 6e-17; measured: at most 2^-53),
    /// on a grid,
    /// the quarter and eighth turns and their neighbours; and
    /// c^2 + s^2 within 6e-16 of 1 (two units in each coordinate, plus
    /// the check's own rounding).
    #[test]
    fn matches_sin_cos_on_the_reduced_angle() {
        let ulp = f64::EPSILON;
        let mut vs: Vec<f64> = (0..=200_000).map(|i| f64::from(i) / 200_000.0).collect();
        for edge in [0.0f64, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0] {
            vs.extend([edge, edge.next_up(), edge.next_down()].into_iter().filter(|v| (0.0..=1.0).contains(v)));
        }
        for v in vs {
            let (c, s) = circle_point(v);
            let (want_c, want_s) = reference(v);
            assert!(
                (c - want_c).abs() <= ulp && (s - want_s).abs() <= ulp,
                "v {v}: ({c}, {s}) vs ({want_c}, {want_s})"
            );
            let (sin, cos) = (2.0 * std::f64::consts::PI * v).sin_cos();
            assert!((c - cos).abs() < 1e-15 && (s - sin).abs() < 1e-15, "v {v}: ({c}, {s}) vs ({cos}, {sin})");
            assert!((c * c + s * s - 1.0).abs() < 6e-16, "v {v}");
        }
    }

    /// The quarter turns land where they should.
    #[test]
    fn quarter_turns() {
        let close = |(c, s): (f64, f64), (a, b): (f64, f64)| (c - a).abs() <= 3e-16 && (s - b).abs() <= 3e-16;
        assert!(close(circle_point(0.0), (1.0, 0.0)));
        assert!(close(circle_point(0.25), (0.0, 1.0)));
        assert!(close(circle_point(0.5), (-1.0, 0.0)));
        assert!(close(circle_point(0.75), (0.0, -1.0)));
        assert!(close(circle_point(1.0), (1.0, 0.0)));
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!(close(circle_point(0.125), (h, h)));
        assert!(close(circle_point(0.625), (-h, -h)));
    }

    #[test]
    fn inverse_factorials_are_exact_quotients() {
        assert_eq!(inverse_factorial(2), 0.5);
        assert_eq!(inverse_factorial(5), 1.0 / 120.0);
        assert_eq!(inverse_factorial(16), 1.0 / 20_922_789_888_000.0);
    }
}
