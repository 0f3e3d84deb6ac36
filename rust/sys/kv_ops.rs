// SPDX-License-Identifier: GPL-2.0
//! A kernel client's callbacks (`struct srnic_kv_ops` of
//! `include/srnic/kverbs.h`), called through a safe type.

use crate::uapi::{SrnicEvent, SRNIC_EVENT_CQ};
use core::ffi::c_void;

/// `struct srnic_kv_ops`.
#[repr(C)]
pub(crate) struct KvOps {
    pub(crate) event: Option<unsafe extern "C" fn(*mut c_void, *const SrnicEvent)>,
    pub(crate) cq: Option<unsafe extern "C" fn(*mut c_void, u32)>,
}

/// A client's callbacks and the argument it gets back.
///
/// # Invariants
///
/// The functions and `arg` stay valid until the client is closed, and may
/// be called from any thread (the API's contract, `kverbs.h`); the client's
/// context stops calling them before it closes (`kapi::client`).
pub(crate) struct Callbacks {
    event: Option<unsafe extern "C" fn(*mut c_void, *const SrnicEvent)>,
    cq: Option<unsafe extern "C" fn(*mut c_void, u32)>,
    arg: *mut c_void,
}

// SAFETY: `arg` is the client's, passed back to its callbacks only, which
// the API's contract lets run on any CPU.
unsafe impl Send for Callbacks {}
// SAFETY: as above; nothing in it changes after it is made.
unsafe impl Sync for Callbacks {}

impl Callbacks {
    /// The callbacks of `ops` (none when null) with argument `arg`.
    ///
    /// # Safety
    ///
    /// `ops` is null or valid for the call; its functions and `arg` stay
    /// valid, callable from any thread, until the client closes.
    pub(crate) unsafe fn new(ops: *const KvOps, arg: *mut c_void) -> Self {
        // SAFETY: by the function's contract.
        let ops = unsafe { ops.as_ref() };
        // INVARIANT: by the function's contract.
        Self {
            event: ops.and_then(|o| o.event),
            cq: ops.and_then(|o| o.cq),
            arg,
        }
    }

    /// Gives `ev` to the callback it is for: `cq` for a CQ notification,
    /// `event` for every other event.
    pub(crate) fn deliver(&self, ev: &SrnicEvent) {
        if ev.event_type == SRNIC_EVENT_CQ {
            if let Some(cq) = self.cq {
                // SAFETY: a live callback and its argument (type invariant).
                unsafe { cq(self.arg, ev.handle) };
            }
        } else if let Some(event) = self.event {
            // SAFETY: as above; `ev` is valid for the call.
            unsafe { event(self.arg, ev) };
        }
    }
}
