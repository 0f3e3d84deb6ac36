// SPDX-License-Identifier: GPL-2.0
//! Lossy network simulator for the Sandia RMPP engine.
//!
//! Several nodes, each an [`Engine`] with its own bounded tables, exchange messages in
//! all directions at once over a simulated network with a virtual clock, seeded
//! per-packet loss, duplication and random delay (which reorders packets). Every run
//! asserts that each message is delivered exactly once, byte-exact, that per-peer
//! arrival order is send order, that every sender completes, and that no state is left
//! after the reclaim timeout.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srnic_proto::rmpp::{
    Arrival, Completion, Config, Decision, Engine, PeerState, Recovery, RecvSlot, RecvStatus,
    RestartPolicy, SendError, SendSlot, SendStatus, HEADER_LEN,
};

type Eng = Engine<Vec<SendSlot>, Vec<RecvSlot>, Vec<PeerState>>;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// Deterministic message content, so the receiver can check every byte.
fn content(tag: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| {
            ((tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xD6E8_FEB8_6659_FD93))
                >> 29) as u8
        })
        .collect()
}

fn tag_of(src: usize, dst: usize, idx: usize) -> u64 {
    ((src as u64) << 48) | ((dst as u64) << 32) | idx as u64
}

#[derive(Default)]
struct Upper {
    /// Receive buffers by ctx, with the message's tag.
    bufs: HashMap<u64, (u64, Vec<u8>)>,
    next_ctx: u64,
    /// Arrival order of tags, per source.
    arrivals: HashMap<u32, Vec<u64>>,
    seen: HashSet<u64>,
    /// Posted receives (0: unlimited): a first packet finding none is deferred,
    /// as srnic's endpoint leaves a message with its sender until a receive is
    /// posted.
    window: usize,
    /// Receives matched and not yet completed.
    in_use: usize,
}

impl Upper {
    fn arrival(&mut self, a: &Arrival<'_>) -> Decision {
        if self.window != 0 && self.in_use >= self.window {
            return Decision::Defer;
        }
        self.in_use += 1;
        assert!(
            self.seen.insert(a.tag),
            "message {:#x} arrived twice",
            a.tag
        );
        self.arrivals.entry(a.src).or_default().push(a.tag);
        let ctx = self.next_ctx;
        self.next_ctx += 1;
        self.bufs.insert(ctx, (a.tag, vec![0; a.len as usize]));
        Decision::Accept { len: a.len, ctx }
    }
}

struct Node {
    eng: Eng,
    upper: Upper,
    /// Messages waiting for a free send slot: (dst, tag, len).
    queue: VecDeque<(u32, u64, usize)>,
    /// Bytes of messages in flight, by cookie (= tag).
    out: HashMap<u64, Vec<u8>>,
    /// Tags sent per destination, in msgNum order.
    sent_order: HashMap<u32, Vec<u64>>,
    sends_done: usize,
    recvs_done: HashSet<u64>,
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: u64,
    id: u64,
    to: u32,
    frame: Vec<u8>,
}

struct Params {
    seed: u64,
    nodes: usize,
    msgs_per_pair: usize,
    /// Message sizes are drawn from these, uniformly.
    sizes: &'static [std::ops::RangeInclusive<usize>],
    loss_ppm: u32,
    dup_ppm: u32,
    reorder_ppm: u32,
    /// Fraction of sends that the application aborts shortly after starting them.
    abort_ppm: u32,
    jitter: u64,
    send_slots: usize,
    recv_slots: usize,
    max_data_pkts: u32,
    max_retries: u32,
    restart: RestartPolicy,
    reclaim: u64,
    /// Posted receives per node (0: unlimited).
    recv_window: usize,
    /// Only node 0 sends (to every other node).
    one_way: bool,
    /// Node `i` uses `recovery[i % len]`.
    recovery: &'static [Recovery],
    /// The senders' retransmission timeout, and the smallest one the
    /// round-trip estimate may set (0: fixed).
    rto: u64,
    min_rto: u64,
}

impl Params {
    fn new(seed: u64, loss_ppm: u32) -> Self {
        Params {
            seed,
            nodes: 4,
            msgs_per_pair: 16,
            sizes: &[0..=100, 1..=1456, 1457..=20_000],
            loss_ppm,
            dup_ppm: 5_000,
            reorder_ppm: 5_000,
            abort_ppm: 0,
            jitter: 40 * US,
            send_slots: 6,
            recv_slots: 12,
            max_data_pkts: 16,
            max_retries: 60,
            restart: RestartPolicy::FromStart,
            reclaim: 600_000 * MS,
            recv_window: 0,
            one_way: false,
            recovery: &[Recovery::Timeout],
            rto: MS,
            min_rto: 0,
        }
    }
}

