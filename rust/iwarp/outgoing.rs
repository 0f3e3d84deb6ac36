// SPDX-License-Identifier: GPL-2.0
//! An outgoing connection: the initiator's side of MPA start-up (RFC 5044
//! section 7.1) for a QP that called CONNECT.
//!
//! Nothing waits for the peer. The TCP connect is started without waiting;
//! the socket's callbacks queue the connection's work item, which sends the
//! MPA Request once TCP is connected, then reads the Reply as it arrives
//! (exactly: bytes behind it belong to the QP's first FPDU) and feeds it to
//! the initiator's state machine. A timer bounds the whole start-up
//! (`CONNECT_TIMEOUT_MS` plus `REPLY_TIMEOUT_MS`). A QP destroyed meanwhile
//! closes the socket (`Qp::teardown`), which ends it at once: the peer sees
//! the close, and nothing is left. It holds the module while it lives.

use crate::{
    iwarp::{
        handover::{connect_failed, establish},
        mpa_io::{FrameReader, CONNECT_TIMEOUT_MS, REPLY_TIMEOUT_MS},
        params::{check_mss, PrivateData},
    },
    proto::mpa::{
        frame::MAX_FRAME_LEN,
        negotiate::{Initiator, InitiatorOutcome, MpaConfig},
        Negotiated,
    },
    sys::{
        errno::{econnaborted, econnrefused, eproto, etimedout},
        module_ref::ModuleRef,
        socket::{Attached, SockAddr, SocketEvent, SocketEvents, TcpSocket},
        timer::{Timer, TimerTarget},
        wq,
    },
    uapi::*,
    verbs::qp::Qp,
};
use kernel::{
    impl_has_work, new_mutex, new_work,
    prelude::*,
    sync::{Arc, ArcBorrow, Mutex},
    workqueue::{Work, WorkItem},
};

/// Where the initiator is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// TCP is connecting.
    Connecting,
    /// The Request is sent; the Reply is awaited.
    AwaitReply,
}

/// The mutable state of an outgoing connection.
struct Inner {
    /// The socket, with its callbacks going here; `None` once finished.
    sock: Option<Attached<Outgoing>>,
    phase: Phase,
    ini: Initiator,
    reader: FrameReader,
}

/// A QP's connection being set up as MPA initiator.
#[pin_data]
pub(crate) struct Outgoing {
    qp: Arc<Qp>,
    pd: PrivateData,
    #[pin]
    inner: Mutex<Inner>,
    timer: Timer<Outgoing>,
    #[pin]
    work: Work<Outgoing>,
    /// It may outlive its QP's file (until its socket is closed).
    _module: ModuleRef,
}

impl_has_work! {
    impl HasWork<Self> for Outgoing { self.work }
}

/// How a step ended.
enum Step {
    /// More must happen first (TCP connecting, Reply bytes to come).
    Wait,
    /// The Reply accepted: hand the socket to the QP.
    Accepted(Negotiated),
    /// The peer rejected the connection.
    Rejected,
    /// It failed.
    Failed(Error),
}

impl Outgoing {
    /// Starts connecting the Connecting `qp` to `addr`.
    pub(crate) fn start(qp: Arc<Qp>, addr: &SockAddr, cfg: MpaConfig, pd: PrivateData) -> Result {
        let sock = Arc::new(TcpSocket::connect(addr)?, GFP_KERNEL)?;
        let timer = Timer::new()?;
        let this = Arc::pin_init(
            pin_init!(Self {
                qp,
                pd,
                inner <- new_mutex!(Inner {
                    sock: None,
                    phase: Phase::Connecting,
                    ini: Initiator::new(cfg),
                    reader: FrameReader::new(),
                }, "srnic_outgoing"),
                timer,
                work <- new_work!("srnic_outgoing"),
                _module: ModuleRef::new(),
            }),
            GFP_KERNEL,
        )?;
        let attached = Attached::new(sock.clone(), this.clone())?;
        this.inner.lock().sock = Some(attached);
        // Destroying the QP closes this socket, which ends the start-up at
        // once (its state change queues the work, which finds the QP gone).
        this.qp.set_startup_socket(sock);
        if let Err(e) = this.timer.arm(&this, (CONNECT_TIMEOUT_MS + REPLY_TIMEOUT_MS) as u32) {
            // Closes the socket; the caller reports the failure.
            drop(this.take_socket());
            return Err(e);
        }
        // TCP may have connected before the callbacks were installed.
        this.kick();
        Ok(())
    }

