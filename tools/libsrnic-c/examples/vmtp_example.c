// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vmtp_example: a VMTP transaction through the srnic C API (srnic_verbs.h).
 *
 *   vmtp_example -s ADDR [-D DISCRIMINATOR]        the server on ADDR: answers
 *                                                  one Request with its bytes
 *                                                  reversed
 *   vmtp_example -c SERVER_ADDR -a LOCAL_ADDR [-D DISCRIMINATOR]
 *                                                  the client: one Request
 *                                                  with plain memory (lkey 0)
 *
 * Both print "vmtp_example: OK" and exit 0 when the Response arrived and
 * matched (the client) or was acknowledged (the server).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srnic_verbs.h"

#define MSG "hello, VMTP"
#define CODE (SRNIC_VMTP_APPLICATION_CODE | 7)

static int die(const char *what, int err)
{
	fprintf(stderr, "vmtp_example: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* Waits (at most 30 s) for one completion of cq. */
static struct srnic_wc wait_one(struct srnic_cq *cq)
{
	struct srnic_wc wc;
	int n = srnic_poll_cq_wait(cq, 1, &wc, 30000);

	if (n < 0)
		die("srnic_poll_cq_wait", n);
	if (n == 0)
		die("no completion in 30 s", -ETIMEDOUT);
	return wc;
}

static struct srnic_vmtp *entity(struct srnic_pd *pd, struct srnic_cq *cq, uint32_t role,
				 const char *addr, uint32_t disc)
{
	struct srnic_vmtp_create attr = { .role = role, .discriminator = disc };
	struct srnic_vmtp *e;
	int r;

	if (inet_pton(AF_INET, addr, attr.addr) != 1)
		die("bad address", -EINVAL);
	r = srnic_vmtp_create(pd, cq, &attr, &e);
	if (r)
		die("srnic_vmtp_create", r);
	return e;
}

int main(int argc, char **argv)
{
	const char *server = NULL, *local = NULL, *listen_addr = NULL;
	uint32_t disc = 321;
	struct srnic_context *ctx;
	struct srnic_pd *pd;
	struct srnic_cq *cq;
	struct srnic_vmtp *e;
	struct srnic_wc wc;
	char buf[256], reply[256];
	int opt, r;

	while ((opt = getopt(argc, argv, "s:c:a:D:")) != -1) {
		switch (opt) {
		case 's': listen_addr = optarg; break;
		case 'c': server = optarg; break;
		case 'a': local = optarg; break;
		case 'D': disc = strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (!listen_addr == !(server && local))
		goto usage;
	if ((r = srnic_open(NULL, &ctx)) || (r = srnic_alloc_pd(ctx, &pd)) ||
	    (r = srnic_create_cq(ctx, 16, &cq)))
		die("setup", r);
	if (listen_addr) {
		struct srnic_sge in = { .addr = (uintptr_t)buf, .length = sizeof(buf) };
		struct srnic_sge out = { .addr = (uintptr_t)reply };
		uint32_t i, n;

		e = entity(pd, cq, SRNIC_VMTP_SERVER, listen_addr, disc);
		if ((r = srnic_vmtp_post_recv(e, 1, &in)))
			die("srnic_vmtp_post_recv", r);
		fprintf(stderr, "vmtp_example: ready as entity %#llx\n",
			(unsigned long long)srnic_vmtp_entity(e));
		wc = wait_one(cq);
		if (wc.opcode != SRNIC_WC_VMTP_REQUEST || wc.status != SRNIC_WC_SUCCESS || wc.term != CODE)
			die("unexpected Request completion", -EPROTO);
		n = wc.byte_len;
		for (i = 0; i < n; i++)
			reply[i] = buf[n - 1 - i];
		out.length = n;
		if ((r = srnic_vmtp_respond(e, 2, wc.tag, wc.src_nid, 0, &out)))
			die("srnic_vmtp_respond", r);
		wc = wait_one(cq);
		if (wc.opcode != SRNIC_WC_VMTP_RESPONDED || wc.status != SRNIC_WC_SUCCESS)
			die("the Response was not acknowledged", -EPROTO);
	} else {
		uint8_t a[4];
		struct srnic_sge req = { .addr = (uintptr_t)MSG, .length = strlen(MSG) };
		struct srnic_sge resp = { .addr = (uintptr_t)reply, .length = sizeof(reply) };
		size_t i, n = strlen(MSG);

		if (inet_pton(AF_INET, server, a) != 1)
			die("bad server address", -EINVAL);
		e = entity(pd, cq, SRNIC_VMTP_CLIENT, local, 0);
		r = srnic_vmtp_request(e, 9, srnic_vmtp_entity_id(disc, a), CODE, 0, &req, &resp);
		if (r)
			die("srnic_vmtp_request", r);
		wc = wait_one(cq);
		if (wc.opcode != SRNIC_WC_VMTP_RESPONSE || wc.status != SRNIC_WC_SUCCESS ||
		    wc.byte_len != n || wc.wr_id != 9)
			die("the transaction failed", -EPROTO);
		for (i = 0; i < n; i++)
			if (reply[i] != MSG[n - 1 - i])
				die("the Response differs", -EPROTO);
	}
	if ((r = srnic_vmtp_destroy(e)) || (r = srnic_destroy_cq(cq)) || (r = srnic_dealloc_pd(pd)) ||
	    (r = srnic_close(ctx)))
		die("teardown", r);
	printf("vmtp_example: OK\n");
	return 0;
usage:
	fprintf(stderr, "usage: vmtp_example -s ADDR [-D DISC] | -c SERVER_ADDR -a LOCAL_ADDR [-D DISC]\n");
	return 2;
}
