// SPDX-License-Identifier: GPL-2.0
//! Sandia RMPP endpoints: one local NID on one netdev, driving the sans-IO
//! engine of `proto::rmpp` over raw Ethernet frames.
//!
//! An endpoint owns the engine with its tables (sized at creation, so the data
//! path allocates nothing but the skbs it sends), the messages in flight (their
//! user buffers pinned, or their memory regions held, until they complete), the
//! posted receives, and a [`Port`] on the netdev.
//!
//! Execution: every protocol step runs in process context in the endpoint's
//! work item on srnic's workqueue, under the endpoint's one mutex (`inner`). The
//! port's packet handler and timer (softirq) only queue frames and the work.
//! One run of the work: take queued frames (each is parsed by the engine and
//! its payload copied once, from the skb to the receive buffer), handle expired
//! deadlines, transmit what the engine asks for (header and payload written
//! straight from the pinned source pages into the skb), report completions,
//! and re-arm the timer for the engine's next deadline.
//!
//! Matching (the paper's up-call) runs inside the engine's `receive` for the
//! first packet of each new message: the oldest posted receive whose source
//! and tag match takes it, up to its length (the rest of a longer message is
//! truncated). With no matching receive the endpoint either leaves the message
//! with its sender, which retries (default), or refuses it (MSGDROP).
//!
//! Receive completions are reported in message order per sender: one that
//! finishes while an earlier message of the same sender is still arriving waits
//! for it.
//!
//! Locks, in the order they nest: `inner`, then the leaves: the node table, the
//! CQ rings and the event queue.
//!
//! The endpoint is split along its seams: this file holds the endpoint itself
//! ([`Ep`]: creation, the ioctl-facing operations, closing); `endpoint/params.rs`
//! its parameters (the buffers of messages and receives are `verbs/buf.rs`);
//! `endpoint/tx.rs` the send path; `endpoint/rx.rs` the receive and placement
//! path with matching; `endpoint/work.rs` the work item and the timer (one run,
//! completions, statistics).

mod params;
mod rx;
mod tx;
mod work;

pub(crate) use self::params::EpParams;
use self::{
    rx::{RecvEntry, RecvState},
    tx::SendEntry,
};
use crate::{
    proto::rmpp::{
        wire::VERSION, Counters, Engine, PacketType, PeerState, RecvSlot, SendSlot, HEADER_LEN,
    },
    rmpp::node::{self as nodes, Bound, NIDS},
    sys::{
        gfp::ACCOUNTED,
        module_ref::ModuleRef,
        netdev::{now_ns, port_footprint, Port, PortFilter, PORT_COUNTERS},
        errno::{ehostunreach, enetdown, eshutdown},
        task,
        trace::EpSite,
    },
    uapi::*,
    verbs::budget::{self, Budget, Charge},
    verbs::buf::Buf,
    verbs::slots::{none_vec, Slots},
    verbs::cq::Cq,
    verbs::events::{event, Events},
    verbs::limits,
    verbs::mr::{MrTable, Need},
    verbs::pd::{Pd, PdUse},
    verbs::stats::{self, Rmpp},
};
use core::sync::atomic::Ordering;
use kernel::{
    alloc::{KVVec, KVec},
    impl_has_work, new_mutex, new_work,
    prelude::*,
    str::CStr,
    sync::{Arc, Mutex},
    workqueue::Work,
};

/// What the port's softirq handler lets through: the protocol core's header,
/// its version and its packet types (replies are addressed by `srcNID`).
const PORT_FILTER: PortFilter = {
    let mut f = PortFilter {
        hdr_len: HEADER_LEN as u32,
        version: VERSION as u32,
        types: 0,
        replies: 0,
    };
    let mut code = 0u8;
    while code < 32 {
        if let Some(t) = PacketType::from_code(code) {
            f.types |= 1 << code;
            if t.is_reply() {
                f.replies |= 1 << code;
            }
        }
        code += 1;
    }
    f
};

type Eng = Engine<Slots<SendSlot>, Slots<RecvSlot>, Slots<PeerState>>;

