// SPDX-License-Identifier: GPL-2.0
//! ioctl dispatch for `/dev/srnic`.
//!
//! Every command is `_IOWR(SRNIC_IOCTL_MAGIC, nr, struct)`. The checks, in order:
//! a foreign magic or unknown number is `ENOTTY`; a known number with another
//! direction, or a size below its structure's first version, is `EINVAL`; an
//! unreadable or unwritable argument is `EFAULT`; a `size` field other than
//! the size the number encodes is `EINVAL`; bytes a larger (newer) structure
//! has beyond srnic's that are not zero are `E2BIG`; a non-zero reserved
//! field is `EINVAL`. Structures grow by size, as `copy_struct_from_user` lets them: a
//! smaller (older) structure's missing fields are zero, and the answer goes
//! back in the caller's size. Each command then goes to its verbs command
//! (`crate::verbs::commands`, shared with the kernel verbs API), which
//! answers `EINVAL` for an unknown handle or flag and `EBUSY` for an object
//! still in use; the RMPP commands, which only files have, are here, and the VMTP ones
//! in `chardev/vmtp.rs`.

use super::vmtp;
use crate::{
    iwarp::params::PrivateData,
    rmpp::endpoint::{Ep, EpParams},
    rmpp::node::{self as nodes, Node},
    sys::{abi, netdev::net_admin},
    uapi::*,
    verbs::commands,
    verbs::resources,
    verbs::context::Context,
    verbs::cq::CqUse,
    verbs::mr::MrSource,
    verbs::pd::PdUse,
    verbs::stats,
};
use kernel::{
    ioctl::{_IOC_DIR, _IOC_NR, _IOC_SIZE, _IOC_TYPE},
    prelude::*,
    types::{AsBytes, FromBytes},
    uaccess::UserSlice,
};

/// An ioctl argument structure.
trait Arg: FromBytes + AsBytes + Default {
    /// The full command number (`_IOWR` with this structure's size).
    const CMD: u32;
    /// The size of the structure's first version: the least a caller may pass.
    const MIN_SIZE: usize = core::mem::size_of::<Self>();
    /// The caller's `size` field.
    fn size(&self) -> u32;
    /// Whether every reserved field is zero.
    fn reserved_zero(&self) -> bool;
}

/// Zero test for the reserved field types.
trait IsZero {
    fn is_zero(&self) -> bool;
}
impl IsZero for u32 {
    fn is_zero(&self) -> bool {
        *self == 0
    }
}
impl IsZero for u64 {
    fn is_zero(&self) -> bool {
        *self == 0
    }
}
impl<const N: usize> IsZero for [u8; N] {
    fn is_zero(&self) -> bool {
        self.iter().all(|&r| r == 0)
    }
}
impl<const N: usize> IsZero for [u64; N] {
    fn is_zero(&self) -> bool {
        self.iter().all(|&r| r == 0)
    }
}


