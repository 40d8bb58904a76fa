// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * /dev/secarena backend: open, SECARENA_IOC_CONFIGURE, one mmap(MAP_SHARED)
 * of guard + data + guard. The kernel pins and zeroes the pages, refuses
 * every access from outside the mapping, leaves them out of core dumps and
 * applies the fork policy itself. The file is closed right after mmap: the
 * mapping keeps the arena alive, and an fd maps only once anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/secarena.h>

#include "backend.h"
#include "guarded_mapping.h"
#include "secarena.h"

/* Tests point this elsewhere to check the error paths; not exported. */
const char *device_backend_path = SECARENA_DEVICE_PATH;

static int device_map(struct backend_region *r, size_t data_len, enum fork_policy policy)
{
	struct secarena_config cfg;
	size_t guard = page_size();
	unsigned char *map;
	int fd, err;

	fd = open(device_backend_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? ENODEV : errno;
	memset(&cfg, 0, sizeof(cfg));
	cfg.data_size = data_len;
	cfg.guard_pages = 1;
	cfg.fork_policy = (__u32)policy;
	if (ioctl(fd, SECARENA_IOC_CONFIGURE, &cfg) != 0) {
		/* ENOTTY: some other character device at that path. */
		err = errno == ENOTTY ? ENODEV : errno;
		close(fd);
		return err;
	}
	map = mmap(NULL, data_len + 2 * guard, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (map == MAP_FAILED)
		return err;
	r->map = map;
	r->map_len = data_len + 2 * guard;
	r->data = map + guard;
	r->data_len = data_len;
	r->lock_errno = 0;
	r->protection = SECARENA_PROT_LOCKED | SECARENA_PROT_NODUMP | SECARENA_PROT_GUARDS |
			SECARENA_PROT_HIDDEN | SECARENA_PROT_KERNEL_WIPE;
	return 0;
}

static void device_unmap(struct backend_region *r)
{
	munmap(r->map, r->map_len);	/* the kernel zeroes and frees the pages */
}

/*
 * Did the kernel give this child its copy? fork() succeeds even when the copy
 * could not be made (the child's memory limit, the module's caps), and then
 * every touch of the range raises SIGBUS. A write(2) from the range into a
 * pipe touches it from the kernel instead, which gets EFAULT, not a signal.
 * Only async-signal-safe calls: this runs in the child of a threaded fork.
 */
static int copy_present(const struct backend_region *r)
{
	int fds[2], present = 1, saved_errno = errno;

	if (pipe2(fds, O_CLOEXEC) != 0) {
		errno = saved_errno;
		return 1;	/* cannot tell: as before, the copy is assumed */
	}
	if (write(fds[1], r->data, 1) < 0 && errno == EFAULT)
		present = 0;
	close(fds[0]);
	close(fds[1]);
	errno = saved_errno;
	return present;
}

static enum arena_life device_fork_child(struct backend_region *r, enum fork_policy policy)
{
	switch (policy) {
	case FORK_NONE:
		return ARENA_GONE;	/* the kernel left the range unmapped */
	case FORK_SHARED:
		return ARENA_SHARED_WITH_PARENT;
	case FORK_PRIVATE:
	default:
		/* No copy: gone, like a memfd_secret arena the child cannot copy. */
		return copy_present(r) ? ARENA_LIVE : ARENA_GONE;
	}
}

const struct backend_ops backend_device = {
	.name = "device",
	.map = device_map,
	.unmap = device_unmap,
	.fork_child = device_fork_child,
};
