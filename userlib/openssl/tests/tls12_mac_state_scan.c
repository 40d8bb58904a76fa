// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tls12_mac_state_scan KEY.pem CERT.pem CIPHER etm|mte
 *
 * Where a TLS 1.2 connection with a CBC cipher suite keeps the keyed states
 * of its record MAC.  A server and a client run in this process over a BIO
 * pair with CIPHER (e.g. AES128-SHA256, AES128-SHA), with encrypt-then-MAC
 * (etm) or without (mte), then send 20 records each way.  The patterns are
 * the client's and the server's MAC keys and, for each, the chaining values
 * of H(K ^ ipad) and H(K ^ opad) as the digest context stores them (SHA-256
 * or SHA-1): what HMAC keeps of a key, and as good as the key for forging
 * MACs on that connection.
 *
 * The patterns are worked out in a fork child from the master secret and
 * the randoms (TLS1-PRF "key expansion") and sent back through a pipe into
 * the secure heap, so this process holds no copy of its own outside it.
 * Prints the counts of inprocess_scan.h: live normal-heap hits while the
 * records go through, and every writable mapping (heap/data, stack) after,
 * with the connection still open.  Exit 0, or 2 when the set-up fails.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "inprocess_scan.h"
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *names[] = {
    "mackey_client", "mackey_server",
    "ipad_client", "opad_client", "ipad_server", "opad_server", NULL
};

static void put(int fd, const unsigned char *b, uint32_t len)
{
    if (write(fd, &len, sizeof(len)) != sizeof(len) || write(fd, b, len) != (ssize_t)len)
        _exit(3);
}

/* The chaining values after one block of key ^ pad, as the context keeps them. */
static void pad_state(const unsigned char *key, size_t klen, unsigned char pad,
                      int sha1, int fd)
{
    unsigned char blk[64];
    size_t i;

    for (i = 0; i < 64; i++)
        blk[i] = (i < klen ? key[i] : 0) ^ pad;
    if (sha1) {
        SHA_CTX c;

        SHA1_Init(&c);
        SHA1_Update(&c, blk, 64);
        put(fd, (const unsigned char *)&c.h0, 5 * sizeof(c.h0));
    } else {
        SHA256_CTX c;

        SHA256_Init(&c);
        SHA256_Update(&c, blk, 64);
        put(fd, (const unsigned char *)c.h, sizeof(c.h));
    }
}

/* In a fork child: the MAC keys from the key block, and their pad states. */
static void __attribute__((noreturn))
child(const unsigned char *master, size_t mlen, const unsigned char *crand,
      const unsigned char *srand, size_t maclen, int sha1, int fd)
{
    unsigned char seed[13 + 2 * SSL3_RANDOM_SIZE], kb[2 * EVP_MAX_MD_SIZE];
    OSSL_PARAM params[4];
    EVP_KDF_CTX *kctx;
    EVP_KDF *kdf;

    memcpy(seed, "key expansion", 13);
    memcpy(seed + 13, srand, SSL3_RANDOM_SIZE);
    memcpy(seed + 13 + SSL3_RANDOM_SIZE, crand, SSL3_RANDOM_SIZE);
    kdf = EVP_KDF_fetch(NULL, "TLS1-PRF", NULL);
    kctx = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET,
                                                  (void *)master, mlen);
    params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, seed, sizeof(seed));
    params[3] = OSSL_PARAM_construct_end();
    if (kctx == NULL || EVP_KDF_derive(kctx, kb, 2 * maclen, params) != 1)
        _exit(2);
    put(fd, kb, maclen);
    put(fd, kb + maclen, maclen);
    pad_state(kb, maclen, 0x36, sha1, fd);
    pad_state(kb, maclen, 0x5c, sha1, fd);
    pad_state(kb + maclen, maclen, 0x36, sha1, fd);
    pad_state(kb + maclen, maclen, 0x5c, sha1, fd);
    _exit(0);
}

/* Both ends' handshakes to the end, over the BIO pair. */
static int handshake(SSL *c, SSL *s)
{
    int i, rc, rs;

    for (i = 0; i < 1000; i++) {
        rc = SSL_do_handshake(c);
        rs = SSL_do_handshake(s);
        if (rc == 1 && rs == 1)
            return 1;
        if ((rc != 1 && SSL_get_error(c, rc) != SSL_ERROR_WANT_READ)
            || (rs != 1 && SSL_get_error(s, rs) != SSL_ERROR_WANT_READ))
            return 0;
    }
    return 0;
}

