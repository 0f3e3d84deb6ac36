// SPDX-License-Identifier: GPL-2.0
//! `abi-fuzz`: random sequences of `/dev/srnic` calls with random and boundary
//! arguments, in the manner of syzkaller, in miniature.
//!
//! T threads share two open files of `/dev/srnic` and run random programs of
//! raw `ioctl`/`read`/`write`/`poll` calls (no library: bad arguments must
//! reach the kernel). Arguments mix handles remembered from earlier successful
//! creates (of this file, and of the other file), destroyed handles, 0,
//! boundary and random values; `size` fields that are wrong, reserved fields
//! that are not zero, command numbers that are unknown or encoded with another
//! size; user pointers that are NULL, below `mmap_min_addr`, kernel addresses,
//! inaccessible (`PROT_NONE`), read-only, or that run into an inaccessible
//! page; memory regions whose buffer is unmapped while registered; CQ rings
//! mapped with right and wrong offsets, lengths, protections and sharing,
//! their indices and entries overwritten with random values while the module
//! fills them (an executable or private mapping that succeeds is a
//! violation). A thread
//! now and then replaces one of the files (open a new one, `dup3` it over the
//! old descriptor number, so the number never names anything but
//! `/dev/srnic`, while other threads may be inside a call on the old file).
//! Listeners and connects use a small port range on 127.0.0.1 (and `--peer`),
//! so connections really form between the fuzzer's own threads.
//!
//! With `--fail` every call runs under the kernel's fault injection for its
//! thread (`make-it-fail`; the case configures failslab and fail_page_alloc
//! with `task-filter`): allocations srnic makes inside the call fail at
//! random. ENOMEM and EFAULT (a user page that could not be faulted in) are
//! then tolerated from every call; everything else is judged as usual.
//!
//! K child processes (this program again, with the hidden `--child`) run the
//! same loop on files of their own (one of them blocking, so a thread may
//! sleep in `read()`) and are killed with SIGKILL at random moments and
//! restarted.
//!
//! Pointers the kernel may write through are never random: they are this
//! program's scratch pages or addresses that fault, so the kernel cannot
//! corrupt the fuzzer; regions are registered only in a separate arena between
//! guard pages (a peer may write into them at any moment), in a shared
//! read-only page, or at addresses that fault. The run is deterministic per `--seed` as far as the
//! random choices go (each thread's generator derives from it); timing is not.
//!
//! At the end it prints every command's calls and the histogram of results. It
//! exits 1 only for a result the ABI (Documentation/srnic/uapi.rst) forbids:
//! success, or another errno, where the ABI prescribes one (ENOTTY for an
//! unknown command, EINVAL for a wrong encoding, size or reserved field, EFAULT
//! for an unreadable argument), success of a command whose argument cannot be
//! written back, a `read()` that returns part of a record, a `write()` whose
//! count is not a record boundary, `poll()` without POLLOUT, or an errno
//! outside the command's documented set. Errnos uapi.rst does not list are
//! only reported ("undocumented") when they are in the command's short list
//! of tolerated ones, or when the command reaches kernel sockets, netdevs or
//! page pinning (`Op::strict`), whose errnos cannot be listed with certainty.
//! It also exits 1 when `/dev/srnic` cannot be opened. The kernel's
//! health (KASAN, lockdep, kmemleak, WARN, the gauges back to idle) is the
//! harness's to check: tests/vm/cases/abi_fuzz.sh.

use srnic::uapi::*;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::io::RawFd;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What the command line gives.
#[derive(Clone, Debug)]
pub struct Opts {
    pub seconds: u64,
    pub threads: usize,
    pub seed: u64,
    pub children: usize,
    pub peer: Option<std::net::Ipv4Addr>,
    pub port_base: u16,
    pub device: String,
    pub child: bool,
    /// Fault injection: every call runs with `make-it-fail` set for its
    /// thread (see [`injected`]).
    pub fail: bool,
}

// ---- Fault injection ----

/// Whether calls run under fault injection (`--fail`).
static INJECT: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's `/proc/thread-self/make-it-fail`, opened once.
    static MAKE_IT_FAIL: std::cell::RefCell<Option<std::fs::File>> = const { std::cell::RefCell::new(None) };
}

fn set_make_it_fail(on: bool) {
    use std::os::unix::fs::FileExt;
    MAKE_IT_FAIL.with(|m| {
        let mut m = m.borrow_mut();
        if m.is_none() {
            *m = std::fs::OpenOptions::new()
                .write(true)
                .open("/proc/thread-self/make-it-fail")
                .ok();
        }
        if let Some(f) = m.as_ref() {
            let _ = f.write_at(if on { b"1" } else { b"0" }, 0);
        }
    });
}

/// Runs one raw call, under fault injection with `--fail`: the kernel's
/// failslab and fail_page_alloc (with `task-filter`, set up by the case) fail
/// allocations of this thread only while it is inside the call, never while
/// this program runs its own code (a failed page fault of its own would be
/// an OOM, not an error).
fn injected<R>(call: impl FnOnce() -> R) -> R {
    if !INJECT.load(Ordering::Relaxed) {
        return call();
    }
    set_make_it_fail(true);
    let r = call();
    set_make_it_fail(false);
    r
}

/// Whether `e` may be the effect of an injected failure rather than of the
/// arguments: ENOMEM, and EFAULT (a user page the call touches could not be
/// faulted in).
fn injection_errno(e: i32) -> bool {
    INJECT.load(Ordering::Relaxed) && matches!(e, libc::ENOMEM | libc::EFAULT)
}

// ---- Random numbers ----

/// splitmix64: small, fast, and good enough to pick arguments.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in 0..n (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with `pct` percent probability.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    pub fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len() as u64) as usize]
    }
}

