// SPDX-License-Identifier: GPL-2.0
//! The QP's connection: establishing it on a negotiated socket, the socket's
//! callbacks, errors (TERMINATE and the error report) and disconnection.

use super::*;
use crate::{
    proto::{
        ddp::TxQueues,
        mpa::{Negotiated, Rtr, RtrMode, rx::RxFramer, tx::TxFramer},
        rdmap::{engine::{OrqEntry, RecvEngine}, Terminate},
        ring::Ring,
    },
    sys::{
        errno::econnaborted,
        socket::{SocketEvent, SocketEvents, TcpSocket},
    },
    uapi::*,
    verbs::{events::event, limits, stats},
};

use core::sync::atomic::Ordering;
use kernel::{
    alloc::KVVec,
    prelude::*,
    sync::{Arc, ArcBorrow},
};

/// Connection state.
pub(crate) struct Conn {
    pub(crate) state: QpState,
    pub(crate) sock: Option<Arc<TcpSocket>>,
    pub(crate) neg: Option<Negotiated>,
    pub(crate) local: SrnicSockaddr,
    pub(crate) remote: SrnicSockaddr,
    /// A TERMINATE the transmit work must send before it closes.
    pub(super) term_to_send: Option<Terminate>,
    /// The error report (flush with this status for the oldest operation, and
    /// QP_ERROR) waiting until `term_to_send` is on the wire: a program that
    /// destroys the QP when it learns of the error must not lose the TERMINATE.
    pub(super) report_pending: Option<u32>,
    /// The TERMINATE that ended the connection (`SrnicWc::term` encoding).
    pub(crate) term: u32,
    /// Inbound Read Requests to answer, in order.
    pub(super) irq: Ring<KVVec<InboundRead>>,
    /// Responder in peer-to-peer mode: nothing may be sent before the RTR arrived.
    pub(super) await_rtr: bool,
    /// Initiator in peer-to-peer mode: the RTR message to send first.
    pub(super) send_rtr: Option<RtrMode>,
    /// The connection manager work's job (connect or accept parameters).
    pub(crate) cm_job: Option<crate::iwarp::cm::CmJob>,
    pub(super) disconnect_reported: bool,
    /// Destroyed (or its file released): no event may name its handle any more.
    pub(crate) destroyed: bool,
}

impl Qp {
    /// Makes the QP ready to send: called by the connection manager once MPA
    /// negotiation succeeded on `sock`.
    pub(crate) fn establish(self: &Arc<Self>, sock: Arc<TcpSocket>, neg: Negotiated) -> Result {
        // Before any QP lock: the socket lock nests inside `rx` and outside `conn`.
        let addrs = sock.addrs().ok();
        let ord = (neg.ord as usize).min(limits::MAX_ORD) as u16;
        let ird = (neg.ird as usize).min(limits::MAX_IRD) as u16;
        {
            let mut tx = self.tx.lock();
            let mut rx = self.rx.lock();
            tx.framer = TxFramer::new(neg.crc_tx, neg.markers_tx);
            tx.queues = TxQueues::new();
            // One FPDU per TCP segment (RFC 5044 section 5.1): at most the MSS,
            // each ending a TCP record (send_message). siw's receiver mishandles
            // a pad/CRC trailer split across two segments (CRC errors), which
            // FPDUs spanning segments produce.
            let mss = match sock.mss() {
                m if m >= 64 => m,
                _ => limits::FPDU_BUDGET,
            };
            tx.max_ulpdu = tx.framer.max_ulpdu(mss.min(limits::FPDU_BUDGET)).unwrap_or(1024);
            tx.active = true;
            rx.framer = RxFramer::new(neg.crc_rx, neg.markers_rx);
            rx.engine = RecvEngine::new(ird, ord, [OrqEntry::default(); limits::MAX_ORD]);
            rx.place = None;
            rx.active = true;
            let mut c = self.conn.lock();
            // Only a QP that is still connecting takes the socket: one that was
            // destroyed (or failed) while MPA start-up ran refuses it, and the
            // caller's drop of the socket closes the connection.
            if c.state != QpState::Connecting || c.destroyed {
                tx.active = false;
                rx.active = false;
                return Err(econnaborted());
            }
            match neg.rtr {
                Rtr::None => {}
                Rtr::Send(mode) => c.send_rtr = Some(mode),
                Rtr::Await(_) => {
                    c.await_rtr = true;
                    rx.engine.expect_rtr();
                }
            }
            if let Some((l, r)) = addrs {
                c.local = crate::iwarp::cm::to_abi_addr(l);
                c.remote = crate::iwarp::cm::to_abi_addr(r);
            }
            c.neg = Some(neg);
            c.sock = Some(sock.clone());
            c.state = QpState::Rts;
        }
        sock.set_callbacks(self.clone())?;
        stats::CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        // Data may have arrived before the callbacks were installed.
        self.kick_rx();
        self.kick_tx();
        Ok(())
    }

