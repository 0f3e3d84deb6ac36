// SPDX-License-Identifier: GPL-2.0
//! `srnic vmtp`: VMTP message transactions (RFC 1045) between a server that
//! echoes Requests or serves reads, and a client that does verified
//! ping-pong or a bulk read.
//!
//! Request codes (the application's, from `SRNIC_VMTP_APPLICATION_CODE`):
//! [`ECHO`] answers with the Request's bytes; [`READ`] carries an offset
//! and a length (little-endian u64, u32) and is answered with that many
//! bytes of the test pattern at that offset, so a read of any size is a run
//! of transactions of at most one packet group each. An echo Request starts
//! with the client's sequence number (little-endian u64, when it has 8
//! bytes), followed by the test pattern of that sequence: the server checks
//! that each of its clients' numbered Requests arrives at most once and in
//! order, and the client that each transaction completes once, so each
//! Request is delivered exactly once.

use crate::output::{mb_per_s, Output, Report};
use crate::util::{fill_pattern, pattern_byte, verify_pattern, CmdResult, Fail};
use clap::{Args, Subcommand};
use serde::Serialize;
use srnic::{
    uapi as abi, AccessFlags, CompletionQueue, Context, MemoryRegion, MrBuffer, ProtectionDomain,
    VmtpEntity, VmtpEntityAttr, VmtpEntityId, VmtpRole, WcOpcode, WcStatus, WorkCompletion,
};
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// Echo the Request's bytes.
pub const ECHO: u32 = abi::SRNIC_VMTP_APPLICATION_CODE | 1;
/// Answer with the test pattern of the range the Request names.
pub const READ: u32 = abi::SRNIC_VMTP_APPLICATION_CODE | 2;
/// The server refused a Request it does not know.
pub const UNKNOWN: u32 = abi::SRNIC_VMTP_APPLICATION_CODE | 0xff;

/// Largest Request or Response.
const MAX: usize = abi::SRNIC_VMTP_MAX_SEGMENT as usize;

/// Pattern iteration of byte offsets of a read: the pattern of iteration
/// `READ_ITER` shifted by the offset.
const READ_ITER: u64 = 0x5654_4d50;

/// The options every VMTP command takes.
#[derive(Args, Clone, Debug)]
pub struct EntityOpts {
    /// The local IPv4 address of the entity.
    #[arg(short = 'a', long)]
    addr: Ipv4Addr,
    /// Seconds a wait may go without progress (no VMTP packet sent or
    /// received by this host) before it fails.
    #[arg(short = 't', long, default_value_t = 60)]
    timeout: u64,
    /// Milliseconds to wait for an answer before retransmitting (default:
    /// the module's).
    #[arg(long, default_value_t = 0)]
    response_timeout_ms: u32,
    /// Retransmissions before a transaction fails (default: the module's).
    #[arg(long, default_value_t = 0)]
    max_retries: u32,
    /// Gap between the packets of a group, microseconds (rate control).
    #[arg(long, default_value_t = 0)]
    gap_us: u32,
    /// Send without checksums.
    #[arg(long)]
    no_checksum: bool,
}

/// `srnic vmtp` subcommands.
#[derive(Subcommand, Debug)]
pub enum VmtpCmd {
    /// Serve echo and read Requests, checking that each client's numbered
    /// echo Requests arrive at most once and in order.
    Serve {
        #[command(flatten)]
        e: EntityOpts,
        /// The server's discriminator (its entity is ADDR:DISCRIMINATOR).
        #[arg(short = 'D', long)]
        discriminator: u32,
        /// Stop after this many Requests (0: serve until killed).
        #[arg(short = 'C', long, default_value_t = 0)]
        count: u64,
        /// Request buffers kept posted.
        #[arg(short = 'w', long, default_value_t = 8)]
        window: usize,
    },
    /// Echo ping-pong with a server: verified, with round-trip times.
    Ping {
        #[command(flatten)]
        e: EntityOpts,
        /// The server, ADDR:DISCRIMINATOR.
        #[arg(short = 's', long)]
        server: VmtpEntityId,
        /// Transactions.
        #[arg(short = 'C', long, default_value_t = 10)]
        count: u64,
        /// Bytes per Request (and Response), up to 16K; several sizes,
        /// comma-separated, are used in turn.
        #[arg(short = 'S', long, default_value = "64", value_parser = sizes)]
        size: Sizes,
    },
    /// Read SIZE bytes from a server in transactions of at most CHUNK bytes,
    /// verified; reports the rate.
    Read {
        #[command(flatten)]
        e: EntityOpts,
        /// The server, ADDR:DISCRIMINATOR.
        #[arg(short = 's', long)]
        server: VmtpEntityId,
        /// Bytes to read (K, M suffixes).
        #[arg(short = 'S', long, default_value = "1M", value_parser = crate::util::parse_size)]
        size: usize,
        /// Bytes per transaction (at most 16K).
        #[arg(long, default_value = "16K", value_parser = chunk)]
        chunk: usize,
    },
}

