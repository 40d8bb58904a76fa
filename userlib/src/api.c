// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The public API: init and done, malloc and free over the arenas (through
 * the thread cache for blocks up to 4 KiB), the policy when no arena can
 * serve, and the statistics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "arena.h"
#include "arena_set.h"
#include "fallback_heap.h"
#include "fork_handlers.h"
#include "guarded_mapping.h"
#include "misuse.h"
#include "secarena.h"
#include "status_page.h"
#include "thread_cache.h"
#include "wipe.h"

#define EXPORT __attribute__((visibility("default")))

#define DEFAULT_ARENA_SIZE	((size_t)1 << 20)
#define DEFAULT_MIN_BLOCK	((size_t)16)
#define DEFAULT_MAX_ARENAS	8
#define LARGEST_ARENA		((size_t)1 << 40)

static unsigned int order_of(size_t n)
{
	return (unsigned int)(64 - __builtin_clzll((unsigned long long)n - 1));
}

/* ---- init and done ---- */

static const struct backend_ops *const backends_by_strength[] = {
	&backend_device, &backend_memfd_secret, &backend_mlock,
};

/* Index into backends_by_strength, or -1 (EINVAL). */
static int backend_choice(unsigned int flags)
{
	const char *env;
	unsigned int i;

	if (flags & SECARENA_F_BACKEND_MASK)
		return (int)(flags & SECARENA_F_BACKEND_MASK) - 1;
	env = getenv("SECARENA_BACKEND");
	if (!env || !*env)
		return 0;
	for (i = 0; i < 3; i++)
		if (strcmp(env, backends_by_strength[i]->name) == 0)
			return (int)i;
	return -1;
}

/* 1 if the device is required (flag or env), 0 if not, -1 on a bad env value. */
static int device_required(unsigned int flags)
{
	const char *env = getenv("SECARENA_REQUIRE");

	if (env && *env) {
		if (strcmp(env, "device") != 0)
			return -1;
		return 1;
	}
	return (flags & SECARENA_F_REQUIRE_DEVICE) != 0;
}

static int init_checked(const struct secarena_options *opt, struct secarena_status *status)
{
	size_t size = opt->arena_size ? opt->arena_size : DEFAULT_ARENA_SIZE;
	size_t min_block = opt->min_block ? opt->min_block : DEFAULT_MIN_BLOCK;
	size_t max_arenas = opt->max_arenas ? opt->max_arenas : DEFAULT_MAX_ARENAS;
	unsigned int flags = opt->flags;
	int choice = backend_choice(flags), required = device_required(flags);
	int first_err = 0, i, last;

	if ((flags & ~SECARENA_F_ALL) || (flags & SECARENA_F_FORK_MASK) == (3u << 5) ||
	    size > LARGEST_ARENA || (min_block & (min_block - 1)) || min_block < 16 ||
	    max_arenas > MAX_ARENAS_LIMIT || choice < 0 || required < 0)
		return EINVAL;
	if (size < page_size())
		size = page_size();
	size = (size_t)1 << order_of(size);
	if (min_block > size)
		return EINVAL;
	if (required) {
		/* The flags name a weaker backend, but the device is required. */
		if ((flags & SECARENA_F_BACKEND_MASK) &&
		    (flags & SECARENA_F_BACKEND_MASK) != SECARENA_F_BACKEND_DEVICE)
			return EPERM;
		choice = 0;	/* over SECARENA_BACKEND, which is only a preference */
	}
	if (allocator_ready())
		return EBUSY;

	allocator.flags = flags;
	allocator.fork_policy = (enum fork_policy)((flags & SECARENA_F_FORK_MASK) >> 5);
	allocator.arena_size = size;
	allocator.min_order = order_of(min_block);
	allocator.max_order = order_of(size);
	allocator.max_arenas = max_arenas;
	allocator.failures = 0;
	allocator.arena_held = 0;
	allocator.peak = 0;
	allocator.used_unowned = 0;
	last = (flags & SECARENA_F_FALLBACK_BACKEND) && !required ? 2 : choice;
	for (i = choice; i <= last; i++) {
		int err;

		allocator.backend = backends_by_strength[i];
		if (arenas_add_first(allocator.backend, &err) == 0)
			break;
		if (!first_err)
			first_err = err;
	}
	if (i > last) {
		allocator.backend = NULL;
		return first_err;
	}
	thread_cache_configure();
	fork_handlers_register();
	__atomic_store_n(&allocator.policy, (flags & SECARENA_F_HEAP_FALLBACK) ?
			 SECARENA_POLICY_HEAP_FALLBACK : SECARENA_POLICY_STRICT, __ATOMIC_RELAXED);
	__atomic_add_fetch(&allocator.generation, 1, __ATOMIC_RELAXED);
	if (status) {
		status->backend = allocator.backend->name;
		status->protection = allocator.protection;
		status->lock_errno = allocator.lock_errno;
	}
	__atomic_store_n(&allocator.initialized, 1, __ATOMIC_RELEASE);
	return 0;
}

