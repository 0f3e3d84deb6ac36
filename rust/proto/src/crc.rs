// SPDX-License-Identifier: GPL-2.0
//! CRC32c (Castagnoli) as MPA uses it (RFC 5044 section 4.4, the iSCSI CRC of RFC 3720).
//!
//! The protocol code never computes a CRC by itself: it calls a [`Crc32c`] implementation
//! that the caller passes in, so the kernel can plug in its accelerated `crc32c()` while
//! host tests use [`SoftCrc32c`], a portable table-driven (slicing-by-8) implementation.
//!
//! # Register convention
//!
//! [`Crc32c::update`] works on the *raw register*: no inversion on entry, no inversion on
//! exit. This is exactly the contract of the Linux `u32 crc32c(u32 crc, const void *p,
//! size_t len)` function. A complete CRC32c of a byte string is therefore
//! `finish(update(CRC32C_INIT, data))` with [`CRC32C_INIT`] = `0xFFFF_FFFF` and
//! [`finish`] = bitwise NOT, and partial updates chain: `update(update(r, a), b) ==
//! update(r, a ++ b)`.
//!
//! # Wire byte order
//!
//! MPA (like iSCSI) puts the finished CRC value on the wire least significant byte first
//! ([`to_wire`]): CRC32c("123456789") = 0xE306_9283 is sent as `83 92 06 e3`. This is what
//! Linux siw produces (the crypto API's final step stores the value little-endian) and
//! what RFC 3720 appendix B.4 lists as the transmitted bytes.

/// Initial register value for a fresh CRC32c computation.
pub const CRC32C_INIT: u32 = 0xFFFF_FFFF;

/// The reflected Castagnoli polynomial 0x1EDC6F41.
const POLY_REFLECTED: u32 = 0x82F6_3B78;

/// A CRC32c engine working on the raw (non-inverted) register.
///
/// Implementations must behave exactly like the Linux kernel's `crc32c(seed, data, len)`:
/// reflected Castagnoli polynomial, no pre- or post-inversion. They must not panic.
pub trait Crc32c {
    /// Feeds `data` into the raw register `crc` and returns the new register value.
    fn update(&self, crc: u32, data: &[u8]) -> u32;
}

impl<T: Crc32c + ?Sized> Crc32c for &T {
    fn update(&self, crc: u32, data: &[u8]) -> u32 {
        (**self).update(crc, data)
    }
}

/// Turns a raw register into the CRC32c value (bitwise NOT).
#[must_use]
pub const fn finish(reg: u32) -> u32 {
    !reg
}

/// The four bytes MPA puts on the wire for a finished CRC value (least significant first).
#[must_use]
pub const fn to_wire(crc: u32) -> [u8; 4] {
    crc.to_le_bytes()
}

/// The finished CRC value carried by four wire bytes (inverse of [`to_wire`]).
#[must_use]
pub const fn from_wire(bytes: [u8; 4]) -> u32 {
    u32::from_le_bytes(bytes)
}

/// Builds the slicing-by-8 tables at compile time. Indexing is bounded by the loop
/// conditions; a mistake would fail constant evaluation, never at run time.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ POLY_REFLECTED
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut s = 1;
    while s < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        s += 1;
    }
    t
}

static TABLES: [[u32; 256]; 8] = make_tables();

/// Table lookup; a `u8` index is always in range, so the fallback is never taken.
#[inline(always)]
fn tab(table: usize, idx: u32) -> u32 {
    TABLES
        .get(table)
        .and_then(|t| t.get((idx & 0xff) as usize))
        .copied()
        .unwrap_or(0)
}

/// Portable software CRC32c (slicing-by-8, 8 KiB of constant tables).
#[derive(Debug, Default, Clone, Copy)]
pub struct SoftCrc32c;

impl Crc32c for SoftCrc32c {
    fn update(&self, mut crc: u32, data: &[u8]) -> u32 {
        let mut chunks = data.chunks_exact(8);
        for c in &mut chunks {
            let Ok([b0, b1, b2, b3, b4, b5, b6, b7]) = <[u8; 8]>::try_from(c) else {
                continue;
            };
            let lo = u32::from_le_bytes([b0, b1, b2, b3]) ^ crc;
            let hi = u32::from_le_bytes([b4, b5, b6, b7]);
            crc = tab(7, lo)
                ^ tab(6, lo >> 8)
                ^ tab(5, lo >> 16)
                ^ tab(4, lo >> 24)
                ^ tab(3, hi)
                ^ tab(2, hi >> 8)
                ^ tab(1, hi >> 16)
                ^ tab(0, hi >> 24);
        }
        for &b in chunks.remainder() {
            crc = (crc >> 8) ^ tab(0, (crc ^ u32::from(b)) & 0xff);
        }
        crc
    }
}

/// One-shot software CRC32c of `data` (finished value).
#[must_use]
pub fn crc32c(data: &[u8]) -> u32 {
    finish(SoftCrc32c.update(CRC32C_INIT, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(to_wire(0xE306_9283), [0x83, 0x92, 0x06, 0xe3]);
    }

    #[test]
    fn chaining() {
        let d = b"The quick brown fox jumps over the lazy dog, twice over.";
        for split in 0..d.len() {
            let (a, b) = d.split_at(split);
            let r = SoftCrc32c.update(SoftCrc32c.update(CRC32C_INIT, a), b);
            assert_eq!(finish(r), crc32c(d));
        }
    }
}
