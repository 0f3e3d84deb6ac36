// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stand-in for libsrnic_verbs.a in host tests, where /dev/srnic does not
 * exist: tests/compat-test.sh links the libibverbs stand-in against it to run
 * ibv_devinfo, tests/verbs_smoke.c and tests/cm_smoke.c without the module.
 * It keeps just enough state to be checked, within one process: an eventfd
 * plays the device fd; an armed CQ fires through it; listeners, connection
 * requests and connections pair QPs of the process; a SEND is copied into the
 * peer's first posted receive (a QP without a peer completes it at once), RDMA
 * WRITE and READ copy between the addresses given. One lock serialises it all.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <srnic_verbs.h>

/* Limits the mock reports (what srnic's QUERY_DEVICE could say). */
#define MOCK_MAX_OBJ 1024
#define MOCK_MAX_CQE 4096
#define MOCK_MAX_WR 1024
#define MOCK_MAX_SGE 8
#define MOCK_MAX_RD 16
#define MOCK_PAGE 4096
#define MOCK_WC_RING 64

/* Largest number of receives a mock QP holds, and of events it queues. */
#define MOCK_RQ 64
#define MOCK_QP_EVENTS 8
/* Connection requests a mock listener holds. */
#define MOCK_BACKLOG 8

static pthread_mutex_t mock_lock = PTHREAD_MUTEX_INITIALIZER;

struct srnic_context { int fd; uint32_t next_handle; };
struct srnic_pd { struct srnic_context *ctx; };
struct srnic_mr { uint32_t key; };
struct srnic_cq {
	struct srnic_context *ctx;
	uint32_t handle;
	bool armed, fired;
	struct srnic_wc wc[MOCK_WC_RING];
	unsigned int n;
};
struct srnic_qp {
	struct srnic_context *ctx;
	struct srnic_cq *scq, *rcq;
	uint32_t handle;
	uint32_t state;
	bool sig_all;
	struct srnic_qp *peer;
	struct srnic_recv_wr rq[MOCK_RQ];
	struct srnic_sge rq_sge[MOCK_RQ];
	unsigned int rq_n;
	int events[MOCK_QP_EVENTS];
	unsigned int n_events;
	struct srnic_conn_info info;		/* of the established connection */
};
struct srnic_conn_request {
	struct srnic_qp *client;
	struct srnic_conn_info info;
};
struct srnic_listener {
	struct srnic_context *ctx;
	uint16_t port;
	struct srnic_listener *next;
	struct srnic_conn_request *pending[MOCK_BACKLOG];
	unsigned int n;
};

static struct srnic_listener *mock_listeners;

static uint32_t mock_handle(struct srnic_context *c)
{
	return ++c->next_handle;
}

