// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD into a program that uses stock libcrypto: switches OpenSSL's
 * own secure heap on before main(), as an application that calls
 * CRYPTO_secure_malloc_init() itself would (nginx, httpd and curl never
 * do; stock OpenSSL 3.0 has no other switch).  It gives the "stock with
 * its secure heap" column of the leak table and the benchmark.
 *
 * STOCK_SECURE_HEAP_SIZE: bytes (default 1 MiB).
 * STOCK_SECURE_HEAP_REPORT: a file to write the heap's mapping to, as
 * "start-end" in hex, so that the scanner can tell hits inside OpenSSL's
 * secure heap (which it can read) from hits in the normal heap.
 */
#include <openssl/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void report_mapping(const char *path)
{
	void *p = CRYPTO_secure_malloc(16, __FILE__, __LINE__);
	unsigned long start, end, at = (unsigned long)(uintptr_t)p;
	char line[512];
	FILE *maps, *out;

	maps = fopen("/proc/self/maps", "r");
	out = fopen(path, "w");
	if (!p || !maps || !out) {
		fprintf(stderr, "stock_secure_heap: cannot report the mapping to %s\n", path);
		_exit(70);
	}
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && at >= start && at < end)
			fprintf(out, "%lx-%lx\n", start, end);
	fclose(maps);
	fclose(out);
	CRYPTO_secure_free(p, __FILE__, __LINE__);
}

__attribute__((constructor)) static void stock_secure_heap_on(void)
{
	const char *s = getenv("STOCK_SECURE_HEAP_SIZE");
	const char *report = getenv("STOCK_SECURE_HEAP_REPORT");
	size_t size = s ? strtoull(s, NULL, 0) : 1 << 20;

	if (CRYPTO_secure_malloc_init(size, 16) == 0) {
		fprintf(stderr, "stock_secure_heap: CRYPTO_secure_malloc_init(%zu, 16) failed\n",
			size);
		_exit(70);
	}
	if (report)
		report_mapping(report);
}
