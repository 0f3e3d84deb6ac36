// SPDX-License-Identifier: GPL-2.0
/*
 * qp_fair: many RC QPs at once between two hosts, for make bench
 * (tests/vm/guest/bench.sh, Documentation/srnic/performance.rst): the
 * aggregate RDMA WRITE bandwidth of N QPs, how evenly the QPs share it, and
 * (--idle) N connected QPs held idle, so that the kernel memory they cost can
 * be measured from outside. Dynamically linked against rdma-core's librdmacm
 * and libibverbs, like cm_events.c: run as it is on siw, through `srnic exec`
 * on srnic (the stand-ins of tools/rdma-compat).
 *
 *   qp_fair server -a ADDR -p PORT -n N [-s SIZE] [--idle [--warm M]]
 *   qp_fair client -a SERVER -p PORT -n N [-s SIZE] [-w WINDOW] [-t SECONDS]
 *   qp_fair client -a SERVER -p PORT -n N [-w WINDOW] --idle [--warm M] --go FILE --end FILE
 *
 * The server accepts N connections on ADDR:PORT, one RC QP each (one shared
 * CQ, one PD; on siw the CQ is made large, see QPF_SIW_CQE), registers SIZE bytes of its memory per connection for remote
 * writes and sends the region's address, length and rkey in the accept's
 * private data; it prints "server: N connected" once all are established
 * (and "server: M connected" once the first M are, with --warm M), and ends
 * when all N are disconnected. With --idle it registers no memory (the
 * private data says length 0).
 *
 * The client opens N connections to it (rdma_cm, at most 16 being set up at
 * a time; one refused with EADDRINUSE starts again on a new id, see
 * connect_qp), one RC QP each with a send queue of WINDOW work requests, all on
 * one PD and one CQ; the source of every WRITE is one SIZE-byte buffer. Once
 * all are established it keeps WINDOW signalled RDMA WRITEs of SIZE bytes
 * outstanding on every QP (each completion posts the next) for SECONDS,
 * counts per QP the bytes of the WRITEs completed within that time, lets the
 * rest complete, disconnects every QP, and prints one line per QP and the
 * summary:
 *
 *   qp_fair: qps N size S window W seconds T bytes B moved M aggregate_mibs A
 *            min_mibs X max_mibs Y fair_mibs F min_fair R
 *
 * (one line): B the bytes of the WRITEs that completed within T, M those of
 * all the WRITEs of the run; A = B / T in MiB/s; X and Y the slowest and fastest QP's
 * MiB/s; F = A / N, each QP's fair share; R = X / F.
 *
 * With --idle the client first connects M QPs (--warm M, default 0; with
 * none, it only resolves the first id's address and route, which opens the
 * device, and sets up the PD and the CQ) and prints "client: ready", waits
 * until FILE --go exists, connects the rest (N - M), prints "client: N
 * connected, idle", waits until FILE --end exists, then disconnects all.
 * Whatever measures (bench.sh's idle_mem rows) reads the kernel's memory at
 * "ready" and at "connected", on both hosts: what the N - M QPs cost, the
 * device, PD, CQ and M QPs already there (the M warm-up QPs take the free
 * room the kernel's caches kept from earlier objects, which would hide what
 * the measured ones cost).
 *
 * Every failure prints "FAIL: ..." and exits 1.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

/* How long the CM may take for one event, and how long a WRITE in flight may
 * go without any completion before the run counts as hung (TCG, debug
 * kernel: both generous). */
#define QPF_EVENT_MS 120000
#define QPF_STALL_MS 120000
/* Connections being set up at once (the client). */
#define QPF_CONNECTING 16
/* New ids, in all, for connections whose port was taken (connect_qp). */
#define QPF_BIND_RETRIES 64
/* How long --go and --end are waited for. */
#define QPF_FILE_WAIT_MS 1800000
#define QPF_MAGIC 0x71706661u	/* "qpfa" */
/*
 * rdma-core's siw provider (libsiw, providers/siw/siw.c, rdma-core 44 and
 * later) takes the mmap key SIW_INVAL_UOBJ_KEY, 0x90000, for "no mapping",
 * but the kernel's siw hands out keys from the context's mmap offsets,
 * page 0 upwards, and page 144 is 0x90000: the queue (a QP's send or receive
 * queue, a CQ) that gets page 144 fails to be created, with errno unset.
 * With one page per queue that is the QP after about 70 in a process. A CQ
 * of at least QPF_SIW_CQE entries (32768 after siw's rounding to a power of
 * two: 1 MiB, pages 0 to 256) made first takes page 144, and every queue
 * after it starts beyond.
 */
