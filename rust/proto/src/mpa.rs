// SPDX-License-Identifier: GPL-2.0
//! Marker PDU Aligned framing (RFC 5044) with the enhanced connection set-up of
//! RFC 6581.
//!
//! * [`frame`]: MPA Request/Reply frames (parse from partial buffers, emit).
//! * [`negotiate`]: initiator and responder start-up state machines producing a
//!   [`Negotiated`] result for the QP.
//! * [`rx`]: the incremental receive framer (TCP bytes in, parsed headers, borrowed
//!   payload slices and CRC verdicts out; markers removed).
//! * [`tx`]: the transmit framer (header bytes, payload ranges to send zero-copy,
//!   markers inserted, pad and CRC trailer).
//!
//! # FPDU layout (RFC 5044 section 4.1)
//!
//! `[ULPDU length: u16][ULPDU][pad 0..3][CRC: 4]`, pad = `(-(len + 2)) & 3`. The CRC
//! covers everything from the FPDU's first byte up to the end of the pad, including any
//! markers inside; with CRC not negotiated the field is sent as zero and not checked.
//!
//! # Markers (RFC 5044 section 4.3)
//!
//! With markers, a 4-byte marker `[0, 0, FPDUPTR: u16]` sits at every stream position
//! that is a multiple of 512, counted from the first byte of the first FPDU of that
//! direction (so one precedes the first FPDU). FPDUPTR is the distance from the
//! current FPDU's length field back to the marker. A marker that falls exactly where an
//! FPDU begins belongs to that FPDU: it precedes the length field, has FPDUPTR 0 and is
//! covered by that FPDU's CRC (this matches Wireshark's MPA dissector). Markers are
//! not counted in the ULPDU length.

pub mod frame;
pub mod negotiate;
pub mod rx;
pub mod tx;

/// Marker spacing in the TCP stream.
pub const MARKER_INTERVAL: u16 = 512;
/// Size of a marker.
pub const MARKER_LEN: usize = 4;
/// Size of the ULPDU length field.
pub const LEN_FIELD: usize = 2;
/// Size of the CRC field.
pub const CRC_LEN: usize = 4;
/// Largest ULPDU the transmit framer emits when markers are on, so that every FPDUPTR
/// still fits in 16 bits (63 KiB plus at most 128 markers stays below 64 KiB).
pub const MAX_ULPDU_WITH_MARKERS: u16 = 0xFC00;
/// siw's time limit for receiving an MPA Request (responder), in milliseconds.
pub const REQUEST_TIMEOUT_MS: u32 = 10_000;
/// siw's time limit for receiving an MPA Reply (initiator), in milliseconds.
pub const REPLY_TIMEOUT_MS: u32 = 5_000;

/// Pad bytes after a ULPDU of `ulpdu_len` bytes: `(-(len + 2)) & 3`.
#[must_use]
pub const fn pad_len(ulpdu_len: u16) -> usize {
    4usize.wrapping_sub((ulpdu_len as usize).wrapping_add(LEN_FIELD) & 3) & 3
}

/// Bytes an FPDU with a ULPDU of `ulpdu_len` occupies without markers.
#[must_use]
pub const fn fpdu_len(ulpdu_len: u16) -> usize {
    (ulpdu_len as usize)
        .wrapping_add(LEN_FIELD)
        .wrapping_add(pad_len(ulpdu_len))
        .wrapping_add(CRC_LEN)
}

/// Largest ULPDU whose FPDU (without markers) fits in `fpdu_budget` bytes, e.g. the
/// TCP MSS (RFC 5044 section 5.1: one FPDU per segment); `None` if not even an empty
/// ULPDU fits. With markers on, allow for them with [`max_ulpdu_with_markers`].
#[must_use]
pub fn max_ulpdu(fpdu_budget: usize) -> Option<u16> {
    // Length field, ULPDU and pad round up to a multiple of 4 and must fit in front
    // of the CRC.
    let room = fpdu_budget.checked_sub(CRC_LEN)? & !3;
    let ulpdu = room.checked_sub(LEN_FIELD)?;
    Some(u16::try_from(ulpdu).unwrap_or(u16::MAX))
}

/// Like [`max_ulpdu`] but leaves room for the markers a `fpdu_budget`-byte FPDU can
/// contain, and respects [`MAX_ULPDU_WITH_MARKERS`].
#[must_use]
pub fn max_ulpdu_with_markers(fpdu_budget: usize) -> Option<u16> {
    let markers = (fpdu_budget / 512).saturating_add(1);
    let budget = fpdu_budget.checked_sub(markers.checked_mul(MARKER_LEN)?)?;
    max_ulpdu(budget).map(|u| u.min(MAX_ULPDU_WITH_MARKERS))
}

/// Peer-to-peer "ready to receive" message (RFC 6581 section 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtrMode {
    /// Zero-length RDMA Write (siw uses STag 1, TO 0).
    Write,
    /// Zero-length RDMA Read Request.
    Read,
    /// Zero-length Send.
    Send,
}

/// The RTR modes a side offers (initiator) or accepts (responder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RtrCaps {
    /// Zero-length Write.
    pub write: bool,
    /// Zero-length Read.
    pub read: bool,
    /// Zero-length Send.
    pub send: bool,
}

/// Who must do what about the RTR message after start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rtr {
    /// No peer-to-peer mode: both sides may send once in full operation (the
    /// initiator after receiving the Reply, the responder right after sending it).
    None,
    /// Initiator: send this RTR message as the very first FPDU.
    Send(RtrMode),
    /// Responder: send nothing until the first FPDU (the RTR, of this mode) arrived.
    Await(RtrMode),
}

/// Connection parameters negotiated during MPA start-up, as the QP uses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// MPA revision in use (1 or 2).
    pub revision: u8,
    /// Compute and send CRCs on transmit.
    pub crc_tx: bool,
    /// Check CRCs on receive.
    pub crc_rx: bool,
    /// Insert markers on transmit (the peer asked for them).
    pub markers_tx: bool,
    /// Remove markers on receive (we asked for them).
    pub markers_rx: bool,
    /// Inbound RDMA Read Requests this side accepts outstanding.
    pub ird: u16,
    /// Outbound RDMA Reads this side may have outstanding (0: no Reads at all).
    pub ord: u16,
    /// Peer-to-peer RTR duty.
    pub rtr: Rtr,
    /// The peer set siw's 0x0800 bit ("large FPDUs ok").
    pub peer_large_fpdu: bool,
    /// Offset of the peer's application private data in the negotiator's buffer.
    pub private_data_start: u16,
    /// Length of the peer's application private data.
    pub private_data_len: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads() {
        assert_eq!(pad_len(0), 2);
        assert_eq!(pad_len(1), 1);
        assert_eq!(pad_len(2), 0);
        assert_eq!(pad_len(3), 3);
        assert_eq!(fpdu_len(14), 20);
        assert_eq!(max_ulpdu(1460), Some(1454));
        assert_eq!(fpdu_len(1454), 1460);
        assert_eq!(max_ulpdu(5), None);
        assert_eq!(max_ulpdu(7), None);
        assert_eq!(max_ulpdu(8), Some(2));
    }
}
