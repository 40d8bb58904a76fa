// SPDX-License-Identifier: LGPL-2.1-or-later
/* API semantics and every error path, on the backend SECARENA_BACKEND names. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocator.h"
#include "arena.h"
#include "secarena.h"
#include "secarena_status.h"
#include "tap.h"

extern const char *device_backend_path;

static int up(size_t size, unsigned int flags)
{
	return secarena_init(size, 16, flags);
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

static unsigned int expected_protection(const char *backend)
{
	if (strcmp(backend, "device") == 0)
		return SECARENA_PROT_LOCKED | SECARENA_PROT_NODUMP | SECARENA_PROT_GUARDS |
		       SECARENA_PROT_HIDDEN | SECARENA_PROT_KERNEL_WIPE;
	if (strcmp(backend, "memfd_secret") == 0)
		return SECARENA_PROT_LOCKED | SECARENA_PROT_NODUMP | SECARENA_PROT_GUARDS |
		       SECARENA_PROT_HIDDEN | SECARENA_PROT_NO_DIRECT_MAP |
		       SECARENA_PROT_KERNEL_WIPE;
	/* mlock, as root or within RLIMIT_MEMLOCK */
	return SECARENA_PROT_LOCKED | SECARENA_PROT_NODUMP | SECARENA_PROT_GUARDS;
}

TEST(api, init_reports_backend_and_protection)
{
	struct secarena_options opt = { .arena_size = 1 << 16 };
	struct secarena_status st;

	CHECK(secarena_backend_name() == NULL);
	CHECK_EQ(secarena_protection(), 0);
	CHECK_EQ(secarena_initialized(), 0);
	CHECK_EQ(secarena_init_ex(&opt, &st), 0);
	CHECK(strcmp(st.backend, test_backend()) == 0);
	CHECK(strcmp(secarena_backend_name(), test_backend()) == 0);
	CHECK_EQ(st.protection, expected_protection(test_backend()));
	CHECK_EQ(secarena_protection(), st.protection);
	CHECK_EQ(st.lock_errno, 0);
	CHECK_EQ(secarena_initialized(), 1);
	CHECK_EQ(secarena_done(), 0);
	CHECK(secarena_backend_name() == NULL);
	return 0;
}

TEST(api, init_twice_is_ebusy)
{
	CHECK_EQ(up(1 << 16, 0), 0);
	errno = 0;
	CHECK_EQ(up(1 << 16, 0), -1);
	CHECK_EQ(errno, EBUSY);
	CHECK_EQ(secarena_done(), 0);
	errno = 0;
	CHECK_EQ(secarena_done(), -1);
	CHECK_EQ(errno, EINVAL);
	return 0;
}

TEST(api, init_rejects_bad_arguments)
{
	struct secarena_options opt = { 0 };
	static const struct { size_t size, min; unsigned int flags; size_t max; } bad[] = {
		{ 1 << 16, 24, 0, 0 },			/* not a power of two */
		{ 1 << 16, 8, 0, 0 },			/* below 16 */
		{ 1 << 16, 1 << 17, 0, 0 },		/* above the arena */
		{ 1 << 16, 16, 1u << 20, 0 },		/* unknown flag */
		{ 1 << 16, 16, 3u << 5, 0 },		/* fork policy 3 */
		{ 1 << 16, 16, 0, 33 },			/* too many arenas */
		{ (size_t)1 << 41, 16, 0, 0 },		/* too large */
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		opt.arena_size = bad[i].size;
		opt.min_block = bad[i].min;
		opt.flags = bad[i].flags;
		opt.max_arenas = bad[i].max;
		errno = 0;
		CHECK_EQ(secarena_init_ex(&opt, NULL), -1);
		CHECK_EQ(errno, EINVAL);
		CHECK_EQ(secarena_initialized(), 0);
	}
	errno = 0;
	CHECK_EQ(secarena_init_ex(NULL, NULL), -1);
	CHECK_EQ(errno, EINVAL);
	/* Odd sizes round up: 5000 bytes is an 8 KiB arena. */
	opt.arena_size = 5000;
	opt.min_block = 0;
	opt.flags = 0;
	opt.max_arenas = 1;
	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	CHECK(secarena_malloc(8192) != NULL);
	errno = 0;
	CHECK(secarena_malloc(1) == NULL);
	CHECK_EQ(errno, ENOMEM);
	return 0;
}

