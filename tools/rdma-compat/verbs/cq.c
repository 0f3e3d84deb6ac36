// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues and completion channels: ibv_create_cq, ibv_destroy_cq,
 * ibv_poll_cq and ibv_req_notify_cq (through context->ops),
 * ibv_create_comp_channel, ibv_get_cq_event, ibv_ack_cq_events.
 *
 * A channel's fd is an eventfd in semaphore mode: each queued CQ event adds
 * one, and ibv_get_cq_event() reads one, so it blocks exactly when rdma-core's
 * does and fails with EAGAIN when the program made the fd O_NONBLOCK.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "compat.h"

/* Initial capacity of a channel's ring of notified CQs; it grows on demand. */
#define COMPAT_CHANNEL_RING 16
/* Completions converted per srnic_poll_cq call (an array on the stack). */
#define COMPAT_POLL_BATCH 32

static struct compat_channel *to_cch(struct ibv_comp_channel *ch)
{
	return (struct compat_channel *)ch;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct compat_channel *c = calloc(1, sizeof(*c));

	if (!c)
		return compat_null(ENOMEM);
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		int err = errno;

		free(c);
		return compat_null(err);
	}
	c->ch.context = ctx;
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	struct compat_channel *c = to_cch(ch);
	int busy;

	pthread_mutex_lock(&ch->context->mutex);
	busy = ch->refcnt;
	pthread_mutex_unlock(&ch->context->mutex);
	if (busy)
		return EBUSY;
	close(ch->fd);
	pthread_mutex_destroy(&c->lock);
	free(c->queue);
	free(c);
	return 0;
}

void compat_channel_push(struct compat_cq *cq)
{
	struct compat_channel *c = to_cch(cq->cq.channel);
	uint64_t one = 1;

	pthread_mutex_lock(&c->lock);
	if (c->count == c->size) {
		unsigned int n = c->size ? 2 * c->size : COMPAT_CHANNEL_RING, i;
		struct compat_cq **q = malloc(n * sizeof(*q));

		if (!q) {
			/* Out of memory: the event is lost, as an overrun CQ's would be. */
			pthread_mutex_unlock(&c->lock);
			return;
		}
		for (i = 0; i < c->count; i++)
			q[i] = c->queue[(c->head + i) % c->size];
		free(c->queue);
		c->queue = q;
		c->head = 0;
		c->size = n;
	}
	c->queue[(c->head + c->count) % c->size] = cq;
	c->count++;
	pthread_mutex_unlock(&c->lock);
	if (write(c->ch.fd, &one, sizeof(one)) < 0) {
		/* Only fails at a count of 2^64 - 2. */
	}
}

/* Drops the queued events of a CQ being destroyed (their fd counts stay:
 * ibv_get_cq_event skips what it finds missing). */
static void compat_channel_purge(struct compat_channel *c, struct compat_cq *cq)
{
	unsigned int i, kept = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->count; i++) {
		struct compat_cq *e = c->queue[(c->head + i) % c->size];

		if (e != cq)
			c->queue[(c->head + kept++) % c->size] = e;
	}
	c->count = kept;
	pthread_mutex_unlock(&c->lock);
}

