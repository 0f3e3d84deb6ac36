// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: zero-copy transmit notices. Wrapped once in
 * rust/sys/zcopy.rs.
 *
 * A message sent zero-copy (MSG_ZEROCOPY with msg_ubuf, as io_uring's
 * zero-copy send does) hands TCP references to the pages it comes from; TCP
 * drops them when the last buffer holding them is freed: when the peer
 * acknowledged the bytes (or the connection was reset) and the device sent
 * its last copy. Until then the sender's work request must not complete: its
 * owner could change the bytes that a retransmission would send.
 *
 * struct srnic_zc is that notice. It is a ubuf_info, counted like one: the
 * sender holds one reference from srnic_zc_new() until srnic_zc_put(), and
 * every buffer TCP links it to holds one more. The last put, from any
 * context (TCP frees buffers in softirq), puts the notice on one list and
 * queues one work item on srnic's workqueue, which calls the done function
 * of each notice listed in process context and frees it. Module exit waits
 * for every notice (srnic_zc_drain()).
 */
#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "glue.h"

struct srnic_zc {
	struct ubuf_info ubuf;
	struct llist_node node;
	srnic_zc_fn done;
	void *owner;
	u64 cookie;
};

static LLIST_HEAD(srnic_zc_released);
static atomic_t srnic_zc_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(srnic_zc_idle);
static struct workqueue_struct *srnic_zc_wq;

static void srnic_zc_work_fn(struct work_struct *w)
{
	struct llist_node *list = llist_del_all(&srnic_zc_released);
	struct srnic_zc *zc, *next;

	llist_for_each_entry_safe(zc, next, list, node) {
		zc->done(zc->owner, zc->cookie);
		kfree(zc);
		if (atomic_dec_and_test(&srnic_zc_live))
			wake_up(&srnic_zc_idle);
	}
}

static DECLARE_WORK(srnic_zc_work, srnic_zc_work_fn);

/* Drops one reference (skb is NULL for the sender's own, see net_zcopy_put). */
static void srnic_zc_complete(struct sk_buff *skb, struct ubuf_info *uarg, bool zerocopy_success)
{
	struct srnic_zc *zc = container_of(uarg, struct srnic_zc, ubuf);

	if (!refcount_dec_and_test(&uarg->refcnt))
		return;
	if (llist_add(&zc->node, &srnic_zc_released))
		queue_work(READ_ONCE(srnic_zc_wq), &srnic_zc_work);
}

static const struct ubuf_info_ops srnic_zc_ops = {
	.complete = srnic_zc_complete,
};

/* Called once at module init, before any notice: where released notices go. */
void srnic_zc_setup(struct workqueue_struct *wq)
{
	WRITE_ONCE(srnic_zc_wq, wq);
}

/*
 * A notice that calls done(owner, cookie) once TCP and the sender are done
 * with it; NULL when memory is short (the sender then copies). Never sleeps:
 * the transmit path of a kernel client's writeback allocates it.
 */
struct srnic_zc *srnic_zc_new(srnic_zc_fn done, void *owner, u64 cookie)
{
	struct srnic_zc *zc = kmalloc(sizeof(*zc), GFP_NOWAIT | __GFP_NOWARN);

	if (!zc)
		return NULL;
	zc->ubuf.ops = &srnic_zc_ops;
	refcount_set(&zc->ubuf.refcnt, 1);
	/* The pages are counted references (get_page), as MSG_ZEROCOPY's are:
	 * nothing needs to copy them before the buffer leaves the host. */
	zc->ubuf.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
	zc->done = done;
	zc->owner = owner;
	zc->cookie = cookie;
	atomic_inc(&srnic_zc_live);
	return zc;
}

/* The sender's reference: after this, done runs once TCP is done too. */
void srnic_zc_put(struct srnic_zc *zc)
{
	net_zcopy_put(&zc->ubuf);
}

struct ubuf_info *srnic_zc_ubuf(struct srnic_zc *zc)
{
	return &zc->ubuf;
}

/*
 * Waits until every notice ran its done function. Module exit calls it once
 * every socket of srnic's is released: TCP frees a released connection's
 * buffers when the peer acknowledges their bytes, at once when the
 * connection is reset, or when TCP gives up on the peer (the stall timeout);
 * the device driver frees its copies once it sent them. TASK_IDLE: a driver
 * that holds a buffer for long is not a hung task of srnic's.
 */
void srnic_zc_drain(void)
{
	while (!wait_event_idle_timeout(srnic_zc_idle, !atomic_read(&srnic_zc_live), 10 * HZ))
		pr_warn("srnic: waiting for the network stack to release %d zero-copy sends\n",
			atomic_read(&srnic_zc_live));
	flush_work(&srnic_zc_work);
}

/*
 * A page-fragment of len bytes (len <= PAGE_SIZE) for bytes that TCP may
 * reference after the call that sent them: a zero-copy send's framing. NULL
 * when memory is short. Freed with srnic_frag_free(): TCP holds its own
 * references on the page.
 */
void *srnic_frag_alloc(unsigned int len)
{
	return netdev_alloc_frag(len);
}

void srnic_frag_free(void *addr)
{
	skb_free_frag(addr);
}
