// SPDX-License-Identifier: GPL-2.0
//! `srnic rmpp`: Sandia RMPP node table, verified send/receive, ping-pong and
//! bandwidth runs.
//!
//! Every message carries a tag `MAGIC << 48 | sender NID << 32 | sequence`
//! and the CLI's test pattern of iteration `sender NID << 32 | sequence`, so a
//! receiver checks each message byte for byte, checks that every sender's
//! messages arrive exactly once and in order, and (given the same `--sizes`)
//! that each has the length it was sent with.

use crate::util::{fill_pattern, verify_pattern, CmdResult, Fail};
use clap::{Args, Subcommand};
use srnic::{
    uapi as abi, AccessFlags, CompletionQueue, Context, MemoryRegion, MrBuffer, ProtectionDomain,
    RmppEndpoint, RmppEndpointAttr, WcOpcode, WorkCompletion,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Upper 16 bits of every CLI tag.
const MAGIC: u64 = 0x5250;

fn tag(src: u32, seq: u32) -> u64 {
    MAGIC << 48 | u64::from(src & 0xffff) << 32 | u64::from(seq)
}

fn pattern_iter(src: u32, seq: u32) -> u64 {
    u64::from(src) << 32 | u64::from(seq)
}

/// A comma-separated list of message sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(Vec<usize>);

fn size_list(s: &str) -> Result<Sizes, String> {
    let v: Result<Vec<usize>, String> = s.split(',').map(crate::util::parse_size).collect();
    let v = v?;
    if v.is_empty() || v.iter().any(|&n| n > u32::MAX as usize) {
        return Err(format!("invalid size list {s:?}"));
    }
    Ok(Sizes(v))
}

/// The endpoint options every RMPP command takes.
#[derive(Args, Clone, Debug)]
pub struct EpOpts {
    /// Local NID.
    #[arg(short = 'n', long)]
    nid: u32,
    /// The netdev.
    #[arg(short = 'i', long, default_value = "eth0")]
    ctx: String,
    /// Seconds a wait may go without progress (no completion, no RMPP packet
    /// sent or received) before it fails.
    #[arg(short = 't', long, default_value_t = 60)]
    timeout: u64,
    /// Messages in flight (default: the module's).
    #[arg(long, default_value_t = 0)]
    max_send: u32,
    /// Posted receives (default: the module's).
    #[arg(long, default_value_t = 0)]
    max_recv: u32,
    /// Retransmission timeout in microseconds.
    #[arg(long, default_value_t = 0)]
    rto_us: u32,
    /// Timeouts per message before it fails.
    #[arg(long, default_value_t = 0)]
    max_retries: u32,
    /// Idle receiver state is freed after this many milliseconds.
    #[arg(long, default_value_t = 0)]
    reclaim_ms: u32,
    /// Grant pool (paper: MAX_RCV_BUF).
    #[arg(long, default_value_t = 0)]
    max_rcv_buf: u32,
    /// Pool share kept for first packets (paper: NODES).
    #[arg(long, default_value_t = 0)]
    nodes: u32,
    /// Largest grant (paper: MAX_DATA_PKTS).
    #[arg(long, default_value_t = 0)]
    max_data_pkts: u32,
    /// Refuse messages no receive matches (default: the sender retries).
    #[arg(long)]
    drop_unexpected: bool,
}

/// `srnic rmpp` subcommands.
#[derive(Subcommand, Debug)]
pub enum RmppCmd {
    /// Set or remove a node table entry: `node add NID MAC DEV`, `node del NID`.
    Node {
        #[command(subcommand)]
        op: NodeOp,
    },
    /// Receive and verify messages from any sender.
    Recv {
        #[command(flatten)]
        ep: EpOpts,
        /// Messages to receive (from all senders together).
        #[arg(short = 'C', long, default_value_t = 1)]
        count: u64,
        /// The senders' size list (checked when given; else any length).
        #[arg(short = 'S', long, value_parser = size_list)]
        sizes: Option<Sizes>,
        /// Largest message to expect (receive buffer size).
        #[arg(long, default_value = "1M", value_parser = crate::util::parse_size)]
        max_size: usize,
        /// Receives kept posted.
        #[arg(short = 'w', long, default_value_t = 16)]
        window: usize,
        /// Expect the first message to be aborted by its sender; then receive
        /// `count` more.
        #[arg(long)]
        expect_abort: bool,
        /// Keep the endpoint open this many seconds after the last message.
        #[arg(long, default_value_t = 0)]
        linger: u64,
    },
    /// Send verified messages to one NID.
    Send {
        #[command(flatten)]
        ep: EpOpts,
        /// Destination NID.
        #[arg(long)]
        to: u32,
        /// Messages to send.
        #[arg(short = 'C', long, default_value_t = 1)]
        count: u64,
        /// Message sizes, used in turn (e.g. 1,1000,64K,1M).
        #[arg(short = 'S', long, default_value = "4K", value_parser = size_list)]
        sizes: Sizes,
        /// Messages in flight.
        #[arg(short = 'w', long, default_value_t = 8)]
        window: usize,
    },
    /// Send one size repeatedly and report the bandwidth.
    Bw {
        #[command(flatten)]
        ep: EpOpts,
        /// Destination NID.
        #[arg(long)]
        to: u32,
        /// Messages to send.
        #[arg(short = 'C', long, default_value_t = 100)]
        count: u64,
        /// Message size.
        #[arg(short = 'S', long, default_value = "1M", value_parser = crate::util::parse_size)]
        size: usize,
        /// Messages in flight.
        #[arg(short = 'w', long, default_value_t = 8)]
        window: usize,
    },
    /// Ping-pong with verification; the server echoes every message back.
    Pingpong {
        #[command(flatten)]
        ep: EpOpts,
        /// The peer's NID.
        #[arg(short = 'p', long)]
        peer: u32,
        /// Be the echo server.
        #[arg(short = 's', long)]
        server: bool,
        /// Round trips.
        #[arg(short = 'C', long, default_value_t = 100)]
        count: u64,
        /// Message size.
        #[arg(short = 'S', long, default_value = "64", value_parser = crate::util::parse_size)]
        size: usize,
    },
}

/// `srnic rmpp node` operations.
#[derive(Subcommand, Debug)]
pub enum NodeOp {
    /// NID is reached at MAC through DEV.
    Add { nid: u32, mac: String, ctx: String },
    /// Forget NID.
    Del { nid: u32 },
}

struct Ep {
    ep: RmppEndpoint,
    scq: CompletionQueue,
    rcq: CompletionQueue,
    pd: ProtectionDomain,
    ctx: Context,
    timeout: Duration,
}

impl Ep {
    /// Waits for one completion of `cq` (one of this endpoint's CQs).
    fn wait_one(&self, cq: &CompletionQueue, what: &str) -> CmdResult<WorkCompletion> {
        wait_one(&self.ctx, cq, self.timeout, what)
    }
}

fn open_ep(ctx: &Context, o: &EpOpts, max_send: u32, max_recv: u32) -> CmdResult<Ep> {
    let pd = ctx.alloc_pd()?;
    let scq = ctx.create_cq(4096)?;
    let rcq = ctx.create_cq(4096)?;
    let attr = RmppEndpointAttr {
        nid: o.nid,
        ifname: o.ctx.clone(),
        drop_unexpected: o.drop_unexpected,
        max_send: if o.max_send != 0 {
            o.max_send
        } else {
            max_send
        },
        max_recv: if o.max_recv != 0 {
            o.max_recv
        } else {
            max_recv
        },
        rto_us: o.rto_us,
        max_retries: o.max_retries,
        reclaim_ms: o.reclaim_ms,
        max_rcv_buf: o.max_rcv_buf,
        nodes: o.nodes,
        max_data_pkts: o.max_data_pkts,
        ..Default::default()
    };
    let ep = RmppEndpoint::new(&pd, &scq, &rcq, &attr)?;
    Ok(Ep {
        ep,
        scq,
        rcq,
        pd,
        ctx: ctx.clone(),
        timeout: Duration::from_secs(o.timeout),
    })
}

/// Waits for one completion of `cq`; fails when RMPP makes no progress (no
/// packet sent or received by this host) for `stall`.
fn wait_one(
    ctx: &Context,
    cq: &CompletionQueue,
    stall: Duration,
    what: &str,
) -> CmdResult<WorkCompletion> {
    let mut wc = [WorkCompletion::default(); 1];
    let n = cq.wait_progress(&mut wc, stall, || rmpp_progress(ctx))?;
    if n == 0 {
        return Err(Fail::Error(format!(
            "no {what}: no RMPP packet sent or received for {stall:?}"
        )));
    }
    Ok(wc[0])
}

/// The counters whose sum is RMPP's progress on this host: packets sent and
/// packets the engines accepted (as `srnic stats` names them).
const PROGRESS_COUNTERS: [&str; 2] = ["rmpp_tx_packets", "rmpp_rx_packets"];

/// RMPP packets sent and received by this host so far (module-wide).
fn rmpp_progress(ctx: &Context) -> srnic::Result<u64> {
    Ok(ctx
        .rmpp_stats()?
        .iter()
        .filter(|(name, _)| PROGRESS_COUNTERS.contains(name))
        .map(|(_, v)| *v)
        .sum())
}

fn status_err(wc: &WorkCompletion, what: &str) -> Fail {
    Fail::Error(format!(
        "{what} (wr_id {}) failed: status {:?}",
        wc.wr_id(),
        wc.status()
    ))
}

/// Runs an RMPP command.
pub fn run(ctx: &Context, cmd: RmppCmd) -> CmdResult {
    match cmd {
        RmppCmd::Node { op } => match op {
            NodeOp::Add {
                nid,
                mac,
                ctx: ifname,
            } => {
                let m = srnic::parse_mac(&mac)
                    .ok_or_else(|| Fail::Error(format!("invalid MAC address {mac:?}")))?;
                ctx.rmpp_set_node(nid, m, &ifname)?;
                Ok(())
            }
            NodeOp::Del { nid } => Ok(ctx.rmpp_del_node(nid)?),
        },
        RmppCmd::Recv {
            ep,
            count,
            sizes,
            max_size,
            window,
            expect_abort,
            linger,
        } => recv(
            ctx,
            &ep,
            count,
            sizes.as_ref().map(|s| s.0.as_slice()),
            max_size,
            window,
            expect_abort,
            linger,
        ),
        RmppCmd::Send {
            ep,
            to,
            count,
            sizes,
            window,
        } => send(ctx, &ep, to, count, &sizes.0, window, false).map(drop),
        RmppCmd::Bw {
            ep,
            to,
            count,
            size,
            window,
        } => {
            let secs = send(ctx, &ep, to, count, &[size], window, true)?;
            let bytes = count as f64 * size as f64;
            println!(
                "rmpp bw: {count} x {size} bytes in {secs:.3} s: {:.1} MB/s",
                bytes / secs.max(1e-9) / 1e6
            );
            Ok(())
        }
        RmppCmd::Pingpong {
            ep,
            peer,
            server,
            count,
            size,
        } => pingpong(ctx, &ep, peer, server, count, size),
    }
}

/// Per-sender order and exactly-once bookkeeping of a receiver.
#[derive(Default)]
struct Order {
    next: BTreeMap<u32, u32>,
}

impl Order {
    fn check(&mut self, wc: &WorkCompletion, data: &[u8], sizes: Option<&[usize]>) -> CmdResult {
        let w = &wc.0;
        if w.tag >> 48 != MAGIC || (w.tag >> 32) & 0xffff != u64::from(w.src_nid & 0xffff) {
            return Err(Fail::Mismatch(format!(
                "tag {:#x} from NID {} is not a srnic rmpp tag",
                w.tag, w.src_nid
            )));
        }
        let seq = w.tag as u32;
        let want = self.next.entry(w.src_nid).or_insert(0);
        if seq != *want {
            return Err(Fail::Mismatch(format!(
                "from NID {}: message {seq} arrived when {} was next (lost, duplicated or reordered)",
                w.src_nid, want
            )));
        }
        *want = seq.wrapping_add(1);
        if let Some(s) = sizes {
            let expect = s[seq as usize % s.len()] as u64;
            if w.msg_len != expect {
                return Err(Fail::Mismatch(format!(
                    "from NID {}: message {seq} is {} bytes, sent {expect}",
                    w.src_nid, w.msg_len
                )));
            }
        }
        if u64::from(w.byte_len) != w.msg_len || w.flags & abi::SRNIC_WC_TRUNCATED != 0 {
            return Err(Fail::Mismatch(format!(
                "from NID {}: message {seq} truncated to {} of {} bytes",
                w.src_nid, w.byte_len, w.msg_len
            )));
        }
        verify_pattern(data, pattern_iter(w.src_nid, seq)).map_err(Fail::Mismatch)
    }
}

#[expect(clippy::too_many_arguments)]
fn recv(
    ctx: &Context,
    o: &EpOpts,
    count: u64,
    sizes: Option<&[usize]>,
    max_size: usize,
    window: usize,
    expect_abort: bool,
    linger: u64,
) -> CmdResult {
    let window = window.clamp(1, 1024);
    let e = open_ep(ctx, o, 16, window as u32)?;
    let slot = max_size.max(1);
    let total = slot
        .checked_mul(window)
        .ok_or_else(|| Fail::Error("window too large".into()))?;
    let mut mr =
        e.pd.reg_buffer(MrBuffer::new(total)?, AccessFlags::LOCAL_WRITE)?;
    let post = |mr: &MemoryRegion<'_>, i: usize| -> CmdResult {
        let sge = mr.sge(i * slot..(i + 1) * slot)?;
        // SAFETY: slot `i` is read only after its completion and re-posted only
        // after that.
        unsafe { e.ep.post_recv(i as u64, None, 0, u64::MAX, sge) }?;
        Ok(())
    };
    for i in 0..window {
        post(&mr, i)?;
    }
    {
        use std::io::Write as _;
        println!(
            "rmpp recv: ready (NID {}, {} receives posted)",
            o.nid, window
        );
        let _ = std::io::stdout().flush();
    }
    let mut order = Order::default();
    let (mut got, mut bytes, mut aborted) = (0u64, 0u64, !expect_abort);
    let start = Instant::now();
    while got < count || !aborted {
        let wc = e.wait_one(&e.rcq, "a message")?;
        if wc.opcode() != WcOpcode::RmppRecv {
            return Err(Fail::Error(format!(
                "unexpected completion {:?}",
                wc.opcode()
            )));
        }
        let i = wc.wr_id() as usize;
        if !wc.is_success() {
            if !aborted && wc.0.status == abi::SRNIC_WC_REM_ABORT_ERR {
                println!(
                    "rmpp recv: message {} from NID {} aborted by its sender",
                    wc.0.tag as u32, wc.0.src_nid
                );
                aborted = true;
                post(&mr, i)?;
                continue;
            }
            return Err(status_err(&wc, "receive"));
        }
        {
            let data = &mr.as_mut_slice()[i * slot..][..wc.byte_len() as usize];
            order.check(&wc, data, sizes)?;
        }
        got += 1;
        bytes += u64::from(wc.byte_len());
        post(&mr, i)?;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "rmpp recv: {got} messages, {bytes} bytes from {} senders in {secs:.3} s, verified (in order, exactly once)",
        order.next.len()
    );
    if linger > 0 {
        std::thread::sleep(Duration::from_secs(linger));
    }
    Ok(())
}

