// SPDX-License-Identifier: GPL-2.0
//! `srnic xfer`: verified transfers with RDMA WRITE, RDMA READ or SEND.
//!
//! The client is the active side and passes op, size, SGE count and iterations
//! in the connection's private data; the server needs only the port. Per
//! iteration `i` (control messages are small SENDs):
//!
//! 1. the server prepares its buffer (WRITE: nothing; READ: fills pattern `i`;
//!    SEND: posts a receive over it, split into the SGEs) and sends READY(i)
//!    with the buffer's address, length and rkey;
//! 2. the client acts: WRITE fills pattern `i`, RDMA WRITEs it and sends DONE(i);
//!    SEND fills pattern `i` and SENDs it; READ poisons its buffer, RDMA READs
//!    the server's, verifies it and sends DONE(i, verdict);
//! 3. the server verifies (WRITE after DONE(i), SEND on the receive's
//!    completion; READ takes the client's verdict) and sends ACK(i, verdict);
//! 4. the client waits for ACK(i).
//!
//! Both sides print one line with bytes, time and MB/s and exit 0 only if
//! every iteration verified (3 on a mismatch, 1 on any other failure).

use crate::dial::connect_host;
use crate::output::{mb_per_s, Output, Report};
use crate::session::{listen, next_request, NetOpts, Session, Side};
use crate::util::{fill_pattern, fill_poison, verify_pattern, CmdResult, Fail};
use serde::Serialize;
use srnic::{
    AccessFlags, ConnectRequest, Context, MemoryRegion, MrBuffer, RecvWr, RemoteMr, SendWr,
};
use std::io::{self, Write};
use std::time::{Duration, Instant};

const MAGIC: u32 = u32::from_le_bytes(*b"SRXF");
const VERSION: u32 = 1;

/// The operation under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Op {
    /// RDMA WRITE from the client into the server's buffer.
    Write,
    /// RDMA READ by the client from the server's buffer.
    Read,
    /// SEND from the client into a receive posted by the server.
    Send,
    /// SEND with Invalidate: the server checks that the STag it advertised for
    /// the iteration was invalidated.
    SendInv,
    /// SEND with Solicited Event: the server checks the solicited flag.
    SendSe,
    /// SEND with Solicited Event and Invalidate: both checks.
    SendSeInv,
}

impl Op {
    fn to_u32(self) -> u32 {
        match self {
            Op::Write => 0,
            Op::Read => 1,
            Op::Send => 2,
            Op::SendInv => 3,
            Op::SendSe => 4,
            Op::SendSeInv => 5,
        }
    }

    fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Op::Write),
            1 => Some(Op::Read),
            2 => Some(Op::Send),
            3 => Some(Op::SendInv),
            4 => Some(Op::SendSe),
            5 => Some(Op::SendSeInv),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Read => "read",
            Op::Send => "send",
            Op::SendInv => "send-inv",
            Op::SendSe => "send-se",
            Op::SendSeInv => "send-se-inv",
        }
    }

    /// A SEND variant (data lands in a posted receive).
    fn is_send(self) -> bool {
        matches!(self, Op::Send | Op::SendInv | Op::SendSe | Op::SendSeInv)
    }

    /// Invalidates a server STag.
    fn invalidates(self) -> bool {
        matches!(self, Op::SendInv | Op::SendSeInv)
    }

    /// Carries the Solicited Event flag.
    fn solicited(self) -> bool {
        matches!(self, Op::SendSe | Op::SendSeInv)
    }
}

/// JSON: the name `--op` takes (`"send-se-inv"`).
impl Serialize for Op {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// What the client tells the server in the private data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XferParams {
    pub op: Op,
    pub size: u64,
    pub sge: u32,
    pub iters: u64,
}

impl XferParams {
    /// magic, version, op, sge (u32 each), size, iters (u64 each); little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(32);
        for v in [MAGIC, VERSION, self.op.to_u32(), self.sge] {
            b.extend(v.to_le_bytes());
        }
        b.extend(self.size.to_le_bytes());
        b.extend(self.iters.to_le_bytes());
        b
    }

    /// Decodes [`Self::encode`].
    pub fn decode(b: &[u8]) -> Option<Self> {
        if b.len() < 32 {
            return None;
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or_default());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        if u32_at(0) != MAGIC || u32_at(4) != VERSION {
            return None;
        }
        Some(Self {
            op: Op::from_u32(u32_at(8))?,
            sge: u32_at(12),
            size: u64_at(16),
            iters: u64_at(24),
        })
    }
}

