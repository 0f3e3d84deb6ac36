// SPDX-License-Identifier: GPL-2.0
//! Queue pairs: the iWARP data path of one connection.
//!
//! A QP owns a send queue and a receive queue of work requests (rings allocated
//! when the QP is created, so posting allocates nothing), and, once connected,
//! a TCP socket with the MPA/DDP/RDMAP state of the protocol cores.
//!
//! Execution: receive runs where the data arrives, in the socket's data-ready
//! callback (softirq), as siw's does; transmit in a poster's system call or on
//! srnic's workqueue; whatever may sleep (reporting an error, flushing,
//! closing) in process context, on the workqueue.
//! - Receive ([`Qp::rx_ready`]): `tcp_read_sock` hands the socket buffers to the
//!   MPA framer piece by piece; payload is copied once, from the skb straight
//!   into the pinned pages of the target memory region or receive buffer. A
//!   failure or the end of the stream is left to the receive work
//!   ([`Qp::rx_run`]), which also reads what arrived before the callbacks
//!   were installed.
//! - Transmit ([`Qp::tx_run`]): runs in the poster's context unless another
//!   transmitter is running, which then runs again ([`Qp::transmit`]);
//!   segments work requests into FPDUs, stages each FPDU's framing (the CRC,
//!   the kernel's crc32c, computed over all of it) and hands it to TCP with
//!   non-blocking sends, payload straight from the pinned source pages
//!   (`qp/outbound.rs`). When TCP's send buffer is full the run returns; the
//!   socket's write-space callback queues the transmit work.
//!
//! Locks, in the order they nest: `tx` (transmit state, held while sending; a
//! mutex), the socket's lock, `rx` (receive state), then the leaves `conn`,
//! `sq`, `rq`, `reads` (the ORQ and IRD count; reset under `conn` when a
//! connection starts), the CQ rings and the MR table. All but `tx` are
//! bottom-half-safe spinlocks (`sys::sync::SpinLockBh`): the receive path
//! takes them in softirq context, so nothing under them sleeps. The receive
//! side never takes `tx`: a TERMINATE it must send is handed over in `conn`
//! and the transmit work sends it.
//!
//! Errors: any protocol violation sends a TERMINATE and moves the QP to ERROR:
//! the operation that failed completes with an error status (and the TERMINATE
//! in `term`), every other outstanding work request is flushed, and
//! `SRNIC_EVENT_QP_ERROR` is reported. When srnic sends the TERMINATE, the
//! completions and the event follow once the transmit work has sent it, so a
//! program that destroys the QP on learning of the error does not lose it.
//!
//! The QP is split along the seams of an RNIC driver: this file holds the QP
//! (creation, its work items, `QUERY_QP`, destruction); `qp/queues.rs` the send
//! and receive rings, posting and completion; `qp/conn.rs` the connection
//! (establish, errors, disconnect, socket callbacks); `qp/rx.rs` the receive and
//! placement path; `qp/tx.rs` the transmit path and `qp/outbound.rs` the
//! message it is sending.

mod conn;
mod failure;
mod outbound;
mod queues;
mod rx;
mod tx;

pub(crate) use self::{conn::Established, queues::Local, rx::RxMode};
use self::{
    conn::Conn,
    failure::Failure,
    queues::{InboundRead, RecvQueue, RecvWqe, SendQueue, SendWqe, Sge, WqeState},
    rx::RxState,
    tx::TxState,
};
use crate::{
    new_spinlock_bh,
    proto::{
        lifecycle::State,
        mpa::rx::RxFramer,
        rdmap::{
            engine::RecvEngine,
            reads::{OrqEntry, Reads},
        },
    },
    sys::{
        gfp::{NoIo, ACCOUNTED},
        sync::SpinLockBh,
        timer::{Timer, TimerTarget},
        task,
        trace::{self, Cm, Site},
        wq,
    },
    uapi::*,
    verbs::{
        budget::{self, Budget, Charge},
        cq::{Cq, Due},
        events::Events,
        limits,
        mr::MrTable,
        pd::{Pd, PdUse},
        stats::{Live, Object},
    },
};

