// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: what fork() children get under each fork policy, and what is
 * left of an arena after execve().
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include "secarena_helpers.h"

#define PS	page_size()
#define ARENA_PAGES	4

#ifndef MADV_KEEPONFORK
#define MADV_KEEPONFORK	19
#endif

/*
 * The image a test execs into is this binary again, told by the
 * environment to check what it inherited and exit before main() runs.
 */
#define EXEC_CHECK_ENV		"SECARENA_FORK_EXEC_CHECK"
#define EXEC_CHECK_PASSED	42

static void __attribute__((constructor)) exec_image_check(void)
{
	const char *env = getenv(EXEC_CHECK_ENV);
	struct secarena_info info;
	long long in_use;
	int fd, owner_gone;

	if (!env)
		return;
	CHILD_CHECK(sscanf(env, "%d:%lld:%d", &fd, &in_use, &owner_gone) == 3);
	CHILD_CHECK(maps_contain(0, SECARENA_DEVICE_PATH) == 0);
	CHILD_CHECK(vm_pin_kb(0) == 0);
	CHILD_CHECK(secarena_counter("pages_in_use") == in_use);
	/* The fd survived exec, but this new mm does not own the arena. */
	CHILD_CHECK(mmap(NULL, arena_len(ARENA_PAGES, 1), PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0) == MAP_FAILED);
	CHILD_CHECK(errno == EPERM);
	if (owner_gone) {
		CHILD_CHECK(secarena_get_info(fd, &info) == 0);
		CHILD_CHECK(info.data_pages == 0);
		CHILD_CHECK(!(info.flags & SECARENA_INFO_MAPPED));
		CHILD_CHECK(info.flags & SECARENA_INFO_SPENT);
	}
	_exit(EXEC_CHECK_PASSED);
}

/* execve() this binary with EXEC_CHECK_ENV set; returns only on failure. */
static void exec_check_image(int fd, long long in_use, int owner_gone)
{
	char env[128];
	char *argv[] = { "secarena_fork_exec_check", NULL };
	char *envp[] = { env, NULL };

	snprintf(env, sizeof(env), EXEC_CHECK_ENV "=%d:%lld:%d", fd, in_use,
		 owner_gone);
	execve("/proc/self/exe", argv, envp);
	fprintf(stderr, "# execve: %s\n", strerror(errno));
	_exit(2);
}

/* ---- PRIVATE ---------------------------------------------------------- */

FIXTURE(private_fork) {
	struct arena a;
	unsigned char parent_secret[SECRET_LEN];	/* before the fork */
	unsigned char child_secret[SECRET_LEN];		/* child writes */
	unsigned char later_secret[SECRET_LEN];		/* parent, after */
};

FIXTURE_VARIANT(private_fork) {
	bool keep_on_fork;
};

FIXTURE_VARIANT_ADD(private_fork, plain) { .keep_on_fork = false };
FIXTURE_VARIANT_ADD(private_fork, after_madv_keeponfork) { .keep_on_fork = true };

FIXTURE_SETUP(private_fork)
{
	ASSERT_EQ(0, random_secret(self->parent_secret));
	ASSERT_EQ(0, random_secret(self->child_secret));
	ASSERT_EQ(0, random_secret(self->later_secret));
	ASSERT_EQ(0, arena_create(&self->a, ARENA_PAGES, 1,
				  SECARENA_FORK_PRIVATE));
	fill_with_secret(self->a.data, ARENA_PAGES * PS, self->parent_secret);
	if (variant->keep_on_fork)
		ASSERT_EQ(0, madvise(self->a.base, self->a.len,
				     MADV_KEEPONFORK));
}

FIXTURE_TEARDOWN(private_fork)
{
	arena_destroy(&self->a);
}

