// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mlock backend: anonymous memory, mlock(2)ed, MADV_DONTDUMP, PROT_NONE
 * guards. The weakest: the pages stay in the kernel direct map and the
 * process itself (or a ptracer, or root) can read them through /proc/PID/mem.
 * An mlock failure (RLIMIT_MEMLOCK) is not fatal; it is reported.
 */
#include <errno.h>
#include <sys/mman.h>

#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"
#include "guarded_mapping.h"
#include "secarena.h"

/*
 * The system call itself: sanitizer runtimes replace mlock() and munlock()
 * with calls that do nothing and succeed, which would report pages as
 * locked that are not.
 */
static int lock_pages(void *p, size_t n)
{
	return (int)syscall(SYS_mlock, p, n);
}

static int mlock_map(struct backend_region *r, size_t data_len, enum fork_policy policy)
{
	unsigned char *data = guarded_map(data_len, policy == FORK_SHARED, 0);

	if (!data)
		return errno;
	r->data = data;
	r->data_len = data_len;
	r->map = data - page_size();
	r->map_len = data_len + 2 * page_size();
	r->protection = SECARENA_PROT_GUARDS;
	r->lock_errno = 0;
	if (policy == FORK_NONE && madvise(data, data_len, MADV_DONTFORK) != 0) {
		int err = errno;

		guarded_unmap(data, data_len);
		return err;
	}
	if (madvise(data, data_len, MADV_DONTDUMP) == 0)
		r->protection |= SECARENA_PROT_NODUMP;
	if (lock_pages(data, data_len) == 0)
		r->protection |= SECARENA_PROT_LOCKED;
	else
		r->lock_errno = errno;
	return 0;
}

static void mlock_unmap(struct backend_region *r)
{
	if (r->protection & SECARENA_PROT_LOCKED)
		syscall(SYS_munlock, r->data, r->data_len);
	munmap(r->map, r->map_len);
}

static enum arena_life mlock_fork_child(struct backend_region *r, enum fork_policy policy)
{
	switch (policy) {
	case FORK_NONE:
		return ARENA_GONE;	/* MADV_DONTFORK left only the guards */
	case FORK_SHARED:
		return ARENA_SHARED_WITH_PARENT;
	case FORK_PRIVATE:
	default:
		/* A copy-on-write copy, but locks are not inherited: lock it again. */
		if (lock_pages(r->data, r->data_len) == 0) {
			r->lock_errno = 0;
		} else {
			r->lock_errno = errno;
			r->protection &= ~SECARENA_PROT_LOCKED;
		}
		return ARENA_LIVE;
	}
}

const struct backend_ops backend_mlock = {
	.name = "mlock",
	.map = mlock_map,
	.unmap = mlock_unmap,
	.fork_child = mlock_fork_child,
};
