// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arenas in service and growth: when every live arena is out of blocks
 * of an order, map another, up to max_arenas. A thread starts with its home
 * arena and moves its home to wherever it last succeeded, so threads spread
 * over arenas only once the first ones fill.
 */
#include <errno.h>

#include "allocator.h"
#include "arena.h"
#include "arena_set.h"
#include "secarena.h"
#include "status_page.h"

/* Called with grow_lock held. 0 or an errno value. */
static int arena_append(const struct backend_ops *ops)
{
	struct arena *a;
	int err;

	if (allocator.live_arenas >= allocator.max_arenas || allocator.narenas >= ARENA_SLOTS)
		return ENOMEM;
	a = arena_create(ops, allocator.arena_size, allocator.min_order,
			 allocator.fork_policy, &err);
	if (!a)
		return err;
	if ((allocator.flags & SECARENA_F_REQUIRE_LOCKED) &&
	    !(a->region.protection & SECARENA_PROT_LOCKED)) {
		err = a->region.lock_errno ? a->region.lock_errno : EPERM;
		arena_destroy(a);
		return err;
	}
	if (allocator.live_arenas == 0) {	/* the first, or the first a fork child maps */
		allocator.protection = a->region.protection;
		allocator.lock_errno = a->region.lock_errno;
	} else {
		allocator.protection &= a->region.protection;
		if (a->region.lock_errno)
			allocator.lock_errno = a->region.lock_errno;
	}
	allocator.arena[allocator.narenas] = a;
	allocator.live_arenas++;
	__atomic_store_n(&allocator.narenas, allocator.narenas + 1, __ATOMIC_RELEASE);
	status_page_update();
	return 0;
}

int arenas_add_first(const struct backend_ops *ops, int *err)
{
	*err = arena_append(ops);
	return *err ? -1 : 0;
}

/* Map one more arena unless another thread already did (seen changed). */
static int arenas_grow(size_t seen)
{
	int grown;

	pthread_mutex_lock(&allocator.grow_lock);
	if (__atomic_load_n(&allocator.narenas, __ATOMIC_RELAXED) != seen)
		grown = 1;
	else
		grown = allocator_ready() && arena_append(allocator.backend) == 0;
	pthread_mutex_unlock(&allocator.grow_lock);
	return grown;
}

/* One pass over the live arenas from *home; the arena that gave blocks, or NULL. */
static struct arena *take_pass(size_t n, unsigned int order, void **out, size_t want,
			       size_t *got, size_t *home, int state, int slice)
{
	size_t j;

	for (j = 0; j < n; j++) {
		size_t idx = (*home + j) % n;
		struct arena *a = allocator.arena[idx];

		if (a->life != ARENA_LIVE)
			continue;
		*got = arena_take(a, order, out, want, (enum block_state)state, slice);
		if (*got) {
			*home = idx;
			return a;
		}
	}
	return NULL;
}

/*
 * The thread's slice in every arena first, then any slice: a thread shares
 * cache lines with another only once its own slices are full, and no arena
 * is mapped while an existing one has room.
 */
struct arena *arenas_take(unsigned int order, void **out, size_t want, size_t *got,
			  size_t *home, int state, int slice)
{
	for (;;) {
		size_t n = __atomic_load_n(&allocator.narenas, __ATOMIC_ACQUIRE);
		struct arena *a = NULL;

		if (slice != BUDDY_ANY_SLICE)
			a = take_pass(n, order, out, want, got, home, state, slice);
		if (!a)
			a = take_pass(n, order, out, want, got, home, state, BUDDY_ANY_SLICE);
		if (a)
			return a;
		if (!arenas_grow(n))
			return NULL;
	}
}

void arenas_destroy_all(void)
{
	size_t i, n = allocator.narenas;

	__atomic_store_n(&allocator.narenas, 0, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		arena_destroy(allocator.arena[i]);
		allocator.arena[i] = NULL;
	}
	allocator.live_arenas = 0;
}

void arenas_lock_all(void)
{
	size_t i;

	for (i = 0; i < allocator.narenas; i++)
		pthread_mutex_lock(&allocator.arena[i]->lock);
}

void arenas_unlock_all(void)
{
	size_t i = allocator.narenas;

	while (i--)
		pthread_mutex_unlock(&allocator.arena[i]->lock);
}
