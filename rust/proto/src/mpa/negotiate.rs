// SPDX-License-Identifier: GPL-2.0
//! MPA start-up negotiation (RFC 5044 section 7.1, RFC 6581), initiator and responder.
//!
//! Both are pure state machines over bytes: feed what TCP delivered with `on_bytes`,
//! write frames into caller buffers, get a [`Negotiated`] result. Timers are the
//! caller's (see [`REQUEST_TIMEOUT_MS`](super::REQUEST_TIMEOUT_MS) and
//! [`REPLY_TIMEOUT_MS`](super::REPLY_TIMEOUT_MS)).
//!
//! Rules implemented (RFC 5044 section 7.1, RFC 6581; Documentation/srnic/protocols.rst,
//! "Negotiation rules"):
//! * CRC is used in both directions if either side sets C.
//! * A side that sets M asks the peer to insert markers in what the peer sends; a side
//!   that cannot insert markers refuses (the responder rejects, as siw does).
//! * Revision 2 with Enhanced exchanges IRD/ORD; an initiator that sent Enhanced
//!   requires an Enhanced revision-2 Reply (siw's rule). Each side's ORD is capped by
//!   the peer's IRD; a Reply whose ORD exceeds the initiator's IRD is refused with
//!   LLP/MPA/0x06.
//! * Peer-to-peer: the initiator offers RTR modes, the responder picks one (Write,
//!   then Read, then Send; Write if none was offered, as siw does); no common mode is
//!   LLP/MPA/0x07.
//! * The initiator sends nothing behind its Request; the responder treats bytes behind
//!   the Request as a protocol error (siw rejects them). The responder may send FPDUs
//!   right after its Reply unless it awaits an RTR; bytes behind the Reply are returned
//!   unconsumed to the initiator's caller, for the receive framer.

use super::super::rdmap::TermCode;
use super::frame::{
    Frame, FrameError, FrameKind, IrdOrd, Parsed, HDR_LEN, IRD_ORD_LEN, MAX_FRAME_LEN, MAX_PD_SIW,
};
use super::{Negotiated, Rtr, RtrCaps, RtrMode};

/// Local MPA settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MpaConfig {
    /// Revision to use: 1 (RFC 5044) or 2 (RFC 6581, Enhanced with IRD/ORD).
    pub revision: u8,
    /// Ask for CRCs.
    pub crc: bool,
    /// Ask the peer to insert markers into what it sends us (our M bit).
    pub markers_rx: bool,
    /// Whether we insert markers when the peer asks for them.
    pub markers_tx_ok: bool,
    /// Inbound Read Requests we can hold.
    pub ird: u16,
    /// Outbound Reads we want to have outstanding.
    pub ord: u16,
    /// Request (initiator) or allow (responder) peer-to-peer mode.
    pub p2p: bool,
    /// RTR modes offered (initiator) or acceptable (responder).
    pub rtr: RtrCaps,
    /// Set siw's 0x0800 bit in our frame.
    pub large_fpdu: bool,
    /// Largest `pd_len` we send (IRD/ORD block included); at most 512.
    pub pd_limit: usize,
}

impl MpaConfig {
    /// Settings that interoperate with Linux siw: revision 2, Enhanced, IRD = ORD = 1,
    /// no CRC, no markers, no peer-to-peer, private data within siw's 256-byte cap.
    #[must_use]
    pub const fn siw_compatible() -> Self {
        MpaConfig {
            revision: 2,
            crc: false,
            markers_rx: false,
            markers_tx_ok: true,
            ird: 1,
            ord: 1,
            p2p: false,
            rtr: RtrCaps {
                write: true,
                read: true,
                send: false,
            },
            large_fpdu: false,
            pd_limit: MAX_PD_SIW,
        }
    }
}

/// Why start-up failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NegotiationError {
    /// The frame is malformed.
    Frame(FrameError),
    /// A Request arrived where a Reply was expected or vice versa.
    WrongKind,
    /// Unsupported revision, or a Reply not matching the revision we sent.
    Revision,
    /// Bytes arrived behind the Request before the Reply was sent.
    PipelinedData,
    /// The peer asked for markers and this side does not insert them.
    MarkersUnsupported,
    /// The peer's ORD exceeds our IRD.
    InsufficientIrd,
    /// No common peer-to-peer RTR mode (or a Read RTR without ORD).
    NoMatchingRtr,
    /// Called in the wrong state.
    State,
}

impl NegotiationError {
    /// The TERMINATE to send for this failure, if one is sent (siw sends one for a bad
    /// Reply key, insufficient IRD and a missing RTR mode; otherwise it just closes).
    #[must_use]
    pub const fn term_code(&self) -> Option<TermCode> {
        match self {
            NegotiationError::Frame(FrameError::BadKey) | NegotiationError::WrongKind => {
                Some(TermCode::LlpBadReqRep)
            }
            NegotiationError::InsufficientIrd => Some(TermCode::LlpInsufficientIrd),
            NegotiationError::NoMatchingRtr => Some(TermCode::LlpNoMatchingRtr),
            _ => None,
        }
    }
}

