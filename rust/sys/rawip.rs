// SPDX-License-Identifier: GPL-2.0
//! Raw IPv4 sockets of one IP protocol, for VMTP (IP protocol 81): made in
//! the calling process's network namespace (`rawip.c`).
//!
//! A [`RawIp<T>`] owns the socket. Once attached it calls
//! [`RawIpEvents::readable`] with its owner `T` whenever a datagram is
//! queued (softirq: queue work, nothing else) and holds one reference on the
//! owner, given back by [`RawIp::detach`]. Datagrams are taken without
//! waiting ([`RawIp::recv`]) and sent without waiting ([`RawIp::send`]), so
//! no caller ever blocks on the network.

use core::{
    ffi::{c_int, c_void},
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    bindings,
    error::to_result,
    prelude::*,
    sync::{Arc, ArcBorrow},
};

/// `struct srnic_rawip`, opaque here.
#[repr(C)]
struct Raw {
    _opaque: [u8; 0],
}

type ReadyFn = unsafe extern "C" fn(user: *mut c_void);

extern "C" {
    fn srnic_rawip_open(protocol: c_int, out: *mut *mut Raw) -> c_int;
    fn srnic_rawip_attach(r: *mut Raw, f: ReadyFn, user: *mut c_void) -> c_int;
    fn srnic_rawip_detach(r: *mut Raw) -> *mut c_void;
    fn srnic_rawip_release(r: *mut Raw);
    fn srnic_rawip_recv(r: *mut Raw, buf: *mut c_void, len: usize, src: *mut u8) -> c_int;
    fn srnic_rawip_send(r: *mut Raw, dst: *const u8, buf: *const c_void, len: usize) -> c_int;
    fn srnic_rawip_in_current_net(r: *mut Raw) -> bool;
    fn srnic_ipv4_local_mtu(addr: *const u8) -> c_int;
}

/// The owner of a raw socket's callback.
pub(crate) trait RawIpEvents: Send + Sync + 'static {
    /// A datagram was queued. Runs in softirq context with the socket's
    /// callback lock held: it must not sleep (queue work).
    fn readable(this: ArcBorrow<'_, Self>);
}

/// A received datagram: where it came from and its whole length (IP header
/// included; more than the buffer when it was cut).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Datagram {
    pub(crate) src: [u8; 4],
    pub(crate) len: usize,
}

/// A raw IPv4 socket whose callback goes to a `T`.
///
/// # Invariants
///
/// `raw` is a live `struct srnic_rawip`, released once, on drop. While
/// `attached`, its callback is `ready::<T>` with a reference on a `T` (from
/// `Arc::into_raw`) as its user pointer.
pub(crate) struct RawIp<T: RawIpEvents> {
    raw: NonNull<Raw>,
    attached: AtomicBool,
    _owner: PhantomData<fn() -> Arc<T>>,
}

// SAFETY: the socket calls are safe from any thread; attaching and detaching
// are serialised by the socket's callback lock and `attached`.
unsafe impl<T: RawIpEvents> Send for RawIp<T> {}
// SAFETY: as above.
unsafe impl<T: RawIpEvents> Sync for RawIp<T> {}

unsafe extern "C" fn ready<T: RawIpEvents>(user: *mut c_void) {
    // SAFETY: `user` is the reference `attach` leaked; `srnic_rawip_detach`
    // waits for running callbacks before that reference is taken back.
    let this = unsafe { ArcBorrow::from_raw(user.cast_const().cast::<T>()) };
    T::readable(this);
}

impl<T: RawIpEvents> RawIp<T> {
    /// A socket of IP protocol `protocol` in the caller's network namespace,
    /// without a callback yet ([`RawIp::attach`]).
    pub(crate) fn open(protocol: u8) -> Result<Self> {
        let mut raw = core::ptr::null_mut();
        // SAFETY: `raw` is written on success only.
        to_result(unsafe { srnic_rawip_open(c_int::from(protocol), &mut raw) })?;
        // INVARIANT: a new socket, not attached.
        Ok(Self {
            raw: NonNull::new(raw).ok_or(ENOMEM)?,
            attached: AtomicBool::new(false),
            _owner: PhantomData,
        })
    }

