/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * In-process leak scanner for tests/rsa_implicit_rejection_scan.c and
 * tests/tls12_mac_state_scan.c.
 *
 * Secrets to look for ("patterns") are kept in the secure heap, so the
 * scanner never finds its own copies outside it.  Each pattern is cut into
 * 16-byte chunks; a chunk found anywhere counts as a piece of that secret.
 *
 * Two kinds of scan:
 *  - live: OpenSSL's malloc/realloc/free go through hooks
 *    (CRYPTO_set_mem_functions) that track every normal-heap block; while
 *    scan_live_on is set, every call scans all tracked blocks, so a secret
 *    that sits in a normal-heap block only for the duration of one
 *    operation is still seen (cleansed-before-free copies included);
 *  - after: all readable mappings of the process, classifying each hit as
 *    in the secure heap (CRYPTO_secure_allocated) or not, and as [stack] or
 *    elsewhere.
 *
 * A program that uses it must be linked with -Wl,-z,now (scan_install_hooks
 * refuses otherwise).  memmem() leaves the chunk it last compared in the
 * vector registers, and the lazy-binding trampoline of a first call through
 * a PLT entry saves every vector register on the stack: the scanner's own
 * copy of a pattern, which the "after" scan then counted as a stack hit.
 * Seen as one 16-byte hit of an HMAC state in tls12_mac_state_scan on CPUs
 * without the SHA extensions, where the first match (hence the first call
 * of CRYPTO_secure_allocated) came during the records.
 */
#define _GNU_SOURCE
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 16
#define MAXPAT 64
#define TRACK (1u << 20)

struct pattern {
    const char *name;
    unsigned char *bytes;       /* secure heap */
    size_t len;
    size_t live_hits;           /* chunk hits in normal-heap blocks, live */
    size_t live_max_block;      /* largest such block */
};

static struct pattern pats[MAXPAT];
static int npats;
static void **track;            /* live normal-heap blocks (pointers only) */
static volatile int scan_live_on;
static int in_hook;

static void pattern_add(const char *name, const unsigned char *b, size_t len)
{
    struct pattern *p;

    if (npats == MAXPAT) {
        fprintf(stderr, "inprocess_scan: more than %d patterns\n", MAXPAT);
        exit(2);
    }
    p = &pats[npats++];

    p->name = name;
    p->bytes = OPENSSL_secure_malloc(len);
    memcpy(p->bytes, b, len);
    p->len = len;
}

/* a number given big-endian: look for it big-endian and as BIGNUM limbs */
static __attribute__((unused)) void pattern_add_bn(const char *name, const unsigned char *be, size_t len)
{
    unsigned char *le = OPENSSL_secure_malloc(len);
    char *n2 = malloc(strlen(name) + 4);
    size_t i;

    for (i = 0; i < len; i++)
        le[i] = be[len - 1 - i];
    sprintf(n2, "%s/le", name);
    pattern_add(n2, le, len);
    n2 = malloc(strlen(name) + 4);
    sprintf(n2, "%s/be", name);
    pattern_add(n2, be, len);
    OPENSSL_secure_clear_free(le, len);
}

/* number of pattern-chunk hits of pattern |k| in [mem, mem+n) */
static size_t scan_range(const unsigned char *mem, size_t n, int k,
                         void (*hit)(const unsigned char *, int))
{
    struct pattern *p = &pats[k];
    size_t c, hits = 0;

    for (c = 0; c + CHUNK <= p->len; c += CHUNK) {
        const unsigned char *s = mem, *e = mem + n, *f;

        while (s < e && (f = memmem(s, e - s, p->bytes + c, CHUNK)) != NULL) {
            if (!CRYPTO_secure_allocated(f) && (f < p->bytes || f >= p->bytes + p->len)) {
                hits++;
                if (hit != NULL)
                    hit(f, k);
            }
            s = f + 1;
        }
    }
    return hits;
}

static size_t track_slot(void *ptr)
{
    return ((uintptr_t)ptr >> 4) * 2654435761u % TRACK;
}

static void track_add(void *ptr)
{
    size_t i = track_slot(ptr);

    while (track[i] != NULL && track[i] != (void *)1)
        i = (i + 1) % TRACK;
    track[i] = ptr;
}

static void track_del(void *ptr)
{
    size_t i = track_slot(ptr);

    while (track[i] != NULL) {
        if (track[i] == ptr) {
            track[i] = (void *)1;   /* tombstone */
            return;
        }
        i = (i + 1) % TRACK;
    }
}

static void scan_live(void)
{
    size_t i;
    int k;

    if (!scan_live_on)
        return;
    for (i = 0; i < TRACK; i++) {
        unsigned char *b = track[i];
        size_t sz;

        if (b == NULL || b == (void *)1)
            continue;
        sz = malloc_usable_size(b);
        for (k = 0; k < npats; k++) {
            size_t h = scan_range(b, sz, k, NULL);

            if (h != 0) {
                pats[k].live_hits += h;
                if (sz > pats[k].live_max_block)
                    pats[k].live_max_block = sz;
            }
        }
    }
}

/* A scan from inside an allocation hook, never from one the scan makes. */
static void scan_live_once(void)
{
    if (!in_hook) {
        in_hook = 1;
        scan_live();
        in_hook = 0;
    }
}

