// SPDX-License-Identifier: GPL-2.0
//! The QP's connection: its life cycle (the state machine of
//! `proto/src/lifecycle.rs`), taking over a negotiated socket, the socket's
//! callbacks, errors (TERMINATE and the error report) and disconnection.

use super::*;
use crate::{
    proto::{
        ddp::TxQueues,
        lifecycle::{Lifecycle, State},
        mpa::{Negotiated, Rtr, RtrMode, rx::RxFramer, tx::TxFramer},
        rdmap::{engine::RecvEngine, Terminate},
        ring::Ring,
    },
    sys::{
        errno::{econnaborted, econnreset, enetdown, etimedout},
        ratelimit::net_ratelimit,
        param,
        socket::{Attached, Locked, SocketEvent, SocketEvents, TcpSocket, AF_INET6},
        sync::SpinLockBhBackend,
        trace::{self, Cm},
    },
    uapi::*,
    verbs::{events::event, limits, mr::Mr, stats},
};

use core::sync::atomic::{AtomicU8, Ordering};
use kernel::{
    alloc::KVVec,
    prelude::*,
    sync::{lock::Guard, Arc, ArcBorrow},
};

/// What the connection manager hands over with an established socket.
pub(crate) struct Established {
    /// The negotiated MPA settings.
    pub(crate) neg: Negotiated,
    /// The connection's addresses, local and remote.
    pub(crate) local: SrnicSockaddr,
    pub(crate) remote: SrnicSockaddr,
    /// The `SRNIC_MPA_*` flags describing `neg` (what QUERY_QP reports).
    pub(crate) mpa_flags: u32,
    /// This side accepted (the MPA responder).
    pub(crate) responder: bool,
}

/// Connection state.
pub(crate) struct Conn {
    pub(super) life: Lifecycle,
    /// The socket, with its callbacks going to this QP.
    sock: Option<Attached<Qp>>,
    pub(super) neg: Option<Negotiated>,
    pub(super) mpa_flags: u32,
    pub(super) local: SrnicSockaddr,
    pub(super) remote: SrnicSockaddr,
    /// A TERMINATE the transmit work must send before it closes.
    pub(super) term_to_send: Option<Terminate>,
    /// The error report (flush with this status for the oldest operation, and
    /// QP_ERROR) waiting until `term_to_send` is on the wire: a program that
    /// destroys the QP when it learns of the error must not lose the TERMINATE.
    pub(super) report_pending: Option<u32>,
    /// The TERMINATE that ended the connection (`SrnicWc::term` encoding).
    pub(super) term: u32,
    /// Inbound Read Requests to answer, in order.
    pub(super) irq: Ring<KVVec<InboundRead>>,
    /// Responder in peer-to-peer mode: nothing may be sent before the RTR arrived.
    pub(super) await_rtr: bool,
    /// Initiator in peer-to-peer mode: the RTR message to send first.
    pub(super) send_rtr: Option<RtrMode>,
    /// While connecting as initiator: the start-up's socket, closed by
    /// [`Qp::teardown`] so that a destroyed QP's start-up ends at once.
    startup: Option<Arc<TcpSocket>>,
}

/// The locked [`Conn`] of a QP (see [`Qp::conn`]).
pub(super) struct ConnGuard<'a> {
    guard: Guard<'a, Conn, SpinLockBhBackend>,
    state: &'a AtomicU8,
}

impl core::ops::Deref for ConnGuard<'_> {
    type Target = Conn;

    fn deref(&self) -> &Conn {
        &self.guard
    }
}

impl core::ops::DerefMut for ConnGuard<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.guard
    }
}

impl Drop for ConnGuard<'_> {
    /// Publishes the state before the lock is released (the guard field is
    /// dropped after this), so the copy changes in the lock's order.
    fn drop(&mut self) {
        self.state.store(self.guard.life.state().index(), Ordering::Release);
    }
}

