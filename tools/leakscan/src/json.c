// SPDX-License-Identifier: GPL-2.0
/* JSON writer; strings are escaped per RFC 8259, output is one line per value. */
#include <inttypes.h>

#include "json.h"
#include "util.h"

void jw_init(struct jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->count[0] = 0;
}

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);	/* UTF-8 passes through as is */
	}
	fputc('"', f);
}

/* Separator, indentation and key for the next member. */
static void member(struct jw *w, const char *key)
{
	if (w->count[w->depth]++)
		fputc(',', w->f);
	if (w->depth)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	if (key) {
		put_string(w->f, key);
		fputs(": ", w->f);
	}
}

static void open_level(struct jw *w, const char *key, char c)
{
	member(w, key);
	fputc(c, w->f);
	if (++w->depth >= JSON_MAX_DEPTH)
		die("internal error: JSON nesting too deep");
	w->count[w->depth] = 0;
}

static void close_level(struct jw *w, char c)
{
	int had = w->count[w->depth];

	w->depth--;
	if (had)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	fputc(c, w->f);
	if (!w->depth)
		fputc('\n', w->f);
}

void jw_object(struct jw *w, const char *key)
{
	open_level(w, key, '{');
}

void jw_array(struct jw *w, const char *key)
{
	open_level(w, key, '[');
}

void jw_end_object(struct jw *w)
{
	close_level(w, '}');
}

void jw_end_array(struct jw *w)
{
	close_level(w, ']');
}

void jw_str(struct jw *w, const char *key, const char *val)
{
	member(w, key);
	if (val)
		put_string(w->f, val);
	else
		fputs("null", w->f);
}

void jw_u64(struct jw *w, const char *key, uint64_t val)
{
	member(w, key);
	fprintf(w->f, "%" PRIu64, val);
}

void jw_bool(struct jw *w, const char *key, int val)
{
	member(w, key);
	fputs(val ? "true" : "false", w->f);
}

void jw_hex(struct jw *w, const char *key, uint64_t val)
{
	member(w, key);
	fprintf(w->f, "\"0x%" PRIx64 "\"", val);
}
