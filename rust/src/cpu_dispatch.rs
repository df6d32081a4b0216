//! Runtime CPU dispatch for the hot kernels: the one module allowed
//! `unsafe`, for the call Rust requires to enter a function compiled for
//! CPU features the baseline target lacks, and for unaligned vector loads
//! and stores from and into arrays or slices of exactly the vector's width.
//!
//! The crate is built for baseline x86-64 (SSE2) so that one wheel runs on
//! every x86-64 machine. Most machines a researcher or a server offers have
//! AVX2 and FMA, which double the lanes and fuse each multiply-add: the
//! UCB scoring kernels, the environments' normal and uniform samplers and
//! the Shariff–Sheffet set builder are compiled a second time for them
//! here and chosen once per process after `is_x86_feature_detected!`
//! confirms the CPU has both features (the soundness condition of the
//! `unsafe` calls below).
//!
//! The two builds of the scoring kernels agree to rounding, not bit for
//! bit (a fused multiply-add rounds once); the samplers' and the set
//! builder's are identical. Set `DPBANDITS_CPU_DISPATCH=baseline` before
//! the first round to force the baseline kernels everywhere, e.g. to
//! reproduce a run bit for bit across machines with different CPUs.
#![allow(unsafe_code)]

use std::sync::OnceLock;

use crate::env::ShariffSheffetEnv;
use crate::policy::ucb_scores::{ucb_scores_with, InverseForm, Separate, BASELINE_BLOCK};
use crate::rng::SimulationNormals;

/// Which build of the kernels this process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelBuild {
    /// Baseline x86-64 (or any non-x86 target).
    Baseline,
    /// Compiled with AVX2 and FMA; chosen only when the CPU has both.
    Avx2Fma,
}

/// The build chosen for this process (decided once, on first use).
pub fn kernel_build() -> KernelBuild {
    static BUILD: OnceLock<KernelBuild> = OnceLock::new();
    *BUILD.get_or_init(|| {
        if std::env::var("DPBANDITS_CPU_DISPATCH").is_ok_and(|v| v.eq_ignore_ascii_case("baseline")) {
            return KernelBuild::Baseline;
        }
        detect()
    })
}

#[cfg(target_arch = "x86_64")]
fn detect() -> KernelBuild {
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        KernelBuild::Avx2Fma
    } else {
        KernelBuild::Baseline
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> KernelBuild {
    KernelBuild::Baseline
}

/// See [`crate::policy::ucb_scores::ucb_scores`].
pub fn ucb_scores(inverse: InverseForm<'_>, theta: &[f64], beta: f64, features: &[f64], d: usize, out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if kernel_build() == KernelBuild::Avx2Fma {
        // SAFETY: `kernel_build` returns `Avx2Fma` only after
        // `is_x86_feature_detected!` found both avx2 and fma on this CPU,
        // which is the whole precondition of a `target_feature` function.
        unsafe { avx2_fma::ucb_scores(inverse, theta, beta, features, d, out) };
        return;
    }
    ucb_scores_with::<Separate, BASELINE_BLOCK>(inverse, theta, beta, features, d, out);
}

/// See [`SimulationNormals`]'s refill; identical values in both builds.
pub fn refill_normals(normals: &mut SimulationNormals) {
    #[cfg(target_arch = "x86_64")]
    if kernel_build() == KernelBuild::Avx2Fma {
        // SAFETY: as in `ucb_scores`: both features were detected.
        unsafe { avx2_fma::refill_normals(normals) };
        return;
    }
    normals.refill_with_this_build();
}

/// Steps the interleaved Xoshiro256++ lanes (see [`crate::rng::step_lanes`]);
/// the same words in both builds. Only the tests step the lanes alone (the
/// normals' refill calls the AVX2 body directly).
#[cfg(test)]
pub(crate) fn lane_words(lanes: &mut [[u64; 4]; 4], words: &mut [u64; crate::rng::NORMAL_BLOCK]) {
    #[cfg(target_arch = "x86_64")]
    if kernel_build() == KernelBuild::Avx2Fma {
        // SAFETY: as in `ucb_scores`: both features were detected.
        unsafe { avx2_fma::lane_words(lanes, words) };
        return;
    }
    crate::rng::step_lanes(lanes, words);
}

