// SPDX-License-Identifier: GPL-2.0
/* Machine-readable report: every count, so tests can assert exact numbers. */
#include "json.h"
#include "report.h"
#include "util.h"

/* DER pieces the public key holds: never searched (see patterns.c). */
static uint64_t public_pieces(const struct pattern *p)
{
	uint64_t n = 0;
	size_t j;

	for (j = 0; p->public_piece && j < p->npieces; j++)
		n += p->public_piece[j];
	return n;
}

static const char *status_name(enum region_status st)
{
	switch (st) {
	case RS_OK:
		return "ok";
	case RS_NO_READ:
		return "no-r-perm";
	case RS_SKIPPED:
		return "skipped";
	default:
		return "read-error";
	}
}

static void counts(struct jw *w, const char *key, const struct pattern *p,
		   const struct tally *t, size_t found)
{
	jw_object(w, key);
	jw_u64(w, "whole", t->whole);
	jw_u64(w, "pieces_found", found);
	jw_u64(w, "pieces", p->npieces);
	jw_u64(w, "piece_hits", t->piece_hits);
	jw_end_object(w);
}

static void sums(struct jw *w, const char *key, const struct tallies *ts,
		 const struct patset *ps)
{
	struct sums s;

	tallies_sum(ts, ps, &s);
	jw_object(w, key);
	jw_u64(w, "whole", s.whole);
	jw_u64(w, "pieces", s.pieces);
	jw_u64(w, "pem", s.pem);
	jw_u64(w, "der", s.der);
	jw_u64(w, "tls", s.tls);
	jw_u64(w, "tlskeys", s.tlskeys);
	jw_u64(w, "secrets", s.secrets);
	jw_u64(w, "total", sums_total(&s));
	jw_end_object(w);
}

