// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: the per-user limit (max_user_pages). The arenas of one uid,
 * however many processes hold them, stop at the limit with ENOMEM, while
 * another uid and root still map; the users table says who holds what.
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include "secarena_helpers.h"

#define USER_A		65534	/* nobody */
#define USER_B		65533
#define USER_LIMIT	8	/* pages, for the test */

/* Pages that the users table gives uid, 0 if absent, -1 if unreadable. */
static long long user_pages(uid_t uid)
{
	char buf[4096], *line, *save;
	unsigned long long pages;
	unsigned int id;

	if (read_text_file(SECARENA_SYSFS_DIR "/users", buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%u %llu", &id, &pages) != 2)
			return -1;
		if (id == uid)
			return pages;
	}
	return 0;
}

/*
 * As uid: map arenas of the given sizes in turn (0 ends the list) and
 * report each result (0 or the errno) on report_fd, then hold them until
 * cmd_fd says go.
 */
static int user_maps(uid_t uid, const size_t *sizes, int cmd_fd,
		     int report_fd)
{
	struct arena a[4];
	int err, i;
	char cmd;

	CHILD_CHECK(become_user(uid) == 0);
	for (i = 0; i < 4 && sizes[i]; i++) {
		err = arena_create(&a[i], sizes[i], 1, SECARENA_FORK_PRIVATE);
		CHILD_CHECK(write_full(report_fd, &err, sizeof(err)) == 0);
	}
	CHILD_CHECK(read_full(cmd_fd, &cmd, 1) == 0);
	return 0;
}

struct holder {
	pid_t pid;
	int cmd;	/* write end */
	int report;	/* read end */
};

static int holder_start(struct holder *h, uid_t uid, const size_t *sizes)
{
	int down[2], up[2];

	if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC))
		return -1;
	h->pid = fork_tied();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0)
		_exit(user_maps(uid, sizes, down[0], up[1]));
	close(down[0]);
	close(up[1]);
	h->cmd = down[1];
	h->report = up[0];
	return 0;
}

/* The next result the holder reported: 0 or an errno; -1 on failure. */
static int holder_result(struct holder *h)
{
	int err;

	if (read_full(h->report, &err, sizeof(err)))
		return -1;
	return err;
}

static int holder_finish(struct holder *h)
{
	int code = -1;

	if (write_full(h->cmd, "x", 1) || wait_child(h->pid, &code))
		return -1;
	close(h->cmd);
	close(h->report);
	return code;
}

FIXTURE(users) {
	long long saved_limit;
};

FIXTURE_SETUP(users)
{
	self->saved_limit = -1;
	if (geteuid() != 0)
		SKIP(return, "module parameters and other uids need root");
	self->saved_limit = module_param_get("max_user_pages");
	ASSERT_LE(USER_LIMIT, self->saved_limit);
	ASSERT_EQ(0, module_param_set("max_user_pages", USER_LIMIT));
	ASSERT_EQ(USER_LIMIT, secarena_counter("max_user_pages"));
}

FIXTURE_TEARDOWN(users)
{
	if (self->saved_limit >= 0)
		module_param_set("max_user_pages", self->saved_limit);
}

TEST_F(users, one_user_at_its_limit_others_still_map)
{
	const size_t sizes_a[] = { 5, 3, 1, 0 };	/* 8 fit, the 9th not */
	const size_t sizes_b[] = { USER_LIMIT, 0 };
	const size_t one_page[] = { 1, 0 };
	long long refused = secarena_counter("refused_user_limit");
	long long refused_all = secarena_counter("refused_limit");
	long long in_use = secarena_counter("pages_in_use");
	struct holder a, a2, b;
	struct arena root;

	ASSERT_LE(0, refused);
	ASSERT_EQ(0, user_pages(USER_A));
	/* Two processes of one user share its limit. */
	ASSERT_EQ(0, holder_start(&a, USER_A, sizes_a));
	ASSERT_EQ(0, holder_result(&a));
	ASSERT_EQ(0, holder_result(&a));
	ASSERT_EQ(USER_LIMIT, user_pages(USER_A));
	ASSERT_EQ(ENOMEM, holder_result(&a));
	ASSERT_EQ(refused + 1, secarena_counter("refused_user_limit"));
	ASSERT_EQ(refused_all + 1, secarena_counter("refused_limit"));
	ASSERT_EQ(0, holder_start(&a2, USER_A, one_page));
	ASSERT_EQ(ENOMEM, holder_result(&a2));
	ASSERT_EQ(0, holder_finish(&a2));
	ASSERT_EQ(refused + 2, secarena_counter("refused_user_limit"));

	/* Another user and root are not affected. */
	ASSERT_EQ(0, holder_start(&b, USER_B, sizes_b));
	ASSERT_EQ(0, holder_result(&b));
	ASSERT_EQ(USER_LIMIT, user_pages(USER_B));
	ASSERT_EQ(0, arena_create(&root, USER_LIMIT, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(USER_LIMIT, user_pages(0));
	ASSERT_EQ(in_use + 3 * USER_LIMIT, secarena_counter("pages_in_use"));

	ASSERT_EQ(0, holder_finish(&a));
	ASSERT_EQ(0, user_pages(USER_A));
	ASSERT_EQ(0, holder_finish(&b));
	ASSERT_EQ(0, user_pages(USER_B));
	arena_destroy(&root);
	ASSERT_EQ(0, user_pages(0));
	ASSERT_EQ(in_use, secarena_counter("pages_in_use"));
	ASSERT_EQ(refused + 2, secarena_counter("refused_user_limit"));
}

/* A PRIVATE fork copy counts against the forking user's limit too. */
TEST_F(users, fork_copy_is_charged_to_the_user)
{
	long long failed = secarena_counter("fork_copy_failed");
	struct fault_report rep;
	struct arena a;

	ASSERT_EQ(0, arena_create(&a, USER_LIMIT / 2 + 1, 1,
				  SECARENA_FORK_PRIVATE));
	memset(a.data, 0x3c, (USER_LIMIT / 2 + 1) * page_size());
	ASSERT_EQ(USER_LIMIT / 2 + 1, user_pages(0));
	/* The copy would take root past 8 pages: the child gets SIGBUS. */
	ASSERT_EQ(0, access_in_child(a.data, false, &rep));
	ASSERT_EQ(SIGBUS, rep.signal);
	ASSERT_EQ(failed + 1, secarena_counter("fork_copy_failed"));
	ASSERT_EQ(USER_LIMIT / 2 + 1, user_pages(0));
	ASSERT_EQ(0x3c, a.data[0]);
	arena_destroy(&a);
	ASSERT_EQ(0, user_pages(0));
}

/* The users table is root's: it names who uses arenas. */
TEST_F(users, users_table_is_root_only)
{
	struct stat st;

	ASSERT_EQ(0, stat(SECARENA_SYSFS_DIR "/users", &st));
	ASSERT_EQ((mode_t)0400, st.st_mode & 0777);
}

TEST_HARNESS_MAIN
