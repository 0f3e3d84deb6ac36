// SPDX-License-Identifier: GPL-2.0
//! The ABI of `/dev/srnic`, field for field as in `uapi/srnic.h`.
//!
//! Every structure is `#[repr(C)]` with explicit padding; its size and every field
//! offset are asserted at compile time here and checked against the C header by
//! the host test `uapi/tests/c_header.rs`.

/// Version of this ABI; incremented on any incompatible change.
pub const SRNIC_ABI_VERSION: u32 = 1;

/// The ioctl magic number of srnic.
pub const SRNIC_IOCTL_MAGIC: u32 = 0xB9;

/// Capability: iWARP verbs (PD, MR, CQ, QP, connection manager).
pub const SRNIC_CAP_IWARP: u64 = 1 << 0;
/// Capability: MPA CRC32c.
pub const SRNIC_CAP_MPA_CRC: u64 = 1 << 1;
/// Capability: MPA markers.
pub const SRNIC_CAP_MPA_MARKERS: u64 = 1 << 2;
/// Capability: Sandia RMPP endpoints.
pub const SRNIC_CAP_RMPP: u64 = 1 << 3;
/// Every capability bit this ABI version defines.
pub const SRNIC_CAP_ALL: u64 = (1 << 4) - 1;

/// Encodes an ioctl command number the way `_IOC` in `<asm-generic/ioctl.h>` does.
pub const fn ioc(dir: u32, ty: u32, nr: u32, size: usize) -> u32 {
    // The size field is 14 bits wide; every srnic argument structure is far smaller.
    (dir << 30) | ((size as u32 & 0x3fff) << 16) | (ty << 8) | nr
}

/// `_IOC_READ | _IOC_WRITE`.
pub const IOC_READ_WRITE: u32 = 3;

/// Encodes `_IOWR(SRNIC_IOCTL_MAGIC, nr, T)`.
pub const fn iowr<T>(nr: u32) -> u32 {
    ioc(
        IOC_READ_WRITE,
        SRNIC_IOCTL_MAGIC,
        nr,
        core::mem::size_of::<T>(),
    )
}

/// Argument of [`SRNIC_IOCTL_QUERY_DEVICE`]: the ABI version, capabilities and
/// limits of the device. In: `size` (and zeroed `reserved`); out: the rest.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicQueryDevice {
    /// Set by the caller to `size_of::<SrnicQueryDevice>()`.
    pub size: u32,
    /// [`SRNIC_ABI_VERSION`] of the running module.
    pub abi_version: u32,
    /// `SRNIC_CAP_*` bits the running module implements.
    pub capabilities: u64,
    /// Maximum protection domains per open file.
    pub max_pd: u32,
    /// Maximum memory regions per open file.
    pub max_mr: u32,
    /// Maximum length of one memory region in bytes.
    pub max_mr_size: u64,
    /// Maximum completion queues per open file.
    pub max_cq: u32,
    /// Maximum entries of one completion queue.
    pub max_cqe: u32,
    /// Maximum queue pairs per open file.
    pub max_qp: u32,
    /// Maximum outstanding work requests per send or receive queue.
    pub max_qp_wr: u32,
    /// Maximum scatter/gather elements per work request.
    pub max_sge: u32,
    /// Maximum inline data per send work request in bytes.
    pub max_inline_data: u32,
    /// Maximum outbound RDMA READs in flight per queue pair.
    pub max_ord: u32,
    /// Maximum inbound RDMA READs in flight per queue pair.
    pub max_ird: u32,
    /// Maximum RMPP endpoints per open file.
    pub max_rmpp_endpoints: u32,
    /// Page size of the kernel in bytes.
    pub page_size: u32,
    /// Must be zero.
    pub reserved: [u64; 4],
}

/// Queries the device: `_IOWR(SRNIC_IOCTL_MAGIC, 0x00, struct srnic_query_device)`.
pub const SRNIC_IOCTL_QUERY_DEVICE: u32 = iowr::<SrnicQueryDevice>(0x00);

/// `struct srnic_handle_arg`: Destroy commands take only a handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicHandleArg {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The object handle.
    pub handle: u32,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_alloc_pd`: SRNIC_IOCTL_ALLOC_PD: out: pd_handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicAllocPd {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// A protection domain handle.
    pub pd_handle: u32,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_reg_mr`: SRNIC_IOCTL_REG_MR: registers [addr, addr + length) of the caller's memory. The pages are pinned and charged to RLIMIT_MEMLOCK (ENOMEM beyond it). A peer addresses the region with rkey (the STag) and tagged offsets equal to the virtual addresses. In: pd_handle, addr, length, access. Out: the rest.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicRegMr {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// A protection domain handle.
    pub pd_handle: u32,
    /// The address.
    pub addr: u64,
    /// Length in bytes.
    pub length: u64,
    /// `SRNIC_ACCESS_*` bits.
    pub access: u32,
    /// The memory region handle.
    pub mr_handle: u32,
    /// The local key.
    pub lkey: u32,
    /// The remote key (STag).
    pub rkey: u32,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// `struct srnic_create_cq`: SRNIC_IOCTL_CREATE_CQ: in: cqe (at least this many entries); out: cqe, cq_handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicCreateCq {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// Number of completion queue entries.
    pub cqe: u32,
    /// The completion queue handle.
    pub cq_handle: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// `struct srnic_req_notify_cq`: SRNIC_IOCTL_REQ_NOTIFY_CQ: arms the CQ once; when a matching completion is added, one SRNIC_EVENT_CQ record is queued for read() and the file polls readable. Returns 1 if the CQ already holds completions (poll it before sleeping), else 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicReqNotifyCq {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The completion queue handle.
    pub cq_handle: u32,
    /// Flags (see the header).
    pub flags: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_wc`: A work completion. `term` carries the TERMINATE that ended the QP (sent or received), as layer << 12 | type << 8 | code, with bit 31 set when srnic received it, or 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicWc {
    /// The work request identifier.
    pub wr_id: u64,
    /// Status code.
    pub status: u32,
    /// Opcode.
    pub opcode: u32,
    /// Bytes transferred.
    pub byte_len: u32,
    /// The QP, or the RMPP endpoint.
    pub qp_handle: u32,
    /// Flags (see the header).
    pub flags: u32,
    /// The STag a Send with Invalidate invalidated.
    pub invalidated_stag: u32,
    /// TERMINATE word (layer << 12 | type << 8 | code, bit 31: received).
    pub term: u32,
    /// RMPP receive: the sender.
    pub src_nid: u32,
    /// RMPP: the message's match tag.
    pub tag: u64,
    /// RMPP receive: the whole message's length.
    pub msg_len: u64,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_poll_cq`: SRNIC_IOCTL_POLL_CQ: moves up to num_entries completions into the array at wc_ptr. In: cq_handle, num_entries, wc_ptr. Out: num_entries (how many).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicPollCq {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The completion queue handle.
    pub cq_handle: u32,
    /// Number of entries.
    pub num_entries: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// User pointer to an array of `SrnicWc`.
    pub wc_ptr: u64,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_create_qp`: SRNIC_IOCTL_CREATE_QP: a reliable connected queue pair. The capacities are in/out: the kernel may round them up. sq_sig_all: every send is signalled.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicCreateQp {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// A protection domain handle.
    pub pd_handle: u32,
    /// CQ handle for send completions.
    pub send_cq: u32,
    /// CQ handle for receive completions.
    pub recv_cq: u32,
    /// Send queue depth.
    pub max_send_wr: u32,
    /// Receive queue depth.
    pub max_recv_wr: u32,
    /// SGEs per send work request.
    pub max_send_sge: u32,
    /// SGEs per receive work request.
    pub max_recv_sge: u32,
    /// Inline bytes per send work request.
    pub max_inline_data: u32,
    /// Non-zero: every send is signalled.
    pub sq_sig_all: u32,
    /// The queue pair handle.
    pub qp_handle: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// `struct srnic_sockaddr`: An IPv4 or IPv6 socket address; the port in host byte order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicSockaddr {
    /// AF_INET or AF_INET6.
    pub family: u16,
    /// Port in host byte order.
    pub port: u16,
    /// IPv6 scope identifier.
    pub scope_id: u32,
    /// IPv4: the first 4 bytes, network byte order.
    pub addr: [u8; 16],
}

/// `struct srnic_query_qp`: SRNIC_IOCTL_QUERY_QP: in: qp_handle; out: the rest.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicQueryQp {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The queue pair handle.
    pub qp_handle: u32,
    /// `SRNIC_QPS_*`.
    pub state: u32,
    /// SRNIC_MPA_* as negotiated.
    pub mpa_flags: u32,
    /// Inbound RDMA READ depth.
    pub ird: u32,
    /// Outbound RDMA READ depth.
    pub ord: u32,
    /// As in `SrnicWc`.
    pub term: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Local address.
    pub local: SrnicSockaddr,
    /// Remote address.
    pub remote: SrnicSockaddr,
    /// Payload bytes this QP sent (progress, not a rate).
    pub tx_bytes: u64,
    /// Payload bytes this QP received and placed.
    pub rx_bytes: u64,
}

/// `struct srnic_listen`: SRNIC_IOCTL_LISTEN: listens on addr (port 0: any; out: the port). Each incoming, MPA-negotiated-so-far request becomes an SRNIC_EVENT_CONNECT_REQUEST with a conn_id to accept or reject. mpa_flags are what this side asks for.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicListen {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// Listen backlog.
    pub backlog: u32,
    /// `SRNIC_MPA_*` bits.
    pub mpa_flags: u32,
    /// The listener handle.
    pub listener_handle: u32,
    /// The address.
    pub addr: SrnicSockaddr,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// `struct srnic_connect`: SRNIC_IOCTL_CONNECT: connects qp_handle (state INIT) to addr. Completes with SRNIC_EVENT_ESTABLISHED, _REJECTED or _CONNECT_ERROR on the QP.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicConnect {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The queue pair handle.
    pub qp_handle: u32,
    /// Inbound RDMA READ depth.
    pub ird: u32,
    /// Outbound RDMA READ depth.
    pub ord: u32,
    /// `SRNIC_MPA_*` bits.
    pub mpa_flags: u32,
    /// Private data length in bytes.
    pub private_data_len: u32,
    /// User pointer.
    pub private_data: u64,
    /// The address.
    pub addr: SrnicSockaddr,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// `struct srnic_accept`: SRNIC_IOCTL_ACCEPT: accepts conn_id onto qp_handle (state INIT).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicAccept {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The connection request identifier.
    pub conn_id: u32,
    /// The queue pair handle.
    pub qp_handle: u32,
    /// Inbound RDMA READ depth.
    pub ird: u32,
    /// Outbound RDMA READ depth.
    pub ord: u32,
    /// Private data length in bytes.
    pub private_data_len: u32,
    /// Private data.
    pub private_data: u64,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// `struct srnic_reject`: SRNIC_IOCTL_REJECT: rejects conn_id with an MPA reply carrying R=1.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicReject {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The connection request identifier.
    pub conn_id: u32,
    /// Private data length in bytes.
    pub private_data_len: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Private data.
    pub private_data: u64,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_disconnect`: SRNIC_IOCTL_DISCONNECT: closes qp_handle's connection.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicDisconnect {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// The queue pair handle.
    pub qp_handle: u32,
    /// Flags (see the header).
    pub flags: u32,
    /// Must be zero.
    pub reserved0: u32,
}

