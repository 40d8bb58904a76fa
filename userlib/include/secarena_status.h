/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The status page: what libsecarena tells an administrator about a process,
 * for secarena-stat(8) and the like. No secret is on it: sizes and counts.
 *
 * At its first successful init the library maps one page, MAP_PRIVATE, of a
 * memfd named SECARENA_STATUS_NAME, so that the process's maps file shows
 * it as "/memfd:secarena-status (deleted)", and keeps it up to date when an
 * arena is mapped, when the arenas are released and when an allocation is
 * refused. A tool that may read the process's memory (root, or ptrace
 * access) reads it through /proc/PID/mem at the mapping's start. Being
 * private, a fork child's page is its own copy from then on.
 *
 * The fields are 64-bit little-endian words written with relaxed atomic
 * stores: a reader may see one update half done, never a torn word.
 * version changes when a field changes meaning; fields are only appended,
 * and size says how many bytes are valid.
 */
#ifndef SECARENA_STATUS_H
#define SECARENA_STATUS_H

#include <stdint.h>

#define SECARENA_STATUS_NAME	"secarena-status"
#define SECARENA_STATUS_MAGIC	"SECARENA"	/* 8 bytes, no NUL */
#define SECARENA_STATUS_VERSION	1

struct secarena_status_page {
	char magic[8];
	uint32_t version;
	uint32_t size;			/* bytes of this structure that are valid */
	uint64_t arena_size;		/* data bytes per arena: the largest block */
	uint64_t max_arenas;		/* arenas the library may map */
	uint64_t arenas;		/* arenas in service; 0 after secarena_done() */
	uint64_t capacity;		/* data bytes of those arenas */
	uint64_t refused;		/* allocations refused since the first init */
	uint64_t last_refused_size;	/* bytes the latest of them asked for */
	uint64_t held_at_last_refusal;	/* bytes out of the arenas at that moment */
	char backend[16];		/* "device", "memfd_secret", "mlock"; NUL-padded */
};

#endif
