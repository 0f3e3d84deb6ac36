// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Verbs iWARP or srnic do not have. Each fails the way rdma-core fails a verb
 * the provider lacks: NULL or -1 with errno EOPNOTSUPP, or EOPNOTSUPP returned,
 * never a silent success.
 *   - shared receive queues: srnic has none;
 *   - address handles, multicast: only for UD QPs, which iWARP (RFC 5040) lacks;
 *   - asynchronous events: srnic reports QP and CQ errors through CM events and
 *     completions instead, so ibv_get_async_event has nothing to return.
 */
#include <stdlib.h>
#include "compat.h"

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)pd; (void)attr;
	return compat_null(EOPNOTSUPP);
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	(void)srq; (void)attr; (void)mask;
	return EOPNOTSUPP;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	(void)srq; (void)attr;
	return EOPNOTSUPP;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	return EOPNOTSUPP;
}

int compat_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	(void)srq;
	*bad_wr = wr;
	return EOPNOTSUPP;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	(void)pd; (void)attr;
	return compat_null(EOPNOTSUPP);
}

int ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	(void)ctx; (void)port; (void)wc; (void)grh; (void)ah_attr;
	errno = EOPNOTSUPP;
	return -1;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port)
{
	(void)pd; (void)wc; (void)grh; (void)port;
	return compat_null(EOPNOTSUPP);
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return EOPNOTSUPP;
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	(void)ctx; (void)event;
	errno = EOPNOTSUPP;
	return -1;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event;
}
