// SPDX-License-Identifier: GPL-2.0
//! Memory regions.
//!
//! A memory region is a range of memory, kept for as long as the region (or
//! any in-flight operation on it) lives, with access rights and a protection
//! domain: the registering process's memory, pinned, or a kernel client's
//! pages, referenced ([`MrSource`]). Its STag (24-bit index, 8-bit key) is both the local
//! key and the remote key; peers address it with tagged offsets equal to its
//! virtual addresses, as siw does. A remote Send with Invalidate invalidates it:
//! from then on every access fails, until it is deregistered.

use crate::{
    new_spinlock_bh,
    proto::rdmap::StagError,
    sys::{
        gfp::ACCOUNTED,
        pages::{KernelPages, PageArray, PageSlice, PinnedPages},
        random::random_u8,
        sync::SpinLockBh,
    },
    uapi::{SRNIC_ACCESS_LOCAL_WRITE, SRNIC_ACCESS_REMOTE_READ, SRNIC_ACCESS_REMOTE_WRITE},
    verbs::budget::{self, Budget, Charge},
    verbs::pd::{Pd, PdUse},
    verbs::stats::{Live, Object},
};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    alloc::KVec,
    page::PAGE_SIZE,
    prelude::*,
    sync::Arc,
};

/// The STag of a work request's own region ([`Mr::local`]): index 0, which
/// [`MrTable`] never hands out, so no look-up finds it and no peer can name
/// it.
pub(crate) const LOCAL_STAG: u32 = 0;

/// What an access to a region needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// Local read: the source of a Send, Write or Read Response.
    LocalRead,
    /// Local write: a receive buffer or the sink of a local Read.
    LocalWrite,
    /// A peer writes (RDMA Write, Read Response into our sink is `LocalWrite`).
    RemoteWrite,
    /// A peer reads (the source of our Read Response).
    RemoteRead,
}

/// Where a region's pages come from.
pub(crate) enum MrSource {
    /// The calling process's memory under the region's addresses.
    User,
    /// A kernel client's pages: the region starts at byte `offset` of the
    /// first (its addresses are the client's choice).
    Kernel { pages: KernelPages, offset: usize },
}

/// The pages behind a region.
enum Pages {
    /// Pages of a process, pinned and charged to its RLIMIT_MEMLOCK.
    User(PinnedPages),
    /// Pages of a kernel client, referenced.
    Kernel(KernelPages),
}

/// The first page-aligned address and the number of pages under `[va, va + len)`.
fn page_span(va: u64, len: u64) -> Result<(u64, usize)> {
    if len == 0 {
        return Err(EINVAL);
    }
    let end = va.checked_add(len).ok_or(EINVAL)?;
    let first = va & !(PAGE_SIZE as u64 - 1);
    let last = end.checked_add(PAGE_SIZE as u64 - 1).ok_or(EINVAL)? & !(PAGE_SIZE as u64 - 1);
    let npages = usize::try_from((last - first) / PAGE_SIZE as u64).map_err(|_| EINVAL)?;
    Ok((first, npages))
}

impl Pages {
    /// Pins the pages under `[va, va + len)` of the calling process; returns
    /// them and the offset of `va` in the first.
    fn pin_user(va: u64, len: u64, writable: bool) -> Result<(Self, usize)> {
        let (first, npages) = page_span(va, len)?;
        let start = usize::try_from(first).map_err(|_| EFAULT)?;
        let pages = PinnedPages::pin(start, npages, writable)?;
        Ok((Pages::User(pages), (va - first) as usize))
    }

    fn write(&self, offset: usize, data: &[u8]) -> Result {
        match self {
            Pages::User(p) => p.write(offset, data),
            Pages::Kernel(p) => p.write(offset, data),
        }
    }

    fn array(&self) -> &PageArray {
        match self {
            Pages::User(p) => p.pages(),
            Pages::Kernel(p) => p.pages(),
        }
    }
}

/// A registered memory region.
pub(crate) struct Mr {
    /// The STag (lkey and rkey).
    pub(crate) stag: u32,
    /// First virtual address.
    pub(crate) va: u64,
    /// Length in bytes.
    pub(crate) len: u64,
    /// `SRNIC_ACCESS_*` bits.
    pub(crate) access: u32,
    pd: PdUse,
    pages: Pages,
    /// Offset of `va` inside the first pinned page.
    page_off: usize,
    valid: AtomicBool,
    _charge: Charge,
    _live: Live,
}

