/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Misuse and corruption end the process: a clear line on stderr, then abort(). */
#ifndef SECARENA_MISUSE_H
#define SECARENA_MISUSE_H

__attribute__((noreturn, format(printf, 1, 2), cold))
void misuse_abort(const char *fmt, ...);

#endif
