// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The event thread of a context.
 *
 * libsrnic delivers the events of every object of a context through one file
 * descriptor (srnic_get_fd) and queues them per object; rdma-core programs
 * expect one pollable fd per completion channel and per CM event channel. A
 * thread per context, started with the first watcher, bridges the two: it
 * sleeps in poll() on /dev/srnic, has libsrnic read what arrived
 * (srnic_process_events) and asks each watcher whether its object got an
 * event, which the watcher then queues on its channel and signals through the
 * channel's eventfd. Only this thread reads /dev/srnic, so libsrnic's
 * zero-timeout waits that the watchers use never miss an event another reader
 * took.
 */
#include <poll.h>
#include <stdint.h>
#include <unistd.h>
#include "compat.h"

/* What a write to wake_fd means to the thread: run the watchers (1), or stop. */
#define COMPAT_WAKE_RUN 1

static void *compat_event_thread(void *arg)
{
	struct compat_context *c = arg;
	struct pollfd pfd[2] = {
		{ .fd = srnic_get_fd(c->sctx), .events = POLLIN },
		{ .fd = c->wake_fd, .events = POLLIN },
	};
	struct srnic_compat_watcher *w;
	unsigned long long seen;
	uint64_t v;

	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN) {
			/* Non-blocking eventfd: drains it. */
			if (read(c->wake_fd, &v, sizeof(v)) < 0)
				v = 0;
		}
		pthread_mutex_lock(&c->watch_lock);
		if (c->stopping) {
			pthread_mutex_unlock(&c->watch_lock);
			break;
		}
		/*
		 * A watcher's zero-timeout wait may read records of objects whose
		 * watchers already ran in this round; the fd then no longer polls
		 * readable for them. Run the watchers again until a round reads
		 * nothing new.
		 */
		do {
			srnic_process_events(c->sctx);
			seen = srnic_events_read(c->sctx);
			for (w = c->watchers; w; w = w->next)
				w->poll(w);
		} while (srnic_events_read(c->sctx) != seen);
		pthread_mutex_unlock(&c->watch_lock);
	}
	return NULL;
}

static void compat_wake(struct compat_context *c)
{
	uint64_t one = COMPAT_WAKE_RUN;

	if (write(c->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is already non-zero: the thread wakes anyway. */
	}
}

void srnic_compat_add_watcher(struct ibv_context *ctx, struct srnic_compat_watcher *w)
{
	struct compat_context *c = to_cctx(ctx);

	pthread_mutex_lock(&c->watch_lock);
	w->next = c->watchers;
	c->watchers = w;
	if (!c->thread_started && !c->stopping)
		c->thread_started = pthread_create(&c->thread, NULL, compat_event_thread, c) == 0;
	pthread_mutex_unlock(&c->watch_lock);
	/* An event libsrnic queued before the watcher existed is found now. */
	compat_wake(c);
}

void srnic_compat_remove_watcher(struct ibv_context *ctx, struct srnic_compat_watcher *w)
{
	struct compat_context *c = to_cctx(ctx);
	struct srnic_compat_watcher **p;

	pthread_mutex_lock(&c->watch_lock);
	for (p = &c->watchers; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->watch_lock);
}

void srnic_compat_kick(struct ibv_context *ctx)
{
	compat_wake(to_cctx(ctx));
}

void compat_stop_thread(struct compat_context *c)
{
	bool join;

	pthread_mutex_lock(&c->watch_lock);
	c->stopping = true;
	join = c->thread_started;
	c->thread_started = false;
	pthread_mutex_unlock(&c->watch_lock);
	if (join) {
		compat_wake(c);
		pthread_join(c->thread, NULL);
	}
}

void compat_restart_thread(struct compat_context *c)
{
	pthread_mutex_lock(&c->watch_lock);
	c->stopping = false;
	if (c->watchers && !c->thread_started)
		c->thread_started = pthread_create(&c->thread, NULL, compat_event_thread, c) == 0;
	pthread_mutex_unlock(&c->watch_lock);
}

struct srnic_context *srnic_compat_sctx(struct ibv_context *ctx)
{
	return to_cctx(ctx)->sctx;
}

struct srnic_qp *srnic_compat_sqp(struct ibv_qp *qp)
{
	return to_cqp(qp)->sqp;
}

void srnic_compat_set_qp_watcher(struct ibv_qp *qp, struct srnic_compat_watcher *w)
{
	struct compat_qp *q = to_cqp(qp);

	if (q->cm_watcher) {
		srnic_compat_remove_watcher(qp->context, q->cm_watcher);
		q->cm_watcher->qp = NULL;
	}
	q->cm_watcher = w;
	if (w) {
		w->qp = qp;
		srnic_compat_add_watcher(qp->context, w);
	}
}
