// SPDX-License-Identifier: GPL-2.0
//! The VMTP stack of one network namespace: the raw IPv4 socket of protocol
//! 81, the table of the namespace's entities, and the packets for none of
//! them.
//!
//! A stack exists while its namespace has entities: the first entity
//! created there makes it (in the creator's namespace, with the creator's
//! credentials; its receive buffer is charged to the creator's budget), the
//! last one to leave ends it ([`Stack::leave`]): its callback is removed and
//! the registry forgets it; the socket itself goes with the last reference.
//! An ended stack's work reads no more datagrams and answers none: the next
//! stack of the namespace may already be there, and both sockets get a copy
//! of every datagram.
//!
//! Receiving: the socket's callback (softirq) queues the stack's work (on
//! the data path's queue, as a QP's receive work); one
//! run takes up to [`RX_BATCH`] datagrams without waiting, checks the IP
//! header, finds the entity the VMTP header names
//! ([`proto::vmtp::engine::destination`]) and hands it the packet
//! ([`Member::deliver`], in the work, process context). A packet for no
//! entity goes to the stack's own engine, which has none: it answers a
//! Request with NONEXISTENT_ENTITY (RFC 1045, section 5.3) so that its client
//! fails at once rather than after its retries, and a Response the same way,
//! so that its server discards it instead of sending it again; it drops the
//! rest.
//!
//! Sending: entities send through [`Stack::send`], without waiting and
//! without a lock; a full socket buffer loses the packet (counted) and VMTP's
//! retransmission recovers it.
//!
//! Locks, in the order they nest: the registry, then a stack's `table`; the
//! work's `rx`, then (not nested) an entity's own lock.

use crate::{
    proto::vmtp::{
        checksum::Summer,
        engine::{destination, Addr, Config, Csr, Engine, Local, Role, RxDrop, IP_HEADER_LEN},
        group::{BLOCK, MAX_GROUP_BYTES},
        wire::{IP_PROTOCOL, HEADER_LEN},
        EntityId,
    },
    sys::{
        gfp::ACCOUNTED,
        global::{Global, Installed},
        errno::eaddrinuse,
        netdev::now_ns,
        rawip::{RawIp, RawIpEvents},
        wq,
    },
    verbs::budget::{self, Budget, Charge},
    verbs::limits,
    verbs::stats::{self, Vmtp},
};
use kernel::{
    alloc::{KVVec, KVec},
    impl_has_work, new_mutex, new_work,
    prelude::*,
    sync::{Arc, ArcBorrow, Mutex},
    workqueue::{Work, WorkItem},
};

/// Datagrams one run of the stack's work takes before it queues itself
/// again, so that other work gets its turn under a flood.
const RX_BATCH: usize = 64;

/// The longest IPv4 header (with options).
const IP_HEADER_MAX: usize = 60;

/// The receive buffer: the longest IP header and the longest VMTP packet
/// srnic accepts (header, one group's data and the checksum). A longer
/// datagram is cut and dropped.
const RX_BUF: usize = IP_HEADER_MAX + HEADER_LEN + MAX_GROUP_BYTES as usize + 4;

/// The largest IP packet an entity sends: a VMTP packet carries at most one
/// group's data.
pub(crate) const MAX_MTU: u32 = IP_HEADER_LEN + HEADER_LEN as u32 + MAX_GROUP_BYTES + 4;

/// An entity of the stack, as the stack sees it.
pub(crate) trait Member: Send + Sync {
    /// A VMTP packet (the IP payload) from `src` for this entity. Runs in
    /// the stack's work, process context.
    fn deliver(self: Arc<Self>, stack: &Stack, src: Addr, packet: &[u8], now: u64);
}

struct Entry {
    entity: EntityId,
    role: Role,
    member: Arc<dyn Member>,
}

struct Table {
    /// Free entries are `None` and reused.
    entries: KVec<Option<Entry>>,
    /// The last entity left: the stack takes no more.
    ended: bool,
}

/// The engine of no entity, for packets nobody here takes.
type NullEngine = Engine<[Local; 0], [Csr; 0]>;

/// What the work uses: the receive buffer and the engine of no entity.
struct Rx {
    buf: KVVec<u8>,
    null: NullEngine,
}

/// The VMTP stack of one network namespace.
#[pin_data]
pub(crate) struct Stack {
    sock: RawIp<Stack>,
    #[pin]
    table: Mutex<Table>,
    #[pin]
    rx: Mutex<Rx>,
    #[pin]
    work: Work<Stack>,
    _charge: Charge,
}

impl_has_work! {
    impl HasWork<Self> for Stack { self.work }
}

/// The stacks that exist, one per network namespace with entities.
#[pin_data]
struct Registry {
    #[pin]
    /// Free entries are `None` and reused.
    stacks: Mutex<KVec<Option<Arc<Stack>>>>,
}

static REGISTRY: Global<Registry> = Global::new();

/// Owns the registry from module init to module exit.
pub(crate) struct Registration {
    _registry: Installed<Registry>,
}

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        let r = Arc::pin_init(
            pin_init!(Registry { stacks <- new_mutex!(KVec::new(), "srnic_vmtp_stacks") }),
            GFP_KERNEL,
        )?;
        Ok(Self { _registry: REGISTRY.install(r) })
    }
}

