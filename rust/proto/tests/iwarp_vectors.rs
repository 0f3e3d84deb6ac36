// SPDX-License-Identifier: GPL-2.0
//! Byte-exact iWARP vectors written by hand from the RFC 5040/5041/5044/6581 layouts,
//! parsed and emitted both ways; CRC32c check values and a differential
//! test against the `crc32c` crate; the TERMINATE code table, row by row.

use srnic_proto::crc::{self, Crc32c, SoftCrc32c, CRC32C_INIT};
use srnic_proto::mpa::frame::{Frame, FrameKind, IrdOrd, Parsed, MAX_PD_RFC};
use srnic_proto::mpa::rx::{RxEvent, RxFramer};
use srnic_proto::mpa::tx::TxFramer;
use srnic_proto::mpa::RtrCaps;
use srnic_proto::rdmap::{
    Body, Header, ReadRequest, SendOp, StagError, TermCode, Terminate, MAX_HDR_LEN,
};

const KEY_REQ: &[u8] = b"MPA ID Req Frame";
const KEY_REP: &[u8] = b"MPA ID Rep Frame";

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

// ---------------------------------------------------------------- CRC32c

#[test]
fn crc_check_values() {
    assert_eq!(crc::crc32c(b"123456789"), 0xE306_9283);
    // RFC 3720 appendix B.4.
    assert_eq!(crc::crc32c(&[0u8; 32]), 0x8A91_36AA);
    assert_eq!(crc::crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
    let asc: Vec<u8> = (0u8..32).collect();
    assert_eq!(crc::crc32c(&asc), 0x46DD_794E);
    // On the wire least significant byte first (RFC 3720 lists "aa 36 91 8a").
    assert_eq!(crc::to_wire(0x8A91_36AA), [0xaa, 0x36, 0x91, 0x8a]);
    assert_eq!(crc::from_wire([0xaa, 0x36, 0x91, 0x8a]), 0x8A91_36AA);
}

#[test]
fn crc_differential_vs_crate() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5040);
    for _ in 0..300 {
        let len = rng.gen_range(0..2048);
        let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let want = crc32c::crc32c(&data);
        assert_eq!(crc::crc32c(&data), want);
        // Random splits chain through the raw register.
        let mut reg = CRC32C_INIT;
        let mut pos = 0;
        while pos < data.len() {
            let n = rng.gen_range(1..=(data.len() - pos).min(37));
            reg = SoftCrc32c.update(reg, &data[pos..pos + n]);
            pos += n;
        }
        assert_eq!(crc::finish(reg), want);
        // The raw-register contract equals the crate's append form.
        let (a, b) = data.split_at(len / 3);
        assert_eq!(crc::finish(SoftCrc32c.update(!crc32c::crc32c(a), b)), want);
    }
}

// ---------------------------------------------------------------- MPA frames

fn roundtrip_frame(bytes: &[u8], expect: Frame<'_>) {
    match Frame::parse(bytes).unwrap() {
        Parsed::Complete(f, len) => {
            assert_eq!(len, bytes.len());
            assert_eq!(f, expect);
        }
        p => panic!("incomplete: {p:?}"),
    }
    let mut out = vec![0u8; 600];
    let n = expect.emit(&mut out, MAX_PD_RFC).unwrap();
    assert_eq!(&out[..n], bytes);
    // Every proper prefix asks for more.
    for cut in 0..bytes.len() {
        assert!(matches!(Frame::parse(&bytes[..cut]), Ok(Parsed::NeedMore(n)) if n > cut));
    }
}

#[test]
fn mpa_request_rev1_crc_with_private_data() {
    let bytes = cat(&[
        KEY_REQ,
        &[0x40, 0x01], // C, revision 1
        &[0x00, 0x02], // pd_len 2
        b"hi",
    ]);
    roundtrip_frame(
        &bytes,
        Frame {
            kind: FrameKind::Request,
            markers: false,
            crc: true,
            reject: false,
            large_fpdu: false,
            other_bits: 0,
            revision: 1,
            ird_ord: None,
            private_data: b"hi",
        },
    );
}

