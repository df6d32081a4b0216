//! Bindings for the local / shuffle LinUCB engine
//! (`crate::policy::linucb_trust`): its own methods; the shared learner
//! surface comes from `engine_methods!` (see `py/mod.rs`).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use super::arrays::{expect_shape, row_major};
use super::errors::IntoPy;
use super::mechanisms::seeds;
use super::noise::Noise;
use crate::policy::elimination::ShuffleSumCoefficients;
use crate::policy::linucb_trust::report_len;
use crate::policy::{BoundsPolicy, InputBounds, ReportPrivatizer, TrustLinUcb, TrustLinUcbConfig, TrustRadius};

/// LinUCB on released sums of users' reports (local / shuffle model);
/// built by `dpbandits.learners.linucb_trust`.
#[pyclass(module = "dpbandits._core", name = "TrustLinUcbEngine")]
pub struct PyTrustLinUcb {
    inner: TrustLinUcb,
}

fn to_array2(py: Python<'_>, data: Vec<f64>, cols: usize) -> PyResult<Bound<'_, PyArray2<f64>>> {
    let rows = data.len().checked_div(cols).unwrap_or(0);
    numpy::ndarray::Array2::from_shape_vec((rows, cols), data)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

engine_methods! {
    PyTrustLinUcb { inner: TrustLinUcb }, restore _restore_trust_linucb, shared [contextual, ucb, learner, secure, state],
    getters [batches: u64, psd_failures: u64];

    #[new]
    #[pyo3(signature = (d, horizon, *, batch, regularizer, upsilon_rate, noise_sd, log_offset, s, gamma_rate, l=1.0, b_tilde=1.0,
                        clip=true, seed=None, noise=None, shuffle_sum=None, range=1.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        d: usize,
        horizon: u64,
        batch: u64,
        regularizer: f64,
        upsilon_rate: f64,
        noise_sd: f64,
        log_offset: f64,
        s: f64,
        gamma_rate: f64,
        l: f64,
        b_tilde: f64,
        clip: bool,
        seed: Option<u64>,
        noise: Option<Noise>,
        shuffle_sum: Option<[f64; 4]>,
        range: f64,
    ) -> PyResult<Self> {
        let privatizer = match (noise, shuffle_sum) {
            (None, None) => ReportPrivatizer::Exact,
            (Some(noise), None) => ReportPrivatizer::Noisy { noise: noise.0 },
            (None, Some([g_sqrt_n, g_min, bits, ones])) => {
                ReportPrivatizer::BitSum { coefficients: ShuffleSumCoefficients { g_sqrt_n, g_min, bits, ones }, range }
            }
            (Some(_), Some(_)) => {
                return Err(crate::error::Error::invalid("noise", "give noise or shuffle_sum, not both"))
                    .py_err()
            }
        };
        let config = TrustLinUcbConfig {
            d,
            horizon,
            batch,
            privatizer,
            regularizer,
            upsilon_rate,
            radius: TrustRadius { noise_sd, log_offset, s, gamma_rate },
            bounds: InputBounds { l, b_tilde, policy: if clip { BoundsPolicy::Clip } else { BoundsPolicy::Error } },
        };
        Ok(PyTrustLinUcb { inner: TrustLinUcb::new(config, &seeds(seed)?).py_err()? })
    }

    /// The policy the next selection follows, from released sums only.
    fn policy(&mut self) -> PyResult<super::linear_policy::PyLinearPolicy> {
        Ok(super::linear_policy::PyLinearPolicy { inner: self.inner.policy().py_err()? })
    }

    /// (theta~, beta) of the coming round, from released sums only.
    fn estimates<'py>(&mut self, py: Python<'py>) -> (Bound<'py, PyArray1<f64>>, f64) {
        let (theta, beta) = self.inner.estimates();
        (theta.into_pyarray(py), beta)
    }

    /// The released sum of reports S_k (m coordinates).
    fn released<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.released().to_vec().into_pyarray(py)
    }

    /// `count` runs of one user's randomizer on (x, reward): (count, m).
    fn _report_runs<'py>(
        &mut self,
        py: Python<'py>,
        x: PyReadonlyArrayDyn<'py, f64>,
        reward: f64,
        count: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (shape, data) = row_major(&x);
        expect_shape("x", &shape, &[self.inner.config().d])?;
        let inner = &mut self.inner;
        let out = py.detach(|| inner.report_runs(&data, reward, count)).py_err()?;
        to_array2(py, out, report_len(self.inner.config().d))
    }

    /// `count` runs of a whole batch through randomizer, shuffler and
    /// analyzer: the released sums, (count, m).
    fn _batch_release_runs<'py>(
        &mut self,
        py: Python<'py>,
        xs: PyReadonlyArrayDyn<'py, f64>,
        rewards: PyReadonlyArrayDyn<'py, f64>,
        count: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (_, xdata) = row_major(&xs);
        let (_, ydata) = row_major(&rewards);
        let inner = &mut self.inner;
        let out = py.detach(|| inner.batch_release_runs(&xdata, &ydata, count)).py_err()?;
        to_array2(py, out, report_len(self.inner.config().d))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyTrustLinUcb::register(m)
}
