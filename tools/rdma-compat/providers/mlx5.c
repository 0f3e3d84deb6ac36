// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libmlx5.so.1 stand-in. Debian's perftest links the mlx5 direct-verbs library
 * and calls into it only for ConnectX devices; srnic is none, so every entry
 * point perftest imports fails with EOPNOTSUPP (NULL with errno, or the errno
 * returned, as each function's rdma-core contract has it). It exists so that
 * perftest loads without the real library pulling rdma-core's libibverbs in.
 */
#include <errno.h>
#include <infiniband/mlx5dv.h>

struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *attr)
{
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	(void)mkey;
	return EOPNOTSUPP;
}

struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
				struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	(void)context; (void)qp_attr; (void)mlx5_qp_attr;
	errno = EOPNOTSUPP;
	return NULL;
}

struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	(void)qp;
	errno = EOPNOTSUPP;
	return NULL;
}

int mlx5dv_crypto_login(struct ibv_context *context, struct mlx5dv_crypto_login_attr *attr)
{
	(void)context; (void)attr;
	return EOPNOTSUPP;
}

struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
				     struct mlx5dv_dek_init_attr *attr)
{
	(void)context; (void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

int mlx5dv_dek_destroy(struct mlx5dv_dek *dek)
{
	(void)dek;
	return EOPNOTSUPP;
}

struct ibv_context *mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr *attr)
{
	(void)device; (void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in, size_t inlen, void *out,
			    size_t outlen)
{
	(void)context; (void)in; (void)inlen; (void)out; (void)outlen;
	return EOPNOTSUPP;
}
