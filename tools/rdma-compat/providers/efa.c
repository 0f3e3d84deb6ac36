// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libefa.so.1 stand-in: perftest links the EFA direct-verbs library and uses it
 * only on AWS EFA devices; srnic is none, so both entry points it imports fail
 * with EOPNOTSUPP.
 */
#include <errno.h>
#include <infiniband/efadv.h>

struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx, struct ibv_qp_init_attr_ex *attr_ex,
				  struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	(void)ibvctx; (void)attr_ex; (void)efa_attr; (void)inlen;
	errno = EOPNOTSUPP;
	return NULL;
}

int efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr, uint32_t inlen)
{
	(void)ibvctx; (void)attr; (void)inlen;
	return EOPNOTSUPP;
}
