// SPDX-License-Identifier: GPL-2.0
//! `srnic ucmatose`: rdma-core's `ucmatose` (librdmacm/examples/cmatose.c) with
//! one connection, compatible on the wire with it: a SEND/RECV exchange.
//!
//! Both sides post `count` receives of `size` bytes before they connect or
//! accept (IRD = ORD = 1, no private data). Then the server sends `count`
//! messages of `size` bytes and waits for their completions, the client
//! receives them and sends `count` messages back, the server receives those and
//! disconnects, and the client, seeing the disconnect, closes too.
//!
//! ucmatose neither fills nor checks its messages; srnic fills what it sends
//! with the pattern of the message's number and checks that every message it
//! receives is exactly `size` bytes.

use crate::dial::connect_host;
use crate::output::{Output, Report};
use crate::session::{mpa_names, wait_request, NetOpts, Session, Side};
use crate::util::{fill_pattern, CmdResult, Fail};
use serde::Serialize;
use srnic::{AccessFlags, ConnParams, Context, MemoryRegion, MpaFlags, MrBuffer, RecvWr, SendWr};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// ucmatose's default port.
pub const DEFAULT_PORT: u16 = 7471;

const WR_RECV: u64 = 1;
const WR_SEND: u64 = 2;

/// Message count and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UcmaOpts {
    pub count: u32,
    pub size: u32,
}

struct Bufs {
    recv: MemoryRegion<'static>,
    send: MemoryRegion<'static>,
}

fn setup(ctx: &Context, opts: &NetOpts, o: UcmaOpts) -> CmdResult<(Session, Bufs)> {
    let depth = o.count.max(1);
    let s = Session::new(ctx, 1, depth, opts.timeout)?;
    let size = o.size.max(1) as usize;
    let b = Bufs {
        recv: s.pd.reg_buffer(
            MrBuffer::new(size * depth as usize)?,
            AccessFlags::LOCAL_WRITE,
        )?,
        send: s.pd.reg_buffer(
            MrBuffer::new(size * depth as usize)?,
            AccessFlags::LOCAL_WRITE,
        )?,
    };
    let n = o.size as usize;
    for i in 0..o.count as usize {
        let sges = if n == 0 {
            vec![]
        } else {
            vec![b.recv.sge(i * n..(i + 1) * n)?]
        };
        // SAFETY: receive `i` owns its slot; it is read only after completing.
        let wr = unsafe { RecvWr::new(WR_RECV, sges) };
        s.qp.post_recv(&[wr])?;
    }
    Ok((s, b))
}

fn params(opts: &NetOpts) -> ConnParams {
    ConnParams {
        ird: 1,
        ord: 1,
        crc: opts.crc,
        markers: opts.markers,
        ..Default::default()
    }
}

fn receive_all(s: &mut Session, o: UcmaOpts) -> CmdResult {
    for i in 0..o.count {
        let wc = s.wait_wr(WR_RECV)?;
        if wc.byte_len() != o.size {
            return Err(Fail::Mismatch(format!(
                "message {i}: {} bytes received, want {}",
                wc.byte_len(),
                o.size
            )));
        }
    }
    Ok(())
}

fn send_all(s: &mut Session, b: &mut Bufs, o: UcmaOpts) -> CmdResult {
    let n = o.size as usize;
    for i in 0..o.count as usize {
        fill_pattern(&mut b.send.as_mut_slice()[i * n..(i + 1) * n], i as u64);
    }
    for i in 0..o.count as usize {
        let sges = if n == 0 {
            vec![]
        } else {
            vec![b.send.sge(i * n..(i + 1) * n)?]
        };
        s.qp.post_send(&[SendWr::send(WR_SEND, sges).signaled()])?;
    }
    for _ in 0..o.count {
        s.wait_wr(WR_SEND)?;
    }
    Ok(())
}

