// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * make bench-threads: does an allocator do more work with two threads than
 * with one? Each thread keeps 1024 live blocks and, per step, frees a
 * random one and allocates a new one in its place (a malloc+free pair).
 * Sizes are powers of two from 16 up to a bound, each equally likely, so
 * small blocks are common, as they are in real use (BIGNUM limbs, EC
 * scalars, 32 to 64-byte TLS secrets). Sizes and slots are drawn before the
 * clock starts.
 *
 * Every configuration runs in a fork child of its own, so that each one
 * initialises its allocator from nothing (libsecarena and OpenSSL's secure
 * heap are once per process):
 *   glibc            malloc/free
 *   native, 1 arena  secarena_init_ex(), one 64 MiB arena
 *   native, default  secarena_init_ex() with the defaults (1 MiB arenas, up to 8)
 *   seed, 64 MiB     secure_malloc_init(64 MiB): the seed API (each thread
 *                    calls start_secure_allocation()); one arena serves it
 *   openssl, 1 arena CRYPTO_secure_malloc_init(64 MiB, 16): what an
 *                    application that sets up the secure heap itself gets
 *   openssl, default OPENSSL_SECARENA=on (the patched libcrypto only)
 * The OpenSSL rows use the libcrypto the dynamic linker finds: run with
 * LD_LIBRARY_PATH pointing at the patched build; with a stock libcrypto the
 * default row says so and the 1-arena row measures OpenSSL's own heap.
 *
 * For each bound (64, 256, 4096) it prints ns per pair with 1 thread and,
 * with 2, wall time over all pairs of both ("aggregate"), then the speedup
 * (1-thread ns / 2-thread aggregate ns: 2.0 is perfect, below 1.0 the two
 * threads together do less than one) and each row's time against glibc's.
 *
 *   thread_scaling [PAIRS]     PAIRS per thread and run (default 4000000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "secarena.h"
#include "secure_malloc.h"

#define LIVE		1024
#define DRAWS		(1u << 20)
#define THREADS		2
#define ARENA_64M	((size_t)64 << 20)

enum config { GLIBC, NATIVE_ONE, NATIVE_DEFAULT, SEED_ONE, OPENSSL_ONE, OPENSSL_DEFAULT, CONFIGS };

static const char *const config_name[CONFIGS] = {
	"glibc", "native, 1 arena", "native, default", "seed, 64 MiB",
	"openssl, 1 arena", "openssl, default",
};
static const size_t bounds[] = { 64, 256, 4096 };
#define BOUNDS	(sizeof(bounds) / sizeof(bounds[0]))

static void *(*do_alloc)(size_t);
static void (*do_free)(void *);
static int (*thread_begin)(void);	/* the seed API's per-thread switch */

static void *openssl_alloc(size_t n) { return CRYPTO_secure_malloc(n, __FILE__, __LINE__); }
static void openssl_free(void *p) { CRYPTO_secure_free(p, __FILE__, __LINE__); }

struct worker {
	pthread_t thread;
	size_t pairs;
	uint16_t size[DRAWS];
	uint16_t slot[DRAWS];
	int failed;
};

static pthread_barrier_t line;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	void *live[LIVE];
	size_t i;

	if (thread_begin && thread_begin() < 0)
		w->failed = 1;
	for (i = 0; i < LIVE; i++)
		if (!(live[i] = do_alloc(w->size[i])))
			w->failed = 1;
	pthread_barrier_wait(&line);
	for (i = 0; i < w->pairs; i++) {
		unsigned int s = w->slot[i & (DRAWS - 1)];

		do_free(live[s]);
		if (!(live[s] = do_alloc(w->size[i & (DRAWS - 1)])))
			w->failed = 1;
	}
	pthread_barrier_wait(&line);
	for (i = 0; i < LIVE; i++)
		do_free(live[i]);
	return NULL;
}

/* Wall ns of the timed loop over all pairs of all threads; < 0 on failure. */
static double run(struct worker *w, int threads, size_t pairs)
{
	double t0, t1;
	int i, failed = 0;

	pthread_barrier_init(&line, NULL, (unsigned int)threads + 1);
	for (i = 0; i < threads; i++) {
		w[i].pairs = pairs;
		w[i].failed = 0;
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	}
	pthread_barrier_wait(&line);
	t0 = now_ns();
	pthread_barrier_wait(&line);
	t1 = now_ns();
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		failed |= w[i].failed;
	}
	pthread_barrier_destroy(&line);
	return failed ? -1 : (t1 - t0) / (double)(pairs * (size_t)threads);
}

