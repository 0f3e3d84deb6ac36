// SPDX-License-Identifier: GPL-2.0
//! Kernel TCP sockets (IPv4 and IPv6, in the network namespace of the process
//! that made them, with its credentials: see `srnic_sock_new` in socket.c).
//! Every call is non-blocking: connect, accept, send and receive return at
//! once, and the socket's callbacks tell when to try again.
//!
//! [`TcpSocket`] owns a `struct socket` and releases it on drop. Connected sockets
//! can be given callbacks: the socket then holds one reference on an `Arc<T>` and
//! calls [`SocketEvents::socket_event`] from softirq context when data arrives,
//! space frees up or the state changes ([`SocketEvents::data_ready`], with the
//! socket's lock held, when data arrives). [`Locked::read_with`], with the
//! lock held there or by [`TcpSocket::with_lock`], hands queued data to a
//! closure straight from the socket buffers (`tcp_read_sock`), so receive
//! copies each byte once, from the skb to its destination.

use core::ffi::{c_int, c_long, c_void};
use core::{marker::PhantomData, mem::MaybeUninit, ptr::NonNull};
use super::{errno::eafnosupport, pages::PageSlice};
use crate::uapi::SrnicSockaddr;
use core::sync::atomic::{AtomicU64, Ordering};
use super::zcopy::{RawZc, ZcRef};
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

/// `struct sock`, opaque here.
#[repr(C)]
pub(crate) struct RawSock {
    _opaque: [u8; 0],
}

type CbFn = unsafe extern "C" fn(user: *mut c_void, event: c_int, sk: *mut RawSock);
type RxFn = unsafe extern "C" fn(arg: *mut c_void, data: *const u8, len: usize) -> c_long;

extern "C" {
    fn srnic_sock_listen(a: *const SrnicSockaddr, backlog: c_int, out: *mut *mut RawSocket) -> c_int;
    fn srnic_sock_connect(a: *const SrnicSockaddr, out: *mut *mut RawSocket) -> c_int;
    fn srnic_sock_connect_result(sock: *mut RawSocket) -> c_int;
    fn srnic_sock_send_now(sock: *mut RawSocket, buf: *const c_void, len: usize) -> c_int;
    fn srnic_sock_accept(lsock: *mut RawSocket, out: *mut *mut RawSocket) -> c_int;
    fn srnic_sock_release(sock: *mut RawSocket);
    fn srnic_sock_shutdown(sock: *mut RawSocket, abort: bool);
    fn srnic_sock_nodelay(sock: *mut RawSocket);
    fn srnic_sock_addrs(sock: *mut RawSocket, local: *mut SrnicSockaddr, remote: *mut SrnicSockaddr) -> c_int;
    // `struct bio_vec` is passed as `void *`: its Rust view holds a `struct
    // page` pointer, which is not FFI-safe in every configuration.
    fn srnic_sock_send_bvec(
        sock: *mut RawSocket,
        bv: *const c_void,
        nr: usize,
        len: usize,
        more: bool,
        eor: bool,
        zc: *mut RawZc,
    ) -> c_int;
    fn srnic_bvec_virt(addr: *const c_void, len: usize, bv: *mut c_void) -> c_int;
    fn srnic_sock_set_user_timeout(sock: *mut RawSocket, ms: core::ffi::c_uint);
    fn srnic_sock_error(sock: *mut RawSocket) -> c_int;
    fn srnic_sock_mss(sock: *mut RawSocket) -> c_int;
    fn srnic_sock_path_mss(sock: *mut RawSocket) -> c_int;
    fn srnic_sock_recv(sock: *mut RawSocket, buf: *mut c_void, len: usize) -> c_int;
    fn srnic_sock_set_callbacks(sock: *mut RawSocket, f: CbFn, user: *mut c_void) -> c_int;
    fn srnic_sock_clear_callbacks(sock: *mut RawSocket) -> *mut c_void;
    fn srnic_sock_lock(sock: *mut RawSocket);
    fn srnic_sock_unlock(sock: *mut RawSocket);
    fn srnic_sock_sk(sock: *mut RawSocket) -> *mut RawSock;
    fn srnic_sk_read(sk: *mut RawSock, f: RxFn, arg: *mut c_void) -> c_long;
    fn srnic_sk_closed(sk: *mut RawSock) -> bool;
}

/// `sa_family` of an IPv4 address (AF_INET).
pub(crate) const AF_INET: u16 = bindings::AF_INET as u16;
/// `sa_family` of an IPv6 address (AF_INET6).
pub(crate) const AF_INET6: u16 = bindings::AF_INET6 as u16;

