// SPDX-License-Identifier: GPL-2.0
/*
 * ML-KEM (FIPS 203), ML-DSA (FIPS 204) and SLH-DSA (FIPS 205) private keys,
 * as OpenSSL 3.5 and later parse them. Their "priv" parameter is the
 * standard's encoded private key, which mixes secret and public fields, so
 * it is cut into its secret fields here; the public ones that do not appear
 * in the SubjectPublicKeyInfo (ML-DSA's tr, ML-KEM's H(ek)) are handed to
 * the matcher as public bytes, so that the DER pieces made of them are not
 * counted as leaks: every process that holds the certificate holds them.
 *
 * Besides the encodings, the lattice schemes keep their secret vectors in
 * memory one coefficient per machine word (16 bits for ML-KEM, 32 for
 * ML-DSA); those forms are listed too ("mem16", "mem32"), since a copy of a
 * key's working state is as fatal as a copy of its file. ML-KEM's s is in
 * the NTT domain, uniform mod q, so 16 bytes of it are as good as random
 * and it is searched in pieces like any other component. ML-DSA's s1 and
 * s2 hold values within eta of 0 (mod q): 16 bytes of them carry about 12
 * bits and occur by chance in any library's data, so each of its
 * polynomials (1 KiB) is one whole-only component of kind "words".
 *
 * Built against OpenSSL 3.0 headers too: the parameter names are written
 * out, and a 3.0 libcrypto simply never parses such a key.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>

#include "keyparts.h"
#include "util.h"

#define ML_KEM_Q 3329
#define ML_DSA_Q 8380417

/* A copy of an octet-string parameter in *out (wiped by the caller), or 0. */
static size_t get_octets(EVP_PKEY *pkey, const char *param, unsigned char **out)
{
	size_t len = 0;

	*out = NULL;
	if (!EVP_PKEY_get_octet_string_param(pkey, param, NULL, 0, &len) || !len)
		return 0;
	*out = xmalloc(len);
	if (!EVP_PKEY_get_octet_string_param(pkey, param, *out, len, &len)) {
		free_secret(*out, len);
		*out = NULL;
		return 0;
	}
	return len;
}

/* Bits [pos, pos + bits) of a little-endian bit stream (FIPS 203/204 packing). */
static uint32_t bits_at(const unsigned char *in, size_t pos, unsigned int bits)
{
	uint32_t v = 0;
	unsigned int i;

	for (i = 0; i < bits; i++, pos++)
		v |= (uint32_t)(in[pos >> 3] >> (pos & 7) & 1) << i;
	return v;
}

static void add_public(struct keyinfo *ki, const unsigned char *bytes, size_t len)
{
	ki->pub_derived = xrealloc(ki->pub_derived, ki->pub_derived_len + len);
	memcpy(ki->pub_derived + ki->pub_derived_len, bytes, len);
	ki->pub_derived_len += len;
}

/*
 * dk = ByteEncode12(s^) || ek || H(ek) || z, with k = 2, 3 or 4 vectors of
 * 256 coefficients; the seed parameter is d || z.
 */
static int parts_ml_kem(struct keyinfo *ki, const unsigned char *dk, size_t len,
			const unsigned char *seed, size_t seedlen)
{
	size_t k = (len - 96) / 768, ncoef, i;
	unsigned char *mem;
	int n = 0;

	if (len < 96 || (len - 96) % 768 || k < 2 || k > 4)
		return -1;
	ncoef = 256 * k;
	key_add(ki, "s", "raw", COMP_RAW, dk, 384 * k);
	mem = xmalloc(2 * ncoef);
	for (i = 0; i < ncoef; i++) {
		uint16_t c = (uint16_t)bits_at(dk, 12 * i, 12);

		if (c >= ML_KEM_Q) {
			free_secret(mem, 2 * ncoef);
			return -1;
		}
		memcpy(mem + 2 * i, &c, 2);
	}
	key_add(ki, "s", "mem16", COMP_RAW, mem, 2 * ncoef);
	free_secret(mem, 2 * ncoef);
	key_add(ki, "z", "raw", COMP_RAW, dk + len - 32, 32);
	n = 3;
	if (seedlen == 64) {
		key_add(ki, "d", "raw", COMP_RAW, seed, 32);
		n++;
	}
	/*
	 * ek || H(ek) as one run: the key object keeps ek's trailing rho next
	 * to H(ek), so a DER piece across the two is public as well.
	 */
	add_public(ki, dk + 384 * k, 384 * k + 64);
	return n;
}