#define QPF_SIW_CQE 16385

/* The accept's private data: where the client may write. */
struct qpf_pdata {
	uint32_t magic;
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
} __attribute__((packed));

struct conn {
	unsigned int index;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;	/* the server's region */
	void *buf;
	uint64_t raddr;		/* the client's target */
	uint32_t rkey;
	uint64_t rlen;
	bool established, disconnected;
	unsigned int outstanding;
	uint64_t bytes;
};

static struct {
	bool server, idle;
	const char *addr, *port, *go, *end;
	unsigned int n, window, warm;
	size_t size;
	double seconds;
} opt = { .n = 1, .window = 4, .size = 65536, .seconds = 10 };

static struct rdma_event_channel *ch;
static struct ibv_context *verbs;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct conn *conns;

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

static void die(const char *what)
{
	fail("%s: %s", what, strerror(errno));
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void addr_of(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;

	if (getaddrinfo(host, port, &hints, &res))
		fail("cannot resolve %s", host);
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

/* The next CM event (QPF_EVENT_MS at most). */
static struct rdma_cm_event *next_event(void)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, QPF_EVENT_MS) != 1)
		fail("no rdma_cm event within %d ms", QPF_EVENT_MS);
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	return ev;
}

/* Whether a CM event is queued, without waiting. */
static bool event_pending(void)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* The PD and the CQ (CQE entries) on the device of ctx, once. */
static void device_setup(struct ibv_context *ctx, int cqe)
{
	if (verbs) {
		if (ctx != verbs)
			fail("an id on another device context");
		return;
	}
	verbs = ctx;
	if (!strncmp(ibv_get_device_name(verbs->device), "siw", 3) && cqe < QPF_SIW_CQE)
		cqe = QPF_SIW_CQE;
	pd = ibv_alloc_pd(verbs);
	if (!pd)
		die("ibv_alloc_pd");
	cq = ibv_create_cq(verbs, cqe, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
}

static void create_qp(struct rdma_cm_id *id, unsigned int index, unsigned int send_wr)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (rdma_create_qp(id, pd, &attr))
		fail("rdma_create_qp of connection %u: %s", index, strerror(errno));
}

static void destroy_conn(struct conn *c)
{
	rdma_destroy_qp(c->id);
	if (c->mr && ibv_dereg_mr(c->mr))
		die("ibv_dereg_mr");
	free(c->buf);
	c->mr = NULL;
	c->buf = NULL;
	if (rdma_destroy_id(c->id))
		die("rdma_destroy_id");
	c->id = NULL;
}

static int cqe_for(unsigned int per_qp)
{
	unsigned long n = (unsigned long)opt.n * per_qp;

	return n < 16 ? 16 : n > 65536 ? 65536 : (int)n;
}

/* ---- The server ---- */

static void server_request(struct rdma_cm_event *ev, unsigned int *accepted)
{
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct qpf_pdata pdata = { .magic = QPF_MAGIC };
	struct conn *c;

	if (*accepted >= opt.n) {
		printf("server: rejecting a connection beyond %u\n", opt.n);
		rdma_reject(id, NULL, 0);
		return;
	}
	device_setup(id->verbs, cqe_for(2));
	c = &conns[(*accepted)++];
	c->index = *accepted - 1;
	c->id = id;
	id->context = c;
	create_qp(id, c->index, 1);
	if (!opt.idle) {
		if (posix_memalign(&c->buf, 4096, opt.size))
			fail("posix_memalign of %zu bytes", opt.size);
		memset(c->buf, 0, opt.size);
		c->mr = ibv_reg_mr(pd, c->buf, opt.size,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!c->mr)
			die("ibv_reg_mr");
		pdata.addr = (uintptr_t)c->buf;
		pdata.len = opt.size;
		pdata.rkey = c->mr->rkey;
	}
	param.private_data = &pdata;
	param.private_data_len = sizeof(pdata);
	if (rdma_accept(id, &param))
		die("rdma_accept");
}

