// SPDX-License-Identifier: GPL-2.0
//! `mpa_framer`: the MPA receive framer fed arbitrary bytes in arbitrary chunkings,
//! with CRC and markers on or off.
//!
//! Input: `flags` (bit 0 CRC, bit 1 markers, bit 2 structured mode), a chunking seed,
//! then either a raw TCP byte stream, or (structured) a list of work requests that the
//! transmit side frames first.
//!
//! Invariants: `feed` never consumes more than it was given, consumes everything when
//! it returns no event, and always makes progress; payload slices are the caller's own
//! bytes at the stated offsets and contiguous within the segment; every `End` follows a
//! header and exactly `payload_len` payload bytes; a header re-emits and re-parses to
//! itself; errors are sticky; the event log does not depend on the chunking; and a
//! stream framed by the core's transmit side is received exactly (headers, payload,
//! no error, ending on an FPDU boundary).

use srnic_proto::crc::SoftCrc32c;
use srnic_proto::ddp::TxQueues;
use srnic_proto::mpa::rx::{RxEvent, RxFramer};
use srnic_proto::mpa::tx::{TxFramer, TxStep};
use srnic_proto::rdmap::tx::{OutboundMessage, WorkRequest};
use srnic_proto::rdmap::{
    Body, Header, ReadRequest, SendOp, StagError, TermCode, Terminate, MAX_HDR_LEN,
};

use super::util::{chunks, pattern, Input};

/// What the receive framer reported, with payload merged per FPDU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ev {
    /// A segment header with its ULPDU and payload lengths.
    Header(Header, u16, u16),
    /// The payload bytes of the FPDU seen so far (complete if followed by `End`).
    Payload(Vec<u8>),
    /// End of FPDU, CRC verified.
    End,
}

/// The receive framer's whole account of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Log {
    /// Events in order.
    pub events: Vec<Ev>,
    /// The (sticky) error, if any.
    pub err: Option<TermCode>,
    /// Whether the framer ended between FPDUs.
    pub boundary: bool,
}

/// Every TERMINATE cause, for choosing one from fuzz input.
pub const TERM_CODES: [TermCode; 23] = [
    TermCode::LlpCrc,
    TermCode::LlpUlpduTooShort,
    TermCode::LlpMarker,
    TermCode::LlpBadReqRep,
    TermCode::LlpInsufficientIrd,
    TermCode::LlpNoMatchingRtr,
    TermCode::DdpVersionTagged,
    TermCode::DdpVersionUntagged,
    TermCode::RdmapVersion,
    TermCode::RdmapOpcode,
    TermCode::TaggedInvalidStag,
    TermCode::TaggedAccess,
    TermCode::TaggedBaseBounds,
    TermCode::TaggedPdMismatch,
    TermCode::TaggedToWrap,
    TermCode::UntaggedInvalidQn,
    TermCode::UntaggedNoBuffer,
    TermCode::UntaggedMsnRange,
    TermCode::UntaggedInvalidMo,
    TermCode::UnexpectedReadResponse,
    TermCode::IrdExceeded,
    TermCode::ReadSource(StagError::AccessRights),
    TermCode::LocalCatastrophic,
];

/// Asserts that `h` (parsed from an FPDU with this ULPDU length) re-emits and
/// re-parses to itself.
pub fn assert_header_round_trip(h: &Header, ulpdu_len: u16) {
    let mut buf = [0u8; MAX_HDR_LEN];
    let n = h.emit(&mut buf).expect("a parsed header fits MAX_HDR_LEN");
    assert_eq!(n, h.buffer_len());
    assert!(n <= usize::from(ulpdu_len), "header longer than its ULPDU");
    let again = Header::parse(&buf[..n], n as u16).expect("re-parse of an emitted header");
    assert_eq!(&again, h, "header round trip");
}

