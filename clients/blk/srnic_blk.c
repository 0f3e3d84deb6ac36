// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_blk: a block device over remote memory, a kernel client of srnic's
 * kernel verbs API (include/srnic/kverbs.h).
 *
 * `echo "ADDR PORT" > /sys/kernel/srnic_blk/map_device` connects to an
 * export of `srnic blk serve` and adds /dev/srnicbN; `echo srnicbN >
 * /sys/kernel/srnic_blk/unmap_device` removes it (the `srnic blk map` and
 * `srnic blk unmap` commands write these files). The protocol is in
 * uapi/srnic.h (srnic_blk_*), the design in Documentation/srnic/blk.rst.
 *
 * A blk-mq driver with one hardware queue per CPU and a queue pair each. A
 * request's pages are moved with one RDMA READ or WRITE straight from or
 * into them, posted with its bio_vecs as the local memory
 * (srnic_kv_post_bvec: nothing is registered per request; the queue's
 * virt_boundary makes them one contiguous range). A WRITE completes after a
 * zero-length READ behind it on the same QP (a fence) has: iWARP answers a
 * READ only after the WRITEs before it were placed (RFC 5040, section 5.5),
 * so a completed write is in the server's memory. One fence covers every
 * WRITE posted before it, and a queue has one in flight at a time: the WRITEs
 * posted meanwhile wait for the next, posted when it completes (group commit:
 * one zero-length READ per round trip instead of one per WRITE). FLUSH and
 * FUA send a
 * srnic_blk_msg that makes the server msync and answer; FUA's message
 * follows its WRITE on the QP, so the server sees it after the data.
 *
 * Written in C: Linux 6.12's Rust block layer (kernel::block::mq) gives a
 * driver no way to reach a request's pages (bio_vecs), which this driver
 * registers. It is also the proof that C kernel code can use srnic.
 *
 * Failure: a QP that fails or disconnects, or a request that takes longer
 * than io_timeout_s, marks the device dead: every QP is drained, every
 * outstanding request ends with BLK_STS_IOERR, and so does every later one
 * until the device is unmapped. Requests never wait on the network in the
 * submitter's context (BLK_MQ_F_BLOCKING only for srnic's allocations).
 */
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/idr.h>
#include <linux/inet.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "../../include/srnic/kverbs.h"

#define SRNICB_NAME		"srnicb"
#define SRNICB_MAX_QUEUES	64
#define SRNICB_MAX_DEPTH	128
/* The largest request, and the page vectors that describe it. */
#define SRNICB_MAX_SECTORS	(256 * 1024 / SECTOR_SIZE)
#define SRNICB_MAX_PAGES	(SRNICB_MAX_SECTORS * SECTOR_SIZE / PAGE_SIZE + 1)
/* Where the receive slots' region starts, in its own address space. */
#define SRNICB_IOVA		0x100000000ULL
/* Receive slots, one srnic_blk_msg each, in one page per queue. */
#define SRNICB_SLOT		sizeof(struct srnic_blk_msg)
#define SRNICB_CQ_BATCH		16

static unsigned int queue_depth = 32;
module_param(queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth, "requests in flight per hardware queue (1-128, default 32)");
static unsigned int io_timeout_s = 30;
module_param(io_timeout_s, uint, 0644);
MODULE_PARM_DESC(io_timeout_s, "seconds a request may take before the device fails (default 30)");
static unsigned int connect_timeout_s = 30;
module_param(connect_timeout_s, uint, 0644);
MODULE_PARM_DESC(connect_timeout_s, "seconds map_device waits for each connection (default 30)");
static bool crc;
module_param(crc, bool, 0644);
MODULE_PARM_DESC(crc, "ask for MPA CRC32c on new mappings");

/* What a work request's wr_id says besides the request's tag. */
enum srnicb_wr_kind {
	SRNICB_WR_DATA = 1,	/* the request's RDMA READ or WRITE */
	SRNICB_WR_FENCE,	/* the zero-length READ behind WRITEs (the tag is its number) */
	SRNICB_WR_MSG,		/* a FLUSH message */
	SRNICB_WR_RECV,		/* a receive slot (the tag is the slot) */
};

static u64 srnicb_wr_id(enum srnicb_wr_kind kind, u32 tag)
{
	return (u64)kind << 32 | tag;
}

struct srnicb_dev;

struct srnicb_queue {
	struct srnicb_dev *dev;
	u16 index;
	u32 cq, qp;
	bool have_cq, have_qp;
	/* Connection set-up: ESTABLISHED seen, or the error (-errno). */
	bool established;
	int conn_err;
	/* Receive slots. */
	struct page *slots;
	struct srnic_reg_mr slots_mr;
	bool have_slots_mr;
	/* Serialises polling the CQ (srnic's callback, the failure work). */
	struct mutex cq_lock;
	/*
	 * Fences, under fence_lock (shared with the completions): fence_wait
	 * holds the WRITEs waiting for their fence, in the order they joined
	 * it; next_fence is the number the next fence gets, unfenced counts the
	 * WRITEs that joined since the last fence was numbered, and fence_busy
	 * says a fence is in flight. A WRITE joins after its post, with
	 * next_fence's value; a fence takes its number before its post. So
	 * fence N goes on the QP after every WRITE that joined with N, and no
	 * lock is held across a post (which may transmit).
	 */
	spinlock_t fence_lock;
	struct list_head fence_wait;
	u32 next_fence;
	unsigned int unfenced;
	bool fence_busy;
};

