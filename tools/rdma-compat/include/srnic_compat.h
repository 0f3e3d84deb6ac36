/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * srnic_compat.h: what the libibverbs stand-in shares with the librdmacm
 * stand-in (exported under the version node SRNIC_COMPAT_PRIVATE, like
 * rdma-core's own IBVERBS_PRIVATE_* interface between its libraries).
 *
 * Every verbs object handed to a program is the rdma-core structure from
 * <infiniband/verbs.h> embedded as the first member of a compat_* wrapper that
 * also holds the libsrnic handle behind it (srnic_verbs.h).
 */
#ifndef SRNIC_COMPAT_H
#define SRNIC_COMPAT_H

#include <pthread.h>
#include <stdbool.h>
#include <infiniband/verbs.h>
#include <srnic_verbs.h>

/* The one device the stand-in reports: /dev/srnic. */
#define SRNIC_COMPAT_DEV_NAME "srnic0"
/* Environment variable naming the interface whose MAC gives the GID and GUIDs. */
#define SRNIC_COMPAT_IFNAME_ENV "SRNIC_IFNAME"

/*
 * Something the event thread of a context asks, after every batch of events
 * libsrnic has read from /dev/srnic, whether it has an event to deliver
 * (srnic_wait_cq(), srnic_get_connect_request(), srnic_wait_qp_event() with a
 * zero timeout). Called with the context's watcher lock held: it must not add
 * or remove watchers.
 */
struct srnic_compat_watcher {
	struct srnic_compat_watcher *next;
	void (*poll)(struct srnic_compat_watcher *w);
	/* A QP's connection watcher: the QP it watches, NULL once removed
	 * (srnic_compat_set_qp_watcher, ibv_destroy_qp). Programs destroy an
	 * rdma_cm id's QP with ibv_destroy_qp and leave id->qp dangling (rping
	 * does), so the librdmacm stand-in reaches the QP through this only. */
	struct ibv_qp *qp;
};

struct compat_context {
	struct verbs_context vctx;		/* rdma-core's, ends in struct ibv_context */
	struct srnic_context *sctx;
	struct srnic_query_device attr;		/* srnic's limits, read at open */
	uint8_t mac[6];				/* of the interface the GID names */
	uint32_t mtu;				/* of that interface, 0 if unknown */
	bool link_up;

	/* The event thread: started with the first watcher. */
	pthread_mutex_t watch_lock;
	struct srnic_compat_watcher *watchers;
	pthread_t thread;
	bool thread_started;
	bool stopping;
	int wake_fd;				/* eventfd: re-run the watchers / stop */
};

struct compat_pd {
	struct ibv_pd pd;
	struct srnic_pd *spd;
};

struct compat_mr {
	struct ibv_mr mr;
	struct srnic_mr *smr;
};

struct compat_cq {
	struct ibv_cq cq;
	struct srnic_cq *scq;
	struct srnic_compat_watcher watcher;	/* armed with a channel */
	bool watching;
	uint32_t events_delivered;		/* ibv_get_cq_event() handed out */
};

struct compat_qp {
	struct ibv_qp qp;
	struct srnic_qp *sqp;
	struct ibv_qp_cap cap;			/* as granted at creation */
	/* Set by the librdmacm stand-in; ibv_destroy_qp removes it first. */
	struct srnic_compat_watcher *cm_watcher;
};

static inline struct compat_context *to_cctx(struct ibv_context *ctx)
{
	return (struct compat_context *)((char *)ctx - offsetof(struct compat_context, vctx.context));
}

static inline struct compat_cq *to_ccq(struct ibv_cq *cq)
{
	return (struct compat_cq *)cq;
}

static inline struct compat_qp *to_cqp(struct ibv_qp *qp)
{
	return (struct compat_qp *)qp;
}

/* Private interface of the libibverbs stand-in (SRNIC_COMPAT_PRIVATE). */
void srnic_compat_add_watcher(struct ibv_context *ctx, struct srnic_compat_watcher *w);
void srnic_compat_remove_watcher(struct ibv_context *ctx, struct srnic_compat_watcher *w);
/* Makes the event thread run every watcher once, even without a new event. */
void srnic_compat_kick(struct ibv_context *ctx);
/* The QP's watcher (or NULL); ibv_destroy_qp removes it before destroying. */
void srnic_compat_set_qp_watcher(struct ibv_qp *qp, struct srnic_compat_watcher *w);
struct srnic_context *srnic_compat_sctx(struct ibv_context *ctx);
struct srnic_qp *srnic_compat_sqp(struct ibv_qp *qp);

#endif /* SRNIC_COMPAT_H */