#[test]
fn mpa_request_siw_enhanced() {
    // What siw sends as initiator: bits 0x1002, IRD 1, ORD 1, no private data.
    let bytes = cat(&[
        KEY_REQ,
        &[0x10, 0x02], // Enhanced, revision 2
        &[0x00, 0x04], // pd_len counts the IRD/ORD block
        &[0x00, 0x01], // IRD 1
        &[0x00, 0x01], // ORD 1
    ]);
    roundtrip_frame(
        &bytes,
        Frame {
            kind: FrameKind::Request,
            markers: false,
            crc: false,
            reject: false,
            large_fpdu: false,
            other_bits: 0,
            revision: 2,
            ird_ord: Some(IrdOrd {
                ird: 1,
                ord: 1,
                p2p: false,
                rtr: RtrCaps::default(),
            }),
            private_data: b"",
        },
    );
}

#[test]
fn mpa_reply_enhanced_p2p_markers_large() {
    let bytes = cat(&[
        KEY_REP,
        &[0x98, 0x02], // M, Enhanced, 0x0800, revision 2
        &[0x00, 0x07], // 4 + 3
        &[0xC0, 0x02], // P2P, Send RTR, IRD 2
        &[0x80, 0x01], // Write RTR, ORD 1
        b"abc",
    ]);
    roundtrip_frame(
        &bytes,
        Frame {
            kind: FrameKind::Reply,
            markers: true,
            crc: false,
            reject: false,
            large_fpdu: true,
            other_bits: 0,
            revision: 2,
            ird_ord: Some(IrdOrd {
                ird: 2,
                ord: 1,
                p2p: true,
                rtr: RtrCaps {
                    write: true,
                    read: false,
                    send: true,
                },
            }),
            private_data: b"abc",
        },
    );
}

#[test]
fn mpa_reply_reject() {
    let bytes = cat(&[KEY_REP, &[0x20, 0x01], &[0x00, 0x00]]);
    roundtrip_frame(
        &bytes,
        Frame {
            kind: FrameKind::Reply,
            markers: false,
            crc: false,
            reject: true,
            large_fpdu: false,
            other_bits: 0,
            revision: 1,
            ird_ord: None,
            private_data: b"",
        },
    );
}

#[test]
fn mpa_frame_errors() {
    use srnic_proto::mpa::frame::FrameError;
    let bad = cat(&[b"MPA ID Bad Frame", &[0, 1, 0, 0]]);
    assert_eq!(Frame::parse(&bad), Err(FrameError::BadKey));
    let long = cat(&[KEY_REQ, &[0, 1], &[0x02, 0x01]]); // pd_len 513
    assert_eq!(Frame::parse(&long), Err(FrameError::PrivateDataTooLong));
    let short = cat(&[KEY_REQ, &[0x10, 0x02], &[0x00, 0x02], &[0, 1]]);
    assert_eq!(Frame::parse(&short), Err(FrameError::EnhancedTooShort));
    // Exactly 512 is fine; emitting more than the caller's limit is refused.
    let pd = [7u8; 512];
    let f = Frame {
        kind: FrameKind::Request,
        markers: false,
        crc: false,
        reject: false,
        large_fpdu: false,
        other_bits: 0,
        revision: 1,
        ird_ord: None,
        private_data: &pd,
    };
    let mut out = [0u8; 600];
    assert_eq!(f.emit(&mut out, MAX_PD_RFC), Ok(532));
    assert!(matches!(
        Frame::parse(&out[..532]),
        Ok(Parsed::Complete(_, 532))
    ));
    assert_eq!(f.emit(&mut out, 256), Err(FrameError::PrivateDataTooLong));
}

// ---------------------------------------------------------------- RDMAP headers

