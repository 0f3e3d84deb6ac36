// SPDX-License-Identifier: GPL-2.0
//! Kernel TCP sockets (IPv4, in the initial network namespace).
//!
//! [`TcpSocket`] owns a `struct socket` and releases it on drop. Connected sockets
//! can be given callbacks: the socket then holds one reference on an `Arc<T>` and
//! calls [`SocketEvents::socket_event`] from softirq context when data arrives,
//! space frees up or the state changes. [`TcpSocket::read_with`] hands queued data
//! to a closure straight from the socket buffers (`tcp_read_sock`), so receive
//! copies each byte once, from the skb to its destination.

use core::ffi::{c_int, c_long, c_void};
use core::{marker::PhantomData, ptr::NonNull};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    bindings,
    error::to_result,
    prelude::*,
    sync::{Arc, ArcBorrow},
};

/// `struct socket`, opaque here.
#[repr(C)]
pub(crate) struct RawSocket {
    _opaque: [u8; 0],
}

type CbFn = unsafe extern "C" fn(user: *mut c_void, event: c_int);
type RxFn = unsafe extern "C" fn(arg: *mut c_void, data: *const u8, len: usize) -> c_long;

extern "C" {
    fn srnic_sock_listen(addr: u32, port: u16, backlog: c_int, out: *mut *mut RawSocket) -> c_int;
    fn srnic_sock_connect(addr: u32, port: u16, out: *mut *mut RawSocket) -> c_int;
    fn srnic_sock_connect_result(sock: *mut RawSocket) -> c_int;
    fn srnic_sock_send_now(sock: *mut RawSocket, buf: *const c_void, len: usize) -> c_int;
    fn srnic_sock_accept(lsock: *mut RawSocket, out: *mut *mut RawSocket) -> c_int;
    fn srnic_sock_release(sock: *mut RawSocket);
    fn srnic_sock_shutdown(sock: *mut RawSocket, abort: bool);
    fn srnic_sock_nodelay(sock: *mut RawSocket);
    fn srnic_sock_addrs(
        sock: *mut RawSocket,
        laddr: *mut u32,
        lport: *mut u16,
        raddr: *mut u32,
        rport: *mut u16,
    ) -> c_int;
    fn srnic_sock_port(sock: *mut RawSocket) -> c_int;
    fn srnic_sock_send(
        sock: *mut RawSocket,
        vec: *const bindings::kvec,
        nr: usize,
        len: usize,
        more: bool,
        eor: bool,
    ) -> c_int;
    fn srnic_sock_mss(sock: *mut RawSocket) -> c_int;
    fn srnic_sock_recv(sock: *mut RawSocket, buf: *mut c_void, len: usize) -> c_int;
    fn srnic_sock_closed(sock: *mut RawSocket) -> bool;
    fn srnic_sock_set_callbacks(sock: *mut RawSocket, f: CbFn, user: *mut c_void) -> c_int;
    fn srnic_sock_clear_callbacks(sock: *mut RawSocket) -> *mut c_void;
    fn srnic_sock_read(sock: *mut RawSocket, f: RxFn, arg: *mut c_void) -> c_long;
}

/// An IPv4 socket address (address in network order as bytes, port in host order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SockAddrV4 {
    /// The address, most significant byte first.
    pub(crate) addr: [u8; 4],
    /// The port.
    pub(crate) port: u16,
}

impl SockAddrV4 {
    fn be(&self) -> u32 {
        u32::from_ne_bytes(self.addr)
    }
    fn from_be(addr: u32, port: u16) -> Self {
        Self {
            addr: addr.to_ne_bytes(),
            port,
        }
    }
}

/// What woke a socket's callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SocketEvent {
    /// Data arrived.
    Readable,
    /// Send buffer space freed up.
    Writable,
    /// The TCP state changed (closed, reset, ...).
    State,
}

/// Receiver of a socket's callbacks. Runs in softirq context with the socket's
/// callback lock held: it must not sleep (queue work instead).
pub(crate) trait SocketEvents: Send + Sync + 'static {
    /// Called for every event on the socket.
    fn socket_event(this: ArcBorrow<'_, Self>, event: SocketEvent);
}

/// An owned kernel TCP socket.
///
/// # Invariants
///
/// `sock` is a live `struct socket` that this value releases exactly once.
pub(crate) struct TcpSocket {
    sock: NonNull<RawSocket>,
}

/// Kernel TCP sockets srnic holds now (`srnic_stats.sockets`).
pub(crate) static SOCKETS: AtomicU64 = AtomicU64::new(0);

