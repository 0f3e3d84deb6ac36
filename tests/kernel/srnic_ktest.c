// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_ktest: a kernel client of srnic's kernel verbs API
 * (include/srnic/kverbs.h), and the test of that API in the VMs.
 *
 * Loaded with role=local it checks the calls that need no peer, errors
 * included (a QP that never connects is drained and destroyed); role=leak
 * also listens and leaves its context open, for srnic to close when the
 * module goes away. With role=server it also listens on `port`; with
 * role=client it connects to `peer`:`port`. Between the two (one per VM,
 * kernel <-> kernel): the server rejects the client's first request (on a
 * second QP) with private data; it accepts the second with its region's
 * STag, address and length as private data; the client writes 64 KiB of a
 * pattern there with RDMA WRITE (from a region over a page array), reads it
 * back with RDMA READ (into a region over bio_vecs) and compares, then SENDs
 * "done" (inline); the server finds the pattern in its region, answers
 * "ack", and the client drains its QP (a receive left pending is flushed
 * before drain_qp returns; the server sees the disconnect).
 *
 * Results are KTAP lines in the kernel log ("srnic_ktest: ok N name"); module
 * init returns 0 only when every check passed, so insmod's exit status is the
 * verdict. Every wait is bounded by `timeout_s`.
 */
#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "../../include/srnic/kverbs.h"

static char *role = "local";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "local, server or client");
static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "the server's IPv4 address (role=client)");
static int port = 7800;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "the TCP port");
static int timeout_s = 60;
module_param(timeout_s, int, 0444);
MODULE_PARM_DESC(timeout_s, "the bound of every wait, in seconds");

#define KT_PAGES	16			/* 64 KiB regions */
#define KT_LEN		(KT_PAGES * PAGE_SIZE)
#define KT_IOVA		0x100000000ULL		/* the regions' first address */
#define KT_EVENTS	16
#define KT_HELLO	"srnic-ktest v1"
#define KT_REJECT_ME	"reject me"
#define KT_NO		"no"

/* What the server tells the client in its accept's private data. */
struct kt_region {
	__le32 rkey;
	__le32 len;
	__le64 addr;
};

struct kt {
	struct srnic_kv_ctx *ctx;
	/* Events from the callback, oldest first. */
	spinlock_t lock;
	struct srnic_event ev[KT_EVENTS];
	int nev;
	wait_queue_head_t ev_wait;
	struct completion cq_fired;
	/* A callback that ran in the wrong context (not a workqueue worker). */
	bool bad_context;
	int tests, failed;
};

static struct kt kt;

static void kt_check(bool ok, const char *name)
{
	kt.tests++;
	if (!ok)
		kt.failed++;
	pr_info("srnic_ktest: %sok %d %s\n", ok ? "" : "not ", kt.tests, name);
}

static void kt_note_context(void)
{
	if (!(current->flags & PF_WQ_WORKER) || !in_task())
		kt.bad_context = true;
}

static void kt_event(void *priv, const struct srnic_event *ev)
{
	struct kt *t = priv;

	kt_note_context();
	spin_lock(&t->lock);
	if (t->nev < KT_EVENTS)
		t->ev[t->nev++] = *ev;
	spin_unlock(&t->lock);
	wake_up(&t->ev_wait);
}

static void kt_cq(void *priv, u32 cq)
{
	struct kt *t = priv;

	kt_note_context();
	complete(&t->cq_fired);
}

static const struct srnic_kv_ops kt_ops = {
	.event = kt_event,
	.cq = kt_cq,
};

/* Takes the oldest event of `type` into *out if there is one. */
static bool kt_take_event(u32 type, struct srnic_event *out)
{
	bool found = false;
	int i;

	spin_lock(&kt.lock);
	for (i = 0; i < kt.nev; i++) {
		if (kt.ev[i].event_type == type) {
			*out = kt.ev[i];
			memmove(&kt.ev[i], &kt.ev[i + 1], (kt.nev - i - 1) * sizeof(kt.ev[0]));
			kt.nev--;
			found = true;
			break;
		}
	}
	spin_unlock(&kt.lock);
	return found;
}

