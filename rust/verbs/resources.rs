// SPDX-License-Identifier: GPL-2.0
//! The resource views: `SRNIC_IOCTL_QUERY_RES` (`srnic res`) lists the
//! objects of one kind srnic holds, device-wide, as `rdma res show` lists an
//! RDMA device's: each with its owner (pid, uid, handle, context) and what the
//! kind has to say (a QP's state, addresses, MPA settings, queue use and
//! counters; a region's pinned pages ...).
//!
//! A caller with CAP_SYS_ADMIN sees every object; any other caller those of
//! the contexts its effective uid opened. Each call is a snapshot of the
//! registry (`verbs/registry.rs`); the records are gathered under each
//! context's object lock into a kernel buffer (at most
//! [`SRNIC_RES_MAX_ENTRIES`] records, reserved before any lock is taken) and
//! copied out after every lock is released, so a fault in the user buffer
//! never happens under a lock.

use crate::{
    sys::{gfp::ACCOUNTED, task},
    uapi::*,
    verbs::registry::{self, Entry},
};
use kernel::{alloc::KVec, prelude::*, sync::Arc, types::AsBytes, uaccess::UserSlice};

/// An owner record: the creating process `pid`, the context's uid and id,
/// and the object's `handle`.
fn owner(e: &Entry, pid: i32, handle: u32) -> SrnicResOwner {
    SrnicResOwner { pid, uid: e.owner.uid, handle, context: e.id }
}

/// The records of one call: the visible objects after the first `start`, at
/// most `max` of them, and how many are visible in all.
struct Gather<T> {
    out: KVec<T>,
    start: usize,
    max: usize,
    total: usize,
}

impl<T> Gather<T> {
    /// One more visible object, its record made by `make` if this call
    /// returns it. Allocates nothing: `out` has room for `max` records.
    fn offer(&mut self, make: impl FnOnce() -> T) {
        let i = self.total;
        self.total += 1;
        if i >= self.start && self.out.len() < self.max {
            // Within the capacity reserved up front: cannot fail.
            let _ = self.out.push(make(), ACCOUNTED);
        }
    }
}

/// Runs one query for records of type `T`: `each` offers every object of the
/// kind in one context.
fn run<T: AsBytes + Default>(a: &mut SrnicQueryRes, each: impl Fn(&Entry, &mut Gather<T>)) -> Result<isize> {
    if a.entry_size as usize != core::mem::size_of::<T>() {
        return Err(EINVAL);
    }
    let max = (a.max_entries as usize).min(SRNIC_RES_MAX_ENTRIES as usize);
    let entries: KVec<Arc<Entry>> = registry::snapshot(task::sys_admin(), task::current_euid())?;
    let mut g = Gather { out: KVec::with_capacity(max, ACCOUNTED)?, start: a.start as usize, max, total: 0 };
    for e in entries.iter() {
        each(e, &mut g);
    }
    drop(entries);
    let len = g.out.len() * core::mem::size_of::<T>();
    let mut w = UserSlice::new(a.entries as usize, len).writer();
    for r in g.out.iter() {
        w.write(r)?;
    }
    a.num_entries = g.out.len() as u32;
    a.total = u32::try_from(g.total).unwrap_or(u32::MAX);
    Ok(0)
}

/// `SRNIC_IOCTL_QUERY_RES`.
pub(crate) fn query(a: &mut SrnicQueryRes) -> Result<isize> {
    match a.kind {
        SRNIC_RES_QP => run(a, |e, g: &mut Gather<SrnicResQp>| {
            for (h, qp) in e.objs.lock().qps.iter() {
                g.offer(|| {
                    let mut r = SrnicResQp { owner: owner(e, qp.owner, h), ..Default::default() };
                    qp.res(&mut r);
                    r
                });
            }
        }),
        SRNIC_RES_CQ => run(a, |e, g: &mut Gather<SrnicResCq>| {
            for (h, cq) in e.objs.lock().cqs.iter() {
                g.offer(|| {
                    let mut r = SrnicResCq { owner: owner(e, e.owner.pid, h), ..Default::default() };
                    cq.res(&mut r);
                    r
                });
            }
        }),
        SRNIC_RES_MR => run(a, |e, g: &mut Gather<SrnicResMr>| {
            e.mrs.for_each(|h, mr| {
                g.offer(|| SrnicResMr {
                    owner: owner(e, e.owner.pid, h),
                    lkey: mr.stag,
                    access: mr.access,
                    addr: mr.va,
                    length: mr.len,
                    pinned_pages: mr.pinned_pages(),
                });
            });
        }),
        SRNIC_RES_LISTEN => run(a, |e, g: &mut Gather<SrnicResListen>| {
            for (h, l) in e.objs.lock().listeners.iter() {
                g.offer(|| {
                    let mut r = SrnicResListen { owner: owner(e, e.owner.pid, h), ..Default::default() };
                    l.res(&mut r);
                    r
                });
            }
        }),
        SRNIC_RES_RMPP => run(a, |e, g: &mut Gather<SrnicResRmpp>| {
            for (h, ep) in e.objs.lock().eps.iter() {
                g.offer(|| {
                    let mut r = SrnicResRmpp { owner: owner(e, e.owner.pid, h), ..Default::default() };
                    ep.res(&mut r);
                    r
                });
            }
        }),
        SRNIC_RES_VMTP => run(a, |e, g: &mut Gather<SrnicResVmtp>| {
            for (h, v) in e.objs.lock().vmtps.iter() {
                g.offer(|| {
                    let mut r = SrnicResVmtp { owner: owner(e, e.owner.pid, h), ..Default::default() };
                    v.res(&mut r);
                    r
                });
            }
        }),
        _ => Err(EINVAL),
    }
}
