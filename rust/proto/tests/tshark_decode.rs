// SPDX-License-Identifier: GPL-2.0
//! Cross-check of the iWARP core against an independent implementation: Wireshark's
//! `iwarp_mpa` and `iwarp_ddp_rdmap` dissectors (Debian's `tshark`, installed by
//! `scripts/deps.sh`).
//!
//! The core itself builds, for three TCP connections (CRC off, CRC on, markers and CRC
//! on), the MPA Request/Reply exchange (revision 2, Enhanced) and then every RDMAP
//! operation in both directions: Send, Send with Invalidate, Send with SE, Send with
//! SE and Invalidate, RDMA Write (several FPDUs), RDMA Read Request and its Read
//! Response (several FPDUs), and a TERMINATE carrying the offending Read Request
//! header. Each FPDU goes into one TCP segment (as RFC 5044 section 5.1 wants and as
//! the dissector assumes), wrapped in Ethernet/IPv4/TCP with correct checksums, and
//! written to a classic libpcap file. tshark then decodes it and the test asserts:
//!
//! * no malformed packet and no expert info of severity Error;
//! * every FPDU is recognised, with the ULPDU length, opcode, STag, tagged offset,
//!   QN/MSN/MO, Invalidate STag, Read Request fields and TERMINATE fields that were
//!   sent;
//! * with CRC on, every CRC is "Good" by Wireshark's own CRC32c (this settles the
//!   CRC byte order), and with markers on every marker is where Wireshark expects it
//!   and its FPDUPTR is what RFC 5044 section 4.3 prescribes.
//!
//! The Wireshark 4.0 MPA dissector is heuristic: it needs the MPA Request and Reply
//! of the connection in the capture (it then follows the TCP conversation), so every
//! connection starts with a TCP handshake and the MPA start-up. It predates RFC 6581,
//! so it flags the Enhanced bit ("Res field is NOT set to zero") and revision 2 ("Rev
//! field is NOT set to one") as warnings; those two warnings are expected.
//!
//! A missing tshark fails the test with a message saying how to install it.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use srnic_proto::crc::SoftCrc32c;
use srnic_proto::ddp::TxQueues;
use srnic_proto::mpa::frame::MAX_FRAME_LEN;
use srnic_proto::mpa::negotiate::{Initiator, InitiatorOutcome, MpaConfig, Responder};
use srnic_proto::mpa::tx::TxFramer;
use srnic_proto::mpa::{Negotiated, MARKER_INTERVAL};
use srnic_proto::rdmap::engine::read_source_terminate;
use srnic_proto::rdmap::tx::{OutboundMessage, WorkRequest};
use srnic_proto::rdmap::{Body, Header, ReadRequest, SendOp, StagError, MAX_HDR_LEN};

const TSHARK: &str = "/usr/bin/tshark";
const SERVER_PORT: u16 = 7174;
const MSS: usize = 1460;

/// One TCP endpoint.
struct Side {
    mac: [u8; 6],
    ip: [u8; 4],
    port: u16,
    seq: u32,
}

/// Internet checksum (RFC 1071) over `data`, starting from `sum`.
fn csum(mut sum: u32, data: &[u8]) -> u32 {
    for c in data.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const PSH: u8 = 0x08;

/// Builds an Ethernet/IPv4/TCP frame from `from` to `to` and advances `from.seq`.
fn tcp_frame(from: &mut Side, to: &Side, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut tcp = Vec::with_capacity(20 + payload.len());
    tcp.extend_from_slice(&from.port.to_be_bytes());
    tcp.extend_from_slice(&to.port.to_be_bytes());
    tcp.extend_from_slice(&from.seq.to_be_bytes());
    let ack = if flags & ACK != 0 { to.seq } else { 0 };
    tcp.extend_from_slice(&ack.to_be_bytes());
    tcp.push(5 << 4);
    tcp.push(flags);
    tcp.extend_from_slice(&0xffffu16.to_be_bytes());
    tcp.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    tcp.extend_from_slice(payload);
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&from.ip);
    pseudo.extend_from_slice(&to.ip);
    pseudo.extend_from_slice(&[0, 6]);
    pseudo.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
    let c = fold(csum(csum(0, &pseudo), &tcp));
    tcp[16..18].copy_from_slice(&c.to_be_bytes());

    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
    ip.extend_from_slice(&from.ip);
    ip.extend_from_slice(&to.ip);
    let c = fold(csum(0, &ip));
    ip[10..12].copy_from_slice(&c.to_be_bytes());

    let mut f = Vec::new();
    f.extend_from_slice(&to.mac);
    f.extend_from_slice(&from.mac);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&tcp);
    let consumed = payload.len() as u32 + u32::from(flags & SYN != 0);
    from.seq = from.seq.wrapping_add(consumed);
    f
}

