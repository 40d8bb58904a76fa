// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * quic_secret_scan: looks for a QUIC server's connection secrets in the
 * server's memory outside OpenSSL's secure heap.
 *
 * The program forks.  The child is a QUIC server built on SSL_new_listener()
 * (openssl s_server has no QUIC server mode in 3.5) with OpenSSL's secure
 * heap switched on (CRYPTO_secure_malloc_init()), on 127.0.0.1 and a port
 * the kernel picks.  The parent is the client and the scanner: it makes
 * CONNS connections one after the other, sends lines that the server echoes,
 * has both sides start a QUIC key update on each connection, and writes the
 * TLS 1.3 secrets that its key log callback gives it into its own secure
 * heap.  From each traffic secret it derives what a QUIC endpoint derives
 * from it (RFC 9001 sections 5.1 and 6): the packet key ("quic key"), the
 * header protection key ("quic hp") and the secrets and packet keys of the
 * next key epochs ("quic ku").  The IVs ("quic iv", 12 bytes) are too short
 * to be told from chance and are not searched.
 *
 * It then reads the server's memory through /proc/PID/mem, every readable
 * mapping, twice:
 *   live    with the last connection still open (after its key updates);
 *   closed  after the server has closed and freed every connection (the
 *           listener still open).
 * Hits in the mapping of the server's secure heap are counted apart: they
 * show that the scanner sees the secrets where they are allowed to be.
 *
 * The server also hands over the random key its QUIC port encrypts address
 * validation tokens with, caught on its way into EVP_EncryptInit_ex() (see
 * there), and says whether the buffer libssl keeps it in is in the secure
 * heap; the key is searched for like the secrets.
 *
 * In the tree it runs from tests/run-tests.sh (OPENSSL_BRANCH=3.5) in the
 * Debian 13 root, built against the 3.5 build's headers: on Debian 13's own
 * libssl (the positive control: it must find the secrets outside) and on
 * the patched build with SECARENA_BACKEND=mlock, the one backend whose
 * pages /proc/PID/mem can read, so that the scanner also sees the secrets
 * where they belong (an explicit CRYPTO_secure_malloc_init() takes its
 * backend from SECARENA_BACKEND, not from OPENSSL_SECARENA).
 *
 * Usage: quic_secret_scan [-n CONNS] [-s CIPHERSUITES] [-v]
 *   -n CONNS         connections (default 4, the last one is held open)
 *   -s CIPHERSUITES  TLS 1.3 suites the client offers (default: OpenSSL's)
 *   -v               print every pattern that has a hit outside
 * Output: one line per phase and class of secret, then a verdict.
 * Exit status: 0 if no byte string was found outside the secure heap in
 * either phase, 1 if one was, 2 if the scanner saw no secret at all in the
 * live phase (nothing proved), 3 on a setup error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/quic.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECURE_HEAP_SIZE (4u << 20)
#define MAX_PATTERNS 4096
#define MAX_PATTERN_LEN 64
#define PIECE 16
#define KU_EPOCHS 4 /* next-epoch secrets derived per traffic secret */
#define LINE_MAX_LEN 4096
#define CHUNK (1u << 20)

static const unsigned char alpn[] = { 9, 'q', 's', 'c', 'a', 'n', '-', 't', 'e', 's' };

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "quic_secret_scan: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ERR_print_errors_fp(stderr);
	exit(3);
}

/* ------------------------------------------------------------------ */
/* Patterns: kept in the secure heap of the scanning (client) process. */

enum pclass {
	C_TRAFFIC,   /* a handshake or application traffic secret itself */
	C_EXPORTER,  /* EXPORTER_SECRET and other non-traffic secrets */
	C_KEY,       /* "quic key" of the secret's first epoch */
	C_HP,        /* "quic hp" */
	C_KU,        /* "quic ku" secrets of the next epochs */
	C_KU_KEY,    /* "quic key" of the next epochs */
	C_TOKEN,     /* the server port's address validation token key */
	C_NUM
};

