// SPDX-License-Identifier: GPL-2.0
//! Sandia RMPP engine unit tests: packet exchanges driven by hand between engines.

use std::collections::HashMap;

use srnic_proto::rmpp::{
    caps, Arrival, Completion, Config, ConfigError, Decision, Engine, Packet, PacketType,
    PeerState, Placement, Recovery, RecvSlot, RecvStatus, Repr, RestartPolicy, Retry, RxDrop,
    SendError, SendSlot, SendStatus, HEADER_LEN,
};

type Eng = Engine<Vec<SendSlot>, Vec<RecvSlot>, Vec<PeerState>>;

const RTO: u64 = 1_000_000;
const A: u32 = 0;
const B: u32 = 1;

fn cfg(nid: u32) -> Config {
    let mut c = Config::new(nid);
    c.mtu = (HEADER_LEN + 100) as u16; // 100-byte chunks: easy packet counts
    c.max_data_pkts = 4;
    c.retransmit_timeout = RTO;
    c.max_retries = 3;
    c.reclaim_timeout = 1_000 * RTO;
    c
}

fn eng_with(c: Config, sends: usize, recvs: usize) -> Eng {
    Engine::new(
        c,
        vec![SendSlot::default(); sends],
        vec![RecvSlot::default(); recvs],
        vec![PeerState::default(); 4],
    )
    .unwrap()
}

fn eng(nid: u32) -> Eng {
    eng_with(cfg(nid), 4, 4)
}

fn data(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect()
}

/// Everything `e` wants to send, as frames.
fn out(e: &mut Eng, now: u64, msgs: &HashMap<u64, Vec<u8>>) -> Vec<Vec<u8>> {
    out_retries(e, now, msgs).0
}

/// [`out`], and what each packet says of retries (see `Transmit::retry`).
fn out_retries(
    e: &mut Eng,
    now: u64,
    msgs: &HashMap<u64, Vec<u8>>,
) -> (Vec<Vec<u8>>, Vec<Option<Retry>>) {
    let mut v = Vec::new();
    let mut r = Vec::new();
    let mut hdr = [0u8; HEADER_LEN];
    while let Some(t) = e.poll_transmit(now, &mut hdr) {
        let mut f = hdr.to_vec();
        if let Some(p) = t.payload {
            f.extend_from_slice(&msgs[&p.cookie][p.offset as usize..][..p.len as usize]);
        }
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&f[..])).unwrap().ptype,
            t.ptype
        );
        v.push(f);
        r.push(t.retry);
    }
    (v, r)
}

fn repr(f: &[u8]) -> Repr {
    Repr::parse(&Packet::new_checked(f).unwrap()).unwrap()
}

fn types(frames: &[Vec<u8>]) -> Vec<PacketType> {
    frames.iter().map(|f| repr(f).ptype).collect()
}

/// Receiving side: accepts everything (or `limit` bytes) into buffers by ctx.
#[derive(Default)]
struct Sink {
    bufs: HashMap<u64, Vec<u8>>,
    arrivals: Vec<(u32, u32, u64)>,
    decision: Option<Decision>,
    limit: Option<u32>,
}

impl Sink {
    fn feed(&mut self, e: &mut Eng, now: u64, frames: &[Vec<u8>]) -> Vec<Result<bool, RxDrop>> {
        frames
            .iter()
            .map(|f| {
                let arrivals = &mut self.arrivals;
                let bufs = &mut self.bufs;
                let decision = self.decision;
                let limit = self.limit;
                let mut up = |a: &Arrival<'_>| {
                    arrivals.push((a.src, a.msg_num, a.tag));
                    if let Some(d) = decision {
                        return d;
                    }
                    let ctx = arrivals.len() as u64;
                    bufs.insert(ctx, vec![0; a.len as usize]);
                    Decision::Accept {
                        len: limit.unwrap_or(a.len),
                        ctx,
                    }
                };
                e.receive(now, f, &mut up).map(|p| {
                    if let Some(Placement {
                        ctx, offset, data, ..
                    }) = p
                    {
                        self.bufs.get_mut(&ctx).unwrap()[offset as usize..][..data.len()]
                            .copy_from_slice(data);
                    }
                    p.is_some()
                })
            })
            .collect()
    }
}

fn completions(e: &mut Eng) -> Vec<Completion> {
    std::iter::from_fn(|| e.poll_completion()).collect()
}

fn send_status(c: &[Completion]) -> Vec<SendStatus> {
    c.iter()
        .filter_map(|c| match c {
            Completion::Send { status, .. } => Some(*status),
            _ => None,
        })
        .collect()
}

