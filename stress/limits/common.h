/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the limits stress programs: TAP output that forked children
 * may write too, and reaping them. Files, the module's counters and
 * parameters, VmPin and arenas come from the selftests' helpers.
 */
#ifndef STRESS_LIMITS_COMMON_H
#define STRESS_LIMITS_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../selftests/secarena/secarena_helpers.h"

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

	ps = page_size();
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

/* ---- arenas ------------------------------------------------------------ */

/* The fd alone, its mapping (and so its charge) left in place. */
static inline void arena_close(struct arena *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
}

/* ---- children ------------------------------------------------------------ */

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
