// SPDX-License-Identifier: LGPL-2.1-or-later
/* The seed-compatible API over the public one; see secure_malloc.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>

#include "allocator.h"
#include "arena.h"
#include "fallback_heap.h"
#include "secarena.h"
#include "secure_malloc.h"
#include "wipe.h"

#define EXPORT __attribute__((visibility("default")))

/* How many starts minus stops this thread has made. */
static __thread unsigned int secure_depth __attribute__((tls_model("initial-exec")));

static int secure_now(void)
{
	return secure_depth > 0 && secarena_initialized();
}

/*
 * Ours: handed out by an arena, or by malloc(3) as a counted fallback. An
 * arena a fork child no longer maps (FORK_NONE) still counts: its blocks
 * must reach secarena_free(), which ignores them, never free(3).
 */
static int owned(const void *ptr)
{
	return ptr && (arena_of(ptr) || fallback_owns(ptr));
}

EXPORT int secure_malloc_init(size_t arena_size, size_t mem_min_unit, size_t overrun_bytes)
{
	size_t min_block = 16;

	(void)overrun_bytes;
	while (min_block < mem_min_unit && min_block < ((size_t)1 << 30))
		min_block <<= 1;
	return secarena_init(arena_size, min_block, SECARENA_F_FALLBACK_BACKEND) == 0;
}

EXPORT int secure_allocation_support(void)
{
	return secarena_initialized();
}

EXPORT int start_secure_allocation(void)
{
	int was = secure_depth > 0;

	secure_depth++;
	return was;
}

EXPORT int stop_secure_allocation(void)
{
	int was = secure_depth > 0;

	if (secure_depth)
		secure_depth--;
	return was;
}

EXPORT void *secure_malloc(size_t size)
{
	return secure_now() ? secarena_malloc(size) : malloc(size);
}

EXPORT void *secure_calloc(size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	/* Arena blocks are zero-filled already. */
	return secure_now() ? secarena_zalloc(nmemb * size) : calloc(nmemb, size);
}

EXPORT char *secure_strdup(const char *str)
{
	size_t n = strlen(str) + 1;
	char *p = secure_malloc(n);

	if (p)
		memcpy(p, str, n);
	return p;
}

EXPORT void secure_free(void *ptr)
{
	if (owned(ptr))
		secarena_free(ptr);
	else
		free(ptr);
}

/* Move a heap block into the arena: copy, wipe the old copy, free it. */
static void *heap_to_arena(void *ptr, size_t old_len, size_t size, size_t wipe_len)
{
	void *q = secarena_malloc(size);

	if (!q)
		return NULL;
	memcpy(q, ptr, old_len < size ? old_len : size);
	wipe(ptr, wipe_len);
	free(ptr);
	return q;
}

EXPORT void *secure_realloc(void *ptr, size_t size)
{
	if (owned(ptr))
		return secarena_realloc(ptr, size);
	if (!ptr)
		return secure_malloc(size);
	if (size && secure_now()) {
		size_t old = malloc_usable_size(ptr);

		return heap_to_arena(ptr, old, size, old);
	}
	return realloc(ptr, size);
}

EXPORT void *secure_realloc_clean(void *ptr, size_t old_len, size_t size)
{
	void *q;

	if (owned(ptr))
		return secarena_realloc(ptr, size);	/* the arena wipes what it frees */
	if (!ptr)
		return secure_malloc(size);
	if (size == 0) {
		wipe(ptr, old_len);
		free(ptr);
		return NULL;
	}
	if (secure_now())
		return heap_to_arena(ptr, old_len, size, old_len);
	q = malloc(size);
	if (!q)
		return NULL;
	memcpy(q, ptr, old_len < size ? old_len : size);
	wipe(ptr, old_len);
	free(ptr);
	return q;
}

EXPORT void flush_secure_arena(void)
{
	secarena_wipe_in_use();
}
