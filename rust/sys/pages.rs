// SPDX-License-Identifier: GPL-2.0
//! Pages behind memory regions: pinned user memory, and kernel clients' pages.
//!
//! [`PinnedPages`] pins a page-aligned range of the calling process with
//! `pin_user_pages_fast(FOLL_LONGTERM)`, charged to the process's
//! `RLIMIT_MEMLOCK` (through `mm->pinned_vm`, as the RDMA core does) before a
//! single page is pinned. Dropping it unpins every page (marking them dirty if
//! they may have been written) and uncharges the same `mm`, even when the
//! process is already gone. [`KernelPages`] holds a reference (`get_page`) on
//! each page a kernel client hands over, from a page array or `bio_vec`s, and
//! drops them with itself. Data moves in and out of both through
//! `kmap_local_page` ([`PageArray`]).

use core::ffi::{c_long, c_ulong};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    alloc::KVVec,
    bindings,
    impl_has_work,
    new_work,
    page::PAGE_SIZE,
    prelude::*,
    workqueue::{Work, WorkItem},
};

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
    fn srnic_get_page(page: *mut core::ffi::c_void);
    fn srnic_put_page(page: *mut core::ffi::c_void);
    fn srnic_nth_page(page: *mut core::ffi::c_void, n: c_ulong) -> *mut core::ffi::c_void;
}

/// Part of one pinned page: `len` bytes at `off`, valid while the
/// [`PinnedPages`] it came from is borrowed.
///
/// # Invariants
///
/// `page` stays pinned (or referenced) for `'a`, and `off + len <= PAGE_SIZE`.
#[derive(Clone, Copy)]
pub(crate) struct PageSlice<'a> {
    pub(super) page: *mut bindings::page,
    pub(super) off: u32,
    pub(super) len: u32,
    _pages: PhantomData<&'a PageArray>,
}

/// Pages pinned by all memory regions now (reported by `QUERY_STATS`).
pub(crate) static PINNED_PAGES: AtomicU64 = AtomicU64::new(0);

/// A pinned, charged range of user pages.
///
/// # Invariants
///
/// `pages` holds `pages.len()` pages pinned by this value and charged to `mm`,
/// which this value holds a reference (`mmgrab`) on. `late` is `Some` until
/// the value is dropped.
pub(crate) struct PinnedPages {
    pages: PageArray,
    mm: *mut RawMm,
    writable: bool,
    /// Where the release goes when the value is dropped where sleeping is not
    /// allowed; allocated with the value, so that the drop allocates nothing.
    late: Option<Pin<KBox<LateRelease>>>,
}

/// Unpins `pages`, uncharges them from `mm` and drops the reference on `mm`.
///
/// # Safety
///
/// Every page of `pages` is pinned and charged to `mm` by the caller, which
/// holds a reference on `mm` and gives all of it up here. May sleep.
unsafe fn release(pages: &mut KVVec<*mut bindings::page>, mm: *mut RawMm, writable: bool) {
    let n = pages.len();
    // SAFETY: as the caller promised; after this nothing refers to them.
    unsafe {
        srnic_unpin_user_pages(pages.as_mut_ptr().cast(), n as c_ulong, writable);
        srnic_mm_uncharge(mm, n as c_ulong);
        srnic_mm_put(mm);
    }
    PINNED_PAGES.fetch_sub(n as u64, Ordering::Relaxed);
}

/// The release of a [`PinnedPages`] dropped where it may not sleep (a QP's
/// receive path in softirq context, or under a bottom-half-safe lock):
/// unpinning may sleep (marking a page of a file dirty locks the page), so a
/// work item on srnic's workqueue does it. Until then the pages stay pinned
/// and counted; unloading the module waits for the workqueue.
///
/// # Invariants
///
/// Once queued, `pages` are pinned and charged to `mm`, held, as in
/// [`PinnedPages`]; before that `pages` is empty and `mm` null. `writable` is
/// the [`PinnedPages`]'s from the start.
#[pin_data]
struct LateRelease {
    #[pin]
    work: Work<LateRelease>,
    pages: KVVec<*mut bindings::page>,
    mm: *mut RawMm,
    writable: bool,
}

// SAFETY: the pages and the mm reference may be released from any thread.
unsafe impl Send for LateRelease {}
// SAFETY: nothing is reachable through `&LateRelease` but plain fields.
unsafe impl Sync for LateRelease {}

impl_has_work! {
    impl HasWork<Self> for LateRelease { self.work }
}

impl WorkItem for LateRelease {
    type Pointer = Pin<KBox<Self>>;