static void mock_signal(struct srnic_context *c)
{
	uint64_t one = 1;

	if (write(c->fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow in a test */
	}
}

static void mock_cq_push(struct srnic_cq *cq, const struct srnic_wc *wc)
{
	if (cq->n == MOCK_WC_RING)
		return;
	cq->wc[cq->n++] = *wc;
	if (cq->armed) {
		cq->armed = false;
		cq->fired = true;
		mock_signal(cq->ctx);
	}
}

static void mock_qp_event(struct srnic_qp *qp, int type)
{
	if (qp->n_events < MOCK_QP_EVENTS)
		qp->events[qp->n_events++] = type;
	mock_signal(qp->ctx);
}

int srnic_open(const char *path, struct srnic_context **ctx)
{
	struct srnic_context *c = calloc(1, sizeof(*c));

	(void)path;
	if (!c)
		return -ENOMEM;
	c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	*ctx = c;
	return 0;
}

int srnic_close(struct srnic_context *ctx)
{
	close(ctx->fd);
	free(ctx);
	return 0;
}

int srnic_get_fd(struct srnic_context *ctx)
{
	return ctx->fd;
}

int srnic_process_events(struct srnic_context *ctx)
{
	uint64_t v;

	return read(ctx->fd, &v, sizeof(v)) == sizeof(v) ? 1 : 0;
}

/* The mock's waits never read its fd: one round of watchers suffices. */
unsigned long long srnic_events_read(struct srnic_context *ctx)
{
	(void)ctx;
	return 0;
}

int srnic_query_device(struct srnic_context *ctx, struct srnic_query_device *a)
{
	(void)ctx;
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->abi_version = SRNIC_ABI_VERSION;
	a->capabilities = SRNIC_CAP_IWARP | SRNIC_CAP_MPA_CRC;
	a->max_pd = a->max_mr = a->max_cq = a->max_qp = MOCK_MAX_OBJ;
	a->max_mr_size = UINT32_MAX;
	a->max_cqe = MOCK_MAX_CQE;
	a->max_qp_wr = MOCK_MAX_WR;
	a->max_sge = MOCK_MAX_SGE;
	a->max_inline_data = 64;
	a->max_ord = a->max_ird = MOCK_MAX_RD;
	a->page_size = MOCK_PAGE;
	return 0;
}

int srnic_alloc_pd(struct srnic_context *ctx, struct srnic_pd **pd)
{
	*pd = calloc(1, sizeof(**pd));
	if (!*pd)
		return -ENOMEM;
	(*pd)->ctx = ctx;
	return 0;
}

int srnic_dealloc_pd(struct srnic_pd *pd)
{
	free(pd);
	return 0;
}

int srnic_reg_mr(struct srnic_pd *pd, void *addr, size_t length, uint32_t access,
		 struct srnic_mr **mr)
{
	(void)addr; (void)length;
	if (access & ~SRNIC_ACCESS_ALL)
		return -EINVAL;
	*mr = calloc(1, sizeof(**mr));
	if (!*mr)
		return -ENOMEM;
	(*mr)->key = mock_handle(pd->ctx) << 8;
	return 0;
}

int srnic_dereg_mr(struct srnic_mr *mr)
{
	free(mr);
	return 0;
}

uint32_t srnic_mr_lkey(const struct srnic_mr *mr) { return mr ? mr->key : 0; }
uint32_t srnic_mr_rkey(const struct srnic_mr *mr) { return mr ? mr->key | 1 : 0; }

int srnic_create_cq(struct srnic_context *ctx, uint32_t cqe, struct srnic_cq **cq)
{
	(void)cqe;
	*cq = calloc(1, sizeof(**cq));
	if (!*cq)
		return -ENOMEM;
	(*cq)->ctx = ctx;
	(*cq)->handle = mock_handle(ctx);
	return 0;
}

int srnic_destroy_cq(struct srnic_cq *cq)
{
	free(cq);
	return 0;
}

int srnic_poll_cq(struct srnic_cq *cq, int num_entries, struct srnic_wc *wc)
{
	int n;

	pthread_mutex_lock(&mock_lock);
	n = (int)cq->n < num_entries ? (int)cq->n : num_entries;
	memcpy(wc, cq->wc, (size_t)n * sizeof(*wc));
	memmove(cq->wc, cq->wc + n, (cq->n - (unsigned int)n) * sizeof(*wc));
	cq->n -= (unsigned int)n;
	pthread_mutex_unlock(&mock_lock);
	return n;
}

int srnic_req_notify_cq(struct srnic_cq *cq, int solicited_only)
{
	int ret;

	(void)solicited_only;
	pthread_mutex_lock(&mock_lock);
	cq->armed = true;
	ret = cq->n ? 1 : 0;
	pthread_mutex_unlock(&mock_lock);
	return ret;
}

int srnic_wait_cq(struct srnic_cq *cq, int timeout_ms)
{
	int ret = -ETIMEDOUT;

	(void)timeout_ms;
	pthread_mutex_lock(&mock_lock);
	if (cq->fired) {
		cq->fired = false;
		ret = 0;
	}
	pthread_mutex_unlock(&mock_lock);
	return ret;
}

int srnic_poll_cq_wait(struct srnic_cq *cq, int num_entries, struct srnic_wc *wc, int timeout_ms)
{
	(void)timeout_ms;
	return srnic_poll_cq(cq, num_entries, wc);
}

int srnic_create_qp(struct srnic_pd *pd, struct srnic_qp_init_attr *attr, struct srnic_qp **qp)
{
	if (attr->max_send_sge > MOCK_MAX_SGE || attr->max_recv_sge > MOCK_MAX_SGE)
		return -EINVAL;
	*qp = calloc(1, sizeof(**qp));
	if (!*qp)
		return -ENOMEM;
	(*qp)->ctx = pd->ctx;
	(*qp)->scq = attr->send_cq;
	(*qp)->rcq = attr->recv_cq;
	(*qp)->sig_all = attr->sq_sig_all;
	(*qp)->handle = mock_handle(pd->ctx);
	(*qp)->state = SRNIC_QPS_INIT;
	return 0;
}

int srnic_destroy_qp(struct srnic_qp *qp)
{
	pthread_mutex_lock(&mock_lock);
	if (qp->peer) {
		qp->peer->peer = NULL;
		qp->peer->state = SRNIC_QPS_ERROR;
		mock_qp_event(qp->peer, SRNIC_EVENT_DISCONNECTED);
	}
	pthread_mutex_unlock(&mock_lock);
	free(qp);
	return 0;
}

uint32_t srnic_qp_handle(const struct srnic_qp *qp) { return qp ? qp->handle : 0; }

int srnic_query_qp(struct srnic_qp *qp, struct srnic_query_qp *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->qp_handle = qp->handle;
	pthread_mutex_lock(&mock_lock);
	attr->state = qp->state;
	attr->ird = qp->info.ird;
	attr->ord = qp->info.ord;
	pthread_mutex_unlock(&mock_lock);
	return 0;
}

/* Copies the SGEs of a send into the first posted receive of the peer. */
static int mock_deliver(struct srnic_qp *qp, const struct srnic_send_wr *wr)
{
	struct srnic_qp *p = qp->peer;
	struct srnic_wc rwc = { 0 };
	size_t len = 0, room;
	unsigned int i;
	char *dst;

	if (!p->rq_n)
		return -ENOBUFS;
	dst = (char *)(uintptr_t)p->rq_sge[0].addr;
	room = p->rq_sge[0].length;
	for (i = 0; i < wr->num_sge; i++) {
		if (len + wr->sg_list[i].length > room)
			return -EMSGSIZE;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	rwc.wr_id = p->rq[0].wr_id;
	rwc.opcode = SRNIC_WC_RECV;
	rwc.byte_len = (uint32_t)len;
	rwc.qp_handle = p->handle;
	memmove(p->rq, p->rq + 1, (p->rq_n - 1) * sizeof(p->rq[0]));
	memmove(p->rq_sge, p->rq_sge + 1, (p->rq_n - 1) * sizeof(p->rq_sge[0]));
	p->rq_n--;
	mock_cq_push(p->rcq, &rwc);
	return 0;
}

/* RDMA WRITE/READ: remote_addr is an address of this process. */
static void mock_rdma(const struct srnic_send_wr *wr, bool read)
{
	char *remote = (char *)(uintptr_t)wr->remote_addr;
	unsigned int i;

	for (i = 0; i < wr->num_sge; i++) {
		void *local = (void *)(uintptr_t)wr->sg_list[i].addr;

		if (read)
			memcpy(local, remote, wr->sg_list[i].length);
		else
			memcpy(remote, local, wr->sg_list[i].length);
		remote += wr->sg_list[i].length;
	}
}

int srnic_post_send(struct srnic_qp *qp, const struct srnic_send_wr *wr, unsigned int num_wr,
		    unsigned int *posted)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&mock_lock);
	for (i = 0; i < num_wr; i++) {
		struct srnic_wc wc = { .wr_id = wr[i].wr_id, .qp_handle = qp->handle };

		if (qp->peer) {
			switch (wr[i].opcode) {
			case SRNIC_WR_RDMA_WRITE: mock_rdma(&wr[i], false); wc.opcode = SRNIC_WC_RDMA_WRITE; break;
			case SRNIC_WR_RDMA_READ: mock_rdma(&wr[i], true); wc.opcode = SRNIC_WC_RDMA_READ; break;
			default: ret = mock_deliver(qp, &wr[i]); wc.opcode = SRNIC_WC_SEND; break;
			}
			if (ret)
				break;
		}
		if (qp->sig_all || (wr[i].send_flags & SRNIC_SEND_SIGNALED))
			mock_cq_push(qp->scq, &wc);
	}
	pthread_mutex_unlock(&mock_lock);
	if (posted)
		*posted = i;
	return ret;
}

