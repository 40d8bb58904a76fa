/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Blocks served by malloc(3) when the policy allows it. Each is recorded, so
 * a free() can tell one from a pointer secarena never gave out, and each is
 * wiped whole before free(3).
 */
#ifndef SECARENA_FALLBACK_HEAP_H
#define SECARENA_FALLBACK_HEAP_H

#include <stddef.h>

void *fallback_alloc(size_t size);	/* zero-filled, counted; NULL with ENOMEM */
int fallback_owns(const void *p);
size_t fallback_size(const void *p);
void fallback_release(void *p);		/* wipe, forget, free */
size_t fallback_count(void);		/* allocations ever served */
size_t fallback_in_use(void);
void fallback_lock(void);
void fallback_unlock(void);

#endif
