// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: allocation scopes (memalloc_noio_save() and _restore() are
 * static inlines). Each function is declared in glue.h and wrapped once in
 * rust/sys/gfp.rs.
 */
#include <linux/sched/mm.h>

#include "glue.h"

unsigned int srnic_noio_save(void)
{
	return memalloc_noio_save();
}

void srnic_noio_restore(unsigned int flags)
{
	memalloc_noio_restore(flags);
}
