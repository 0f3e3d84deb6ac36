// SPDX-License-Identifier: GPL-2.0
//! Seed inputs for the fuzz targets, built with the core itself (`cargo run --bin
//! gen_corpus` writes them to `corpus/<target>/`).

use srnic_proto::mpa::frame::MAX_FRAME_LEN;
use srnic_proto::mpa::negotiate::{Initiator, MpaConfig, Responder};
use srnic_proto::rdmap::tx::WorkRequest;
use srnic_proto::rdmap::{Body, Header, ReadRequest, SendOp, MAX_HDR_LEN};
use srnic_proto::rmpp::{Config, Engine, PeerState, RecvSlot, SendSlot, HEADER_LEN};

use super::mpa_framer::frame_messages;
use super::util::pattern;

/// A named seed for one target.
pub struct Seed {
    /// Target name.
    pub target: &'static str,
    /// File name inside `corpus/<target>/`.
    pub name: String,
    /// The input.
    pub data: Vec<u8>,
}

fn seed(target: &'static str, name: &str, data: Vec<u8>) -> Seed {
    Seed {
        target,
        name: name.to_string(),
        data,
    }
}

/// One of every RDMAP message, small.
fn all_ops() -> Vec<WorkRequest> {
    let rr = ReadRequest {
        sink_stag: 0x0102_0304,
        sink_to: 0x1000,
        read_size: 100,
        src_stag: 0x0506_0708,
        src_to: 0x2000,
    };
    let send = |op| WorkRequest::Send {
        op,
        inval_stag: 0xAB,
        len: 40,
    };
    vec![
        send(SendOp::Send),
        send(SendOp::SendInvalidate),
        send(SendOp::SendSe),
        send(SendOp::SendSeInvalidate),
        WorkRequest::Write {
            stag: 0x100,
            to: 0x1010,
            len: 700,
        },
        WorkRequest::ReadRequest(rr),
        WorkRequest::ReadResponse {
            sink_stag: 0x0102_0304,
            sink_to: 0x1000,
            len: 100,
        },
        super::mpa_framer::work_request(7 | (9 << 3), 0, 6, 0x77),
    ]
}

fn mpa_framer() -> Vec<Seed> {
    let mut v = Vec::new();
    for (flags, name) in [
        (0u8, "plain"),
        (1, "crc"),
        (2, "markers"),
        (3, "crc_markers"),
    ] {
        let (stream, _) = frame_messages(flags & 1 != 0, flags & 2 != 0, 512, &all_ops());
        let mut d = vec![flags, 3];
        d.extend_from_slice(&stream);
        v.push(seed("mpa_framer", &format!("stream_{name}"), d));
    }
    // Structured: every opcode, small FPDUs, CRC and markers on.
    let mut d = vec![7u8, 5, 0, 100];
    for kind in 0u8..8 {
        d.push(kind);
        d.extend_from_slice(&(300u16 + u16::from(kind)).to_be_bytes());
        d.extend_from_slice(&0x100u32.to_be_bytes());
        d.extend_from_slice(&0x1000u64.to_be_bytes());
    }
    v.push(seed("mpa_framer", "structured_all_ops", d));
    v
}

fn cfg_bytes(revision: u8, crc: bool, markers: bool, p2p: bool) -> Vec<u8> {
    let a = revision
        | if crc { 4 } else { 0 }
        | if markers { 8 } else { 0 }
        | 0x10
        | if p2p { 0x20 } else { 0 };
    vec![a, 0x03, 0, 4, 0, 4, 1, 0]
}

fn mpa_negotiate() -> Vec<Seed> {
    let mut v = Vec::new();
    for (name, crc, markers, p2p) in [
        ("siw", false, false, false),
        ("crc", true, false, false),
        ("markers", false, true, false),
        ("p2p", false, false, true),
    ] {
        let mut cfg = MpaConfig::siw_compatible();
        cfg.crc = crc;
        cfg.markers_rx = markers;
        cfg.p2p = p2p;
        // A Request, as the responder sees it.
        let mut req = [0u8; MAX_FRAME_LEN];
        let n = Initiator::new(cfg)
            .request(b"seed", &mut req)
            .expect("request");
        let mut d = cfg_bytes(2, crc, markers, p2p);
        d.extend(cfg_bytes(2, crc, markers, p2p));
        d.extend([0, 7]);
        d.extend_from_slice(&req[..n]);
        v.push(seed("mpa_negotiate", &format!("request_{name}"), d));
        // The Reply to it, as the initiator sees it.
        let mut r = Responder::new(cfg);
        r.on_bytes(&req[..n]).expect("on_bytes");
        let mut rep = [0u8; MAX_FRAME_LEN];
        let (m, _) = r.accept(b"ok", &mut rep).expect("accept");
        let mut d = cfg_bytes(2, crc, markers, p2p);
        d.extend(cfg_bytes(2, crc, markers, p2p));
        d.extend([2, 0]);
        d.extend_from_slice(&rep[..m]);
        v.push(seed("mpa_negotiate", &format!("reply_{name}"), d));
    }
    v
}

