// SPDX-License-Identifier: GPL-2.0
//! MPA transmit framer (RFC 5044 sections 4, 6.1) for zero-copy transmission.
//!
//! [`TxFramer`] keeps the stream position (for markers) across FPDUs. For each FPDU,
//! [`TxFramer::fpdu`] returns an [`FpduTx`], an iterator over the FPDU's parts in
//! wire order that the caller drives with [`FpduTx::next`]:
//!
//! * [`TxStep::Head`]: the length field and the DDP/RDMAP header (with any marker
//!   due inside them), in a small owned [`Chunk`];
//! * [`TxStep::Payload`]: send `len` payload bytes starting at `offset` within this
//!   segment's payload straight from the caller's pages, then (with CRC on) feed the
//!   same bytes to [`FpduTx::feed_payload`] before calling `next` again;
//! * [`TxStep::Marker`]: a marker that falls between two payload pieces;
//! * [`TxStep::Trailer`]: pad, a marker if due, and the CRC: the FPDU's last bytes;
//! * [`TxStep::Done`]: the FPDU is complete.
//!
//! Payload ranges are split where a marker falls. No payload byte is staged here.

use super::super::crc::{finish, to_wire, Crc32c, CRC32C_INIT};
use super::super::rdmap::MAX_HDR_LEN;
use super::{pad_len, LEN_FIELD, MARKER_INTERVAL, MARKER_LEN, MAX_ULPDU_WITH_MARKERS};

/// Capacity of a [`Chunk`]: leading marker, length field, largest header, one more
/// marker.
pub const CHUNK_MAX: usize = MARKER_LEN + LEN_FIELD + MAX_HDR_LEN + MARKER_LEN;

/// A few framing bytes to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    buf: [u8; CHUNK_MAX],
    len: usize,
}

impl Chunk {
    const fn new() -> Self {
        Chunk {
            buf: [0; CHUNK_MAX],
            len: 0,
        }
    }

    /// The bytes.
    #[must_use]
    pub fn as_slice(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    fn push(&mut self, b: &[u8]) {
        let end = self.len.saturating_add(b.len());
        if let Some(d) = self.buf.get_mut(self.len..end) {
            d.copy_from_slice(b);
            self.len = end;
        }
    }
}

/// The next part of an FPDU to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStep {
    /// The length field and the header: the FPDU's first bytes.
    Head(Chunk),
    /// A marker between two payload pieces.
    Marker(Chunk),
    /// Pad, marker and CRC: the FPDU's last bytes.
    Trailer(Chunk),
    /// Payload bytes `offset..offset + len` of this segment's payload.
    Payload {
        /// Offset within the segment's payload.
        offset: u16,
        /// Number of bytes.
        len: u16,
    },
    /// The FPDU is complete.
    Done,
}

impl TxStep {
    /// The framing bytes of a head, marker or trailer step.
    #[must_use]
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            TxStep::Head(c) | TxStep::Marker(c) | TxStep::Trailer(c) => Some(c.as_slice()),
            TxStep::Payload { .. } | TxStep::Done => None,
        }
    }
}

/// Transmit framing errors (caller bugs, never caused by the peer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxError {
    /// Header longer than [`MAX_HDR_LEN`].
    HeaderTooLong,
    /// Header plus payload exceed the 16-bit ULPDU length (or
    /// [`MAX_ULPDU_WITH_MARKERS`] with markers on).
    UlpduTooLong,
    /// `next` was called before the previous payload range was fed to the CRC.
    PayloadCrcNotFed,
    /// More payload was fed than was handed out.
    PayloadOverfed,
}

/// Transmit state for one direction of a connection.
#[derive(Debug, Clone)]
pub struct TxFramer {
    crc_on: bool,
    markers_on: bool,
    mpos: u16,
}

impl TxFramer {
    /// A framer positioned at the first byte of the first FPDU of the direction.
    #[must_use]
    pub const fn new(crc_on: bool, markers_on: bool) -> Self {
        TxFramer {
            crc_on,
            markers_on,
            mpos: 0,
        }
    }

    /// Whether CRCs are computed (and payload must be fed with `feed_payload`).
    #[must_use]
    pub const fn crc_on(&self) -> bool {
        self.crc_on
    }

    /// Whether markers are inserted.
    #[must_use]
    pub const fn markers_on(&self) -> bool {
        self.markers_on
    }

    /// Largest ULPDU to use for FPDUs of at most `fpdu_budget` bytes on the wire.
    #[must_use]
    pub fn max_ulpdu(&self, fpdu_budget: usize) -> Option<u16> {
        if self.markers_on {
            super::max_ulpdu_with_markers(fpdu_budget)
        } else {
            super::max_ulpdu(fpdu_budget)
        }
    }