/// The seed of thread `i` (or child restart `i`) of a run with `seed`.
pub fn derive(seed: u64, i: u64) -> u64 {
    Rng::new(seed ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// Boundary values of 32-bit fields.
pub const BOUND_U32: [u32; 16] = [
    0,
    1,
    2,
    7,
    255,
    256,
    4095,
    4096,
    4097,
    65535,
    65536,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFE,
    0xFFFF_FFFF,
    1024,
];

/// Boundary values of 64-bit fields.
pub const BOUND_U64: [u64; 14] = [
    0,
    1,
    4095,
    4096,
    4097,
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    0x7FFF_FFFF_FFFF,
    0x8000_0000_0000,
    0x7FFF_FFFF_FFFF_FFFF,
    0x8000_0000_0000_0000,
    u64::MAX - 4095,
    u64::MAX,
];

/// A boundary value (half the time) or a random one, small or full width.
pub fn any_u32(r: &mut Rng) -> u32 {
    match r.below(4) {
        0 | 1 => r.pick(&BOUND_U32),
        2 => r.below(64) as u32,
        _ => r.next_u64() as u32,
    }
}

pub fn any_u64(r: &mut Rng) -> u64 {
    match r.below(4) {
        0 | 1 => r.pick(&BOUND_U64),
        2 => r.below(1 << 20),
        _ => r.next_u64(),
    }
}

/// A `size` field that is not `good`.
pub fn bad_size(r: &mut Rng, good: u32) -> u32 {
    let v = match r.below(6) {
        0 => 0,
        1 => good - 1,
        2 => good + 1,
        3 => good.wrapping_sub(8),
        4 => u32::MAX,
        _ => any_u32(r),
    };
    if v == good {
        good + 8
    } else {
        v
    }
}

// ---- Command numbers ----

const IOC_NRBITS: u32 = 8;
const IOC_TYPEBITS: u32 = 8;
const IOC_SIZEBITS: u32 = 14;
const IOC_TYPESHIFT: u32 = IOC_NRBITS;
const IOC_SIZESHIFT: u32 = IOC_TYPESHIFT + IOC_TYPEBITS;
const IOC_DIRSHIFT: u32 = IOC_SIZESHIFT + IOC_SIZEBITS;

pub fn ioc(dir: u32, ty: u32, nr: u32, size: u32) -> u32 {
    (dir << IOC_DIRSHIFT) | (ty << IOC_TYPESHIFT) | nr | (size << IOC_SIZESHIFT)
}

pub fn ioc_type(cmd: u32) -> u32 {
    (cmd >> IOC_TYPESHIFT) & 0xFF
}

pub fn ioc_size(cmd: u32) -> u32 {
    (cmd >> IOC_SIZESHIFT) & ((1 << IOC_SIZEBITS) - 1)
}

pub fn ioc_nr(cmd: u32) -> u32 {
    cmd & 0xFF
}

/// Numbers srnic defines: those of the header's `SRNIC_IOCTL_*` commands.
pub fn known_nr(nr: u32) -> bool {
    srnic::uapi::constants("SRNIC_IOCTL_")
        .filter(|c| c.name != "SRNIC_IOCTL_MAGIC")
        .any(|c| ioc_nr(c.value as u32) == nr)
}

/// Magics the VFS answers itself before the driver sees the command
/// (`do_vfs_ioctl`: FIOCLEX, FIONBIO, FIGETBSZ, FICLONE, FS_IOC_*, ...).
pub const VFS_MAGICS: [u32; 6] = [0x00, 0x15, 0x54, 0x58, 0x66, 0x94];

/// A command of another driver's magic: srnic answers ENOTTY.
pub fn foreign_cmd(r: &mut Rng) -> u32 {
    let mut ty = 1 + r.below(255) as u32;
    while ty == SRNIC_IOCTL_MAGIC || VFS_MAGICS.contains(&ty) {
        ty = 1 + r.below(255) as u32;
    }
    ioc(
        r.below(4) as u32,
        ty,
        r.below(256) as u32,
        r.below(1 << 14) as u32,
    )
}

/// A command with srnic's magic and a number it does not define: ENOTTY.
pub fn unknown_cmd(r: &mut Rng) -> u32 {
    let mut nr = r.below(256) as u32;
    while known_nr(nr) {
        let any = r.below(256) as u32;
        nr = r.pick(&[0x14, 0x20, 0x3F, 0x46, 0x5F, 0x66, 0x7F, 0xFF, any]);
    }
    ioc(
        r.below(4) as u32,
        SRNIC_IOCTL_MAGIC,
        nr,
        r.below(1 << 14) as u32,
    )
}

/// `cmd` with another size or direction (never `cmd` itself): EINVAL.
pub fn misencode(r: &mut Rng, cmd: u32) -> u32 {
    let dir = cmd >> IOC_DIRSHIFT;
    let size = (cmd >> IOC_SIZESHIFT) & ((1 << IOC_SIZEBITS) - 1);
    let ty = ioc_type(cmd);
    let nr = ioc_nr(cmd);
    let out = match r.below(3) {
        0 => ioc((dir + 1 + r.below(3) as u32) % 4, ty, nr, size),
        1 => ioc(
            dir,
            ty,
            nr,
            (size + 1 + r.below(64) as u32) % (1 << IOC_SIZEBITS),
        ),
        _ => ioc(
            dir,
            ty,
            nr,
            r.pick(&[0, 4, 8, size / 2, size * 2, (1 << IOC_SIZEBITS) - 1]),
        ),
    };
    if out == cmd {
        ioc(dir, ty, nr, size ^ 1)
    } else {
        out
    }
}

// ---- The commands and their errnos ----

/// Every operation the fuzzer makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    QueryDevice,
    AllocPd,
    DeallocPd,
    RegMr,
    DeregMr,
    CreateCq,
    DestroyCq,
    ReqNotifyCq,
    PollCq,
    CreateQp,
    DestroyQp,
    QueryQp,
    Listen,
    DestroyListener,
    Connect,
    Accept,
    Reject,
    Disconnect,
    QueryStats,
    QueryRes,
    RmppSetNode,
    RmppCreateEp,
    RmppDestroyEp,
    RmppSend,
    RmppPostRecv,
    RmppQueryStats,
    VmtpCreate,
    VmtpDestroy,
    VmtpRequest,
    VmtpPostRecv,
    VmtpRespond,
    VmtpQueryStats,
    UnknownCmd,
    ForeignCmd,
    Read,
    Write,
    Poll,
    Reopen,
    UnmapMr,
    MapCq,
}

/// Every operation, with its weight in the random programs.
pub const OPS: [(Op, u64); 40] = [
    (Op::QueryDevice, 2),
    (Op::AllocPd, 4),
    (Op::DeallocPd, 3),
    (Op::RegMr, 5),
    (Op::DeregMr, 3),
    (Op::CreateCq, 5),
    (Op::DestroyCq, 3),
    (Op::ReqNotifyCq, 3),
    (Op::PollCq, 5),
    (Op::CreateQp, 6),
    (Op::DestroyQp, 3),
    (Op::QueryQp, 3),
    (Op::Listen, 3),
    (Op::DestroyListener, 1),
    (Op::Connect, 5),
    (Op::Accept, 4),
    (Op::Reject, 1),
    (Op::Disconnect, 2),
    (Op::QueryStats, 1),
    (Op::QueryRes, 1),
    (Op::RmppSetNode, 1),
    (Op::RmppCreateEp, 1),
    (Op::RmppDestroyEp, 1),
    (Op::RmppSend, 1),
    (Op::RmppPostRecv, 1),
    (Op::RmppQueryStats, 1),
    (Op::VmtpCreate, 2),
    (Op::VmtpDestroy, 1),
    (Op::VmtpRequest, 2),
    (Op::VmtpPostRecv, 2),
    (Op::VmtpRespond, 2),
    (Op::VmtpQueryStats, 1),
    (Op::UnknownCmd, 2),
    (Op::ForeignCmd, 1),
    (Op::Read, 8),
    (Op::Write, 12),
    (Op::Poll, 3),
    (Op::Reopen, 1),
    (Op::UnmapMr, 1),
    (Op::MapCq, 3),
];

/// The errors every command may answer (uapi.rst, "Errors common to every command";
/// E2BIG only for a larger structure with non-zero extra bytes, which the
/// fuzzer does not make).
const COMMON: [i32; 4] = [libc::ENOTTY, libc::EINVAL, libc::E2BIG, libc::EFAULT];

impl Op {
    pub fn name(self) -> String {
        let s = format!("{self:?}");
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    /// The ioctl number, for the srnic commands.
    pub fn cmd(self) -> Option<u32> {
        Some(match self {
            Op::QueryDevice => SRNIC_IOCTL_QUERY_DEVICE,
            Op::AllocPd => SRNIC_IOCTL_ALLOC_PD,
            Op::DeallocPd => SRNIC_IOCTL_DEALLOC_PD,
            Op::RegMr => SRNIC_IOCTL_REG_MR,
            Op::DeregMr => SRNIC_IOCTL_DEREG_MR,
            Op::CreateCq => SRNIC_IOCTL_CREATE_CQ,
            Op::DestroyCq => SRNIC_IOCTL_DESTROY_CQ,
            Op::ReqNotifyCq => SRNIC_IOCTL_REQ_NOTIFY_CQ,
            Op::PollCq => SRNIC_IOCTL_POLL_CQ,
            Op::CreateQp => SRNIC_IOCTL_CREATE_QP,
            Op::DestroyQp => SRNIC_IOCTL_DESTROY_QP,
            Op::QueryQp => SRNIC_IOCTL_QUERY_QP,
            Op::Listen => SRNIC_IOCTL_LISTEN,
            Op::DestroyListener => SRNIC_IOCTL_DESTROY_LISTENER,
            Op::Connect => SRNIC_IOCTL_CONNECT,
            Op::Accept => SRNIC_IOCTL_ACCEPT,
            Op::Reject => SRNIC_IOCTL_REJECT,
            Op::Disconnect => SRNIC_IOCTL_DISCONNECT,
            Op::QueryStats => SRNIC_IOCTL_QUERY_STATS,
            Op::QueryRes => SRNIC_IOCTL_QUERY_RES,
            Op::RmppSetNode => SRNIC_IOCTL_RMPP_SET_NODE,
            Op::RmppCreateEp => SRNIC_IOCTL_RMPP_CREATE_EP,
            Op::RmppDestroyEp => SRNIC_IOCTL_RMPP_DESTROY_EP,
            Op::RmppSend => SRNIC_IOCTL_RMPP_SEND,
            Op::RmppPostRecv => SRNIC_IOCTL_RMPP_POST_RECV,
            Op::RmppQueryStats => SRNIC_IOCTL_RMPP_QUERY_STATS,
            Op::VmtpCreate => SRNIC_IOCTL_VMTP_CREATE,
            Op::VmtpDestroy => SRNIC_IOCTL_VMTP_DESTROY,
            Op::VmtpRequest => SRNIC_IOCTL_VMTP_REQUEST,
            Op::VmtpPostRecv => SRNIC_IOCTL_VMTP_POST_RECV,
            Op::VmtpRespond => SRNIC_IOCTL_VMTP_RESPOND,
            Op::VmtpQueryStats => SRNIC_IOCTL_VMTP_QUERY_STATS,
            _ => return None,
        })
    }

    /// The size of the command's structure in its first version: the least
    /// srnic takes (uapi.rst, "Structures grow").
    pub fn min_size(self) -> u32 {
        match self {
            Op::QueryStats => SRNIC_STATS_SIZE_V1,
            _ => self.cmd().map_or(0, ioc_size),
        }
    }

    /// Destroy commands take a `struct srnic_handle_arg` and write nothing back.
    pub fn takes_handle(self) -> bool {
        matches!(
            self,
            Op::DeallocPd
                | Op::DeregMr
                | Op::DestroyCq
                | Op::DestroyQp
                | Op::DestroyListener
                | Op::RmppDestroyEp
                | Op::VmtpDestroy
        )
    }

    /// The errnos uapi.rst documents for this operation (for the ioctls: the
    /// common ENOTTY, EINVAL, EFAULT and the command's "further errors").
    pub fn documented(self) -> Vec<i32> {
        use libc::*;
        let further: &[i32] = match self {
            Op::AllocPd | Op::CreateCq | Op::CreateQp => &[ENOMEM],
            Op::DeallocPd | Op::DestroyCq => &[EBUSY],
            Op::RegMr => &[ENOMEM, EFAULT],
            // "ENOMEM ... the same for every command that creates an object".
            Op::Listen => &[EADDRINUSE, EACCES, EAFNOSUPPORT, ENOMEM],
            Op::Connect => &[EAFNOSUPPORT],
            Op::RmppSetNode => &[EPERM, ENODEV, ENOENT],
            Op::RmppCreateEp => &[EPERM, EADDRINUSE, ENOMEM, ENODEV, EOPNOTSUPP, EAGAIN],
            Op::RmppSend => &[EAGAIN, EHOSTUNREACH, EACCES],
            Op::RmppPostRecv => &[EAGAIN],
            // uapi.rst, the VMTP commands.
            Op::VmtpCreate => &[EADDRNOTAVAIL, EADDRINUSE, ENOSPC, ENOMEM, EAGAIN],
            Op::VmtpRequest => &[EBUSY, EACCES, ESHUTDOWN],
            Op::VmtpPostRecv => &[EAGAIN, EACCES, ESHUTDOWN],
            Op::VmtpRespond => &[ENOENT, EAGAIN, EACCES, ESHUTDOWN],
            Op::UnknownCmd | Op::ForeignCmd => return vec![ENOTTY],
            Op::Read => return vec![EINVAL, EAGAIN, EFAULT],
            Op::Write => return vec![EINVAL, EACCES, ENOMEM, EFAULT],
            Op::Poll | Op::Reopen | Op::UnmapMr => return vec![],
            // uapi.rst, the CQ ring: EINVAL for a private, mis-sized or
            // unknown mapping, EPERM for an executable one; mmap()'s own
            // ENOMEM, and EOVERFLOW for an offset it cannot map.
            Op::MapCq => return vec![EINVAL, EPERM, ENOMEM, EOVERFLOW],
            _ => &[],
        };
        COMMON.iter().chain(further).copied().collect()
    }

    /// Errnos the code can answer (kernel socket, pinning, netdev and RMPP
    /// paths) that uapi.rst does not list: reported in the summary as
    /// undocumented, not failed.
    pub fn tolerated(self) -> &'static [i32] {
        use libc::*;
        match self {
            Op::RegMr => &[EPERM, EAGAIN, EINTR, EBUSY, ENOSPC, EOVERFLOW],
            Op::Listen => &[EADDRNOTAVAIL, ENOSPC, EPERM, ENOBUFS, EBUSY, ENODEV],
            // Socket creation and a non-blocking TCP connect to any address.
            Op::Connect => &[
                ENOMEM,
                EISCONN,
                EALREADY,
                EBUSY,
                EADDRNOTAVAIL,
                ENETUNREACH,
                EHOSTUNREACH,
                ECONNREFUSED,
                EINPROGRESS,
                EACCES,
                EPERM,
                ENOBUFS,
                ETIMEDOUT,
                EAGAIN,
                ENODEV,
                EPROTO,
            ],
            Op::Accept | Op::Reject | Op::Disconnect => &[
                ENOMEM,
                ECONNRESET,
                ECONNABORTED,
                ENOTCONN,
                EBUSY,
                ESHUTDOWN,
                EPIPE,
                EAGAIN,
                EPROTO,
                ENODEV,
                ETIMEDOUT,
            ],
            Op::RmppSetNode => &[ENOMEM, ENOSPC, EBUSY],
            Op::RmppCreateEp => &[ENETDOWN, EMSGSIZE, EBUSY, ENOSPC, ENOBUFS],
            Op::RmppSend => &[
                ENOMEM, ESHUTDOWN, EMSGSIZE, ENODEV, ENETDOWN, ENOBUFS, EPERM, EINTR, ENOSPC,
            ],
            Op::RmppPostRecv => &[
                ENOMEM, ESHUTDOWN, EMSGSIZE, ENODEV, ENETDOWN, ENOBUFS, EPERM, EINTR, ENOSPC,
                EACCES,
            ],
            // Pinning the user's buffers.
            Op::VmtpRequest => &[ENOMEM, EPERM, EINTR, EAGAIN],
            Op::VmtpPostRecv | Op::VmtpRespond => &[ENOMEM, EPERM, EINTR],
            Op::Read => &[EINTR],
            Op::Write => &[ENOTCONN, EPIPE, ESHUTDOWN, EAGAIN, ENOSPC, ECONNRESET],
            Op::Reopen => &[ENOMEM, EMFILE, ENFILE],
            _ => &[],
        }
    }
}

impl Op {
    /// Whether an errno outside `documented` and `tolerated` fails the run.
    /// Not for the commands that reach kernel sockets, netdevs or page
    /// pinning, whose errnos this program cannot list with certainty: there
    /// an undocumented errno is reported, not failed.
    pub fn strict(self) -> bool {
        !matches!(
            self,
            Op::RegMr
                | Op::UnmapMr
                | Op::MapCq
                | Op::Listen
                | Op::Connect
                | Op::Accept
                | Op::Reject
                | Op::Disconnect
                | Op::RmppSetNode
                | Op::RmppCreateEp
                | Op::RmppSend
                | Op::RmppPostRecv
                | Op::VmtpCreate
                | Op::VmtpRequest
                | Op::VmtpPostRecv
                | Op::VmtpRespond
        )
    }
}

/// How a result is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Documented,
    Tolerated,
    Forbidden,
}

/// Judges errno `e` of `op` against the tables.
pub fn judge_errno(op: Op, e: i32) -> Verdict {
    if injection_errno(e) {
        Verdict::Tolerated
    } else if op.documented().contains(&e) {
        Verdict::Documented
    } else if op.tolerated().contains(&e) || !op.strict() {
        Verdict::Tolerated
    } else {
        Verdict::Forbidden
    }
}