static const char *const class_name[C_NUM] = {
	"traffic secret", "exporter secret", "quic key (epoch 0)",
	"quic hp key", "quic ku secret (epoch 1+)", "quic key (epoch 1+)",
	"port token key",
};

struct pattern {
	char name[80];
	unsigned char bytes[MAX_PATTERN_LEN];
	size_t len;
	enum pclass cls;
	unsigned long whole_out, whole_in, piece_out, piece_in;
};

static struct pattern *pat; /* OPENSSL_secure_zalloc'd array */
static size_t npat;
static int conn_no;            /* numbers the connections in the key log */
static unsigned char last_cr[32];

static int hkdf_expand_label(const EVP_MD *md, const unsigned char *secret,
			     size_t secret_len, const char *label,
			     unsigned char *out, size_t out_len)
{
	unsigned char info[2 + 1 + 255 + 1];
	size_t ll = strlen(label), il = 0;
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_HKDF, NULL);
	EVP_KDF_CTX *kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM params[5], *p = params;
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY, ok;

	info[il++] = (unsigned char)(out_len >> 8);
	info[il++] = (unsigned char)out_len;
	info[il++] = (unsigned char)(6 + ll);
	memcpy(info + il, "tls13 ", 6);
	il += 6;
	memcpy(info + il, label, ll);
	il += ll;
	info[il++] = 0; /* empty context */

	*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						(char *)EVP_MD_get0_name(md), 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						 (unsigned char *)secret, secret_len);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, il);
	*p = OSSL_PARAM_construct_end();
	ok = kctx != NULL && EVP_KDF_derive(kctx, out, out_len, params) == 1;
	EVP_KDF_CTX_free(kctx);
	EVP_KDF_free(kdf);
	return ok;
}

static struct pattern *add_pattern(enum pclass cls, const unsigned char *b,
				   size_t len, const char *fmt, ...)
{
	struct pattern *p;
	va_list ap;
	size_t i;

	if (len < PIECE || len > MAX_PATTERN_LEN)
		return NULL;
	for (i = 0; i < npat; i++)
		if (pat[i].len == len && memcmp(pat[i].bytes, b, len) == 0)
			return &pat[i]; /* listed already */
	if (npat == MAX_PATTERNS)
		die("too many patterns");
	p = &pat[npat++];
	memcpy(p->bytes, b, len);
	p->len = len;
	p->cls = cls;
	va_start(ap, fmt);
	vsnprintf(p->name, sizeof(p->name), fmt, ap);
	va_end(ap);
	return p;
}

/*
 * The derived strings are made in the secure heap and wiped when they are
 * listed.
 */
static void add_quic_derivations(const char *label, int conn,
				 const unsigned char *secret, size_t len)
{
	EVP_MD *md = EVP_MD_fetch(NULL, len == 48 ? "SHA384" : "SHA256", NULL);
	unsigned char *cur = OPENSSL_secure_zalloc(MAX_PATTERN_LEN);
	unsigned char *next = OPENSSL_secure_zalloc(MAX_PATTERN_LEN);
	unsigned char *k = OPENSSL_secure_zalloc(32);
	static const size_t klen_sha256[] = { 16, 32 }, klen_sha384[] = { 32 };
	const size_t *klens = len == 48 ? klen_sha384 : klen_sha256;
	size_t nk = len == 48 ? 1 : 2, i;
	int e;

	if (md == NULL || cur == NULL || next == NULL || k == NULL)
		die("cannot derive QUIC keys");
	memcpy(cur, secret, len);
	for (i = 0; i < nk; i++) {
		if (!hkdf_expand_label(md, secret, len, "quic hp", k, klens[i]))
			die("HKDF-Expand-Label failed");
		add_pattern(C_HP, k, klens[i], "%s#%d/hp%zu", label, conn, klens[i]);
	}
	for (e = 0; e <= KU_EPOCHS; e++) {
		for (i = 0; i < nk; i++) {
			if (!hkdf_expand_label(md, cur, len, "quic key", k, klens[i]))
				die("HKDF-Expand-Label failed");
			add_pattern(e ? C_KU_KEY : C_KEY, k, klens[i],
				    "%s#%d/ku%d/key%zu", label, conn, e, klens[i]);
		}
		if (e == KU_EPOCHS)
			break;
		if (!hkdf_expand_label(md, cur, len, "quic ku", next, len))
			die("HKDF-Expand-Label failed");
		add_pattern(C_KU, next, len, "%s#%d/ku%d", label, conn, e + 1);
		memcpy(cur, next, len);
	}
	OPENSSL_secure_clear_free(cur, MAX_PATTERN_LEN);
	OPENSSL_secure_clear_free(next, MAX_PATTERN_LEN);
	OPENSSL_secure_clear_free(k, 32);
	EVP_MD_free(md);
}

