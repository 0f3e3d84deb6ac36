// SPDX-License-Identifier: GPL-2.0
//! Per-QP RDMAP receive engine (RFC 5040 sections 5 and 7, RFC 5041 section 7).
//!
//! A pure state machine: the MPA receive framer hands it each parsed segment header
//! ([`RecvEngine::on_header`]), the caller places the payload as instructed, then
//! reports the segment's end after its CRC verified ([`RecvEngine::on_end`]), which
//! may yield a [`Completion`]. Memory checks and receive buffers come from the verbs
//! layer through the small [`Verbs`] trait. Any violation returns the exact
//! [`Terminate`] to send; the engine then stays in the error state.
//!
//! Read Responses are matched exactly against the outstanding-Read queue (ORQ),
//! and inbound Read Requests counted against IRD, in the connection's
//! [`Reads`], which the transmitter shares: the engine borrows them through
//! [`Verbs::reads`] only for the segments that need them.

use super::super::ddp::{Placement, RxSegment, RxStreams};
use super::reads::{OrqEntry, Reads};
use super::{Body, Header, ReadRequest, StagError, TermCode, Terminate, READ_REQUEST_HDR_LEN};

/// Access a tagged placement needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The peer writes into our buffer (RDMA Write).
    RemoteWrite,
    /// The peer reads from our buffer (source of a Read Response).
    RemoteRead,
}

/// What the engine needs from the verbs layer.
pub trait Verbs {
    /// Checks that `len` bytes at tagged offset `to` of `stag` may be accessed as
    /// `access` by this QP (valid STag, same PD, rights, bounds, no wrap).
    fn check_stag(&mut self, stag: u32, to: u64, len: u32, access: Access)
        -> Result<(), StagError>;

    /// Length of the receive buffer at the head of the receive queue, which the next
    /// Send message consumes; `None` if no receive is posted.
    fn recv_buffer_len(&mut self) -> Option<u32>;

    /// The storage of the connection's ORQ.
    type Orq: AsRef<[OrqEntry]> + AsMut<[OrqEntry]>;

    /// Calls `f` with the connection's Reads (held under their own lock where
    /// the transmitter shares them). Called only for Read Requests and Read
    /// Responses, once when the header is checked and once at the segment's end.
    fn reads<R>(&mut self, f: impl FnOnce(&mut Reads<Self::Orq>) -> R) -> R;
}

/// What to do with the payload of the segment whose header was just accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxAction {
    /// Copy the payload to this placement (message offset = placement offset + the
    /// framer's `seg_offset`).
    Place(Placement),
    /// The segment has no payload to place (zero length, or payload the protocol
    /// ignores such as bytes after a TERMINATE's attachment).
    Discard,
}

/// Something the verbs layer must complete or start, reported at a segment's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// A Send message arrived completely in the head receive buffer.
    Recv {
        /// Its MSN.
        msn: u32,
        /// Total length.
        len: u32,
        /// STag to invalidate (Send with Invalidate variants).
        invalidate: Option<u32>,
        /// Solicited Event flag.
        solicited: bool,
    },
    /// A local RDMA Read completed (the response arrived in full).
    ReadDone {
        /// Cookie from [`Reads::post_read`].
        cookie: u64,
        /// Bytes read.
        len: u32,
    },
    /// The peer asked for a Read Response; queue one (see [`WorkRequest::ReadResponse`]
    /// in `tx`) and call [`Reads::read_response_started`] when its transmission
    /// starts.
    ///
    /// [`WorkRequest::ReadResponse`]: super::tx::WorkRequest::ReadResponse
    ReadRequest {
        /// The request's MSN (needed to rebuild its header for a later TERMINATE).
        msn: u32,
        /// The request.
        req: ReadRequest,
    },
    /// The peer-to-peer "ready to receive" message arrived (zero-length Write or
    /// zero-length Send while an RTR was expected).
    Rtr,
    /// The peer sent TERMINATE; the connection is finished.
    Terminated(Terminate),
}

/// Why the engine refused a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineError {
    /// A protocol violation: send this TERMINATE, then close.
    Terminate(TermCode, Terminate),
    /// The engine already failed (or received TERMINATE); nothing more is accepted.
    Closed,
}

#[derive(Debug, Clone, Copy)]
struct Current {
    hdr: Header,
    seg: RxSegment,
    len: u32,
    rtr: bool,
}

/// The per-QP receive engine.
#[derive(Debug)]
pub struct RecvEngine {
    ddp: RxStreams,
    rresp_done: u32,
    recv_len: u32,
    expect_rtr: bool,
    cur: Option<Current>,
    closed: bool,
}

impl Default for RecvEngine {
    fn default() -> Self {
        Self::new()
    }
}

impl RecvEngine {
    /// New engine, before any segment.
    #[must_use]
    pub const fn new() -> Self {
        RecvEngine {
            ddp: RxStreams::new(),
            rresp_done: 0,
            recv_len: 0,
            expect_rtr: false,
            cur: None,
            closed: false,
        }
    }

    /// Responder in peer-to-peer mode: the first inbound message is the RTR; a
    /// zero-length Send then consumes no receive buffer.
    pub fn expect_rtr(&mut self) {
        self.expect_rtr = true;
    }

    /// Whether the engine has failed or received TERMINATE.
    #[must_use]
    pub const fn is_closed(&self) -> bool {
        self.closed
    }

    fn fail(&mut self, code: TermCode, hdr: &Header, ulpdu_len: u16) -> EngineError {
        self.closed = true;
        self.cur = None;
        EngineError::Terminate(code, Terminate::new(code, Some((hdr, ulpdu_len))))
    }