/// A comma-separated list of message sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(Vec<usize>);

fn sizes(s: &str) -> Result<Sizes, String> {
    let v = s
        .split(',')
        .map(crate::util::parse_size)
        .collect::<Result<Vec<_>, _>>()?;
    if v.is_empty() || v.iter().any(|&n| n > MAX) {
        return Err(format!("sizes must be at most {MAX} bytes: {s:?}"));
    }
    Ok(Sizes(v))
}

fn chunk(s: &str) -> Result<usize, String> {
    match crate::util::parse_size(s)? {
        n if (1..=MAX).contains(&n) => Ok(n),
        _ => Err(format!("the chunk must be 1 to {MAX} bytes")),
    }
}

struct Entity {
    e: VmtpEntity,
    cq: CompletionQueue,
    pd: ProtectionDomain,
    ctx: Context,
    stall: Duration,
}

fn open(
    ctx: &Context,
    o: &EntityOpts,
    role: VmtpRole,
    discriminator: u32,
    max_recv: u32,
) -> CmdResult<Entity> {
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(1024)?;
    let attr = VmtpEntityAttr {
        role,
        addr: o.addr,
        discriminator,
        no_checksum: o.no_checksum,
        max_recv,
        response_timeout_ms: o.response_timeout_ms,
        max_retries: o.max_retries,
        packet_gap_us: o.gap_us,
        ..Default::default()
    };
    let e = VmtpEntity::new(&pd, &cq, &attr)?;
    Ok(Entity {
        e,
        cq,
        pd,
        ctx: ctx.clone(),
        stall: Duration::from_secs(o.timeout),
    })
}

/// VMTP packets sent and accepted by this host so far (module-wide).
fn progress(ctx: &Context) -> srnic::Result<u64> {
    Ok(ctx
        .vmtp_stats()?
        .iter()
        .filter(|(n, _)| matches!(*n, "vmtp_tx_packets" | "vmtp_rx_packets"))
        .map(|(_, v)| *v)
        .sum())
}

impl Entity {
    /// A registered region of `len` bytes: the module holds it through its
    /// key instead of pinning the buffer at every call (as perftest does).
    fn region(&self, len: usize) -> CmdResult<MemoryRegion<'static>> {
        Ok(self
            .pd
            .reg_buffer(MrBuffer::new(len.max(1))?, AccessFlags::LOCAL_WRITE)?)
    }

    /// Waits for one completion; fails when VMTP makes no progress on this
    /// host for the stall time.
    fn wait(&self, what: &str) -> CmdResult<WorkCompletion> {
        let mut wc = [WorkCompletion::default(); 1];
        let n = self
            .cq
            .wait_progress(&mut wc, self.stall, || progress(&self.ctx))?;
        if n == 0 {
            return Err(Fail::Error(format!(
                "no {what}: no VMTP packet sent or received for {:?}",
                self.stall
            )));
        }
        Ok(wc[0])
    }

    /// One transaction: `req` out, the Response into `resp`; returns its
    /// length, or why it failed.
    fn transact(
        &self,
        wr_id: u64,
        server: VmtpEntityId,
        code: u32,
        req: &MemoryRegion<'_>,
        len: usize,
        resp: &mut MemoryRegion<'_>,
    ) -> CmdResult<usize> {
        let r = req.sge(0..len)?;
        let w = resp.sge(..)?;
        // SAFETY: `resp` is borrowed mutably until the completion is waited
        // for below; a failure to wait leaves it to the entity, which is
        // destroyed before the region can be used again.
        unsafe { self.e.request(wr_id, server, code, r, w) }?;
        let wc = self.wait("Response")?;
        if wc.opcode() != WcOpcode::VmtpResponse || wc.wr_id() != wr_id {
            return Err(Fail::Error(format!(
                "unexpected completion {:?} (wr_id {})",
                wc.opcode(),
                wc.wr_id()
            )));
        }
        if !wc.is_success() {
            return Err(Fail::Error(transaction_failure(&wc, server)));
        }
        if wc.vmtp_code() != 0 {
            return Err(Fail::Error(format!(
                "server {server} answered with code {:#x}",
                wc.vmtp_code()
            )));
        }
        if wc.msg_len() != u64::from(wc.byte_len()) {
            return Err(Fail::Mismatch(format!(
                "Response of {} bytes truncated to {}",
                wc.msg_len(),
                wc.byte_len()
            )));
        }
        Ok(wc.byte_len() as usize)
    }
}

