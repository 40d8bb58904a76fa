/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The status page (include/secarena_status.h): published at the first
 * init, brought up to date from the allocator's state. At the bottom of the
 * library with the allocator state: it reads that state and calls nothing
 * else of the library.
 */
#ifndef SECARENA_STATUS_PAGE_H
#define SECARENA_STATUS_PAGE_H

#include <stddef.h>

/* The arenas in service changed (init, growth, done); grow_lock held. */
void status_page_update(void);
/* An allocation of size bytes was refused. Any thread, no lock. */
void status_page_note_refusal(size_t size);

#endif
