// SPDX-License-Identifier: GPL-2.0
//! A listener: a listening socket and the connections it accepted that are
//! still waiting for their MPA Request ([`Incoming`]).
//!
//! Nothing here waits for a peer. The listening socket's callback queues the
//! listener's work item, which accepts every queued connection without
//! blocking and hands each to an [`Incoming`]. Two bounds keep a flood of
//! connections from costing more than a fixed amount or locking others out:
//! - at most `backlog` connections wait for their Request; one more evicts
//!   the oldest (so a peer that opens connections and sends nothing cannot
//!   keep a real client out), and each is closed after the request timeout;
//! - at most `backlog` complete requests wait for ACCEPT or REJECT
//!   ([`Backlog`]); one more is refused at once.

use crate::{
    iwarp::{
        conn_req::{Backlog, ConnTable},
        incoming::{Filing, Incoming},
        params::{check_mss, mpa_config},
    },
    sys::{
        socket::{Attached, SockAddr, SocketEvent, SocketEvents, TcpSocket},
        task,
        wq,
    },
    uapi::{SrnicResListen, SrnicSockaddr},
    verbs::{
        events::Events,
        limits,
        stats::{Live, Object},
    },
};
use kernel::{
    alloc::KVec,
    impl_has_work, new_condvar, new_mutex, new_work,
    prelude::*,
    sync::{Arc, ArcBorrow, CondVar, Mutex},
    workqueue::{Work, WorkItem},
};

/// The backlog of a listen that asks for none.
pub(crate) const DEFAULT_BACKLOG: u32 = 128;
/// The largest backlog a listener takes.
const MAX_BACKLOG: u32 = 1024;

/// The listener's mutable state.
struct Inner {
    /// The listening socket, with its callbacks going to the listener; taken
    /// by [`Listener::stop`].
    sock: Option<Attached<Listener>>,
    /// Connections waiting for their Request, each with its arrival number
    /// (the oldest is the one evicted); `backlog` slots, of which those
    /// holding a finished connection count as free.
    incoming: KVec<Option<(u64, Arc<Incoming>)>>,
    /// The next arrival number.
    arrivals: u64,
    stopped: bool,
    /// The accept work is running (`stop` waits for it to end).
    accepting: bool,
}

/// A listening socket.
#[pin_data]
pub(crate) struct Listener {
    /// The listener's handle.
    pub(crate) handle: u32,
    /// The `SRNIC_MPA_*` flags it was made with (what this side asks for).
    flags: u32,
    /// Its address, the port bound.
    addr: SrnicSockaddr,
    /// Where its requests go (settings, the file's table and events, the
    /// backlog), shared with its incoming connections.
    filing: Arc<Filing>,
    #[pin]
    inner: Mutex<Inner>,
    #[pin]
    ended: CondVar,
    #[pin]
    work: Work<Listener>,
    _live: Live,
}

impl_has_work! {
    impl HasWork<Self> for Listener { self.work }
}

impl Listener {
    /// Listens on `addr` and starts accepting; returns the listener and its
    /// port. `backlog` 0 means [`DEFAULT_BACKLOG`].
    pub(crate) fn start(
        handle: u32,
        addr: &SockAddr,
        backlog: u32,
        flags: u32,
        conns: Arc<ConnTable>,
        events: Arc<Events>,
    ) -> Result<(Arc<Self>, u16)> {
        let backlog = if backlog == 0 { DEFAULT_BACKLOG } else { backlog.min(MAX_BACKLOG) };
        // TCP's own accept queue only has to cover the moments before the
        // accept work runs; the bounds that matter are this listener's.
        let sock = TcpSocket::listen(addr, backlog.max(DEFAULT_BACKLOG) as i32)?;
        // The address bound, with the port the stack chose for port 0.
        let (bound, _) = sock.addrs()?;
        let sock = Arc::new(sock, GFP_KERNEL)?;
        let filing = Arc::new(
            Filing {
                handle,
                owner: task::current_pid(),
                cfg: mpa_config(flags, limits::MAX_IRD as u32, limits::MAX_ORD as u32),
                conns,
                events,
                backlog: Backlog::new(backlog as usize)?,
            },
            GFP_KERNEL,
        )?;
        let mut slots = KVec::with_capacity(backlog as usize, GFP_KERNEL)?;
        for _ in 0..backlog {
            slots.push(None, GFP_KERNEL)?;
        }
        let l = Arc::pin_init(
            pin_init!(Self {
                handle,
                flags,
                addr: bound,
                filing,
                inner <- new_mutex!(Inner {
                    sock: None,
                    incoming: slots,
                    arrivals: 0,
                    stopped: false,
                    accepting: false,
                }, "srnic_listener"),
                ended <- new_condvar!("srnic_listener_ended"),
                work <- new_work!("srnic_listener"),
                _live: Live::new(Object::Listener),
            }),
            GFP_KERNEL,
        )?;
        let attached = Attached::new(sock, l.clone())?;
        l.inner.lock().sock = Some(attached);
        // Connections may be queued already.
        l.kick();
        Ok((l, bound.port))
    }

