// SPDX-License-Identifier: LGPL-2.1-or-later
/* Threads: stress with cross-thread frees, cache return at exit, concurrent growth. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "allocator.h"
#include "arena.h"
#include "secarena.h"
#include "tap.h"
#include "thread_cache.h"
#include "watchpoint.h"

#define THREADS 4
#define KEEP 256
#define RING 1024

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *ring[RING];
static size_t ring_size[RING];
static size_t ring_n;
static int stress_failed;

struct stress_arg {
	uint64_t rng;
	size_t ops;
};

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int filled(const unsigned char *p, size_t n, unsigned char v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* The fill byte of a block is derived from its size, so any thread can check it. */
static unsigned char fill_for(size_t n)
{
	return (unsigned char)(n * 31 + 7) | 1;
}

static void *stress(void *argp)
{
	struct stress_arg *arg = argp;
	unsigned char *mine[KEEP] = { 0 };
	size_t size[KEEP] = { 0 }, i;

	for (i = 0; i < arg->ops; i++) {
		size_t k = next_rand(&arg->rng) % KEEP;
		uint64_t r = next_rand(&arg->rng);

		if (mine[k]) {
			if (!filled(mine[k], size[k], fill_for(size[k])))
				stress_failed = 1;
			if (r % 4 == 0) {
				/* Hand it to whichever thread frees next. */
				pthread_mutex_lock(&ring_lock);
				if (ring_n < RING) {
					ring[ring_n] = mine[k];
					ring_size[ring_n++] = size[k];
					mine[k] = NULL;
				}
				pthread_mutex_unlock(&ring_lock);
			}
			if (mine[k])
				secarena_free(mine[k]);
			mine[k] = NULL;
		} else {
			size[k] = 1 + (r >> 8) % 3000;
			mine[k] = secarena_malloc(size[k]);
			if (!mine[k]) {
				stress_failed = 1;
				continue;
			}
			if (!filled(mine[k], size[k], 0))
				stress_failed = 1;
			memset(mine[k], fill_for(size[k]), size[k]);
		}
		if (r % 8 == 1) {
			unsigned char *p = NULL;
			size_t n = 0;

			pthread_mutex_lock(&ring_lock);
			if (ring_n) {
				p = ring[--ring_n];
				n = ring_size[ring_n];
			}
			pthread_mutex_unlock(&ring_lock);
			if (p) {
				if (!filled(p, n, fill_for(n)))
					stress_failed = 1;
				secarena_free(p);
			}
		}
	}
	for (i = 0; i < KEEP; i++)
		if (mine[i])
			secarena_free(mine[i]);
	return NULL;
}

static int check_all_arenas(void)
{
	size_t i;

	for (i = 0; i < allocator.narenas; i++) {
		pthread_mutex_lock(&allocator.arena[i]->lock);
		buddy_check(&allocator.arena[i]->buddy);
		pthread_mutex_unlock(&allocator.arena[i]->lock);
	}
	return 0;
}

