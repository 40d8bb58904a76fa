// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * private_op_stack_scan KEY.pem: what private-key operations leave on the
 * stack once they have returned (issue 19, part 2).
 *
 * The key's private components (for RSA d, p, q, dP, dQ, qInv; for EC, DH
 * and DSA the private value; for X25519, X448, Ed25519 and Ed448 the raw
 * private key) are patterns. For RSA, so are the values the CRT
 * exponentiation works on for an input this program chooses: the input mod
 * p and mod q, both half results, the recombination step, and each of them
 * in Montgomery form (x * R mod p, R = 2^(64 * words of p)), the form the
 * multiplication routines keep in their stack frames; those are computed
 * here for a raw private operation (RSA_private_encrypt, no padding,
 * blinding off, so that the input is known), which goes through the same
 * modular exponentiation as every RSA private operation.
 *
 * Then it runs the key's private operations through EVP, as a TLS server
 * does (sign, and also decrypt for RSA; for key exchange keys a derive with
 * the key and one with a fresh ephemeral key of the same parameters, whose
 * private value becomes a pattern too), and the raw RSA operation, ROUNDS
 * times each, and scans every writable mapping for the
 * patterns: the stack line must count 0 on the patched build. Stock OpenSSL
 * is counted, and the control is the scanner's own: after the operations
 * the thread leaves 48 random bytes in a dead frame 8 KiB down its stack
 * (below where a signal frame lands), the pattern "control residue", which
 * the scan must find on the stack in every run, stock and patched alike.
 *
 * Link with -Wl,-z,now (inprocess_scan.h says why).
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "inprocess_scan.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <signal.h>

#define ROUNDS 8

/* x as a pattern, padded to len bytes: big-endian and as BIGNUM limbs */
static void add_bn(const char *name, const BIGNUM *x, int len)
{
    unsigned char *b = OPENSSL_secure_malloc(len);

    if (b == NULL || BN_bn2binpad(x, b, len) != len) {
        fprintf(stderr, "%s: does not fit %d bytes\n", name, len);
        exit(2);
    }
    pattern_add_bn(name, b, len);
    OPENSSL_secure_clear_free(b, len);
}

/*
 * The secret parts of a raw private key. The post-quantum encodings carry
 * public parts too, which the public key's copies hold as well:
 *   ML-KEM  s | ek | H(ek) | z      (FIPS 203): s and z
 *   ML-DSA  rho | K | tr | s1 s2 t0 (FIPS 204): K and what follows tr
 *   SLH-DSA SK.seed | SK.prf | PK.seed | PK.root (FIPS 205): the first half
 */
static void add_secret_parts(const EVP_PKEY *pkey, const char *name,
                             const unsigned char *raw, size_t len)
{
    static const char *const kem[] = { "ML-KEM-512", "ML-KEM-768", "ML-KEM-1024" };
    size_t i;

    for (i = 0; i < 3; i++)
        if (EVP_PKEY_is_a(pkey, kem[i])) {
            size_t k = i + 2;

            pattern_add(name, raw, 384 * k);
            pattern_add(name, raw + len - 32, 32);
            return;
        }
    if (EVP_PKEY_is_a(pkey, "ML-DSA-44") || EVP_PKEY_is_a(pkey, "ML-DSA-65")
        || EVP_PKEY_is_a(pkey, "ML-DSA-87")) {
        pattern_add(name, raw + 32, 32);
        pattern_add(name, raw + 128, len - 128);
        return;
    }
    if (strncmp(EVP_PKEY_get0_type_name(pkey), "SLH-DSA", 7) == 0) {
        pattern_add(name, raw, len / 2);
        return;
    }
    pattern_add(name, raw, len);
}

