// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Memory regions (ibverbs' `ibv_mr`): user memory registered with the device,
//! pinned and addressed locally by the lkey and remotely by the rkey (STag) plus
//! the virtual address.
//!
//! # Why this is sound
//!
//! The device reads registered memory (sends, RDMA WRITE sources, a peer's RDMA
//! READ) and writes it (receives, RDMA READ destinations, a peer's RDMA WRITE).
//! Reads by the device cannot break the program. Writes can, if they race with
//! the program's own accesses, so each way the device can write is behind an
//! `unsafe` promise:
//!
//! - a receive ([`crate::RecvWr::new`]) or an RDMA READ ([`crate::SendWr::rdma_read`])
//!   is `unsafe` to construct: the caller promises not to touch the target bytes,
//!   nor drop their region, until the work request completes;
//! - registering with [`AccessFlags::REMOTE_WRITE`] is `unsafe`
//!   ([`ProtectionDomain::reg_mr_unchecked`]): the caller promises an
//!   application protocol that keeps the program off bytes a peer may be writing.
//!
//! Everything else is safe. A [`MemoryRegion`] owns or exclusively borrows its
//! memory for its whole life, so the memory outlives the registration, and the
//! program reaches it only through the region ([`MemoryRegion::as_slice`],
//! [`MemoryRegion::as_mut_slice`]).

use crate::error::{Error, Result};
use crate::pd::{PdInner, ProtectionDomain};
use srnic_uapi as abi;
use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::ptr::NonNull;
use std::sync::Arc;

/// Access rights of a memory region (`SRNIC_ACCESS_*`, ibverbs' `ibv_access_flags`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AccessFlags(pub u32);

impl AccessFlags {
    /// The device may write the region locally (receives, RDMA READ results).
    pub const LOCAL_WRITE: Self = Self(abi::SRNIC_ACCESS_LOCAL_WRITE);
    /// Peers may RDMA WRITE into the region.
    pub const REMOTE_WRITE: Self = Self(abi::SRNIC_ACCESS_REMOTE_WRITE);
    /// Peers may RDMA READ the region.
    pub const REMOTE_READ: Self = Self(abi::SRNIC_ACCESS_REMOTE_READ);
    /// Every right.
    pub const ALL: Self = Self(abi::SRNIC_ACCESS_ALL);

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for AccessFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// A page-aligned, zero-initialised buffer the library allocates, for memory
/// regions that own their memory ([`ProtectionDomain::reg_buffer`]).
#[derive(Debug)]
pub struct MrBuffer {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: MrBuffer uniquely owns its allocation, like Box<[u8]>.
unsafe impl Send for MrBuffer {}
// SAFETY: shared access only hands out &[u8], like Box<[u8]>.
unsafe impl Sync for MrBuffer {}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

impl MrBuffer {
    /// Allocates `len` zeroed bytes starting on a page boundary. The allocation
    /// is rounded up to whole pages (at least one), so a zero-length buffer is
    /// still a valid address.
    pub fn new(len: usize) -> Result<Self> {
        let page = page_size();
        let size = len
            .max(1)
            .checked_next_multiple_of(page)
            .ok_or(Error::InvalidArgument("buffer too large"))?;
        let layout = Layout::from_size_align(size, page)
            .map_err(|_| Error::InvalidArgument("buffer too large"))?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(p).ok_or(Error::Os {
            op: "allocating a memory region buffer",
            source: std::io::Error::from_raw_os_error(libc::ENOMEM),
        })?;
        Ok(Self { ptr, len, layout })
    }

    /// The length asked for.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the length is zero.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::ops::Deref for MrBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for MrBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for MrBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated with exactly this layout in new().
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[derive(Debug)]
enum Storage<'buf> {
    Borrowed(PhantomData<&'buf mut [u8]>),
    Owned(MrBuffer),
    Raw,
}

/// A registered memory region. `'buf` is the lifetime of borrowed memory
/// (`'static` for owned or raw registrations).
#[derive(Debug)]
pub struct MemoryRegion<'buf> {
    pd: Arc<PdInner>,
    handle: u32,
    addr: *mut u8,
    len: usize,
    lkey: u32,
    rkey: u32,
    access: AccessFlags,
    storage: Storage<'buf>,
}

// SAFETY: the region behaves like the &mut [u8] or MrBuffer it holds: the pointer
// is only dereferenced through &self / &mut self methods.
unsafe impl Send for MemoryRegion<'_> {}
// SAFETY: as above; &self only hands out &[u8].
unsafe impl Sync for MemoryRegion<'_> {}

/// A local scatter/gather element (`struct srnic_sge`): a byte range of a
/// registered region, or of any memory for an inline send ([`Sge::inline`]).
/// It borrows the region, so the region outlives the work requests built from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sge<'a> {
    /// The address.
    pub addr: u64,
    /// The length in bytes.
    pub length: u32,
    /// The local key (ignored for inline sends).
    pub lkey: u32,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> Sge<'a> {
    /// An element over plain memory for an INLINE send: the module copies the
    /// bytes at post time and ignores the key.
    pub fn inline(data: &'a [u8]) -> Result<Self> {
        Ok(Self {
            addr: data.as_ptr() as u64,
            length: u32::try_from(data.len())
                .map_err(|_| Error::InvalidArgument("SGE longer than 4 GiB"))?,
            lkey: 0,
            _borrow: PhantomData,
        })
    }

