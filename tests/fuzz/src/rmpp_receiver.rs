// SPDX-License-Identifier: GPL-2.0
//! `rmpp_receiver`: two Sandia RMPP engines (node 0 under test, node 1 its peer)
//! exchanging messages over a channel the fuzzer controls (drop, duplicate, reorder,
//! corrupt, inject arbitrary frames), with timeouts interleaved.
//!
//! Input: a configuration block, then one-byte operations with their arguments (see
//! [`check`]).
//!
//! Invariants, checked after every step: table occupancy within the tables; the grant
//! pool `outstanding` never exceeds what the receive table can hold and is zero when no
//! message is active; every transmitted frame parses, names a payload range inside its
//! message and matches its `plen`; placements stay inside the accepted length; new
//! messages are offered to the upper layer in per-peer msgNum order; each message
//! completes at most once on each side. Unless arbitrary or corrupted frames were
//! injected, a complete receive holds exactly the sender's bytes and a delivered send
//! matches the receiver's completion. At the end the channel becomes reliable and
//! time runs on: both engines must go idle (liveness), every send must have completed
//! and the grant pool must be empty.

use std::collections::{HashMap, VecDeque};

use srnic_proto::rmpp::{
    Arrival, Completion, Config, Decision, Engine, Packet, PeerState, Recovery, RecvSlot,
    RecvStatus, Repr, RestartPolicy, SendHandle, SendSlot, SendStatus, HEADER_LEN,
};

use super::util::{pattern, Input};

type Eng = Engine<Vec<SendSlot>, Vec<RecvSlot>, Vec<PeerState>>;

const PEERS: usize = 4;

/// Set `SRNIC_FUZZ_TRACE=1` to print every frame and step (for reproducing findings).
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SRNIC_FUZZ_TRACE").is_some())
}
const QUEUE_MAX: usize = 512;

struct RecvBuf {
    buf: Vec<u8>,
    accepted: u32,
}

/// One node: its engine and everything the test remembers about it.
struct Node {
    nid: u32,
    eng: Eng,
    recv_slots: usize,
    max_data_pkts: u32,
    /// Outgoing messages by cookie, and cookie by msgID.
    msgs: HashMap<u64, Vec<u8>>,
    cookie_of: HashMap<u32, u64>,
    handles: Vec<SendHandle>,
    sent: HashMap<u64, SendStatus>,
    /// Receives by ctx.
    recvs: HashMap<u64, RecvBuf>,
    next_ctx: u64,
    /// Finished receives by (src, msgNum): (msgID, accepted, status, ctx). msgNum, not
    /// msgID, because the engine takes each msgNum of a peer at most once.
    received: HashMap<(u32, u32), (u32, u32, RecvStatus, u64)>,
    /// Upper-layer behaviour: 0 accept all, 1 accept a prefix, 2 drop, 3 defer.
    mode: u8,
}

fn config(inp: &mut Input<'_>, nid: u32) -> Config {
    let mut c = Config::new(nid);
    c.mtu = (HEADER_LEN + 8 + usize::from(inp.u8() % 57)) as u16;
    c.max_data_pkts = 1 + u32::from(inp.u8() % 8);
    c.max_rcv_buf = u32::from(inp.u8() % 40);
    c.nodes = u32::from(inp.u8() % 8);
    c.retransmit_timeout = 1000;
    c.max_retries = 1 + u32::from(inp.u8() % 4);
    c.reclaim_timeout = 100_000;
    let b = inp.u8();
    c.restart = if b & 1 != 0 {
        RestartPolicy::FromLastGrant
    } else {
        RestartPolicy::FromStart
    };
    // Bits 1-2: the receiver-driven recovery (3: selective as well).
    c.recovery = match (b >> 1) & 3 {
        0 => Recovery::Timeout,
        1 => Recovery::Nak,
        _ => Recovery::SelectiveNak,
    };
    c.first_msg_id = u32::from(b) << 24;
    c
}