int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	struct compat_channel *c = to_cch(ch);
	struct compat_cq *e = NULL;
	uint64_t v;

	while (!e) {
		/* Blocks (or EAGAIN) as the program set the fd. */
		if (read(ch->fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		pthread_mutex_lock(&c->lock);
		if (c->count) {
			e = c->queue[c->head];
			c->head = (c->head + 1) % c->size;
			c->count--;
		}
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_lock(&e->cq.mutex);
	e->events_delivered++;
	pthread_mutex_unlock(&e->cq.mutex);
	*cq = &e->cq;
	*cq_context = e->cq.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* Watcher: did the armed CQ's notification arrive? */
static void compat_cq_watch(struct srnic_compat_watcher *w)
{
	struct compat_cq *cq = (struct compat_cq *)((char *)w - offsetof(struct compat_cq, watcher));
	int ret;

	/* One event per arm; -EOVERFLOW (an overrun) also wakes the consumer,
	 * whose next poll then reports what is left. */
	while ((ret = srnic_wait_cq(cq->scq, 0)) == 0 || ret == -EOVERFLOW)
		compat_channel_push(cq);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct compat_context *c = to_cctx(ctx);
	struct compat_cq *cq;
	int ret;

	if (cqe <= 0 || (uint32_t)cqe > c->attr.max_cqe || comp_vector < 0 ||
	    comp_vector >= ctx->num_comp_vectors)
		return compat_null(EINVAL);
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return compat_null(ENOMEM);
	ret = srnic_create_cq(c->sctx, (uint32_t)cqe, &cq->scq);
	if (ret) {
		free(cq);
		return compat_null(-ret);
	}
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel) {
		pthread_mutex_lock(&ctx->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&ctx->mutex);
		cq->watcher.poll = compat_cq_watch;
		srnic_compat_add_watcher(ctx, &cq->watcher);
		cq->watching = true;
	}
	return &cq->cq;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct compat_cq *c = to_ccq(cq);
	struct ibv_context *ctx = cq->context;
	int ret;

	/* The event thread must be done with the CQ before libsrnic frees it;
	 * if srnic refuses (EBUSY while QPs use it), the CQ is watched again. */
	if (c->watching)
		srnic_compat_remove_watcher(ctx, &c->watcher);
	ret = srnic_destroy_cq(c->scq);
	if (ret) {
		if (c->watching)
			srnic_compat_add_watcher(ctx, &c->watcher);
		return -ret;
	}
	if (cq->channel) {
		compat_channel_purge(to_cch(cq->channel), c);
		pthread_mutex_lock(&ctx->mutex);
		cq->channel->refcnt--;
		pthread_mutex_unlock(&ctx->mutex);
	}
	/* As rdma-core: wait until every event handed out was acknowledged. */
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != c->events_delivered)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
	pthread_mutex_destroy(&cq->mutex);
	pthread_cond_destroy(&cq->cond);
	free(c);
	return 0;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	(void)cqe;
	/* srnic has no RESIZE_CQ command. */
	return EOPNOTSUPP;
}

static enum ibv_wc_status compat_wc_status(uint32_t s)
{
	switch (s) {
	case SRNIC_WC_SUCCESS: return IBV_WC_SUCCESS;
	case SRNIC_WC_LOC_LEN_ERR: return IBV_WC_LOC_LEN_ERR;
	case SRNIC_WC_LOC_QP_OP_ERR: return IBV_WC_LOC_QP_OP_ERR;
	case SRNIC_WC_LOC_PROT_ERR: return IBV_WC_LOC_PROT_ERR;
	case SRNIC_WC_WR_FLUSH_ERR: return IBV_WC_WR_FLUSH_ERR;
	case SRNIC_WC_LOC_ACCESS_ERR: return IBV_WC_LOC_ACCESS_ERR;
	case SRNIC_WC_REM_INV_REQ_ERR: return IBV_WC_REM_INV_REQ_ERR;
	case SRNIC_WC_REM_ACCESS_ERR: return IBV_WC_REM_ACCESS_ERR;
	case SRNIC_WC_REM_OP_ERR: return IBV_WC_REM_OP_ERR;
	/* uapi/srnic.h numbers it 17, which is IBV_WC_INV_EECN_ERR in verbs.h:
	 * map by name, not by value. */
	case SRNIC_WC_FATAL_ERR: return IBV_WC_FATAL_ERR;
	default: return IBV_WC_GENERAL_ERR;
	}
}

static enum ibv_wc_opcode compat_wc_opcode(uint32_t op)
{
	switch (op) {
	case SRNIC_WC_RDMA_WRITE: return IBV_WC_RDMA_WRITE;
	case SRNIC_WC_RDMA_READ: return IBV_WC_RDMA_READ;
	case SRNIC_WC_RECV: return IBV_WC_RECV;
	case SRNIC_WC_SEND:
	default: return IBV_WC_SEND;
	}
}

int compat_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct srnic_wc s[COMPAT_POLL_BATCH];
	int done = 0;

	while (done < num_entries) {
		int want = num_entries - done, n, i;

		if (want > COMPAT_POLL_BATCH)
			want = COMPAT_POLL_BATCH;
		n = srnic_poll_cq(to_ccq(cq)->scq, want, s);
		if (n < 0)
			return done ? done : -1;
		for (i = 0; i < n; i++) {
			struct ibv_wc *w = &wc[done + i];

			memset(w, 0, sizeof(*w));
			w->wr_id = s[i].wr_id;
			w->status = compat_wc_status(s[i].status);
			w->opcode = compat_wc_opcode(s[i].opcode);
			w->byte_len = s[i].byte_len;
			w->qp_num = s[i].qp_handle;
			/* A status other than success carries the TERMINATE word. */
			w->vendor_err = s[i].term;
			if (s[i].flags & SRNIC_WC_WITH_INV) {
				w->wc_flags |= IBV_WC_WITH_INV;
				w->invalidated_rkey = s[i].invalidated_stag;
			}
		}
		done += n;
		if (n < want)
			break;
	}
	return done;
}

int compat_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct compat_cq *c = to_ccq(cq);
	int ret = srnic_req_notify_cq(c->scq, solicited_only);

	if (ret < 0)
		return -ret;
	/*
	 * srnic fires only for completions added after the arm and says so when
	 * some are already queued. Signal them now, as RNICs that fire on a
	 * non-empty CQ do: a program that arms and then sleeps does not hang. The
	 * arm stays in place, so one spurious event may follow, which rdma-core
	 * allows.
	 */
	if (ret == 1 && cq->channel && !solicited_only)
		compat_channel_push(c);
	return 0;
}