    /// Starts an FPDU carrying `header` (a DDP segment header, e.g. from
    /// `rdmap::Header::emit`) followed by `payload_len` payload bytes.
    pub fn fpdu(&mut self, header: &[u8], payload_len: u16) -> Result<FpduTx<'_>, TxError> {
        if header.len() > MAX_HDR_LEN {
            return Err(TxError::HeaderTooLong);
        }
        let ulpdu = header
            .len()
            .checked_add(usize::from(payload_len))
            .and_then(|u| u16::try_from(u).ok())
            .ok_or(TxError::UlpduTooLong)?;
        if self.markers_on && ulpdu > MAX_ULPDU_WITH_MARKERS {
            return Err(TxError::UlpduTooLong);
        }
        let mut hdr = [0u8; LEN_FIELD + MAX_HDR_LEN];
        let hlen = LEN_FIELD.saturating_add(header.len());
        if let Some(l) = hdr.get_mut(..LEN_FIELD) {
            l.copy_from_slice(&ulpdu.to_be_bytes());
        }
        if let Some(d) = hdr.get_mut(LEN_FIELD..hlen) {
            d.copy_from_slice(header);
        }
        Ok(FpduTx {
            framer: self,
            hdr,
            hdr_len: hlen,
            payload_len,
            payload_sent: 0,
            payload_fed: 0,
            pad: pad_len(ulpdu),
            phase: Phase::Head,
            reg: CRC32C_INIT,
            fpdu_pos: 0,
            len_pos: None,
        })
    }

    /// Frames a whole FPDU into `out` (header, payload copied, markers, pad, CRC);
    /// returns its length. Convenient for small control messages and tests.
    pub fn frame_into<C: Crc32c>(
        &mut self,
        crc: &C,
        header: &[u8],
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<Option<usize>, TxError> {
        let plen = u16::try_from(payload.len()).map_err(|_| TxError::UlpduTooLong)?;
        let mut f = self.fpdu(header, plen)?;
        let mut n = 0usize;
        loop {
            let step = f.next(crc)?;
            let piece: &[u8] = match step {
                TxStep::Done => return Ok(Some(n)),
                TxStep::Head(_) | TxStep::Marker(_) | TxStep::Trailer(_) => {
                    let b = step.bytes().unwrap_or(&[]);
                    let end = n.saturating_add(b.len());
                    match out.get_mut(n..end) {
                        Some(d) => d.copy_from_slice(b),
                        None => return Ok(None),
                    }
                    n = end;
                    continue;
                }
                TxStep::Payload { offset, len } => {
                    let s = usize::from(offset);
                    payload
                        .get(s..s.saturating_add(usize::from(len)))
                        .unwrap_or(&[])
                }
            };
            f.feed_payload(crc, piece)?;
            let end = n.saturating_add(piece.len());
            match out.get_mut(n..end) {
                Some(d) => d.copy_from_slice(piece),
                None => return Ok(None),
            }
            n = end;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Payload,
    Trailer,
    Done,
}

/// One FPDU being transmitted.
#[derive(Debug)]
pub struct FpduTx<'f> {
    framer: &'f mut TxFramer,
    hdr: [u8; LEN_FIELD + MAX_HDR_LEN],
    hdr_len: usize,
    payload_len: u16,
    payload_sent: u16,
    payload_fed: u16,
    pad: usize,
    phase: Phase,
    reg: u32,
    fpdu_pos: u32,
    len_pos: Option<u32>,
}

impl FpduTx<'_> {
    fn advance(&mut self, n: usize) {
        let n16 = (n % 512) as u16;
        self.framer.mpos = self.framer.mpos.wrapping_add(n16) % MARKER_INTERVAL;
        self.fpdu_pos = self
            .fpdu_pos
            .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
    }

    fn marker_due(&self) -> bool {
        self.framer.markers_on && self.framer.mpos == 0
    }

    fn crc<C: Crc32c>(&mut self, crc: &C, b: &[u8]) {
        if self.framer.crc_on {
            self.reg = crc.update(self.reg, b);
        }
    }

    fn put_marker<C: Crc32c>(&mut self, crc: &C, out: &mut Chunk) {
        let ptr = self
            .len_pos
            .map_or(0, |lp| self.fpdu_pos.saturating_sub(lp));
        let ptr = u16::try_from(ptr).unwrap_or(u16::MAX).to_be_bytes();
        let m = [0, 0, ptr[0], ptr[1]];
        out.push(&m);
        self.crc(crc, &m);
        self.advance(MARKER_LEN);
    }

    /// Appends `bytes` to `out`, inserting markers where due.
    fn put<C: Crc32c>(&mut self, crc: &C, out: &mut Chunk, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.marker_due() {
                self.put_marker(crc, out);
            }
            if self.len_pos.is_none() {
                self.len_pos = Some(self.fpdu_pos);
            }
            let room = if self.framer.markers_on {
                usize::from(MARKER_INTERVAL.saturating_sub(self.framer.mpos))
            } else {
                bytes.len()
            };
            let (run, rest) = bytes.split_at(room.min(bytes.len()));
            out.push(run);
            self.crc(crc, run);
            self.advance(run.len());
            bytes = rest;
        }
    }

    /// Feeds payload bytes just sent (in order) into the CRC. Needed only with CRC on;
    /// harmless otherwise.
    pub fn feed_payload<C: Crc32c>(&mut self, crc: &C, data: &[u8]) -> Result<(), TxError> {
        let n = u16::try_from(data.len()).map_err(|_| TxError::PayloadOverfed)?;
        let fed = self
            .payload_fed
            .checked_add(n)
            .filter(|f| *f <= self.payload_sent)
            .ok_or(TxError::PayloadOverfed)?;
        self.payload_fed = fed;
        self.crc(crc, data);
        Ok(())
    }

    /// The next thing to send.
    pub fn next<C: Crc32c>(&mut self, crc: &C) -> Result<TxStep, TxError> {
        match self.phase {
            Phase::Head => {
                let mut c = Chunk::new();
                let hdr = self.hdr;
                self.put(crc, &mut c, hdr.get(..self.hdr_len).unwrap_or(&[]));
                self.phase = Phase::Payload;
                Ok(TxStep::Head(c))
            }
            Phase::Payload => {
                if self.framer.crc_on && self.payload_fed != self.payload_sent {
                    return Err(TxError::PayloadCrcNotFed);
                }
                if self.payload_sent >= self.payload_len {
                    self.phase = Phase::Trailer;
                    return self.next(crc);
                }
                if self.marker_due() {
                    let mut c = Chunk::new();
                    self.put_marker(crc, &mut c);
                    return Ok(TxStep::Marker(c));
                }
                let left = self.payload_len.saturating_sub(self.payload_sent);
                let len = if self.framer.markers_on {
                    left.min(MARKER_INTERVAL.saturating_sub(self.framer.mpos))
                } else {
                    left
                };
                let offset = self.payload_sent;
                self.payload_sent = self.payload_sent.saturating_add(len);
                self.advance(usize::from(len));
                Ok(TxStep::Payload { offset, len })
            }
            Phase::Trailer => {
                let mut c = Chunk::new();
                let pad = [0u8; 3];
                self.put(crc, &mut c, pad.get(..self.pad).unwrap_or(&[]));
                if self.marker_due() {
                    self.put_marker(crc, &mut c);
                }
                let value = if self.framer.crc_on {
                    to_wire(finish(self.reg))
                } else {
                    [0; 4]
                };
                // The CRC field starts 4-aligned, so no marker falls inside it.
                c.push(&value);
                self.advance(value.len());
                self.phase = Phase::Done;
                Ok(TxStep::Trailer(c))
            }
            Phase::Done => Ok(TxStep::Done),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::super::crc::SoftCrc32c;
    use super::*;
    use std::vec::Vec;

    proptest::proptest! {
        /// Every FPDU is Head, then payload pieces with markers only in front
        /// of them, then Trailer, then Done; the parts cover the payload in order
        /// and, put together, are the frame `frame_into` builds.
        #[test]
        fn parts_come_in_wire_order(
            hdr_len in 4usize..=28,
            payload_len in 0u16..2000,
            crc_on: bool,
            markers_on: bool,
            start in 0u16..600,
        ) {
            let crc = SoftCrc32c;
            let hdr: Vec<u8> = (0..hdr_len).map(|i| i as u8).collect();
            let payload: Vec<u8> = (0..payload_len).map(|i| (i * 7) as u8).collect();
            let mut a = TxFramer::new(crc_on, markers_on);
            // Start somewhere in the marker interval, as a stream does.
            let warm = [0u8; 512];
            let mut sink = [0u8; 1024];
            let warm_len = usize::from(start % 128) * 4;
            a.frame_into(&crc, &[0u8; 4], &warm[..warm_len], &mut sink).unwrap();
            let mut b = a.clone();
            let mut f = a.fpdu(&hdr, payload_len).unwrap();
            let mut out = Vec::new();
            let mut kinds = Vec::new();
            let mut next_payload = 0u16;
            loop {
                let step = f.next(&crc).unwrap();
                match step {
                    TxStep::Head(_) => kinds.push('H'),
                    TxStep::Marker(_) => kinds.push('M'),
                    TxStep::Trailer(_) => kinds.push('T'),
                    TxStep::Payload { offset, len } => {
                        kinds.push('P');
                        proptest::prop_assert_eq!(offset, next_payload);
                        next_payload += len;
                        let piece = &payload[usize::from(offset)..usize::from(offset + len)];
                        f.feed_payload(&crc, piece).unwrap();
                        out.extend_from_slice(piece);
                        continue;
                    }
                    TxStep::Done => break,
                }
                out.extend_from_slice(step.bytes().unwrap());
            }
            proptest::prop_assert_eq!(next_payload, payload_len);
            let s: std::string::String = kinds.iter().collect();
            proptest::prop_assert!(s.starts_with('H') && s.ends_with('T'), "{}", s);
            proptest::prop_assert_eq!(s.matches('H').count(), 1);
            proptest::prop_assert_eq!(s.matches('T').count(), 1);
            // A marker due at the end goes into the trailer.
            proptest::prop_assert!(!s.contains("MM") && !s.contains("MT"), "{}", s);
            let mut whole = std::vec![0u8; out.len() + 64];
            let n = b.frame_into(&crc, &hdr, &payload, &mut whole).unwrap().unwrap();
            proptest::prop_assert_eq!(&whole[..n], &out[..]);
        }
    }
}
