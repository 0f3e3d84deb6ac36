// SPDX-License-Identifier: GPL-2.0
//! Raw Ethernet ports: frames of one EtherType on one netdev (of the network
//! namespace of the process that creates the endpoint), for Sandia RMPP.
//!
//! A [`Port`] registers a `packet_type` handler on the netdev and owns a timer.
//! Both run in softirq context and do only two things: the handler filters
//! frames (too short for an RMPP header, wrong version or type, another NID:
//! dropped and counted), queues the rest on a bounded queue (full: dropped and
//! counted), and both call [`PortOwner::notify`], which must only queue work.
//! The owner takes frames off the queue with [`Port::dequeue`] in process
//! context. The port holds one reference on its owner until it is dropped;
//! dropping it waits for running handlers and timers, so the owner is never
//! used after that.
//!
//! [`RxSkb`] is a received frame (its data starts at the RMPP header); bytes
//! are read in place, piece by piece ([`RxSkb::read_with`]), so payload is
//! copied once, to its destination. [`TxSkb`] is a frame being built: the caller
//! writes header and payload straight into the skb and sends it.

use core::ffi::{c_int, c_long, c_uint, c_void};
use kernel::ffi::c_char;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::{
    error::to_result,
    prelude::*,
    str::CStr,
    sync::{Arc, ArcBorrow},
};

#[repr(C)]
struct RawPort {
    _opaque: [u8; 0],
}

/// `struct sk_buff`, opaque here.
#[repr(C)]
struct RawSkb {
    _opaque: [u8; 0],
}

type NotifyFn = unsafe extern "C" fn(owner: *mut c_void);
type RxFn = unsafe extern "C" fn(arg: *mut c_void, data: *const u8, len: usize) -> c_long;

/// `struct srnic_port_filter` (`glue.h`): the frames a port's softirq handler
/// lets through. Its user fills it from its protocol's header definition.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortFilter {
    /// Shortest frame (the header).
    pub(crate) hdr_len: u32,
    /// Byte 0 of every frame.
    pub(crate) version: u32,
    /// Bit `t`: type code `t` (byte 1) is known.
    pub(crate) types: u32,
    /// Bit `t`: type `t` names the port's NID at offset 4, not 8.
    pub(crate) replies: u32,
}

// The C side asserts the same size.
const _: () = assert!(core::mem::size_of::<PortFilter>() == 16);

/// Counters the softirq filter keeps, in the order of `enum srnic_port_counter`.
pub(crate) const PORT_COUNTERS: usize = 5;

extern "C" {
    fn srnic_port_open(
        ifname: *const c_char,
        ethertype: u16,
        nid: u32,
        qmax: u32,
        filter: *const PortFilter,
        notify: NotifyFn,
        owner: *mut c_void,
        err: *mut c_int,
    ) -> *mut RawPort;
    fn srnic_port_close(p: *mut RawPort) -> *mut c_void;
    fn srnic_port_ifindex(p: *mut RawPort) -> c_int;
    fn srnic_port_down(p: *mut RawPort) -> bool;
    fn srnic_netdev_watch() -> c_int;
    fn srnic_netdev_unwatch();
    fn srnic_port_footprint(mtu: c_uint, qmax: u32) -> usize;
    fn srnic_port_counters(p: *mut RawPort, out: *mut u64);
    fn srnic_port_dequeue(p: *mut RawPort) -> *mut RawSkb;
    fn srnic_port_arm(p: *mut RawPort, delay_ns: u64);
    fn srnic_port_tx_alloc(p: *mut RawPort, dst: *const u8, len: c_uint, data: *mut *mut u8)
        -> *mut RawSkb;
    fn srnic_port_tx_send(skb: *mut RawSkb) -> c_int;
    fn srnic_skb_free(skb: *mut RawSkb);
    fn srnic_skb_len(skb: *mut RawSkb) -> c_uint;
    fn srnic_skb_copy(skb: *mut RawSkb, off: c_uint, to: *mut c_void, len: c_uint) -> c_int;
    fn srnic_skb_read(skb: *mut RawSkb, off: c_uint, len: usize, f: RxFn, arg: *mut c_void)
        -> c_long;
    fn srnic_now_ns() -> u64;
    fn srnic_skb_src_mac(skb: *mut RawSkb, mac: *mut u8);
    fn srnic_net_admin() -> bool;
    fn srnic_netdev_net_raw(ifname: *const c_char) -> c_int;
    fn srnic_netdev_info(ifname: *const c_char, mtu: *mut c_uint) -> c_int;
}

