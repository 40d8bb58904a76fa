// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the secure heap looks like to an unmodified program once libcrypto
 * has initialised: run against the patched build with OPENSSL_SECARENA or
 * an openssl.cnf setting, it prints
 *   init 1 initialized 1 used 0 block 1
 * (init: OPENSSL_init_crypto() with the configuration file loaded; block:
 * an OPENSSL_secure_malloc() came from the secure heap).  Exit 0, or 1 if
 * OPENSSL_init_crypto() failed (a strict setting that could not be met).
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <stdio.h>

int main(void)
{
	int init = OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL);
	void *p;
	int ours;

	if (!init) {
		printf("init 0\n");
		ERR_print_errors_fp(stderr);
		return 1;
	}
	p = OPENSSL_secure_malloc(64);
	ours = p != NULL && CRYPTO_secure_allocated(p);
	printf("init 1 initialized %d used %zu block %d\n",
	       CRYPTO_secure_malloc_initialized(), CRYPTO_secure_used() - (ours ? 64 : 0), ours);
	OPENSSL_secure_free(p);
	return 0;
}