EXPORT int secarena_init_ex(const struct secarena_options *opt, struct secarena_status *status)
{
	int err;

	if (!opt) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&allocator.grow_lock);
	err = init_checked(opt, status);
	pthread_mutex_unlock(&allocator.grow_lock);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

EXPORT int secarena_init(size_t arena_size, size_t min_block, unsigned int flags)
{
	struct secarena_options opt = {
		.arena_size = arena_size,
		.min_block = min_block,
		.flags = flags,
	};

	return secarena_init_ex(&opt, NULL);
}

EXPORT int secarena_done(void)
{
	pthread_mutex_lock(&allocator.grow_lock);
	if (!allocator_ready()) {
		pthread_mutex_unlock(&allocator.grow_lock);
		errno = EINVAL;
		return -1;
	}
	__atomic_store_n(&allocator.initialized, 0, __ATOMIC_RELEASE);
	thread_cache_forget_all();
	arenas_destroy_all();
	__atomic_add_fetch(&allocator.generation, 1, __ATOMIC_RELAXED);
	allocator.backend = NULL;
	allocator.protection = 0;
	allocator.lock_errno = 0;
	allocator.arena_held = 0;
	allocator.used_unowned = 0;
	status_page_update();
	pthread_mutex_unlock(&allocator.grow_lock);
	return 0;
}

EXPORT int secarena_initialized(void)
{
	return allocator_ready();
}

/* ---- allocation ---- */

/* No arena can serve: the policy decides. */
static void *no_arena_block(size_t size)
{
	if (__atomic_load_n(&allocator.policy, __ATOMIC_RELAXED) == SECARENA_POLICY_HEAP_FALLBACK) {
		void *p = fallback_alloc(size);

		if (p)
			return p;
	}
	allocator_count_failure();
	status_page_note_refusal(size);
	errno = ENOMEM;
	return NULL;
}

static void *arena_block(size_t size)
{
	struct thread_cache *tc;
	struct cache_bin *bin;
	unsigned int order;
	size_t local_home = 0, got;
	void *p;
	int retried = 0;

	if (size <= ((size_t)1 << allocator.min_order))
		order = allocator.min_order;
	else if (size > allocator.arena_size)
		return NULL;
	else
		order = order_of(size);
	tc = thread_cache_get();	/* NULL only if calloc failed: go uncached */
	for (;;) {
		bin = tc ? thread_cache_bin(tc, order) : NULL;
		if (bin && bin->limit) {
			p = thread_cache_alloc(tc, bin, order);
			if (p)
				return p;
		} else if (arenas_take(order, &p, 1, &got, tc ? &tc->home : &local_home,
				       BLOCK_USED, thread_cache_slice(tc))) {
			thread_cache_count_used(tc, (long long)1 << order);
			return p;
		}
		/* Blocks this thread has cached may be what the arenas lack. */
		if (retried || !tc || !thread_cache_flush_all(tc))
			return NULL;
		retried = 1;
	}
}

