/* SPDX-License-Identifier: GPL-2.0 */
/* The text side of a key file: its base64 lines and the DER they encode. */
#ifndef LEAKSCAN_PEM_H
#define LEAKSCAN_PEM_H

#include <stddef.h>

struct pem_block {
	const char *begin;	/* the -----BEGIN line, inside the file text */
	size_t block_len;	/* through the end of the -----END line */
	const char **lines;	/* base64 body lines (point into the text) */
	size_t *line_lens;
	size_t nlines;
	unsigned char *der;
	size_t der_len;
};

/* Find the first "... PRIVATE KEY" block; -1 with *why set if there is none. */
int pem_find_private(const char *text, size_t len, struct pem_block *pb,
		     const char **why);
void pem_block_free(struct pem_block *pb);

/* Decode base64, skipping whitespace; returns -1 on a bad character. */
int b64_decode(const char *in, size_t len, unsigned char *out, size_t *outlen);

#endif