static int unhex(const char *s, size_t n, unsigned char *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi, lo;
		char c = s[2 * i], d = s[2 * i + 1];

		hi = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		lo = d >= '0' && d <= '9' ? d - '0' : d >= 'a' && d <= 'f' ? d - 'a' + 10
			: d >= 'A' && d <= 'F' ? d - 'A' + 10 : -1;
		if (hi < 0 || lo < 0)
			return 0;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 1;
}

/* "LABEL CLIENT_RANDOM SECRET", as OpenSSL's key log callback gives it. */
static void keylog_cb(const SSL *ssl, const char *line)
{
	const char *sp1 = strchr(line, ' '), *sp2;
	unsigned char *secret, cr[32];
	char label[64];
	size_t hexlen, len;
	enum pclass cls;

	(void)ssl;
	if (sp1 == NULL || (size_t)(sp1 - line) >= sizeof(label)
	    || (sp2 = strchr(sp1 + 1, ' ')) == NULL || sp2 - sp1 - 1 != 64)
		return;
	memcpy(label, line, sp1 - line);
	label[sp1 - line] = '\0';
	hexlen = strlen(sp2 + 1);
	len = hexlen / 2;
	if (len != 32 && len != 48)
		return;
	if (!unhex(sp1 + 1, 32, cr))
		return;
	if (conn_no == 0 || memcmp(cr, last_cr, 32) != 0) {
		memcpy(last_cr, cr, 32);
		conn_no++;
	}
	secret = OPENSSL_secure_zalloc(MAX_PATTERN_LEN);
	if (secret == NULL || !unhex(sp2 + 1, len, secret))
		die("bad key log line");
	cls = strstr(label, "TRAFFIC_SECRET") != NULL ? C_TRAFFIC : C_EXPORTER;
	add_pattern(cls, secret, len, "%s#%d", label, conn_no);
	if (cls == C_TRAFFIC)
		add_quic_derivations(label, conn_no, secret, len);
	OPENSSL_secure_clear_free(secret, MAX_PATTERN_LEN);
}

/* ------------------------------------------------------------------ */
/* Scanner: reads another process's memory through /proc/PID/mem.     */

#define HSIZE 16384 /* power of two, > 2 * pieces */
struct piece_ref {
	uint64_t prefix;
	uint32_t pat, off;
	int used;
};
static struct piece_ref *htab; /* secure heap too: it holds key bytes */

static uint64_t load64(const unsigned char *b)
{
	uint64_t v;

	memcpy(&v, b, 8);
	return v;
}

static size_t hslot(uint64_t v)
{
	v ^= v >> 29;
	v *= 0xbf58476d1ce4e5b9ull;
	v ^= v >> 32;
	return (size_t)v & (HSIZE - 1);
}

static void build_index(void)
{
	size_t i, off, h;

	htab = OPENSSL_secure_zalloc(sizeof(*htab) * HSIZE);
	if (htab == NULL)
		die("no secure memory for the index");
	for (i = 0; i < npat; i++) {
		for (off = 0;; off += PIECE) {
			if (off + PIECE > pat[i].len)
				off = pat[i].len - PIECE; /* last piece ends with the string */
			for (h = hslot(load64(pat[i].bytes + off)); htab[h].used;
			     h = (h + 1) & (HSIZE - 1))
				;
			htab[h].used = 1;
			htab[h].prefix = load64(pat[i].bytes + off);
			htab[h].pat = (uint32_t)i;
			htab[h].off = (uint32_t)off;
			if (off + PIECE >= pat[i].len)
				break;
		}
	}
}

