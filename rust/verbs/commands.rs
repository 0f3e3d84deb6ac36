// SPDX-License-Identifier: GPL-2.0
//! The verbs commands, one function each, shared by both front doors: the
//! character device's ioctls (`crate::chardev`) and the kernel verbs API
//! (`crate::kapi`). Each takes a context and the command's ABI structure
//! (`uapi`), checks every field and does the work; the front doors only
//! move arguments (from user memory, or from a kernel caller) and results.
//!
//! Errors: `EINVAL` for an unknown handle, flag or size, `EBUSY` for an
//! object still in use, `ENOMEM` beyond a limit or the context's budget.

use crate::{
    iwarp::{
        listener::Listener,
        params::{self, PrivateData},
        startup,
    },
    sys::{pages::KernelPages, shared::Vma, socket::SockAddr},
    uapi::*,
    verbs::context::Context,
    verbs::cq::Cq,
    verbs::limits,
    verbs::mr::{Mr, MrSource},
    verbs::pd::{Pd, PdUse},
    verbs::qp::{Local, Qp, QpCaps},
};
use kernel::{page::PAGE_SHIFT, prelude::*, sync::Arc};

/// `QUERY_DEVICE`: the limits, and the context's kernel memory.
pub(crate) fn query_device(ctx: &Context, q: &mut SrnicQueryDevice) {
    limits::fill(q);
    q.max_kernel_mem = ctx.budget.cap() as u64;
    q.kernel_mem = ctx.budget.used() as u64;
}

/// `ALLOC_PD`.
pub(crate) fn alloc_pd(ctx: &Context, a: &mut SrnicAllocPd) -> Result {
    let pd = Pd::new(&ctx.budget)?;
    a.pd_handle = ctx.objs.lock().pds.insert(pd)?;
    Ok(())
}

/// `DEALLOC_PD`: `EBUSY` while a region, QP or endpoint uses it.
pub(crate) fn dealloc_pd(ctx: &Context, h: u32) -> Result {
    let mut o = ctx.objs.lock();
    if o.pds.get(h)?.in_use() {
        return Err(EBUSY);
    }
    o.pds.remove(h).map(drop)
}

/// `REG_MR` over `src` (the caller's pages, user or kernel): the region's
/// length and access are `a`'s, its first address `a.addr`.
pub(crate) fn reg_mr(ctx: &Context, a: &mut SrnicRegMr, src: MrSource) -> Result {
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
    let mr: Arc<Mr> = ctx.mrs.register(&pd, a.addr, a.length, a.access, src)?;
    a.mr_handle = mr.stag >> 8;
    a.lkey = mr.stag;
    a.rkey = mr.stag;
    Ok(())
}

/// `DEREG_MR`.
pub(crate) fn dereg_mr(ctx: &Context, h: u32) -> Result {
    ctx.mrs.deregister(h).map(drop)
}

/// `CREATE_CQ`.
pub(crate) fn create_cq(ctx: &Context, a: &mut SrnicCreateCq) -> Result {
    if a.cqe == 0 || a.cqe as usize > limits::MAX_CQE {
        return Err(EINVAL);
    }
    let mut o = ctx.objs.lock();
    let handle = o.cqs.next_handle()?;
    let cq = Cq::new(handle, a.cqe as usize, ctx.events.clone(), &ctx.budget)?;
    let ring_bytes = u32::try_from(cq.ring_bytes()).map_err(|_| EINVAL)?;
    a.cq_handle = o.cqs.insert(cq)?;
    a.ring_bytes = ring_bytes;
    a.ring_offset = u64::from(a.cq_handle) << PAGE_SHIFT;
    Ok(())
}

/// `mmap()` on the device: maps the ring of the CQ whose `ring_offset`
/// (from `CREATE_CQ`) the mapping's offset is.
pub(crate) fn map_cq(ctx: &Context, vma: &Vma<'_>) -> Result {
    let h = u32::try_from(vma.pgoff()).map_err(|_| EINVAL)?;
    let cq = ctx.objs.lock().cqs.get(h).map_err(|_| EINVAL)?.clone();
    cq.map(vma)
}

/// `DESTROY_CQ`: `EBUSY` while a QP or endpoint uses it.
pub(crate) fn destroy_cq(ctx: &Context, h: u32) -> Result {
    let mut o = ctx.objs.lock();
    if o.cqs.get(h)?.in_use() {
        return Err(EBUSY);
    }
    o.cqs.remove(h).map(drop)
}

