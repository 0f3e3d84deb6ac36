// SPDX-License-Identifier: GPL-2.0
//! `srnic blk`: the server of srnic_blk.ko's block devices, and the commands
//! that map and unmap them (Documentation/srnic/blk.rst).
//!
//! `serve` registers an export (a file mapped shared, or anonymous memory)
//! as one memory region with remote read and write access, listens, and
//! accepts each of a client's queue pairs with the export's description as
//! private data (`struct srnic_blk_export`). The client moves the data with
//! RDMA READ and WRITE by itself; the server only answers FLUSH messages
//! (`struct srnic_blk_msg`): it msyncs the range and SENDs FLUSHED. One
//! thread serves each queue pair.

use crate::dial::connect_host;
use crate::output::{Output, Report};
use crate::util::{CmdResult, Fail};
use serde::Serialize;
use srnic::{
    AccessFlags, CompletionQueue, Context, MemoryRegion, MrBuffer, QpCap, QpInitAttr, QueuePair,
    RecvWr, SendWr, Sge, WcStatus, WorkCompletion,
};
use srnic_uapi as abi;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The sysfs directory of srnic_blk.ko.
pub const SYSFS: &str = "/sys/kernel/srnic_blk";
/// The default port of `serve` and `map`.
pub const DEFAULT_PORT: u16 = 7010;
/// The most requests in flight a client may ask for per queue pair.
const MAX_DEPTH: u16 = 128;
const MSG_LEN: usize = std::mem::size_of::<abi::SrnicBlkMsg>();
/// wr_id of the FLUSHED answers (receives are numbered by slot).
const WR_ANSWER: u64 = u64::MAX;

/// What `serve` exports.
pub struct ServeOpts {
    /// The file to export; None: anonymous memory.
    pub file: Option<PathBuf>,
    /// Bytes; None: the file's size.
    pub size: Option<u64>,
    /// The logical block size the client uses.
    pub block_size: u32,
    /// Refuse writes.
    pub read_only: bool,
}

/// The export's memory: a shared mapping of a file, or anonymous memory.
struct Export {
    addr: *mut u8,
    len: usize,
    /// The file, when there is one (msync only then).
    file: bool,
}

// SAFETY: the mapping lives as long as the process (it is never unmapped);
// its bytes are written by the device, not through this pointer.
unsafe impl Send for Export {}
// SAFETY: as above; msync takes no Rust-visible state.
unsafe impl Sync for Export {}

impl Export {
    fn map(opts: &ServeOpts) -> CmdResult<Self> {
        let (fd, len, file) = match &opts.file {
            Some(path) => {
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(path)
                    .map_err(|e| Fail::Error(format!("{}: {e}", path.display())))?;
                let have = f
                    .metadata()
                    .map_err(|e| Fail::Error(format!("{}: {e}", path.display())))?
                    .len();
                let len = opts.size.unwrap_or(have);
                if len > have {
                    f.set_len(len)
                        .map_err(|e| Fail::Error(format!("{}: {e}", path.display())))?;
                }
                // The mapping keeps the file open.
                let fd = f.as_raw_fd();
                std::mem::forget(f);
                (fd, len, true)
            }
            None => {
                let len = opts
                    .size
                    .ok_or_else(|| Fail::Error("an export without --file needs --size".into()))?;
                (-1, len, false)
            }
        };
        if len == 0 || len % u64::from(opts.block_size) != 0 {
            return Err(Fail::Error(format!(
                "the export's size ({len} bytes) must be a non-zero multiple of the block size ({})",
                opts.block_size
            )));
        }
        let len = usize::try_from(len).map_err(|_| Fail::Error("export too large".into()))?;
        let flags = if file {
            libc::MAP_SHARED
        } else {
            libc::MAP_SHARED | libc::MAP_ANONYMOUS
        };
        // SAFETY: a new mapping of `len` bytes; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Fail::Error(format!(
                "cannot map the export: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Self {
            addr: p.cast(),
            len,
            file,
        })
    }

    /// Makes [off, off + len) durable (len 0: all); 0 or a positive errno.
    fn flush(&self, off: u64, len: u64) -> u16 {
        if !self.file {
            return 0;
        }
        let page = 4096u64;
        let end = if len == 0 {
            self.len as u64
        } else {
            off.saturating_add(len).min(self.len as u64)
        };
        let start = if len == 0 {
            0
        } else {
            off.min(end) & !(page - 1)
        };
        if end <= start {
            return 0;
        }
        // SAFETY: a page-aligned range inside the mapping.
        let r = unsafe {
            libc::msync(
                self.addr.add(start as usize).cast(),
                (end - start) as usize,
                libc::MS_SYNC,
            )
        };
        if r == 0 {
            0
        } else {
            std::io::Error::last_os_error()
                .raw_os_error()
                .map_or(libc::EIO as u16, |e| e as u16)
        }
    }
}

