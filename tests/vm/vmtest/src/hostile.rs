// SPDX-License-Identifier: GPL-2.0
//! `hostile`: a hostile iWARP peer. The client speaks MPA, DDP and RDMAP itself
//! over a plain TCP socket and, case by case from the one table [`CASES`],
//! sends srnic (the server) frames that break the protocol: MPA garbage, bad
//! ULPDU lengths, wrong versions, unknown opcodes, tagged accesses outside the
//! region, Read Requests beyond IRD, unexpected Read Responses, bad Sends, CRC
//! errors, a TERMINATE with garbage, half an FPDU, FPDUs pipelined behind the
//! MPA Request. Then it reads what srnic sends back until the connection
//! closes and checks it against the table:
//! - where the RFCs want a TERMINATE: exactly one, the last thing srnic sends,
//!   decoded by hand from RFC 5040 section 4.8 and checked field by field
//!   (layer, error type, error code, reserved bits, the Hdrct bits, and the
//!   copied DDP segment length, DDP header and RDMAP header against the bytes
//!   of the offending frame), then the close;
//! - where they want only the close (MPA start-up errors, a TERMINATE or a
//!   close received): the close, and no TERMINATE.
//!
//! The expected values are written from the RFC text (RFC 5040 section 4.8,
//! RFC 5041 section 7, RFC 5044 sections 7.1 and 8), one RFC citation per row,
//! not from srnic's own TERMINATE table. Where srnic follows siw instead of
//! the RFC, the row says so and names both values; the check accepts the siw
//! value only for those rows.
//!
//! The server runs a real srnic program: it accepts one QP per case, with
//! receives of [`RECV_LEN`] bytes posted (none where the case needs none),
//! and reports per case the QP's event, its TERMINATE word and state, and
//! whether the target region is unchanged; for the MPA start-up cases it
//! reports whether a connection request reached the program. Between the
//! cases a bystander QP (an ordinary srnic client on VM a) writes and reads
//! back verified data, proving the other connections keep working.
//!
//! With `--runs FILE` the client writes one line per case for the host's
//! tshark check (tests/vm/host/hostile_peer.sh): its TCP port and what srnic
//! must have sent.

use crate::stall::mpa_initiate;
use crate::util::{
    accept_qp, connect_qp, err, event_after_established, fill, mismatch, mr_from_str, mr_to_str,
    params, qp_attr, reg_remote, Checks, Ctl, Res, Waiter,
};
use crate::Env;
use srnic::{
    AccessFlags, Context, EventKind, Listener, MrBuffer, QpState, QueuePair, RecvWr, RemoteMr,
    SendWr,
};
use srnic_proto::{
    crc::{finish, to_wire, Crc32c, SoftCrc32c, CRC32C_INIT},
    mpa::negotiate::MpaConfig,
};
use std::fmt::Write as _;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// The receive buffers the server posts for each case.
const RECV_LEN: u32 = 256;
/// How many the server posts.
const RECVS: u64 = 2;
/// The target region of the tagged cases (never legitimately written).
const TARGET_LEN: usize = 64 << 10;
const SEED_TARGET: u64 = 0x7A;
/// The bystander's region and transfer size.
const BY_LEN: usize = 16 << 10;
/// Bytes of every abusive access and Send.
const ACCESS: u32 = 64;
/// The sink STag a Read Request names (the hostile peer registers nothing).
const SINK_STAG: u32 = 0x0100;
/// How long a case may take to close after its last frame. The close comes
/// at once; the bound covers a slow (TCG, debug kernel) guest.
const CLOSE_BOUND: Duration = Duration::from_secs(15);

// ---- The wire, from the RFCs ----

/// DDP control word (RFC 5041 section 4.2, RFC 5040 section 4.2): T, L,
/// reserved, DDP version (2 bits), RDMAP version (2 bits), reserved, opcode.
mod ctrl {
    pub const T: u16 = 0x8000;
    pub const L: u16 = 0x4000;
    pub const DV_SHIFT: u16 = 8;
    pub const RV_SHIFT: u16 = 6;
    pub const OPCODE: u16 = 0x000F;
    /// The versions RFC 5041 section 4.2 and RFC 5040 section 4.2 define.
    pub const DDP_VERSION: u16 = 1;
    pub const RDMAP_VERSION: u16 = 1;
}

/// RDMAP opcodes (RFC 5040 section 4.3).
mod op {
    pub const WRITE: u16 = 0;
    pub const READ_REQUEST: u16 = 1;
    pub const READ_RESPONSE: u16 = 2;
    pub const SEND: u16 = 3;
    pub const TERMINATE: u16 = 7;
    /// Reserved: not defined by RFC 5040 nor by its extensions (RFC 7306
    /// takes 0x8 to 0xB).
    pub const RESERVED: u16 = 0xF;
}

/// Untagged queues (RFC 5040 section 4.1 "RDMAP uses three queues").
mod qn {
    pub const SEND: u32 = 0;
    pub const READ_REQUEST: u32 = 1;
    pub const TERMINATE: u32 = 2;
}

/// DDP header lengths with the control word (RFC 5041 sections 4.3, 4.4).
const TAGGED_HDR: usize = 14;
const UNTAGGED_HDR: usize = 18;
/// The RDMA Read Request fields after the untagged header (RFC 5040
/// section 4.4): sink STag, sink TO, size, source STag, source TO.
const READ_REQUEST_FIELDS: usize = 28;
/// The Terminate Control word (RFC 5040 section 4.8).
const TERM_CTRL: usize = 4;
/// The DDP Segment Length field of a TERMINATE (RFC 5040 section 4.8).
const TERM_SEGLEN: usize = 2;

/// TERMINATE layers, error types and codes: RFC 5040 section 4.8 (the layer
/// and the RDMAP codes), RFC 5041 section 7.2 (DDP), RFC 5044 section 8 with
/// RFC 6580's registry (LLP/MPA).
mod term {
    pub const LAYER_RDMAP: u8 = 0x0;
    pub const LAYER_DDP: u8 = 0x1;
    pub const LAYER_LLP: u8 = 0x2;
    pub const RDMAP_PROTECTION: u8 = 0x1;
    pub const RDMAP_OPERATION: u8 = 0x2;
    pub const DDP_CATASTROPHIC: u8 = 0x0;
    pub const DDP_TAGGED: u8 = 0x1;
    pub const DDP_UNTAGGED: u8 = 0x2;
    pub const LLP_MPA: u8 = 0x0;
    pub const M: u32 = 0x8000;
    pub const D: u32 = 0x4000;
    pub const R: u32 = 0x2000;
    pub const RESERVED: u32 = 0x1FFF;
}

/// One TERMINATE error: layer, error type, error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Code(u8, u8, u8);

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}/{:#x}/{:#04x}", self.0, self.1, self.2)
    }
}