/// A socket address the module can use: an ABI address of family `AF_INET`
/// (the first 4 bytes of `addr`; the rest and `scope_id` are zero) or
/// `AF_INET6`, port in host order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SockAddr(SrnicSockaddr);

impl SockAddr {
    /// Checks an address from user space: `EAFNOSUPPORT` for a family other
    /// than IPv4 or IPv6. An IPv4 address's unused bytes are ignored.
    pub(crate) fn from_abi(a: &SrnicSockaddr) -> Result<Self> {
        match a.family {
            AF_INET => {
                let mut v4 = SrnicSockaddr { family: AF_INET, port: a.port, ..Default::default() };
                v4.addr[..4].copy_from_slice(&a.addr[..4]);
                Ok(Self(v4))
            }
            AF_INET6 => Ok(Self(*a)),
            _ => Err(eafnosupport()),
        }
    }

    /// The address as the ABI writes it.
    pub(crate) fn abi(&self) -> &SrnicSockaddr {
        &self.0
    }
}

/// Most pieces one [`SendList`] holds.
pub(crate) const SEND_VECS: usize = 64;

/// Bytes to hand to TCP in one call, as up to [`SEND_VECS`] pieces of kernel
/// memory (`bio_vec`s): slices of the kernel's direct map and slices of pinned
/// pages, borrowed for `'a`. Nothing is copied here.
///
/// # Invariants
///
/// The first `n` entries of `vecs` are initialised and describe `len` bytes
/// in total, of memory borrowed for `'a`.
pub(crate) struct SendList<'a> {
    /// Left uninitialised past `n`: a list is made for every batch of FPDUs,
    /// and zeroing its kilobyte cost more than filling the few entries a
    /// small message needs.
    vecs: [MaybeUninit<bindings::bio_vec>; SEND_VECS],
    n: usize,
    len: usize,
    _data: PhantomData<&'a [u8]>,
}

impl<'a> SendList<'a> {
    /// An empty list.
    pub(crate) fn new() -> Self {
        Self { vecs: [const { MaybeUninit::uninit() }; SEND_VECS], n: 0, len: 0, _data: PhantomData }
    }

    /// Whether no more pieces fit.
    pub(crate) fn is_full(&self) -> bool {
        self.n == SEND_VECS
    }

    /// The bytes in the list.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Adds `b`, which must be memory of the kernel's direct map (kmalloc'd
    /// or page memory: `EFAULT` for the stack or vmalloc); `ENOSPC` when full.
    pub(crate) fn push_bytes(&mut self, b: &'a [u8]) -> Result {
        if b.is_empty() {
            return Ok(());
        }
        let slot = self.vecs.get_mut(self.n).ok_or(ENOSPC)?;
        // SAFETY: `b` is readable for its length; the glue only computes its
        // page and checks that it has one, and fills `slot` when it returns 0.
        to_result(unsafe { srnic_bvec_virt(b.as_ptr().cast(), b.len(), slot.as_mut_ptr().cast()) })?;
        // INVARIANT: `b` is borrowed for 'a.
        self.n += 1;
        self.len += b.len();
        Ok(())
    }

