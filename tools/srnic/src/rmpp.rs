// SPDX-License-Identifier: GPL-2.0
//! `srnic rmpp`: Sandia RMPP node table, verified send/receive, ping-pong and
//! bandwidth runs.
//!
//! Every message carries a tag `MAGIC << 48 | sender NID << 32 | sequence`
//! and the CLI's test pattern of iteration `sender NID << 32 | sequence`, so a
//! receiver checks each message byte for byte, checks that every sender's
//! messages arrive exactly once and in order, and (given the same `--sizes`)
//! that each has the length it was sent with.

use crate::output::{mb_per_s, Output, Report};
use crate::session::Side;
use crate::util::{fill_pattern, verify_pattern, CmdResult, Fail};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use srnic::{
    uapi as abi, AccessFlags, CompletionQueue, Context, MemoryRegion, MrBuffer, ProtectionDomain,
    RmppEndpoint, RmppEndpointAttr, RmppNak, WcOpcode, WorkCompletion,
};
use std::collections::BTreeMap;
use std::io::{self, Write};
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

/// `--nak`: the receiver-driven recovery an endpoint offers and uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum NakOpt {
    /// Selective NAKs: the missing packets are listed and only they are resent.
    #[default]
    Selective,
    /// NAKs that send again from the first missing packet.
    GoBack,
    /// None: the sender's retransmission timeout only (the paper's protocol).
    Off,
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
    /// Retransmission timeout in microseconds before the first round-trip
    /// sample, and the largest (default: the module's).
    #[arg(long, default_value_t = 0)]
    rto_us: u32,
    /// Smallest retransmission timeout in microseconds that the round-trip
    /// estimate may set; equal to --rto-us: a fixed timeout (default: the
    /// module's).
    #[arg(long, default_value_t = 0)]
    min_rto_us: u32,
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
    /// Receiver-driven recovery this endpoint offers and uses; a message uses
    /// what both of its endpoints have.
    #[arg(long, value_enum, default_value_t = NakOpt::Selective)]
    nak: NakOpt,
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

    fn wait_some<'w>(
        &self,
        cq: &CompletionQueue,
        wc: &'w mut [WorkCompletion],
        what: &str,
    ) -> CmdResult<&'w [WorkCompletion]> {
        let n = wait_some(&self.ctx, cq, wc, self.timeout, what)?;
        Ok(&wc[..n])
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
        nak: match o.nak {
            NakOpt::Selective => RmppNak::Selective,
            NakOpt::GoBack => RmppNak::GoBack,
            NakOpt::Off => RmppNak::Off,
        },
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
        min_rto_us: o.min_rto_us,
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
    wait_some(ctx, cq, &mut wc, stall, what)?;
    Ok(wc[0])
}

/// Waits for at least one completion of `cq` and takes as many as are there
/// (up to `wc.len()`, one system call for all); fails as [`wait_one`].
fn wait_some(
    ctx: &Context,
    cq: &CompletionQueue,
    wc: &mut [WorkCompletion],
    stall: Duration,
    what: &str,
) -> CmdResult<usize> {
    let n = cq.wait_progress(wc, stall, || rmpp_progress(ctx))?;
    if n == 0 {
        return Err(Fail::Error(format!(
            "no {what}: no RMPP packet sent or received for {stall:?}"
        )));
    }
    Ok(n)
}

