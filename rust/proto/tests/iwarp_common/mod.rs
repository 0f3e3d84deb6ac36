// SPDX-License-Identifier: GPL-2.0
//! Shared helpers for the iWARP integration tests: a toy verbs layer (memory regions
//! and receive buffers in Vecs) and a peer that drives the transmit framer, the
//! receive framer and the RDMAP receive engine over an in-memory byte stream.
#![allow(dead_code)]

use std::collections::VecDeque;

use srnic_proto::crc::SoftCrc32c;
use srnic_proto::ddp::{Placement, TxQueues};
use srnic_proto::mpa::rx::{RxEvent, RxFramer};
use srnic_proto::mpa::tx::{TxFramer, TxStep};
use srnic_proto::mpa::Negotiated;
use srnic_proto::rdmap::engine::{Access, Completion, EngineError, RecvEngine, RxAction, Verbs};
use srnic_proto::rdmap::reads::{OrdError, OrqEntry, Reads};
use srnic_proto::rdmap::tx::{OutboundMessage, WorkRequest};
use srnic_proto::rdmap::{ReadRequest, StagError, TermCode, Terminate};

/// A registered memory region.
#[derive(Debug, Clone)]
pub struct Region {
    pub stag: u32,
    pub base: u64,
    pub data: Vec<u8>,
    pub remote_write: bool,
    pub remote_read: bool,
    pub pd: u32,
}

/// The toy verbs layer.
#[derive(Debug)]
pub struct ToyVerbs {
    pub regions: Vec<Region>,
    pub recvs: VecDeque<Vec<u8>>,
    pub pd: u32,
    pub reads: Reads<[OrqEntry; 8]>,
}

impl ToyVerbs {
    pub fn new(ird: u16, ord: u16) -> Self {
        ToyVerbs {
            regions: Vec::new(),
            recvs: VecDeque::new(),
            pd: 0,
            reads: Reads::new(ird, ord, [OrqEntry::default(); 8]),
        }
    }

    pub fn region(&self, stag: u32) -> Option<&Region> {
        self.regions.iter().find(|r| r.stag == stag)
    }
    pub fn region_mut(&mut self, stag: u32) -> Option<&mut Region> {
        self.regions.iter_mut().find(|r| r.stag == stag)
    }
}

impl Verbs for ToyVerbs {
    fn check_stag(
        &mut self,
        stag: u32,
        to: u64,
        len: u32,
        access: Access,
    ) -> Result<(), StagError> {
        let pd = self.pd;
        let r = self.region(stag).ok_or(StagError::InvalidStag)?;
        if r.pd != pd {
            return Err(StagError::PdMismatch);
        }
        let ok = match access {
            Access::RemoteWrite => r.remote_write,
            Access::RemoteRead => r.remote_read,
        };
        if !ok {
            return Err(StagError::AccessRights);
        }
        let end = to.checked_add(u64::from(len)).ok_or(StagError::ToWrap)?;
        if to < r.base || end > r.base + r.data.len() as u64 {
            return Err(StagError::BaseBounds);
        }
        Ok(())
    }

    fn recv_buffer_len(&mut self) -> Option<u32> {
        self.recvs.front().map(|b| b.len() as u32)
    }

    type Orq = [OrqEntry; 8];

    fn reads<R>(&mut self, f: impl FnOnce(&mut Reads<Self::Orq>) -> R) -> R {
        f(&mut self.reads)
    }
}

/// What a peer observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A receive completed with these bytes.
    Recv {
        data: Vec<u8>,
        invalidate: Option<u32>,
        solicited: bool,
    },
    ReadDone {
        cookie: u64,
        len: u32,
    },
    Rtr,
    Terminated(Terminate),
    /// We detected an error and sent this TERMINATE.
    SentTerminate(TermCode),
}

