// SPDX-License-Identifier: GPL-2.0
//! Two-peer simulation over an in-memory byte stream: MPA negotiation in several
//! combinations (reject, markers, CRC, peer-to-peer RTR, siw rules), then every RDMAP
//! operation end to end with toy memory regions and receive buffers, and the error
//! cases with the TERMINATE each must produce.

mod iwarp_common;

use iwarp_common::{Peer, Region, Seen};
use srnic_proto::crc::SoftCrc32c;
use srnic_proto::ddp::Placement;
use srnic_proto::mpa::frame::{Frame, FrameError, FrameKind, IrdOrd, KEY_REP};
use srnic_proto::mpa::negotiate::{
    Initiator, InitiatorOutcome, MpaConfig, NegotiationError, Responder,
};
use srnic_proto::mpa::{Negotiated, Rtr, RtrCaps, RtrMode};
use srnic_proto::rdmap::engine::{Completion, RecvEngine, RxAction};
use srnic_proto::rdmap::reads::{OrdError, OrqEntry, Reads};
use srnic_proto::rdmap::tx::WorkRequest;
use srnic_proto::rdmap::{Body, Header, ReadRequest, SendOp, StagError, TermCode};

type NegResult = Result<
    (Negotiated, Negotiated, Initiator, Responder),
    (Option<InitiatorOutcome>, NegotiationError),
>;

/// Runs start-up, delivering bytes in `chunk`-sized pieces. Returns the initiator's
/// outcome and the responder's result (or the first error).
fn negotiate(icfg: MpaConfig, rcfg: MpaConfig, ipd: &[u8], rpd: &[u8], chunk: usize) -> NegResult {
    let mut i = Initiator::new(icfg);
    let mut r = Responder::new(rcfg);
    let mut buf = [0u8; 600];
    let n = i.request(ipd, &mut buf).map_err(|e| (None, e))?;
    let mut got = None;
    for c in buf[..n].chunks(chunk) {
        let (used, req) = r.on_bytes(c).map_err(|e| (None, e))?;
        assert_eq!(used, c.len());
        got = got.or(req);
    }
    got.expect("request complete");
    assert_eq!(r.peer_private_data(), ipd);
    let mut rep = [0u8; 600];
    let (m, rn) = match r.accept(rpd, &mut rep) {
        Ok(x) => x,
        Err(e) => {
            let m = r.reject(b"no thanks", &mut rep).unwrap();
            let mut out = None;
            for c in rep[..m].chunks(chunk) {
                out = i.on_bytes(c).unwrap().1.or(out);
            }
            return Err((out, e));
        }
    };
    let mut out = None;
    for c in rep[..m].chunks(chunk) {
        let (used, o) = i.on_bytes(c).map_err(|e| (None, e))?;
        assert_eq!(used, c.len());
        out = o.or(out);
    }
    match out {
        Some(InitiatorOutcome::Accepted(n)) => Ok((n, rn, i, r)),
        other => Err((other, NegotiationError::State)),
    }
}

fn siw() -> MpaConfig {
    MpaConfig::siw_compatible()
}

#[test]
fn negotiate_siw_defaults_byte_by_byte() {
    let (ni, nr, i, r) = negotiate(siw(), siw(), b"client", b"server", 1).unwrap();
    for n in [ni, nr] {
        assert_eq!(n.revision, 2);
        assert!(!n.crc_tx && !n.crc_rx && !n.markers_tx && !n.markers_rx);
        assert_eq!((n.ird, n.ord), (1, 1));
        assert_eq!(n.rtr, Rtr::None);
    }
    assert_eq!(i.peer_private_data(), b"server");
    assert_eq!(r.peer_private_data(), b"client");
    assert_eq!((ni.private_data_start, ni.private_data_len), (24, 6));
}