/// Control message kinds.
const READY: u32 = 1;
const DONE: u32 = 2;
const ACK: u32 = 3;

/// A control message: kind, iteration, verdict (0 good), and for READY the
/// server buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ctrl {
    pub kind: u32,
    pub iter: u64,
    pub ok: bool,
    pub mr: RemoteMr,
}

impl Ctrl {
    /// Encoded size.
    pub const LEN: usize = 40;

    /// magic, kind (u32), iter (u64), verdict (u32, 0 good), then RemoteMr's 20 bytes.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.kind.to_le_bytes());
        b[8..16].copy_from_slice(&self.iter.to_le_bytes());
        b[16..20].copy_from_slice(&u32::from(!self.ok).to_le_bytes());
        b[20..40].copy_from_slice(&self.mr.to_bytes());
        b
    }

    /// Decodes [`Self::encode`].
    pub fn decode(b: &[u8]) -> Option<Self> {
        if b.len() < Self::LEN || b[0..4] != MAGIC.to_le_bytes() {
            return None;
        }
        Some(Self {
            kind: u32::from_le_bytes(b[4..8].try_into().ok()?),
            iter: u64::from_le_bytes(b[8..16].try_into().ok()?),
            ok: u32::from_le_bytes(b[16..20].try_into().ok()?) == 0,
            mr: RemoteMr::from_bytes(&b[20..40])?,
        })
    }
}

/// Control receive slots on the client (ACK(i) and READY(i+1) may both be in
/// flight).
const CTRL_SLOTS: usize = 4;
const WR_CTRL_SEND: u64 = 0x100;
const WR_CTRL_RECV: u64 = 0x200; // + slot
const WR_DATA: u64 = 0x300;
const WR_DATA_RECV: u64 = 0x400;

struct Ctl {
    send: MemoryRegion<'static>,
    recv: MemoryRegion<'static>,
}

impl Ctl {
    fn new(s: &Session) -> CmdResult<Self> {
        Ok(Self {
            send: s
                .pd
                .reg_buffer(MrBuffer::new(Ctrl::LEN)?, AccessFlags::LOCAL_WRITE)?,
            recv: s.pd.reg_buffer(
                MrBuffer::new(Ctrl::LEN * CTRL_SLOTS)?,
                AccessFlags::LOCAL_WRITE,
            )?,
        })
    }

    fn post_recv(&self, s: &Session, slot: usize) -> CmdResult {
        let r = slot * Ctrl::LEN..(slot + 1) * Ctrl::LEN;
        // SAFETY: a slot is read only after its receive completed (recv()),
        // and reposted only after that.
        let wr = unsafe { RecvWr::new(WR_CTRL_RECV + slot as u64, vec![self.recv.sge(r)?]) };
        s.qp.post_recv(&[wr])?;
        Ok(())
    }

    fn send(&mut self, s: &mut Session, c: Ctrl) -> CmdResult {
        self.send.as_mut_slice().copy_from_slice(&c.encode());
        s.qp.post_send(&[SendWr::send(WR_CTRL_SEND, vec![self.send.sge(..)?]).signaled()])?;
        s.wait_wr(WR_CTRL_SEND)?;
        Ok(())
    }

    /// Waits for the control message in `slot`, checks its kind and iteration,
    /// and reposts the slot when `repost`.
    fn recv(
        &self,
        s: &mut Session,
        slot: usize,
        kind: u32,
        iter: u64,
        repost: bool,
    ) -> CmdResult<Ctrl> {
        s.wait_wr(WR_CTRL_RECV + slot as u64)?;
        let r = slot * Ctrl::LEN..(slot + 1) * Ctrl::LEN;
        let c = Ctrl::decode(&self.recv.as_slice()[r])
            .ok_or_else(|| Fail::Error("malformed control message".into()))?;
        if c.kind != kind || c.iter != iter {
            return Err(Fail::Error(format!(
                "protocol: got message kind {} for iteration {}, want kind {kind} for {iter}",
                c.kind, c.iter
            )));
        }
        if repost {
            self.post_recv(s, slot)?;
        }
        Ok(c)
    }
}

/// What each side prints after a client's transfers, all verified. JSON:
/// `side`, `op` (as `--op` names it), `size`, `sge`, `iters`, `bytes` (size
/// times iters), `time_s`, `rate_mb_s` (10^6 bytes per second), `verified`
/// (true).
#[derive(Clone, Debug, Serialize)]
pub struct XferReport {
    pub side: Side,
    pub op: Op,
    pub size: u64,
    pub sge: u32,
    pub iters: u64,
    pub bytes: u64,
    pub time_s: f64,
    pub rate_mb_s: f64,
    pub verified: bool,
}

