// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <sys/random.h>
#include <secarena.h>

int main(void)
{
	if (secarena_init(0, 0, 0) != 0) {	/* 1 MiB arena, 16-byte blocks */
		perror("secarena_init");	/* ENODEV: no module loaded */
		return 1;
	}
	unsigned char *key = secarena_malloc(32);	/* zero-filled, guarded */
	if (!key || getrandom(key, 32, 0) != 32)
		return 1;
	printf("32-byte key in an arena of the %s backend\n", secarena_backend_name());
	secarena_clear_free(key, 32);	/* wiped before the block is reused */
	return secarena_done() != 0;	/* wipes and unmaps the arena */
}
