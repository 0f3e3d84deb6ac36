// SPDX-License-Identifier: GPL-2.0
//! `destroy-race`: a QP's connection ended at a random moment of its life, by
//! each of the ways a local user can end it, many times.
//!
//! Each round the client picks one of: destroy the QP, close its file (drop
//! the context), kill its process (a child doing the same work gets
//! SIGKILL); a random delay of 0 to MAX_DELAY ms; whether to wait for the
//! connection first; and 0 to 2 SENDs of 64 KiB in flight. So the end falls
//! while connecting, while the server accepts, or while established with
//! data moving. The server accepts every request after its own random delay
//! (rejects one in eight), posts receives, and itself destroys a third of
//! its QPs at a random moment. Checked:
//! - client: after the last round, every object and socket of srnic in its
//!   VM is gone (the gauges return to what they were) within a bound;
//! - server: every connection it accepted ends (the peer's close is seen as
//!   DISCONNECTED, CONNECT_ERROR or QP_ERROR) within a bound.
//!
//! Use-after-free, leaks and lock-order problems of these paths show as
//! KASAN, kmemleak and lockdep reports, which fail the case.

use crate::util::{err, params, qp_attr, stat, Checks, Res};
use crate::Env;
use srnic::{AccessFlags, Context, EventKind, Listener, MrBuffer, RecvWr, SendWr};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Bytes of each SEND and receive.
const MSG: usize = 64 << 10;
/// How long the ends may take to be seen, after the last round.
const SETTLE: Duration = Duration::from_secs(30);
/// The gauges that must return to where they were.
const GAUGES: [&str; 7] = [
    "contexts",
    "qps",
    "sockets",
    "pinned_pages",
    "pds",
    "mrs",
    "cqs",
];

/// The ways a local user ends a connection.
const ENDS: [&str; 3] = ["destroy the QP", "close the file", "kill the process"];

/// What the scenario takes besides the addresses.
pub struct Opts {
    /// Rounds (client).
    pub rounds: u32,
    /// The random seed (printed, for a rerun).
    pub seed: u64,
    /// Largest random delay in milliseconds.
    pub max_delay_ms: u64,
}

/// xorshift64*: small, seeded, good enough to pick moments.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed | 1)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks, o: &Opts) -> Res {
    if env.server {
        server(env, c, o)
    } else {
        client(env, c, o)
    }
}

/// Connects a QP of a new context to `addr`, optionally waits for the
/// connection, posts `sends` SENDs, then calls `end` with the context and the
/// QP (which it drops as it likes).
fn connect_then(
    addr: SocketAddr,
    wait_established: bool,
    sends: u32,
    end: impl FnOnce(Context, srnic::QueuePair),
) -> Res {
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(64)?;
    let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
    let buf = pd.reg_buffer(MrBuffer::new(MSG)?, AccessFlags::LOCAL_WRITE)?;
    qp.start_connect(addr, &params(Vec::new()))?;
    if wait_established && qp.wait_established(Some(Duration::from_secs(5))).is_ok() {
        for i in 0..sends {
            // The QP may fail under us (the server ends it too): not an error here.
            let _ = qp.post_send(&[SendWr::send(u64::from(i), vec![buf.sge(..)?]).signaled()]);
        }
    }
    end(ctx, qp);
    Ok(())
}

/// The child of a "kill the process" round: does the connecting work, then
/// waits to be killed.
pub fn child(to: &str, port: u16, wait_established: bool, sends: u32) -> Res {
    let addr = crate::util::resolve(to, port)?;
    connect_then(addr, wait_established, sends, |_ctx, _qp| {
        std::thread::sleep(Duration::from_secs(3600));
    })
}

