// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! The C ABI of the srnic verbs library: `include/srnic_verbs.h`.
//!
//! A separate crate rather than a feature of `srnic`: the Rust library stays
//! free of `extern "C"` and raw-pointer code, the `staticlib`/`cdylib` crate
//! types are built only here, and `cargo test --workspace` tests this layer
//! without any feature flags.
//!
//! Every function catches panics (a panic becomes `-EIO`), checks pointers for
//! NULL and alignment, and returns a negative errno on failure. Handles are
//! boxed library objects; the library's reference counting keeps parents alive,
//! and destroy functions answer `-EBUSY` while children exist, like ibverbs.
#![allow(non_camel_case_types)]
// Every exported function documents its contract in srnic_verbs.h; the pointer
// checks here make NULL and misaligned pointers errors instead of UB.
#![allow(clippy::missing_safety_doc)]

use libc::{c_char, c_int, c_uint, c_void, sockaddr, sockaddr_storage};
use srnic::uapi as abi;
use srnic::{
    AccessFlags, CompletionQueue, ConnInfo, ConnParams, ConnectRequest, Context, Listener,
    MemoryRegion, ProtectionDomain, QpCap, QpInitAttr, QueuePair, RawWr, Sge, VmtpEntity,
    VmtpEntityAttr, VmtpEntityId, VmtpRole, WorkCompletion,
};
use std::ffi::CStr;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// `struct srnic_context`.
pub struct srnic_context(Context);
/// `struct srnic_pd`.
pub struct srnic_pd(ProtectionDomain);
/// `struct srnic_mr`.
pub struct srnic_mr(MemoryRegion<'static>);
/// `struct srnic_cq`.
pub struct srnic_cq(CompletionQueue);
/// `struct srnic_qp`.
pub struct srnic_qp(QueuePair);
/// `struct srnic_listener`.
pub struct srnic_listener(Listener);
/// `struct srnic_conn_request`.
pub struct srnic_conn_request(ConnectRequest);
/// `struct srnic_vmtp`.
pub struct srnic_vmtp(VmtpEntity);

/// `struct srnic_qp_init_attr`.
#[repr(C)]
pub struct srnic_qp_init_attr {
    pub send_cq: *mut srnic_cq,
    pub recv_cq: *mut srnic_cq,
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    pub max_inline_data: u32,
    pub sq_sig_all: c_int,
}

/// `struct srnic_conn_param`.
#[repr(C)]
pub struct srnic_conn_param {
    pub private_data: *const c_void,
    pub private_data_len: u32,
    pub ird: u32,
    pub ord: u32,
    pub mpa_flags: u32,
}

/// `struct srnic_send_wr`.
#[repr(C)]
pub struct srnic_send_wr {
    pub wr_id: u64,
    pub opcode: u32,
    pub send_flags: u32,
    pub sg_list: *const abi::SrnicSge,
    pub num_sge: u32,
    pub invalidate_rkey: u32,
    pub remote_addr: u64,
    pub rkey: u32,
    pub reserved: u32,
}

/// `struct srnic_recv_wr`.
#[repr(C)]
pub struct srnic_recv_wr {
    pub wr_id: u64,
    pub sg_list: *const abi::SrnicSge,
    pub num_sge: u32,
    pub reserved: u32,
}

/// `struct srnic_conn_info`.
#[repr(C)]
pub struct srnic_conn_info {
    pub local: sockaddr_storage,
    pub remote: sockaddr_storage,
    pub ird: u32,
    pub ord: u32,
    pub mpa_flags: u32,
    pub private_data_len: u32,
    pub private_data: [u8; 256],
}

/// A positive errno on the error path.
struct Errno(c_int);

impl From<srnic::Error> for Errno {
    fn from(e: srnic::Error) -> Self {
        Errno(e.errno())
    }
}

type R = Result<c_int, Errno>;

/// Runs `f`, turning an error into `-errno` and a panic into `-EIO`.
fn guard(f: impl FnOnce() -> R) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(Errno(e))) => -e.abs().max(1),
        Err(_) => -libc::EIO,
    }
}

fn einval() -> Errno {
    Errno(libc::EINVAL)
}

/// A shared reference from a C pointer: NULL and misaligned pointers are EINVAL.
///
/// # Safety
///
/// A non-NULL, aligned `p` must point at a live `T` for `'a`.
unsafe fn obj<'a, T>(p: *const T) -> Result<&'a T, Errno> {
    if p.is_null() || !p.is_aligned() {
        return Err(einval());
    }
    // SAFETY: checked above; the caller guarantees liveness.
    Ok(unsafe { &*p })
}

/// A writable reference from a C pointer.
///
/// # Safety
///
/// As [`obj`], and nothing else accesses `*p` meanwhile.
unsafe fn out<'a, T>(p: *mut T) -> Result<&'a mut T, Errno> {
    if p.is_null() || !p.is_aligned() {
        return Err(einval());
    }
    // SAFETY: checked above; the caller guarantees liveness and exclusivity.
    Ok(unsafe { &mut *p })
}

/// A slice from a C array; NULL is fine for an empty one.
///
/// # Safety
///
/// A non-NULL `p` must point at `n` live `T`s.
unsafe fn slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T], Errno> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() || !p.is_aligned() {
        return Err(einval());
    }
    // SAFETY: checked above; the caller guarantees the array.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Frees a boxed handle.
///
/// # Safety
///
/// `p` came from `Box::into_raw` of this library and is not used again.
unsafe fn free<T>(p: *mut T) {
    // SAFETY: forwarded to the caller.
    drop(unsafe { Box::from_raw(p) });
}

fn store<T>(dst: *mut *mut T, v: T) -> R {
    // SAFETY: dst is checked for NULL/alignment by out(); the caller provides
    // a writable pointer slot.
    let d = unsafe { out(dst) }?;
    *d = Box::into_raw(Box::new(v));
    Ok(0)
}