pub fn errno_name(e: i32) -> String {
    use libc::*;
    let n = match e {
        0 => "ok",
        EPERM => "EPERM",
        ENOENT => "ENOENT",
        EINTR => "EINTR",
        EBADF => "EBADF",
        EAGAIN => "EAGAIN",
        ENOMEM => "ENOMEM",
        EACCES => "EACCES",
        EFAULT => "EFAULT",
        EBUSY => "EBUSY",
        ENODEV => "ENODEV",
        EINVAL => "EINVAL",
        ENFILE => "ENFILE",
        EMFILE => "EMFILE",
        ENOTTY => "ENOTTY",
        ENOSPC => "ENOSPC",
        EPIPE => "EPIPE",
        EMSGSIZE => "EMSGSIZE",
        EAFNOSUPPORT => "EAFNOSUPPORT",
        EADDRINUSE => "EADDRINUSE",
        EADDRNOTAVAIL => "EADDRNOTAVAIL",
        ENETDOWN => "ENETDOWN",
        ENETUNREACH => "ENETUNREACH",
        ECONNABORTED => "ECONNABORTED",
        ECONNRESET => "ECONNRESET",
        ENOBUFS => "ENOBUFS",
        EISCONN => "EISCONN",
        ENOTCONN => "ENOTCONN",
        ESHUTDOWN => "ESHUTDOWN",
        ETIMEDOUT => "ETIMEDOUT",
        ECONNREFUSED => "ECONNREFUSED",
        EHOSTUNREACH => "EHOSTUNREACH",
        EALREADY => "EALREADY",
        EINPROGRESS => "EINPROGRESS",
        EPROTO => "EPROTO",
        ENOSYS => "ENOSYS",
        _ => return format!("E{e}"),
    };
    n.to_string()
}

// ---- Raw memory and system calls ----

/// The ABI structures: `Copy`, every bit pattern valid, and no padding
/// (uapi/src/abi.rs asserts that at compile time for every structure).
trait Abi: Copy + Default {}
macro_rules! abi {
    ($($t:ty),*) => { $(impl Abi for $t {})* };
}
abi!(
    SrnicQueryDevice,
    SrnicHandleArg,
    SrnicAllocPd,
    SrnicRegMr,
    SrnicCreateCq,
    SrnicReqNotifyCq,
    SrnicPollCq,
    SrnicCreateQp,
    SrnicQueryQp,
    SrnicListen,
    SrnicConnect,
    SrnicAccept,
    SrnicReject,
    SrnicDisconnect,
    SrnicStats,
    SrnicQueryRes,
    SrnicRmppNode,
    SrnicRmppCreateEp,
    SrnicRmppSend,
    SrnicRmppPostRecv,
    SrnicRmppStats,
    SrnicVmtpCreate,
    SrnicVmtpRequest,
    SrnicVmtpPostRecv,
    SrnicVmtpRespond,
    SrnicVmtpStats,
    SrnicPostWr,
    SrnicSge,
    SrnicEvent
);

fn bytes_of<T: Abi>(v: &T) -> Vec<u8> {
    // SAFETY: T is an ABI structure without padding (see `Abi`), so all of its
    // size_of::<T>() bytes are initialized; the slice lives only in this call.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
        .to_vec()
}

/// The `size` field's right value for `T`.
fn sz<T: Abi>() -> u32 {
    std::mem::size_of::<T>() as u32
}

fn from_bytes<T: Abi>(b: &[u8]) -> T {
    assert!(b.len() >= std::mem::size_of::<T>());
    // SAFETY: b holds at least size_of::<T>() bytes and every bit pattern is a
    // valid T (integer fields and arrays only, see `Abi`).
    unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<T>()) }
}

const PAGE: usize = 4096;

/// An anonymous private mapping of this process, unmapped on drop (unless
/// `leak`ed, for a buffer the fuzzer unmaps itself).
struct Map {
    addr: usize,
    len: usize,
}

impl Map {
    fn new(len: usize, prot: i32) -> Self {
        // SAFETY: a fresh anonymous mapping chosen by the kernel; it overlaps
        // nothing of this program.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(p != libc::MAP_FAILED, "mmap of {len} bytes failed");
        Self {
            addr: p as usize,
            len,
        }
    }

    fn protect(&self, off: usize, len: usize, prot: i32) {
        // SAFETY: [off, off + len) lies in this mapping, which only this
        // program's raw accesses (below) and the kernel use.
        let r = unsafe { libc::mprotect((self.addr + off) as *mut libc::c_void, len, prot) };
        assert_eq!(r, 0, "mprotect");
    }

    /// Copies `data` to `addr`, which must lie in this mapping, in pages that
    /// are readable and writable, with room for `data`.
    fn put(&self, addr: usize, data: &[u8]) {
        assert!(addr >= self.addr && addr + data.len() <= self.addr + self.len);
        // SAFETY: checked above to lie in this mapping, which no Rust object
        // occupies; the caller keeps it writable there.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
    }

    /// The `len` bytes at `addr` (in this mapping, readable).
    fn get(&self, addr: usize, len: usize) -> Vec<u8> {
        assert!(addr >= self.addr && addr + len <= self.addr + self.len);
        let mut v = vec![0u8; len];
        // SAFETY: as in `put`; the bytes are plain data.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, v.as_mut_ptr(), len) };
        v
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `new`, no longer used.
            unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A raw ioctl: Ok(return value) or Err(errno). `arg` is this program's scratch
/// memory or an address that faults (never memory Rust owns).
fn sys_ioctl(fd: RawFd, cmd: u32, arg: usize) -> Result<i64, i32> {
    // SAFETY: the kernel validates cmd and arg; arg names no Rust object.
    let r = injected(|| unsafe { libc::ioctl(fd, cmd as libc::c_ulong, arg) });
    if r < 0 {
        Err(errno())
    } else {
        Ok(i64::from(r))
    }
}

fn sys_read(fd: RawFd, addr: usize, len: usize) -> Result<i64, i32> {
    // SAFETY: as sys_ioctl: addr is scratch memory (with a guard page after
    // it) or faults.
    let r = injected(|| unsafe { libc::read(fd, addr as *mut libc::c_void, len) });
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as i64)
    }
}

fn sys_write(fd: RawFd, addr: usize, len: usize) -> Result<i64, i32> {
    // SAFETY: the kernel only reads [addr, addr + len).
    let r = injected(|| unsafe { libc::write(fd, addr as *const libc::c_void, len) });
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as i64)
    }
}

fn open_dev(dev: &str, nonblock: bool) -> Result<RawFd, i32> {
    let c = CString::new(dev).map_err(|_| libc::EINVAL)?;
    let flags = libc::O_RDWR | libc::O_CLOEXEC | if nonblock { libc::O_NONBLOCK } else { 0 };
    // SAFETY: c is a NUL-terminated path.
    let fd = injected(|| unsafe { libc::open(c.as_ptr(), flags) });
    if fd < 0 {
        Err(errno())
    } else {
        Ok(fd)
    }
}

// ---- Shared state ----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Pd,
    Mr,
    Cq,
    Qp,
    Listener,
    Ep,
    Conn,
    Vmtp,
}
const KINDS: usize = 8;

/// A registered region as the fuzzer remembers it.
#[derive(Clone, Copy, Debug)]
struct MrInfo {
    lkey: u32,
    addr: u64,
    len: u64,
}

/// The handles one file has given out.
#[derive(Default)]
struct Pool {
    live: [Vec<u32>; KINDS],
    stale: [Vec<u32>; KINDS],
    mrs: Vec<MrInfo>,
}

impl Pool {
    fn forget_all(&mut self) {
        for k in 0..KINDS {
            let v = std::mem::take(&mut self.live[k]);
            self.stale[k].extend(v);
            let n = self.stale[k].len();
            if n > 64 {
                self.stale[k].drain(..n - 64);
            }
        }
        self.mrs.clear();
    }

    fn remove(&mut self, k: Kind, h: u32) {
        let v = &mut self.live[k as usize];
        if let Some(i) = v.iter().position(|&x| x == h) {
            v.swap_remove(i);
            let s = &mut self.stale[k as usize];
            s.push(h);
            if s.len() > 64 {
                s.remove(0);
            }
        }
    }
}

/// Results per operation: errno (0 for success) -> count.
#[derive(Default, Clone)]
pub struct Stats {
    pub per_op: BTreeMap<Op, BTreeMap<i32, u64>>,
}

impl Stats {
    fn add(&mut self, op: Op, e: i32) {
        *self.per_op.entry(op).or_default().entry(e).or_default() += 1;
    }

    fn merge(&mut self, o: &Stats) {
        for (op, m) in &o.per_op {
            let t = self.per_op.entry(*op).or_default();
            for (e, n) in m {
                *t.entry(*e).or_default() += n;
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.per_op.values().flat_map(|m| m.values()).sum()
    }
}

struct Shared {
    fds: [RawFd; 2],
    nonblock: [bool; 2],
    dev: String,
    pools: Mutex<[Pool; 2]>,
    violations: Mutex<Vec<String>>,
    nviolations: AtomicU64,
    stop: AtomicBool,
    child: bool,
    peer: Option<[u8; 4]>,
    port_base: u16,
    /// A shared inaccessible page: every access faults.
    none: Map,
    /// A shared read-only page (zeros): the kernel can read, not write it.
    ro: Map,
    /// What each thread is doing: 1 + its operation's index in [`OPS`], 0
    /// between operations (for the watchdog's report).
    current: Vec<AtomicU64>,
}

impl Shared {
    fn violation(&self, msg: String) {
        let n = self.nviolations.fetch_add(1, Ordering::Relaxed);
        // The first ones at once (should the kernel not survive the run); all
        // of them (up to 100) in the summary.
        if n < 10 || self.child {
            eprintln!("abi-fuzz: VIOLATION: {msg}");
        }
        if self.child {
            // The parent sees the exit status; a child may die any moment.
            std::process::exit(1);
        }
        if n < 100 {
            self.violations.lock().unwrap().push(msg);
        }
    }
}

// ---- Pointers ----

/// Where an argument is placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ptr {
    /// Readable and writable scratch memory.
    Rw,
    /// The structure in a read-only page.
    ReadOnly,
    /// NULL, below mmap_min_addr, a kernel or non-canonical address, or an
    /// inaccessible page: the kernel cannot read the argument.
    Bad,
    /// The structure's start in the last scratch page, its end in the
    /// inaccessible page after it.
    Span,
}

/// Each thread's memory.
struct Mem {
    /// SCRATCH_PAGES read-write pages then one inaccessible guard page.
    scratch: Map,
    /// One page made read-only around a call.
    ro: Map,
    /// Regions for registration: a guard page, MR_PAGES read-write pages, a
    /// guard page.
    arena: Map,
}

const SCRATCH_PAGES: usize = 16;
const MR_PAGES: usize = 16;

impl Mem {
    fn new() -> Self {
        let scratch = Map::new(
            (SCRATCH_PAGES + 1) * PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
        );
        scratch.protect(SCRATCH_PAGES * PAGE, PAGE, libc::PROT_NONE);
        let ro = Map::new(PAGE, libc::PROT_READ | libc::PROT_WRITE);
        let arena = Map::new((MR_PAGES + 2) * PAGE, libc::PROT_READ | libc::PROT_WRITE);
        arena.protect(0, PAGE, libc::PROT_NONE);
        arena.protect((MR_PAGES + 1) * PAGE, PAGE, libc::PROT_NONE);
        Self { scratch, ro, arena }
    }

    fn guard(&self) -> usize {
        self.scratch.addr + SCRATCH_PAGES * PAGE
    }

    fn arena_rw(&self) -> (usize, usize) {
        (self.arena.addr + PAGE, MR_PAGES * PAGE)
    }
}

/// An address the kernel cannot access.
fn bad_addr(r: &mut Rng, none: usize) -> u64 {
    r.pick(&[
        0,
        0x1000,
        0xFFFF_8880_0000_0000,
        0x8000_0000_0000_0000,
        u64::MAX - 63,
        none as u64,
        none as u64 + 8,
    ])
}

// ---- The worker ----

struct Worker<'a> {
    sh: &'a Shared,
    /// This thread's index in [`Shared::current`].
    index: usize,
    rng: Rng,
    mem: Mem,
    stats: Stats,
    /// CQ rings this thread mapped (address, length), the oldest first.
    rings: Vec<(usize, usize)>,
}

/// How an ioctl argument was spoiled, to know what the ABI prescribes.
#[derive(Clone, Copy, Debug)]
struct Spoil {
    misencoded: bool,
    bad_size: bool,
    bad_reserved: bool,
    ptr: Ptr,
}

