// SPDX-License-Identifier: GPL-2.0
//! `rmpp_parse`: the Sandia RMPP header codec on arbitrary frames.
//!
//! Invariants: accessors of an unchecked packet never panic on short buffers;
//! `new_checked` succeeds exactly when the buffer holds header plus `plen`; a frame that
//! parses re-emits to the identical 44 header bytes and re-parses to the same
//! [`Repr`]; the payload is exactly the `plen` bytes behind the header; a parse error
//! names the first rule the frame breaks.

use srnic_proto::rmpp::wire::VERSION;
use srnic_proto::rmpp::{Packet, PacketType, ParseError, Repr, HEADER_LEN};

/// The fuzz entry point.
pub fn check(data: &[u8]) {
    let p = Packet::new_unchecked(data);
    // Every accessor works on any buffer.
    let _ = (
        p.version(),
        p.type_code(),
        p.src_nid(),
        p.dst_nid(),
        p.msg_id(),
    );
    let _ = (
        p.msg_num(),
        p.msg_len(),
        p.seq(),
        p.info1(),
        p.info2(),
        p.tag(),
    );
    let plen = usize::from(p.payload_len());
    let fits = data.len() >= HEADER_LEN && data.len() >= HEADER_LEN + plen;
    assert_eq!(Packet::new_checked(data).is_ok(), fits, "check_len");
    assert_eq!(p.payload().len(), if fits { plen } else { 0 });
    match Repr::parse(&p) {
        Err(e) => {
            let expect = if !fits {
                ParseError::Truncated
            } else if p.version() != VERSION {
                ParseError::BadVersion(p.version())
            } else {
                match PacketType::from_code(p.type_code()) {
                    None => ParseError::UnknownType(p.type_code()),
                    Some(_) => ParseError::UnexpectedPayload,
                }
            };
            assert_eq!(e, expect, "parse error");
        }
        Ok(r) => {
            assert!(fits);
            assert!(r.ptype.carries_data() || r.payload_len == 0);
            assert_eq!(PacketType::from_code(r.ptype.code()), Some(r.ptype));
            assert_eq!(r.buffer_len(), HEADER_LEN + plen);
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(&buf[..HEADER_LEN], &data[..HEADER_LEN], "header round trip");
            buf[HEADER_LEN..].copy_from_slice(p.payload());
            let q = Packet::new_checked(&buf[..]).expect("emitted packet checks");
            assert_eq!(Repr::parse(&q), Ok(r), "re-parse");
            assert_eq!(q.payload(), &data[HEADER_LEN..HEADER_LEN + plen]);
        }
    }
    // A short buffer is never written past its end by emit.
    if let Ok(r) = Repr::parse(&p) {
        let mut short = vec![0u8; data.len() % HEADER_LEN];
        r.emit(&mut Packet::new_unchecked(&mut short[..]));
    }
}
