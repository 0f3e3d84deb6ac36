// SPDX-License-Identifier: GPL-2.0
//! `ddp_rdmap`: DDP/RDMAP header parsing and the RDMAP receive engine's validation
//! with a toy verbs layer.
//!
//! Input: IRD, ORD and receive-buffer sizes, then records: `[op: u8]` followed by
//! either a segment (`ulpdu_len: u16, payload_len: u16, n: u8, n header bytes`) or a
//! local RDMA Read to post (`stag: u32, to: u64, len: u16`).
//!
//! Invariants: a header that parses re-emits and re-parses to itself, and the
//! TERMINATE the engine builds for any failure is itself a valid header; every
//! placement lies inside memory the verbs layer approved (tagged Write), inside an
//! outstanding Read's sink (Read Response), or inside the posted receive buffer
//! (untagged); inbound Reads never exceed IRD and outbound never exceed ORD; a Read
//! completes with the length it was posted with; after a failure or TERMINATE the
//! engine accepts nothing.

use std::collections::VecDeque;

use srnic_proto::ddp::{Ctrl, DdpHeader, Placement};
use srnic_proto::rdmap::engine::{Access, Completion, EngineError, RecvEngine, RxAction, Verbs};
use srnic_proto::rdmap::reads::{OrqEntry, Reads};
use srnic_proto::rdmap::{self, Body, Header, StagError, MAX_HDR_LEN};

use super::mpa_framer::assert_header_round_trip;
use super::util::Input;

/// One memory region of the toy verbs layer.
struct Region {
    stag: u32,
    base: u64,
    len: u64,
    write: bool,
    read: bool,
    pd_ok: bool,
}

const REGIONS: [Region; 3] = [
    Region {
        stag: 0x100,
        base: 0x1000,
        len: 0x1000,
        write: true,
        read: true,
        pd_ok: true,
    },
    Region {
        stag: 0x200,
        base: 0,
        len: 0x100,
        write: false,
        read: true,
        pd_ok: true,
    },
    Region {
        stag: 0x300,
        base: 0xFFFF_FFFF_FFFF_FF00,
        len: 0xFF,
        write: true,
        read: true,
        pd_ok: false,
    },
];

/// Toy verbs layer: fixed regions, a queue of receive-buffer lengths and the
/// Reads.
struct Toy {
    recvs: VecDeque<u32>,
    reads: Reads<[OrqEntry; 4]>,
}

impl Verbs for Toy {
    fn check_stag(
        &mut self,
        stag: u32,
        to: u64,
        len: u32,
        access: Access,
    ) -> Result<(), StagError> {
        toy_check(stag, to, len, access)
    }

    fn recv_buffer_len(&mut self) -> Option<u32> {
        self.recvs.front().copied()
    }

    type Orq = [OrqEntry; 4];

    fn reads<R>(&mut self, f: impl FnOnce(&mut Reads<Self::Orq>) -> R) -> R {
        f(&mut self.reads)
    }
}

fn toy_check(stag: u32, to: u64, len: u32, access: Access) -> Result<(), StagError> {
    let r = REGIONS
        .iter()
        .find(|r| r.stag == stag)
        .ok_or(StagError::InvalidStag)?;
    if !r.pd_ok {
        return Err(StagError::PdMismatch);
    }
    let ok = match access {
        Access::RemoteWrite => r.write,
        Access::RemoteRead => r.read,
    };
    if !ok {
        return Err(StagError::AccessRights);
    }
    let end = to.checked_add(u64::from(len)).ok_or(StagError::ToWrap)?;
    if to < r.base || end > r.base + r.len {
        return Err(StagError::BaseBounds);
    }
    Ok(())
}

/// Asserts the TERMINATE carried by an engine error is a well-formed header.
fn check_terminate(e: &EngineError) {
    let EngineError::Terminate(code, t) = e else {
        return;
    };
    let (l, ty, c) = code.code();
    assert_eq!((t.layer, t.etype, t.ecode), (l, ty, c), "TERMINATE code");
    assert!(usize::from(t.attached_len) <= rdmap::MAX_ATTACHED_LEN);
    assert_eq!(
        t.flag_d,
        t.attached_len > 0,
        "D flag iff a header is attached"
    );
    let h = Header {
        last: true,
        body: Body::Terminate {
            msn: 1,
            mo: 0,
            term: *t,
        },
    };
    let mut buf = [0u8; MAX_HDR_LEN];
    let n = h.emit(&mut buf).expect("TERMINATE fits");
    assert_header_round_trip(&h, n as u16);
}