/* The private key of a key that is not RSA: raw bytes or the private BIGNUM. */
static void add_private(const EVP_PKEY *pkey, const char *name)
{
    unsigned char *raw;
    size_t rawlen = 0;
    BIGNUM *x = NULL;

    /* X25519, Ed25519, their 448 kin, ML-KEM, ML-DSA, SLH-DSA: raw bytes */
    if (EVP_PKEY_get_raw_private_key(pkey, NULL, &rawlen) == 1
        && (raw = OPENSSL_secure_malloc(rawlen)) != NULL
        && EVP_PKEY_get_raw_private_key(pkey, raw, &rawlen) == 1) {
        add_secret_parts(pkey, name, raw, rawlen);
        OPENSSL_secure_clear_free(raw, rawlen);
    } else if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &x)) {
        add_bn(name, x, BN_num_bytes(x));
        BN_clear_free(x);
    } else {
        fprintf(stderr, "%s: no private key\n", name);
        exit(2);
    }
}

static void add_bn_param(const EVP_PKEY *pkey, const char *param, const char *name)
{
    BIGNUM *x = NULL;

    if (!EVP_PKEY_get_bn_param(pkey, param, &x)) {
        fprintf(stderr, "key has no %s\n", param);
        exit(2);
    }
    add_bn(name, x, BN_num_bytes(x));
    BN_clear_free(x);
}

/* x and x * R mod m, R = 2^(64 * words of m), padded to m's length */
static void add_mod(const char *name, const char *mont_name, const BIGNUM *x,
                    const BIGNUM *m, BN_CTX *ctx)
{
    int len = BN_num_bytes(m);
    BIGNUM *r = BN_CTX_get(ctx);

    add_bn(name, x, len);
    BN_zero(r);
    if (!BN_set_bit(r, ((BN_num_bits(m) + 63) / 64) * 64) || !BN_mod_mul(r, x, r, m, ctx))
        exit(2);
    add_bn(mont_name, r, len);
}

/*
 * The CRT values of input^d mod n, computed apart from OpenSSL's code path
 * (plain BN arithmetic here, in the secure heap of this program).
 */
static void add_crt_patterns(const EVP_PKEY *pkey, const BIGNUM *in)
{
    BIGNUM *p = NULL, *q = NULL, *dp = NULL, *dq = NULL, *qinv = NULL;
    BN_CTX *ctx = BN_CTX_secure_new();
    BIGNUM *mp, *mq, *m1, *m2, *h;

    if (ctx == NULL
        || !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR1, &p)
        || !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR2, &q)
        || !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT1, &dp)
        || !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_EXPONENT2, &dq)
        || !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, &qinv))
        exit(2);
    BN_CTX_start(ctx);
    mp = BN_CTX_get(ctx);
    mq = BN_CTX_get(ctx);
    m1 = BN_CTX_get(ctx);
    m2 = BN_CTX_get(ctx);
    h = BN_CTX_get(ctx);
    if (h == NULL
        || !BN_mod(mp, in, p, ctx) || !BN_mod(mq, in, q, ctx)
        || !BN_mod_exp(m1, mp, dp, p, ctx) || !BN_mod_exp(m2, mq, dq, q, ctx)
        || !BN_mod_sub(h, m1, m2, p, ctx) || !BN_mod_mul(h, h, qinv, p, ctx))
        exit(2);
    add_mod("in_mod_p", "in_mod_p_mont", mp, p, ctx);
    add_mod("in_mod_q", "in_mod_q_mont", mq, q, ctx);
    add_mod("m1", "m1_mont", m1, p, ctx);
    add_mod("m2", "m2_mont", m2, q, ctx);
    add_mod("h", "h_mont", h, p, ctx);
    BN_CTX_end(ctx);
    BN_CTX_free(ctx);
    BN_clear_free(p);
    BN_clear_free(q);
    BN_clear_free(dp);
    BN_clear_free(dq);
    BN_clear_free(qinv);
}

static int sign(EVP_PKEY *pkey)
{
    static const unsigned char tbs[] = "private_op_stack_scan";
    unsigned char *sig = NULL;
    size_t siglen = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    /* a digest for the key types that take one; EdDSA, ML-DSA, SLH-DSA none */
    int hashed = EVP_PKEY_is_a(pkey, "RSA") || EVP_PKEY_is_a(pkey, "EC")
        || EVP_PKEY_is_a(pkey, "DSA");
    int ok = md != NULL
        && EVP_DigestSignInit_ex(md, NULL, hashed ? "SHA256" : NULL, NULL, NULL, pkey, NULL) == 1
        && EVP_DigestSign(md, NULL, &siglen, tbs, sizeof(tbs) - 1) == 1
        && (sig = malloc(siglen)) != NULL
        && EVP_DigestSign(md, sig, &siglen, tbs, sizeof(tbs) - 1) == 1;

    free(sig);
    EVP_MD_CTX_free(md);
    return ok;
}

