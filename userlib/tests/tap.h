/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small TAP harness: TEST(suite, name) { ... return 0; } registers a case;
 * CHECK() fails it with the file, line and errno. Each case prints one
 * "ok N suite: name" or "not ok N suite: name" line.
 */
#ifndef SECARENA_TESTS_TAP_H
#define SECARENA_TESTS_TAP_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

struct tap_case {
	const char *suite;
	const char *name;
	int (*fn)(void);
	struct tap_case *next;
};

void tap_register(struct tap_case *c);
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_skip(const char *why);
/* Run every case whose suite is in the NULL-terminated list (all if NULL). */
int tap_run(const char *const *suites);

#define TAP_SKIPPED 77

#define TEST(suite_, name_)							\
	static int test_##suite_##_##name_(void);				\
	static struct tap_case case_##suite_##_##name_ = {			\
		#suite_, #name_, test_##suite_##_##name_, NULL };		\
	__attribute__((constructor)) static void reg_##suite_##_##name_(void)	\
	{ tap_register(&case_##suite_##_##name_); }				\
	static int test_##suite_##_##name_(void)

#define CHECK(cond)								\
	do {									\
		if (!(cond)) {							\
			tap_diag("%s:%d: CHECK(%s) failed (errno %d)",		\
				 __FILE__, __LINE__, #cond, errno);		\
			return 1;						\
		}								\
	} while (0)

#define CHECK_EQ(a, b)								\
	do {									\
		long long a_ = (long long)(a), b_ = (long long)(b);		\
		if (a_ != b_) {							\
			tap_diag("%s:%d: %s == %lld, expected %s == %lld",	\
				 __FILE__, __LINE__, #a, a_, #b, b_);		\
			return 1;						\
		}								\
	} while (0)

/* Helpers shared by the suites (tap.c). */
const char *test_backend(void);		/* SECARENA_BACKEND, else "device" */
/*
 * Run fn(arg) in a fork child with stderr captured. Returns the wait status;
 * the child's stderr (up to len - 1 bytes) is in err.
 */
int run_in_child(void (*fn)(void *), void *arg, char *err, size_t len);
/* 1 if fn(arg) dies of SIGABRT and its stderr contains want. */
int dies_with_abort(void (*fn)(void *), void *arg, const char *want);
/* 1 if fn(arg) dies of SIGSEGV. */
int dies_with_segv(void (*fn)(void *), void *arg);
/* Size of the test workload: SECARENA_TEST_SCALE percent of the default. */
size_t test_scaled(size_t n);

#endif