/// What a stack takes: itself and its receive buffer.
fn footprint() -> Result<usize> {
    budget::sum(&[budget::arc::<Stack>(), RX_BUF])
}

/// The engine of no entity sends headers only (Notifies), but its
/// configuration must hold a packet of one block.
const NULL_MTU: u16 = (IP_HEADER_LEN as usize + HEADER_LEN + BLOCK as usize + 4) as u16;

impl Stack {
    /// Adds `member`, the entity `entity` in role `role`, to the stack of the
    /// caller's network namespace (made now if there is none, charged to
    /// `budget`). `EADDRINUSE` when the namespace has that entity already.
    pub(crate) fn join(entity: EntityId, role: Role, member: Arc<dyn Member>, budget: &Arc<Budget>) -> Result<Arc<Stack>> {
        let reg = REGISTRY.get().ok_or(ENODEV)?;
        let mut stacks = reg.stacks.lock();
        let stack = match stacks.iter().flatten().find(|s| s.sock.in_current_net()) {
            Some(s) => s.clone(),
            None => {
                let s = Self::new(budget)?;
                if let Err(e) = put(&mut stacks, s.clone()) {
                    // Not registered: it ends at once, or its callback's
                    // reference would keep it (and its socket) past the
                    // module.
                    let detached = Self::end_if_empty(&mut stacks, &s);
                    drop(stacks);
                    drop(detached);
                    return Err(e);
                }
                stats::add(Vmtp::namespaces, 1);
                s
            }
        };
        let r = (|| {
            let mut t = stack.table.lock();
            let entries = &mut t.entries;
            if entries.iter().flatten().any(|e| e.entity == entity) {
                return Err(eaddrinuse());
            }
            if entries.iter().flatten().count() >= limits::VMTP_MAX_PER_NET {
                return Err(ENOSPC);
            }
            put(entries, Entry { entity, role, member })
        })();
        if let Err(e) = r {
            let detached = Self::end_if_empty(&mut stacks, &stack);
            drop(stacks);
            drop(detached);
            return Err(e);
        }
        Ok(stack)
    }

    fn new(budget: &Arc<Budget>) -> Result<Arc<Self>> {
        let charge = budget.charge(footprint()?)?;
        let mut cfg = Config::new();
        cfg.mtu = NULL_MTU;
        let null = NullEngine::new(cfg, [], [], 0).map_err(|_| EINVAL)?;
        let rx = Rx {
            buf: KVVec::from_elem(0u8, RX_BUF, ACCOUNTED)?,
            null,
        };
        let sock = RawIp::open(IP_PROTOCOL)?;
        let stack = Arc::pin_init(
            pin_init!(Self {
                sock,
                table <- new_mutex!(Table { entries: KVec::new(), ended: false }, "srnic_vmtp_table"),
                rx <- new_mutex!(rx, "srnic_vmtp_rx"),
                work <- new_work!("srnic_vmtp_stack"),
                _charge: charge,
            }),
            ACCOUNTED,
        )?;
        stack.sock.attach(stack.clone())?;
        // Datagrams may have been queued before the callback was there.
        stack.kick();
        Ok(stack)
    }

    /// Removes the entity `entity` (the member leaves). The last one ends
    /// the stack.
    pub(crate) fn leave(self: &Arc<Self>, entity: EntityId) {
        let Some(reg) = REGISTRY.get() else { return };
        let mut stacks = reg.stacks.lock();
        let gone = {
            let mut t = self.table.lock();
            t.entries
                .iter_mut()
                .find(|e| e.as_ref().is_some_and(|e| e.entity == entity))
                .and_then(Option::take)
        };
        let detached = Self::end_if_empty(&mut stacks, self);
        drop(stacks);
        // Outside the locks: the member and the stack may go with these.
        drop(gone);
        drop(detached);
    }

    /// With the registry locked: ends `stack` if it has no entity left, and
    /// returns the reference its callback held.
    fn end_if_empty(stacks: &mut KVec<Option<Arc<Stack>>>, stack: &Arc<Stack>) -> Option<Arc<Stack>> {
        {
            let mut t = stack.table.lock();
            if t.entries.iter().any(Option::is_some) || t.ended {
                return None;
            }
            t.ended = true;
        }
        if let Some(s) = stacks.iter_mut().find(|s| s.as_ref().is_some_and(|s| Arc::ptr_eq(s, stack))) {
            drop(s.take());
            stats::sub(Vmtp::namespaces, 1);
        }
        stack.sock.detach()
    }

    /// Sends `packet` (a VMTP packet; the kernel adds the IP header) to
    /// `to`, without waiting. A failure is counted and the packet lost.
    pub(crate) fn send(&self, to: Addr, packet: &[u8]) {
        if self.sock.send(to, packet).is_err() {
            stats::add(Vmtp::tx_errors, 1);
        }
    }

