/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic C glue: what kernel::bindings cannot reach in 6.12. Every function is
 * declared here, defined in glue.c, and wrapped once by a Rust abstraction in
 * rust/sys/ (named beside each).
 */
#ifndef SRNIC_GLUE_H
#define SRNIC_GLUE_H

#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/types.h>

struct miscdevice;

/* rust/sys/miscdev.rs */
struct miscdevice *srnic_misc_register(const char *name, umode_t mode,
				       const struct file_operations *fops);
void srnic_misc_deregister(struct miscdevice *misc);

/* rust/sys/waitqueue.rs */
void srnic_poll_wait(struct file *file, wait_queue_head_t *wq, poll_table *pt);

#endif /* SRNIC_GLUE_H */