/// Completions taken from a CQ with one call.
const WC_BATCH: usize = 64;

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
pub fn run(ctx: &Context, cmd: RmppCmd, out: &Output) -> CmdResult {
    match cmd {
        RmppCmd::Node { op } => {
            let r = match op {
                NodeOp::Add {
                    nid,
                    mac,
                    ctx: ifname,
                } => {
                    let m = srnic::parse_mac(&mac)
                        .ok_or_else(|| Fail::Error(format!("invalid MAC address {mac:?}")))?;
                    ctx.rmpp_set_node(nid, m, &ifname)?;
                    NodeReport {
                        op: NodeChange::Add,
                        nid,
                        mac: Some(mac_string(m)),
                        ifname: Some(ifname),
                    }
                }
                NodeOp::Del { nid } => {
                    ctx.rmpp_del_node(nid)?;
                    NodeReport {
                        op: NodeChange::Del,
                        nid,
                        mac: None,
                        ifname: None,
                    }
                }
            };
            out.emit(&r)
        }
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
            out,
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
        } => {
            let s = send(ctx, &ep, to, count, &sizes.0, window)?;
            out.emit(&SendReport {
                to,
                messages: s.messages,
                bytes: s.bytes,
                time_s: s.secs,
                rate_mb_s: mb_per_s(s.bytes as f64, s.secs),
                acknowledged: true,
            })
        }
        RmppCmd::Bw {
            ep,
            to,
            count,
            size,
            window,
        } => {
            let s = send(ctx, &ep, to, count, &[size], window)?;
            out.emit(&BwReport {
                to,
                count,
                size,
                bytes: s.bytes,
                time_s: s.secs,
                rate_mb_s: mb_per_s(s.bytes as f64, s.secs),
                completion_us: Tail::of(s.latencies),
            })
        }
        RmppCmd::Pingpong {
            ep,
            peer,
            server,
            count,
            size,
        } => pingpong(ctx, out, &ep, peer, server, count, size),
    }
}

/// `aa:bb:cc:dd:ee:ff`.
fn mac_string(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Whether a node table entry was set or removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeChange {
    Add,
    Del,
}

/// What `rmpp node add|del` did (text: nothing). JSON: `op` ("add" or
/// "del"), `nid`, `mac` and `ifname` (null for "del").
#[derive(Clone, Debug, Serialize)]
pub struct NodeReport {
    pub op: NodeChange,
    pub nid: u32,
    pub mac: Option<String>,
    pub ifname: Option<String>,
}

impl Report for NodeReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// A message the receiver saw aborted by its sender (`--expect-abort`; a
/// progress line in text mode). JSON: `seq`, `nid` (the sender).
#[derive(Clone, Debug, Serialize)]
pub struct Aborted {
    pub seq: u32,
    pub nid: u32,
}

impl Report for Aborted {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "rmpp recv: message {} from NID {} aborted by its sender",
            self.seq, self.nid
        )
    }
}

/// What `rmpp recv` prints at the end. JSON: `nid` (the receiver's),
/// `messages`, `bytes`, `senders`, `time_s`, `verified` (true: in order,
/// exactly once, every byte), `aborted` (the messages aborted by their
/// senders: `seq`, `nid`).
#[derive(Clone, Debug, Serialize)]
pub struct RecvReport {
    pub nid: u32,
    pub messages: u64,
    pub bytes: u64,
    pub senders: usize,
    pub time_s: f64,
    pub verified: bool,
    pub aborted: Vec<Aborted>,
}

impl Report for RecvReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "rmpp recv: {} messages, {} bytes from {} senders in {:.3} s, verified (in order, exactly once)",
            self.messages, self.bytes, self.senders, self.time_s
        )
    }
}

/// What `rmpp send` prints. JSON: `to`, `messages`, `bytes`, `time_s`,
/// `rate_mb_s`, `acknowledged` (true: the receiver acknowledged every one).
#[derive(Clone, Debug, Serialize)]
pub struct SendReport {
    pub to: u32,
    pub messages: u64,
    pub bytes: u64,
    pub time_s: f64,
    pub rate_mb_s: f64,
    pub acknowledged: bool,
}

impl Report for SendReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "rmpp send: {} messages, {} bytes to NID {} in {:.3} s ({:.1} MB/s), all acknowledged",
            self.messages, self.bytes, self.to, self.time_s, self.rate_mb_s
        )
    }
}

/// Completion times of messages (post to send completion), in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tail {
    pub median: f64,
    pub p99: f64,
    pub max: f64,
}

impl Tail {
    /// The tail of `d` (`None` when empty); p99 is the nearest rank.
    fn of(mut d: Vec<Duration>) -> Option<Self> {
        d.sort();
        let us = |d: &Duration| d.as_secs_f64() * 1e6;
        let rank = |q: usize| (d.len() * q).div_ceil(100).saturating_sub(1);
        Some(Self {
            median: us(d.get(rank(50))?),
            p99: us(d.get(rank(99))?),
            max: us(d.last()?),
        })
    }
}

