//! The online call of the learners that take one selection at a time
//! (EXP2, SCRiBLe, batched elimination, batched EXP3), of the
//! full-information learners (FTRL / FTPL, the private experts), of the
//! best-arm identification learners and of the contextual linear learners:
//! `select` and `update` are the methods of the learners' native base
//! class [`OnlineBase`], installed on each learner class as method
//! descriptors of that class (`super::class_methods`; no bound method of
//! another object in the instance dictionary; arguments passed without a
//! tuple where the signature allows), which reach one [`OnlineCall`] per
//! learner, holding the learner's lock and its outstanding selection: a
//! round costs two Rust calls and no Python frame.
//!
//! The common case is handled here: `update(loss)` with a Python float
//! (a float64 array for a loss vector), in strict
//! alternation with `select()`. Everything else (a named arm or point,
//! another numeric type, a selection while one is outstanding, an update
//! with none) is passed to the learner's checked Python method, which
//! gives the same result and the same errors as before; it runs with the
//! same lock (reentrant) and reads and writes the same outstanding
//! selection through [`OnlineCall::pending`].
//!
//! The contextual linear learners keep any number of outstanding
//! selections, first in, first out, in a [`RowQueue`] (the played feature
//! rows): `select(D)` with a float64 array pushes the played row, and
//! `update(reward)` with a float settles the one outstanding row; the
//! learner's batch calls and its other forms use the same queue. The
//! engine classes of the library are called directly, on Rust values
//! ([`ContextualEngine`]): the decision set is read in place once, and the
//! reward is recorded with the queued row, no array built.
//!
//! The best-arm identification learners keep any number of outstanding
//! selections as a count per arm ([`Counts`]): `select()` adds
//! one to the arm's count, `update(arm, reward)` (an int and a float in
//! [0, 1]) records the reward and settles one selection of that arm if any
//! is outstanding, and `update(reward)` settles the one outstanding
//! selection when exactly one is.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyTuple, PyType};

use super::arrays::{expect_shape, row_major};
use super::bai::PyBai;
use super::bound_slot::BoundSlot;
use super::elimination::PyElimination;
use super::errors::IntoPy;
use super::karmed::{EngineLock, Held};
use super::learners::PyLinUcb;
use super::linucb_trust::PyTrustLinUcb;
use super::logistic::{PyOnlineLogistic, PyReweightedGlm};
use super::mab::PyMtContextual;
use super::online_learning::{PyExp2, PyFollowTheLeader, PyScrible};
use super::private_experts::{PyBatchedExp3, PyDartboardExperts, PyLazyBall, PyLazyExperts, PyStochasticExperts};
use super::reweighted::PyReweightedLinUcb;
use crate::policy::elimination::Elimination as EliminationCore;
use crate::policy::{
    BatchedExp3, DartboardExperts, Exp2, FollowTheLeader, LazyBall, LazyExperts, Scrible, StochasticExperts,
};

/// The engine a learner's calls reach.
enum Engine {
    Exp2(Py<PyExp2>),
    Scrible(Py<PyScrible>),
    /// A follow-the-leader engine; `simplex`: it samples indices.
    FollowTheLeader(Py<PyFollowTheLeader>, bool),
    Elimination(Py<PyElimination>),
    StochasticExperts(Py<PyStochasticExperts>),
    LazyExperts(Py<PyLazyExperts>),
    DartboardExperts(Py<PyDartboardExperts>),
    /// Lazy exponential weights on the ball: `select()` is the point played.
    LazyBall(Py<PyLazyBall>),
    BatchedExp3(Py<PyBatchedExp3>),
    /// A best-arm identification engine (outstanding counts per arm).
    Bai(Py<PyBai>),
    /// A contextual linear engine (`select(D)`, `observe(x, reward)`),
    /// its direct calls (None: another class, called through its Python
    /// methods), and the outstanding rows.
    Contextual(Py<PyAny>, Option<Direct>, Py<RowQueue>),
}