/* Everything but a hit in this thread's cache: refill, large blocks, policy. */
__attribute__((noinline)) static void *malloc_slowpath(size_t size)
{
	void *p = allocator_ready() ? arena_block(size) : NULL;

	return p ? p : no_arena_block(size);
}

EXPORT void *secarena_malloc(size_t size)
{
	struct thread_cache *tc = thread_cache_peek();

	/* The common case takes no call: a block from this thread's cache. */
	if (__builtin_expect(tc && size - 1 < tc->max_size, 1)) {	/* 0 < size <= max */
		unsigned int order = thread_cache_order(tc, size);
		struct cache_bin *bin = &tc->bin[order - tc->min_order];

		if (__builtin_expect(bin->count != 0, 1))
			return thread_cache_pop(tc, bin, order);
	}
	return malloc_slowpath(size);
}

/* Every block is handed out zero-filled (see buddy.c). */
EXPORT void *secarena_zalloc(size_t size)
{
	return secarena_malloc(size);
}

/* Another thread moved the entry on between our check and our claim. */
__attribute__((noreturn, cold)) static void freed_meanwhile(const void *p, const char *what)
{
	misuse_abort("%s(%p): double free (another thread freed the block at the same time)",
		     what, p);
}

/* The entry e of the block p starts says that no caller holds it. */
__attribute__((noreturn, cold))
static void not_held(const void *p, unsigned char e, const char *what)
{
	switch (MAP_STATE(e)) {
	case BLOCK_FREE:
		misuse_abort("%s(%p): double free (the block is free)", what, p);
	case BLOCK_CACHED:
		/* An order no cache holds is marked cached only while being freed. */
		if (MAP_ORDER(e) > allocator.cache_max_order)
			freed_meanwhile(p, what);
		misuse_abort("%s(%p): double free (the block is in a thread cache)", what, p);
	default:
		misuse_abort("%s(%p): double free (the block was freed after fork)", what, p);
	}
}

/* The map entry of the block p starts, which must be held by a caller. */
static inline unsigned char held_entry(const struct arena *a, const void *p, const char *what)
{
	unsigned char e = buddy_entry_of(&a->buddy, p, what);

	if (__builtin_expect(MAP_STATE(e) != BLOCK_USED, 0))
		not_held(p, e, what);
	return e;
}

/* A block of an arena that a fork child does not own: never wiped, never reused. */
static void retire_block(struct arena *a, void *p, unsigned char e, const char *what)
{
	if (!buddy_claim_entry(&a->buddy, buddy_granule(&a->buddy, p), &e,
			       MAP_ENTRY(BLOCK_RETIRED, MAP_ORDER(e))))
		freed_meanwhile(p, what);
	thread_cache_count_used(thread_cache_get(), -((long long)1 << MAP_ORDER(e)));
}

/*
 * A held block (map entry e) into a bin of this thread's cache. Claimed
 * with a compare-and-swap before the wipe: of two threads that free the
 * block at the very same time, which both saw it held, only one caches it;
 * the other aborts here, at its free, before it writes a byte of the block.
 * (A plain store would be cheaper by the wait of a locked instruction for
 * the previous wipe's stores, about 4% of a malloc+free pair in the
 * benchmark, but then both frees get through, both wipe the block at once
 * and it sits in two caches until one of them hands it out.)
 *
 * Wiped before it is pushed: a fork child gives back the bins of threads
 * that did not follow it, and must find no block there half wiped.
 */
static inline void cache_block(struct thread_cache *tc, struct cache_bin *bin, struct arena *a,
			       void *p, unsigned char e, const char *what)
{
	unsigned int order = MAP_ORDER(e);
	size_t granule = buddy_granule(&a->buddy, p);

	if (!buddy_claim_entry(&a->buddy, granule, &e, MAP_ENTRY(BLOCK_CACHED, order)))
		freed_meanwhile(p, what);
	wipe(p, (size_t)1 << order);
	thread_cache_put(tc, bin, p, &a->buddy.block_map[granule], order);
}

