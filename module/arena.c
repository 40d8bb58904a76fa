// SPDX-License-Identifier: GPL-2.0
/*
 * secarena page sets: allocation, charging, copying for fork children and
 * wiping. Every page that ever held arena data is zeroed here before it
 * goes back to the page allocator, whatever ended the arena.
 *
 * Pages come from alloc_page() and are never put on an LRU list, so they
 * are neither swapped nor migrated: they are pinned by construction. They
 * are charged three ways: to the memory cgroup (GFP_KERNEL_ACCOUNT), to
 * the owning mm's pinned_vm against RLIMIT_MEMLOCK (as RDMA does for the
 * pages it pins), and to the module's own caps.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "secarena.h"

static DEFINE_SPINLOCK(stats_lock);
static struct secarena_stats stats;
static bool hibernating;		/* under stats_lock */

/* Module caps and hibernation; RLIMIT_MEMLOCK is charge_memlock()'s. */
static int charge_global(unsigned long nr)
{
	int err = 0;

	spin_lock(&stats_lock);
	if (hibernating) {
		stats.refused_hibernation++;
		err = -EAGAIN;
	} else if (nr > READ_ONCE(secarena_max_arena_pages) ||
		   stats.pages_in_use + nr > READ_ONCE(secarena_max_total_pages)) {
		stats.refused_limit++;
		err = -ENOMEM;
	} else {
		stats.pages_in_use += nr;
		stats.pages_peak = max(stats.pages_peak, stats.pages_in_use);
		stats.mapped++;
	}
	spin_unlock(&stats_lock);
	return err;
}

static void uncharge_global(unsigned long nr)
{
	spin_lock(&stats_lock);
	stats.pages_in_use -= nr;
	stats.mapped--;
	spin_unlock(&stats_lock);
}

/*
 * pinned_vm is atomic, so the charge needs no mmap lock: ->close runs under
 * a read lock on munmap, and uncharging must work from there.
 */
static int charge_memlock(struct mm_struct *mm, unsigned long nr)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned = atomic64_add_return(nr, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(nr, &mm->pinned_vm);
		spin_lock(&stats_lock);
		stats.refused_limit++;
		spin_unlock(&stats_lock);
		return -EAGAIN;
	}
	return 0;
}

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

/* Charged, empty set for @mm; the caller fills p->page[]. */
static struct secarena_pages *pages_new(struct mm_struct *mm, unsigned long nr,
					unsigned int guard, u32 policy)
{
	struct secarena_pages *p;
	int err;

	err = charge_global(nr);
	if (err)
		return ERR_PTR(err);
	err = charge_memlock(mm, nr);
	if (err)
		goto out_global;

	err = -ENOMEM;
	p = kzalloc(sizeof(*p), SECARENA_GFP);
	if (!p)
		goto out_memlock;
	p->page = kvcalloc(nr, sizeof(*p->page), SECARENA_GFP);
	if (!p->page)
		goto out_free;

	kref_init(&p->ref);
	mmgrab(mm);
	p->mm = mm;
	p->nr = nr;
	p->guard = guard;
	p->policy = policy;
	return p;

out_free:
	kfree(p);
out_memlock:
	atomic64_sub(nr, &mm->pinned_vm);
out_global:
	uncharge_global(nr);
	return ERR_PTR(err);
}

static void pages_destroy(struct secarena_pages *p)
{
	free_pages_wiped(p->page, p->nr);
	kvfree(p->page);
	atomic64_sub(p->nr, &p->mm->pinned_vm);
	mmdrop(p->mm);
	uncharge_global(p->nr);
	kfree(p);
}

/* Fill every slot with a page; on failure the set is destroyed. */
static int pages_fill(struct secarena_pages *p, const struct secarena_pages *src)
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
					    unsigned long nr,
					    unsigned int guard, u32 policy)
{
	struct secarena_pages *p = pages_new(mm, nr, guard, policy);
	int err;

	if (IS_ERR(p))
		return p;
	err = pages_fill(p, NULL);
	if (err) {
		pages_destroy(p);
		return ERR_PTR(err);
	}
	return p;
}

/*
 * A fork child's private copy. Parent threads may write while it is taken;
 * that race is the parent's own, as with any memory it writes during fork.
 */
struct secarena_pages *secarena_pages_copy(const struct secarena_pages *src,
					   struct mm_struct *mm)
{
	struct secarena_pages *p = pages_new(mm, src->nr, src->guard,
					     src->policy);
	int err;

	if (IS_ERR(p))
		return p;
	err = pages_fill(p, src);
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

void secarena_stats_get(struct secarena_stats *out)
{
	spin_lock(&stats_lock);
	*out = stats;
	spin_unlock(&stats_lock);
}

void secarena_stats_open(void)
{
	spin_lock(&stats_lock);
	stats.arenas++;
	spin_unlock(&stats_lock);
}

void secarena_stats_release(void)
{
	spin_lock(&stats_lock);
	stats.arenas--;
	spin_unlock(&stats_lock);
}

void secarena_stats_foreign_mmap(void)
{
	spin_lock(&stats_lock);
	stats.refused_foreign_mmap++;
	spin_unlock(&stats_lock);
}

void secarena_stats_fork_copy_failed(void)
{
	spin_lock(&stats_lock);
	stats.fork_copy_failed++;
	spin_unlock(&stats_lock);
}

/*
 * A hibernation image would write every arena page to disk. Refuse while
 * any page is in use, and refuse new arenas until hibernation is over.
 */
int secarena_hibernation_block(void)
{
	int err = 0;

	spin_lock(&stats_lock);
	if (stats.pages_in_use) {
		stats.refused_hibernation++;
		err = -EBUSY;
	} else {
		hibernating = true;
	}
	spin_unlock(&stats_lock);
	return err;
}

void secarena_hibernation_unblock(void)
{
	spin_lock(&stats_lock);
	hibernating = false;
	spin_unlock(&stats_lock);
}
