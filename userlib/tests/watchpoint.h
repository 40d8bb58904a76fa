/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stop one thread of this process right after it reads a given byte, hold
 * it there while the test does something in between, then let it go on: a
 * race window made as wide as a test needs, on the unmodified library.
 *
 * A process cannot trace its own threads, so a forked tracer does it: it
 * seizes the thread with ptrace(2) and sets an x86 debug register to trap
 * any access to the byte (a "probe" byte on a second register shows first
 * that hardware watchpoints fire at all; under some emulators they do not).
 */
#ifndef SECARENA_TESTS_WATCHPOINT_H
#define SECARENA_TESTS_WATCHPOINT_H

#include <sys/types.h>

struct watchpoint {
	pid_t tracer;
	int cmd;		/* to the tracer */
	int reply;		/* from it: one byte per event */
};

/* Replies, one byte each. */
#define WATCH_READY	'R'	/* seized, registers set, thread running */
#define WATCH_PROBE	'P'	/* the probe byte was read (thread let go on) */
#define WATCH_HIT	'H'	/* the watched byte was read: thread held */
#define WATCH_FAILED	'E'

/*
 * Trace thread tid of this process: a read of *probe is reported and let
 * through, a read of *byte stops the thread until watchpoint_release().
 * 0 on success, -1 with a reason on stderr, or 1 if this machine has no
 * hardware watchpoints the test can use (not x86-64).
 */
int watchpoint_start(struct watchpoint *w, pid_t tid, const void *byte, const void *probe);
/* The next reply, or 0 after timeout_ms without one. */
int watchpoint_next(struct watchpoint *w, int timeout_ms);
/* Clear the registers, detach (the thread goes on), reap the tracer. */
void watchpoint_release(struct watchpoint *w);

#endif
