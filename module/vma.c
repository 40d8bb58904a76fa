// SPDX-License-Identifier: GPL-2.0
/*
 * secarena mappings: mmap and the vm_operations that keep them whole.
 *
 * Layout: [guard][data][guard]. Data pages are mapped at mmap time;
 * guard offsets have no page and the fault handler refuses them, so no
 * protection change can make them readable.
 *
 * The vma is VM_PFNMAP and every data page goes in as a special PTE
 * (vmf_insert_pfn). That, not VM_IO, is what keeps the pages from being
 * pinned: the slow get_user_pages() path refuses VM_IO and VM_PFNMAP
 * vmas, but the lockless fast path never looks at the vma and takes any
 * present PTE that is not special. With ordinary PTEs, vmsplice(),
 * O_DIRECT, AIO and the like took references that outlived the mapping
 * and its wipe. Special PTEs also hold no reference of their own, so the
 * module's is the only one and every PTE must be gone before the pages
 * are freed: munmap and exit zap before ->close, and every error path
 * here zaps what it inserted.
 *
 * There is deliberately no ->access (the fallback /proc/PID/mem, ptrace
 * and process_vm_* would use) and no ->name (which would force the vma
 * into core dumps).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/mm.h>

#include "compat.h"
#include "secarena.h"

static void zap_whole_vma(struct vm_area_struct *vma)
{
	secarena_zap_range(vma, vma->vm_start, vma->vm_end - vma->vm_start);
}

/*
 * Map every data page of @p into @vma. An error (page tables could not be
 * allocated) leaves what was inserted; a revoked set inserts nothing.
 */
int secarena_insert_pages(struct vm_area_struct *vma,
			  struct secarena_pages *p)
{
	unsigned long addr = vma->vm_start + p->guard * PAGE_SIZE;
	unsigned long i;
	vm_fault_t ret;
	int err = 0;

	mutex_lock(&p->lock);
	for (i = 0; i < p->nr && !err; i++, addr += PAGE_SIZE) {
		if (p->revoked) {
			err = -EAGAIN;
			break;
		}
		ret = vmf_insert_pfn(vma, addr, page_to_pfn(p->page[i]));
		if (ret & VM_FAULT_ERROR)
			err = ret & VM_FAULT_OOM ? -ENOMEM : -EFAULT;
		cond_resched();
	}
	mutex_unlock(&p->lock);
	return err;
}

/*
 * Runs on fork (child vma, other mm) and on mremap's copy (same mm, undone
 * by ->mremap).
 *
 * A child that does not share must not keep any PTE of the parent's: they
 * are special, hold no reference, and would outlive the parent's unmap.
 * Where dup_mmap() copies page tables before ->open (before upstream
 * 35e351780fa9, and Debian's 6.1 from 6.1.95 to 6.1.190) after
 * MADV_KEEPONFORK cleared VM_WIPEONFORK, those PTEs are already in the
 * child: zap them. Where ->open runs first, setting VM_WIPEONFORK here
 * keeps dup_mmap() from copying them at all.
 */
static void secarena_vma_open(struct vm_area_struct *vma)
{
	struct secarena_pages *p = vma->vm_private_data;
	struct secarena_pages *copy;

	if (p && (vma->vm_mm == p->mm || p->policy == SECARENA_FORK_SHARED)) {
		kref_get(&p->ref);
		return;
	}

	zap_whole_vma(vma);
	secarena_vm_flags_set(vma, VM_WIPEONFORK);
	vma->vm_private_data = NULL;
	if (!p || p->policy != SECARENA_FORK_PRIVATE)
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
	/*
	 * On -ENOMEM the fault handler maps the rest on first touch; a set
	 * revoked meanwhile has SIGBUS there. Either way nothing to undo.
	 */
	secarena_insert_pages(vma, copy);
}

static void secarena_vma_close(struct vm_area_struct *vma)
{
	struct secarena_pages *p = vma->vm_private_data;

	if (p)
		secarena_pages_put(p);
}

/* Reached after a failed insert, a revoke or at a guard: never a copy. */
static vm_fault_t secarena_fault(struct vm_fault *vmf)
{
	struct secarena_pages *p = vmf->vma->vm_private_data;
	pgoff_t idx = vmf->pgoff;
	vm_fault_t ret;

	if (!p)
		return VM_FAULT_SIGBUS;
	if (idx < p->guard || idx - p->guard >= p->nr)
		return VM_FAULT_SIGSEGV;

	mutex_lock(&p->lock);
	if (p->revoked)
		ret = VM_FAULT_SIGBUS;
	else
		ret = vmf_insert_pfn(vmf->vma, vmf->address & PAGE_MASK,
				     page_to_pfn(p->page[idx - p->guard]));
	mutex_unlock(&p->lock);
	return ret;
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
	 * by VM_MAYSHARE. A private (COW) PFN mapping is also what
	 * vmf_insert_pfn() refuses to handle.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE) || vma->vm_pgoff)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	mutex_lock(&sf->lock);
	if (sf->owner != vma->vm_mm) {
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

	p = secarena_pages_alloc(vma->vm_mm, file->f_mapping, nr, guard,
				 policy);
	if (IS_ERR(p)) {
		err = PTR_ERR(p);
		goto out;
	}

	/* vmf_insert_pfn() wants the flags first. */
	secarena_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTDUMP |
			      VM_DONTEXPAND | policy_vm_flags(policy));
	secarena_vm_flags_clear(vma, VM_MAYEXEC);
	err = secarena_insert_pages(vma, p);
	if (err) {
		/* No PTE may outlive the pages. */
		zap_whole_vma(vma);
		secarena_pages_put(p);
		goto out;
	}
	vma->vm_ops = &secarena_vm_ops;
	vma->vm_private_data = p;

	p->file = sf;
	sf->pages = p;
	sf->spent = true;
	/* INFO keeps reporting this geometry after munmap. */
	sf->cfg.data_size = (u64)nr << PAGE_SHIFT;
	sf->cfg.guard_pages = guard;
	sf->cfg.fork_policy = policy;
out:
	mutex_unlock(&sf->lock);
	return err;
}