fn hello_from(b: &[u8]) -> Option<abi::SrnicBlkHello> {
    let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    if b.len() < std::mem::size_of::<abi::SrnicBlkHello>() {
        return None;
    }
    Some(abi::SrnicBlkHello {
        magic: u32::from_le_bytes(b[0..4].try_into().ok()?),
        version: u16_at(4),
        queue: u16_at(6),
        nr_queues: u16_at(8),
        depth: u16_at(10),
        reserved: u32::from_le_bytes(b[12..16].try_into().ok()?),
    })
}

fn export_bytes(e: &abi::SrnicBlkExport) -> Vec<u8> {
    let mut v = Vec::with_capacity(std::mem::size_of::<abi::SrnicBlkExport>());
    v.extend_from_slice(&e.magic.to_le_bytes());
    v.extend_from_slice(&e.version.to_le_bytes());
    v.extend_from_slice(&e.flags.to_le_bytes());
    v.extend_from_slice(&e.rkey.to_le_bytes());
    v.extend_from_slice(&e.block_size.to_le_bytes());
    v.extend_from_slice(&e.addr.to_le_bytes());
    v.extend_from_slice(&e.size.to_le_bytes());
    debug_assert_eq!(v.len(), std::mem::size_of::<abi::SrnicBlkExport>());
    v
}

fn msg_from(b: &[u8]) -> Option<abi::SrnicBlkMsg> {
    let u64_at =
        |i: usize| -> Option<u64> { Some(u64::from_le_bytes(b[i..i + 8].try_into().ok()?)) };
    if b.len() != MSG_LEN {
        return None;
    }
    Some(abi::SrnicBlkMsg {
        magic: u32::from_le_bytes(b[0..4].try_into().ok()?),
        kind: u16::from_le_bytes([b[4], b[5]]),
        status: u16::from_le_bytes([b[6], b[7]]),
        tag: u64_at(8)?,
        offset: u64_at(16)?,
        length: u64_at(24)?,
    })
}

fn msg_bytes(m: &abi::SrnicBlkMsg) -> [u8; MSG_LEN] {
    let mut b = [0u8; MSG_LEN];
    b[0..4].copy_from_slice(&m.magic.to_le_bytes());
    b[4..6].copy_from_slice(&m.kind.to_le_bytes());
    b[6..8].copy_from_slice(&m.status.to_le_bytes());
    b[8..16].copy_from_slice(&m.tag.to_le_bytes());
    b[16..24].copy_from_slice(&m.offset.to_le_bytes());
    b[24..32].copy_from_slice(&m.length.to_le_bytes());
    b
}

/// One client queue pair's objects.
struct Conn {
    cq: CompletionQueue,
    qp: QueuePair,
    slots: MemoryRegion<'static>,
    depth: usize,
    peer: String,
    queue: u16,
}

impl Conn {
    fn post_slot(&self, slot: usize) -> CmdResult {
        let sge = self.slots.sge(slot * MSG_LEN..(slot + 1) * MSG_LEN)?;
        // SAFETY: a slot is read only after its receive completed, and is
        // posted again only after it was read.
        let wr = unsafe { RecvWr::new(slot as u64, vec![sge]) };
        self.qp.post_recv(&[wr])?;
        Ok(())
    }

