// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: concurrency. Threads race ioctl, mmap, munmap, close and fork
 * on one file, and churn arenas of their own side by side. Every call has
 * an exact set of allowed outcomes; at the end the sysfs counters are
 * back where they started. Time-bounded (a few seconds) because the VM
 * runs under TCG.
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "secarena_helpers.h"

#define PS		page_size()
#define NR_WORKERS	4
#define RACE_SECONDS	3
#define CHURN_SECONDS	2
#define RACE_PAGES	4

/*
 * ASSERT_* must not run off the main thread: workers record the first
 * failure here and the test asserts none happened.
 */
struct failures {
	pthread_mutex_t lock;
	atomic_int count;
	char first[256];
};

static void record_failure(struct failures *f, const char *what, int line,
			   int err, int worker, long round)
{
	if (atomic_fetch_add(&f->count, 1) == 0) {
		pthread_mutex_lock(&f->lock);
		snprintf(f->first, sizeof(f->first),
			 "line %d, worker %d, round %ld: %s (errno %d)",
			 line, worker, round, what, err);
		pthread_mutex_unlock(&f->lock);
	}
}

#define WORKER_CHECK(f, worker, round, cond) do {			\
	if (!(cond))							\
		record_failure(f, #cond, __LINE__, errno, worker, round); \
} while (0)

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* INFO of a mapped arena, or of a spent one: exactly one of the two. */
static bool info_is_mapped_or_spent(const struct secarena_info *info,
				    size_t pages)
{
	if (info->data_size != pages * PS || info->guard_pages != 1 ||
	    info->reserved0 || info->reserved[0] || info->reserved[1])
		return false;
	if (info->flags == (SECARENA_INFO_CONFIGURED | SECARENA_INFO_MAPPED))
		return info->data_pages == pages;
	if (info->flags == (SECARENA_INFO_CONFIGURED | SECARENA_INFO_SPENT))
		return info->data_pages == 0;
	return false;
}

/* Sampled; each byte is read once, as a WIPE may zero it between reads. */
static bool bytes_are_0_or(const volatile char *p, size_t len, char b)
{
	size_t i;
	char v;

	for (i = 0; i < len; i += 61) {
		v = p[i];
		if (v != 0 && v != b)
			return false;
	}
	return true;
}

/* ---- many threads, one file ------------------------------------------- */

struct race {
	struct failures fail;
	pthread_barrier_t barrier;	/* NR_WORKERS + main */
	long round;
	bool stop;
	int fd;
	uint32_t policy;
	bool close_early;		/* close the fd while unmapping */
	atomic_int map_wins;
	char *map;
};

struct race_worker {
	struct race *r;
	int id;
};

/* A fork child's view of the arena, per policy. */
static void race_fork(struct race *r, int id, char b)
{
	int code = -1, sig;
	pid_t pid;

	pid = fork_tied();
	if (pid < 0) {
		WORKER_CHECK(&r->fail, id, r->round, pid >= 0);
		return;
	}
	if (pid == 0) {
		const volatile char *data = r->map + PS;

		/* NONE: this read faults; otherwise it sees 0 or b. */
		_exit(bytes_are_0_or(data, RACE_PAGES * PS, b) ? 0 : 1);
	}
	sig = wait_child(pid, &code);
	if (r->policy == SECARENA_FORK_NONE) {
		WORKER_CHECK(&r->fail, id, r->round, sig == SIGSEGV);
	} else {
		WORKER_CHECK(&r->fail, id, r->round, sig == 0);
		WORKER_CHECK(&r->fail, id, r->round, code == 0);
	}
}

