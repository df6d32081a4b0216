//! The K-armed engines' Python surface: the online protocol (select,
//! select_many, update(arm, reward) / update(reward), update_many,
//! outstanding selections, the served policy) over the QPM-D reduction
//! (`policy::delayed`), and the lock that makes an engine thread-safe,
//! taken once per call in Rust.
//!
//! # The lock
//!
//! Each engine owns an [`EngineLock`], a reentrant lock with the interface
//! of `threading.RLock` (`acquire`, `release`, a context manager) that the
//! learner exposes as its `lock`. Every method of the engine takes it for
//! the call, so `with learner.lock: ...` from one thread holds off every
//! other thread's calls (the documented discipline for a select/update
//! pair), and calls never interleave inside the engine. A thread that finds
//! it held waits with the GIL released (a condition variable), so the
//! holder can run. The batch methods hold it while they run with the GIL
//! released.
//!
//! The lock's state is written only by a thread that holds the GIL (the
//! methods that take or release it require a [`Python`] token, and a
//! waiter takes the GIL back before it tries again), so the GIL orders
//! every write: taking and releasing it uncontended are plain loads and
//! stores, with no read-modify-write instruction. This relies on the
//! GIL: the extension module is declared as needing it (PyO3's default),
//! so an interpreter built without the GIL enables it when the module is
//! imported.
//!
//! The classes are `frozen` (PyO3 keeps no borrow flag: a second thread
//! would otherwise fail with "already borrowed" while a batch runs without
//! the GIL); the engine sits in a `Mutex` that the lock makes uncontended.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

use super::errors::{to_py, IntoPy};
use crate::error::Error;
use crate::policy::delayed::{ArmedEngine, Delayed};

/// A per-thread token (never 0): the owner of an [`EngineLock`]. A call
/// that takes and releases the lock reads it once ([`EngineLock::enter_as`],
/// [`EngineLock::exit_as`]): a thread-local read from a shared library is a
/// function call.
#[inline]
pub(crate) fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TOKEN: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    TOKEN.with(|t| *t)
}

/// A reentrant lock held by the engine's methods (see the module docs).
#[pyclass(frozen, module = "dpbandits._core", name = "EngineLock")]
#[derive(Default)]
pub struct EngineLock {
    /// The owning thread's token, 0 when free (written with the GIL held).
    owner: AtomicU64,
    /// Acquisitions by the owner (touched by the owner only).
    depth: AtomicU64,
    /// Threads waiting (written with the GIL held; the releaser wakes them
    /// only when there are some).
    waiters: AtomicUsize,
    park: Mutex<()>,
    freed: Condvar,
}

impl EngineLock {
    /// Takes the lock for `me` if it is free or `me`'s. The GIL (`_py`)
    /// orders this read and write against every other thread's.
    #[inline]
    fn try_enter(&self, _py: Python<'_>, me: u64) -> bool {
        let owner = self.owner.load(Ordering::Relaxed);
        if owner == 0 {
            self.owner.store(me, Ordering::Relaxed);
            self.depth.store(1, Ordering::Relaxed);
            true
        } else if owner == me {
            self.depth.store(self.depth.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            true
        } else {
            false
        }
    }

    /// Takes the lock for this thread (waiting without the GIL; `None`:
    /// no time limit); false when `timeout` passed first.
    #[inline]
    pub fn enter(&self, py: Python<'_>, timeout: Option<Duration>) -> bool {
        let me = thread_token();
        self.try_enter(py, me) || self.wait(py, me, timeout)
    }

    /// Takes the lock for the thread whose token is `me` (this thread's
    /// [`thread_token`]), waiting as long as it takes.
    #[inline]
    pub fn enter_as(&self, py: Python<'_>, me: u64) {
        if !self.try_enter(py, me) {
            self.wait(py, me, None);
        }
    }

    /// Waits until the lock is free (without the GIL), then tries again
    /// with the GIL; false when `timeout` passed first.
    ///
    /// No wake-up is lost: the releaser frees the lock, then (seeing this
    /// thread counted in `waiters`, which the GIL orders before) notifies
    /// under `park`; this thread reads `owner` under `park` before it waits.
    #[cold]
    fn wait(&self, py: Python<'_>, me: u64, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            self.waiters.store(self.waiters.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            let freed = py.detach(|| {
                let mut guard = self.park.lock().unwrap_or_else(PoisonError::into_inner);
                while self.owner.load(Ordering::Acquire) != 0 {
                    match deadline {
                        None => guard = self.freed.wait(guard).unwrap_or_else(PoisonError::into_inner),
                        Some(d) => {
                            let now = Instant::now();
                            if now >= d {
                                return false;
                            }
                            guard = self.freed.wait_timeout(guard, d - now).unwrap_or_else(PoisonError::into_inner).0;
                        }
                    }
                }
                true
            });
            self.waiters.store(self.waiters.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
            if !freed {
                return false;
            }
            if self.try_enter(py, me) {
                return true;
            }
        }
    }

    /// Releases one acquisition; false when this thread does not hold it.
    #[inline]
    pub fn exit(&self, py: Python<'_>) -> bool {
        self.exit_as(py, thread_token())
    }

    /// [`EngineLock::exit`] for the thread whose token is `me` (this
    /// thread's [`thread_token`]).
    #[inline]
    pub fn exit_as(&self, _py: Python<'_>, me: u64) -> bool {
        if self.owner.load(Ordering::Relaxed) != me {
            return false;
        }
        let depth = self.depth.load(Ordering::Relaxed);
        self.depth.store(depth - 1, Ordering::Relaxed);
        if depth == 1 {
            // Release: a waiter that reads 0 without the GIL sees the
            // holder's writes.
            self.owner.store(0, Ordering::Release);
            if self.waiters.load(Ordering::Relaxed) > 0 {
                let _guard = self.park.lock().unwrap_or_else(PoisonError::into_inner);
                self.freed.notify_all();
            }
        }
        true
    }
}