static int init_errno_with_env(const char *name, const char *value, unsigned int flags)
{
	const char *old = getenv(name);
	char *saved = old ? strdup(old) : NULL;
	int r, err;

	setenv(name, value, 1);
	errno = 0;
	r = up(1 << 16, flags);
	err = errno;
	if (saved) {
		setenv(name, saved, 1);
		free(saved);
	} else {
		unsetenv(name);
	}
	if (r == 0) {
		secarena_done();
		return 0;
	}
	return err;
}

TEST(api, backend_and_require_from_env)
{
	CHECK_EQ(init_errno_with_env("SECARENA_BACKEND", "nonsense", 0), EINVAL);
	CHECK_EQ(init_errno_with_env("SECARENA_REQUIRE", "nonsense", 0), EINVAL);
	/* The device is required, but the flags name a weaker backend. */
	CHECK_EQ(init_errno_with_env("SECARENA_REQUIRE", "device", SECARENA_F_BACKEND_MLOCK),
		 EPERM);
	CHECK_EQ(init_errno_with_env("SECARENA_BACKEND", "mlock", 0), 0);
	if (access("/dev/secarena", F_OK) == 0)
		return 0;
	/* No device here: requiring it fails even with the fallback flag. */
	CHECK_EQ(init_errno_with_env("SECARENA_REQUIRE", "device", SECARENA_F_FALLBACK_BACKEND),
		 ENODEV);
	return 0;
}

TEST(api, device_missing_and_fallback_backends)
{
	const char *saved = device_backend_path;
	struct secarena_options opt = { .arena_size = 1 << 16 };
	struct secarena_status st;

	if (strcmp(test_backend(), "device") == 0)
		return tap_skip("the device is the backend under test");
	device_backend_path = "/nonexistent/secarena";
	opt.flags = SECARENA_F_BACKEND_DEVICE;
	errno = 0;
	CHECK_EQ(secarena_init_ex(&opt, &st), -1);
	CHECK_EQ(errno, ENODEV);
	opt.flags = SECARENA_F_REQUIRE_DEVICE | SECARENA_F_FALLBACK_BACKEND;
	errno = 0;
	CHECK_EQ(secarena_init_ex(&opt, &st), -1);
	CHECK_EQ(errno, ENODEV);
	/* Some other character device at the path: its ioctl says ENOTTY. */
	device_backend_path = "/dev/null";
	opt.flags = SECARENA_F_BACKEND_DEVICE;
	errno = 0;
	CHECK_EQ(secarena_init_ex(&opt, &st), -1);
	CHECK_EQ(errno, ENODEV);
	/* Fallback allowed: the next backend, and init says which. */
	opt.flags = SECARENA_F_BACKEND_DEVICE | SECARENA_F_FALLBACK_BACKEND;
	CHECK_EQ(secarena_init_ex(&opt, &st), 0);
	CHECK(strcmp(st.backend, "memfd_secret") == 0 || strcmp(st.backend, "mlock") == 0);
	CHECK(strcmp(secarena_backend_name(), st.backend) == 0);
	secarena_done();
	device_backend_path = saved;
	return 0;
}

