// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: references on srnic.ko itself (THIS_MODULE is a C macro).
 * Wrapped once in rust/sys/module_ref.rs.
 */
#include <linux/module.h>

#include "glue.h"

void srnic_module_get(void)
{
	__module_get(THIS_MODULE);
}

void srnic_module_put(void)
{
	module_put(THIS_MODULE);
}
