//! The native base of the learners whose `select` and `update` are their
//! engine's own (the K-armed and fixed-budget best-arm identification
//! learners, `dpbandits.learners.online.EngineMethods`): it holds the
//! engine and the engine class's calls on Rust values, which the learner
//! class's method descriptors (`super::class_methods`) reach in one Rust
//! call, with no bound method stored in the instance.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::types::{PyDict, PyTuple};
use pyo3::PyClass;

use super::bai_fixed_budget::PyFixedBudgetBai;
use super::bound_slot::BoundSlot;
use super::mab::PyMab;
use super::phased_mab::PyPhasedMab;

/// What an engine class's Python `select()` and
/// `update(arm_or_reward, reward=None)` do, called from Rust (the engine
/// takes its lock and checks its arguments, as from Python).
pub(crate) trait ArmedCall {
    fn call_select(&self, py: Python<'_>) -> PyResult<usize>;
    fn call_update(&self, py: Python<'_>, first: &Bound<'_, PyAny>, second: Option<&Bound<'_, PyAny>>) -> PyResult<()>;
}

/// An engine class's [`ArmedCall::call_update`], on the engine object.
type UpdateCall = fn(&Bound<'_, PyAny>, &Bound<'_, PyAny>, Option<&Bound<'_, PyAny>>) -> PyResult<()>;

/// The [`ArmedCall`] calls of one engine class, on the engine object.
#[derive(Clone, Copy)]
pub(crate) struct ArmedCalls {
    select: fn(&Bound<'_, PyAny>) -> PyResult<usize>,
    update: UpdateCall,
}

fn armed_select<T>(engine: &Bound<'_, PyAny>) -> PyResult<usize>
where
    T: ArmedCall + PyClass<Frozen = True> + Sync,
{
    engine.cast_exact::<T>()?.get().call_select(engine.py())
}

fn armed_update<T>(
    engine: &Bound<'_, PyAny>,
    first: &Bound<'_, PyAny>,
    second: Option<&Bound<'_, PyAny>>,
) -> PyResult<()>
where
    T: ArmedCall + PyClass<Frozen = True> + Sync,
{
    engine.cast_exact::<T>()?.get().call_update(engine.py(), first, second)
}

/// The calls of `engine`'s class, when it is one of the engine classes
/// with [`ArmedCall`].
fn armed_calls(engine: &Bound<'_, PyAny>) -> Option<ArmedCalls> {
    macro_rules! classes {
        ($($class:ty),*) => {
            $(if engine.is_exact_instance_of::<$class>() {
                return Some(ArmedCalls { select: armed_select::<$class>, update: armed_update::<$class> });
            })*
        };
    }
    classes!(PyMab, PyPhasedMab, PyFixedBudgetBai);
    None
}

/// The native base of the learners that call their engine's own methods
/// (see the module docs). `dpbandits.learners.online.EngineMethods`
/// installs the method descriptors on every learner class and sets the
/// engine (`_armed_engine`) when the learner's engine is set.
#[pyclass(frozen, subclass, module = "dpbandits._core", name = "EngineBase")]
#[derive(Default)]
pub struct EngineBase {
    engine: BoundSlot<(Py<PyAny>, ArmedCalls)>,
}

impl EngineBase {
    /// `f` on the engine and its calls; an error when no engine is set.
    #[inline]
    fn with_engine<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Bound<'_, PyAny>, ArmedCalls) -> PyResult<R>,
    ) -> PyResult<R> {
        self.engine
            .with(|(e, c)| (e.clone_ref(py), *c), |(e, c)| f(e.bind(py), *c))
            .unwrap_or_else(|| Err(PyTypeError::new_err("the learner's engine is not set")))
    }

    /// The engine's `select()`.
    pub(crate) fn select(&self, py: Python<'_>) -> PyResult<usize> {
        self.with_engine(py, |e, c| (c.select)(e))
    }

    /// The engine's `update(*args, **kwargs)`: one or two positional
    /// arguments in Rust, anything else through the engine's Python method
    /// (its errors).
    pub(crate) fn update(
        &self,
        py: Python<'_>,
        args: &[Bound<'_, PyAny>],
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        self.with_engine(py, |e, c| match (args, kwargs) {
            ([a], None) => (c.update)(e, a, None),
            ([a, b], None) => (c.update)(e, a, Some(b)),
            _ => {
                e.call_method(pyo3::intern!(py, "update"), PyTuple::new(py, args)?, kwargs)?;
                Ok(())
            }
        })
    }
}

#[pymethods]
impl EngineBase {
    /// Any arguments (the learner's ``__init__`` takes them).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        EngineBase::default()
    }

    /// The learner's engine (None: not set).
    #[getter(_armed_engine)]
    fn get_engine(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.engine.copy(|(e, _)| e.clone_ref(py))
    }

    /// Sets the engine: an engine class with Rust calls (a TypeError
    /// otherwise), or None.
    #[setter(_armed_engine)]
    fn set_engine(&self, engine: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let value = match engine {
            None => None,
            Some(e) => {
                let Some(calls) = armed_calls(&e) else {
                    let name = e.get_type().name()?;
                    return Err(PyTypeError::new_err(format!("{name} has no Rust select / update calls")));
                };
                Some((e.unbind(), calls))
            }
        };
        self.engine.set(value);
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EngineBase>()
}
