// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fork() under each policy, on the backend under test. The parent holds a
 * block A and a second thread holds a filled thread cache at the fork; the
 * child checks what it can see of A, writes to it, allocates, frees A,
 * checks the accounting and the buddy, and calls secarena_done(). The
 * parent then checks what the child's actions did to its A.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocator.h"
#include "arena.h"
#include "secarena.h"
#include "tap.h"
#include "thread_cache.h"

struct child_report {
	int a_mapped, a_content_ok, a_allocated, a_owned;
	int c_ok, c_zero, c_in_old_arena;
	int used_ok, held_ok, locked_ok, done_ok;
	size_t used_before, used_after;
};

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int hold_state;	/* 0 start, 1 cache filled, 2 may exit */

static void *cache_holder(void *arg)
{
	void *p[40];
	int i;

	(void)arg;
	for (i = 0; i < 40; i++)
		p[i] = secarena_malloc(48);
	for (i = 0; i < 40; i++)
		secarena_free(p[i]);	/* now cached in this thread */
	pthread_mutex_lock(&hold_lock);
	hold_state = 1;
	pthread_cond_broadcast(&hold_cond);
	while (hold_state != 2)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	return NULL;
}

/* Readable here: the kernel copies from it into a pipe (EFAULT if not). */
static int page_mapped(const void *p)
{
	int fds[2], ok;

	if (pipe(fds) != 0)
		return 0;
	ok = write(fds[1], p, 1) == 1;
	close(fds[0]);
	close(fds[1]);
	return ok;
}

static size_t own_cache_bytes(void)
{
	struct thread_cache *tc = thread_cache_current;
	size_t sum = 0;
	unsigned int i;

	if (!tc)
		return 0;
	for (i = 0; i < CACHE_BINS; i++)
		sum += (size_t)tc->bin[i].count << (allocator.min_order + i);
	return sum;
}

static size_t vm_locked_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %zu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void child_side(unsigned int policy, char *a, struct arena *old, int fd)
{
	struct child_report r = { 0 };
	struct secarena_stats st;
	char *c;
	size_t i;

	r.used_before = secarena_used();
	r.a_mapped = page_mapped(a);
	r.a_allocated = secarena_allocated(a);
	r.a_owned = secarena_owns(a);
	if (r.a_mapped) {
		r.a_content_ok = strcmp(a, "parent-secret") == 0;
		strcpy(a, "child-wrote");
	}
	c = secarena_malloc(64);
	r.c_ok = c != NULL;
	if (c) {
		r.c_zero = c[0] == 0 && c[63] == 0;
		r.c_in_old_arena = arena_contains(old, c);
		memset(c, 'c', 64);
	}
	secarena_free(a);
	r.used_after = secarena_used();
	r.used_ok = r.used_after == r.used_before;	/* +64 for c, -64 for a */
	/*
	 * The holder thread's cache went back; what the live arenas hold is ours
	 * alone. b (8 KiB) still counts as in use, but outside a live arena
	 * unless the child has its own copy.
	 */
	secarena_stats(&st);
	r.held_ok = st.arena_held + (policy == SECARENA_F_FORK_PRIVATE ? 0 : 8192) ==
		    st.in_use + own_cache_bytes();
	for (i = 0; i < allocator.narenas; i++)
		if (allocator.arena[i]->life == ARENA_LIVE)
			buddy_check(&allocator.arena[i]->buddy);
	r.locked_ok = strcmp(test_backend(), "mlock") != 0 || policy != SECARENA_F_FORK_PRIVATE ||
		      vm_locked_kb() >= 1024;
	if (!r.locked_ok)
		fprintf(stderr, "VmLck %zu kB\n", vm_locked_kb());
	secarena_free(c);
	r.done_ok = secarena_done() == 0;
	if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(3);
	_exit(0);
}

