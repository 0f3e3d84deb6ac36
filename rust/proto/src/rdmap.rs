// SPDX-License-Identifier: GPL-2.0
//! RDMA Protocol (RFC 5040): opcodes, the combined DDP/RDMAP header of every message
//! type, TERMINATE messages and the single table that maps every receive-side failure
//! to its TERMINATE layer/type/code ([`TermCode`]).
//!
//! Submodules: [`engine`] is the per-QP receive engine (segments in, placement and
//! completion actions out); [`reads`] the RDMA Reads outstanding in both
//! directions, which transmitter and receiver share; [`tx`] turns work requests
//! into DDP segments.
//!
//! Offsets here are relative to the DDP segment (ULPDU), two less than offsets
//! counted from the FPDU start.

pub mod engine;
pub mod reads;
pub mod tx;

use super::bytes::{be32, be64, put};
use super::ddp::{self, Ctrl, DdpHeader};
pub use super::term::{etype, layer, Attach, StagError, TermCode};

/// RDMAP opcode (RFC 5040 section 4.3). Unknown values stay representable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opcode {
    /// RDMA Write (tagged).
    RdmaWrite,
    /// RDMA Read Request (untagged, QN 1).
    ReadRequest,
    /// RDMA Read Response (tagged).
    ReadResponse,
    /// Send (untagged, QN 0).
    Send,
    /// Send with Invalidate.
    SendInvalidate,
    /// Send with Solicited Event.
    SendSe,
    /// Send with Solicited Event and Invalidate.
    SendSeInvalidate,
    /// Terminate (untagged, QN 2).
    Terminate,
    /// Any other 4-bit value.
    Unknown(u8),
}

impl Opcode {
    /// Decodes the 4-bit opcode field.
    #[must_use]
    pub const fn from_raw(v: u8) -> Self {
        match v & 0x0f {
            0 => Opcode::RdmaWrite,
            1 => Opcode::ReadRequest,
            2 => Opcode::ReadResponse,
            3 => Opcode::Send,
            4 => Opcode::SendInvalidate,
            5 => Opcode::SendSe,
            6 => Opcode::SendSeInvalidate,
            7 => Opcode::Terminate,
            x => Opcode::Unknown(x),
        }
    }

    /// The 4-bit wire value.
    #[must_use]
    pub const fn raw(self) -> u8 {
        match self {
            Opcode::RdmaWrite => 0,
            Opcode::ReadRequest => 1,
            Opcode::ReadResponse => 2,
            Opcode::Send => 3,
            Opcode::SendInvalidate => 4,
            Opcode::SendSe => 5,
            Opcode::SendSeInvalidate => 6,
            Opcode::Terminate => 7,
            Opcode::Unknown(x) => x & 0x0f,
        }
    }

    /// Whether the operation uses the tagged model; `None` for unknown opcodes.
    #[must_use]
    pub const fn tagged(self) -> Option<bool> {
        match self {
            Opcode::RdmaWrite | Opcode::ReadResponse => Some(true),
            Opcode::Unknown(_) => None,
            _ => Some(false),
        }
    }

    /// Fixed header length (DDP segment relative), without TERMINATE attachments.
    #[must_use]
    pub const fn header_len(self) -> Option<usize> {
        match self {
            Opcode::RdmaWrite | Opcode::ReadResponse => Some(ddp::TAGGED_HDR_LEN),
            Opcode::Send | Opcode::SendInvalidate | Opcode::SendSe | Opcode::SendSeInvalidate => {
                Some(ddp::UNTAGGED_HDR_LEN)
            }
            Opcode::ReadRequest => Some(READ_REQUEST_HDR_LEN),
            Opcode::Terminate => Some(TERMINATE_HDR_LEN),
            Opcode::Unknown(_) => None,
        }
    }
}

/// Read Request header length (untagged DDP header + 28 bytes of RDMAP fields).
pub const READ_REQUEST_HDR_LEN: usize = 46;
/// Terminate header length without attachments (untagged header + control word).
pub const TERMINATE_HDR_LEN: usize = 22;
/// Largest header a TERMINATE may attach: the offending FPDU's length field plus a
/// Read Request header (48 bytes from the FPDU start).
pub const MAX_ATTACHED_LEN: usize = 48;
/// Largest header the receive framer ever buffers (TERMINATE with full attachment).
pub const MAX_HDR_LEN: usize = TERMINATE_HDR_LEN + MAX_ATTACHED_LEN;