/// Runs a transfer between `a` and `b` until quiet (no loss). Returns the number of
/// frames exchanged.
fn pump(
    a: &mut Eng,
    b: &mut Eng,
    sink: &mut Sink,
    now: u64,
    msgs: &HashMap<u64, Vec<u8>>,
) -> usize {
    let mut n = 0;
    loop {
        let fa = out(a, now, msgs);
        sink.feed(b, now, &fa);
        let fb = out(b, now, msgs);
        for f in &fb {
            let _ = a.receive(now, f, &mut |_: &Arrival<'_>| Decision::Drop);
        }
        n += fa.len() + fb.len();
        if fa.is_empty() && fb.is_empty() {
            return n;
        }
    }
}

#[test]
fn short_message() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(7, data(50, 1))]);
    a.send(0, B, 50, 0xfeed, 7).unwrap();
    let f = out(&mut a, 0, &msgs);
    assert_eq!(types(&f), [PacketType::LastRts]);
    assert_eq!(repr(&f[0]).tag, 0xfeed);
    assert_eq!(sink.feed(&mut b, 0, &f), [Ok(true)]);
    assert_eq!(sink.arrivals, [(A, 0, 0xfeed)]);
    assert_eq!(sink.bufs[&1], msgs[&7]);
    let end = out(&mut b, 0, &msgs);
    assert_eq!(types(&end), [PacketType::MsgEnd]);
    assert_eq!(repr(&end[0]).info1, 50);
    assert!(matches!(
        completions(&mut b)[..],
        [Completion::Recv {
            status: RecvStatus::Complete,
            accepted: 50,
            tag: 0xfeed,
            ..
        }]
    ));
    a.receive(0, &end[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    assert_eq!(
        send_status(&completions(&mut a)),
        [SendStatus::Delivered { accepted: 50 }]
    );
    let gch = out(&mut a, 0, &msgs);
    assert_eq!(types(&gch), [PacketType::Gch]);
    assert_eq!(a.active_sends(), 0);
    sink.feed(&mut b, 0, &gch);
    assert_eq!(b.active_recvs(), 0);
    assert_eq!(a.poll_timeout(), None);
    assert_eq!(b.poll_timeout(), None);
}

#[test]
fn long_message_blocks() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 2))]);
    a.send(0, B, 1000, 0, 1).unwrap();
    let rts = out(&mut a, 0, &msgs);
    assert_eq!(types(&rts), [PacketType::Rts]);
    assert_eq!(repr(&rts[0]).payload_len, 100);
    sink.feed(&mut b, 0, &rts);
    let mut seen = Vec::new();
    let mut to_b = Vec::new();
    for _ in 0..10 {
        let fb = out(&mut b, 0, &msgs);
        for f in &fb {
            let r = repr(f);
            seen.push((r.ptype, r.seq, r.info1));
            a.receive(0, f, &mut |_: &Arrival<'_>| Decision::Drop)
                .unwrap();
        }
        to_b = out(&mut a, 0, &msgs);
        for f in &to_b {
            let r = repr(f);
            seen.push((r.ptype, r.seq, r.info1));
        }
        sink.feed(&mut b, 0, &to_b);
    }
    use PacketType::*;
    assert_eq!(
        seen,
        [
            (Cts, 1, 4),
            (Data, 1, 4),
            (Data, 2, 4),
            (Data, 3, 4),
            (StopData, 4, 4),
            (Cts, 5, 4),
            (Data, 5, 4),
            (Data, 6, 4),
            (Data, 7, 4),
            (StopData, 8, 4),
            (Cts, 9, 1),
            (LastData, 9, 1),
            (MsgEnd, 0, 1000),
            (Gch, 0, 0),
        ]
    );
    assert!(to_b.is_empty());
    assert_eq!(sink.bufs[&1], msgs[&1]);
    assert_eq!(b.outstanding(), 0);
    // Entries are freed once their completion has been handed out.
    assert_eq!((a.active_sends(), b.active_recvs()), (1, 1));
    completions(&mut a);
    completions(&mut b);
    assert_eq!(b.active_recvs(), 0);
    assert_eq!(a.active_sends(), 0);
}

#[test]
fn grant_rule_across_messages() {
    // MAX_RCV_BUF 10, NODES 2: 8 allowances to share.
    let mut cb = cfg(B);
    cb.max_rcv_buf = 10;
    cb.nodes = 2;
    let (mut a, mut b, mut sink) = (eng(A), eng_with(cb, 4, 4), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 1)), (2, data(1000, 2)), (3, data(1000, 3))]);
    for c in 1..=3 {
        a.send(0, B, 1000, 0, c).unwrap();
    }
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    let cts = out(&mut b, 0, &msgs);
    let grants: Vec<u32> = cts.iter().map(|f| repr(f).info1).collect();
    assert_eq!(grants, [4, 4, 1]);
    assert_eq!(b.outstanding(), 9);
    // The third grant is the only one the pool shrank.
    let c = b.counters();
    assert_eq!((c.grants, c.granted_pkts, c.grants_limited), (3, 9, 1));
    assert_eq!(c.peak_outstanding, 9);
    for f in &cts {
        a.receive(0, f, &mut |_: &Arrival<'_>| Decision::Drop)
            .unwrap();
    }
    pump(&mut a, &mut b, &mut sink, 0, &msgs);
    assert_eq!(b.outstanding(), 0);
    for c in 1..=3 {
        assert_eq!(sink.bufs[&c], msgs[&c]);
    }
}

#[test]
fn lost_msgend_is_resent_short() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(10, 1))]);
    a.send(0, B, 10, 0, 1).unwrap();
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    let lost = out(&mut b, 0, &msgs);
    assert_eq!(types(&lost), [PacketType::MsgEnd]);
    assert_eq!(completions(&mut b).len(), 1);
    // Sender retries the LAST RTS; the receiver answers MSGEND again without a
    // second arrival or completion.
    a.handle_timeout(RTO);
    let retry = out(&mut a, RTO, &msgs);
    assert_eq!(types(&retry), [PacketType::LastRts]);
    assert_eq!(repr(&retry[0]).info2, 1);
    assert_eq!(sink.feed(&mut b, RTO, &retry), [Ok(false)]);
    // A duplicate of the same attempt is dropped as stale.
    assert_eq!(sink.feed(&mut b, RTO, &retry), [Err(RxDrop::Stale)]);
    let again = out(&mut b, RTO, &msgs);
    assert_eq!(types(&again), [PacketType::MsgEnd]);
    assert_eq!(sink.arrivals.len(), 1);
    assert!(completions(&mut b).is_empty());
    a.receive(RTO, &again[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    assert_eq!(
        send_status(&completions(&mut a)),
        [SendStatus::Delivered { accepted: 10 }]
    );
}

#[test]
fn lost_msgend_is_resent_long() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(250, 1))]);
    a.send(0, B, 250, 0, 1).unwrap();
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    for f in out(&mut b, 0, &msgs) {
        a.receive(0, &f, &mut |_: &Arrival<'_>| Decision::Drop)
            .unwrap();
    }
    let block = out(&mut a, 0, &msgs);
    assert_eq!(types(&block), [PacketType::Data, PacketType::LastData]);
    sink.feed(&mut b, 0, &block);
    assert_eq!(types(&out(&mut b, 0, &msgs)), [PacketType::MsgEnd]); // lost
    a.handle_timeout(RTO);
    let restart = out(&mut a, RTO, &msgs);
    let r = repr(&restart[0]);
    assert_eq!(
        (r.ptype, r.seq, r.info1, r.info2),
        (PacketType::StopData, 1, 1, 1)
    );
    assert_eq!(sink.feed(&mut b, RTO, &restart), [Ok(false)]);
    assert_eq!(types(&out(&mut b, RTO, &msgs)), [PacketType::MsgEnd]);
    assert_eq!(sink.bufs[&1], msgs[&1]);
}