static void *race_worker_main(void *arg)
{
	struct race_worker *w = arg;
	struct race *r = w->r;
	size_t len = arena_len(RACE_PAGES, 1);
	struct secarena_info info;
	int id = w->id, i, ret;
	char b;
	void *p;

	for (;;) {
		pthread_barrier_wait(&r->barrier);		/* A */
		if (r->stop)
			break;
		b = (char)(0x10 + (r->round & 0x3f));

		/* Phase 1: all but the last race to map; the last reconfigures. */
		if (id < NR_WORKERS - 1) {
			p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 r->fd, 0);
			if (p != MAP_FAILED) {
				atomic_fetch_add(&r->map_wins, 1);
				r->map = p;
			} else {
				WORKER_CHECK(&r->fail, id, r->round,
					     errno == EBUSY);
			}
		} else {
			ret = secarena_configure(r->fd, RACE_PAGES * PS, 1,
						 r->policy);
			WORKER_CHECK(&r->fail, id, r->round,
				     ret == 0 || errno == EBUSY);
		}
		pthread_barrier_wait(&r->barrier);		/* B */
		pthread_barrier_wait(&r->barrier);		/* C: main checked */
		if (atomic_load(&r->map_wins) != 1)
			goto phase3;

		/* Phase 2: write, wipe, inspect and fork, all at once. */
		for (i = 0; i < 8; i++) {
			switch (id) {
			case 0:
				memset(r->map + PS, b, RACE_PAGES * PS);
				WORKER_CHECK(&r->fail, id, r->round,
					     bytes_are_0_or(r->map + PS,
							    RACE_PAGES * PS, b));
				break;
			case 1:
				WORKER_CHECK(&r->fail, id, r->round,
					     secarena_wipe(r->fd) == 0);
				break;
			case 2:
				ret = secarena_get_info(r->fd, &info);
				WORKER_CHECK(&r->fail, id, r->round, ret == 0);
				WORKER_CHECK(&r->fail, id, r->round,
					     info.flags == (SECARENA_INFO_CONFIGURED |
							    SECARENA_INFO_MAPPED));
				WORKER_CHECK(&r->fail, id, r->round,
					     info.data_pages == RACE_PAGES);
				break;
			default:
				if (i == 0)
					race_fork(r, id, b);
				break;
			}
		}
phase3:
		pthread_barrier_wait(&r->barrier);		/* D */

		/* Phase 3: unmap (and maybe close) under INFO/mmap/WIPE. */
		for (i = 0; i < 8; i++) {
			switch (id) {
			case 0:
				if (i == 0 && r->map)
					WORKER_CHECK(&r->fail, id, r->round,
						     munmap(r->map, len) == 0);
				break;
			case 1:
				if (i == 0 && r->close_early)
					WORKER_CHECK(&r->fail, id, r->round,
						     close(r->fd) == 0);
				break;
			case 2:
				ret = secarena_get_info(r->fd, &info);
				if (ret)
					WORKER_CHECK(&r->fail, id, r->round,
						     r->close_early &&
						     errno == EBADF);
				else
					WORKER_CHECK(&r->fail, id, r->round,
						     info_is_mapped_or_spent(&info,
									     RACE_PAGES));
				break;
			default:
				p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					 MAP_SHARED, r->fd, 0);
				WORKER_CHECK(&r->fail, id, r->round,
					     p == MAP_FAILED);
				if (p != MAP_FAILED)
					munmap(p, len);
				else
					WORKER_CHECK(&r->fail, id, r->round,
						     errno == EBUSY ||
						     (r->close_early &&
						      errno == EBADF));
				ret = secarena_wipe(r->fd);
				WORKER_CHECK(&r->fail, id, r->round, ret == 0 ||
					     (r->close_early && errno == EBADF));
				break;
			}
		}
		pthread_barrier_wait(&r->barrier);		/* E */
	}
	return NULL;
}

TEST(threads_race_on_one_file)
{
	long long arenas = secarena_counter("arenas");
	long long mapped = secarena_counter("mapped");
	long long in_use = secarena_counter("pages_in_use");
	struct race_worker workers[NR_WORKERS];
	pthread_t tids[NR_WORKERS];
	struct secarena_info info;
	struct race *r;
	double end;
	int i;

	ASSERT_LE(0, arenas);
	ASSERT_LE(0, mapped);
	ASSERT_LE(0, in_use);
	r = calloc(1, sizeof(*r));
	ASSERT_NE(NULL, r);
	pthread_mutex_init(&r->fail.lock, NULL);
	ASSERT_EQ(0, pthread_barrier_init(&r->barrier, NULL, NR_WORKERS + 1));
	for (i = 0; i < NR_WORKERS; i++) {
		workers[i].r = r;
		workers[i].id = i;
		ASSERT_EQ(0, pthread_create(&tids[i], NULL, race_worker_main,
					    &workers[i]));
	}

	end = now_seconds() + RACE_SECONDS;
	for (r->round = 0; ; r->round++) {
		if (now_seconds() >= end || atomic_load(&r->fail.count)) {
			r->stop = true;
			pthread_barrier_wait(&r->barrier);	/* A */
			break;
		}
		r->policy = r->round % 3;
		r->close_early = r->round % 2;
		r->map = NULL;
		atomic_store(&r->map_wins, 0);
		r->fd = secarena_open(O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, r->fd);
		ASSERT_EQ(0, secarena_configure(r->fd, RACE_PAGES * PS, 1,
						r->policy));
		pthread_barrier_wait(&r->barrier);		/* A */
		pthread_barrier_wait(&r->barrier);		/* B */
		/* Exactly one mmap won; the file now says so. */
		EXPECT_EQ(1, atomic_load(&r->map_wins)) {
			TH_LOG("round %ld", r->round);
		}
		EXPECT_EQ(0, secarena_get_info(r->fd, &info));
		EXPECT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_MAPPED,
			  info.flags);
		EXPECT_EQ((__u64)RACE_PAGES, info.data_pages);
		EXPECT_EQ(r->policy, info.fork_policy);
		pthread_barrier_wait(&r->barrier);		/* C */
		pthread_barrier_wait(&r->barrier);		/* D */
		pthread_barrier_wait(&r->barrier);		/* E */
		if (!r->close_early) {
			EXPECT_EQ(0, secarena_get_info(r->fd, &info));
			EXPECT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_SPENT,
				  info.flags);
			EXPECT_EQ(0U, info.data_pages);
			close(r->fd);
		}
		/* Everything of this round is gone. */
		EXPECT_EQ(arenas, secarena_counter("arenas"));
		EXPECT_EQ(mapped, secarena_counter("mapped"));
		EXPECT_EQ(in_use, secarena_counter("pages_in_use"));
		if (!_metadata->passed)
			record_failure(&r->fail, "main thread check", __LINE__,
				       0, -1, r->round);
	}
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(tids[i], NULL);
	TH_LOG("%ld rounds", r->round);
	ASSERT_EQ(0, atomic_load(&r->fail.count)) {
		TH_LOG("first failure: %s", r->fail.first);
	}
	ASSERT_LT(0, r->round);
	ASSERT_EQ(arenas, secarena_counter("arenas"));
	ASSERT_EQ(mapped, secarena_counter("mapped"));
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
	pthread_barrier_destroy(&r->barrier);
	free(r);
}