/// Field offsets of RDMAP-specific fields (DDP segment relative).
mod field {
    pub(super) const SINK_STAG: usize = 18;
    pub(super) const SINK_TO: usize = 22;
    pub(super) const READ_SIZE: usize = 30;
    pub(super) const SRC_STAG: usize = 34;
    pub(super) const SRC_TO: usize = 38;
    pub(super) const TERM_CTRL: usize = 18;
    pub(super) const TERM_ATTACHED: usize = 22;
}

/// Validates the control word and returns the fixed header length for its opcode.
///
/// Checks, in this order (as siw does): DDP version, RDMAP version, opcode known,
/// T bit consistent with the opcode. Only the control word is read.
pub fn header_len(ctrl: Ctrl) -> Result<usize, TermCode> {
    if ctrl.ddp_version() != ddp::DDP_VERSION {
        return Err(if ctrl.tagged() {
            TermCode::DdpVersionTagged
        } else {
            TermCode::DdpVersionUntagged
        });
    }
    if ctrl.rdmap_version() != ddp::RDMAP_VERSION {
        return Err(TermCode::RdmapVersion);
    }
    let op = Opcode::from_raw(ctrl.opcode());
    match (op.tagged(), op.header_len()) {
        (Some(t), Some(len)) if t == ctrl.tagged() => Ok(len),
        _ => Err(TermCode::RdmapOpcode),
    }
}

/// The four Send variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOp {
    /// Plain Send.
    Send,
    /// Send with Invalidate.
    SendInvalidate,
    /// Send with Solicited Event.
    SendSe,
    /// Send with Solicited Event and Invalidate.
    SendSeInvalidate,
}

impl SendOp {
    /// The RDMAP opcode.
    #[must_use]
    pub const fn opcode(self) -> Opcode {
        match self {
            SendOp::Send => Opcode::Send,
            SendOp::SendInvalidate => Opcode::SendInvalidate,
            SendOp::SendSe => Opcode::SendSe,
            SendOp::SendSeInvalidate => Opcode::SendSeInvalidate,
        }
    }
    /// Whether the receiver must invalidate the STag carried in the header.
    #[must_use]
    pub const fn invalidates(self) -> bool {
        matches!(self, SendOp::SendInvalidate | SendOp::SendSeInvalidate)
    }
    /// Whether the message carries the Solicited Event flag.
    #[must_use]
    pub const fn solicited(self) -> bool {
        matches!(self, SendOp::SendSe | SendOp::SendSeInvalidate)
    }
}

/// The RDMAP part of a Read Request (RFC 5040 section 4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRequest {
    /// STag of the requester's sink buffer (the Read Response targets it).
    pub sink_stag: u32,
    /// Tagged offset in the sink buffer.
    pub sink_to: u64,
    /// Number of bytes to read.
    pub read_size: u32,
    /// STag of the responder's source buffer.
    pub src_stag: u32,
    /// Tagged offset in the source buffer.
    pub src_to: u64,
}

/// TERMINATE control word and attached header (RFC 5040 section 4.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminate {
    /// Layer (0 RDMAP, 1 DDP, 2 LLP).
    pub layer: u8,
    /// Error type within the layer.
    pub etype: u8,
    /// Error code.
    pub ecode: u8,
    /// M: the DDP segment length of the offending segment is valid.
    pub flag_m: bool,
    /// D: the offending DDP header is attached.
    pub flag_d: bool,
    /// R: the offending RDMAP header is attached.
    pub flag_r: bool,
    /// Attached bytes: the offending FPDU from its length field on.
    pub attached: [u8; MAX_ATTACHED_LEN],
    /// Number of valid bytes in `attached`.
    pub attached_len: u8,
}

