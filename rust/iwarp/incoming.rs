// SPDX-License-Identifier: GPL-2.0
//! An incoming connection: accepted by a listener, waiting for its MPA
//! Request (RFC 5044 section 7.1).
//!
//! Nothing waits for the peer: the socket's callbacks queue the connection's
//! work item, which reads what has arrived without blocking and feeds the
//! frame to the responder's state machine. A complete, valid Request is
//! filed as a [`ConnReq`] (if the listener's backlog has room) and reported
//! as `SRNIC_EVENT_CONNECT_REQUEST`; anything else closes the connection.
//! A connection whose Request has not arrived within the request timeout
//! (the `mpa_request_timeout_ms` module parameter) is closed by its timer.

use crate::{
    iwarp::{
        conn_req::{Backlog, ConnReq, ConnTable},
        mpa_io::{nothing_behind, FrameReader},
    },
    proto::mpa::{
        frame::MAX_FRAME_LEN,
        negotiate::{MpaConfig, Responder},
    },
    sys::{
        param,
        socket::{Attached, SocketEvent, SocketEvents, TcpSocket},
        timer::{Timer, TimerTarget},
        trace::{self, Cm, Site},
        wq,
    },
    uapi::*,
    verbs::{
        events::{event, Events},
        stats::{Live, Object},
    },
};
use kernel::{
    impl_has_work, new_mutex, new_work,
    prelude::*,
    sync::{Arc, ArcBorrow, Mutex},
    workqueue::{Work, WorkItem},
};

/// Where a complete Request goes: its listener's settings, the file's
/// request table and event queue, and the listener's backlog.
pub(crate) struct Filing {
    /// The listener's handle.
    pub(crate) handle: u32,
    /// The pid of the process that made the listener (tracepoints).
    pub(crate) owner: i32,
    /// The listener's MPA settings (what this side asks for).
    pub(crate) cfg: MpaConfig,
    pub(crate) conns: Arc<ConnTable>,
    pub(crate) events: Arc<Events>,
    pub(crate) backlog: Arc<Backlog>,
}

/// The state of an incoming connection.
struct Inner {
    /// The socket, with its callbacks going here; `None` once finished.
    sock: Option<Attached<Incoming>>,
    reader: FrameReader,
    /// Finished: filed, refused, closed or timed out.
    done: bool,
}

/// A connection waiting for its MPA Request.
#[pin_data]
pub(crate) struct Incoming {
    filing: Arc<Filing>,
    #[pin]
    inner: Mutex<Inner>,
    timer: Timer<Incoming>,
    #[pin]
    work: Work<Incoming>,
    _live: Live,
}

impl_has_work! {
    impl HasWork<Self> for Incoming { self.work }
}

impl Incoming {
    /// Takes over `sock`, accepted by a listener, and starts waiting for its
    /// Request, to be filed as `filing` says.
    pub(crate) fn start(filing: Arc<Filing>, sock: TcpSocket) -> Result<Arc<Self>> {
        sock.set_nodelay();
        let sock = Arc::new(sock, GFP_KERNEL)?;
        let timer = Timer::new()?;
        let this = Arc::pin_init(
            pin_init!(Self {
                filing,
                inner <- new_mutex!(Inner { sock: None, reader: FrameReader::new(), done: false }, "srnic_incoming"),
                timer,
                work <- new_work!("srnic_incoming"),
                _live: Live::new(Object::ConnRequest),
            }),
            GFP_KERNEL,
        )?;
        let attached = Attached::new(sock, this.clone())?;
        this.inner.lock().sock = Some(attached);
        if let Err(e) = this.timer.arm(&this, param::mpa_request_timeout_ms()) {
            this.abort();
            return Err(e);
        }
        // Bytes may have arrived before the callbacks were installed.
        this.kick();
        Ok(this)
    }

    /// Whether it has finished (its slot in the listener is free again).
    pub(crate) fn is_done(&self) -> bool {
        self.inner.lock().done
    }

    fn kick(self: &Arc<Self>) {
        let _ = wq::queue().enqueue(self.clone());
    }

