/* SPDX-License-Identifier: GPL-2.0 */
/* The results of a whole run, and the two ways of printing them. */
#ifndef LEAKSCAN_REPORT_H
#define LEAKSCAN_REPORT_H

#include <stdio.h>

#include "key.h"
#include "scan.h"
#include "secrets.h"

struct run {
	const char *keyfile;		/* NULL with --no-key */
	const struct keyinfo *ki;
	const struct secrets *sec;
	const struct patset *ps;
	struct pidscan *scans;
	size_t nscans;
	const struct range *ranges;
	size_t nranges;
	int verbose;
};

void report_text(const struct run *run, FILE *f);
void report_json(const struct run *run, FILE *f);

/* Sum of the outside-arena (or arena) totals of all pids. */
uint64_t run_total(const struct run *run, int arena);
/* Whether a region belongs in the report even without --verbose. */
int region_notable(const struct region *r);
const char *kind_name(enum comp_kind kind);

#endif