fn segment(d: &mut Vec<u8>, op: u8, h: &Header, payload_len: u16) {
    let mut b = [0u8; MAX_HDR_LEN];
    let n = h.emit(&mut b).expect("fits");
    d.push(op);
    d.extend_from_slice(&(n as u16 + payload_len).to_be_bytes());
    d.extend_from_slice(&payload_len.to_be_bytes());
    d.push(n as u8);
    d.extend_from_slice(&b[..n]);
}

fn ddp_rdmap() -> Vec<Seed> {
    let mut d = vec![2u8, 2, 2, 0, 64, 1, 0];
    let send = |msn, mo, last| Header {
        last,
        body: Body::Send {
            op: SendOp::SendSeInvalidate,
            inval_stag: 9,
            msn,
            mo,
        },
    };
    segment(&mut d, 0x01, &send(1, 0, false), 32);
    segment(&mut d, 0x00, &send(1, 32, true), 32);
    let write = Header {
        last: true,
        body: Body::Write {
            stag: 0x100,
            to: 0x1100,
        },
    };
    segment(&mut d, 0x00, &write, 200);
    let req = ReadRequest {
        sink_stag: 0x55,
        sink_to: 0x10,
        read_size: 64,
        src_stag: 0x100,
        src_to: 0x1000,
    };
    let rr = Header {
        last: true,
        body: Body::ReadRequest { msn: 1, mo: 0, req },
    };
    segment(&mut d, 0x00, &rr, 0);
    // Post a local Read, then its response.
    d.push(0x80);
    d.extend_from_slice(&0x77u32.to_be_bytes());
    d.extend_from_slice(&0x400u64.to_be_bytes());
    d.extend_from_slice(&64u16.to_be_bytes());
    let resp = Header {
        last: true,
        body: Body::ReadResponse {
            stag: 0x77,
            to: 0x400,
        },
    };
    segment(&mut d, 0x40, &resp, 64);
    // A second Send with no buffer left: TERMINATE.
    segment(&mut d, 0x00, &send(2, 0, true), 8);
    let mut v = vec![seed("ddp_rdmap", "session", d)];
    let mut t = vec![0u8, 0, 0];
    let term = match super::mpa_framer::work_request(7 | (3 << 3), 0, 6, 0x99) {
        WorkRequest::Terminate(t) => t,
        _ => unreachable!(),
    };
    let th = Header {
        last: true,
        body: Body::Terminate {
            msn: 1,
            mo: 0,
            term,
        },
    };
    segment(&mut t, 0x00, &th, 0);
    v.push(seed("ddp_rdmap", "terminate", t));
    v
}

fn rmpp_frames() -> Vec<Vec<u8>> {
    type E = Engine<Vec<SendSlot>, Vec<RecvSlot>, Vec<PeerState>>;
    let mk = |nid| -> E {
        let mut c = Config::new(nid);
        c.mtu = (HEADER_LEN + 32) as u16;
        c.max_data_pkts = 2;
        Engine::new(
            c,
            vec![SendSlot::default(); 2],
            vec![RecvSlot::default(); 2],
            vec![PeerState::default(); 4],
        )
        .expect("config")
    };
    let (mut a, mut b) = (mk(0), mk(1));
    let msg = pattern(5, 100);
    b.send(0, 0, 100, 7, 5).expect("send");
    b.send(0, 0, 10, 8, 6).expect("send");
    let short = pattern(6, 10);
    let mut frames = Vec::new();
    for _ in 0..20 {
        let mut hdr = [0u8; HEADER_LEN];
        let mut any = false;
        while let Some(t) = b.poll_transmit(0, &mut hdr) {
            any = true;
            let mut f = hdr.to_vec();
            if let Some(p) = t.payload {
                let m = if p.cookie == 5 { &msg } else { &short };
                f.extend_from_slice(&m[p.offset as usize..][..p.len as usize]);
            }
            let _ = a.receive(0, &f, &mut |x: &srnic_proto::rmpp::Arrival<'_>| {
                srnic_proto::rmpp::Decision::Accept { len: x.len, ctx: 1 }
            });
            frames.push(f);
        }
        while let Some(_t) = a.poll_transmit(0, &mut hdr) {
            any = true;
            let f = hdr.to_vec();
            let _ = b.receive(0, &f, &mut |_: &srnic_proto::rmpp::Arrival<'_>| {
                srnic_proto::rmpp::Decision::Drop
            });
            frames.push(f);
        }
        if !any {
            break;
        }
    }
    frames
}

