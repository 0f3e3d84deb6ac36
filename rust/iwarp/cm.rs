// SPDX-License-Identifier: GPL-2.0
//! The connection manager: listeners, incoming connection requests, and the
//! connect and accept jobs that run MPA start-up (RFC 5044, RFC 6581).
//!
//! All of it runs on srnic's workqueue with blocking socket calls bounded by
//! timeouts (siw's: 10 s for a Request, 5 s for a Reply):
//! - a [`Listener`]'s work item accepts TCP connections until the listener is
//!   destroyed (shutting its socket down ends the accept);
//! - each accepted connection gets a one-shot work item that reads the MPA
//!   Request and, if it is valid, files a [`ConnReq`] and reports
//!   `SRNIC_EVENT_CONNECT_REQUEST`;
//! - `ACCEPT` and `CONNECT` hand a [`CmJob`] to the QP's connection manager work,
//!   which sends the Reply (or the Request and waits for the Reply) and, on
//!   success, makes the QP ready to send.
//!
//! Start-up frames are read exactly (20 bytes, then the private data length they
//! announce), so no byte of the first FPDU is consumed here.

use crate::{
    proto::mpa::{
        frame::{HDR_LEN, MAX_FRAME_LEN, MAX_PD_SIW},
        negotiate::{Initiator, InitiatorOutcome, MpaConfig, PeerRequest, Responder},
        Negotiated, Rtr, RtrCaps,
    },
    sys::{
        errno::{eafnosupport, econnrefused, econnreset, eproto},
        socket::{SockAddrV4, TcpSocket},
        wq,
    },
    uapi::*,
    verbs::events::{event, Events},
    verbs::limits,
    verbs::qp::{Qp, QpState},
    verbs::stats::{Live, Object},
    verbs::table::Table,
};
use kernel::{
    impl_has_work, new_condvar, new_mutex, new_work,
    prelude::*,
    sync::{Arc, CondVar, Mutex},
    workqueue::{Work, WorkItem},
};

/// How long a connect waits for TCP.
const CONNECT_TIMEOUT_MS: i32 = 10_000;
/// How long an initiator waits for the MPA Reply (siw: 5 s).
const REPLY_TIMEOUT_MS: i32 = 5_000;
/// How long a responder waits for the MPA Request (siw: 10 s).
const REQUEST_TIMEOUT_MS: i32 = 10_000;

/// Converts an ABI socket address (IPv4 only).
pub(crate) fn from_abi_addr(a: &SrnicSockaddr) -> Result<SockAddrV4> {
    if a.family != 2 {
        return Err(eafnosupport());
    }
    Ok(SockAddrV4 {
        addr: [a.addr[0], a.addr[1], a.addr[2], a.addr[3]],
        port: a.port,
    })
}

/// Converts to an ABI socket address.
pub(crate) fn to_abi_addr(a: SockAddrV4) -> SrnicSockaddr {
    let mut s = SrnicSockaddr {
        family: 2,
        port: a.port,
        ..Default::default()
    };
    s.addr[..4].copy_from_slice(&a.addr);
    s
}

/// The MPA settings for `SRNIC_MPA_*` flags and the given IRD/ORD.
pub(crate) fn mpa_config(flags: u32, ird: u32, ord: u32) -> MpaConfig {
    let mut c = MpaConfig::siw_compatible();
    c.revision = if flags & SRNIC_MPA_REV1 != 0 { 1 } else { 2 };
    c.crc = flags & SRNIC_MPA_CRC != 0;
    c.markers_rx = flags & SRNIC_MPA_MARKERS != 0;
    c.markers_tx_ok = true;
    c.ird = ird.min(limits::MAX_IRD as u32) as u16;
    c.ord = ord.min(limits::MAX_ORD as u32) as u16;
    c.p2p = flags & SRNIC_MPA_P2P != 0;
    c.rtr = if flags & SRNIC_MPA_RTR_READ != 0 {
        RtrCaps { write: false, read: true, send: false }
    } else {
        RtrCaps { write: true, read: true, send: false }
    };
    c.pd_limit = MAX_PD_SIW;
    c
}

/// `SRNIC_MPA_*` flags describing what was negotiated.
pub(crate) fn negotiated_flags(n: &Negotiated) -> u32 {
    let mut f = 0;
    if n.crc_tx || n.crc_rx {
        f |= SRNIC_MPA_CRC;
    }
    if n.markers_tx || n.markers_rx {
        f |= SRNIC_MPA_MARKERS;
    }
    if n.revision == 1 {
        f |= SRNIC_MPA_REV1;
    }
    if n.rtr != Rtr::None {
        f |= SRNIC_MPA_P2P;
    }
    for (on, bit) in [
        (n.crc_tx, SRNIC_MPA_CRC_TX),
        (n.crc_rx, SRNIC_MPA_CRC_RX),
        (n.markers_tx, SRNIC_MPA_MARKERS_TX),
        (n.markers_rx, SRNIC_MPA_MARKERS_RX),
    ] {
        if on {
            f |= bit;
        }
    }
    f
}

