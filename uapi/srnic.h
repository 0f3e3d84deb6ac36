/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
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
 * This header is the one definition of the ABI: scripts/gen-uapi.sh generates
 * the Rust one (uapi/src/generated.rs) from it with bindgen, and a host test
 * (uapi/tests/c_header.rs) checks every size, offset and constant against the C
 * compiler. After a change here, run scripts/gen-uapi.sh (make uapi).
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
#define SRNIC_CAP_VMTP		(1ULL << 4)	/* VMTP entities (RFC 1045) */
#define SRNIC_CAP_ALL		((1ULL << 5) - 1)

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
	__u64 max_kernel_mem;	/* bytes of kernel memory one file may make srnic allocate */
	__u64 kernel_mem;	/* bytes this file's objects take now (of max_kernel_mem) */
	__u64 reserved[2];
};

#define SRNIC_IOCTL_QUERY_DEVICE _IOWR(SRNIC_IOCTL_MAGIC, 0x00, struct srnic_query_device)


/*
 * Objects. Handles are per-file integers, never kernel pointers; 0 is never a
 * valid handle. Closing the file destroys every object it created.
 */

/* Destroy commands take only a handle. */
struct srnic_handle_arg {
	__u32 size;
	__u32 handle;
	__u64 reserved;
};

/* SRNIC_IOCTL_ALLOC_PD: out: pd_handle. */
struct srnic_alloc_pd {
	__u32 size;
	__u32 pd_handle;
	__u64 reserved;
};

/* Memory region access rights. */
#define SRNIC_ACCESS_LOCAL_WRITE	(1U << 0)
#define SRNIC_ACCESS_REMOTE_WRITE	(1U << 1)
#define SRNIC_ACCESS_REMOTE_READ	(1U << 2)
#define SRNIC_ACCESS_ALL		((1U << 3) - 1)

/*
 * SRNIC_IOCTL_REG_MR: registers [addr, addr + length) of the caller's memory.
 * The pages are pinned and charged to RLIMIT_MEMLOCK (ENOMEM beyond it). A
 * peer addresses the region with rkey (the STag) and tagged offsets equal to
 * the virtual addresses. In: pd_handle, addr, length, access. Out: the rest.
 */
struct srnic_reg_mr {
	__u32 size;
	__u32 pd_handle;
	__u64 addr;
	__u64 length;
	__u32 access;
	__u32 mr_handle;
	__u32 lkey;
	__u32 rkey;
	__u64 reserved[2];
};

/*
 * SRNIC_IOCTL_CREATE_CQ: in: cqe (at least this many entries); out: cqe,
 * cq_handle, and the CQ's ring for mmap(): ring_bytes bytes at ring_offset
 * (struct srnic_cq_ring). A kernel that reports ring_bytes 0 has no ring to
 * map: poll with SRNIC_IOCTL_POLL_CQ.
 */
struct srnic_create_cq {
	__u32 size;
	__u32 cqe;
	__u32 cq_handle;
	__u32 ring_bytes;
	__u64 ring_offset;
	__u64 reserved;
};

/*
 * A CQ's ring, mapped with mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE,
 * MAP_SHARED, fd, ring_offset) on the device (no PROT_EXEC; the mapping
 * stays valid after DESTROY_CQ, holding the memory until munmap()): polling
 * it needs no system call. cqe struct srnic_wc entries follow this header.
 *
 * prod and cons count completions modulo 2 * cqe; entry i lives at
 * wc[i % cqe]. The ring holds (prod - cons) mod 2 * cqe completions, from
 * wc[cons % cqe] on. srnic writes an entry, then prod (a release store); a
 * poller reads prod (an acquire load), then the entries, then stores cons
 * past what it took (release). srnic reads cons but does not trust it: a
 * value that makes the ring hold more than cqe counts as full (the next
 * completion overflows the CQ). SRNIC_IOCTL_POLL_CQ takes completions from
 * the same ring and moves cons; a program uses one or the other at a time.
 */
struct srnic_cq_ring {
	__u32 prod;		/* written by srnic */
	__u32 cqe;		/* the capacity, as CREATE_CQ returned it */
	__u32 reserved0[14];	/* prod's cache line ends here */
	__u32 cons;		/* written by the poller */
	__u32 reserved1[15];
};

/* SRNIC_IOCTL_REQ_NOTIFY_CQ flags. */
#define SRNIC_CQ_NEXT_COMP	1U	/* the next completion of any kind */
#define SRNIC_CQ_SOLICITED	2U	/* the next solicited or error completion */

/*
 * SRNIC_IOCTL_REQ_NOTIFY_CQ: arms the CQ once; when a matching completion is
 * added, one SRNIC_EVENT_CQ record is queued for read() and the file polls
 * readable. Returns 1 if the CQ already holds completions (poll it before
 * sleeping), else 0.
 */
struct srnic_req_notify_cq {
	__u32 size;
	__u32 cq_handle;
	__u32 flags;
	__u32 reserved0;
	__u64 reserved;
};

/* Completion status (the ibverbs numbering). */
#define SRNIC_WC_SUCCESS		0
#define SRNIC_WC_LOC_LEN_ERR		1
#define SRNIC_WC_LOC_QP_OP_ERR		2
#define SRNIC_WC_LOC_PROT_ERR		4
#define SRNIC_WC_WR_FLUSH_ERR		5
#define SRNIC_WC_LOC_ACCESS_ERR		8
#define SRNIC_WC_REM_INV_REQ_ERR	9
#define SRNIC_WC_REM_ACCESS_ERR		10
#define SRNIC_WC_REM_OP_ERR		11
#define SRNIC_WC_FATAL_ERR		19
#define SRNIC_WC_GENERAL_ERR		21

/* Completion opcodes. */
#define SRNIC_WC_SEND		0
#define SRNIC_WC_RDMA_WRITE	1
#define SRNIC_WC_RDMA_READ	2
#define SRNIC_WC_RECV		128
#define SRNIC_WC_RMPP_SEND	192
#define SRNIC_WC_RMPP_RECV	193
#define SRNIC_WC_VMTP_RESPONSE	194	/* VMTP client: its transaction ended */
#define SRNIC_WC_VMTP_REQUEST	195	/* VMTP server: a Request arrived */
#define SRNIC_WC_VMTP_RESPONDED	196	/* VMTP server: a Response is done with */