/// The lanes' next block of uniforms (see [`crate::rng::SimulationUniforms`]);
/// the same values in both builds.
pub fn lane_uniforms(lanes: &mut [[u64; 4]; 4], out: &mut [f64; crate::rng::NORMAL_BLOCK]) {
    #[cfg(target_arch = "x86_64")]
    if kernel_build() == KernelBuild::Avx2Fma {
        // SAFETY: as in `ucb_scores`: both features were detected.
        unsafe { avx2_fma::lane_uniforms(lanes, out) };
        return;
    }
    crate::rng::lane_uniforms_portable(lanes, out);
}

/// One decision set of the Shariff–Sheffet generator for a compile-time
/// `D` (0: any d); see [`ShariffSheffetEnv`]. The same values in both
/// builds (no fused arithmetic).
pub fn fill_shariff_sheffet_set<const D: usize>(env: &mut ShariffSheffetEnv, best: usize, features: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if kernel_build() == KernelBuild::Avx2Fma {
        // SAFETY: as in `ucb_scores`: both features were detected.
        unsafe { avx2_fma::fill_shariff_sheffet_set::<D>(env, best, features) };
        return;
    }
    env.fill_set_with_this_build::<D>(best, features);
}

/// The kernels compiled for AVX2 + FMA. Everything they call is
/// `#[inline(always)]`, so the whole kernel is generated with the features.
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use crate::env::shariff_sheffet::{DotTest, GroupLanes, Proposals, SetKernels, GROUP, PROPOSALS};
    use crate::policy::ucb_scores::{ucb_scores_with, Fused, InverseForm, WIDE_BLOCK};
    use crate::rng::SimulationNormals;

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn refill_normals(normals: &mut SimulationNormals) {
        normals.refill_with(
            |n, words| lane_words(n.lanes_mut(), words),
            |table, words, out| fast_path_gather(table, words, out),
        );
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn fill_shariff_sheffet_set<const D: usize>(
        env: &mut crate::env::ShariffSheffetEnv,
        best: usize,
        features: &mut [f64],
    ) {
        env.fill_set_with::<D, Avx2Kernels>(best, features);
    }

    /// The set builder's kernels in AVX2 (same operations, same order, same
    /// bits as the portable ones):
    /// - a group's rows with one register per coordinate (four rows),
    ///   stored through 4 x 4 transposes: the portable body is vectorised
    ///   by the compiler across coordinates instead, in half-width registers
    ///   with a shuffle per entry;
    /// - the band test four proposals at a time, the accepted ones packed
    ///   to the front of a register by a permutation looked up from the
    ///   test's mask (the portable loop spends a dozen scalar instructions
    ///   on each proposal).
    struct Avx2Kernels;

    // One register holds a group's lane of every row, or four proposals.
    const _: () = assert!(GROUP == 4 && PROPOSALS.is_multiple_of(4));

    impl SetKernels for Avx2Kernels {
        #[allow(clippy::inline_always)] // a wrapper: the call below is the kernel
        #[inline(always)]
        fn rows<const D: usize>(lanes: &GroupLanes<'_>, theta: &[f64; D], v: &[f64; D], out: &mut [f64]) {
            // SAFETY: `Avx2Kernels` is only used by `fill_shariff_sheffet_set`
            // above, which runs only where both features were detected.
            unsafe { rows_avx2::<D>(lanes, theta, v, out) }
        }

        #[allow(clippy::inline_always)] // a wrapper: the call below is the kernel
        #[inline(always)]
        fn keep_accepted(test: &DotTest, u: &Proposals, a: &Proposals, window: &mut Proposals) -> usize {
            // SAFETY: as in `rows`.
            unsafe { keep_accepted_avx2(test, u, a, window) }
        }
    }

    /// For each 4-bit mask, the 32-bit lane indices that move the f64 lanes
    /// whose bits are set to the front, in order (the rest: lane 0).
    const PACK: [[i32; 8]; 16] = {
        let mut table = [[0i32; 8]; 16];
        let mut mask = 0;
        while mask < 16 {
            let (mut front, mut lane) = (0usize, 0i32);
            while lane < 4 {
                if (mask >> lane) & 1 == 1 {
                    table[mask][2 * front] = 2 * lane;
                    table[mask][2 * front + 1] = 2 * lane + 1;
                    front += 1;
                }
                lane += 1;
            }
            mask += 1;
        }
        table
    };

    #[target_feature(enable = "avx2,fma")]
    fn keep_accepted_avx2(test: &DotTest, u: &Proposals, a: &Proposals, window: &mut Proposals) -> usize {
        use std::arch::x86_64::{
            _mm256_add_pd, _mm256_castpd_si256, _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_div_pd, _mm256_loadu_si256,
            _mm256_movemask_pd, _mm256_mul_pd, _mm256_permutevar8x32_epi32, _mm256_set1_pd, _mm256_sub_pd, _CMP_LT_OQ,
        };
        let (lo, width, top, one) =
            (_mm256_set1_pd(test.lo), _mm256_set1_pd(test.width), _mm256_set1_pd(test.top), _mm256_set1_pd(1.0));
        let mut j = 0;
        for q in 0..PROPOSALS / 4 {
            let (u, a) =
                (load(u[4 * q..4 * q + 4].try_into().expect("4")), load(a[4 * q..4 * q + 4].try_into().expect("4")));
            let t = _mm256_add_pd(lo, _mm256_mul_pd(width, u));
            // `DotTest::density`, lane-wise.
            let (mut base, mut density, mut e) =
                (_mm256_sub_pd(one, _mm256_mul_pd(t, t)), one, test.power.unsigned_abs());
            while e > 0 {
                if e & 1 == 1 {
                    density = _mm256_mul_pd(density, base);
                }
                base = _mm256_mul_pd(base, base);
                e >>= 1;
            }
            if test.power < 0 {
                density = _mm256_div_pd(one, density);
            }
            let accept = _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_mul_pd(_mm256_mul_pd(a, a), top), density);
            #[allow(clippy::cast_sign_loss)] // a 4-bit mask
            let mask = _mm256_movemask_pd(accept) as usize;
            // SAFETY: a row of `PACK` is 32 bytes, the width of the unaligned load.
            let order = unsafe { _mm256_loadu_si256(PACK[mask].as_ptr().cast()) };
            let packed = _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(t), order));
            // j <= 4 q: the four slots from j are inside the window.
            store(&mut window[j..j + 4], packed);
            j += mask.count_ones() as usize;
        }
        j
    }

    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::needless_range_loop)]
    fn rows_avx2<const D: usize>(lanes: &GroupLanes<'_>, theta: &[f64; D], v: &[f64; D], out: &mut [f64]) {
        use std::arch::x86_64::{
            _mm256_add_pd, _mm256_mul_pd, _mm256_permute2f128_pd, _mm256_set1_pd, _mm256_setzero_pd, _mm256_sub_pd,
            _mm256_unpackhi_pd, _mm256_unpacklo_pd,
        };
        let out = &mut out[..GROUP * D];
        let (t, factor, proj) = (load(lanes.t), load(lanes.factor), load(lanes.proj));
        let mut x = [_mm256_setzero_pd(); D];
        for i in 0..D {
            let wi = if i == 0 {
                _mm256_setzero_pd()
            } else {
                load(lanes.w[(i - 1) * GROUP..i * GROUP].try_into().expect("GROUP lanes"))
            };
            let direction = _mm256_sub_pd(wi, _mm256_mul_pd(proj, _mm256_set1_pd(v[i])));
            x[i] = _mm256_add_pd(_mm256_mul_pd(t, _mm256_set1_pd(theta[i])), _mm256_mul_pd(factor, direction));
        }
        let mut c = 0;
        while c + 4 <= D {
            let (lo01, hi01) = (_mm256_unpacklo_pd(x[c], x[c + 1]), _mm256_unpackhi_pd(x[c], x[c + 1]));
            let (lo23, hi23) = (_mm256_unpacklo_pd(x[c + 2], x[c + 3]), _mm256_unpackhi_pd(x[c + 2], x[c + 3]));
            let rows = [
                _mm256_permute2f128_pd::<0x20>(lo01, lo23),
                _mm256_permute2f128_pd::<0x20>(hi01, hi23),
                _mm256_permute2f128_pd::<0x31>(lo01, lo23),
                _mm256_permute2f128_pd::<0x31>(hi01, hi23),
            ];
            for (l, row) in rows.into_iter().enumerate() {
                store(&mut out[l * D + c..l * D + c + 4], row);
            }
            c += 4;
        }
        for i in c..D {
            let mut lanes = [0.0; GROUP];
            store(&mut lanes, x[i]);
            for l in 0..GROUP {
                out[l * D + i] = lanes[l];
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    fn load(values: &[f64; 4]) -> std::arch::x86_64::__m256d {
        // SAFETY: `values` is 32 bytes, the width of the unaligned load.
        unsafe { std::arch::x86_64::_mm256_loadu_pd(values.as_ptr()) }
    }

    #[target_feature(enable = "avx2,fma")]
    fn store(out: &mut [f64], values: std::arch::x86_64::__m256d) {
        assert_eq!(out.len(), 4, "a store of four lanes");
        // SAFETY: `out` is four f64, the width of the unaligned store.
        unsafe { std::arch::x86_64::_mm256_storeu_pd(out.as_mut_ptr(), values) };
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn lane_uniforms(lanes: &mut [[u64; 4]; 4], out: &mut [f64; crate::rng::NORMAL_BLOCK]) {
        use std::arch::x86_64::{
            _mm256_castsi256_pd, _mm256_or_si256, _mm256_set1_epi64x, _mm256_set1_pd, _mm256_srli_epi64,
            _mm256_storeu_pd, _mm256_sub_pd,
        };
        // `rng::open01_vectorisable` in registers, straight from each
        // step's words: no word buffer to clear, fill and read back.
        #[allow(clippy::cast_possible_wrap)] // the bits, reinterpreted
        let exponent = _mm256_set1_epi64x(crate::rng::UNIT_EXPONENT as i64);
        let offset = _mm256_set1_pd(crate::rng::ONE_MINUS_HALF_ULP);
        let mut chunks = out.chunks_exact_mut(4);
        lane_steps::<{ crate::rng::PLUS }>(lanes, |word| {
            let u =
                _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64::<12>(word), exponent)), offset);
            let chunk = chunks.next().expect("one chunk per step");
            // SAFETY: `chunk` is exactly four f64, the width of the store.
            unsafe { _mm256_storeu_pd(chunk.as_mut_ptr(), u) };
        });
    }

    /// The four Xoshiro256++ lanes stepped together, one 256-bit register
    /// per state word (the compiler keeps the portable version scalar:
    /// AVX2 has no 64-bit rotate). Same words, same order as
    /// `SimulationNormals::next_words`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn lane_words(lanes: &mut [[u64; 4]; 4], words: &mut [u64; crate::rng::NORMAL_BLOCK]) {
        let mut chunks = words.chunks_exact_mut(4);
        lane_steps::<{ crate::rng::PLUS_PLUS }>(lanes, |word| {
            chunks.next().expect("one chunk per step").copy_from_slice(&from_vector(word));
        });
    }

    /// `NORMAL_BLOCK / 4` steps of the lanes, each step's four output words
    /// (by the output function `SCRAMBLER`, see `rng::step_lanes_with`)
    /// handed to `emit` as one register.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn lane_steps<const SCRAMBLER: bool>(lanes: &mut [[u64; 4]; 4], mut emit: impl FnMut(std::arch::x86_64::__m256i)) {
        use std::arch::x86_64::{
            __m256i, _mm256_add_epi64, _mm256_or_si256, _mm256_slli_epi64, _mm256_srli_epi64, _mm256_xor_si256,
        };
        let [mut s0, mut s1, mut s2, mut s3] = lanes.map(|w| to_vector(&w));
        for _ in 0..crate::rng::NORMAL_BLOCK / 4 {
            let sum = _mm256_add_epi64(s0, s3);
            if SCRAMBLER == crate::rng::PLUS_PLUS {
                let rotated = _mm256_or_si256(_mm256_slli_epi64::<23>(sum), _mm256_srli_epi64::<41>(sum));
                emit(_mm256_add_epi64(rotated, s0));
            } else {
                emit(sum);
            }
            let t: __m256i = _mm256_slli_epi64::<17>(s1);
            s2 = _mm256_xor_si256(s2, s0);
            s3 = _mm256_xor_si256(s3, s1);
            s1 = _mm256_xor_si256(s1, s2);
            s0 = _mm256_xor_si256(s0, s3);
            s2 = _mm256_xor_si256(s2, t);
            s3 = _mm256_or_si256(_mm256_slli_epi64::<45>(s3), _mm256_srli_epi64::<19>(s3));
        }
        *lanes = [from_vector(s0), from_vector(s1), from_vector(s2), from_vector(s3)];
    }

    #[target_feature(enable = "avx2,fma")]
    fn to_vector(w: &[u64; 4]) -> std::arch::x86_64::__m256i {
        // Bit-for-bit reinterpretation of each word.
        #[allow(clippy::cast_possible_wrap)]
        std::arch::x86_64::_mm256_set_epi64x(w[3] as i64, w[2] as i64, w[1] as i64, w[0] as i64)
    }

    #[target_feature(enable = "avx2,fma")]
    fn from_vector(v: std::arch::x86_64::__m256i) -> [u64; 4] {
        let mut out = [0u64; 4];
        // SAFETY: `out` is 32 bytes, the width of the unaligned store.
        unsafe { std::arch::x86_64::_mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
        out
    }

    /// The ziggurat's fast path four words at a time: the same operations in the same order as the
    /// portable path (no fused arithmetic), so the same bits.
    #[target_feature(enable = "avx2,fma")]
    fn fast_path_gather(x_table: &[f64; 257], words: &[u64], out: &mut [f64]) -> u64 {
        use std::arch::x86_64::{
            _mm256_and_pd, _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_movemask_pd, _mm256_mul_pd, _mm256_or_si256,
            _mm256_set1_epi64x, _mm256_set1_pd, _mm256_set_pd, _mm256_srli_epi64, _mm256_storeu_pd, _mm256_sub_pd,
            _CMP_GE_OQ,
        };
        assert!(words.len() == 64 && out.len() == 64, "the fast path takes 64 words");
        let exponent = _mm256_set1_epi64x(0x3FF0_0000_0000_0000);
        let magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
        let (two, three) = (_mm256_set1_pd(2.0), _mm256_set1_pd(3.0));
        let mut mask = 0u64;
        for (c, (w, z)) in words.chunks_exact(4).zip(out.chunks_exact_mut(4)).enumerate() {
            let w = to_vector(w.try_into().expect("4 words"));
            // Scalar table loads: on AMD Zen vgatherqpd is microcoded and
            // slower than four loads (measured: the gather made the block
            // no faster than the portable path).
            let i = [0, 1, 2, 3].map(|j| (words[4 * c + j] & 0xff) as usize);
            let x_i = _mm256_set_pd(x_table[i[3]], x_table[i[2]], x_table[i[1]], x_table[i[0]]);
            let x_next = _mm256_set_pd(x_table[i[3] + 1], x_table[i[2] + 1], x_table[i[1] + 1], x_table[i[0] + 1]);
            // symmetric01: the top 52 bits as a float in [1, 2), times 2, minus 3.
            let unit = _mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64::<12>(w), exponent));
            let x = _mm256_mul_pd(_mm256_sub_pd(_mm256_mul_pd(unit, two), three), x_i);
            let outside = _mm256_cmp_pd::<_CMP_GE_OQ>(_mm256_and_pd(x, magnitude), x_next);
            // SAFETY: `z` is a chunk of exactly four f64.
            unsafe { _mm256_storeu_pd(z.as_mut_ptr(), x) };
            mask |= u64::from(_mm256_movemask_pd(outside) as u32) << (4 * c);
        }
        mask
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn ucb_scores(
        inverse: InverseForm<'_>,
        theta: &[f64],
        beta: f64,
        features: &[f64],
        d: usize,
        out: &mut [f64],
    ) {
        ucb_scores_with::<Fused, WIDE_BLOCK>(inverse, theta, beta, features, d, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ucb_scores::{Fused, WIDE_BLOCK};

    /// Both builds score the same set to rounding at every kernel size and
    /// form (the dispatched one is whichever this CPU gets).
    #[test]
    fn both_builds_agree_to_rounding() {
        for d in [3usize, 5, 16, 17, 40, 64] {
            let mut v = vec![0.0; d * d];
            for i in 0..d {
                for j in 0..d {
                    v[i * d + j] = if i == j { 2.0 + i as f64 * 0.1 } else { 0.3 / (1.0 + (i + j) as f64) };
                }
            }
            let chol = crate::linalg::Cholesky::factor(&v, d).unwrap();
            let inv_diag: Vec<f64> = (0..d).map(|i| 1.0 / chol.lower()[i * d + i]).collect();
            let vinv = chol.inverse();
            let theta: Vec<f64> = (0..d).map(|i| 0.05 * i as f64 - 0.3).collect();
            let k = 37;
            let feats: Vec<f64> = (0..k * d).map(|i| ((i * 7 + 2) % 17) as f64 / 17.0 - 0.45).collect();
            for form in
                [InverseForm::Cholesky { lower: chol.lower(), inv_diag: &inv_diag }, InverseForm::Symmetric(&vinv)]
            {
                let mut base = vec![0.0; 2 * k];
                let mut fused = vec![0.0; 2 * k];
                let mut dispatched = vec![0.0; 2 * k];
                ucb_scores_with::<Separate, BASELINE_BLOCK>(form, &theta, 1.3, &feats, d, &mut base);
                // Fused through software fma on a CPU without it: slow, exact.
                ucb_scores_with::<Fused, WIDE_BLOCK>(form, &theta, 1.3, &feats, d, &mut fused);
                ucb_scores(form, &theta, 1.3, &feats, d, &mut dispatched);
                for i in 0..k {
                    let scale = base[k + i].abs().max(1.0);
                    assert!((base[i] - fused[i]).abs() < 1e-12 * scale, "d {d}: {} vs {}", base[i], fused[i]);
                    assert!((base[i] - dispatched[i]).abs() < 1e-12 * scale, "d {d}");
                }
            }
        }
    }
}

#[cfg(test)]
mod normal_tests {
    use crate::rng::SeedSequence;

    /// The dispatched sampler (AVX2 where available) and the baseline body
    /// give the same normals bit for bit.
    #[test]
    fn both_builds_draw_identical_normals() {
        let seeds = SeedSequence::from_seed(11);
        let mut a = seeds.simulation_normals("environment/test");
        let mut b = a.clone();
        let mut x = vec![0.0; 5000];
        a.fill(&mut x);
        let mut y = Vec::with_capacity(5000);
        while y.len() < 5000 {
            b.refill_with_this_build();
            let n = (5000 - y.len()).min(crate::rng::NORMAL_BLOCK);
            y.extend_from_slice(b.take(n));
        }
        assert_eq!(
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}
