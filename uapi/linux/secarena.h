/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * secarena: pinned, guarded, non-dumpable memory for secrets.
 *
 * Each open() of /dev/secarena is a new, empty arena. One mmap(MAP_SHARED)
 * of the whole length maps it: guard pages, data pages, guard pages. The
 * data pages are zeroed, pinned and mapped before mmap() returns; the guard
 * pages have nothing behind them. Documentation/userspace-api/secarena.rst
 * is the full contract: every call, errno and signal.
 */
#ifndef _UAPI_LINUX_SECARENA_H
#define _UAPI_LINUX_SECARENA_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SECARENA_DEVICE_PATH	"/dev/secarena"

/* What a fork() child gets of a mapped arena. */
#define SECARENA_FORK_PRIVATE	0	/* its own pinned copy of the data */
#define SECARENA_FORK_NONE	1	/* nothing: the range is unmapped */
#define SECARENA_FORK_SHARED	2	/* the same pages as the parent */

#define SECARENA_GUARD_PAGES_DEFAULT	1
#define SECARENA_GUARD_PAGES_MAX	1024

/*
 * SECARENA_IOC_CONFIGURE, before mmap. data_size is in bytes, a non-zero
 * multiple of the page size; guard_pages is per side. Every reserved field
 * must be zero. Without it, mmap takes one guard page each side and the
 * rest of its length as data.
 */
struct secarena_config {
	__u64 data_size;
	__u32 guard_pages;
	__u32 fork_policy;
	__u64 reserved[2];
};

/* secarena_info.flags */
#define SECARENA_INFO_CONFIGURED	(1U << 0)	/* CONFIGURE succeeded */
#define SECARENA_INFO_MAPPED		(1U << 1)	/* pages are mapped now */
#define SECARENA_INFO_SPENT		(1U << 2)	/* mapped once, now gone */
#define SECARENA_INFO_REVOKED		(1U << 3)	/* wiped for hibernation */

/*
 * SECARENA_IOC_INFO: the arena of this file. data_size, guard_pages and
 * fork_policy are the configured (or, once mapped, the mapped) geometry;
 * data_pages is what the arena holds now: 0 before mmap and after munmap.
 */
struct secarena_info {
	__u64 data_size;
	__u32 guard_pages;
	__u32 fork_policy;
	__u64 data_pages;
	__u32 flags;
	__u32 reserved0;
	__u64 reserved[2];
};

/* 0xB9 is not in Documentation/userspace-api/ioctl/ioctl-number.rst. */
#define SECARENA_IOC_MAGIC	0xB9

#define SECARENA_IOC_CONFIGURE	_IOW(SECARENA_IOC_MAGIC, 0x01, struct secarena_config)
#define SECARENA_IOC_INFO	_IOR(SECARENA_IOC_MAGIC, 0x02, struct secarena_info)
#define SECARENA_IOC_WIPE	_IO(SECARENA_IOC_MAGIC, 0x03)

#endif /* _UAPI_LINUX_SECARENA_H */
