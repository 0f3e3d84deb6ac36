// SPDX-License-Identifier: GPL-2.0
//! The VMTP engine: two hosts, clients on one and servers on the other, over
//! a simulated network with a virtual clock and seeded loss, duplication and
//! reordering. Every run checks that each Request reaches its server exactly
//! once, byte for byte, that every Response arrives byte for byte, that
//! selective retransmission sends only what is missing, and that nothing is
//! left once the records' linger has passed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srnic_proto::vmtp::checksum::Summer;
use srnic_proto::vmtp::engine::{
    destination, Addr, Completion, Config, Csr, Decision, Engine, Handle, Local, Role, RxDrop,
    TxKind, TxStatus,
};
use srnic_proto::vmtp::wire::code;
use srnic_proto::vmtp::{Code, EntityId, HEADER_LEN};

type Eng = Engine<Vec<Local>, Vec<Csr>>;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;
const A: Addr = [10, 0, 0, 1];
const B: Addr = [10, 0, 0, 2];

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| {
            ((seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i.wrapping_mul(0xd6e8_feb8_6659_fd93))
                >> 27) as u8
        })
        .collect()
}

/// The Response a server gives to a Request: its bytes reversed, then a
/// pattern up to `resp_len`.
fn answer(req: &[u8], resp_len: usize, seed: u64) -> Vec<u8> {
    let mut v: Vec<u8> = req.iter().rev().copied().collect();
    v.resize(resp_len, 0);
    let tail = pattern(seed, resp_len);
    let from = req.len().min(resp_len);
    v[from..].copy_from_slice(&tail[from..]);
    v
}

/// Packets a host sent: where to, the bytes, and what they were.
type Packets = Vec<(Addr, Vec<u8>, TxKind)>;

struct Host {
    eng: Eng,
    /// Outgoing messages by cookie.
    out: HashMap<u64, Vec<u8>>,
    /// Receive buffers by ctx.
    bufs: HashMap<u64, Vec<u8>>,
    next_ctx: u64,
    completions: Vec<Completion>,
    /// Request arrivals (first packets offered) per (client, transaction).
    arrivals: HashMap<(u64, u32), usize>,
    /// Refuse Requests with this code.
    refuse: Option<u32>,
    /// Defer this many new Requests (no buffer yet).
    defer: usize,
}

impl Host {
    fn new(cfg: Config, seed: u32) -> Self {
        Host {
            eng: Engine::new(
                cfg,
                vec![Local::default(); 8],
                vec![Csr::default(); 8],
                seed,
            )
            .unwrap(),
            out: HashMap::new(),
            bufs: HashMap::new(),
            next_ctx: 1,
            completions: Vec::new(),
            arrivals: HashMap::new(),
            refuse: None,
            defer: 0,
        }
    }

    /// Every packet the engine wants to send now: (destination, bytes, kind).
    fn transmit(&mut self, now: u64) -> Packets {
        let mut v = Vec::new();
        let mut hdr = [0u8; HEADER_LEN];
        let checksum = self.eng.config().checksum;
        while let Some(t) = self.eng.poll_transmit(now, &mut hdr) {
            let mut p = hdr.to_vec();
            if let Some(pl) = t.payload {
                p.extend_from_slice(&self.out[&pl.cookie][pl.offset as usize..][..pl.len as usize]);
            }
            p.resize(p.len() + t.pad as usize, 0);
            if checksum {
                let mut s = Summer::default();
                s.update(&p);
                p.extend_from_slice(&s.finish());
            } else {
                p.extend_from_slice(&[0; 4]);
            }
            v.push((t.to, p, t.kind));
        }
        while let Some(c) = self.eng.poll_completion() {
            self.completions.push(c);
        }
        v
    }