/// What `rmpp bw` prints. JSON: `to`, `count`, `size`, `bytes`, `time_s`,
/// `rate_mb_s`, `completion_us` (`median`, `p99`, `max` of the messages'
/// times from post to completion; null without messages).
#[derive(Clone, Debug, Serialize)]
pub struct BwReport {
    pub to: u32,
    pub count: u64,
    pub size: usize,
    pub bytes: u64,
    pub time_s: f64,
    pub rate_mb_s: f64,
    pub completion_us: Option<Tail>,
}

impl Report for BwReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        write!(
            out,
            "rmpp bw: {} x {} bytes in {:.3} s: {:.1} MB/s",
            self.count, self.size, self.time_s, self.rate_mb_s
        )?;
        match &self.completion_us {
            Some(t) => writeln!(
                out,
                "; completion median {:.0} us, p99 {:.0} us, max {:.0} us",
                t.median, t.p99, t.max
            ),
            None => writeln!(out),
        }
    }
}

/// Round-trip times of `rmpp pingpong`, in microseconds.
#[derive(Clone, Debug, Serialize)]
pub struct RttMedian {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// What `rmpp pingpong` prints. JSON: `side`, `round_trips` (the server:
/// messages echoed), `size`, `verified` (true), `rtt_us` (the client's
/// `min`, `median`, `max`; null on the server and without round trips).
#[derive(Clone, Debug, Serialize)]
pub struct PingpongReport {
    pub side: Side,
    pub round_trips: u64,
    pub size: usize,
    pub verified: bool,
    pub rtt_us: Option<RttMedian>,
}

impl PingpongReport {
    /// The report of `side` after round trips that took `rtts`.
    fn new(side: Side, size: usize, rtts: &mut [Duration]) -> Self {
        rtts.sort();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let rtt_us = match (side, rtts.first(), rtts.last()) {
            (Side::Client, Some(&min), Some(&max)) => Some(RttMedian {
                min: us(min),
                median: us(rtts[rtts.len() / 2]),
                max: us(max),
            }),
            _ => None,
        };
        Self {
            side,
            round_trips: rtts.len() as u64,
            size,
            verified: true,
            rtt_us,
        }
    }
}

impl Report for PingpongReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        match (&self.side, &self.rtt_us) {
            (Side::Client, Some(r)) => writeln!(
                out,
                "rmpp pingpong: {} round trips of {} bytes, verified; rtt min {:.1} us, median {:.1} us, max {:.1} us",
                self.round_trips, self.size, r.min, r.median, r.max
            ),
            (Side::Client, None) => writeln!(
                out,
                "rmpp pingpong: {} round trips of {} bytes",
                self.round_trips, self.size
            ),
            (Side::Server, _) => writeln!(
                out,
                "rmpp pingpong: echoed {} messages of {} bytes",
                self.round_trips, self.size
            ),
        }
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
    out: &Output,
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
    out.notice(&format!(
        "rmpp recv: ready (NID {}, {} receives posted)",
        o.nid, window
    ));
    let mut order = Order::default();
    let mut aborts = Vec::new();
    let (mut got, mut bytes, mut aborted) = (0u64, 0u64, !expect_abort);
    let start = Instant::now();
    let mut wcs = [WorkCompletion::default(); WC_BATCH];
    while got < count || !aborted {
        for wc in e.wait_some(&e.rcq, &mut wcs, "messages")? {
            if wc.opcode() != WcOpcode::RmppRecv {
                return Err(Fail::Error(format!(
                    "unexpected completion {:?}",
                    wc.opcode()
                )));
            }
            let i = wc.wr_id() as usize;
            if !wc.is_success() {
                if !aborted && wc.0.status == abi::SRNIC_WC_REM_ABORT_ERR {
                    let a = Aborted {
                        seq: wc.0.tag as u32,
                        nid: wc.0.src_nid,
                    };
                    out.progress(&a)?;
                    aborts.push(a);
                    aborted = true;
                    post(&mr, i)?;
                    continue;
                }
                return Err(status_err(wc, "receive"));
            }
            {
                let data = &mr.as_mut_slice()[i * slot..][..wc.byte_len() as usize];
                order.check(wc, data, sizes)?;
            }
            got += 1;
            bytes += u64::from(wc.byte_len());
            post(&mr, i)?;
        }
    }
    out.emit(&RecvReport {
        nid: o.nid,
        messages: got,
        bytes,
        senders: order.next.len(),
        time_s: start.elapsed().as_secs_f64(),
        verified: true,
        aborted: aborts,
    })?;
    if linger > 0 {
        std::thread::sleep(Duration::from_secs(linger));
    }
    Ok(())
}

