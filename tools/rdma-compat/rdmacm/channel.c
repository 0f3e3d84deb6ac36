// SPDX-License-Identifier: GPL-2.0
/*
 * Event channels: rdma_create_event_channel, rdma_destroy_event_channel,
 * rdma_get_cm_event, rdma_ack_cm_event. The fd is an eventfd in semaphore mode
 * whose count is the number of queued events, so poll() on channel->fd works
 * and rdma_get_cm_event() blocks, or fails with EAGAIN once the program made
 * the fd O_NONBLOCK, as rdma-core's does.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "cma.h"

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_channel *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct cma_channel *c = to_cch(ch);
	struct cma_event *e;

	while ((e = c->head)) {
		c->head = e->next;
		free(e);
	}
	close(ch->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void cma_push(struct cma_channel *c, struct cma_event *e)
{
	uint64_t one = 1;

	pthread_mutex_lock(&c->lock);
	e->next = NULL;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	pthread_mutex_unlock(&c->lock);
	if (write(c->ch.fd, &one, sizeof(one)) < 0) {
		/* Only fails at a count of 2^64 - 2. */
	}
}

void cma_queue_event(struct cma_id *id, struct cma_id *listen, enum rdma_cm_event_type type,
		     int status, const void *private_data, size_t len, uint8_t responder_resources,
		     uint8_t initiator_depth)
{
	struct cma_event *e = calloc(1, sizeof(*e));

	if (!e)
		return;	/* out of memory: the event is lost */
	if (len > sizeof(e->private_data))
		len = sizeof(e->private_data);
	e->owner = id;
	e->ev.id = &id->id;
	e->ev.listen_id = listen ? &listen->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (len) {
		memcpy(e->private_data, private_data, len);
		e->ev.param.conn.private_data = e->private_data;
		e->ev.param.conn.private_data_len = (uint8_t)len;
	}
	e->ev.param.conn.responder_resources = responder_resources;
	e->ev.param.conn.initiator_depth = initiator_depth;
	cma_push(to_cch(id->id.channel), e);
}

int rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct cma_channel *c = to_cch(ch);
	struct cma_event *e = NULL;
	uint64_t v;

	if (!event)
		return cma_fail(EINVAL);
	while (!e) {
		if (read(ch->fd, &v, sizeof(v)) != sizeof(v))
			return -1;	/* errno from read(): EAGAIN, EINTR */
		pthread_mutex_lock(&c->lock);
		e = c->head;
		if (e) {
			c->head = e->next;
			if (!c->head)
				c->tail = NULL;
		}
		pthread_mutex_unlock(&c->lock);
		/* A count without an event: one a destroyed id left behind. */
	}
	pthread_mutex_lock(&e->owner->lock);
	e->owner->events_delivered++;
	pthread_mutex_unlock(&e->owner->lock);
	*event = &e->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;
	struct cma_id *id;

	if (!event)
		return cma_fail(EINVAL);
	id = e->owner;
	pthread_mutex_lock(&id->lock);
	id->events_acked++;
	pthread_cond_broadcast(&id->cond);
	pthread_mutex_unlock(&id->lock);
	free(e);
	return 0;
}

/* Unlinks id's events from channel c into a list (c->lock held by the caller). */
static struct cma_event *cma_take(struct cma_channel *c, struct cma_id *id)
{
	struct cma_event **p = &c->head, *taken = NULL, **tail = &taken;

	c->tail = NULL;
	while (*p) {
		struct cma_event *e = *p;

		if (e->owner == id) {
			*p = e->next;
			e->next = NULL;
			*tail = e;
			tail = &e->next;
		} else {
			c->tail = e;
			p = &e->next;
		}
	}
	return taken;
}

void cma_purge_events(struct cma_id *id)
{
	struct cma_channel *c = to_cch(id->id.channel);
	struct cma_event *e, *n;

	pthread_mutex_lock(&c->lock);
	e = cma_take(c, id);
	pthread_mutex_unlock(&c->lock);
	for (; e; e = n) {
		n = e->next;
		free(e);
	}
}

void cma_move_events(struct cma_id *id, struct rdma_event_channel *to)
{
	struct cma_channel *c = to_cch(id->id.channel);
	struct cma_event *e, *n;

	pthread_mutex_lock(&c->lock);
	e = cma_take(c, id);
	pthread_mutex_unlock(&c->lock);
	for (; e; e = n) {
		n = e->next;
		cma_push(to_cch(to), e);
	}
}

int cma_wait_sync(struct cma_id *id, enum rdma_cm_event_type expected)
{
	struct rdma_cm_event *ev;
	int err = 0;

	if (!id->sync)
		return 0;
	if (rdma_get_cm_event(id->id.channel, &ev))
		return -1;
	if (ev->event != expected || ev->status) {
		switch (ev->event) {
		case RDMA_CM_EVENT_REJECTED: err = ECONNREFUSED; break;
		case RDMA_CM_EVENT_UNREACHABLE: err = ENETUNREACH; break;
		default: err = ev->status < 0 ? -ev->status : ECONNABORTED; break;
		}
	}
	rdma_ack_cm_event(ev);
	return err ? cma_fail(err) : 0;
}
