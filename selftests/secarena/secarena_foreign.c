// SPDX-License-Identifier: GPL-2.0
/*
 * secarena: every way into an arena other than its own mapping must fail:
 * /proc/PID/mem, ptrace, process_vm_readv/writev, core dumps, and mmap()
 * of the file by a process that got it over SCM_RIGHTS, pidfd_getfd() or
 * fork(). Each refusal comes with a control showing that the same path
 * does reach ordinary memory.
 */
/*
 * 6.1's kselftest_harness.h leaves parameters unused in code it expands
 * (TEST() wrappers, its SIGALRM handler); -Wextra would flag them here.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"

#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "secarena_helpers.h"

#define PS	page_size()
#define ARENA_PAGES	2

/*
 * A child that owns an arena tiled with a secret and keeps a control copy
 * of another value in its heap, then waits for the parent.
 */
struct victim {
	pid_t pid;
	int to_child, from_child;	/* pipe ends in the parent */
	char *arena_data;		/* addresses in the child */
	char *heap_control;
	unsigned char secret[SECRET_LEN];
	unsigned char control[SECRET_LEN];
};

struct victim_addrs {
	char *arena_data;
	char *heap_control;
};

/* What the parent asks the waiting victim to do before it exits. */
enum victim_cmd { VICTIM_CHECK_AND_EXIT = 'c' };

static void victim_main(struct victim *v, int rd, int wr)
{
	struct victim_addrs addrs;
	struct arena a;
	char cmd;

	CHILD_CHECK(arena_create(&a, ARENA_PAGES, 1,
				 SECARENA_FORK_PRIVATE) == 0);
	fill_with_secret(a.data, ARENA_PAGES * PS, v->secret);
	addrs.arena_data = a.data;
	addrs.heap_control = malloc(SECRET_LEN);
	CHILD_CHECK(addrs.heap_control);
	memcpy(addrs.heap_control, v->control, SECRET_LEN);
	CHILD_CHECK(write_full(wr, &addrs, sizeof(addrs)) == 0);
	CHILD_CHECK(read_full(rd, &cmd, 1) == 0);
	CHILD_CHECK(cmd == VICTIM_CHECK_AND_EXIT);
	/* Nothing the parent tried may have changed the arena. */
	CHILD_CHECK(tiled_with_secret(a.data, ARENA_PAGES * PS, v->secret));
	arena_destroy(&a);
	_exit(0);
}

/* 0, or -1 if the victim could not be started. */
static int victim_start(struct victim *v)
{
	struct victim_addrs addrs;
	int down[2], up[2];

	if (random_secret(v->secret) || random_secret(v->control))
		return -1;
	if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC))
		return -1;
	v->pid = fork_tied();
	if (v->pid < 0)
		return -1;
	if (v->pid == 0) {
		close(down[1]);
		close(up[0]);
		victim_main(v, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	v->to_child = down[1];
	v->from_child = up[0];
	if (read_full(v->from_child, &addrs, sizeof(addrs)))
		return -1;
	v->arena_data = addrs.arena_data;
	v->heap_control = addrs.heap_control;
	return 0;
}

/* Tell the victim to check its arena and exit: its exit code, or -1. */
static int victim_finish(struct victim *v)
{
	char cmd = VICTIM_CHECK_AND_EXIT;
	int code = -1;

	if (write_full(v->to_child, &cmd, 1))
		return -1;
	if (wait_child(v->pid, &code) != 0)
		return -1;
	close(v->to_child);
	close(v->from_child);
	return code;
}

/* ---- /proc/PID/mem ----------------------------------------------------- */

TEST(proc_self_mem_eio)
{
	unsigned char secret[SECRET_LEN], buf[SECRET_LEN];
	char *heap = malloc(SECRET_LEN);
	struct arena a;
	int mem;

	ASSERT_NE(NULL, heap);
	ASSERT_EQ(0, random_secret(secret));
	ASSERT_EQ(0, arena_create(&a, ARENA_PAGES, 1, SECARENA_FORK_PRIVATE));
	fill_with_secret(a.data, ARENA_PAGES * PS, secret);
	memcpy(heap, secret, SECRET_LEN);

	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mem);
	/* Control: the heap copy reads back. */
	ASSERT_EQ(SECRET_LEN, pread(mem, buf, SECRET_LEN, (uintptr_t)heap));
	ASSERT_EQ(0, memcmp(buf, secret, SECRET_LEN));

	ASSERT_EQ(-1, pread(mem, buf, SECRET_LEN, (uintptr_t)a.data));
	ASSERT_EQ(EIO, errno);
	ASSERT_EQ(-1, pread(mem, buf, 1, (uintptr_t)(a.data + PS + 17)));
	ASSERT_EQ(EIO, errno);
	ASSERT_EQ((off_t)(uintptr_t)a.data,
		  lseek(mem, (off_t)(uintptr_t)a.data, SEEK_SET));
	ASSERT_EQ(-1, read(mem, buf, SECRET_LEN));
	ASSERT_EQ(EIO, errno);

	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(-1, pwrite(mem, buf, SECRET_LEN, (uintptr_t)a.data));
	ASSERT_EQ(EIO, errno);
	ASSERT_TRUE(tiled_with_secret(a.data, ARENA_PAGES * PS, secret));
	close(mem);
	explicit_bzero(heap, SECRET_LEN);
	free(heap);
	arena_destroy(&a);
}

