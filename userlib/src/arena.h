/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One arena: a backend mapping, the buddy over it, its lock and its metadata. */
#ifndef SECARENA_ARENA_H
#define SECARENA_ARENA_H

#include <pthread.h>
#include <stdint.h>

#include "allocator.h"
#include "backend.h"
#include "buddy.h"

/*
 * The struct and the buddy's block map live together in one anonymous
 * mapping of their own, with guard pages, away from the data area and from
 * the malloc heap: an overrun of a secret block hits a guard page of the
 * data mapping before it can reach them.
 */
struct arena {
	/*
	 * What free() reads comes first, away from the lock and the free
	 * lists, which every refill and flush writes: on two threads, sharing
	 * a cache line with them would cost a miss per call.
	 */
	enum arena_life life;		/* ARENA_LIVE except in a fork child */
	const struct backend_ops *backend;
	size_t meta_len;		/* this mapping, without its guards */
	struct backend_region region;
	struct buddy buddy;		/* read-only part, then the lists */
	pthread_mutex_t lock;		/* guards buddy (map entries of held blocks excepted) */
};

/* NULL with *err set (an errno value). */
struct arena *arena_create(const struct backend_ops *ops, size_t size, unsigned int min_order,
			   enum fork_policy policy, int *err);
/* Wipe the data, unmap it, unmap the metadata. */
void arena_destroy(struct arena *a);

static inline int arena_contains(const struct arena *a, const void *p)
{
	return (uintptr_t)p - (uintptr_t)a->buddy.base < a->buddy.size;
}

/* The arena whose data area holds p, or NULL; no lock (see struct allocator). */
static inline struct arena *arena_of(const void *p)
{
	size_t n = __atomic_load_n(&allocator.narenas, __ATOMIC_ACQUIRE);
	size_t i;

	for (i = 0; i < n; i++) {
		struct arena *a = allocator.arena[i];

		if (arena_contains(a, p))
			return a;
	}
	return NULL;
}

/*
 * Up to want blocks of one order, under the lock; marked state. Returns how
 * many. slice: the buddy slice to take them from, or BUDDY_ANY_SLICE (see
 * buddy_alloc()).
 */
size_t arena_take(struct arena *a, unsigned int order, void **out, size_t want,
		  enum block_state state, int slice);
/* Give back zero-filled blocks of one order marked BLOCK_CACHED, under the lock. */
void arena_give_back(struct arena *a, void *const *blocks, size_t n, unsigned int order);

/*
 * A cached block whose map byte is no longer BLOCK_CACHED. Frees claim the
 * byte with a compare-and-swap, so no block enters two caches; this catches
 * a block map written behind the allocator's back before the block is handed
 * out or merged a second time.
 */
__attribute__((noreturn, cold)) void arena_cached_twice(const void *p);

#endif