/// Classic libpcap file: global header, then one record per frame.
fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    for (i, f) in frames.iter().enumerate() {
        out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        out.extend_from_slice(&(i as u32 * 100).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(f);
    }
    out
}

/// What one FPDU frame must decode to.
struct Expect {
    frame: usize,
    conn: &'static str,
    header: Header,
    ulpdu_len: u16,
    /// FPDUPTR of each marker inside the segment, in order.
    markers: Vec<u16>,
}

/// The capture being built.
#[derive(Default)]
struct Capture {
    frames: Vec<Vec<u8>>,
    expect: Vec<Expect>,
    crc_fpdus: usize,
}

/// One direction's transmit state.
struct Dir {
    tx: TxFramer,
    q: TxQueues,
    /// Stream position (bytes since the first FPDU of the direction), for markers.
    pos: usize,
    markers: bool,
    crc: bool,
}

impl Dir {
    fn new(n: &Negotiated) -> Self {
        Dir {
            tx: TxFramer::new(n.crc_tx, n.markers_tx),
            q: TxQueues::new(),
            pos: 0,
            markers: n.markers_tx,
            crc: n.crc_tx,
        }
    }
}

impl Capture {
    fn push(&mut self, f: Vec<u8>) -> usize {
        self.frames.push(f);
        self.frames.len()
    }

    /// Sends one message from `from` to `to`, one FPDU per TCP segment.
    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        conn: &'static str,
        dir: &mut Dir,
        from: &mut Side,
        to: &mut Side,
        wr: WorkRequest,
        payload: &[u8],
    ) {
        assert_eq!(payload.len() as u32, wr.payload_len());
        let mulpdu = dir.tx.max_ulpdu(MSS).expect("MSS fits an FPDU");
        let mut m = OutboundMessage::new(wr, &mut dir.q);
        let mut hdr = [0u8; MAX_HDR_LEN];
        while let Some(seg) = m.next_segment(mulpdu) {
            let hlen = seg.header.emit(&mut hdr).expect("header fits");
            let s = seg.payload_offset as usize;
            let body = &payload[s..s + usize::from(seg.payload_len)];
            let mut out = vec![0u8; MSS + 64];
            let n = dir
                .tx
                .frame_into(&SoftCrc32c, &hdr[..hlen], body, &mut out)
                .expect("frame")
                .expect("room");
            out.truncate(n);
            assert!(n <= MSS, "FPDU of {n} bytes exceeds the MSS");
            let markers = if dir.markers {
                expected_markers(&out, dir.pos)
            } else {
                Vec::new()
            };
            dir.pos += n;
            if dir.crc {
                self.crc_fpdus += 1;
            }
            let frame = self.push(tcp_frame(from, to, ACK | PSH, &out));
            self.expect.push(Expect {
                frame,
                conn,
                header: seg.header,
                ulpdu_len: (hlen + body.len()) as u16,
                markers,
            });
        }
    }
}

/// FPDUPTR values the markers of an FPDU starting at stream position `pos` must carry
/// (RFC 5044 section 4.3: the distance back from the marker to the FPDU's ULPDU
/// length field; 0 for a marker right in front of the length field). Also checks
/// that the core put the markers' reserved bytes as zero.
fn expected_markers(fpdu: &[u8], pos: usize) -> Vec<u16> {
    let interval = usize::from(MARKER_INTERVAL);
    let first = (interval - pos % interval) % interval;
    let len_field = if first == 0 { 4 } else { 0 };
    let mut v = Vec::new();
    let mut m = first;
    while m < fpdu.len() {
        assert_eq!(&fpdu[m..m + 2], &[0, 0], "marker reserved bytes");
        let ptr = m.saturating_sub(len_field) as u16;
        assert_eq!(
            u16::from_be_bytes([fpdu[m + 2], fpdu[m + 3]]),
            ptr,
            "core's FPDUPTR"
        );
        v.push(ptr);
        m += interval;
    }
    v
}

fn data(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(13) ^ seed)
        .collect()
}

