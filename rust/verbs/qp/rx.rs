// SPDX-License-Identifier: GPL-2.0
//! The QP's receive and placement path: `tcp_read_sock` hands the socket
//! buffers to the MPA framer piece by piece, and payload is copied once, from
//! the skb straight into the pinned pages of the target region or receive
//! buffer. Where it runs is the QP's [`RxMode`]: in the socket's data-ready
//! callback (softirq), or in the receive work that callback queues; either
//! way under the QP's bottom-half-safe locks. The receive work also reads
//! what arrived before the callbacks were installed and handles what may
//! sleep (errors, the end of the stream). The notifications the completions
//! of one read make due are fired once, after it.

use super::*;
use crate::{
    proto::{
        ddp::Placement,
        mpa::rx::{RxEvent, RxFramer},
        rdmap::{
            engine::{Access, Completion, RecvEngine, Verbs},
            reads::Reads,
            StagError,
            TermCode,
            Terminate,
        },
    },
    sys::{crc::KernelCrc32c, errno::eproto, socket::Locked},
    uapi::*,
    verbs::{cq::Due, mr::{Mr, Need}, stats},
};
use core::sync::atomic::Ordering;
use kernel::{
    prelude::*,
    sync::Arc,
};

/// Where a QP reads its socket, chosen by its context (`Context::rx_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RxMode {
    /// In the data-ready callback, as siw does: no hop between a segment's
    /// arrival and its data in place, for a process that polls or waits for
    /// its completions (a file's QPs). Each read consumes what one callback
    /// brought, often one GRO buffer, and TCP acknowledges at the end of
    /// every read (`tcp_cleanup_rbuf`).
    Callback,
    /// In the receive work, as the kernel's NVMe/TCP host and target do: the
    /// callback only queues the work, and one read takes everything that
    /// arrived until the work ran, so TCP sends one ACK where the callback
    /// would send several, and the completions' notifications are delivered
    /// from the work itself. For kernel clients, whose callbacks run from a
    /// work item anyway (Documentation/srnic/performance.rst, "Where a QP
    /// reads").
    Work,
}

/// Receive state: the framer, the RDMAP engine and the current placement.
pub(super) struct RxState {
    pub(super) framer: RxFramer,
    pub(super) engine: RecvEngine,
    /// The current segment's placement, with its region for tagged ones.
    pub(super) place: Option<(Placement, Option<Arc<Mr>>)>,
    /// The current segment is not its message's last.
    pub(super) more: bool,
    /// The region of a tagged message (inbound WRITE, Read Response) whose
    /// last segment has not arrived: its next segments name it again and
    /// take it from here instead of the file's region table (a lock shared
    /// with every QP of the file, and two reference counts, per FPDU). A
    /// region is taken from here only if its STag is the one named and it is
    /// still valid ([`Mr::check`]), as the table would give it; dropped
    /// when the message's last segment arrives, so it does not keep a
    /// deregistered region's pages pinned.
    pub(super) tagged: Option<Arc<Mr>>,
    /// FPDUs and payload bytes received since the last read's end, added
    /// to the counters once per read rather than per FPDU.
    pub(super) fpdus: u64,
    pub(super) bytes: u64,
    /// The notifications the completions of this read made due, fired once
    /// its locks are dropped.
    pub(super) send_due: Due,
    pub(super) recv_due: Due,
    pub(super) active: bool,
    /// What a read in the data-ready callback found that only the receive
    /// work can handle (it reports errors, flushes and closes, which may
    /// sleep).
    pub(super) left: Option<RxEnd>,
}

/// How a read of the socket ended, when not with everything placed.
pub(super) enum RxEnd {
    /// A protocol error: the TERMINATE to send, or the one received.
    Failed(Failure),
    /// The stream ended or failed.
    Closed,
}

impl Qp {
    /// The receive work: reads what the socket holds that no data-ready
    /// callback read (for [`RxMode::Callback`], data that arrived before the
    /// callbacks were installed; for [`RxMode::Work`], everything), and
    /// handles what such a callback left: a failure, the end of the stream.
    /// Process context.
    pub(super) fn rx_run(self: Arc<Self>) {
        let left = self.rx.lock().left.take();
        let end = match left {
            Some(end) => Some(end),
            None => {
                let Some(sock) = self.socket() else { return };
                // Posts meanwhile leave their transmit to this work
                // (`Qp::post_transmit`): it sends them after the read, unless
                // the read failed or the stream ended (then the failure
                // flushes them).
                self.rx_reading.store(true, Ordering::SeqCst);
                let end = sock.with_lock(|l| self.rx_read(l));
                self.rx_reading.store(false, Ordering::SeqCst);
                if self.tx_deferred.swap(false, Ordering::SeqCst) && end.is_none() {
                    self.transmit();
                }
                end
            }
        };
        match end {
            None => {}
            Some(RxEnd::Failed(f)) => self.fail(f),
            Some(RxEnd::Closed) => {
                if let Some(sock) = self.socket() {
                    self.connection_lost(&sock);
                }
            }
        }
    }

