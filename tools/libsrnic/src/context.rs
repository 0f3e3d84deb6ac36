// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! The device context: one open file of `/dev/srnic`, the owner of every object
//! created through it, and the event demultiplexer.
//!
//! Events of every object arrive on the one file descriptor. The library reads
//! them into one queue in arrival order; a wait for a particular object (a CQ's
//! notification, a QP's ESTABLISHED, a listener's CONNECT_REQUEST) takes the first
//! queued event routed to that object and otherwise reads more records. Only one
//! thread reads the file at a time; the others sleep on a condition variable and
//! look at the queue again whenever the reader has added to it.

use crate::error::{Error, Result};
use crate::event::{Event, ObjectKind, EVENT_RECORD_SIZE};
use srnic_uapi as abi;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where the module's misc device appears.
pub const DEFAULT_PATH: &str = "/dev/srnic";

/// How many records one `read()` asks for.
const READ_BATCH: usize = 32;

/// An open verbs context on the srnic device (ibverbs' `ibv_context`).
///
/// Cloning is cheap and shares the context. Every object created through it
/// holds it alive; the file (and with it every kernel object still left) is
/// closed when the last clone and the last object are dropped.
#[derive(Clone, Debug)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

#[derive(Debug)]
pub(crate) struct ContextInner {
    file: File,
    attr: DeviceAttr,
    events: Mutex<EventQueue>,
    cond: Condvar,
    destroy_errors: AtomicU64,
}

#[derive(Debug, Default)]
struct EventQueue {
    queue: VecDeque<Event>,
    /// One thread is reading the file (outside the lock).
    reading: bool,
    /// Event records read from the file so far.
    records_read: u64,
}

/// Capability bits the module reports (`SRNIC_CAP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities(pub u64);

impl Capabilities {
    /// The names of the set bits, in bit order (`SRNIC_CAP_MPA_CRC` is
    /// `mpa-crc`); unknown bits as `bitN`.
    pub fn names(&self) -> Vec<String> {
        crate::names::bit_names("SRNIC_CAP_", self.0)
    }
}

/// What `SRNIC_IOCTL_QUERY_DEVICE` reports (ibverbs' `ibv_device_attr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    /// The module's ABI version.
    pub abi_version: u32,
    /// What the module implements.
    pub capabilities: Capabilities,
    /// The raw structure with every limit.
    pub raw: abi::SrnicQueryDevice,
}

/// Device-wide counters (`SRNIC_IOCTL_QUERY_STATS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// The raw structure.
    pub raw: abi::SrnicStats,
}

impl Stats {
    /// Every counter as (name, value), in ABI order (the names are the fields'
    /// names in `struct srnic_stats`).
    pub fn counters(&self) -> [(&'static str, u64); abi::SrnicStats::COUNTER_NAMES.len()] {
        self.raw.counters()
    }
}

impl Context {
    /// Opens the device at [`DEFAULT_PATH`].
    pub fn open() -> Result<Self> {
        Self::open_path(DEFAULT_PATH)
    }

    /// Opens the device at `path` and checks that it speaks this library's ABI.
    ///
    /// The file is opened non-blocking: the library waits with `poll()` itself.
    pub fn open_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .map_err(|source| Error::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let attr = query_file(&file)?;
        if attr.abi_version != abi::SRNIC_ABI_VERSION {
            return Err(Error::AbiMismatch {
                module: attr.abi_version,
                library: abi::SRNIC_ABI_VERSION,
            });
        }
        Ok(Self {
            inner: Arc::new(ContextInner {
                file,
                attr,
                events: Mutex::new(EventQueue::default()),
                cond: Condvar::new(),
                destroy_errors: AtomicU64::new(0),
            }),
        })
    }

    /// Queries the ABI version, capabilities and limits (`ibv_query_device`).
    pub fn query_device(&self) -> Result<DeviceAttr> {
        query_file(&self.inner.file)
    }

    /// The attributes queried when the device was opened (no system call).
    pub fn device_attr(&self) -> &DeviceAttr {
        &self.inner.attr
    }

