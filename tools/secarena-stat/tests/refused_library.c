// SPDX-License-Identifier: GPL-2.0
/*
 * refused_library: a process whose libsecarena was refused memory, for
 * run-tests.sh to look at with secarena-stat from outside (the status page).
 *
 *   refused_library ARENA_SIZE MAX_ARENAS TOO_LARGE
 *
 * Initialises libsecarena (SECARENA_BACKEND picks the backend), fills
 * every arena with whole-arena blocks, asks for one block of 64 bytes
 * (refused: full) and one of TOO_LARGE bytes (refused: larger than an
 * arena), prints "ready" and waits until its standard input closes.
 *
 * Copyright (C) 2026 The secarena authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <secarena.h>

int main(int argc, char **argv)
{
	struct secarena_options opt = { .min_block = 16 };
	unsigned long i;
	char c;

	if (argc != 4) {
		fprintf(stderr, "usage: refused_library ARENA_SIZE MAX_ARENAS TOO_LARGE\n");
		return 64;
	}
	opt.arena_size = strtoul(argv[1], NULL, 0);
	opt.max_arenas = strtoul(argv[2], NULL, 0);
	if (secarena_init_ex(&opt, NULL) != 0) {
		perror("refused_library: secarena_init_ex");
		return 1;
	}
	for (i = 0; i < opt.max_arenas; i++)
		if (!secarena_malloc(opt.arena_size)) {
			fprintf(stderr, "refused_library: arena %lu not mapped\n", i);
			return 1;
		}
	if (secarena_malloc(64) || secarena_malloc(strtoul(argv[3], NULL, 0))) {
		fprintf(stderr, "refused_library: a block was not refused\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	return 0;
}