impl<'a> Worker<'a> {
    fn new(sh: &'a Shared, index: usize, seed: u64) -> Self {
        Self {
            sh,
            index,
            rng: Rng::new(seed),
            mem: Mem::new(),
            stats: Stats::default(),
            rings: Vec::new(),
        }
    }

    fn slot(&mut self) -> usize {
        self.rng.below(2) as usize
    }

    /// A handle of kind `k` for a call on file `slot`: mostly a live one of
    /// this file, else one of the other file, a destroyed one, 0, or any.
    fn handle(&mut self, slot: usize, k: Kind) -> u32 {
        let r = self.rng.below(100);
        let pools = self.sh.pools.lock().unwrap();
        let pick = |v: &Vec<u32>, rng: &mut Rng| {
            (!v.is_empty()).then(|| v[rng.below(v.len() as u64) as usize])
        };
        let got = if r < 60 {
            pick(&pools[slot].live[k as usize], &mut self.rng)
        } else if r < 72 {
            pick(&pools[1 - slot].live[k as usize], &mut self.rng)
        } else if r < 84 {
            pick(&pools[slot].stale[k as usize], &mut self.rng)
        } else if r < 88 {
            Some(0)
        } else {
            None
        };
        drop(pools);
        got.unwrap_or_else(|| {
            if self.rng.chance(50) {
                1 + self.rng.below(8) as u32
            } else {
                any_u32(&mut self.rng)
            }
        })
    }

    fn live_count(&self, slot: usize, k: Kind) -> usize {
        self.sh.pools.lock().unwrap()[slot].live[k as usize].len()
    }

    fn remember(&self, slot: usize, k: Kind, h: u32) {
        self.sh.pools.lock().unwrap()[slot].live[k as usize].push(h);
    }

    fn forget(&self, slot: usize, k: Kind, h: u32) {
        self.sh.pools.lock().unwrap()[slot].remove(k, h);
    }

    fn record(&mut self, op: Op, res: Result<i64, i32>) {
        self.stats.add(op, res.err().unwrap_or(0));
    }

    /// A pointer for a buffer the kernel reads (private data, inline data):
    /// scratch memory (its second half, away from the argument) or an address
    /// that faults.
    fn data_ptr(&mut self, len: usize) -> u64 {
        match self.rng.below(10) {
            0 => bad_addr(&mut self.rng, self.sh.none.addr),
            1 => (self.mem.guard() - len.min(PAGE) / 2) as u64,
            2 => self.sh.ro.addr as u64,
            _ => (self.mem.scratch.addr + 8 * PAGE + self.rng.below(64) as usize) as u64,
        }
    }

    /// An address and length for a registration or an RMPP buffer: in the
    /// guarded arena mostly, else read-only, inaccessible or unmappable ones.
    fn region(&mut self) -> (u64, u64) {
        let (base, len) = self.mem.arena_rw();
        let off = if self.rng.chance(50) {
            self.rng.below(MR_PAGES as u64) as usize * PAGE
        } else {
            self.rng.below(len as u64) as usize
        };
        let addr = match self.rng.below(10) {
            0 => bad_addr(&mut self.rng, self.sh.none.addr),
            1 => self.sh.ro.addr as u64,
            // Half a page before the arena's trailing guard page. (Never
            // scratch memory: a peer may write into a registered region at
            // any moment.)
            2 => (base + len - PAGE / 2) as u64,
            _ => (base + off) as u64,
        };
        let rest = (base + len).saturating_sub(addr as usize) as u64;
        let l = match self.rng.below(8) {
            0 => any_u64(&mut self.rng),
            1 => rest + 1,
            2 => 0,
            3 => 1 << 32,
            _ => 1 + self.rng.below(rest.clamp(1, 65536)),
        };
        (addr, l)
    }

    /// Places `bytes` (an argument of `good_len` bytes) as `ptr` asks and
    /// returns the address passed to the kernel.
    fn place(&mut self, ptr: Ptr, bytes: &[u8]) -> usize {
        match ptr {
            Ptr::Rw => {
                let a = self.mem.scratch.addr + 8 * self.rng.below(4) as usize;
                self.mem.scratch.put(a, bytes);
                a
            }
            Ptr::ReadOnly => {
                self.mem.ro.put(self.mem.ro.addr, bytes);
                self.mem.ro.protect(0, PAGE, libc::PROT_READ);
                self.mem.ro.addr
            }
            Ptr::Span => {
                let k = 1 + self.rng.below(bytes.len().saturating_sub(1).max(1) as u64) as usize;
                let a = self.mem.guard() - k;
                self.mem.scratch.put(a, &bytes[..k.min(bytes.len())]);
                a
            }
            Ptr::Bad => bad_addr(&mut self.rng, self.sh.none.addr) as usize,
        }
    }

    fn unplace(&mut self, ptr: Ptr) {
        if ptr == Ptr::ReadOnly {
            self.mem
                .ro
                .protect(0, PAGE, libc::PROT_READ | libc::PROT_WRITE);
        }
    }

    fn pick_ptr(&mut self) -> Ptr {
        match self.rng.below(100) {
            0..=84 => Ptr::Rw,
            85..=89 => Ptr::Bad,
            90..=94 => Ptr::ReadOnly,
            _ => Ptr::Span,
        }
    }

    /// One ioctl of `op` with argument `val` (valid-looking; `set_reserved`
    /// spoils its reserved fields): maybe misencoded, a wrong size, non-zero
    /// reserved fields, a bad pointer. Judges the result; returns the
    /// argument as the kernel wrote it back on success.
    fn ioctl<T: Abi>(
        &mut self,
        slot: usize,
        op: Op,
        mut val: T,
        set_reserved: fn(&mut T, u64),
    ) -> Option<T> {
        let good_cmd = op.cmd().expect("an ioctl");
        let mut sp = Spoil {
            misencoded: self.rng.chance(3),
            bad_size: false,
            bad_reserved: false,
            ptr: self.pick_ptr(),
        };
        match self.rng.below(100) {
            0..=4 => sp.bad_size = true,
            5..=9 => {
                sp.bad_reserved = true;
                let v = any_u64(&mut self.rng) | 1 << self.rng.below(64);
                set_reserved(&mut val, v);
            }
            _ => {}
        }
        let mut bytes = bytes_of(&val);
        if sp.bad_size {
            let good = bytes.len() as u32;
            let s = bad_size(&mut self.rng, good);
            bytes[..4].copy_from_slice(&s.to_ne_bytes());
        }
        let size_field = u32::from_ne_bytes(bytes[..4].try_into().expect("a size field"));
        let cmd = if sp.misencoded {
            misencode(&mut self.rng, good_cmd)
        } else {
            good_cmd
        };
        let addr = self.place(sp.ptr, &bytes);
        let res = sys_ioctl(self.sh.fds[slot], cmd, addr);
        self.unplace(sp.ptr);
        self.record(op, res);
        self.check_ioctl(op, &sp, cmd, size_field, res);
        match (res, sp.ptr, sp.bad_size || sp.bad_reserved || sp.misencoded) {
            (Ok(_), Ptr::Rw, false) => Some(from_bytes(&self.mem.scratch.get(addr, bytes.len()))),
            _ => None,
        }
    }

    fn check_ioctl(
        &mut self,
        op: Op,
        sp: &Spoil,
        cmd: u32,
        size_field: u32,
        res: Result<i64, i32>,
    ) {
        let e = res.err().unwrap_or(0);
        if injection_errno(e) {
            return;
        }
        let good = op.cmd().expect("an ioctl");
        // A number encoding a size another version of the structure could
        // have (structures grow by size, uapi.rst): srnic reads the argument
        // before it finds the size field does not match.
        let read_first = sp.misencoded
            && !op.takes_handle()
            && cmd >> IOC_DIRSHIFT == good >> IOC_DIRSHIFT
            && ioc_size(cmd) >= op.min_size();
        let want = if sp.misencoded && !read_first {
            Some(libc::EINVAL)
        } else if read_first && size_field == ioc_size(cmd) {
            // A spoiled size field that happens to equal the size the
            // misencoded number encodes: srnic takes the argument as that
            // version of the structure, and what follows depends on the
            // bytes past ours (E2BIG when they are not zero) or on the
            // command itself. Only the documented set is checked below.
            (sp.ptr == Ptr::Bad).then_some(libc::EFAULT)
        } else if read_first && sp.ptr == Ptr::Span && ioc_size(cmd) < ioc_size(good) {
            // Less than the whole structure read: the fault may not be met.
            None
        } else if matches!(sp.ptr, Ptr::Bad | Ptr::Span) {
            Some(libc::EFAULT)
        } else if read_first {
            Some(libc::EINVAL)
        } else if matches!(sp.ptr, Ptr::Bad | Ptr::Span) {
            Some(libc::EFAULT)
        } else if sp.ptr == Ptr::ReadOnly && !op.takes_handle() && !sp.bad_size && !sp.bad_reserved
        {
            // The result could not be written back: EFAULT before anything is
            // done (uapi.rst, "Common rules").
            Some(libc::EFAULT)
        } else if sp.bad_size || sp.bad_reserved {
            Some(libc::EINVAL)
        } else {
            None
        };
        let what = format!("{} (cmd {cmd:#x}, {sp:?})", op.name());
        if let Some(w) = want {
            if e != w {
                self.sh.violation(format!(
                    "{what}: got {}, the ABI says {}",
                    errno_name(e),
                    errno_name(w)
                ));
            }
            return;
        }
        if e == libc::ENOTTY {
            self.sh
                .violation(format!("{what}: ENOTTY for a command srnic defines"));
            return;
        }
        if e == 0 {
            if sp.ptr == Ptr::ReadOnly && !op.takes_handle() {
                self.sh.violation(format!(
                    "{what}: succeeded, but its result cannot be written back"
                ));
            }
            return;
        }
        if judge_errno(op, e) == Verdict::Forbidden {
            self.sh.violation(format!(
                "{what}: errno {} is not in its documented set",
                errno_name(e)
            ));
        }
    }

    fn handle_arg(&mut self, slot: usize, op: Op, k: Kind) {
        let h = self.handle(slot, k);
        let a = SrnicHandleArg {
            size: sz::<SrnicHandleArg>(),
            handle: h,
            reserved: 0,
        };
        if self.ioctl(slot, op, a, |a, v| a.reserved = v).is_some() {
            if h == 0 {
                self.sh
                    .violation(format!("{}: handle 0 was accepted", op.name()));
            }
            self.forget(slot, k, h);
            if k == Kind::Mr {
                let mut p = self.sh.pools.lock().unwrap();
                p[slot].mrs.retain(|m| m.lkey >> 8 != h);
            }
        }
    }

    fn sockaddr(&mut self, listen: bool) -> SrnicSockaddr {
        let mut a = SrnicSockaddr {
            family: libc::AF_INET as u16,
            port: self.sh.port_base + self.rng.below(8) as u16,
            ..Default::default()
        };
        let ip: [u8; 4] = match self.rng.below(10) {
            0..=5 => [127, 0, 0, 1],
            6 | 7 => match self.sh.peer {
                Some(p) if !listen => p,
                _ => [0, 0, 0, 0],
            },
            8 => [255, 255, 255, 255],
            _ => (self.rng.next_u64() as u32).to_ne_bytes(),
        };
        a.addr[..4].copy_from_slice(&ip);
        if self.rng.chance(5) {
            a.family = self
                .rng
                .pick(&[0, libc::AF_INET6 as u16, libc::AF_UNIX as u16, 0xFFFF]);
        }
        if listen && self.rng.chance(10) {
            a.port = 0;
        }
        if self.rng.chance(3) {
            a.port = self.rng.next_u64() as u16;
        }
        a
    }

    fn private_data(&mut self) -> (u64, u32) {
        let len = match self.rng.below(10) {
            0..=4 => 0,
            5..=7 => self.rng.below(253) as u32,
            8 => SRNIC_MAX_PRIVATE_DATA + self.rng.below(2) as u32,
            _ => any_u32(&mut self.rng),
        };
        let p = if len == 0 && self.rng.chance(50) {
            0
        } else {
            self.data_ptr(len as usize)
        };
        (p, len)
    }