/// `struct srnic_event`: What read() returns: whole records, as many as fit. With none pending, read() blocks (EAGAIN with O_NONBLOCK); poll() reports EPOLLIN when one is pending.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrnicEvent {
    /// `SRNIC_EVENT_*`.
    pub event_type: u32,
    /// The object handle.
    pub handle: u32,
    /// The connection request identifier.
    pub conn_id: u32,
    /// Status code.
    pub status: i32,
    /// Inbound RDMA READ depth.
    pub ird: u32,
    /// Outbound RDMA READ depth.
    pub ord: u32,
    /// `SRNIC_MPA_*` bits.
    pub mpa_flags: u32,
    /// TERMINATE word (layer << 12 | type << 8 | code, bit 31: received).
    pub term: u32,
    /// Local address.
    pub local: SrnicSockaddr,
    /// Remote address.
    pub remote: SrnicSockaddr,
    /// Private data length in bytes.
    pub private_data_len: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Must be zero.
    pub reserved: u64,
    /// Private data.
    pub private_data: [u8; 256],
}

impl Default for SrnicEvent {
    fn default() -> Self {
        Self {
            event_type: Default::default(),
            handle: Default::default(),
            conn_id: Default::default(),
            status: Default::default(),
            ird: Default::default(),
            ord: Default::default(),
            mpa_flags: Default::default(),
            term: Default::default(),
            local: Default::default(),
            remote: Default::default(),
            private_data_len: Default::default(),
            reserved0: Default::default(),
            reserved: Default::default(),
            private_data: [0; 256],
        }
    }
}

/// `struct srnic_sge`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicSge {
    /// The address.
    pub addr: u64,
    /// Length in bytes.
    pub length: u32,
    /// The local key.
    pub lkey: u32,
}

/// `struct srnic_post_wr`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicPostWr {
    /// The work request identifier.
    pub wr_id: u64,
    /// The queue pair handle.
    pub qp_handle: u32,
    /// SRNIC_WR_*.
    pub opcode: u16,
    /// Number of `SrnicSge` following this record.
    pub num_sge: u16,
    /// SRNIC_SEND_*.
    pub flags: u32,
    /// SEND_WITH_INV, SEND_WITH_SE_INV.
    pub invalidate_rkey: u32,
    /// RDMA_WRITE, RDMA_READ: the tagged offset.
    pub remote_addr: u64,
    /// RDMA_WRITE, RDMA_READ.
    pub rkey: u32,
    /// Must be zero.
    pub reserved: u32,
}

/// `struct srnic_stats`: SRNIC_IOCTL_QUERY_STATS: device-wide counters since the module loaded. Counters are only ever added at the end, before `reserved`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicStats {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Open files now.
    pub contexts: u64,
    /// Pages pinned by memory regions now.
    pub pinned_pages: u64,
    /// Queue pairs now.
    pub qps: u64,
    /// Established connections, in total.
    pub connections: u64,
    /// FPDUs sent.
    pub tx_fpdus: u64,
    /// FPDUs received.
    pub rx_fpdus: u64,
    /// Payload bytes.
    pub tx_bytes: u64,
    /// Payload bytes received.
    pub rx_bytes: u64,
    /// TERMINATEs sent.
    pub terminates_sent: u64,
    /// TERMINATEs received.
    pub terminates_received: u64,
    /// FPDUs received with a bad CRC.
    pub crc_errors: u64,
    /// Protection domains now.
    pub pds: u64,
    /// Memory regions now.
    pub mrs: u64,
    /// Completion queues now.
    pub cqs: u64,
    /// Listening endpoints now.
    pub listeners: u64,
    /// Connection requests not yet accepted or rejected, now.
    pub conn_requests: u64,
    /// Kernel TCP sockets (listeners, requests, connections) now.
    pub sockets: u64,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// Access local write.
