// SPDX-License-Identifier: GPL-2.0
//! `zcopy`: a large RDMA WRITE sent zero-copy completes only once TCP is done
//! with its pages, and a QP destroyed while TCP holds them is freed later.
//!
//! The client is a raw peer: it negotiates MPA over plain TCP sockets with a
//! small receive buffer and reads nothing until told, so the server's WRITE
//! fits its TCP send buffer (the case raises `tcp_wmem` on the server) but
//! not the peer's window: TCP takes every byte and cannot have them
//! acknowledged. The peer parses what it reads (MPA CRCs, DDP offsets) and
//! checks the WRITE's bytes. Checked on the server (srnic):
//! - with `--zerocopy` (the case sets the module parameter `zcopy_min`): the
//!   WRITE's bytes all went to TCP, all zero-copy (`tx_zcopy_bytes`), and
//!   it does not complete within a second; once the peer reads, it completes
//!   successfully. A copying send completes as soon as TCP took the bytes;
//! - without it (`zcopy_min` 0): nothing goes zero-copy and the WRITE
//!   completes while the peer still reads nothing (so the check above can
//!   tell the two apart);
//! - with `--zerocopy`, a second QP destroyed while TCP holds its WRITE's
//!   pages (the WRITE not completed): the QP lives on (the QP gauge stays
//!   at one), and is freed (the gauge drops to zero) once the peer resets
//!   that connection.
//!
//! The case checks the gauges and kmemleak afterwards.

use crate::stall::{raw_peer, read_tagged};
use crate::util::{
    accept_qp, err, fill, mismatch, params, qp_attr, reg_remote, stat, Checks, Res, Waiter,
};
use crate::Env;
use srnic::{AccessFlags, Context, Listener, RemoteMr, SendWr};
use srnic_proto::mpa::rx::RxFramer;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Bytes of each WRITE: above the `zcopy_min` the case sets (32 KiB), far
/// above what the peer's window takes.
const LEN: usize = 256 << 10;
/// The raw peer's receive buffer: a window of some segments (one below the
/// MSS would leave TCP to send a probe's worth at a time once the peer
/// reads), far below [`LEN`].
const PEER_RCVBUF: libc::c_int = 16 << 10;
/// How long a held WRITE must stay uncompleted: a copied one completes
/// within microseconds of TCP taking its last byte.
const HOLD: Duration = Duration::from_secs(1);
/// Pattern seed of the data written.
const SEED: u64 = 0x5a;
/// The peer's region as its WRITEs name it (the peer never places them).
const SINK: RemoteMr = RemoteMr {
    addr: 0,
    len: LEN as u64,
    rkey: 0x0100,
};

/// Runs the scenario's side; `zerocopy`: the server's module sends WRITEs
/// of [`LEN`] zero-copy.
pub fn run(env: &Env, c: &mut Checks, zerocopy: bool) -> Res {
    if env.server {
        server(env, c, zerocopy)
    } else {
        client(env, c, zerocopy)
    }
}

/// Waits until the QP handed all of `bytes` to TCP.
fn wait_sent(qp: &srnic::QueuePair, bytes: u64, t: Duration) -> Res {
    let deadline = Instant::now() + t;
    loop {
        let sent = qp.query()?.tx_bytes;
        if sent >= bytes {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return err(format!(
                "TCP took {sent} of {bytes} bytes (is the server's tcp_wmem raised?)"
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn server(env: &Env, c: &mut Checks, zerocopy: bool) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let l = Listener::new(&ctx, env.rdma, 2, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    let mut src = reg_remote(&pd, LEN, AccessFlags::LOCAL_WRITE)?;
    fill(src.as_mut_slice(), SEED, 0);
    let cq = ctx.create_cq(16)?;
    let (qp, _) = accept_qp(&l, &pd, &qp_attr(&cq, &cq, 16), t)?;
    let zc0 = stat(&ctx, "tx_zcopy_bytes")?;
    ctl.expect("stalled")?;
    let wr = SendWr::rdma_write(1, vec![src.sge(..)?], SINK.at(0));
    qp.post_send(&[wr.signaled()])?;
    wait_sent(&qp, LEN as u64, t)?;
    let zc = stat(&ctx, "tx_zcopy_bytes")? - zc0;
    let mut w = Waiter::new(cq.clone());
    let early = w.next(HOLD)?;
    if zerocopy {
        c.eq("server: bytes sent zero-copy", zc, LEN as u64);
        c.ok(
            format!("server: the WRITE did not complete in {HOLD:?} while TCP held its pages"),
            early.is_none(),
        );
        ctl.send("read")?;
        let wc = w.wait(1, t)?;
        c.ok(
            format!(
                "server: it completed once the peer read it ({:?})",
                wc.status()
            ),
            wc.ok().is_ok(),
        );
    } else {
        c.eq("server: bytes sent zero-copy", zc, 0);
        c.ok(
            "server: a copied WRITE completed while the peer read nothing",
            early.is_some_and(|wc| wc.wr_id() == 1 && wc.ok().is_ok()),
        );
        ctl.send("read")?;
    }
    ctl.expect("read")?;
    drop(qp);
    if zerocopy {
        // A QP destroyed while TCP holds its WRITE's pages.
        let cq2 = ctx.create_cq(16)?;
        let (qp2, _) = accept_qp(&l, &pd, &qp_attr(&cq2, &cq2, 16), t)?;
        ctl.expect("stalled")?;
        let wr = SendWr::rdma_write(2, vec![src.sge(..)?], SINK.at(0));
        qp2.post_send(&[wr.signaled()])?;
        wait_sent(&qp2, LEN as u64, t)?;
        c.ok(
            "server: the second WRITE is held by TCP (not completed) when its QP is destroyed",
            Waiter::new(cq2.clone()).next(Duration::ZERO)?.is_none(),
        );
        drop(qp2);
        c.eq(
            "server: the destroyed QP lives on while TCP holds its pages (QPs)",
            stat(&ctx, "qps")?,
            1,
        );
        ctl.send("reset")?;
        let deadline = Instant::now() + t;
        let mut qps = stat(&ctx, "qps")?;
        while qps != 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            qps = stat(&ctx, "qps")?;
        }
        c.eq(
            "server: QPs left once the peer reset the connection",
            qps,
            0,
        );
    }
    ctl.send("bye")?;
    Ok(())
}

/// A raw MPA connection to the server that reads nothing yet, and the
/// receive framer for what the server sends on it.
fn stalled(env: &Env) -> Res<(TcpStream, RxFramer)> {
    let (s, tx) = raw_peer(env, PEER_RCVBUF, false)?;
    Ok((s, RxFramer::new(tx.crc_on(), false)))
}

fn client(env: &Env, c: &mut Checks, zerocopy: bool) -> Res {
    let mut ctl = env.ctl()?;
    let (mut s, mut rx) = stalled(env)?;
    ctl.send("stalled")?;
    ctl.expect("read")?;
    let (data, fpdus) = read_tagged(&mut s, &mut rx, LEN, Instant::now() + env.timeout)?;
    c.ok(
        format!("client: the WRITE's {LEN} bytes arrived in {fpdus} FPDUs, CRCs and bytes as sent"),
        mismatch(&data, SEED, 0).is_none(),
    );
    ctl.send("read")?;
    if zerocopy {
        let (s2, _) = stalled(env)?;
        ctl.send("stalled")?;
        ctl.expect("reset")?;
        // Closing with unread bytes resets the connection (RFC 2525 2.17).
        drop(s2);
    }
    ctl.expect("bye")?;
    Ok(())
}
