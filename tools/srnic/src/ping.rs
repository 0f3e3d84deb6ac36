// SPDX-License-Identifier: GPL-2.0
//! `srnic ping`: SEND ping-pong. The client sends `count` messages of `size`
//! bytes, each filled with the pattern of its sequence number; the server
//! verifies each and sends it back; the client verifies the echo and measures
//! the round trip. The client passes size and count in the connection's private
//! data, so the server needs only the port.

use crate::dial::connect_host;
use crate::output::{Output, Report};
use crate::session::{wait_request, NetOpts, Session, Side};
use crate::util::{fill_pattern, verify_pattern, CmdResult, Fail};
use serde::Serialize;
use srnic::{AccessFlags, Context, MrBuffer, RecvWr, SendWr};
use std::io::{self, Write};
use std::time::{Duration, Instant};

const MAGIC: u32 = u32::from_le_bytes(*b"SRPG");
const RECV_ID: u64 = 1;
const SEND_ID: u64 = 2;

/// What the client tells the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingParams {
    pub size: u32,
    pub count: u32,
}

impl PingParams {
    fn encode(&self) -> Vec<u8> {
        let mut b = MAGIC.to_le_bytes().to_vec();
        b.extend(self.size.to_le_bytes());
        b.extend(self.count.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> Option<Self> {
        if b.len() < 12 || u32::from_le_bytes(b[0..4].try_into().ok()?) != MAGIC {
            return None;
        }
        Some(Self {
            size: u32::from_le_bytes(b[4..8].try_into().ok()?),
            count: u32::from_le_bytes(b[8..12].try_into().ok()?),
        })
    }
}

struct Buffers {
    send: srnic::MemoryRegion<'static>,
    recv: srnic::MemoryRegion<'static>,
}

fn buffers(s: &Session, size: usize) -> CmdResult<Buffers> {
    Ok(Buffers {
        send: s
            .pd
            .reg_buffer(MrBuffer::new(size.max(1))?, AccessFlags::LOCAL_WRITE)?,
        recv: s
            .pd
            .reg_buffer(MrBuffer::new(size.max(1))?, AccessFlags::LOCAL_WRITE)?,
    })
}

fn sges<'a>(mr: &'a srnic::MemoryRegion<'_>, size: usize) -> CmdResult<Vec<srnic::Sge<'a>>> {
    Ok(if size == 0 {
        Vec::new()
    } else {
        vec![mr.sge(0..size)?]
    })
}

fn post_recv(s: &Session, b: &Buffers, size: usize) -> CmdResult {
    // SAFETY: the receive buffer is only read after this receive's completion
    // (wait_wr(RECV_ID)), and reposted only after that.
    let wr = unsafe { RecvWr::new(RECV_ID, sges(&b.recv, size)?) };
    s.qp.post_recv(&[wr])?;
    Ok(())
}

fn check(b: &Buffers, wc: &srnic::WorkCompletion, size: usize, seq: u64) -> CmdResult {
    if wc.byte_len() as usize != size {
        return Err(Fail::Mismatch(format!(
            "message {seq}: {} bytes received, want {size}",
            wc.byte_len()
        )));
    }
    verify_pattern(&b.recv.as_slice()[..size], seq).map_err(Fail::Mismatch)
}

/// The server: answers one client's pings.
pub fn server(ctx: &Context, opts: &NetOpts, out: &Output) -> CmdResult {
    let (_l, req) = wait_request(ctx, opts)?;
    let p = PingParams::decode(req.private_data())
        .ok_or_else(|| Fail::Error("connection request is not from srnic ping".into()))?;
    let size = p.size as usize;
    let mut s = Session::new(ctx, 1, 4, opts.timeout)?;
    let mut b = buffers(&s, size)?;
    post_recv(&s, &b, size)?;
    req.start_accept(&s.qp, &opts.params(ctx, Vec::new()))?;
    let info = s.qp.wait_established(Some(opts.timeout))?;
    eprintln!(
        "srnic: connection from {}, {} pings of {size} bytes",
        info.remote.map(|a| a.to_string()).unwrap_or_default(),
        p.count
    );
    for seq in 0..u64::from(p.count) {
        let wc = s.wait_wr(RECV_ID)?;
        check(&b, &wc, size, seq)?;
        let (send, recv) = (&mut b.send, &b.recv);
        send.as_mut_slice()[..size].copy_from_slice(&recv.as_slice()[..size]);
        if seq + 1 < u64::from(p.count) {
            post_recv(&s, &b, size)?;
        }
        s.qp.post_send(&[SendWr::send(SEND_ID, sges(&b.send, size)?).signaled()])?;
        s.wait_wr(SEND_ID)?;
    }
    s.close(false)?;
    out.emit(&ServerReport {
        side: Side::Server,
        count: p.count,
        size,
    })
}

/// The client: sends the pings and prints round-trip statistics. Tries each
/// address of `host` in turn.
pub fn client(ctx: &Context, host: &str, opts: &NetOpts, p: PingParams, out: &Output) -> CmdResult {
    let size = p.size as usize;
    let (_, (mut s, mut b)) = connect_host(host, opts.port, |addr| {
        let s = Session::new(ctx, 1, 4, opts.timeout)?;
        let b = buffers(&s, size)?;
        if p.count > 0 {
            post_recv(&s, &b, size)?;
        }
        s.qp.start_connect(addr, &opts.params(ctx, p.encode()))?;
        s.qp.wait_established(Some(opts.timeout))?;
        Ok((s, b))
    })?;
    let mut rtts = Vec::with_capacity(p.count as usize);
    for seq in 0..u64::from(p.count) {
        fill_pattern(&mut b.send.as_mut_slice()[..size], seq);
        let t0 = Instant::now();
        s.qp.post_send(&[SendWr::send(SEND_ID, sges(&b.send, size)?).signaled()])?;
        let wc = s.wait_wr(RECV_ID)?;
        let rtt = t0.elapsed();
        s.wait_wr(SEND_ID)?;
        check(&b, &wc, size, seq)?;
        if seq + 1 < u64::from(p.count) {
            post_recv(&s, &b, size)?;
        }
        out.progress(&PingSample::new(seq, size, rtt))?;
        rtts.push(rtt);
    }
    s.close(true)?;
    out.emit(&ClientReport::new(size, &rtts))
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// One ping of the client (a progress line in text mode; JSON: an element of
/// the report's `pings`): `seq`, `bytes`, `rtt_us`.
#[derive(Clone, Debug, Serialize)]
pub struct PingSample {
    pub seq: u64,
    pub bytes: usize,
    pub rtt_us: f64,
}

impl PingSample {
    fn new(seq: u64, bytes: usize, rtt: Duration) -> Self {
        Self {
            seq,
            bytes,
            rtt_us: us(rtt),
        }
    }
}

impl Report for PingSample {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "ping: seq={} bytes={} rtt={:.1} us",
            self.seq, self.bytes, self.rtt_us
        )
    }
}

/// Round-trip times in microseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Rtt {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
}

