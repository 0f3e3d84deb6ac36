// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * c_example: the srnic C API end to end.
 *
 *   c_example -s [-p port]         server
 *   c_example -c ADDR [-p port]    client
 *
 * The server listens, accepts one client onto a QP and SENDs it the address,
 * length and rkey of a buffer registered for remote read and write. The
 * client SENDs a greeting, RDMA WRITEs a pattern into the server's buffer,
 * RDMA READs it back into a second buffer, compares byte for byte, and SENDs
 * its verdict; the server checks the greeting and its own buffer too. Both
 * print "c_example: OK" and exit 0 only if everything matched.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <srnic_verbs.h>

#define BUF_SIZE 65536
#define TIMEOUT_MS 30000
#define GREETING "hello from the c_example client"

/* What the server tells the client about its buffer (little-endian hosts only,
 * like the test VMs). */
struct remote_buf {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t pad;
};

/* The client's verdict. */
struct verdict {
	uint32_t magic;
	uint32_t ok;
};
#define VERDICT_MAGIC 0x4f4b4f4bu

enum { WR_MSG_RECV = 1, WR_MSG_RECV2, WR_MSG_SEND, WR_WRITE, WR_READ };

#define CHECK(call)                                                          \
	do {                                                                 \
		int _r = (call);                                             \
		if (_r < 0) {                                                \
			fprintf(stderr, "c_example: %s: %s\n", #call,        \
				strerror(-_r));                              \
			exit(1);                                             \
		}                                                            \
	} while (0)

static uint8_t pattern(size_t off)
{
	return (uint8_t)(off * 7 + (off >> 8) + 0x5a);
}

struct conn {
	struct srnic_context *ctx;
	struct srnic_pd *pd;
	struct srnic_cq *cq;
	struct srnic_qp *qp;
};

static void setup(struct conn *c)
{
	struct srnic_qp_init_attr attr = { 0 };

	CHECK(srnic_open(NULL, &c->ctx));
	CHECK(srnic_alloc_pd(c->ctx, &c->pd));
	CHECK(srnic_create_cq(c->ctx, 32, &c->cq));
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.max_send_wr = 8;
	attr.max_recv_wr = 8;
	attr.max_send_sge = 1;
	attr.max_recv_sge = 1;
	CHECK(srnic_create_qp(c->pd, &attr, &c->qp));
}

/* Waits for the completion of wr_id; any error completion is fatal. */
static struct srnic_wc wait_wr(struct conn *c, uint64_t wr_id)
{
	static struct srnic_wc pending[16];
	static int npending;
	struct srnic_wc wc[8];
	int i, n;

	for (;;) {
		for (i = 0; i < npending; i++) {
			if (pending[i].wr_id == wr_id) {
				struct srnic_wc w = pending[i];

				pending[i] = pending[--npending];
				return w;
			}
		}
		n = srnic_poll_cq_wait(c->cq, 8, wc, TIMEOUT_MS);
		CHECK(n);
		if (n == 0) {
			fprintf(stderr, "c_example: no completion for wr %llu\n",
				(unsigned long long)wr_id);
			exit(1);
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != SRNIC_WC_SUCCESS) {
				fprintf(stderr, "c_example: wr %llu completed with status %u\n",
					(unsigned long long)wc[i].wr_id, wc[i].status);
				exit(1);
			}
			if (npending == 16) {
				fprintf(stderr, "c_example: too many completions\n");
				exit(1);
			}
			pending[npending++] = wc[i];
		}
	}
}

static void post_recv(struct conn *c, uint64_t wr_id, void *buf, uint32_t len, struct srnic_mr *mr)
{
	struct srnic_sge sge = { (uintptr_t)buf, len, srnic_mr_lkey(mr) };
	struct srnic_recv_wr wr = { wr_id, &sge, 1, 0 };

	CHECK(srnic_post_recv(c->qp, &wr, 1, NULL));
}

static void post_send(struct conn *c, uint64_t wr_id, uint32_t opcode, void *buf, uint32_t len,
		      struct srnic_mr *mr, uint64_t raddr, uint32_t rkey)
{
	struct srnic_sge sge = { (uintptr_t)buf, len, srnic_mr_lkey(mr) };
	struct srnic_send_wr wr = { 0 };

