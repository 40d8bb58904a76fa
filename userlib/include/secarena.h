/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsecarena: an allocator for secrets (private keys, session secrets).
 * Licence: LGPL-2.1-or-later, like every file of userlib/.
 *
 * Blocks come from arenas mapped by a backend: /dev/secarena (pinned,
 * guarded, unreadable from outside the process), memfd_secret(2) (out of the
 * kernel direct map) or mlock(2) (weakest). Block sizes are powers of two;
 * every block is cleansed when freed, so every block handed out reads as
 * zero. Misuse (double free, a pointer that is not a block start, a pointer
 * that secarena never handed out) prints a message on stderr and aborts.
 *
 * All functions are safe to call from any thread, except secarena_init*()
 * and secarena_done(), which must not race with any other call.
 * secarena_malloc(3) is the manual.
 */
#ifndef SECARENA_H
#define SECARENA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Backend: the low two bits of the flags. 0 = env SECARENA_BACKEND, else device. */
#define SECARENA_F_BACKEND_DEFAULT	0x0u
#define SECARENA_F_BACKEND_DEVICE	0x1u
#define SECARENA_F_BACKEND_MEMFD_SECRET	0x2u
#define SECARENA_F_BACKEND_MLOCK	0x3u
#define SECARENA_F_BACKEND_MASK		0x3u
/* If the chosen backend cannot map, try the weaker ones: device, memfd_secret, mlock. */
#define SECARENA_F_FALLBACK_BACKEND	(1u << 2)
/* Fail unless /dev/secarena maps (also: env SECARENA_REQUIRE=device). */
#define SECARENA_F_REQUIRE_DEVICE	(1u << 3)
/* When the arenas are full (or before init): serve from malloc(3), counted. */
#define SECARENA_F_HEAP_FALLBACK	(1u << 4)
/* What a fork() child gets of the arenas (see secarena_malloc(3), FORK). */
#define SECARENA_F_FORK_PRIVATE		(0u << 5)
#define SECARENA_F_FORK_NONE		(1u << 5)
#define SECARENA_F_FORK_SHARED		(2u << 5)
#define SECARENA_F_FORK_MASK		(3u << 5)
/* No per-thread caches: every call takes an arena lock. */
#define SECARENA_F_NO_THREAD_CACHE	(1u << 7)
/* Fail rather than run on pages that could not be locked in memory. */
#define SECARENA_F_REQUIRE_LOCKED	(1u << 8)
#define SECARENA_F_ALL			0x1ffu

/* Protection the arenas have (secarena_protection(), secarena_status). */
#define SECARENA_PROT_LOCKED		(1u << 0) /* pinned or locked: never swapped */
#define SECARENA_PROT_NODUMP		(1u << 1) /* left out of core dumps */
#define SECARENA_PROT_GUARDS		(1u << 2) /* faulting guard pages on both sides */
#define SECARENA_PROT_HIDDEN		(1u << 3) /* /proc/PID/mem, ptrace, process_vm_readv refused */
#define SECARENA_PROT_NO_DIRECT_MAP	(1u << 4) /* removed from the kernel's direct map */
#define SECARENA_PROT_KERNEL_WIPE	(1u << 5) /* the kernel zeroes the pages when they go */

/* Behaviour when no arena can serve an allocation, or before init. */
enum secarena_policy {
	SECARENA_POLICY_STRICT = 0,	/* NULL, errno ENOMEM (the default) */
	SECARENA_POLICY_HEAP_FALLBACK = 1, /* malloc(3), counted in stats.fallbacks */
};

struct secarena_options {
	size_t arena_size;	/* bytes per arena, rounded up to a power of two; 0: 1 MiB */
	size_t min_block;	/* smallest block, a power of two >= 16; 0: 16 */
	size_t max_arenas;	/* arenas mapped at most as they fill, 1..32; 0: 8 */
	unsigned int flags;	/* SECARENA_F_* */
};

struct secarena_status {
	const char *backend;	/* "device", "memfd_secret" or "mlock" */
	unsigned int protection; /* SECARENA_PROT_* */
	int lock_errno;		/* errno of a failed mlock(2), else 0 */
};

struct secarena_stats {
	size_t in_use;		/* bytes (actual sizes) in blocks held by callers */
	size_t arena_held;	/* bytes taken from the arenas: in_use + thread caches */
	size_t peak;		/* highest arena_held so far */
	size_t capacity;	/* data bytes of the arenas in service */
	size_t arenas;		/* arenas in service */
	size_t max_arenas;
	size_t failures;	/* allocations that returned NULL */
	size_t fallbacks;	/* allocations served by malloc(3) */
	size_t fallback_in_use;	/* of those, not yet freed */
};

/* 0 on success, -1 with errno (EINVAL, EBUSY, ENODEV, ENOMEM, EAGAIN, EPERM...). */
int secarena_init(size_t arena_size, size_t min_block, unsigned int flags);
int secarena_init_ex(const struct secarena_options *opt, struct secarena_status *status);
/* Wipes and unmaps every arena. Pointers into them are dangling afterwards. */
int secarena_done(void);
int secarena_initialized(void);

void *secarena_malloc(size_t size);
void *secarena_zalloc(size_t size);
void secarena_free(void *ptr);
void secarena_clear_free(void *ptr, size_t len);
void *secarena_realloc(void *ptr, size_t size);

/* 1 if ptr lies in the data area of an arena in service, else 0. */
int secarena_allocated(const void *ptr);
/*
 * 1 if ptr is secarena's to free: in any arena, in service or inherited
 * but not mapped (a FORK_NONE child's), or a counted fallback block.
 */
int secarena_owns(const void *ptr);
/* Usable bytes of the block ptr starts (aborts on a pointer secarena does not own). */
size_t secarena_actual_size(const void *ptr);
/* Same as stats.in_use. */
size_t secarena_used(void);
int secarena_stats(struct secarena_stats *stats);

/* NULL before init. */
const char *secarena_backend_name(void);
/* SECARENA_PROT_* that every arena in service has; 0 before init. */
unsigned int secarena_protection(void);
enum secarena_policy secarena_get_policy(void);
int secarena_set_policy(enum secarena_policy policy);

/* Wipes every block in use (the seed's flush_secure_arena()). */
void secarena_wipe_in_use(void);

#ifdef __cplusplus
}
#endif

#endif /* SECARENA_H */
