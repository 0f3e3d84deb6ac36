// SPDX-License-Identifier: GPL-2.0
//! The bytes of a raw-frame endpoint's messages and receives (RMPP, VMTP):
//! pinned user pages or a range of a memory region, read and written piece
//! by piece.

use crate::{
    sys::pages::PinnedPages,
    verbs::budget::{self, Charge},
    verbs::mr::{Mr, MrTable, Need},
};
use kernel::{page::PAGE_SIZE, prelude::*, sync::Arc};

/// The bytes of a message or receive: pinned user pages, or a memory region.
pub(crate) enum Buf {
    /// A zero-length buffer.
    Empty,
    /// `len` bytes at offset `off` of the first pinned page; the page array is
    /// charged to the context's budget (the pages to RLIMIT_MEMLOCK).
    Pinned { pages: PinnedPages, off: usize, len: usize, _charge: Charge },
    /// `len` bytes at address `addr` of a region (checked at post time).
    Region { mr: Arc<Mr>, addr: u64, len: usize },
}

impl Buf {
    /// Resolves `[addr, addr + len)`: through the region `lkey` (which must belong
    /// to `pd_id` and allow `need`), or by pinning the user pages when `lkey` is 0.
    /// `EINVAL` when `len` exceeds `max`.
    pub(crate) fn new(mrs: &MrTable, pd_id: u64, addr: u64, len: u64, lkey: u32, need: Need, max: u64) -> Result<Self> {
        if len > max {
            return Err(EINVAL);
        }
        let n = usize::try_from(len).map_err(|_| EINVAL)?;
        if lkey != 0 {
            let mr = mrs.lookup(lkey).ok_or(EINVAL)?;
            mr.check(pd_id, addr, len, need).map_err(|_| EACCES)?;
            return Ok(Buf::Region { mr, addr, len: n });
        }
        if n == 0 {
            return Ok(Buf::Empty);
        }
        let end = addr.checked_add(len).ok_or(EFAULT)?;
        let page = PAGE_SIZE as u64;
        let first = addr & !(page - 1);
        let last = end.checked_add(page - 1).ok_or(EFAULT)? & !(page - 1);
        let npages = usize::try_from((last - first) / page).map_err(|_| EINVAL)?;
        let start = usize::try_from(first).map_err(|_| EFAULT)?;
        let charge = mrs.budget().charge(budget::array::<usize>(npages)?)?;
        let pages = PinnedPages::pin(start, npages, need == Need::LocalWrite)?;
        Ok(Buf::Pinned {
            pages,
            off: usize::try_from(addr - first).map_err(|_| EFAULT)?,
            len: n,
            _charge: charge,
        })
    }

    /// Its length.
    pub(crate) fn len(&self) -> usize {
        match self {
            Buf::Empty => 0,
            Buf::Pinned { len, .. } | Buf::Region { len, .. } => *len,
        }
    }

    fn check(&self, off: usize, n: usize) -> Result {
        match off.checked_add(n) {
            Some(end) if end <= self.len() => Ok(()),
            _ => Err(EFAULT),
        }
    }

    /// Copies `data` to byte `off` of the buffer.
    pub(crate) fn write(&self, off: usize, data: &[u8]) -> Result {
        self.check(off, data.len())?;
        match self {
            Buf::Empty => Ok(()),
            Buf::Pinned { pages, off: base, .. } => pages.write(base + off, data),
            Buf::Region { mr, addr, .. } => mr.write(addr.checked_add(off as u64).ok_or(EFAULT)?, data),
        }
    }

    /// Calls `f` with the pieces of `[off, off + n)`, in order.
    pub(crate) fn read_pieces(&self, off: usize, n: usize, f: impl FnMut(&[u8]) -> Result) -> Result {
        self.check(off, n)?;
        match self {
            Buf::Empty => Ok(()),
            Buf::Pinned { pages, off: base, .. } => pages.pages().read_pieces(base + off, n, f),
            Buf::Region { mr, addr, .. } => {
                mr.read_pieces(addr.checked_add(off as u64).ok_or(EFAULT)?, n, f)
            }
        }
    }
}
