// SPDX-License-Identifier: GPL-2.0
//! Sandia RMPP header: hand-written byte vectors in both directions, error cases and
//! a property test on the parser.

use proptest::prelude::*;
use srnic_proto::rmpp::wire::{
    caps, Packet, PacketType, ParseError, Repr, HEADER_LEN, SNAK_SPAN, VERSION,
};

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

fn check(vector: &str, want: Repr, payload: &[u8]) {
    let bytes = hex(vector);
    // Parse direction.
    let p = Packet::new_checked(&bytes[..]).unwrap();
    assert_eq!(Repr::parse(&p).unwrap(), want);
    assert_eq!(p.payload(), payload);
    // Emit direction.
    let mut out = vec![0u8; want.buffer_len()];
    want.emit(&mut Packet::new_unchecked(&mut out[..]));
    out[HEADER_LEN..].copy_from_slice(payload);
    assert_eq!(out, bytes, "{:?}", want.ptype);
}

fn base(ptype: PacketType) -> Repr {
    Repr {
        ptype,
        payload_len: 0,
        src_nid: 2,
        dst_nid: 7,
        msg_id: 0xabcd,
        msg_num: 3,
        len: 0x1000,
        seq: 0,
        info1: 0,
        info2: 0,
        tag: 0,
    }
}

#[test]
fn rts_vector() {
    check(
        "01 01 0004 00000002 00000007 0000abcd 00000003 00001000 00000000 00000000 00000001
         0102030405060708 deadbeef",
        Repr {
            payload_len: 4,
            info2: 1,
            tag: 0x0102_0304_0506_0708,
            ..base(PacketType::Rts)
        },
        &[0xde, 0xad, 0xbe, 0xef],
    );
}

#[test]
fn last_rts_vector() {
    check(
        "01 02 0003 00000002 00000007 0000abcd 00000003 00000003 00000000 00000000 00000000
         ffffffffffffffff 616263",
        Repr {
            payload_len: 3,
            len: 3,
            tag: u64::MAX,
            ..base(PacketType::LastRts)
        },
        b"abc",
    );
}

#[test]
fn cts_vector() {
    check(
        "01 03 0000 00000002 00000007 0000abcd 00000003 00001000 00000011 00000010 00000002
         0000000000000000",
        Repr {
            seq: 17,
            info1: 16,
            info2: 2,
            ..base(PacketType::Cts)
        },
        &[],
    );
}

#[test]
fn data_vectors() {
    for (code, ptype) in [
        (4, PacketType::Data),
        (5, PacketType::StopData),
        (6, PacketType::LastData),
    ] {
        check(
            &format!(
                "01 {code:02x} 0002 00000002 00000007 0000abcd 00000003 00001000 00000005
                 00000010 00000000 0000000000000000 55aa"
            ),
            Repr {
                payload_len: 2,
                seq: 5,
                info1: 16,
                ..base(ptype)
            },
            &[0x55, 0xaa],
        );
    }
}

#[test]
fn control_vectors() {
    for (code, ptype, info1) in [
        (7, PacketType::MsgEnd, 0x800),
        (8, PacketType::MsgDrop, 0),
        (9, PacketType::Gch, 0),
        (10, PacketType::Null, 0),
    ] {
        check(
            &format!(
                "01 {code:02x} 0000 00000002 00000007 0000abcd 00000003 00001000 00000000
                 {info1:08x} 00000004 0000000000000000"
            ),
            Repr {
                info1,
                info2: 4,
                ..base(ptype)
            },
            &[],
        );
    }
}

#[test]
fn rts_with_recovery_caps_vector() {
    // An RTS that offers both NAK kinds: info1 = NAK | SELECTIVE_NAK.
    check(
        "01 01 0001 00000002 00000007 0000abcd 00000003 00001000 00000000 00000003 00000000
         0000000000000009 2a",
        Repr {
            payload_len: 1,
            info1: caps::NAK | caps::SELECTIVE_NAK,
            tag: 9,
            ..base(PacketType::Rts)
        },
        &[0x2a],
    );
}