#[pymethods]
impl EngineLock {
    /// Takes the lock (reentrant: the holding thread may take it again);
    /// as `threading.RLock.acquire`: False when not blocking or when
    /// `timeout` seconds passed first.
    #[pyo3(signature = (blocking=true, timeout=-1.0))]
    #[allow(clippy::float_cmp)] // -1 is threading's exact sentinel
    fn acquire(&self, py: Python<'_>, blocking: bool, timeout: f64) -> PyResult<bool> {
        if !blocking {
            if timeout != -1.0 {
                return Err(PyValueError::new_err("can't specify a timeout for a non-blocking call"));
            }
            return Ok(self.try_enter(py, thread_token()));
        }
        let limit = if timeout == -1.0 {
            None
        } else if timeout.is_finite() && timeout >= 0.0 {
            Some(Duration::from_secs_f64(timeout.min(1e9)))
        } else {
            return Err(PyValueError::new_err("timeout value must be a non-negative number or -1"));
        };
        Ok(self.enter(py, limit))
    }

    /// Releases one acquisition (RuntimeError when this thread does not hold it).
    fn release(&self, py: Python<'_>) -> PyResult<()> {
        if self.exit(py) {
            Ok(())
        } else {
            Err(PyRuntimeError::new_err("cannot release un-acquired lock"))
        }
    }

    fn __enter__(&self, py: Python<'_>) -> bool {
        self.enter(py, None)
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
        self.release(py)
    }

    /// Whether the calling thread holds the lock (as `threading.RLock._is_owned`).
    fn _is_owned(&self) -> bool {
        self.owner.load(Ordering::Relaxed) == thread_token()
    }

    fn __repr__(&self) -> String {
        let owner = self.owner.load(Ordering::Relaxed);
        if owner == 0 {
            "<dpbandits EngineLock unlocked>".into()
        } else {
            format!("<dpbandits EngineLock locked, depth {}>", self.depth.load(Ordering::Relaxed))
        }
    }
}

/// Releases the lock when dropped (also when the call unwinds), for the
/// thread of the token it holds.
pub(crate) struct Held<'a, 'py>(&'a EngineLock, u64, Python<'py>);

impl<'a, 'py> Held<'a, 'py> {
    /// Takes `lock` for this thread until the guard drops (with the GIL:
    /// the guard holds the token).
    #[inline]
    pub(crate) fn new(py: Python<'py>, lock: &'a EngineLock) -> Self {
        let me = thread_token();
        lock.enter_as(py, me);
        Held(lock, me, py)
    }
}

impl Drop for Held<'_, '_> {
    #[inline]
    fn drop(&mut self) {
        self.0.exit_as(self.2, self.1);
    }
}