/// `REQ_NOTIFY_CQ`: returns whether completions are already waiting.
pub(crate) fn req_notify_cq(ctx: &Context, a: &SrnicReqNotifyCq) -> Result<bool> {
    if a.flags == 0 || a.flags & !(SRNIC_CQ_NEXT_COMP | SRNIC_CQ_SOLICITED) != 0 {
        return Err(EINVAL);
    }
    let cq = ctx.objs.lock().cqs.get(a.cq_handle)?.clone();
    Ok(cq.arm(a.flags))
}

/// `POLL_CQ`: takes up to `want` completions of CQ `h`, giving each to
/// `deliver` in order; returns how many were taken. A completion `deliver`
/// fails on stays queued (the next poll gets it); that failure is returned
/// only when it came first.
pub(crate) fn poll_cq(ctx: &Context, h: u32, want: usize, mut deliver: impl FnMut(&SrnicWc) -> Result) -> Result<usize> {
    const BATCH: usize = 16;
    let cq = ctx.objs.lock().cqs.get(h)?.clone();
    let mut done = 0;
    let mut buf = [SrnicWc::default(); BATCH];
    // Completions are taken only once delivered. Other pollers of this CQ
    // wait meanwhile; nothing that adds completions does.
    let _poller = cq.pollers.lock();
    while done < want {
        let n = cq.peek(&mut buf[..BATCH.min(want - done)]);
        let mut delivered = 0;
        let mut fault = None;
        for wc in &buf[..n] {
            if let Err(e) = deliver(wc) {
                fault = Some(e);
                break;
            }
            delivered += 1;
        }
        cq.consume(delivered);
        done += delivered;
        if let Some(e) = fault {
            if done == 0 {
                return Err(e);
            }
            break;
        }
        if n < BATCH.min(want) {
            break;
        }
    }
    Ok(done)
}

/// `CREATE_QP`: the capabilities granted are written back.
pub(crate) fn create_qp(ctx: &Context, a: &mut SrnicCreateQp) -> Result {
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
    let qp = Qp::new(handle, &pd, scq, rcq, ctx.mrs.clone(), ctx.events.clone(), caps, ctx.rx_mode, &ctx.budget)?;
    a.qp_handle = o.qps.insert(qp)?;
    a.max_send_wr = caps.max_send_wr;
    a.max_recv_wr = caps.max_recv_wr;
    a.max_send_sge = caps.max_send_sge;
    a.max_recv_sge = caps.max_recv_sge;
    Ok(())
}

/// `DESTROY_QP`: the QP disconnects (abortively) and its work requests are
/// flushed.
pub(crate) fn destroy_qp(ctx: &Context, h: u32) -> Result {
    let qp = ctx.objs.lock().qps.remove(h)?;
    qp.teardown();
    Ok(())
}

/// The QP `h` of `ctx`.
pub(crate) fn qp(ctx: &Context, h: u32) -> Result<Arc<Qp>> {
    Ok(ctx.objs.lock().qps.get(h)?.clone())
}

/// `QUERY_QP`.
pub(crate) fn query_qp(ctx: &Context, a: &mut SrnicQueryQp) -> Result {
    qp(ctx, a.qp_handle)?.query(a);
    Ok(())
}

/// `LISTEN`: the port listened on is written back.
pub(crate) fn listen(ctx: &Context, a: &mut SrnicListen) -> Result {
    if a.mpa_flags & !SRNIC_MPA_ALL != 0 {
        return Err(EINVAL);
    }
    let addr = SockAddr::from_abi(&a.addr)?;
    let mut o = ctx.objs.lock();
    let handle = o.listeners.next_handle()?;
    let (l, port) = Listener::start(handle, &addr, a.backlog, a.mpa_flags, ctx.conns.clone(), ctx.events.clone())?;
    match o.listeners.insert(l.clone()) {
        Ok(h) => a.listener_handle = h,
        Err(e) => {
            l.stop();
            return Err(e);
        }
    }
    a.addr.port = port;
    Ok(())
}

/// `DESTROY_LISTENER`: when it returns the port is free again.
pub(crate) fn destroy_listener(ctx: &Context, h: u32) -> Result {
    let l = ctx.objs.lock().listeners.remove(h)?;
    l.stop();
    Ok(())
}

/// `CONNECT` with private data `pd` (read by the front door).
pub(crate) fn connect(ctx: &Context, a: &SrnicConnect, pd: PrivateData) -> Result {
    if a.mpa_flags & !SRNIC_MPA_ALL != 0 {
        return Err(EINVAL);
    }
    let addr = SockAddr::from_abi(&a.addr)?;
    let cfg = params::mpa_config(a.mpa_flags, a.ird, a.ord);
    startup::connect(qp(ctx, a.qp_handle)?, addr, cfg, pd)
}

