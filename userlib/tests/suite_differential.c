// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Randomized differential test: a million operations (malloc, zalloc, free,
 * clear_free, realloc) against a reference model of the live blocks. After
 * every step: the block touched does not overlap any live block (an
 * occupancy bitmap per arena at 16-byte granules), is aligned, has the
 * expected actual_size, came zero-filled, and kept its contents; freed
 * blocks are wiped; used() equals the model's sum. Every 50000 steps the
 * buddy's own structure is checked whole and every live block re-read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "arena.h"
#include "secarena.h"
#include "tap.h"

#define MAX_LIVE 4096

struct live_block {
	unsigned char *p;
	size_t size, actual;
	unsigned char fill;
};

static struct live_block live[MAX_LIVE];
static size_t nlive, model_used;
static uint64_t *occupancy[ARENA_SLOTS];
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t expected_actual(size_t n)
{
	size_t a = 16;

	while (a < n)
		a <<= 1;
	return a;
}

static size_t draw_size(void)
{
	uint64_t r = rnd() % 100;

	if (r < 70)
		return rnd() % 513;
	if (r < 95)
		return 513 + rnd() % 3584;
	return 4097 + rnd() % 61440;
}

/* Set (or clear) the granules of [p, p + n); 0 if any was already (not) set. */
static int occupy(const unsigned char *p, size_t n, int set)
{
	size_t i;

	for (i = 0; i < allocator.narenas; i++) {
		struct arena *a = allocator.arena[i];
		size_t g, end;

		if (!arena_contains(a, p))
			continue;
		if (!occupancy[i])
			occupancy[i] = calloc(a->buddy.size / 16 / 64 + 1, sizeof(uint64_t));
		g = (size_t)(p - a->buddy.base) / 16;
		end = g + n / 16;
		for (; g < end; g++) {
			uint64_t bit = (uint64_t)1 << (g % 64);
			int was = (occupancy[i][g / 64] & bit) != 0;

			if (was == set)
				return 0;
			occupancy[i][g / 64] ^= bit;
		}
		return 1;
	}
	return 0;
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* A new block from the allocator: every invariant, then fill it. */
static int adopt(unsigned char *p, size_t size)
{
	struct live_block *b = &live[nlive];
	size_t actual = expected_actual(size);

	CHECK(p != NULL);
	CHECK(secarena_allocated(p));
	CHECK_EQ(secarena_actual_size(p), actual);
	CHECK_EQ((uintptr_t)p % (actual < 4096 ? actual : 4096), 0);
	CHECK(all_bytes(p, actual, 0));
	CHECK(occupy(p, actual, 1));
	b->p = p;
	b->size = size;
	b->actual = actual;
	b->fill = (unsigned char)(1 + rnd() % 255);
	memset(p, b->fill, size);
	nlive++;
	model_used += actual;
	return 0;
}

static int release(size_t i, int how)
{
	struct live_block b = live[i];

	CHECK(all_bytes(b.p, b.size, b.fill));
	CHECK(occupy(b.p, b.actual, 0));
	if (how == 0)
		secarena_free(b.p);
	else
		secarena_clear_free(b.p, b.size);
	/* Wiped: a cached block whole, a buddy-free one past its two links. */
	CHECK(all_bytes(b.p + 16, b.actual - 16, 0));
	live[i] = live[--nlive];
	model_used -= b.actual;
	return 0;
}

static int resize(size_t i)
{
	struct live_block b = live[i];
	size_t size = draw_size() | 1, keep = size < b.size ? size : b.size;
	unsigned char *q;

	CHECK(all_bytes(b.p, b.size, b.fill));
	CHECK(occupy(b.p, b.actual, 0));
	q = secarena_realloc(b.p, size);
	CHECK(q != NULL);
	CHECK_EQ(secarena_actual_size(q), q == b.p ? b.actual : expected_actual(size));
	CHECK(all_bytes(q, keep, b.fill));
	if (q != b.p)
		CHECK(all_bytes(b.p + 16, b.actual - 16, 0));
	model_used -= b.actual;
	b.actual = secarena_actual_size(q);
	CHECK(occupy(q, b.actual, 1));
	/* Past the kept bytes, the block reads as zero, moved or not. */
	if (q != b.p)
		CHECK(all_bytes(q + keep, b.actual - keep, 0));
	else
		CHECK(all_bytes(q + b.size, b.actual - b.size, 0));
	memset(q + keep, b.fill, size - keep);
	if (q == b.p && size < b.size)
		memset(q + size, 0, b.size - size);	/* keep "zero past size" true */
	b.p = q;
	b.size = size;
	live[i] = b;
	model_used += b.actual;
	return 0;
}

static int full_check(void)
{
	size_t i;

	for (i = 0; i < allocator.narenas; i++) {
		pthread_mutex_lock(&allocator.arena[i]->lock);
		buddy_check(&allocator.arena[i]->buddy);
		pthread_mutex_unlock(&allocator.arena[i]->lock);
	}
	for (i = 0; i < nlive; i++)
		CHECK(all_bytes(live[i].p, live[i].size, live[i].fill));
	return 0;
}

static int run_model(size_t steps, unsigned int flags, uint64_t seed)
{
	struct secarena_options opt = { .arena_size = 4 << 20, .max_arenas = 4, .flags = flags };
	size_t step, i;

	rng_state = seed;
	nlive = model_used = 0;
	for (i = 0; i < ARENA_SLOTS; i++) {
		free(occupancy[i]);	/* a failed run leaves its bitmaps */
		occupancy[i] = NULL;
	}
	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	for (step = 0; step < steps; step++) {
		uint64_t r = rnd() % 100;
		size_t target = 1000 + (step / 100000 % 2) * 1000;

		if (nlive == 0 || (nlive < MAX_LIVE && (nlive < target ? r < 60 : r < 40))) {
			size_t size = draw_size();

			if (adopt(r % 2 ? secarena_malloc(size) : secarena_zalloc(size), size))
				return 1;
		} else if (r < 80) {
			if (release(rnd() % nlive, r < 75 ? 0 : 1))
				return 1;
		} else if (resize(rnd() % nlive)) {
			return 1;
		}
		if (secarena_used() != model_used) {
			tap_diag("step %zu: used() %zu, model %zu", step, secarena_used(), model_used);
			return 1;
		}
		if (step % 50000 == 49999 && full_check())
			return 1;
	}
	while (nlive)
		if (release(nlive - 1, 0))
			return 1;
	CHECK_EQ(secarena_used(), 0);
	CHECK(full_check() == 0);
	for (i = 0; i < ARENA_SLOTS; i++) {
		free(occupancy[i]);
		occupancy[i] = NULL;
	}
	CHECK_EQ(secarena_done(), 0);
	return 0;
}

TEST(differential, million_ops_with_thread_cache)
{
	return run_model(test_scaled(1000000), 0, 0x243f6a8885a308d3ull);
}

TEST(differential, ops_without_thread_cache)
{
	return run_model(test_scaled(300000), SECARENA_F_NO_THREAD_CACHE, 0x13198a2e03707344ull);
}

/* Small arenas that fill: ENOMEM is the only failure, and nothing breaks. */
TEST(differential, full_arenas_fail_cleanly)
{
	struct secarena_options opt = { .arena_size = 1 << 16, .max_arenas = 2 };
	struct secarena_stats st;
	void *held[512];
	size_t n = 0, step, failures = 0, i;

	rng_state = 0xa4093822299f31d0ull;
	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	for (step = 0; step < test_scaled(200000); step++) {
		if (n < 512 && rnd() % 100 < 55) {
			size_t size = 1 + rnd() % 4096;
			void *p;

			errno = 0;
			p = secarena_malloc(size);
			if (!p) {
				CHECK_EQ(errno, ENOMEM);
				failures++;
				continue;
			}
			CHECK(secarena_allocated(p));
			held[n++] = p;
		} else if (n) {
			i = rnd() % n;
			secarena_free(held[i]);
			held[i] = held[--n];
		}
	}
	CHECK(failures > 0);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.failures, failures);
	CHECK_EQ(st.arenas, 2);
	while (n)
		secarena_free(held[--n]);
	CHECK_EQ(secarena_used(), 0);
	for (i = 0; i < allocator.narenas; i++)
		buddy_check(&allocator.arena[i]->buddy);
	return 0;
}