struct srnicb_dev {
	struct list_head list;		/* srnicb_devs */
	int id;				/* srnicbN */
	char peer[48];
	u16 port;
	struct srnic_kv_ctx *ctx;
	u32 pd;
	u32 ord;			/* READs in flight per QP */
	/* The export, from the server's accept (CPU order). */
	u64 exp_addr, exp_size;
	u32 exp_rkey, exp_block;
	bool read_only;
	struct blk_mq_tag_set tag_set;
	bool have_tag_set;
	struct gendisk *disk;
	unsigned int nr_queues;
	struct srnicb_queue *queues;
	/* Set once: the device failed (every request fails from then on). */
	atomic_t dead;
	struct work_struct fail_work;
	wait_queue_head_t conn_wait;
};

/* The per-request data (blk-mq's PDU). */
struct srnicb_cmd {
	struct srnicb_queue *q;
	/* References: one per signalled work request, one for the answer to a
	 * FLUSH message, one for the submitter. */
	atomic_t pending;
	blk_status_t status;
	unsigned long flags;
#define SRNICB_AWAIT_ANSWER	0	/* the server's FLUSHED is due */
	/* A WRITE's place in its queue's fence_wait, and its fence's number. */
	struct list_head fence_entry;
	u32 fence;
	struct bio_vec bvec[SRNICB_MAX_PAGES];
};

static DEFINE_MUTEX(srnicb_lock);	/* srnicb_devs, map and unmap */
static LIST_HEAD(srnicb_devs);
static DEFINE_IDA(srnicb_ida);
static int srnicb_major;
static struct kobject *srnicb_kobj;

static void srnicb_fail(struct srnicb_dev *dev, const char *why)
{
	if (atomic_xchg(&dev->dead, 1))
		return;
	pr_warn("srnic_blk: %s%d: %s; failing every request\n", SRNICB_NAME, dev->id, why);
	queue_work(system_unbound_wq, &dev->fail_work);
}

/* Drops one reference of a request; the last ends it. */
static void srnicb_put(struct request *rq)
{
	struct srnicb_cmd *cmd = blk_mq_rq_to_pdu(rq);

	if (!atomic_dec_and_test(&cmd->pending))
		return;
	blk_mq_end_request(rq, cmd->status);
}

static int srnicb_post_recv(struct srnicb_queue *q, u32 slot)
{
	struct srnic_post_wr wr = {
		.qp_handle = q->qp, .opcode = SRNIC_WR_RECV, .num_sge = 1,
		.wr_id = srnicb_wr_id(SRNICB_WR_RECV, slot),
	};
	struct srnic_sge sge = {
		.addr = q->slots_mr.addr + slot * SRNICB_SLOT,
		.length = SRNICB_SLOT,
		.lkey = q->slots_mr.lkey,
	};

	return srnic_kv_post(q->dev->ctx, &wr, &sge);
}

/* The request a completion or an answer names, if it is one in flight. */
static struct request *srnicb_rq(struct srnicb_queue *q, u32 tag)
{
	struct request *rq;

	if (tag >= q->dev->tag_set.queue_depth)
		return NULL;
	rq = blk_mq_tag_to_rq(q->dev->tag_set.tags[q->index], tag);
	if (!rq || !blk_mq_request_started(rq))
		return NULL;
	return rq;
}

/*
 * Fence `seq` completed (or failed: status): the WRITEs it covers, those
 * waiting for it or an earlier one, drop their fence reference.
 */
static void srnicb_fenced(struct srnicb_queue *q, u32 seq, blk_status_t status)
{
	struct srnicb_cmd *cmd, *tmp;
	LIST_HEAD(done);

	spin_lock(&q->fence_lock);
	list_for_each_entry_safe(cmd, tmp, &q->fence_wait, fence_entry) {
		if ((s32)(cmd->fence - seq) > 0)
			break;
		list_move_tail(&cmd->fence_entry, &done);
	}
	spin_unlock(&q->fence_lock);
	list_for_each_entry_safe(cmd, tmp, &done, fence_entry) {
		list_del(&cmd->fence_entry);
		if (status)
			cmd->status = status;
		srnicb_put(blk_mq_rq_from_pdu(cmd));
	}
}

/* The device failed: every WRITE still waiting for a fence fails. */
static void srnicb_fail_unfenced(struct srnicb_queue *q)
{
	u32 last;

	/* Every WRITE in fence_wait waits for next_fence or an earlier one. */
	spin_lock(&q->fence_lock);
	last = q->next_fence;
	spin_unlock(&q->fence_lock);
	srnicb_fenced(q, last, BLK_STS_IOERR);
}

