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

use crate::{
    proto::rmpp::{
        wire::PacketType, Arrival, Completion, Config, Counters, Decision, Engine, PeerState,
        RecvSlot, RecvStatus, RestartPolicy, RxDrop, SendHandle, SendSlot, SendStatus, HEADER_LEN,
        ParseError,
    },
    rmpp::node::{self as nodes, Bound, NIDS},
    sys::{
        netdev::{now_ns, Port, PortOwner, RxSkb, PORT_COUNTERS},
        pages::PinnedPages,
        errno::{ehostunreach, eshutdown},
        wq,
    },
    uapi::*,
    verbs::cq::Cq,
    verbs::limits,
    verbs::mr::{Mr, MrTable, Need},
    verbs::pd::{Pd, PdUse},
    verbs::stats::{self, Rmpp},
};
use core::sync::atomic::Ordering;
use kernel::{
    alloc::{KVVec, KVec},
    impl_has_work, new_mutex, new_work,
    page::PAGE_SIZE,
    prelude::*,
    str::CStr,
    sync::{Arc, ArcBorrow, Mutex},
    workqueue::{Work, WorkItem},
};

/// Frames one work run takes off the queue before it yields.
const RX_BUDGET: usize = 256;
/// Packets one work run sends before it yields.
const TX_BUDGET: usize = 512;

/// Endpoint parameters, validated, as the endpoint uses them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EpParams {
    pub(crate) nid: u32,
    pub(crate) ethertype: u16,
    pub(crate) flags: u32,
    pub(crate) max_send: u32,
    pub(crate) max_recv: u32,
    pub(crate) rto_us: u32,
    pub(crate) max_retries: u32,
    pub(crate) reclaim_ms: u32,
    pub(crate) max_rcv_buf: u32,
    pub(crate) nodes: u32,
    pub(crate) max_data_pkts: u32,
}

impl EpParams {
    /// Takes the request's values (0: default) and checks them against the limits.
    pub(crate) fn from_abi(a: &SrnicRmppCreateEp) -> Result<Self> {
        let d = |v: u32, def: u32| if v == 0 { def } else { v };
        let ethertype = u16::try_from(d(a.ethertype, SRNIC_RMPP_ETHERTYPE)).map_err(|_| EINVAL)?;
        let p = Self {
            nid: a.nid,
            ethertype,
            flags: a.flags,
            max_send: d(a.max_send, limits::RMPP_DEFAULT_SEND),
            max_recv: d(a.max_recv, limits::RMPP_DEFAULT_RECV),
            rto_us: d(a.rto_us, limits::RMPP_DEFAULT_RTO_US),
            max_retries: d(a.max_retries, limits::RMPP_DEFAULT_RETRIES),
            reclaim_ms: a.reclaim_ms,
            max_rcv_buf: d(a.max_rcv_buf, limits::RMPP_DEFAULT_RCV_BUF),
            nodes: d(a.nodes, limits::RMPP_DEFAULT_NODES),
            max_data_pkts: d(a.max_data_pkts, limits::RMPP_DEFAULT_DATA_PKTS),
        };
        let mut p = p;
        if p.reclaim_ms == 0 {
            // Default: a minute, and always twice the sender's retry span.
            let span_ms = u64::from(p.rto_us) * (u64::from(p.max_retries) + 1) / 1000;
            p.reclaim_ms = u32::try_from(span_ms.saturating_mul(2))
                .unwrap_or(u32::MAX)
                .max(limits::RMPP_DEFAULT_RECLAIM_MS);
        }
        // Ethernet II needs an EtherType of at least 0x0600.
        if p.nid > SRNIC_RMPP_MAX_NID
            || p.flags & !SRNIC_RMPP_EP_ALL != 0
            || p.ethertype < 0x0600
            || p.max_send as usize > limits::RMPP_MAX_SEND
            || p.max_recv as usize > limits::RMPP_MAX_RECV
            || p.rto_us < limits::RMPP_MIN_RTO_US
            || p.max_retries > limits::RMPP_MAX_RETRIES
            || p.max_data_pkts > limits::RMPP_MAX_DATA_PKTS
            || p.max_rcv_buf > limits::RMPP_MAX_RCV_BUF
            || p.nodes > p.max_rcv_buf
        {
            return Err(EINVAL);
        }
        Ok(p)
    }

