// SPDX-License-Identifier: GPL-2.0
//! The QP's transmit path: what to send next (TERMINATE, RTR, Read Responses,
//! the send queue), each message handed to [`Outbound`], which segments it
//! into FPDUs and sends them without ever waiting for the peer.

use super::*;
use super::outbound::{Finish, Framing, Outbound, Payload, Progress, Source, Staged};
use crate::{
    proto::{
        ddp::TxQueues,
        mpa::{RtrMode, tx::TxFramer},
        rdmap::{
            engine::read_source_terminate,
            reads::{OrdError, OrqEntry},
            ReadRequest,
            SendOp,
            StagError,
            Terminate,
            tx::WorkRequest,
        },
    },
    sys::{
        param,
        socket::TcpSocket,
        zcopy::{ZcNotice, ZcOwner},
    },
    uapi::*,
    verbs::{mr::Need, stats},
};
use core::sync::atomic::Ordering;
use kernel::{
    prelude::*,
    sync::Arc,
};

/// What the transmit run does when no message is under way.
enum Next {
    /// Send this TERMINATE (then close).
    Terminate(Terminate),
    /// The connection is over: close the socket.
    Close,
    /// Nothing may be sent yet (not connected, the RTR or a responder's
    /// hold outstanding): the event that ends the wait queues the work.
    Wait,
    /// Send the RTR message of peer-to-peer start-up.
    Rtr(RtrMode),
    /// Answer this inbound Read Request.
    ReadResponse(InboundRead),
    /// Start the next posted send request, if any.
    SendQueue,
}

/// Transmit state.
pub(super) struct TxState {
    pub(super) framer: TxFramer,
    pub(super) queues: TxQueues,
    /// Largest ULPDU to send.
    pub(super) max_ulpdu: u16,
    pub(super) active: bool,
    /// The message under way, if TCP has not taken all of it yet.
    pub(super) cur: Option<Outbound>,
    /// Its FPDU staged now, and the regions its payload comes from.
    pub(super) staged: Staged,
    pub(super) payload: Payload,
    /// The message under way goes zero-copy: the notice its buffers link
    /// to, and its request's sequence number.
    pub(super) zc: Option<(ZcNotice<Qp>, u32)>,
}

impl TxState {
    pub(super) fn new() -> Self {
        Self {
            framer: TxFramer::new(false, false),
            queues: TxQueues::new(),
            max_ulpdu: 0,
            active: false,
            cur: None,
            staged: Staged::new(),
            payload: Payload::new(),
            zc: None,
        }
    }

    /// Makes `m` the message under way (`payload` holds its regions), sent
    /// zero-copy with `zc`.
    fn begin(&mut self, m: Outbound, zc: Option<(ZcNotice<Qp>, u32)>) {
        self.staged.clear();
        self.cur = Some(m);
        self.zc = zc;
    }

    /// The message under way is sent or given up: its regions are released,
    /// and the sender's reference on its zero-copy notice (TCP keeps the
    /// pages it took referenced until it frees its buffers).
    pub(super) fn end(&mut self) {
        self.cur = None;
        self.payload.release();
        self.zc = None;
    }
}

