// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: ibv_create_qp, ibv_modify_qp, ibv_query_qp, ibv_destroy_qp, and
 * ibv_post_send/ibv_post_recv (through context->ops).
 *
 * An srnic QP is a reliable connected iWARP QP that only the connection
 * manager connects (SRNIC_IOCTL_CONNECT/ACCEPT): srnic's states are INIT,
 * CONNECTING, RTS, CLOSING and ERROR. The IBV_QPS_* a program sees:
 *   srnic INIT        -> what the program last set of RESET, INIT, RTR
 *   srnic CONNECTING  -> IBV_QPS_RTR
 *   srnic RTS         -> IBV_QPS_RTS
 *   srnic CLOSING     -> IBV_QPS_SQD (no new sends; in-flight ones complete)
 *   srnic ERROR       -> IBV_QPS_ERR
 * Moving an unconnected QP to RTS fails with EINVAL, as on other iWARP
 * devices; moving a connected one to ERR aborts its connection.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "compat.h"

/* Work requests converted per write() to /dev/srnic (an array on the stack). */
#define COMPAT_POST_BATCH 16

/* The scatter/gather entries are passed through unconverted. */
static_assert(sizeof(struct ibv_sge) == sizeof(struct srnic_sge), "ibv_sge size");
static_assert(offsetof(struct ibv_sge, addr) == offsetof(struct srnic_sge, addr), "sge addr");
static_assert(offsetof(struct ibv_sge, length) == offsetof(struct srnic_sge, length), "sge length");
static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct srnic_sge, lkey), "sge lkey");

/* Attribute masks with no meaning on iWARP (TCP carries path, PSNs, retries);
 * accepted and ignored, as Linux's iWARP drivers do. */
#define COMPAT_QP_IGNORED_MASK                                                          \
	(IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ACCESS_FLAGS |          \
	 IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU |  \
	 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN |         \
	 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |               \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN)

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct compat_pd *p = (struct compat_pd *)pd;
	struct srnic_qp_init_attr sa = { 0 };
	struct compat_qp *qp;
	int ret;
	/* iWARP (RFC 5040) has only reliable connected QPs; srnic has no SRQ. */
	if (attr->qp_type != IBV_QPT_RC || attr->srq)
		return compat_null(EOPNOTSUPP);
	if (!attr->send_cq || !attr->recv_cq)
		return compat_null(EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return compat_null(ENOMEM);
	sa.send_cq = to_ccq(attr->send_cq)->scq;
	sa.recv_cq = to_ccq(attr->recv_cq)->scq;
	sa.max_send_wr = attr->cap.max_send_wr;
	sa.max_recv_wr = attr->cap.max_recv_wr;
	sa.max_send_sge = attr->cap.max_send_sge;
	sa.max_recv_sge = attr->cap.max_recv_sge;
	sa.max_inline_data = attr->cap.max_inline_data;
	sa.sq_sig_all = attr->sq_sig_all;
	ret = srnic_create_qp(p->spd, &sa, &qp->sqp);
	if (ret) {
		free(qp);
		return compat_null(-ret);
	}
	/* rdma-core hands back the capacities the device granted. */
	attr->cap.max_send_wr = sa.max_send_wr;
	attr->cap.max_recv_wr = sa.max_recv_wr;
	attr->cap.max_send_sge = sa.max_send_sge;
	attr->cap.max_recv_sge = sa.max_recv_sge;
	attr->cap.max_inline_data = sa.max_inline_data;
	qp->cap = attr->cap;
	qp->qp.context = pd->context;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.handle = srnic_qp_handle(qp->sqp);
	qp->qp.qp_num = qp->qp.handle;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	return &qp->qp;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct compat_qp *q = to_cqp(qp);
	struct srnic_compat_watcher *w = q->cm_watcher;
	int ret;

	/* The event thread must be done with the QP before libsrnic frees it. */
	srnic_compat_set_qp_watcher(qp, NULL);
	ret = srnic_destroy_qp(q->sqp);
	if (ret) {
		srnic_compat_set_qp_watcher(qp, w);
		return -ret;
	}
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(q);
	return 0;
}

