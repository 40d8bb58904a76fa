// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fork(): every lock is held across it, so the child starts from a state no
 * thread was half-way through. In the child each arena takes the life its
 * backend and the fork policy give it:
 *   FORK_PRIVATE: its own copy (device: kernel; mlock: copy-on-write, locked
 *                 again; memfd_secret: copied into a new secret memfd), LIVE.
 *   FORK_SHARED:  the parent's pages. The child may use the blocks it
 *                 inherited, but both sides allocating from one free list
 *                 would hand out the same block twice, so the child never
 *                 allocates from it, and its frees only mark the block
 *                 retired (no wipe: the parent may still hold the data).
 *   FORK_NONE:    gone; frees of inherited blocks are counted and ignored.
 * New allocations in the child come from arenas it maps itself.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "allocator.h"
#include "arena.h"
#include "arena_set.h"
#include "fallback_heap.h"
#include "fork_handlers.h"
#include "secarena.h"
#include "status_page.h"
#include "thread_cache.h"

static void before_fork(void)
{
	pthread_mutex_lock(&allocator.grow_lock);
	thread_cache_registry_lock();
	fallback_lock();
	arenas_lock_all();
}

static void after_fork_parent(void)
{
	arenas_unlock_all();
	fallback_unlock();
	thread_cache_registry_unlock();
	pthread_mutex_unlock(&allocator.grow_lock);
}

/*
 * What the child's arenas have now: an mlock copy may have lost its lock.
 * With no arena left in service, the next one mapped sets it afresh.
 */
static void recount_protection(void)
{
	unsigned int protection = ~0u;
	int lock_errno = 0, live = 0;
	size_t i;

	for (i = 0; i < allocator.narenas; i++) {
		const struct arena *a = allocator.arena[i];

		if (a->life != ARENA_LIVE)
			continue;
		live = 1;
		protection &= a->region.protection;
		if (a->region.lock_errno)
			lock_errno = a->region.lock_errno;
	}
	if (live) {
		allocator.protection = protection;
		allocator.lock_errno = lock_errno;
	}
}

/*
 * The child's one thread is the one that took every lock in before_fork(), so
 * it unlocks them, as in the parent: a re-initialised mutex would lose the
 * attributes it was created with (arena locks are adaptive).
 */
static void after_fork_child(void)
{
	size_t i, held = 0;

	for (i = 0; i < allocator.narenas; i++) {
		struct arena *a = allocator.arena[i];

		if (a->life != ARENA_LIVE)
			continue;
		a->life = a->backend->fork_child(&a->region, allocator.fork_policy);
		/* An mlock copy that could not be locked again is not to be used. */
		if (a->life == ARENA_LIVE && (allocator.flags & SECARENA_F_REQUIRE_LOCKED) &&
		    !(a->region.protection & SECARENA_PROT_LOCKED))
			a->life = ARENA_GONE;
		if (a->life != ARENA_LIVE)
			allocator.live_arenas--;
		/*
		 * Keep the range of a gone arena reserved: a new arena mapped
		 * there would be taken for the old one (whose map says which
		 * inherited blocks were freed) and its blocks for old ones.
		 */
		if (a->life == ARENA_GONE)
			mmap(a->region.map, a->region.map_len, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	}
	recount_protection();
	/* Before the caches go back: giving back takes arena locks. */
	arenas_unlock_all();
	fallback_unlock();
	thread_cache_fork_child();
	thread_cache_registry_unlock();
	for (i = 0; i < allocator.narenas; i++)
		if (allocator.arena[i]->life == ARENA_LIVE)
			held += allocator.arena[i]->buddy.bytes_out;
	allocator.arena_held = held;
	status_page_update();	/* the child's own copy of the page */
	pthread_mutex_unlock(&allocator.grow_lock);
}

static void register_once(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

void fork_handlers_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_once);
}
