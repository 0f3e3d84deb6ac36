// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host test of the libibverbs stand-in, built against rdma-core's headers so
 * that the inline functions of verbs.h (ibv_post_send, ibv_poll_cq,
 * ibv_req_notify_cq, ibv_query_port, ibv_alloc_mw, ibv_create_cq_ex, ...) run
 * as they do in rdma-core programs. tests/compat-test.sh runs it against the
 * stand-in linked with tests/mock_srnic.c (no /dev/srnic needed).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

/* How long the completion channel may take to poll readable. */
#define SMOKE_EVENT_TIMEOUT_MS 5000
#define SMOKE_CQE 16
#define SMOKE_WR_ID 0x5eed

static int failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "verbs_smoke: %s:%d: %s (errno %d)\n", __FILE__,   \
				__LINE__, #cond, errno);                                   \
			failures++;                                                        \
		}                                                                          \
	} while (0)

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr_ex dev;
	struct ibv_port_attr port;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_mr *mr, *mr2;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_cq_init_attr_ex cq_ex = { .cqe = SMOKE_CQE };
	struct ibv_qp *qp;
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr attr = { 0 };
	struct ibv_send_wr wr, wr2, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pollfd pfd;
	void *ev_ctx;
	static char buf[4096];
	int n = -1;

	list = ibv_get_device_list(&n);
	CHECK(list && n == 1);
	if (!list || n != 1)
		return 1;
	CHECK(!strcmp(ibv_get_device_name(list[0]), "srnic0"));
	CHECK(list[0]->node_type == IBV_NODE_RNIC);
	CHECK(list[0]->transport_type == IBV_TRANSPORT_IWARP);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	if (!ctx)
		return 1;
	ibv_free_device_list(list);

	/* The inline ibv_query_device_ex falls back to ibv_query_device. */
	CHECK(ibv_query_device_ex(ctx, NULL, &dev) == 0);
	CHECK(dev.orig_attr.atomic_cap == IBV_ATOMIC_NONE);
	CHECK(dev.orig_attr.max_qp_wr > 0 && dev.orig_attr.phys_port_cnt == 1);
	CHECK(dev.orig_attr.max_srq == 0);
	CHECK(ibv_query_port(ctx, 1, &port) == 0);
	CHECK(port.link_layer == IBV_LINK_LAYER_ETHERNET && port.gid_tbl_len == 1);
	CHECK(ibv_query_port(ctx, 2, &port) == EINVAL);
	CHECK(ibv_query_gid(ctx, 1, 0, &gid) == 0);
	CHECK(ibv_query_gid(ctx, 1, 1, &gid) == -1);

	pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr && mr->lkey && mr->rkey);
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC) && errno == EOPNOTSUPP);
	/* Optional access bits may be dropped, as rdma-core does. */
	mr2 = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	CHECK(mr2 && ibv_dereg_mr(mr2) == 0);
	errno = 0;
	CHECK(!ibv_alloc_mw(pd, IBV_MW_TYPE_1) && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(!ibv_create_srq(pd, &(struct ibv_srq_init_attr){ .attr = { .max_wr = 1 } }) &&
	      errno == EOPNOTSUPP);
	errno = 0;
	CHECK(!ibv_create_cq_ex(ctx, &cq_ex) && errno == EOPNOTSUPP);

	ch = ibv_create_comp_channel(ctx);
	CHECK(ch && ch->fd >= 0);
	cq = ibv_create_cq(ctx, SMOKE_CQE, &pd, ch, 0);
	CHECK(cq);
	if (!ch || !cq || !mr)
		return 1;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = cq;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	qa.qp_type = IBV_QPT_UD;
	errno = 0;
	CHECK(!ibv_create_qp(pd, &qa) && errno == EOPNOTSUPP);
	qa.qp_type = IBV_QPT_RC;
	qp = ibv_create_qp(pd, &qa);
	CHECK(qp && qp->qp_num);
	if (!qp)
		return 1;
	attr.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT) == 0);
	attr.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == EINVAL);	/* only the CM connects */

	/* A non-blocking channel without events: EAGAIN. */
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);

	/* Arm, complete a send, and the channel's fd polls readable. */
	CHECK(ibv_req_notify_cq(cq, 0) == 0);
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = SMOKE_WR_ID;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, SMOKE_EVENT_TIMEOUT_MS) == 1);
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 && ev_cq == cq && ev_ctx == &pd);
	ibv_ack_cq_events(cq, 1);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == SMOKE_WR_ID &&
	      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.qp_num == qp->qp_num);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0);

	/* iWARP has no atomics and no immediate data: the WR is bad_wr. */
	wr2 = wr;
	wr2.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.next = &wr2;
	bad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == EOPNOTSUPP && bad == &wr2);
	wr.next = NULL;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	CHECK(ibv_post_send(qp, &wr, &bad) == EOPNOTSUPP && bad == &wr);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;

	CHECK(ibv_destroy_qp(qp) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
	CHECK(ibv_destroy_comp_channel(ch) == 0);
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	if (failures) {
		fprintf(stderr, "verbs_smoke: %d failures\n", failures);
		return 1;
	}
	printf("verbs_smoke: OK\n");
	return 0;
}
