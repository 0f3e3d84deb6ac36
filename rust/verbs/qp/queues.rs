// SPDX-License-Identifier: GPL-2.0
//! The QP's work queues: the send and receive rings (allocated when the QP is
//! created, so posting allocates nothing), posting, completion in posting
//! order, and flushing.

use super::*;
use crate::{
    proto::rdmap::ReadRequest,
    uapi::*,
    verbs::mr::{Mr, Need},
};
use crate::verbs::table::ring_add;
use kernel::{
    alloc::KVVec,
    prelude::*,
    sync::Arc,
};

/// One scatter/gather element, resolved to its memory region at post time.
#[derive(Clone, Default)]
pub(super) struct Sge {
    pub(super) mr: Option<Arc<Mr>>,
    pub(super) addr: u64,
    pub(super) len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WqeState {
    /// Posted, not yet transmitted.
    Posted,
    /// An RDMA Read whose request went out; waiting for the response.
    Reading,
    /// Finished with this status.
    Done(u32),
}

/// A send work request in the send queue.
#[derive(Clone)]
pub(super) struct SendWqe {
    pub(super) wr_id: u64,
    pub(super) opcode: u16,
    pub(super) signaled: bool,
    pub(super) fence: bool,
    pub(super) inline: bool,
    pub(super) nsge: usize,
    pub(super) len: u32,
    pub(super) remote_addr: u64,
    pub(super) rkey: u32,
    pub(super) inv_stag: u32,
    pub(super) state: WqeState,
    pub(super) term: u32,
}

/// The send queue: a ring in posting order. `head` is the oldest request not yet
/// completed, `next` the next one to transmit.
pub(super) struct SendQueue {
    pub(super) wqes: KVVec<SendWqe>,
    pub(super) sges: KVVec<Sge>,
    pub(super) inline: KVVec<u8>,
    pub(super) head: usize,
    pub(super) next: usize,
    pub(super) count: usize,
}

pub(super) struct RecvWqe {
    pub(super) wr_id: u64,
    pub(super) nsge: usize,
    pub(super) len: u32,
}

/// The receive queue: a ring in posting order; Sends consume it from `head`.
pub(super) struct RecvQueue {
    pub(super) wqes: KVVec<RecvWqe>,
    pub(super) sges: KVVec<Sge>,
    pub(super) head: usize,
    pub(super) count: usize,
}

/// An inbound RDMA Read Request waiting for its response.
#[derive(Clone, Copy)]
pub(super) struct InboundRead {
    pub(super) msn: u32,
    pub(super) req: ReadRequest,
}

impl Qp {
    /// Resolves and checks the scatter/gather list of a work request.
    pub(super) fn resolve_sges(&self, sges: &[SrnicSge], need: Need, out: &mut [Sge]) -> Result<u32> {
        let mut total = 0u32;
        for (s, o) in sges.iter().zip(out.iter_mut()) {
            let mr = self.mrs.lookup(s.lkey).ok_or(EINVAL)?;
            mr.check(self.pd_id(), s.addr, u64::from(s.length), need)
                .map_err(|_| EACCES)?;
            total = total.checked_add(s.length).ok_or(EINVAL)?;
            *o = Sge {
                mr: Some(mr),
                addr: s.addr,
                len: s.length,
            };
        }
        Ok(total)
    }

    /// Posts one send work request (`SRNIC_WR_*` except RECV). `inline_data` is
    /// the gathered payload of an inline request.
    pub(crate) fn post_send(
        self: &Arc<Self>,
        wr: &SrnicPostWr,
        sges: &[SrnicSge],
        inline_data: Option<&[u8]>,
    ) -> Result {
        let state = self.conn.lock().state;
        if state == QpState::Error || state == QpState::Closing {
            return Err(EINVAL);
        }
        if sges.len() > self.caps.max_send_sge as usize {
            return Err(EINVAL);
        }
        if wr.opcode == SRNIC_WR_RDMA_READ as u16 && inline_data.is_some() {
            return Err(EINVAL);
        }
        {
            let mut sq = self.sq.lock();
            let cap = sq.wqes.len();
            if sq.count == cap {
                return Err(ENOMEM);
            }
            let slot = ring_add(sq.head, sq.count, cap);
            let nmax = self.caps.max_send_sge as usize;
            let (len, nsge) = match inline_data {
                Some(data) => {
                    let room = self.caps.max_inline as usize;
                    if data.len() > room {
                        return Err(EINVAL);
                    }
                    let base = slot * room;
                    sq.inline[base..base + data.len()].copy_from_slice(data);
                    (data.len() as u32, 0)
                }
                None => {
                    let need = if wr.opcode == SRNIC_WR_RDMA_READ as u16 {
                        Need::LocalWrite
                    } else {
                        Need::LocalRead
                    };
                    let base = slot * nmax;
                    let len = {
                        let out = &mut sq.sges[base..base + sges.len()];
                        self.resolve_sges(sges, need, out)?
                    };
                    let mut nsge = sges.len();
                    if wr.opcode == SRNIC_WR_RDMA_READ as u16 && nsge > 1 {
                        // A Read Request names one sink STag and offset: several
                        // SGEs must be contiguous in one region (then they are one).
                        let contiguous = sges.windows(2).all(|w| {
                            w[0].lkey == w[1].lkey && w[0].addr + u64::from(w[0].length) == w[1].addr
                        });
                        if !contiguous {
                            for s in &mut sq.sges[base..base + nsge] {
                                s.mr = None;
                            }
                            return Err(EINVAL);
                        }
                        sq.sges[base].len = len;
                        for s in &mut sq.sges[base + 1..base + nsge] {
                            s.mr = None;
                        }
                        nsge = 1;
                    }
                    (len, nsge)
                }
            };
            let wqe = &mut sq.wqes[slot];
            *wqe = SendWqe {
                wr_id: wr.wr_id,
                opcode: wr.opcode,
                signaled: self.caps.sq_sig_all || wr.flags & SRNIC_SEND_SIGNALED != 0,
                fence: wr.flags & SRNIC_SEND_FENCE != 0,
                inline: inline_data.is_some(),
                nsge,
                len,
                remote_addr: wr.remote_addr,
                rkey: wr.rkey,
                inv_stag: wr.invalidate_rkey,
                state: WqeState::Posted,
                term: 0,
            };
            sq.count += 1;
        }
        if state == QpState::Rts {
            self.kick_tx();
        }
        Ok(())
    }