TEST(proc_pid_mem_of_child_eio)
{
	unsigned char buf[SECRET_LEN];
	struct victim v;
	char path[64];
	int mem;

	ASSERT_EQ(0, victim_start(&v));
	snprintf(path, sizeof(path), "/proc/%d/mem", v.pid);
	mem = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mem);

	ASSERT_EQ(SECRET_LEN, pread(mem, buf, SECRET_LEN,
				    (uintptr_t)v.heap_control));
	ASSERT_EQ(0, memcmp(buf, v.control, SECRET_LEN));

	ASSERT_EQ(-1, pread(mem, buf, SECRET_LEN, (uintptr_t)v.arena_data));
	ASSERT_EQ(EIO, errno);
	ASSERT_EQ(-1, pwrite(mem, v.control, SECRET_LEN,
			     (uintptr_t)v.arena_data));
	ASSERT_EQ(EIO, errno);
	close(mem);
	ASSERT_EQ(0, victim_finish(&v));
}

/* ---- ptrace -------------------------------------------------------------- */

TEST(ptrace_peek_and_poke_eio)
{
	struct victim v;
	long word, control;
	int status;

	ASSERT_EQ(0, victim_start(&v));
	ASSERT_EQ(0, ptrace(PTRACE_ATTACH, v.pid, NULL, NULL));
	ASSERT_EQ(v.pid, waitpid(v.pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));

	/* Control: a heap word of the tracee. */
	memcpy(&control, v.control, sizeof(control));
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, v.pid, v.heap_control, NULL);
	ASSERT_EQ(0, errno);
	ASSERT_EQ(control, word);

	errno = 0;
	ASSERT_EQ(-1, ptrace(PTRACE_PEEKDATA, v.pid, v.arena_data, NULL));
	ASSERT_EQ(EIO, errno);
	errno = 0;
	ASSERT_EQ(-1, ptrace(PTRACE_PEEKDATA, v.pid,
			     v.arena_data + ARENA_PAGES * PS - sizeof(long),
			     NULL));
	ASSERT_EQ(EIO, errno);
	errno = 0;
	ASSERT_EQ(-1, ptrace(PTRACE_POKEDATA, v.pid, v.arena_data,
			     (void *)0x4141414141414141UL));
	ASSERT_EQ(EIO, errno);

	ASSERT_EQ(0, ptrace(PTRACE_DETACH, v.pid, NULL, NULL));
	ASSERT_EQ(0, victim_finish(&v));
}

/* ---- process_vm_readv / process_vm_writev -------------------------------- */

TEST(process_vm_readv_and_writev_efault)
{
	unsigned char buf[SECRET_LEN];
	struct iovec local = { .iov_base = buf, .iov_len = SECRET_LEN };
	struct iovec remote;
	struct victim v;

	ASSERT_EQ(0, victim_start(&v));

	remote.iov_base = v.heap_control;
	remote.iov_len = SECRET_LEN;
	ASSERT_EQ(SECRET_LEN, process_vm_readv(v.pid, &local, 1, &remote, 1, 0));
	ASSERT_EQ(0, memcmp(buf, v.control, SECRET_LEN));

	remote.iov_base = v.arena_data;
	ASSERT_EQ(-1, process_vm_readv(v.pid, &local, 1, &remote, 1, 0));
	ASSERT_EQ(EFAULT, errno);
	memset(buf, 0x41, sizeof(buf));
	ASSERT_EQ(-1, process_vm_writev(v.pid, &local, 1, &remote, 1, 0));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(0, victim_finish(&v));
}

