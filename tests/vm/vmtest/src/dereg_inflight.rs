// SPDX-License-Identifier: GPL-2.0
//! `dereg-inflight`: deregistering a region ends remote access to it at once,
//! even in the middle of a Read Response; STag keys are not predictable.
//!
//! - Server: 32 registrations in a row of one buffer (each deregistered
//!   before the next, so they take the same STag index) get a new key every
//!   time, and not simply the previous key plus one (which is what a counter
//!   would give; random keys do that 31 times in a row with probability
//!   256^-31).
//! - The client RDMA READs the server's whole SIZE-byte region. Once the
//!   server's QP has sent part of the response, the server deregisters the
//!   region. Checked: the server's QP stops part way (its sent bytes stay
//!   below SIZE) and fails with QP_ERROR, having sent a TERMINATE (RDMAP,
//!   remote protection, invalid STag: 0x0100); the client's READ completes
//!   with a remote access error carrying that TERMINATE as received.
//! - The other way: the client RDMA WRITEs SIZE bytes into another region of
//!   the server's; once part of them arrived, the server deregisters it.
//!   Checked: the server's QP places no more (its received bytes stay below
//!   SIZE) and fails, having sent a TERMINATE (DDP, tagged buffer error,
//!   invalid STag: 0x1100) although every later segment names the region's
//!   STag again (the receive path keeps a tagged message's region at hand
//!   between its segments: the deregistration must reach it there too); the
//!   client's QP fails with that TERMINATE as received.
//!
//! The regions' pages are released (the harness checks the pinned pages).

use crate::util::{
    accept_qp, connect_qp, event_after_established, mr_from_str, mr_to_str, params, qp_attr,
    reg_remote, Checks, Res, Waiter,
};
use crate::Env;
use srnic::{
    AccessFlags, Context, Listener, MrBuffer, QpAttr, QpState, QueuePair, SendWr, WcStatus,
};
use std::time::{Duration, Instant};

/// The TERMINATE of a Read whose source STag is invalid: RDMAP (0), remote
/// protection error (1), invalid STag (0x00), as layer << 12 | type << 8 | code.
const TERM_INVALID_STAG: u32 = 0x0100;
/// The TERMINATE of a tagged segment whose STag is invalid: DDP (1), tagged
/// buffer error (1), invalid STag (0x00).
const TERM_TAGGED_INVALID_STAG: u32 = 0x1100;
/// Bit 31 of the completion's `term`: the TERMINATE was received.
const TERM_RECEIVED: u32 = 1 << 31;
/// Registrations of the key check.
const KEY_ROUNDS: usize = 32;

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks, size: usize) -> Res {
    if env.server {
        server(env, c, size)
    } else {
        client(env, c, size)
    }
}

fn keys(c: &mut Checks, ctx: &Context) -> Res {
    let pd = ctx.alloc_pd()?;
    let mut seen = Vec::with_capacity(KEY_ROUNDS);
    let mut buf = Some(MrBuffer::new(4096)?);
    for _ in 0..KEY_ROUNDS {
        let mr = pd.reg_buffer(buf.take().ok_or("no buffer")?, AccessFlags::REMOTE_READ)?;
        seen.push(mr.rkey());
        buf = mr.into_buffer();
    }
    let same_index = seen.windows(2).all(|w| w[0] >> 8 == w[1] >> 8);
    let changed = seen.windows(2).all(|w| w[0] & 0xff != w[1] & 0xff);
    let counting = seen
        .windows(2)
        .all(|w| (w[0] & 0xff).wrapping_add(1) & 0xff == w[1] & 0xff);
    c.ok(
        format!("server: {KEY_ROUNDS} registrations of one STag index get a new key each time"),
        same_index && changed,
    );
    c.ok(
        format!(
            "server: the keys are not a counter ({:02x?})",
            seen.iter().map(|k| k & 0xff).collect::<Vec<_>>()
        ),
        !counting,
    );
    Ok(())
}

