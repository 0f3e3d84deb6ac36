// SPDX-License-Identifier: GPL-2.0
//! MPA Request and Reply frames (RFC 5044 section 7.1, RFC 6581 section 3).
//!
//! ```text
//!  0      16     18       20                 24
//!  | key  | bits | pd_len | [IRD | ORD]      | private data ...
//! ```
//! `bits`: M 0x8000, C 0x4000, R 0x2000, Enhanced 0x1000 (RFC 6581), 0x0800 siw's
//! "large FPDUs ok", 0x0700 reserved, low byte revision. With Enhanced (revision 2)
//! `pd_len` includes the 4-byte IRD/ORD block. IRD word: bit 15 peer-to-peer, bit 14
//! zero-length-Send RTR, 14-bit IRD; ORD word: bit 15 Write RTR, bit 14 Read RTR,
//! 14-bit ORD.
//!
//! Private data: RFC 5044 allows 512 bytes ([`MAX_PD_RFC`]); frames announcing more are
//! rejected. siw and rdma_cm cap the total at 256 ([`MAX_PD_SIW`]), i.e. 252 bytes of
//! application data behind the IRD/ORD block; negotiators enforce a configurable limit
//! on what they send.

use super::super::bytes::{be16, put};
use super::RtrCaps;

/// Key of an MPA Request.
pub const KEY_REQ: [u8; 16] = *b"MPA ID Req Frame";
/// Key of an MPA Reply.
pub const KEY_REP: [u8; 16] = *b"MPA ID Rep Frame";
/// Fixed part of a frame (key, bits, pd_len).
pub const HDR_LEN: usize = 20;
/// Size of the RFC 6581 IRD/ORD block.
pub const IRD_ORD_LEN: usize = 4;
/// RFC 5044 private data limit.
pub const MAX_PD_RFC: usize = 512;
/// Private data limit siw and rdma_cm accept (including the IRD/ORD block).
pub const MAX_PD_SIW: usize = 256;
/// Largest complete frame.
pub const MAX_FRAME_LEN: usize = HDR_LEN + MAX_PD_RFC;

/// M bit: the sender wants the peer to insert markers.
pub const BIT_MARKERS: u16 = 0x8000;
/// C bit: the sender wants CRCs.
pub const BIT_CRC: u16 = 0x4000;
/// R bit: the responder rejects the connection (Reply only).
pub const BIT_REJECT: u16 = 0x2000;
/// Enhanced bit (RFC 6581 as siw encodes it): IRD/ORD block present.
pub const BIT_ENHANCED: u16 = 0x1000;
/// siw-private bit: the sender accepts FPDUs larger than the MSS.
pub const BIT_LARGE_FPDU: u16 = 0x0800;
/// Reserved bits.
pub const BITS_RESERVED: u16 = 0x0700;
/// Revision mask.
pub const REV_MASK: u16 = 0x00FF;
/// Mask of the 14-bit IRD and ORD values.
pub const IRD_ORD_MASK: u16 = 0x3FFF;

mod field {
    pub(super) const BITS: usize = 16;
    pub(super) const PD_LEN: usize = 18;
    pub(super) const IRD: usize = 20;
    pub(super) const ORD: usize = 22;
}

/// Request or Reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// "MPA ID Req Frame".
    Request,
    /// "MPA ID Rep Frame".
    Reply,
}

/// The RFC 6581 IRD/ORD block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IrdOrd {
    /// Inbound Read queue depth (14 bits).
    pub ird: u16,
    /// Outbound Read queue depth (14 bits).
    pub ord: u16,
    /// Peer-to-peer mode requested / confirmed.
    pub p2p: bool,
    /// RTR modes offered (Request) or the one chosen (Reply).
    pub rtr: RtrCaps,
}

impl IrdOrd {
    /// Encodes the two 16-bit words.
    #[must_use]
    pub const fn words(&self) -> (u16, u16) {
        let mut ird = self.ird & IRD_ORD_MASK;
        let mut ord = self.ord & IRD_ORD_MASK;
        if self.p2p {
            ird |= 0x8000;
        }
        if self.rtr.send {
            ird |= 0x4000;
        }
        if self.rtr.write {
            ord |= 0x8000;
        }
        if self.rtr.read {
            ord |= 0x4000;
        }
        (ird, ord)
    }

    /// Decodes the two 16-bit words.
    #[must_use]
    pub const fn from_words(ird: u16, ord: u16) -> Self {
        IrdOrd {
            ird: ird & IRD_ORD_MASK,
            ord: ord & IRD_ORD_MASK,
            p2p: ird & 0x8000 != 0,
            rtr: RtrCaps {
                write: ord & 0x8000 != 0,
                read: ord & 0x4000 != 0,
                send: ird & 0x4000 != 0,
            },
        }
    }
}

/// Why a frame could not be parsed or emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The key is neither the Request nor the Reply key.
    BadKey,
    /// `pd_len` exceeds [`MAX_PD_RFC`] (or the caller's limit on emit).
    PrivateDataTooLong,
    /// Enhanced frame whose `pd_len` cannot hold the IRD/ORD block.
    EnhancedTooShort,
    /// Output buffer too small.
    BufferTooSmall,
}

