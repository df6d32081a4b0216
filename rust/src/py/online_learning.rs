//! Bindings for the online-learning engines of Agarwal & Singh 2017 and
//! their loss-sequence environments.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArrayDyn};
use pyo3::prelude::*;

use super::arrays::{expect_shape, row_major, rows};
use super::errors::{unknown, IntoPy};
use super::mechanisms::seeds;
use super::noise::Noise;
use super::sim::PyEnvironmentFactory;
use crate::counter::FactorSpec;
use crate::env::{DecisionSet, Environment, LossEnv, LossEnvConfig, LossSequence};
use crate::error::Error;
use crate::noise::NoiseSpec;
use crate::policy::{
    Exp2, Exp2Config, FollowTheLeader, FollowTheLeaderConfig, Geometry, LeaderRule, Scrible, ScribleConfig,
};

fn geometry(name: &str) -> PyResult<Geometry> {
    match name {
        "simplex" => Ok(Geometry::Simplex),
        "ball" => Ok(Geometry::Ball),
        "cube" => Ok(Geometry::Cube),
        _ => unknown("geometry", "'simplex', 'ball' or 'cube'", name),
    }
}

fn vector(name: &str, values: &PyReadonlyArrayDyn<'_, f64>, n: usize) -> PyResult<Vec<f64>> {
    let (shape, data) = row_major(values);
    expect_shape(name, &shape, &[n])?;
    Ok(data.into_owned())
}

/// Private FTRL / FTPL engine (Agarwal & Singh Alg. 1 / Alg. 3).
#[pyclass(module = "dpbandits._core", name = "FollowTheLeaderEngine")]
pub struct PyFollowTheLeader {
    pub(crate) inner: FollowTheLeader,
}

engine_methods! {
    PyFollowTheLeader { inner: FollowTheLeader }, restore _restore_follow_the_leader, shared [learner, secure, state],
    getters [noise_terms: u32];

    #[new]
    #[pyo3(signature = (n, horizon, geometry, noise, *, eta=None, clip=true, seed=None, counter=None, theta=Vec::new(), omega=Vec::new()))]
    fn new(
        n: usize,
        horizon: u64,
        geometry: &str,
        noise: Noise,
        eta: Option<f64>,
        clip: bool,
        seed: Option<u64>,
        counter: Option<&str>,
        theta: Vec<f64>,
        omega: Vec<f64>,
    ) -> PyResult<Self> {
        // A counter other than the padded tree (see `dpbandits.privacy.factorization`).
        let counter = match counter {
            None | Some("binary") => None,
            Some(kind) => Some(FactorSpec::new(&super::mechanisms::factorization(kind, theta, omega)?).py_err()?),
        };
        let rule = eta.map_or(LeaderRule::Perturbed, |eta| LeaderRule::Regularized { eta });
        let config = FollowTheLeaderConfig {
            n,
            horizon,
            geometry: self::geometry(geometry)?,
            rule,
            noise: noise.0,
            clip,
            counter,
        };
        Ok(PyFollowTheLeader { inner: FollowTheLeader::new(config, &seeds(seed)?).py_err()? })
    }

    /// An index drawn from the decision x_t (simplex only).
    fn select(&mut self) -> PyResult<usize> {
        self.inner.sample_index().py_err()
    }

    /// The decision x_t for the coming round.
    fn decision<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.decision().to_vec().into_pyarray(py)
    }

    /// The release L~_{t} the decision is computed from.
    fn released<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.released().to_vec().into_pyarray(py)
    }

    /// Records the round's loss vector; True when it is the first the
    /// bounds policy clipped.
    fn observe(&mut self, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<bool> {
        let l = vector("losses", &losses, self.inner.config().n)?;
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(&l).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }

    /// `observe` of each row of `losses` (shape (rounds, n)), in order, the
    /// GIL released: (rows recorded, the error that stopped the batch or None).
    fn observe_many(&mut self, py: Python<'_>, losses: PyReadonlyArrayDyn<'_, f64>) -> PyResult<(usize, Option<Py<PyAny>>)> {
        let n = self.inner.config().n;
        let (_, data) = rows("losses", &losses, &[n])?;
        let inner = &mut self.inner;
        let mut done = 0;
        let failed = py.detach(|| {
            for row in data.chunks_exact(n) {
                if let Err(e) = inner.observe(row) {
                    return Some(e);
                }
                done += 1;
            }
            None
        });
        Ok((done, failed.map(|e| super::errors::to_py(e).into_value(py).into_any())))
    }
}