    fn flags(&mut self, all: u32) -> u32 {
        match self.rng.below(10) {
            0 => any_u32(&mut self.rng),
            1 => all + 1,
            _ => self.rng.next_u64() as u32 & all,
        }
    }

    fn ifname(&mut self) -> [u8; 16] {
        let name: &[u8] = match self.rng.below(6) {
            0 => b"lo",
            1 => b"eth0",
            2 => b"nonexistent0",
            3 => b"",
            4 => b"0123456789abcdef",
            _ => b"eth0",
        };
        let mut out = [0u8; 16];
        out[..name.len()].copy_from_slice(name);
        out
    }

    /// One random operation.
    fn step(&mut self) {
        let total: u64 = OPS.iter().map(|o| o.1).sum();
        let mut x = self.rng.below(total);
        let mut op = Op::QueryDevice;
        let mut index = 0;
        for (i, (o, w)) in OPS.into_iter().enumerate() {
            if x < w {
                op = o;
                index = i;
                break;
            }
            x -= w;
        }
        self.sh.current[self.index].store(1 + index as u64, Ordering::Relaxed);
        self.step_op(op);
        self.sh.current[self.index].store(0, Ordering::Relaxed);
    }

    fn step_op(&mut self, op: Op) {
        let slot = self.slot();
        match op {
            Op::QueryDevice => {
                let v = SrnicQueryDevice {
                    size: sz::<SrnicQueryDevice>(),
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved[1] = v) {
                    if out.abi_version != SRNIC_ABI_VERSION || out.reserved != [0, 0] {
                        self.sh.violation(format!(
                            "query_device: version {} reserved {:?}",
                            out.abi_version, out.reserved
                        ));
                    }
                }
            }
            Op::QueryStats => {
                let v = SrnicStats {
                    size: sz::<SrnicStats>(),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved0 = v as u32 | 1);
            }
            Op::QueryRes => {
                // A kind (sometimes none), its record size (sometimes not),
                // and no room or an address nothing is mapped at: the
                // records of this process's objects fault (EFAULT).
                let kind = self.rng.pick(&[
                    SRNIC_RES_QP,
                    SRNIC_RES_CQ,
                    SRNIC_RES_MR,
                    SRNIC_RES_LISTEN,
                    SRNIC_RES_RMPP,
                    SRNIC_RES_VMTP,
                    0,
                    7,
                ]);
                let size = match kind {
                    SRNIC_RES_QP => std::mem::size_of::<SrnicResQp>(),
                    SRNIC_RES_CQ => std::mem::size_of::<SrnicResCq>(),
                    SRNIC_RES_MR => std::mem::size_of::<SrnicResMr>(),
                    SRNIC_RES_LISTEN => std::mem::size_of::<SrnicResListen>(),
                    SRNIC_RES_VMTP => std::mem::size_of::<SrnicResVmtp>(),
                    _ => std::mem::size_of::<SrnicResRmpp>(),
                } as u32;
                let v = SrnicQueryRes {
                    size: sz::<SrnicQueryRes>(),
                    kind,
                    entry_size: if self.rng.chance(8) { size + 8 } else { size },
                    start: self.rng.pick(&[0, 1, u32::MAX]),
                    max_entries: self.rng.pick(&[0, 1, 4, u32::MAX]),
                    entries: self.rng.pick(&[0, 8]),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved0 = v as u32 | 1);
            }
            Op::RmppQueryStats => {
                let v = SrnicRmppStats {
                    size: sz::<SrnicRmppStats>(),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| {
                    if let Some(r) = a.reserved.last_mut() {
                        *r = v;
                    }
                });
            }
            Op::VmtpQueryStats => {
                let v = SrnicVmtpStats {
                    size: sz::<SrnicVmtpStats>(),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| {
                    if let Some(r) = a.reserved.last_mut() {
                        *r = v;
                    }
                });
            }
            Op::AllocPd => {
                if self.live_count(slot, Kind::Pd) >= 32 {
                    return;
                }
                let v = SrnicAllocPd {
                    size: sz::<SrnicAllocPd>(),
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved = v) {
                    self.remember(slot, Kind::Pd, out.pd_handle);
                }
            }
            Op::DeallocPd => self.handle_arg(slot, op, Kind::Pd),
            Op::RegMr => {
                if self.live_count(slot, Kind::Mr) >= 64 {
                    return;
                }
                let (addr, length) = self.region();
                let v = SrnicRegMr {
                    size: sz::<SrnicRegMr>(),
                    pd_handle: self.handle(slot, Kind::Pd),
                    addr,
                    length,
                    access: self.flags(SRNIC_ACCESS_ALL),
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved[0] = v) {
                    self.remember(slot, Kind::Mr, out.mr_handle);
                    self.sh.pools.lock().unwrap()[slot].mrs.push(MrInfo {
                        lkey: out.lkey,
                        addr,
                        len: length,
                    });
                }
            }
            Op::UnmapMr => self.unmap_mr(slot),
            Op::MapCq => self.map_cq(slot),
            Op::DeregMr => self.handle_arg(slot, op, Kind::Mr),
            Op::CreateCq => {
                if self.live_count(slot, Kind::Cq) >= 32 {
                    return;
                }
                let cqe = match self.rng.below(20) {
                    0 => any_u32(&mut self.rng),
                    1 => 65536 + self.rng.below(2) as u32,
                    2 => 4096,
                    _ => 1 + self.rng.below(64) as u32,
                };
                let v = SrnicCreateCq {
                    size: sz::<SrnicCreateCq>(),
                    cqe,
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved = v | 1) {
                    self.remember(slot, Kind::Cq, out.cq_handle);
                }
            }
            Op::DestroyCq => self.handle_arg(slot, op, Kind::Cq),
            Op::ReqNotifyCq => {
                let v = SrnicReqNotifyCq {
                    size: sz::<SrnicReqNotifyCq>(),
                    cq_handle: self.handle(slot, Kind::Cq),
                    flags: self.flags(3),
                    ..Default::default()
                };
                if let Some(_out) = self.ioctl(slot, op, v, |a, v| a.reserved = v) {}
            }
            Op::PollCq => {
                let num = match self.rng.below(10) {
                    0 => any_u32(&mut self.rng),
                    1 => 0,
                    _ => 1 + self.rng.below(40) as u32,
                };
                let wc_ptr = match self.rng.below(10) {
                    0 => bad_addr(&mut self.rng, self.sh.none.addr),
                    1 => (self.mem.guard() - 64) as u64,
                    2 => self.sh.ro.addr as u64,
                    _ => (self.mem.scratch.addr + 4 * PAGE) as u64,
                };
                let v = SrnicPollCq {
                    size: sz::<SrnicPollCq>(),
                    cq_handle: self.handle(slot, Kind::Cq),
                    num_entries: num,
                    wc_ptr,
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved = v) {
                    if out.num_entries > num {
                        self.sh.violation(format!(
                            "poll_cq: {} completions for {num} asked",
                            out.num_entries
                        ));
                    }
                }
            }
            Op::CreateQp => {
                if self.live_count(slot, Kind::Qp) >= 32 {
                    return;
                }
                let small = |r: &mut Rng| {
                    if r.chance(10) {
                        any_u32(r)
                    } else {
                        r.below(17) as u32
                    }
                };
                let v = SrnicCreateQp {
                    size: sz::<SrnicCreateQp>(),
                    pd_handle: self.handle(slot, Kind::Pd),
                    send_cq: self.handle(slot, Kind::Cq),
                    recv_cq: self.handle(slot, Kind::Cq),
                    max_send_wr: small(&mut self.rng),
                    max_recv_wr: small(&mut self.rng),
                    max_send_sge: small(&mut self.rng),
                    max_recv_sge: small(&mut self.rng),
                    max_inline_data: if self.rng.chance(10) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(257) as u32
                    },
                    sq_sig_all: if self.rng.chance(10) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(2) as u32
                    },
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved[1] = v) {
                    self.remember(slot, Kind::Qp, out.qp_handle);
                }
            }
            Op::DestroyQp => self.handle_arg(slot, op, Kind::Qp),
            Op::QueryQp => {
                let v = SrnicQueryQp {
                    size: sz::<SrnicQueryQp>(),
                    qp_handle: self.handle(slot, Kind::Qp),
                    state: if self.rng.chance(5) {
                        any_u32(&mut self.rng)
                    } else {
                        0
                    },
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved0 = v as u32 | 1) {
                    if out.state > SRNIC_QPS_ERROR || out.reserved0 != 0 {
                        self.sh.violation(format!(
                            "query_qp: state {} reserved0 {}",
                            out.state, out.reserved0
                        ));
                    }
                }
            }
            Op::Listen => {
                if self.live_count(slot, Kind::Listener) >= 8 {
                    return;
                }
                let v = SrnicListen {
                    size: sz::<SrnicListen>(),
                    backlog: if self.rng.chance(20) {
                        any_u32(&mut self.rng)
                    } else {
                        1 + self.rng.below(16) as u32
                    },
                    mpa_flags: self.flags(SRNIC_MPA_ALL),
                    addr: self.sockaddr(true),
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved[0] = v) {
                    self.remember(slot, Kind::Listener, out.listener_handle);
                }
            }
            Op::DestroyListener => self.handle_arg(slot, op, Kind::Listener),
            Op::Connect => {
                let (private_data, private_data_len) = self.private_data();
                let v = SrnicConnect {
                    size: sz::<SrnicConnect>(),
                    qp_handle: self.handle(slot, Kind::Qp),
                    ird: if self.rng.chance(10) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(4) as u32
                    },
                    ord: if self.rng.chance(10) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(4) as u32
                    },
                    mpa_flags: self.flags(SRNIC_MPA_ALL),
                    private_data_len,
                    private_data,
                    addr: self.sockaddr(false),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved[1] = v);
            }
            Op::Accept => {
                let (private_data, private_data_len) = self.private_data();
                let conn_id = self.handle(slot, Kind::Conn);
                let v = SrnicAccept {
                    size: sz::<SrnicAccept>(),
                    conn_id,
                    qp_handle: self.handle(slot, Kind::Qp),
                    ird: if self.rng.chance(10) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(4) as u32
                    },
                    ord: if self.rng.chance(10) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(4) as u32
                    },
                    private_data_len,
                    private_data,
                    ..Default::default()
                };
                if self.ioctl(slot, op, v, |a, v| a.reserved[0] = v).is_some() {
                    self.forget(slot, Kind::Conn, conn_id);
                }
            }
            Op::Reject => {
                let (private_data, private_data_len) = self.private_data();
                let conn_id = self.handle(slot, Kind::Conn);
                let v = SrnicReject {
                    size: sz::<SrnicReject>(),
                    conn_id,
                    private_data_len,
                    private_data,
                    ..Default::default()
                };
                if self.ioctl(slot, op, v, |a, v| a.reserved = v).is_some() {
                    self.forget(slot, Kind::Conn, conn_id);
                }
            }
            Op::Disconnect => {
                let v = SrnicDisconnect {
                    size: sz::<SrnicDisconnect>(),
                    qp_handle: self.handle(slot, Kind::Qp),
                    flags: self.flags(SRNIC_DISCONNECT_ABORT),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved0 = v as u32 | 1);
            }
            Op::RmppSetNode => {
                let mut mac = [0u8; 6];
                for b in &mut mac {
                    *b = self.rng.next_u64() as u8;
                }
                if self.rng.chance(80) {
                    mac[0] &= 0xFE;
                }
                let v = SrnicRmppNode {
                    size: sz::<SrnicRmppNode>(),
                    nid: if self.rng.chance(20) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(1025) as u32
                    },
                    flags: self.flags(SRNIC_RMPP_NODE_DELETE),
                    mac,
                    ifname: self.ifname(),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved1[1] = v as u8 | 1);
            }
            Op::RmppCreateEp => {
                if self.live_count(slot, Kind::Ep) >= 4 {
                    return;
                }
                let t = |r: &mut Rng| if r.chance(70) { 0 } else { any_u32(r) };
                let v = SrnicRmppCreateEp {
                    size: sz::<SrnicRmppCreateEp>(),
                    pd_handle: self.handle(slot, Kind::Pd),
                    nid: self.rng.below(1025) as u32,
                    send_cq: self.handle(slot, Kind::Cq),
                    recv_cq: self.handle(slot, Kind::Cq),
                    flags: self.flags(SRNIC_RMPP_EP_ALL),
                    ifname: self.ifname(),
                    ethertype: match self.rng.below(4) {
                        0 => 0,
                        1 => SRNIC_RMPP_ETHERTYPE,
                        2 => 0x0800,
                        _ => any_u32(&mut self.rng),
                    },
                    max_send: t(&mut self.rng),
                    max_recv: t(&mut self.rng),
                    rto_us: t(&mut self.rng),
                    min_rto_us: t(&mut self.rng),
                    max_retries: if self.rng.chance(50) {
                        1 + self.rng.below(3) as u32
                    } else {
                        t(&mut self.rng)
                    },
                    reclaim_ms: t(&mut self.rng),
                    max_rcv_buf: t(&mut self.rng),
                    nodes: t(&mut self.rng),
                    max_data_pkts: t(&mut self.rng),
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| a.reserved[0] = v | 1) {
                    self.remember(slot, Kind::Ep, out.ep_handle);
                }
            }
            Op::RmppDestroyEp => self.handle_arg(slot, op, Kind::Ep),
            Op::RmppSend => {
                let (addr, length) = self.region();
                let lkey = self.lkey(slot);
                let v = SrnicRmppSend {
                    size: sz::<SrnicRmppSend>(),
                    ep_handle: self.handle(slot, Kind::Ep),
                    wr_id: self.rng.next_u64(),
                    tag: any_u64(&mut self.rng),
                    addr,
                    length,
                    lkey,
                    dst_nid: if self.rng.chance(20) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(17) as u32
                    },
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved = v);
            }
            Op::RmppPostRecv => {
                let (addr, length) = self.region();
                let lkey = self.lkey(slot);
                let v = SrnicRmppPostRecv {
                    size: sz::<SrnicRmppPostRecv>(),
                    ep_handle: self.handle(slot, Kind::Ep),
                    wr_id: self.rng.next_u64(),
                    match_bits: any_u64(&mut self.rng),
                    ignore_bits: any_u64(&mut self.rng),
                    addr,
                    length,
                    lkey,
                    src_nid: self.rng.pick(&[SRNIC_RMPP_ANY_NID, 1, 2, 1023, 1024]),
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved = v);
            }
            Op::VmtpCreate => {
                if self.live_count(slot, Kind::Vmtp) >= 4 {
                    return;
                }
                let t = |r: &mut Rng| if r.chance(70) { 0 } else { any_u32(r) };
                let v = SrnicVmtpCreate {
                    size: sz::<SrnicVmtpCreate>(),
                    pd_handle: self.handle(slot, Kind::Pd),
                    cq_handle: self.handle(slot, Kind::Cq),
                    role: self.rng.pick(&[SRNIC_VMTP_CLIENT, SRNIC_VMTP_SERVER, 0, 3]),
                    addr: self.rng.pick(&[
                        [127, 0, 0, 1],
                        [127, 0, 0, 1],
                        [0, 0, 0, 0],
                        [203, 0, 113, 9],
                    ]),
                    discriminator: if self.rng.chance(20) {
                        any_u32(&mut self.rng)
                    } else {
                        self.rng.below(8) as u32
                    },
                    flags: self.flags(SRNIC_VMTP_ALL),
                    max_clients: t(&mut self.rng),
                    max_recv: t(&mut self.rng),
                    response_timeout_ms: t(&mut self.rng),
                    max_retries: if self.rng.chance(50) {
                        1
                    } else {
                        t(&mut self.rng)
                    },
                    packet_gap_us: t(&mut self.rng),
                    ..Default::default()
                };
                if let Some(out) = self.ioctl(slot, op, v, |a, v| {
                    if let Some(r) = a.reserved.last_mut() {
                        *r = v;
                    }
                }) {
                    self.remember(slot, Kind::Vmtp, out.handle);
                }
            }
            Op::VmtpDestroy => self.handle_arg(slot, op, Kind::Vmtp),
            Op::VmtpRequest => {
                let (addr, length) = self.region();
                let lkey = self.lkey(slot);
                let (resp_addr, resp_length) = self.region();
                let resp_lkey = self.lkey(slot);
                let v = SrnicVmtpRequest {
                    size: sz::<SrnicVmtpRequest>(),
                    handle: self.handle(slot, Kind::Vmtp),
                    wr_id: self.rng.next_u64(),
                    // Servers of this host (some of which exist), or anyone.
                    server: if self.rng.chance(20) {
                        any_u64(&mut self.rng)
                    } else {
                        (self.rng.below(8) << 32) | 0x7f00_0001
                    },
                    code: if self.rng.chance(20) {
                        any_u32(&mut self.rng)
                    } else {
                        SRNIC_VMTP_APPLICATION_CODE
                    },
                    flags: self.flags(SRNIC_VMTP_DATAGRAM),
                    addr,
                    length: length as u32,
                    lkey,
                    resp_addr,
                    resp_length: resp_length as u32,
                    resp_lkey,
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved = v);
            }
            Op::VmtpPostRecv => {
                let (addr, length) = self.region();
                let lkey = self.lkey(slot);
                let v = SrnicVmtpPostRecv {
                    size: sz::<SrnicVmtpPostRecv>(),
                    handle: self.handle(slot, Kind::Vmtp),
                    wr_id: self.rng.next_u64(),
                    addr,
                    length: length as u32,
                    lkey,
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved = v);
            }
            Op::VmtpRespond => {
                let (addr, length) = self.region();
                let lkey = self.lkey(slot);
                let v = SrnicVmtpRespond {
                    size: sz::<SrnicVmtpRespond>(),
                    handle: self.handle(slot, Kind::Vmtp),
                    wr_id: self.rng.next_u64(),
                    client: any_u64(&mut self.rng),
                    transaction: any_u32(&mut self.rng),
                    code: if self.rng.chance(20) {
                        any_u32(&mut self.rng)
                    } else {
                        0
                    },
                    addr,
                    length: length as u32,
                    lkey,
                    ..Default::default()
                };
                self.ioctl(slot, op, v, |a, v| a.reserved = v);
            }
            Op::UnknownCmd | Op::ForeignCmd => {
                let cmd = if op == Op::UnknownCmd {
                    unknown_cmd(&mut self.rng)
                } else {
                    foreign_cmd(&mut self.rng)
                };
                let ptr = self.pick_ptr();
                let addr = self.place(ptr, &[0u8; 64]);
                let res = sys_ioctl(self.sh.fds[slot], cmd, addr);
                self.unplace(ptr);
                self.record(op, res);
                if res != Err(libc::ENOTTY) {
                    self.sh.violation(format!(
                        "{} {cmd:#x}: got {}, the ABI says ENOTTY",
                        op.name(),
                        errno_name(res.err().unwrap_or(0))
                    ));
                }
            }
            Op::Read => self.read(slot),
            Op::Write => self.write(slot),
            Op::Poll => self.poll(),
            Op::Reopen => self.reopen(slot),
        }
    }

    /// An lkey: of a region this file registered, else anything (0: pin).
    fn lkey(&mut self, slot: usize) -> u32 {
        let p = self.sh.pools.lock().unwrap();
        let mrs = &p[if self.rng.chance(85) { slot } else { 1 - slot }].mrs;
        if !mrs.is_empty() && self.rng.chance(70) {
            return mrs[self.rng.below(mrs.len() as u64) as usize].lkey;
        }
        drop(p);
        if self.rng.chance(50) {
            0
        } else {
            any_u32(&mut self.rng)
        }
    }

    /// Maps a CQ's ring, or tries to with a wrong offset, length, protection
    /// or sharing; overwrites words of a writable one (the producer and
    /// consumer indices, an entry) with random values, and keeps the last
    /// few mapped while the module writes completions into them.
    fn map_cq(&mut self, slot: usize) {
        const KEEP: usize = 8;
        let h = self.handle(slot, Kind::Cq);
        let off = if self.rng.chance(85) {
            u64::from(h) << 12
        } else {
            any_u64(&mut self.rng)
        };
        let pages = match self.rng.below(8) {
            0 => 2,
            1 => 1 + self.rng.below(1100) as usize,
            _ => 1,
        };
        let len = pages * PAGE;
        let prot = match self.rng.below(8) {
            0 => libc::PROT_READ,
            1 => libc::PROT_READ | libc::PROT_EXEC,
            _ => libc::PROT_READ | libc::PROT_WRITE,
        };
        let flags = if self.rng.chance(90) {
            libc::MAP_SHARED
        } else {
            libc::MAP_PRIVATE
        };
        let fd = self.sh.fds[slot];
        // SAFETY: a new mapping at an address the kernel picks; nothing of
        // this program's is there.
        let p = injected(|| unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                flags,
                fd,
                off as libc::off_t,
            )
        });
        let res = if p == libc::MAP_FAILED {
            Err(errno())
        } else {
            Ok(0)
        };
        self.record(Op::MapCq, res);
        if res.is_err() {
            return;
        }
        if prot & libc::PROT_EXEC != 0 || flags & libc::MAP_PRIVATE != 0 {
            self.sh.violation(format!(
                "map_cq: an {} mapping of a CQ ring succeeded",
                if prot & libc::PROT_EXEC != 0 {
                    "executable"
                } else {
                    "private"
                }
            ));
        }
        if prot & libc::PROT_WRITE != 0 {
            for _ in 0..1 + self.rng.below(3) {
                // prod (word 0), cons (word 32), or a word of an entry.
                let word = match self.rng.below(3) {
                    0 => 0,
                    1 => 32,
                    _ => 32 + self.rng.below((len / 4 - 32) as u64) as usize,
                };
                let v = any_u32(&mut self.rng);
                // SAFETY: `word` lies inside the writable mapping just made.
                unsafe { std::ptr::write_volatile((p as *mut u32).add(word), v) };
            }
        }
        self.rings.push((p as usize, len));
        if self.rings.len() > KEEP {
            let (a, l) = self.rings.remove(0);
            // SAFETY: a mapping this thread made and nothing else uses.
            unsafe { libc::munmap(a as *mut libc::c_void, l) };
        }
    }

    /// Registers a buffer of its own, then unmaps it while registered.
    fn unmap_mr(&mut self, slot: usize) {
        if self.live_count(slot, Kind::Mr) >= 64 {
            return;
        }
        let m = Map::new(2 * PAGE, libc::PROT_READ | libc::PROT_WRITE);
        m.put(m.addr, &[0xA5; 64]);
        let v = SrnicRegMr {
            size: sz::<SrnicRegMr>(),
            pd_handle: self.handle(slot, Kind::Pd),
            addr: m.addr as u64 + self.rng.below(PAGE as u64),
            length: 1 + self.rng.below(PAGE as u64),
            access: SRNIC_ACCESS_ALL,
            ..Default::default()
        };
        let bytes = bytes_of(&v);
        let a = self.place(Ptr::Rw, &bytes);
        let res = sys_ioctl(self.sh.fds[slot], SRNIC_IOCTL_REG_MR, a);
        self.record(Op::UnmapMr, res);
        if let Err(e) = res {
            if judge_errno(Op::RegMr, e) == Verdict::Forbidden {
                self.sh
                    .violation(format!("reg_mr of a fresh buffer: {}", errno_name(e)));
            }
        } else {
            let out: SrnicRegMr = from_bytes(&self.mem.scratch.get(a, bytes.len()));
            self.remember(slot, Kind::Mr, out.mr_handle);
            self.sh.pools.lock().unwrap()[slot].mrs.push(MrInfo {
                lkey: out.lkey,
                addr: v.addr,
                len: v.length,
            });
        }
        // Unmapped while registered: the kernel keeps its pages pinned until
        // the region is deregistered or the file closed.
        drop(m);
    }

    /// read(): event records into scratch memory, with tiny, exact, huge
    /// lengths and bad pointers. Remembers connection requests.
    fn read(&mut self, mut slot: usize) {
        // A child's second file blocks: a read there may sleep until the
        // child is killed, so only a few reads go there.
        if !self.sh.nonblock[slot] && self.rng.chance(80) {
            slot = 1 - slot;
        }
        let rec = std::mem::size_of::<SrnicEvent>();
        let len = match self.rng.below(10) {
            0 => 0,
            1 => 1 + self.rng.below(rec as u64 - 1) as usize,
            2 => rec + 1,
            3 => self.rng.pick(&[1 << 20, 1 << 30, usize::MAX / 2]),
            _ => rec * (1 + self.rng.below(8) as usize),
        };
        let (addr, ptr) = match self.rng.below(20) {
            0 => (
                bad_addr(&mut self.rng, self.sh.none.addr) as usize,
                Ptr::Bad,
            ),
            1 => (self.sh.ro.addr, Ptr::ReadOnly),
            2 => (self.mem.guard() - rec / 2, Ptr::Span),
            _ => (self.mem.scratch.addr, Ptr::Rw),
        };
        let res = sys_read(self.sh.fds[slot], addr, len);
        self.record(Op::Read, res);
        match res {
            Ok(n) => {
                let n = n as usize;
                if !n.is_multiple_of(rec)
                    || n > len
                    || (n == 0 && len >= rec)
                    || (n > 0 && ptr != Ptr::Rw)
                {
                    self.sh
                        .violation(format!("read({len}) returned {n}: not whole records"));
                }
                if ptr == Ptr::Rw {
                    let avail = (SCRATCH_PAGES * PAGE).min(n);
                    let data = self.mem.scratch.get(addr, avail);
                    for c in data.chunks_exact(rec) {
                        let ev: SrnicEvent = from_bytes(c);
                        if ev.event_type == SRNIC_EVENT_CONNECT_REQUEST {
                            self.remember(slot, Kind::Conn, ev.conn_id);
                        }
                    }
                }
            }
            Err(e) => {
                if ptr == Ptr::Rw && len > 0 && len < rec && e != libc::EINVAL {
                    self.sh.violation(format!(
                        "read({len}): got {}, the ABI says EINVAL",
                        errno_name(e)
                    ));
                } else if judge_errno(Op::Read, e) == Verdict::Forbidden {
                    self.sh
                        .violation(format!("read({len}, {ptr:?}): errno {}", errno_name(e)));
                }
            }
        }
    }

    /// write(): 1 to 4 work request records (mostly plausible, some spoiled),
    /// maybe cut short, from scratch memory or a bad pointer.
    fn write(&mut self, slot: usize) {
        let mut buf = Vec::new();
        let mut bounds = vec![0usize];
        for _ in 0..1 + self.rng.below(4) {
            let nsge = match self.rng.below(20) {
                0 => 17,
                1 => self.rng.next_u64() as u16,
                _ => self.rng.below(4) as u16,
            };
            let opcode = if self.rng.chance(5) {
                self.rng.next_u64() as u16
            } else {
                self.rng.below(7) as u16
            };
            let flags = if opcode == SRNIC_WR_RECV as u16 && self.rng.chance(80) {
                0
            } else {
                self.flags(7)
            };
            let wr = SrnicPostWr {
                wr_id: self.rng.next_u64(),
                qp_handle: self.handle(slot, Kind::Qp),
                opcode,
                num_sge: nsge,
                flags,
                invalidate_rkey: self.lkey(slot),
                remote_addr: if self.rng.chance(50) {
                    self.region().0
                } else {
                    any_u64(&mut self.rng)
                },
                rkey: self.lkey(slot),
                reserved: if self.rng.chance(3) { 1 } else { 0 },
            };
            buf.extend(bytes_of(&wr));
            for _ in 0..nsge.min(4) {
                let (mut addr, mut length) = self.region();
                let mut lkey = self.lkey(slot);
                if flags & SRNIC_SEND_INLINE != 0 && self.rng.chance(70) {
                    length = self.rng.below(300);
                    addr = self.data_ptr(length as usize);
                } else if self.rng.chance(60) {
                    let p = self.sh.pools.lock().unwrap();
                    if let Some(m) = p[slot]
                        .mrs
                        .get(self.rng.below(p[slot].mrs.len().max(1) as u64) as usize)
                    {
                        let off = self.rng.below(m.len.max(1));
                        addr = m.addr.wrapping_add(off);
                        length = self.rng.below((m.len - off).saturating_add(1));
                        lkey = m.lkey;
                    }
                }
                let sge = SrnicSge {
                    addr,
                    length: length as u32,
                    lkey,
                };
                buf.extend(bytes_of(&sge));
            }
            if usize::from(nsge) <= 4 {
                bounds.push(buf.len());
            } else {
                break;
            }
        }
        let mut len = buf.len();
        if self.rng.chance(10) {
            len = self.rng.below(len as u64 + 1) as usize;
        }
        let (addr, ptr) = match self.rng.below(20) {
            0 => (
                bad_addr(&mut self.rng, self.sh.none.addr) as usize,
                Ptr::Bad,
            ),
            1 => (self.mem.guard() - len / 2, Ptr::Span),
            _ => (self.mem.scratch.addr, Ptr::Rw),
        };
        match ptr {
            Ptr::Rw => self.mem.scratch.put(addr, &buf[..len]),
            Ptr::Span => self.mem.scratch.put(addr, &buf[..len / 2]),
            _ => {}
        }
        let huge = self.rng.chance(3);
        let wlen = if huge { len + (1 << 30) } else { len };
        let res = sys_write(self.sh.fds[slot], addr, wlen);
        self.record(Op::Write, res);
        match res {
            Ok(n) => {
                let n = n as usize;
                if !huge && !bounds.iter().any(|&b| b == n && b <= len) && n != 0 {
                    self.sh.violation(format!(
                        "write({len}) returned {n}, not a record boundary {bounds:?}"
                    ));
                }
                if n == 0 && wlen != 0 {
                    self.sh.violation(format!("write({wlen}) returned 0"));
                }
            }
            Err(e) => {
                if judge_errno(Op::Write, e) == Verdict::Forbidden {
                    self.sh
                        .violation(format!("write({wlen}, {ptr:?}): errno {}", errno_name(e)));
                }
            }
        }
    }

    fn poll(&mut self) {
        let mut fds = [
            libc::pollfd {
                fd: self.sh.fds[0],
                events: libc::POLLIN | libc::POLLOUT,
                revents: 0,
            },
            libc::pollfd {
                fd: self.sh.fds[1],
                events: libc::POLLIN | libc::POLLOUT,
                revents: 0,
            },
        ];
        // SAFETY: fds is a live array of two pollfd; timeout 0 never sleeps.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, 0) };
        let res = if r < 0 {
            Err(errno())
        } else {
            Ok(i64::from(r))
        };
        self.record(Op::Poll, res);
        if res.is_ok() {
            for f in &fds {
                if f.revents & libc::POLLOUT == 0 {
                    self.sh
                        .violation(format!("poll: revents {:#x} without POLLOUT", f.revents));
                }
            }
        }
    }

    /// Replaces file `slot` with a new one under the same descriptor number
    /// (the old file is released when the last call in flight on it ends).
    fn reopen(&mut self, slot: usize) {
        // Rarely: a replaced file takes its objects and connections along.
        if !self.rng.chance(3) {
            return;
        }
        let res = open_dev(&self.sh.dev, self.sh.nonblock[slot]);
        let res = match res {
            Ok(fd) => {
                let mut pools = self.sh.pools.lock().unwrap();
                // SAFETY: both descriptors are this program's; dup3 atomically
                // replaces the file behind fds[slot] (close-on-exec, as opened).
                let r = unsafe { libc::dup3(fd, self.sh.fds[slot], libc::O_CLOEXEC) };
                let e = errno();
                // SAFETY: fd is the descriptor opened above, not used again.
                unsafe { libc::close(fd) };
                pools[slot].forget_all();
                if r < 0 {
                    Err(e)
                } else {
                    Ok(0)
                }
            }
            Err(e) => Err(e),
        };
        self.record(Op::Reopen, res);
    }
}