// SAFETY: socket operations take the socket lock internally; the handle may move
// between threads.
unsafe impl Send for TcpSocket {}
// SAFETY: concurrent sendmsg and tcp_read_sock on one socket are serialised by the
// socket lock.
unsafe impl Sync for TcpSocket {}

fn new_socket(f: impl FnOnce(*mut *mut RawSocket) -> c_int) -> Result<TcpSocket> {
    let mut out: *mut RawSocket = core::ptr::null_mut();
    to_result(f(&mut out))?;
    let sock = NonNull::new(out).ok_or(EINVAL)?;
    SOCKETS.fetch_add(1, Ordering::Relaxed);
    // INVARIANT: the glue returned a live socket on success.
    Ok(TcpSocket { sock })
}

impl TcpSocket {
    fn raw(&self) -> *mut RawSocket {
        self.sock.as_ptr()
    }

    /// Creates a socket listening on `addr`.
    pub(crate) fn listen(addr: SockAddrV4, backlog: i32) -> Result<Self> {
        // SAFETY: `out` is a valid place for the result.
        new_socket(|out| unsafe { srnic_sock_listen(addr.be(), addr.port, backlog, out) })
    }

    /// Starts connecting to `addr` without waiting; [`Self::connect_result`]
    /// tells when the connection is there (a state event comes then).
    pub(crate) fn connect(addr: SockAddrV4) -> Result<Self> {
        // SAFETY: `out` is a valid place for the result.
        new_socket(|out| unsafe { srnic_sock_connect(addr.be(), addr.port, out) })
    }

    /// Whether the connection [`Self::connect`] started is established
    /// (`Ok(false)`: still under way), or why it failed.
    pub(crate) fn connect_result(&self) -> Result<bool> {
        // SAFETY: `self` is a live socket.
        match unsafe { srnic_sock_connect_result(self.raw()) } {
            0 => Ok(true),
            e if e == super::errno::einprogress().to_errno() => Ok(false),
            e => Err(Error::from_errno(e)),
        }
    }