    fn config(&self, mtu: u16) -> Config {
        let mut c = Config::new(self.nid);
        c.mtu = mtu;
        c.max_rcv_buf = self.max_rcv_buf;
        c.nodes = self.nodes;
        c.max_data_pkts = self.max_data_pkts;
        c.retransmit_timeout = u64::from(self.rto_us) * 1000;
        c.max_retries = self.max_retries;
        c.reclaim_timeout = u64::from(self.reclaim_ms) * 1_000_000;
        c.restart = if self.flags & SRNIC_RMPP_EP_RESTART_FROM_START != 0 {
            RestartPolicy::FromStart
        } else {
            RestartPolicy::FromLastGrant
        };
        // A fresh msgID space per endpoint, so that a restarted node does not
        // reuse identifiers its peers still remember.
        let t = now_ns();
        c.first_msg_id = (t ^ (t >> 32)) as u32;
        c
    }

    /// Writes the values in use back into the request.
    pub(crate) fn to_abi(&self, a: &mut SrnicRmppCreateEp) {
        a.ethertype = u32::from(self.ethertype);
        a.max_send = self.max_send;
        a.max_recv = self.max_recv;
        a.rto_us = self.rto_us;
        a.max_retries = self.max_retries;
        a.reclaim_ms = self.reclaim_ms;
        a.max_rcv_buf = self.max_rcv_buf;
        a.nodes = self.nodes;
        a.max_data_pkts = self.max_data_pkts;
    }
}

/// The bytes of a message or receive: pinned user pages, or a memory region.
enum Buf {
    /// A zero-length buffer.
    Empty,
    /// `len` bytes at offset `off` of the first pinned page.
    Pinned { pages: PinnedPages, off: usize, len: usize },
    /// `len` bytes at address `addr` of a region (checked at post time).
    Region { mr: Arc<Mr>, addr: u64, len: usize },
}

impl Buf {
    /// Resolves `[addr, addr + len)`: through the region `lkey` (which must belong
    /// to `pd_id` and allow `need`), or by pinning the user pages when `lkey` is 0.
    fn new(mrs: &MrTable, pd_id: u64, addr: u64, len: u64, lkey: u32, need: Need) -> Result<Self> {
        if len > SRNIC_RMPP_MAX_MSG {
            return Err(EINVAL);
        }
        let n = usize::try_from(len).map_err(|_| EINVAL)?;
        if lkey != 0 {
            let mr = mrs.lookup(lkey).ok_or(EINVAL)?;
            mr.check(pd_id, addr, len, need).map_err(|_| EACCES)?;
            return Ok(Buf::Region { mr, addr, len: n });
        }
        if n == 0 {
            return Ok(Buf::Empty);
        }
        let end = addr.checked_add(len).ok_or(EFAULT)?;
        let page = PAGE_SIZE as u64;
        let first = addr & !(page - 1);
        let last = end.checked_add(page - 1).ok_or(EFAULT)? & !(page - 1);
        let npages = usize::try_from((last - first) / page).map_err(|_| EINVAL)?;
        let start = usize::try_from(first).map_err(|_| EFAULT)?;
        let pages = PinnedPages::pin(start, npages, need == Need::LocalWrite)?;
        Ok(Buf::Pinned {
            pages,
            off: usize::try_from(addr - first).map_err(|_| EFAULT)?,
            len: n,
        })
    }

    fn len(&self) -> usize {
        match self {
            Buf::Empty => 0,
            Buf::Pinned { len, .. } | Buf::Region { len, .. } => *len,
        }
    }

    fn check(&self, off: usize, n: usize) -> Result {
        match off.checked_add(n) {
            Some(end) if end <= self.len() => Ok(()),
            _ => Err(EFAULT),
        }
    }

