//! The online call of the learners that take one selection at a time
//! (EXP2, SCRiBLe, batched elimination) and of the full-information
//! follow-the-leader learners: `select` and `update` bound to one Rust
//! object per learner, which holds the learner's lock and its outstanding
//! selection, so a round costs two Rust calls and no Python frame.
//!
//! The common case is handled here: `update(loss)` with a Python float
//! (a float64 array for the loss vector of FTRL / FTPL), in strict
//! alternation with `select()`. Everything else (a named arm or point,
//! another numeric type, a selection while one is outstanding, an update
//! with none) is passed to the learner's checked Python method, which
//! gives the same result and the same errors as before; it runs with the
//! same lock (reentrant) and reads and writes the same outstanding
//! selection through [`OnlineCall::pending`].

use std::sync::{Mutex, PoisonError};

use numpy::{IntoPyArray, PyReadonlyArrayDyn};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyTuple};

use super::arrays::{expect_shape, row_major};
use super::elimination::PyElimination;
use super::errors::IntoPy;
use super::karmed::EngineLock;
use super::online_learning::{PyExp2, PyFollowTheLeader, PyScrible};

/// Releases the lock when dropped (also when the call unwinds).
struct Held<'a>(&'a EngineLock);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.exit();
    }
}

/// The engine a learner's calls reach.
enum Engine {
    Exp2(Py<PyExp2>),
    Scrible(Py<PyScrible>),
    /// A follow-the-leader engine; `simplex`: it samples indices.
    FollowTheLeader(Py<PyFollowTheLeader>, bool),
    Elimination(Py<PyElimination>),
}

/// The selection awaiting its reward or loss.
enum Pending {
    None,
    Index(usize),
    Point(Vec<f64>),
}

/// `select` / `update` of one learner (see the module docs); built by
/// `dpbandits.learners` when the learner's engine is set.
#[pyclass(frozen, module = "dpbandits._core", name = "OnlineCall")]
pub struct OnlineCall {
    lock: Py<EngineLock>,
    engine: Engine,
    pending: Mutex<Pending>,
    /// The learner's checked `select(*args)` and `update(*args)`.
    checked_select: Py<PyAny>,
    checked_update: Py<PyAny>,
}

impl OnlineCall {
    #[inline]
    fn enter<'a>(&'a self, py: Python<'_>) -> Held<'a> {
        let lock = self.lock.get();
        lock.enter(py, None);
        Held(lock)
    }

