// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: data pages are zeroed before they are freed, whatever ends the
 * arena (munmap, close, exit, exec, SIGKILL, the OOM killer, a fork copy
 * going away), and SECARENA_IOC_WIPE zeroes them in place.
 *
 * The proof reads physical memory through /proc/kcore. /proc/PID/pagemap
 * does not show an arena's pages (it is VM_PFNMAP, which the pagemap
 * walker skips: even root cannot look its frames up there, by design), so
 * arena_data_pfns() finds each data page's frame by stamping the page and
 * scanning RAM for the stamp. While the arena lives the secret must be
 * found at those frames (so the method can see it); once the arena is gone
 * it must not.
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include "secarena_helpers.h"

#define PS	page_size()
#define WIPE_PAGES	4
/*
 * exec frees the old mm and at once allocates for the new one, and with
 * init_on_alloc any page it reuses is zeroed: a big arena leaves pages
 * that exec does not reuse, so a missing wipe still shows.
 */
#define EXEC_WIPE_PAGES	256
#define MAX_WIPE_PAGES	EXEC_WIPE_PAGES

/* ---- the owner child ---------------------------------------------------- */

enum owner_cmd {
	CMD_GO = 'g',		/* plant now */
	CMD_EXIT = 'e',		/* exit(0) with the arena mapped */
	CMD_EXEC = 'x',		/* execve() with the arena mapped */
	CMD_OOM = 'o',		/* allocate until the memcg OOM killer comes */
};

/* Set in the image CMD_EXEC runs: "cmd_fd:report_fd". */
#define EXEC_WAIT_ENV	"SECARENA_WIPE_EXEC_WAIT"

/* The exec'd image says it runs, then waits for the parent to let it go. */
static void __attribute__((constructor)) exec_image_wait(void)
{
	const char *env = getenv(EXEC_WAIT_ENV);
	int cmd_fd, report_fd;
	char byte;

	if (!env)
		return;
	CHILD_CHECK(sscanf(env, "%d:%d", &cmd_fd, &report_fd) == 2);
	CHILD_CHECK(maps_contain(0, SECARENA_DEVICE_PATH) == 0);
	CHILD_CHECK(write_full(report_fd, "r", 1) == 0);
	(void)!read(cmd_fd, &byte, 1);
	_exit(0);
}

struct owner_child {
	pid_t pid;
	size_t pages;
	int cmd_fd;		/* parent writes commands */
	int report_fd;		/* parent reads PFNs and reports */
	uint64_t pfns[MAX_WIPE_PAGES];
};

/* Up to 64 MiB, touched; a memcg limited below that ends it first. */
static void allocate_until_killed(void)
{
	const size_t chunk = 1 << 20;
	char *p;
	int i;

	for (i = 0; i < 64; i++) {
		p = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(3);
		memset(p, 0x55, chunk);
	}
	_exit(4);
}

static void owner_child_main(const unsigned char *secret, size_t pages,
			     int cmd_fd, int report_fd, bool wait_go)
{
	uint64_t pfns[MAX_WIPE_PAGES];
	char env[64], cmd;
	struct arena a;

	if (wait_go) {
		CHILD_CHECK(read_full(cmd_fd, &cmd, 1) == 0);
		CHILD_CHECK(cmd == CMD_GO);
	}
	CHILD_CHECK(arena_create(&a, pages, 1, SECARENA_FORK_PRIVATE) == 0);
	fill_with_secret(a.data, pages * PS, secret);
	CHILD_CHECK(arena_data_pfns(0, a.data, pages, pfns) == 0);
	CHILD_CHECK(write_full(report_fd, pfns, pages * sizeof(pfns[0])) == 0);
	CHILD_CHECK(read_full(cmd_fd, &cmd, 1) == 0);
	switch (cmd) {
	case CMD_EXIT:
		_exit(0);
	case CMD_EXEC: {
		char *argv[] = { "secarena_wipe_exec_wait", NULL };
		char *envp[] = { env, NULL };

		snprintf(env, sizeof(env), EXEC_WAIT_ENV "=%d:%d", cmd_fd,
			 report_fd);
		execve("/proc/self/exe", argv, envp);
		_exit(2);
	}
	case CMD_OOM:
		allocate_until_killed();
	}
	_exit(1);
}