impl Conn {
    pub(super) fn new() -> Result<Self> {
        Ok(Self {
            life: Lifecycle::new(),
            sock: None,
            neg: None,
            mpa_flags: 0,
            local: SrnicSockaddr::default(),
            remote: SrnicSockaddr::default(),
            term_to_send: None,
            report_pending: None,
            term: 0,
            irq: Ring::new(filled(limits::MAX_IRD, InboundRead::EMPTY)?),
            await_rtr: false,
            send_rtr: None,
            startup: None,
        })
    }
}

/// An ABI address as the log shows it: `a.b.c.d:port`, or `[v6]:port`.
struct AddrFmt<'a>(&'a SrnicSockaddr);

impl core::fmt::Display for AddrFmt<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let a = &self.0.addr;
        if self.0.family == AF_INET6 {
            f.write_str("[")?;
            for (i, pair) in a.chunks(2).enumerate() {
                let sep = if i == 0 { "" } else { ":" };
                write!(f, "{sep}{:x}", u16::from_be_bytes([pair[0], pair[1]]))?;
            }
            write!(f, "]:{}", self.0.port)
        } else {
            write!(f, "{}.{}.{}.{}:{}", a[0], a[1], a[2], a[3], self.0.port)
        }
    }
}

/// `SRNIC_QPS_*` for a connection state.
pub(super) fn state_abi(s: State) -> u32 {
    match s {
        State::Idle => SRNIC_QPS_INIT,
        State::Connecting => SRNIC_QPS_CONNECTING,
        State::Connected => SRNIC_QPS_RTS,
        State::Closing => SRNIC_QPS_CLOSING,
        State::Error | State::Destroyed => SRNIC_QPS_ERROR,
    }
}

impl Qp {
    /// CONNECT or ACCEPT between `local` (zero for CONNECT: not known yet)
    /// and `remote`: the QP must be new (EINVAL otherwise); it is Connecting
    /// from now on.
    pub(crate) fn start_connect(&self, local: SrnicSockaddr, remote: SrnicSockaddr) -> Result {
        let mut c = self.conn();
        c.life.start_connect().map_err(|_| EINVAL)?;
        c.local = local;
        c.remote = remote;
        Ok(())
    }

    /// Makes the QP ready to send: called by the connection manager once MPA
    /// negotiation succeeded on `sock`. A QP that is no longer connecting
    /// (destroyed meanwhile) refuses with ECONNABORTED and drops the socket,
    /// which closes the connection.
    pub(crate) fn establish(self: &Arc<Self>, sock: Arc<TcpSocket>, est: Established) -> Result {
        let neg = est.neg;
        let ord = (neg.ord as usize).min(limits::MAX_ORD) as u16;
        let ird = (neg.ird as usize).min(limits::MAX_IRD) as u16;
        // Before any QP lock: the socket lock nests inside `rx` and outside `conn`.
        // The callbacks only queue work, which finds no socket until it is ours.
        let mss = match sock.mss() {
            m if m >= limits::MIN_MSS => m,
            _ => limits::FPDU_BUDGET,
        };
        // A peer that stops reading (or acknowledging) fails the connection
        // instead of holding its data and this QP for ever.
        sock.set_user_timeout(param::tx_stall_timeout_ms());
        let attached = Attached::new(sock, self.clone())?;
        // The start-up's socket reference, dropped after the locks (releasing
        // a socket sleeps).
        let mut startup = None;
        let refused = {
            let mut tx = self.tx.lock();
            let mut rx = self.rx.lock();
            let mut c = self.conn();
            if c.life.establish().is_err() {
                Some(attached)
            } else {
                tx.framer = TxFramer::new(neg.crc_tx, neg.markers_tx);
                tx.queues = TxQueues::new();
                // One FPDU per TCP segment (RFC 5044 section 5.1): at most the MSS;
                // one that fills a segment shares TCP's buffer with the next, any
                // shorter one ends a TCP record (`Staged::push`). siw's receiver mishandles
                // a pad/CRC trailer split across two segments (CRC errors), which
                // FPDUs spanning segments produce.
                tx.max_ulpdu = tx.framer.max_ulpdu(mss.min(limits::FPDU_BUDGET)).unwrap_or(limits::FALLBACK_ULPDU);
                tx.active = true;
                rx.framer = RxFramer::new(neg.crc_rx, neg.markers_rx);
                rx.engine = RecvEngine::new();
                self.reads.lock().reset(ird, ord);
                rx.place = None;
                rx.tagged = None;
                rx.active = true;
                rx.left = None;
                match neg.rtr {
                    // RFC 5044 section 7.1.2: an MPA responder receives a
                    // valid FPDU before it sends one, so that the initiator
                    // has switched its receiver to FPDUs first (siw's
                    // initiator fails the connection when an FPDU is queued
                    // behind the Reply it reads). Peer-to-peer mode does this
                    // with the RTR; without it, a ULP whose server sends
                    // first would wait for ever, so the hold also ends after
                    // RESPONDER_HOLD_MS.
                    Rtr::None if est.responder => self.hold.on.store(true, Ordering::Release),
                    Rtr::None => {}
                    Rtr::Send(mode) => c.send_rtr = Some(mode),
                    Rtr::Await(_) => {
                        c.await_rtr = true;
                        rx.engine.expect_rtr();
                    }
                }
                c.local = est.local;
                c.remote = est.remote;
                c.mpa_flags = est.mpa_flags;
                c.neg = Some(neg);
                c.sock = Some(attached);
                startup = c.startup.take();
                None
            }
        };
        drop(startup);
        if let Some(attached) = refused {
            drop(attached.detach());
            return Err(econnaborted());
        }
        stats::CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        if self.hold.on.load(Ordering::Acquire)
            && self.hold.timer.arm(self, limits::RESPONDER_HOLD_MS).is_err()
        {
            self.release_hold();
        }
        // Data may have arrived before the callbacks were installed.
        self.kick_rx();
        self.kick_tx();
        Ok(())
    }

