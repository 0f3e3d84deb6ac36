// SPDX-License-Identifier: GPL-2.0
//! `cq-ring`: a CQ's completions reach the poller the same way through the
//! ring the library maps (no system call) and through `SRNIC_IOCTL_POLL_CQ`
//! (`SRNIC_CQ_NO_RING` set): in order, each once, across many turns of the
//! ring, and a completion beyond the capacity overflows the CQ (one
//! `SRNIC_EVENT_CQ_ERROR`) without disturbing the ones it holds.
//!
//! The completions come from a QP whose connection was refused: it is in
//! ERROR, where every post completes at once with a flush status.

use crate::util::{err, params, qp_attr, Checks, Res};
use srnic::{
    CompletionQueue, Context, Error, QpState, QueuePair, SendWr, WcStatus, WorkCompletion,
    NO_RING_ENV,
};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

/// The CQ's capacity: small, so the rounds below turn the ring many times.
const CQE: u32 = 8;
/// Rounds of `CQE - 1` completions (the indices run modulo `2 * CQE`).
const ROUNDS: u64 = 5;
const WAIT: Duration = Duration::from_secs(30);

/// Polls `cq` until `n` completions arrived (or `WAIT` passed).
fn take(cq: &CompletionQueue, n: usize) -> Res<Vec<WorkCompletion>> {
    let mut got = Vec::new();
    let mut wc = vec![WorkCompletion::default(); 3];
    let end = Instant::now() + WAIT;
    while got.len() < n && Instant::now() < end {
        let k = cq.poll(&mut wc)?;
        got.extend_from_slice(&wc[..k]);
        if k == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(got)
}

/// A QP on `cq` in ERROR: its connection to a port nobody listens on was
/// refused.
fn refused_qp(pd: &srnic::ProtectionDomain, cq: &CompletionQueue) -> Res<QueuePair> {
    let qp = pd.create_qp(&qp_attr(cq, cq, 2 * CQE))?;
    qp.start_connect(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 1)),
        &params(Vec::new()),
    )?;
    if qp.wait_established(Some(WAIT)).is_ok() {
        return err("a connection to 127.0.0.1:1 was established");
    }
    Ok(qp)
}

fn post(qp: &QueuePair, ids: std::ops::Range<u64>) -> Res {
    for id in ids {
        qp.post_send(&[SendWr::send(id, Vec::new()).signaled()])?;
    }
    Ok(())
}

fn one(c: &mut Checks, ctx: &Context, pd: &srnic::ProtectionDomain, mapped: bool) -> Res {
    let how = if mapped { "mapped ring" } else { "POLL_CQ" };
    let cq = ctx.create_cq(CQE)?;
    c.eq(
        format!("{how}: the CQ is polled through a mapped ring"),
        cq.is_mapped(),
        mapped,
    );
    let qp = refused_qp(pd, &cq)?;
    c.eq(
        format!("{how}: a refused QP is in ERROR"),
        qp.query()?.state,
        QpState::Error,
    );
    let per = u64::from(CQE) - 1;
    let mut next = 0;
    let mut in_order = true;
    for _ in 0..ROUNDS {
        post(&qp, next..next + per)?;
        let got = take(&cq, per as usize)?;
        in_order &= got.len() as u64 == per
            && got
                .iter()
                .zip(next..)
                .all(|(w, id)| w.wr_id() == id && w.status() == WcStatus::WrFlushErr);
        next += per;
    }
    c.ok(
        format!(
            "{how}: {} flushed completions in {ROUNDS} rounds of {per}, in order, each once",
            ROUNDS * per
        ),
        in_order,
    );
    let mut wc = vec![WorkCompletion::default(); 4];
    c.eq(format!("{how}: nothing more to poll"), cq.poll(&mut wc)?, 0);
    // One more than it holds: the last overflows.
    post(&qp, next..next + u64::from(CQE) + 1)?;
    match cq.wait_event(Some(WAIT)) {
        Err(Error::CqOverflow { .. }) => c.ok(
            format!("{how}: the completion beyond {CQE} overflows the CQ"),
            true,
        ),
        other => c.ok(format!("{how}: CQ overflow event (got {other:?})"), false),
    };
    let got = take(&cq, CQE as usize)?;
    c.ok(
        format!("{how}: the {CQE} completions it held are intact"),
        got.len() == CQE as usize && got.iter().zip(next..).all(|(w, id)| w.wr_id() == id),
    );
    drop(qp);
    Ok(())
}

pub fn run(c: &mut Checks) -> Res {
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    one(c, &ctx, &pd, true)?;
    // The library reads this when it creates a CQ; nothing else runs here.
    std::env::set_var(NO_RING_ENV, "1");
    one(c, &ctx, &pd, false)?;
    std::env::remove_var(NO_RING_ENV);
    Ok(())
}
