// SPDX-License-Identifier: GPL-2.0
/*
 * NSS key log files, as SSLKEYLOGFILE and "openssl s_client -keylogfile"
 * write them: "LABEL CLIENT_RANDOM SECRET" per line, both values in hex.
 * Every secret becomes a component "tls:LABEL#N", N numbering the
 * connections by the first appearance of their client_random. A TLS 1.3
 * traffic secret also brings the record keys and IV derived from it.
 *
 * A line that does not have this shape is an error: a scan that silently
 * searched for less than the file holds would prove nothing. A well-formed
 * line with a label this table lacks is skipped with a warning, so that a
 * key log from a newer library still works for the labels known here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secrets.h"
#include "util.h"

#define LABEL_MAX	64
#define ID_MAX		32
#define SECRET_MAX	48
#define LINE_BUF	1024

struct label {
	const char *label;	/* as the key log writes it */
	const char *name;	/* in component names, if not the label */
	size_t id_len;		/* bytes of the second field */
	size_t len1, len2;	/* allowed lengths of the secret */
	int traffic;		/* TLS 1.3 traffic secret: has record keys */
};

/*
 * CLIENT_RANDOM carries the TLS 1.2 master secret. An RSA line carries the
 * premaster secret of RSA key exchange; its second field is the first 8
 * bytes of the encrypted premaster, not a client_random, so RSA lines are
 * numbered on their own. TLS 1.3 secrets are as long as the suite's hash.
 */
static const struct label labels[] = {
	{ "CLIENT_RANDOM", "MASTER_SECRET", 32, 48, 48, 0 },
	{ "RSA", "RSA_PREMASTER", 8, 48, 48, 0 },
	{ "CLIENT_EARLY_TRAFFIC_SECRET", NULL, 32, 32, 48, 1 },
	{ "CLIENT_HANDSHAKE_TRAFFIC_SECRET", NULL, 32, 32, 48, 1 },
	{ "SERVER_HANDSHAKE_TRAFFIC_SECRET", NULL, 32, 32, 48, 1 },
	{ "CLIENT_TRAFFIC_SECRET_0", NULL, 32, 32, 48, 1 },
	{ "SERVER_TRAFFIC_SECRET_0", NULL, 32, 32, 48, 1 },
	{ "EARLY_EXPORTER_SECRET", NULL, 32, 32, 48, 0 },
	{ "EXPORTER_SECRET", NULL, 32, 32, 48, 0 },
};

struct field {
	const char *s;
	size_t len;
};

struct reader {
	struct secrets *sec;
	struct keylog_file *kf;
	size_t lineno;
};

static int bad(const struct reader *rd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const struct reader *rd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "leakscan: %s:%zu: malformed key log line: ",
		rd->kf->path, rd->lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
	       c == '\f';
}

/* Store up to max fields of line; returns how many there are in all. */
static size_t split(const char *line, size_t len, struct field *f, size_t max)
{
	size_t i = 0, n = 0, start;

	for (;;) {
		while (i < len && blank(line[i]))
			i++;
		if (i == len)
			return n;
		start = i;
		while (i < len && !blank(line[i]))
			i++;
		if (n < max) {
			f[n].s = line + start;
			f[n].len = i - start;
		}
		n++;
	}
}

static int is_hex(const struct field *f)
{
	size_t i;

	if (!f->len || f->len % 2)
		return 0;
	for (i = 0; i < f->len; i++)
		if (!strchr("0123456789abcdefABCDEF", f->s[i]) || !f->s[i])
			return 0;
	return 1;
}

static int is_label(const struct field *f)
{
	size_t i;

	if (f->len > LABEL_MAX)
		return 0;
	for (i = 0; i < f->len; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", f->s[i]) ||
		    !f->s[i])
			return 0;
	return 1;
}

static const struct label *find_label(const struct field *f)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(labels); i++)
		if (strlen(labels[i].label) == f->len &&
		    !memcmp(labels[i].label, f->s, f->len))
			return &labels[i];
	return NULL;
}

static void unknown(struct reader *rd, const struct field *label)
{
	if (!rd->kf->ignored++)
		fprintf(stderr, "leakscan: %s:%zu: unknown key log label %.*s: line ignored\n",
			rd->kf->path, rd->lineno, (int)label->len, label->s);
}

/* The connection's number: by first appearance of its client_random. */
static size_t conn_number(struct secrets *sec, const struct label *l,
			  const unsigned char *id)
{
	size_t *count = l->id_len == 32 ? &sec->nconns : &sec->nrsa;
	size_t num;
	int added;

	num = byteset_add(&sec->conns, id, l->id_len, *count + 1, &added);
	*count += added;
	return num;
}