/// Why a transaction failed, in words.
fn transaction_failure(wc: &WorkCompletion, server: VmtpEntityId) -> String {
    match wc.status() {
        WcStatus::RetryExcErr => format!("server {server}: no answer after the retransmissions"),
        WcStatus::RemOpErr => format!(
            "server {server} refused: VMTP code {} ({})",
            wc.vmtp_code(),
            code_name(wc.vmtp_code())
        ),
        s => format!("transaction with {server} failed: {s}"),
    }
}

/// RFC 1045, Appendix I.
fn code_name(c: u32) -> &'static str {
    match c {
        3 => "busy",
        4 => "no such entity",
        9 => "message too long",
        13 => "retransmission timeout",
        _ => "see RFC 1045, Appendix I",
    }
}

/// Runs a VMTP command.
pub fn run(ctx: &Context, cmd: VmtpCmd, out: &Output) -> CmdResult {
    match cmd {
        VmtpCmd::Serve {
            e,
            discriminator,
            count,
            window,
        } => serve(ctx, out, &e, discriminator, count, window),
        VmtpCmd::Ping {
            e,
            server,
            count,
            size,
        } => ping(ctx, out, &e, server, count, &size.0),
        VmtpCmd::Read {
            e,
            server,
            size,
            chunk,
        } => read(ctx, out, &e, server, size, chunk),
    }
}