/* Completion flags. */
#define SRNIC_WC_WITH_INV	(1U << 0)	/* invalidated_stag is valid */
#define SRNIC_WC_SOLICITED	(1U << 1)	/* a Send with Solicited Event */
#define SRNIC_WC_TRUNCATED	(1U << 2)	/* RMPP, VMTP: msg_len > byte_len */

/*
 * A work completion. `term` carries the TERMINATE that ended the QP (sent or
 * received), as layer << 12 | type << 8 | code, with bit 31 set when srnic
 * received it, or 0.
 */
struct srnic_wc {
	__u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 byte_len;
	__u32 qp_handle;	/* the QP, the RMPP endpoint or the VMTP entity */
	__u32 flags;
	__u32 invalidated_stag;
	__u32 term;		/* VMTP: the request or response code */
	__u32 src_nid;		/* RMPP receive: the sender; VMTP: the transaction */
	__u64 tag;		/* RMPP: the message's match tag; VMTP: the peer entity */
	__u64 msg_len;		/* RMPP receive, VMTP: the whole message's length */
	__u64 reserved;
};

/*
 * SRNIC_IOCTL_POLL_CQ: moves up to num_entries completions into the array at
 * wc_ptr. In: cq_handle, num_entries, wc_ptr. Out: num_entries (how many).
 */
struct srnic_poll_cq {
	__u32 size;
	__u32 cq_handle;
	__u32 num_entries;
	__u32 reserved0;
	__u64 wc_ptr;
	__u64 reserved;
};

/* Queue pair states. */
#define SRNIC_QPS_INIT		0
#define SRNIC_QPS_CONNECTING	1
#define SRNIC_QPS_RTS		2
#define SRNIC_QPS_CLOSING	3
#define SRNIC_QPS_ERROR		4

/*
 * SRNIC_IOCTL_CREATE_QP: a reliable connected queue pair. The capacities are
 * in/out: the kernel may round them up. sq_sig_all: every send is signalled.
 */
struct srnic_create_qp {
	__u32 size;
	__u32 pd_handle;
	__u32 send_cq;
	__u32 recv_cq;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u32 sq_sig_all;
	__u32 qp_handle;
	__u32 reserved0;
	__u64 reserved[2];
};

/* MPA options, for connect and accept, and as negotiated. */
#define SRNIC_MPA_CRC		(1U << 0)	/* ask for CRC32c (used if either side asks) */
#define SRNIC_MPA_MARKERS	(1U << 1)	/* ask the peer to insert markers */
#define SRNIC_MPA_REV1		(1U << 2)	/* speak MPA revision 1 (RFC 5044) only */
#define SRNIC_MPA_P2P		(1U << 3)	/* peer-to-peer mode with an RTR message */
#define SRNIC_MPA_RTR_READ	(1U << 4)	/* RTR as a zero-length READ (else WRITE) */
#define SRNIC_MPA_ALL		((1U << 5) - 1)
/* Only as negotiated (in events and QUERY_QP): per direction. */
#define SRNIC_MPA_CRC_TX	(1U << 8)
#define SRNIC_MPA_CRC_RX	(1U << 9)
#define SRNIC_MPA_MARKERS_TX	(1U << 10)
#define SRNIC_MPA_MARKERS_RX	(1U << 11)

#define SRNIC_MAX_PRIVATE_DATA	252

/* An IPv4 or IPv6 socket address; the port in host byte order. */
struct srnic_sockaddr {
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];		/* IPv4: the first 4 bytes, network byte order */
};

/* SRNIC_IOCTL_QUERY_QP: in: qp_handle; out: the rest. */
struct srnic_query_qp {
	__u32 size;
	__u32 qp_handle;
	__u32 state;
	__u32 mpa_flags;	/* SRNIC_MPA_* as negotiated */
	__u32 ird;
	__u32 ord;
	__u32 term;		/* as in struct srnic_wc */
	__u32 reserved0;
	struct srnic_sockaddr local;
	struct srnic_sockaddr remote;
	__u64 tx_bytes;		/* payload bytes this QP sent (progress, not a rate) */
	__u64 rx_bytes;		/* payload bytes this QP received and placed */
};

/*
 * SRNIC_IOCTL_LISTEN: listens on addr (port 0: any; out: the port). Each
 * incoming, MPA-negotiated-so-far request becomes an SRNIC_EVENT_CONNECT_REQUEST
 * with a conn_id to accept or reject. mpa_flags are what this side asks for.
 */
struct srnic_listen {
	__u32 size;
	__u32 backlog;
	__u32 mpa_flags;
	__u32 listener_handle;
	struct srnic_sockaddr addr;
	__u64 reserved[2];
};

/*
 * SRNIC_IOCTL_CONNECT: connects qp_handle (state INIT) to addr. Completes with
 * SRNIC_EVENT_ESTABLISHED, _REJECTED or _CONNECT_ERROR on the QP.
 */
struct srnic_connect {
	__u32 size;
	__u32 qp_handle;
	__u32 ird;
	__u32 ord;
	__u32 mpa_flags;
	__u32 private_data_len;
	__u64 private_data;	/* user pointer */
	struct srnic_sockaddr addr;
	__u64 reserved[2];
};

/* SRNIC_IOCTL_ACCEPT: accepts conn_id onto qp_handle (state INIT). */
struct srnic_accept {
	__u32 size;
	__u32 conn_id;
	__u32 qp_handle;
	__u32 ird;
	__u32 ord;
	__u32 private_data_len;
	__u64 private_data;
	__u64 reserved[2];
};

/* SRNIC_IOCTL_REJECT: rejects conn_id with an MPA reply carrying R=1. */
struct srnic_reject {
	__u32 size;
	__u32 conn_id;
	__u32 private_data_len;
	__u32 reserved0;
	__u64 private_data;
	__u64 reserved;
};