/* Everything but a block that goes into this thread's cache. */
__attribute__((noinline))
static void release_block_slowpath(struct arena *a, void *p, unsigned char e, const char *what)
{
	unsigned int order = MAP_ORDER(e);
	struct thread_cache *tc;
	struct cache_bin *bin;

	if (a->life != ARENA_LIVE) {
		retire_block(a, p, e, what);
		return;
	}
	tc = thread_cache_get();
	bin = tc ? thread_cache_bin(tc, order) : NULL;
	if (bin && bin->limit) {
		cache_block(tc, bin, a, p, e, what);
		return;
	}
	/*
	 * Claimed with a compare-and-swap: of two threads freeing the block at
	 * once, which both saw it held, only one goes on to wipe it and give it
	 * back; the other aborts. Marked cached (held, not free) until the buddy
	 * takes it, so no neighbour merges with it meanwhile.
	 */
	if (!buddy_claim_entry(&a->buddy, buddy_granule(&a->buddy, p), &e,
			       MAP_ENTRY(BLOCK_CACHED, order)))
		freed_meanwhile(p, what);
	wipe(p, (size_t)1 << order);
	arena_give_back(a, &p, 1, order);
	thread_cache_count_used(tc, -((long long)1 << order));
}

static inline void release_block(struct arena *a, void *p, const char *what)
{
	unsigned char e = held_entry(a, p, what);
	struct thread_cache *tc = thread_cache_peek();
	struct cache_bin *bin = tc ? thread_cache_bin(tc, MAP_ORDER(e)) : NULL;

	/* The common case takes no call but the wipe's memset. */
	if (__builtin_expect(bin && a->life == ARENA_LIVE, 1))
		cache_block(tc, bin, a, p, e, what);
	else
		release_block_slowpath(a, p, e, what);
}

__attribute__((noreturn)) static void not_ours(const void *p, const char *what)
{
	misuse_abort("%s(%p): pointer not from secarena (another heap or arena?)", what, p);
}

EXPORT void secarena_free(void *ptr)
{
	struct arena *a;

	if (!ptr)
		return;
	a = arena_of(ptr);
	if (a)
		release_block(a, ptr, "secarena_free");
	else if (fallback_owns(ptr))
		fallback_release(ptr);
	else
		not_ours(ptr, "secarena_free");
}

EXPORT void secarena_clear_free(void *ptr, size_t len)
{
	struct arena *a;

	if (!ptr)
		return;
	a = arena_of(ptr);
	if (a) {
		unsigned char e = held_entry(a, ptr, "secarena_clear_free");

		if (len > ((size_t)1 << MAP_ORDER(e)))
			misuse_abort("secarena_clear_free(%p, %zu): longer than the block (%zu)",
				     ptr, len, (size_t)1 << MAP_ORDER(e));
		release_block(a, ptr, "secarena_clear_free");	/* wipes the whole block */
	} else if (fallback_owns(ptr)) {
		if (len > fallback_size(ptr))
			misuse_abort("secarena_clear_free(%p, %zu): longer than the block (%zu)",
				     ptr, len, fallback_size(ptr));
		fallback_release(ptr);
	} else {
		not_ours(ptr, "secarena_clear_free");
	}
}

EXPORT size_t secarena_actual_size(const void *ptr)
{
	struct arena *a;

	if (!ptr)
		return 0;
	a = arena_of(ptr);
	if (a)
		return (size_t)1 << MAP_ORDER(held_entry(a, ptr, "secarena_actual_size"));
	if (fallback_owns(ptr))
		return fallback_size(ptr);
	not_ours(ptr, "secarena_actual_size");
}