/// Implements [`Arg`] for a structure, its command and its reserved fields.
macro_rules! arg {
    ($t:ty, $cmd:expr, [$($r:ident),*]) => {
        arg!($t, $cmd, [$($r),*], core::mem::size_of::<$t>());
    };
    ($t:ty, $cmd:expr, [$($r:ident),*], $min:expr) => {
        impl Arg for $t {
            const CMD: u32 = $cmd;
            const MIN_SIZE: usize = $min;
            fn size(&self) -> u32 {
                self.size
            }
            fn reserved_zero(&self) -> bool {
                true $(&& self.$r.is_zero())*
            }
        }
    };
}
arg!(SrnicQueryDevice, SRNIC_IOCTL_QUERY_DEVICE, [reserved]);
arg!(SrnicAllocPd, SRNIC_IOCTL_ALLOC_PD, [reserved]);
arg!(SrnicRegMr, SRNIC_IOCTL_REG_MR, [reserved]);
arg!(SrnicCreateCq, SRNIC_IOCTL_CREATE_CQ, [reserved]);
arg!(SrnicReqNotifyCq, SRNIC_IOCTL_REQ_NOTIFY_CQ, [reserved0, reserved]);
arg!(SrnicPollCq, SRNIC_IOCTL_POLL_CQ, [reserved0, reserved]);
arg!(SrnicCreateQp, SRNIC_IOCTL_CREATE_QP, [reserved0, reserved]);
arg!(SrnicQueryQp, SRNIC_IOCTL_QUERY_QP, [reserved0]);
arg!(SrnicListen, SRNIC_IOCTL_LISTEN, [reserved]);
arg!(SrnicConnect, SRNIC_IOCTL_CONNECT, [reserved]);
arg!(SrnicAccept, SRNIC_IOCTL_ACCEPT, [reserved]);
arg!(SrnicReject, SRNIC_IOCTL_REJECT, [reserved0, reserved]);
arg!(SrnicDisconnect, SRNIC_IOCTL_DISCONNECT, [reserved0]);
arg!(SrnicStats, SRNIC_IOCTL_QUERY_STATS, [reserved0, reserved], SRNIC_STATS_SIZE_V1 as usize);
arg!(SrnicQueryRes, SRNIC_IOCTL_QUERY_RES, [reserved0, reserved]);
arg!(SrnicRmppNode, SRNIC_IOCTL_RMPP_SET_NODE, [reserved0, reserved1, reserved]);
arg!(SrnicRmppCreateEp, SRNIC_IOCTL_RMPP_CREATE_EP, [reserved]);
arg!(SrnicRmppSend, SRNIC_IOCTL_RMPP_SEND, [reserved]);
arg!(SrnicRmppPostRecv, SRNIC_IOCTL_RMPP_POST_RECV, [reserved]);
arg!(SrnicRmppStats, SRNIC_IOCTL_RMPP_QUERY_STATS, [reserved0, reserved]);
arg!(SrnicVmtpCreate, SRNIC_IOCTL_VMTP_CREATE, [reserved]);
arg!(SrnicVmtpRequest, SRNIC_IOCTL_VMTP_REQUEST, [reserved]);
arg!(SrnicVmtpPostRecv, SRNIC_IOCTL_VMTP_POST_RECV, [reserved]);
arg!(SrnicVmtpRespond, SRNIC_IOCTL_VMTP_RESPOND, [reserved]);
arg!(SrnicVmtpStats, SRNIC_IOCTL_VMTP_QUERY_STATS, [reserved0, reserved]);

/// Bytes of a larger structure's tail read at a time.
const TAIL_CHUNK: usize = 64;

/// Runs `f` on the validated argument of command `cmd` and copies it back,
/// in the caller's size (see the module's documentation).
fn with_arg<T: Arg>(cmd: u32, arg: usize, f: impl FnOnce(&mut T) -> Result<isize>) -> Result<isize> {
    let theirs = _IOC_SIZE(cmd);
    if _IOC_DIR(cmd) != _IOC_DIR(T::CMD) || theirs < T::MIN_SIZE {
        // Right number, wrong direction or a size no version had.
        return Err(EINVAL);
    }
    let len = theirs.min(core::mem::size_of::<T>());
    let mut val = T::default();
    let mut r = UserSlice::new(arg, theirs).reader();
    r.read_slice(&mut abi::bytes_mut(&mut val)[..len])?;
    if val.size() as usize != theirs {
        return Err(EINVAL);
    }
    // A newer caller's fields srnic does not know must be unset.
    let mut tail = [0u8; TAIL_CHUNK];
    let mut left = theirs - len;
    while left > 0 {
        let n = left.min(TAIL_CHUNK);
        r.read_slice(&mut tail[..n])?;
        if tail[..n].iter().any(|&b| b != 0) {
            return Err(E2BIG);
        }
        left -= n;
    }
    if !val.reserved_zero() {
        return Err(EINVAL);
    }
    // The result must be deliverable before anything is made: a command whose
    // argument cannot be written back (read-only memory) fails with EFAULT
    // before it creates an object nobody would know the handle of. Writing
    // back what was read changes nothing. (A caller that makes the memory
    // read-only while the command runs still loses the result, and the
    // object stays with its file.)
    UserSlice::new(arg, len).writer().write_slice(&abi::bytes(&val)[..len])?;
    let ret = f(&mut val)?;
    UserSlice::new(arg, len).writer().write_slice(&abi::bytes(&val)[..len])?;
    Ok(ret)
}

