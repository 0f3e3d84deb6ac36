// SPDX-License-Identifier: GPL-2.0
//! Queue pairs: the iWARP data path of one connection.
//!
//! A QP owns a send queue and a receive queue of work requests (rings allocated
//! when the QP is created, so posting allocates nothing), and, once connected,
//! a TCP socket with the MPA/DDP/RDMAP state of the protocol cores.
//!
//! Execution: every protocol step runs in process context on srnic's workqueue.
//! The socket's callbacks (softirq) only queue the QP's receive or transmit work.
//! - Receive ([`Qp::rx_run`]): `tcp_read_sock` hands the socket buffers to the
//!   MPA framer piece by piece; payload is copied once, from the skb straight
//!   into the pinned pages of the target memory region or receive buffer.
//! - Transmit ([`Qp::tx_run`]): segments work requests into FPDUs and sends
//!   header bytes and payload straight from the mapped source pages, computing
//!   the CRC (the kernel's crc32c) over what it sends; no staging copy.
//!
//! Locks, in the order they nest: `tx` (transmit state, held while sending),
//! `rx` (receive state), then the leaves `conn`, `sq`, `rq`, CQ rings, the MR
//! table and the event queue. The receive side never takes `tx`: a TERMINATE it
//! must send is handed over in `conn` and the transmit work sends it.
//!
//! Errors: any protocol violation sends a TERMINATE and moves the QP to ERROR:
//! the operation that failed completes with an error status (and the TERMINATE
//! in `term`), every other outstanding work request is flushed, and
//! `SRNIC_EVENT_QP_ERROR` is reported. When srnic sends the TERMINATE, the
//! completions and the event follow once the transmit work has sent it, so a
//! program that destroys the QP on learning of the error does not lose it.

use crate::{
    proto::{
        ddp::{Placement, TxQueues},
        mpa::{rx::RxEvent, rx::RxFramer, tx::TxFramer, tx::TxStep, Negotiated, Rtr, RtrMode},
        rdmap::{
            engine::{Access, Completion, EngineError, OrqEntry, RecvEngine, Verbs},
            engine::read_source_terminate,
            tx::{OutboundMessage, WorkRequest},
            ReadRequest, SendOp, StagError, TermCode, Terminate,
        },
    },
    sys::{
        errno::eproto,
        crc::KernelCrc32c,
        socket::{SocketEvent, SocketEvents, TcpSocket},
        wq,
    },
    uapi::*,
    verbs::cq::Cq,
    verbs::events::{event, Events},
    verbs::limits,
    verbs::mr::{Mr, MrTable, Need},
    verbs::pd::{Pd, PdUse},
    verbs::stats::{self, Live, Object},
};
use crate::verbs::table::ring_add;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    alloc::KVVec,
    impl_has_work, new_mutex, new_work,
    prelude::*,
    sync::{Arc, ArcBorrow, Mutex},
    workqueue::{Work, WorkItem},
};

/// QP states (`SRNIC_QPS_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpState {
    Init,
    Connecting,
    Rts,
    Closing,
    Error,
}

impl QpState {
    fn abi(self) -> u32 {
        match self {
            QpState::Init => SRNIC_QPS_INIT,
            QpState::Connecting => SRNIC_QPS_CONNECTING,
            QpState::Rts => SRNIC_QPS_RTS,
            QpState::Closing => SRNIC_QPS_CLOSING,
            QpState::Error => SRNIC_QPS_ERROR,
        }
    }
}

/// Capacities of a QP, as created.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpCaps {
    pub(crate) max_send_wr: u32,
    pub(crate) max_recv_wr: u32,
    pub(crate) max_send_sge: u32,
    pub(crate) max_recv_sge: u32,
    pub(crate) max_inline: u32,
    pub(crate) sq_sig_all: bool,
}