/*
 * sk = rho || K || tr || s1 || s2 || t0: rho is in the public key and tr is
 * a hash of it; s1 (l polynomials) and s2 (k) pack eta - c in 3 or 4 bits,
 * t0 (k) packs 2^12 - c in 13 bits. The seed parameter is xi.
 */
static int parts_ml_dsa(struct keyinfo *ki, const char *type,
			const unsigned char *sk, size_t len,
			const unsigned char *seed, size_t seedlen)
{
	unsigned int k, l, eta, ebits, npoly, i;
	size_t pos = 0;
	unsigned char *mem;
	int n;

	if (!strcmp(type, "ML-DSA-44"))
		k = 4, l = 4, eta = 2;
	else if (!strcmp(type, "ML-DSA-65"))
		k = 6, l = 5, eta = 4;
	else if (!strcmp(type, "ML-DSA-87"))
		k = 8, l = 7, eta = 2;
	else
		return -1;
	ebits = eta == 2 ? 3 : 4;
	if (len != 128 + 32 * ((size_t)(k + l) * ebits + 13 * (size_t)k))
		return -1;
	key_add(ki, "K", "raw", COMP_RAW, sk + 32, 32);
	key_add(ki, "s1s2t0", "raw", COMP_RAW, sk + 128, len - 128);
	n = 2;
	npoly = l + 2 * k;
	mem = xmalloc(4 * 256);
	for (i = 0; i < npoly; i++) {
		int t0 = i >= l + k;
		unsigned int w = t0 ? 13 : ebits, j;
		uint32_t mid = t0 ? 1u << 12 : eta;
		char name[16];

		for (j = 0; j < 256; j++) {
			uint32_t v = bits_at(sk + 128, pos, w);
			/* The centred value mid - v, reduced into [0, q). */
			uint32_t c = v <= mid ? mid - v : ML_DSA_Q + mid - v;

			memcpy(mem + 4 * j, &c, 4);
			pos += w;
		}
		if (i < l)
			snprintf(name, sizeof(name), "s1[%u]", i);
		else if (i < l + k)
			snprintf(name, sizeof(name), "s2[%u]", i - l);
		else
			snprintf(name, sizeof(name), "t0[%u]", i - l - k);
		key_add(ki, name, "mem32", COMP_WORDS, mem, 4 * 256);
		n++;
	}
	free_secret(mem, 4 * 256);
	if (seedlen == 32) {
		key_add(ki, "xi", "raw", COMP_RAW, seed, 32);
		n++;
	}
	add_public(ki, sk + 64, 64);
	return n;
}

/* sk = SK.seed || SK.prf || PK.seed || PK.root, n bytes each. */
static int parts_slh_dsa(struct keyinfo *ki, const unsigned char *sk, size_t len)
{
	size_t n = len / 4;

	if (len % 4 || (n != 16 && n != 24 && n != 32))
		return -1;
	key_add(ki, "SK.seed", "raw", COMP_RAW, sk, n);
	key_add(ki, "SK.prf", "raw", COMP_RAW, sk + n, n);
	return 2;
}

int key_parts_pq(EVP_PKEY *pkey, struct keyinfo *ki)
{
	const char *type = EVP_PKEY_get0_type_name(pkey);
	unsigned char *priv, *seed = NULL;
	size_t len, seedlen = 0;
	int n;

	len = get_octets(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &priv);
	if (!len || !type)
		return -1;
	/* "seed" is the name of OSSL_PKEY_PARAM_ML_{KEM,DSA}_SEED in 3.5. */
	if (strncmp(type, "SLH-DSA-", 8))
		seedlen = get_octets(pkey, "seed", &seed);
	if (!strncmp(type, "ML-KEM-", 7))
		n = parts_ml_kem(ki, priv, len, seed, seedlen);
	else if (!strncmp(type, "ML-DSA-", 7))
		n = parts_ml_dsa(ki, type, priv, len, seed, seedlen);
	else
		n = parts_slh_dsa(ki, priv, len);
	free_secret(priv, len);
	if (seed)
		free_secret(seed, seedlen);
	return n;
}

int key_is_pq(EVP_PKEY *pkey)
{
	const char *type = EVP_PKEY_get0_type_name(pkey);

	return type && (!strncmp(type, "ML-KEM-", 7) || !strncmp(type, "ML-DSA-", 7) ||
			!strncmp(type, "SLH-DSA-", 8));
}
