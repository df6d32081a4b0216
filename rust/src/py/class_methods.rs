//! `select` and `update` as method descriptors of each learner class
//! that derives from [`OnlineBase`], made by CPython's `PyDescr_NewMethod`
//! with the learner class as the descriptor's type.
//!
//! Why not the base's own methods: the interpreter's specialised call of a
//! method descriptor (`PRECALL_NO_KW_METHOD_DESCRIPTOR_NOARGS` and its
//! kin in CPython 3.11, `CALL_*_METHOD_DESCRIPTOR_*` later) applies when
//! `self` is exactly of the descriptor's type. A learner is an instance of
//! a Python subclass of `OnlineBase`, so the base's descriptors take the
//! generic call path, where the descriptor checks `self` with
//! `isinstance` and PyO3's method wrapper checks it again, each check a
//! walk of the learner class's MRO. A descriptor of the learner class is
//! called on the specialised path, and CPython's check of `self` (the
//! exact type there; `isinstance` on the generic path, e.g. for an
//! instance of a subclass that did not get descriptors of its own) is the
//! only one made: the functions here read `self` as an `OnlineBase` (or an
//! `EngineBase`) without checking it again.
//!
//! The calls are [`OnlineBase::select_noargs`], [`OnlineBase::select_with`]
//! and [`OnlineBase::update_with`] (or the engine's, [`EngineBase`]):
//! keyword arguments (`policy_version`, a loss vector by name) and more
//! than two positional arguments go to the learner's checked Python
//! methods (or the engine's), which accept or refuse them.
//!
//! This is the one module of the Python layer that allows `unsafe`: the
//! method definitions CPython reads, the functions it calls through them
//! (entered through PyO3's own trampolines, which hold the GIL token,
//! count the attached thread and turn a panic into `PanicException`, as
//! for every `#[pymethods]` function), and the reading of their
//! arguments. Each `unsafe` block states its condition.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::ffi::CStr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::impl_::trampoline;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::PyClass;

use super::engine_base::EngineBase;
use super::online_call::OnlineBase;

/// A method definition that CPython reads through a pointer for as long as
/// the descriptors made from it live (a static: the whole process).
struct Def(UnsafeCell<ffi::PyMethodDef>);

// SAFETY: CPython only reads a method definition (it never writes one),
// and the definition holds pointers to static data and functions only.
unsafe impl Sync for Def {}

/// The documentation of both `select()` forms.
const SELECT_DOC: &CStr = c"select($self, /)\n--\n\nThe learner's select (see the class's documentation).";

static SELECT_NOARGS: Def = Def::noargs(c"select", select_noargs, SELECT_DOC);

impl Def {
    /// A `METH_NOARGS` definition.
    const fn noargs(name: &'static CStr, meth: ffi::PyCFunction, doc: &'static CStr) -> Self {
        Def(UnsafeCell::new(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: ffi::PyMethodDefPointer { PyCFunction: meth },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: doc.as_ptr(),
        }))
    }

    /// A `METH_FASTCALL | METH_KEYWORDS` definition.
    const fn fastcall(name: &'static CStr, meth: ffi::PyCFunctionFastWithKeywords, doc: &'static CStr) -> Self {
        Def(UnsafeCell::new(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: meth },
            ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: doc.as_ptr(),
        }))
    }
}

static SELECT: Def = Def::fastcall(
    c"select",
    select,
    c"select($self, /, *args, **kwargs)\n--\n\nThe learner's select (see the class's documentation).",
);

static UPDATE: Def = Def::fastcall(
    c"update",
    update,
    c"update($self, /, *args, policy_version=None)\n--\n\nThe learner's update (see the class's documentation).",
);

static UPDATE_LOSSES: Def = Def::fastcall(
    c"update",
    update,
    c"update($self, /, losses, *, policy_version=None)\n--\n\nThe learner's update (see the class's documentation).",
);

static ENGINE_SELECT: Def = Def::noargs(c"select", engine_select, SELECT_DOC);

static ENGINE_UPDATE: Def = Def::fastcall(
    c"update",
    engine_update,
    c"update($self, /, *args)\n--\n\nThe learner's update (see the class's documentation).",
);