static void reset_counts(void)
{
	size_t i;

	for (i = 0; i < npat; i++)
		pat[i].whole_out = pat[i].whole_in = pat[i].piece_out = pat[i].piece_in = 0;
}

/*
 * Scans buf[0..len) for hits that start before `proper`; the bytes after it
 * are the overlap with the next chunk.
 */
static void scan_buf(const unsigned char *buf, size_t len, size_t proper, int inside)
{
	size_t i, h;

	if (len < PIECE)
		return;
	for (i = 0; i + PIECE <= len && i < proper; i++) {
		uint64_t v = load64(buf + i);

		for (h = hslot(v); htab[h].used; h = (h + 1) & (HSIZE - 1)) {
			struct pattern *p;

			if (htab[h].prefix != v)
				continue;
			p = &pat[htab[h].pat];
			if (memcmp(buf + i, p->bytes + htab[h].off, PIECE) != 0)
				continue;
			if (inside)
				p->piece_in++;
			else
				p->piece_out++;
			if (htab[h].off == 0 && i + p->len <= len
			    && memcmp(buf + i, p->bytes, p->len) == 0) {
				if (inside)
					p->whole_in++;
				else
					p->whole_out++;
			}
		}
	}
}

struct scan_stats {
	unsigned long regions, unreadable;
	unsigned long long bytes;
};

static void scan_process(pid_t pid, unsigned long sh_lo, unsigned long sh_hi,
			 struct scan_stats *st)
{
	char path[64], line[512];
	FILE *maps;
	int mem;
	unsigned char *buf = malloc(CHUNK + MAX_PATTERN_LEN);

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY);
	if (maps == NULL || mem < 0 || buf == NULL)
		die("cannot read the memory of process %d: %s", (int)pid, strerror(errno));
	memset(st, 0, sizeof(*st));
	reset_counts();
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi, a;
		char perms[8];
		int inside;

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r')
			continue;
		if (strstr(line, "[vvar]") || strstr(line, "[vsyscall]"))
			continue;
		inside = lo >= sh_lo && hi <= sh_hi;
		st->regions++;
		for (a = lo; a < hi; a += CHUNK) {
			size_t want = hi - a > CHUNK + MAX_PATTERN_LEN - 1
				? CHUNK + MAX_PATTERN_LEN - 1 : hi - a;
			ssize_t got = pread(mem, buf, want, (off_t)a);

			if (got <= 0) {
				st->unreadable++;
				break;
			}
			st->bytes += got < CHUNK ? (size_t)got : CHUNK;
			scan_buf(buf, (size_t)got, CHUNK, inside);
		}
	}
	OPENSSL_cleanse(buf, CHUNK + MAX_PATTERN_LEN);
	free(buf);
	close(mem);
	fclose(maps);
}

static unsigned long report(const char *phase, const struct scan_stats *st, int verbose)
{
	unsigned long w_out[C_NUM] = { 0 }, w_in[C_NUM] = { 0 }, p_out[C_NUM] = { 0 },
		      p_in[C_NUM] = { 0 }, n[C_NUM] = { 0 }, found_out[C_NUM] = { 0 },
		      total_out = 0;
	size_t i;
	int c;

	for (i = 0; i < npat; i++) {
		c = pat[i].cls;
		n[c]++;
		w_out[c] += pat[i].whole_out;
		w_in[c] += pat[i].whole_in;
		p_out[c] += pat[i].piece_out;
		p_in[c] += pat[i].piece_in;
		if (pat[i].piece_out)
			found_out[c]++;
		total_out += pat[i].piece_out;
	}
	printf("%s: scanned %lu regions, %llu bytes (%lu unreadable)\n", phase,
	       st->regions, st->bytes, st->unreadable);
	printf("  %-26s %5s | %-25s | %-25s\n", "class", "n",
	       "outside: strings whole/pieces", "secure heap: whole/pieces");
	for (c = 0; c < C_NUM; c++)
		printf("  %-26s %5lu | %5lu found %5lu/%-8lu | %5lu/%-8lu\n", class_name[c],
		       n[c], found_out[c], w_out[c], p_out[c], w_in[c], p_in[c]);
	if (verbose)
		for (i = 0; i < npat; i++)
			if (pat[i].piece_out)
				printf("  outside: %-50s whole %lu pieces %lu\n", pat[i].name,
				       pat[i].whole_out, pat[i].piece_out);
	return total_out;
}