    fn kick(self: &Arc<Self>) {
        let _ = wq::queue().enqueue(self.clone());
    }

    /// Takes the socket (callbacks removed) and stops the timer: the
    /// start-up is over. `None` when it was over already.
    fn take_socket(&self) -> Option<Arc<TcpSocket>> {
        let attached = self.inner.lock().sock.take()?;
        self.timer.cancel();
        let (sock, _this) = attached.detach();
        Some(sock)
    }

    /// Ends the start-up with `err` (the connection is reset).
    fn fail(self: &Arc<Self>, event_type: u32, err: Error, peer_pd: &[u8]) {
        if let Some(sock) = self.take_socket() {
            sock.shutdown(true);
            connect_failed(&self.qp, event_type, err, peer_pd);
        }
    }

    /// One step: send the Request once connected, read the Reply.
    fn step(&self) -> Step {
        let mut i = self.inner.lock();
        let Some(sock) = i.sock.as_ref().map(|a| a.socket().clone()) else { return Step::Wait };
        if i.phase == Phase::Connecting {
            match sock.connect_result() {
                Ok(false) => return Step::Wait,
                Err(e) => return Step::Failed(e),
                Ok(true) => {}
            }
            if let Err(e) = check_mss(&sock) {
                return Step::Failed(e);
            }
            sock.set_nodelay();
            let mut buf = [0u8; MAX_FRAME_LEN];
            let sent = i
                .ini
                .request(self.pd.as_slice(), &mut buf)
                .map_err(|_| EINVAL)
                .and_then(|n| sock.send_now(&buf[..n]));
            if let Err(e) = sent {
                return Step::Failed(e);
            }
            i.phase = Phase::AwaitReply;
        }
        let Inner { reader, ini, .. } = &mut *i;
        let frame = match reader.read(&sock) {
            Ok(None) => return Step::Wait,
            Ok(Some(f)) => f,
            Err(e) => return Step::Failed(e),
        };
        match ini.on_bytes(frame) {
            Ok((_, Some(InitiatorOutcome::Accepted(neg)))) => Step::Accepted(neg),
            Ok((_, Some(InitiatorOutcome::Rejected))) => Step::Rejected,
            _ => Step::Failed(eproto()),
        }
    }

    /// Copies the peer's private data (of its Reply) into `out`.
    fn peer_pd<'a>(&self, out: &'a mut [u8; MAX_FRAME_LEN]) -> &'a [u8] {
        let i = self.inner.lock();
        let p = i.ini.peer_private_data();
        let n = p.len().min(out.len());
        out[..n].copy_from_slice(&p[..n]);
        &out[..n]
    }

    fn run_step(self: &Arc<Self>) {
        if !self.qp.is_connecting() {
            // Destroyed meanwhile: nothing is reported on it.
            return self.fail(SRNIC_EVENT_CONNECT_ERROR, econnaborted(), &[]);
        }
        match self.step() {
            Step::Wait => {}
            Step::Accepted(neg) => {
                let Some(sock) = self.take_socket() else { return };
                let mut buf = [0u8; MAX_FRAME_LEN];
                establish(&self.qp, sock, neg, self.peer_pd(&mut buf), false);
            }
            Step::Rejected => {
                if let Some(sock) = self.take_socket() {
                    sock.shutdown(false);
                    let mut buf = [0u8; MAX_FRAME_LEN];
                    connect_failed(&self.qp, SRNIC_EVENT_REJECTED, econnrefused(), self.peer_pd(&mut buf));
                }
            }
            Step::Failed(e) => self.fail(SRNIC_EVENT_CONNECT_ERROR, e, &[]),
        }
    }
}

impl WorkItem for Outgoing {
    type Pointer = Arc<Outgoing>;
    fn run(this: Arc<Outgoing>) {
        this.run_step();
    }
}

impl SocketEvents for Outgoing {
    fn socket_event(this: ArcBorrow<'_, Self>, _ev: SocketEvent) {
        let this: Arc<Outgoing> = this.into();
        this.kick();
    }
}

impl TimerTarget for Outgoing {
    fn timer_fired(this: Arc<Self>) {
        this.fail(SRNIC_EVENT_CONNECT_ERROR, etimedout(), &[]);
    }
}
