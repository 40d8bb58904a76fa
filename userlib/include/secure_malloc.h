/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seed's API (the Akamai "secure arena" patch for OpenSSL), over
 * libsecarena. Sizes are size_t where the seed had int; errors are return
 * values and errno, never assert().
 *
 * secure_malloc() and friends take from the arena only while secure
 * allocation is started in the calling thread; otherwise they are malloc(3)
 * and friends. secure_free() and secure_realloc() route by who owns the
 * pointer, whichever thread calls them and whether started or not.
 * Start/stop nest: each start adds one, each stop takes one away, and the
 * thread allocates securely while the count is above zero.
 */
#ifndef SECURE_MALLOC_H
#define SECURE_MALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Map the arena (arena_size bytes, blocks of at least mem_min_unit bytes).
 * Backend: SECARENA_BACKEND, else the device, falling back to memfd_secret
 * and then mlock unless SECARENA_REQUIRE=device. overrun_bytes is accepted
 * for compatibility: page guards replace it. Returns 1 on success, 0 with
 * errno on failure (EBUSY if already initialised).
 */
int secure_malloc_init(size_t arena_size, size_t mem_min_unit, size_t overrun_bytes);

void *secure_malloc(size_t size);
void *secure_calloc(size_t nmemb, size_t size);
char *secure_strdup(const char *str);
void secure_free(void *ptr);
void *secure_realloc(void *ptr, size_t size);
/* Like secure_realloc, but the old block's first old_len bytes are wiped. */
void *secure_realloc_clean(void *ptr, size_t old_len, size_t size);

/* Return 1 if secure allocation was already on in this thread, else 0. */
int start_secure_allocation(void);
int stop_secure_allocation(void);

/* Wipe the contents of every block in use in the arena. */
void flush_secure_arena(void);

/* 1 once secure_malloc_init() (or secarena_init()) succeeded, else 0. */
int secure_allocation_support(void);

#ifdef __cplusplus
}
#endif

#endif /* SECURE_MALLOC_H */