static void run_server(void)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *listen;
	unsigned int accepted = 0, established = 0, gone = 0;

	addr_of(opt.addr, opt.port, &ss);
	if (rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(listen, (struct sockaddr *)&ss))
		die("rdma_bind_addr");
	/* Bound to an address of the device: the PD and CQ now, so that they
	 * are there before the first connection (the idle measurement). */
	if (listen->verbs)
		device_setup(listen->verbs, cqe_for(2));
	if (rdma_listen(listen, opt.n < 128 ? (int)opt.n : 128))
		die("rdma_listen");
	printf("server: listening for %u connections\n", opt.n);
	while (gone < opt.n) {
		struct rdma_cm_event *ev = next_event();
		struct conn *c = ev->id ? ev->id->context : NULL;

		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			server_request(ev, &accepted);
			rdma_ack_cm_event(ev);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			if (!c || c->established)
				fail("ESTABLISHED of an unknown or established connection");
			c->established = true;
			rdma_ack_cm_event(ev);
			if (++established == opt.n || established == opt.warm)
				printf("server: %u connected\n", established);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			if (!c || !c->established || c->disconnected)
				fail("DISCONNECTED of an unknown connection");
			c->disconnected = true;
			rdma_ack_cm_event(ev);
			rdma_disconnect(c->id);
			destroy_conn(c);
			gone++;
			break;
		default:
			fail("server: unexpected event %s (status %d)", rdma_event_str(ev->event),
			     ev->status);
		}
	}
	if (rdma_destroy_id(listen))
		die("rdma_destroy_id (listener)");
	printf("server: %u connections served\n", opt.n);
}

/* ---- The client ---- */

static struct sockaddr_storage server_ss;
static unsigned int started, established, bind_retries;

/* A new id for c, its address being resolved. */
static void resolve(struct conn *c)
{
	if (rdma_create_id(ch, &c->id, c, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&server_ss, 2000))
		die("rdma_resolve_addr");
}

static void start_connection(void)
{
	struct conn *c = &conns[started];

	c->index = started++;
	resolve(c);
}

/*
 * Connects c's QP. siw binds its TCP socket to the port rdma_cm picked for
 * the id (at random in the ephemeral range, rdma_cm's own port space), and
 * that bind fails with EADDRINUSE when a TCP socket of the host holds the
 * port without SO_REUSEADDR (one an earlier run left in TIME_WAIT, say):
 * siw's 256-QP runs in make bench failed so in three of four repetitions.
 * Such a connection starts again on a new id, which gets another port, at
 * most QPF_BIND_RETRIES times in all.
 */
static void connect_qp(struct conn *c)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7 };

	device_setup(c->id->verbs, cqe_for(opt.window + 1));
	create_qp(c->id, c->index, opt.window);
	if (!rdma_connect(c->id, &param))
		return;
	if (errno != EADDRINUSE || bind_retries == QPF_BIND_RETRIES)
		die("rdma_connect");
	bind_retries++;
	rdma_destroy_qp(c->id);
	if (rdma_destroy_id(c->id))
		die("rdma_destroy_id");
	resolve(c);
}

/* Handles one CM event of the connection phase. */
static void client_event(struct rdma_cm_event *ev)
{
	struct conn *c = ev->id->context;
	const struct qpf_pdata *pd_in;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		rdma_ack_cm_event(ev);
		if (rdma_resolve_route(c->id, 2000))
			die("rdma_resolve_route");
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		rdma_ack_cm_event(ev);
		connect_qp(c);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		pd_in = ev->param.conn.private_data;
		if (!pd_in || ev->param.conn.private_data_len < sizeof(*pd_in) ||
		    pd_in->magic != QPF_MAGIC)
			fail("connection %u: no region in the accept's private data (%u bytes)",
			     c->index, ev->param.conn.private_data_len);
		c->raddr = pd_in->addr;
		c->rkey = pd_in->rkey;
		c->rlen = pd_in->len;
		if (!opt.idle && c->rlen < opt.size)
			fail("connection %u: the server's region has %llu bytes, not %zu",
			     c->index, (unsigned long long)c->rlen, opt.size);
		c->established = true;
		established++;
		rdma_ack_cm_event(ev);
		return;
	default:
		fail("connection %u: unexpected event %s (status %d)", c->index,
		     rdma_event_str(ev->event), ev->status);
	}
}

static void wait_file(const char *path)
{
	struct stat st;
	double t0 = now_s();

	while (stat(path, &st)) {
		if (event_pending()) {
			struct rdma_cm_event *ev = next_event();

			fail("unexpected event %s (status %d) while waiting for %s",
			     rdma_event_str(ev->event), ev->status, path);
		}
		if ((now_s() - t0) * 1000 > QPF_FILE_WAIT_MS)
			fail("%s did not appear", path);
		usleep(100000);
	}
}

