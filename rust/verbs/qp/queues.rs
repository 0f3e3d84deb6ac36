// SPDX-License-Identifier: GPL-2.0
//! The QP's work queues: the send and receive rings (allocated when the QP is
//! created, so posting allocates nothing), posting, completion in posting
//! order, and flushing.

use super::*;
use crate::{
    proto::{rdmap::ReadRequest, ring::Ring},
    uapi::*,
    verbs::{
        cq::Due,
        mr::{Mr, Need},
        stats,
    },
};
use kernel::{
    alloc::KVVec,
    prelude::*,
    sync::Arc,
};

/// The local memory of a work request.
pub(crate) enum Local<'a> {
    /// SGEs naming registered regions by their lkeys.
    Sges(&'a [SrnicSge]),
    /// The gathered payload of an inline send.
    Inline(&'a [u8]),
    /// A region of the request's own, whole ([`Mr::local`]).
    Region(Arc<Mr>),
}

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
    /// A SEND or WRITE sent zero-copy: all of it went to TCP, which still
    /// references its pages; it completes when TCP releases them (the
    /// notice made with its sequence number, see `tx.rs`).
    Zerocopy,
    /// Finished with this status.
    Done(u32),
}

/// A send work request in the send queue.
#[derive(Clone, Copy)]
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
    /// Its sequence number in the queue (wrapping): tells a zero-copy
    /// notice's request from a later one in the same slot.
    pub(super) seq: u32,
}

impl SendWqe {
    /// What an unused slot holds.
    const EMPTY: Self = Self {
        wr_id: 0,
        opcode: 0,
        signaled: false,
        fence: false,
        inline: false,
        nsge: 0,
        len: 0,
        remote_addr: 0,
        rkey: 0,
        inv_stag: 0,
        state: WqeState::Posted,
        term: 0,
        seq: 0,
    };
}

/// The scatter/gather elements of a queue's work requests: `per_slot` of them
/// for each slot of the queue's ring.
pub(super) struct SgeSlots {
    sges: KVVec<Sge>,
    per_slot: usize,
}

impl SgeSlots {
    pub(super) fn new(slots: usize, per_slot: usize) -> Result<Self> {
        let n = slots.checked_mul(per_slot).ok_or(EINVAL)?;
        Ok(Self { sges: filled(n, Sge::default())?, per_slot })
    }

    /// The elements of ring slot `slot`.
    pub(super) fn of(&self, slot: usize) -> &[Sge] {
        let base = slot * self.per_slot;
        &self.sges[base..base + self.per_slot]
    }

    /// The elements of ring slot `slot`, mutably.
    pub(super) fn of_mut(&mut self, slot: usize) -> &mut [Sge] {
        let base = slot * self.per_slot;
        &mut self.sges[base..base + self.per_slot]
    }

    /// Makes a request's own region ([`Mr::local`]), all of it, the only
    /// element of ring slot `slot`; returns its length.
    pub(super) fn set_whole(&mut self, slot: usize, mr: Arc<Mr>) -> Result<u32> {
        let len = u32::try_from(mr.len).map_err(|_| EINVAL)?;
        self.of_mut(slot)[0] = Sge { addr: mr.va, len, mr: Some(mr) };
        Ok(len)
    }

    /// Drops the references slot `slot` holds on memory regions.
    pub(super) fn release(&mut self, slot: usize) {
        for s in self.of_mut(slot) {
            s.mr = None;
        }
    }

    /// Moves the references on memory regions that the elements from index
    /// `*at` on hold into `out`, as many as fit, for the caller to drop once
    /// it released the queue's lock (a last reference unpins pages, which may
    /// sleep); advances `*at`. Returns how many it moved: 0 when none is left.
    pub(super) fn take_refs(&mut self, at: &mut usize, out: &mut [Option<Arc<Mr>>]) -> usize {
        let mut n = 0;
        while n < out.len() && *at < self.sges.len() {
            if let Some(mr) = self.sges[*at].mr.take() {
                out[n] = Some(mr);
                n += 1;
            }
            *at += 1;
        }
        n
    }
}