TEST(api, calls_before_init)
{
	CHECK_EQ(secarena_used(), 0);
	CHECK_EQ(secarena_allocated(&errno), 0);
	CHECK_EQ(secarena_get_policy(), SECARENA_POLICY_STRICT);
	errno = 0;
	CHECK(secarena_malloc(10) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(secarena_set_policy(SECARENA_POLICY_HEAP_FALLBACK), 0);
	{
		struct secarena_stats st;
		size_t before;
		char *p;

		CHECK_EQ(secarena_stats(&st), 0);
		before = st.fallbacks;
		p = secarena_malloc(10);
		CHECK(p != NULL);
		CHECK(all_zero(p, 10));
		CHECK_EQ(secarena_allocated(p), 0);
		CHECK(secarena_actual_size(p) >= 10);
		CHECK_EQ(secarena_stats(&st), 0);
		CHECK_EQ(st.fallbacks, before + 1);
		CHECK_EQ(st.fallback_in_use, 1);
		memset(p, 'k', 10);
		secarena_free(p);
		CHECK_EQ(secarena_stats(&st), 0);
		CHECK_EQ(st.fallback_in_use, 0);
	}
	CHECK_EQ(secarena_set_policy(SECARENA_POLICY_STRICT), 0);
	errno = 0;
	CHECK_EQ(secarena_set_policy((enum secarena_policy)7), -1);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK_EQ(secarena_stats(NULL), -1);
	CHECK_EQ(errno, EINVAL);
	secarena_free(NULL);
	secarena_clear_free(NULL, 5);
	CHECK_EQ(secarena_actual_size(NULL), 0);
	return 0;
}

TEST(api, sizes_round_up_to_powers_of_two)
{
	static const size_t req[] = { 0, 1, 15, 16, 17, 31, 32, 33, 1000, 1024, 1025,
				      4095, 4096, 4097, 65536, 65537 };
	static const size_t want[] = { 16, 16, 16, 16, 32, 32, 32, 64, 1024, 1024, 2048,
				       4096, 4096, 8192, 65536, 131072 };
	void *p[16];
	size_t i, total = 0;

	CHECK_EQ(up(1 << 20, 0), 0);
	for (i = 0; i < 16; i++) {
		p[i] = secarena_malloc(req[i]);
		CHECK(p[i] != NULL);
		CHECK_EQ(secarena_actual_size(p[i]), want[i]);
		/* Aligned to its size up to a page. */
		CHECK_EQ((uintptr_t)p[i] % (want[i] < 4096 ? want[i] : 4096), 0);
		total += want[i];
		CHECK_EQ(secarena_used(), total);
	}
	for (i = 0; i < 16; i++) {
		total -= want[i];
		secarena_free(p[i]);
		CHECK_EQ(secarena_used(), total);
	}
	/* The whole arena in one block, then nothing more. */
	p[0] = secarena_malloc(1 << 20);
	CHECK(p[0] != NULL);
	errno = 0;
	CHECK(secarena_malloc((1 << 20) + 1) == NULL);
	CHECK_EQ(errno, ENOMEM);
	secarena_free(p[0]);
	return 0;
}

TEST(api, blocks_are_zero_and_freed_blocks_wiped)
{
	unsigned char *small, *large, *again;

	CHECK_EQ(up(1 << 20, 0), 0);
	/* Small: through the thread cache. */
	small = secarena_malloc(100);
	CHECK(small && all_zero(small, 128));
	memset(small, 0xa5, 128);
	secarena_free(small);
	CHECK(all_zero(small, 128));	/* still mapped: the arena's own memory */
	again = secarena_malloc(100);
	CHECK(again == small);
	CHECK(all_zero(again, 128));
	secarena_free(again);
	/* Large: straight back to the buddy, only its free-list links remain. */
	large = secarena_malloc(100000);
	CHECK(large && all_zero(large, 131072));
	memset(large, 0x5a, 131072);
	secarena_free(large);
	CHECK(all_zero(large + 16, 131072 - 16));
	again = secarena_zalloc(131072);
	CHECK(again && all_zero(again, 131072));
	secarena_free(again);
	return 0;
}

TEST(api, realloc_semantics)
{
	unsigned char *p, *q;
	size_t i;

	CHECK_EQ(up(1 << 20, 0), 0);
	p = secarena_realloc(NULL, 40);
	CHECK(p && secarena_actual_size(p) == 64);
	for (i = 0; i < 40; i++)
		p[i] = (unsigned char)i;
	q = secarena_realloc(p, 60);		/* fits: same block */
	CHECK(q == p);
	q = secarena_realloc(p, 1000);		/* grows: moves, keeps the bytes */
	CHECK(q && q != p && secarena_actual_size(q) == 1024);
	for (i = 0; i < 40; i++)
		CHECK_EQ(q[i], i);
	CHECK(all_zero(q + 64, 1024 - 64));
	CHECK(all_zero(p, 64));			/* the old block was wiped */
	p = secarena_realloc(q, 100);		/* far smaller: moves down */
	CHECK(p && p != q && secarena_actual_size(p) == 128);
	for (i = 0; i < 40; i++)
		CHECK_EQ(p[i], i);
	CHECK_EQ(secarena_used(), 128);
	errno = 0;
	q = secarena_realloc(p, (1 << 20) + 1);	/* impossible: the old block stays */
	CHECK(q == NULL);
	CHECK_EQ(errno, ENOMEM);
	for (i = 0; i < 40; i++)
		CHECK_EQ(p[i], i);
	CHECK(secarena_realloc(p, 0) == NULL);	/* size 0 frees */
	CHECK_EQ(secarena_used(), 0);
	return 0;
}

TEST(api, clear_free_and_wipe_in_use)
{
	unsigned char *p, *q;

	CHECK_EQ(up(1 << 20, 0), 0);
	p = secarena_malloc(50);
	q = secarena_malloc(3000);
	memset(p, 1, 50);
	memset(q, 2, 3000);
	secarena_wipe_in_use();
	CHECK(all_zero(p, 64) && all_zero(q, 4096));
	CHECK_EQ(secarena_used(), 64 + 4096);
	memset(q, 3, 4096);
	secarena_clear_free(q, 4096);
	CHECK(all_zero(q, 4096));
	secarena_clear_free(p, 0);
	CHECK_EQ(secarena_used(), 0);
	return 0;
}

TEST(api, stats_count_exactly)
{
	struct secarena_stats st;
	void *p[10];
	int i;

	CHECK_EQ(up(1 << 20, SECARENA_F_NO_THREAD_CACHE), 0);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.in_use, 0);
	CHECK_EQ(st.arenas, 1);
	CHECK_EQ(st.capacity, 1 << 20);
	CHECK_EQ(st.max_arenas, 8);
	CHECK_EQ(st.failures, 0);
	for (i = 0; i < 10; i++)
		p[i] = secarena_malloc(1000);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.in_use, 10 * 1024);
	CHECK_EQ(st.arena_held, 10 * 1024);	/* no cache: held is in use */
	CHECK_EQ(st.peak, 10 * 1024);
	for (i = 0; i < 10; i++)
		secarena_free(p[i]);
	errno = 0;
	CHECK(secarena_malloc(2 << 20) == NULL);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.in_use, 0);
	CHECK_EQ(st.arena_held, 0);
	CHECK_EQ(st.peak, 10 * 1024);
	CHECK_EQ(st.failures, 1);
	return 0;
}

