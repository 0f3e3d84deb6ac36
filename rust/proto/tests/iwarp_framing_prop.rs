// SPDX-License-Identifier: GPL-2.0
//! Property tests: any messages, any FPDU size, any TCP chunking, CRC on/off, markers
//! on/off: the receiver reproduces the exact bytes and placements. Plus "never panics"
//! properties for every parser fed arbitrary bytes.

mod iwarp_common;

use iwarp_common::{Peer, Region, Seen};
use proptest::prelude::*;
use srnic_proto::crc::SoftCrc32c;
use srnic_proto::mpa::frame::Frame;
use srnic_proto::mpa::rx::{RxEvent, RxFramer};
use srnic_proto::mpa::{Negotiated, Rtr};
use srnic_proto::rdmap::tx::WorkRequest;
use srnic_proto::rdmap::{Body, Header, ReadRequest, SendOp, Terminate, MAX_HDR_LEN};

#[derive(Debug, Clone)]
enum Msg {
    Send(SendOp, u32, Vec<u8>),
    Write(usize, u32, Vec<u8>),
}

fn send_op() -> impl Strategy<Value = SendOp> {
    prop_oneof![
        Just(SendOp::Send),
        Just(SendOp::SendInvalidate),
        Just(SendOp::SendSe),
        Just(SendOp::SendSeInvalidate),
    ]
}

fn msg() -> impl Strategy<Value = Msg> {
    prop_oneof![
        (
            send_op(),
            any::<u32>(),
            proptest::collection::vec(any::<u8>(), 0..1800)
        )
            .prop_map(|(op, inv, d)| Msg::Send(op, inv, d)),
        (
            0usize..3,
            0u32..256,
            proptest::collection::vec(any::<u8>(), 0..1800)
        )
            .prop_map(|(r, off, d)| Msg::Write(r, off, d)),
    ]
}

fn negotiated(crc: bool, markers: bool) -> Negotiated {
    Negotiated {
        revision: 2,
        crc_tx: crc,
        crc_rx: crc,
        markers_tx: markers,
        markers_rx: markers,
        ird: 4,
        ord: 4,
        rtr: Rtr::None,
        peer_large_fpdu: false,
        private_data_start: 0,
        private_data_len: 0,
    }
}

const REGION: usize = 2048 + 256;

/// What a receive framer made of a stream: its events, each FPDU's payload
/// joined (chunking splits it differently), then how it ended; with a
/// failure, the header it reports for the TERMINATE.
#[derive(Debug, PartialEq)]
enum Framed {
    Header(Header, u16, u16),
    Payload(Vec<u8>),
    End,
    Failed(srnic_proto::rdmap::TermCode, Option<(Vec<u8>, u16)>),
}

