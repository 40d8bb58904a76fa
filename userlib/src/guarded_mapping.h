/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Anonymous mappings with PROT_NONE guard pages on both sides. */
#ifndef SECARENA_GUARDED_MAPPING_H
#define SECARENA_GUARDED_MAPPING_H

#include <stddef.h>

size_t page_size(void);
static inline size_t round_up_pages(size_t n)
{
	size_t p = page_size();

	return (n + p - 1) & ~(p - 1);
}
/*
 * Reserve guard + len + guard as PROT_NONE (len a page multiple, one guard
 * page per side) and return the inner address; NULL with errno on failure.
 * shared: MAP_SHARED instead of MAP_PRIVATE. The inner part is made
 * read-write unless reserve_only.
 */
void *guarded_map(size_t len, int shared, int reserve_only);
void guarded_unmap(void *inner, size_t len);

#endif