TEST(api, thread_cache_holds_only_what_it_should)
{
	struct secarena_stats st;
	void *p;

	CHECK_EQ(up(1 << 20, 0), 0);
	p = secarena_malloc(64);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.in_use, 64);
	/* A refill takes half a bin: the rest waits in the cache. */
	CHECK(st.arena_held > 64);
	CHECK_EQ(st.arena_held % 64, 0);
	secarena_free(p);
	CHECK_EQ(secarena_used(), 0);
	return 0;
}

TEST(api, growth_up_to_max_arenas)
{
	struct secarena_options opt = { .arena_size = 1 << 16, .max_arenas = 3 };
	struct secarena_stats st;
	void *p[4];
	int i;

	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	for (i = 0; i < 3; i++) {
		p[i] = secarena_malloc(1 << 16);
		CHECK(p[i] != NULL);
		CHECK(secarena_allocated(p[i]));
		CHECK_EQ(secarena_stats(&st), 0);
		CHECK_EQ(st.arenas, (size_t)i + 1);
	}
	errno = 0;
	CHECK(secarena_malloc(16) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.failures, 1);
	CHECK_EQ(st.capacity, 3 << 16);
	/* Counted fallback to the heap once full. */
	CHECK_EQ(secarena_set_policy(SECARENA_POLICY_HEAP_FALLBACK), 0);
	p[3] = secarena_malloc(100);
	CHECK(p[3] != NULL);
	CHECK_EQ(secarena_allocated(p[3]), 0);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.fallback_in_use, 1);
	CHECK_EQ(st.failures, 1);
	for (i = 0; i < 4; i++)
		secarena_free(p[i]);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.fallback_in_use, 0);
	CHECK_EQ(st.in_use, 0);
	CHECK_EQ(st.arenas, 3);			/* arenas stay until done */
	/* Room again: the arenas serve, no more fallbacks. */
	p[0] = secarena_malloc(1 << 16);
	CHECK(p[0] && secarena_allocated(p[0]));
	secarena_free(p[0]);
	CHECK_EQ(secarena_set_policy(SECARENA_POLICY_STRICT), 0);
	return 0;
}

TEST(api, heap_fallback_flag_sets_policy)
{
	struct secarena_stats st, st2;
	void *p;

	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(up(1 << 16, SECARENA_F_HEAP_FALLBACK), 0);
	CHECK_EQ(secarena_get_policy(), SECARENA_POLICY_HEAP_FALLBACK);
	p = secarena_malloc(1 << 20);		/* larger than any arena */
	CHECK(p != NULL && !secarena_allocated(p));
	CHECK_EQ(secarena_owns(p), 1);		/* a counted fallback block */
	CHECK_EQ(secarena_stats(&st2), 0);
	CHECK_EQ(st2.fallbacks, st.fallbacks + 1);
	secarena_clear_free(p, 1 << 20);
	secarena_done();
	CHECK_EQ(up(1 << 16, 0), 0);
	CHECK_EQ(secarena_get_policy(), SECARENA_POLICY_STRICT);
	return 0;
}