static int rsa_decrypt(EVP_PKEY *pkey)
{
    unsigned char ct[1024], pt[1024];
    size_t ctlen = sizeof(ct), ptlen = sizeof(pt);
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = c != NULL
        && EVP_PKEY_encrypt_init(c) == 1
        && EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) == 1
        && EVP_PKEY_encrypt(c, ct, &ctlen, (const unsigned char *)"secret", 6) == 1
        && EVP_PKEY_decrypt_init(c) == 1
        && EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) == 1
        && EVP_PKEY_decrypt(c, pt, &ptlen, ct, ctlen) == 1;

    EVP_PKEY_CTX_free(c);
    return ok;
}

/* A fresh key of the same type and parameters: what an ephemeral key is. */
static EVP_PKEY *keygen_like(EVP_PKEY *pkey)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    EVP_PKEY *k = NULL;

    if (c == NULL || EVP_PKEY_keygen_init(c) != 1 || EVP_PKEY_keygen(c, &k) != 1)
        k = NULL;
    EVP_PKEY_CTX_free(c);
    return k;
}

/*
 * The shared secrets the operations make: kept in the secure heap, and
 * patterns too once the operations are done.
 */
#define MAX_SECRETS (2 * ROUNDS)
#define SECRET_MAX 1024

static unsigned char *secret[MAX_SECRETS];
static size_t secret_len[MAX_SECRETS], nsecrets;

static unsigned char *secret_slot(void)
{
    if (nsecrets == MAX_SECRETS)
        exit(2);
    secret[nsecrets] = OPENSSL_secure_zalloc(SECRET_MAX);
    if (secret[nsecrets] == NULL)
        exit(2);
    return secret[nsecrets];
}

static int derive(EVP_PKEY *pkey, EVP_PKEY *peer)
{
    unsigned char *out = secret_slot();
    size_t len = SECRET_MAX;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = c != NULL && peer != NULL
        && EVP_PKEY_derive_init(c) == 1
        && EVP_PKEY_derive_set_peer(c, peer) == 1
        && EVP_PKEY_derive(c, out, &len) == 1;

    secret_len[nsecrets++] = ok ? len : 0;
    EVP_PKEY_CTX_free(c);
    return ok;
}

/* ML-KEM: encapsulate to the key's public half, then decapsulate with it. */
static int kem(EVP_PKEY *pkey)
{
    unsigned char ct[2048], *out = secret_slot(), *back;
    size_t ctlen = sizeof(ct), len = SECRET_MAX, backlen;
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = c != NULL
        && EVP_PKEY_encapsulate_init(c, NULL) == 1
        && EVP_PKEY_encapsulate(c, ct, &ctlen, out, &len) == 1;

    secret_len[nsecrets++] = ok ? len : 0;
    back = secret_slot();
    backlen = SECRET_MAX;
    ok = ok && EVP_PKEY_decapsulate_init(c, NULL) == 1
        && EVP_PKEY_decapsulate(c, back, &backlen, ct, ctlen) == 1
        && backlen == len && memcmp(back, out, len) == 0;
    secret_len[nsecrets++] = 0;     /* the same secret: one pattern */
    EVP_PKEY_CTX_free(c);
    return ok;
}

/* The raw CRT operation on in, blinding off; 1 on success. */
static int rsa_raw(EVP_PKEY *pkey, const BIGNUM *in)
{
    RSA *rsa = (RSA *)EVP_PKEY_get0_RSA(pkey);
    unsigned char from[1024], to[1024];
    int len = RSA_size(rsa), ok;

    RSA_blinding_off(rsa);
    ok = BN_bn2binpad(in, from, len) == len
        && RSA_private_encrypt(len, from, to, rsa, RSA_NO_PADDING) == len;
    OPENSSL_cleanse(to, sizeof(to));
    return ok;
}

static void on_signal(int sig)
{
    (void)sig;
}

