/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic: the kernel verbs API, for modules that use srnic from the kernel
 * (Documentation/srnic/kernel-api.rst is the reference).
 *
 * The same verbs core serves /dev/srnic and kernel clients, so the argument
 * structures are the user-space ABI's (uapi/srnic.h), with kernel pointers
 * where the ABI has user pointers (private data, inline send data). Their
 * `size` and `reserved` fields are ignored here: the API version below
 * covers the layout.
 *
 * Objects are named by the u32 handles of one context, as on the character
 * device. Every call returns 0 or a negative errno unless said otherwise; all
 * may sleep (process context), except that none waits on the network.
 *
 * Notifications: a context's `ops->event` gets its connection manager and
 * asynchronous events (SRNIC_EVENT_*), `ops->cq` the handle of an armed CQ
 * that fired (srnic_kv_req_notify_cq). Both are called in process context,
 * one at a time per context, from a work item of srnic's WQ_MEM_RECLAIM
 * workqueue "srnic_kv", never from the caller's own calls. They may post,
 * poll and arm, but must not call srnic_kv_close() on their own context.
 */
#ifndef _SRNIC_KVERBS_H
#define _SRNIC_KVERBS_H

#include <linux/bvec.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/types.h>

#include "../../uapi/srnic.h"

/*
 * Version of this API. srnic refuses a client built for a version it does
 * not have (srnic_kv_open() fails with -EPROTO and the kernel log names the
 * module). Each version adds to the one before, so srnic also takes clients
 * of every version from SRNIC_KV_API_MIN_VERSION on. Version 2 added
 * srnic_kv_post_bvec().
 */
#define SRNIC_KV_API_VERSION 2
#define SRNIC_KV_API_MIN_VERSION 1

struct srnic_kv_ctx;

/* A context's notifications (either may be NULL); `priv` is passed back. */
struct srnic_kv_ops {
	void (*event)(void *priv, const struct srnic_event *ev);
	void (*cq)(void *priv, u32 cq_handle);
};

struct srnic_kv_ctx *__srnic_kv_open(u32 api_version, struct module *owner,
				     const struct srnic_kv_ops *ops, void *priv);

/*
 * Opens a context for the calling module: ERR_PTR(-EPROTO) for a client built
 * for another API version, ERR_PTR(-ENOMEM) when out of memory.
 */
static inline struct srnic_kv_ctx *srnic_kv_open(const struct srnic_kv_ops *ops, void *priv)
{
	return __srnic_kv_open(SRNIC_KV_API_VERSION, THIS_MODULE, ops, priv);
}

/*
 * Closes a context: no notification is delivered once this returns (one
 * running is waited for); listeners stop, queue pairs disconnect (their
 * outstanding work requests are flushed), and the pages of every region are
 * released when the last operation on them ends.
 */
void srnic_kv_close(struct srnic_kv_ctx *ctx);

int srnic_kv_query_device(struct srnic_kv_ctx *ctx, struct srnic_query_device *attr);

int srnic_kv_alloc_pd(struct srnic_kv_ctx *ctx, u32 *pd_handle);
int srnic_kv_dealloc_pd(struct srnic_kv_ctx *ctx, u32 pd_handle);

/*
 * Memory regions over kernel memory. In: attr->pd_handle, ->addr (the
 * region's first address: the tagged offset peers and SGEs name, the
 * client's choice), ->length, ->access (SRNIC_ACCESS_*); out: ->mr_handle,
 * ->lkey, ->rkey. srnic takes a reference on every page until the region
 * and every operation on it are gone.
 *
 * srnic_kv_reg_pages: `npages` pages, the region starting at byte `offset`
 * (< PAGE_SIZE) of the first. srnic_kv_reg_bvec: the `nr` bio_vecs must be
 * one contiguous range: each continues where the one before it ended, in
 * the same page or at the start of the next after one that filled its page
 * (so only the first may start inside a page of its own, only the last end
 * inside one); attr->length is set to their total.
 */
