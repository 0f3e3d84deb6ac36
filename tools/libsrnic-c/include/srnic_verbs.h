/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * srnic_verbs.h: the C API of the srnic verbs library (libsrnic_verbs.a / .so,
 * installed as libsrnic.a / libsrnic.so.1: pkg-config srnic), in the shape of
 * libibverbs and librdmacm.
 *
 * Conventions:
 *  - Every function returns 0 (or a non-negative count) on success and a
 *    negative errno on failure, e.g. -EINVAL for a NULL handle, -ENOENT or
 *    -EINVAL for a handle the module does not know, -EBUSY when destroying an
 *    object that is still in use (a PD with MRs or QPs, a CQ with QPs, a
 *    context with any object), -ETIMEDOUT when a wait ran out.
 *  - Handles are opaque pointers. A destroy function that succeeds frees the
 *    handle; one that fails with -EBUSY leaves it valid.
 *  - timeout_ms < 0 waits forever; 0 does not sleep.
 *  - Structures, flags and constants of the kernel ABI come from <srnic.h>
 *    (uapi/srnic.h): struct srnic_wc, struct srnic_sge, struct srnic_stats,
 *    struct srnic_query_device, struct srnic_query_qp, SRNIC_WR_*, SRNIC_SEND_*,
 *    SRNIC_ACCESS_*, SRNIC_MPA_*, SRNIC_WC_*, SRNIC_EVENT_*.
 *  - Every function may be called from any thread; one object may be used by
 *    several threads at once except for destroying it.
 *
 * Events of all objects share the context's file descriptor (srnic_get_fd);
 * the library reads them and hands each to the object it is about, so
 * srnic_wait_cq(), srnic_get_connect_request() and srnic_wait_qp_event() on
 * different objects do not steal each other's events.
 */
#ifndef SRNIC_VERBS_H
#define SRNIC_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <srnic.h>