/* A server's answer in receive slot `slot`. */
static void srnicb_answer(struct srnicb_queue *q, u32 slot, u32 len)
{
	struct srnic_blk_msg m;
	struct srnicb_cmd *cmd;
	struct request *rq;
	u8 *va;

	va = kmap_local_page(q->slots);
	memcpy(&m, va + slot * SRNICB_SLOT, sizeof(m));
	kunmap_local(va);
	if (len != sizeof(m) || le32_to_cpu(m.magic) != SRNIC_BLK_MAGIC ||
	    le16_to_cpu(m.kind) != SRNIC_BLK_MSG_FLUSHED || le64_to_cpu(m.tag) > U32_MAX) {
		srnicb_fail(q->dev, "the server sent a malformed message");
		return;
	}
	rq = srnicb_rq(q, le64_to_cpu(m.tag));
	cmd = rq ? blk_mq_rq_to_pdu(rq) : NULL;
	if (!cmd || !test_and_clear_bit(SRNICB_AWAIT_ANSWER, &cmd->flags)) {
		srnicb_fail(q->dev, "the server answered a request that asked nothing");
		return;
	}
	if (m.status) {
		pr_warn_ratelimited("srnic_blk: %s%d: the server's msync failed (errno %u)\n",
				    SRNICB_NAME, q->dev->id, le16_to_cpu(m.status));
		cmd->status = BLK_STS_IOERR;
	}
	if (srnicb_post_recv(q, slot))
		srnicb_fail(q->dev, "cannot post a receive");
	srnicb_put(rq);
}

static void srnicb_fence(struct srnicb_queue *q, bool completed);

static void srnicb_wc(struct srnicb_queue *q, const struct srnic_wc *wc)
{
	u32 kind = wc->wr_id >> 32, tag = (u32)wc->wr_id;
	struct request *rq;

	if (kind == SRNICB_WR_RECV) {
		if (wc->status == SRNIC_WC_SUCCESS)
			srnicb_answer(q, tag, wc->byte_len);
		else if (wc->status != SRNIC_WC_WR_FLUSH_ERR)
			srnicb_fail(q->dev, "a receive failed");
		return;
	}
	if (kind == SRNICB_WR_FENCE) {
		if (wc->status != SRNIC_WC_SUCCESS && wc->status != SRNIC_WC_WR_FLUSH_ERR) {
			pr_warn_ratelimited("srnic_blk: %s%d: a fence failed: status %u term %#x\n",
					    SRNICB_NAME, q->dev->id, wc->status, wc->term);
			srnicb_fail(q->dev, "a work request failed");
		}
		srnicb_fenced(q, tag, wc->status == SRNIC_WC_SUCCESS ? BLK_STS_OK : BLK_STS_IOERR);
		if (wc->status == SRNIC_WC_SUCCESS)
			srnicb_fence(q, true);
		return;
	}
	rq = srnicb_rq(q, tag);
	if (!rq) {
		srnicb_fail(q->dev, "a completion names no request in flight");
		return;
	}
	if (wc->status != SRNIC_WC_SUCCESS) {
		struct srnicb_cmd *cmd = blk_mq_rq_to_pdu(rq);

		cmd->status = BLK_STS_IOERR;
		if (wc->status != SRNIC_WC_WR_FLUSH_ERR) {
			pr_warn_ratelimited("srnic_blk: %s%d: work request failed: status %u term %#x\n",
					    SRNICB_NAME, q->dev->id, wc->status, wc->term);
			srnicb_fail(q->dev, "a work request failed");
		}
	}
	srnicb_put(rq);
}

/* Takes every completion of the queue's CQ, and arms it again. */
static void srnicb_poll(struct srnicb_queue *q)
{
	struct srnic_wc wc[SRNICB_CQ_BATCH];
	int i, n;

	mutex_lock(&q->cq_lock);
	for (;;) {
		n = srnic_kv_poll_cq(q->dev->ctx, q->cq, wc, SRNICB_CQ_BATCH);
		if (n < 0) {
			srnicb_fail(q->dev, "cannot poll the CQ");
			break;
		}
		for (i = 0; i < n; i++)
			srnicb_wc(q, &wc[i]);
		if (n == SRNICB_CQ_BATCH)
			continue;
		/* 1: completions came in meanwhile; poll again. */
		if (srnic_kv_req_notify_cq(q->dev->ctx, q->cq, SRNIC_CQ_NEXT_COMP) != 1)
			break;
	}
	mutex_unlock(&q->cq_lock);
}

static struct srnicb_queue *srnicb_queue_of_cq(struct srnicb_dev *dev, u32 cq)
{
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++)
		if (dev->queues[i].have_cq && dev->queues[i].cq == cq)
			return &dev->queues[i];
	return NULL;
}

static struct srnicb_queue *srnicb_queue_of_qp(struct srnicb_dev *dev, u32 qp)
{
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++)
		if (dev->queues[i].have_qp && dev->queues[i].qp == qp)
			return &dev->queues[i];
	return NULL;
}

/* srnic's CQ notification (its workqueue, process context). */
static void srnicb_cq_fired(void *priv, u32 cq)
{
	struct srnicb_queue *q = srnicb_queue_of_cq(priv, cq);

	if (q)
		srnicb_poll(q);
}

