// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: the misc device and poll_wait().
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/miscdev.rs and rust/sys/waitqueue.rs.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>

#include "glue.h"

/* A misc device together with its own copy of the file operations. */
struct srnic_misc {
	struct miscdevice misc;
	struct file_operations fops;
};

/*
 * Registers a misc device with a dynamic minor. The file operations are copied
 * and their owner set to this module, so an open file holds a reference on the
 * module and it cannot be unloaded under it. Wrapped by rust/sys/miscdev.rs.
 */
struct miscdevice *srnic_misc_register(const char *name, umode_t mode,
				       const struct file_operations *fops)
{
	struct srnic_misc *m;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->fops = *fops;
	m->fops.owner = THIS_MODULE;
	m->misc.minor = MISC_DYNAMIC_MINOR;
	m->misc.name = name;
	m->misc.mode = mode;
	m->misc.fops = &m->fops;
	err = misc_register(&m->misc);
	if (err) {
		kfree(m);
		return ERR_PTR(err);
	}
	return &m->misc;
}

/* Undoes srnic_misc_register(). Wrapped by rust/sys/miscdev.rs. */
void srnic_misc_deregister(struct miscdevice *misc)
{
	misc_deregister(misc);
	kfree(container_of(misc, struct srnic_misc, misc));
}

/* poll_wait() is static inline. Wrapped by rust/sys/waitqueue.rs. */
void srnic_poll_wait(struct file *file, wait_queue_head_t *wq, poll_table *pt)
{
	poll_wait(file, wq, pt);
}
