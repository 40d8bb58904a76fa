// SPDX-License-Identifier: LGPL-2.1-or-later
/* The seed-compatible API (secure_malloc.h). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "secarena.h"
#include "secure_malloc.h"
#include "tap.h"

TEST(seed_api, init_and_support)
{
	CHECK_EQ(secure_allocation_support(), 0);
	CHECK_EQ(secure_malloc_init(1 << 16, 24, 64), 1);
	CHECK_EQ(secure_allocation_support(), 1);
	CHECK(strcmp(secarena_backend_name(), test_backend()) == 0);
	errno = 0;
	CHECK_EQ(secure_malloc_init(1 << 16, 32, 64), 0);
	CHECK_EQ(errno, EBUSY);
	/* mem_min_unit rounds up to a power of two: 24 -> 32. */
	start_secure_allocation();
	{
		void *p = secure_malloc(1);

		CHECK(secarena_allocated(p));
		CHECK_EQ(secarena_actual_size(p), 32);
		secure_free(p);
	}
	stop_secure_allocation();
	return 0;
}

TEST(seed_api, arena_only_while_started)
{
	void *heap, *arena;

	CHECK_EQ(secure_malloc_init(1 << 16, 16, 0), 1);
	heap = secure_malloc(100);
	CHECK(heap && !secarena_allocated(heap));
	CHECK_EQ(start_secure_allocation(), 0);
	arena = secure_malloc(100);
	CHECK(arena && secarena_allocated(arena));
	CHECK_EQ(stop_secure_allocation(), 1);
	/* Freed by owner, started or not. */
	secure_free(arena);
	secure_free(heap);
	secure_free(NULL);
	CHECK_EQ(secarena_used(), 0);
	return 0;
}

TEST(seed_api, start_stop_nest)
{
	void *p;

	CHECK_EQ(secure_malloc_init(1 << 16, 16, 0), 1);
	CHECK_EQ(start_secure_allocation(), 0);
	CHECK_EQ(start_secure_allocation(), 1);	/* nested */
	CHECK_EQ(stop_secure_allocation(), 1);
	p = secure_malloc(10);			/* still started once */
	CHECK(secarena_allocated(p));
	secure_free(p);
	CHECK_EQ(stop_secure_allocation(), 1);
	p = secure_malloc(10);
	CHECK(!secarena_allocated(p));
	secure_free(p);
	CHECK_EQ(stop_secure_allocation(), 0);	/* unbalanced stop: no effect */
	CHECK_EQ(start_secure_allocation(), 0);
	CHECK_EQ(stop_secure_allocation(), 1);
	return 0;
}

static void *other_thread(void *arg)
{
	void **out = arg;

	out[0] = secure_malloc(10);		/* not started in this thread */
	start_secure_allocation();
	out[1] = secure_malloc(10);
	stop_secure_allocation();
	return NULL;
}

TEST(seed_api, started_per_thread)
{
	void *got[2];
	pthread_t t;

	CHECK_EQ(secure_malloc_init(1 << 16, 16, 0), 1);
	start_secure_allocation();
	CHECK_EQ(pthread_create(&t, NULL, other_thread, got), 0);
	pthread_join(t, NULL);
	stop_secure_allocation();
	CHECK(!secarena_allocated(got[0]));
	CHECK(secarena_allocated(got[1]));	/* works from any thread, unlike the seed */
	secure_free(got[0]);
	secure_free(got[1]);
	return 0;
}