// ---- Running ----

fn open_both(dev: &str, nonblock: [bool; 2]) -> Result<[RawFd; 2], String> {
    let mut fds = [-1; 2];
    for (fd, nb) in fds.iter_mut().zip(nonblock) {
        *fd = open_dev(dev, nb).map_err(|e| format!("cannot open {dev}: {}", errno_name(e)))?;
    }
    Ok(fds)
}

fn run_threads(sh: &Shared, o: &Opts) -> Stats {
    let deadline = Instant::now() + Duration::from_secs(o.seconds);
    let mut total = Stats::default();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..o.threads)
            .map(|i| {
                let seed = derive(o.seed, i as u64 + 1);
                s.spawn(move || {
                    let mut w = Worker::new(sh, i, seed);
                    while !sh.stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                        w.step();
                    }
                    w.stats
                })
            })
            .collect();
        if o.child {
            // A child's blocking reads may never return: it ends with exit().
            std::thread::sleep(Duration::from_secs(o.seconds));
            std::process::exit(0);
        }
        for h in hs {
            match h.join() {
                Ok(st) => total.merge(&st),
                Err(_) => sh.violation("a fuzzer thread panicked".into()),
            }
        }
    });
    total
}

/// Starts, kills (SIGKILL, at random moments) and restarts the children
/// until `stop`; returns (restarts, failures).
fn children(o: &Opts, stop: &AtomicBool) -> (u64, Vec<String>) {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return (0, vec![format!("cannot find this program: {e}")]),
    };
    let mut rng = Rng::new(derive(o.seed, 0xC41D));
    let mut gen = 0u64;
    let mut fails = Vec::new();
    let spawn = |gen: u64| -> std::io::Result<Child> {
        let mut c = Command::new(&exe);
        c.args(["abi-fuzz", "--child", "--threads", "2", "--children", "0"])
            .args([
                "--seconds",
                &o.seconds.to_string(),
                "--seed",
                &derive(o.seed, 0x10000 + gen).to_string(),
            ])
            .args([
                "--port-base",
                &o.port_base.to_string(),
                "--device",
                &o.device,
            ]);
        if let Some(p) = o.peer {
            c.args(["--peer", &p.to_string()]);
        }
        if o.fail {
            c.arg("--fail");
        }
        c.stdin(Stdio::null()).stdout(Stdio::null()).spawn()
    };
    let mut kids: Vec<Child> = Vec::new();
    for _ in 0..o.children {
        gen += 1;
        match spawn(gen) {
            Ok(c) => kids.push(c),
            Err(e) => fails.push(format!("cannot start a child: {e}")),
        }
    }
    let mut restarts = 0;
    while !stop.load(Ordering::Relaxed) && !kids.is_empty() {
        std::thread::sleep(Duration::from_millis(20 + rng.below(800)));
        let i = rng.below(kids.len() as u64) as usize;
        // A child that ended by itself: 0 is its time limit, 1 a violation it
        // printed, 2 that it could not open the device.
        match kids[i].try_wait() {
            Ok(Some(st)) if st.code().is_some_and(|c| c != 0) => {
                fails.push(format!("child {} exited with {st}", kids[i].id()));
            }
            Ok(Some(_)) => {}
            _ => {
                let _ = kids[i].kill();
                let _ = kids[i].wait();
            }
        }
        gen += 1;
        restarts += 1;
        match spawn(gen) {
            Ok(c) => kids[i] = c,
            Err(e) => {
                fails.push(format!("cannot restart a child: {e}"));
                // Killed and waited for above (or ended by itself).
                drop(kids.swap_remove(i));
            }
        }
    }
    for mut k in kids {
        if let Ok(Some(st)) = k.try_wait() {
            if st.code().is_some_and(|c| c != 0) {
                fails.push(format!("child {} exited with {st}", k.id()));
            }
            continue;
        }
        let _ = k.kill();
        let _ = k.wait();
    }
    (restarts, fails)
}

