/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where an arena's pages come from: one mapping of guard + data + guard. */
#ifndef SECARENA_BACKEND_H
#define SECARENA_BACKEND_H

#include <stddef.h>

/* Fork policies, as the device numbers them. */
enum fork_policy {
	FORK_PRIVATE = 0,	/* the child gets its own copy */
	FORK_NONE = 1,		/* the child gets nothing */
	FORK_SHARED = 2,	/* the child maps the same pages */
};

/* What a fork child may do with an arena it inherited. */
enum arena_life {
	ARENA_LIVE,		/* its own: allocate and free as usual */
	ARENA_SHARED_WITH_PARENT, /* readable and writable, never reused or wiped */
	ARENA_GONE,		/* not mapped in the child */
};

struct backend_region {
	void *map;		/* the whole mapping, guards included */
	size_t map_len;
	unsigned char *data;	/* the data area inside it */
	size_t data_len;
	unsigned int protection; /* SECARENA_PROT_* reached */
	int lock_errno;		/* mlock(2) failure, or 0 */
};

struct backend_ops {
	const char *name;
	/* 0, or an errno value; fills r. */
	int (*map)(struct backend_region *r, size_t data_len, enum fork_policy policy);
	void (*unmap)(struct backend_region *r);
	/*
	 * In a fork child: make the region follow the policy, say what it is
	 * now. For ARENA_GONE the caller then puts a PROT_NONE reservation over
	 * the whole range, whatever is left there.
	 */
	enum arena_life (*fork_child)(struct backend_region *r, enum fork_policy policy);
};

extern const struct backend_ops backend_device;
extern const struct backend_ops backend_memfd_secret;
extern const struct backend_ops backend_mlock;

#endif