TEST(threads, stress_with_cross_thread_frees)
{
	struct secarena_options opt = { .arena_size = 1 << 20, .max_arenas = 8 };
	struct stress_arg args[THREADS];
	pthread_t t[THREADS];
	struct secarena_stats st;
	int i;

	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	stress_failed = 0;
	ring_n = 0;
	for (i = 0; i < THREADS; i++) {
		args[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		args[i].ops = test_scaled(300000);
		CHECK_EQ(pthread_create(&t[i], NULL, stress, &args[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(stress_failed, 0);
	while (ring_n) {
		ring_n--;
		CHECK(filled(ring[ring_n], ring_size[ring_n], fill_for(ring_size[ring_n])));
		secarena_free(ring[ring_n]);
	}
	CHECK_EQ(secarena_used(), 0);
	/* The exited threads gave their caches back; only ours is left to give. */
	thread_cache_flush_all(thread_cache_current);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.arena_held, 0);
	CHECK_EQ(st.in_use, 0);
	CHECK_EQ(st.failures, 0);
	return check_all_arenas();
}

static void *alloc_free_and_exit(void *arg)
{
	void *p[100];
	int i;

	(void)arg;
	for (i = 0; i < 100; i++)
		p[i] = secarena_malloc(64 + (size_t)i * 16);
	for (i = 0; i < 100; i++)
		secarena_free(p[i]);
	return NULL;
}

TEST(threads, exiting_thread_returns_its_cache)
{
	struct secarena_stats st;
	pthread_t t;

	CHECK_EQ(secarena_init(1 << 20, 16, 0), 0);
	CHECK_EQ(pthread_create(&t, NULL, alloc_free_and_exit, NULL), 0);
	pthread_join(t, NULL);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.arena_held, 0);
	CHECK_EQ(st.in_use, 0);
	CHECK(st.peak > 0);
	return 0;
}

static void *alloc_only(void *arg)
{
	void **out = arg;
	int i;

	for (i = 0; i < 64; i++)
		out[i] = secarena_malloc(100);
	return NULL;
}

TEST(threads, used_counts_across_threads)
{
	void *blocks[64];
	pthread_t t;
	int i;

	CHECK_EQ(secarena_init(1 << 20, 16, 0), 0);
	CHECK_EQ(pthread_create(&t, NULL, alloc_only, blocks), 0);
	pthread_join(t, NULL);
	CHECK_EQ(secarena_used(), 64 * 128);
	for (i = 0; i < 64; i++)
		secarena_free(blocks[i]);	/* freed by another thread than the allocator */
	CHECK_EQ(secarena_used(), 0);
	return 0;
}

#define SLICE_BLOCKS 200

struct slice_arg {
	pthread_barrier_t *ready;	/* both threads have a cache before either refills */
	unsigned char *p[SLICE_BLOCKS];
	unsigned int slice;
};

static void *alloc_in_slice(void *argp)
{
	struct slice_arg *arg = argp;
	int i;

	secarena_free(secarena_malloc(16));	/* attach this thread's cache */
	pthread_barrier_wait(arg->ready);
	arg->slice = thread_cache_current->slice;
	for (i = 0; i < SLICE_BLOCKS; i++) {
		arg->p[i] = secarena_malloc((size_t)16 << (i % 5));	/* 16 .. 256 */
		if (!arg->p[i])
			return (void *)1;
	}
	return NULL;
}

/*
 * Two threads on one arena get their blocks from slices of their own: no
 * 64-byte line of data and no line of the block map holds blocks of both,
 * so their malloc and free write no common cache line.
 */
TEST(threads, two_threads_take_blocks_from_slices_of_their_own)
{
	struct secarena_options opt = { .arena_size = 1 << 20, .max_arenas = 1 };
	struct slice_arg arg[2];
	pthread_barrier_t ready;
	struct buddy *bd;
	pthread_t t[2];
	void *ret;
	int i, j, k;

	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	bd = &allocator.arena[0]->buddy;
	CHECK_EQ(pthread_barrier_init(&ready, NULL, 2), 0);
	for (k = 0; k < 2; k++) {
		arg[k].ready = &ready;
		CHECK_EQ(pthread_create(&t[k], NULL, alloc_in_slice, &arg[k]), 0);
	}
	for (k = 0; k < 2; k++) {
		CHECK_EQ(pthread_join(t[k], &ret), 0);
		CHECK(ret == NULL);
	}
	pthread_barrier_destroy(&ready);
	CHECK(arg[0].slice != arg[1].slice);
	for (k = 0; k < 2; k++)
		for (i = 0; i < SLICE_BLOCKS; i++)
			CHECK_EQ((size_t)(arg[k].p[i] - bd->base) >> bd->slice_order,
				 arg[k].slice);
	for (i = 0; i < SLICE_BLOCKS; i++)
		for (j = 0; j < SLICE_BLOCKS; j++) {
			size_t a = (size_t)(arg[0].p[i] - bd->base);
			size_t b = (size_t)(arg[1].p[j] - bd->base);

			CHECK(a / 64 != b / 64);
			CHECK(a >> bd->min_order >> 6 != b >> bd->min_order >> 6);
		}
	for (k = 0; k < 2; k++)
		for (i = 0; i < SLICE_BLOCKS; i++)
			secarena_free(arg[k].p[i]);
	CHECK_EQ(secarena_used(), 0);
	buddy_check(bd);
	return 0;
}

struct fill_arg {
	void *p[64];
	size_t n;
	unsigned int slice;
};

static void *fill_arena(void *argp)
{
	struct fill_arg *arg = argp;

	while (arg->n < 64 && (arg->p[arg->n] = secarena_malloc(1024)) != NULL)
		arg->n++;
	arg->slice = thread_cache_current->slice;
	return NULL;
}

/* A thread whose slice is full takes blocks from the others: nothing fits less. */
TEST(threads, a_full_slice_borrows_from_the_others)
{
	struct secarena_options opt = { .arena_size = 1 << 16, .max_arenas = 1,
					.flags = SECARENA_F_NO_THREAD_CACHE };
	struct fill_arg arg = { .n = 0 };
	struct buddy *bd;
	unsigned char *mine;
	pthread_t t;
	size_t i;

	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	bd = &allocator.arena[0]->buddy;
	mine = secarena_malloc(1024);	/* the main thread holds a block of its slice */
	CHECK(mine != NULL);
	CHECK_EQ(pthread_create(&t, NULL, fill_arena, &arg), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK(arg.slice != thread_cache_current->slice);
	/* 64 KiB in 1 KiB blocks, less the main thread's: every one was handed out. */
	CHECK_EQ(arg.n, 63);
	/* The first eight filled the thread's own 8 KiB slice. */
	for (i = 0; i < 8; i++)
		CHECK_EQ((size_t)((unsigned char *)arg.p[i] - bd->base) >> bd->slice_order,
			 arg.slice);
	for (i = 0; i < arg.n; i++)
		secarena_free(arg.p[i]);
	secarena_free(mine);
	CHECK_EQ(secarena_used(), 0);
	buddy_check(bd);
	return 0;
}

#define GROW_BLOCKS 24
static pthread_barrier_t grow_barrier;

static void *grow(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	unsigned char *p[GROW_BLOCKS];
	int i, bad = 0;

	pthread_barrier_wait(&grow_barrier);
	for (i = 0; i < GROW_BLOCKS; i++) {
		p[i] = secarena_malloc(4096);
		if (!p[i])
			return (void *)1;
		memset(p[i], (int)id, 4096);
	}
	pthread_barrier_wait(&grow_barrier);
	for (i = 0; i < GROW_BLOCKS; i++) {
		bad |= !filled(p[i], 4096, (unsigned char)id);
		secarena_free(p[i]);
	}
	return (void *)(uintptr_t)bad;
}

TEST(threads, concurrent_growth)
{
	struct secarena_options opt = { .arena_size = 1 << 16, .max_arenas = 8 };
	struct secarena_stats st;
	pthread_t t[THREADS];
	void *bad;
	int i, failed = 0;

	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	pthread_barrier_init(&grow_barrier, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, grow, (void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], &bad);
		failed |= bad != NULL;
	}
	pthread_barrier_destroy(&grow_barrier);
	CHECK_EQ(failed, 0);
	CHECK_EQ(secarena_stats(&st), 0);
	/* 4 threads x 24 x 4 KiB = 384 KiB: at least 6 arenas of 64 KiB. */
	CHECK(st.arenas >= 6 && st.arenas <= 8);
	CHECK_EQ(st.in_use, 0);
	return check_all_arenas();
}

/*
 * Two threads free one uncached block at the same instant. The one that
 * loses aborts; its SIGABRT handler parks it, so that this child can check
 * that the other free returned and left the arena whole.
 */
static pthread_barrier_t race_barrier;
static void *race_block;
static int race_returned, race_aborted;

static void park_on_abort(int sig)
{
	(void)sig;
	__atomic_add_fetch(&race_aborted, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
}

static void *free_at_once(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&race_barrier);
	secarena_free(race_block);
	__atomic_add_fetch(&race_returned, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void concurrent_double_free(void *arg)
{
	unsigned int flags = (unsigned int)(uintptr_t)arg;
	struct timespec tick = { 0, 1000000 };
	size_t half = (size_t)1 << 19;
	pthread_t t[2];
	void *buddy;
	int i, returned, aborted;

	if (secarena_init(half * 2, 16, flags) != 0)
		_exit(2);
	/* Both halves held: the freed one stays a block of its own, unmerged. */
	race_block = secarena_malloc(half);
	buddy = secarena_malloc(half);
	if (!race_block || !buddy)
		_exit(2);
	signal(SIGABRT, park_on_abort);
	pthread_barrier_init(&race_barrier, NULL, 2);
	/* Detached: the parked one is never joined. */
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, free_at_once, NULL) != 0 ||
		    pthread_detach(t[i]) != 0)
			_exit(2);
	for (i = 0; i < 10000; i++) {
		if (__atomic_load_n(&race_returned, __ATOMIC_SEQ_CST) +
		    __atomic_load_n(&race_aborted, __ATOMIC_SEQ_CST) == 2)
			break;
		nanosleep(&tick, NULL);
	}
	/* Let the second free settle if it did not abort (the bug). */
	nanosleep(&tick, NULL);
	returned = __atomic_load_n(&race_returned, __ATOMIC_SEQ_CST);
	aborted = __atomic_load_n(&race_aborted, __ATOMIC_SEQ_CST);
	signal(SIGABRT, SIG_DFL);	/* a failed check below must end the child */
	pthread_mutex_lock(&allocator.arena[0]->lock);
	buddy_check(&allocator.arena[0]->buddy);
	pthread_mutex_unlock(&allocator.arena[0]->lock);
	if (secarena_used() != half)
		returned = -1;
	fprintf(stderr, "returned=%d aborted=%d\n", returned, aborted);
	_exit(returned == 1 && aborted == 1 ? 0 : 1);
}

static int racing_frees(unsigned int flags)
{
	char err[1024];
	int trial, status;

	for (trial = 0; trial < 16; trial++) {
		race_returned = race_aborted = 0;
		status = run_in_child(concurrent_double_free, (void *)(uintptr_t)flags, err,
				      sizeof(err));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
		    !strstr(err, "libsecarena: secarena_free(") || !strstr(err, "double free")) {
			tap_diag("trial %d: status %#x, stderr: %s", trial, status, err);
			return 1;
		}
	}
	return 0;
}

TEST(threads, concurrent_double_free_of_a_large_block)
{
	return racing_frees(0);
}

TEST(threads, concurrent_double_free_without_thread_cache)
{
	return racing_frees(SECARENA_F_NO_THREAD_CACHE);
}

/*
 * A block in two thread caches. Frees cannot put it there (each claims the
 * map byte with a compare-and-swap, see the race below), but a block map
 * written behind the allocator's back can: between the two frees the test
 * puts the map byte back to "held". The second cache to hand the block out
 * or give it back must abort instead of handing it out twice.
 */
enum twice_end { TWICE_HAND_OUT, TWICE_GIVE_BACK };
static int twice_turn;
static void *twice_block;

static void twice_wait(int turn)
{
	while (__atomic_load_n(&twice_turn, __ATOMIC_SEQ_CST) != turn)
		sched_yield();
}

static void twice_next(void)
{
	__atomic_add_fetch(&twice_turn, 1, __ATOMIC_SEQ_CST);
}

/* Turns: 0 first frees, 1 test resets the byte, 2 second frees, 3 first ends, 4 second ends. */
static void twice_freer(int first, enum twice_end end)
{
	twice_wait(first ? 0 : 2);
	secarena_free(twice_block);
	twice_next();
	twice_wait(first ? 3 : 4);
	if (end == TWICE_GIVE_BACK)
		thread_cache_flush_all(thread_cache_current);
	else if (secarena_malloc(64) != twice_block && first)
		_exit(3);		/* the first must get the block back */
	twice_next();
}

static void *twice_first(void *arg)
{
	twice_freer(1, (enum twice_end)(uintptr_t)arg);
	return NULL;
}

static void *twice_second(void *arg)
{
	twice_freer(0, (enum twice_end)(uintptr_t)arg);
	return NULL;
}

static void block_in_two_caches(void *arg)
{
	struct buddy *b;
	pthread_t t[2];
	size_t g;

	if (secarena_init(1 << 20, 16, 0) != 0)
		_exit(2);
	twice_block = secarena_malloc(64);
	if (!twice_block)
		_exit(2);
	twice_turn = 0;
	if (pthread_create(&t[0], NULL, twice_first, arg) != 0 ||
	    pthread_create(&t[1], NULL, twice_second, arg) != 0)
		_exit(2);
	twice_wait(1);
	b = &allocator.arena[0]->buddy;
	g = buddy_granule(b, twice_block);
	buddy_set_entry(b, g, MAP_ENTRY(BLOCK_USED, MAP_ORDER(buddy_entry(b, g))));
	twice_next();
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	_exit(0);		/* the bug: nothing noticed */
}

TEST(threads, block_in_two_caches_is_not_handed_out_twice)
{
	CHECK(dies_with_abort(block_in_two_caches, (void *)(uintptr_t)TWICE_HAND_OUT,
			      "in a thread cache is no longer marked cached (block map corrupted)"));
	return 0;
}

TEST(threads, block_in_two_caches_is_not_given_back_twice)
{
	CHECK(dies_with_abort(block_in_two_caches, (void *)(uintptr_t)TWICE_GIVE_BACK,
			      "in a thread cache is no longer marked cached (block map corrupted)"));
	return 0;
}

/*
 * The real race: two threads, each with a thread cache, free one cached-size
 * block at the same instant. The free claims the block's map byte with a
 * compare-and-swap, so exactly one of them gets through and caches the block
 * and the other aborts at its free, before it writes to the block: no data
 * race, so this runs under ThreadSanitizer too.
 */
static void *free_cached_at_once(void *arg)
{
	(void)arg;
	secarena_free(secarena_malloc(64));	/* a cache of its own */
	pthread_barrier_wait(&race_barrier);
	secarena_free(race_block);
	__atomic_add_fetch(&race_returned, 1, __ATOMIC_SEQ_CST);
	/* Kept alive: an exit would give the cache's blocks back. */
	for (;;)
		pause();
	return NULL;
}

/* Until cond() or about 10 s. */
static int wait_for(int (*cond)(void))
{
	struct timespec tick = { 0, 1000000 };
	int i;

	for (i = 0; i < 10000 && !cond(); i++)
		nanosleep(&tick, NULL);
	return cond();
}

static int both_freed(void)
{
	return __atomic_load_n(&race_returned, __ATOMIC_SEQ_CST) +
	       __atomic_load_n(&race_aborted, __ATOMIC_SEQ_CST) == 2;
}

static void concurrent_cached_double_free(void *arg)
{
	struct buddy *b;
	unsigned char e;
	pthread_t t[2];
	int i, returned, aborted;

	(void)arg;
	if (secarena_init(1 << 20, 16, 0) != 0)
		_exit(2);
	race_block = secarena_malloc(64);
	if (!race_block)
		_exit(2);
	signal(SIGABRT, park_on_abort);
	pthread_barrier_init(&race_barrier, NULL, 2);
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, free_cached_at_once, NULL) != 0 ||
		    pthread_detach(t[i]) != 0)
			_exit(2);
	if (!wait_for(both_freed))
		_exit(4);
	returned = __atomic_load_n(&race_returned, __ATOMIC_SEQ_CST);
	aborted = __atomic_load_n(&race_aborted, __ATOMIC_SEQ_CST);
	/* The winner's cache holds it, wiped: marked cached, in one cache only. */
	b = &allocator.arena[0]->buddy;
	e = buddy_entry(b, buddy_granule(b, race_block));
	fprintf(stderr, "returned=%d aborted=%d entry=%#x\n", returned, aborted, e);
	_exit(returned == 1 && aborted == 1 && e == MAP_ENTRY(BLOCK_CACHED, 6) ? 0 : 1);
}