/// How long after its time the run may take to end (threads leaving their
/// last call, children killed and reaped) before the watchdog reports it.
const GRACE: Duration = Duration::from_secs(120);

/// Ends the run with a report if it has not ended `GRACE` after its time:
/// what each thread was doing, and where each task of this process and of its
/// children is in the kernel. A call that never returns is a kernel bug (or a
/// blocking call the ABI does not document); the harness then sees exit 1 and
/// this report instead of a case timeout.
fn watchdog(sh: &Shared, o: &Opts, done: &AtomicBool) {
    let deadline = Instant::now() + Duration::from_secs(o.seconds) + GRACE;
    while Instant::now() < deadline {
        if done.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    println!(
        "abi-fuzz: FAIL: the run has not ended {} s after its time",
        GRACE.as_secs()
    );
    for (i, c) in sh.current.iter().enumerate() {
        let c = c.load(Ordering::Relaxed) as usize;
        let what = if c == 0 {
            "between calls".to_string()
        } else {
            OPS[c - 1].0.name()
        };
        println!("abi-fuzz: thread {i}: {what}");
    }
    let me = std::process::id();
    for pid in std::iter::once(me).chain(child_pids(me)) {
        print_stacks(pid);
    }
    std::process::exit(1);
}

/// The processes whose parent is `pid`.
fn child_pids(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    // The fields after the command name, which is in parentheses.
                    let rest = s.rsplit_once(')')?.1.to_string();
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

/// Each thread of process `pid`: state, wait channel and kernel stack.
fn print_stacks(pid: u32) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for t in tasks.flatten() {
        let p = t.path();
        let read = |f: &str| std::fs::read_to_string(p.join(f)).unwrap_or_default();
        let state = read("stat")
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next().map(str::to_string))
            .unwrap_or_default();
        println!(
            "abi-fuzz: task {pid}/{}: state {state}, wchan {}",
            t.file_name().to_string_lossy(),
            read("wchan")
        );
        for line in read("stack").lines() {
            println!("abi-fuzz:     {line}");
        }
    }
}

