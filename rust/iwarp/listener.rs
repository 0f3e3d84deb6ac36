// SPDX-License-Identifier: GPL-2.0
//! A listener: a listening socket whose work item accepts TCP connections
//! until the listener is destroyed (shutting its socket down ends the accept
//! loop). Each accepted connection gets a one-shot work item that reads the
//! MPA Request and, if it is valid, files a [`ConnReq`] and reports
//! `SRNIC_EVENT_CONNECT_REQUEST`.

use crate::{
    iwarp::{
        conn_req::{ConnReq, ConnTable},
        mpa_io::{read_frame, REPLY_TIMEOUT_MS, REQUEST_TIMEOUT_MS},
        params::{mpa_config, to_abi_addr},
    },
    proto::mpa::{
        frame::MAX_FRAME_LEN,
        negotiate::{MpaConfig, PeerRequest, Responder},
    },
    sys::{
        socket::{SockAddrV4, TcpSocket},
        wq,
    },
    uapi::*,
    verbs::{
        events::{event, Events},
        limits,
        stats::{Live, Object},
    },
};
use kernel::{
    impl_has_work, new_condvar, new_mutex, new_work,
    prelude::*,
    sync::{Arc, CondVar, Mutex},
    workqueue::{Work, WorkItem},
};

/// Whether a listener's accept loop runs, and its socket.
struct Accepting {
    /// The listening socket; released by [`Listener::stop`] once the accept
    /// loop has ended, so the port is free when `stop` returns.
    sock: Option<Arc<TcpSocket>>,
    running: bool,
}

/// A listening socket.
#[pin_data]
pub(crate) struct Listener {
    /// The listener's handle.
    pub(crate) handle: u32,
    #[pin]
    accepting: Mutex<Accepting>,
    #[pin]
    ended: CondVar,
    cfg: MpaConfig,
    conns: Arc<ConnTable>,
    events: Arc<Events>,
    #[pin]
    work: Work<Listener>,
    _live: Live,
}

/// The largest TCP accept backlog a listener asks for.
const MAX_BACKLOG: u32 = 1024;

impl_has_work! {
    impl HasWork<Self> for Listener { self.work }
}

impl Listener {
    /// Listens on `addr` and starts accepting; returns the listener and its port.
    pub(crate) fn start(
        handle: u32,
        addr: SockAddrV4,
        backlog: u32,
        flags: u32,
        conns: Arc<ConnTable>,
        events: Arc<Events>,
    ) -> Result<(Arc<Self>, u16)> {
        let sock = TcpSocket::listen(addr, backlog.clamp(1, MAX_BACKLOG) as i32)?;
        let port = sock.local_port()?;
        let sock = Arc::new(sock, GFP_KERNEL)?;
        let l = Arc::pin_init(
            pin_init!(Self {
                handle,
                accepting <- new_mutex!(Accepting { sock: Some(sock), running: true }, "srnic_listener"),
                ended <- new_condvar!("srnic_listener_ended"),
                cfg: mpa_config(flags, limits::MAX_IRD as u32, limits::MAX_ORD as u32),
                conns,
                events,
                work <- new_work!("srnic_listener"),
                _live: Live::new(Object::Listener),
            }),
            GFP_KERNEL,
        )?;
        if wq::queue().enqueue(l.clone()).is_err() {
            l.accepting.lock().running = false;
        }
        Ok((l, port))
    }

    /// Stops accepting and releases the socket: when this returns the port is
    /// free again (a server restarted at once can bind it).
    pub(crate) fn stop(&self) {
        let mut a = self.accepting.lock();
        if let Some(sock) = &a.sock {
            // Wakes the blocked accept with an error.
            sock.shutdown(false);
        }
        while a.running {
            self.ended.wait(&mut a);
        }
        let sock = a.sock.take();
        drop(a);
        drop(sock);
    }

    /// Reads the MPA Request of an accepted connection and files it.
    fn serve(self: Arc<Self>, sock: TcpSocket) {
        sock.set_nodelay();
        sock.set_timeouts(REQUEST_TIMEOUT_MS, REPLY_TIMEOUT_MS);
        let mut buf = [0u8; MAX_FRAME_LEN];
        let Ok(n) = read_frame(&sock, &mut buf) else {
            return sock.shutdown(true);
        };
        let mut resp = Responder::new(self.cfg);
        let peer: PeerRequest = match resp.on_bytes(&buf[..n]) {
            Ok((_, Some(p))) => p,
            _ => return sock.shutdown(true),
        };
        let (local, remote) = sock.addrs().unwrap_or_default();
        let Ok(sock) = Arc::new(sock, GFP_KERNEL) else { return };
        let (listener, cfg) = (self.handle, self.cfg);
        let req = Arc::pin_init(
            pin_init!(ConnReq {
                listener,
                sock <- new_mutex!(Some(sock), "srnic_connreq"),
                request: buf,
                request_len: n,
                cfg,
                _live: Live::new(Object::ConnRequest),
            }),
            GFP_KERNEL,
        );
        let Ok(req) = req else { return };
        let Ok(conn_id) = self.conns.lock().insert(req) else { return };
        let mut ev = event(SRNIC_EVENT_CONNECT_REQUEST, self.handle);
        ev.conn_id = conn_id;
        ev.local = to_abi_addr(local);
        ev.remote = to_abi_addr(remote);
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
        self.events.push(ev);
    }
}

impl WorkItem for Listener {
    type Pointer = Arc<Listener>;
    fn run(this: Arc<Listener>) {
        let Some(lsock) = this.accepting.lock().sock.clone() else { return };
        // Accept until the socket is shut down.
        while let Ok(sock) = lsock.accept() {
            let l = this.clone();
            if wq::queue().try_spawn(GFP_KERNEL, move || l.serve(sock)).is_err() {
                continue;
            }
        }
        drop(lsock);
        this.accepting.lock().running = false;
        this.ended.notify_all();
    }
}