impl Qp {
    /// One transmit run ([`Qp::transmit`]): sends what is due, in order (a
    /// TERMINATE, the RTR, Read Responses, then the send queue), until
    /// everything is sent, TCP's send buffer is full or `budget` FPDUs are
    /// sent. It never waits: the socket's write-space callback queues the
    /// transmit work. A peer that stops reading fails the QP by TCP's user
    /// timeout (see [`Qp::connection_lost`]). The budget
    /// (`limits::TX_FPDUS_PER_RUN`) then leaves the rest to the work: a
    /// peer that reads as fast as srnic sends must not keep a poster, or a
    /// shared worker (and, in a kernel without preemption, its CPU), for a
    /// whole 16 MiB message.
    pub(super) fn tx_run(self: Arc<Self>, budget: &mut usize) {
        let mut tx = self.tx.lock();
        let sock = match self.socket() {
            Some(s) if tx.active => s,
            // Closed: a message under way is given up (its regions released).
            _ => {
                tx.end();
                return;
            }
        };
        loop {
            if *budget == 0 {
                return;
            }
            if tx.cur.is_some() {
                match self.send_current(&mut tx, &sock, budget) {
                    Ok(Progress::Blocked) => return,
                    Ok(Progress::Yield) => continue,
                    Ok(Progress::Stopped) => tx.end(),
                    Ok(Progress::Revoked(ir)) => {
                        tx.end();
                        drop(tx);
                        let t = read_source_terminate(ir.msn, ir.req, StagError::InvalidStag);
                        self.fail(Failure::Detected(t));
                        return;
                    }
                    Ok(Progress::Sent(f)) => {
                        // A zero-copy request completes when TCP releases its
                        // pages: said before the sender's reference goes.
                        let zc = tx.zc.as_ref().map(|&(_, seq)| seq);
                        if let (Finish::Complete(slot), Some(seq)) = (f, zc) {
                            self.await_release(slot, seq);
                        }
                        tx.end();
                        match f {
                            Finish::Complete(_) if zc.is_some() => {}
                            Finish::Complete(slot) => self.finish_send(slot, SRNIC_WC_SUCCESS),
                            Finish::Terminate => {
                                tx.active = false;
                                drop(tx);
                                self.close_socket(false);
                                self.report_pending();
                                return;
                            }
                            Finish::ReadResponse(_) | Finish::ReadRequest | Finish::Rtr => {}
                        }
                    }
                    Err(e) => {
                        tx.end();
                        drop(tx);
                        return self.tx_failed(&sock, e);
                    }
                }
                continue;
            }
            // Nothing under way: what is next? Decided in one look at `conn`,
            // which also takes the oldest inbound Read Request when nothing
            // comes before it.
            let next = {
                let mut c = self.conn();
                let (term, rtr) = (c.term_to_send.take(), c.send_rtr.take());
                match (term, rtr) {
                    // A TERMINATE to send ends the connection.
                    (Some(t), _) => Next::Terminate(t),
                    _ if c.life.is_over() => Next::Close,
                    _ if !c.life.is_connected() => Next::Wait,
                    (None, Some(mode)) => Next::Rtr(mode),
                    _ if c.await_rtr || self.hold.on.load(Ordering::Acquire) => Next::Wait,
                    // Read Responses first: the peer is waiting for them.
                    _ => c.irq.pop_value().map_or(Next::SendQueue, Next::ReadResponse),
                }
            };
            match next {
                Next::Terminate(t) => {
                    let m = Outbound::new(WorkRequest::Terminate(t), &mut tx.queues, Source::None, Finish::Terminate);
                    tx.begin(m, None);
                    continue;
                }
                Next::Close => {
                    tx.active = false;
                    drop(tx);
                    self.close_socket(false);
                    self.report_pending();
                    return;
                }
                Next::Wait => return,
                Next::Rtr(mode) => {
                    let wr = match mode {
                        RtrMode::Read => WorkRequest::ReadRequest(ReadRequest {
                            sink_stag: 0,
                            sink_to: 0,
                            read_size: 0,
                            src_stag: 0,
                            src_to: 0,
                        }),
                        RtrMode::Send => WorkRequest::Send { op: SendOp::Send, inval_stag: 0, len: 0 },
                        RtrMode::Write => WorkRequest::Write { stag: 1, to: 0, len: 0 },
                    };
                    let m = Outbound::new(wr, &mut tx.queues, Source::None, Finish::Rtr);
                    tx.begin(m, None);
                    continue;
                }
                // The IRD slot is free from here on, before the response's
                // first byte is sent: the peer may send its next Read Request
                // as soon as it has this response, possibly before this work
                // is back from sending it.
                Next::ReadResponse(ir) => {
                    self.reads.lock().read_response_started();
                    match self.read_response(ir, &mut tx.payload) {
                        Ok((wr, source)) => {
                            let m = Outbound::new(wr, &mut tx.queues, source, Finish::ReadResponse(ir));
                            tx.begin(m, None);
                            continue;
                        }
                        Err(t) => {
                            drop(tx);
                            self.fail(Failure::Detected(t));
                            return;
                        }
                    }
                }
                Next::SendQueue => {}
            }
            if !self.start_next(&mut tx) {
                return;
            }
        }
    }