impl Terminate {
    /// Builds the TERMINATE for `code`, attaching the offending header as siw does
    /// (see [`TermCode::attach`]). `offending` is the header and the ULPDU length of the
    /// segment that failed.
    #[must_use]
    pub fn new(code: TermCode, offending: Option<(&Header, u16)>) -> Self {
        let (layer, etype, ecode) = code.code();
        let mut t = Terminate {
            layer,
            etype,
            ecode,
            flag_m: false,
            flag_d: false,
            flag_r: false,
            attached: [0; MAX_ATTACHED_LEN],
            attached_len: 0,
        };
        let attach = code.attach();
        if let (Some((hdr, ulpdu_len)), true) = (offending, attach != Attach::None) {
            let mut buf = [0u8; MAX_HDR_LEN];
            if let Some(full) = hdr.emit(&mut buf) {
                let keep = match attach {
                    Attach::Full if !matches!(hdr.body, Body::Terminate { .. }) => full,
                    _ => hdr.ddp().len(),
                };
                t.attach(
                    buf.get(..keep).unwrap_or(&[]),
                    ulpdu_len,
                    attach == Attach::Full,
                );
            }
        }
        t
    }

    /// Like [`Terminate::new`] for a segment whose header could not be
    /// parsed though its layout is known (a Send, Read Request or Terminate
    /// on the wrong queue, found by [`Header::parse`]): `raw` is the header
    /// as received, from its control word. The DDP header is copied (and the
    /// whole header where `code` wants it) as RFC 5040 section 4.8 has it; a
    /// header too short for that is not copied.
    #[must_use]
    pub fn with_raw_header(code: TermCode, raw: &[u8], ulpdu_len: u16) -> Self {
        let mut t = Self::new(code, None);
        let Some(ctrl) = Ctrl::parse(raw) else {
            return t;
        };
        let ddp_len = if ctrl.tagged() {
            ddp::TAGGED_HDR_LEN
        } else {
            ddp::UNTAGGED_HDR_LEN
        };
        let keep = match code.attach() {
            Attach::None => return t,
            Attach::Ddp => ddp_len,
            Attach::Full => raw.len().min(MAX_ATTACHED_LEN.saturating_sub(2)),
        };
        if let Some(src) = raw.get(..keep) {
            t.attach(src, ulpdu_len, code.attach() == Attach::Full);
        }
        t
    }

    /// Copies the offending segment's length and `hdr` (its header, from the
    /// control word) as the attachment, with M and D (and R for `full`).
    fn attach(&mut self, hdr: &[u8], ulpdu_len: u16, full: bool) {
        let total = hdr.len().saturating_add(2).min(MAX_ATTACHED_LEN);
        if let (Some(dst), Some(src)) = (
            self.attached.get_mut(..total),
            hdr.get(..total.saturating_sub(2)),
        ) {
            let (len_field, rest) = dst.split_at_mut(2);
            len_field.copy_from_slice(&ulpdu_len.to_be_bytes());
            rest.copy_from_slice(src);
            self.attached_len = total as u8;
            self.flag_m = true;
            self.flag_d = true;
            self.flag_r = full;
        }
    }

    /// The attached bytes.
    #[must_use]
    pub fn attached(&self) -> &[u8] {
        self.attached
            .get(..usize::from(self.attached_len))
            .unwrap_or(&[])
    }

    /// The 32-bit control word.
    #[must_use]
    pub fn ctrl_word(&self) -> u32 {
        (u32::from(self.layer & 0xf) << 28)
            | (u32::from(self.etype & 0xf) << 24)
            | (u32::from(self.ecode) << 16)
            | if self.flag_m { 0x8000 } else { 0 }
            | if self.flag_d { 0x4000 } else { 0 }
            | if self.flag_r { 0x2000 } else { 0 }
    }

    fn from_ctrl_word(w: u32, attached: &[u8]) -> Self {
        let mut t = Terminate {
            layer: ((w >> 28) & 0xf) as u8,
            etype: ((w >> 24) & 0xf) as u8,
            ecode: ((w >> 16) & 0xff) as u8,
            flag_m: w & 0x8000 != 0,
            flag_d: w & 0x4000 != 0,
            flag_r: w & 0x2000 != 0,
            attached: [0; MAX_ATTACHED_LEN],
            attached_len: 0,
        };
        let n = attached.len().min(MAX_ATTACHED_LEN);
        if let (Some(d), Some(s)) = (t.attached.get_mut(..n), attached.get(..n)) {
            d.copy_from_slice(s);
            t.attached_len = n as u8;
        }
        t
    }
}

