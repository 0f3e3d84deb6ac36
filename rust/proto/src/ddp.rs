// SPDX-License-Identifier: GPL-2.0
//! Direct Data Placement (RFC 5041): header layouts, message segmentation and the
//! per-stream receive validation that turns segments into placement instructions.
//!
//! Offsets in this module are relative to the start of the *DDP segment*, i.e. the
//! ULPDU that MPA carries (the FPDU minus its 2-byte length field): every offset here
//! is two less than one counted from the FPDU start.
//!
//! Nothing here copies payload: the receive side yields [`Placement`] instructions
//! (tagged: STag + tagged offset + length; untagged: QN + MSN + MO + length) and the
//! transmit side yields payload ranges inside the message.

use super::bytes::{be16, be32, be64, put};
use super::term::TermCode;

/// Control word bit: tagged buffer model (RFC 5041 section 4.2).
pub const CTRL_TAGGED: u16 = 0x8000;
/// Control word bit: last segment of the message.
pub const CTRL_LAST: u16 = 0x4000;
/// Control word: DDP reserved bits (must be zero on transmit, ignored on receive).
pub const CTRL_DDP_RSVD: u16 = 0x3C00;
/// Control word: DDP version field mask.
pub const CTRL_DV_MASK: u16 = 0x0300;
/// Control word: RDMAP version field mask.
pub const CTRL_RV_MASK: u16 = 0x00C0;
/// Control word: RDMAP reserved bits.
pub const CTRL_RDMAP_RSVD: u16 = 0x0030;
/// Control word: RDMAP opcode mask.
pub const CTRL_OPCODE_MASK: u16 = 0x000F;
/// The DDP version this implementation speaks (RFC 5041).
pub const DDP_VERSION: u8 = 1;
/// The RDMAP version this implementation speaks (RFC 5040).
pub const RDMAP_VERSION: u8 = 1;

/// Length of the tagged DDP header (control word, STag, tagged offset).
pub const TAGGED_HDR_LEN: usize = 14;
/// Length of the untagged DDP header (control word, ULP-reserved word, QN, MSN, MO).
pub const UNTAGGED_HDR_LEN: usize = 18;
/// Length of the control word.
pub const CTRL_LEN: usize = 2;

/// Untagged queue number for Send messages.
pub const QN_SEND: u32 = 0;
/// Untagged queue number for RDMA Read Request messages.
pub const QN_READ_REQUEST: u32 = 1;
/// Untagged queue number for Terminate messages.
pub const QN_TERMINATE: u32 = 2;
/// Number of untagged queues RDMAP uses.
pub const NUM_QUEUES: usize = 3;

/// Field offsets inside a DDP segment.
mod field {
    pub(super) const CTRL: usize = 0;
    pub(super) const STAG: usize = 2;
    pub(super) const TO: usize = 6;
    pub(super) const ULP_RSVD: usize = 2;
    pub(super) const QN: usize = 6;
    pub(super) const MSN: usize = 10;
    pub(super) const MO: usize = 14;
}

/// The 16-bit DDP/RDMAP control word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ctrl(pub u16);

impl Ctrl {
    /// Builds a control word with version 1 for DDP and RDMAP and zero reserved bits.
    #[must_use]
    pub const fn new(tagged: bool, last: bool, opcode: u8) -> Self {
        let mut v = 0x0100 | 0x0040 | (opcode as u16 & CTRL_OPCODE_MASK);
        if tagged {
            v |= CTRL_TAGGED;
        }
        if last {
            v |= CTRL_LAST;
        }
        Ctrl(v)
    }
    /// T bit: the segment uses the tagged buffer model.
    #[must_use]
    pub const fn tagged(self) -> bool {
        self.0 & CTRL_TAGGED != 0
    }
    /// L bit: last segment of the message.
    #[must_use]
    pub const fn last(self) -> bool {
        self.0 & CTRL_LAST != 0
    }
    /// DDP version field.
    #[must_use]
    pub const fn ddp_version(self) -> u8 {
        ((self.0 & CTRL_DV_MASK) >> 8) as u8
    }
    /// RDMAP version field.
    #[must_use]
    pub const fn rdmap_version(self) -> u8 {
        ((self.0 & CTRL_RV_MASK) >> 6) as u8
    }
    /// Raw 4-bit RDMAP opcode.
    #[must_use]
    pub const fn opcode(self) -> u8 {
        (self.0 & CTRL_OPCODE_MASK) as u8
    }
    /// Reads the control word from the start of a segment.
    #[must_use]
    pub fn parse(seg: &[u8]) -> Option<Self> {
        be16(seg, field::CTRL).map(Ctrl)
    }
}