static int add_entry(struct reader *rd, const struct label *l,
		     const unsigned char *id, const unsigned char *secret,
		     size_t len)
{
	char name[sizeof(rd->sec->ki->comps->name)];

	snprintf(name, sizeof(name), "tls:%s#%zu", l->name ? l->name : l->label,
		 conn_number(rd->sec, l, id));
	rd->kf->entries++;
	if (secret_add(rd->sec, name, "raw", COMP_TLS, secret, len, NULL))
		rd->kf->added++;
	else
		rd->kf->dups++;
	/* after a duplicate too: its keys may not be listed yet */
	return l->traffic ? tls13_add_record_keys(rd->sec, name, secret, len) : 0;
}

static int do_line(struct reader *rd, const char *line, size_t len)
{
	unsigned char id[ID_MAX], secret[SECRET_MAX];
	const struct label *l;
	struct field f[3];
	size_t n = split(line, len, f, 3), slen;
	int ret;

	if (!n || f[0].s[0] == '#')
		return 0;
	if (n != 3)
		return bad(rd, "want LABEL CLIENT_RANDOM SECRET, found %zu field%s",
			   n, n == 1 ? "" : "s");
	if (!is_label(&f[0]))
		return bad(rd, "label is not made of A-Z, 0-9 and _");
	if (!is_hex(&f[1]) || !is_hex(&f[2]))
		return bad(rd, "%s is not hex (an even number of digits 0-9 a-f)",
			   is_hex(&f[1]) ? "secret" : "client_random");
	l = find_label(&f[0]);
	if (!l) {
		unknown(rd, &f[0]);
		return 0;
	}
	slen = f[2].len / 2;
	if (f[1].len / 2 != l->id_len)
		return bad(rd, "%s: %s is %zu bytes, want %zu", l->label,
			   l->id_len == 32 ? "client_random" : "encrypted premaster prefix",
			   f[1].len / 2, l->id_len);
	if (slen != l->len1 && slen != l->len2 && l->len1 == l->len2)
		return bad(rd, "%s: secret is %zu bytes, want %zu", l->label,
			   slen, l->len1);
	if (slen != l->len1 && slen != l->len2)
		return bad(rd, "%s: secret is %zu bytes, want %zu or %zu",
			   l->label, slen, l->len1, l->len2);
	hex_decode(f[1].s, f[1].len, id);
	hex_decode(f[2].s, f[2].len, secret);
	ret = add_entry(rd, l, id, secret, slen);
	explicit_bzero(secret, sizeof(secret));
	return ret;
}

static struct keylog_file *new_file(struct secrets *sec, const char *path)
{
	struct keylog_file *kf;

	sec->files = xrealloc(sec->files, (sec->nfiles + 1) * sizeof(*sec->files));
	kf = &sec->files[sec->nfiles++];
	memset(kf, 0, sizeof(*kf));
	kf->path = path;
	return kf;
}

/*
 * stdio reads into a buffer of ours and getline into one of ours, so both
 * can be wiped: the file is as secret as the traffic it decrypts.
 */
static int read_lines(struct reader *rd, FILE *f)
{
	size_t bufsize = 1 << 16, cap = LINE_BUF;
	char *iobuf = xmalloc(bufsize), *line = xmalloc(cap);
	ssize_t got;
	int ret = 0;

	setvbuf(f, iobuf, _IOFBF, bufsize);
	while (!ret && (got = getline(&line, &cap, f)) >= 0) {
		rd->lineno++;
		rd->kf->lines++;
		ret = do_line(rd, line, got);
	}
	if (!ret && ferror(f)) {
		fprintf(stderr, "leakscan: cannot read key log %s: %s\n",
			rd->kf->path, strerror(errno));
		ret = -1;
	}
	fclose(f);
	free_secret(line, cap);
	free_secret(iobuf, bufsize);
	return ret;
}

int keylog_load(struct secrets *sec, const char *path)
{
	struct reader rd = { .sec = sec };
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "leakscan: cannot open key log %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	rd.kf = new_file(sec, path);
	if (read_lines(&rd, f))
		return -1;
	if (rd.kf->ignored > 1)
		fprintf(stderr, "leakscan: %s: %zu lines with unknown labels ignored\n",
			path, rd.kf->ignored);
	if (!rd.kf->entries) {
		fprintf(stderr, "leakscan: %s: no TLS secrets in the key log\n", path);
		return -1;
	}
	return 0;
}
