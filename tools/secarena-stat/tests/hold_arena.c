// SPDX-License-Identifier: GPL-2.0
/*
 * hold_arena: map one arena and keep it until killed, so that vm-test.sh
 * can look at it from outside with secarena-stat.
 *
 *   hold_arena PAGES          unconfigured: 1 guard page each side,
 *                             PAGES - 2 data pages (PAGES >= 3)
 *   hold_arena PAGES GUARDS   CONFIGURE first: GUARDS guard pages each
 *                             side, PAGES - 2 * GUARDS data pages
 *
 * Prints "ready" once mmap() has returned, then sleeps.
 *
 * Copyright (C) 2026 The secarena authors
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/secarena.h>

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long pages, guards = 0;
	struct secarena_config cfg = {};
	void *map;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: hold_arena PAGES [GUARDS]\n");
		return 64;
	}
	pages = strtoul(argv[1], NULL, 10);
	if (argc == 3)
		guards = strtoul(argv[2], NULL, 10);

	fd = open(SECARENA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("hold_arena: open " SECARENA_DEVICE_PATH);
		return 1;
	}
	if (guards) {
		if (pages <= 2 * guards) {
			fprintf(stderr, "hold_arena: no data pages left\n");
			return 64;
		}
		cfg.data_size = (pages - 2 * guards) * page;
		cfg.guard_pages = guards;
		cfg.fork_policy = SECARENA_FORK_NONE;
		if (ioctl(fd, SECARENA_IOC_CONFIGURE, &cfg) < 0) {
			perror("hold_arena: SECARENA_IOC_CONFIGURE");
			return 1;
		}
	}
	map = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (map == MAP_FAILED) {
		perror("hold_arena: mmap");
		return 1;
	}
	/* The fd may go: the mapping holds the file, and arenas counts it. */
	close(fd);

	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
