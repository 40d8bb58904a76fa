/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-thread caches of small blocks, so the common malloc/free pair takes no
 * lock and one atomic read-modify-write, on a byte of the block's own map.
 *
 * A thread cache holds, for each order up to 4 KiB, a stack of wiped blocks
 * still marked held in their arena's block map (BLOCK_CACHED). malloc pops
 * one and stores BLOCK_USED into its map byte; free moves the map byte from
 * BLOCK_USED to BLOCK_CACHED with a compare-and-swap (anything else aborts:
 * a double free, also when two threads free the block at the same time),
 * wipes the block and pushes it. Only an empty stack (refill: half the
 * stack's limit, under one arena lock) or a full one (flush of the older
 * half) takes a lock. A block freed by another thread than the one that
 * allocated it simply joins the freeing thread's cache. The pop's store
 * needs no atomic RMW because no one else writes the map byte of a block in
 * a thread's cache: the buddy writes only entries of free blocks, under the
 * lock, and a free of a cached block fails its compare-and-swap.
 *
 * A slot keeps the block's address and the address of its map byte, so that
 * a pop reads nothing of the arena. The fast paths (thread_cache_peek(), a bin
 * with room or a block, an order the cache holds) are inline in
 * secarena_malloc() and secarena_free(); everything else goes through the
 * slow paths in api.c.
 *
 * Refills come from a slice of the arena that is the thread's own (see
 * buddy.h) as soon as a second thread has a cache: blocks that threads get
 * from the common free lists would otherwise lie next to each other's, and
 * every malloc and free would write a data or block-map cache line that the
 * other thread writes too. A thread alone takes the smallest fitting
 * blocks anywhere, which keeps the arena compact for large blocks.
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
	unsigned char *entry;		/* its byte in its arena's block map */
};

struct cache_bin {
	unsigned int count;
	unsigned int limit;		/* 0: this order is not cached */
	struct cached_block slot[CACHE_MAX_SLOTS];
};

struct thread_cache {
	/* What the fast paths read, copied from allocator at attach. */
	uint64_t generation;		/* allocator.generation it was set up for */
	unsigned int min_order;		/* the order of bin[0] */
	unsigned int nbins;		/* bins in use: orders min_order .. + nbins - 1 */
	size_t max_size;		/* the largest block a bin holds; 0: none */
	long long used;			/* in_use change by this thread; atomic, one writer */
	size_t home;			/* arena index to refill from */
	unsigned int slice;		/* buddy slice to refill from; the least used at attach */
	struct thread_cache *next, *prev; /* registry */
	struct cache_bin bin[CACHE_BINS];
};

extern __thread struct thread_cache *thread_cache_current
	__attribute__((tls_model("initial-exec")));

struct thread_cache *thread_cache_attach(void);

/*
 * The calling thread's cache if it is set up for this init, else NULL: no
 * call, for the fast paths. done() zeroes the generation of every cache and
 * init and done both move allocator.generation on, so a match also means
 * that the allocator is ready.
 */
static inline struct thread_cache *thread_cache_peek(void)
{
	struct thread_cache *tc = thread_cache_current;

	if (__builtin_expect(tc != NULL && tc->generation ==
			     __atomic_load_n(&allocator.generation, __ATOMIC_RELAXED), 1))
		return tc;
	return NULL;
}

/* The calling thread's cache, set up for this init; NULL if none could be made. */
static inline struct thread_cache *thread_cache_get(void)
{
	struct thread_cache *tc = thread_cache_peek();

	return tc ? tc : thread_cache_attach();
}

static inline void thread_cache_count_used(struct thread_cache *tc, long long delta)
{
	if (tc)
		__atomic_store_n(&tc->used, __atomic_load_n(&tc->used, __ATOMIC_RELAXED) + delta,
				 __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&allocator.used_unowned, delta, __ATOMIC_RELAXED);
}

/* The bin of the order, or NULL if no bin holds it. */
static inline struct cache_bin *thread_cache_bin(struct thread_cache *tc, unsigned int order)
{
	unsigned int i = order - tc->min_order;	/* below min_order: huge, no bin */

	return __builtin_expect(i < tc->nbins, 1) ? &tc->bin[i] : NULL;
}

/*
 * The order of the block that serves a request of size bytes, 0 < size <=
 * max_size: ORing in min_size - 1 rounds a small request up to the
 * minimum block without a branch.
 */
static inline unsigned int thread_cache_order(const struct thread_cache *tc, size_t size)
{
	size_t n = (size - 1) | (((size_t)1 << tc->min_order) - 1);

	return (unsigned int)(64 - __builtin_clzll((unsigned long long)n));
}

/* The buddy slice a thread takes blocks from (BUDDY_ANY_SLICE if alone or cacheless). */
int thread_cache_slice(const struct thread_cache *tc);

/* Refill an empty bin from the arenas; 0 if they have no block of the order. */
int thread_cache_refill(struct thread_cache *tc, struct cache_bin *bin, unsigned int order);
/* Give the older half of a full bin back to the arenas. */
void thread_cache_flush_half(struct cache_bin *bin, unsigned int order);

/*
 * Pop a block of a non-empty bin and mark it held by the caller. Its map
 * byte says cached unless the block map was written behind the allocator's
 * back: then it must not be handed out. The load is of the byte about to be
 * stored, so it costs no extra cache miss.
 */
static inline void *thread_cache_pop(struct thread_cache *tc, struct cache_bin *bin,
				     unsigned int order)
{
	struct cached_block *c = &bin->slot[--bin->count];

	if (__builtin_expect(__atomic_load_n(c->entry, __ATOMIC_RELAXED) !=
			     MAP_ENTRY(BLOCK_CACHED, order), 0))
		arena_cached_twice(c->p);
	__atomic_store_n(c->entry, MAP_ENTRY(BLOCK_USED, order), __ATOMIC_RELAXED);
	thread_cache_count_used(tc, (long long)1 << order);
	return c->p;
}

/* A block of the order: popped, or refilled from the arenas. NULL if none. */
static inline void *thread_cache_alloc(struct thread_cache *tc, struct cache_bin *bin,
				       unsigned int order)
{
	if (__builtin_expect(bin->count == 0, 0) && !thread_cache_refill(tc, bin, order))
		return NULL;
	return thread_cache_pop(tc, bin, order);
}

/* Take a wiped block marked BLOCK_CACHED; flushes half the bin if full. */
static inline void thread_cache_put(struct thread_cache *tc, struct cache_bin *bin,
				    void *p, unsigned char *entry, unsigned int order)
{
	struct cached_block *c;

	if (__builtin_expect(bin->count == bin->limit, 0))
		thread_cache_flush_half(bin, order);
	c = &bin->slot[bin->count++];
	c->p = p;
	c->entry = entry;
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