    /// Closes the connection (reset) and finishes: eviction, listener stop,
    /// timeout and errors.
    pub(crate) fn abort(&self) {
        if let Some(sock) = self.finish() {
            sock.shutdown(true);
        }
    }

    /// Ends the wait, once: the timer stops and the callbacks are removed.
    /// Returns the socket, still open; `None` when it had ended already.
    fn finish(&self) -> Option<Arc<TcpSocket>> {
        let attached = {
            let mut i = self.inner.lock();
            if i.done {
                return None;
            }
            i.done = true;
            i.sock.take()
        }?;
        self.timer.cancel();
        Some(attached.detach().0)
    }

    /// Reads what arrived; files the Request once it is complete.
    fn step(self: &Arc<Self>) {
        let mut buf = [0u8; MAX_FRAME_LEN];
        let (n, sock) = {
            let mut i = self.inner.lock();
            let Some(sock) = i.sock.as_ref().map(|a| a.socket().clone()) else { return };
            match i.reader.read(&sock) {
                Ok(None) => return,
                Ok(Some(frame)) => {
                    buf[..frame.len()].copy_from_slice(frame);
                    (frame.len(), sock)
                }
                Err(_) => {
                    drop(i);
                    return self.abort();
                }
            }
        };
        // An FPDU pipelined behind the Request: refused (see `nothing_behind`).
        if !nothing_behind(&sock) {
            return self.abort();
        }
        let l = &self.filing;
        let mut resp = Responder::new(l.cfg);
        let peer = match resp.on_bytes(&buf[..n]) {
            Ok((_, Some(p))) => p,
            _ => return self.abort(),
        };
        // Excess requests are refused at once: the backlog is full.
        let Some(slot) = l.backlog.take() else { return self.abort() };
        let (local, remote) = sock.addrs().unwrap_or_default();
        drop(sock);
        // The socket becomes the request's: callbacks removed, kept open.
        let Some(sock) = self.finish() else { return };
        let req = Arc::pin_init(
            pin_init!(ConnReq {
                listener: l.handle,
                owner: l.owner,
                local,
                remote,
                sock <- new_mutex!(Some(sock), "srnic_connreq"),
                request: buf,
                request_len: n,
                cfg: l.cfg,
                _slot: slot,
                _live: Live::new(Object::ConnRequest),
            }),
            GFP_KERNEL,
        );
        // A request that cannot be filed is dropped, which resets its socket.
        let Ok(req) = req else { return };
        let Ok(conn_id) = l.conns.lock().insert(req) else { return };
        let mut ev = event(SRNIC_EVENT_CONNECT_REQUEST, l.handle);
        ev.conn_id = conn_id;
        ev.local = local;
        ev.remote = remote;
        if let Some(io) = peer.ird_ord {
            ev.ird = u32::from(io.ird);
            ev.ord = u32::from(io.ord);
        }
        ev.mpa_flags = if peer.crc { SRNIC_MPA_CRC } else { 0 }
            | if peer.markers { SRNIC_MPA_MARKERS } else { 0 }
            | if peer.revision == 1 { SRNIC_MPA_REV1 } else { 0 };
        let pd = resp.peer_private_data();
        let k = pd.len().min(ev.private_data.len());
        ev.private_data[..k].copy_from_slice(&pd[..k]);
        ev.private_data_len = k as u32;
        l.events.push(ev);
        trace::cm(Cm::Request, Site { pid: l.owner, id: l.handle, local: &local, remote: &remote }, 0);
    }
}

impl WorkItem for Incoming {
    type Pointer = Arc<Incoming>;
    fn run(this: Arc<Incoming>) {
        this.step();
    }
}

impl SocketEvents for Incoming {
    fn socket_event(this: ArcBorrow<'_, Self>, _ev: SocketEvent) {
        let this: Arc<Incoming> = this.into();
        this.kick();
    }
}

impl TimerTarget for Incoming {
    fn timer_fired(this: Arc<Self>) {
        // The Request did not come in time.
        this.abort();
    }
}
