// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: the kernel verbs API's exports (include/srnic/kverbs.h).
 *
 * The functions are Rust (rust/sys/kverbs.rs); Rust in Linux 6.12 cannot
 * export a symbol from an out-of-tree module, so this file does, and checks
 * the client's API version, which needs the client's module name.
 */
#include <linux/module.h>
#include <linux/printk.h>

#include "../../include/srnic/kverbs.h"
#include "glue.h"

/* Rust: opens a client (of module owner) whose version was checked. */
struct srnic_kv_ctx *srnic_kv_open_checked(struct module *owner, const struct srnic_kv_ops *ops, void *priv);

struct srnic_kv_ctx *__srnic_kv_open(u32 api_version, struct module *owner,
				     const struct srnic_kv_ops *ops, void *priv)
{
	const char *name = owner ? module_name(owner) : "a built-in client";

	/* Each version adds to the one before: older clients still work. */
	if (api_version < SRNIC_KV_API_MIN_VERSION || api_version > SRNIC_KV_API_VERSION) {
		pr_err("srnic: %s was built for kernel verbs API version %u, this srnic has versions %u to %u: rebuild it against this srnic's include/srnic/kverbs.h\n",
		       name, api_version, SRNIC_KV_API_MIN_VERSION, SRNIC_KV_API_VERSION);
		return ERR_PTR(-EPROTO);
	}
	return srnic_kv_open_checked(owner, ops, priv);
}
EXPORT_SYMBOL_GPL(__srnic_kv_open);

EXPORT_SYMBOL_GPL(srnic_kv_close);
EXPORT_SYMBOL_GPL(srnic_kv_query_device);
EXPORT_SYMBOL_GPL(srnic_kv_alloc_pd);
EXPORT_SYMBOL_GPL(srnic_kv_dealloc_pd);
EXPORT_SYMBOL_GPL(srnic_kv_reg_pages);
EXPORT_SYMBOL_GPL(srnic_kv_reg_bvec);
EXPORT_SYMBOL_GPL(srnic_kv_dereg_mr);
EXPORT_SYMBOL_GPL(srnic_kv_create_cq);
EXPORT_SYMBOL_GPL(srnic_kv_destroy_cq);
EXPORT_SYMBOL_GPL(srnic_kv_req_notify_cq);
EXPORT_SYMBOL_GPL(srnic_kv_poll_cq);
EXPORT_SYMBOL_GPL(srnic_kv_create_qp);
EXPORT_SYMBOL_GPL(srnic_kv_destroy_qp);
EXPORT_SYMBOL_GPL(srnic_kv_query_qp);
EXPORT_SYMBOL_GPL(srnic_kv_listen);
EXPORT_SYMBOL_GPL(srnic_kv_destroy_listener);
EXPORT_SYMBOL_GPL(srnic_kv_connect);
EXPORT_SYMBOL_GPL(srnic_kv_accept);
EXPORT_SYMBOL_GPL(srnic_kv_reject);
EXPORT_SYMBOL_GPL(srnic_kv_disconnect);
EXPORT_SYMBOL_GPL(srnic_kv_drain_qp);
EXPORT_SYMBOL_GPL(srnic_kv_post);
EXPORT_SYMBOL_GPL(srnic_kv_post_bvec);