/// The DDP header proper (after the control word).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DdpHeader {
    /// Tagged buffer model (RFC 5041 section 4.3).
    Tagged {
        /// Steering tag of the target buffer.
        stag: u32,
        /// Tagged offset of this segment's first payload byte.
        to: u64,
    },
    /// Untagged buffer model (RFC 5041 section 4.4).
    Untagged {
        /// The 32-bit field RDMAP reserves for itself (Invalidate STag for Send with
        /// Invalidate, zero otherwise).
        ulp_rsvd: u32,
        /// Queue number.
        qn: u32,
        /// Message sequence number within the queue (first message is 1).
        msn: u32,
        /// Message offset of this segment's first payload byte.
        mo: u32,
    },
}

impl DdpHeader {
    /// Header length including the control word.
    #[must_use]
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> usize {
        match self {
            DdpHeader::Tagged { .. } => TAGGED_HDR_LEN,
            DdpHeader::Untagged { .. } => UNTAGGED_HDR_LEN,
        }
    }

    /// Whether this is the tagged model.
    #[must_use]
    pub const fn is_tagged(&self) -> bool {
        matches!(self, DdpHeader::Tagged { .. })
    }

    /// Parses the header fields; the model is taken from `ctrl`. `None` if `seg` is
    /// shorter than the header (callers check the length first and report a TERMINATE).
    #[must_use]
    pub fn parse(ctrl: Ctrl, seg: &[u8]) -> Option<Self> {
        if ctrl.tagged() {
            Some(DdpHeader::Tagged {
                stag: be32(seg, field::STAG)?,
                to: be64(seg, field::TO)?,
            })
        } else {
            Some(DdpHeader::Untagged {
                ulp_rsvd: be32(seg, field::ULP_RSVD)?,
                qn: be32(seg, field::QN)?,
                msn: be32(seg, field::MSN)?,
                mo: be32(seg, field::MO)?,
            })
        }
    }

    /// Writes control word and header into `buf`; returns the header length.
    pub fn emit(&self, ctrl: Ctrl, buf: &mut [u8]) -> Option<usize> {
        put(buf, field::CTRL, &ctrl.0.to_be_bytes())?;
        match *self {
            DdpHeader::Tagged { stag, to } => {
                put(buf, field::STAG, &stag.to_be_bytes())?;
                put(buf, field::TO, &to.to_be_bytes())?;
            }
            DdpHeader::Untagged {
                ulp_rsvd,
                qn,
                msn,
                mo,
            } => {
                put(buf, field::ULP_RSVD, &ulp_rsvd.to_be_bytes())?;
                put(buf, field::QN, &qn.to_be_bytes())?;
                put(buf, field::MSN, &msn.to_be_bytes())?;
                put(buf, field::MO, &mo.to_be_bytes())?;
            }
        }
        Some(self.len())
    }
}

/// One segment of a message being transmitted: the payload range inside the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentRange {
    /// Offset of the segment's payload inside the message.
    pub offset: u32,
    /// Payload length of the segment.
    pub len: u32,
    /// Whether this is the last segment (L bit).
    pub last: bool,
}

/// Splits a message of `total` payload bytes into segments (RFC 5041 section 5.1).
///
/// A zero-length message still produces exactly one (empty, last) segment.
#[derive(Debug, Clone, Copy)]
pub struct Segmenter {
    total: u32,
    sent: u32,
    done: bool,
}

impl Segmenter {
    /// Starts segmenting a message of `total` payload bytes.
    #[must_use]
    pub const fn new(total: u32) -> Self {
        Segmenter {
            total,
            sent: 0,
            done: false,
        }
    }

    /// Payload bytes not yet handed out.
    #[must_use]
    pub const fn remaining(&self) -> u32 {
        self.total.saturating_sub(self.sent)
    }