static unsigned long seen_anywhere(void)
{
	unsigned long t = 0;
	size_t i;

	for (i = 0; i < npat; i++)
		t += pat[i].piece_out + pat[i].piece_in;
	return t;
}

/* ------------------------------------------------------------------ */
/* Server (child).                                                     */

/*
 * The port's token key is random and never leaves libssl, so the server
 * catches it on its way into the cipher context: libssl calls
 * EVP_EncryptInit_ex() through the PLT, and this definition in the
 * executable comes first.  In the server, the only call with a key and no
 * cipher on an AES-256-GCM context is port_init()'s.  The hex form is made
 * in the secure heap and written to the parent at once.
 */
static int token_status_fd = -1;
static int token_key_secure = -1;

int EVP_EncryptInit_ex(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *type, ENGINE *impl,
		       const unsigned char *key, const unsigned char *iv)
{
	static int (*real)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *,
			   const unsigned char *, const unsigned char *);
	const EVP_CIPHER *c = ctx != NULL ? EVP_CIPHER_CTX_get0_cipher(ctx) : NULL;

	if (real == NULL)
		real = (int (*)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *,
				const unsigned char *, const unsigned char *))
			dlsym(RTLD_NEXT, "EVP_EncryptInit_ex");
	if (token_status_fd >= 0 && type == NULL && key != NULL && c != NULL
	    && EVP_CIPHER_is_a(c, "AES-256-GCM")) {
		int i, len = EVP_CIPHER_CTX_get_key_length(ctx);
		char *hex = OPENSSL_secure_zalloc(2 * 64 + 1);

		if (hex != NULL && len > 0 && len <= 64) {
			for (i = 0; i < len; i++)
				sprintf(hex + 2 * i, "%02x", key[i]);
			token_key_secure = CRYPTO_secure_allocated(key);
			dprintf(token_status_fd, "TOKENKEY %d %s\n", token_key_secure, hex);
		}
		OPENSSL_secure_clear_free(hex, 2 * 64 + 1);
	}
	return real(ctx, type, impl, key, iv);
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, alpn, sizeof(alpn),
				  in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	return SSL_TLSEXT_ERR_OK;
}

static X509 *self_signed(EVP_PKEY *pkey)
{
	X509 *x = X509_new();
	X509_NAME *name;

	if (x == NULL || !X509_set_version(x, X509_VERSION_3)
	    || !ASN1_INTEGER_set(X509_get_serialNumber(x), 1)
	    || X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL
	    || X509_gmtime_adj(X509_getm_notAfter(x), 86400) == NULL
	    || !X509_set_pubkey(x, pkey) || (name = X509_get_subject_name(x)) == NULL
	    || !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
					   (const unsigned char *)"localhost", -1, -1, 0)
	    || !X509_set_issuer_name(x, name) || X509_sign(x, pkey, EVP_sha256()) == 0)
		die("cannot make the server certificate");
	return x;
}

static int write_all(SSL *s, const void *b, size_t n)
{
	size_t w;

	return SSL_write_ex(s, b, n, &w) && w == n;
}

