/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The arenas in service (arena_set.c): taking blocks from them, growing by
 * one more arena when all are full, and the locks fork() holds. Below the
 * thread cache and the API, above the arena (arena_of() is in arena.h).
 */
#ifndef SECARENA_ARENA_SET_H
#define SECARENA_ARENA_SET_H

#include <stddef.h>

#include "backend.h"

struct arena;

/*
 * Up to want blocks of one order from one arena (growing if all are full),
 * from the given buddy slice of an arena while any has room there (see
 * buddy_alloc()), else from any slice.
 */
struct arena *arenas_take(unsigned int order, void **out, size_t want, size_t *got,
			  size_t *home, int state, int slice);
int arenas_add_first(const struct backend_ops *ops, int *err);
void arenas_destroy_all(void);
void arenas_lock_all(void);
void arenas_unlock_all(void);

#endif