    fn run(this: Pin<KBox<Self>>) {
        // SAFETY: only `work` is pinned, and it is neither moved nor used
        // again: the box is freed at the end of this call, which the
        // workqueue allows.
        let mut me = unsafe { Pin::into_inner_unchecked(this) };
        let (mm, writable) = (me.mm, me.writable);
        if !mm.is_null() {
            // SAFETY: queued by `PinnedPages::drop`, which handed over the
            // pages, their charge and the mm reference (type invariant).
            unsafe { release(&mut me.pages, mm, writable) };
        }
    }
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
        // callers charge it to their budget too ([`PinnedPages::footprint`]).
        let mut pages: KVVec<*mut bindings::page> =
            KVVec::from_elem(core::ptr::null_mut(), npages, super::gfp::ACCOUNTED)?;
        let late = KBox::pin_init(
            pin_init!(LateRelease {
                work <- new_work!("srnic_unpin"),
                pages: KVVec::new(),
                mm: core::ptr::null_mut(),
                writable,
            }),
            super::gfp::ACCOUNTED,
        )?;
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
            pages: PageArray(pages),
            mm,
            writable,
            late: Some(late),
        })
    }

    /// The kernel memory of the pages of a range of `npages`, besides the
    /// pages themselves (charged to RLIMIT_MEMLOCK): the page array and the
    /// late release.
    pub(crate) fn footprint(npages: usize) -> Option<usize> {
        npages
            .checked_mul(core::mem::size_of::<*mut bindings::page>())?
            .checked_add(core::mem::size_of::<LateRelease>())
    }

    /// Copies `data` into the pages at `offset` (`EPERM` unless pinned
    /// writable).
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        if !self.writable {
            return Err(EPERM);
        }
        self.pages.write(offset, data)
    }

    /// The page array (to read and to hand to the socket layer).
    pub(crate) fn pages(&self) -> &PageArray {
        &self.pages
    }
}

/// An array of pages that its owner ([`PinnedPages`], [`KernelPages`])
/// keeps alive.
///
/// # Invariants
///
/// Every page in it stays pinned or referenced while the array lives.
pub(crate) struct PageArray(KVVec<*mut bindings::page>);

