//! Integer square roots, exactly: floor(sqrt(n)) for any n < 2^128. The
//! discrete Gaussian samplers take their scales from it
//! ([`super::discrete_gaussian`], [`super::cell_sampler`]).

/// floor(sqrt(m)) exactly for m < 2^64, where the conversion to `f64` is
/// one instruction. Not inlined: inlined into [`isqrt`], the compiler
/// merges it with the 128-bit path and calls the slow 128-bit
/// conversions for every m.
#[inline(never)]
fn isqrt_u64(m: u64) -> u64 {
    let mut r = (m as f64).sqrt() as u64;
    while r.checked_mul(r).is_none_or(|sq| sq > m) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= m) {
        r += 1;
    }
    r
}

/// floor(sqrt(n)) exactly.
pub fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    if let Ok(m) = u64::try_from(n) {
        return u128::from(isqrt_u64(m));
    }
    if n < 1 << 104 {
        // An estimate (within 1 of the root below 2^52), then exact
        // integer corrections: the result is checked, not trusted.
        let mut r = (n as f64).sqrt() as u128;
        while r * r > n {
            r -= 1;
        }
        while (r + 1) * (r + 1) <= n {
            r += 1;
        }
        return r;
    }
    // Newton's iteration from above, in integers.
    let mut x = 1u128 << (128 - n.leading_zeros()).div_ceil(2);
    loop {
        let y = x.midpoint(n / x);
        if y >= x {
            return x;
        }
        x = y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_square_root_is_exact() {
        for n in 0u128..5000 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "n = {n}");
        }
        for big in [(1u128 << 100) + 12345, u128::from(u64::MAX), (1 << 64) + 1, (1 << 104) - 1, u128::MAX / 3] {
            let r = isqrt(big);
            assert!(r * r <= big && (r + 1).checked_mul(r + 1).is_none_or(|sq| sq > big), "{big}");
        }
        for s in [(1u128 << 32) - 1, 1 << 32, 94_906_265, 3_037_000_499] {
            for n in [s * s - 1, s * s, s * s + 1] {
                let r = isqrt(n);
                assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
            }
        }
    }
}
