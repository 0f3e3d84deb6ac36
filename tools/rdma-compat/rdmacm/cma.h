/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Internals of the librdmacm stand-in, shared by its files. */
#ifndef COMPAT_CMA_H
#define COMPAT_CMA_H

#include <errno.h>
#include <stdbool.h>
#include <rdma/rdma_cma.h>
#include <srnic_compat.h>

/* Largest private data of an event: srnic_conn_info.private_data. */
#define CMA_EVENT_PRIVATE_DATA 256

struct cma_id;

/*
 * An event as rdma_get_cm_event hands it out, with the private data it points
 * at. Its owner is the id whose delivered and acknowledged counts it moves:
 * the id it is about (ev.id), except for CONNECT_REQUEST, which the listener
 * owns (ev.listen_id), as the kernel counts it and rdma-core waits for it:
 * destroying the listener waits until its delivered requests are
 * acknowledged, destroying the new id does not.
 */
struct cma_event {
	struct rdma_cm_event ev;
	struct cma_event *next;
	struct cma_id *owner;
	uint8_t private_data[CMA_EVENT_PRIVATE_DATA];
};

/* An event channel: fd is an eventfd in semaphore mode counting queued events. */
struct cma_channel {
	struct rdma_event_channel ch;
	pthread_mutex_t lock;
	struct cma_event *head, *tail;
	struct cma_id *ids;		/* the ids on the channel, by chan_next */
};

struct cma_id {
	struct rdma_cm_id id;
	/* Created without a channel (rdma_create_ep, or NULL to rdma_create_id):
	 * the calls wait for their own outcome on a private channel. */
	bool sync;
	/* Its channel was destroyed under it: the id holds nothing of srnic's
	 * any more (as rdma-core's kernel ids end with their channel's fd), its
	 * channel pointer is stale, and every call on it fails with EBADF. */
	bool orphan;
	struct cma_id *chan_next;	/* on its channel's list of ids */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Events owned (struct cma_event) handed out and acknowledged. */
	unsigned int events_delivered, events_acked;

	/* Listening. */
	struct srnic_listener *listener;
	struct srnic_compat_watcher listen_watch;
	struct ibv_qp_init_attr *ep_qp_attr;	/* rdma_create_ep on a passive id */

	/* A connection request this id was made for (until accepted/rejected). */
	struct srnic_conn_request *req;
	uint8_t req_ird, req_ord;

	/* The QP's connection events, once connect/accept started. */
	struct srnic_compat_watcher qp_watch;
	bool active;			/* rdma_connect (else rdma_accept) */
	bool connected, closed;

	/* What rdma_create_qp made for the id and rdma_destroy_id frees. */
	bool own_pd, own_send_cq, own_recv_cq;
};

static inline struct cma_id *to_cma(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

static inline struct cma_channel *to_cch(struct rdma_event_channel *ch)
{
	return (struct cma_channel *)ch;
}

/* A new id on channel (NULL: a synchronous id with a private channel). */
int cma_alloc_id(struct rdma_event_channel *channel, struct cma_id **out, void *context,
		 enum rdma_port_space ps);

/* srnic's 32-bit IRD/ORD in rdma_conn_param's 8-bit fields. */
static inline uint8_t cma_u8(uint32_t v)
{
	return v > UINT8_MAX ? UINT8_MAX : (uint8_t)v;
}

/* The device context every id shares (opened once, kept while loaded). */
struct ibv_context *cma_verbs(void);
/* Queues an event for id on its channel. */
void cma_queue_event(struct cma_id *id, struct cma_id *listen, enum rdma_cm_event_type type,
		     int status, const void *private_data, size_t len, uint8_t responder_resources,
		     uint8_t initiator_depth);
/* Synchronous ids: waits for the outcome of the last call: 0, or -1 with
 * errno. As in rdma-core the event stays in id->event, unacknowledged, until
 * the next such call or rdma_destroy_id acknowledges it. */
int cma_wait_sync(struct cma_id *id, enum rdma_cm_event_type expected);
/* Moves id (and the new ids of its undelivered connection requests) with
 * the events it owns to channel to. */
void cma_move_id(struct cma_id *id, struct rdma_event_channel *to);
/* Drops the undelivered events id owns, and the new ids of its undelivered
 * connection requests (rdma_destroy_id). */
void cma_purge_events(struct cma_id *id);
/* Puts id on channel's list of ids / takes it off. */
void cma_attach(struct cma_id *id, struct rdma_event_channel *channel);
void cma_detach(struct cma_id *id);
/* Ends what srnic holds for id: its listener, the connection request nobody
 * answered (rejected), its QP's connection (closed gracefully when
 * established) and the event watchers. After this no event is queued for id. */
void cma_release(struct cma_id *id);
/* Frees an id the program never saw: a connection request's, whose event was
 * never delivered (the request is rejected). */
void cma_free_unseen(struct cma_id *id);

static inline int cma_fail(int err)
{
	errno = err;
	return -1;
}

/* 0 for a usable id; -1 with EBADF for one whose channel was destroyed (in
 * rdma-core every call then writes to the channel's closed fd). */
static inline int cma_check(struct cma_id *id)
{
	return id->orphan ? cma_fail(EBADF) : 0;
}

#endif /* COMPAT_CMA_H */
