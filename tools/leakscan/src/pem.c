// SPDX-License-Identifier: GPL-2.0
/*
 * Split a PEM private key into the lines that a leaked copy of the file would
 * show in memory, and the DER that a leaked decode would show.
 */
#include <stdlib.h>
#include <string.h>

#include "pem.h"
#include "util.h"

static int starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static int line_has(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= len; i++)
		if (!memcmp(s + i, needle, n))
			return 1;
	return 0;
}

/* Length of the line at s without "\n" or "\r\n"; *next is the next line. */
static size_t line_at(const char *s, const char *end, const char **next)
{
	const char *nl = memchr(s, '\n', end - s);
	size_t n;

	*next = nl ? nl + 1 : end;
	n = (nl ? nl : end) - s;
	if (n && s[n - 1] == '\r')
		n--;
	return n;
}

static void add_line(struct pem_block *pb, const char *s, size_t n)
{
	pb->lines = xrealloc(pb->lines, (pb->nlines + 1) * sizeof(*pb->lines));
	pb->line_lens = xrealloc(pb->line_lens,
				 (pb->nlines + 1) * sizeof(*pb->line_lens));
	pb->lines[pb->nlines] = s;
	pb->line_lens[pb->nlines] = n;
	pb->nlines++;
}

static int decode_body(struct pem_block *pb)
{
	size_t total = 0, i, n;
	char *joined;
	int ret;

	for (i = 0; i < pb->nlines; i++)
		total += pb->line_lens[i];
	joined = xmalloc(total + 1);
	for (i = 0, n = 0; i < pb->nlines; i++) {
		memcpy(joined + n, pb->lines[i], pb->line_lens[i]);
		n += pb->line_lens[i];
	}
	pb->der = xmalloc(total * 3 / 4 + 3);
	ret = b64_decode(joined, total, pb->der, &pb->der_len);
	free_secret(joined, total + 1);
	return ret;
}

/* Collect body lines after the BEGIN line; legacy "Key: value" headers are skipped. */
static int collect_body(struct pem_block *pb, const char *p, const char *end)
{
	const char *next;
	size_t n;

	for (; p < end; p = next) {
		n = line_at(p, end, &next);
		if (starts_with(p, n, "-----END ")) {
			pb->block_len = next - pb->begin;
			return 0;
		}
		if (n == 0 || memchr(p, ':', n))
			continue;
		add_line(pb, p, n);
	}
	return -1;
}

int pem_find_private(const char *text, size_t len, struct pem_block *pb,
		     const char **why)
{
	const char *p = text, *end = text + len, *next;
	size_t n;

	memset(pb, 0, sizeof(*pb));
	for (; p < end; p = next) {
		n = line_at(p, end, &next);
		if (starts_with(p, n, "-----BEGIN ") &&
		    line_has(p, n, "PRIVATE KEY-----"))
			break;
	}
	if (p >= end) {
		*why = "no -----BEGIN ... PRIVATE KEY----- line";
		return -1;
	}
	pb->begin = p;
	if (collect_body(pb, next, end) || !pb->nlines) {
		*why = "PEM block has no body or no -----END line";
		return -1;
	}
	if (decode_body(pb)) {
		*why = "PEM body is not valid base64";
		return -1;
	}
	return 0;
}

void pem_block_free(struct pem_block *pb)
{
	free(pb->lines);
	free(pb->line_lens);
	free_secret(pb->der, pb->der_len);
	memset(pb, 0, sizeof(*pb));
}