use term::*;
const LLP_CRC: Code = Code(LAYER_LLP, LLP_MPA, 0x02);
const LLP_FRAMING: Code = Code(LAYER_LLP, LLP_MPA, 0x03);
const DDP_CATASTROPHIC_ERR: Code = Code(LAYER_DDP, DDP_CATASTROPHIC, 0x00);
const T_INVALID_STAG: Code = Code(LAYER_DDP, DDP_TAGGED, 0x00);
const T_BOUNDS: Code = Code(LAYER_DDP, DDP_TAGGED, 0x01);
const T_WRAP: Code = Code(LAYER_DDP, DDP_TAGGED, 0x03);
const T_VERSION: Code = Code(LAYER_DDP, DDP_TAGGED, 0x04);
const U_QN: Code = Code(LAYER_DDP, DDP_UNTAGGED, 0x01);
const U_NO_BUFFER: Code = Code(LAYER_DDP, DDP_UNTAGGED, 0x02);
const U_MSN: Code = Code(LAYER_DDP, DDP_UNTAGGED, 0x03);
const U_MO: Code = Code(LAYER_DDP, DDP_UNTAGGED, 0x04);
const U_TOO_LONG: Code = Code(LAYER_DDP, DDP_UNTAGGED, 0x05);
const U_VERSION: Code = Code(LAYER_DDP, DDP_UNTAGGED, 0x06);
const P_INVALID_STAG: Code = Code(LAYER_RDMAP, RDMAP_PROTECTION, 0x00);
const P_BOUNDS: Code = Code(LAYER_RDMAP, RDMAP_PROTECTION, 0x01);
const P_WRAP: Code = Code(LAYER_RDMAP, RDMAP_PROTECTION, 0x04);
const O_VERSION: Code = Code(LAYER_RDMAP, RDMAP_OPERATION, 0x05);
const O_OPCODE: Code = Code(LAYER_RDMAP, RDMAP_OPERATION, 0x06);
const O_CATASTROPHIC_STREAM: Code = Code(LAYER_RDMAP, RDMAP_OPERATION, 0x07);

/// Which offending header the TERMINATE must copy (RFC 5040 section 4.8,
/// Hdrct: M the DDP Segment Length, D the DDP header, R the RDMAP header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hdr {
    /// The RFC does not require one (an LLP error, or a header whose layout
    /// is unknown: wrong version, unknown opcode). A header that is copied
    /// must still be the offending one.
    Any,
    /// M and D: the segment length and DDP header of the offending segment.
    Ddp,
    /// M, D and R: also the RDMAP header (the Read Request's fields).
    DdpRdmap,
}

/// What srnic must answer.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// One TERMINATE with this code and header copy, then the close.
    Term(Code, Hdr),
    /// Like `Term`, but srnic follows siw: the RFC's code is the first, siw's
    /// (accepted) the second.
    TermAsSiw(Code, Code, Hdr),
    /// The close without a byte: an MPA start-up error (no FPDU framing yet).
    Close,
    /// The close without a TERMINATE (the FPDU framing stands, but the RFCs
    /// want no TERMINATE).
    CloseNoTerm,
}

/// How the case starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// No MPA start-up: the abuse is the start-up.
    Raw,
    /// MPA Request and Reply of this revision (1: RFC 5044, 2: RFC 6581),
    /// CRC asked for or not, then the abuse as FPDUs.
    Mpa { rev: u8, crc: bool },
}

/// What the abuse needs to know of the server.
struct Target {
    mr: RemoteMr,
}

/// The bytes to send, and the offending FPDU's ULPDU (DDP segment) whose
/// header a TERMINATE must copy.
struct Abuse {
    bytes: Vec<u8>,
    offending: Option<Vec<u8>>,
    /// Close our sending side after the bytes.
    shutdown: bool,
}

/// One row of the table.
struct Case {
    name: &'static str,
    start: Start,
    /// The peer's ORD in the MPA Request (srnic's IRD is at most this).
    ord: u16,
    /// The server posts its receives.
    recv: bool,
    build: fn(&Target, bool) -> Abuse,
    want: Want,
    /// Where the RFCs say so.
    rfc: &'static str,
}

const REV2: Start = Start::Mpa { rev: 2, crc: false };
const REV1: Start = Start::Mpa { rev: 1, crc: false };
const REV2_CRC: Start = Start::Mpa { rev: 2, crc: true };
const ORD: u16 = 8;

