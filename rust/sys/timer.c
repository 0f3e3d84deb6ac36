// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: timers that run in process context (delayed work on srnic's
 * workqueue). Wrapped once in rust/sys/timer.rs, which keeps the reference
 * counting: every pending timer owns one reference on its target.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "glue.h"

struct srnic_timer {
	struct delayed_work dw;
	srnic_timer_fn fn;
	void *user;
};

static void srnic_timer_work(struct work_struct *w)
{
	struct srnic_timer *t = container_of(to_delayed_work(w), struct srnic_timer, dw);

	/* fn may free t (its owner's last reference): t is not touched after. */
	t->fn(READ_ONCE(t->user));
}

struct srnic_timer *srnic_timer_new(srnic_timer_fn fn)
{
	struct srnic_timer *t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);

	if (!t)
		return NULL;
	t->fn = fn;
	INIT_DELAYED_WORK(&t->dw, srnic_timer_work);
	return t;
}

/* (Re)arms t to run fn(user) in delay_ms; true when it was pending already. */
bool srnic_timer_arm(struct srnic_timer *t, struct workqueue_struct *wq, void *user,
		     unsigned int delay_ms)
{
	WRITE_ONCE(t->user, user);
	return mod_delayed_work(wq, &t->dw, msecs_to_jiffies(delay_ms));
}

/* Disarms t; true when it was pending (its fn will not run for that arming). */
bool srnic_timer_cancel(struct srnic_timer *t)
{
	return cancel_delayed_work(&t->dw);
}

/* Frees a timer that is not pending (it may be running the call that frees it). */
void srnic_timer_free(struct srnic_timer *t)
{
	kfree(t);
}
