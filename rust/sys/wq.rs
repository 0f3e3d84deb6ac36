// SPDX-License-Identifier: GPL-2.0
//! srnic's own workqueue. Connection set-up, receive and transmit run on it; the
//! module destroys it on unload, which waits for every queued item, so no work
//! item can run module code after the module is gone.

use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::{bindings, c_str, prelude::*, workqueue::Queue};

extern "C" {
    fn srnic_alloc_wq(name: *const kernel::ffi::c_char) -> *mut bindings::workqueue_struct;
}

static SRNIC_WQ: AtomicPtr<bindings::workqueue_struct> = AtomicPtr::new(core::ptr::null_mut());

/// Owns the workqueue from module init to module exit.
pub(crate) struct WorkQueue(());

impl WorkQueue {
    /// Creates the unbound workqueue "srnic" and makes it [`queue()`].
    pub(crate) fn create() -> Result<Self> {
        // SAFETY: the name is a static NUL-terminated string.
        let wq = unsafe { srnic_alloc_wq(c_str!("srnic").as_char_ptr()) };
        if wq.is_null() {
            return Err(ENOMEM);
        }
        SRNIC_WQ.store(wq, Ordering::Release);
        Ok(Self(()))
    }
}

impl Drop for WorkQueue {
    fn drop(&mut self) {
        let wq = SRNIC_WQ.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !wq.is_null() {
            // SAFETY: `wq` came from `srnic_alloc_wq` and nothing queues on it any
            // more (the device is deregistered and no file is open); this drains it.
            unsafe { bindings::destroy_workqueue(wq) };
        }
    }
}

/// The raw srnic workqueue, for the glue of `sys/` (NULL before init and
/// after exit).
pub(super) fn raw() -> *mut bindings::workqueue_struct {
    SRNIC_WQ.load(Ordering::Acquire)
}

/// The srnic workqueue. Only called while the module is loaded (by objects that
/// an open file owns), when the queue exists.
pub(crate) fn queue() -> &'static Queue {
    let wq = SRNIC_WQ.load(Ordering::Acquire);
    if wq.is_null() {
        return kernel::workqueue::system_unbound();
    }
    // SAFETY: the queue lives until module exit, after every user is gone.
    unsafe { Queue::from_raw(wq) }
}
