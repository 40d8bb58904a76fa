/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The regions of one process as /proc/PID/maps lists them, cut at the
 * boundaries of any --arena-range so each region is wholly arena or not.
 */
#ifndef LEAKSCAN_REGIONS_H
#define LEAKSCAN_REGIONS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "patterns.h"

enum region_status {
	RS_OK,
	RS_NO_READ,	/* no r in the maps permissions: not read */
	RS_SKIPPED,	/* [vvar]: reading it is pointless or harmful */
	RS_READ_ERROR,	/* pread failed: err holds errno, 0 for EOF */
};

struct region {
	uint64_t start, end;
	char perms[5];
	char *path;		/* "" for anonymous memory */
	const char *arena;	/* why it is an arena, or NULL */
	size_t vma;		/* the maps line it came from */
	enum region_status status;
	int err;
	uint64_t fail_addr;
	uint64_t bytes_read;
	struct tallies hits;	/* hits.t is NULL until the first hit */
};

struct range {
	uint64_t start, end;	/* [start, end) */
};

struct regionlist {
	struct region *r;
	size_t n;
};

/* -1 with errno set if the maps file cannot be read. */
int regions_load(int maps_fd, const struct range *ranges, size_t nranges,
		 struct regionlist *rl);
void regions_free(struct regionlist *rl);

/* Text for a region that was not (fully) read, or NULL if it was read. */
const char *region_problem(const struct region *r, char *buf, size_t len);

#endif
