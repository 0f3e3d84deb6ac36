// SPDX-License-Identifier: GPL-2.0
//! The device's ABI version, capabilities and limits, as `SRNIC_IOCTL_QUERY_DEVICE`
//! reports them. The limits bound what one open file (one context) may create.

use crate::uapi::{
    SrnicQueryDevice, SRNIC_ABI_VERSION, SRNIC_CAP_IWARP, SRNIC_CAP_MPA_CRC, SRNIC_CAP_MPA_MARKERS,
    SRNIC_CAP_RMPP, SRNIC_CAP_VMTP,
};
use kernel::prelude::*;

/// The capabilities this build implements (a bit is set only when it works).
pub(crate) const CAPABILITIES: u64 =
    SRNIC_CAP_IWARP | SRNIC_CAP_MPA_CRC | SRNIC_CAP_MPA_MARKERS | SRNIC_CAP_RMPP | SRNIC_CAP_VMTP;

/// Protection domains per context.
pub(crate) const MAX_PD: usize = 1024;
/// Memory regions per context.
pub(crate) const MAX_MR: usize = 4096;
/// Bytes in one memory region.
pub(crate) const MAX_MR_SIZE: u64 = 1 << 32;
/// Completion queues per context.
pub(crate) const MAX_CQ: usize = 1024;
/// Entries in one completion queue.
pub(crate) const MAX_CQE: usize = 65536;
/// Queue pairs per context.
pub(crate) const MAX_QP: usize = 1024;
/// Work requests per send or receive queue.
pub(crate) const MAX_QP_WR: usize = 4096;
/// FPDUs one run of a QP's transmit work sends before it queues itself again
/// (`verbs/qp/tx.rs`), so that other work on srnic's workqueue, and other
/// tasks on a kernel without preemption, get their turn.
pub(crate) const TX_FPDUS_PER_RUN: usize = 256;
/// How long a responder without peer-to-peer mode holds its first FPDU when
/// the initiator's first FPDU has not come (`verbs/qp.rs`, `Hold`).
pub(crate) const RESPONDER_HOLD_MS: u32 = 250;
/// Scatter/gather elements per work request.
pub(crate) const MAX_SGE: usize = 16;
/// Inline bytes per send work request.
pub(crate) const MAX_INLINE: usize = 256;
/// Outbound RDMA Reads in flight per QP.
pub(crate) const MAX_ORD: usize = 32;
/// Inbound RDMA Reads in flight per QP.
pub(crate) const MAX_IRD: usize = 32;
/// RMPP endpoints per context.
pub(crate) const MAX_RMPP_ENDPOINTS: usize = 64;
/// RMPP: messages in flight per endpoint (default, maximum).
pub(crate) const RMPP_DEFAULT_SEND: u32 = 64;
pub(crate) const RMPP_MAX_SEND: usize = 1024;
/// RMPP: posted receives per endpoint (default, maximum).
pub(crate) const RMPP_DEFAULT_RECV: u32 = 128;
pub(crate) const RMPP_MAX_RECV: usize = 1024;
/// RMPP: retransmission timeout in microseconds (default, minimum: about a jiffy).
pub(crate) const RMPP_DEFAULT_RTO_US: u32 = 100_000;
pub(crate) const RMPP_MIN_RTO_US: u32 = 1_000;
/// RMPP: the smallest retransmission timeout the round-trip estimate may set,
/// in microseconds, by default (never more than the endpoint's `rto_us`): a
/// jiffy or two, since the endpoint's timer counts in jiffies.
pub(crate) const RMPP_DEFAULT_MIN_RTO_US: u32 = 5_000;
/// RMPP: timeouts per message before it fails (default, maximum).
pub(crate) const RMPP_DEFAULT_RETRIES: u32 = 1000;
pub(crate) const RMPP_MAX_RETRIES: u32 = 1_000_000;
/// RMPP: receiver state without activity is freed after this (milliseconds).
pub(crate) const RMPP_DEFAULT_RECLAIM_MS: u32 = 60_000;
/// RMPP: a closed endpoint answers its peers for at most this many of its
/// retransmission timeouts (final replies not yet acknowledged, NULLs not yet
/// answered), and never longer than [`RMPP_LINGER_MAX_MS`], so that `rmmod`
/// and the NID's next endpoint wait a bounded time.
pub(crate) const RMPP_LINGER_RTOS: u64 = 16;
pub(crate) const RMPP_LINGER_MAX_MS: u64 = 5_000;
/// RMPP: the grant pool, paper's MAX_RCV_BUF (default, maximum).
pub(crate) const RMPP_DEFAULT_RCV_BUF: u32 = 1024;
pub(crate) const RMPP_MAX_RCV_BUF: u32 = 65536;
/// RMPP: pool share for first packets, paper's NODES (default).
pub(crate) const RMPP_DEFAULT_NODES: u32 = 64;
/// RMPP: largest grant, paper's MAX_DATA_PKTS (default, maximum).
pub(crate) const RMPP_DEFAULT_DATA_PKTS: u32 = 16;
pub(crate) const RMPP_MAX_DATA_PKTS: u32 = 256;
/// RMPP: most received frames queued for one endpoint's work.
pub(crate) const RMPP_MAX_RX_QUEUE: usize = 4096;
/// VMTP entities per context.
pub(crate) const MAX_VMTP_ENTITIES: usize = 64;
/// VMTP entities per network namespace (all contexts).
pub(crate) const VMTP_MAX_PER_NET: usize = 4096;
/// VMTP server: remote clients it keeps records of at once (default, maximum).
pub(crate) const VMTP_DEFAULT_CLIENTS: u32 = 64;
pub(crate) const VMTP_MAX_CLIENTS: u32 = 1024;
/// VMTP server: posted Request buffers (default, maximum).
pub(crate) const VMTP_DEFAULT_RECV: u32 = 16;
pub(crate) const VMTP_MAX_RECV: u32 = 1024;
/// VMTP: wait for an answer before retransmitting, in milliseconds (default:
/// the RFC's TC1 for a LAN, RFC 1045 section 4.9; minimum; maximum).
pub(crate) const VMTP_DEFAULT_TIMEOUT_MS: u32 = 210;
pub(crate) const VMTP_MIN_TIMEOUT_MS: u32 = 10;
pub(crate) const VMTP_MAX_TIMEOUT_MS: u32 = 60_000;
/// VMTP: retransmissions before a transaction fails (default: the RFC's 5;
/// maximum).
pub(crate) const VMTP_DEFAULT_RETRIES: u32 = 5;
pub(crate) const VMTP_MAX_RETRIES: u32 = 100;
/// VMTP: the longest gap between the packets of a group, microseconds.
pub(crate) const VMTP_MAX_GAP_US: u32 = 100_000;
/// VMTP: how long a receiver waits for the rest of a group before it asks
/// for the missing blocks (TC3 and TS1; the RFC suggests ten packet times).
pub(crate) const VMTP_GROUP_TIMEOUT_MS: u32 = 10;
/// VMTP: a server keeps a finished transaction's record for at least this
/// long (TS4) to recognise duplicates, and longer than a client's retry span.
pub(crate) const VMTP_MIN_LINGER_MS: u32 = 2_000;
/// Listeners per context.
pub(crate) const MAX_LISTENERS: usize = 64;
/// Connection requests waiting for accept or reject, per context.
pub(crate) const MAX_CONN_REQS: usize = 256;

