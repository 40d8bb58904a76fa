// SPDX-License-Identifier: LGPL-2.1-or-later
/* Per-thread caches: the design is in thread_cache.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "arena_set.h"
#include "misuse.h"
#include "secarena.h"
#include "thread_cache.h"

__thread struct thread_cache *thread_cache_current __attribute__((tls_model("initial-exec")));

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_cache *registry;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static unsigned int bin_limit[CACHE_BINS];
/* Under registry_lock; live_caches is also read without it, by refills. */
static unsigned int slice_users[BUDDY_SLICES];
static unsigned int live_caches;

/* A new cache takes the slice fewest others use; the lowest of those. */
static void slice_join(struct thread_cache *tc)
{
	unsigned int i, best = 0;

	for (i = 1; i < BUDDY_SLICES; i++)
		if (slice_users[i] < slice_users[best])
			best = i;
	tc->slice = best;
	slice_users[best]++;
	__atomic_store_n(&live_caches, live_caches + 1, __ATOMIC_RELAXED);
}

static void slice_leave(struct thread_cache *tc)
{
	slice_users[tc->slice]--;
	__atomic_store_n(&live_caches, live_caches - 1, __ATOMIC_RELAXED);
}

int thread_cache_slice(const struct thread_cache *tc)
{
	if (!tc || __atomic_load_n(&live_caches, __ATOMIC_RELAXED) < 2)
		return BUDDY_ANY_SLICE;
	return (int)tc->slice;
}

void thread_cache_registry_lock(void)
{
	pthread_mutex_lock(&registry_lock);
}

void thread_cache_registry_unlock(void)
{
	pthread_mutex_unlock(&registry_lock);
}

/*
 * Per bin, at most 1/64 of an arena and 128 KiB, 64 blocks: a thread holds
 * at most 9/64 of an arena in its cache, and a bin of fewer than 2 blocks
 * would only add work.
 */
void thread_cache_configure(void)
{
	size_t budget = allocator.arena_size / 64;
	unsigned int i, top = 0;

	if (budget > 128 * 1024)
		budget = 128 * 1024;
	for (i = 0; i < CACHE_BINS; i++) {
		unsigned int order = allocator.min_order + i;
		size_t n = order <= CACHE_MAX_BLOCK_ORDER && order < allocator.max_order ?
			   budget >> order : 0;

		if (allocator.flags & SECARENA_F_NO_THREAD_CACHE)
			n = 0;
		if (n > CACHE_MAX_SLOTS)
			n = CACHE_MAX_SLOTS;
		bin_limit[i] = n >= 2 ? (unsigned int)n : 0;
		if (bin_limit[i])
			top = order;
	}
	/* Bins are contiguous from min_order: limits only fall with the order. */
	allocator.cache_max_order = top;
}

static void cache_reset(struct thread_cache *tc)
{
	unsigned int i;

	for (i = 0; i < CACHE_BINS; i++) {
		tc->bin[i].count = 0;
		tc->bin[i].limit = bin_limit[i];
	}
	__atomic_store_n(&tc->used, 0, __ATOMIC_RELAXED);
	tc->home = 0;
	tc->min_order = allocator.min_order;
	tc->nbins = allocator.cache_max_order ?
		    allocator.cache_max_order - allocator.min_order + 1 : 0;
	tc->max_size = tc->nbins ? (size_t)1 << allocator.cache_max_order : 0;
}

/* Blocks [from, from + n) of a bin back to their arenas, a run per arena. */
static void bin_give_back(struct cache_bin *bin, unsigned int from, unsigned int n,
			  unsigned int order)
{
	void *run[CACHE_MAX_SLOTS];
	unsigned int i = from, end = from + n;

	while (i < end) {
		struct arena *a = arena_of(bin->slot[i].p);
		size_t k = 0;

		if (!a)
			misuse_abort("thread cache corrupted: %p is in no arena", bin->slot[i].p);
		while (i < end && arena_contains(a, bin->slot[i].p))
			run[k++] = bin->slot[i++].p;
		if (a->life == ARENA_LIVE)
			arena_give_back(a, run, k, order);
	}
}

int thread_cache_flush_all(struct thread_cache *tc)
{
	unsigned int i;
	int any = 0;

	for (i = 0; i < CACHE_BINS; i++) {
		struct cache_bin *bin = &tc->bin[i];

		if (bin->count) {
			bin_give_back(bin, 0, bin->count, allocator.min_order + i);
			bin->count = 0;
			any = 1;
		}
	}
	return any;
}

static void registry_remove(struct thread_cache *tc)
{
	slice_leave(tc);
	if (tc->prev)
		tc->prev->next = tc->next;
	else
		registry = tc->next;
	if (tc->next)
		tc->next->prev = tc->prev;
}