/* Serves one connection; returns 1 if the client said LAST on it. */
static int serve(SSL *conn)
{
	char *line = malloc(LINE_MAX_LEN);
	size_t have = 0, n;
	int last = 0, r;

	if (line == NULL)
		die("out of memory");
	while (SSL_read_ex(conn, line + have, LINE_MAX_LEN - have, &n)) {
		char *nl;

		have += n;
		while ((nl = memchr(line, '\n', have)) != NULL) {
			size_t ll = (size_t)(nl - line) + 1;

			if (ll == 3 && memcmp(line, "KU\n", 3) == 0) {
				/* The server starts a key update of its own. */
				r = SSL_key_update(conn, SSL_KEY_UPDATE_REQUESTED);
				ERR_clear_error();
				write_all(conn, r ? "OK\n" : "NO\n", 3);
			} else if (ll == 5 && memcmp(line, "LAST\n", 5) == 0) {
				last = 1;
				write_all(conn, "BYE\n", 4);
			} else {
				write_all(conn, line, ll);
			}
			memmove(line, line + ll, have - ll);
			have -= ll;
		}
		if (have == LINE_MAX_LEN)
			break;
	}
	free(line);
	ERR_clear_error();
	SSL_stream_conclude(conn, 0);
	while ((r = SSL_shutdown(conn)) == 0)
		;
	ERR_clear_error();
	return last;
}

static void find_secure_heap(unsigned long *lo, unsigned long *hi)
{
	void *p = OPENSSL_secure_malloc(16);
	unsigned long at = (unsigned long)(uintptr_t)p, a, b;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r");

	*lo = *hi = 0;
	if (p == NULL || !CRYPTO_secure_allocated(p) || maps == NULL)
		die("the secure heap is not on");
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && at >= a && at < b) {
			*lo = a;
			*hi = b;
		}
	fclose(maps);
	OPENSSL_secure_free(p);
}

static int server_main(int status_fd, int cmd_fd)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	unsigned long lo, hi;
	EVP_PKEY *pkey;
	X509 *cert;
	SSL_CTX *ctx;
	SSL *listener, *conn;
	int fd;
	char c;

	if (CRYPTO_secure_malloc_init(SECURE_HEAP_SIZE, 16) == 0)
		die("CRYPTO_secure_malloc_init failed");
	find_secure_heap(&lo, &hi);

	pkey = EVP_EC_gen("P-256");
	if (pkey == NULL)
		die("cannot make the server key");
	cert = self_signed(pkey);
	ctx = SSL_CTX_new(OSSL_QUIC_server_method());
	if (ctx == NULL || SSL_CTX_use_certificate(ctx, cert) <= 0
	    || SSL_CTX_use_PrivateKey(ctx, pkey) <= 0)
		die("cannot set up the server SSL_CTX");
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0
	    || getsockname(fd, (struct sockaddr *)&sa, &salen) < 0
	    || !BIO_socket_nbio(fd, 1))
		die("cannot bind the server socket: %s", strerror(errno));

	token_status_fd = status_fd;
	listener = SSL_new_listener(ctx, 0);
	if (listener == NULL || !SSL_set_fd(listener, fd) || !SSL_listen(listener))
		die("cannot start the QUIC listener");
	token_status_fd = -1;
	if (token_key_secure < 0)
		dprintf(status_fd, "TOKENKEY -1 none\n");
	dprintf(status_fd, "READY %u %lx %lx\n", (unsigned)ntohs(sa.sin_port), lo, hi);

	for (;;) {
		int last;

		conn = SSL_accept_connection(listener, 0);
		if (conn == NULL)
			die("SSL_accept_connection failed");
		last = serve(conn);
		SSL_free(conn);
		if (last)
			break;
	}
	dprintf(status_fd, "CLOSED\n");
	/* Wait until the parent has scanned us (it closes the pipe). */
	while (read(cmd_fd, &c, 1) > 0)
		;
	SSL_free(listener);
	SSL_CTX_free(ctx);
	X509_free(cert);
	EVP_PKEY_free(pkey);
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Client (parent).                                                    */

static SSL *client_connect(SSL_CTX *ctx, unsigned short port)
{
	struct sockaddr_in sa;
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	BIO_ADDR *peer = BIO_ADDR_new();
	SSL *ssl = SSL_new(ctx);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr = lo;
	sa.sin_port = htons(port);
	if (ssl == NULL || peer == NULL || fd < 0
	    || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0
	    || !BIO_socket_nbio(fd, 1)
	    || !BIO_ADDR_rawmake(peer, AF_INET, &lo, sizeof(lo), htons(port))
	    || !SSL_set_fd(ssl, fd) || SSL_set_alpn_protos(ssl, alpn, sizeof(alpn)) != 0
	    || !SSL_set1_initial_peer_addr(ssl, peer))
		die("cannot set up the client");
	/* The BIO does not own fd: closed in client_close(). */
	BIO_ADDR_free(peer);
	if (SSL_connect(ssl) != 1)
		die("QUIC handshake failed");
	return ssl;
}

