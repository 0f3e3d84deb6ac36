// SPDX-License-Identifier: GPL-2.0
//! `solicited`: completion notification of a receive CQ.
//!
//! The server receives; on the client's side each message is a SEND or a SEND
//! with Solicited Event, sent when the server asks for it over the control
//! connection. The server's receive CQ is only ever polled (never waited on
//! with the library's `wait`, which arms it), in this order:
//! 1. armed solicited-only: a plain SEND fires no event within 2 s, but its
//!    completion is there to poll;
//! 2. still armed: a SEND with SE fires the event; the completion says solicited;
//! 3. not re-armed: the next SEND with SE fires no event (one-shot);
//! 4. not armed, a SEND arrives: REQ_NOTIFY answers 1 (completions queued);
//! 5. armed NEXT_COMP: a plain SEND fires the event;
//! 6. armed solicited-only: the flush of the remaining receives at disconnect
//!    (error completions) fires the event.

use crate::util::{
    accept_qp, connect_qp, err, fill, mismatch, params, qp_attr, Checks, Ctl, Res, Waiter,
};
use crate::Env;
use srnic::{
    AccessFlags, CompletionQueue, Context, Listener, MrBuffer, RecvWr, SendWr, WcOpcode, WcStatus,
    WorkCompletion,
};
use std::time::{Duration, Instant};

const MSG: usize = 64;
const SLOTS: usize = 8;
/// How long "no event" is waited for.
const QUIET: Duration = Duration::from_secs(2);

fn msg_len(k: u64) -> usize {
    16 + k as usize
}

fn msg_seed(k: u64) -> u64 {
    0x5E00 + k
}

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks) -> Res {
    if env.server {
        server(env, c)
    } else {
        client(env, c)
    }
}

/// Polls one completion without arming the CQ.
fn poll_one(cq: &CompletionQueue, timeout: Duration) -> Res<Option<WorkCompletion>> {
    let deadline = Instant::now() + timeout;
    let mut b = [WorkCompletion::default(); 1];
    loop {
        if cq.poll(&mut b)? == 1 {
            return Ok(Some(b[0]));
        }
        if Instant::now() > deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Rx<'a> {
    ctl: &'a mut Ctl,
    rcq: &'a CompletionQueue,
    rbuf: &'a srnic::MemoryRegion<'static>,
    k: u64,
    t: Duration,
}

impl Rx<'_> {
    /// Asks the client for message `k` of `kind` ("plain" or "se").
    fn ask(&mut self, kind: &str) -> Res {
        self.ctl.send(format!("go {kind} {}", self.k))?;
        self.ctl.expect("sent")?;
        Ok(())
    }

    /// Polls message `k`'s receive and checks it.
    fn check(&mut self, c: &mut Checks, solicited: bool) -> Res {
        let k = self.k;
        self.k += 1;
        let Some(wc) = poll_one(self.rcq, self.t)? else {
            c.ok(format!("message {k}: receive completion to poll"), false);
            return Ok(());
        };
        let slot = &self.rbuf.as_slice()[k as usize * MSG..][..msg_len(k)];
        c.ok(
            format!(
                "message {k}: polled its receive (status {}, {} bytes, solicited {})",
                wc.status(),
                wc.byte_len(),
                wc.is_solicited()
            ),
            wc.status() == WcStatus::Success
                && wc.opcode() == WcOpcode::Recv
                && wc.wr_id() == k
                && wc.byte_len() as usize == msg_len(k)
                && mismatch(slot, msg_seed(k), 0).is_none(),
        );
        c.eq(
            format!("message {k}: solicited flag"),
            wc.is_solicited(),
            solicited,
        );
        Ok(())
    }
}

