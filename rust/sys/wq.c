// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: srnic's workqueues.
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/wq.rs.
 */
#include <linux/workqueue.h>

#include "glue.h"

/*
 * All are WQ_MEM_RECLAIM (a rescuer thread): a kernel client's I/O, which
 * memory reclaim may wait for, depends on them.
 *
 * The data path's queue (QPs' receive and transmit work) is per CPU and
 * WQ_HIGHPRI: the receive work that a socket's data-ready callback queues
 * runs on the CPU that took the packet, from a worker of nice -20 that the
 * scheduler runs ahead of a task polling its CQ there (with an unbound queue
 * of normal priority the work waited for that task's time slice, some
 * milliseconds). WQ_CPU_INTENSIVE keeps a long run of it (one run of the
 * transmit work sends up to 256 FPDUs) from holding up other work of the
 * same CPU's pool. The others are unbound.
 */
struct workqueue_struct *srnic_alloc_wq(const char *name, bool data_path)
{
	unsigned int flags = data_path ? WQ_HIGHPRI | WQ_CPU_INTENSIVE : WQ_UNBOUND;

	return alloc_workqueue("%s", flags | WQ_MEM_RECLAIM, 0, name);
}