/// Runs `f` on the handle of a destroy command `cmd` (expected `want`).
fn with_handle(cmd: u32, want: u32, arg: usize, f: impl FnOnce(u32) -> Result) -> Result<isize> {
    if cmd != want {
        return Err(EINVAL);
    }
    let len = core::mem::size_of::<SrnicHandleArg>();
    let mut r = UserSlice::new(arg, len).reader();
    let a: SrnicHandleArg = r.read()?;
    if a.size as usize != len || a.reserved != 0 {
        return Err(EINVAL);
    }
    f(a.handle)?;
    Ok(0)
}

/// Dispatches one ioctl of `ctx`.
pub(crate) fn dispatch(ctx: &Context, cmd: u32, arg: usize) -> Result<isize> {
    if _IOC_TYPE(cmd) != SRNIC_IOCTL_MAGIC {
        return Err(ENOTTY);
    }
    let nr = |c: u32| _IOC_NR(c);
    match _IOC_NR(cmd) {
        n if n == nr(SRNIC_IOCTL_QUERY_DEVICE) => with_arg(cmd, arg, |a| query_device(ctx, a)),
        n if n == nr(SRNIC_IOCTL_ALLOC_PD) => with_arg(cmd, arg, |a: &mut SrnicAllocPd| commands::alloc_pd(ctx, a).map(|()| 0)),
        n if n == nr(SRNIC_IOCTL_DEALLOC_PD) => with_handle(cmd, SRNIC_IOCTL_DEALLOC_PD, arg, |h| commands::dealloc_pd(ctx, h)),
        n if n == nr(SRNIC_IOCTL_REG_MR) => with_arg(cmd, arg, |a: &mut SrnicRegMr| commands::reg_mr(ctx, a, MrSource::User).map(|()| 0)),
        n if n == nr(SRNIC_IOCTL_DEREG_MR) => with_handle(cmd, SRNIC_IOCTL_DEREG_MR, arg, |h| commands::dereg_mr(ctx, h)),
        n if n == nr(SRNIC_IOCTL_CREATE_CQ) => with_arg(cmd, arg, |a: &mut SrnicCreateCq| commands::create_cq(ctx, a).map(|()| 0)),
        n if n == nr(SRNIC_IOCTL_DESTROY_CQ) => with_handle(cmd, SRNIC_IOCTL_DESTROY_CQ, arg, |h| commands::destroy_cq(ctx, h)),
        n if n == nr(SRNIC_IOCTL_REQ_NOTIFY_CQ) => with_arg(cmd, arg, |a: &mut SrnicReqNotifyCq| commands::req_notify_cq(ctx, a).map(isize::from)),
        n if n == nr(SRNIC_IOCTL_POLL_CQ) => with_arg(cmd, arg, |a| poll_cq(ctx, a)),
        n if n == nr(SRNIC_IOCTL_CREATE_QP) => with_arg(cmd, arg, |a: &mut SrnicCreateQp| commands::create_qp(ctx, a).map(|()| 0)),
        n if n == nr(SRNIC_IOCTL_DESTROY_QP) => with_handle(cmd, SRNIC_IOCTL_DESTROY_QP, arg, |h| commands::destroy_qp(ctx, h)),
        n if n == nr(SRNIC_IOCTL_QUERY_QP) => with_arg(cmd, arg, |a: &mut SrnicQueryQp| commands::query_qp(ctx, a).map(|()| 0)),
        n if n == nr(SRNIC_IOCTL_LISTEN) => with_arg(cmd, arg, |a: &mut SrnicListen| commands::listen(ctx, a).map(|()| 0)),
        n if n == nr(SRNIC_IOCTL_DESTROY_LISTENER) => with_handle(cmd, SRNIC_IOCTL_DESTROY_LISTENER, arg, |h| commands::destroy_listener(ctx, h)),
        n if n == nr(SRNIC_IOCTL_CONNECT) => with_arg(cmd, arg, |a: &mut SrnicConnect| {
            let pd = PrivateData::from_user(a.private_data, a.private_data_len)?;
            commands::connect(ctx, a, pd).map(|()| 0)
        }),
        n if n == nr(SRNIC_IOCTL_ACCEPT) => with_arg(cmd, arg, |a: &mut SrnicAccept| {
            let pd = PrivateData::from_user(a.private_data, a.private_data_len)?;
            commands::accept(ctx, a, pd).map(|()| 0)
        }),
        n if n == nr(SRNIC_IOCTL_REJECT) => with_arg(cmd, arg, |a: &mut SrnicReject| {
            let pd = PrivateData::from_user(a.private_data, a.private_data_len)?;
            commands::reject(ctx, a, pd).map(|()| 0)
        }),
        n if n == nr(SRNIC_IOCTL_DISCONNECT) => with_arg(cmd, arg, |a: &mut SrnicDisconnect| commands::disconnect(ctx, a).map(|()| 0)),
        n if n == nr(SRNIC_IOCTL_QUERY_STATS) => with_arg(cmd, arg, query_stats),
        n if n == nr(SRNIC_IOCTL_QUERY_RES) => with_arg(cmd, arg, resources::query),
        n if n == nr(SRNIC_IOCTL_RMPP_SET_NODE) => with_arg(cmd, arg, rmpp_set_node),
        n if n == nr(SRNIC_IOCTL_RMPP_CREATE_EP) => with_arg(cmd, arg, |a| rmpp_create_ep(ctx, a)),
        n if n == nr(SRNIC_IOCTL_RMPP_DESTROY_EP) => with_handle(cmd, SRNIC_IOCTL_RMPP_DESTROY_EP, arg, |h| rmpp_destroy_ep(ctx, h)),
        n if n == nr(SRNIC_IOCTL_RMPP_SEND) => with_arg(cmd, arg, |a| rmpp_send(ctx, a)),
        n if n == nr(SRNIC_IOCTL_RMPP_POST_RECV) => with_arg(cmd, arg, |a| rmpp_post_recv(ctx, a)),
        n if n == nr(SRNIC_IOCTL_RMPP_QUERY_STATS) => with_arg(cmd, arg, rmpp_query_stats),
        n if n == nr(SRNIC_IOCTL_VMTP_CREATE) => with_arg(cmd, arg, |a| vmtp::create(ctx, a)),
        n if n == nr(SRNIC_IOCTL_VMTP_DESTROY) => with_handle(cmd, SRNIC_IOCTL_VMTP_DESTROY, arg, |h| vmtp::destroy(ctx, h)),
        n if n == nr(SRNIC_IOCTL_VMTP_REQUEST) => with_arg(cmd, arg, |a| vmtp::request(ctx, a)),
        n if n == nr(SRNIC_IOCTL_VMTP_POST_RECV) => with_arg(cmd, arg, |a| vmtp::post_recv(ctx, a)),
        n if n == nr(SRNIC_IOCTL_VMTP_RESPOND) => with_arg(cmd, arg, |a| vmtp::respond(ctx, a)),
        n if n == nr(SRNIC_IOCTL_VMTP_QUERY_STATS) => with_arg(cmd, arg, vmtp::query_stats),
        _ => Err(ENOTTY),
    }
}

