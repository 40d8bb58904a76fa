/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef SECARENA_FORK_HANDLERS_H
#define SECARENA_FORK_HANDLERS_H

/* pthread_atfork handlers, registered once per process by the first init. */
void fork_handlers_register(void);

#endif