use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use kernel::{
    alloc::{KBox, KVVec},
    impl_has_work,
    new_mutex,
    new_work,
    prelude::*,
    sync::{Arc, Mutex},
    workqueue::{Work, WorkItem},
};

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

/// A QP, with its reference count, fits a 4 KiB allocation: the next size
/// kmalloc has is 8 KiB, and every idle QP would cost twice as much (the
/// benchmark's kernel memory per idle QP, Documentation/srnic/performance.rst).
/// Not on a kernel with lock debugging, whose every lock carries lockdep's
/// state.
#[cfg(not(any(CONFIG_DEBUG_LOCK_ALLOC, CONFIG_DEBUG_SPINLOCK)))]
const _: () = assert!(budget::arc::<Qp>() <= 4096, "a QP outgrew a 4 KiB allocation");

/// A queue pair.
#[pin_data(PinnedDrop)]
pub(crate) struct Qp {
    /// The QP's handle (reported in events and completions).
    pub(crate) handle: u32,
    /// The pid of the process that created it (tracepoints, resource views).
    pub(crate) owner: i32,
    pd: PdUse,
    pub(crate) send_cq: Arc<Cq>,
    pub(crate) recv_cq: Arc<Cq>,
    mrs: Arc<MrTable>,
    pub(crate) events: Arc<Events>,
    pub(crate) caps: QpCaps,
    /// Where it reads its socket.
    rx_mode: RxMode,
    #[pin]
    conn: SpinLockBh<Conn>,
    /// `conn`'s lifecycle state as of its last release ([`Qp::state`]): the
    /// post and transmit paths check it without taking `conn`.
    state: AtomicU8,
    #[pin]
    sq: SpinLockBh<SendQueue>,
    #[pin]
    rq: SpinLockBh<RecvQueue>,
    #[pin]
    rx: SpinLockBh<RxState>,
    /// The RDMA Reads in both directions (ORQ, IRD count), which the
    /// transmitter shares with the receive engine: apart from `rx`, so that
    /// a post never waits for a receiver placing what a read brought.
    #[pin]
    reads: SpinLockBh<Reads<Orq>>,
    #[pin]
    tx: Mutex<TxState>,
    #[pin]
    rx_work: Work<Qp, 0>,
    #[pin]
    tx_work: Work<Qp, 1>,
    /// A transmitter is running, and a transmitter must look at the queues
    /// again before it stops (see [`Qp::transmit`]).
    tx_running: AtomicBool,
    tx_again: AtomicBool,
    /// The receive work holds (or is taking) the socket's lock for a read,
    /// and a post left its transmit to it (see [`Qp::post_transmit`]).
    rx_reading: AtomicBool,
    tx_deferred: AtomicBool,
    /// Payload bytes sent and received (`QUERY_QP`: progress of transfers).
    tx_bytes: AtomicU64,
    rx_bytes: AtomicU64,
    /// FPDUs sent and received (the resource view).
    tx_fpdus: AtomicU64,
    rx_fpdus: AtomicU64,
    /// A responder without peer-to-peer mode sends nothing until the
    /// initiator's first FPDU arrived or the hold ran out (see
    /// [`Qp::establish`]).
    hold: Hold,
    _charge: Charge,
    _live: Live,
}

/// The storage of a QP's outstanding-Read queue, allocated with the QP (apart
/// from it, as siw allocates its ORQ: the QP fits a 4 KiB allocation).
struct Orq(KBox<[OrqEntry; limits::MAX_ORD]>);

impl AsRef<[OrqEntry]> for Orq {
    fn as_ref(&self) -> &[OrqEntry] {
        &self.0[..]
    }
}

impl AsMut<[OrqEntry]> for Orq {
    fn as_mut(&mut self) -> &mut [OrqEntry] {
        &mut self.0[..]
    }
}

