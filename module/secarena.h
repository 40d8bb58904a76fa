/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of secarena.ko, between the device (device.c), the
 * page sets (arena.c), their accounting (account.c) and the mapping
 * (vma.c).
 */
#ifndef SECARENA_INTERNAL_H
#define SECARENA_INTERNAL_H

#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include <linux/secarena.h>

/*
 * Every allocation the module makes for userspace: charged to the memcg,
 * and when it is full (or memory is short) ENOMEM, never the OOM killer
 * on the caller's behalf nor a line in the log.
 */
#define SECARENA_GFP	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/* Largest mapping, guards included, that CONFIGURE accepts (pages). */
#define SECARENA_MAX_MAP_PAGES	(1ULL << 31)

/* One per open(): the arena as userspace sees it through its fd. */
struct secarena_file {
	struct mutex lock;		/* protects everything below */
	struct secarena_config cfg;	/* geometry the next mmap uses */
	bool configured;
	bool spent;			/* mmap succeeded once */
	struct mm_struct *owner;	/* mm of the opener, grabbed */
	struct secarena_pages *pages;	/* owner's pages while they live */
};

/* What one user (real uid of the mapping task) holds, in account.c. */
struct secarena_user {
	struct list_head node;
	kuid_t uid;
	unsigned long pages;
	unsigned long sets;		/* page sets charged; 0 frees it */
};

/*
 * One set of data pages. Each vma that maps it holds a reference: the
 * owner's vma, fork children under SHARED, and nothing else, since splits
 * and moves are refused. The last reference wipes and frees the pages.
 *
 * The pages are mapped by PFN (special PTEs), so no mapping holds a page
 * reference and nothing can pin them: the module's own reference, here,
 * is the only one.
 */
struct secarena_pages {
	struct kref ref;
	struct list_head node;		/* live sets, under account.c's lock */
	struct mutex lock;		/* inserts against revoke */
	bool revoked;			/* wiped for hibernation; SIGBUS */
	bool privileged;		/* mapper had CAP_IPC_LOCK */
	struct secarena_file *file;	/* set while it is file->pages */
	struct mm_struct *mm;		/* charged for the pages, grabbed */
	struct secarena_user *user;	/* charged for the pages */
	struct address_space *mapping;	/* of the file it is mapped through */
	unsigned long nr;		/* data pages */
	unsigned int guard;		/* guard pages on each side */
	u32 policy;			/* SECARENA_FORK_* */
	struct page **page;
};

struct secarena_stats {
	unsigned long arenas;		/* open files */
	unsigned long mapped;		/* live page sets */
	unsigned long pages_in_use;
	unsigned long pages_peak;
	unsigned long refused_limit;
	unsigned long refused_user_limit;
	unsigned long refused_hibernation;
	unsigned long refused_foreign_mmap;
	unsigned long fork_copy_failed;
	unsigned long revoked_hibernation;
};

/* Module parameters (device.c). */
extern unsigned long secarena_max_arena_pages;
extern unsigned long secarena_max_total_pages;
extern unsigned long secarena_max_user_pages;

/* arena.c */
struct secarena_pages *secarena_pages_alloc(struct mm_struct *mm,
					    struct address_space *mapping,
					    unsigned long nr,
					    unsigned int guard, u32 policy);
struct secarena_pages *secarena_pages_copy(struct secarena_pages *src,
					   struct mm_struct *mm);
void secarena_pages_wipe(struct secarena_pages *p);
void secarena_pages_revoke(struct secarena_pages *p);
void secarena_pages_put(struct secarena_pages *p);

/* account.c */
int secarena_account_reserve(struct secarena_pages *p);
int secarena_account_commit(struct secarena_pages *p);
void secarena_account_remove(struct secarena_pages *p);
int secarena_charge_memlock(struct mm_struct *mm, unsigned long nr);
void secarena_stats_get(struct secarena_stats *out);
ssize_t secarena_users_show(char *buf);
void secarena_stats_open(void);
void secarena_stats_release(void);
void secarena_stats_foreign_mmap(void);
void secarena_stats_fork_copy_failed(void);
int secarena_hibernation_prepare(void);
void secarena_hibernation_done(void);

/* vma.c */
int secarena_mmap(struct file *file, struct vm_area_struct *vma);
int secarena_insert_pages(struct vm_area_struct *vma,
			  struct secarena_pages *p);

#endif /* SECARENA_INTERNAL_H */