/*
 * The stack below the operations is painted first, so that afterwards the
 * lowest byte that is neither paint nor zero tells how deep they wrote.
 */
#define PAINT_BYTES (64 * 1024)
#define PAINT 0xa5

/* addresses, not pointers: the area is dead once paint_stack() returns */
static uintptr_t painted_lo, painted_hi;

static __attribute__((noinline)) void paint_stack(void)
{
    unsigned char area[PAINT_BYTES];

    memset(area, PAINT, sizeof(area));
    painted_lo = (uintptr_t)area;
    painted_hi = (uintptr_t)area + sizeof(area);
    __asm__ __volatile__("" : : "r"(area) : "memory");
}

/* Bytes between the painted area's top and the deepest byte written. */
static size_t depth_written(void)
{
    uintptr_t q;

    for (q = painted_lo; q < painted_hi; q++)
        if (*(const unsigned char *)q != PAINT && *(const unsigned char *)q != 0)
            return painted_hi - q;
    return 0;
}

/*
 * The control: RESIDUE_LEN random bytes that only the operations thread's
 * stack holds once main() has made them a pattern and wiped its own copy.
 */
#define RESIDUE_LEN 48
#define RESIDUE_DEPTH 8192
static unsigned char residue[RESIDUE_LEN];

static __attribute__((noinline)) void leave_residue(void)
{
    volatile unsigned char area[RESIDUE_DEPTH];
    size_t i;

    /* The lowest addresses of the frame: the deepest, past a signal frame. */
    for (i = 0; i < RESIDUE_LEN; i++)
        area[i] = residue[i];
    __asm__ __volatile__("" : : "r"(area) : "memory");
}

struct job {
    EVP_PKEY *pkey, *peer, *eph[ROUNDS];
    const BIGNUM *in;
    int is_rsa, exchange, is_kem, ok;
    size_t depth;
    pthread_barrier_t done, scanned;
};

/*
 * The operations, on a thread of their own that then waits: its stack keeps
 * what they left below the point they returned to, untouched by the
 * scanner's own calls, as a server thread's stack does between requests.
 */
static void *operations(void *arg)
{
    struct job *j = arg;
    int i, ok = 1;

    paint_stack();

    for (i = 0; i < ROUNDS && ok; i++) {
        if (j->exchange) {
            /*
             * An ephemeral key, as each handshake makes: a pattern too,
             * taken from it by the main thread, so that the copies that
             * takes leave nothing in this thread's registers.
             */
            EVP_PKEY *eph = keygen_like(j->pkey);

            ok = eph != NULL && derive(j->pkey, j->peer) && derive(eph, j->peer);
            j->eph[i] = eph;
        } else if (j->is_kem) {
            /* and an ephemeral key, as a TLS client makes for ML-KEM */
            EVP_PKEY *eph = keygen_like(j->pkey);

            ok = eph != NULL && kem(j->pkey);
            j->eph[i] = eph;
        } else {
            ok = sign(j->pkey);
        }
        if (j->is_rsa)
            ok = ok && rsa_decrypt(j->pkey) && rsa_raw(j->pkey, j->in);
    }
    j->ok = ok;
    j->depth = depth_written();
    leave_residue();
    /*
     * A signal now, as a server gets them (SIGCHLD, SIGALRM, its own):
     * the kernel saves every register, the vector registers included, in
     * the signal frame on this stack, where it stays after the handler.
     */
    if (getenv("SCAN_SIGNAL") != NULL)
        raise(SIGUSR1);
    pthread_barrier_wait(&j->done);
    pthread_barrier_wait(&j->scanned);
    return NULL;
}

