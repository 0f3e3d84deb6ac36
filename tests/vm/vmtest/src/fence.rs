// SPDX-License-Identifier: GPL-2.0
//! `fence`: RDMA READs beyond the ORD, and a fenced RDMA WRITE behind them.
//!
//! The server registers [`LEN`] bytes of pattern [`OLD`]. The client posts
//! [`READS`] READs of [`CHUNK`] bytes covering the region, twice the ORD of
//! 8 (`util::params`), so the later ones wait for ORD slots that earlier
//! completions free, then a WRITE of pattern [`NEW`] over the last chunk
//! with the fence flag (`SRNIC_SEND_FENCE`: it starts only once every
//! earlier READ has completed). Checked: every READ completes with the old
//! pattern (without the fence the WRITE reaches the server while the last
//! READ's response still waits behind the others'); the WRITE completes (a
//! transmit that waits for a READ's completion and is never woken would
//! stall it); a READ behind it finds the new pattern (its completion says the
//! WRITE is placed, RFC 5040 section 5.5), and so does the server.

use crate::util::{
    accept_qp, connect_qp, err, fill, mismatch, mr_from_str, mr_to_str, params, qp_attr,
    reg_remote, Checks, Res, Waiter,
};
use crate::Env;
use srnic::{AccessFlags, Context, Listener, MrBuffer, SendWr};

const CHUNK: usize = 16384;
const READS: usize = 16;
const LEN: usize = CHUNK * READS;
/// Where the WRITE goes: the last chunk, which the last READ reads.
const LAST: usize = LEN - CHUNK;
const OLD: u64 = 0x01D;
const NEW: u64 = 0x2E7;
/// The WRITE's work request id (the READs' are their chunk numbers).
const WRITE_ID: u64 = 100;
/// The READ behind the WRITE.
const BACK_ID: u64 = 101;

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
    let mut region = reg_remote(&pd, LEN, AccessFlags::ALL)?;
    fill(region.as_mut_slice(), OLD, 0);
    let l = Listener::new(&ctx, env.rdma, 1, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    ctl.send(format!("mr {}", mr_to_str(&region.remote())))?;
    let cq = ctx.create_cq(8)?;
    let (_qp, _) = accept_qp(&l, &pd, &qp_attr(&cq, &cq, 4), t)?;
    // A READ behind the client's WRITE has completed: its bytes are placed.
    ctl.expect("written")?;
    let (old, new) = region.as_slice().split_at(LAST);
    let bad = (mismatch(old, OLD, 0), mismatch(new, NEW, LAST));
    c.ok(
        format!(
            "server: the fenced WRITE's {CHUNK} bytes end the region, the old data before them \
             (first wrong bytes: {bad:?})"
        ),
        bad == (None, None),
    );
    ctl.send("checked")?;
    Ok(())
}

fn client(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut ctl = env.ctl()?;
    let m = ctl.expect("mr")?;
    let Some(remote) = m.first() else {
        return err(format!("mr: {m:?}"));
    };
    let remote = mr_from_str(remote)?;
    let cq = ctx.create_cq(64)?;
    let qp = connect_qp(&pd, &qp_attr(&cq, &cq, 32), env.rdma, Vec::new(), t)?;
    let sink = pd.reg_buffer(MrBuffer::new(LEN)?, AccessFlags::LOCAL_WRITE)?;
    let mut src = pd.reg_buffer(MrBuffer::new(CHUNK)?, AccessFlags::LOCAL_WRITE)?;
    fill(src.as_mut_slice(), NEW, LAST);
    let mut wrs = Vec::new();
    for i in 0..READS {
        let part = i * CHUNK..(i + 1) * CHUNK;
        let at = remote.at(part.start as u64);
        // SAFETY: `sink` is read only after every READ has completed.
        let rd = unsafe { SendWr::rdma_read(i as u64, vec![sink.sge(part)?], at) };
        wrs.push(rd.signaled());
    }
    let write = SendWr::rdma_write(WRITE_ID, vec![src.sge(..)?], remote.at(LAST as u64));
    wrs.push(write.signaled().fence());
    qp.post_send(&wrs)?;
    let mut w = Waiter::new(cq.clone());
    let mut done = 0;
    for i in 0..READS {
        if w.wait_ok(i as u64, t).is_ok() {
            done += 1;
        }
    }
    c.eq(
        format!("{READS} READs of {CHUNK} bytes beyond an ORD of 8 completed"),
        done,
        READS,
    );
    let bad = mismatch(sink.as_slice(), OLD, 0);
    c.ok(
        format!(
            "the READs found the region as it was before the fenced WRITE (first wrong byte: {bad:?})"
        ),
        bad.is_none(),
    );
    let wc = w.wait(WRITE_ID, t)?;
    c.ok(
        format!("the fenced WRITE completed (status {})", wc.status()),
        wc.ok().is_ok(),
    );
    // The WRITE's completion says it left, not that it is placed: a READ
    // behind it completes once it is, and reads it.
    let back = pd.reg_buffer(MrBuffer::new(CHUNK)?, AccessFlags::LOCAL_WRITE)?;
    // SAFETY: `back` is read only after the READ has completed.
    let rd = unsafe { SendWr::rdma_read(BACK_ID, vec![back.sge(..)?], remote.at(LAST as u64)) };
    qp.post_send(&[rd.signaled()])?;
    w.wait_ok(BACK_ID, t)?;
    let bad = mismatch(back.as_slice(), NEW, LAST);
    c.ok(
        format!("a READ behind the WRITE finds its data (first wrong byte: {bad:?})"),
        bad.is_none(),
    );
    ctl.send("written")?;
    ctl.expect("checked")?;
    Ok(())
}
