// SPDX-License-Identifier: GPL-2.0
//! The QP's transmit path: work requests segmented into FPDUs, header bytes
//! and payload sent straight from the mapped source pages, the CRC computed
//! over what is sent; Read Responses and TERMINATEs.

use super::*;
use crate::{
    proto::{
        ddp::TxQueues,
        mpa::{RtrMode, tx::{TxFramer, TxStep}},
        rdmap::{
            engine::{OrqEntry, read_source_terminate},
            ReadRequest,
            SendOp,
            StagError,
            Terminate,
            tx::{OutboundMessage, WorkRequest},
        },
    },
    sys::{crc::KernelCrc32c, socket::TcpSocket},
    uapi::*,
    verbs::{limits, mr::Need, stats},
};
use core::sync::atomic::Ordering;
use kernel::{
    prelude::*,
    sync::Arc,
};

/// Why a Read Response could not be sent.
pub(super) enum ReadResponseError {
    /// The source failed its check: this TERMINATE ends the QP.
    Source(Terminate),
    /// The socket failed (the peer is gone).
    Socket(Error),
}

/// Transmit state.
pub(super) struct TxState {
    pub(super) framer: TxFramer,
    pub(super) queues: TxQueues,
    /// Largest ULPDU to send.
    pub(super) max_ulpdu: u16,
    pub(super) active: bool,
}

impl Qp {
    pub(super) fn tx_run(self: Arc<Self>) {
        let Some(sock) = self.socket() else { return };
        let mut tx = self.tx.lock();
        if !tx.active {
            return;
        }
        loop {
            // A TERMINATE to send ends the connection.
            let (life, term, await_rtr, rtr) = {
                let mut c = self.conn.lock();
                (c.life, c.term_to_send.take(), c.await_rtr, c.send_rtr.take())
            };
            if let Some(t) = term {
                let _ = self.send_message(&mut tx, &sock, WorkRequest::Terminate(t), Payload::None);
                tx.active = false;
                drop(tx);
                self.close_socket(false);
                self.report_pending();
                return;
            }
            if life.is_over() {
                tx.active = false;
                drop(tx);
                self.close_socket(false);
                self.report_pending();
                return;
            }
            if !life.is_connected() {
                return;
            }
            if let Some(mode) = rtr {
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
                if let Err(e) = self.send_message(&mut tx, &sock, wr, Payload::None) {
                    drop(tx);
                    return self.tx_failed(e);
                }
                continue;
            }
            if await_rtr {
                return;
            }
            // Read Responses first: the peer is waiting for them.
            let inbound = self.conn.lock().irq.pop_value();
            if let Some(ir) = inbound {
                match self.send_read_response(&mut tx, &sock, ir) {
                    Ok(()) => {}
                    Err(ReadResponseError::Source(t)) => {
                        drop(tx);
                        self.fail(Failure::Detected(t));
                        return;
                    }
                    // Like any other send: the connection is gone.
                    Err(ReadResponseError::Socket(e)) => {
                        drop(tx);
                        return self.tx_failed(e);
                    }
                }
                continue;
            }
            match self.send_next(&mut tx, &sock) {
                Ok(true) => continue,
                Ok(false) => return,
                Err(e) => {
                    drop(tx);
                    return self.tx_failed(e);
                }
            }
        }
    }

    pub(super) fn tx_failed(self: &Arc<Self>, e: Error) {
        // The socket failed under us: the connection is gone.
        pr_info!("QP {}: transmit failed ({:?}): disconnected\n", self.handle, e);
        self.disconnected();
    }