/// The endpoint's mutable state.
struct Inner {
    engine: Eng,
    sends: KVec<Option<SendEntry>>,
    recvs: KVec<Option<RecvEntry>>,
    /// The netdev attachment; `None` once closed.
    port: Option<Port<Ep>>,
    /// A zero-filled frame image: the engine sees each frame's header here, and
    /// its payload stays in the skb until it is copied to its destination.
    shadow: KVVec<u8>,
    next_post: u64,
    next_match: u64,
    /// The netdev went down or away: the endpoint stopped for good.
    link_down: bool,
    /// Closed by its owner, still answering its peers (see [`Ep::close`]).
    linger: Option<Linger>,
    /// Counter values already added to the module's statistics.
    seen_port: [u64; PORT_COUNTERS],
    seen_engine: Counters,
    seen_sends: u64,
    seen_recvs: u64,
}

/// A closed endpoint that still answers its peers: until `until` (ns), or
/// until its engine is idle. It holds the module, so that `rmmod` waits for
/// it (a bounded wait, see [`linger_ns`]).
struct Linger {
    until: u64,
    _module: ModuleRef,
}

/// How long a closed endpoint may linger: [`limits::RMPP_LINGER_RTOS`]
/// retransmission timeouts, at most [`limits::RMPP_LINGER_MAX_MS`].
fn linger_ns(p: &EpParams) -> u64 {
    (u64::from(p.rto_us) * 1000 * limits::RMPP_LINGER_RTOS)
        .min(limits::RMPP_LINGER_MAX_MS * 1_000_000)
}

/// An RMPP endpoint.
#[pin_data(PinnedDrop)]
pub(crate) struct Ep {
    /// The endpoint's handle (in its completions).
    pub(crate) handle: u32,
    /// The pid of the process that created it (tracepoints).
    owner: i32,
    params: EpParams,
    bound: Bound,
    pd: PdUse,
    mrs: Arc<MrTable>,
    send_cq: Arc<Cq>,
    recv_cq: Arc<Cq>,
    /// The context's event queue (`SRNIC_EVENT_RMPP_ERROR`).
    events: Arc<Events>,
    #[pin]
    inner: Mutex<Inner>,
    #[pin]
    work: Work<Ep>,
    _charge: Charge,
}

impl_has_work! {
    impl HasWork<Self> for Ep { self.work }
}

/// The engine's receive table: the posted receives, and as many finished
/// messages waiting for their GCH.
fn recv_slots(p: &EpParams) -> usize {
    (p.max_recv as usize).saturating_mul(2).max(2)
}

/// Frames the port queues for the work. Data packets are bounded by the grant
/// pool; every other frame by the tables: per retransmission timeout at most
/// one first packet, NULL or GCH per incoming message slot and one reply per
/// outgoing message.
fn rx_queue_max(p: &EpParams) -> u32 {
    (p.max_rcv_buf as usize)
        .saturating_add(recv_slots(p).saturating_mul(2))
        .saturating_add((p.max_send as usize).saturating_mul(2))
        .clamp(256, limits::RMPP_MAX_RX_QUEUE) as u32
}

/// What an endpoint with parameters `p` on a netdev with MTU `mtu` takes: the
/// endpoint, the engine's tables, the message and receive tables, the frame
/// image, the port and the frames it may queue. The buffers of messages and
/// receives are charged when they are posted.
fn footprint(p: &EpParams, mtu: u16) -> Result<usize> {
    budget::sum(&[
        budget::arc::<Ep>(),
        budget::array::<SendSlot>(p.max_send as usize)?,
        budget::array::<RecvSlot>(recv_slots(p))?,
        budget::array::<PeerState>(NIDS)?,
        budget::array::<Option<SendEntry>>(p.max_send as usize)?,
        budget::array::<Option<RecvEntry>>(p.max_recv as usize)?,
        usize::from(mtu),
        port_footprint(u32::from(mtu), rx_queue_max(p)),
    ])
}

