// SPDX-License-Identifier: GPL-2.0
/* The component list of a key, and the byte forms a bignum takes. */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>

#include "key.h"
#include "keyparts.h"
#include "util.h"

void key_add(struct keyinfo *ki, const char *name, const char *form,
	     enum comp_kind kind, const unsigned char *bytes, size_t len)
{
	struct component *c;

	if (ki->ncomps == ki->cap) {
		ki->cap = ki->cap ? ki->cap * 2 : 32;
		ki->comps = xrealloc(ki->comps, ki->cap * sizeof(*ki->comps));
	}
	c = &ki->comps[ki->ncomps++];
	memset(c, 0, sizeof(*c));
	strncpy(c->name, name, sizeof(c->name) - 1);
	strncpy(c->form, form, sizeof(c->form) - 1);
	c->kind = kind;
	c->bytes = xmalloc(len);
	memcpy(c->bytes, bytes, len);
	c->len = len;
}

/*
 * Big-endian is BN_bn2bin's minimal encoding (what DER and files carry);
 * little-endian is its byte reverse, which is how BIGNUM limbs lie in the
 * memory of a little-endian 64-bit process.
 */
void key_add_bn(struct keyinfo *ki, const char *name, const BIGNUM *bn)
{
	size_t n = BN_num_bytes(bn), i;
	unsigned char *be, *le;

	if (!n)
		return;		/* a zero component has nothing to find */
	be = xmalloc(n);
	le = xmalloc(n);
	BN_bn2bin(bn, be);
	for (i = 0; i < n; i++)
		le[i] = be[n - 1 - i];
	key_add(ki, name, "be", COMP_BN, be, n);
	key_add(ki, name, "le", COMP_BN, le, n);
	free_secret(be, n);
	free_secret(le, n);
}

void key_free(struct keyinfo *ki)
{
	size_t i;

	for (i = 0; i < ki->ncomps; i++)
		free_secret(ki->comps[i].bytes, ki->comps[i].len);
	free(ki->comps);
	OPENSSL_free(ki->spki);
	free(ki->pub_derived);
	memset(ki, 0, sizeof(*ki));
}