fn query_device(ctx: &Context, q: &mut SrnicQueryDevice) -> Result<isize> {
    commands::query_device(ctx, q);
    Ok(0)
}

fn query_stats(s: &mut SrnicStats) -> Result<isize> {
    stats::fill(s);
    Ok(0)
}

fn poll_cq(ctx: &Context, a: &mut SrnicPollCq) -> Result<isize> {
    let want = a.num_entries as usize;
    let total = want.checked_mul(core::mem::size_of::<SrnicWc>()).ok_or(EINVAL)?;
    let mut w = UserSlice::new(a.wc_ptr as usize, total).writer();
    // A completion that faults stays queued for the next poll.
    a.num_entries = commands::poll_cq(ctx, a.cq_handle, want, |wc| w.write(wc))? as u32;
    Ok(0)
}

/// The NUL-terminated interface name in `name` (not empty).
fn ifname(name: &[u8; 16]) -> Result<&kernel::str::CStr> {
    let end = name.iter().position(|&b| b == 0).ok_or(EINVAL)?;
    if end == 0 {
        return Err(EINVAL);
    }
    kernel::str::CStr::from_bytes_with_nul(&name[..=end]).map_err(|_| EINVAL)
}

fn rmpp_set_node(a: &mut SrnicRmppNode) -> Result<isize> {
    if !net_admin() {
        return Err(EPERM);
    }
    if a.nid > SRNIC_RMPP_MAX_NID || a.flags & !SRNIC_RMPP_NODE_DELETE != 0 {
        return Err(EINVAL);
    }
    if a.flags & SRNIC_RMPP_NODE_DELETE != 0 {
        nodes::set(a.nid, None)?;
        return Ok(0);
    }
    // A node is a unicast station: no multicast (or broadcast) and no zero address.
    if a.mac[0] & 1 != 0 || a.mac.iter().all(|&b| b == 0) {
        return Err(EINVAL);
    }
    let (ifindex, _) = crate::sys::netdev::netdev_info(ifname(&a.ifname)?)?;
    nodes::set(a.nid, Some(Node { mac: a.mac, ifindex }))?;
    Ok(0)
}

