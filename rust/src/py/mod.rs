//! Python bindings (`dpbandits._core`). Conversion, shape checks and GIL
//! release only: every computation is a call into the pure-Rust core.
//!
//! # The shared engine surface, written once
//!
//! Every engine class shares part of its Python surface: learners have
//! `t`, `horizon`, `reseed`, `noise_parameters` and `_factory` (and, with a
//! secure mode, `use_os_entropy` and `os_entropy`); counters have `add`,
//! `add_many`, `release`, `_release_runs` and their getters; everything
//! that checkpoints has `to_bytes`, `from_bytes`, `__reduce__` and a
//! `_restore_*` function. The declarative macro `engine_methods!` writes
//! these once: it takes a class's own methods and the names of the shared
//! parts it has, and emits the class's single `#[pymethods]` block with
//! both, its unpickling function and its `register`.
//!
//! Why a `macro_rules!` and not the alternatives (PyO3 0.27):
//! - `multiple-pymethods` (several `#[pymethods]` blocks per class) pulls
//!   in the `inventory` crate, which collects the blocks at load time
//!   through linker sections; the PyO3 guide says it is not supported on
//!   every platform (e.g. Wasm) and is off by default for fewer
//!   dependencies and faster compilation. The macro needs nothing beyond
//!   the PyO3 we build and keeps one `#[pymethods]` block per class.
//! - One generic binding over an engine trait is not possible as such:
//!   `#[pyclass]` types may not have generic parameters (the guide's
//!   advice for that case is this very pattern, a macro that expands to a
//!   concrete class per type). Type erasure (`Box<dyn Engine>` behind one
//!   class) would lose each engine's own methods and Python type.
//! - The macro expands to the same code we wrote by hand, so build time
//!   and the abi3 wheel (`abi3-py310`) are unchanged; it uses only the
//!   public PyO3 API (`#[pymethods]`, `#[pyfunction]`, `IntoPyObject`).
//!   The core engines need no binding trait: the parts call the engines'
//!   methods by name (`to_bytes`, `from_bytes`, `reseed`, `config`, ...), so
//!   the core stays free of Python concerns.
//!
//! # Adding an engine's bindings
//!
//! 1. Declare the class as plain code, one field holding the core engine:
//!    ```ignore
//!    /// What it is (paper, algorithm); built by `dpbandits.learners.x`.
//!    #[pyclass(module = "dpbandits._core", name = "XEngine")]
//!    pub struct PyX {
//!        inner: X,
//!    }
//!    ```
//! 2. Write its methods inside the macro, after a header naming the field,
//!    the unpickling function (new name, `_restore_x`) and the shared parts:
//!    ```ignore
//!    engine_methods! {
//!        PyX { inner: X }, restore _restore_x, shared [learner, secure, state];
//!
//!        #[new]
//!        #[pyo3(signature = (k, horizon, *, seed=None))]
//!        fn new(k: usize, horizon: u64, seed: Option<u64>) -> PyResult<Self> { ... }
//!
//!        fn select(&mut self) -> PyResult<usize> { ... }
//!    }
//!    ```
//!    Parts (each names what the engine must provide):
//!    - `learner`: getters `t`, `horizon`; `reseed`, `noise_parameters`
//!      (engine: `t()`, `config()` with a `horizon` field and serde
//!      `Serialize`, `reseed(&SeedSequence)`); then exactly one of
//!      `secure` (`_factory` with the entropy mode, `use_os_entropy`,
//!      `os_entropy`) or `seeded` (`_factory` only); the config is `Clone`
//!      and a `LearnerFactory`.
//!    - `contextual` (a (k, d) decision set: `select(actions)`,
//!      `observe(x, reward)`, `d`; engine: `learners::SelectRows`, which
//!      every `UcbLearner` has, `observe(&[f64], f64)`, `config().d`); with
//!      `ucb`, also `ucb(actions)` (engine: a `UcbLearner`). The decision
//!      set is read in place when C-contiguous (`learners::with_decision_set`).
//!      The part also implements `online_call::ContextualEngine` (the same
//!      two calls on Rust values, for the learner's online call); a new
//!      contextual class joins `online_call::direct_calls`.
//!      The K-armed engines have their own macro, `karmed::karmed_engine!`
//!      (the online protocol over the delayed-feedback reduction, and a
//!      lock taken in Rust).
//!    - `counter`: a continual counter's `add`, `add_many`, `release`,
//!      `_release_runs` and getters.
//!    - `rounds`: an environment played round by round (fields `env`,
//!      `set`, `t`): `next_round`, `reward`, `t`.
//!    - `state` when the engine has `to_bytes()` and `from_bytes(&[u8])`
//!      (this writes [`Snapshot`]), or `pickle` after a hand-written
//!      `impl Snapshot` for a class with more fields; both need
//!      `restore _restore_x` in the header (leave it out for a class that
//!      does not pickle).
//!
//!    Plain getters that return the engine's method of the same name go
//!    in an optional clause after the parts:
//!    `shared [...], getters [psd_failures: u64, committed: Option<usize>];`.
//!    Do not write a part's methods again in the block: PyO3 rejects a
//!    duplicate name at compile time. rustfmt does not format inside a
//!    macro call: keep the house layout (120 columns) by hand there.
//! 3. Register it: `PyX::register(m)?` in the file's `register` (adds the
//!    class and `_restore_x`); a new file also gets a line in `_core` below.
//! 4. Stubs: add the class to `python/dpbandits/_core.pyi` as `@final`,
//!    deriving from the stub-only protocols of its parts (`_Pickled`,
//!    `_Learner`, `_SecureLearner`, `_Counter`), with its own methods and
//!    `__new__` (not `__init__`); add its names to `__all__`.
//!    `tests/test_typing.py` runs `mypy.stubtest` and fails on any drift.

