/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A set of byte strings, each with a number: which secrets are already
 * listed, and which connection a client_random belongs to. Keys are copied
 * and wiped when the set is freed, since some of them are secrets.
 */
#ifndef LEAKSCAN_BYTESET_H
#define LEAKSCAN_BYTESET_H

#include <stddef.h>

struct byteset_entry {
	unsigned char *bytes;	/* NULL: empty slot */
	size_t len;
	size_t value;
};

struct byteset {
	struct byteset_entry *slot;
	size_t cap;		/* a power of two, or 0 before the first add */
	size_t n;
};

/*
 * The value stored with bytes. If there is none, store value with a copy of
 * bytes and set *added.
 */
size_t byteset_add(struct byteset *s, const unsigned char *bytes, size_t len,
		   size_t value, int *added);
void byteset_free(struct byteset *s);

#endif
