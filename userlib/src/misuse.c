// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Report a misuse or a corrupted structure and abort. No malloc and no stdio
 * locks: the heap or the allocator itself may be what is broken.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "misuse.h"

void misuse_abort(const char *fmt, ...)
{
	static const char prefix[] = "libsecarena: ";
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, prefix, sizeof(prefix) - 1) < 0 ||
	    write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nothing else to do: abort anyway. */
	}
	abort();
}
