// SPDX-License-Identifier: GPL-2.0
//! Locks shared with softirq context, and whether the caller may sleep.
//!
//! [`SpinLockBh`] is a spinlock that also disables bottom halves on the local
//! CPU while it is held (`spin_lock_bh`): the state a QP's receive path places
//! into from a socket's data-ready callback (softirq) and that process context
//! takes too. The 6.12 `kernel` crate's `SpinLock` uses plain `spin_lock`, which
//! a softirq interrupting its holder on the same CPU would deadlock on.
//!
//! [`may_sleep`] tells code that frees or notifies (which may sleep) whether it
//! runs where it could: not in interrupt or softirq context, not with bottom
//! halves disabled (so not under a [`SpinLockBh`]), not with interrupts off.
//! Code that cannot must hand the work to a work item.

use kernel::{bindings, sync::lock::{Backend, Lock}};

extern "C" {
    fn srnic_spin_lock_bh(lock: *mut bindings::spinlock_t);
    fn srnic_spin_unlock_bh(lock: *mut bindings::spinlock_t);
    fn srnic_may_sleep() -> bool;
}

/// A spinlock taken with bottom halves disabled (`spin_lock_bh`).
pub(crate) type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// Creates a [`SpinLockBh`] with a lock class of its own (as `new_spinlock!`).
#[macro_export]
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::sys::sync::SpinLockBh::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}

/// The backend of [`SpinLockBh`].
pub(crate) struct SpinLockBhBackend;

// SAFETY: `lock` and `unlock` are `spin_lock_bh` and `spin_unlock_bh` on a
// spinlock that `init` initialised: the lock is held, exclusively, between
// them, and a guard never outlives the `Lock` that owns the state.
unsafe impl Backend for SpinLockBhBackend {
    type State = bindings::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut bindings::lock_class_key,
    ) {
        // SAFETY: the caller passes valid memory for the lock, a static name and
        // a static lock class key.
        unsafe { bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: the caller passes a lock `init` initialised.
        unsafe { srnic_spin_lock_bh(ptr) }
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: the caller holds the lock (it has the guard).
        unsafe { srnic_spin_unlock_bh(ptr) }
    }
}

/// Whether the caller may sleep: process context with bottom halves and
/// interrupts enabled. (Under a plain spinlock it may not either, which a
/// kernel without `CONFIG_PREEMPT_COUNT` cannot tell: srnic holds none where
/// it asks.)
pub(crate) fn may_sleep() -> bool {
    // SAFETY: reads the current CPU's context counts; no preconditions.
    unsafe { srnic_may_sleep() }
}