/// EXP2 with exploration behind the private bandit reduction (Alg. 4, Alg. 5).
#[pyclass(module = "dpbandits._core", name = "Exp2Engine")]
pub struct PyExp2 {
    pub(crate) inner: Exp2,
}

engine_methods! {
    PyExp2 { inner: Exp2 }, restore _restore_exp2, shared [learner, secure, state];

    #[new]
    #[pyo3(signature = (n, horizon, eta, gamma, *, noise=Noise(NoiseSpec::Zero), clip=true, seed=None))]
    fn new(n: usize, horizon: u64, eta: f64, gamma: f64, noise: Noise, clip: bool, seed: Option<u64>) -> PyResult<Self> {
        let config = Exp2Config { n, horizon, eta, gamma, noise: noise.0, clip };
        Ok(PyExp2 { inner: Exp2::new(config, &seeds(seed)?).py_err()? })
    }

    /// Draws i_t ~ p_t.
    fn select(&mut self) -> usize {
        self.inner.sample_index()
    }

    /// p_t = (1 - gamma) q_t + gamma / N.
    fn probabilities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.probabilities().to_vec().into_pyarray(py)
    }

    /// Records the loss of arm `index`; True when it is the first the
    /// bounds policy clipped.
    fn observe(&mut self, index: usize, loss: f64) -> PyResult<bool> {
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(index, loss).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }

    /// Records the loss of arm `index` drawn with `probability` from an
    /// earlier released p (a served decision); True as `observe`.
    fn observe_served(&mut self, index: usize, loss: f64, probability: f64) -> PyResult<bool> {
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe_served(index, loss, probability).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }
}

/// SCRiBLe over the unit ball behind the private bandit reduction (Thm 4.5).
#[pyclass(module = "dpbandits._core", name = "ScribleEngine")]
pub struct PyScrible {
    pub(crate) inner: Scrible,
}

engine_methods! {
    PyScrible { inner: Scrible }, restore _restore_scrible, shared [learner, seeded, state];

    #[new]
    #[pyo3(signature = (n, horizon, eta, *, noise=Noise(NoiseSpec::Zero), clip=true, seed=None))]
    fn new(n: usize, horizon: u64, eta: f64, noise: Noise, clip: bool, seed: Option<u64>) -> PyResult<Self> {
        let config = ScribleConfig { n, horizon, eta, noise: noise.0, clip };
        Ok(PyScrible { inner: Scrible::new(config, &seeds(seed)?).py_err()? })
    }

    /// The point y_t to play this round.
    fn select<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.select().to_vec().into_pyarray(py)
    }

    /// The iterate x_t.
    fn iterate<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.iterate().to_vec().into_pyarray(py)
    }

    /// Records the loss <l_t, y_t> of the selected point; True when it is
    /// the first the bounds policy clipped.
    fn observe(&mut self, loss: f64) -> PyResult<bool> {
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe(loss).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }

    /// Records the loss <l, y> of a point `y` drawn around the earlier
    /// iterate `iterate` (a served decision); True as `observe`.
    fn observe_served(
        &mut self,
        y: PyReadonlyArrayDyn<'_, f64>,
        iterate: PyReadonlyArrayDyn<'_, f64>,
        loss: f64,
    ) -> PyResult<bool> {
        let n = self.inner.config().n;
        let (y, x) = (vector("y", &y, n)?, vector("iterate", &iterate, n)?);
        let fresh = self.inner.clipped_rewards() == 0;
        self.inner.observe_served(&y, &x, loss).py_err()?;
        Ok(fresh && self.inner.clipped_rewards() > 0)
    }
}

/// A loss-sequence environment, round by round from Python.
#[pyclass(module = "dpbandits._core", name = "LossEnvEngine")]
pub struct PyLossEnv {
    config: LossEnvConfig,
    env: LossEnv,
    set: DecisionSet,
}

impl PyLossEnv {
    fn build(sequence: LossSequence, geometry: &str, seed: Option<u64>) -> PyResult<Self> {
        let geometry = self::geometry(geometry)?;
        let env = LossEnv::with_geometry(sequence.clone(), geometry, &seeds(seed)?).py_err()?;
        Ok(PyLossEnv { config: LossEnvConfig { sequence, geometry }, env, set: DecisionSet::default() })
    }
}