/* Takes the export's description from the server's accept. */
static int srnicb_take_export(struct srnicb_dev *dev, struct srnicb_queue *q,
			      const struct srnic_event *ev)
{
	struct srnic_blk_export e;

	if (ev->private_data_len < sizeof(e))
		return -EPROTO;
	memcpy(&e, ev->private_data, sizeof(e));
	if (le32_to_cpu(e.magic) != SRNIC_BLK_MAGIC || le16_to_cpu(e.version) != SRNIC_BLK_VERSION)
		return -EPROTO;
	if (q->index == 0) {
		dev->exp_addr = le64_to_cpu(e.addr);
		dev->exp_size = le64_to_cpu(e.size);
		dev->exp_rkey = le32_to_cpu(e.rkey);
		dev->exp_block = le32_to_cpu(e.block_size);
		dev->read_only = le16_to_cpu(e.flags) & SRNIC_BLK_EXPORT_READ_ONLY;
		return 0;
	}
	/* Every QP must reach the same export. */
	if (le64_to_cpu(e.addr) != dev->exp_addr || le64_to_cpu(e.size) != dev->exp_size ||
	    le32_to_cpu(e.rkey) != dev->exp_rkey)
		return -EPROTO;
	return 0;
}

/* srnic's connection events (its workqueue, process context). */
static void srnicb_event(void *priv, const struct srnic_event *ev)
{
	struct srnicb_dev *dev = priv;
	struct srnicb_queue *q = srnicb_queue_of_qp(dev, ev->handle);

	if (!q)
		return;
	switch (ev->event_type) {
	case SRNIC_EVENT_ESTABLISHED:
		q->conn_err = srnicb_take_export(dev, q, ev);
		q->established = !q->conn_err;
		break;
	case SRNIC_EVENT_REJECTED:
		q->conn_err = -ECONNREFUSED;
		if (ev->private_data_len)
			pr_warn("srnic_blk: %s:%u refused: %.*s\n", dev->peer, dev->port,
				(int)min_t(u32, ev->private_data_len, SRNIC_MAX_PRIVATE_DATA),
				ev->private_data);
		break;
	case SRNIC_EVENT_CONNECT_ERROR:
		q->conn_err = ev->status ? ev->status : -ECONNABORTED;
		break;
	case SRNIC_EVENT_DISCONNECTED:
	case SRNIC_EVENT_QP_ERROR:
		if (q->established)
			srnicb_fail(dev, ev->event_type == SRNIC_EVENT_DISCONNECTED ?
				    "the server disconnected" : "a queue pair failed");
		else if (!q->conn_err)
			q->conn_err = -ECONNABORTED;
		break;
	case SRNIC_EVENT_CQ_ERROR:
		srnicb_fail(dev, "a CQ overflowed");
		break;
	default:
		return;
	}
	wake_up_all(&dev->conn_wait);
}

static const struct srnic_kv_ops srnicb_ops = {
	.event = srnicb_event,
	.cq = srnicb_cq_fired,
};

/* Ends, with an error, a request that waits only for the server's answer. */
static bool srnicb_fail_waiting(struct request *rq, void *data)
{
	struct srnicb_cmd *cmd = blk_mq_rq_to_pdu(rq);

	if (cmd->q && test_and_clear_bit(SRNICB_AWAIT_ANSWER, &cmd->flags)) {
		cmd->status = BLK_STS_IOERR;
		srnicb_put(rq);
	}
	return true;
}

/*
 * The device failed: drain every QP (every work request gets its completion,
 * flushed) and take the completions, then end the requests that wait for an
 * answer that will not come.
 */
static void srnicb_fail_work(struct work_struct *work)
{
	struct srnicb_dev *dev = container_of(work, struct srnicb_dev, fail_work);
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++) {
		struct srnicb_queue *q = &dev->queues[i];

		if (!q->have_qp)
			continue;
		srnic_kv_drain_qp(dev->ctx, q->qp);
		srnicb_poll(q);
		srnicb_fail_unfenced(q);
	}
	if (dev->have_tag_set)
		blk_mq_tagset_busy_iter(&dev->tag_set, srnicb_fail_waiting, NULL);
}

/* Posts a FLUSH message for [off, off + len) (len 0: everything). */
static int srnicb_post_flush(struct srnicb_queue *q, u32 tag, u64 off, u64 len)
{
	struct srnic_blk_msg m = {
		.magic = cpu_to_le32(SRNIC_BLK_MAGIC),
		.kind = cpu_to_le16(SRNIC_BLK_MSG_FLUSH),
		.tag = cpu_to_le64(tag),
		.offset = cpu_to_le64(off),
		.length = cpu_to_le64(len),
	};
	struct srnic_post_wr wr = {
		.qp_handle = q->qp, .opcode = SRNIC_WR_SEND, .num_sge = 1,
		.flags = SRNIC_SEND_SIGNALED | SRNIC_SEND_INLINE,
		.wr_id = srnicb_wr_id(SRNICB_WR_MSG, tag),
	};
	struct srnic_sge sge = { .addr = (u64)(uintptr_t)&m, .length = sizeof(m) };

	return srnic_kv_post(q->dev->ctx, &wr, &sge);
}

/* A fence: a zero-length RDMA READ (the tag is its number). */
static int srnicb_post_fence(struct srnicb_queue *q, u32 seq)
{
	struct srnic_post_wr wr = {
		.qp_handle = q->qp, .opcode = SRNIC_WR_RDMA_READ,
		.flags = SRNIC_SEND_SIGNALED, .wr_id = srnicb_wr_id(SRNICB_WR_FENCE, seq),
		.remote_addr = q->dev->exp_addr, .rkey = q->dev->exp_rkey,
	};

	return srnic_kv_post(q->dev->ctx, &wr, NULL);
}