#[test]
fn restart_after_lost_data() {
    for policy in [RestartPolicy::FromStart, RestartPolicy::FromLastGrant] {
        let mut ca = cfg(A);
        ca.restart = policy;
        let (mut a, mut b, mut sink) = (eng_with(ca, 2, 2), eng(B), Sink::default());
        let msgs = HashMap::from([(1, data(1000, 9))]);
        a.send(0, B, 1000, 0, 1).unwrap();
        sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
        // First block arrives, second block loses its first packet.
        for _ in 0..2 {
            for f in out(&mut b, 0, &msgs) {
                a.receive(0, &f, &mut |_: &Arrival<'_>| Decision::Drop)
                    .unwrap();
            }
            let mut block = out(&mut a, 0, &msgs);
            if repr(&block[0]).seq == 5 {
                let res = sink.feed(&mut b, 0, &block[1..]);
                assert!(res.iter().all(|r| *r == Err(RxDrop::Stale)));
                block.clear();
            }
            sink.feed(&mut b, 0, &block);
        }
        assert_eq!(a.counters().retransmits, 0);
        a.handle_timeout(RTO);
        assert_eq!(a.counters().retransmits, 1);
        // The retry's first packet says so (once), for tracing.
        let (restart, r) = out_retries(&mut a, RTO, &msgs);
        assert_eq!(
            r[0],
            Some(Retry {
                cookie: 1,
                attempt: 1
            })
        );
        assert!(r[1..].iter().all(Option::is_none), "{r:?}");
        let want = match policy {
            RestartPolicy::FromStart => 1,
            RestartPolicy::FromLastGrant => 5,
        };
        assert_eq!(repr(&restart[0]).seq, want);
        sink.feed(&mut b, RTO, &restart);
        pump(&mut a, &mut b, &mut sink, RTO, &msgs);
        assert_eq!(sink.bufs[&1], msgs[&1]);
        assert_eq!(
            send_status(&completions(&mut a)),
            [SendStatus::Delivered { accepted: 1000 }]
        );
        assert_eq!(b.outstanding(), 0);
    }
}

#[test]
fn lost_rts_is_sent_again_as_a_retry() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(30, 1))]);
    a.send(0, B, 30, 0, 1).unwrap();
    // The first RTS is lost.
    assert_eq!(out_retries(&mut a, 0, &msgs).1, [None]);
    a.handle_timeout(RTO);
    assert_eq!(a.counters().retransmits, 1);
    let (rts, r) = out_retries(&mut a, RTO, &msgs);
    assert_eq!(
        r,
        [Some(Retry {
            cookie: 1,
            attempt: 1
        })]
    );
    sink.feed(&mut b, RTO, &rts);
    pump(&mut a, &mut b, &mut sink, RTO, &msgs);
    assert_eq!(sink.bufs[&1], msgs[&1]);
}

#[test]
fn truncation() {
    let (mut a, mut b) = (eng(A), eng(B));
    let mut sink = Sink {
        limit: Some(250),
        ..Sink::default()
    };
    let msgs = HashMap::from([(1, data(1000, 3))]);
    a.send(0, B, 1000, 0, 1).unwrap();
    pump(&mut a, &mut b, &mut sink, 0, &msgs);
    let buf = &sink.bufs[&1];
    assert_eq!(buf[..250], msgs[&1][..250]);
    assert!(buf[250..].iter().all(|&x| x == 0));
    assert_eq!(
        send_status(&completions(&mut a)),
        [SendStatus::Delivered { accepted: 250 }]
    );
    assert!(matches!(
        completions(&mut b)[..],
        [Completion::Recv {
            len: 1000,
            accepted: 250,
            status: RecvStatus::Complete,
            ..
        }]
    ));
    assert_eq!(
        (a.active_sends(), b.active_recvs(), b.outstanding()),
        (0, 0, 0)
    );
}

#[test]
fn drop_decision() {
    let (mut a, mut b) = (eng(A), eng(B));
    let mut sink = Sink {
        decision: Some(Decision::Drop),
        ..Sink::default()
    };
    let msgs = HashMap::from([(1, data(1000, 3)), (2, data(5, 3))]);
    a.send(0, B, 1000, 0, 1).unwrap();
    a.send(0, B, 5, 0, 2).unwrap();
    pump(&mut a, &mut b, &mut sink, 0, &msgs);
    assert_eq!(
        send_status(&completions(&mut a)),
        [SendStatus::Dropped, SendStatus::Dropped]
    );
    assert!(completions(&mut b).is_empty());
    assert_eq!((a.active_sends(), b.active_recvs()), (0, 0));
    assert_eq!(b.peer(A).unwrap().rx_next(), 2);
}

#[test]
fn defer_then_accept_keeps_order() {
    let (mut a, mut b) = (eng(A), eng(B));
    let mut sink = Sink {
        decision: Some(Decision::Defer),
        ..Sink::default()
    };
    let msgs = HashMap::from([(1, data(30, 1)), (2, data(30, 2))]);
    a.send(0, B, 30, 10, 1).unwrap();
    a.send(0, B, 30, 20, 2).unwrap();
    let f = out(&mut a, 0, &msgs);
    assert_eq!(
        sink.feed(&mut b, 0, &f),
        [Err(RxDrop::Deferred), Err(RxDrop::OutOfOrder)]
    );
    sink.decision = None;
    sink.arrivals.clear();
    a.handle_timeout(RTO);
    pump(&mut a, &mut b, &mut sink, RTO, &msgs);
    assert_eq!(sink.arrivals, [(A, 0, 10), (A, 1, 20)]);
    assert_eq!(sink.bufs[&1], msgs[&1]);
    assert_eq!(sink.bufs[&2], msgs[&2]);
}

#[test]
fn out_of_order_rts_is_dropped() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(30, 1)), (2, data(30, 2))]);
    a.send(0, B, 30, 1, 1).unwrap();
    a.send(0, B, 30, 2, 2).unwrap();
    let f = out(&mut a, 0, &msgs);
    assert_eq!(sink.feed(&mut b, 0, &f[1..]), [Err(RxDrop::OutOfOrder)]);
    assert_eq!(sink.feed(&mut b, 0, &f[..1]), [Ok(true)]);
    assert_eq!(sink.feed(&mut b, 0, &f[1..]), [Ok(true)]);
    assert_eq!(sink.feed(&mut b, 0, &f[..1]), [Err(RxDrop::Stale)]);
    assert_eq!(sink.arrivals, [(A, 0, 1), (A, 1, 2)]);
}

#[test]
fn abort_in_flight() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 1))]);
    let h = a.send(0, B, 1000, 0, 1).unwrap();
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    assert_eq!(b.outstanding(), 4);
    a.abort(0, h).unwrap();
    assert_eq!(send_status(&completions(&mut a)), [SendStatus::Aborted]);
    assert_eq!(a.abort(0, h), Err(srnic_proto::rmpp::AbortError::Finished));
    // The CTS arriving now is unexpected; the sender sends NULL.
    let cts = out(&mut b, 0, &msgs);
    assert_eq!(
        a.receive(0, &cts[0], &mut |_: &Arrival<'_>| Decision::Drop),
        Err(RxDrop::Unexpected)
    );
    let null = out(&mut a, 0, &msgs);
    assert_eq!(types(&null), [PacketType::Null]);
    sink.feed(&mut b, 0, &null);
    assert!(matches!(
        completions(&mut b)[..],
        [Completion::Recv {
            status: RecvStatus::Aborted,
            ..
        }]
    ));
    assert_eq!(b.outstanding(), 0);
    pump(&mut a, &mut b, &mut sink, 0, &msgs);
    assert!(completions(&mut a).is_empty());
    assert_eq!((a.active_sends(), b.active_recvs()), (0, 0));
}