/* Sizes 16 << k, k uniform in [0, log2(bound / 16)]; slots uniform. */
static void draw(struct worker *w, size_t bound, unsigned int seed)
{
	unsigned int steps = 0, i;

	while ((16u << steps) < bound)
		steps++;
	for (i = 0; i < DRAWS; i++) {
		w->size[i] = (uint16_t)(16u << (rand_r(&seed) % (steps + 1)));
		w->slot[i] = (uint16_t)(rand_r(&seed) % LIVE);
	}
}

/* Set the configuration up in this (child) process; 0 if it cannot be had. */
static int setup(enum config c)
{
	/* The strongest backend that maps (SECARENA_BACKEND: where to start). */
	struct secarena_options opt = { .flags = SECARENA_F_FALLBACK_BACKEND };

	switch (c) {
	case GLIBC:
		do_alloc = malloc;
		do_free = free;
		return 1;
	case NATIVE_ONE:
		opt.arena_size = ARENA_64M;
		opt.max_arenas = 1;
		/* fall through */
	case NATIVE_DEFAULT:
		do_alloc = secarena_malloc;
		do_free = secarena_free;
		return secarena_init_ex(&opt, NULL) == 0;
	case SEED_ONE:
		do_alloc = secure_malloc;
		do_free = secure_free;
		thread_begin = start_secure_allocation;
		return secure_malloc_init(ARENA_64M, 16, 0) == 1;
	case OPENSSL_ONE:
		do_alloc = openssl_alloc;
		do_free = openssl_free;
		return CRYPTO_secure_malloc_init(ARENA_64M, 16) != 0;
	case OPENSSL_DEFAULT:
		do_alloc = openssl_alloc;
		do_free = openssl_free;
		setenv("OPENSSL_SECARENA", "on", 1);
		return OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL) &&
		       CRYPTO_secure_malloc_initialized();
	default:
		return 0;
	}
}

/* One configuration in a fork child: [bound][threads - 1] ns, < 0 if none. */
static void measure(enum config c, size_t pairs, double ns[BOUNDS][THREADS])
{
	int fds[2], status;
	size_t b;
	pid_t pid;

	for (b = 0; b < BOUNDS; b++)
		ns[b][0] = ns[b][1] = -1;
	if (pipe(fds) != 0 || (pid = fork()) < 0)
		return;
	if (pid == 0) {
		static struct worker w[THREADS];
		double out[BOUNDS][THREADS];
		int t;

		close(fds[0]);
		for (b = 0; b < BOUNDS; b++)
			out[b][0] = out[b][1] = -1;
		if (setup(c))
			for (b = 0; b < BOUNDS; b++) {
				for (t = 0; t < THREADS; t++)
					draw(&w[t], bounds[b], 1234u + 77u * (unsigned int)t);
				out[b][0] = run(w, 1, pairs);
				out[b][1] = run(w, 2, pairs);
			}
		_exit(write(fds[1], out, sizeof(out)) == (ssize_t)sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], ns, sizeof(double) * BOUNDS * THREADS) != (ssize_t)(sizeof(double) * BOUNDS * THREADS))
		for (b = 0; b < BOUNDS; b++)
			ns[b][0] = ns[b][1] = -1;
	close(fds[0]);
	waitpid(pid, &status, 0);
}

int main(int argc, char **argv)
{
	static double ns[CONFIGS][BOUNDS][THREADS];
	size_t pairs = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000000;
	size_t b;
	int c;

	if (!pairs) {
		fprintf(stderr, "usage: thread_scaling [PAIRS]\n");
		return 64;
	}
	for (c = 0; c < CONFIGS; c++)
		measure((enum config)c, pairs, ns[c]);
	printf("workload: %d live blocks per thread, sizes 16 << k up to the bound, "
	       "%zu pairs per thread and run; libcrypto: %s\n", LIVE, pairs,
	       OpenSSL_version(OPENSSL_VERSION));
	for (b = 0; b < BOUNDS; b++) {
		printf("\nsizes 16..%zu          1 thread  2 threads   speedup   vs glibc  vs glibc\n",
		       bounds[b]);
		printf("                        ns/pair   ns (aggr)  (goal>=1.6)  1 thr   2 thr (goal<=1.3)\n");
		for (c = 0; c < CONFIGS; c++) {
			double one = ns[c][b][0], two = ns[c][b][1];

			if (one < 0 || two < 0) {
				printf("%-20s  not available here\n", config_name[c]);
				continue;
			}
			printf("%-20s %9.1f %11.1f %9.2f %10.2f %9.2f\n", config_name[c], one, two,
			       one / two, one / ns[GLIBC][b][0], two / ns[GLIBC][b][1]);
		}
	}
	return 0;
}
