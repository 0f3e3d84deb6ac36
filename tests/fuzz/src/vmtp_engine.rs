// SPDX-License-Identifier: GPL-2.0
//! `vmtp_engine`: two VMTP engines, two clients on host A and a server on
//! host B, exchanging transactions over a channel the fuzzer controls (drop,
//! duplicate, reorder, corrupt, inject arbitrary packets), with time and
//! timeouts interleaved.
//!
//! Input: a configuration byte, then one-byte operations with their
//! arguments (see [`check`]).
//!
//! Invariants, checked after every step: placements stay inside the buffer
//! they name; a server hands each Request (client, transaction) to its user
//! at most once (the channel keeps packets for at most a packet lifetime,
//! which the server's linger covers); unless packets were corrupted
//! or injected, every Request the server's user gets and every Response a
//! client gets holds exactly the bytes sent. At the end the channel becomes
//! reliable and time runs on: every transaction must end, every Response be
//! released, and both engines go idle (liveness).

use std::collections::{HashMap, VecDeque};

use srnic_proto::vmtp::checksum::Summer;
use srnic_proto::vmtp::engine::{
    Addr, Arrival, Completion, Config, Csr, Decision, Engine, Handle, Local, Role, TxStatus,
};
use srnic_proto::vmtp::wire::code;
use srnic_proto::vmtp::{Code, EntityId, HEADER_LEN};

use super::util::{pattern, Input};

type Eng = Engine<Vec<Local>, Vec<Csr>>;

const A: Addr = [10, 0, 0, 1];
const B: Addr = [10, 0, 0, 2];
const QUEUE_MAX: usize = 256;
/// How long a packet may stay in the channel (a network's packet lifetime;
/// the server's linger covers it and the clients' retry span).
const LIFETIME: u64 = 1_000_000;

struct Host {
    eng: Eng,
    /// Outgoing messages by cookie.
    out: HashMap<u64, Vec<u8>>,
    /// Receive buffers by ctx.
    bufs: HashMap<u64, Vec<u8>>,
    next_ctx: u64,
    completions: VecDeque<Completion>,
}

impl Host {
    fn new(cfg: Config, seed: u32) -> Self {
        Host {
            eng: Engine::new(
                cfg,
                vec![Local::default(); 4],
                vec![Csr::default(); 3],
                seed,
            )
            .expect("valid configuration"),
            out: HashMap::new(),
            bufs: HashMap::new(),
            next_ctx: 1,
            completions: VecDeque::new(),
        }
    }

    fn transmit(&mut self, now: u64, q: &mut VecDeque<(u64, Vec<u8>)>) {
        let mut hdr = [0u8; HEADER_LEN];
        while let Some(t) = self.eng.poll_transmit(now, &mut hdr) {
            let mut p = hdr.to_vec();
            if let Some(pl) = t.payload {
                let msg = &self.out[&pl.cookie];
                let end = pl.offset as usize + pl.len as usize;
                assert!(end <= msg.len(), "payload {pl:?} outside its message");
                p.extend_from_slice(&msg[pl.offset as usize..end]);
            }
            p.resize(p.len() + t.pad as usize, 0);
            let mut s = Summer::default();
            s.update(&p);
            p.extend_from_slice(&s.finish());
            if q.len() < QUEUE_MAX {
                q.push_back((now, p));
            }
        }
        while let Some(c) = self.eng.poll_completion() {
            self.completions.push_back(c);
        }
    }

