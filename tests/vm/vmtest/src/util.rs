// SPDX-License-Identifier: GPL-2.0
//! What every scenario shares: the check log, the TCP control channel between
//! the two sides, the test pattern, connection set-up and completion waits.

use srnic::{
    CompletionQueue, ConnParams, Listener, ProtectionDomain, QpCap, QpInitAttr, QueuePair,
    RemoteMr, WorkCompletion,
};
use std::collections::VecDeque;
use std::fmt::Debug;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Any failure that ends a scenario early (printed as one `FAIL:` line).
pub type Res<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// Builds the error of a failed scenario step.
pub fn err<T>(msg: impl Into<String>) -> Res<T> {
    Err(msg.into().into())
}

/// The log of assertions: one `ok: ...` or `FAIL: ...` line each.
#[derive(Debug, Default)]
pub struct Checks {
    /// Assertions that held.
    pub passed: u32,
    /// Assertions that did not.
    pub failed: u32,
}

impl Checks {
    /// Records `cond` for `what`; returns it.
    pub fn ok(&mut self, what: impl AsRef<str>, cond: bool) -> bool {
        if cond {
            println!("ok: {}", what.as_ref());
            self.passed += 1;
        } else {
            println!("FAIL: {}", what.as_ref());
            self.failed += 1;
        }
        cond
    }

    /// Records `got == want` for `what`.
    pub fn eq<T: PartialEq + Debug>(&mut self, what: impl AsRef<str>, got: T, want: T) -> bool {
        let what = what.as_ref();
        if got == want {
            self.ok(format!("{what} ({got:?})"), true)
        } else {
            self.ok(format!("{what}: got {got:?}, want {want:?}"), false)
        }
    }

    /// Records `got == want` for a TERMINATE word (printed in hex).
    pub fn term(&mut self, what: impl AsRef<str>, got: u32, want: u32) -> bool {
        let what = what.as_ref();
        if got == want {
            self.ok(format!("{what} (term {got:#x})"), true)
        } else {
            self.ok(format!("{what}: term {got:#x}, want {want:#x}"), false)
        }
    }

    /// A scenario step that failed outright.
    pub fn fatal(&mut self, e: &dyn std::fmt::Display) {
        println!("FAIL: {e}");
        self.failed += 1;
    }
}

/// The control channel: newline-terminated text messages over a plain TCP
/// connection next to the RDMA connections (so it survives their failures).
pub struct Ctl {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

impl Ctl {
    /// Server: waits up to `timeout` for the client on `port`.
    pub fn serve(port: u16, timeout: Duration) -> Res<Self> {
        let l = TcpListener::bind(("0.0.0.0", port))?;
        l.set_nonblocking(true)?;
        let deadline = Instant::now() + timeout;
        loop {
            match l.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false)?;
                    return Self::from_stream(s, timeout);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if Instant::now() > deadline {
                        return err(format!("no control connection on port {port}"));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Client: connects to the server's control port, retrying until `timeout`
    /// (the server may still be starting).
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Res<Self> {
        let deadline = Instant::now() + timeout;
        loop {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
                Ok(s) => return Self::from_stream(s, timeout),
                Err(e) if Instant::now() > deadline => {
                    return err(format!("control connection to {addr}: {e}"))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    fn from_stream(s: TcpStream, timeout: Duration) -> Res<Self> {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(timeout))?;
        Ok(Self {
            r: BufReader::new(s.try_clone()?),
            w: s,
        })
    }

    /// Sends one message.
    pub fn send(&mut self, msg: impl AsRef<str>) -> Res {
        self.w.write_all(format!("{}\n", msg.as_ref()).as_bytes())?;
        Ok(())
    }

    /// Receives one message, split into words.
    pub fn recv(&mut self) -> Res<Vec<String>> {
        let mut line = String::new();
        if self.r.read_line(&mut line)? == 0 {
            return err("the control connection closed");
        }
        Ok(line.split_whitespace().map(str::to_owned).collect())
    }

    /// Receives one message whose first word must be `word`; returns the rest.
    pub fn expect(&mut self, word: &str) -> Res<Vec<String>> {
        let m = self.recv()?;
        if m.first().map(String::as_str) != Some(word) {
            return err(format!("control: expected {word:?}, got {m:?}"));
        }
        Ok(m[1..].to_vec())
    }
}

/// A region as a control message field: `addr:len:rkey` in hex.
pub fn mr_to_str(m: &RemoteMr) -> String {
    format!("{:x}:{:x}:{:x}", m.addr, m.len, m.rkey)
}

/// Parses [`mr_to_str`].
pub fn mr_from_str(s: &str) -> Res<RemoteMr> {
    let v: Vec<_> = s.split(':').collect();
    let [a, l, k] = v[..] else {
        return err(format!("bad region {s:?}"));
    };
    Ok(RemoteMr {
        addr: u64::from_str_radix(a, 16)?,
        len: u64::from_str_radix(l, 16)?,
        rkey: u32::from_str_radix(k, 16)?,
    })
}

/// The pattern byte at `offset` for `seed`.
pub fn pat(seed: u64, offset: usize) -> u8 {
    let mut x = (offset as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(seed.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (x >> 56) as u8
}

/// Fills `buf` with the pattern of `seed` from offset `base`.
pub fn fill(buf: &mut [u8], seed: u64, base: usize) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pat(seed, base + i);
    }
}

/// The first offset where `buf` differs from the pattern of `seed` from `base`.
pub fn mismatch(buf: &[u8], seed: u64, base: usize) -> Option<usize> {
    buf.iter()
        .enumerate()
        .position(|(i, b)| *b != pat(seed, base + i))
}

/// Resolves `host` with `port`.
pub fn resolve(host: &str, port: u16) -> Res<SocketAddr> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| format!("{host} has no address").into())
}

/// QP attributes with `depth` work requests per queue and 4 SGEs.
pub fn qp_attr<'a>(
    scq: &'a CompletionQueue,
    rcq: &'a CompletionQueue,
    depth: u32,
) -> QpInitAttr<'a> {
    let mut a = QpInitAttr::new(scq, rcq);
    a.cap = QpCap {
        max_send_wr: depth,
        max_recv_wr: depth,
        max_send_sge: 4,
        max_recv_sge: 4,
        max_inline_data: 0,
    };
    a
}

/// IRD/ORD 8, no MPA options.
pub fn params(private_data: Vec<u8>) -> ConnParams {
    ConnParams {
        private_data,
        ird: 8,
        ord: 8,
        ..Default::default()
    }
}

/// Server: waits for the next connection request on `l`, accepts it onto a new
/// QP of `pd` and waits until it is established. Returns the QP and the
/// request's private data.
pub fn accept_qp(
    l: &Listener,
    pd: &ProtectionDomain,
    attr: &QpInitAttr<'_>,
    timeout: Duration,
) -> Res<(QueuePair, Vec<u8>)> {
    let req = l
        .get_request(Some(timeout))?
        .ok_or("no connection request before the timeout")?;
    let pdata = req.private_data().to_vec();
    let qp = pd.create_qp(attr)?;
    req.start_accept(&qp, &params(Vec::new()))?;
    qp.wait_established(Some(timeout))?;
    Ok((qp, pdata))
}

/// Client: a new QP of `pd` connected to `addr`.
pub fn connect_qp(
    pd: &ProtectionDomain,
    attr: &QpInitAttr<'_>,
    addr: SocketAddr,
    private_data: Vec<u8>,
    timeout: Duration,
) -> Res<QueuePair> {
    let qp = pd.create_qp(attr)?;
    qp.start_connect(addr, &params(private_data))?;
    qp.wait_established(Some(timeout))?;
    Ok(qp)
}

/// Completions of one CQ, waited for by work request id.
pub struct Waiter {
    /// The CQ.
    pub cq: CompletionQueue,
    stash: VecDeque<WorkCompletion>,
}

impl Waiter {
    /// Wraps `cq`.
    pub fn new(cq: CompletionQueue) -> Self {
        Self {
            cq,
            stash: VecDeque::new(),
        }
    }

