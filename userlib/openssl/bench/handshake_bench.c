// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Full TLS handshakes per second, client and server in one process over
 * memory BIOs: what a server's private-key work costs, with no network in
 * the way.  Which libssl/libcrypto it measures is whatever the dynamic
 * linker gives it (LD_LIBRARY_PATH, LD_PRELOAD): bench.sh runs it against
 * each build side by side.
 *
 *   handshake_bench KEY CERT 1.2|1.3 SECONDS
 *
 * Prints "handshakes N seconds S per_second R".  No session resumption:
 * every handshake signs with (or decrypts under) the server's key.
 */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "handshake_bench: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

/* Move pending bytes from one side's write BIO to the other's read BIO. */
static void pump(BIO *from, BIO *to)
{
	char buf[16384];
	int n;

	while ((n = BIO_read(from, buf, sizeof(buf))) > 0)
		if (BIO_write(to, buf, n) != n)
			die("BIO_write");
}

static void handshake(SSL_CTX *sctx, SSL_CTX *cctx)
{
	SSL *s = SSL_new(sctx), *c = SSL_new(cctx);
	BIO *s_in = BIO_new(BIO_s_mem()), *s_out = BIO_new(BIO_s_mem());
	BIO *c_in = BIO_new(BIO_s_mem()), *c_out = BIO_new(BIO_s_mem());
	int s_done = 0, c_done = 0, rounds = 0;

	if (!s || !c || !s_in || !s_out || !c_in || !c_out)
		die("out of memory");
	SSL_set_bio(s, s_in, s_out);
	SSL_set_bio(c, c_in, c_out);
	SSL_set_accept_state(s);
	SSL_set_connect_state(c);
	while (!s_done || !c_done) {
		if (++rounds > 64)
			die("handshake does not finish");
		if (!c_done) {
			int r = SSL_do_handshake(c);

			if (r == 1)
				c_done = 1;
			else if (SSL_get_error(c, r) != SSL_ERROR_WANT_READ)
				die("client handshake");
		}
		pump(c_out, s_in);
		if (!s_done) {
			int r = SSL_do_handshake(s);

			if (r == 1)
				s_done = 1;
			else if (SSL_get_error(s, r) != SSL_ERROR_WANT_READ)
				die("server handshake");
		}
		pump(s_out, c_in);
	}
	SSL_free(s);
	SSL_free(c);
}

int main(int argc, char **argv)
{
	SSL_CTX *sctx, *cctx;
	double t0, t, secs;
	long n = 0;
	int ver;

	if (argc != 5) {
		fprintf(stderr, "usage: handshake_bench KEY CERT 1.2|1.3 SECONDS\n");
		return 64;
	}
	ver = strcmp(argv[3], "1.3") == 0 ? TLS1_3_VERSION : TLS1_2_VERSION;
	secs = atof(argv[4]);
	sctx = SSL_CTX_new(TLS_server_method());
	cctx = SSL_CTX_new(TLS_client_method());
	if (!sctx || !cctx)
		die("SSL_CTX_new");
	if (SSL_CTX_use_certificate_file(sctx, argv[2], SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(sctx, argv[1], SSL_FILETYPE_PEM) != 1)
		die("cannot load the key or certificate");
	SSL_CTX_set_min_proto_version(sctx, ver);
	SSL_CTX_set_max_proto_version(sctx, ver);
	SSL_CTX_set_min_proto_version(cctx, ver);
	SSL_CTX_set_max_proto_version(cctx, ver);
	/* Full handshakes only. */
	SSL_CTX_set_session_cache_mode(sctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(sctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_OFF);
	handshake(sctx, cctx); /* warm up */
	t0 = now();
	do {
		handshake(sctx, cctx);
		n++;
		t = now() - t0;
	} while (t < secs);
	printf("handshakes %ld seconds %.3f per_second %.1f\n", n, t, n / t);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	return 0;
}
