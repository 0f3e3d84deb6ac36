// SPDX-License-Identifier: GPL-2.0
//! ioctl dispatch for `/dev/srnic`.
//!
//! Every command is `_IOWR(SRNIC_IOCTL_MAGIC, nr, struct)`. The checks, in order:
//! a foreign magic or unknown number is `ENOTTY`; a known number with another
//! direction or size is `EINVAL`; an unreadable or unwritable argument is
//! `EFAULT`; a `size` field other than the structure's size, or a non-zero
//! reserved field, is `EINVAL`. Each command then has one small function, which
//! answers `EINVAL` for an unknown handle or flag and `EBUSY` for an object
//! still in use.

use crate::{
    iwarp::{
        listener::Listener,
        params::{self, PrivateData},
        startup,
    },
    rmpp::endpoint::{Ep, EpParams},
    rmpp::node::{self as nodes, Node},
    sys::netdev::net_admin,
    uapi::*,
    verbs::context::Context,
    verbs::cq::{Cq, CqUse},
    verbs::limits,
    verbs::pd::{Pd, PdUse},
    verbs::qp::{Qp, QpCaps},
    verbs::stats,
};
use kernel::{
    ioctl::{_IOC_NR, _IOC_TYPE},
    prelude::*,
    types::{AsBytes, FromBytes},
    uaccess::UserSlice,
};

/// An ioctl argument structure.
trait Arg: FromBytes + AsBytes {
    /// The full command number (`_IOWR` with this structure's size).
    const CMD: u32;
    /// The caller's `size` field.
    fn size(&self) -> u32;
    /// Whether every reserved field is zero.
    fn reserved_zero(&self) -> bool;
}

/// Zero test for the reserved field types.
trait IsZero {
    fn is_zero(&self) -> bool;
}
impl IsZero for u32 {
    fn is_zero(&self) -> bool {
        *self == 0
    }
}
impl IsZero for u64 {
    fn is_zero(&self) -> bool {
        *self == 0
    }
}
impl<const N: usize> IsZero for [u8; N] {
    fn is_zero(&self) -> bool {
        self.iter().all(|&r| r == 0)
    }
}
impl<const N: usize> IsZero for [u64; N] {
    fn is_zero(&self) -> bool {
        self.iter().all(|&r| r == 0)
    }
}


/// Implements [`Arg`] for a structure, its command and its reserved fields.
macro_rules! arg {
    ($t:ty, $cmd:expr, [$($r:ident),*]) => {
        impl Arg for $t {
            const CMD: u32 = $cmd;
            fn size(&self) -> u32 {
                self.size
            }
            fn reserved_zero(&self) -> bool {
                true $(&& self.$r.is_zero())*
            }
        }
    };
}
arg!(SrnicQueryDevice, SRNIC_IOCTL_QUERY_DEVICE, [reserved]);
arg!(SrnicAllocPd, SRNIC_IOCTL_ALLOC_PD, [reserved]);
arg!(SrnicRegMr, SRNIC_IOCTL_REG_MR, [reserved]);
arg!(SrnicCreateCq, SRNIC_IOCTL_CREATE_CQ, [reserved0, reserved]);
arg!(SrnicReqNotifyCq, SRNIC_IOCTL_REQ_NOTIFY_CQ, [reserved0, reserved]);
arg!(SrnicPollCq, SRNIC_IOCTL_POLL_CQ, [reserved0, reserved]);
arg!(SrnicCreateQp, SRNIC_IOCTL_CREATE_QP, [reserved0, reserved]);
arg!(SrnicQueryQp, SRNIC_IOCTL_QUERY_QP, [reserved0]);
arg!(SrnicListen, SRNIC_IOCTL_LISTEN, [reserved]);
arg!(SrnicConnect, SRNIC_IOCTL_CONNECT, [reserved]);
arg!(SrnicAccept, SRNIC_IOCTL_ACCEPT, [reserved]);
arg!(SrnicReject, SRNIC_IOCTL_REJECT, [reserved0, reserved]);
arg!(SrnicDisconnect, SRNIC_IOCTL_DISCONNECT, [reserved0]);
arg!(SrnicStats, SRNIC_IOCTL_QUERY_STATS, [reserved0, reserved]);
arg!(SrnicRmppNode, SRNIC_IOCTL_RMPP_SET_NODE, [reserved0, reserved1, reserved]);
arg!(SrnicRmppCreateEp, SRNIC_IOCTL_RMPP_CREATE_EP, [reserved0, reserved]);
arg!(SrnicRmppSend, SRNIC_IOCTL_RMPP_SEND, [reserved]);
arg!(SrnicRmppPostRecv, SRNIC_IOCTL_RMPP_POST_RECV, [reserved]);
arg!(SrnicRmppStats, SRNIC_IOCTL_RMPP_QUERY_STATS, [reserved0, reserved]);