fn rmpp() -> Vec<Seed> {
    let mut v = Vec::new();
    let frames = rmpp_frames();
    let mut seen = std::collections::HashSet::new();
    for f in &frames {
        if seen.insert(f[1]) {
            v.push(seed("rmpp_parse", &format!("type{}", f[1]), f.clone()));
        }
    }
    // Receiver: configuration, then B sends two messages, everything delivered, with a
    // loss, a duplicate and timeouts on the way.
    let cfg = [24u8, 1, 30, 2, 2, 0];
    let mut base = Vec::new();
    base.extend(cfg);
    base.extend(cfg);
    base.push(0x1F);
    let mut d = base.clone();
    d.extend([0, 1, 44, 0, 0, 20]);
    for _ in 0..6 {
        d.extend([2, 5, 2, 5]);
    }
    d.extend([3, 9, 0, 200, 2, 4, 2, 5, 13, 2, 5, 2, 5]);
    v.push(seed("rmpp_receiver", "two_messages_loss", d));
    let mut d = base.clone();
    d.extend([
        12, 1, 0, 0, 100, 1, 0, 50, 2, 5, 2, 5, 2, 5, 10, 0, 13, 2, 5, 2, 5,
    ]);
    v.push(seed("rmpp_receiver", "truncate_abort_both_ways", d));
    let mut d = base;
    d.extend([0, 0, 60, 7, 44, 1, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    d.extend([0; 24]);
    d.extend([8, 3, 0x40, 2, 13, 13, 13]);
    v.push(seed("rmpp_receiver", "inject_and_corrupt", d));
    v
}

/// Every seed of every target.
pub fn all() -> Vec<Seed> {
    let mut v = mpa_framer();
    v.extend(mpa_negotiate());
    v.extend(ddp_rdmap());
    v.extend(rmpp());
    v.extend(vmtp());
    v
}

/// VMTP transactions (see `vmtp_engine::check` for the operations).
fn vmtp() -> Vec<Seed> {
    let mut v = Vec::new();
    // Two transactions (1 KiB / 3 KiB and 5000 B / 100 B), everything
    // delivered in order, the server answering; MTU 1500.
    let mut d = vec![2u8];
    d.extend([0, 0, 0x04, 0x00, 0x0c, 0x00, 0, 1, 0x13, 0x88, 0x00, 0x64]);
    d.extend([1; 12]);
    d.extend([10]);
    d.extend([2; 12]);
    d.extend([9, 10, 1, 2, 2, 1, 9, 40]);
    v.push(seed("vmtp_engine", "two_transactions", d));
    // A 16 KiB Request with packets lost, duplicated and reordered, then
    // timeouts (the server asks for the missing blocks).
    let mut d = vec![2u8];
    d.extend([
        0, 0, 0x40, 0x00, 0x00, 0x10, 3, 5, 6, 1, 3, 1, 1, 6, 1, 1, 1,
    ]);
    d.extend([9, 20, 2, 1, 1, 1, 1, 9, 40, 10, 2, 2, 2, 2, 9, 80, 2, 2]);
    v.push(seed("vmtp_engine", "loss_and_retries", d));
    // Corruption, an injected packet, a client closed mid-transaction.
    let mut d = vec![0x16u8];
    d.extend([0, 1, 0x08, 0x00, 0x08, 0x00, 7, 0, 0, 80, 0x20, 1, 8, 0, 64]);
    d.extend([0x55; 64]);
    d.extend([
        1, 11, 1, 0, 1, 0, 0x01, 0x00, 0, 0x10, 1, 1, 10, 2, 2, 9, 200,
    ]);
    v.push(seed("vmtp_engine", "corrupt_inject_close", d));
    v
}