TEST(seed_api, calloc_strdup_realloc)
{
	unsigned char *p;
	char *s;
	size_t i;

	CHECK_EQ(secure_malloc_init(1 << 16, 16, 0), 1);
	start_secure_allocation();
	p = secure_calloc(10, 10);
	CHECK(p && secarena_allocated(p));
	for (i = 0; i < 100; i++)
		CHECK_EQ(p[i], 0);
	errno = 0;
	CHECK(secure_calloc(SIZE_MAX / 2, 3) == NULL);
	CHECK_EQ(errno, ENOMEM);
	s = secure_strdup("private key");
	CHECK(s && secarena_allocated(s) && strcmp(s, "private key") == 0);
	s = secure_realloc(s, 200);
	CHECK(s && secarena_allocated(s) && strcmp(s, "private key") == 0);
	secure_free(s);
	secure_free(p);
	stop_secure_allocation();

	/* A heap block moves into the arena when reallocated while started. */
	s = secure_strdup("heap copy");
	CHECK(s && !secarena_allocated(s));
	start_secure_allocation();
	s = secure_realloc(s, 64);
	CHECK(s && secarena_allocated(s) && strcmp(s, "heap copy") == 0);
	s = secure_realloc_clean(s, 10, 300);
	CHECK(s && secarena_allocated(s) && strcmp(s, "heap copy") == 0);
	secure_free(s);
	/* realloc(NULL) is malloc: from the arena while started. */
	s = secure_realloc(NULL, 16);
	CHECK(s && secarena_allocated(s));
	secure_free(s);
	stop_secure_allocation();
	/* Not started: plain heap realloc. */
	s = secure_realloc(NULL, 16);
	CHECK(s && !secarena_allocated(s));
	strcpy(s, "abc");
	s = secure_realloc_clean(s, 4, 4000);
	CHECK(s && !secarena_allocated(s) && strcmp(s, "abc") == 0);
	CHECK(secure_realloc_clean(s, 4, 0) == NULL);
	CHECK_EQ(secarena_used(), 0);
	return 0;
}

/*
 * Under FORK_NONE the child has no arena, but the blocks it inherited
 * must still be recognised: handing them to free(3) would crash.
 */
TEST(seed_api, fork_none_child_frees_inherited_blocks)
{
	char *p, *q;
	pid_t pid;
	int status;

	CHECK_EQ(secarena_init(1 << 16, 16, SECARENA_F_FORK_NONE), 0);
	start_secure_allocation();
	p = secure_malloc(64);
	q = secure_malloc(64);
	CHECK(p && q && secarena_allocated(p));
	memset(p, 0x5a, 64);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		secure_free(p);
		/* Its bytes are not in this process: nothing to copy. */
		errno = 0;
		_exit(secure_realloc(q, 128) == NULL && errno == EFAULT ? 0 : 3);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The parent's blocks are untouched. */
	CHECK_EQ(p[63], 0x5a);
	secure_free(p);
	secure_free(q);
	stop_secure_allocation();
	CHECK_EQ(secarena_used(), 0);
	return 0;
}

TEST(seed_api, flush_wipes_blocks_in_use)
{
	char *s;

	CHECK_EQ(secure_malloc_init(1 << 16, 16, 0), 1);
	start_secure_allocation();
	s = secure_strdup("to be flushed");
	stop_secure_allocation();
	flush_secure_arena();
	CHECK_EQ(s[0], 0);
	CHECK_EQ(s[12], 0);
	secure_free(s);
	return 0;
}

TEST(seed_api, before_init_is_the_heap)
{
	void *p;

	CHECK_EQ(start_secure_allocation(), 0);
	p = secure_malloc(10);			/* no arena: malloc, as the seed did */
	CHECK(p && !secarena_allocated(p));
	secure_free(p);
	CHECK_EQ(stop_secure_allocation(), 1);
	return 0;
}

TEST(seed_api, full_arena_under_strict_policy)
{
	void *p;

	CHECK_EQ(secure_malloc_init(1 << 12, 16, 0), 1);
	start_secure_allocation();
	p = secure_malloc(1 << 12);
	CHECK(p && secarena_allocated(p));
	/* secure_malloc_init allows growth to 8 arenas; past them, ENOMEM. */
	{
		void *more[8];
		int i, n = 0;

		for (i = 0; i < 8; i++) {
			more[i] = secure_malloc(1 << 12);
			if (more[i])
				n++;
		}
		CHECK_EQ(n, 7);
		CHECK(more[7] == NULL);
		CHECK_EQ(errno, ENOMEM);
		for (i = 0; i < 7; i++)
			secure_free(more[i]);
	}
	/* Counted heap fallback once asked for. */
	secarena_set_policy(SECARENA_POLICY_HEAP_FALLBACK);
	{
		void *q[8];
		void *h;
		int i;

		for (i = 0; i < 7; i++)
			q[i] = secure_malloc(1 << 12);
		h = secure_malloc(100);
		CHECK(h && !secarena_allocated(h));
		secure_free(h);				/* back through the fallback set */
		for (i = 0; i < 7; i++)
			secure_free(q[i]);
	}
	secarena_set_policy(SECARENA_POLICY_STRICT);
	secure_free(p);
	stop_secure_allocation();
	return 0;
}
