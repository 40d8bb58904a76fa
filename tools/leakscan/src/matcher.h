/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One pass over memory for all patterns at once: every 16-byte window is
 * looked up in a hash table of the pieces and of each whole pattern's first
 * 16 bytes, behind a small bit filter so that most windows cost one probe.
 */
#ifndef LEAKSCAN_MATCHER_H
#define LEAKSCAN_MATCHER_H

#include <stddef.h>
#include <stdint.h>

#include "patterns.h"

#define PIECE_WHOLE UINT32_MAX

struct matcher;

/* piece is PIECE_WHOLE for a verified whole match. */
typedef void (*hit_fn)(void *ctx, uint32_t pat, uint32_t piece, uint64_t addr);

struct matcher *matcher_build(const struct patset *ps);
void matcher_free(struct matcher *m);

/*
 * Look at the windows starting at buf[0 .. starts); a match may extend up to
 * buf[avail]. base is the address of buf[0] in the scanned process.
 */
void matcher_scan(const struct matcher *m, const unsigned char *buf,
		  size_t starts, size_t avail, uint64_t base, hit_fn fn,
		  void *ctx);

#endif
