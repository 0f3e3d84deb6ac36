// SPDX-License-Identifier: GPL-2.0
//! A fixed-capacity ring of slots kept in posting order.
//!
//! The one queue type behind the send queue, the receive queue, the queue of
//! inbound RDMA Read Requests and the completion queue: the slots are allocated
//! once (a `KVVec` in the kernel, any slice-owning type on the host), so adding
//! to the ring never allocates. Each entry keeps the slot index it was given
//! while it is in the ring, so a queue can keep per-slot side arrays (the
//! scatter/gather elements of a work request) next to the ring.

use core::ops::{Deref, DerefMut};

/// The ring has no free slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

/// A ring over the slots `S` (a `[T]` owner); entries leave in the order they came.
#[derive(Debug)]
pub struct Ring<S> {
    slots: S,
    /// Slot of the oldest entry.
    head: usize,
    len: usize,
}

impl<T, S: Deref<Target = [T]> + DerefMut> Ring<S> {
    /// An empty ring over `slots`; its capacity is `slots.len()`.
    pub fn new(slots: S) -> Self {
        Self {
            slots,
            head: 0,
            len: 0,
        }
    }

    /// How many entries the ring can hold.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many entries it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every slot is taken.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.len >= self.capacity()
    }

    /// The slot of the `k`-th entry, counting from the oldest (0).
    #[must_use]
    pub fn slot(&self, k: usize) -> Option<usize> {
        if k >= self.len {
            return None;
        }
        self.wrap(k)
    }

    /// The slot the next [`Self::push`] fills, if there is room.
    #[must_use]
    pub fn next_slot(&self) -> Option<usize> {
        if self.is_full() {
            return None;
        }
        self.wrap(self.len)
    }

    /// The slot `k` places after the head (`k <= capacity`).
    fn wrap(&self, k: usize) -> Option<usize> {
        // head < capacity and k <= capacity: one subtraction wraps the sum.
        let s = self.head.checked_add(k)?;
        Some(if s >= self.capacity() {
            s.wrapping_sub(self.capacity())
        } else {
            s
        })
    }

    /// The `k`-th entry from the oldest.
    #[must_use]
    pub fn get(&self, k: usize) -> Option<&T> {
        self.slot(k).and_then(|s| self.slots.get(s))
    }

    /// The `k`-th entry from the oldest, mutably.
    pub fn get_mut(&mut self, k: usize) -> Option<&mut T> {
        self.slot(k).and_then(|s| self.slots.get_mut(s))
    }

    /// The entry in slot `slot`, if that slot holds one.
    #[must_use]
    pub fn at(&self, slot: usize) -> Option<&T> {
        if self.holds(slot) {
            self.slots.get(slot)
        } else {
            None
        }
    }

    /// The entry in slot `slot`, mutably, if that slot holds one.
    pub fn at_mut(&mut self, slot: usize) -> Option<&mut T> {
        if self.holds(slot) {
            self.slots.get_mut(slot)
        } else {
            None
        }
    }

    /// The oldest entry.
    #[must_use]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    /// The oldest entry, mutably.
    pub fn front_mut(&mut self) -> Option<&mut T> {
        self.get_mut(0)
    }

    /// Adds `v` as the newest entry; returns the slot it took.
    pub fn push(&mut self, v: T) -> Result<usize, Full> {
        let slot = self.next_slot().ok_or(Full)?;
        let dst = self.slots.get_mut(slot).ok_or(Full)?;
        *dst = v;
        self.len = self.len.saturating_add(1);
        Ok(slot)
    }

    /// Removes the oldest entry; returns its slot, whose contents stay in place
    /// until the slot is reused (read them with [`Self::slot_contents`]).
    pub fn pop(&mut self) -> Option<usize> {
        let slot = self.slot(0)?;
        self.len = self.len.saturating_sub(1);
        self.head = if self.len == 0 {
            0
        } else {
            let n = slot.saturating_add(1);
            if n >= self.capacity() {
                0
            } else {
                n
            }
        };
        Some(slot)
    }

    /// Removes the oldest entry and returns a copy of it.
    pub fn pop_value(&mut self) -> Option<T>
    where
        T: Copy,
    {
        let slot = self.pop()?;
        self.slots.get(slot).copied()
    }

    /// What slot `slot` contains, whether or not it holds an entry now (for
    /// the entry [`Self::pop`] just removed).
    #[must_use]
    pub fn slot_contents(&self, slot: usize) -> Option<&T> {
        self.slots.get(slot)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Whether `slot` holds an entry.
    fn holds(&self, slot: usize) -> bool {
        let cap = self.capacity();
        if slot >= cap || self.len == 0 {
            return false;
        }
        // Distance from the head going forward, modulo the capacity.
        let d = if slot >= self.head {
            slot.wrapping_sub(self.head)
        } else {
            slot.wrapping_add(cap).wrapping_sub(self.head)
        };
        d < self.len
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::{collections::VecDeque, vec, vec::Vec};

    #[test]
    fn fills_wraps_and_empties_in_order() {
        let mut r = Ring::new(vec![0u32; 3]);
        assert!(r.is_empty());
        assert_eq!(r.push(1), Ok(0));
        assert_eq!(r.push(2), Ok(1));
        assert_eq!(r.push(3), Ok(2));
        assert!(r.is_full());
        assert_eq!(r.push(4), Err(Full));
        assert_eq!(r.next_slot(), None);
        assert_eq!(r.pop_value(), Some(1));
        assert_eq!(r.next_slot(), Some(0));
        assert_eq!(r.push(4), Ok(0));
        assert_eq!(r.slot(2), Some(0));
        assert_eq!(r.get(2), Some(&4));
        assert_eq!(r.at(0), Some(&4));
        assert_eq!(r.pop(), Some(1));
        assert_eq!(r.slot_contents(1), Some(&2));
        assert_eq!(r.at(1), None);
        assert_eq!(r.front(), Some(&3));
        r.clear();
        assert!(r.is_empty());
        assert_eq!(r.pop(), None);
        assert_eq!(r.at(0), None);
    }

    #[test]
    fn zero_capacity_is_always_full_and_empty() {
        let mut r: Ring<Vec<u8>> = Ring::new(Vec::new());
        assert!(r.is_full() && r.is_empty());
        assert_eq!(r.push(1), Err(Full));
        assert_eq!(r.pop(), None);
        assert_eq!(r.front(), None);
    }

    proptest::proptest! {
        /// Against VecDeque: same contents in the same order after any mix of
        /// pushes and pops; slots are distinct and stable while held.
        #[test]
        fn behaves_like_a_bounded_deque(cap in 0usize..8, ops in proptest::collection::vec(proptest::option::of(0u16..1000), 0..64)) {
            let mut r = Ring::new(vec![0u16; cap]);
            let mut m: VecDeque<(usize, u16)> = VecDeque::new();
            for op in ops {
                match op {
                    Some(v) => match r.push(v) {
                        Ok(slot) => {
                            proptest::prop_assert!(m.len() < cap);
                            proptest::prop_assert!(m.iter().all(|&(s, _)| s != slot));
                            m.push_back((slot, v));
                        }
                        Err(Full) => proptest::prop_assert_eq!(m.len(), cap),
                    },
                    None => {
                        let want = m.pop_front();
                        let got = r.pop().map(|s| (s, *r.slot_contents(s).unwrap()));
                        proptest::prop_assert_eq!(got, want);
                    }
                }
                proptest::prop_assert_eq!(r.len(), m.len());
                for (k, &(slot, v)) in m.iter().enumerate() {
                    proptest::prop_assert_eq!(r.slot(k), Some(slot));
                    proptest::prop_assert_eq!(r.get(k), Some(&v));
                    proptest::prop_assert_eq!(r.at(slot), Some(&v));
                }
                for s in 0..cap {
                    proptest::prop_assert_eq!(r.at(s).is_some(), m.iter().any(|&(t, _)| t == s));
                }
            }
        }
    }
}
