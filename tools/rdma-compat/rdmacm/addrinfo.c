// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_getaddrinfo / rdma_freeaddrinfo: getaddrinfo(3) results as
 * rdma_addrinfo, each for a reliable connected (RDMA_PS_TCP) endpoint. With
 * RAI_PASSIVE the address is the source to listen on, else the destination.
 */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include "cma.h"

static struct sockaddr *cma_dup_addr(const struct sockaddr *a, socklen_t len)
{
	struct sockaddr *d = malloc(len);

	if (d)
		memcpy(d, a, len);
	return d;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *n;

	for (; res; res = n) {
		n = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res);
	}
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai, *i;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	int passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int ret;

	if (!res)
		return cma_fail(EINVAL);
	if (hints) {
		if (hints->ai_qp_type && hints->ai_qp_type != IBV_QPT_RC)
			return cma_fail(EOPNOTSUPP);
		if (hints->ai_port_space && hints->ai_port_space != RDMA_PS_TCP &&
		    hints->ai_port_space != RDMA_PS_IB)
			return cma_fail(EOPNOTSUPP);
		h.ai_family = hints->ai_family;
		if (hints->ai_flags & RAI_PASSIVE)
			h.ai_flags |= AI_PASSIVE;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
	}
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret)
		return ret;	/* an EAI_* code, as rdma-core returns it */
	for (i = ai; i; i = i->ai_next) {
		struct rdma_addrinfo *r;

		if (i->ai_family != AF_INET && i->ai_family != AF_INET6)
			continue;
		r = calloc(1, sizeof(*r));
		if (!r)
			goto nomem;
		*tail = r;
		tail = &r->ai_next;
		r->ai_flags = hints ? hints->ai_flags : 0;
		r->ai_family = i->ai_family;
		r->ai_qp_type = IBV_QPT_RC;
		r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space :
								  RDMA_PS_TCP;
		if (passive) {
			r->ai_src_addr = cma_dup_addr(i->ai_addr, i->ai_addrlen);
			r->ai_src_len = i->ai_addrlen;
			if (!r->ai_src_addr)
				goto nomem;
		} else {
			r->ai_dst_addr = cma_dup_addr(i->ai_addr, i->ai_addrlen);
			r->ai_dst_len = i->ai_addrlen;
			if (!r->ai_dst_addr)
				goto nomem;
			if (hints && hints->ai_src_addr && hints->ai_src_len) {
				r->ai_src_addr = cma_dup_addr(hints->ai_src_addr,
							      hints->ai_src_len);
				r->ai_src_len = hints->ai_src_len;
				if (!r->ai_src_addr)
					goto nomem;
			}
		}
	}
	freeaddrinfo(ai);
	if (!head)
		return EAI_FAMILY;
	*res = head;
	return 0;
nomem:
	freeaddrinfo(ai);
	rdma_freeaddrinfo(head);
	return cma_fail(ENOMEM);
}