fn roundtrip_header(bytes: &[u8], expect: Header) {
    let h = Header::parse(bytes, bytes.len() as u16).unwrap();
    assert_eq!(h, expect);
    let mut out = [0u8; MAX_HDR_LEN];
    let n = expect.emit(&mut out).unwrap();
    assert_eq!(&out[..n], bytes);
    assert_eq!(expect.buffer_len(), bytes.len());
    // Any shorter ULPDU length is the TERMINATE LLP/MPA/0x03 (never a panic).
    for cut in 0..bytes.len() {
        assert_eq!(
            Header::parse(&bytes[..cut], cut as u16),
            Err(TermCode::LlpUlpduTooShort),
            "cut {cut}"
        );
    }
}

#[test]
fn rdmap_write() {
    let bytes = cat(&[
        &[0xC1, 0x40],                         // T, L, DV 1, RV 1, opcode 0
        &[0x00, 0x00, 0x12, 0x34],             // sink STag
        &[0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef], // tagged offset
    ]);
    roundtrip_header(
        &bytes,
        Header {
            last: true,
            body: Body::Write {
                stag: 0x1234,
                to: 0xdead_beef,
            },
        },
    );
}

#[test]
fn rdmap_read_response_not_last() {
    let bytes = cat(&[
        &[0x81, 0x42],             // T, DV 1, RV 1, opcode 2, no L
        &[0x00, 0x00, 0xab, 0xcd], // sink STag
        &[0, 0, 0, 0, 0x10, 0, 0, 0],
    ]);
    roundtrip_header(
        &bytes,
        Header {
            last: false,
            body: Body::ReadResponse {
                stag: 0xabcd,
                to: 0x1000_0000,
            },
        },
    );
}

#[test]
fn rdmap_read_request() {
    let bytes = cat(&[
        &[0x41, 0x41],                // L, opcode 1
        &[0, 0, 0, 0],                // reserved
        &[0, 0, 0, 1],                // QN 1
        &[0, 0, 0, 1],                // MSN 1
        &[0, 0, 0, 0],                // MO 0
        &[0x00, 0x00, 0xab, 0xcd],    // sink STag      (FPDU offset 20)
        &[0, 0, 0, 0, 0x10, 0, 0, 0], // sink TO     (24)
        &[0, 0, 0x10, 0],             // read size      (32)
        &[0x00, 0x00, 0xdc, 0xba],    // source STag    (36)
        &[0, 0, 0, 0, 0x20, 0, 0, 0], // source TO   (40)
    ]);
    assert_eq!(bytes.len(), 46);
    roundtrip_header(
        &bytes,
        Header {
            last: true,
            body: Body::ReadRequest {
                msn: 1,
                mo: 0,
                req: ReadRequest {
                    sink_stag: 0xabcd,
                    sink_to: 0x1000_0000,
                    read_size: 0x1000,
                    src_stag: 0xdcba,
                    src_to: 0x2000_0000,
                },
            },
        },
    );
}

#[test]
fn rdmap_sends() {
    for (op, ctrl, inval) in [
        (SendOp::Send, 0x43u8, 0u32),
        (SendOp::SendInvalidate, 0x44, 0x777),
        (SendOp::SendSe, 0x45, 0),
        (SendOp::SendSeInvalidate, 0x46, 0x888),
    ] {
        let bytes = cat(&[
            &[0x41, ctrl],        // L, opcode
            &inval.to_be_bytes(), // invalidate STag or reserved
            &[0, 0, 0, 0],        // QN 0
            &[0, 0, 0, 9],        // MSN 9
            &[0, 0, 0x01, 0x00],  // MO 256
        ]);
        roundtrip_header(
            &bytes,
            Header {
                last: true,
                body: Body::Send {
                    op,
                    inval_stag: inval,
                    msn: 9,
                    mo: 256,
                },
            },
        );
    }
}