impl XferReport {
    /// The report of `p`'s transfers, verified, that took `elapsed`.
    pub fn new(p: &XferParams, side: Side, elapsed: Duration) -> Self {
        let bytes = p.size.saturating_mul(p.iters);
        let time_s = elapsed.as_secs_f64();
        Self {
            side,
            op: p.op,
            size: p.size,
            sge: p.sge,
            iters: p.iters,
            bytes,
            time_s,
            rate_mb_s: mb_per_s(bytes as f64, time_s),
            verified: true,
        }
    }
}

impl Report for XferReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "xfer: {} op={} size={} sge={} iters={} bytes={} time={:.6} s rate={:.2} MB/s verified",
            self.side,
            self.op.name(),
            self.size,
            self.sge,
            self.iters,
            self.bytes,
            self.time_s,
            self.rate_mb_s
        )
    }
}

fn data_mr(s: &Session, size: usize, access: AccessFlags) -> CmdResult<MemoryRegion<'static>> {
    let buf = MrBuffer::new(size.max(1))?;
    // SAFETY: remote writes (the server's buffer under --op write) happen only
    // between READY(i) and DONE(i); the server touches the buffer only after
    // DONE(i) arrives and before it sends READY(i+1).
    Ok(unsafe { s.pd.reg_buffer_unchecked(buf, access) }?)
}

/// The server side: serves `count` clients, one after the other, on one
/// listener, and prints a report for each (JSON: one object per line); fails
/// on the first one that fails.
pub fn server(ctx: &Context, opts: &NetOpts, count: u64, out: &Output) -> CmdResult {
    let l = listen(ctx, opts)?;
    for _ in 0..count.max(1) {
        out.emit(&serve_one(ctx, opts, next_request(&l, opts)?)?)?;
    }
    Ok(())
}

/// Serves one client.
fn serve_one(ctx: &Context, opts: &NetOpts, req: ConnectRequest) -> CmdResult<XferReport> {
    let p = XferParams::decode(req.private_data())
        .ok_or_else(|| Fail::Error("connection request is not from srnic xfer".into()))?;
    let size = usize::try_from(p.size).map_err(|_| Fail::Error("size too large".into()))?;
    let mut s = Session::new(ctx, p.sge.max(1), 8, opts.timeout)?;
    let access = match p.op {
        Op::Write => AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        Op::Read => AccessFlags::REMOTE_READ,
        _ => AccessFlags::LOCAL_WRITE,
    };
    let mut data = data_mr(&s, size, access)?;
    // For the invalidating SENDs: a region per iteration whose STag the client's
    // SEND invalidates.
    let mut _victim: Option<MemoryRegion<'static>> = None;
    let mut ctl = Ctl::new(&s)?;
    req.start_accept(&s.qp, &opts.params(ctx, Vec::new()))?;
    let info = s.qp.wait_established(Some(opts.timeout))?;
    eprintln!(
        "srnic: xfer from {}: op={} size={size} sge={} iters={} mpa={}",
        info.remote.map(|a| a.to_string()).unwrap_or_default(),
        p.op.name(),
        p.sge,
        p.iters,
        info.mpa_flags
    );
    let mut remote = data.remote();
    remote.len = p.size;
    let mut failure = None;
    let t0 = Instant::now();
    for i in 0..p.iters {
        match p.op {
            Op::Write => ctl.post_recv(&s, 0)?,
            Op::Read => {
                fill_pattern(&mut data.as_mut_slice()[..size], i);
                ctl.post_recv(&s, 0)?;
            }
            _ => {
                fill_poison(&mut data.as_mut_slice()[..size], i);
                let sges = data.sges(0..size, p.sge as usize)?;
                // SAFETY: the buffer is read only after this receive completes.
                let wr = unsafe { RecvWr::new(WR_DATA_RECV, sges) };
                s.qp.post_recv(&[wr])?;
            }
        }
        let advertised = if p.op.invalidates() {
            let v = data_mr(
                &s,
                4096,
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            )?;
            let r = v.remote();
            // Held until the next iteration replaces (deregisters) it.
            _victim = Some(v);
            r
        } else {
            remote
        };
        ctl.send(
            &mut s,
            Ctrl {
                kind: READY,
                iter: i,
                ok: true,
                mr: advertised,
            },
        )?;
        let verdict = match p.op {
            Op::Write => {
                ctl.recv(&mut s, 0, DONE, i, false)?;
                verify_pattern(&data.as_slice()[..size], i)
            }
            op @ (Op::Send | Op::SendInv | Op::SendSe | Op::SendSeInv) => {
                let wc = s.wait_wr(WR_DATA_RECV)?;
                let want_inv = if op.invalidates() {
                    Some(advertised.rkey)
                } else {
                    None
                };
                if wc.byte_len() as usize != size {
                    Err(format!(
                        "iteration {i}: {} bytes received, want {size}",
                        wc.byte_len()
                    ))
                } else if wc.invalidated_rkey() != want_inv {
                    Err(format!(
                        "iteration {i}: invalidated STag {:?}, want {want_inv:?}",
                        wc.invalidated_rkey()
                    ))
                } else if wc.is_solicited() != op.solicited() {
                    Err(format!(
                        "iteration {i}: solicited flag {}, want {}",
                        wc.is_solicited(),
                        op.solicited()
                    ))
                } else {
                    verify_pattern(&data.as_slice()[..size], i)
                }
            }
            Op::Read => {
                let c = ctl.recv(&mut s, 0, DONE, i, false)?;
                if c.ok {
                    Ok(())
                } else {
                    Err(format!("iteration {i}: the client's READ did not verify"))
                }
            }
        };
        let ok = verdict.is_ok();
        ctl.send(
            &mut s,
            Ctrl {
                kind: ACK,
                iter: i,
                ok,
                mr: Default::default(),
            },
        )?;
        if let Err(e) = verdict {
            failure = Some(e);
            break;
        }
    }
    let elapsed = t0.elapsed();
    s.close(false)?;
    if let Some(e) = failure {
        return Err(Fail::Mismatch(e));
    }
    Ok(XferReport::new(&p, Side::Server, elapsed))
}

