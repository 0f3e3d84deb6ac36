// SPDX-License-Identifier: GPL-2.0
//! `invalidate`: a Send with Invalidate really invalidates the STag.
//!
//! Twice, on a fresh connection each (the first error ends the QP): once
//! followed by an RDMA WRITE, once by an RDMA READ. The server registers a
//! region R (all rights) and a region S, and posts a receive. The client
//! 1. RDMA WRITEs a pattern into R (the server verifies it: the STag works);
//! 2. sends a SEND with Invalidate naming the STag of the server's receive
//!    buffer, a region without remote access: the receive completes with
//!    REM_INV_REQ_ERR and the region stays valid (the next receive lands in
//!    it), since only regions registered for remote access may be
//!    invalidated by the peer; then a SEND with Invalidate naming R's STag:
//!    the server's receive completion has the WITH_INV flag and
//!    `invalidated_stag` = R's STag;
//! 3. RDMA WRITEs to R (then READs from S), or RDMA READs from R: the access
//!    fails: the initiator's completion (the READ) has an error status and the
//!    received TERMINATE (bit 31 set), as do its QP_ERROR event and QUERY_QP,
//!    its QP is in ERROR; the server's QP is in ERROR with the TERMINATE it
//!    sent, and R still holds the pattern of step 1.
//!
//! The TERMINATE follows the TermCode table: WRITE to an invalid STag is
//! DDP/tagged/invalid STag (0x1100), a READ whose source STag is invalid is
//! RDMAP/remote protection/invalid STag (0x0100).

use crate::remote_access::RECEIVED;
use crate::util::{
    accept_qp, connect_qp, err, fill, mismatch, mr_from_str, mr_to_str, params, qp_attr,
    reg_remote, Checks, Res, Waiter,
};
use crate::Env;
use srnic::{
    AccessFlags, Context, EventKind, Listener, MrBuffer, QpState, QueuePair, RecvWr, SendWr,
    WcOpcode, WcStatus,
};
use std::time::Duration;

const LEN: usize = 4096;
const MSG: usize = 64;
const SEED: [u64; 2] = [0x1A1, 0x1A2];
/// (name, the TERMINATE the target sends).
const CASES: [(&str, u32); 2] = [("write", 0x1100), ("read", 0x0100)];

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks) -> Res {
    if env.server {
        server(env, c)
    } else {
        client(env, c)
    }
}

fn error_state(c: &mut Checks, who: &str, qp: &QueuePair, term: u32, t: Duration) -> Res {
    match qp.wait_event(Some(t))? {
        Some(e) => {
            c.eq(format!("{who}: QP event"), e.kind, EventKind::QpError);
            c.term(format!("{who}: QP_ERROR event"), e.term, term);
        }
        None => {
            c.ok(format!("{who}: a QP event within {t:?}"), false);
        }
    }
    let a = qp.query()?;
    c.eq(format!("{who}: QP state"), a.state, QpState::Error);
    c.term(format!("{who}: QUERY_QP term"), a.term, term);
    Ok(())
}

