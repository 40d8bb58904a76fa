// SPDX-License-Identifier: LGPL-2.1-or-later
/* One arena: backend pages plus out-of-band metadata, with accounting. */
#include <errno.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#include "allocator.h"
#include "arena.h"
#include "guarded_mapping.h"
#include "misuse.h"
#include "wipe.h"

static uint64_t random_key(const void *salt)
{
	uint64_t k;

	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) == (ssize_t)sizeof(k) && k)
		return k;
	/* No entropy yet: the key only hardens; the link checks still hold. */
	return ((uint64_t)time(NULL) << 20) ^ (uint64_t)(uintptr_t)salt ^ 0x5eca7e4a5eca7e4aull;
}

struct arena *arena_create(const struct backend_ops *ops, size_t size, unsigned int min_order,
			   enum fork_policy policy, int *err)
{
	size_t meta_len = round_up_pages(sizeof(struct arena) + buddy_map_entries(size, min_order));
	struct arena *a;
	pthread_mutexattr_t attr;

	a = guarded_map(meta_len, 0, 0);
	if (!a) {
		*err = errno;
		return NULL;
	}
	/* Not secret, but no business in a core dump either. */
	madvise(a, meta_len, MADV_DONTDUMP);
	a->meta_len = meta_len;
	*err = ops->map(&a->region, size, policy);
	if (*err) {
		guarded_unmap(a, meta_len);
		return NULL;
	}
	a->backend = ops;
	a->life = ARENA_LIVE;
	pthread_mutexattr_init(&attr);
	/* PTHREAD_MUTEX_ADAPTIVE_NP is an enumerator, not a macro: test its initializer. */
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	pthread_mutex_init(&a->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	buddy_init(&a->buddy, a->region.data, size, min_order,
		   (unsigned char *)(a + 1), random_key(a));
	return a;
}

void arena_destroy(struct arena *a)
{
	/* A fork child must not wipe pages it shares with its parent. */
	if (a->life == ARENA_LIVE)
		wipe(a->region.data, a->region.data_len);
	if (a->life == ARENA_GONE)
		munmap(a->region.map, a->region.map_len);	/* the reservation */
	else
		a->backend->unmap(&a->region);
	pthread_mutex_destroy(&a->lock);
	guarded_unmap(a, a->meta_len);
}

size_t arena_take(struct arena *a, unsigned int order, void **out, size_t want,
		  enum block_state state, int slice)
{
	size_t n = 0;

	pthread_mutex_lock(&a->lock);
	while (n < want) {
		void *p = buddy_alloc(&a->buddy, order, slice);

		if (!p)
			break;
		if (state != BLOCK_USED)
			buddy_set_entry(&a->buddy, buddy_granule(&a->buddy, p),
					MAP_ENTRY(state, order));
		out[n++] = p;
	}
	pthread_mutex_unlock(&a->lock);
	if (n)
		allocator_count_held((ptrdiff_t)(n << order));
	return n;
}

void arena_cached_twice(const void *p)
{
	misuse_abort("block %p in a thread cache is no longer marked cached "
		     "(block map corrupted)", p);
}

void arena_give_back(struct arena *a, void *const *blocks, size_t n, unsigned int order)
{
	size_t i;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < n; i++) {
		/* Or the buddy would take one block twice. */
		if (buddy_entry(&a->buddy, buddy_granule(&a->buddy, blocks[i])) !=
		    MAP_ENTRY(BLOCK_CACHED, order))
			arena_cached_twice(blocks[i]);
		buddy_free(&a->buddy, blocks[i], order);
	}
	pthread_mutex_unlock(&a->lock);
	allocator_count_held(-(ptrdiff_t)(n << order));
}
