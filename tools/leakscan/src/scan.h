/* SPDX-License-Identifier: GPL-2.0 */
/* Scan one process: read each region through /proc/PID/mem and match. */
#ifndef LEAKSCAN_SCAN_H
#define LEAKSCAN_SCAN_H

#include <sys/types.h>

#include "matcher.h"
#include "regions.h"

struct pidscan {
	pid_t pid;
	int maps_fd, mem_fd;
	struct regionlist rl;
	struct tallies outside, arena;	/* summed over regions */
	size_t arena_regions, arena_readable;
	size_t unreadable, read_errors;
	uint64_t bytes_read;
};

/* Open /proc/PID/{maps,mem}; -1 after a message on stderr. */
int scan_open(struct pidscan *s, pid_t pid);
/* A regular file instead of a process (--file); -1 after a message. */
int scan_open_file(struct pidscan *s, const char *path);
/* -1 after a message if the maps cannot be read. */
int scan_run(struct pidscan *s, const struct patset *ps,
	     const struct matcher *m, const struct range *ranges,
	     size_t nranges);
void scan_close(struct pidscan *s);

#endif