impl PageArray {
    /// The number of pages.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
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
            // SAFETY: `p.page` is kept by `self`; the mapping is released
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
    fn write(&self, offset: usize, data: &[u8]) -> Result {
        let mut src = data;
        self.for_each_piece(offset, data.len(), |dst, n| {
            let (now, rest) = src.split_at(n);
            // SAFETY: `dst` is mapped and writable for `n` bytes (the owner
            // checked it may write); `now` is `n` bytes that do not overlap it.
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
        if end > self.0.len().checked_mul(PAGE_SIZE).ok_or(EFAULT)? {
            return Err(EFAULT);
        }
        let mut pos = offset;
        while pos < end {
            let page = *self.0.get(pos / PAGE_SIZE).ok_or(EFAULT)?;
            let in_page = pos % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(end - pos);
            // INVARIANT: `page` is kept by `self`, borrowed for 'a, and
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
        let late = self.late.take();
        if super::sync::may_sleep() {
            // SAFETY: by the type invariant the pages are pinned and charged to
            // `mm`, which is held; nothing refers to them after this.
            unsafe { release(&mut self.pages.0, self.mm, self.writable) };
            return;
        }
        let Some(mut late) = late else { return };
        // SAFETY: `pages`, `mm` and `writable` are not structurally pinned;
        // the box is not queued yet, so nothing else refers to it.
        let l = unsafe { late.as_mut().get_unchecked_mut() };
        l.pages = core::mem::replace(&mut self.pages.0, KVVec::new());
        l.mm = self.mm;
        // INVARIANT: the pages, their charge and the mm reference go to the
        // work item, which releases them; it cannot be queued already (it was
        // never queued before), so this enqueue takes it.
        let _ = super::wq::queue().enqueue(late);
    }
}

/// `struct page`, as kernel clients pass it.
pub(crate) type RawPage = bindings::page;
/// `struct bio_vec`, as kernel clients pass it.
pub(crate) type RawBioVec = bindings::bio_vec;

/// Pages a kernel client handed over, each referenced (`get_page`) for as
/// long as this value lives. Kernel memory is neither pinned nor charged to
/// a process: the client owns it, and the reference keeps the pages from
/// being freed under a transfer even if the client frees them too early.
pub(crate) struct KernelPages {
    pages: PageArray,
}

// SAFETY: page references may be used and dropped from any thread.
unsafe impl Send for KernelPages {}
// SAFETY: `&KernelPages` only maps pages to copy data; the array is immutable.
unsafe impl Sync for KernelPages {}

impl KernelPages {
    /// References the `n` pages at `pages`.
    ///
    /// # Safety
    ///
    /// `pages` points to `n` valid `struct page` pointers, each page live
    /// for the duration of this call.
    pub(crate) unsafe fn from_array(pages: *const *mut bindings::page, n: usize) -> Result<Self> {
        if n == 0 || pages.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: by the function's contract.
        let src = unsafe { core::slice::from_raw_parts(pages, n) };
        if src.iter().any(|p| p.is_null()) {
            return Err(EINVAL);
        }
        Self::hold(src.iter().copied(), n)
    }

    /// References the pages of `n` `bio_vec`s at `bv`, which must describe
    /// one contiguous range (as a region is): each one continues where the
    /// one before it ended, either in the same page (the block layer merges
    /// physically contiguous pieces of one page, such as 1 KiB buffers, into
    /// one request) or at the start of a new page after one that ended at
    /// its page's end. Returns the pages, the offset of the range in the
    /// first page, and its length.
    ///
    /// # Safety
    ///
    /// `bv` points to `n` valid `struct bio_vec`s whose pages are live for
    /// the duration of this call.
    pub(crate) unsafe fn from_bvecs(bv: *const bindings::bio_vec, n: usize) -> Result<(Self, usize, u64)> {
        if n == 0 || bv.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: by the function's contract.
        let v = unsafe { core::slice::from_raw_parts(bv, n) };
        if v.iter().any(|b| b.bv_page.is_null() || b.bv_len == 0) {
            return Err(EINVAL);
        }
        // Every page piece of every bio_vec, in order, as (page, start, end)
        // within the page. A bio_vec may span several pages (multi-page
        // bvecs): they are physically contiguous and `nth_page` finds each.
        let pieces = || {
            v.iter().flat_map(|b| {
                let (off, end) = (b.bv_offset as usize, b.bv_offset as usize + b.bv_len as usize);
                (off / PAGE_SIZE..end.div_ceil(PAGE_SIZE)).map(move |i| {
                    let base = i * PAGE_SIZE;
                    // SAFETY: the i-th page of a multi-page bio_vec.
                    let page: *mut bindings::page = unsafe { srnic_nth_page(b.bv_page.cast(), i as c_ulong).cast() };
                    (page, off.max(base) - base, end.min(base + PAGE_SIZE) - base)
                })
            })
        };
        // The pages of the range: a piece that continues its predecessor in
        // the same page adds none.
        let continues = |prev: Option<(*mut bindings::page, usize)>, page: *mut bindings::page, start: usize| match prev {
            None => Ok(true),
            Some((p, end)) if p == page && end == start => Ok(false),
            Some((_, end)) if end == PAGE_SIZE && start == 0 => Ok(true),
            Some(_) => Err(EINVAL),
        };
        let mut npages = 0usize;
        let mut prev = None;
        for (page, start, end) in pieces() {
            if continues(prev, page, start)? {
                npages += 1;
            }
            prev = Some((page, end));
        }
        let len: u64 = v.iter().map(|b| u64::from(b.bv_len)).sum();
        let first = v[0].bv_offset as usize % PAGE_SIZE;
        let mut prev = None;
        let pages = pieces().filter_map(move |(page, start, end)| {
            let new = continues(prev, page, start).unwrap_or(true);
            prev = Some((page, end));
            new.then_some(page)
        });
        Ok((Self::hold(pages, npages)?, first, len))
    }

    /// Takes a reference on each of the `n` pages of `it`.
    fn hold(it: impl Iterator<Item = *mut bindings::page>, n: usize) -> Result<Self> {
        // INVARIANT: a page goes into the array with its reference (and
        // `drop` gives back those in it, also on a failure here).
        let mut me = Self { pages: PageArray(KVVec::with_capacity(n, super::gfp::ACCOUNTED)?) };
        for p in it {
            me.pages.0.push(p, super::gfp::ACCOUNTED)?;
            // SAFETY: the caller's pages are live; this reference keeps them so.
            unsafe { srnic_get_page(p.cast()) };
        }
        Ok(me)
    }

    /// Copies `data` into the pages at `offset`.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) -> Result {
        self.pages.write(offset, data)
    }

    /// The page array.
    pub(crate) fn pages(&self) -> &PageArray {
        &self.pages
    }
}

impl Drop for KernelPages {
    fn drop(&mut self) {
        for p in self.pages.0.iter() {
            // SAFETY: drops the reference `hold` took.
            unsafe { srnic_put_page(p.cast()) };
        }
    }
}
