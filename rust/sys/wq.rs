// SPDX-License-Identifier: GPL-2.0
//! srnic's own workqueues: "srnic", where connection set-up and timers run,
//! "srnic_dp", where QPs' receive and transmit work runs (per CPU, high
//! priority: see `wq.c`), and "srnic_kv", where kernel clients'
//! notifications are delivered (so that a client's callback never holds up
//! srnic's data path). All are `WQ_MEM_RECLAIM`: a kernel client's I/O (a
//! block device's writeback) may be what memory reclaim waits for. The module
//! destroys them on unload, which waits for every queued item, so no work
//! item can run module code after the module is gone.

use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::{bindings, c_str, prelude::*, workqueue::Queue};

extern "C" {
    fn srnic_alloc_wq(name: *const kernel::ffi::c_char, data_path: bool) -> *mut bindings::workqueue_struct;
}

static SRNIC_WQ: AtomicPtr<bindings::workqueue_struct> = AtomicPtr::new(core::ptr::null_mut());
static SRNIC_DP_WQ: AtomicPtr<bindings::workqueue_struct> = AtomicPtr::new(core::ptr::null_mut());
static SRNIC_KV_WQ: AtomicPtr<bindings::workqueue_struct> = AtomicPtr::new(core::ptr::null_mut());

/// Owns the workqueues from module init to module exit.
pub(crate) struct WorkQueue(());

impl WorkQueue {
    /// Creates the workqueues "srnic" ([`queue()`]), "srnic_dp"
    /// ([`dp_queue()`]) and "srnic_kv" ([`kv_queue()`]).
    pub(crate) fn create() -> Result<Self> {
        let me = Self(());
        for (slot, name, dp) in [
            (&SRNIC_WQ, c_str!("srnic"), false),
            (&SRNIC_DP_WQ, c_str!("srnic_dp"), true),
            (&SRNIC_KV_WQ, c_str!("srnic_kv"), false),
        ] {
            // SAFETY: the name is a static NUL-terminated string.
            let wq = unsafe { srnic_alloc_wq(name.as_char_ptr(), dp) };
            if wq.is_null() {
                // `me` destroys the one made already.
                return Err(ENOMEM);
            }
            slot.store(wq, Ordering::Release);
        }
        Ok(me)
    }
}

impl Drop for WorkQueue {
    fn drop(&mut self) {
        // The clients' queue first: its items may end a context, whose
        // teardown queues work on the others.
        for slot in [&SRNIC_KV_WQ, &SRNIC_DP_WQ, &SRNIC_WQ] {
            let wq = slot.swap(core::ptr::null_mut(), Ordering::AcqRel);
            if !wq.is_null() {
                // SAFETY: `wq` came from `srnic_alloc_wq` and nothing queues on
                // it any more (the device is deregistered, no file is open and
                // no kernel client is loaded); this drains it.
                unsafe { bindings::destroy_workqueue(wq) };
            }
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

/// The queue of QPs' receive and transmit work. Only called while the module
/// is loaded (by objects that an open file or a kernel client owns).
pub(crate) fn dp_queue() -> &'static Queue {
    let wq = SRNIC_DP_WQ.load(Ordering::Acquire);
    if wq.is_null() {
        return kernel::workqueue::system_highpri();
    }
    // SAFETY: the queue lives until module exit, after every user is gone.
    unsafe { Queue::from_raw(wq) }
}

/// The queue of kernel clients' notifications. Only called while the module
/// is loaded (by a kernel client's context).
pub(crate) fn kv_queue() -> &'static Queue {
    let wq = SRNIC_KV_WQ.load(Ordering::Acquire);
    if wq.is_null() {
        return kernel::workqueue::system_unbound();
    }
    // SAFETY: the queue lives until module exit, after every user is gone.
    unsafe { Queue::from_raw(wq) }
}
