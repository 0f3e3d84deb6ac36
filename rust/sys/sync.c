// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: the bottom-half-safe spinlock and the may-sleep test.
 * Only what the Rust side cannot reach through kernel::bindings in 6.12
 * (spin_lock_bh and in_interrupt are inline functions and macros); each
 * function is declared in glue.h and wrapped once in rust/sys/sync.rs.
 */
#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>

#include "glue.h"

void srnic_spin_lock_bh(spinlock_t *lock)
{
	spin_lock_bh(lock);
}

void srnic_spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock_bh(lock);
}

/*
 * in_interrupt() counts hard and soft interrupt context and sections with
 * bottom halves disabled (spin_lock_bh): the softirq count is kept whether
 * or not the kernel has CONFIG_PREEMPT_COUNT.
 */
bool srnic_may_sleep(void)
{
	return !in_interrupt() && !irqs_disabled();
}
