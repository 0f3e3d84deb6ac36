// SPDX-License-Identifier: GPL-2.0
//! `remote-access`: every remote access error the target checks, each on a
//! fresh "victim" QP, while a "bystander" QP between the same two programs
//! keeps transferring verified data.
//!
//! The server (target) registers four regions: `good` (all rights), `nowrite`
//! (no REMOTE_WRITE, but LOCAL_WRITE and REMOTE_READ), `noread` (no
//! REMOTE_READ) and `otherpd` (all rights, in a second PD). Per case the
//! client connects a victim QP and issues the bad access; then:
//! - client (initiator): a READ gets an error completion with the received
//!   TERMINATE (`term` bit 31 set); for a WRITE, a READ posted right after it
//!   completes with an error and the TERMINATE; the QP_ERROR event carries it;
//!   QUERY_QP says ERROR with the same word;
//! - server (target): the QP_ERROR event carries the TERMINATE it sent, the
//!   QP is in ERROR with it, and no byte of any region changed;
//! - both: the bystander QP is still RTS and moves 32 KiB (WRITE, verified by
//!   the server, READ back and verified by the client).
//!
//! Expected codes, from the TermCode table of `rust/proto/src/rdmap.rs`
//! (Documentation/srnic/protocols.rst, the TERMINATE table): inbound WRITE placement fails with DDP/tagged (layer 1,
//! type 1): invalid STag 0x00, base/bounds 0x01, access rights 0x00 (as siw),
//! PD mismatch 0x02; a READ whose source fails its check gets RDMAP/remote
//! protection (layer 0, type 1): invalid STag 0x00, base/bounds 0x01, access
//! rights 0x02, PD mismatch 0x03.

use crate::util::{
    accept_qp, connect_qp, err, fill, mismatch, mr_from_str, mr_to_str, params, qp_attr,
    reg_remote, Checks, Ctl, Res, Waiter,
};
use crate::Env;
use srnic::{
    AccessFlags, Context, EventKind, Listener, MemoryRegion, MrBuffer, QpState, QueuePair,
    RemoteMr, SendWr, WcStatus,
};
use std::time::Duration;

const GOOD_LEN: usize = 65536;
/// The bystander uses the first half of `good`; the second half never changes.
const HALF: usize = GOOD_LEN / 2;
const SMALL: usize = 4096;
const SEED_GOOD: u64 = 0xC0DE;
const SEED_NOWRITE: u64 = 0xA1;
const SEED_NOREAD: u64 = 0xA2;
const SEED_OTHER: u64 = 0xA3;
/// Bytes of each bad access.
const BAD_LEN: usize = 64;
/// `term` bit 31: the TERMINATE was received (initiator side).
pub const RECEIVED: u32 = 1 << 31;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Write,
    Read,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// An STag no region has.
    BadStag,
    /// `good`, starting 32 bytes before its end.
    GoodEnd,
    NoWrite,
    NoRead,
    OtherPd,
}

struct Case {
    name: &'static str,
    op: Op,
    target: Target,
    /// layer << 12 | type << 8 | code, as the target sends it.
    term: u32,
}

const CASES: [Case; 8] = [
    Case {
        name: "WRITE to an invalid STag",
        op: Op::Write,
        target: Target::BadStag,
        term: 0x1100,
    },
    Case {
        name: "READ from an invalid STag",
        op: Op::Read,
        target: Target::BadStag,
        term: 0x0100,
    },
    Case {
        name: "WRITE beyond the region's end",
        op: Op::Write,
        target: Target::GoodEnd,
        term: 0x1101,
    },
    Case {
        name: "READ beyond the region's end",
        op: Op::Read,
        target: Target::GoodEnd,
        term: 0x0101,
    },
    Case {
        name: "WRITE to a region without REMOTE_WRITE",
        op: Op::Write,
        target: Target::NoWrite,
        term: 0x1100,
    },
    Case {
        name: "READ from a region without REMOTE_READ",
        op: Op::Read,
        target: Target::NoRead,
        term: 0x0102,
    },
    Case {
        name: "WRITE to a region of another PD",
        op: Op::Write,
        target: Target::OtherPd,
        term: 0x1102,
    },
    Case {
        name: "READ from a region of another PD",
        op: Op::Read,
        target: Target::OtherPd,
        term: 0x0103,
    },
];

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks) -> Res {
    if env.server {
        server(env, c)
    } else {
        client(env, c)
    }
}

