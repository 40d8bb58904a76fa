// SPDX-License-Identifier: GPL-2.0
/* Patterns derived from the key components, and their hit bookkeeping. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "patterns.h"
#include "util.h"

/*
 * The private key's DER carries the public key too (n and e, or the EC
 * point), and so does every certificate in memory: a piece of the DER that
 * the public key's encoding also holds is no leak. Nor is one inside a value
 * derived from the public key alone (struct keyinfo's pub_derived).
 */
static void mark_public_pieces(struct pattern *p, const struct keyinfo *ki)
{
	const unsigned char *piece;
	size_t j;

	p->public_piece = xcalloc(p->npieces, 1);
	for (j = 0; j < p->npieces; j++) {
		piece = p->comp->bytes + piece_offset(p, j);
		p->public_piece[j] =
			(ki->spki_len &&
			 memmem(ki->spki, ki->spki_len, piece, PIECE_LEN)) ||
			(ki->pub_derived_len &&
			 memmem(ki->pub_derived, ki->pub_derived_len, piece, PIECE_LEN));
	}
}

void patset_build(struct patset *ps, const struct keyinfo *ki)
{
	size_t i;

	memset(ps, 0, sizeof(*ps));
	ps->pats = xcalloc(ki->ncomps, sizeof(*ps->pats));
	ps->n = ki->ncomps;
	for (i = 0; i < ki->ncomps; i++) {
		struct pattern *p = &ps->pats[i];
		const struct component *c = &ki->comps[i];

		p->comp = c;
		p->searchable = c->len >= PIECE_LEN;
		if (!p->searchable)
			continue;
		/*
		 * A 16-byte piece of a PEM line is text, and one of a vector
		 * of small coefficients a few bits of entropy: neither says
		 * anything when found.
		 */
		if (c->kind != COMP_PEM && c->kind != COMP_WORDS)
			p->npieces = (c->len + PIECE_LEN - 1) / PIECE_LEN;
		p->word_off = ps->words;
		ps->words += (p->npieces + 63) / 64;
		if (c->kind == COMP_DER &&
		    (ki->spki_len >= PIECE_LEN || ki->pub_derived_len >= PIECE_LEN))
			mark_public_pieces(p, ki);
		if (c->len > ps->maxlen)
			ps->maxlen = c->len;
	}
}

void patset_free(struct patset *ps)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		free(ps->pats[i].public_piece);
	free(ps->pats);
	memset(ps, 0, sizeof(*ps));
}

size_t piece_offset(const struct pattern *p, size_t i)
{
	size_t off = i * PIECE_LEN;

	if (off + PIECE_LEN > p->comp->len)
		off = p->comp->len - PIECE_LEN;
	return off;
}

void tallies_init(struct tallies *ts, const struct patset *ps)
{
	ts->t = xcalloc(ps->n, sizeof(*ts->t));
	ts->seen = xcalloc(ps->words, sizeof(*ts->seen));
}

void tallies_free(struct tallies *ts)
{
	free(ts->t);
	free(ts->seen);
	ts->t = NULL;
	ts->seen = NULL;
}

void tallies_merge(struct tallies *dst, const struct tallies *src,
		   const struct patset *ps)
{
	size_t i;

	if (!src->t)
		return;
	for (i = 0; i < ps->n; i++) {
		dst->t[i].whole += src->t[i].whole;
		dst->t[i].piece_hits += src->t[i].piece_hits;
	}
	for (i = 0; i < ps->words; i++)
		dst->seen[i] |= src->seen[i];
}

void tallies_piece(struct tallies *ts, const struct patset *ps, uint32_t pat,
		   uint32_t piece)
{
	uint64_t *w = &ts->seen[ps->pats[pat].word_off + piece / 64];

	ts->t[pat].piece_hits++;
	*w |= 1ULL << (piece % 64);
}

size_t tallies_found(const struct tallies *ts, const struct patset *ps,
		     uint32_t pat)
{
	const struct pattern *p = &ps->pats[pat];
	size_t i, n = 0;

	if (!ts->t)
		return 0;
	for (i = 0; i < (p->npieces + 63) / 64; i++)
		n += __builtin_popcountll(ts->seen[p->word_off + i]);
	return n;
}

void tallies_sum(const struct tallies *ts, const struct patset *ps,
		 struct sums *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!ts->t)
		return;
	for (i = 0; i < ps->n; i++) {
		const struct tally *t = &ts->t[i];

		switch (ps->pats[i].comp->kind) {
		case COMP_PEM:
			s->pem += t->whole;
			break;
		case COMP_DER:
			s->der += t->whole;
			break;
		case COMP_TLS:
			s->tls += t->whole + t->piece_hits;
			continue;
		case COMP_TLSKEY:
			s->tlskeys += t->whole + t->piece_hits;
			continue;
		case COMP_SECRET:
			s->secrets += t->whole + t->piece_hits;
			continue;
		default:
			s->whole += t->whole;
		}
		s->pieces += t->piece_hits;
	}
}

int tally_any(const struct tally *t)
{
	return t->whole || t->piece_hits;
}

uint64_t sums_total(const struct sums *s)
{
	return s->whole + s->pieces + s->pem + s->der + s->tls + s->tlskeys +
	       s->secrets;
}
