// SPDX-License-Identifier: GPL-2.0
//! Pinned user memory.
//!
//! [`PinnedPages`] pins a page-aligned range of the calling process with
//! `pin_user_pages_fast(FOLL_LONGTERM)`, charged to the process's
//! `RLIMIT_MEMLOCK` (through `mm->pinned_vm`, as the RDMA core does) before a
//! single page is pinned. Dropping it unpins every page (marking them dirty if
//! they may have been written) and uncharges the same `mm`, even when the
//! process is already gone. Data moves in and out through `kmap_local_page`.

use core::ffi::{c_long, c_ulong};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{alloc::KVVec, bindings, page::PAGE_SIZE, prelude::*};

/// `struct mm_struct`, opaque here.
#[repr(C)]
struct RawMm {
    _opaque: [u8; 0],
}

extern "C" {
    fn srnic_mm_get_current() -> *mut RawMm;
    fn srnic_mm_put(mm: *mut RawMm);
    fn srnic_mm_charge(mm: *mut RawMm, npages: c_ulong) -> core::ffi::c_int;
    fn srnic_mm_uncharge(mm: *mut RawMm, npages: c_ulong);
    fn srnic_pin_user_pages(
        start: c_ulong,
        npages: c_ulong,
        write: bool,
        pages: *mut *mut core::ffi::c_void,
    ) -> c_long;
    // `struct page` is passed through as `void *`: the configuration may leave
    // the Rust view of it without fields, which is not FFI-safe.
    fn srnic_unpin_user_pages(pages: *mut *mut core::ffi::c_void, npages: c_ulong, dirty: bool);
}

/// Part of one pinned page: `len` bytes at `off`, valid while the
/// [`PinnedPages`] it came from is borrowed.
///
/// # Invariants
///
/// `page` stays pinned for `'a`, and `off + len <= PAGE_SIZE`.
#[derive(Clone, Copy)]
pub(crate) struct PageSlice<'a> {
    pub(super) page: *mut bindings::page,
    pub(super) off: u32,
    pub(super) len: u32,
    _pages: PhantomData<&'a PinnedPages>,
}

/// Pages pinned by all memory regions now (reported by `QUERY_STATS`).
pub(crate) static PINNED_PAGES: AtomicU64 = AtomicU64::new(0);

/// A pinned, charged range of user pages.
///
/// # Invariants
///
/// `pages` holds `pages.len()` pages pinned by this value and charged to `mm`,
/// which this value holds a reference (`mmgrab`) on.
pub(crate) struct PinnedPages {
    pages: KVVec<*mut bindings::page>,
    mm: *mut RawMm,
    writable: bool,
}

// SAFETY: pinned pages and an mm reference may be used and released from any thread.
unsafe impl Send for PinnedPages {}
// SAFETY: `&PinnedPages` only maps pages to copy data; the page array is immutable.
unsafe impl Sync for PinnedPages {}

impl PinnedPages {
    /// Pins `npages` pages of the current process starting at the page-aligned
    /// user address `start`. `writable` asks for write access (`FOLL_WRITE`).
    /// Fails with `ENOMEM` beyond `RLIMIT_MEMLOCK` (without `CAP_IPC_LOCK`) and
    /// `EFAULT` when the range is not mapped as asked.
    pub(crate) fn pin(start: usize, npages: usize, writable: bool) -> Result<Self> {
        if start % PAGE_SIZE != 0 || npages == 0 {
            return Err(EINVAL);
        }
        // The page array is the caller's kernel memory (its memory cgroup);
        // callers charge it to their budget too.
        let mut pages: KVVec<*mut bindings::page> =
            KVVec::from_elem(core::ptr::null_mut(), npages, super::gfp::ACCOUNTED)?;
        // SAFETY: called in the registering process's context.
        let mm = unsafe { srnic_mm_get_current() };
        if mm.is_null() {
            return Err(EFAULT);
        }
        // SAFETY: `mm` is held.
        let r = unsafe { srnic_mm_charge(mm, npages as c_ulong) };
        if r != 0 {
            // SAFETY: drop the reference taken above.
            unsafe { srnic_mm_put(mm) };
            return Err(Error::from_errno(r));
        }
        // SAFETY: `pages` has room for `npages` pointers; the range belongs to the
        // current process, whose mm is held.
        let n = unsafe {
            srnic_pin_user_pages(start as c_ulong, npages as c_ulong, writable, pages.as_mut_ptr().cast())
        };
        if n != npages as c_long {
            // SAFETY: undo the charge and the reference (the glue unpinned any
            // partial result itself).
            unsafe {
                srnic_mm_uncharge(mm, npages as c_ulong);
                srnic_mm_put(mm);
            }
            return Err(if n < 0 { Error::from_errno(n as i32) } else { EFAULT });
        }
        PINNED_PAGES.fetch_add(npages as u64, Ordering::Relaxed);
        // INVARIANT: every page is pinned and charged to `mm`, which is held.
        Ok(Self {
            pages,
            mm,
            writable,
        })
    }

