// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * make bench: one workload on three allocators in one process run, on 1 and
 * 2 threads. Each thread keeps 1024 live blocks; a step frees a random one
 * and allocates a random size in 16..4096 in its place (a malloc+free pair).
 * Sizes and slots are drawn before the clock starts.
 *
 * libsecarena: memfd_secret backend unless SECARENA_BACKEND says otherwise,
 * 16 MiB arena, 16-byte minimum. OpenSSL: CRYPTO_secure_malloc_init(1 << 24,
 * 16) of the system libcrypto. glibc: malloc/free (which does not wipe), and
 * malloc/free with explicit_bzero of the usable size first: glibc made to
 * wipe what it frees.
 *
 * A last row has no allocator at all: libsecarena runs the workload once
 * untimed, recording the address and size of every block it frees, then the
 * timed loop replays just those wipes into a copy of the arena's address
 * range. That is the floor for wiping each freed block whole on this
 * machine, with libsecarena's own block layout, and so shows how much of
 * libsecarena's time is its wipe and how much is the allocator.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/mman.h>
#include <time.h>

#include <openssl/crypto.h>

#include "secarena.h"

#define LIVE		1024
#define DRAWS		(1u << 20)
#define MAX_THREADS	2
#define REPLAY_SPAN	((size_t)1 << 25)	/* twice the arena */

struct engine {
	const char *name;
	void *(*alloc)(size_t n);	/* NULL: replay a recorded trace of wipes */
	void (*release)(void *p);
};

static void *glibc_alloc(size_t n) { return malloc(n); }
static void glibc_release(void *p) { free(p); }
static void *openssl_alloc(size_t n) { return CRYPTO_secure_malloc(n, __FILE__, __LINE__); }
static void openssl_release(void *p) { CRYPTO_secure_free(p, __FILE__, __LINE__); }
/* glibc made to wipe what it frees, as libsecarena does. */
static void glibc_wipe_release(void *p)
{
	if (p)
		explicit_bzero(p, malloc_usable_size(p));
	free(p);
}
static void *secarena_alloc(size_t n) { return secarena_malloc(n); }
static void secarena_release(void *p) { secarena_free(p); }

static const struct engine engines[] = {
	{ "libsecarena", secarena_alloc, secarena_release },
	{ "openssl-secure-heap", openssl_alloc, openssl_release },
	{ "glibc-malloc", glibc_alloc, glibc_release },
	{ "glibc-malloc+wipe", glibc_alloc, glibc_wipe_release },
	{ "wipe only (replay)", NULL, NULL },
};
#define ENGINES	(sizeof(engines) / sizeof(engines[0]))

/* One block libsecarena freed: where (from the lowest address) and how big. */
struct wipe_step {
	size_t offset;
	size_t size;
};

struct worker {
	pthread_t thread;
	const struct engine *e;
	size_t pairs;
	uint16_t *size;		/* DRAWS sizes */
	uint16_t *slot;		/* DRAWS slot numbers */
	struct wipe_step *trace; /* pairs steps; filled by a recording run */
	int recording;
	int failed;
};

static unsigned char *replay_base;	/* a copy of the arena's address range */

static pthread_barrier_t start_line;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The wipes of a recorded run, in order, with nothing around them. */
static void replay(struct worker *w)
{
	size_t i;

	pthread_barrier_wait(&start_line);
	for (i = 0; i < w->pairs; i++) {
		unsigned char *p = replay_base + w->trace[i].offset;

		memset(p, 0, w->trace[i].size);
		__asm__ __volatile__("" : : "r"(p) : "memory");	/* as libsecarena's wipe */
	}
	pthread_barrier_wait(&start_line);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	void *live[LIVE];
	size_t i;

	if (!w->e->alloc) {
		replay(w);
		return NULL;
	}
	for (i = 0; i < LIVE; i++) {
		live[i] = w->e->alloc(w->size[i]);
		if (!live[i])
			w->failed = 1;
	}
	pthread_barrier_wait(&start_line);
	for (i = 0; i < w->pairs; i++) {
		unsigned int s = w->slot[i & (DRAWS - 1)];

		if (w->recording) {	/* an address for now; an offset later */
			w->trace[i].offset = (size_t)live[s];
			w->trace[i].size = secarena_actual_size(live[s]);
		}
		w->e->release(live[s]);
		live[s] = w->e->alloc(w->size[i & (DRAWS - 1)]);
		if (!live[s])
			w->failed = 1;
	}
	pthread_barrier_wait(&start_line);
	for (i = 0; i < LIVE; i++)
		w->e->release(live[i]);
	return NULL;
}

/* ns per pair over all threads: wall time of the timed loop / total pairs. */
static double run(const struct engine *e, int threads, size_t pairs, struct worker *w,
		  int recording)
{
	double t0, t1;
	int i;

	pthread_barrier_init(&start_line, NULL, (unsigned int)threads + 1);
	for (i = 0; i < threads; i++) {
		w[i].e = e;
		w[i].pairs = pairs;
		w[i].recording = recording;
		w[i].failed = 0;
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	}
	pthread_barrier_wait(&start_line);
	t0 = now_ns();
	pthread_barrier_wait(&start_line);
	t1 = now_ns();
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].failed) {
			fprintf(stderr, "bench: %s ran out of memory\n", e->name);
			exit(1);
		}
	}
	pthread_barrier_destroy(&start_line);
	return (t1 - t0) / (double)(pairs * (size_t)threads);
}

