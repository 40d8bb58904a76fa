// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rsa_implicit_rejection_scan KEY.pem: RSA PKCS#1 v1.5 decryption with
 * implicit rejection (OpenSSL 3.2 and later; 3.5 patch 0014, and the
 * private-operation copies of 0003/0004).
 *
 * A forked child works out, from the key, what the parent's memory must not
 * hold outside the secure heap: d, p, q, dP, dQ, qInv; SHA-256 of d (the
 * HMAC key of derive_kdk()); the kdk of a bad and of a good ciphertext; the
 * SHA-256 chaining states after (key ^ ipad) and (key ^ opad) for both HMAC
 * keys (what an HMAC_CTX keeps of its key); the synthetic message returned
 * for the bad ciphertext; the plaintext of the good one.  The parent then
 * decrypts both ciphertexts with the secure heap on and reports every
 * normal-heap block that held a piece of one of them during the call
 * (live), and what is left anywhere outside the secure heap afterwards.
 *
 * tests/run-tests.sh (OPENSSL_BRANCH=3.5) runs it in the Debian 13 root on
 * Debian 13's libcrypto (the positive control: d, padded, passes through a
 * normal-heap block) and on the patched build, where every line must count
 * 0, the HMAC pad states included (ipad_*, opad_*: the SHA-256 states an
 * HMAC_CTX keeps of its key, in digest contexts: patch 0025).
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "inprocess_scan.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *names[] = {
    "d", "p", "q", "dP", "dQ", "qInv", "d_hash", "kdk_bad", "kdk_good",
    "ipad_dhash", "opad_dhash", "ipad_kdkbad", "opad_kdkbad", "synthetic",
    "plaintext", NULL
};
enum { BN_NAMES = 6 };

static void put(int fd, const unsigned char *b, uint32_t len)
{
    if (write(fd, &len, sizeof(len)) != sizeof(len) || write(fd, b, len) != (ssize_t)len)
        _exit(3);
}

static void pad_states(const unsigned char *key, size_t klen, int fd)
{
    unsigned char blk[64];
    SHA256_CTX c;
    size_t i;

    for (i = 0; i < 64; i++)
        blk[i] = (i < klen ? key[i] : 0) ^ 0x36;
    SHA256_Init(&c);
    SHA256_Update(&c, blk, 64);
    put(fd, (unsigned char *)c.h, 32);
    for (i = 0; i < 64; i++)
        blk[i] = (i < klen ? key[i] : 0) ^ 0x5c;
    SHA256_Init(&c);
    SHA256_Update(&c, blk, 64);
    put(fd, (unsigned char *)c.h, 32);
}

static int decrypt(EVP_PKEY *pkey, const unsigned char *in, size_t inlen,
                   unsigned char *out, size_t *outlen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = c != NULL && EVP_PKEY_decrypt_init(c) == 1
        && EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PADDING) == 1
        && EVP_PKEY_decrypt(c, out, outlen, in, inlen) == 1;

    EVP_PKEY_CTX_free(c);
    return ok;
}

static void child(EVP_PKEY *pkey, int fd, const unsigned char *bad, size_t num)
{
    static const char *bn[BN_NAMES] = {
        OSSL_PKEY_PARAM_RSA_D, OSSL_PKEY_PARAM_RSA_FACTOR1,
        OSSL_PKEY_PARAM_RSA_FACTOR2, OSSL_PKEY_PARAM_RSA_EXPONENT1,
        OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_COEFFICIENT1
    };
    unsigned char buf[1024], dh[32], kb[32], kg[32], out[1024], good[1024];
    unsigned char msg[48];
    unsigned int l;
    size_t outlen = sizeof(out), goodlen = sizeof(good);
    BIGNUM *x = NULL;
    EVP_PKEY_CTX *ec = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int i;

    /* the good ciphertext, of a message only this child knows */
    if (RAND_bytes(msg, sizeof(msg)) != 1
        || EVP_PKEY_encrypt_init(ec) != 1
        || EVP_PKEY_CTX_set_rsa_padding(ec, RSA_PKCS1_PADDING) != 1
        || EVP_PKEY_encrypt(ec, good, &goodlen, msg, sizeof(msg)) != 1)
        _exit(2);
    put(fd, good, goodlen);

    for (i = 0; i < BN_NAMES; i++) {
        if (!EVP_PKEY_get_bn_param(pkey, bn[i], &x))
            _exit(2);
        put(fd, buf, BN_bn2bin(x, buf));
    }
    /* derive_kdk(): SHA-256 of d, padded to the modulus length */
    EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_D, &x);
    BN_bn2binpad(x, buf, num);
    SHA256(buf, num, dh);
    put(fd, dh, 32);
    HMAC(EVP_sha256(), dh, 32, bad, num, kb, &l);
    put(fd, kb, 32);
    HMAC(EVP_sha256(), dh, 32, good, num, kg, &l);
    put(fd, kg, 32);
    pad_states(dh, 32, fd);
    pad_states(kb, 32, fd);
    if (!decrypt(pkey, bad, num, out, &outlen))
        _exit(4);
    put(fd, out, outlen);
    put(fd, msg, sizeof(msg));
    _exit(0);
}

