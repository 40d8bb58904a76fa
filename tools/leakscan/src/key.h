/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The material leakscan looks for: every secret component of one private key,
 * each in every byte form it is expected to take in a process's memory, then
 * the TLS secrets and named secrets of secrets.h, in raw form.
 */
#ifndef LEAKSCAN_KEY_H
#define LEAKSCAN_KEY_H

#include <stddef.h>

enum comp_kind {
	COMP_BN,	/* a bignum: forms "be" and "le" */
	COMP_RAW,	/* raw bytes as stored (ECX keys, derived secrets) */
	COMP_WORDS,	/* a vector one small value per word: whole hits only */
	COMP_DER,	/* the decoded body of the key file */
	COMP_PEM,	/* one base64 line of the key file: whole hits only */
	COMP_TLS,	/* a secret from a TLS key log */
	COMP_TLSKEY,	/* a record key or IV derived from a TLS 1.3 secret */
	COMP_SECRET,	/* a secret named with --secret */
};

/* The summary line counts key material apart from the other classes. */
static inline int comp_is_key(enum comp_kind kind)
{
	return kind <= COMP_PEM;
}

struct component {
	char name[64];	/* "d", "tls:MASTER_SECRET#1", "secret:NAME" */
	char form[16];
	enum comp_kind kind;
	unsigned char *bytes;
	size_t len;
};

struct keyinfo {
	char type[24];		/* "" without a key (--no-key) */
	int bits;
	struct component *comps;
	size_t ncomps;
	size_t cap;
	/*
	 * The public key as SubjectPublicKeyInfo DER: what the certificate
	 * carries. DER pieces found in it are public, and not searched.
	 */
	unsigned char *spki;
	size_t spki_len;
	/*
	 * Public values the key's private encoding carries that are derived
	 * from the public key rather than stored in it (ML-DSA's tr, ML-KEM's
	 * H(ek)): public too, and DER pieces inside them are not searched.
	 */
	unsigned char *pub_derived;
	size_t pub_derived_len;
};

/* Print the reason on stderr and return -1 if the file is not a usable key. */
int key_load(const char *path, struct keyinfo *ki);
void key_free(struct keyinfo *ki);

/* Takes a copy of bytes; the caller wipes its own. */
void key_add(struct keyinfo *ki, const char *name, const char *form,
	     enum comp_kind kind, const unsigned char *bytes, size_t len);

#endif