/// The table: every class of abuse of issue 13 item 3, one or more rows each.
const CASES: &[Case] = &[
    Case {
        name: "mpa-garbage",
        start: Start::Raw,
        ord: ORD,
        recv: true,
        build: ab_garbage,
        want: Want::Close,
        rfc: "RFC 5044 7.1 (start-up: a frame that is no valid MPA Request closes the connection; no FPDU framing, so no TERMINATE)",
    },
    Case {
        name: "mpa-pd-too-long",
        start: Start::Raw,
        ord: ORD,
        recv: true,
        build: ab_pd_too_long,
        want: Want::Close,
        rfc: "RFC 5044 7.1 (PD_Length at most 512; an invalid MPA Request closes the connection)",
    },
    Case {
        name: "mpa-pipelined-fpdu",
        start: Start::Raw,
        ord: ORD,
        recv: true,
        build: ab_pipelined,
        want: Want::Close,
        rfc: "RFC 5044 7.1 (the Initiator sends no FPDU before it has the MPA Reply; a start-up that breaks the rules closes the connection, as siw)",
    },
    Case {
        name: "crc-error",
        start: REV2_CRC,
        ord: ORD,
        recv: true,
        build: ab_crc,
        want: Want::Term(LLP_CRC, Hdr::Any),
        rfc: "RFC 5044 8 (MPA CRC mismatch: LLP error 0x02)",
    },
    Case {
        name: "ulpdu-length-zero",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_ulpdu_zero,
        want: Want::Term(LLP_FRAMING, Hdr::Any),
        rfc: "RFC 5044 8 (the ULPDU Length does not delimit a DDP segment: MPA framing error 0x03; RFC 5041 4.2 has no DDP header shorter than 14 bytes)",
    },
    Case {
        name: "ulpdu-length-oversized",
        start: REV2_CRC,
        ord: ORD,
        recv: true,
        build: ab_ulpdu_oversized,
        want: Want::Term(LLP_CRC, Hdr::Any),
        rfc: "RFC 5044 4.1, 8 (a ULPDU Length longer than the FPDU puts the CRC elsewhere: CRC error 0x02)",
    },
    Case {
        name: "ddp-version-tagged",
        start: REV1,
        ord: ORD,
        recv: true,
        build: ab_ddp_version_tagged,
        want: Want::Term(T_VERSION, Hdr::Any),
        rfc: "RFC 5041 4.2, 7.2 (tagged buffer error 0x04, invalid DDP version)",
    },
    Case {
        name: "ddp-version-untagged",
        start: REV1,
        ord: ORD,
        recv: true,
        build: ab_ddp_version_untagged,
        want: Want::Term(U_VERSION, Hdr::Any),
        rfc: "RFC 5041 4.2, 7.2 (untagged buffer error 0x06, invalid DDP version)",
    },
    Case {
        name: "rdmap-version",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_rdmap_version,
        want: Want::Term(O_VERSION, Hdr::Any),
        rfc: "RFC 5040 4.2, 4.8 (remote operation error 0x05, invalid RDMAP version)",
    },
    Case {
        name: "unknown-opcode",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_unknown_opcode,
        want: Want::Term(O_OPCODE, Hdr::Any),
        rfc: "RFC 5040 4.3, 4.8 (remote operation error 0x06, unexpected opcode)",
    },
    Case {
        name: "write-beyond-end",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_write_beyond_end,
        want: Want::Term(T_BOUNDS, Hdr::Ddp),
        rfc: "RFC 5041 7.1, 7.2 (TO plus length outside the region: tagged buffer error 0x01)",
    },
    Case {
        name: "write-before-start",
        start: REV1,
        ord: ORD,
        recv: true,
        build: ab_write_before_start,
        want: Want::Term(T_BOUNDS, Hdr::Ddp),
        rfc: "RFC 5041 7.1, 7.2 (TO below the region: tagged buffer error 0x01)",
    },
    Case {
        name: "write-to-wraps",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_write_wrap,
        want: Want::Term(T_WRAP, Hdr::Ddp),
        rfc: "RFC 5041 7.1, 7.2 (the 64-bit sum of TO and length wraps: tagged buffer error 0x03)",
    },
    Case {
        name: "write-wrong-stag-key",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_write_wrong_key,
        want: Want::Term(T_INVALID_STAG, Hdr::Ddp),
        rfc: "RFC 5041 7.1, 7.2 (STag not valid: tagged buffer error 0x00)",
    },
    Case {
        name: "read-beyond-end",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_read_beyond_end,
        want: Want::Term(P_BOUNDS, Hdr::DdpRdmap),
        rfc: "RFC 5040 4.8 (Read Request source outside the region: remote protection error 0x01, the Read Request header copied)",
    },
    Case {
        name: "read-before-start",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_read_before_start,
        want: Want::Term(P_BOUNDS, Hdr::DdpRdmap),
        rfc: "RFC 5040 4.8 (remote protection error 0x01)",
    },
    Case {
        name: "read-to-wraps",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_read_wrap,
        want: Want::Term(P_WRAP, Hdr::DdpRdmap),
        rfc: "RFC 5040 4.8 (source TO plus size wraps: remote protection error 0x04)",
    },
    Case {
        name: "read-wrong-stag-key",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_read_wrong_key,
        want: Want::Term(P_INVALID_STAG, Hdr::DdpRdmap),
        rfc: "RFC 5040 4.8 (remote protection error 0x00, invalid STag)",
    },
    Case {
        name: "read-huge-length",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_read_huge,
        want: Want::Term(P_BOUNDS, Hdr::DdpRdmap),
        rfc: "RFC 5040 4.8 (a 4 GiB read of a 64 KiB region: remote protection error 0x01)",
    },
    Case {
        name: "read-beyond-ird",
        start: REV2,
        ord: 1,
        recv: true,
        build: ab_read_beyond_ird,
        want: Want::Term(O_CATASTROPHIC_STREAM, Hdr::Any),
        rfc: "RFC 6581 3.2 (IRD 1 negotiated), RFC 5040 4.8 (no dedicated code: remote operation error 0x07, catastrophic, localized to the stream)",
    },
    Case {
        name: "unexpected-read-response",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_unexpected_read_response,
        want: Want::TermAsSiw(O_OPCODE, DDP_CATASTROPHIC_ERR, Hdr::Any),
        rfc: "RFC 5040 4.8 (no dedicated code; closest: remote operation error 0x06, unexpected opcode; siw: DDP catastrophic 0x00)",
    },
    Case {
        name: "send-bad-qn",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_send_bad_qn,
        want: Want::Term(U_QN, Hdr::Ddp),
        rfc: "RFC 5041 7.1, 7.2 (untagged buffer error 0x01, invalid QN)",
    },
    Case {
        name: "send-on-read-queue",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_send_on_read_queue,
        want: Want::Term(U_QN, Hdr::Ddp),
        rfc: "RFC 5040 4.1 (Sends use queue 0), RFC 5041 7.2 (untagged buffer error 0x01, invalid QN)",
    },
    Case {
        name: "send-bad-msn",
        start: REV1,
        ord: ORD,
        recv: true,
        build: ab_send_bad_msn,
        want: Want::Term(U_MSN, Hdr::Ddp),
        rfc: "RFC 5041 5.3, 7.2 (MSN 2 where 1 is due: untagged buffer error 0x03)",
    },
    Case {
        name: "send-bad-mo",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_send_bad_mo,
        want: Want::Term(U_MO, Hdr::Ddp),
        rfc: "RFC 5041 7.1, 7.2 (a new message at MO 8: untagged buffer error 0x04)",
    },
    Case {
        name: "send-too-long",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_send_too_long,
        want: Want::TermAsSiw(U_TOO_LONG, U_NO_BUFFER, Hdr::Ddp),
        rfc: "RFC 5041 7.2 (untagged buffer error 0x05, message too long for the buffer; siw: 0x02)",
    },
    Case {
        name: "send-no-buffer",
        start: REV2,
        ord: ORD,
        recv: false,
        build: ab_send_plain,
        want: Want::Term(U_NO_BUFFER, Hdr::Ddp),
        rfc: "RFC 5041 7.1, 7.2 (no buffer posted: untagged buffer error 0x02)",
    },
    Case {
        name: "terminate-garbage",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_terminate_garbage,
        want: Want::CloseNoTerm,
        rfc: "RFC 5040 6.2 (a received TERMINATE ends the stream; it is not answered with another)",
    },
    Case {
        name: "half-fpdu-then-close",
        start: REV2,
        ord: ORD,
        recv: true,
        build: ab_half_fpdu,
        want: Want::CloseNoTerm,
        rfc: "RFC 5044 8 (the TCP stream ended inside an FPDU: LLP error 0x01, reported locally)",
    },
];

// ---- Building frames (RFC 5041 section 4, RFC 5044 section 4.1) ----

fn ctrl_word(tagged: bool, last: bool, dv: u16, rv: u16, opcode: u16) -> u16 {
    let mut w = (dv & 3) << ctrl::DV_SHIFT | (rv & 3) << ctrl::RV_SHIFT | (opcode & ctrl::OPCODE);
    if tagged {
        w |= ctrl::T;
    }
    if last {
        w |= ctrl::L;
    }
    w
}

