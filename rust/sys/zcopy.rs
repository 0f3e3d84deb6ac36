// SPDX-License-Identifier: GPL-2.0
//! Zero-copy transmit (`zcopy.c`): a [`ZcNotice`] tells its owner when TCP
//! no longer references the pages of a message it was handed without a copy,
//! and a [`Frag`] holds bytes that TCP may reference after the call that
//! sent them (a zero-copy batch's framing).
//!
//! A notice is a kernel `ubuf_info` (the mechanism of `MSG_ZEROCOPY` and
//! io_uring's zero-copy send): TCP links the buffers it builds from the pages
//! to it and drops a reference as each is freed. When the sender dropped its
//! own too ([`ZcNotice`]'s `Drop`), [`ZcOwner::released`] runs, in process
//! context on srnic's workqueue, with the owner reference the notice held.

use crate::sys::wq;
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};
use kernel::{bindings, sync::Arc};

/// `struct srnic_zc`, opaque here.
#[repr(C)]
pub(crate) struct RawZc {
    _p: [u8; 0],
}

type ZcFn = unsafe extern "C" fn(owner: *mut c_void, cookie: u64);

extern "C" {
    fn srnic_zc_setup(wq: *mut bindings::workqueue_struct);
    fn srnic_zc_new(done: ZcFn, owner: *mut c_void, cookie: u64) -> *mut RawZc;
    fn srnic_zc_put(zc: *mut RawZc);
    fn srnic_zc_drain();
    fn srnic_frag_alloc(len: core::ffi::c_uint) -> *mut c_void;
    fn srnic_frag_free(addr: *mut c_void);
}

/// The object a notice reports to.
pub(crate) trait ZcOwner: Send + Sync + 'static {
    /// TCP and the sender are done with the notice made with `cookie`. Runs
    /// in process context on srnic's workqueue; must not block on the network.
    fn released(this: Arc<Self>, cookie: u64);
}

/// The sender's reference on a zero-copy notice.
///
/// # Invariants
///
/// `raw` is a live notice whose done function is `done::<T>` and whose owner
/// is a reference from `Arc::<T>::into_raw`; this value holds the sender's
/// reference on it, dropped once by `Drop`.
pub(crate) struct ZcNotice<T: ZcOwner> {
    raw: NonNull<RawZc>,
    _owner: PhantomData<Arc<T>>,
}

// SAFETY: the notice's reference count is atomic (a `refcount_t`); the sender's
// reference may be dropped from any thread.
unsafe impl<T: ZcOwner> Send for ZcNotice<T> {}
// SAFETY: `&ZcNotice` only lends the pointer to the socket layer.
unsafe impl<T: ZcOwner> Sync for ZcNotice<T> {}

unsafe extern "C" fn done<T: ZcOwner>(owner: *mut c_void, cookie: u64) {
    // SAFETY: `owner` is the reference `ZcNotice::new` took (type invariant);
    // the glue calls this once per notice.
    let this = unsafe { Arc::from_raw(owner.cast_const().cast::<T>()) };
    T::released(this, cookie);
}

impl<T: ZcOwner> ZcNotice<T> {
    /// A notice that calls `T::released(owner, cookie)` once dropped and
    /// released by TCP; `None` when memory is short (send by copying then).
    /// Never sleeps.
    pub(crate) fn new(owner: &Arc<T>, cookie: u64) -> Option<Self> {
        let user = Arc::into_raw(owner.clone()).cast_mut().cast::<c_void>();
        // SAFETY: `done::<T>` has the signature the glue calls; `user` is a
        // reference on the owner, which the notice keeps.
        let raw = NonNull::new(unsafe { srnic_zc_new(done::<T>, user, cookie) });
        if raw.is_none() {
            // SAFETY: the reference taken above, not handed to anyone.
            drop(unsafe { Arc::from_raw(user.cast_const().cast::<T>()) });
        }
        // INVARIANT: a new notice holding the reference taken above.
        raw.map(|raw| Self { raw, _owner: PhantomData })
    }

    /// The notice, lent to a send of the socket layer.
    pub(crate) fn lend(&self) -> ZcRef<'_> {
        ZcRef { raw: self.raw, _notice: PhantomData }
    }
}

impl<T: ZcOwner> Drop for ZcNotice<T> {
    fn drop(&mut self) {
        // SAFETY: the sender's reference (type invariant), dropped once.
        unsafe { srnic_zc_put(self.raw.as_ptr()) };
    }
}

/// A notice lent to the socket layer, live for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct ZcRef<'a> {
    raw: NonNull<RawZc>,
    _notice: PhantomData<&'a RawZc>,
}

impl ZcRef<'_> {
    pub(super) fn as_ptr(self) -> *mut RawZc {
        self.raw.as_ptr()
    }
}

/// Sets up the notices at module init (after the workqueues) and waits for
/// every one at module exit (before them: dropped first).
pub(crate) struct Registration(());

impl Registration {
    pub(crate) fn new() -> Self {
        // SAFETY: srnic's workqueue exists from before this until after the
        // drop below, which waits for every notice.
        unsafe { srnic_zc_setup(wq::raw()) };
        Self(())
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: no notice is made any more (no file is open and no kernel
        // client is loaded); this waits for those still linked to buffers.
        unsafe { srnic_zc_drain() };
    }
}

/// Up to a page of bytes in a page fragment, which TCP may keep referencing
/// after the send that took them (its own page references keep it alive).
///
/// # Invariants
///
/// `ptr` is a fragment of `len` bytes from `srnic_frag_alloc`, freed once by
/// `Drop`.
pub(crate) struct Frag {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a fragment is plain memory; freeing it drops a page reference.
unsafe impl Send for Frag {}

impl Frag {
    /// A copy of `b` (at most a page); `None` when memory is short. Never
    /// sleeps.
    pub(crate) fn copy_of(b: &[u8]) -> Option<Self> {
        if b.is_empty() || b.len() > kernel::page::PAGE_SIZE {
            return None;
        }
        // SAFETY: no preconditions; the length fits a page.
        let ptr = NonNull::new(unsafe { srnic_frag_alloc(b.len() as u32) }.cast::<u8>())?;
        // SAFETY: the fragment is `b.len()` writable bytes, not `b`'s memory.
        unsafe { core::ptr::copy_nonoverlapping(b.as_ptr(), ptr.as_ptr(), b.len()) };
        // INVARIANT: just allocated, `b.len()` bytes.
        Some(Self { ptr, len: b.len() })
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` initialised bytes at `ptr` (invariant, `copy_of`).
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Frag {
    fn drop(&mut self) {
        // SAFETY: from `srnic_frag_alloc`, freed once (invariant).
        unsafe { srnic_frag_free(self.ptr.as_ptr().cast()) };
    }
}
