// SPDX-License-Identifier: GPL-2.0
/*
 * cm_events: when rdma_destroy_id waits for unacknowledged rdma_cm events,
 * as rdma-core's librdmacm defines it. Dynamically linked against rdma-core's
 * librdmacm: run as it is, it tests rdma-core itself (on siw); run through
 * `srnic exec`, the librdmacm stand-in of tools/rdma-compat (on srnic). The
 * VM case rdma_compat_cm_events runs it both ways with the same expectations.
 *
 * rdma-core (librdmacm/cma.c): rdma_destroy_id has the kernel destroy the id,
 * which drops the id's undelivered events and answers how many of its events
 * were delivered; it then waits until the program acknowledged that many. A
 * CONNECT_REQUEST counts as the listener's event (the kernel reports it on
 * the listener's context), not the new id's. Closing the event channel's fd
 * destroys every id on it; process exit closes everything.
 *
 *   cm_events local PEER
 *     - an unacknowledged event of another id does not hold up
 *       rdma_destroy_id;
 *     - rdma_destroy_id waits while its own delivered event is unacknowledged,
 *       and returns once the event is acknowledged;
 *     - an undelivered event is dropped with its id: rdma_destroy_id does not
 *       wait for it, and the channel's fd no longer polls readable.
 *   cm_events orphan PEER
 *     - rdma_destroy_id of an id whose channel is already destroyed (with an
 *       unacknowledged event of the id) returns at once. In rdma-core this is
 *       a use of freed memory (the channel's; its man page forbids it) that
 *       happens to fail with EBADF; the stand-in fails the same way, so only
 *       the stand-in is tested.
 *   cm_events server ADDR PORT
 *     - accepts one connection; keeps its CONNECT_REQUEST unacknowledged;
 *       waits for the client to go (DISCONNECTED);
 *     - rdma_destroy_id of the new id does not wait for the CONNECT_REQUEST,
 *       rdma_destroy_id of the listener does, until it is acknowledged.
 *   cm_events client SERVER PORT
 *     - connects (a QP with registered memory and a RECV posted), prints
 *       "client: established", and exits with the ESTABLISHED event
 *       unacknowledged and everything still allocated: process exit must
 *       clean up (the case checks srnic's gauges).
 *
 * Each check prints "ok: ..." or "FAIL: ..."; the exit status is 0 only if
 * all passed. Address resolution (local scenarios) needs a route to PEER
 * through the RDMA device (siw0 on rdma-core; any route on srnic).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

/* How long an event may take to arrive, and a call that must not wait to
 * return (TCG and a debug kernel are slow). */
#define CME_TIMEOUT_MS 20000
/* How long a call that must wait is watched to still be waiting. */
#define CME_HOLD_MS 1000

static int failures;