    /// The socket, if connected.
    pub(super) fn socket(&self) -> Option<Arc<TcpSocket>> {
        self.conn.lock().sock.clone()
    }

    /// Moves the QP to ERROR: records the TERMINATE (to be sent, or
    /// received), fails the operation it concerns and flushes everything else,
    /// and reports `SRNIC_EVENT_QP_ERROR` (for a TERMINATE to send: after the
    /// transmit work sent it, see [`Self::report_pending`]).
    pub(super) fn fail(self: &Arc<Self>, f: Failure) {
        let head_status = f.head_status();
        let term = f.term_word();
        {
            let mut c = self.conn.lock();
            if c.state == QpState::Error {
                return;
            }
            c.state = QpState::Error;
            c.term = term;
            if let Some(t) = f.to_send() {
                c.term_to_send = Some(t);
                c.report_pending = Some(head_status);
            }
        }
        match f {
            Failure::Detected(_) => stats::TERMINATES_SENT.fetch_add(1, Ordering::Relaxed),
            Failure::Received(_) => stats::TERMINATES_RECEIVED.fetch_add(1, Ordering::Relaxed),
            Failure::Closed => 0,
        };
        pr_info!(
            "QP {}: error: TERMINATE {} (layer/type/code {:#06x})\n",
            self.handle,
            if matches!(f, Failure::Received(_)) { "received" } else { "sent" },
            term & 0xffff
        );
        if f.to_send().is_none() {
            self.report_error(head_status, term);
        }
        // The transmit work sends the TERMINATE (if any), closes the socket and
        // then reports the error.
        self.kick_tx();
    }

    /// Flushes every outstanding work request (the oldest in progress with
    /// `head_status`) and reports `SRNIC_EVENT_QP_ERROR` with `term`.
    pub(super) fn report_error(&self, head_status: u32, term: u32) {
        self.flush(head_status, term);
        let mut ev = event(SRNIC_EVENT_QP_ERROR, self.handle);
        ev.term = term;
        self.events.push(ev);
    }

    /// Makes the error report that `fail` deferred until its TERMINATE was sent
    /// (or could no longer be).
    pub(super) fn report_pending(&self) {
        let pending = {
            let mut c = self.conn.lock();
            c.report_pending.take().map(|s| (s, c.term))
        };
        if let Some((status, term)) = pending {
            self.report_error(status, term);
        }
    }
    /// Handles a peer close or a local disconnect: flush and report once.
    pub(super) fn disconnected(self: &Arc<Self>) {
        // A TERMINATE that can no longer be sent: report the error now.
        self.report_pending();
        let report = {
            let mut c = self.conn.lock();
            let was_error = c.state == QpState::Error;
            c.state = QpState::Error;
            let r = !c.disconnect_reported;
            c.disconnect_reported = true;
            r && (!was_error || c.term == 0)
        };
        self.flush(SRNIC_WC_WR_FLUSH_ERR, 0);
        if report {
            self.events.push(event(SRNIC_EVENT_DISCONNECTED, self.handle));
        }
        self.close_socket(false);
    }

    /// Detaches and closes the socket (callbacks removed first).
    pub(crate) fn close_socket(&self, abort: bool) {
        let sock = self.conn.lock().sock.take();
        if let Some(sock) = sock {
            // SAFETY: the callbacks on a QP's socket are always installed for `Qp`.
            drop(unsafe { sock.clear_callbacks::<Qp>() });
            sock.shutdown(abort);
        }
    }

    /// Local disconnect (`SRNIC_IOCTL_DISCONNECT`).
    pub(crate) fn disconnect(self: &Arc<Self>, abort: bool) -> Result {
        let st = self.conn.lock().state;
        match st {
            QpState::Rts | QpState::Closing | QpState::Error => {}
            _ => return Err(EINVAL),
        }
        self.close_socket(abort);
        self.disconnected();
        Ok(())
    }

    /// Tears the QP down (destroy or file release): no events, no completions.
    pub(crate) fn teardown(&self) {
        {
            let mut c = self.conn.lock();
            c.state = QpState::Error;
            c.destroyed = true;
        }
        self.close_socket(false);
        // Release the memory regions the queues still reference.
        let mut sq = self.sq.lock();
        sq.sges.release_all();
        sq.wqes.clear();
        sq.sent = 0;
        drop(sq);
        let mut rq = self.rq.lock();
        rq.sges.release_all();
        rq.wqes.clear();
    }
}

impl SocketEvents for Qp {
    fn socket_event(this: ArcBorrow<'_, Self>, ev: SocketEvent) {
        let qp: Arc<Qp> = this.into();
        match ev {
            SocketEvent::Readable | SocketEvent::State => qp.kick_rx(),
            SocketEvent::Writable => qp.kick_tx(),
        }
    }
}
