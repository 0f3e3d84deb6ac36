// SPDX-License-Identifier: GPL-2.0
//! `mpa_negotiate`: MPA Request/Reply parsing and the initiator and responder
//! start-up machines fed arbitrary bytes.
//!
//! Input: two 8-byte local configurations (initiator, responder), a mode byte, a
//! chunking seed, then bytes that serve as the frame to parse, as what the responder
//! receives, and as what the initiator receives after its Request.
//!
//! Invariants: a parsed frame re-emits to the same bytes; `on_bytes` never consumes
//! more than given; private-data ranges lie inside the frame; a Reply the responder
//! writes parses as a Reply; and in an honest exchange between the two machines (any
//! configurations) both sides agree: same revision and CRC use, each side's marker
//! duty matches the other's wish, each side's ORD fits the other's IRD, RTR duties
//! pair up, private data arrives intact, and bytes behind the Reply are left for the
//! receive framer.

use srnic_proto::mpa::frame::{Frame, FrameKind, Parsed, MAX_FRAME_LEN, MAX_PD_RFC};
use srnic_proto::mpa::negotiate::{Initiator, InitiatorOutcome, MpaConfig, Responder};
use srnic_proto::mpa::{Negotiated, Rtr, RtrCaps};

use super::util::{chunks, pattern, Input};

/// Decodes a local configuration from 8 bytes.
pub fn config(inp: &mut Input<'_>) -> MpaConfig {
    let a = inp.u8();
    let b = inp.u8();
    let ird = inp.u16();
    let ord = inp.u16();
    let lim = inp.u16();
    MpaConfig {
        revision: a % 3,
        crc: a & 0x04 != 0,
        markers_rx: a & 0x08 != 0,
        markers_tx_ok: a & 0x10 != 0,
        p2p: a & 0x20 != 0,
        large_fpdu: a & 0x40 != 0,
        rtr: RtrCaps {
            write: b & 1 != 0,
            read: b & 2 != 0,
            send: b & 4 != 0,
        },
        ird: if b & 0x80 != 0 { ird } else { ird & 0x3FFF },
        ord: if b & 0x80 != 0 { ord } else { ord & 0x3FFF },
        pd_limit: usize::from(lim) % 600,
    }
}

/// Asserts that a complete frame re-emits to exactly the bytes it was parsed from.
fn frame_round_trip(bytes: &[u8]) {
    let Ok(Parsed::Complete(f, len)) = Frame::parse(bytes) else {
        return;
    };
    assert_eq!(f.buffer_len(), len, "buffer_len of a parsed frame");
    let mut out = [0u8; MAX_FRAME_LEN];
    let n = f
        .emit(&mut out, MAX_PD_RFC)
        .expect("re-emit a parsed frame");
    assert_eq!(&out[..n], &bytes[..len], "frame round trip");
}

/// Feeds `bytes` in chunks; returns the consumed count and the first outcome.
fn feed_initiator(
    i: &mut Initiator,
    bytes: &[u8],
    seed: u8,
) -> (usize, Option<Result<InitiatorOutcome, ()>>) {
    let mut used = 0usize;
    for size in chunks(bytes.len(), seed) {
        let piece = &bytes[used..used + size];
        match i.on_bytes(piece) {
            Err(_) => return (used, Some(Err(()))),
            Ok((n, out)) => {
                assert!(n <= piece.len());
                used += n;
                if let Some(o) = out {
                    return (used, Some(Ok(o)));
                }
                assert_eq!(n, piece.len(), "incomplete Reply but bytes left over");
            }
        }
    }
    (used, None)
}

fn check_pd_range(n: &Negotiated, frame_len: usize) {
    let end = usize::from(n.private_data_start) + usize::from(n.private_data_len);
    assert!(end <= frame_len, "private data outside the frame");
}

/// Responder fed arbitrary bytes, then initiator fed arbitrary bytes.
fn arbitrary_peer(ic: MpaConfig, rc: MpaConfig, mode: u8, seed: u8, bytes: &[u8]) {
    let mut r = Responder::new(rc);
    let mut used = 0usize;
    for size in chunks(bytes.len(), seed) {
        let piece = &bytes[used..used + size];
        match r.on_bytes(piece) {
            Err(_) => break,
            Ok((n, req)) => {
                assert!(n <= piece.len());
                used += n;
                if req.is_some() {
                    let mut out = [0u8; MAX_FRAME_LEN];
                    let res = if mode & 1 != 0 {
                        r.reject(b"no", &mut out).map(|n| (n, None))
                    } else {
                        r.accept(b"yes", &mut out).map(|(n, neg)| (n, Some(neg)))
                    };
                    if let Ok((len, neg)) = res {
                        match Frame::parse(&out[..len]) {
                            Ok(Parsed::Complete(f, l)) => {
                                assert_eq!(l, len);
                                assert_eq!(f.kind, FrameKind::Reply);
                                assert_eq!(f.reject, neg.is_none());
                            }
                            other => panic!("responder wrote a bad Reply: {other:?}"),
                        }
                        if let Some(neg) = neg {
                            check_pd_range(&neg, used);
                            assert_eq!(neg.crc_tx, neg.crc_rx);
                        }
                    }
                    // Anything after a complete Request is refused.
                    assert!(r.on_bytes(b"x").is_err());
                    break;
                }
            }
        }
    }
    let mut i = Initiator::new(ic);
    let mut req = [0u8; MAX_FRAME_LEN];
    if i.request(b"hello", &mut req).is_err() {
        return;
    }
    let (used, out) = feed_initiator(&mut i, bytes, seed);
    assert!(used <= bytes.len());
    if let Some(Ok(InitiatorOutcome::Accepted(n))) = out {
        check_pd_range(&n, used);
        assert_eq!(n.crc_tx, n.crc_rx);
    }
}

