// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pq_key_scan [-v] [ALG...]: where OpenSSL 3.5 leaves post-quantum private
 * keys. With the secure heap on (CRYPTO_secure_malloc_init, as a server's
 * configuration does), it generates, saves as PEM, loads (PEM, and PKCS#8
 * in the seed-only, expanded-only and both forms), duplicates, exports,
 * imports and uses ML-KEM, ML-DSA and SLH-DSA keys, and after each step
 * reads its own memory, every readable writable region except the secure
 * heap, for the secret parts of the key: the seeds, the encoded private
 * vectors and the same vectors as the implementation holds them in memory
 * (one coefficient per 16- or 32-bit word), plus the per-operation secrets
 * (the shared secret, the implicit-rejection key, ML-DSA's rho').
 *
 * Every pattern it searches for lives in the secure heap itself, and the
 * PKCS#8 files are written by a fork child, so that the hits are copies the
 * library made. Freed heap memory is read too: a copy freed without being
 * cleansed counts.
 *
 * Prints one line per step and "ALG total hits N" per algorithm, then
 * "TOTAL hits N". Exit 0 when it ran (whatever the count; the caller knows
 * which library it ran on), 1 when a step failed.
 * Defaults to every parameter set of the three algorithms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/objects.h>

#define SH_SIZE (1 << 22)
static int verbose;
static uintptr_t sh_lo, sh_hi;
static char tmpdir[] = "/tmp/pq_key_scan.XXXXXX";

/* ---- patterns (bytes live in the secure heap) ---- */
typedef struct {
	const char *label;
	const unsigned char *p;
	size_t len;
} PAT;
#define MAXPAT 8192
static PAT pats[MAXPAT];
static int npat;

static void add_pat(const char *label, const unsigned char *p, size_t len)
{
	if (npat < MAXPAT && len > 0) {
		pats[npat].label = label;
		pats[npat].p = p;
		pats[npat].len = len;
		npat++;
	}
}

/* add |buf| as windows of |win| bytes (last one may be shorter, >= 16) */
static void add_windows(const char *label, const unsigned char *buf, size_t len, size_t win)
{
	size_t off;

	for (off = 0; off < len; off += win) {
		size_t l = len - off < win ? len - off : win;

		if (l >= 16)
			add_pat(label, buf + off, l);
	}
}

static unsigned char *smalloc(size_t n)
{
	unsigned char *p = OPENSSL_secure_zalloc(n);

	if (p == NULL || !CRYPTO_secure_allocated(p)) {
		fprintf(stderr, "secure alloc of %zu failed\n", n);
		exit(2);
	}
	return p;
}

/* LE bit-stream unpacking into 16-bit (ML-KEM) or 32-bit (ML-DSA) coeffs */
static uint32_t getbits(const unsigned char *in, size_t bitpos, int bits)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < bits; i++, bitpos++)
		v |= (uint32_t)((in[bitpos >> 3] >> (bitpos & 7)) & 1) << i;
	return v;
}

/* ---- scanning ---- */
/*
 * An index of the patterns' first 8 bytes, in the secure heap, so that one
 * pass over memory checks every pattern.
 */
#define HTBITS 15
#define HTSIZE (1 << HTBITS)
static uint64_t *ht_key;
static int32_t *ht_val;

static unsigned ht_hash(uint64_t v)
{
	return (unsigned)((v * 0x9E3779B97F4A7C15ULL) >> (64 - HTBITS));
}

static void ht_build(void)
{
	int i;

	if (ht_key == NULL) {
		ht_key = (uint64_t *)smalloc(HTSIZE * sizeof(*ht_key));
		ht_val = (int32_t *)smalloc(HTSIZE * sizeof(*ht_val));
	}
	for (i = 0; i < HTSIZE; i++)
		ht_val[i] = -1;
	for (i = 0; i < npat; i++) {
		uint64_t v;
		unsigned h;

		memcpy(&v, pats[i].p, 8);
		for (h = ht_hash(v); ht_val[h] >= 0; h = (h + 1) & (HTSIZE - 1))
			;
		ht_key[h] = v;
		ht_val[h] = i;
	}
}

