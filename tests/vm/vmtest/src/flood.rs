// SPDX-License-Identifier: GPL-2.0
//! A connection flood against an iWARP listener: IDLE TCP connections that
//! send nothing and HALF that send half an MPA Request header, held open
//! until a stop file appears (or, with `until_closed`, until the server has
//! closed every one). Then it reports how many connections the server closed
//! (evicted, timed out) and how many are still open.
//!
//! The case around it (`conn_flood`) runs a real transfer while the flood is
//! held, and reads this report.

use crate::util::{err, Checks, Res};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// The first 10 bytes of an MPA Request's 20-byte header (RFC 5044 section
/// 7.1): half its key.
const HALF_REQUEST: &[u8] = b"MPA ID Req";

/// How a held connection stands.
#[derive(Debug, PartialEq, Eq)]
enum State {
    /// Nothing from the server: still open.
    Open,
    /// The server closed it (end of stream or reset).
    Closed,
}

fn state(s: &mut TcpStream) -> State {
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Ok(0) => State::Closed,
        // The server sends nothing to a connection that sent no Request.
        Ok(_) => State::Open,
        Err(e) if e.kind() == ErrorKind::WouldBlock => State::Open,
        Err(_) => State::Closed,
    }
}

/// Raises the open-file limit to at least `n` (root may).
fn raise_nofile(n: u64) -> Res {
    let lim = libc::rlimit {
        rlim_cur: n,
        rlim_max: n,
    };
    // SAFETY: a valid rlimit for this process.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return err(format!(
            "setrlimit(RLIMIT_NOFILE, {n}): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// How often the flood tries a connection before it counts it refused.
const CONNECT_TRIES: u32 = 4;

/// Connects to `to`, trying again when the attempt fails: a server busy
/// evicting (more so with one vCPU of the peer's VM sending and one
/// receiving) lets its TCP accept queue fill, and then drops SYNs for a few
/// seconds. A real flood keeps trying too.
fn connect(to: &SocketAddr) -> std::io::Result<TcpStream> {
    let mut tries = 0;
    loop {
        tries += 1;
        match TcpStream::connect_timeout(to, Duration::from_secs(5)) {
            Err(_) if tries < CONNECT_TRIES => std::thread::sleep(Duration::from_millis(200)),
            r => return r,
        }
    }
}

/// Runs the flood; see the module documentation.
#[allow(clippy::too_many_arguments)]
pub fn run(
    c: &mut Checks,
    to: SocketAddr,
    idle: u32,
    half: u32,
    ready: &Path,
    stop: &Path,
    hold: Duration,
    until_closed: bool,
) -> Res {
    raise_nofile(u64::from(idle + half) + 64)?;
    let mut conns = Vec::new();
    let mut refused = 0u32;
    let t_open = Instant::now();
    for k in 0..idle + half {
        match connect(&to) {
            Ok(mut s) => {
                if k >= idle {
                    s.write_all(HALF_REQUEST)?;
                }
                s.set_nonblocking(true)?;
                conns.push(s);
            }
            Err(_) => refused += 1,
        }
        if (k + 1) % 250 == 0 {
            println!(
                "flood: {} connections tried, {refused} refused, {:.1} s",
                k + 1,
                t_open.elapsed().as_secs_f64()
            );
        }
    }
    let opened = conns.len();
    println!(
        "flood: opened={opened} refused={refused} in {:.1} s",
        t_open.elapsed().as_secs_f64()
    );
    c.ok(
        format!("the flood opened {opened} of {} connections", idle + half),
        opened > 0,
    );
    std::fs::write(ready, format!("{opened}\n"))?;
    let t0 = Instant::now();
    let mut closed = 0;
    while !stop.exists() && t0.elapsed() < hold {
        std::thread::sleep(Duration::from_millis(100));
        if until_closed {
            // A connection found closed stays closed: read the others only.
            conns.retain_mut(|s| state(s) == State::Open);
            closed = opened - conns.len();
            if conns.is_empty() {
                break;
            }
        }
    }
    closed += conns
        .iter_mut()
        .map(state)
        .filter(|s| *s == State::Closed)
        .count();
    if until_closed {
        println!(
            "flood: waited {:.1} s for the server to close them",
            t0.elapsed().as_secs_f64()
        );
    }
    println!(
        "flood: closed_by_server={closed} still_open={}",
        opened - closed
    );
    Ok(())
}
