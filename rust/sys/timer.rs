// SPDX-License-Identifier: GPL-2.0
//! Timers whose expiry runs in process context, on srnic's workqueue (a
//! delayed work item in `timer.c`).
//!
//! A [`Timer<T>`] belongs to one object `T` (a field of it) and calls
//! [`TimerTarget::timer_fired`] with that object. While armed, the timer owns
//! one reference on it, so the object cannot go away under a pending timer,
//! and an object being dropped has no pending timer: it frees its timer
//! without waiting. The reference is dropped in process context (by
//! `timer_fired`, or by [`Timer::cancel`]), never in softirq.

use crate::sys::wq;
use core::{
    ffi::c_void,
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{prelude::*, sync::Arc};

/// `struct srnic_timer`, opaque here.
#[repr(C)]
struct RawTimer {
    _p: [u8; 0],
}

type TimerFn = unsafe extern "C" fn(user: *mut c_void);

extern "C" {
    fn srnic_timer_new(f: TimerFn) -> *mut RawTimer;
    fn srnic_timer_arm(t: *mut RawTimer, wq: *mut kernel::bindings::workqueue_struct, user: *mut c_void, delay_ms: u32) -> bool;
    fn srnic_timer_cancel(t: *mut RawTimer) -> bool;
    fn srnic_timer_free(t: *mut RawTimer);
}

/// The object a timer fires for.
pub(crate) trait TimerTarget: Send + Sync + 'static {
    /// The timer expired. Runs in process context on srnic's workqueue and
    /// must not block on the network.
    fn timer_fired(this: Arc<Self>);
}

/// A one-shot timer of one `T`, re-armable.
///
/// # Invariants
///
/// `raw` is a live `struct srnic_timer` whose function is `fire::<T>`; every
/// arming that is pending holds one reference (from `Arc::into_raw`) on the
/// object `owner` points to, and `owner` never changes once set.
pub(crate) struct Timer<T: TimerTarget> {
    raw: NonNull<RawTimer>,
    owner: AtomicPtr<T>,
    _target: PhantomData<fn() -> Arc<T>>,
}

// SAFETY: the glue serialises arming, cancelling and firing (delayed work).
unsafe impl<T: TimerTarget> Send for Timer<T> {}
// SAFETY: as above; `owner` is atomic.
unsafe impl<T: TimerTarget> Sync for Timer<T> {}

unsafe extern "C" fn fire<T: TimerTarget>(user: *mut c_void) {
    // SAFETY: `user` is the reference the pending arming held (type invariant);
    // firing consumes it.
    let this = unsafe { Arc::from_raw(user.cast_const().cast::<T>()) };
    T::timer_fired(this);
}

impl<T: TimerTarget> Timer<T> {
    /// A disarmed timer.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: `fire::<T>` has the signature the glue calls.
        let raw = NonNull::new(unsafe { srnic_timer_new(fire::<T>) }).ok_or(ENOMEM)?;
        // INVARIANT: a new timer, not armed, with no owner yet.
        Ok(Self {
            raw,
            owner: AtomicPtr::new(core::ptr::null_mut()),
            _target: PhantomData,
        })
    }

    /// Makes `owner`'s timer fire in `delay_ms` (re-arming moves the expiry).
    /// `owner` must be the object this timer belongs to: EINVAL otherwise.
    pub(crate) fn arm(&self, owner: &Arc<T>, delay_ms: u32) -> Result {
        let ptr = (&**owner as *const T).cast_mut();
        match self.owner.compare_exchange(core::ptr::null_mut(), ptr, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {}
            Err(cur) if cur == ptr => {}
            Err(_) => return Err(EINVAL),
        }
        let wq = wq::raw();
        if wq.is_null() {
            return Err(ENODEV);
        }
        // The reference this arming holds, taken before the timer can fire.
        let user = Arc::into_raw(owner.clone()).cast_mut().cast::<c_void>();
        // SAFETY: `raw` is live; `user` is a reference on the owner (invariant).
        if unsafe { srnic_timer_arm(self.raw.as_ptr(), wq, user, delay_ms) } {
            // It was pending: that arming's reference now stands for this one.
            // SAFETY: the reference taken above, not handed to anyone.
            drop(unsafe { Arc::from_raw(user.cast_const().cast::<T>()) });
        }
        Ok(())
    }

    /// Disarms the timer: a pending expiry does not happen (one running now
    /// still finishes).
    pub(crate) fn cancel(&self) {
        // SAFETY: `raw` is live.
        if unsafe { srnic_timer_cancel(self.raw.as_ptr()) } {
            let owner = self.owner.load(Ordering::Acquire);
            // SAFETY: a pending arming held one reference on `owner`
            // (invariant); cancelling it hands that reference back here. The
            // caller holds another (it names the timer through its owner), so
            // this is not the last.
            drop(unsafe { Arc::from_raw(owner.cast_const()) });
        }
    }
}

impl<T: TimerTarget> Drop for Timer<T> {
    fn drop(&mut self) {
        // SAFETY: the timer's owner is being dropped, so no arming is pending
        // (a pending one holds a reference); it may be running the call that
        // dropped the owner, which touches nothing after. `raw` is freed once.
        unsafe { srnic_timer_free(self.raw.as_ptr()) };
    }
}