	wr.wr_id = wr_id;
	wr.opcode = opcode;
	wr.send_flags = SRNIC_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	CHECK(srnic_post_send(c->qp, &wr, 1, NULL));
}

/* Closes the connection (the client initiates) and destroys the QP. */
static void disconnect(struct conn *c, int initiate)
{
	if (initiate)
		CHECK(srnic_disconnect(c->qp, 0));
	CHECK(srnic_wait_disconnected(c->qp, TIMEOUT_MS));
	CHECK(srnic_destroy_qp(c->qp));
}

/* Destroys the rest once the memory regions are gone (else -EBUSY). */
static void teardown(struct conn *c)
{
	CHECK(srnic_destroy_cq(c->cq));
	CHECK(srnic_dealloc_pd(c->pd));
	CHECK(srnic_close(c->ctx));
}

static int server(int port)
{
	struct conn c;
	struct srnic_listener *l;
	struct srnic_conn_request *req;
	struct srnic_conn_info info;
	struct srnic_conn_param param = { 0 };
	struct sockaddr_in sin = { 0 };
	struct srnic_mr *data_mr, *msg_mr, *out_mr;
	static uint8_t data[BUF_SIZE];
	static uint8_t msg[2][256];
	static uint8_t out[sizeof(struct remote_buf)];
	struct remote_buf rb;
	struct srnic_wc wc;
	struct verdict v;
	size_t i;
	int ok = 1;

	setup(&c);
	CHECK(srnic_reg_mr(c.pd, data, sizeof(data), SRNIC_ACCESS_ALL, &data_mr));
	CHECK(srnic_reg_mr(c.pd, msg, sizeof(msg), SRNIC_ACCESS_LOCAL_WRITE, &msg_mr));
	CHECK(srnic_reg_mr(c.pd, out, sizeof(out), SRNIC_ACCESS_LOCAL_WRITE, &out_mr));

	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	CHECK(srnic_listen(c.ctx, (struct sockaddr *)&sin, 1, 0, &l));
	printf("c_example: listening on port %d\n", srnic_listener_port(l));
	fflush(stdout);
	CHECK(srnic_get_connect_request(l, TIMEOUT_MS, &req));
	CHECK(srnic_conn_request_info(req, &info));
	printf("c_example: connection request, %u bytes of private data\n",
	       info.private_data_len);

	/* Receives for the greeting and the verdict, before accepting. */
	post_recv(&c, WR_MSG_RECV, msg[0], sizeof(msg[0]), msg_mr);
	post_recv(&c, WR_MSG_RECV2, msg[1], sizeof(msg[1]), msg_mr);
	param.ird = 4;
	param.ord = 4;
	CHECK(srnic_accept(req, c.qp, &param, TIMEOUT_MS, NULL));

	/* Tell the client where the buffer is. */
	rb.addr = (uintptr_t)data;
	rb.len = sizeof(data);
	rb.rkey = srnic_mr_rkey(data_mr);
	rb.pad = 0;
	memcpy(out, &rb, sizeof(rb));
	post_send(&c, WR_MSG_SEND, SRNIC_WR_SEND, out, sizeof(out), out_mr, 0, 0);
	wait_wr(&c, WR_MSG_SEND);

	wc = wait_wr(&c, WR_MSG_RECV);
	if (wc.byte_len != sizeof(GREETING) || memcmp(msg[0], GREETING, sizeof(GREETING))) {
		fprintf(stderr, "c_example: bad greeting (%u bytes)\n", wc.byte_len);
		ok = 0;
	}
	wc = wait_wr(&c, WR_MSG_RECV2);
	memcpy(&v, msg[1], sizeof(v));
	if (wc.byte_len != sizeof(v) || v.magic != VERDICT_MAGIC || !v.ok) {
		fprintf(stderr, "c_example: the client reports a mismatch\n");
		ok = 0;
	}
	/* The client's WRITE was placed before its verdict SEND arrived. */
	for (i = 0; i < sizeof(data); i++) {
		if (data[i] != pattern(i)) {
			fprintf(stderr, "c_example: server buffer differs at %zu: %#x != %#x\n",
				i, data[i], pattern(i));
			ok = 0;
			break;
		}
	}
	disconnect(&c, 0);
	CHECK(srnic_destroy_listener(l));
	CHECK(srnic_dereg_mr(out_mr));
	CHECK(srnic_dereg_mr(msg_mr));
	CHECK(srnic_dereg_mr(data_mr));
	teardown(&c);
	if (!ok)
		return 1;
	printf("c_example: OK\n");
	return 0;
}