#[test]
fn negotiate_crc_either_side() {
    for (ic, rc) in [(true, false), (false, true), (true, true)] {
        let mut a = siw();
        a.crc = ic;
        let mut b = siw();
        b.crc = rc;
        let (ni, nr, ..) = negotiate(a, b, b"", b"", 7).unwrap();
        assert!(ni.crc_tx && ni.crc_rx && nr.crc_tx && nr.crc_rx);
    }
}

#[test]
fn negotiate_markers_per_direction() {
    let mut a = siw();
    a.markers_rx = true; // the initiator wants markers in what it receives
    let (ni, nr, ..) = negotiate(a, siw(), b"", b"", 3).unwrap();
    assert!(ni.markers_rx && !ni.markers_tx);
    assert!(nr.markers_tx && !nr.markers_rx);
}

#[test]
fn negotiate_markers_refused_becomes_reject_with_private_data() {
    let mut a = siw();
    a.markers_rx = true;
    let mut b = siw();
    b.markers_tx_ok = false; // like siw: no marker support, reject
    let (outcome, err) = negotiate(a, b, b"", b"", 5).unwrap_err();
    assert_eq!(err, NegotiationError::MarkersUnsupported);
    assert_eq!(outcome, Some(InitiatorOutcome::Rejected));
}

#[test]
fn negotiate_rev1() {
    let mut a = siw();
    a.revision = 1;
    let (ni, nr, ..) = negotiate(a, siw(), b"x", b"", 4).unwrap();
    assert_eq!((ni.revision, nr.revision), (1, 1));
    // No IRD/ORD exchange: local settings apply.
    assert_eq!((ni.ird, ni.ord), (1, 1));
}

#[test]
fn negotiate_ird_ord_capped() {
    let mut a = siw();
    a.ird = 4;
    a.ord = 16;
    let mut b = siw();
    b.ird = 2;
    b.ord = 8;
    let (ni, nr, ..) = negotiate(a, b, b"", b"", 64).unwrap();
    // Responder: IRD = min(2, initiator ORD 16) = 2, ORD = min(8, initiator IRD 4) = 4.
    assert_eq!((nr.ird, nr.ord), (2, 4));
    // Initiator: IRD = responder's ORD, ORD = min(16, responder IRD 2).
    assert_eq!((ni.ird, ni.ord), (4, 2));
}

#[test]
fn negotiate_p2p_modes() {
    let mut a = siw();
    a.p2p = true;
    a.rtr = RtrCaps {
        write: true,
        read: true,
        send: false,
    };
    let mut b = siw();
    b.p2p = true;
    b.rtr = RtrCaps {
        write: false,
        read: true,
        send: true,
    };
    let (ni, nr, ..) = negotiate(a, b, b"", b"", 2).unwrap();
    assert_eq!(ni.rtr, Rtr::Send(RtrMode::Read));
    assert_eq!(nr.rtr, Rtr::Await(RtrMode::Read));

    // No RTR offered: the responder proposes Write (siw).
    a.rtr = RtrCaps::default();
    b.rtr.write = true;
    let mut i = Initiator::new(a);
    let mut r = Responder::new(b);
    let mut buf = [0u8; 64];
    let n = i.request(b"", &mut buf).unwrap();
    r.on_bytes(&buf[..n]).unwrap();
    let (_, nr) = r.accept(b"", &mut buf).unwrap();
    assert_eq!(nr.rtr, Rtr::Await(RtrMode::Write));

    // No common mode: LLP/MPA/0x07.
    a.rtr = RtrCaps {
        write: false,
        read: false,
        send: true,
    };
    b.rtr = RtrCaps {
        write: true,
        read: false,
        send: false,
    };
    let (_, err) = negotiate(a, b, b"", b"", 9).unwrap_err();
    assert_eq!(err, NegotiationError::NoMatchingRtr);
    assert_eq!(err.term_code(), Some(TermCode::LlpNoMatchingRtr));
}

