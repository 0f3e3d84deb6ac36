// SPDX-License-Identifier: GPL-2.0
//! Allocation flags for memory srnic allocates on a user's behalf, and the
//! scope in which allocations must not start I/O.

use core::{ffi::c_uint, marker::PhantomData};
use kernel::{alloc::Flags, bindings};

extern "C" {
    fn srnic_noio_save() -> c_uint;
    fn srnic_noio_restore(flags: c_uint);
}

/// `GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN`: for every
/// allocation a user's request causes (objects, rings, tables, page arrays).
///
/// - `__GFP_ACCOUNT` charges the memory to the caller's memory cgroup;
/// - `__GFP_RETRY_MAYFAIL` makes an allocation beyond the cgroup's (or the
///   machine's) memory fail with `ENOMEM` instead of invoking the OOM killer:
///   a request that asks for too much is refused, no process is killed;
/// - `__GFP_NOWARN`: such a refusal is the caller's business, not the log's.
///
/// The 6.12 `kernel::alloc::flags` has no `__GFP_RETRY_MAYFAIL`, and `Flags`
/// cannot be built from a raw value outside the `kernel` crate.
pub(crate) const ACCOUNTED: Flags = {
    const RAW: u32 = bindings::GFP_KERNEL_ACCOUNT
        | bindings::__GFP_NOWARN
        | (1 << bindings::___GFP_RETRY_MAYFAIL_BIT);
    const _: () = assert!(core::mem::size_of::<Flags>() == core::mem::size_of::<u32>());
    const _: () = assert!(core::mem::align_of::<Flags>() == core::mem::align_of::<u32>());
    // SAFETY: `Flags` is `struct Flags(u32)`, the raw `gfp_t` and nothing else
    // (same size and alignment, asserted above); every `u32` is a valid value
    // of it, and the kernel crate hands exactly this integer to the allocator.
    unsafe { core::mem::transmute::<u32, Flags>(RAW) }
};

/// While it lives, every allocation of the current task behaves as `GFP_NOIO`
/// (`memalloc_noio_save`), whatever flags it asks for: reclaim may run but
/// starts no I/O. A kernel client's block I/O may be what reclaim waits for,
/// so the paths that move its data (the kernel verbs API's calls, the work
/// items that move a QP's data and deliver a client's notifications) must not
/// wait on new I/O. Scopes nest; each restores what it found. Not `Send`: it
/// ends on the task that began it.
pub(crate) struct NoIo {
    saved: c_uint,
    _task: PhantomData<*mut ()>,
}

impl NoIo {
    /// Begins the scope on the current task.
    pub(crate) fn enter() -> Self {
        // SAFETY: it only sets a flag of the current task; `Drop` restores it
        // on the same task (`NoIo` is neither `Send` nor `Sync`).
        let saved = unsafe { srnic_noio_save() };
        Self {
            saved,
            _task: PhantomData,
        }
    }
}

impl Drop for NoIo {
    fn drop(&mut self) {
        // SAFETY: `saved` is what `srnic_noio_save` returned on this task.
        unsafe { srnic_noio_restore(self.saved) }
    }
}