    /// A segment header arrived (already parsed by the framer); `payload_len` bytes of
    /// payload follow. Returns where to place them.
    pub fn on_header<V: Verbs>(
        &mut self,
        v: &mut V,
        hdr: &Header,
        ulpdu_len: u16,
        payload_len: u32,
    ) -> Result<RxAction, EngineError> {
        if self.closed {
            return Err(EngineError::Closed);
        }
        match self.check(v, hdr, payload_len) {
            Ok((action, cur)) => {
                self.cur = Some(cur);
                Ok(action)
            }
            Err(code) => Err(self.fail(code, hdr, ulpdu_len)),
        }
    }

    fn check<V: Verbs>(
        &mut self,
        v: &mut V,
        hdr: &Header,
        len: u32,
    ) -> Result<(RxAction, Current), TermCode> {
        let rtr_window = self.expect_rtr;
        self.expect_rtr = false;
        let seg = self.ddp.accept(&hdr.ddp(), hdr.last, len)?;
        let mut rtr = false;
        let action = match hdr.body {
            Body::Write { stag, to } => {
                if len == 0 {
                    // Zero-length WRITE (the peer-to-peer RTR) needs no memory check;
                    // it is reported only while an RTR is expected.
                    rtr = rtr_window && seg.first && hdr.last;
                    RxAction::Discard
                } else {
                    v.check_stag(stag, to, len, Access::RemoteWrite)
                        .map_err(TermCode::tagged)?;
                    RxAction::Place(seg.placement)
                }
            }
            Body::ReadResponse { stag, to } => {
                let e = v
                    .reads(|r| r.head())
                    .ok_or(TermCode::UnexpectedReadResponse)?;
                if seg.first {
                    self.rresp_done = 0;
                }
                if stag != e.sink_stag {
                    return Err(TermCode::TaggedInvalidStag);
                }
                let expect_to = e.sink_to.wrapping_add(u64::from(self.rresp_done));
                let end = self
                    .rresp_done
                    .checked_add(len)
                    .ok_or(TermCode::TaggedBaseBounds)?;
                if to != expect_to || end > e.len || (hdr.last && end != e.len) {
                    return Err(TermCode::TaggedBaseBounds);
                }
                self.rresp_done = end;
                if len == 0 {
                    RxAction::Discard
                } else {
                    RxAction::Place(seg.placement)
                }
            }
            Body::Send { mo, .. } => {
                if rtr_window && seg.first && hdr.last && len == 0 {
                    rtr = true;
                    RxAction::Discard
                } else {
                    if seg.first {
                        self.recv_len = v.recv_buffer_len().ok_or(TermCode::UntaggedNoBuffer)?;
                    }
                    let end = mo.checked_add(len).ok_or(TermCode::UntaggedInvalidMo)?;
                    if end > self.recv_len {
                        return Err(TermCode::UntaggedNoBuffer);
                    }
                    if len == 0 {
                        RxAction::Discard
                    } else {
                        RxAction::Place(seg.placement)
                    }
                }
            }
            Body::ReadRequest { req, .. } => {
                if !hdr.last || len != 0 {
                    return Err(TermCode::RdmapOpcode);
                }
                if v.reads(|r| r.ird_full()) {
                    return Err(TermCode::IrdExceeded);
                }
                if req.read_size != 0 {
                    v.check_stag(req.src_stag, req.src_to, req.read_size, Access::RemoteRead)
                        .map_err(TermCode::ReadSource)?;
                }
                RxAction::Discard
            }
            Body::Terminate { .. } => RxAction::Discard,
        };
        Ok((
            action,
            Current {
                hdr: *hdr,
                seg,
                len,
                rtr,
            },
        ))
    }

    /// The current segment ended and its CRC verified. Returns the completion, if the
    /// segment finished something.
    pub fn on_end<V: Verbs>(&mut self, v: &mut V) -> Result<Option<Completion>, EngineError> {
        if self.closed {
            return Err(EngineError::Closed);
        }
        let Some(cur) = self.cur.take() else {
            return Ok(None);
        };
        if cur.rtr {
            return Ok(Some(Completion::Rtr));
        }
        if !cur.seg.last {
            return Ok(None);
        }
        Ok(match cur.hdr.body {
            Body::Write { .. } => None,
            Body::ReadResponse { .. } => v.reads(Reads::pop).map(|e| Completion::ReadDone {
                cookie: e.cookie,
                len: e.len,
            }),
            Body::Send {
                op,
                inval_stag,
                msn,
                mo,
            } => Some(Completion::Recv {
                msn,
                len: mo.saturating_add(cur.len),
                invalidate: if op.invalidates() {
                    Some(inval_stag)
                } else {
                    None
                },
                solicited: op.solicited(),
            }),
            Body::ReadRequest { msn, req, .. } => {
                v.reads(Reads::read_request_received);
                Some(Completion::ReadRequest { msn, req })
            }
            Body::Terminate { term, .. } => {
                self.closed = true;
                Some(Completion::Terminated(term))
            }
        })
    }
}

/// The TERMINATE to send when a Read Response cannot be produced (the source STag
/// failed its check at transmit time): RDMAP/remote-protection with the Read Request
/// header rebuilt from `msn` and `req` attached.
#[must_use]
pub fn read_source_terminate(msn: u32, req: ReadRequest, err: StagError) -> Terminate {
    let hdr = Header {
        last: true,
        body: Body::ReadRequest { msn, mo: 0, req },
    };
    let ulpdu_len = u16::try_from(READ_REQUEST_HDR_LEN).unwrap_or(u16::MAX);
    Terminate::new(TermCode::ReadSource(err), Some((&hdr, ulpdu_len)))
}