/* Both pipes survive exec (no O_CLOEXEC); only this child is forked. */
static int owner_child_start(struct owner_child *c, const unsigned char *secret,
			     size_t pages, bool wait_go)
{
	int down[2], up[2];

	c->pages = pages;
	if (pipe(down) || pipe(up))
		return -1;
	c->pid = fork_tied();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(down[1]);
		close(up[0]);
		owner_child_main(secret, pages, down[0], up[1], wait_go);
	}
	close(down[0]);
	close(up[1]);
	c->cmd_fd = down[1];
	c->report_fd = up[0];
	return 0;
}

static int owner_child_send(struct owner_child *c, char cmd)
{
	return write_full(c->cmd_fd, &cmd, 1);
}

static int owner_child_read_pfns(struct owner_child *c)
{
	return read_full(c->report_fd, c->pfns, c->pages * sizeof(c->pfns[0]));
}

static void owner_child_close(struct owner_child *c)
{
	close(c->cmd_fd);
	close(c->report_fd);
}

/* ---- the fixture ----------------------------------------------------------- */

FIXTURE(wipe) {
	struct kcore kc;
	unsigned char secret[SECRET_LEN];
	struct arena a;
	uint64_t pfns[WIPE_PAGES];
};

FIXTURE_SETUP(wipe)
{
	char *probe;
	int err;

	self->kc.fd = -1;
	self->a.fd = -1;
	err = kcore_open(&self->kc);
	if (err == -EACCES || err == -EPERM)
		SKIP(return, "reading /proc/kcore needs CAP_SYS_RAWIO");
	if (err == -ENOENT)
		SKIP(return, "no /proc/kcore (CONFIG_PROC_KCORE)");
	ASSERT_EQ(0, err);
	ASSERT_LT(0U, self->kc.nr);

	/* Opening is not all: reading RAM through it must work too. */
	probe = malloc(PS);
	ASSERT_NE(NULL, probe);
	err = kcore_read_phys(&self->kc, self->kc.seg[0].p_paddr, probe, PS);
	explicit_bzero(probe, PS);
	free(probe);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, random_secret(self->secret));
}

FIXTURE_TEARDOWN(wipe)
{
	arena_destroy(&self->a);
	kcore_close(&self->kc);
}

#define ASSERT_SECRET_IN_PAGES(pfns, n) \
	ASSERT_EQ((int)(n), kcore_pages_holding(&self->kc, pfns, n, self->secret))

#define ASSERT_SECRET_GONE(pfns, n) \
	ASSERT_EQ(0, kcore_pages_holding(&self->kc, pfns, n, self->secret))

/* Map an arena here, tile it with the secret and find it in RAM. */
#define PLANT(policy) do {						\
	ASSERT_EQ(0, arena_create(&self->a, WIPE_PAGES, 1, policy));	\
	fill_with_secret(self->a.data, WIPE_PAGES * PS, self->secret);	\
	ASSERT_EQ(0, arena_data_pfns(0, self->a.data, WIPE_PAGES,	\
				     self->pfns));			\
	ASSERT_SECRET_IN_PAGES(self->pfns, WIPE_PAGES);			\
} while (0)

/* ---- endings in this process ----------------------------------------- */

TEST_F(wipe, munmap_wipes_the_pages)
{
	PLANT(SECARENA_FORK_PRIVATE);
	ASSERT_EQ(0, arena_unmap(&self->a));
	ASSERT_SECRET_GONE(self->pfns, WIPE_PAGES);
}

TEST_F(wipe, close_then_munmap_wipes_the_pages)
{
	PLANT(SECARENA_FORK_PRIVATE);
	ASSERT_EQ(0, close(self->a.fd));
	self->a.fd = -1;
	/* The mapping alone keeps the arena. */
	ASSERT_TRUE(tiled_with_secret(self->a.data, WIPE_PAGES * PS,
				      self->secret));
	ASSERT_SECRET_IN_PAGES(self->pfns, WIPE_PAGES);
	ASSERT_EQ(0, arena_unmap(&self->a));
	ASSERT_SECRET_GONE(self->pfns, WIPE_PAGES);
}