    /// An element from raw values (for foreign callers such as the C ABI).
    ///
    /// # Safety
    ///
    /// For a receive or RDMA READ the same promise as [`crate::RecvWr::new`]
    /// applies to the described memory; `'a` is unchecked.
    pub unsafe fn from_raw(addr: u64, length: u32, lkey: u32) -> Self {
        Self {
            addr,
            length,
            lkey,
            _borrow: PhantomData,
        }
    }

    pub(crate) fn to_abi(self) -> abi::SrnicSge {
        abi::SrnicSge {
            addr: self.addr,
            length: self.length,
            lkey: self.lkey,
        }
    }
}

/// What a peer needs to address a region: the base address, length and rkey.
/// Send it to the peer in any form; [`RemoteMr::to_bytes`] is one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteMr {
    /// The region's virtual address (the tagged offset of its first byte).
    pub addr: u64,
    /// The region's length.
    pub len: u64,
    /// The STag.
    pub rkey: u32,
}

impl RemoteMr {
    /// Encoded length of [`RemoteMr::to_bytes`].
    pub const ENCODED_LEN: usize = 20;

    /// Little-endian addr, len, rkey.
    pub fn to_bytes(&self) -> [u8; Self::ENCODED_LEN] {
        let mut b = [0u8; Self::ENCODED_LEN];
        b[0..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..16].copy_from_slice(&self.len.to_le_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_le_bytes());
        b
    }

    /// Decodes [`RemoteMr::to_bytes`]; `None` if `b` is too short.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() < Self::ENCODED_LEN {
            return None;
        }
        Some(Self {
            addr: u64::from_le_bytes(b[0..8].try_into().ok()?),
            len: u64::from_le_bytes(b[8..16].try_into().ok()?),
            rkey: u32::from_le_bytes(b[16..20].try_into().ok()?),
        })
    }

    /// The remote address of byte `offset` of the region.
    pub fn at(&self, offset: u64) -> RemoteAddr {
        RemoteAddr {
            addr: self.addr.wrapping_add(offset),
            rkey: self.rkey,
        }
    }
}

/// Where an RDMA WRITE or READ goes: a peer's virtual address and its STag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteAddr {
    /// The virtual address inside the peer's region (the tagged offset).
    pub addr: u64,
    /// The peer region's rkey.
    pub rkey: u32,
}

fn resolve(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::InvalidArgument("range outside the memory region"));
    }
    Ok((start, end))
}

/// `total` bytes split into `min(n, total)` nearly equal lengths, the first
/// ones one byte longer.
pub fn split_lengths(total: usize, n: usize) -> Vec<usize> {
    let n = n.min(total);
    (0..n)
        .map(|i| total / n + usize::from(i < total % n))
        .collect()
}