/// A tagged DDP header (RFC 5041 section 4.3).
fn tagged(opcode: u16, stag: u32, to: u64) -> Vec<u8> {
    let mut h = ctrl_word(true, true, ctrl::DDP_VERSION, ctrl::RDMAP_VERSION, opcode)
        .to_be_bytes()
        .to_vec();
    h.extend(stag.to_be_bytes());
    h.extend(to.to_be_bytes());
    h
}

/// An untagged DDP header (RFC 5041 section 4.4), the RDMAP word zero.
fn untagged(opcode: u16, qn: u32, msn: u32, mo: u32) -> Vec<u8> {
    let mut h = ctrl_word(false, true, ctrl::DDP_VERSION, ctrl::RDMAP_VERSION, opcode)
        .to_be_bytes()
        .to_vec();
    h.extend(0u32.to_be_bytes());
    h.extend(qn.to_be_bytes());
    h.extend(msn.to_be_bytes());
    h.extend(mo.to_be_bytes());
    h
}

/// An RDMA Read Request (RFC 5040 section 4.4) for `size` bytes at `to` of
/// `stag`, MSN `msn`.
fn read_request(msn: u32, stag: u32, to: u64, size: u32) -> Vec<u8> {
    let mut h = untagged(op::READ_REQUEST, qn::READ_REQUEST, msn, 0);
    h.extend(SINK_STAG.to_be_bytes());
    h.extend(0u64.to_be_bytes());
    h.extend(size.to_be_bytes());
    h.extend(stag.to_be_bytes());
    h.extend(to.to_be_bytes());
    h
}

/// Pad after a ULPDU of `len` bytes: the FPDU is a multiple of 4 (RFC 5044
/// section 4.1).
fn pad(len: usize) -> usize {
    (4 - (len + 2) % 4) % 4
}

/// An FPDU whose length field says `len_field` around `ulpdu` (RFC 5044
/// section 4.1): length, ULPDU, pad, and the CRC32c over all of them when
/// `crc` (else zero).
fn fpdu_with_len(len_field: u16, ulpdu: &[u8], crc: bool) -> Vec<u8> {
    let mut f = len_field.to_be_bytes().to_vec();
    f.extend(ulpdu);
    f.resize(f.len() + pad(ulpdu.len()), 0);
    let c = if crc {
        to_wire(finish(SoftCrc32c.update(CRC32C_INIT, &f)))
    } else {
        [0; 4]
    };
    f.extend(c);
    f
}

fn fpdu(ulpdu: &[u8], crc: bool) -> Vec<u8> {
    fpdu_with_len(ulpdu.len() as u16, ulpdu, crc)
}

fn with_payload(mut hdr: Vec<u8>, n: u32) -> Vec<u8> {
    hdr.extend((0..n).map(|i| i as u8));
    hdr
}

fn one(ulpdu: Vec<u8>, crc: bool) -> Abuse {
    Abuse {
        bytes: fpdu(&ulpdu, crc),
        offending: Some(ulpdu),
        shutdown: false,
    }
}

/// A valid Send of ACCESS bytes, MSN 1.
fn send_ulpdu() -> Vec<u8> {
    with_payload(untagged(op::SEND, qn::SEND, 1, 0), ACCESS)
}

/// A valid RDMA Write of ACCESS bytes at `to` of the target.
fn write_ulpdu(t: &Target, to: u64) -> Vec<u8> {
    with_payload(tagged(op::WRITE, t.mr.rkey, to), ACCESS)
}

/// The MPA Request an RFC 6581 initiator sends (RFC 5044 section 7.1, RFC
/// 6581 section 3.2): key, revision 2 with the Enhanced bit, IRD/ORD block.
fn mpa_request_rev2() -> Vec<u8> {
    let mut f = b"MPA ID Req Frame".to_vec();
    f.extend(0x1002u16.to_be_bytes());
    f.extend(4u16.to_be_bytes());
    f.extend(8u16.to_be_bytes());
    f.extend(ORD.to_be_bytes());
    f
}

fn ab_garbage(_: &Target, _: bool) -> Abuse {
    Abuse {
        bytes: b"GET / HTTP/1.1\r\nHost: srnic\r\n\r\n".to_vec(),
        offending: None,
        shutdown: false,
    }
}

fn ab_pd_too_long(_: &Target, _: bool) -> Abuse {
    let mut f = b"MPA ID Req Frame".to_vec();
    f.extend(0x0001u16.to_be_bytes());
    f.extend(u16::MAX.to_be_bytes());
    f.extend([0u8; 64]);
    Abuse {
        bytes: f,
        offending: None,
        shutdown: false,
    }
}

fn ab_pipelined(_: &Target, _: bool) -> Abuse {
    let mut f = mpa_request_rev2();
    f.extend(fpdu(&send_ulpdu(), false));
    Abuse {
        bytes: f,
        offending: None,
        shutdown: false,
    }
}

fn ab_crc(_: &Target, crc: bool) -> Abuse {
    let mut a = one(send_ulpdu(), crc);
    if let Some(b) = a.bytes.last_mut() {
        *b ^= 0x5A;
    }
    a
}

fn ab_ulpdu_zero(_: &Target, crc: bool) -> Abuse {
    Abuse {
        bytes: fpdu_with_len(0, &[], crc),
        offending: None,
        shutdown: false,
    }
}

fn ab_ulpdu_oversized(_: &Target, crc: bool) -> Abuse {
    // The first FPDU's length claims 64 bytes more than it carries; a second,
    // valid FPDU supplies them, so the receiver finds its CRC inside it.
    let u = send_ulpdu();
    let mut bytes = fpdu_with_len(u.len() as u16 + 64, &u, crc);
    bytes.extend(fpdu(
        &with_payload(untagged(op::SEND, qn::SEND, 2, 0), 96),
        crc,
    ));
    Abuse {
        bytes,
        offending: Some(u),
        shutdown: false,
    }
}

fn ab_ddp_version_tagged(t: &Target, crc: bool) -> Abuse {
    let mut u = write_ulpdu(t, t.mr.addr);
    let w = ctrl_word(true, true, 2, ctrl::RDMAP_VERSION, op::WRITE);
    u[..2].copy_from_slice(&w.to_be_bytes());
    one(u, crc)
}

fn ab_ddp_version_untagged(_: &Target, crc: bool) -> Abuse {
    let mut u = send_ulpdu();
    let w = ctrl_word(false, true, 0, ctrl::RDMAP_VERSION, op::SEND);
    u[..2].copy_from_slice(&w.to_be_bytes());
    one(u, crc)
}

fn ab_rdmap_version(_: &Target, crc: bool) -> Abuse {
    let mut u = send_ulpdu();
    let w = ctrl_word(false, true, ctrl::DDP_VERSION, 2, op::SEND);
    u[..2].copy_from_slice(&w.to_be_bytes());
    one(u, crc)
}

