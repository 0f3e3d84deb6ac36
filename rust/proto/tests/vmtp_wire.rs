// SPDX-License-Identifier: GPL-2.0
//! VMTP header, checksum and packet groups: worked examples computed by hand
//! from RFC 1045's text (sections 2.13, 3.1 and 3.2), both directions, errors,
//! and a property test of the parser.

use proptest::prelude::*;
use srnic_proto::vmtp::checksum::{self, Verdict};
use srnic_proto::vmtp::group;
use srnic_proto::vmtp::wire::{code, ctrl, word2, IP_PROTOCOL, MAX_LENGTH};
use srnic_proto::vmtp::{Code, Control, EntityId, Function, Packet, ParseError, Repr, HEADER_LEN};

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// A Request from BE-1-10.0.0.1 to BE-2-10.0.0.2, transaction 0x12345678,
/// request code 1, no data.
fn request() -> Repr {
    Repr {
        client: EntityId::internet(1, [10, 0, 0, 1]),
        domain: 1,
        word2_flags: 0,
        length: 0,
        control: Control::new(Function::Request),
        transaction: 0x1234_5678,
        packet_delivery: 0,
        server: EntityId::internet(2, [10, 0, 0, 2]),
        code: Code(1),
        user: [0; 20],
        msg_delivery: 0,
        segment_size: 0,
    }
}

fn build(r: &Repr, data: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8; r.buffer_len()];
    let mut p = Packet::new_unchecked(&mut v[..]);
    r.emit(&mut p);
    p.data_mut()[..data.len()].copy_from_slice(data);
    p.fill_checksum();
    v
}

#[test]
fn request_vector() {
    // Words: Client; version 0, domain 1, Length 0; control 0 (a Request);
    // Transaction; PacketDelivery; Server; Code 1; zeros. The checksum: sum1
    // over bytes 0-31 (0x0000 + 0x0001 + 0x0a00 + 0x0001 + 0x0001 + 0x1234 +
    // 0x5678 + 0x0002 + 0x0a00 + 0x0002 = 0x7cb3), sum2 over bytes 32-63 (the
    // 0x0001 of Code).
    let want = hex(
        "00000001 0a000001 00010000 00000000 12345678 00000000 00000002 0a000002
         00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000
         7cb3 0001",
    );
    let got = build(&request(), &[]);
    assert_eq!(got, want);
    let p = Packet::new_checked(&got[..]).unwrap();
    assert_eq!(Repr::parse(&p).unwrap(), request());
    assert_eq!(p.verify_checksum(), Verdict::Good);
    assert_eq!(IP_PROTOCOL, 81);
}

#[test]
fn response_with_data_vector() {
    // A one-block Response of 8 bytes "ABCDEFGH": Length 2, PacketDelivery
    // block 0, SDA with SegmentSize 8, FunctionCode 1. The data (bytes 64-71)
    // is cluster 2, so it adds to sum1.
    let mut r = request();
    r.control = Control::new(Function::Response);
    r.length = 2;
    r.packet_delivery = 1;
    r.code = Code(code::SDA);
    r.segment_size = 8;
    let got = build(&r, b"ABCDEFGH");
    let want = hex(
        "00000001 0a000001 00010002 00000001 12345678 00000001 00000002 0a000002
         10000000 00000000 00000000 00000000 00000000 00000000 00000000 00000008
         4142434445464748 8dcc 1008",
    );
    assert_eq!(got, want);
    let p = Packet::new_checked(&got[..]).unwrap();
    let back = Repr::parse(&p).unwrap();
    assert_eq!(back, r);
    assert_eq!(back.control.function, Function::Response);
    assert_eq!(p.data(), b"ABCDEFGH");
    assert_eq!(p.verify_checksum(), Verdict::Good);
    // Header only (HCO): the data no longer counts.
    r.word2_flags = word2::HCO;
    let hco = build(&r, b"ABCDEFGH");
    let mut other = hco.clone();
    other[64] ^= 0xff;
    assert_eq!(
        Packet::new_checked(&other[..]).unwrap().verify_checksum(),
        Verdict::Good
    );
    let mut bad = got.clone();
    bad[64] ^= 0xff;
    assert_eq!(
        Packet::new_checked(&bad[..]).unwrap().verify_checksum(),
        Verdict::Bad
    );
    // Four zero bytes: no checksum.
    let mut none = got;
    let n = none.len();
    none[n - 4..].fill(0);
    assert_eq!(
        Packet::new_checked(&none[..]).unwrap().verify_checksum(),
        Verdict::Absent
    );
}

#[test]
fn control_word_fields() {
    let mut r = request();
    r.control = Control {
        flags: ctrl::APG | ctrl::NRT | ctrl::DRT,
        retransmit_count: 5,
        forward_count: 15,
        gap: 0xa5,
        priority: 0b1100,
        function: Function::Request,
    };
    r.code = Code(code::DGM | code::MDM | code::SDA | code::APPLICATION);
    let v = build(&r, &[]);
    // APG (bit 30), NRT (27), DRT (23); RetransmitCount 5 at 20; ForwardCount
    // 15 at 16; gap 0xa5 at 8; priority 0xc at 4; a Request.
    assert_eq!(&v[12..16], &hex("48df a5c0")[..]);
    assert_eq!(&v[32..36], &hex("7080 0000")[..]);
    let back = Repr::parse(&Packet::new_checked(&v[..]).unwrap()).unwrap();
    assert_eq!(back, r);
    assert!(back.control.has(ctrl::APG) && !back.control.has(ctrl::NRS));
    assert_eq!(back.code.value(), code::APPLICATION);
    assert!(back.code.has(code::DGM) && !back.code.has(code::CMD));
}