fn reg(
    pd: &srnic::ProtectionDomain,
    len: usize,
    access: AccessFlags,
    seed: u64,
) -> Res<MemoryRegion<'static>> {
    let mut m = reg_remote(pd, len, access)?;
    fill(m.as_mut_slice(), seed, 0);
    Ok(m)
}

fn server(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let pd2 = ctx.alloc_pd()?;
    let good = reg(&pd, GOOD_LEN, AccessFlags::ALL, SEED_GOOD)?;
    let nowrite = reg(
        &pd,
        SMALL,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
        SEED_NOWRITE,
    )?;
    let noread = reg(
        &pd,
        SMALL,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        SEED_NOREAD,
    )?;
    let other = reg(&pd2, SMALL, AccessFlags::ALL, SEED_OTHER)?;
    let l = Listener::new(&ctx, env.rdma, 8, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    ctl.send(format!(
        "mrs {} {} {} {}",
        mr_to_str(&good.remote()),
        mr_to_str(&nowrite.remote()),
        mr_to_str(&noread.remote()),
        mr_to_str(&other.remote())
    ))?;
    let cq_b = ctx.create_cq(32)?;
    let (qp_b, _) = accept_qp(&l, &pd, &qp_attr(&cq_b, &cq_b, 16), t)?;
    c.ok("server: bystander QP established", true);
    let intact = || {
        mismatch(&good.as_slice()[HALF..], SEED_GOOD, HALF).is_none()
            && mismatch(nowrite.as_slice(), SEED_NOWRITE, 0).is_none()
            && mismatch(noread.as_slice(), SEED_NOREAD, 0).is_none()
            && mismatch(other.as_slice(), SEED_OTHER, 0).is_none()
    };
    loop {
        let m = ctl.recv()?;
        match m.first().map(String::as_str) {
            Some("victim") => {
                let i: usize = m.get(1).ok_or("victim: no index")?.parse()?;
                let case = CASES.get(i).ok_or("victim: bad index")?;
                let cq = ctx.create_cq(16)?;
                let (qp, _) = accept_qp(&l, &pd, &qp_attr(&cq, &cq, 16), t)?;
                ctl.send("accepted")?;
                let before = c.failed;
                let n = case.name;
                target_side(c, n, &qp, case.term, t)?;
                c.ok(format!("{n}: target regions unchanged"), intact());
                c.eq(
                    format!("{n}: bystander QP still connected"),
                    qp_b.query()?.state,
                    QpState::Rts,
                );
                let verdict = if c.failed == before { "ok" } else { "fail" };
                ctl.send(format!("victim-done {verdict}"))?;
            }
            Some("verify") => {
                let seed: u64 = m.get(1).ok_or("verify: no seed")?.parse()?;
                let good_data = mismatch(&good.as_slice()[..HALF], seed, 0).is_none();
                c.ok(
                    format!("bystander: {HALF} bytes RDMA WRITTEN with pattern {seed} verified"),
                    good_data,
                );
                ctl.send(format!(
                    "verified {}",
                    if good_data { "ok" } else { "fail" }
                ))?;
            }
            Some("bye") => break,
            _ => return err(format!("unexpected control message {m:?}")),
        }
    }
    c.ok(
        "server: bystander QP disconnected in order",
        qp_b.wait_disconnected(Some(t))?,
    );
    Ok(())
}

/// The target's view of a failed victim QP.
fn target_side(c: &mut Checks, n: &str, qp: &QueuePair, term: u32, t: Duration) -> Res {
    match qp.wait_event(Some(t))? {
        Some(e) => {
            c.eq(format!("{n}: target QP event"), e.kind, EventKind::QpError);
            c.term(
                format!("{n}: target's QP_ERROR event carries the TERMINATE it sent"),
                e.term,
                term,
            );
        }
        None => {
            c.ok(format!("{n}: target QP event within {t:?}"), false);
        }
    }
    let a = qp.query()?;
    c.eq(format!("{n}: target QP state"), a.state, QpState::Error);
    c.term(format!("{n}: target QUERY_QP term"), a.term, term);
    Ok(())
}

struct Bystander {
    qp: QueuePair,
    w: Waiter,
    lbuf: MemoryRegion<'static>,
    rbuf: MemoryRegion<'static>,
}

impl Bystander {
    /// WRITE pattern `seed` into the first half of `good`, let the server
    /// verify it, READ it back and verify it.
    fn round(
        &mut self,
        c: &mut Checks,
        ctl: &mut Ctl,
        good: &RemoteMr,
        seed: u64,
        t: Duration,
    ) -> Res {
        fill(&mut self.lbuf.as_mut_slice()[..HALF], seed, 0);
        self.qp.post_send(&[
            SendWr::rdma_write(10, vec![self.lbuf.sge(0..HALF)?], good.at(0)).signaled(),
        ])?;
        self.w.wait_ok(10, t)?;
        // SAFETY: `rbuf` is read only after this READ's completion.
        let rd = unsafe { SendWr::rdma_read(11, vec![self.rbuf.sge(0..HALF)?], good.at(0)) };
        self.qp.post_send(&[rd.signaled()])?;
        self.w.wait_ok(11, t)?;
        // The READ completed after the WRITE was placed: the server may look.
        ctl.send(format!("verify {seed}"))?;
        let v = ctl.expect("verified")?;
        c.ok(
            format!(
                "bystander QP: {HALF} bytes written (server verified: {}), read back and verified (pattern {seed})",
                v.first().map(String::as_str).unwrap_or("?")
            ),
            v.first().map(String::as_str) == Some("ok")
                && mismatch(&self.rbuf.as_slice()[..HALF], seed, 0).is_none(),
        );
        c.eq(
            "bystander QP still connected",
            self.qp.query()?.state,
            QpState::Rts,
        );
        Ok(())
    }
}

fn client(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut ctl = env.ctl()?;
    let m = ctl.expect("mrs")?;
    if m.len() != 4 {
        return err(format!("mrs: {m:?}"));
    }
    let good = mr_from_str(&m[0])?;
    let nowrite = mr_from_str(&m[1])?;
    let noread = mr_from_str(&m[2])?;
    let other = mr_from_str(&m[3])?;
    let cq_b = ctx.create_cq(32)?;
    let mut by = Bystander {
        qp: connect_qp(&pd, &qp_attr(&cq_b, &cq_b, 16), env.rdma, Vec::new(), t)?,
        w: Waiter::new(cq_b.clone()),
        lbuf: pd.reg_buffer(MrBuffer::new(HALF)?, AccessFlags::LOCAL_WRITE)?,
        rbuf: pd.reg_buffer(MrBuffer::new(HALF)?, AccessFlags::LOCAL_WRITE)?,
    };
    by.round(c, &mut ctl, &good, 1, t)?;
    let mut src = pd.reg_buffer(MrBuffer::new(BAD_LEN)?, AccessFlags::LOCAL_WRITE)?;
    fill(src.as_mut_slice(), 0xBAD, 0);
    let sink = pd.reg_buffer(MrBuffer::new(BAD_LEN)?, AccessFlags::LOCAL_WRITE)?;
    for (i, case) in CASES.iter().enumerate() {
        let n = case.name;
        let remote = match case.target {
            Target::BadStag => srnic::RemoteAddr {
                addr: good.addr,
                rkey: (0xfff0 << 8) | (good.rkey & 0xff),
            },
            Target::GoodEnd => good.at(good.len - 32),
            Target::NoWrite => nowrite.at(0),
            Target::NoRead => noread.at(0),
            Target::OtherPd => other.at(0),
        };
        ctl.send(format!("victim {i}"))?;
        let cq = ctx.create_cq(16)?;
        let qp = connect_qp(&pd, &qp_attr(&cq, &cq, 16), env.rdma, Vec::new(), t)?;
        ctl.expect("accepted")?;
        let mut w = Waiter::new(cq.clone());
        let want = case.term | RECEIVED;
        match case.op {
            Op::Write => {
                // SAFETY: `sink` is not read (the READ is expected to fail).
                let follow = unsafe { SendWr::rdma_read(2, vec![sink.sge(..)?], good.at(0)) };
                qp.post_send(&[
                    SendWr::rdma_write(1, vec![src.sge(..)?], remote).signaled(),
                    follow.signaled(),
                ])?;
                let f = w.wait(2, t)?;
                c.ok(
                    format!(
                        "{n}: the READ posted after it completes with an error ({})",
                        f.status()
                    ),
                    matches!(f.status(), WcStatus::RemAccessErr | WcStatus::WrFlushErr),
                );
                c.term(
                    format!("{n}: that completion carries the received TERMINATE"),
                    f.0.term,
                    want,
                );
                let wr = w.wait(1, t)?;
                println!("info: {n}: the WRITE itself completed with {}", wr.status());
            }
            Op::Read => {
                // SAFETY: `sink` is not read (the READ is expected to fail).
                let rd = unsafe { SendWr::rdma_read(1, vec![sink.sge(..)?], remote) };
                qp.post_send(&[rd.signaled()])?;
                let f = w.wait(1, t)?;
                c.eq(
                    format!("{n}: READ completion status"),
                    f.status(),
                    WcStatus::RemAccessErr,
                );
                c.term(
                    format!("{n}: READ completion carries the received TERMINATE"),
                    f.0.term,
                    want,
                );
            }
        }
        match qp.wait_event(Some(t))? {
            Some(e) => {
                c.eq(
                    format!("{n}: initiator QP event"),
                    e.kind,
                    EventKind::QpError,
                );
                c.term(format!("{n}: initiator's QP_ERROR event"), e.term, want);
            }
            None => {
                c.ok(format!("{n}: initiator QP event within {t:?}"), false);
            }
        }
        let a = qp.query()?;
        c.eq(format!("{n}: initiator QP state"), a.state, QpState::Error);
        c.term(format!("{n}: initiator QUERY_QP term"), a.term, want);
        let v = ctl.expect("victim-done")?;
        c.eq(
            format!("{n}: the server's checks"),
            v.first().map(String::as_str),
            Some("ok"),
        );
        drop(qp);
        by.round(c, &mut ctl, &good, 100 + i as u64, t)?;
    }
    ctl.send("bye")?;
    by.qp.disconnect(false)?;
    c.ok(
        "client: bystander QP disconnected in order",
        by.qp.wait_disconnected(Some(t))?,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use srnic_proto::rdmap::{StagError, TermCode};

    fn word(t: TermCode) -> u32 {
        let (l, ty, code) = t.code();
        u32::from(l) << 12 | u32::from(ty) << 8 | u32::from(code)
    }

    /// The expected words are the protocol core's table.
    #[test]
    fn expected_codes_follow_the_term_code_table() {
        let tagged = |e| word(TermCode::tagged(e));
        let read = |e| word(TermCode::ReadSource(e));
        let want = [
            tagged(StagError::InvalidStag),
            read(StagError::InvalidStag),
            tagged(StagError::BaseBounds),
            read(StagError::BaseBounds),
            tagged(StagError::AccessRights),
            read(StagError::AccessRights),
            tagged(StagError::PdMismatch),
            read(StagError::PdMismatch),
        ];
        for (c, w) in CASES.iter().zip(want) {
            assert_eq!(c.term, w, "{}", c.name);
        }
    }
}
