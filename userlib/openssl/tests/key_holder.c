// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * key_holder [--legacy-rsa] KEYFILE: a process that holds a private key the
 * way a server does, for keys that no TLS server certificate can carry (DH,
 * X25519, X448, ML-KEM) and for any other.  It loads the PEM key through
 * OpenSSL's decoders (PEM_read_bio_PrivateKey, as nginx does), uses it once
 * (a signature; for a key-agreement key a derivation with a fresh peer key
 * of the same group; for a KEM key the decapsulation of a ciphertext made to
 * its own public key), prints "ready" and waits for a signal with the key
 * still loaded, so that tools/leakscan can read it from outside.  Exit 1
 * with a message when the key cannot be loaded or used.
 *
 * --legacy-rsa loads an RSA key the way programs written for OpenSSL 1.1
 * do (PEM_read_bio_RSAPrivateKey, EVP_PKEY_assign_RSA): the first use then
 * exports the legacy key to the provider, through OSSL_PARAM_get_BN().
 *
 * --pass FILE --pem|--der|--p12 loads an encrypted key: PKCS#8 PEM through
 * PEM_read_bio_PrivateKey() with a password callback (nginx's
 * ssl_password_file), PKCS#8 DER through d2i_PKCS8PrivateKey_bio(), or
 * PKCS#12 through PKCS12_parse(). The passphrase is read with read(2) into
 * a buffer of ours that is wiped as soon as the key is loaded, as a careful
 * application does, so that every copy a scan finds afterwards is
 * OpenSSL's. KEY_HOLDER_KEEP_PASS=1 keeps it instead: the scanner's
 * control, a copy it must find.
 */
#define OPENSSL_SUPPRESS_DEPRECATED	/* the legacy RSA API, on purpose */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

static char pass[1024];
static int pass_len;

static int fail(const char *what)
{
	fprintf(stderr, "key_holder: %s failed\n", what);
	ERR_print_errors_fp(stderr);
	return 1;
}

static int sign_once(EVP_PKEY *pkey)
{
	static const unsigned char msg[] = "secarena live scan";
	static unsigned char sig[65536];	/* SLH-DSA-256f: 49856 bytes */
	size_t siglen = sizeof(sig);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	/* RSA, EC and DSA hash with SHA-256; EdDSA, ML-DSA, SLH-DSA take the message. */
	const char *digest = EVP_PKEY_is_a(pkey, "RSA") || EVP_PKEY_is_a(pkey, "EC") ||
			     EVP_PKEY_is_a(pkey, "DSA") ? "SHA256" : NULL;
	int ok = md != NULL &&
		 EVP_DigestSignInit_ex(md, NULL, digest, NULL, NULL, pkey, NULL) == 1 &&
		 EVP_DigestSign(md, sig, &siglen, msg, sizeof(msg) - 1) == 1;

	EVP_MD_CTX_free(md);
	return ok;
}

static int derive_once(EVP_PKEY *pkey)
{
	unsigned char secret[1024];
	size_t len = sizeof(secret);
	EVP_PKEY *peer = NULL;
	EVP_PKEY_CTX *gen = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	EVP_PKEY_CTX *dc = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	int ok = gen != NULL && dc != NULL &&
		 EVP_PKEY_keygen_init(gen) == 1 && EVP_PKEY_keygen(gen, &peer) == 1 &&
		 EVP_PKEY_derive_init(dc) == 1 && EVP_PKEY_derive_set_peer(dc, peer) == 1 &&
		 EVP_PKEY_derive(dc, secret, &len) == 1;

	OPENSSL_cleanse(secret, sizeof(secret));
	EVP_PKEY_free(peer);
	EVP_PKEY_CTX_free(gen);
	EVP_PKEY_CTX_free(dc);
	return ok;
}

/* ML-KEM: what a TLS server does with its share, on a ciphertext of our own. */
static int decapsulate_once(EVP_PKEY *pkey)
{
	unsigned char ct[2048], sent[64], got[64];
	size_t ctlen = sizeof(ct), sentlen = sizeof(sent), gotlen = sizeof(got);
	EVP_PKEY_CTX *enc = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	EVP_PKEY_CTX *dec = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
	int ok = enc != NULL && dec != NULL &&
		 EVP_PKEY_encapsulate_init(enc, NULL) == 1 &&
		 EVP_PKEY_encapsulate(enc, ct, &ctlen, sent, &sentlen) == 1 &&
		 EVP_PKEY_decapsulate_init(dec, NULL) == 1 &&
		 EVP_PKEY_decapsulate(dec, got, &gotlen, ct, ctlen) == 1 &&
		 gotlen == sentlen && memcmp(got, sent, gotlen) == 0;

	OPENSSL_cleanse(sent, sizeof(sent));
	OPENSSL_cleanse(got, sizeof(got));
	EVP_PKEY_CTX_free(enc);
	EVP_PKEY_CTX_free(dec);
	return ok;
}