typedef struct {
	const char *label;
	int hits;
} COUNT;

static int scan(const char *phase, const char *alg)
{
	static char maps[1 << 20];
	static COUNT counts[64];
	int ncounts = 0, total = 0, fd, i, shown = 0;
	ssize_t n, got = 0;
	char *line, *save = NULL;

	ht_build();
	fd = open("/proc/self/maps", O_RDONLY);
	while ((n = read(fd, maps + got, sizeof(maps) - 1 - got)) > 0)
		got += n;
	close(fd);
	maps[got] = '\0';

	for (line = strtok_r(maps, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi;
		char perms[8], name[512] = "";
		const unsigned char *base, *p, *end;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, name) < 3)
			continue;
		if (perms[0] != 'r')
			continue;
		if ((lo < sh_hi && hi > sh_lo) || CRYPTO_secure_allocated((void *)lo))
			continue; /* the secure heap */
		if (strncmp(name, "[vvar", 5) == 0 || strcmp(name, "[vsyscall]") == 0)
			continue;
		if (name[0] == '/' && perms[1] != 'w')
			continue; /* read-only file mappings */
		base = (const unsigned char *)lo;
		end = (const unsigned char *)hi;
		for (p = base; p + 8 <= end; p++) {
			uint64_t v;
			unsigned h;

			memcpy(&v, p, 8);
			for (h = ht_hash(v); ht_val[h] >= 0; h = (h + 1) & (HTSIZE - 1)) {
				const PAT *pt = &pats[ht_val[h]];
				int c;

				if (ht_key[h] != v || (size_t)(end - p) < pt->len ||
				    memcmp(p, pt->p, pt->len) != 0)
					continue;
				for (c = 0; c < ncounts; c++)
					if (counts[c].label == pt->label)
						break;
				if (c == ncounts) {
					counts[c].label = pt->label;
					counts[c].hits = 0;
					ncounts++;
				}
				counts[c].hits++;
				total++;
				if (verbose && shown++ < 40) {
					const unsigned char *q = p - 16 < base ? base : p - 16;

					printf("      hit %-12s at %p (+%#lx in %s %s) before:",
					       pt->label, (const void *)p,
					       (unsigned long)(p - base), name[0] ? name : "[anon]",
					       perms);
					for (; q < p; q++)
						printf(" %02x", *q);
					printf("\n");
				}
			}
		}
	}
	printf("  %-18s %-20s hits %4d", alg, phase, total);
	for (i = 0; i < ncounts; i++)
		printf("  %s:%d", counts[i].label, counts[i].hits);
	printf("\n");
	fflush(stdout);
	return total;
}

