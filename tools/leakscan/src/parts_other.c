// SPDX-License-Identifier: GPL-2.0
/*
 * EC, DH and DSA keys have one secret scalar "priv". X25519/X448/Ed25519/Ed448
 * keys are raw bytes; for the EdDSA ones the signing code expands the seed into
 * a secret scalar plus nonce prefix ("az"), which is just as fatal to leak.
 */
#include <string.h>

#include <openssl/core_names.h>

#include "keyparts.h"
#include "util.h"

int key_parts_priv_bn(EVP_PKEY *pkey, struct keyinfo *ki)
{
	BIGNUM *bn = NULL;

	if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &bn))
		return -1;
	key_add_bn(ki, "priv", bn);
	BN_clear_free(bn);
	return 1;
}

static int expand_seed(const char *md_name, const unsigned char *seed,
		       size_t len, unsigned char *out, size_t outlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_MD *md = EVP_MD_fetch(NULL, md_name, NULL);
	int ok = ctx && md && EVP_DigestInit_ex(ctx, md, NULL) &&
		 EVP_DigestUpdate(ctx, seed, len);

	if (ok && EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF)
		ok = EVP_DigestFinalXOF(ctx, out, outlen);
	else if (ok)
		ok = EVP_DigestFinal_ex(ctx, out, NULL);
	EVP_MD_free(md);
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* RFC 8032 clamping as the signer applies it in place to the first half. */
static void clamp(unsigned char *az, int ed448)
{
	if (ed448) {
		az[0] &= 0xfc;
		az[55] |= 0x80;
		az[56] = 0;
	} else {
		az[0] &= 248;
		az[31] &= 63;
		az[31] |= 64;
	}
}

static int add_az(struct keyinfo *ki, const unsigned char *seed, size_t len,
		  int ed448)
{
	unsigned char az[114], clamped[114];
	size_t n = ed448 ? 114 : 64;
	int added = 1;

	if (expand_seed(ed448 ? "SHAKE256" : "SHA512", seed, len, az, n))
		return -1;
	key_add(ki, "az", "raw", COMP_RAW, az, n);
	memcpy(clamped, az, n);
	clamp(clamped, ed448);
	/* Identical forms would only count every hit twice. */
	if (memcmp(az, clamped, n)) {
		key_add(ki, "az", "clamped", COMP_RAW, clamped, n);
		added++;
	}
	explicit_bzero(az, sizeof(az));
	explicit_bzero(clamped, sizeof(clamped));
	return added;
}

int key_parts_ecx(EVP_PKEY *pkey, struct keyinfo *ki)
{
	unsigned char raw[64];
	size_t len = sizeof(raw);
	int n = 1, more = 0;

	if (!EVP_PKEY_get_raw_private_key(pkey, raw, &len))
		return -1;
	key_add(ki, "priv", "raw", COMP_RAW, raw, len);
	if (EVP_PKEY_is_a(pkey, "ED25519"))
		more = add_az(ki, raw, len, 0);
	else if (EVP_PKEY_is_a(pkey, "ED448"))
		more = add_az(ki, raw, len, 1);
	explicit_bzero(raw, sizeof(raw));
	return more < 0 ? -1 : n + more;
}