#define SRNIC_DISCONNECT_ABORT	1U	/* reset the connection instead of closing it */

/* SRNIC_IOCTL_DISCONNECT: closes qp_handle's connection. */
struct srnic_disconnect {
	__u32 size;
	__u32 qp_handle;
	__u32 flags;
	__u32 reserved0;
};

/* Event types (struct srnic_event.event_type). */
#define SRNIC_EVENT_CQ			1	/* handle: an armed CQ fired */
#define SRNIC_EVENT_CONNECT_REQUEST	2	/* handle: listener; conn_id */
#define SRNIC_EVENT_ESTABLISHED		3	/* handle: QP */
#define SRNIC_EVENT_REJECTED		4	/* handle: QP */
#define SRNIC_EVENT_DISCONNECTED	5	/* handle: QP */
#define SRNIC_EVENT_CONNECT_ERROR	6	/* handle: QP; status: -errno */
#define SRNIC_EVENT_QP_ERROR		7	/* handle: QP; term; status: -errno or 0 */
#define SRNIC_EVENT_CQ_ERROR		8	/* handle: CQ overflowed */
#define SRNIC_EVENT_RMPP_ERROR		9	/* handle: RMPP endpoint; status: -errno */

/*
 * What read() returns: whole records, as many as fit. With none pending, read()
 * blocks (EAGAIN with O_NONBLOCK); poll() reports EPOLLIN when one is pending.
 */
struct srnic_event {
	__u32 event_type;
	__u32 handle;
	__u32 conn_id;
	__s32 status;
	__u32 ird;
	__u32 ord;
	__u32 mpa_flags;
	__u32 term;
	struct srnic_sockaddr local;
	struct srnic_sockaddr remote;
	__u32 private_data_len;
	__u32 reserved0;
	__u64 reserved;
	__u8 private_data[256];
};

/*
 * write() posts work requests: a sequence of records, each a struct
 * srnic_post_wr followed by num_sge struct srnic_sge. It returns the bytes of
 * the records it posted; it stops at the first record it cannot post and fails
 * with that record's errno if it is the first (so a short count points at the
 * failing record).
 */
#define SRNIC_WR_SEND			0
#define SRNIC_WR_SEND_WITH_INV		1
#define SRNIC_WR_SEND_WITH_SE		2
#define SRNIC_WR_SEND_WITH_SE_INV	3
#define SRNIC_WR_RDMA_WRITE		4
#define SRNIC_WR_RDMA_READ		5
#define SRNIC_WR_RECV			6

#define SRNIC_SEND_SIGNALED	(1U << 0)
#define SRNIC_SEND_INLINE	(1U << 1)	/* copy the data at post time; lkeys ignored */
#define SRNIC_SEND_FENCE	(1U << 2)	/* wait for earlier READs first */

struct srnic_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

struct srnic_post_wr {
	__u64 wr_id;
	__u32 qp_handle;
	__u16 opcode;		/* SRNIC_WR_* */
	__u16 num_sge;
	__u32 flags;		/* SRNIC_SEND_* */
	__u32 invalidate_rkey;	/* SEND_WITH_INV, SEND_WITH_SE_INV */
	__u64 remote_addr;	/* RDMA_WRITE, RDMA_READ: the tagged offset */
	__u32 rkey;		/* RDMA_WRITE, RDMA_READ */
	__u32 reserved;
};

#define SRNIC_IOCTL_ALLOC_PD		_IOWR(SRNIC_IOCTL_MAGIC, 0x01, struct srnic_alloc_pd)
#define SRNIC_IOCTL_DEALLOC_PD		_IOWR(SRNIC_IOCTL_MAGIC, 0x02, struct srnic_handle_arg)
#define SRNIC_IOCTL_REG_MR		_IOWR(SRNIC_IOCTL_MAGIC, 0x03, struct srnic_reg_mr)
#define SRNIC_IOCTL_DEREG_MR		_IOWR(SRNIC_IOCTL_MAGIC, 0x04, struct srnic_handle_arg)
#define SRNIC_IOCTL_CREATE_CQ		_IOWR(SRNIC_IOCTL_MAGIC, 0x05, struct srnic_create_cq)
#define SRNIC_IOCTL_DESTROY_CQ		_IOWR(SRNIC_IOCTL_MAGIC, 0x06, struct srnic_handle_arg)
#define SRNIC_IOCTL_REQ_NOTIFY_CQ	_IOWR(SRNIC_IOCTL_MAGIC, 0x07, struct srnic_req_notify_cq)
#define SRNIC_IOCTL_POLL_CQ		_IOWR(SRNIC_IOCTL_MAGIC, 0x08, struct srnic_poll_cq)
#define SRNIC_IOCTL_CREATE_QP		_IOWR(SRNIC_IOCTL_MAGIC, 0x09, struct srnic_create_qp)
#define SRNIC_IOCTL_DESTROY_QP		_IOWR(SRNIC_IOCTL_MAGIC, 0x0A, struct srnic_handle_arg)
#define SRNIC_IOCTL_QUERY_QP		_IOWR(SRNIC_IOCTL_MAGIC, 0x0B, struct srnic_query_qp)
#define SRNIC_IOCTL_LISTEN		_IOWR(SRNIC_IOCTL_MAGIC, 0x0C, struct srnic_listen)
#define SRNIC_IOCTL_DESTROY_LISTENER	_IOWR(SRNIC_IOCTL_MAGIC, 0x0D, struct srnic_handle_arg)
#define SRNIC_IOCTL_CONNECT		_IOWR(SRNIC_IOCTL_MAGIC, 0x0E, struct srnic_connect)
#define SRNIC_IOCTL_ACCEPT		_IOWR(SRNIC_IOCTL_MAGIC, 0x0F, struct srnic_accept)
#define SRNIC_IOCTL_REJECT		_IOWR(SRNIC_IOCTL_MAGIC, 0x10, struct srnic_reject)
#define SRNIC_IOCTL_DISCONNECT		_IOWR(SRNIC_IOCTL_MAGIC, 0x11, struct srnic_disconnect)
#define SRNIC_IOCTL_QUERY_STATS		_IOWR(SRNIC_IOCTL_MAGIC, 0x12, struct srnic_stats)
#define SRNIC_IOCTL_QUERY_RES		_IOWR(SRNIC_IOCTL_MAGIC, 0x13, struct srnic_query_res)

