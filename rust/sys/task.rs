// SPDX-License-Identifier: GPL-2.0
//! Who the calling process is: what srnic records as an object's owner (for
//! the tracepoints and the resource views) and who may see every object.

extern "C" {
    fn srnic_current_tgid() -> i32;
    fn srnic_current_euid() -> u32;
    fn srnic_sys_admin() -> bool;
}

/// The owner of an object: the process that created it and the effective uid
/// of the context it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    /// Thread group id, in the initial pid namespace (as the trace buffer's
    /// pids are).
    pub(crate) pid: i32,
    /// Effective uid, in the initial user namespace.
    pub(crate) uid: u32,
}

impl Owner {
    /// The calling process.
    pub(crate) fn current() -> Self {
        Self { pid: current_pid(), uid: current_euid() }
    }
}

/// The pid of the calling process (its thread group id, initial namespace).
pub(crate) fn current_pid() -> i32 {
    // SAFETY: no preconditions; `current` is valid in process context.
    unsafe { srnic_current_tgid() }
}

/// The effective uid of the calling process, in the initial user namespace.
pub(crate) fn current_euid() -> u32 {
    // SAFETY: no preconditions; `current` is valid in process context.
    unsafe { srnic_current_euid() }
}

/// Whether the caller has CAP_SYS_ADMIN (in the initial user namespace): it
/// may see every object srnic holds.
pub(crate) fn sys_admin() -> bool {
    // SAFETY: no preconditions; `current` is valid in process context.
    unsafe { srnic_sys_admin() }
}