TEST_F(wipe, ioctl_wipe_zeroes_in_place)
{
	uint64_t after[WIPE_PAGES];
	struct secarena_info info;

	PLANT(SECARENA_FORK_PRIVATE);
	ASSERT_EQ(0, secarena_wipe(self->a.fd));
	ASSERT_TRUE(all_zero(self->a.data, WIPE_PAGES * PS));
	ASSERT_SECRET_GONE(self->pfns, WIPE_PAGES);
	/* Same pages, still mapped and charged. */
	ASSERT_EQ(0, arena_data_pfns(0, self->a.data, WIPE_PAGES, after));
	ASSERT_EQ(0, memcmp(after, self->pfns, sizeof(after)));
	ASSERT_EQ(pages_to_kb(WIPE_PAGES), vm_pin_kb(0));
	ASSERT_EQ(0, secarena_get_info(self->a.fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_MAPPED, info.flags);
	ASSERT_EQ((__u64)WIPE_PAGES, info.data_pages);
	/* And writable again. */
	fill_with_secret(self->a.data, WIPE_PAGES * PS, self->secret);
	ASSERT_SECRET_IN_PAGES(self->pfns, WIPE_PAGES);
	ASSERT_EQ(0, arena_unmap(&self->a));
	ASSERT_SECRET_GONE(self->pfns, WIPE_PAGES);
}

/* ---- endings of a child that owns the arena --------------------------- */

TEST_F(wipe, exit_wipes_the_pages)
{
	struct owner_child c;
	int code = -1;

	ASSERT_EQ(0, owner_child_start(&c, self->secret, WIPE_PAGES, false));
	ASSERT_EQ(0, owner_child_read_pfns(&c));
	ASSERT_SECRET_IN_PAGES(c.pfns, WIPE_PAGES);
	ASSERT_EQ(0, owner_child_send(&c, CMD_EXIT));
	ASSERT_EQ(0, wait_child(c.pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_SECRET_GONE(c.pfns, WIPE_PAGES);
	owner_child_close(&c);
}

TEST_F(wipe, sigkill_wipes_the_pages)
{
	struct owner_child c;

	ASSERT_EQ(0, owner_child_start(&c, self->secret, WIPE_PAGES, false));
	ASSERT_EQ(0, owner_child_read_pfns(&c));
	ASSERT_SECRET_IN_PAGES(c.pfns, WIPE_PAGES);
	ASSERT_EQ(0, kill(c.pid, SIGKILL));
	ASSERT_EQ(SIGKILL, wait_child(c.pid, NULL));
	ASSERT_SECRET_GONE(c.pfns, WIPE_PAGES);
	owner_child_close(&c);
}

TEST_F(wipe, exec_wipes_the_pages)
{
	struct owner_child c;
	int code = -1;
	char byte;

	ASSERT_EQ(0, owner_child_start(&c, self->secret, EXEC_WIPE_PAGES, false));
	ASSERT_EQ(0, owner_child_read_pfns(&c));
	ASSERT_SECRET_IN_PAGES(c.pfns, EXEC_WIPE_PAGES);
	ASSERT_EQ(0, owner_child_send(&c, CMD_EXEC));
	/* The new image runs: the old mm, and the arena, are gone. */
	ASSERT_EQ(0, read_full(c.report_fd, &byte, 1));
	ASSERT_EQ('r', byte);
	ASSERT_SECRET_GONE(c.pfns, EXEC_WIPE_PAGES);
	ASSERT_EQ(0, owner_child_send(&c, CMD_EXIT));
	ASSERT_EQ(0, wait_child(c.pid, &code));
	ASSERT_EQ(0, code);
	owner_child_close(&c);
}

TEST_F(wipe, private_fork_copy_is_wiped_with_the_child)
{
	uint64_t child_pfns[WIPE_PAGES];
	int down[2], up[2], code = -1;
	size_t i, j;
	char byte;
	pid_t pid;

	PLANT(SECARENA_FORK_PRIVATE);
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_CHECK(arena_data_pfns(0, self->a.data, WIPE_PAGES,
					    child_pfns) == 0);
		CHILD_CHECK(write_full(up[1], child_pfns,
				       sizeof(child_pfns)) == 0);
		CHILD_CHECK(read_full(down[0], &byte, 1) == 0);
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], child_pfns, sizeof(child_pfns)));
	/* The copy has pages of its own, holding the secret too. */
	for (i = 0; i < WIPE_PAGES; i++)
		for (j = 0; j < WIPE_PAGES; j++)
			ASSERT_NE(self->pfns[i], child_pfns[j]);
	ASSERT_SECRET_IN_PAGES(child_pfns, WIPE_PAGES);
	ASSERT_EQ(0, write_full(down[1], "e", 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_SECRET_GONE(child_pfns, WIPE_PAGES);
	/* Ours are untouched. */
	ASSERT_SECRET_IN_PAGES(self->pfns, WIPE_PAGES);
}

TEST_F(wipe, shared_pages_are_wiped_when_the_last_mapping_goes)
{
	int down[2], up[2], code = -1;
	char byte;
	pid_t pid;

	PLANT(SECARENA_FORK_SHARED);
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_CHECK(write_full(up[1], "m", 1) == 0);
		CHILD_CHECK(read_full(down[0], &byte, 1) == 0);
		CHILD_CHECK(tiled_with_secret(self->a.data, WIPE_PAGES * PS,
					      self->secret));
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], &byte, 1));
	ASSERT_EQ(0, arena_unmap(&self->a));
	/* The child still maps them. */
	ASSERT_SECRET_IN_PAGES(self->pfns, WIPE_PAGES);
	ASSERT_EQ(0, write_full(down[1], "e", 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_SECRET_GONE(self->pfns, WIPE_PAGES);
}

/* ---- SECARENA_IOC_WIPE without pages, and from elsewhere ---------------- */

TEST(ioctl_wipe_with_nothing_mapped_returns_0)
{
	struct arena a;
	int fd = secarena_open(O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, secarena_wipe(fd));
	ASSERT_EQ(0, secarena_configure(fd, 2 * PS, 1, SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, secarena_wipe(fd));
	ASSERT_EQ(0, arena_map_fd(&a, fd, 2, 1));
	ASSERT_EQ(0, arena_unmap(&a));
	/* Spent, by its owner. */
	ASSERT_EQ(0, secarena_wipe(fd));
	close(fd);
}

static int wipe_from_child(void *arg)
{
	struct arena *a = arg;

	CHILD_CHECK(secarena_wipe(a->fd) == -1);
	CHILD_CHECK(errno == EPERM);
	return 0;
}

TEST(ioctl_wipe_by_another_process_eperm)
{
	uint32_t policies[] = {
		SECARENA_FORK_PRIVATE, SECARENA_FORK_NONE, SECARENA_FORK_SHARED,
	};
	struct arena a;
	size_t i;
	int code;

	for (i = 0; i < ARRAY_SIZE(policies); i++) {
		ASSERT_EQ(0, arena_create(&a, 2, 1, policies[i]));
		memset(a.data, 0x71, 2 * PS);
		code = -1;
		ASSERT_EQ(0, child_fatal_signal(wipe_from_child, &a, &code));
		ASSERT_EQ(0, code);
		ASSERT_EQ(0x71, a.data[0]);
		ASSERT_EQ(0x71, a.data[2 * PS - 1]);
		arena_destroy(&a);
	}
}

/* ---- the OOM killer -------------------------------------------------------- */

FIXTURE(oom) {
	struct kcore kc;
	unsigned char secret[SECRET_LEN];
	struct test_cgroup cg;
};

FIXTURE_SETUP(oom)
{
	int err;

	self->kc.fd = -1;
	err = kcore_open(&self->kc);
	if (err == -EACCES || err == -EPERM)
		SKIP(return, "reading /proc/kcore needs CAP_SYS_RAWIO");
	if (err == -ENOENT)
		SKIP(return, "no /proc/kcore (CONFIG_PROC_KCORE)");
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, random_secret(self->secret));

	err = test_cgroup_make(&self->cg, "secarena-oom", "8M");
	if (err == -ENOENT)
		SKIP(return, "no cgroup2 hierarchy at " CGROUP_ROOT);
	if (err == -EOPNOTSUPP)
		SKIP(return, "cgroup2 has no memory controller");
	if (err == -EPERM)
		SKIP(return, "making a cgroup needs root");
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(oom)
{
	EXPECT_EQ(0, test_cgroup_remove(&self->cg));
	kcore_close(&self->kc);
}

TEST_F_TIMEOUT(oom, oom_kill_wipes_the_pages, 120)
{
	struct owner_child c;

	ASSERT_EQ(0, owner_child_start(&c, self->secret, WIPE_PAGES, true));
	ASSERT_EQ(0, test_cgroup_enter(&self->cg, c.pid));
	ASSERT_EQ(0, owner_child_send(&c, CMD_GO));
	ASSERT_EQ(0, owner_child_read_pfns(&c));
	ASSERT_EQ(WIPE_PAGES, kcore_pages_holding(&self->kc, c.pfns, WIPE_PAGES,
						  self->secret));
	ASSERT_EQ(0, owner_child_send(&c, CMD_OOM));
	ASSERT_EQ(SIGKILL, wait_child(c.pid, NULL));
	ASSERT_EQ(1, test_cgroup_key(&self->cg, "memory.events", "oom_kill"));
	ASSERT_EQ(0, kcore_pages_holding(&self->kc, c.pfns, WIPE_PAGES,
					 self->secret));
	owner_child_close(&c);
}

TEST_HARNESS_MAIN