/*
 * The request's RDMA READ or WRITE, of its n bio_vecs at offset off of the
 * export. -ENOMEM: nothing was posted (srnic had no memory for it, or the
 * send queue is full); another error: the QP is broken.
 */
static int srnicb_post_data(struct srnicb_queue *q, struct request *rq, u16 opcode, u64 off, u32 n)
{
	struct srnicb_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct srnic_post_wr wr = {
		.qp_handle = q->qp, .opcode = opcode,
		.flags = SRNIC_SEND_SIGNALED, .wr_id = srnicb_wr_id(SRNICB_WR_DATA, rq->tag),
		.remote_addr = q->dev->exp_addr + off, .rkey = q->dev->exp_rkey,
	};

	return srnic_kv_post_bvec(q->dev->ctx, &wr, cmd->bvec, n);
}

/*
 * Posts the request's work requests. Returns a negative errno when nothing
 * was posted (-ENOMEM or -EAGAIN: try again later); else 0, with *unposted
 * the work requests whose references were taken but that could not be
 * posted (the QP is broken).
 */
static int srnicb_submit(struct srnicb_queue *q, struct request *rq, int *unposted)
{
	struct srnicb_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct srnicb_dev *dev = q->dev;
	bool write = req_op(rq) == REQ_OP_WRITE;
	bool fua = write && (rq->cmd_flags & REQ_FUA);
	u64 off = blk_rq_pos(rq) << SECTOR_SHIFT;
	u32 len = blk_rq_bytes(rq), total = 0;
	int pending = write ? 2 : 1;
	struct req_iterator iter;
	struct bio_vec bv;
	unsigned int n = 0;
	int r;

	if (off + len > dev->exp_size || off + len < off || !len)
		return -EIO;
	rq_for_each_segment(bv, rq, iter) {
		if (n == SRNICB_MAX_PAGES)
			return -EIO;
		cmd->bvec[n++] = bv;
		total += bv.bv_len;
	}
	if (total != len)
		return -EIO;

	/*
	 * READ: the data. WRITE: the data, then its fence (srnicb_fence).
	 * FUA WRITE: the data, the FLUSH message and the server's answer.
	 */
	if (write && !fua) {
		atomic_add(pending, &cmd->pending);
		r = srnicb_post_data(q, rq, SRNIC_WR_RDMA_WRITE, off, n);
		if (r == -ENOMEM || r == -EAGAIN) {
			atomic_sub(pending, &cmd->pending);
			return r;
		}
		if (!r) {
			/* Posted before the fence numbered next_fence is. */
			spin_lock(&q->fence_lock);
			cmd->fence = q->next_fence;
			list_add_tail(&cmd->fence_entry, &q->fence_wait);
			q->unfenced++;
			spin_unlock(&q->fence_lock);
		}
		*unposted = r ? 2 : 0;
		/*
		 * The device may have failed meanwhile, after the failure work
		 * ended the WRITEs waiting for a fence: do its part here.
		 */
		smp_mb();
		if (!r && atomic_read(&dev->dead))
			srnicb_fail_unfenced(q);
		return 0;
	}
	atomic_add(pending + fua, &cmd->pending);
	r = srnicb_post_data(q, rq, write ? SRNIC_WR_RDMA_WRITE : SRNIC_WR_RDMA_READ, off, n);
	if (r == -ENOMEM || r == -EAGAIN) {
		atomic_sub(pending + fua, &cmd->pending);
		return r;
	}
	if (fua)
		set_bit(SRNICB_AWAIT_ANSWER, &cmd->flags);
	*unposted = pending;
	if (r)
		return 0;
	if (--*unposted == 0)
		return 0;
	if (!srnicb_post_flush(q, rq->tag, off, len))
		--*unposted;
	return 0;
}

/*
 * Posts a fence behind the WRITEs posted since the last one, if there are
 * any and no fence is in flight (completed: the one in flight completed).
 * Called at the end of blk-mq's batch (bd->last, or commit_rqs) and when a
 * fence completes.
 */
static void srnicb_fence(struct srnicb_queue *q, bool completed)
{
	bool post = false;
	u32 seq = 0;

	spin_lock(&q->fence_lock);
	if (completed)
		q->fence_busy = false;
	if (q->unfenced && !q->fence_busy) {
		seq = q->next_fence++;
		q->unfenced = 0;
		q->fence_busy = true;
		post = true;
	}
	spin_unlock(&q->fence_lock);
	/*
	 * A fence not posted stays busy: the failure work ends the WRITEs it
	 * would cover, and every later one.
	 */
	if (post && srnicb_post_fence(q, seq))
		srnicb_fail(q->dev, "a work request could not be posted");
}

static void srnicb_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	srnicb_fence(hctx->driver_data, false);
}

