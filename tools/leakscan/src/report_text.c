// SPDX-License-Identifier: GPL-2.0
/* Human-readable report: one line per finding, then per-pid and overall sums. */
#include <inttypes.h>

#include "report.h"

static void put_counts(FILE *f, const struct pattern *p, const struct tally *t,
		       size_t found)
{
	fprintf(f, "whole=%" PRIu64, t->whole);
	if (p->npieces)
		fprintf(f, " pieces=%zu/%zu (hits %" PRIu64 ")", found,
			p->npieces, t->piece_hits);
}

static void region_head(FILE *f, pid_t pid, const struct region *r)
{
	fprintf(f, "%d %" PRIx64 "-%" PRIx64 " %s %s", (int)pid, r->start,
		r->end, r->perms, *r->path ? r->path : "[anon]");
	if (r->arena)
		fprintf(f, " ARENA(%s)", r->arena);
	fputs(": ", f);
}

static void region_hits(const struct run *run, pid_t pid, const struct region *r,
			FILE *f)
{
	size_t i;

	for (i = 0; r->hits.t && i < run->ps->n; i++) {
		const struct pattern *p = &run->ps->pats[i];

		if (!tally_any(&r->hits.t[i]))
			continue;
		region_head(f, pid, r);
		fprintf(f, "%s/%s ", p->comp->name, p->comp->form);
		put_counts(f, p, &r->hits.t[i], tallies_found(&r->hits, run->ps, i));
		fputc('\n', f);
	}
}

static void region_line(const struct run *run, pid_t pid, const struct region *r,
			FILE *f)
{
	char buf[96];
	const char *problem = region_problem(r, buf, sizeof(buf));

	if (!run->verbose && !region_notable(r))
		return;
	region_hits(run, pid, r, f);
	if (r->arena) {
		region_head(f, pid, r);
		fprintf(f, "arena %s\n", problem ? problem : "readable");
	} else if (problem) {
		region_head(f, pid, r);
		fprintf(f, "%s\n", problem);
	} else if (run->verbose && !r->hits.t) {
		region_head(f, pid, r);
		fprintf(f, "no hits (%" PRIu64 " bytes)\n", r->bytes_read);
	}
}

static void pid_components(const struct run *run, const struct pidscan *s,
			   FILE *f)
{
	size_t i;

	for (i = 0; i < run->ps->n; i++) {
		const struct pattern *p = &run->ps->pats[i];

		if (!tally_any(&s->outside.t[i]) && !tally_any(&s->arena.t[i]))
			continue;
		fprintf(f, "leakscan: pid %d: %s/%s outside: ", (int)s->pid,
			p->comp->name, p->comp->form);
		put_counts(f, p, &s->outside.t[i], tallies_found(&s->outside, run->ps, i));
		fputs("; arena: ", f);
		put_counts(f, p, &s->arena.t[i], tallies_found(&s->arena, run->ps, i));
		fputc('\n', f);
	}
}

static void put_sums(FILE *f, const struct sums *s)
{
	fprintf(f, "whole=%" PRIu64 " pieces=%" PRIu64 " pem=%" PRIu64
		" der=%" PRIu64 " tls=%" PRIu64 " tlskeys=%" PRIu64
		" secrets=%" PRIu64, s->whole, s->pieces, s->pem, s->der,
		s->tls, s->tlskeys, s->secrets);
}

static void pid_summary(const struct run *run, const struct pidscan *s, FILE *f)
{
	struct sums out, in;

	tallies_sum(&s->outside, run->ps, &out);
	tallies_sum(&s->arena, run->ps, &in);
	pid_components(run, s, f);
	fprintf(f, "leakscan: pid %d: %zu regions, %" PRIu64 " bytes read, %zu not readable (no r perm), %zu read errors\n",
		(int)s->pid, s->rl.n, s->bytes_read, s->unreadable, s->read_errors);
	fprintf(f, "leakscan: pid %d: inside-arena: ", (int)s->pid);
	put_sums(f, &in);
	fprintf(f, "\nleakscan: pid %d: outside-arena: ", (int)s->pid);
	put_sums(f, &out);
	fprintf(f, "; arena regions=%zu readable=%zu\n", s->arena_regions,
		s->arena_readable);
}

/*
 * Patterns of the key (key != 0) or of the other classes; *skipped counts
 * those too short to search, which --verbose lists.
 */
static size_t count_patterns(const struct run *run, int key, size_t *skipped,
			     FILE *f)
{
	size_t i, n = 0;

	*skipped = 0;
	for (i = 0; i < run->ps->n; i++) {
		const struct pattern *p = &run->ps->pats[i];

		if (comp_is_key(p->comp->kind) != key)
			continue;
		n++;
		if (p->searchable)
			continue;
		(*skipped)++;
		if (run->verbose)
			fprintf(f, "leakscan: %s/%s is %zu bytes, too short to search\n",
				p->comp->name, p->comp->form, p->comp->len);
	}
	return n;
}

static size_t count_kind(const struct run *run, enum comp_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < run->ps->n; i++)
		n += run->ps->pats[i].comp->kind == kind;
	return n;
}

static void key_line(const struct run *run, FILE *f)
{
	size_t n, skipped;

	if (!run->keyfile)
		return;
	n = count_patterns(run, 1, &skipped, f);
	fprintf(f, "leakscan: key %s: %s %d bits, %zu patterns (%zu too short to search)\n",
		run->keyfile, run->ki->type, run->ki->bits, n, skipped);
}

static void secrets_lines(const struct run *run, FILE *f)
{
	const struct secrets *sec = run->sec;
	size_t i, n, skipped;

	for (i = 0; i < sec->nfiles; i++) {
		const struct keylog_file *kf = &sec->files[i];

		fprintf(f, "leakscan: keylog %s: %zu lines, %zu secrets (%zu new, %zu already listed), %zu unknown-label lines ignored\n",
			kf->path, kf->lines, kf->entries, kf->added, kf->dups,
			kf->ignored);
	}
	n = count_patterns(run, 0, &skipped, f);
	if (!n)
		return;
	fprintf(f, "leakscan: secrets: %zu from key logs (%zu connection%s), %zu derived record keys and IVs, %zu named: %zu patterns (%zu too short to search)\n",
		count_kind(run, COMP_TLS), sec->nconns,
		sec->nconns == 1 ? "" : "s", count_kind(run, COMP_TLSKEY),
		count_kind(run, COMP_SECRET), n, skipped);
}

void report_text(const struct run *run, FILE *f)
{
	size_t i, j;

	key_line(run, f);
	secrets_lines(run, f);
	for (i = 0; i < run->nscans; i++) {
		const struct pidscan *s = &run->scans[i];

		for (j = 0; j < s->rl.n; j++)
			region_line(run, s->pid, &s->rl.r[j], f);
		pid_summary(run, s, f);
	}
	fprintf(f, "leakscan: total arena hits=%" PRIu64 "\n", run_total(run, 1));
	fprintf(f, "leakscan: total outside-arena hits=%" PRIu64 "\n",
		run_total(run, 0));
}
