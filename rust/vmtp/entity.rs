// SPDX-License-Identifier: GPL-2.0
//! A VMTP entity: a client or a server of one network namespace, running its
//! own sans-IO engine of `proto::vmtp` with one local entity.
//!
//! A client has one message transaction at a time (RFC 1045, section 2.3):
//! its Request's bytes and its Response buffer (pinned user pages or a
//! memory region) are held until the transaction ends. A server has posted
//! Request buffers, taken oldest first by each new Request, and the
//! Responses it is sending, each held until its client acknowledges it or
//! the retransmissions give up.
//!
//! Execution: every protocol step runs in process context under the
//! entity's one mutex (`inner`): packets in the stack's work
//! ([`Member::deliver`]), deadlines in the entity's timer, requests in the
//! ioctls. Each step ends with one pump ([`Entity::pump`], `entity/io.rs`):
//! what the engine sends goes out through the stack, finished work goes to
//! the CQ, the timer is armed for the next deadline.
//!
//! Life: created by `SRNIC_IOCTL_VMTP_CREATE`, joined to its namespace's
//! stack (which makes the identifier unique there), destroyed by
//! `SRNIC_IOCTL_VMTP_DESTROY` or with its file ([`Entity::close`]): its
//! work ends flushed, every buffer is released, it leaves the stack (from
//! then on its peers' packets are answered as for no entity) and its timer
//! is cancelled. Nothing lingers: a server's records go with it.
//!
//! Locks, in the order they nest: `inner`, then the CQ's ring.

mod io;
mod params;