pub fn summary(st: &Stats) -> String {
    let mut out = String::new();
    for (op, m) in &st.per_op {
        let calls: u64 = m.values().sum();
        let hist: Vec<String> = m
            .iter()
            .map(|(e, n)| format!("{}={n}", errno_name(*e)))
            .collect();
        out += &format!(
            "abi-fuzz: {:<18} {calls:>9} calls: {}\n",
            op.name(),
            hist.join(" ")
        );
        let odd: Vec<String> = m
            .keys()
            .filter(|&&e| e != 0 && judge_errno(*op, e) == Verdict::Tolerated)
            .map(|&e| errno_name(e))
            .collect();
        if !odd.is_empty() {
            out += &format!(
                "abi-fuzz:   {} undocumented (tolerated) errnos: {}\n",
                op.name(),
                odd.join(" ")
            );
        }
    }
    out
}

pub fn run(o: &Opts) -> ExitCode {
    let nonblock = if o.child { [true, false] } else { [true, true] };
    let fds = match open_both(&o.device, nonblock) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("abi-fuzz: {e}");
            return ExitCode::from(if o.child { 2 } else { 1 });
        }
    };
    // From here on (the first two files are opened without it).
    INJECT.store(o.fail, Ordering::Relaxed);
    if !o.child {
        println!(
            "abi-fuzz: seed {} threads {} children {} seconds {} ports {}..{}{}",
            o.seed,
            o.threads,
            o.children,
            o.seconds,
            o.port_base,
            o.port_base + 7,
            o.peer.map(|p| format!(" peer {p}")).unwrap_or_default()
        );
    }
    let sh = Shared {
        fds,
        nonblock,
        dev: o.device.clone(),
        pools: Mutex::new([Pool::default(), Pool::default()]),
        violations: Mutex::new(Vec::new()),
        nviolations: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        child: o.child,
        peer: o.peer.map(|p| p.octets()),
        port_base: o.port_base,
        none: Map::new(PAGE, libc::PROT_NONE),
        ro: Map::new(PAGE, libc::PROT_READ),
        current: (0..o.threads).map(|_| AtomicU64::new(0)).collect(),
    };
    let start = Instant::now();
    let kids_stop = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let (stats, (restarts, child_fails)) = std::thread::scope(|s| {
        if !o.child {
            s.spawn(|| watchdog(&sh, o, &done));
        }
        let k = s.spawn(|| children(o, &kids_stop));
        let st = run_threads(&sh, o);
        kids_stop.store(true, Ordering::Relaxed);
        let kids = k
            .join()
            .unwrap_or((0, vec!["the children's thread panicked".into()]));
        done.store(true, Ordering::Relaxed);
        (st, kids)
    });
    let secs = start.elapsed().as_secs_f64();
    for fd in fds {
        // SAFETY: the two descriptors opened above; no thread uses them now.
        unsafe { libc::close(fd) };
    }
    print!("{}", summary(&stats));
    let total = stats.total();
    let nviol = sh.nviolations.load(Ordering::Relaxed) + child_fails.len() as u64;
    for v in sh.violations.lock().unwrap().iter().chain(&child_fails) {
        println!("abi-fuzz: FAIL: {v}");
    }
    println!(
        "abi-fuzz: calls={total} seconds={secs:.1} calls_per_s={:.0} child_restarts={restarts} violations={nviol}",
        total as f64 / secs.max(0.001)
    );
    if nviol > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_encode_as_the_header() {
        for (op, _) in OPS {
            if let Some(cmd) = op.cmd() {
                assert_eq!(ioc_type(cmd), SRNIC_IOCTL_MAGIC, "{op:?}");
                assert!(known_nr(ioc_nr(cmd)), "{op:?}");
            }
        }
        assert_eq!(
            ioc(
                3,
                SRNIC_IOCTL_MAGIC,
                0x12,
                std::mem::size_of::<SrnicStats>() as u32
            ),
            SRNIC_IOCTL_QUERY_STATS
        );
    }

    #[test]
    fn generated_commands_are_what_they_claim() {
        let mut r = Rng::new(42);
        for _ in 0..10_000 {
            let u = unknown_cmd(&mut r);
            assert_eq!(ioc_type(u), SRNIC_IOCTL_MAGIC);
            assert!(!known_nr(ioc_nr(u)));
            let f = foreign_cmd(&mut r);
            assert_ne!(ioc_type(f), SRNIC_IOCTL_MAGIC);
            assert!(!VFS_MAGICS.contains(&ioc_type(f)));
            for (op, _) in OPS {
                if let Some(c) = op.cmd() {
                    let m = misencode(&mut r, c);
                    assert_ne!(m, c);
                    assert_eq!(ioc_nr(m), ioc_nr(c));
                    assert_eq!(ioc_type(m), SRNIC_IOCTL_MAGIC);
                }
            }
            for good in [16u32, 104, 336] {
                assert_ne!(bad_size(&mut r, good), good);
            }
        }
    }

    #[test]
    fn errno_table() {
        for (op, _) in OPS {
            if op.cmd().is_some() {
                for e in COMMON {
                    assert_eq!(judge_errno(op, e), Verdict::Documented, "{op:?} {e}");
                }
            }
            for &e in op.tolerated() {
                assert!(!op.documented().contains(&e), "{op:?} lists {e} twice");
            }
            assert!(!op.name().is_empty());
        }
        assert_eq!(
            judge_errno(Op::UnknownCmd, libc::EINVAL),
            Verdict::Forbidden
        );
        assert_eq!(judge_errno(Op::DeallocPd, libc::EBUSY), Verdict::Documented);
        assert_eq!(
            judge_errno(Op::QueryDevice, libc::ENOMEM),
            Verdict::Forbidden
        );
        assert_eq!(
            judge_errno(Op::Connect, libc::EADDRNOTAVAIL),
            Verdict::Tolerated
        );
        // Socket paths: anything undocumented is reported; table-only: failed.
        assert_eq!(judge_errno(Op::Connect, libc::EXDEV), Verdict::Tolerated);
        assert_eq!(judge_errno(Op::Write, libc::EXDEV), Verdict::Forbidden);
        assert_eq!(judge_errno(Op::CreateCq, libc::EPERM), Verdict::Forbidden);
        assert_eq!(
            judge_errno(Op::RmppCreateEp, libc::EOPNOTSUPP),
            Verdict::Documented
        );
        assert_eq!(
            judge_errno(Op::RmppCreateEp, libc::ENOBUFS),
            Verdict::Tolerated
        );
        // Injected failures are tolerated from every command, only with --fail.
        INJECT.store(true, Ordering::Relaxed);
        assert_eq!(
            judge_errno(Op::QueryDevice, libc::ENOMEM),
            Verdict::Tolerated
        );
        INJECT.store(false, Ordering::Relaxed);
        assert_eq!(Op::RmppCreateEp.name(), "rmpp_create_ep");
        assert_eq!(errno_name(libc::EFAULT), "EFAULT");
    }

    /// The pointer kinds do what the checks assume: a pipe's write() (which
    /// copies from user memory like the ioctls) fails with EFAULT from every
    /// bad address and from an argument spanning into the guard page, and
    /// succeeds from scratch memory; /dev/zero cannot fill the read-only page.
    #[test]
    fn pointers_fault_as_intended() {
        let mem = Mem::new();
        let none = Map::new(PAGE, libc::PROT_NONE);
        let ro = Map::new(PAGE, libc::PROT_READ);
        let mut p = [0; 2];
        // SAFETY: p has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
        let mut r = Rng::new(3);
        for _ in 0..50 {
            let a = bad_addr(&mut r, none.addr) as usize;
            assert_eq!(sys_write(p[1], a, 16), Err(libc::EFAULT), "{a:#x}");
        }
        assert_eq!(sys_write(p[1], mem.guard() - 8, 16), Err(libc::EFAULT));
        assert_eq!(sys_write(p[1], mem.scratch.addr, 16), Ok(16));
        let (base, len) = mem.arena_rw();
        assert_eq!(sys_write(p[1], base + len - 8, 16), Err(libc::EFAULT));
        assert_eq!(sys_write(p[1], base - 8, 16), Err(libc::EFAULT));
        let zero = open_dev("/dev/zero", true).unwrap();
        assert_eq!(sys_read(zero, ro.addr, 16), Err(libc::EFAULT));
        assert_eq!(sys_read(zero, mem.scratch.addr, 16), Ok(16));
        for fd in [p[0], p[1], zero] {
            // SAFETY: descriptors opened above.
            unsafe { libc::close(fd) };
        }
    }

    #[test]
    fn argument_sizes_are_the_documented_ones() {
        assert_eq!(bytes_of(&SrnicQueryDevice::default()).len(), 104);
        assert_eq!(bytes_of(&SrnicHandleArg::default()).len(), 16);
        assert_eq!(sz::<SrnicRegMr>(), 56);
        assert_eq!(sz::<SrnicCreateQp>(), 64);
        assert_eq!(sz::<SrnicQueryQp>(), 96);
        assert_eq!(sz::<SrnicConnect>(), 72);
        // srnic_stats grew from its first version (160 bytes, SRNIC_STATS_SIZE_V1).
        assert_eq!(sz::<SrnicStats>(), 224);
        assert_eq!(SRNIC_STATS_SIZE_V1, 160);
        assert_eq!(sz::<SrnicQueryRes>(), 56);
        assert_eq!(sz::<SrnicRmppStats>(), 336);
        assert_eq!(sz::<SrnicEvent>(), 352);
        assert_eq!(sz::<SrnicPostWr>(), 40);
        let v = SrnicAllocPd {
            size: 16,
            pd_handle: 7,
            reserved: 9,
        };
        assert_eq!(from_bytes::<SrnicAllocPd>(&bytes_of(&v)), v);
    }

    #[test]
    fn seeds_are_deterministic_and_distinct() {
        let a: Vec<u64> = (0..4).map(|i| derive(7, i)).collect();
        let b: Vec<u64> = (0..4).map(|i| derive(7, i)).collect();
        assert_eq!(a, b);
        let mut c = a.clone();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), 4);
        let mut r = Rng::new(1);
        let mut s = Rng::new(1);
        assert_eq!(any_u64(&mut r), any_u64(&mut s));
        assert!((0..1000).all(|_| r.below(7) < 7));
    }
}