    /// Next segment carrying at most `max_payload` bytes (`0` is treated as 1 so that
    /// progress is always made).
    pub fn next_segment(&mut self, max_payload: u32) -> Option<SegmentRange> {
        if self.done {
            return None;
        }
        let len = self.remaining().min(max_payload.max(1));
        let offset = self.sent;
        self.sent = self.sent.saturating_add(len);
        let last = self.sent >= self.total;
        self.done = last;
        Some(SegmentRange { offset, len, last })
    }
}

/// Where a received segment's payload goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Into the tagged buffer `stag`, starting at tagged offset `to`.
    Tagged {
        /// Steering tag.
        stag: u32,
        /// Tagged offset of the first payload byte.
        to: u64,
        /// Payload length.
        len: u32,
    },
    /// Into the untagged buffer that queue `qn` assigned to message `msn`, at `mo`.
    Untagged {
        /// Queue number.
        qn: u32,
        /// Message sequence number.
        msn: u32,
        /// Message offset of the first payload byte.
        mo: u32,
        /// Payload length.
        len: u32,
    },
}

/// Result of validating one received segment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxSegment {
    /// Where the payload goes.
    pub placement: Placement,
    /// First segment of its message.
    pub first: bool,
    /// Last segment of its message.
    pub last: bool,
}

/// Per-stream DDP receive state (RFC 5041 sections 5.3, 7): expected MSN per queue and
/// the tagged and untagged message currently in progress.
///
/// # Invariants
///
/// At most one tagged and one untagged message are in progress; segments arrive in
/// order (TCP), so a continuation must name the same STag/MSN and the next offset.
#[derive(Debug, Clone)]
pub struct RxStreams {
    expected_msn: [u32; NUM_QUEUES],
    tagged: Option<(u32, u64)>,
    untagged: Option<(u32, u32, u32)>,
}

impl Default for RxStreams {
    fn default() -> Self {
        Self::new()
    }
}

impl RxStreams {
    /// Fresh stream: every queue expects MSN 1, nothing in progress.
    #[must_use]
    pub const fn new() -> Self {
        RxStreams {
            expected_msn: [1; NUM_QUEUES],
            tagged: None,
            untagged: None,
        }
    }

    /// MSN the next new message on queue `qn` must carry.
    #[must_use]
    pub fn expected_msn(&self, qn: u32) -> Option<u32> {
        self.expected_msn.get(qn as usize).copied()
    }

    /// Whether a tagged message is in progress (not yet seen its last segment).
    #[must_use]
    pub const fn tagged_in_progress(&self) -> bool {
        self.tagged.is_some()
    }

    /// Validates a segment header with `len` payload bytes and advances the state.
    pub fn accept(&mut self, hdr: &DdpHeader, last: bool, len: u32) -> Result<RxSegment, TermCode> {
        match *hdr {
            DdpHeader::Tagged { stag, to } => {
                let first = match self.tagged {
                    None => true,
                    Some((cur_stag, next_to)) => {
                        if cur_stag != stag {
                            return Err(TermCode::TaggedInvalidStag);
                        }
                        if next_to != to {
                            return Err(TermCode::TaggedBaseBounds);
                        }
                        false
                    }
                };
                let end = to
                    .checked_add(u64::from(len))
                    .ok_or(TermCode::TaggedToWrap)?;
                self.tagged = if last { None } else { Some((stag, end)) };
                Ok(RxSegment {
                    placement: Placement::Tagged { stag, to, len },
                    first,
                    last,
                })
            }
            DdpHeader::Untagged { qn, msn, mo, .. } => {
                let idx = qn as usize;
                let expected = *self
                    .expected_msn
                    .get(idx)
                    .ok_or(TermCode::UntaggedInvalidQn)?;
                let first = match self.untagged {
                    None => {
                        if msn != expected {
                            return Err(TermCode::UntaggedMsnRange);
                        }
                        if mo != 0 {
                            return Err(TermCode::UntaggedInvalidMo);
                        }
                        true
                    }
                    Some((cur_qn, cur_msn, next_mo)) => {
                        if cur_qn != qn || cur_msn != msn {
                            return Err(TermCode::UntaggedMsnRange);
                        }
                        if next_mo != mo {
                            return Err(TermCode::UntaggedInvalidMo);
                        }
                        false
                    }
                };
                let end = mo.checked_add(len).ok_or(TermCode::UntaggedInvalidMo)?;
                if last {
                    self.untagged = None;
                    if let Some(e) = self.expected_msn.get_mut(idx) {
                        *e = msn.wrapping_add(1);
                    }
                } else {
                    self.untagged = Some((qn, msn, end));
                }
                Ok(RxSegment {
                    placement: Placement::Untagged { qn, msn, mo, len },
                    first,
                    last,
                })
            }
        }
    }
}