    /// Answers FLUSH messages until the connection ends.
    fn serve(self, export: &Export) {
        let mut wc = [WorkCompletion::default(); 16];
        loop {
            let n = match self.cq.wait(&mut wc, None) {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("srnic blk: {} queue {}: {e}", self.peer, self.queue);
                    return;
                }
            };
            for c in &wc[..n] {
                if c.wr_id() == WR_ANSWER {
                    continue;
                }
                if c.status() == WcStatus::WrFlushErr {
                    eprintln!("srnic blk: {} queue {} disconnected", self.peer, self.queue);
                    return;
                }
                if !c.is_success() {
                    eprintln!(
                        "srnic blk: {} queue {}: receive failed: {:?}",
                        self.peer,
                        self.queue,
                        c.status()
                    );
                    return;
                }
                let slot = c.wr_id() as usize;
                if slot >= self.depth {
                    return;
                }
                let bytes = &self.slots.as_slice()[slot * MSG_LEN..][..c.byte_len() as usize];
                let Some(m) = msg_from(bytes).filter(|m| {
                    m.magic == abi::SRNIC_BLK_MAGIC && u32::from(m.kind) == abi::SRNIC_BLK_MSG_FLUSH
                }) else {
                    eprintln!(
                        "srnic blk: {} queue {}: a malformed message; closing",
                        self.peer, self.queue
                    );
                    let _ = self.qp.disconnect(true);
                    return;
                };
                let status = export.flush(m.offset, m.length);
                let answer = msg_bytes(&abi::SrnicBlkMsg {
                    magic: abi::SRNIC_BLK_MAGIC,
                    kind: abi::SRNIC_BLK_MSG_FLUSHED as u16,
                    status,
                    tag: m.tag,
                    offset: m.offset,
                    length: m.length,
                });
                let sent = self.post_slot(slot).and_then(|()| {
                    let sge = Sge::inline(&answer)?;
                    self.qp
                        .post_send(&[SendWr::send(WR_ANSWER, vec![sge]).inline().signaled()])?;
                    Ok(())
                });
                if let Err(e) = sent {
                    eprintln!("srnic blk: {} queue {}: {e}", self.peer, self.queue);
                    return;
                }
            }
        }
    }
}

/// What `srnic blk serve` prints once it listens (it then serves until
/// killed). JSON: `file` (the exported file's path; null: memory), `size`
/// (bytes), `block_size`, `read_only`, `listen` (the address and port).
#[derive(Clone, Debug, Serialize)]
pub struct ServeReport {
    pub file: Option<String>,
    pub size: u64,
    pub block_size: u32,
    pub read_only: bool,
    pub listen: String,
}

impl Report for ServeReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "srnic blk: serving {} ({} bytes, blocks of {}{}) on {}",
            self.file.as_deref().unwrap_or("memory"),
            self.size,
            self.block_size,
            if self.read_only { ", read-only" } else { "" },
            self.listen
        )
    }
}