fn ab_unknown_opcode(_: &Target, crc: bool) -> Abuse {
    one(
        with_payload(untagged(op::RESERVED, qn::SEND, 1, 0), ACCESS),
        crc,
    )
}

fn ab_write_beyond_end(t: &Target, crc: bool) -> Abuse {
    one(
        write_ulpdu(t, t.mr.addr + t.mr.len - u64::from(ACCESS) / 2),
        crc,
    )
}

fn ab_write_before_start(t: &Target, crc: bool) -> Abuse {
    one(write_ulpdu(t, t.mr.addr - u64::from(ACCESS)), crc)
}

fn ab_write_wrap(t: &Target, crc: bool) -> Abuse {
    one(write_ulpdu(t, u64::MAX - u64::from(ACCESS) / 2 + 1), crc)
}

fn ab_write_wrong_key(t: &Target, crc: bool) -> Abuse {
    // The STag's low 8 bits are the consumer key (RFC 5040 section 2.1,
    // "STag"): same region, another key.
    let u = with_payload(tagged(op::WRITE, t.mr.rkey ^ 0x01, t.mr.addr), ACCESS);
    one(u, crc)
}

fn ab_read_beyond_end(t: &Target, crc: bool) -> Abuse {
    let to = t.mr.addr + t.mr.len - u64::from(ACCESS) / 2;
    one(read_request(1, t.mr.rkey, to, ACCESS), crc)
}

fn ab_read_before_start(t: &Target, crc: bool) -> Abuse {
    let to = t.mr.addr - u64::from(ACCESS);
    one(read_request(1, t.mr.rkey, to, ACCESS), crc)
}

fn ab_read_wrap(t: &Target, crc: bool) -> Abuse {
    let to = u64::MAX - u64::from(ACCESS) / 2 + 1;
    one(read_request(1, t.mr.rkey, to, ACCESS), crc)
}

fn ab_read_wrong_key(t: &Target, crc: bool) -> Abuse {
    one(read_request(1, t.mr.rkey ^ 0x01, t.mr.addr, ACCESS), crc)
}

fn ab_read_huge(t: &Target, crc: bool) -> Abuse {
    one(read_request(1, t.mr.rkey, t.mr.addr, u32::MAX - 15), crc)
}

fn ab_read_beyond_ird(t: &Target, crc: bool) -> Abuse {
    // Two valid requests in one segment with IRD 1: the second arrives
    // while the first is outstanding (its response is not sent yet).
    let second = read_request(2, t.mr.rkey, t.mr.addr, ACCESS);
    let mut bytes = fpdu(&read_request(1, t.mr.rkey, t.mr.addr, ACCESS), crc);
    bytes.extend(fpdu(&second, crc));
    Abuse {
        bytes,
        offending: Some(second),
        shutdown: false,
    }
}

fn ab_unexpected_read_response(t: &Target, crc: bool) -> Abuse {
    one(
        with_payload(tagged(op::READ_RESPONSE, t.mr.rkey, t.mr.addr), ACCESS),
        crc,
    )
}

fn ab_send_bad_qn(_: &Target, crc: bool) -> Abuse {
    one(with_payload(untagged(op::SEND, 3, 1, 0), ACCESS), crc)
}

fn ab_send_on_read_queue(_: &Target, crc: bool) -> Abuse {
    one(
        with_payload(untagged(op::SEND, qn::READ_REQUEST, 1, 0), ACCESS),
        crc,
    )
}

fn ab_send_bad_msn(_: &Target, crc: bool) -> Abuse {
    one(
        with_payload(untagged(op::SEND, qn::SEND, 2, 0), ACCESS),
        crc,
    )
}

fn ab_send_bad_mo(_: &Target, crc: bool) -> Abuse {
    one(
        with_payload(untagged(op::SEND, qn::SEND, 1, 8), ACCESS),
        crc,
    )
}

fn ab_send_too_long(_: &Target, crc: bool) -> Abuse {
    one(
        with_payload(untagged(op::SEND, qn::SEND, 1, 0), 2 * RECV_LEN),
        crc,
    )
}

fn ab_send_plain(_: &Target, crc: bool) -> Abuse {
    one(send_ulpdu(), crc)
}

fn ab_terminate_garbage(_: &Target, crc: bool) -> Abuse {
    // Every control bit set (layer 0xf, type 0xf, code 0xff, M, D, R and the
    // reserved bits) and 20 bytes that are no DDP header.
    let mut u = untagged(op::TERMINATE, qn::TERMINATE, 1, 0);
    u.extend(u32::MAX.to_be_bytes());
    u.extend([0xEE; 20]);
    Abuse {
        bytes: fpdu(&u, crc),
        offending: None,
        shutdown: false,
    }
}

fn ab_half_fpdu(_: &Target, crc: bool) -> Abuse {
    let mut f = fpdu(&send_ulpdu(), crc);
    f.truncate(f.len() / 2);
    Abuse {
        bytes: f,
        offending: None,
        shutdown: true,
    }
}

// ---- Reading srnic's answer ----

/// How the connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// FIN.
    Eof,
    /// RST.
    Reset,
    /// Still open at the bound.
    Open,
}

/// Everything srnic sends until the connection closes, at most `bound`.
fn read_to_close(s: &mut TcpStream, bound: Duration) -> Res<(Vec<u8>, End)> {
    let deadline = Instant::now() + bound;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok((got, End::Open));
        }
        s.set_read_timeout(Some(left))?;
        match s.read(&mut buf) {
            Ok(0) => return Ok((got, End::Eof)),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok((got, End::Reset)),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Splits the received bytes into ULPDUs (RFC 5044 section 4.1); with CRC
/// negotiated every CRC must match. Trailing bytes that are no whole FPDU
/// are an error.
fn split_fpdus(mut b: &[u8], crc: bool) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let len = usize::from(be16(b, 0).ok_or("a lone byte after the last FPDU")?);
        let total = 2 + len + pad(len) + 4;
        let Some(f) = b.get(..total) else {
            return Err(format!("{} bytes of an FPDU of {total}", b.len()));
        };
        let body = &f[..total - 4];
        if crc && to_wire(finish(SoftCrc32c.update(CRC32C_INIT, body))) != f[total - 4..] {
            return Err(format!("FPDU {} has a bad CRC", out.len()));
        }
        out.push(f[2..2 + len].to_vec());
        b = &b[total..];
    }
    Ok(out)
}

/// A TERMINATE as RFC 5040 section 4.8 lays it out.
#[derive(Debug)]
struct Terminate {
    code: Code,
    word: u32,
    /// DDP Segment Length (present with D).
    seglen: Option<u16>,
    ddp: Vec<u8>,
    rdmap: Vec<u8>,
}