impl From<FrameError> for NegotiationError {
    fn from(e: FrameError) -> Self {
        NegotiationError::Frame(e)
    }
}

/// Accumulates one frame from arbitrary chunks.
#[derive(Debug, Clone)]
struct FrameBuf {
    buf: [u8; MAX_FRAME_LEN],
    have: usize,
}

impl FrameBuf {
    const fn new() -> Self {
        FrameBuf {
            buf: [0; MAX_FRAME_LEN],
            have: 0,
        }
    }

    /// Takes bytes from `input` until a frame is complete; returns bytes consumed and
    /// the frame length once complete.
    fn fill(&mut self, input: &[u8]) -> Result<(usize, Option<usize>), NegotiationError> {
        let mut used = 0usize;
        loop {
            let cur = self.buf.get(..self.have).unwrap_or(&[]);
            let need = match Frame::parse(cur)? {
                Parsed::Complete(_, len) => return Ok((used, Some(len))),
                Parsed::NeedMore(n) => n.min(MAX_FRAME_LEN),
            };
            let rest = input.get(used..).unwrap_or(&[]);
            let take = need.saturating_sub(self.have).min(rest.len());
            if take == 0 {
                return Ok((used, None));
            }
            let end = self.have.saturating_add(take);
            if let (Some(d), Some(s)) = (self.buf.get_mut(self.have..end), rest.get(..take)) {
                d.copy_from_slice(s);
            }
            self.have = end;
            used = used.saturating_add(take);
        }
    }

    fn frame(&self) -> Result<Frame<'_>, NegotiationError> {
        match Frame::parse(self.buf.get(..self.have).unwrap_or(&[]))? {
            Parsed::Complete(f, _) => Ok(f),
            Parsed::NeedMore(_) => Err(NegotiationError::State),
        }
    }

    /// Offset of the application private data inside the buffer.
    fn pd_range(&self) -> (u16, u16) {
        match self.frame() {
            Ok(f) => {
                let start = if f.ird_ord.is_some() {
                    HDR_LEN.saturating_add(IRD_ORD_LEN)
                } else {
                    HDR_LEN
                };
                (start as u16, f.private_data.len() as u16)
            }
            Err(_) => (0, 0),
        }
    }

    fn private_data(&self) -> &[u8] {
        self.frame().map(|f| f.private_data).unwrap_or(&[])
    }
}

fn pick_rtr(offered: RtrCaps, accepted: RtrCaps) -> Option<RtrMode> {
    if offered.write && accepted.write {
        Some(RtrMode::Write)
    } else if offered.read && accepted.read {
        Some(RtrMode::Read)
    } else if offered.send && accepted.send {
        Some(RtrMode::Send)
    } else {
        None
    }
}

