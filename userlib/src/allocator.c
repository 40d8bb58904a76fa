// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The process-wide allocator state and its counters. At the bottom of the
 * library: the arenas, the arena set, the thread caches and the API all
 * read it, and it calls none of them.
 */
#include "allocator.h"

struct allocator allocator = {
	.grow_lock = PTHREAD_MUTEX_INITIALIZER,
};

void allocator_count_held(ptrdiff_t delta)
{
	size_t held = __atomic_add_fetch(&allocator.arena_held, (size_t)delta, __ATOMIC_RELAXED);
	size_t peak = __atomic_load_n(&allocator.peak, __ATOMIC_RELAXED);

	while (held > peak &&
	       !__atomic_compare_exchange_n(&allocator.peak, &peak, held, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void allocator_count_failure(void)
{
	__atomic_add_fetch(&allocator.failures, 1, __ATOMIC_RELAXED);
}