/* The IBV_QPS_* of an srnic QP state (see the top of this file). */
static enum ibv_qp_state compat_qp_state(struct ibv_qp *qp, uint32_t s)
{
	switch (s) {
	case SRNIC_QPS_INIT: return qp->state <= IBV_QPS_RTR ? qp->state : IBV_QPS_INIT;
	case SRNIC_QPS_CONNECTING: return IBV_QPS_RTR;
	case SRNIC_QPS_RTS: return IBV_QPS_RTS;
	case SRNIC_QPS_CLOSING: return IBV_QPS_SQD;
	case SRNIC_QPS_ERROR:
	default: return IBV_QPS_ERR;
	}
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct compat_qp *q = to_cqp(qp);
	struct srnic_query_qp s = { .size = sizeof(s) };
	int ret;
	(void)attr_mask;	/* rdma-core providers fill everything, too */
	ret = srnic_query_qp(q->sqp, &s);
	if (ret)
		return -ret;
	memset(attr, 0, sizeof(*attr));
	qp->state = compat_qp_state(qp, s.state);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = IBV_MTU_1024;
	attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;
	attr->max_rd_atomic = (uint8_t)(s.ord > UINT8_MAX ? UINT8_MAX : s.ord);
	attr->max_dest_rd_atomic = (uint8_t)(s.ird > UINT8_MAX ? UINT8_MAX : s.ird);
	attr->port_num = 1;
	attr->cap = q->cap;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->cap = attr->cap;
		init_attr->qp_type = IBV_QPT_RC;
	}
	return 0;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct compat_qp *q = to_cqp(qp);
	struct srnic_query_qp s = { .size = sizeof(s) };
	int ret;
	if (attr_mask & ~(IBV_QP_STATE | COMPAT_QP_IGNORED_MASK))
		return EOPNOTSUPP;	/* IBV_QP_ALT_PATH, IBV_QP_PATH_MIG_STATE, ... */
	if (!(attr_mask & IBV_QP_STATE))
		return 0;
	ret = srnic_query_qp(q->sqp, &s);
	if (ret)
		return -ret;
	switch (attr->qp_state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		/* Only before the CM connected it: srnic cannot go back. */
		if (s.state != SRNIC_QPS_INIT)
			return EINVAL;
		qp->state = attr->qp_state;
		return 0;
	case IBV_QPS_RTS:
		/* Only the connection manager makes an iWARP QP RTS. */
		if (s.state != SRNIC_QPS_RTS)
			return EINVAL;
		qp->state = IBV_QPS_RTS;
		return 0;
	case IBV_QPS_ERR:
		if (s.state == SRNIC_QPS_RTS || s.state == SRNIC_QPS_CLOSING ||
		    s.state == SRNIC_QPS_CONNECTING) {
			ret = srnic_disconnect(q->sqp, SRNIC_DISCONNECT_ABORT);
			if (ret)
				return -ret;
		}
		qp->state = IBV_QPS_ERR;
		return 0;
	case IBV_QPS_SQD:
		/* A graceful close: what rdma_disconnect does on iWARP. */
		if (s.state != SRNIC_QPS_RTS)
			return EINVAL;
		ret = srnic_disconnect(q->sqp, 0);
		if (ret)
			return -ret;
		qp->state = IBV_QPS_SQD;
		return 0;
	default:
		return EINVAL;
	}
}