static void post_write(struct conn *c, struct ibv_mr *mr, void *src)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = opt.size, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = c->index,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = c->raddr, .rkey = c->rkey },
	}, *bad;
	int ret = ibv_post_send(c->id->qp, &wr, &bad);

	if (ret)
		fail("ibv_post_send on QP %u: %s", c->index, strerror(ret));
	c->outstanding++;
}

/* WINDOW WRITEs outstanding on every QP for opt.seconds; returns the bytes of
 * those that completed in time, and in *moved those of all (the ones still
 * outstanding at the deadline too). */
static uint64_t transfer(uint64_t *moved)
{
	struct ibv_wc wc[64];
	struct ibv_mr *mr;
	void *src;
	uint64_t total = 0, outstanding = 0;
	double t0, deadline, last;
	bool stop = false;
	unsigned int i;

	if (posix_memalign(&src, 4096, opt.size))
		fail("posix_memalign of %zu bytes", opt.size);
	memset(src, 0x5a, opt.size);
	mr = ibv_reg_mr(pd, src, opt.size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	t0 = now_s();
	deadline = t0 + opt.seconds;
	for (i = 0; i < opt.n; i++)
		for (unsigned int w = 0; w < opt.window; w++, outstanding++)
			post_write(&conns[i], mr, src);
	*moved = 0;
	last = now_s();
	while (outstanding) {
		int n = ibv_poll_cq(cq, 64, wc);
		double t;

		if (n < 0)
			fail("ibv_poll_cq: %d", n);
		t = now_s();
		if (!stop && t >= deadline)
			stop = true;
		if (n == 0) {
			if ((t - last) * 1000 > QPF_STALL_MS)
				fail("no completion for %d ms with %llu WRITEs outstanding",
				     QPF_STALL_MS, (unsigned long long)outstanding);
			continue;
		}
		last = t;
		for (int k = 0; k < n; k++) {
			struct conn *c;

			if (wc[k].wr_id >= opt.n)
				fail("a completion of an unknown work request");
			c = &conns[wc[k].wr_id];
			if (wc[k].status != IBV_WC_SUCCESS)
				fail("QP %u: WRITE completed with %s (vendor_err %#x)", c->index,
				     ibv_wc_status_str(wc[k].status), wc[k].vendor_err);
			if (wc[k].opcode != IBV_WC_RDMA_WRITE)
				fail("QP %u: a completion of opcode %d", c->index, wc[k].opcode);
			c->outstanding--;
			outstanding--;
			*moved += opt.size;
			if (stop)
				continue;
			c->bytes += opt.size;
			total += opt.size;
			post_write(c, mr, src);
			outstanding++;
		}
	}
	if (ibv_dereg_mr(mr))
		die("ibv_dereg_mr");
	free(src);
	return total;
}

static void report(uint64_t total, uint64_t moved)
{
	const double mib = 1024.0 * 1024.0;
	double agg = total / mib / opt.seconds, fair = agg / opt.n, lo = -1, hi = 0;
	unsigned int i;

	for (i = 0; i < opt.n; i++) {
		double r = conns[i].bytes / mib / opt.seconds;

		printf("qp %u: %llu bytes, %.3f MiB/s\n", i, (unsigned long long)conns[i].bytes, r);
		if (lo < 0 || r < lo)
			lo = r;
		if (r > hi)
			hi = r;
	}
	printf("qp_fair: qps %u size %zu window %u seconds %.2f bytes %llu moved %llu "
	       "aggregate_mibs %.3f min_mibs %.3f max_mibs %.3f fair_mibs %.3f min_fair %.3f\n",
	       opt.n, opt.size, opt.window, opt.seconds, (unsigned long long)total,
	       (unsigned long long)moved, agg, lo, hi, fair, fair > 0 ? lo / fair : 0.0);
}

static void disconnect_all(void)
{
	unsigned int i, gone = 0;

	for (i = 0; i < opt.n; i++)
		if (rdma_disconnect(conns[i].id))
			die("rdma_disconnect");
	while (gone < opt.n) {
		struct rdma_cm_event *ev = next_event();
		struct conn *c = ev->id->context;

		if (ev->event != RDMA_CM_EVENT_DISCONNECTED || c->disconnected)
			fail("connection %u: %s (status %d) while disconnecting", c->index,
			     rdma_event_str(ev->event), ev->status);
		c->disconnected = true;
		rdma_ack_cm_event(ev);
		gone++;
	}
	for (i = 0; i < opt.n; i++)
		destroy_conn(&conns[i]);
}

static void run_client(void)
{
	uint64_t total = 0, moved = 0;
	double t0;

	addr_of(opt.addr, opt.port, &server_ss);
	start_connection();
	if (opt.idle && opt.warm) {
		/* The warm-up QPs first (with the device, PD and CQ). */
		while (established < opt.warm) {
			while (started < opt.warm && started - established < QPF_CONNECTING)
				start_connection();
			client_event(next_event());
		}
		printf("client: %u connected (warm-up), ready\n", opt.warm);
		wait_file(opt.go);
	} else if (opt.idle) {
		/* What is not per QP first: the first id's address and route
		 * (which open the device), the PD and the CQ. */
		struct rdma_cm_event *ev = next_event();

		if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
			fail("resolving: %s (status %d)", rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		if (rdma_resolve_route(conns[0].id, 2000))
			die("rdma_resolve_route");
		ev = next_event();
		if (ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
			fail("resolving: %s (status %d)", rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		device_setup(conns[0].id->verbs, cqe_for(opt.window + 1));
		printf("client: ready\n");
		wait_file(opt.go);
		connect_qp(&conns[0]);
	}
	t0 = now_s();
	while (established < opt.n) {
		while (started < opt.n && started - established < QPF_CONNECTING)
			start_connection();
		client_event(next_event());
	}
	if (bind_retries)
		printf("client: %u connections started again on a new port (EADDRINUSE)\n",
		       bind_retries);
	printf("client: %u connected in %.2f s%s\n", opt.n, now_s() - t0,
	       opt.idle ? ", idle" : "");
	if (opt.idle)
		wait_file(opt.end);
	else
		total = transfer(&moved);
	if (event_pending()) {
		struct rdma_cm_event *ev = next_event();

		fail("unexpected event %s (status %d)", rdma_event_str(ev->event), ev->status);
	}
	disconnect_all();
	if (!opt.idle)
		report(total, moved);
	printf("client: done\n");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: qp_fair server -a ADDR -p PORT -n N [-s SIZE] [--idle [--warm M]]\n"
		"       qp_fair client -a SERVER -p PORT -n N [-s SIZE] [-w WINDOW] [-t SECONDS]\n"
		"       qp_fair client -a SERVER -p PORT -n N [-w WINDOW] --idle [--warm M] "
		"--go FILE --end FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "idle", no_argument, NULL, 'i' },
		{ "go", required_argument, NULL, 'G' },
		{ "end", required_argument, NULL, 'E' },
		{ "warm", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "server"))
		opt.server = true;
	else if (strcmp(argv[1], "client"))
		usage();
	optind = 2;
	while ((o = getopt_long(argc, argv, "a:p:n:s:w:t:", longopts, NULL)) != -1) {
		switch (o) {
		case 'a': opt.addr = optarg; break;
		case 'p': opt.port = optarg; break;
		case 'n': opt.n = strtoul(optarg, NULL, 0); break;
		case 's': opt.size = strtoul(optarg, NULL, 0); break;
		case 'w': opt.window = strtoul(optarg, NULL, 0); break;
		case 't': opt.seconds = strtod(optarg, NULL); break;
		case 'i': opt.idle = true; break;
		case 'G': opt.go = optarg; break;
		case 'E': opt.end = optarg; break;
		case 'W': opt.warm = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc || !opt.addr || !opt.port || !opt.n || opt.n > 4096 || !opt.size ||
	    !opt.window || !(opt.seconds > 0))
		usage();
	if ((opt.idle && !opt.server && (!opt.go || !opt.end)) || opt.warm >= opt.n ||
	    (opt.warm && !opt.idle))
		usage();
	conns = calloc(opt.n, sizeof(*conns));
	if (!conns)
		die("calloc");
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	if (opt.server)
		run_server();
	else
		run_client();
	if (cq && ibv_destroy_cq(cq))
		die("ibv_destroy_cq");
	if (pd && ibv_dealloc_pd(pd))
		die("ibv_dealloc_pd");
	rdma_destroy_event_channel(ch);
	free(conns);
	return 0;
}