pub(crate) use self::params::Params;
use crate::{
    proto::vmtp::{
        engine::{Counters, Csr, Engine, Handle, Local, Role},
        EntityId,
    },
    sys::{
        errno::{eaddrinuse, eshutdown},
        gfp::ACCOUNTED,
        netdev::now_ns,
        random::random_u32,
        rawip,
        timer::{Timer, TimerTarget},
    },
    uapi::*,
    verbs::budget::{self, Budget, Charge},
    verbs::buf::Buf,
    verbs::cq::Cq,
    verbs::mr::{MrTable, Need},
    verbs::pd::{Pd, PdUse},
    verbs::slots::{none_vec, Slots},
    verbs::stats::{self, Vmtp},
    vmtp::stack::{Stack, MAX_MTU},
};
use core::sync::atomic::Ordering;
use kernel::{
    alloc::{KVVec, KVec},
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

type Eng = Engine<Slots<Local>, Slots<Csr>>;

/// A client's transaction in progress.
struct Transaction {
    wr_id: u64,
    server: EntityId,
    req: Buf,
    resp: Buf,
}

/// A server's posted Request buffer.
struct Posted {
    wr_id: u64,
    /// Posting order: the oldest is taken first.
    seq: u64,
    buf: Buf,
    /// The size of the Request arriving into it, once one is.
    taken: Option<u32>,
}

/// A server's Response being sent.
struct Responding {
    wr_id: u64,
    buf: Buf,
}

/// The entity's mutable state.
struct Inner {
    engine: Eng,
    /// The engine's handle of the entity.
    local: Handle,
    /// The stack it belongs to; `None` once closed.
    stack: Option<Arc<Stack>>,
    /// Client: the transaction in progress.
    tx: Option<Transaction>,
    /// Server: the posted buffers (`ctx` is the index).
    posted: KVec<Option<Posted>>,
    /// Server: the Responses being sent (`cookie` is the index).
    responding: KVec<Option<Responding>>,
    next_post: u64,
    /// The packet being sent (the MTU less the IP header).
    packet: KVVec<u8>,
    /// Engine counters already added to the module's statistics.
    seen: Counters,
}

/// A VMTP entity.
#[pin_data(PinnedDrop)]
pub(crate) struct Entity {
    /// Its handle in its file (in its completions).
    pub(crate) handle: u32,
    /// Its identifier.
    pub(crate) id: EntityId,
    params: Params,
    pd: PdUse,
    mrs: Arc<MrTable>,
    cq: Arc<Cq>,
    #[pin]
    inner: Mutex<Inner>,
    timer: Timer<Entity>,
    _charge: Charge,
}

/// What an entity with parameters `p` and packets of `mtu` bytes takes.
/// Buffers are charged when they are posted.
fn footprint(p: &Params, mtu: u16) -> Result<usize> {
    budget::sum(&[
        budget::arc::<Entity>(),
        budget::array::<Local>(1)?,
        budget::array::<Csr>(p.max_clients as usize)?,
        budget::array::<Option<Posted>>(p.max_recv as usize)?,
        budget::array::<Option<Responding>>(p.max_clients as usize)?,
        usize::from(mtu),
    ])
}

/// How many random identifiers a client tries before it gives up.
const PICK_TRIES: usize = 8;

impl Entity {
    /// Creates an entity, charged to `budget`, and joins it to the stack of
    /// the caller's network namespace.
    pub(crate) fn create(
        handle: u32,
        mut params: Params,
        pd: &Arc<Pd>,
        mrs: Arc<MrTable>,
        cq: Arc<Cq>,
        budget: &Arc<Budget>,
    ) -> Result<Arc<Self>> {
        // The address must be this namespace's; its interface sizes packets.
        let mtu = rawip::local_mtu(params.addr)?.min(MAX_MTU);
        let mtu = u16::try_from(mtu).map_err(|_| EINVAL)?;
        let pick = params.discriminator == 0;
        for _ in 0..PICK_TRIES {
            if pick {
                params.discriminator = random_u32() & SRNIC_VMTP_MAX_DISCRIMINATOR;
                if params.discriminator == 0 {
                    continue;
                }
            }
            let e = Self::new(handle, params, mtu, pd, mrs.clone(), cq.clone(), budget)?;
            match Stack::join(e.id, params.role, e.clone(), budget) {
                Ok(stack) => {
                    e.inner.lock().stack = Some(stack);
                    stats::add(Vmtp::entities, 1);
                    return Ok(e);
                }
                Err(err) if pick && err == eaddrinuse() => continue,
                Err(err) => return Err(err),
            }
        }
        Err(eaddrinuse())
    }

    fn new(
        handle: u32,
        params: Params,
        mtu: u16,
        pd: &Arc<Pd>,
        mrs: Arc<MrTable>,
        cq: Arc<Cq>,
        budget: &Arc<Budget>,
    ) -> Result<Arc<Self>> {
        let id = EntityId::internet(params.discriminator, params.addr);
        if !id.is_valid() || id.is_group() {
            return Err(EINVAL);
        }
        let charge = budget.charge(footprint(&params, mtu)?)?;
        let mut engine = Eng::new(
            params.config(mtu),
            Slots::filled(1, Local::default())?,
            Slots::filled(params.max_clients as usize, Csr::default())?,
            random_u32(),
        )
        .map_err(|_| EINVAL)?;
        let local = engine.open(id, params.role).map_err(|_| EINVAL)?;
        let inner = Inner {
            engine,
            local,
            stack: None,
            tx: None,
            posted: none_vec(params.max_recv as usize)?,
            responding: none_vec(params.max_clients as usize)?,
            next_post: 0,
            packet: KVVec::from_elem(0u8, usize::from(mtu), ACCOUNTED)?,
            seen: Counters::default(),
        };
        let timer = Timer::new()?;
        let e = Arc::pin_init(
            pin_init!(Self {
                handle,
                id,
                params,
                pd: PdUse::new(pd),
                mrs,
                cq,
                inner <- new_mutex!(inner, "srnic_vmtp_entity"),
                timer,
                _charge: charge,
            }),
            ACCOUNTED,
        )?;
        // Counted once the entity exists: its drop takes it back.
        e.cq.users.fetch_add(1, Ordering::AcqRel);
        Ok(e)
    }

    /// What the resource view reports of the entity.
    pub(crate) fn res(&self, r: &mut SrnicResVmtp) {
        r.entity = self.id.0;
        r.role = match self.params.role {
            Role::Client => SRNIC_VMTP_CLIENT,
            Role::Server => SRNIC_VMTP_SERVER,
        };
        let g = self.inner.lock();
        let taken = g.posted.iter().flatten().filter(|p| p.taken.is_some()).count();
        let responding = g.responding.iter().flatten().count();
        r.in_progress = (usize::from(g.tx.is_some()) + taken + responding) as u32;
        r.posted = g.posted.iter().flatten().count() as u32;
    }

    /// The largest IP packet the entity sends.
    pub(crate) fn mtu(&self) -> u32 {
        self.inner.lock().engine.config().mtu.into()
    }

    /// Its parameters as in use.
    pub(crate) fn params(&self) -> &Params {
        &self.params
    }

    /// Starts a transaction (`SRNIC_IOCTL_VMTP_REQUEST`).
    pub(crate) fn request(self: &Arc<Self>, a: &SrnicVmtpRequest) -> Result {
        if self.params.role != Role::Client
            || a.code > SRNIC_VMTP_MAX_CODE
            || a.flags & !SRNIC_VMTP_DATAGRAM != 0
            || a.length > SRNIC_VMTP_MAX_SEGMENT
        {
            return Err(EINVAL);
        }
        let server = EntityId(a.server);
        if !server.is_valid() || server.is_group() {
            return Err(EINVAL);
        }
        let max = u64::from(SRNIC_VMTP_MAX_SEGMENT);
        let datagram = a.flags & SRNIC_VMTP_DATAGRAM != 0;
        // Pin (or resolve) before taking the lock: pinning may fault pages in.
        let req = Buf::new(&self.mrs, self.pd.id(), a.addr, a.length.into(), a.lkey, Need::LocalRead, max)?;
        let (resp_len, resp) = if datagram {
            (0, Buf::Empty)
        } else {
            // A Response buffer longer than a group takes a group.
            let n = a.resp_length.min(SRNIC_VMTP_MAX_SEGMENT);
            (n, Buf::new(&self.mrs, self.pd.id(), a.resp_addr, n.into(), a.resp_lkey, Need::LocalWrite, max)?)
        };
        let mut code = a.code;
        if datagram {
            code |= crate::proto::vmtp::wire::code::DGM;
        }
        let mut g = self.inner.lock();
        let stack = g.stack.clone().ok_or(eshutdown())?;
        if g.tx.is_some() {
            return Err(EBUSY);
        }
        let now = now_ns();
        let local = g.local;
        g.engine
            .request(
                now,
                local,
                server,
                server.ipv4(),
                crate::proto::vmtp::Code(code),
                [0; 12],
                a.length,
                0,
                0,
                resp_len,
            )
            .map_err(|_| EBUSY)?;
        g.tx = Some(Transaction { wr_id: a.wr_id, server, req, resp });
        self.pump(&mut g, &stack);
        Ok(())
    }

    /// Posts a Request buffer (`SRNIC_IOCTL_VMTP_POST_RECV`).
    pub(crate) fn post_recv(self: &Arc<Self>, a: &SrnicVmtpPostRecv) -> Result {
        if self.params.role != Role::Server {
            return Err(EINVAL);
        }
        let n = a.length.min(SRNIC_VMTP_MAX_SEGMENT);
        let buf = Buf::new(&self.mrs, self.pd.id(), a.addr, n.into(), a.lkey, Need::LocalWrite, n.into())?;
        let mut g = self.inner.lock();
        if g.stack.is_none() {
            return Err(eshutdown());
        }
        let seq = g.next_post;
        let slot = g.posted.iter_mut().find(|s| s.is_none()).ok_or(EAGAIN)?;
        *slot = Some(Posted { wr_id: a.wr_id, seq, buf, taken: None });
        g.next_post = seq.wrapping_add(1);
        Ok(())
    }

    /// Answers a Request (`SRNIC_IOCTL_VMTP_RESPOND`).
    pub(crate) fn respond(self: &Arc<Self>, a: &SrnicVmtpRespond) -> Result {
        if self.params.role != Role::Server || a.code > SRNIC_VMTP_MAX_CODE || a.length > SRNIC_VMTP_MAX_SEGMENT {
            return Err(EINVAL);
        }
        let max = u64::from(SRNIC_VMTP_MAX_SEGMENT);
        let buf = Buf::new(&self.mrs, self.pd.id(), a.addr, a.length.into(), a.lkey, Need::LocalRead, max)?;
        let mut g = self.inner.lock();
        let stack = g.stack.clone().ok_or(eshutdown())?;
        let Inner { engine, local, responding, .. } = &mut *g;
        let (i, slot) = responding.iter_mut().enumerate().find(|(_, s)| s.is_none()).ok_or(EAGAIN)?;
        engine
            .respond(
                now_ns(),
                *local,
                EntityId(a.client),
                a.transaction,
                crate::proto::vmtp::Code(a.code),
                [0; 20],
                a.length,
                i as u64,
            )
            .map_err(|e| match e {
                crate::proto::vmtp::engine::CallError::NoRequest => ENOENT,
                _ => EINVAL,
            })?;
        *slot = Some(Responding { wr_id: a.wr_id, buf });
        self.pump(&mut g, &stack);
        Ok(())
    }

    /// Closes the entity for its owner: its work ends flushed, its buffers
    /// are released, it leaves its stack; a client acknowledges the last
    /// Response it received. Returns whether this call closed it.
    pub(crate) fn close(self: &Arc<Self>) -> bool {
        let stack = {
            let mut g = self.inner.lock();
            let Some(stack) = g.stack.take() else { return false };
            let local = g.local;
            g.engine.close(local);
            // A client's explicit acknowledgement of its last Response.
            self.transmit(&mut g, &stack, now_ns());
            self.flush(&mut g);
            self.account(&mut g);
            stack
        };
        self.timer.cancel();
        stack.leave(self.id);
        stats::sub(Vmtp::entities, 1);
        true
    }
}

impl TimerTarget for Entity {
    fn timer_fired(this: Arc<Self>) {
        let mut g = this.inner.lock();
        let Some(stack) = g.stack.clone() else { return };
        g.engine.handle_timeout(now_ns());
        this.pump(&mut g, &stack);
    }
}

#[pinned_drop]
impl PinnedDrop for Entity {
    fn drop(self: Pin<&mut Self>) {
        self.cq.users.fetch_sub(1, Ordering::AcqRel);
    }
}