/// The send queue: a ring in posting order, from the oldest request not yet
/// completed; the first `sent` of them were handed to the transmit path.
pub(super) struct SendQueue {
    pub(super) wqes: Ring<KVVec<SendWqe>>,
    pub(super) sent: usize,
    /// The next request to send waits for a Read to complete (the ORD is
    /// full, or it is fenced): the Read's completion queues the transmit
    /// work, which other Read completions need not do.
    pub(super) awaits_read: bool,
    /// The sequence number of the next request posted.
    pub(super) next_seq: u32,
    pub(super) sges: SgeSlots,
    /// `max_inline` bytes of inline data for each slot.
    pub(super) inline: KVVec<u8>,
}

impl SendQueue {
    pub(super) fn new(caps: &QpCaps) -> Result<Self> {
        let n = caps.max_send_wr as usize;
        Ok(Self {
            wqes: Ring::new(filled(n, SendWqe::EMPTY)?),
            sent: 0,
            awaits_read: false,
            next_seq: 0,
            sges: SgeSlots::new(n, caps.max_send_sge as usize)?,
            inline: filled(n.checked_mul(caps.max_inline as usize).ok_or(EINVAL)?, 0u8)?,
        })
    }

    /// Removes the oldest request (releasing its regions); returns its slot.
    pub(super) fn pop(&mut self) -> Option<usize> {
        let slot = self.wqes.pop()?;
        self.sent = self.sent.saturating_sub(1);
        self.sges.release(slot);
        Some(slot)
    }

    /// Marks the request in `slot` as handed to the transmit path, if it is
    /// the next one to send.
    pub(super) fn mark_sent(&mut self, slot: usize) {
        if self.wqes.slot(self.sent) == Some(slot) {
            self.sent += 1;
        }
    }
}

#[derive(Clone, Copy)]
pub(super) struct RecvWqe {
    pub(super) wr_id: u64,
    pub(super) nsge: usize,
    pub(super) len: u32,
}

/// The receive queue: a ring in posting order; Sends consume it from the oldest.
pub(super) struct RecvQueue {
    pub(super) wqes: Ring<KVVec<RecvWqe>>,
    pub(super) sges: SgeSlots,
}

impl RecvQueue {
    pub(super) fn new(caps: &QpCaps) -> Result<Self> {
        let n = caps.max_recv_wr as usize;
        Ok(Self {
            wqes: Ring::new(filled(n, RecvWqe { wr_id: 0, nsge: 0, len: 0 })?),
            sges: SgeSlots::new(n, caps.max_recv_sge as usize)?,
        })
    }

    /// Removes the oldest request (releasing its regions) and returns it.
    pub(super) fn pop(&mut self) -> Option<RecvWqe> {
        let slot = self.wqes.pop()?;
        self.sges.release(slot);
        self.wqes.slot_contents(slot).copied()
    }
}

/// An inbound RDMA Read Request waiting for its response.
#[derive(Clone, Copy)]
pub(super) struct InboundRead {
    pub(super) msn: u32,
    pub(super) req: ReadRequest,
}

impl InboundRead {
    /// What an unused slot holds.
    pub(super) const EMPTY: Self = Self {
        msn: 0,
        req: ReadRequest { sink_stag: 0, sink_to: 0, read_size: 0, src_stag: 0, src_to: 0 },
    };
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