/// One iWARP endpoint in full operation.
pub struct Peer {
    pub tx: TxFramer,
    pub rx: RxFramer,
    pub engine: RecvEngine,
    pub q: TxQueues,
    pub verbs: ToyVerbs,
    pub out: Vec<u8>,
    pub mulpdu: u16,
    pub seen: Vec<Seen>,
    cur: RxAction,
    recv_fill: Vec<u8>,
}

impl Peer {
    pub fn new(n: &Negotiated, mulpdu: u16) -> Self {
        Peer {
            tx: TxFramer::new(n.crc_tx, n.markers_tx),
            rx: RxFramer::new(n.crc_rx, n.markers_rx),
            engine: RecvEngine::new(),
            q: TxQueues::new(),
            verbs: ToyVerbs::new(n.ird, n.ord),
            out: Vec::new(),
            mulpdu,
            seen: Vec::new(),
            cur: RxAction::Discard,
            recv_fill: Vec::new(),
        }
    }

    /// Frames a whole message into `self.out`, payload taken from `payload`.
    pub fn send(&mut self, wr: WorkRequest, payload: &[u8]) {
        let mut m = OutboundMessage::new(wr, &mut self.q);
        send_segments(&mut self.tx, &mut m, payload, self.mulpdu, &mut self.out);
    }

    /// Sends a TERMINATE.
    pub fn send_terminate(&mut self, t: Terminate) {
        self.send(WorkRequest::Terminate(t), &[]);
    }

    /// Posts an RDMA Read and sends its request.
    pub fn read(&mut self, req: ReadRequest, cookie: u64) -> Result<(), OrdError> {
        self.verbs.reads.post_read(OrqEntry {
            sink_stag: req.sink_stag,
            sink_to: req.sink_to,
            len: req.read_size,
            cookie,
        })?;
        self.send(WorkRequest::ReadRequest(req), &[]);
        Ok(())
    }

    /// Feeds bytes from the peer in chunks of the given sizes (cycled).
    pub fn receive(&mut self, bytes: &[u8], chunks: &[usize]) {
        let mut pos = 0;
        let mut ci = 0;
        while pos < bytes.len() {
            let size = chunks
                .get(ci % chunks.len().max(1))
                .copied()
                .unwrap_or(bytes.len())
                .max(1);
            ci += 1;
            let end = (pos + size).min(bytes.len());
            if !self.feed_chunk(&bytes[pos..end]) {
                return;
            }
            pos = end;
        }
    }

    /// Returns false once the connection failed.
    fn feed_chunk(&mut self, chunk: &[u8]) -> bool {
        let mut off = 0;
        while off < chunk.len() {
            match self.rx.feed(&SoftCrc32c, &chunk[off..]) {
                Err(code) => {
                    self.fail(code, Terminate::new(code, None));
                    return false;
                }
                Ok((n, ev)) => {
                    off += n;
                    match ev {
                        None => {}
                        Some(RxEvent::Header {
                            header,
                            ulpdu_len,
                            payload_len,
                        }) => {
                            match self.engine.on_header(
                                &mut self.verbs,
                                &header,
                                ulpdu_len,
                                u32::from(payload_len),
                            ) {
                                Ok(a) => self.cur = a,
                                Err(e) => {
                                    self.engine_err(e);
                                    return false;
                                }
                            }
                        }
                        Some(RxEvent::Payload {
                            data, seg_offset, ..
                        }) => self.place(data, seg_offset),
                        Some(RxEvent::End) => match self.engine.on_end(&mut self.verbs) {
                            Ok(Some(c)) => self.complete(c),
                            Ok(None) => {}
                            Err(e) => {
                                self.engine_err(e);
                                return false;
                            }
                        },
                    }
                }
            }
        }
        true
    }

    fn engine_err(&mut self, e: EngineError) {
        if let EngineError::Terminate(code, t) = e {
            self.fail(code, t);
        }
    }

    fn fail(&mut self, code: TermCode, t: Terminate) {
        self.seen.push(Seen::SentTerminate(code));
        self.send_terminate(t);
    }

