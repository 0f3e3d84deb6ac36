// SPDX-License-Identifier: GPL-2.0
//! Module-lifetime objects: an `Arc<T>` made reachable through a `static` at
//! module init and released at module exit (the RMPP node table).
//!
//! What makes [`Global::get`] sound is the module's lifetime, as for the
//! workqueue of [`super::wq`]: the object is installed before the device is
//! registered and released after it is gone, when no file is open any more, so
//! every caller (which runs for an open file) is done with it by then. Only the
//! module's own object may hold the [`Installed`] owner.

use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::sync::Arc;

/// A `static` slot for one module-lifetime object.
pub(crate) struct Global<T> {
    ptr: AtomicPtr<T>,
}

impl<T: Send + Sync + 'static> Global<T> {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        Self {
            ptr: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Makes `obj` the slot's object until the returned owner is dropped.
    pub(crate) fn install(&'static self, obj: Arc<T>) -> Installed<T> {
        self.ptr.store(Arc::into_raw(obj).cast_mut(), Ordering::Release);
        Installed { slot: self }
    }

    /// The slot's object. Only `None` outside the module's lifetime.
    pub(crate) fn get(&'static self) -> Option<&'static T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: a non-null pointer is the object an `Installed` owns, which
        // lives until module exit, after every file (and so every caller) is gone.
        unsafe { p.as_ref() }
    }
}

/// Owns the object of a [`Global`] from module init to module exit.
pub(crate) struct Installed<T: 'static> {
    slot: &'static Global<T>,
}

impl<T: 'static> Drop for Installed<T> {
    fn drop(&mut self) {
        let p = self.slot.ptr.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: `p` came from `Arc::into_raw` in `install`; no file is open any
            // more (the device is gone first), so nothing uses the object.
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}