fn reply_bytes(f: Frame<'_>) -> Vec<u8> {
    let mut b = vec![0u8; 600];
    let n = f.emit(&mut b, 512).unwrap();
    b.truncate(n);
    b
}

fn enhanced_reply(ird: u16, ord: u16) -> Frame<'static> {
    Frame {
        kind: FrameKind::Reply,
        markers: false,
        crc: false,
        reject: false,
        large_fpdu: false,
        other_bits: 0,
        revision: 2,
        ird_ord: Some(IrdOrd {
            ird,
            ord,
            p2p: false,
            rtr: RtrCaps::default(),
        }),
        private_data: b"",
    }
}

fn initiator_waiting(cfg: MpaConfig) -> Initiator {
    let mut i = Initiator::new(cfg);
    let mut buf = [0u8; 64];
    i.request(b"", &mut buf).unwrap();
    i
}

#[test]
fn initiator_rejects_bad_replies() {
    // Responder ORD beyond our IRD: LLP/MPA/0x06.
    let mut i = initiator_waiting(siw());
    let e = i.on_bytes(&reply_bytes(enhanced_reply(1, 5))).unwrap_err();
    assert_eq!(e, NegotiationError::InsufficientIrd);
    assert_eq!(e.term_code(), Some(TermCode::LlpInsufficientIrd));

    // Bad key: LLP/MPA/0x04.
    let mut i = initiator_waiting(siw());
    let mut bad = reply_bytes(enhanced_reply(1, 1));
    bad[..16].copy_from_slice(b"MPA ID Bad Frame");
    let e = i.on_bytes(&bad).unwrap_err();
    assert_eq!(e, NegotiationError::Frame(FrameError::BadKey));
    assert_eq!(e.term_code(), Some(TermCode::LlpBadReqRep));

    // siw rule: an Enhanced request requires an Enhanced revision-2 reply.
    let mut i = initiator_waiting(siw());
    let mut f = enhanced_reply(1, 1);
    f.ird_ord = None;
    f.revision = 1;
    assert_eq!(
        i.on_bytes(&reply_bytes(f)).unwrap_err(),
        NegotiationError::Revision
    );

    // A Request where a Reply belongs.
    let mut i = initiator_waiting(siw());
    let mut f = enhanced_reply(1, 1);
    f.kind = FrameKind::Request;
    assert_eq!(
        i.on_bytes(&reply_bytes(f)).unwrap_err(),
        NegotiationError::WrongKind
    );
    assert_eq!(&KEY_REP, b"MPA ID Rep Frame");
}

#[test]
fn responder_rejects_pipelined_fpdu_and_bad_revision() {
    let mut i = Initiator::new(siw());
    let mut buf = [0u8; 64];
    let n = i.request(b"", &mut buf).unwrap();
    let mut r = Responder::new(siw());
    let mut with_extra = buf[..n].to_vec();
    with_extra.extend_from_slice(&[0, 0x12, 0x41, 0x43]);
    assert_eq!(
        r.on_bytes(&with_extra).unwrap_err(),
        NegotiationError::PipelinedData
    );
    // Arriving in a later chunk is just as wrong.
    let mut r = Responder::new(siw());
    r.on_bytes(&buf[..n]).unwrap();
    assert_eq!(
        r.on_bytes(&[0]).unwrap_err(),
        NegotiationError::PipelinedData
    );
    // Revision 3.
    let mut r = Responder::new(siw());
    let mut bad = buf[..n].to_vec();
    bad[17] = 3;
    assert_eq!(r.on_bytes(&bad).unwrap_err(), NegotiationError::Revision);
}

