// SPDX-License-Identifier: GPL-2.0
/*
 * leak_target: a process holding exactly the key copies a recipe asks for.
 *
 *   leak_target COMPFILE TOKEN...
 *
 * COMPFILE is the output of "leakscan --dump-components KEYFILE". The target
 * never parses the key itself: libcrypto would leave copies of its own in
 * freed heap memory and the expected counts could not be exact. For the same
 * reason it does not link libcrypto at all.
 *
 * TOKEN is "none" or [ZONE/]COMP:SPEC:COUNT, placing COUNT copies (COMP may
 * itself hold colons, as in tls:MASTER_SECRET#1; SPEC and COUNT are the last
 * two fields):
 *   ZONE  heap (default, one malloc per copy), arena (one mmap'd area, printed
 *         as "arena START-END" for --arena-range), noread (one mmap'd area
 *         made PROT_NONE once filled, printed as "noread START-END")
 *         secret (like arena, but memfd_secret memory: printed as "secret
 *         START-END"; exit status 3 if the kernel has no memfd_secret)
 *         or straddle (copy i placed across the end of page i of a fresh
 *         mapping, so some copies cross the scanner's 1 MiB chunk boundaries)
 *   SPEC  a form (be, le, raw, clamped, key16, ...), a number N (PEM line
 *         N), pieceN (16-byte piece N of the component's first form) or
 *         FORM.pieceN
 * or "junk:MIB": MIB MiB of pseudo-random bytes, to time the scanner.
 * Then it prints "ready" and sleeps until killed.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PIECE_LEN 16
#define ZONE_SIZE (1UL << 20)

/*
 * Every copy is written between two GUARD bytes, and expect.awk counts over
 * GUARD + copy + GUARD. Without them the bytes next to a copy are whatever
 * the allocator left there: the byte before a malloc'd block is the top of
 * its size field, 0x00, which is also the sign pad DER puts in front of p,
 * so with some keys one more DER piece matched in memory than in the copy.
 */
#define GUARD 0x5a

struct zone {
	unsigned char *base;
	size_t used;
};

static struct zone arena, noread, secret;

static void fail(const char *what, const char *arg)
{
	fprintf(stderr, "leak_target: %s: %s\n", what, arg);
	exit(2);
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* Decode the hex of "name form hex" into a fresh buffer. */
static unsigned char *decode(const char *hex, size_t *len)
{
	size_t n = strcspn(hex, "\n") / 2, i;
	unsigned char *out = malloc(n ? n : 1);

	if (!out)
		fail("out of memory", "decode");
	for (i = 0; i < n; i++)
		out[i] = hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]);
	*len = n;
	return out;
}

/* Find "name form" (any form if form is NULL) in the component file. */
static unsigned char *lookup(const char *file, const char *name,
			     const char *form, size_t *len)
{
	FILE *f = fopen(file, "r");
	unsigned char *out = NULL;
	char *line = NULL, *sp1, *sp2;
	size_t cap = 0;

	if (!f)
		fail("cannot open", file);
	while (!out && getline(&line, &cap, f) > 0) {
		sp1 = strchr(line, ' ');
		sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		if (!sp2)
			continue;
		*sp1 = *sp2 = '\0';
		if (!strcmp(line, name) && (!form || !strcmp(sp1 + 1, form)))
			out = decode(sp2 + 1, len);
	}
	explicit_bzero(line, cap);
	free(line);
	fclose(f);
	if (!out)
		fail("component not in file", name);
	return out;
}

/* memfd_secret pages are unmapped from the kernel's direct map. */
static void *secret_map(void)
{
	int fd = syscall(SYS_memfd_secret, 0);
	void *p;

	if (fd < 0) {
		perror("leak_target: memfd_secret");
		exit(3);
	}
	if (ftruncate(fd, ZONE_SIZE))
		fail("ftruncate", "memfd_secret");
	p = mmap(NULL, ZONE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("leak_target: mmap memfd_secret");
		exit(3);
	}
	close(fd);
	return p;
}