int srnic_post_recv(struct srnic_qp *qp, const struct srnic_recv_wr *wr, unsigned int num_wr,
		    unsigned int *posted)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&mock_lock);
	for (i = 0; i < num_wr; i++) {
		if (qp->rq_n == MOCK_RQ || wr[i].num_sge != 1) {
			ret = -EINVAL;
			break;
		}
		qp->rq[qp->rq_n] = wr[i];
		qp->rq_sge[qp->rq_n++] = wr[i].sg_list[0];
	}
	pthread_mutex_unlock(&mock_lock);
	if (posted)
		*posted = i;
	return ret;
}

static uint16_t mock_port(const struct sockaddr *a)
{
	return ntohs(a->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)a)->sin6_port :
						((const struct sockaddr_in *)a)->sin_port);
}

int srnic_listen(struct srnic_context *ctx, const struct sockaddr *addr, int backlog,
		 uint32_t mpa_flags, struct srnic_listener **listener)
{
	struct srnic_listener *l = calloc(1, sizeof(*l));

	(void)backlog; (void)mpa_flags;
	if (!l)
		return -ENOMEM;
	l->ctx = ctx;
	l->port = mock_port(addr);
	pthread_mutex_lock(&mock_lock);
	l->next = mock_listeners;
	mock_listeners = l;
	pthread_mutex_unlock(&mock_lock);
	*listener = l;
	return 0;
}