/// A responder's hold on its first FPDU: on, and the timer that ends it.
struct Hold {
    on: AtomicBool,
    timer: Timer<Qp>,
}

impl_has_work! {
    impl HasWork<Self, 0> for Qp { self.rx_work }
    impl HasWork<Self, 1> for Qp { self.tx_work }
}

/// `n` copies of `v`, allocated on the user's behalf (`ACCOUNTED`).
fn filled<T: Clone>(n: usize, v: T) -> Result<KVVec<T>> {
    Ok(KVVec::from_elem(v, n, ACCOUNTED)?)
}

impl Qp {
    /// What a QP with capacities `caps` takes: the QP, its send queue (work
    /// requests, their SGEs and inline bytes), its receive queue (work
    /// requests and SGEs), its queue of inbound READs and its queue of
    /// outstanding local READs.
    pub(crate) fn footprint(caps: &QpCaps) -> Result<usize> {
        let sq = caps.max_send_wr as usize;
        let rq = caps.max_recv_wr as usize;
        budget::sum(&[
            budget::arc::<Self>(),
            budget::array::<SendWqe>(sq)?,
            budget::array::<Sge>(sq.checked_mul(caps.max_send_sge as usize).ok_or(ENOMEM)?)?,
            sq.checked_mul(caps.max_inline as usize).ok_or(ENOMEM)?,
            budget::array::<RecvWqe>(rq)?,
            budget::array::<Sge>(rq.checked_mul(caps.max_recv_sge as usize).ok_or(ENOMEM)?)?,
            budget::array::<InboundRead>(limits::MAX_IRD)?,
            budget::array::<OrqEntry>(limits::MAX_ORD)?,
        ])
    }

    /// Creates a QP in state INIT, charged to `budget`, that reads its
    /// socket as `rx_mode` says.
    #[expect(clippy::too_many_arguments)]
    pub(crate) fn new(
        handle: u32,
        pd: &Arc<Pd>,
        send_cq: Arc<Cq>,
        recv_cq: Arc<Cq>,
        mrs: Arc<MrTable>,
        events: Arc<Events>,
        caps: QpCaps,
        rx_mode: RxMode,
        budget: &Arc<Budget>,
    ) -> Result<Arc<Self>> {
        let charge = budget.charge(Self::footprint(&caps)?)?;
        let sq = SendQueue::new(&caps)?;
        let rq = RecvQueue::new(&caps)?;
        let conn = Conn::new()?;
        let orq = Orq(KBox::new([OrqEntry::default(); limits::MAX_ORD], ACCOUNTED)?);
        let hold = Hold { on: AtomicBool::new(false), timer: Timer::new()? };
        send_cq.users.fetch_add(1, Ordering::AcqRel);
        recv_cq.users.fetch_add(1, Ordering::AcqRel);
        let qp = Arc::pin_init(
            pin_init!(Self {
                handle,
                owner: task::current_pid(),
                pd: PdUse::new(pd),
                send_cq,
                recv_cq,
                mrs,
                events,
                caps,
                rx_mode,
                conn <- new_spinlock_bh!(conn, "srnic_qp_conn"),
                state: AtomicU8::new(State::Idle.index()),
                sq <- new_spinlock_bh!(sq, "srnic_qp_sq"),
                rq <- new_spinlock_bh!(rq, "srnic_qp_rq"),
                rx <- new_spinlock_bh!(RxState {
                    framer: RxFramer::new(false, false),
                    engine: RecvEngine::new(),
                    place: None,
                    more: false,
                    tagged: None,
                    fpdus: 0,
                    bytes: 0,
                    send_due: Due::default(),
                    recv_due: Due::default(),
                    active: false,
                    left: None,
                }, "srnic_qp_rx"),
                reads <- new_spinlock_bh!(Reads::new(0, 0, orq), "srnic_qp_reads"),
                tx <- new_mutex!(TxState::new(), "srnic_qp_tx"),
                rx_work <- new_work!("srnic_qp_rx"),
                tx_work <- new_work!("srnic_qp_tx"),
                tx_running: AtomicBool::new(false),
                tx_again: AtomicBool::new(false),
                rx_reading: AtomicBool::new(false),
                tx_deferred: AtomicBool::new(false),
                tx_bytes: AtomicU64::new(0),
                rx_bytes: AtomicU64::new(0),
                tx_fpdus: AtomicU64::new(0),
                rx_fpdus: AtomicU64::new(0),
                hold,
                _charge: charge,
                _live: Live::new(Object::Qp),
            }),
            ACCOUNTED,
        )?;
        Ok(qp)
    }