static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void addr_of(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;

	if (getaddrinfo(host, port, &hints, &res)) {
		printf("FAIL: cannot resolve %s\n", host);
		exit(1);
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

/* Waits (CME_TIMEOUT_MS at most) for the channel's fd to poll readable. */
static bool readable(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* The next event of ch, which must be TYPE for ID; exits otherwise. */
static struct rdma_cm_event *expect_event(struct rdma_event_channel *ch, struct rdma_cm_id *id,
					  enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev;

	if (!readable(ch, CME_TIMEOUT_MS)) {
		printf("FAIL: no %s within %d ms\n", rdma_event_str(type), CME_TIMEOUT_MS);
		exit(1);
	}
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != type || (id && ev->id != id)) {
		printf("FAIL: got %s (status %d), expected %s\n", rdma_event_str(ev->event),
		       ev->status, rdma_event_str(type));
		exit(1);
	}
	return ev;
}

/* rdma_destroy_id in a thread of its own, so that the caller can watch it wait. */
struct destroyer {
	pthread_t thread;
	struct rdma_cm_id *id;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, done;
	int ret, err;
};

static void *destroy_thread(void *arg)
{
	struct destroyer *d = arg;
	int ret, err;

	pthread_mutex_lock(&d->lock);
	d->started = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	ret = rdma_destroy_id(d->id);
	err = errno;
	pthread_mutex_lock(&d->lock);
	d->ret = ret;
	d->err = err;
	d->done = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* Starts rdma_destroy_id(id) in a thread; returns once it is about to call it. */
static void destroy_start(struct destroyer *d, struct rdma_cm_id *id)
{
	memset(d, 0, sizeof(*d));
	d->id = id;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	if (pthread_create(&d->thread, NULL, destroy_thread, d))
		die("pthread_create");
	pthread_mutex_lock(&d->lock);
	while (!d->started)
		pthread_cond_wait(&d->cond, &d->lock);
	pthread_mutex_unlock(&d->lock);
}

/* Whether the destroy returned within ms; joins the thread if it did. */
static bool destroy_done(struct destroyer *d, int ms)
{
	struct timespec t;
	bool done;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&d->lock);
	while (!d->done && pthread_cond_timedwait(&d->cond, &d->lock, &t) == 0)
		;
	done = d->done;
	pthread_mutex_unlock(&d->lock);
	if (done)
		pthread_join(d->thread, NULL);
	return done;
}

/* rdma_destroy_id(id) must return WANT within CME_TIMEOUT_MS. */
static void destroy_promptly(struct rdma_cm_id *id, int want, const char *what)
{
	struct destroyer d;
	int64_t t0 = now_ms();

	destroy_start(&d, id);
	if (!destroy_done(&d, CME_TIMEOUT_MS)) {
		result(false, "%s: rdma_destroy_id still waiting after %d ms", what, CME_TIMEOUT_MS);
		exit(1);
	}
	result(d.ret == want, "%s: rdma_destroy_id returned %d (errno %d) after %lld ms", what,
	       d.ret, d.ret ? d.err : 0, (long long)(now_ms() - t0));
}

/* rdma_destroy_id(id) must still wait after CME_HOLD_MS, and return 0 within
 * CME_TIMEOUT_MS once ev is acknowledged. */
static void destroy_waits_for(struct rdma_cm_id *id, struct rdma_cm_event *ev, const char *what)
{
	struct destroyer d;
	int64_t t0;

	destroy_start(&d, id);
	if (destroy_done(&d, CME_HOLD_MS)) {
		result(false, "%s: rdma_destroy_id returned %d with the event unacknowledged", what,
		       d.ret);
		return;
	}
	result(true, "%s: rdma_destroy_id waits while the event is unacknowledged (%d ms)", what,
	       CME_HOLD_MS);
	t0 = now_ms();
	rdma_ack_cm_event(ev);
	if (!destroy_done(&d, CME_TIMEOUT_MS)) {
		result(false, "%s: rdma_destroy_id still waiting %d ms after the acknowledgement",
		       what, CME_TIMEOUT_MS);
		exit(1);
	}
	result(d.ret == 0, "%s: rdma_destroy_id returned %d %lld ms after the acknowledgement",
	       what, d.ret, (long long)(now_ms() - t0));
}

static struct rdma_cm_id *new_id(struct rdma_event_channel *ch)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	return id;
}

/* rdma_resolve_addr of id towards peer, and its ADDR_RESOLVED event. */
static struct rdma_cm_event *resolve(struct rdma_event_channel *ch, struct rdma_cm_id *id,
				     struct sockaddr_storage *peer)
{
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)peer, 2000))
		die("rdma_resolve_addr");
	return expect_event(ch, id, RDMA_CM_EVENT_ADDR_RESOLVED);
}

static void run_local(struct sockaddr_storage *peer)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev_a, *ev_b;
	struct rdma_cm_id *a, *b, *c;

	if (!ch)
		die("rdma_create_event_channel");
	/* Two ids on one channel; a's event stays unacknowledged. */
	a = new_id(ch);
	b = new_id(ch);
	ev_a = resolve(ch, a, peer);
	ev_b = resolve(ch, b, peer);
	rdma_ack_cm_event(ev_b);
	destroy_promptly(b, 0, "another id's event unacknowledged");
	destroy_waits_for(a, ev_a, "its own event unacknowledged");

	/* An event that arrived but was never fetched. */
	c = new_id(ch);
	if (rdma_resolve_addr(c, NULL, (struct sockaddr *)peer, 2000))
		die("rdma_resolve_addr");
	result(readable(ch, CME_TIMEOUT_MS), "the channel polls readable with an event queued");
	destroy_promptly(c, 0, "an undelivered event");
	result(!readable(ch, 500), "the channel no longer polls readable once the id is gone");
	rdma_destroy_event_channel(ch);
}