    fn receive(&mut self, now: u64, src: Addr, p: &[u8]) -> Result<(), RxDrop> {
        let bufs = &mut self.bufs;
        let next_ctx = &mut self.next_ctx;
        let arrivals = &mut self.arrivals;
        let refuse = self.refuse;
        let defer = &mut self.defer;
        let mut up = |a: &srnic_proto::vmtp::engine::Arrival| {
            *arrivals.entry((a.client.0, a.transaction)).or_default() += 1;
            if let Some(c) = refuse {
                return Decision::Refuse(c);
            }
            if *defer > 0 {
                *defer -= 1;
                return Decision::Defer;
            }
            let ctx = *next_ctx;
            *next_ctx += 1;
            bufs.insert(ctx, vec![0; a.len as usize]);
            Decision::Accept { ctx, max: a.len }
        };
        let placements = self.eng.receive(now, src, p, &mut up)?;
        for pl in placements {
            let b = self
                .bufs
                .get_mut(&pl.ctx)
                .expect("placement into an unknown buffer");
            b[pl.offset as usize..][..pl.data.len()].copy_from_slice(pl.data);
        }
        while let Some(c) = self.eng.poll_completion() {
            self.completions.push(c);
        }
        Ok(())
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: u64,
    id: u64,
    to_b: bool,
    bytes: Vec<u8>,
}

#[derive(Clone)]
struct Params {
    seed: u64,
    loss_ppm: u32,
    dup_ppm: u32,
    reorder_ppm: u32,
    clients: usize,
    transactions: usize,
    sizes: &'static [(usize, usize)],
    cfg: Config,
    /// Drop the packets for which this returns true (after random loss).
    drop: fn(&[u8], TxKind) -> bool,
}

impl Params {
    fn new(seed: u64, loss_ppm: u32) -> Self {
        let mut cfg = Config::new();
        cfg.max_retries = 50;
        cfg.linger = cfg.response_timeout * 52;
        Params {
            seed,
            loss_ppm,
            dup_ppm: 5_000,
            reorder_ppm: 5_000,
            clients: 3,
            transactions: 20,
            sizes: &[
                (0, 0),
                (1, 1),
                (100, 5000),
                (5000, 100),
                (16384, 16384),
                (1400, 1500),
            ],
            cfg,
            drop: |_, _| false,
        }
    }
}

#[derive(Debug, Default)]
struct Stats {
    packets: u64,
    lost: u64,
    end: u64,
    retransmitted_blocks: u64,
    notifies: u64,
    timeouts: u64,
    /// Per host (A, B): blocks it sent again, and blocks it asked the other
    /// to send again.
    resent: [u64; 2],
    asked: [u64; 2],
}

/// Runs `transactions` per client from host A to one server on host B.
fn run(p: &Params) -> Stats {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut a = Host::new(p.cfg, rng.gen());
    let mut b = Host::new(p.cfg, rng.gen());
    let server = EntityId::internet(100, B);
    let sh = b.eng.open(server, Role::Server).unwrap();
    let clients: Vec<(EntityId, Handle)> = (0..p.clients)
        .map(|i| {
            let e = EntityId::internet(1 + i as u32, A);
            (e, a.eng.open(e, Role::Client).unwrap())
        })
        .collect();
    // Per client: transactions done, and what the current one expects back.
    let mut done = vec![0usize; p.clients];
    let mut expect: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut net: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let (mut id, mut now, mut stats) = (0u64, 0u64, Stats::default());
    let mut last = [0u64; 2];
    let start = |a: &mut Host,
                 expect: &mut HashMap<u64, Vec<u8>>,
                 c: usize,
                 k: usize,
                 now: u64,
                 rng: &mut ChaCha8Rng| {
        let (req_len, resp_len) = p.sizes[rng.gen_range(0..p.sizes.len())];
        let cookie = ((c as u64) << 32) | k as u64;
        let req = pattern(cookie, req_len);
        let ctx = 1_000_000 + cookie;
        a.bufs.insert(ctx, vec![0; resp_len]);
        expect.insert(ctx, answer(&req, resp_len, cookie));
        a.out.insert(cookie, req);
        let mut user = [0u8; 12];
        user[..4].copy_from_slice(&(resp_len as u32).to_be_bytes());
        user[4..12].copy_from_slice(&cookie.to_be_bytes());
        a.eng
            .request(
                now,
                clients[c].1,
                server,
                B,
                Code(code::APPLICATION),
                user,
                req_len as u32,
                cookie,
                ctx,
                resp_len as u32,
            )
            .unwrap();
    };
    for c in 0..p.clients {
        start(&mut a, &mut expect, c, 0, now, &mut rng);
    }
    let limit = 600_000 * MS;
    loop {
        // Servers answer what arrived.
        for c in std::mem::take(&mut b.completions) {
            match c {
                Completion::Request {
                    server: s,
                    client,
                    transaction,
                    user,
                    len,
                    ctx,
                    ..
                } => {
                    assert_eq!(s, sh);
                    let resp_len = u32::from_be_bytes(user[..4].try_into().unwrap()) as usize;
                    let cookie = u64::from_be_bytes(user[4..12].try_into().unwrap());
                    let req = b.bufs.remove(&ctx).unwrap();
                    assert_eq!(req.len(), len as usize);
                    assert!(
                        req == pattern(cookie, len as usize),
                        "request {cookie:#x} corrupted"
                    );
                    let resp = answer(&req, resp_len, cookie);
                    let rc = ctx | 1 << 40;
                    b.out.insert(rc, resp);
                    b.eng
                        .respond(
                            now,
                            sh,
                            client,
                            transaction,
                            Code(code::OK),
                            [7; 20],
                            resp_len as u32,
                            rc,
                        )
                        .unwrap();
                }
                Completion::ResponseReleased { cookie, .. } => {
                    b.out.remove(&cookie).unwrap();
                }
                Completion::RequestAbandoned { ctx, .. } => {
                    b.bufs.remove(&ctx).unwrap();
                }
                c => panic!("server: {c:?}"),
            }
        }
        // Clients check Responses and start their next transaction.
        for c in std::mem::take(&mut a.completions) {
            let Completion::Transaction {
                client,
                cookie,
                ctx,
                status,
                ..
            } = c
            else {
                panic!("client: {c:?}");
            };
            let i = clients.iter().position(|&(_, h)| h == client).unwrap();
            match status {
                TxStatus::Response {
                    code: rc,
                    user,
                    len,
                } => {
                    assert_eq!(rc.value(), code::OK);
                    assert_eq!(user, [7; 20]);
                    let got = a.bufs.remove(&ctx).unwrap();
                    assert_eq!(len as usize, got.len());
                    assert!(
                        got == expect.remove(&ctx).unwrap(),
                        "response {cookie:#x} corrupted"
                    );
                }
                s => panic!("transaction {cookie:#x}: {s:?}"),
            }
            a.out.remove(&cookie).unwrap();
            done[i] += 1;
            if done[i] < p.transactions {
                start(&mut a, &mut expect, i, done[i], now, &mut rng);
            }
        }
        let mut sent = a.transmit(now);
        sent.extend(b.transmit(now));
        for (to, bytes, kind) in sent {
            stats.packets += 1;
            let to_b = to == B;
            let copies = if rng.gen_range(0..1_000_000) < p.dup_ppm {
                2
            } else {
                1
            };
            for _ in 0..copies {
                if rng.gen_range(0..1_000_000) < p.loss_ppm || (p.drop)(&bytes, kind) {
                    stats.lost += 1;
                    continue;
                }
                let link = &mut last[usize::from(to_b)];
                let mut at = now + 50 * US + rng.gen_range(0..=20 * US);
                if rng.gen_range(0..1_000_000) < p.reorder_ppm {
                    at += rng.gen_range(0..=200 * US);
                } else {
                    at = at.max(*link);
                    *link = at;
                }
                id += 1;
                net.push(Reverse(InFlight {
                    at,
                    id,
                    to_b,
                    bytes: bytes.clone(),
                }));
            }
        }
        if done.iter().all(|&d| d == p.transactions)
            && net.is_empty()
            && a.completions.is_empty()
            && b.completions.is_empty()
        {
            break;
        }
        let wake = [a.eng.poll_timeout(), b.eng.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let next = net.peek().map(|Reverse(f)| f.at);
        now = match (wake, next) {
            (Some(x), Some(y)) => x.min(y),
            (Some(x), None) => x,
            (None, Some(y)) => y,
            (None, None) => panic!("stuck: {done:?}"),
        }
        .max(now);
        assert!(now < limit, "too slow: {done:?} {stats:?}");
        while net.peek().is_some_and(|Reverse(f)| f.at <= now) {
            let Reverse(f) = net.pop().unwrap();
            let _ = if f.to_b {
                b.receive(now, A, &f.bytes)
            } else {
                a.receive(now, B, &f.bytes)
            };
        }
        for h in [&mut a, &mut b] {
            if h.eng.poll_timeout().is_some_and(|t| t <= now) {
                h.eng.handle_timeout(now);
            }
        }
    }
    stats.end = now;
    // Each Request reached the server once.
    for (&(client, tx), &n) in &b.arrivals {
        assert_eq!(
            n, 1,
            "client {client:#x} transaction {tx}: offered {n} times"
        );
    }
    assert_eq!(b.arrivals.len(), p.clients * p.transactions);
    for (i, e) in [&a.eng, &b.eng].into_iter().enumerate() {
        let c = e.counters();
        stats.retransmitted_blocks += c.retransmitted_blocks;
        stats.notifies += c.notifies_sent;
        stats.timeouts += c.timeouts;
        stats.resent[i] = c.retransmitted_blocks;
        stats.asked[i] = c.blocks_requested;
    }
    // Nothing left once acknowledgements and lingers have run out.
    for _ in 0..40 {
        now += p.cfg.ack_timeout.max(p.cfg.linger);
        a.eng.handle_timeout(now);
        b.eng.handle_timeout(now);
        let to_a = b.transmit(now);
        let to_b = a.transmit(now);
        for (_, bytes, _) in to_a {
            let _ = a.receive(now, B, &bytes);
        }
        for (_, bytes, _) in to_b {
            let _ = b.receive(now, A, &bytes);
        }
        for c in std::mem::take(&mut b.completions) {
            if let Completion::ResponseReleased { cookie, .. } = c {
                b.out.remove(&cookie).unwrap();
            }
        }
    }
    assert!(
        b.out.is_empty(),
        "responses never released: {}",
        b.out.len()
    );
    assert!(a.eng.is_idle() && b.eng.is_idle(), "state left");
    stats
}

#[test]
fn lossless() {
    let mut p = Params::new(1, 0);
    p.dup_ppm = 0;
    p.reorder_ppm = 0;
    let s = run(&p);
    assert_eq!(
        (s.lost, s.retransmitted_blocks, s.timeouts),
        (0, 0, 0),
        "{s:?}"
    );
}

#[test]
fn loss_duplication_reordering() {
    for (seed, loss) in [(2, 1_000), (3, 10_000), (4, 50_000), (5, 200_000)] {
        let s = run(&Params::new(seed, loss));
        eprintln!("loss {loss} ppm: {s:?}");
        if loss >= 10_000 {
            assert!(s.retransmitted_blocks > 0 && s.notifies > 0, "{s:?}");
        }
    }
}

/// Under loss alone (no duplicated Notify makes a host send twice what was
/// asked once), a host sends again only blocks its peer asked for: the
/// counters the VM case vmtp_loss compares.
#[test]
fn loss_resends_only_what_was_asked() {
    for (seed, loss) in [(12, 10_000), (13, 50_000), (14, 200_000)] {
        let mut p = Params::new(seed, loss);
        p.dup_ppm = 0;
        p.reorder_ppm = 0;
        let s = run(&p);
        eprintln!("loss {loss} ppm: {s:?}");
        assert!(s.resent[0] > 0 && s.asked[1] > 0, "{s:?}");
        assert!(
            s.resent[0] <= s.asked[1] && s.resent[1] <= s.asked[0],
            "{s:?}"
        );
    }
}

#[test]
fn paced_groups() {
    let mut p = Params::new(6, 10_000);
    p.cfg.packet_gap = 200 * US;
    p.clients = 1;
    p.transactions = 5;
    p.sizes = &[(16384, 16384)];
    let paced = run(&p);
    p.cfg.packet_gap = 0;
    let unpaced = run(&p);
    // Twelve data packets per 16 KiB group, each 200 us after the last.
    assert!(
        paced.end > unpaced.end + 5 * 2 * 11 * 200 * US / 2,
        "{paced:?} {unpaced:?}"
    );
}

/// Drops the first transmission of the Request packets carrying blocks 2-3
/// and 8-9 (the second and fifth packet of a 16 KiB group).
fn drop_two_request_packets(bytes: &[u8], kind: TxKind) -> bool {
    let pd = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    kind == TxKind::Request && (pd == 0b1100 || pd == 0b11_0000_0000)
}

#[test]
fn selective_retransmission_sends_only_what_is_missing() {
    let mut p = Params::new(7, 0);
    p.dup_ppm = 0;
    p.reorder_ppm = 0;
    p.clients = 1;
    p.transactions = 1;
    p.sizes = &[(16384, 0)];
    p.drop = drop_two_request_packets;
    let s = run(&p);
    // The server's TS1 asks for blocks 2, 3, 8 and 9; exactly those go again.
    assert_eq!(s.retransmitted_blocks, 4, "{s:?}");
    assert_eq!((s.resent, s.asked), ([4, 0], [0, 4]), "{s:?}");
    assert_eq!(s.lost, 2);
    assert_eq!(s.timeouts, 0, "{s:?}");
}

fn two_hosts() -> (Host, Host, Handle, Handle, EntityId) {
    let mut cfg = Config::new();
    cfg.max_retries = 2;
    let mut a = Host::new(cfg, 1);
    let mut b = Host::new(cfg, 2);
    let server = EntityId::internet(100, B);
    let sh = b.eng.open(server, Role::Server).unwrap();
    let ch = a.eng.open(EntityId::internet(1, A), Role::Client).unwrap();
    a.out.insert(1, vec![5; 10]);
    (a, b, ch, sh, server)
}

#[test]
fn dead_server_fails_in_bounded_time() {
    let (mut a, _b, ch, _sh, server) = two_hosts();
    a.eng
        .request(0, ch, server, B, Code(1), [0; 12], 10, 1, 9, 0)
        .unwrap();
    let mut now = 0;
    let mut sent = 0;
    loop {
        sent += a.transmit(now).len();
        if !a.completions.is_empty() {
            break;
        }
        now = a.eng.poll_timeout().unwrap();
        a.eng.handle_timeout(now);
    }
    // The Request, then its header again twice (max_retries), then failure
    // at the third TC1.
    assert_eq!(sent, 3);
    assert_eq!(now, 3 * a.eng.config().response_timeout);
    assert!(matches!(
        a.completions[..],
        [Completion::Transaction {
            status: TxStatus::Failed(code::RETRANS_TIMEOUT),
            ..
        }]
    ));
    assert!(a.eng.is_idle());
}

#[test]
fn unknown_server_and_refusals_end_the_transaction() {
    let (mut a, mut b, ch, _sh, _server) = two_hosts();
    let nobody = EntityId::internet(77, B);
    a.eng
        .request(0, ch, nobody, B, Code(1), [0; 12], 10, 1, 9, 0)
        .unwrap();
    for (_, p, _) in a.transmit(0) {
        assert_eq!(b.receive(0, A, &p), Err(RxDrop::UnknownEntity));
    }
    for (_, p, kind) in b.transmit(0) {
        assert_eq!(kind, TxKind::Notify);
        a.receive(0, B, &p).unwrap();
    }
    assert!(matches!(
        a.completions.pop(),
        Some(Completion::Transaction {
            status: TxStatus::Failed(code::NONEXISTENT_ENTITY),
            ..
        })
    ));
    // A server that refuses: BUSY... is retried; NO_PERMISSION ends it.
    b.refuse = Some(code::NO_PERMISSION);
    let server = EntityId::internet(100, B);
    a.eng
        .request(0, ch, server, B, Code(1), [0; 12], 10, 1, 9, 0)
        .unwrap();
    for (_, p, _) in a.transmit(0) {
        b.receive(0, A, &p).unwrap();
    }
    for (_, p, _) in b.transmit(0) {
        a.receive(0, B, &p).unwrap();
    }
    assert!(matches!(
        a.completions.pop(),
        Some(Completion::Transaction {
            status: TxStatus::Failed(code::NO_PERMISSION),
            ..
        })
    ));
}

#[test]
fn retransmissions_while_processing_are_acknowledged() {
    let (mut a, mut b, ch, sh, server) = two_hosts();
    let tc1 = a.eng.config().response_timeout;
    a.bufs.insert(9, vec![0; 4]);
    a.eng
        .request(0, ch, server, B, Code(1), [0; 12], 10, 1, 9, 4)
        .unwrap();
    for (_, p, _) in a.transmit(0) {
        b.receive(0, A, &p).unwrap();
    }
    assert!(matches!(b.completions[..], [Completion::Request { .. }]));
    // The server takes ten TC1s; every header the client sends again is
    // answered with NotifyVmtpClient OK, so the client never gives up.
    let mut now = 0;
    for _ in 0..10 {
        now += tc1;
        a.eng.handle_timeout(now);
        for (_, p, kind) in a.transmit(now) {
            assert_eq!(kind, TxKind::Retransmit);
            assert_eq!(b.receive(now, A, &p), Err(RxDrop::Stale));
        }
        for (_, p, kind) in b.transmit(now) {
            assert_eq!(kind, TxKind::Notify);
            a.receive(now, B, &p).unwrap();
        }
        assert!(a.completions.is_empty());
    }
    let Some(Completion::Request {
        client,
        transaction,
        ..
    }) = b.completions.pop()
    else {
        panic!()
    };
    b.out.insert(2, vec![1, 2, 3, 4]);
    b.eng
        .respond(now, sh, client, transaction, Code(0), [0; 20], 4, 2)
        .unwrap();
    for (_, p, _) in b.transmit(now) {
        a.receive(now, B, &p).unwrap();
    }
    assert_eq!(a.bufs[&9], [1, 2, 3, 4]);
    assert!(matches!(
        a.completions[..],
        [Completion::Transaction {
            status: TxStatus::Response { len: 4, .. },
            ..
        }]
    ));
    assert_eq!(b.arrivals.len(), 1);
}

#[test]
fn bad_checksum_is_dropped() {
    let (mut a, mut b, ch, _sh, server) = two_hosts();
    a.eng
        .request(0, ch, server, B, Code(1), [0; 12], 10, 1, 9, 0)
        .unwrap();
    let (_, mut p, _) = a.transmit(0).pop().unwrap();
    p[HEADER_LEN] ^= 1;
    assert_eq!(b.receive(0, A, &p), Err(RxDrop::Checksum));
    assert!(b.arrivals.is_empty());
}

#[test]
fn datagram_requests_need_no_response() {
    let (mut a, mut b, ch, sh, server) = two_hosts();
    a.eng
        .request(0, ch, server, B, Code(code::DGM | 3), [1; 12], 10, 1, 9, 0)
        .unwrap();
    let sent = a.transmit(0);
    assert_eq!(sent.len(), 1);
    assert!(matches!(
        a.completions[..],
        [Completion::Transaction {
            status: TxStatus::Sent,
            ..
        }]
    ));
    for (_, p, _) in &sent {
        b.receive(0, A, p).unwrap();
        // A duplicate is recognised.
        assert_eq!(b.receive(0, A, p), Err(RxDrop::Stale));
    }
    let Some(Completion::Request {
        client,
        transaction,
        code: c,
        user,
        len,
        ..
    }) = b.completions.pop()
    else {
        panic!()
    };
    assert_eq!((c.value(), user, len), (3, [1; 12], 10));
    assert!(b.completions.is_empty());
    assert_eq!(
        b.eng
            .respond(0, sh, client, transaction, Code(0), [0; 20], 0, 5),
        Err(srnic_proto::vmtp::engine::CallError::NoRequest)
    );
    assert!(b.transmit(0).is_empty(), "no Notify, no Response");
}

#[test]
fn linger_must_outlast_the_retry_span() {
    use srnic_proto::vmtp::engine::ConfigError;
    // A server that forgets a transaction while its client may still retry
    // it would take the retry for a new Request (found by vmtp_engine
    // fuzzing): the configuration is refused.
    let mut c = Config::new();
    assert_eq!(c.validate(), Ok(()));
    c.linger = c.response_timeout * u64::from(c.max_retries + 1);
    assert_eq!(c.validate(), Err(ConfigError::LingerTooShort));
    c.linger += 1;
    assert_eq!(c.validate(), Ok(()));
    c.mtu = 500;
    assert_eq!(c.validate(), Err(ConfigError::MtuTooSmall));
}

#[test]
fn deferred_requests_come_again_with_the_retransmission() {
    let (mut a, mut b, ch, _sh, server) = two_hosts();
    let tc1 = a.eng.config().response_timeout;
    b.defer = 1;
    a.eng
        .request(0, ch, server, B, Code(1), [0; 12], 10, 1, 9, 0)
        .unwrap();
    for (_, p, _) in a.transmit(0) {
        assert_eq!(b.receive(0, A, &p), Err(RxDrop::Deferred));
    }
    // Nothing was remembered: no Notify, no record, no completion.
    assert!(b.transmit(0).is_empty());
    assert!(b.eng.is_idle());
    // TC1: the client sends its header again with APG; the server takes it
    // now, has no data yet and asks for every block.
    a.eng.handle_timeout(tc1);
    for now in tc1..tc1 + 4 {
        for (_, p, _) in a.transmit(now) {
            let _ = b.receive(now, A, &p);
        }
        for (_, p, _) in b.transmit(now) {
            let _ = a.receive(now, B, &p);
        }
        if !b.completions.is_empty() {
            break;
        }
    }
    assert!(matches!(
        b.completions[..],
        [Completion::Request { len: 10, .. }]
    ));
    let Completion::Request { ctx, .. } = b.completions[0] else {
        unreachable!()
    };
    assert_eq!(b.bufs[&ctx], vec![5; 10]);
    assert_eq!(b.arrivals.values().sum::<usize>(), 2);
}

#[test]
fn destination_names_the_entity_and_its_role() {
    let (mut a, mut b, ch, _sh, server) = two_hosts();
    let client = EntityId::internet(1, A);
    a.eng
        .request(0, ch, server, B, Code(1), [0; 12], 10, 1, 9, 0)
        .unwrap();
    let req = a.transmit(0);
    assert_eq!(destination(&req[0].1), Ok((server, Role::Server)));
    // A Request to nobody: the Notify is about the client.
    let mut bad = req[0].1.clone();
    let nobody = EntityId::internet(77, B);
    bad[24..32].copy_from_slice(&nobody.to_be_bytes());
    assert_eq!(destination(&bad), Ok((nobody, Role::Server)));
    for (_, p, _) in &req {
        b.receive(0, A, p).unwrap();
    }
    let Completion::Request { transaction, .. } = b.completions[0] else {
        unreachable!()
    };
    b.out.insert(3, vec![1; 4]);
    b.eng
        .respond(0, _sh, client, transaction, Code(0), [0; 20], 4, 3)
        .unwrap();
    let resp = b.transmit(0);
    assert_eq!(destination(&resp[0].1), Ok((client, Role::Client)));
    assert_eq!(
        destination(&resp[0].1[..10]).map(|_| ()),
        Err(RxDrop::Parse(
            srnic_proto::vmtp::wire::ParseError::Truncated
        ))
    );
}

/// [`two_hosts`] after one transaction: the client's Request reached the
/// server, whose 4-byte Response (cookie 3) the client received whole.
/// Returns the hosts, the client's handle and the Response's packets.
fn answered_transaction() -> (Host, Host, Handle, Packets) {
    let (mut a, mut b, ch, sh, server) = two_hosts();
    let client = EntityId::internet(1, A);
    a.bufs.insert(9, vec![0; 4]);
    a.eng
        .request(0, ch, server, B, Code(1), [0; 12], 10, 1, 9, 4)
        .unwrap();
    for (_, p, _) in a.transmit(0) {
        b.receive(0, A, &p).unwrap();
    }
    let Completion::Request { transaction, .. } = b.completions[0] else {
        unreachable!()
    };
    b.out.insert(3, vec![1; 4]);
    b.eng
        .respond(0, sh, client, transaction, Code(0), [0; 20], 4, 3)
        .unwrap();
    let response = b.transmit(0);
    for (_, p, _) in &response {
        a.receive(0, B, p).unwrap();
    }
    assert!(matches!(
        a.completions[..],
        [Completion::Transaction {
            status: TxStatus::Response { .. },
            ..
        }]
    ));
    (a, b, ch, response)
}

/// Whether server host `b` released the Response of `cookie` acknowledged.
fn response_acked(b: &Host, cookie: u64) -> bool {
    b.completions.iter().any(|c| {
        matches!(c, Completion::ResponseReleased { cookie: k, acked: true, .. } if *k == cookie)
    })
}

#[test]
fn a_closing_client_acknowledges_its_last_response() {
    let (mut a, mut b, ch, _) = answered_transaction();
    // Nothing acknowledged the Response yet; closing the client does.
    a.eng.close(ch);
    let sent = a.transmit(1);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].2, TxKind::Notify);
    b.receive(1, A, &sent[0].1).unwrap();
    assert!(response_acked(&b, 3));
    // The server sends nothing more about it.
    assert!(b.transmit(1).is_empty());
    b.eng.handle_timeout(b.eng.config().ack_timeout + 1);
    assert!(b.transmit(b.eng.config().ack_timeout + 1).is_empty());
}

