/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels secarena builds against (6.1 .. 7.x).
 * Nothing version-dependent lives anywhere else; Kbuild only detects.
 */
#ifndef SECARENA_COMPAT_H
#define SECARENA_COMPAT_H

#include <linux/mm.h>

/*
 * vm_flags became read-only behind vm_flags_set()/vm_flags_clear() in 6.3;
 * before that drivers wrote the field directly. Kbuild defines
 * SECARENA_HAVE_VM_FLAGS_SET when the headers have them.
 */
#ifndef SECARENA_HAVE_VM_FLAGS_SET
static inline void secarena_vm_flags_set(struct vm_area_struct *vma,
					 unsigned long flags)
{
	vma->vm_flags |= flags;
}

static inline void secarena_vm_flags_clear(struct vm_area_struct *vma,
					   unsigned long flags)
{
	vma->vm_flags &= ~flags;
}
#else
static inline void secarena_vm_flags_set(struct vm_area_struct *vma,
					 vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}

static inline void secarena_vm_flags_clear(struct vm_area_struct *vma,
					   vm_flags_t flags)
{
	vm_flags_clear(vma, flags);
}
#endif

/*
 * zap_vma_ptes() was renamed zap_special_vma_range() in 7.1, and the old
 * name is no longer exported. Both remove the PTEs of a PFN-mapped range.
 */
static inline void secarena_zap_range(struct vm_area_struct *vma,
				      unsigned long addr, unsigned long size)
{
#ifdef SECARENA_HAVE_ZAP_SPECIAL_VMA_RANGE
	zap_special_vma_range(vma, addr, size);
#else
	zap_vma_ptes(vma, addr, size);
#endif
}

#endif /* SECARENA_COMPAT_H */