TEST_F(private_fork, child_gets_its_own_copy)
{
	long long mapped = secarena_counter("mapped");
	long long in_use = secarena_counter("pages_in_use");
	long long copy_failed = secarena_counter("fork_copy_failed");
	int down[2], up[2], code = -1;
	char byte;
	pid_t pid;

	ASSERT_LE(0, mapped);
	ASSERT_LE(0, in_use);
	ASSERT_LE(0, copy_failed);
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Data as at fork time, present, charged to the child. */
		CHILD_CHECK(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
					      self->parent_secret));
		CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(ARENA_PAGES));
		CHILD_CHECK(maps_contain(0, SECARENA_DEVICE_PATH) == 1);
		fill_with_secret(self->a.data, ARENA_PAGES * PS,
				 self->child_secret);
		CHILD_CHECK(write_full(up[1], "w", 1) == 0);
		CHILD_CHECK(read_full(down[0], &byte, 1) == 0);
		/* The parent's later write did not reach the copy. */
		CHILD_CHECK(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
					      self->child_secret));
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], &byte, 1));
	/* The child's write did not reach us. */
	ASSERT_TRUE(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
				      self->parent_secret));
	ASSERT_EQ(mapped + 1, secarena_counter("mapped"));
	ASSERT_EQ(in_use + ARENA_PAGES, secarena_counter("pages_in_use"));
	ASSERT_EQ(pages_to_kb(ARENA_PAGES), vm_pin_kb(pid));
	fill_with_secret(self->a.data, ARENA_PAGES * PS, self->later_secret);
	ASSERT_EQ(0, write_full(down[1], "p", 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);

	ASSERT_EQ(mapped, secarena_counter("mapped"));
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
	ASSERT_EQ(copy_failed, secarena_counter("fork_copy_failed"));
	ASSERT_TRUE(tiled_with_secret(self->a.data, ARENA_PAGES * PS,
				      self->later_secret));
}

TEST_F(private_fork, every_child_gets_a_copy)
{
	long long mapped = secarena_counter("mapped");
	long long in_use = secarena_counter("pages_in_use");
	int down[2], up[2], i, code;
	pid_t pids[3];
	char byte;

	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	for (i = 0; i < 3; i++) {
		pids[i] = fork_tied();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			CHILD_CHECK(tiled_with_secret(self->a.data,
						      ARENA_PAGES * PS,
						      self->parent_secret));
			CHILD_CHECK(write_full(up[1], "r", 1) == 0);
			/* Wait for the parent to close its write end. */
			close(down[1]);
			CHILD_CHECK(read(down[0], &byte, 1) == 0);
			_exit(0);
		}
		ASSERT_EQ(0, read_full(up[0], &byte, 1));
	}
	ASSERT_EQ(mapped + 3, secarena_counter("mapped"));
	ASSERT_EQ(in_use + 3 * ARENA_PAGES, secarena_counter("pages_in_use"));
	close(down[1]);
	for (i = 0; i < 3; i++) {
		code = -1;
		ASSERT_EQ(0, wait_child(pids[i], &code));
		ASSERT_EQ(0, code);
	}
	ASSERT_EQ(mapped, secarena_counter("mapped"));
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
}

/* ---- NONE ------------------------------------------------------------- */

static int none_child_view(void *arg)
{
	long long *mapped = arg;

	CHILD_CHECK(maps_contain(0, SECARENA_DEVICE_PATH) == 0);
	CHILD_CHECK(vm_pin_kb(0) == 0);
	/* No page set was made for this child. */
	CHILD_CHECK(secarena_counter("mapped") == *mapped);
	return 0;
}

