// SPDX-License-Identifier: GPL-2.0
//! Handle tables: the per-file integers user space names objects by.
//!
//! A handle is a slot index plus one, so 0 is never valid; freed slots are reused.
//! Each table has a fixed maximum size, one of the limits `QUERY_DEVICE` reports.

use crate::sys::gfp::ACCOUNTED;
use kernel::{alloc::KVec, prelude::*};

/// A bounded table of objects indexed by handle.
pub(crate) struct Table<T> {
    slots: KVec<Option<T>>,
    max: usize,
    live: usize,
}

impl<T> Table<T> {
    /// An empty table of at most `max` objects.
    pub(crate) const fn new(max: usize) -> Self {
        Self {
            slots: KVec::new(),
            max,
            live: 0,
        }
    }

    /// The handle the next [`Self::insert`] will return, or `ENOMEM` when full.
    pub(crate) fn next_handle(&self) -> Result<u32> {
        if self.live >= self.max {
            return Err(ENOMEM);
        }
        let idx = self.slots.iter().position(|s| s.is_none()).unwrap_or(self.slots.len());
        u32::try_from(idx + 1).map_err(|_| ENOMEM)
    }

    /// Stores `obj` and returns its handle (the one [`Self::next_handle`] said).
    pub(crate) fn insert(&mut self, obj: T) -> Result<u32> {
        let handle = self.next_handle()?;
        let idx = handle as usize - 1;
        if idx == self.slots.len() {
            self.slots.push(Some(obj), ACCOUNTED)?;
        } else {
            self.slots[idx] = Some(obj);
        }
        self.live += 1;
        Ok(handle)
    }

    /// The object named by `handle`.
    pub(crate) fn get(&self, handle: u32) -> Result<&T> {
        let idx = (handle as usize).checked_sub(1).ok_or(EINVAL)?;
        self.slots.get(idx).and_then(Option::as_ref).ok_or(EINVAL)
    }

    /// Removes and returns the object named by `handle`.
    pub(crate) fn remove(&mut self, handle: u32) -> Result<T> {
        let idx = (handle as usize).checked_sub(1).ok_or(EINVAL)?;
        let obj = self.slots.get_mut(idx).and_then(Option::take).ok_or(EINVAL)?;
        self.live -= 1;
        Ok(obj)
    }

    /// Takes every object out (for teardown), leaving the table empty. It
    /// allocates nothing (teardown must not fail): the slots themselves are
    /// handed over, empty ones included.
    pub(crate) fn drain(&mut self) -> Drained<T> {
        self.live = 0;
        Drained(core::mem::replace(&mut self.slots, KVec::new()))
    }
}

/// The objects a [`Table::drain`] took out.
pub(crate) struct Drained<T>(KVec<Option<T>>);

impl<T> Drained<T> {
    /// The objects.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.0.iter().flatten()
    }
}
