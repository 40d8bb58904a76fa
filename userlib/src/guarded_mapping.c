// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The PROT_NONE pages each side of a mapping make a linear overrun out of it
 * (or into it from a neighbour) fault instead of reaching other memory.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guarded_mapping.h"

size_t page_size(void)
{
	static size_t cached;

	if (!cached)
		cached = (size_t)sysconf(_SC_PAGESIZE);
	return cached;
}

void *guarded_map(size_t len, int shared, int reserve_only)
{
	size_t guard = page_size();
	unsigned char *whole;

	whole = mmap(NULL, len + 2 * guard, PROT_NONE,
		     (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (whole == MAP_FAILED)
		return NULL;
	if (!reserve_only && mprotect(whole + guard, len, PROT_READ | PROT_WRITE) != 0) {
		int err = errno;

		munmap(whole, len + 2 * guard);
		errno = err;
		return NULL;
	}
	return whole + guard;
}

void guarded_unmap(void *inner, size_t len)
{
	size_t guard = page_size();

	munmap((unsigned char *)inner - guard, len + 2 * guard);
}