    /// Transmits the next posted send request; `Ok(false)` when there is none
    /// (or it must wait: ORD full or a fence).
    pub(super) fn send_next(self: &Arc<Self>, tx: &mut TxState, sock: &TcpSocket) -> Result<bool> {
        let (slot, wqe, sges) = {
            let sq = self.sq.lock();
            let (Some(slot), Some(&w)) = (sq.wqes.slot(sq.sent), sq.wqes.get(sq.sent)) else {
                return Ok(false);
            };
            // A fence waits for every earlier Read to complete.
            if w.fence && (0..sq.sent).any(|k| sq.wqes.get(k).is_some_and(|e| e.state == WqeState::Reading)) {
                return Ok(false);
            }
            let mut sges: [Sge; limits::MAX_SGE] = Default::default();
            for (i, s) in sq.sges.of(slot)[..w.nsge].iter().enumerate() {
                sges[i] = s.clone();
            }
            (slot, w, sges)
        };
        let (wr, payload) = match wqe.opcode as u32 {
            SRNIC_WR_RDMA_READ => {
                // At most one sink SGE (post_send collapsed contiguous ones); none
                // for a zero-length Read.
                let sink = sges.first().cloned().unwrap_or_default();
                let sink_stag = sink.mr.as_ref().map(|m| m.stag).unwrap_or(0);
                let entry = OrqEntry {
                    sink_stag,
                    sink_to: sink.addr,
                    len: wqe.len,
                    cookie: slot as u64,
                };
                match self.rx.lock().engine.post_read(entry) {
                    Ok(()) => {}
                    Err(crate::proto::rdmap::engine::OrdError::Full) => return Ok(false),
                    Err(crate::proto::rdmap::engine::OrdError::NoReads) => {
                        self.finish_send(slot, SRNIC_WC_LOC_QP_OP_ERR);
                        return Ok(true);
                    }
                }
                if let Some(w) = self.sq.lock().wqes.at_mut(slot) {
                    w.state = WqeState::Reading;
                }
                (
                    WorkRequest::ReadRequest(ReadRequest {
                        sink_stag,
                        sink_to: sink.addr,
                        read_size: wqe.len,
                        src_stag: wqe.rkey,
                        src_to: wqe.remote_addr,
                    }),
                    Payload::None,
                )
            }
            SRNIC_WR_RDMA_WRITE => (
                WorkRequest::Write { stag: wqe.rkey, to: wqe.remote_addr, len: wqe.len },
                Payload::Sges(&sges[..wqe.nsge]),
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
                    Payload::Sges(&sges[..wqe.nsge]),
                )
            }
        };
        let payload = if wqe.inline { Payload::Inline(slot) } else { payload };
        self.sq.lock().mark_sent(slot);
        self.send_message(tx, sock, wr, payload)?;
        if wqe.opcode as u32 != SRNIC_WR_RDMA_READ {
            self.finish_send(slot, SRNIC_WC_SUCCESS);
        }
        Ok(true)
    }

    pub(super) fn finish_send(&self, slot: usize, status: u32) {
        {
            let mut sq = self.sq.lock();
            if let Some(w) = sq.wqes.at_mut(slot) {
                w.state = WqeState::Done(status);
            }
            sq.mark_sent(slot);
        }
        self.complete_sends();
    }

    /// Answers an inbound Read Request from the local source region.
    pub(super) fn send_read_response(
        self: &Arc<Self>,
        tx: &mut TxState,
        sock: &TcpSocket,
        ir: InboundRead,
    ) -> Result<(), ReadResponseError> {
        let req = ir.req;
        let src = if req.read_size == 0 {
            None
        } else {
            let mr = self.mrs.lookup(req.src_stag).ok_or(StagError::InvalidStag).and_then(|mr| {
                mr.check(self.pd_id(), req.src_to, u64::from(req.read_size), Need::RemoteRead)
                    .map(|()| mr)
            });
            match mr {
                Ok(mr) => Some(mr),
                Err(e) => return Err(ReadResponseError::Source(read_source_terminate(ir.msn, req, e))),
            }
        };
        let one;
        let payload = match &src {
            Some(mr) => {
                one = [Sge { mr: Some(mr.clone()), addr: req.src_to, len: req.read_size }];
                Payload::Sges(&one)
            }
            None => Payload::None,
        };
        let wr = WorkRequest::ReadResponse {
            sink_stag: req.sink_stag,
            sink_to: req.sink_to,
            len: req.read_size,
        };
        self.send_message(tx, sock, wr, payload).map_err(ReadResponseError::Socket)?;
        self.rx.lock().engine.read_response_sent();
        Ok(())
    }

    /// Segments and sends one message.
    pub(super) fn send_message(&self, tx: &mut TxState, sock: &TcpSocket, wr: WorkRequest, payload: Payload<'_>) -> Result {
        let crc = KernelCrc32c;
        let mut msg = OutboundMessage::new(wr, &mut tx.queues);
        let max = tx.max_ulpdu;
        let mut hdr = [0u8; crate::proto::rdmap::MAX_HDR_LEN];
        while let Some(seg) = msg.next_segment(max) {
            let hlen = seg.header.emit(&mut hdr).ok_or(EINVAL)?;
            let last_seg = seg.payload_offset + u32::from(seg.payload_len) >= wr.payload_len();
            let crc_on = tx.framer.crc_on();
            let mut fpdu = tx.framer.fpdu(&hdr[..hlen], seg.payload_len).map_err(|_| EINVAL)?;
            loop {
                match fpdu.next(&crc).map_err(|_| EINVAL)? {
                    TxStep::Head(c) | TxStep::Marker(c) => sock.send(&[c.as_slice()], true)?,
                    TxStep::Payload { offset, len } => {
                        let at = seg.payload_offset as usize + usize::from(offset);
                        self.for_payload(&payload, at, usize::from(len), |piece| {
                            if crc_on {
                                fpdu.feed_payload(&crc, piece).map_err(|_| EINVAL)?;
                            }
                            sock.send(&[piece], true)
                        })?;
                        stats::TX_BYTES.fetch_add(u64::from(len), Ordering::Relaxed);
                        self.tx_bytes.fetch_add(u64::from(len), Ordering::Relaxed);
                    }
                    // The FPDU's last bytes end a TCP record (see `establish`).
                    TxStep::Trailer(c) => sock.send_record(&[c.as_slice()], !last_seg)?,
                    TxStep::Done => break,
                }
            }
            stats::TX_FPDUS.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Calls `f` with the pieces of message bytes `[at, at + len)` of `payload`.
    pub(super) fn for_payload(
        &self,
        payload: &Payload<'_>,
        at: usize,
        len: usize,
        mut f: impl FnMut(&[u8]) -> Result,
    ) -> Result {
        match payload {
            Payload::None => {
                if len == 0 {
                    Ok(())
                } else {
                    Err(EINVAL)
                }
            }
            Payload::Inline(slot) => {
                let sq = self.sq.lock();
                let base = slot * self.caps.max_inline as usize;
                let data = sq.inline.get(base + at..base + at + len).ok_or(EINVAL)?;
                // Copied out of the lock: the slot is ours until it completes.
                let mut tmp = [0u8; limits::MAX_INLINE];
                tmp[..len].copy_from_slice(data);
                drop(sq);
                f(&tmp[..len])
            }
            Payload::Sges(sges) => {
                let mut pos = 0usize;
                let mut cur = at;
                let end = at + len;
                for s in sges.iter() {
                    let s_end = pos + s.len as usize;
                    if cur < s_end && cur < end {
                        let n = (s_end - cur).min(end - cur);
                        let mr = s.mr.as_ref().ok_or(EINVAL)?;
                        mr.read_pieces(s.addr + (cur - pos) as u64, n, &mut f)?;
                        cur += n;
                    }
                    pos = s_end;
                }
                if cur == end {
                    Ok(())
                } else {
                    Err(EINVAL)
                }
            }
        }
    }
}

/// Where a message's payload comes from.
pub(super) enum Payload<'a> {
    None,
    Inline(usize),
    Sges(&'a [Sge]),
}