    /// What the resource view reports of the listener.
    pub(crate) fn res(&self, r: &mut SrnicResListen) {
        r.owner.pid = self.filing.owner;
        r.mpa_flags = self.flags;
        r.addr = self.addr;
        let (pending, max) = self.filing.backlog.usage();
        r.pending = pending as u32;
        r.backlog = max as u32;
    }

    fn kick(self: &Arc<Self>) {
        let _ = wq::queue().enqueue(self.clone());
    }

    /// Stops accepting, closes the connections still waiting for their
    /// Request and releases the socket: when this returns the port is free
    /// again (a server restarted at once can bind it).
    pub(crate) fn stop(&self) {
        let (attached, incoming) = {
            let mut i = self.inner.lock();
            i.stopped = true;
            (i.sock.take(), core::mem::take(&mut i.incoming))
        };
        let sock = attached.map(|a| a.detach().0);
        for (_, inc) in incoming.into_iter().flatten() {
            inc.abort();
        }
        let mut i = self.inner.lock();
        while i.accepting {
            self.ended.wait(&mut i);
        }
        drop(i);
        drop(sock);
    }

    /// Accepts every queued connection.
    fn accept_all(self: &Arc<Self>) {
        let sock = {
            let mut i = self.inner.lock();
            if i.stopped {
                return;
            }
            let Some(sock) = i.sock.as_ref().map(|a| a.socket().clone()) else { return };
            i.accepting = true;
            sock
        };
        while let Ok(conn) = sock.accept() {
            self.admit(conn);
        }
        drop(sock);
        self.inner.lock().accepting = false;
        self.ended.notify_all();
    }

    /// Makes room for one more connection (evicting the oldest if needed) and
    /// lets it wait for its Request.
    fn admit(self: &Arc<Self>, conn: TcpSocket) {
        // A peer that forced a tiny MSS is refused at once (reset).
        if check_mss(&conn).is_err() {
            conn.shutdown(true);
            return;
        }
        let Ok(inc) = Incoming::start(self.filing.clone(), conn) else { return };
        let evicted = {
            let mut i = self.inner.lock();
            if i.stopped || inc.is_done() {
                drop(i);
                return inc.abort();
            }
            let seq = i.arrivals;
            i.arrivals += 1;
            // A free slot (empty, or its connection finished), or else the
            // oldest connection's.
            let free = i.incoming.iter().position(|s| s.as_ref().is_none_or(|(_, x)| x.is_done()));
            let oldest = i
                .incoming
                .iter()
                .enumerate()
                .filter_map(|(k, s)| s.as_ref().map(|(n, _)| (*n, k)))
                .min()
                .map(|(_, k)| k);
            match free.or(oldest) {
                Some(k) => i.incoming[k].replace((seq, inc.clone())).map(|(_, old)| old),
                // No slot at all (a backlog of 0 cannot be asked for).
                None => Some(inc.clone()),
            }
        };
        if let Some(old) = evicted {
            old.abort();
        }
    }
}

impl WorkItem for Listener {
    type Pointer = Arc<Listener>;
    fn run(this: Arc<Listener>) {
        this.accept_all();
    }
}

impl SocketEvents for Listener {
    fn socket_event(this: ArcBorrow<'_, Self>, _ev: SocketEvent) {
        let this: Arc<Listener> = this.into();
        this.kick();
    }
}