impl Node {
    fn new(cfg: Config, sends: usize, recvs: usize) -> Self {
        let eng = Engine::new(
            cfg,
            vec![SendSlot::default(); sends],
            vec![RecvSlot::default(); recvs],
            vec![PeerState::default(); PEERS],
        )
        .expect("valid configuration");
        Node {
            nid: cfg.local_nid,
            eng,
            recv_slots: recvs,
            max_data_pkts: cfg.max_data_pkts,
            msgs: HashMap::new(),
            cookie_of: HashMap::new(),
            handles: Vec::new(),
            sent: HashMap::new(),
            recvs: HashMap::new(),
            next_ctx: 1,
            received: HashMap::new(),
            mode: 0,
        }
    }

    fn send(&mut self, now: u64, dst: u32, len: u32, cookie: u64) {
        if let Ok(h) = self.eng.send(now, dst, len, cookie, cookie) {
            self.msgs.insert(cookie, pattern(cookie, len as usize));
            self.cookie_of.insert(h.0, cookie);
            self.handles.push(h);
        }
    }

    /// Offers one frame to the engine and places its payload.
    fn deliver(&mut self, now: u64, frame: &[u8]) {
        let rx_next: Vec<u32> = (0..PEERS as u32)
            .map(|n| self.eng.peer(n).map_or(0, PeerState::rx_next))
            .collect();
        let mode = self.mode;
        let next_ctx = &mut self.next_ctx;
        let recvs = &mut self.recvs;
        let mut up = |a: &Arrival<'_>| {
            assert_eq!(
                Some(&a.msg_num),
                rx_next.get(a.src as usize),
                "arrival out of msgNum order"
            );
            match mode {
                2 => Decision::Drop,
                3 => Decision::Defer,
                _ => {
                    let want = if mode == 1 { a.len / 2 } else { a.len };
                    let ctx = *next_ctx;
                    *next_ctx += 1;
                    recvs.insert(
                        ctx,
                        RecvBuf {
                            // Injected frames may announce 4 GiB: keep at most 64 KiB.
                            buf: vec![0; a.len.min(want).min(1 << 16) as usize],
                            accepted: want.min(a.len),
                        },
                    );
                    Decision::Accept { len: want, ctx }
                }
            }
        };
        let res = self.eng.receive(now, frame, &mut up);
        if trace() {
            let r = Repr::parse(&Packet::new_unchecked(frame));
            eprintln!("t={now} node {} <- {r:?}: {res:?}", self.nid);
        }
        if let Ok(Some(p)) = res {
            let r = self
                .recvs
                .get_mut(&p.ctx)
                .expect("placement for a known receive");
            let end = p.offset as usize + p.data.len();
            assert!(
                end <= r.accepted as usize,
                "placement past the accepted length"
            );
            let fs = frame.as_ptr() as usize;
            let ds = p.data.as_ptr() as usize;
            assert!(ds >= fs + HEADER_LEN && ds + p.data.len() <= fs + frame.len());
            if let Some(d) = r.buf.get_mut(p.offset as usize..end) {
                d.copy_from_slice(p.data);
            }
        }
    }

    /// Drains transmits into `out`, checking each frame.
    fn transmit(&mut self, now: u64, out: &mut VecDeque<Vec<u8>>) {
        let mut hdr = [0u8; HEADER_LEN];
        let mut n = 0;
        while let Some(t) = self.eng.poll_transmit(now, &mut hdr) {
            n += 1;
            assert!(n <= 4096, "poll_transmit does not run dry");
            let plen = usize::from(u16::from_be_bytes([hdr[2], hdr[3]]));
            let mut f = hdr.to_vec();
            match t.payload {
                Some(p) => {
                    assert_eq!(p.len as usize, plen, "payload length = plen");
                    let m = self
                        .msgs
                        .get(&p.cookie)
                        .expect("payload of a known message");
                    let end = p.offset as usize + p.len as usize;
                    assert!(end <= m.len(), "payload range outside the message");
                    f.extend_from_slice(&m[p.offset as usize..end]);
                }
                None => assert_eq!(plen, 0, "plen without payload"),
            }
            let r = Repr::parse(&Packet::new_unchecked(&f[..])).expect("transmitted frame parses");
            assert_eq!(r.ptype, t.ptype);
            if trace() {
                eprintln!("t={now} node {} -> {r:?}", self.nid);
            }
            if out.len() >= QUEUE_MAX {
                out.pop_front();
            }
            out.push_back(f);
        }
    }

    fn completions(&mut self) {
        while let Some(c) = self.eng.poll_completion() {
            if trace() {
                eprintln!("node {}: {c:?}", self.nid);
            }
            match c {
                Completion::Send { cookie, status, .. } => {
                    let len = self.msgs.get(&cookie).expect("known cookie").len() as u32;
                    if let SendStatus::Delivered { accepted } = status {
                        assert!(accepted <= len);
                    }
                    assert!(
                        self.sent.insert(cookie, status).is_none(),
                        "send completed twice"
                    );
                }
                Completion::Recv {
                    ctx,
                    src,
                    msg_id,
                    msg_num,
                    len,
                    accepted,
                    status,
                    ..
                } => {
                    assert!(accepted <= len);
                    let r = self
                        .recvs
                        .get(&ctx)
                        .expect("completion for a known receive");
                    assert_eq!(accepted, r.accepted, "accepted length");
                    let prev = self
                        .received
                        .insert((src, msg_num), (msg_id, accepted, status, ctx));
                    assert!(prev.is_none(), "receive completed twice");
                }
            }
        }
    }

    fn check_bounds(&self) {
        assert!(self.eng.active_recvs() <= self.recv_slots);
        let cap = (self.recv_slots as u32) * self.max_data_pkts;
        assert!(
            self.eng.outstanding() <= cap,
            "grant pool {} > {}",
            self.eng.outstanding(),
            cap
        );
        if self.eng.active_recvs() == 0 {
            assert_eq!(self.eng.outstanding(), 0, "grants leaked");
        }
    }
}

