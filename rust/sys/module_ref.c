// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: references on srnic.ko itself (THIS_MODULE is a C macro), and
 * a module notifier that reports modules going away (the kernel verbs API
 * ends what a client module left open). Wrapped once in rust/sys/module_ref.rs.
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

static int srnic_module_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	if (state == MODULE_STATE_GOING)
		srnic_module_going(data);
	return NOTIFY_DONE;
}

static struct notifier_block srnic_module_nb = {
	.notifier_call = srnic_module_notify,
};

int srnic_module_watch(void)
{
	return register_module_notifier(&srnic_module_nb);
}

void srnic_module_unwatch(void)
{
	unregister_module_notifier(&srnic_module_nb);
}