fn serve(
    ctx: &Context,
    out: &Output,
    o: &EntityOpts,
    discriminator: u32,
    count: u64,
    window: usize,
) -> CmdResult {
    let window = window.clamp(1, 256);
    let s = open(ctx, o, VmtpRole::Server, discriminator, window as u32)?;
    // Request buffers: slots of one region. Responses are copied into slots
    // of another, one per Response in flight (the module's default
    // max_clients of them at most).
    let bufs = s.region(window * MAX)?;
    let nresp = 64usize;
    let mut resp_mr = s.region(nresp * MAX)?;
    let post = |bufs: &MemoryRegion<'_>, i: usize| -> CmdResult {
        // SAFETY: slot `i` is read only after its completion and posted
        // again only after that; the entity goes before the region.
        unsafe { s.e.post_recv(i as u64, bufs.sge(i * MAX..(i + 1) * MAX)?) }?;
        Ok(())
    };
    for i in 0..window {
        post(&bufs, i)?;
    }
    out.notice(&format!(
        "vmtp serve: ready as {} ({window} buffers posted)",
        s.e.id()
    ));
    // Responses in flight: wr_id -> their slot of `resp_mr`; the free
    // slots; each client's last echo sequence.
    let mut responding: HashMap<u64, usize> = HashMap::new();
    let mut free: Vec<usize> = (0..nresp).rev().collect();
    let mut last_seq: BTreeMap<u64, u64> = BTreeMap::new();
    let mut next_id = 0u64;
    let (mut requests, mut bytes_in, mut bytes_out) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    while count == 0 || requests < count || !responding.is_empty() {
        let wc = s.wait("Request")?;
        match wc.opcode() {
            WcOpcode::VmtpResponded => {
                if let Some(slot) = responding.remove(&wc.wr_id()) {
                    free.push(slot);
                }
                if !wc.is_success() {
                    out.notice(&format!(
                        "vmtp serve: a Response was not acknowledged ({})",
                        wc.status()
                    ));
                }
                continue;
            }
            WcOpcode::VmtpRequest => {}
            op => return Err(Fail::Error(format!("unexpected completion {op:?}"))),
        }
        wc.ok()?;
        let i = wc.wr_id() as usize;
        let n = wc.byte_len() as usize;
        let client = wc.vmtp_peer();
        requests += 1;
        bytes_in += n as u64;
        let req = &bufs.as_slice()[i * MAX..i * MAX + n];
        let (code, resp) = match wc.vmtp_code() {
            ECHO => {
                if n >= 8 {
                    // Requests too short for a sequence number go between
                    // the numbered ones: numbers only grow.
                    let seq = u64::from_le_bytes(req[..8].try_into().unwrap_or_default());
                    if let Some(&last) = last_seq.get(&client.0) {
                        if seq <= last {
                            return Err(Fail::Mismatch(format!(
                                "from {client}: Request {seq} arrived after {last} (duplicated or reordered)"
                            )));
                        }
                    }
                    last_seq.insert(client.0, seq);
                    verify_pattern(&req[8..], seq).map_err(Fail::Mismatch)?;
                }
                (0, req.to_vec())
            }
            READ if n == 12 => {
                let off = u64::from_le_bytes(req[..8].try_into().unwrap_or_default());
                let len = (u32::from_le_bytes(req[8..12].try_into().unwrap_or_default()) as usize)
                    .min(MAX);
                (0, read_bytes(off, len))
            }
            _ => (UNKNOWN, Vec::new()),
        };
        bytes_out += resp.len() as u64;
        let id = next_id;
        next_id += 1;
        // The slot stays the entity's until it is done with the Response.
        let slot = free
            .pop()
            .ok_or_else(|| Fail::Error(format!("more than {nresp} Responses in flight")))?;
        let at = slot * MAX;
        resp_mr.as_mut_slice()[at..at + resp.len()].copy_from_slice(&resp);
        let sge = resp_mr.sge(at..at + resp.len())?;
        s.e.respond(id, client, wc.vmtp_transaction(), code, sge)?;
        responding.insert(id, slot);
        post(&bufs, i)?;
    }
    out.emit(&ServeReport {
        entity: s.e.id().to_string(),
        requests,
        clients: last_seq.len(),
        bytes_in,
        bytes_out,
        time_s: start.elapsed().as_secs_f64(),
    })
}

/// `len` bytes of the read pattern from byte `off`.
fn read_bytes(off: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| pattern_byte(READ_ITER, off as usize + i))
        .collect()
}

fn ping(
    ctx: &Context,
    out: &Output,
    o: &EntityOpts,
    server: VmtpEntityId,
    count: u64,
    sizes: &[usize],
) -> CmdResult {
    let c = open(ctx, o, VmtpRole::Client, 0, 0)?;
    out.notice(&format!("vmtp ping: {} to {server}", c.e.id()));
    let mut req_mr = c.region(MAX)?;
    let mut resp = c.region(MAX)?;
    let mut rtts = Vec::new();
    let mut bytes = 0u64;
    for seq in 0..count {
        let size = sizes[seq as usize % sizes.len()];
        let req = &mut req_mr.as_mut_slice()[..size];
        req.fill(0);
        if size >= 8 {
            req[..8].copy_from_slice(&seq.to_le_bytes());
            fill_pattern(&mut req[8..], seq);
        }
        let t = Instant::now();
        let n = c.transact(seq, server, ECHO, &req_mr, size, &mut resp)?;
        rtts.push(t.elapsed());
        if resp.as_slice()[..n] != req_mr.as_slice()[..size] {
            return Err(Fail::Mismatch(format!(
                "echo {seq}: the Response differs from the Request ({n} of {size} bytes)"
            )));
        }
        bytes += size as u64;
    }
    rtts.sort();
    let us = |d: &Duration| d.as_secs_f64() * 1e6;
    out.emit(&PingReport {
        server: server.to_string(),
        client: c.e.id().to_string(),
        transactions: count,
        bytes,
        verified: true,
        rtt_us: rtts.first().map(|min| Rtt {
            min: us(min),
            median: us(&rtts[rtts.len() / 2]),
            p99: us(&rtts[(rtts.len() * 99).div_ceil(100).saturating_sub(1)]),
            max: us(rtts.last().unwrap_or(min)),
        }),
    })
}