/* ---- helpers ---- */
static void die(const char *what)
{
	fprintf(stderr, "FAILED: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

static size_t get_octets(EVP_PKEY *pk, const char *name, unsigned char **out)
{
	size_t len = 0;

	*out = NULL;
	if (!EVP_PKEY_get_octet_string_param(pk, name, NULL, 0, &len) || len == 0)
		return 0;
	*out = smalloc(len);
	if (!EVP_PKEY_get_octet_string_param(pk, name, *out, len, &len))
		die(name);
	return len;
}

static int write_pem(EVP_PKEY *pk, const char *path)
{
	BIO *b = BIO_new_file(path, "w");
	int ok = b != NULL && PEM_write_bio_PrivateKey(b, pk, NULL, NULL, 0, NULL, NULL);

	BIO_free(b);
	return ok;
}

static EVP_PKEY *read_pem(const char *path)
{
	BIO *b = BIO_new_file(path, "r");
	EVP_PKEY *pk = b == NULL ? NULL : PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);

	BIO_free(b);
	return pk;
}

/* DER length prefix */
static size_t der_hdr(unsigned char *o, int tag, size_t len)
{
	o[0] = (unsigned char)tag;
	if (len < 128) {
		o[1] = (unsigned char)len;
		return 2;
	}
	if (len < 256) {
		o[1] = 0x81;
		o[2] = (unsigned char)len;
		return 3;
	}
	o[1] = 0x82;
	o[2] = (unsigned char)(len >> 8);
	o[3] = (unsigned char)len;
	return 4;
}

/* In a child: write the PKCS#8 forms "seed-only", "priv-only", "both". */
static void child_write_forms(const char *alg, const unsigned char *seed, size_t seedlen,
			      const unsigned char *priv, size_t privlen)
{
	static const char *forms[3] = {"seed", "priv", "both"};
	int f, nid = OBJ_sn2nid(alg);

	if (nid == NID_undef)
		nid = OBJ_ln2nid(alg);
	for (f = 0; f < 3; f++) {
		unsigned char *der = OPENSSL_malloc(privlen + seedlen + 32), *o = der;
		PKCS8_PRIV_KEY_INFO *p8 = PKCS8_PRIV_KEY_INFO_new();
		char path[256];
		BIO *b;

		if (f == 0) {
			o += der_hdr(o, 0x80, seedlen);
			memcpy(o, seed, seedlen);
			o += seedlen;
		} else if (f == 1) {
			o += der_hdr(o, 0x04, privlen);
			memcpy(o, priv, privlen);
			o += privlen;
		} else {
			unsigned char h1[4], h2[4];
			size_t l1 = der_hdr(h1, 0x04, seedlen), l2 = der_hdr(h2, 0x04, privlen);

			o += der_hdr(o, 0x30, l1 + seedlen + l2 + privlen);
			memcpy(o, h1, l1);
			o += l1;
			memcpy(o, seed, seedlen);
			o += seedlen;
			memcpy(o, h2, l2);
			o += l2;
			memcpy(o, priv, privlen);
			o += privlen;
		}
		if (!PKCS8_pkey_set0(p8, OBJ_nid2obj(nid), 0, V_ASN1_UNDEF, NULL, der,
				     (int)(o - der)))
			_exit(3);
		snprintf(path, sizeof(path), "%s/%s-%s.pem", tmpdir, alg, forms[f]);
		b = BIO_new_file(path, "w");
		if (b == NULL || !PEM_write_bio_PKCS8_PRIV_KEY_INFO(b, p8))
			_exit(4);
		BIO_free(b);
		PKCS8_PRIV_KEY_INFO_free(p8);
	}
	_exit(0);
}

static void fork_forms(const char *alg, const unsigned char *seed, size_t seedlen,
		       const unsigned char *priv, size_t privlen)
{
	pid_t pid;
	int st;

	fflush(stdout);
	if ((pid = fork()) == 0)
		child_write_forms(alg, seed, seedlen, priv, privlen);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("writing PKCS#8 forms");
}

static int shake256(unsigned char *out, size_t outlen, const unsigned char *a, size_t alen,
		    const unsigned char *b, size_t blen, const unsigned char *c, size_t clen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx != NULL && EVP_DigestInit_ex2(ctx, EVP_shake256(), NULL) &&
		 EVP_DigestUpdate(ctx, a, alen) && (blen == 0 || EVP_DigestUpdate(ctx, b, blen)) &&
		 (clen == 0 || EVP_DigestUpdate(ctx, c, clen)) &&
		 EVP_DigestFinalXOF(ctx, out, outlen);

	EVP_MD_CTX_free(ctx);
	return ok;
}

/* ---- per-family key material patterns ---- */
static void patterns_ml_kem(const unsigned char *priv, size_t privlen, const unsigned char *seed,
			    size_t seedlen, int rank)
{
	size_t sbytes = 384 * (size_t)rank, i;
	unsigned char *coeffs = smalloc(256 * 2 * rank);

	(void)privlen;
	add_windows("dk.s", priv, sbytes, 32); /* encoded s */
	add_pat("dk.z", priv + privlen - 32, 32); /* z */
	for (i = 0; i < 256 * (size_t)rank; i++) { /* s as uint16 */
		uint16_t v = (uint16_t)getbits(priv, 12 * i, 12);

		memcpy(coeffs + 2 * i, &v, 2);
	}
	add_windows("s[]", coeffs, 256 * 2 * rank, 32);
	if (seedlen == 64) {
		add_pat("seed.d", seed, 32);
		add_pat("seed.z", seed + 32, 32);
	}
}

static void patterns_ml_dsa(const unsigned char *priv, size_t privlen, const unsigned char *seed,
			    size_t seedlen, int k, int l, int eta)
{
	int ebits = eta == 2 ? 3 : 4;
	size_t ncoef = 256 * (size_t)(l + k), i, bit;
	size_t npoly = (size_t)(l + 2 * k);
	uint32_t q = 8380417;
	unsigned char *coeffs = smalloc(npoly * 256 * 4);

	add_pat("K", priv + 32, 32);
	add_windows("sk.s1s2t0", priv + 128, privlen - 128, 32);
	for (i = 0, bit = 0; i < ncoef; i++, bit += ebits) { /* s1, s2 */
		uint32_t v = getbits(priv + 128, bit, ebits);
		uint32_t c = v <= (uint32_t)eta ? (uint32_t)eta - v : q + (uint32_t)eta - v;

		memcpy(coeffs + 4 * i, &c, 4);
	}
	for (i = 0; i < 256 * (size_t)k; i++, bit += 13) { /* t0 */
		uint32_t v = getbits(priv + 128, bit, 13);
		uint32_t c = v <= 4096 ? 4096 - v : q + 4096 - v;

		memcpy(coeffs + 4 * (ncoef + i), &c, 4);
	}
	add_windows("s1s2t0[]", coeffs, npoly * 256 * 4, 64);
	if (seedlen == 32)
		add_pat("seed.xi", seed, 32);
}

/* ---- the runs ---- */
enum { FAM_KEM, FAM_DSA, FAM_SLH };

static int run_alg(const char *alg, int fam)
{
	EVP_PKEY *key, *k2, *k3;
	EVP_PKEY_CTX *pctx;
	unsigned char *priv, *seed = NULL, *ss1, *ss2, *kbar, *rhop;
	size_t privlen, seedlen = 0;
	int total = 0, rank = 0, k = 0, l = 0, eta = 0, f;
	char path[256];
	OSSL_PARAM *params = NULL;

	printf("%s\n", alg);
	npat = 0;
	if ((key = EVP_PKEY_Q_keygen(NULL, NULL, alg)) == NULL)
		die("keygen");

	privlen = get_octets(key, OSSL_PKEY_PARAM_PRIV_KEY, &priv);
	if (fam == FAM_KEM)
		seedlen = get_octets(key, OSSL_PKEY_PARAM_ML_KEM_SEED, &seed);
	else if (fam == FAM_DSA)
		seedlen = get_octets(key, OSSL_PKEY_PARAM_ML_DSA_SEED, &seed);
	if (privlen == 0)
		die("no private key");

	if (fam == FAM_KEM) {
		rank = strstr(alg, "512") ? 2 : strstr(alg, "768") ? 3 : 4;
		patterns_ml_kem(priv, privlen, seed, seedlen, rank);
	} else if (fam == FAM_DSA) {
		if (strstr(alg, "44")) {
			k = 4;
			l = 4;
			eta = 2;
		} else if (strstr(alg, "65")) {
			k = 6;
			l = 5;
			eta = 4;
		} else {
			k = 8;
			l = 7;
			eta = 2;
		}
		patterns_ml_dsa(priv, privlen, seed, seedlen, k, l, eta);
	} else {
		size_t n = privlen / 4;

		add_pat("SK.seed", priv, n);
		add_pat("SK.prf", priv + n, n);
	}

	total += scan("generated", alg);

	snprintf(path, sizeof(path), "%s/%s.pem", tmpdir, alg);
	if (!write_pem(key, path))
		die("PEM write");
	total += scan("saved PEM", alg);

	if ((k2 = read_pem(path)) == NULL)
		die("PEM read");
	total += scan("loaded PEM", alg);
	EVP_PKEY_free(k2);

	if (fam != FAM_SLH) {
		static const char *forms[3] = {"seed", "priv", "both"};
		static char labels[3][32];

		fork_forms(alg, seed, seedlen, priv, privlen);
		for (f = 0; f < 3; f++) {
			snprintf(path, sizeof(path), "%s/%s-%s.pem", tmpdir, alg, forms[f]);
			snprintf(labels[f], sizeof(labels[f]), "loaded %s-only", forms[f]);
			if (f == 2)
				snprintf(labels[f], sizeof(labels[f]), "loaded seed+priv");
			if ((k2 = read_pem(path)) == NULL)
				die(path);
			total += scan(labels[f], alg);
			EVP_PKEY_free(k2);
		}
		total += scan("loaded keys freed", alg);
	}

	if ((k2 = EVP_PKEY_dup(key)) == NULL) {
		/* ML-KEM in 3.5.7: upstream issue 31114 */
		printf("  %-18s %-20s FAILED (EVP_PKEY_dup), using the original\n", alg, "dup");
		ERR_clear_error();
		if (!EVP_PKEY_up_ref(key))
			die("up_ref");
		k2 = key;
	} else {
		total += scan("dup", alg);
	}

	if (EVP_PKEY_todata(key, EVP_PKEY_KEYPAIR, &params) <= 0)
		die("todata");
	total += scan("exported (todata)", alg);
	pctx = EVP_PKEY_CTX_new_from_name(NULL, alg, NULL);
	k3 = NULL;
	if (pctx == NULL || EVP_PKEY_fromdata_init(pctx) <= 0 ||
	    EVP_PKEY_fromdata(pctx, &k3, EVP_PKEY_KEYPAIR, params) <= 0)
		die("fromdata");
	EVP_PKEY_CTX_free(pctx);
	OSSL_PARAM_free(params);
	total += scan("imported (fromdata)", alg);
	EVP_PKEY_free(k3);

	if (fam == FAM_KEM) {
		unsigned char ct[1568 + 16];
		size_t ctlen = sizeof(ct), sslen = 32;

		ss1 = smalloc(32);
		ss2 = smalloc(32);
		kbar = smalloc(32);
		pctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
		if (pctx == NULL || EVP_PKEY_encapsulate_init(pctx, NULL) <= 0 ||
		    EVP_PKEY_encapsulate(pctx, ct, &ctlen, ss1, &sslen) <= 0)
			die("encapsulate");
		EVP_PKEY_CTX_free(pctx);
		add_pat("ss", ss1, 32);
		total += scan("encapsulated", alg);
		pctx = EVP_PKEY_CTX_new_from_pkey(NULL, k2, NULL); /* the dup */
		if (pctx == NULL || EVP_PKEY_decapsulate_init(pctx, NULL) <= 0 ||
		    EVP_PKEY_decapsulate(pctx, ss2, &sslen, ct, ctlen) <= 0 ||
		    memcmp(ss1, ss2, 32) != 0)
			die("decapsulate");
		total += scan("decapsulated", alg);
		/* implicit rejection: K-bar = J(z || c') */
		ct[7] ^= 0x5a;
		if (!shake256(kbar, 32, priv + privlen - 32, 32, ct, ctlen, NULL, 0))
			die("J");
		if (EVP_PKEY_decapsulate(pctx, ss2, &sslen, ct, ctlen) <= 0 ||
		    memcmp(ss2, kbar, 32) != 0)
			die("decapsulate (rejection)");
		add_pat("K-bar", kbar, 32);
		EVP_PKEY_CTX_free(pctx);
		total += scan("decap (rejected ct)", alg);
	} else {
		static const unsigned char msg[] = "pq_key_scan message to be signed";
		static unsigned char sig[65536];
		size_t siglen = sizeof(sig);
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		int det = 1;
		OSSL_PARAM sp[2];

		sp[0] = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_DETERMINISTIC, &det);
		sp[1] = OSSL_PARAM_construct_end();
		if (fam == FAM_DSA) {
			/* rho' = H(K || rnd=0^32 || mu), mu = H(tr || 0 || 0 || M, 64) */
			unsigned char *mu = smalloc(64), *zero = smalloc(32),
				      *pre = smalloc(2 + sizeof(msg));

			rhop = smalloc(64);
			memcpy(pre + 2, msg, sizeof(msg));
			if (!shake256(mu, 64, priv + 64, 64, pre, 2 + sizeof(msg), NULL, 0) ||
			    !shake256(rhop, 64, priv + 32, 32, zero, 32, mu, 64))
				die("rho'");
			add_pat("rho'", rhop, 64);
		}
		if (md == NULL ||
		    EVP_DigestSignInit_ex(md, NULL, NULL, NULL, NULL, k2,
					  fam == FAM_DSA ? sp : NULL) <= 0 ||
		    EVP_DigestSign(md, sig, &siglen, msg, sizeof(msg)) <= 0)
			die("sign");
		EVP_MD_CTX_free(md);
		total += scan("signed (ctx freed)", alg);
		md = EVP_MD_CTX_new();
		if (md == NULL ||
		    EVP_DigestVerifyInit_ex(md, NULL, NULL, NULL, NULL, key, NULL) <= 0 ||
		    EVP_DigestVerify(md, sig, siglen, msg, sizeof(msg)) <= 0)
			die("verify");
		EVP_MD_CTX_free(md);
	}

	EVP_PKEY_free(k2);
	EVP_PKEY_free(key);
	total += scan("all keys freed", alg);
	return total;
}