/// The online round of a contextual engine class on Rust values (written
/// by the `contextual` part of `engine_methods!`): what its Python
/// `select(actions)` and `observe(x, reward)` do, without the conversions.
pub(crate) trait ContextualEngine {
    /// The index of the row of `actions` (shape (k, d)) to play.
    fn select_view(&mut self, actions: &PyReadonlyArrayDyn<'_, f64>) -> PyResult<usize>;
    /// Records the played row `x` (length d) and its reward; true when
    /// this is the first pair the bounds policy clipped.
    fn observe_row(&mut self, x: &[f64], reward: f64) -> PyResult<bool>;
}

/// The [`ContextualEngine`] calls of one engine class, on the engine object.
#[derive(Clone, Copy)]
struct Direct {
    select: for<'py> fn(&Bound<'py, PyAny>, &PyReadonlyArrayDyn<'py, f64>) -> PyResult<usize>,
    observe: fn(&Bound<'_, PyAny>, &[f64], f64) -> PyResult<bool>,
}

fn direct_select<'py, T>(engine: &Bound<'py, PyAny>, actions: &PyReadonlyArrayDyn<'py, f64>) -> PyResult<usize>
where
    T: ContextualEngine + pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::False>,
{
    engine.cast::<T>()?.try_borrow_mut()?.select_view(actions)
}

fn direct_observe<T>(engine: &Bound<'_, PyAny>, x: &[f64], reward: f64) -> PyResult<bool>
where
    T: ContextualEngine + pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::False>,
{
    engine.cast::<T>()?.try_borrow_mut()?.observe_row(x, reward)
}

/// The direct calls of `engine`'s class, when it is one of the library's
/// contextual engine classes.
fn direct_calls(engine: &Bound<'_, PyAny>) -> Option<Direct> {
    macro_rules! classes {
        ($($class:ty),*) => {
            $(if engine.is_exact_instance_of::<$class>() {
                return Some(Direct { select: direct_select::<$class>, observe: direct_observe::<$class> });
            })*
        };
    }
    classes!(PyLinUcb, PyTrustLinUcb, PyMtContextual, PyOnlineLogistic, PyReweightedGlm, PyReweightedLinUcb);
    None
}

/// The selection awaiting its reward or loss (a copy of the outstanding
/// state, for the `pending` property).
enum Pending {
    None,
    Index(usize),
    Point(Vec<f64>),
}

/// The outstanding selection, as [`Counts`]: every access is made under
/// the learner's lock, which orders them, so plain atomic loads and
/// stores suffice (no read-modify-write, no second lock in a round).
/// `tag` is 0 for none, 1 for the point in `point` (the length of the
/// engine's points, fixed when the call is built), i + 2 for index i.
struct Outstanding {
    tag: AtomicU64,
    point: Box<[AtomicU64]>,
}

impl Outstanding {
    const NONE: u64 = 0;
    const POINT: u64 = 1;

    /// No selection outstanding; points of `n` coordinates.
    fn new(n: usize) -> Self {
        Outstanding { tag: AtomicU64::new(Self::NONE), point: (0..n).map(|_| AtomicU64::new(0)).collect() }
    }

    fn is_none(&self) -> bool {
        self.tag.load(Ordering::Relaxed) == Self::NONE
    }

    /// The outstanding index, if an index is outstanding.
    fn index(&self) -> Option<usize> {
        self.tag.load(Ordering::Relaxed).checked_sub(2).map(|i| i as usize)
    }

    fn clear(&self) {
        self.tag.store(Self::NONE, Ordering::Relaxed);
    }

    fn set_index(&self, i: usize) {
        self.tag.store(i as u64 + 2, Ordering::Relaxed);
    }

    /// Records `point` as outstanding (its length: the engine's, checked
    /// by the caller).
    fn set_point(&self, point: &[f64]) {
        for (c, v) in self.point.iter().zip(point) {
            c.store(v.to_bits(), Ordering::Relaxed);
        }
        self.tag.store(Self::POINT, Ordering::Relaxed);
    }

    /// A copy of the outstanding selection.
    fn get(&self) -> Pending {
        match self.tag.load(Ordering::Relaxed) {
            Self::NONE => Pending::None,
            Self::POINT => {
                Pending::Point(self.point.iter().map(|c| f64::from_bits(c.load(Ordering::Relaxed))).collect())
            }
            t => Pending::Index((t - 2) as usize),
        }
    }

    /// Sets the outstanding selection; an error for a point that is not
    /// of the engine's length or an index past the tag's range.
    fn set(&self, pending: &Pending) -> PyResult<()> {
        match pending {
            Pending::None => self.clear(),
            Pending::Index(i) => match u64::try_from(*i).ok().and_then(|i| i.checked_add(2)) {
                Some(_) => self.set_index(*i),
                None => return Err(PyIndexError::new_err(format!("outstanding index {i} out of range"))),
            },
            Pending::Point(p) => {
                if p.len() != self.point.len() {
                    return Err(PyValueError::new_err(format!(
                        "the outstanding point needs {} coordinates, got {}",
                        self.point.len(),
                        p.len()
                    )));
                }
                self.set_point(p);
            }
        }
        Ok(())
    }
}

/// The outstanding selections of a best-arm identification learner: a
/// count per arm, their total and the arm selected last (no arms for the
/// other learners). Every access is made under the learner's lock, which
/// orders them, so plain atomic loads and stores suffice: a round makes
/// no atomic read-modify-write (the lock takes none either).
#[derive(Default)]
struct Counts {
    per_arm: Box<[AtomicU64]>,
    total: AtomicU64,
    last: AtomicUsize,
}

impl Counts {
    fn new(k: usize) -> Self {
        Counts { per_arm: (0..k).map(|_| AtomicU64::new(0)).collect(), ..Counts::default() }
    }

    fn k(&self) -> usize {
        self.per_arm.len()
    }

    fn get(&self, arm: usize) -> u64 {
        self.per_arm[arm].load(Ordering::Relaxed)
    }

    /// One more selection of `arm`.
    fn add(&self, arm: usize) {
        self.per_arm[arm].store(self.get(arm) + 1, Ordering::Relaxed);
        self.total.store(self.total.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.last.store(arm, Ordering::Relaxed);
    }

    /// One selection of `arm` fewer, if any is outstanding.
    fn settle(&self, arm: usize) {
        let c = self.get(arm);
        if c > 0 {
            self.per_arm[arm].store(c - 1, Ordering::Relaxed);
            self.total.store(self.total.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
        }
    }

    /// The arm of the one outstanding selection, when exactly one is.
    fn only(&self) -> Option<usize> {
        if self.total.load(Ordering::Relaxed) != 1 {
            return None;
        }
        let last = self.last.load(Ordering::Relaxed);
        if self.get(last) == 1 {
            return Some(last);
        }
        Some((0..self.k()).find(|&a| self.get(a) > 0).unwrap_or(last))
    }

    fn to_vec(&self) -> Vec<u64> {
        (0..self.k()).map(|a| self.get(a)).collect()
    }

    /// Sets every count (`counts` has one per arm; total checked by the caller).
    fn assign(&self, counts: &[u64], total: u64) {
        for (c, &v) in self.per_arm.iter().zip(counts) {
            c.store(v, Ordering::Relaxed);
        }
        self.total.store(total, Ordering::Relaxed);
        self.last.store(counts.iter().position(|&c| c > 0).unwrap_or(0), Ordering::Relaxed);
    }
}

/// `select` / `update` of one learner (see the module docs); built by
/// `dpbandits.learners` when the learner's engine is set.
#[pyclass(frozen, module = "dpbandits._core", name = "OnlineCall")]
pub struct OnlineCall {
    lock: Py<EngineLock>,
    engine: Engine,
    pending: Outstanding,
    /// The outstanding selections per arm (best-arm identification).
    counts: Counts,
    /// The learner's checked `select(*args)` and `update(*args)`.
    checked_select: Py<PyAny>,
    checked_update: Py<PyAny>,
}

/// The round of an engine that answers the outstanding index (`$ty`,
/// bound as `$e`): the loss or reward `$value` (None: the checked path
/// answers) observed for the outstanding index under the lock.
macro_rules! index_round {
    ($self:ident, $py:ident, $e:ident, $value:expr, $ty:ty) => {
        if let Some(value) = $value {
            let observe = |i| {
                let inner = &mut $e.bind($py).try_borrow_mut()?.inner;
                first_clip(inner, <$ty>::clipped_rewards, |e| e.observe(i, value).py_err())
            };
            if $self.index_round($py, value, observe)? {
                return Ok(true);
            }
        }
    };
}

/// The round of a full-information engine (`$ty`, bound as `$e`): a
/// finite float64 loss vector `$arg` observed under the lock, then the
/// warning of a first clip; anything else falls through to the checked path.
macro_rules! vector_round {
    ($self:ident, $py:ident, $e:ident, $arg:ident, $ty:ty) => {
        if let Some(array) = vector_f64(&$arg) {
            let losses = row_major(&array).1;
            if !losses.iter().all(|x| x.is_finite()) {
                return Ok(false);
            }
            let _held = $self.enter($py);
            let mut engine = $e.bind($py).try_borrow_mut()?;
            expect_shape("losses", &[losses.len()], &[engine.inner.config().n])?;
            let first = first_clip(&mut engine.inner, <$ty>::clipped_rewards, |e| e.observe(&losses).py_err())?;
            drop(engine);
            $self.after_clip($py, first, $arg.clone())?;
            return Ok(true);
        }
    };
}

impl OnlineCall {
    #[inline]
    fn enter<'a, 'py>(&'a self, py: Python<'py>) -> Held<'a, 'py> {
        Held::new(py, self.lock.get())
    }

    /// The round of an engine that answers the outstanding index: `observe`
    /// it (true: the engine's first clipped input), then the warning;
    /// false when no index is outstanding (the checked path answers).
    fn index_round(&self, py: Python<'_>, value: f64, observe: impl FnOnce(usize) -> PyResult<bool>) -> PyResult<bool> {
        self.index_round_at(py, value, observe, 1)
    }

    /// [`OnlineCall::index_round`], the warning's `stacklevel` given (1:
    /// `update` called from Python; 0: called by another Rust call that
    /// the learner's `_warn_as` counts as a frame).
    fn index_round_at(
        &self,
        py: Python<'_>,
        value: f64,
        observe: impl FnOnce(usize) -> PyResult<bool>,
        stacklevel: u32,
    ) -> PyResult<bool> {
        let _held = self.enter(py);
        let Some(i) = self.pending.index() else { return Ok(false) };
        let first = observe(i)?;
        self.pending.clear();
        if first {
            self.warn_first_clip_at(py, value, None, stacklevel)?;
        }
        Ok(true)
    }

    /// The strict-alternation round of a contextual learner: the one
    /// outstanding row and `reward` to the engine's `observe` (True: its
    /// first clipped pair), then the warning; false when not exactly one
    /// row is outstanding (the checked path answers).
    fn contextual_round(
        &self,
        py: Python<'_>,
        engine: &Py<PyAny>,
        direct: Option<Direct>,
        queue: &Py<RowQueue>,
        reward: f64,
    ) -> PyResult<bool> {
        let _held = self.enter(py);
        let q = queue.get();
        if let Some(direct) = direct {
            let mut rows = q.lock();
            if rows.len(q.d) != 1 {
                return Ok(false);
            }
            let first = (direct.observe)(engine.bind(py), rows.live(q.d), reward)?;
            let x = first.then(|| rows.live(q.d).to_vec());
            rows.pop_first(q.d);
            drop(rows);
            if let Some(x) = x {
                self.warn_first_clip(py, reward, Some(x.into_pyarray(py).into_any()))?;
            }
            return Ok(true);
        }
        let x = {
            let rows = q.lock();
            (rows.len(q.d) == 1).then(|| rows.live(q.d).to_vec())
        };
        let Some(x) = x else { return Ok(false) };
        let x = x.into_pyarray(py);
        let first = engine.bind(py).call_method1(intern!(py, "observe"), (&x, reward))?;
        q.lock().pop_first(q.d);
        if first.is_truthy()? {
            self.warn_first_clip(py, reward, Some(x.into_any()))?;
        }
        Ok(true)
    }

    /// The warning after a loss vector `losses` that was the engine's first clip.
    fn after_clip(&self, py: Python<'_>, first: bool, losses: Bound<'_, PyAny>) -> PyResult<()> {
        if first {
            self.warn_first_clip(py, losses, None)?;
        }
        Ok(())
    }

    /// A best-arm identification update in its common forms:
    /// `(reward)` with exactly one selection outstanding, `(arm, reward)`
    /// with an int arm in [0, k); the reward a Python float in [0, 1].
    /// False for anything else (the checked path answers, with its errors).
    fn bai_round(&self, py: Python<'_>, engine: &Py<PyBai>, args: &[Bound<'_, PyAny>]) -> PyResult<bool> {
        let (arm, reward) = match args {
            [reward] => (None, reward),
            [a, reward] => {
                let Ok(int) = a.cast_exact::<pyo3::types::PyInt>() else { return Ok(false) };
                let Ok(arm) = int.extract::<usize>() else { return Ok(false) };
                (Some(arm), reward)
            }
            _ => return Ok(false),
        };
        let Some(reward) = exact_float(reward).filter(|r| (0.0..=1.0).contains(r)) else { return Ok(false) };
        let _held = self.enter(py);
        let arm = match arm {
            Some(a) if a < self.counts.k() => a,
            None => match self.counts.only() {
                Some(a) => a,
                None => return Ok(false),
            },
            _ => return Ok(false),
        };
        e_observe(engine, py, arm, reward)?;
        self.counts.settle(arm);
        Ok(true)
    }

    /// The common rounds of `update(*args)` (see the module docs); false
    /// when the learner's checked `update` answers.
    fn fast_update(&self, py: Python<'_>, args: &[Bound<'_, PyAny>]) -> PyResult<bool> {
        if let Engine::Bai(e) = &self.engine {
            return self.bai_round(py, e, args);
        }
        if let [arg] = args {
            match &self.engine {
                Engine::FollowTheLeader(e, _) => {
                    if let Ok(losses) = arg.extract::<PyReadonlyArrayDyn<'_, f64>>() {
                        let _held = self.enter(py);
                        let mut engine = e.bind(py).try_borrow_mut()?;
                        let (shape, data) = row_major(&losses);
                        expect_shape("losses", &shape, &[engine.inner.config().n])?;
                        let first = first_clip(&mut engine.inner, FollowTheLeader::clipped_rewards, |e| {
                            e.observe(&data).py_err()
                        })?;
                        drop(engine);
                        self.after_clip(py, first, arg.clone())?;
                        return Ok(true);
                    }
                }
                Engine::Scrible(e) => {
                    if let Some(loss) = exact_float(arg) {
                        let _held = self.enter(py);
                        let inner = &mut e.bind(py).try_borrow_mut()?.inner;
                        let first = first_clip(inner, Scrible::clipped_rewards, |e| e.observe(loss).py_err())?;
                        let point = if first { self.pending.get() } else { Pending::None };
                        self.pending.clear();
                        if first {
                            let point = match point {
                                Pending::Point(p) => Some(p.into_pyarray(py).into_any()),
                                _ => None,
                            };
                            self.warn_first_clip(py, loss, point)?;
                        }
                        return Ok(true);
                    }
                }
                Engine::StochasticExperts(e) => vector_round!(self, py, e, arg, StochasticExperts),
                Engine::LazyExperts(e) => vector_round!(self, py, e, arg, LazyExperts),
                Engine::DartboardExperts(e) => vector_round!(self, py, e, arg, DartboardExperts),
                Engine::LazyBall(e) => vector_round!(self, py, e, arg, LazyBall),
                Engine::BatchedExp3(e) => index_round!(self, py, e, exact_float(arg), BatchedExp3),
                Engine::Exp2(e) => index_round!(self, py, e, exact_float(arg), Exp2),
                Engine::Contextual(engine, direct, queue) => {
                    if let Some(reward) = float_or_float64(arg)? {
                        if self.contextual_round(py, engine, *direct, queue, reward)? {
                            return Ok(true);
                        }
                    }
                }
                Engine::Bai(_) => {}
                Engine::Elimination(e) => {
                    index_round!(self, py, e, exact_float(arg).filter(|r| r.is_finite()), EliminationCore);
                }
            }
        }
        Ok(false)
    }

    /// The learner's clipped-input warning for its first clipped `value`
    /// (`detail`: the played row or point), through its
    /// `_warn_first_clip(value, detail, stacklevel)`; the warning names the
    /// code that called `update`.
    fn warn_first_clip<'py>(
        &self,
        py: Python<'py>,
        value: impl IntoPyObject<'py>,
        detail: Option<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        self.warn_first_clip_at(py, value, detail, 1)
    }