    /// The PD's unique id.
    pub(crate) fn pd_id(&self) -> u64 {
        self.pd.id()
    }

    /// The QP's PD.
    pub(crate) fn pd(&self) -> &Arc<Pd> {
        self.pd.pd()
    }

    fn kick_rx(self: &Arc<Self>) {
        let _ = wq::dp_queue().enqueue::<Arc<Qp>, 0>(self.clone());
    }

    fn kick_tx(self: &Arc<Self>) {
        let _ = wq::dp_queue().enqueue::<Arc<Qp>, 1>(self.clone());
    }

    /// A post's transmit ([`Qp::transmit`]), unless the receive work holds
    /// the socket's lock for a read: then the post leaves its request to it
    /// (`tx_deferred`), which transmits once it has released the lock,
    /// rather than sleep in `lock_sock` until then (a context switch and a
    /// wake-up of the posting task, often on the other CPU). As NVMe over
    /// TCP's submitter leaves its command to the queue's I/O work. Both
    /// sides store their flag before they load the other's (sequentially
    /// consistent): either the post sees the read end and transmits itself,
    /// or the receive work sees the request left to it (or both, and the
    /// second transmit finds nothing, or another transmitter, see
    /// [`Qp::transmit`]).
    fn post_transmit(self: &Arc<Self>) {
        if self.rx_reading.load(Ordering::SeqCst) {
            self.tx_deferred.store(true, Ordering::SeqCst);
            if self.rx_reading.load(Ordering::SeqCst) {
                return;
            }
        }
        self.transmit();
    }

    /// Transmits what is due from the calling context: a post (which saves
    /// the hop through the workqueue, a wake-up and a context switch, between
    /// a post and its first byte on the wire) or the transmit work. Nobody
    /// waits for another transmitter: whoever finds one running
    /// (`tx_running`) leaves what it added to that one, which looks again
    /// before it returns (`tx_again`). So a post does not spin or sleep on
    /// the transmit lock while another CPU sends, and the sends themselves
    /// never wait (see [`Qp::tx_run`]). The runs of one call send at most
    /// [`limits::TX_FPDUS_PER_RUN`] FPDUs (a run that sends nothing counts
    /// as one) before they leave the rest to the work. The caller holds none
    /// of the QP's locks and may sleep.
    fn transmit(self: &Arc<Self>) {
        let _noio = NoIo::enter();
        // Said before looking at `tx_running`: a transmitter that stops
        // running after this sees it (below); one that stopped before is
        // not in the way. Sequentially consistent, both flags, for that.
        self.tx_again.store(true, Ordering::SeqCst);
        let mut budget = limits::TX_FPDUS_PER_RUN;
        while !self.tx_running.swap(true, Ordering::SeqCst) {
            // Reads the last `true` stored: what its poster queued before
            // is seen by the run.
            self.tx_again.swap(false, Ordering::SeqCst);
            let before = budget;
            self.clone().tx_run(&mut budget);
            self.tx_running.store(false, Ordering::SeqCst);
            if budget == before {
                budget -= 1;
            }
            if budget == 0 {
                // Queued after `tx_running` is clear, so the work runs.
                self.kick_tx();
                return;
            }
            if !self.tx_again.load(Ordering::SeqCst) {
                return;
            }
        }
    }