static int records(SSL *c, SSL *s)
{
    unsigned char msg[1000], in[1000];
    int i;

    memset(msg, 'r', sizeof(msg));
    for (i = 0; i < 20; i++)
        if (SSL_write(c, msg, sizeof(msg)) != sizeof(msg)
            || SSL_read(s, in, sizeof(in)) != sizeof(in)
            || SSL_write(s, msg, sizeof(msg)) != sizeof(msg)
            || SSL_read(c, in, sizeof(in)) != sizeof(in))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    unsigned char crand[SSL3_RANDOM_SIZE], srand[SSL3_RANDOM_SIZE], *master;
    SSL_CTX *sctx, *cctx;
    BIO *sb, *cb;
    SSL *s, *c;
    size_t mlen, maclen;
    int fds[2], i, status, sha1, nid;
    pid_t pid;

    if (argc != 5 || (strcmp(argv[4], "etm") && strcmp(argv[4], "mte"))
        || !scan_install_hooks()) {
        fprintf(stderr, "usage: tls12_mac_state_scan KEY.pem CERT.pem CIPHER etm|mte\n");
        return 2;
    }
    if (!scan_secure_heap()) {
        fprintf(stderr, "no secure heap\n");
        return 2;
    }
    OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL);
    printf("secure heap: %d\n", CRYPTO_secure_malloc_initialized());
    sctx = SSL_CTX_new(TLS_server_method());
    cctx = SSL_CTX_new(TLS_client_method());
    if (sctx == NULL || cctx == NULL
        || !SSL_CTX_set_min_proto_version(sctx, TLS1_2_VERSION)
        || !SSL_CTX_set_max_proto_version(sctx, TLS1_2_VERSION)
        || !SSL_CTX_set_max_proto_version(cctx, TLS1_2_VERSION)
        || !SSL_CTX_set_cipher_list(sctx, argv[3])
        || !SSL_CTX_set_cipher_list(cctx, argv[3])
        || SSL_CTX_use_certificate_file(sctx, argv[2], SSL_FILETYPE_PEM) != 1
        || SSL_CTX_use_PrivateKey_file(sctx, argv[1], SSL_FILETYPE_PEM) != 1) {
        ERR_print_errors_fp(stderr);
        return 2;
    }
    if (!strcmp(argv[4], "mte")) {
        SSL_CTX_set_options(sctx, SSL_OP_NO_ENCRYPT_THEN_MAC);
        SSL_CTX_set_options(cctx, SSL_OP_NO_ENCRYPT_THEN_MAC);
    }
    s = SSL_new(sctx);
    c = SSL_new(cctx);
    if (s == NULL || c == NULL || !BIO_new_bio_pair(&sb, 0, &cb, 0))
        return 2;
    SSL_set_bio(s, sb, sb);
    SSL_set_bio(c, cb, cb);
    SSL_set_accept_state(s);
    SSL_set_connect_state(c);
    if (!handshake(c, s) || !records(c, s)) {
        ERR_print_errors_fp(stderr);
        return 2;
    }
    nid = SSL_CIPHER_get_digest_nid(SSL_get_current_cipher(s));
    sha1 = nid == NID_sha1;
    maclen = sha1 ? 20 : 32;
    printf("connection: %s %s, MAC %s\n", SSL_get_version(s),
           SSL_CIPHER_get_name(SSL_get_current_cipher(s)), sha1 ? "HMAC-SHA1" : "HMAC-SHA256");
    if (strcmp(SSL_get_version(s), "TLSv1.2") || (nid != NID_sha1 && nid != NID_sha256))
        return 2;

    mlen = SSL_SESSION_get_master_key(SSL_get_session(s), NULL, 0);
    master = OPENSSL_secure_malloc(mlen);
    SSL_SESSION_get_master_key(SSL_get_session(s), master, mlen);
    SSL_get_client_random(s, crand, sizeof(crand));
    SSL_get_server_random(s, srand, sizeof(srand));
    if (pipe(fds) != 0 || (pid = fork()) < 0)
        return 2;
    if (pid == 0) {
        close(fds[0]);
        child(master, mlen, crand, srand, maclen, sha1, fds[1]);
    }
    close(fds[1]);
    OPENSSL_secure_clear_free(master, mlen);
    for (i = 0; names[i] != NULL; i++) {
        uint32_t len;
        unsigned char *b;

        if (read(fds[0], &len, sizeof(len)) != sizeof(len) || len > 64)
            return 2;
        b = OPENSSL_secure_malloc(len);
        if (read(fds[0], b, len) != (ssize_t)len)
            return 2;
        pattern_add(names[i], b, len);
        OPENSSL_secure_clear_free(b, len);
    }
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 2;

    scan_live_reset();
    scan_live_on = 1;
    i = records(c, s);
    scan_live_on = 0;
    printf("records: %s\n", i ? "ok" : "FAILED");
    scan_live_report("records");
    scan_after("live");
    return i ? 0 : 2;
}