EXPORT void *secarena_realloc(void *ptr, size_t size)
{
	size_t old;
	struct arena *a;
	void *q;

	if (!ptr)
		return secarena_malloc(size);
	if (size == 0) {
		secarena_free(ptr);
		return NULL;
	}
	a = arena_of(ptr);
	if (a) {
		old = (size_t)1 << MAP_ORDER(held_entry(a, ptr, "secarena_realloc"));
		/* A FORK_NONE child inherited the pointer, not the bytes. */
		if (a->life == ARENA_GONE) {
			errno = EFAULT;
			return NULL;
		}
		/* Same block if it fits and more than half of it stays in use. */
		if (a->life == ARENA_LIVE && size <= old &&
		    (size > old / 2 || old == ((size_t)1 << allocator.min_order)))
			return ptr;
	} else if (fallback_owns(ptr)) {
		old = fallback_size(ptr);
	} else {
		not_ours(ptr, "secarena_realloc");
	}
	q = secarena_malloc(size);
	if (!q)
		return NULL;
	memcpy(q, ptr, old < size ? old : size);
	secarena_free(ptr);
	return q;
}

/* ---- queries ---- */

EXPORT int secarena_allocated(const void *ptr)
{
	struct arena *a = ptr ? arena_of(ptr) : NULL;

	return a && a->life != ARENA_GONE;
}

/*
 * Whether secarena_free() takes ptr: a wrapper that hands other memory to
 * free(3) must ask this, not secarena_allocated(), or a block inherited
 * from an arena the child has not got would reach free(3).
 */
EXPORT int secarena_owns(const void *ptr)
{
	return ptr && (arena_of(ptr) || fallback_owns(ptr));
}

EXPORT size_t secarena_used(void)
{
	long long n = thread_cache_sum_used();

	return n > 0 ? (size_t)n : 0;
}

EXPORT int secarena_stats(struct secarena_stats *st)
{
	size_t i, n;

	if (!st) {
		errno = EINVAL;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->in_use = secarena_used();
	pthread_mutex_lock(&allocator.grow_lock);
	n = allocator_ready() ? allocator.narenas : 0;
	for (i = 0; i < n; i++) {
		if (allocator.arena[i]->life != ARENA_LIVE)
			continue;
		st->arenas++;
		st->capacity += allocator.arena[i]->buddy.size;
	}
	st->max_arenas = allocator.max_arenas;
	pthread_mutex_unlock(&allocator.grow_lock);
	st->arena_held = __atomic_load_n(&allocator.arena_held, __ATOMIC_RELAXED);
	st->peak = __atomic_load_n(&allocator.peak, __ATOMIC_RELAXED);
	st->failures = __atomic_load_n(&allocator.failures, __ATOMIC_RELAXED);
	st->fallbacks = fallback_count();
	st->fallback_in_use = fallback_in_use();
	return 0;
}

EXPORT const char *secarena_backend_name(void)
{
	return allocator_ready() ? allocator.backend->name : NULL;
}

EXPORT unsigned int secarena_protection(void)
{
	return allocator_ready() ? allocator.protection : 0;
}

EXPORT enum secarena_policy secarena_get_policy(void)
{
	return (enum secarena_policy)__atomic_load_n(&allocator.policy, __ATOMIC_RELAXED);
}

EXPORT int secarena_set_policy(enum secarena_policy policy)
{
	if (policy != SECARENA_POLICY_STRICT && policy != SECARENA_POLICY_HEAP_FALLBACK) {
		errno = EINVAL;
		return -1;
	}
	__atomic_store_n(&allocator.policy, (int)policy, __ATOMIC_RELAXED);
	return 0;
}

static void wipe_block(void *block, size_t size, void *arg)
{
	(void)arg;
	wipe(block, size);
}

EXPORT void secarena_wipe_in_use(void)
{
	size_t i;

	pthread_mutex_lock(&allocator.grow_lock);
	for (i = 0; allocator_ready() && i < allocator.narenas; i++) {
		struct arena *a = allocator.arena[i];

		if (a->life != ARENA_LIVE)
			continue;
		pthread_mutex_lock(&a->lock);
		buddy_for_each(&a->buddy, BLOCK_USED, wipe_block, NULL);
		pthread_mutex_unlock(&a->lock);
	}
	pthread_mutex_unlock(&allocator.grow_lock);
}