// PyO3 hands extracted arguments (array views, strings) to functions by
// value; borrowing them is not an option the macros offer.
#![allow(clippy::needless_pass_by_value)]
// A Python function's keyword arguments are its Rust parameters, one to
// one: constructors take many.
#![allow(clippy::too_many_arguments)]

/// What `to_bytes`, `from_bytes` and pickling of a class read and write:
/// the whole state, node noise and generators included, so that a restored
/// object continues exactly. `engine_methods!` writes it for a class that
/// wraps one core value (part `state`); a class with more fields writes it
/// by hand and asks for part `pickle`.
pub(crate) trait Snapshot: Sized {
    fn snapshot(&self) -> Vec<u8>;
    fn restore(state: &[u8]) -> crate::Result<Self>;
}

/// The one `#[pymethods]` block of an engine class: the class's own
/// methods, then the shared surface named in `shared [...]`; with it the
/// class's unpickling function and `register` (see the module
/// documentation, "Adding an engine's bindings").
macro_rules! engine_methods {
    (
        $py:ident { $field:ident: $inner:ty } $(, restore $restore:ident)?, shared [$($part:ident),* $(,)?]
        $(, getters [$($getter:ident: $get:ty),* $(,)?])?;
        $($own:tt)*
    ) => {
        engine_methods!(@part ($py, $field, $inner, [$($restore)?]) [$($own)*
            $($(
                #[getter]
                fn $getter(&self) -> $get {
                    self.$field.$getter()
                }
            )*)?
        ] [] $($part)*);
    };

    // Every part written: the single `#[pymethods]` block, then the items.
    (@part ($py:ident, $field:ident, $inner:ty, [$($restore:ident)?]) [$($methods:tt)*] [$($items:tt)*]) => {
        #[::pyo3::pymethods]
        impl $py {
            $($methods)*
        }

        $($items)*

        impl $py {
            /// Adds the class (and its unpickling function) to the module.
            pub fn register(m: &::pyo3::Bound<'_, ::pyo3::types::PyModule>) -> ::pyo3::PyResult<()> {
                use ::pyo3::types::PyModuleMethods;
                $(m.add_function(::pyo3::wrap_pyfunction!($restore, m)?)?;)?
                m.add_class::<$py>()
            }
        }
    };

    // A learner engine: round, horizon, reseeding, its configuration.
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] learner $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*
            #[getter]
            fn t(&self) -> u64 {
                self.$field.t()
            }

            #[getter]
            fn horizon(&self) -> u64 {
                self.$field.config().horizon
            }

            /// Inputs recorded outside the declared bounds and clipped into
            /// them (`bounds="clip"`).
            #[getter]
            fn clipped_rewards(&self) -> u64 {
                self.$field.clipped_rewards()
            }

            /// Draws all future noise from a new root (`None`: operating-system
            /// entropy). Past releases are unchanged.
            #[pyo3(signature = (seed=None))]
            fn reseed(&mut self, seed: Option<u64>) -> ::pyo3::PyResult<()> {
                self.$field.reseed(&$crate::py::mechanisms::seeds(seed)?);
                Ok(())
            }

            /// The configuration this engine was built with, as plain values
            /// (`as_json`: their JSON text); see `dpbandits.checkpoint`; read-only.
            /// The 32-byte keys of the engine's seeded (ChaCha8) generators,
            /// fixed from construction or reseeding (see `generator_keys`);
            /// compared on load with those of the engine built from the header's seed.
            fn _generator_keys<'py>(&self, py: ::pyo3::Python<'py>) -> Vec<::pyo3::Bound<'py, ::pyo3::types::PyBytes>> {
                $crate::py::generator_keys::generator_keys(&self.$field)
                    .iter()
                    .map(|key| ::pyo3::types::PyBytes::new(py, key))
                    .collect()
            }

            #[pyo3(signature = (as_json=false))]
            fn noise_parameters<'py>(
                &self,
                py: ::pyo3::Python<'py>,
                as_json: bool,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::PyAny>> {
                $crate::py::config_values(py, self.$field.config(), as_json)
            }
        ] [$($i)*] $($rest)*);
    };

    // A learner without a secure mode: every replicate of the simulation
    // loop seeded.
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] seeded $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*
            /// The configuration, for the simulation loop (one engine per replicate).
            fn _factory(&self) -> $crate::py::sim::PyLearnerFactory {
                $crate::py::sim::PyLearnerFactory::with_entropy(self.$field.config().clone(), false)
            }
        ] [$($i)*] $($rest)*);
    };

    // A learner with a secure mode (privacy noise from the operating
    // system), which the simulation loop's replicates inherit.
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] secure $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*
            /// The configuration, for the simulation loop (one engine per replicate).
            fn _factory(&self) -> $crate::py::sim::PyLearnerFactory {
                let config = self.$field.config().clone();
                $crate::py::sim::PyLearnerFactory::with_entropy(config, self.$field.os_entropy())
            }

            /// Every privacy noise draw from the operating system from now on
            /// (secure mode; before the first round).
            fn use_os_entropy(&mut self) -> ::pyo3::PyResult<()> {
                $crate::py::errors::IntoPy::py_err(self.$field.use_os_entropy())
            }

            /// Whether privacy noise comes from the operating system.
            #[getter]
            fn os_entropy(&self) -> bool {
                self.$field.os_entropy()
            }
        ] [$($i)*] $($rest)*);
    };

    // A continual counter (tree or factorization): adding, releasing,
    // audit runs and the configuration getters.
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] counter $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*
            /// The lattice exponent j (None: floating-point noise).
            #[getter]
            fn secure_exponent(&self) -> Option<i32> {
                self.$field.secure_exponent()
            }

            /// Whether draws come from the operating system.
            #[getter]
            fn os_entropy(&self) -> bool {
                self.$field.os_entropy()
            }

            /// `runs` independent runs on `values` (first axis = rounds): every
            /// release, shape (runs, rounds, *shape). For privacy audits; the
            /// counter must be fresh and stays at t = 0. Releases the GIL.
            fn _release_runs<'py>(
                &mut self,
                py: ::pyo3::Python<'py>,
                values: ::numpy::PyReadonlyArrayDyn<'py, f64>,
                runs: usize,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArrayDyn<f64>>> {
                use ::numpy::{IntoPyArray, PyArrayMethods};
                let (rounds, data) = $crate::py::arrays::rows("values", &values, self.$field.shape())?;
                let inner = &mut self.$field;
                let out = $crate::py::errors::IntoPy::py_err(py.detach(|| inner.release_runs(&data, runs)))?;
                let mut dims = vec![runs, rounds];
                dims.extend_from_slice(self.$field.shape());
                out.into_pyarray(py).reshape(dims)
            }

            /// Adds the next value (an array of the counter's shape).
            fn add(&mut self, value: ::numpy::PyReadonlyArrayDyn<'_, f64>) -> ::pyo3::PyResult<()> {
                let (shape, data) = $crate::py::arrays::row_major(&value);
                $crate::py::arrays::expect_shape("value", &shape, self.$field.shape())?;
                $crate::py::errors::IntoPy::py_err(self.$field.add(&data))
            }

            /// Adds many values (first axis = rounds); releases the GIL.
            fn add_many(
                &mut self,
                py: ::pyo3::Python<'_>,
                values: ::numpy::PyReadonlyArrayDyn<'_, f64>,
            ) -> ::pyo3::PyResult<()> {
                let (_, data) = $crate::py::arrays::rows("values", &values, self.$field.shape())?;
                let dim = self.$field.dim();
                let inner = &mut self.$field;
                let added = py.detach(|| data.chunks_exact(dim).try_for_each(|row| inner.add(row)));
                $crate::py::errors::IntoPy::py_err(added)
            }

            /// The current noisy prefix sum.
            fn release<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArrayDyn<f64>>> {
                use ::numpy::{IntoPyArray, PyArrayMethods};
                self.$field.release().to_vec().into_pyarray(py).reshape(self.$field.shape().to_vec())
            }

            #[getter]
            fn t(&self) -> u64 {
                self.$field.t()
            }

            #[getter]
            fn noise_terms(&self) -> u32 {
                self.$field.noise_terms()
            }

            #[getter]
            fn horizon(&self) -> u64 {
                self.$field.horizon()
            }

            #[getter]
            fn shape(&self) -> Vec<usize> {
                self.$field.shape().to_vec()
            }

            /// The noise value (the tuple the constructor took).
            #[getter]
            fn noise<'py>(&self, py: ::pyo3::Python<'py>) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::types::PyTuple>> {
                $crate::py::noise::noise_wire(py, self.$field.noise())
            }
        ] [$($i)*] $($rest)*);
    };

    // A contextual linear learner: a (k, d) decision set in, the played
    // row's features and reward back.
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] contextual $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*
            #[getter]
            fn d(&self) -> usize {
                self.$field.config().d
            }

            /// Index of the action (row of `actions`) to play.
            fn select(&mut self, actions: ::numpy::PyReadonlyArrayDyn<'_, f64>) -> ::pyo3::PyResult<usize> {
                $crate::py::online_call::ContextualEngine::select_view(self, &actions)
            }

            /// Records the played features `x` and its reward; True when
            /// this is the first pair the bounds policy clipped.
            fn observe(&mut self, x: ::numpy::PyReadonlyArrayDyn<'_, f64>, reward: f64) -> ::pyo3::PyResult<bool> {
                let (shape, data) = $crate::py::arrays::row_major(&x);
                $crate::py::arrays::expect_shape("x", &shape, &[self.$field.config().d])?;
                $crate::py::online_call::ContextualEngine::observe_row(self, &data, reward)
            }

            /// `select` on each decision set of `decision_sets` (n, k, d), the
            /// GIL released: (the selections made, the error that stopped the
            /// batch or None).
            fn select_many<'py>(
                &mut self,
                py: ::pyo3::Python<'py>,
                decision_sets: ::numpy::PyReadonlyArrayDyn<'py, f64>,
            ) -> ::pyo3::PyResult<$crate::py::learners::Batch<'py, i64>> {
                let d = self.$field.config().d;
                $crate::py::learners::select_many(py, &mut self.$field, &decision_sets, d)
            }

            /// `observe` of each row of `xs` (n, d) with its reward, the GIL
            /// released: (rows recorded, the error that stopped the batch or None).
            fn observe_many<'py>(
                &mut self,
                py: ::pyo3::Python<'py>,
                xs: ::numpy::PyReadonlyArrayDyn<'py, f64>,
                rewards: ::numpy::PyReadonlyArrayDyn<'py, f64>,
            ) -> ::pyo3::PyResult<(usize, Option<::pyo3::Py<::pyo3::PyAny>>)> {
                let d = self.$field.config().d;
                $crate::py::learners::observe_many(py, &mut self.$field, &xs, &rewards, d, |e, x, r| e.observe(x, r))
            }

        ] [$($i)*
            impl $crate::py::online_call::ContextualEngine for $py {
                fn select_view(&mut self, actions: &::numpy::PyReadonlyArrayDyn<'_, f64>) -> ::pyo3::PyResult<usize> {
                    let d = self.$field.config().d;
                    $crate::py::learners::select_in_place(&mut self.$field, actions, d)
                }

                fn observe_row(&mut self, x: &[f64], reward: f64) -> ::pyo3::PyResult<bool> {
                    $crate::py::arrays::expect_shape("x", &[x.len()], &[self.$field.config().d])?;
                    let fresh = self.$field.clipped_rewards() == 0;
                    $crate::py::errors::IntoPy::py_err(self.$field.observe(x, reward))?;
                    Ok(fresh && self.$field.clipped_rewards() > 0)
                }
            }
        ] $($rest)*);
    };

    // A contextual learner's score of every action of a decision set.
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] ucb $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*
            /// UCB of every row of `actions`.
            fn ucb<'py>(
                &mut self,
                py: ::pyo3::Python<'py>,
                actions: ::numpy::PyReadonlyArrayDyn<'py, f64>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArray1<f64>>> {
                use ::numpy::IntoPyArray;
                let d = self.$field.config().d;
                let inner = &mut self.$field;
                let score = |set: $crate::env::DecisionRows<'_>| {
                    $crate::policy::UcbLearner::scores(inner, set).map(<[f64]>::to_vec)
                };
                let scores = $crate::py::learners::with_decision_set(&actions, d, score)?;
                Ok($crate::py::errors::IntoPy::py_err(scores)?.into_pyarray(py))
            }

        ] [$($i)*] $($rest)*);
    };

    // An environment played round by round from Python (fields `env`,
    // `set`: the current decision set, `t`: the round).
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] rounds $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*
            /// The next round's decision set, shape (k, d).
            fn next_round<'py>(
                &mut self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::numpy::PyArray2<f64>>> {
                use ::numpy::{IntoPyArray, PyArrayMethods};
                self.t += 1;
                let drawn = $crate::env::Environment::next_round(&mut self.$field, self.t, &mut self.set);
                $crate::py::errors::IntoPy::py_err(drawn)?;
                self.set.features.clone().into_pyarray(py).reshape([self.set.k, self.set.d])
            }

            /// Reward of `index` in the current round.
            fn reward(&mut self, index: usize) -> ::pyo3::PyResult<f64> {
                if self.t == 0 {
                    let e = $crate::error::Error::State("call next_round() before reward()".into());
                    return Err($crate::py::errors::to_py(e));
                }
                match $crate::py::errors::IntoPy::py_err($crate::env::Environment::feedback(&mut self.$field, index))? {
                    $crate::env::Feedback::Reward(y) => Ok(y),
                    $crate::env::Feedback::Losses(_) => unreachable!("bandit environment"),
                }
            }

            #[getter]
            fn t(&self) -> u64 {
                self.t
            }
        ] [$($i)*] $($rest)*);
    };

    // A class that wraps one core value with `to_bytes`/`from_bytes`:
    // its snapshot is that value's, and it pickles.
    (@part ($py:ident, $field:ident, $inner:ty, $restore:tt) [$($m:tt)*] [$($i:tt)*] state $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, $restore) [$($m)*] [$($i)*
            impl $crate::py::Snapshot for $py {
                fn snapshot(&self) -> Vec<u8> {
                    self.$field.to_bytes()
                }

                fn restore(state: &[u8]) -> $crate::Result<Self> {
                    Ok($py { $field: <$inner>::from_bytes(state)? })
                }
            }
        ] pickle $($rest)*);
    };

    // `to_bytes`, `from_bytes` and pickling through the class's `Snapshot`.
    (@part ($py:ident, $field:ident, $inner:ty, [$restore:ident]) [$($m:tt)*] [$($i:tt)*] pickle $($rest:ident)*) => {
        engine_methods!(@part ($py, $field, $inner, [$restore]) [$($m)*
            /// Serialized state (node noise and generators included).
            fn to_bytes<'py>(&self, py: ::pyo3::Python<'py>) -> ::pyo3::Bound<'py, ::pyo3::types::PyBytes> {
                ::pyo3::types::PyBytes::new(py, &$crate::py::Snapshot::snapshot(self))
            }

            /// The object `to_bytes` was called on, continuing exactly; a
            /// state that is not one (its parts disagree: see each engine's
            /// `from_bytes`) raises `dpbandits.errors.CheckpointError`.
            #[staticmethod]
            fn from_bytes(state: &[u8]) -> ::pyo3::PyResult<Self> {
                <Self as $crate::py::Snapshot>::restore(state).map_err($crate::py::errors::checkpoint_error)
            }

            fn __reduce__<'py>(
                &self,
                py: ::pyo3::Python<'py>,
            ) -> ::pyo3::PyResult<::pyo3::Bound<'py, ::pyo3::types::PyTuple>> {
                use ::pyo3::types::PyAnyMethods;
                let restore = py.import("dpbandits._core")?.getattr(stringify!($restore))?;
                ::pyo3::IntoPyObject::into_pyobject((restore, (self.to_bytes(py),)), py)
            }
        ] [$($i)*
            #[doc = concat!("Unpickling entry point for `", stringify!($py), "`.")]
            #[::pyo3::pyfunction]
            fn $restore(state: &[u8]) -> ::pyo3::PyResult<$py> {
                $py::from_bytes(state)
            }
        ] $($rest)*);
    };
}

