// SPDX-License-Identifier: GPL-2.0
//! The kernel verbs API's C-callable functions (`include/srnic/kverbs.h`):
//! the boundary where a kernel client's raw pointers become Rust values.
//!
//! Each converts its arguments and calls the verbs command of the same name
//! (`crate::verbs::commands`) on the client's context (`crate::kapi`), as
//! the character device's ioctls do. The symbols are exported (GPL) by
//! `kverbs.c`, which also checks the client's API version before
//! [`srnic_kv_open_checked`].
//!
//! A context pointer names a client that srnic's registry owns
//! (`crate::kapi::client`), from `srnic_kv_open_checked` until
//! [`srnic_kv_close`] (or its module going away); the API's contract is that
//! a client passes only pointers it opened and has not closed, and argument
//! pointers valid for the call. Null arguments are
//! refused with `EINVAL`; everything else is checked as for a file.

use crate::{
    iwarp::params::PrivateData,
    kapi::client::Client,
    sys::{
        gfp::NoIo,
        kv_ops::{Callbacks, KvOps},
        module_ref::ModuleId,
        pages::{KernelPages, RawBioVec, RawPage},
    },
    uapi::*,
    verbs::{commands, limits, mr::MrSource},
};
use core::ffi::{c_int, c_void};
use kernel::prelude::*;

/// The client behind `ctx`.
///
/// # Safety
///
/// `ctx` is null or came from `srnic_kv_open_checked` and was not closed.
unsafe fn client<'a>(ctx: *const Client) -> Result<&'a Client> {
    // SAFETY: by the function's contract, an open client, which the registry
    // keeps alive during the call.
    unsafe { ctx.as_ref() }.ok_or(EINVAL)
}

/// The argument behind `p`.
///
/// # Safety
///
/// `p` is null or valid for the call, and not aliased during it.
unsafe fn arg<'a, T>(p: *mut T) -> Result<&'a mut T> {
    // SAFETY: by the function's contract.
    unsafe { p.as_mut() }.ok_or(EINVAL)
}

/// `len` bytes at kernel address `ptr` (`len` 0: none).
///
/// # Safety
///
/// `ptr` is valid for `len` bytes for the call.
unsafe fn kernel_bytes<'a>(ptr: u64, len: usize) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr == 0 {
        return Err(EINVAL);
    }
    // SAFETY: by the function's contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr as usize as *const u8, len) })
}

/// Private data of a connect, accept or reject at kernel address `ptr`.
///
/// # Safety
///
/// As [`kernel_bytes`], when `len` is at most the largest private data.
unsafe fn private_data(ptr: u64, len: u32) -> Result<PrivateData> {
    if len > SRNIC_MAX_PRIVATE_DATA {
        return Err(EINVAL);
    }
    // SAFETY: by the function's contract.
    PrivateData::from_slice(unsafe { kernel_bytes(ptr, len as usize) }?)
}

/// Opens a client (after `__srnic_kv_open` checked its API version); an
/// `ERR_PTR` on failure.
///
/// # Safety
///
/// `ops` is null or valid while the client is open; `owner` is the
/// client's module.
#[no_mangle]
pub(crate) unsafe extern "C" fn srnic_kv_open_checked(
    owner: *mut c_void,
    ops: *const KvOps,
    arg: *mut c_void,
) -> *mut Client {
    // SAFETY: by the function's contract (and the API's: the callbacks may
    // run on any CPU).
    let notify = unsafe { Callbacks::new(ops, arg) };
    match Client::open(owner as ModuleId, notify) {
        Ok(c) => c.cast_mut(),
        Err(e) => e.to_errno() as isize as *mut Client,
    }
}

/// Closes a client; a pointer that names no open client (closed twice, or
/// never opened) is refused with a warning, not used.
#[no_mangle]
pub(crate) extern "C" fn srnic_kv_close(ctx: *mut Client) {
    if ctx.is_null() {
        return;
    }
    if Client::close_ptr(ctx).is_err() {
        pr_warn!("srnic_kv_close() of a context that is not open\n");
    }
}