TEST(threads, concurrent_double_free_of_a_cached_block)
{
	char err[1024];
	int trial, status;

	for (trial = 0; trial < 16; trial++) {
		race_returned = race_aborted = 0;
		status = run_in_child(concurrent_cached_double_free, NULL, err, sizeof(err));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
		    !strstr(err, "libsecarena: secarena_free(") || !strstr(err, "double free")) {
			tap_diag("trial %d: status %#x, stderr: %s", trial, status, err);
			return 1;
		}
	}
	return 0;
}

/*
 * The same race, made certain: thread A is stopped by a hardware watchpoint
 * right after its free has read the block's map byte ("held"), the main
 * thread frees the block meanwhile, then A goes on. A must abort at its
 * claim; a free that only stored "cached" would get through and put the
 * block in two caches.
 */
static pid_t held_tid;
static int held_stage, held_returned;
static char held_probe;
static void *held_block;

static void held_wait(int stage)
{
	while (__atomic_load_n(&held_stage, __ATOMIC_SEQ_CST) != stage)
		sched_yield();
}

static void *free_when_told(void *arg)
{
	(void)arg;
	secarena_free(secarena_malloc(64));	/* a cache of its own */
	held_tid = gettid();
	__atomic_store_n(&held_stage, 1, __ATOMIC_SEQ_CST);
	held_wait(2);
	(void)*(volatile char *)&held_probe;	/* do watchpoints fire here? */
	held_wait(3);
	secarena_free(held_block);
	__atomic_store_n(&held_returned, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

enum { HELD_NO_X86 = 77, HELD_NO_WATCHPOINTS = 78 };

static void free_between_check_and_claim(void *arg)
{
	struct watchpoint w;
	struct buddy *b;
	pthread_t t;
	int i, r;

	(void)arg;
	if (secarena_init(1 << 20, 16, 0) != 0)
		_exit(2);
	held_block = secarena_malloc(64);
	if (!held_block || pthread_create(&t, NULL, free_when_told, NULL) != 0)
		_exit(2);
	held_wait(1);
	b = &allocator.arena[0]->buddy;
	r = watchpoint_start(&w, held_tid, &b->block_map[buddy_granule(b, held_block)],
			     &held_probe);
	if (r > 0)
		_exit(HELD_NO_X86);
	if (r < 0)
		_exit(2);
	__atomic_store_n(&held_stage, 2, __ATOMIC_SEQ_CST);
	if (watchpoint_next(&w, 10000) != WATCH_PROBE)
		_exit(HELD_NO_WATCHPOINTS);
	__atomic_store_n(&held_stage, 3, __ATOMIC_SEQ_CST);
	if (watchpoint_next(&w, 10000) != WATCH_HIT)
		_exit(5);
	secarena_free(held_block);		/* while A is between check and claim */
	watchpoint_release(&w);
	for (i = 0; i < 1000 && !__atomic_load_n(&held_returned, __ATOMIC_SEQ_CST); i++)
		usleep(10000);
	fprintf(stderr, "the second free returned: block in two caches\n");
	_exit(0);
}

TEST(threads, double_free_between_check_and_claim_aborts)
{
	char err[1024];
	int status;

	held_stage = held_returned = 0;
	status = run_in_child(free_between_check_and_claim, NULL, err, sizeof(err));
	if (WIFEXITED(status) && WEXITSTATUS(status) == HELD_NO_X86)
		return tap_skip("hardware watchpoints through ptrace are set up for x86-64 only");
	if (WIFEXITED(status) && WEXITSTATUS(status) == HELD_NO_WATCHPOINTS)
		return tap_skip("hardware watchpoints do not fire on this machine");
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT ||
	    !strstr(err, "double free (another thread freed the block at the same time)")) {
		tap_diag("status %#x, stderr: %s", status, err);
		return 1;
	}
	return 0;
}

/*
 * fork() while another thread is half-way through handing out a cached
 * block: its map byte says "held" but it is still in that thread's bin. The
 * child gives back the bins of the threads it did not inherit; that block
 * must stay out (no one in the child holds it), not abort as "in two caches".
 */
static int popping_stage;
static void *popping_block;

static void *cache_one_and_wait(void *arg)
{
	(void)arg;
	popping_block = secarena_malloc(64);
	secarena_free(popping_block);		/* on top of this thread's bin */
	__atomic_store_n(&popping_stage, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&popping_stage, __ATOMIC_SEQ_CST) != 2)
		sched_yield();
	return NULL;				/* exit gives the bin back */
}