/// Runs `f` on the validated argument of command `cmd` and copies it back.
fn with_arg<T: Arg>(cmd: u32, arg: usize, f: impl FnOnce(&mut T) -> Result<isize>) -> Result<isize> {
    if cmd != T::CMD {
        // Right number, wrong direction or size.
        return Err(EINVAL);
    }
    let len = core::mem::size_of::<T>();
    let (mut r, mut w) = UserSlice::new(arg, len).reader_writer();
    let mut val: T = r.read()?;
    if val.size() as usize != len || !val.reserved_zero() {
        return Err(EINVAL);
    }
    // The result must be deliverable before anything is made: a command whose
    // argument cannot be written back (read-only memory) fails with EFAULT
    // before it creates an object nobody would know the handle of. Writing
    // back what was read changes nothing. (A caller that makes the memory
    // read-only while the command runs still loses the result, and the
    // object stays with its file.)
    UserSlice::new(arg, len).writer().write(&val)?;
    let ret = f(&mut val)?;
    w.write(&val)?;
    Ok(ret)
}

/// Runs `f` on the handle of a destroy command `cmd` (expected `want`).
fn with_handle(cmd: u32, want: u32, arg: usize, f: impl FnOnce(u32) -> Result) -> Result<isize> {
    if cmd != want {
        return Err(EINVAL);
    }
    let len = core::mem::size_of::<SrnicHandleArg>();
    let mut r = UserSlice::new(arg, len).reader();
    let a: SrnicHandleArg = r.read()?;
    if a.size as usize != len || a.reserved != 0 {
        return Err(EINVAL);
    }
    f(a.handle)?;
    Ok(0)
}