static void client_close(SSL *ssl)
{
	int fd = SSL_get_fd(ssl);
	char buf[256];
	size_t n;

	SSL_stream_conclude(ssl, 0);
	while (SSL_read_ex(ssl, buf, sizeof(buf), &n))
		;
	ERR_clear_error();
	while (SSL_shutdown(ssl) == 0)
		;
	ERR_clear_error();
	SSL_free(ssl);
	close(fd);
}

/* Sends a line and reads the answer line; returns it in reply. */
static void chat(SSL *ssl, const char *msg, char *reply, size_t replysz)
{
	size_t have = 0, n;

	if (!write_all(ssl, msg, strlen(msg)))
		die("SSL_write failed");
	for (;;) {
		if (have + 1 >= replysz)
			die("reply too long");
		if (!SSL_read_ex(ssl, reply + have, 1, &n))
			die("SSL_read failed");
		have += n;
		if (reply[have - 1] == '\n')
			break;
	}
	reply[have] = '\0';
}

static void exchange_data(SSL *ssl, int conn, int round)
{
	char msg[1100], reply[1100];
	int j, k;

	for (j = 0; j < 3; j++) {
		int o = snprintf(msg, sizeof(msg), "data %d %d %d ", conn, round, j);

		for (k = 0; k < 500; k++)
			o += snprintf(msg + o, sizeof(msg) - o, "%02x", (k * 7 + j + conn) & 0xff);
		msg[o++] = '\n';
		msg[o] = '\0';
		chat(ssl, msg, reply, sizeof(reply));
		if (strcmp(msg, reply) != 0)
			die("the echo differs");
	}
}

/* Both sides start a key update; returns how many were accepted. */
static int key_updates(SSL *ssl, int conn)
{
	char reply[16];
	int done = 0, tries;

	for (tries = 0; tries < 20; tries++) {
		if (SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED)) {
			done++;
			break;
		}
		ERR_clear_error();
		exchange_data(ssl, conn, 100 + tries);
	}
	exchange_data(ssl, conn, 1);
	for (tries = 0; tries < 20; tries++) {
		chat(ssl, "KU\n", reply, sizeof(reply));
		if (strcmp(reply, "OK\n") == 0) {
			done++;
			break;
		}
		exchange_data(ssl, conn, 200 + tries);
		usleep(50000);
	}
	exchange_data(ssl, conn, 2);
	return done;
}

/*
 * Reads one line from the server's status pipe, byte by byte and without
 * stdio, so that a line with a key in it is copied into buf only.
 */
static void read_status(int fd, char *buf, size_t sz, const char *want)
{
	size_t n = 0;

	while (n + 1 < sz) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			break;
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = '\0';
	if (strncmp(buf, want, strlen(want)) != 0)
		die("the server did not say %s", want);
}