#[derive(Debug, Default)]
struct Stats {
    packets: u64,
    lost: u64,
    dups: u64,
    rx_drops: u64,
    end_time: u64,
    aborted: usize,
    #[allow(dead_code)]
    bytes: u64,
    /// Sender retransmission timeouts (all nodes).
    timeouts: u64,
    /// Packets sent again (timeouts and NAKs).
    resent: u64,
    /// NAKs sent.
    naks: u64,
}

fn run(p: &Params) -> Stats {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut nodes: Vec<Node> = (0..p.nodes)
        .map(|i| {
            let mut cfg = Config::new(i as u32);
            cfg.retransmit_timeout = p.rto;
            cfg.min_retransmit_timeout = p.min_rto;
            cfg.max_retries = p.max_retries;
            cfg.max_data_pkts = p.max_data_pkts;
            cfg.restart = p.restart;
            cfg.reclaim_timeout = p.reclaim;
            cfg.first_msg_id = rng.gen();
            cfg.recovery = p.recovery[i % p.recovery.len()];
            let eng = Engine::new(
                cfg,
                vec![SendSlot::default(); p.send_slots],
                vec![RecvSlot::default(); p.recv_slots],
                vec![PeerState::default(); p.nodes],
            )
            .unwrap();
            Node {
                eng,
                upper: Upper {
                    window: p.recv_window,
                    ..Upper::default()
                },
                queue: VecDeque::new(),
                out: HashMap::new(),
                sent_order: HashMap::new(),
                sends_done: 0,
                recvs_done: HashSet::new(),
            }
        })
        .collect();
    // Every node sends to every other node (both directions at once).
    let mut total = 0usize;
    let mut bytes = 0u64;
    for idx in 0..p.msgs_per_pair {
        for src in 0..p.nodes {
            for dst in 0..p.nodes {
                if src == dst || (p.one_way && src != 0) {
                    continue;
                }
                let range = &p.sizes[rng.gen_range(0..p.sizes.len())];
                let len = rng.gen_range(range.clone());
                nodes[src]
                    .queue
                    .push_back((dst as u32, tag_of(src, dst, idx), len));
                total += 1;
                bytes += len as u64;
            }
        }
    }
    let mut net: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut next_id = 0u64;
    let mut last_arrival = vec![0u64; p.nodes * p.nodes];
    let mut stats = Stats {
        bytes,
        ..Stats::default()
    };
    let mut now = 0u64;
    let mut pending_aborts: Vec<(u64, usize, srnic_proto::rmpp::SendHandle, u64)> = Vec::new();
    let mut aborted: HashSet<u64> = HashSet::new();
    let limit = 60_000 * MS;
    // Debugging aid: RMPP_TRACE_TAG=<hex tag> prints every packet of that message.
    let trace_tag = std::env::var("RMPP_TRACE_TAG")
        .ok()
        .and_then(|t| u64::from_str_radix(&t, 16).ok());
    let mut traced: Option<(u32, u32)> = None;
    let show = |traced: Option<(u32, u32)>, now: u64, what: &str, frame: &[u8]| {
        let pk = srnic_proto::rmpp::Packet::new_unchecked(frame);
        if traced == Some((pk.src_nid(), pk.msg_id())) {
            if let Ok(r) = srnic_proto::rmpp::Repr::parse(&pk) {
                eprintln!(
                    "{:>10} {what:<24} {:?} seq {} info1 {} info2 {} plen {}",
                    now, r.ptype, r.seq, r.info1, r.info2, r.payload_len
                );
            }
        }
    };
    loop {
        // Application: start queued sends while the send table has room.
        pending_aborts.retain(|&(at, i, h, tag)| {
            if at > now {
                return true;
            }
            if nodes[i].eng.abort(now, h).is_ok() {
                aborted.insert(tag);
            }
            false
        });
        for (i, node) in nodes.iter_mut().enumerate() {
            while let Some(&(dst, tag, len)) = node.queue.front() {
                match node.eng.send(now, dst, len as u32, tag, tag) {
                    Ok(h) => {
                        if rng.gen_range(0..1_000_000) < p.abort_ppm {
                            pending_aborts.push((now + rng.gen_range(0..2 * MS), i, h, tag));
                        }
                        if trace_tag == Some(tag) {
                            traced = Some((node.eng.config().local_nid, h.0));
                        }
                        node.queue.pop_front();
                        node.out.insert(tag, content(tag, len));
                        node.sent_order.entry(dst).or_default().push(tag);
                    }
                    Err(SendError::Full) => break,
                    Err(e) => panic!("send: {e:?}"),
                }
            }
        }
        // Transmit everything the engines want to send.
        for (from, node) in nodes.iter_mut().enumerate() {
            let mut hdr = [0u8; HEADER_LEN];
            while let Some(t) = node.eng.poll_transmit(now, &mut hdr) {
                let mut frame = hdr.to_vec();
                if let Some(pl) = t.payload {
                    let data = &node.out[&pl.cookie];
                    frame.extend_from_slice(&data[pl.offset as usize..][..pl.len as usize]);
                }
                assert!(frame.len() <= usize::from(node.eng.config().mtu));
                assert_ne!(t.to as usize, from);
                stats.packets += 1;
                let copies = if rng.gen_range(0..1_000_000) < p.dup_ppm {
                    stats.dups += 1;
                    2
                } else {
                    1
                };
                for _ in 0..copies {
                    if rng.gen_range(0..1_000_000) < p.loss_ppm {
                        show(traced, now, "lost", &frame);
                        stats.lost += 1;
                        continue;
                    }
                    // Links are FIFO (as Ethernet and the paper's MPP networks are)
                    // with random latency; a few packets take a slow path and overtake
                    // or fall behind their neighbours.
                    let link = &mut last_arrival[from * p.nodes + t.to as usize];
                    let mut at = now + 5 * US + rng.gen_range(0..=p.jitter);
                    if rng.gen_range(0..1_000_000) < p.reorder_ppm {
                        at += rng.gen_range(0..=4 * p.jitter);
                    } else {
                        at = at.max(*link);
                        *link = at;
                    }
                    next_id += 1;
                    net.push(Reverse(InFlight {
                        at,
                        id: next_id,
                        to: t.to,
                        frame: frame.clone(),
                    }));
                }
            }
            // Completions.
            while let Some(c) = node.eng.poll_completion() {
                match c {
                    Completion::Send { cookie, status, .. } => {
                        let len = node
                            .out
                            .remove(&cookie)
                            .expect("completion for unknown send")
                            .len();
                        if status == SendStatus::Aborted {
                            assert!(aborted.contains(&cookie));
                        } else {
                            assert_eq!(
                                status,
                                SendStatus::Delivered {
                                    accepted: len as u32
                                },
                                "send {cookie:#x}"
                            );
                        }
                        node.sends_done += 1;
                    }
                    Completion::Recv {
                        ctx,
                        tag,
                        len,
                        accepted,
                        status,
                        ..
                    } => {
                        assert_eq!(len, accepted);
                        node.upper.in_use -= 1;
                        let (t, buf) = node.upper.bufs.remove(&ctx).expect("unknown ctx");
                        assert_eq!(t, tag);
                        if status != RecvStatus::Complete {
                            assert_eq!(status, RecvStatus::Aborted);
                            assert!(aborted.contains(&tag), "{tag:#x} aborted by the network");
                            continue;
                        }
                        assert!(
                            buf == content(tag, len as usize),
                            "message {tag:#x} corrupted"
                        );
                        assert!(
                            node.recvs_done.insert(tag),
                            "message {tag:#x} completed twice"
                        );
                    }
                }
            }
        }
        let sends_done: usize = nodes.iter().map(|n| n.sends_done).sum();
        let recvs_done: usize = nodes
            .iter()
            .map(|n| n.recvs_done.iter().filter(|t| !aborted.contains(t)).count())
            .sum();
        if sends_done == total
            && recvs_done == total - aborted.len()
            && net.is_empty()
            && nodes.iter().all(|n| n.eng.active_sends() == 0)
        {
            break;
        }
        // Advance the virtual clock to the next event.
        let wake = nodes
            .iter()
            .filter_map(|n| n.eng.poll_timeout())
            .chain(pending_aborts.iter().map(|a| a.0))
            .min();
        let next_pkt = net.peek().map(|Reverse(f)| f.at);
        now = match (wake, next_pkt) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => panic!("stuck: {sends_done}/{total} sent, {recvs_done} received"),
        };
        assert!(
            now < limit,
            "too slow: {sends_done}/{total} sent, {recvs_done} received, {stats:?}"
        );
        while net.peek().is_some_and(|Reverse(f)| f.at <= now) {
            let Reverse(f) = net.pop().unwrap();
            let node = &mut nodes[f.to as usize];
            let upper = &mut node.upper;
            let mut up = |a: &Arrival<'_>| upper.arrival(a);
            let res = node.eng.receive(now, &f.frame, &mut up);
            show(
                traced,
                now,
                &format!("rx@{} {:?}", f.to, res.as_ref().map(|p| p.is_some())),
                &f.frame,
            );
            match res {
                Ok(Some(pl)) => {
                    let buf = &mut node.upper.bufs.get_mut(&pl.ctx).unwrap().1;
                    buf[pl.offset as usize..][..pl.data.len()].copy_from_slice(pl.data);
                }
                Ok(None) => {}
                Err(_) => stats.rx_drops += 1,
            }
        }
        for node in nodes.iter_mut() {
            if node.eng.poll_timeout().is_some_and(|t| t <= now) {
                node.eng.handle_timeout(now);
            }
        }
    }
    stats.end_time = now;
    stats.aborted = aborted.len();
    for n in &nodes {
        let c = n.eng.counters();
        stats.timeouts += c.retransmits;
        stats.resent += c.resent_pkts;
        stats.naks += c.naks_sent;
    }
    // Per-peer arrival order is send (msgNum) order.
    for (dst, node) in nodes.iter().enumerate() {
        for (src, sender) in nodes.iter().enumerate() {
            if src == dst {
                continue;
            }
            let sent = sender
                .sent_order
                .get(&(dst as u32))
                .cloned()
                .unwrap_or_default();
            let arrived = node
                .upper
                .arrivals
                .get(&(src as u32))
                .cloned()
                .unwrap_or_default();
            // Arrival order is send order; only aborted messages may be missing.
            let expect: Vec<u64> = sent
                .iter()
                .copied()
                .filter(|t| !aborted.contains(t) || arrived.contains(t))
                .collect();
            assert_eq!(expect, arrived, "order {src} -> {dst}");
        }
    }
    // No state left once the reclaim timeout has passed.
    now += p.reclaim + 1;
    for node in nodes.iter_mut() {
        node.eng.handle_timeout(now);
        let mut hdr = [0u8; HEADER_LEN];
        assert!(node.eng.poll_transmit(now, &mut hdr).is_none());
        while let Some(c) = node.eng.poll_completion() {
            // Only a receive whose sender aborted (and whose NULL was lost) may be
            // left to the reclaim timeout.
            match c {
                Completion::Recv {
                    tag,
                    status: RecvStatus::Abandoned,
                    ..
                } => assert!(aborted.contains(&tag)),
                c => panic!("late completion {c:?}"),
            }
        }
        assert_eq!(node.eng.active_sends(), 0);
        assert_eq!(node.eng.active_recvs(), 0);
        assert_eq!(node.eng.outstanding(), 0);
        assert_eq!(node.eng.poll_timeout(), None);
    }
    stats
}

