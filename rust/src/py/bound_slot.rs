//! What a learner's native base holds for its calls (its online call, or
//! its engine and the engine's calls): set once and read with a plain load
//! in every call, and replaceable in place, rarely (a learner bound again
//! to a new engine).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// A value set first in `first` (read with a plain load), then, once
/// replaced, in `later` (behind a lock) with `rebound` set.
pub(crate) struct BoundSlot<T> {
    first: OnceLock<T>,
    later: Mutex<Option<T>>,
    rebound: AtomicBool,
}

impl<T> Default for BoundSlot<T> {
    fn default() -> Self {
        BoundSlot { first: OnceLock::new(), later: Mutex::new(None), rebound: AtomicBool::new(false) }
    }
}

impl<T> BoundSlot<T> {
    /// `f` on the value; None when none is set. A replaced value is read
    /// through `copy` (a new reference): a call that replaces the value
    /// again cannot free it under the running one.
    #[inline]
    pub(crate) fn with<R>(&self, copy: impl FnOnce(&T) -> T, f: impl FnOnce(&T) -> R) -> Option<R> {
        if !self.rebound.load(Ordering::Acquire) {
            return self.first.get().map(f);
        }
        let value = self.copy(copy)?;
        Some(f(&value))
    }

    /// `copy` of the value (e.g. a new reference of it); None when none is set.
    pub(crate) fn copy<U>(&self, copy: impl FnOnce(&T) -> U) -> Option<U> {
        if !self.rebound.load(Ordering::Acquire) {
            return self.first.get().map(copy);
        }
        self.later.lock().unwrap_or_else(PoisonError::into_inner).as_ref().map(copy)
    }

    /// Sets the value (None: none).
    pub(crate) fn set(&self, value: Option<T>) {
        let mut value = value;
        if !self.rebound.load(Ordering::Acquire) {
            if let Some(v) = value {
                match self.first.set(v) {
                    Ok(()) => return,
                    Err(v) => value = Some(v),
                }
            }
        }
        *self.later.lock().unwrap_or_else(PoisonError::into_inner) = value;
        self.rebound.store(true, Ordering::Release);
    }
}