/// The method descriptor `name` with `cls` as its type, for the learner
/// class to set as its `select` or `update`: "select_noargs", "select",
/// "update" or "update_losses" (a learner `select()`, `select(*args,
/// **kwargs)`, `update(*args, policy_version=None)`, `update(losses)`) for
/// a subclass of [`OnlineBase`]; "engine_select" or
/// "engine_update" (the engine's `select()` and `update(*args)`) for a
/// subclass of [`EngineBase`].
#[pyfunction]
pub fn learner_method<'py>(cls: &Bound<'py, PyType>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let (def, online) = match name {
        "select_noargs" => (&SELECT_NOARGS, true),
        "select" => (&SELECT, true),
        "update" => (&UPDATE, true),
        "update_losses" => (&UPDATE_LOSSES, true),
        "engine_select" => (&ENGINE_SELECT, false),
        "engine_update" => (&ENGINE_UPDATE, false),
        _ => return Err(PyValueError::new_err(format!("no learner method {name:?}"))),
    };
    let (derives, base) = if online {
        (cls.is_subclass_of::<OnlineBase>()?, "OnlineBase")
    } else {
        (cls.is_subclass_of::<EngineBase>()?, "EngineBase")
    };
    if !derives {
        return Err(PyTypeError::new_err(format!("{} does not derive from {base}", cls.name()?)));
    }
    // SAFETY: `cls` is a live type object (held by the caller) and the
    // definition is static; the call returns a new reference or NULL with
    // an exception set.
    unsafe { Bound::from_owned_ptr_or_err(cls.py(), ffi::PyDescr_NewMethod(cls.as_type_ptr(), def.0.get())) }
}

/// `slf` as the learner it is.
///
/// # Safety
///
/// `slf` is the `self` CPython passes to a function of one of the
/// definitions above whose descriptors have `T` as a base of their type:
/// the descriptors exist only with a subclass of `OnlineBase` (or of
/// `EngineBase`, for the `engine_*` definitions) as their type (see
/// [`learner_method`]), and CPython calls a descriptor's function only
/// with an instance of that type.
unsafe fn learner<T: PyClass>(py: Python<'_>, slf: *mut ffi::PyObject) -> Bound<'_, T> {
    // SAFETY: `slf` is a live object (the caller's borrowed reference), an
    // instance of a subclass of `T` (the function's condition).
    unsafe { Bound::from_borrowed_ptr(py, slf).cast_into_unchecked() }
}

/// The arguments of a vectorcall: `positional` objects, then one per name
/// of `names`.
struct Args<'a, 'py> {
    py: Python<'py>,
    values: &'a [*mut ffi::PyObject],
    positional: usize,
    names: Option<Bound<'py, PyTuple>>,
}

impl<'py> Args<'_, 'py> {
    /// The arguments CPython passes to a `METH_FASTCALL | METH_KEYWORDS`
    /// function: `nargs` objects at `args`, then one per name of
    /// `kwnames` (a tuple, or NULL for none).
    ///
    /// # Safety
    ///
    /// The arguments are those of such a call, alive for the call.
    unsafe fn new(
        py: Python<'py>,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
    ) -> Self {
        let positional = usize::try_from(nargs).unwrap_or(0);
        // SAFETY: a non-null `kwnames` is a live tuple (of strings).
        let names: Option<Bound<'py, PyTuple>> =
            (!kwnames.is_null()).then(|| unsafe { Bound::from_borrowed_ptr(py, kwnames).cast_into_unchecked() });
        let total = positional + names.as_ref().map_or(0, PyTupleMethods::len);
        let values = if total == 0 {
            &[][..]
        } else {
            // SAFETY: CPython passes `total` live objects at `args`.
            unsafe { std::slice::from_raw_parts(args, total) }
        };
        Args { py, values, positional, names }
    }

    /// Argument `i` (positional first, then the keywords' values).
    fn get(&self, i: usize) -> Bound<'py, PyAny> {
        // SAFETY: each entry is a live object for the call.
        unsafe { Bound::from_borrowed_ptr(self.py, self.values[i]) }
    }

    /// `f` on the positional arguments and the keyword arguments (up to
    /// two positional arguments and no keywords, the common call, without
    /// an allocation).
    fn with_positionals<R>(
        &self,
        f: impl FnOnce(&[Bound<'py, PyAny>], Option<&Bound<'py, PyDict>>) -> PyResult<R>,
    ) -> PyResult<R> {
        match (self.positional, &self.names) {
            (0, None) => f(&[], None),
            (1, None) => f(&[self.get(0)], None),
            (2, None) => f(&[self.get(0), self.get(1)], None),
            _ => {
                let positional: Vec<_> = (0..self.positional).map(|i| self.get(i)).collect();
                f(&positional, self.kwargs()?.as_ref())
            }
        }
    }

    /// The positional arguments as a tuple.
    fn tuple(&self) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(self.py, (0..self.positional).map(|i| self.get(i)))
    }

    /// The keyword arguments as a dictionary (None: none).
    fn kwargs(&self) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(names) = &self.names else { return Ok(None) };
        let kw = PyDict::new(self.py);
        for (j, name) in names.iter().enumerate() {
            kw.set_item(name, self.get(self.positional + j))?;
        }
        Ok(Some(kw))
    }
}