fn client(env: &Env, c: &mut Checks, o: &Opts) -> Res {
    let probe = Context::open()?;
    let before: Vec<u64> = GAUGES.iter().map(|g| stat(&probe, g)).collect::<Res<_>>()?;
    let mut ctl = env.ctl()?;
    let mut rng = Rng::new(o.seed);
    println!(
        "client: {} rounds, seed {:#x}, delays up to {} ms",
        o.rounds, o.seed, o.max_delay_ms
    );
    let mut counts = [0u32; ENDS.len()];
    for _ in 0..o.rounds {
        let how = rng.below(ENDS.len() as u64) as usize;
        let delay = Duration::from_millis(rng.below(o.max_delay_ms + 1));
        let wait = rng.below(2) == 0;
        let sends = rng.below(3) as u32;
        counts[how] += 1;
        match how {
            0 => connect_then(env.rdma, wait, sends, |ctx, qp| {
                std::thread::sleep(delay);
                drop(qp);
                drop(ctx);
            })?,
            1 => connect_then(env.rdma, wait, sends, |ctx, qp| {
                std::thread::sleep(delay);
                // The context's last reference: the file closes with the QP
                // still in it.
                drop(ctx);
                drop(qp);
            })?,
            _ => {
                let mut child = Command::new(std::env::current_exe()?)
                    .args([
                        "race-child",
                        "--to",
                        &env.rdma.ip().to_string(),
                        "-p",
                        &env.rdma.port().to_string(),
                    ])
                    .args(["--sends", &sends.to_string()])
                    .args(if wait {
                        &["--wait-established"][..]
                    } else {
                        &[][..]
                    })
                    .stdout(Stdio::null())
                    .spawn()?;
                std::thread::sleep(delay);
                child.kill()?;
                child.wait()?;
            }
        }
    }
    println!(
        "client: ended {} by destroying the QP, {} by closing the file, {} by killing the process",
        counts[0], counts[1], counts[2]
    );
    let deadline = Instant::now() + SETTLE;
    let now = loop {
        let now: Vec<u64> = GAUGES.iter().map(|g| stat(&probe, g)).collect::<Res<_>>()?;
        if now == before || Instant::now() > deadline {
            break now;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    c.ok(
        format!("client: every object and socket is gone after the rounds ({GAUGES:?}: {now:?}, before {before:?})"),
        now == before,
    );
    ctl.send("end")?;
    ctl.expect("done")?;
    Ok(())
}

/// A connection the server accepted.
struct Accepted {
    qp: srnic::QueuePair,
    _cq: srnic::CompletionQueue,
    _mrs: Vec<srnic::MemoryRegion<'static>>,
    /// When the server itself destroys it, if it does.
    destroy_at: Option<Instant>,
}

fn server(env: &Env, c: &mut Checks, o: &Opts) -> Res {
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let l = Listener::new(&ctx, env.rdma, 64, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    // The client says "end" after its last round; the control connection is
    // read on a thread so the accept loop never waits for it.
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let r = ctl.expect("end").map_err(|e| e.to_string());
        let _ = tx.send(());
        r.map(|_| ctl)
    });
    let mut rng = Rng::new(o.seed ^ 0x5e7e7);
    let mut open: Vec<Accepted> = Vec::new();
    let (mut accepted, mut rejected, mut destroyed, mut closed) = (0u32, 0u32, 0u32, 0u32);
    let mut end_deadline: Option<Instant> = None;
    loop {
        if end_deadline.is_none() && rx.try_recv().is_ok() {
            end_deadline = Some(Instant::now() + SETTLE);
        }
        if let Some(req) = l.get_request(Some(Duration::from_millis(20)))? {
            std::thread::sleep(Duration::from_millis(rng.below(o.max_delay_ms / 2 + 1)));
            if rng.below(8) == 0 {
                // The client may be gone already: refusing may fail.
                let _ = req.reject(&[]);
                rejected += 1;
            } else {
                let cq = ctx.create_cq(64)?;
                let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
                let mut mrs = Vec::new();
                for i in 0..4u64 {
                    let m = pd.reg_buffer(MrBuffer::new(MSG)?, AccessFlags::LOCAL_WRITE)?;
                    // SAFETY: the receive buffers are never read.
                    qp.post_recv(&[unsafe { RecvWr::new(i, vec![m.sge(..)?]) }])?;
                    mrs.push(m);
                }
                if req.start_accept(&qp, &params(Vec::new())).is_ok() {
                    accepted += 1;
                    let destroy_at = (rng.below(3) == 0).then(|| {
                        Instant::now() + Duration::from_millis(rng.below(o.max_delay_ms + 1))
                    });
                    open.push(Accepted {
                        qp,
                        _cq: cq,
                        _mrs: mrs,
                        destroy_at,
                    });
                }
            }
        }
        // Per-QP waits, so that the listener's requests stay queued for it.
        let mut i = 0;
        while i < open.len() {
            let ended = match open[i].qp.wait_event(Some(Duration::ZERO))? {
                Some(e) => matches!(
                    e.kind,
                    EventKind::Disconnected | EventKind::ConnectError | EventKind::QpError
                ),
                None => false,
            };
            if ended {
                open.swap_remove(i);
                closed += 1;
            } else {
                i += 1;
            }
        }
        let now = Instant::now();
        let before = open.len();
        open.retain(|a| !matches!(a.destroy_at, Some(t) if t <= now));
        destroyed += (before - open.len()) as u32;
        match end_deadline {
            Some(_) if open.is_empty() => break,
            Some(d) if now > d => break,
            _ => {}
        }
    }
    println!(
        "server: accepted {accepted}, rejected {rejected}, destroyed {destroyed} itself, saw {closed} closed by the client"
    );
    c.ok(
        format!(
            "server: every connection it accepted ended ({} still open)",
            open.len()
        ),
        open.is_empty(),
    );
    let mut ctl = match reader.join() {
        Ok(Ok(ctl)) => ctl,
        Ok(Err(e)) => return err(e),
        Err(_) => return err("the control reader panicked"),
    };
    drop(open);
    ctl.send("done")?;
    Ok(())
}