    /// Gives a packet to the engine; `offered` counts first packets per
    /// (client, transaction).
    fn receive(&mut self, now: u64, src: Addr, p: &[u8], offered: &mut HashMap<(u64, u32), u32>) {
        let bufs = &mut self.bufs;
        let next_ctx = &mut self.next_ctx;
        let mut up = |a: &Arrival| {
            *offered.entry((a.client.0, a.transaction)).or_default() += 1;
            let ctx = *next_ctx;
            *next_ctx += 1;
            let max = a.len.min(20_000);
            bufs.insert(ctx, vec![0; max as usize]);
            Decision::Accept { ctx, max }
        };
        if let Ok(placements) = self.eng.receive(now, src, p, &mut up) {
            for pl in placements {
                let b = self
                    .bufs
                    .get_mut(&pl.ctx)
                    .expect("placement into an unknown buffer");
                let end = pl.offset as usize + pl.data.len();
                assert!(end <= b.len(), "placement past its buffer");
                b[pl.offset as usize..end].copy_from_slice(pl.data);
            }
        }
        while let Some(c) = self.eng.poll_completion() {
            self.completions.push_back(c);
        }
    }
}

struct World {
    a: Host,
    b: Host,
    clients: [(EntityId, Handle); 2],
    server: EntityId,
    sh: Handle,
    ab: VecDeque<(u64, Vec<u8>)>,
    ba: VecDeque<(u64, Vec<u8>)>,
    now: u64,
    /// Transactions in progress per client: (cookie, ctx, expected response).
    pending: [Option<(u64, u64, Vec<u8>)>; 2],
    /// The Request bytes by (client entity, transaction).
    requests: HashMap<(u64, u32), Vec<u8>>,
    offered: HashMap<(u64, u32), u32>,
    delivered: HashMap<(u64, u32), u32>,
    /// Requests the server's user holds: (client, transaction, response
    /// length, cookie), from the Request's user data.
    to_answer: Vec<(EntityId, u32, u32, u64)>,
    /// Packets were corrupted or injected: contents are no longer checked.
    tainted: bool,
    next_cookie: u64,
}

impl World {
    fn step(&mut self) {
        self.a.transmit(self.now, &mut self.ab);
        self.b.transmit(self.now, &mut self.ba);
        while let Some(c) = self.b.completions.pop_front() {
            match c {
                Completion::Request {
                    client,
                    transaction,
                    len,
                    ctx,
                    user,
                    ..
                } => {
                    let n = self.delivered.entry((client.0, transaction)).or_default();
                    *n += 1;
                    assert_eq!(*n, 1, "a Request handed to the server twice");
                    let got = self.b.bufs.remove(&ctx).expect("request buffer");
                    if !self.tainted {
                        let want = &self.requests[&(client.0, transaction)];
                        assert_eq!(len as usize, want.len().min(20_000));
                        assert!(
                            got[..len as usize] == want[..len as usize],
                            "request bytes differ"
                        );
                    }
                    let resp_len = u32::from_be_bytes(user[..4].try_into().expect("4 bytes"));
                    let cookie = u64::from_be_bytes(user[4..].try_into().expect("8 bytes"));
                    self.to_answer
                        .push((client, transaction, resp_len.min(16384), cookie));
                }
                Completion::RequestAbandoned { ctx, .. } => {
                    self.b.bufs.remove(&ctx).expect("abandoned buffer");
                }
                Completion::ResponseReleased { cookie, .. } => {
                    self.b.out.remove(&cookie).expect("released response");
                }
                Completion::Transaction { .. } => panic!("a server completed a transaction"),
            }
        }
        while let Some(c) = self.a.completions.pop_front() {
            let Completion::Transaction {
                client,
                cookie,
                ctx,
                status,
                ..
            } = c
            else {
                panic!("a client got {c:?}");
            };
            let i = self
                .clients
                .iter()
                .position(|&(_, h)| h == client)
                .expect("client");
            let (pc, pctx, want) = self.pending[i]
                .take()
                .expect("a completion for no transaction");
            assert_eq!((pc, pctx), (cookie, ctx));
            let got = self.a.bufs.remove(&ctx).expect("response buffer");
            self.a.out.remove(&cookie).expect("request bytes");
            if let TxStatus::Response { len, .. } = status {
                if !self.tainted {
                    assert_eq!(len as usize, want.len());
                    assert!(got == want, "response bytes differ");
                }
            }
        }
    }