pub const SRNIC_ACCESS_LOCAL_WRITE: u32 = 1 << 0;
/// Access remote write.
pub const SRNIC_ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// Access remote read.
pub const SRNIC_ACCESS_REMOTE_READ: u32 = 1 << 2;
/// Access all.
pub const SRNIC_ACCESS_ALL: u32 = (1 << 3) - 1;
/// The next completion of any kind.
pub const SRNIC_CQ_NEXT_COMP: u32 = 1;
/// The next solicited or error completion.
pub const SRNIC_CQ_SOLICITED: u32 = 2;
/// Wc success.
pub const SRNIC_WC_SUCCESS: u32 = 0;
/// Wc loc len err.
pub const SRNIC_WC_LOC_LEN_ERR: u32 = 1;
/// Wc loc qp op err.
pub const SRNIC_WC_LOC_QP_OP_ERR: u32 = 2;
/// Wc loc prot err.
pub const SRNIC_WC_LOC_PROT_ERR: u32 = 4;
/// Wc wr flush err.
pub const SRNIC_WC_WR_FLUSH_ERR: u32 = 5;
/// Wc loc access err.
pub const SRNIC_WC_LOC_ACCESS_ERR: u32 = 8;
/// Wc rem inv req err.
pub const SRNIC_WC_REM_INV_REQ_ERR: u32 = 9;
/// Wc rem access err.
pub const SRNIC_WC_REM_ACCESS_ERR: u32 = 10;
/// Wc rem op err.
pub const SRNIC_WC_REM_OP_ERR: u32 = 11;
/// Wc fatal err.
pub const SRNIC_WC_FATAL_ERR: u32 = 17;
/// Completion opcodes.
pub const SRNIC_WC_GENERAL_ERR: u32 = 21;
/// Wc send.
pub const SRNIC_WC_SEND: u32 = 0;
/// Wc rdma write.
pub const SRNIC_WC_RDMA_WRITE: u32 = 1;
/// Wc rdma read.
pub const SRNIC_WC_RDMA_READ: u32 = 2;
/// Wc recv.
pub const SRNIC_WC_RECV: u32 = 128;
/// Wc rmpp send.
pub const SRNIC_WC_RMPP_SEND: u32 = 192;
/// Completion flags.
pub const SRNIC_WC_RMPP_RECV: u32 = 193;
/// Invalidated_stag is valid.
pub const SRNIC_WC_WITH_INV: u32 = 1 << 0;
/// A Send with Solicited Event.
pub const SRNIC_WC_SOLICITED: u32 = 1 << 1;
/// RMPP: msg_len > byte_len.
pub const SRNIC_WC_TRUNCATED: u32 = 1 << 2;
/// Qps init.
pub const SRNIC_QPS_INIT: u32 = 0;
/// Qps connecting.
pub const SRNIC_QPS_CONNECTING: u32 = 1;
/// Qps rts.
pub const SRNIC_QPS_RTS: u32 = 2;
/// Qps closing.
pub const SRNIC_QPS_CLOSING: u32 = 3;
/// Qps error.
pub const SRNIC_QPS_ERROR: u32 = 4;
/// Ask for CRC32c (used if either side asks).
pub const SRNIC_MPA_CRC: u32 = 1 << 0;
/// Ask the peer to insert markers.
pub const SRNIC_MPA_MARKERS: u32 = 1 << 1;
/// Speak MPA revision 1 (RFC 5044) only.
pub const SRNIC_MPA_REV1: u32 = 1 << 2;
/// Peer-to-peer mode with an RTR message.
pub const SRNIC_MPA_P2P: u32 = 1 << 3;
/// RTR as a zero-length READ (else WRITE).
pub const SRNIC_MPA_RTR_READ: u32 = 1 << 4;
/// Only as negotiated (in events and QUERY_QP): per direction.
pub const SRNIC_MPA_ALL: u32 = (1 << 5) - 1;
/// Mpa crc tx.
pub const SRNIC_MPA_CRC_TX: u32 = 1 << 8;
/// Mpa crc rx.
pub const SRNIC_MPA_CRC_RX: u32 = 1 << 9;
/// Mpa markers tx.
pub const SRNIC_MPA_MARKERS_TX: u32 = 1 << 10;
/// Mpa markers rx.
pub const SRNIC_MPA_MARKERS_RX: u32 = 1 << 11;
/// An IPv4 or IPv6 socket address; the port in host byte order.
pub const SRNIC_MAX_PRIVATE_DATA: u32 = 252;
/// Reset the connection instead of closing it.
pub const SRNIC_DISCONNECT_ABORT: u32 = 1;
/// Handle: an armed CQ fired.
pub const SRNIC_EVENT_CQ: u32 = 1;
/// Handle: listener; conn_id.
pub const SRNIC_EVENT_CONNECT_REQUEST: u32 = 2;
/// Handle: QP.
pub const SRNIC_EVENT_ESTABLISHED: u32 = 3;
/// Handle: QP.
pub const SRNIC_EVENT_REJECTED: u32 = 4;
/// Handle: QP.
pub const SRNIC_EVENT_DISCONNECTED: u32 = 5;
/// Handle: QP; status: -errno.
pub const SRNIC_EVENT_CONNECT_ERROR: u32 = 6;
/// Handle: QP; term.
pub const SRNIC_EVENT_QP_ERROR: u32 = 7;
/// Handle: CQ overflowed.
pub const SRNIC_EVENT_CQ_ERROR: u32 = 8;
/// Wr send.
pub const SRNIC_WR_SEND: u32 = 0;
/// Wr send with inv.
pub const SRNIC_WR_SEND_WITH_INV: u32 = 1;
/// Wr send with se.
pub const SRNIC_WR_SEND_WITH_SE: u32 = 2;
/// Wr send with se inv.
pub const SRNIC_WR_SEND_WITH_SE_INV: u32 = 3;
/// Wr rdma write.
pub const SRNIC_WR_RDMA_WRITE: u32 = 4;
/// Wr rdma read.
pub const SRNIC_WR_RDMA_READ: u32 = 5;
/// Wr recv.
pub const SRNIC_WR_RECV: u32 = 6;
/// Send signaled.
pub const SRNIC_SEND_SIGNALED: u32 = 1 << 0;
/// Copy the data at post time; lkeys ignored.
pub const SRNIC_SEND_INLINE: u32 = 1 << 1;
/// Wait for earlier READs first.
pub const SRNIC_SEND_FENCE: u32 = 1 << 2;
/// `SRNIC_IOCTL_ALLOC_PD`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_ALLOC_PD: u32 = iowr::<SrnicAllocPd>(0x01);
/// `SRNIC_IOCTL_DEALLOC_PD`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_DEALLOC_PD: u32 = iowr::<SrnicHandleArg>(0x02);
/// `SRNIC_IOCTL_REG_MR`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_REG_MR: u32 = iowr::<SrnicRegMr>(0x03);
/// `SRNIC_IOCTL_DEREG_MR`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_DEREG_MR: u32 = iowr::<SrnicHandleArg>(0x04);
/// `SRNIC_IOCTL_CREATE_CQ`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_CREATE_CQ: u32 = iowr::<SrnicCreateCq>(0x05);
/// `SRNIC_IOCTL_DESTROY_CQ`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_DESTROY_CQ: u32 = iowr::<SrnicHandleArg>(0x06);
/// `SRNIC_IOCTL_REQ_NOTIFY_CQ`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_REQ_NOTIFY_CQ: u32 = iowr::<SrnicReqNotifyCq>(0x07);
/// `SRNIC_IOCTL_POLL_CQ`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_POLL_CQ: u32 = iowr::<SrnicPollCq>(0x08);
/// `SRNIC_IOCTL_CREATE_QP`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_CREATE_QP: u32 = iowr::<SrnicCreateQp>(0x09);
/// `SRNIC_IOCTL_DESTROY_QP`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_DESTROY_QP: u32 = iowr::<SrnicHandleArg>(0x0A);
/// `SRNIC_IOCTL_QUERY_QP`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_QUERY_QP: u32 = iowr::<SrnicQueryQp>(0x0B);
/// `SRNIC_IOCTL_LISTEN`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_LISTEN: u32 = iowr::<SrnicListen>(0x0C);
/// `SRNIC_IOCTL_DESTROY_LISTENER`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_DESTROY_LISTENER: u32 = iowr::<SrnicHandleArg>(0x0D);
/// `SRNIC_IOCTL_CONNECT`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_CONNECT: u32 = iowr::<SrnicConnect>(0x0E);
/// `SRNIC_IOCTL_ACCEPT`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_ACCEPT: u32 = iowr::<SrnicAccept>(0x0F);
/// `SRNIC_IOCTL_REJECT`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_REJECT: u32 = iowr::<SrnicReject>(0x10);
/// `SRNIC_IOCTL_DISCONNECT`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_DISCONNECT: u32 = iowr::<SrnicDisconnect>(0x11);
/// `SRNIC_IOCTL_QUERY_STATS`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_QUERY_STATS: u32 = iowr::<SrnicStats>(0x12);

