// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: pinning user memory, charged to RLIMIT_MEMLOCK, and page
 * references on kernel clients' pages.
 * Only what the Rust side cannot reach through kernel::bindings in 6.12;
 * each function is declared in glue.h and wrapped once in rust/sys/pages.rs.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

#include "glue.h"

struct mm_struct *srnic_mm_get_current(void)
{
	struct mm_struct *mm = current->mm;

	if (mm)
		mmgrab(mm);
	return mm;
}

void srnic_mm_put(struct mm_struct *mm)
{
	mmdrop(mm);
}

/* Charges npages to mm->pinned_vm against RLIMIT_MEMLOCK, as ib_umem_get() does. */
int srnic_mm_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	u64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

void srnic_mm_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
}

/* Pins npages pages of the current process from start; all or nothing. */
long srnic_pin_user_pages(unsigned long start, unsigned long npages, bool write, struct page **pages)
{
	unsigned int flags = FOLL_LONGTERM | (write ? FOLL_WRITE : 0);
	unsigned long done = 0;
	long r;

	while (done < npages) {
		r = pin_user_pages_fast(start + done * PAGE_SIZE,
					min_t(unsigned long, npages - done, INT_MAX / PAGE_SIZE),
					flags, pages + done);
		if (r <= 0) {
			if (done)
				unpin_user_pages(pages, done);
			return r ? r : -EFAULT;
		}
		done += r;
	}
	return done;
}

void srnic_unpin_user_pages(struct page **pages, unsigned long npages, bool dirty)
{
	unpin_user_pages_dirty_lock(pages, npages, dirty);
}

/* get_page(), put_page() and nth_page() are inline or macros. */
void srnic_get_page(struct page *page)
{
	get_page(page);
}

void srnic_put_page(struct page *page)
{
	put_page(page);
}

struct page *srnic_nth_page(struct page *page, unsigned long n)
{
	return nth_page(page, n);
}
