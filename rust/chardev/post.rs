// SPDX-License-Identifier: GPL-2.0
//! `write()`: posting batches of work requests.
//!
//! The buffer is a sequence of records, each a `struct srnic_post_wr` followed by
//! `num_sge` `struct srnic_sge`. Records are posted in order; the first one that
//! cannot be posted ends the batch: `write()` returns the bytes of the records
//! before it, or that record's error if it is the first. Nothing is allocated.

use crate::{
    uapi::*,
    verbs::commands,
    verbs::context::Context,
    verbs::limits,
    verbs::qp::Qp,
};
use kernel::{
    prelude::*,
    sync::Arc,
    uaccess::{UserSlice, UserSliceReader},
};

const WR_LEN: usize = core::mem::size_of::<SrnicPostWr>();
const SGE_LEN: usize = core::mem::size_of::<SrnicSge>();

/// Posts the records in `buf`; returns the bytes consumed.
pub(crate) fn write(ctx: &Context, buf: &mut UserSliceReader) -> Result<usize> {
    let mut done = 0usize;
    let mut cached: Option<(u32, Arc<Qp>)> = None;
    while !buf.is_empty() {
        match post_one(ctx, buf, &mut cached) {
            Ok(n) => done += n,
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(done)
}

fn post_one(ctx: &Context, buf: &mut UserSliceReader, cached: &mut Option<(u32, Arc<Qp>)>) -> Result<usize> {
    if buf.len() < WR_LEN {
        return Err(EINVAL);
    }
    let wr: SrnicPostWr = buf.read()?;
    let nsge = usize::from(wr.num_sge);
    if nsge > limits::MAX_SGE || buf.len() < nsge * SGE_LEN {
        return Err(EINVAL);
    }
    let mut sges = [SrnicSge::default(); limits::MAX_SGE];
    for s in sges.iter_mut().take(nsge) {
        *s = buf.read()?;
    }
    let sges = &sges[..nsge];
    let qp = match cached {
        Some((h, qp)) if *h == wr.qp_handle => qp.clone(),
        _ => {
            let qp = ctx.objs.lock().qps.get(wr.qp_handle)?.clone();
            *cached = Some((wr.qp_handle, qp.clone()));
            qp
        }
    };
    commands::post(&qp, &wr, sges, |s, dst| {
        UserSlice::new(s.addr as usize, dst.len()).reader().read_slice(dst)
    })?;
    Ok(WR_LEN + nsge * SGE_LEN)
}