/// Dispatches one ioctl of `ctx`.
pub(crate) fn dispatch(ctx: &Context, cmd: u32, arg: usize) -> Result<isize> {
    if _IOC_TYPE(cmd) != SRNIC_IOCTL_MAGIC {
        return Err(ENOTTY);
    }
    let nr = |c: u32| _IOC_NR(c);
    match _IOC_NR(cmd) {
        n if n == nr(SRNIC_IOCTL_QUERY_DEVICE) => with_arg(cmd, arg, |a| query_device(ctx, a)),
        n if n == nr(SRNIC_IOCTL_ALLOC_PD) => with_arg(cmd, arg, |a| alloc_pd(ctx, a)),
        n if n == nr(SRNIC_IOCTL_DEALLOC_PD) => with_handle(cmd, SRNIC_IOCTL_DEALLOC_PD, arg, |h| dealloc_pd(ctx, h)),
        n if n == nr(SRNIC_IOCTL_REG_MR) => with_arg(cmd, arg, |a| reg_mr(ctx, a)),
        n if n == nr(SRNIC_IOCTL_DEREG_MR) => with_handle(cmd, SRNIC_IOCTL_DEREG_MR, arg, |h| ctx.mrs.deregister(h).map(drop)),
        n if n == nr(SRNIC_IOCTL_CREATE_CQ) => with_arg(cmd, arg, |a| create_cq(ctx, a)),
        n if n == nr(SRNIC_IOCTL_DESTROY_CQ) => with_handle(cmd, SRNIC_IOCTL_DESTROY_CQ, arg, |h| destroy_cq(ctx, h)),
        n if n == nr(SRNIC_IOCTL_REQ_NOTIFY_CQ) => with_arg(cmd, arg, |a| req_notify_cq(ctx, a)),
        n if n == nr(SRNIC_IOCTL_POLL_CQ) => with_arg(cmd, arg, |a| poll_cq(ctx, a)),
        n if n == nr(SRNIC_IOCTL_CREATE_QP) => with_arg(cmd, arg, |a| create_qp(ctx, a)),
        n if n == nr(SRNIC_IOCTL_DESTROY_QP) => with_handle(cmd, SRNIC_IOCTL_DESTROY_QP, arg, |h| destroy_qp(ctx, h)),
        n if n == nr(SRNIC_IOCTL_QUERY_QP) => with_arg(cmd, arg, |a| query_qp(ctx, a)),
        n if n == nr(SRNIC_IOCTL_LISTEN) => with_arg(cmd, arg, |a| listen(ctx, a)),
        n if n == nr(SRNIC_IOCTL_DESTROY_LISTENER) => with_handle(cmd, SRNIC_IOCTL_DESTROY_LISTENER, arg, |h| destroy_listener(ctx, h)),
        n if n == nr(SRNIC_IOCTL_CONNECT) => with_arg(cmd, arg, |a| connect(ctx, a)),
        n if n == nr(SRNIC_IOCTL_ACCEPT) => with_arg(cmd, arg, |a| accept(ctx, a)),
        n if n == nr(SRNIC_IOCTL_REJECT) => with_arg(cmd, arg, |a| reject(ctx, a)),
        n if n == nr(SRNIC_IOCTL_DISCONNECT) => with_arg(cmd, arg, |a| disconnect(ctx, a)),
        n if n == nr(SRNIC_IOCTL_QUERY_STATS) => with_arg(cmd, arg, query_stats),
        n if n == nr(SRNIC_IOCTL_RMPP_SET_NODE) => with_arg(cmd, arg, rmpp_set_node),
        n if n == nr(SRNIC_IOCTL_RMPP_CREATE_EP) => with_arg(cmd, arg, |a| rmpp_create_ep(ctx, a)),
        n if n == nr(SRNIC_IOCTL_RMPP_DESTROY_EP) => with_handle(cmd, SRNIC_IOCTL_RMPP_DESTROY_EP, arg, |h| rmpp_destroy_ep(ctx, h)),
        n if n == nr(SRNIC_IOCTL_RMPP_SEND) => with_arg(cmd, arg, |a| rmpp_send(ctx, a)),
        n if n == nr(SRNIC_IOCTL_RMPP_POST_RECV) => with_arg(cmd, arg, |a| rmpp_post_recv(ctx, a)),
        n if n == nr(SRNIC_IOCTL_RMPP_QUERY_STATS) => with_arg(cmd, arg, rmpp_query_stats),
        _ => Err(ENOTTY),
    }
}

fn query_device(ctx: &Context, q: &mut SrnicQueryDevice) -> Result<isize> {
    limits::fill(q);
    q.max_kernel_mem = ctx.budget.cap() as u64;
    q.kernel_mem = ctx.budget.used() as u64;
    Ok(0)
}

fn query_stats(s: &mut SrnicStats) -> Result<isize> {
    stats::fill(s);
    Ok(0)
}

fn alloc_pd(ctx: &Context, a: &mut SrnicAllocPd) -> Result<isize> {
    let pd = Pd::new(&ctx.budget)?;
    a.pd_handle = ctx.objs.lock().pds.insert(pd)?;
    Ok(0)
}

fn dealloc_pd(ctx: &Context, h: u32) -> Result {
    let mut o = ctx.objs.lock();
    if o.pds.get(h)?.in_use() {
        return Err(EBUSY);
    }
    o.pds.remove(h).map(drop)
}