/// Monotonic time in nanoseconds (`ktime_get_ns`).
pub(crate) fn now_ns() -> u64 {
    // SAFETY: no preconditions.
    unsafe { srnic_now_ns() }
}

/// Whether the calling task has `CAP_NET_ADMIN`.
pub(crate) fn net_admin() -> bool {
    // SAFETY: called from a syscall, in the caller's task.
    unsafe { srnic_net_admin() }
}

/// Whether the calling task may use raw frames on the netdev `ifname`:
/// `CAP_NET_RAW` in the user namespace owning the netdev's network namespace.
/// `EPERM` if not, `ENODEV` if there is no such netdev.
pub(crate) fn net_raw(ifname: &CStr) -> Result {
    // SAFETY: `ifname` is NUL-terminated; called from a syscall, in the caller's task.
    let r = unsafe { srnic_netdev_net_raw(ifname.as_char_ptr()) };
    if r < 0 {
        return Err(Error::from_errno(r));
    }
    Ok(())
}

/// The interface index and MTU of the netdev `ifname` in the caller's network
/// namespace.
pub(crate) fn netdev_info(ifname: &CStr) -> Result<(i32, u32)> {
    let mut mtu: c_uint = 0;
    // SAFETY: `ifname` is NUL-terminated; `mtu` is a valid place for the result.
    let r = unsafe { srnic_netdev_info(ifname.as_char_ptr(), &mut mtu) };
    if r < 0 {
        return Err(Error::from_errno(r));
    }
    Ok((r, mtu))
}

/// At most the memory a port holds when it queues `qmax` frames from a netdev
/// with MTU `mtu`: the port and full-sized received frames (an estimate of
/// their skbs' size; a driver may use larger buffers).
pub(crate) fn port_footprint(mtu: u32, qmax: u32) -> usize {
    // SAFETY: arithmetic on sizes; no preconditions.
    unsafe { srnic_port_footprint(mtu, qmax) }
}

/// The module's netdevice notifier, registered from module init to exit.
///
/// When a netdev goes down (or is unregistered), every TCP connection of
/// srnic through it is aborted with `ENETDOWN` (its owner sees the socket
/// fail) and every [`Port`] on it is marked down and its owner notified, so
/// `ip link set down` and `ip link del` complete at once.
pub(crate) struct NetdevWatch(());

impl NetdevWatch {
    /// Registers the notifier.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: no preconditions; unregistered exactly once, in `drop`.
        to_result(unsafe { srnic_netdev_watch() })?;
        Ok(Self(()))
    }
}

impl Drop for NetdevWatch {
    fn drop(&mut self) {
        // SAFETY: registered in `register`.
        unsafe { srnic_netdev_unwatch() };
    }
}

/// The owner of a [`Port`]: told from softirq context that work is waiting.
pub(crate) trait PortOwner: Send + Sync + 'static {
    /// A frame was queued or the timer fired. Runs in softirq context: it must
    /// not sleep or take a mutex (queue work instead).
    fn notify(this: ArcBorrow<'_, Self>);
}

/// An attachment to a netdev for frames of one EtherType addressed to one NID.
///
/// # Invariants
///
/// `raw` is an open port whose `owner` is a reference leaked from an `Arc<T>`,
/// closed (and the reference reclaimed) exactly once, in `drop`.
pub(crate) struct Port<T: PortOwner> {
    raw: NonNull<RawPort>,
    _owner: PhantomData<Arc<T>>,
}

// SAFETY: the port's C functions are safe to call from any thread (the queue and
// the timer carry their own locking).
unsafe impl<T: PortOwner> Send for Port<T> {}
// SAFETY: as above; `&Port` only reads, dequeues and arms the timer.
unsafe impl<T: PortOwner> Sync for Port<T> {}

