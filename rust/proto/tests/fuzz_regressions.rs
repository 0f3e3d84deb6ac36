// SPDX-License-Identifier: GPL-2.0
//! Inputs found by the fuzz targets in `tests/fuzz/`, kept as tests.
//!
//! The first ten-minute runs of all five targets found no crash and no violated
//! invariant in the cores. The inputs below are the ones that made the fuzz harness
//! itself reconsider what the Sandia RMPP engine is allowed to do; each is kept as
//! the raw fuzz input (replayed through the same checks as the fuzz target) and as
//! a direct test of the engine behaviour it exposed. Any future crash in a core goes
//! here too, with the crashing input as a byte literal, next to its fix.

#[path = "../../../tests/fuzz/src/rmpp_receiver.rs"]
mod rmpp_receiver;
// Shared with every fuzz check; only part of it is used here.
#[allow(dead_code)]
#[path = "../../../tests/fuzz/src/util.rs"]
mod util;

use srnic_proto::rmpp::{
    Arrival, Completion, Config, Decision, Engine, Packet, PacketType, PeerState, RecvSlot,
    RecvStatus, Repr, SendSlot, HEADER_LEN,
};

type Eng = Engine<Vec<SendSlot>, Vec<RecvSlot>, Vec<PeerState>>;

fn engine(nid: u32) -> Eng {
    let mut c = Config::new(nid);
    c.mtu = (HEADER_LEN + 16) as u16;
    c.max_data_pkts = 4;
    c.retransmit_timeout = 1000;
    c.max_retries = 2;
    c.reclaim_timeout = 100_000;
    Engine::new(
        c,
        vec![SendSlot::default(); 2],
        vec![RecvSlot::default(); 2],
        vec![PeerState::default(); 4],
    )
    .expect("valid configuration")
}

fn frame(r: &Repr) -> Vec<u8> {
    let mut f = vec![0u8; r.buffer_len()];
    r.emit(&mut Packet::new_unchecked(&mut f[..]));
    f
}

fn first_packet(ptype: PacketType, msg_id: u32, msg_num: u32, len: u32, plen: u16) -> Repr {
    Repr {
        ptype,
        payload_len: plen,
        src_nid: 1,
        dst_nid: 0,
        msg_id,
        msg_num,
        len,
        seq: 0,
        info1: 0,
        info2: 0,
        tag: 0,
    }
}

fn accept_all(a: &Arrival<'_>) -> Decision {
    Decision::Accept {
        len: a.len,
        ctx: u64::from(a.msg_num),
    }
}

/// rmpp_receiver: a corrupted LAST RTS reused the msgID of a message that had just
/// finished (its GCH already freed the receiver's state) with the next msgNum. The
/// harness had keyed completions by (srcNID, msgID) and saw a "second" completion.
#[test]
fn rmpp_receiver_msg_id_reuse_input() {
    rmpp_receiver::check(&[
        0x18, 0x01, 0x1e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x11, 0x00, 0x00, 0x00,
        0x05, 0x02, 0x05, 0x00, 0x00, 0x02, 0x02, 0x94, 0xf5,
    ]);
}

/// The engine behaviour behind it: identity for ordering is the msgNum, so once a
/// message's state is gone, a first packet with the same msgID and the next msgNum
/// is a new message, and the old msgNum stays consumed.
#[test]
fn rmpp_msg_id_reused_after_gch_is_a_new_message() {
    let mut a = engine(0);
    let f = frame(&first_packet(PacketType::LastRts, 7, 0, 0, 0));
    assert_eq!(a.receive(0, &f, &mut accept_all), Ok(None));
    let mut hdr = [0u8; HEADER_LEN];
    let t = a.poll_transmit(0, &mut hdr).expect("MSGEND");
    assert_eq!(t.ptype, PacketType::MsgEnd);
    assert!(matches!(a.poll_completion(), Some(Completion::Recv { .. })));
    let mut gch = first_packet(PacketType::Gch, 7, 0, 0, 0);
    gch.len = 0;
    a.receive(0, &frame(&gch), &mut accept_all).expect("GCH");
    assert_eq!(a.active_recvs(), 0);
    // Same msgID, next msgNum: a new message.
    let mut r = first_packet(PacketType::LastRts, 7, 1, 3, 3);
    r.tag = 9;
    let mut f = frame(&r);
    f[HEADER_LEN..].copy_from_slice(b"abc");
    let p = a.receive(0, &f, &mut accept_all).expect("accepted");
    assert_eq!(p.map(|p| p.data), Some(&b"abc"[..]));
    assert!(matches!(
        a.poll_completion(),
        Some(Completion::Recv {
            msg_id: 7,
            msg_num: 1,
            status: RecvStatus::Complete,
            ..
        })
    ));
    // The old msgNum is not accepted again.
    let f = frame(&first_packet(PacketType::LastRts, 8, 0, 0, 0));
    assert!(a.receive(0, &f, &mut accept_all).is_err());
}

/// rmpp_receiver: an injected RTS announced a 2.3 GB message; the harness had
/// allocated the whole receive buffer up front.
#[test]
fn rmpp_receiver_huge_length_input() {
    rmpp_receiver::check(&[
        24, 58, 2, 32, 0, 0, 63, 24, 1, 30, 2, 2, 104, 0, 0, 0, 0, 2, 0, 100, 122, 0, 50, 136, 136,
        136, 136, 136, 136, 136, 136, 2, 0, 0, 10, 97, 97, 97, 97, 97, 97, 97, 157, 97, 0, 0, 8, 2,
        2, 155, 10, 8, 13, 2,
    ]);
}

/// The engine behaviour behind it: accepting a message of any announced length only
/// ever grants a bounded block, and reclaim returns every grant.
#[test]
fn rmpp_huge_message_grants_stay_bounded() {
    let mut a = engine(0);
    let mut r = first_packet(PacketType::Rts, 1, 0, u32::MAX, 16);
    r.tag = 1;
    let f = frame(&r);
    let p = a.receive(0, &f, &mut accept_all).expect("accepted");
    assert_eq!(p.map(|p| (p.offset, p.data.len())), Some((0, 16)));
    let mut hdr = [0u8; HEADER_LEN];
    let t = a.poll_transmit(0, &mut hdr).expect("CTS");
    assert_eq!(t.ptype, PacketType::Cts);
    let cts = Repr::parse(&Packet::new_unchecked(&hdr[..])).expect("CTS parses");
    assert_eq!((cts.seq, cts.info1), (1, 4));
    assert_eq!(a.outstanding(), 4);
    let deadline = a.poll_timeout().expect("reclaim deadline");
    a.handle_timeout(deadline);
    assert!(matches!(
        a.poll_completion(),
        Some(Completion::Recv {
            status: RecvStatus::Abandoned,
            accepted: u32::MAX,
            ..
        })
    ));
    assert_eq!((a.outstanding(), a.active_recvs()), (0, 0));
}