#[test]
fn lossless() {
    let mut p = Params::new(1, 0);
    p.dup_ppm = 0;
    p.jitter = 0;
    let s = run(&p);
    assert_eq!(s.lost, 0);
    eprintln!("{s:?}");
}

#[test]
fn loss_0_1_percent_with_large_messages() {
    let mut p = Params::new(2, 1_000);
    p.msgs_per_pair = 4;
    p.sizes = &[0..=64, 100_000..=300_000];
    let s = run(&p);
    eprintln!("{s:?}");
}

#[test]
fn loss_1_percent() {
    let mut p = Params::new(3, 10_000);
    p.sizes = &[0..=100, 1..=1456, 1457..=60_000];
    let s = run(&p);
    eprintln!("{s:?}");
    assert!(s.lost > 0);
}

#[test]
fn loss_5_percent() {
    let mut p = Params::new(4, 50_000);
    p.sizes = &[0..=100, 1..=1456, 1457..=12_000];
    p.dup_ppm = 20_000;
    let s = run(&p);
    eprintln!("{s:?}");
    assert!(s.lost > 0);
}

#[test]
fn loss_5_percent_resume_from_last_grant() {
    let mut p = Params::new(5, 50_000);
    p.sizes = &[1..=1456, 20_000..=100_000];
    p.msgs_per_pair = 3;
    p.restart = RestartPolicy::FromLastGrant;
    p.max_data_pkts = 8;
    let s = run(&p);
    eprintln!("{s:?}");
}