    /// Copies `data` to byte `off` of the buffer.
    fn write(&self, off: usize, data: &[u8]) -> Result {
        self.check(off, data.len())?;
        match self {
            Buf::Empty => Ok(()),
            Buf::Pinned { pages, off: base, .. } => pages.write(base + off, data),
            Buf::Region { mr, addr, .. } => mr.write(addr.checked_add(off as u64).ok_or(EFAULT)?, data),
        }
    }

    /// Calls `f` with the pieces of `[off, off + n)`, in order.
    fn read_pieces(&self, off: usize, n: usize, f: impl FnMut(&[u8]) -> Result) -> Result {
        self.check(off, n)?;
        match self {
            Buf::Empty => Ok(()),
            Buf::Pinned { pages, off: base, .. } => pages.read_pieces(base + off, n, f),
            Buf::Region { mr, addr, .. } => {
                mr.read_pieces(addr.checked_add(off as u64).ok_or(EFAULT)?, n, f)
            }
        }
    }
}

/// A message in flight.
struct SendEntry {
    wr_id: u64,
    tag: u64,
    len: u32,
    handle: SendHandle,
    buf: Buf,
}

#[derive(Clone, Copy)]
enum RecvState {
    /// Waiting for a message.
    Posted,
    /// A message from `src` is arriving; `seq` orders matches.
    Matched { src: u32, seq: u64 },
    /// Finished; its completion waits for earlier messages of `src`.
    Done { src: u32, seq: u64, wc: SrnicWc },
}

/// A posted receive.
struct RecvEntry {
    wr_id: u64,
    match_bits: u64,
    ignore_bits: u64,
    src: u32,
    max_len: u32,
    post_seq: u64,
    state: RecvState,
    buf: Buf,
}

/// A table the engine indexes: a `KVec` seen as a slice.
struct Slots<T>(KVec<T>);

impl<T> AsRef<[T]> for Slots<T> {
    fn as_ref(&self) -> &[T] {
        &self.0
    }
}

impl<T> AsMut<[T]> for Slots<T> {
    fn as_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

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
    /// Counter values already added to the module's statistics.
    seen_port: [u64; PORT_COUNTERS],
    seen_engine: Counters,
    seen_sends: u64,
    seen_recvs: u64,
}

/// An RMPP endpoint.
#[pin_data(PinnedDrop)]
pub(crate) struct Ep {
    /// The endpoint's handle (in its completions).
    pub(crate) handle: u32,
    params: EpParams,
    bound: Bound,
    pd: PdUse,
    mrs: Arc<MrTable>,
    send_cq: Arc<Cq>,
    recv_cq: Arc<Cq>,
    #[pin]
    inner: Mutex<Inner>,
    #[pin]
    work: Work<Ep>,
}

impl_has_work! {
    impl HasWork<Self> for Ep { self.work }
}

/// The matching up-call: the oldest posted receive that matches takes the message.
struct Matcher<'a> {
    recvs: &'a mut KVec<Option<RecvEntry>>,
    next_match: &'a mut u64,
    drop_unexpected: bool,
}

impl crate::proto::rmpp::Upcall for Matcher<'_> {
    fn arrival(&mut self, a: &Arrival<'_>) -> Decision {
        let found = self
            .recvs
            .iter_mut()
            .enumerate()
            .filter_map(|(i, e)| e.as_mut().map(|e| (i, e)))
            .filter(|(_, e)| {
                matches!(e.state, RecvState::Posted)
                    && (e.src == SRNIC_RMPP_ANY_NID || e.src == a.src)
                    && (a.tag ^ e.match_bits) & !e.ignore_bits == 0
            })
            .min_by_key(|(_, e)| e.post_seq);
        match found {
            Some((i, e)) => {
                let seq = *self.next_match;
                *self.next_match = seq.wrapping_add(1);
                e.state = RecvState::Matched { src: a.src, seq };
                Decision::Accept {
                    len: e.max_len.min(a.len),
                    ctx: i as u64,
                }
            }
            None if self.drop_unexpected => {
                stats::add(Rmpp::unexpected_dropped, 1);
                Decision::Drop
            }
            None => Decision::Defer,
        }
    }
}

