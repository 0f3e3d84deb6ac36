/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * srnic: the user-space ABI of /dev/srnic.
 *
 * Rules every argument structure follows (see Documentation/srnic/uapi.rst):
 *  - fixed-width __u32/__u64 fields with explicit padding, no implicit holes;
 *  - the first field is `size`, which the caller sets to sizeof(the structure);
 *    the kernel answers EINVAL when it is not the size it expects;
 *  - `reserved` fields must be zero on input (EINVAL otherwise) and are zero on
 *    output;
 *  - every command is _IOWR under SRNIC_IOCTL_MAGIC; an unknown command is
 *    answered with ENOTTY, a bad user pointer with EFAULT.
 *
 * The Rust mirror is uapi/src/abi.rs; a host test checks that every size and
 * offset here equals the Rust one.
 */
#ifndef _UAPI_SRNIC_H
#define _UAPI_SRNIC_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Version of this ABI. Incremented on any incompatible change. */
#define SRNIC_ABI_VERSION 1

/* ioctl magic (free in Documentation/userspace-api/ioctl/ioctl-number.rst). */
#define SRNIC_IOCTL_MAGIC 0xB9

/* Capability bits in srnic_query_device.capabilities. A bit is set only when the
 * loaded module implements the feature. */
#define SRNIC_CAP_IWARP		(1ULL << 0)	/* iWARP verbs (PD, MR, CQ, QP, CM) */
#define SRNIC_CAP_MPA_CRC	(1ULL << 1)	/* MPA CRC32c */
#define SRNIC_CAP_MPA_MARKERS	(1ULL << 2)	/* MPA markers */
#define SRNIC_CAP_RMPP		(1ULL << 3)	/* Sandia RMPP endpoints */
#define SRNIC_CAP_ALL		((1ULL << 4) - 1)

/*
 * SRNIC_IOCTL_QUERY_DEVICE: the ABI version, capabilities and limits of the
 * device. In: size (and zeroed reserved). Out: everything else.
 */
struct srnic_query_device {
	__u32 size;
	__u32 abi_version;
	__u64 capabilities;
	__u32 max_pd;
	__u32 max_mr;
	__u64 max_mr_size;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 max_sge;
	__u32 max_inline_data;
	__u32 max_ord;
	__u32 max_ird;
	__u32 max_rmpp_endpoints;
	__u32 page_size;
	__u64 reserved[4];
};

#define SRNIC_IOCTL_QUERY_DEVICE _IOWR(SRNIC_IOCTL_MAGIC, 0x00, struct srnic_query_device)

#endif /* _UAPI_SRNIC_H */
