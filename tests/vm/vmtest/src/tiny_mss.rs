// SPDX-License-Identifier: GPL-2.0
//! `tiny-mss`: a peer that forces a tiny TCP MSS cannot make srnic send many
//! more packets than the path needs. One process, over loopback (the MSS a
//! peer announces clamps the connection whatever the device's MTU):
//!
//! 1. a plain socket that announces an MSS of `TINY` connects to a srnic
//!    listener and sends an MPA Request: the connection is reset without an
//!    MPA Reply, and no connection request reaches the listener;
//! 2. the same at the `min_mss` parameter's value: srnic accepts; the peer
//!    READs `READ_LEN` bytes and counts the FPDUs of the response, which must
//!    be sized for that MSS: no more than the bound below;
//! 3. srnic connects to a plain listener announcing `TINY`: the QP gets
//!    CONNECT_ERROR with `-EMSGSIZE`, and the listener's connection ends
//!    without a byte of MPA.

use crate::stall::{mpa_start, read_request, read_tagged};
use crate::util::{err, fill, mismatch, params, qp_attr, reg_remote, Checks, Res};
use srnic::{AccessFlags, Context, EventKind, Listener};
use srnic_proto::mpa::rx::RxFramer;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The MSS the hostile peer announces (Linux's own floor for what it sends
/// is 48, `net.ipv4.tcp_min_snd_mss`).
const TINY: libc::c_int = 200;
/// Bytes of the READ in step 2.
const READ_LEN: usize = 64 << 10;
/// Pattern seed of the region read.
const SEED: u64 = 0x33;
/// Bytes of a segment that carry no READ payload, at most: TCP timestamps
/// (12), MPA length (2), the DDP tagged header (14), pad (3) and CRC (4).
const MAX_OVERHEAD: usize = 12 + 2 + 14 + 3 + 4;

fn set_maxseg(fd: libc::c_int, mss: libc::c_int) -> Res {
    crate::util::set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, mss, "TCP_MAXSEG")
}

/// A TCP connection to `to` that announces `mss`.
fn connect_with_mss(to: SocketAddr, mss: libc::c_int, t: Duration) -> Res<TcpStream> {
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        return err(format!("socket: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is a new socket this function owns.
    let s = unsafe { <TcpStream as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    set_maxseg(fd, mss)?;
    let SocketAddr::V4(v4) = to else {
        return err("IPv4 only");
    };
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*v4.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `sin` is a valid IPv4 address of the size given.
    let r = unsafe {
        libc::connect(
            fd,
            std::ptr::from_ref(&sin).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return err(format!("connect: {}", std::io::Error::last_os_error()));
    }
    s.set_read_timeout(Some(t))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// Reads until the peer ends the connection; returns how many bytes came.
fn read_to_end(s: &mut TcpStream) -> Res<usize> {
    let mut n = 0;
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Ok(n),
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok(n),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Runs the scenario; `base` and `base + 1` are the ports used.
pub fn run(c: &mut Checks, base: u16, min_mss: usize, t: Duration) -> Res {
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let laddr = SocketAddr::from(([127, 0, 0, 1], base));
    let l = Listener::new(&ctx, laddr, 4, &params(Vec::new()))?;

    // 1.
    let mut s = connect_with_mss(laddr, TINY, t)?;
    let sent = s.write_all(b"MPA ID Req Frame\x80\x00\x00\x00");
    let got = read_to_end(&mut s)?;
    c.ok(
        format!("a peer announcing MSS {TINY} is refused before MPA ({got} bytes came back, send {sent:?})"),
        got == 0,
    );
    c.ok(
        "no connection request of it reached the listener",
        l.get_request(Some(Duration::ZERO))?.is_none(),
    );

    // 2.
    let mss = libc::c_int::try_from(min_mss)?;
    let mut s = connect_with_mss(laddr, mss, t)?;
    // The peer's MPA start-up waits for srnic's Reply, which waits for the
    // ACCEPT below: it runs on a thread of its own.
    let peer = std::thread::spawn(move || -> Result<(bool, TcpStream), String> {
        let tx = mpa_start(&mut s).map_err(|e| e.to_string())?;
        Ok((tx.crc_on(), s))
    });
    let req = l
        .get_request(Some(t))?
        .ok_or("no connection request from the peer at min_mss")?;
    let cq = ctx.create_cq(16)?;
    let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
    req.start_accept(&qp, &params(Vec::new()))?;
    qp.wait_established(Some(t))?;
    let (crc, mut s) = peer.join().map_err(|_| "the peer thread panicked")??;
    let mut rx = RxFramer::new(crc, false);
    c.ok(
        format!("a peer announcing MSS {mss} (min_mss) is served"),
        true,
    );
    let mut region = reg_remote(&pd, READ_LEN, AccessFlags::REMOTE_READ)?;
    fill(region.as_mut_slice(), SEED, 0);
    let mut txf = srnic_proto::mpa::tx::TxFramer::new(crc, false);
    s.write_all(&read_request(&mut txf, &region.remote(), READ_LEN)?)?;
    // The response: count its FPDUs and check its bytes.
    let (data, fpdus) = read_tagged(&mut s, &mut rx, READ_LEN, Instant::now() + t)?;
    let bound = READ_LEN.div_ceil(min_mss - MAX_OVERHEAD);
    c.ok(
        format!(
            "the {READ_LEN}-byte response came in {fpdus} FPDUs, sized for MSS {mss} (at most {bound}), verified"
        ),
        fpdus <= bound && mismatch(&data, SEED, 0).is_none(),
    );
    drop(s);

    // 3.
    let plain = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], base + 1)))?;
    set_maxseg(plain.as_raw_fd(), TINY)?;
    let qp = pd.create_qp(&qp_attr(&cq, &cq, 16))?;
    qp.start_connect(plain.local_addr()?, &params(Vec::new()))?;
    let (mut conn, _) = plain.accept()?;
    conn.set_read_timeout(Some(t))?;
    let ev = qp.wait_event(Some(t))?;
    c.ok(
        format!("srnic refuses to start MPA to a peer announcing MSS {TINY}: {ev:?}"),
        ev.as_ref()
            .is_some_and(|e| e.kind == EventKind::ConnectError && e.status == -libc::EMSGSIZE),
    );
    let got = read_to_end(&mut conn)?;
    c.eq("bytes of MPA the plain listener received", got, 0);
    Ok(())
}