    #[cold]
    #[inline(never)]
    fn warn_first_clip_at<'py>(
        &self,
        py: Python<'py>,
        value: impl IntoPyObject<'py>,
        detail: Option<Bound<'py, PyAny>>,
        stacklevel: u32,
    ) -> PyResult<()> {
        let learner = self.checked_update.bind(py).getattr(intern!(py, "__self__"))?;
        learner.call_method1(intern!(py, "_warn_first_clip"), (value, detail, stacklevel))?;
        Ok(())
    }
}

/// A reward of `arm` to a best-arm identification engine.
#[inline]
fn e_observe(engine: &Py<PyBai>, py: Python<'_>, arm: usize, reward: f64) -> PyResult<()> {
    engine.bind(py).try_borrow_mut()?.inner.observe(arm, reward).py_err()
}

/// `observe(engine)`, and whether it clipped the engine's first input
/// (`count`: the engine's clipped-input count).
#[inline]
fn first_clip<E>(
    engine: &mut E,
    count: impl Fn(&E) -> u64,
    observe: impl FnOnce(&mut E) -> PyResult<()>,
) -> PyResult<bool> {
    let fresh = count(engine) == 0;
    observe(engine)?;
    Ok(fresh && count(engine) > 0)
}

/// `obj` when it is exactly a Python float (the common case; any other
/// number goes through the learner's checked path).
#[inline]
fn exact_float(obj: &Bound<'_, PyAny>) -> Option<f64> {
    obj.cast_exact::<PyFloat>().ok().map(PyFloatMethods::value)
}