impl Mr {
    /// What a region over `[va, va + len)` takes of the kernel's memory (the
    /// pinned pages themselves are charged to RLIMIT_MEMLOCK): the region and
    /// what keeps its pages ([`PinnedPages::footprint`]).
    pub(crate) fn footprint(va: u64, len: u64) -> Result<usize> {
        let (_, npages) = page_span(va, len)?;
        budget::sum(&[budget::arc::<Self>(), PinnedPages::footprint(npages).ok_or(EINVAL)?])
    }

    /// Makes a region of `[va, va + len)` over `src`, charged to `budget`
    /// (before anything is allocated or pinned): the calling process's pages
    /// are pinned; a kernel client's must cover the region.
    pub(crate) fn register(
        pd: &Arc<Pd>,
        stag: u32,
        va: u64,
        len: u64,
        access: u32,
        src: MrSource,
        budget: &Arc<Budget>,
    ) -> Result<Arc<Self>> {
        // The region's addresses must not wrap (a kernel client's are its
        // own choice; a process's are checked again when pinned).
        va.checked_add(len).ok_or(EINVAL)?;
        let footprint = match &src {
            MrSource::User => Self::footprint(va, len)?,
            MrSource::Kernel { pages, .. } => {
                budget::sum(&[budget::arc::<Self>(), budget::array::<usize>(pages.pages().len())?])?
            }
        };
        let charge = budget.charge(footprint)?;
        let (pages, page_off) = match src {
            MrSource::User => {
                let writable = access & (SRNIC_ACCESS_LOCAL_WRITE | SRNIC_ACCESS_REMOTE_WRITE) != 0;
                Pages::pin_user(va, len, writable)?
            }
            MrSource::Kernel { pages, offset } => {
                let room = pages.pages().len().checked_mul(PAGE_SIZE).ok_or(EINVAL)?;
                let end = offset.checked_add(usize::try_from(len).map_err(|_| EINVAL)?).ok_or(EINVAL)?;
                if offset >= PAGE_SIZE || end > room {
                    return Err(EINVAL);
                }
                (Pages::Kernel(pages), offset)
            }
        };
        Self::new(pd, stag, va, len, access, pages, page_off, charge)
    }

    /// A work request's own region over a kernel client's pages (a post
    /// whose local memory comes as bio_vecs, `srnic_kv_post_bvec`): `len`
    /// bytes from byte `offset` of the first page, addressed from 0, with STag
    /// [`LOCAL_STAG`] and in no table. Charged to `budget` as a registered
    /// region is; it lives as long as the request (and an operation under
    /// way on it) does.
    pub(crate) fn local(
        pd: &Arc<Pd>,
        pages: KernelPages,
        offset: usize,
        len: u64,
        access: u32,
        budget: &Arc<Budget>,
    ) -> Result<Arc<Self>> {
        Self::register(pd, LOCAL_STAG, 0, len, access, MrSource::Kernel { pages, offset }, budget)
    }

    /// A region of `len` bytes addressed from `va`, over `pages` from byte
    /// `page_off` of the first one.
    #[expect(clippy::too_many_arguments)]
    fn new(
        pd: &Arc<Pd>,
        stag: u32,
        va: u64,
        len: u64,
        access: u32,
        pages: Pages,
        page_off: usize,
        charge: Charge,
    ) -> Result<Arc<Self>> {
        Arc::new(
            Self {
                stag,
                va,
                len,
                access,
                pd: PdUse::new(pd),
                pages,
                page_off,
                valid: AtomicBool::new(true),
                _charge: charge,
                _live: Live::new(Object::Mr),
            },
            ACCOUNTED,
        )
        .map_err(Into::into)
    }

    /// Checks an access of `len` bytes at address `to` by a QP of PD `pd_id`.
    pub(crate) fn check(&self, pd_id: u64, to: u64, len: u64, need: Need) -> Result<(), StagError> {
        if !self.valid.load(Ordering::Acquire) {
            return Err(StagError::InvalidStag);
        }
        if self.pd.id() != pd_id {
            return Err(StagError::PdMismatch);
        }
        let right = match need {
            Need::LocalRead => true,
            Need::LocalWrite => self.access & SRNIC_ACCESS_LOCAL_WRITE != 0,
            Need::RemoteWrite => self.access & SRNIC_ACCESS_REMOTE_WRITE != 0,
            Need::RemoteRead => self.access & SRNIC_ACCESS_REMOTE_READ != 0,
        };
        if !right {
            return Err(StagError::AccessRights);
        }
        let end = to.checked_add(len).ok_or(StagError::ToWrap)?;
        if to < self.va || end > self.va + self.len {
            return Err(StagError::BaseBounds);
        }
        Ok(())
    }

