// SPDX-License-Identifier: GPL-2.0
//! Wait queues that `poll()` can register on, and poll masks.
//!
//! The 6.12 `CondVar` hides its wait queue head, but `poll_wait()` needs one, so
//! srnic keeps its own [`WaitQueue`] for pollers beside a `CondVar` for blocking
//! readers.

use core::ffi::c_void;
use kernel::{
    bindings,
    prelude::*,
    str::CStr,
    sync::LockClassKey,
    types::Opaque,
};

extern "C" {
    // `struct file` is passed through untouched; `c_void` keeps the declaration
    // FFI-safe whatever the configuration makes of the struct.
    fn srnic_poll_wait(
        file: *mut c_void,
        wq: *mut bindings::wait_queue_head,
        pt: *mut bindings::poll_table_struct,
    );
}

/// A set of `EPOLL*` bits as `poll()` returns them (values from the uapi header
/// `<linux/eventpoll.h>`, which bindgen does not see in 6.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollMask(pub u32);

impl PollMask {
    /// Data can be read.
    pub const IN: Self = Self(0x0001 | 0x0040);
    /// Data can be written.
    pub const OUT: Self = Self(0x0004 | 0x0100);
    /// An error condition.
    pub const ERR: Self = Self(0x0008);
    /// Nothing is ready.
    pub const NONE: Self = Self(0);
}

impl core::ops::BitOr for PollMask {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// A kernel wait queue head.
///
/// # Invariants
///
/// `inner` is initialised by `__init_waitqueue_head` and stays pinned.
#[pin_data]
pub struct WaitQueue {
    #[pin]
    inner: Opaque<bindings::wait_queue_head>,
}

// SAFETY: a wait queue head is protected by its own spinlock and may be used from
// any thread.
unsafe impl Send for WaitQueue {}
// SAFETY: as above; every operation on it takes its internal lock.
unsafe impl Sync for WaitQueue {}

impl WaitQueue {
    /// Creates an initialiser for a wait queue with a lockdep name and class.
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        // `LockClassKey` is `#[repr(transparent)]` over the C `lock_class_key` (its
        // own accessor is crate-private in 6.12).
        let key = (key as *const LockClassKey).cast_mut().cast::<bindings::lock_class_key>();
        pin_init!(Self {
            // SAFETY: `slot` is valid, pinned memory for a wait queue head; `name`
            // and `key` are static as lockdep requires.
            inner <- Opaque::ffi_init(|slot| unsafe {
                bindings::__init_waitqueue_head(slot, name.as_char_ptr(), key)
            }),
        })
    }

    /// Wakes every waiter (pollers and interruptible sleepers alike).
    pub fn wake_up_all(&self) {
        // SAFETY: by the type invariant the head is initialised; a NULL key is allowed.
        unsafe {
            bindings::__wake_up(
                self.inner.get(),
                bindings::TASK_NORMAL,
                0,
                core::ptr::null_mut(),
            )
        };
    }
}

/// Creates a [`WaitQueue`] initialiser with a lockdep class of its own call site.
#[macro_export]
macro_rules! new_waitqueue {
    ($name:literal) => {
        $crate::sys::waitqueue::WaitQueue::new(
            kernel::c_str!($name),
            kernel::static_lock_class!(),
        )
    };
}

/// The poll table of one `poll()` call on one file.
///
/// # Invariants
///
/// `file` and `pt` are the arguments of a `poll` file operation that is running
/// for as long as this value lives; `pt` may be NULL.
pub struct PollTable {
    file: *mut bindings::file,
    pt: *mut bindings::poll_table_struct,
}

impl PollTable {
    /// Wraps the arguments of a `poll` file operation.
    ///
    /// # Safety
    ///
    /// `file` and `pt` must be the arguments of a `poll` callback that outlives
    /// the returned value.
    pub(crate) unsafe fn new(
        file: *mut bindings::file,
        pt: *mut bindings::poll_table_struct,
    ) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self { file, pt }
    }

    /// Registers `wq` so that a wake-up on it re-polls this file. The wait queue
    /// must outlive the file (it does when it belongs to the file's context).
    pub fn register(&self, wq: &WaitQueue) {
        // SAFETY: by the type invariant `file`/`pt` are live poll arguments; `wq` is
        // initialised and lives as long as the file's private data.
        unsafe { srnic_poll_wait(self.file.cast(), wq.inner.get(), self.pt) };
    }
}