    fn start(&mut self, i: usize, req_len: usize, resp_len: usize) {
        if self.pending[i].is_some() {
            return;
        }
        self.next_cookie += 1;
        let cookie = self.next_cookie;
        let ctx = 1 << 40 | cookie;
        let req = pattern(cookie, req_len);
        let want = pattern(!cookie, resp_len);
        let mut user = [0u8; 12];
        user[..4].copy_from_slice(&(resp_len as u32).to_be_bytes());
        user[4..].copy_from_slice(&cookie.to_be_bytes());
        self.a.out.insert(cookie, req.clone());
        self.a.bufs.insert(ctx, vec![0; resp_len]);
        let (entity, h) = self.clients[i];
        let r = self.a.eng.request(
            self.now,
            h,
            self.server,
            B,
            Code(code::APPLICATION),
            user,
            req_len as u32,
            cookie,
            ctx,
            resp_len as u32,
        );
        let transaction = r.expect("an idle client takes a transaction");
        self.requests.insert((entity.0, transaction), req);
        self.pending[i] = Some((cookie, ctx, want));
    }

    /// The network's packet lifetime: packets queued longer are gone.
    fn expire(&mut self) {
        let now = self.now;
        self.ab.retain(|(at, _)| now - at <= LIFETIME);
        self.ba.retain(|(at, _)| now - at <= LIFETIME);
    }

    /// The server's user answers every Request it holds.
    fn answer_all(&mut self) {
        for (client, transaction, resp_len, cookie) in std::mem::take(&mut self.to_answer) {
            let resp = pattern(!cookie, resp_len as usize);
            let rc = 1 << 41 | cookie;
            self.b.out.insert(rc, resp);
            let r = self.b.eng.respond(
                self.now,
                self.sh,
                client,
                transaction,
                Code(code::OK),
                [0; 20],
                resp_len,
                rc,
            );
            if r.is_err() {
                // Superseded or closed meanwhile: nothing to send.
                self.b.out.remove(&rc);
            }
        }
    }
}