/// Default EtherType of Sandia RMPP frames (IEEE 802 local experimental 1).
pub const SRNIC_RMPP_ETHERTYPE: u32 = 0x88B5;
/// Highest NID (NIDs are 0 ..= this).
pub const SRNIC_RMPP_MAX_NID: u32 = 1023;
/// Any sender, in a posted receive.
pub const SRNIC_RMPP_ANY_NID: u32 = 0xFFFF_FFFF;
/// Most bytes in one message.
pub const SRNIC_RMPP_MAX_MSG: u64 = 0xFFFF_FFFF;
/// Send: no answer within max_retries.
pub const SRNIC_WC_RETRY_EXC_ERR: u32 = 12;
/// Receive: the sender aborted (NULL) or it was reclaimed.
pub const SRNIC_WC_REM_ABORT_ERR: u32 = 16;
/// Remove the node table entry instead of setting it.
pub const SRNIC_RMPP_NODE_DELETE: u32 = 1;
/// Refuse (MSGDROP) a message no receive matches.
pub const SRNIC_RMPP_EP_DROP_UNEXPECTED: u32 = 1 << 0;
/// Paper restart: resend the whole message after a timeout.
pub const SRNIC_RMPP_EP_RESTART_FROM_START: u32 = 1 << 1;
/// Every endpoint flag.
pub const SRNIC_RMPP_EP_ALL: u32 = (1 << 2) - 1;

/// `struct srnic_rmpp_node`: SRNIC_IOCTL_RMPP_SET_NODE: sets or removes a node table entry (NID -> MAC address and netdev).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicRmppNode {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// Nid.
    pub nid: u32,
    /// SRNIC_RMPP_NODE_*.
    pub flags: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Mac.
    pub mac: [u8; 6],
    /// Must be zero.
    pub reserved1: [u8; 2],
    /// The netdev, NUL-terminated.
    pub ifname: [u8; 16],
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_rmpp_create_ep`: SRNIC_IOCTL_RMPP_CREATE_EP: an RMPP endpoint.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicRmppCreateEp {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// MRs named by lkey must belong to it.
    pub pd_handle: u32,
    /// Local NID.
    pub nid: u32,
    /// Send cq.
    pub send_cq: u32,
    /// Recv cq.
    pub recv_cq: u32,
    /// SRNIC_RMPP_EP_*.
    pub flags: u32,
    /// The netdev, NUL-terminated.
    pub ifname: [u8; 16],
    /// 0: SRNIC_RMPP_ETHERTYPE.
    pub ethertype: u32,
    /// In/out: messages in flight (0: default).
    pub max_send: u32,
    /// In/out: posted receives (0: default).
    pub max_recv: u32,
    /// In/out: retransmission timeout.
    pub rto_us: u32,
    /// In/out: timeouts per message before it fails.
    pub max_retries: u32,
    /// In/out: receiver state without activity is freed.
    pub reclaim_ms: u32,
    /// In/out: grant pool (paper: MAX_RCV_BUF).
    pub max_rcv_buf: u32,
    /// In/out: pool share kept for first packets (paper: NODES).
    pub nodes: u32,
    /// In/out: largest grant (paper: MAX_DATA_PKTS).
    pub max_data_pkts: u32,
    /// Out: RMPP packet size, header included.
    pub mtu: u32,
    /// Out.
    pub ep_handle: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// Must be zero.
    pub reserved: [u64; 2],
}

/// `struct srnic_rmpp_send`: SRNIC_IOCTL_RMPP_SEND: sends one message.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicRmppSend {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// Ep handle.
    pub ep_handle: u32,
    /// Wr id.
    pub wr_id: u64,
    /// The 64-bit match tag.
    pub tag: u64,
    /// User pointer (in lkey's region if lkey != 0).
    pub addr: u64,
    /// At most SRNIC_RMPP_MAX_MSG.
    pub length: u64,
    /// 0: pin the buffer while the message is in flight.
    pub lkey: u32,
    /// Dst nid.
    pub dst_nid: u32,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_rmpp_post_recv`: SRNIC_IOCTL_RMPP_POST_RECV: posts one receive.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicRmppPostRecv {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// Ep handle.
    pub ep_handle: u32,
    /// Wr id.
    pub wr_id: u64,
    /// Match bits.
    pub match_bits: u64,
    /// Tag bits that do not take part in matching.
    pub ignore_bits: u64,
    /// User pointer (in lkey's region if lkey != 0).
    pub addr: u64,
    /// The most bytes taken; longer messages are truncated.
    pub length: u64,
    /// 0: pin the buffer while the receive is posted.
    pub lkey: u32,
    /// SRNIC_RMPP_ANY_NID: any sender.
    pub src_nid: u32,
    /// Must be zero.
    pub reserved: u64,
}

/// `struct srnic_rmpp_stats`: SRNIC_IOCTL_RMPP_QUERY_STATS: module-wide RMPP counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrnicRmppStats {
    /// Set by the caller to the size of this structure.
    pub size: u32,
    /// Must be zero.
    pub reserved0: u32,
    /// RMPP endpoints now.
    pub endpoints: u64,
    /// Outgoing messages the engines hold now.
    pub active_sends: u64,
    /// Incoming messages the engines hold now.
    pub active_recvs: u64,
    /// Sends the receiver acknowledged (MSGEND).
    pub msgs_sent: u64,
    /// Receives completed.
    pub msgs_received: u64,
    /// Receives truncated to the posted length.
    pub msgs_truncated: u64,
    /// Sends that got no answer within max_retries.
    pub send_failed: u64,
    /// Sends the receiver refused (MSGDROP).
    pub send_dropped: u64,
    /// Sends aborted by the endpoint's destruction (NULL sent).
    pub send_aborted: u64,
    /// Receives aborted by the sender (NULL) or reclaimed.
    pub recv_aborted: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Packets the engines accepted.
    pub rx_packets: u64,
    /// Payload bytes sent.
    pub tx_bytes: u64,
    /// Payload bytes placed.
    pub rx_bytes: u64,
    /// Sender timeouts that resent an RTS or restarted data.
    pub retransmits: u64,
    /// CTS grants issued.
    pub grants: u64,
    /// Data packets granted.
    pub granted_packets: u64,
    /// Grants the shared pool made smaller (Figure 8 rule).
    pub grants_limited: u64,
    /// First packets with no matching receive, left to the sender to retry.
    pub unexpected_held: u64,
    /// Messages refused for want of a matching receive.
    pub unexpected_dropped: u64,
    /// Frames shorter than the header or its payload length.
    pub drop_short: u64,
    /// Frames with another protocol version.
    pub drop_bad_version: u64,
    /// Frames with an unknown packet type.
    pub drop_bad_type: u64,
    /// Frames addressed to a NID no endpoint here owns (per endpoint).
    pub drop_other_nid: u64,
    /// Frames from a NID outside the node table.
    pub drop_unknown_nid: u64,
    /// Frames dropped because an endpoint's receive queue was full.
    pub drop_queue_full: u64,
    /// Frames with inconsistent header fields.
    pub drop_malformed: u64,
    /// Duplicate or stale packets.
    pub drop_duplicate: u64,
    /// First packets ahead of the per-sender message order.
    pub drop_out_of_order: u64,
    /// First packets refused because the receive table was full.
    pub drop_table_full: u64,
    /// Packets for a message the endpoint does not know.
    pub drop_unknown_msg: u64,
    /// Valid packets the message's state did not expect.
    pub drop_unexpected: u64,
    /// Packets that could not be sent (no route, no memory, queue full).
    pub tx_errors: u64,
    /// Must be zero.
    pub reserved: [u64; 8],
}

/// `SRNIC_IOCTL_RMPP_SET_NODE`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_RMPP_SET_NODE: u32 = iowr::<SrnicRmppNode>(0x40);
/// `SRNIC_IOCTL_RMPP_CREATE_EP`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_RMPP_CREATE_EP: u32 = iowr::<SrnicRmppCreateEp>(0x41);
/// `SRNIC_IOCTL_RMPP_DESTROY_EP`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_RMPP_DESTROY_EP: u32 = iowr::<SrnicHandleArg>(0x42);
/// `SRNIC_IOCTL_RMPP_SEND`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_RMPP_SEND: u32 = iowr::<SrnicRmppSend>(0x43);
/// `SRNIC_IOCTL_RMPP_POST_RECV`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_RMPP_POST_RECV: u32 = iowr::<SrnicRmppPostRecv>(0x44);
/// `SRNIC_IOCTL_RMPP_QUERY_STATS`: see `uapi/srnic.h`.
pub const SRNIC_IOCTL_RMPP_QUERY_STATS: u32 = iowr::<SrnicRmppStats>(0x45);