#[test]
fn abort_before_rts_arrived_keeps_numbering() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(10, 1)), (2, data(10, 2))]);
    let h = a.send(0, B, 10, 1, 1).unwrap();
    assert_eq!(out(&mut a, 0, &msgs).len(), 1); // RTS lost
    a.abort(0, h).unwrap();
    let null = out(&mut a, 0, &msgs);
    sink.feed(&mut b, 0, &null);
    assert_eq!(b.peer(A).unwrap().rx_next(), 1);
    // The MSGDROP is lost; the retried NULL is answered again (statelessly).
    assert_eq!(types(&out(&mut b, 0, &msgs)), [PacketType::MsgDrop]);
    a.handle_timeout(RTO);
    sink.feed(&mut b, RTO, &out(&mut a, RTO, &msgs));
    assert_eq!(b.peer(A).unwrap().rx_next(), 1);
    a.send(RTO, B, 10, 2, 2).unwrap();
    pump(&mut a, &mut b, &mut sink, RTO, &msgs);
    assert_eq!(sink.arrivals, [(A, 1, 2)]);
    assert_eq!(
        send_status(&completions(&mut a)),
        [SendStatus::Aborted, SendStatus::Delivered { accepted: 10 }]
    );
    assert_eq!(completions(&mut b).len(), 1);
    assert_eq!((a.active_sends(), b.active_recvs()), (0, 0));
}

#[test]
fn send_table_full() {
    let (mut a, mut b, mut sink) = (eng_with(cfg(A), 2, 2), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(10, 1)), (2, data(10, 2)), (3, data(10, 3))]);
    a.send(0, B, 10, 0, 1).unwrap();
    a.send(0, B, 10, 0, 2).unwrap();
    assert_eq!(a.send(0, B, 10, 0, 3), Err(SendError::Full));
    assert_eq!(a.send(0, 99, 10, 0, 3), Err(SendError::UnknownPeer));
    pump(&mut a, &mut b, &mut sink, 0, &msgs);
    completions(&mut a);
    a.send(0, B, 10, 0, 3).unwrap();
}

#[test]
fn receive_table_full_sender_retries() {
    let (mut a, mut b, mut sink) = (eng(A), eng_with(cfg(B), 1, 1), Sink::default());
    let msgs = HashMap::from([(1, data(10, 1)), (2, data(10, 2))]);
    a.send(0, B, 10, 0, 1).unwrap();
    a.send(0, B, 10, 0, 2).unwrap();
    let f = out(&mut a, 0, &msgs);
    assert_eq!(sink.feed(&mut b, 0, &f), [Ok(true), Err(RxDrop::TableFull)]);
    // MSGEND and GCH free the entry; the retry of message 2 then gets in.
    pump(&mut a, &mut b, &mut sink, 0, &msgs);
    completions(&mut b);
    assert_eq!(b.active_recvs(), 0);
    a.handle_timeout(RTO);
    pump(&mut a, &mut b, &mut sink, RTO, &msgs);
    assert_eq!(sink.bufs[&2], msgs[&2]);
    assert_eq!(send_status(&completions(&mut a)).len(), 2);
}

#[test]
fn full_table_probe_recovers_lost_gch() {
    let (mut a, mut b, mut sink) = (eng(A), eng_with(cfg(B), 1, 1), Sink::default());
    let msgs = HashMap::from([(1, data(10, 1)), (2, data(10, 2))]);
    a.send(0, B, 10, 0, 1).unwrap();
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    for f in out(&mut b, 0, &msgs) {
        a.receive(0, &f, &mut |_: &Arrival<'_>| Decision::Drop)
            .unwrap();
    }
    completions(&mut a);
    completions(&mut b);
    assert_eq!(types(&out(&mut a, 0, &msgs)), [PacketType::Gch]); // lost
    a.send(RTO, B, 10, 0, 2).unwrap();
    assert_eq!(
        sink.feed(&mut b, RTO, &out(&mut a, RTO, &msgs)),
        [Err(RxDrop::TableFull)]
    );
    // B re-sends the old MSGEND; A no longer knows the message and answers GCH.
    let probe = out(&mut b, RTO, &msgs);
    assert_eq!(types(&probe), [PacketType::MsgEnd]);
    a.receive(RTO, &probe[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    sink.feed(&mut b, RTO, &out(&mut a, RTO, &msgs));
    assert_eq!(b.active_recvs(), 0);
    a.handle_timeout(2 * RTO);
    pump(&mut a, &mut b, &mut sink, 2 * RTO, &msgs);
    assert_eq!(sink.bufs[&2], msgs[&2]);
}

#[test]
fn reclaim_after_lost_gch_and_abandoned_receive() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(10, 1)), (2, data(1000, 2))]);
    a.send(0, B, 10, 0, 1).unwrap();
    a.send(0, B, 1000, 0, 2).unwrap();
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    // B answers; A never hears (A is gone), so no GCH ever comes.
    assert_eq!(out(&mut b, 0, &msgs).len(), 2);
    assert_eq!(b.active_recvs(), 2);
    assert_eq!(completions(&mut b).len(), 1);
    let reclaim = b.config().reclaim_timeout;
    assert_eq!(b.poll_timeout(), Some(reclaim));
    b.handle_timeout(reclaim - 1);
    assert_eq!(b.active_recvs(), 2);
    b.handle_timeout(reclaim);
    assert!(matches!(
        completions(&mut b)[..],
        [Completion::Recv {
            status: RecvStatus::Abandoned,
            ..
        }]
    ));
    assert_eq!(
        (b.active_recvs(), b.outstanding(), b.poll_timeout()),
        (0, 0, None)
    );
}

#[test]
fn sender_fails_after_retries_then_gives_up_null() {
    let mut a = eng(A);
    let msgs = HashMap::from([(1, data(500, 1))]);
    a.send(0, B, 500, 0, 1).unwrap();
    let mut now = 0;
    let mut sent = Vec::new();
    while let Some(t) = a.poll_timeout() {
        sent.extend(types(&out(&mut a, now, &msgs)));
        now = t;
        a.handle_timeout(now);
        sent.extend(types(&out(&mut a, now, &msgs)));
        assert!(now < 100 * RTO);
    }
    use PacketType::*;
    assert_eq!(sent, [Rts, Rts, Rts, Rts, Null, Null, Null, Null]);
    assert_eq!(send_status(&completions(&mut a)), [SendStatus::Failed]);
    assert_eq!(a.active_sends(), 0);
}

