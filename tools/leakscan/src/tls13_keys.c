// SPDX-License-Identifier: GPL-2.0
/*
 * The record-layer write key and IV of a TLS 1.3 traffic secret (RFC 8446
 * 7.3): HKDF-Expand-Label(secret, "key" or "iv", "", length) with the hash of
 * the cipher suite, told apart by the secret's length. A 32-byte secret is
 * SHA-256: AES-128-GCM/CCM take a 16-byte key, ChaCha20-Poly1305 a 32-byte
 * one. A 48-byte secret is SHA-384: AES-256-GCM, 32 bytes. The IV is 12
 * bytes for all of them, which is too short to search, but it is listed.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "secrets.h"
#include "util.h"

#define TLS13_IV_LEN	12
#define TLS13_KEY_MAX	32

/*
 * struct HkdfLabel { uint16 length; opaque label<7..255>; opaque context<0..255>; }
 * with label = "tls13 " + label and an empty context.
 */
static size_t hkdf_label(unsigned char *info, size_t outlen, const char *label)
{
	static const char prefix[] = "tls13 ";
	size_t plen = strlen(prefix), llen = strlen(label), n = 0;

	info[n++] = outlen >> 8;
	info[n++] = outlen & 0xff;
	info[n++] = plen + llen;
	memcpy(info + n, prefix, plen);
	n += plen;
	memcpy(info + n, label, llen);
	n += llen;
	info[n++] = 0;
	return n;
}

static int expand_label(const char *md, const unsigned char *secret,
			size_t len, const char *label, unsigned char *out,
			size_t outlen)
{
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY, ok;
	unsigned char info[2 + 1 + 255 + 1];
	size_t ilen = hkdf_label(info, outlen, label);
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						 (char *)md, 0),
		/* the context copies the key and wipes its copy when freed */
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						  (void *)secret, len),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, ilen),
		OSSL_PARAM_construct_end(),
	};
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;

	ok = ctx && EVP_KDF_derive(ctx, out, outlen, params) > 0;
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	return ok ? 0 : -1;
}

int tls13_add_record_keys(struct secrets *sec, const char *name,
			  const unsigned char *secret, size_t len)
{
	static const size_t sha256_keys[] = { 16, 32 }, sha384_keys[] = { 32 };
	const char *md = len == 48 ? "SHA384" : "SHA256";
	const size_t *keys = len == 48 ? sha384_keys : sha256_keys;
	size_t nkeys = len == 48 ? ARRAY_SIZE(sha384_keys) : ARRAY_SIZE(sha256_keys);
	unsigned char out[TLS13_KEY_MAX];
	char form[16];
	size_t i;
	int ret = 0;

	for (i = 0; i < nkeys && !ret; i++) {
		ret = expand_label(md, secret, len, "key", out, keys[i]);
		snprintf(form, sizeof(form), "key%zu", keys[i]);
		if (!ret)
			secret_add(sec, name, form, COMP_TLSKEY, out, keys[i], NULL);
	}
	if (!ret)
		ret = expand_label(md, secret, len, "iv", out, TLS13_IV_LEN);
	if (!ret)
		secret_add(sec, name, "iv", COMP_TLSKEY, out, TLS13_IV_LEN, NULL);
	explicit_bzero(out, sizeof(out));
	if (ret)
		fprintf(stderr, "leakscan: HKDF-Expand-Label with %s failed: %s\n",
			md, ERR_reason_error_string(ERR_peek_last_error()) ?: "unknown error");
	ERR_clear_error();
	return ret;
}