static void *zone_take(struct zone *z, size_t len)
{
	void *p;

	if (!z->base && z == &secret) {
		z->base = secret_map();
	} else if (!z->base) {
		z->base = mmap(NULL, ZONE_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (z->base == MAP_FAILED)
			fail("mmap", "zone");
	}
	/* 64-byte spacing keeps copies apart, as separate allocations would be */
	if (z->used + len + 64 > ZONE_SIZE)
		fail("zone full", "copies");
	p = z->base + z->used;
	z->used += (len + 64) & ~63UL;
	return p;
}

/* GUARD, the copy, GUARD at dst: len + 2 bytes */
static void put_guarded(unsigned char *dst, const unsigned char *bytes,
			size_t len)
{
	dst[0] = GUARD;
	memcpy(dst + 1, bytes, len);
	dst[len + 1] = GUARD;
}

static void straddle(const unsigned char *bytes, size_t len, long n)
{
	long page = sysconf(_SC_PAGESIZE), i;
	unsigned char *base;

	if ((size_t)page < len + 2)
		fail("straddle", "copy longer than a page");
	base = mmap(NULL, (n + 1) * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		fail("mmap", "straddle");
	for (i = 0; i < n; i++)
		put_guarded(base + (i + 1) * page - len / 2 - 1, bytes, len);
}

/* xorshift64: cheap bytes that exercise the scanner's filter like real data */
static void junk(long mib)
{
	size_t len = (size_t)mib << 20, i;
	uint64_t x = 0x9e3779b97f4a7c15ULL, *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		fail("mmap", "junk");
	for (i = 0; i < len / sizeof(*p); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x;
	}
}

static void place(const char *zone, const unsigned char *bytes, size_t len)
{
	unsigned char *dst;

	if (!strcmp(zone, "heap"))
		dst = malloc(len + 2);	/* deliberately never freed */
	else if (!strcmp(zone, "arena"))
		dst = zone_take(&arena, len + 2);
	else if (!strcmp(zone, "noread"))
		dst = zone_take(&noread, len + 2);
	else if (!strcmp(zone, "secret"))
		dst = zone_take(&secret, len + 2);
	else
		fail("unknown zone", zone);
	if (!dst)
		fail("out of memory", "copy");
	put_guarded(dst, bytes, len);
}

/* Split SPEC into the form to look up and a piece number (-1: whole). */
static const char *parse_spec(const char *spec, char *form, size_t size,
			      long *piece)
{
	const char *dot = strstr(spec, "piece");

	*piece = -1;
	if (isdigit((unsigned char)spec[0])) {
		snprintf(form, size, "line%s", spec);
		return form;
	}
	if (!dot) {
		snprintf(form, size, "%s", spec);
		return form;
	}
	*piece = strtol(dot + 5, NULL, 10);
	if (dot == spec)
		return NULL;	/* the first form listed */
	snprintf(form, size, "%.*s", (int)(dot - spec - 1), spec);
	return form;
}

static void do_token(const char *file, char *tok)
{
	char *slash = strchr(tok, '/'), *zone = "heap", *name, *spec, *count;
	unsigned char *bytes;
	char formbuf[32];
	const char *form;
	size_t len, full, off;
	long piece, n, i;

	if (slash) {
		*slash = '\0';
		zone = tok;
		tok = slash + 1;
	}
	name = tok;
	count = strrchr(tok, ':');
	if (count)
		*count++ = '\0';
	spec = count ? strrchr(tok, ':') : NULL;
	if (spec)
		*spec++ = '\0';
	if (!spec || !*name || !*spec || !*count)
		fail("bad token (want [ZONE/]COMP:SPEC:COUNT)", tok);
	form = parse_spec(spec, formbuf, sizeof(formbuf), &piece);
	bytes = lookup(file, name, form, &len);
	full = len;
	off = 0;
	if (piece >= 0) {
		if (len < PIECE_LEN || (size_t)piece * PIECE_LEN >= len)
			fail("no such piece", spec);
		off = (size_t)piece * PIECE_LEN;
		if (off + PIECE_LEN > len)
			off = len - PIECE_LEN;
		len = PIECE_LEN;
	}
	n = strtol(count, NULL, 10);
	if (!strcmp(zone, "straddle"))
		straddle(bytes + off, len, n);
	else
		for (i = 0; i < n; i++)
			place(zone, bytes + off, len);
	explicit_bzero(bytes, full);
	free(bytes);
}

static void announce(const char *what, const struct zone *z)
{
	if (z->base)
		printf("%s %lx-%lx\n", what, (unsigned long)z->base,
		       (unsigned long)z->base + ZONE_SIZE);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 3)
		fail("usage", "leak_target COMPFILE TOKEN...");
	for (i = 2; i < argc; i++)
		if (!strncmp(argv[i], "junk:", 5))
			junk(strtol(argv[i] + 5, NULL, 10));
		else if (strcmp(argv[i], "none"))
			do_token(argv[1], argv[i]);
	if (noread.base && mprotect(noread.base, ZONE_SIZE, PROT_NONE))
		fail("mprotect", "noread");
	announce("arena", &arena);
	announce("noread", &noread);
	announce("secret", &secret);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