/// The counters of [`SrnicRmppStats`] by name, in ABI order.
pub fn rmpp_stats_counters(s: &SrnicRmppStats) -> [(&'static str, u64); 33] {
    [
        ("rmpp_endpoints", s.endpoints),
        ("rmpp_active_sends", s.active_sends),
        ("rmpp_active_recvs", s.active_recvs),
        ("rmpp_msgs_sent", s.msgs_sent),
        ("rmpp_msgs_received", s.msgs_received),
        ("rmpp_msgs_truncated", s.msgs_truncated),
        ("rmpp_send_failed", s.send_failed),
        ("rmpp_send_dropped", s.send_dropped),
        ("rmpp_send_aborted", s.send_aborted),
        ("rmpp_recv_aborted", s.recv_aborted),
        ("rmpp_tx_packets", s.tx_packets),
        ("rmpp_rx_packets", s.rx_packets),
        ("rmpp_tx_bytes", s.tx_bytes),
        ("rmpp_rx_bytes", s.rx_bytes),
        ("rmpp_retransmits", s.retransmits),
        ("rmpp_grants", s.grants),
        ("rmpp_granted_packets", s.granted_packets),
        ("rmpp_grants_limited", s.grants_limited),
        ("rmpp_unexpected_held", s.unexpected_held),
        ("rmpp_unexpected_dropped", s.unexpected_dropped),
        ("rmpp_drop_short", s.drop_short),
        ("rmpp_drop_bad_version", s.drop_bad_version),
        ("rmpp_drop_bad_type", s.drop_bad_type),
        ("rmpp_drop_other_nid", s.drop_other_nid),
        ("rmpp_drop_unknown_nid", s.drop_unknown_nid),
        ("rmpp_drop_queue_full", s.drop_queue_full),
        ("rmpp_drop_malformed", s.drop_malformed),
        ("rmpp_drop_duplicate", s.drop_duplicate),
        ("rmpp_drop_out_of_order", s.drop_out_of_order),
        ("rmpp_drop_table_full", s.drop_table_full),
        ("rmpp_drop_unknown_msg", s.drop_unknown_msg),
        ("rmpp_drop_unexpected", s.drop_unexpected),
        ("rmpp_tx_errors", s.tx_errors),
    ]
}

/// Calls `$m!(Struct, c_name, field)` for every field of every ABI structure, so
/// that tests can compare each offset and size with the C header.
#[macro_export]
macro_rules! srnic_abi_fields {
    ($m:ident) => {
        $m!(SrnicQueryDevice, srnic_query_device, size);
        $m!(SrnicQueryDevice, srnic_query_device, abi_version);
        $m!(SrnicQueryDevice, srnic_query_device, capabilities);
        $m!(SrnicQueryDevice, srnic_query_device, max_pd);
        $m!(SrnicQueryDevice, srnic_query_device, max_mr);
        $m!(SrnicQueryDevice, srnic_query_device, max_mr_size);
        $m!(SrnicQueryDevice, srnic_query_device, max_cq);
        $m!(SrnicQueryDevice, srnic_query_device, max_cqe);
        $m!(SrnicQueryDevice, srnic_query_device, max_qp);
        $m!(SrnicQueryDevice, srnic_query_device, max_qp_wr);
        $m!(SrnicQueryDevice, srnic_query_device, max_sge);
        $m!(SrnicQueryDevice, srnic_query_device, max_inline_data);
        $m!(SrnicQueryDevice, srnic_query_device, max_ord);
        $m!(SrnicQueryDevice, srnic_query_device, max_ird);
        $m!(SrnicQueryDevice, srnic_query_device, max_rmpp_endpoints);
        $m!(SrnicQueryDevice, srnic_query_device, page_size);
        $m!(SrnicQueryDevice, srnic_query_device, reserved);
        $m!(SrnicHandleArg, srnic_handle_arg, size);
        $m!(SrnicHandleArg, srnic_handle_arg, handle);
        $m!(SrnicHandleArg, srnic_handle_arg, reserved);
        $m!(SrnicAllocPd, srnic_alloc_pd, size);
        $m!(SrnicAllocPd, srnic_alloc_pd, pd_handle);
        $m!(SrnicAllocPd, srnic_alloc_pd, reserved);
        $m!(SrnicRegMr, srnic_reg_mr, size);
        $m!(SrnicRegMr, srnic_reg_mr, pd_handle);
        $m!(SrnicRegMr, srnic_reg_mr, addr);
        $m!(SrnicRegMr, srnic_reg_mr, length);
        $m!(SrnicRegMr, srnic_reg_mr, access);
        $m!(SrnicRegMr, srnic_reg_mr, mr_handle);
        $m!(SrnicRegMr, srnic_reg_mr, lkey);
        $m!(SrnicRegMr, srnic_reg_mr, rkey);
        $m!(SrnicRegMr, srnic_reg_mr, reserved);
        $m!(SrnicCreateCq, srnic_create_cq, size);
        $m!(SrnicCreateCq, srnic_create_cq, cqe);
        $m!(SrnicCreateCq, srnic_create_cq, cq_handle);
        $m!(SrnicCreateCq, srnic_create_cq, reserved0);
        $m!(SrnicCreateCq, srnic_create_cq, reserved);
        $m!(SrnicReqNotifyCq, srnic_req_notify_cq, size);
        $m!(SrnicReqNotifyCq, srnic_req_notify_cq, cq_handle);
        $m!(SrnicReqNotifyCq, srnic_req_notify_cq, flags);
        $m!(SrnicReqNotifyCq, srnic_req_notify_cq, reserved0);
        $m!(SrnicReqNotifyCq, srnic_req_notify_cq, reserved);
        $m!(SrnicWc, srnic_wc, wr_id);
        $m!(SrnicWc, srnic_wc, status);
        $m!(SrnicWc, srnic_wc, opcode);
        $m!(SrnicWc, srnic_wc, byte_len);
        $m!(SrnicWc, srnic_wc, qp_handle);
        $m!(SrnicWc, srnic_wc, flags);
        $m!(SrnicWc, srnic_wc, invalidated_stag);
        $m!(SrnicWc, srnic_wc, term);
        $m!(SrnicWc, srnic_wc, src_nid);
        $m!(SrnicWc, srnic_wc, tag);
        $m!(SrnicWc, srnic_wc, msg_len);
        $m!(SrnicWc, srnic_wc, reserved);
        $m!(SrnicPollCq, srnic_poll_cq, size);
        $m!(SrnicPollCq, srnic_poll_cq, cq_handle);
        $m!(SrnicPollCq, srnic_poll_cq, num_entries);
        $m!(SrnicPollCq, srnic_poll_cq, reserved0);
        $m!(SrnicPollCq, srnic_poll_cq, wc_ptr);
        $m!(SrnicPollCq, srnic_poll_cq, reserved);
        $m!(SrnicCreateQp, srnic_create_qp, size);
        $m!(SrnicCreateQp, srnic_create_qp, pd_handle);
        $m!(SrnicCreateQp, srnic_create_qp, send_cq);
        $m!(SrnicCreateQp, srnic_create_qp, recv_cq);
        $m!(SrnicCreateQp, srnic_create_qp, max_send_wr);
        $m!(SrnicCreateQp, srnic_create_qp, max_recv_wr);
        $m!(SrnicCreateQp, srnic_create_qp, max_send_sge);
        $m!(SrnicCreateQp, srnic_create_qp, max_recv_sge);
        $m!(SrnicCreateQp, srnic_create_qp, max_inline_data);
        $m!(SrnicCreateQp, srnic_create_qp, sq_sig_all);
        $m!(SrnicCreateQp, srnic_create_qp, qp_handle);
        $m!(SrnicCreateQp, srnic_create_qp, reserved0);
        $m!(SrnicCreateQp, srnic_create_qp, reserved);
        $m!(SrnicSockaddr, srnic_sockaddr, family);
        $m!(SrnicSockaddr, srnic_sockaddr, port);
        $m!(SrnicSockaddr, srnic_sockaddr, scope_id);
        $m!(SrnicSockaddr, srnic_sockaddr, addr);
        $m!(SrnicQueryQp, srnic_query_qp, size);
        $m!(SrnicQueryQp, srnic_query_qp, qp_handle);
        $m!(SrnicQueryQp, srnic_query_qp, state);
        $m!(SrnicQueryQp, srnic_query_qp, mpa_flags);
        $m!(SrnicQueryQp, srnic_query_qp, ird);
        $m!(SrnicQueryQp, srnic_query_qp, ord);
        $m!(SrnicQueryQp, srnic_query_qp, term);
        $m!(SrnicQueryQp, srnic_query_qp, reserved0);
        $m!(SrnicQueryQp, srnic_query_qp, local);
        $m!(SrnicQueryQp, srnic_query_qp, remote);
        $m!(SrnicQueryQp, srnic_query_qp, tx_bytes);
        $m!(SrnicQueryQp, srnic_query_qp, rx_bytes);
        $m!(SrnicListen, srnic_listen, size);
        $m!(SrnicListen, srnic_listen, backlog);
        $m!(SrnicListen, srnic_listen, mpa_flags);
        $m!(SrnicListen, srnic_listen, listener_handle);
        $m!(SrnicListen, srnic_listen, addr);
        $m!(SrnicListen, srnic_listen, reserved);
        $m!(SrnicConnect, srnic_connect, size);
        $m!(SrnicConnect, srnic_connect, qp_handle);
        $m!(SrnicConnect, srnic_connect, ird);
        $m!(SrnicConnect, srnic_connect, ord);
        $m!(SrnicConnect, srnic_connect, mpa_flags);
        $m!(SrnicConnect, srnic_connect, private_data_len);
        $m!(SrnicConnect, srnic_connect, private_data);
        $m!(SrnicConnect, srnic_connect, addr);
        $m!(SrnicConnect, srnic_connect, reserved);
        $m!(SrnicAccept, srnic_accept, size);
        $m!(SrnicAccept, srnic_accept, conn_id);
        $m!(SrnicAccept, srnic_accept, qp_handle);
        $m!(SrnicAccept, srnic_accept, ird);
        $m!(SrnicAccept, srnic_accept, ord);
        $m!(SrnicAccept, srnic_accept, private_data_len);
        $m!(SrnicAccept, srnic_accept, private_data);
        $m!(SrnicAccept, srnic_accept, reserved);
        $m!(SrnicReject, srnic_reject, size);
        $m!(SrnicReject, srnic_reject, conn_id);
        $m!(SrnicReject, srnic_reject, private_data_len);
        $m!(SrnicReject, srnic_reject, reserved0);
        $m!(SrnicReject, srnic_reject, private_data);
        $m!(SrnicReject, srnic_reject, reserved);
        $m!(SrnicDisconnect, srnic_disconnect, size);
        $m!(SrnicDisconnect, srnic_disconnect, qp_handle);
        $m!(SrnicDisconnect, srnic_disconnect, flags);
        $m!(SrnicDisconnect, srnic_disconnect, reserved0);
        $m!(SrnicEvent, srnic_event, event_type);
        $m!(SrnicEvent, srnic_event, handle);
        $m!(SrnicEvent, srnic_event, conn_id);
        $m!(SrnicEvent, srnic_event, status);
        $m!(SrnicEvent, srnic_event, ird);
        $m!(SrnicEvent, srnic_event, ord);
        $m!(SrnicEvent, srnic_event, mpa_flags);
        $m!(SrnicEvent, srnic_event, term);
        $m!(SrnicEvent, srnic_event, local);
        $m!(SrnicEvent, srnic_event, remote);
        $m!(SrnicEvent, srnic_event, private_data_len);
        $m!(SrnicEvent, srnic_event, reserved0);
        $m!(SrnicEvent, srnic_event, reserved);
        $m!(SrnicEvent, srnic_event, private_data);
        $m!(SrnicSge, srnic_sge, addr);
        $m!(SrnicSge, srnic_sge, length);
        $m!(SrnicSge, srnic_sge, lkey);
        $m!(SrnicPostWr, srnic_post_wr, wr_id);
        $m!(SrnicPostWr, srnic_post_wr, qp_handle);
        $m!(SrnicPostWr, srnic_post_wr, opcode);
        $m!(SrnicPostWr, srnic_post_wr, num_sge);
        $m!(SrnicPostWr, srnic_post_wr, flags);
        $m!(SrnicPostWr, srnic_post_wr, invalidate_rkey);
        $m!(SrnicPostWr, srnic_post_wr, remote_addr);
        $m!(SrnicPostWr, srnic_post_wr, rkey);
        $m!(SrnicPostWr, srnic_post_wr, reserved);
        $m!(SrnicStats, srnic_stats, size);
        $m!(SrnicStats, srnic_stats, reserved0);
        $m!(SrnicStats, srnic_stats, contexts);
        $m!(SrnicStats, srnic_stats, pinned_pages);
        $m!(SrnicStats, srnic_stats, qps);
        $m!(SrnicStats, srnic_stats, connections);
        $m!(SrnicStats, srnic_stats, tx_fpdus);
        $m!(SrnicStats, srnic_stats, rx_fpdus);
        $m!(SrnicStats, srnic_stats, tx_bytes);
        $m!(SrnicStats, srnic_stats, rx_bytes);
        $m!(SrnicStats, srnic_stats, terminates_sent);
        $m!(SrnicStats, srnic_stats, terminates_received);
        $m!(SrnicStats, srnic_stats, crc_errors);
        $m!(SrnicStats, srnic_stats, pds);
        $m!(SrnicStats, srnic_stats, mrs);
        $m!(SrnicStats, srnic_stats, cqs);
        $m!(SrnicStats, srnic_stats, listeners);
        $m!(SrnicStats, srnic_stats, conn_requests);
        $m!(SrnicStats, srnic_stats, sockets);
        $m!(SrnicStats, srnic_stats, reserved);
        $m!(SrnicRmppNode, srnic_rmpp_node, size);
        $m!(SrnicRmppNode, srnic_rmpp_node, nid);
        $m!(SrnicRmppNode, srnic_rmpp_node, flags);
        $m!(SrnicRmppNode, srnic_rmpp_node, reserved0);
        $m!(SrnicRmppNode, srnic_rmpp_node, mac);
        $m!(SrnicRmppNode, srnic_rmpp_node, reserved1);
        $m!(SrnicRmppNode, srnic_rmpp_node, ifname);
        $m!(SrnicRmppNode, srnic_rmpp_node, reserved);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, size);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, pd_handle);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, nid);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, send_cq);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, recv_cq);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, flags);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, ifname);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, ethertype);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, max_send);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, max_recv);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, rto_us);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, max_retries);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, reclaim_ms);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, max_rcv_buf);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, nodes);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, max_data_pkts);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, mtu);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, ep_handle);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, reserved0);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep, reserved);
        $m!(SrnicRmppSend, srnic_rmpp_send, size);
        $m!(SrnicRmppSend, srnic_rmpp_send, ep_handle);
        $m!(SrnicRmppSend, srnic_rmpp_send, wr_id);
        $m!(SrnicRmppSend, srnic_rmpp_send, tag);
        $m!(SrnicRmppSend, srnic_rmpp_send, addr);
        $m!(SrnicRmppSend, srnic_rmpp_send, length);
        $m!(SrnicRmppSend, srnic_rmpp_send, lkey);
        $m!(SrnicRmppSend, srnic_rmpp_send, dst_nid);
        $m!(SrnicRmppSend, srnic_rmpp_send, reserved);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, size);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, ep_handle);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, wr_id);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, match_bits);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, ignore_bits);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, addr);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, length);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, lkey);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, src_nid);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv, reserved);
        $m!(SrnicRmppStats, srnic_rmpp_stats, size);
        $m!(SrnicRmppStats, srnic_rmpp_stats, reserved0);
        $m!(SrnicRmppStats, srnic_rmpp_stats, endpoints);
        $m!(SrnicRmppStats, srnic_rmpp_stats, active_sends);
        $m!(SrnicRmppStats, srnic_rmpp_stats, active_recvs);
        $m!(SrnicRmppStats, srnic_rmpp_stats, msgs_sent);
        $m!(SrnicRmppStats, srnic_rmpp_stats, msgs_received);
        $m!(SrnicRmppStats, srnic_rmpp_stats, msgs_truncated);
        $m!(SrnicRmppStats, srnic_rmpp_stats, send_failed);
        $m!(SrnicRmppStats, srnic_rmpp_stats, send_dropped);
        $m!(SrnicRmppStats, srnic_rmpp_stats, send_aborted);
        $m!(SrnicRmppStats, srnic_rmpp_stats, recv_aborted);
        $m!(SrnicRmppStats, srnic_rmpp_stats, tx_packets);
        $m!(SrnicRmppStats, srnic_rmpp_stats, rx_packets);
        $m!(SrnicRmppStats, srnic_rmpp_stats, tx_bytes);
        $m!(SrnicRmppStats, srnic_rmpp_stats, rx_bytes);
        $m!(SrnicRmppStats, srnic_rmpp_stats, retransmits);
        $m!(SrnicRmppStats, srnic_rmpp_stats, grants);
        $m!(SrnicRmppStats, srnic_rmpp_stats, granted_packets);
        $m!(SrnicRmppStats, srnic_rmpp_stats, grants_limited);
        $m!(SrnicRmppStats, srnic_rmpp_stats, unexpected_held);
        $m!(SrnicRmppStats, srnic_rmpp_stats, unexpected_dropped);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_short);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_bad_version);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_bad_type);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_other_nid);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_unknown_nid);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_queue_full);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_malformed);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_duplicate);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_out_of_order);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_table_full);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_unknown_msg);
        $m!(SrnicRmppStats, srnic_rmpp_stats, drop_unexpected);
        $m!(SrnicRmppStats, srnic_rmpp_stats, tx_errors);
        $m!(SrnicRmppStats, srnic_rmpp_stats, reserved);
    };
}