/* ---- many threads, an arena each --------------------------------------- */

struct churn {
	struct failures fail;
	double end;
	atomic_long iterations;
};

struct churn_worker {
	struct churn *c;
	int id;
};

static void *churn_worker_main(void *arg)
{
	struct churn_worker *w = arg;
	struct churn *c = w->c;
	struct secarena_info info;
	long n;

	for (n = 0; now_seconds() < c->end; n++) {
		size_t pages = 1 + (n + w->id) % 8;
		uint32_t policy = (n + w->id) % 3;
		char b = (char)(w->id * 16 + (n & 15) + 1);
		struct arena a;
		int err, code = -1, sig;

		err = arena_create(&a, pages, 1 + (n % 3), policy);
		WORKER_CHECK(&c->fail, w->id, n, err == 0);
		if (err)
			break;
		memset(a.data, b, pages * PS);
		WORKER_CHECK(&c->fail, w->id, n,
			     secarena_get_info(a.fd, &info) == 0);
		WORKER_CHECK(&c->fail, w->id, n, info.data_pages == pages);
		WORKER_CHECK(&c->fail, w->id, n, info.fork_policy == policy);
		if (n % 4 == 0) {
			pid_t pid = fork_tied();

			if (pid == 0)
				_exit(a.data[0] == b &&
				      a.data[pages * PS - 1] == b ? 0 : 1);
			WORKER_CHECK(&c->fail, w->id, n, pid > 0);
			sig = pid > 0 ? wait_child(pid, &code) : -1;
			if (policy == SECARENA_FORK_NONE) {
				WORKER_CHECK(&c->fail, w->id, n, sig == SIGSEGV);
			} else {
				WORKER_CHECK(&c->fail, w->id, n, sig == 0);
				WORKER_CHECK(&c->fail, w->id, n, code == 0);
			}
		}
		/* Another thread's arena never shows through ours. */
		WORKER_CHECK(&c->fail, w->id, n, a.data[pages * PS / 2] == b);
		if (n & 1) {
			/* Close first: the mapping holds the file. */
			WORKER_CHECK(&c->fail, w->id, n, close(a.fd) == 0);
			a.fd = -1;
		}
		WORKER_CHECK(&c->fail, w->id, n, arena_unmap(&a) == 0);
		arena_destroy(&a);
	}
	atomic_fetch_add(&c->iterations, n);
	return NULL;
}

TEST(threads_churn_their_own_arenas)
{
	long long arenas = secarena_counter("arenas");
	long long mapped = secarena_counter("mapped");
	long long in_use = secarena_counter("pages_in_use");
	struct churn_worker workers[NR_WORKERS];
	pthread_t tids[NR_WORKERS];
	struct churn *c;
	int i;

	ASSERT_LE(0, arenas);
	c = calloc(1, sizeof(*c));
	ASSERT_NE(NULL, c);
	pthread_mutex_init(&c->fail.lock, NULL);
	c->end = now_seconds() + CHURN_SECONDS;
	for (i = 0; i < NR_WORKERS; i++) {
		workers[i].c = c;
		workers[i].id = i;
		ASSERT_EQ(0, pthread_create(&tids[i], NULL, churn_worker_main,
					    &workers[i]));
	}
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(tids[i], NULL);
	TH_LOG("%ld arenas made and unmade", atomic_load(&c->iterations));
	ASSERT_EQ(0, atomic_load(&c->fail.count)) {
		TH_LOG("first failure: %s", c->fail.first);
	}
	ASSERT_LE(NR_WORKERS, atomic_load(&c->iterations));
	ASSERT_EQ(arenas, secarena_counter("arenas"));
	ASSERT_EQ(mapped, secarena_counter("mapped"));
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
	free(c);
}

TEST_HARNESS_MAIN