#[test]
fn parse_errors() {
    let good = build(&request(), &[]);
    for n in 0..HEADER_LEN + 4 {
        assert_eq!(
            Packet::new_checked(&good[..n]).unwrap_err(),
            ParseError::Truncated,
            "{n}"
        );
    }
    let mut long = good.clone();
    long.push(0);
    assert_eq!(
        Packet::new_checked(&long[..]).unwrap_err(),
        ParseError::BadLength
    );
    let mut odd = good.clone();
    odd[11] = 1; // Length 1: odd, and 4 bytes missing
    assert_eq!(
        Packet::new_checked(&odd[..]).unwrap_err(),
        ParseError::BadLength
    );
    let mut v = good.clone();
    v[8] = 0x20; // version 1
    assert_eq!(
        Repr::parse(&Packet::new_unchecked(&v[..])),
        Err(ParseError::BadVersion(1))
    );
    let mut res = good.clone();
    res[15] = 0x02; // a reserved control bit
    assert_eq!(
        Repr::parse(&Packet::new_unchecked(&res[..])),
        Err(ParseError::Reserved)
    );
    // Data without SDA.
    let mut r = request();
    r.length = 2;
    let nosda = build(&r, &[1; 8]);
    assert_eq!(
        Repr::parse(&Packet::new_unchecked(&nosda[..])),
        Err(ParseError::UnexpectedData)
    );
    assert_eq!(MAX_LENGTH, 4096);
}

#[test]
fn rfc_packet_group_example() {
    // RFC 1045, section 2.13: a segment of 0x1D00 bytes (14.5 blocks) with
    // MsgDelivery 0x000074FF (blocks 0-7, 10, 12, 13 and the half block 14) on
    // an Ethernet carries two blocks per packet: six packets, the fifth with
    // blocks 10 and 12, the last with block 13 and the short block 14.
    // Ethernet's 1500 bytes less the IP header (20), VMTP's header (64) and
    // checksum (4) leave 1412 bytes of data per packet.
    let got: Vec<u32> = group::packets(0x74ff, 0x1d00, 1412).collect();
    assert_eq!(got, [0x3, 0xc, 0x30, 0xc0, 0x1400, 0x6000]);
    assert_eq!(group::data_len(0x6000, 0x1d00), Some(768));
    // A 16 KiB group in 1412-byte packets: 16 packets of two blocks.
    assert_eq!(group::packets(u32::MAX, 16384, 1412).count(), 16);
    // Blocks that do not fit one by one still go one per packet.
    assert_eq!(
        group::packets(0b111, 1536, 100).collect::<Vec<_>>(),
        [1, 2, 4]
    );
    assert_eq!(group::packets(0, 1536, 1412).count(), 0);
}

#[test]
fn entity_notation() {
    // Appendix IV.1's examples: BE-25593-36.8.0.49 and the manager group
    // RG-1-224.0.1.0.
    let e = EntityId::internet(25593, [36, 8, 0, 49]);
    assert_eq!(e.to_be_bytes(), [0x00, 0x00, 0x63, 0xf9, 36, 8, 0, 49]);
    assert_eq!(
        EntityId::MANAGER_GROUP.to_be_bytes(),
        [0x40, 0, 0, 1, 224, 0, 1, 0]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let p = Packet::new_unchecked(&bytes[..]);
        if let Ok(r) = Repr::parse(&p) {
            prop_assert_eq!(r.buffer_len(), bytes.len());
            let _ = p.verify_checksum();
        }
    }

    #[test]
    fn round_trip(
        client in any::<u64>(), server in any::<u64>(), domain in 0u16..0x2000,
        words in (0u16..=64).prop_map(|w| w * 2), flags in any::<u32>(), rc in 0u8..8,
        fc in 0u8..16, gap in any::<u8>(), prio in 0u8..16, response in any::<bool>(),
        transaction in any::<u32>(), pd in any::<u32>(), codew in any::<u32>(),
        user in any::<[u8; 20]>(), md in any::<u32>(), ss in any::<u32>(),
        hco in any::<bool>(), seed in any::<u8>(),
    ) {
        let r = Repr {
            client: EntityId(client),
            domain,
            word2_flags: if hco { word2::HCO } else { 0 },
            length: words,
            control: Control {
                flags: flags & ctrl::ALL,
                retransmit_count: rc,
                forward_count: fc,
                gap,
                priority: prio,
                function: if response { Function::Response } else { Function::Request },
            },
            transaction,
            packet_delivery: pd,
            server: EntityId(server),
            code: Code(codew | code::SDA),
            user,
            msg_delivery: md,
            segment_size: ss,
        };
        let data: Vec<u8> = (0..usize::from(words) * 4).map(|i| (i as u8) ^ seed).collect();
        let v = build(&r, &data);
        let p = Packet::new_checked(&v[..]).unwrap();
        prop_assert_eq!(Repr::parse(&p).unwrap(), r);
        prop_assert_eq!(p.data(), &data[..]);
        prop_assert_eq!(p.verify_checksum(), Verdict::Good);
        prop_assert_eq!(checksum::verify(&v[..v.len() - 4], [0; 4]), Verdict::Absent);
    }
}