impl<T: PortOwner> Port<T> {
    /// Attaches to the netdev `ifname` for frames of `ethertype` addressed to
    /// `nid` that pass `filter`, queueing at most `qmax` frames. The port keeps
    /// `owner` alive.
    pub(crate) fn open(
        ifname: &CStr,
        ethertype: u16,
        nid: u32,
        qmax: u32,
        filter: &PortFilter,
        owner: Arc<T>,
    ) -> Result<Self> {
        unsafe extern "C" fn notify<T: PortOwner>(owner: *mut c_void) {
            // SAFETY: `owner` is the reference leaked in `open`; it is reclaimed
            // only after `srnic_port_close`, which waits for every caller of this.
            let this = unsafe { ArcBorrow::from_raw(owner.cast_const().cast::<T>()) };
            T::notify(this);
        }
        let user = Arc::into_raw(owner).cast_mut().cast::<c_void>();
        let mut err: c_int = 0;
        // SAFETY: `ifname` is NUL-terminated; `filter` is read (copied) during
        // the call only; `notify::<T>` expects exactly `user`.
        let raw = unsafe {
            srnic_port_open(
                ifname.as_char_ptr(),
                ethertype,
                nid,
                qmax,
                filter,
                notify::<T>,
                user,
                &mut err,
            )
        };
        match NonNull::new(raw) {
            // INVARIANT: the port is open and owns the leaked reference.
            Some(raw) => Ok(Self {
                raw,
                _owner: PhantomData,
            }),
            None => {
                // SAFETY: the glue did not keep `user`: take the reference back.
                drop(unsafe { Arc::from_raw(user.cast_const().cast::<T>()) });
                Err(Error::from_errno(if err < 0 { err } else { -(ENODEV.to_errno().abs()) }))
            }
        }
    }

    /// The netdev's interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        // SAFETY: the port is open.
        unsafe { srnic_port_ifindex(self.raw.as_ptr()) }
    }

    /// Whether the netdev went down or away: the owner was notified and must
    /// close the port (drop it), which releases the netdev.
    pub(crate) fn is_down(&self) -> bool {
        // SAFETY: the port is open.
        unsafe { srnic_port_down(self.raw.as_ptr()) }
    }

    /// The softirq filter's counters (short, bad version, bad type, other NID,
    /// queue full).
    pub(crate) fn counters(&self) -> [u64; PORT_COUNTERS] {
        let mut out = [0u64; PORT_COUNTERS];
        // SAFETY: the port is open; `out` has room for every counter.
        unsafe { srnic_port_counters(self.raw.as_ptr(), out.as_mut_ptr()) };
        out
    }

    /// The oldest queued frame, if any.
    pub(crate) fn dequeue(&self) -> Option<RxSkb> {
        // SAFETY: the port is open.
        let skb = unsafe { srnic_port_dequeue(self.raw.as_ptr()) };
        // INVARIANT: a dequeued skb is ours to free.
        NonNull::new(skb).map(|skb| RxSkb { skb })
    }

    /// Calls the owner's `notify` in about `delay_ns` (0 cancels the timer).
    pub(crate) fn arm(&self, delay_ns: u64) {
        // SAFETY: the port is open.
        unsafe { srnic_port_arm(self.raw.as_ptr(), delay_ns) }
    }

    /// A frame of `len` bytes (after the Ethernet header) to `dst`.
    pub(crate) fn tx_alloc(&self, dst: &[u8; 6], len: usize) -> Result<TxSkb> {
        let l = c_uint::try_from(len).map_err(|_| super::errno::emsgsize())?;
        let mut data: *mut u8 = core::ptr::null_mut();
        // SAFETY: the port is open; `dst` is 6 readable bytes; `data` is a valid
        // place for the result.
        let skb = unsafe { srnic_port_tx_alloc(self.raw.as_ptr(), dst.as_ptr(), l, &mut data) };
        let skb = NonNull::new(skb).ok_or(ENOMEM)?;
        if data.is_null() {
            // SAFETY: `skb` is ours and unsent.
            unsafe { srnic_skb_free(skb.as_ptr()) };
            return Err(ENOMEM);
        }
        // INVARIANT: the skb is ours, with `len` writable bytes at `data`.
        Ok(TxSkb { skb, data, len })
    }
}

impl<T: PortOwner> Drop for Port<T> {
    fn drop(&mut self) {
        // SAFETY: by the type invariant this is the one close of an open port.
        let owner = unsafe { srnic_port_close(self.raw.as_ptr()) };
        if !owner.is_null() {
            // SAFETY: `owner` is the reference leaked in `open`; no handler or
            // timer can use it any more.
            drop(unsafe { Arc::from_raw(owner.cast_const().cast::<T>()) });
        }
    }
}

/// A received frame; its data starts at the RMPP header.
///
/// # Invariants
///
/// `skb` is an skb this value owns and frees exactly once.
pub(crate) struct RxSkb {
    skb: NonNull<RawSkb>,
}

