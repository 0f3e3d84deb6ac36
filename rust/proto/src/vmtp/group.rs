// SPDX-License-Identifier: GPL-2.0
//! Packet groups and delivery masks (RFC 1045, sections 2.13 and 3.2).
//!
//! A message's segment (at most [`MAX_GROUP_BYTES`]) is cut into blocks of
//! [`BLOCK`] bytes; only the last may be shorter. A 32-bit delivery mask names
//! blocks, bit `i` (counted from the least significant) for block `i`. Each
//! packet of a group carries some blocks, not necessarily adjacent, in
//! ascending order and padded to a multiple of eight bytes, and names them in
//! its PacketDelivery field; MsgDelivery (with the MDM flag) names the blocks
//! of the whole group.

/// Bytes per segment block.
pub const BLOCK: u32 = 512;
/// Blocks per packet group (the bits of a delivery mask).
pub const MAX_BLOCKS: u32 = 32;
/// Largest segment of one packet group: 16 KiB.
pub const MAX_GROUP_BYTES: u32 = BLOCK * MAX_BLOCKS;
/// Segment data in a packet is padded to a multiple of this.
pub const PAD: u32 = 8;

/// Number of blocks of a `segment_size`-byte segment (at most 32).
pub fn block_count(segment_size: u32) -> u32 {
    segment_size.min(MAX_GROUP_BYTES).div_ceil(BLOCK)
}

/// The mask of every block of a `segment_size`-byte segment.
pub fn all_blocks(segment_size: u32) -> u32 {
    match block_count(segment_size) {
        MAX_BLOCKS => u32::MAX,
        n => 1u32.wrapping_shl(n).wrapping_sub(1),
    }
}

/// Length of block `i` of a `segment_size`-byte segment (0 past its end).
pub fn block_len(i: u32, segment_size: u32) -> u32 {
    let start = i.saturating_mul(BLOCK);
    segment_size
        .min(MAX_GROUP_BYTES)
        .saturating_sub(start)
        .min(BLOCK)
}

/// Byte offset of block `i` in the segment.
pub fn block_offset(i: u32) -> u32 {
    i.saturating_mul(BLOCK)
}

/// `len` rounded up to the padding unit.
pub fn padded(len: u32) -> u32 {
    len.div_ceil(PAD).saturating_mul(PAD)
}

/// Bytes of data the blocks of `mask` hold in a `segment_size`-byte segment,
/// before padding; `None` if `mask` names a block past the segment's end.
pub fn data_len(mask: u32, segment_size: u32) -> Option<u32> {
    if mask & !all_blocks(segment_size) != 0 {
        return None;
    }
    Some(
        (0..MAX_BLOCKS)
            .filter(|&i| mask & 1u32.wrapping_shl(i) != 0)
            .map(|i| block_len(i, segment_size))
            .fold(0u32, u32::saturating_add),
    )
}

/// The blocks of `mask`, lowest first.
pub fn blocks(mask: u32) -> impl Iterator<Item = u32> {
    (0..MAX_BLOCKS).filter(move |&i| mask & 1u32.wrapping_shl(i) != 0)
}

/// The PacketDelivery mask of the next packet that sends blocks of `left`:
/// the lowest blocks, in order, as long as their data (padded) fits in
/// `max_data` bytes, and at least one. Zero when `left` is empty.
pub fn next_packet(left: u32, segment_size: u32, max_data: u32) -> u32 {
    let mut mask = 0u32;
    let mut len = 0u32;
    for i in blocks(left) {
        let n = len.saturating_add(block_len(i, segment_size));
        if mask != 0 && padded(n) > max_data {
            break;
        }
        mask |= 1u32.wrapping_shl(i);
        len = n;
    }
    mask
}

/// Like [`next_packet`], but only adjacent blocks: the lowest block of
/// `left` and the ones right after it, so that the packet's data is one range
/// of the segment.
pub fn next_run(left: u32, segment_size: u32, max_data: u32) -> u32 {
    let mut mask = 0u32;
    let mut len = 0u32;
    let Some(first) = blocks(left).next() else {
        return 0;
    };
    for i in first..MAX_BLOCKS {
        let bit = 1u32.wrapping_shl(i);
        if left & bit == 0 {
            break;
        }
        let n = len.saturating_add(block_len(i, segment_size));
        if mask != 0 && padded(n) > max_data {
            break;
        }
        mask |= bit;
        len = n;
    }
    mask
}

/// The packets that send the blocks of `mask` (see [`next_packet`]), as their
/// PacketDelivery masks.
pub fn packets(mask: u32, segment_size: u32, max_data: u32) -> impl Iterator<Item = u32> {
    let mut left = mask & all_blocks(segment_size);
    core::iter::from_fn(move || {
        let p = next_packet(left, segment_size, max_data);
        left &= !p;
        (p != 0).then_some(p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_lengths() {
        assert_eq!((block_count(0), all_blocks(0)), (0, 0));
        assert_eq!((block_count(1), all_blocks(1)), (1, 1));
        assert_eq!((block_count(512), block_count(513)), (1, 2));
        assert_eq!(all_blocks(MAX_GROUP_BYTES), u32::MAX);
        assert_eq!(block_len(14, 0x1d00), 256);
        assert_eq!(block_len(15, 0x1d00), 0);
        assert_eq!(data_len(0x6000, 0x1d00), Some(768));
        assert_eq!(data_len(0x8000, 0x1d00), None);
        assert_eq!((padded(0), padded(1), padded(8), padded(9)), (0, 8, 8, 16));
        assert_eq!(next_run(0x1400, 0x1d00, 1412), 0x400);
        // Two full blocks, or three when the third is the short last one.
        assert_eq!(next_run(0x3800, 0x1d00, 1412), 0x1800);
        assert_eq!(next_run(0x7000, 0x1d00, 1412), 0x7000);
        assert_eq!(next_run(0x6000, 0x1d00, 1412), 0x6000);
        assert_eq!(next_run(0, 0x1d00, 1412), 0);
    }
}