    /// Posts one send work request (`SRNIC_WR_*` except RECV) whose local
    /// memory is `local`.
    pub(crate) fn post_send(self: &Arc<Self>, wr: &SrnicPostWr, local: Local<'_>) -> Result {
        if !self.state().accepts_posts() {
            return Err(EINVAL);
        }
        let read = wr.opcode == SRNIC_WR_RDMA_READ as u16;
        match &local {
            Local::Sges(sges) if sges.len() > self.caps.max_send_sge as usize => return Err(EINVAL),
            Local::Inline(_) if read => return Err(EINVAL),
            Local::Region(mr) if read && mr.access & SRNIC_ACCESS_LOCAL_WRITE == 0 => return Err(EACCES),
            _ => {}
        }
        let inline = matches!(local, Local::Inline(_));
        {
            let mut sq = self.sq.lock();
            let Some(slot) = sq.wqes.next_slot() else {
                return Err(ENOMEM);
            };
            let (len, nsge) = match local {
                Local::Inline(data) => {
                    let room = self.caps.max_inline as usize;
                    if data.len() > room {
                        return Err(EINVAL);
                    }
                    let base = slot * room;
                    sq.inline[base..base + data.len()].copy_from_slice(data);
                    (data.len() as u32, 0)
                }
                Local::Region(mr) => (sq.sges.set_whole(slot, mr)?, 1),
                Local::Sges(sges) => {
                    let need = if read { Need::LocalWrite } else { Need::LocalRead };
                    let len = {
                        let out = &mut sq.sges.of_mut(slot)[..sges.len()];
                        self.resolve_sges(sges, need, out)?
                    };
                    let mut nsge = sges.len();
                    if read && nsge > 1 {
                        // A Read Request names one sink STag and offset: several
                        // SGEs must be contiguous in one region (then they are one).
                        let contiguous = sges.windows(2).all(|w| {
                            w[0].lkey == w[1].lkey && w[0].addr + u64::from(w[0].length) == w[1].addr
                        });
                        let slot_sges = &mut sq.sges.of_mut(slot)[..nsge];
                        if !contiguous {
                            for s in slot_sges {
                                s.mr = None;
                            }
                            return Err(EINVAL);
                        }
                        slot_sges[0].len = len;
                        for s in &mut slot_sges[1..] {
                            s.mr = None;
                        }
                        nsge = 1;
                    }
                    (len, nsge)
                }
            };
            let wqe = SendWqe {
                wr_id: wr.wr_id,
                opcode: wr.opcode,
                signaled: self.caps.sq_sig_all || wr.flags & SRNIC_SEND_SIGNALED != 0,
                fence: wr.flags & SRNIC_SEND_FENCE != 0,
                inline,
                nsge,
                len,
                remote_addr: wr.remote_addr,
                rkey: wr.rkey,
                inv_stag: wr.invalidate_rkey,
                state: WqeState::Posted,
                term: 0,
                seq: sq.next_seq,
            };
            sq.next_seq = sq.next_seq.wrapping_add(1);
            // Cannot fail: `slot` was free under the same lock.
            sq.wqes.push(wqe).map_err(|_| ENOMEM)?;
        }
        // Read after the request is in the queue: a connection established
        // meanwhile either shows here or (its transmit work taking the queue's
        // lock after publishing the state) finds the request itself.
        if self.state().is_connected() {
            self.post_transmit();
        }
        self.flush_if_failed_meanwhile();
        Ok(())
    }

    /// A post to a QP in ERROR completes at once with a flush status (as in
    /// ibverbs): flush after queueing it. This also catches a failure or
    /// disconnect that flushed the queues between the post's state check and
    /// its queueing, which would otherwise leave the request uncompleted.
    fn flush_if_failed_meanwhile(&self) {
        // A failure that flushed the queues before this post's request was in
        // them released `conn` (with ERROR) before the flush took the queue's
        // lock, which the post took after it: `state` shows it. Only then is
        // `conn` worth taking.
        if !self.state().is_over() {
            return;
        }
        let term = {
            let c = self.conn();
            // In ERROR (a destroyed QP's queues are emptied by its teardown).
            if !c.life.is_over() || c.life.is_destroyed() {
                return;
            }
            c.term
        };
        self.flush(SRNIC_WC_WR_FLUSH_ERR, term);
    }