#[test]
fn fpdu_right_behind_reply_goes_to_the_framer() {
    let mut i = initiator_waiting(siw());
    let mut bytes = reply_bytes(enhanced_reply(1, 1));
    let reply_len = bytes.len();
    let n = Negotiated {
        revision: 2,
        crc_tx: false,
        crc_rx: false,
        markers_tx: false,
        markers_rx: false,
        ird: 1,
        ord: 1,
        rtr: Rtr::None,
        peer_large_fpdu: false,
        private_data_start: 0,
        private_data_len: 0,
    };
    let mut resp = Peer::new(&n, 1000);
    resp.send(
        WorkRequest::Send {
            op: SendOp::Send,
            inval_stag: 0,
            len: 3,
        },
        b"abc",
    );
    bytes.extend_from_slice(&resp.out);
    let (used, out) = i.on_bytes(&bytes).unwrap();
    assert_eq!(used, reply_len);
    let Some(InitiatorOutcome::Accepted(neg)) = out else {
        panic!("not accepted")
    };
    let mut init = Peer::new(&neg, 1000);
    init.verbs.recvs.push_back(vec![0; 16]);
    init.receive(&bytes[used..], &[5]);
    assert_eq!(
        init.seen,
        vec![Seen::Recv {
            data: b"abc".to_vec(),
            invalidate: None,
            solicited: false
        }]
    );
}

// ------------------------------------------------------------------ full operation

/// Negotiates with CRC and markers in both directions, returns connected peers.
fn connected(mulpdu: u16) -> (Peer, Peer) {
    let mut a = siw();
    a.crc = true;
    a.markers_rx = true;
    a.ird = 4;
    a.ord = 4;
    let mut b = a;
    b.markers_rx = true;
    let (ni, nr, ..) = negotiate(a, b, b"", b"", 11).unwrap();
    assert!(ni.markers_tx && ni.markers_rx && nr.markers_tx && nr.markers_rx);
    let mut i = Peer::new(&ni, mulpdu);
    let mut r = Peer::new(&nr, mulpdu);
    for p in [&mut i, &mut r] {
        p.verbs.pd = 7;
        p.verbs.regions.push(Region {
            stag: 0x1100,
            base: 0x10_0000,
            data: vec![0; 8192],
            remote_write: true,
            remote_read: true,
            pd: 7,
        });
        p.verbs.regions.push(Region {
            stag: 0x2200,
            base: 0x20_0000,
            data: (0..4096u32).map(|x| (x * 13) as u8).collect(),
            remote_write: false,
            remote_read: true,
            pd: 7,
        });
        p.verbs.regions.push(Region {
            stag: 0x3300,
            base: 0,
            data: vec![0; 64],
            remote_write: true,
            remote_read: true,
            pd: 8,
        });
    }
    (i, r)
}