fn server(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let scq = ctx.create_cq(16)?;
    let rcq = ctx.create_cq(16)?;
    let rbuf = pd.reg_buffer(MrBuffer::new(SLOTS * MSG)?, AccessFlags::LOCAL_WRITE)?;
    let l = Listener::new(&ctx, env.rdma, 1, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    let (qp, _) = accept_qp(&l, &pd, &qp_attr(&scq, &rcq, 16), t)?;
    let mut wrs = Vec::new();
    for i in 0..SLOTS {
        // SAFETY: each slot is read only after its receive completed.
        wrs.push(unsafe { RecvWr::new(i as u64, vec![rbuf.sge(i * MSG..(i + 1) * MSG)?]) });
    }
    qp.post_recv(&wrs)?;
    let mut rx = Rx {
        ctl: &mut ctl,
        rcq: &rcq,
        rbuf: &rbuf,
        k: 0,
        t,
    };

    // 1. Solicited-only arming ignores a plain Send.
    c.eq(
        "arming solicited-only on an empty CQ: no completions queued",
        rcq.req_notify(true)?,
        false,
    );
    rx.ask("plain")?;
    c.ok(
        "solicited-only CQ: no event for a plain SEND (2 s)",
        !rcq.wait_event(Some(QUIET))?,
    );
    rx.check(c, false)?;

    // 2. ... and fires on a Send with Solicited Event.
    rx.ask("se")?;
    c.ok(
        "solicited-only CQ: event for a SEND with Solicited Event",
        rcq.wait_event(Some(t))?,
    );
    rx.check(c, true)?;

    // 3. One-shot: without re-arming, no event.
    rx.ask("se")?;
    c.ok(
        "arming is one-shot: no event for the next SEND with SE without re-arming (2 s)",
        !rcq.wait_event(Some(QUIET))?,
    );
    rx.check(c, true)?;

    // 4. REQ_NOTIFY reports completions already queued.
    rx.ask("plain")?;
    let mut queued = rcq.req_notify(false)?;
    if !queued {
        // Not delivered yet: the arming fires when it is.
        c.ok(
            "NEXT_COMP: event when the SEND arrives",
            rcq.wait_event(Some(t))?,
        );
        queued = rcq.req_notify(false)?;
    }
    c.ok("REQ_NOTIFY answers 1 while a completion is queued", queued);
    rx.check(c, false)?;

    // 5. NEXT_COMP fires on any completion.
    c.ok("no stale CQ event", !rcq.wait_event(Some(Duration::ZERO))?);
    c.eq(
        "arming NEXT_COMP on an empty CQ: no completions queued",
        rcq.req_notify(false)?,
        false,
    );
    rx.ask("plain")?;
    c.ok(
        "NEXT_COMP CQ: event for a plain SEND",
        rcq.wait_event(Some(t))?,
    );
    rx.check(c, false)?;

    // 6. Solicited-only arming fires on an error completion (the flush).
    c.ok("no stale CQ event", !rcq.wait_event(Some(Duration::ZERO))?);
    c.eq("arming solicited-only again", rcq.req_notify(true)?, false);
    let left = SLOTS as u64 - rx.k;
    rx.ctl.send("bye")?;
    c.ok(
        "server: disconnected by the client",
        qp.wait_disconnected(Some(t))?,
    );
    c.ok(
        "solicited-only CQ: event for the flushed receives (error completions)",
        rcq.wait_event(Some(t))?,
    );
    let mut flushed = 0;
    while let Some(wc) = poll_one(&rcq, Duration::ZERO)? {
        if wc.status() == WcStatus::WrFlushErr && wc.opcode() == WcOpcode::Recv {
            flushed += 1;
        }
    }
    c.eq("receives flushed at disconnect", flushed, left);
    Ok(())
}

fn client(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut ctl = env.ctl()?;
    let cq = ctx.create_cq(16)?;
    let qp = connect_qp(&pd, &qp_attr(&cq, &cq, 16), env.rdma, Vec::new(), t)?;
    let mut w = Waiter::new(cq.clone());
    let mut sbuf = pd.reg_buffer(MrBuffer::new(SLOTS * MSG)?, AccessFlags::LOCAL_WRITE)?;
    loop {
        let m = ctl.recv()?;
        match m.first().map(String::as_str) {
            Some("go") => {
                let k: u64 = m.get(2).ok_or("go: no index")?.parse()?;
                let range = k as usize * MSG..k as usize * MSG + msg_len(k);
                fill(&mut sbuf.as_mut_slice()[range.clone()], msg_seed(k), 0);
                let sge = vec![sbuf.sge(range)?];
                let wr = match m.get(1).map(String::as_str) {
                    Some("se") => SendWr::send_with_se(k, sge),
                    _ => SendWr::send(k, sge),
                };
                qp.post_send(&[wr.signaled()])?;
                w.wait_ok(k, t)?;
                c.ok(format!("message {k} ({}) sent", m[1]), true);
                ctl.send("sent")?;
            }
            Some("bye") => break,
            _ => return err(format!("unexpected control message {m:?}")),
        }
    }
    qp.disconnect(false)?;
    c.ok(
        "client: disconnected in order",
        qp.wait_disconnected(Some(t))?,
    );
    Ok(())
}