/// The opcode of a ULPDU, if it has a control word.
fn opcode_of(u: &[u8]) -> Option<u16> {
    be16(u, 0).map(|w| w & ctrl::OPCODE)
}

/// Decodes a TERMINATE ULPDU: its DDP header (untagged, last, queue 2, MSN 1,
/// MO 0, versions 1: RFC 5040 sections 4.1, 4.8), the control word and the
/// copied headers, which must fill the ULPDU exactly.
fn decode_terminate(u: &[u8]) -> Result<Terminate, String> {
    let w = be16(u, 0).ok_or("no control word")?;
    let want_ctrl = ctrl_word(
        false,
        true,
        ctrl::DDP_VERSION,
        ctrl::RDMAP_VERSION,
        op::TERMINATE,
    );
    if w != want_ctrl {
        return Err(format!("control word {w:#06x}, want {want_ctrl:#06x}"));
    }
    let (q, msn, mo) = (be32(u, 6), be32(u, 10), be32(u, 14));
    if (q, msn, mo) != (Some(qn::TERMINATE), Some(1), Some(0)) {
        return Err(format!("queue/MSN/MO {q:?}/{msn:?}/{mo:?}, want 2/1/0"));
    }
    let word = be32(u, UNTAGGED_HDR).ok_or("no Terminate Control word")?;
    let code = Code(
        (word >> 28) as u8,
        ((word >> 24) & 0xF) as u8,
        ((word >> 16) & 0xFF) as u8,
    );
    let mut rest = &u[UNTAGGED_HDR + TERM_CTRL..];
    let mut t = Terminate {
        code,
        word,
        seglen: None,
        ddp: Vec::new(),
        rdmap: Vec::new(),
    };
    if word & term::RESERVED != 0 {
        return Err(format!("reserved bits set in {word:#010x}"));
    }
    if word & term::D != 0 {
        t.seglen = Some(be16(rest, 0).ok_or("D set, no DDP Segment Length")?);
        rest = &rest[TERM_SEGLEN..];
        // The copied header's own T bit says how long it is.
        let hlen = match be16(rest, 0) {
            Some(c) if c & ctrl::T != 0 => TAGGED_HDR,
            Some(_) => UNTAGGED_HDR,
            None => return Err("D set, no DDP header".into()),
        };
        t.ddp = rest
            .get(..hlen)
            .ok_or("D set, DDP header cut short")?
            .to_vec();
        rest = &rest[hlen..];
    }
    if word & term::R != 0 {
        t.rdmap = rest
            .get(..READ_REQUEST_FIELDS)
            .ok_or("R set, RDMAP header cut short")?
            .to_vec();
        rest = &rest[READ_REQUEST_FIELDS..];
    }
    if !rest.is_empty() {
        return Err(format!("{} bytes after the copied headers", rest.len()));
    }
    Ok(t)
}

/// Checks the TERMINATE's copied headers against the offending ULPDU;
/// returns what is wrong.
fn check_copy(t: &Terminate, want: Hdr, offending: Option<&[u8]>) -> Vec<String> {
    let mut bad = Vec::new();
    let (m, d, r) = (
        t.word & term::M != 0,
        t.word & term::D != 0,
        t.word & term::R != 0,
    );
    match want {
        Hdr::Ddp if !(m && d && !r) => bad.push(format!("Hdrct M{m} D{d} R{r}, want M D")),
        Hdr::DdpRdmap if !(m && d && r) => bad.push(format!("Hdrct M{m} D{d} R{r}, want M D R")),
        _ => {}
    }
    if m && !d {
        bad.push("M without D: no DDP Segment Length field".into());
    }
    let Some(off) = offending else {
        if d || r {
            bad.push("a header copied where no offending segment exists".into());
        }
        return bad;
    };
    if let Some(l) = t.seglen {
        if usize::from(l) != off.len() {
            bad.push(format!(
                "DDP Segment Length {l}, the segment has {}",
                off.len()
            ));
        }
    }
    if d && off.get(..t.ddp.len()) != Some(&t.ddp[..]) {
        bad.push(format!(
            "copied DDP header {:02x?} is not the offending one",
            t.ddp
        ));
    }
    if r && off.get(UNTAGGED_HDR..UNTAGGED_HDR + READ_REQUEST_FIELDS) != Some(&t.rdmap[..]) {
        bad.push(format!(
            "copied RDMAP header {:02x?} is not the offending one",
            t.rdmap
        ));
    }
    bad
}

// ---- The two sides ----

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks, runs: Option<&Path>) -> Res {
    if env.server {
        server(env, c)
    } else {
        client(env, c, runs)
    }
}

fn server(env: &Env, c: &mut Checks) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut target = reg_remote(&pd, TARGET_LEN, AccessFlags::ALL)?;
    fill(target.as_mut_slice(), SEED_TARGET, 0);
    let by_mr = reg_remote(&pd, BY_LEN, AccessFlags::ALL)?;
    let l = Listener::new(&ctx, env.rdma, 8, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    ctl.send(format!(
        "mrs {} {}",
        mr_to_str(&target.remote()),
        mr_to_str(&by_mr.remote())
    ))?;
    let cq_b = ctx.create_cq(16)?;
    let (qp_b, _) = accept_qp(&l, &pd, &qp_attr(&cq_b, &cq_b, 16), t)?;
    c.ok("server: bystander QP established", true);
    loop {
        let m = ctl.recv()?;
        match m.first().map(String::as_str) {
            Some("case") => {
                let i: usize = m.get(1).ok_or("case: no index")?.parse()?;
                let case = CASES.get(i).ok_or("case: bad index")?;
                let report = if case.start == Start::Raw {
                    ctl.send("ready")?;
                    ctl.expect("closed")?;
                    // srnic must have refused the start-up itself: no request.
                    let filed = l.get_request(Some(Duration::ZERO))?;
                    let f = filed.is_some();
                    if let Some(r) = filed {
                        r.reject(&[])?;
                    }
                    format!("filed={}", if f { "yes" } else { "no" })
                } else {
                    let cq = ctx.create_cq(16)?;
                    let (qp, _) = accept_qp(&l, &pd, &qp_attr(&cq, &cq, 16), t)?;
                    let _bufs = if case.recv {
                        post_recvs(&pd, &qp)?
                    } else {
                        Vec::new()
                    };
                    ctl.send("accepted")?;
                    victim_report(&qp, &cq, t)?
                };
                let intact = mismatch(target.as_slice(), SEED_TARGET, 0).is_none();
                let by = qp_b.query()?.state;
                ctl.send(format!(
                    "result {report} target={} bystander={by}",
                    if intact { "intact" } else { "CHANGED" }
                ))?;
            }
            Some("bye") => break,
            _ => return err(format!("unexpected control message {m:?}")),
        }
    }
    c.ok(
        "server: bystander QP disconnected in order",
        qp_b.wait_disconnected(Some(t))?,
    );
    Ok(())
}