    /// Sends as much of the message under way as TCP takes.
    fn send_current(&self, tx: &mut TxState, sock: &TcpSocket, budget: &mut usize) -> Result<Progress> {
        let TxState { framer, max_ulpdu, cur, staged, payload, zc, .. } = tx;
        let Some(m) = cur.as_mut() else { return Ok(Progress::Stopped) };
        let mut fr = Framing { framer, max_ulpdu: *max_ulpdu, staged, payload };
        let finish = m.finish();
        let max_inline = self.caps.max_inline as usize;
        let inline = |slot: usize, at: usize, dst: &mut [u8]| -> Result {
            let sq = self.sq.lock();
            let from = slot.checked_mul(max_inline).and_then(|b| b.checked_add(at)).ok_or(EINVAL)?;
            dst.copy_from_slice(sq.inline.get(from..from + dst.len()).ok_or(EINVAL)?);
            Ok(())
        };
        // Between FPDUs, a message gives way to a TERMINATE or a closing
        // connection (its work request is flushed); the TERMINATE itself does not.
        // (A TERMINATE to send comes with ERROR: `state` tells without `conn`.)
        let stop = || !matches!(finish, Finish::Terminate) && self.state().is_over();
        let sent = |payload: usize, fpdus: usize, zerocopy: bool| {
            stats::TX_BYTES.fetch_add(payload as u64, Ordering::Relaxed);
            if zerocopy {
                stats::TX_ZCOPY_BYTES.fetch_add(payload as u64, Ordering::Relaxed);
            }
            stats::TX_FPDUS.fetch_add(fpdus as u64, Ordering::Relaxed);
            self.tx_fpdus.fetch_add(fpdus as u64, Ordering::Relaxed);
            self.tx_bytes.fetch_add(payload as u64, Ordering::Relaxed);
        };
        m.send(sock, &mut fr, zc.as_ref().map(|(z, _)| z.lend()), &inline, &stop, &sent, budget)
    }

    /// The socket failed under a send (with `e`): the connection is gone
    /// (the disconnect tracepoint shows the socket's error).
    pub(super) fn tx_failed(self: &Arc<Self>, sock: &TcpSocket, _e: Error) {
        self.connection_lost(sock);
    }

    /// Starts the next posted send request; `false` when there is none (or
    /// it must wait: ORD full or a fence).
    fn start_next(self: &Arc<Self>, tx: &mut TxState) -> bool {
        let (slot, wqe, (sink_stag, sink_to)) = {
            let mut sq = self.sq.lock();
            let (Some(slot), Some(&w)) = (sq.wqes.slot(sq.sent), sq.wqes.get(sq.sent)) else {
                return false;
            };
            // A fence waits for every earlier Read to complete.
            if w.fence && (0..sq.sent).any(|k| sq.wqes.get(k).is_some_and(|e| e.state == WqeState::Reading)) {
                sq.awaits_read = true;
                return false;
            }
            // A Read may find the ORD full: said before it looks (below), so
            // that a Read completing meanwhile queues this work again.
            sq.awaits_read = w.opcode as u32 == SRNIC_WR_RDMA_READ;
            let sges = sq.sges.of(slot).get(..w.nsge).unwrap_or(&[]);
            let sink = if w.opcode as u32 == SRNIC_WR_RDMA_READ {
                // At most one sink SGE (post_send collapsed contiguous ones);
                // none for a zero-length Read. The Read is sent once the ORD
                // has room for it (below).
                sges.first().map_or((0, 0), |s| (s.mr.as_ref().map_or(0, |m| m.stag), s.addr))
            } else {
                // The payload's regions, referenced until the message ends.
                for (d, s) in tx.payload.slots().iter_mut().zip(sges) {
                    *d = s.clone();
                }
                sq.mark_sent(slot);
                (0, 0)
            };
            (slot, w, sink)
        };
        let (wr, source, finish) = match wqe.opcode as u32 {
            SRNIC_WR_RDMA_READ => {
                let entry = OrqEntry {
                    sink_stag,
                    sink_to,
                    len: wqe.len,
                    cookie: slot as u64,
                };
                match self.reads.lock().post_read(entry) {
                    Ok(()) => {}
                    Err(OrdError::Full) => return false,
                    Err(OrdError::NoReads) => {
                        self.finish_send(slot, SRNIC_WC_LOC_QP_OP_ERR);
                        return true;
                    }
                }
                {
                    let mut sq = self.sq.lock();
                    if let Some(w) = sq.wqes.at_mut(slot) {
                        w.state = WqeState::Reading;
                    }
                    sq.mark_sent(slot);
                    sq.awaits_read = false;
                }
                (
                    WorkRequest::ReadRequest(ReadRequest {
                        sink_stag,
                        sink_to,
                        read_size: wqe.len,
                        src_stag: wqe.rkey,
                        src_to: wqe.remote_addr,
                    }),
                    Source::None,
                    Finish::ReadRequest,
                )
            }
            SRNIC_WR_RDMA_WRITE => (
                WorkRequest::Write { stag: wqe.rkey, to: wqe.remote_addr, len: wqe.len },
                Source::Sges(wqe.nsge),
                Finish::Complete(slot),
            ),
            op => {
                let sop = match op {
                    SRNIC_WR_SEND_WITH_INV => SendOp::SendInvalidate,
                    SRNIC_WR_SEND_WITH_SE => SendOp::SendSe,
                    SRNIC_WR_SEND_WITH_SE_INV => SendOp::SendSeInvalidate,
                    _ => SendOp::Send,
                };
                (
                    WorkRequest::Send { op: sop, inval_stag: wqe.inv_stag, len: wqe.len },
                    Source::Sges(wqe.nsge),
                    Finish::Complete(slot),
                )
            }
        };
        let source = if wqe.inline { Source::Inline(slot) } else { source };
        let zc = match source {
            Source::Sges(_) if goes_zerocopy(&wqe, tx.framer.markers_on()) => {
                ZcNotice::new(self, (slot as u64) << 32 | u64::from(wqe.seq)).map(|n| (n, wqe.seq))
            }
            _ => None,
        };
        let m = Outbound::new(wr, &mut tx.queues, source, finish);
        tx.begin(m, zc);
        true
    }

