/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Zeroing that the compiler may not drop, even right before a free. */
#ifndef SECARENA_WIPE_H
#define SECARENA_WIPE_H

#include <string.h>

static inline void wipe(void *p, size_t n)
{
	memset(p, 0, n);
	/* The asm "reads" p and all memory, so the stores above must happen. */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

#endif