    fn place(&mut self, data: &[u8], seg_offset: u16) {
        match self.cur {
            RxAction::Discard => {}
            RxAction::Place(Placement::Tagged { stag, to, .. }) => {
                let r = self.verbs.region_mut(stag).expect("checked region");
                let start = (to - r.base) as usize + usize::from(seg_offset);
                r.data[start..start + data.len()].copy_from_slice(data);
            }
            RxAction::Place(Placement::Untagged { mo, .. }) => {
                let start = mo as usize + usize::from(seg_offset);
                if self.recv_fill.len() < start + data.len() {
                    self.recv_fill.resize(start + data.len(), 0);
                }
                self.recv_fill[start..start + data.len()].copy_from_slice(data);
            }
        }
    }

    fn complete(&mut self, c: Completion) {
        match c {
            Completion::Recv {
                len,
                invalidate,
                solicited,
                ..
            } => {
                self.verbs.recvs.pop_front().expect("a posted buffer");
                let mut data = std::mem::take(&mut self.recv_fill);
                data.resize(len as usize, 0);
                self.seen.push(Seen::Recv {
                    data,
                    invalidate,
                    solicited,
                });
            }
            Completion::ReadDone { cookie, len } => self.seen.push(Seen::ReadDone { cookie, len }),
            Completion::ReadRequest { msn, req } => {
                // The slot is free once the response starts (the peer may ask
                // again as soon as it has the response).
                self.verbs.reads.read_response_started();
                // Produce the Read Response from our memory (re-checking the source).
                match self.verbs.check_stag(
                    req.src_stag,
                    req.src_to,
                    req.read_size,
                    Access::RemoteRead,
                ) {
                    Ok(()) | Err(_) if req.read_size == 0 => {
                        self.send(
                            WorkRequest::ReadResponse {
                                sink_stag: req.sink_stag,
                                sink_to: req.sink_to,
                                len: 0,
                            },
                            &[],
                        );
                    }
                    Ok(()) => {
                        let r = self.verbs.region(req.src_stag).unwrap();
                        let s = (req.src_to - r.base) as usize;
                        let data = r.data[s..s + req.read_size as usize].to_vec();
                        self.send(
                            WorkRequest::ReadResponse {
                                sink_stag: req.sink_stag,
                                sink_to: req.sink_to,
                                len: req.read_size,
                            },
                            &data,
                        );
                    }
                    Err(e) => {
                        let t = srnic_proto::rdmap::engine::read_source_terminate(msn, req, e);
                        self.fail(TermCode::ReadSource(e), t);
                    }
                }
            }
            Completion::Rtr => self.seen.push(Seen::Rtr),
            Completion::Terminated(t) => self.seen.push(Seen::Terminated(t)),
        }
    }
}

/// Segments and frames a message, appending the wire bytes to `out`. Payload is sent
/// through the zero-copy steps (copied into `out` here, as a socket would).
pub fn send_segments(
    tx: &mut TxFramer,
    m: &mut OutboundMessage,
    payload: &[u8],
    mulpdu: u16,
    out: &mut Vec<u8>,
) {
    let mut hdr = [0u8; srnic_proto::rdmap::MAX_HDR_LEN];
    while let Some(seg) = m.next_segment(mulpdu) {
        let hlen = seg.header.emit(&mut hdr).expect("header fits");
        let base = seg.payload_offset as usize;
        let mut f = tx.fpdu(&hdr[..hlen], seg.payload_len).expect("fpdu");
        loop {
            match f.next(&SoftCrc32c).expect("step") {
                TxStep::Done => break,
                TxStep::Head(c) | TxStep::Marker(c) | TxStep::Trailer(c) => {
                    out.extend_from_slice(c.as_slice())
                }
                TxStep::Payload { offset, len } => {
                    let s = base + usize::from(offset);
                    let piece = &payload[s..s + usize::from(len)];
                    out.extend_from_slice(piece);
                    f.feed_payload(&SoftCrc32c, piece).expect("feed");
                }
            }
        }
    }
}