    /// The failure a data-ready callback left for the receive work, if any
    /// (taken: the caller handles it).
    pub(super) fn take_rx_failure(&self) -> Option<Failure> {
        let mut rx = self.rx.lock();
        match rx.left.take() {
            Some(RxEnd::Failed(f)) => Some(f),
            other => {
                rx.left = other;
                None
            }
        }
    }

    /// The socket's data-ready callback (softirq, or the process releasing the
    /// socket's lock). [`RxMode::Callback`]: places what arrived right here
    /// and leaves a failure or the end of the stream to the receive work.
    /// [`RxMode::Work`]: queues the receive work, which reads.
    pub(super) fn rx_ready(self: &Arc<Self>, sock: &Locked<'_>) {
        if self.rx_mode == RxMode::Work {
            self.kick_rx();
            return;
        }
        if let Some(end) = self.rx_read(sock) {
            self.rx.lock().left = Some(end);
            self.kick_rx();
        }
    }

    /// Reads the socket, whose lock the caller holds, under `rx`: frames,
    /// checks and places everything queued. Never sleeps.
    fn rx_read(self: &Arc<Self>, sock: &Locked<'_>) -> Option<RxEnd> {
        let mut failure: Option<Failure> = None;
        let mut bad_crc = None;
        let mut read_failed = false;
        let (send_due, recv_due) = {
            let mut rx = self.rx.lock();
            if !rx.active {
                return None;
            }
            let crc = KernelCrc32c;
            let r = sock.read_with(&mut |chunk: &[u8]| {
                let mut off = 0;
                while off < chunk.len() {
                    let rest = &chunk[off..];
                    let (used, ev) = match rx.framer.feed(&crc, rest) {
                        Ok(x) => x,
                        Err(code) => {
                            if code == TermCode::LlpCrc {
                                stats::CRC_ERRORS.fetch_add(1, Ordering::Relaxed);
                                bad_crc = rx.framer.bad_crc();
                            }
                            // A header that failed to parse is still copied
                            // into the TERMINATE where its layout is known.
                            failure = Some(match rx.framer.failed_header() {
                                Some((raw, len)) => Failure::Detected(
                                    Terminate::with_raw_header(code, raw, len),
                                ),
                                None => Failure::detected(code),
                            });
                            return Err(eproto());
                        }
                    };
                    off += used;
                    if let Some(ev) = ev {
                        if let Err(f) = self.rx_event(&mut rx, ev) {
                            failure = Some(f);
                            return Err(eproto());
                        }
                    }
                }
                Ok(chunk.len())
            });
            let (fpdus, bytes) = (core::mem::take(&mut rx.fpdus), core::mem::take(&mut rx.bytes));
            stats::RX_FPDUS.fetch_add(fpdus, Ordering::Relaxed);
            self.rx_fpdus.fetch_add(fpdus, Ordering::Relaxed);
            stats::RX_BYTES.fetch_add(bytes, Ordering::Relaxed);
            self.rx_bytes.fetch_add(bytes, Ordering::Relaxed);
            if r.is_err() || failure.is_some() {
                rx.active = false;
                read_failed = true;
            }
            (core::mem::take(&mut rx.send_due), core::mem::take(&mut rx.recv_due))
        };
        // From the receive work these are delivered now; from the callback
        // the CQs' work items deliver them.
        self.send_cq.notify(send_due);
        self.recv_cq.notify(recv_due);
        if let Some((received, computed)) = bad_crc {
            self.trace_site(|s| trace::crc_error(s, received, computed));
        }
        if let Some(f) = failure {
            Some(RxEnd::Failed(f))
        } else if read_failed || sock.is_closed() {
            Some(RxEnd::Closed)
        } else {
            None
        }
    }

