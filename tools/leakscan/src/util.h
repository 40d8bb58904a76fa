/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by every leakscan module. */
#ifndef LEAKSCAN_UTIL_H
#define LEAKSCAN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Exit codes of the tool: see README.md. */
#define EXIT_CLEAN	0
#define EXIT_LEAK	1
#define EXIT_ERROR	2

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* "EIO" rather than a localised sentence: stable for tests and JSON. */
const char *errno_name(int err);

/* Free a buffer that held key bytes without leaving them behind. */
void free_secret(void *p, size_t n);

#endif