/// One scatter/gather element, resolved to its memory region at post time.
#[derive(Clone, Default)]
struct Sge {
    mr: Option<Arc<Mr>>,
    addr: u64,
    len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WqeState {
    /// Posted, not yet transmitted.
    Posted,
    /// An RDMA Read whose request went out; waiting for the response.
    Reading,
    /// Finished with this status.
    Done(u32),
}

/// A send work request in the send queue.
#[derive(Clone)]
struct SendWqe {
    wr_id: u64,
    opcode: u16,
    signaled: bool,
    fence: bool,
    inline: bool,
    nsge: usize,
    len: u32,
    remote_addr: u64,
    rkey: u32,
    inv_stag: u32,
    state: WqeState,
    term: u32,
}

/// The send queue: a ring in posting order. `head` is the oldest request not yet
/// completed, `next` the next one to transmit.
struct SendQueue {
    wqes: KVVec<SendWqe>,
    sges: KVVec<Sge>,
    inline: KVVec<u8>,
    head: usize,
    next: usize,
    count: usize,
}

struct RecvWqe {
    wr_id: u64,
    nsge: usize,
    len: u32,
}

/// The receive queue: a ring in posting order; Sends consume it from `head`.
struct RecvQueue {
    wqes: KVVec<RecvWqe>,
    sges: KVVec<Sge>,
    head: usize,
    count: usize,
}

/// Why a Read Response could not be sent.
enum ReadResponseError {
    /// The source failed its check: this TERMINATE ends the QP.
    Source(Terminate),
    /// The socket failed (the peer is gone).
    Socket(Error),
}

/// An inbound RDMA Read Request waiting for its response.
#[derive(Clone, Copy)]
struct InboundRead {
    msn: u32,
    req: ReadRequest,
}

/// Connection state.
pub(crate) struct Conn {
    pub(crate) state: QpState,
    pub(crate) sock: Option<Arc<TcpSocket>>,
    pub(crate) neg: Option<Negotiated>,
    pub(crate) local: SrnicSockaddr,
    pub(crate) remote: SrnicSockaddr,
    /// A TERMINATE the transmit work must send before it closes.
    term_to_send: Option<Terminate>,
    /// The error report (flush with this status for the oldest operation, and
    /// QP_ERROR) waiting until `term_to_send` is on the wire: a program that
    /// destroys the QP when it learns of the error must not lose the TERMINATE.
    report_pending: Option<u32>,
    /// The TERMINATE that ended the connection (`SrnicWc::term` encoding).
    pub(crate) term: u32,
    /// Inbound Read Requests to answer, in order.
    irq: KVVec<InboundRead>,
    irq_head: usize,
    irq_count: usize,
    /// Responder in peer-to-peer mode: nothing may be sent before the RTR arrived.
    await_rtr: bool,
    /// Initiator in peer-to-peer mode: the RTR message to send first.
    send_rtr: Option<RtrMode>,
    /// The connection manager work's job (connect or accept parameters).
    pub(crate) cm_job: Option<crate::iwarp::cm::CmJob>,
    disconnect_reported: bool,
}

/// Receive state: the framer, the RDMAP engine and the current placement.
struct RxState {
    framer: RxFramer,
    engine: RecvEngine<[OrqEntry; limits::MAX_ORD]>,
    /// The current segment's placement, with its region for tagged ones.
    place: Option<(Placement, Option<Arc<Mr>>)>,
    active: bool,
}

/// Transmit state.
struct TxState {
    framer: TxFramer,
    queues: TxQueues,
    /// Largest ULPDU to send.
    max_ulpdu: u16,
    active: bool,
}

/// A queue pair.
#[pin_data(PinnedDrop)]
pub(crate) struct Qp {
    /// The QP's handle (reported in events and completions).
    pub(crate) handle: u32,
    pd: PdUse,
    pub(crate) send_cq: Arc<Cq>,
    pub(crate) recv_cq: Arc<Cq>,
    mrs: Arc<MrTable>,
    pub(crate) events: Arc<Events>,
    pub(crate) caps: QpCaps,
    #[pin]
    pub(crate) conn: Mutex<Conn>,
    #[pin]
    sq: Mutex<SendQueue>,
    #[pin]
    rq: Mutex<RecvQueue>,
    #[pin]
    rx: Mutex<RxState>,
    #[pin]
    tx: Mutex<TxState>,
    #[pin]
    rx_work: Work<Qp, 0>,
    #[pin]
    tx_work: Work<Qp, 1>,
    #[pin]
    pub(crate) cm_work: Work<Qp, 2>,
    /// Payload bytes sent and received (`QUERY_QP`: progress of transfers).
    tx_bytes: AtomicU64,
    rx_bytes: AtomicU64,
    _live: Live,
}

impl_has_work! {
    impl HasWork<Self, 0> for Qp { self.rx_work }
    impl HasWork<Self, 1> for Qp { self.tx_work }
    impl HasWork<Self, 2> for Qp { self.cm_work }
}

fn filled<T: Clone>(n: usize, v: T) -> Result<KVVec<T>> {
    let mut k = KVVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        k.push(v.clone(), GFP_KERNEL)?;
    }
    Ok(k)
}