static int kt_wait_event(u32 type, struct srnic_event *out)
{
	long left = wait_event_timeout(kt.ev_wait, kt_take_event(type, out), timeout_s * HZ);

	if (!left) {
		pr_info("srnic_ktest: # no event %u within %d s\n", type, timeout_s);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Waits for one completion on `cq` through the CQ callback (bounded). */
static int kt_wait_wc(u32 cq, struct srnic_wc *wc)
{
	unsigned long deadline = jiffies + timeout_s * HZ;
	int n;

	for (;;) {
		n = srnic_kv_poll_cq(kt.ctx, cq, wc, 1);
		if (n)
			return n < 0 ? n : 0;
		reinit_completion(&kt.cq_fired);
		n = srnic_kv_req_notify_cq(kt.ctx, cq, SRNIC_CQ_NEXT_COMP);
		if (n < 0)
			return n;
		if (n > 0)
			continue;
		if (time_after(jiffies, deadline) ||
		    !wait_for_completion_timeout(&kt.cq_fired, deadline - jiffies)) {
			pr_info("srnic_ktest: # no completion on CQ %u within %d s\n", cq, timeout_s);
			return -ETIMEDOUT;
		}
	}
}

static u8 kt_pattern(size_t i)
{
	return (u8)(i * 7 + 3);
}

/* The objects of one side. */
struct kt_side {
	u32 pd, scq, rcq, qp;
	struct page *pages[KT_PAGES];	/* the page-array region */
	struct srnic_reg_mr mr;
	struct page *bv_pages[KT_PAGES];	/* the bio_vec region */
	struct bio_vec bv[3];
	struct srnic_reg_mr bv_mr;
	u8 msg[64];			/* receive buffer, in the first page */
};

static struct kt_side side;

static void kt_free_pages(struct page **p)
{
	int i;

	for (i = 0; i < KT_PAGES; i++)
		if (p[i])
			__free_page(p[i]);
}

static int kt_alloc_pages(struct page **p)
{
	int i;

	for (i = 0; i < KT_PAGES; i++) {
		p[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!p[i])
			return -ENOMEM;
	}
	return 0;
}

/* Copies between a page array and a buffer (the region's bytes). */
static void kt_copy(struct page **p, size_t off, void *buf, size_t len, bool to_pages)
{
	while (len) {
		size_t n = min_t(size_t, len, PAGE_SIZE - off % PAGE_SIZE);
		u8 *va = kmap_local_page(p[off / PAGE_SIZE]);

		if (to_pages)
			memcpy(va + off % PAGE_SIZE, buf, n);
		else
			memcpy(buf, va + off % PAGE_SIZE, n);
		kunmap_local(va);
		off += n;
		buf += n;
		len -= n;
	}
}

static bool kt_pattern_in(struct page **p, size_t off, size_t len)
{
	size_t i;
	bool ok = true;

	for (i = 0; i < len && ok; i++) {
		u8 b;

		kt_copy(p, off + i, &b, 1, false);
		ok = b == kt_pattern(i);
	}
	return ok;
}

/* The checks that need no peer; leaves `side` with a PD, CQs, a QP and two regions. */
/* The QP's state (SRNIC_QPS_*), or -1 when query_qp fails. */
static int kt_qp_state(u32 qp)
{
	struct srnic_query_qp q = { .qp_handle = qp };

	return srnic_kv_query_qp(kt.ctx, &q) ? -1 : (int)q.state;
}

/*
 * Posts a receive with `wr_id` on `qp` into the receive buffer: the last 64
 * bytes of the page-array region.
 */
static int kt_post_recv_id(u32 qp, u64 wr_id)
{
	struct srnic_post_wr wr = { .qp_handle = qp, .opcode = SRNIC_WR_RECV, .num_sge = 1, .wr_id = wr_id };
	struct srnic_sge sge = { .addr = KT_IOVA + KT_LEN - 64, .length = 64, .lkey = side.mr.lkey };

	return srnic_kv_post(kt.ctx, &wr, &sge);
}

/*
 * Whether the receive CQ holds, right now (no waiting), a flush completion
 * of `wr_id` on `qp`, and only flush completions besides.
 */
static bool kt_flushed_now(u32 qp, u64 wr_id)
{
	struct srnic_wc wc;
	bool found = false;

	while (srnic_kv_poll_cq(kt.ctx, side.rcq, &wc, 1) == 1) {
		if (wc.status != SRNIC_WC_WR_FLUSH_ERR)
			return false;
		if (wc.wr_id == wr_id && wc.qp_handle == qp)
			found = true;
	}
	return found;
}

/*
 * drain_qp on `qp` with a receive pending: when it returns, the receive's
 * flush completion is in the CQ, the QP is in ERROR, a later post completes
 * at once (flushed), and a second drain succeeds.
 */
static void kt_drain(u32 qp, const char *what)
{
	char name[96];

	snprintf(name, sizeof(name), "drain_qp (%s): the pending receive is flushed before it returns", what);
	kt_check(!kt_post_recv_id(qp, 20) && !srnic_kv_drain_qp(kt.ctx, qp) && kt_flushed_now(qp, 20), name);
	snprintf(name, sizeof(name), "drain_qp (%s): the QP is in ERROR", what);
	kt_check(kt_qp_state(qp) == SRNIC_QPS_ERROR, name);
	snprintf(name, sizeof(name), "drain_qp (%s): a later post is flushed at once", what);
	kt_check(!kt_post_recv_id(qp, 21) && kt_flushed_now(qp, 21), name);
	snprintf(name, sizeof(name), "drain_qp (%s), again", what);
	kt_check(!srnic_kv_drain_qp(kt.ctx, qp), name);
}

static int kt_local(void)
{
	struct srnic_kv_ctx *bad;
	struct srnic_query_device qd = {};
	struct srnic_create_cq cq = {};
	struct srnic_create_qp qp = {};
	struct srnic_reg_mr mr = {};
	struct srnic_post_wr wr = {};
	struct bio_vec gap[2];
	u32 h;
	int r;

	bad = __srnic_kv_open(SRNIC_KV_API_VERSION + 1, THIS_MODULE, &kt_ops, &kt);
	kt_check(IS_ERR(bad) && PTR_ERR(bad) == -EPROTO, "a client of another API version is refused");
	if (!IS_ERR(bad))
		srnic_kv_close(bad);
	bad = __srnic_kv_open(SRNIC_KV_API_MIN_VERSION - 1, THIS_MODULE, &kt_ops, &kt);
	kt_check(IS_ERR(bad) && PTR_ERR(bad) == -EPROTO, "a client of a version before the first is refused");
	if (!IS_ERR(bad))
		srnic_kv_close(bad);
	/* Each version adds to the one before: the oldest one's clients still work. */
	bad = __srnic_kv_open(SRNIC_KV_API_MIN_VERSION, THIS_MODULE, &kt_ops, &kt);
	kt_check(!IS_ERR(bad), "a client of the oldest API version is taken");
	if (!IS_ERR(bad))
		srnic_kv_close(bad);

	kt.ctx = srnic_kv_open(&kt_ops, &kt);
	kt_check(!IS_ERR(kt.ctx), "open");
	if (IS_ERR(kt.ctx)) {
		kt.ctx = NULL;
		return -EIO;
	}
	r = srnic_kv_query_device(kt.ctx, &qd);
	kt_check(!r && qd.max_qp > 0 && qd.max_mr_size >= KT_LEN, "query_device");

	kt_check(!srnic_kv_alloc_pd(kt.ctx, &side.pd), "alloc_pd");
	kt_check(srnic_kv_dealloc_pd(kt.ctx, side.pd + 100) == -EINVAL, "dealloc_pd of an unknown PD: EINVAL");

	if (kt_alloc_pages(side.pages) || kt_alloc_pages(side.bv_pages))
		return -ENOMEM;
	mr.pd_handle = side.pd;
	mr.addr = KT_IOVA;
	mr.length = KT_LEN;
	mr.access = SRNIC_ACCESS_REMOTE_WRITE;
	kt_check(srnic_kv_reg_pages(kt.ctx, &mr, side.pages, KT_PAGES, 0) == -EINVAL,
		 "reg_pages: remote write without local write: EINVAL");
	mr.access = SRNIC_ACCESS_LOCAL_WRITE;
	kt_check(srnic_kv_reg_pages(kt.ctx, &mr, side.pages, KT_PAGES, PAGE_SIZE) == -EINVAL,
		 "reg_pages: offset beyond the first page: EINVAL");
	kt_check(srnic_kv_reg_pages(kt.ctx, &mr, side.pages, KT_PAGES, 1) == -EINVAL,
		 "reg_pages: region beyond its pages: EINVAL");
	side.mr = mr;
	side.mr.access = SRNIC_ACCESS_LOCAL_WRITE | SRNIC_ACCESS_REMOTE_WRITE | SRNIC_ACCESS_REMOTE_READ;
	kt_check(!srnic_kv_reg_pages(kt.ctx, &side.mr, side.pages, KT_PAGES, 0) &&
		 side.mr.lkey && side.mr.rkey == side.mr.lkey, "reg_pages");

	/* bio_vecs: from 512 bytes into a page, a whole page, 1000 bytes of a third. */
	bvec_set_page(&side.bv[0], side.bv_pages[0], PAGE_SIZE - 512, 512);
	bvec_set_page(&side.bv[1], side.bv_pages[1], PAGE_SIZE, 0);
	bvec_set_page(&side.bv[2], side.bv_pages[3], 1000, 0);
	side.bv_mr.pd_handle = side.pd;
	side.bv_mr.addr = KT_IOVA;
	side.bv_mr.access = SRNIC_ACCESS_LOCAL_WRITE;
	kt_check(!srnic_kv_reg_bvec(kt.ctx, &side.bv_mr, side.bv, 3) &&
		 side.bv_mr.length == PAGE_SIZE - 512 + PAGE_SIZE + 1000, "reg_bvec");
	bvec_set_page(&gap[0], side.bv_pages[4], 100, 0);
	bvec_set_page(&gap[1], side.bv_pages[5], 100, 0);
	mr = side.bv_mr;
	kt_check(srnic_kv_reg_bvec(kt.ctx, &mr, gap, 2) == -EINVAL,
		 "reg_bvec: bio_vecs with a gap: EINVAL");
	/* Pieces of one page (the block layer merges 1 KiB buffers so). */
	bvec_set_page(&gap[0], side.bv_pages[4], 1024, 1024);
	bvec_set_page(&gap[1], side.bv_pages[4], 1024, 2048);
	mr = side.bv_mr;
	kt_check(!srnic_kv_reg_bvec(kt.ctx, &mr, gap, 2) && mr.length == 2048 &&
		 !srnic_kv_dereg_mr(kt.ctx, mr.mr_handle),
		 "reg_bvec: contiguous pieces of one page");
	bvec_set_page(&gap[1], side.bv_pages[4], 1024, 3072);
	mr = side.bv_mr;
	kt_check(srnic_kv_reg_bvec(kt.ctx, &mr, gap, 2) == -EINVAL,
		 "reg_bvec: pieces of one page with a hole: EINVAL");

	cq.cqe = 0;
	kt_check(srnic_kv_create_cq(kt.ctx, &cq) == -EINVAL, "create_cq of 0 entries: EINVAL");
	cq.cqe = 64;
	kt_check(!srnic_kv_create_cq(kt.ctx, &cq), "create_cq (send)");
	side.scq = cq.cq_handle;
	kt_check(!srnic_kv_create_cq(kt.ctx, &cq), "create_cq (receive)");
	side.rcq = cq.cq_handle;

	qp.pd_handle = side.pd;
	qp.send_cq = side.scq;
	qp.recv_cq = side.rcq + 100;
	qp.max_send_wr = 16;
	qp.max_recv_wr = 16;
	qp.max_send_sge = 2;
	qp.max_recv_sge = 2;
	qp.max_inline_data = 64;
	kt_check(srnic_kv_create_qp(kt.ctx, &qp) == -EINVAL, "create_qp with an unknown CQ: EINVAL");
	qp.recv_cq = side.rcq;
	kt_check(!srnic_kv_create_qp(kt.ctx, &qp), "create_qp");
	side.qp = qp.qp_handle;
	kt_check(srnic_kv_destroy_cq(kt.ctx, side.scq) == -EBUSY, "destroy_cq of a CQ in use: EBUSY");

	wr.qp_handle = side.qp;
	wr.opcode = SRNIC_WR_RDMA_WRITE;
	wr.flags = SRNIC_SEND_SIGNALED;
	wr.num_sge = 3;
	{
		struct srnic_sge three[3] = {};

		kt_check(srnic_kv_post(kt.ctx, &wr, three) == -EINVAL,
			 "post of more SGEs than the QP has: EINVAL");
	}
	wr.num_sge = 0;
	wr.qp_handle = side.qp + 100;
	kt_check(srnic_kv_post(kt.ctx, &wr, NULL) == -EINVAL, "post to an unknown QP: EINVAL");
	wr.qp_handle = side.qp;
	wr.opcode = 99;
	kt_check(srnic_kv_post(kt.ctx, &wr, NULL) == -EINVAL, "post of an unknown opcode: EINVAL");
	kt_check(srnic_kv_post_bvec(kt.ctx, &wr, side.bv, 3) == -EINVAL,
		 "post_bvec of an unknown opcode: EINVAL");
	wr.opcode = SRNIC_WR_RECV;
	kt_check(srnic_kv_post_bvec(kt.ctx, &wr, side.bv, 3) == -EINVAL, "post_bvec of a RECV with flags: EINVAL");
	wr.opcode = SRNIC_WR_SEND;
	wr.flags = SRNIC_SEND_SIGNALED | SRNIC_SEND_INLINE;
	kt_check(srnic_kv_post_bvec(kt.ctx, &wr, side.bv, 3) == -EINVAL, "post_bvec inline: EINVAL");
	wr.flags = SRNIC_SEND_SIGNALED;
	bvec_set_page(&gap[0], side.bv_pages[4], 100, 0);
	bvec_set_page(&gap[1], side.bv_pages[5], 100, 0);
	kt_check(srnic_kv_post_bvec(kt.ctx, &wr, gap, 2) == -EINVAL,
		 "post_bvec of bio_vecs with a gap: EINVAL");
	kt_check(srnic_kv_post_bvec(kt.ctx, &wr, side.bv, 0) == -EINVAL &&
		 srnic_kv_post_bvec(kt.ctx, &wr, NULL, 1) == -EINVAL, "post_bvec of no bio_vecs: EINVAL");
	wr.qp_handle = side.qp + 100;
	kt_check(srnic_kv_post_bvec(kt.ctx, &wr, side.bv, 3) == -EINVAL, "post_bvec to an unknown QP: EINVAL");
	wr.qp_handle = side.qp;

	kt_check(kt_qp_state(side.qp) == SRNIC_QPS_INIT, "query_qp of a new QP: INIT");
	{
		struct srnic_query_qp q = { .qp_handle = side.qp + 100 };

		kt_check(srnic_kv_query_qp(kt.ctx, &q) == -EINVAL, "query_qp of an unknown QP: EINVAL");
	}
	kt_check(srnic_kv_drain_qp(kt.ctx, side.qp + 100) == -EINVAL, "drain_qp of an unknown QP: EINVAL");
	/* A QP that never connects, drained, then destroyed. */
	if (!srnic_kv_create_qp(kt.ctx, &qp)) {
		h = qp.qp_handle;
		kt_drain(h, "never connected");
		kt_check(!srnic_kv_destroy_qp(kt.ctx, h) && srnic_kv_destroy_qp(kt.ctx, h) == -EINVAL,
			 "destroy_qp, twice: EINVAL the second time");
	} else {
		kt_check(false, "create_qp (a second QP)");
	}

	/* A spare region, deregistered: its handle is gone afterwards. */
	mr = side.mr;
	mr.length = PAGE_SIZE;
	mr.access = SRNIC_ACCESS_LOCAL_WRITE;
	r = srnic_kv_reg_pages(kt.ctx, &mr, side.pages, 1, 0) ? -1 : 0;
	if (!r) {
		h = mr.mr_handle;
		kt_check(!srnic_kv_dereg_mr(kt.ctx, h) && srnic_kv_dereg_mr(kt.ctx, h) == -EINVAL,
			 "dereg_mr, twice: EINVAL the second time");
	} else {
		kt_check(false, "reg_pages of a spare region");
	}
	return 0;
}

/* Posts the receive of the exchange (wr_id 1) on the side's QP. */
static int kt_post_recv(void)
{
	return kt_post_recv_id(side.qp, 1);
}

static int kt_send_inline(const char *text)
{
	struct srnic_post_wr wr = { .qp_handle = side.qp, .opcode = SRNIC_WR_SEND, .num_sge = 1,
				    .flags = SRNIC_SEND_SIGNALED | SRNIC_SEND_INLINE, .wr_id = 2 };
	struct srnic_sge sge = { .addr = (u64)(uintptr_t)text, .length = strlen(text) + 1 };

	return srnic_kv_post(kt.ctx, &wr, &sge);
}

/* Where the server's receive of "done" lands: 64 bytes of a bio_vec page. */
#define KT_RECV_PAGE	10
#define KT_RECV_OFF	200

/* Waits for a receive and checks that `text` arrived at `off` of pages `p`. */
static bool kt_received_at(struct page **p, size_t off, const char *text)
{
	struct srnic_wc wc;
	char got[64] = {};

	if (kt_wait_wc(side.rcq, &wc) || wc.status != SRNIC_WC_SUCCESS || wc.opcode != SRNIC_WC_RECV)
		return false;
	kt_copy(p, off, got, min_t(u32, wc.byte_len, sizeof(got) - 1), false);
	return !strcmp(got, text);
}

/* Waits for the receive posted by kt_post_recv and checks it holds `text`. */
static bool kt_received(const char *text)
{
	return kt_received_at(side.pages, KT_LEN - 64, text);
}

static bool kt_sent(void)
{
	struct srnic_wc wc;

	return !kt_wait_wc(side.scq, &wc) && wc.status == SRNIC_WC_SUCCESS && wc.opcode == SRNIC_WC_SEND;
}

static int kt_server(void)
{
	struct srnic_listen l = { .backlog = 4 };
	struct srnic_accept a = {};
	struct srnic_event ev;
	struct kt_region reg = {
		.rkey = cpu_to_le32(side.mr.rkey),
		.len = cpu_to_le32(KT_LEN - 64),
		.addr = cpu_to_le64(KT_IOVA),
	};

	l.addr.family = AF_INET;
	l.addr.port = port;
	kt_check(!srnic_kv_listen(kt.ctx, &l) && l.addr.port == port, "listen");
	pr_info("srnic_ktest: # listening on port %d\n", port);
	/* The client's first request is one to reject. */
	kt_check(!kt_wait_event(SRNIC_EVENT_CONNECT_REQUEST, &ev) &&
		 ev.private_data_len == sizeof(KT_REJECT_ME) &&
		 !memcmp(ev.private_data, KT_REJECT_ME, sizeof(KT_REJECT_ME)),
		 "a connection request to reject");
	{
		struct srnic_reject rj = {
			.conn_id = ev.conn_id,
			.private_data = (u64)(uintptr_t)KT_NO,
			.private_data_len = sizeof(KT_NO),
		};

		kt_check(!srnic_kv_reject(kt.ctx, &rj), "reject with private data");
		kt_check(srnic_kv_reject(kt.ctx, &rj) == -EINVAL, "reject of a request no longer pending: EINVAL");
	}
	kt_check(!kt_wait_event(SRNIC_EVENT_CONNECT_REQUEST, &ev) &&
		 ev.private_data_len == sizeof(KT_HELLO) && !memcmp(ev.private_data, KT_HELLO, sizeof(KT_HELLO)),
		 "a connection request with the client's private data");
	{
		/* The receive for the client's "done": 64 bytes of a bio_vec page. */
		struct srnic_post_wr wr = { .qp_handle = side.qp, .opcode = SRNIC_WR_RECV, .wr_id = 1 };
		struct bio_vec bv;

		bvec_set_page(&bv, side.bv_pages[KT_RECV_PAGE], 64, KT_RECV_OFF);
		kt_check(!srnic_kv_post_bvec(kt.ctx, &wr, &bv, 1), "post_bvec: RECV into a bio_vec, before accept");
	}
	a.conn_id = ev.conn_id;
	a.qp_handle = side.qp;
	a.ird = 4;
	a.ord = 4;
	a.private_data = (u64)(uintptr_t)&reg;
	a.private_data_len = sizeof(reg);
	kt_check(!srnic_kv_accept(kt.ctx, &a), "accept with the region as private data");
	kt_check(!kt_wait_event(SRNIC_EVENT_ESTABLISHED, &ev), "established");
	kt_check(kt_received_at(side.bv_pages + KT_RECV_PAGE, KT_RECV_OFF, "done"),
		 "the client's SEND arrived in the bio_vec");
	kt_check(kt_pattern_in(side.pages, 0, KT_LEN - 64), "the client's RDMA WRITE is in the region");
	kt_check(!kt_send_inline("ack") && kt_sent(), "SEND the answer (inline)");
	kt_check(!kt_wait_event(SRNIC_EVENT_DISCONNECTED, &ev), "the client disconnected");
	kt_check(!srnic_kv_destroy_listener(kt.ctx, l.listener_handle), "destroy_listener");
	return 0;
}

static int kt_client(void)
{
	struct srnic_connect c = {};
	struct srnic_event ev;
	struct srnic_post_wr wr = {};
	struct srnic_sge sge;
	struct srnic_wc wc;
	struct kt_region reg;
	u8 *buf;
	size_t i, len;
	bool ok;

	c.qp_handle = side.qp;
	c.ird = 4;
	c.ord = 4;
	c.private_data = (u64)(uintptr_t)KT_HELLO;
	c.private_data_len = sizeof(KT_HELLO);
	c.addr.family = AF_INET;
	c.addr.port = port;
	if (!in4_pton(peer, -1, c.addr.addr, -1, NULL)) {
		kt_check(false, "the peer parameter is an IPv4 address");
		return -EINVAL;
	}
	{
		/* A first connect, on a second QP, that the server rejects. */
		struct srnic_create_qp q = {
			.pd_handle = side.pd, .send_cq = side.scq, .recv_cq = side.rcq,
			.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
		};
		struct srnic_connect rc = c;

		kt_check(!srnic_kv_create_qp(kt.ctx, &q), "create_qp (to be rejected)");
		rc.qp_handle = q.qp_handle;
		rc.private_data = (u64)(uintptr_t)KT_REJECT_ME;
		rc.private_data_len = sizeof(KT_REJECT_ME);
		kt_check(!srnic_kv_connect(kt.ctx, &rc), "connect (to be rejected)");
		kt_check(!kt_wait_event(SRNIC_EVENT_REJECTED, &ev) && ev.handle == q.qp_handle &&
			 ev.private_data_len == sizeof(KT_NO) && !memcmp(ev.private_data, KT_NO, sizeof(KT_NO)),
			 "REJECTED with the server's private data");
		kt_check(!srnic_kv_destroy_qp(kt.ctx, q.qp_handle), "destroy_qp of the rejected QP");
	}
	kt_check(!kt_post_recv(), "post_recv before connect");
	kt_check(!srnic_kv_connect(kt.ctx, &c), "connect");
	if (kt_wait_event(SRNIC_EVENT_ESTABLISHED, &ev) || ev.private_data_len != sizeof(reg)) {
		kt_check(false, "established with the server's region");
		return -EIO;
	}
	kt_check(true, "established with the server's region");
	memcpy(&reg, ev.private_data, sizeof(reg));
	len = le32_to_cpu(reg.len);
	if (len > KT_LEN - 64)
		len = KT_LEN - 64;

	buf = kvmalloc(KT_LEN, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		buf[i] = kt_pattern(i);
	kt_copy(side.pages, 0, buf, len, true);

	wr.qp_handle = side.qp;
	wr.opcode = SRNIC_WR_RDMA_WRITE;
	wr.flags = SRNIC_SEND_SIGNALED;
	wr.num_sge = 1;
	wr.wr_id = 10;
	wr.remote_addr = le64_to_cpu(reg.addr);
	wr.rkey = le32_to_cpu(reg.rkey);
	sge.addr = KT_IOVA;
	sge.length = len;
	sge.lkey = side.mr.lkey;
	ok = !srnic_kv_post(kt.ctx, &wr, &sge) && !kt_wait_wc(side.scq, &wc) &&
	     wc.status == SRNIC_WC_SUCCESS && wc.opcode == SRNIC_WC_RDMA_WRITE && wc.wr_id == 10;
	kt_check(ok, "RDMA WRITE of 64 KiB from a page-array region");

	/*
	 * Posts whose local memory is bio_vecs (no region): three pages of the
	 * inverted pattern written over the start of the server's region,
	 * read back into side.bv, then the pattern written back (the server
	 * checks its whole region afterwards).
	 */
	{
		struct bio_vec three[3];
		size_t n = 3 * PAGE_SIZE, at = 0;

		for (i = 0; i < n; i++)
			buf[KT_LEN - n + i] = ~kt_pattern(i);
		kt_copy(side.bv_pages + 6, 0, buf + KT_LEN - n, n, true);
		for (i = 0; i < 3; i++)
			bvec_set_page(&three[i], side.bv_pages[6 + i], PAGE_SIZE, 0);
		wr.wr_id = 12;
		ok = !srnic_kv_post_bvec(kt.ctx, &wr, three, 3) && !kt_wait_wc(side.scq, &wc) &&
		     wc.status == SRNIC_WC_SUCCESS && wc.opcode == SRNIC_WC_RDMA_WRITE && wc.wr_id == 12;
		kt_check(ok, "post_bvec: RDMA WRITE from bio_vecs");
		memset(buf + KT_LEN - n, 0, n);
		kt_copy(side.bv_pages, 0, buf + KT_LEN - n, n, true);
		kt_copy(side.bv_pages + 3, 0, buf + KT_LEN - n, PAGE_SIZE, true);
		wr.opcode = SRNIC_WR_RDMA_READ;
		wr.wr_id = 13;
		ok = ok && !srnic_kv_post_bvec(kt.ctx, &wr, side.bv, 3) && !kt_wait_wc(side.scq, &wc) &&
		     wc.status == SRNIC_WC_SUCCESS && wc.opcode == SRNIC_WC_RDMA_READ && wc.wr_id == 13 &&
		     wc.byte_len == side.bv_mr.length;
		kt_check(ok, "post_bvec: RDMA READ into bio_vecs");
		for (i = 0; i < ARRAY_SIZE(side.bv) && ok; i++) {
			u8 *va = kmap_local_page(side.bv[i].bv_page);
			size_t k;

			for (k = 0; k < side.bv[i].bv_len && ok; k++)
				ok = va[side.bv[i].bv_offset + k] == (u8)~kt_pattern(at + k);
			kunmap_local(va);
			at += side.bv[i].bv_len;
		}
		kt_check(ok, "post_bvec: what was read back is what was written");
		kt_copy(side.bv_pages + 6, 0, buf, n, true);
		wr.opcode = SRNIC_WR_RDMA_WRITE;
		wr.wr_id = 14;
		ok = !srnic_kv_post_bvec(kt.ctx, &wr, three, 3) && !kt_wait_wc(side.scq, &wc) &&
		     wc.status == SRNIC_WC_SUCCESS && wc.wr_id == 14;
		kt_check(ok, "post_bvec: RDMA WRITE of the pattern back");
	}

	/* Read the first bytes back into the bio_vec region. */
	wr.opcode = SRNIC_WR_RDMA_READ;
	wr.wr_id = 11;
	sge.addr = KT_IOVA;
	sge.length = side.bv_mr.length;
	sge.lkey = side.bv_mr.lkey;
	ok = !srnic_kv_post(kt.ctx, &wr, &sge) && !kt_wait_wc(side.scq, &wc) &&
	     wc.status == SRNIC_WC_SUCCESS && wc.opcode == SRNIC_WC_RDMA_READ && wc.wr_id == 11;
	kt_check(ok, "RDMA READ into a bio_vec region");
	if (ok) {
		size_t at = 0;

		for (i = 0; i < ARRAY_SIZE(side.bv) && ok; i++) {
			u8 *va = kmap_local_page(side.bv[i].bv_page);

			ok = !memcmp(va + side.bv[i].bv_offset, buf + at, side.bv[i].bv_len);
			kunmap_local(va);
			at += side.bv[i].bv_len;
		}
		kt_check(ok, "what was read back is what was written");
	}
	kvfree(buf);

	{
		/* The last message, a SEND from a bio_vec (the server answers inline). */
		char text[] = "done";
		struct bio_vec done;

		kt_copy(side.bv_pages + 9, 100, text, sizeof(text), true);
		bvec_set_page(&done, side.bv_pages[9], sizeof(text), 100);
		wr.opcode = SRNIC_WR_SEND;
		wr.wr_id = 2;
		kt_check(!srnic_kv_post_bvec(kt.ctx, &wr, &done, 1) && kt_sent(), "post_bvec: SEND from a bio_vec");
	}
	kt_check(kt_received("ack"), "the server's answer arrived");
	kt_check(kt_qp_state(side.qp) == SRNIC_QPS_RTS, "query_qp: RTS");
	kt_drain(side.qp, "connected");
	kt_check(!kt_wait_event(SRNIC_EVENT_DISCONNECTED, &ev), "drain_qp: disconnected");
	kt_check(!srnic_kv_disconnect(kt.ctx, side.qp, 0), "disconnect after drain_qp");
	return 0;
}

/*
 * Leaves the context open, with a listener and the regions, for srnic to
 * close when this module goes away (rmmod).
 */
static int kt_leak(void)
{
	struct srnic_listen l = { .backlog = 4 };

	l.addr.family = AF_INET;
	l.addr.port = port;
	kt_check(!srnic_kv_listen(kt.ctx, &l), "listen, and leave the context open");
	kt.ctx = NULL;
	return 0;
}

static int __init kt_init(void)
{
	int r;

	spin_lock_init(&kt.lock);
	init_waitqueue_head(&kt.ev_wait);
	init_completion(&kt.cq_fired);
	pr_info("srnic_ktest: KTAP version 1\n");
	r = kt_local();
	if (!r && !strcmp(role, "server"))
		r = kt_server();
	else if (!r && !strcmp(role, "client"))
		r = kt_client();
	else if (!r && !strcmp(role, "leak"))
		r = kt_leak();
	else if (!r && strcmp(role, "local"))
		r = -EINVAL;
	kt_check(!kt.bad_context, "every callback ran in a workqueue worker");
	if (kt.ctx) {
		srnic_kv_close(kt.ctx);
		kt_check(true, "close");
	}
	/* srnic holds its own references on the pages: they can go now. */
	kt_free_pages(side.pages);
	kt_free_pages(side.bv_pages);
	pr_info("srnic_ktest: 1..%d\n", kt.tests);
	pr_info("srnic_ktest: # %s: %d of %d checks failed%s\n", role, kt.failed, kt.tests,
		r ? " (stopped early)" : "");
	return r || kt.failed ? -EIO : 0;
}

static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_DESCRIPTION("srnic kernel verbs API test");
MODULE_LICENSE("GPL");
