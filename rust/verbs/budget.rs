// SPDX-License-Identifier: GPL-2.0
//! The kernel memory budget of one context (one open file).
//!
//! Every object a context creates charges its computed size here before it
//! allocates anything, and holds the [`Charge`] for its whole life (like
//! `stats::Live`), so the memory is given back exactly when the object is
//! freed, even after its handle was destroyed. Beyond the cap (the module
//! parameter `file_mem_mib`, read when the file is opened) creation fails
//! with `ENOMEM`. `QUERY_DEVICE` reports the cap and the file's charge.
//!
//! The budget bounds what one file can make srnic allocate; the allocations
//! themselves are charged to the caller's memory cgroup too
//! (`sys::gfp::ACCOUNTED`), which bounds a process with many files. Pinned
//! pages are not in the budget: they are the user's own memory, charged to
//! `RLIMIT_MEMLOCK` (their page arrays, which are kernel memory, are in it).

use crate::sys::{gfp::ACCOUNTED, param};
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{prelude::*, sync::Arc};

/// One context's memory account.
pub(crate) struct Budget {
    used: AtomicUsize,
    cap: usize,
}

impl Budget {
    /// An empty account with the cap the module parameter gives now.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Ok(Arc::new(
            Self {
                used: AtomicUsize::new(0),
                cap: param::file_mem_bytes(),
            },
            ACCOUNTED,
        )?)
    }

    /// Charges `bytes`; `ENOMEM` if that would exceed the cap (nothing is
    /// charged then).
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Result<Charge> {
        self.add(bytes)?;
        Ok(Charge {
            budget: self.clone(),
            bytes,
        })
    }

    fn add(&self, bytes: usize) -> Result {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                u.checked_add(bytes).filter(|&n| n <= self.cap)
            })
            .map(drop)
            .map_err(|_| ENOMEM)
    }

    fn sub(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Bytes charged now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The cap, in bytes.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }
}

/// Bytes charged to a [`Budget`], given back when this is dropped.
pub(crate) struct Charge {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Charge {
    /// Changes the charge to `bytes` (for memory that grows and shrinks);
    /// `ENOMEM` leaves it as it was.
    pub(crate) fn resize(&mut self, bytes: usize) -> Result {
        if bytes > self.bytes {
            self.budget.add(bytes - self.bytes)?;
        } else {
            self.budget.sub(self.bytes - bytes);
        }
        self.bytes = bytes;
        Ok(())
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.sub(self.bytes);
    }
}

/// What `n` values of `T` take (`ENOMEM` on overflow).
pub(crate) fn array<T>(n: usize) -> Result<usize> {
    n.checked_mul(core::mem::size_of::<T>()).ok_or(ENOMEM)
}

/// What an `Arc<T>` takes: the value and its reference count.
pub(crate) const fn arc<T>() -> usize {
    core::mem::size_of::<T>() + core::mem::size_of::<usize>()
}

/// Sums sizes (`ENOMEM` on overflow).
pub(crate) fn sum(parts: &[usize]) -> Result<usize> {
    parts.iter().try_fold(0usize, |a, &b| a.checked_add(b)).ok_or(ENOMEM)
}