/// `srnic blk serve`: serves the export until killed.
pub fn serve(
    ctx: &Context,
    net: &crate::session::NetOpts,
    opts: &ServeOpts,
    out: &Output,
) -> CmdResult {
    if !(512..=4096).contains(&opts.block_size) || !opts.block_size.is_power_of_two() {
        return Err(Fail::Error(
            "the block size must be 512, 1024, 2048 or 4096".into(),
        ));
    }
    let export = Arc::new(Export::map(opts)?);
    // SAFETY: the mapping is never unmapped; the process touches its bytes
    // only through msync.
    let buf: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(export.addr, export.len) };
    let pd = ctx.alloc_pd()?;
    let access = if opts.read_only {
        AccessFlags::REMOTE_READ
    } else {
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ
    };
    // SAFETY: the clients own the export's bytes; this program never reads or
    // writes them.
    let mr = unsafe { pd.reg_mr_unchecked(buf, access) }.map_err(|e| {
        Fail::Error(format!(
            "cannot register the export ({} bytes): {e}{}",
            export.len,
            if export.file {
                " (a file must be on tmpfs or hugetlbfs: the kernel pins no pages of a file system that writes them back)"
            } else {
                ""
            }
        ))
    })?;
    let desc = abi::SrnicBlkExport {
        magic: abi::SRNIC_BLK_MAGIC,
        version: abi::SRNIC_BLK_VERSION as u16,
        flags: if opts.read_only {
            abi::SRNIC_BLK_EXPORT_READ_ONLY as u16
        } else {
            0
        },
        rkey: mr.rkey(),
        block_size: opts.block_size,
        addr: mr.addr(),
        size: export.len as u64,
    };
    let listener = crate::session::listen(ctx, net)?;
    out.emit(&ServeReport {
        file: opts.file.as_deref().map(|p| p.display().to_string()),
        size: export.len as u64,
        block_size: opts.block_size,
        read_only: opts.read_only,
        listen: listener.local_addr().to_string(),
    })?;
    loop {
        let Some(req) = listener.get_request(None)? else {
            continue;
        };
        let peer = req.remote_addr().map_or("?".to_string(), |a| a.to_string());
        let hello = hello_from(req.private_data()).filter(|h| h.magic == abi::SRNIC_BLK_MAGIC);
        let Some(hello) = hello else {
            eprintln!("srnic blk: {peer}: not a srnic_blk client; rejected");
            let _ = req.reject(b"srnic blk: not a srnic_blk hello");
            continue;
        };
        if u32::from(hello.version) != abi::SRNIC_BLK_VERSION
            || hello.depth == 0
            || hello.depth > MAX_DEPTH
        {
            eprintln!(
                "srnic blk: {peer}: version {} depth {}; rejected",
                hello.version, hello.depth
            );
            let _ = req.reject(b"srnic blk: unsupported version or depth");
            continue;
        }
        match accept(ctx, &pd, req, &hello, &desc, net, &peer) {
            Ok(conn) => {
                eprintln!(
                    "srnic blk: {peer}: queue {} of {} connected",
                    hello.queue, hello.nr_queues
                );
                let export = export.clone();
                std::thread::spawn(move || conn.serve(&export));
            }
            Err(e) => eprintln!("srnic blk: {peer}: {e}"),
        }
    }
}

fn accept(
    ctx: &Context,
    pd: &srnic::ProtectionDomain,
    req: srnic::ConnectRequest,
    hello: &abi::SrnicBlkHello,
    desc: &abi::SrnicBlkExport,
    net: &crate::session::NetOpts,
    peer: &str,
) -> CmdResult<Conn> {
    let depth = usize::from(hello.depth);
    let cq = ctx.create_cq(3 * depth as u32)?;
    let mut attr = QpInitAttr::new(&cq, &cq);
    attr.cap = QpCap {
        max_send_wr: depth as u32,
        max_recv_wr: depth as u32,
        max_send_sge: 1,
        max_recv_sge: 1,
        max_inline_data: MSG_LEN as u32,
    };
    let qp = pd.create_qp(&attr)?;
    let slots = pd.reg_buffer(MrBuffer::new(depth * MSG_LEN)?, AccessFlags::LOCAL_WRITE)?;
    let conn = Conn {
        cq,
        qp,
        slots,
        depth,
        peer: peer.to_string(),
        queue: hello.queue,
    };
    for slot in 0..depth {
        conn.post_slot(slot)?;
    }
    let mut params = net.params(ctx, export_bytes(desc));
    params.ird = ctx.device_attr().raw.max_ird.max(1);
    req.start_accept(&conn.qp, &params)?;
    conn.qp.wait_established(Some(net.timeout))?;
    Ok(conn)
}

fn sysfs_file(name: &str) -> PathBuf {
    Path::new(SYSFS).join(name)
}

fn write_sysfs(name: &str, line: &str) -> CmdResult {
    std::fs::write(sysfs_file(name), line).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Fail::Error(format!(
                "{SYSFS} is missing: load srnic_blk.ko first (modprobe srnic_blk)"
            ))
        } else {
            Fail::Error(format!("{}: {e}", sysfs_file(name).display()))
        }
    })
}

