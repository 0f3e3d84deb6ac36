// SPDX-License-Identifier: GPL-2.0
//! Memory shared with a process: zeroed pages, charged to the caller's memory
//! cgroup, that the kernel reaches through one contiguous kernel mapping and
//! a process maps with `mmap()` on the device (a CQ's ring, see
//! `verbs/cq.rs`).
//!
//! The process may write any byte of it at any time. So the kernel never
//! hands out references into it: it stores and loads values (`u32` words
//! atomically, records by volatile copy), and whatever it loads is a value
//! to check, like an ioctl argument.
//!
//! The pages live as long as the kernel's reference ([`Arc`]) or any mapping
//! of them, whichever goes last: each mapping (and each copy the kernel makes
//! of one: `fork()`, a split, `mremap()`) holds a reference, dropped when it
//! is unmapped. So does what the owner keeps with them (`K`, for a CQ ring
//! the charge to its file's memory budget): a process cannot free the object
//! and keep its memory without it being counted.

use super::gfp::ACCOUNTED;
use core::{
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::{
    alloc::KVVec,
    bindings,
    error::to_result,
    ffi::{c_int, c_uint, c_void},
    page::PAGE_SIZE,
    prelude::*,
    sync::{Arc, ArcBorrow},
    types::{AsBytes, FromBytes},
};

// `struct page **` and `struct vm_area_struct *` pass as `void *`: some
// configurations leave their Rust views without fields (`sched_statistics`
// inside them), which the FFI-safety lint rejects.
extern "C" {
    fn srnic_shared_alloc(pages: *mut c_void, n: c_uint) -> *mut c_void;
    fn srnic_shared_free(addr: *mut c_void, pages: *mut c_void, n: c_uint);
    fn srnic_shared_mmap(
        vma: *mut c_void,
        pages: *mut c_void,
        n: c_uint,
        ops: *const c_void,
        owner: *mut c_void,
    ) -> c_int;
}

/// A mapping that `mmap()` on the device is setting up.
///
/// # Invariants
///
/// `raw` is the VMA of an `mmap()` call in progress (its `mmap_lock` held
/// for writing) for as long as `'a`.
pub struct Vma<'a> {
    raw: *mut bindings::vm_area_struct,
    _call: PhantomData<&'a mut bindings::vm_area_struct>,
}

impl Vma<'_> {
    /// # Safety
    ///
    /// `raw` is the VMA passed to a file's `mmap` operation, which has not
    /// returned yet and outlives the returned value.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::vm_area_struct) -> Self {
        // INVARIANT: the caller guarantees it.
        Self { raw, _call: PhantomData }
    }

    /// The mapping's offset into the file, in pages (`mmap()`'s `offset`
    /// divided by the page size).
    pub fn pgoff(&self) -> usize {
        // SAFETY: by the type invariant `raw` is valid, its fields stable
        // under the mmap lock.
        unsafe { (*self.raw).vm_pgoff as usize }
    }
}

/// Zeroed pages shared with a process, and `K`, which lives as long as
/// they do; freed on drop, which comes after the last mapping's.
///
/// # Invariants
///
/// `addr` is the kernel mapping of the `pages.len()` pages in `pages`
/// (both from `srnic_shared_alloc`), readable and writable, `len()` bytes.
pub struct SharedPages<K: Send + Sync + 'static> {
    addr: NonNull<u8>,
    pages: KVVec<*mut bindings::page>,
    _keep: K,
}

// SAFETY: the pages and their mapping are owned by this value; every access
// through it is an atomic or volatile access, valid from any thread.
unsafe impl<K: Send + Sync + 'static> Send for SharedPages<K> {}
// SAFETY: as above; `&self` methods only load and store values.
unsafe impl<K: Send + Sync + 'static> Sync for SharedPages<K> {}