#[test]
fn a_response_to_a_client_nobody_has_is_answered_and_discarded() {
    let (_a, mut b, _ch, response) = answered_transaction();
    // A host without the client (the engine of a namespace's stack, which
    // has no entity) gets the Response: it tells the server at once.
    let mut other = Host::new(Config::new(), 3);
    for (_, p, _) in &response {
        assert_eq!(other.receive(1, B, p), Err(RxDrop::UnknownEntity));
    }
    let sent = other.transmit(1);
    assert!(!sent.is_empty());
    for (to, p, kind) in &sent {
        assert_eq!((*to, *kind), (B, TxKind::Notify));
        b.receive(1, A, p).unwrap();
    }
    // The server discards the Response, unacknowledged, and sends no more.
    assert!(b.completions.iter().any(|c| matches!(
        c,
        Completion::ResponseReleased {
            cookie: 3,
            acked: false,
            ..
        }
    )));
    assert!(!response_acked(&b, 3));
    b.eng.handle_timeout(b.eng.config().ack_timeout + 1);
    assert!(b.transmit(b.eng.config().ack_timeout + 1).is_empty());
}

#[test]
fn a_late_copy_of_an_earlier_response_is_dropped_quietly() {
    let (mut a, mut b, ch, response) = answered_transaction();
    let server = EntityId::internet(100, B);
    // The client moves on; a copy of the first Response arrives late (the
    // server sent it again). The client has it: no NotifyVmtpServer goes
    // back, which would make the server discard it unacknowledged.
    a.completions.clear();
    a.bufs.insert(9, vec![0; 4]);
    a.eng
        .request(1, ch, server, B, Code(1), [0; 12], 10, 1, 9, 4)
        .unwrap();
    for (_, p, _) in &response {
        assert_eq!(a.receive(1, B, p), Err(RxDrop::Stale));
    }
    let sent = a.transmit(1);
    assert!(
        sent.iter().all(|(_, _, kind)| *kind == TxKind::Request),
        "{:?}",
        sent.iter().map(|s| s.2).collect::<Vec<_>>()
    );
    // The second Request acknowledges the first Response.
    for (_, p, _) in sent {
        b.receive(1, A, &p).unwrap();
    }
    assert!(response_acked(&b, 3));
}