/// A mapped device, as srnic_blk's `devices` file lists it. JSON: `name`,
/// `server`, `port`, `bytes`, `state` ("live" or "failed").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlkDevice {
    pub name: String,
    pub server: String,
    pub port: u16,
    pub bytes: u64,
    pub state: String,
}

impl BlkDevice {
    /// Parses a line of `devices`: `srnicbN ADDR PORT SIZE live|failed`.
    fn parse(line: &str) -> CmdResult<Self> {
        let bad = || Fail::Error(format!("{SYSFS}/devices: unexpected line {line:?}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        let [name, server, port, bytes, state] = f.as_slice() else {
            return Err(bad());
        };
        Ok(Self {
            name: name.to_string(),
            server: server.to_string(),
            port: port.parse().map_err(|_| bad())?,
            bytes: bytes.parse().map_err(|_| bad())?,
            state: state.to_string(),
        })
    }
}

fn devices() -> CmdResult<Vec<BlkDevice>> {
    match std::fs::read_to_string(sysfs_file("devices")) {
        Ok(s) => s.lines().map(BlkDevice::parse).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Fail::Error(format!(
            "{SYSFS} is missing: load srnic_blk.ko first (modprobe srnic_blk)"
        ))),
        Err(e) => Err(Fail::Error(format!(
            "{}: {e}",
            sysfs_file("devices").display()
        ))),
    }
}

/// What `srnic blk map` prints. Text: the device's path. JSON: `device` (the
/// path), `name`, `server` (the address that connected), `port`.
#[derive(Clone, Debug, Serialize)]
pub struct MapReport {
    pub device: String,
    pub name: String,
    pub server: String,
    pub port: u16,
}

impl Report for MapReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", self.device)
    }
}

/// `srnic blk map`: maps an export (each address of `addr` in turn until
/// one connects); prints the new device's path.
pub fn map(addr: &str, port: u16, out: &Output) -> CmdResult {
    let before = devices()?;
    let (at, ()) = connect_host(addr, port, |a| {
        write_sysfs("map_device", &format!("{} {port}\n", a.ip()))
    })?;
    let new = devices()?
        .into_iter()
        .find(|d| !before.contains(d))
        .ok_or_else(|| Fail::Error("the device was mapped but is not listed".into()))?;
    out.emit(&MapReport {
        device: format!("/dev/{}", new.name),
        name: new.name,
        server: at.ip().to_string(),
        port,
    })
}

/// What `srnic blk unmap` did (text: nothing). JSON: `name` (the device
/// removed, without `/dev/`).
#[derive(Clone, Debug, Serialize)]
pub struct UnmapReport {
    pub name: String,
}

impl Report for UnmapReport {
    fn write_text(&self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// `srnic blk unmap`: removes a device (`srnicb0` or `/dev/srnicb0`).
pub fn unmap(name: &str, out: &Output) -> CmdResult {
    let name = name.trim_start_matches("/dev/");
    write_sysfs("unmap_device", &format!("{name}\n"))?;
    out.emit(&UnmapReport {
        name: name.to_string(),
    })
}

/// What `srnic blk list` prints. Text: one line per device, as srnic_blk
/// lists it (`name server port bytes state`). JSON: `devices`, each with
/// `name`, `server`, `port`, `bytes`, `state`.
#[derive(Clone, Debug, Serialize)]
pub struct ListReport {
    pub devices: Vec<BlkDevice>,
}

impl Report for ListReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        for d in &self.devices {
            writeln!(
                out,
                "{} {} {} {} {}",
                d.name, d.server, d.port, d.bytes, d.state
            )?;
        }
        Ok(())
    }
}