static blk_status_t srnicb_queue_rq(struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd)
{
	struct srnicb_queue *q = hctx->driver_data;
	struct request *rq = bd->rq;
	struct srnicb_cmd *cmd = blk_mq_rq_to_pdu(rq);
	int unposted = 0, r;

	if (atomic_read(&q->dev->dead))
		return BLK_STS_IOERR;
	cmd->q = q;
	cmd->status = BLK_STS_OK;
	cmd->flags = 0;
	atomic_set(&cmd->pending, 1);	/* the submitter's reference */
	blk_mq_start_request(rq);

	switch (req_op(rq)) {
	case REQ_OP_FLUSH:
		/* The message and the server's answer. */
		atomic_add(2, &cmd->pending);
		set_bit(SRNICB_AWAIT_ANSWER, &cmd->flags);
		unposted = srnicb_post_flush(q, rq->tag, 0, 0) ? 1 : 0;
		r = 0;
		break;
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		r = srnicb_submit(q, rq, &unposted);
		break;
	default:
		r = -EOPNOTSUPP;
		break;
	}
	if (r == -ENOMEM || r == -EAGAIN) {
		/*
		 * srnic had no memory for the request (or the context's budget
		 * is spent by the requests in flight): nothing was posted, so
		 * blk-mq may send the request again later, as nvme-rdma does.
		 */
		return BLK_STS_RESOURCE;
	}
	if (r)
		cmd->status = BLK_STS_IOERR;
	if (unposted) {
		/* The QP is broken. No answer comes to a message not sent (the
		 * message is always the last work request). */
		cmd->status = BLK_STS_IOERR;
		atomic_sub(unposted, &cmd->pending);
		if (test_and_clear_bit(SRNICB_AWAIT_ANSWER, &cmd->flags))
			atomic_dec(&cmd->pending);
		srnicb_fail(q->dev, "a work request could not be posted");
	}
	/*
	 * The device may have failed while this was posted, after the failure
	 * work looked for requests waiting for an answer: do its part here.
	 */
	smp_mb__after_atomic();
	if (atomic_read(&q->dev->dead) && test_and_clear_bit(SRNICB_AWAIT_ANSWER, &cmd->flags)) {
		cmd->status = BLK_STS_IOERR;
		srnicb_put(rq);
	}
	srnicb_put(rq);
	if (bd->last)
		srnicb_fence(q, false);
	return BLK_STS_OK;
}

static enum blk_eh_timer_return srnicb_timeout(struct request *rq)
{
	struct srnicb_cmd *cmd = blk_mq_rq_to_pdu(rq);
	struct srnicb_dev *dev = cmd->q->dev;

	srnicb_fail(dev, "a request timed out");
	/* The failure work ends every request in flight, this one included. */
	flush_work(&dev->fail_work);
	return BLK_EH_DONE;
}

static int srnicb_init_hctx(struct blk_mq_hw_ctx *hctx, void *data, unsigned int index)
{
	struct srnicb_dev *dev = data;

	hctx->driver_data = &dev->queues[index];
	return 0;
}

static const struct blk_mq_ops srnicb_mq_ops = {
	.queue_rq = srnicb_queue_rq,
	.commit_rqs = srnicb_commit_rqs,
	.timeout = srnicb_timeout,
	.init_hctx = srnicb_init_hctx,
};

static const struct block_device_operations srnicb_fops = {
	.owner = THIS_MODULE,
};

/* Creates a queue's CQ, QP and receive slots, and connects it. */
static int srnicb_connect_queue(struct srnicb_dev *dev, struct srnicb_queue *q,
				const struct srnic_sockaddr *to)
{
	struct srnic_create_cq cq = { .cqe = 2 * SRNICB_MAX_DEPTH + 2 * queue_depth + 4 };
	struct srnic_create_qp qp = {
		.pd_handle = dev->pd,
		.max_send_wr = 2 * queue_depth + 2,
		.max_recv_wr = queue_depth,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.max_inline_data = sizeof(struct srnic_blk_msg),
	};
	struct srnic_blk_hello hello = {
		.magic = cpu_to_le32(SRNIC_BLK_MAGIC),
		.version = cpu_to_le16(SRNIC_BLK_VERSION),
		.queue = cpu_to_le16(q->index),
		.nr_queues = cpu_to_le16(dev->nr_queues),
		.depth = cpu_to_le16(queue_depth),
	};
	struct srnic_connect c = {
		.ird = dev->ord, .ord = dev->ord,
		.mpa_flags = crc ? SRNIC_MPA_CRC : 0,
		.private_data = (u64)(uintptr_t)&hello,
		.private_data_len = sizeof(hello),
		.addr = *to,
	};
	unsigned int i;
	long left;
	int r;

	q->slots = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!q->slots)
		return -ENOMEM;
	q->slots_mr.pd_handle = dev->pd;
	q->slots_mr.addr = SRNICB_IOVA;
	q->slots_mr.length = queue_depth * SRNICB_SLOT;
	q->slots_mr.access = SRNIC_ACCESS_LOCAL_WRITE;
	r = srnic_kv_reg_pages(dev->ctx, &q->slots_mr, &q->slots, 1, 0);
	if (r)
		return r;
	q->have_slots_mr = true;
	r = srnic_kv_create_cq(dev->ctx, &cq);
	if (r)
		return r;
	q->cq = cq.cq_handle;
	q->have_cq = true;
	qp.send_cq = q->cq;
	qp.recv_cq = q->cq;
	r = srnic_kv_create_qp(dev->ctx, &qp);
	if (r)
		return r;
	q->qp = qp.qp_handle;
	q->have_qp = true;
	for (i = 0; i < queue_depth; i++) {
		r = srnicb_post_recv(q, i);
		if (r)
			return r;
	}
	r = srnic_kv_req_notify_cq(dev->ctx, q->cq, SRNIC_CQ_NEXT_COMP);
	if (r < 0)
		return r;
	c.qp_handle = q->qp;
	r = srnic_kv_connect(dev->ctx, &c);
	if (r)
		return r;
	left = wait_event_interruptible_timeout(dev->conn_wait, q->established || q->conn_err,
						connect_timeout_s * HZ);
	if (left < 0)
		return left;
	if (!left)
		return -ETIMEDOUT;
	return q->conn_err;
}