/// Transmit-side MSN counters, one per untagged queue (first message is MSN 1).
#[derive(Debug, Clone)]
pub struct TxQueues {
    next_msn: [u32; NUM_QUEUES],
}

impl Default for TxQueues {
    fn default() -> Self {
        Self::new()
    }
}

impl TxQueues {
    /// Fresh counters (all at 1).
    #[must_use]
    pub const fn new() -> Self {
        TxQueues {
            next_msn: [1; NUM_QUEUES],
        }
    }

    /// Takes the next MSN for queue `qn` (0 for an unknown queue, which callers never
    /// pass: queue numbers come from the opcode).
    pub fn take(&mut self, qn: u32) -> u32 {
        match self.next_msn.get_mut(qn as usize) {
            Some(m) => {
                let v = *m;
                *m = m.wrapping_add(1);
                v
            }
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_values() {
        assert_eq!(Ctrl::new(true, true, 0).0, 0xC140);
        assert_eq!(Ctrl::new(false, true, 1).0, 0x4141);
        assert_eq!(Ctrl::new(false, true, 7).0, 0x4147);
        let c = Ctrl(0xC142);
        assert!(c.tagged() && c.last());
        assert_eq!((c.ddp_version(), c.rdmap_version(), c.opcode()), (1, 1, 2));
    }

    #[test]
    fn segmenter_zero_len() {
        let mut s = Segmenter::new(0);
        assert_eq!(
            s.next_segment(100),
            Some(SegmentRange {
                offset: 0,
                len: 0,
                last: true
            })
        );
        assert_eq!(s.next_segment(100), None);
    }

    #[test]
    fn segmenter_split() {
        let mut s = Segmenter::new(250);
        let a = s.next_segment(100).unwrap();
        let b = s.next_segment(100).unwrap();
        let c = s.next_segment(100).unwrap();
        assert_eq!((a.offset, a.len, a.last), (0, 100, false));
        assert_eq!((b.offset, b.len, b.last), (100, 100, false));
        assert_eq!((c.offset, c.len, c.last), (200, 50, true));
        assert!(s.next_segment(100).is_none());
    }

    #[test]
    fn untagged_rules() {
        let mut s = RxStreams::new();
        let h = |qn, msn, mo| DdpHeader::Untagged {
            ulp_rsvd: 0,
            qn,
            msn,
            mo,
        };
        assert_eq!(
            s.accept(&h(3, 1, 0), true, 0),
            Err(TermCode::UntaggedInvalidQn)
        );
        assert_eq!(
            s.accept(&h(0, 2, 0), true, 0),
            Err(TermCode::UntaggedMsnRange)
        );
        assert_eq!(
            s.accept(&h(0, 1, 4), true, 0),
            Err(TermCode::UntaggedInvalidMo)
        );
        assert!(s.accept(&h(0, 1, 0), false, 10).unwrap().first);
        // Another untagged message may not interleave.
        assert_eq!(
            s.accept(&h(1, 1, 0), true, 0),
            Err(TermCode::UntaggedMsnRange)
        );
        assert_eq!(
            s.accept(&h(0, 1, 11), true, 0),
            Err(TermCode::UntaggedInvalidMo)
        );
        let seg = s.accept(&h(0, 1, 10), true, 5).unwrap();
        assert!(!seg.first && seg.last);
        assert_eq!(s.expected_msn(0), Some(2));
        // Tagged may interleave with untagged.
        let t = DdpHeader::Tagged { stag: 5, to: 100 };
        assert!(s.accept(&t, false, 8).is_ok());
        assert!(s.accept(&h(0, 2, 0), false, 1).is_ok());
        assert_eq!(
            s.accept(&DdpHeader::Tagged { stag: 6, to: 108 }, true, 0),
            Err(TermCode::TaggedInvalidStag)
        );
    }
}