/// What a run of sends did.
struct Sent {
    messages: u64,
    bytes: u64,
    secs: f64,
    /// Each message's time from its post to its completion.
    latencies: Vec<Duration>,
}

/// Sends `count` messages with up to `window` in flight, each acknowledged.
fn send(
    ctx: &Context,
    o: &EpOpts,
    to: u32,
    count: u64,
    sizes: &[usize],
    window: usize,
) -> CmdResult<Sent> {
    let window = window.clamp(1, 1024);
    let e = open_ep(ctx, o, window as u32, 16)?;
    // Messages go out of one registered region, a slot per message in flight
    // (as perftest does): no allocation and no pinning per message.
    let slot = sizes.iter().copied().max().unwrap_or(0).max(1);
    let total = slot
        .checked_mul(window)
        .ok_or_else(|| Fail::Error("window too large".into()))?;
    let mut mr =
        e.pd.reg_buffer(MrBuffer::new(total)?, AccessFlags::LOCAL_WRITE)?;
    // Per slot: the message's sequence number, length and post time.
    let mut slots: Vec<Option<(u32, usize, Instant)>> = vec![None; window];
    let (mut sent, mut done, mut bytes) = (0u64, 0u64, 0u64);
    let mut latencies = Vec::with_capacity(count.min(1 << 20) as usize);
    let mut wcs = [WorkCompletion::default(); WC_BATCH];
    let start = Instant::now();
    while done < count {
        // Fill the window.
        while sent < count {
            let Some(i) = slots.iter().position(Option::is_none) else {
                break;
            };
            let seq = u32::try_from(sent).map_err(|_| Fail::Error("too many messages".into()))?;
            let len = sizes[sent as usize % sizes.len()];
            let range = i * slot..i * slot + len;
            fill_pattern(
                &mut mr.as_mut_slice()[range.clone()],
                pattern_iter(o.nid, seq),
            );
            match e.ep.send(i as u64, to, tag(o.nid, seq), mr.sge(range)?) {
                Ok(()) => {}
                Err(err) if err.errno() == libc::EAGAIN => break,
                Err(err) => return Err(err.into()),
            }
            slots[i] = Some((seq, len, Instant::now()));
            sent += 1;
        }
        for wc in e.wait_some(&e.scq, &mut wcs, "send completions")? {
            if !wc.is_success() {
                return Err(status_err(wc, "send"));
            }
            let i = wc.wr_id() as usize;
            let Some((seq, len, posted)) = slots.get_mut(i).and_then(Option::take) else {
                return Err(Fail::Error(format!("completion for unknown wr_id {i}")));
            };
            if wc.byte_len() as usize != len {
                return Err(Fail::Mismatch(format!(
                    "message {seq}: the receiver took {} of {len} bytes",
                    wc.byte_len()
                )));
            }
            latencies.push(posted.elapsed());
            done += 1;
            bytes += len as u64;
        }
    }
    Ok(Sent {
        messages: done,
        bytes,
        secs: start.elapsed().as_secs_f64(),
        latencies,
    })
}

