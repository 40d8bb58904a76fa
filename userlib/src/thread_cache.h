/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-thread caches of small blocks, so the common malloc/free pair takes no
 * lock and no atomic read-modify-write.
 *
 * A thread cache holds, for each order up to 4 KiB, a stack of wiped blocks
 * still marked held in their arena's block map (BLOCK_CACHED). malloc pops
 * one and stores BLOCK_USED into its map byte; free checks the map byte
 * (BLOCK_USED, or it aborts), stores BLOCK_CACHED, wipes the block and
 * pushes it. Only an empty stack (refill: half the stack's limit, under one
 * arena lock) or a full one (flush of the older half) takes a lock. A block
 * freed by another thread than the one that allocated it simply joins the
 * freeing thread's cache. The byte stores need no atomic RMW because no one
 * else writes the map byte of a block that a thread holds: the buddy writes
 * only entries of free blocks, under the lock.
 *
 * Every cache is on a registry so that used() can add up the per-thread
 * in-use counters, done() can empty them all, and a fork child can give back
 * what the threads that did not follow it into the child had cached.
 */
#ifndef SECARENA_THREAD_CACHE_H
#define SECARENA_THREAD_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "allocator.h"
#include "arena.h"

#define CACHE_MAX_BLOCK_ORDER	12	/* 4 KiB */
#define CACHE_BINS		9	/* min_order .. min_order + 8 at most */
#define CACHE_MAX_SLOTS		64

struct cached_block {
	void *p;
	struct arena *arena;
};

struct cache_bin {
	unsigned int count;
	unsigned int limit;		/* 0: this order is not cached */
	struct cached_block slot[CACHE_MAX_SLOTS];
};

struct thread_cache {
	uint64_t generation;		/* allocator.generation it was set up for */
	size_t home;			/* arena index to refill from */
	long long used;			/* in_use change by this thread; atomic, one writer */
	struct thread_cache *next, *prev; /* registry */
	struct cache_bin bin[CACHE_BINS];
};

extern __thread struct thread_cache *thread_cache_current
	__attribute__((tls_model("initial-exec")));

struct thread_cache *thread_cache_attach(void);

/* The calling thread's cache, set up for this init; NULL if none could be made. */
static inline struct thread_cache *thread_cache_get(void)
{
	struct thread_cache *tc = thread_cache_current;

	if (__builtin_expect(tc != NULL && tc->generation ==
			     __atomic_load_n(&allocator.generation, __ATOMIC_RELAXED), 1))
		return tc;
	return thread_cache_attach();
}

static inline void thread_cache_count_used(struct thread_cache *tc, long long delta)
{
	if (tc)
		__atomic_store_n(&tc->used, __atomic_load_n(&tc->used, __ATOMIC_RELAXED) + delta,
				 __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&allocator.used_unowned, delta, __ATOMIC_RELAXED);
}

static inline struct cache_bin *thread_cache_bin(struct thread_cache *tc, unsigned int order)
{
	if (order > allocator.cache_max_order)
		return NULL;
	return &tc->bin[order - allocator.min_order];
}

/* Refill an empty bin from the arenas; 0 if they have no block of the order. */
int thread_cache_refill(struct thread_cache *tc, struct cache_bin *bin, unsigned int order);
/* Give the older half of a full bin back to the arenas. */
void thread_cache_flush_half(struct cache_bin *bin, unsigned int order);

/* A block of the order: popped, or refilled from the arenas. NULL if none. */
static inline void *thread_cache_alloc(struct thread_cache *tc, struct cache_bin *bin,
				       unsigned int order)
{
	struct cached_block *c;

	if (__builtin_expect(bin->count == 0, 0) && !thread_cache_refill(tc, bin, order))
		return NULL;
	c = &bin->slot[--bin->count];
	buddy_set_entry(&c->arena->buddy, buddy_granule(&c->arena->buddy, c->p),
			MAP_ENTRY(BLOCK_USED, order));
	thread_cache_count_used(tc, (long long)1 << order);
	return c->p;
}

/* Take a wiped block marked BLOCK_CACHED; flushes half the bin if full. */
static inline void thread_cache_put(struct thread_cache *tc, struct cache_bin *bin,
				    struct arena *a, void *p, unsigned int order)
{
	if (__builtin_expect(bin->count == bin->limit, 0))
		thread_cache_flush_half(bin, order);
	bin->slot[bin->count].p = p;
	bin->slot[bin->count].arena = a;
	bin->count++;
	thread_cache_count_used(tc, -((long long)1 << order));
}
/* Give every cached block back to its arena; 1 if there was any. */
int thread_cache_flush_all(struct thread_cache *tc);

/* Registry, for used(), done() and fork. */
long long thread_cache_sum_used(void);
void thread_cache_forget_all(void);
void thread_cache_registry_lock(void);
void thread_cache_registry_unlock(void);
void thread_cache_fork_child(void);
/* Bin limits for the current configuration. */
void thread_cache_configure(void);

#endif