/// Message-specific part of a [`Header`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// RDMA Write segment.
    Write {
        /// Sink STag.
        stag: u32,
        /// Sink tagged offset of this segment.
        to: u64,
    },
    /// RDMA Read Response segment.
    ReadResponse {
        /// Sink STag (from the Read Request).
        stag: u32,
        /// Sink tagged offset of this segment.
        to: u64,
    },
    /// A Send-type segment.
    Send {
        /// Which Send.
        op: SendOp,
        /// STag to invalidate (meaningful for the invalidate variants, else 0).
        inval_stag: u32,
        /// Message sequence number (queue 0).
        msn: u32,
        /// Message offset.
        mo: u32,
    },
    /// RDMA Read Request (queue 1).
    ReadRequest {
        /// Message sequence number (queue 1).
        msn: u32,
        /// Message offset (always 0: a Read Request is one segment).
        mo: u32,
        /// Request fields.
        req: ReadRequest,
    },
    /// Terminate (queue 2).
    Terminate {
        /// Message sequence number (queue 2, normally 1).
        msn: u32,
        /// Message offset (0).
        mo: u32,
        /// Terminate fields.
        term: Terminate,
    },
}

/// The DDP + RDMAP header of one segment (everything in the ULPDU before the payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// L bit: last segment of the message.
    pub last: bool,
    /// Message-specific fields.
    pub body: Body,
}

impl Header {
    /// The opcode of this header.
    #[must_use]
    pub const fn opcode(&self) -> Opcode {
        match self.body {
            Body::Write { .. } => Opcode::RdmaWrite,
            Body::ReadResponse { .. } => Opcode::ReadResponse,
            Body::Send { op, .. } => op.opcode(),
            Body::ReadRequest { .. } => Opcode::ReadRequest,
            Body::Terminate { .. } => Opcode::Terminate,
        }
    }

    /// The control word.
    #[must_use]
    pub const fn ctrl(&self) -> Ctrl {
        let op = self.opcode();
        Ctrl::new(matches!(op.tagged(), Some(true)), self.last, op.raw())
    }

    /// The DDP part of the header.
    #[must_use]
    pub const fn ddp(&self) -> DdpHeader {
        match self.body {
            Body::Write { stag, to } | Body::ReadResponse { stag, to } => {
                DdpHeader::Tagged { stag, to }
            }
            Body::Send {
                inval_stag,
                msn,
                mo,
                ..
            } => DdpHeader::Untagged {
                ulp_rsvd: inval_stag,
                qn: ddp::QN_SEND,
                msn,
                mo,
            },
            Body::ReadRequest { msn, mo, .. } => DdpHeader::Untagged {
                ulp_rsvd: 0,
                qn: ddp::QN_READ_REQUEST,
                msn,
                mo,
            },
            Body::Terminate { msn, mo, .. } => DdpHeader::Untagged {
                ulp_rsvd: 0,
                qn: ddp::QN_TERMINATE,
                msn,
                mo,
            },
        }
    }

    /// Bytes [`emit`](Self::emit) writes.
    #[must_use]
    pub fn buffer_len(&self) -> usize {
        match &self.body {
            Body::Terminate { term, .. } => {
                TERMINATE_HDR_LEN.saturating_add(usize::from(term.attached_len))
            }
            _ => self.opcode().header_len().unwrap_or(0),
        }
    }