/* One ibv_send_wr as srnic's, or the errno that rejects it. */
static int compat_send_wr(const struct ibv_send_wr *wr, struct srnic_send_wr *s)
{
	bool se = wr->send_flags & IBV_SEND_SOLICITED;

	memset(s, 0, sizeof(*s));
	if (wr->send_flags & ~(unsigned int)(IBV_SEND_SIGNALED | IBV_SEND_FENCE | IBV_SEND_INLINE |
					     IBV_SEND_SOLICITED))
		return EOPNOTSUPP;	/* IBV_SEND_IP_CSUM: no offloads */
	switch (wr->opcode) {
	case IBV_WR_SEND:
		s->opcode = se ? SRNIC_WR_SEND_WITH_SE : SRNIC_WR_SEND;
		break;
	case IBV_WR_SEND_WITH_INV:
		s->opcode = se ? SRNIC_WR_SEND_WITH_SE_INV : SRNIC_WR_SEND_WITH_INV;
		s->invalidate_rkey = wr->invalidate_rkey;
		break;
	case IBV_WR_RDMA_WRITE:
		s->opcode = SRNIC_WR_RDMA_WRITE;
		s->remote_addr = wr->wr.rdma.remote_addr;
		s->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_RDMA_READ:
		s->opcode = SRNIC_WR_RDMA_READ;
		s->remote_addr = wr->wr.rdma.remote_addr;
		s->rkey = wr->wr.rdma.rkey;
		break;
	default:
		/* Immediate data, atomics, LOCAL_INV, BIND_MW, TSO: not in iWARP
		 * (RFC 5040) or not in srnic. */
		return EOPNOTSUPP;
	}
	if (wr->num_sge < 0)
		return EINVAL;
	s->wr_id = wr->wr_id;
	s->sg_list = (const struct srnic_sge *)wr->sg_list;
	s->num_sge = (uint32_t)wr->num_sge;
	if (wr->send_flags & IBV_SEND_SIGNALED)
		s->send_flags |= SRNIC_SEND_SIGNALED;
	if (wr->send_flags & IBV_SEND_INLINE)
		s->send_flags |= SRNIC_SEND_INLINE;
	if (wr->send_flags & IBV_SEND_FENCE)
		s->send_flags |= SRNIC_SEND_FENCE;
	return 0;
}

int compat_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct srnic_send_wr batch[COMPAT_POST_BATCH];
	struct ibv_send_wr *first = wr;
	unsigned int n = 0, posted;
	int err = 0, ret;

	for (;;) {
		if (wr && n < COMPAT_POST_BATCH) {
			err = compat_send_wr(wr, &batch[n]);
			if (!err) {
				n++;
				wr = wr->next;
				continue;
			}
		}
		if (n) {
			posted = 0;
			ret = srnic_post_send(to_cqp(qp)->sqp, batch, n, &posted);
			if (ret) {
				while (posted--)
					first = first->next;
				*bad_wr = first;
				return -ret;
			}
			first = wr;
			n = 0;
		}
		if (err) {
			*bad_wr = wr;
			return err;
		}
		if (!wr)
			return 0;
	}
}

int compat_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct srnic_recv_wr batch[COMPAT_POST_BATCH];
	struct ibv_recv_wr *first = wr;
	unsigned int n = 0, posted;
	int err = 0, ret;

	for (;;) {
		if (wr && n < COMPAT_POST_BATCH) {
			if (wr->num_sge < 0) {
				err = EINVAL;
			} else {
				memset(&batch[n], 0, sizeof(batch[n]));
				batch[n].wr_id = wr->wr_id;
				batch[n].sg_list = (const struct srnic_sge *)wr->sg_list;
				batch[n].num_sge = (uint32_t)wr->num_sge;
				n++;
				wr = wr->next;
				continue;
			}
		}
		if (n) {
			posted = 0;
			ret = srnic_post_recv(to_cqp(qp)->sqp, batch, n, &posted);
			if (ret) {
				while (posted--)
					first = first->next;
				*bad_wr = first;
				return -ret;
			}
			first = wr;
			n = 0;
		}
		if (err) {
			*bad_wr = wr;
			return err;
		}
		if (!wr)
			return 0;
	}
}

/* An ibv_qp_ex exists only for QPs made by ibv_create_qp_ex with send_ops_flags,
 * which srnic does not support. */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	return NULL;
}