/// Defines an exported function on a client: `$name(ctx, args) -> c_int`
/// running `$body` with `$c` the client.
macro_rules! kv_fn {
    ($(#[$m:meta])* $name:ident($c:ident $(, $a:ident: $t:ty)*) $body:block) => {
        $(#[$m])*
        /// # Safety
        ///
        /// `ctx` is an open client's; pointer arguments are null or valid
        /// for the call.
        #[no_mangle]
        pub(crate) unsafe extern "C" fn $name(ctx: *const Client $(, $a: $t)*) -> c_int {
            // A kernel client calls from its I/O path: nothing srnic
            // allocates for it may wait on new I/O.
            let _noio = NoIo::enter();
            // SAFETY: by the function's contract.
            let r: Result<c_int> = (|| {
                let $c = unsafe { client(ctx) }?;
                $body
            })();
            match r {
                Ok(v) => v,
                Err(e) => e.to_errno(),
            }
        }
    };
}

kv_fn!(srnic_kv_query_device(c, q: *mut SrnicQueryDevice) {
    // SAFETY: by the function's contract.
    commands::query_device(&c.ctx, unsafe { arg(q) }?);
    Ok(0)
});

kv_fn!(srnic_kv_alloc_pd(c, out: *mut u32) {
    // SAFETY: by the function's contract.
    let out = unsafe { arg(out) }?;
    let mut a = SrnicAllocPd::default();
    commands::alloc_pd(&c.ctx, &mut a)?;
    *out = a.pd_handle;
    Ok(0)
});

kv_fn!(srnic_kv_dealloc_pd(c, h: u32) {
    commands::dealloc_pd(&c.ctx, h)?;
    Ok(0)
});

kv_fn!(srnic_kv_reg_pages(c, a: *mut SrnicRegMr, pages: *const *mut RawPage, npages: u32, offset: u32) {
    // SAFETY: by the function's contract.
    let a = unsafe { arg(a) }?;
    // SAFETY: the caller's `npages` live pages.
    let pages = unsafe { KernelPages::from_array(pages, npages as usize) }?;
    commands::reg_mr(&c.ctx, a, MrSource::Kernel { pages, offset: offset as usize })?;
    Ok(0)
});

kv_fn!(srnic_kv_reg_bvec(c, a: *mut SrnicRegMr, bv: *const RawBioVec, nr: u32) {
    // SAFETY: by the function's contract.
    let a = unsafe { arg(a) }?;
    // SAFETY: the caller's `nr` bio_vecs, their pages live.
    let (pages, offset, len) = unsafe { KernelPages::from_bvecs(bv, nr as usize) }?;
    a.length = len;
    commands::reg_mr(&c.ctx, a, MrSource::Kernel { pages, offset })?;
    Ok(0)
});

kv_fn!(srnic_kv_dereg_mr(c, h: u32) {
    commands::dereg_mr(&c.ctx, h)?;
    Ok(0)
});

kv_fn!(srnic_kv_create_cq(c, a: *mut SrnicCreateCq) {
    // SAFETY: by the function's contract.
    commands::create_cq(&c.ctx, unsafe { arg(a) }?)?;
    Ok(0)
});

kv_fn!(srnic_kv_destroy_cq(c, h: u32) {
    commands::destroy_cq(&c.ctx, h)?;
    Ok(0)
});

kv_fn!(srnic_kv_req_notify_cq(c, h: u32, flags: u32) {
    let a = SrnicReqNotifyCq { cq_handle: h, flags, ..Default::default() };
    Ok(c_int::from(commands::req_notify_cq(&c.ctx, &a)?))
});

kv_fn!(srnic_kv_poll_cq(c, h: u32, wc: *mut SrnicWc, n: c_int) {
    let want = usize::try_from(n).map_err(|_| EINVAL)?;
    if want > 0 && wc.is_null() {
        return Err(EINVAL);
    }
    let mut done = 0usize;
    let got = commands::poll_cq(&c.ctx, h, want, |w| {
        // SAFETY: the caller's array of `n` completions; `done < n`.
        unsafe { wc.add(done).write(*w) };
        done += 1;
        Ok(())
    })?;
    c_int::try_from(got).map_err(|_| EINVAL)
});

kv_fn!(srnic_kv_create_qp(c, a: *mut SrnicCreateQp) {
    // SAFETY: by the function's contract.
    commands::create_qp(&c.ctx, unsafe { arg(a) }?)?;
    Ok(0)
});

kv_fn!(srnic_kv_destroy_qp(c, h: u32) {
    commands::destroy_qp(&c.ctx, h)?;
    Ok(0)
});

kv_fn!(srnic_kv_query_qp(c, a: *mut SrnicQueryQp) {
    // SAFETY: by the function's contract.
    commands::query_qp(&c.ctx, unsafe { arg(a) }?)?;
    Ok(0)
});

kv_fn!(srnic_kv_listen(c, a: *mut SrnicListen) {
    // SAFETY: by the function's contract.
    commands::listen(&c.ctx, unsafe { arg(a) }?)?;
    Ok(0)
});

kv_fn!(srnic_kv_destroy_listener(c, h: u32) {
    commands::destroy_listener(&c.ctx, h)?;
    Ok(0)
});

kv_fn!(srnic_kv_connect(c, a: *mut SrnicConnect) {
    // SAFETY: by the function's contract (private data: a kernel pointer).
    let a = unsafe { arg(a) }?;
    // SAFETY: as above.
    let pd = unsafe { private_data(a.private_data, a.private_data_len) }?;
    commands::connect(&c.ctx, a, pd)?;
    Ok(0)
});

kv_fn!(srnic_kv_accept(c, a: *mut SrnicAccept) {
    // SAFETY: by the function's contract.
    let a = unsafe { arg(a) }?;
    // SAFETY: as above.
    let pd = unsafe { private_data(a.private_data, a.private_data_len) }?;
    commands::accept(&c.ctx, a, pd)?;
    Ok(0)
});

kv_fn!(srnic_kv_reject(c, a: *mut SrnicReject) {
    // SAFETY: by the function's contract.
    let a = unsafe { arg(a) }?;
    // SAFETY: as above.
    let pd = unsafe { private_data(a.private_data, a.private_data_len) }?;
    commands::reject(&c.ctx, a, pd)?;
    Ok(0)
});

kv_fn!(srnic_kv_disconnect(c, h: u32, flags: u32) {
    let a = SrnicDisconnect { qp_handle: h, flags, ..Default::default() };
    commands::disconnect(&c.ctx, &a)?;
    Ok(0)
});

kv_fn!(srnic_kv_drain_qp(c, h: u32) {
    commands::drain_qp(&c.ctx, h)?;
    Ok(0)
});

kv_fn!(srnic_kv_post_bvec(c, wr: *const SrnicPostWr, bv: *const RawBioVec, nr: u32) {
    // SAFETY: by the function's contract.
    let wr = unsafe { wr.as_ref() }.ok_or(EINVAL)?;
    // SAFETY: the caller's `nr` bio_vecs, their pages live.
    let (pages, offset, len) = unsafe { KernelPages::from_bvecs(bv, nr as usize) }?;
    commands::post_pages(&c.ctx, wr, pages, offset, len)?;
    Ok(0)
});

kv_fn!(srnic_kv_post(c, wr: *const SrnicPostWr, sge: *const SrnicSge) {
    // SAFETY: by the function's contract.
    let wr = unsafe { wr.as_ref() }.ok_or(EINVAL)?;
    let n = usize::from(wr.num_sge);
    if n > limits::MAX_SGE || (n > 0 && sge.is_null()) {
        return Err(EINVAL);
    }
    let sges = if n == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's `num_sge` SGEs.
        unsafe { core::slice::from_raw_parts(sge, n) }
    };
    let qp = commands::qp(&c.ctx, wr.qp_handle)?;
    commands::post(&qp, wr, sges, |s, dst| {
        // SAFETY: an inline SGE names kernel memory valid for the call.
        dst.copy_from_slice(unsafe { kernel_bytes(s.addr, dst.len()) }?);
        Ok(())
    })?;
    Ok(0)
});
