// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Protection domains (ibverbs' `ibv_pd`): the scope memory regions and queue
//! pairs share; a key is only valid on a QP of the same PD.

use crate::context::{Context, ContextInner};
use crate::error::Result;
use srnic_uapi as abi;
use std::sync::Arc;

/// A protection domain. Cloning shares it; memory regions and queue pairs
/// created in it hold it alive, so the kernel object is deallocated only after
/// the last of them is gone (and never fails with EBUSY from here).
#[derive(Clone, Debug)]
pub struct ProtectionDomain {
    pub(crate) inner: Arc<PdInner>,
}

#[derive(Debug)]
pub(crate) struct PdInner {
    pub(crate) ctx: Arc<ContextInner>,
    pub(crate) handle: u32,
}

impl ProtectionDomain {
    /// Allocates a protection domain on `ctx` (`SRNIC_IOCTL_ALLOC_PD`).
    pub fn new(ctx: &Context) -> Result<Self> {
        let mut a = abi::SrnicAllocPd {
            size: std::mem::size_of::<abi::SrnicAllocPd>() as u32,
            ..Default::default()
        };
        // SAFETY: the structure the command takes; no pointers.
        unsafe { ctx.inner.cmd(abi::SRNIC_IOCTL_ALLOC_PD, &mut a) }?;
        Ok(Self {
            inner: Arc::new(PdInner {
                ctx: ctx.inner.clone(),
                handle: a.pd_handle,
            }),
        })
    }

    /// The kernel handle.
    pub fn handle(&self) -> u32 {
        self.inner.handle
    }

    /// The context this PD belongs to.
    pub fn context(&self) -> Context {
        Context {
            inner: self.inner.ctx.clone(),
        }
    }

    /// Whether anything besides this handle keeps the PD alive (clones, memory
    /// regions, queue pairs). The C ABI uses it to answer EBUSY like ibverbs.
    pub fn in_use(&self) -> bool {
        Arc::strong_count(&self.inner) > 1
    }
}

impl Context {
    /// Allocates a protection domain (same as [`ProtectionDomain::new`]).
    pub fn alloc_pd(&self) -> Result<ProtectionDomain> {
        ProtectionDomain::new(self)
    }
}

impl Drop for PdInner {
    fn drop(&mut self) {
        self.ctx.destroy(abi::SRNIC_IOCTL_DEALLOC_PD, self.handle);
    }
}
