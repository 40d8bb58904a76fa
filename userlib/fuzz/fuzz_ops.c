// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: each input is a configuration byte and a sequence of
 * operations on small arenas, checked against a model as in the
 * differential suite (zero on allocation, contents kept, wiped on free,
 * used() exact, the buddy structure whole at the end). Misuse is never
 * generated: every free names a live block.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "arena.h"
#include "secarena.h"

#define SLOTS 64

struct slot {
	unsigned char *p;
	size_t size;
	unsigned char fill;
};

static void fail(const char *what)
{
	__builtin_trap();
	(void)what;
}

static void expect_bytes(const unsigned char *p, size_t n, unsigned char v, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			fail(what);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("SECARENA_BACKEND", "memfd_secret", 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct secarena_options opt = { .arena_size = 1 << 14, .max_arenas = 2 };
	struct slot s[SLOTS];
	size_t i, used = 0;

	if (len < 1)
		return 0;
	opt.flags = (data[0] & 1 ? SECARENA_F_NO_THREAD_CACHE : 0) |
		    (data[0] & 2 ? SECARENA_F_HEAP_FALLBACK : 0);
	opt.min_block = (size_t)16 << (data[0] >> 2 & 3);
	if (secarena_init_ex(&opt, NULL) != 0)
		return 0;
	memset(s, 0, sizeof(s));
	for (i = 1; i + 2 < len; i += 3) {
		unsigned int op = data[i] & 7, k = (data[i] >> 3) % SLOTS;
		size_t size = ((size_t)data[i + 1] | (size_t)data[i + 2] << 8) % 20000;
		struct slot *b = &s[k];
		unsigned char *q;

		switch (op) {
		case 0: case 1:		/* malloc / zalloc into an empty slot */
			if (b->p)
				break;
			q = op ? secarena_zalloc(size) : secarena_malloc(size);
			if (!q)
				break;
			expect_bytes(q, size, 0, "not zero");
			b->p = q;
			b->size = size;
			b->fill = (unsigned char)(k + 1);
			memset(q, b->fill, size);
			if (secarena_allocated(q))
				used += secarena_actual_size(q);
			break;
		case 2: case 3:		/* free / clear_free */
			if (!b->p)
				break;
			expect_bytes(b->p, b->size, b->fill, "contents lost");
			if (secarena_allocated(b->p)) {
				size_t actual = secarena_actual_size(b->p);

				used -= actual;
				if (op == 2)
					secarena_free(b->p);
				else
					secarena_clear_free(b->p, b->size);
				expect_bytes(b->p + 16, actual - 16, 0, "not wiped");
			} else {
				secarena_free(b->p);
			}
			b->p = NULL;
			break;
		case 4: case 5:		/* realloc */
			if (!b->p || size == 0)
				break;
			expect_bytes(b->p, b->size, b->fill, "contents lost");
			if (secarena_allocated(b->p))
				used -= secarena_actual_size(b->p);
			q = secarena_realloc(b->p, size);
			if (!q) {
				if (secarena_allocated(b->p))
					used += secarena_actual_size(b->p);
				break;
			}
			expect_bytes(q, size < b->size ? size : b->size, b->fill, "realloc lost");
			if (size > b->size)
				memset(q + b->size, b->fill, size - b->size);
			b->p = q;
			b->size = size;
			if (secarena_allocated(q))
				used += secarena_actual_size(q);
			break;
		case 6:			/* wipe everything in use */
			secarena_wipe_in_use();
			for (k = 0; k < SLOTS; k++)
				if (s[k].p && secarena_allocated(s[k].p))
					s[k].fill = 0;
			break;
		default:
			if (secarena_used() != used)
				fail("used() differs");
			break;
		}
	}
	if (secarena_used() != used)
		fail("used() differs");
	for (i = 0; i < SLOTS; i++)
		if (s[i].p) {
			expect_bytes(s[i].p, s[i].size, s[i].fill, "contents lost");
			secarena_free(s[i].p);
		}
	if (secarena_used() != 0)
		fail("used() not 0");
	for (i = 0; i < allocator.narenas; i++)
		buddy_check(&allocator.arena[i]->buddy);
	secarena_done();
	return 0;
}