    /// Reads the device-wide counters.
    pub fn stats(&self) -> Result<Stats> {
        let mut s = abi::SrnicStats {
            size: std::mem::size_of::<abi::SrnicStats>() as u32,
            ..Default::default()
        };
        // SAFETY: `s` is the structure the command encodes and holds no pointers.
        unsafe { self.inner.cmd(abi::SRNIC_IOCTL_QUERY_STATS, &mut s) }?;
        Ok(Stats { raw: s })
    }

    /// Whether anything besides this handle keeps the context alive (clones or
    /// objects created through it). The C ABI uses it to answer EBUSY.
    pub fn in_use(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }

    /// How many destroy commands issued from `Drop` failed (they cannot report an
    /// error; the kernel frees the object at the latest when the file closes).
    pub fn destroy_errors(&self) -> u64 {
        self.inner.destroy_errors.load(Ordering::Relaxed)
    }

    /// Waits up to `timeout` (`None`: forever) for the next event of any object,
    /// in arrival order. `Ok(None)` when the time ran out.
    ///
    /// This takes events that per-object waits ([`crate::CompletionQueue::wait_event`],
    /// [`crate::Listener::get_request`], [`crate::QueuePair::wait_event`]) would
    /// otherwise consume; use one style or the other for a given object.
    pub fn next_event(&self, timeout: Option<Duration>) -> Result<Option<Event>> {
        self.inner.wait_event(|_| true, timeout)
    }

    /// The next event of any object if one is queued or readable now, without
    /// sleeping.
    pub fn try_event(&self) -> Result<Option<Event>> {
        self.next_event(Some(Duration::ZERO))
    }

    /// How many event records calls on this context have read from the file
    /// so far. Every wait, including a zero-timeout one, may read records of
    /// other objects into the library's queue, after which the file no longer
    /// polls readable for them: a thread that dispatches events from poll()
    /// runs its per-object waits again until a round of them reads nothing
    /// new.
    pub fn events_read(&self) -> u64 {
        self.inner.records_read()
    }

    /// Reads every record the file has ready into the library's queue without
    /// sleeping and returns how many are queued in total. Call it when an epoll
    /// set reports the device fd readable, then use the per-object waits with a
    /// zero timeout. Before sleeping in epoll again, check that this returns 0:
    /// queued events do not make the fd readable.
    pub fn process_events(&self) -> Result<usize> {
        self.inner
            .wait_event(|_| false, Some(Duration::ZERO))
            .map(|_| ())?;
        Ok(self.inner.lock().queue.len())
    }

    /// Issues a raw ioctl on the device file and returns its non-negative result.
    ///
    /// # Safety
    ///
    /// `arg` must be what `cmd` expects: for srnic's commands, the address of a
    /// live, writable argument structure of the size `cmd` encodes, or any value
    /// when testing the module's error paths with an address it must reject.
    pub unsafe fn ioctl(&self, cmd: u32, arg: usize) -> io::Result<i32> {
        // SAFETY: forwarded to the caller.
        unsafe { raw_ioctl(&self.inner.file, cmd, arg) }
    }
}

impl AsFd for Context {
    /// The device fd, for poll/epoll: readable when an event record is pending
    /// in the kernel (see [`Context::process_events`]).
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.file.as_fd()
    }
}

/// ioctl(2) on `file`.
///
/// # Safety
///
/// As [`Context::ioctl`].
unsafe fn raw_ioctl(file: &File, cmd: u32, arg: usize) -> io::Result<i32> {
    // SAFETY: the caller guarantees `arg` fits `cmd`; the fd is open.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), cmd as _, arg) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn query_file(file: &File) -> Result<DeviceAttr> {
    let mut q = abi::SrnicQueryDevice {
        size: std::mem::size_of::<abi::SrnicQueryDevice>() as u32,
        ..Default::default()
    };
    // SAFETY: `q` is a live, writable `#[repr(C)]` structure of exactly the size
    // the command number encodes.
    unsafe {
        raw_ioctl(
            file,
            abi::SRNIC_IOCTL_QUERY_DEVICE,
            &mut q as *mut _ as usize,
        )
    }
    .map_err(Error::os("SRNIC_IOCTL_QUERY_DEVICE"))?;
    Ok(DeviceAttr {
        abi_version: q.abi_version,
        capabilities: Capabilities(q.capabilities),
        raw: q,
    })
}

