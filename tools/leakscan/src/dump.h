/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LEAKSCAN_DUMP_H
#define LEAKSCAN_DUMP_H

#include <stdio.h>

#include "key.h"

void dump_components(const struct keyinfo *ki, FILE *f);

#endif