int main(int argc, char **argv)
{
	static const char *all[] = {
		"ML-KEM-512",	      "ML-KEM-768",	    "ML-KEM-1024",
		"ML-DSA-44",	      "ML-DSA-65",	    "ML-DSA-87",
		"SLH-DSA-SHA2-128s",  "SLH-DSA-SHA2-128f",  "SLH-DSA-SHA2-192s",
		"SLH-DSA-SHA2-192f",  "SLH-DSA-SHA2-256s",  "SLH-DSA-SHA2-256f",
		"SLH-DSA-SHAKE-128s", "SLH-DSA-SHAKE-128f", "SLH-DSA-SHAKE-192s",
		"SLH-DSA-SHAKE-192f", "SLH-DSA-SHAKE-256s", "SLH-DSA-SHAKE-256f",
	};
	const char **algs = all;
	int nalgs = sizeof(all) / sizeof(all[0]), i, grand = 0;
	unsigned char *probe;
	char cmd[300];

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		argc--, argv++;
	}
	if (argc > 1) {
		algs = (const char **)argv + 1;
		nalgs = argc - 1;
	}
	if (CRYPTO_secure_malloc_init(SH_SIZE, 16) == 0)
		die("CRYPTO_secure_malloc_init");
	probe = OPENSSL_secure_malloc(16);
	{
		/* the secure heap is the mapping that holds |probe| */
		FILE *m = fopen("/proc/self/maps", "r");
		char line[512];
		unsigned long lo, hi;

		while (fgets(line, sizeof(line), m) != NULL)
			if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)probe >= lo &&
			    (uintptr_t)probe < hi) {
				sh_lo = lo;
				sh_hi = hi;
			}
		fclose(m);
	}
	OPENSSL_secure_free(probe);
	if (mkdtemp(tmpdir) == NULL)
		die("mkdtemp");
	printf("%s, secure heap %#lx-%#lx\n", OpenSSL_version(OPENSSL_VERSION),
	       (unsigned long)sh_lo, (unsigned long)sh_hi);
	for (i = 0; i < nalgs; i++) {
		const char *a = algs[i];
		int fam = strncmp(a, "ML-KEM", 6) == 0	 ? FAM_KEM
			  : strncmp(a, "ML-DSA", 6) == 0 ? FAM_DSA
							 : FAM_SLH;
		int t = run_alg(a, fam);

		printf("  %-18s total hits %d\n", a, t);
		grand += t;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	printf("TOTAL hits %d\n", grand);
	return 0;
}