static int client(const char *addr, int port)
{
	struct conn c;
	struct sockaddr_in sin = { 0 };
	struct srnic_conn_param param = { 0 };
	struct srnic_mr *src_mr, *dst_mr, *msg_mr, *out_mr;
	static uint8_t src[BUF_SIZE], dst[BUF_SIZE];
	static uint8_t in[256], out[256];
	struct remote_buf rb;
	struct srnic_wc wc;
	struct verdict v = { VERDICT_MAGIC, 1 };
	size_t i;

	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "c_example: bad IPv4 address %s\n", addr);
		return 1;
	}
	setup(&c);
	CHECK(srnic_reg_mr(c.pd, src, sizeof(src), SRNIC_ACCESS_LOCAL_WRITE, &src_mr));
	CHECK(srnic_reg_mr(c.pd, dst, sizeof(dst), SRNIC_ACCESS_LOCAL_WRITE, &dst_mr));
	CHECK(srnic_reg_mr(c.pd, in, sizeof(in), SRNIC_ACCESS_LOCAL_WRITE, &msg_mr));
	CHECK(srnic_reg_mr(c.pd, out, sizeof(out), SRNIC_ACCESS_LOCAL_WRITE, &out_mr));

	post_recv(&c, WR_MSG_RECV, in, sizeof(in), msg_mr);
	param.ird = 4;
	param.ord = 4;
	param.private_data = "c_example";
	param.private_data_len = 9;
	CHECK(srnic_connect(c.qp, (struct sockaddr *)&sin, &param, TIMEOUT_MS, NULL));

	wc = wait_wr(&c, WR_MSG_RECV);
	if (wc.byte_len != sizeof(rb)) {
		fprintf(stderr, "c_example: bad buffer message (%u bytes)\n", wc.byte_len);
		return 1;
	}
	memcpy(&rb, in, sizeof(rb));
	if (rb.len < BUF_SIZE) {
		fprintf(stderr, "c_example: server buffer too small\n");
		return 1;
	}

	/* SEND the greeting. */
	memcpy(out, GREETING, sizeof(GREETING));
	post_send(&c, WR_MSG_SEND, SRNIC_WR_SEND, out, sizeof(GREETING), out_mr, 0, 0);
	wait_wr(&c, WR_MSG_SEND);

	/* RDMA WRITE the pattern, READ it back into a cleared buffer, compare. */
	for (i = 0; i < sizeof(src); i++)
		src[i] = pattern(i);
	memset(dst, 0, sizeof(dst));
	post_send(&c, WR_WRITE, SRNIC_WR_RDMA_WRITE, src, sizeof(src), src_mr, rb.addr, rb.rkey);
	wait_wr(&c, WR_WRITE);
	post_send(&c, WR_READ, SRNIC_WR_RDMA_READ, dst, sizeof(dst), dst_mr, rb.addr, rb.rkey);
	wait_wr(&c, WR_READ);
	for (i = 0; i < sizeof(dst); i++) {
		if (dst[i] != src[i]) {
			fprintf(stderr, "c_example: read back differs at %zu: %#x != %#x\n",
				i, dst[i], src[i]);
			v.ok = 0;
			break;
		}
	}

	/* Tell the server, then close. */
	memcpy(out, &v, sizeof(v));
	post_send(&c, WR_MSG_SEND, SRNIC_WR_SEND, out, sizeof(v), out_mr, 0, 0);
	wait_wr(&c, WR_MSG_SEND);

	disconnect(&c, 1);
	CHECK(srnic_dereg_mr(out_mr));
	CHECK(srnic_dereg_mr(msg_mr));
	CHECK(srnic_dereg_mr(dst_mr));
	CHECK(srnic_dereg_mr(src_mr));
	teardown(&c);
	if (!v.ok)
		return 1;
	printf("c_example: OK\n");
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: c_example -s [-p port] | -c ADDR [-p port]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int server_mode = 0, port = 18515, opt;

	while ((opt = getopt(argc, argv, "sc:p:")) != -1) {
		switch (opt) {
		case 's':
			server_mode = 1;
			break;
		case 'c':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (server_mode == (addr != NULL))
		usage();
	return server_mode ? server(port) : client(addr, port);
}