static void child_checks_arenas(void *arg)
{
	void *p;

	(void)arg;
	check_all_arenas();
	p = secarena_malloc(64);
	secarena_free(p);
	_exit(p ? 0 : 1);
}

TEST(threads, fork_child_leaves_out_a_block_being_handed_out)
{
	struct buddy *b;
	char err[512];
	pthread_t t;
	size_t g;
	int status;

	CHECK_EQ(secarena_init(1 << 20, 16, 0), 0);
	popping_stage = 0;
	CHECK_EQ(pthread_create(&t, NULL, cache_one_and_wait, NULL), 0);
	while (__atomic_load_n(&popping_stage, __ATOMIC_SEQ_CST) != 1)
		sched_yield();
	b = &allocator.arena[0]->buddy;
	g = buddy_granule(b, popping_block);
	buddy_set_entry(b, g, MAP_ENTRY(BLOCK_USED, MAP_ORDER(buddy_entry(b, g))));
	status = run_in_child(child_checks_arenas, NULL, err, sizeof(err));
	buddy_set_entry(b, g, MAP_ENTRY(BLOCK_CACHED, MAP_ORDER(buddy_entry(b, g))));
	__atomic_store_n(&popping_stage, 2, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		tap_diag("child: status %#x, stderr: %s", status, err);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(secarena_used(), 0);
	return check_all_arenas();
}