static int fork_under(unsigned int policy)
{
	struct child_report r;
	pthread_t holder;
	char *a, *b;
	struct arena *old;
	int pipefd[2], status;
	pid_t pid;

	CHECK_EQ(secarena_init(1 << 20, 16, policy), 0);
	old = allocator.arena[0];
	a = secarena_malloc(64);
	b = secarena_malloc(8192);
	CHECK(a && b);
	strcpy(a, "parent-secret");
	strcpy(b, "parent-b");
	hold_state = 0;
	CHECK_EQ(pthread_create(&holder, NULL, cache_holder, NULL), 0);
	pthread_mutex_lock(&hold_lock);
	while (hold_state != 1)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);

	CHECK_EQ(pipe(pipefd), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child_side(policy, a, old, pipefd[1]);
	close(pipefd[1]);
	CHECK_EQ(read(pipefd[0], &r, sizeof(r)), (ssize_t)sizeof(r));
	close(pipefd[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	CHECK_EQ(r.used_before, 64 + 8192);
	CHECK(r.used_ok);
	CHECK(r.held_ok);
	CHECK(r.c_ok && r.c_zero);
	CHECK(r.locked_ok);
	CHECK(r.done_ok);
	/* Inherited blocks are the allocator's to free under every policy. */
	CHECK_EQ(r.a_owned, 1);
	switch (policy) {
	case SECARENA_F_FORK_PRIVATE:
		/* Own copy: sees the data, its writes stay its own. */
		CHECK(r.a_mapped && r.a_content_ok && r.a_allocated);
		CHECK(strcmp(a, "parent-secret") == 0);
		break;
	case SECARENA_F_FORK_SHARED:
		/* Same pages: sees and writes; never allocates from them, never wipes them. */
		CHECK(r.a_mapped && r.a_content_ok && r.a_allocated);
		CHECK(!r.c_in_old_arena);
		CHECK(strcmp(a, "child-wrote") == 0);
		break;
	case SECARENA_F_FORK_NONE:
		/* Nothing: the range is unmapped in the child; free(A) was accepted. */
		CHECK(!r.a_mapped && !r.a_allocated);
		CHECK(!r.c_in_old_arena);
		CHECK(strcmp(a, "parent-secret") == 0);
		break;
	}
	/* The parent goes on as before. */
	CHECK(strcmp(b, "parent-b") == 0);
	secarena_free(a);
	a = secarena_malloc(64);
	CHECK(a != NULL && a[0] == 0);
	secarena_free(a);
	secarena_free(b);
	pthread_mutex_lock(&hold_lock);
	hold_state = 2;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
	pthread_join(holder, NULL);
	CHECK_EQ(secarena_used(), 0);
	pthread_mutex_lock(&old->lock);
	buddy_check(&old->buddy);
	pthread_mutex_unlock(&old->lock);
	return 0;
}

TEST(fork, policy_private)
{
	return fork_under(SECARENA_F_FORK_PRIVATE);
}

TEST(fork, policy_shared)
{
	return fork_under(SECARENA_F_FORK_SHARED);
}

TEST(fork, policy_none)
{
	return fork_under(SECARENA_F_FORK_NONE);
}

/*
 * The grandchild of copy_refused(): its arena copy could not be made. On
 * the device and memfd_secret it must take the arena as gone, as under
 * FORK_NONE: nothing to read, its free of the inherited block accepted
 * without touching the range, and no new arena either, since the limit
 * that refused the copy refuses that too. mlock's copy is copy-on-write,
 * made at fork whatever the limit: only its lock is refused, and the
 * protection bits must say so.
 */
static void copy_refused_child(char *a, unsigned int flags)
{
	/* With REQUIRE_LOCKED an unlocked mlock copy is as good as none. */
	int mlock = strcmp(test_backend(), "mlock") == 0 && !(flags & SECARENA_F_REQUIRE_LOCKED);
	int mapped = page_mapped(a), allocated = secarena_allocated(a);
	int owned = secarena_owns(a), content = mapped && strcmp(a, "parent-secret") == 0;
	unsigned int prot = secarena_protection();
	int bad, err;
	void *c;

	secarena_free(a);	/* a wipe here would raise SIGBUS on the device */
	errno = 0;
	c = secarena_malloc(64);
	err = errno;
	if (mlock)
		bad = !mapped || !allocated || !content || (prot & SECARENA_PROT_LOCKED) || !c;
	else
		bad = mapped || allocated || c || err != ENOMEM;
	secarena_free(c);
	if (bad || owned != 1 || secarena_done() != 0) {
		fprintf(stderr, "child: mapped %d allocated %d content %d owned %d protection %#x, "
			"malloc %p errno %d\n", mapped, allocated, content, owned, prot, c, err);
		_exit(1);
	}
	_exit(0);
}

/*
 * Map as root, then become nobody with RLIMIT_MEMLOCK 0 and fork: no page
 * can be pinned for the child, so neither the kernel (device) nor the
 * library (memfd_secret, mlock) can pin its FORK_PRIVATE copy.
 */
static void copy_refused(void *arg)
{
	unsigned int flags = SECARENA_F_FORK_PRIVATE | (unsigned int)(uintptr_t)arg;
	struct rlimit zero = { 0, 0 };
	int status;
	char *a;
	pid_t pid;

	if (secarena_init(1 << 20, 16, flags) != 0 ||
	    !(a = secarena_malloc(64))) {
		fprintf(stderr, "parent: init or malloc failed, errno %d\n", errno);
		_exit(1);
	}
	strcpy(a, "parent-secret");
	if (setrlimit(RLIMIT_MEMLOCK, &zero) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
		fprintf(stderr, "parent: cannot become nobody, errno %d\n", errno);
		_exit(1);
	}
	pid = fork();
	if (pid == 0)
		copy_refused_child(a, flags);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "parent: child status %#x\n", status);
		_exit(1);
	}
	/* The parent's block and arena are as they were. */
	if (strcmp(a, "parent-secret") != 0 || !secarena_allocated(a)) {
		fprintf(stderr, "parent: its block changed\n");
		_exit(1);
	}
	secarena_free(a);
	_exit(secarena_done() == 0 ? 0 : 1);
}

