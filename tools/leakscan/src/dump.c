// SPDX-License-Identifier: GPL-2.0
/*
 * --dump-components: print every component form as "name form hex", the
 * key's first, then those of secrets.h. This prints every secret in the
 * clear; it exists so that the test target can place exact copies without
 * ever parsing the key (and leaving OpenSSL's own).
 */
#include <stdio.h>

#include "dump.h"

void dump_components(const struct keyinfo *ki, FILE *f)
{
	size_t i, j;

	for (i = 0; i < ki->ncomps; i++) {
		const struct component *c = &ki->comps[i];

		fprintf(f, "%s %s ", c->name, c->form);
		for (j = 0; j < c->len; j++)
			fprintf(f, "%02x", c->bytes[j]);
		fputc('\n', f);
	}
	if (!ki->spki_len)
		return;		/* no key (--no-key) */
	/* Not a component: the public key, for the tests' oracle. */
	fprintf(f, "spki pub ");
	for (j = 0; j < ki->spki_len; j++)
		fprintf(f, "%02x", ki->spki[j]);
	fputc('\n', f);
	if (!ki->pub_derived_len)
		return;
	fprintf(f, "pubderived pub ");
	for (j = 0; j < ki->pub_derived_len; j++)
		fprintf(f, "%02x", ki->pub_derived[j]);
	fputc('\n', f);
}
