// SPDX-License-Identifier: GPL-2.0
/*
 * Shared by the limits stress programs: TAP output that forked children
 * may write too, small file helpers, the module's counters and
 * parameters, and opening and mapping one arena.
 */
#ifndef STRESS_LIMITS_COMMON_H
#define STRESS_LIMITS_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/secarena.h>

#define SYSFS_DIR	"/sys/class/misc/secarena"
#define PARAM_DIR	"/sys/module/secarena/parameters"

static size_t ps;	/* page size, set by tap_init() */

/*
 * The test number lives in shared memory so that forked children can
 * print TAP lines of their own; each line goes out in one write(), so
 * lines from several processes never interleave.
 */
static unsigned int *tap_count;
static unsigned int *tap_failed;

static inline void tap_init(void)
{
	unsigned int *shm;

	ps = (size_t)sysconf(_SC_PAGESIZE);
	shm = mmap(NULL, ps, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	tap_count = &shm[0];
	tap_failed = &shm[1];
}

static inline void __attribute__((format(printf, 3, 4)))
tap(bool ok, const char *name, const char *fmt, ...)
{
	unsigned int n = __atomic_add_fetch(tap_count, 1, __ATOMIC_SEQ_CST);
	char line[1024], detail[768] = "";
	va_list ap;
	int len;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	if (!ok)
		__atomic_add_fetch(tap_failed, 1, __ATOMIC_SEQ_CST);
	len = snprintf(line, sizeof(line), "%sok %u - %s%s%s\n",
		       ok ? "" : "not ", n, name, detail[0] ? " # " : "",
		       detail);
	if (len > (int)sizeof(line) - 1)
		len = sizeof(line) - 1;
	line[len - 1] = '\n';
	(void)!write(STDOUT_FILENO, line, len);
}

static inline void __attribute__((format(printf, 1, 2)))
diag(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line + 2, sizeof(line) - 3, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(line) - 4)
		len = sizeof(line) - 4;
	line[0] = '#';
	line[1] = ' ';
	line[len + 2] = '\n';
	(void)!write(STDOUT_FILENO, line, len + 3);
}

/* The plan goes last: the number of tests depends on what ran. */
static inline int tap_done(void)
{
	printf("1..%u\n", *tap_count);
	fflush(stdout);
	return *tap_failed ? 1 : 0;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- files ------------------------------------------------------------ */

static inline ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, done = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)done + 1 < size) {
		n = read(fd, buf + done, size - 1 - done);
		if (n <= 0)
			break;
		done += n;
	}
	buf[done] = '\0';
	close(fd);
	return done;
}

/* 0 or the errno of open/write. */
static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		err = errno;
	else if ((size_t)n != strlen(s))
		err = EIO;
	close(fd);
	return err;
}

static inline long long read_ll(const char *path)
{
	char buf[64], *end;
	long long v;

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -1;
	return v;
}

/* The value after "key " on a line of a "key value" file, or -1. */
static inline long long read_key(const char *path, const char *key)
{
	char buf[8192], *line, *save;
	size_t klen = strlen(key);

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return atoll(line + klen + 1);
	return -1;
}

static inline long long counter(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), SYSFS_DIR "/%s", name);
	return read_ll(path);
}

static inline long long param_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "/%s", name);
	return read_ll(path);
}

static inline int param_set(const char *name, long long v)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), PARAM_DIR "/%s", name);
	snprintf(val, sizeof(val), "%lld\n", v);
	return write_file(path, val);
}

/* VmPin of this process in kB, or -1. */
static inline long long vmpin_kb(void)
{
	char buf[4096], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nVmPin:");
	return p ? atoll(p + 7) : -1;
}

/* ---- arenas ------------------------------------------------------------ */

struct arena {
	int fd;
	size_t pages;		/* data pages */
	size_t len;		/* whole mapping, one guard page each side */
	char *base;
	char *data;
};

/* Open, configure and map: 0, or the errno of the step that failed. */
static inline int arena_map(struct arena *a, size_t pages, uint32_t policy)
{
	struct secarena_config cfg = {
		.data_size = pages * ps,
		.guard_pages = 1,
		.fork_policy = policy,
	};
	void *p;
	int err;

	memset(a, 0, sizeof(*a));
	a->fd = open(SECARENA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (a->fd < 0)
		return errno;
	if (ioctl(a->fd, SECARENA_IOC_CONFIGURE, &cfg))
		goto fail;
	a->pages = pages;
	a->len = (pages + 2) * ps;
	p = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	a->base = p;
	a->data = a->base + ps;
	return 0;
fail:
	err = errno;
	close(a->fd);
	a->fd = -1;
	return err;
}

static inline int arena_unmap(struct arena *a)
{
	if (a->base && munmap(a->base, a->len))
		return errno;
	a->base = NULL;
	a->data = NULL;
	return 0;
}

static inline void arena_close(struct arena *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
}

static inline void arena_free(struct arena *a)
{
	arena_unmap(a);
	arena_close(a);
}

/* ---- children ------------------------------------------------------------ */

/* A child that dies with the parent, so no arena outlives a failed run. */
static inline pid_t fork_tied(void)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(99);
	}
	return pid;
}

/* Wait status of pid, retrying EINTR; -1 on failure. */
static inline int reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static inline const char *status_str(int st)
{
	/* A few buffers, so that one printf() can show several. */
	static char bufs[8][64];
	static unsigned int next;
	char *buf = bufs[next++ % 8];

	if (st == -1)
		snprintf(buf, sizeof(bufs[0]), "not reaped");
	else if (WIFSIGNALED(st))
		snprintf(buf, sizeof(bufs[0]), "killed by signal %d",
			 WTERMSIG(st));
	else
		snprintf(buf, sizeof(bufs[0]), "exit %d", WEXITSTATUS(st));
	return buf;
}

static inline bool exited_ok(int st)
{
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

#endif /* STRESS_LIMITS_COMMON_H */
