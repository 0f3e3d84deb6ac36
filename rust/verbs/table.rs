// SPDX-License-Identifier: GPL-2.0
//! Handle tables: the per-file integers user space names objects by.
//!
//! A handle is a slot index plus one (so 0 is never valid) in its low
//! [`INDEX_BITS`] bits, and the slot's generation above them: freed slots are
//! reused, but under a new handle. So an event of a destroyed object that is
//! still queued for `read()` (a QP's DISCONNECTED pushed just before the
//! destroy) never names the object that took its slot, and a stale handle
//! gets `EINVAL`. Handles stay below 2^24 (rdma-core's `qp_num` is the QP's
//! handle). Each table has a fixed maximum size, one of the limits
//! `QUERY_DEVICE` reports.

use crate::sys::gfp::ACCOUNTED;
use kernel::{alloc::KVec, prelude::*};

/// Bits of a handle that hold the slot index plus one.
const INDEX_BITS: u32 = 13;
/// Bits above them that hold the slot's generation.
const GEN_BITS: u32 = 11;
/// The largest table.
pub(crate) const MAX_OBJECTS: usize = (1 << INDEX_BITS) - 1;

/// One slot: its generation (counts the objects it held) and its object.
struct Slot<T> {
    gen: u32,
    obj: Option<T>,
}

/// A bounded table of objects indexed by handle.
pub(crate) struct Table<T> {
    slots: KVec<Slot<T>>,
    max: usize,
    live: usize,
}

/// The handle of slot `idx` in generation `gen`.
fn handle_of(idx: usize, gen: u32) -> Result<u32> {
    let n = u32::try_from(idx + 1).map_err(|_| ENOMEM)?;
    if n >= 1 << INDEX_BITS {
        return Err(ENOMEM);
    }
    Ok((gen << INDEX_BITS) | n)
}

/// The slot index and generation `handle` names (`EINVAL` for 0).
fn split(handle: u32) -> Result<(usize, u32)> {
    let n = handle & ((1 << INDEX_BITS) - 1);
    let idx = (n as usize).checked_sub(1).ok_or(EINVAL)?;
    Ok((idx, handle >> INDEX_BITS))
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
        match self.slots.iter().position(|s| s.obj.is_none()) {
            Some(idx) => handle_of(idx, self.slots[idx].gen),
            None => handle_of(self.slots.len(), 0),
        }
    }

    /// Stores `obj` and returns its handle (the one [`Self::next_handle`] said).
    pub(crate) fn insert(&mut self, obj: T) -> Result<u32> {
        let handle = self.next_handle()?;
        let (idx, gen) = split(handle)?;
        if idx == self.slots.len() {
            self.slots.push(Slot { gen, obj: Some(obj) }, ACCOUNTED)?;
        } else {
            self.slots[idx].obj = Some(obj);
        }
        self.live += 1;
        Ok(handle)
    }

    /// The index of the slot `handle` names, if its generation is the slot's.
    fn index(&self, handle: u32) -> Result<usize> {
        let (idx, gen) = split(handle)?;
        match self.slots.get(idx) {
            Some(s) if s.gen == gen => Ok(idx),
            _ => Err(EINVAL),
        }
    }

    /// The object named by `handle`.
    pub(crate) fn get(&self, handle: u32) -> Result<&T> {
        self.slots[self.index(handle)?].obj.as_ref().ok_or(EINVAL)
    }

    /// Removes and returns the object named by `handle`; its slot's next
    /// object gets a new handle.
    pub(crate) fn remove(&mut self, handle: u32) -> Result<T> {
        let idx = self.index(handle)?;
        let slot = &mut self.slots[idx];
        let obj = slot.obj.take().ok_or(EINVAL)?;
        slot.gen = (slot.gen + 1) & ((1 << GEN_BITS) - 1);
        self.live -= 1;
        Ok(obj)
    }

    /// Every object in the table, with its handle.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            let obj = s.obj.as_ref()?;
            Some((handle_of(i, s.gen).ok()?, obj))
        })
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
pub(crate) struct Drained<T>(KVec<Slot<T>>);

impl<T> Drained<T> {
    /// The objects.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.0.iter().filter_map(|s| s.obj.as_ref())
    }
}