/// What each side prints at the end. JSON: `side`, `sent`, `received`
/// (messages), `size` (bytes each), `time_s`, `mpa` (the negotiated MPA
/// options' names).
#[derive(Clone, Debug, Serialize)]
pub struct UcmaReport {
    pub side: Side,
    pub sent: u32,
    pub received: u32,
    pub size: u32,
    pub time_s: f64,
    #[serde(serialize_with = "mpa_names")]
    pub mpa: MpaFlags,
}

impl UcmaReport {
    fn new(side: Side, o: UcmaOpts, elapsed: Duration, mpa: MpaFlags) -> Self {
        Self {
            side,
            sent: o.count,
            received: o.count,
            size: o.size,
            time_s: elapsed.as_secs_f64(),
            mpa,
        }
    }
}

impl Report for UcmaReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "ucmatose: {} sent={} received={} size={} time={:.3} s mpa={}",
            self.side, self.sent, self.received, self.size, self.time_s, self.mpa
        )
    }
}

/// The client: connects to `host` (each of its addresses in turn until one
/// connects), receives, replies, waits for the disconnect.
pub fn client(ctx: &Context, host: &str, opts: &NetOpts, o: UcmaOpts, out: &Output) -> CmdResult {
    let (addr, (mut s, mut b, info)) = connect_host(host, opts.port, |addr| {
        let (s, b) = setup(ctx, opts, o)?;
        s.qp.start_connect(addr, &params(opts))?;
        let info = s.qp.wait_established(Some(opts.timeout))?;
        Ok((s, b, info))
    })?;
    eprintln!(
        "srnic: ucmatose connected to {addr}: ird={} ord={} mpa={}",
        info.ird, info.ord, info.mpa_flags
    );
    let t0 = Instant::now();
    receive_all(&mut s, o)?;
    send_all(&mut s, &mut b, o)?;
    // The server disconnects once it has our replies.
    s.close(false)?;
    out.emit(&UcmaReport::new(
        Side::Client,
        o,
        t0.elapsed(),
        info.mpa_flags,
    ))
}

/// The server: serves one client: sends, receives the replies, disconnects.
pub fn server(ctx: &Context, opts: &NetOpts, o: UcmaOpts, out: &Output) -> CmdResult {
    let (_l, req) = wait_request(ctx, opts)?;
    eprintln!(
        "srnic: ucmatose request from {}: ird={} ord={} mpa={} private_data={} bytes",
        req.remote_addr().map(|a| a.to_string()).unwrap_or_default(),
        req.ird(),
        req.ord(),
        req.mpa_flags(),
        req.private_data().len()
    );
    let (mut s, mut b) = setup(ctx, opts, o)?;
    req.start_accept(&s.qp, &params(opts))?;
    let info = s.qp.wait_established(Some(opts.timeout))?;
    eprintln!(
        "srnic: ucmatose established: ird={} ord={} mpa={}",
        info.ird, info.ord, info.mpa_flags
    );
    let t0 = Instant::now();
    send_all(&mut s, &mut b, o)?;
    receive_all(&mut s, o)?;
    s.close(true)?;
    out.emit(&UcmaReport::new(
        Side::Server,
        o,
        t0.elapsed(),
        info.mpa_flags,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};

    #[test]
    fn report_text_and_json() {
        let o = UcmaOpts {
            count: 10,
            size: 100,
        };
        let r = UcmaReport::new(Side::Server, o, Duration::from_millis(250), MpaFlags::CRC);
        assert_eq!(
            render(Format::Text, &r),
            "ucmatose: server sent=10 received=10 size=100 time=0.250 s mpa=crc\n"
        );
        let v = json(&r);
        assert_eq!(v["side"], "server");
        assert_eq!(v["sent"], 10);
        assert_eq!(v["received"], 10);
        assert_eq!(v["size"], 100);
        assert_eq!(v["time_s"], 0.25);
        assert_eq!(v["mpa"], serde_json::json!(["crc"]));
    }
}