/// Feeds `stream` to a fresh framer in chunks of the given sizes and logs the result.
pub fn run(crc: bool, markers: bool, stream: &[u8], sizes: &[usize]) -> Log {
    let mut rx = RxFramer::new(crc, markers);
    let mut log = Log::default();
    let mut cur: Option<(Vec<u8>, u16)> = None;
    let mut pos = 0usize;
    'chunks: for &size in sizes {
        let chunk = &stream[pos..pos + size];
        pos += size;
        let mut off = 0usize;
        let mut iters = 0usize;
        loop {
            iters += 1;
            assert!(iters <= 2 * chunk.len() + 4, "framer makes no progress");
            let input = &chunk[off..];
            match rx.feed(&SoftCrc32c, input) {
                Err(code) => {
                    assert_eq!(rx.feed(&SoftCrc32c, input), Err(code), "sticky error");
                    assert_eq!(rx.feed(&SoftCrc32c, &[0u8; 3]), Err(code), "sticky error");
                    log.err = Some(code);
                    break 'chunks;
                }
                Ok((n, ev)) => {
                    assert!(n <= input.len(), "consumed more than given");
                    match ev {
                        None => {
                            assert_eq!(n, input.len(), "no event but input left over");
                            break;
                        }
                        Some(RxEvent::Header {
                            header,
                            ulpdu_len,
                            payload_len,
                        }) => {
                            assert!(cur.is_none(), "header inside an FPDU");
                            assert_eq!(
                                header.buffer_len() + usize::from(payload_len),
                                usize::from(ulpdu_len),
                                "header + payload = ULPDU"
                            );
                            assert_header_round_trip(&header, ulpdu_len);
                            log.events.push(Ev::Header(header, ulpdu_len, payload_len));
                            cur = Some((Vec::new(), payload_len));
                        }
                        Some(RxEvent::Payload {
                            data,
                            input_offset,
                            seg_offset,
                        }) => {
                            assert!(!data.is_empty(), "empty payload event");
                            assert!(input_offset + data.len() <= n, "payload outside consumed");
                            assert_eq!(&input[input_offset..input_offset + data.len()], data);
                            let (p, want) = cur.as_mut().expect("payload before header");
                            assert_eq!(usize::from(seg_offset), p.len(), "payload gap");
                            p.extend_from_slice(data);
                            assert!(p.len() <= usize::from(*want), "payload overrun");
                        }
                        Some(RxEvent::End) => {
                            let (p, want) = cur.take().expect("End before header");
                            assert_eq!(p.len(), usize::from(want), "End before all payload");
                            log.events.push(Ev::Payload(p));
                            log.events.push(Ev::End);
                            assert!(rx.at_boundary(), "End but not at a boundary");
                        }
                    }
                    off += n;
                }
            }
        }
    }
    if let Some((p, _)) = cur {
        log.events.push(Ev::Payload(p));
    }
    log.boundary = rx.at_boundary();
    log
}

/// Frames `wrs` (payload of message `i` is `pattern(i, len)`) with the core's transmit
/// side; returns the stream and the log a receiver must produce.
pub fn frame_messages(
    crc: bool,
    markers: bool,
    mulpdu: u16,
    wrs: &[WorkRequest],
) -> (Vec<u8>, Vec<Ev>) {
    let mut tx = TxFramer::new(crc, markers);
    let mut q = TxQueues::new();
    let mut out = Vec::new();
    let mut expect = Vec::new();
    let mut hdr = [0u8; MAX_HDR_LEN];
    for (i, wr) in wrs.iter().enumerate() {
        let payload = pattern(i as u64, wr.payload_len() as usize);
        let mut m = OutboundMessage::new(*wr, &mut q);
        while let Some(seg) = m.next_segment(mulpdu) {
            let hlen = seg.header.emit(&mut hdr).expect("header fits");
            let base = seg.payload_offset as usize;
            let body = &payload[base..base + usize::from(seg.payload_len)];
            let ulpdu = (hlen + body.len()) as u16;
            expect.push(Ev::Header(seg.header, ulpdu, seg.payload_len));
            expect.push(Ev::Payload(body.to_vec()));
            expect.push(Ev::End);
            let mut f = tx.fpdu(&hdr[..hlen], seg.payload_len).expect("fpdu");
            let mut sent = 0usize;
            loop {
                match f.next(&SoftCrc32c).expect("tx step") {
                    TxStep::Done => break,
                    TxStep::Head(c) | TxStep::Marker(c) | TxStep::Trailer(c) => {
                        out.extend_from_slice(c.as_slice())
                    }
                    TxStep::Payload { offset, len } => {
                        assert_eq!(usize::from(offset), sent, "payload ranges in order");
                        let piece = &body[sent..sent + usize::from(len)];
                        sent += piece.len();
                        out.extend_from_slice(piece);
                        f.feed_payload(&SoftCrc32c, piece).expect("feed");
                    }
                }
            }
            assert_eq!(sent, body.len(), "all payload handed out");
        }
    }
    (out, expect)
}

