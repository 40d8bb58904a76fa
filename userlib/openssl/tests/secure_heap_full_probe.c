// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What an application sees when the secure heap refuses a block:
 *   secure_heap_full_probe large N   one OPENSSL_secure_malloc(N)
 *   secure_heap_full_probe fill N    OPENSSL_secure_malloc(N) until refused
 *   secure_heap_full_probe app N     CRYPTO_secure_malloc_init(4096, 16) by
 *                                    the program itself, then large N
 * The heap comes from OPENSSL_SECARENA or openssl.cnf, except with app.
 * Prints "refused after K" (K blocks given first) and the error queue on
 * stderr; exit 0 if a block was refused, 1 if not, 2 on a usage or init
 * failure.
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t n, given = 0;
	void *p;

	if (argc != 3 || (strcmp(argv[1], "large") && strcmp(argv[1], "fill") &&
			  strcmp(argv[1], "app"))) {
		fprintf(stderr, "usage: secure_heap_full_probe large|fill|app N\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL) ||
	    (!strcmp(argv[1], "app") && !CRYPTO_secure_malloc_init(4096, 16))) {
		ERR_print_errors_fp(stderr);
		return 2;
	}
	/* Blocks are kept: the heap fills. At most 1 GiB in all. */
	while ((p = OPENSSL_secure_malloc(n)) != NULL && !strcmp(argv[1], "fill") &&
	       (given + 1) * n < (1UL << 30))
		given++;
	if (p != NULL)
		return 1;
	printf("refused after %zu\n", given);
	ERR_print_errors_fp(stderr);
	return 0;
}