impl RxSkb {
    /// Bytes in the frame (trailing Ethernet padding included).
    pub(crate) fn len(&self) -> usize {
        // SAFETY: the skb is ours.
        unsafe { srnic_skb_len(self.skb.as_ptr()) as usize }
    }

    /// The frame's source MAC address (zero if it has no Ethernet header).
    pub(crate) fn src_mac(&self) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: the skb is ours; `mac` is writable for 6 bytes.
        unsafe { srnic_skb_src_mac(self.skb.as_ptr(), mac.as_mut_ptr()) };
        mac
    }

    /// Copies `out.len()` bytes from offset 0 (for headers).
    pub(crate) fn copy_head(&self, out: &mut [u8]) -> Result {
        let n = c_uint::try_from(out.len()).map_err(|_| EINVAL)?;
        // SAFETY: the skb is ours; `out` is writable for `n` bytes.
        let r = unsafe { srnic_skb_copy(self.skb.as_ptr(), 0, out.as_mut_ptr().cast(), n) };
        if r < 0 {
            return Err(EINVAL);
        }
        Ok(())
    }

    /// Hands `[off, off + len)` to `f` in contiguous pieces, in order.
    pub(crate) fn read_with<F: FnMut(&[u8]) -> Result>(&self, off: usize, len: usize, f: &mut F) -> Result {
        struct State<'a, F> {
            f: &'a mut F,
            err: Option<Error>,
        }
        unsafe extern "C" fn rx<F: FnMut(&[u8]) -> Result>(arg: *mut c_void, data: *const u8, len: usize) -> c_long {
            // SAFETY: `arg` is the `State` below, alive for the whole walk; `data`
            // is readable for `len` bytes during this call.
            let (st, piece) = unsafe { (&mut *arg.cast::<State<'_, F>>(), core::slice::from_raw_parts(data, len)) };
            match (st.f)(piece) {
                Ok(()) => c_long::try_from(len).unwrap_or(0),
                Err(e) => {
                    st.err = Some(e);
                    -1
                }
            }
        }
        let off = c_uint::try_from(off).map_err(|_| EFAULT)?;
        let mut st = State { f, err: None };
        // SAFETY: the skb is ours; `rx::<F>` matches `st`'s type.
        let r = unsafe { srnic_skb_read(self.skb.as_ptr(), off, len, rx::<F>, (&mut st as *mut State<'_, F>).cast()) };
        if let Some(e) = st.err {
            return Err(e);
        }
        if r < 0 || usize::try_from(r).ok() != Some(len) {
            return Err(EFAULT);
        }
        Ok(())
    }
}

impl Drop for RxSkb {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the skb is ours, freed once here.
        unsafe { srnic_skb_free(self.skb.as_ptr()) }
    }
}

/// A frame being built: `len` bytes after its Ethernet header.
///
/// # Invariants
///
/// `skb` is an unsent skb this value owns; `data` points at `len` writable bytes
/// inside it.
pub(crate) struct TxSkb {
    skb: NonNull<RawSkb>,
    data: *mut u8,
    len: usize,
}

impl TxSkb {
    /// Copies `bytes` to offset `off` of the frame (after the Ethernet header).
    /// The caller writes every byte of the frame before sending it.
    pub(crate) fn write_at(&mut self, off: usize, bytes: &[u8]) -> Result {
        let end = off.checked_add(bytes.len()).ok_or(EINVAL)?;
        if end > self.len {
            return Err(EINVAL);
        }
        // SAFETY: by the type invariant `data` is `len` writable bytes owned by
        // the skb; `[off, end)` is inside them and does not overlap `bytes`.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), self.data.add(off), bytes.len()) };
        Ok(())
    }

    /// Sends the frame (`dev_queue_xmit`).
    pub(crate) fn send(self) -> Result {
        let skb = self.skb.as_ptr();
        core::mem::forget(self);
        // SAFETY: the skb is ours and complete; the call consumes it.
        let r = unsafe { srnic_port_tx_send(skb) };
        if r < 0 {
            return Err(Error::from_errno(r));
        }
        Ok(())
    }
}

impl Drop for TxSkb {
    fn drop(&mut self) {
        // SAFETY: an unsent skb we own.
        unsafe { srnic_skb_free(self.skb.as_ptr()) }
    }
}