TEST(api, allocated_says_which_pointers_are_ours)
{
	char stack;
	char *heap = malloc(8), *p;

	CHECK_EQ(up(1 << 16, 0), 0);
	p = secarena_malloc(100);
	CHECK_EQ(secarena_allocated(p), 1);
	CHECK_EQ(secarena_allocated(p + 50), 1);
	CHECK_EQ(secarena_allocated(heap), 0);
	CHECK_EQ(secarena_allocated(&stack), 0);
	CHECK_EQ(secarena_allocated(NULL), 0);
	CHECK_EQ(secarena_owns(p), 1);
	CHECK_EQ(secarena_owns(heap), 0);
	CHECK_EQ(secarena_owns(&stack), 0);
	CHECK_EQ(secarena_owns(NULL), 0);
	secarena_free(p);
	free(heap);
	return 0;
}

TEST(api, done_wipes_and_unmaps)
{
	unsigned char *p;
	struct arena *a;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	CHECK_EQ(up(1 << 16, 0), 0);
	p = secarena_malloc(page);
	memset(p, 7, page);
	a = allocator.arena[0];
	CHECK_EQ(secarena_done(), 0);
	/* The data and the metadata mapping are gone. */
	errno = 0;
	CHECK_EQ(msync((void *)((uintptr_t)p & ~(page - 1)), page, MS_ASYNC), -1);
	CHECK_EQ(errno, ENOMEM);
	errno = 0;
	CHECK_EQ(msync(a, page, MS_ASYNC), -1);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(secarena_allocated(p), 0);
	CHECK_EQ(secarena_used(), 0);
	/* And it comes up again, with a fresh thread cache. */
	CHECK_EQ(up(1 << 16, 0), 0);
	p = secarena_malloc(10);
	CHECK(p && secarena_used() == 16);
	secarena_free(p);
	return 0;
}

/* ---- misuse aborts with a message ---- */

static void double_free_small(void *arg)
{
	void *p;

	(void)arg;
	up(1 << 16, 0);
	p = secarena_malloc(10);
	secarena_free(p);
	secarena_free(p);
}

static void double_free_large(void *arg)
{
	void *p;

	(void)arg;
	up(1 << 16, 0);
	p = secarena_malloc(20000);
	secarena_free(p);
	secarena_free(p);
}

static void double_free_uncached(void *arg)
{
	void *p;

	(void)arg;
	up(1 << 16, SECARENA_F_NO_THREAD_CACHE);
	p = secarena_malloc(10);
	secarena_free(p);
	secarena_free(p);
}

static void free_inside_block(void *arg)
{
	char *p;

	up(1 << 16, 0);
	p = secarena_malloc(256);
	secarena_free(p + (size_t)arg);
}

static void free_heap_pointer(void *arg)
{
	(void)arg;
	up(1 << 16, 0);
	secarena_free(malloc(10));
}

static void free_heap_pointer_with_fallback(void *arg)
{
	(void)arg;
	up(1 << 16, SECARENA_F_HEAP_FALLBACK);
	secarena_free(malloc(10));
}

static void free_stack_pointer(void *arg)
{
	char buf[32];

	(void)arg;
	up(1 << 16, 0);
	secarena_free(buf);
}

static void actual_size_inside(void *arg)
{
	char *p;

	(void)arg;
	up(1 << 16, 0);
	p = secarena_malloc(256);
	secarena_actual_size(p + 16);
}

static void actual_size_freed(void *arg)
{
	char *p;

	(void)arg;
	up(1 << 16, 0);
	p = secarena_malloc(256);
	secarena_free(p);
	secarena_actual_size(p);
}

static void realloc_foreign(void *arg)
{
	(void)arg;
	up(1 << 16, 0);
	secarena_realloc(malloc(10), 100);
}

static void clear_free_too_long(void *arg)
{
	(void)arg;
	up(1 << 16, 0);
	secarena_clear_free(secarena_malloc(100), 129);
}

/* Overwrite the free-list link inside a freed block (an overrun would). */
static void corrupt_free_link(void *arg)
{
	unsigned char *a, *b;

	up(1 << 16, 0);
	a = secarena_malloc(8192);
	b = secarena_malloc(8192);
	secarena_free(a);		/* on the free list of 8 KiB blocks */
	memset(a, (int)(uintptr_t)arg, 16);
	secarena_free(b);		/* merging with a follows a's links */
}