#[test]
fn rdmap_terminate_with_attached_send_header() {
    // DDP / untagged (2) / MSN out of range (0x03), M and D set, the offending Send's
    // FPDU prefix (length field + 18-byte header) attached.
    let offending = cat(&[
        &[0x00, 0x14],             // its ULPDU length (20)
        &[0x41, 0x43, 0, 0, 0, 0], // L, Send, reserved
        &[0, 0, 0, 0],             // QN 0
        &[0, 0, 0, 5],             // MSN 5
        &[0, 0, 0, 0],             // MO 0
    ]);
    let bytes = cat(&[
        &[0x41, 0x47],             // L, opcode 7
        &[0, 0, 0, 0],             // reserved
        &[0, 0, 0, 2],             // QN 2
        &[0, 0, 0, 1],             // MSN 1
        &[0, 0, 0, 0],             // MO 0
        &[0x12, 0x03, 0xC0, 0x00], // layer 1, type 2, code 3, M, D
        &offending,
    ]);
    let h = Header::parse(&bytes, bytes.len() as u16).unwrap();
    let Body::Terminate { msn, mo, term } = h.body else {
        panic!("not a terminate")
    };
    assert_eq!((msn, mo), (1, 0));
    assert_eq!((term.layer, term.etype, term.ecode), (1, 2, 3));
    assert!(term.flag_m && term.flag_d && !term.flag_r);
    assert_eq!(term.attached(), &offending[..]);
    let mut out = [0u8; MAX_HDR_LEN];
    let n = h.emit(&mut out).unwrap();
    assert_eq!(&out[..n], &bytes[..]);

    // The same TERMINATE built from the failure.
    let send = Header {
        last: true,
        body: Body::Send {
            op: SendOp::Send,
            inval_stag: 0,
            msn: 5,
            mo: 0,
        },
    };
    let built = Terminate::new(TermCode::UntaggedMsnRange, Some((&send, 20)));
    assert_eq!(built, term);
}

#[test]
fn rdmap_header_errors() {
    // Wrong DDP version, tagged and untagged.
    assert_eq!(
        Header::parse(&[0xC2, 0x40], 16).unwrap_err(),
        TermCode::DdpVersionTagged
    );
    assert_eq!(
        Header::parse(&[0x42, 0x43], 18).unwrap_err(),
        TermCode::DdpVersionUntagged
    );
    // Wrong RDMAP version.
    assert_eq!(
        Header::parse(&[0x41, 0x83], 18).unwrap_err(),
        TermCode::RdmapVersion
    );
    // Unknown opcode 8, and a Send with the T bit.
    assert_eq!(
        Header::parse(&[0x41, 0x48], 18).unwrap_err(),
        TermCode::RdmapOpcode
    );
    assert_eq!(
        Header::parse(&[0xC1, 0x43], 18).unwrap_err(),
        TermCode::RdmapOpcode
    );
    // A Send on queue 1.
    let mut send = [0u8; 18];
    send[..2].copy_from_slice(&[0x41, 0x43]);
    send[9] = 1;
    assert_eq!(
        Header::parse(&send, 18).unwrap_err(),
        TermCode::UntaggedInvalidQn
    );
    assert_eq!(
        srnic_proto::rdmap::Opcode::from_raw(0xB),
        srnic_proto::rdmap::Opcode::Unknown(0xB)
    );
}

// ---------------------------------------------------------------- TERMINATE table