fn reg_mr(ctx: &Context, a: &mut SrnicRegMr) -> Result<isize> {
    if a.access & !SRNIC_ACCESS_ALL != 0 || a.length == 0 || a.length > limits::MAX_MR_SIZE {
        return Err(EINVAL);
    }
    // Remote write without local write is meaningless (RFC 5040 ties them).
    if a.access & SRNIC_ACCESS_REMOTE_WRITE != 0 && a.access & SRNIC_ACCESS_LOCAL_WRITE == 0 {
        return Err(EINVAL);
    }
    // The PD counts as used from here (pinning happens outside the lock):
    // DEALLOC_PD cannot free it under the registration.
    let (pd, _using) = {
        let o = ctx.objs.lock();
        let pd = o.pds.get(a.pd_handle)?.clone();
        let using = PdUse::new(&pd);
        (pd, using)
    };
    let mr = ctx.mrs.register(&pd, a.addr, a.length, a.access)?;
    a.mr_handle = mr.stag >> 8;
    a.lkey = mr.stag;
    a.rkey = mr.stag;
    Ok(0)
}

fn create_cq(ctx: &Context, a: &mut SrnicCreateCq) -> Result<isize> {
    if a.cqe == 0 || a.cqe as usize > limits::MAX_CQE {
        return Err(EINVAL);
    }
    let mut o = ctx.objs.lock();
    let handle = o.cqs.next_handle()?;
    let cq = Cq::new(handle, a.cqe as usize, ctx.events.clone(), &ctx.budget)?;
    a.cq_handle = o.cqs.insert(cq)?;
    Ok(0)
}

fn destroy_cq(ctx: &Context, h: u32) -> Result {
    let mut o = ctx.objs.lock();
    if o.cqs.get(h)?.in_use() {
        return Err(EBUSY);
    }
    o.cqs.remove(h).map(drop)
}

fn req_notify_cq(ctx: &Context, a: &mut SrnicReqNotifyCq) -> Result<isize> {
    if a.flags == 0 || a.flags & !(SRNIC_CQ_NEXT_COMP | SRNIC_CQ_SOLICITED) != 0 {
        return Err(EINVAL);
    }
    let cq = ctx.objs.lock().cqs.get(a.cq_handle)?.clone();
    Ok(isize::from(cq.arm(a.flags)))
}

fn poll_cq(ctx: &Context, a: &mut SrnicPollCq) -> Result<isize> {
    const BATCH: usize = 16;
    let cq = ctx.objs.lock().cqs.get(a.cq_handle)?.clone();
    let want = a.num_entries as usize;
    let rec = core::mem::size_of::<SrnicWc>();
    let total = want.checked_mul(rec).ok_or(EINVAL)?;
    let mut w = UserSlice::new(a.wc_ptr as usize, total).writer();
    let mut done = 0;
    let mut buf = [SrnicWc::default(); BATCH];
    // Completions are taken only once written: one that faults stays queued
    // for the next poll. Other pollers of this CQ wait meanwhile; nothing
    // that adds completions does.
    let _poller = cq.pollers.lock();
    while done < want {
        let n = cq.peek(&mut buf[..BATCH.min(want - done)]);
        let mut written = 0;
        let mut fault = None;
        for wc in &buf[..n] {
            if let Err(e) = w.write(wc) {
                fault = Some(e);
                break;
            }
            written += 1;
        }
        cq.consume(written);
        done += written;
        if let Some(e) = fault {
            // The count tells what arrived; only a first fault is an error.
            if done == 0 {
                return Err(e);
            }
            break;
        }
        if n < BATCH.min(want) {
            break;
        }
    }
    a.num_entries = done as u32;
    Ok(0)
}

