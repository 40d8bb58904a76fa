// SPDX-License-Identifier: GPL-2.0
/*
 * secarena mappings: mmap and the vm_operations that keep them whole.
 *
 * Layout: [guard][data][guard]. Data pages are inserted at mmap time;
 * guard offsets have no page and the fault handler refuses them, so no
 * protection change can make them readable. The vma is VM_IO, which makes
 * get_user_pages() refuse it: /proc/PID/mem, ptrace and process_vm_*
 * cannot reach the pages. There is deliberately no ->access (the
 * fallback those paths would use) and no ->name (which would force the
 * vma into core dumps).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/mm.h>

#include "compat.h"
#include "secarena.h"

static int insert_data_pages(struct vm_area_struct *vma,
			     struct secarena_pages *p)
{
	unsigned long num = p->nr;

	return vm_insert_pages(vma, vma->vm_start + p->guard * PAGE_SIZE,
			       p->page, &num);
}

/*
 * Runs on fork (child vma, other mm) and on mremap's copy (same mm, undone
 * by ->mremap). dup_mmap() calls ->open before it copies page tables and
 * skips the copy for VM_WIPEONFORK: setting it here keeps a PRIVATE child
 * off the parent's pages even if MADV_KEEPONFORK cleared the flag.
 */
static void secarena_vma_open(struct vm_area_struct *vma)
{
	struct secarena_pages *p = vma->vm_private_data;
	struct secarena_pages *copy;

	if (!p)
		return;
	if (vma->vm_mm == p->mm || p->policy == SECARENA_FORK_SHARED) {
		kref_get(&p->ref);
		return;
	}

	secarena_vm_flags_set(vma, VM_WIPEONFORK);
	vma->vm_private_data = NULL;
	if (p->policy != SECARENA_FORK_PRIVATE)
		return;

	copy = secarena_pages_copy(p, vma->vm_mm);
	if (IS_ERR(copy)) {
		/*
		 * ->open cannot fail fork: the child's range raises SIGBUS.
		 * -EINTR is a fatal signal to the parent: copy_process() then
		 * cancels the fork, no child sees the range, nothing to count.
		 */
		if (PTR_ERR(copy) != -EINTR)
			secarena_stats_fork_copy_failed();
		return;
	}
	vma->vm_private_data = copy;
	/* On failure here the fault handler maps the pages on first touch. */
	insert_data_pages(vma, copy);
}

static void secarena_vma_close(struct vm_area_struct *vma)
{
	struct secarena_pages *p = vma->vm_private_data;

	if (p)
		secarena_pages_put(p);
}

/* Reached after MADV_DONTNEED or a failed insert; guards never map. */
static vm_fault_t secarena_fault(struct vm_fault *vmf)
{
	struct secarena_pages *p = vmf->vma->vm_private_data;
	pgoff_t idx = vmf->pgoff;
	int err;

	if (!p)
		return VM_FAULT_SIGBUS;
	if (idx < p->guard || idx - p->guard >= p->nr)
		return VM_FAULT_SIGSEGV;

	err = vm_insert_page(vmf->vma, vmf->address & PAGE_MASK,
			     p->page[idx - p->guard]);
	if (err == -ENOMEM)
		return VM_FAULT_OOM;
	if (err && err != -EBUSY)
		return VM_FAULT_SIGBUS;
	return VM_FAULT_NOPAGE;
}

/* A split would let part of the arena, or a lone guard, be changed. */
static int secarena_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int secarena_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct secarena_vm_ops = {
	.open = secarena_vma_open,
	.close = secarena_vma_close,
	.fault = secarena_fault,
	.may_split = secarena_may_split,
	.mremap = secarena_mremap,
};

static vm_flags_t policy_vm_flags(u32 policy)
{
	switch (policy) {
	case SECARENA_FORK_NONE:
		return VM_DONTCOPY;
	case SECARENA_FORK_SHARED:
		return 0;
	default:
		return VM_WIPEONFORK;
	}
}

/* Geometry of this mmap: from CONFIGURE, or one guard page each side. */
static int mmap_geometry(const struct secarena_file *sf, unsigned long len,
			 unsigned long *nr, unsigned int *guard, u32 *policy)
{
	if (sf->configured) {
		*guard = sf->cfg.guard_pages;
		*nr = sf->cfg.data_size >> PAGE_SHIFT;
		*policy = sf->cfg.fork_policy;
		if (len != *nr + 2UL * *guard)
			return -EINVAL;
		return 0;
	}
	*guard = SECARENA_GUARD_PAGES_DEFAULT;
	*policy = SECARENA_FORK_PRIVATE;
	if (len < 2UL * *guard + 1)
		return -EINVAL;
	*nr = len - 2UL * *guard;
	return 0;
}

int secarena_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct secarena_file *sf = file->private_data;
	struct secarena_pages *p;
	unsigned int guard;
	unsigned long nr;
	u32 policy;
	int err;

	/*
	 * MAP_SHARED sets VM_MAYSHARE; do_mmap() drops VM_SHARED (and
	 * VM_MAYWRITE) when the file is not open for writing, so a read-only
	 * MAP_SHARED of an O_RDONLY file must be told apart from MAP_PRIVATE
	 * by VM_MAYSHARE.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE) || vma->vm_pgoff)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	mutex_lock(&sf->lock);
	if (sf->owner && sf->owner != vma->vm_mm) {
		secarena_stats_foreign_mmap();
		err = -EPERM;
		goto out;
	}
	err = -EBUSY;
	if (sf->spent)
		goto out;
	err = mmap_geometry(sf, vma_pages(vma), &nr, &guard, &policy);
	if (err)
		goto out;

	p = secarena_pages_alloc(vma->vm_mm, nr, guard, policy);
	if (IS_ERR(p)) {
		err = PTR_ERR(p);
		goto out;
	}
	err = insert_data_pages(vma, p);
	if (err) {
		/* mmap_region() zaps what was inserted; our refs go now. */
		secarena_pages_put(p);
		goto out;
	}

	secarena_vm_flags_set(vma, VM_IO | VM_DONTDUMP | VM_DONTEXPAND |
			      policy_vm_flags(policy));
	secarena_vm_flags_clear(vma, VM_MAYEXEC);
	vma->vm_ops = &secarena_vm_ops;
	vma->vm_private_data = p;

	p->file = sf;
	sf->pages = p;
	sf->spent = true;
	/* INFO keeps reporting this geometry after munmap. */
	sf->cfg.data_size = (u64)nr << PAGE_SHIFT;
	sf->cfg.guard_pages = guard;
	sf->cfg.fork_policy = policy;
	if (!sf->owner) {
		mmgrab(vma->vm_mm);
		sf->owner = vma->vm_mm;
	}
out:
	mutex_unlock(&sf->lock);
	return err;
}