int srnic_listener_port(const struct srnic_listener *l)
{
	return l->port;
}

int srnic_destroy_listener(struct srnic_listener *l)
{
	struct srnic_listener **p;

	pthread_mutex_lock(&mock_lock);
	for (p = &mock_listeners; *p; p = &(*p)->next) {
		if (*p == l) {
			*p = l->next;
			break;
		}
	}
	pthread_mutex_unlock(&mock_lock);
	free(l);
	return 0;
}

int srnic_get_connect_request(struct srnic_listener *l, int t, struct srnic_conn_request **r)
{
	int ret = -ETIMEDOUT;

	(void)t;
	pthread_mutex_lock(&mock_lock);
	if (l->n) {
		*r = l->pending[0];
		memmove(l->pending, l->pending + 1, (l->n - 1) * sizeof(l->pending[0]));
		l->n--;
		ret = 0;
	}
	pthread_mutex_unlock(&mock_lock);
	return ret;
}

int srnic_conn_request_info(const struct srnic_conn_request *r, struct srnic_conn_info *i)
{
	*i = r->info;
	return 0;
}

static void mock_params(struct srnic_conn_info *i, const struct srnic_conn_param *p)
{
	memset(i, 0, sizeof(*i));
	if (p) {
		i->ird = p->ird;
		i->ord = p->ord;
		i->private_data_len = p->private_data_len;
		memcpy(i->private_data, p->private_data, p->private_data_len);
	}
}