/*
 * Run libsecarena once more, untimed, recording its frees, and map the range
 * they span (4 KiB pages and faulted in, like the arena) for the replay.
 */
static void record_wipes(int threads, size_t pairs, struct worker *w)
{
	size_t lo = SIZE_MAX, hi = 0, len, i;
	int t;

	run(&engines[0], threads, pairs, w, 1);
	for (t = 0; t < threads; t++)
		for (i = 0; i < pairs; i++) {
			if (w[t].trace[i].offset < lo)
				lo = w[t].trace[i].offset;
			if (w[t].trace[i].offset + w[t].trace[i].size > hi)
				hi = w[t].trace[i].offset + w[t].trace[i].size;
		}
	for (t = 0; t < threads; t++)
		for (i = 0; i < pairs; i++)
			w[t].trace[i].offset -= lo;
	if (replay_base)
		munmap(replay_base, REPLAY_SPAN);
	len = hi - lo;
	if (len > REPLAY_SPAN) {
		fprintf(stderr, "bench: recorded frees span %zu bytes\n", len);
		exit(1);
	}
	replay_base = mmap(NULL, REPLAY_SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if (replay_base == MAP_FAILED) {
		perror("bench: mmap");
		exit(1);
	}
	madvise(replay_base, REPLAY_SPAN, MADV_NOHUGEPAGE);
	memset(replay_base, 0, len);
}

int main(int argc, char **argv)
{
	size_t pairs = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000000;
	struct worker w[MAX_THREADS];
	double ns[ENGINES][MAX_THREADS + 1];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct secarena_options opt = { .arena_size = 1 << 24, .min_block = 16 };
	struct secarena_status st;
	size_t e;
	int t, i;

	if (!getenv("SECARENA_BACKEND"))
		setenv("SECARENA_BACKEND", "memfd_secret", 1);
	if (secarena_init_ex(&opt, &st) != 0) {
		perror("bench: secarena_init");
		return 1;
	}
	if (CRYPTO_secure_malloc_init(1 << 24, 16) == 0) {
		fprintf(stderr, "bench: CRYPTO_secure_malloc_init failed\n");
		return 1;
	}
	for (i = 0; i < MAX_THREADS; i++) {
		size_t k;

		w[i].size = malloc(DRAWS * sizeof(uint16_t));
		w[i].slot = malloc(DRAWS * sizeof(uint16_t));
		w[i].trace = malloc(pairs * sizeof(struct wipe_step));
		if (!w[i].size || !w[i].slot || !w[i].trace) {
			fprintf(stderr, "bench: out of memory for %zu pairs\n", pairs);
			return 1;
		}
		for (k = 0; k < DRAWS; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			w[i].size[k] = (uint16_t)(16 + (x >> 20) % 4081);
			w[i].slot[k] = (uint16_t)((x >> 40) % LIVE);
		}
	}
	printf("workload: sizes 16..4096 uniform, %d live blocks per thread, %zu malloc+free pairs "
	       "per thread\nlibsecarena backend: %s\n\n", LIVE, pairs, st.backend);
	for (t = 1; t <= MAX_THREADS; t++)
		for (e = 0; e < ENGINES; e++) {
			if (!engines[e].alloc)
				record_wipes(t, pairs, w);
			run(&engines[e], t, pairs / 10, w, 0);	/* warm up */
			ns[e][t] = run(&engines[e], t, pairs, w, 0);
		}
	printf("%-22s %14s %14s\n", "allocator", "1 thread", "2 threads");
	printf("%-22s %14s %14s\n", "", "ns/pair", "ns/pair (aggr)");
	for (e = 0; e < ENGINES; e++)
		printf("%-22s %14.1f %14.1f\n", engines[e].name, ns[e][1], ns[e][2]);
	printf("\nopenssl / libsecarena: %.1fx (1 thread), %.1fx (2 threads)\n",
	       ns[1][1] / ns[0][1], ns[1][2] / ns[0][2]);
	printf("glibc / libsecarena:   %.2fx (1 thread), %.2fx (2 threads)\n",
	       ns[2][1] / ns[0][1], ns[2][2] / ns[0][2]);
	printf("glibc+wipe / libsecarena: %.2fx (1 thread), %.2fx (2 threads)\n",
	       ns[3][1] / ns[0][1], ns[3][2] / ns[0][2]);
	printf("wipe only / libsecarena: %.2fx (1 thread), %.2fx (2 threads)\n",
	       ns[4][1] / ns[0][1], ns[4][2] / ns[0][2]);
	printf("targets: 1 thread <= 50 ns/pair and >= 5x; 2 threads <= 30 ns/pair and >= 20x\n");
	printf("wipe only: what wiping each freed block whole costs here, with no allocator\n");
	CRYPTO_secure_malloc_done();
	secarena_done();
	return 0;
}