    /// Posts one receive work request whose buffer is `local` (SGEs or a
    /// region of its own with local write access; not inline).
    pub(crate) fn post_recv(&self, wr: &SrnicPostWr, local: Local<'_>) -> Result {
        if !self.state().accepts_posts() {
            return Err(EINVAL);
        }
        match &local {
            Local::Sges(sges) if sges.len() > self.caps.max_recv_sge as usize => return Err(EINVAL),
            Local::Inline(_) => return Err(EINVAL),
            Local::Region(mr) if mr.access & SRNIC_ACCESS_LOCAL_WRITE == 0 => return Err(EACCES),
            _ => {}
        }
        let mut rq = self.rq.lock();
        let Some(slot) = rq.wqes.next_slot() else {
            return Err(ENOMEM);
        };
        let (len, nsge) = match local {
            Local::Region(mr) => (rq.sges.set_whole(slot, mr)?, 1),
            Local::Sges(sges) => {
                let out = &mut rq.sges.of_mut(slot)[..sges.len()];
                (self.resolve_sges(sges, Need::LocalWrite, out)?, sges.len())
            }
            Local::Inline(_) => return Err(EINVAL),
        };
        let wqe = RecvWqe {
            wr_id: wr.wr_id,
            nsge,
            len,
        };
        // Cannot fail: `slot` was free under the same lock.
        rq.wqes.push(wqe).map_err(|_| ENOMEM)?;
        drop(rq);
        self.flush_if_failed_meanwhile();
        Ok(())
    }

    /// Completes every outstanding work request: the oldest send request still
    /// in progress with `head_status`, everything else with WR_FLUSH_ERR.
    ///
    /// Waits for a transmit run under way (takes `tx`; the caller holds no
    /// QP lock): a send request whose last byte TCP has taken completes with
    /// success when that run gets back from the socket, as in siw, whose
    /// flush waits for its transmitter under the QP's state lock. Without it
    /// a peer that closes as soon as it has the last message (the close runs
    /// the receive work on the other CPU, possibly inside the send's own
    /// `release_sock`) has that message flushed although it arrived. The
    /// run checks the state between FPDUs, so it stops soon after a failure.
    pub(super) fn flush(&self, head_status: u32, term: u32) {
        let mut send_due = Due::default();
        {
            let _tx = self.tx.lock();
            let mut sq = self.sq.lock();
            let mut first = true;
            while let Some(slot) = sq.pop() {
                let Some(w) = sq.wqes.slot_contents(slot).copied() else { break };
                let status = match w.state {
                    WqeState::Done(s) => s,
                    WqeState::Reading if first => head_status,
                    _ => SRNIC_WC_WR_FLUSH_ERR,
                };
                // A zero-copy request waiting for TCP is not the one that
                // failed: it went out whole.
                if !matches!(w.state, WqeState::Done(_) | WqeState::Zerocopy) {
                    first = false;
                }
                if status == SRNIC_WC_WR_FLUSH_ERR {
                    stats::FLUSHED_WRS.fetch_add(1, Ordering::Relaxed);
                }
                let wc = send_wc(&w, status, self.handle, if status == SRNIC_WC_SUCCESS { 0 } else { term });
                if w.signaled || status != SRNIC_WC_SUCCESS {
                    send_due = send_due.and(self.send_cq.push(wc));
                }
            }
            sq.sent = 0;
        }
        self.send_cq.notify(send_due);
        let mut recv_due = Due::default();
        {
            let mut rq = self.rq.lock();
            while let Some(w) = rq.pop() {
                stats::FLUSHED_WRS.fetch_add(1, Ordering::Relaxed);
                let wc = SrnicWc {
                    wr_id: w.wr_id,
                    status: SRNIC_WC_WR_FLUSH_ERR,
                    opcode: SRNIC_WC_RECV,
                    qp_handle: self.handle,
                    term,
                    ..Default::default()
                };
                recv_due = recv_due.and(self.recv_cq.push(wc));
            }
        }
        self.recv_cq.notify(recv_due);
    }

    /// Completes finished send requests from the oldest, in posting order,
    /// under `sq`, which the caller holds (concurrent callers keep the order);
    /// the caller notifies the CQ with what this returns once `sq` is released.
    pub(super) fn complete_sends_locked(&self, sq: &mut SendQueue) -> Due {
        let mut due = Due::default();
        while let Some(&w) = sq.wqes.front() {
            let WqeState::Done(status) = w.state else { break };
            sq.pop();
            let wc = send_wc(&w, status, self.handle, w.term);
            if w.signaled || status != SRNIC_WC_SUCCESS {
                due = due.and(self.send_cq.push(wc));
            }
        }
        due
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
