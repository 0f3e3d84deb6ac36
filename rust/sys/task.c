// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: who the calling process is (its pid and effective uid as the
 * initial namespaces see them, its privilege), for object owners and the
 * resource views. Declared in glue.h, wrapped once in rust/sys/task.rs.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/uidgid.h>

#include "glue.h"

int srnic_current_tgid(void)
{
	return task_tgid_nr(current);
}

u32 srnic_current_euid(void)
{
	return from_kuid_munged(&init_user_ns, current_euid());
}

bool srnic_sys_admin(void)
{
	return capable(CAP_SYS_ADMIN);
}
