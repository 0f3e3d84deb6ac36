// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host test of the librdmacm stand-in over the mock device
 * (tests/mock_srnic.c pairs QPs of this process): both sides of connections in
 * one process, built against rdma-core's headers so that the inline helpers of
 * rdma_verbs.h (rdma_post_send, rdma_get_send_comp, ...) run as in rdma-core
 * programs.
 *  1. asynchronous ids on event channels: resolve, connect with private data,
 *     CONNECT_REQUEST, accept, ESTABLISHED on both sides, a SEND through a
 *     completion channel, DISCONNECTED on both sides;
 *  2. a rejected request: REJECTED with -ECONNREFUSED;
 *  3. synchronous endpoints (rdma_getaddrinfo, rdma_create_ep,
 *     rdma_get_request) as rdma_server and rdma_client use them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define SMOKE_PORT 18800
#define SMOKE_SYNC_PORT "18801"
#define SMOKE_TIMEOUT_MS 5000
#define SMOKE_MSG 16

static int failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "cm_smoke: %s:%d: %s (errno %d)\n", __FILE__,      \
				__LINE__, #cond, errno);                                   \
			failures++;                                                        \
		}                                                                          \
	} while (0)

/* The next event of ch, after its fd polled readable: NULL on timeout. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, SMOKE_TIMEOUT_MS) != 1 || rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

static int expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
			struct rdma_cm_event *out)
{
	struct rdma_cm_event *ev = next_event(ch);

	if (!ev) {
		fprintf(stderr, "cm_smoke: no %s\n", rdma_event_str(type));
		return -1;
	}
	if (out)
		*out = *ev;
	if (ev->event != type)
		fprintf(stderr, "cm_smoke: got %s, expected %s\n", rdma_event_str(ev->event),
			rdma_event_str(type));
	type = ev->event == type ? type : (enum rdma_cm_event_type)-1;
	rdma_ack_cm_event(ev);
	return type == (enum rdma_cm_event_type)-1 ? -1 : 0;
}

static struct ibv_qp_init_attr qp_attr(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_RC;
	return a;
}

static void async_connection(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(SMOKE_PORT) };
	struct rdma_event_channel *chs = rdma_create_event_channel();
	struct rdma_event_channel *chc = rdma_create_event_channel();
	struct rdma_cm_id *lid, *cid, *sid;
	struct rdma_conn_param cp = { .private_data = "hello", .private_data_len = 5,
				      .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event ev;
	struct ibv_comp_channel *cc;
	struct ibv_cq *ccq, *scq, *ev_cq;
	struct ibv_pd *cpd, *spd;
	struct ibv_mr *cmr, *smr;
	struct ibv_qp_init_attr a;
	struct ibv_send_wr swr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pollfd pfd;
	static char cbuf[SMOKE_MSG] = "ping", sbuf[SMOKE_MSG];
	void *ev_ctx;
	int n, i;

	CHECK(chs && chc);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(rdma_create_id(chs, &lid, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(lid, (struct sockaddr *)&addr) == 0);
	CHECK(rdma_listen(lid, 4) == 0);
	CHECK(rdma_get_src_port(lid) == htons(SMOKE_PORT));

	CHECK(rdma_create_id(chc, &cid, &cbuf, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(cid, NULL, (struct sockaddr *)&addr, 1000) == 0);
	CHECK(expect_event(chc, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) == 0);
	CHECK(rdma_resolve_route(cid, 1000) == 0);
	CHECK(expect_event(chc, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) == 0);
	CHECK(cid->verbs != NULL);
	if (!cid->verbs)
		return;
	cpd = ibv_alloc_pd(cid->verbs);
	cc = ibv_create_comp_channel(cid->verbs);
	ccq = ibv_create_cq(cid->verbs, 8, NULL, cc, 0);
	CHECK(cpd && cc && ccq);
	a = qp_attr(ccq);
	CHECK(rdma_create_qp(cid, cpd, &a) == 0 && cid->qp);
	CHECK(rdma_connect(cid, &cp) == 0);

	CHECK(expect_event(chs, RDMA_CM_EVENT_CONNECT_REQUEST, &ev) == 0);
	sid = ev.id;
	CHECK(ev.listen_id == lid && sid && sid != lid && sid->verbs);
	CHECK(ev.param.conn.private_data_len == 5);
	if (!sid || !sid->verbs)
		return;
	spd = ibv_alloc_pd(sid->verbs);
	scq = ibv_create_cq(sid->verbs, 8, NULL, NULL, 0);
	a = qp_attr(scq);
	CHECK(rdma_create_qp(sid, spd, &a) == 0);
	smr = ibv_reg_mr(spd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = sizeof(sbuf), .lkey = smr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	CHECK(ibv_post_recv(sid->qp, &rwr, &rbad) == 0);
	cp.private_data = "world";
	CHECK(rdma_accept(sid, &cp) == 0);
	/* The acceptor's private data reaches the active side only. */
	CHECK(expect_event(chs, RDMA_CM_EVENT_ESTABLISHED, &ev) == 0 &&
	      ev.param.conn.private_data_len == 0);
	CHECK(expect_event(chc, RDMA_CM_EVENT_ESTABLISHED, &ev) == 0 &&
	      ev.param.conn.private_data_len == 5 && ev.param.conn.initiator_depth == 1);

	/* A SEND, its completion announced on the client's channel. */
	cmr = ibv_reg_mr(cpd, cbuf, sizeof(cbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(ibv_req_notify_cq(ccq, 0) == 0);
	sge = (struct ibv_sge){ .addr = (uintptr_t)cbuf, .length = 4, .lkey = cmr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	CHECK(ibv_post_send(cid->qp, &swr, &bad) == 0);
	pfd = (struct pollfd){ .fd = cc->fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, SMOKE_TIMEOUT_MS) == 1);
	CHECK(ibv_get_cq_event(cc, &ev_cq, &ev_ctx) == 0 && ev_cq == ccq);
	ibv_ack_cq_events(ccq, 1);
	CHECK(ibv_poll_cq(ccq, 1, &wc) == 1 && wc.wr_id == 9 && wc.status == IBV_WC_SUCCESS);
	for (i = 0, n = 0; i < 100 && n == 0; i++)
		n = ibv_poll_cq(scq, 1, &wc);
	CHECK(n == 1 && wc.wr_id == 7 && wc.opcode == IBV_WC_RECV && wc.byte_len == 4 &&
	      !memcmp(sbuf, "ping", 4));

	CHECK(rdma_disconnect(cid) == 0);
	CHECK(expect_event(chc, RDMA_CM_EVENT_DISCONNECTED, NULL) == 0);
	CHECK(expect_event(chs, RDMA_CM_EVENT_DISCONNECTED, NULL) == 0);

	rdma_destroy_qp(cid);
	rdma_destroy_qp(sid);
	CHECK(ibv_dereg_mr(cmr) == 0 && ibv_dereg_mr(smr) == 0);
	CHECK(ibv_destroy_cq(ccq) == 0 && ibv_destroy_cq(scq) == 0);
	CHECK(ibv_destroy_comp_channel(cc) == 0);
	CHECK(ibv_dealloc_pd(cpd) == 0 && ibv_dealloc_pd(spd) == 0);
	CHECK(rdma_destroy_id(sid) == 0);

	/* A rejected request. */
	cpd = ibv_alloc_pd(cid->verbs);
	ccq = ibv_create_cq(cid->verbs, 8, NULL, NULL, 0);
	a = qp_attr(ccq);
	CHECK(rdma_create_qp(cid, cpd, &a) == 0);
	CHECK(rdma_connect(cid, NULL) == 0);
	CHECK(expect_event(chs, RDMA_CM_EVENT_CONNECT_REQUEST, &ev) == 0);
	CHECK(rdma_reject(ev.id, "no", 2) == 0);
	CHECK(rdma_destroy_id(ev.id) == 0);
	CHECK(expect_event(chc, RDMA_CM_EVENT_REJECTED, &ev) == 0 && ev.status == -ECONNREFUSED);
	rdma_destroy_qp(cid);
	CHECK(ibv_destroy_cq(ccq) == 0 && ibv_dealloc_pd(cpd) == 0);

	CHECK(rdma_destroy_id(cid) == 0);
	CHECK(rdma_destroy_id(lid) == 0);
	rdma_destroy_event_channel(chc);
	rdma_destroy_event_channel(chs);
}

static struct rdma_cm_id *sync_listener;

/* rdma_server's pattern. */
static void *sync_server(void *arg)
{
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	static char buf[SMOKE_MSG];

	(void)arg;
	CHECK(rdma_get_request(sync_listener, &id) == 0);
	if (failures)
		return NULL;
	CHECK(id->qp && id->recv_cq && id->recv_cq_channel);
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	CHECK(mr && rdma_post_recv(id, NULL, buf, sizeof(buf), mr) == 0);
	CHECK(rdma_accept(id, NULL) == 0);
	CHECK(rdma_get_recv_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	      !strcmp(buf, "sync"));
	CHECK(rdma_disconnect(id) == 0);
	CHECK(rdma_dereg_mr(mr) == 0);
	rdma_destroy_ep(id);
	return NULL;
}

static void sync_endpoints(void)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr a;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	pthread_t t;
	static char msg[SMOKE_MSG] = "sync";

	memset(&a, 0, sizeof(a));
	a.cap.max_send_wr = a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 1;
	hints.ai_flags = RAI_PASSIVE;
	CHECK(rdma_getaddrinfo("127.0.0.1", SMOKE_SYNC_PORT, &hints, &res) == 0);
	CHECK(rdma_create_ep(&sync_listener, res, NULL, &a) == 0);
	rdma_freeaddrinfo(res);
	CHECK(rdma_listen(sync_listener, 1) == 0);
	if (failures)
		return;
	pthread_create(&t, NULL, sync_server, NULL);

	hints.ai_flags = 0;
	CHECK(rdma_getaddrinfo("127.0.0.1", SMOKE_SYNC_PORT, &hints, &res) == 0);
	CHECK(rdma_create_ep(&id, res, NULL, &a) == 0);
	rdma_freeaddrinfo(res);
	CHECK(id->qp && id->send_cq);
	mr = rdma_reg_msgs(id, msg, sizeof(msg));
	CHECK(rdma_connect(id, NULL) == 0);
	CHECK(rdma_post_send(id, NULL, msg, sizeof(msg), mr, 0) == 0);
	CHECK(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	pthread_join(t, NULL);
	CHECK(rdma_dereg_mr(mr) == 0);
	rdma_destroy_ep(id);
	rdma_destroy_ep(sync_listener);
}

int main(void)
{
	async_connection();
	sync_endpoints();
	if (failures) {
		fprintf(stderr, "cm_smoke: %d failures\n", failures);
		return 1;
	}
	printf("cm_smoke: OK\n");
	return 0;
}