    /// Records the socket of the connection start-up under way (see
    /// [`Conn::startup`]); a QP no longer connecting (destroyed, or drained)
    /// closes it at once.
    pub(crate) fn set_startup_socket(&self, sock: Arc<TcpSocket>) {
        let mut c = self.conn();
        if c.life.state() != State::Connecting {
            drop(c);
            sock.shutdown(true);
        } else {
            c.startup = Some(sock);
        }
    }

    /// Whether the QP is still waiting for its connection (not destroyed).
    pub(crate) fn is_connecting(&self) -> bool {
        self.conn().life.state() == State::Connecting
    }

    /// MPA start-up failed: the QP goes to ERROR. Returns whether the failure
    /// may be reported (not for a QP destroyed meanwhile: its handle may
    /// already name another QP).
    pub(crate) fn connect_failed(&self) -> bool {
        let (startup, ok) = {
            let mut c = self.conn();
            (c.startup.take(), c.life.connect_failed().is_ok())
        };
        // Releasing a socket sleeps: not under `conn`.
        drop(startup);
        ok
    }

    /// The socket, if connected.
    pub(super) fn socket(&self) -> Option<Arc<TcpSocket>> {
        self.conn().sock.as_ref().map(|a| a.socket().clone())
    }

    /// `conn`, locked. Releasing it publishes the connection's state for
    /// [`Qp::state`].
    pub(super) fn conn(&self) -> ConnGuard<'_> {
        ConnGuard { guard: self.conn.lock(), state: &self.state }
    }

    /// The connection's state without taking `conn`: the state `conn` was
    /// last released with. Whoever took a lock after a release of `conn`
    /// (the send queue's, say) sees that release's state or a later one;
    /// decisions that must not race with a transition take `conn`.
    pub(super) fn state(&self) -> State {
        // Only `ConnGuard` stores, and only indices of states.
        State::from_index(self.state.load(Ordering::Acquire)).unwrap_or(State::Destroyed)
    }

    /// Moves the QP to ERROR: records the TERMINATE (to be sent, or
    /// received), fails the operation it concerns and flushes everything else,
    /// and reports `SRNIC_EVENT_QP_ERROR` (for a TERMINATE to send: after the
    /// transmit work sent it, see [`Self::report_pending`]).
    pub(super) fn fail(self: &Arc<Self>, f: Failure) {
        let head_status = f.head_status();
        let term = f.term_word();
        {
            let mut c = self.conn();
            if c.life.fail().is_err() {
                return;
            }
            c.term = term;
            if let Some(t) = f.to_send() {
                c.term_to_send = Some(t);
                c.report_pending = Some(head_status);
            }
        }
        if let Some(t) = f.terminate() {
            stats::count_terminate(t.layer, matches!(f, Failure::Received(_)));
        }
        match f {
            Failure::Detected(t) | Failure::Received(t) => self.trace_site(|s| {
                trace::terminate(s, matches!(f, Failure::Received(_)), t.layer, t.etype, t.ecode)
            }),
            Failure::Closed => self.trace_cm(Cm::QpError, econnreset().to_errno()),
            Failure::TimedOut | Failure::LinkDown => self.trace_cm(Cm::QpError, f.event_status()),
        }
        // Peers choose how often this happens: the log is rate-limited, and
        // names the QP by its owner and addresses (handles are per file).
        if net_ratelimit() {
            self.trace_site(|s| {
                let (l, r) = (AddrFmt(s.local), AddrFmt(s.remote));
                let why = match f {
                    Failure::Detected(_) | Failure::Received(_) => {
                        let way = if matches!(f, Failure::Received(_)) { "received" } else { "sent" };
                        let code = term & 0xffff;
                        return pr_info!("QP {} of pid {} ({l} -> {r}): error: TERMINATE {way} (layer/type/code {code:#06x})\n", s.id, s.pid);
                    }
                    Failure::Closed => "the stream ended inside a message",
                    Failure::TimedOut => "the peer stopped reading or acknowledging (tx_stall_timeout_ms)",
                    Failure::LinkDown => "its interface went down",
                };
                pr_info!("QP {} of pid {} ({l} -> {r}): error: {why}\n", s.id, s.pid);
            });
        }
        if f.to_send().is_none() {
            self.report_error(head_status, term, f.event_status());
        }
        // The transmit work sends the TERMINATE (if any), closes the socket and
        // then reports the error.
        self.kick_tx();
    }

    /// Flushes every outstanding work request (the oldest in progress with
    /// `head_status`) and reports `SRNIC_EVENT_QP_ERROR` with `term`.
    pub(super) fn report_error(&self, head_status: u32, term: u32, status: i32) {
        self.flush(head_status, term);
        if self.conn().life.is_destroyed() {
            return;
        }
        let mut ev = event(SRNIC_EVENT_QP_ERROR, self.handle);
        ev.term = term;
        ev.status = status;
        self.events.push(ev);
    }

    /// Makes the error report that `fail` deferred until its TERMINATE was sent
    /// (or could no longer be).
    pub(super) fn report_pending(&self) {
        let pending = {
            let mut c = self.conn();
            c.report_pending.take().map(|s| (s, c.term))
        };
        if let Some((status, term)) = pending {
            self.report_error(status, term, 0);
        }
    }
    /// The socket closed or failed under the receive or transmit work: a peer
    /// that stopped reading or acknowledging (TCP's user timeout ran out, see
    /// [`Qp::establish`]) fails the QP; any other end is a disconnect.
    pub(super) fn connection_lost(self: &Arc<Self>, sock: &TcpSocket) {
        // A TERMINATE that a data-ready callback read before the stream
        // failed, and that the receive work has not handled yet, came first:
        // it fails the QP, so that the flush carries it (a transmit that
        // failed on the peer's reset can get here before the receive work).
        if let Some(f) = self.take_rx_failure() {
            self.fail(f);
        }
        match sock.error() {
            Some(e) if e == etimedout() => self.fail(Failure::TimedOut),
            Some(e) if e == enetdown() => self.fail(Failure::LinkDown),
            Some(e) => self.disconnected_with(e.to_errno()),
            None => self.disconnected(),
        }
    }

    /// Handles a peer close or a local disconnect: flush and report once.
    pub(super) fn disconnected(self: &Arc<Self>) {
        self.disconnected_with(0);
    }

    /// [`Qp::disconnected`], the socket having failed with `status` (a
    /// negative errno, 0 for an orderly close), which the disconnect
    /// tracepoint shows.
    fn disconnected_with(self: &Arc<Self>, status: i32) {
        // A TERMINATE that can no longer be sent: report the error now.
        self.report_pending();
        let (first, report) = {
            let mut c = self.conn();
            let d = c.life.disconnected();
            // Once, and not after a failure that reported a TERMINATE.
            (d.first, d.first && (!d.was_error || c.term == 0))
        };
        if first {
            self.trace_cm(Cm::Disconnect, status);
        }
        self.flush(SRNIC_WC_WR_FLUSH_ERR, 0);
        if report {
            self.events.push(event(SRNIC_EVENT_DISCONNECTED, self.handle));
        }
        self.close_socket(false);
    }

    /// Detaches and closes the socket (callbacks removed first).
    pub(crate) fn close_socket(&self, abort: bool) {
        let attached = self.conn().sock.take();
        if let Some(attached) = attached {
            let (sock, _qp) = attached.detach();
            sock.shutdown(abort);
        }
    }

    /// Local disconnect (`SRNIC_IOCTL_DISCONNECT`).
    pub(crate) fn disconnect(self: &Arc<Self>, abort: bool) -> Result {
        self.conn().life.begin_close().map_err(|_| EINVAL)?;
        self.close_socket(abort);
        self.disconnected();
        Ok(())
    }

    /// Drains the QP (the kernel verbs API's `srnic_kv_drain_qp`): its
    /// connection ends with a reset (reported once, as
    /// `SRNIC_EVENT_DISCONNECTED`), a connection being set up is given up (no
    /// event), and every work request posted so far has its completion in its
    /// CQ when this returns (a flush status, unless it had completed). The QP
    /// stays in ERROR: later posts complete at once with a flush status.
    /// EINVAL for a destroyed QP.
    pub(crate) fn drain(self: &Arc<Self>) -> Result {
        let abandoned = {
            let mut c = self.conn();
            if matches!(c.life.state(), State::Connected | State::Closing) {
                None
            } else {
                c.life.abandon().map_err(|_| EINVAL)?;
                Some(c.startup.take())
            }
        };
        match abandoned {
            // A connection: it closes, and the close flushes.
            None => self.disconnect(true),
            Some(startup) => {
                // A start-up under way ends now (reset: the peer sees the close).
                if let Some(s) = startup {
                    s.shutdown(true);
                }
                self.flush(SRNIC_WC_WR_FLUSH_ERR, 0);
                Ok(())
            }
        }
    }

    /// Tears the QP down (destroy or file release): no events, no completions.
    pub(crate) fn teardown(&self) {
        let startup = {
            let mut c = self.conn();
            c.life.destroy();
            c.startup.take()
        };
        // A start-up under way ends now (reset: the peer sees the close).
        if let Some(s) = startup {
            s.shutdown(true);
        }
        self.close_socket(false);
        self.hold.timer.cancel();
        // A message under way holds its regions: give it up.
        self.tx.lock().end();
        {
            let mut sq = self.sq.lock();
            sq.wqes.clear();
            sq.sent = 0;
        }
        self.rq.lock().wqes.clear();
        // Release the memory regions the queues still reference, a batch at a
        // time outside the queues' locks: a last reference unpins its pages
        // here, before DESTROY_QP returns, not in a work item later.
        const BATCH: usize = 32;
        let mut batch: [Option<Arc<Mr>>; BATCH] = Default::default();
        let mut release = |take: &dyn Fn(&mut usize, &mut [Option<Arc<Mr>>]) -> usize| {
            let mut at = 0;
            while take(&mut at, &mut batch) != 0 {
                for r in batch.iter_mut() {
                    drop(r.take());
                }
            }
        };
        release(&|at, out| self.sq.lock().sges.take_refs(at, out));
        release(&|at, out| self.rq.lock().sges.take_refs(at, out));
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

    fn data_ready(this: ArcBorrow<'_, Self>, sock: &Locked<'_>) {
        let qp: Arc<Qp> = this.into();
        qp.rx_ready(sock);
    }
}
