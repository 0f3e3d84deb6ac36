// SPDX-License-Identifier: GPL-2.0
//! `link-down` and `rmpp-link-down`: an interface going down or away stops
//! what srnic has on it at once, with the work requests flushed.
//!
//! `link-down` is one side of a connected QP (server or client) between two
//! network namespaces of one VM: the two sides exchange a verified SEND, post
//! a receive that stays pending, write READY and then either expect the
//! failure (`--expect-down`: the case takes the side's interface down or
//! deletes it) or wait for STOP (the other side's interface goes; this side's
//! TCP has no way to know). Expected: SRNIC_EVENT_QP_ERROR with status
//! `-ENETDOWN` and no TERMINATE, the pending receive flushed, the QP in
//! ERROR, and a later post completing at once with a flush status.
//!
//! `rmpp-link-down` holds an RMPP endpoint with a posted receive on a netdev:
//! the endpoint reports SRNIC_EVENT_RMPP_ERROR (`-ENETDOWN`), its receive is
//! flushed, a later post fails with ENETDOWN. Meanwhile the case checks that
//! `ip link del` of the netdev returns at once (the endpoint held a
//! reference on it, which kept the unregistration waiting).

use crate::util::{err, params, qp_attr, Checks, Res, Waiter};
use crate::Env;
use srnic::{
    AccessFlags, Context, EventKind, Listener, MrBuffer, ObjectKind, QpState, RecvWr, RmppEndpoint,
    RmppEndpointAttr, SendWr, WcStatus,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes of the SEND that proves the connection works.
const MSG: usize = 64;
/// wr_ids: the SEND's receive, the receive left pending, the late post, the
/// SEND.
const WR_FIRST: u64 = 1;
const WR_PENDING: u64 = 2;
const WR_LATE: u64 = 3;
const WR_SEND: u64 = 4;

/// What a side is told besides the addresses.
pub struct Opts {
    /// Written once the connection works and the receive is pending.
    pub ready: PathBuf,
    /// This side's interface goes down: expect the failure.
    pub expect_down: bool,
    /// Without `expect_down`: end when this file exists.
    pub stop: Option<PathBuf>,
}

fn wait_file(p: &Path, t: Duration) -> Res {
    let deadline = Instant::now() + t;
    while !p.exists() {
        if Instant::now() >= deadline {
            return err(format!("{} did not appear within {t:?}", p.display()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Runs one side of `link-down`.
pub fn run(env: &Env, c: &mut Checks, o: &Opts) -> Res {
    let t = env.timeout;
    let side = env.side();
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(16)?;
    let inbox = pd.reg_buffer(MrBuffer::new(2 * MSG)?, AccessFlags::LOCAL_WRITE)?;
    let mut outbox = pd.reg_buffer(MrBuffer::new(MSG)?, AccessFlags::LOCAL_WRITE)?;
    outbox
        .as_mut_slice()
        .fill(if env.server { 0x5a } else { 0xa5 });
    let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
    // Receives go in before the connection exists: the peer's SEND may come
    // as soon as it is established.
    // SAFETY: the first half is read only after its completion; the second
    // half is never read (its receive is flushed).
    qp.post_recv(&[
        unsafe { RecvWr::new(WR_FIRST, vec![inbox.sge(..MSG)?]) },
        unsafe { RecvWr::new(WR_PENDING, vec![inbox.sge(MSG..)?]) },
    ])?;
    let _l = if env.server {
        let l = Listener::new(&ctx, env.rdma, 1, &params(Vec::new()))?;
        let req = l
            .get_request(Some(t))?
            .ok_or("no connection request before the timeout")?;
        req.start_accept(&qp, &params(Vec::new()))?;
        Some(l)
    } else {
        qp.start_connect(env.rdma, &params(Vec::new()))?;
        None
    };
    qp.wait_established(Some(t))?;
    qp.post_send(&[SendWr::send(WR_SEND, vec![outbox.sge(..)?]).signaled()])?;
    let mut w = Waiter::new(cq.clone());
    // Both completions, in either order.
    let mut first = None;
    let mut sent = false;
    while first.is_none() || !sent {
        let wc = w.next(t)?.ok_or("no completion of the first exchange")?;
        match wc.wr_id() {
            WR_FIRST => first = Some(wc),
            WR_SEND if wc.status() == WcStatus::Success => sent = true,
            id => {
                return err(format!(
                    "{side}: unexpected completion {id} ({})",
                    wc.status()
                ))
            }
        }
    }
    let first = first.ok_or("no receive completion")?;
    let want = if env.server { 0xa5 } else { 0x5a };
    c.ok(
        format!("{side}: the connection works (a verified {MSG}-byte SEND each way)"),
        first.status() == WcStatus::Success && inbox.as_slice()[..MSG].iter().all(|&b| b == want),
    );
    std::fs::write(&o.ready, "ready\n")?;
    if !o.expect_down {
        wait_file(o.stop.as_deref().ok_or("no --stop")?, t)?;
        return Ok(());
    }
    let ev = qp.wait_event(Some(t))?;
    c.ok(
        format!("{side}: SRNIC_EVENT_QP_ERROR with status -ENETDOWN and no TERMINATE ({ev:?})"),
        ev.as_ref().is_some_and(|e| {
            e.kind == EventKind::QpError && e.status == -libc::ENETDOWN && e.term == 0
        }),
    );
    let wc = w.wait(WR_PENDING, t)?;
    c.eq(
        format!("{side}: the pending receive is flushed"),
        wc.status(),
        WcStatus::WrFlushErr,
    );
    c.eq(
        format!("{side}: the QP is in ERROR"),
        qp.query()?.state,
        QpState::Error,
    );
    qp.post_send(&[SendWr::send(WR_LATE, vec![outbox.sge(..)?]).signaled()])?;
    let wc = w.wait(WR_LATE, t)?;
    c.eq(
        format!("{side}: a later SEND is flushed at once"),
        wc.status(),
        WcStatus::WrFlushErr,
    );
    Ok(())
}

/// Runs `rmpp-link-down`.
pub fn run_rmpp(c: &mut Checks, ifname: &str, nid: u32, ready: &Path, t: Duration) -> Res {
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(16)?;
    let attr = RmppEndpointAttr {
        nid,
        ifname: ifname.to_owned(),
        ..Default::default()
    };
    let ep = RmppEndpoint::new(&pd, &cq, &cq, &attr)?;
    let buf = pd.reg_buffer(MrBuffer::new(4096)?, AccessFlags::LOCAL_WRITE)?;
    // SAFETY: the buffer is never read; the receive is flushed.
    unsafe { ep.post_recv(WR_PENDING, None, 0, u64::MAX, buf.sge(..)?) }?;
    std::fs::write(ready, "ready\n")?;
    let h = ep.handle();
    let deadline = Instant::now() + t;
    let ev = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match ctx.next_event(Some(left))? {
            Some(e) if e.target() == (ObjectKind::RmppEndpoint, h) => break Some(e),
            Some(_) => continue,
            None => break None,
        }
    };
    c.ok(
        format!("rmpp: SRNIC_EVENT_RMPP_ERROR with status -ENETDOWN ({ev:?})"),
        ev.as_ref()
            .is_some_and(|e| e.kind == EventKind::RmppError && e.status == -libc::ENETDOWN),
    );
    let wc = Waiter::new(cq.clone()).wait(WR_PENDING, t)?;
    c.eq(
        "rmpp: the posted receive is flushed",
        wc.status(),
        WcStatus::WrFlushErr,
    );
    // SAFETY: as above; the post is refused.
    let late = unsafe { ep.post_recv(WR_LATE, None, 0, u64::MAX, buf.sge(..)?) };
    c.eq(
        "rmpp: a later post fails with ENETDOWN",
        late.err().and_then(|e| e.raw_os_error()),
        Some(libc::ENETDOWN),
    );
    Ok(())
}
