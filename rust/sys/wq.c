// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: srnic's workqueues.
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/wq.rs.
 */
#include <linux/workqueue.h>

#include "glue.h"

/*
 * Both are WQ_MEM_RECLAIM (a rescuer thread): a kernel client's I/O, which
 * memory reclaim may wait for, depends on them.
 */
struct workqueue_struct *srnic_alloc_wq(const char *name)
{
	return alloc_workqueue("%s", WQ_UNBOUND | WQ_MEM_RECLAIM, 0, name);
}