static void corrupt_free_link_on_alloc(void *arg)
{
	unsigned char *a, *b, *c;

	(void)arg;
	up(1 << 16, 0);
	a = secarena_malloc(8192);
	b = secarena_malloc(8192);
	c = secarena_malloc(8192);
	secarena_free(a);
	secarena_free(c);
	/* a heads the list now; make its next link point into b, a used block */
	memcpy(a, &b, sizeof(b));
	secarena_malloc(8192);
	secarena_malloc(8192);
}

TEST(api, misuse_aborts_with_a_message)
{
	CHECK(dies_with_abort(double_free_small, NULL, "double free (the block is in a thread cache)"));
	CHECK(dies_with_abort(double_free_large, NULL, "double free (the block is free)"));
	CHECK(dies_with_abort(double_free_uncached, NULL, "double free (the block is free)"));
	CHECK(dies_with_abort(free_inside_block, (void *)16, "not the start of a block"));
	CHECK(dies_with_abort(free_inside_block, (void *)1, "not the start of a block"));
	CHECK(dies_with_abort(free_inside_block, (void *)128, "not the start of a block"));
	CHECK(dies_with_abort(free_heap_pointer, NULL, "pointer not from secarena"));
	CHECK(dies_with_abort(free_heap_pointer_with_fallback, NULL, "pointer not from secarena"));
	CHECK(dies_with_abort(free_stack_pointer, NULL, "pointer not from secarena"));
	CHECK(dies_with_abort(actual_size_inside, NULL, "not the start of a block"));
	CHECK(dies_with_abort(actual_size_freed, NULL, "double free"));
	CHECK(dies_with_abort(realloc_foreign, NULL, "pointer not from secarena"));
	CHECK(dies_with_abort(clear_free_too_long, NULL, "longer than the block"));
	CHECK(dies_with_abort(corrupt_free_link, (void *)0x41, "corrupted"));
	CHECK(dies_with_abort(corrupt_free_link, (void *)0, "corrupted"));
	CHECK(dies_with_abort(corrupt_free_link_on_alloc, NULL, "corrupted"));
	return 0;
}

/*
 * Corruption of the allocator's metadata, done in a child of a process that
 * is already up (so the parent knows the addresses the message must name).
 */
struct corruption {
	unsigned char *a, *b;	/* a: freed, on its free list; b: held */
	int how;
};

static void corrupt_metadata(void *arg)
{
	struct corruption *c = arg;
	struct buddy *bd = &allocator.arena[0]->buddy;

	switch (c->how) {
	case 0:		/* an overrun over the free-list links of a free block */
		memset(c->a, 0x41, 16);
		secarena_free(c->b);		/* merging follows a's links */
		break;
	case 1:		/* a block-map byte: b's entry claims a larger order */
		bd->block_map[buddy_granule(bd, c->b)] = MAP_ENTRY(BLOCK_USED, 15);
		secarena_free(c->b);
		break;
	default:	/* a free-list head in the arena structure */
		bd->free_head[13][0] += 8192;
		secarena_malloc(8192);
		break;
	}
}

TEST(api, corrupted_metadata_aborts_with_the_documented_message)
{
	struct corruption c;
	unsigned char *base;
	char want[200];

	/* 8 KiB blocks at 0 (a) and 8 KiB (b) of a 64 KiB arena, uncached. */
	CHECK_EQ(up(1 << 16, SECARENA_F_NO_THREAD_CACHE), 0);
	base = allocator.arena[0]->buddy.base;
	c.a = secarena_malloc(8192);
	c.b = secarena_malloc(8192);
	CHECK(c.a == base && c.b == base + 8192);
	secarena_free(c.a);
	c.how = 0;
	snprintf(want, sizeof(want), "libsecarena: free list of order 13 corrupted at %p: "
		 "next link names no free block (heap overrun into a freed block?)\n",
		 (void *)base);
	CHECK(dies_with_abort(corrupt_metadata, &c, want));
	c.how = 1;
	snprintf(want, sizeof(want), "libsecarena: block map corrupted at %p\n", (void *)c.b);
	CHECK(dies_with_abort(corrupt_metadata, &c, want));
	c.how = 2;
	snprintf(want, sizeof(want), "libsecarena: free list of order 13 corrupted at %p: "
		 "head link names no free block (heap overrun into a freed block?)\n",
		 (void *)base);
	CHECK(dies_with_abort(corrupt_metadata, &c, want));
	/* The parent's arena was never touched. */
	buddy_check(&allocator.arena[0]->buddy);
	secarena_free(c.b);
	return 0;
}