#[pymethods]
impl PyLossEnv {
    /// Bernoulli(means[i]) losses, mapped into the geometry's loss set.
    #[staticmethod]
    #[pyo3(signature = (means, seed=None, geometry="simplex"))]
    fn stochastic(means: Vec<f64>, seed: Option<u64>, geometry: &str) -> PyResult<Self> {
        Self::build(LossSequence::Stochastic { means }, geometry, seed)
    }

    /// The switching-best-expert sequence, mapped into the geometry's loss set.
    #[staticmethod]
    #[pyo3(signature = (n, first_phase, seed=None, geometry="simplex"))]
    fn switching_best(n: usize, first_phase: u64, seed: Option<u64>, geometry: &str) -> PyResult<Self> {
        Self::build(LossSequence::SwitchingBest { n, first_phase }, geometry, seed)
    }

    /// The adaptive adversary charging the expert played in the previous round.
    #[staticmethod]
    #[pyo3(signature = (n, seed=None))]
    fn chase_played(n: usize, seed: Option<u64>) -> PyResult<Self> {
        Self::build(LossSequence::ChasePlayed { n }, "simplex", seed)
    }

    /// Tells an adaptive adversary the expert played this round (others ignore it).
    fn record_play(&mut self, index: usize) -> PyResult<()> {
        self.env.observe_plays(&[index]).py_err()
    }

    /// User-supplied (rounds, n) losses, each row in the geometry's loss set.
    #[staticmethod]
    #[pyo3(signature = (losses, seed=None, geometry="simplex"))]
    fn from_array(losses: PyReadonlyArrayDyn<'_, f64>, seed: Option<u64>, geometry: &str) -> PyResult<Self> {
        let (shape, data) = row_major(&losses);
        let [_, n] = shape[..] else {
            return Err(Error::invalid("losses", format!("expected a 2-d (rounds, n) array, got shape {shape:?}")))
                .py_err();
        };
        Self::build(LossSequence::Array { n, losses: data.into_owned() }, geometry, seed)
    }

    /// center + U(-spread, spread)^N losses, mapped into the geometry's loss set.
    #[staticmethod]
    #[pyo3(signature = (center, spread, seed=None, geometry="ball"))]
    fn uniform(center: Vec<f64>, spread: f64, seed: Option<u64>, geometry: &str) -> PyResult<Self> {
        Self::build(LossSequence::Uniform { center, spread }, geometry, seed)
    }

    /// Generates the next round and returns its loss vector.
    fn next_round<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let t = self.env.t() + 1;
        self.env.next_round(t, &mut self.set).py_err()?;
        Ok(self.env.losses().unwrap_or_default().to_vec().into_pyarray(py))
    }

    /// Regret contribution of playing `index` this round (see rust/src/env/losses.rs).
    fn regret(&self, index: usize) -> PyResult<f64> {
        if self.env.geometry() != Geometry::Simplex {
            return Err(Error::invalid(
                "index",
                format!("the {} has points, not indices: use point_regret(x)", self.env.geometry().name()),
            ))
            .py_err();
        }
        self.env.regret(index).ok_or_else(|| Error::invalid("index", "out of range")).py_err()
    }

    /// <l_t, x> for a point x of the decision set.
    fn point_loss(&self, x: PyReadonlyArrayDyn<'_, f64>) -> PyResult<f64> {
        let x = vector("x", &x, self.env.num_actions())?;
        self.env.point_loss(&x).py_err()
    }

    /// Regret contribution of playing the point x this round.
    fn point_regret(&self, x: PyReadonlyArrayDyn<'_, f64>) -> PyResult<f64> {
        let x = vector("x", &x, self.env.num_actions())?;
        self.env.point_regret(&x).py_err()
    }

    /// min over the decision set of <L_t, x>.
    fn best(&self) -> f64 {
        self.env.best()
    }

    #[getter]
    fn geometry(&self) -> &'static str {
        self.env.geometry().name()
    }

    /// The cumulative loss vector L_t.
    fn cumulative<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.env.cumulative().to_vec().into_pyarray(py)
    }

    #[getter]
    fn t(&self) -> u64 {
        self.env.t()
    }

    #[getter]
    fn n(&self) -> usize {
        self.env.num_actions()
    }

    fn _factory(&self) -> PyEnvironmentFactory {
        PyEnvironmentFactory::new(self.config.clone())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    PyFollowTheLeader::register(m)?;
    PyExp2::register(m)?;
    PyScrible::register(m)?;
    m.add_class::<PyLossEnv>()?;
    Ok(())
}