impl Ep {
    /// Creates an endpoint and attaches it to the netdev `ifname`, charged to
    /// `budget` (its tables; posted buffers are charged to its MR table's).
    #[expect(clippy::too_many_arguments)]
    pub(crate) fn create(
        handle: u32,
        params: EpParams,
        ifname: &CStr,
        pd: &Arc<Pd>,
        mrs: Arc<MrTable>,
        send_cq: Arc<Cq>,
        recv_cq: Arc<Cq>,
        events: Arc<Events>,
        budget: &Arc<Budget>,
    ) -> Result<Arc<Self>> {
        // Raw frames need CAP_NET_RAW for the netdev, before anything else.
        crate::sys::netdev::net_raw(ifname)?;
        let (ifindex, mtu) = crate::sys::netdev::netdev_info(ifname)?;
        // The RMPP packet (header and payload) is the Ethernet payload.
        let mtu = u16::try_from(mtu).unwrap_or(u16::MAX);
        if usize::from(mtu) <= HEADER_LEN {
            return Err(EINVAL);
        }
        let charge = budget.charge(footprint(&params, mtu)?)?;
        let bound = Bound {
            ifindex,
            ethertype: params.ethertype,
            nid: params.nid,
        };
        nodes::bind(bound)?;
        let cqs = (send_cq, recv_cq);
        match Self::create_bound(handle, params, bound, mtu, ifname, pd, mrs, cqs, events, charge) {
            Ok(ep) => Ok(ep),
            Err(e) => {
                nodes::unbind(bound);
                Err(e)
            }
        }
    }

    #[expect(clippy::too_many_arguments)]
    fn create_bound(
        handle: u32,
        params: EpParams,
        bound: Bound,
        mtu: u16,
        ifname: &CStr,
        pd: &Arc<Pd>,
        mrs: Arc<MrTable>,
        (send_cq, recv_cq): (Arc<Cq>, Arc<Cq>),
        events: Arc<Events>,
        charge: Charge,
    ) -> Result<Arc<Self>> {
        // The engine's receive table also holds finished messages until their
        // GCH arrives: twice the posted receives.
        let recv_slots = recv_slots(&params);
        // Packets are sized from the netdev's MTU when the endpoint is created.
        let engine = Eng::new(
            params.config(mtu),
            Slots::filled(params.max_send as usize, SendSlot::default())?,
            Slots::filled(recv_slots, RecvSlot::default())?,
            Slots::filled(NIDS, PeerState::default())?,
        )
        .map_err(|_| EINVAL)?;
        let inner = Inner {
            engine,
            sends: none_vec(params.max_send as usize)?,
            recvs: none_vec(params.max_recv as usize)?,
            port: None,
            shadow: KVVec::from_elem(0u8, usize::from(mtu), ACCOUNTED)?,
            next_post: 0,
            next_match: 0,
            link_down: false,
            linger: None,
            seen_port: [0; PORT_COUNTERS],
            seen_engine: Counters::default(),
            seen_sends: 0,
            seen_recvs: 0,
        };
        send_cq.users.fetch_add(1, Ordering::AcqRel);
        recv_cq.users.fetch_add(1, Ordering::AcqRel);
        let ep = Arc::pin_init(
            pin_init!(Self {
                handle,
                owner: task::current_pid(),
                params,
                bound,
                pd: PdUse::new(pd),
                mrs,
                send_cq,
                recv_cq,
                events,
                inner <- new_mutex!(inner, "srnic_rmpp_ep"),
                work <- new_work!("srnic_rmpp_ep"),
                _charge: charge,
            }),
            ACCOUNTED,
        );
        let ep = ep?;
        let qmax = rx_queue_max(&params);
        let port = Port::open(
            ifname,
            params.ethertype,
            params.nid,
            qmax,
            &PORT_FILTER,
            ep.clone(),
        )?;
        if port.ifindex() != bound.ifindex {
            // Renamed under us: refuse rather than bind another device.
            return Err(ENODEV);
        }
        ep.inner.lock().port = Some(port);
        stats::add(Rmpp::endpoints, 1);
        Ok(ep)
    }

    /// What the resource view reports of the endpoint.
    pub(crate) fn res(&self, r: &mut SrnicResRmpp) {
        r.owner.pid = self.owner;
        r.ifindex = self.bound.ifindex;
        r.nid = self.bound.nid;
        r.ethertype = u32::from(self.bound.ethertype);
        let g = self.inner.lock();
        r.active_sends = g.engine.active_sends() as u32;
        r.active_recvs = g.engine.active_recvs() as u32;
        r.srtt_us = g.engine.rtt().srtt().map_or(0, |ns| u32::try_from(ns / 1000).unwrap_or(u32::MAX).max(1));
    }