/// `srnic blk list`: the mapped devices.
pub fn list(out: &Output) -> CmdResult {
    out.emit(&ListReport {
        devices: devices()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};

    #[test]
    fn messages_round_trip() {
        let m = abi::SrnicBlkMsg {
            magic: abi::SRNIC_BLK_MAGIC,
            kind: abi::SRNIC_BLK_MSG_FLUSH as u16,
            status: 5,
            tag: 0x1122_3344_5566_7788,
            offset: 4096,
            length: 8192,
        };
        let b = msg_bytes(&m);
        assert_eq!(b.len(), std::mem::size_of::<abi::SrnicBlkMsg>());
        assert_eq!(&b[0..4], b"SRBK");
        assert_eq!(msg_from(&b), Some(m));
        assert_eq!(msg_from(&b[..31]), None);
    }

    #[test]
    fn export_is_the_c_layout() {
        let e = abi::SrnicBlkExport {
            magic: abi::SRNIC_BLK_MAGIC,
            version: 1,
            flags: 1,
            rkey: 0xaabb_ccdd,
            block_size: 512,
            addr: 0x7f00_0000_1000,
            size: 1 << 30,
        };
        let b = export_bytes(&e);
        assert_eq!(b.len(), std::mem::size_of::<abi::SrnicBlkExport>());
        assert_eq!(&b[8..12], &0xaabb_ccddu32.to_le_bytes());
        assert_eq!(&b[16..24], &0x7f00_0000_1000u64.to_le_bytes());
    }

    #[test]
    fn device_lines_and_reports() {
        let line = "srnicb0 192.0.2.2 7010 33554432 live";
        let d = BlkDevice::parse(line).unwrap();
        assert_eq!(d.port, 7010);
        assert_eq!(d.bytes, 32 << 20);
        for bad in [
            "",
            "srnicb0 192.0.2.2 7010 33554432",
            "a b port 1 live",
            "a b 1 2 live x",
        ] {
            assert!(BlkDevice::parse(bad).is_err(), "{bad}");
        }
        let l = ListReport {
            devices: vec![
                d.clone(),
                BlkDevice {
                    name: "srnicb1".into(),
                    state: "failed".into(),
                    ..d
                },
            ],
        };
        assert_eq!(
            render(Format::Text, &l),
            format!("{line}\nsrnicb1 192.0.2.2 7010 33554432 failed\n")
        );
        let v = json(&l);
        assert_eq!(
            v["devices"][0],
            serde_json::json!({"name": "srnicb0", "server": "192.0.2.2", "port": 7010,
                               "bytes": 33554432, "state": "live"})
        );
        assert_eq!(v["devices"][1]["state"], "failed");
        assert_eq!(
            json(&ListReport { devices: vec![] })["devices"],
            serde_json::json!([])
        );
        assert_eq!(render(Format::Text, &ListReport { devices: vec![] }), "");

        let m = MapReport {
            device: "/dev/srnicb0".into(),
            name: "srnicb0".into(),
            server: "192.0.2.2".into(),
            port: 7010,
        };
        assert_eq!(render(Format::Text, &m), "/dev/srnicb0\n");
        assert_eq!(
            json(&m),
            serde_json::json!({"device": "/dev/srnicb0", "name": "srnicb0", "server": "192.0.2.2", "port": 7010})
        );
        let u = UnmapReport {
            name: "srnicb0".into(),
        };
        assert_eq!(render(Format::Text, &u), "");
        assert_eq!(json(&u), serde_json::json!({"name": "srnicb0"}));

        let s = ServeReport {
            file: None,
            size: 1 << 20,
            block_size: 512,
            read_only: true,
            listen: "0.0.0.0:7010".into(),
        };
        assert_eq!(
            render(Format::Text, &s),
            "srnic blk: serving memory (1048576 bytes, blocks of 512, read-only) on 0.0.0.0:7010\n"
        );
        assert_eq!(
            json(&s),
            serde_json::json!({"file": null, "size": 1048576, "block_size": 512,
                               "read_only": true, "listen": "0.0.0.0:7010"})
        );
    }

    #[test]
    fn hello_parses() {
        let mut b = Vec::new();
        b.extend_from_slice(&abi::SRNIC_BLK_MAGIC.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&3u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&32u16.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        let h = hello_from(&b).unwrap();
        assert_eq!((h.queue, h.nr_queues, h.depth), (3, 4, 32));
        assert!(hello_from(&b[..10]).is_none());
    }
}
