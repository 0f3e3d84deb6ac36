// SPDX-License-Identifier: GPL-2.0
//! References on srnic.ko itself, and a watch on other modules going away.
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

use core::sync::atomic::{AtomicPtr, Ordering};

extern "C" {
    fn srnic_module_get();
    fn srnic_module_put();
    fn srnic_module_watch() -> core::ffi::c_int;
    fn srnic_module_unwatch();
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

/// A module, named by the address of its `struct module` (only compared).
pub(crate) type ModuleId = usize;

/// What [`ModuleWatch`] calls (set while it is registered).
static ON_GOING: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Called by the notifier of `module_ref.c` for each module going away (its
/// exit function has run, or its init failed; its code is still there).
#[no_mangle]
extern "C" fn srnic_module_going(module: *mut core::ffi::c_void) {
    let f = ON_GOING.load(Ordering::Acquire);
    if !f.is_null() {
        // SAFETY: `f` is the `fn(ModuleId)` that `ModuleWatch::register` stored.
        let f: fn(ModuleId) = unsafe { core::mem::transmute::<*mut (), fn(ModuleId)>(f) };
        f(module as ModuleId);
    }
}

/// A module notifier that calls a function for every module going away,
/// from module init to module exit (one at a time).
pub(crate) struct ModuleWatch(());

impl ModuleWatch {
    /// Calls `on_going` with each module that goes away from now on.
    pub(crate) fn register(on_going: fn(ModuleId)) -> kernel::error::Result<Self> {
        ON_GOING.store(on_going as *mut (), Ordering::Release);
        // SAFETY: registers the static notifier block of `module_ref.c` once.
        let r = unsafe { srnic_module_watch() };
        if r != 0 {
            ON_GOING.store(core::ptr::null_mut(), Ordering::Release);
            return Err(kernel::error::Error::from_errno(r));
        }
        Ok(Self(()))
    }
}

impl Drop for ModuleWatch {
    fn drop(&mut self) {
        // SAFETY: the block was registered by `register`; this waits for a
        // running notification (the notifier chain's lock).
        unsafe { srnic_module_unwatch() };
        ON_GOING.store(core::ptr::null_mut(), Ordering::Release);
    }
}
