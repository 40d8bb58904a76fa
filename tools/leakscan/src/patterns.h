/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Search patterns: each component form is one pattern, matched whole and, for
 * binary forms, as consecutive 16-byte pieces so partial copies show up too.
 */
#ifndef LEAKSCAN_PATTERNS_H
#define LEAKSCAN_PATTERNS_H

#include <stddef.h>
#include <stdint.h>

#include "key.h"

#define PIECE_LEN 16

struct pattern {
	const struct component *comp;
	size_t npieces;		/* 0: whole-only (PEM lines) */
	int searchable;		/* shorter than a piece: cannot be indexed */
	size_t word_off;	/* first word of this pattern's piece bitmap */
	unsigned char *public_piece; /* DER: 1 for pieces the public key holds */
};

struct patset {
	struct pattern *pats;
	size_t n;
	size_t maxlen;		/* longest searchable pattern */
	size_t words;		/* bitmap words for all pieces */
};

void patset_build(struct patset *ps, const struct keyinfo *ki);
void patset_free(struct patset *ps);

/* Offset of piece i: the last piece is the final 16 bytes, maybe overlapping. */
size_t piece_offset(const struct pattern *p, size_t i);

/* Per-pattern hit counts for one region, or summed over many. */
struct tally {
	uint64_t whole;
	uint64_t piece_hits;
};

struct tallies {
	struct tally *t;	/* one per pattern */
	uint64_t *seen;		/* which pieces were found at least once */
};

/* Hit totals by category: these make up the per-pid summary line. */
struct sums {
	uint64_t whole;		/* whole hits of key components */
	uint64_t pieces;	/* their piece hits, including those of the DER */
	uint64_t pem;		/* PEM line hits */
	uint64_t der;		/* whole DER hits */
	uint64_t tls;		/* whole + piece hits of key log secrets */
	uint64_t tlskeys;	/* whole + piece hits of derived record keys */
	uint64_t secrets;	/* whole + piece hits of --secret secrets */
};

void tallies_init(struct tallies *ts, const struct patset *ps);
void tallies_free(struct tallies *ts);
void tallies_merge(struct tallies *dst, const struct tallies *src,
		   const struct patset *ps);
void tallies_piece(struct tallies *ts, const struct patset *ps, uint32_t pat,
		   uint32_t piece);
size_t tallies_found(const struct tallies *ts, const struct patset *ps,
		     uint32_t pat);
void tallies_sum(const struct tallies *ts, const struct patset *ps,
		 struct sums *s);
int tally_any(const struct tally *t);
uint64_t sums_total(const struct sums *s);

#endif