fn timeout(ms: c_int) -> Option<Duration> {
    u64::try_from(ms).ok().map(Duration::from_millis)
}

/// Reads a `struct sockaddr_in` or `sockaddr_in6`.
///
/// # Safety
///
/// `p` must point at a whole structure of the family it names.
unsafe fn read_sockaddr(p: *const sockaddr) -> Result<SocketAddr, Errno> {
    if p.is_null() {
        return Err(einval());
    }
    // SAFETY: every sockaddr starts with sa_family; read unaligned to be lenient.
    let family = unsafe { std::ptr::read_unaligned(std::ptr::addr_of!((*p).sa_family)) };
    match c_int::from(family) {
        libc::AF_INET => {
            // SAFETY: the caller guarantees a whole sockaddr_in.
            let a = unsafe { std::ptr::read_unaligned(p as *const libc::sockaddr_in) };
            Ok(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the caller guarantees a whole sockaddr_in6.
            let a = unsafe { std::ptr::read_unaligned(p as *const libc::sockaddr_in6) };
            Ok(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                u32::from_be(a.sin6_flowinfo),
                a.sin6_scope_id,
            )))
        }
        _ => Err(Errno(libc::EAFNOSUPPORT)),
    }
}

fn write_sockaddr(dst: &mut sockaddr_storage, a: Option<SocketAddr>) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    *dst = unsafe { std::mem::zeroed() };
    match a {
        None => {}
        Some(SocketAddr::V4(a)) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            let s = unsafe { &mut *(dst as *mut sockaddr_storage as *mut libc::sockaddr_in) };
            s.sin_family = libc::AF_INET as libc::sa_family_t;
            s.sin_port = a.port().to_be();
            s.sin_addr.s_addr = u32::from(*a.ip()).to_be();
        }
        Some(SocketAddr::V6(a)) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in6.
            let s = unsafe { &mut *(dst as *mut sockaddr_storage as *mut libc::sockaddr_in6) };
            s.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            s.sin6_port = a.port().to_be();
            s.sin6_addr.s6_addr = a.ip().octets();
            s.sin6_scope_id = a.scope_id();
        }
    }
}

fn fill_info(
    dst: &mut srnic_conn_info,
    local: Option<SocketAddr>,
    remote: Option<SocketAddr>,
    ird: u32,
    ord: u32,
    mpa: u32,
    pd: &[u8],
) {
    write_sockaddr(&mut dst.local, local);
    write_sockaddr(&mut dst.remote, remote);
    dst.ird = ird;
    dst.ord = ord;
    dst.mpa_flags = mpa;
    let n = pd.len().min(dst.private_data.len());
    dst.private_data = [0; 256];
    dst.private_data[..n].copy_from_slice(&pd[..n]);
    dst.private_data_len = n as u32;
}

fn fill_conn_info(info: *mut srnic_conn_info, c: &ConnInfo) -> Result<(), Errno> {
    if info.is_null() {
        return Ok(());
    }
    // SAFETY: non-NULL; the caller provides a writable structure.
    let i = unsafe { out(info) }?;
    fill_info(
        i,
        c.local,
        c.remote,
        c.ird,
        c.ord,
        c.mpa_flags.0,
        &c.private_data,
    );
    Ok(())
}

/// # Safety
///
/// `param` is NULL or a valid `srnic_conn_param` whose private data pointer
/// covers its length.
unsafe fn conn_params(param: *const srnic_conn_param) -> Result<ConnParams, Errno> {
    if param.is_null() {
        return Ok(ConnParams::default());
    }
    // SAFETY: forwarded.
    let p = unsafe { obj(param) }?;
    // SAFETY: the caller guarantees private_data covers private_data_len bytes.
    let pd = unsafe { slice(p.private_data as *const u8, p.private_data_len as usize) }?;
    Ok(ConnParams {
        private_data: pd.to_vec(),
        ird: p.ird,
        ord: p.ord,
        ..mpa_params(p.mpa_flags)
    })
}

fn mpa_params(f: u32) -> ConnParams {
    ConnParams {
        crc: f & abi::SRNIC_MPA_CRC != 0,
        markers: f & abi::SRNIC_MPA_MARKERS != 0,
        rev1: f & abi::SRNIC_MPA_REV1 != 0,
        p2p: f & abi::SRNIC_MPA_P2P != 0,
        rtr_read: f & abi::SRNIC_MPA_RTR_READ != 0,
        ..Default::default()
    }
}