/// A parsed or to-be-emitted Request/Reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Request or Reply.
    pub kind: FrameKind,
    /// M bit.
    pub markers: bool,
    /// C bit.
    pub crc: bool,
    /// R bit.
    pub reject: bool,
    /// siw's 0x0800 bit.
    pub large_fpdu: bool,
    /// Bits not interpreted here: reserved bits, and the Enhanced bit when it appears
    /// on a revision other than 2 (kept so that parse/emit round-trips).
    pub other_bits: u16,
    /// Revision (0 pre-RFC, 1 RFC 5044, 2 RFC 6581).
    pub revision: u8,
    /// IRD/ORD block (Enhanced, revision 2).
    pub ird_ord: Option<IrdOrd>,
    /// Application private data (after the IRD/ORD block).
    pub private_data: &'a [u8],
}

/// Result of parsing a possibly partial buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// At least this many bytes are needed in total before the frame is complete.
    NeedMore(usize),
    /// A complete frame occupying the first `len` bytes.
    Complete(Frame<'a>, usize),
}

impl<'a> Frame<'a> {
    /// The 16-bit bits word.
    #[must_use]
    pub fn bits(&self) -> u16 {
        let mut b = (self.other_bits & !(REV_MASK | BIT_MARKERS | BIT_CRC | BIT_REJECT))
            | u16::from(self.revision);
        if self.markers {
            b |= BIT_MARKERS;
        }
        if self.crc {
            b |= BIT_CRC;
        }
        if self.reject {
            b |= BIT_REJECT;
        }
        if self.large_fpdu {
            b |= BIT_LARGE_FPDU;
        }
        if self.ird_ord.is_some() {
            b |= BIT_ENHANCED;
        }
        b
    }

    /// Value of the `pd_len` field.
    #[must_use]
    pub fn pd_len(&self) -> usize {
        let block = if self.ird_ord.is_some() {
            IRD_ORD_LEN
        } else {
            0
        };
        self.private_data.len().saturating_add(block)
    }

    /// Bytes [`emit`](Self::emit) writes.
    #[must_use]
    pub fn buffer_len(&self) -> usize {
        HDR_LEN.saturating_add(self.pd_len())
    }

    /// Writes the frame; fails if `pd_len` would exceed `pd_limit` (use [`MAX_PD_RFC`]
    /// or [`MAX_PD_SIW`]) or `buf` is too small.
    pub fn emit(&self, buf: &mut [u8], pd_limit: usize) -> Result<usize, FrameError> {
        let pd_len = self.pd_len();
        if pd_len > pd_limit.min(MAX_PD_RFC) {
            return Err(FrameError::PrivateDataTooLong);
        }
        let len = self.buffer_len();
        let out = buf.get_mut(..len).ok_or(FrameError::BufferTooSmall)?;
        let key = match self.kind {
            FrameKind::Request => &KEY_REQ,
            FrameKind::Reply => &KEY_REP,
        };
        let e = FrameError::BufferTooSmall;
        put(out, 0, key).ok_or(e)?;
        put(out, field::BITS, &self.bits().to_be_bytes()).ok_or(e)?;
        let pd16 = u16::try_from(pd_len).map_err(|_| FrameError::PrivateDataTooLong)?;
        put(out, field::PD_LEN, &pd16.to_be_bytes()).ok_or(e)?;
        let mut off = HDR_LEN;
        if let Some(io) = self.ird_ord {
            let (ird, ord) = io.words();
            put(out, field::IRD, &ird.to_be_bytes()).ok_or(e)?;
            put(out, field::ORD, &ord.to_be_bytes()).ok_or(e)?;
            off = HDR_LEN.saturating_add(IRD_ORD_LEN);
        }
        put(out, off, self.private_data).ok_or(e)?;
        Ok(len)
    }

    /// Parses a frame from the start of `buf`, which may hold only part of it (or more
    /// than it: trailing bytes are not examined).
    pub fn parse(buf: &'a [u8]) -> Result<Parsed<'a>, FrameError> {
        let Some(hdr) = buf.get(..HDR_LEN) else {
            return Ok(Parsed::NeedMore(HDR_LEN));
        };
        let kind = match hdr.get(..16) {
            Some(k) if k == KEY_REQ => FrameKind::Request,
            Some(k) if k == KEY_REP => FrameKind::Reply,
            _ => return Err(FrameError::BadKey),
        };
        let bits = be16(hdr, field::BITS).ok_or(FrameError::BadKey)?;
        let pd_len = usize::from(be16(hdr, field::PD_LEN).ok_or(FrameError::BadKey)?);
        if pd_len > MAX_PD_RFC {
            return Err(FrameError::PrivateDataTooLong);
        }
        let total = HDR_LEN.saturating_add(pd_len);
        let Some(pd) = buf.get(HDR_LEN..total) else {
            return Ok(Parsed::NeedMore(total));
        };
        let revision = (bits & REV_MASK) as u8;
        let enhanced = bits & BIT_ENHANCED != 0 && revision == 2;
        let (ird_ord, private_data) = if enhanced {
            let io = IrdOrd::from_words(
                be16(pd, 0).ok_or(FrameError::EnhancedTooShort)?,
                be16(pd, 2).ok_or(FrameError::EnhancedTooShort)?,
            );
            (Some(io), pd.get(IRD_ORD_LEN..).unwrap_or(&[]))
        } else {
            (None, pd)
        };
        let mut other_bits = bits & BITS_RESERVED;
        if !enhanced {
            other_bits |= bits & BIT_ENHANCED;
        }
        Ok(Parsed::Complete(
            Frame {
                kind,
                markers: bits & BIT_MARKERS != 0,
                crc: bits & BIT_CRC != 0,
                reject: bits & BIT_REJECT != 0,
                large_fpdu: bits & BIT_LARGE_FPDU != 0,
                other_bits,
                revision,
                ird_ord,
                private_data,
            },
            total,
        ))
    }
}