/// The fuzz entry point.
pub fn check(data: &[u8]) {
    let mut inp = Input::new(data);
    let b0 = inp.u8();
    let ird = u16::from(b0 % 5);
    let ord = u16::from(inp.u8() % 5);
    let nbufs = inp.u8() % 6;
    let mut toy = Toy {
        recvs: (0..nbufs).map(|_| u32::from(inp.u16() % 4096)).collect(),
        reads: Reads::new(ird, ord, [OrqEntry::default(); 4]),
    };
    let mut eng = RecvEngine::new();
    if b0 & 0x80 != 0 {
        eng.expect_rtr();
    }
    let mut posted: VecDeque<OrqEntry> = VecDeque::new();
    let mut pending_in = 0u16;
    let mut steps = 0;
    while !inp.is_empty() && steps < 256 {
        steps += 1;
        let op = inp.u8();
        if op & 0x80 != 0 {
            // Post a local Read.
            let e = OrqEntry {
                sink_stag: inp.u32(),
                sink_to: inp.u64(),
                len: u32::from(inp.u16()),
                cookie: u64::from(op),
            };
            let before = toy.reads.reads_out();
            match toy.reads.post_read(e) {
                Ok(()) => {
                    posted.push_back(e);
                    assert_eq!(toy.reads.reads_out(), before + 1);
                }
                Err(_) => assert_eq!(toy.reads.reads_out(), before),
            }
            assert!(
                toy.reads.reads_out() <= usize::from(ord).min(4),
                "ORD exceeded"
            );
            continue;
        }
        if op & 0x40 != 0 && pending_in > 0 {
            toy.reads.read_response_started();
            pending_in -= 1;
        }
        let ulpdu_len = inp.u16();
        let payload_len = u32::from(inp.u16());
        let n = usize::from(inp.u8()) % (MAX_HDR_LEN + 8);
        let bytes = inp.take(n);
        if let Some(c) = Ctrl::parse(bytes) {
            // Never panics; the result must agree with the full parse below.
            let _ = rdmap::header_len(c);
            if let Some(d) = DdpHeader::parse(c, bytes) {
                let mut b = [0u8; 32];
                let len = d.emit(c, &mut b).expect("fits");
                assert_eq!(DdpHeader::parse(c, &b[..len]), Some(d));
            }
        }
        let Ok(hdr) = Header::parse(bytes, ulpdu_len) else {
            continue;
        };
        assert_header_round_trip(&hdr, ulpdu_len);
        let was_closed = eng.is_closed();
        match eng.on_header(&mut toy, &hdr, ulpdu_len, payload_len) {
            Err(e) => {
                if was_closed {
                    assert_eq!(e, EngineError::Closed);
                }
                check_terminate(&e);
                assert!(eng.is_closed(), "engine open after an error");
                assert_eq!(eng.on_end(&mut toy), Err(EngineError::Closed));
                continue;
            }
            Ok(action) => {
                assert!(!was_closed, "closed engine accepted a segment");
                check_action(&action, &hdr, payload_len, &toy, &posted);
            }
        }
        if op & 1 == 0 {
            // The FPDU's CRC verified: end the segment.
            match eng.on_end(&mut toy) {
                Ok(Some(c)) => complete(c, &hdr, &mut toy, &mut posted, &mut pending_in, &eng),
                Ok(None) => {}
                Err(e) => panic!("on_end failed on an open engine: {e:?}"),
            }
        }
        assert!(toy.reads.reads_in() <= ird, "IRD exceeded");
        assert_eq!(toy.reads.reads_in(), pending_in, "inbound Read count");
        assert!(toy.reads.reads_out() <= posted.len());
    }
}

fn check_action(a: &RxAction, hdr: &Header, len: u32, toy: &Toy, posted: &VecDeque<OrqEntry>) {
    let RxAction::Place(p) = a else { return };
    match (*p, hdr.body) {
        (Placement::Tagged { stag, to, len: l }, Body::Write { .. }) => {
            assert_eq!(l, len);
            assert!(l > 0);
            toy_check(stag, to, l, Access::RemoteWrite).expect("placement approved");
        }
        (Placement::Tagged { stag, to, len: l }, Body::ReadResponse { .. }) => {
            assert_eq!(l, len);
            let e = posted.front().expect("Read Response without a posted Read");
            assert_eq!(stag, e.sink_stag);
            let end = to.checked_add(u64::from(l)).expect("no wrap");
            assert!(to >= e.sink_to && end <= e.sink_to + u64::from(e.len));
        }
        (Placement::Untagged { mo, len: l, qn, .. }, Body::Send { .. }) => {
            assert_eq!(l, len);
            assert_eq!(qn, 0);
            let buf = toy
                .recvs
                .front()
                .expect("untagged placement without a buffer");
            assert!(
                u64::from(mo) + u64::from(l) <= u64::from(*buf),
                "receive overrun"
            );
        }
        other => panic!("placement for the wrong message type: {other:?}"),
    }
}

fn complete(
    c: Completion,
    h: &Header,
    toy: &mut Toy,
    posted: &mut VecDeque<OrqEntry>,
    pending_in: &mut u16,
    eng: &RecvEngine,
) {
    match c {
        Completion::Recv { len, .. } => {
            let buf = toy.recvs.pop_front().expect("completion without a buffer");
            assert!(len <= buf, "receive longer than its buffer");
            assert!(matches!(h.body, Body::Send { .. }));
        }
        Completion::ReadDone { cookie, len } => {
            let e = posted.pop_front().expect("Read completion without a Read");
            assert_eq!((cookie, len), (e.cookie, e.len));
        }
        Completion::ReadRequest { req, .. } => {
            assert!(matches!(h.body, Body::ReadRequest { req: r, .. } if r == req));
            *pending_in += 1;
        }
        Completion::Rtr => {}
        Completion::Terminated(_) => {
            assert!(eng.is_closed());
        }
    }
}
