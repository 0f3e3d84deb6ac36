// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Memory regions: ibv_reg_mr, ibv_reg_mr_iova, ibv_reg_mr_iova2, ibv_dereg_mr,
 * ibv_rereg_mr. */
#include <stdlib.h>
#include "compat.h"

/* Access bits srnic has a counterpart for (SRNIC_ACCESS_*). Remote write needs
 * local write, as the verbs require. */
#define COMPAT_ACCESS_SUPPORTED \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	struct compat_mr *mr;
	uint32_t sa = 0;
	int ret;

	/* Optional bits (IBV_ACCESS_RELAXED_ORDERING, ...) may be ignored. */
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	/* srnic addresses MRs by virtual address only (uapi/srnic.h, REG_MR):
	 * no other IOVA, no zero-based MRs, no atomics, no MW binding, no ODP. */
	if (iova != (uintptr_t)addr || (access & ~COMPAT_ACCESS_SUPPORTED))
		return compat_null(EOPNOTSUPP);
	if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))
		return compat_null(EINVAL);
	if (access & IBV_ACCESS_LOCAL_WRITE)
		sa |= SRNIC_ACCESS_LOCAL_WRITE;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		sa |= SRNIC_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		sa |= SRNIC_ACCESS_REMOTE_READ;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return compat_null(ENOMEM);
	ret = srnic_reg_mr(((struct compat_pd *)pd)->spd, addr, length, sa, &mr->smr);
	if (ret) {
		free(mr);
		return compat_null(-ret);
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.lkey = srnic_mr_lkey(mr->smr);
	mr->mr.rkey = srnic_mr_rkey(mr->smr);
	mr->mr.handle = mr->mr.lkey;
	return &mr->mr;
}

/* verbs.h turns ibv_reg_mr() into this call unless optional access bits are
 * set (then into ibv_reg_mr_iova2). */
#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct compat_mr *m = (struct compat_mr *)mr;
	int ret = srnic_dereg_mr(m->smr);

	if (ret)
		return -ret;
	free(m);
	return 0;
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	(void)mr; (void)flags; (void)pd; (void)addr; (void)length; (void)access;
	/* IBV_REREG_MR_ERR_INPUT: nothing changed, the MR is as it was. */
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}