/// A K-armed engine under the reduction, with its lock and the name of
/// the learner that holds it (for the clipped-reward warning).
pub struct ArmedCell<E> {
    lock: Py<EngineLock>,
    inner: Mutex<Delayed<E>>,
    label: Mutex<String>,
}

impl<E: ArmedEngine> ArmedCell<E> {
    pub fn new(py: Python<'_>, engine: Delayed<E>) -> PyResult<Self> {
        Ok(ArmedCell {
            lock: Py::new(py, EngineLock::default())?,
            inner: Mutex::new(engine),
            label: Mutex::new(String::new()),
        })
    }

    /// Names the learner holding this engine (its class name).
    pub fn set_label(&self, name: String) {
        *self.label.lock().unwrap_or_else(PoisonError::into_inner) = name;
    }

    /// The first clipped reward's warning (`dpbandits.errors.ClippedRewardWarning`):
    /// `what` names the value (`reward 1.7`, `rewards[3] = 1.7`).
    #[cold]
    #[inline(never)]
    pub fn warn_clipped(&self, py: Python<'_>, what: &str, stacklevel: u32) -> PyResult<()> {
        let range = self.with(py, |d| *d.reward_range())?;
        let label = self.label.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let learner = if label.is_empty() { "the K-armed learner".to_string() } else { label };
        let declared = format!("reward_range [{:?}, {:?}]", range.lo, range.hi);
        super::errors::warn_clipped(py, &learner, what, &declared, stacklevel)
    }

    /// [`ArmedCell::warn_clipped`] for a batch (`update_many`, called by
    /// the learner's method of that name): names its first reward outside
    /// the declared range.
    #[cold]
    #[inline(never)]
    pub fn warn_clipped_batch(&self, py: Python<'_>, rewards: &[f64]) -> PyResult<()> {
        let range = self.with(py, |d| *d.reward_range())?;
        match rewards.iter().enumerate().find(|(_, r)| !(range.lo..=range.hi).contains(*r)) {
            Some((i, r)) => self.warn_clipped(py, &format!("rewards[{i}] = {r:?}"), 2),
            None => Ok(()),
        }
    }

    /// `f` on the engine with the lock held, and whether the call clipped
    /// the engine's first reward.
    #[inline]
    pub fn with_clip<R>(&self, py: Python<'_>, f: impl FnOnce(&mut Delayed<E>) -> R) -> PyResult<(R, bool)> {
        self.with(py, |d| {
            let fresh = d.clipped_rewards() == 0;
            let out = f(d);
            (out, fresh && d.clipped_rewards() > 0)
        })
    }

    /// The lock object (the same Python object every time).
    pub fn lock(&self, py: Python<'_>) -> Py<EngineLock> {
        self.lock.clone_ref(py)
    }

    /// `f` on the engine with the lock held for the call.
    #[inline]
    pub fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&mut Delayed<E>) -> R) -> PyResult<R> {
        let _held = Held::new(py, self.lock.get());
        let mut engine = match self.inner.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
            // The lock makes the mutex uncontended; only a call made from
            // inside another call of this engine (none is) could get here.
            Err(TryLockError::WouldBlock) => return Err(PyRuntimeError::new_err("engine re-entered")),
        };
        Ok(f(&mut engine))
    }

    /// `f` on the engine with the lock held and the GIL released.
    pub fn detached<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Delayed<E>) -> R + Send) -> PyResult<R> {
        let _held = Held::new(py, self.lock.get());
        let inner = &self.inner;
        py.detach(|| inner.lock().map(|mut g| f(&mut g)).map_err(|_| ())).map_err(|()| poisoned())
    }
}

fn poisoned() -> PyErr {
    to_py(Error::State("an earlier call panicked inside this engine; its state cannot be trusted".into()))
}

/// `obj` as a reward: a float or an int (not a bool) converted by PyO3;
/// other real numbers (NumPy scalars, fractions) by the package's one check
/// of a real number (`dpbandits._validation.real`).
#[inline]
pub fn reward_value(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(f.value());
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("invalid argument `reward`: expected a real number, got bool"));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<f64>().map_err(|_| to_py(Error::invalid("reward", "an integer too large for a float")));
    }
    let py = obj.py();
    py.import("dpbandits._validation")?.getattr("real")?.call1(("reward", obj))?.extract::<f64>()
}

