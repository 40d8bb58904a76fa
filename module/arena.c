// SPDX-License-Identifier: GPL-2.0
/*
 * secarena page sets: allocation, copying for fork children, wiping and
 * revoking. Every page that ever held arena data is zeroed here before it
 * goes back to the page allocator, whatever ended the arena.
 *
 * Pages come from alloc_page() and are never put on an LRU list, so they
 * are neither swapped nor migrated. They are mapped by PFN (vma.c), so no
 * PTE holds a reference and get_user_pages() cannot take one: the single
 * reference alloc_page() returned is the only one, and the wipe below is
 * the last thing that touches the page. Charging is account.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/user_namespace.h>

#include "secarena.h"

static void wipe_page(struct page *page)
{
	void *addr = kmap_local_page(page);

	memzero_explicit(addr, PAGE_SIZE);
	kunmap_local(addr);
}

static void free_pages_wiped(struct page **page, unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++) {
		if (!page[i])
			break;
		wipe_page(page[i]);
		__free_page(page[i]);
		cond_resched();
	}
}

/*
 * Charged, empty set for @mm; the caller fills p->page[] and commits it.
 * The module's limits come first, then RLIMIT_MEMLOCK, then the page
 * array: a request over a cap costs nothing but the check.
 */
static struct secarena_pages *pages_new(struct mm_struct *mm,
					struct address_space *mapping,
					unsigned long nr, unsigned int guard,
					u32 policy, bool privileged)
{
	struct secarena_pages *p;
	int err;

	p = kzalloc(sizeof(*p), SECARENA_GFP);
	if (!p)
		return ERR_PTR(-ENOMEM);
	kref_init(&p->ref);
	mutex_init(&p->lock);
	INIT_LIST_HEAD(&p->node);
	p->mapping = mapping;
	p->nr = nr;
	p->guard = guard;
	p->policy = policy;
	p->privileged = privileged;

	err = secarena_account_reserve(p);
	if (err)
		goto out_free;
	err = secarena_charge_memlock(mm, nr);
	if (err)
		goto out_account;
	err = -ENOMEM;
	p->page = kvcalloc(nr, sizeof(*p->page), SECARENA_GFP);
	if (!p->page)
		goto out_memlock;
	mmgrab(mm);
	p->mm = mm;
	return p;

out_memlock:
	atomic64_sub(nr, &mm->pinned_vm);
out_account:
	secarena_account_remove(p);
out_free:
	mutex_destroy(&p->lock);
	kfree(p);
	return ERR_PTR(err);
}

/* Every PTE that mapped @p is gone: callers make sure of it. */
static void pages_destroy(struct secarena_pages *p)
{
	secarena_account_remove(p);
	free_pages_wiped(p->page, p->nr);
	kvfree(p->page);
	atomic64_sub(p->nr, &p->mm->pinned_vm);
	mmdrop(p->mm);
	mutex_destroy(&p->lock);
	kfree(p);
}

/* Fill every slot with a page; on failure the caller destroys the set. */
static int pages_fill(struct secarena_pages *p, struct secarena_pages *src)
{
	unsigned long i;

	for (i = 0; i < p->nr; i++) {
		gfp_t gfp = src ? SECARENA_GFP : SECARENA_GFP | __GFP_ZERO;

		if (fatal_signal_pending(current))
			return -EINTR;
		p->page[i] = alloc_page(gfp);
		if (!p->page[i])
			return -ENOMEM;
		if (src)
			copy_highpage(p->page[i], src->page[i]);
		cond_resched();
	}
	return 0;
}

struct secarena_pages *secarena_pages_alloc(struct mm_struct *mm,
					    struct address_space *mapping,
					    unsigned long nr,
					    unsigned int guard, u32 policy)
{
	/* _noaudit: a user without the capability is no policy violation. */
	bool privileged = ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK);
	struct secarena_pages *p;
	int err;

	p = pages_new(mm, mapping, nr, guard, policy, privileged);
	if (IS_ERR(p))
		return p;
	err = pages_fill(p, NULL);
	if (!err)
		err = secarena_account_commit(p);
	if (err) {
		pages_destroy(p);
		return ERR_PTR(err);
	}
	return p;
}

/*
 * A fork child's private copy. Parent threads may write while it is taken;
 * that race is the parent's own, as with any memory it writes during fork.
 * A revoked set has nothing left to copy.
 */
struct secarena_pages *secarena_pages_copy(struct secarena_pages *src,
					   struct mm_struct *mm)
{
	struct secarena_pages *p;
	int err;

	if (READ_ONCE(src->revoked))
		return ERR_PTR(-EAGAIN);
	p = pages_new(mm, src->mapping, src->nr, src->guard, src->policy,
		      src->privileged);
	if (IS_ERR(p))
		return p;
	err = pages_fill(p, src);
	if (!err)
		err = secarena_account_commit(p);
	if (err) {
		pages_destroy(p);
		return ERR_PTR(err);
	}
	return p;
}

void secarena_pages_wipe(struct secarena_pages *p)
{
	unsigned long i;

	for (i = 0; i < p->nr; i++) {
		wipe_page(p->page[i]);
		cond_resched();
	}
}

/*
 * Take @p away from every process that maps it: no fault maps a page once
 * revoked is set under p->lock, every PTE is then zapped through the
 * file's mapping (all vmas of all arenas mapped through it; only
 * hibernation revokes, and then it revokes all), and the pages are wiped
 * last, when nothing can write them any more. The pages stay charged
 * until the vmas go.
 */
void secarena_pages_revoke(struct secarena_pages *p)
{
	mutex_lock(&p->lock);
	p->revoked = true;
	mutex_unlock(&p->lock);
	unmap_mapping_range(p->mapping, 0, 0, 1);
	secarena_pages_wipe(p);
}

static void pages_release(struct kref *ref)
{
	struct secarena_pages *p = container_of(ref, struct secarena_pages, ref);
	struct secarena_file *sf = p->file;

	if (sf) {
		mutex_lock(&sf->lock);
		sf->pages = NULL;
		mutex_unlock(&sf->lock);
	}
	pages_destroy(p);
}

void secarena_pages_put(struct secarena_pages *p)
{
	kref_put(&p->ref, pages_release);
}