static void run_orphan(struct sockaddr_storage *peer)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *a;

	if (!ch)
		die("rdma_create_event_channel");
	a = new_id(ch);
	ev = resolve(ch, a, peer);
	rdma_destroy_event_channel(ch);
	destroy_promptly(a, -1, "the channel already destroyed");
	/* The event stays the program's until acknowledged. */
	result(rdma_ack_cm_event(ev) == 0, "the event is acknowledged after its channel went");
}

static void run_server(const char *host, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *req, *ev;
	struct sockaddr_storage ss;
	struct rdma_cm_id *listen, *conn;
	struct destroyer d;

	if (!ch)
		die("rdma_create_event_channel");
	addr_of(host, port, &ss);
	listen = new_id(ch);
	if (rdma_bind_addr(listen, (struct sockaddr *)&ss) || rdma_listen(listen, 1))
		die("rdma_bind_addr/rdma_listen");
	printf("server: listening\n");
	fflush(stdout);
	req = expect_event(ch, NULL, RDMA_CM_EVENT_CONNECT_REQUEST);
	result(req->listen_id == listen, "CONNECT_REQUEST names the listener");
	conn = req->id;
	if (rdma_create_qp(conn, NULL, &attr) || rdma_accept(conn, &param))
		die("rdma_create_qp/rdma_accept");
	rdma_ack_cm_event(expect_event(ch, conn, RDMA_CM_EVENT_ESTABLISHED));
	printf("server: established, waiting for the client to go\n");
	fflush(stdout);
	ev = expect_event(ch, conn, RDMA_CM_EVENT_DISCONNECTED);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(conn);
	/* The request is the listener's event, not the new id's. */
	destroy_promptly(conn, 0, "the new id, its CONNECT_REQUEST unacknowledged");
	destroy_start(&d, listen);
	if (destroy_done(&d, CME_HOLD_MS)) {
		result(false, "the listener: rdma_destroy_id returned %d with its CONNECT_REQUEST "
			      "unacknowledged", d.ret);
	} else {
		result(true, "the listener: rdma_destroy_id waits while its CONNECT_REQUEST is "
			     "unacknowledged (%d ms)", CME_HOLD_MS);
		rdma_ack_cm_event(req);
		if (!destroy_done(&d, CME_TIMEOUT_MS)) {
			result(false, "the listener: rdma_destroy_id still waiting after the "
				      "acknowledgement");
			exit(1);
		}
		result(d.ret == 0, "the listener: rdma_destroy_id returned %d after the "
				   "acknowledgement", d.ret);
	}
	rdma_destroy_event_channel(ch);
}

static void run_client(const char *host, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	static char buf[65536];
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	struct ibv_mr *mr;

	if (!ch)
		die("rdma_create_event_channel");
	addr_of(host, port, &ss);
	id = new_id(ch);
	rdma_ack_cm_event(resolve(ch, id, &ss));
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	rdma_ack_cm_event(expect_event(ch, id, RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (rdma_create_qp(id, NULL, &attr))
		die("rdma_create_qp");
	mr = ibv_reg_mr(id->qp->pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = sizeof(buf), .lkey = mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_recv(id->qp, &wr, &bad))
		die("ibv_post_recv");
	if (rdma_connect(id, &param))
		die("rdma_connect");
	expect_event(ch, id, RDMA_CM_EVENT_ESTABLISHED);
	/* Exits with the event unacknowledged, the QP, MR and CQs allocated. */
	printf("client: established, exiting with the event unacknowledged\n");
	fflush(stdout);
	exit(0);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage peer;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "local")) {
		addr_of(argv[2], "7", &peer);
		run_local(&peer);
	} else if (argc == 3 && !strcmp(argv[1], "orphan")) {
		addr_of(argv[2], "7", &peer);
		run_orphan(&peer);
	} else if (argc == 4 && !strcmp(argv[1], "server")) {
		run_server(argv[2], argv[3]);
	} else if (argc == 4 && !strcmp(argv[1], "client")) {
		run_client(argv[2], argv[3]);
	} else {
		fprintf(stderr, "usage: cm_events local|orphan PEER | server ADDR PORT | "
				"client SERVER PORT\n");
		return 2;
	}
	printf("cm_events %s: %d failure(s)\n", argv[1], failures);
	return failures ? 1 : 0;
}