    /// Where the endpoint is, for its tracepoints.
    fn site(&self) -> EpSite {
        EpSite { pid: self.owner, id: self.handle, ifindex: self.bound.ifindex, nid: self.bound.nid }
    }

    /// The RMPP packet size in use (header included).
    pub(crate) fn packet_size(&self) -> u32 {
        self.inner.lock().engine.config().mtu.into()
    }

    /// Starts sending a message (`SRNIC_IOCTL_RMPP_SEND`).
    pub(crate) fn send(self: &Arc<Self>, a: &SrnicRmppSend) -> Result {
        if a.dst_nid > SRNIC_RMPP_MAX_NID || a.length > u64::from(u32::MAX) {
            return Err(EINVAL);
        }
        let node = nodes::lookup(a.dst_nid).ok_or(ehostunreach())?;
        if node.ifindex != self.bound.ifindex {
            return Err(ehostunreach());
        }
        // Pin (or resolve) before taking the lock: pinning may fault pages in.
        let buf = Buf::new(&self.mrs, self.pd.id(), a.addr, a.length, a.lkey, Need::LocalRead, SRNIC_RMPP_MAX_MSG)?;
        let len = u32::try_from(a.length).map_err(|_| EINVAL)?;
        {
            let mut g = self.inner.lock();
            let Inner { engine, sends, port, link_down, linger, .. } = &mut *g;
            if port.is_none() || linger.is_some() {
                return Err(stopped(*link_down));
            }
            let (i, slot) = sends.iter_mut().enumerate().find(|(_, s)| s.is_none()).ok_or(EAGAIN)?;
            engine
                .send(now_ns(), a.dst_nid, len, a.tag, i as u64)
                .map_err(|_| EAGAIN)?;
            *slot = Some(SendEntry {
                wr_id: a.wr_id,
                tag: a.tag,
                len,
                buf,
            });
        }
        // The RTS goes out from here, on the caller's thread, not after a
        // hop to the work item; what is left beyond one run's budget is
        // queued to it.
        self.run();
        Ok(())
    }

    /// Posts a receive (`SRNIC_IOCTL_RMPP_POST_RECV`).
    pub(crate) fn post_recv(self: &Arc<Self>, a: &SrnicRmppPostRecv) -> Result {
        if a.src_nid != SRNIC_RMPP_ANY_NID && a.src_nid > SRNIC_RMPP_MAX_NID {
            return Err(EINVAL);
        }
        let max_len = u32::try_from(a.length).map_err(|_| EINVAL)?;
        let buf = Buf::new(&self.mrs, self.pd.id(), a.addr, a.length, a.lkey, Need::LocalWrite, SRNIC_RMPP_MAX_MSG)?;
        let mut g = self.inner.lock();
        if g.port.is_none() || g.linger.is_some() {
            return Err(stopped(g.link_down));
        }
        let seq = g.next_post;
        let slot = g.recvs.iter_mut().find(|s| s.is_none()).ok_or(EAGAIN)?;
        *slot = Some(RecvEntry {
            wr_id: a.wr_id,
            match_bits: a.match_bits,
            ignore_bits: a.ignore_bits,
            src: a.src_nid,
            max_len,
            post_seq: seq,
            state: RecvState::Posted,
            buf,
        });
        g.next_post = seq.wrapping_add(1);
        Ok(())
    }

    /// Closes the endpoint for its owner: its messages in flight are aborted
    /// (NULL) and its posted receives flushed, every buffer is released, and
    /// no completion follows. Returns whether this call closed it (`false`:
    /// it was closed already).
    ///
    /// Messages that peers are still in the middle of are refused (MSGDROP).
    /// Messages already delivered may still need their final reply: a sender
    /// whose MSGEND was lost would retry until it fails, the message
    /// delivered. So while the engine has such state (or NULLs unanswered),
    /// the endpoint lingers: it stays attached to the netdev and bound to its
    /// NID, answering retries and re-sending final replies every
    /// retransmission timeout, until every sender acknowledged (GCH) or
    /// [`linger_ns`] passed; the work item then detaches it
    /// ([`Ep::end_linger`]).
    pub(crate) fn close(self: &Arc<Self>) -> bool {
        self.shut(true)
    }

