/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal streaming JSON writer: enough for leakscan's report, no deps. */
#ifndef LEAKSCAN_JSON_H
#define LEAKSCAN_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct jw {
	FILE *f;
	int depth;
	int count[JSON_MAX_DEPTH];	/* members written at each level */
};

void jw_init(struct jw *w, FILE *f);
/* key is NULL for array elements and the top-level value. */
void jw_object(struct jw *w, const char *key);
void jw_array(struct jw *w, const char *key);
void jw_end_object(struct jw *w);
void jw_end_array(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *val);	/* NULL: null */
void jw_u64(struct jw *w, const char *key, uint64_t val);
void jw_bool(struct jw *w, const char *key, int val);
void jw_hex(struct jw *w, const char *key, uint64_t val);	/* "0x..." */

#endif
