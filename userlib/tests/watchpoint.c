// SPDX-License-Identifier: LGPL-2.1-or-later
/* Hardware read watchpoints on a thread, set by a forked tracer: watchpoint.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "watchpoint.h"

#if defined(__x86_64__)

#define DR_OFFSET(n)	(offsetof(struct user, u_debugreg) + (n) * sizeof(long))
/*
 * DR7: local enable of DR0 (bit 0) and DR1 (bit 2), each with R/W = 11
 * (trap on read or write) and LEN = 00 (one byte).
 */
#define DR7_WATCH_0_1	((1UL << 0) | (3UL << 16) | (1UL << 2) | (3UL << 20))
#define DR6_HIT_0	(1UL << 0)
#define DR6_HIT_1	(1UL << 1)

static void say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(3);
}

static int poke_debugreg(pid_t tid, int n, unsigned long v)
{
	return ptrace(PTRACE_POKEUSER, tid, (void *)DR_OFFSET(n), (void *)v);
}

/* Wait for the next stop of tid; 0 when it is a trap, -1 when it is gone. */
static int next_trap(pid_t tid)
{
	int st;

	for (;;) {
		if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st))
			return -1;
		if (WSTOPSIG(st) == SIGTRAP)
			return 0;
		/* Another signal: pass it on (a group stop is left as it is). */
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)(st >> 16 ? 0 : WSTOPSIG(st)));
	}
}

static __attribute__((noreturn)) void tracer(pid_t tid, const void *byte, const void *probe,
					     int cmd, int reply)
{
	unsigned long dr6;
	char c;
	int st;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0 ||
	    ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0 ||
	    waitpid(tid, &st, __WALL) != tid) {
		fprintf(stderr, "watchpoint: cannot trace thread %d: %s\n", (int)tid,
			strerror(errno));
		say(reply, WATCH_FAILED);
		_exit(1);
	}
	if (poke_debugreg(tid, 0, (unsigned long)byte) != 0 ||
	    poke_debugreg(tid, 1, (unsigned long)probe) != 0 ||
	    poke_debugreg(tid, 7, DR7_WATCH_0_1) != 0 ||
	    ptrace(PTRACE_CONT, tid, NULL, NULL) != 0) {
		fprintf(stderr, "watchpoint: cannot set debug registers: %s\n", strerror(errno));
		say(reply, WATCH_FAILED);
		_exit(1);
	}
	say(reply, WATCH_READY);
	for (;;) {
		if (next_trap(tid) != 0)
			_exit(1);
		errno = 0;
		dr6 = (unsigned long)ptrace(PTRACE_PEEKUSER, tid, (void *)DR_OFFSET(6), NULL);
		if (errno)
			_exit(1);
		poke_debugreg(tid, 6, 0);
		if (dr6 & DR6_HIT_0)
			break;
		if (dr6 & DR6_HIT_1)
			say(reply, WATCH_PROBE);
		ptrace(PTRACE_CONT, tid, NULL, NULL);
	}
	say(reply, WATCH_HIT);
	/* Held until the test says so (any byte, or the pipe closing). */
	if (read(cmd, &c, 1) < 0)
		_exit(1);
	poke_debugreg(tid, 7, 0);
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	_exit(0);
}

int watchpoint_start(struct watchpoint *w, pid_t tid, const void *byte, const void *probe)
{
	int to[2], from[2];

	/* Yama's ptrace_scope 1 lets only ancestors trace; the tracer is a child. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (pipe(to) != 0 || pipe(from) != 0)
		return -1;
	w->tracer = fork();
	if (w->tracer < 0)
		return -1;
	if (w->tracer == 0) {
		close(to[1]);
		close(from[0]);
		tracer(tid, byte, probe, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	w->cmd = to[1];
	w->reply = from[0];
	return watchpoint_next(w, 10000) == WATCH_READY ? 0 : -1;
}

#else

int watchpoint_start(struct watchpoint *w, pid_t tid, const void *byte, const void *probe)
{
	(void)w; (void)tid; (void)byte; (void)probe;
	return 1;
}

#endif

int watchpoint_next(struct watchpoint *w, int timeout_ms)
{
	struct pollfd p = { .fd = w->reply, .events = POLLIN };
	char c;

	if (poll(&p, 1, timeout_ms) != 1 || read(w->reply, &c, 1) != 1)
		return 0;
	return c;
}

void watchpoint_release(struct watchpoint *w)
{
	if (write(w->cmd, "G", 1) != 1)
		perror("watchpoint: release");
	close(w->cmd);
	close(w->reply);
	waitpid(w->tracer, NULL, 0);
}