#[test]
fn terminate_code_table() {
    use StagError::*;
    let rows: &[(TermCode, (u8, u8, u8))] = &[
        (TermCode::LlpCrc, (2, 0, 0x02)),
        (TermCode::LlpUlpduTooShort, (2, 0, 0x03)),
        (TermCode::LlpMarker, (2, 0, 0x03)),
        (TermCode::LlpBadReqRep, (2, 0, 0x04)),
        (TermCode::LlpInsufficientIrd, (2, 0, 0x06)),
        (TermCode::LlpNoMatchingRtr, (2, 0, 0x07)),
        (TermCode::DdpVersionTagged, (1, 1, 0x04)),
        (TermCode::DdpVersionUntagged, (1, 2, 0x06)),
        (TermCode::RdmapVersion, (0, 2, 0x05)),
        (TermCode::RdmapOpcode, (0, 2, 0x06)),
        (TermCode::TaggedInvalidStag, (1, 1, 0x00)),
        (TermCode::TaggedAccess, (1, 1, 0x00)),
        (TermCode::TaggedPdMismatch, (1, 1, 0x02)),
        (TermCode::TaggedBaseBounds, (1, 1, 0x01)),
        (TermCode::TaggedToWrap, (1, 1, 0x03)),
        (TermCode::UntaggedInvalidQn, (1, 2, 0x01)),
        (TermCode::UntaggedNoBuffer, (1, 2, 0x02)),
        (TermCode::UntaggedMsnRange, (1, 2, 0x03)),
        (TermCode::UntaggedInvalidMo, (1, 2, 0x04)),
        (TermCode::UnexpectedReadResponse, (1, 0, 0x00)),
        (TermCode::IrdExceeded, (0, 2, 0x07)),
        (TermCode::ReadSource(InvalidStag), (0, 1, 0x00)),
        (TermCode::ReadSource(BaseBounds), (0, 1, 0x01)),
        (TermCode::ReadSource(AccessRights), (0, 1, 0x02)),
        (TermCode::ReadSource(PdMismatch), (0, 1, 0x03)),
        (TermCode::ReadSource(ToWrap), (0, 1, 0x04)),
        (TermCode::LocalCatastrophic, (0, 0, 0xff)),
    ];
    for (code, triple) in rows {
        assert_eq!(code.code(), *triple, "{code:?}");
    }
    // Tagged mapping of STag check failures.
    assert_eq!(TermCode::tagged(InvalidStag), TermCode::TaggedInvalidStag);
    assert_eq!(TermCode::tagged(AccessRights).code(), (1, 1, 0x00));
    assert_eq!(TermCode::tagged(PdMismatch).code(), (1, 1, 0x02));
    assert_eq!(TermCode::tagged(BaseBounds).code(), (1, 1, 0x01));
    assert_eq!(TermCode::tagged(ToWrap).code(), (1, 1, 0x03));
}

#[test]
fn terminate_attachments() {
    use srnic_proto::rdmap::Attach;
    let rr = Header {
        last: true,
        body: Body::ReadRequest {
            msn: 3,
            mo: 0,
            req: ReadRequest {
                sink_stag: 1,
                sink_to: 2,
                read_size: 3,
                src_stag: 4,
                src_to: 5,
            },
        },
    };
    // Remote protection: full 48-byte Read Request FPDU prefix, M D R.
    let t = srnic_proto::rdmap::engine::read_source_terminate(
        3,
        match rr.body {
            Body::ReadRequest { req, .. } => req,
            _ => unreachable!(),
        },
        StagError::AccessRights,
    );
    assert_eq!((t.layer, t.etype, t.ecode), (0, 1, 2));
    assert!(t.flag_m && t.flag_d && t.flag_r);
    assert_eq!(t.attached().len(), 48);
    assert_eq!(&t.attached()[..4], &[0x00, 46, 0x41, 0x41]);
    assert_eq!(
        TermCode::ReadSource(StagError::InvalidStag).attach(),
        Attach::Full
    );
    // DDP error: only the DDP header (16 bytes for tagged).
    let w = Header {
        last: true,
        body: Body::Write { stag: 9, to: 0 },
    };
    let t = Terminate::new(TermCode::TaggedBaseBounds, Some((&w, 114)));
    assert_eq!(t.attached().len(), 16);
    assert!(t.flag_m && t.flag_d && !t.flag_r);
    assert_eq!(&t.attached()[..4], &[0x00, 114, 0xC1, 0x40]);
    // LLP and version/opcode errors carry nothing.
    for c in [
        TermCode::LlpCrc,
        TermCode::RdmapOpcode,
        TermCode::RdmapVersion,
    ] {
        let t = Terminate::new(c, Some((&w, 114)));
        assert_eq!(t.attached().len(), 0);
        assert!(!t.flag_m && !t.flag_d && !t.flag_r);
    }
    // IRD exceeded: the DDP header of the Read Request.
    let t = Terminate::new(TermCode::IrdExceeded, Some((&rr, 46)));
    assert_eq!((t.layer, t.etype, t.ecode), (0, 2, 7));
    assert_eq!(t.attached().len(), 20);
}