fn rmpp_create_ep(ctx: &Context, a: &mut SrnicRmppCreateEp) -> Result<isize> {
    let params = EpParams::from_abi(a)?;
    let name = ifname(&a.ifname)?;
    // The PD and CQs count as used from here (the endpoint is made outside
    // the lock): DEALLOC_PD and DESTROY_CQ answer EBUSY meanwhile.
    let (pd, scq, rcq, handle, _using) = {
        let o = ctx.objs.lock();
        let (pd, scq, rcq) = (
            o.pds.get(a.pd_handle)?.clone(),
            o.cqs.get(a.send_cq)?.clone(),
            o.cqs.get(a.recv_cq)?.clone(),
        );
        let using = (PdUse::new(&pd), CqUse::new(&scq), CqUse::new(&rcq));
        (pd, scq, rcq, o.eps.next_handle()?, using)
    };
    let ep = Ep::create(handle, params, name, &pd, ctx.mrs.clone(), scq, rcq, ctx.events.clone(), &ctx.budget)?;
    let inserted = {
        let mut o = ctx.objs.lock();
        // Another thread may have taken the handle meanwhile.
        if o.eps.next_handle()? == handle {
            o.eps.insert(ep.clone())
        } else {
            Err(EAGAIN)
        }
    };
    if let Err(e) = inserted {
        ep.close();
        return Err(e);
    }
    params.to_abi(a);
    a.mtu = ep.packet_size();
    a.ep_handle = handle;
    Ok(0)
}

fn rmpp_destroy_ep(ctx: &Context, h: u32) -> Result {
    let ep = ctx.objs.lock().eps.remove(h)?;
    ep.close();
    Ok(())
}

fn rmpp_send(ctx: &Context, a: &mut SrnicRmppSend) -> Result<isize> {
    let ep = ctx.objs.lock().eps.get(a.ep_handle)?.clone();
    ep.send(a)?;
    Ok(0)
}

fn rmpp_post_recv(ctx: &Context, a: &mut SrnicRmppPostRecv) -> Result<isize> {
    let ep = ctx.objs.lock().eps.get(a.ep_handle)?.clone();
    ep.post_recv(a)?;
    Ok(0)
}

fn rmpp_query_stats(s: &mut SrnicRmppStats) -> Result<isize> {
    stats::fill_rmpp(s);
    Ok(0)
}