/// Runs the input (see the module's documentation). Configuration byte: MTU
/// (bits 0-1: 600, 1000, 1500 or 9000), retries (bits 2-3: 1 to 4), packet
/// gap (bit 4). Operations (`op % 12`) and their arguments:
///
/// - 0 `i lo hi lo hi`: client `i & 1` starts a transaction (request and
///   response lengths, each `% 16385`);
/// - 1 / 2: deliver the first packet A to B / B to A;
/// - 3 / 4: drop it;
/// - 5: duplicate the first packet A to B; 6: swap the first two;
/// - 7 `d at x`: corrupt byte `at` of the first packet of direction `d`;
/// - 8 `d n bytes`: inject `n` arbitrary bytes in direction `d`;
/// - 9 `t`: time runs `t` times 64 microseconds, timeouts are handled;
/// - 10: the server's user answers every Request it holds;
/// - 11 `i`: client `i & 1` is closed and opened again.
pub fn check(data: &[u8]) {
    let mut inp = Input::new(data);
    let c = inp.u8();
    let mut cfg = Config::new();
    cfg.mtu = [600, 1000, 1500, 9000][usize::from(c & 3)];
    cfg.max_retries = 1 + u32::from((c >> 2) & 3);
    cfg.packet_gap = if c & 0x10 != 0 { 20_000 } else { 0 };
    cfg.response_timeout = 2_000_000;
    cfg.group_timeout = 500_000;
    cfg.ack_timeout = 1_000_000;
    cfg.linger = cfg.response_timeout * u64::from(cfg.max_retries + 1) + 2 * LIFETIME;
    let mut a = Host::new(cfg, 0x1000);
    let mut b = Host::new(cfg, 0x2000);
    let server = EntityId::internet(100, B);
    let sh = b.eng.open(server, Role::Server).expect("server");
    let e0 = EntityId::internet(1, A);
    let e1 = EntityId::internet(2, A);
    let clients = [
        (e0, a.eng.open(e0, Role::Client).expect("client 0")),
        (e1, a.eng.open(e1, Role::Client).expect("client 1")),
    ];
    let mut w = World {
        a,
        b,
        clients,
        server,
        sh,
        ab: VecDeque::new(),
        ba: VecDeque::new(),
        now: 0,
        pending: [None, None],
        requests: HashMap::new(),
        offered: HashMap::new(),
        delivered: HashMap::new(),
        to_answer: Vec::new(),
        tainted: false,
        next_cookie: 0,
    };
    let mut ops = 0;
    while !inp.is_empty() && ops < 2000 {
        ops += 1;
        match inp.u8() % 12 {
            0 => {
                let i = usize::from(inp.u8() & 1);
                let rq = usize::from(inp.u16()) % 16385;
                let rs = usize::from(inp.u16()) % 16385;
                w.start(i, rq, rs);
            }
            1 => {
                if let Some((_, p)) = w.ab.pop_front() {
                    w.b.receive(w.now, A, &p, &mut w.offered);
                }
            }
            2 => {
                if let Some((_, p)) = w.ba.pop_front() {
                    w.a.receive(w.now, B, &p, &mut w.offered);
                }
            }
            3 => {
                w.ab.pop_front();
            }
            4 => {
                w.ba.pop_front();
            }
            5 => {
                if let Some(p) = w.ab.front().cloned() {
                    if w.ab.len() < QUEUE_MAX {
                        w.ab.push_back(p);
                    }
                }
            }
            6 => {
                if w.ab.len() >= 2 {
                    w.ab.swap(0, 1);
                }
            }
            7 => {
                let d = inp.u8() & 1;
                let at = usize::from(inp.u16());
                let x = inp.u8() | 1;
                let q = if d == 0 { &mut w.ab } else { &mut w.ba };
                if let Some((_, p)) = q.front_mut().filter(|(_, p)| !p.is_empty()) {
                    let n = p.len();
                    p[at % n] ^= x;
                    w.tainted = true;
                }
            }
            8 => {
                let d = inp.u8() & 1;
                let n = usize::from(inp.u8());
                let bytes = inp.take(n).to_vec();
                let q = if d == 0 { &mut w.ab } else { &mut w.ba };
                if q.len() < QUEUE_MAX {
                    q.push_back((w.now, bytes));
                }
                w.tainted = true;
            }
            9 => {
                w.now += u64::from(inp.u8()) * 64_000;
                w.expire();
                w.a.eng.handle_timeout(w.now);
                w.b.eng.handle_timeout(w.now);
            }
            10 => w.answer_all(),
            _ => {
                let i = usize::from(inp.u8() & 1);
                let (e, h) = w.clients[i];
                w.a.eng.close(h);
                w.step();
                let nh = w.a.eng.open(e, Role::Client).expect("reopen");
                w.clients[i] = (e, nh);
            }
        }
        w.step();
    }
    // Liveness: a reliable channel and time running on.
    for _ in 0..200 {
        while let Some((_, p)) = w.ab.pop_front() {
            w.b.receive(w.now, A, &p, &mut w.offered);
        }
        while let Some((_, p)) = w.ba.pop_front() {
            w.a.receive(w.now, B, &p, &mut w.offered);
        }
        w.answer_all();
        w.step();
        if w.ab.is_empty()
            && w.ba.is_empty()
            && w.pending.iter().all(Option::is_none)
            && w.a.eng.is_idle()
            && w.b.eng.is_idle()
        {
            break;
        }
        w.now += 500_000;
        w.a.eng.handle_timeout(w.now);
        w.b.eng.handle_timeout(w.now);
        w.step();
    }
    if std::env::var_os("SRNIC_FUZZ_TRACE").is_some() {
        eprintln!(
            "vmtp_engine: {ops} ops, {} requests, tainted {}; A {:?}; B {:?}",
            w.requests.len(),
            w.tainted,
            w.a.eng.counters(),
            w.b.eng.counters()
        );
    }
    assert!(
        w.pending.iter().all(Option::is_none),
        "a transaction never ended"
    );
    assert!(w.b.out.is_empty(), "a Response never released");
    assert!(w.a.eng.is_idle() && w.b.eng.is_idle(), "state left");
}