/// Waits (at most `t`) until the byte count `moved` reads from the QP's
/// attributes is above zero; returns it (0 when the wait ran out).
fn once_moving(qp: &QueuePair, t: Duration, moved: impl Fn(&QpAttr) -> u64) -> Res<u64> {
    let deadline = Instant::now() + t;
    loop {
        let n = moved(&qp.query()?);
        if n > 0 || Instant::now() > deadline {
            return Ok(n);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn server(env: &Env, c: &mut Checks, size: usize) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    keys(c, &ctx)?;
    let pd = ctx.alloc_pd()?;
    let l = Listener::new(&ctx, env.rdma, 2, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    let cq = ctx.create_cq(16)?;
    let (qp, _) = accept_qp(&l, &pd, &qp_attr(&cq, &cq, 16), t)?;
    let r = reg_remote(&pd, size, AccessFlags::REMOTE_READ)?;
    ctl.send(format!("mr {}", mr_to_str(&r.remote())))?;
    // Deregister once part of the response went out.
    let started = once_moving(&qp, t, |a| a.tx_bytes)?;
    drop(r);
    let at_dereg = qp.query()?.tx_bytes;
    println!(
        "server: deregistered the region after {started} bytes of the response ({at_dereg} now)"
    );
    let ev = event_after_established(&qp, Instant::now() + t)?;
    let a = qp.query()?;
    c.ok(
        format!(
            "server: the response stopped part way: {} of {size} bytes sent, QP {} ({:?})",
            a.tx_bytes,
            a.state,
            ev.as_ref().map(|e| e.kind)
        ),
        started > 0 && a.tx_bytes < size as u64 && a.state == QpState::Error,
    );
    c.term(
        "server: it sent the TERMINATE of an invalid source STag",
        a.term,
        TERM_INVALID_STAG,
    );
    ctl.send("done")?;
    ctl.expect("bye")?;
    server_write(env, c, &pd, &l, &mut ctl, size)
}

/// The server's side of the inbound WRITE into a region deregistered part way.
fn server_write(
    env: &Env,
    c: &mut Checks,
    pd: &srnic::ProtectionDomain,
    l: &Listener,
    ctl: &mut crate::util::Ctl,
    size: usize,
) -> Res {
    let t = env.timeout;
    let cq = pd.context().create_cq(16)?;
    let (qp, _) = accept_qp(l, pd, &qp_attr(&cq, &cq, 16), t)?;
    let r = reg_remote(
        pd,
        size,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    )?;
    ctl.send(format!("mr {}", mr_to_str(&r.remote())))?;
    let started = once_moving(&qp, t, |a| a.rx_bytes)?;
    drop(r);
    println!("server: deregistered the WRITE's sink after {started} bytes arrived");
    let ev = event_after_established(&qp, Instant::now() + t)?;
    let a = qp.query()?;
    c.ok(
        format!(
            "server: the WRITE's placement stopped part way: {} of {size} bytes received, QP {} ({:?})",
            a.rx_bytes,
            a.state,
            ev.as_ref().map(|e| e.kind)
        ),
        started > 0 && a.rx_bytes < size as u64 && a.state == QpState::Error,
    );
    c.term(
        "server: it sent the TERMINATE of an invalid tagged STag",
        a.term,
        TERM_TAGGED_INVALID_STAG,
    );
    ctl.send("done")?;
    ctl.expect("bye")?;
    Ok(())
}

fn client(env: &Env, c: &mut Checks, size: usize) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(16)?;
    let mut ctl = env.ctl()?;
    let qp = connect_qp(&pd, &qp_attr(&cq, &cq, 16), env.rdma, Vec::new(), t)?;
    let src = mr_from_str(ctl.expect("mr")?.first().ok_or("no region")?)?;
    let sink = reg_remote(&pd, size, AccessFlags::LOCAL_WRITE)?;
    // SAFETY: `sink` is not read here at all.
    let rd = unsafe { SendWr::rdma_read(1, vec![sink.sge(..)?], src.at(0)) };
    qp.post_send(&[rd.signaled()])?;
    let wc = Waiter::new(cq.clone()).wait(1, t)?;
    c.ok(
        format!(
            "client: the READ fails with a remote access error ({})",
            wc.status()
        ),
        wc.status() == WcStatus::RemAccessErr,
    );
    c.term(
        "client: with the TERMINATE received",
        wc.0.term,
        TERM_INVALID_STAG | TERM_RECEIVED,
    );
    ctl.expect("done")?;
    ctl.send("bye")?;
    client_write(env, c, &pd, &mut ctl, size)
}

/// The client's side of the inbound WRITE into a region deregistered part way.
fn client_write(
    env: &Env,
    c: &mut Checks,
    pd: &srnic::ProtectionDomain,
    ctl: &mut crate::util::Ctl,
    size: usize,
) -> Res {
    let t = env.timeout;
    let cq = pd.context().create_cq(16)?;
    let qp = connect_qp(pd, &qp_attr(&cq, &cq, 16), env.rdma, Vec::new(), t)?;
    let sink = mr_from_str(ctl.expect("mr")?.first().ok_or("no region")?)?;
    let src = reg_remote(pd, size, AccessFlags::LOCAL_WRITE)?;
    let wr = SendWr::rdma_write(2, vec![src.sge(..)?], sink.at(0));
    qp.post_send(&[wr.signaled()])?;
    let ev = event_after_established(&qp, Instant::now() + t)?;
    let a = qp.query()?;
    c.ok(
        format!(
            "client: the QP fails ({:?}, QP {})",
            ev.as_ref().map(|e| e.kind),
            a.state
        ),
        a.state == QpState::Error,
    );
    c.term(
        "client: with the TERMINATE received",
        a.term,
        TERM_TAGGED_INVALID_STAG | TERM_RECEIVED,
    );
    ctl.expect("done")?;
    ctl.send("bye")?;
    Ok(())
}
