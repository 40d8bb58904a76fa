// SPDX-License-Identifier: GPL-2.0
/*
 * Load a PEM private key and list its secret components. OpenSSL parses the
 * key; the PEM lines and DER come from our own reading of the same block, so
 * they are exactly the bytes a leaked copy of the file would contain.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "key.h"
#include "keyparts.h"
#include "pem.h"
#include "util.h"

#define KEYFILE_MAX (1 << 20)

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f) {
		fprintf(stderr, "leakscan: cannot open key file %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	buf = xmalloc(KEYFILE_MAX + 1);
	n = fread(buf, 1, KEYFILE_MAX + 1, f);
	if (ferror(f) || n > KEYFILE_MAX) {
		fprintf(stderr, "leakscan: cannot read key file %s: %s\n", path,
			ferror(f) ? strerror(errno) : "larger than 1 MiB");
		fclose(f);
		free_secret(buf, KEYFILE_MAX + 1);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Never prompt: an encrypted key is reported, not unlocked. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

static EVP_PKEY *parse_block(const struct pem_block *pb)
{
	BIO *bio = BIO_new_mem_buf(pb->begin, (int)pb->block_len);
	EVP_PKEY *pkey;

	if (!bio)
		return NULL;
	pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	BIO_free(bio);
	return pkey;
}

static int add_secret_parts(EVP_PKEY *pkey, struct keyinfo *ki)
{
	const char *name = EVP_PKEY_get0_type_name(pkey);

	snprintf(ki->type, sizeof(ki->type), "%s", name ? name : "unknown");
	ki->bits = EVP_PKEY_get_bits(pkey);
	if (EVP_PKEY_is_a(pkey, "RSA") || EVP_PKEY_is_a(pkey, "RSA-PSS"))
		return key_parts_rsa(pkey, ki);
	if (EVP_PKEY_is_a(pkey, "X25519") || EVP_PKEY_is_a(pkey, "X448") ||
	    EVP_PKEY_is_a(pkey, "ED25519") || EVP_PKEY_is_a(pkey, "ED448"))
		return key_parts_ecx(pkey, ki);
	if (key_is_pq(pkey))
		return key_parts_pq(pkey, ki);
	/* EC, SM2, DH, DHX, DSA: one private scalar */
	return key_parts_priv_bn(pkey, ki);
}

static void add_text_parts(const struct pem_block *pb, struct keyinfo *ki)
{
	char form[32];
	size_t i;

	key_add(ki, "der", "raw", COMP_DER, pb->der, pb->der_len);
	for (i = 0; i < pb->nlines; i++) {
		snprintf(form, sizeof(form), "line%zu", i + 1);
		key_add(ki, "pem", form, COMP_PEM,
			(const unsigned char *)pb->lines[i], pb->line_lens[i]);
	}
}

static int load_text(const char *path, char *text, size_t len,
		     struct keyinfo *ki)
{
	struct pem_block pb;
	const char *why;
	EVP_PKEY *pkey;
	int ret = -1;

	if (pem_find_private(text, len, &pb, &why)) {
		fprintf(stderr, "leakscan: %s: not a PEM private key: %s\n",
			path, why);
		pem_block_free(&pb);
		return -1;
	}
	pkey = parse_block(&pb);
	if (!pkey) {
		fprintf(stderr, "leakscan: %s: OpenSSL cannot parse the private key%s: %s\n",
			path, memmem(pb.begin, pb.block_len, "ENCRYPTED", 9) ?
			" (encrypted keys are not supported)" : "",
			ERR_reason_error_string(ERR_peek_last_error()) ?: "unknown error");
	} else if (add_secret_parts(pkey, ki) <= 0) {
		fprintf(stderr, "leakscan: %s: cannot extract the private components of a %s key\n",
			path, ki->type);
	} else {
		int n = i2d_PUBKEY(pkey, &ki->spki);

		ki->spki_len = n > 0 ? (size_t)n : 0;
		add_text_parts(&pb, ki);
		ret = 0;
	}
	EVP_PKEY_free(pkey);
	pem_block_free(&pb);
	ERR_clear_error();
	return ret;
}

int key_load(const char *path, struct keyinfo *ki)
{
	size_t len;
	char *text = read_file(path, &len);
	int ret;

	memset(ki, 0, sizeof(*ki));
	if (!text)
		return -1;
	ret = load_text(path, text, len, ki);
	free_secret(text, KEYFILE_MAX + 1);
	if (ret)
		key_free(ki);
	return ret;
}