mod arrays;
mod bai;
mod bai_fixed_budget;
mod bound_slot;
mod class_methods;
mod design;
mod elimination;
mod engine_base;
mod envs;
mod errors;
mod generator_keys;
pub(crate) mod karmed;
mod learners;
mod linear_policy;
mod linucb_trust;
mod logistic;
mod mab;
mod mechanisms;
pub(crate) mod noise;
mod online_call;
mod online_learning;
mod phased_mab;
mod private_experts;
mod replay;
mod reweighted;
mod secure;
mod sim;

use pyo3::prelude::*;

/// An engine's configuration (noise laws and scales, lattice exponents,
/// shift, padding, horizon, bounds, confidence constants) as nested plain
/// Python values (dicts, lists, numbers, strings), or with `as_json` as
/// the JSON text they decode from: what a checkpoint's engine bytes were
/// built with, compared on load with the configuration the checkpoint's
/// header calls for (`dpbandits.checkpoint`). Enum variants appear as
/// `{"Variant": {...}}` (or the bare name for unit variants); floats are
/// exact (shortest round-trip decimal).
pub(crate) fn config_values<'py, T: serde::Serialize>(
    py: Python<'py>,
    config: &T,
    as_json: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(config)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("engine configuration: {e}")))?;
    if as_json {
        return Ok(pyo3::types::PyString::new(py, &text).into_any());
    }
    py.import("json")?.call_method1("loads", (text,))
}