/// The `SrnicWc::term` encoding of a TERMINATE; `received` sets bit 31.
pub(crate) fn term_word(t: &Terminate, received: bool) -> u32 {
    (u32::from(t.layer) << 12 | u32::from(t.etype) << 8 | u32::from(t.ecode))
        | if received { 1 << 31 } else { 0 }
}

impl Qp {
    /// Creates a QP in state INIT.
    pub(crate) fn new(
        handle: u32,
        pd: &Arc<Pd>,
        send_cq: Arc<Cq>,
        recv_cq: Arc<Cq>,
        mrs: Arc<MrTable>,
        events: Arc<Events>,
        caps: QpCaps,
    ) -> Result<Arc<Self>> {
        let sq_n = caps.max_send_wr as usize;
        let rq_n = caps.max_recv_wr as usize;
        let send_wqe = SendWqe {
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
        };
        let sq = SendQueue {
            wqes: filled(sq_n, send_wqe)?,
            sges: filled(sq_n * caps.max_send_sge as usize, Sge::default())?,
            inline: filled(sq_n * caps.max_inline as usize, 0u8)?,
            head: 0,
            next: 0,
            count: 0,
        };
        let mut rwqes = KVVec::with_capacity(rq_n, GFP_KERNEL)?;
        for _ in 0..rq_n {
            rwqes.push(RecvWqe { wr_id: 0, nsge: 0, len: 0 }, GFP_KERNEL)?;
        }
        let rq = RecvQueue {
            wqes: rwqes,
            sges: filled(rq_n * caps.max_recv_sge as usize, Sge::default())?,
            head: 0,
            count: 0,
        };
        let conn = Conn {
            state: QpState::Init,
            sock: None,
            neg: None,
            local: SrnicSockaddr::default(),
            remote: SrnicSockaddr::default(),
            term_to_send: None,
            report_pending: None,
            term: 0,
            irq: filled(
                limits::MAX_IRD,
                InboundRead {
                    msn: 0,
                    req: ReadRequest {
                        sink_stag: 0,
                        sink_to: 0,
                        read_size: 0,
                        src_stag: 0,
                        src_to: 0,
                    },
                },
            )?,
            irq_head: 0,
            irq_count: 0,
            await_rtr: false,
            send_rtr: None,
            cm_job: None,
            disconnect_reported: false,
        };
        send_cq.users.fetch_add(1, Ordering::AcqRel);
        recv_cq.users.fetch_add(1, Ordering::AcqRel);
        let qp = Arc::pin_init(
            pin_init!(Self {
                handle,
                pd: PdUse::new(pd),
                send_cq,
                recv_cq,
                mrs,
                events,
                caps,
                conn <- new_mutex!(conn, "srnic_qp_conn"),
                sq <- new_mutex!(sq, "srnic_qp_sq"),
                rq <- new_mutex!(rq, "srnic_qp_rq"),
                rx <- new_mutex!(RxState {
                    framer: RxFramer::new(false, false),
                    engine: RecvEngine::new(0, 0, [OrqEntry::default(); limits::MAX_ORD]),
                    place: None,
                    active: false,
                }, "srnic_qp_rx"),
                tx <- new_mutex!(TxState {
                    framer: TxFramer::new(false, false),
                    queues: TxQueues::new(),
                    max_ulpdu: 0,
                    active: false,
                }, "srnic_qp_tx"),
                rx_work <- new_work!("srnic_qp_rx"),
                tx_work <- new_work!("srnic_qp_tx"),
                cm_work <- new_work!("srnic_qp_cm"),
                tx_bytes: AtomicU64::new(0),
                rx_bytes: AtomicU64::new(0),
                _live: Live::new(Object::Qp),
            }),
            GFP_KERNEL,
        )?;
        Ok(qp)
    }