    /// Posts one receive work request.
    pub(crate) fn post_recv(&self, wr: &SrnicPostWr, sges: &[SrnicSge]) -> Result {
        let state = self.conn.lock().state;
        if state == QpState::Error {
            return Err(EINVAL);
        }
        if sges.len() > self.caps.max_recv_sge as usize {
            return Err(EINVAL);
        }
        let mut rq = self.rq.lock();
        let cap = rq.wqes.len();
        if rq.count == cap {
            return Err(ENOMEM);
        }
        let slot = ring_add(rq.head, rq.count, cap);
        let nmax = self.caps.max_recv_sge as usize;
        let base = slot * nmax;
        let len = {
            let out = &mut rq.sges[base..base + sges.len()];
            self.resolve_sges(sges, Need::LocalWrite, out)?
        };
        rq.wqes[slot] = RecvWqe {
            wr_id: wr.wr_id,
            nsge: sges.len(),
            len,
        };
        rq.count += 1;
        Ok(())
    }
    /// Completes every outstanding work request: the oldest send request still
    /// in progress with `head_status`, everything else with WR_FLUSH_ERR.
    pub(super) fn flush(&self, head_status: u32, term: u32) {
        {
            let mut sq = self.sq.lock();
            let cap = sq.wqes.len();
            let mut first = true;
            while sq.count > 0 {
                let h = sq.head;
                let w = &mut sq.wqes[h];
                let status = match w.state {
                    WqeState::Done(s) => s,
                    WqeState::Reading if first => head_status,
                    _ => SRNIC_WC_WR_FLUSH_ERR,
                };
                if !matches!(w.state, WqeState::Done(_)) {
                    first = false;
                }
                let wc = send_wc(w, status, self.handle, if status == SRNIC_WC_SUCCESS { 0 } else { term });
                let signal = w.signaled || status != SRNIC_WC_SUCCESS;
                for s in h * self.caps.max_send_sge as usize..(h + 1) * self.caps.max_send_sge as usize {
                    sq.sges[s].mr = None;
                }
                sq.head = ring_add(h, 1, cap);
                sq.count -= 1;
                if signal {
                    self.send_cq.push(wc);
                }
            }
            sq.next = sq.head;
        }
        let mut rq = self.rq.lock();
        let cap = rq.wqes.len();
        while rq.count > 0 {
            let h = rq.head;
            let wc = SrnicWc {
                wr_id: rq.wqes[h].wr_id,
                status: SRNIC_WC_WR_FLUSH_ERR,
                opcode: SRNIC_WC_RECV,
                qp_handle: self.handle,
                term,
                ..Default::default()
            };
            for s in h * self.caps.max_recv_sge as usize..(h + 1) * self.caps.max_recv_sge as usize {
                rq.sges[s].mr = None;
            }
            rq.head = ring_add(h, 1, cap);
            rq.count -= 1;
            self.recv_cq.push(wc);
        }
    }

    /// Completes finished send requests from the head, in posting order.
    pub(super) fn complete_sends(&self) {
        let mut sq = self.sq.lock();
        let cap = sq.wqes.len();
        while sq.count > 0 {
            let h = sq.head;
            let WqeState::Done(status) = sq.wqes[h].state else { break };
            let w = &sq.wqes[h];
            let wc = send_wc(w, status, self.handle, w.term);
            let signal = w.signaled || status != SRNIC_WC_SUCCESS;
            for s in h * self.caps.max_send_sge as usize..(h + 1) * self.caps.max_send_sge as usize {
                sq.sges[s].mr = None;
            }
            sq.head = ring_add(h, 1, cap);
            sq.count -= 1;
            if signal {
                self.send_cq.push(wc);
            }
        }
    }
}

pub(super) fn send_wc(w: &SendWqe, status: u32, qp: u32, term: u32) -> SrnicWc {
    SrnicWc {
        wr_id: w.wr_id,
        status,
        opcode: match w.opcode as u32 {
            SRNIC_WR_RDMA_WRITE => SRNIC_WC_RDMA_WRITE,
            SRNIC_WR_RDMA_READ => SRNIC_WC_RDMA_READ,
            _ => SRNIC_WC_SEND,
        },
        byte_len: if w.opcode as u32 == SRNIC_WR_RDMA_READ { w.len } else { 0 },
        qp_handle: qp,
        term,
        ..Default::default()
    }
}