/// Feeds `bytes` to a new framer in chunks of `chunk` bytes.
fn framer_sees(bytes: &[u8], chunk: usize, crc: bool, markers: bool) -> Vec<Framed> {
    let mut rx = RxFramer::new(crc, markers);
    let mut seen = Vec::new();
    for c in bytes.chunks(chunk) {
        let mut off = 0;
        while off < c.len() {
            match rx.feed(&SoftCrc32c, &c[off..]) {
                Ok((n, ev)) => {
                    off += n;
                    match ev {
                        Some(RxEvent::Header {
                            header,
                            ulpdu_len,
                            payload_len,
                        }) => seen.push(Framed::Header(header, ulpdu_len, payload_len)),
                        Some(RxEvent::Payload { data, .. }) => match seen.last_mut() {
                            Some(Framed::Payload(p)) => p.extend_from_slice(data),
                            _ => seen.push(Framed::Payload(data.to_vec())),
                        },
                        Some(RxEvent::End) => seen.push(Framed::End),
                        None => {}
                    }
                }
                Err(code) => {
                    let h = rx.failed_header().map(|(b, l)| (b.to_vec(), l));
                    seen.push(Framed::Failed(code, h));
                    return seen;
                }
            }
        }
    }
    seen
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn whole_headers_frame_as_byte_wise(
        msgs in proptest::collection::vec(msg(), 1..5),
        mulpdu in 48u16..1500,
        flips in proptest::collection::vec(any::<usize>(), 0..3),
        in_head in any::<bool>(),
        crc in any::<bool>(),
        markers in any::<bool>(),
    ) {
        // A header whole in the input takes the framer's fast path; fed a byte
        // at a time it never does. Valid streams and corrupted ones (a bad
        // length, version, opcode or header field, a CRC) must come out the
        // same either way.
        let n = negotiated(crc, markers);
        let mut a = Peer::new(&n, mulpdu);
        for m in &msgs {
            match m {
                Msg::Send(op, inv, d) => {
                    a.send(WorkRequest::Send { op: *op, inval_stag: *inv, len: d.len() as u32 }, d)
                }
                Msg::Write(r, off, d) => a.send(
                    WorkRequest::Write { stag: 0x100 + *r as u32, to: u64::from(*off), len: d.len() as u32 },
                    d,
                ),
            }
        }
        let mut wire = std::mem::take(&mut a.out);
        // Half the time only the first FPDU's length field and header are
        // hit: every check of the header's, on both paths.
        let span = if in_head { wire.len().min(2 + MAX_HDR_LEN) } else { wire.len() };
        for f in &flips {
            let bit = f % (span * 8);
            wire[bit / 8] ^= 1 << (bit % 8);
        }
        let whole = framer_sees(&wire, wire.len(), crc, markers);
        prop_assert_eq!(&whole, &framer_sees(&wire, 1, crc, markers));
        prop_assert_eq!(&whole, &framer_sees(&wire, 7, crc, markers));
    }

    #[test]
    fn stream_reproduces_messages(
        msgs in proptest::collection::vec(msg(), 1..6),
        mulpdu in 48u16..1500,
        chunks in proptest::collection::vec(1usize..700, 1..8),
        crc in any::<bool>(),
        markers in any::<bool>(),
    ) {
        let n = negotiated(crc, markers);
        let mut a = Peer::new(&n, mulpdu);
        let mut b = Peer::new(&n, mulpdu);
        for i in 0..3u32 {
            b.verbs.regions.push(Region {
                stag: 0x100 + i,
                base: 0x1_0000 * u64::from(i + 1),
                data: vec![0; REGION],
                remote_write: true,
                remote_read: false,
                pd: 0,
            });
        }
        let mut model: Vec<Vec<u8>> = vec![vec![0; REGION]; 3];
        let mut sends = Vec::new();
        for m in &msgs {
            match m {
                Msg::Send(op, inv, d) => {
                    b.verbs.recvs.push_back(vec![0; 1800]);
                    a.send(WorkRequest::Send { op: *op, inval_stag: *inv, len: d.len() as u32 }, d);
                    sends.push(Seen::Recv {
                        data: d.clone(),
                        invalidate: op.invalidates().then_some(*inv),
                        solicited: op.solicited(),
                    });
                }
                Msg::Write(r, off, d) => {
                    let stag = 0x100 + *r as u32;
                    let base = 0x1_0000 * (*r as u64 + 1);
                    a.send(WorkRequest::Write { stag, to: base + u64::from(*off), len: d.len() as u32 }, d);
                    model[*r][*off as usize..*off as usize + d.len()].copy_from_slice(d);
                }
            }
        }
        let wire = std::mem::take(&mut a.out);
        b.receive(&wire, &chunks);
        prop_assert_eq!(&b.seen, &sends);
        for (i, m) in model.iter().enumerate() {
            prop_assert_eq!(&b.verbs.regions[i].data, m);
        }
        prop_assert!(b.rx.at_boundary());
        prop_assert!(b.out.is_empty(), "no TERMINATE sent");
    }

    #[test]
    fn corrupted_stream_with_crc_never_places_silently(
        d in proptest::collection::vec(any::<u8>(), 1..1500),
        flip in any::<usize>(),
        markers in any::<bool>(),
    ) {
        // With CRC on, flipping any bit yields an error (CRC, length or header),
        // never a clean completion of different data.
        let n = negotiated(true, markers);
        let mut a = Peer::new(&n, 1024);
        let mut b = Peer::new(&n, 1024);
        b.verbs.recvs.push_back(vec![0; 1500]);
        a.send(WorkRequest::Send { op: SendOp::Send, inval_stag: 0, len: d.len() as u32 }, &d);
        let mut wire = std::mem::take(&mut a.out);
        let bit = flip % (wire.len() * 8);
        wire[bit / 8] ^= 1 << (bit % 8);
        b.receive(&wire, &[wire.len()]);
        let clean = b.seen.iter().all(|s| !matches!(s, Seen::SentTerminate(_)));
        if clean {
            // The only acceptable clean outcome is an incomplete stream (a length
            // field grew): nothing may have completed with corrupted data.
            let ok = b.seen.iter().all(|s| matches!(s, Seen::Recv { data, .. } if *data == d));
            prop_assert!(ok, "corrupted data completed");
        }
    }

    #[test]
    fn rx_framer_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        chunk in 1usize..64,
        crc in any::<bool>(),
        markers in any::<bool>(),
    ) {
        let mut rx = RxFramer::new(crc, markers);
        for c in bytes.chunks(chunk) {
            let mut off = 0;
            while off < c.len() {
                match rx.feed(&SoftCrc32c, &c[off..]) {
                    Ok((n, ev)) => {
                        if let Some(RxEvent::Payload { data, input_offset, .. }) = ev {
                            prop_assert_eq!(data, &c[off + input_offset..][..data.len()]);
                        }
                        prop_assert!(n > 0 || ev.is_some());
                        off += n;
                    }
                    Err(_) => break,
                }
            }
        }
    }

    #[test]
    fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), len in any::<u16>()) {
        let _ = Frame::parse(&bytes);
        let _ = Header::parse(&bytes, len);
        let _ = Header::parse(&bytes, bytes.len().min(65535) as u16);
    }

    #[test]
    fn header_roundtrip(
        kind in 0u8..5,
        a in any::<u32>(), b in any::<u64>(), c in any::<u32>(), d in any::<u32>(),
        last in any::<bool>(), op in send_op(),
        attached in proptest::collection::vec(any::<u8>(), 0..=48),
    ) {
        let body = match kind {
            0 => Body::Write { stag: a, to: b },
            1 => Body::ReadResponse { stag: a, to: b },
            2 => Body::Send { op, inval_stag: if op.invalidates() { a } else { 0 }, msn: c, mo: d },
            3 => Body::ReadRequest { msn: c, mo: d, req: ReadRequest {
                sink_stag: a, sink_to: b, read_size: c ^ d, src_stag: d, src_to: !b } },
            _ => {
                let mut t = Terminate::new(srnic_proto::rdmap::TermCode::LlpCrc, None);
                t.attached[..attached.len()].copy_from_slice(&attached);
                t.attached_len = attached.len() as u8;
                t.layer = (a & 0xf) as u8;
                t.etype = ((a >> 4) & 0xf) as u8;
                t.ecode = (a >> 8) as u8;
                Body::Terminate { msn: c, mo: d, term: t }
            }
        };
        let h = Header { last, body };
        let mut buf = [0u8; MAX_HDR_LEN];
        let n = h.emit(&mut buf).unwrap();
        prop_assert_eq!(n, h.buffer_len());
        prop_assert_eq!(Header::parse(&buf[..n], n as u16), Ok(h));
    }
}
