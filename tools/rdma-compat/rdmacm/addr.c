// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Addresses of identifiers: rdma_bind_addr, rdma_resolve_addr,
 * rdma_resolve_route, rdma_get_src_port, rdma_get_dst_port. Resolution is local
 * (TCP/IP routes srnic's connections): both complete at once with their event.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>
#include "cma.h"

static socklen_t cma_addr_len(const struct sockaddr *a)
{
	switch (a->sa_family) {
	case AF_INET: return sizeof(struct sockaddr_in);
	case AF_INET6: return sizeof(struct sockaddr_in6);
	default: return 0;
	}
}

static bool cma_any_addr(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

int rdma_bind_addr(struct rdma_cm_id *rid, struct sockaddr *addr)
{
	socklen_t len;

	if (cma_check(to_cma(rid)))
		return -1;
	if (!addr || !(len = cma_addr_len(addr)))
		return cma_fail(EAFNOSUPPORT);
	memset(&rid->route.addr.src_storage, 0, sizeof(rid->route.addr.src_storage));
	memcpy(&rid->route.addr.src_storage, addr, len);
	/* A specific address binds the id to the device, as in rdma-core. */
	if (!cma_any_addr(addr)) {
		rid->verbs = cma_verbs();
		if (!rid->verbs)
			return -1;
		rid->port_num = 1;
	}
	return 0;
}

/* The source address the kernel's routing picks for dst (a UDP socket's
 * connect() sends nothing). */
static int cma_route_src(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -1;
	ret = connect(fd, dst, cma_addr_len(dst));
	if (!ret)
		ret = getsockname(fd, (struct sockaddr *)src, &len);
	close(fd);
	if (!ret) {
		/* Any port: srnic's TCP connection picks its own. */
		if (src->ss_family == AF_INET)
			((struct sockaddr_in *)src)->sin_port = 0;
		else
			((struct sockaddr_in6 *)src)->sin6_port = 0;
	}
	return ret;
}

int rdma_resolve_addr(struct rdma_cm_id *rid, struct sockaddr *src, struct sockaddr *dst,
		      int timeout_ms)
{
	struct cma_id *id = to_cma(rid);
	socklen_t len;

	(void)timeout_ms;	/* resolution is local and immediate */
	if (cma_check(id))
		return -1;
	if (!dst || !(len = cma_addr_len(dst)))
		return cma_fail(EAFNOSUPPORT);
	if (src && src->sa_family && rdma_bind_addr(rid, src))
		return -1;
	memset(&rid->route.addr.dst_storage, 0, sizeof(rid->route.addr.dst_storage));
	memcpy(&rid->route.addr.dst_storage, dst, len);
	if ((!src || !src->sa_family) && cma_route_src(dst, &rid->route.addr.src_storage))
		return cma_fail(ENETUNREACH);
	rid->verbs = cma_verbs();
	if (!rid->verbs)
		return -1;
	rid->port_num = 1;
	cma_queue_event(id, NULL, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0, 0, 0);
	return cma_wait_sync(id, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int rdma_resolve_route(struct rdma_cm_id *rid, int timeout_ms)
{
	struct cma_id *id = to_cma(rid);

	(void)timeout_ms;
	if (cma_check(id))
		return -1;
	if (!rid->verbs || !rid->route.addr.dst_addr.sa_family)
		return cma_fail(EINVAL);
	cma_queue_event(id, NULL, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0, 0, 0);
	return cma_wait_sync(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

__be16 rdma_get_src_port(struct rdma_cm_id *rid)
{
	return rid->route.addr.src_addr.sa_family == AF_INET6 ? rid->route.addr.src_sin6.sin6_port :
								rid->route.addr.src_sin.sin_port;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *rid)
{
	return rid->route.addr.dst_addr.sa_family == AF_INET6 ? rid->route.addr.dst_sin6.sin6_port :
								rid->route.addr.dst_sin.sin_port;
}