fn caps_of(mode: RtrMode) -> RtrCaps {
    RtrCaps {
        write: mode == RtrMode::Write,
        read: mode == RtrMode::Read,
        send: mode == RtrMode::Send,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IState {
    Idle,
    WaitReply,
    Done,
    Failed,
}

/// What the Reply said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitiatorOutcome {
    /// The connection is accepted; enter full operation with these parameters.
    Accepted(Negotiated),
    /// The responder rejected (R bit); its private data is available.
    Rejected,
}

/// The MPA initiator (active side).
#[derive(Debug, Clone)]
pub struct Initiator {
    cfg: MpaConfig,
    state: IState,
    rx: FrameBuf,
}

impl Initiator {
    /// New initiator with local settings `cfg`.
    #[must_use]
    pub const fn new(cfg: MpaConfig) -> Self {
        Initiator {
            cfg,
            state: IState::Idle,
            rx: FrameBuf::new(),
        }
    }

    fn our_ird_ord(&self) -> Option<IrdOrd> {
        (self.cfg.revision >= 2).then_some(IrdOrd {
            ird: self.cfg.ird,
            ord: self.cfg.ord,
            p2p: self.cfg.p2p,
            rtr: if self.cfg.p2p {
                self.cfg.rtr
            } else {
                RtrCaps::default()
            },
        })
    }

    /// Writes the MPA Request into `out`; returns its length. Send it and nothing
    /// behind it until the Reply arrived.
    pub fn request(
        &mut self,
        private_data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, NegotiationError> {
        if self.state != IState::Idle {
            return Err(NegotiationError::State);
        }
        let f = Frame {
            kind: FrameKind::Request,
            markers: self.cfg.markers_rx,
            crc: self.cfg.crc,
            reject: false,
            large_fpdu: self.cfg.large_fpdu,
            other_bits: 0,
            revision: self.cfg.revision.min(2),
            ird_ord: self.our_ird_ord(),
            private_data,
        };
        let n = f.emit(out, self.cfg.pd_limit)?;
        self.state = IState::WaitReply;
        Ok(n)
    }

    /// The responder's private data (after the Reply arrived).
    #[must_use]
    pub fn peer_private_data(&self) -> &[u8] {
        self.rx.private_data()
    }

    /// Feeds received bytes; returns how many were consumed (the rest belongs to the
    /// receive framer) and the outcome once the Reply is complete.
    pub fn on_bytes(
        &mut self,
        input: &[u8],
    ) -> Result<(usize, Option<InitiatorOutcome>), NegotiationError> {
        if self.state != IState::WaitReply {
            return Err(NegotiationError::State);
        }
        let r = self.rx.fill(input).and_then(|(used, done)| match done {
            None => Ok((used, None)),
            Some(_) => self.evaluate().map(|o| (used, Some(o))),
        });
        match &r {
            Err(_) => self.state = IState::Failed,
            Ok((_, Some(_))) => self.state = IState::Done,
            Ok((_, None)) => {}
        }
        r
    }

    fn evaluate(&self) -> Result<InitiatorOutcome, NegotiationError> {
        let rep = self.rx.frame()?;
        if rep.kind != FrameKind::Reply {
            return Err(NegotiationError::WrongKind);
        }
        if rep.revision > 2 {
            return Err(NegotiationError::Revision);
        }
        if rep.reject {
            return Ok(InitiatorOutcome::Rejected);
        }
        let ours = self.our_ird_ord();
        if ours.is_some() != rep.ird_ord.is_some() || rep.revision > self.cfg.revision {
            return Err(NegotiationError::Revision);
        }
        if rep.markers && !self.cfg.markers_tx_ok {
            return Err(NegotiationError::MarkersUnsupported);
        }
        let crc = self.cfg.crc || rep.crc;
        let (ird, ord, rtr) = match (ours, rep.ird_ord) {
            (Some(ours), Some(theirs)) => {
                if theirs.ord > ours.ird {
                    return Err(NegotiationError::InsufficientIrd);
                }
                let ord = ours.ord.min(theirs.ird);
                let rtr = if ours.p2p {
                    let mode =
                        pick_rtr(theirs.rtr, ours.rtr).ok_or(NegotiationError::NoMatchingRtr)?;
                    if mode == RtrMode::Read && ord == 0 {
                        return Err(NegotiationError::NoMatchingRtr);
                    }
                    Rtr::Send(mode)
                } else {
                    Rtr::None
                };
                (theirs.ord, ord, rtr)
            }
            _ => (self.cfg.ird, self.cfg.ord, Rtr::None),
        };
        let (start, len) = self.rx.pd_range();
        Ok(InitiatorOutcome::Accepted(Negotiated {
            revision: rep.revision,
            crc_tx: crc,
            crc_rx: crc,
            markers_tx: rep.markers,
            markers_rx: self.cfg.markers_rx,
            ird,
            ord,
            rtr,
            peer_large_fpdu: rep.large_fpdu,
            private_data_start: start,
            private_data_len: len,
        }))
    }
}

/// Summary of a received MPA Request, for the accept/reject decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerRequest {
    /// Requested revision.
    pub revision: u8,
    /// The initiator wants us to insert markers.
    pub markers: bool,
    /// The initiator wants CRCs.
    pub crc: bool,
    /// The initiator's IRD/ORD block (Enhanced).
    pub ird_ord: Option<IrdOrd>,
    /// siw's 0x0800 bit.
    pub large_fpdu: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RState {
    WaitRequest,
    Decide,
    Done,
    Failed,
}

/// The MPA responder (passive side).
#[derive(Debug, Clone)]
pub struct Responder {
    cfg: MpaConfig,
    state: RState,
    rx: FrameBuf,
}

impl Responder {
    /// New responder with local settings `cfg`.
    #[must_use]
    pub const fn new(cfg: MpaConfig) -> Self {
        Responder {
            cfg,
            state: RState::WaitRequest,
            rx: FrameBuf::new(),
        }
    }

    /// The initiator's private data (after the Request arrived).
    #[must_use]
    pub fn peer_private_data(&self) -> &[u8] {
        self.rx.private_data()
    }

    /// Feeds received bytes. Returns the Request summary once complete. Any byte
    /// behind the Request is an error ([`NegotiationError::PipelinedData`]).
    pub fn on_bytes(
        &mut self,
        input: &[u8],
    ) -> Result<(usize, Option<PeerRequest>), NegotiationError> {
        let r = self.on_bytes_inner(input);
        if r.is_err() {
            self.state = RState::Failed;
        }
        r
    }

    fn on_bytes_inner(
        &mut self,
        input: &[u8],
    ) -> Result<(usize, Option<PeerRequest>), NegotiationError> {
        match self.state {
            RState::WaitRequest => {}
            RState::Decide if !input.is_empty() => return Err(NegotiationError::PipelinedData),
            _ => return Err(NegotiationError::State),
        }
        let (used, done) = self.rx.fill(input)?;
        if done.is_none() {
            return Ok((used, None));
        }
        if used < input.len() {
            return Err(NegotiationError::PipelinedData);
        }
        let req = self.rx.frame()?;
        if req.kind != FrameKind::Request {
            return Err(NegotiationError::WrongKind);
        }
        if req.revision > 2 {
            return Err(NegotiationError::Revision);
        }
        self.state = RState::Decide;
        Ok((
            used,
            Some(PeerRequest {
                revision: req.revision,
                markers: req.markers,
                crc: req.crc,
                ird_ord: req.ird_ord,
                large_fpdu: req.large_fpdu,
            }),
        ))
    }

    fn reply<'p>(&self, req: &Frame<'_>, private_data: &'p [u8]) -> Frame<'p> {
        Frame {
            kind: FrameKind::Reply,
            markers: self.cfg.markers_rx,
            crc: self.cfg.crc || req.crc,
            reject: false,
            large_fpdu: self.cfg.large_fpdu,
            other_bits: 0,
            revision: req.revision.min(self.cfg.revision),
            ird_ord: None,
            private_data,
        }
    }

    /// Accepts: writes the Reply into `out` and returns its length and the result.
    /// On `MarkersUnsupported` or `NoMatchingRtr` the caller should [`reject`](Self::reject).
    pub fn accept(
        &mut self,
        private_data: &[u8],
        out: &mut [u8],
    ) -> Result<(usize, Negotiated), NegotiationError> {
        if self.state != RState::Decide {
            return Err(NegotiationError::State);
        }
        let req = self.rx.frame()?;
        if req.markers && !self.cfg.markers_tx_ok {
            return Err(NegotiationError::MarkersUnsupported);
        }
        let mut rep = self.reply(&req, private_data);
        let (ird, ord, rtr) = match req.ird_ord {
            Some(theirs) if self.cfg.revision >= 2 => {
                let mut ird = self.cfg.ird.min(theirs.ord);
                let ord = self.cfg.ord.min(theirs.ird);
                let mode = if theirs.p2p && self.cfg.p2p {
                    let none = !(theirs.rtr.write || theirs.rtr.read || theirs.rtr.send);
                    let m = if none && self.cfg.rtr.write {
                        Some(RtrMode::Write)
                    } else {
                        pick_rtr(theirs.rtr, self.cfg.rtr)
                    };
                    let m = m.ok_or(NegotiationError::NoMatchingRtr)?;
                    if m == RtrMode::Read {
                        if self.cfg.ird == 0 {
                            return Err(NegotiationError::NoMatchingRtr);
                        }
                        ird = ird.max(1);
                    }
                    Some(m)
                } else {
                    None
                };
                rep.revision = 2;
                rep.ird_ord = Some(IrdOrd {
                    ird,
                    ord,
                    p2p: mode.is_some(),
                    rtr: mode.map(caps_of).unwrap_or_default(),
                });
                (ird, ord, mode.map_or(Rtr::None, Rtr::Await))
            }
            _ => (self.cfg.ird, self.cfg.ord, Rtr::None),
        };
        let n = rep.emit(out, self.cfg.pd_limit)?;
        let crc = rep.crc;
        let (start, len) = self.rx.pd_range();
        self.state = RState::Done;
        Ok((
            n,
            Negotiated {
                revision: rep.revision,
                crc_tx: crc,
                crc_rx: crc,
                markers_tx: req.markers,
                markers_rx: self.cfg.markers_rx,
                ird,
                ord,
                rtr,
                peer_large_fpdu: req.large_fpdu,
                private_data_start: start,
                private_data_len: len,
            },
        ))
    }

    /// Rejects: writes a Reply with R set (and our private data) into `out`.
    pub fn reject(
        &mut self,
        private_data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, NegotiationError> {
        if self.state != RState::Decide {
            return Err(NegotiationError::State);
        }
        let req = self.rx.frame()?;
        let mut rep = self.reply(&req, private_data);
        rep.reject = true;
        rep.markers = false;
        if req.ird_ord.is_some() && self.cfg.revision >= 2 {
            rep.revision = 2;
            rep.ird_ord = Some(IrdOrd::default());
        }
        let n = rep.emit(out, self.cfg.pd_limit)?;
        self.state = RState::Done;
        Ok(n)
    }
}