    /// Calls `f` for each page-contiguous piece of `[offset, offset + len)`
    /// (offsets from the start of the first page) with the piece mapped, in order.
    /// `EFAULT` if the range is outside the pinned pages.
    fn for_each_piece(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(*mut u8, usize) -> Result,
    ) -> Result {
        self.page_slices(offset, len, |p| {
            // SAFETY: `p.page` is pinned by `self`; the mapping is released
            // below before any other page is mapped.
            let base = unsafe { bindings::kmap_local_page(p.page) }.cast::<u8>();
            // SAFETY: `p.off + p.len <= PAGE_SIZE` (`PageSlice`), inside the
            // mapped page.
            let r = f(unsafe { base.add(p.off as usize) }, p.len as usize);
            // SAFETY: `base` is the mapping made above.
            unsafe { bindings::kunmap_local(base.cast()) };
            r
        })
    }

    /// Copies `data` into the pages at `offset`.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        if !self.writable {
            return Err(EPERM);
        }
        let mut src = data;
        self.for_each_piece(offset, data.len(), |dst, n| {
            let (now, rest) = src.split_at(n);
            // SAFETY: `dst` is mapped and writable for `n` bytes (pinned with
            // FOLL_WRITE); `now` is `n` bytes that do not overlap it.
            unsafe { core::ptr::copy_nonoverlapping(now.as_ptr(), dst, n) };
            src = rest;
            Ok(())
        })
    }

    /// Calls `f` with each page-contiguous piece of `[offset, offset + len)`,
    /// in order, as a [`PageSlice`] (for the socket layer, which reads the
    /// pages itself: nothing is mapped here). `EFAULT` outside the pages.
    pub(crate) fn page_slices<'a>(
        &'a self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(PageSlice<'a>) -> Result,
    ) -> Result {
        let end = offset.checked_add(len).ok_or(EFAULT)?;
        if end > self.pages.len().checked_mul(PAGE_SIZE).ok_or(EFAULT)? {
            return Err(EFAULT);
        }
        let mut pos = offset;
        while pos < end {
            let page = *self.pages.get(pos / PAGE_SIZE).ok_or(EFAULT)?;
            let in_page = pos % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(end - pos);
            // INVARIANT: `page` is pinned by `self`, borrowed for 'a, and
            // `in_page + n <= PAGE_SIZE`.
            f(PageSlice { page, off: in_page as u32, len: n as u32, _pages: PhantomData })?;
            pos += n;
        }
        Ok(())
    }

    /// Calls `f` with each mapped piece of `[offset, offset + len)`, in order.
    pub(crate) fn read_pieces(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(&[u8]) -> Result,
    ) -> Result {
        self.for_each_piece(offset, len, |src, n| {
            // SAFETY: `src` is mapped for `n` bytes for the duration of this call.
            f(unsafe { core::slice::from_raw_parts(src, n) })
        })
    }
}

impl Drop for PinnedPages {
    fn drop(&mut self) {
        let n = self.pages.len();
        // SAFETY: by the type invariant the pages are pinned and charged to `mm`,
        // which is held; after this nothing refers to them.
        unsafe {
            srnic_unpin_user_pages(self.pages.as_mut_ptr().cast(), n as c_ulong, self.writable);
            srnic_mm_uncharge(self.mm, n as c_ulong);
            srnic_mm_put(self.mm);
        }
        PINNED_PAGES.fetch_sub(n as u64, Ordering::Relaxed);
    }
}