// ---------------------------------------------------------------- full FPDUs

const SEND_HELLO_HDR: [u8; 18] = [
    0x41, 0x43, // L, Send
    0, 0, 0, 0, // reserved
    0, 0, 0, 0, // QN 0
    0, 0, 0, 1, // MSN 1
    0, 0, 0, 0, // MO 0
];

fn send_hello_fpdu(crc_on: bool) -> Vec<u8> {
    let mut v = cat(&[
        &[0x00, 0x17], // ULPDU length 23 = 18 + 5
        &SEND_HELLO_HDR,
        b"hello",
        &[0, 0, 0], // pad: (-(23 + 2)) & 3 = 3
    ]);
    let c = if crc_on {
        crc32c::crc32c(&v).to_le_bytes()
    } else {
        [0; 4]
    };
    v.extend_from_slice(&c);
    assert_eq!(v.len(), 32);
    v
}

fn hello_header() -> Header {
    Header {
        last: true,
        body: Body::Send {
            op: SendOp::Send,
            inval_stag: 0,
            msn: 1,
            mo: 0,
        },
    }
}

#[test]
fn fpdu_send_with_pad_and_crc() {
    for crc_on in [true, false] {
        let want = send_hello_fpdu(crc_on);
        let mut tx = TxFramer::new(crc_on, false);
        let mut out = [0u8; 64];
        let n = tx
            .frame_into(&SoftCrc32c, &SEND_HELLO_HDR, b"hello", &mut out)
            .unwrap()
            .unwrap();
        assert_eq!(&out[..n], &want[..]);

        let mut rx = RxFramer::new(crc_on, false);
        let (n, ev) = rx.feed(&SoftCrc32c, &want).unwrap();
        assert_eq!(n, 20);
        assert_eq!(
            ev,
            Some(RxEvent::Header {
                header: hello_header(),
                ulpdu_len: 23,
                payload_len: 5
            })
        );
        let (n2, ev) = rx.feed(&SoftCrc32c, &want[n..]).unwrap();
        assert_eq!(
            ev,
            Some(RxEvent::Payload {
                data: b"hello",
                input_offset: 0,
                seg_offset: 0
            })
        );
        let (n3, ev) = rx.feed(&SoftCrc32c, &want[n + n2..]).unwrap();
        assert_eq!(ev, Some(RxEvent::End));
        assert_eq!(n + n2 + n3, 32);
        assert!(rx.at_boundary());
    }
}

#[test]
fn fpdu_crc_mismatch_and_short_ulpdu() {
    let mut bad = send_hello_fpdu(true);
    bad[25] ^= 1; // flip a payload bit
    let mut rx = RxFramer::new(true, false);
    let mut off = 0;
    let err = loop {
        match rx.feed(&SoftCrc32c, &bad[off..]) {
            Ok((n, _)) => off += n,
            Err(e) => break e,
        }
    };
    assert_eq!(err, TermCode::LlpCrc);
    // The CRC carried (the FPDU's last four bytes, the good FPDU's CRC, as
    // only the payload changed) and the one computed over the changed bytes.
    let carried = u32::from_le_bytes(bad[bad.len() - 4..].try_into().unwrap());
    let (got, computed) = rx.bad_crc().unwrap();
    assert_eq!(got, carried);
    assert_ne!(computed, carried);
    // Sticky.
    assert_eq!(rx.feed(&SoftCrc32c, &[0]).unwrap_err(), TermCode::LlpCrc);

    // ULPDU length 10 for a Send (18-byte header): rejected from the control word,
    // before any further header field is read.
    let mut short = vec![0x00, 0x0a, 0x41, 0x43];
    short.extend_from_slice(&[0xEE; 12]);
    let mut rx = RxFramer::new(false, false);
    let mut off = 0;
    let err = loop {
        match rx.feed(&SoftCrc32c, &short[off..off + 1]) {
            Ok((n, ev)) => {
                assert!(ev.is_none());
                off += n
            }
            Err(e) => break e,
        }
    };
    assert_eq!(err, TermCode::LlpUlpduTooShort);
    assert_eq!(off, 3, "fails on the second control byte");
    // ULPDU length 0 and 1 fail right after the length field.
    for l in [0u8, 1] {
        let mut rx = RxFramer::new(false, false);
        assert_eq!(
            rx.feed(&SoftCrc32c, &[0, l, 0x41, 0x43]).unwrap_err(),
            TermCode::LlpUlpduTooShort
        );
    }
}