int main(int argc, char **argv)
{
	int nconns = 4, verbose = 0, opt, i, sp[2], cp[2], status, ku_total = 0;
	const char *suites = NULL;
	unsigned long sh_lo, sh_hi, out_live, out_closed, seen_live;
	unsigned port;
	char buf[256];
	struct scan_stats st;
	SSL_CTX *cctx;
	SSL *held = NULL;
	pid_t pid;

	while ((opt = getopt(argc, argv, "n:s:v")) != -1) {
		switch (opt) {
		case 'n':
			nconns = atoi(optarg);
			break;
		case 's':
			suites = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-n CONNS] [-s CIPHERSUITES] [-v]\n", argv[0]);
			return 3;
		}
	}
	if (nconns < 1)
		nconns = 1;
	alarm(300);

	if (pipe(sp) < 0 || pipe(cp) < 0)
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(sp[0]);
		close(cp[1]);
		_exit(server_main(sp[1], cp[0]));
	}
	close(sp[1]);
	close(cp[0]);

	/* The client's copies of the secrets live in its own secure heap. */
	if (CRYPTO_secure_malloc_init(SECURE_HEAP_SIZE, 16) == 0)
		die("CRYPTO_secure_malloc_init failed (client)");
	pat = OPENSSL_secure_zalloc(sizeof(*pat) * MAX_PATTERNS);
	if (pat == NULL)
		die("no secure memory for the patterns");

	{
		/* The token key line holds a key: read it into the secure heap. */
		char *line = OPENSSL_secure_zalloc(256), *hex;
		unsigned char *key = OPENSSL_secure_zalloc(MAX_PATTERN_LEN);
		int sec;

		if (line == NULL || key == NULL)
			die("no secure memory");
		read_status(sp[0], line, 256, "TOKENKEY");
		sec = atoi(line + 9);
		hex = strchr(line + 9, ' ');
		if (sec >= 0 && hex != NULL) {
			size_t hl = strcspn(hex + 1, "\n");

			if (hl / 2 > MAX_PATTERN_LEN || !unhex(hex + 1, hl / 2, key))
				die("bad TOKENKEY line");
			add_pattern(C_TOKEN, key, hl / 2, "port token key");
			printf("port token key: %zu bytes, handed over from %s\n", hl / 2,
			       sec ? "the secure heap" : "the normal heap");
		} else {
			printf("port token key: not seen\n");
		}
		OPENSSL_secure_clear_free(line, 256);
		OPENSSL_secure_clear_free(key, MAX_PATTERN_LEN);
	}
	read_status(sp[0], buf, sizeof(buf), "READY");
	if (sscanf(buf, "READY %u %lx %lx", &port, &sh_lo, &sh_hi) != 3)
		die("bad READY line");
	printf("server pid %d, 127.0.0.1:%u/udp, secure heap %lx-%lx\n", (int)pid, port,
	       sh_lo, sh_hi);

	cctx = SSL_CTX_new(OSSL_QUIC_client_method());
	if (cctx == NULL)
		die("SSL_CTX_new failed");
	SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_keylog_callback(cctx, keylog_cb);
	if (suites != NULL && !SSL_CTX_set_ciphersuites(cctx, suites))
		die("bad ciphersuites %s", suites);

	for (i = 0; i < nconns; i++) {
		SSL *ssl = client_connect(cctx, (unsigned short)port);

		if (i == 0)
			printf("cipher suite %s\n", SSL_get_cipher_name(ssl));
		exchange_data(ssl, i, 0);
		ku_total += key_updates(ssl, i);
		if (i == nconns - 1)
			held = ssl;
		else
			client_close(ssl);
	}
	printf("%d connections, %d of %d key updates started, %zu patterns from %d "
	       "key-logged connections\n", nconns, ku_total, 2 * nconns, npat, conn_no);
	build_index();

	scan_process(pid, sh_lo, sh_hi, &st);
	out_live = report("live (last connection open)", &st, verbose);
	seen_live = seen_anywhere();

	chat(held, "LAST\n", buf, sizeof(buf));
	client_close(held);
	read_status(sp[0], buf, sizeof(buf), "CLOSED");
	scan_process(pid, sh_lo, sh_hi, &st);
	out_closed = report("closed (every connection freed)", &st, verbose);

	close(cp[1]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the server failed");
	SSL_CTX_free(cctx);

	OPENSSL_secure_clear_free(htab, sizeof(*htab) * HSIZE);
	OPENSSL_secure_clear_free(pat, sizeof(*pat) * MAX_PATTERNS);
	if (seen_live == 0) {
		printf("FAIL: no secret seen anywhere in the live server: nothing proved\n");
		return 2;
	}
	if (out_live + out_closed != 0) {
		printf("LEAK: %lu piece hits outside the secure heap (live %lu, closed %lu)\n",
		       out_live + out_closed, out_live, out_closed);
		return 1;
	}
	printf("PASS: no secret outside the secure heap\n");
	return 0;
}