#[test]
fn misaddressed_and_malformed_frames() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let mut c = eng(2);
    let msgs = HashMap::from([(1, data(300, 1))]);
    a.send(0, B, 300, 0, 1).unwrap();
    let rts = out(&mut a, 0, &msgs);
    assert_eq!(sink.feed(&mut c, 0, &rts), [Err(RxDrop::NotForUs)]);
    let mut short = rts[0].clone();
    short.truncate(HEADER_LEN + 10);
    assert!(matches!(
        sink.feed(&mut b, 0, &[short])[0],
        Err(RxDrop::Parse(_))
    ));
    // An RTS whose payload is the whole message must be a LAST RTS.
    let mut bad = rts[0].clone();
    bad[20..24].copy_from_slice(&100u32.to_be_bytes());
    assert_eq!(sink.feed(&mut b, 0, &[bad]), [Err(RxDrop::Malformed)]);
    // Unknown peer.
    let mut far = rts[0].clone();
    far[4..8].copy_from_slice(&77u32.to_be_bytes());
    assert_eq!(sink.feed(&mut b, 0, &[far]), [Err(RxDrop::UnknownPeer)]);
    // Data for a message never seen.
    sink.feed(&mut b, 0, &rts);
    for f in out(&mut b, 0, &msgs) {
        a.receive(0, &f, &mut |_: &Arrival<'_>| Decision::Drop)
            .unwrap();
    }
    let block = out(&mut a, 0, &msgs);
    assert_eq!(sink.feed(&mut c, 0, &block)[0], Err(RxDrop::NotForUs));
    let mut wrong_len = block[0].clone();
    wrong_len[20..24].copy_from_slice(&301u32.to_be_bytes());
    assert_eq!(sink.feed(&mut b, 0, &[wrong_len]), [Err(RxDrop::Malformed)]);
    assert_eq!(sink.feed(&mut b, 0, &block[1..]), [Err(RxDrop::Stale)]);
    assert_eq!(sink.feed(&mut b, 0, &block), [Ok(true), Ok(true)]);
    assert_eq!(sink.bufs[&1], msgs[&1]);
}

