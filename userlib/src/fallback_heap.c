// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The set of live fallback blocks: open addressing over pointers, behind a
 * mutex. Falling back is the rare path, so the cost does not matter; being
 * exact does (an unknown pointer must abort, never reach free(3)).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "fallback_heap.h"
#include "wipe.h"

#define TOMBSTONE ((void *)1)

static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static void **slots;
static size_t capacity;		/* a power of two, or 0 */
static size_t live, used_slots;	/* used_slots counts tombstones too */
static size_t served;

static size_t slot_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static void **find_slot(const void *p, int *found)
{
	size_t mask = capacity - 1, i = slot_hash(p) & mask;
	void **first_free = NULL;

	for (;;) {
		void *s = slots[i];

		if (s == p) {
			*found = 1;
			return &slots[i];
		}
		if (s == NULL) {
			*found = 0;
			return first_free ? first_free : &slots[i];
		}
		if (s == TOMBSTONE && !first_free)
			first_free = &slots[i];
		i = (i + 1) & mask;
	}
}

static int set_grow(void)
{
	size_t old_cap = capacity, i;
	void **old = slots;

	capacity = old_cap ? old_cap * 2 : 64;
	slots = calloc(capacity, sizeof(*slots));
	if (!slots) {
		slots = old;
		capacity = old_cap;
		return -1;
	}
	used_slots = live;
	for (i = 0; i < old_cap; i++) {
		int found;

		if (old[i] && old[i] != TOMBSTONE)
			*find_slot(old[i], &found) = old[i];
	}
	free(old);
	return 0;
}

void *fallback_alloc(size_t size)
{
	void *p;
	int found;

	p = calloc(1, size ? size : 1);
	if (!p)
		return NULL;
	pthread_mutex_lock(&set_lock);
	if ((used_slots + 1) * 2 > capacity && set_grow() != 0) {
		pthread_mutex_unlock(&set_lock);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	{
		void **s = find_slot(p, &found);

		if (*s == NULL)
			used_slots++;
		*s = p;
	}
	live++;
	served++;
	pthread_mutex_unlock(&set_lock);
	return p;
}

int fallback_owns(const void *p)
{
	int found = 0;

	pthread_mutex_lock(&set_lock);
	if (capacity)
		find_slot(p, &found);
	pthread_mutex_unlock(&set_lock);
	return found;
}

size_t fallback_size(const void *p)
{
	return malloc_usable_size((void *)p);
}

void fallback_release(void *p)
{
	int found = 0;

	pthread_mutex_lock(&set_lock);
	if (capacity) {
		void **s = find_slot(p, &found);

		if (found) {
			*s = TOMBSTONE;
			live--;
		}
	}
	pthread_mutex_unlock(&set_lock);
	if (found) {
		wipe(p, malloc_usable_size(p));
		free(p);
	}
}

size_t fallback_count(void)
{
	size_t n;

	pthread_mutex_lock(&set_lock);
	n = served;
	pthread_mutex_unlock(&set_lock);
	return n;
}

size_t fallback_in_use(void)
{
	size_t n;

	pthread_mutex_lock(&set_lock);
	n = live;
	pthread_mutex_unlock(&set_lock);
	return n;
}

void fallback_lock(void)
{
	pthread_mutex_lock(&set_lock);
}

void fallback_unlock(void)
{
	pthread_mutex_unlock(&set_lock);
}
