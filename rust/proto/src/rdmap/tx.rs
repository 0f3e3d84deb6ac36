// SPDX-License-Identifier: GPL-2.0
//! Outbound RDMAP messages: a work request becomes a sequence of DDP segments, each a
//! [`Header`] plus a payload range inside the message (RFC 5040 section 5, RFC 5041
//! section 5.1). No payload is touched: the caller sends the range from its own pages.

use super::super::ddp::{self, Segmenter, TxQueues};
use super::{Body, Header, ReadRequest, SendOp, Terminate};

/// One RDMAP message to transmit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkRequest {
    /// A Send variant carrying `len` payload bytes.
    Send {
        /// Which Send.
        op: SendOp,
        /// STag the receiver invalidates (invalidate variants only).
        inval_stag: u32,
        /// Payload length.
        len: u32,
    },
    /// RDMA Write of `len` bytes to the peer's buffer `stag` at `to`.
    Write {
        /// Sink STag.
        stag: u32,
        /// Sink tagged offset.
        to: u64,
        /// Payload length.
        len: u32,
    },
    /// RDMA Read Request (no payload).
    ReadRequest(ReadRequest),
    /// RDMA Read Response answering a Read Request.
    ReadResponse {
        /// Sink STag from the request.
        sink_stag: u32,
        /// Sink tagged offset from the request.
        sink_to: u64,
        /// Payload length (the request's read size).
        len: u32,
    },
    /// TERMINATE (no payload).
    Terminate(Terminate),
}

impl WorkRequest {
    /// Payload bytes the message carries.
    #[must_use]
    pub const fn payload_len(&self) -> u32 {
        match self {
            WorkRequest::Send { len, .. }
            | WorkRequest::Write { len, .. }
            | WorkRequest::ReadResponse { len, .. } => *len,
            WorkRequest::ReadRequest(_) | WorkRequest::Terminate(_) => 0,
        }
    }

    /// Untagged queue the message uses, if any.
    #[must_use]
    pub const fn queue(&self) -> Option<u32> {
        match self {
            WorkRequest::Send { .. } => Some(ddp::QN_SEND),
            WorkRequest::ReadRequest(_) => Some(ddp::QN_READ_REQUEST),
            WorkRequest::Terminate(_) => Some(ddp::QN_TERMINATE),
            _ => None,
        }
    }
}

/// One segment to send: header plus payload range inside the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxSegment {
    /// The segment's DDP/RDMAP header.
    pub header: Header,
    /// Offset of the segment's payload inside the message.
    pub payload_offset: u32,
    /// Payload length of the segment.
    pub payload_len: u16,
}

/// A message being segmented.
#[derive(Debug, Clone, Copy)]
pub struct OutboundMessage {
    wr: WorkRequest,
    msn: u32,
    seg: Segmenter,
}

impl OutboundMessage {
    /// Starts a message; untagged messages take the next MSN of their queue from `q`.
    #[must_use]
    pub fn new(wr: WorkRequest, q: &mut TxQueues) -> Self {
        let msn = wr.queue().map_or(0, |qn| q.take(qn));
        OutboundMessage {
            wr,
            msn,
            seg: Segmenter::new(wr.payload_len()),
        }
    }

    /// The MSN assigned to this message (0 for tagged messages).
    #[must_use]
    pub const fn msn(&self) -> u32 {
        self.msn
    }

    /// Next segment, with header plus payload at most `max_ulpdu` bytes (the payload
    /// gets at least one byte per segment so progress is always made).
    pub fn next_segment(&mut self, max_ulpdu: u16) -> Option<TxSegment> {
        let hlen = self.header_for(0, false).buffer_len();
        let room = usize::from(max_ulpdu).saturating_sub(hlen).max(1);
        let room = u32::try_from(room)
            .unwrap_or(u32::MAX)
            .min(u32::from(u16::MAX));
        let r = self.seg.next_segment(room)?;
        let header = self.header_for(r.offset, r.last);
        Some(TxSegment {
            header,
            payload_offset: r.offset,
            payload_len: u16::try_from(r.len).unwrap_or(u16::MAX),
        })
    }

    fn header_for(&self, offset: u32, last: bool) -> Header {
        let msn = self.msn;
        let body = match self.wr {
            WorkRequest::Send { op, inval_stag, .. } => Body::Send {
                op,
                inval_stag: if op.invalidates() { inval_stag } else { 0 },
                msn,
                mo: offset,
            },
            WorkRequest::Write { stag, to, .. } => Body::Write {
                stag,
                to: to.wrapping_add(u64::from(offset)),
            },
            WorkRequest::ReadResponse {
                sink_stag, sink_to, ..
            } => Body::ReadResponse {
                stag: sink_stag,
                to: sink_to.wrapping_add(u64::from(offset)),
            },
            WorkRequest::ReadRequest(req) => Body::ReadRequest { msn, mo: 0, req },
            WorkRequest::Terminate(term) => Body::Terminate { msn, mo: 0, term },
        };
        Header { last, body }
    }
}
