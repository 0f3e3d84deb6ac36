// SPDX-License-Identifier: GPL-2.0
//! `stress`: large pinned regions on both sides and RDMA WRITEs and READs in
//! flight all the time, until this process is killed, the peer goes away or
//! `--seconds` pass. The `kill_unpins` case SIGKILLs one side mid-transfer;
//! the survivor must see its QP disconnected and exits 0 when it does.
//!
//! The client writes from the first half of its region into the server's and
//! reads the server's into the second half, eight requests in flight.

use crate::util::{
    accept_qp, connect_qp, err, fill, mr_from_str, mr_to_str, params, qp_attr, reg_remote, Checks,
    Res, Waiter,
};
use crate::Env;
use srnic::{AccessFlags, Context, EventKind, Listener, QpState, QueuePair, SendWr};
use std::path::Path;
use std::time::{Duration, Instant};

const IN_FLIGHT: u64 = 8;
const _: () = assert!(IN_FLIGHT > 2);
const CHUNKS: u64 = 4;

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks, size: usize, seconds: u64, pidfile: Option<&Path>) -> Res {
    if size < 2 * CHUNKS as usize * 4096 {
        return err("--size too small");
    }
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut mr = reg_remote(&pd, size, AccessFlags::ALL)?;
    fill(mr.as_mut_slice(), 0x57, 0);
    let cq = ctx.create_cq(64)?;
    let attr = qp_attr(&cq, &cq, 32);
    let t = env.timeout;
    let limit = Duration::from_secs(seconds);
    if env.server {
        let l = Listener::new(&ctx, env.rdma, 1, &params(Vec::new()))?;
        let mut ctl = env.ctl()?;
        let (qp, _) = accept_qp(&l, &pd, &attr, t)?;
        ctl.send(format!("mr {}", mr_to_str(&mr.remote())))?;
        running(pidfile)?;
        // Transfers are the client's; this side only serves them.
        let e = qp.wait_event(Some(limit))?;
        survivor(c, env, &qp, e.map(|e| (e.kind, e.term)), t)
    } else {
        let mut ctl = env.ctl()?;
        let qp = connect_qp(&pd, &attr, env.rdma, Vec::new(), t)?;
        let m = ctl.expect("mr")?;
        let remote = mr_from_str(m.first().ok_or("mr: nothing")?)?;
        let half = size.min(remote.len as usize) / 2;
        let chunk = half / CHUNKS as usize;
        let mut w = Waiter::new(cq.clone());
        let post = |k: u64| -> Res {
            let off = (k % CHUNKS) as usize * chunk;
            let wr = if k & 1 == 0 {
                SendWr::rdma_write(k, vec![mr.sge(off..off + chunk)?], remote.at(off as u64))
            } else {
                // SAFETY: the program never looks at the second half (the sink).
                unsafe {
                    SendWr::rdma_read(
                        k,
                        vec![mr.sge(half + off..half + off + chunk)?],
                        remote.at((half + off) as u64),
                    )
                }
            };
            qp.post_send(&[wr.signaled()])?;
            Ok(())
        };
        for k in 0..IN_FLIGHT {
            post(k)?;
        }
        let start = Instant::now();
        let (mut k, mut done) = (IN_FLIGHT, 0u64);
        loop {
            let Some(wc) = w.next(Duration::from_secs(1))? else {
                if start.elapsed() > limit {
                    break;
                }
                continue;
            };
            if !wc.is_success() {
                println!(
                    "info: client: after {done} transfers, work request {} completed with {}",
                    wc.wr_id(),
                    wc.status()
                );
                let e = qp.wait_event(Some(t))?;
                return survivor(c, env, &qp, e.map(|e| (e.kind, e.term)), t);
            }
            done += 1;
            // Both kinds moved data: completions come in posting order, the
            // first a WRITE, the second a READ (the others are in flight).
            if done == 2 {
                running(pidfile)?;
            }
            if start.elapsed() > limit {
                break;
            }
            if let Err(e) = post(k) {
                // A send that completed just before the peer died leaves the
                // QP in ERROR when the next is posted: posting fails then, as
                // it must, and the QP reports the disconnect like any other
                // survivor's. Any other failure to post fails the case.
                if qp.query()?.state != QpState::Error {
                    return Err(e);
                }
                println!(
                    "info: client: after {done} transfers, posting failed on the errored QP ({e})"
                );
                let e = qp.wait_event(Some(t))?;
                return survivor(c, env, &qp, e.map(|e| (e.kind, e.term)), t);
            }
            k += 1;
        }
        println!("info: client: {done} transfers of {chunk} bytes in {limit:?}, never killed");
        c.ok("transfers ran until the time limit", done > 0);
        qp.disconnect(false)?;
        qp.wait_disconnected(Some(t))?;
        Ok(())
    }
}

/// Announces that transfers run: the pid file, and a line.
fn running(pidfile: Option<&Path>) -> Res {
    if let Some(p) = pidfile {
        std::fs::write(p, format!("{}\n", std::process::id()))?;
    }
    println!("info: stress: transfers running");
    Ok(())
}

/// The side that was not killed: its QP must report the disconnect.
fn survivor(
    c: &mut Checks,
    env: &Env,
    qp: &QueuePair,
    ev: Option<(EventKind, u32)>,
    t: Duration,
) -> Res {
    let side = env.side();
    match ev {
        Some((kind, term)) => {
            println!("info: {side}: QP event {kind:?} (term {term:#x})");
            c.eq(
                format!("{side}: the peer's death is seen as a disconnect"),
                kind,
                EventKind::Disconnected,
            );
        }
        None => {
            c.ok(format!("{side}: the peer went away within {t:?}"), false);
        }
    }
    c.eq(
        format!("{side}: QP state"),
        qp.query()?.state,
        QpState::Error,
    );
    Ok(())
}
