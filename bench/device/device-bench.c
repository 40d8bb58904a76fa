// SPDX-License-Identifier: GPL-2.0
/*
 * device-bench: what a 1 MiB arena (256 data pages, one guard page each
 * side, SECARENA_FORK_PRIVATE) costs next to the closest thing a process
 * has without the module, 1 MiB of mlock()ed anonymous memory. It runs
 * inside a VM with secarena.ko loaded, as root (vm-bench.sh).
 *
 * Rows, each timed on both sides (secarena | baseline):
 *
 *   map_touch  open + CONFIGURE + mmap + one write per data page
 *              | mmap + mlock + one write per page
 *   munmap     munmap: the kernel zeroes and frees the 256 pages | munmap
 *   teardown   munmap + close of the file | munmap
 *              (munmap and teardown end map_touch's own iterations)
 *   fork       fork() until the parent reads the byte the child wrote to
 *              a pipe straight from the region's first data byte (for the
 *              arena: from its private copy, which fails with EFAULT if no
 *              copy was made); the child then _exit(0)s at once
 *   fork_wait  the same fork(), until waitpid() has reaped that child:
 *              fork plus the child's exit, its private copy wiped
 *   exit       a child that mapped and touched its own region and waits:
 *              from the parent's go byte until waitpid() returns
 *
 * During fork and exit the forking process holds only the region being
 * measured. The two sides alternate within every iteration, and which goes
 * first alternates between iterations, so that load from elsewhere on the
 * machine falls on both. CLOCK_MONOTONIC; a warm-up of -w iterations is
 * run and dropped, then -n iterations are kept.
 *
 * Output (stdout), once everything has run: a header line naming the
 * kernel, then one line per row: name, secarena median and p90, baseline
 * median and p90 (microseconds), the ratio of the medians (secarena /
 * baseline), and "ok" if that ratio is at most 2 or "over 2" if not. A
 * ratio never fails the run: the exit status is 1 only when a step fails,
 * with the step and errno on stderr.
 *
 * Copyright (C) 2026 The secarena authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/secarena.h>

#define DATA_PAGES	256
#define GUARD_PAGES	1
#define RATIO_GOAL	2.0

#define __noreturn	__attribute__((noreturn))

enum side { SECARENA, BASELINE, SIDES };

enum row { MAP_TOUCH, MUNMAP, TEARDOWN, FORK, FORK_WAIT, EXIT, ROWS };

static const char *const row_name[ROWS] = {
	[MAP_TOUCH] = "map_touch",
	[MUNMAP] = "munmap",
	[TEARDOWN] = "teardown",
	[FORK] = "fork",
	[FORK_WAIT] = "fork_wait",
	[EXIT] = "exit",
};

/* One 1 MiB region: an arena, or mlock()ed anonymous memory (fd -1). */
struct region {
	int fd;
	char *map;		/* the whole mapping, guards included */
	char *data;		/* first data byte */
	size_t len;
};

static size_t page_size;

static void __noreturn fail(const char *step)
{
	int err = errno;

	fprintf(stderr, "device-bench: %s: %s (errno %d)%s\n", step,
		strerror(err), err,
		err == ENOENT && strstr(step, SECARENA_DEVICE_PATH) ?
		": is secarena.ko loaded?" : "");
	exit(1);
}

static void __noreturn fail_msg(const char *step,
					       const char *why)
{
	fprintf(stderr, "device-bench: %s: %s\n", step, why);
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*
 * Map one region and write one byte to each of its data pages: NULL, or
 * the step that failed (errno set). On failure the region is left as it
 * is: the caller exits.
 */
static const char *region_map(struct region *r, enum side side)
{
	struct secarena_config cfg = {
		.data_size = DATA_PAGES * page_size,
		.guard_pages = GUARD_PAGES,
		.fork_policy = SECARENA_FORK_PRIVATE,
	};
	size_t i;
	void *p;

	r->fd = -1;
	if (side == SECARENA) {
		r->fd = open(SECARENA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (r->fd < 0)
			return "open " SECARENA_DEVICE_PATH;
		if (ioctl(r->fd, SECARENA_IOC_CONFIGURE, &cfg))
			return "SECARENA_IOC_CONFIGURE";
		r->len = (DATA_PAGES + 2 * GUARD_PAGES) * page_size;
		p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->fd, 0);
		if (p == MAP_FAILED)
			return "mmap of the arena";
		r->map = p;
		r->data = r->map + GUARD_PAGES * page_size;
	} else {
		r->len = DATA_PAGES * page_size;
		p = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return "mmap of anonymous memory";
		r->map = p;
		r->data = p;
		if (mlock(r->data, r->len))
			return "mlock";
	}
	for (i = 0; i < DATA_PAGES; i++)
		r->data[i * page_size] = 1;
	/* Every store made here, none left to the compiler to drop. */
	__asm__ __volatile__("" : : "r"(r->data) : "memory");
	return NULL;
}

static void region_map_or_fail(struct region *r, enum side side)
{
	const char *step = region_map(r, side);

	if (step)
		fail(step);
}

static void region_unmap(struct region *r)
{
	if (munmap(r->map, r->len))
		fail("munmap");
}

static void region_close(struct region *r)
{
	if (r->fd >= 0 && close(r->fd))
		fail("close of the arena's file");
	r->fd = -1;
}

/* 1 if a byte was read, 0 at end of file. */
static int read_byte(int fd, const char *step)
{
	ssize_t n;
	char c;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail(step);
	return n > 0;
}

/* Reap pid; a child that did not exit 0 is an error of step. */
static void reap(pid_t pid, const char *step)
{
	char why[64];
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail(step);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "child killed by signal %d",
			 WTERMSIG(status));
	else
		snprintf(why, sizeof(why), "child exited with status %d",
			 WEXITSTATUS(status));
	fail_msg(step, why);
}

