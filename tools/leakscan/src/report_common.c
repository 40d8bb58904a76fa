// SPDX-License-Identifier: GPL-2.0
/* What the text and JSON reports share. */
#include "report.h"

uint64_t run_total(const struct run *run, int arena)
{
	uint64_t total = 0;
	struct sums s;
	size_t i;

	for (i = 0; i < run->nscans; i++) {
		tallies_sum(arena ? &run->scans[i].arena : &run->scans[i].outside,
			    run->ps, &s);
		total += sums_total(&s);
	}
	return total;
}

/* Hits, arenas and failed reads are always shown; PROT_NONE gaps only if asked. */
int region_notable(const struct region *r)
{
	return r->hits.t || r->arena || r->status == RS_READ_ERROR;
}

const char *kind_name(enum comp_kind kind)
{
	switch (kind) {
	case COMP_BN:
		return "bignum";
	case COMP_RAW:
		return "raw";
	case COMP_WORDS:
		return "words";
	case COMP_DER:
		return "der";
	case COMP_PEM:
		return "pem";
	case COMP_TLS:
		return "tls";
	case COMP_TLSKEY:
		return "tlskey";
	default:
		return "secret";
	}
}
