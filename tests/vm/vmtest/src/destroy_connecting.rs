// SPDX-License-Identifier: GPL-2.0
//! `destroy-connecting`: a QP destroyed while it is connecting never connects.
//!
//! The client starts a connection; the server holds the request (no MPA Reply
//! yet) until the client has destroyed its QP, then accepts it. Destroying
//! the QP ends its start-up at once: the socket is closed without waiting for
//! the Reply (or the start-up's 15 s timer). Checked:
//! - client: its QP and socket are freed before the server answers (the
//!   `qps` and `sockets` gauges return to what they were within 5 s), and no
//!   event names the destroyed QP (no ESTABLISHED, no CONNECT_ERROR for a
//!   handle nobody holds);
//! - server: its accepted QP sees the connection closed (DISCONNECTED, or
//!   CONNECT_ERROR when the close came before its Reply went out), as it
//!   would for any peer that went away.

use crate::util::{err, params, qp_attr, stat, Checks, Res};
use crate::Env;
use srnic::{Context, EventKind, Listener, ObjectKind};
use std::time::{Duration, Instant};

/// How long the destroyed QP's start-up may take to end: far less than its
/// own 15 s timer, far more than closing a socket takes.
const PROMPT: Duration = Duration::from_secs(5);

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks) -> Res {
    if env.server {
        server(env, c)
    } else {
        client(env, c)
    }
}

fn server(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let l = Listener::new(&ctx, env.rdma, 2, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    let req = l
        .get_request(Some(t))?
        .ok_or("no connection request before the timeout")?;
    ctl.send("request")?;
    ctl.expect("destroyed")?;
    let cq = ctx.create_cq(16)?;
    let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
    req.start_accept(&qp, &params(Vec::new()))?;
    // The server side is established once its Reply is sent; then the
    // client's refusal closes the connection.
    let mut kinds = Vec::new();
    let deadline = Instant::now() + t;
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        match qp.wait_event(Some(left))? {
            Some(e) => {
                kinds.push(e.kind);
                if e.kind != EventKind::Established {
                    break;
                }
            }
            None => break,
        }
    }
    c.ok(
        format!("server: the connection to the destroyed QP closes (events {kinds:?})"),
        matches!(
            kinds.last(),
            Some(EventKind::Disconnected | EventKind::ConnectError)
        ),
    );
    ctl.send("done")?;
    Ok(())
}

fn client(env: &Env, c: &mut Checks) -> Res {
    let ctx = Context::open()?;
    let (qps0, sockets0) = (stat(&ctx, "qps")?, stat(&ctx, "sockets")?);
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(16)?;
    let mut ctl = env.ctl()?;
    let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
    let handle = qp.handle();
    qp.start_connect(env.rdma, &params(Vec::new()))?;
    // The server holds the request: this QP's connection job is waiting for
    // the MPA Reply now. Destroy the QP under it.
    ctl.expect("request")?;
    drop(qp);
    // The start-up ends now, not when a Reply or its timer comes: wait until
    // the QP and its socket are freed (the server has not answered yet),
    // watching for any event that names the old handle.
    let deadline = Instant::now() + PROMPT;
    let mut named = Vec::new();
    // Takes the events queued now; keeps the kinds of those naming the QP.
    let drain = |named: &mut Vec<EventKind>| -> Res {
        while let Some(e) = ctx.next_event(Some(Duration::from_millis(200)))? {
            if e.target() == (ObjectKind::Qp, handle) {
                named.push(e.kind);
            }
        }
        Ok(())
    };
    let freed = loop {
        drain(&mut named)?;
        if stat(&ctx, "qps")? == qps0 && stat(&ctx, "sockets")? == sockets0 {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
    };
    c.ok(
        format!(
            "client: the destroyed QP and its socket are freed before the peer answers (qps {}, sockets {})",
            stat(&ctx, "qps")?,
            stat(&ctx, "sockets")?
        ),
        freed,
    );
    ctl.send("destroyed")?;
    ctl.expect("done")?;
    // Anything the job could have reported has been by now.
    drain(&mut named)?;
    c.ok(
        format!("client: no event names the destroyed QP (saw {named:?})"),
        named.is_empty(),
    );
    if !freed {
        return err("the destroyed QP was not freed");
    }
    Ok(())
}