/*
 * SRNIC_IOCTL_QUERY_STATS: device-wide counters since the module loaded.
 * Counters are only ever added at the end: the structure grows by size
 * (Documentation/srnic/uapi.rst, "Structures grow"); a program built with a
 * smaller one gets the counters it knows.
 */
struct srnic_stats {
	__u32 size;
	__u32 reserved0;
	__u64 contexts;		/* open files now */
	__u64 pinned_pages;	/* pages pinned by memory regions now */
	__u64 qps;		/* queue pairs now */
	__u64 connections;	/* established connections, in total */
	__u64 tx_fpdus;
	__u64 rx_fpdus;
	__u64 tx_bytes;		/* payload bytes */
	__u64 rx_bytes;
	__u64 terminates_sent;
	__u64 terminates_received;
	__u64 crc_errors;
	/* Gauges of every object srnic holds now: a leak shows as a gauge that
	 * does not return to zero when every program is gone. */
	__u64 pds;		/* protection domains */
	__u64 mrs;		/* memory regions */
	__u64 cqs;		/* completion queues */
	__u64 listeners;	/* listening endpoints */
	__u64 conn_requests;	/* connection requests not yet accepted or rejected */
	__u64 sockets;		/* kernel TCP sockets (listeners, requests, connections) */
	__u64 reserved[2];
	/* Since the first version (160 bytes): the TERMINATEs by layer (RFC 5040
	 * section 7.4: RDMAP, DDP, LLP, the latter MPA's CRC, marker and framing
	 * errors), and work requests completed flushed (WR_FLUSH_ERR). */
	__u64 terminates_sent_rdmap;
	__u64 terminates_sent_ddp;
	__u64 terminates_sent_llp;
	__u64 terminates_received_rdmap;
	__u64 terminates_received_ddp;
	__u64 terminates_received_llp;
	__u64 flushed_wrs;
	/* Since 224 bytes (a caller passing 216 does not get it): payload bytes sent zero-copy
	 * (TCP took references to the pages instead of a copy; see the module
	 * parameter zcopy_min). */
	__u64 tx_zcopy_bytes;
};
/* The first version's size: the smallest srnic_stats a caller may pass. */
#define SRNIC_STATS_SIZE_V1	160

/*
 * SRNIC_IOCTL_QUERY_RES: the objects of one kind srnic holds, device-wide, as
 * `rdma res show` lists an RDMA device's (Documentation/srnic/observability.rst):
 * every object for a caller with CAP_SYS_ADMIN, otherwise those of contexts
 * opened by the caller's effective uid. in: kind (SRNIC_RES_*), entry_size (the
 * kind's record size, else EINVAL), room for max_entries records at entries,
 * and start: how many visible objects to skip. out: num_entries records written
 * (at most SRNIC_RES_MAX_ENTRIES a call) and total, the visible objects of the
 * kind; while start + num_entries < total, ask again from there. Each call is
 * a snapshot: objects come and go between calls.
 */
#define SRNIC_RES_QP		1	/* struct srnic_res_qp */
#define SRNIC_RES_CQ		2	/* struct srnic_res_cq */
#define SRNIC_RES_MR		3	/* struct srnic_res_mr */
#define SRNIC_RES_LISTEN	4	/* struct srnic_res_listen */
#define SRNIC_RES_RMPP		5	/* struct srnic_res_rmpp */
#define SRNIC_RES_VMTP		6	/* struct srnic_res_vmtp */
#define SRNIC_RES_MAX_ENTRIES	256

struct srnic_query_res {
	__u32 size;
	__u32 kind;
	__u32 entry_size;
	__u32 start;
	__u32 max_entries;
	__u32 num_entries;
	__u32 total;
	__u32 reserved0;
	__u64 entries;		/* user pointer */
	__u64 reserved[2];
};

/* Who owns an object: the process that created it, and its context's opener. */
struct srnic_res_owner {
	__s32 pid;		/* thread group id, in the initial pid namespace */
	__u32 uid;		/* the effective uid that opened the context */
	__u32 handle;		/* the object's handle in its context */
	__u32 context;		/* the context's id (unique while the module is loaded) */
};

struct srnic_res_qp {
	struct srnic_res_owner owner;
	__u32 state;		/* SRNIC_QPS_* */
	__u32 mpa_flags;	/* as negotiated */
	__u32 ird;
	__u32 ord;
	__u32 send_cq;		/* handles */
	__u32 recv_cq;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 send_queued;	/* send work requests not yet completed */
	__u32 recv_queued;	/* receives posted, not yet completed */
	__u32 term;		/* as in struct srnic_wc: the TERMINATE that ended it */
	__u32 reserved0;
	struct srnic_sockaddr local;
	struct srnic_sockaddr remote;
	__u64 tx_bytes;		/* payload bytes */
	__u64 rx_bytes;
	__u64 tx_fpdus;
	__u64 rx_fpdus;
};

struct srnic_res_cq {
	struct srnic_res_owner owner;
	__u32 cqe;		/* capacity */
	__u32 queued;		/* completions waiting to be polled */
	__u32 users;		/* QPs and endpoints completing to it */
	__u32 reserved0;
};

struct srnic_res_mr {
	struct srnic_res_owner owner;
	__u32 lkey;		/* the STag */
	__u32 access;		/* SRNIC_ACCESS_* */
	__u64 addr;
	__u64 length;
	__u64 pinned_pages;	/* pages this region pins (charged to RLIMIT_MEMLOCK) */
};

struct srnic_res_listen {
	struct srnic_res_owner owner;
	__u32 mpa_flags;	/* what this side asks for */
	__u32 backlog;
	__u32 pending;		/* requests waiting for ACCEPT or REJECT */
	__u32 reserved0;
	struct srnic_sockaddr addr;
};