    /// Ends all access through the region's STag (deregistration): checks and
    /// the transmit of a Read Response under way (at its next FPDU) see it.
    /// The pages stay pinned until the last reference is dropped.
    /// The user pages the region pins (0 for a kernel client's region).
    pub(crate) fn pinned_pages(&self) -> u64 {
        match &self.pages {
            Pages::User(_) => page_span(self.va, self.len).map_or(0, |(_, n)| n as u64),
            Pages::Kernel(_) => 0,
        }
    }

    pub(crate) fn revoke(&self) {
        self.valid.store(false, Ordering::Release);
    }

    /// Whether the region's STag is valid (not invalidated or deregistered).
    pub(crate) fn is_valid(&self) -> bool {
        self.valid.load(Ordering::Acquire)
    }

    /// Invalidates the region for a Send with Invalidate from a QP of PD `pd_id`.
    /// Only a region the peer may access (remote read or write) can be
    /// invalidated by it: a local-only region's STag was never the peer's to
    /// name (RFC 5042 section 5.3: no access without consent).
    pub(crate) fn invalidate(&self, pd_id: u64) -> Result<(), StagError> {
        if self.pd.id() != pd_id {
            return Err(StagError::PdMismatch);
        }
        if self.access & (SRNIC_ACCESS_REMOTE_READ | SRNIC_ACCESS_REMOTE_WRITE) == 0 {
            return Err(StagError::AccessRights);
        }
        if !self.valid.swap(false, Ordering::AcqRel) {
            return Err(StagError::InvalidStag);
        }
        Ok(())
    }

    fn offset(&self, to: u64, len: usize) -> Result<usize> {
        let end = to.checked_add(len as u64).ok_or(EFAULT)?;
        if to < self.va || end > self.va + self.len {
            return Err(EFAULT);
        }
        usize::try_from(to - self.va).map(|o| o + self.page_off).map_err(|_| EFAULT)
    }

    /// Copies `data` to address `to` (bounds checked; rights are checked by
    /// [`Self::check`] when the operation starts).
    pub(crate) fn write(&self, to: u64, data: &[u8]) -> Result {
        let off = self.offset(to, data.len())?;
        self.pages.write(off, data)
    }

    /// Calls `f` with the mapped pieces of `[to, to + len)`, in order.
    pub(crate) fn read_pieces(&self, to: u64, len: usize, f: impl FnMut(&[u8]) -> Result) -> Result {
        let off = self.offset(to, len)?;
        self.pages.array().read_pieces(off, len, f)
    }

    /// Calls `f` with the page slices of `[to, to + len)`, in order (for the
    /// socket layer, which reads them itself).
    pub(crate) fn page_slices<'a>(&'a self, to: u64, len: usize, f: impl FnMut(PageSlice<'a>) -> Result) -> Result {
        let off = self.offset(to, len)?;
        self.pages.array().page_slices(off, len, f)
    }
}

/// The memory regions of one file, by STag index. Looked up by the receive and
/// transmit paths of the file's queue pairs as well as by ioctls.
#[pin_data]
pub(crate) struct MrTable {
    /// Bottom-half-safe: the receive path looks regions up in softirq context.
    #[pin]
    slots: SpinLockBh<Slots>,
    budget: Arc<Budget>,
}

/// One STag index of the table.
enum Slot {
    Free,
    /// Taken by a registration whose pages are being pinned (outside the
    /// table's lock).
    Reserved,
    Live(Arc<Mr>),
}

/// One STag index: its state and the key of its last region (so a stale
/// STag does not name a new one). One vector of these, so that a failed
/// allocation cannot leave a slot without its key.
struct Entry {
    slot: Slot,
    key: u8,
}

struct Slots {
    mrs: KVec<Entry>,
    /// Live and reserved slots.
    live: usize,
    max: usize,
}

