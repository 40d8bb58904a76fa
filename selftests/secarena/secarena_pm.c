// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: no hibernation image while any arena holds pages. Opening
 * /dev/snapshot for reading and writing "disk" to /sys/power/state both
 * raise PM_HIBERNATION_PREPARE, which the module refuses with EBUSY; an
 * mmap() while a hibernation is in progress gets EAGAIN.
 *
 * "disk" is only ever written while this test holds an arena, after the
 * /dev/snapshot refusal has shown the module is refusing: with no arena it
 * would really hibernate the machine.
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include "secarena_helpers.h"

#define SNAPSHOT_DEV	"/dev/snapshot"
#define POWER_STATE	"/sys/power/state"

/* open(/dev/snapshot, O_RDONLY) then close: 0, or its errno. */
static int snapshot_open_errno(void)
{
	int fd = open(SNAPSHOT_DEV, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Whether /sys/power/state lists "disk". */
static bool power_state_offers_disk(void)
{
	char buf[128], *tok, *save;

	if (read_text_file(POWER_STATE, buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, "\n ", &save); tok;
	     tok = strtok_r(NULL, "\n ", &save))
		if (!strcmp(tok, "disk"))
			return true;
	return false;
}

FIXTURE(pm) {
	struct arena a;
};

FIXTURE_SETUP(pm)
{
	int err;

	self->a.fd = -1;
	if (geteuid() != 0)
		SKIP(return, "hibernation control needs root");
	if (access(SNAPSHOT_DEV, F_OK))
		SKIP(return, "no " SNAPSHOT_DEV " (CONFIG_HIBERNATION_SNAPSHOT_DEV)");
	/* The control needs a system where no arena holds pages. */
	ASSERT_EQ(0, secarena_counter("pages_in_use"));
	err = snapshot_open_errno();
	if (err == EPERM)
		SKIP(return, "hibernation not available: %s",
		     "nohibernate, lockdown or memfd_secret in use");
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(pm)
{
	arena_destroy(&self->a);
}

TEST_F(pm, snapshot_open_ebusy_while_an_arena_holds_pages)
{
	long long refused = secarena_counter("refused_hibernation");

	ASSERT_LE(0, refused);
	ASSERT_EQ(0, arena_create(&self->a, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(EBUSY, snapshot_open_errno());
	ASSERT_EQ(refused + 1, secarena_counter("refused_hibernation"));
	ASSERT_EQ(EBUSY, snapshot_open_errno());
	ASSERT_EQ(refused + 2, secarena_counter("refused_hibernation"));
	/* Pages, not files, are what count. */
	ASSERT_EQ(0, arena_unmap(&self->a));
	ASSERT_EQ(0, snapshot_open_errno());
	ASSERT_EQ(refused + 2, secarena_counter("refused_hibernation"));
}

TEST_F(pm, snapshot_open_ebusy_while_a_fork_copy_holds_pages)
{
	long long refused = secarena_counter("refused_hibernation");
	int down[2], up[2], code = -1;
	char byte;
	pid_t pid;

	ASSERT_EQ(0, arena_create(&self->a, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_CHECK(write_full(up[1], "c", 1) == 0);
		CHILD_CHECK(read_full(down[0], &byte, 1) == 0);
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], &byte, 1));
	/* Only the child's copy is left. */
	ASSERT_EQ(0, arena_unmap(&self->a));
	ASSERT_EQ(2, secarena_counter("pages_in_use"));
	ASSERT_EQ(EBUSY, snapshot_open_errno());
	ASSERT_EQ(refused + 1, secarena_counter("refused_hibernation"));
	ASSERT_EQ(0, write_full(down[1], "x", 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(0, secarena_counter("pages_in_use"));
	ASSERT_EQ(0, snapshot_open_errno());
}

TEST_F_TIMEOUT(pm, power_state_disk_ebusy_while_an_arena_holds_pages, 120)
{
	long long refused = secarena_counter("refused_hibernation");
	struct secarena_info info;

	if (!power_state_offers_disk())
		SKIP(return, POWER_STATE " does not offer disk");
	ASSERT_EQ(0, arena_create(&self->a, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, secarena_get_info(self->a.fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_MAPPED, info.flags);
	ASSERT_EQ(2, secarena_counter("pages_in_use"));
	/* Safety first: the module must be refusing before "disk" is written. */
	ASSERT_EQ(EBUSY, snapshot_open_errno());
	ASSERT_EQ(refused + 1, secarena_counter("refused_hibernation"));

	ASSERT_EQ(EBUSY, write_text_file(POWER_STATE, "disk"));
	ASSERT_EQ(refused + 2, secarena_counter("refused_hibernation"));
	ASSERT_EQ(0, arena_unmap(&self->a));
}

TEST_F(pm, mmap_eagain_while_hibernation_is_in_progress)
{
	struct arena b;
	int snap;

	/* An open /dev/snapshot is a hibernation in progress. */
	snap = open(SNAPSHOT_DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, snap);
	ASSERT_EQ(EAGAIN, arena_create(&b, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, secarena_counter("pages_in_use"));
	/* Over: mapping works again. */
	close(snap);
	ASSERT_EQ(0, arena_create(&self->a, 2, 1, SECARENA_FORK_PRIVATE));
}

TEST_HARNESS_MAIN