/// What the client prints. JSON: `side` ("client"), `count` (pings),
/// `size` (bytes each), `verified` (true: every echo matched), `rtt_us`
/// (`min`, `avg`, `max`; null without pings), `pings` (each ping's `seq`,
/// `bytes`, `rtt_us`).
#[derive(Clone, Debug, Serialize)]
pub struct ClientReport {
    pub side: Side,
    pub count: usize,
    pub size: usize,
    pub verified: bool,
    pub rtt_us: Option<Rtt>,
    pub pings: Vec<PingSample>,
}

impl ClientReport {
    /// The report of pings of `size` bytes that took `rtts`, all verified.
    pub fn new(size: usize, rtts: &[Duration]) -> Self {
        let rtt_us = (!rtts.is_empty()).then(|| Rtt {
            min: us(rtts.iter().min().copied().unwrap_or_default()),
            avg: us(rtts.iter().sum::<Duration>() / rtts.len() as u32),
            max: us(rtts.iter().max().copied().unwrap_or_default()),
        });
        Self {
            side: Side::Client,
            count: rtts.len(),
            size,
            verified: true,
            rtt_us,
            pings: rtts
                .iter()
                .enumerate()
                .map(|(i, &r)| PingSample::new(i as u64, size, r))
                .collect(),
        }
    }
}

impl Report for ClientReport {
    /// The closing line: count, size and min/avg/max round trip (the pings'
    /// lines were printed as they came).
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.rtt_us {
            None => writeln!(out, "ping: {} pings of {} bytes", self.count, self.size),
            Some(r) => writeln!(
                out,
                "ping: {} pings of {} bytes, all verified, rtt min/avg/max = {:.1}/{:.1}/{:.1} us",
                self.count, self.size, r.min, r.avg, r.max
            ),
        }
    }
}

/// What the server prints. JSON: `side` ("server"), `count` (pings
/// answered), `size` (bytes each).
#[derive(Clone, Debug, Serialize)]
pub struct ServerReport {
    pub side: Side,
    pub count: u32,
    pub size: usize,
}

impl Report for ServerReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "ping: answered {} pings of {} bytes",
            self.count, self.size
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};

    #[test]
    fn params_round_trip() {
        let p = PingParams {
            size: 4096,
            count: 7,
        };
        assert_eq!(PingParams::decode(&p.encode()), Some(p));
        assert_eq!(PingParams::decode(b"SRXFxxxxxxxx"), None);
        assert_eq!(PingParams::decode(&p.encode()[..11]), None);
    }

    #[test]
    fn client_report() {
        let r = ClientReport::new(64, &[Duration::from_micros(10), Duration::from_micros(30)]);
        assert_eq!(
            render(Format::Text, &r),
            "ping: 2 pings of 64 bytes, all verified, rtt min/avg/max = 10.0/20.0/30.0 us\n"
        );
        let v = json(&r);
        assert_eq!(v["side"], "client");
        assert_eq!(v["count"], 2);
        assert_eq!(v["size"], 64);
        assert_eq!(v["verified"], true);
        assert_eq!(v["rtt_us"]["min"], 10.0);
        assert_eq!(v["rtt_us"]["avg"], 20.0);
        assert_eq!(v["rtt_us"]["max"], 30.0);
        assert_eq!(v["pings"][1]["seq"], 1);
        assert_eq!(v["pings"][1]["bytes"], 64);
        assert_eq!(v["pings"][1]["rtt_us"], 30.0);
        let none = ClientReport::new(0, &[]);
        assert_eq!(render(Format::Text, &none), "ping: 0 pings of 0 bytes\n");
        assert!(json(&none)["rtt_us"].is_null());
        assert_eq!(json(&none)["pings"], serde_json::json!([]));
        let p = PingSample::new(3, 64, Duration::from_micros(12));
        assert_eq!(
            render(Format::Text, &p),
            "ping: seq=3 bytes=64 rtt=12.0 us\n"
        );
    }

    #[test]
    fn server_report() {
        let r = ServerReport {
            side: Side::Server,
            count: 7,
            size: 4096,
        };
        assert_eq!(
            render(Format::Text, &r),
            "ping: answered 7 pings of 4096 bytes\n"
        );
        let v = json(&r);
        assert_eq!(
            (v["side"].as_str(), v["count"].as_u64()),
            (Some("server"), Some(7))
        );
        assert_eq!(v["size"], 4096);
    }
}