struct srnic_res_rmpp {
	struct srnic_res_owner owner;
	__s32 ifindex;
	__u32 nid;
	__u32 ethertype;
	__u32 active_sends;
	__u32 active_recvs;
	__u32 srtt_us;		/* the sender's smoothed round trip (0: none yet) */
};

struct srnic_res_vmtp {
	struct srnic_res_owner owner;
	__u64 entity;		/* its identifier */
	__u32 role;		/* SRNIC_VMTP_CLIENT or SRNIC_VMTP_SERVER */
	__u32 in_progress;	/* client: its transaction (0 or 1); server: Requests and Responses it holds */
	__u32 posted;		/* server: Request buffers posted */
	__u32 reserved0;
};

/* RMPP endpoint commands take numbers 0x40 to 0x5F. */

/*
 * Sandia RMPP (see Documentation/srnic/rmpp.rst). Endpoints are objects of the
 * file like QPs; a node table (NID -> MAC address and netdev) is shared by the
 * whole module and changed with CAP_NET_ADMIN. Completions go to CQs
 * (SRNIC_WC_RMPP_SEND / SRNIC_WC_RMPP_RECV) and are waited for through read()
 * and poll() like every other completion.
 */
#define SRNIC_RMPP_ETHERTYPE	0x88B5	/* IEEE 802 local experimental 1 */
#define SRNIC_RMPP_MAX_NID	1023	/* NIDs are 0 .. SRNIC_RMPP_MAX_NID */
#define SRNIC_RMPP_ANY_NID	0xFFFFFFFFU
#define SRNIC_RMPP_MAX_MSG	0xFFFFFFFFULL	/* bytes in one message */

/*
 * More completion status codes. SRNIC_WC_RETRY_EXC_ERR: an RMPP send got no
 * answer within max_retries; an iWARP QP's peer stopped reading or
 * acknowledging for the module's tx_stall_timeout_ms (the oldest operation in
 * progress; the rest is flushed).
 */
#define SRNIC_WC_RETRY_EXC_ERR	12	/* no answer from the peer in time */
#define SRNIC_WC_REM_ABORT_ERR	16	/* receive: the sender aborted (NULL) or it was reclaimed */

#define SRNIC_RMPP_NODE_DELETE	1U	/* remove the entry instead of setting it */

/*
 * SRNIC_IOCTL_RMPP_SET_NODE: sets (or with SRNIC_RMPP_NODE_DELETE removes)
 * the node table entry of nid: its MAC address and the netdev it is reached
 * through. Needs CAP_NET_ADMIN.
 */
struct srnic_rmpp_node {
	__u32 size;
	__u32 nid;
	__u32 flags;	/* SRNIC_RMPP_NODE_* */
	__u32 reserved0;
	__u8 mac[6];
	__u8 reserved1[2];
	char ifname[16];	/* the netdev, NUL-terminated */
	__u64 reserved;
};

/* Endpoint flags. */
#define SRNIC_RMPP_EP_DROP_UNEXPECTED	(1U << 0)	/* refuse (MSGDROP) a message no receive matches */
#define SRNIC_RMPP_EP_RESTART_FROM_START	(1U << 1)	/* paper restart: resend the whole message */
/*
 * Receiver-driven recovery (Documentation/srnic/rmpp.rst, "NAKs"): by default
 * an endpoint offers and uses selective NAKs with every peer that offers them
 * too; GO_BACK_NAK limits it to NAKs that send again from the first lost
 * packet, NO_NAK to the paper's sender timeout. Both at once is EINVAL.
 */
#define SRNIC_RMPP_EP_GO_BACK_NAK	(1U << 2)
#define SRNIC_RMPP_EP_NO_NAK		(1U << 3)
#define SRNIC_RMPP_EP_ALL		((1U << 4) - 1)

/*
 * SRNIC_IOCTL_RMPP_CREATE_EP: an endpoint with local NID nid on the netdev
 * ifname. Zero tuning fields take the defaults; the kernel writes back what it
 * uses. EADDRINUSE if an endpoint already has this NID on this netdev and
 * EtherType. Needs CAP_NET_RAW for the netdev (EPERM).
 */
struct srnic_rmpp_create_ep {
	__u32 size;
	__u32 pd_handle;	/* MRs named by lkey must belong to it */
	__u32 nid;	/* local NID */
	__u32 send_cq;
	__u32 recv_cq;
	__u32 flags;	/* SRNIC_RMPP_EP_* */
	char ifname[16];	/* the netdev, NUL-terminated */
	__u32 ethertype;	/* 0 or SRNIC_RMPP_ETHERTYPE; anything else is EINVAL */
	__u32 max_send;	/* in/out: messages in flight (0: default) */
	__u32 max_recv;	/* in/out: posted receives (0: default) */
	__u32 rto_us;	/* in/out: retransmission timeout before the first
			 * round-trip sample, and the largest */
	__u32 max_retries;	/* in/out: timeouts per message before it fails */
	__u32 reclaim_ms;	/* in/out: receiver state without activity is freed */
	__u32 max_rcv_buf;	/* in/out: grant pool (paper: MAX_RCV_BUF) */
	__u32 nodes;	/* in/out: pool share kept for first packets (paper: NODES) */
	__u32 max_data_pkts;	/* in/out: largest grant (paper: MAX_DATA_PKTS) */
	__u32 mtu;	/* out: RMPP packet size, header included */
	__u32 ep_handle;	/* out */
	__u32 min_rto_us;	/* in/out: smallest timeout the round-trip
				 * estimate may set; rto_us: a fixed timeout */
	__u64 reserved[2];
};

/*
 * SRNIC_IOCTL_RMPP_SEND: sends length bytes at addr to dst_nid with tag.
 * Completes with SRNIC_WC_RMPP_SEND on the send CQ: byte_len is what the
 * receiver took (less than msg_len when it truncated). EAGAIN when max_send
 * messages are in flight.
 */