TEST(process_vm_readv_of_self_efault)
{
	unsigned char secret[SECRET_LEN], buf[SECRET_LEN];
	struct iovec local = { .iov_base = buf, .iov_len = SECRET_LEN };
	struct iovec remote;
	struct arena a;

	ASSERT_EQ(0, random_secret(secret));
	ASSERT_EQ(0, arena_create(&a, 1, 1, SECARENA_FORK_PRIVATE));
	fill_with_secret(a.data, PS, secret);
	remote.iov_base = a.data;
	remote.iov_len = SECRET_LEN;
	ASSERT_EQ(-1, process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_TRUE(tiled_with_secret(a.data, PS, secret));
	arena_destroy(&a);
}

/* ---- mmap() by a process that is not the owner ---------------------------- */

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The receiver of an owned arena's file: mmap and WIPE are EPERM. */
static int scm_receiver_of_owned(int sock)
{
	size_t len = arena_len(ARENA_PAGES, 1);
	char done = 'd';
	int fd;

	fd = recv_fd(sock);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
		    MAP_FAILED);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(secarena_wipe(fd) == -1);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(vm_pin_kb(0) == 0);
	CHILD_CHECK(write_full(sock, &done, 1) == 0);
	return 0;
}

TEST(scm_rights_receiver_cannot_map_owned_arena)
{
	long long refused = secarena_counter("refused_foreign_mmap");
	unsigned char secret[SECRET_LEN];
	struct arena a;
	int sv[2], code = -1;
	pid_t pid;
	char done;

	ASSERT_LE(0, refused);
	ASSERT_EQ(0, random_secret(secret));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	/* The receiver exists before the arena: nothing of it is inherited. */
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		_exit(scm_receiver_of_owned(sv[1]));
	}
	close(sv[1]);
	ASSERT_EQ(0, arena_create(&a, ARENA_PAGES, 1, SECARENA_FORK_PRIVATE));
	fill_with_secret(a.data, ARENA_PAGES * PS, secret);
	ASSERT_EQ(0, send_fd(sv[0], a.fd));
	ASSERT_EQ(0, read_full(sv[0], &done, 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(refused + 2, secarena_counter("refused_foreign_mmap"));
	ASSERT_TRUE(tiled_with_secret(a.data, ARENA_PAGES * PS, secret));
	arena_destroy(&a);
}

/*
 * The receiver of a file nobody mapped yet: the opener still owns it, so
 * CONFIGURE, mmap and WIPE are refused; INFO shows the opener's settings.
 */
static int scm_receiver_of_unmapped(int sock)
{
	struct secarena_info info;
	char cmd, done = 'r';
	int fd;

	fd = recv_fd(sock);
	CHILD_CHECK(fd >= 0);
	errno = 0;
	CHILD_CHECK(secarena_configure(fd, 2 * ARENA_PAGES * PS, 2,
				       SECARENA_FORK_SHARED) == -1);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(mmap(NULL, arena_len(ARENA_PAGES, 1),
			 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(secarena_wipe(fd) == -1);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(secarena_get_info(fd, &info) == 0);
	CHILD_CHECK(info.data_size == ARENA_PAGES * PS);
	CHILD_CHECK(info.guard_pages == 1);
	CHILD_CHECK(info.fork_policy == SECARENA_FORK_PRIVATE);
	CHILD_CHECK(info.flags == SECARENA_INFO_CONFIGURED);
	CHILD_CHECK(write_full(sock, &done, 1) == 0);
	CHILD_CHECK(read_full(sock, &cmd, 1) == 0);
	/* Mapped by the opener by now: still nothing for us. */
	CHILD_CHECK(secarena_get_info(fd, &info) == 0);
	CHILD_CHECK(info.flags == (SECARENA_INFO_CONFIGURED | SECARENA_INFO_MAPPED));
	CHILD_CHECK(info.data_pages == ARENA_PAGES);
	CHILD_CHECK(secarena_wipe(fd) == -1);
	CHILD_CHECK(errno == EPERM);
	return 0;
}

TEST(scm_rights_unmapped_arena_stays_the_openers)
{
	long long refused = secarena_counter("refused_foreign_mmap");
	unsigned char secret[SECRET_LEN];
	int sv[2], code = -1;
	char done, cmd = 'x';
	struct arena a;
	pid_t pid;

	ASSERT_LE(0, refused);
	ASSERT_EQ(0, random_secret(secret));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		_exit(scm_receiver_of_unmapped(sv[1]));
	}
	close(sv[1]);
	a.fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, a.fd);
	ASSERT_EQ(0, secarena_configure(a.fd, ARENA_PAGES * PS, 1,
					SECARENA_FORK_PRIVATE));
	ASSERT_EQ(0, send_fd(sv[0], a.fd));
	ASSERT_EQ(0, read_full(sv[0], &done, 1));
	ASSERT_EQ(refused + 1, secarena_counter("refused_foreign_mmap"));

	/* The receiver's refused CONFIGURE changed nothing. */
	ASSERT_EQ(0, arena_map_fd(&a, a.fd, ARENA_PAGES, 1));
	fill_with_secret(a.data, ARENA_PAGES * PS, secret);
	ASSERT_EQ(0, write_full(sv[0], &cmd, 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	ASSERT_TRUE(tiled_with_secret(a.data, ARENA_PAGES * PS, secret));
	arena_destroy(&a);
}

/* A fork child holding the fd before the first mmap: the same refusals. */
static int unmapped_fd_child(void *arg)
{
	int fd = *(int *)arg;

	errno = 0;
	CHILD_CHECK(secarena_configure(fd, ARENA_PAGES * PS, 1,
				       SECARENA_FORK_SHARED) == -1);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(mmap(NULL, arena_len(ARENA_PAGES, 1),
			 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	CHILD_CHECK(errno == EPERM);
	return 0;
}

TEST(fork_child_cannot_configure_or_map_an_unmapped_arena)
{
	struct secarena_info info;
	int fd, code = -1;

	fd = secarena_open(O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, child_fatal_signal(unmapped_fd_child, &fd, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(0U, info.flags);
	ASSERT_EQ((__u32)SECARENA_FORK_PRIVATE, info.fork_policy);
	close(fd);
}

TEST(pidfd_getfd_copy_cannot_map)
{
	long long refused = secarena_counter("refused_foreign_mmap");
	struct secarena_info info;
	int pidfd, fd, up[2], down[2], code = -1;
	char cmd = 'x';
	pid_t pid;
	int child_fd;

	ASSERT_LE(0, refused);
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct arena a;

		CHILD_CHECK(arena_create(&a, ARENA_PAGES, 1,
					 SECARENA_FORK_PRIVATE) == 0);
		memset(a.data, 0x2d, ARENA_PAGES * PS);
		CHILD_CHECK(write_full(up[1], &a.fd, sizeof(a.fd)) == 0);
		CHILD_CHECK(read_full(down[0], &cmd, 1) == 0);
		CHILD_CHECK(a.data[0] == 0x2d);
		_exit(0);
	}
	ASSERT_EQ(0, read_full(up[0], &child_fd, sizeof(child_fd)));
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	ASSERT_LE(0, pidfd);
	fd = syscall(SYS_pidfd_getfd, pidfd, child_fd, 0);
	ASSERT_LE(0, fd);
	/* It is the child's arena file. */
	ASSERT_EQ(0, secarena_get_info(fd, &info));
	ASSERT_EQ(SECARENA_INFO_CONFIGURED | SECARENA_INFO_MAPPED, info.flags);

	ASSERT_EQ(MAP_FAILED, mmap(NULL, arena_len(ARENA_PAGES, 1),
				   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	ASSERT_EQ(EPERM, errno);
	ASSERT_EQ(-1, secarena_wipe(fd));
	ASSERT_EQ(EPERM, errno);
	ASSERT_EQ(refused + 1, secarena_counter("refused_foreign_mmap"));
	ASSERT_EQ(0, write_full(down[1], &cmd, 1));
	ASSERT_EQ(0, wait_child(pid, &code));
	ASSERT_EQ(0, code);
	close(fd);
	close(pidfd);
}

FIXTURE(inherited) {
	struct arena a;
};

FIXTURE_VARIANT(inherited) {
	uint32_t fork_policy;
};

FIXTURE_VARIANT_ADD(inherited, private) { .fork_policy = SECARENA_FORK_PRIVATE };
FIXTURE_VARIANT_ADD(inherited, none) { .fork_policy = SECARENA_FORK_NONE };
FIXTURE_VARIANT_ADD(inherited, shared) { .fork_policy = SECARENA_FORK_SHARED };

FIXTURE_SETUP(inherited)
{
	ASSERT_EQ(0, arena_create(&self->a, ARENA_PAGES, 1,
				  variant->fork_policy));
	memset(self->a.data, 0x39, ARENA_PAGES * PS);
}

FIXTURE_TEARDOWN(inherited)
{
	arena_destroy(&self->a);
}

static int inherited_fd_child(void *arg)
{
	struct arena *a = arg;

	CHILD_CHECK(mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 a->fd, 0) == MAP_FAILED);
	CHILD_CHECK(errno == EPERM);
	CHILD_CHECK(secarena_wipe(a->fd) == -1);
	CHILD_CHECK(errno == EPERM);
	return 0;
}

TEST_F(inherited, fork_child_cannot_map_or_wipe)
{
	long long refused = secarena_counter("refused_foreign_mmap");
	int code = -1;

	ASSERT_LE(0, refused);
	ASSERT_EQ(0, child_fatal_signal(inherited_fd_child, &self->a, &code));
	ASSERT_EQ(0, code);
	ASSERT_EQ(refused + 1, secarena_counter("refused_foreign_mmap"));
	ASSERT_EQ(0x39, self->a.data[0]);
	ASSERT_EQ(0x39, self->a.data[ARENA_PAGES * PS - 1]);
}

/* ---- core dumps ---------------------------------------------------------- */

#define CORE_DIR	"/tmp"
#define CORE_PATTERN	CORE_DIR "/secarena-core.%p"

FIXTURE(core_dump) {
	char saved_pattern[512];
	bool pattern_saved;
};

FIXTURE_SETUP(core_dump)
{
	int err;

	if (geteuid() != 0)
		SKIP(return, "core_pattern is global and needs root");
	ASSERT_LT(0, read_text_file("/proc/sys/kernel/core_pattern",
				    self->saved_pattern,
				    sizeof(self->saved_pattern)));
	self->pattern_saved = true;
	/* Dumps go to a tmpfs of this test only. */
	err = private_tmpfs_at(CORE_DIR);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, write_text_file("/proc/sys/kernel/core_pattern",
				     CORE_PATTERN));
}

FIXTURE_TEARDOWN(core_dump)
{
	if (self->pattern_saved)
		EXPECT_EQ(0, write_text_file("/proc/sys/kernel/core_pattern",
					     self->saved_pattern));
}

/* Fills the SHARED arena straight from getrandom(): no other copy exists. */
static int dumping_child(void *arg)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct arena *a = arg;

	CHILD_CHECK(setrlimit(RLIMIT_CORE, &unlimited) == 0);
	CHILD_CHECK(prctl(PR_SET_DUMPABLE, 1) == 0);
	/*
	 * Ask for every kind of mapping, shared file mappings included
	 * (off by default), so only the arena's own flags keep it out.
	 */
	CHILD_CHECK(write_text_file("/proc/self/coredump_filter", "0x1ff") == 0);
	CHILD_CHECK(getrandom(a->data, SECRET_LEN, 0) == SECRET_LEN);
	abort();
}

TEST_F_TIMEOUT(core_dump, core_file_leaves_the_arena_out, 120)
{
	unsigned char *control = malloc(SECRET_LEN);
	char path[128], *core;
	struct arena a;
	struct stat st;
	int status, fd;
	pid_t pid;

	ASSERT_NE(NULL, control);
	/* In the child's heap, and so in its dump. */
	ASSERT_EQ(0, random_secret(control));
	ASSERT_EQ(0, arena_create(&a, ARENA_PAGES, 1, SECARENA_FORK_SHARED));

	pid = fork_tied();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(dumping_child(&a));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGABRT, WTERMSIG(status));
	ASSERT_TRUE(WCOREDUMP(status));

	/* The child's secret reached us through the SHARED pages. */
	ASSERT_FALSE(all_zero(a.data, SECRET_LEN));

	snprintf(path, sizeof(path), CORE_DIR "/secarena-core.%d", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_LT(0, st.st_size);
	core = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, core);
	ASSERT_TRUE(contains_secret(core, st.st_size, control));
	ASSERT_FALSE(contains_secret(core, st.st_size,
				     (unsigned char *)a.data));
	munmap(core, st.st_size);
	close(fd);
	unlink(path);
	explicit_bzero(control, SECRET_LEN);
	free(control);
	arena_destroy(&a);
}

TEST_HARNESS_MAIN