/// Data and delivery agreement between a receiver and the sender of its messages.
fn check_integrity(rx: &Node, tx: &Node) {
    for (&(src, _), &(msg_id, accepted, status, ctx)) in &rx.received {
        if src != tx.nid || status != RecvStatus::Complete {
            continue;
        }
        let cookie = tx.cookie_of[&msg_id];
        let sent = &tx.msgs[&cookie];
        let got = &rx.recvs[&ctx].buf;
        assert_eq!(
            &got[..],
            &sent[..accepted as usize],
            "received bytes differ"
        );
    }
    for (&cookie, &status) in &tx.sent {
        if let SendStatus::Delivered { accepted } = status {
            let msg_id = tx
                .cookie_of
                .iter()
                .find(|(_, &c)| c == cookie)
                .map(|(&m, _)| m)
                .expect("msgID");
            let r = rx
                .received
                .iter()
                .find(|(&(src, _), v)| src == tx.nid && v.0 == msg_id)
                .map(|(_, v)| v)
                .expect("delivered but not received");
            assert_eq!((r.1, r.2), (accepted, RecvStatus::Complete));
        }
    }
}

/// The fuzz entry point.
pub fn check(data: &[u8]) {
    let mut inp = Input::new(data);
    let ca = config(&mut inp, 0);
    let cb = config(&mut inp, 1);
    let tables = inp.u8();
    let mut a = Node::new(
        ca,
        1 + usize::from(tables & 3),
        1 + usize::from((tables >> 2) & 3),
    );
    let mut b = Node::new(cb, 1 + usize::from((tables >> 4) & 3), 4);
    let mut ab: VecDeque<Vec<u8>> = VecDeque::new();
    let mut ba: VecDeque<Vec<u8>> = VecDeque::new();
    let mut now = 0u64;
    let mut cookie = 0u64;
    let mut tainted = false;
    let mut steps = 0;
    while !inp.is_empty() && steps < 400 {
        steps += 1;
        let op = inp.u8();
        if trace() {
            eprintln!("op {} (tainted {tainted})", op % 14);
        }
        match op % 14 {
            0 => {
                cookie += 1;
                b.send(now, 0, u32::from(inp.u16() % 600), cookie);
            }
            1 => {
                cookie += 1;
                a.send(now, 1, u32::from(inp.u16() % 600), cookie);
            }
            2 => {
                if let Some(f) = ba.pop_front() {
                    a.deliver(now, &f);
                }
            }
            3 => {
                ba.pop_front();
            }
            4 => {
                if let Some(f) = ba.front().cloned() {
                    a.deliver(now, &f);
                }
            }
            5 => {
                if let Some(f) = ab.pop_front() {
                    b.deliver(now, &f);
                }
            }
            6 => {
                ab.pop_front();
            }
            7 => {
                tainted = true;
                let n = usize::from(inp.u8());
                let f = inp.take(n).to_vec();
                a.deliver(now, &f);
            }
            8 => {
                let (i, x) = (usize::from(inp.u8()), inp.u8());
                if let Some(f) = ba.front_mut() {
                    if !f.is_empty() {
                        tainted = true;
                        let k = i % f.len();
                        f[k] ^= x | 1;
                    }
                }
            }
            9 => {
                now += 1 + u64::from(inp.u16()) * 4;
                a.eng.handle_timeout(now);
                b.eng.handle_timeout(now);
            }
            10 => {
                let i = usize::from(inp.u8());
                if !b.handles.is_empty() {
                    let h = b.handles[i % b.handles.len()];
                    let _ = b.eng.abort(now, h);
                }
            }
            11 => {
                if ba.len() >= 2 {
                    ba.swap(0, 1);
                }
            }
            12 => a.mode = inp.u8() % 4,
            _ => {
                // Jump to the earliest deadline of either node.
                if let Some(t) = [a.eng.poll_timeout(), b.eng.poll_timeout()]
                    .into_iter()
                    .flatten()
                    .min()
                {
                    now = now.max(t);
                    a.eng.handle_timeout(now);
                    b.eng.handle_timeout(now);
                }
            }
        }
        step(&mut a, &mut b, now, &mut ab, &mut ba, tainted);
    }
    // Reliable channel from here on: everything must finish.
    a.mode = 0;
    b.mode = 0;
    let mut rounds = 0;
    loop {
        rounds += 1;
        assert!(rounds < 20_000, "engines never go idle");
        while let Some(f) = ba.pop_front() {
            a.deliver(now, &f);
            step(&mut a, &mut b, now, &mut ab, &mut ba, tainted);
        }
        while let Some(f) = ab.pop_front() {
            b.deliver(now, &f);
            step(&mut a, &mut b, now, &mut ab, &mut ba, tainted);
        }
        if !ab.is_empty() || !ba.is_empty() {
            continue;
        }
        match [a.eng.poll_timeout(), b.eng.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
        {
            None => break,
            Some(t) => {
                now = now.max(t);
                a.eng.handle_timeout(now);
                b.eng.handle_timeout(now);
                step(&mut a, &mut b, now, &mut ab, &mut ba, tainted);
            }
        }
    }
    for n in [&a, &b] {
        assert_eq!(n.eng.active_recvs(), 0, "receive state left behind");
        assert_eq!(n.eng.active_sends(), 0, "send state left behind");
        assert_eq!(n.eng.outstanding(), 0, "grants left behind");
        for c in n.msgs.keys() {
            assert!(n.sent.contains_key(c), "send {c} never completed");
        }
    }
}

fn step(
    a: &mut Node,
    b: &mut Node,
    now: u64,
    ab: &mut VecDeque<Vec<u8>>,
    ba: &mut VecDeque<Vec<u8>>,
    tainted: bool,
) {
    a.transmit(now, ab);
    b.transmit(now, ba);
    a.completions();
    b.completions();
    a.check_bounds();
    b.check_bounds();
    if !tainted {
        check_integrity(a, b);
        check_integrity(b, a);
    }
}
