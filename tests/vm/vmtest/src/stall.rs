// SPDX-License-Identifier: GPL-2.0
//! `stall`: a peer that requests a large RDMA READ and never reads its socket.
//!
//! The client is that peer: it speaks MPA and RDMAP itself over a plain TCP
//! socket (srnic's own protocol cores build the frames), asks the server for
//! a READ of the whole SIZE-byte region and then reads nothing, so srnic's
//! transmit fills TCP's buffers and the peer's window closes. Meanwhile it
//! connects a second, ordinary srnic QP to the same server process and reads
//! verified data through it. Checked on the server:
//! - the second QP of the same process moves its data while the first is
//!   stuck, and the stuck QP is still connected then (the case also runs
//!   transfers of other processes now, between READY and ERRORED);
//! - the stuck QP fails with QP_ERROR no sooner than the stall timeout and
//!   within the wait bound after it, part way through the response; its
//!   posted receive is flushed; its state is ERROR.
//!
//! Nothing is leaked: the case checks the gauges and kmemleak afterwards.

use crate::util::{
    accept_qp, err, event_after_established, fill, mismatch, mr_from_str, mr_to_str, params,
    qp_attr, reg_remote, Checks, Res, Waiter,
};
use crate::Env;
use srnic::{
    AccessFlags, Context, EventKind, Listener, MrBuffer, QpState, RecvWr, SendWr, WcStatus,
};
use srnic_proto::{
    crc::SoftCrc32c,
    ddp::TxQueues,
    mpa::{
        negotiate::{Initiator, InitiatorOutcome, MpaConfig},
        rx::{RxEvent, RxFramer},
        tx::TxFramer,
        Negotiated,
    },
    rdmap::{
        tx::{OutboundMessage, WorkRequest},
        Body, ReadRequest, MAX_HDR_LEN,
    },
};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The region the second QP reads from, and the size of each READ.
const SIDE_LEN: usize = 1 << 20;
const SIDE_READ: usize = 256 << 10;
/// Pattern seeds of the two regions.
const SEED_STUCK: u64 = 0x51;
const SEED_SIDE: u64 = 0x52;
/// The sink STag the stalled peer names (it never receives the data).
const SINK_STAG: u32 = 0x0100;
/// The stalled peer's receive buffer: small, so its window closes early.
const PEER_RCVBUF: libc::c_int = 64 << 10;

/// What the scenario takes besides the addresses.
pub struct Opts {
    /// Bytes of the READ that the stalled peer requests.
    pub size: usize,
    /// The module's `tx_stall_timeout_ms` (server).
    pub stall_ms: u64,
    /// Written when the first QP is stuck and the second moved its data
    /// (server).
    pub ready: Option<PathBuf>,
    /// Written when the stuck QP failed (server).
    pub errored: Option<PathBuf>,
}

/// Runs the scenario's side.
pub fn run(env: &Env, c: &mut Checks, o: &Opts) -> Res {
    if env.server {
        server(env, c, o)
    } else {
        client(env, c, o)
    }
}

fn touch(p: &Option<PathBuf>, what: &str) -> Res {
    if let Some(p) = p {
        std::fs::write(Path::new(p), what)?;
    }
    Ok(())
}