/// Posts the receives of a victim QP; the caller keeps their regions until
/// the QP is gone. Their buffers are only written by the peer's Sends (or
/// flushed), never read.
fn post_recvs(
    pd: &srnic::ProtectionDomain,
    qp: &QueuePair,
) -> Res<Vec<srnic::MemoryRegion<'static>>> {
    let mut keep = Vec::new();
    for i in 0..RECVS {
        let buf = reg_remote(pd, RECV_LEN as usize, AccessFlags::LOCAL_WRITE)?;
        // SAFETY: the buffer is never read (see above).
        qp.post_recv(&[unsafe { RecvWr::new(i, vec![buf.sge(..)?]) }])?;
        keep.push(buf);
    }
    Ok(keep)
}

/// What the victim QP saw: its first event after ESTABLISHED (within `t`),
/// the TERMINATE word and its state.
fn victim_report(qp: &QueuePair, cq: &srnic::CompletionQueue, t: Duration) -> Res<String> {
    let ev = event_after_established(qp, Instant::now() + t)?;
    let a = qp.query()?;
    // The flushed (or failed) receives, so that nothing stays queued.
    let mut w = Waiter::new(cq.clone());
    let mut done = 0;
    while done < RECVS && w.next(Duration::from_millis(200))?.is_some() {
        done += 1;
    }
    Ok(match ev {
        Some(e) => format!(
            "event={:?} term={:#x} state={} qp_term={:#x}",
            e.kind, e.term, a.state, a.term
        ),
        None => format!("event=none state={} qp_term={:#x}", a.state, a.term),
    })
}

/// The hostile peer's MPA start-up as initiator (RFC 5044 section 7.1, RFC
/// 6581): returns whether CRC is in use.
fn mpa_start(s: &mut TcpStream, rev: u8, crc: bool, ord: u16) -> Res<bool> {
    let mut cfg = MpaConfig::siw_compatible();
    cfg.revision = rev;
    cfg.crc = crc;
    // srnic's ORD (8) must fit our IRD.
    cfg.ird = 8;
    cfg.ord = ord;
    Ok(mpa_initiate(s, cfg)?.crc_rx)
}

/// The bystander: an ordinary srnic QP that writes a pattern into the
/// server's region and reads it back.
struct Bystander {
    qp: QueuePair,
    w: Waiter,
    src: srnic::MemoryRegion<'static>,
    dst: srnic::MemoryRegion<'static>,
    remote: RemoteMr,
}

impl Bystander {
    fn round(&mut self, c: &mut Checks, seed: u64, t: Duration) -> Res {
        fill(self.src.as_mut_slice(), seed, 0);
        self.dst.as_mut_slice().fill(0);
        self.qp.post_send(&[
            SendWr::rdma_write(1, vec![self.src.sge(..)?], self.remote.at(0)).signaled(),
        ])?;
        self.w.wait_ok(1, t)?;
        // SAFETY: `dst` is read only after the READ completed.
        let rd = unsafe { SendWr::rdma_read(2, vec![self.dst.sge(..)?], self.remote.at(0)) };
        self.qp.post_send(&[rd.signaled()])?;
        self.w.wait_ok(2, t)?;
        c.ok(
            format!("bystander: {BY_LEN} bytes written and read back verified (pattern {seed})"),
            mismatch(self.dst.as_slice(), seed, 0).is_none(),
        );
        Ok(())
    }
}

/// What srnic must have sent, for the runs file: `term L T C COPY` or
/// `close`.
fn runs_want(w: Want) -> String {
    let code = |c: Code| format!("{:x} {:x} {:x}", c.0, c.1, c.2);
    match w {
        Want::Term(c, k) | Want::TermAsSiw(_, c, k) => format!("term {} {k:?}", code(c)),
        Want::Close | Want::CloseNoTerm => "close".into(),
    }
}

fn client(env: &Env, c: &mut Checks, runs: Option<&Path>) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut ctl = env.ctl()?;
    let m = ctl.expect("mrs")?;
    let (Some(tm), Some(bm)) = (m.first(), m.get(1)) else {
        return err(format!("mrs: {m:?}"));
    };
    let target = Target {
        mr: mr_from_str(tm)?,
    };
    let cq_b = ctx.create_cq(16)?;
    let mut by = Bystander {
        qp: connect_qp(&pd, &qp_attr(&cq_b, &cq_b, 16), env.rdma, Vec::new(), t)?,
        w: Waiter::new(cq_b.clone()),
        src: pd.reg_buffer(MrBuffer::new(BY_LEN)?, AccessFlags::LOCAL_WRITE)?,
        dst: pd.reg_buffer(MrBuffer::new(BY_LEN)?, AccessFlags::LOCAL_WRITE)?,
        remote: mr_from_str(bm)?,
    };
    by.round(c, 0, t)?;
    let mut lines = String::new();
    let all = Instant::now();
    for (i, case) in CASES.iter().enumerate() {
        let began = Instant::now();
        let port = one_case(c, &mut ctl, env.rdma, &target, i, case, t)?;
        let took = began.elapsed();
        by.round(c, i as u64 + 1, t)?;
        println!(
            "info: case {} took {} ms (bystander round included: {} ms)",
            case.name,
            took.as_millis(),
            began.elapsed().as_millis()
        );
        writeln!(lines, "{port} {} {}", case.name, runs_want(case.want))?;
    }
    println!(
        "info: {} cases in {} ms",
        CASES.len(),
        all.elapsed().as_millis()
    );
    if let Some(p) = runs {
        std::fs::write(p, lines)?;
    }
    ctl.send("bye")?;
    by.qp.disconnect(false)?;
    c.ok(
        "client: bystander QP disconnected in order",
        by.qp.wait_disconnected(Some(t))?,
    );
    Ok(())
}

