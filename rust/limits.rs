// SPDX-License-Identifier: GPL-2.0
//! The device's ABI version, capabilities and limits, as `SRNIC_IOCTL_QUERY_DEVICE`
//! reports them. The limits bound what one open file (one context) may create.

use crate::uapi::{SrnicQueryDevice, SRNIC_ABI_VERSION};
use kernel::prelude::*;

/// The capabilities this build implements (a bit is set only when it works).
pub(crate) const CAPABILITIES: u64 = 0;

/// Fills the output fields of a query with this device's values.
pub(crate) fn fill(q: &mut SrnicQueryDevice) {
    q.abi_version = SRNIC_ABI_VERSION;
    q.capabilities = CAPABILITIES;
    q.max_pd = 1024;
    q.max_mr = 4096;
    q.max_mr_size = 1 << 32;
    q.max_cq = 1024;
    q.max_cqe = 65536;
    q.max_qp = 1024;
    q.max_qp_wr = 4096;
    q.max_sge = 16;
    q.max_inline_data = 256;
    q.max_ord = 32;
    q.max_ird = 32;
    q.max_rmpp_endpoints = 64;
    q.page_size = kernel::page::PAGE_SIZE as u32;
}

/// Logs the values once at load time, in the `key=value` form the `query_device`
/// VM test compares with what `srnic info` prints.
pub(crate) fn announce() {
    let mut q = SrnicQueryDevice::default();
    fill(&mut q);
    pr_info!(
        "/dev/srnic ready: abi_version={} capabilities={:#x} max_pd={} max_mr={} max_mr_size={} max_cq={} max_cqe={} max_qp={} max_qp_wr={} max_sge={} max_inline_data={} max_ord={} max_ird={} max_rmpp_endpoints={} page_size={}\n",
        q.abi_version,
        q.capabilities,
        q.max_pd,
        q.max_mr,
        q.max_mr_size,
        q.max_cq,
        q.max_cqe,
        q.max_qp,
        q.max_qp_wr,
        q.max_sge,
        q.max_inline_data,
        q.max_ord,
        q.max_ird,
        q.max_rmpp_endpoints,
        q.page_size
    );
}