fn server(env: &Env, c: &mut Checks, o: &Opts) -> Res {
    let t = env.timeout;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let l = Listener::new(&ctx, env.rdma, 2, &params(Vec::new()))?;
    let mut ctl = env.ctl()?;
    // The stuck QP: the stalled peer connects first.
    let cq = ctx.create_cq(16)?;
    let (qp, _) = accept_qp(&l, &pd, &qp_attr(&cq, &cq, 16), t)?;
    let mut r = reg_remote(&pd, o.size, AccessFlags::REMOTE_READ)?;
    fill(r.as_mut_slice(), SEED_STUCK, 0);
    let inbox = pd.reg_buffer(MrBuffer::new(64)?, AccessFlags::LOCAL_WRITE)?;
    // SAFETY: `inbox` is never read; the receive only has to be flushed.
    qp.post_recv(&[unsafe { RecvWr::new(7, vec![inbox.sge(..)?]) }])?;
    // The earliest the stall can start: the peer cannot request the READ
    // before it has the region, so TCP's user timeout (which runs from its
    // first zero-window probe) starts after this. The "requested" message
    // can reach this process later than that.
    let offered = Instant::now();
    ctl.send(format!("mr {}", mr_to_str(&r.remote())))?;
    ctl.expect("requested")?;
    let requested = Instant::now();
    // The second QP of this process, while the first is stuck.
    let cq2 = ctx.create_cq(16)?;
    let (qp2, _) = accept_qp(&l, &pd, &qp_attr(&cq2, &cq2, 16), t)?;
    let mut side = reg_remote(&pd, SIDE_LEN, AccessFlags::REMOTE_READ)?;
    fill(side.as_mut_slice(), SEED_SIDE, 0);
    ctl.send(format!("mr2 {}", mr_to_str(&side.remote())))?;
    ctl.expect("read2")?;
    let a = qp.query()?;
    c.ok(
        format!(
            "server: a second QP of the process moved its data while the first was stuck (first: {}, {} of {} bytes sent)",
            a.state, a.tx_bytes, o.size
        ),
        a.state == QpState::Rts && a.tx_bytes < o.size as u64,
    );
    touch(&o.ready, "stuck\n")?;
    // The stall timeout, then at most the wait bound.
    let bound = Duration::from_millis(o.stall_ms) + t;
    let ev = event_after_established(&qp, requested + bound)?;
    let took = offered.elapsed();
    touch(&o.errored, "errored\n")?;
    let kind = ev.map(|e| e.kind);
    c.ok(
        format!(
            "server: the stuck QP fails with QP_ERROR (event {kind:?} after {} ms)",
            took.as_millis()
        ),
        kind == Some(EventKind::QpError),
    );
    c.ok(
        format!("server: not before the stall timeout ({} ms)", o.stall_ms),
        took >= Duration::from_millis(o.stall_ms),
    );
    let a = qp.query()?;
    c.ok(
        format!(
            "server: the stuck QP is in ERROR, {} of {} bytes sent",
            a.tx_bytes, o.size
        ),
        a.state == QpState::Error && a.tx_bytes > 0 && a.tx_bytes < o.size as u64,
    );
    let wc = Waiter::new(cq.clone()).wait(7, t)?;
    c.ok(
        format!("server: its posted receive is flushed ({})", wc.status()),
        wc.status() == WcStatus::WrFlushErr,
    );
    let a2 = qp2.query()?;
    c.ok(
        format!("server: the second QP is still connected ({})", a2.state),
        a2.state == QpState::Rts,
    );
    ctl.send("done")?;
    ctl.expect("bye")?;
    Ok(())
}

/// A raw peer's connection to the server (`env.rdma`): a plain TCP socket
/// with a receive buffer of `rcvbuf` bytes (and `TCP_NODELAY` if `nodelay`),
/// through MPA start-up ([`mpa_start`]); returns it and the framer for what
/// the peer sends.
pub(crate) fn raw_peer(
    env: &Env,
    rcvbuf: libc::c_int,
    nodelay: bool,
) -> Res<(TcpStream, TxFramer)> {
    let mut s = TcpStream::connect_timeout(&env.rdma, env.timeout)?;
    if nodelay {
        s.set_nodelay(true)?;
    }
    crate::util::set_int_opt(
        s.as_raw_fd(),
        libc::SOL_SOCKET,
        libc::SO_RCVBUF,
        rcvbuf,
        "SO_RCVBUF",
    )?;
    let framer = mpa_start(&mut s)?;
    Ok((s, framer))
}

/// The stalled peer's side of MPA start-up: returns the negotiated CRC and
/// marker settings for what it sends.
pub(crate) fn mpa_start(s: &mut TcpStream) -> Res<TxFramer> {
    let mut cfg = MpaConfig::siw_compatible();
    // The server's IRD/ORD (8) must fit ours.
    cfg.ird = 8;
    cfg.ord = 8;
    let neg = mpa_initiate(s, cfg)?;
    Ok(TxFramer::new(neg.crc_tx, neg.markers_tx))
}

/// A raw peer's MPA start-up as initiator over a plain socket (RFC 5044
/// section 7.1, RFC 6581), asking for `cfg`: the Request, then the Reply.
/// Returns what was negotiated; a reject or a close is an error.
pub(crate) fn mpa_initiate(s: &mut TcpStream, cfg: MpaConfig) -> Res<Negotiated> {
    let mut init = Initiator::new(cfg);
    let mut buf = [0u8; 600];
    let n = init
        .request(&[], &mut buf)
        .map_err(|e| format!("MPA Request: {e:?}"))?;
    s.write_all(&buf[..n])?;
    let mut got = 0usize;
    loop {
        let n = s.read(&mut buf[got..])?;
        if n == 0 {
            return err("the server closed during MPA start-up");
        }
        got += n;
        match init
            .on_bytes(&buf[..got])
            .map_err(|e| format!("MPA Reply: {e:?}"))?
        {
            (_, Some(InitiatorOutcome::Accepted(neg))) => return Ok(neg),
            (_, Some(InitiatorOutcome::Rejected)) => {
                return err("the server rejected the connection")
            }
            (used, None) => {
                // The initiator keeps what it consumed; feed it only new bytes.
                buf.copy_within(used..got, 0);
                got -= used;
            }
        }
    }
}