fn count_drop(e: RxDrop) {
    let c = match e {
        RxDrop::Parse(ParseError::Truncated) => Rmpp::drop_short,
        RxDrop::Parse(ParseError::BadVersion(_)) => Rmpp::drop_bad_version,
        RxDrop::Parse(ParseError::UnknownType(_)) => Rmpp::drop_bad_type,
        RxDrop::Parse(ParseError::UnexpectedPayload) | RxDrop::Malformed => Rmpp::drop_malformed,
        RxDrop::NotForUs => Rmpp::drop_other_nid,
        RxDrop::UnknownPeer => Rmpp::drop_unknown_nid,
        RxDrop::UnknownMessage => Rmpp::drop_unknown_msg,
        RxDrop::Stale => Rmpp::drop_duplicate,
        RxDrop::OutOfOrder => Rmpp::drop_out_of_order,
        RxDrop::TableFull => Rmpp::drop_table_full,
        RxDrop::Deferred => Rmpp::unexpected_held,
        RxDrop::Unexpected => Rmpp::drop_unexpected,
    };
    stats::add(c, 1);
}

fn filled<T: Clone>(n: usize, v: T) -> Result<Slots<T>> {
    Ok(Slots(KVec::from_elem(v, n, GFP_KERNEL)?))
}

fn none_vec<T>(n: usize) -> Result<KVec<Option<T>>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        v.push(None, GFP_KERNEL)?;
    }
    Ok(v)
}

