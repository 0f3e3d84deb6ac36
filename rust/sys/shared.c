// SPDX-License-Identifier: GPL-2.0
/*
 * srnic C glue: memory shared with a process that maps it (a CQ's ring).
 * vmap() is outside the 6.12 bindings and the vm_flags helpers are static
 * inline. Wrapped by rust/sys/shared.rs.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "glue.h"

/*
 * Allocates n zeroed pages charged to the caller's memory cgroup into
 * pages[] and maps them contiguously into the kernel's address space.
 * Returns that address, or NULL (nothing left allocated).
 */
void *srnic_shared_alloc(struct page **pages, unsigned int n)
{
	unsigned int i;
	void *addr;

	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(SRNIC_GFP_USER | __GFP_ZERO);
		if (!pages[i])
			goto free;
	}
	addr = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	if (addr)
		return addr;
free:
	while (i--)
		__free_page(pages[i]);
	return NULL;
}

/*
 * Undoes srnic_shared_alloc(). A page still mapped by a process stays until
 * that mapping goes: the mapping holds its own reference.
 */
void srnic_shared_free(void *addr, struct page **pages, unsigned int n)
{
	unsigned int i;

	vunmap(addr);
	for (i = 0; i < n; i++)
		__free_page(pages[i]);
}

/*
 * Maps the n pages into vma from its start: a shared mapping of exactly
 * n pages, never executable, not growable by mremap(). On success the
 * mapping gets ops and owner, which ops' open and close count (the Rust
 * side's reference); on failure neither is installed.
 */
int srnic_shared_mmap(struct vm_area_struct *vma, struct page **pages, unsigned int n,
		      const struct vm_operations_struct *ops, void *owner)
{
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (vma_pages(vma) != n)
		return -EINVAL;
	vm_flags_mod(vma, VM_DONTEXPAND, VM_MAYEXEC);
	err = vm_map_pages_zero(vma, pages, n);
	if (err)
		return err;
	vma->vm_private_data = owner;
	vma->vm_ops = ops;
	return 0;
}
