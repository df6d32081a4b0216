//! Runtime CPU dispatch for the hot kernels: the one module allowed
//! `unsafe`, for the single call pattern Rust requires to enter a function
//! compiled for CPU features the baseline target lacks.
//!
//! The crate is built for baseline x86-64 (SSE2) so that one wheel runs on
//! every x86-64 machine. Most machines a researcher or a server offers have
//! AVX2 and FMA, which double the lanes and fuse each multiply-add: the
//! UCB scoring kernels and the environments' normal sampler are compiled a second time for them here and chosen
//! once per process after `is_x86_feature_detected!` confirms the CPU has
//! both features (the soundness condition of the `unsafe` calls below).
//!
//! The two builds of the scoring kernels agree to rounding, not bit for
//! bit (a fused multiply-add rounds once); the normal sampler's are
//! identical. Set `DPBANDITS_CPU_DISPATCH=baseline` before the first
//! round to force the baseline kernels everywhere, e.g. to reproduce a run
//! bit for bit across machines with different CPUs.
#![allow(unsafe_code)]

use std::sync::OnceLock;

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

/// The kernels compiled for AVX2 + FMA. Everything they call is
/// `#[inline(always)]`, so the whole kernel is generated with the features.
#[cfg(target_arch = "x86_64")]
mod avx2_fma {
    use crate::policy::ucb_scores::{ucb_scores_with, Fused, InverseForm, WIDE_BLOCK};
    use crate::rng::SimulationNormals;

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn refill_normals(normals: &mut SimulationNormals) {
        normals.refill_with_this_build();
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