/// Private data of a connect, accept or reject (at most 252 bytes: siw's cap).
#[derive(Clone, Copy)]
pub(crate) struct PrivateData {
    buf: [u8; SRNIC_MAX_PRIVATE_DATA as usize],
    len: usize,
}

impl PrivateData {
    /// Copies `len` bytes from user address `ptr`.
    pub(crate) fn from_user(ptr: u64, len: u32) -> Result<Self> {
        let len = len as usize;
        if len > SRNIC_MAX_PRIVATE_DATA as usize {
            return Err(EINVAL);
        }
        let mut pd = Self {
            buf: [0; SRNIC_MAX_PRIVATE_DATA as usize],
            len,
        };
        if len > 0 {
            let mut r = kernel::uaccess::UserSlice::new(ptr as usize, len).reader();
            r.read_slice(&mut pd.buf[..len])?;
        }
        Ok(pd)
    }

    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// What the QP's connection manager work is to do.
pub(crate) enum CmJob {
    /// Connect to `addr` and run MPA start-up as initiator.
    Connect {
        addr: SockAddrV4,
        cfg: MpaConfig,
        pd: PrivateData,
    },
    /// Accept `req` as responder.
    Accept {
        req: Arc<ConnReq>,
        cfg: MpaConfig,
        pd: PrivateData,
    },
}

/// Reads one MPA start-up frame exactly into `buf`; returns its length.
fn read_frame(sock: &TcpSocket, buf: &mut [u8; MAX_FRAME_LEN]) -> Result<usize> {
    let n = sock.recv(&mut buf[..HDR_LEN], false)?;
    if n != HDR_LEN {
        return Err(econnreset());
    }
    let pd_len = usize::from(u16::from_be_bytes([buf[18], buf[19]]));
    let total = HDR_LEN + pd_len;
    if total > MAX_FRAME_LEN {
        // Let the negotiator report the bad frame: hand it the header alone.
        return Ok(HDR_LEN);
    }
    if pd_len > 0 {
        let n = sock.recv(&mut buf[HDR_LEN..total], false)?;
        if n != pd_len {
            return Err(econnreset());
        }
    }
    Ok(total)
}

/// Runs the QP's pending connection manager job.
pub(crate) fn run_job(qp: Arc<Qp>) {
    let job = qp.conn.lock().cm_job.take();
    match job {
        Some(CmJob::Connect { addr, cfg, pd }) => connect(&qp, addr, cfg, &pd),
        Some(CmJob::Accept { req, cfg, pd }) => accept(&qp, &req, cfg, &pd),
        None => {}
    }
}

fn established_event(qp: &Qp, neg: &Negotiated, peer_pd: &[u8]) {
    let mut ev = event(SRNIC_EVENT_ESTABLISHED, qp.handle);
    {
        let c = qp.conn.lock();
        ev.local = c.local;
        ev.remote = c.remote;
    }
    ev.ird = u32::from(neg.ird);
    ev.ord = u32::from(neg.ord);
    ev.mpa_flags = negotiated_flags(neg);
    let n = peer_pd.len().min(ev.private_data.len());
    ev.private_data[..n].copy_from_slice(&peer_pd[..n]);
    ev.private_data_len = n as u32;
    qp.events.push(ev);
}

fn connect_failed(qp: &Qp, event_type: u32, err: Error, peer_pd: &[u8]) {
    {
        let mut c = qp.conn.lock();
        c.state = QpState::Error;
        if c.destroyed {
            // Nobody holds the handle any more (it may even name another QP).
            return;
        }
    }
    let mut ev = event(event_type, qp.handle);
    ev.status = err.to_errno();
    let n = peer_pd.len().min(ev.private_data.len());
    ev.private_data[..n].copy_from_slice(&peer_pd[..n]);
    ev.private_data_len = n as u32;
    qp.events.push(ev);
}

fn connect(qp: &Arc<Qp>, addr: SockAddrV4, cfg: MpaConfig, pd: &PrivateData) {
    let sock = match TcpSocket::connect(addr, CONNECT_TIMEOUT_MS) {
        Ok(s) => s,
        Err(e) => return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]),
    };
    sock.set_nodelay();
    sock.set_timeouts(REPLY_TIMEOUT_MS, REPLY_TIMEOUT_MS);
    let mut ini = Initiator::new(cfg);
    let mut buf = [0u8; MAX_FRAME_LEN];
    let outcome = ini
        .request(pd.as_slice(), &mut buf)
        .map_err(|_| EINVAL)
        .and_then(|n| sock.send(&[&buf[..n]], false))
        .and_then(|()| read_frame(&sock, &mut buf))
        .and_then(|n| match ini.on_bytes(&buf[..n]) {
            Ok((_, Some(o))) => Ok(o),
            _ => Err(eproto()),
        });
    match outcome {
        Ok(InitiatorOutcome::Accepted(neg)) => {
            sock.set_timeouts(0, 0);
            let sock = match Arc::new(sock, GFP_KERNEL) {
                Ok(s) => s,
                Err(e) => return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e.into(), &[]),
            };
            let peer_pd = ini.peer_private_data();
            match qp.establish(sock, neg) {
                Ok(()) => established_event(qp, &neg, peer_pd),
                Err(e) => connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]),
            }
        }
        Ok(InitiatorOutcome::Rejected) => {
            sock.shutdown(false);
            connect_failed(qp, SRNIC_EVENT_REJECTED, econnrefused(), ini.peer_private_data());
        }
        Err(e) => {
            sock.shutdown(true);
            connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
        }
    }
}

