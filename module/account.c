// SPDX-License-Identifier: GPL-2.0
/*
 * secarena accounting: who holds how many pages, the limits that bound
 * it, and the hibernation policy that needs the list of every live set.
 *
 * A page set is charged four ways before it gets a page: to the memory
 * cgroup (by its allocations, GFP_KERNEL_ACCOUNT), to the mapping mm's
 * pinned_vm against RLIMIT_MEMLOCK, to the real uid of the task that maps
 * it against max_user_pages, and to the module against max_total_pages.
 * The per-user limit is what keeps one local user, however many processes
 * it runs, from taking the global budget from every other user and from
 * system services.
 *
 * One mutex covers the counters, the users and the list of live sets, so
 * that a hibernation can decide, revoke and shut the door for new sets in
 * one step: a set is either on the list before the decision (and revoked)
 * or refused when it comes to join it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/user_namespace.h>

#include "secarena.h"

static DEFINE_MUTEX(account_lock);
static struct secarena_stats stats;
static LIST_HEAD(live_sets);
/* One entry per uid that holds arenas now: a handful, so a list. */
static LIST_HEAD(users);
static bool hibernating;

static struct secarena_user *user_find(kuid_t uid)
{
	struct secarena_user *u;

	list_for_each_entry(u, &users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * RLIMIT_MEMLOCK of @mm, as mlock and RDMA charge it. pinned_vm is atomic,
 * so the charge needs no mmap lock: ->close runs under a read lock on
 * munmap, and uncharging must work from there.
 */
int secarena_charge_memlock(struct mm_struct *mm, unsigned long nr)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned = atomic64_add_return(nr, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(nr, &mm->pinned_vm);
		mutex_lock(&account_lock);
		stats.refused_limit++;
		mutex_unlock(&account_lock);
		return -EAGAIN;
	}
	return 0;
}

/*
 * Charge @p's pages to its user and the module, before any page exists.
 * The user is the current task's real uid, as for RLIMIT_MEMLOCK's
 * per-user charges elsewhere; a fork copy is made in the parent, whose
 * uid the child shares at that point.
 */
int secarena_account_reserve(struct secarena_pages *p)
{
	struct secarena_user *u, *fresh;
	kuid_t uid = current_uid();
	int err = 0;

	/* Allocated before the lock, freed if the uid already has one. */
	fresh = kzalloc(sizeof(*fresh), SECARENA_GFP);

	mutex_lock(&account_lock);
	u = user_find(uid);
	if (hibernating) {
		stats.refused_hibernation++;
		err = -EAGAIN;
	} else if (p->nr > READ_ONCE(secarena_max_arena_pages) ||
		   stats.pages_in_use + p->nr > READ_ONCE(secarena_max_total_pages)) {
		stats.refused_limit++;
		err = -ENOMEM;
	} else if ((u ? u->pages : 0) + p->nr > READ_ONCE(secarena_max_user_pages)) {
		stats.refused_limit++;
		stats.refused_user_limit++;
		err = -ENOMEM;
	} else if (!u && !fresh) {
		err = -ENOMEM;
	}
	if (err) {
		mutex_unlock(&account_lock);
		kfree(fresh);
		return err;
	}
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		list_add(&u->node, &users);
	}
	u->pages += p->nr;
	u->sets++;
	p->user = u;
	stats.pages_in_use += p->nr;
	stats.pages_peak = max(stats.pages_peak, stats.pages_in_use);
	stats.mapped++;
	mutex_unlock(&account_lock);
	kfree(fresh);
	return 0;
}

/*
 * Put a filled set on the live list, where hibernation finds it. A set is
 * filled off the list, so a hibernation that began meanwhile refuses it
 * here rather than miss pages it could not see.
 */
int secarena_account_commit(struct secarena_pages *p)
{
	int err = 0;

	mutex_lock(&account_lock);
	if (hibernating) {
		stats.refused_hibernation++;
		err = -EAGAIN;
	} else {
		list_add(&p->node, &live_sets);
	}
	mutex_unlock(&account_lock);
	return err;
}

/* Undo the reserve, and the commit if it happened. */
void secarena_account_remove(struct secarena_pages *p)
{
	struct secarena_user *u = p->user;

	mutex_lock(&account_lock);
	list_del_init(&p->node);
	stats.pages_in_use -= p->nr;
	stats.mapped--;
	u->pages -= p->nr;
	if (!--u->sets) {
		list_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&account_lock);
}

void secarena_stats_get(struct secarena_stats *out)
{
	mutex_lock(&account_lock);
	*out = stats;
	mutex_unlock(&account_lock);
}

/* "UID PAGES" per line, uids as the initial namespace sees them. */
ssize_t secarena_users_show(char *buf)
{
	struct secarena_user *u;
	ssize_t len = 0;

	mutex_lock(&account_lock);
	list_for_each_entry(u, &users, node)
		len += sysfs_emit_at(buf, len, "%u %lu\n",
				     from_kuid_munged(&init_user_ns, u->uid),
				     u->pages);
	mutex_unlock(&account_lock);
	return len;
}

void secarena_stats_open(void)
{
	mutex_lock(&account_lock);
	stats.arenas++;
	mutex_unlock(&account_lock);
}

void secarena_stats_release(void)
{
	mutex_lock(&account_lock);
	stats.arenas--;
	mutex_unlock(&account_lock);
}

void secarena_stats_foreign_mmap(void)
{
	mutex_lock(&account_lock);
	stats.refused_foreign_mmap++;
	mutex_unlock(&account_lock);
}

void secarena_stats_fork_copy_failed(void)
{
	mutex_lock(&account_lock);
	stats.fork_copy_failed++;
	mutex_unlock(&account_lock);
}

/*
 * A hibernation image would write every arena page to disk. Arenas mapped
 * with CAP_IPC_LOCK (system services) refuse it. Any other user's arenas
 * do not get a veto over the machine: they are revoked, i.e. unmapped,
 * wiped and turned into SIGBUS for good, and the image gets zeros. Until
 * the hibernation is over no new set is made.
 */
int secarena_hibernation_prepare(void)
{
	struct secarena_pages *p;
	unsigned long revoked = 0;

	mutex_lock(&account_lock);
	list_for_each_entry(p, &live_sets, node) {
		if (p->privileged && !p->revoked) {
			stats.refused_hibernation++;
			mutex_unlock(&account_lock);
			return -EBUSY;
		}
	}
	hibernating = true;
	list_for_each_entry(p, &live_sets, node) {
		if (p->revoked)
			continue;
		secarena_pages_revoke(p);
		revoked++;
	}
	stats.revoked_hibernation += revoked;
	mutex_unlock(&account_lock);
	if (revoked)
		pr_info("hibernation: revoked %lu unprivileged arena(s)\n",
			revoked);
	return 0;
}

void secarena_hibernation_done(void)
{
	mutex_lock(&account_lock);
	hibernating = false;
	mutex_unlock(&account_lock);
}