    /// One receive event; `Err` carries the TERMINATE to send or the one received.
    pub(super) fn rx_event(
        self: &Arc<Self>,
        rx: &mut RxState,
        ev: RxEvent<'_>,
    ) -> Result<(), Failure> {
        match ev {
            RxEvent::Header { header, ulpdu_len, payload_len } => {
                rx.fpdus += 1;
                rx.more = !header.last;
                let mut v = QpVerbs { qp: self, mr: None, cached: rx.tagged.take() };
                match rx.engine.on_header(&mut v, &header, ulpdu_len, u32::from(payload_len)) {
                    Ok(crate::proto::rdmap::engine::RxAction::Place(p)) => {
                        // A Read Response is matched against our outstanding Read
                        // (not through `check_stag`): its sink is our own region,
                        // the one the Read's work request holds.
                        let mr = match (p, v.mr.take()) {
                            (_, Some(mr)) => Some(mr),
                            (Placement::Tagged { stag, to, len }, None) => {
                                match v.read_sink(stag).filter(|mr| {
                                    mr.check(self.pd_id(), to, u64::from(len), Need::LocalWrite).is_ok()
                                }) {
                                    Some(mr) => Some(mr),
                                    None => {
                                        return Err(Failure::detected(TermCode::TaggedInvalidStag))
                                    }
                                }
                            }
                            (_, None) => None,
                        };
                        rx.place = Some((p, mr));
                    }
                    Ok(crate::proto::rdmap::engine::RxAction::Discard) => rx.place = None,
                    Err(e) => return Err(e.into()),
                }
            }
            RxEvent::Payload { data, seg_offset, .. } => {
                rx.bytes += data.len() as u64;
                match &rx.place {
                    Some((Placement::Tagged { to, .. }, Some(mr))) => {
                        let at = to.wrapping_add(u64::from(seg_offset));
                        if mr.write(at, data).is_err() {
                            return Err(Failure::detected(TermCode::TaggedBaseBounds));
                        }
                    }
                    Some((Placement::Untagged { qn: 0, mo, .. }, _)) => {
                        let at = mo.wrapping_add(u32::from(seg_offset));
                        if self.place_recv(at, data).is_err() {
                            return Err(Failure::detected(TermCode::UntaggedNoBuffer));
                        }
                    }
                    _ => {}
                }
            }
            RxEvent::End => {
                // A tagged message's region stays at hand for its next segment.
                if let Some((Placement::Tagged { .. }, Some(mr))) = rx.place.take() {
                    if rx.more {
                        rx.tagged = Some(mr);
                    }
                }
                // The peer's first FPDU ends a responder's hold.
                if self.hold.on.load(Ordering::Relaxed) {
                    self.release_hold();
                }
                let mut v = QpVerbs { qp: self, mr: None, cached: None };
                match rx.engine.on_end(&mut v) {
                    Ok(Some(c)) => self.rx_complete(rx, c)?,
                    Ok(None) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    /// Copies Send payload at message offset `at` into the head receive buffer.
    pub(super) fn place_recv(&self, at: u32, data: &[u8]) -> Result {
        let rq = self.rq.lock();
        let h = rq.wqes.slot(0).ok_or(EINVAL)?;
        let w = rq.wqes.front().ok_or(EINVAL)?;
        let end = at.checked_add(data.len() as u32).ok_or(EINVAL)?;
        if end > w.len {
            return Err(EINVAL);
        }
        let mut pos = 0u32; // message offset where the current SGE starts
        let mut src = data;
        let mut cur = at;
        for s in &rq.sges.of(h)[..w.nsge] {
            if src.is_empty() {
                break;
            }
            let s_end = pos + s.len;
            if cur < s_end {
                let n = ((s_end - cur) as usize).min(src.len());
                let (now, rest) = src.split_at(n);
                let mr = s.mr.as_ref().ok_or(EINVAL)?;
                mr.write(s.addr + u64::from(cur - pos), now)?;
                src = rest;
                cur += n as u32;
            }
            pos = s_end;
        }
        Ok(())
    }

    pub(super) fn rx_complete(
        self: &Arc<Self>,
        rx: &mut RxState,
        c: Completion,
    ) -> Result<(), Failure> {
        match c {
            Completion::Recv { len, invalidate, solicited, .. } => {
                let mut wc = {
                    // The engine only completes a Send into a posted buffer.
                    let w = self.rq
                        .lock()
                        .pop()
                        .ok_or(Failure::detected(TermCode::UntaggedNoBuffer))?;
                    SrnicWc {
                        wr_id: w.wr_id,
                        status: SRNIC_WC_SUCCESS,
                        opcode: SRNIC_WC_RECV,
                        byte_len: len,
                        qp_handle: self.handle,
                        flags: if solicited { SRNIC_WC_SOLICITED } else { 0 },
                        ..Default::default()
                    }
                };
                if let Some(stag) = invalidate {
                    wc.flags |= SRNIC_WC_WITH_INV;
                    wc.invalidated_stag = stag;
                    let ok = self
                        .mrs
                        .lookup(stag)
                        .ok_or(StagError::InvalidStag)
                        .and_then(|mr| mr.invalidate(self.pd_id()));
                    if ok.is_err() {
                        wc.status = SRNIC_WC_REM_INV_REQ_ERR;
                    }
                }
                rx.recv_due = rx.recv_due.and(self.recv_cq.push(wc));
            }
            Completion::ReadDone { cookie, .. } => {
                let (due, waits) = {
                    let mut sq = self.sq.lock();
                    if let Some(w) = sq.wqes.at_mut(cookie as usize) {
                        w.state = WqeState::Done(SRNIC_WC_SUCCESS);
                    }
                    (self.complete_sends_locked(&mut sq), core::mem::take(&mut sq.awaits_read))
                };
                rx.send_due = rx.send_due.and(due);
                // An ORD slot is free again, and a fence may be lifted: the
                // transmit work goes on if it waited for that.
                if waits {
                    self.kick_tx();
                }
            }
            Completion::ReadRequest { msn, req } => {
                if self.conn().irq.push(InboundRead { msn, req }).is_err() {
                    return Err(Failure::detected(TermCode::IrdExceeded));
                }
                self.kick_tx();
            }
            Completion::Rtr => {
                self.conn().await_rtr = false;
                self.kick_tx();
            }
            Completion::Terminated(t) => {
                rx.active = false;
                return Err(Failure::Received(t));
            }
        }
        Ok(())
    }
}

/// The verbs layer as the RDMAP engine sees it.
pub(super) struct QpVerbs<'a> {
    pub(super) qp: &'a Qp,
    /// The region the last successful tagged check named.
    pub(super) mr: Option<Arc<Mr>>,
    /// The region of the tagged message under way ([`RxState::tagged`]).
    pub(super) cached: Option<Arc<Mr>>,
}

impl QpVerbs<'_> {
    /// The region `stag` names: the message's own if it is that one, from
    /// the file's table otherwise. Either way the caller checks it, and
    /// [`Mr::check`] refuses a region that was invalidated or deregistered
    /// meanwhile, as a look-up would.
    fn region(&mut self, stag: u32) -> Option<Arc<Mr>> {
        self.cached_region(stag).or_else(|| self.qp.mrs.lookup(stag))
    }

    /// The region of the tagged message under way, if `stag` names it (taken:
    /// it is dropped otherwise).
    fn cached_region(&mut self, stag: u32) -> Option<Arc<Mr>> {
        self.cached.take().filter(|mr| mr.stag == stag)
    }

    /// The sink of the oldest outstanding Read, which a Read Response
    /// answers (the engine checked that its STag is `stag`): the message's
    /// own region if it is that one, else the one the Read's work request
    /// holds, as siw places a Read Response through its ORQ entry. Not the
    /// file's table: a work request's own region ([`Mr::local`]) is in none.
    /// The caller checks it ([`Mr::check`]), which refuses a region
    /// deregistered meanwhile as a look-up would.
    fn read_sink(&mut self, stag: u32) -> Option<Arc<Mr>> {
        if let Some(mr) = self.cached_region(stag) {
            return Some(mr);
        }
        let slot = usize::try_from(self.qp.reads.lock().head()?.cookie).ok()?;
        let sq = self.qp.sq.lock();
        let w = sq.wqes.slot_contents(slot)?;
        if w.state != WqeState::Reading || w.nsge == 0 {
            return None;
        }
        sq.sges.of(slot).first()?.mr.clone().filter(|mr| mr.stag == stag)
    }
}

impl Verbs for QpVerbs<'_> {
    fn check_stag(&mut self, stag: u32, to: u64, len: u32, access: Access) -> Result<(), StagError> {
        let mr = self.region(stag).ok_or(StagError::InvalidStag)?;
        // Only inbound RDMA Writes (RemoteWrite) and Read Requests (RemoteRead)
        // come here; a Read Response is matched against our outstanding Read
        // and its sink checked for local write access in `rx_event`.
        let need = match access {
            Access::RemoteWrite => Need::RemoteWrite,
            Access::RemoteRead => Need::RemoteRead,
        };
        mr.check(self.qp.pd_id(), to, u64::from(len), need)?;
        self.mr = Some(mr);
        Ok(())
    }

    fn recv_buffer_len(&mut self) -> Option<u32> {
        self.qp.rq.lock().wqes.front().map(|w| w.len)
    }

    type Orq = Orq;

    fn reads<R>(&mut self, f: impl FnOnce(&mut Reads<Orq>) -> R) -> R {
        f(&mut self.qp.reads.lock())
    }
}