/// A Send on queue 3 is refused by `Header::parse` inside the framer; the
/// framer still hands out the header as received, and the TERMINATE copies
/// its DDP header and segment length (RFC 5040 section 4.8: M and D).
#[test]
fn unparsed_header_is_copied_into_the_terminate() {
    let mut send = vec![
        0x00, 0x16, 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0,
    ];
    send.extend_from_slice(&[0xAB; 4]);
    send.extend_from_slice(&[0; 4]);
    let mut rx = RxFramer::new(false, false);
    let err = rx.feed(&SoftCrc32c, &send).unwrap_err();
    assert_eq!(err, TermCode::UntaggedInvalidQn);
    let (raw, len) = rx.failed_header().expect("the header is known");
    assert_eq!((raw, len), (&send[2..20], 0x16));
    let t = Terminate::with_raw_header(err, raw, len);
    assert!(t.flag_m && t.flag_d && !t.flag_r);
    assert_eq!(&t.attached()[..2], &[0x00, 0x16]);
    assert_eq!(&t.attached()[2..], &send[2..20]);
    // Failures before the header is whole give none: a wrong version, and a
    // CRC error after it.
    let mut rx = RxFramer::new(false, false);
    assert!(rx.feed(&SoftCrc32c, &[0, 0x16, 0x42, 0x43]).is_err());
    assert!(rx.failed_header().is_none());
    let mut bad = send_hello_fpdu(true);
    bad[25] ^= 1;
    let mut rx = RxFramer::new(true, false);
    let mut off = 0;
    while let Ok((n, _)) = rx.feed(&SoftCrc32c, &bad[off..]) {
        off += n;
    }
    assert!(rx.failed_header().is_none());
    // An LLP code copies nothing even with a header at hand.
    let t = Terminate::with_raw_header(TermCode::LlpCrc, &send[2..20], 0x16);
    assert!(!t.flag_d && t.attached().is_empty());
}