unsafe extern "C" fn select_noargs(slf: *mut ffi::PyObject, args: *mut ffi::PyObject) -> *mut ffi::PyObject {
    unsafe fn body(py: Python<'_>, slf: *mut ffi::PyObject) -> PyResult<*mut ffi::PyObject> {
        // SAFETY: CPython calls this function with the descriptor's `self`.
        let slf = unsafe { learner::<OnlineBase>(py, slf) };
        Ok(OnlineBase::select_noargs(&slf)?.into_ptr())
    }
    // SAFETY: called by CPython with the thread attached, as a METH_NOARGS function.
    unsafe { trampoline::noargs(slf, args, body) }
}

/// A `METH_FASTCALL | METH_KEYWORDS` function `$name` of the definitions
/// above: `$body` (a `PyResult` of a new reference) with the learner
/// `$slf` and its arguments `$args` (an [`Args`]).
macro_rules! fastcall {
    ($name:ident, $base:ty, |$slf:ident, $args:ident| $body:block) => {
        unsafe extern "C" fn $name(
            slf: *mut ffi::PyObject,
            args: *const *mut ffi::PyObject,
            nargs: ffi::Py_ssize_t,
            kwnames: *mut ffi::PyObject,
        ) -> *mut ffi::PyObject {
            unsafe fn body(
                py: Python<'_>,
                slf: *mut ffi::PyObject,
                args: *const *mut ffi::PyObject,
                nargs: ffi::Py_ssize_t,
                kwnames: *mut ffi::PyObject,
            ) -> PyResult<*mut ffi::PyObject> {
                // SAFETY: CPython calls this function with the descriptor's
                // `self` and the arguments of a METH_FASTCALL | METH_KEYWORDS call.
                let ($slf, $args) = unsafe { (learner::<$base>(py, slf), Args::new(py, args, nargs, kwnames)) };
                $body
            }
            // SAFETY: called by CPython with the thread attached, as a
            // METH_FASTCALL | METH_KEYWORDS function.
            unsafe { trampoline::fastcall_with_keywords(slf, args, nargs, kwnames, body) }
        }
    };
}

fastcall!(select, OnlineBase, |slf, args| {
    Ok(OnlineBase::select_with(&slf, &args.tuple()?, args.kwargs()?.as_ref())?.into_ptr())
});

fastcall!(update, OnlineBase, |slf, args| {
    args.with_positionals(|positional, kwargs| OnlineBase::update_with(&slf, positional, kwargs))?;
    Ok(slf.py().None().into_ptr())
});

unsafe extern "C" fn engine_select(slf: *mut ffi::PyObject, args: *mut ffi::PyObject) -> *mut ffi::PyObject {
    unsafe fn body(py: Python<'_>, slf: *mut ffi::PyObject) -> PyResult<*mut ffi::PyObject> {
        // SAFETY: CPython calls this function with the descriptor's `self`.
        let slf = unsafe { learner::<EngineBase>(py, slf) };
        Ok(slf.get().select(py)?.into_pyobject(py)?.into_ptr())
    }
    // SAFETY: called by CPython with the thread attached, as a METH_NOARGS function.
    unsafe { trampoline::noargs(slf, args, body) }
}

fastcall!(engine_update, EngineBase, |slf, args| {
    let py = slf.py();
    args.with_positionals(|positional, kwargs| slf.get().update(py, positional, kwargs))?;
    Ok(py.None().into_ptr())
});
