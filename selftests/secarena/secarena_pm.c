// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: no arena page in a hibernation image. Opening /dev/snapshot
 * for reading and writing "disk" to /sys/power/state both raise
 * PM_HIBERNATION_PREPARE. An arena mapped with CAP_IPC_LOCK (root's here)
 * makes the module refuse it with EBUSY; an ordinary user's arenas are
 * revoked instead (wiped, SIGBUS on the next touch), so that no user can
 * veto hibernation. An mmap() while a hibernation is in progress gets
 * EAGAIN.
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

/* ---- an ordinary user's arena is revoked, not a veto ----------------- */

#define NOBODY	65534

enum revoke_cmd {
	CMD_CHECK_KEPT = 'k',	/* still mapped and intact */
	CMD_CHECK_REVOKED = 'r',	/* revoked: flag, SIGBUS */
	CMD_EXIT = 'e',
};

/*
 * As nobody: map an arena (SHARED, so that access_in_child() probes these
 * very pages), plant the secret, tell the parent where in RAM it lies
 * (kc: /proc/kcore opened while still root, or fd -1 if there is none),
 * then check what the parent asks.
 */
static int unprivileged_owner(int cmd_fd, int report_fd, struct kcore *kc,
			      const unsigned char *secret)
{
	uint64_t pfns[2] = { 0, 0 };
	struct secarena_info info;
	struct fault_report rep;
	struct arena a;
	char cmd;

	CHILD_CHECK(become_user(NOBODY) == 0);
	CHILD_CHECK(arena_create(&a, 2, 1, SECARENA_FORK_SHARED) == 0);
	fill_with_secret(a.data, 2 * page_size(), secret);
	if (kc->fd >= 0)
		CHILD_CHECK(arena_data_pfns_in(kc, a.data, 2, pfns) == 0);
	kcore_close(kc);
	CHILD_CHECK(write_full(report_fd, pfns, sizeof(pfns)) == 0);
	for (;;) {
		CHILD_CHECK(read_full(cmd_fd, &cmd, 1) == 0);
		CHILD_CHECK(secarena_get_info(a.fd, &info) == 0);
		switch (cmd) {
		case CMD_CHECK_KEPT:
			CHILD_CHECK(!(info.flags & SECARENA_INFO_REVOKED));
			CHILD_CHECK(tiled_with_secret(a.data, 2 * page_size(),
						      secret));
			break;
		case CMD_CHECK_REVOKED:
			CHILD_CHECK(info.flags & SECARENA_INFO_REVOKED);
			CHILD_CHECK(info.flags & SECARENA_INFO_MAPPED);
			CHILD_CHECK(access_in_child(a.data, false, &rep) == 0);
			CHILD_CHECK(rep.signal == SIGBUS);
			CHILD_CHECK(rep.fault_addr == (void *)a.data);
			CHILD_CHECK(access_in_child(a.data + page_size(), true,
						    &rep) == 0);
			CHILD_CHECK(rep.signal == SIGBUS);
			/* Gone for good, also after the hibernation. */
			CHILD_CHECK(arena_unmap(&a) == 0);
			break;
		case CMD_EXIT:
			return 0;
		}
		CHILD_CHECK(write_full(report_fd, "d", 1) == 0);
	}
}

/*
 * Whether the revoke wiped the frames, not only unmapped them: the
 * parent reads them in RAM through /proc/kcore before and after.
 */
TEST_F(pm, unprivileged_arena_is_revoked_privileged_one_refuses)
{
	long long refused = secarena_counter("refused_hibernation");
	long long revoked = secarena_counter("revoked_hibernation");
	unsigned char secret[SECRET_LEN];
	int down[2], up[2], code = -1;
	uint64_t pfns[2];
	struct kcore kc;
	char byte;
	pid_t pid;

	ASSERT_LE(0, revoked);
	ASSERT_EQ(0, random_secret(secret));
	/* Every Debian kernel has it; without it only the RAM check goes. */
	if (kcore_open(&kc))
		TH_LOG("no /proc/kcore: the wipe of revoked frames is not checked");
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(unprivileged_owner(down[0], up[1], &kc, secret));
	ASSERT_EQ(0, read_full(up[0], pfns, sizeof(pfns)));
	ASSERT_EQ(2, secarena_counter("pages_in_use"));
	if (kc.fd >= 0)
		ASSERT_EQ(2, kcore_pages_holding(&kc, pfns, 2, secret));

	/* A privileged arena as well: refused, and nothing revoked. */
	ASSERT_EQ(0, arena_create(&self->a, 2, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(EBUSY, snapshot_open_errno());
	ASSERT_EQ(refused + 1, secarena_counter("refused_hibernation"));
	ASSERT_EQ(revoked, secarena_counter("revoked_hibernation"));
	ASSERT_EQ(0, write_full(down[1], "k", 1));
	ASSERT_EQ(0, read_full(up[0], &byte, 1));

	/* Only nobody's: the hibernation goes ahead and revokes it. */
	ASSERT_EQ(0, arena_unmap(&self->a));
	ASSERT_EQ(0, snapshot_open_errno());
	ASSERT_EQ(refused + 1, secarena_counter("refused_hibernation"));
	ASSERT_EQ(revoked + 1, secarena_counter("revoked_hibernation"));
	/*
	 * Revoked pages stay charged until their vma goes, and the frames
	 * are still the arena's (nothing else can have them): wiped.
	 */
	ASSERT_EQ(2, secarena_counter("pages_in_use"));
	if (kc.fd >= 0)
		ASSERT_EQ(0, kcore_pages_holding(&kc, pfns, 2, secret));
	ASSERT_EQ(0, write_full(down[1], "r", 1));
	ASSERT_EQ(0, read_full(up[0], &byte, 1));
	ASSERT_EQ(0, secarena_counter("pages_in_use"));
	ASSERT_EQ(0, write_full(down[1], "e", 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	/* Nothing left: a second hibernation revokes nothing. */
	ASSERT_EQ(0, snapshot_open_errno());
	ASSERT_EQ(revoked + 1, secarena_counter("revoked_hibernation"));
	kcore_close(&kc);
	explicit_bzero(secret, sizeof(secret));
}

TEST_HARNESS_MAIN