#[test]
fn close_keeps_answering_until_gch() {
    // B delivers a message, its MSGEND is lost, and B's upper layer closes at
    // once (srnic: the receiving program exits). The closed engine still
    // answers the sender's retry, and re-sends MSGEND by itself every RTO,
    // until the GCH comes.
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(250, 1)), (2, data(10, 2))]);
    a.send(0, B, 250, 0, 1).unwrap();
    pump_until_msgend_lost(&mut a, &mut b, &mut sink, &msgs);
    assert_eq!(completions(&mut b).len(), 1);
    assert_eq!(b.close(0), 0);
    assert!(!b.is_idle());
    assert!(completions(&mut b).is_empty());
    // B's own probe after one RTO, before A's retry: MSGEND again.
    assert_eq!(b.poll_timeout(), Some(RTO));
    b.handle_timeout(RTO);
    let probe = out(&mut b, RTO, &msgs);
    assert_eq!(types(&probe), [PacketType::MsgEnd]);
    assert_eq!(repr(&probe[0]).info1, 250);
    // Lost too; A's retry is answered as before the close.
    a.handle_timeout(RTO);
    assert_eq!(
        sink.feed(&mut b, RTO, &out(&mut a, RTO, &msgs)),
        [Ok(false)]
    );
    let end = out(&mut b, RTO, &msgs);
    assert_eq!(types(&end), [PacketType::MsgEnd]);
    a.receive(RTO, &end[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    assert_eq!(
        send_status(&completions(&mut a)),
        [SendStatus::Delivered { accepted: 250 }]
    );
    // A new message is left with its sender while B is closed.
    a.send(RTO, B, 10, 0, 2).unwrap();
    let f = out(&mut a, RTO, &msgs);
    assert_eq!(types(&f), [PacketType::Gch, PacketType::LastRts]);
    assert_eq!(
        sink.feed(&mut b, RTO, &f),
        [Ok(false), Err(RxDrop::Deferred)]
    );
    assert_eq!(sink.arrivals.len(), 1);
    assert!(b.is_idle());
    assert_eq!(b.poll_timeout(), None);
}

#[test]
fn close_refuses_arriving_messages_and_aborts_sends() {
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 1)), (2, data(1000, 2))]);
    a.send(0, B, 1000, 0, 1).unwrap();
    b.send(0, A, 1000, 0, 2).unwrap();
    // A's RTS arrives and is granted; B's RTS is lost.
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    let cts = out(&mut b, 0, &msgs);
    assert_eq!(types(&cts), [PacketType::Cts, PacketType::Rts]);
    a.receive(0, &cts[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    // B closes in the middle of A's message: MSGDROP for it, NULL for its own.
    assert_eq!(b.close(0), 1);
    assert_eq!(b.outstanding(), 0);
    assert!(completions(&mut b).is_empty());
    let f = out(&mut b, 0, &msgs);
    assert_eq!(types(&f), [PacketType::MsgDrop, PacketType::Null]);
    a.receive(0, &f[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    assert_eq!(send_status(&completions(&mut a)), [SendStatus::Dropped]);
    // A never saw B's message: the NULL is answered with a stateless MSGDROP.
    a.receive(0, &f[1], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    let a_out = out(&mut a, 0, &msgs);
    assert_eq!(types(&a_out), [PacketType::MsgDrop, PacketType::Gch]);
    sink.feed(&mut b, 0, &a_out[1..]);
    b.receive(0, &a_out[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    assert_eq!(types(&out(&mut b, 0, &msgs)), [PacketType::Gch]);
    assert!(completions(&mut b).is_empty());
    assert!(b.is_idle());
}

#[test]
fn close_gives_up_at_reclaim() {
    // The sender is gone: the closed receiver probes every RTO and frees the
    // message at the reclaim timeout, without a completion.
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(10, 1))]);
    a.send(0, B, 10, 0, 1).unwrap();
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    b.close(0);
    let reclaim = b.config().reclaim_timeout;
    let mut probes = 0;
    let mut now = 0;
    while let Some(t) = b.poll_timeout() {
        now = t;
        b.handle_timeout(now);
        probes += out(&mut b, now, &msgs).len();
    }
    assert_eq!(now, reclaim);
    // One MSGEND every RTO from the first RTO on (the unsent first answer
    // included) until the reclaim timeout, which sends nothing.
    assert_eq!(probes as u64, reclaim / RTO - 1);
    assert!(b.is_idle());
    assert!(completions(&mut b).is_empty());
}

/// Sends `a`'s message to `b` until `b` has delivered it; `b`'s MSGEND is lost.
fn pump_until_msgend_lost(a: &mut Eng, b: &mut Eng, sink: &mut Sink, msgs: &HashMap<u64, Vec<u8>>) {
    for _ in 0..16 {
        sink.feed(b, 0, &out(a, 0, msgs));
        let fb = out(b, 0, msgs);
        if types(&fb).contains(&PacketType::MsgEnd) {
            return;
        }
        for f in &fb {
            a.receive(0, f, &mut |_: &Arrival<'_>| Decision::Drop)
                .unwrap();
        }
    }
    panic!("no MSGEND");
}

// Receiver-driven recovery (NAK and selective NAK).

fn eng_rec(nid: u32, recovery: Recovery) -> Eng {
    let mut c = cfg(nid);
    c.recovery = recovery;
    eng_with(c, 2, 2)
}

/// Starts a 1000-byte message (RTS and nine data packets, grants of four) from
/// `a` to `b` and returns the first granted block, packets 1 to 4.
fn first_block(
    a: &mut Eng,
    b: &mut Eng,
    sink: &mut Sink,
    msgs: &HashMap<u64, Vec<u8>>,
) -> Vec<Vec<u8>> {
    a.send(0, B, 1000, 0, 1).unwrap();
    let rts = out(a, 0, msgs);
    assert_eq!(repr(&rts[0]).info1, a.config().recovery.caps());
    sink.feed(b, 0, &rts);
    let cts = out(b, 0, msgs);
    assert_eq!(types(&cts), [PacketType::Cts]);
    a.receive(0, &cts[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    let block = out(a, 0, msgs);
    assert_eq!(
        block.iter().map(|f| repr(f).seq).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    block
}

fn to_sender(a: &mut Eng, frames: &[Vec<u8>]) -> Vec<Result<(), RxDrop>> {
    frames
        .iter()
        .map(|f| {
            a.receive(0, f, &mut |_: &Arrival<'_>| Decision::Drop)
                .map(|_| ())
        })
        .collect()
}

fn finish(a: &mut Eng, b: &mut Eng, sink: &mut Sink, msgs: &HashMap<u64, Vec<u8>>) {
    pump(a, b, sink, 0, msgs);
    assert_eq!(sink.bufs[&1], msgs[&1]);
    assert_eq!(
        send_status(&completions(a)),
        [SendStatus::Delivered { accepted: 1000 }]
    );
    assert_eq!(a.counters().retransmits, 0, "no timeout was needed");
    assert_eq!(b.outstanding(), 0);
}

#[test]
fn nak_goes_back_to_the_lost_packet() {
    let (mut a, mut b, mut sink) = (
        eng_rec(A, Recovery::Nak),
        eng_rec(B, Recovery::Nak),
        Sink::default(),
    );
    let msgs = HashMap::from([(1, data(1000, 11))]);
    let block = first_block(&mut a, &mut b, &mut sink, &msgs);
    // Packet 2 is lost: 3 and 4 are dropped, and one NAK asks for 2.
    let res = sink.feed(
        &mut b,
        0,
        &[block[0].clone(), block[2].clone(), block[3].clone()],
    );
    assert_eq!(res, [Ok(true), Err(RxDrop::Stale), Err(RxDrop::Stale)]);
    let nak = out(&mut b, 0, &msgs);
    assert_eq!(types(&nak), [PacketType::Nak]);
    assert_eq!(repr(&nak[0]).seq, 2);
    assert_eq!(to_sender(&mut a, &nak), [Ok(())]);
    // The sender goes back: 2, 3 and 4 again, at once.
    let again = out(&mut a, 0, &msgs);
    assert_eq!(
        again.iter().map(|f| repr(f).seq).collect::<Vec<_>>(),
        [2, 3, 4]
    );
    // 2 is lost again: the next pass's 3 is a lower number than the last one
    // dropped (4), so the receiver asks again.
    sink.feed(&mut b, 0, &again[1..2]);
    let nak = out(&mut b, 0, &msgs);
    assert_eq!(types(&nak), [PacketType::Nak]);
    to_sender(&mut a, &nak);
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    finish(&mut a, &mut b, &mut sink, &msgs);
    assert_eq!((b.counters().naks_sent, a.counters().naks_received), (2, 2));
    assert_eq!(a.counters().resent_pkts, 6); // 2, 3 and 4, twice
}

#[test]
fn selective_nak_resends_only_what_is_missing() {
    let rec = Recovery::SelectiveNak;
    let (mut a, mut b, mut sink) = (eng_rec(A, rec), eng_rec(B, rec), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 12))]);
    let block = first_block(&mut a, &mut b, &mut sink, &msgs);
    // 1 and 3 are lost; 2 and 4 are kept (placed) and one NAK lists 1 and 3.
    let res = sink.feed(&mut b, 0, &[block[1].clone(), block[3].clone()]);
    assert_eq!(res, [Ok(true), Ok(true)]);
    assert_eq!(
        sink.feed(&mut b, 0, &block[1..2]),
        [Err(RxDrop::Stale)],
        "duplicate"
    );
    let nak = out(&mut b, 0, &msgs);
    assert_eq!(types(&nak), [PacketType::SelectiveNak]);
    let r = repr(&nak[0]);
    assert_eq!((r.seq, r.tag, r.info1), (1, 0b101, 2));
    assert_eq!(to_sender(&mut a, &nak), [Ok(())]);
    let again = out(&mut a, 0, &msgs);
    assert_eq!(
        again.iter().map(|f| repr(f).seq).collect::<Vec<_>>(),
        [1, 3]
    );
    sink.feed(&mut b, 0, &again);
    // The block is complete: the next grant comes without a timeout.
    let cts = out(&mut b, 0, &msgs);
    assert_eq!(types(&cts), [PacketType::Cts]);
    assert_eq!(repr(&cts[0]).seq, 5);
    to_sender(&mut a, &cts);
    finish(&mut a, &mut b, &mut sink, &msgs);
    assert_eq!((b.counters().naks_sent, a.counters().naks_received), (1, 1));
    assert_eq!(
        (a.counters().resent_pkts, a.counters().resent_bytes),
        (2, 200)
    );
}

#[test]
fn selective_nak_asks_again_for_a_packet_lost_twice() {
    let rec = Recovery::SelectiveNak;
    let (mut a, mut b, mut sink) = (eng_rec(A, rec), eng_rec(B, rec), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 13))]);
    let block = first_block(&mut a, &mut b, &mut sink, &msgs);
    sink.feed(&mut b, 0, &block[2..]);
    let nak = out(&mut b, 0, &msgs);
    let r = repr(&nak[0]);
    assert_eq!((r.seq, r.tag), (1, 0b11));
    // Nothing new is missing: no second NAK for the same packets.
    sink.feed(&mut b, 0, &block[2..3]);
    assert!(out(&mut b, 0, &msgs).is_empty());
    to_sender(&mut a, &nak);
    let again = out(&mut a, 0, &msgs);
    assert_eq!(
        again.iter().map(|f| repr(f).seq).collect::<Vec<_>>(),
        [1, 2]
    );
    // 1 is lost again; 2, asked for after it, shows that.
    sink.feed(&mut b, 0, &again[1..]);
    let nak = out(&mut b, 0, &msgs);
    let r = repr(&nak[0]);
    assert_eq!((r.ptype, r.seq, r.tag), (PacketType::SelectiveNak, 1, 1));
    to_sender(&mut a, &nak);
    sink.feed(&mut b, 0, &out(&mut a, 0, &msgs));
    finish(&mut a, &mut b, &mut sink, &msgs);
    assert_eq!(b.counters().naks_sent, 2);
}

#[test]
fn naks_only_where_both_sides_offer_them() {
    use Recovery::*;
    assert_eq!(SelectiveNak.negotiate(SelectiveNak.caps()), SelectiveNak);
    assert_eq!(SelectiveNak.negotiate(caps::NAK), Nak);
    assert_eq!(Nak.negotiate(SelectiveNak.caps()), Nak);
    assert_eq!(SelectiveNak.negotiate(0), Timeout);
    assert_eq!(Timeout.negotiate(u32::MAX), Timeout);
    assert_eq!(SelectiveNak.negotiate(1 << 7), Timeout, "unknown bits");
    for (sender, receiver) in [
        (SelectiveNak, Timeout),
        (Timeout, SelectiveNak),
        (Timeout, Nak),
    ] {
        let (mut a, mut b, mut sink) = (eng_rec(A, sender), eng_rec(B, receiver), Sink::default());
        let msgs = HashMap::from([(1, data(1000, 14))]);
        let block = first_block(&mut a, &mut b, &mut sink, &msgs);
        let res = sink.feed(&mut b, 0, &[block[0].clone(), block[2].clone()]);
        assert_eq!(
            res,
            [Ok(true), Err(RxDrop::Stale)],
            "{sender:?} -> {receiver:?}"
        );
        assert!(
            out(&mut b, 0, &msgs).is_empty(),
            "no NAK: {sender:?} -> {receiver:?}"
        );
        // The paper's recovery: the sender's timeout.
        a.handle_timeout(RTO);
        assert_eq!(a.counters().retransmits, 1);
        pump(&mut a, &mut b, &mut sink, RTO, &msgs);
        assert_eq!(sink.bufs[&1], msgs[&1]);
        assert_eq!(b.counters().naks_sent, 0);
    }
}

#[test]
fn stale_and_bogus_naks_are_dropped() {
    let rec = Recovery::SelectiveNak;
    let (mut a, mut b, mut sink) = (eng_rec(A, rec), eng_rec(B, rec), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 15))]);
    let block = first_block(&mut a, &mut b, &mut sink, &msgs);
    sink.feed(&mut b, 0, &block[1..2]);
    let nak = out(&mut b, 0, &msgs);
    let edit = |f: &dyn Fn(&mut Repr)| {
        let mut r = repr(&nak[0]);
        f(&mut r);
        let mut v = vec![0u8; HEADER_LEN];
        r.emit(&mut Packet::new_unchecked(&mut v[..]));
        v
    };
    let bad = [
        (edit(&|r| r.info2 = 5), RxDrop::Stale), // another attempt
        (edit(&|r| r.seq = 7), RxDrop::Stale),   // not sent yet
        (edit(&|r| r.tag = 0b10), RxDrop::Malformed), // does not name seq
        (edit(&|r| r.msg_id ^= 1), RxDrop::UnknownMessage), // no GCH for it either
    ];
    for (f, want) in &bad {
        assert_eq!(to_sender(&mut a, std::slice::from_ref(f)), [Err(*want)]);
    }
    assert!(out(&mut a, 0, &msgs).is_empty(), "nothing resent, no GCH");
    assert_eq!(a.counters().naks_received, 0);
    // A NAK while the message waits for its first CTS is unexpected.
    let mut c = eng_rec(A, rec);
    c.send(0, B, 1000, 0, 1).unwrap();
    out(&mut c, 0, &msgs);
    let go_back = edit(&|r| r.ptype = PacketType::Nak);
    assert_eq!(to_sender(&mut c, &[go_back]), [Err(RxDrop::Unexpected)]);
}