// ---- context ---------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn srnic_open(path: *const c_char, ctx: *mut *mut srnic_context) -> c_int {
    guard(|| {
        let context = if path.is_null() {
            Context::open()?
        } else {
            // SAFETY: the caller passes a NUL-terminated string.
            let p = unsafe { CStr::from_ptr(path) };
            let p = p.to_str().map_err(|_| einval())?;
            Context::open_path(p)?
        };
        store(ctx, srnic_context(context))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_close(ctx: *mut srnic_context) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_open.
        let c = unsafe { obj(ctx) }?;
        if c.0.in_use() {
            return Err(Errno(libc::EBUSY));
        }
        // SAFETY: not used again after a successful close.
        unsafe { free(ctx) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_get_fd(ctx: *mut srnic_context) -> c_int {
    guard(|| {
        use std::os::fd::{AsFd, AsRawFd};
        // SAFETY: a handle from srnic_open.
        Ok(unsafe { obj(ctx) }?.0.as_fd().as_raw_fd())
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_process_events(ctx: *mut srnic_context) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_open.
        let n = unsafe { obj(ctx) }?.0.process_events()?;
        Ok(c_int::try_from(n).unwrap_or(c_int::MAX))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_events_read(ctx: *mut srnic_context) -> u64 {
    // SAFETY: a handle from srnic_open (0 for a bad one).
    unsafe { obj(ctx) }.map_or(0, |c| c.0.events_read())
}

#[no_mangle]
pub unsafe extern "C" fn srnic_query_device(
    ctx: *mut srnic_context,
    attr: *mut abi::SrnicQueryDevice,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and a writable structure from the caller.
        let (c, a) = unsafe { (obj(ctx)?, out(attr)?) };
        *a = c.0.query_device()?.raw;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_query_stats(
    ctx: *mut srnic_context,
    stats: *mut abi::SrnicStats,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and a writable structure from the caller.
        let (c, s) = unsafe { (obj(ctx)?, out(stats)?) };
        *s = c.0.stats()?.raw;
        Ok(0)
    })
}

// ---- PD, MR ----------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn srnic_alloc_pd(ctx: *mut srnic_context, pd: *mut *mut srnic_pd) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_open.
        let c = unsafe { obj(ctx) }?;
        store(pd, srnic_pd(c.0.alloc_pd()?))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_dealloc_pd(pd: *mut srnic_pd) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_alloc_pd.
        if unsafe { obj(pd) }?.0.in_use() {
            return Err(Errno(libc::EBUSY));
        }
        // SAFETY: not used again.
        unsafe { free(pd) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_reg_mr(
    pd: *mut srnic_pd,
    addr: *mut c_void,
    length: usize,
    access: u32,
    mr: *mut *mut srnic_mr,
) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_alloc_pd.
        let p = unsafe { obj(pd) }?;
        if addr.is_null() {
            return Err(einval());
        }
        // SAFETY: the header's contract: the memory stays mapped until
        // srnic_dereg_mr and the caller keeps off bytes the device may write.
        let m = unsafe { p.0.reg_mr_raw(addr as *mut u8, length, AccessFlags(access)) }?;
        store(mr, srnic_mr(m))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_dereg_mr(mr: *mut srnic_mr) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_reg_mr, not used again.
        unsafe { obj(mr) }?;
        unsafe { free(mr) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_mr_lkey(mr: *const srnic_mr) -> u32 {
    // SAFETY: a handle from srnic_reg_mr or NULL.
    catch_unwind(AssertUnwindSafe(|| {
        unsafe { obj(mr) }.map(|m| m.0.lkey()).unwrap_or(0)
    }))
    .unwrap_or(0)
}

#[no_mangle]
pub unsafe extern "C" fn srnic_mr_rkey(mr: *const srnic_mr) -> u32 {
    // SAFETY: a handle from srnic_reg_mr or NULL.
    catch_unwind(AssertUnwindSafe(|| {
        unsafe { obj(mr) }.map(|m| m.0.rkey()).unwrap_or(0)
    }))
    .unwrap_or(0)
}

// ---- CQ --------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn srnic_create_cq(
    ctx: *mut srnic_context,
    cqe: u32,
    cq: *mut *mut srnic_cq,
) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_open.
        let c = unsafe { obj(ctx) }?;
        store(cq, srnic_cq(c.0.create_cq(cqe)?))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_destroy_cq(cq: *mut srnic_cq) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_create_cq.
        if unsafe { obj(cq) }?.0.in_use() {
            return Err(Errno(libc::EBUSY));
        }
        // SAFETY: not used again.
        unsafe { free(cq) };
        Ok(0)
    })
}

/// # Safety
///
/// `wc` points at `n` writable `srnic_wc` (or n is 0).
unsafe fn wc_slice<'a>(wc: *mut abi::SrnicWc, n: c_int) -> Result<&'a mut [WorkCompletion], Errno> {
    let n = usize::try_from(n).map_err(|_| einval())?;
    if n == 0 {
        return Ok(&mut []);
    }
    if wc.is_null() || !wc.is_aligned() {
        return Err(einval());
    }
    // SAFETY: WorkCompletion is repr(transparent) over SrnicWc; the caller
    // provides n writable entries.
    Ok(unsafe { std::slice::from_raw_parts_mut(wc as *mut WorkCompletion, n) })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_poll_cq(
    cq: *mut srnic_cq,
    num_entries: c_int,
    wc: *mut abi::SrnicWc,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and an array from the caller.
        let (c, w) = unsafe { (obj(cq)?, wc_slice(wc, num_entries)?) };
        Ok(c.0.poll(w)? as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_req_notify_cq(cq: *mut srnic_cq, solicited_only: c_int) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_create_cq.
        let c = unsafe { obj(cq) }?;
        Ok(c_int::from(c.0.req_notify(solicited_only != 0)?))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_wait_cq(cq: *mut srnic_cq, timeout_ms: c_int) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_create_cq.
        let c = unsafe { obj(cq) }?;
        if c.0.wait_event(timeout(timeout_ms))? {
            Ok(0)
        } else {
            Err(Errno(libc::ETIMEDOUT))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_poll_cq_wait(
    cq: *mut srnic_cq,
    num_entries: c_int,
    wc: *mut abi::SrnicWc,
    timeout_ms: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and an array from the caller.
        let (c, w) = unsafe { (obj(cq)?, wc_slice(wc, num_entries)?) };
        Ok(c.0.wait(w, timeout(timeout_ms))? as c_int)
    })
}

// ---- QP --------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn srnic_create_qp(
    pd: *mut srnic_pd,
    attr: *mut srnic_qp_init_attr,
    qp: *mut *mut srnic_qp,
) -> c_int {
    guard(|| {
        // SAFETY: handles and a structure from the caller.
        let (p, a) = unsafe { (obj(pd)?, out(attr)?) };
        // SAFETY: CQ handles from srnic_create_cq.
        let (scq, rcq) = unsafe { (obj(a.send_cq)?, obj(a.recv_cq)?) };
        let mut init = QpInitAttr::new(&scq.0, &rcq.0);
        init.cap = QpCap {
            max_send_wr: a.max_send_wr,
            max_recv_wr: a.max_recv_wr,
            max_send_sge: a.max_send_sge,
            max_recv_sge: a.max_recv_sge,
            max_inline_data: a.max_inline_data,
        };
        init.sq_sig_all = a.sq_sig_all != 0;
        let q = p.0.create_qp(&init)?;
        let cap = q.cap();
        a.max_send_wr = cap.max_send_wr;
        a.max_recv_wr = cap.max_recv_wr;
        a.max_send_sge = cap.max_send_sge;
        a.max_recv_sge = cap.max_recv_sge;
        a.max_inline_data = cap.max_inline_data;
        store(qp, srnic_qp(q))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_destroy_qp(qp: *mut srnic_qp) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_create_qp, not used again.
        unsafe { obj(qp) }?;
        unsafe { free(qp) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_qp_handle(qp: *const srnic_qp) -> u32 {
    // SAFETY: a handle from srnic_create_qp or NULL.
    catch_unwind(AssertUnwindSafe(|| {
        unsafe { obj(qp) }.map(|q| q.0.handle()).unwrap_or(0)
    }))
    .unwrap_or(0)
}

#[no_mangle]
pub unsafe extern "C" fn srnic_query_qp(qp: *mut srnic_qp, attr: *mut abi::SrnicQueryQp) -> c_int {
    guard(|| {
        // SAFETY: a handle and a writable structure from the caller.
        let (q, a) = unsafe { (obj(qp)?, out(attr)?) };
        let r = q.0.query()?;
        *a = abi::SrnicQueryQp {
            size: std::mem::size_of::<abi::SrnicQueryQp>() as u32,
            qp_handle: q.0.handle(),
            state: r.state.into(),
            mpa_flags: r.mpa_flags.0,
            ird: r.ird,
            ord: r.ord,
            term: r.term,
            local: r
                .local
                .map(|a| srnic::sockaddr_to_abi(&a))
                .unwrap_or_default(),
            remote: r
                .remote
                .map(|a| srnic::sockaddr_to_abi(&a))
                .unwrap_or_default(),
            tx_bytes: r.tx_bytes,
            rx_bytes: r.rx_bytes,
            ..Default::default()
        };
        Ok(0)
    })
}

/// A C send work request as the module reads it; EINVAL for an opcode that
/// is none of the send queue's. The fields its operation does not use are
/// left zero, whatever the caller left in them.
///
/// # Safety
///
/// `w.sg_list` points at `w.num_sge` valid `srnic_sge` (or `num_sge` is 0).
unsafe fn raw_send<'a>(w: &srnic_send_wr) -> Result<RawWr<'a>, Errno> {
    let mut h = abi::SrnicPostWr {
        wr_id: w.wr_id,
        flags: w.send_flags,
        ..Default::default()
    };
    match w.opcode {
        abi::SRNIC_WR_SEND | abi::SRNIC_WR_SEND_WITH_SE => {}
        abi::SRNIC_WR_SEND_WITH_INV | abi::SRNIC_WR_SEND_WITH_SE_INV => {
            h.invalidate_rkey = w.invalidate_rkey;
        }
        abi::SRNIC_WR_RDMA_WRITE | abi::SRNIC_WR_RDMA_READ => {
            h.remote_addr = w.remote_addr;
            h.rkey = w.rkey;
        }
        _ => return Err(einval()),
    }
    // The match admits only the six send opcodes, all below 6.
    h.opcode = w.opcode as u16;
    Ok(RawWr {
        header: h,
        // SAFETY: forwarded.
        sges: unsafe { slice(w.sg_list, w.num_sge as usize) }?,
    })
}

/// A C receive work request as the module reads it.
///
/// # Safety
///
/// As [`raw_send`].
unsafe fn raw_recv<'a>(w: &srnic_recv_wr) -> Result<RawWr<'a>, Errno> {
    Ok(RawWr {
        header: abi::SrnicPostWr {
            wr_id: w.wr_id,
            opcode: abi::SRNIC_WR_RECV as u16,
            ..Default::default()
        },
        // SAFETY: forwarded.
        sges: unsafe { slice(w.sg_list, w.num_sge as usize) }?,
    })
}

/// Posts the C work requests `ws`, converted by `raw`, after checking them
/// all: one that cannot be converted fails the call before any is posted.
///
/// # Safety
///
/// Each request's `sg_list` covers its `num_sge` entries, and the C caller
/// keeps the memory contract of srnic_verbs.h for the memory they describe.
unsafe fn post_c<'a, W>(
    q: &srnic_qp,
    ws: &'a [W],
    raw: unsafe fn(&'a W) -> Result<RawWr<'a>, Errno>,
    posted: *mut c_uint,
) -> R {
    for w in ws {
        // SAFETY: forwarded.
        unsafe { raw(w) }?;
    }
    // SAFETY: forwarded; every request converted above, so none is skipped.
    let wrs = ws.iter().filter_map(move |w| unsafe { raw(w) }.ok());
    // SAFETY: forwarded.
    post_result(unsafe { q.0.post_raw(wrs) }, ws.len(), posted)
}

fn set_posted(posted: *mut c_uint, n: usize) {
    if !posted.is_null() && posted.is_aligned() {
        // SAFETY: non-NULL, aligned; the caller passes a writable unsigned int.
        unsafe { *posted = n as c_uint };
    }
}

fn post_result(r: srnic::Result<()>, n: usize, posted: *mut c_uint) -> R {
    match r {
        Ok(()) => {
            set_posted(posted, n);
            Ok(0)
        }
        Err(srnic::Error::Post { posted: p, source }) => {
            set_posted(posted, p);
            Err(Errno(source.raw_os_error().unwrap_or(libc::EIO)))
        }
        Err(e) => {
            set_posted(posted, 0);
            Err(e.into())
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn srnic_post_send(
    qp: *mut srnic_qp,
    wr: *const srnic_send_wr,
    num_wr: c_uint,
    posted: *mut c_uint,
) -> c_int {
    guard(|| {
        set_posted(posted, 0);
        // SAFETY: a handle and an array from the caller.
        let (q, ws) = unsafe { (obj(qp)?, slice(wr, num_wr as usize)?) };
        // SAFETY: the caller's sg_lists cover num_sge entries each, and it
        // keeps the memory contract (srnic_verbs.h).
        unsafe { post_c(q, ws, raw_send, posted) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_post_recv(
    qp: *mut srnic_qp,
    wr: *const srnic_recv_wr,
    num_wr: c_uint,
    posted: *mut c_uint,
) -> c_int {
    guard(|| {
        set_posted(posted, 0);
        // SAFETY: a handle and an array from the caller.
        let (q, ws) = unsafe { (obj(qp)?, slice(wr, num_wr as usize)?) };
        // SAFETY: the caller's sg_lists cover num_sge entries each, and it
        // keeps off the memory until the receives complete (srnic_verbs.h).
        unsafe { post_c(q, ws, raw_recv, posted) }
    })
}

// ---- VMTP ------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn srnic_vmtp_create(
    pd: *mut srnic_pd,
    cq: *mut srnic_cq,
    attr: *mut abi::SrnicVmtpCreate,
    e: *mut *mut srnic_vmtp,
) -> c_int {
    guard(|| {
        // SAFETY: handles and a writable structure from the caller.
        let (p, c, a) = unsafe { (obj(pd)?, obj(cq)?, out(attr)?) };
        let role = match a.role {
            abi::SRNIC_VMTP_CLIENT => VmtpRole::Client,
            abi::SRNIC_VMTP_SERVER => VmtpRole::Server,
            _ => return Err(einval()),
        };
        if a.flags & !abi::SRNIC_VMTP_ALL != 0 {
            return Err(einval());
        }
        let entity = VmtpEntity::new(
            &p.0,
            &c.0,
            &VmtpEntityAttr {
                role,
                addr: a.addr.into(),
                discriminator: a.discriminator,
                no_checksum: a.flags & abi::SRNIC_VMTP_NO_CHECKSUM != 0,
                max_clients: a.max_clients,
                max_recv: a.max_recv,
                response_timeout_ms: a.response_timeout_ms,
                max_retries: a.max_retries,
                packet_gap_us: a.packet_gap_us,
            },
        )?;
        *a = *entity.params();
        store(e, srnic_vmtp(entity))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_vmtp_destroy(e: *mut srnic_vmtp) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_vmtp_create.
        unsafe { obj(e) }?;
        // SAFETY: not used again.
        unsafe { free(e) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_vmtp_entity(e: *const srnic_vmtp) -> u64 {
    // SAFETY: a handle from srnic_vmtp_create, or NULL.
    unsafe { obj(e) }.map_or(0, |e| e.0.id().0)
}

/// # Safety
///
/// `sge` is NULL or points at a readable `srnic_sge`.
unsafe fn one_sge<'a>(sge: *const abi::SrnicSge) -> Result<Sge<'a>, Errno> {
    if sge.is_null() {
        // SAFETY: an empty element.
        return Ok(unsafe { Sge::from_raw(0, 0, 0) });
    }
    // SAFETY: forwarded.
    let s = unsafe { obj(sge) }?;
    // SAFETY: the C caller owns the memory contract (srnic_verbs.h).
    Ok(unsafe { Sge::from_raw(s.addr, s.length, s.lkey) })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_vmtp_request(
    e: *mut srnic_vmtp,
    wr_id: u64,
    server: u64,
    code: u32,
    flags: u32,
    req: *const abi::SrnicSge,
    resp: *const abi::SrnicSge,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and SGEs from the caller.
        let (en, rq, rs) = unsafe { (obj(e)?, one_sge(req)?, one_sge(resp)?) };
        let server = VmtpEntityId(server);
        match flags {
            0 => {
                // SAFETY: the C caller keeps off the Response buffer until
                // the transaction completes (srnic_verbs.h).
                unsafe { en.0.request(wr_id, server, code, rq, rs) }?
            }
            abi::SRNIC_VMTP_DATAGRAM => {
                // SAFETY: the element describes the caller's readable bytes.
                let data = unsafe { slice(rq.addr as *const u8, rq.length as usize) }?;
                if rq.lkey != 0 {
                    return Err(einval());
                }
                en.0.datagram(wr_id, server, code, data)?
            }
            _ => return Err(einval()),
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_vmtp_post_recv(
    e: *mut srnic_vmtp,
    wr_id: u64,
    buf: *const abi::SrnicSge,
) -> c_int {
    guard(|| {
        if buf.is_null() {
            return Err(einval());
        }
        // SAFETY: a handle and an SGE from the caller.
        let (en, b) = unsafe { (obj(e)?, one_sge(buf)?) };
        // SAFETY: the C caller keeps off the buffer until its completion.
        unsafe { en.0.post_recv(wr_id, b) }?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_vmtp_respond(
    e: *mut srnic_vmtp,
    wr_id: u64,
    client: u64,
    transaction: u32,
    code: u32,
    data: *const abi::SrnicSge,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and an SGE from the caller.
        let (en, d) = unsafe { (obj(e)?, one_sge(data)?) };
        en.0.respond(wr_id, VmtpEntityId(client), transaction, code, d)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_query_vmtp_stats(
    ctx: *mut srnic_context,
    stats: *mut abi::SrnicVmtpStats,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and a writable structure from the caller.
        let (c, s) = unsafe { (obj(ctx)?, out(stats)?) };
        *s = c.0.vmtp_stats_raw()?;
        Ok(0)
    })
}

// ---- connection management -------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn srnic_listen(
    ctx: *mut srnic_context,
    addr: *const sockaddr,
    backlog: c_int,
    mpa_flags: u32,
    listener: *mut *mut srnic_listener,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and a socket address from the caller.
        let (c, a) = unsafe { (obj(ctx)?, read_sockaddr(addr)?) };
        let backlog = u32::try_from(backlog).map_err(|_| einval())?;
        let l = Listener::new(&c.0, a, backlog, &mpa_params(mpa_flags))?;
        store(listener, srnic_listener(l))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_listener_port(listener: *const srnic_listener) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_listen.
        Ok(c_int::from(unsafe { obj(listener) }?.0.local_addr().port()))
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_destroy_listener(listener: *mut srnic_listener) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_listen, not used again.
        unsafe { obj(listener) }?;
        unsafe { free(listener) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_get_connect_request(
    listener: *mut srnic_listener,
    timeout_ms: c_int,
    req: *mut *mut srnic_conn_request,
) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_listen.
        let l = unsafe { obj(listener) }?;
        if req.is_null() {
            return Err(einval());
        }
        match l.0.get_request(timeout(timeout_ms))? {
            Some(r) => store(req, srnic_conn_request(r)),
            None => Err(Errno(libc::ETIMEDOUT)),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_conn_request_info(
    req: *const srnic_conn_request,
    info: *mut srnic_conn_info,
) -> c_int {
    guard(|| {
        // SAFETY: a handle and a writable structure from the caller.
        let (r, i) = unsafe { (obj(req)?, out(info)?) };
        let r = &r.0;
        fill_info(
            i,
            r.local_addr(),
            r.remote_addr(),
            r.ird(),
            r.ord(),
            r.mpa_flags().0,
            r.private_data(),
        );
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_accept(
    req: *mut srnic_conn_request,
    qp: *mut srnic_qp,
    param: *const srnic_conn_param,
    timeout_ms: c_int,
    info: *mut srnic_conn_info,
) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_get_connect_request; consumed here.
        unsafe { obj(req) }?;
        let r = unsafe { Box::from_raw(req) };
        // SAFETY: a handle and parameters from the caller.
        let (q, p) = unsafe { (obj(qp)?, conn_params(param)?) };
        r.0.start_accept(&q.0, &p)?;
        let c = q.0.wait_established(timeout(timeout_ms))?;
        fill_conn_info(info, &c)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_reject(
    req: *mut srnic_conn_request,
    private_data: *const c_void,
    len: u32,
) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_get_connect_request; consumed here.
        unsafe { obj(req) }?;
        let r = unsafe { Box::from_raw(req) };
        // SAFETY: the caller's private data covers len bytes.
        let pd = unsafe { slice(private_data as *const u8, len as usize) }?;
        r.0.reject(pd)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_connect(
    qp: *mut srnic_qp,
    addr: *const sockaddr,
    param: *const srnic_conn_param,
    timeout_ms: c_int,
    info: *mut srnic_conn_info,
) -> c_int {
    guard(|| {
        // SAFETY: a handle, an address and parameters from the caller.
        let (q, a, p) = unsafe { (obj(qp)?, read_sockaddr(addr)?, conn_params(param)?) };
        q.0.start_connect(a, &p)?;
        let c = q.0.wait_established(timeout(timeout_ms))?;
        fill_conn_info(info, &c)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_disconnect(qp: *mut srnic_qp, flags: u32) -> c_int {
    guard(|| {
        if flags & !abi::SRNIC_DISCONNECT_ABORT != 0 {
            return Err(einval());
        }
        // SAFETY: a handle from srnic_create_qp.
        unsafe { obj(qp) }?
            .0
            .disconnect(flags & abi::SRNIC_DISCONNECT_ABORT != 0)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_wait_qp_event(qp: *mut srnic_qp, timeout_ms: c_int) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_create_qp.
        match unsafe { obj(qp) }?.0.wait_event(timeout(timeout_ms))? {
            Some(e) => Ok(u32::from(e.kind) as c_int),
            None => Err(Errno(libc::ETIMEDOUT)),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_wait_qp_event_info(
    qp: *mut srnic_qp,
    timeout_ms: c_int,
    info: *mut srnic_conn_info,
    status: *mut i32,
) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_create_qp.
        let Some(e) = unsafe { obj(qp) }?.0.wait_event(timeout(timeout_ms))? else {
            return Err(Errno(libc::ETIMEDOUT));
        };
        if !info.is_null() {
            // SAFETY: non-NULL; the caller provides a writable structure.
            let i = unsafe { out(info) }?;
            fill_info(
                i,
                e.local,
                e.remote,
                e.ird,
                e.ord,
                e.mpa_flags.0,
                &e.private_data,
            );
        }
        if !status.is_null() {
            // SAFETY: non-NULL; the caller provides a writable int.
            *unsafe { out(status) }? = e.status;
        }
        Ok(u32::from(e.kind) as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn srnic_wait_disconnected(qp: *mut srnic_qp, timeout_ms: c_int) -> c_int {
    guard(|| {
        // SAFETY: a handle from srnic_create_qp.
        if unsafe { obj(qp) }?
            .0
            .wait_disconnected(timeout(timeout_ms))?
        {
            Ok(0)
        } else {
            Err(Errno(libc::ETIMEDOUT))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    #[test]
    fn null_handles_are_einval() {
        // SAFETY: NULL pointers are what is being tested.
        unsafe {
            assert_eq!(srnic_close(ptr::null_mut()), -libc::EINVAL);
            assert_eq!(
                srnic_alloc_pd(ptr::null_mut(), ptr::null_mut()),
                -libc::EINVAL
            );
            assert_eq!(srnic_dealloc_pd(ptr::null_mut()), -libc::EINVAL);
            assert_eq!(srnic_dereg_mr(ptr::null_mut()), -libc::EINVAL);
            assert_eq!(srnic_destroy_cq(ptr::null_mut()), -libc::EINVAL);
            assert_eq!(srnic_destroy_qp(ptr::null_mut()), -libc::EINVAL);
            assert_eq!(srnic_destroy_listener(ptr::null_mut()), -libc::EINVAL);
            assert_eq!(srnic_vmtp_destroy(ptr::null_mut()), -libc::EINVAL);
            assert_eq!(srnic_vmtp_entity(ptr::null()), 0);
            let mut e = ptr::null_mut();
            let mut attr = abi::SrnicVmtpCreate::default();
            assert_eq!(
                srnic_vmtp_create(ptr::null_mut(), ptr::null_mut(), &mut attr, &mut e),
                -libc::EINVAL
            );
            assert_eq!(
                srnic_vmtp_request(ptr::null_mut(), 0, 0, 0, 0, ptr::null(), ptr::null()),
                -libc::EINVAL
            );
            assert_eq!(
                srnic_vmtp_post_recv(ptr::null_mut(), 0, ptr::null()),
                -libc::EINVAL
            );
            assert_eq!(
                srnic_vmtp_respond(ptr::null_mut(), 0, 0, 0, 0, ptr::null()),
                -libc::EINVAL
            );
            assert_eq!(
                srnic_query_vmtp_stats(ptr::null_mut(), ptr::null_mut()),
                -libc::EINVAL
            );
            assert_eq!(
                srnic_poll_cq(ptr::null_mut(), 1, ptr::null_mut()),
                -libc::EINVAL
            );
            assert_eq!(srnic_wait_cq(ptr::null_mut(), 0), -libc::EINVAL);
            assert_eq!(
                srnic_wait_qp_event_info(ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()),
                -libc::EINVAL
            );
            assert_eq!(
                srnic_post_send(ptr::null_mut(), ptr::null(), 0, ptr::null_mut()),
                -libc::EINVAL
            );
            assert_eq!(
                srnic_accept(
                    ptr::null_mut(),
                    ptr::null_mut(),
                    ptr::null(),
                    0,
                    ptr::null_mut()
                ),
                -libc::EINVAL
            );
            assert_eq!(srnic_reject(ptr::null_mut(), ptr::null(), 0), -libc::EINVAL);
            assert_eq!(srnic_mr_lkey(ptr::null()), 0);
            assert_eq!(srnic_qp_handle(ptr::null()), 0);
            assert_eq!(srnic_get_fd(ptr::null_mut()), -libc::EINVAL);
        }
    }

    #[test]
    fn open_reports_negative_errno() {
        let mut ctx = ptr::null_mut();
        // SAFETY: valid C string and out pointer.
        let r = unsafe { srnic_open(c"/nonexistent/srnic".as_ptr(), &mut ctx) };
        assert_eq!(r, -libc::ENOENT);
        assert!(ctx.is_null());
        // SAFETY: as above.
        let r = unsafe { srnic_open(c"/dev/null".as_ptr(), &mut ctx) };
        assert_eq!(r, -libc::ENOTTY);
    }

    #[test]
    fn panics_become_eio() {
        assert_eq!(guard(|| panic!("boom")), -libc::EIO);
        assert_eq!(guard(|| Ok(5)), 5);
        assert_eq!(guard(|| Err(Errno(libc::EBUSY))), -libc::EBUSY);
    }

    #[test]
    fn sockaddr_conversions() {
        // SAFETY: zeroed sockaddr_storage is valid.
        let mut st: sockaddr_storage = unsafe { std::mem::zeroed() };
        let a: SocketAddr = "10.1.2.3:18515".parse().unwrap();
        write_sockaddr(&mut st, Some(a));
        // SAFETY: st holds a sockaddr_in just written.
        let sin = unsafe { &*(&st as *const _ as *const libc::sockaddr_in) };
        assert_eq!(sin.sin_family, libc::AF_INET as libc::sa_family_t);
        assert_eq!(u16::from_be(sin.sin_port), 18515);
        assert_eq!(sin.sin_addr.s_addr.to_ne_bytes(), [10, 1, 2, 3]);
        // SAFETY: st is a whole sockaddr_storage.
        assert_eq!(
            unsafe { read_sockaddr(&st as *const _ as *const sockaddr) }.ok(),
            Some(a)
        );
        let b: SocketAddr = "[fe80::7%3]:9".parse().unwrap_or_else(|_| {
            SocketAddr::V6(SocketAddrV6::new("fe80::7".parse().unwrap(), 9, 0, 3))
        });
        write_sockaddr(&mut st, Some(b));
        // SAFETY: as above.
        assert_eq!(
            unsafe { read_sockaddr(&st as *const _ as *const sockaddr) }.ok(),
            Some(b)
        );
        write_sockaddr(&mut st, None);
        assert_eq!(st.ss_family, 0);
        // SAFETY: as above.
        assert!(matches!(
            unsafe { read_sockaddr(&st as *const _ as *const sockaddr) },
            Err(Errno(libc::EAFNOSUPPORT))
        ));
        // SAFETY: NULL is what is tested.
        assert!(unsafe { read_sockaddr(ptr::null()) }.is_err());
    }

    #[test]
    fn send_wr_opcodes_map_and_unknown_is_einval() {
        let mk = |op| srnic_send_wr {
            wr_id: 1,
            opcode: op,
            send_flags: abi::SRNIC_SEND_SIGNALED,
            sg_list: ptr::null(),
            num_sge: 0,
            invalidate_rkey: 5,
            remote_addr: 0x1000,
            rkey: 7,
            reserved: 0,
        };
        // Each send opcode keeps the fields its operation uses and no others.
        for (op, inv, remote) in [
            (abi::SRNIC_WR_SEND, 0, (0, 0)),
            (abi::SRNIC_WR_SEND_WITH_INV, 5, (0, 0)),
            (abi::SRNIC_WR_SEND_WITH_SE, 0, (0, 0)),
            (abi::SRNIC_WR_SEND_WITH_SE_INV, 5, (0, 0)),
            (abi::SRNIC_WR_RDMA_WRITE, 0, (0x1000, 7)),
            (abi::SRNIC_WR_RDMA_READ, 0, (0x1000, 7)),
        ] {
            // SAFETY: no SGEs.
            let w = unsafe { raw_send(&mk(op)) }.ok().unwrap();
            assert_eq!(u32::from(w.header.opcode), op);
            assert_eq!(w.header.wr_id, 1);
            assert_eq!(w.header.flags, abi::SRNIC_SEND_SIGNALED);
            assert_eq!(w.header.invalidate_rkey, inv);
            assert_eq!((w.header.remote_addr, w.header.rkey), remote);
            assert!(w.sges.is_empty());
        }
        // SAFETY: no SGEs.
        unsafe {
            assert!(raw_send(&mk(abi::SRNIC_WR_RECV)).is_err());
            assert!(raw_send(&mk(99)).is_err());
        }
        // SGEs are the caller's array, not a copy; a NULL array is EINVAL.
        let sg = [abi::SrnicSge {
            addr: 0x2000,
            length: 64,
            lkey: 3,
        }];
        let mut m = mk(abi::SRNIC_WR_SEND);
        m.sg_list = sg.as_ptr();
        m.num_sge = 1;
        // SAFETY: sg_list covers num_sge entries.
        let w = unsafe { raw_send(&m) }.ok().unwrap();
        assert!(ptr::eq(w.sges.as_ptr(), sg.as_ptr()));
        m.sg_list = ptr::null();
        // SAFETY: a NULL array is checked, never read.
        assert!(unsafe { raw_send(&m) }.is_err());
        let r = srnic_recv_wr {
            wr_id: 9,
            sg_list: sg.as_ptr(),
            num_sge: 1,
            reserved: 0,
        };
        // SAFETY: sg_list covers num_sge entries.
        let w = unsafe { raw_recv(&r) }.ok().unwrap();
        assert_eq!(u32::from(w.header.opcode), abi::SRNIC_WR_RECV);
        assert_eq!((w.header.wr_id, w.sges.len()), (9, 1));
    }

    #[test]
    fn conn_params_from_c() {
        let pd = *b"hi";
        let p = srnic_conn_param {
            private_data: pd.as_ptr().cast(),
            private_data_len: 2,
            ird: 3,
            ord: 2,
            mpa_flags: abi::SRNIC_MPA_CRC | abi::SRNIC_MPA_P2P,
        };
        // SAFETY: p is valid and its private data covers its length.
        let c = unsafe { conn_params(&p) }.ok().unwrap();
        assert_eq!(c.private_data, b"hi");
        assert_eq!((c.ird, c.ord), (3, 2));
        assert!(c.crc && c.p2p && !c.markers);
        // SAFETY: NULL means defaults.
        assert_eq!(
            unsafe { conn_params(ptr::null()) }.ok(),
            Some(ConnParams::default())
        );
    }

    #[test]
    fn timeouts() {
        assert_eq!(timeout(-1), None);
        assert_eq!(timeout(0), Some(Duration::ZERO));
        assert_eq!(timeout(1500), Some(Duration::from_millis(1500)));
    }

    /// Compiles srnic_verbs.h with the host C compiler and compares every
    /// structure's size and field offsets with the Rust definitions here;
    /// also checks that the example compiles warning-free against it.
    mod c_header {
        use super::*;
        use std::mem::{offset_of, size_of};
        use std::process::Command;

        fn cc() -> String {
            std::env::var("CC").unwrap_or_else(|_| "cc".into())
        }

        fn includes() -> [String; 4] {
            let here = env!("CARGO_MANIFEST_DIR");
            [
                "-I".into(),
                format!("{here}/include"),
                "-I".into(),
                format!("{here}/../../uapi"),
            ]
        }

        macro_rules! layout {
            ($($s:ident { $($f:ident),* })*) => {{
                let mut c = String::from(
                    "#include <stdio.h>\n#include <stddef.h>\n#include <srnic_verbs.h>\nint main(void) {\n",
                );
                let mut want = Vec::new();
                $(
                    c.push_str(&format!(
                        "printf(\"{0} %zu\\n\", sizeof(struct {0}));\n",
                        stringify!($s)
                    ));
                    want.push(format!("{} {}", stringify!($s), size_of::<$s>()));
                    $(
                        c.push_str(&format!(
                            "printf(\"{0}.{1} %zu\\n\", offsetof(struct {0}, {1}));\n",
                            stringify!($s),
                            stringify!($f)
                        ));
                        want.push(format!(
                            "{}.{} {}",
                            stringify!($s),
                            stringify!($f),
                            offset_of!($s, $f)
                        ));
                    )*
                )*
                c.push_str("return 0;\n}\n");
                (c, want)
            }};
        }

        #[test]
        fn header_matches_rust() {
            let (c, want) = layout!(
                srnic_qp_init_attr { send_cq, recv_cq, max_send_wr, max_recv_wr, max_send_sge,
                    max_recv_sge, max_inline_data, sq_sig_all }
                srnic_conn_param { private_data, private_data_len, ird, ord, mpa_flags }
                srnic_send_wr { wr_id, opcode, send_flags, sg_list, num_sge, invalidate_rkey,
                    remote_addr, rkey, reserved }
                srnic_recv_wr { wr_id, sg_list, num_sge, reserved }
                srnic_conn_info { local, remote, ird, ord, mpa_flags, private_data_len,
                    private_data }
            );
            let dir = std::env::temp_dir().join(format!("srnic-verbs-h-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let src = dir.join("layout.c");
            let exe = dir.join("layout");
            std::fs::write(&src, c).unwrap();
            let st = Command::new(cc())
                .args(["-Wall", "-Werror", "-o"])
                .arg(&exe)
                .arg(&src)
                .args(includes())
                .status()
                .expect("run the C compiler");
            assert!(st.success(), "srnic_verbs.h does not compile");
            let out = Command::new(&exe).output().unwrap();
            let got: Vec<String> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            let _ = std::fs::remove_dir_all(&dir);
            assert_eq!(got, want);
        }

        #[test]
        fn example_compiles() {
            let here = env!("CARGO_MANIFEST_DIR");
            let st = Command::new(cc())
                .args(["-fsyntax-only", "-Wall", "-Wextra", "-Werror"])
                .arg(format!("{here}/examples/c_example.c"))
                .args(includes())
                .status()
                .expect("run the C compiler");
            assert!(st.success());
        }
    }
}
