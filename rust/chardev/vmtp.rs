// SPDX-License-Identifier: GPL-2.0
//! The VMTP commands of `/dev/srnic` (`SRNIC_IOCTL_VMTP_*`): entities are
//! objects of the file, like RMPP endpoints (see `vmtp/entity.rs`).

use crate::{
    uapi::*,
    verbs::context::Context,
    verbs::cq::CqUse,
    verbs::pd::PdUse,
    verbs::stats,
    vmtp::entity::{Entity, Params},
};
use kernel::prelude::*;

pub(super) fn create(ctx: &Context, a: &mut SrnicVmtpCreate) -> Result<isize> {
    let params = Params::from_abi(a)?;
    // The PD and CQ count as used from here (the entity is made outside the
    // lock): DEALLOC_PD and DESTROY_CQ answer EBUSY meanwhile.
    let (pd, cq, handle, _using) = {
        let o = ctx.objs.lock();
        let (pd, cq) = (o.pds.get(a.pd_handle)?.clone(), o.cqs.get(a.cq_handle)?.clone());
        let using = (PdUse::new(&pd), CqUse::new(&cq));
        (pd, cq, o.vmtps.next_handle()?, using)
    };
    let e = Entity::create(handle, params, &pd, ctx.mrs.clone(), cq, &ctx.budget)?;
    let inserted = {
        let mut o = ctx.objs.lock();
        // Another thread may have taken the handle meanwhile.
        if o.vmtps.next_handle()? == handle {
            o.vmtps.insert(e.clone())
        } else {
            Err(EAGAIN)
        }
    };
    if let Err(err) = inserted {
        e.close();
        return Err(err);
    }
    e.params().to_abi(a);
    a.mtu = e.mtu();
    a.entity = e.id.0;
    a.handle = handle;
    Ok(0)
}

pub(super) fn destroy(ctx: &Context, h: u32) -> Result {
    let e = ctx.objs.lock().vmtps.remove(h)?;
    e.close();
    Ok(())
}

pub(super) fn request(ctx: &Context, a: &mut SrnicVmtpRequest) -> Result<isize> {
    let e = ctx.objs.lock().vmtps.get(a.handle)?.clone();
    e.request(a)?;
    Ok(0)
}

pub(super) fn post_recv(ctx: &Context, a: &mut SrnicVmtpPostRecv) -> Result<isize> {
    let e = ctx.objs.lock().vmtps.get(a.handle)?.clone();
    e.post_recv(a)?;
    Ok(0)
}

pub(super) fn respond(ctx: &Context, a: &mut SrnicVmtpRespond) -> Result<isize> {
    let e = ctx.objs.lock().vmtps.get(a.handle)?.clone();
    e.respond(a)?;
    Ok(0)
}

pub(super) fn query_stats(s: &mut SrnicVmtpStats) -> Result<isize> {
    stats::fill_vmtp(s);
    Ok(0)
}