/// The client side: tries each address of `host` in turn.
pub fn client(ctx: &Context, host: &str, opts: &NetOpts, p: XferParams, out: &Output) -> CmdResult {
    let size = usize::try_from(p.size).map_err(|_| Fail::Error("size too large".into()))?;
    let (addr, (mut s, mut data, mut ctl, info)) = connect_host(host, opts.port, |addr| {
        let s = Session::new(ctx, p.sge.max(1), 8, opts.timeout)?;
        let data =
            s.pd.reg_buffer(MrBuffer::new(size.max(1))?, AccessFlags::LOCAL_WRITE)?;
        let ctl = Ctl::new(&s)?;
        for slot in 0..CTRL_SLOTS {
            ctl.post_recv(&s, slot)?;
        }
        s.qp.start_connect(addr, &opts.params(ctx, p.encode()))?;
        let info = s.qp.wait_established(Some(opts.timeout))?;
        Ok((s, data, ctl, info))
    })?;
    eprintln!("srnic: connected to {addr}, mpa={}", info.mpa_flags);
    let mut slot = 0;
    let mut next_slot = || {
        let s = slot;
        slot = (slot + 1) % CTRL_SLOTS;
        s
    };
    let mut failure = None;
    let t0 = Instant::now();
    for i in 0..p.iters {
        let ready = ctl.recv(&mut s, next_slot(), READY, i, true)?;
        if !p.op.invalidates() && ready.mr.len < p.size {
            return Err(Fail::Error(format!(
                "the server's buffer has {} bytes, want {}",
                ready.mr.len, p.size
            )));
        }
        let mut done_ok = true;
        match p.op {
            Op::Write => {
                fill_pattern(&mut data.as_mut_slice()[..size], i);
                let sges = data.sges(0..size, p.sge as usize)?;
                s.qp.post_send(&[SendWr::rdma_write(WR_DATA, sges, ready.mr.at(0)).signaled()])?;
                s.wait_wr(WR_DATA)?;
            }
            op @ (Op::Send | Op::SendInv | Op::SendSe | Op::SendSeInv) => {
                fill_pattern(&mut data.as_mut_slice()[..size], i);
                let sges = data.sges(0..size, p.sge as usize)?;
                let wr = match op {
                    Op::SendInv => SendWr::send_with_inv(WR_DATA, sges, ready.mr.rkey),
                    Op::SendSe => SendWr::send_with_se(WR_DATA, sges),
                    Op::SendSeInv => SendWr::send_with_se_inv(WR_DATA, sges, ready.mr.rkey),
                    _ => SendWr::send(WR_DATA, sges),
                };
                s.qp.post_send(&[wr.signaled()])?;
                s.wait_wr(WR_DATA)?;
            }
            Op::Read => {
                fill_poison(&mut data.as_mut_slice()[..size], i);
                let sges = data.sges(0..size, p.sge as usize)?;
                // SAFETY: the buffer is read only after this READ completes.
                let wr = unsafe { SendWr::rdma_read(WR_DATA, sges, ready.mr.at(0)) }.signaled();
                s.qp.post_send(&[wr])?;
                let wc = s.wait_wr(WR_DATA)?;
                let v = if wc.byte_len() as usize != size && wc.byte_len() != 0 {
                    Err(format!(
                        "iteration {i}: READ completed with {} bytes, want {size}",
                        wc.byte_len()
                    ))
                } else {
                    verify_pattern(&data.as_slice()[..size], i)
                };
                if let Err(e) = v {
                    done_ok = false;
                    failure = Some(e);
                }
            }
        }
        if !p.op.is_send() {
            ctl.send(
                &mut s,
                Ctrl {
                    kind: DONE,
                    iter: i,
                    ok: done_ok,
                    mr: Default::default(),
                },
            )?;
        }
        let ack = ctl.recv(&mut s, next_slot(), ACK, i, true)?;
        if failure.is_some() {
            break;
        }
        if !ack.ok {
            failure = Some(format!("iteration {i}: the server's data did not verify"));
            break;
        }
    }
    let elapsed = t0.elapsed();
    s.close(true)?;
    if let Some(e) = failure {
        return Err(Fail::Mismatch(e));
    }
    out.emit(&XferReport::new(&p, Side::Client, elapsed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};

    #[test]
    fn params_round_trip() {
        for op in [Op::Write, Op::Read, Op::Send] {
            let p = XferParams {
                op,
                size: 16 << 20,
                sge: 4,
                iters: 1000,
            };
            let b = p.encode();
            assert_eq!(b.len(), 32);
            assert!(b.len() <= srnic::uapi::SRNIC_MAX_PRIVATE_DATA as usize);
            assert_eq!(XferParams::decode(&b), Some(p));
        }
        let mut b = XferParams {
            op: Op::Read,
            size: 1,
            sge: 1,
            iters: 1,
        }
        .encode();
        b[8] = 9;
        assert_eq!(XferParams::decode(&b), None);
        assert_eq!(XferParams::decode(&b[..31]), None);
    }

    #[test]
    fn ctrl_round_trip() {
        let c = Ctrl {
            kind: READY,
            iter: 77,
            ok: false,
            mr: RemoteMr {
                addr: 0x7f00_0000_1000,
                len: 4096,
                rkey: 0x1234,
            },
        };
        assert_eq!(Ctrl::decode(&c.encode()), Some(c));
        assert_eq!(Ctrl::decode(&[0u8; Ctrl::LEN]), None);
    }

    #[test]
    fn report_text_and_json() {
        let p = XferParams {
            op: Op::Write,
            size: 1_000_000,
            sge: 2,
            iters: 10,
        };
        let r = XferReport::new(&p, Side::Client, Duration::from_secs(2));
        assert_eq!(
            render(Format::Text, &r),
            "xfer: client op=write size=1000000 sge=2 iters=10 bytes=10000000 time=2.000000 s rate=5.00 MB/s verified\n"
        );
        let v = json(&r);
        assert_eq!(v["side"], "client");
        assert_eq!(v["op"], "write");
        assert_eq!(v["size"], 1_000_000);
        assert_eq!(v["sge"], 2);
        assert_eq!(v["iters"], 10);
        assert_eq!(v["bytes"], 10_000_000);
        assert_eq!(v["time_s"], 2.0);
        assert_eq!(v["rate_mb_s"], 5.0);
        assert_eq!(v["verified"], true);
        let z = XferParams { size: 0, ..p };
        let r = XferReport::new(&z, Side::Server, Duration::ZERO);
        assert!(render(Format::Text, &r).contains("bytes=0 "));
        assert_eq!(json(&r)["rate_mb_s"], 0.0);
        assert_eq!(json(&r)["side"], "server");
    }

    #[test]
    fn op_names_are_the_options() {
        use clap::ValueEnum;
        for op in Op::value_variants() {
            let name = op.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(op.name(), name);
            assert_eq!(serde_json::to_value(op).unwrap(), name.as_str());
        }
    }
}