    /// Adds a slice of pinned pages; `ENOSPC` when full.
    pub(crate) fn push_page(&mut self, p: PageSlice<'a>) -> Result {
        if p.len == 0 {
            return Ok(());
        }
        let slot = self.vecs.get_mut(self.n).ok_or(ENOSPC)?;
        slot.write(bindings::bio_vec { bv_page: p.page, bv_len: p.len, bv_offset: p.off });
        // INVARIANT: the page stays pinned for 'a (`PageSlice`).
        self.n += 1;
        self.len += p.len as usize;
        Ok(())
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

/// Receiver of a socket's callbacks. Runs in softirq context (or in the
/// process that releases the socket's lock, for the segments TCP queued on its
/// backlog meanwhile) with the socket's callback lock held and bottom halves
/// disabled: it must not sleep (queue work instead).
pub(crate) trait SocketEvents: Send + Sync + 'static {
    /// Called for every event on the socket ([`SocketEvents::data_ready`]
    /// too, unless the receiver has its own).
    fn socket_event(this: ArcBorrow<'_, Self>, event: SocketEvent);

    /// Data arrived: `sock`, whose lock TCP holds for this call, may be read
    /// right here ([`Locked::read_with`]).
    fn data_ready(this: ArcBorrow<'_, Self>, sock: &Locked<'_>) {
        let _ = sock;
        Self::socket_event(this, SocketEvent::Readable);
    }
}

/// A socket whose lock is held: by [`TcpSocket::with_lock`] (`lock_sock`), or by
/// TCP around a data-ready callback ([`SocketEvents::data_ready`]).
///
/// # Invariants
///
/// `sk` is a live socket whose lock is held for `'a`.
pub(crate) struct Locked<'a> {
    sk: NonNull<RawSock>,
    _lock: PhantomData<&'a ()>,
}

impl Locked<'_> {
    /// Hands everything queued on the socket to `f`, piece by piece, straight
    /// from the socket buffers (`tcp_read_sock`). `f` returns how many bytes it
    /// took (fewer stops the read) or an error, which stops the read and is
    /// returned.
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
        // SAFETY: `sk` is live and locked (type invariant); `rx::<F>` matches
        // `st`'s type.
        let r = unsafe { srnic_sk_read(self.sk.as_ptr(), rx::<F>, (&mut st as *mut State<'_, F>).cast()) };
        if let Some(e) = st.err {
            return Err(e);
        }
        to_result(i32::try_from(r.min(0)).unwrap_or(-(EIO.to_errno())))?;
        usize::try_from(r).map_err(|_| EIO)
    }

    /// Whether the connection is over for the reader: closed by the peer,
    /// reset or failed, with everything that arrived before the end read.
    /// Data still queued (it may have arrived after the last read) keeps it
    /// open: its arrival calls the data-ready callback again.
    pub(crate) fn is_closed(&self) -> bool {
        // SAFETY: `sk` is live and locked (type invariant).
        unsafe { srnic_sk_closed(self.sk.as_ptr()) }
    }
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

    /// Creates a socket listening on `addr` (on `[::]`: IPv6 and, unless
    /// the namespace's `net.ipv6.bindv6only` is set, IPv4).
    pub(crate) fn listen(addr: &SockAddr, backlog: i32) -> Result<Self> {
        // SAFETY: `addr.0` is a valid address for the call; `out` is a valid
        // place for the result.
        new_socket(|out| unsafe { srnic_sock_listen(&addr.0, backlog, out) })
    }

    /// Starts connecting to `addr` without waiting; [`Self::connect_result`]
    /// tells when the connection is there (a state event comes then).
    pub(crate) fn connect(addr: &SockAddr) -> Result<Self> {
        // SAFETY: `addr.0` is a valid address for the call; `out` is a valid
        // place for the result.
        new_socket(|out| unsafe { srnic_sock_connect(&addr.0, out) })
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

    /// The local and remote addresses as the ABI writes them (the remote
    /// one zero if not connected; an IPv4 peer of an IPv6 listener as IPv4).
    pub(crate) fn addrs(&self) -> Result<(SrnicSockaddr, SrnicSockaddr)> {
        let (mut local, mut remote) = (SrnicSockaddr::default(), SrnicSockaddr::default());
        // SAFETY: `self` is a live socket; the out pointers are valid.
        to_result(unsafe { srnic_sock_addrs(self.raw(), &mut local, &mut remote) })?;
        Ok((local, remote))
    }

    /// The current send MSS (payload bytes of a full segment).
    pub(crate) fn mss(&self) -> usize {
        // SAFETY: `self` is a live socket.
        let r = unsafe { srnic_sock_mss(self.raw()) };
        usize::try_from(r).unwrap_or(0)
    }

    /// The MSS the peer's MSS option and the path MTU allow, TCP options not
    /// subtracted (a peer announcing 536 gives 536).
    pub(crate) fn path_mss(&self) -> usize {
        // SAFETY: `self` is a live socket.
        let r = unsafe { srnic_sock_path_mss(self.raw()) };
        usize::try_from(r).unwrap_or(0)
    }

    /// Hands the bytes of `list` to TCP without waiting; returns how many it
    /// took: all, fewer when its send buffer filled, 0 when it took none (the
    /// socket's [`SocketEvent::Writable`] tells when to go on). `more`: more
    /// data follows at once; `eor`: when all of `list` goes out, its last byte
    /// ends a record (`MSG_EOR`: TCP puts nothing sent later into the same
    /// segment). With `zc`, TCP references the pages instead of copying
    /// them and tells the notice when it is done with them (see
    /// [`super::zcopy`]); every piece must then be memory nothing changes
    /// until then: pinned pages of a message whose work request waits for the
    /// notice, and [`super::zcopy::Frag`]s. A piece TCP cannot reference
    /// (slab memory) makes the call copy instead.
    pub(crate) fn send_list(&self, list: &SendList<'_>, more: bool, eor: bool, zc: Option<ZcRef<'_>>) -> Result<usize> {
        if list.len == 0 {
            return Ok(0);
        }
        // SAFETY: `self` is live; the first `list.n` bio_vecs are initialised
        // and describe memory that `list` borrows for the call (direct-map
        // kernel memory or pinned pages, see `SendList`); TCP only reads it,
        // and takes page references for what it keeps. `zc` is a live notice.
        let zc = zc.map_or(core::ptr::null_mut(), |z| z.as_ptr());
        let r = unsafe { srnic_sock_send_bvec(self.raw(), list.vecs.as_ptr().cast(), list.n, list.len, more, eor, zc) };
        match r {
            r if r >= 0 => usize::try_from(r).map_err(|_| EIO),
            r if r == -(bindings::EAGAIN as c_int) => Ok(0),
            r => Err(Error::from_errno(r)),
        }
    }

    /// Sets TCP's user timeout (`TCP_USER_TIMEOUT`): the connection fails with
    /// `ETIMEDOUT` when sent data stays unacknowledged, or the peer's receive
    /// window stays closed, for `ms` milliseconds.
    pub(crate) fn set_user_timeout(&self, ms: u32) {
        // SAFETY: `self` is a live socket.
        unsafe { srnic_sock_set_user_timeout(self.raw(), ms) }
    }

    /// The socket's pending error (left in place), if any.
    pub(crate) fn error(&self) -> Option<Error> {
        // SAFETY: `self` is a live socket.
        match unsafe { srnic_sock_error(self.raw()) } {
            0 => None,
            e => Some(Error::from_errno(-e.abs())),
        }
    }

    /// Receives into `buf` what has arrived, without waiting (EAGAIN when
    /// nothing has); `Ok(0)` means the peer closed.
    pub(crate) fn recv_now(&self, buf: &mut [u8]) -> Result<usize> {
        // SAFETY: `self` is live and `buf` is writable for its length.
        let r = unsafe { srnic_sock_recv(self.raw(), buf.as_mut_ptr().cast(), buf.len()) };
        to_result(r.min(0))?;
        usize::try_from(r).map_err(|_| EIO)
    }


    /// Runs `f` with the socket's lock held (`lock_sock`): `f` may read the
    /// socket ([`Locked::read_with`]). Segments that arrive meanwhile wait on
    /// the socket's backlog; releasing the lock processes them, which calls the
    /// data-ready callback in this context.
    pub(crate) fn with_lock<R>(&self, f: impl FnOnce(&Locked<'_>) -> R) -> R {
        // SAFETY: `self` is a live socket.
        unsafe { srnic_sock_lock(self.raw()) };
        // INVARIANT: the socket is live and locked until the unlock below.
        let locked = Locked {
            // SAFETY: `self` is a live socket, which has a `struct sock`.
            sk: unsafe { NonNull::new_unchecked(srnic_sock_sk(self.raw())) },
            _lock: PhantomData,
        };
        let r = f(&locked);
        // SAFETY: locked above; `locked` is not used after this.
        unsafe { srnic_sock_unlock(self.raw()) };
        r
    }

    /// Installs callbacks that call `T::socket_event` with `target`. The socket
    /// keeps one reference on `target` until [`Self::clear_callbacks`]. Fails
    /// with EBUSY when the socket has callbacks already.
    fn set_callbacks<T: SocketEvents>(&self, target: Arc<T>) -> Result {
        unsafe extern "C" fn tramp<T: SocketEvents>(user: *mut c_void, ev: c_int, sk: *mut RawSock) {
            // SAFETY: `user` came from `Arc::into_raw` in `set_callbacks` and that
            // reference is only dropped after `srnic_sock_clear_callbacks`, which
            // waits for running callbacks.
            let this = unsafe { ArcBorrow::from_raw(user.cast_const().cast::<T>()) };
            match (ev, NonNull::new(sk)) {
                // INVARIANT: TCP holds the lock of `sk`, a live socket, for the
                // callback (see `srnic_sk_read` in the glue).
                (1, Some(sk)) => T::data_ready(this, &Locked { sk, _lock: PhantomData }),
                (1, None) => T::socket_event(this, SocketEvent::Readable),
                (2, _) => T::socket_event(this, SocketEvent::Writable),
                _ => T::socket_event(this, SocketEvent::State),
            }
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