#[test]
fn nak_vectors() {
    // Go back to packet 5 of attempt 2.
    check(
        "01 0b 0000 00000002 00000007 0000abcd 00000003 00001000 00000005 00000000 00000002
         0000000000000000",
        Repr {
            seq: 5,
            info2: 2,
            ..base(PacketType::Nak)
        },
        &[],
    );
    // Send again packets 5, 6 and 9 (mask bits 0, 1 and 4; info1 counts them).
    check(
        "01 0c 0000 00000002 00000007 0000abcd 00000003 00001000 00000005 00000003 00000002
         0000000000000013",
        Repr {
            seq: 5,
            info1: 3,
            info2: 2,
            tag: 0x13,
            ..base(PacketType::SelectiveNak)
        },
        &[],
    );
    assert!(PacketType::Nak.is_reply() && PacketType::SelectiveNak.is_reply());
    assert!(!PacketType::Nak.carries_data() && !PacketType::SelectiveNak.carries_data());
    assert_eq!(SNAK_SPAN, 64);
}

#[test]
fn type_codes_round_trip() {
    for code in 0..=255u8 {
        match PacketType::from_code(code) {
            Some(t) => {
                assert!((1..=12).contains(&code));
                assert_eq!(t.code(), code);
            }
            None => assert!(code == 0 || code > 12),
        }
    }
}

#[test]
fn padding_is_ignored() {
    let mut bytes = hex(
        "01 02 0001 00000002 00000007 0000abcd 00000003 00000001 00000000 00000000 00000000
         0000000000000000 7a",
    );
    bytes.extend_from_slice(&[0; 13]); // Ethernet minimum-frame padding.
    let p = Packet::new_checked(&bytes[..]).unwrap();
    let r = Repr::parse(&p).unwrap();
    assert_eq!(r.payload_len, 1);
    assert_eq!(p.payload(), b"z");
}

#[test]
fn errors() {
    let good = hex(
        "01 04 0002 00000002 00000007 0000abcd 00000003 00001000 00000005 00000010 00000000
         0000000000000000 55aa",
    );
    // Truncated header and truncated payload.
    for n in 0..good.len() {
        let err = Packet::new_checked(&good[..n]).unwrap_err();
        assert_eq!(err, ParseError::Truncated, "len {n}");
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&good[..n])),
            Err(ParseError::Truncated)
        );
    }
    let mut bad = good.clone();
    bad[0] = 2;
    assert_eq!(
        Repr::parse(&Packet::new_unchecked(&bad[..])),
        Err(ParseError::BadVersion(2))
    );
    for code in [0u8, 13, 0xff] {
        let mut bad = good.clone();
        bad[1] = code;
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&bad[..])),
            Err(ParseError::UnknownType(code))
        );
    }
    let mut bad = good.clone();
    bad[1] = PacketType::Cts.code();
    assert_eq!(
        Repr::parse(&Packet::new_unchecked(&bad[..])),
        Err(ParseError::UnexpectedPayload)
    );
    assert_eq!(VERSION, 1);
}

fn any_type() -> impl Strategy<Value = PacketType> {
    (1u8..=12).prop_map(|c| PacketType::from_code(c).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
        let p = Packet::new_unchecked(&bytes[..]);
        let _ = (p.version(), p.type_code(), p.src_nid(), p.tag(), p.payload());
        if let Ok(r) = Repr::parse(&p) {
            prop_assert!(r.buffer_len() <= bytes.len());
            let mut out = [0u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(&out[..], &bytes[..HEADER_LEN]);
        }
    }

    #[test]
    fn round_trip(
        ptype in any_type(),
        plen in 0u16..64,
        f in any::<[u32; 8]>(),
        tag in any::<u64>(),
        pad in 0usize..8,
    ) {
        let plen = if ptype.carries_data() { plen } else { 0 };
        let r = Repr {
            ptype,
            payload_len: plen,
            src_nid: f[0],
            dst_nid: f[1],
            msg_id: f[2],
            msg_num: f[3],
            len: f[4],
            seq: f[5],
            info1: f[6],
            info2: f[7],
            tag,
        };
        let mut buf = vec![0x5au8; r.buffer_len() + pad];
        r.emit(&mut Packet::new_unchecked(&mut buf[..]));
        let p = Packet::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(Repr::parse(&p).unwrap(), r);
        prop_assert_eq!(p.payload().len(), usize::from(plen));
    }
}