/// Which build of the hot kernels this process runs: "avx2-fma" or
/// "baseline" (see `cpu_dispatch`; `DPBANDITS_CPU_DISPATCH=baseline`
/// forces the latter).
#[pyfunction]
fn kernel_build() -> &'static str {
    match crate::cpu_dispatch::kernel_build() {
        crate::cpu_dispatch::KernelBuild::Avx2Fma => "avx2-fma",
        crate::cpu_dispatch::KernelBuild::Baseline => "baseline",
    }
}

/// The extension module. Declared once, here.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(kernel_build, m)?)?;
    mechanisms::register(m)?;
    design::register(m)?;
    learners::register(m)?;
    linear_policy::register(m)?;
    linucb_trust::register(m)?;
    envs::register(m)?;
    sim::register(m)?;
    karmed::register(m)?;
    mab::register(m)?;
    elimination::register(m)?;
    online_learning::register(m)?;
    online_call::register(m)?;
    engine_base::register(m)?;
    m.add_function(wrap_pyfunction!(class_methods::learner_method, m)?)?;
    replay::register(m)?;
    secure::register(m)?;
    phased_mab::register(m)?;
    private_experts::register(m)?;
    bai::register(m)?;
    bai_fixed_budget::register(m)?;
    reweighted::register(m)?;
    logistic::register(m)?;
    Ok(())
}
