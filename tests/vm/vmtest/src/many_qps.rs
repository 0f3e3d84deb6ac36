// SPDX-License-Identifier: GPL-2.0
//! `many-qps`: N connections between one client and one server process, all
//! transferring at once, everything verified, everything closed in order.
//!
//! The server registers one region per connection and hands them out over the
//! control connection; a connection names its index in the MPA private data.
//! Per round the client posts, on every QP before waiting for any, an RDMA
//! WRITE of that QP's pattern for the round into its region and a SEND
//! naming (QP, round); the server, on each receive, verifies the region (the
//! WRITE is placed before the SEND that follows it) and SENDs back an ACK with
//! its verdict. Then the client RDMA READs every region back, again all QPs at
//! once, and verifies it. Finally every QP is disconnected and both sides see
//! DISCONNECTED on each.

use crate::util::{
    err, fill, mismatch, mr_from_str, mr_to_str, params, qp_attr, reg_remote, Checks, Res, Waiter,
};
use crate::Env;
use srnic::{
    AccessFlags, Context, Listener, MemoryRegion, MrBuffer, QueuePair, RecvWr, RemoteMr, SendWr,
    WcOpcode, WorkCompletion,
};
use std::collections::HashMap;
use std::time::Duration;

const MAGIC: u32 = u32::from_le_bytes(*b"MQPS");
const MSG: usize = 16;
const WR_WRITE: u64 = 1;
const WR_SEND: u64 = 2;
const WR_READ: u64 = 3;
const WR_RECV: u64 = 0x10; // + slot

fn seed(i: u32, r: u32) -> u64 {
    (u64::from(i) << 32 | u64::from(r)) ^ 0x5151
}

fn wr(i: u32, kind: u64) -> u64 {
    u64::from(i) << 8 | kind
}

