// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: srnic's workqueue.
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/wq.rs.
 */
#include <linux/workqueue.h>

#include "glue.h"

struct workqueue_struct *srnic_alloc_wq(const char *name)
{
	return alloc_workqueue("%s", WQ_UNBOUND, 0, name);
}
