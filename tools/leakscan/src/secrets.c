// SPDX-License-Identifier: GPL-2.0
/*
 * The list of secrets besides the key, kept free of duplicates: a byte
 * string listed twice would count every hit twice. Also --secret NAME=HEX.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secrets.h"
#include "util.h"

void secrets_init(struct secrets *sec, struct keyinfo *ki)
{
	memset(sec, 0, sizeof(*sec));
	sec->ki = ki;
}

void secrets_done(struct secrets *sec)
{
	byteset_free(&sec->seen);
	byteset_free(&sec->conns);
}

void secrets_free(struct secrets *sec)
{
	secrets_done(sec);
	free(sec->files);
	memset(sec, 0, sizeof(*sec));
}

int secret_add(struct secrets *sec, const char *name, const char *form,
	       enum comp_kind kind, const unsigned char *bytes, size_t len,
	       const struct component **first)
{
	size_t idx = sec->ki->ncomps;
	int added;

	idx = byteset_add(&sec->seen, bytes, len, idx, &added);
	if (!added) {
		if (first)
			*first = &sec->ki->comps[idx];
		return 0;
	}
	key_add(sec->ki, name, form, kind, bytes, len);
	return 1;
}

static int valid_name(const char *s, size_t len)
{
	size_t i;

	if (!len || len > SECRET_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.-", s[i]) || !s[i])
			return 0;
	return 1;
}

static int name_taken(const struct secrets *sec, const char *name)
{
	size_t i;

	for (i = 0; i < sec->ki->ncomps; i++)
		if (sec->ki->comps[i].kind == COMP_SECRET &&
		    !strcmp(sec->ki->comps[i].name, name))
			return 1;
	return 0;
}

/* NAME=HEX: NAME of letters, digits, "_.-"; HEX of 16 to 4096 bytes. */
int named_secret_add(struct secrets *sec, const char *arg)
{
	const char *eq = strchr(arg, '='), *hex;
	const struct component *first = NULL;
	char name[sizeof(sec->ki->comps->name)];
	size_t hexlen, len;
	unsigned char *bytes;
	int ret = -1;

	if (!eq || !valid_name(arg, eq - arg)) {
		fprintf(stderr, "leakscan: bad --secret: want NAME=HEX, NAME of 1 to %d characters from A-Z a-z 0-9 _ . -\n",
			SECRET_NAME_MAX);
		return -1;
	}
	snprintf(name, sizeof(name), "secret:%.*s", (int)(eq - arg), arg);
	hex = eq + 1;
	hexlen = strlen(hex);
	len = hexlen / 2;
	if (name_taken(sec, name)) {
		fprintf(stderr, "leakscan: --secret %s given twice\n", name + 7);
		return -1;
	}
	if (len < SECRET_MIN_LEN || len > SECRET_MAX_LEN) {
		fprintf(stderr, "leakscan: --secret %s: %zu bytes, want %d to %d (shorter strings cannot be searched)\n",
			name + 7, len, SECRET_MIN_LEN, SECRET_MAX_LEN);
		return -1;
	}
	bytes = xmalloc(len);
	if (hex_decode(hex, hexlen, bytes)) {
		fprintf(stderr, "leakscan: --secret %s: not hex (want an even number of digits 0-9 a-f)\n",
			name + 7);
	} else if (secret_add(sec, name, "raw", COMP_SECRET, bytes, len, &first)) {
		sec->named++;
		ret = 0;
	} else {
		fprintf(stderr, "leakscan: --secret %s: same bytes as %s/%s, searched once under that name\n",
			name + 7, first->name, first->form);
		sec->named_dups++;
		ret = 0;
	}
	free_secret(bytes, len);
	return ret;
}