static void srnicb_destroy(struct srnicb_dev *dev)
{
	unsigned int i;

	if (dev->disk) {
		if (disk_live(dev->disk))
			del_gendisk(dev->disk);
		put_disk(dev->disk);
	}
	/* No request is left; fail_work may still run (a late event). */
	atomic_set(&dev->dead, 1);
	if (dev->ctx) {
		/* Stops the notifications (one running is waited for). */
		srnic_kv_close(dev->ctx);
	}
	cancel_work_sync(&dev->fail_work);
	if (dev->have_tag_set)
		blk_mq_free_tag_set(&dev->tag_set);
	for (i = 0; dev->queues && i < dev->nr_queues; i++)
		if (dev->queues[i].slots)
			__free_page(dev->queues[i].slots);
	kfree(dev->queues);
	if (dev->id >= 0)
		ida_free(&srnicb_ida, dev->id);
	kfree(dev);
}

static int srnicb_parse_peer(const char *buf, struct srnicb_dev *dev, struct srnic_sockaddr *to)
{
	char addr[48];
	unsigned int port;

	if (sscanf(buf, "%47s %u", addr, &port) != 2 || !port || port > 65535)
		return -EINVAL;
	memset(to, 0, sizeof(*to));
	to->family = AF_INET;
	to->port = port;
	if (!in4_pton(addr, -1, to->addr, -1, NULL)) {
		to->family = AF_INET6;
		if (!in6_pton(addr, -1, to->addr, -1, NULL))
			return -EINVAL;
	}
	strscpy(dev->peer, addr, sizeof(dev->peer));
	dev->port = port;
	return 0;
}

static int srnicb_map(const char *buf)
{
	struct queue_limits lim = {
		.logical_block_size = SECTOR_SIZE,
		.max_hw_sectors = SRNICB_MAX_SECTORS,
		.max_segments = SRNICB_MAX_PAGES - 1,
		.virt_boundary_mask = PAGE_SIZE - 1,
		.features = BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA,
	};
	struct srnic_query_device qd = {};
	struct srnic_sockaddr to;
	struct srnicb_dev *dev;
	unsigned int i;
	int r;

	if (queue_depth < 1 || queue_depth > SRNICB_MAX_DEPTH)
		return -EINVAL;
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->id = -1;
	INIT_WORK(&dev->fail_work, srnicb_fail_work);
	init_waitqueue_head(&dev->conn_wait);
	r = srnicb_parse_peer(buf, dev, &to);
	if (r)
		goto out;
	dev->nr_queues = min_t(unsigned int, num_online_cpus(), SRNICB_MAX_QUEUES);
	dev->queues = kcalloc(dev->nr_queues, sizeof(*dev->queues), GFP_KERNEL);
	if (!dev->queues) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < dev->nr_queues; i++) {
		dev->queues[i].dev = dev;
		dev->queues[i].index = i;
		mutex_init(&dev->queues[i].cq_lock);
		spin_lock_init(&dev->queues[i].fence_lock);
		INIT_LIST_HEAD(&dev->queues[i].fence_wait);
	}
	r = ida_alloc(&srnicb_ida, GFP_KERNEL);
	if (r < 0)
		goto out;
	dev->id = r;

	dev->ctx = srnic_kv_open(&srnicb_ops, dev);
	if (IS_ERR(dev->ctx)) {
		r = PTR_ERR(dev->ctx);
		dev->ctx = NULL;
		goto out;
	}
	r = srnic_kv_query_device(dev->ctx, &qd);
	if (r)
		goto out;
	/* As many READs in flight as requests: none waits for an ORD slot. */
	dev->ord = clamp_t(u32, min(qd.max_ord, qd.max_ird), 1, queue_depth);
	r = srnic_kv_alloc_pd(dev->ctx, &dev->pd);
	if (r)
		goto out;
	for (i = 0; i < dev->nr_queues; i++) {
		r = srnicb_connect_queue(dev, &dev->queues[i], &to);
		if (r) {
			pr_warn("srnic_blk: %s:%u: queue %u did not connect: %d\n",
				dev->peer, dev->port, i, r);
			goto out;
		}
	}
	/* A queue that failed while the others connected fails the mapping. */
	if (atomic_read(&dev->dead)) {
		r = -ECONNRESET;
		goto out;
	}
	if (dev->exp_size < SECTOR_SIZE || dev->exp_block < SECTOR_SIZE ||
	    dev->exp_block > PAGE_SIZE || !is_power_of_2(dev->exp_block)) {
		pr_warn("srnic_blk: %s:%u: the export's size or block size is unusable\n",
			dev->peer, dev->port);
		r = -EPROTO;
		goto out;
	}
	lim.logical_block_size = dev->exp_block;

	dev->tag_set.ops = &srnicb_mq_ops;
	dev->tag_set.nr_hw_queues = dev->nr_queues;
	dev->tag_set.queue_depth = queue_depth;
	dev->tag_set.numa_node = NUMA_NO_NODE;
	dev->tag_set.cmd_size = sizeof(struct srnicb_cmd);
	dev->tag_set.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	dev->tag_set.driver_data = dev;
	r = blk_mq_alloc_tag_set(&dev->tag_set);
	if (r)
		goto out;
	dev->have_tag_set = true;
	dev->disk = blk_mq_alloc_disk(&dev->tag_set, &lim, dev);
	if (IS_ERR(dev->disk)) {
		r = PTR_ERR(dev->disk);
		dev->disk = NULL;
		goto out;
	}
	blk_queue_rq_timeout(dev->disk->queue, io_timeout_s * HZ);
	dev->disk->major = srnicb_major;
	dev->disk->first_minor = dev->id;
	dev->disk->minors = 1;
	dev->disk->fops = &srnicb_fops;
	dev->disk->private_data = dev;
	snprintf(dev->disk->disk_name, DISK_NAME_LEN, SRNICB_NAME "%d", dev->id);
	set_capacity(dev->disk, dev->exp_size >> SECTOR_SHIFT);
	set_disk_ro(dev->disk, dev->read_only);
	r = add_disk(dev->disk);
	if (r)
		goto out;
	list_add_tail(&dev->list, &srnicb_devs);
	pr_info("srnic_blk: %s: %llu bytes from %s:%u, %u queues of %u\n", dev->disk->disk_name,
		dev->exp_size, dev->peer, dev->port, dev->nr_queues, queue_depth);
	return 0;