fn create_qp(ctx: &Context, a: &mut SrnicCreateQp) -> Result<isize> {
    let caps = QpCaps {
        max_send_wr: a.max_send_wr.max(1),
        max_recv_wr: a.max_recv_wr.max(1),
        max_send_sge: a.max_send_sge.max(1),
        max_recv_sge: a.max_recv_sge.max(1),
        max_inline: a.max_inline_data,
        sq_sig_all: a.sq_sig_all != 0,
    };
    if caps.max_send_wr as usize > limits::MAX_QP_WR
        || caps.max_recv_wr as usize > limits::MAX_QP_WR
        || caps.max_send_sge as usize > limits::MAX_SGE
        || caps.max_recv_sge as usize > limits::MAX_SGE
        || caps.max_inline as usize > limits::MAX_INLINE
        || a.sq_sig_all > 1
    {
        return Err(EINVAL);
    }
    let mut o = ctx.objs.lock();
    let pd = o.pds.get(a.pd_handle)?.clone();
    let scq = o.cqs.get(a.send_cq)?.clone();
    let rcq = o.cqs.get(a.recv_cq)?.clone();
    let handle = o.qps.next_handle()?;
    let qp = Qp::new(handle, &pd, scq, rcq, ctx.mrs.clone(), ctx.events.clone(), caps, &ctx.budget)?;
    a.qp_handle = o.qps.insert(qp)?;
    a.max_send_wr = caps.max_send_wr;
    a.max_recv_wr = caps.max_recv_wr;
    a.max_send_sge = caps.max_send_sge;
    a.max_recv_sge = caps.max_recv_sge;
    Ok(0)
}

fn destroy_qp(ctx: &Context, h: u32) -> Result {
    let qp = ctx.objs.lock().qps.remove(h)?;
    qp.teardown();
    Ok(())
}

fn query_qp(ctx: &Context, a: &mut SrnicQueryQp) -> Result<isize> {
    let qp = ctx.objs.lock().qps.get(a.qp_handle)?.clone();
    qp.query(a);
    Ok(0)
}

fn listen(ctx: &Context, a: &mut SrnicListen) -> Result<isize> {
    if a.mpa_flags & !SRNIC_MPA_ALL != 0 {
        return Err(EINVAL);
    }
    let addr = params::from_abi_addr(&a.addr)?;
    let mut o = ctx.objs.lock();
    let handle = o.listeners.next_handle()?;
    let (l, port) = Listener::start(handle, addr, a.backlog, a.mpa_flags, ctx.conns.clone(), ctx.events.clone())?;
    match o.listeners.insert(l.clone()) {
        Ok(h) => a.listener_handle = h,
        Err(e) => {
            l.stop();
            return Err(e);
        }
    }
    a.addr.port = port;
    Ok(0)
}

fn destroy_listener(ctx: &Context, h: u32) -> Result {
    let l = ctx.objs.lock().listeners.remove(h)?;
    l.stop();
    Ok(())
}

fn connect(ctx: &Context, a: &mut SrnicConnect) -> Result<isize> {
    if a.mpa_flags & !SRNIC_MPA_ALL != 0 {
        return Err(EINVAL);
    }
    let addr = params::from_abi_addr(&a.addr)?;
    let pd = PrivateData::from_user(a.private_data, a.private_data_len)?;
    let cfg = params::mpa_config(a.mpa_flags, a.ird, a.ord);
    let qp = ctx.objs.lock().qps.get(a.qp_handle)?.clone();
    startup::connect(qp, addr, cfg, pd)?;
    Ok(0)
}

fn accept(ctx: &Context, a: &mut SrnicAccept) -> Result<isize> {
    let pd = PrivateData::from_user(a.private_data, a.private_data_len)?;
    let req = ctx.conns.lock().get(a.conn_id)?.clone();
    let qp = ctx.objs.lock().qps.get(a.qp_handle)?.clone();
    let mut cfg = req.cfg;
    cfg.ird = a.ird.min(limits::MAX_IRD as u32) as u16;
    cfg.ord = a.ord.min(limits::MAX_ORD as u32) as u16;
    startup::accept(qp, req.clone(), cfg, pd)?;
    // The request is the QP's now.
    let _ = ctx.conns.lock().remove(a.conn_id);
    Ok(0)
}

fn reject(ctx: &Context, a: &mut SrnicReject) -> Result<isize> {
    let pd = PrivateData::from_user(a.private_data, a.private_data_len)?;
    let req = ctx.conns.lock().remove(a.conn_id)?;
    req.reject(&pd)?;
    Ok(0)
}