fn accept(qp: &Arc<Qp>, req: &ConnReq, cfg: MpaConfig, pd: &PrivateData) {
    let Some(sock) = req.sock.lock().take() else {
        return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, EINVAL, &[]);
    };
    // Run the responder again over the stored Request with the accept's settings.
    let mut resp = Responder::new(cfg);
    let mut buf = [0u8; MAX_FRAME_LEN];
    let result = match resp.on_bytes(&req.request[..req.request_len]) {
        Ok((_, Some(_))) => resp.accept(pd.as_slice(), &mut buf).map_err(|_| eproto()),
        _ => Err(eproto()),
    };
    let (n, neg) = match result {
        Ok(x) => x,
        Err(e) => {
            // The request cannot be served with these settings: refuse it.
            if let Ok(n) = resp.reject(&[], &mut buf) {
                let _ = sock.send(&[&buf[..n]], false);
            }
            sock.shutdown(false);
            return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
        }
    };
    if let Err(e) = sock.send(&[&buf[..n]], false) {
        sock.shutdown(true);
        return connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]);
    }
    sock.set_timeouts(0, 0);
    match qp.establish(sock, neg) {
        Ok(()) => established_event(qp, &neg, resp.peer_private_data()),
        Err(e) => connect_failed(qp, SRNIC_EVENT_CONNECT_ERROR, e, &[]),
    }
}

/// A connection request waiting for `ACCEPT` or `REJECT`.
#[pin_data(PinnedDrop)]
pub(crate) struct ConnReq {
    /// The listener it arrived on.
    pub(crate) listener: u32,
    /// The connection (taken by accept or reject).
    #[pin]
    sock: Mutex<Option<Arc<TcpSocket>>>,
    /// The MPA Request as received.
    request: [u8; MAX_FRAME_LEN],
    request_len: usize,
    /// The listener's MPA settings (what this side asks for).
    pub(crate) cfg: MpaConfig,
    _live: Live,
}

impl ConnReq {
    /// Rejects the request with private data `pd` and closes the connection.
    pub(crate) fn reject(&self, pd: &PrivateData) -> Result {
        let sock = self.sock.lock().take().ok_or(EINVAL)?;
        let mut resp = Responder::new(MpaConfig::siw_compatible());
        let mut buf = [0u8; MAX_FRAME_LEN];
        let r = match resp.on_bytes(&self.request[..self.request_len]) {
            Ok((_, Some(_))) => resp.reject(pd.as_slice(), &mut buf).map_err(|_| eproto()),
            _ => Err(eproto()),
        };
        let r = r.and_then(|n| sock.send(&[&buf[..n]], false));
        sock.shutdown(false);
        r
    }
}

#[pinned_drop]
impl PinnedDrop for ConnReq {
    fn drop(self: Pin<&mut Self>) {
        if let Some(sock) = self.sock.lock().take() {
            sock.shutdown(true);
        }
    }
}

/// The pending connection requests of one file.
pub(crate) type ConnTable = Mutex<Table<Arc<ConnReq>>>;

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
        let sock = TcpSocket::listen(addr, backlog.clamp(1, 1024) as i32)?;
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
