// SPDX-License-Identifier: GPL-2.0
/* Hash index of 16-byte windows; see matcher.h for why it is built this way. */
#include <stdlib.h>
#include <string.h>

#include "matcher.h"
#include "util.h"

#define FILTER_BITS 18		/* 32 KiB: stays in L1/L2 while scanning */

struct entry {
	uint64_t k0, k1;	/* the 16 key bytes */
	uint32_t pat;
	uint32_t piece;		/* PIECE_WHOLE: first bytes of the whole */
	uint32_t next;		/* next entry with the same key, +1; 0 ends */
};

struct matcher {
	const struct patset *ps;
	struct entry *ent;
	size_t nent;
	uint32_t *slot;		/* first entry of a key, +1; 0 is empty */
	size_t slot_mask;
	uint64_t *filter;
};

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline size_t filter_index(uint64_t k0)
{
	return (k0 * 0x9e3779b97f4a7c15ULL) >> (64 - FILTER_BITS);
}

static inline size_t slot_hash(uint64_t k0, uint64_t k1)
{
	uint64_t h = (k0 ^ (k1 * 0xc2b2ae3d27d4eb4fULL)) * 0x165667b19e3779f9ULL;

	return h ^ (h >> 29);
}

/* Entries with the same key chain from one slot, so a window probes once. */
static void insert(struct matcher *m, const unsigned char *key, uint32_t pat,
		   uint32_t piece)
{
	struct entry *e = &m->ent[m->nent];
	size_t i, f;

	e->k0 = load64(key);
	e->k1 = load64(key + 8);
	e->pat = pat;
	e->piece = piece;
	for (i = slot_hash(e->k0, e->k1) & m->slot_mask;; i = (i + 1) & m->slot_mask) {
		struct entry *head;

		if (!m->slot[i]) {
			m->slot[i] = m->nent + 1;
			break;
		}
		head = &m->ent[m->slot[i] - 1];
		if (head->k0 == e->k0 && head->k1 == e->k1) {
			e->next = head->next;
			head->next = m->nent + 1;
			break;
		}
	}
	f = filter_index(e->k0);
	m->filter[f / 64] |= 1ULL << (f % 64);
	m->nent++;
}

static size_t count_entries(const struct patset *ps)
{
	size_t i, n = 0;

	for (i = 0; i < ps->n; i++)
		if (ps->pats[i].searchable)
			n += 1 + ps->pats[i].npieces;
	return n;
}

struct matcher *matcher_build(const struct patset *ps)
{
	struct matcher *m = xcalloc(1, sizeof(*m));
	size_t n = count_entries(ps), slots = 16, i, j;

	while (slots < 2 * n)
		slots *= 2;
	m->ps = ps;
	m->ent = xcalloc(n, sizeof(*m->ent));
	m->slot = xcalloc(slots, sizeof(*m->slot));
	m->slot_mask = slots - 1;
	m->filter = xcalloc((1 << FILTER_BITS) / 64, sizeof(*m->filter));
	for (i = 0; i < ps->n; i++) {
		const struct pattern *p = &ps->pats[i];

		if (!p->searchable)
			continue;
		insert(m, p->comp->bytes, i, PIECE_WHOLE);
		for (j = 0; j < p->npieces; j++)
			if (!p->public_piece || !p->public_piece[j])
				insert(m, p->comp->bytes + piece_offset(p, j), i, j);
	}
	return m;
}

void matcher_free(struct matcher *m)
{
	if (!m)
		return;
	/* the entries hold key bytes */
	explicit_bzero(m->ent, m->nent * sizeof(*m->ent));
	free(m->ent);
	free(m->slot);
	free(m->filter);
	free(m);
}

static const struct entry *lookup(const struct matcher *m, uint64_t k0,
				  uint64_t k1)
{
	size_t i;

	for (i = slot_hash(k0, k1) & m->slot_mask; m->slot[i];
	     i = (i + 1) & m->slot_mask) {
		const struct entry *e = &m->ent[m->slot[i] - 1];

		if (e->k0 == k0 && e->k1 == k1)
			return e;
	}
	return NULL;
}

static void report(const struct matcher *m, const struct entry *e,
		   const unsigned char *at, size_t room, uint64_t addr,
		   hit_fn fn, void *ctx)
{
	for (;;) {
		const struct component *c = m->ps->pats[e->pat].comp;

		if (e->piece != PIECE_WHOLE)
			fn(ctx, e->pat, e->piece, addr);
		else if (c->len <= room && !memcmp(at, c->bytes, c->len))
			fn(ctx, e->pat, PIECE_WHOLE, addr);
		if (!e->next)
			return;
		e = &m->ent[e->next - 1];
	}
}

void matcher_scan(const struct matcher *m, const unsigned char *buf,
		  size_t starts, size_t avail, uint64_t base, hit_fn fn,
		  void *ctx)
{
	const uint64_t *filter = m->filter;
	size_t i;

	if (avail < PIECE_LEN)
		return;
	if (starts > avail - PIECE_LEN + 1)
		starts = avail - PIECE_LEN + 1;
	for (i = 0; i < starts; i++) {
		uint64_t k0 = load64(buf + i);
		size_t f = filter_index(k0);
		const struct entry *e;

		if (!(filter[f / 64] & (1ULL << (f % 64))))
			continue;
		e = lookup(m, k0, load64(buf + i + 8));
		if (e)
			report(m, e, buf + i, avail - i, base + i, fn, ctx);
	}
}