#[test]
fn loss_20_percent() {
    let mut p = Params::new(6, 200_000);
    p.msgs_per_pair = 30;
    p.sizes = &[0..=100, 1..=1456, 1457..=4_000];
    p.dup_ppm = 20_000;
    p.max_retries = 200;
    // GCH is lost often at this rate; the default ten-minute reclaim is kept, so
    // the receive tables only drain through the lost-GCH probe.
    let s = run(&p);
    eprintln!("{s:?}");
    assert!(s.lost > 0);
}

#[test]
fn loss_20_percent_resume_from_last_grant() {
    let mut p = Params::new(7, 200_000);
    p.sizes = &[1457..=30_000];
    p.msgs_per_pair = 3;
    p.restart = RestartPolicy::FromLastGrant;
    p.max_data_pkts = 2;
    p.max_retries = 200;
    p.reclaim = 300 * MS;
    let s = run(&p);
    eprintln!("{s:?}");
}

#[test]
fn many_peers_small_tables() {
    // Six nodes, tiny tables: exercises send-table Full and receive-table Full.
    let mut p = Params::new(8, 10_000);
    p.nodes = 6;
    p.send_slots = 2;
    p.recv_slots = 3;
    p.msgs_per_pair = 5;
    p.sizes = &[0..=2_000, 2_000..=8_000];
    p.max_retries = 200;
    p.reclaim = 300 * MS;
    let s = run(&p);
    eprintln!("{s:?}");
}