/// `obj` as an arm index: an int (or an object with `__index__`, such as a
/// NumPy integer), not a bool, >= 0; the engine checks `< k`.
#[inline]
pub fn arm_value(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("invalid argument `arm`: expected an integer, got bool"));
    }
    match obj.extract::<i64>() {
        Ok(a) => usize::try_from(a).map_err(|_| to_py(Error::invalid("arm", format!("must be >= 0, got {a}")))),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
            Err(to_py(Error::invalid("arm", "an integer out of range")))
        }
        Err(_) => {
            let name = obj.get_type().name().map_or_else(|_| "object".into(), |n| n.to_string());
            Err(PyTypeError::new_err(format!("invalid argument `arm`: expected an integer, got {name}")))
        }
    }
}

/// `arms` as indices (>= 0; the engine checks `< k`), naming the entry.
pub fn arm_indices(arms: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<usize>> {
    let view = arms.as_array();
    let mut out = Vec::new();
    out.try_reserve_exact(view.len())
        .map_err(|_| to_py(Error::Allocation { name: "arms", what: format!("{} indices", view.len()) }))?;
    for (i, &a) in view.iter().enumerate() {
        match usize::try_from(a) {
            Ok(a) => out.push(a),
            Err(_) => return Err(to_py(Error::invalid("arms", format!("entry {i}: must be >= 0, got {a}")))),
        }
    }
    Ok(out)
}

/// `n` copies of `arm` as an int64 array (fallible allocation).
pub fn filled_arms(py: Python<'_>, arm: usize, n: usize) -> PyResult<Bound<'_, PyArray1<i64>>> {
    let v = py.detach(|| crate::error::try_filled("n", n, arm as i64)).py_err()?;
    Ok(v.into_pyarray(py))
}

/// The protocol methods of a K-armed engine class `$py` whose field `cell`
/// is an [`ArmedCell`] of `$inner`, with the class's own methods, its
/// unpickling function `$restore` and its `register`.
macro_rules! karmed_engine {
    ($py:ident, $inner:ty, $restore:ident; $($own:tt)*) => {
        impl $crate::py::engine_base::ArmedCall for $py {
            fn call_select(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<usize> {
                self.select(py)
            }

            fn call_update(
                &self,
                py: ::pyo3::Python<'_>,
                first: &::pyo3::Bound<'_, ::pyo3::PyAny>,
                second: Option<&::pyo3::Bound<'_, ::pyo3::PyAny>>,
            ) -> ::pyo3::PyResult<()> {
                self.update(py, first, second)
            }
        }

        #[::pyo3::pymethods]
        impl $py {
            $($own)*

            /// The current proposal (the arm to pull), counted as an
            /// outstanding selection until its reward arrives.
            fn select(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<usize> {
                $crate::py::errors::IntoPy::py_err(self.cell.with(py, |d| d.select())?)
            }

            /// `n` selections (int64 array; the proposal does not move
            /// without feedback), all outstanding.
            fn select_many<'py>(
                &self,
                py: ::pyo3::Python<'py>,
                n: u64,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArray1<i64>>> {
                let arm = $crate::py::errors::IntoPy::py_err(self.cell.with(py, |d| d.select_many(n))?)?;
                let n = usize::try_from(n).map_err(|_| {
                    $crate::py::errors::to_py($crate::error::Error::invalid("n", "too large"))
                })?;
                $crate::py::karmed::filled_arms(py, arm, n)
            }

            /// `update(arm, reward)`: the reward of a pull of `arm`, any
            /// order, any time; `update(reward)`: the one outstanding
            /// selection's (a StateError naming them when there are
            /// several or none).
            #[pyo3(signature = (arm_or_reward, reward=None))]
            fn update(
                &self,
                py: ::pyo3::Python<'_>,
                arm_or_reward: &::pyo3::Bound<'_, ::pyo3::PyAny>,
                reward: Option<&::pyo3::Bound<'_, ::pyo3::PyAny>>,
            ) -> ::pyo3::PyResult<()> {
                let (done, first, r) = match reward {
                    None => {
                        let r = $crate::py::karmed::reward_value(arm_or_reward)?;
                        let (done, first) = self.cell.with_clip(py, |d| d.update_last(r))?;
                        (done, first, r)
                    }
                    Some(reward) => {
                        let a = $crate::py::karmed::arm_value(arm_or_reward)?;
                        let r = $crate::py::karmed::reward_value(reward)?;
                        let (done, first) = self.cell.with_clip(py, |d| d.update(a, r))?;
                        (done, first, r)
                    }
                };
                if first {
                    self.cell.warn_clipped(py, &format!("reward {r:?}"), 1)?;
                }
                $crate::py::errors::IntoPy::py_err(done)
            }

            /// The loop of `update(arms[i], rewards[i])` (GIL released),
            /// stopping at the first refusal, whose error names the entry.
            fn update_many(
                &self,
                py: ::pyo3::Python<'_>,
                arms: ::numpy::PyReadonlyArray1<'_, i64>,
                rewards: ::numpy::PyReadonlyArray1<'_, f64>,
            ) -> ::pyo3::PyResult<()> {
                let arms = $crate::py::karmed::arm_indices(&arms)?;
                let rewards = rewards.as_array().to_vec();
                let (done, first) = self.cell.detached(py, |d| {
                    let fresh = d.clipped_rewards() == 0;
                    let done = d.update_many(&arms, &rewards);
                    (done, fresh && d.clipped_rewards() > 0)
                })?;
                if first {
                    self.cell.warn_clipped_batch(py, &rewards)?;
                }
                $crate::py::errors::IntoPy::py_err(done)
            }

            /// The engine's own call: the reward of `arm` fed at once, with
            /// the engine's checks (a committed phase refuses another arm).
            fn observe(&self, py: ::pyo3::Python<'_>, arm: usize, reward: f64) -> ::pyo3::PyResult<()> {
                let (done, first) = self.cell.with_clip(py, |d| d.observe_now(arm, reward))?;
                if first {
                    self.cell.warn_clipped(py, &format!("reward {reward:?}"), 1)?;
                }
                $crate::py::errors::IntoPy::py_err(done)
            }

            /// Rewards accepted outside the declared range and clipped into
            /// it (`bounds="clip"`).
            #[getter]
            fn clipped_rewards(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<u64> {
                self.cell.with(py, |d| d.clipped_rewards())
            }

            /// Names the learner that holds this engine (in its warnings).
            fn _set_label(&self, name: String) {
                self.cell.set_label(name);
            }

            /// Adds an arm with fresh statistics (and its own noise); returns its index.
            fn add_arm(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<usize> {
                $crate::py::errors::IntoPy::py_err(self.cell.with(py, |d| d.add_arm())?)
            }

            /// Retires `arm`: never selected again.
            fn retire_arm(&self, py: ::pyo3::Python<'_>, arm: usize) -> ::pyo3::PyResult<()> {
                $crate::py::errors::IntoPy::py_err(self.cell.with(py, |d| d.retire_arm(arm))?)
            }

            /// Per arm, whether it is retired.
            fn retired<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArray1<bool>>> {
                let v = self.cell.with(py, |d| d.retired().to_vec())?;
                Ok(::numpy::IntoPyArray::into_pyarray(v, py))
            }

            /// Rewards queued for retired arms: accepted, never fed.
            #[getter]
            fn dropped(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<u64> {
                self.cell.with(py, |d| d.dropped())
            }

            /// Selections issued and not yet answered by a reward.
            #[getter]
            fn outstanding(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<u64> {
                self.cell.with(py, |d| d.outstanding())
            }

            /// Per arm, the outstanding selections.
            fn outstanding_by_arm<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArray1<u64>>> {
                let v = self.cell.with(py, |d| d.outstanding_by_arm().to_vec())?;
                Ok(::numpy::IntoPyArray::into_pyarray(v, py))
            }

            /// Per arm, rewards received and not yet fed to the algorithm.
            fn queue_lengths<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArray1<u64>>> {
                let v = self.cell.with(py, |d| d.queue_lengths())?;
                Ok(::numpy::IntoPyArray::into_pyarray(v, py))
            }

            /// (arm, version) of the current proposal; StateError once the
            /// horizon's rewards are fed.
            fn policy(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<(usize, u64)> {
                let p = $crate::py::errors::IntoPy::py_err(self.cell.with(py, |d| d.policy())?)?;
                p.ok_or_else(|| {
                    $crate::py::errors::to_py($crate::error::Error::State(
                        "the horizon is reached: no further decision".into(),
                    ))
                })
            }

            /// The number of distinct consecutive proposals so far.
            #[getter]
            fn policy_version(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<u64> {
                $crate::py::errors::IntoPy::py_err(self.cell.with(py, |d| d.policy_version())?)
            }

            /// The lock every method takes (reentrant; as `threading.RLock`).
            #[getter]
            fn lock(&self, py: ::pyo3::Python<'_>) -> ::pyo3::Py<$crate::py::karmed::EngineLock> {
                self.cell.lock(py)
            }

            /// Pulls of each arm that the index statistics count.
            fn pulls<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArray1<u64>>> {
                let v = self.cell.with(py, |d| d.pulls().to_vec())?;
                Ok(::numpy::IntoPyArray::into_pyarray(v, py))
            }

            #[getter]
            fn k(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<usize> {
                self.cell.with(py, |d| d.config().k)
            }

            /// Rewards fed to the algorithm so far.
            #[getter]
            fn t(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<u64> {
                self.cell.with(py, |d| d.t())
            }

            #[getter]
            fn horizon(&self, py: ::pyo3::Python<'_>) -> ::pyo3::PyResult<u64> {
                self.cell.with(py, |d| d.config().horizon)
            }

            /// The 32-byte keys of the base engine's seeded (ChaCha8) generators
            /// (see `generator_keys`); compared on load with those of the
            /// engine built from the header's seed.
            fn _generator_keys<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<Vec<::pyo3::Bound<'py, ::pyo3::types::PyBytes>>> {
                let keys = self.cell.with(py, |d| $crate::py::generator_keys::generator_keys(d.engine()))?;
                Ok(keys.iter().map(|key| ::pyo3::types::PyBytes::new(py, key)).collect())
            }

            /// Draws all future noise from a new root (`None`: operating-system
            /// entropy). Past releases are unchanged.
            #[pyo3(signature = (seed=None))]
            fn reseed(&self, py: ::pyo3::Python<'_>, seed: Option<u64>) -> ::pyo3::PyResult<()> {
                let seeds = $crate::py::mechanisms::seeds(seed)?;
                self.cell.with(py, |d| d.engine_mut().reseed(&seeds))
            }

            /// The configuration this engine was built with, as plain values
            /// (`as_json`: their JSON text); see `dpbandits.checkpoint`; read-only.
            #[pyo3(signature = (as_json=false))]
            fn noise_parameters<'py>(
                &self,
                py: ::pyo3::Python<'py>,
                as_json: bool,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::PyAny>> {
                let config = self.cell.with(py, |d| d.config().clone())?;
                $crate::py::config_values(py, &config, as_json)
            }

            /// Serialized state (node noise, generators, queues and
            /// outstanding selections included).
            fn to_bytes<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::types::PyBytes>> {
                let bytes = self.cell.with(py, |d| d.to_bytes())?;
                Ok(::pyo3::types::PyBytes::new(py, &bytes))
            }

            /// The object `to_bytes` was called on, continuing exactly.
            #[staticmethod]
            fn from_bytes(py: ::pyo3::Python<'_>, state: &[u8]) -> ::pyo3::PyResult<Self> {
                let engine = $crate::py::errors::IntoPy::py_err(
                    $crate::policy::delayed::Delayed::<$inner>::from_bytes(state),
                )?;
                Ok($py { cell: $crate::py::karmed::ArmedCell::new(py, engine)? })
            }

            fn __reduce__<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::types::PyTuple>> {
                use ::pyo3::types::PyAnyMethods;
                let restore = py.import("dpbandits._core")?.getattr(stringify!($restore))?;
                ::pyo3::IntoPyObject::into_pyobject((restore, (self.to_bytes(py)?,)), py)
            }
        }

        #[doc = concat!("Unpickling entry point for `", stringify!($py), "`.")]
        #[::pyo3::pyfunction]
        fn $restore(py: ::pyo3::Python<'_>, state: &[u8]) -> ::pyo3::PyResult<$py> {
            $py::from_bytes(py, state)
        }

        impl $py {
            /// Adds the class (and its unpickling function) to the module.
            pub fn register(m: &::pyo3::Bound<'_, ::pyo3::types::PyModule>) -> ::pyo3::PyResult<()> {
                use ::pyo3::types::PyModuleMethods;
                m.add_function(::pyo3::wrap_pyfunction!($restore, m)?)?;
                m.add_class::<$py>()
            }
        }
    };
}

pub(crate) use karmed_engine;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EngineLock>()
}
