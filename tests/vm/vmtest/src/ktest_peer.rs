// SPDX-License-Identifier: GPL-2.0
//! `ktest-peer`: a userspace client of the kernel verbs API's test server
//! (tests/kernel/srnic_ktest.c loaded with `role=server`), so that a kernel
//! client and a program on `/dev/srnic` meet on the wire.
//!
//! It speaks the kernel test client's protocol: a first connect, on a QP of
//! its own, with the private data "reject me" (its NUL included), which the
//! server rejects with "no"; a second with "srnic-ktest v1", whose ESTABLISHED
//! carries the server's region (rkey and length as little-endian u32, address
//! as little-endian u64); an RDMA WRITE of the pattern `i * 7 + 3` over the
//! region's length; an RDMA READ of its first page back, compared; a SEND of
//! "done"; the server's "ack"; a disconnect.

use crate::util::{err, params, qp_attr, reg_remote, Checks, Res, Waiter};
use srnic::{AccessFlags, Context, MrBuffer, RecvWr, RemoteAddr, SendWr, WcStatus};
use std::net::SocketAddr;
use std::time::Duration;

/// The private data of the request the server accepts.
const HELLO: &[u8] = b"srnic-ktest v1\0";
/// The private data of the request the server rejects, and its answer.
const REJECT_ME: &[u8] = b"reject me\0";
const NO: &[u8] = b"no\0";
/// The messages of the end of the exchange.
const DONE: &[u8] = b"done\0";
const ACK: &[u8] = b"ack\0";
/// What is read back.
const READ_LEN: usize = 4096;
/// wr_ids.
const WR_RECV: u64 = 1;
const WR_WRITE: u64 = 10;
const WR_READ: u64 = 11;
const WR_SEND: u64 = 12;

/// The test pattern of srnic_ktest (`kt_pattern`).
fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(7).wrapping_add(3)) as u8
}

/// The server's region, from its accept's private data.
fn region(pd: &[u8]) -> Res<(RemoteAddr, usize)> {
    let Some(b) = pd.get(..16) else {
        return err(format!(
            "the accept's private data has {} bytes, not 16",
            pd.len()
        ));
    };
    let rkey = u32::from_le_bytes(b[0..4].try_into()?);
    let len = u32::from_le_bytes(b[4..8].try_into()?) as usize;
    let addr = u64::from_le_bytes(b[8..16].try_into()?);
    Ok((RemoteAddr { addr, rkey }, len))
}

pub fn run(c: &mut Checks, to: SocketAddr, t: Duration) -> Res {
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(16)?;

    let rejected = pd.create_qp(&qp_attr(&cq, &cq, 4))?;
    rejected.start_connect(to, &params(REJECT_ME.to_vec()))?;
    match rejected.wait_established(Some(t)) {
        Err(srnic::Error::Rejected { private_data }) => c.eq(
            "the kernel server rejected the first request, with its private data",
            private_data.as_slice(),
            NO,
        ),
        other => c.ok(format!("the first request was rejected ({other:?})"), false),
    };
    drop(rejected);

    let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
    let inbox = reg_remote(&pd, 64, AccessFlags::LOCAL_WRITE)?;
    // SAFETY: the inbox is read only after its completion.
    qp.post_recv(&[unsafe { RecvWr::new(WR_RECV, vec![inbox.sge(..)?]) }])?;
    qp.start_connect(to, &params(HELLO.to_vec()))?;
    let info = qp.wait_established(Some(t))?;
    c.ok("connected to the kernel server", true);
    let (remote, len) = region(&info.private_data)?;
    if len < READ_LEN {
        return err(format!(
            "the server's region is {len} bytes, less than {READ_LEN}"
        ));
    }
    let mut src = pd.reg_buffer(MrBuffer::new(len)?, AccessFlags::LOCAL_WRITE)?;
    for (i, b) in src.as_mut_slice().iter_mut().enumerate() {
        *b = pattern(i);
    }
    let mut w = Waiter::new(cq.clone());
    qp.post_send(&[SendWr::rdma_write(WR_WRITE, vec![src.sge(..)?], remote).signaled()])?;
    w.wait_ok(WR_WRITE, t)?;
    c.ok(
        format!("RDMA WRITE of {len} bytes into the kernel client's region"),
        true,
    );
    let sink = reg_remote(&pd, READ_LEN, AccessFlags::LOCAL_WRITE)?;
    // SAFETY: the sink is read only after the READ's completion.
    qp.post_send(&[unsafe { SendWr::rdma_read(WR_READ, vec![sink.sge(..)?], remote) }.signaled()])?;
    w.wait_ok(WR_READ, t)?;
    c.ok(
        "RDMA READ from the kernel client's region: what was written",
        sink.as_slice()
            .iter()
            .enumerate()
            .all(|(i, &b)| b == pattern(i)),
    );
    let mut outbox = pd.reg_buffer(MrBuffer::new(DONE.len())?, AccessFlags::LOCAL_WRITE)?;
    outbox.as_mut_slice().copy_from_slice(DONE);
    qp.post_send(&[SendWr::send(WR_SEND, vec![outbox.sge(..)?]).signaled()])?;
    w.wait_ok(WR_SEND, t)?;
    let wc = w.wait(WR_RECV, t)?;
    c.ok(
        "the kernel server's answer arrived",
        wc.status() == WcStatus::Success && inbox.as_slice().starts_with(ACK),
    );
    qp.disconnect(false)?;
    c.ok("disconnected", qp.wait_disconnected(Some(t))?);
    Ok(())
}