    /// The zero-copy request in `slot` (sequence number `seq`: not one
    /// posted there after a flush) went to TCP whole: it completes when TCP
    /// releases its pages ([`Qp::released`]).
    fn await_release(&self, slot: usize, seq: u32) {
        let mut sq = self.sq.lock();
        if let Some(w) = sq.wqes.at_mut(slot).filter(|w| w.seq == seq) {
            w.state = WqeState::Zerocopy;
        }
    }

    pub(super) fn finish_send(&self, slot: usize, status: u32) {
        let due = {
            let mut sq = self.sq.lock();
            if let Some(w) = sq.wqes.at_mut(slot) {
                w.state = WqeState::Done(status);
            }
            sq.mark_sent(slot);
            self.complete_sends_locked(&mut sq)
        };
        self.send_cq.notify(due);
    }

    /// The Read Response that answers an inbound Read Request from the local
    /// source region (put into `payload`), or the TERMINATE that refuses it.
    fn read_response(&self, ir: InboundRead, payload: &mut Payload) -> Result<(WorkRequest, Source), Terminate> {
        let req = ir.req;
        let source = if req.read_size == 0 {
            Source::None
        } else {
            let mr = self.mrs.lookup(req.src_stag).ok_or(StagError::InvalidStag).and_then(|mr| {
                mr.check(self.pd_id(), req.src_to, u64::from(req.read_size), Need::RemoteRead)
                    .map(|()| mr)
            });
            match mr {
                Ok(mr) => {
                    payload.slots()[0] = Sge { mr: Some(mr), addr: req.src_to, len: req.read_size };
                    Source::Sges(1)
                }
                Err(e) => return Err(read_source_terminate(ir.msn, req, e)),
            }
        };
        let wr = WorkRequest::ReadResponse {
            sink_stag: req.sink_stag,
            sink_to: req.sink_to,
            len: req.read_size,
        };
        Ok((wr, source))
    }
}

/// Whether a SEND or WRITE goes zero-copy: at least `zcopy_min` bytes (see
/// `sys::param`), without markers (which cut its payload into pieces of 512
/// bytes, each a fragment of TCP's buffers).
fn goes_zerocopy(wqe: &SendWqe, markers: bool) -> bool {
    let min = param::zcopy_min();
    min != 0 && wqe.len >= min && !markers
}

impl ZcOwner for Qp {
    /// TCP released the pages of the zero-copy request that `cookie` names
    /// (its slot and sequence number): it completes, with every finished
    /// request behind it. A request flushed meanwhile (its connection ended)
    /// completed then; its slot may hold a later request, which the
    /// sequence number tells apart.
    fn released(this: Arc<Self>, cookie: u64) {
        let (slot, seq) = ((cookie >> 32) as usize, cookie as u32);
        let due = {
            let mut sq = this.sq.lock();
            match sq.wqes.at_mut(slot) {
                Some(w) if w.seq == seq && w.state == WqeState::Zerocopy => {
                    w.state = WqeState::Done(SRNIC_WC_SUCCESS);
                    this.complete_sends_locked(&mut sq)
                }
                _ => Due::default(),
            }
        };
        this.send_cq.notify(due);
    }
}