impl ContextInner {
    pub(crate) fn device_attr(&self) -> &DeviceAttr {
        &self.attr
    }

    /// The device file's descriptor (for `mmap()`).
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }

    fn lock(&self) -> MutexGuard<'_, EventQueue> {
        // Nothing panics while holding the lock; if something did, the queue is
        // still consistent (every update is a single push or remove).
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Issues command `cmd` with argument structure `arg`, after checking that
    /// the command encodes `T`'s size. An error names the command as the
    /// header does (`SRNIC_IOCTL_...`).
    ///
    /// # Safety
    ///
    /// `T` must be the structure `cmd` takes, and every user pointer inside `arg`
    /// must be valid for what the command does with it.
    pub(crate) unsafe fn cmd<T>(&self, cmd: u32, arg: &mut T) -> Result<i32> {
        if (cmd >> 16) as usize & 0x3fff != std::mem::size_of::<T>() {
            return Err(Error::InvalidArgument("ioctl size mismatch"));
        }
        // SAFETY: the size matches; the caller guarantees the rest.
        unsafe { raw_ioctl(&self.file, cmd, arg as *mut T as usize) }.map_err(|source| {
            // Looked up only on failure: the commands are polled in hot loops.
            let op = abi::constants("SRNIC_IOCTL_")
                .find(|c| c.value == u64::from(cmd))
                .map_or("ioctl", |c| c.name);
            Error::Os { op, source }
        })
    }

    /// Destroys `handle` with a `srnic_handle_arg` command; for `Drop`, so a
    /// failure is only counted.
    pub(crate) fn destroy(&self, cmd: u32, handle: u32) {
        let mut a = abi::SrnicHandleArg {
            size: std::mem::size_of::<abi::SrnicHandleArg>() as u32,
            handle,
            reserved: 0,
        };
        // SAFETY: SrnicHandleArg is what every destroy command takes; no pointers.
        if unsafe { self.cmd(cmd, &mut a) }.is_err() {
            self.destroy_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Drops every queued event of a destroyed object.
    pub(crate) fn purge(&self, kind: ObjectKind, handle: u32) {
        self.lock().queue.retain(|e| e.target() != (kind, handle));
    }

    /// `write()` of post records.
    pub(crate) fn write_records(&self, buf: &[u8]) -> io::Result<usize> {
        (&self.file).write_nonblocking(buf)
    }

    /// Takes the first queued event that `want` accepts, reading more records
    /// until one arrives or `timeout` runs out (`Ok(None)`). A zero timeout reads
    /// what is ready once and never sleeps.
    pub(crate) fn wait_event(
        &self,
        want: impl Fn(&Event) -> bool,
        timeout: Option<Duration>,
    ) -> Result<Option<Event>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut read_once = false;
        let mut q = self.lock();
        loop {
            if let Some(i) = q.queue.iter().position(&want) {
                return Ok(q.queue.remove(i));
            }
            let remaining = match deadline {
                None => None,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() && read_once {
                        return Ok(None);
                    }
                    Some(left)
                }
            };
            if q.reading {
                q = match remaining {
                    None => self.cond.wait(q).unwrap_or_else(|e| e.into_inner()),
                    Some(r) if r.is_zero() => {
                        // Someone else is reading right now; a zero-timeout
                        // caller does not wait for them.
                        return Ok(None);
                    }
                    Some(r) => {
                        self.cond
                            .wait_timeout(q, r)
                            .unwrap_or_else(|e| e.into_inner())
                            .0
                    }
                };
                continue;
            }
            q.reading = true;
            drop(q);
            let got = self.poll_and_read(remaining);
            read_once = true;
            q = self.lock();
            q.reading = false;
            self.cond.notify_all();
            let got = got?;
            q.records_read += got.len() as u64;
            q.queue.extend(got);
        }
    }

    /// Event records read from the file so far, by any call (see
    /// [`Context::events_read`]).
    pub(crate) fn records_read(&self) -> u64 {
        self.lock().records_read
    }

    /// Sleeps in poll() up to `timeout` for the file to be readable, then reads
    /// every ready record. Called by the one reading thread, without the lock.
    fn poll_and_read(&self, timeout: Option<Duration>) -> Result<Vec<Event>> {
        let ms: libc::c_int = match timeout {
            None => -1,
            Some(t) => {
                // Round up so that a short timeout still sleeps.
                let ms = t.as_micros().div_ceil(1000);
                ms.min(i32::MAX as u128) as libc::c_int
            }
        };
        let mut pfd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(Vec::new());
            }
            return Err(Error::Os {
                op: "poll",
                source: e,
            });
        }
        let mut out = Vec::new();
        let mut buf = vec![0u8; READ_BATCH * EVENT_RECORD_SIZE];
        loop {
            match (&self.file).read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    out.extend(Event::decode_records(&buf[..n])?);
                    if n < buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => return Err(Error::Os { op: "read", source }),
            }
        }
        Ok(out)
    }
}

