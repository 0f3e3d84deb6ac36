// SPDX-License-Identifier: GPL-2.0
//! A fixed set of packet positions inside one granted block, for selective
//! recovery: which packets the receiver has and which it asked for again, and
//! which packets the sender must send again.

/// Positions a [`BlockMask`] can hold: the largest grant srnic issues
/// (`MAX_DATA_PKTS` is at most 256; see [`super::Config::validate`]).
pub const BLOCK_BITS: u32 = 256;

const WORDS: usize = (BLOCK_BITS / 64) as usize;

/// A set of positions `0 .. BLOCK_BITS` (offsets of packets from the start of
/// a block). Positions outside the range are never members: inserting one
/// does nothing, so a peer's out-of-range request cannot reach beyond it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockMask([u64; WORDS]);

impl BlockMask {
    /// The empty set.
    pub const EMPTY: BlockMask = BlockMask([0; WORDS]);

    fn at(pos: u32) -> Option<(usize, u64)> {
        (pos < BLOCK_BITS).then(|| ((pos >> 6) as usize, 1u64.wrapping_shl(pos & 63)))
    }

    /// Whether `pos` is in the set.
    pub fn contains(&self, pos: u32) -> bool {
        Self::at(pos).is_some_and(|(w, b)| self.0.get(w).is_some_and(|x| x & b != 0))
    }

    /// Adds `pos`; returns whether it was added (in range and new).
    pub fn insert(&mut self, pos: u32) -> bool {
        match Self::at(pos).and_then(|(w, b)| self.0.get_mut(w).map(|x| (x, b))) {
            Some((x, b)) if *x & b == 0 => {
                *x |= b;
                true
            }
            _ => false,
        }
    }

    /// Removes `pos`.
    pub fn remove(&mut self, pos: u32) {
        if let Some((x, b)) = Self::at(pos).and_then(|(w, b)| self.0.get_mut(w).map(|x| (x, b))) {
            *x &= !b;
        }
    }

    /// The lowest member, removed from the set.
    pub fn pop_first(&mut self) -> Option<u32> {
        let (w, x) = self.0.iter_mut().enumerate().find(|(_, x)| **x != 0)?;
        let bit = x.trailing_zeros();
        *x &= !1u64.wrapping_shl(bit);
        Some(((w as u32) << 6) | bit)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&x| x == 0)
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.0 = [0; WORDS];
    }
}

#[cfg(test)]
mod tests {
    use super::{BlockMask, BLOCK_BITS};

    #[test]
    fn insert_contains_pop() {
        let mut m = BlockMask::EMPTY;
        assert!(m.is_empty());
        for p in [0, 63, 64, 200, BLOCK_BITS - 1] {
            assert!(m.insert(p), "{p}");
            assert!(!m.insert(p), "{p} twice");
            assert!(m.contains(p));
        }
        assert!(!m.insert(BLOCK_BITS), "out of range");
        assert!(!m.contains(BLOCK_BITS));
        m.remove(63);
        assert!(!m.contains(63));
        for want in [0, 64, 200, BLOCK_BITS - 1] {
            assert_eq!(m.pop_first(), Some(want));
        }
        assert_eq!(m.pop_first(), None);
        assert!(m.is_empty());
        m.insert(5);
        m.clear();
        assert!(m.is_empty());
    }
}