/// Sends `count` messages with up to `window` in flight; returns the seconds taken.
fn send(
    ctx: &Context,
    o: &EpOpts,
    to: u32,
    count: u64,
    sizes: &[usize],
    window: usize,
    quiet: bool,
) -> CmdResult<f64> {
    let window = window.clamp(1, 1024);
    let e = open_ep(ctx, o, window as u32, 16)?;
    let mut bufs: Vec<Option<(u32, Vec<u8>)>> = (0..window).map(|_| None).collect();
    let (mut sent, mut done, mut bytes) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    while done < count {
        // Fill the window.
        while sent < count {
            let Some(i) = bufs.iter().position(Option::is_none) else {
                break;
            };
            let seq = u32::try_from(sent).map_err(|_| Fail::Error("too many messages".into()))?;
            let len = sizes[sent as usize % sizes.len()];
            let mut data = vec![0u8; len];
            fill_pattern(&mut data, pattern_iter(o.nid, seq));
            match e.ep.send_bytes(i as u64, to, tag(o.nid, seq), &data) {
                Ok(()) => {}
                Err(err) if err.errno() == libc::EAGAIN => break,
                Err(err) => return Err(err.into()),
            }
            bufs[i] = Some((seq, data));
            sent += 1;
        }
        let wc = e.wait_one(&e.scq, "a send completion")?;
        if !wc.is_success() {
            return Err(status_err(&wc, "send"));
        }
        let i = wc.wr_id() as usize;
        let Some((seq, data)) = bufs.get_mut(i).and_then(Option::take) else {
            return Err(Fail::Error(format!("completion for unknown wr_id {i}")));
        };
        if wc.byte_len() as usize != data.len() {
            return Err(Fail::Mismatch(format!(
                "message {seq}: the receiver took {} of {} bytes",
                wc.byte_len(),
                data.len()
            )));
        }
        done += 1;
        bytes += data.len() as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    if !quiet {
        println!(
            "rmpp send: {done} messages, {bytes} bytes to NID {to} in {secs:.3} s ({:.1} MB/s), all acknowledged",
            bytes as f64 / secs.max(1e-9) / 1e6
        );
    }
    Ok(secs)
}

fn pingpong(
    ctx: &Context,
    o: &EpOpts,
    peer: u32,
    server: bool,
    count: u64,
    size: usize,
) -> CmdResult {
    let e = open_ep(ctx, o, 4, 4)?;
    // Messages go out of a registered region (the MR path) and land in another.
    let mut tx =
        e.pd.reg_buffer(MrBuffer::new(size.max(1))?, AccessFlags::LOCAL_WRITE)?;
    let mut rx =
        e.pd.reg_buffer(MrBuffer::new(size.max(1))?, AccessFlags::LOCAL_WRITE)?;
    if server {
        // The endpoint exists: a client's first message is held for it (or
        // retried by the client) from now on.
        use std::io::Write as _;
        println!("rmpp pingpong: ready (NID {})", o.nid);
        let _ = std::io::stdout().flush();
    }
    let mut rtts = Vec::new();
    for seq in 0..count {
        let seq = u32::try_from(seq).map_err(|_| Fail::Error("too many round trips".into()))?;
        // SAFETY: `rx` is read only after the receive completes.
        unsafe { e.ep.post_recv(1, Some(peer), 0, u64::MAX, rx.sge(0..size)?) }?;
        let t0 = Instant::now();
        if !server {
            fill_pattern(&mut tx.as_mut_slice()[..size], pattern_iter(o.nid, seq));
            e.ep.send(2, peer, tag(o.nid, seq), tx.sge(0..size)?)?;
        }
        let wc = e.wait_one(&e.rcq, "the peer's message")?;
        if !wc.is_success() {
            return Err(status_err(&wc, "receive"));
        }
        let w = wc.0;
        let from = if server { peer } else { o.nid };
        if w.src_nid != peer || w.tag as u32 != seq || w.byte_len as usize != size {
            return Err(Fail::Mismatch(format!(
                "round {seq}: got tag {:#x}, {} bytes from NID {}",
                w.tag, w.byte_len, w.src_nid
            )));
        }
        verify_pattern(&rx.as_mut_slice()[..size], pattern_iter(from, seq))
            .map_err(Fail::Mismatch)?;
        if server {
            // Echo it back, as the client's bytes.
            let data = rx.as_mut_slice()[..size].to_vec();
            tx.as_mut_slice()[..size].copy_from_slice(&data);
            e.ep.send(2, peer, w.tag, tx.sge(0..size)?)?;
        }
        let s = e.wait_one(&e.scq, "the send completion")?;
        if !s.is_success() {
            return Err(status_err(&s, "send"));
        }
        rtts.push(t0.elapsed());
    }
    if !server && !rtts.is_empty() {
        rtts.sort();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "rmpp pingpong: {count} round trips of {size} bytes, verified; rtt min {:.1} us, median {:.1} us, max {:.1} us",
            us(rtts[0]),
            us(rtts[rtts.len() / 2]),
            us(rtts[rtts.len() - 1])
        );
    } else {
        println!("rmpp pingpong: echoed {count} messages of {size} bytes");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A progress counter that is not a counter of the ABI would read as no
    /// progress at all: every wait would fail after `--timeout` however many
    /// packets flowed.
    #[test]
    fn progress_counters_exist() {
        for name in PROGRESS_COUNTERS {
            assert!(
                abi::SrnicRmppStats::COUNTER_NAMES.contains(&name),
                "{name} is no RMPP counter"
            );
        }
    }
}
