// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The status page: a page an administrator's tool can read from outside
 * (secarena_status.h), so that "the arenas are full, raise this" can be
 * seen on a running server without touching its secrets.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "allocator.h"
#include "arena.h"
#include "secarena_status.h"
#include "status_page.h"

/* Mapped once; a fork child keeps its private copy at the same address. */
static struct secarena_status_page *page;

static void store(uint64_t *field, uint64_t v)
{
	__atomic_store_n(field, v, __ATOMIC_RELAXED);
}

/*
 * The page is diagnostics: if it cannot be made (no memfd_create, a seccomp
 * filter, no memory) the library works on without it and errno is kept.
 */
static struct secarena_status_page *page_map(void)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	int saved = errno, fd;
	void *p;

	fd = memfd_create(SECARENA_STATUS_NAME, MFD_CLOEXEC);
	if (fd < 0)
		goto out;
	p = ftruncate(fd, (off_t)len) == 0 ?
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (p != MAP_FAILED) {
		struct secarena_status_page *sp = p;

		memcpy(sp->magic, SECARENA_STATUS_MAGIC, sizeof(sp->magic));
		sp->version = SECARENA_STATUS_VERSION;
		sp->size = sizeof(*sp);
		/* Refusals are noted without the lock: publish a filled page. */
		__atomic_store_n(&page, sp, __ATOMIC_RELEASE);
	}
out:
	errno = saved;
	return page;
}

void status_page_update(void)
{
	uint64_t capacity = 0, live = 0;
	size_t i;

	if (!page && !page_map())
		return;
	for (i = 0; i < allocator.narenas; i++)
		if (allocator.arena[i]->life == ARENA_LIVE) {
			capacity += allocator.arena[i]->buddy.size;
			live++;
		}
	store(&page->arena_size, allocator.arena_size);
	store(&page->max_arenas, allocator.max_arenas);
	store(&page->arenas, live);
	store(&page->capacity, capacity);
	memset(page->backend, 0, sizeof(page->backend));
	if (allocator.backend)
		strncpy(page->backend, allocator.backend->name, sizeof(page->backend) - 1);
}

void status_page_note_refusal(size_t size)
{
	struct secarena_status_page *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);

	if (!p)
		return;
	store(&p->last_refused_size, size);
	store(&p->held_at_last_refusal, __atomic_load_n(&allocator.arena_held, __ATOMIC_RELAXED));
	__atomic_add_fetch(&p->refused, 1, __ATOMIC_RELAXED);
}
