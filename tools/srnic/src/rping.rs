// SPDX-License-Identifier: GPL-2.0
//! `srnic rping`: rdma-core's `rping` (librdmacm/examples/rping.c), client and
//! server, compatible on the wire with it (Documentation/srnic/interop.rst).
//!
//! The client connects with IRD = ORD = 1 and no private data. Both sides keep
//! one 16-byte receive posted and re-post it as soon as it completes. Messages
//! are `{ u64 addr; u32 rkey; u32 size }`, big-endian. One iteration:
//!
//! 1. the client fills its source buffer (`rdma-ping-<n>: ` and rotating
//!    printable characters, NUL at `size - 1`) and SENDs its address;
//! 2. the server RDMA READs `size` bytes from it into its buffer, then SENDs a
//!    16-byte "go ahead" (contents unused);
//! 3. the client SENDs its sink buffer's address;
//! 4. the server RDMA WRITEs `strlen + 1` bytes of what it read to the sink and
//!    SENDs "go ahead" again;
//! 5. with `-V` the client compares sink and source.
//!
//! Every receive must be exactly 16 bytes (rping's server checks it). The client
//! disconnects after `-C` iterations; the server ends, successfully, when the
//! connection closes at an iteration boundary. With `-V` the server also checks
//! the data it read against the pattern rping's client writes.

use crate::dial::connect_host;
use crate::output::{Output, Report};
use crate::session::{mpa_names, wait_request, NetOpts, Session, Side};
use crate::util::{CmdResult, Fail};
use serde::Serialize;
use srnic::{
    AccessFlags, ConnParams, Context, MemoryRegion, MpaFlags, MrBuffer, RecvWr, RemoteAddr, SendWr,
};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// rping's default port.
pub const DEFAULT_PORT: u16 = 7174;
/// rping's smallest size: `sizeof("2147483647") + sizeof("rdma-ping-%d: ")`.
pub const MIN_SIZE: u32 = 26;
/// rping's largest size (`RPING_BUFSIZE - 1`).
pub const MAX_SIZE: u32 = 64 * 1024 - 1;
/// The control message: `{ be64 addr; be32 rkey; be32 size }`.
pub const INFO_LEN: usize = 16;

const WR_RECV: u64 = 1;
const WR_SEND: u64 = 2;
const WR_RDMA: u64 = 3;

/// Options of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpingOpts {
    /// Iterations; 0 runs until interrupted (client) or disconnected (server).
    pub count: u32,
    /// Bytes per ping (`MIN_SIZE..=MAX_SIZE`).
    pub size: u32,
    /// Check the data (client: the echo against the source; server: what it
    /// read against rping's pattern).
    pub verify: bool,
    /// Print every ping's data.
    pub verbose: bool,
}

/// Encodes a buffer advertisement.
pub fn encode_info(addr: u64, rkey: u32, size: u32) -> [u8; INFO_LEN] {
    let mut b = [0u8; INFO_LEN];
    b[0..8].copy_from_slice(&addr.to_be_bytes());
    b[8..12].copy_from_slice(&rkey.to_be_bytes());
    b[12..16].copy_from_slice(&size.to_be_bytes());
    b
}

/// Decodes [`encode_info`]: (addr, rkey, size).
pub fn decode_info(b: &[u8]) -> Option<(u64, u32, u32)> {
    if b.len() != INFO_LEN {
        return None;
    }
    Some((
        u64::from_be_bytes(b[0..8].try_into().ok()?),
        u32::from_be_bytes(b[8..12].try_into().ok()?),
        u32::from_be_bytes(b[12..16].try_into().ok()?),
    ))
}

/// The first character of ping `ping`'s rotating run (rping's `start`: 'A'
/// for ping 0, one more per ping, wrapping from 'z' to 'A').
fn start_char(ping: u32) -> u8 {
    65 + (ping % 58) as u8
}

