// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * secarena-vmtest: every host suite, on the device backend, in one static
 * binary for the VM (it needs nothing but /dev/secarena). Workloads run at
 * SECARENA_TEST_SCALE percent (default 20: the VM runs under TCG).
 * Usage: secarena-vmtest [suite...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("SECARENA_BACKEND", "device", 1);
	setenv("SECARENA_TEST_SCALE", "20", 0);
	if (access("/dev/secarena", R_OK | W_OK) != 0) {
		printf("not ok 1 /dev/secarena is present (is the module loaded?)\n1..1\n");
		return 1;
	}
	return tap_run(argc > 1 ? (const char *const *)argv + 1 : NULL);
}
