// SPDX-License-Identifier: GPL-2.0
//! References on srnic.ko itself.
//!
//! An open file of `/dev/srnic` holds the module (its file operations name
//! it), so nothing a file owns can outlive the module. An object that can
//! outlive the file that started it (a connection's MPA start-up, which runs
//! on after its QP is destroyed until its socket is closed) holds a
//! [`ModuleRef`] instead: `rmmod` then waits ("in use") until it is gone, so
//! module exit never races its work items, timers or socket callbacks.
//!
//! The last reference is dropped by module code, which must not run after
//! the module is freed: holders drop it either in a work item on srnic's
//! workqueue (module exit destroys the queue, which waits for running items)
//! or in a file operation (the file holds the module until it returns).

extern "C" {
    fn srnic_module_get();
    fn srnic_module_put();
}

/// One reference on srnic.ko, dropped with the value.
pub(crate) struct ModuleRef(());

impl ModuleRef {
    /// Takes a reference. Only called from module code that runs while the
    /// module is live (a file operation or a work item), so the module
    /// cannot be going away.
    pub(crate) fn new() -> Self {
        // SAFETY: the module is live (see above); `__module_get` cannot fail.
        unsafe { srnic_module_get() };
        Self(())
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: gives back the reference `new` took.
        unsafe { srnic_module_put() };
    }
}