fn server(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let l = Listener::new(&ctx, env.rdma, 2, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    for (i, (op, term)) in CASES.iter().enumerate() {
        let who = format!("{op} after invalidation: target");
        ctl.expect("case")?;
        let cq = ctx.create_cq(16)?;
        let (qp, _) = accept_qp(&l, &pd, &qp_attr(&cq, &cq, 16), t)?;
        let r = reg_remote(&pd, LEN, AccessFlags::ALL)?;
        let mut s = reg_remote(&pd, LEN, AccessFlags::ALL)?;
        fill(s.as_mut_slice(), 0x5, 0);
        let inbox = pd.reg_buffer(MrBuffer::new(MSG)?, AccessFlags::LOCAL_WRITE)?;
        // SAFETY: `inbox` is read only after these receives completed.
        qp.post_recv(&[unsafe { RecvWr::new(7, vec![inbox.sge(..)?]) }, unsafe {
            RecvWr::new(1, vec![inbox.sge(..)?])
        }])?;
        ctl.send(format!(
            "mrs {} {} {:#x}",
            mr_to_str(&r.remote()),
            mr_to_str(&s.remote()),
            inbox.lkey()
        ))?;
        ctl.expect("written")?;
        c.ok(
            format!("{op}: the RDMA WRITE before invalidation landed"),
            mismatch(r.as_slice(), SEED[i], 0).is_none(),
        );
        let mut w = Waiter::new(cq.clone());
        let wc = w.wait(7, t)?;
        c.ok(
            format!(
                "{op}: a SEND with Invalidate of the local-only receive buffer is refused ({}, names {:?})",
                wc.status(),
                wc.invalidated_rkey()
            ),
            wc.status() == WcStatus::RemInvReqErr && wc.invalidated_rkey() == Some(inbox.lkey()),
        );
        let wc = w.wait(1, t)?;
        c.ok(
            format!(
                "{op}: the next receive lands in that buffer (still valid), a SEND with Invalidate received ({}, {} bytes)",
                wc.status(),
                wc.byte_len()
            ),
            wc.status() == WcStatus::Success
                && wc.opcode() == WcOpcode::Recv
                && wc.byte_len() as usize == MSG
                && mismatch(inbox.as_slice(), 0x1E, 0).is_none(),
        );
        c.eq(
            format!("{op}: receive completion names the invalidated STag"),
            wc.invalidated_rkey(),
            Some(r.rkey()),
        );
        ctl.send("invalidated")?;
        error_state(c, &who, &qp, *term, t)?;
        c.ok(
            format!("{op}: the invalidated region still holds its data"),
            mismatch(r.as_slice(), SEED[i], 0).is_none(),
        );
        ctl.send("done")?;
    }
    Ok(())
}

fn client(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut ctl = env.ctl()?;
    let mut src = pd.reg_buffer(MrBuffer::new(LEN)?, AccessFlags::LOCAL_WRITE)?;
    let mut msg = pd.reg_buffer(MrBuffer::new(MSG)?, AccessFlags::LOCAL_WRITE)?;
    fill(msg.as_mut_slice(), 0x1E, 0);
    let sink = pd.reg_buffer(MrBuffer::new(LEN)?, AccessFlags::LOCAL_WRITE)?;
    for (i, (op, term)) in CASES.iter().enumerate() {
        let who = format!("{op} after invalidation: initiator");
        ctl.send(format!("case {op}"))?;
        let cq = ctx.create_cq(16)?;
        let qp = connect_qp(&pd, &qp_attr(&cq, &cq, 16), env.rdma, Vec::new(), t)?;
        let m = ctl.expect("mrs")?;
        if m.len() != 3 {
            return err(format!("mrs: {m:?}"));
        }
        let r = mr_from_str(&m[0])?;
        let s = mr_from_str(&m[1])?;
        let local = u32::from_str_radix(m[2].trim_start_matches("0x"), 16)?;
        let mut w = Waiter::new(cq.clone());
        fill(src.as_mut_slice(), SEED[i], 0);
        // The READ behind the WRITE completes only once the WRITE is placed.
        // SAFETY: `sink` is not read.
        let check = unsafe { SendWr::rdma_read(5, vec![sink.sge(0..64)?], r.at(0)) };
        qp.post_send(&[
            SendWr::rdma_write(1, vec![src.sge(..)?], r.at(0)).signaled(),
            check.signaled(),
        ])?;
        w.wait_ok(1, t)?;
        w.wait_ok(5, t)?;
        ctl.send("written")?;
        qp.post_send(&[
            SendWr::send_with_inv(6, vec![msg.sge(..)?], local).signaled(),
            SendWr::send_with_inv(2, vec![msg.sge(..)?], r.rkey).signaled(),
        ])?;
        w.wait_ok(6, t)?;
        w.wait_ok(2, t)?;
        c.ok(
            format!("{op}: SEND with Invalidate of STag {:#x} sent", r.rkey),
            true,
        );
        ctl.expect("invalidated")?;
        fill(src.as_mut_slice(), 0xDEAD, 0);
        let want = term | RECEIVED;
        if *op == "write" {
            // SAFETY: `sink` is not read.
            let follow = unsafe { SendWr::rdma_read(4, vec![sink.sge(0..64)?], s.at(0)) };
            qp.post_send(&[
                SendWr::rdma_write(3, vec![src.sge(..)?], r.at(0)).signaled(),
                follow.signaled(),
            ])?;
            let f = w.wait(4, t)?;
            c.ok(
                format!(
                    "{op}: the READ posted after the WRITE completes with an error ({})",
                    f.status()
                ),
                matches!(f.status(), WcStatus::RemAccessErr | WcStatus::WrFlushErr),
            );
            c.term(
                format!("{op}: that completion carries the received TERMINATE"),
                f.0.term,
                want,
            );
            let wr = w.wait(3, t)?;
            println!(
                "info: {op}: the WRITE itself completed with {}",
                wr.status()
            );
        } else {
            // SAFETY: `sink` is not read.
            let rd = unsafe { SendWr::rdma_read(3, vec![sink.sge(..)?], r.at(0)) };
            qp.post_send(&[rd.signaled()])?;
            let f = w.wait(3, t)?;
            c.eq(
                format!("{op}: READ completion status"),
                f.status(),
                WcStatus::RemAccessErr,
            );
            c.term(
                format!("{op}: READ completion carries the received TERMINATE"),
                f.0.term,
                want,
            );
        }
        error_state(c, &who, &qp, want, t)?;
        ctl.expect("done")?;
    }
    Ok(())
}
