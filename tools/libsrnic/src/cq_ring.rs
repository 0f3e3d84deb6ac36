// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! A CQ's ring mapped from the module (`struct srnic_cq_ring` in
//! `uapi/srnic.h`): polling reads completions from shared memory, without a
//! system call. The module writes an entry and then `prod` (release); this
//! side reads `prod` (acquire), the entries, and then stores `cons`
//! (release), after which the module may reuse those entries.

use crate::error::{Error, Result};
use crate::wc::WorkCompletion;
use srnic_uapi as abi;
use std::mem::{offset_of, size_of};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

const PROD: usize = offset_of!(abi::SrnicCqRing, prod);
const CQE: usize = offset_of!(abi::SrnicCqRing, cqe);
const CONS: usize = offset_of!(abi::SrnicCqRing, cons);
const ENTRIES: usize = size_of::<abi::SrnicCqRing>();

/// Set (to anything) in the environment, CQs are polled with
/// `SRNIC_IOCTL_POLL_CQ` instead of a mapped ring, as with a module that has
/// none (for comparisons and tests of that path).
pub const NO_RING_ENV: &str = "SRNIC_CQ_NO_RING";

/// A mapped ring; unmapped on drop.
///
/// # Invariants
///
/// `base` is a live shared mapping of `len` bytes of a CQ's ring whose
/// header says `cqe` entries, and `len` covers the header and `cqe` entries.
#[derive(Debug)]
pub(crate) struct Ring {
    base: NonNull<u8>,
    len: usize,
    idx: abi::CqRingIndex,
    /// Serializes pollers (`cons` has one writer at a time).
    poller: Mutex<()>,
}

// SAFETY: the mapping is process-wide; every access goes through atomics or
// volatile reads, and `cons` is written under `poller`.
unsafe impl Send for Ring {}
// SAFETY: as above.
unsafe impl Sync for Ring {}

impl Ring {
    /// Maps the ring `CREATE_CQ` described (`None` when the module has none
    /// to map, or the environment asks for `POLL_CQ`).
    pub(crate) fn map(fd: std::os::fd::RawFd, c: &abi::SrnicCreateCq) -> Result<Option<Self>> {
        if c.ring_bytes == 0 || std::env::var_os(NO_RING_ENV).is_some() {
            return Ok(None);
        }
        let len = c.ring_bytes as usize;
        let idx = abi::CqRingIndex::new(c.cqe)
            .ok_or_else(|| Error::Protocol(format!("CREATE_CQ: {} entries", c.cqe)))?;
        let need = (c.cqe as usize)
            .checked_mul(size_of::<abi::SrnicWc>())
            .and_then(|n| n.checked_add(ENTRIES));
        if need.is_none_or(|n| n > len) {
            return Err(Error::Protocol(format!(
                "CREATE_CQ: a ring of {len} bytes for {} entries",
                c.cqe
            )));
        }
        let off = libc::off_t::try_from(c.ring_offset)
            .map_err(|_| Error::Protocol(format!("CREATE_CQ: ring offset {:#x}", c.ring_offset)))?;
        // SAFETY: a new shared mapping of the device file; nothing else is
        // at the address the kernel picks.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::Os {
                op: "mmap (CQ ring)",
                source: std::io::Error::last_os_error(),
            });
        }
        // INVARIANT: mapped, `len` bytes; the header's capacity is checked next.
        let ring = Self {
            base: NonNull::new(p.cast()).expect("mmap does not return NULL on success"),
            len,
            idx,
            poller: Mutex::new(()),
        };
        let hdr = ring.word(CQE).load(Ordering::Relaxed);
        if hdr != c.cqe {
            return Err(Error::Protocol(format!(
                "CQ ring header: {hdr} entries, CREATE_CQ said {}",
                c.cqe
            )));
        }
        Ok(Some(ring))
    }

    fn word(&self, off: usize) -> &AtomicU32 {
        // SAFETY: `off` is one of the header's aligned u32 fields, inside
        // the mapping (type invariant); it lives as long as `self`.
        unsafe { AtomicU32::from_ptr(self.base.as_ptr().add(off).cast()) }
    }

    /// Moves up to `wc.len()` completions into the front of `wc`.
    pub(crate) fn poll(&self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let _one = self.poller.lock().unwrap_or_else(|e| e.into_inner());
        let prod = self.word(PROD).load(Ordering::Acquire);
        let cons = self.word(CONS).load(Ordering::Relaxed);
        let Some(held) = self.idx.held(prod, cons) else {
            return Err(Error::Protocol(format!(
                "CQ ring: prod {prod}, cons {cons} for {} entries",
                self.idx.cqe()
            )));
        };
        let n = (held as usize).min(wc.len());
        for (k, out) in wc[..n].iter_mut().enumerate() {
            let slot = self.idx.slot(self.idx.advance(cons, k as u32));
            // SAFETY: entry `slot` < cqe lies inside the mapping (type
            // invariant) and is aligned (64-byte entries after a 128-byte
            // header); the module wrote it before `prod` (acquired above).
            let raw = unsafe {
                std::ptr::read_volatile(
                    self.base
                        .as_ptr()
                        .add(ENTRIES + slot * size_of::<abi::SrnicWc>())
                        .cast::<abi::SrnicWc>(),
                )
            };
            *out = WorkCompletion(raw);
        }
        if n > 0 {
            // The entries are copied before the module may reuse them.
            self.word(CONS)
                .store(self.idx.advance(cons, n as u32), Ordering::Release);
        }
        Ok(n)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map` (type invariant), not used again.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}
