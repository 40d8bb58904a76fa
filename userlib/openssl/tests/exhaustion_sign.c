// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exhaustion_sign KEY LEVELS: sign with a private key while the secure heap
 * is nearly full, then check that the key still signs correctly.
 *
 * At each of LEVELS levels the program fills the secure heap with 16-byte
 * blocks until CRYPTO_secure_malloc() fails, frees 4 * level of them again
 * (so each level leaves a little more room, and the private operation
 * runs out at a different allocation), and signs 33 times: enough to pass
 * once through every step of RSA's blinding counter (32). Those signatures
 * may fail; that is the point. Then it frees everything and signs and
 * verifies 3 times: every one of those must succeed and verify. A private
 * operation cut short by a failed allocation must leave nothing behind
 * that makes later results wrong (the BN_BLINDING of 0013).
 *
 * Prints "pressured N failed F after M bad B". Exit 0 if it ran, 1 on a
 * setup failure (no key, no secure heap), with a message.
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>

#define FILL_MAX	(1u << 20)
#define SIGNS_UNDER	33
#define SIGNS_AFTER	3

static void *fill[FILL_MAX];

/* Ed25519 and Ed448 sign the message itself; the others sign a digest. */
static const EVP_MD *digest_for(EVP_PKEY *pk)
{
	return EVP_PKEY_is_a(pk, "ED25519") || EVP_PKEY_is_a(pk, "ED448") ? NULL : EVP_sha256();
}

/* 1: signed and verified, 0: signed but did not verify, -1: did not sign. */
static int sign_and_verify(EVP_PKEY *pk)
{
	static const unsigned char msg[] = "secarena exhaustion";
	unsigned char sig[1024];
	size_t siglen = sizeof(sig);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok;

	ok = c != NULL && EVP_DigestSignInit(c, NULL, digest_for(pk), NULL, pk) == 1 &&
	     EVP_DigestSign(c, sig, &siglen, msg, sizeof(msg)) == 1;
	EVP_MD_CTX_free(c);
	if (!ok) {
		ERR_clear_error();
		return -1;
	}
	c = EVP_MD_CTX_new();
	ok = c != NULL && EVP_DigestVerifyInit(c, NULL, digest_for(pk), NULL, pk) == 1 &&
	     EVP_DigestVerify(c, sig, siglen, msg, sizeof(msg)) == 1;
	EVP_MD_CTX_free(c);
	ERR_clear_error();
	return ok;
}

/* Fill the secure heap; the number of blocks taken. */
static size_t fill_heap(void)
{
	size_t n;

	for (n = 0; n < FILL_MAX; n++) {
		fill[n] = CRYPTO_secure_malloc(16, NULL, 0);
		if (fill[n] == NULL)
			break;
	}
	ERR_clear_error();
	return n;
}

int main(int argc, char **argv)
{
	size_t levels, level, n, i, freed, pressured = 0, failed = 0, after = 0, bad = 0;
	EVP_PKEY *pk;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: exhaustion_sign KEY LEVELS\n");
		return 1;
	}
	f = fopen(argv[1], "r");
	pk = f != NULL ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
	if (f != NULL)
		fclose(f);
	if (pk == NULL || !CRYPTO_secure_malloc_initialized() || sign_and_verify(pk) != 1) {
		fprintf(stderr, "exhaustion_sign: no key, no secure heap, or the key does not sign\n");
		return 1;
	}
	levels = strtoul(argv[2], NULL, 10);
	for (level = 0; level < levels; level++) {
		n = fill_heap();
		if (n == FILL_MAX) {
			fprintf(stderr, "exhaustion_sign: the secure heap did not fill\n");
			return 1;
		}
		freed = 4 * level < n ? 4 * level : n;
		for (i = 0; i < freed; i++)
			CRYPTO_secure_free(fill[n - 1 - i], NULL, 0);
		for (i = 0; i < SIGNS_UNDER; i++, pressured++)
			failed += sign_and_verify(pk) != 1;
		for (i = freed; i < n; i++)
			CRYPTO_secure_free(fill[n - 1 - i], NULL, 0);
		for (i = 0; i < SIGNS_AFTER; i++, after++)
			bad += sign_and_verify(pk) != 1;
	}
	printf("pressured %zu failed %zu after %zu bad %zu\n", pressured, failed, after, bad);
	EVP_PKEY_free(pk);
	return 0;
}
