// SPDX-License-Identifier: GPL-2.0
//! Big-endian field access on byte slices, bounds-checked: the helpers every
//! wire format here (MPA, DDP, RDMAP) reads and writes its headers with.

/// Reads a big-endian u16 at `off`, `None` if out of range.
pub(crate) fn be16(b: &[u8], off: usize) -> Option<u16> {
    let s = b.get(off..off.checked_add(2)?)?;
    Some(u16::from_be_bytes(s.try_into().ok()?))
}

/// Reads a big-endian u32 at `off`, `None` if out of range.
pub(crate) fn be32(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_be_bytes(s.try_into().ok()?))
}

/// Reads a big-endian u64 at `off`, `None` if out of range.
pub(crate) fn be64(b: &[u8], off: usize) -> Option<u64> {
    let s = b.get(off..off.checked_add(8)?)?;
    Some(u64::from_be_bytes(s.try_into().ok()?))
}

/// Writes `v` at `off`; `None` if the buffer is too short.
pub(crate) fn put(b: &mut [u8], off: usize, v: &[u8]) -> Option<()> {
    b.get_mut(off..off.checked_add(v.len())?)?
        .copy_from_slice(v);
    Some(())
}
