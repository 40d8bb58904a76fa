// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ticket_server CERT KEY TICKETKEYS PORT: a TLS server whose session ticket
 * keys the test knows, so that tools/leakscan can look for them.  It reads
 * the 80 bytes of TICKETKEYS (16 bytes of name, 32 of HMAC key, 32 of AES
 * key, the layout of SSL_CTX_set_tlsext_ticket_keys()) with read(2) into a
 * buffer it wipes once OpenSSL has them, then answers every connection on
 * 127.0.0.1:PORT with one line, issuing and accepting tickets, until it is
 * killed.  Prints "ready" once it listens.  Exit 1 with a message on a setup
 * failure.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "ticket_server: %s failed\n", what);
	ERR_print_errors_fp(stderr);
	return 1;
}

static int load_ticket_keys(SSL_CTX *ctx, const char *path)
{
	unsigned char keys[80];
	int fd = open(path, O_RDONLY);
	int ok = fd >= 0 && read(fd, keys, sizeof(keys)) == (ssize_t)sizeof(keys) &&
		 SSL_CTX_set_tlsext_ticket_keys(ctx, keys, sizeof(keys)) == 1;

	if (fd >= 0)
		close(fd);
	explicit_bzero(keys, sizeof(keys));
	return ok;
}

static void serve(SSL_CTX *ctx, int fd)
{
	static const char reply[] = "HTTP/1.0 200 OK\r\n\r\nsecarena ticket server\n";
	char buf[512];
	SSL *ssl = SSL_new(ctx);

	if (ssl != NULL && SSL_set_fd(ssl, fd) == 1 && SSL_accept(ssl) == 1 &&
	    SSL_read(ssl, buf, sizeof(buf)) > 0) {
		SSL_write(ssl, reply, sizeof(reply) - 1);
		SSL_shutdown(ssl);
	}
	SSL_free(ssl);
	ERR_clear_error();
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	SSL_CTX *ctx;
	int lfd, one = 1;

	if (argc != 5) {
		fprintf(stderr, "usage: ticket_server CERT KEY TICKETKEYS PORT\n");
		return 2;
	}
	if (!OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL))
		return fail("OPENSSL_init_ssl");
	ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL || SSL_CTX_use_certificate_file(ctx, argv[1], SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, argv[2], SSL_FILETYPE_PEM) != 1)
		return fail("loading the certificate and key");
	if (!load_ticket_keys(ctx, argv[3]))
		return fail("setting the ticket keys");
	sa.sin_port = htons((unsigned short)atoi(argv[4]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 8) != 0) {
		perror("ticket_server: listen");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			continue;
		serve(ctx, fd);
		close(fd);
	}
}
