// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QPs and endpoints of communication identifiers: rdma_create_qp(_ex),
 * rdma_destroy_qp, rdma_create_ep, rdma_destroy_ep.
 */
#include <stdlib.h>
#include <string.h>
#include "cma.h"

/* Time rdma_create_ep gives address and route resolution (both are local). */
#define CMA_EP_RESOLVE_MS 2000

/* As rdma-core's: a CQ with a completion channel for each missing one, its
 * cq_context the id (what rdma_get_send_comp/rdma_get_recv_comp expect). */
static int cma_create_cqs(struct cma_id *id, struct ibv_qp_init_attr *attr)
{
	struct rdma_cm_id *rid = &id->id;

	if (!attr->recv_cq) {
		rid->recv_cq_channel = ibv_create_comp_channel(rid->verbs);
		if (!rid->recv_cq_channel)
			return -1;
		rid->recv_cq = ibv_create_cq(rid->verbs, attr->cap.max_recv_wr ?
					     (int)attr->cap.max_recv_wr : 1, rid,
					     rid->recv_cq_channel, 0);
		if (!rid->recv_cq) {
			ibv_destroy_comp_channel(rid->recv_cq_channel);
			rid->recv_cq_channel = NULL;
			return -1;
		}
		id->own_recv_cq = true;
		attr->recv_cq = rid->recv_cq;
	}
	if (!attr->send_cq) {
		rid->send_cq_channel = ibv_create_comp_channel(rid->verbs);
		if (!rid->send_cq_channel)
			return -1;
		rid->send_cq = ibv_create_cq(rid->verbs, attr->cap.max_send_wr ?
					     (int)attr->cap.max_send_wr : 1, rid,
					     rid->send_cq_channel, 0);
		if (!rid->send_cq) {
			ibv_destroy_comp_channel(rid->send_cq_channel);
			rid->send_cq_channel = NULL;
			return -1;
		}
		id->own_send_cq = true;
		attr->send_cq = rid->send_cq;
	}
	return 0;
}

int rdma_create_qp(struct rdma_cm_id *rid, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct cma_id *id = to_cma(rid);
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };
	struct ibv_qp *qp;

	if (cma_check(id))
		return -1;
	if (!rid->verbs || !attr)
		return cma_fail(EINVAL);
	if (rid->qp)
		return cma_fail(EINVAL);
	if (attr->qp_type != IBV_QPT_RC || attr->srq)
		return cma_fail(EOPNOTSUPP);
	if (pd && pd->context != rid->verbs)
		return cma_fail(EINVAL);
	if (!pd) {
		if (!rid->pd) {
			rid->pd = ibv_alloc_pd(rid->verbs);
			if (!rid->pd)
				return -1;
			id->own_pd = true;
		}
		pd = rid->pd;
	}
	if (cma_create_cqs(id, attr))
		return -1;
	qp = ibv_create_qp(pd, attr);
	if (!qp)
		return -1;
	/* rdma_cm hands out the QP in INIT; srnic connects it to RTS. */
	ibv_modify_qp(qp, &init, IBV_QP_STATE);
	rid->qp = qp;
	rid->pd = pd;
	return 0;
}

int rdma_create_qp_ex(struct rdma_cm_id *rid, struct ibv_qp_init_attr_ex *ex)
{
	struct ibv_qp_init_attr attr;
	int ret;

	/* Only what ibv_create_qp has: no extended send ops, no create flags. */
	if (ex->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD)
		return cma_fail(EOPNOTSUPP);
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = ex->qp_context;
	attr.send_cq = ex->send_cq;
	attr.recv_cq = ex->recv_cq;
	attr.srq = ex->srq;
	attr.cap = ex->cap;
	attr.qp_type = ex->qp_type;
	attr.sq_sig_all = ex->sq_sig_all;
	ret = rdma_create_qp(rid, (ex->comp_mask & IBV_QP_INIT_ATTR_PD) ? ex->pd : NULL, &attr);
	if (!ret) {
		ex->cap = attr.cap;
		ex->send_cq = attr.send_cq;
		ex->recv_cq = attr.recv_cq;
	}
	return ret;
}

void rdma_destroy_qp(struct rdma_cm_id *rid)
{
	if (!rid->qp)
		return;
	ibv_destroy_qp(rid->qp);	/* removes the connection watcher first */
	rid->qp = NULL;
}

int rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *rid;
	struct cma_id *id;

	if (!out || !res)
		return cma_fail(EINVAL);
	if (rdma_create_id(NULL, &rid, NULL, (enum rdma_port_space)res->ai_port_space))
		return -1;
	id = to_cma(rid);
	/*
	 * As rdma-core does: the endpoint's QP type is the address's (programs
	 * such as rdma_server and rdma_client leave qp_type zero).
	 */
	if (qp_init_attr)
		qp_init_attr->qp_type = res->ai_qp_type ? (enum ibv_qp_type)res->ai_qp_type : IBV_QPT_RC;
	if (res->ai_flags & RAI_PASSIVE) {
		if (!res->ai_src_addr || rdma_bind_addr(rid, res->ai_src_addr))
			goto err;
		/* The QPs of a listener are made for each request (rdma_get_request). */
		if (qp_init_attr) {
			id->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (!id->ep_qp_attr) {
				errno = ENOMEM;
				goto err;
			}
			*id->ep_qp_attr = *qp_init_attr;
			rid->pd = pd;
		}
	} else {
		if (rdma_resolve_addr(rid, res->ai_src_addr, res->ai_dst_addr, CMA_EP_RESOLVE_MS) ||
		    rdma_resolve_route(rid, CMA_EP_RESOLVE_MS))
			goto err;
		if (qp_init_attr && rdma_create_qp(rid, pd, qp_init_attr))
			goto err;
	}
	*out = rid;
	return 0;
err:
	{
		int err = errno;

		rdma_destroy_id(rid);
		errno = err;
	}
	return -1;
}

void rdma_destroy_ep(struct rdma_cm_id *rid)
{
	rdma_destroy_qp(rid);
	rdma_destroy_id(rid);
}
