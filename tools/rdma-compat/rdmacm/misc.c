// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the librdmacm stand-in does not do, failing as rdma-core does for an
 * operation the transport lacks (-1 with errno ENOSYS or EOPNOTSUPP), and
 * rdma_event_str.
 *   - multicast: UD only, which iWARP (RFC 5040) lacks;
 *   - rdma_set_option: srnic has no TOS, REUSEADDR, AFONLY or IB path options;
 *   - rdma_init_qp_attr, rdma_establish: for QPs the program connects itself,
 *     which srnic cannot (its CM connects the QP);
 *   - ECE: an InfiniBand CM feature;
 *   - SRQs: srnic has none;
 *   - rsockets (rpoll, ...): not implemented.
 */
#include <poll.h>
#include "cma.h"

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const s[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return ((size_t)event < sizeof(s) / sizeof(s[0]) && s[event]) ? s[event] :
									"UNKNOWN EVENT";
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		    size_t optlen)
{
	(void)id; (void)level; (void)optname; (void)optval; (void)optlen;
	return cma_fail(ENOSYS);
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id; (void)event;
	return cma_fail(ENOSYS);
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id; (void)addr; (void)context;
	return cma_fail(EOPNOTSUPP);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
			   void *context)
{
	(void)id; (void)attr; (void)context;
	return cma_fail(EOPNOTSUPP);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id; (void)addr;
	return cma_fail(EOPNOTSUPP);
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	(void)id; (void)qp_attr; (void)qp_attr_mask;
	return cma_fail(ENOSYS);
}

int rdma_establish(struct rdma_cm_id *id)
{
	(void)id;
	return cma_fail(ENOSYS);
}

int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id; (void)ece;
	return cma_fail(EOPNOTSUPP);
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id; (void)ece;
	return cma_fail(EOPNOTSUPP);
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)id; (void)pd; (void)attr;
	return cma_fail(EOPNOTSUPP);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	(void)id; (void)attr;
	return cma_fail(EOPNOTSUPP);
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	(void)id;
}

/* <rdma/rsocket.h> declares it; rdma-core's perftest imports it. */
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout);
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	(void)fds; (void)nfds; (void)timeout;
	return cma_fail(ENOSYS);
}
