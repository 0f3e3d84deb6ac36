// SPDX-License-Identifier: GPL-2.0
//! A connected queue pair for the CLI's tests: set-up on both sides, waiting
//! for a particular work request's completion, and an orderly close.

use crate::dial::resolve_first;
use crate::util::{CmdResult, Fail};
use serde::Serialize;
use srnic::{
    CompletionQueue, ConnParams, ConnectRequest, Context, Listener, MpaFlags, ProtectionDomain,
    QpCap, QpInitAttr, QueuePair, WcStatus, WorkCompletion,
};
use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// Options every connected command shares.
#[derive(Clone, Debug)]
pub struct NetOpts {
    /// The port to listen on or connect to.
    pub port: u16,
    /// The server's local address (default: every address, IPv6 and IPv4).
    pub bind: Option<String>,
    /// How long any single wait may take.
    pub timeout: Duration,
    /// Ask for MPA CRC.
    pub crc: bool,
    /// Ask for MPA markers.
    pub markers: bool,
}

impl NetOpts {
    /// Connection parameters with `private_data`.
    pub fn params(&self, ctx: &Context, private_data: Vec<u8>) -> ConnParams {
        let a = &ctx.device_attr().raw;
        ConnParams {
            private_data,
            ird: a.max_ird.clamp(1, 16),
            ord: a.max_ord.clamp(1, 16),
            crc: self.crc,
            markers: self.markers,
            ..Default::default()
        }
    }
}

/// Which side of a connection a report is from (JSON: `"client"` or
/// `"server"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Server,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Server => "server",
        })
    }
}

/// Serializes negotiated MPA options as the list of their names (`["crc",
/// "crc-tx", "crc-rx"]`, `[]` for none): `#[serde(serialize_with = "mpa_names")]`.
pub fn mpa_names<S: serde::Serializer>(m: &MpaFlags, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(m.names())
}

/// Listens at `opts.bind` (by default every address, IPv6 and IPv4; a name:
/// its first address) and `opts.port`, and waits for one request.
pub fn wait_request(ctx: &Context, opts: &NetOpts) -> CmdResult<(Listener, ConnectRequest)> {
    let l = listen(ctx, opts)?;
    let r = next_request(&l, opts)?;
    Ok((l, r))
}

/// Listens on the server address of `opts`.
pub fn listen(ctx: &Context, opts: &NetOpts) -> CmdResult<Listener> {
    let params = opts.params(ctx, Vec::new());
    let l = match &opts.bind {
        Some(host) => Listener::new(ctx, resolve_first(host, opts.port)?, 8, &params)?,
        None => listen_any(ctx, opts.port, 8, &params)?,
    };
    eprintln!("srnic: listening on {}", l.local_addr());
    Ok(l)
}

/// Listens on every address with `port`: on `[::]`, which takes IPv4 too
/// (unless `net.ipv6.bindv6only` is set), or on `0.0.0.0` where the host
/// has no IPv6 (the module answers `EAFNOSUPPORT`).
pub fn listen_any(
    ctx: &Context,
    port: u16,
    backlog: u32,
    params: &ConnParams,
) -> CmdResult<Listener> {
    let any6 = SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port));
    match Listener::new(ctx, any6, backlog, params) {
        Err(e) if e.raw_os_error() == Some(libc::EAFNOSUPPORT) => Ok(Listener::new(
            ctx,
            SocketAddr::from(([0, 0, 0, 0], port)),
            backlog,
            params,
        )?),
        r => Ok(r?),
    }
}

/// Waits for the next connection request on `l`.
pub fn next_request(l: &Listener, opts: &NetOpts) -> CmdResult<ConnectRequest> {
    l.get_request(Some(opts.timeout))?
        .ok_or_else(|| Fail::Error("no connection request before the timeout".into()))
}

/// One side of a connection: PD, one CQ for both queues, the QP, and the
/// completions polled but not yet asked for.
pub struct Session {
    pub pd: ProtectionDomain,
    pub cq: CompletionQueue,
    pub qp: QueuePair,
    pub timeout: Duration,
    pending: VecDeque<WorkCompletion>,
}

impl Session {
    /// Creates the objects; `sge` SGEs per work request, `depth` requests per queue.
    pub fn new(ctx: &Context, sge: u32, depth: u32, timeout: Duration) -> CmdResult<Self> {
        let max_sge = ctx.device_attr().raw.max_sge;
        if max_sge != 0 && sge > max_sge {
            return Err(Fail::Error(format!(
                "{sge} SGEs per work request, but the device allows {max_sge}"
            )));
        }
        let pd = ctx.alloc_pd()?;
        let cq = ctx.create_cq(depth * 2)?;
        let mut attr = QpInitAttr::new(&cq, &cq);
        attr.cap = QpCap {
            max_send_wr: depth,
            max_recv_wr: depth,
            max_send_sge: sge.max(1),
            max_recv_sge: sge.max(1),
            max_inline_data: 0,
        };
        let qp = pd.create_qp(&attr)?;
        Ok(Self {
            pd,
            cq,
            qp,
            timeout,
            pending: VecDeque::new(),
        })
    }

    /// Waits for the completion of work request `wr_id`. An error completion
    /// of any request fails the wait, except a flush of another request: the
    /// connection closed, so `wr_id` is being flushed too, and the other one is
    /// kept for whoever waits for it (a close right after our last SEND must
    /// not fail that SEND's wait).
    pub fn wait_wr(&mut self, wr_id: u64) -> CmdResult<WorkCompletion> {
        let c = self.wait_any(wr_id)?;
        c.ok()?;
        Ok(c)
    }

    /// As [`Self::wait_wr`], but a flushed `wr_id` (the connection closed
    /// before it completed) gives `Ok(None)` instead of an error.
    pub fn wait_wr_or_flush(&mut self, wr_id: u64) -> CmdResult<Option<WorkCompletion>> {
        let c = self.wait_any(wr_id)?;
        if c.status() == WcStatus::WrFlushErr {
            return Ok(None);
        }
        c.ok()?;
        Ok(Some(c))
    }

    /// The completion of `wr_id`, whatever its status. Fails when the QP
    /// makes no progress (no completion, no byte sent or received) for the
    /// timeout: a large transfer on a slow machine is not cut short.
    fn wait_any(&mut self, wr_id: u64) -> CmdResult<WorkCompletion> {
        let mut buf = [WorkCompletion::default(); 16];
        loop {
            if let Some(i) = self.pending.iter().position(|c| c.wr_id() == wr_id) {
                return Ok(self.pending.remove(i).unwrap_or_default());
            }
            let qp = &self.qp;
            let n = self
                .cq
                .wait_progress(&mut buf, self.timeout, || qp.progress())?;
            if n == 0 {
                return Err(Fail::Error(format!(
                    "no completion for work request {wr_id:#x}: no progress on the QP for {:?}",
                    self.timeout
                )));
            }
            for c in &buf[..n] {
                if c.wr_id() != wr_id && !c.is_success() && c.status() != WcStatus::WrFlushErr {
                    c.ok()?;
                }
                self.pending.push_back(*c);
            }
        }
    }

    /// Closes the connection: the active side disconnects, the passive side
    /// waits for it; both wait for DISCONNECTED, within the timeout.
    pub fn close(&self, initiate: bool) -> CmdResult {
        if initiate {
            self.qp.disconnect(false)?;
        }
        if !self.qp.wait_disconnected(Some(self.timeout))? {
            return Err(Fail::Error(
                "no DISCONNECTED event before the timeout".into(),
            ));
        }
        Ok(())
    }
}