/// Fills `buf` exactly as rping's client does for ping number `ping`.
pub fn fill_ping(buf: &mut [u8], ping: u32) {
    let Some(last) = buf.len().checked_sub(1) else {
        return;
    };
    // snprintf(buf, size, "rdma-ping-%d: ", ping): truncated to size - 1 bytes.
    let head = format!("rdma-ping-{}: ", ping as i32);
    let cc = head.len().min(last);
    buf[..cc].copy_from_slice(&head.as_bytes()[..cc]);
    let mut c = start_char(ping);
    let from = head.len().min(buf.len());
    for b in &mut buf[from..] {
        *b = c;
        c = if c >= 122 { 65 } else { c + 1 };
    }
    buf[last] = 0;
}

/// Checks `buf` against [`fill_ping`]'s content for `ping`.
pub fn verify_ping(buf: &[u8], ping: u32) -> Result<(), String> {
    let mut want = vec![0u8; buf.len()];
    fill_ping(&mut want, ping);
    match buf.iter().zip(&want).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(o) => Err(format!(
            "ping {ping}: data differs at offset {o} of {}: got {:#04x}, want {:#04x}",
            buf.len(),
            buf[o],
            want[o]
        )),
    }
}

/// rping's `strlen(buf) + 1`, bounded by the buffer.
fn c_len(buf: &[u8]) -> usize {
    buf.iter()
        .position(|&b| b == 0)
        .map_or(buf.len(), |n| n + 1)
}

fn printable(buf: &[u8]) -> String {
    String::from_utf8_lossy(&buf[..c_len(buf).saturating_sub(1)]).into_owned()
}

/// The buffers both sides use.
struct Bufs {
    recv: MemoryRegion<'static>,
    send: MemoryRegion<'static>,
}

impl Bufs {
    fn new(s: &Session) -> CmdResult<Self> {
        Ok(Self {
            recv: s
                .pd
                .reg_buffer(MrBuffer::new(INFO_LEN)?, AccessFlags::LOCAL_WRITE)?,
            send: s
                .pd
                .reg_buffer(MrBuffer::new(INFO_LEN)?, AccessFlags::LOCAL_WRITE)?,
        })
    }

    fn post_recv(&self, s: &Session) -> CmdResult {
        // SAFETY: the receive buffer is read only after this receive completed,
        // and reposted only after it was read.
        let wr = unsafe { RecvWr::new(WR_RECV, vec![self.recv.sge(..)?]) };
        s.qp.post_recv(&[wr])?;
        Ok(())
    }

    /// SENDs the 16-byte buffer and waits for its completion.
    fn send(&mut self, s: &mut Session, msg: [u8; INFO_LEN]) -> CmdResult {
        self.send.as_mut_slice().copy_from_slice(&msg);
        s.qp.post_send(&[SendWr::send(WR_SEND, vec![self.send.sge(..)?]).signaled()])?;
        s.wait_wr(WR_SEND)?;
        Ok(())
    }

    /// Takes the completed 16-byte receive, reposts it, returns its content.
    /// `None` when the receive was flushed because the peer closed (only
    /// allowed with `closing_ok`).
    fn recv(&self, s: &mut Session, closing_ok: bool) -> CmdResult<Option<(u64, u32, u32)>> {
        let wc = if closing_ok {
            match s.wait_wr_or_flush(WR_RECV)? {
                Some(wc) => wc,
                None => return Ok(None),
            }
        } else {
            s.wait_wr(WR_RECV)?
        };
        if wc.byte_len() as usize != INFO_LEN {
            return Err(Fail::Error(format!(
                "received bogus data, size {} (rping messages are {INFO_LEN} bytes)",
                wc.byte_len()
            )));
        }
        let info = decode_info(self.recv.as_slice()).unwrap_or_default();
        self.post_recv(s)?;
        Ok(Some(info))
    }
}