/// Decodes one work request from four fields of fuzz input.
pub fn work_request(kind: u8, len: u16, p: u32, q: u64) -> WorkRequest {
    let len = u32::from(len % 1500);
    let op = match kind % 4 {
        0 => SendOp::Send,
        1 => SendOp::SendInvalidate,
        2 => SendOp::SendSe,
        _ => SendOp::SendSeInvalidate,
    };
    match kind % 8 {
        0..=3 => WorkRequest::Send {
            op,
            inval_stag: p,
            len,
        },
        4 => WorkRequest::Write {
            stag: p,
            to: q,
            len,
        },
        5 => WorkRequest::ReadRequest(ReadRequest {
            sink_stag: p,
            sink_to: q,
            read_size: len,
            src_stag: p.rotate_left(8),
            src_to: q.rotate_left(16),
        }),
        6 => WorkRequest::ReadResponse {
            sink_stag: p,
            sink_to: q,
            len,
        },
        _ => {
            let code = TERM_CODES[usize::from(kind >> 3) % TERM_CODES.len()];
            let offending = Header {
                last: p & 1 != 0,
                body: if p & 2 != 0 {
                    Body::ReadRequest {
                        msn: p,
                        mo: 0,
                        req: ReadRequest {
                            sink_stag: p,
                            sink_to: q,
                            read_size: len,
                            src_stag: !p,
                            src_to: !q,
                        },
                    }
                } else {
                    Body::Write { stag: p, to: q }
                },
            };
            let with = (p & 4 != 0).then_some((&offending, 46u16));
            WorkRequest::Terminate(Terminate::new(code, with))
        }
    }
}

/// The fuzz entry point.
pub fn check(data: &[u8]) {
    let mut inp = Input::new(data);
    let flags = inp.u8();
    let (crc, markers) = (flags & 1 != 0, flags & 2 != 0);
    let seed = inp.u8();
    if flags & 4 == 0 {
        let stream = inp.rest();
        let whole = run(crc, markers, stream, &[stream.len()]);
        let chunked = run(crc, markers, stream, &chunks(stream.len(), seed));
        assert_eq!(whole, chunked, "result depends on chunking");
        return;
    }
    let mulpdu = 32 + inp.u16() % 2048;
    let mut wrs = Vec::new();
    while !inp.is_empty() && wrs.len() < 16 {
        let (kind, len, p, q) = (inp.u8(), inp.u16(), inp.u32(), inp.u64());
        wrs.push(work_request(kind, len, p, q));
    }
    let (stream, expect) = frame_messages(crc, markers, mulpdu, &wrs);
    let got = run(crc, markers, &stream, &chunks(stream.len(), seed));
    assert_eq!(got.err, None, "receiver rejected a stream the core framed");
    assert_eq!(got.events, expect, "receiver disagrees with transmitter");
    assert!(got.boundary, "stream does not end on an FPDU boundary");
}
