// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for libsrnic_verbs.a in host tests, where /dev/srnic does not
 * exist: tests/compat-test.sh links the libibverbs stand-in against it to run
 * ibv_devinfo and tests/verbs_smoke.c without the module. It keeps just enough
 * state to be checked: a QP's signalled sends complete at once on its send
 * CQ, and an armed CQ then fires through an eventfd that plays the device fd.
 * The connection manager answers -ENOSYS.
 */
#include <errno.h>
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
struct srnic_qp { struct srnic_cq *scq; uint32_t handle; };

static uint32_t mock_handle(struct srnic_context *c)
{
	return ++c->next_handle;
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
	int n = (int)cq->n < num_entries ? (int)cq->n : num_entries;

	memcpy(wc, cq->wc, (size_t)n * sizeof(*wc));
	memmove(cq->wc, cq->wc + n, (cq->n - (unsigned int)n) * sizeof(*wc));
	cq->n -= (unsigned int)n;
	return n;
}

int srnic_req_notify_cq(struct srnic_cq *cq, int solicited_only)
{
	(void)solicited_only;
	cq->armed = true;
	return cq->n ? 1 : 0;
}

int srnic_wait_cq(struct srnic_cq *cq, int timeout_ms)
{
	(void)timeout_ms;
	if (!cq->fired)
		return -ETIMEDOUT;
	cq->fired = false;
	return 0;
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
	(*qp)->scq = attr->send_cq;
	(*qp)->handle = mock_handle(pd->ctx);
	return 0;
}

int srnic_destroy_qp(struct srnic_qp *qp)
{
	free(qp);
	return 0;
}

uint32_t srnic_qp_handle(const struct srnic_qp *qp) { return qp ? qp->handle : 0; }

int srnic_query_qp(struct srnic_qp *qp, struct srnic_query_qp *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->qp_handle = qp->handle;
	attr->state = SRNIC_QPS_INIT;
	return 0;
}

/* Every signalled send completes at once; an armed CQ fires. */
int srnic_post_send(struct srnic_qp *qp, const struct srnic_send_wr *wr, unsigned int num_wr,
		    unsigned int *posted)
{
	struct srnic_cq *cq = qp->scq;
	uint64_t one = 1;
	unsigned int i;

	for (i = 0; i < num_wr; i++) {
		if (!(wr[i].send_flags & SRNIC_SEND_SIGNALED) || cq->n == MOCK_WC_RING)
			continue;
		memset(&cq->wc[cq->n], 0, sizeof(cq->wc[0]));
		cq->wc[cq->n].wr_id = wr[i].wr_id;
		cq->wc[cq->n].opcode = SRNIC_WC_SEND;
		cq->wc[cq->n].qp_handle = qp->handle;
		cq->n++;
		if (cq->armed) {
			cq->armed = false;
			cq->fired = true;
			if (write(cq->ctx->fd, &one, sizeof(one)) < 0)
				return -errno;
		}
	}
	if (posted)
		*posted = num_wr;
	return 0;
}

int srnic_post_recv(struct srnic_qp *qp, const struct srnic_recv_wr *wr, unsigned int num_wr,
		    unsigned int *posted)
{
	(void)qp; (void)wr;
	if (posted)
		*posted = num_wr;
	return 0;
}

/* The connection manager is not mocked. */
int srnic_listen(struct srnic_context *ctx, const struct sockaddr *addr, int backlog,
		 uint32_t mpa_flags, struct srnic_listener **listener)
{
	(void)ctx; (void)addr; (void)backlog; (void)mpa_flags; (void)listener;
	return -ENOSYS;
}
int srnic_listener_port(const struct srnic_listener *l) { (void)l; return -ENOSYS; }
int srnic_destroy_listener(struct srnic_listener *l) { (void)l; return -ENOSYS; }
int srnic_get_connect_request(struct srnic_listener *l, int t, struct srnic_conn_request **r)
{
	(void)l; (void)t; (void)r;
	return -ENOSYS;
}
int srnic_conn_request_info(const struct srnic_conn_request *r, struct srnic_conn_info *i)
{
	(void)r; (void)i;
	return -ENOSYS;
}
int srnic_accept(struct srnic_conn_request *r, struct srnic_qp *qp,
		 const struct srnic_conn_param *p, int t, struct srnic_conn_info *i)
{
	(void)r; (void)qp; (void)p; (void)t; (void)i;
	return -ENOSYS;
}
int srnic_reject(struct srnic_conn_request *r, const void *pd, uint32_t len)
{
	(void)r; (void)pd; (void)len;
	return -ENOSYS;
}
int srnic_connect(struct srnic_qp *qp, const struct sockaddr *a, const struct srnic_conn_param *p,
		  int t, struct srnic_conn_info *i)
{
	(void)qp; (void)a; (void)p; (void)t; (void)i;
	return -ENOSYS;
}
int srnic_disconnect(struct srnic_qp *qp, uint32_t flags) { (void)qp; (void)flags; return -ENOSYS; }
int srnic_wait_qp_event(struct srnic_qp *qp, int t) { (void)qp; (void)t; return -ETIMEDOUT; }