impl Ep {
    /// Creates an endpoint and attaches it to the netdev `ifname`.
    #[expect(clippy::too_many_arguments)]
    pub(crate) fn create(
        handle: u32,
        params: EpParams,
        ifname: &CStr,
        pd: &Arc<Pd>,
        mrs: Arc<MrTable>,
        send_cq: Arc<Cq>,
        recv_cq: Arc<Cq>,
    ) -> Result<Arc<Self>> {
        let (ifindex, mtu) = crate::sys::netdev::netdev_info(ifname)?;
        // The RMPP packet (header and payload) is the Ethernet payload.
        let mtu = u16::try_from(mtu).unwrap_or(u16::MAX);
        if usize::from(mtu) <= HEADER_LEN {
            return Err(EINVAL);
        }
        let bound = Bound {
            ifindex,
            ethertype: params.ethertype,
            nid: params.nid,
        };
        nodes::bind(bound)?;
        match Self::create_bound(handle, params, bound, mtu, ifname, pd, mrs, send_cq, recv_cq) {
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
        send_cq: Arc<Cq>,
        recv_cq: Arc<Cq>,
    ) -> Result<Arc<Self>> {
        // The engine's receive table also holds finished messages until their
        // GCH arrives: twice the posted receives.
        let recv_slots = (params.max_recv as usize).saturating_mul(2).max(2);
        // Packets are sized from the netdev's MTU when the endpoint is created.
        let engine = Eng::new(
            params.config(mtu),
            filled(params.max_send as usize, SendSlot::default())?,
            filled(recv_slots, RecvSlot::default())?,
            filled(NIDS, PeerState::default())?,
        )
        .map_err(|_| EINVAL)?;
        let inner = Inner {
            engine,
            sends: none_vec(params.max_send as usize)?,
            recvs: none_vec(params.max_recv as usize)?,
            port: None,
            shadow: KVVec::from_elem(0u8, usize::from(mtu), GFP_KERNEL)?,
            next_post: 0,
            next_match: 0,
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
                params,
                bound,
                pd: PdUse::new(pd),
                mrs,
                send_cq,
                recv_cq,
                inner <- new_mutex!(inner, "srnic_rmpp_ep"),
                work <- new_work!("srnic_rmpp_ep"),
            }),
            GFP_KERNEL,
        );
        let ep = ep?;
        // Data packets are bounded by the grant pool; every other frame by the
        // tables: per retransmission timeout at most one first packet, NULL or
        // GCH per incoming message slot and one reply per outgoing message.
        let qmax = (params.max_rcv_buf as usize)
            .saturating_add(recv_slots.saturating_mul(2))
            .saturating_add((params.max_send as usize).saturating_mul(2))
            .clamp(256, limits::RMPP_MAX_RX_QUEUE) as u32;
        let port = Port::open(ifname, params.ethertype, params.nid, qmax, ep.clone())?;
        if port.ifindex() != bound.ifindex {
            // Renamed under us: refuse rather than bind another device.
            return Err(ENODEV);
        }
        ep.inner.lock().port = Some(port);
        stats::add(Rmpp::endpoints, 1);
        Ok(ep)
    }

    /// The RMPP packet size in use (header included).
    pub(crate) fn packet_size(&self) -> u32 {
        self.inner.lock().engine.config().mtu.into()
    }

    fn kick(self: &Arc<Self>) {
        let _ = wq::queue().enqueue(self.clone());
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
        let buf = Buf::new(&self.mrs, self.pd.id(), a.addr, a.length, a.lkey, Need::LocalRead)?;
        let len = u32::try_from(a.length).map_err(|_| EINVAL)?;
        {
            let mut g = self.inner.lock();
            let Inner { engine, sends, port, .. } = &mut *g;
            if port.is_none() {
                return Err(eshutdown());
            }
            let (i, slot) = sends.iter_mut().enumerate().find(|(_, s)| s.is_none()).ok_or(EAGAIN)?;
            let handle = engine
                .send(now_ns(), a.dst_nid, len, a.tag, i as u64)
                .map_err(|_| EAGAIN)?;
            *slot = Some(SendEntry {
                wr_id: a.wr_id,
                tag: a.tag,
                len,
                handle,
                buf,
            });
        }
        self.kick();
        Ok(())
    }

    /// Posts a receive (`SRNIC_IOCTL_RMPP_POST_RECV`).
    pub(crate) fn post_recv(self: &Arc<Self>, a: &SrnicRmppPostRecv) -> Result {
        if a.src_nid != SRNIC_RMPP_ANY_NID && a.src_nid > SRNIC_RMPP_MAX_NID {
            return Err(EINVAL);
        }
        let max_len = u32::try_from(a.length).map_err(|_| EINVAL)?;
        let buf = Buf::new(&self.mrs, self.pd.id(), a.addr, a.length, a.lkey, Need::LocalWrite)?;
        let mut g = self.inner.lock();
        if g.port.is_none() {
            return Err(eshutdown());
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

    /// Stops the endpoint: aborts its messages in flight (a NULL goes out for
    /// each, so their receivers free their state), flushes its posted receives,
    /// and detaches from the netdev. Every buffer is released.
    pub(crate) fn close(&self) {
        let port = {
            let mut g = self.inner.lock();
            let Some(port) = g.port.take() else { return };
            let now = now_ns();
            let Inner { engine, sends, recvs, .. } = &mut *g;
            let mut aborted = 0;
            for e in sends.iter().flatten() {
                if engine.abort(now, e.handle).is_ok() {
                    aborted += 1;
                }
            }
            stats::add(Rmpp::send_aborted, aborted);
            // One round of NULLs (best effort: a lost one leaves the receiver
            // to its reclaim timeout).
            self.transmit(engine, sends, &port, now);
            for e in sends.iter_mut() {
                if let Some(s) = e.take() {
                    self.send_cq.push(self.send_wc(&s, SRNIC_WC_WR_FLUSH_ERR, 0));
                }
            }
            for e in recvs.iter_mut() {
                if let Some(r) = e.take() {
                    self.recv_cq.push(SrnicWc {
                        wr_id: r.wr_id,
                        status: SRNIC_WC_WR_FLUSH_ERR,
                        opcode: SRNIC_WC_RMPP_RECV,
                        qp_handle: self.handle,
                        ..Default::default()
                    });
                }
            }
            stats::sub(Rmpp::active_sends, g.seen_sends);
            stats::sub(Rmpp::active_recvs, g.seen_recvs);
            g.seen_sends = 0;
            g.seen_recvs = 0;
            let pc = port.counters();
            self.account_port(&mut g, &pc);
            port
        };
        // Outside the lock: waits for the packet handler and the timer, which
        // only queue work; the work finds the port gone and returns.
        drop(port);
        nodes::unbind(self.bound);
        stats::sub(Rmpp::endpoints, 1);
    }

    fn send_wc(&self, s: &SendEntry, status: u32, accepted: u32) -> SrnicWc {
        SrnicWc {
            wr_id: s.wr_id,
            status,
            opcode: SRNIC_WC_RMPP_SEND,
            byte_len: accepted,
            qp_handle: self.handle,
            flags: if status == SRNIC_WC_SUCCESS && accepted < s.len {
                SRNIC_WC_TRUNCATED
            } else {
                0
            },
            tag: s.tag,
            msg_len: u64::from(s.len),
            ..Default::default()
        }
    }

    fn account_port(&self, g: &mut Inner, pc: &[u64; PORT_COUNTERS]) {
        const MAP: [Rmpp; PORT_COUNTERS] = [
            Rmpp::drop_short,
            Rmpp::drop_bad_version,
            Rmpp::drop_bad_type,
            Rmpp::drop_other_nid,
            Rmpp::drop_queue_full,
        ];
        for ((c, now), seen) in MAP.iter().zip(pc.iter()).zip(g.seen_port.iter_mut()) {
            stats::add(*c, now.saturating_sub(*seen));
            *seen = *now;
        }
    }

    /// Takes one frame: the engine parses it against its state, and placed
    /// payload is copied from the skb to the receive buffer.
    fn rx_frame(&self, g: &mut Inner, skb: &RxSkb, now: u64) {
        let mut hdr = [0u8; HEADER_LEN];
        if skb.len() < HEADER_LEN || skb.copy_head(&mut hdr).is_err() {
            stats::add(Rmpp::drop_short, 1);
            return;
        }
        // The peer is the message's receiver for replies, else its sender.
        let field = |r: core::ops::Range<usize>| {
            hdr.get(r)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map_or(u32::MAX, u32::from_be_bytes)
        };
        let reply = PacketType::from_code(hdr[1]).is_some_and(PacketType::is_reply);
        let peer = if reply { field(8..12) } else { field(4..8) };
        match nodes::lookup(peer) {
            Some(n) if n.ifindex == self.bound.ifindex => {}
            _ => {
                stats::add(Rmpp::drop_unknown_nid, 1);
                return;
            }
        }
        let Inner {
            engine,
            recvs,
            shadow,
            next_match,
            ..
        } = g;
        let flen = skb.len().min(shadow.len());
        let Some(head) = shadow.get_mut(..HEADER_LEN) else { return };
        head.copy_from_slice(&hdr);
        let Some(frame) = shadow.get(..flen) else { return };
        let mut up = Matcher {
            recvs,
            next_match,
            drop_unexpected: self.params.flags & SRNIC_RMPP_EP_DROP_UNEXPECTED != 0,
        };
        let placement = match engine.receive(now, frame, &mut up) {
            Ok(p) => p,
            Err(e) => {
                count_drop(e);
                return;
            }
        };
        stats::add(Rmpp::rx_packets, 1);
        let Some(p) = placement else { return };
        // The placed bytes are where the engine found them in the frame image:
        // the same offsets in the skb.
        let at = (p.data.as_ptr() as usize).wrapping_sub(frame.as_ptr() as usize);
        let n = p.data.len();
        let Some(Some(r)) = usize::try_from(p.ctx).ok().and_then(|i| recvs.get(i)) else {
            stats::add(Rmpp::drop_unexpected, 1);
            return;
        };
        let mut pos = p.offset as usize;
        let res = skb.read_with(at, n, &mut |piece: &[u8]| {
            r.buf.write(pos, piece)?;
            pos += piece.len();
            Ok(())
        });
        match res {
            Ok(()) => stats::add(Rmpp::rx_bytes, n as u64),
            Err(_) => stats::add(Rmpp::drop_malformed, 1),
        }
    }

    /// Sends what the engine has to send, at most [`TX_BUDGET`] packets.
    /// Returns whether more may be waiting.
    fn transmit(&self, engine: &mut Eng, sends: &KVec<Option<SendEntry>>, port: &Port<Ep>, now: u64) -> bool {
        let mut hdr = [0u8; HEADER_LEN];
        for _ in 0..TX_BUDGET {
            let Some(t) = engine.poll_transmit(now, &mut hdr) else {
                return false;
            };
            let plen = t.payload.map_or(0, |p| p.len as usize);
            let r = (|| -> Result {
                let node = nodes::lookup(t.to).ok_or(ehostunreach())?;
                if node.ifindex != self.bound.ifindex {
                    return Err(ehostunreach());
                }
                let mut skb = port.tx_alloc(&node.mac, HEADER_LEN + plen)?;
                skb.write_at(0, &hdr)?;
                if let Some(p) = t.payload {
                    let e = usize::try_from(p.cookie)
                        .ok()
                        .and_then(|i| sends.get(i))
                        .and_then(Option::as_ref)
                        .ok_or(EINVAL)?;
                    let mut pos = HEADER_LEN;
                    e.buf.read_pieces(p.offset as usize, plen, |piece| {
                        skb.write_at(pos, piece)?;
                        pos += piece.len();
                        Ok(())
                    })?;
                }
                skb.send()
            })();
            match r {
                Ok(()) => {
                    stats::add(Rmpp::tx_packets, 1);
                    stats::add(Rmpp::tx_bytes, plen as u64);
                }
                // A packet that does not go out is a lost packet: the protocol
                // recovers from it.
                Err(_) => stats::add(Rmpp::tx_errors, 1),
            }
        }
        true
    }

    /// Hands finished messages to the CQs.
    fn complete(&self, g: &mut Inner) {
        let Inner { engine, sends, recvs, .. } = g;
        let mut recv_done = false;
        while let Some(c) = engine.poll_completion() {
            match c {
                Completion::Send { cookie, status, .. } => {
                    let Some(s) = usize::try_from(cookie).ok().and_then(|i| sends.get_mut(i)).and_then(Option::take) else {
                        continue;
                    };
                    let (st, accepted) = match status {
                        SendStatus::Delivered { accepted } => {
                            stats::add(Rmpp::msgs_sent, 1);
                            (SRNIC_WC_SUCCESS, accepted)
                        }
                        SendStatus::Dropped => {
                            stats::add(Rmpp::send_dropped, 1);
                            (SRNIC_WC_REM_INV_REQ_ERR, 0)
                        }
                        SendStatus::Aborted => (SRNIC_WC_WR_FLUSH_ERR, 0),
                        SendStatus::Failed => {
                            stats::add(Rmpp::send_failed, 1);
                            (SRNIC_WC_RETRY_EXC_ERR, 0)
                        }
                    };
                    self.send_cq.push(self.send_wc(&s, st, accepted));
                    // Dropping `s` unpins its buffer: the engine no longer reads it.
                }
                Completion::Recv {
                    ctx,
                    src,
                    tag,
                    len,
                    accepted,
                    status,
                    ..
                } => {
                    let Some(Some(r)) = usize::try_from(ctx).ok().and_then(|i| recvs.get_mut(i)) else {
                        continue;
                    };
                    let RecvState::Matched { seq, .. } = r.state else { continue };
                    let ok = status == RecvStatus::Complete;
                    let truncated = ok && accepted < len;
                    if ok {
                        stats::add(Rmpp::msgs_received, 1);
                    } else {
                        stats::add(Rmpp::recv_aborted, 1);
                    }
                    if truncated {
                        stats::add(Rmpp::msgs_truncated, 1);
                    }
                    r.state = RecvState::Done {
                        src,
                        seq,
                        wc: SrnicWc {
                            wr_id: r.wr_id,
                            status: if ok { SRNIC_WC_SUCCESS } else { SRNIC_WC_REM_ABORT_ERR },
                            opcode: SRNIC_WC_RMPP_RECV,
                            byte_len: if ok { accepted } else { 0 },
                            qp_handle: self.handle,
                            flags: if truncated { SRNIC_WC_TRUNCATED } else { 0 },
                            src_nid: src,
                            tag,
                            msg_len: u64::from(len),
                            ..Default::default()
                        },
                    };
                    recv_done = true;
                }
            }
        }
        if recv_done {
            self.report_in_order(recvs);
        }
    }

    /// Reports finished receives whose sender has no earlier message still
    /// arriving, oldest match first.
    fn report_in_order(&self, recvs: &mut KVec<Option<RecvEntry>>) {
        loop {
            let mut best: Option<(usize, u64)> = None;
            for (i, e) in recvs.iter().enumerate() {
                let Some(RecvEntry {
                    state: RecvState::Done { src, seq, .. },
                    ..
                }) = e
                else {
                    continue;
                };
                let blocked = recvs.iter().flatten().any(|o| match o.state {
                    RecvState::Matched { src: s, seq: q } => s == *src && q < *seq,
                    _ => false,
                });
                if !blocked && best.is_none_or(|(_, b)| *seq < b) {
                    best = Some((i, *seq));
                }
            }
            let Some((i, _)) = best else { return };
            if let Some(RecvEntry {
                state: RecvState::Done { wc, .. },
                ..
            }) = recvs.get_mut(i).and_then(Option::take)
            {
                self.recv_cq.push(wc);
            }
        }
    }

    /// One run of the endpoint's work (see the module documentation).
    fn run(self: &Arc<Self>) {
        let mut guard = self.inner.lock();
        let g = &mut *guard;
        let Some(port) = g.port.take() else { return };
        let now = now_ns();
        let mut more = false;
        for i in 0..=RX_BUDGET {
            if i == RX_BUDGET {
                more = true;
                break;
            }
            let Some(skb) = port.dequeue() else { break };
            self.rx_frame(g, &skb, now);
        }
        if g.engine.poll_timeout().is_some_and(|d| d <= now) {
            g.engine.handle_timeout(now);
        }
        more |= self.transmit(&mut g.engine, &g.sends, &port, now);
        self.complete(g);
        // Module statistics: engine counters, port counters and gauges.
        let c = g.engine.counters();
        let s = g.seen_engine;
        stats::add(Rmpp::retransmits, c.retransmits.saturating_sub(s.retransmits));
        stats::add(Rmpp::grants, c.grants.saturating_sub(s.grants));
        stats::add(Rmpp::granted_packets, c.granted_pkts.saturating_sub(s.granted_pkts));
        stats::add(Rmpp::grants_limited, c.grants_limited.saturating_sub(s.grants_limited));
        g.seen_engine = c;
        let pc = port.counters();
        self.account_port(g, &pc);
        let (as_, ar) = (g.engine.active_sends() as u64, g.engine.active_recvs() as u64);
        stats::add(Rmpp::active_sends, as_.saturating_sub(g.seen_sends));
        stats::sub(Rmpp::active_sends, g.seen_sends.saturating_sub(as_));
        stats::add(Rmpp::active_recvs, ar.saturating_sub(g.seen_recvs));
        stats::sub(Rmpp::active_recvs, g.seen_recvs.saturating_sub(ar));
        g.seen_sends = as_;
        g.seen_recvs = ar;
        match g.engine.poll_timeout() {
            Some(d) => port.arm(d.saturating_sub(now).max(1)),
            None => port.arm(0),
        }
        g.port = Some(port);
        drop(guard);
        if more {
            self.kick();
        }
    }
}

impl PortOwner for Ep {
    fn notify(this: ArcBorrow<'_, Self>) {
        let ep: Arc<Ep> = this.into();
        ep.kick();
    }
}

impl WorkItem for Ep {
    type Pointer = Arc<Ep>;
    fn run(this: Arc<Ep>) {
        Ep::run(&this);
    }
}

#[pinned_drop]
impl PinnedDrop for Ep {
    fn drop(self: Pin<&mut Self>) {
        self.send_cq.users.fetch_sub(1, Ordering::AcqRel);
        self.recv_cq.users.fetch_sub(1, Ordering::AcqRel);
    }
}