static void touch_before(void *arg)
{
	volatile unsigned char *p;

	(void)arg;
	up(1 << 16, 0);
	p = secarena_malloc(1 << 16);		/* the whole data area */
	p[-1] = 1;
}

static void touch_after(void *arg)
{
	volatile unsigned char *p;

	(void)arg;
	up(1 << 16, 0);
	p = secarena_malloc(1 << 16);
	p[1 << 16] = 1;
}

static void touch_metadata_guard(void *arg)
{
	volatile unsigned char *m;

	(void)arg;
	up(1 << 16, 0);
	m = (volatile unsigned char *)allocator.arena[0];
	m[-1] = 1;
}

TEST(api, guard_pages_fault)
{
	CHECK(dies_with_segv(touch_before, NULL));
	CHECK(dies_with_segv(touch_after, NULL));
	CHECK(dies_with_segv(touch_metadata_guard, NULL));
	return 0;
}

TEST(api, metadata_lives_outside_the_data_area)
{
	struct arena *a;
	uintptr_t lo, hi, m;

	CHECK_EQ(up(1 << 16, 0), 0);
	a = allocator.arena[0];
	lo = (uintptr_t)a->region.map;
	hi = lo + a->region.map_len;
	m = (uintptr_t)a;
	CHECK(m + a->meta_len <= lo || m >= hi);
	CHECK((uintptr_t)a->buddy.block_map >= m && (uintptr_t)a->buddy.block_map < m + a->meta_len);
	return 0;
}

/* What another process (here: our child) can read of a block. */
static int child_reads(pid_t parent, void *addr, int *err)
{
	char buf[16];
	struct iovec local = { buf, sizeof(buf) }, remote = { addr, sizeof(buf) };
	ssize_t r = process_vm_readv(parent, &local, 1, &remote, 1, 0);

	*err = r < 0 ? errno : 0;
	return r == (ssize_t)sizeof(buf) && memcmp(buf, "secret-secret-se", 16) == 0;
}

TEST(api, hidden_from_other_readers)
{
	char *p, path[64];
	int fd, pipefd[2], results[4] = { 0 };
	pid_t parent = getpid(), pid;
	int status;

	CHECK_EQ(up(1 << 16, SECARENA_F_FORK_NONE), 0);
	p = secarena_malloc(64);
	memcpy(p, "secret-secret-secret", 20);
	CHECK_EQ(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0) {
		results[0] = child_reads(parent, p, &results[1]);
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)parent);
		fd = open(path, O_RDONLY);
		{
			char buf[16];

			results[2] = pread(fd, buf, 16, (off_t)(uintptr_t)p) == 16;
			results[3] = results[2] ? 0 : errno;
		}
		if (write(pipefd[1], results, sizeof(results)) < 0)
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	CHECK_EQ(read(pipefd[0], results, sizeof(results)), (ssize_t)sizeof(results));
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	if (secarena_protection() & SECARENA_PROT_HIDDEN) {
		CHECK_EQ(results[0], 0);
		CHECK_EQ(results[1], EFAULT);
		CHECK_EQ(results[2], 0);
		CHECK_EQ(results[3], EIO);
	} else {
		/* mlock: the weakest backend really is readable from outside. */
		CHECK_EQ(results[0], 1);
		CHECK_EQ(results[2], 1);
	}
	secarena_free(p);
	return 0;
}

/* In a child without CAP_IPC_LOCK and with a 64 KiB RLIMIT_MEMLOCK. */
static void without_lock_rights(void *arg)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	struct rlimit small = { 64 << 10, 64 << 10 };
	struct secarena_options opt = { .arena_size = 1 << 20 };
	struct secarena_status st;
	int *out = arg, r;

	syscall(SYS_capget, &hdr, data);
	data[0].effective &= ~(1u << CAP_IPC_LOCK);
	syscall(SYS_capset, &hdr, data);
	setrlimit(RLIMIT_MEMLOCK, &small);
	r = secarena_init_ex(&opt, &st);
	if (r == 0) {
		fprintf(stderr, "init=ok prot=%u lock_errno=%d\n", st.protection, st.lock_errno);
		secarena_done();
	} else {
		fprintf(stderr, "init=fail errno=%d\n", errno);
	}
	opt.flags = SECARENA_F_REQUIRE_LOCKED;
	r = secarena_init_ex(&opt, &st);
	fprintf(stderr, "strict=%s errno=%d\n", r == 0 ? "ok" : "fail", r == 0 ? 0 : errno);
	(void)out;
}