#[test]
fn sweep_loss_rates_and_seeds() {
    for (loss, max_size) in [
        (0, 40_000),
        (1_000, 40_000),
        (10_000, 20_000),
        (50_000, 8_000),
        (200_000, 3_000),
    ] {
        for seed in 0..4 {
            let mut p = Params::new(1000 + seed, loss);
            p.msgs_per_pair = 6;
            p.jitter = 200 * US;
            p.reorder_ppm = 20_000;
            p.dup_ppm = 20_000;
            p.max_retries = 200;
            p.reclaim = 300 * MS;
            p.sizes = match max_size {
                40_000 => &[0..=1456, 1457..=40_000],
                20_000 => &[0..=1456, 1457..=20_000],
                8_000 => &[0..=1456, 1457..=8_000],
                _ => &[0..=1456, 1457..=3_000],
            };
            run(&p);
        }
    }
}

#[test]
fn aborts_under_loss() {
    // A tenth of the sends are aborted at a random moment: NULL keeps the per-peer
    // numbering in step, so every other message still arrives in order.
    for (seed, loss) in [(20, 0), (21, 10_000), (22, 50_000)] {
        let mut p = Params::new(seed, loss);
        p.abort_ppm = 100_000;
        p.sizes = &[0..=1456, 1457..=30_000];
        p.max_retries = 200;
        p.reclaim = 300 * MS;
        let s = run(&p);
        eprintln!("{s:?}");
        assert!(s.aborted > 0);
    }
}

