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

/// Calls `$m!(Struct, field)` for every field of every ABI structure, so that tests
/// can compare each offset and size with the C header.
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
    };
}

/// Calls `$m!(Struct, c_name)` for every ABI structure.
#[macro_export]
macro_rules! srnic_abi_structs {
    ($m:ident) => {
        $m!(SrnicQueryDevice, srnic_query_device);
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
    };
}

// Compile-time layout checks: the sizes and offsets of uapi/srnic.h on x86_64.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<SrnicQueryDevice>() == 104);
    assert!(offset_of!(SrnicQueryDevice, capabilities) == 8);
    assert!(offset_of!(SrnicQueryDevice, max_mr_size) == 24);
    assert!(offset_of!(SrnicQueryDevice, max_cq) == 32);
    assert!(offset_of!(SrnicQueryDevice, page_size) == 68);
    assert!(offset_of!(SrnicQueryDevice, reserved) == 72);
};