/// `obj` when it is a one-dimensional float64 array (read in place).
fn vector_f64<'py>(obj: &Bound<'py, PyAny>) -> Option<PyReadonlyArrayDyn<'py, f64>> {
    obj.extract::<PyReadonlyArrayDyn<'py, f64>>().ok().filter(|a| a.as_array().ndim() == 1)
}

/// `obj` when it is a Python float or a NumPy float64 (an entry of a
/// reward array), exactly.
#[inline]
fn float_or_float64(obj: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    static FLOAT64: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    if let Some(v) = exact_float(obj) {
        return Ok(Some(v));
    }
    let py = obj.py();
    let float64 = FLOAT64.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        Ok(py.import("numpy")?.getattr("float64")?.cast_into::<PyType>()?.unbind())
    })?;
    if obj.get_type().is(float64.bind(py)) {
        return Ok(obj.cast::<PyFloat>().ok().map(PyFloatMethods::value));
    }
    Ok(None)
}

/// First-in-first-out feature rows (length `d`) of a contextual learner's
/// outstanding selections, in one buffer (the interface of
/// `dpbandits.learners.outstanding.OutstandingRows`).
#[pyclass(frozen, module = "dpbandits._core", name = "RowQueue")]
pub struct RowQueue {
    d: usize,
    rows: Mutex<Rows>,
}