#ifdef __cplusplus
extern "C" {
#endif

struct srnic_context;		/* an open /dev/srnic (ibv_context) */
struct srnic_pd;		/* protection domain (ibv_pd) */
struct srnic_mr;		/* memory region (ibv_mr) */
struct srnic_cq;		/* completion queue with its channel (ibv_cq) */
struct srnic_qp;		/* reliable connected queue pair (ibv_qp) */
struct srnic_listener;		/* a listening endpoint (rdma_cm_id listening) */
struct srnic_conn_request;	/* an incoming connection request */
struct srnic_vmtp;		/* a VMTP entity (RFC 1045) */

/* Queue pair creation attributes; the capacities are in/out. */
struct srnic_qp_init_attr {
	struct srnic_cq *send_cq;
	struct srnic_cq *recv_cq;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	int sq_sig_all;			/* non-zero: every send is signalled */
};

/* Connection parameters (rdma_conn_param). */
struct srnic_conn_param {
	const void *private_data;	/* at most SRNIC_MAX_PRIVATE_DATA bytes */
	uint32_t private_data_len;
	uint32_t ird;			/* inbound READs in flight (clamped to max_ird) */
	uint32_t ord;			/* outbound READs in flight (clamped to max_ord) */
	uint32_t mpa_flags;		/* SRNIC_MPA_* requests; connect only (listen takes its own) */
};

/* A send work request (ibv_send_wr, as an array element instead of a list). */
struct srnic_send_wr {
	uint64_t wr_id;
	uint32_t opcode;		/* SRNIC_WR_SEND ... SRNIC_WR_RDMA_READ */
	uint32_t send_flags;		/* SRNIC_SEND_SIGNALED | _INLINE | _FENCE */
	const struct srnic_sge *sg_list;
	uint32_t num_sge;
	uint32_t invalidate_rkey;	/* SEND_WITH_INV, SEND_WITH_SE_INV */
	uint64_t remote_addr;		/* RDMA WRITE/READ: the peer's virtual address */
	uint32_t rkey;			/* RDMA WRITE/READ: the peer's STag */
	uint32_t reserved;
};

/* A receive work request (ibv_recv_wr). */
struct srnic_recv_wr {
	uint64_t wr_id;
	const struct srnic_sge *sg_list;
	uint32_t num_sge;
	uint32_t reserved;
};

/* What a connection request (or an established connection) carries. */
struct srnic_conn_info {
	struct sockaddr_storage local;	/* ss_family 0 if unknown */
	struct sockaddr_storage remote;
	uint32_t ird;
	uint32_t ord;
	uint32_t mpa_flags;		/* requested (request) or negotiated (established) */
	uint32_t private_data_len;
	uint8_t private_data[256];
};

/* Context. path NULL: /dev/srnic. srnic_close fails with -EBUSY while objects exist. */
int srnic_open(const char *path, struct srnic_context **ctx);
int srnic_close(struct srnic_context *ctx);
/* The event fd, for poll/epoll. When it polls readable call srnic_process_events(). */
int srnic_get_fd(struct srnic_context *ctx);
/* Reads ready events into the library's queues; returns how many are queued. */
int srnic_process_events(struct srnic_context *ctx);
/*
 * Event records read from the file so far by any call on ctx. Every wait, a
 * zero-timeout one included, may read other objects' records into the
 * library's queue, after which the fd no longer polls readable for them: a
 * thread that dispatches from poll() repeats its per-object waits until a
 * round of them leaves this count unchanged.
 */
unsigned long long srnic_events_read(struct srnic_context *ctx);
int srnic_query_device(struct srnic_context *ctx, struct srnic_query_device *attr);
int srnic_query_stats(struct srnic_context *ctx, struct srnic_stats *stats);

/* Protection domains. */
int srnic_alloc_pd(struct srnic_context *ctx, struct srnic_pd **pd);
int srnic_dealloc_pd(struct srnic_pd *pd);

/*
 * Memory regions. [addr, addr + length) must stay mapped until srnic_dereg_mr.
 * The device writes the memory for receives, RDMA READ results and (with
 * SRNIC_ACCESS_REMOTE_WRITE) peer writes: don't touch those bytes meanwhile.
 */
int srnic_reg_mr(struct srnic_pd *pd, void *addr, size_t length, uint32_t access,
		 struct srnic_mr **mr);
int srnic_dereg_mr(struct srnic_mr *mr);
uint32_t srnic_mr_lkey(const struct srnic_mr *mr);	/* 0 for NULL */
uint32_t srnic_mr_rkey(const struct srnic_mr *mr);	/* 0 for NULL */

/* Completion queues. */
int srnic_create_cq(struct srnic_context *ctx, uint32_t cqe, struct srnic_cq **cq);
int srnic_destroy_cq(struct srnic_cq *cq);
/* Returns how many completions were written to wc (0..num_entries). */
int srnic_poll_cq(struct srnic_cq *cq, int num_entries, struct srnic_wc *wc);
/* Arms the CQ once. Returns 1 if it already holds completions (poll first), else 0. */
int srnic_req_notify_cq(struct srnic_cq *cq, int solicited_only);
/* Waits for the CQ's notification (ibv_get_cq_event): 0, -ETIMEDOUT, or -EOVERFLOW. */
int srnic_wait_cq(struct srnic_cq *cq, int timeout_ms);
/* Poll, arm, re-poll, sleep: returns >= 1 completions, or 0 when the timeout ran out. */
int srnic_poll_cq_wait(struct srnic_cq *cq, int num_entries, struct srnic_wc *wc,
		       int timeout_ms);

/* Queue pairs. */
int srnic_create_qp(struct srnic_pd *pd, struct srnic_qp_init_attr *attr, struct srnic_qp **qp);
int srnic_destroy_qp(struct srnic_qp *qp);
uint32_t srnic_qp_handle(const struct srnic_qp *qp);	/* as in srnic_wc.qp_handle */
int srnic_query_qp(struct srnic_qp *qp, struct srnic_query_qp *attr);
/*
 * Posts an array of work requests with one write(), allocating nothing.
 * Returns 0 when all were posted; else -errno of the first one that was not,
 * with *posted (if not NULL) set to how many were (ibv_post_send's bad_wr).
 * An unknown opcode, or an sg_list of NULL with a non-zero num_sge, fails
 * the call with -EINVAL before any request of it is posted.
 */
int srnic_post_send(struct srnic_qp *qp, const struct srnic_send_wr *wr, unsigned int num_wr,
		    unsigned int *posted);
int srnic_post_recv(struct srnic_qp *qp, const struct srnic_recv_wr *wr, unsigned int num_wr,
		    unsigned int *posted);

/* Connection management. addr: a struct sockaddr_in or sockaddr_in6. */
int srnic_listen(struct srnic_context *ctx, const struct sockaddr *addr, int backlog,
		 uint32_t mpa_flags, struct srnic_listener **listener);
int srnic_listener_port(const struct srnic_listener *listener);	/* the bound port */
int srnic_destroy_listener(struct srnic_listener *listener);
/* Waits for a connection request: 0 with *req set, or -ETIMEDOUT. */
int srnic_get_connect_request(struct srnic_listener *listener, int timeout_ms,
			      struct srnic_conn_request **req);
int srnic_conn_request_info(const struct srnic_conn_request *req, struct srnic_conn_info *info);
/*
 * Accepts req onto qp (which must not be connected yet) and waits for the
 * connection to be established. req is consumed (freed) in every case.
 * info, if not NULL, receives the established connection's parameters.
 */
int srnic_accept(struct srnic_conn_request *req, struct srnic_qp *qp,
		 const struct srnic_conn_param *param, int timeout_ms,
		 struct srnic_conn_info *info);
/* Rejects req (freed in every case). */
int srnic_reject(struct srnic_conn_request *req, const void *private_data, uint32_t len);
/*
 * Connects qp to addr and waits for the outcome: 0, -ECONNREFUSED when the
 * peer rejected, the connection's errno, or -ETIMEDOUT.
 */
int srnic_connect(struct srnic_qp *qp, const struct sockaddr *addr,
		  const struct srnic_conn_param *param, int timeout_ms,
		  struct srnic_conn_info *info);
/* flags: 0 (graceful) or SRNIC_DISCONNECT_ABORT. A DISCONNECTED event follows. */
int srnic_disconnect(struct srnic_qp *qp, uint32_t flags);
/* Waits for the next event of qp; returns its SRNIC_EVENT_* type, or -ETIMEDOUT. */
int srnic_wait_qp_event(struct srnic_qp *qp, int timeout_ms);
/*
 * srnic_wait_qp_event with what the event carries: info (if not NULL) gets its
 * addresses, IRD/ORD, MPA flags and private data (ESTABLISHED: the peer's
 * accept or request, REJECTED: the reject's), status (if not NULL) its status
 * (CONNECT_ERROR: -errno; else 0).
 */
int srnic_wait_qp_event_info(struct srnic_qp *qp, int timeout_ms, struct srnic_conn_info *info,
			     int32_t *status);
/* Waits for SRNIC_EVENT_DISCONNECTED on qp: 0 or -ETIMEDOUT. */
int srnic_wait_disconnected(struct srnic_qp *qp, int timeout_ms);

/*
 * VMTP entities (RFC 1045; Documentation/srnic/vmtp.rst), completing into
 * cq (SRNIC_WC_VMTP_RESPONSE, SRNIC_WC_VMTP_REQUEST, SRNIC_WC_VMTP_RESPONDED,
 * with the fields struct srnic_wc documents). attr is the kernel's struct
 * srnic_vmtp_create: role, addr, discriminator, flags and the tuning fields
 * in (the library sets size and the handles); on success it holds the values
 * in use, mtu, handle and entity.
 */
int srnic_vmtp_create(struct srnic_pd *pd, struct srnic_cq *cq, struct srnic_vmtp_create *attr,
		      struct srnic_vmtp **e);
/* Destroys e: its transaction, posted buffers and Responses end flushed. */
int srnic_vmtp_destroy(struct srnic_vmtp *e);
/* e's entity identifier (0 for NULL). */
uint64_t srnic_vmtp_entity(const struct srnic_vmtp *e);
/* The identifier of entity discriminator on the host addr (network order). */
static inline uint64_t srnic_vmtp_entity_id(uint32_t discriminator, const uint8_t addr[4])
{
	return (uint64_t)discriminator << 32 | (uint64_t)addr[0] << 24 | (uint64_t)addr[1] << 16 |
	       (uint64_t)addr[2] << 8 | addr[3];
}
/*
 * Client: a transaction with server (one at a time, -EBUSY meanwhile): the
 * Request's bytes req, code (at most SRNIC_VMTP_MAX_CODE), and the Response
 * buffer resp, which the device writes until the transaction completes (the
 * caller keeps off it). An SGE with lkey 0 is plain memory, pinned while the
 * transaction lasts. flags SRNIC_VMTP_DATAGRAM: no Response (resp NULL; req
 * plain memory).
 */
int srnic_vmtp_request(struct srnic_vmtp *e, uint64_t wr_id, uint64_t server, uint32_t code,
		       uint32_t flags, const struct srnic_sge *req, const struct srnic_sge *resp);
/* Server: a buffer for the next Request, written until its completion. */
int srnic_vmtp_post_recv(struct srnic_vmtp *e, uint64_t wr_id, const struct srnic_sge *buf);
/*
 * Server: answers client's transaction (from its SRNIC_WC_VMTP_REQUEST: tag
 * and src_nid) with the bytes of data (read until SRNIC_WC_VMTP_RESPONDED)
 * and code.
 */
int srnic_vmtp_respond(struct srnic_vmtp *e, uint64_t wr_id, uint64_t client, uint32_t transaction,
		       uint32_t code, const struct srnic_sge *data);
/* The module's VMTP counters. */
int srnic_query_vmtp_stats(struct srnic_context *ctx, struct srnic_vmtp_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* SRNIC_VERBS_H */