fn disconnect(ctx: &Context, a: &mut SrnicDisconnect) -> Result<isize> {
    if a.flags & !SRNIC_DISCONNECT_ABORT != 0 {
        return Err(EINVAL);
    }
    let qp = ctx.objs.lock().qps.get(a.qp_handle)?.clone();
    qp.disconnect(a.flags & SRNIC_DISCONNECT_ABORT != 0)?;
    Ok(0)
}

/// The NUL-terminated interface name in `name` (not empty).
fn ifname(name: &[u8; 16]) -> Result<&kernel::str::CStr> {
    let end = name.iter().position(|&b| b == 0).ok_or(EINVAL)?;
    if end == 0 {
        return Err(EINVAL);
    }
    kernel::str::CStr::from_bytes_with_nul(&name[..=end]).map_err(|_| EINVAL)
}

fn rmpp_set_node(a: &mut SrnicRmppNode) -> Result<isize> {
    if !net_admin() {
        return Err(EPERM);
    }
    if a.nid > SRNIC_RMPP_MAX_NID || a.flags & !SRNIC_RMPP_NODE_DELETE != 0 {
        return Err(EINVAL);
    }
    if a.flags & SRNIC_RMPP_NODE_DELETE != 0 {
        nodes::set(a.nid, None)?;
        return Ok(0);
    }
    // A node is a unicast station: no multicast (or broadcast) and no zero address.
    if a.mac[0] & 1 != 0 || a.mac.iter().all(|&b| b == 0) {
        return Err(EINVAL);
    }
    let (ifindex, _) = crate::sys::netdev::netdev_info(ifname(&a.ifname)?)?;
    nodes::set(a.nid, Some(Node { mac: a.mac, ifindex }))?;
    Ok(0)
}

fn rmpp_create_ep(ctx: &Context, a: &mut SrnicRmppCreateEp) -> Result<isize> {
    let params = EpParams::from_abi(a)?;
    let name = ifname(&a.ifname)?;
    // The PD and CQs count as used from here (the endpoint is made outside
    // the lock): DEALLOC_PD and DESTROY_CQ answer EBUSY meanwhile.
    let (pd, scq, rcq, handle, _using) = {
        let o = ctx.objs.lock();
        let (pd, scq, rcq) = (
            o.pds.get(a.pd_handle)?.clone(),
            o.cqs.get(a.send_cq)?.clone(),
            o.cqs.get(a.recv_cq)?.clone(),
        );
        let using = (PdUse::new(&pd), CqUse::new(&scq), CqUse::new(&rcq));
        (pd, scq, rcq, o.eps.next_handle()?, using)
    };
    let ep = Ep::create(handle, params, name, &pd, ctx.mrs.clone(), scq, rcq, ctx.events.clone(), &ctx.budget)?;
    let inserted = {
        let mut o = ctx.objs.lock();
        // Another thread may have taken the handle meanwhile.
        if o.eps.next_handle()? == handle {
            o.eps.insert(ep.clone())
        } else {
            Err(EAGAIN)
        }
    };
    if let Err(e) = inserted {
        ep.close();
        return Err(e);
    }
    params.to_abi(a);
    a.mtu = ep.packet_size();
    a.ep_handle = handle;
    Ok(0)
}

fn rmpp_destroy_ep(ctx: &Context, h: u32) -> Result {
    let ep = ctx.objs.lock().eps.remove(h)?;
    ep.close();
    Ok(())
}

fn rmpp_send(ctx: &Context, a: &mut SrnicRmppSend) -> Result<isize> {
    let ep = ctx.objs.lock().eps.get(a.ep_handle)?.clone();
    ep.send(a)?;
    Ok(0)
}

fn rmpp_post_recv(ctx: &Context, a: &mut SrnicRmppPostRecv) -> Result<isize> {
    let ep = ctx.objs.lock().eps.get(a.ep_handle)?.clone();
    ep.post_recv(a)?;
    Ok(0)
}

fn rmpp_query_stats(s: &mut SrnicRmppStats) -> Result<isize> {
    stats::fill_rmpp(s);
    Ok(0)
}