    /// Ends a responder's hold (the initiator's first FPDU arrived, or the
    /// hold ran out): transmit may start.
    fn release_hold(self: &Arc<Self>) {
        if self.hold.on.swap(false, Ordering::AcqRel) {
            self.hold.timer.cancel();
            self.kick_tx();
        }
    }

    /// Emits the connection-management tracepoint `ev` with the QP's
    /// addresses and `status` (0 or a negative errno). Takes `conn`: the
    /// caller holds none of the QP's locks.
    pub(crate) fn trace_cm(&self, ev: Cm, status: i32) {
        self.trace_site(|s| trace::cm(ev, s, status));
    }

    /// Calls `f` with where the QP is (owner, handle, addresses), for a
    /// tracepoint. Takes `conn`, as [`Qp::trace_cm`].
    fn trace_site(&self, f: impl FnOnce(Site<'_>)) {
        let (local, remote) = {
            let c = self.conn();
            (c.local, c.remote)
        };
        f(Site { pid: self.owner, id: self.handle, local: &local, remote: &remote });
    }

    /// What `SRNIC_IOCTL_QUERY_QP` reports.
    pub(crate) fn query(&self, q: &mut SrnicQueryQp) {
        let c = self.conn();
        q.state = conn::state_abi(c.life.state());
        q.term = c.term;
        q.local = c.local;
        q.remote = c.remote;
        if let Some(n) = c.neg {
            q.ird = u32::from(n.ird);
            q.ord = u32::from(n.ord);
            q.mpa_flags = c.mpa_flags;
        }
        q.tx_bytes = self.tx_bytes.load(Ordering::Relaxed);
        q.rx_bytes = self.rx_bytes.load(Ordering::Relaxed);
    }
}

impl Qp {
    /// What the resource view (`SRNIC_IOCTL_QUERY_RES`) reports of the QP,
    /// but its owner.
    pub(crate) fn res(&self, r: &mut SrnicResQp) {
        // The connection and byte counts as QUERY_QP reports them.
        let mut q = SrnicQueryQp::default();
        self.query(&mut q);
        (r.state, r.term, r.local, r.remote) = (q.state, q.term, q.local, q.remote);
        (r.ird, r.ord, r.mpa_flags) = (q.ird, q.ord, q.mpa_flags);
        (r.tx_bytes, r.rx_bytes) = (q.tx_bytes, q.rx_bytes);
        r.send_queued = self.sq.lock().wqes.len() as u32;
        r.recv_queued = self.rq.lock().wqes.len() as u32;
        r.send_cq = self.send_cq.handle;
        r.recv_cq = self.recv_cq.handle;
        r.max_send_wr = self.caps.max_send_wr;
        r.max_recv_wr = self.caps.max_recv_wr;
        r.tx_fpdus = self.tx_fpdus.load(Ordering::Relaxed);
        r.rx_fpdus = self.rx_fpdus.load(Ordering::Relaxed);
    }
}

impl TimerTarget for Qp {
    /// The responder's hold ran out before the initiator's first FPDU came.
    fn timer_fired(this: Arc<Qp>) {
        this.release_hold();
    }
}

// A QP's data path runs without starting I/O from reclaim: a kernel client's
// (a block device's) writeback may depend on it (see `gfp::NoIo`).
impl WorkItem<0> for Qp {
    type Pointer = Arc<Qp>;
    fn run(this: Arc<Qp>) {
        let _noio = NoIo::enter();
        this.rx_run();
    }
}

impl WorkItem<1> for Qp {
    type Pointer = Arc<Qp>;
    fn run(this: Arc<Qp>) {
        this.transmit();
    }
}

#[pinned_drop]
impl PinnedDrop for Qp {
    fn drop(self: Pin<&mut Self>) {
        self.send_cq.users.fetch_sub(1, Ordering::AcqRel);
        self.recv_cq.users.fetch_sub(1, Ordering::AcqRel);
    }
}