TEST(fork, private_copy_refused)
{
	static const unsigned int extra[] = { 0, SECARENA_F_REQUIRE_LOCKED };
	char err[512];
	unsigned int i;
	int status;

	if (geteuid() != 0)
		return tap_skip("needs root, to map first and then drop to nobody");
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		status = run_in_child(copy_refused, (void *)(uintptr_t)extra[i], err, sizeof(err));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			tap_diag("extra flags %#x: status %#x; stderr: %s", extra[i], status, err);
			return 1;
		}
	}
	return 0;
}

static void child_double_free(void *arg)
{
	char *p;

	secarena_init(1 << 16, 16, (unsigned int)(uintptr_t)arg);
	p = secarena_malloc(64);
	/* The abort must come from the child of this child. */
	if (fork() == 0) {
		secarena_free(p);
		secarena_free(p);
		_exit(0);
	}
	{
		int status;

		wait(&status);
		if (WIFSIGNALED(status))
			abort();	/* pass the child's abort up */
	}
}

TEST(fork, double_free_in_child_still_aborts)
{
	CHECK(dies_with_abort(child_double_free, (void *)(uintptr_t)SECARENA_F_FORK_PRIVATE,
			      "double free"));
	CHECK(dies_with_abort(child_double_free, (void *)(uintptr_t)SECARENA_F_FORK_SHARED,
			      "double free (the block was freed after fork)"));
	CHECK(dies_with_abort(child_double_free, (void *)(uintptr_t)SECARENA_F_FORK_NONE,
			      "double free (the block was freed after fork)"));
	return 0;
}

#ifdef __GLIBC__
/* The mutex type (normal, adaptive, ...): glibc keeps it in __kind. */
static int mutex_kind(const pthread_mutex_t *m)
{
	return m->__data.__kind;
}

TEST(fork, child_locks_keep_their_attributes)
{
	struct secarena_options opt = { .arena_size = 1 << 16, .max_arenas = 3 };
	int kind[ARENA_SLOTS], grow_kind, status;
	void *p[2];
	size_t i, n;
	pid_t pid;

	CHECK_EQ(secarena_init_ex(&opt, NULL), 0);
	p[0] = secarena_malloc(1 << 16);	/* fills the first arena: a second one */
	p[1] = secarena_malloc(64);
	CHECK(p[0] && p[1]);
	n = allocator.narenas;
	CHECK_EQ(n, 2);
	CHECK_EQ(mutex_kind(&allocator.arena[0]->lock), PTHREAD_MUTEX_ADAPTIVE_NP);
	for (i = 0; i < n; i++)
		kind[i] = mutex_kind(&allocator.arena[i]->lock);
	grow_kind = mutex_kind(&allocator.grow_lock);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		for (i = 0; i < n; i++) {
			struct arena *a = allocator.arena[i];

			if (mutex_kind(&a->lock) != kind[i]) {
				fprintf(stderr, "arena %zu: kind %d, parent %d\n", i,
					mutex_kind(&a->lock), kind[i]);
				bad = 1;
			}
			/* Unlocked, and usable. */
			if (pthread_mutex_trylock(&a->lock) != 0)
				bad = 1;
			else
				pthread_mutex_unlock(&a->lock);
		}
		bad |= mutex_kind(&allocator.grow_lock) != grow_kind;
		secarena_free(p[1]);
		bad |= secarena_malloc(64) == NULL;
		_exit(bad);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	secarena_free(p[0]);
	secarena_free(p[1]);
	return 0;
}
#endif