impl ProtectionDomain {
    fn register(&self, addr: *mut u8, len: usize, access: AccessFlags) -> Result<(u32, u32, u32)> {
        let mut r = abi::SrnicRegMr {
            size: std::mem::size_of::<abi::SrnicRegMr>() as u32,
            pd_handle: self.inner.handle,
            addr: addr as u64,
            length: len as u64,
            access: access.0,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; addr/len describe memory the
        // caller keeps valid for the region's life.
        unsafe { self.inner.ctx.cmd(abi::SRNIC_IOCTL_REG_MR, &mut r) }?;
        Ok((r.mr_handle, r.lkey, r.rkey))
    }

    fn check_safe_access(access: AccessFlags) -> Result<()> {
        if access.0 & abi::SRNIC_ACCESS_REMOTE_WRITE != 0 {
            return Err(Error::InvalidArgument(
                "REMOTE_WRITE access needs the unsafe reg_mr_unchecked/reg_buffer_unchecked",
            ));
        }
        Ok(())
    }

    /// Registers `buf`, borrowed exclusively for the region's life.
    /// `access` must not contain [`AccessFlags::REMOTE_WRITE`] (see
    /// [`ProtectionDomain::reg_mr_unchecked`]).
    pub fn reg_mr<'buf>(
        &self,
        buf: &'buf mut [u8],
        access: AccessFlags,
    ) -> Result<MemoryRegion<'buf>> {
        Self::check_safe_access(access)?;
        // SAFETY: no remote write access.
        unsafe { self.reg_mr_unchecked(buf, access) }
    }

    /// Registers `buf` with any access rights.
    ///
    /// # Safety
    ///
    /// With [`AccessFlags::REMOTE_WRITE`] a peer may write the region at any time
    /// while it is registered. The caller must make sure (by its application
    /// protocol) that the program does not access bytes while a peer may be
    /// writing them.
    pub unsafe fn reg_mr_unchecked<'buf>(
        &self,
        buf: &'buf mut [u8],
        access: AccessFlags,
    ) -> Result<MemoryRegion<'buf>> {
        let (handle, lkey, rkey) = self.register(buf.as_mut_ptr(), buf.len(), access)?;
        Ok(MemoryRegion {
            pd: self.inner.clone(),
            handle,
            addr: buf.as_mut_ptr(),
            len: buf.len(),
            lkey,
            rkey,
            access,
            storage: Storage::Borrowed(PhantomData),
        })
    }

    /// Registers an owned buffer; [`MemoryRegion::into_buffer`] gives it back.
    /// `access` must not contain [`AccessFlags::REMOTE_WRITE`].
    pub fn reg_buffer(&self, buf: MrBuffer, access: AccessFlags) -> Result<MemoryRegion<'static>> {
        Self::check_safe_access(access)?;
        // SAFETY: no remote write access.
        unsafe { self.reg_buffer_unchecked(buf, access) }
    }

    /// Registers an owned buffer with any access rights.
    ///
    /// # Safety
    ///
    /// As [`ProtectionDomain::reg_mr_unchecked`].
    pub unsafe fn reg_buffer_unchecked(
        &self,
        mut buf: MrBuffer,
        access: AccessFlags,
    ) -> Result<MemoryRegion<'static>> {
        let addr = buf.as_mut_ptr();
        let len = buf.len();
        let (handle, lkey, rkey) = self.register(addr, len, access)?;
        Ok(MemoryRegion {
            pd: self.inner.clone(),
            handle,
            addr,
            len,
            lkey,
            rkey,
            access,
            storage: Storage::Owned(buf),
        })
    }

    /// Registers memory the library knows nothing about (for the C ABI).
    ///
    /// # Safety
    ///
    /// `[addr, addr + len)` must stay mapped while the region lives, and the
    /// promise of [`ProtectionDomain::reg_mr_unchecked`] holds. The region's
    /// slice accessors must not be used while anything else accesses the memory.
    pub unsafe fn reg_mr_raw(
        &self,
        addr: *mut u8,
        len: usize,
        access: AccessFlags,
    ) -> Result<MemoryRegion<'static>> {
        let (handle, lkey, rkey) = self.register(addr, len, access)?;
        Ok(MemoryRegion {
            pd: self.inner.clone(),
            handle,
            addr,
            len,
            lkey,
            rkey,
            access,
            storage: Storage::Raw,
        })
    }
}

impl<'buf> MemoryRegion<'buf> {
    /// The kernel handle.
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The local key, for SGEs.
    pub fn lkey(&self) -> u32 {
        self.lkey
    }

    /// The remote key (STag), for peers.
    pub fn rkey(&self) -> u32 {
        self.rkey
    }

    /// The access rights it was registered with.
    pub fn access(&self) -> AccessFlags {
        self.access
    }

    /// The start address.
    pub fn addr(&self) -> u64 {
        self.addr as u64
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the region is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The protection domain it belongs to.
    pub fn pd(&self) -> ProtectionDomain {
        ProtectionDomain {
            inner: self.pd.clone(),
        }
    }

    /// The region's bytes. See the module documentation for why this is safe.
    pub fn as_slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the memory is owned or exclusively borrowed for 'buf (or the
        // raw registration's caller promised validity); device writes are only
        // possible under unsafe promises that exclude this access.
        unsafe { std::slice::from_raw_parts(self.addr, self.len) }
    }