    /// Sends all of `buf` without waiting, or fails (EAGAIN when TCP would
    /// not take it all at once: for the few bytes of MPA start-up on a new
    /// connection, only a peer that reads nothing causes that).
    pub(crate) fn send_now(&self, buf: &[u8]) -> Result {
        // SAFETY: `self` is live; `buf` is readable for its length.
        let r = unsafe { srnic_sock_send_now(self.raw(), buf.as_ptr().cast(), buf.len()) };
        match usize::try_from(r) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(_) => Err(EAGAIN),
            Err(_) => Err(Error::from_errno(r)),
        }
    }

    /// Accepts one connection on a listening socket without waiting (EAGAIN
    /// when none is queued). The new socket has none of the listener's
    /// callbacks.
    pub(crate) fn accept(&self) -> Result<Self> {
        // SAFETY: `self` is a live socket; `out` is a valid place for the result.
        new_socket(|out| unsafe { srnic_sock_accept(self.raw(), out) })
    }

    /// Shuts both directions down (wakes every blocked sender, receiver and
    /// acceptor); `abort` resets the connection instead of closing it.
    pub(crate) fn shutdown(&self, abort: bool) {
        // SAFETY: `self` is a live socket.
        unsafe { srnic_sock_shutdown(self.raw(), abort) }
    }

    /// Disables Nagle's algorithm.
    pub(crate) fn set_nodelay(&self) {
        // SAFETY: `self` is a live socket.
        unsafe { srnic_sock_nodelay(self.raw()) }
    }

    /// The local and remote addresses (the remote one zero if not connected).
    pub(crate) fn addrs(&self) -> Result<(SockAddrV4, SockAddrV4)> {
        let (mut la, mut lp, mut ra, mut rp) = (0u32, 0u16, 0u32, 0u16);
        // SAFETY: `self` is a live socket; the out pointers are valid.
        to_result(unsafe { srnic_sock_addrs(self.raw(), &mut la, &mut lp, &mut ra, &mut rp) })?;
        Ok((SockAddrV4::from_be(la, lp), SockAddrV4::from_be(ra, rp)))
    }

    /// The local port.
    pub(crate) fn local_port(&self) -> Result<u16> {
        // SAFETY: `self` is a live socket.
        let r = unsafe { srnic_sock_port(self.raw()) };
        to_result(r.min(0))?;
        u16::try_from(r).map_err(|_| EINVAL)
    }

    /// The current send MSS (payload bytes of a full segment).
    pub(crate) fn mss(&self) -> usize {
        // SAFETY: `self` is a live socket.
        let r = unsafe { srnic_sock_mss(self.raw()) };
        usize::try_from(r).unwrap_or(0)
    }

    /// Sends all of `bufs`, in order, blocking as needed; `more` tells TCP that
    /// more data follows at once.
    pub(crate) fn send(&self, bufs: &[&[u8]], more: bool) -> Result {
        self.send_flags(bufs, more, false)
    }

    /// As [`Self::send`], and the last byte ends a record (`MSG_EOR`): TCP puts
    /// nothing sent later into the same segment.
    pub(crate) fn send_record(&self, bufs: &[&[u8]], more: bool) -> Result {
        self.send_flags(bufs, more, true)
    }

    fn send_flags(&self, bufs: &[&[u8]], more: bool, eor: bool) -> Result {
        const MAX: usize = 8;
        let mut vec = [bindings::kvec {
            iov_base: core::ptr::null_mut(),
            iov_len: 0,
        }; MAX];
        let mut pending: &[&[u8]] = bufs;
        let mut skip = 0usize;
        while !pending.is_empty() {
            let mut n = 0usize;
            let mut total = 0usize;
            for (i, b) in pending.iter().enumerate().take(MAX) {
                let b = if i == 0 { b.get(skip..).unwrap_or(&[]) } else { b };
                vec[n] = bindings::kvec {
                    iov_base: b.as_ptr() as *mut c_void,
                    iov_len: b.len(),
                };
                n += 1;
                total += b.len();
            }
            let last_batch = pending.len() <= MAX;
            // SAFETY: `self` is live; the kvecs point into `bufs`, which outlive the
            // call; the kernel only reads them.
            let r = unsafe {
                srnic_sock_send(self.raw(), vec.as_ptr(), n, total, more || !last_batch, eor && last_batch)
            };
            to_result(r.min(0))?;
            let mut sent = usize::try_from(r).map_err(|_| EIO)?;
            if sent == 0 && total != 0 {
                return Err(EPIPE);
            }
            // Advance over what went out.
            while let Some((first, rest)) = pending.split_first() {
                let left = first.len() - skip;
                if sent >= left {
                    sent -= left;
                    skip = 0;
                    pending = rest;
                } else {
                    skip += sent;
                    break;
                }
            }
        }
        Ok(())
    }

    /// Receives into `buf` what has arrived, without waiting (EAGAIN when
    /// nothing has); `Ok(0)` means the peer closed.
    pub(crate) fn recv_now(&self, buf: &mut [u8]) -> Result<usize> {
        // SAFETY: `self` is live and `buf` is writable for its length.
        let r = unsafe { srnic_sock_recv(self.raw(), buf.as_mut_ptr().cast(), buf.len()) };
        to_result(r.min(0))?;
        usize::try_from(r).map_err(|_| EIO)
    }

    /// Whether the connection is closed, reset or failed (no more data will come).
    pub(crate) fn is_closed(&self) -> bool {
        // SAFETY: `self` is a live socket.
        unsafe { srnic_sock_closed(self.raw()) }
    }

    /// Hands everything queued on the socket to `f`, piece by piece, straight from
    /// the socket buffers. `f` returns how many bytes it took (fewer stops the
    /// read) or an error, which stops the read and is returned.
    pub(crate) fn read_with<F: FnMut(&[u8]) -> Result<usize>>(&self, f: &mut F) -> Result<usize> {
        struct State<'a, F> {
            f: &'a mut F,
            err: Option<Error>,
        }
        unsafe extern "C" fn rx<F: FnMut(&[u8]) -> Result<usize>>(
            arg: *mut c_void,
            data: *const u8,
            len: usize,
        ) -> c_long {
            // SAFETY: `arg` is the `State` below, alive for the whole read; `data`
            // is readable for `len` bytes during this call.
            let (st, chunk) = unsafe {
                (
                    &mut *arg.cast::<State<'_, F>>(),
                    core::slice::from_raw_parts(data, len),
                )
            };
            match (st.f)(chunk) {
                Ok(n) => c_long::try_from(n.min(len)).unwrap_or(0),
                Err(e) => {
                    st.err = Some(e);
                    -1
                }
            }
        }
        let mut st = State { f, err: None };
        // SAFETY: `self` is live; `rx::<F>` matches `st`'s type.
        let r = unsafe { srnic_sock_read(self.raw(), rx::<F>, (&mut st as *mut State<'_, F>).cast()) };
        if let Some(e) = st.err {
            return Err(e);
        }
        to_result(i32::try_from(r.min(0)).unwrap_or(-(EIO.to_errno())))?;
        usize::try_from(r).map_err(|_| EIO)
    }

    /// Installs callbacks that call `T::socket_event` with `target`. The socket
    /// keeps one reference on `target` until [`Self::clear_callbacks`]. Fails
    /// with EBUSY when the socket has callbacks already.
    fn set_callbacks<T: SocketEvents>(&self, target: Arc<T>) -> Result {
        unsafe extern "C" fn tramp<T: SocketEvents>(user: *mut c_void, ev: c_int) {
            // SAFETY: `user` came from `Arc::into_raw` in `set_callbacks` and that
            // reference is only dropped after `srnic_sock_clear_callbacks`, which
            // waits for running callbacks.
            let this = unsafe { ArcBorrow::from_raw(user.cast_const().cast::<T>()) };
            let ev = match ev {
                1 => SocketEvent::Readable,
                2 => SocketEvent::Writable,
                _ => SocketEvent::State,
            };
            T::socket_event(this, ev);
        }
        let user = Arc::into_raw(target).cast_mut().cast::<c_void>();
        // SAFETY: `self` is live; `tramp::<T>` expects exactly this `user`.
        let r = unsafe { srnic_sock_set_callbacks(self.raw(), tramp::<T>, user) };
        if r != 0 {
            // SAFETY: the glue did not keep `user`; take the reference back.
            drop(unsafe { Arc::from_raw(user.cast_const().cast::<T>()) });
        }
        to_result(r)
    }

    /// Removes the callbacks; returns the reference they held.
    ///
    /// # Safety
    ///
    /// `T` must be the type given to [`Self::set_callbacks`] on this socket.
    unsafe fn clear_callbacks<T: SocketEvents>(&self) -> Option<Arc<T>> {
        // SAFETY: `self` is a live socket.
        let user = unsafe { srnic_sock_clear_callbacks(self.raw()) };
        // SAFETY: a non-NULL `user` is the reference `set_callbacks` leaked for `T`
        // (guaranteed by the caller); no callback can use it any more.
        NonNull::new(user).map(|p| unsafe { Arc::from_raw(p.as_ptr().cast_const().cast::<T>()) })
    }
}

/// A socket whose callbacks go to a `T`: the socket holds one reference on
/// the `T` until the callbacks are removed, by [`Attached::detach`] or on drop.
///
/// # Invariants
///
/// While `attached`, the callbacks installed on `sock` are the ones
/// [`TcpSocket::set_callbacks`] installed for this `T` (only this type
/// installs callbacks, and the glue refuses a second installation).
pub(crate) struct Attached<T: SocketEvents> {
    sock: Arc<TcpSocket>,
    attached: bool,
    _target: PhantomData<fn() -> Arc<T>>,
}

impl<T: SocketEvents> Attached<T> {
    /// Sends the events of `sock` to `target`.
    pub(crate) fn new(sock: Arc<TcpSocket>, target: Arc<T>) -> Result<Self> {
        sock.set_callbacks(target)?;
        // INVARIANT: the callbacks were just installed for `T`.
        Ok(Self {
            sock,
            attached: true,
            _target: PhantomData,
        })
    }

    /// The socket.
    pub(crate) fn socket(&self) -> &Arc<TcpSocket> {
        &self.sock
    }

    /// Removes the callbacks (no callback runs once this returns); returns
    /// the socket and the reference on the target the callbacks held. Drop
    /// that reference outside the target's own locks.
    pub(crate) fn detach(mut self) -> (Arc<TcpSocket>, Option<Arc<T>>) {
        let target = self.clear();
        (self.sock.clone(), target)
    }

    fn clear(&mut self) -> Option<Arc<T>> {
        if !core::mem::replace(&mut self.attached, false) {
            return None;
        }
        // SAFETY: by the type invariant the installed callbacks are for `T`.
        unsafe { self.sock.clear_callbacks::<T>() }
    }
}

impl<T: SocketEvents> Drop for Attached<T> {
    fn drop(&mut self) {
        drop(self.clear());
    }
}

impl Drop for TcpSocket {
    fn drop(&mut self) {
        // SAFETY: by the type invariant this is the one release of a live socket.
        unsafe { srnic_sock_release(self.raw()) };
        SOCKETS.fetch_sub(1, Ordering::Relaxed);
    }
}