struct srnic_rmpp_send {
	__u32 size;
	__u32 ep_handle;
	__u64 wr_id;
	__u64 tag;	/* the 64-bit match tag */
	__u64 addr;	/* user pointer (in lkey's region if lkey != 0) */
	__u64 length;	/* at most SRNIC_RMPP_MAX_MSG */
	__u32 lkey;	/* 0: pin the buffer while the message is in flight */
	__u32 dst_nid;
	__u64 reserved;
};

/*
 * SRNIC_IOCTL_RMPP_POST_RECV: a receive for the first message (in posting
 * order) whose tag matches: (tag ^ match_bits) & ~ignore_bits == 0, from
 * src_nid. Completes with SRNIC_WC_RMPP_RECV on the receive CQ. EAGAIN when
 * max_recv receives are posted.
 */
struct srnic_rmpp_post_recv {
	__u32 size;
	__u32 ep_handle;
	__u64 wr_id;
	__u64 match_bits;
	__u64 ignore_bits;	/* tag bits that do not take part in matching */
	__u64 addr;	/* user pointer (in lkey's region if lkey != 0) */
	__u64 length;	/* the most bytes taken; longer messages are truncated */
	__u32 lkey;	/* 0: pin the buffer while the receive is posted */
	__u32 src_nid;	/* SRNIC_RMPP_ANY_NID: any sender */
	__u64 reserved;
};

/*
 * SRNIC_IOCTL_RMPP_QUERY_STATS: module-wide RMPP counters since load (gauges:
 * endpoints, active_sends, active_recvs, endpoints_lingering).
 */
struct srnic_rmpp_stats {
	__u32 size;
	__u32 reserved0;
	__u64 endpoints;	/* RMPP endpoints now */
	__u64 active_sends;	/* outgoing messages the engines hold now */
	__u64 active_recvs;	/* incoming messages the engines hold now */
	__u64 msgs_sent;	/* sends the receiver acknowledged (MSGEND) */
	__u64 msgs_received;	/* receives completed */
	__u64 msgs_truncated;	/* receives truncated to the posted length */
	__u64 send_failed;	/* sends that got no answer within max_retries */
	__u64 send_dropped;	/* sends the receiver refused (MSGDROP) */
	__u64 send_aborted;	/* sends aborted by the endpoint's destruction (NULL sent) */
	__u64 recv_aborted;	/* receives aborted by the sender (NULL) or reclaimed */
	__u64 tx_packets;	/* packets sent */
	__u64 rx_packets;	/* packets the engines accepted */
	__u64 tx_bytes;	/* payload bytes sent */
	__u64 rx_bytes;	/* payload bytes placed */
	__u64 retransmits;	/* sender timeouts that resent an RTS or restarted data */
	__u64 grants;	/* CTS grants issued */
	__u64 granted_packets;	/* data packets granted */
	__u64 grants_limited;	/* grants the shared pool made smaller (Figure 8 rule) */
	__u64 unexpected_held;	/* first packets with no matching receive, left to the sender to retry */
	__u64 unexpected_dropped;	/* messages refused for want of a matching receive */
	__u64 drop_short;	/* frames shorter than the header or its payload length */
	__u64 drop_bad_version;	/* frames with another protocol version */
	__u64 drop_bad_type;	/* frames with an unknown packet type */
	__u64 drop_other_nid;	/* frames addressed to a NID no endpoint here owns (per endpoint) */
	__u64 drop_unknown_nid;	/* frames from a NID outside the node table */
	__u64 drop_queue_full;	/* frames dropped because an endpoint's receive queue was full */
	__u64 drop_malformed;	/* frames with inconsistent header fields */
	__u64 drop_duplicate;	/* duplicate or stale packets */
	__u64 drop_out_of_order;	/* first packets ahead of the per-sender message order */
	__u64 drop_table_full;	/* first packets refused because the receive table was full */
	__u64 drop_unknown_msg;	/* packets for a message the endpoint does not know */
	__u64 drop_unexpected;	/* valid packets the message's state did not expect */
	__u64 tx_errors;	/* packets that could not be sent (no route, no memory, queue full) */
	__u64 drop_spoofed;	/* frames whose source MAC is not the node table's for the NID they claim */
	__u64 endpoints_lingering;	/* closed endpoints still answering their peers now */
	__u64 linger_expired;	/* closed endpoints that stopped lingering with peers unacknowledged */
	__u64 naks_sent;	/* NAKs and selective NAKs sent by receivers */
	__u64 naks_received;	/* NAKs and selective NAKs senders acted on */
	__u64 resent_packets;	/* packets sent again (after a timeout or a NAK) */
	__u64 resent_bytes;	/* payload bytes of resent_packets */
	__u64 reserved[1];
};

#define SRNIC_IOCTL_RMPP_SET_NODE	_IOWR(SRNIC_IOCTL_MAGIC, 0x40, struct srnic_rmpp_node)
#define SRNIC_IOCTL_RMPP_CREATE_EP	_IOWR(SRNIC_IOCTL_MAGIC, 0x41, struct srnic_rmpp_create_ep)
#define SRNIC_IOCTL_RMPP_DESTROY_EP	_IOWR(SRNIC_IOCTL_MAGIC, 0x42, struct srnic_handle_arg)
#define SRNIC_IOCTL_RMPP_SEND		_IOWR(SRNIC_IOCTL_MAGIC, 0x43, struct srnic_rmpp_send)
#define SRNIC_IOCTL_RMPP_POST_RECV	_IOWR(SRNIC_IOCTL_MAGIC, 0x44, struct srnic_rmpp_post_recv)
#define SRNIC_IOCTL_RMPP_QUERY_STATS	_IOWR(SRNIC_IOCTL_MAGIC, 0x45, struct srnic_rmpp_stats)

/* VMTP commands take numbers 0x60 to 0x7F. */