#[test]
fn selective_nak_needs_a_block_mask_wide_enough() {
    let mut c = cfg(A);
    c.recovery = Recovery::SelectiveNak;
    c.max_data_pkts = 257;
    assert_eq!(c.validate(), Err(ConfigError::GrantTooWide));
    c.max_data_pkts = 256;
    assert_eq!(c.validate(), Ok(()));
    c.recovery = Recovery::Nak;
    c.max_data_pkts = 1000;
    assert_eq!(c.validate(), Ok(()));
}

#[test]
fn restart_resumes_where_the_receiver_is() {
    // The block's last packet is lost: no gap shows, the sender's timeout
    // restarts the message (paper policy: from packet 1). A receiver with
    // NAKs grants from the packet it misses, and the sender takes that grant.
    for rec in [Recovery::Nak, Recovery::SelectiveNak] {
        let (mut a, mut b, mut sink) = (eng_rec(A, rec), eng_rec(B, rec), Sink::default());
        let msgs = HashMap::from([(1, data(1000, 16))]);
        let block = first_block(&mut a, &mut b, &mut sink, &msgs);
        sink.feed(&mut b, 0, &block[..3]);
        assert!(out(&mut b, 0, &msgs).is_empty(), "{rec:?}: nothing to NAK");
        a.handle_timeout(RTO);
        let restart = out(&mut a, RTO, &msgs);
        assert_eq!(restart.iter().map(|f| repr(f).seq).collect::<Vec<_>>(), [1]);
        assert_eq!(sink.feed(&mut b, RTO, &restart), [Ok(false)]);
        let cts = out(&mut b, RTO, &msgs);
        let r = repr(&cts[0]);
        assert_eq!(
            (r.ptype, r.seq, r.info2),
            (PacketType::Cts, 4, 1),
            "{rec:?}"
        );
        assert_eq!(to_sender(&mut a, &cts), [Ok(())]);
        let resumed = out(&mut a, RTO, &msgs);
        assert_eq!(repr(&resumed[0]).seq, 4);
        sink.feed(&mut b, RTO, &resumed);
        pump(&mut a, &mut b, &mut sink, RTO, &msgs);
        assert_eq!(sink.bufs[&1], msgs[&1]);
        assert_eq!(a.counters().resent_pkts, 2, "{rec:?}: packets 1 and 4");
    }
}