fn rdma_mr(s: &Session, size: usize) -> CmdResult<MemoryRegion<'static>> {
    // SAFETY: the peer writes (client sink) or reads (client source) these
    // buffers only between the advertisement that names them and the "go
    // ahead" that follows it; this side touches them only outside that window.
    Ok(unsafe {
        s.pd.reg_buffer_unchecked(
            MrBuffer::new(size)?,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ | AccessFlags::REMOTE_WRITE,
        )
    }?)
}

fn rping_params(opts: &NetOpts) -> ConnParams {
    ConnParams {
        ird: 1,
        ord: 1,
        crc: opts.crc,
        markers: opts.markers,
        ..Default::default()
    }
}

fn check_size(size: u32) -> CmdResult<usize> {
    if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
        return Err(Fail::Error(format!(
            "invalid size {size} (valid range is {MIN_SIZE} to {MAX_SIZE})"
        )));
    }
    Ok(size as usize)
}

/// One ping's data, printed with `-v` (a progress line in text mode, as
/// rping prints it; JSON: a string of the report's `data`).
#[derive(Clone, Debug)]
pub struct PingData {
    pub side: Side,
    pub data: String,
}

impl Serialize for PingData {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.data)
    }
}

impl Report for PingData {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        match self.side {
            Side::Client => writeln!(out, "ping data: {}", self.data),
            Side::Server => writeln!(out, "server ping data: {}", self.data),
        }
    }
}

/// What each side prints at the end. JSON: `side`, `pings` (iterations
/// done), `size`, `time_s`, `mpa` (the negotiated MPA options' names),
/// `data` (with `-v`: each ping's data; else empty).
#[derive(Clone, Debug, Serialize)]
pub struct RpingReport {
    pub side: Side,
    pub pings: u32,
    pub size: u32,
    pub time_s: f64,
    #[serde(serialize_with = "mpa_names")]
    pub mpa: MpaFlags,
    pub data: Vec<PingData>,
}

impl RpingReport {
    fn new(side: Side, pings: u32, size: u32, elapsed: Duration, mpa: MpaFlags) -> Self {
        Self {
            side,
            pings,
            size,
            time_s: elapsed.as_secs_f64(),
            mpa,
            data: Vec::new(),
        }
    }

    /// Prints (text) or keeps (JSON) one ping's data.
    fn data(&mut self, out: &Output, data: String) -> CmdResult {
        let d = PingData {
            side: self.side,
            data,
        };
        out.progress(&d)?;
        if out.format() == crate::output::Format::Json {
            self.data.push(d);
        }
        Ok(())
    }
}

impl Report for RpingReport {
    /// The closing line (the `-v` lines came before it).
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "rping: {} pings={} size={} time={:.3} s mpa={}",
            self.side, self.pings, self.size, self.time_s, self.mpa
        )
    }
}

/// The client: pings the rping server at `host` (each of its addresses in
/// turn until one connects).
pub fn client(ctx: &Context, host: &str, opts: &NetOpts, o: RpingOpts, out: &Output) -> CmdResult {
    let size = check_size(o.size)?;
    let (addr, (mut s, mut bufs, mut start, mut sink, info)) =
        connect_host(host, opts.port, |addr| {
            let s = Session::new(ctx, 1, 16, opts.timeout)?;
            let bufs = Bufs::new(&s)?;
            let start = rdma_mr(&s, size)?;
            let sink = rdma_mr(&s, size)?;
            bufs.post_recv(&s)?;
            s.qp.start_connect(addr, &rping_params(opts))?;
            let info = s.qp.wait_established(Some(opts.timeout))?;
            Ok((s, bufs, start, sink, info))
        })?;
    eprintln!(
        "srnic: rping connected to {addr}: ird={} ord={} mpa={}",
        info.ird, info.ord, info.mpa_flags
    );
    let t0 = Instant::now();
    let mut report = RpingReport::new(Side::Client, 0, o.size, Duration::ZERO, info.mpa_flags);
    let mut ping = 0u32;
    while o.count == 0 || ping < o.count {
        fill_ping(start.as_mut_slice(), ping);
        sink.as_mut_slice().fill(0);
        bufs.send(&mut s, encode_info(start.addr(), start.rkey(), o.size))?;
        bufs.recv(&mut s, false)?;
        bufs.send(&mut s, encode_info(sink.addr(), sink.rkey(), o.size))?;
        bufs.recv(&mut s, false)?;
        if o.verify && start.as_slice() != sink.as_slice() {
            let o = start
                .as_slice()
                .iter()
                .zip(sink.as_slice())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(Fail::Mismatch(format!(
                "ping {ping}: data mismatch at offset {o} of {size}"
            )));
        }
        if o.verbose {
            report.data(out, printable(sink.as_slice()))?;
        }
        ping = ping.wrapping_add(1);
    }
    s.close(true)?;
    report.pings = ping;
    report.time_s = t0.elapsed().as_secs_f64();
    out.emit(&report)
}