    /// The PD's unique id.
    pub(crate) fn pd_id(&self) -> u64 {
        self.pd.id()
    }

    fn kick_rx(self: &Arc<Self>) {
        let _ = wq::queue().enqueue::<Arc<Qp>, 0>(self.clone());
    }

    fn kick_tx(self: &Arc<Self>) {
        let _ = wq::queue().enqueue::<Arc<Qp>, 1>(self.clone());
    }

    /// Queues the connection manager work.
    pub(crate) fn kick_cm(self: &Arc<Self>) {
        let _ = wq::queue().enqueue::<Arc<Qp>, 2>(self.clone());
    }

    /// Resolves and checks the scatter/gather list of a work request.
    fn resolve_sges(&self, sges: &[SrnicSge], need: Need, out: &mut [Sge]) -> Result<u32> {
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
    fn socket(&self) -> Option<Arc<TcpSocket>> {
        self.conn.lock().sock.clone()
    }

    /// Moves the QP to ERROR: records the TERMINATE (`sent` to be sent, or
    /// `received`), fails the operation it concerns and flushes everything else,
    /// and reports `SRNIC_EVENT_QP_ERROR` (for a TERMINATE to send: after the
    /// transmit work sent it, see [`Self::report_pending`]).
    fn fail(self: &Arc<Self>, to_send: Option<Terminate>, received: Option<Terminate>) {
        let status_for_head;
        {
            let mut c = self.conn.lock();
            if c.state == QpState::Error {
                return;
            }
            c.state = QpState::Error;
            let t = to_send.or(received);
            c.term = t.map(|t| term_word(&t, received.is_some())).unwrap_or(0);
            // A TERMINATE from the peer fails our oldest operation in progress
            // (remote access errors: DDP tagged, RDMAP remote protection).
            status_for_head = match received {
                Some(t) if (t.layer == 1 && t.etype == 1) || (t.layer == 0 && t.etype == 1) => {
                    SRNIC_WC_REM_ACCESS_ERR
                }
                Some(_) => SRNIC_WC_REM_OP_ERR,
                None => SRNIC_WC_WR_FLUSH_ERR,
            };
            if to_send.is_some() {
                c.term_to_send = to_send;
                c.report_pending = Some(status_for_head);
            }
        }
        if to_send.is_some() {
            stats::TERMINATES_SENT.fetch_add(1, Ordering::Relaxed);
        }
        if received.is_some() {
            stats::TERMINATES_RECEIVED.fetch_add(1, Ordering::Relaxed);
        }
        let term = self.conn.lock().term;
        pr_info!(
            "QP {}: error: TERMINATE {} (layer/type/code {:#06x})\n",
            self.handle,
            if received.is_some() { "received" } else { "sent" },
            term & 0xffff
        );
        if to_send.is_none() {
            self.report_error(status_for_head, term);
        }
        // The transmit work sends the TERMINATE (if any), closes the socket and
        // then reports the error.
        self.kick_tx();
    }

    /// Flushes every outstanding work request (the oldest in progress with
    /// `head_status`) and reports `SRNIC_EVENT_QP_ERROR` with `term`.
    fn report_error(&self, head_status: u32, term: u32) {
        self.flush(head_status, term);
        let mut ev = event(SRNIC_EVENT_QP_ERROR, self.handle);
        ev.term = term;
        self.events.push(ev);
    }

    /// Makes the error report that `fail` deferred until its TERMINATE was sent
    /// (or could no longer be).
    fn report_pending(&self) {
        let pending = {
            let mut c = self.conn.lock();
            c.report_pending.take().map(|s| (s, c.term))
        };
        if let Some((status, term)) = pending {
            self.report_error(status, term);
        }
    }

    /// Completes every outstanding work request: the oldest send request still
    /// in progress with `head_status`, everything else with WR_FLUSH_ERR.
    fn flush(&self, head_status: u32, term: u32) {
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
    fn complete_sends(&self) {
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

    /// Handles a peer close or a local disconnect: flush and report once.
    fn disconnected(self: &Arc<Self>) {
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
        self.conn.lock().state = QpState::Error;
        self.close_socket(false);
        // Release the memory regions the queues still reference.
        let mut sq = self.sq.lock();
        for s in sq.sges.iter_mut() {
            s.mr = None;
        }
        sq.count = 0;
        drop(sq);
        let mut rq = self.rq.lock();
        for s in rq.sges.iter_mut() {
            s.mr = None;
        }
        rq.count = 0;
    }

    /// What `SRNIC_IOCTL_QUERY_QP` reports.
    pub(crate) fn query(&self, q: &mut SrnicQueryQp) {
        let c = self.conn.lock();
        q.state = c.state.abi();
        q.term = c.term;
        q.local = c.local;
        q.remote = c.remote;
        if let Some(n) = c.neg {
            q.ird = u32::from(n.ird);
            q.ord = u32::from(n.ord);
            q.mpa_flags = crate::iwarp::cm::negotiated_flags(&n);
        }
        q.tx_bytes = self.tx_bytes.load(Ordering::Relaxed);
        q.rx_bytes = self.rx_bytes.load(Ordering::Relaxed);
    }

    // ---- Receive ----

    fn rx_run(self: Arc<Self>) {
        let Some(sock) = self.socket() else { return };
        let mut failure: Option<(Option<Terminate>, Option<Terminate>)> = None;
        {
            let mut rx = self.rx.lock();
            if !rx.active {
                return;
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
                            }
                            failure = Some((Some(Terminate::new(code, None)), None));
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
            if r.is_err() || failure.is_some() {
                rx.active = false;
            }
        }
        if let Some((send, recv)) = failure {
            self.fail(send, recv);
        } else if sock.is_closed() {
            pr_info!("QP {}: connection closed by the peer\n", self.handle);
            self.disconnected();
        }
    }

    /// One receive event; `Err` carries the TERMINATE to send or the one received.
    fn rx_event(
        self: &Arc<Self>,
        rx: &mut RxState,
        ev: RxEvent<'_>,
    ) -> Result<(), (Option<Terminate>, Option<Terminate>)> {
        match ev {
            RxEvent::Header { header, ulpdu_len, payload_len } => {
                stats::RX_FPDUS.fetch_add(1, Ordering::Relaxed);
                let mut v = QpVerbs { qp: self, mr: None };
                match rx.engine.on_header(&mut v, &header, ulpdu_len, u32::from(payload_len)) {
                    Ok(crate::proto::rdmap::engine::RxAction::Place(p)) => {
                        // A Read Response is matched against our outstanding Read
                        // (not through `check_stag`): its sink is our own region.
                        let mr = match (p, v.mr) {
                            (_, Some(mr)) => Some(mr),
                            (Placement::Tagged { stag, to, len }, None) => {
                                match self.mrs.lookup(stag).filter(|mr| {
                                    mr.check(self.pd_id(), to, u64::from(len), Need::LocalWrite).is_ok()
                                }) {
                                    Some(mr) => Some(mr),
                                    None => {
                                        return Err((Some(Terminate::new(TermCode::TaggedInvalidStag, None)), None))
                                    }
                                }
                            }
                            (_, None) => None,
                        };
                        rx.place = Some((p, mr));
                    }
                    Ok(crate::proto::rdmap::engine::RxAction::Discard) => rx.place = None,
                    Err(e) => return Err(engine_failure(e)),
                }
            }
            RxEvent::Payload { data, seg_offset, .. } => {
                stats::RX_BYTES.fetch_add(data.len() as u64, Ordering::Relaxed);
                self.rx_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
                match &rx.place {
                    Some((Placement::Tagged { to, .. }, Some(mr))) => {
                        let at = to.wrapping_add(u64::from(seg_offset));
                        if mr.write(at, data).is_err() {
                            return Err((Some(Terminate::new(TermCode::TaggedBaseBounds, None)), None));
                        }
                    }
                    Some((Placement::Untagged { qn: 0, mo, .. }, _)) => {
                        let at = mo.wrapping_add(u32::from(seg_offset));
                        if self.place_recv(at, data).is_err() {
                            return Err((Some(Terminate::new(TermCode::UntaggedNoBuffer, None)), None));
                        }
                    }
                    _ => {}
                }
            }
            RxEvent::End => {
                rx.place = None;
                match rx.engine.on_end() {
                    Ok(Some(c)) => self.rx_complete(rx, c)?,
                    Ok(None) => {}
                    Err(e) => return Err(engine_failure(e)),
                }
            }
        }
        Ok(())
    }

    /// Copies Send payload at message offset `at` into the head receive buffer.
    fn place_recv(&self, at: u32, data: &[u8]) -> Result {
        let rq = self.rq.lock();
        if rq.count == 0 {
            return Err(EINVAL);
        }
        let h = rq.head;
        let w = &rq.wqes[h];
        let end = at.checked_add(data.len() as u32).ok_or(EINVAL)?;
        if end > w.len {
            return Err(EINVAL);
        }
        let base = h * self.caps.max_recv_sge as usize;
        let mut pos = 0u32; // message offset where the current SGE starts
        let mut src = data;
        let mut cur = at;
        for s in &rq.sges[base..base + w.nsge] {
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

    fn rx_complete(
        self: &Arc<Self>,
        rx: &mut RxState,
        c: Completion,
    ) -> Result<(), (Option<Terminate>, Option<Terminate>)> {
        match c {
            Completion::Recv { len, invalidate, solicited, .. } => {
                let mut wc = {
                    let mut rq = self.rq.lock();
                    let cap = rq.wqes.len();
                    let h = rq.head;
                    let wc = SrnicWc {
                        wr_id: rq.wqes[h].wr_id,
                        status: SRNIC_WC_SUCCESS,
                        opcode: SRNIC_WC_RECV,
                        byte_len: len,
                        qp_handle: self.handle,
                        flags: if solicited { SRNIC_WC_SOLICITED } else { 0 },
                        ..Default::default()
                    };
                    for s in h * self.caps.max_recv_sge as usize..(h + 1) * self.caps.max_recv_sge as usize {
                        rq.sges[s].mr = None;
                    }
                    rq.head = ring_add(h, 1, cap);
                    rq.count -= 1;
                    wc
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
                self.recv_cq.push(wc);
            }
            Completion::ReadDone { cookie, .. } => {
                {
                    let mut sq = self.sq.lock();
                    if let Some(w) = sq.wqes.get_mut(cookie as usize) {
                        w.state = WqeState::Done(SRNIC_WC_SUCCESS);
                    }
                }
                self.complete_sends();
                // An ORD slot is free again.
                self.kick_tx();
            }
            Completion::ReadRequest { msn, req } => {
                let mut c = self.conn.lock();
                let cap = c.irq.len();
                if c.irq_count == cap {
                    return Err((Some(Terminate::new(TermCode::IrdExceeded, None)), None));
                }
                let slot = ring_add(c.irq_head, c.irq_count, cap);
                c.irq[slot] = InboundRead { msn, req };
                c.irq_count += 1;
                drop(c);
                self.kick_tx();
            }
            Completion::Rtr => {
                self.conn.lock().await_rtr = false;
                self.kick_tx();
            }
            Completion::Terminated(t) => {
                rx.active = false;
                return Err((None, Some(t)));
            }
        }
        Ok(())
    }

    // ---- Transmit ----

    fn tx_run(self: Arc<Self>) {
        let Some(sock) = self.socket() else { return };
        let mut tx = self.tx.lock();
        if !tx.active {
            return;
        }
        loop {
            // A TERMINATE to send ends the connection.
            let (state, term, await_rtr, rtr) = {
                let mut c = self.conn.lock();
                (c.state, c.term_to_send.take(), c.await_rtr, c.send_rtr.take())
            };
            if let Some(t) = term {
                let _ = self.send_message(&mut tx, &sock, WorkRequest::Terminate(t), Payload::None);
                tx.active = false;
                drop(tx);
                self.close_socket(false);
                self.report_pending();
                return;
            }
            if state == QpState::Error {
                tx.active = false;
                drop(tx);
                self.close_socket(false);
                self.report_pending();
                return;
            }
            if state != QpState::Rts {
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
            let inbound = {
                let mut c = self.conn.lock();
                if c.irq_count > 0 {
                    let i = c.irq[c.irq_head];
                    c.irq_head = ring_add(c.irq_head, 1, c.irq.len());
                    c.irq_count -= 1;
                    Some(i)
                } else {
                    None
                }
            };
            if let Some(ir) = inbound {
                match self.send_read_response(&mut tx, &sock, ir) {
                    Ok(()) => {}
                    Err(ReadResponseError::Source(t)) => {
                        drop(tx);
                        self.fail(Some(t), None);
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

    fn tx_failed(self: &Arc<Self>, e: Error) {
        // The socket failed under us: the connection is gone.
        pr_info!("QP {}: transmit failed ({:?}): disconnected\n", self.handle, e);
        self.disconnected();
    }

    /// Transmits the next posted send request; `Ok(false)` when there is none
    /// (or it must wait: ORD full or a fence).
    fn send_next(self: &Arc<Self>, tx: &mut TxState, sock: &TcpSocket) -> Result<bool> {
        let (slot, wqe, sges) = {
            let sq = self.sq.lock();
            let in_flight = if sq.next >= sq.head {
                sq.next - sq.head
            } else {
                sq.next + sq.wqes.len() - sq.head
            };
            if sq.count == 0 || in_flight >= sq.count {
                return Ok(false);
            }
            let slot = sq.next;
            let w = sq.wqes[slot].clone();
            if w.fence {
                // Wait for every earlier Read to complete.
                let mut i = sq.head;
                while i != slot {
                    if sq.wqes[i].state == WqeState::Reading {
                        return Ok(false);
                    }
                    i = ring_add(i, 1, sq.wqes.len());
                }
            }
            let base = slot * self.caps.max_send_sge as usize;
            let mut sges: [Sge; limits::MAX_SGE] = Default::default();
            for (i, s) in sq.sges[base..base + w.nsge].iter().enumerate() {
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
                self.sq.lock().wqes[slot].state = WqeState::Reading;
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
        {
            let mut sq = self.sq.lock();
            sq.next = ring_add(slot, 1, sq.wqes.len());
        }
        self.send_message(tx, sock, wr, payload)?;
        if wqe.opcode as u32 != SRNIC_WR_RDMA_READ {
            self.finish_send(slot, SRNIC_WC_SUCCESS);
        }
        Ok(true)
    }

    fn finish_send(&self, slot: usize, status: u32) {
        {
            let mut sq = self.sq.lock();
            sq.wqes[slot].state = WqeState::Done(status);
            if sq.next == slot {
                sq.next = ring_add(slot, 1, sq.wqes.len());
            }
        }
        self.complete_sends();
    }

    /// Answers an inbound Read Request from the local source region.
    fn send_read_response(
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
    fn send_message(&self, tx: &mut TxState, sock: &TcpSocket, wr: WorkRequest, payload: Payload<'_>) -> Result {
        let crc = KernelCrc32c;
        let mut msg = OutboundMessage::new(wr, &mut tx.queues);
        let max = tx.max_ulpdu;
        let mut hdr = [0u8; crate::proto::rdmap::MAX_HDR_LEN];
        while let Some(seg) = msg.next_segment(max) {
            let hlen = seg.header.emit(&mut hdr).ok_or(EINVAL)?;
            let last_seg = seg.payload_offset + u32::from(seg.payload_len) >= wr.payload_len();
            let crc_on = tx.framer.crc_on();
            let mut fpdu = tx.framer.fpdu(&hdr[..hlen], seg.payload_len).map_err(|_| EINVAL)?;
            let mut held: Option<crate::proto::mpa::tx::Chunk> = None;
            loop {
                match fpdu.next(&crc).map_err(|_| EINVAL)? {
                    TxStep::Bytes(c) => {
                        if let Some(h) = held.take() {
                            sock.send(&[h.as_slice()], true)?;
                        }
                        held = Some(c);
                    }
                    TxStep::Payload { offset, len } => {
                        if let Some(h) = held.take() {
                            sock.send(&[h.as_slice()], true)?;
                        }
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
                    TxStep::Done => {
                        if let Some(h) = held.take() {
                            sock.send_record(&[h.as_slice()], !last_seg)?;
                        }
                        break;
                    }
                }
            }
            stats::TX_FPDUS.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Calls `f` with the pieces of message bytes `[at, at + len)` of `payload`.
    fn for_payload(
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
enum Payload<'a> {
    None,
    Inline(usize),
    Sges(&'a [Sge]),
}

fn send_wc(w: &SendWqe, status: u32, qp: u32, term: u32) -> SrnicWc {
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

fn engine_failure(e: EngineError) -> (Option<Terminate>, Option<Terminate>) {
    match e {
        EngineError::Terminate(_, t) => (Some(t), None),
        EngineError::Closed => (None, None),
    }
}

/// The verbs layer as the RDMAP engine sees it.
struct QpVerbs<'a> {
    qp: &'a Qp,
    /// The region the last successful tagged check named.
    mr: Option<Arc<Mr>>,
}

impl Verbs for QpVerbs<'_> {
    fn check_stag(&mut self, stag: u32, to: u64, len: u32, access: Access) -> Result<(), StagError> {
        let mr = self.qp.mrs.lookup(stag).ok_or(StagError::InvalidStag)?;
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
        let rq = self.qp.rq.lock();
        (rq.count > 0).then(|| rq.wqes[rq.head].len)
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

impl WorkItem<0> for Qp {
    type Pointer = Arc<Qp>;
    fn run(this: Arc<Qp>) {
        this.rx_run();
    }
}

impl WorkItem<1> for Qp {
    type Pointer = Arc<Qp>;
    fn run(this: Arc<Qp>) {
        this.tx_run();
    }
}

impl WorkItem<2> for Qp {
    type Pointer = Arc<Qp>;
    fn run(this: Arc<Qp>) {
        crate::iwarp::cm::run_job(this);
    }
}

#[pinned_drop]
impl PinnedDrop for Qp {
    fn drop(self: Pin<&mut Self>) {
        self.send_cq.users.fetch_sub(1, Ordering::AcqRel);
        self.recv_cq.users.fetch_sub(1, Ordering::AcqRel);
    }
}
