// SPDX-License-Identifier: GPL-2.0
//! A connection request: an accepted TCP connection whose MPA Request
//! arrived, waiting for `ACCEPT` (see `startup.rs`) or `REJECT`.

use crate::{
    iwarp::params::PrivateData,
    proto::mpa::{
        frame::MAX_FRAME_LEN,
        negotiate::{MpaConfig, Responder},
    },
    sys::{
        errno::eproto,
        socket::TcpSocket,
        trace::{self, Cm, Site},
    },
    uapi::SrnicSockaddr,
    verbs::{stats::Live, table::Table},
};
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{
    prelude::*,
    sync::{Arc, Mutex},
};

/// A listener's backlog: how many of its connection requests may wait for
/// ACCEPT or REJECT at once. One more is refused at once.
pub(crate) struct Backlog {
    waiting: AtomicUsize,
    max: usize,
}

impl Backlog {
    /// A backlog of `max` requests.
    pub(crate) fn new(max: usize) -> Result<Arc<Self>> {
        Ok(Arc::new(Self { waiting: AtomicUsize::new(0), max }, GFP_KERNEL)?)
    }

    /// Requests waiting now, and the most that may.
    pub(crate) fn usage(&self) -> (usize, usize) {
        (self.waiting.load(Ordering::Relaxed), self.max)
    }

    /// A place for one more request, if there is room.
    pub(crate) fn take(self: &Arc<Self>) -> Option<BacklogSlot> {
        self.waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.max).then_some(n + 1))
            .ok()
            .map(|_| BacklogSlot(self.clone()))
    }
}

/// One request's place in its listener's backlog, given back on drop.
pub(crate) struct BacklogSlot(Arc<Backlog>);

impl Drop for BacklogSlot {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A connection request waiting for `ACCEPT` or `REJECT`.
#[pin_data(PinnedDrop)]
pub(crate) struct ConnReq {
    /// The listener it arrived on.
    pub(crate) listener: u32,
    /// The pid of the process that made the listener (tracepoints).
    pub(crate) owner: i32,
    /// The connection's addresses.
    pub(crate) local: SrnicSockaddr,
    pub(crate) remote: SrnicSockaddr,
    /// The connection (taken by accept or reject).
    #[pin]
    pub(super) sock: Mutex<Option<Arc<TcpSocket>>>,
    /// The MPA Request as received.
    pub(super) request: [u8; MAX_FRAME_LEN],
    pub(super) request_len: usize,
    /// The listener's MPA settings (what this side asks for).
    pub(crate) cfg: MpaConfig,
    /// Its place in the listener's backlog.
    pub(super) _slot: BacklogSlot,
    pub(super) _live: Live,
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
        let r = r.and_then(|n| sock.send_now(&buf[..n]));
        sock.shutdown(false);
        let site = Site { pid: self.owner, id: self.listener, local: &self.local, remote: &self.remote };
        trace::cm(Cm::Reject, site, r.as_ref().err().map_or(0, |e| e.to_errno()));
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