/// The four Sends and a multi-FPDU RDMA Write from `a` to `b`.
fn all_sends_and_write(
    cap: &mut Capture,
    conn: &'static str,
    dir: &mut Dir,
    a: &mut Side,
    b: &mut Side,
    base: u8,
) {
    let sends = [
        (SendOp::Send, 64usize),
        (SendOp::SendInvalidate, 7),
        (SendOp::SendSe, 0),
        (SendOp::SendSeInvalidate, 3000),
    ];
    for (k, (op, len)) in sends.into_iter().enumerate() {
        let wr = WorkRequest::Send {
            op,
            inval_stag: 0x1234_5600 | u32::from(base) | k as u32,
            len: len as u32,
        };
        cap.message(conn, dir, a, b, wr, &data(len, base ^ k as u8));
    }
    let wr = WorkRequest::Write {
        stag: 0x00AB_CD01 ^ u32::from(base),
        to: 0x7f00_1234_5678_0000 + u64::from(base),
        len: 4000,
    };
    cap.message(conn, dir, a, b, wr, &data(4000, 0x5A ^ base));
}

/// One iWARP connection: handshake, MPA start-up, every operation both ways.
fn connection(cap: &mut Capture, conn: &'static str, idx: u8, crc: bool, markers: bool) {
    let mut client = Side {
        mac: [2, 0, 0, 0, 0, 1],
        ip: [10, 0, 0, 1],
        port: 40000 + u16::from(idx),
        seq: 0x1000_0000 * u32::from(idx + 1),
    };
    let mut server = Side {
        mac: [2, 0, 0, 0, 0, 2],
        ip: [10, 0, 0, 2],
        port: SERVER_PORT,
        seq: 0x8000_0000 + 0x77 * u32::from(idx),
    };
    let f = tcp_frame(&mut client, &server, SYN, &[]);
    cap.push(f);
    let f = tcp_frame(&mut server, &client, SYN | ACK, &[]);
    cap.push(f);
    let f = tcp_frame(&mut client, &server, ACK, &[]);
    cap.push(f);

    let mut cfg = MpaConfig::siw_compatible();
    cfg.crc = crc;
    cfg.markers_rx = markers;
    cfg.ird = 4;
    cfg.ord = 4;
    let mut ini = Initiator::new(cfg);
    let mut resp = Responder::new(cfg);
    let mut req = [0u8; MAX_FRAME_LEN];
    let n = ini.request(b"srnic-tshark", &mut req).expect("request");
    let f = tcp_frame(&mut client, &server, ACK | PSH, &req[..n]);
    cap.push(f);
    let (_, peer) = resp.on_bytes(&req[..n]).expect("request parses");
    assert!(peer.is_some());
    let mut rep = [0u8; MAX_FRAME_LEN];
    let (m, rneg) = resp.accept(b"ok", &mut rep).expect("accept");
    let f = tcp_frame(&mut server, &client, ACK | PSH, &rep[..m]);
    cap.push(f);
    let (_, out) = ini.on_bytes(&rep[..m]).expect("reply parses");
    let Some(InitiatorOutcome::Accepted(ineg)) = out else {
        panic!("{conn}: not accepted: {out:?}");
    };
    assert_eq!(
        (ineg.crc_tx, ineg.markers_tx, ineg.revision),
        (crc, markers, 2)
    );
    assert_eq!((rneg.crc_tx, rneg.markers_tx), (crc, markers));

    let mut c2s = Dir::new(&ineg);
    let mut s2c = Dir::new(&rneg);
    all_sends_and_write(cap, conn, &mut c2s, &mut client, &mut server, 0);
    all_sends_and_write(cap, conn, &mut s2c, &mut server, &mut client, 0x80);
    // RDMA Read: the client asks, the server answers with a multi-FPDU response.
    let rr = ReadRequest {
        sink_stag: 0x0000_2201,
        sink_to: 0x0000_5555_0000_1000,
        read_size: 2900,
        src_stag: 0x0044_3302,
        src_to: 0x0000_6666_0000_2000,
    };
    cap.message(
        conn,
        &mut c2s,
        &mut client,
        &mut server,
        WorkRequest::ReadRequest(rr),
        &[],
    );
    let wr = WorkRequest::ReadResponse {
        sink_stag: rr.sink_stag,
        sink_to: rr.sink_to,
        len: rr.read_size,
    };
    cap.message(
        conn,
        &mut s2c,
        &mut server,
        &mut client,
        wr,
        &data(2900, 0x33),
    );
    // A second Read whose source fails: TERMINATE with the Read Request attached.
    let bad = ReadRequest {
        src_stag: 0x0099_9903,
        ..rr
    };
    cap.message(
        conn,
        &mut c2s,
        &mut client,
        &mut server,
        WorkRequest::ReadRequest(bad),
        &[],
    );
    let term = read_source_terminate(2, bad, StagError::InvalidStag);
    cap.message(
        conn,
        &mut s2c,
        &mut server,
        &mut client,
        WorkRequest::Terminate(term),
        &[],
    );
}