/// Calls `$m!(Struct, c_name)` for every ABI structure.
#[macro_export]
macro_rules! srnic_abi_structs {
    ($m:ident) => {
        $m!(SrnicQueryDevice, srnic_query_device);
        $m!(SrnicHandleArg, srnic_handle_arg);
        $m!(SrnicAllocPd, srnic_alloc_pd);
        $m!(SrnicRegMr, srnic_reg_mr);
        $m!(SrnicCreateCq, srnic_create_cq);
        $m!(SrnicReqNotifyCq, srnic_req_notify_cq);
        $m!(SrnicWc, srnic_wc);
        $m!(SrnicPollCq, srnic_poll_cq);
        $m!(SrnicCreateQp, srnic_create_qp);
        $m!(SrnicSockaddr, srnic_sockaddr);
        $m!(SrnicQueryQp, srnic_query_qp);
        $m!(SrnicListen, srnic_listen);
        $m!(SrnicConnect, srnic_connect);
        $m!(SrnicAccept, srnic_accept);
        $m!(SrnicReject, srnic_reject);
        $m!(SrnicDisconnect, srnic_disconnect);
        $m!(SrnicEvent, srnic_event);
        $m!(SrnicSge, srnic_sge);
        $m!(SrnicPostWr, srnic_post_wr);
        $m!(SrnicStats, srnic_stats);
        $m!(SrnicRmppNode, srnic_rmpp_node);
        $m!(SrnicRmppCreateEp, srnic_rmpp_create_ep);
        $m!(SrnicRmppSend, srnic_rmpp_send);
        $m!(SrnicRmppPostRecv, srnic_rmpp_post_recv);
        $m!(SrnicRmppStats, srnic_rmpp_stats);
    };
}

