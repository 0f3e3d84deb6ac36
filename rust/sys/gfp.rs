// SPDX-License-Identifier: GPL-2.0
//! Allocation flags for memory srnic allocates on a user's behalf.

use kernel::{alloc::Flags, bindings};

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