int srnic_kv_reg_pages(struct srnic_kv_ctx *ctx, struct srnic_reg_mr *attr,
		       struct page **pages, u32 npages, u32 offset);
int srnic_kv_reg_bvec(struct srnic_kv_ctx *ctx, struct srnic_reg_mr *attr,
		      const struct bio_vec *bv, u32 nr);
int srnic_kv_dereg_mr(struct srnic_kv_ctx *ctx, u32 mr_handle);

int srnic_kv_create_cq(struct srnic_kv_ctx *ctx, struct srnic_create_cq *attr);
int srnic_kv_destroy_cq(struct srnic_kv_ctx *ctx, u32 cq_handle);
/* Returns 1 when completions are already waiting, else 0 (or -errno). */
int srnic_kv_req_notify_cq(struct srnic_kv_ctx *ctx, u32 cq_handle, u32 flags);
/* Returns the number of completions written to wc (at most n), or -errno. */
int srnic_kv_poll_cq(struct srnic_kv_ctx *ctx, u32 cq_handle, struct srnic_wc *wc, int n);

int srnic_kv_create_qp(struct srnic_kv_ctx *ctx, struct srnic_create_qp *attr);
int srnic_kv_destroy_qp(struct srnic_kv_ctx *ctx, u32 qp_handle);
int srnic_kv_query_qp(struct srnic_kv_ctx *ctx, struct srnic_query_qp *attr);

/*
 * The connection manager. Sockets live in the caller's network namespace.
 * private_data fields are kernel pointers.
 */
int srnic_kv_listen(struct srnic_kv_ctx *ctx, struct srnic_listen *attr);
int srnic_kv_destroy_listener(struct srnic_kv_ctx *ctx, u32 listener_handle);
int srnic_kv_connect(struct srnic_kv_ctx *ctx, struct srnic_connect *attr);
int srnic_kv_accept(struct srnic_kv_ctx *ctx, struct srnic_accept *attr);
int srnic_kv_reject(struct srnic_kv_ctx *ctx, struct srnic_reject *attr);
int srnic_kv_disconnect(struct srnic_kv_ctx *ctx, u32 qp_handle, u32 flags);

/*
 * Drains a QP: its connection ends with a reset (SRNIC_EVENT_DISCONNECTED,
 * once), a connection being set up is given up (no event), and when this
 * returns every work request posted before it has its completion in its CQ
 * (SRNIC_WC_WR_FLUSH_ERR unless it had completed). The QP stays in ERROR:
 * later posts complete at once, flushed. -EINVAL for an unknown QP. A block
 * driver calls it before it fails or frees the requests a QP still holds.
 */
int srnic_kv_drain_qp(struct srnic_kv_ctx *ctx, u32 qp_handle);

/*
 * Posts one work request with wr->num_sge SGEs; with SRNIC_SEND_INLINE the
 * SGEs' addresses are kernel pointers whose bytes are copied before this
 * returns.
 */
int srnic_kv_post(struct srnic_kv_ctx *ctx, const struct srnic_post_wr *wr,
		  const struct srnic_sge *sge);

/*
 * Posts one work request of any opcode (not SRNIC_SEND_INLINE) whose local
 * memory is the `nr` bio_vecs at `bv` instead of SGEs: the buffer of a RECV,
 * the sink of a READ, the source of the others. They must be one contiguous
 * range, as for srnic_kv_reg_bvec(); wr->num_sge is ignored. No
 * region is registered: the request references the pages itself until it
 * and every operation on it end, and no peer can name them (as kernel ULPs
 * of the RDMA core use a PD's local_dma_lkey). The client must leave the
 * pages alone until the request's completion, as with any post. API
 * version 2.
 */
int srnic_kv_post_bvec(struct srnic_kv_ctx *ctx, const struct srnic_post_wr *wr,
		       const struct bio_vec *bv, u32 nr);

#endif /* _SRNIC_KVERBS_H */