/// Calls `$m!(RUST_CONST, C_MACRO)` for every ABI constant.
#[macro_export]
macro_rules! srnic_abi_consts {
    ($m:ident) => {
        $m!(SRNIC_ABI_VERSION, SRNIC_ABI_VERSION);
        $m!(SRNIC_IOCTL_MAGIC, SRNIC_IOCTL_MAGIC);
        $m!(SRNIC_CAP_IWARP, SRNIC_CAP_IWARP);
        $m!(SRNIC_CAP_MPA_CRC, SRNIC_CAP_MPA_CRC);
        $m!(SRNIC_CAP_MPA_MARKERS, SRNIC_CAP_MPA_MARKERS);
        $m!(SRNIC_CAP_RMPP, SRNIC_CAP_RMPP);
        $m!(SRNIC_CAP_ALL, SRNIC_CAP_ALL);
        $m!(SRNIC_IOCTL_QUERY_DEVICE, SRNIC_IOCTL_QUERY_DEVICE);
        $m!(SRNIC_ACCESS_LOCAL_WRITE, SRNIC_ACCESS_LOCAL_WRITE);
        $m!(SRNIC_ACCESS_REMOTE_WRITE, SRNIC_ACCESS_REMOTE_WRITE);
        $m!(SRNIC_ACCESS_REMOTE_READ, SRNIC_ACCESS_REMOTE_READ);
        $m!(SRNIC_ACCESS_ALL, SRNIC_ACCESS_ALL);
        $m!(SRNIC_CQ_NEXT_COMP, SRNIC_CQ_NEXT_COMP);
        $m!(SRNIC_CQ_SOLICITED, SRNIC_CQ_SOLICITED);
        $m!(SRNIC_WC_SUCCESS, SRNIC_WC_SUCCESS);
        $m!(SRNIC_WC_LOC_LEN_ERR, SRNIC_WC_LOC_LEN_ERR);
        $m!(SRNIC_WC_LOC_QP_OP_ERR, SRNIC_WC_LOC_QP_OP_ERR);
        $m!(SRNIC_WC_LOC_PROT_ERR, SRNIC_WC_LOC_PROT_ERR);
        $m!(SRNIC_WC_WR_FLUSH_ERR, SRNIC_WC_WR_FLUSH_ERR);
        $m!(SRNIC_WC_LOC_ACCESS_ERR, SRNIC_WC_LOC_ACCESS_ERR);
        $m!(SRNIC_WC_REM_INV_REQ_ERR, SRNIC_WC_REM_INV_REQ_ERR);
        $m!(SRNIC_WC_REM_ACCESS_ERR, SRNIC_WC_REM_ACCESS_ERR);
        $m!(SRNIC_WC_REM_OP_ERR, SRNIC_WC_REM_OP_ERR);
        $m!(SRNIC_WC_FATAL_ERR, SRNIC_WC_FATAL_ERR);
        $m!(SRNIC_WC_GENERAL_ERR, SRNIC_WC_GENERAL_ERR);
        $m!(SRNIC_WC_SEND, SRNIC_WC_SEND);
        $m!(SRNIC_WC_RDMA_WRITE, SRNIC_WC_RDMA_WRITE);
        $m!(SRNIC_WC_RDMA_READ, SRNIC_WC_RDMA_READ);
        $m!(SRNIC_WC_RECV, SRNIC_WC_RECV);
        $m!(SRNIC_WC_RMPP_SEND, SRNIC_WC_RMPP_SEND);
        $m!(SRNIC_WC_RMPP_RECV, SRNIC_WC_RMPP_RECV);
        $m!(SRNIC_WC_WITH_INV, SRNIC_WC_WITH_INV);
        $m!(SRNIC_WC_SOLICITED, SRNIC_WC_SOLICITED);
        $m!(SRNIC_WC_TRUNCATED, SRNIC_WC_TRUNCATED);
        $m!(SRNIC_QPS_INIT, SRNIC_QPS_INIT);
        $m!(SRNIC_QPS_CONNECTING, SRNIC_QPS_CONNECTING);
        $m!(SRNIC_QPS_RTS, SRNIC_QPS_RTS);
        $m!(SRNIC_QPS_CLOSING, SRNIC_QPS_CLOSING);
        $m!(SRNIC_QPS_ERROR, SRNIC_QPS_ERROR);
        $m!(SRNIC_MPA_CRC, SRNIC_MPA_CRC);
        $m!(SRNIC_MPA_MARKERS, SRNIC_MPA_MARKERS);
        $m!(SRNIC_MPA_REV1, SRNIC_MPA_REV1);
        $m!(SRNIC_MPA_P2P, SRNIC_MPA_P2P);
        $m!(SRNIC_MPA_RTR_READ, SRNIC_MPA_RTR_READ);
        $m!(SRNIC_MPA_ALL, SRNIC_MPA_ALL);
        $m!(SRNIC_MPA_CRC_TX, SRNIC_MPA_CRC_TX);
        $m!(SRNIC_MPA_CRC_RX, SRNIC_MPA_CRC_RX);
        $m!(SRNIC_MPA_MARKERS_TX, SRNIC_MPA_MARKERS_TX);
        $m!(SRNIC_MPA_MARKERS_RX, SRNIC_MPA_MARKERS_RX);
        $m!(SRNIC_MAX_PRIVATE_DATA, SRNIC_MAX_PRIVATE_DATA);
        $m!(SRNIC_DISCONNECT_ABORT, SRNIC_DISCONNECT_ABORT);
        $m!(SRNIC_EVENT_CQ, SRNIC_EVENT_CQ);
        $m!(SRNIC_EVENT_CONNECT_REQUEST, SRNIC_EVENT_CONNECT_REQUEST);
        $m!(SRNIC_EVENT_ESTABLISHED, SRNIC_EVENT_ESTABLISHED);
        $m!(SRNIC_EVENT_REJECTED, SRNIC_EVENT_REJECTED);
        $m!(SRNIC_EVENT_DISCONNECTED, SRNIC_EVENT_DISCONNECTED);
        $m!(SRNIC_EVENT_CONNECT_ERROR, SRNIC_EVENT_CONNECT_ERROR);
        $m!(SRNIC_EVENT_QP_ERROR, SRNIC_EVENT_QP_ERROR);
        $m!(SRNIC_EVENT_CQ_ERROR, SRNIC_EVENT_CQ_ERROR);
        $m!(SRNIC_WR_SEND, SRNIC_WR_SEND);
        $m!(SRNIC_WR_SEND_WITH_INV, SRNIC_WR_SEND_WITH_INV);
        $m!(SRNIC_WR_SEND_WITH_SE, SRNIC_WR_SEND_WITH_SE);
        $m!(SRNIC_WR_SEND_WITH_SE_INV, SRNIC_WR_SEND_WITH_SE_INV);
        $m!(SRNIC_WR_RDMA_WRITE, SRNIC_WR_RDMA_WRITE);
        $m!(SRNIC_WR_RDMA_READ, SRNIC_WR_RDMA_READ);
        $m!(SRNIC_WR_RECV, SRNIC_WR_RECV);
        $m!(SRNIC_SEND_SIGNALED, SRNIC_SEND_SIGNALED);
        $m!(SRNIC_SEND_INLINE, SRNIC_SEND_INLINE);
        $m!(SRNIC_SEND_FENCE, SRNIC_SEND_FENCE);
        $m!(SRNIC_IOCTL_ALLOC_PD, SRNIC_IOCTL_ALLOC_PD);
        $m!(SRNIC_IOCTL_DEALLOC_PD, SRNIC_IOCTL_DEALLOC_PD);
        $m!(SRNIC_IOCTL_REG_MR, SRNIC_IOCTL_REG_MR);
        $m!(SRNIC_IOCTL_DEREG_MR, SRNIC_IOCTL_DEREG_MR);
        $m!(SRNIC_IOCTL_CREATE_CQ, SRNIC_IOCTL_CREATE_CQ);
        $m!(SRNIC_IOCTL_DESTROY_CQ, SRNIC_IOCTL_DESTROY_CQ);
        $m!(SRNIC_IOCTL_REQ_NOTIFY_CQ, SRNIC_IOCTL_REQ_NOTIFY_CQ);
        $m!(SRNIC_IOCTL_POLL_CQ, SRNIC_IOCTL_POLL_CQ);
        $m!(SRNIC_IOCTL_CREATE_QP, SRNIC_IOCTL_CREATE_QP);
        $m!(SRNIC_IOCTL_DESTROY_QP, SRNIC_IOCTL_DESTROY_QP);
        $m!(SRNIC_IOCTL_QUERY_QP, SRNIC_IOCTL_QUERY_QP);
        $m!(SRNIC_IOCTL_LISTEN, SRNIC_IOCTL_LISTEN);
        $m!(SRNIC_IOCTL_DESTROY_LISTENER, SRNIC_IOCTL_DESTROY_LISTENER);
        $m!(SRNIC_IOCTL_CONNECT, SRNIC_IOCTL_CONNECT);
        $m!(SRNIC_IOCTL_ACCEPT, SRNIC_IOCTL_ACCEPT);
        $m!(SRNIC_IOCTL_REJECT, SRNIC_IOCTL_REJECT);
        $m!(SRNIC_IOCTL_DISCONNECT, SRNIC_IOCTL_DISCONNECT);
        $m!(SRNIC_IOCTL_QUERY_STATS, SRNIC_IOCTL_QUERY_STATS);
        $m!(SRNIC_RMPP_ETHERTYPE, SRNIC_RMPP_ETHERTYPE);
        $m!(SRNIC_RMPP_MAX_NID, SRNIC_RMPP_MAX_NID);
        $m!(SRNIC_RMPP_ANY_NID, SRNIC_RMPP_ANY_NID);
        $m!(SRNIC_RMPP_MAX_MSG, SRNIC_RMPP_MAX_MSG);
        $m!(SRNIC_WC_RETRY_EXC_ERR, SRNIC_WC_RETRY_EXC_ERR);
        $m!(SRNIC_WC_REM_ABORT_ERR, SRNIC_WC_REM_ABORT_ERR);
        $m!(SRNIC_RMPP_NODE_DELETE, SRNIC_RMPP_NODE_DELETE);
        $m!(SRNIC_RMPP_EP_DROP_UNEXPECTED, SRNIC_RMPP_EP_DROP_UNEXPECTED);
        $m!(
            SRNIC_RMPP_EP_RESTART_FROM_START,
            SRNIC_RMPP_EP_RESTART_FROM_START
        );
        $m!(SRNIC_RMPP_EP_ALL, SRNIC_RMPP_EP_ALL);
        $m!(SRNIC_IOCTL_RMPP_SET_NODE, SRNIC_IOCTL_RMPP_SET_NODE);
        $m!(SRNIC_IOCTL_RMPP_CREATE_EP, SRNIC_IOCTL_RMPP_CREATE_EP);
        $m!(SRNIC_IOCTL_RMPP_DESTROY_EP, SRNIC_IOCTL_RMPP_DESTROY_EP);
        $m!(SRNIC_IOCTL_RMPP_SEND, SRNIC_IOCTL_RMPP_SEND);
        $m!(SRNIC_IOCTL_RMPP_POST_RECV, SRNIC_IOCTL_RMPP_POST_RECV);
        $m!(SRNIC_IOCTL_RMPP_QUERY_STATS, SRNIC_IOCTL_RMPP_QUERY_STATS);
    };
}