    /// Queues the receive work on the data path's queue (per CPU, high
    /// priority: it runs on the CPU that took the packet, ahead of a task
    /// polling its CQ there; see `sys/wq.c`).
    fn kick(self: &Arc<Self>) {
        let _ = wq::dp_queue().enqueue(self.clone());
    }

    /// One run of the work: up to [`RX_BATCH`] datagrams.
    fn run(self: &Arc<Self>) {
        let mut rx = self.rx.lock();
        let Rx { buf, null } = &mut *rx;
        for _ in 0..RX_BATCH {
            let d = match self.sock.recv(buf) {
                Ok(Some(d)) => d,
                Ok(None) | Err(_) => return,
            };
            let now = now_ns();
            let Some(packet) = ip_payload(buf.get(..d.len).unwrap_or(&[]), d.len) else {
                stats::add(Vmtp::drop_short, 1);
                continue;
            };
            let member = match destination(packet) {
                Ok((entity, role)) => {
                    let t = self.table.lock();
                    // An ended stack answers nothing and does not come
                    // back: its socket lives on until the last reference
                    // goes (this work's among them), and a stack made since
                    // for the namespace, whose socket gets a copy of every
                    // datagram too, may have the entity this one would
                    // call nonexistent (its server would then discard the
                    // Response as unacknowledged).
                    if t.ended {
                        return;
                    }
                    t.entries
                        .iter()
                        .flatten()
                        .find(|e| e.entity == entity && e.role == role)
                        .map(|e| e.member.clone())
                }
                Err(e) => {
                    stats::add(drop_counter(e), 1);
                    continue;
                }
            };
            match member {
                Some(m) => m.deliver(self, d.src, packet, now),
                None => self.nobody(null, d.src, packet, now),
            }
        }
        drop(rx);
        // More may be queued: yield, and come back (unless ended meanwhile).
        if !self.table.lock().ended {
            self.kick();
        }
    }

    /// A packet for an entity this namespace does not have.
    fn nobody(&self, null: &mut NullEngine, src: Addr, packet: &[u8], now: u64) {
        // It has no entity: every packet is dropped (a Request or a
        // Response answered with NONEXISTENT_ENTITY).
        let mut defer = |_: &_| crate::proto::vmtp::engine::Decision::Defer;
        if let Err(e) = null.receive(now, src, packet, &mut defer) {
            stats::add(drop_counter(e), 1);
        }
        // Notifies only: a header and its checksum.
        let mut hdr = [0u8; HEADER_LEN];
        let mut p = [0u8; HEADER_LEN + 4];
        while let Some(t) = null.poll_transmit(now, &mut hdr) {
            let mut s = Summer::default();
            s.update(&hdr);
            let (h, sum) = p.split_at_mut(HEADER_LEN);
            h.copy_from_slice(&hdr);
            sum.copy_from_slice(&s.finish());
            self.send(t.to, &p);
            stats::add(Vmtp::tx_packets, 1);
            stats::add(Vmtp::notifies_sent, 1);
        }
        while null.poll_completion().is_some() {}
    }
}

/// The VMTP packet in an IPv4 datagram of `len` bytes whose start is
/// `bytes` (all of it unless it was cut): `None` when the IP header is not
/// one or the datagram was cut.
fn ip_payload(bytes: &[u8], len: usize) -> Option<&[u8]> {
    if bytes.len() != len {
        return None;
    }
    let first = *bytes.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(first & 0xf) * 4;
    let total = usize::from(u16::from_be_bytes([*bytes.get(2)?, *bytes.get(3)?]));
    if ihl < IP_HEADER_LEN as usize || total < ihl || total > len {
        return None;
    }
    bytes.get(ihl..total)
}

/// Puts `v` in the first free entry of `table`, or a new one.
fn put<T>(table: &mut KVec<Option<T>>, v: T) -> Result {
    match table.iter_mut().find(|e| e.is_none()) {
        Some(e) => *e = Some(v),
        None => table.push(Some(v), ACCOUNTED)?,
    }
    Ok(())
}

/// The counter of a dropped packet.
pub(crate) fn drop_counter(e: RxDrop) -> Vmtp {
    match e {
        RxDrop::Parse(crate::proto::vmtp::wire::ParseError::Truncated) => Vmtp::drop_short,
        RxDrop::Parse(_) => Vmtp::drop_bad_header,
        RxDrop::Checksum => Vmtp::drop_checksum,
        RxDrop::Unsupported => Vmtp::drop_unsupported,
        RxDrop::UnknownEntity => Vmtp::drop_unknown_entity,
        RxDrop::Stale => Vmtp::drop_stale,
        RxDrop::Malformed => Vmtp::drop_malformed,
        RxDrop::TableFull => Vmtp::drop_table_full,
        RxDrop::Deferred => Vmtp::drop_no_buffer,
    }
}

impl RawIpEvents for Stack {
    fn readable(this: ArcBorrow<'_, Self>) {
        let s: Arc<Stack> = this.into();
        s.kick();
    }
}

impl WorkItem for Stack {
    type Pointer = Arc<Stack>;
    fn run(this: Arc<Stack>) {
        Stack::run(&this);
    }
}
