// SPDX-License-Identifier: GPL-2.0
/*
 * secarena-demo: the same secret in a malloc'd buffer and in a secarena
 * arena, then a second process tries to read both the way a key scanner
 * would, through /proc/PID/mem and process_vm_readv.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/secarena.h>

#define SECRET "-----BEGIN PRIVATE KEY----- demo"

static const char *try_proc_mem(pid_t pid, const void *addr, size_t len)
{
	static char res[64];
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return strerror(errno);
	n = pread(fd, buf, len, (off_t)(unsigned long)addr);
	snprintf(res, sizeof(res), "%s", n == (ssize_t)len ?
		 (memcmp(buf, SECRET, len) ? "read, no secret" : "SECRET READ") :
		 strerror(errno));
	close(fd);
	return res;
}

static const char *try_vm_readv(pid_t pid, const void *addr, size_t len)
{
	static char res[64];
	char buf[64];
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	snprintf(res, sizeof(res), "%s", n == (ssize_t)len ?
		 (memcmp(buf, SECRET, len) ? "read, no secret" : "SECRET READ") :
		 strerror(errno));
	return res;
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = strlen(SECRET);
	char *heap, *arena;
	int fd, status, leaked = 0;
	pid_t owner = getpid(), child;

	fd = open(SECARENA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "secarena-demo: %s: %s (is secarena.ko loaded?)\n",
			SECARENA_DEVICE_PATH, strerror(errno));
		return 1;
	}
	arena = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (arena == MAP_FAILED) {
		fprintf(stderr, "secarena-demo: mmap: %s\n", strerror(errno));
		return 1;
	}
	arena += page;			/* skip the leading guard page */
	heap = malloc(page);
	if (!heap)
		return 1;
	memcpy(heap, SECRET, len);
	memcpy(arena, SECRET, len);
	fflush(stdout);

	child = fork();
	if (child == 0) {
		const char *r[4] = {
			try_proc_mem(owner, heap, len), NULL, NULL, NULL,
		};
		printf("%-22s %-24s %-24s\n", "where the secret is", "/proc/PID/mem",
		       "process_vm_readv");
		r[1] = strdup(try_vm_readv(owner, heap, len));
		printf("%-22s %-24s %-24s\n", "malloc heap", r[0], r[1]);
		r[2] = strdup(try_proc_mem(owner, arena, len));
		r[3] = strdup(try_vm_readv(owner, arena, len));
		printf("%-22s %-24s %-24s\n", "secarena arena", r[2], r[3]);
		fflush(stdout);
		_exit(strstr(r[2], "SECRET") || strstr(r[3], "SECRET") ? 1 : 0);
	}
	waitpid(child, &status, 0);
	leaked = !WIFEXITED(status) || WEXITSTATUS(status);

	child = fork();
	if (child == 0) {
		volatile char c = arena[-1];	/* the guard page */

		(void)c;
		_exit(0);
	}
	waitpid(child, &status, 0);
	printf("guard page read: %s\n", WIFSIGNALED(status) ?
	       strsignal(WTERMSIG(status)) : "no fault (BAD)");
	if (!WIFSIGNALED(status))
		leaked = 1;

	munmap(arena - page, 3 * page);
	close(fd);
	free(heap);
	printf("%s\n", leaked ? "demo: FAILED, the arena was readable" :
	       "demo: the arena could not be read from outside");
	return leaked;
}