fn read(
    ctx: &Context,
    out: &Output,
    o: &EntityOpts,
    server: VmtpEntityId,
    size: usize,
    chunk: usize,
) -> CmdResult {
    let c = open(ctx, o, VmtpRole::Client, 0, 0)?;
    let mut req_mr = c.region(12)?;
    let mut resp = c.region(MAX)?;
    let mut off = 0usize;
    let mut transactions = 0u64;
    let start = Instant::now();
    while off < size {
        let len = chunk.min(size - off);
        let req = req_mr.as_mut_slice();
        req[..8].copy_from_slice(&(off as u64).to_le_bytes());
        req[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        let n = c.transact(transactions, server, READ, &req_mr, 12, &mut resp)?;
        if n != len || resp.as_slice()[..n] != read_bytes(off as u64, len)[..] {
            return Err(Fail::Mismatch(format!(
                "read at {off}: {n} bytes, not the {len} bytes of the pattern"
            )));
        }
        off += len;
        transactions += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    out.emit(&ReadReport {
        server: server.to_string(),
        bytes: size as u64,
        transactions,
        time_s: secs,
        rate_mb_s: mb_per_s(size as f64, secs),
        verified: true,
    })
}

/// What `vmtp serve` prints when it stops. JSON: `entity`, `requests`,
/// `clients` (that sent echo Requests of 8 bytes or more), `bytes_in`,
/// `bytes_out`, `time_s`.
#[derive(Clone, Debug, Serialize)]
pub struct ServeReport {
    pub entity: String,
    pub requests: u64,
    pub clients: usize,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub time_s: f64,
}

impl Report for ServeReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "vmtp serve: {} answered {} Requests from {} clients ({} bytes in, {} out) in {:.3} s, each exactly once and in order",
            self.entity, self.requests, self.clients, self.bytes_in, self.bytes_out, self.time_s
        )
    }
}

/// Round-trip times in microseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Rtt {
    pub min: f64,
    pub median: f64,
    pub p99: f64,
    pub max: f64,
}

/// What `vmtp ping` prints. JSON: `server`, `client`, `transactions`,
/// `bytes`, `verified` (true), `rtt_us` (`min`, `median`, `p99`, `max`;
/// null without transactions).
#[derive(Clone, Debug, Serialize)]
pub struct PingReport {
    pub server: String,
    pub client: String,
    pub transactions: u64,
    pub bytes: u64,
    pub verified: bool,
    pub rtt_us: Option<Rtt>,
}

impl Report for PingReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        write!(
            out,
            "vmtp ping: {} transactions with {}, {} bytes each way, verified",
            self.transactions, self.server, self.bytes
        )?;
        match &self.rtt_us {
            Some(r) => writeln!(
                out,
                "; rtt min {:.1} us, median {:.1} us, p99 {:.1} us, max {:.1} us",
                r.min, r.median, r.p99, r.max
            ),
            None => writeln!(out),
        }
    }
}

/// What `vmtp read` prints. JSON: `server`, `bytes`, `transactions`,
/// `time_s`, `rate_mb_s`, `verified` (true).
#[derive(Clone, Debug, Serialize)]
pub struct ReadReport {
    pub server: String,
    pub bytes: u64,
    pub transactions: u64,
    pub time_s: f64,
    pub rate_mb_s: f64,
    pub verified: bool,
}

impl Report for ReadReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "vmtp read: {} bytes from {} in {} transactions, {:.3} s ({:.2} MB/s), verified",
            self.bytes, self.server, self.transactions, self.time_s, self.rate_mb_s
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_pattern_is_positional() {
        let all = read_bytes(0, 100);
        assert_eq!(read_bytes(37, 20), all[37..57]);
    }

    #[test]
    fn size_lists() {
        assert_eq!(sizes("0,1,16K").unwrap(), Sizes(vec![0, 1, 16384]));
        assert!(sizes("16385").is_err());
        assert!(chunk("0").is_err());
        assert_eq!(chunk("8K").unwrap(), 8192);
    }
}