/// `ACCEPT` with private data `pd`.
pub(crate) fn accept(ctx: &Context, a: &SrnicAccept, pd: PrivateData) -> Result {
    let req = ctx.conns.lock().get(a.conn_id)?.clone();
    let qp = qp(ctx, a.qp_handle)?;
    let mut cfg = req.cfg;
    cfg.ird = a.ird.min(limits::MAX_IRD as u32) as u16;
    cfg.ord = a.ord.min(limits::MAX_ORD as u32) as u16;
    startup::accept(qp, req.clone(), cfg, pd)?;
    // The request is the QP's now.
    let _ = ctx.conns.lock().remove(a.conn_id);
    Ok(())
}

/// `REJECT` with private data `pd`.
pub(crate) fn reject(ctx: &Context, a: &SrnicReject, pd: PrivateData) -> Result {
    let req = ctx.conns.lock().remove(a.conn_id)?;
    req.reject(&pd)
}

/// `DISCONNECT`.
pub(crate) fn disconnect(ctx: &Context, a: &SrnicDisconnect) -> Result {
    if a.flags & !SRNIC_DISCONNECT_ABORT != 0 {
        return Err(EINVAL);
    }
    qp(ctx, a.qp_handle)?.disconnect(a.flags & SRNIC_DISCONNECT_ABORT != 0)
}

/// Drain (the kernel verbs API only): see [`Qp::drain`](crate::verbs::qp::Qp::drain).
pub(crate) fn drain_qp(ctx: &Context, handle: u32) -> Result {
    qp(ctx, handle)?.drain()
}

/// A work request's flags and opcode, checked. Returns whether it goes to
/// the receive queue.
fn check_post(wr: &SrnicPostWr, nsge: usize) -> Result<bool> {
    let known = SRNIC_SEND_SIGNALED | SRNIC_SEND_INLINE | SRNIC_SEND_FENCE;
    if wr.reserved != 0 || nsge > limits::MAX_SGE || wr.flags & !known != 0 {
        return Err(EINVAL);
    }
    match u32::from(wr.opcode) {
        SRNIC_WR_RECV if wr.flags == 0 => Ok(true),
        SRNIC_WR_SEND | SRNIC_WR_SEND_WITH_INV | SRNIC_WR_SEND_WITH_SE | SRNIC_WR_SEND_WITH_SE_INV
        | SRNIC_WR_RDMA_WRITE | SRNIC_WR_RDMA_READ => Ok(false),
        _ => Err(EINVAL),
    }
}

/// Posts one work request (not inline) whose local memory is the `len`
/// bytes of a kernel client's `pages` from byte `offset` of the first
/// (`srnic_kv_post_bvec`): the request gets a region of its own
/// ([`Mr::local`]), which no table holds, no peer can name and nothing
/// deregisters: it goes with the request.
pub(crate) fn post_pages(ctx: &Context, wr: &SrnicPostWr, pages: KernelPages, offset: usize, len: u64) -> Result {
    let recv = check_post(wr, 0)?;
    if wr.flags & SRNIC_SEND_INLINE != 0 || len == 0 || len > limits::MAX_MR_SIZE {
        return Err(EINVAL);
    }
    let qp = qp(ctx, wr.qp_handle)?;
    // A receive buffer and a Read's sink are written; the others are read.
    let written = recv || u32::from(wr.opcode) == SRNIC_WR_RDMA_READ;
    let access = if written { SRNIC_ACCESS_LOCAL_WRITE } else { 0 };
    let mr = Mr::local(qp.pd(), pages, offset, len, access, ctx.mrs.budget())?;
    if recv {
        qp.post_recv(wr, Local::Region(mr))
    } else {
        qp.post_send(wr, Local::Region(mr))
    }
}

/// Posts one work request to `qp`, checked. The payload of an inline send
/// is gathered before this returns (the caller may reuse its buffers):
/// `read` copies an SGE's bytes from the caller's memory (user or kernel)
/// into the slice it is given, of the SGE's length.
pub(crate) fn post(
    qp: &Arc<Qp>,
    wr: &SrnicPostWr,
    sges: &[SrnicSge],
    mut read: impl FnMut(&SrnicSge, &mut [u8]) -> Result,
) -> Result {
    if check_post(wr, sges.len())? {
        return qp.post_recv(wr, Local::Sges(sges));
    }
    if wr.flags & SRNIC_SEND_INLINE == 0 {
        return qp.post_send(wr, Local::Sges(sges));
    }
    let mut data = [0u8; limits::MAX_INLINE];
    let mut len = 0usize;
    for s in sges {
        let n = s.length as usize;
        if len + n > limits::MAX_INLINE {
            return Err(EINVAL);
        }
        read(s, &mut data[len..len + n])?;
        len += n;
    }
    qp.post_send(wr, Local::Inline(&data[..len]))
}