out:
	srnicb_destroy(dev);
	return r;
}

static int srnicb_unmap(const char *buf)
{
	struct srnicb_dev *dev;
	char name[DISK_NAME_LEN];

	if (sscanf(buf, "%31s", name) != 1)
		return -EINVAL;
	list_for_each_entry(dev, &srnicb_devs, list) {
		if (!strcmp(dev->disk->disk_name, name)) {
			list_del(&dev->list);
			srnicb_destroy(dev);
			return 0;
		}
	}
	return -ENODEV;
}

/* Runs a map or unmap under srnicb_lock: a sysfs store's result. */
static ssize_t srnicb_locked(int (*op)(const char *buf), const char *buf, size_t count)
{
	int r;

	mutex_lock(&srnicb_lock);
	r = op(buf);
	mutex_unlock(&srnicb_lock);
	return r ? r : count;
}

static ssize_t map_device_store(struct kobject *kobj, struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	return srnicb_locked(srnicb_map, buf, count);
}

static ssize_t unmap_device_store(struct kobject *kobj, struct kobj_attribute *attr,
				  const char *buf, size_t count)
{
	return srnicb_locked(srnicb_unmap, buf, count);
}

/* One line per device: "srnicbN ADDR PORT SIZE live|failed". */
static ssize_t devices_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct srnicb_dev *dev;
	int n = 0;

	mutex_lock(&srnicb_lock);
	list_for_each_entry(dev, &srnicb_devs, list)
		n += sysfs_emit_at(buf, n, "%s %s %u %llu %s\n", dev->disk->disk_name, dev->peer,
				   dev->port, dev->exp_size, atomic_read(&dev->dead) ? "failed" : "live");
	mutex_unlock(&srnicb_lock);
	return n;
}

static struct kobj_attribute srnicb_map_attr = __ATTR_WO(map_device);
static struct kobj_attribute srnicb_unmap_attr = __ATTR_WO(unmap_device);
static struct kobj_attribute srnicb_devices_attr = __ATTR_RO(devices);

static struct attribute *srnicb_attrs[] = {
	&srnicb_map_attr.attr,
	&srnicb_unmap_attr.attr,
	&srnicb_devices_attr.attr,
	NULL,
};

static const struct attribute_group srnicb_group = {
	.attrs = srnicb_attrs,
};

static int __init srnicb_init(void)
{
	int r;

	srnicb_major = register_blkdev(0, SRNICB_NAME);
	if (srnicb_major < 0)
		return srnicb_major;
	srnicb_kobj = kobject_create_and_add("srnic_blk", kernel_kobj);
	if (!srnicb_kobj) {
		r = -ENOMEM;
		goto out_blkdev;
	}
	r = sysfs_create_group(srnicb_kobj, &srnicb_group);
	if (r)
		goto out_kobj;
	return 0;
out_kobj:
	kobject_put(srnicb_kobj);
out_blkdev:
	unregister_blkdev(srnicb_major, SRNICB_NAME);
	return r;
}

static void __exit srnicb_exit(void)
{
	struct srnicb_dev *dev, *next;

	/* No map or unmap can start once the files are gone. */
	sysfs_remove_group(srnicb_kobj, &srnicb_group);
	kobject_put(srnicb_kobj);
	mutex_lock(&srnicb_lock);
	list_for_each_entry_safe(dev, next, &srnicb_devs, list) {
		list_del(&dev->list);
		srnicb_destroy(dev);
	}
	mutex_unlock(&srnicb_lock);
	unregister_blkdev(srnicb_major, SRNICB_NAME);
	ida_destroy(&srnicb_ida);
}

module_init(srnicb_init);
module_exit(srnicb_exit);
MODULE_DESCRIPTION("srnic_blk: a block device over remote memory, on srnic");
MODULE_LICENSE("GPL");