impl<K: Send + Sync + 'static> SharedPages<K> {
    /// What pages for `bytes` bytes take (the pages and their table).
    pub fn footprint(bytes: usize) -> usize {
        let n = Self::pages_for(bytes);
        n * (PAGE_SIZE + core::mem::size_of::<*mut bindings::page>())
    }

    fn pages_for(bytes: usize) -> usize {
        bytes.div_ceil(PAGE_SIZE).max(1)
    }

    /// Zeroed pages for at least `bytes` bytes, charged to the caller's
    /// memory cgroup (`ENOMEM` beyond it), kept with `keep`.
    pub fn new(bytes: usize, keep: K) -> Result<Arc<Self>> {
        let n = Self::pages_for(bytes);
        let count = c_uint::try_from(n).map_err(|_| EINVAL)?;
        let mut pages = KVVec::<*mut bindings::page>::from_elem(core::ptr::null_mut(), n, ACCOUNTED)?;
        // SAFETY: `pages` has room for `count` page pointers.
        let addr = unsafe { srnic_shared_alloc(pages.as_mut_ptr().cast(), count) };
        let addr = NonNull::new(addr.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: `srnic_shared_alloc` succeeded: `pages` holds the pages
        // and `addr` maps them.
        Ok(Arc::new(Self { addr, pages, _keep: keep }, ACCOUNTED)?)
    }

    /// The size in bytes (whole pages): what a process maps.
    pub fn len(&self) -> usize {
        self.pages.len() * PAGE_SIZE
    }

    /// The address of a `T` at `off`, if it lies inside and is aligned.
    fn at<T>(&self, off: usize) -> Result<*mut T> {
        let end = off.checked_add(core::mem::size_of::<T>()).ok_or(EINVAL)?;
        if end > self.len() {
            return Err(EINVAL);
        }
        // SAFETY: `off` is inside the mapping (type invariant: `len()` bytes).
        let p = unsafe { self.addr.as_ptr().add(off) }.cast::<T>();
        if !p.is_aligned() {
            return Err(EINVAL);
        }
        Ok(p)
    }

    /// Loads the `u32` at `off` (4-byte aligned) with `order`.
    pub fn load_u32(&self, off: usize, order: Ordering) -> Result<u32> {
        let p = self.at::<u32>(off)?;
        // SAFETY: `p` is an aligned, valid `u32` for as long as `self`; the
        // process writes it only as a whole word (or not atomically, which
        // gives some value, never undefined behaviour on this architecture's
        // aligned word accesses).
        Ok(unsafe { AtomicU32::from_ptr(p) }.load(order))
    }

    /// Stores `v` at `off` (4-byte aligned) with `order`.
    pub fn store_u32(&self, off: usize, v: u32, order: Ordering) -> Result {
        let p = self.at::<u32>(off)?;
        // SAFETY: as in `load_u32`.
        unsafe { AtomicU32::from_ptr(p) }.store(v, order);
        Ok(())
    }

    /// Copies `v` to `off` (aligned for `T`).
    pub fn write<T: AsBytes + Copy>(&self, off: usize, v: &T) -> Result {
        let p = self.at::<T>(off)?;
        // SAFETY: `p` is valid and aligned for a `T` inside the mapping;
        // volatile because the process may look at it meanwhile.
        unsafe { core::ptr::write_volatile(p, *v) };
        Ok(())
    }

    /// Copies the `T` at `off` (aligned for `T`) out: any bytes are a valid
    /// `T`, whatever the process wrote.
    pub fn read<T: FromBytes>(&self, off: usize) -> Result<T> {
        let p = self.at::<T>(off)?;
        // SAFETY: `p` is valid and aligned for a `T`; every bit pattern is a
        // `T` (`FromBytes`).
        Ok(unsafe { core::ptr::read_volatile(p) })
    }

    /// The mapping's operations: a copy of it takes a reference, an unmap
    /// drops one.
    const VM_OPS: bindings::vm_operations_struct = bindings::vm_operations_struct {
        open: Some(vma_open::<K>),
        close: Some(vma_close::<K>),
        // SAFETY: all-zero is a valid `vm_operations_struct` (every member
        // is an optional function pointer).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// Maps all of it into `vma`, which must be a shared, non-executable
    /// mapping of exactly `len()` bytes (`EINVAL`, `EPERM` for an executable
    /// one). The mapping holds a reference to `self` until it is unmapped.
    pub fn map(self: &Arc<Self>, vma: &Vma<'_>) -> Result {
        let owner = Arc::into_raw(self.clone());
        let ops: &'static bindings::vm_operations_struct = const { &Self::VM_OPS };
        // SAFETY: `vma` is a mapping being set up (its invariant); the pages
        // are ours and `srnic_shared_mmap` only reads the table (not longer
        // than `c_uint`: `new` checked). On success the mapping owns the
        // reference `owner` (released by `vma_close`); `ops` is static.
        let r = to_result(unsafe {
            srnic_shared_mmap(
                vma.raw.cast(),
                self.pages.as_ptr().cast_mut().cast(),
                self.pages.len() as c_uint,
                (ops as *const bindings::vm_operations_struct).cast(),
                owner.cast_mut().cast(),
            )
        });
        if r.is_err() {
            // SAFETY: `owner` came from `into_raw` above and the failed
            // mapping did not take it.
            drop(unsafe { Arc::from_raw(owner) });
        }
        r
    }
}

/// `vm_ops->open`: a copy of a mapping `map` made (`fork()`, a split,
/// `mremap()`) takes its own reference.
///
/// # Safety
///
/// Called by the memory manager for a VMA whose `vm_private_data` is a
/// reference `SharedPages::<K>::map` gave a mapping, still held by the
/// mapping the copy came from.
unsafe extern "C" fn vma_open<K: Send + Sync + 'static>(vma: *mut bindings::vm_area_struct) {
    // SAFETY: as the function's safety section says.
    let owner = unsafe { (*vma).vm_private_data }.cast::<SharedPages<K>>().cast_const();
    // SAFETY: `owner` came from `Arc::into_raw` and is still held.
    let more: Arc<SharedPages<K>> = unsafe { ArcBorrow::from_raw(owner) }.into();
    // The copy's reference, released by its `vma_close`.
    let _ = Arc::into_raw(more);
}

/// `vm_ops->close`: a mapping (or a copy of one) goes: its reference too.
///
/// # Safety
///
/// Called by the memory manager once per VMA that `map` or `vma_open` gave
/// a reference.
unsafe extern "C" fn vma_close<K: Send + Sync + 'static>(vma: *mut bindings::vm_area_struct) {
    // SAFETY: as the function's safety section says.
    let owner = unsafe { (*vma).vm_private_data }.cast::<SharedPages<K>>().cast_const();
    // SAFETY: the VMA's own reference, not used again.
    drop(unsafe { Arc::from_raw(owner) });
}

impl<K: Send + Sync + 'static> Drop for SharedPages<K> {
    fn drop(&mut self) {
        // SAFETY: by the type invariant `addr` and `pages` came from
        // `srnic_shared_alloc` and are not used again.
        unsafe {
            srnic_shared_free(
                self.addr.as_ptr().cast(),
                self.pages.as_mut_ptr().cast(),
                self.pages.len() as c_uint,
            )
        };
    }
}
