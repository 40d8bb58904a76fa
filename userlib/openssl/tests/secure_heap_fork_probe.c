// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A fork child that cannot get its copy of the secure heap must still be
 * able to free what it inherited.  Run as root against the patched build
 * with SECARENA_BACKEND=memfd_secret: the heap is mapped, then the process
 * becomes nobody with RLIMIT_MEMLOCK 0 and forks, so the child's new secret
 * memfd cannot be mapped and libsecarena marks the arena gone.  The child
 * prints
 *   child allocated 0 actual 64 freed
 * (the block is no longer "allocated": no bytes behind it; but it is the
 * secure heap's to free, so neither free reaches free(3), which would
 * abort on a pointer malloc never gave out), and the parent prints
 *   parent child-exit 0 allocated 1
 * Exit 0 when both lines were printed, 1 on a setup failure.
 */
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	struct rlimit none = { 0, 0 };
	unsigned char *p, *q;
	int status;
	pid_t pid;

	if (CRYPTO_secure_malloc_init(1 << 16, 16) != 1) {
		fprintf(stderr, "secure_heap_fork_probe: CRYPTO_secure_malloc_init failed\n");
		return 1;
	}
	p = OPENSSL_secure_malloc(64);
	q = OPENSSL_secure_malloc(64);
	if (p == NULL || q == NULL || !CRYPTO_secure_allocated(p)) {
		fprintf(stderr, "secure_heap_fork_probe: no secure block\n");
		return 1;
	}
	memset(p, 0xa5, 64);
	memset(q, 0x5a, 64);
	if (setgid(65534) != 0 || setuid(65534) != 0 || setrlimit(RLIMIT_MEMLOCK, &none) != 0) {
		perror("secure_heap_fork_probe: dropping to nobody without RLIMIT_MEMLOCK");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("secure_heap_fork_probe: fork");
		return 1;
	}
	if (pid == 0) {
		int allocated = CRYPTO_secure_allocated(p);
		size_t actual = CRYPTO_secure_actual_size(p);

		OPENSSL_secure_free(p);
		OPENSSL_secure_clear_free(q, 64);
		printf("child allocated %d actual %zu freed\n", allocated, actual);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("secure_heap_fork_probe: waitpid");
		return 1;
	}
	printf("parent child-exit %d allocated %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
	       CRYPTO_secure_allocated(p));
	OPENSSL_secure_free(p);
	OPENSSL_secure_clear_free(q, 64);
	return 0;
}
