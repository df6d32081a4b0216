//! Runtime CPU dispatch: which build of the hot kernels this process runs,
//! and the one module allowed `unsafe`, for the feature-checked call Rust
//! requires to enter a function compiled for CPU features the baseline
//! target lacks, and for unaligned vector loads and stores of exactly the
//! vector's width.
//!
//! The crate is built for baseline x86-64 (SSE2) so that one wheel runs on
//! every x86-64 machine. Most machines a researcher or a server offers have
//! AVX2 and FMA, which double the lanes and fuse each multiply-add. A
//! kernel that has a second build keeps it in its own file, in a module
//! compiled with `#[target_feature(enable = "avx2,fma")]`, and enters it
//! through [`on_avx2_fma!`]; this module knows no kernel (a leaf: adding a
//! kernel touches only the kernel's file). The build is chosen once per
//! process after `is_x86_feature_detected!` confirms the CPU has both
//! features (the soundness condition of the `unsafe` call in the macro).
//!
//! Kernels with a second build today: the UCB scoring kernels
//! (`policy::ucb_scores`, which agree with the baseline to rounding: a
//! fused multiply-add rounds once), the environments' normal and uniform
//! samplers (`rng`) and the Shariff–Sheffet set builder
//! (`env::shariff_sheffet`), both identical bit for bit. Set
//! `DPBANDITS_CPU_DISPATCH=baseline` before the first round to force the
//! baseline kernels everywhere, e.g. to reproduce a run bit for bit across
//! machines with different CPUs.
#![allow(unsafe_code)]

use std::sync::OnceLock;

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

/// `on_avx2_fma!(call)`: when this process runs the AVX2 + FMA build,
/// evaluates `call` and returns its value from the enclosing function;
/// otherwise does nothing (the code after it is the baseline build).
///
/// `call` must be a call of a function declared
/// `#[target_feature(enable = "avx2,fma")]` whose only precondition is
/// that the CPU has those features, with plain arguments: that is the
/// whole safety argument of the `unsafe` block this expands to.
macro_rules! on_avx2_fma {
    ($call:expr) => {
        #[cfg(target_arch = "x86_64")]
        if $crate::cpu_dispatch::kernel_build() == $crate::cpu_dispatch::KernelBuild::Avx2Fma {
            // SAFETY: `kernel_build` returns `Avx2Fma` only after
            // `is_x86_feature_detected!` found both avx2 and fma on this
            // CPU, which is the whole precondition of the target-feature
            // function called here (see the macro's documentation).
            #[allow(unsafe_code)]
            let value = unsafe { $call };
            return value;
        }
    };
}
pub(crate) use on_avx2_fma;

/// `within_avx2_fma!(call)`: calls a `#[target_feature(enable =
/// "avx2,fma")]` function from code that only runs inside such a function
/// (a trait method of a kernel's AVX2 build, which Rust does not let carry
/// the attribute itself). Use it only in code reached solely from a
/// function entered through [`on_avx2_fma!`].
macro_rules! within_avx2_fma {
    ($call:expr) => {{
        debug_assert_eq!($crate::cpu_dispatch::kernel_build(), $crate::cpu_dispatch::KernelBuild::Avx2Fma);
        // SAFETY: the caller runs only inside the AVX2 + FMA build, which
        // `on_avx2_fma!` enters only after both features were detected.
        #[allow(unsafe_code)]
        let value = unsafe { $call };
        value
    }};
}
pub(crate) use within_avx2_fma;

/// Unaligned loads and stores of exactly one 256-bit vector, safe because
/// the references have exactly the vector's width. For the kernels' AVX2
/// builds (callable without `unsafe` from their target-feature functions).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx {
    use std::arch::x86_64::{
        __m256d, __m256i, _mm256_loadu_pd, _mm256_loadu_si256, _mm256_storeu_pd, _mm256_storeu_si256,
    };

    /// Asks the CPU to bring the cache lines of `values` into its
    /// second-level cache ahead of their use: a hint, with no effect on
    /// any result (used by kernels that stream a large input in an order
    /// the hardware prefetchers do not follow).
    pub(crate) fn prefetch(values: &[f64]) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        // One address per 64-byte line, and the last entry's.
        let (start, n) = (values.as_ptr(), values.len());
        for i in (0..n).step_by(8).chain(n.checked_sub(1)) {
            // SAFETY: a prefetch reads and writes nothing (it cannot fault);
            // the address is that of entry i < n of a live slice; SSE,
            // which it needs, is part of baseline x86-64.
            unsafe { _mm_prefetch::<_MM_HINT_T1>(start.add(i).cast()) };
        }
    }

    /// Four f64 into a register.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn load_pd(values: &[f64; 4]) -> __m256d {
        // SAFETY: `values` is 32 bytes, the width of the unaligned load.
        unsafe { _mm256_loadu_pd(values.as_ptr()) }
    }

    /// A register into four f64 (`out` must hold exactly four).
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn store_pd(out: &mut [f64], values: __m256d) {
        assert_eq!(out.len(), 4, "a store of four lanes");
        // SAFETY: `out` is four f64, the width of the unaligned store.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), values) };
    }

    /// Eight i32 into a register.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn load_epi32(values: &[i32; 8]) -> __m256i {
        // SAFETY: `values` is 32 bytes, the width of the unaligned load.
        unsafe { _mm256_loadu_si256(values.as_ptr().cast()) }
    }

    /// Four u64 into a register, bit for bit.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn load_epu64(values: &[u64; 4]) -> __m256i {
        // SAFETY: `values` is 32 bytes, the width of the unaligned load.
        unsafe { _mm256_loadu_si256(values.as_ptr().cast()) }
    }

    /// A register into four u64, bit for bit.
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn store_epu64(v: __m256i) -> [u64; 4] {
        let mut out = [0u64; 4];
        // SAFETY: `out` is 32 bytes, the width of the unaligned store.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
        out
    }
}
