// SPDX-License-Identifier: GPL-2.0
/*
 * post_limits: ibv_post_recv's failures through the rdma-core stand-ins
 * (tools/rdma-compat, run through `srnic exec`), on srnic's module: the
 * path a C program's work requests take (libibverbs stand-in, the C API's
 * srnic_post_recv, libsrnic's post, one write() to /dev/srnic).
 *
 *   post_limits ADDR
 *     A QP of an rdma_cm id bound to ADDR (state INIT: receives may be
 *     posted), its receive queue N deep as the device made it:
 *     - a list of two receives whose second has no scatter/gather array
 *       (sg_list NULL, num_sge 1) fails with EINVAL and *bad_wr the first:
 *       every request of a call is checked before any is posted;
 *     - a list of N + 2 receives then fails with ENOMEM and *bad_wr the
 *       (N+1)th: the first N were posted, and none of the call before;
 *     - one more receive fails with ENOMEM, *bad_wr itself.
 *
 * Each check prints "ok: ..." or "FAIL: ..."; the exit status is 0 only if
 * all passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

/* The receive queue asked for (the device may make it deeper), and the
 * largest this program handles. */
#define PL_ASK_RECV 4
#define PL_MAX_RECV 64

static int failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failed = 1;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

int main(int argc, char **argv)
{
	static char buf[4096];
	struct ibv_recv_wr wrs[PL_MAX_RECV + 2], *bad;
	struct ibv_qp_init_attr init;
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	struct ibv_sge sge;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned int i, n;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: post_limits ADDR\n");
		return 2;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "post_limits: not an IPv4 address: %s\n", argv[1]);
		return 2;
	}
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(id, (struct sockaddr *)&sin))
		die("rdma_bind_addr");
	pd = ibv_alloc_pd(id->verbs);
	if (!pd)
		die("ibv_alloc_pd");
	cq = ibv_create_cq(id->verbs, 2 * PL_MAX_RECV, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = PL_ASK_RECV;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, pd, &init))
		die("rdma_create_qp");
	n = init.cap.max_recv_wr;
	printf("receive queue: %u deep (%u asked for)\n", n, PL_ASK_RECV);
	if (n < PL_ASK_RECV || n > PL_MAX_RECV) {
		fprintf(stderr, "post_limits: a receive queue of %u\n", n);
		return 2;
	}

	sge.addr = (uintptr_t)buf;
	sge.length = 64;
	sge.lkey = mr->lkey;
	memset(wrs, 0, sizeof(wrs));
	for (i = 0; i < n + 2; i++) {
		wrs[i].wr_id = i;
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
		wrs[i].next = i + 1 < n + 2 ? &wrs[i + 1] : NULL;
	}

	/* Two receives, the second without its array: neither is posted. */
	wrs[1].sg_list = NULL;
	wrs[1].next = NULL;
	bad = NULL;
	ret = ibv_post_recv(id->qp, &wrs[0], &bad);
	printf("a list whose second receive has no sg_list: %d (%s), bad_wr %ld\n", ret,
	       strerror(ret), bad ? (long)(bad - wrs) : -1L);
	check(ret == EINVAL && bad == &wrs[0],
	      "a bad request fails its call with EINVAL before any request of it is posted");

	/* N + 2 receives: the first N fit. */
	wrs[1].sg_list = &sge;
	wrs[1].next = &wrs[2];
	bad = NULL;
	ret = ibv_post_recv(id->qp, &wrs[0], &bad);
	printf("%u receives on a queue %u deep: %d (%s), bad_wr %ld\n", n + 2, n, ret,
	       strerror(ret), bad ? (long)(bad - wrs) : -1L);
	check(ret == ENOMEM && bad == &wrs[n],
	      "a full receive queue fails with ENOMEM at the first request that did not fit");

	/* And nothing more fits. */
	wrs[n].next = NULL;
	bad = NULL;
	ret = ibv_post_recv(id->qp, &wrs[n], &bad);
	check(ret == ENOMEM && bad == &wrs[n], "one more receive fails with ENOMEM");

	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
	return failed;
}