    /// Parses a header from `seg`, the first bytes of a DDP segment whose ULPDU length
    /// is `ulpdu_len`. Every length is checked before the field behind it is read.
    ///
    /// For a TERMINATE, bytes after the fixed header (up to [`MAX_ATTACHED_LEN`] and
    /// within `seg` and `ulpdu_len`) are taken as the attached header.
    pub fn parse(seg: &[u8], ulpdu_len: u16) -> Result<Self, TermCode> {
        let ulpdu_len = usize::from(ulpdu_len);
        if ulpdu_len < ddp::CTRL_LEN {
            return Err(TermCode::LlpUlpduTooShort);
        }
        let ctrl = Ctrl::parse(seg).ok_or(TermCode::LlpUlpduTooShort)?;
        let hlen = header_len(ctrl)?;
        if ulpdu_len < hlen || seg.len() < hlen {
            return Err(TermCode::LlpUlpduTooShort);
        }
        let short = TermCode::LlpUlpduTooShort;
        let ddp_hdr = DdpHeader::parse(ctrl, seg).ok_or(short)?;
        let last = ctrl.last();
        let body = match (Opcode::from_raw(ctrl.opcode()), ddp_hdr) {
            (Opcode::RdmaWrite, DdpHeader::Tagged { stag, to }) => Body::Write { stag, to },
            (Opcode::ReadResponse, DdpHeader::Tagged { stag, to }) => {
                Body::ReadResponse { stag, to }
            }
            (
                op @ (Opcode::Send
                | Opcode::SendInvalidate
                | Opcode::SendSe
                | Opcode::SendSeInvalidate),
                DdpHeader::Untagged {
                    ulp_rsvd,
                    msn,
                    mo,
                    qn,
                    ..
                },
            ) => {
                if qn != ddp::QN_SEND {
                    return Err(TermCode::UntaggedInvalidQn);
                }
                let op = match op {
                    Opcode::SendInvalidate => SendOp::SendInvalidate,
                    Opcode::SendSe => SendOp::SendSe,
                    Opcode::SendSeInvalidate => SendOp::SendSeInvalidate,
                    _ => SendOp::Send,
                };
                let inval_stag = if op.invalidates() { ulp_rsvd } else { 0 };
                Body::Send {
                    op,
                    inval_stag,
                    msn,
                    mo,
                }
            }
            (Opcode::ReadRequest, DdpHeader::Untagged { qn, msn, mo, .. }) => {
                if qn != ddp::QN_READ_REQUEST {
                    return Err(TermCode::UntaggedInvalidQn);
                }
                Body::ReadRequest {
                    msn,
                    mo,
                    req: ReadRequest {
                        sink_stag: be32(seg, field::SINK_STAG).ok_or(short)?,
                        sink_to: be64(seg, field::SINK_TO).ok_or(short)?,
                        read_size: be32(seg, field::READ_SIZE).ok_or(short)?,
                        src_stag: be32(seg, field::SRC_STAG).ok_or(short)?,
                        src_to: be64(seg, field::SRC_TO).ok_or(short)?,
                    },
                }
            }
            (Opcode::Terminate, DdpHeader::Untagged { qn, msn, mo, .. }) => {
                if qn != ddp::QN_TERMINATE {
                    return Err(TermCode::UntaggedInvalidQn);
                }
                let w = be32(seg, field::TERM_CTRL).ok_or(short)?;
                let end = seg.len().min(ulpdu_len);
                let attached = seg.get(field::TERM_ATTACHED..end).unwrap_or(&[]);
                Body::Terminate {
                    msn,
                    mo,
                    term: Terminate::from_ctrl_word(w, attached),
                }
            }
            _ => return Err(TermCode::RdmapOpcode),
        };
        Ok(Header { last, body })
    }

    /// Writes the header into `buf`; returns the number of bytes written, or `None` if
    /// `buf` is shorter than [`buffer_len`](Self::buffer_len).
    pub fn emit(&self, buf: &mut [u8]) -> Option<usize> {
        let len = self.buffer_len();
        let buf = buf.get_mut(..len)?;
        buf.fill(0);
        self.ddp().emit(self.ctrl(), buf)?;
        match &self.body {
            Body::ReadRequest { req, .. } => {
                put(buf, field::SINK_STAG, &req.sink_stag.to_be_bytes())?;
                put(buf, field::SINK_TO, &req.sink_to.to_be_bytes())?;
                put(buf, field::READ_SIZE, &req.read_size.to_be_bytes())?;
                put(buf, field::SRC_STAG, &req.src_stag.to_be_bytes())?;
                put(buf, field::SRC_TO, &req.src_to.to_be_bytes())?;
            }
            Body::Terminate { term, .. } => {
                put(buf, field::TERM_CTRL, &term.ctrl_word().to_be_bytes())?;
                put(buf, field::TERM_ATTACHED, term.attached())?;
            }
            _ => {}
        }
        Some(len)
    }
}