/* The passphrase, without a trailing newline; 0 if it cannot be read. */
static int read_pass(const char *path)
{
	int fd = open(path, O_RDONLY), n = 0, r;

	if (fd < 0)
		return 0;
	while (n < (int)sizeof(pass) - 1 && (r = (int)read(fd, pass + n, sizeof(pass) - 1 - n)) > 0)
		n += r;
	close(fd);
	while (n > 0 && (pass[n - 1] == '\n' || pass[n - 1] == '\r'))
		n--;
	pass_len = n;
	return n > 0;
}

static int pass_cb(char *buf, int size, int rwflag, void *u)
{
	(void)rwflag, (void)u;
	if (pass_len > size)
		return -1;
	memcpy(buf, pass, pass_len);
	return pass_len;
}

static EVP_PKEY *load_p12(BIO *in)
{
	PKCS12 *p12 = d2i_PKCS12_bio(in, NULL);
	EVP_PKEY *pkey = NULL;
	X509 *cert = NULL;

	pass[pass_len] = '\0';
	if (p12 != NULL && !PKCS12_parse(p12, pass, &pkey, &cert, NULL))
		pkey = NULL;
	X509_free(cert);
	PKCS12_free(p12);
	return pkey;
}

int main(int argc, char **argv)
{
	int legacy = argc == 3 && strcmp(argv[1], "--legacy-rsa") == 0;
	int encrypted = argc == 5 && strcmp(argv[1], "--pass") == 0;
	const char *form = encrypted ? argv[3] : "";
	EVP_PKEY *pkey;
	BIO *in;
	int ok;

	if ((argc != 2 && !legacy && !encrypted) ||
	    (encrypted && strcmp(form, "--pem") && strcmp(form, "--der") && strcmp(form, "--p12"))) {
		fprintf(stderr, "usage: key_holder [--legacy-rsa | --pass FILE --pem|--der|--p12] KEYFILE\n");
		return 2;
	}
	if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL))
		return fail("OPENSSL_init_crypto");
	if (encrypted && !read_pass(argv[2]))
		return fail("reading the passphrase");
	in = BIO_new_file(argv[argc - 1], "r");
	if (in == NULL)
		return fail("opening the key file");
	if (encrypted) {
		if (!strcmp(form, "--pem"))
			pkey = PEM_read_bio_PrivateKey(in, NULL, pass_cb, NULL);
		else if (!strcmp(form, "--der"))
			pkey = d2i_PKCS8PrivateKey_bio(in, NULL, pass_cb, NULL);
		else
			pkey = load_p12(in);
		if (getenv("KEY_HOLDER_KEEP_PASS") == NULL)
			OPENSSL_cleanse(pass, sizeof(pass));
	} else if (legacy) {
		RSA *rsa = PEM_read_bio_RSAPrivateKey(in, NULL, NULL, NULL);

		pkey = rsa != NULL ? EVP_PKEY_new() : NULL;
		if (pkey != NULL && EVP_PKEY_assign_RSA(pkey, rsa) != 1) {
			EVP_PKEY_free(pkey);
			pkey = NULL;
		}
		if (pkey == NULL)
			RSA_free(rsa);
	} else {
		pkey = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
	}
	BIO_free(in);
	if (pkey == NULL)
		return fail("reading the key");
	if (EVP_PKEY_is_a(pkey, "DH") || EVP_PKEY_is_a(pkey, "X25519") ||
	    EVP_PKEY_is_a(pkey, "X448"))
		ok = derive_once(pkey);
	else if (EVP_PKEY_is_a(pkey, "ML-KEM-512") || EVP_PKEY_is_a(pkey, "ML-KEM-768") ||
		 EVP_PKEY_is_a(pkey, "ML-KEM-1024"))
		ok = decapsulate_once(pkey);
	else
		ok = sign_once(pkey);
	if (!ok)
		return fail("using the key");
	printf("ready %s\n", EVP_PKEY_get0_type_name(pkey));
	fflush(stdout);
	for (;;)
		pause();
}