#[test]
fn timeout_follows_the_measured_round_trip() {
    // 200 us round trips, a 1 ms ceiling and a 10 us floor: after the RTS's
    // and the first block's round trips (srtt 200 us, rttvar 75 us) the
    // sender waits 500 us for a lost block end, not 1 ms, and twice that
    // after a timeout (capped at the ceiling).
    const RTT: u64 = 200_000;
    let mut ca = cfg(A);
    ca.min_retransmit_timeout = 10_000;
    let (mut a, mut b, mut sink) = (eng_with(ca, 2, 2), eng(B), Sink::default());
    let msgs = HashMap::from([(1, data(1000, 3))]);
    a.send(0, B, 1000, 0, 1).unwrap();
    let mut now = 0;
    let mut to_b = out(&mut a, now, &msgs);
    for _ in 0..2 {
        sink.feed(&mut b, now + RTT / 2, &to_b);
        for f in out(&mut b, now + RTT / 2, &msgs) {
            assert_eq!(repr(&f).ptype, PacketType::Cts);
            a.receive(now + RTT, &f, &mut |_: &Arrival<'_>| Decision::Drop)
                .unwrap();
        }
        now += RTT;
        to_b = out(&mut a, now, &msgs);
    }
    assert_eq!(a.rtt().srtt(), Some(RTT));
    // The second block (5..8) loses its last packet.
    assert_eq!(types(&to_b).last(), Some(&PacketType::StopData));
    assert_eq!(a.poll_timeout(), Some(now + 500_000));
    to_b.pop();
    sink.feed(&mut b, now + RTT / 2, &to_b);
    assert!(out(&mut b, now + RTT / 2, &msgs).is_empty());
    now += 500_000;
    a.handle_timeout(now);
    assert_eq!(a.counters().retransmits, 1);
    let restart = out(&mut a, now, &msgs);
    assert_eq!(repr(&restart[0]).info2, 1);
    // Backed off: twice 500 us is the 1 ms ceiling.
    assert_eq!(a.poll_timeout(), Some(now + RTO));
    sink.feed(&mut b, now, &restart);
    pump(&mut a, &mut b, &mut sink, now, &msgs);
    assert_eq!(sink.bufs[&1], msgs[&1]);
    assert_eq!(
        send_status(&completions(&mut a)),
        [SendStatus::Delivered { accepted: 1000 }]
    );
    // Without a floor the timeout stays fixed at the ceiling.
    let (mut f, mut g, mut sink) = (eng(A), eng(B), Sink::default());
    f.send(0, B, 1000, 0, 1).unwrap();
    sink.feed(&mut g, 0, &out(&mut f, 0, &msgs));
    for c in out(&mut g, 0, &msgs) {
        f.receive(RTT, &c, &mut |_: &Arrival<'_>| Decision::Drop)
            .unwrap();
    }
    out(&mut f, RTT, &msgs);
    assert_eq!(f.poll_timeout(), Some(RTT + RTO));
}

#[test]
fn a_floor_above_the_timeout_is_refused() {
    let mut c = cfg(A);
    c.min_retransmit_timeout = RTO + 1;
    assert_eq!(
        Engine::new(
            c,
            vec![SendSlot::default(); 1],
            vec![RecvSlot::default(); 1],
            vec![PeerState::default(); 1]
        )
        .err(),
        Some(ConfigError::MinTimeoutTooLong)
    );
}

#[test]
fn rts_dropped_behind_a_held_one_is_sent_again_once_it_is_taken() {
    // The receiver holds message 0 (no receive posted) and drops the RTSs of
    // messages 1 and 2, which arrive ahead of it. When message 0's retry is
    // taken, the sender sends 1 and 2 again at once instead of at their own
    // (later) timeouts.
    let (mut a, mut b, mut sink) = (eng(A), eng(B), Sink::default());
    let msgs = HashMap::from([(0, data(50, 1)), (1, data(60, 2)), (2, data(70, 3))]);
    a.send(0, B, 50, 0, 0).unwrap();
    let first = out(&mut a, 0, &msgs);
    a.send(10, B, 60, 1, 1).unwrap();
    a.send(10, B, 70, 2, 2).unwrap();
    let later = out(&mut a, 10, &msgs);
    assert_eq!(types(&later), [PacketType::LastRts, PacketType::LastRts]);
    sink.decision = Some(Decision::Defer);
    assert_eq!(sink.feed(&mut b, 10, &first), [Err(RxDrop::Deferred)]);
    assert_eq!(
        sink.feed(&mut b, 10, &later),
        [Err(RxDrop::OutOfOrder), Err(RxDrop::OutOfOrder)]
    );
    // Message 0 times out first and is taken this time.
    a.handle_timeout(RTO);
    let retry = out(&mut a, RTO, &msgs);
    assert_eq!(types(&retry), [PacketType::LastRts]);
    sink.decision = None;
    assert_eq!(sink.feed(&mut b, RTO, &retry), [Ok(true)]);
    let end = out(&mut b, RTO, &msgs);
    a.receive(RTO, &end[0], &mut |_: &Arrival<'_>| Decision::Drop)
        .unwrap();
    // 1 and 2 go again now, before their timeouts (at RTO + 10).
    let again = out(&mut a, RTO + 1, &msgs);
    assert_eq!(
        again
            .iter()
            .filter(|f| repr(f).ptype == PacketType::LastRts)
            .count(),
        2,
        "{:?}",
        types(&again)
    );
    assert_eq!(
        sink.feed(&mut b, RTO + 1, &again)[again.len() - 2..],
        [Ok(true), Ok(true)]
    );
    assert_eq!(a.counters().retransmits, 1);
    pump(&mut a, &mut b, &mut sink, RTO + 1, &msgs);
    // The first arrival was the held one.
    assert_eq!(sink.arrivals.len(), 4);
    for (ctx, m) in [(2, 0), (3, 1), (4, 2)] {
        assert_eq!(sink.bufs[&ctx], msgs[&m]);
    }
}
