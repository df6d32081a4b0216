use rand_core::RngCore;

use super::*;
use crate::rng::SeedSequence;

#[test]
fn uniform_below_covers_its_range_evenly() {
    let mut rng = SeedSequence::from_seed(1).stream("test");
    let mut counts = [0u32; 6];
    let n = 60_000;
    for _ in 0..n {
        counts[uniform_below(&mut rng, 6) as usize] += 1;
    }
    // Binomial(60000, 1/6): sd ~ 91; 5 sd bound.
    for c in counts {
        assert!((f64::from(c) - 10_000.0).abs() < 460.0, "{counts:?}");
    }
}

/// A generator replaying fixed words (then panicking): exercises the
/// lazy digit extension at chosen boundaries.
struct Words(Vec<u64>, usize);

impl RngCore for Words {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.1 += 1;
        self.0[self.1 - 1]
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        rand_core::impls::fill_bytes_via_next(self, dest);
    }
}

#[test]
fn lazy_digits_decide_boundary_cases_exactly() {
    // floor(t T) against exact arithmetic on two-word T (later words 0).
    let third = 0x5555_5555_5555_5555u64; // 3 * third = 2^64 - 1: ambiguous for t = 3
    for (t, w0, w1) in [
        (3u64, third, 0u64),
        (3, third, u64::MAX / 3),
        (3, third, u64::MAX / 3 + 1),
        (3, third, u64::MAX),
        (1 << 20, u64::MAX, u64::MAX),
        (1 << 20, 1 << 44, 0),
        (1000, 0x0041_8937_4bc6_a7f0, 0xffff_ffff_ffff_f000),
    ] {
        let exact = ((u128::from(t) * u128::from(w0) + ((u128::from(t) * u128::from(w1)) >> 64)) >> 64) as u64;
        let mut words = [w0, w1, 0, 0, 0].into_iter();
        let got = floor_mul_words(t, &mut || words.next().unwrap());
        assert_eq!(got, exact, "t = {t}, words {w0:#x} {w1:#x}");
    }
    // u < 1/3 with head floor(2^12 / 3) = 1365: the tail against
    // 1/3 = 0.010101...b.
    let alt = 0x5555_5555_5555_5555u64;
    for (tail, below) in [([alt, 0], true), ([alt, u64::MAX], false), ([alt - 1, 0], true), ([alt + 1, 0], false)] {
        let mut rng = Words(tail.to_vec(), 0);
        let mut u = LazyUniform::new(1365);
        assert_eq!(lazy_below_ratio(&mut rng, &mut u, 1, 3), below, "{tail:x?}");
    }
    // Heads tie: the first differing tail word decides.
    let mut rng = Words(vec![7, 7, 1, 2], 0);
    let (mut a, mut b) = (LazyUniform::new(5), LazyUniform::new(5));
    assert!(lazy_less(&mut rng, &mut a, &mut b));
    assert_eq!((a.tail.as_slice(), b.tail.as_slice()), ([7, 1].as_slice(), [7, 2].as_slice()));
}