TEST(api, lock_failure_is_reported)
{
	char err[256];
	int status;

	if (geteuid() != 0)
		return tap_skip("needs root to drop CAP_IPC_LOCK for the check");
	status = run_in_child(without_lock_rights, NULL, err, sizeof(err));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (strcmp(test_backend(), "mlock") == 0) {
		/* mlock fails, init succeeds and says so; the strict flag refuses. */
		CHECK(strstr(err, "init=ok prot=6 lock_errno=") != NULL);
		CHECK(strstr(err, "lock_errno=0") == NULL);
		CHECK(strstr(err, "strict=fail") != NULL);
	} else {
		/* memfd_secret and the device pin at mmap: over the limit, init fails. */
		CHECK(strstr(err, "init=fail errno=11") != NULL);
		CHECK(strstr(err, "strict=fail errno=11") != NULL);
	}
	return 0;
}

TEST(api, no_thread_cache_flag)
{
	struct secarena_stats st;
	void *p, *q;

	CHECK_EQ(up(1 << 16, SECARENA_F_NO_THREAD_CACHE), 0);
	p = secarena_malloc(10);
	q = secarena_malloc(10);
	CHECK(p && q && p != q);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.arena_held, 32);
	secarena_free(p);
	secarena_free(q);
	CHECK_EQ(secarena_stats(&st), 0);
	CHECK_EQ(st.arena_held, 0);
	CHECK_EQ(st.in_use, 0);
	return 0;
}

/* The status page, found as an administrator's tool finds it: in the maps. */
static const struct secarena_status_page *find_status_page(void)
{
	const char *name = "/memfd:" SECARENA_STATUS_NAME " (deleted)";
	const struct secarena_status_page *found = NULL;
	unsigned long start;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int off;

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		off = 0;
		if (sscanf(line, "%lx-%*x %*s %*s %*s %*s %n", &start, &off) == 1 && off &&
		    !strcmp(line + off, name))
			found = (const struct secarena_status_page *)start;
	}
	fclose(f);
	return found;
}

TEST(api, status_page_tells_arenas_and_refusals)
{
	const struct secarena_status_page *sp;
	struct secarena_options opt = {
		.arena_size = 1 << 16, .min_block = 16, .max_arenas = 2,
	};
	uint64_t refused;
	void *a, *b;

	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	sp = find_status_page();
	CHECK(sp != NULL);
	CHECK(!memcmp(sp->magic, SECARENA_STATUS_MAGIC, 8));
	CHECK_EQ(sp->version, SECARENA_STATUS_VERSION);
	CHECK_EQ(sp->size, sizeof(*sp));
	CHECK_EQ(sp->arena_size, 1 << 16);
	CHECK_EQ(sp->max_arenas, 2);
	CHECK_EQ(sp->arenas, 1);
	CHECK_EQ(sp->capacity, 1 << 16);
	CHECK(!strcmp(sp->backend, secarena_backend_name()));
	refused = sp->refused;		/* the page outlives done(): counts go on */

	/* Larger than an arena: refused, the size noted. */
	CHECK(secarena_malloc((1 << 16) + 1) == NULL);
	CHECK_EQ(sp->refused, refused + 1);
	CHECK_EQ(sp->last_refused_size, (1 << 16) + 1);
	/* Two whole arenas fill both; the third block is refused. */
	a = secarena_malloc(1 << 16);
	b = secarena_malloc(1 << 16);
	CHECK(a && b);
	CHECK_EQ(sp->arenas, 2);
	CHECK_EQ(sp->capacity, 2 << 16);
	CHECK(secarena_malloc(64) == NULL);
	CHECK_EQ(sp->refused, refused + 2);
	CHECK_EQ(sp->last_refused_size, 64);
	CHECK_EQ(sp->held_at_last_refusal, 2 << 16);
	secarena_free(a);
	secarena_free(b);
	CHECK_EQ(secarena_done(), 0);
	CHECK(find_status_page() == sp);	/* one page per process */
	CHECK_EQ(sp->arenas, 0);
	CHECK_EQ(sp->capacity, 0);
	return 0;
}