    /// Sends the socket's callbacks to `owner`, which the socket holds a
    /// reference on until [`RawIp::detach`]. `EBUSY` when attached already.
    pub(crate) fn attach(&self, owner: Arc<T>) -> Result {
        if self.attached.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        let user = Arc::into_raw(owner).cast_mut().cast::<c_void>();
        // SAFETY: `raw` is live; `ready::<T>` expects exactly this `user`.
        let r = unsafe { srnic_rawip_attach(self.raw.as_ptr(), ready::<T>, user) };
        if r != 0 {
            // SAFETY: the glue did not keep `user`: take the reference back.
            drop(unsafe { Arc::from_raw(user.cast_const().cast::<T>()) });
            self.attached.store(false, Ordering::Release);
            return Err(Error::from_errno(r));
        }
        // INVARIANT: attached with a reference on `owner`.
        Ok(())
    }

    /// Removes the callback (none runs once this returns) and gives back the
    /// reference it held; `None` when detached already. Drop the reference
    /// outside the owner's locks.
    pub(crate) fn detach(&self) -> Option<Arc<T>> {
        if !self.attached.swap(false, Ordering::AcqRel) {
            return None;
        }
        // SAFETY: `raw` is live.
        let user = unsafe { srnic_rawip_detach(self.raw.as_ptr()) };
        // SAFETY: a non-NULL `user` is the reference `open` leaked for `T`;
        // no callback can use it any more.
        NonNull::new(user).map(|p| unsafe { Arc::from_raw(p.as_ptr().cast_const().cast::<T>()) })
    }

    /// Takes one queued datagram into `buf` (IP header first), without
    /// waiting; `None` when none is queued.
    pub(crate) fn recv(&self, buf: &mut [u8]) -> Result<Option<Datagram>> {
        let mut src = [0u8; 4];
        // SAFETY: `raw` is live; `buf` and `src` are writable for their lengths.
        let n = unsafe { srnic_rawip_recv(self.raw.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), src.as_mut_ptr()) };
        match n {
            n if n >= 0 => Ok(Some(Datagram { src, len: usize::try_from(n).map_err(|_| EIO)? })),
            n if n == -(bindings::EAGAIN as c_int) => Ok(None),
            n => Err(Error::from_errno(n)),
        }
    }

    /// Sends `data` as one datagram (the kernel adds the IP header) to `dst`,
    /// without waiting: `EAGAIN` when the send buffer is full.
    pub(crate) fn send(&self, dst: [u8; 4], data: &[u8]) -> Result {
        // SAFETY: `raw` is live; `data` is readable for its length.
        let r = unsafe { srnic_rawip_send(self.raw.as_ptr(), dst.as_ptr(), data.as_ptr().cast(), data.len()) };
        if r < 0 {
            return Err(Error::from_errno(r));
        }
        Ok(())
    }

    /// Whether the socket belongs to the caller's network namespace.
    pub(crate) fn in_current_net(&self) -> bool {
        // SAFETY: `raw` is live.
        unsafe { srnic_rawip_in_current_net(self.raw.as_ptr()) }
    }
}

impl<T: RawIpEvents> Drop for RawIp<T> {
    fn drop(&mut self) {
        drop(self.detach());
        // SAFETY: released once (type invariant); the callback is gone.
        unsafe { srnic_rawip_release(self.raw.as_ptr()) };
    }
}

/// The MTU of the local interface that has the IPv4 address `addr` in the
/// caller's network namespace: `EADDRNOTAVAIL` when none has it.
pub(crate) fn local_mtu(addr: [u8; 4]) -> Result<u32> {
    // SAFETY: `addr` is readable for 4 bytes.
    let r = unsafe { srnic_ipv4_local_mtu(addr.as_ptr()) };
    if r < 0 {
        return Err(Error::from_errno(r));
    }
    u32::try_from(r).map_err(|_| EINVAL)
}
