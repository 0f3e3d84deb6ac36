// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Event channels: rdma_create_event_channel, rdma_destroy_event_channel,
 * rdma_get_cm_event, rdma_ack_cm_event. The fd is an eventfd that is readable
 * while events are queued (count 1, else 0), so poll() on channel->fd works as
 * on rdma-core's, also after rdma_destroy_id dropped queued events.
 * rdma_get_cm_event() takes the count with a read() of the fd as its first
 * step, which blocks, or fails with EAGAIN once the program made the fd
 * O_NONBLOCK, as rdma-core's write() of GET_EVENT does; like that, a thread
 * blocked in it stays blocked when another thread destroys the channel (rping
 * destroys the channel under its event thread when it ends).
 *
 * The count follows the queue under the channel's lock: the first event
 * queued sets it; a reader that took it and finds more events queued sets it
 * again; dropping the last queued events (rdma_destroy_id) clears it with a
 * read that does not wait (RWF_NOWAIT): a reader may have taken it already.
 *
 * Delivered and acknowledged events are counted per owning id (struct
 * cma_event); rdma_destroy_id waits for its own only, as rdma-core's does.
 */
#define _GNU_SOURCE	/* preadv2, RWF_NOWAIT */
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>
#include "cma.h"

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_channel *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = eventfd(0, EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

void cma_attach(struct cma_id *id, struct rdma_event_channel *channel)
{
	struct cma_channel *c = to_cch(channel);

	pthread_mutex_lock(&c->lock);
	id->id.channel = channel;
	id->chan_next = c->ids;
	c->ids = id;
	pthread_mutex_unlock(&c->lock);
}

void cma_detach(struct cma_id *id)
{
	struct cma_channel *c;
	struct cma_id **p;

	if (id->orphan)
		return;		/* its channel took it off when it went */
	c = to_cch(id->id.channel);
	pthread_mutex_lock(&c->lock);
	for (p = &c->ids; *p; p = &(*p)->chan_next) {
		if (*p == id) {
			*p = id->chan_next;
			break;
		}
	}
	id->chan_next = NULL;
	pthread_mutex_unlock(&c->lock);
}

/* Frees a list of taken events; the new ids of connection requests in it
 * were never seen by the program and go with them. */
static void cma_free_events(struct cma_event *e)
{
	struct cma_event *n;

	for (; e; e = n) {
		n = e->next;
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST)
			cma_free_unseen(to_cma(e->ev.id));
		free(e);
	}
}

/*
 * rdma-core closes the channel's fd, and the kernel destroys every id still on
 * it with its undelivered events; events already delivered stay valid until
 * acknowledged (they are the program's memory). The same here: the ids still
 * on the channel give up what they hold of srnic's (cma_release) and become
 * orphans, which rdma_destroy_id then neither waits for nor frees.
 */
void rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct cma_channel *c = to_cch(ch);
	struct cma_event *events;
	struct cma_id *ids, *id, *next;

	/*
	 * First every id stops producing events: cma_release waits out the
	 * event thread's watchers, which may be queueing on this channel (so
	 * c->lock is not held meanwhile). A listener's watcher adds new ids to
	 * the channel; once the listeners are gone no more come.
	 */
	pthread_mutex_lock(&c->lock);
	ids = c->ids;
	pthread_mutex_unlock(&c->lock);
	for (id = ids; id; id = id->chan_next)
		cma_release(id);

	pthread_mutex_lock(&c->lock);
	events = c->head;
	c->head = c->tail = NULL;
	pthread_mutex_unlock(&c->lock);	/* the fd is closed below */
	/* Removes the unseen ids from c->ids too. */
	cma_free_events(events);

	pthread_mutex_lock(&c->lock);
	ids = c->ids;
	c->ids = NULL;
	pthread_mutex_unlock(&c->lock);
	for (id = ids; id; id = next) {
		next = id->chan_next;
		cma_release(id);	/* the ids a listener added meanwhile */
		id->chan_next = NULL;
		id->orphan = true;
	}
	close(ch->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Makes the fd readable (c->lock held). */
static void cma_set(struct cma_channel *c)
{
	uint64_t v = 1;

	if (write(c->ch.fd, &v, sizeof(v)) < 0) {
		/* Cannot fail: the count is at most 1. */
	}
}

/* The fd's count after queueing or dropping events (c->lock held): set when
 * the queue stops being empty, cleared when it becomes empty. */
static void cma_signal(struct cma_channel *c, bool was_empty)
{
	uint64_t v;
	struct iovec iov = { .iov_base = &v, .iov_len = sizeof(v) };

	if (was_empty && c->head) {
		cma_set(c);
	} else if (!was_empty && !c->head) {
		/* EAGAIN when a reader took the count first. On a kernel without
		 * RWF_NOWAIT for eventfds the count stays, and a reader then finds
		 * the queue empty and waits again. */
		if (preadv2(c->ch.fd, &iov, 1, -1, RWF_NOWAIT) < 0) {
		}
	}
}

static void cma_push(struct cma_channel *c, struct cma_event *e)
{
	bool was_empty;

	pthread_mutex_lock(&c->lock);
	was_empty = !c->head;
	e->next = NULL;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	cma_signal(c, was_empty);
	pthread_mutex_unlock(&c->lock);
}

void cma_queue_event(struct cma_id *id, struct cma_id *listen, enum rdma_cm_event_type type,
		     int status, const void *private_data, size_t len, uint8_t responder_resources,
		     uint8_t initiator_depth)
{
	struct cma_event *e;

	if (id->orphan)
		return;	/* no channel: as in rdma-core, the event has nowhere to go */
	e = calloc(1, sizeof(*e));
	if (!e)
		return;	/* out of memory: the event is lost */
	if (len > sizeof(e->private_data))
		len = sizeof(e->private_data);
	e->owner = listen ? listen : id;
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
	struct cma_channel *c;
	struct cma_event *e = NULL;
	uint64_t v;

	if (!event)
		return cma_fail(EINVAL);
	while (!e) {
		if (read(ch->fd, &v, sizeof(v)) != sizeof(v))
			return -1;	/* EAGAIN, EINTR, as rdma-core's write() */
		c = to_cch(ch);
		pthread_mutex_lock(&c->lock);
		e = c->head;
		if (e) {
			c->head = e->next;
			if (!c->head)
				c->tail = NULL;
			else
				cma_set(c);	/* for the next reader */
			/* Counted under the channel's lock: a concurrent
			 * rdma_destroy_id of the owner either purged the event
			 * first or waits for its acknowledgement. */
			pthread_mutex_lock(&e->owner->lock);
			e->owner->events_delivered++;
			pthread_mutex_unlock(&e->owner->lock);
		}
		pthread_mutex_unlock(&c->lock);
		/* No event: they were dropped after the count was taken. */
	}
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

/* Unlinks the events id owns from channel c into a list (c->lock held). */
static struct cma_event *cma_take(struct cma_channel *c, struct cma_id *id)
{
	struct cma_event **p = &c->head, *taken = NULL, **tail = &taken;
	bool was_empty = !c->head;

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
	cma_signal(c, was_empty);
	return taken;
}

void cma_purge_events(struct cma_id *id)
{
	struct cma_channel *c;
	struct cma_event *e;

	if (id->orphan)
		return;		/* its channel dropped them when it went */
	c = to_cch(id->id.channel);
	pthread_mutex_lock(&c->lock);
	e = cma_take(c, id);
	pthread_mutex_unlock(&c->lock);
	cma_free_events(e);
}

void cma_move_id(struct cma_id *id, struct rdma_event_channel *to)
{
	struct cma_channel *c = to_cch(id->id.channel);
	struct cma_event *e, *n;

	pthread_mutex_lock(&c->lock);
	e = cma_take(c, id);
	pthread_mutex_unlock(&c->lock);
	cma_detach(id);
	cma_attach(id, to);
	for (; e; e = n) {
		n = e->next;
		/* An undelivered request's new id is the listener's, so far. */
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			cma_detach(to_cma(e->ev.id));
			cma_attach(to_cma(e->ev.id), to);
		}
		cma_push(to_cch(to), e);
	}
}

int cma_wait_sync(struct cma_id *id, enum rdma_cm_event_type expected)
{
	struct rdma_cm_event *ev;
	int err = 0;

	if (!id->sync)
		return 0;
	if (id->id.event) {
		rdma_ack_cm_event(id->id.event);
		id->id.event = NULL;
	}
	if (rdma_get_cm_event(id->id.channel, &ev))
		return -1;
	id->id.event = ev;
	if (ev->event != expected || ev->status) {
		switch (ev->event) {
		case RDMA_CM_EVENT_REJECTED: err = ECONNREFUSED; break;
		case RDMA_CM_EVENT_UNREACHABLE: err = ENETUNREACH; break;
		default: err = ev->status < 0 ? -ev->status : ECONNABORTED; break;
		}
	}
	return err ? cma_fail(err) : 0;
}
