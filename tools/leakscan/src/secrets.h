/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Secrets besides the private key: the TLS secrets of NSS key log files
 * (--keylog), the TLS 1.3 record keys and IVs derived from their traffic
 * secrets, and secrets named on the command line (--secret). Each is one
 * component in raw form, added to the key's list after the key's own.
 */
#ifndef LEAKSCAN_SECRETS_H
#define LEAKSCAN_SECRETS_H

#include <stddef.h>

#include "byteset.h"
#include "key.h"

/* Shortest --secret: one piece, as for everything else that is searched. */
#define SECRET_MIN_LEN	16
#define SECRET_MAX_LEN	4096
#define SECRET_NAME_MAX	40

struct keylog_file {
	const char *path;
	size_t lines;		/* lines read, comments and blanks included */
	size_t entries;		/* lines with a known label */
	size_t added;		/* their secrets that were new */
	size_t dups;		/* their secrets already listed */
	size_t ignored;		/* lines with an unknown label */
};

struct secrets {
	struct keyinfo *ki;	/* where the components go */
	struct byteset seen;	/* every secret listed: none is searched twice */
	struct byteset conns;	/* client_random (or RSA id) -> its number */
	size_t nconns, nrsa;
	struct keylog_file *files;
	size_t nfiles;
	size_t named;		/* --secret options added */
	size_t named_dups;	/* --secret options whose bytes were listed */
};

void secrets_init(struct secrets *sec, struct keyinfo *ki);
/* Drop the lookup tables (they hold copies of secrets); the counts stay. */
void secrets_done(struct secrets *sec);
void secrets_free(struct secrets *sec);

/*
 * Add a component unless a secret with the same bytes is listed already.
 * Returns 1 if added, 0 if not; *first is the one listed earlier.
 */
int secret_add(struct secrets *sec, const char *name, const char *form,
	       enum comp_kind kind, const unsigned char *bytes, size_t len,
	       const struct component **first);

/* Each returns -1 after a message on stderr. */
int keylog_load(struct secrets *sec, const char *path);
int named_secret_add(struct secrets *sec, const char *arg);
/* Record keys and IV of a TLS 1.3 traffic secret of 32 or 48 bytes. */
int tls13_add_record_keys(struct secrets *sec, const char *name,
			  const unsigned char *secret, size_t len);

/* len hex digits to len / 2 bytes; -1 if len is odd or a digit is not hex. */
int hex_decode(const char *in, size_t len, unsigned char *out);

#endif