/* Thread exit: blocks back to the arenas, the in-use count to the shared counter. */
static void thread_cache_exit(void *arg)
{
	struct thread_cache *tc = arg;

	pthread_mutex_lock(&registry_lock);
	if (tc->generation == __atomic_load_n(&allocator.generation, __ATOMIC_RELAXED)) {
		thread_cache_flush_all(tc);
		__atomic_add_fetch(&allocator.used_unowned, tc->used, __ATOMIC_RELAXED);
	}
	registry_remove(tc);
	pthread_mutex_unlock(&registry_lock);
	thread_cache_current = NULL;
	free(tc);
}

static void exit_key_create(void)
{
	pthread_key_create(&exit_key, thread_cache_exit);
}

struct thread_cache *thread_cache_attach(void)
{
	struct thread_cache *tc = thread_cache_current;
	int saved = errno;

	if (!allocator_ready())
		return NULL;
	pthread_mutex_lock(&registry_lock);
	if (!tc) {
		tc = calloc(1, sizeof(*tc));
		if (!tc) {
			pthread_mutex_unlock(&registry_lock);
			errno = saved;
			return NULL;
		}
		pthread_once(&exit_key_once, exit_key_create);
		pthread_setspecific(exit_key, tc);
		tc->next = registry;
		if (registry)
			registry->prev = tc;
		registry = tc;
		slice_join(tc);
		thread_cache_current = tc;
	}
	/* A cache from before a done()/init() holds nothing of the new arenas. */
	cache_reset(tc);
	tc->generation = __atomic_load_n(&allocator.generation, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&registry_lock);
	errno = saved;
	return tc;
}

int thread_cache_refill(struct thread_cache *tc, struct cache_bin *bin, unsigned int order)
{
	void *blocks[CACHE_MAX_SLOTS];
	size_t got = 0, i;
	struct arena *a;

	a = arenas_take(order, blocks, bin->limit / 2, &got, &tc->home, BLOCK_CACHED,
			thread_cache_slice(tc));
	if (!a)
		return 0;
	/* Reversed, so that the lowest address is handed out first. */
	for (i = 0; i < got; i++) {
		void *p = blocks[got - 1 - i];

		bin->slot[i].p = p;
		bin->slot[i].entry = &a->buddy.block_map[buddy_granule(&a->buddy, p)];
	}
	bin->count = (unsigned int)got;
	return 1;
}

void thread_cache_flush_half(struct cache_bin *bin, unsigned int order)
{
	/* The older half goes back; the recently freed (warm) half stays. */
	unsigned int half = bin->limit / 2;

	bin_give_back(bin, 0, half, order);
	memmove(&bin->slot[0], &bin->slot[half], (bin->count - half) * sizeof(bin->slot[0]));
	bin->count -= half;
}

long long thread_cache_sum_used(void)
{
	long long sum = __atomic_load_n(&allocator.used_unowned, __ATOMIC_RELAXED);
	uint64_t gen = __atomic_load_n(&allocator.generation, __ATOMIC_RELAXED);
	struct thread_cache *tc;

	pthread_mutex_lock(&registry_lock);
	for (tc = registry; tc; tc = tc->next)
		if (tc->generation == gen)
			sum += __atomic_load_n(&tc->used, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&registry_lock);
	return sum;
}

/* done(): the arenas are going; every cache forgets its blocks. */
void thread_cache_forget_all(void)
{
	struct thread_cache *tc;

	pthread_mutex_lock(&registry_lock);
	for (tc = registry; tc; tc = tc->next)
		tc->generation = 0;
	pthread_mutex_unlock(&registry_lock);
}

/*
 * In a fork child, after the arenas have their new life: only the forking
 * thread exists. The caches of the others give their blocks back (their
 * in-use counts stay, as those blocks can still be freed here) and go away;
 * the caller's own cache drops blocks of arenas that are no longer its own.
 */
void thread_cache_fork_child(void)
{
	uint64_t gen = __atomic_load_n(&allocator.generation, __ATOMIC_RELAXED);
	struct thread_cache *tc = registry, *next;
	unsigned int i;

	for (; tc; tc = next) {
		int mine = tc == thread_cache_current;

		next = tc->next;
		if (tc->generation != gen)
			continue;
		for (i = 0; i < CACHE_BINS; i++) {
			struct cache_bin *bin = &tc->bin[i];
			unsigned char cached = MAP_ENTRY(BLOCK_CACHED, tc->min_order + i);
			unsigned int j, k = 0;

			/*
			 * Another thread may have been half-way through a pop:
			 * a block its map byte no longer calls cached stays out.
			 */
			for (j = 0; j < bin->count; j++)
				if (arena_of(bin->slot[j].p)->life == ARENA_LIVE &&
				    (mine || *bin->slot[j].entry == cached))
					bin->slot[k++] = bin->slot[j];
			bin->count = k;
		}
		if (!mine) {
			thread_cache_flush_all(tc);
			allocator.used_unowned += tc->used;
			registry_remove(tc);
			free(tc);
		}
	}
}