/// `write()` that hands EAGAIN back as an error instead of retrying.
trait WriteNonblocking {
    fn write_nonblocking(self, buf: &[u8]) -> io::Result<usize>;
}

impl WriteNonblocking for &File {
    fn write_nonblocking(self, buf: &[u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for reads of its length.
            let r = unsafe { libc::write(self.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
            if r >= 0 {
                return Ok(r as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

#[cfg(test)]
impl Context {
    /// A device over any file (the read end of a pipe in the demultiplexer
    /// tests), without the ABI check.
    pub(crate) fn from_file_for_test(file: File) -> Self {
        Self {
            inner: Arc::new(ContextInner {
                file,
                attr: DeviceAttr {
                    abi_version: abi::SRNIC_ABI_VERSION,
                    capabilities: Capabilities(0),
                    raw: Default::default(),
                },
                events: Mutex::new(EventQueue::default()),
                cond: Condvar::new(),
                destroy_errors: AtomicU64::new(0),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;
    use std::io::Write;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// A device reading from a non-blocking pipe, and the pipe's write end.
    fn pipe_context() -> (Context, File) {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors.
        assert_eq!(
            unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK) },
            0
        );
        // SAFETY: pipe2 just created both descriptors and nobody else owns them.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        (Context::from_file_for_test(File::from(r)), File::from(w))
    }

    fn record(ty: u32, handle: u32) -> Vec<u8> {
        let ev = abi::SrnicEvent {
            event_type: ty,
            handle,
            ..Default::default()
        };
        crate::pod::as_bytes(&ev).to_vec()
    }

    fn wait_for(ctx: &Context, kind: ObjectKind, h: u32, t: Option<Duration>) -> Option<Event> {
        ctx.inner
            .wait_event(|e| e.target() == (kind, h), t)
            .unwrap()
    }

    #[test]
    fn events_are_routed_per_object_in_arrival_order() {
        let (ctx, mut w) = pipe_context();
        let mut b = record(abi::SRNIC_EVENT_CQ, 1);
        b.extend(record(abi::SRNIC_EVENT_ESTABLISHED, 1));
        b.extend(record(abi::SRNIC_EVENT_CONNECT_REQUEST, 1));
        b.extend(record(abi::SRNIC_EVENT_DISCONNECTED, 1));
        w.write_all(&b).unwrap();
        // Handle 1 of each kind is a different object.
        let e = wait_for(&ctx, ObjectKind::Qp, 1, Some(Duration::ZERO)).unwrap();
        assert_eq!(e.kind, EventKind::Established);
        let e = wait_for(&ctx, ObjectKind::Listener, 1, Some(Duration::ZERO)).unwrap();
        assert_eq!(e.kind, EventKind::ConnectRequest);
        assert_eq!(ctx.process_events().unwrap(), 2);
        // next_event takes the rest in arrival order.
        assert_eq!(ctx.try_event().unwrap().unwrap().kind, EventKind::CqNotify);
        assert_eq!(
            ctx.try_event().unwrap().unwrap().kind,
            EventKind::Disconnected
        );
        assert_eq!(ctx.try_event().unwrap(), None);
    }

    #[test]
    fn a_wait_times_out_and_keeps_other_objects_events() {
        let (ctx, mut w) = pipe_context();
        w.write_all(&record(abi::SRNIC_EVENT_CQ, 7)).unwrap();
        let t0 = Instant::now();
        assert_eq!(
            wait_for(&ctx, ObjectKind::Cq, 8, Some(Duration::from_millis(30))),
            None
        );
        assert!(t0.elapsed() >= Duration::from_millis(30));
        assert!(wait_for(&ctx, ObjectKind::Cq, 7, Some(Duration::ZERO)).is_some());
    }

    #[test]
    fn purge_drops_a_destroyed_objects_events() {
        let (ctx, mut w) = pipe_context();
        let mut b = record(abi::SRNIC_EVENT_QP_ERROR, 3);
        b.extend(record(abi::SRNIC_EVENT_QP_ERROR, 4));
        w.write_all(&b).unwrap();
        ctx.process_events().unwrap();
        ctx.inner.purge(ObjectKind::Qp, 3);
        assert_eq!(ctx.try_event().unwrap().unwrap().handle, 4);
        assert_eq!(ctx.try_event().unwrap(), None);
    }

    #[test]
    fn two_threads_each_get_their_own_event() {
        let (ctx, mut w) = pipe_context();
        let d2 = ctx.clone();
        let t = std::thread::spawn(move || {
            wait_for(&d2, ObjectKind::Cq, 2, Some(Duration::from_secs(10))).map(|e| e.kind)
        });
        let d3 = ctx.clone();
        let u = std::thread::spawn(move || {
            wait_for(&d3, ObjectKind::Qp, 2, Some(Duration::from_secs(10))).map(|e| e.kind)
        });
        std::thread::sleep(Duration::from_millis(20));
        w.write_all(&record(abi::SRNIC_EVENT_ESTABLISHED, 2))
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        w.write_all(&record(abi::SRNIC_EVENT_CQ_ERROR, 2)).unwrap();
        assert_eq!(t.join().unwrap(), Some(EventKind::CqError));
        assert_eq!(u.join().unwrap(), Some(EventKind::Established));
    }

    #[test]
    fn a_partial_record_is_a_protocol_error() {
        let (ctx, mut w) = pipe_context();
        w.write_all(&[0u8; 10]).unwrap();
        assert!(matches!(ctx.try_event(), Err(Error::Protocol(_))));
    }

    #[test]
    fn many_records_are_read_in_batches() {
        let (ctx, mut w) = pipe_context();
        // More than one read() batch (32 records).
        for i in 0..40 {
            w.write_all(&record(abi::SRNIC_EVENT_CQ, 100 + i)).unwrap();
        }
        assert_eq!(ctx.process_events().unwrap(), 40);
        for i in 0..40 {
            assert_eq!(ctx.try_event().unwrap().unwrap().handle, 100 + i);
        }
    }

    #[test]
    fn capability_names() {
        let c = Capabilities(abi::SRNIC_CAP_IWARP | abi::SRNIC_CAP_RMPP | 1 << 40);
        assert_eq!(c.names(), vec!["iwarp", "rmpp", "bit40"]);
        assert!(Capabilities(0).names().is_empty());
    }

    #[test]
    fn open_missing_device_reports_path() {
        let e = Context::open_path("/nonexistent/srnic").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        assert!(e.to_string().contains("/nonexistent/srnic"));
    }

    #[test]
    fn not_a_srnic_device_fails_the_query() {
        // /dev/null opens, but the query ioctl fails (ENOTTY).
        let e = Context::open_path("/dev/null").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOTTY));
    }

    #[test]
    fn stats_counter_names_follow_the_abi() {
        let s = Stats {
            raw: abi::SrnicStats {
                contexts: 1,
                crc_errors: 11,
                sockets: 17,
                ..Default::default()
            },
        };
        let c = s.counters();
        assert_eq!(c[0], ("contexts", 1));
        assert_eq!(c[10], ("crc_errors", 11));
        assert_eq!(c[16], ("sockets", 17));
    }
}