TEST(none_child_has_no_mapping)
{
	long long mapped;
	struct fault_report rep;
	struct arena a;
	int code = -1;

	ASSERT_EQ(0, arena_create(&a, ARENA_PAGES, 1, SECARENA_FORK_NONE));
	memset(a.data, 0x4e, ARENA_PAGES * PS);
	mapped = secarena_counter("mapped");
	ASSERT_LE(1, mapped);

	ASSERT_EQ(0, access_in_child(a.data, false, &rep));
	ASSERT_EQ(SIGSEGV, rep.signal);
	ASSERT_EQ(SEGV_MAPERR, rep.fault_code);
	ASSERT_EQ((void *)a.data, rep.fault_addr);
	ASSERT_EQ(0, access_in_child(a.high_guard - 1, true, &rep));
	ASSERT_EQ(SIGSEGV, rep.signal);

	ASSERT_EQ(0, child_fatal_signal(none_child_view, &mapped, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(0x4e, a.data[0]);
	arena_destroy(&a);
}

/* ---- SHARED ----------------------------------------------------------- */

TEST(shared_parent_and_child_see_each_other)
{
	unsigned char first[SECRET_LEN], by_child[SECRET_LEN];
	unsigned char by_parent[SECRET_LEN];
	long long in_use = secarena_counter("pages_in_use");
	int down[2], up[2], code = -1;
	struct arena a;
	char byte;
	pid_t pid;

	ASSERT_LE(0, in_use);
	ASSERT_EQ(0, random_secret(first));
	ASSERT_EQ(0, random_secret(by_child));
	ASSERT_EQ(0, random_secret(by_parent));
	ASSERT_EQ(0, arena_create(&a, ARENA_PAGES, 1, SECARENA_FORK_SHARED));
	fill_with_secret(a.data, ARENA_PAGES * PS, first);
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));

	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_CHECK(tiled_with_secret(a.data, ARENA_PAGES * PS, first));
		fill_with_secret(a.data, ARENA_PAGES * PS, by_child);
		CHILD_CHECK(write_full(up[1], "w", 1) == 0);
		CHILD_CHECK(read_full(down[0], &byte, 1) == 0);
		/* The parent wrote, then unmapped: ours still holds it. */
		CHILD_CHECK(tiled_with_secret(a.data, ARENA_PAGES * PS,
					      by_parent));
		CHILD_CHECK(write_full(up[1], "c", 1) == 0);
		CHILD_CHECK(read_full(down[0], &byte, 1) == 0);
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], &byte, 1));
	ASSERT_TRUE(tiled_with_secret(a.data, ARENA_PAGES * PS, by_child));
	/* One page set, not two. */
	ASSERT_EQ(in_use + ARENA_PAGES, secarena_counter("pages_in_use"));
	fill_with_secret(a.data, ARENA_PAGES * PS, by_parent);
	ASSERT_EQ(0, arena_unmap(&a));
	ASSERT_EQ(0, write_full(down[1], "p", 1));
	ASSERT_EQ(0, read_full(up[0], &byte, 1));
	/* The child's mapping keeps the pages. */
	ASSERT_EQ(in_use + ARENA_PAGES, secarena_counter("pages_in_use"));
	ASSERT_EQ(0, write_full(down[1], "x", 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
	arena_destroy(&a);
}

/* ---- execve() ---------------------------------------------------------- */

static int exec_owner_child(void *arg)
{
	long long in_use = secarena_counter("pages_in_use");
	struct arena a;

	(void)arg;
	CHILD_CHECK(in_use >= 0);
	/* No O_CLOEXEC: the file goes along into the new image. */
	CHILD_CHECK(arena_create_flags(&a, ARENA_PAGES, 1,
				       SECARENA_FORK_PRIVATE, 0) == 0);
	memset(a.data, 0x58, ARENA_PAGES * PS);
	CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(ARENA_PAGES));
	CHILD_CHECK(secarena_counter("pages_in_use") == in_use + ARENA_PAGES);
	exec_check_image(a.fd, in_use, 1);
	return 2;
}

TEST(exec_drops_the_owners_arena)
{
	long long in_use = secarena_counter("pages_in_use");
	int code = -1;

	ASSERT_EQ(0, child_fatal_signal(exec_owner_child, NULL, &code));
	ASSERT_EQ(EXEC_CHECK_PASSED, code);
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
}

struct exec_copy_arg {
	struct arena *a;
	long long in_use_without_copy;
};

static int exec_copy_child(void *arg)
{
	struct exec_copy_arg *e = arg;

	CHILD_CHECK(vm_pin_kb(0) == pages_to_kb(ARENA_PAGES));
	CHILD_CHECK(e->a->data[0] == 0x43);
	exec_check_image(e->a->fd, e->in_use_without_copy, 0);
	return 2;
}

TEST(exec_drops_a_private_copy)
{
	struct exec_copy_arg e;
	struct arena a;
	int code = -1;

	ASSERT_EQ(0, arena_create_flags(&a, ARENA_PAGES, 1,
					SECARENA_FORK_PRIVATE, 0));
	memset(a.data, 0x43, ARENA_PAGES * PS);
	e.a = &a;
	e.in_use_without_copy = secarena_counter("pages_in_use");
	ASSERT_LE(ARENA_PAGES, e.in_use_without_copy);
	ASSERT_EQ(0, child_fatal_signal(exec_copy_child, &e, &code));
	ASSERT_EQ(EXEC_CHECK_PASSED, code);
	ASSERT_EQ(0x43, a.data[ARENA_PAGES * PS - 1]);
	arena_destroy(&a);
}

TEST_HARNESS_MAIN
