// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains: ibv_alloc_pd, ibv_dealloc_pd. */
#include <stdlib.h>
#include "compat.h"

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct compat_pd *pd = calloc(1, sizeof(*pd));
	int ret;

	if (!pd)
		return compat_null(ENOMEM);
	ret = srnic_alloc_pd(to_cctx(ctx)->sctx, &pd->spd);
	if (ret) {
		free(pd);
		return compat_null(-ret);
	}
	pd->pd.context = ctx;
	return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct compat_pd *p = (struct compat_pd *)pd;
	int ret = srnic_dealloc_pd(p->spd);

	if (ret)
		return -ret;
	free(p);
	return 0;
}