/*
 * VMTP, the Versatile Message Transaction Protocol (RFC 1045; see
 * Documentation/srnic/vmtp.rst): Request/Response message transactions over
 * IPv4, IP protocol 81. A VMTP entity (a client or a server) is an object of
 * the file like an RMPP endpoint, in the network namespace of the process
 * that creates it; its identifier is an Internet-domain entity: a 28-bit
 * discriminator and an IPv4 address of the host (RFC 1045, Appendix IV),
 * unique in the namespace. A client has one transaction at a time; a server
 * answers many clients. Completions go to a CQ and are waited for through
 * read() and poll() like every other completion:
 *
 *   SRNIC_WC_VMTP_RESPONSE (client): the transaction ended. SUCCESS: the
 *     Response arrived; byte_len bytes of it were placed (msg_len is its
 *     size; SRNIC_WC_TRUNCATED when the buffer was shorter), term is its
 *     code. SRNIC_WC_RETRY_EXC_ERR: no answer after max_retries
 *     retransmissions; SRNIC_WC_REM_OP_ERR: the server answered with an
 *     error, whose VMTP code (RFC 1045, Appendix I: 4 is no such entity, 3
 *     busy) is in term; SRNIC_WC_WR_FLUSH_ERR: the entity was destroyed.
 *     tag is the server, src_nid the transaction.
 *   SRNIC_WC_VMTP_REQUEST (server): a whole Request arrived in a posted
 *     buffer: byte_len bytes placed of msg_len; tag is the client, src_nid
 *     the transaction and term the request code, to be named by
 *     SRNIC_IOCTL_VMTP_RESPOND. A Request given up incomplete (its client
 *     moved on or stopped sending) leaves its buffer posted for the next;
 *     SRNIC_WC_WR_FLUSH_ERR: the entity was destroyed.
 *   SRNIC_WC_VMTP_RESPONDED (server): a Response's buffer is free again.
 *     SUCCESS: the client acknowledged it; SRNIC_WC_RETRY_EXC_ERR: it did
 *     not, after the retransmissions; SRNIC_WC_WR_FLUSH_ERR: the entity was
 *     destroyed.
 */
#define SRNIC_VMTP_MAX_SEGMENT	16384	/* bytes of data in one Request or Response */
/*
 * Request and response codes are the 24-bit value of the RFC's code fields:
 * a response code of 0 is OK, other values below 0x800000 are VMTP's own
 * (RFC 1045, Appendix I), the application's start at 0x800000.
 */
#define SRNIC_VMTP_MAX_CODE	0xFFFFFF
#define SRNIC_VMTP_APPLICATION_CODE	0x800000
#define SRNIC_VMTP_MAX_DISCRIMINATOR	0x0FFFFFFF

#define SRNIC_VMTP_CLIENT	1
#define SRNIC_VMTP_SERVER	2

/* Entity flags. */
#define SRNIC_VMTP_NO_CHECKSUM	(1U << 0)	/* send without checksums (received ones are still checked) */
#define SRNIC_VMTP_ALL		((1U << 1) - 1)

/*
 * SRNIC_IOCTL_VMTP_CREATE: a client or server entity with discriminator on
 * the local IPv4 address addr. A client's discriminator may be 0: the kernel
 * picks a free one. Zero tuning fields take the defaults; the kernel writes
 * back what it uses. EADDRINUSE if the namespace has the entity already;
 * EADDRNOTAVAIL if no interface has addr.
 */
struct srnic_vmtp_create {
	__u32 size;
	__u32 pd_handle;	/* MRs named by lkey must belong to it */
	__u32 cq_handle;	/* completions */
	__u32 role;	/* SRNIC_VMTP_CLIENT or SRNIC_VMTP_SERVER */
	__u8 addr[4];	/* a local IPv4 address */
	__u32 discriminator;	/* in/out: at most SRNIC_VMTP_MAX_DISCRIMINATOR */
	__u32 flags;	/* SRNIC_VMTP_* */
	__u32 max_clients;	/* in/out, server: clients it keeps records of at once */
	__u32 max_recv;	/* in/out, server: posted Request buffers */
	__u32 response_timeout_ms;	/* in/out: wait for an answer before retransmitting */
	__u32 max_retries;	/* in/out: retransmissions before a transaction fails */
	__u32 packet_gap_us;	/* in/out: gap between the packets of a group (rate control) */
	__u32 mtu;	/* out: largest IP packet the entity sends */
	__u32 handle;	/* out */
	__u64 entity;	/* out: the entity identifier */
	__u64 reserved[2];
};

/* Request flags. */
#define SRNIC_VMTP_DATAGRAM	(1U << 0)	/* no Response: completes once sent */

/*
 * SRNIC_IOCTL_VMTP_REQUEST (client): a transaction with server: the Request
 * of length bytes at addr, code, and a buffer for the Response. EBUSY while
 * the client's last transaction is in progress.
 */
struct srnic_vmtp_request {
	__u32 size;
	__u32 handle;
	__u64 wr_id;
	__u64 server;	/* the server's entity identifier */
	__u32 code;	/* at most SRNIC_VMTP_MAX_CODE */
	__u32 flags;	/* SRNIC_VMTP_DATAGRAM */
	__u64 addr;	/* user pointer (in lkey's region if lkey != 0) */
	__u32 length;	/* at most SRNIC_VMTP_MAX_SEGMENT */
	__u32 lkey;	/* 0: pin the buffer while the transaction is in progress */
	__u64 resp_addr;
	__u32 resp_length;	/* bytes beyond it are dropped (SRNIC_WC_TRUNCATED) */
	__u32 resp_lkey;
	__u64 reserved;
};

/*
 * SRNIC_IOCTL_VMTP_POST_RECV (server): a buffer for the next Request. A
 * Request that finds none waits for its client's retransmission. EAGAIN when
 * max_recv buffers are posted.
 */
struct srnic_vmtp_post_recv {
	__u32 size;
	__u32 handle;
	__u64 wr_id;
	__u64 addr;
	__u32 length;
	__u32 lkey;
	__u64 reserved;
};

/*
 * SRNIC_IOCTL_VMTP_RESPOND (server): answers the Request of client's
 * transaction (from its SRNIC_WC_VMTP_REQUEST) with length bytes at addr and
 * code. ENOENT when no such Request waits for an answer.
 */
