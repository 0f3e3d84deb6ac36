// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! The resource views (`SRNIC_IOCTL_QUERY_RES`): every object of one kind the
//! module holds, device-wide, with its owner (`srnic res`, as `rdma res show`).
//! Root (CAP_SYS_ADMIN) sees every object, other users those of the contexts
//! their effective uid opened.

use crate::{context::Context, error::Result};
use srnic_uapi as abi;

/// A record of `SRNIC_IOCTL_QUERY_RES`: its kind and the ABI structure.
pub trait Resource: Copy + Default + 'static {
    /// The `SRNIC_RES_*` kind.
    const KIND: u32;
    /// The owner part of the record.
    fn owner(&self) -> &abi::SrnicResOwner;
}

macro_rules! resources {
    ($($t:ident => $k:ident),* $(,)?) => {$(
        impl Resource for abi::$t {
            const KIND: u32 = abi::$k;
            fn owner(&self) -> &abi::SrnicResOwner {
                &self.owner
            }
        }
    )*};
}

resources!(
    SrnicResQp => SRNIC_RES_QP,
    SrnicResCq => SRNIC_RES_CQ,
    SrnicResMr => SRNIC_RES_MR,
    SrnicResListen => SRNIC_RES_LISTEN,
    SrnicResRmpp => SRNIC_RES_RMPP,
    SrnicResVmtp => SRNIC_RES_VMTP,
);

impl Context {
    /// Every object of kind `T` the caller may see, in the module's order
    /// (context by context). The module answers at most
    /// `SRNIC_RES_MAX_ENTRIES` records a call; this asks until it has all
    /// (objects made or destroyed meanwhile may be missed or seen twice).
    pub fn resources<T: Resource>(&self) -> Result<Vec<T>> {
        let mut out: Vec<T> = Vec::new();
        loop {
            let room = abi::SRNIC_RES_MAX_ENTRIES as usize;
            let start = out.len();
            out.resize(start + room, T::default());
            let mut q = abi::SrnicQueryRes {
                size: std::mem::size_of::<abi::SrnicQueryRes>() as u32,
                kind: T::KIND,
                entry_size: std::mem::size_of::<T>() as u32,
                start: start as u32,
                max_entries: room as u32,
                entries: out[start..].as_mut_ptr() as u64,
                ..Default::default()
            };
            // SAFETY: `q` is the structure the command encodes; `entries`
            // points at room for `max_entries` records of `entry_size` bytes,
            // alive until the call returns.
            unsafe { self.inner.cmd(abi::SRNIC_IOCTL_QUERY_RES, &mut q) }?;
            out.truncate(start + q.num_entries as usize);
            if q.num_entries == 0 || out.len() >= q.total as usize {
                return Ok(out);
            }
        }
    }
}