    /// [`Ep::close`], lingering only if `linger` is set.
    fn shut(self: &Arc<Self>, linger: bool) -> bool {
        let port = {
            let mut g = self.inner.lock();
            if g.port.is_none() || g.linger.is_some() {
                return false;
            }
            let now = now_ns();
            let Inner { engine, sends, recvs, .. } = &mut *g;
            stats::add(Rmpp::send_aborted, engine.close(now));
            for e in sends.iter_mut() {
                if let Some(s) = e.take() {
                    self.send_cq.push_notify(self.send_wc(&s, SRNIC_WC_WR_FLUSH_ERR, 0));
                }
            }
            for e in recvs.iter_mut() {
                if let Some(r) = e.take() {
                    self.recv_cq.push_notify(SrnicWc {
                        wr_id: r.wr_id,
                        status: SRNIC_WC_WR_FLUSH_ERR,
                        opcode: SRNIC_WC_RMPP_RECV,
                        qp_handle: self.handle,
                        ..Default::default()
                    });
                }
            }
            if linger && !g.engine.is_idle() {
                // The work item sends the NULLs and MSGDROPs, arms the timer
                // and ends the linger.
                g.linger = Some(Linger {
                    until: now.saturating_add(linger_ns(&self.params)),
                    _module: ModuleRef::new(),
                });
                stats::add(Rmpp::endpoints_lingering, 1);
                drop(g);
                self.kick();
                return true;
            }
            self.detach(&mut g)
        };
        self.release(port);
        true
    }

    /// Ends a linger (the work item: the engine is idle, the time is up or
    /// the link went down). The module reference goes last.
    fn end_linger(&self) {
        let (port, linger) = {
            let mut g = self.inner.lock();
            let Some(linger) = g.linger.take() else { return };
            stats::sub(Rmpp::endpoints_lingering, 1);
            if !g.engine.is_idle() {
                stats::add(Rmpp::linger_expired, 1);
            }
            (self.detach(&mut g), linger)
        };
        self.release(port);
        drop(linger);
    }

    /// Takes the port and settles the statistics the endpoint contributed.
    fn detach(&self, g: &mut Inner) -> Option<Port<Ep>> {
        let port = g.port.take()?;
        stats::sub(Rmpp::active_sends, g.seen_sends);
        stats::sub(Rmpp::active_recvs, g.seen_recvs);
        g.seen_sends = 0;
        g.seen_recvs = 0;
        let pc = port.counters();
        self.account_port(g, &pc);
        Some(port)
    }

    /// Outside the lock: dropping the port waits for the packet handler and
    /// the timer, which only queue work; the work finds the port gone and
    /// returns. Then the NID is free again.
    fn release(&self, port: Option<Port<Ep>>) {
        if port.is_some() {
            drop(port);
            nodes::unbind(self.bound);
            stats::sub(Rmpp::endpoints, 1);
        }
    }

    /// The netdev went down or away: the endpoint stops as `close` stops it
    /// (its netdev reference goes with the port, so the netdev's
    /// unregistration can complete) and reports `SRNIC_EVENT_RMPP_ERROR`.
    fn stop_link_down(self: &Arc<Self>) {
        let lingering = {
            let mut g = self.inner.lock();
            g.link_down = true;
            g.linger.is_some()
        };
        if lingering {
            // Closed already: nobody to tell, nothing left to answer on.
            self.end_linger();
            return;
        }
        if self.shut(false) {
            let mut ev = event(SRNIC_EVENT_RMPP_ERROR, self.handle);
            ev.status = enetdown().to_errno();
            self.events.push(ev);
        }
    }
}

/// The error of a request to a stopped endpoint.
fn stopped(link_down: bool) -> Error {
    if link_down {
        enetdown()
    } else {
        eshutdown()
    }
}

#[pinned_drop]
impl PinnedDrop for Ep {
    fn drop(self: Pin<&mut Self>) {
        self.send_cq.users.fetch_sub(1, Ordering::AcqRel);
        self.recv_cq.users.fetch_sub(1, Ordering::AcqRel);
    }
}