#[test]
fn marker_bearing_stream() {
    // Markers on, CRC off. Message 1: RDMA Write of 500 bytes (ULPDU 514, no pad),
    // message 2: zero-length Send. Stream positions (relative to the first FPDU):
    //   0..4     marker, FPDUPTR 0 (precedes the first FPDU, belongs to it)
    //   4..6     ULPDU length 0x0202
    //   6..20    Write header
    //   20..512  492 payload bytes
    //   512..516 marker, FPDUPTR 512 - 4 = 508
    //   516..524 8 payload bytes
    //   524..528 CRC field (0)
    //   528..552 second FPDU (ULPDU 18, no pad), no marker
    let payload: Vec<u8> = (0..500u32).map(|i| (i * 7 + 3) as u8).collect();
    let write_hdr = cat(&[
        &[0xC1, 0x40],
        &[0, 0, 0, 0x42],
        &[0, 0, 0, 0, 0, 0, 0x10, 0],
    ]);
    let send_hdr: [u8; 18] = [0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0];
    let want = cat(&[
        &[0, 0, 0x00, 0x00],
        &[0x02, 0x02],
        &write_hdr,
        &payload[..492],
        &[0, 0, 0x01, 0xFC],
        &payload[492..],
        &[0, 0, 0, 0],
        &[0x00, 0x12],
        &send_hdr,
        &[0, 0, 0, 0],
    ]);
    assert_eq!(want.len(), 552);

    let mut tx = TxFramer::new(false, true);
    let mut out = vec![0u8; 1024];
    let n1 = tx
        .frame_into(&SoftCrc32c, &write_hdr, &payload, &mut out)
        .unwrap()
        .unwrap();
    let n2 = tx
        .frame_into(&SoftCrc32c, &send_hdr, &[], &mut out[n1..])
        .unwrap()
        .unwrap();
    assert_eq!(&out[..n1 + n2], &want[..]);

    // Receive one byte at a time: the marker is removed from the payload.
    let mut rx = RxFramer::new(false, true);
    let mut got = Vec::new();
    let mut ends = 0;
    for b in want.chunks(1) {
        let (n, ev) = rx.feed(&SoftCrc32c, b).unwrap();
        assert_eq!(n, 1);
        match ev {
            Some(RxEvent::Payload {
                data, seg_offset, ..
            }) => {
                assert_eq!(usize::from(seg_offset), got.len());
                got.extend_from_slice(data)
            }
            Some(RxEvent::End) => ends += 1,
            _ => {}
        }
    }
    assert_eq!(got, payload);
    assert_eq!(ends, 2);

    // A wrong FPDUPTR is an LLP/MPA/0x03 error.
    let mut bad = want.clone();
    bad[515] = 0xF8;
    let mut rx = RxFramer::new(false, true);
    let mut off = 0;
    let err = loop {
        match rx.feed(&SoftCrc32c, &bad[off..]) {
            Ok((n, _)) => off += n,
            Err(e) => break e,
        }
    };
    assert_eq!(err, TermCode::LlpMarker);
}

#[test]
fn marker_stream_with_crc_covers_markers() {
    // With CRC on the leading marker and the inner marker are inside the CRC.
    let payload = vec![0x5a; 500];
    let write_hdr = cat(&[&[0xC1, 0x40], &[0, 0, 0, 0x42], &[0; 8]]);
    let mut tx = TxFramer::new(true, true);
    let mut out = vec![0u8; 1024];
    let n = tx
        .frame_into(&SoftCrc32c, &write_hdr, &payload, &mut out)
        .unwrap()
        .unwrap();
    assert_eq!(n, 528);
    let want_crc = crc32c::crc32c(&out[..524]).to_le_bytes();
    assert_eq!(&out[524..528], &want_crc);
}

#[test]
fn largest_fpdu_roundtrips() {
    // ULPDU 65535 (the 16-bit limit): Write header 14 + 65521 payload bytes, pad 3.
    let payload: Vec<u8> = (0..65521u32).map(|i| (i % 251) as u8).collect();
    let hdr = cat(&[&[0xC1, 0x40], &[0, 0, 0, 1], &[0; 8]]);
    let mut tx = TxFramer::new(true, false);
    let mut out = vec![0u8; 70_000];
    let n = tx
        .frame_into(&SoftCrc32c, &hdr, &payload, &mut out)
        .unwrap()
        .unwrap();
    assert_eq!(n, 2 + 65535 + 3 + 4);
    assert_eq!(&out[..2], &[0xff, 0xff]);
    assert_eq!(
        TxFramer::new(true, false).fpdu(&hdr, 65522).unwrap_err(),
        srnic_proto::mpa::tx::TxError::UlpduTooLong
    );
    let mut rx = RxFramer::new(true, false);
    let mut got = Vec::new();
    let mut ended = false;
    for c in out[..n].chunks(1000) {
        let mut off = 0;
        while off < c.len() {
            let (k, ev) = rx.feed(&SoftCrc32c, &c[off..]).unwrap();
            off += k;
            match ev {
                Some(RxEvent::Payload { data, .. }) => got.extend_from_slice(data),
                Some(RxEvent::End) => ended = true,
                _ => {}
            }
        }
    }
    assert!(ended);
    assert_eq!(got, payload);
}