// Every handle table fits its handles' index bits.
const _: () = {
    use crate::verbs::table::MAX_OBJECTS;
    assert!(MAX_PD <= MAX_OBJECTS && MAX_CQ <= MAX_OBJECTS && MAX_QP <= MAX_OBJECTS);
    assert!(MAX_LISTENERS <= MAX_OBJECTS && MAX_CONN_REQS <= MAX_OBJECTS);
    assert!(MAX_RMPP_ENDPOINTS <= MAX_OBJECTS && MAX_VMTP_ENTITIES <= MAX_OBJECTS);
};
/// Largest wire size of the FPDUs srnic sends (header, payload, pad and CRC);
/// the TCP MSS bounds them further (one FPDU per segment, see `Qp::establish`).
pub(crate) const FPDU_BUDGET: usize = 16384;
/// The smallest MSS believed; a socket reporting less (not yet connected, or a
/// broken path MTU) gets `FPDU_BUDGET` instead.
pub(crate) const MIN_MSS: usize = 64;
/// The ULPDU size used when the framer finds none fits the budget (cannot
/// happen for budgets of `MIN_MSS` and more; a safe size if it did).
pub(crate) const FALLBACK_ULPDU: u16 = 1024;

/// Fills the output fields of a query with this device's values. The memory
/// cap is the module parameter's value now; a file's own cap (and charge) is
/// filled in by the caller.
pub(crate) fn fill(q: &mut SrnicQueryDevice) {
    q.abi_version = SRNIC_ABI_VERSION;
    q.capabilities = CAPABILITIES;
    q.max_pd = MAX_PD as u32;
    q.max_mr = MAX_MR as u32;
    q.max_mr_size = MAX_MR_SIZE;
    q.max_cq = MAX_CQ as u32;
    q.max_cqe = MAX_CQE as u32;
    q.max_qp = MAX_QP as u32;
    q.max_qp_wr = MAX_QP_WR as u32;
    q.max_sge = MAX_SGE as u32;
    q.max_inline_data = MAX_INLINE as u32;
    q.max_ord = MAX_ORD as u32;
    q.max_ird = MAX_IRD as u32;
    q.max_rmpp_endpoints = MAX_RMPP_ENDPOINTS as u32;
    q.page_size = kernel::page::PAGE_SIZE as u32;
    q.max_kernel_mem = crate::sys::param::file_mem_bytes() as u64;
}

/// Logs the values once at load time, in the `key=value` form the `query_device`
/// VM test compares with what `srnic info` prints.
pub(crate) fn announce() {
    let mut q = SrnicQueryDevice::default();
    fill(&mut q);
    pr_info!(
        "/dev/srnic ready: abi_version={} capabilities={:#x} max_pd={} max_mr={} max_mr_size={} max_cq={} max_cqe={} max_qp={} max_qp_wr={} max_sge={} max_inline_data={} max_ord={} max_ird={} max_rmpp_endpoints={} page_size={} max_kernel_mem={}\n",
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
        q.page_size,
        q.max_kernel_mem
    );
}