static void bench_map(enum side side, double *t)
{
	struct region r;
	double t0, t1, t2, t3;

	t0 = now_us();
	region_map_or_fail(&r, side);
	t1 = now_us();
	region_unmap(&r);
	t2 = now_us();
	region_close(&r);
	t3 = now_us();
	t[MAP_TOUCH] = t1 - t0;
	t[MUNMAP] = t2 - t1;
	t[TEARDOWN] = t3 - t1;
}

static void bench_fork(enum side side, double *t)
{
	struct region r;
	double t0, t1;
	int pipefd[2], got;
	pid_t pid;

	region_map_or_fail(&r, side);
	if (pipe2(pipefd, O_CLOEXEC))
		fail("fork: pipe2");

	t0 = now_us();
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0)	/* EFAULT: the arena's private copy is missing */
		_exit(write(pipefd[1], r.data, 1) == 1 ? 0 : 2);
	close(pipefd[1]);
	got = read_byte(pipefd[0], "fork: read from the child");
	t1 = now_us();
	reap(pid, "fork: waitpid");
	t[FORK_WAIT] = now_us() - t0;
	t[FORK] = t1 - t0;

	close(pipefd[0]);
	if (!got)
		fail_msg("fork", "the child could not read its copy");
	region_unmap(&r);
	region_close(&r);
}

static void __noreturn exit_child(enum side side, int ready,
						 int go)
{
	const char *step;
	struct region r;
	char c;

	step = region_map(&r, side);
	if (step) {
		fprintf(stderr, "device-bench: exit: child: %s: %s (errno %d)\n",
			step, strerror(errno), errno);
		_exit(1);
	}
	if (write(ready, "r", 1) != 1)
		_exit(1);
	/* The go byte, or end of file if the parent died. */
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

static void bench_exit(enum side side, double *t)
{
	int ready[2], go[2];
	double t0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		fail("exit: pipe2");
	pid = fork();
	if (pid < 0)
		fail("exit: fork");
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		exit_child(side, ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	if (!read_byte(ready[0], "exit: read from the child")) {
		reap(pid, "exit: child mapping its region");
		fail_msg("exit", "the child ended before it was ready");
	}

	t0 = now_us();
	if (write(go[1], "g", 1) != 1)
		fail("exit: write to the child");
	reap(pid, "exit: waitpid");
	t[EXIT] = now_us() - t0;

	close(ready[0]);
	close(go[1]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v. p90 is the nearest-rank 90th percentile. */
static void summarize(double *v, size_t n, double *median, double *p90)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*p90 = v[(n * 9 + 9) / 10 - 1];
}

static void __noreturn usage_exit(void)
{
	fprintf(stderr, "usage: device-bench [-n ITERATIONS] [-w WARMUP]\n");
	exit(1);
}

static long parse_count(const char *s, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > 1000000)
		usage_exit();
	return v;
}

int main(int argc, char **argv)
{
	static double *sample[ROWS][SIDES];
	long iterations = 200, warmup = 20, i;
	double t[ROWS], med[SIDES], p90[SIDES], start, ratio;
	struct utsname u;
	int opt, r, k, s;

	while ((opt = getopt(argc, argv, "n:w:")) != -1) {
		switch (opt) {
		case 'n':
			iterations = parse_count(optarg, 1);
			break;
		case 'w':
			warmup = parse_count(optarg, 0);
			break;
		default:
			usage_exit();
		}
	}
	if (optind != argc)
		usage_exit();
	if (uname(&u))
		fail("uname");
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	for (r = 0; r < ROWS; r++)
		for (s = 0; s < SIDES; s++) {
			sample[r][s] = calloc(iterations, sizeof(double));
			if (!sample[r][s])
				fail("calloc");
		}

	start = now_us();
	for (i = -warmup; i < iterations; i++) {
		for (k = 0; k < SIDES; k++) {
			/* Alternate which side goes first. */
			s = (i & 1) ? SIDES - 1 - k : k;
			bench_map(s, t);
			bench_fork(s, t);
			bench_exit(s, t);
			if (i < 0)
				continue;
			for (r = 0; r < ROWS; r++)
				sample[r][s][i] = t[r];
		}
	}

	printf("device-bench kernel=%s iterations=%ld warmup=%ld data_pages=%d guard_pages=%d seconds=%.1f unit=us columns: row secarena_median secarena_p90 baseline_median baseline_p90 ratio verdict\n",
	       u.release, iterations, warmup, DATA_PAGES, GUARD_PAGES,
	       (now_us() - start) / 1e6);
	for (r = 0; r < ROWS; r++) {
		for (s = 0; s < SIDES; s++)
			summarize(sample[r][s], iterations, &med[s], &p90[s]);
		ratio = med[SECARENA] / med[BASELINE];
		printf("%-10s %10.1f %10.1f %10.1f %10.1f %7.2f %s\n",
		       row_name[r], med[SECARENA], p90[SECARENA],
		       med[BASELINE], p90[BASELINE], ratio,
		       ratio <= RATIO_GOAL ? "ok" : "over 2");
	}
	if (fflush(stdout) || ferror(stdout))
		fail("writing the table");
	return 0;
}
