/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The process-wide allocator state: arenas in service, configuration, counters. */
#ifndef SECARENA_ALLOCATOR_H
#define SECARENA_ALLOCATOR_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#define ARENA_SLOTS		64	/* arenas ever mapped, retired ones included */
#define MAX_ARENAS_LIMIT	32	/* live arenas (secarena_options.max_arenas) */

struct arena;

struct allocator {
	/* Read on every call, written only by init, done and growth. */
	int initialized;		/* atomic: set last by init, cleared first by done */
	unsigned int flags;
	enum fork_policy fork_policy;
	size_t arena_size;
	unsigned int min_order, max_order;
	size_t max_arenas;
	const struct backend_ops *backend;
	unsigned int protection;	/* SECARENA_PROT_* common to all arenas */
	int lock_errno;
	/*
	 * Appended under grow_lock and published by a release store of
	 * narenas, so free() finds a pointer's arena without a lock. Arenas
	 * are removed only by secarena_done().
	 */
	struct arena *arena[ARENA_SLOTS];
	size_t narenas;
	size_t live_arenas;
	uint64_t generation;		/* changes at init and done: stale thread caches reset */
	unsigned int cache_max_order;	/* largest order a thread cache holds; 0: none */
	int policy;			/* enum secarena_policy, atomic */
	/*
	 * Written by any thread: on cache lines of their own, or every call on
	 * another CPU would miss the fields above.
	 */
	pthread_mutex_t grow_lock __attribute__((aligned(64)));	/* init, done, growth */
	/* Counters, atomic; every refill and flush of a thread cache moves them. */
	size_t failures __attribute__((aligned(64)));
	size_t arena_held;		/* bytes out of the buddies */
	size_t peak;
	long long used_unowned;		/* in_use not carried by a thread cache */
};

extern struct allocator allocator;

static inline int allocator_ready(void)
{
	return __atomic_load_n(&allocator.initialized, __ATOMIC_ACQUIRE);
}

/* Bytes moved out of (+) or back into (-) the buddies. */
void allocator_count_held(ptrdiff_t delta);
void allocator_count_failure(void);

#endif
