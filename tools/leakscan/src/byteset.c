// SPDX-License-Identifier: GPL-2.0
/* Open addressing with linear probing; the table doubles at half full. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "byteset.h"
#include "util.h"

/* FNV-1a: the keys are random or nearly so, any mixing will do. */
static size_t hash(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ^ (h >> 32);
}

static struct byteset_entry *find(const struct byteset *s,
				  const unsigned char *bytes, size_t len)
{
	size_t i;

	for (i = hash(bytes, len) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		struct byteset_entry *e = &s->slot[i];

		if (!e->bytes || (e->len == len && !memcmp(e->bytes, bytes, len)))
			return e;
	}
}

static void grow(struct byteset *s)
{
	struct byteset_entry *old = s->slot;
	size_t oldcap = s->cap, i;

	s->cap = s->cap ? s->cap * 2 : 64;
	s->slot = xcalloc(s->cap, sizeof(*s->slot));
	for (i = 0; i < oldcap; i++)
		if (old[i].bytes)
			*find(s, old[i].bytes, old[i].len) = old[i];
	free(old);
}

size_t byteset_add(struct byteset *s, const unsigned char *bytes, size_t len,
		   size_t value, int *added)
{
	struct byteset_entry *e;

	*added = 0;
	if (2 * (s->n + 1) > s->cap)
		grow(s);
	e = find(s, bytes, len);
	if (e->bytes)
		return e->value;
	e->bytes = xmalloc(len);
	memcpy(e->bytes, bytes, len);
	e->len = len;
	e->value = value;
	s->n++;
	*added = 1;
	return value;
}

void byteset_free(struct byteset *s)
{
	size_t i;

	for (i = 0; i < s->cap; i++)
		free_secret(s->slot[i].bytes, s->slot[i].len);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}