impl MrTable {
    /// An empty table of at most `max` regions, whose regions are charged to
    /// `budget` (the table's own slots are part of its context's base charge).
    pub(crate) fn new(max: usize, budget: Arc<Budget>) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                slots <- new_spinlock_bh!(Slots { mrs: KVec::new(), live: 0, max }, "srnic_mrs"),
                budget,
            }),
            ACCOUNTED,
        )
    }

    /// The budget the table's regions are charged to (its context's).
    pub(crate) fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    /// Registers a region with a fresh STag; returns it. The STag is reserved
    /// under the table's lock; the pages are pinned outside it, so that a
    /// large registration does not hold up the lookups of the file's data
    /// path.
    pub(crate) fn register(&self, pd: &Arc<Pd>, va: u64, len: u64, access: u32, src: MrSource) -> Result<Arc<Mr>> {
        // Room for one more entry, allocated outside the lock (a spinlock).
        let mut spare: Option<KVec<Entry>> = None;
        let (idx, stag) = loop {
            let mut s = self.slots.lock();
            if s.live >= s.max {
                return Err(ENOMEM);
            }
            let idx = match s.mrs.iter().position(|e| matches!(e.slot, Slot::Free)) {
                Some(i) => i,
                None if s.mrs.len() < s.mrs.capacity() => {
                    // Within capacity: cannot fail.
                    s.mrs.push(Entry { slot: Slot::Free, key: 0 }, ACCOUNTED)?;
                    s.mrs.len() - 1
                }
                None => match spare.take() {
                    Some(mut bigger) if bigger.capacity() > s.mrs.len() => {
                        // The entries move over (within `bigger`'s capacity:
                        // cannot fail); the old buffer is freed (kfree, which
                        // does not sleep).
                        for e in core::mem::replace(&mut s.mrs, KVec::new()) {
                            let _ = bigger.push(e, ACCOUNTED);
                        }
                        s.mrs = bigger;
                        continue;
                    }
                    _ => {
                        let want = s.mrs.len().saturating_mul(2).max(16).min(s.max.max(1));
                        drop(s);
                        spare = Some(KVec::with_capacity(want, ACCOUNTED)?);
                        continue;
                    }
                },
            };
            // STag index 0 is never used: siw's peer-to-peer RTR writes to STag 1
            // with length 0, and index 0 with key 0 would be STag 0.
            let index = u32::try_from(idx + 1).map_err(|_| ENOMEM)?;
            if index >= 1 << 24 {
                return Err(ENOMEM);
            }
            // A random key (RFC 5040 section 8: STags hard to guess), never the
            // slot's previous one, so a stale STag does not name the new region.
            let e = &mut s.mrs[idx];
            let mut key = random_u8();
            if key == e.key {
                key = key.wrapping_add(1);
            }
            e.key = key;
            e.slot = Slot::Reserved;
            s.live += 1;
            break (idx, index << 8 | u32::from(key));
        };
        drop(spare);
        let r = Mr::register(pd, stag, va, len, access, src, &self.budget);
        let mut s = self.slots.lock();
        let Some(slot) = s.mrs.get_mut(idx).map(|e| &mut e.slot).filter(|m| matches!(m, Slot::Reserved)) else {
            // The table was cleared meanwhile (cannot happen while the file
            // makes this call); the region is dropped, after the lock.
            drop(s);
            drop(r);
            return Err(EINVAL);
        };
        match r {
            Ok(mr) => {
                *slot = Slot::Live(mr.clone());
                Ok(mr)
            }
            Err(e) => {
                *slot = Slot::Free;
                s.live -= 1;
                Err(e)
            }
        }
    }

    /// The region named by `stag` (index and key must both match).
    pub(crate) fn lookup(&self, stag: u32) -> Option<Arc<Mr>> {
        let idx = (stag >> 8).checked_sub(1)? as usize;
        let s = self.slots.lock();
        match &s.mrs.get(idx)?.slot {
            Slot::Live(m) if m.stag == stag => Some(m.clone()),
            _ => None,
        }
    }

    /// Removes the region with handle `handle` (its STag index).
    pub(crate) fn deregister(&self, handle: u32) -> Result<Arc<Mr>> {
        let idx = (handle as usize).checked_sub(1).ok_or(EINVAL)?;
        let mut s = self.slots.lock();
        let slot = &mut s.mrs.get_mut(idx).ok_or(EINVAL)?.slot;
        if !matches!(slot, Slot::Live(_)) {
            return Err(EINVAL);
        }
        let Slot::Live(mr) = core::mem::replace(slot, Slot::Free) else {
            return Err(EINVAL);
        };
        s.live -= 1;
        mr.revoke();
        Ok(mr)
    }

    /// Calls `f` with every region and its handle, under the table's lock.
    pub(crate) fn for_each(&self, mut f: impl FnMut(u32, &Mr)) {
        let s = self.slots.lock();
        for e in s.mrs.iter() {
            if let Slot::Live(mr) = &e.slot {
                f(mr.stag >> 8, mr);
            }
        }
    }

    /// Removes every region (file release).
    pub(crate) fn clear(&self) {
        let mrs = {
            let mut s = self.slots.lock();
            s.live = 0;
            core::mem::take(&mut s.mrs)
        };
        for e in mrs.iter() {
            if let Slot::Live(mr) = &e.slot {
                mr.revoke();
            }
        }
        // Unpinning happens here, outside the lock (or later, when an in-flight
        // operation drops its reference).
        drop(mrs);
    }
}