/// One case: start-up, abuse, srnic's answer, the server's report. Returns
/// the client's TCP port.
fn one_case(
    c: &mut Checks,
    ctl: &mut Ctl,
    addr: std::net::SocketAddr,
    target: &Target,
    i: usize,
    case: &Case,
    t: Duration,
) -> Res<u16> {
    let n = case.name;
    ctl.send(format!("case {i}"))?;
    if case.start == Start::Raw {
        ctl.expect("ready")?;
    }
    let mut s = TcpStream::connect_timeout(&addr, t)?;
    s.set_nodelay(true)?;
    let port = s.local_addr()?.port();
    let crc = match case.start {
        Start::Raw => false,
        Start::Mpa { rev, crc } => {
            let on = mpa_start(&mut s, rev, crc, case.ord)?;
            ctl.expect("accepted")?;
            on
        }
    };
    let abuse = (case.build)(target, crc);
    s.write_all(&abuse.bytes)?;
    if abuse.shutdown {
        s.shutdown(Shutdown::Write)?;
    }
    let (rx, end) = read_to_close(&mut s, CLOSE_BOUND)?;
    println!(
        "info: {n} ({}, port {port}): sent {} bytes, got {} bytes, then {end:?}",
        case.rfc,
        abuse.bytes.len(),
        rx.len()
    );
    c.ok(
        format!("{n}: srnic closed the connection ({end:?})"),
        end != End::Open,
    );
    if case.start == Start::Raw {
        ctl.send("closed")?;
    }
    let report = ctl.expect("result")?;
    let field = |k: &str| {
        report
            .iter()
            .find_map(|w| w.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            .unwrap_or("?")
            .to_owned()
    };
    println!("info: {n}: server: {}", report.join(" "));
    c.eq(
        format!("{n}: target region unchanged"),
        field("target"),
        "intact".into(),
    );
    c.eq(
        format!("{n}: bystander QP still connected"),
        field("bystander"),
        QpState::Rts.to_string(),
    );
    match case.want {
        Want::Close => {
            c.eq(
                format!("{n}: nothing sent before the close (no MPA Reply)"),
                rx.len(),
                0,
            );
            c.eq(
                format!("{n}: no connection request reached the program"),
                field("filed"),
                "no".into(),
            );
            return Ok(port);
        }
        Want::CloseNoTerm | Want::Term(..) | Want::TermAsSiw(..) => {}
    }
    let fpdus = match split_fpdus(&rx, crc) {
        Ok(f) => f,
        Err(e) => {
            c.ok(format!("{n}: srnic's bytes are whole FPDUs: {e}"), false);
            return Ok(port);
        }
    };
    let terms: Vec<&Vec<u8>> = fpdus
        .iter()
        .filter(|u| opcode_of(u) == Some(op::TERMINATE))
        .collect();
    // Read Responses to the valid first request may precede the TERMINATE
    // (read-beyond-ird); nothing else may.
    let others = fpdus
        .iter()
        .filter(|u| !matches!(opcode_of(u), Some(op::TERMINATE | op::READ_RESPONSE)))
        .count();
    c.eq(
        format!("{n}: FPDUs other than TERMINATE and Read Response"),
        others,
        0,
    );
    let (code, alt, copy) = match case.want {
        Want::Term(code, copy) => (code, None, copy),
        Want::TermAsSiw(code, siw, copy) => (code, Some(siw), copy),
        _ => {
            c.eq(
                format!("{n}: no TERMINATE before the close"),
                terms.len(),
                0,
            );
            c.ok(
                format!("{n}: the victim QP failed ({})", field("state")),
                field("state") == QpState::Error.to_string(),
            );
            return Ok(port);
        }
    };
    c.eq(format!("{n}: TERMINATEs"), terms.len(), 1);
    c.ok(
        format!("{n}: the TERMINATE is the last FPDU"),
        fpdus.last().map(|u| opcode_of(u)) == Some(Some(op::TERMINATE)),
    );
    let Some(u) = terms.first() else {
        return Ok(port);
    };
    let tm = match decode_terminate(u) {
        Ok(x) => x,
        Err(e) => {
            c.ok(format!("{n}: the TERMINATE is well formed: {e}"), false);
            return Ok(port);
        }
    };
    let got = tm.code;
    match alt {
        Some(siw) if got == siw && got != code => c.ok(
            format!(
                "{n}: layer/type/code {got} as siw (RFC: {code}; {})",
                case.rfc
            ),
            true,
        ),
        _ => c.ok(
            format!("{n}: layer/type/code {got} (want {code}: {})", case.rfc),
            got == code,
        ),
    };
    let bad = check_copy(&tm, copy, abuse.offending.as_deref());
    c.ok(
        format!(
            "{n}: Hdrct {}{}{} and the copied headers ({copy:?}){}",
            if tm.word & term::M != 0 { "M" } else { "-" },
            if tm.word & term::D != 0 { "D" } else { "-" },
            if tm.word & term::R != 0 { "R" } else { "-" },
            if bad.is_empty() {
                String::new()
            } else {
                format!(": {}", bad.join("; "))
            }
        ),
        bad.is_empty(),
    );
    // srnic's own report names the TERMINATE it sent (no bit 31: sent, not
    // received).
    let word = u32::from(got.0) << 12 | u32::from(got.1) << 8 | u32::from(got.2);
    c.eq(
        format!("{n}: the server's QP_ERROR event"),
        (field("event"), field("term"), field("state")),
        (
            format!("{:?}", EventKind::QpError),
            format!("{word:#x}"),
            QpState::Error.to_string(),
        ),
    );
    Ok(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            mr: RemoteMr {
                addr: 0x7f00_0000_1000,
                len: TARGET_LEN as u64,
                rkey: 0x1234_56a5,
            },
        }
    }

    #[test]
    fn frames_are_whole_fpdus() {
        let t = target();
        for case in CASES.iter().filter(|c| c.start != Start::Raw) {
            let a = (case.build)(&t, true);
            if case.name == "half-fpdu-then-close" {
                assert!(split_fpdus(&a.bytes, true).is_err());
                continue;
            }
            let r = split_fpdus(&a.bytes, true);
            match case.name {
                "crc-error" | "ulpdu-length-oversized" => assert!(r.is_err(), "{}", case.name),
                _ => assert!(r.is_ok(), "{}: {r:?}", case.name),
            }
        }
    }

    #[test]
    fn terminate_decoding() {
        // A DDP tagged base/bounds TERMINATE copying a Write header, as RFC
        // 5040 section 4.8 lays it out.
        let off = write_ulpdu(&target(), 5);
        let mut u = untagged(op::TERMINATE, qn::TERMINATE, 1, 0);
        u.extend((0x1101_0000u32 | term::M | term::D).to_be_bytes());
        u.extend((off.len() as u16).to_be_bytes());
        u.extend(&off[..TAGGED_HDR]);
        let tm = decode_terminate(&u).unwrap();
        assert_eq!(tm.code, T_BOUNDS);
        assert!(check_copy(&tm, Hdr::Ddp, Some(&off)).is_empty());
        assert!(!check_copy(&tm, Hdr::DdpRdmap, Some(&off)).is_empty());
        let other = write_ulpdu(&target(), 6);
        assert!(!check_copy(&tm, Hdr::Ddp, Some(&other)).is_empty());
        // Trailing bytes and reserved bits are refused.
        let mut long = u.clone();
        long.push(0);
        assert!(decode_terminate(&long).is_err());
        let mut rsvd = u.clone();
        rsvd[UNTAGGED_HDR + 3] = 1;
        assert!(decode_terminate(&rsvd).is_err());
    }

    #[test]
    fn rows_cite_the_rfcs() {
        for c in CASES {
            assert!(c.rfc.contains("RFC "), "{}", c.name);
        }
        let mut names: Vec<_> = CASES.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CASES.len());
    }
}