int srnic_accept(struct srnic_conn_request *r, struct srnic_qp *qp,
		 const struct srnic_conn_param *p, int t, struct srnic_conn_info *i)
{
	struct srnic_qp *c = r->client;

	(void)t;
	pthread_mutex_lock(&mock_lock);
	qp->peer = c;
	c->peer = qp;
	qp->state = c->state = SRNIC_QPS_RTS;
	qp->info = r->info;
	mock_params(&c->info, p);
	mock_qp_event(c, SRNIC_EVENT_ESTABLISHED);
	pthread_mutex_unlock(&mock_lock);
	/* The passive side is established at once; its private data is the peer's. */
	if (i)
		*i = r->info;
	free(r);
	return 0;
}

int srnic_reject(struct srnic_conn_request *r, const void *pd, uint32_t len)
{
	(void)pd; (void)len;
	pthread_mutex_lock(&mock_lock);
	r->client->state = SRNIC_QPS_ERROR;
	mock_qp_event(r->client, SRNIC_EVENT_REJECTED);
	pthread_mutex_unlock(&mock_lock);
	free(r);
	return 0;
}

/* Always "under way": the outcome comes as an event, as srnic's usually does. */
int srnic_connect(struct srnic_qp *qp, const struct sockaddr *a, const struct srnic_conn_param *p,
		  int t, struct srnic_conn_info *i)
{
	struct srnic_conn_request *r;
	struct srnic_listener *l;
	int ret = -ECONNREFUSED;

	(void)t; (void)i;
	pthread_mutex_lock(&mock_lock);
	for (l = mock_listeners; l; l = l->next) {
		if (l->port != mock_port(a) || l->n == MOCK_BACKLOG)
			continue;
		r = calloc(1, sizeof(*r));
		if (!r) {
			ret = -ENOMEM;
			break;
		}
		r->client = qp;
		mock_params(&r->info, p);
		memcpy(&r->info.remote, a, sizeof(struct sockaddr_in));
		memcpy(&r->info.local, a, sizeof(struct sockaddr_in));
		l->pending[l->n++] = r;
		qp->state = SRNIC_QPS_CONNECTING;
		mock_signal(l->ctx);
		ret = -ETIMEDOUT;
		break;
	}
	pthread_mutex_unlock(&mock_lock);
	return ret;
}

int srnic_disconnect(struct srnic_qp *qp, uint32_t flags)
{
	int ret = 0;

	(void)flags;
	pthread_mutex_lock(&mock_lock);
	if (qp->state != SRNIC_QPS_RTS) {
		ret = -ENOTCONN;
	} else {
		qp->state = SRNIC_QPS_ERROR;
		mock_qp_event(qp, SRNIC_EVENT_DISCONNECTED);
		if (qp->peer) {
			qp->peer->state = SRNIC_QPS_ERROR;
			mock_qp_event(qp->peer, SRNIC_EVENT_DISCONNECTED);
			qp->peer->peer = NULL;
			qp->peer = NULL;
		}
	}
	pthread_mutex_unlock(&mock_lock);
	return ret;
}

int srnic_wait_qp_event(struct srnic_qp *qp, int t)
{
	int ret = -ETIMEDOUT;

	(void)t;
	pthread_mutex_lock(&mock_lock);
	if (qp->n_events) {
		ret = qp->events[0];
		memmove(qp->events, qp->events + 1, (qp->n_events - 1) * sizeof(qp->events[0]));
		qp->n_events--;
	}
	pthread_mutex_unlock(&mock_lock);
	return ret;
}

int srnic_wait_qp_event_info(struct srnic_qp *qp, int t, struct srnic_conn_info *i, int32_t *status)
{
	int ret = srnic_wait_qp_event(qp, t);

	if (ret == SRNIC_EVENT_ESTABLISHED && i) {
		pthread_mutex_lock(&mock_lock);
		*i = qp->info;
		pthread_mutex_unlock(&mock_lock);
	}
	if (status)
		*status = 0;
	return ret;
}
