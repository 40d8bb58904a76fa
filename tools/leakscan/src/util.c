// SPDX-License-Identifier: GPL-2.0
/* Allocation wrappers and error helpers: a scanner has no use for OOM recovery. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("leakscan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_ERROR);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die("out of memory (%zu x %zu bytes)", nmemb, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

const char *errno_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "EUNKNOWN";
}

void free_secret(void *p, size_t n)
{
	if (!p)
		return;
	explicit_bzero(p, n);
	free(p);
}