/// An honest exchange between an initiator and a responder.
fn exchange(ic: MpaConfig, rc: MpaConfig, mode: u8, seed: u8, pd_i: &[u8], pd_r: &[u8]) {
    let mut i = Initiator::new(ic);
    let mut r = Responder::new(rc);
    let mut req = [0u8; MAX_FRAME_LEN];
    let Ok(req_len) = i.request(pd_i, &mut req) else {
        let block = if ic.revision >= 2 { 4 } else { 0 };
        assert!(
            pd_i.len() + block > ic.pd_limit.min(MAX_PD_RFC),
            "valid request refused"
        );
        return;
    };
    frame_round_trip(&req[..req_len]);
    let mut used = 0usize;
    let mut peer = None;
    for size in chunks(req_len, seed) {
        let piece = &req[used..used + size];
        let (n, p) = r
            .on_bytes(piece)
            .expect("responder refused a valid Request");
        used += n;
        if p.is_some() {
            peer = p;
        }
    }
    assert_eq!(used, req_len);
    let peer = peer.expect("Request complete");
    assert_eq!(peer.crc, ic.crc);
    assert_eq!(peer.markers, ic.markers_rx);
    assert_eq!(r.peer_private_data(), pd_i, "initiator's private data");
    let mut rep = [0u8; MAX_FRAME_LEN + 64];
    let (rep_len, rneg) = if mode & 1 != 0 {
        match r.reject(pd_r, &mut rep) {
            Ok(n) => (n, None),
            Err(_) => return,
        }
    } else {
        match r.accept(pd_r, &mut rep) {
            Ok((n, neg)) => (n, Some(neg)),
            Err(_) => return,
        }
    };
    frame_round_trip(&rep[..rep_len]);
    // The responder may send FPDUs right behind its Reply.
    let trailer = [0xAAu8; 7];
    rep[rep_len..rep_len + trailer.len()].copy_from_slice(&trailer);
    let wire = &rep[..rep_len + trailer.len()];
    let (used, out) = feed_initiator(&mut i, wire, seed);
    let Some(out) = out else {
        panic!("initiator did not finish on a complete Reply");
    };
    let Ok(out) = out else {
        // The initiator may refuse what the responder chose; it must not have
        // accepted on the responder's side a parameter the initiator forbids.
        return;
    };
    assert_eq!(used, rep_len, "bytes behind the Reply must be left over");
    match (out, rneg) {
        (InitiatorOutcome::Rejected, None) => {}
        (InitiatorOutcome::Accepted(a), Some(b)) => {
            assert_eq!(i.peer_private_data(), pd_r, "responder's private data");
            assert_eq!(a.revision, b.revision, "revision");
            assert_eq!((a.crc_tx, a.crc_rx), (b.crc_rx, b.crc_tx), "CRC use");
            assert_eq!(a.crc_tx, ic.crc || rc.crc, "CRC if either side asks");
            assert_eq!(a.markers_tx, b.markers_rx, "initiator marker duty");
            assert_eq!(b.markers_tx, a.markers_rx, "responder marker duty");
            if a.revision == 2 && ic.revision == 2 && rc.revision == 2 {
                assert!(
                    a.ord <= b.ird,
                    "initiator ORD {} > responder IRD {}",
                    a.ord,
                    b.ird
                );
                assert!(
                    b.ord <= a.ird,
                    "responder ORD {} > initiator IRD {}",
                    b.ord,
                    a.ird
                );
            }
            match (a.rtr, b.rtr) {
                (Rtr::None, Rtr::None) => {}
                (Rtr::Send(x), Rtr::Await(y)) => assert_eq!(x, y, "RTR mode"),
                other => panic!("RTR duties do not pair up: {other:?}"),
            }
        }
        other => panic!("initiator and responder disagree: {other:?}"),
    }
}

/// The fuzz entry point.
pub fn check(data: &[u8]) {
    let mut inp = Input::new(data);
    let ic = config(&mut inp);
    let rc = config(&mut inp);
    let mode = inp.u8();
    let seed = inp.u8();
    let bytes = inp.rest();
    frame_round_trip(bytes);
    arbitrary_peer(ic, rc, mode, seed, bytes);
    let pd_i = pattern(1, usize::from(mode >> 1) % 64);
    let pd_r = pattern(2, usize::from(seed) % 64);
    exchange(ic, rc, mode, seed, &pd_i, &pd_r);
}