    #[inline]
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `obj` when it is exactly a Python float (the common case; any other
/// number goes through the learner's checked path).
#[inline]
fn exact_float(obj: &Bound<'_, PyAny>) -> Option<f64> {
    obj.cast_exact::<PyFloat>().ok().map(PyFloatMethods::value)
}

#[pymethods]
impl OnlineCall {
    #[new]
    #[pyo3(signature = (engine, checked_select, checked_update, *, simplex=true))]
    fn new(
        py: Python<'_>,
        engine: &Bound<'_, PyAny>,
        checked_select: Py<PyAny>,
        checked_update: Py<PyAny>,
        simplex: bool,
    ) -> PyResult<Self> {
        let engine = if let Ok(e) = engine.cast::<PyExp2>() {
            Engine::Exp2(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyScrible>() {
            Engine::Scrible(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyFollowTheLeader>() {
            Engine::FollowTheLeader(e.clone().unbind(), simplex)
        } else if let Ok(e) = engine.cast::<PyElimination>() {
            Engine::Elimination(e.clone().unbind())
        } else {
            let name = engine.get_type().name().map_or_else(|_| "object".into(), |n| n.to_string());
            return Err(PyTypeError::new_err(format!("OnlineCall: no online call for a {name}")));
        };
        Ok(OnlineCall {
            lock: Py::new(py, EngineLock::default())?,
            engine,
            pending: Mutex::new(Pending::None),
            checked_select,
            checked_update,
        })
    }

    /// The learner's lock (reentrant; as `threading.RLock`).
    #[getter]
    fn lock(&self, py: Python<'_>) -> Py<EngineLock> {
        self.lock.clone_ref(py)
    }

    /// The outstanding selection: None, an index, or a point (a copy).
    #[getter(pending)]
    fn get_pending(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let _held = self.enter(py);
        Ok(match &*self.pending() {
            Pending::None => py.None(),
            Pending::Index(i) => i.into_pyobject(py)?.into_any().unbind(),
            Pending::Point(p) => p.clone().into_pyarray(py).into_any().unbind(),
        })
    }

    #[setter(pending)]
    fn set_pending(&self, py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let _held = self.enter(py);
        let next = match value {
            None => Pending::None,
            Some(v) if v.is_none() => Pending::None,
            Some(v) => match &self.engine {
                Engine::Scrible(_) => {
                    let a: PyReadonlyArrayDyn<'_, f64> = v.extract()?;
                    Pending::Point(row_major(&a).1)
                }
                _ => Pending::Index(v.extract::<usize>()?),
            },
        };
        *self.pending() = next;
        Ok(())
    }

    /// The learner's `select` (see the learner's docstring).
    #[pyo3(signature = (*args))]
    fn select(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if args.is_empty() {
            let held = self.enter(py);
            let free = matches!(*self.pending(), Pending::None);
            match &self.engine {
                Engine::Exp2(e) if free => {
                    let i = e.bind(py).try_borrow_mut()?.inner.sample_index();
                    *self.pending() = Pending::Index(i);
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                Engine::Elimination(e) if free => {
                    let i = e.bind(py).try_borrow_mut()?.inner.next_action().py_err()?;
                    *self.pending() = Pending::Index(i);
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                Engine::Scrible(e) if free => {
                    let point = e.bind(py).try_borrow_mut()?.inner.select().to_vec();
                    *self.pending() = Pending::Point(point.clone());
                    return Ok(point.into_pyarray(py).into_any().unbind());
                }
                Engine::FollowTheLeader(e, true) => {
                    let i = e.bind(py).try_borrow_mut()?.inner.sample_index().py_err()?;
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                _ => drop(held),
            }
        }
        Ok(self.checked_select.bind(py).call1(args)?.unbind())
    }

    /// The learner's `update` (see the learner's docstring).
    #[pyo3(signature = (*args))]
    fn update(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        if args.len() == 1 {
            let arg = args.get_item(0)?;
            match &self.engine {
                Engine::FollowTheLeader(e, _) => {
                    if let Ok(losses) = arg.extract::<PyReadonlyArrayDyn<'_, f64>>() {
                        let _held = self.enter(py);
                        let mut engine = e.bind(py).try_borrow_mut()?;
                        let (shape, data) = row_major(&losses);
                        expect_shape("losses", &shape, &[engine.inner.config().n])?;
                        return engine.inner.observe(&data).py_err();
                    }
                }
                Engine::Scrible(e) => {
                    if let Some(loss) = exact_float(&arg) {
                        let _held = self.enter(py);
                        e.bind(py).try_borrow_mut()?.inner.observe(loss).py_err()?;
                        *self.pending() = Pending::None;
                        return Ok(());
                    }
                }
                Engine::Exp2(e) => {
                    if let Some(loss) = exact_float(&arg) {
                        let _held = self.enter(py);
                        let pending = match *self.pending() {
                            Pending::Index(i) => Some(i),
                            _ => None,
                        };
                        if let Some(i) = pending {
                            e.bind(py).try_borrow_mut()?.inner.observe(i, loss).py_err()?;
                            *self.pending() = Pending::None;
                            return Ok(());
                        }
                    }
                }
                Engine::Elimination(e) => {
                    if let Some(reward) = exact_float(&arg).filter(|r| r.is_finite()) {
                        let _held = self.enter(py);
                        let pending = match *self.pending() {
                            Pending::Index(i) => Some(i),
                            _ => None,
                        };
                        if let Some(i) = pending {
                            e.bind(py).try_borrow_mut()?.inner.observe(i, reward).py_err()?;
                            *self.pending() = Pending::None;
                            return Ok(());
                        }
                    }
                }
            }
        }
        self.checked_update.bind(py).call1(args)?;
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<OnlineCall>()
}
