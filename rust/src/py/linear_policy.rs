//! Bindings for the read-only LinUCB policy (`crate::policy::linear_policy`),
//! served by `dpbandits.serving_linear`.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use super::learners::{select_in_place, with_decision_set, Batch, SelectRows};
use crate::env::DecisionRows;
use crate::policy::linear_policy::{LinearPolicy, PolicyForm};

impl SelectRows for LinearPolicy {
    const CHECKS_FINITE: bool = true;

    fn select_rows(&mut self, set: DecisionRows<'_>) -> crate::Result<usize> {
        self.select(set)
    }
}

/// What `released` returns: the form's name, its matrix and its vector.
type Released<'py> = (&'static str, Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<f64>>);

/// A LinUCB policy frozen from released values; made by a LinUCB-type
/// engine's `policy()`.
#[pyclass(module = "dpbandits._core", name = "LinearPolicyEngine")]
pub struct PyLinearPolicy {
    pub(crate) inner: LinearPolicy,
}

engine_methods! {
    PyLinearPolicy { inner: LinearPolicy }, restore _restore_linear_policy, shared [state];

    #[getter]
    fn d(&self) -> usize {
        self.inner.d()
    }

    /// The confidence width beta of the policy's round.
    #[getter]
    fn beta(&self) -> f64 {
        self.inner.beta()
    }

    /// theta~ = V^{-1} u~.
    fn theta<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(super::errors::IntoPy::py_err(self.inner.theta())?.into_pyarray(py))
    }

    /// ("released", V, u~) or ("inverse", V^{-1}, theta): the released
    /// values the policy scores with.
    fn released<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Released<'py>> {
        let d = self.inner.d();
        let (kind, m, v) = match self.inner.form() {
            PolicyForm::Released { v, u } => ("released", v, u),
            PolicyForm::Inverse { inverse, theta } => ("inverse", inverse, theta),
        };
        Ok((kind, m.clone().into_pyarray(py).reshape([d, d])?, v.clone().into_pyarray(py)))
    }

    /// Index of the row of `actions` (k, d) with the largest UCB.
    fn select(&mut self, actions: PyReadonlyArrayDyn<'_, f64>) -> PyResult<usize> {
        let d = self.inner.d();
        select_in_place(&mut self.inner, &actions, d)
    }

    /// `select` on each set of `decision_sets` (n, k, d), the GIL released.
    fn select_many<'py>(
        &mut self,
        py: Python<'py>,
        decision_sets: PyReadonlyArrayDyn<'py, f64>,
    ) -> PyResult<Batch<'py, i64>> {
        let d = self.inner.d();
        super::learners::select_many(py, &mut self.inner, &decision_sets, d)
    }

    /// The UCB of every row of `actions`.
    fn scores<'py>(&mut self, py: Python<'py>, actions: PyReadonlyArrayDyn<'py, f64>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let d = self.inner.d();
        let inner = &mut self.inner;
        let scores = with_decision_set(&actions, d, |set| inner.scores(set).map(<[f64]>::to_vec))?;
        Ok(super::errors::IntoPy::py_err(scores)?.into_pyarray(py))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyLinearPolicy::register(m)
}