static void *hook_malloc(size_t n, const char *f, int l)
{
    void *p;

    (void)f; (void)l;
    scan_live_once();
    p = malloc(n);
    if (p != NULL)
        track_add(p);
    return p;
}

static void *hook_realloc(void *old, size_t n, const char *f, int l)
{
    void *p;

    (void)f; (void)l;
    scan_live_once();
    if (old != NULL)
        track_del(old);
    p = realloc(old, n);
    if (p != NULL)
        track_add(p);
    else if (old != NULL)
        track_add(old);
    return p;
}

static void hook_free(void *p, const char *f, int l)
{
    (void)f; (void)l;
    if (p == NULL)
        return;
    if (!in_hook) {
        in_hook = 1;
        scan_live();        /* the block still holds what it held */
        in_hook = 0;
    }
    track_del(p);
    free(p);
}

/*
 * The secure heap the patterns live in: the one OPENSSL_SECARENA makes when
 * libcrypto initialises, or else one of 1 MiB (OpenSSL's own, on a stock
 * build). 0 if there is none.
 */
static int scan_secure_heap(void)
{
    return CRYPTO_secure_malloc_initialized()
        || getenv("OPENSSL_SECARENA") != NULL
        || CRYPTO_secure_malloc_init(1 << 20, 16);
}

/* Whether this program was linked with -z now (see the top of this file). */
static int scan_bound_now(void)
{
    const ElfW(Dyn) *d;

    for (d = _DYNAMIC; d->d_tag != DT_NULL; d++)
        if ((d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_BIND_NOW))
            || (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_NOW)))
            return 1;
    return 0;
}

static int scan_install_hooks(void)
{
    if (!scan_bound_now()) {
        fprintf(stderr, "inprocess_scan: link with -Wl,-z,now: lazy binding "
                "would save the scanner's patterns on the stack\n");
        return 0;
    }
    track = calloc(TRACK, sizeof(*track));
    return track != NULL
        && CRYPTO_set_mem_functions(hook_malloc, hook_realloc, hook_free);
}

static __attribute__((unused)) void scan_live_report(const char *when)
{
    int k;

    for (k = 0; k < npats; k++)
        printf("%s: live normal-heap hits %-12s %zu%s\n", when, pats[k].name,
               pats[k].live_hits,
               pats[k].live_hits ? " (largest block below)" : "");
    for (k = 0; k < npats; k++)
        if (pats[k].live_hits)
            printf("%s:   %s seen in a %zu-byte block\n", when, pats[k].name,
                   pats[k].live_max_block);
}

static __attribute__((unused)) void scan_live_reset(void)
{
    int k;

    for (k = 0; k < npats; k++)
        pats[k].live_hits = pats[k].live_max_block = 0;
}

/* a thread's stack, which scan_after() counts as stack too (0: none) */
static uintptr_t scan_thread_stack_lo, scan_thread_stack_hi;

/* all readable mappings except the secure heap */
static void scan_after(const char *when)
{
    FILE *m = fopen("/proc/self/maps", "r");
    char line[512];
    size_t heap[MAXPAT] = { 0 }, stack[MAXPAT] = { 0 };
    int k;

    while (m != NULL && fgets(line, sizeof(line), m) != NULL) {
        unsigned long a, b;
        char perm[5];
        int is_stack = strstr(line, "[stack]") != NULL;

        if (sscanf(line, "%lx-%lx %4s", &a, &b, perm) != 3 || perm[0] != 'r')
            continue;
        if (a < scan_thread_stack_hi && b > scan_thread_stack_lo)
            is_stack = 1;
        if (strstr(line, "[vvar") != NULL || strstr(line, "[vsyscall]") != NULL)
            continue;
        /* the scanner's own patterns are secure; skip libcrypto's text */
        if (perm[1] != 'w')
            continue;
        for (k = 0; k < npats; k++) {
            size_t h = scan_range((const unsigned char *)a, b - a, k, NULL);

            if (is_stack)
                stack[k] += h;
            else
                heap[k] += h;
        }
    }
    if (m != NULL)
        fclose(m);
    for (k = 0; k < npats; k++)
        printf("%s: after, outside the secure heap %-12s heap/data %zu stack %zu\n",
               when, pats[k].name, heap[k], stack[k]);
}

/*
 * A scanner's start: the hooks, a secure heap, libcrypto initialised with
 * openssl.cnf (OPENSSL_SECARENA and the secarena section apply), then the
 * private key of the PEM file at path. Exits 2 with a message where any of
 * that fails; args_ok 0 prints the usage.
 */
static __attribute__((unused)) EVP_PKEY *scan_start(const char *usage, int args_ok,
                                                    const char *path)
{
    EVP_PKEY *pkey;
    BIO *bio;

    if (!args_ok || !scan_install_hooks()) {
        fprintf(stderr, "usage: %s (hooks must be installable)\n", usage);
        exit(2);
    }
    if (!scan_secure_heap()) {
        fprintf(stderr, "no secure heap\n");
        exit(2);
    }
    OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL);
    printf("secure heap: %d\n", CRYPTO_secure_malloc_initialized());
    bio = BIO_new_file(path, "r");
    pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (pkey == NULL) {
        ERR_print_errors_fp(stderr);
        exit(2);
    }
    return pkey;
}