fn pingpong(
    ctx: &Context,
    out: &Output,
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
        out.notice(&format!("rmpp pingpong: ready (NID {})", o.nid));
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
    let side = if server { Side::Server } else { Side::Client };
    out.emit(&PingpongReport::new(side, size, &mut rtts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};
    use serde_json::json as j;

    #[test]
    fn node_reports() {
        let add = NodeReport {
            op: NodeChange::Add,
            nid: 3,
            mac: Some(mac_string([0x52, 0x54, 0, 0xab, 0, 1])),
            ifname: Some("eth0".into()),
        };
        assert_eq!(render(Format::Text, &add), "");
        assert_eq!(
            json(&add),
            j!({"op": "add", "nid": 3, "mac": "52:54:00:ab:00:01", "ifname": "eth0"})
        );
        let del = NodeReport {
            op: NodeChange::Del,
            nid: 3,
            mac: None,
            ifname: None,
        };
        assert_eq!(
            json(&del),
            j!({"op": "del", "nid": 3, "mac": null, "ifname": null})
        );
    }

    #[test]
    fn transfer_reports() {
        let r = RecvReport {
            nid: 1,
            messages: 100,
            bytes: 65536,
            senders: 2,
            time_s: 1.25,
            verified: true,
            aborted: vec![Aborted { seq: 0, nid: 4 }],
        };
        assert_eq!(
            render(Format::Text, &r),
            "rmpp recv: 100 messages, 65536 bytes from 2 senders in 1.250 s, verified (in order, exactly once)\n"
        );
        let v = json(&r);
        assert_eq!(v["nid"], 1);
        assert_eq!(v["messages"], 100);
        assert_eq!(v["bytes"], 65536);
        assert_eq!(v["senders"], 2);
        assert_eq!(v["time_s"], 1.25);
        assert_eq!(v["verified"], true);
        assert_eq!(v["aborted"], j!([{"seq": 0, "nid": 4}]));
        assert_eq!(
            render(Format::Text, &r.aborted[0]),
            "rmpp recv: message 0 from NID 4 aborted by its sender\n"
        );

        let s = SendReport {
            to: 2,
            messages: 10,
            bytes: 2_000_000,
            time_s: 2.0,
            rate_mb_s: mb_per_s(2e6, 2.0),
            acknowledged: true,
        };
        assert_eq!(
            render(Format::Text, &s),
            "rmpp send: 10 messages, 2000000 bytes to NID 2 in 2.000 s (1.0 MB/s), all acknowledged\n"
        );
        assert_eq!(
            json(&s),
            j!({"to": 2, "messages": 10, "bytes": 2000000, "time_s": 2.0, "rate_mb_s": 1.0, "acknowledged": true})
        );

        let b = BwReport {
            to: 2,
            count: 4,
            size: 1 << 20,
            bytes: 4 << 20,
            time_s: 0.5,
            rate_mb_s: mb_per_s((4 << 20) as f64, 0.5),
            completion_us: Tail::of([400, 100, 300, 200].map(Duration::from_micros).to_vec()),
        };
        assert_eq!(
            render(Format::Text, &b),
            "rmpp bw: 4 x 1048576 bytes in 0.500 s: 8.4 MB/s; \
             completion median 200 us, p99 400 us, max 400 us\n"
        );
        let v = json(&b);
        assert_eq!(
            (v["count"].as_u64(), v["size"].as_u64()),
            (Some(4), Some(1 << 20))
        );
        assert_eq!(v["bytes"], 4u64 << 20);
        assert_eq!(v["rate_mb_s"], 8.388608);
    }

    #[test]
    fn pingpong_reports() {
        let mut rtts = [30, 10, 20].map(Duration::from_micros);
        let c = PingpongReport::new(Side::Client, 64, &mut rtts);
        assert_eq!(
            render(Format::Text, &c),
            "rmpp pingpong: 3 round trips of 64 bytes, verified; rtt min 10.0 us, median 20.0 us, max 30.0 us\n"
        );
        assert_eq!(
            json(&c),
            j!({"side": "client", "round_trips": 3, "size": 64, "verified": true,
                "rtt_us": {"min": 10.0, "median": 20.0, "max": 30.0}})
        );
        let srv = PingpongReport::new(Side::Server, 64, &mut rtts);
        assert_eq!(
            render(Format::Text, &srv),
            "rmpp pingpong: echoed 3 messages of 64 bytes\n"
        );
        assert!(json(&srv)["rtt_us"].is_null());
        assert_eq!(json(&srv)["side"], "server");
    }

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

#[cfg(test)]
mod tail_tests {
    use super::Tail;
    use std::time::Duration;

    #[test]
    fn nearest_rank() {
        assert_eq!(Tail::of(Vec::new()), None);
        let one = Tail::of(vec![Duration::from_micros(7)]).unwrap();
        assert_eq!((one.median, one.p99, one.max), (7.0, 7.0, 7.0));
        let t = Tail::of((1..=200).rev().map(Duration::from_micros).collect()).unwrap();
        assert_eq!((t.median, t.p99, t.max), (100.0, 198.0, 200.0));
    }
}