struct srnic_vmtp_respond {
	__u32 size;
	__u32 handle;
	__u64 wr_id;
	__u64 client;
	__u32 transaction;
	__u32 code;	/* at most SRNIC_VMTP_MAX_CODE */
	__u64 addr;
	__u32 length;	/* at most SRNIC_VMTP_MAX_SEGMENT */
	__u32 lkey;
	__u64 reserved;
};

/*
 * SRNIC_IOCTL_VMTP_QUERY_STATS: module-wide VMTP counters since load (gauges:
 * entities, namespaces).
 */
struct srnic_vmtp_stats {
	__u32 size;
	__u32 reserved0;
	__u64 entities;	/* VMTP entities now */
	__u64 namespaces;	/* network namespaces with a VMTP socket now */
	__u64 transactions;	/* client transactions that ended with a Response */
	__u64 failed;	/* client transactions that failed */
	__u64 requests;	/* Requests servers received whole */
	__u64 requests_abandoned;	/* Requests given up incomplete */
	__u64 responses_acked;	/* Responses their clients acknowledged */
	__u64 responses_discarded;	/* Responses discarded unacknowledged */
	__u64 tx_packets;	/* packets sent */
	__u64 rx_packets;	/* packets the entities accepted */
	__u64 tx_bytes;	/* segment bytes sent */
	__u64 rx_bytes;	/* segment bytes placed */
	__u64 retransmitted_blocks;	/* 512-byte blocks sent again */
	__u64 timeouts;	/* headers sent again with APG after a timeout */
	__u64 notifies_sent;	/* acknowledgements and retransmission requests sent */
	__u64 notifies_received;	/* ... acted on */
	__u64 duplicates;	/* duplicate packets recognised */
	__u64 drop_short;	/* datagrams shorter than an IP and VMTP header */
	__u64 drop_bad_header;	/* headers that do not parse (length, version, reserved bits) */
	__u64 drop_checksum;	/* packets whose checksum did not match */
	__u64 drop_unsupported;	/* another domain, or features not implemented (groups, streaming, security) */
	__u64 drop_unknown_entity;	/* packets for an entity this namespace does not have */
	__u64 drop_stale;	/* duplicates, old transactions, stale Notifies */
	__u64 drop_malformed;	/* fields inconsistent with the message */
	__u64 drop_table_full;	/* Requests refused for want of a client record */
	__u64 drop_no_buffer;	/* Requests that found no posted buffer (the client retries) */
	__u64 tx_errors;	/* packets that could not be sent */
	__u64 blocks_requested;	/* 512-byte blocks asked of peers again (RETRY Notifies sent) */
	__u64 reserved[3];
};

#define SRNIC_IOCTL_VMTP_CREATE		_IOWR(SRNIC_IOCTL_MAGIC, 0x60, struct srnic_vmtp_create)
#define SRNIC_IOCTL_VMTP_DESTROY	_IOWR(SRNIC_IOCTL_MAGIC, 0x61, struct srnic_handle_arg)
#define SRNIC_IOCTL_VMTP_REQUEST	_IOWR(SRNIC_IOCTL_MAGIC, 0x62, struct srnic_vmtp_request)
#define SRNIC_IOCTL_VMTP_POST_RECV	_IOWR(SRNIC_IOCTL_MAGIC, 0x63, struct srnic_vmtp_post_recv)
#define SRNIC_IOCTL_VMTP_RESPOND	_IOWR(SRNIC_IOCTL_MAGIC, 0x64, struct srnic_vmtp_respond)
#define SRNIC_IOCTL_VMTP_QUERY_STATS	_IOWR(SRNIC_IOCTL_MAGIC, 0x65, struct srnic_vmtp_stats)

/*
 * srnic_blk: the protocol between the block device client srnic_blk.ko and
 * its server, `srnic blk serve` (Documentation/srnic/blk.rst). It runs over
 * iWARP queue pairs, one per hardware queue of the client; every field is
 * little-endian. The client connects with a srnic_blk_hello as private data;
 * the server accepts with a srnic_blk_export (or rejects with a text saying
 * why). Data moves by RDMA WRITE and READ into and out of the export's
 * region; srnic_blk_msg SENDs ask the server to make a range durable (msync)
 * and carry its answer.
 */
#define SRNIC_BLK_MAGIC		0x4b425253	/* "SRBK" */
#define SRNIC_BLK_VERSION	1

struct srnic_blk_hello {
	__u32 magic;		/* SRNIC_BLK_MAGIC */
	__u16 version;		/* SRNIC_BLK_VERSION */
	__u16 queue;		/* this QP's hardware queue, 0 .. nr_queues - 1 */
	__u16 nr_queues;	/* the client's hardware queues (and QPs) */
	__u16 depth;		/* the most requests in flight on this QP */
	__u32 reserved;
};

#define SRNIC_BLK_EXPORT_READ_ONLY	1	/* srnic_blk_export.flags: no writes */

struct srnic_blk_export {
	__u32 magic;		/* SRNIC_BLK_MAGIC */
	__u16 version;		/* SRNIC_BLK_VERSION */
	__u16 flags;		/* SRNIC_BLK_EXPORT_* */
	__u32 rkey;		/* the export's region */
	__u32 block_size;	/* the logical block size, bytes */
	__u64 addr;		/* the export's first byte in the region */
	__u64 size;		/* the export's length, bytes */
};

#define SRNIC_BLK_MSG_FLUSH	1	/* client: make [offset, offset + length) durable */
#define SRNIC_BLK_MSG_FLUSHED	2	/* server: done, with status */

struct srnic_blk_msg {
	__u32 magic;		/* SRNIC_BLK_MAGIC */
	__u16 kind;		/* SRNIC_BLK_MSG_* */
	__u16 status;		/* FLUSHED: 0, or the positive errno msync gave */
	__u64 tag;		/* the client's request, echoed in the answer */
	__u64 offset;		/* FLUSH: the range; length 0 is the whole export */
	__u64 length;
};

#endif /* _UAPI_SRNIC_H */
