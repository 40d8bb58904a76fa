// SPDX-License-Identifier: LGPL-2.1-or-later
/* The TAP harness and the helpers every suite shares. */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "secarena.h"
#include "tap.h"

static struct tap_case *first, **tail = &first;
static char skip_reason[200];

void tap_register(struct tap_case *c)
{
	*tail = c;
	tail = &c->next;
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

int tap_skip(const char *why)
{
	snprintf(skip_reason, sizeof(skip_reason), "%s", why);
	return TAP_SKIPPED;
}

static int wanted(const char *suite, const char *const *suites)
{
	if (!suites)
		return 1;
	for (; *suites; suites++)
		if (strcmp(*suites, suite) == 0)
			return 1;
	return 0;
}

int tap_run(const char *const *suites)
{
	struct tap_case *c;
	int n = 0, failed = 0;

	for (c = first; c; c = c->next) {
		int r;

		if (!wanted(c->suite, suites))
			continue;
		r = c->fn();
		/* A failed case may leave the allocator up; the next one needs it down. */
		if (secarena_initialized())
			secarena_done();
		n++;
		if (r == 0)
			printf("ok %d %s: %s\n", n, c->suite, c->name);
		else if (r == TAP_SKIPPED)
			printf("ok %d %s: %s # SKIP %s\n", n, c->suite, c->name, skip_reason);
		else {
			printf("not ok %d %s: %s\n", n, c->suite, c->name);
			failed++;
		}
		fflush(stdout);
	}
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}

const char *test_backend(void)
{
	const char *b = getenv("SECARENA_BACKEND");

	return b && *b ? b : "device";
}

int run_in_child(void (*fn)(void *), void *arg, char *err, size_t len)
{
	int pipefd[2], status = 0;
	size_t got = 0;
	pid_t pid;

	if (pipe(pipefd) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		close(pipefd[0]);
		dup2(pipefd[1], STDERR_FILENO);
		fn(arg);
		_exit(0);
	}
	close(pipefd[1]);
	for (;;) {
		ssize_t r = read(pipefd[0], err + got, len - 1 - got);

		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == len - 1) {
			char sink[256];

			while (read(pipefd[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	err[got] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return status;
}

int dies_with_abort(void (*fn)(void *), void *arg, const char *want)
{
	char err[1024];
	int status = run_in_child(fn, arg, err, sizeof(err));

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
		tap_diag("expected SIGABRT, got status %#x; stderr: %s", status, err);
		return 0;
	}
	if (!strstr(err, want)) {
		tap_diag("stderr lacks \"%s\": %s", want, err);
		return 0;
	}
	return 1;
}

static void with_default_segv(void *arg)
{
	void **call = arg;

	/* Sanitizers catch SIGSEGV to report it; here it must kill. */
	signal(SIGSEGV, SIG_DFL);
	((void (*)(void *))call[0])(call[1]);
}

int dies_with_segv(void (*fn)(void *), void *arg)
{
	char err[256];
	void *call[2] = { (void *)fn, arg };
	int status = run_in_child(with_default_segv, call, err, sizeof(err));

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
		tap_diag("expected SIGSEGV, got status %#x", status);
		return 0;
	}
	return 1;
}

size_t test_scaled(size_t n)
{
	const char *s = getenv("SECARENA_TEST_SCALE");
	size_t pct = s ? strtoul(s, NULL, 10) : 100;

	if (pct == 0)
		pct = 1;
	return n * pct / 100 ? n * pct / 100 : 1;
}

#ifndef TAP_ALL_SUITES
int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return tap_run(NULL);
}
#endif