/// One RDMA Read Request FPDU for the whole of `src`.
pub(crate) fn read_request(
    framer: &mut TxFramer,
    src: &srnic::RemoteMr,
    size: usize,
) -> Res<Vec<u8>> {
    let req = ReadRequest {
        sink_stag: SINK_STAG,
        sink_to: 0,
        read_size: u32::try_from(size)?,
        src_stag: src.rkey,
        src_to: src.addr,
    };
    let mut q = TxQueues::new();
    let mut msg = OutboundMessage::new(WorkRequest::ReadRequest(req), &mut q);
    let seg = msg.next_segment(1024).ok_or("no segment")?;
    let mut hdr = [0u8; MAX_HDR_LEN];
    let hlen = seg.header.emit(&mut hdr).ok_or("header")?;
    let mut out = vec![0u8; 256];
    let n = framer
        .frame_into(&SoftCrc32c, &hdr[..hlen], &[], &mut out)
        .map_err(|e| format!("framing: {e:?}"))?
        .ok_or("frame too long")?;
    out.truncate(n);
    Ok(out)
}

/// Reads one tagged message (RDMA WRITE or Read Response) of `len` bytes
/// from srnic with `rx`, placing its payload at each FPDU's tagged offset;
/// returns the bytes and its FPDU count. Fails on a malformed FPDU or a bad
/// CRC, another message, a close, or at `deadline`.
pub(crate) fn read_tagged(
    s: &mut TcpStream,
    rx: &mut RxFramer,
    len: usize,
    deadline: Instant,
) -> Res<(Vec<u8>, usize)> {
    let mut data = vec![0u8; len];
    let (mut fpdus, mut placed, mut last) = (0usize, 0usize, false);
    // The current FPDU's tagged offset (its payload may span reads).
    let mut to = 0u64;
    let mut buf = vec![0u8; 8192];
    while !last || !rx.at_boundary() {
        if Instant::now() >= deadline {
            return err(format!("the message did not complete ({placed} bytes)"));
        }
        let n = s.read(&mut buf)?;
        if n == 0 {
            return err(format!("srnic closed after {placed} bytes of the message"));
        }
        let mut off = 0;
        while off < n {
            let (used, ev) = rx
                .feed(&SoftCrc32c, &buf[off..n])
                .map_err(|e| format!("FPDU: {e:?}"))?;
            match ev {
                Some(RxEvent::Header { header, .. }) => {
                    let (Body::ReadResponse { to: at, .. } | Body::Write { to: at, .. }) =
                        header.body
                    else {
                        return err(format!("unexpected {:?}", header.opcode()));
                    };
                    to = at;
                    last = header.last;
                    fpdus += 1;
                }
                Some(RxEvent::Payload {
                    data: d,
                    seg_offset,
                    ..
                }) => {
                    let at = usize::try_from(to)? + usize::from(seg_offset);
                    data.get_mut(at..at + d.len())
                        .ok_or("payload outside the sink")?
                        .copy_from_slice(d);
                    placed += d.len();
                }
                Some(RxEvent::End) | None => {}
            }
            off += used;
        }
    }
    if placed != len {
        return err(format!("the message placed {placed} bytes, not {len}"));
    }
    Ok((data, fpdus))
}

fn client(env: &Env, c: &mut Checks, o: &Opts) -> Res {
    let t = env.timeout;
    let mut ctl = env.ctl()?;
    let (mut s, mut framer) = raw_peer(env, PEER_RCVBUF, true)?;
    // The server names its region once the connection is established.
    let src = mr_from_str(ctl.expect("mr")?.first().ok_or("no region")?)?;
    s.write_all(&read_request(&mut framer, &src, o.size)?)?;
    ctl.send("requested")?;
    println!(
        "client: requested a READ of {} bytes, reading nothing from now on",
        o.size
    );
    // The ordinary QP, from the same server process.
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(16)?;
    let qp = crate::util::connect_qp(&pd, &qp_attr(&cq, &cq, 16), env.rdma, Vec::new(), t)?;
    let side = mr_from_str(ctl.expect("mr2")?.first().ok_or("no region")?)?;
    let sink = reg_remote(&pd, SIDE_LEN, AccessFlags::LOCAL_WRITE)?;
    let mut waiter = Waiter::new(cq.clone());
    for (i, off) in (0..SIDE_LEN).step_by(SIDE_READ).enumerate() {
        // SAFETY: `sink` is read only after the READ completed.
        let rd = unsafe {
            SendWr::rdma_read(
                i as u64,
                vec![sink.sge(off..off + SIDE_READ)?],
                side.at(off as u64),
            )
        };
        qp.post_send(&[rd.signaled()])?;
        waiter.wait_ok(i as u64, t)?;
    }
    c.ok(
        "client: READs on the ordinary QP bring verified data while the other connection stalls",
        mismatch(sink.as_slice(), SEED_SIDE, 0).is_none(),
    );
    ctl.send("read2")?;
    // Hold the stalled connection, unread, until the server is done.
    ctl.expect("done")?;
    drop(s);
    ctl.send("bye")?;
    Ok(())
}
