// SPDX-License-Identifier: GPL-2.0
/*
 * Memory is read in 1 MiB chunks plus an overlap of the longest pattern less
 * one byte. Only windows starting inside the chunk proper are examined, so a
 * match across a chunk boundary is seen once, from the chunk it starts in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"
#include "util.h"

#define CHUNK (1UL << 20)

struct vma_ctx {
	const struct patset *ps;
	struct region *r;	/* the regions of one maps line */
	size_t n, cur;
};

static int open_proc(pid_t pid, const char *what)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		fprintf(stderr, "leakscan: no such pid %d\n", (int)pid);
	else if (fd < 0)
		fprintf(stderr, "leakscan: cannot open %s: %s\n", path,
			strerror(errno));
	return fd;
}

int scan_open(struct pidscan *s, pid_t pid)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->mem_fd = -1;
	s->maps_fd = open_proc(pid, "maps");
	if (s->maps_fd < 0)
		return -1;
	s->mem_fd = open_proc(pid, "mem");
	return s->mem_fd < 0 ? -1 : 0;
}

/*
 * A file (a core dump, say) is scanned as one region: a maps line made up
 * for it in a memfd lets the rest of the scan run unchanged. Reported as
 * pid 0.
 */
int scan_open_file(struct pidscan *s, const char *path)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->maps_fd = -1;
	s->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->mem_fd < 0 || fstat(s->mem_fd, &st)) {
		fprintf(stderr, "leakscan: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		fprintf(stderr, "leakscan: %s: not a regular file with data\n", path);
		return -1;
	}
	s->maps_fd = memfd_create("leakscan-maps", MFD_CLOEXEC);
	if (s->maps_fd < 0 ||
	    dprintf(s->maps_fd, "0-%llx r--p 00000000 00:00 0 %s\n",
		    (unsigned long long)st.st_size, path) < 0 ||
	    lseek(s->maps_fd, 0, SEEK_SET) != 0) {
		fprintf(stderr, "leakscan: memfd for %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Hits arrive in address order, so the current region is a moving cursor. */
static void on_hit(void *arg, uint32_t pat, uint32_t piece, uint64_t addr)
{
	struct vma_ctx *c = arg;
	struct region *r;

	while (c->cur + 1 < c->n && addr >= c->r[c->cur].end)
		c->cur++;
	r = &c->r[c->cur];
	if (!r->hits.t)
		tallies_init(&r->hits, c->ps);
	if (piece == PIECE_WHOLE)
		r->hits.t[pat].whole++;
	else
		tallies_piece(&r->hits, c->ps, pat, piece);
}

/* Like pread, but on a short read *err says why (0: end of file). */
static size_t pread_full(int fd, unsigned char *buf, size_t len, uint64_t off,
			 int *err)
{
	size_t done = 0;
	ssize_t got;

	*err = 0;
	while (done < len) {
		got = pread(fd, buf + done, len - done, (off_t)(off + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			*err = got < 0 ? errno : 0;
			break;
		}
		done += got;
	}
	return done;
}

/* Read [start, end) and match; returns the address reading stopped at. */
static uint64_t read_vma(struct pidscan *s, const struct matcher *m,
			 struct vma_ctx *c, unsigned char *buf, size_t overlap,
			 int *err)
{
	uint64_t off = c->r[0].start, end = c->r[c->n - 1].end;
	size_t want, got, starts;

	for (; off < end; off += CHUNK) {
		want = end - off < CHUNK + overlap ? end - off : CHUNK + overlap;
		got = pread_full(s->mem_fd, buf, want, off, err);
		/* after a short read there is no next chunk to take over */
		starts = got < want ? got : (got < CHUNK ? got : CHUNK);
		matcher_scan(m, buf, starts, got, off, on_hit, c);
		s->bytes_read += starts;
		if (got < want)
			return off + got;
	}
	return end;
}

static void set_status(struct region *r, uint64_t upto, int err)
{
	if (upto >= r->end) {
		r->bytes_read = r->end - r->start;
		return;
	}
	r->bytes_read = upto > r->start ? upto - r->start : 0;
	r->status = RS_READ_ERROR;
	r->err = err;
	r->fail_addr = upto > r->start ? upto : r->start;
}

static void scan_vma(struct pidscan *s, const struct patset *ps,
		     const struct matcher *m, struct region *r, size_t n,
		     unsigned char *buf, size_t overlap)
{
	struct vma_ctx c = { .ps = ps, .r = r, .n = n };
	uint64_t upto;
	size_t i;
	int err = 0;

	if (r->perms[0] != 'r' || !strncmp(r->path, "[vvar", 5)) {
		for (i = 0; i < n; i++)
			r[i].status = r->perms[0] != 'r' ? RS_NO_READ : RS_SKIPPED;
		return;
	}
	upto = read_vma(s, m, &c, buf, overlap, &err);
	for (i = 0; i < n; i++)
		set_status(&r[i], upto, err);
}

static void account(struct pidscan *s, const struct patset *ps)
{
	size_t i;

	tallies_init(&s->outside, ps);
	tallies_init(&s->arena, ps);
	for (i = 0; i < s->rl.n; i++) {
		struct region *r = &s->rl.r[i];

		if (r->arena) {
			s->arena_regions++;
			s->arena_readable += r->status == RS_OK;
		}
		s->unreadable += r->status == RS_NO_READ;
		s->read_errors += r->status == RS_READ_ERROR;
		tallies_merge(r->arena ? &s->arena : &s->outside, &r->hits, ps);
	}
}

int scan_run(struct pidscan *s, const struct patset *ps,
	     const struct matcher *m, const struct range *ranges,
	     size_t nranges)
{
	size_t overlap = ps->maxlen > PIECE_LEN ? ps->maxlen - 1 : PIECE_LEN - 1;
	unsigned char *buf;
	size_t i, j;

	if (regions_load(s->maps_fd, ranges, nranges, &s->rl)) {
		fprintf(stderr, "leakscan: cannot read /proc/%d/maps: %s\n",
			(int)s->pid, strerror(errno));
		return -1;
	}
	buf = xmalloc(CHUNK + overlap);
	for (i = 0; i < s->rl.n; i = j) {
		for (j = i + 1; j < s->rl.n && s->rl.r[j].vma == s->rl.r[i].vma; j++)
			;
		scan_vma(s, ps, m, &s->rl.r[i], j - i, buf, overlap);
	}
	/* the buffer held the target's memory, which may hold the key */
	free_secret(buf, CHUNK + overlap);
	account(s, ps);
	return 0;
}

void scan_close(struct pidscan *s)
{
	if (s->maps_fd >= 0)
		close(s->maps_fd);
	if (s->mem_fd >= 0)
		close(s->mem_fd);
	regions_free(&s->rl);
	tallies_free(&s->outside);
	tallies_free(&s->arena);
}

