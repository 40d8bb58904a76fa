// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memfd_secret backend: pages removed from the kernel direct map, locked,
 * never dumped, refused to /proc/PID/mem and ptrace, zeroed by the kernel
 * when freed. The mapping is MAP_SHARED by nature, so a fork child shares
 * it; FORK_NONE adds MADV_DONTFORK, FORK_PRIVATE gives the child a fresh
 * secret memfd holding a copy, put at the same address.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"
#include "guarded_mapping.h"
#include "secarena.h"

#ifndef SYS_memfd_secret
#if defined(__x86_64__) || defined(__aarch64__) || defined(__riscv)
#define SYS_memfd_secret 447
#endif
#endif

/* A secret memfd of len bytes, or -1 with errno. */
static int secret_fd(size_t len)
{
#ifdef SYS_memfd_secret
	int fd, err;

	fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len) != 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
#else
	(void)len;
	errno = ENOSYS;
	return -1;
#endif
}

/* fd mapped at addr (MAP_FIXED) or anywhere (addr NULL); NULL with errno. */
static void *secret_mmap(void *addr, size_t len, int fd)
{
	void *p = mmap(addr, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | (addr ? MAP_FIXED : 0), fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int memfd_secret_map(struct backend_region *r, size_t data_len, enum fork_policy policy)
{
	unsigned char *inner = guarded_map(data_len, 0, 1);
	int fd, err;

	if (!inner)
		return errno;
	fd = secret_fd(data_len);
	if (fd < 0 || !secret_mmap(inner, data_len, fd)) {
		err = errno;
		if (fd >= 0)
			close(fd);
		guarded_unmap(inner, data_len);
		return err;
	}
	close(fd);	/* the mapping keeps the pages */
	r->data = inner;
	r->data_len = data_len;
	r->map = inner - page_size();
	r->map_len = data_len + 2 * page_size();
	r->lock_errno = 0;
	r->protection = SECARENA_PROT_LOCKED | SECARENA_PROT_NODUMP | SECARENA_PROT_GUARDS |
			SECARENA_PROT_HIDDEN | SECARENA_PROT_NO_DIRECT_MAP |
			SECARENA_PROT_KERNEL_WIPE;
	if (policy == FORK_NONE && madvise(inner, data_len, MADV_DONTFORK) != 0) {
		err = errno;
		munmap(r->map, r->map_len);
		return err;
	}
	return 0;
}

static void memfd_secret_unmap(struct backend_region *r)
{
	munmap(r->map, r->map_len);
}

static enum arena_life memfd_secret_fork_child(struct backend_region *r, enum fork_policy policy)
{
	void *copy;
	int fd;

	switch (policy) {
	case FORK_NONE:
		return ARENA_GONE;	/* MADV_DONTFORK left only the guards */
	case FORK_SHARED:
		return ARENA_SHARED_WITH_PARENT;
	case FORK_PRIVATE:
	default:
		break;
	}
	/* Copy into a new secret memfd, then map that over the shared pages. */
	fd = secret_fd(r->data_len);
	copy = fd >= 0 ? secret_mmap(NULL, r->data_len, fd) : NULL;
	if (copy) {
		memcpy(copy, r->data, r->data_len);
		if (secret_mmap(r->data, r->data_len, fd)) {
			munmap(copy, r->data_len);
			close(fd);
			return ARENA_LIVE;
		}
		munmap(copy, r->data_len);
	}
	if (fd >= 0)
		close(fd);
	/* No copy: gone, and the caller maps over the parent's pages. */
	return ARENA_GONE;
}

const struct backend_ops backend_memfd_secret = {
	.name = "memfd_secret",
	.map = memfd_secret_map,
	.unmap = memfd_secret_unmap,
	.fork_child = memfd_secret_fork_child,
};