fn encode(i: u32, r: u32, ok: bool) -> [u8; MSG] {
    let mut b = [0u8; MSG];
    for (k, v) in [MAGIC, i, r, u32::from(!ok)].into_iter().enumerate() {
        b[k * 4..k * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    b
}

fn decode(b: &[u8]) -> Option<(u32, u32, bool)> {
    let w = |k: usize| u32::from_le_bytes(b[k * 4..k * 4 + 4].try_into().unwrap_or_default());
    (b.len() >= MSG && w(0) == MAGIC).then(|| (w(1), w(2), w(3) == 0))
}

/// One connection's objects.
struct Conn {
    qp: QueuePair,
    /// Server: the region the client writes and reads; client: the source.
    data: MemoryRegion<'static>,
    /// Client: where READs land.
    sink: Option<MemoryRegion<'static>>,
    /// Outgoing message.
    out: MemoryRegion<'static>,
    /// Two receive slots.
    inbox: MemoryRegion<'static>,
}

impl Conn {
    fn post_recv(&self, i: u32, slot: usize) -> Res {
        let sge = self.inbox.sge(slot * MSG..(slot + 1) * MSG)?;
        // SAFETY: a slot is read only after its receive completed, and reposted
        // only after that.
        let w = unsafe { RecvWr::new(wr(i, WR_RECV + slot as u64), vec![sge]) };
        self.qp.post_recv(&[w])?;
        Ok(())
    }

    fn send_msg(&mut self, i: u32, r: u32, ok: bool) -> Res {
        self.out.as_mut_slice().copy_from_slice(&encode(i, r, ok));
        self.qp
            .post_send(&[SendWr::send(wr(i, WR_SEND), vec![self.out.sge(..)?]).signaled()])?;
        Ok(())
    }
}

fn new_conn(
    pd: &srnic::ProtectionDomain,
    qp: QueuePair,
    size: usize,
    data_access: AccessFlags,
    sink: bool,
) -> Res<Conn> {
    Ok(Conn {
        qp,
        data: reg_remote(pd, size, data_access)?,
        sink: if sink {
            Some(pd.reg_buffer(MrBuffer::new(size)?, AccessFlags::LOCAL_WRITE)?)
        } else {
            None
        },
        out: pd.reg_buffer(MrBuffer::new(MSG)?, AccessFlags::LOCAL_WRITE)?,
        inbox: pd.reg_buffer(MrBuffer::new(2 * MSG)?, AccessFlags::LOCAL_WRITE)?,
    })
}

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks, qps: u32, rounds: u32, size: usize) -> Res {
    if qps == 0 || size == 0 || size > u32::MAX as usize {
        return err("--qps and --size must be positive (size below 4 GiB)");
    }
    if env.server {
        server(env, c, qps, rounds, size)
    } else {
        client(env, c, qps, rounds, size)
    }
}

/// The next completion; any error completion or a timeout ends the scenario.
fn next_ok(w: &mut Waiter, t: Duration) -> Res<WorkCompletion> {
    let wc = w.next(t)?.ok_or("no completion before the timeout")?;
    if !wc.is_success() {
        return err(format!(
            "QP {} work request {:#x} ({}) completed with {} (term {:#x})",
            wc.qp_handle(),
            wc.wr_id(),
            wc.opcode(),
            wc.status(),
            wc.0.term
        ));
    }
    Ok(wc)
}

fn server(env: &Env, c: &mut Checks, qps: u32, rounds: u32, size: usize) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(qps * 8)?;
    let l = Listener::new(&ctx, env.rdma, qps, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    let mut conns: Vec<Option<Conn>> = (0..qps).map(|_| None).collect();
    let mut by_handle = HashMap::new();
    let mut regions = Vec::new();
    for _ in 0..qps {
        let req = l
            .get_request(Some(t))?
            .ok_or("no connection request before the timeout")?;
        let i = req
            .private_data()
            .get(..4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
            .filter(|&i| i < qps)
            .ok_or("connection request without a valid index")?;
        if conns[i as usize].is_some() {
            return err(format!("two connections with index {i}"));
        }
        let qp = pd.create_qp(&qp_attr(&cq, &cq, 8))?;
        let conn = new_conn(&pd, qp, size, AccessFlags::ALL, false)?;
        conn.post_recv(i, 0)?;
        conn.post_recv(i, 1)?;
        req.start_accept(&conn.qp, &params(Vec::new()))?;
        conn.qp.wait_established(Some(t))?;
        by_handle.insert(conn.qp.handle(), i);
        conns[i as usize] = Some(conn);
    }
    let mut conns: Vec<Conn> = conns.into_iter().flatten().collect();
    c.eq("server: connections established", conns.len(), qps as usize);
    for conn in &conns {
        regions.push(mr_to_str(&conn.data.remote()));
    }
    ctl.send(format!("mrs {}", regions.join(" ")))?;

    let mut w = Waiter::new(cq.clone());
    let total = u64::from(qps) * u64::from(rounds);
    let (mut msgs, mut acks, mut bad) = (0u64, 0u64, 0u64);
    while msgs < total || acks < total {
        let wc = next_ok(&mut w, t)?;
        let i = *by_handle
            .get(&wc.qp_handle())
            .ok_or("completion of an unknown QP")?;
        let conn = &mut conns[i as usize];
        match wc.opcode() {
            WcOpcode::Recv => {
                let slot = (wc.wr_id() & 0xff).wrapping_sub(WR_RECV) as usize;
                if slot > 1 {
                    return err(format!("unexpected receive {:#x}", wc.wr_id()));
                }
                let m = decode(&conn.inbox.as_slice()[slot * MSG..(slot + 1) * MSG]);
                conn.post_recv(i, slot)?;
                let ok = match m {
                    Some((mi, r, _)) if mi == i => {
                        mismatch(conn.data.as_slice(), seed(i, r), 0).is_none()
                    }
                    _ => false,
                };
                if !ok {
                    println!("FAIL: QP {i}: message {m:?}: region does not verify");
                    bad += 1;
                }
                conn.send_msg(i, m.map(|m| m.1).unwrap_or(u32::MAX), ok)?;
                msgs += 1;
            }
            WcOpcode::Send => acks += 1,
            o => return err(format!("unexpected completion {o}")),
        }
    }
    c.ok(
        format!("server: {total} messages, the region written before each verified"),
        bad == 0,
    );
    let mut closed = 0;
    for conn in &conns {
        if conn.qp.wait_disconnected(Some(t))? {
            closed += 1;
        }
    }
    c.eq("server: QPs disconnected in order", closed, qps);
    ctl.send("bye")?;
    Ok(())
}

fn client(env: &Env, c: &mut Checks, qps: u32, rounds: u32, size: usize) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(qps * 8)?;
    let mut ctl = env.ctl()?;
    let mut conns = Vec::new();
    for i in 0..qps {
        let qp = pd.create_qp(&qp_attr(&cq, &cq, 8))?;
        let conn = new_conn(&pd, qp, size, AccessFlags::LOCAL_WRITE, true)?;
        conn.post_recv(i, 0)?;
        conn.post_recv(i, 1)?;
        conn.qp
            .start_connect(env.rdma, &params(i.to_le_bytes().to_vec()))?;
        conn.qp.wait_established(Some(t))?;
        conns.push(conn);
    }
    c.eq("client: connections established", conns.len(), qps as usize);
    let m = ctl.expect("mrs")?;
    let remote: Vec<RemoteMr> = m.iter().map(|s| mr_from_str(s)).collect::<Res<_>>()?;
    if remote.len() != qps as usize || remote.iter().any(|r| r.len < size as u64) {
        return err(format!("{} regions from the server", remote.len()));
    }
    let handles: HashMap<u32, u32> = conns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.qp.handle(), i as u32))
        .collect();
    let mut w = Waiter::new(cq.clone());
    for r in 0..rounds {
        for (i, conn) in conns.iter_mut().enumerate() {
            let i = i as u32;
            fill(conn.data.as_mut_slice(), seed(i, r), 0);
            conn.out.as_mut_slice().copy_from_slice(&encode(i, r, true));
            conn.qp.post_send(&[
                SendWr::rdma_write(
                    wr(i, WR_WRITE),
                    vec![conn.data.sge(..)?],
                    remote[i as usize].at(0),
                )
                .signaled(),
                SendWr::send(wr(i, WR_SEND), vec![conn.out.sge(..)?]).signaled(),
            ])?;
        }
        // WRITE, SEND and the ACK's receive of every QP.
        let (mut done, mut nacks) = (0u32, 0u32);
        while done < 3 * qps {
            let wc = next_ok(&mut w, t)?;
            let i = *handles.get(&wc.qp_handle()).ok_or("unknown QP")?;
            let conn = &conns[i as usize];
            if wc.opcode() == WcOpcode::Recv {
                let slot = (wc.wr_id() & 0xff).wrapping_sub(WR_RECV) as usize;
                if slot > 1 {
                    return err(format!("unexpected receive {:#x}", wc.wr_id()));
                }
                let m = decode(&conn.inbox.as_slice()[slot * MSG..(slot + 1) * MSG]);
                conn.post_recv(i, slot)?;
                if m == Some((i, r, true)) {
                    nacks += 1;
                } else {
                    println!("FAIL: QP {i} round {r}: the server answered {m:?}");
                }
            }
            done += 1;
        }
        c.eq(
            format!("round {r}: {qps} QPs WRITE {size} bytes + SEND at once, server verified"),
            nacks,
            qps,
        );
        for (i, conn) in conns.iter().enumerate() {
            let sink = conn.sink.as_ref().ok_or("no sink")?;
            // SAFETY: the sink is read only after this READ completed.
            let rd = unsafe {
                SendWr::rdma_read(wr(i as u32, WR_READ), vec![sink.sge(..)?], remote[i].at(0))
            };
            conn.qp.post_send(&[rd.signaled()])?;
        }
        let mut good = 0;
        for _ in 0..qps {
            let wc = next_ok(&mut w, t)?;
            let i = *handles.get(&wc.qp_handle()).ok_or("unknown QP")?;
            let sink = conns[i as usize].sink.as_ref().ok_or("no sink")?;
            if wc.opcode() == WcOpcode::RdmaRead
                && mismatch(sink.as_slice(), seed(i, r), 0).is_none()
            {
                good += 1;
            } else {
                println!(
                    "FAIL: QP {i} round {r}: READ back ({}) does not verify",
                    wc.opcode()
                );
            }
        }
        c.eq(
            format!("round {r}: {qps} QPs READ {size} bytes back at once, verified"),
            good,
            qps,
        );
    }
    for conn in &conns {
        conn.qp.disconnect(false)?;
    }
    let mut closed = 0;
    for conn in &conns {
        if conn.qp.wait_disconnected(Some(t))? {
            closed += 1;
        }
    }
    c.eq("client: QPs disconnected in order", closed, qps);
    ctl.expect("bye")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        assert_eq!(decode(&encode(63, 3, true)), Some((63, 3, true)));
        assert_eq!(decode(&encode(1, 2, false)), Some((1, 2, false)));
        assert_eq!(decode(&[0u8; MSG]), None);
        assert_ne!(seed(1, 2), seed(2, 1));
    }
}