static void region_hits(struct jw *w, const struct region *r,
			const struct patset *ps)
{
	size_t i;

	jw_array(w, "hits");
	for (i = 0; r->hits.t && i < ps->n; i++) {
		if (!tally_any(&r->hits.t[i]))
			continue;
		jw_object(w, NULL);
		jw_str(w, "component", ps->pats[i].comp->name);
		jw_str(w, "form", ps->pats[i].comp->form);
		jw_str(w, "kind", kind_name(ps->pats[i].comp->kind));
		jw_u64(w, "whole", r->hits.t[i].whole);
		jw_u64(w, "pieces_found", tallies_found(&r->hits, ps, i));
		jw_u64(w, "pieces", ps->pats[i].npieces);
		jw_u64(w, "piece_hits", r->hits.t[i].piece_hits);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void region(struct jw *w, const struct region *r, const struct patset *ps)
{
	jw_object(w, NULL);
	jw_hex(w, "start", r->start);
	jw_hex(w, "end", r->end);
	jw_str(w, "perms", r->perms);
	jw_str(w, "path", r->path);
	jw_str(w, "arena", r->arena);
	jw_str(w, "status", status_name(r->status));
	jw_bool(w, "readable", r->status == RS_OK);
	if (r->status == RS_READ_ERROR) {
		jw_str(w, "errno", r->err ? errno_name(r->err) : "EOF");
		jw_hex(w, "fail_addr", r->fail_addr);
	}
	jw_u64(w, "bytes_read", r->bytes_read);
	region_hits(w, r, ps);
	jw_end_object(w);
}

static void components(struct jw *w, const struct pidscan *s,
		       const struct patset *ps)
{
	size_t i;

	jw_array(w, "components");
	for (i = 0; i < ps->n; i++) {
		const struct pattern *p = &ps->pats[i];

		jw_object(w, NULL);
		jw_str(w, "component", p->comp->name);
		jw_str(w, "form", p->comp->form);
		jw_str(w, "kind", kind_name(p->comp->kind));
		counts(w, "outside", p, &s->outside.t[i], tallies_found(&s->outside, ps, i));
		counts(w, "arena", p, &s->arena.t[i], tallies_found(&s->arena, ps, i));
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void pid(struct jw *w, const struct run *run, const struct pidscan *s)
{
	size_t i;

	jw_object(w, NULL);
	jw_u64(w, "pid", s->pid);
	jw_u64(w, "regions_total", s->rl.n);
	jw_u64(w, "bytes_read", s->bytes_read);
	jw_u64(w, "not_readable", s->unreadable);
	jw_u64(w, "read_errors", s->read_errors);
	jw_u64(w, "arena_regions", s->arena_regions);
	jw_u64(w, "arena_readable", s->arena_readable);
	sums(w, "outside", &s->outside, run->ps);
	sums(w, "arena", &s->arena, run->ps);
	components(w, s, run->ps);
	jw_array(w, "regions");
	for (i = 0; i < s->rl.n; i++) {
		const struct region *r = &s->rl.r[i];

		if (run->verbose || region_notable(r) || r->status != RS_OK)
			region(w, r, run->ps);
	}
	jw_end_array(w);
	jw_end_object(w);
}

/* The patterns of the key (key != 0), or of the other classes. */
static void patterns(struct jw *w, const struct run *run, int key)
{
	size_t i;

	jw_array(w, "patterns");
	for (i = 0; i < run->ps->n; i++) {
		const struct pattern *p = &run->ps->pats[i];

		if (comp_is_key(p->comp->kind) != key)
			continue;
		jw_object(w, NULL);
		jw_str(w, "component", p->comp->name);
		jw_str(w, "form", p->comp->form);
		jw_str(w, "kind", kind_name(p->comp->kind));
		jw_u64(w, "len", p->comp->len);
		jw_u64(w, "pieces", p->npieces);
		jw_u64(w, "public_pieces", public_pieces(p));
		jw_bool(w, "searchable", p->searchable);
		jw_end_object(w);
	}
	jw_end_array(w);
}

static void key(struct jw *w, const struct run *run)
{
	if (!run->keyfile) {
		jw_str(w, "key", NULL);
		return;
	}
	jw_object(w, "key");
	jw_str(w, "file", run->keyfile);
	jw_str(w, "type", run->ki->type);
	jw_u64(w, "bits", run->ki->bits);
	patterns(w, run, 1);
	jw_end_object(w);
}

static void secrets(struct jw *w, const struct run *run)
{
	const struct secrets *sec = run->sec;
	size_t i;

	jw_object(w, "secrets");
	jw_array(w, "keylogs");
	for (i = 0; i < sec->nfiles; i++) {
		const struct keylog_file *kf = &sec->files[i];

		jw_object(w, NULL);
		jw_str(w, "file", kf->path);
		jw_u64(w, "lines", kf->lines);
		jw_u64(w, "entries", kf->entries);
		jw_u64(w, "new", kf->added);
		jw_u64(w, "duplicates", kf->dups);
		jw_u64(w, "ignored", kf->ignored);
		jw_end_object(w);
	}
	jw_end_array(w);
	jw_u64(w, "connections", sec->nconns);
	jw_u64(w, "named", sec->named);
	jw_u64(w, "named_duplicates", sec->named_dups);
	patterns(w, run, 0);
	jw_end_object(w);
}

void report_json(const struct run *run, FILE *f)
{
	struct jw w;
	size_t i;

	jw_init(&w, f);
	jw_object(&w, NULL);
	key(&w, run);
	secrets(&w, run);
	jw_array(&w, "arena_ranges");
	for (i = 0; i < run->nranges; i++) {
		jw_object(&w, NULL);
		jw_hex(&w, "start", run->ranges[i].start);
		jw_hex(&w, "end", run->ranges[i].end);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_array(&w, "pids");
	for (i = 0; i < run->nscans; i++)
		pid(&w, run, &run->scans[i]);
	jw_end_array(&w);
	jw_object(&w, "total");
	jw_u64(&w, "outside", run_total(run, 0));
	jw_u64(&w, "arena", run_total(run, 1));
	jw_end_object(&w);
	jw_end_object(&w);
}