// Compile-time layout checks: the sizes of uapi/srnic.h on x86_64 (every offset
// is compared with the C compiler's by uapi/tests/c_header.rs).
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<SrnicQueryDevice>() == 104);
    assert!(offset_of!(SrnicQueryDevice, capabilities) == 8);
    assert!(offset_of!(SrnicQueryDevice, max_mr_size) == 24);
    assert!(offset_of!(SrnicQueryDevice, reserved) == 72);
    assert!(size_of::<SrnicHandleArg>() == 16);
    assert!(size_of::<SrnicAllocPd>() == 16);
    assert!(size_of::<SrnicRegMr>() == 56);
    assert!(size_of::<SrnicCreateCq>() == 32);
    assert!(size_of::<SrnicReqNotifyCq>() == 24);
    assert!(size_of::<SrnicWc>() == 64);
    assert!(size_of::<SrnicPollCq>() == 32);
    assert!(size_of::<SrnicCreateQp>() == 64);
    assert!(size_of::<SrnicSockaddr>() == 24);
    assert!(size_of::<SrnicQueryQp>() == 96);
    assert!(size_of::<SrnicListen>() == 56);
    assert!(size_of::<SrnicConnect>() == 72);
    assert!(size_of::<SrnicAccept>() == 48);
    assert!(size_of::<SrnicReject>() == 32);
    assert!(size_of::<SrnicDisconnect>() == 16);
    assert!(size_of::<SrnicEvent>() == 352);
    assert!(size_of::<SrnicSge>() == 16);
    assert!(size_of::<SrnicPostWr>() == 40);
    assert!(size_of::<SrnicStats>() == 160);
    assert!(offset_of!(SrnicEvent, private_data) == 96);
    assert!(offset_of!(SrnicWc, tag) == 40);
    assert!(size_of::<SrnicRmppNode>() == 48);
    assert!(size_of::<SrnicRmppCreateEp>() == 104);
    assert!(size_of::<SrnicRmppSend>() == 56);
    assert!(size_of::<SrnicRmppPostRecv>() == 64);
    assert!(size_of::<SrnicRmppStats>() == 336);
};
