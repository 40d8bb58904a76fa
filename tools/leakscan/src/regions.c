// SPDX-License-Identifier: GPL-2.0
/* Parse /proc/PID/maps and mark arena regions. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "regions.h"
#include "util.h"

static char *slurp_fd(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = xmalloc(cap + 1);
	ssize_t got;

	if (lseek(fd, 0, SEEK_SET) < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return NULL;
		}
		if (!got)
			break;
		n += got;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Arena backends name their mappings; the mlock backend needs --arena-range. */
static const char *arena_by_path(const char *path)
{
	if (!strncmp(path, "/dev/secarena", 13))
		return "secarena";
	if (!strcmp(path, "/secretmem (deleted)") || !strcmp(path, "[secretmem]"))
		return "secretmem";
	return NULL;
}

static const char *arena_by_range(uint64_t start, const struct range *ranges,
				  size_t nranges)
{
	size_t i;

	for (i = 0; i < nranges; i++)
		if (start >= ranges[i].start && start < ranges[i].end)
			return "range";
	return NULL;
}

static void add_region(struct regionlist *rl, const struct region *tmpl,
		       uint64_t start, uint64_t end)
{
	struct region *r;

	rl->r = xrealloc(rl->r, (rl->n + 1) * sizeof(*rl->r));
	r = &rl->r[rl->n++];
	*r = *tmpl;
	r->start = start;
	r->end = end;
	r->path = xstrdup(tmpl->path);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Cut [start, end) at every range boundary inside it. */
static void split_vma(struct regionlist *rl, struct region *tmpl,
		      const struct range *ranges, size_t nranges)
{
	uint64_t *cut = xmalloc((2 * nranges + 2) * sizeof(*cut));
	size_t n = 0, i;

	cut[n++] = tmpl->start;
	for (i = 0; i < nranges; i++) {
		if (ranges[i].start > tmpl->start && ranges[i].start < tmpl->end)
			cut[n++] = ranges[i].start;
		if (ranges[i].end > tmpl->start && ranges[i].end < tmpl->end)
			cut[n++] = ranges[i].end;
	}
	qsort(cut + 1, n - 1, sizeof(*cut), cmp_u64);
	cut[n++] = tmpl->end;
	for (i = 0; i + 1 < n; i++) {
		const char *why = tmpl->arena;

		if (cut[i] == cut[i + 1])
			continue;	/* two ranges sharing a boundary */
		if (!why)
			why = arena_by_range(cut[i], ranges, nranges);
		tmpl->arena = why;
		add_region(rl, tmpl, cut[i], cut[i + 1]);
		tmpl->arena = arena_by_path(tmpl->path);
	}
	free(cut);
}

static int parse_line(char *line, size_t vma, struct region *r)
{
	int pathpos = 0;

	memset(r, 0, sizeof(*r));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %*x %*s %*u%n",
		   &r->start, &r->end, r->perms, &pathpos) < 3 || !pathpos)
		return -1;
	r->path = line + pathpos;
	r->path += strspn(r->path, " ");
	r->arena = arena_by_path(r->path);
	r->vma = vma;
	return 0;
}

int regions_load(int maps_fd, const struct range *ranges, size_t nranges,
		 struct regionlist *rl)
{
	size_t len, vma = 0;
	char *text = slurp_fd(maps_fd, &len), *line, *save = NULL;
	struct region tmpl;

	memset(rl, 0, sizeof(*rl));
	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (parse_line(line, vma, &tmpl))
			continue;
		split_vma(rl, &tmpl, ranges, nranges);
		vma++;
	}
	free(text);
	return 0;
}

void regions_free(struct regionlist *rl)
{
	size_t i;

	for (i = 0; i < rl->n; i++) {
		free(rl->r[i].path);
		tallies_free(&rl->r[i].hits);
	}
	free(rl->r);
	memset(rl, 0, sizeof(*rl));
}

const char *region_problem(const struct region *r, char *buf, size_t len)
{
	switch (r->status) {
	case RS_NO_READ:
		return "not readable (no r perm)";
	case RS_SKIPPED:
		return "skipped (not read)";
	case RS_READ_ERROR:
		snprintf(buf, len, "read failed at %" PRIx64 ": %s", r->fail_addr,
			 r->err ? errno_name(r->err) : "EOF");
		return buf;
	default:
		return NULL;
	}
}