int main(int argc, char **argv)
{
    unsigned char good[1024], bad[1024];
    unsigned char *out;
    size_t num, outlen;
    uint32_t goodlen;
    EVP_PKEY *pkey;
    int fds[2], i, status;
    pid_t pid;

    pkey = scan_start("rsa_ir KEY.pem", argc == 2, argv[1]);
    num = EVP_PKEY_get_size(pkey);
    /* a ciphertext whose padding is bad: 0x00 0x01 0x01 ... (< n) */
    memset(bad, 1, num);
    bad[0] = 0;
    if (pipe(fds) != 0 || (pid = fork()) < 0)
        return 2;
    if (pid == 0) {
        close(fds[0]);
        child(pkey, fds[1], bad, num);
    }
    close(fds[1]);
    if (read(fds[0], &goodlen, sizeof(goodlen)) != sizeof(goodlen)
        || goodlen > sizeof(good)
        || read(fds[0], good, goodlen) != (ssize_t)goodlen)
        return 2;
    for (i = 0; names[i] != NULL; i++) {
        uint32_t len;
        unsigned char *b;

        if (read(fds[0], &len, sizeof(len)) != sizeof(len))
            return 2;
        b = OPENSSL_secure_malloc(len);
        if (read(fds[0], b, len) != (ssize_t)len)
            return 2;
        if (i < BN_NAMES)
            pattern_add_bn(names[i], b, len);
        else
            pattern_add(names[i], b, len);
        OPENSSL_secure_clear_free(b, len);
    }
    waitpid(pid, &status, 0);

    out = OPENSSL_secure_malloc(num);
    outlen = num;
    scan_live_reset();
    scan_live_on = 1;
    i = decrypt(pkey, bad, num, out, &outlen);
    scan_live_on = 0;
    printf("bad-padding decryption: %s, %zu bytes (implicit rejection)\n",
           i ? "ok" : "FAILED", outlen);
    scan_live_report("bad");
    scan_after("bad");

    outlen = num;
    scan_live_reset();
    scan_live_on = 1;
    i = decrypt(pkey, good, goodlen, out, &outlen);
    scan_live_on = 0;
    printf("good decryption: %s, %zu bytes, %s\n", i ? "ok" : "FAILED", outlen,
           outlen == pats[npats - 1].len
           && memcmp(out, pats[npats - 1].bytes, outlen) == 0 ? "matches" : "WRONG");
    scan_live_report("good");
    scan_after("good");
    OPENSSL_secure_clear_free(out, num);

    {
        static const unsigned char tbs[] = "secarena 3.5 reproducer";
        unsigned char sig[1024];
        size_t siglen = sizeof(sig);
        EVP_MD_CTX *md = EVP_MD_CTX_new();

        scan_live_reset();
        scan_live_on = 1;
        i = EVP_DigestSignInit_ex(md, NULL, "SHA256", NULL, NULL, pkey, NULL) == 1
            && EVP_DigestSign(md, sig, &siglen, tbs, sizeof(tbs) - 1) == 1;
        scan_live_on = 0;
        EVP_MD_CTX_free(md);
        printf("signature: %s\n", i ? "ok" : "FAILED");
        scan_live_report("sign");
        scan_after("sign");
    }
    EVP_PKEY_free(pkey);
    return 0;
}