/// The live rows are `buf[head * d..]`.
#[derive(Default)]
struct Rows {
    buf: Vec<f64>,
    head: usize,
}

impl Rows {
    fn len(&self, d: usize) -> usize {
        self.buf.len().checked_div(d).map_or(0, |rows| rows - self.head)
    }

    fn live(&self, d: usize) -> &[f64] {
        &self.buf[self.head * d..]
    }

    fn pop_first(&mut self, d: usize) {
        self.head += 1;
        if self.head * d >= self.buf.len() {
            self.buf.clear();
            self.head = 0;
        } else if self.head * d * 2 > self.buf.len() && self.head > 64 {
            self.buf.drain(..self.head * d);
            self.head = 0;
        }
    }

    fn push(&mut self, row: &[f64]) -> PyResult<()> {
        self.buf.try_reserve(row.len()).map_err(|_| {
            super::errors::to_py(crate::error::Error::Allocation {
                name: "decision_set",
                what: "the outstanding selections".into(),
            })
        })?;
        self.buf.extend_from_slice(row);
        Ok(())
    }

    /// Removes the oldest live row equal to `x`; whether there was one.
    fn settle(&mut self, d: usize, x: &[f64]) -> bool {
        let live = self.live(d);
        let Some(j) = live.chunks_exact(d).position(|r| r == x) else {
            return false;
        };
        if j > 0 {
            // Keep the order of the others: the older rows move up by one.
            let start = self.head * d;
            self.buf.copy_within(start..start + j * d, start + d);
        }
        self.pop_first(d);
        true
    }
}

impl RowQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Rows> {
        self.rows.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn row_of(&self, x: &PyReadonlyArrayDyn<'_, f64>, name: &str) -> PyResult<Vec<f64>> {
        let (shape, data) = row_major(x);
        expect_shape(name, &shape, &[self.d])?;
        Ok(data.into_owned())
    }
}

#[pymethods]
impl RowQueue {
    #[new]
    fn new(d: usize) -> Self {
        RowQueue { d, rows: Mutex::new(Rows::default()) }
    }

    fn __len__(&self) -> usize {
        self.lock().len(self.d)
    }

    /// The outstanding rows, oldest first, shape (m, d) (a copy).
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = self.lock();
        let m = rows.len(self.d);
        let flat = rows.live(self.d).to_vec();
        drop(rows);
        flat.into_pyarray(py).reshape([m, self.d])
    }

    /// Forgets every outstanding row.
    fn clear(&self) {
        let mut rows = self.lock();
        rows.buf.clear();
        rows.head = 0;
    }

    /// Appends a copy of `row` (length d).
    fn push(&self, row: PyReadonlyArrayDyn<'_, f64>) -> PyResult<()> {
        let row = self.row_of(&row, "x")?;
        self.lock().push(&row)
    }

    /// Appends a copy of every row of `rows` (shape (n, d)), in order.
    fn push_many(&self, rows: PyReadonlyArrayDyn<'_, f64>) -> PyResult<()> {
        let (shape, data) = row_major(&rows);
        if shape.len() != 2 || shape[1] != self.d {
            return expect_shape("rows", &shape, &[shape.first().copied().unwrap_or(0), self.d]);
        }
        self.lock().push(&data)
    }

    /// The one outstanding row (a copy), for `update(reward)`; None
    /// unless exactly one selection is outstanding (the learner then
    /// raises, naming them).
    fn only<'py>(&self, py: Python<'py>) -> Option<Bound<'py, numpy::PyArray1<f64>>> {
        let rows = self.lock();
        (rows.len(self.d) == 1).then(|| rows.live(self.d).to_vec().into_pyarray(py))
    }

    /// Removes the oldest outstanding row.
    fn pop_first(&self) -> PyResult<()> {
        let mut rows = self.lock();
        if rows.len(self.d) == 0 {
            return Err(PyIndexError::new_err("no outstanding selection"));
        }
        rows.pop_first(self.d);
        Ok(())
    }

    /// Removes the oldest outstanding row equal to `x`, if any (a row given
    /// without a selection, e.g. logged data, settles nothing).
    fn settle(&self, x: PyReadonlyArrayDyn<'_, f64>) -> PyResult<bool> {
        let x = self.row_of(&x, "x")?;
        Ok(self.lock().settle(self.d, &x))
    }

    /// `settle` of every row of `xs` (shape (n, d)), in order.
    fn settle_many(&self, xs: PyReadonlyArrayDyn<'_, f64>) -> PyResult<()> {
        let (shape, data) = row_major(&xs);
        let d = self.d;
        if shape.len() != 2 || shape[1] != d {
            return expect_shape("X", &shape, &[shape.first().copied().unwrap_or(0), d]);
        }
        let n = shape[0];
        let mut rows = self.lock();
        if n == 0 || d == 0 {
            return Ok(());
        }
        if rows.len(d) >= n && rows.live(d)[..n * d] == data[..] {
            // Updates in selection order (the common case): one comparison.
            rows.head += n;
            if rows.head * d >= rows.buf.len() {
                rows.buf.clear();
                rows.head = 0;
            }
            return Ok(());
        }
        for x in data.chunks_exact(d) {
            rows.settle(d, x);
        }
        Ok(())
    }
}