#[test]
fn kernel_like_windows_heavy_reordering() {
    // As the VM case rmpp_loss runs srnic: one sender with eight messages in
    // flight, a receiver with sixteen posted receives (more arrivals are
    // deferred), restart from the last grant, and netem's heavy reordering.
    for seed in 0..std::env::var("RMPP_SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8u64)
    {
        for loss in [1_000, 10_000, 50_000] {
            let mut p = Params::new(5000 + seed, loss);
            p.nodes = 2;
            p.one_way = true;
            p.msgs_per_pair = 150;
            p.sizes = &[1..=1, 1456..=1457, 8192..=8192, 32768..=32768];
            p.dup_ppm = 10_000;
            p.reorder_ppm = 100_000;
            p.jitter = 1_000 * US;
            p.send_slots = 8;
            p.recv_slots = 32;
            p.recv_window = 16;
            p.max_retries = 100_000;
            p.restart = RestartPolicy::FromLastGrant;
            let s = run(&p);
            eprintln!("seed {seed} loss {loss}: {s:?}");
        }
    }
}

const ALL_RECOVERY: [Recovery; 3] = [Recovery::Timeout, Recovery::Nak, Recovery::SelectiveNak];

#[test]
fn naks_under_loss_duplication_and_reordering() {
    for rec in ALL_RECOVERY {
        for (seed, loss) in [(40, 10_000), (41, 50_000), (42, 200_000)] {
            let mut p = Params::new(seed, loss);
            p.recovery = match rec {
                Recovery::Timeout => &[Recovery::Timeout],
                Recovery::Nak => &[Recovery::Nak],
                Recovery::SelectiveNak => &[Recovery::SelectiveNak],
            };
            p.sizes = &[0..=1456, 1457..=30_000];
            p.reorder_ppm = 50_000;
            p.dup_ppm = 20_000;
            p.max_retries = 200;
            p.reclaim = 300 * MS;
            p.restart = RestartPolicy::FromLastGrant;
            let s = run(&p);
            eprintln!("{rec:?} loss {loss}: {s:?}");
            if rec != Recovery::Timeout {
                assert!(s.naks > 0, "{rec:?} sent no NAK at {loss} ppm");
            }
        }
    }
}

#[test]
fn mixed_recovery_peers_interoperate() {
    // Every pair of settings talks: NAKs are used only where both offer them.
    let mut p = Params::new(43, 50_000);
    p.nodes = 6;
    p.recovery = &[Recovery::SelectiveNak, Recovery::Timeout, Recovery::Nak];
    p.sizes = &[0..=1456, 1457..=20_000];
    p.max_retries = 200;
    p.reclaim = 300 * MS;
    let s = run(&p);
    eprintln!("{s:?}");
    assert!(s.naks > 0);
}

/// One sender and one receiver, forty 64 KiB messages, 2 % loss on FIFO links
/// (no duplication or reordering), restarts from the last grant and retries
/// without end: the traffic the recovery comparisons below run.
fn one_sender_64k(seed: u64) -> Params {
    let mut p = Params::new(seed, 20_000);
    p.nodes = 2;
    p.one_way = true;
    p.msgs_per_pair = 40;
    p.sizes = &[65_536..=65_536];
    p.dup_ppm = 0;
    p.reorder_ppm = 0;
    p.max_retries = 1_000;
    p.restart = RestartPolicy::FromLastGrant;
    p
}

#[test]
fn naks_recover_before_the_timeout() {
    // One sender, large messages, 2 % loss on FIFO links: the paper's question.
    // The same seed gives every mode the same traffic; NAKs must replace most
    // timeouts, and selective NAKs must resend less than go-back NAKs.
    let run_mode = |rec: &'static [Recovery]| {
        let mut p = one_sender_64k(44);
        p.recovery = rec;
        run(&p)
    };
    let t = run_mode(&[Recovery::Timeout]);
    let n = run_mode(&[Recovery::Nak]);
    let sn = run_mode(&[Recovery::SelectiveNak]);
    for (name, s) in [("timeout", &t), ("nak", &n), ("selective", &sn)] {
        eprintln!(
            "{name:>9}: lost {} timeouts {} resent {} naks {} time {} us",
            s.lost,
            s.timeouts,
            s.resent,
            s.naks,
            s.end_time / US
        );
    }
    assert!(n.timeouts * 2 < t.timeouts, "nak {n:?} timeout {t:?}");
    assert!(
        sn.timeouts * 2 < t.timeouts,
        "selective {sn:?} timeout {t:?}"
    );
    assert!(sn.resent < n.resent, "selective {sn:?} nak {n:?}");
    assert!(sn.end_time < t.end_time && n.end_time < t.end_time);
}

#[test]
fn adaptive_timeout_recovers_sooner() {
    // A timeout sized for a slow receiver (here 400 round trips) against one
    // that follows the measured round trip: the same traffic and losses (2 %,
    // one sender, 64 KiB messages), with each recovery. Losses that no later
    // packet reveals (a block's last packet, a CTS, a NAK) wait for the timeout;
    // with the estimate they wait a few round trips.
    for rec in [&[Recovery::Timeout], &[Recovery::SelectiveNak]] {
        let run_rto = |min_rto: u64| {
            let mut p = one_sender_64k(45);
            p.recovery = rec;
            p.rto = 20 * MS;
            p.min_rto = min_rto;
            run(&p)
        };
        let fixed = run_rto(0);
        let adaptive = run_rto(20 * US);
        for (name, s) in [("fixed", &fixed), ("adaptive", &adaptive)] {
            eprintln!(
                "{:?} {name:>8}: lost {} timeouts {} resent {} time {} us",
                rec[0],
                s.lost,
                s.timeouts,
                s.resent,
                s.end_time / US
            );
        }
        assert!(fixed.timeouts > 0, "{fixed:?}");
        assert!(
            adaptive.end_time * 4 < fixed.end_time,
            "adaptive {adaptive:?} fixed {fixed:?}"
        );
    }
}