    /// The region's bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as as_slice, and &mut self excludes other program accesses.
        unsafe { std::slice::from_raw_parts_mut(self.addr, self.len) }
    }

    /// A scatter/gather element over `range` of the region.
    pub fn sge(&self, range: impl RangeBounds<usize>) -> Result<Sge<'_>> {
        let (s, e) = resolve(range, self.len)?;
        Ok(Sge {
            addr: self.addr as u64 + s as u64,
            length: u32::try_from(e - s)
                .map_err(|_| Error::InvalidArgument("SGE longer than 4 GiB"))?,
            lkey: self.lkey,
            _borrow: PhantomData,
        })
    }

    /// `range` split into `n` consecutive elements of nearly equal length (the
    /// first ones one byte longer); fewer when the range has fewer than `n`
    /// bytes, none when it is empty.
    pub fn sges(&self, range: impl RangeBounds<usize>, n: usize) -> Result<Vec<Sge<'_>>> {
        let (s, e) = resolve(range, self.len)?;
        let mut off = s;
        split_lengths(e - s, n)
            .into_iter()
            .map(|l| {
                off += l;
                self.sge(off - l..off)
            })
            .collect()
    }

    /// What a peer needs to address this region.
    pub fn remote(&self) -> RemoteMr {
        RemoteMr {
            addr: self.addr as u64,
            len: self.len as u64,
            rkey: self.rkey,
        }
    }

    /// Deregisters the region and gives back an owned buffer (`None` for
    /// borrowed or raw memory).
    pub fn into_buffer(mut self) -> Option<MrBuffer> {
        self.pd
            .ctx
            .destroy(abi::SRNIC_IOCTL_DEREG_MR, std::mem::take(&mut self.handle));
        match std::mem::replace(&mut self.storage, Storage::Raw) {
            Storage::Owned(b) => Some(b),
            _ => None,
        }
    }
}

impl Drop for MemoryRegion<'_> {
    fn drop(&mut self) {
        // Deregister before the owned buffer (a field) is freed.
        if self.handle != 0 {
            self.pd.ctx.destroy(abi::SRNIC_IOCTL_DEREG_MR, self.handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_zeroed() {
        for len in [0, 1, 4095, 4096, 65536 + 3] {
            let b = MrBuffer::new(len).unwrap();
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % page_size(), 0);
            assert!(b.iter().all(|&x| x == 0));
        }
        let mut b = MrBuffer::new(10).unwrap();
        b[9] = 7;
        assert_eq!(b[9], 7);
    }

    #[test]
    fn remote_mr_round_trips() {
        let r = RemoteMr {
            addr: 0x7fff_1234_5000,
            len: 1 << 20,
            rkey: 0xdead_beef,
        };
        let b = r.to_bytes();
        assert_eq!(&b[16..20], &[0xef, 0xbe, 0xad, 0xde]);
        assert_eq!(RemoteMr::from_bytes(&b), Some(r));
        assert_eq!(RemoteMr::from_bytes(&b[..19]), None);
        assert_eq!(r.at(16).addr, 0x7fff_1234_5010);
        assert_eq!(r.at(16).rkey, 0xdead_beef);
    }

    #[test]
    fn ranges_resolve() {
        assert_eq!(resolve(.., 10).unwrap(), (0, 10));
        assert_eq!(resolve(2..=4, 10).unwrap(), (2, 5));
        assert_eq!(resolve(10.., 10).unwrap(), (10, 10));
        assert!(resolve(0..11, 10).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let r = 5..4;
        assert!(resolve(r, 10).is_err());
    }

    #[test]
    fn inline_sge_points_at_the_data() {
        let d = [1u8, 2, 3];
        let s = Sge::inline(&d).unwrap();
        assert_eq!(s.addr, d.as_ptr() as u64);
        assert_eq!(s.length, 3);
        assert_eq!(s.lkey, 0);
    }

    #[test]
    fn splits() {
        assert_eq!(split_lengths(10, 3), vec![4, 3, 3]);
        assert_eq!(split_lengths(2, 4), vec![1, 1]);
        assert!(split_lengths(0, 4).is_empty());
        assert!(split_lengths(5, 0).is_empty());
        assert_eq!(split_lengths(4096, 1), vec![4096]);
        assert_eq!(split_lengths(1 << 24, 16).iter().sum::<usize>(), 1 << 24);
    }

    #[test]
    fn access_bits() {
        assert!(AccessFlags::ALL.contains(AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE));
        assert!(!AccessFlags::LOCAL_WRITE.contains(AccessFlags::REMOTE_READ));
        assert!(ProtectionDomain::check_safe_access(
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ
        )
        .is_ok());
        assert!(ProtectionDomain::check_safe_access(AccessFlags::ALL).is_err());
    }
}