#[pymethods]
impl OnlineCall {
    #[new]
    #[pyo3(signature = (engine, checked_select, checked_update, *, simplex=true, queue=None))]
    fn new(
        py: Python<'_>,
        engine: &Bound<'_, PyAny>,
        checked_select: Py<PyAny>,
        checked_update: Py<PyAny>,
        simplex: bool,
        queue: Option<Py<RowQueue>>,
    ) -> PyResult<Self> {
        let engine = if let Ok(e) = engine.cast::<PyExp2>() {
            Engine::Exp2(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyScrible>() {
            Engine::Scrible(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyFollowTheLeader>() {
            Engine::FollowTheLeader(e.clone().unbind(), simplex)
        } else if let Ok(e) = engine.cast::<PyElimination>() {
            Engine::Elimination(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyStochasticExperts>() {
            Engine::StochasticExperts(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyLazyExperts>() {
            Engine::LazyExperts(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyDartboardExperts>() {
            Engine::DartboardExperts(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyLazyBall>() {
            Engine::LazyBall(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyBatchedExp3>() {
            Engine::BatchedExp3(e.clone().unbind())
        } else if let Ok(e) = engine.cast::<PyBai>() {
            Engine::Bai(e.clone().unbind())
        } else if let Some(q) = queue {
            Engine::Contextual(engine.clone().unbind(), direct_calls(engine), q)
        } else {
            let name = engine.get_type().name().map_or_else(|_| "object".into(), |n| n.to_string());
            return Err(PyTypeError::new_err(format!("OnlineCall: no online call for a {name}")));
        };
        let counts = match &engine {
            Engine::Bai(e) => Counts::new(e.bind(py).try_borrow()?.inner.config().k),
            _ => Counts::default(),
        };
        let n = match &engine {
            Engine::Scrible(e) => e.bind(py).try_borrow()?.inner.config().n,
            _ => 0,
        };
        Ok(OnlineCall {
            lock: Py::new(py, EngineLock::default())?,
            engine,
            pending: Outstanding::new(n),
            counts,
            checked_select,
            checked_update,
        })
    }

    /// The learner's lock (reentrant; as `threading.RLock`).
    #[getter]
    fn lock(&self, py: Python<'_>) -> Py<EngineLock> {
        self.lock.clone_ref(py)
    }

    /// The outstanding rows of a contextual learner (None for the others).
    #[getter]
    fn queue(&self, py: Python<'_>) -> Option<Py<RowQueue>> {
        match &self.engine {
            Engine::Contextual(_, _, q) => Some(q.clone_ref(py)),
            _ => None,
        }
    }

    /// The outstanding selection: None, an index, or a point (a copy);
    /// for a best-arm identification engine the list of outstanding
    /// selections per arm.
    #[getter(pending)]
    fn get_pending(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let _held = self.enter(py);
        if let Engine::Bai(_) = &self.engine {
            return Ok(self.counts.to_vec().into_pyobject(py)?.into_any().unbind());
        }
        Ok(match self.pending.get() {
            Pending::None => py.None(),
            Pending::Index(i) => i.into_pyobject(py)?.into_any().unbind(),
            Pending::Point(p) => p.into_pyarray(py).into_any().unbind(),
        })
    }

    #[setter(pending)]
    fn set_pending(&self, py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let _held = self.enter(py);
        if let Engine::Bai(e) = &self.engine {
            let k = e.bind(py).try_borrow()?.inner.config().k;
            let counts = match value {
                Some(v) if !v.is_none() => v.extract::<Vec<u64>>()?,
                _ => vec![0; k],
            };
            if counts.len() != k {
                return Err(PyIndexError::new_err(format!("needs {k} outstanding counts, got {}", counts.len())));
            }
            let total = counts.iter().try_fold(0u64, |a, &c| a.checked_add(c));
            let Some(total) = total else { return Err(PyIndexError::new_err("outstanding counts overflow")) };
            self.counts.assign(&counts, total);
            return Ok(());
        }
        let next = match value {
            None => Pending::None,
            Some(v) if v.is_none() => Pending::None,
            Some(v) => match &self.engine {
                Engine::Scrible(_) => {
                    let a: PyReadonlyArrayDyn<'_, f64> = v.extract()?;
                    Pending::Point(row_major(&a).1.into_owned())
                }
                _ => Pending::Index(v.extract::<usize>()?),
            },
        };
        self.pending.set(&next)
    }

    /// The learner's `select` (see the learner's docstring).
    #[pyo3(signature = (*args))]
    fn select(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if let (Engine::Contextual(engine, direct, queue), 1) = (&self.engine, args.len()) {
            let set = args.get_item(0)?;
            if let Ok(actions) = set.cast::<PyArrayDyn<f64>>() {
                let _held = self.enter(py);
                let view = actions.try_readonly()?;
                let index = match direct {
                    Some(direct) => (direct.select)(engine.bind(py), &view)?,
                    None => engine.bind(py).call_method1(intern!(py, "select"), (actions,))?.extract()?,
                };
                // The engine checked the shape (k, d) and the index; a copy
                // of the row: the caller may reuse its array before update().
                let row = match view.as_array().into_dimensionality::<numpy::ndarray::Ix2>() {
                    Ok(a) if index < a.nrows() => a.row(index).to_vec(),
                    _ => return Err(PyIndexError::new_err("the engine's selection is not a row of the set")),
                };
                queue.get().lock().push(&row)?;
                return Ok(index.into_pyobject(py)?.into_any().unbind());
            }
        }
        if args.is_empty() {
            let held = self.enter(py);
            if let Engine::Bai(e) = &self.engine {
                let i = e.bind(py).try_borrow_mut()?.inner.select_arm().py_err()?;
                self.counts.add(i);
                return Ok(i.into_pyobject(py)?.into_any().unbind());
            }
            let free = self.pending.is_none();
            match &self.engine {
                Engine::Exp2(e) if free => {
                    let i = e.bind(py).try_borrow_mut()?.inner.sample_index();
                    self.pending.set_index(i);
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                Engine::Elimination(e) if free => {
                    let i = e.bind(py).try_borrow_mut()?.inner.next_action().py_err()?;
                    self.pending.set_index(i);
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                Engine::Scrible(e) if free => {
                    let mut engine = e.bind(py).try_borrow_mut()?;
                    let point = engine.inner.select();
                    self.pending.set_point(point);
                    return Ok(PyArray1::from_slice(py, point).into_any().unbind());
                }
                Engine::StochasticExperts(e) => {
                    let i = e.bind(py).try_borrow()?.inner.current();
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                Engine::LazyExperts(e) => {
                    let i = e.bind(py).try_borrow()?.inner.current();
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                Engine::DartboardExperts(e) => {
                    let i = e.bind(py).try_borrow()?.inner.current();
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
                }
                Engine::LazyBall(e) => {
                    let point = e.bind(py).try_borrow()?.inner.point().to_vec();
                    return Ok(point.into_pyarray(py).into_any().unbind());
                }
                Engine::BatchedExp3(e) => {
                    let i = e.bind(py).try_borrow()?.inner.current();
                    self.pending.set_index(i);
                    return Ok(i.into_pyobject(py)?.into_any().unbind());
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

    /// The learner's `update` (see the learner's docstring); a served
    /// decision's `policy_version` goes to the checked path. The one
    /// keyword named (not `**kwargs`): PyO3 then passes the arguments
    /// without a keyword dictionary (the vectorcall protocol).
    #[pyo3(signature = (*args, policy_version=None))]
    fn update(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        policy_version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(v) = policy_version {
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item(intern!(py, "policy_version"), v)?;
            self.checked_update.bind(py).call(args, Some(&kw))?;
            return Ok(());
        }
        let items: Vec<Bound<'_, PyAny>> = args.iter().collect();
        if self.fast_update(py, &items)? {
            return Ok(());
        }
        self.checked_update.bind(py).call1(args)?;
        Ok(())
    }
}

/// The index of the first row of `phi` (shape (k, d), row major) with the
/// largest inner product with `theta` (length d); the sums run in index
/// order. `k` >= 1.
fn best_row_of(phi: &[f64], theta: &[f64]) -> usize {
    let mut best = (0, f64::NEG_INFINITY);
    for (a, row) in phi.chunks_exact(theta.len().max(1)).enumerate() {
        let score: f64 = row.iter().zip(theta).map(|(x, t)| x * t).sum();
        if score > best.1 || a == 0 {
            best = (a, score);
        }
    }
    best.0
}

/// The client's action argmax_a <phi[a], theta> (ties to the lowest
/// index), for `ContextualEliminationBandit.client_action`: `phi` (k, d)
/// with k >= 1 and `theta` (d,), finite, checked by the caller.
#[pyfunction]
fn best_row(phi: PyReadonlyArrayDyn<'_, f64>, theta: PyReadonlyArrayDyn<'_, f64>) -> PyResult<usize> {
    let (shape, data) = row_major(&phi);
    let (tshape, t) = row_major(&theta);
    if shape.len() != 2 || shape[0] == 0 || tshape.len() != 1 || tshape[0] != shape[1] {
        return Err(PyValueError::new_err(format!(
            "best_row: expected phi of shape (k >= 1, d) and theta of shape (d,), got {shape:?} and {tshape:?}"
        )));
    }
    Ok(best_row_of(&data, &t))
}

/// The online call of the contextual reduction of batched elimination
/// (`dpbandits.ContextualEliminationBandit`): `select(features)` with a
/// finite float64 array of shape (k, d) takes the parameter index i from
/// the elimination engine of the linear learner's call `call` (its lock,
/// its outstanding selection) and answers the client's action
/// argmax_a <features[a], thetas[i]>; `update(reward)` with a finite
/// float is that learner's round. Any other call goes to the checked
/// methods, under the same lock.
#[pyclass(frozen, module = "dpbandits._core", name = "ClientCall")]
pub struct ClientCall {
    call: Py<OnlineCall>,
    thetas: Vec<f64>,
    d: usize,
    checked_select: Py<PyAny>,
    checked_update: Py<PyAny>,
}

impl ClientCall {
    /// The fast `select(features)`; None when the checked path answers.
    fn client_round(&self, py: Python<'_>, features: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        let Ok(a) = features.extract::<PyReadonlyArrayDyn<'_, f64>>() else { return Ok(None) };
        let (shape, phi) = row_major(&a);
        if shape.len() != 2 || shape[1] != self.d || shape[0] == 0 || !phi.iter().all(|x| x.is_finite()) {
            return Ok(None);
        }
        let call = self.call.get();
        let Engine::Elimination(e) = &call.engine else { return Ok(None) };
        let _held = call.enter(py);
        if !call.pending.is_none() {
            return Ok(None);
        }
        let i = e.bind(py).try_borrow_mut()?.inner.next_action().py_err()?;
        call.pending.set_index(i);
        let theta = self
            .thetas
            .get(i * self.d..(i + 1) * self.d)
            .ok_or_else(|| PyIndexError::new_err("the engine's selection is not a row of thetas"))?;
        Ok(Some(best_row_of(&phi, theta)))
    }
}

#[pymethods]
impl ClientCall {
    #[new]
    fn new(
        call: Py<OnlineCall>,
        thetas: PyReadonlyArrayDyn<'_, f64>,
        checked_select: Py<PyAny>,
        checked_update: Py<PyAny>,
    ) -> PyResult<Self> {
        let (shape, thetas) = row_major(&thetas);
        if shape.len() != 2 {
            return Err(PyValueError::new_err(format!("ClientCall: thetas must be (M, d), got {shape:?}")));
        }
        if !matches!(call.get().engine, Engine::Elimination(_)) {
            return Err(PyTypeError::new_err("ClientCall: the call must be a batched elimination learner's"));
        }
        Ok(ClientCall { call, thetas: thetas.into_owned(), d: shape[1], checked_select, checked_update })
    }

    /// The learner's `select` (see the learner's docstring).
    #[pyo3(signature = (*args))]
    fn select(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        if args.len() == 1 {
            if let Some(a) = self.client_round(py, &args.get_item(0)?)? {
                return Ok(a.into_pyobject(py)?.into_any().unbind());
            }
        }
        Ok(self.checked_select.bind(py).call1(args)?.unbind())
    }

    /// The learner's `update` (see the learner's docstring).
    #[pyo3(signature = (*args))]
    fn update(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        if args.len() == 1 {
            let call = self.call.get();
            if let (Some(reward), Engine::Elimination(e)) =
                (exact_float(&args.get_item(0)?).filter(|r| r.is_finite()), &call.engine)
            {
                let observe = |i| {
                    let inner = &mut e.bind(py).try_borrow_mut()?.inner;
                    first_clip(inner, EliminationCore::clipped_rewards, |e| e.observe(i, reward).py_err())
                };
                // The linear learner warns as this one (its `_warn_as` counts this call as a frame).
                if call.index_round_at(py, reward, observe, 0)? {
                    return Ok(());
                }
            }
        }
        self.checked_update.bind(py).call1(args)?;
        Ok(())
    }
}

/// The native base of the learners with an online call: `select` and
/// `update`, method descriptors of each learner class
/// (`super::class_methods`), reach the learner's [`OnlineCall`] through it
/// in one Rust call, with no bound method of another object stored in the
/// instance. `dpbandits.learners.online_call.BoundOnlineCall` installs them on every
/// learner class (replacing the documented methods of the class and its
/// bases) and sets the call when the engine is set; until then the
/// learner's checked `_checked_select` / `_checked_update` answer.
#[pyclass(frozen, subclass, module = "dpbandits._core", name = "OnlineBase")]
#[derive(Default)]
pub struct OnlineBase {
    /// The learner's call (None until the engine is set).
    call: BoundSlot<Py<OnlineCall>>,
}

impl OnlineBase {
    /// `f` on the learner's call; None when none is set.
    #[inline]
    fn with_call<R>(&self, py: Python<'_>, f: impl FnOnce(&OnlineCall) -> R) -> Option<R> {
        self.call.with(|c| c.clone_ref(py), |c| f(c.get()))
    }

    /// `update(*args, **kwargs)`: the call's common rounds (positional
    /// arguments only), or the learner's checked `update` (which takes a
    /// served decision's `policy_version` and a loss vector by name).
    pub(crate) fn update_with<'py>(
        slf: &Bound<'py, Self>,
        args: &[Bound<'py, PyAny>],
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        let py = slf.py();
        if kwargs.is_none() {
            if let Some(done) = slf.get().with_call(py, |call| call.fast_update(py, args)) {
                if done? {
                    return Ok(());
                }
            }
        }
        slf.call_method(intern!(py, "_checked_update"), PyTuple::new(py, args)?, kwargs)?;
        Ok(())
    }

    /// `select(*args, **kwargs)`: the call's common rounds, or the
    /// learner's checked `select`.
    pub(crate) fn select_with(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if kwargs.is_none() {
            if let Some(out) = slf.get().with_call(py, |call| call.select(py, args)) {
                return out;
            }
        }
        Ok(slf.call_method(intern!(py, "_checked_select"), args, kwargs)?.unbind())
    }

    /// `select()` (the learners whose `select` takes no arguments).
    pub(crate) fn select_noargs(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let args = PyTuple::empty(py);
        match slf.get().with_call(py, |call| call.select(py, &args)) {
            Some(out) => out,
            None => Ok(slf.call_method0(intern!(py, "_checked_select"))?.unbind()),
        }
    }

    /// The learner's call (a new reference).
    fn current(&self, py: Python<'_>) -> Option<Py<OnlineCall>> {
        self.call.copy(|c| c.clone_ref(py))
    }
}

#[pymethods]
impl OnlineBase {
    /// Any arguments (the learner's ``__init__`` takes them).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        OnlineBase::default()
    }

    /// The learner's online call (None: not bound yet).
    #[getter(_online_call)]
    fn get_online_call(&self, py: Python<'_>) -> Option<Py<OnlineCall>> {
        self.current(py)
    }

    #[setter(_online_call)]
    fn set_online_call(&self, call: Option<Py<OnlineCall>>) {
        self.call.set(call);
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RowQueue>()?;
    m.add_class::<ClientCall>()?;
    m.add_function(wrap_pyfunction!(best_row, m)?)?;
    m.add_class::<OnlineBase>()?;
    m.add_class::<OnlineCall>()
}