/// The server: serves one rping client, until it disconnects.
pub fn server(ctx: &Context, opts: &NetOpts, o: RpingOpts, out: &Output) -> CmdResult {
    let size = check_size(o.size)?;
    let (_l, req) = wait_request(ctx, opts)?;
    eprintln!(
        "srnic: rping request from {}: ird={} ord={} mpa={} private_data={} bytes",
        req.remote_addr().map(|a| a.to_string()).unwrap_or_default(),
        req.ird(),
        req.ord(),
        req.mpa_flags(),
        req.private_data().len()
    );
    let mut s = Session::new(ctx, 1, 16, opts.timeout)?;
    let mut bufs = Bufs::new(&s)?;
    let buf = rdma_mr(&s, size)?;
    bufs.post_recv(&s)?;
    req.start_accept(&s.qp, &rping_params(opts))?;
    let info = s.qp.wait_established(Some(opts.timeout))?;
    eprintln!(
        "srnic: rping established: ird={} ord={} mpa={}",
        info.ird, info.ord, info.mpa_flags
    );
    let t0 = Instant::now();
    let mut report = RpingReport::new(Side::Server, 0, o.size, Duration::ZERO, info.mpa_flags);
    let mut ping = 0u32;
    while o.count == 0 || ping < o.count {
        // The client's source buffer; a close here is the normal end.
        let Some((addr, rkey, len)) = bufs.recv(&mut s, true)? else {
            // Flushed: a close is the normal end, a TERMINATE is not.
            let term = s.qp.query()?.term;
            if term != 0 {
                return Err(Fail::Error(format!(
                    "the connection failed after {ping} pings (TERMINATE word {term:#010x})"
                )));
            }
            break;
        };
        let len = len as usize;
        if len > size {
            return Err(Fail::Error(format!(
                "ping {ping}: the client advertises {len} bytes, the buffer has {size} (use -S)"
            )));
        }
        let sge = if len == 0 {
            vec![]
        } else {
            vec![buf.sge(..len)?]
        };
        // SAFETY: the buffer is read only after this READ completed.
        let wr = unsafe { SendWr::rdma_read(WR_RDMA, sge, RemoteAddr { addr, rkey }) };
        s.qp.post_send(&[wr.signaled()])?;
        s.wait_wr(WR_RDMA)?;
        if o.verify {
            verify_ping(&buf.as_slice()[..len], ping).map_err(Fail::Mismatch)?;
        }
        if o.verbose {
            report.data(out, printable(&buf.as_slice()[..len]))?;
        }
        bufs.send(&mut s, [0u8; INFO_LEN])?;
        // The client's sink buffer.
        let (addr, rkey, sink_len) = bufs.recv(&mut s, false)?.unwrap_or_default();
        let n = c_len(&buf.as_slice()[..len]).min(sink_len as usize);
        let sge = if n == 0 { vec![] } else { vec![buf.sge(..n)?] };
        s.qp.post_send(&[SendWr::rdma_write(WR_RDMA, sge, RemoteAddr { addr, rkey }).signaled()])?;
        s.wait_wr(WR_RDMA)?;
        bufs.send(&mut s, [0u8; INFO_LEN])?;
        ping = ping.wrapping_add(1);
    }
    s.close(false)?;
    report.pings = ping;
    report.time_s = t0.elapsed().as_secs_f64();
    out.emit(&report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};

    #[test]
    fn info_is_big_endian() {
        let b = encode_info(0x0102_0304_0506_0708, 0x0a0b_0c0d, 65535);
        assert_eq!(
            b,
            [1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d, 0, 0, 0xff, 0xff]
        );
        assert_eq!(
            decode_info(&b),
            Some((0x0102_0304_0506_0708, 0x0a0b_0c0d, 65535))
        );
        assert_eq!(decode_info(&b[..15]), None);
    }

    /// rping.c's loop, transcribed, for comparison.
    fn rping_c(size: usize, pings: u32) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut start: i32 = 65;
        for ping in 0..pings {
            let mut buf = vec![0u8; size];
            let s = format!("rdma-ping-{ping}: ");
            let cc = s.len();
            let k = cc.min(size - 1);
            buf[..k].copy_from_slice(&s.as_bytes()[..k]);
            let mut c = start as u8;
            let mut i = cc;
            while i < size {
                buf[i] = c;
                c = c.wrapping_add(1);
                if c > 122 {
                    c = 65;
                }
                i += 1;
            }
            start += 1;
            if start > 122 {
                start = 65;
            }
            buf[size - 1] = 0;
            out.push(buf);
        }
        out
    }

    #[test]
    fn pattern_matches_rping() {
        for size in [26usize, 64, 4096, 65535] {
            for (ping, want) in rping_c(size, 130).into_iter().enumerate() {
                let mut got = vec![0xffu8; size];
                fill_ping(&mut got, ping as u32);
                assert_eq!(got, want, "size {size} ping {ping}");
                assert!(verify_ping(&got, ping as u32).is_ok());
                assert_eq!(c_len(&got), size);
            }
        }
        let mut b = vec![0u8; 64];
        fill_ping(&mut b, 7);
        assert!(b.starts_with(b"rdma-ping-7: HIJK"));
        b[20] ^= 1;
        assert!(verify_ping(&b, 7).unwrap_err().contains("offset 20"));
        assert!(verify_ping(&b, 8).is_err());
    }

    #[test]
    fn report_text_and_json() {
        let mpa = MpaFlags::CRC | MpaFlags::CRC_TX | MpaFlags::CRC_RX;
        let mut r = RpingReport::new(Side::Client, 20, 64, Duration::from_millis(1500), mpa);
        assert_eq!(
            render(Format::Text, &r),
            "rping: client pings=20 size=64 time=1.500 s mpa=crc,crc-tx,crc-rx\n"
        );
        let v = json(&r);
        assert_eq!(v["side"], "client");
        assert_eq!(v["pings"], 20);
        assert_eq!(v["size"], 64);
        assert_eq!(v["time_s"], 1.5);
        assert_eq!(v["mpa"], serde_json::json!(["crc", "crc-tx", "crc-rx"]));
        assert_eq!(v["data"], serde_json::json!([]));
        // -v: in JSON the data is kept in the report, not printed.
        r.data(&Output::new(Format::Json), "rdma-ping-0: ABC".into())
            .unwrap();
        assert_eq!(json(&r)["data"], serde_json::json!(["rdma-ping-0: ABC"]));
        let d = PingData {
            side: Side::Server,
            data: "x".into(),
        };
        assert_eq!(render(Format::Text, &d), "server ping data: x\n");
        let none = RpingReport::new(Side::Server, 0, 26, Duration::ZERO, MpaFlags::default());
        assert!(render(Format::Text, &none).ends_with("mpa=none\n"));
        assert_eq!(json(&none)["mpa"], serde_json::json!([]));
    }

    #[test]
    fn sizes() {
        assert!(check_size(25).is_err());
        assert!(check_size(26).is_ok());
        assert!(check_size(65535).is_ok());
        assert!(check_size(65536).is_err());
    }
}