/// Moves bytes both ways until quiet, with odd chunk sizes.
fn pump(a: &mut Peer, b: &mut Peer) {
    for _ in 0..8 {
        let x = std::mem::take(&mut a.out);
        b.receive(&x, &[1, 7, 300, 2, 1500]);
        let y = std::mem::take(&mut b.out);
        a.receive(&y, &[3, 1000, 1]);
        if a.out.is_empty() && b.out.is_empty() {
            return;
        }
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn every_send_variant() {
    let (mut a, mut b) = connected(600);
    let ops = [
        (SendOp::Send, 0, 10),
        (SendOp::SendInvalidate, 0x4455, 1500),
        (SendOp::SendSe, 0, 0),
        (SendOp::SendSeInvalidate, 0x99, 3000),
    ];
    for (op, inv, len) in ops {
        b.verbs.recvs.push_back(vec![0; 3000]);
        a.send(
            WorkRequest::Send {
                op,
                inval_stag: inv,
                len: len as u32,
            },
            &pattern(len, len as u8),
        );
    }
    pump(&mut a, &mut b);
    let want: Vec<Seen> = ops
        .iter()
        .map(|&(op, inv, len)| Seen::Recv {
            data: pattern(len, len as u8),
            invalidate: op.invalidates().then_some(inv),
            solicited: op.solicited(),
        })
        .collect();
    assert_eq!(b.seen, want);
    assert!(b.verbs.recvs.is_empty());
}

#[test]
fn rdma_write_and_read() {
    let (mut a, mut b) = connected(1000);
    let data = pattern(5000, 1);
    a.send(
        WorkRequest::Write {
            stag: 0x1100,
            to: 0x10_0000 + 100,
            len: 5000,
        },
        &data,
    );
    // Read 3000 bytes of B's read-only region into A's region at offset 4000.
    a.read(
        ReadRequest {
            sink_stag: 0x1100,
            sink_to: 0x10_0000 + 4000,
            read_size: 3000,
            src_stag: 0x2200,
            src_to: 0x20_0000 + 96,
        },
        77,
    )
    .unwrap();
    pump(&mut a, &mut b);
    assert_eq!(&b.verbs.regions[0].data[100..5100], &data[..]);
    assert_eq!(
        &a.verbs.regions[0].data[4000..7000],
        &b.verbs.regions[1].data[96..3096]
    );
    assert_eq!(
        a.seen,
        vec![Seen::ReadDone {
            cookie: 77,
            len: 3000
        }]
    );
    assert_eq!(b.verbs.reads.reads_in(), 0);
    assert_eq!(a.verbs.reads.reads_out(), 0);
    assert!(b.seen.is_empty());
}

#[test]
fn rtr_zero_length_write_and_read() {
    let (mut a, mut b) = connected(1000);
    // Outside the RTR window a zero-length Write is accepted silently (no memory
    // check, nothing to complete).
    a.send(
        WorkRequest::Write {
            stag: 0x9999,
            to: 0,
            len: 0,
        },
        &[],
    );
    pump(&mut a, &mut b);
    assert!(b.seen.is_empty() && !b.engine.is_closed());
    // Write RTR: STag 1, TO 0, no memory check even though STag 1 does not exist.
    b.engine.expect_rtr();
    a.send(
        WorkRequest::Write {
            stag: 1,
            to: 0,
            len: 0,
        },
        &[],
    );
    pump(&mut a, &mut b);
    assert_eq!(b.seen, vec![Seen::Rtr]);

    // Read RTR: zero-length Read, answered by a zero-length Read Response.
    a.read(
        ReadRequest {
            sink_stag: 1,
            sink_to: 0,
            read_size: 0,
            src_stag: 1,
            src_to: 0,
        },
        5,
    )
    .unwrap();
    pump(&mut a, &mut b);
    assert_eq!(a.seen, vec![Seen::ReadDone { cookie: 5, len: 0 }]);

    // Send RTR: a zero-length Send consumes no receive buffer while expected.
    b.engine.expect_rtr();
    a.send(
        WorkRequest::Send {
            op: SendOp::Send,
            inval_stag: 0,
            len: 0,
        },
        &[],
    );
    pump(&mut a, &mut b);
    assert_eq!(b.seen, vec![Seen::Rtr, Seen::Rtr]);
}

/// Sends `wr` from a to b and returns the TERMINATE b sent and a received.
fn expect_terminate(
    wr: WorkRequest,
    payload: &[u8],
    post_recv: Option<usize>,
) -> (TermCode, srnic_proto::rdmap::Terminate) {
    let (mut a, mut b) = connected(1000);
    if let Some(n) = post_recv {
        b.verbs.recvs.push_back(vec![0; n]);
    }
    a.send(wr, payload);
    pump(&mut a, &mut b);
    let code = match b.seen.as_slice() {
        [Seen::SentTerminate(c)] => *c,
        other => panic!("b saw {other:?}"),
    };
    let t = match a.seen.as_slice() {
        [Seen::Terminated(t)] => *t,
        other => panic!("a saw {other:?}"),
    };
    assert_eq!((t.layer, t.etype, t.ecode), code.code());
    assert!(b.engine.is_closed() && a.engine.is_closed());
    (code, t)
}

#[test]
fn write_errors_terminate() {
    let w = |stag, to, len| WorkRequest::Write { stag, to, len };
    let d = pattern(64, 0);
    let (c, t) = expect_terminate(w(0x7777, 0, 64), &d, None);
    assert_eq!(c, TermCode::TaggedInvalidStag);
    // The offending DDP header (16 bytes from the FPDU start) is attached.
    assert_eq!(t.attached().len(), 16);
    assert_eq!(&t.attached()[..8], &[0, 78, 0xC1, 0x40, 0, 0, 0x77, 0x77]);
    assert!(t.flag_m && t.flag_d && !t.flag_r);
    let (c, _) = expect_terminate(w(0x1100, 0x10_0000 + 8190, 64), &d, None);
    assert_eq!(c, TermCode::TaggedBaseBounds);
    let (c, _) = expect_terminate(w(0x3300, 0, 8), &d[..8], None);
    assert_eq!(c, TermCode::TaggedPdMismatch);
    let (c, _) = expect_terminate(w(0x2200, 0x20_0000, 8), &d[..8], None);
    assert_eq!(c, TermCode::TaggedAccess);
    let (c, _) = expect_terminate(w(0x1100, u64::MAX - 3, 8), &d[..8], None);
    assert_eq!(c, TermCode::TaggedToWrap);
}

#[test]
fn send_errors_terminate() {
    let s = |len| WorkRequest::Send {
        op: SendOp::Send,
        inval_stag: 0,
        len,
    };
    let (c, t) = expect_terminate(s(10), &[1; 10], None);
    assert_eq!(c, TermCode::UntaggedNoBuffer);
    assert_eq!(t.attached().len(), 20);
    let (c, _) = expect_terminate(s(2000), &[1; 2000], Some(1500));
    assert_eq!(c, TermCode::UntaggedNoBuffer);
}

#[test]
fn read_source_error_attaches_full_request() {
    let req = ReadRequest {
        sink_stag: 0x1100,
        sink_to: 0x10_0000,
        read_size: 100,
        src_stag: 0x5555,
        src_to: 0,
    };
    let (c, t) = expect_terminate(WorkRequest::ReadRequest(req), &[], None);
    assert_eq!(c, TermCode::ReadSource(StagError::InvalidStag));
    assert_eq!((t.layer, t.etype, t.ecode), (0, 1, 0));
    assert!(t.flag_m && t.flag_d && t.flag_r);
    assert_eq!(t.attached().len(), 48);
    let h = Header::parse(&t.attached()[2..], 46).unwrap();
    assert_eq!(h.body, Body::ReadRequest { msn: 1, mo: 0, req });
}

#[test]
fn crc_error_terminates() {
    let (mut a, mut b) = connected(1000);
    b.verbs.recvs.push_back(vec![0; 100]);
    a.send(
        WorkRequest::Send {
            op: SendOp::Send,
            inval_stag: 0,
            len: 40,
        },
        &[9; 40],
    );
    let mut wire = std::mem::take(&mut a.out);
    wire[30] ^= 0x80;
    b.receive(&wire, &[13]);
    assert_eq!(b.seen, vec![Seen::SentTerminate(TermCode::LlpCrc)]);
    let t = std::mem::take(&mut b.out);
    a.receive(&t, &[1]);
    match a.seen.as_slice() {
        [Seen::Terminated(t)] => {
            assert_eq!((t.layer, t.etype, t.ecode), (2, 0, 2));
            assert_eq!(t.attached().len(), 0);
        }
        other => panic!("{other:?}"),
    }
}

// ------------------------------------------------------------------ engine-level cases

/// No memory checks; receive buffers of one length (or none); the Reads.
struct NoVerbs(Option<u32>, Reads<Vec<OrqEntry>>);

impl NoVerbs {
    fn new(recv: Option<u32>, ird: u16, ord: u16, orq: usize) -> Self {
        NoVerbs(recv, Reads::new(ird, ord, vec![OrqEntry::default(); orq]))
    }
}

impl srnic_proto::rdmap::engine::Verbs for NoVerbs {
    fn check_stag(
        &mut self,
        _: u32,
        _: u64,
        _: u32,
        _: srnic_proto::rdmap::engine::Access,
    ) -> Result<(), StagError> {
        Ok(())
    }
    fn recv_buffer_len(&mut self) -> Option<u32> {
        self.0
    }
    type Orq = Vec<OrqEntry>;
    fn reads<R>(&mut self, f: impl FnOnce(&mut Reads<Self::Orq>) -> R) -> R {
        f(&mut self.1)
    }
}

fn rr(msn: u32) -> Header {
    Header {
        last: true,
        body: Body::ReadRequest {
            msn,
            mo: 0,
            req: ReadRequest {
                sink_stag: 1,
                sink_to: 0,
                read_size: 8,
                src_stag: 2,
                src_to: 0,
            },
        },
    }
}

fn term_code(r: Result<RxAction, srnic_proto::rdmap::engine::EngineError>) -> TermCode {
    match r {
        Err(srnic_proto::rdmap::engine::EngineError::Terminate(c, _)) => c,
        other => panic!("{other:?}"),
    }
}

#[test]
fn ird_exceeded() {
    let mut e = RecvEngine::new();
    let mut v = NoVerbs::new(None, 1, 0, 1);
    assert_eq!(e.on_header(&mut v, &rr(1), 46, 0), Ok(RxAction::Discard));
    assert!(matches!(
        e.on_end(&mut v),
        Ok(Some(Completion::ReadRequest { msn: 1, .. }))
    ));
    assert_eq!(
        term_code(e.on_header(&mut v, &rr(2), 46, 0)),
        TermCode::IrdExceeded
    );
    // After answering, the next one fits.
    let mut e = RecvEngine::new();
    let mut v = NoVerbs::new(None, 1, 0, 1);
    e.on_header(&mut v, &rr(1), 46, 0).unwrap();
    e.on_end(&mut v).unwrap();
    v.1.read_response_started();
    assert!(e.on_header(&mut v, &rr(2), 46, 0).is_ok());
}

#[test]
fn read_response_matching() {
    let resp = |stag, to, last| Header {
        last,
        body: Body::ReadResponse { stag, to },
    };
    // No outstanding Read.
    let mut e = RecvEngine::new();
    let mut v = NoVerbs::new(None, 0, 2, 2);
    assert_eq!(
        term_code(e.on_header(&mut v, &resp(1, 0, true), 14, 0)),
        TermCode::UnexpectedReadResponse
    );
    // ORD enforced, then exact matching.
    let mut e = RecvEngine::new();
    let mut v = NoVerbs::new(None, 0, 2, 4);
    let ent = |c| OrqEntry {
        sink_stag: 9,
        sink_to: 100,
        len: 10,
        cookie: c,
    };
    v.1.post_read(ent(1)).unwrap();
    v.1.post_read(ent(2)).unwrap();
    assert_eq!(v.1.post_read(ent(3)), Err(OrdError::Full));
    assert_eq!(
        e.on_header(&mut v, &resp(9, 100, false), 18, 4),
        Ok(RxAction::Place(Placement::Tagged {
            stag: 9,
            to: 100,
            len: 4
        }))
    );
    assert_eq!(e.on_end(&mut v), Ok(None));
    e.on_header(&mut v, &resp(9, 104, true), 20, 6).unwrap();
    assert_eq!(
        e.on_end(&mut v),
        Ok(Some(Completion::ReadDone { cookie: 1, len: 10 }))
    );
    // Wrong length on the second: too short at L.
    assert_eq!(
        term_code(e.on_header(&mut v, &resp(9, 100, true), 18, 4)),
        TermCode::TaggedBaseBounds
    );
    // Wrong STag.
    let mut e = RecvEngine::new();
    let mut v = NoVerbs::new(None, 0, 1, 1);
    v.1.post_read(ent(1)).unwrap();
    assert_eq!(
        term_code(e.on_header(&mut v, &resp(8, 100, true), 24, 10)),
        TermCode::TaggedInvalidStag
    );
    // ORD 0 means no Reads at all.
    let mut e = RecvEngine::new();
    let mut v = NoVerbs::new(None, 0, 0, 4);
    assert_eq!(v.1.post_read(ent(1)), Err(OrdError::NoReads));
    // After an error everything is refused.
    assert_eq!(
        e.on_header(&mut v, &resp(9, 100, true), 14, 0).unwrap_err(),
        srnic_proto::rdmap::engine::EngineError::Terminate(
            TermCode::UnexpectedReadResponse,
            srnic_proto::rdmap::Terminate::new(
                TermCode::UnexpectedReadResponse,
                Some((&resp(9, 100, true), 14))
            )
        )
    );
    assert_eq!(
        e.on_end(&mut v),
        Err(srnic_proto::rdmap::engine::EngineError::Closed)
    );
}

#[test]
fn reads_ring_wraps_and_resets() {
    // ORD 3 over storage of 3: many rounds around the ring, in order.
    let mut r = Reads::new(2, 3, [OrqEntry::default(); 3]);
    let ent = |c: u64| OrqEntry {
        sink_stag: 1,
        sink_to: c * 8,
        len: 8,
        cookie: c,
    };
    let mut next = 0u64;
    for round in 0..10u64 {
        while r.post_read(ent(next)).is_ok() {
            next += 1;
        }
        assert_eq!(r.reads_out(), 3);
        // Take one or two, oldest first.
        for _ in 0..=(round % 2) {
            let head = r.head().unwrap();
            assert_eq!(r.pop(), Some(head));
            assert_eq!(head.cookie, next - r.reads_out() as u64 - 1);
        }
    }
    // IRD: two inbound Read Requests fit, a third does not, until a
    // response starts.
    assert!(!r.ird_full());
    r.read_request_received();
    r.read_request_received();
    assert!(r.ird_full());
    r.read_response_started();
    assert_eq!(r.reads_in(), 1);
    // A new connection starts empty, with its own limits.
    r.reset(0, 1);
    assert_eq!((r.reads_in(), r.reads_out(), r.head()), (0, 0, None));
    assert!(r.ird_full());
    r.post_read(ent(1)).unwrap();
    assert_eq!(r.post_read(ent(2)), Err(OrdError::Full));
    assert_eq!(r.pop().map(|e| e.cookie), Some(1));
    assert_eq!(r.pop(), None);
}

#[test]
fn untagged_sequence_errors() {
    let send = |msn, mo, last| Header {
        last,
        body: Body::Send {
            op: SendOp::Send,
            inval_stag: 0,
            msn,
            mo,
        },
    };
    let mut v = NoVerbs::new(Some(100), 0, 0, 0);
    let mut e = RecvEngine::new();
    assert_eq!(
        term_code(e.on_header(&mut v, &send(2, 0, true), 18, 0)),
        TermCode::UntaggedMsnRange
    );
    let mut e = RecvEngine::new();
    e.on_header(&mut v, &send(1, 0, false), 28, 10).unwrap();
    e.on_end(&mut v).unwrap();
    assert_eq!(
        term_code(e.on_header(&mut v, &send(1, 12, true), 28, 10)),
        TermCode::UntaggedInvalidMo
    );
    // Terminate received closes the engine.
    let mut e = RecvEngine::new();
    let t = srnic_proto::rdmap::Terminate::new(TermCode::LlpCrc, None);
    let th = Header {
        last: true,
        body: Body::Terminate {
            msn: 1,
            mo: 0,
            term: t,
        },
    };
    assert_eq!(e.on_header(&mut v, &th, 22, 0), Ok(RxAction::Discard));
    assert_eq!(e.on_end(&mut v), Ok(Some(Completion::Terminated(t))));
    assert!(e.is_closed());
    let _ = SoftCrc32c;
}
