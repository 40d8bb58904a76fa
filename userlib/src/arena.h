/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One arena: a backend mapping, the buddy over it, its lock and its metadata. */
#ifndef SECARENA_ARENA_H
#define SECARENA_ARENA_H

#include <pthread.h>
#include <stdint.h>

#include "backend.h"
#include "buddy.h"

/*
 * The struct and the buddy's block map live together in one anonymous
 * mapping of their own, with guard pages, away from the data area and from
 * the malloc heap: an overrun of a secret block hits a guard page of the
 * data mapping before it can reach them.
 */
struct arena {
	pthread_mutex_t lock;		/* guards buddy (map entries of held blocks excepted) */
	struct buddy buddy;
	struct backend_region region;
	const struct backend_ops *backend;
	enum arena_life life;		/* ARENA_LIVE except in a fork child */
	size_t meta_len;		/* this mapping, without its guards */
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

/* Up to want blocks of one order, under the lock; marked state. Returns how many. */
size_t arena_take(struct arena *a, unsigned int order, void **out, size_t want,
		  enum block_state state);
/* Give back zero-filled blocks of one order, under the lock. */
void arena_give_back(struct arena *a, void *const *blocks, size_t n, unsigned int order);

#endif