    /// The next completion, waiting up to `timeout`.
    pub fn next(&mut self, timeout: Duration) -> Res<Option<WorkCompletion>> {
        if let Some(c) = self.stash.pop_front() {
            return Ok(Some(c));
        }
        let mut buf = [WorkCompletion::default(); 32];
        let n = self.cq.wait(&mut buf, Some(timeout))?;
        self.stash.extend(&buf[..n]);
        Ok(self.stash.pop_front())
    }

    /// The completion of `wr_id` (others stay queued), waiting up to `timeout`.
    pub fn wait(&mut self, wr_id: u64, timeout: Duration) -> Res<WorkCompletion> {
        let deadline = Instant::now() + timeout;
        let mut buf = [WorkCompletion::default(); 32];
        loop {
            if let Some(i) = self.stash.iter().position(|c| c.wr_id() == wr_id) {
                return Ok(self.stash.remove(i).unwrap_or_default());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return err(format!("no completion of work request {wr_id:#x}"));
            }
            let n = self.cq.wait(&mut buf, Some(left))?;
            self.stash.extend(&buf[..n]);
        }
    }

    /// Like [`Self::wait`], and the completion must be successful.
    pub fn wait_ok(&mut self, wr_id: u64, timeout: Duration) -> Res<WorkCompletion> {
        let c = self.wait(wr_id, timeout)?;
        c.ok()?;
        Ok(c)
    }
}

/// The QP's first event other than ESTABLISHED (which a connection that
/// has just come up may still have queued), waiting until `deadline`;
/// `None` when none came by then.
pub fn event_after_established(qp: &QueuePair, deadline: Instant) -> Res<Option<srnic::Event>> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match qp.wait_event(Some(left))? {
            Some(e) if e.kind == srnic::EventKind::Established => continue,
            other => return Ok(other),
        }
    }
}

/// One counter of `SRNIC_IOCTL_QUERY_STATS`.
pub fn stat(ctx: &srnic::Context, name: &str) -> Res<u64> {
    ctx.stats()?
        .counters()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| format!("no counter {name}").into())
}

/// Registers a zeroed buffer of `len` bytes with any access rights, including
/// REMOTE_WRITE.
///
/// Every scenario reads a remotely writable region only when its protocol says
/// that the peer is not writing it (after the peer's write was placed and
/// reported over the control connection, or after the QP failed), and the
/// content checks are the point of the test: a concurrent remote write is
/// exactly what they would catch.
pub fn reg_remote(
    pd: &srnic::ProtectionDomain,
    len: usize,
    access: srnic::AccessFlags,
) -> Res<srnic::MemoryRegion<'static>> {
    let buf = srnic::MrBuffer::new(len)?;
    // SAFETY: see above: the program never touches the bytes while the peer
    // may write them.
    Ok(unsafe { pd.reg_buffer_unchecked(buf, access) }?)
}

/// Sets the integer socket option `opt` of `level` on `fd` to `val`
/// (`name` says which, in the error).
pub fn set_int_opt(
    fd: libc::c_int,
    level: libc::c_int,
    opt: libc::c_int,
    val: libc::c_int,
    name: &str,
) -> Res {
    // SAFETY: an int option value of the right size, for an open socket.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            std::ptr::from_ref(&val).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return err(format!("{name}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}