/// Runs tshark with `args` on `file`; returns its stdout.
fn tshark(file: &PathBuf, args: &[&str]) -> String {
    let out = Command::new(TSHARK)
        .arg("-n")
        .arg("-r")
        .arg(file)
        .args(["-o", "tcp.desegment_tcp_streams:FALSE"])
        // Payloads are test patterns, not RPC-over-RDMA or SMB Direct messages: keep
        // the heuristic ULP dissectors behind iWARP from trying them.
        .args([
            "--disable-protocol",
            "rpcordma",
            "--disable-protocol",
            "smb_direct",
        ])
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {TSHARK} ({e}): install it with scripts/deps.sh \
                 (Debian package tshark); this test needs it"
            )
        });
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn num(s: &str) -> u64 {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// The fields tshark reports, by name.
const FIELDS: [&str; 27] = [
    "frame.number",
    "_ws.malformed",
    "_ws.expert.severity",
    "_ws.expert.message",
    "iwarp_mpa.ulpdulength",
    "iwarp_mpa.crc_check",
    "iwarp_mpa.marker_fpduptr",
    "iwarp_rdma.opcode",
    "iwarp_ddp.tagged_flag",
    "iwarp_ddp.last_flag",
    "iwarp_ddp.stag",
    "iwarp_ddp.tagged_offset",
    "iwarp_ddp.qn",
    "iwarp_ddp.msn",
    "iwarp_ddp.mo",
    "iwarp_rdma.inval_stag",
    "iwarp_rdma.sinkstag",
    "iwarp_rdma.sinkto",
    "iwarp_rdma.rdmardsz",
    "iwarp_rdma.srcstag",
    "iwarp_rdma.srcto",
    "iwarp_rdma.term_layer",
    "iwarp_rdma.term_etype_rdma",
    "iwarp_rdma.term_errcode_rdma",
    "iwarp_rdma.term_hdrct_m",
    "iwarp_rdma.hdrct_d",
    "iwarp_rdma.hdrct_r",
];

/// Field name to expected value for one FPDU.
fn expected_fields(e: &Expect) -> Vec<(&'static str, u64)> {
    let h = &e.header;
    let mut v = vec![
        ("iwarp_mpa.ulpdulength", u64::from(e.ulpdu_len)),
        ("iwarp_rdma.opcode", u64::from(h.opcode().raw())),
        ("iwarp_ddp.last_flag", u64::from(h.last)),
    ];
    match h.body {
        Body::Write { stag, to } | Body::ReadResponse { stag, to } => {
            v.push(("iwarp_ddp.tagged_flag", 1));
            v.push(("iwarp_ddp.stag", u64::from(stag)));
            v.push(("iwarp_ddp.tagged_offset", to));
        }
        Body::Send {
            op,
            inval_stag,
            msn,
            mo,
        } => {
            v.push(("iwarp_ddp.tagged_flag", 0));
            v.push(("iwarp_ddp.qn", 0));
            v.push(("iwarp_ddp.msn", u64::from(msn)));
            v.push(("iwarp_ddp.mo", u64::from(mo)));
            if op.invalidates() {
                v.push(("iwarp_rdma.inval_stag", u64::from(inval_stag)));
            }
        }
        Body::ReadRequest { msn, mo, req } => {
            v.push(("iwarp_ddp.qn", 1));
            v.push(("iwarp_ddp.msn", u64::from(msn)));
            v.push(("iwarp_ddp.mo", u64::from(mo)));
            v.push(("iwarp_rdma.sinkstag", u64::from(req.sink_stag)));
            v.push(("iwarp_rdma.sinkto", req.sink_to));
            v.push(("iwarp_rdma.rdmardsz", u64::from(req.read_size)));
            v.push(("iwarp_rdma.srcstag", u64::from(req.src_stag)));
            v.push(("iwarp_rdma.srcto", req.src_to));
        }
        Body::Terminate { msn, mo, term } => {
            v.push(("iwarp_ddp.qn", 2));
            v.push(("iwarp_ddp.msn", u64::from(msn)));
            v.push(("iwarp_ddp.mo", u64::from(mo)));
            v.push(("iwarp_rdma.term_layer", u64::from(term.layer)));
            v.push(("iwarp_rdma.term_etype_rdma", u64::from(term.etype)));
            v.push(("iwarp_rdma.term_errcode_rdma", u64::from(term.ecode)));
            v.push(("iwarp_rdma.term_hdrct_m", u64::from(term.flag_m)));
            v.push(("iwarp_rdma.hdrct_d", u64::from(term.flag_d)));
            v.push(("iwarp_rdma.hdrct_r", u64::from(term.flag_r)));
        }
    }
    v
}

#[test]
fn tshark_decode() {
    assert!(
        std::path::Path::new(TSHARK).exists(),
        "{TSHARK} is missing: run scripts/deps.sh (it installs Debian's tshark); \
         this test cross-checks the iWARP core against Wireshark and must not be skipped"
    );
    let mut cap = Capture::default();
    connection(&mut cap, "crc-off", 0, false, false);
    connection(&mut cap, "crc-on", 1, true, false);
    connection(&mut cap, "markers", 2, true, true);

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("srnic-iwarp.pcap");
    std::fs::write(&file, pcap(&cap.frames)).expect("write pcap");

    let mut args = vec!["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"];
    args.extend(["-E", "aggregator=|"]);
    for f in FIELDS {
        args.extend(["-e", f]);
    }
    let text = tshark(&file, &args);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), cap.frames.len(), "one row per frame");
    let col = |name: &str| FIELDS.iter().position(|f| *f == name).expect("field");

    let mut problems = String::new();
    for row in &rows {
        let frame = num(row[col("frame.number")]) as usize;
        if !row[col("_ws.malformed")].is_empty() {
            writeln!(problems, "frame {frame}: malformed").unwrap();
        }
        let sev = row[col("_ws.expert.severity")];
        let msgs = row[col("_ws.expert.message")];
        for (s, m) in sev.split('|').zip(msgs.split('|')) {
            let expected_warning =
                m.starts_with("Res field is NOT set to zero") || m.starts_with("Rev field is NOT");
            // Severity values (epan/proto.h): 0x00200000 chat, 0x00400000 note,
            // 0x00600000 warning, 0x00800000 error. Chat and note are informational
            // (TCP handshake, ...); only the two warnings explained above may appear.
            let bad = match s {
                "" => false,
                s => num(s) >= 0x0080_0000 || (num(s) >= 0x0060_0000 && !expected_warning),
            };
            if bad {
                writeln!(problems, "frame {frame}: expert {s}: {m}").unwrap();
            }
        }
    }
    for e in &cap.expect {
        let row = &rows[e.frame - 1];
        for (name, want) in expected_fields(e) {
            let got = row[col(name)];
            if got.is_empty() || got.split('|').map(num).collect::<Vec<_>>() != [want] {
                writeln!(
                    problems,
                    "{} frame {} ({:?}): {name} = {got:?}, sent {want:#x}",
                    e.conn,
                    e.frame,
                    e.header.opcode()
                )
                .unwrap();
            }
        }
        let ptrs = row[col("iwarp_mpa.marker_fpduptr")];
        let got: Vec<u16> = if ptrs.is_empty() {
            Vec::new()
        } else {
            ptrs.split('|').map(|p| num(p) as u16).collect()
        };
        if got != e.markers {
            writeln!(
                problems,
                "{} frame {}: markers {got:?}, sent {:?}",
                e.conn, e.frame, e.markers
            )
            .unwrap();
        }
    }
    // Every FPDU sent with CRC on must show a good CRC by Wireshark's own CRC32c.
    let verbose = tshark(&file, &["-V"]);
    let good = verbose.matches("(Good CRC32)").count();
    let bad: Vec<&str> = verbose
        .lines()
        .filter(|l| l.contains("Bad CRC32"))
        .collect();
    if !bad.is_empty() || good != cap.crc_fpdus {
        writeln!(
            problems,
            "CRC: {good} good of {} sent with CRC; bad: {bad:?}",
            cap.crc_fpdus
        )
        .unwrap();
    }
    assert!(
        problems.is_empty(),
        "tshark disagrees with the core (capture kept at {}):\n{problems}",
        file.display()
    );
    assert!(cap.expect.len() > 40, "the capture covers every operation");
    let markers: usize = cap.expect.iter().map(|e| e.markers.len()).sum();
    assert!(markers > 20, "only {markers} markers checked");
    assert!(cap.crc_fpdus > 40, "only {} CRCs checked", cap.crc_fpdus);
}
