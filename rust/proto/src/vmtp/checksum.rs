// SPDX-License-Identifier: GPL-2.0
//! The VMTP checksum (RFC 1045, section 3.2).
//!
//! The covered bytes (the whole packet before the checksum, or only the 64-byte
//! header when the header's HCO flag is set) are read as big-endian 16-bit words
//! in clusters of 32 bytes. The even clusters (0, 2, ...) are summed into `sum1`
//! and the odd ones into `sum2`, each a 16-bit ones'-complement sum (end-around
//! carry, as IP's). The sums are sent as they are, not complemented, `sum1`
//! then `sum2`, in the last four bytes of the packet; a sum of zero is sent as
//! 0xFFFF, so that four zero bytes can mean "no checksum" (a sender may omit it
//! where the link checks frames and no security is in use). No IP pseudo-header
//! is covered: entity identifiers do not depend on the network layer.

/// Bytes of the checksum field.
pub const LEN: usize = 4;

/// Bytes per cluster: clusters alternate between the two sums.
const CLUSTER: usize = 32;

/// Folds a 32-bit accumulator into a 16-bit ones'-complement sum.
fn fold(mut s: u32) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff).wrapping_add(s.wrapping_shr(16));
    }
    s as u16
}

/// The checksum of `covered`: `[sum1, sum2]` as sent (big-endian), neither zero.
pub fn compute(covered: &[u8]) -> [u8; LEN] {
    let mut sums = [0u32; 2];
    for (i, cluster) in covered.chunks(CLUSTER).enumerate() {
        let Some(s) = sums.get_mut(i & 1) else {
            continue;
        };
        for pair in cluster.chunks(2) {
            let hi = pair.first().copied().unwrap_or(0);
            let lo = pair.get(1).copied().unwrap_or(0);
            *s = u32::from(fold(
                s.wrapping_add(u32::from(u16::from_be_bytes([hi, lo]))),
            ));
        }
    }
    let [a, b] = sums.map(|s| match fold(s) {
        0 => 0xffff,
        v => v,
    });
    let [a0, a1] = a.to_be_bytes();
    let [b0, b1] = b.to_be_bytes();
    [a0, a1, b0, b1]
}

/// The checksum of bytes given in pieces (header, then data, then padding):
/// what [`compute`] gives for their concatenation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summer {
    sums: [u32; 2],
    /// Bytes taken so far.
    pos: usize,
    /// The first byte of a 16-bit word whose second byte is still to come.
    odd: Option<u8>,
}

impl Summer {
    /// Adds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match self.odd.take() {
                None => self.odd = Some(b),
                Some(hi) => {
                    // The word started at pos - 1: its cluster picks the sum.
                    let cluster = self.pos.saturating_sub(1) / CLUSTER;
                    if let Some(s) = self.sums.get_mut(cluster & 1) {
                        *s =
                            u32::from(fold(s.wrapping_add(u32::from(u16::from_be_bytes([hi, b])))));
                    }
                }
            }
            self.pos = self.pos.wrapping_add(1);
        }
    }

    /// The checksum field for the bytes taken.
    pub fn finish(mut self) -> [u8; LEN] {
        if let Some(hi) = self.odd.take() {
            let cluster = self.pos.saturating_sub(1) / CLUSTER;
            if let Some(s) = self.sums.get_mut(cluster & 1) {
                *s = u32::from(fold(s.wrapping_add(u32::from(u16::from_be_bytes([hi, 0])))));
            }
        }
        let [a, b] = self.sums.map(|s| match fold(s) {
            0 => 0xffff,
            v => v,
        });
        let [a0, a1] = a.to_be_bytes();
        let [b0, b1] = b.to_be_bytes();
        [a0, a1, b0, b1]
    }
}

/// What a received checksum field says about the covered bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The field matches.
    Good,
    /// The field is zero: the sender computed none.
    Absent,
    /// The field does not match: the packet is dropped.
    Bad,
}

/// Checks a received checksum `field` against `covered`.
pub fn verify(covered: &[u8], field: [u8; LEN]) -> Verdict {
    if field == [0; LEN] {
        Verdict::Absent
    } else if compute(covered) == field {
        Verdict::Good
    } else {
        Verdict::Bad
    }
}

#[cfg(test)]
mod tests {
    use super::{compute, fold, verify, Verdict};

    #[test]
    fn ones_complement_and_zero() {
        assert_eq!(fold(0x1_fffe), 0xffff);
        assert_eq!(fold(0xffff_ffff), 0xffff);
        // Nothing to sum: both sums zero, sent as 0xFFFF.
        assert_eq!(compute(&[]), [0xff; 4]);
        // 0xFFFF + 0x0001 wraps to 0x0001 (end-around carry).
        assert_eq!(compute(&[0xff, 0xff, 0x00, 0x01]), [0x00, 0x01, 0xff, 0xff]);
        assert_eq!(verify(&[1, 2], [0; 4]), Verdict::Absent);
        assert_eq!(verify(&[1, 2], compute(&[1, 2])), Verdict::Good);
        assert_eq!(verify(&[1, 3], compute(&[1, 2])), Verdict::Bad);
    }

    #[test]
    fn pieces_sum_like_the_whole() {
        let bytes: [u8; 150] = core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x5a);
        for cut in [0, 1, 31, 32, 33, 64, 99, 149, 150] {
            for cut2 in [cut, (cut + 7).min(150), 150] {
                let mut s = super::Summer::default();
                s.update(&bytes[..cut]);
                s.update(&bytes[cut..cut2]);
                s.update(&bytes[cut2..]);
                assert_eq!(s.finish(), compute(&bytes), "{cut} {cut2}");
            }
        }
    }

    #[test]
    fn clusters_alternate() {
        // A word in byte 32 (cluster 1) goes to sum2, one in byte 64 back to sum1.
        let mut b = [0u8; 66];
        b[33] = 7;
        b[65] = 5;
        b[1] = 1;
        assert_eq!(compute(&b), [0, 6, 0, 7]);
    }
}