int main(int argc, char **argv)
{
    EVP_PKEY *pkey, *peer = NULL;
    BIGNUM *in = NULL;
    int i, ok, is_rsa, exchange, is_kem;
    struct job job = { 0 };
    pthread_t t;
    pthread_attr_t attr;
    void *stack;
    size_t stack_size;

    pkey = scan_start("private_op_stack_scan KEY.pem", argc == 2, argv[1]);
    is_rsa = EVP_PKEY_is_a(pkey, "RSA");
    exchange = EVP_PKEY_is_a(pkey, "EC") || EVP_PKEY_is_a(pkey, "DH")
        || EVP_PKEY_is_a(pkey, "X25519") || EVP_PKEY_is_a(pkey, "X448");
    is_kem = EVP_PKEY_is_a(pkey, "ML-KEM-512") || EVP_PKEY_is_a(pkey, "ML-KEM-768")
        || EVP_PKEY_is_a(pkey, "ML-KEM-1024");
    if (is_rsa) {
        static const char *const comp[][2] = {
            { OSSL_PKEY_PARAM_RSA_D, "d" }, { OSSL_PKEY_PARAM_RSA_FACTOR1, "p" },
            { OSSL_PKEY_PARAM_RSA_FACTOR2, "q" }, { OSSL_PKEY_PARAM_RSA_EXPONENT1, "dP" },
            { OSSL_PKEY_PARAM_RSA_EXPONENT2, "dQ" }, { OSSL_PKEY_PARAM_RSA_COEFFICIENT1, "qInv" },
        };
        BIGNUM *n = NULL;

        for (i = 0; i < 6; i++)
            add_bn_param(pkey, comp[i][0], comp[i][1]);
        /* an input below n with every byte set: no chunk of it is zero */
        in = BN_new();
        if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n)
            || !BN_rand_range(in, n))
            return 2;
        BN_free(n);
        add_crt_patterns(pkey, in);
    } else {
        add_private(pkey, "private key");
    }
    if (exchange)
        peer = keygen_like(pkey);

    if (RAND_bytes(residue, sizeof(residue)) != 1)
        return 2;
    pattern_add("control residue", residue, sizeof(residue));

    signal(SIGUSR1, on_signal);
    job.pkey = pkey;
    job.peer = peer;
    job.in = in;
    job.is_rsa = is_rsa;
    job.exchange = exchange;
    job.is_kem = is_kem;
    pthread_barrier_init(&job.done, NULL, 2);
    pthread_barrier_init(&job.scanned, NULL, 2);
    scan_live_on = getenv("SCAN_LIVE") != NULL;
    if (pthread_create(&t, NULL, operations, &job) != 0)
        return 2;
    pthread_barrier_wait(&job.done);
    /* Now only the thread's dead frame holds it. */
    OPENSSL_cleanse(residue, sizeof(residue));
    if (pthread_getattr_np(t, &attr) != 0 || pthread_attr_getstack(&attr, &stack, &stack_size) != 0)
        return 2;
    for (i = 0; i < ROUNDS; i++)
        if (job.eph[i] != NULL) {
            static const char *const eph_name[ROUNDS] = {
                "ephemeral 1", "ephemeral 2", "ephemeral 3", "ephemeral 4",
                "ephemeral 5", "ephemeral 6", "ephemeral 7", "ephemeral 8",
            };

            add_private(job.eph[i], eph_name[i]);
            EVP_PKEY_free(job.eph[i]);
        }
    for (i = 0; i < (int)nsecrets; i++)
        if (secret_len[i] != 0) {
            static const char *const secret_name[MAX_SECRETS] = {
                "secret 1", "secret 2", "secret 3", "secret 4", "secret 5",
                "secret 6", "secret 7", "secret 8", "secret 9", "secret 10",
                "secret 11", "secret 12", "secret 13", "secret 14",
                "secret 15", "secret 16",
            };

            pattern_add(secret_name[i], secret[i], secret_len[i]);
        }
    scan_thread_stack_lo = (uintptr_t)stack;
    scan_thread_stack_hi = (uintptr_t)stack + stack_size;
    ok = job.ok;
    printf("operations: %s (%d rounds)\n", ok ? "ok" : "FAILED", ROUNDS);
    printf("stack depth written: %zu bytes\n", job.depth);
    if (!ok)
        ERR_print_errors_fp(stdout);
    scan_live_on = 0;
    if (getenv("SCAN_LIVE") != NULL)
        scan_live_report("ops");
    scan_after("ops");
    pthread_barrier_wait(&job.scanned);
    pthread_join(t, NULL);
    BN_free(in);
    EVP_PKEY_free(peer);
    EVP_PKEY_free(pkey);
    return ok ? 0 : 1;
}
