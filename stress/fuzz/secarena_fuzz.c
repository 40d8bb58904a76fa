// SPDX-License-Identifier: GPL-2.0
/*
 * secarena_fuzz: a seeded syscall fuzzer for /dev/secarena.
 *
 * The master forks worker processes; each runs a few threads that pick
 * random operations over a small table of arenas ("slots") shared by the
 * threads: open/close/dup, CONFIGURE/INFO/WIPE/unknown ioctls with good
 * and hostile arguments, mmap with random geometry, flags and protection,
 * munmap/mprotect/mremap/madvise over, inside and across an arena, data
 * touches, guard touches and fork children (in forked children only), and
 * self-inflicted exits and SIGKILLs. The master SIGKILLs workers at
 * random points and starts the next generation of each until the
 * operation budget is spent.
 *
 * Each slot keeps a model of its arena (geometry, state, owner, expected
 * byte of each data page). Where the contract in
 * Documentation/userspace-api/secarena.rst defines a result, the call is
 * checked against the model and a mismatch is a failure; elsewhere the
 * call only has to leave the kernel and the arena intact.
 *
 * Determinism: every thread draws from its own PRNG seeded from -s SEED,
 * the worker, its generation and the thread, so a failure (printed with
 * all four and the op index) replays with the same seed; the timing of
 * threads and kills is not replayed.
 *
 * Locking: ops that only use one slot hold the worker's maplock for
 * reading and that slot's mutex. Ops that can leave holes in address
 * ranges the worker owns (munmap, MAP_FIXED, mremap) or need a quiet
 * process (fork) hold maplock for writing, which excludes every other op,
 * so that a hole is refilled before anybody else can mmap into it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/mman.h>
#include <linux/secarena.h>

#define MAX_WORKERS	16
#define MAX_THREADS	8
#define NR_SLOTS	8
#define MAX_DATA	64	/* data pages of an arena we really map */
#define PAD_PAGES	8	/* reservation around FIXED arenas, per side */
#define SCRATCH_PAGES	8192	/* per thread, PROT_NONE: mremap targets */
#define MAX_PRINTED	40	/* failure lines printed; all are counted */
#define NR_ERRNO	134
#define TAG_UNKNOWN	0xff	/* page content unknown: do not verify */

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MAP_SYNC
#define MAP_SYNC	0x80000
#endif

/* A set of acceptable results: bit 0 is success, bit e is errno e. */
typedef unsigned __int128 eset_t;
#define E(e)	((eset_t)1 << (e))
#define OK	E(0)

enum check {
	CHK_ERRNO, CHK_INFO, CHK_DATA, CHK_GUARD, CHK_FORK, CHK_OUTSIDE,
	CHK_ACCT, CHK_DEATH, CHK_BUDGET, NR_CHECKS
};

static const char *const check_name[NR_CHECKS] = {
	"calls return what the contract says",
	"INFO reports the modelled state",
	"data reads back as written, zero when fresh or wiped",
	"guard touches in a child die with SIGSEGV at the address",
	"fork children get what their policy promises",
	"/proc/self/mem and process_vm_* refuse arena addresses",
	"VmPin equals the data pages mapped",
	"workers end only by plan (exit, self-kill, master SIGKILL)",
	"no operation overruns its time budget",
};

enum op {
	OP_OPEN, OP_CLOSE, OP_DUP, OP_CONFIGURE, OP_INFO, OP_WIPE, OP_BADIOCTL,
	OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MREMAP, OP_MADVISE, OP_TOUCH,
	OP_GUARD, OP_FORK, OP_OUTSIDE, OP_RACY, OP_MISC, OP_DIE, NR_OPS
};

static const char *const op_name[NR_OPS] = {
	"open", "close", "dup", "configure", "info", "wipe", "bad-ioctl",
	"mmap", "munmap", "mprotect", "mremap", "madvise", "touch",
	"guard", "fork", "outside", "racy", "misc", "die",
};

/* Relative weights of the ops, out of their sum. */
static const unsigned int op_weight[NR_OPS] = {
	[OP_OPEN] = 30, [OP_CLOSE] = 35, [OP_DUP] = 20, [OP_CONFIGURE] = 90,
	[OP_INFO] = 80, [OP_WIPE] = 30, [OP_BADIOCTL] = 40, [OP_MMAP] = 110,
	[OP_MUNMAP] = 45, [OP_MPROTECT] = 60, [OP_MREMAP] = 30,
	[OP_MADVISE] = 70, [OP_TOUCH] = 170, [OP_GUARD] = 22, [OP_FORK] = 22,
	[OP_OUTSIDE] = 25, [OP_RACY] = 40, [OP_MISC] = 25, [OP_DIE] = 1,
};

/* ---- state shared by master, workers and their children --------------- */

struct thread_watch {
	uint64_t op;		/* op index in progress */
	uint64_t start_ns;	/* 0 when between ops */
	int kind;
};

struct worker_info {
	pid_t pid;
	unsigned int gen;
	int planned;		/* its death is expected */
	uint64_t ops_done;	/* across generations; also the op index */
	uint64_t target;
	uint64_t kill_at;	/* master SIGKILLs it here; 0: never */
	struct thread_watch th[MAX_THREADS];
};

struct shared {
	uint64_t fails[NR_CHECKS];
	uint64_t op_count[NR_OPS];
	uint64_t master_kills, self_exits, self_kills, child_kills;
	uint64_t guard_touches, guard_faults, forks, bad_ioctl, bad_mmap;
	uint64_t bad_vma, capless_gens, generations;
	uint64_t errnos[NR_ERRNO + 1];
	uint64_t printed;
	struct worker_info w[MAX_WORKERS];
};

static struct shared *sh;

#define INC(x)		__atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)
#define ADD(x, n)	__atomic_fetch_add(&(x), (n), __ATOMIC_RELAXED)
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* ---- options and facts about the system -------------------------------- */

static uint64_t opt_seed = 0x5ec0a7e4a5ULL;
static uint64_t opt_ops = 20000;
static int opt_procs = 4;
static int opt_threads = 3;
static unsigned int opt_budget_ms = 30000;
static unsigned int opt_worker_s = 900;

static size_t pg;
static unsigned long max_arena_pages;
static int fixed_errno;		/* MAP_FIXED over part of an arena */
static struct utsname uts;

/* ---- PRNG -------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t derive(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t x = a;

	x ^= splitmix64(&x) + b;
	x ^= splitmix64(&x) + c;
	x ^= splitmix64(&x) + d;
	return splitmix64(&x) | 1;	/* xorshift state must not be 0 */
}

/* ---- per worker and per thread ------------------------------------------ */

enum slot_state { ST_FREE, ST_FRESH, ST_MAPPED, ST_SPENT };

struct slot {
	pthread_mutex_t lock;
	enum slot_state state;
	int fd[2];		/* -1: closed */
	int accmode;
	bool configured;	/* a CONFIGURE succeeded */
	bool huge;		/* configured beyond max_arena_pages */
	struct secarena_config cfg;	/* what INFO reports */
	/* while ST_MAPPED */
	unsigned char *base;
	size_t len;
	unsigned long nr;
	unsigned int guard;
	int prot;
	bool dontfork;
	unsigned char *resv;	/* PROT_NONE pads around it, or NULL */
	size_t resv_len;
	unsigned char tag[MAX_DATA];
};

struct worker {
	int idx;
	unsigned int gen;
	uint64_t seed;
	pthread_rwlock_t maplock;
	struct slot slot[NR_SLOTS];
	int mem_fd;
	bool capless;		/* no CAP_IPC_LOCK, small RLIMIT_MEMLOCK */
	unsigned long memlock_pages;
};

struct fz {
	struct worker *w;
	int tid;
	uint64_t rng;
	uint64_t op;		/* current op index (worker-wide) */
	int kind;
	unsigned char *scratch;	/* SCRATCH_PAGES of PROT_NONE */
	unsigned char *edge;	/* page RW, then page PROT_NONE */
	unsigned char *ro;	/* read-only page with a valid config */
};

static uint64_t rnd(struct fz *t)
{
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t below(struct fz *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

static bool chance(struct fz *t, unsigned int num, unsigned int den)
{
	return below(t, den) < num;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- reporting ---------------------------------------------------------- */

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";

	return n ? n : "E?";
}

static void eset_str(eset_t set, char *buf, size_t size)
{
	size_t n = 0;
	int e;

	buf[0] = '\0';
	for (e = 0; e < 128 && n + 16 < size; e++)
		if (set & E(e))
			n += snprintf(buf + n, size - n, "%s%s", n ? "|" : "",
				      ename(e));
}

/* write(2) only: also used in fork children and signal handlers. */
static void __attribute__((format(printf, 3, 4)))
fail(struct fz *t, enum check c, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	int n;

	INC(sh->fails[c]);
	if (INC(sh->printed) >= MAX_PRINTED)
		return;
	n = snprintf(msg, sizeof(msg),
		     "# FAIL [%s] seed=%" PRIu64 " worker=%d gen=%u thread=%d op=%" PRIu64 " (%s): ",
		     check_name[c], opt_seed, t->w->idx, t->w->gen, t->tid,
		     t->op, op_name[t->kind]);
	va_start(ap, fmt);
	n += vsnprintf(msg + n, sizeof(msg) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	msg[n++] = '\n';
	if (write(STDERR_FILENO, msg, n) < 0)
		return;
}

/* 0 on success, else errno; counted in the histogram. */
static int res(long r)
{
	int e = r < 0 ? errno : 0;

	INC(sh->errnos[e <= NR_ERRNO ? e : NR_ERRNO]);
	return e;
}

static bool expect_in(struct fz *t, enum check c, const char *what, int got,
		      eset_t want)
{
	char w[128];

	if (got < 128 && (want & E(got)))
		return true;
	eset_str(want, w, sizeof(w));
	fail(t, c, "%s: got %s, expected %s", what, ename(got), w);
	return false;
}

static bool expect(struct fz *t, const char *what, int got, eset_t want)
{
	return expect_in(t, CHK_ERRNO, what, got, want);
}

/* ---- small helpers ------------------------------------------------------- */

static bool page_is(const unsigned char *p, unsigned char v, size_t *bad)
{
	const volatile uint64_t *q = (const volatile uint64_t *)p;
	uint64_t pat = 0x0101010101010101ULL * v;
	size_t i;

	for (i = 0; i < pg / 8; i++) {
		if (q[i] != pat) {
			*bad = i * 8;
			return false;
		}
	}
	return true;
}

static unsigned char *data_page(const struct slot *s, unsigned long i)
{
	return s->base + (s->guard + i) * pg;
}

static bool readable(int prot)
{
	return prot & (PROT_READ | PROT_WRITE);	/* x86: W implies R */
}

static bool check_page(struct fz *t, struct slot *s, unsigned long i,
		       const char *when)
{
	size_t bad = 0;

	if (s->tag[i] == TAG_UNKNOWN || !readable(s->prot))
		return true;
	if (page_is(data_page(s, i), s->tag[i], &bad))
		return true;
	fail(t, CHK_DATA, "%s: data page %lu of %lu, byte %zu is 0x%02x, expected 0x%02x",
	     when, i, s->nr, bad, data_page(s, i)[bad], s->tag[i]);
	s->tag[i] = TAG_UNKNOWN;
	return false;
}

static void check_all(struct fz *t, struct slot *s, const char *when)
{
	unsigned long i;

	for (i = 0; i < s->nr; i++)
		check_page(t, s, i, when);
}

static int open_fd(const struct slot *s)
{
	return s->fd[0] >= 0 ? s->fd[0] : s->fd[1];
}

static int pick_fd(struct fz *t, const struct slot *s)
{
	if (s->fd[0] >= 0 && s->fd[1] >= 0)
		return s->fd[below(t, 2)];
	return open_fd(s);
}

static size_t arena_len(const struct slot *s)
{
	if (s->configured)
		return s->cfg.data_size + 2ULL * s->cfg.guard_pages * pg;
	return 0;
}

/* Put PROT_NONE back over [addr, addr+len): holes must not stay. */
static void refill(unsigned char *addr, size_t len)
{
	if (mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
		 MAP_NORESERVE, -1, 0) == MAP_FAILED) {
		perror("secarena_fuzz: refill");
		abort();
	}
}

static void *reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The arena is gone from this mm: drop its address range. */
static void forget_mapping(struct slot *s)
{
	if (s->resv)
		munmap(s->resv, s->resv_len);
	s->resv = NULL;
	s->base = NULL;
	s->state = ST_SPENT;
}

static void close_slot(struct slot *s)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (s->fd[i] >= 0)
			close(s->fd[i]);
		s->fd[i] = -1;
	}
}

/* Tear a slot down after its model went wrong, or at the end. */
static void retire(struct slot *s)
{
	if (s->state == ST_MAPPED) {
		munmap(s->base, s->len);
		if (s->resv)
			munmap(s->resv, s->resv_len);
	}
	close_slot(s);
	memset(&s->state, 0, sizeof(*s) - offsetof(struct slot, state));
	s->fd[0] = s->fd[1] = -1;
	s->state = ST_FREE;
}

static void maybe_free(struct slot *s)
{
	if (s->state != ST_MAPPED && open_fd(s) < 0)
		retire(s);
}

static long long vmpin_kb(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Under maplock for writing: nobody maps or unmaps meanwhile. */
static unsigned long pinned_pages(struct worker *w)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < NR_SLOTS; i++)
		if (w->slot[i].state == ST_MAPPED)
			sum += w->slot[i].nr;
	return sum;
}

static void check_vmpin(struct fz *t)
{
	long long kb = vmpin_kb();
	unsigned long want = pinned_pages(t->w);

	if (kb >= 0 && (unsigned long long)kb != want * (pg / 1024))
		fail(t, CHK_ACCT, "VmPin %lld kB, arenas map %lu data pages",
		     kb, want);
}

/* A page-aligned sub-range [a, b) of n pages that is not all of them. */
static void part_of(struct fz *t, unsigned long n, unsigned long *a,
		    unsigned long *b)
{
	*a = below(t, n);
	*b = *a + 1 + below(t, n - *a);
	if (*a == 0 && *b == n) {
		if (chance(t, 1, 2))
			*a = 1;
		else
			*b = n - 1;
	}
}

/* ---- ioctls ---------------------------------------------------------------- */

/* A pointer for an ioctl argument: 0 if usable, else the errno it gives. */
static void *hostile_ptr(struct fz *t, struct slot *s, size_t size, int *err)
{
	*err = EFAULT;
	switch (below(t, 6)) {
	case 0:
		return NULL;
	case 1:
		return (void *)1;
	case 2:
		return (void *)0xffff888000000000ULL;	/* kernel memory */
	case 3:
		return t->edge + pg - size / 2;		/* runs into PROT_NONE */
	case 4:
		return t->scratch + below(t, SCRATCH_PAGES) * pg;
	default:
		if (s->state == ST_MAPPED)		/* a guard page */
			return s->base + below(t, s->guard) * pg;
		return (void *)-4096L;
	}
}

static void model_configure(struct slot *s, const struct secarena_config *c)
{
	s->cfg = *c;
	s->configured = true;
	s->huge = (c->data_size / pg) > max_arena_pages ||
		  (c->data_size / pg) > MAX_DATA;
}

static bool config_valid(const struct secarena_config *c)
{
	if (c->reserved[0] || c->reserved[1] || !c->data_size ||
	    c->data_size % pg)
		return false;
	if (!c->guard_pages || c->guard_pages > SECARENA_GUARD_PAGES_MAX)
		return false;
	if (c->fork_policy > SECARENA_FORK_SHARED)
		return false;
	return c->data_size / pg + 2ULL * c->guard_pages <= 1ULL << 31;
}

static void good_config(struct fz *t, struct secarena_config *c)
{
	static const unsigned int guards[] = { 1, 1, 1, 2, 3, 4, 8, 1024 };

	memset(c, 0, sizeof(*c));
	c->data_size = (chance(t, 4, 5) ? 1 + below(t, 8) :
			1 + below(t, MAX_DATA)) * pg;
	c->guard_pages = guards[below(t, 8)];
	c->fork_policy = below(t, 3);
}

static void op_configure(struct fz *t, struct slot *s)
{
	struct secarena_config c, *arg = &c;
	int fd = pick_fd(t, s), err, ptr_err = 0;
	bool hostile = chance(t, 1, 2);
	eset_t want;

	good_config(t, &c);
	if (hostile) {
		INC(sh->bad_ioctl);
		switch (below(t, 12)) {
		case 0:
			c.data_size = 0;
			break;
		case 1:
			c.data_size += 1 + below(t, pg - 1);
			break;
		case 2:
			c.data_size = ~0ULL << below(t, 64);
			break;
		case 3:
			c.data_size = (1ULL << 31) * pg;	/* just over */
			break;
		case 4:
			/* exactly the limit: valid, too big to map */
			c.data_size = ((1ULL << 31) - 2 * c.guard_pages) * pg;
			break;
		case 5:
			c.guard_pages = 0;
			break;
		case 6:
			c.guard_pages = SECARENA_GUARD_PAGES_MAX + 1 +
					below(t, 1U << 31);
			break;
		case 7:
			c.fork_policy = 3 + below(t, 1U << 31);
			break;
		case 8:
			c.reserved[below(t, 2)] = 1ULL << below(t, 64);
			break;
		case 9:
			c.data_size = rnd(t);
			c.guard_pages = rnd(t);
			c.fork_policy = below(t, 4);
			break;
		case 10:
			arg = hostile_ptr(t, s, sizeof(c), &ptr_err);
			break;
		default:	/* a read-only page holding a valid config */
			arg = (void *)t->ro;
			break;
		}
	}
	err = res(ioctl(fd, SECARENA_IOC_CONFIGURE, arg));
	if (ptr_err) {
		want = E(ptr_err);
	} else {
		if (arg == (void *)t->ro)
			c = *(struct secarena_config *)t->ro;
		if (!config_valid(&c))
			want = E(EINVAL);
		else if (s->state != ST_FRESH)
			want = E(EBUSY);
		else
			want = OK;
	}
	if (!expect(t, "CONFIGURE", err, want)) {
		retire(s);
		return;
	}
	if (!err)
		model_configure(s, &c);
}

static void check_info(struct fz *t, struct slot *s,
		       const struct secarena_info *in)
{
	bool live = s->state == ST_MAPPED;
	bool spent = s->state == ST_SPENT;
	uint32_t flags = (s->configured ? SECARENA_INFO_CONFIGURED : 0) |
			 (live ? SECARENA_INFO_MAPPED :
			  spent ? SECARENA_INFO_SPENT : 0);

	if (in->data_size != s->cfg.data_size ||
	    in->guard_pages != s->cfg.guard_pages ||
	    in->fork_policy != s->cfg.fork_policy ||
	    in->data_pages != (live ? s->nr : 0) || in->flags != flags ||
	    in->reserved0 || in->reserved[0] || in->reserved[1])
		fail(t, CHK_INFO,
		     "got size=%llu guard=%u policy=%u pages=%llu flags=%#x rsv=%#x/%llx/%llx, model size=%llu guard=%u policy=%u pages=%lu flags=%#x",
		     (unsigned long long)in->data_size, in->guard_pages,
		     in->fork_policy, (unsigned long long)in->data_pages,
		     in->flags, in->reserved0,
		     (unsigned long long)in->reserved[0],
		     (unsigned long long)in->reserved[1],
		     (unsigned long long)s->cfg.data_size, s->cfg.guard_pages,
		     s->cfg.fork_policy, live ? s->nr : 0, flags);
}

static void op_info(struct fz *t, struct slot *s)
{
	struct secarena_info in;
	void *arg = &in;
	int fd = pick_fd(t, s), err, ptr_err = 0;
	unsigned long pgi = 0;
	bool into_data = false;

	memset(&in, 0xa5, sizeof(in));	/* the kernel must clear reserved */
	if (chance(t, 1, 4)) {
		INC(sh->bad_ioctl);
		if (s->state == ST_MAPPED && chance(t, 1, 3)) {
			/* Into the arena's own data: fine when writable. */
			pgi = below(t, s->nr);
			arg = data_page(s, pgi) + below(t, pg - sizeof(in));
			into_data = true;
			ptr_err = (s->prot & PROT_WRITE) ? 0 : EFAULT;
		} else {
			arg = hostile_ptr(t, s, sizeof(in), &ptr_err);
		}
	}
	err = res(ioctl(fd, SECARENA_IOC_INFO, arg));
	if (!expect(t, "INFO", err, ptr_err ? E(ptr_err) : OK)) {
		retire(s);
		return;
	}
	if (into_data) {
		if (!err) {
			memcpy(&in, arg, sizeof(in));
			s->tag[pgi] = TAG_UNKNOWN;
			check_info(t, s, &in);
		}
		return;
	}
	if (!err)
		check_info(t, s, &in);
}

static void op_wipe(struct fz *t, struct slot *s)
{
	int err = res(ioctl(pick_fd(t, s), SECARENA_IOC_WIPE));

	if (!expect(t, "WIPE", err, OK)) {
		retire(s);
		return;
	}
	if (!err && s->state == ST_MAPPED) {
		memset(s->tag, 0, sizeof(s->tag));
		check_all(t, s, "after WIPE");
	}
}

/* Command numbers the VFS answers before the driver sees them. */
static bool vfs_cmd(unsigned int cmd)
{
	unsigned int type = (cmd >> 8) & 0xff;

	return type == 0 || type == 'T' || type == 'X' || type == 'f' ||
	       type == 0x94 || type == 0x15;
}

static void op_badioctl(struct fz *t, struct slot *s)
{
	unsigned int cmd;
	char buf[256];
	int err;

	INC(sh->bad_ioctl);
	memset(buf, 0, sizeof(buf));
	do {
		switch (below(t, 4)) {
		case 0:	/* our magic, another number */
			cmd = _IOC(below(t, 4), SECARENA_IOC_MAGIC,
				   4 + below(t, 252), below(t, 256));
			break;
		case 1:	/* our numbers, wrong direction or size */
			cmd = _IOC(below(t, 4), SECARENA_IOC_MAGIC,
				   1 + below(t, 3), below(t, 64));
			if (cmd == SECARENA_IOC_CONFIGURE ||
			    cmd == SECARENA_IOC_INFO || cmd == SECARENA_IOC_WIPE)
				cmd ^= 1U << 16;
			break;
		case 2:
			cmd = (unsigned int)rnd(t);
			break;
		default:
			cmd = _IOC(below(t, 4), SECARENA_IOC_MAGIC, 0,
				   below(t, 256));
			break;
		}
	} while (vfs_cmd(cmd) || cmd == SECARENA_IOC_CONFIGURE ||
		 cmd == SECARENA_IOC_INFO || cmd == SECARENA_IOC_WIPE);
	err = res(ioctl(pick_fd(t, s), cmd, buf));
	expect(t, "unknown ioctl", err, E(ENOTTY));
}

/* ---- mmap --------------------------------------------------------------- */

struct mmap_try {
	size_t len;
	int prot, flags;
	off_t off;
	unsigned char *addr;
	int fd;
	eset_t vfs;		/* errnos the VFS may give before the driver */
	bool resv;		/* addr is inside a fresh reservation */
};

/* What the driver answers (0: it maps), by its order of checks. */
static int driver_result(struct slot *s, const struct mmap_try *m)
{
	unsigned long pages = (m->len + pg - 1) / pg, nr;

	if ((m->flags & MAP_TYPE) == MAP_PRIVATE || m->off)
		return EINVAL;
	if (m->prot & PROT_EXEC)
		return EPERM;
	if (s->state != ST_FRESH)
		return EBUSY;
	if (s->configured) {
		nr = s->cfg.data_size / pg;
		if (pages != nr + 2 * s->cfg.guard_pages)
			return EINVAL;
	} else {
		if (pages < 3)
			return EINVAL;
		nr = pages - 2;
	}
	if (nr > max_arena_pages)
		return ENOMEM;
	return 0;
}

static int memlock_result(struct worker *w, unsigned long nr)
{
	if (w->capless && pinned_pages(w) + nr > w->memlock_pages)
		return EAGAIN;
	return 0;
}

static void record_mapping(struct fz *t, struct slot *s, unsigned char *p,
			   const struct mmap_try *m, unsigned char *resv,
			   size_t resv_len)
{
	s->state = ST_MAPPED;
	s->base = p;
	s->len = (m->len + pg - 1) / pg * pg;
	s->prot = m->prot;
	s->dontfork = false;
	s->resv = resv;
	s->resv_len = resv_len;
	if (!s->configured) {
		s->cfg.data_size = s->len - 2 * pg;
		s->cfg.guard_pages = 1;
		s->cfg.fork_policy = SECARENA_FORK_PRIVATE;
	}
	s->guard = s->cfg.guard_pages;
	s->nr = s->cfg.data_size / pg;
	memset(s->tag, 0, sizeof(s->tag));
	if (s->nr > MAX_DATA) {
		fail(t, CHK_ERRNO, "mapped %lu data pages, more than asked", s->nr);
		retire(s);
		return;
	}
	check_all(t, s, "fresh mapping");
}

static void op_mmap(struct fz *t, struct slot *s, bool excl)
{
	static const int bad_types[] = { 0, 4, 5, 7, 9, 15 };
	struct mmap_try m = { .prot = PROT_READ | PROT_WRITE,
			      .flags = MAP_SHARED, .fd = pick_fd(t, s) };
	unsigned char *p, *resv = NULL;
	size_t resv_len = 0;
	bool hostile = chance(t, 2, 5);
	int err, drv, faults, i;
	eset_t want;

	m.len = arena_len(s);
	if (!s->configured)
		m.len = (3 + below(t, 16)) * pg;
	if (chance(t, 1, 4))
		m.len -= below(t, pg);		/* the kernel rounds up */
	if (chance(t, 1, 6))
		m.prot = chance(t, 1, 2) ? PROT_READ : PROT_NONE;
	if (chance(t, 1, 4))
		m.flags = MAP_SHARED_VALIDATE;
	if (chance(t, 1, 8))
		m.flags |= chance(t, 1, 2) ? MAP_POPULATE : MAP_LOCKED;
	if (s->accmode == O_RDONLY && chance(t, 3, 4))
		m.prot &= ~PROT_WRITE;

	faults = hostile ? 1 + below(t, 2) : 0;
	if (hostile)
		INC(sh->bad_mmap);
	for (i = 0; i < faults; i++) {
		switch (below(t, 13)) {
		case 0:
			m.flags = (m.flags & ~MAP_TYPE) | MAP_PRIVATE;
			break;
		case 1:	/* no type, or a type that does not exist */
			m.flags &= ~MAP_TYPE;
			m.flags |= bad_types[below(t, 6)];
			m.vfs |= E(EINVAL);
			break;
		case 2:
			m.off = (1 + below(t, 64)) * pg;
			break;
		case 3:
			m.off = 1 + below(t, pg - 1);
			m.vfs |= E(EINVAL);
			break;
		case 4:
			m.off = (off_t)(~0ULL << (12 + below(t, 50))) & ~(off_t)(pg - 1);
			m.vfs |= E(EINVAL) | E(EOVERFLOW);
			break;
		case 5:
			m.len += (1 + below(t, 4)) * pg;
			break;
		case 6:
			if (m.len > 2 * pg)
				m.len -= (1 + below(t, 2)) * pg;
			break;
		case 7:
			m.len = chance(t, 1, 2) ? 0 : (size_t)-1 - below(t, pg);
			break;
		case 8:
			m.prot |= PROT_EXEC;
			break;
		case 9:
			m.flags |= MAP_HUGETLB;
			m.vfs |= E(EINVAL);
			break;
		case 10:
			m.flags = (m.flags & ~MAP_TYPE) | MAP_SHARED_VALIDATE |
				  (chance(t, 1, 2) ? MAP_SYNC : 0x400000);
			m.vfs |= E(EOPNOTSUPP);
			break;
		case 11:
			m.flags |= MAP_GROWSDOWN;
			m.vfs |= E(EINVAL);
			break;
		default:
			m.flags |= MAP_FIXED_NOREPLACE;
			m.addr = t->scratch;
			m.vfs |= E(EEXIST) | E(ENOMEM);	/* ENOMEM: too long */
			break;
		}
	}
	/* After all faults: a later one may have wrapped the length. */
	if (m.len == 0)
		m.vfs |= E(EINVAL);
	else if (m.len > (1UL << 47))
		m.vfs |= E(ENOMEM);		/* beyond TASK_SIZE */
	/* A writable private mapping is charged to overcommit first. */
	if ((m.flags & MAP_TYPE) == MAP_PRIVATE && m.len > (256UL << 20))
		m.vfs |= E(ENOMEM);
	if (m.prot & PROT_EXEC)		/* /dev may be noexec: the VFS says so */
		m.vfs |= E(EPERM);
	if ((m.flags & MAP_LOCKED) && t->w->capless &&
	    (m.len + pg - 1) / pg > t->w->memlock_pages)
		m.vfs |= E(EAGAIN);	/* mlock_future_check() */
	if (s->accmode == O_WRONLY)
		m.vfs |= E(EACCES);
	else if (s->accmode == O_RDONLY && (m.prot & PROT_WRITE) &&
		 (m.flags & MAP_TYPE) != MAP_PRIVATE)
		m.vfs |= E(EACCES);

	/* A FIXED arena inside PROT_NONE pads, so that ops may cross it. */
	if (excl && !m.addr && m.len > 0 && m.len < (64UL << 20) &&
	    chance(t, 1, 2)) {
		resv_len = (m.len + pg - 1) / pg * pg + 2 * PAD_PAGES * pg;
		resv = reserve(resv_len);
		if (resv) {
			m.addr = resv + PAD_PAGES * pg;
			m.flags |= MAP_FIXED;
			m.resv = true;
		}
	}

	drv = driver_result(s, &m);
	if (!drv)
		drv = memlock_result(t->w, (m.len + pg - 1) / pg - 2 *
				     (s->configured ? s->cfg.guard_pages : 1));
	want = m.vfs ? m.vfs | (drv ? E(drv) : 0) : E(drv);

	p = mmap(m.addr, m.len, m.prot, m.flags, m.fd, m.off);
	err = res(p == MAP_FAILED ? -1 : 0);
	if (!expect(t, "mmap", err, want)) {
		fail(t, CHK_ERRNO, "  mmap(%p, %zu, prot=%#x, flags=%#x, off=%lld) slot: state=%d cfg=%d size=%llu guard=%u acc=%d",
		     m.addr, m.len, m.prot, m.flags, (long long)m.off,
		     s->state, s->configured,
		     (unsigned long long)s->cfg.data_size, s->cfg.guard_pages,
		     s->accmode);
		if (!err)
			munmap(p, m.len);
		if (m.resv)
			munmap(resv, resv_len);
		retire(s);
		return;
	}
	if (err) {
		if (m.resv) {
			refill(m.addr, m.len);	/* MAP_FIXED may leave a hole */
			munmap(resv, resv_len);
		}
		return;
	}
	record_mapping(t, s, p, &m, resv, resv_len);
}

/* MAP_FIXED over part of an arena (or its pads): refused, arena intact. */
static void op_fixed_over(struct fz *t, struct slot *s)
{
	unsigned long total = s->len / pg, a, b;
	unsigned char *p, *addr;
	size_t len;
	int fd = -1, flags = MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, err;

	INC(sh->bad_mmap);
	part_of(t, total, &a, &b);
	addr = s->base + a * pg;
	len = (b - a) * pg;
	if (s->resv && chance(t, 1, 3)) {
		/* Start in the leading pad, end inside the arena. */
		addr = s->base - (1 + below(t, PAD_PAGES)) * pg;
		len = s->base + b * pg - addr;
		if (b == total)
			len -= pg;
	}
	if (chance(t, 1, 3)) {
		/* The device itself, on a new file: refused before it. */
		fd = open(SECARENA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			flags = MAP_FIXED | MAP_SHARED;
	}
	p = mmap(addr, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	err = res(p == MAP_FAILED ? -1 : 0);
	if (fd >= 0)
		close(fd);
	if (!expect(t, "MAP_FIXED over part of an arena", err,
		    E(fixed_errno))) {
		fail(t, CHK_ERRNO, "  arena %p+%zu, fixed %p+%zu", s->base,
		     s->len, addr, len);
		if (!err)
			munmap(p, len);
		retire(s);
		return;
	}
	check_all(t, s, "after refused MAP_FIXED");
}

/* ---- munmap, mprotect, mremap, madvise ------------------------------------ */

/*
 * A range over the mapping: whole (kind 0), part (1), or across into the
 * pads (2, only with a reservation). *whole says it covers the arena.
 */
static void vma_range(struct fz *t, struct slot *s, int kind,
		      unsigned char **addr, size_t *len, bool *whole)
{
	unsigned long total = s->len / pg, a, b, lo, hi;

	*whole = false;
	if (kind == 0) {
		*addr = s->base;
		*len = s->len;
		*whole = true;
		return;
	}
	if (kind == 1 || !s->resv) {
		part_of(t, total, &a, &b);
		*addr = s->base + a * pg;
		*len = (b - a) * pg;
		return;
	}
	INC(sh->bad_vma);
	lo = below(t, PAD_PAGES + 1);		/* pages before the arena */
	hi = below(t, PAD_PAGES + 1);		/* pages after it */
	if (chance(t, 1, 2) || (!lo && !hi)) {
		/* Across one end only: a partial arena. */
		part_of(t, total, &a, &b);
		if (chance(t, 1, 2)) {
			*addr = s->base - lo * pg;
			*len = lo * pg + b * pg;
			*whole = lo * pg + b * pg >= s->len + lo * pg;
		} else {
			*addr = s->base + a * pg;
			*len = (total - a + hi) * pg;
			*whole = a == 0;
		}
		return;
	}
	*addr = s->base - lo * pg;
	*len = s->len + (lo + hi) * pg;
	*whole = true;
}

static void op_munmap(struct fz *t, struct slot *s)
{
	unsigned char *addr;
	size_t len;
	bool whole;
	int kind = below(t, 4), err;
	eset_t want;

	if (kind == 3) {
		/* Hostile: unaligned start, or zero length. */
		INC(sh->bad_vma);
		if (chance(t, 1, 2))
			err = res(munmap(s->base + 1 + below(t, pg - 1), pg));
		else
			err = res(munmap(s->base, 0));
		expect(t, "munmap unaligned/empty", err, E(EINVAL));
		return;
	}
	if (kind == 1)
		INC(sh->bad_vma);
	vma_range(t, s, kind, &addr, &len, &whole);
	if (chance(t, 1, 4) && len > pg)
		len -= below(t, pg);		/* rounded up again */
	want = whole ? OK : E(EINVAL);
	err = res(munmap(addr, len));
	if (!expect(t, "munmap", err, want)) {
		fail(t, CHK_ERRNO, "  arena %p+%zu, munmap %p+%zu", s->base,
		     s->len, addr, len);
		retire(s);
		return;
	}
	if (err) {
		check_all(t, s, "after refused munmap");
		return;
	}
	/* The arena is gone; the pads may have holes now. */
	if (s->resv)
		refill(s->resv, s->resv_len);
	forget_mapping(s);
	maybe_free(s);
}

static void op_mprotect(struct fz *t, struct slot *s)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ,
		PROT_NONE, PROT_WRITE, PROT_EXEC, PROT_READ | PROT_EXEC,
		PROT_READ | PROT_WRITE | PROT_EXEC, 0x10, PROT_GROWSDOWN | PROT_READ,
	};
	int prot = prots[below(t, 10)], kind = below(t, 3), err;
	unsigned char *addr;
	size_t len;
	bool whole;
	eset_t want;

	if (kind)
		INC(sh->bad_vma);
	vma_range(t, s, kind, &addr, &len, &whole);
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
		want = E(EINVAL);
	else if (prot & PROT_EXEC)
		want = E(EACCES);
	else if ((prot & PROT_WRITE) && s->accmode == O_RDONLY)
		want = E(EACCES);
	else if (whole || prot == s->prot)
		want = OK;
	else
		want = E(EINVAL);
	err = res(mprotect(addr, len, prot));
	if (!expect(t, "mprotect", err, want)) {
		fail(t, CHK_ERRNO, "  arena %p+%zu prot %#x, mprotect %p+%zu %#x",
		     s->base, s->len, s->prot, addr, len, prot);
		retire(s);
		return;
	}
	if (!err)
		s->prot = prot;
	check_all(t, s, "after mprotect");
}

static void op_mremap(struct fz *t, struct slot *s)
{
	unsigned long total = s->len / pg, a, b;
	unsigned char *addr = s->base, *dst = NULL, *p;
	size_t old = s->len, new;
	int flags = 0, err, e;

	INC(sh->bad_vma);
	if (chance(t, 1, 3)) {
		part_of(t, total, &a, &b);
		addr = s->base + a * pg;
		old = (b - a) * pg;
	}
	if (chance(t, 1, 10))
		old = 0;	/* "duplicate" a shared mapping */
	switch (below(t, 4)) {
	case 0:
		new = old + (1 + below(t, 8)) * pg;
		break;
	case 1:
		new = old > pg ? old - (1 + below(t, old / pg - 1)) * pg : old;
		break;
	default:
		new = old;
		break;
	}
	switch (below(t, 5)) {
	case 0:
		flags = MREMAP_MAYMOVE;
		break;
	case 1:
	case 2:
		flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		dst = t->scratch + below(t, SCRATCH_PAGES / 2) * pg;
		break;
	case 3:
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
		break;
	default:
		break;
	}
	if (chance(t, 1, 16))
		flags |= 1 << (3 + below(t, 8));	/* unknown flag */

	/* Success only for the no-op: same length, staying where it is. */
	if ((flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP)) ||
	    ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE)) || !new)
		e = EINVAL;
	else if ((flags & MREMAP_DONTUNMAP) && old != new)
		e = EINVAL;
	else if (old == new && !(flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)))
		e = 0;
	else if (new > old)
		e = EFAULT;
	else
		e = EINVAL;

	p = mremap(addr, old, new, flags, dst);
	err = res(p == MAP_FAILED ? -1 : 0);
	if (dst && new)
		refill(dst, new);	/* MREMAP_FIXED unmaps the target */
	if (!expect(t, "mremap", err, E(e)) || (!err && p != addr)) {
		fail(t, CHK_ERRNO, "  arena %p+%zu, mremap(%p, %zu, %zu, %#x, %p) = %p",
		     s->base, s->len, addr, old, new, flags, dst, p);
		if (!err && p != addr)
			munmap(p, new);
		retire(s);
		return;
	}
	check_all(t, s, "after mremap");
}

static void op_madvise(struct fz *t, struct slot *s)
{
	static const int advs[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_DONTNEED, MADV_FREE, MADV_REMOVE,
		MADV_DONTFORK, MADV_DOFORK, MADV_MERGEABLE, MADV_UNMERGEABLE,
		MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_DODUMP,
		MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_KEEPONFORK, MADV_COLD,
		MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
		MADV_DONTNEED_LOCKED, MADV_COLLAPSE, -1,
	};
	int adv = advs[below(t, sizeof(advs) / sizeof(advs[0]))];
	int kind = below(t, 3), err;
	unsigned char *addr;
	size_t len;
	bool whole;
	eset_t want = ~(eset_t)0;	/* most advice is undefined here */

	if (adv == -1) {
		/* Random advice; never hwpoison or soft-offline (100, 101). */
		do {
			adv = (int)rnd(t);
		} while (adv == 100 || adv == 101);
		INC(sh->bad_vma);
	}
	if (kind)
		INC(sh->bad_vma);
	vma_range(t, s, kind, &addr, &len, &whole);
	/* Inside the arena only: across, the pads answer too. */
	if (kind != 2 || !s->resv) {
		switch (adv) {
		case MADV_DONTNEED:	/* VM_PFNMAP: no LRU advice */
		case MADV_DODUMP:
		case MADV_DOFORK:
		case MADV_WIPEONFORK:
			want = E(EINVAL);
			break;
		case MADV_KEEPONFORK:
			if (whole)
				want = OK;
			break;
		}
	}
	err = res(madvise(addr, len, adv));
	if (!expect(t, "madvise", err, want)) {
		fail(t, CHK_ERRNO, "  arena %p+%zu, madvise(%p, %zu, %d)",
		     s->base, s->len, addr, len, adv);
		retire(s);
		return;
	}
	if (!err && adv == MADV_DONTFORK && whole)
		s->dontfork = true;
	check_all(t, s, "after madvise");
}

/* mlock, msync, mincore: undefined results, the arena must survive. */
static void op_misc(struct fz *t, struct slot *s)
{
	static const int syncs[] = { MS_SYNC, MS_ASYNC, MS_INVALIDATE,
				     MS_SYNC | MS_INVALIDATE };
	unsigned char vec[2 * SECARENA_GUARD_PAGES_MAX + MAX_DATA + 1];
	unsigned char *addr;
	size_t len;
	bool whole;

	vma_range(t, s, below(t, 2), &addr, &len, &whole);
	switch (below(t, 5)) {
	case 0:
		res(mlock(addr, len));
		break;
	case 1:
		res(munlock(addr, len));
		break;
	case 2:
		res(msync(addr, len, syncs[below(t, 4)]));
		break;
	case 3:
		res(mlock2(addr, len, MLOCK_ONFAULT));
		break;
	default:
		if (len / pg <= sizeof(vec))
			expect(t, "mincore", res(mincore(addr, len, vec)), OK);
		break;
	}
	check_all(t, s, "after mlock/msync/mincore");
}

/* ---- data, outside access ------------------------------------------------- */

static void op_touch(struct fz *t, struct slot *s)
{
	int n = 1 + below(t, 4), k;
	unsigned long i;

	if (chance(t, 1, 16)) {
		check_all(t, s, "full check");
		return;
	}
	for (k = 0; k < n; k++) {
		i = below(t, s->nr);
		check_page(t, s, i, "touch");
		if ((s->prot & PROT_WRITE) && chance(t, 2, 3)) {
			s->tag[i] = 1 + below(t, 254);
			memset(data_page(s, i), s->tag[i], pg);
			check_page(t, s, i, "just written");
		}
	}
}

static void op_outside(struct fz *t, struct slot *s)
{
	unsigned char buf[64];
	unsigned long i = below(t, s->nr);
	unsigned char *a = data_page(s, i) + below(t, pg - sizeof(buf));
	struct iovec local = { buf, sizeof(buf) }, remote = { a, sizeof(buf) };
	int err;

	memset(buf, s->tag[i], sizeof(buf));
	switch (below(t, 4)) {
	case 0:
		err = res(pread(t->w->mem_fd, buf, sizeof(buf), (off_t)a));
		expect_in(t, CHK_OUTSIDE, "read /proc/self/mem", err, E(EIO));
		break;
	case 1:
		err = res(pwrite(t->w->mem_fd, buf, sizeof(buf), (off_t)a));
		expect_in(t, CHK_OUTSIDE, "write /proc/self/mem", err, E(EIO));
		break;
	case 2:
		err = res(process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
		expect_in(t, CHK_OUTSIDE, "process_vm_readv", err, E(EFAULT));
		break;
	default:
		err = res(process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
		expect_in(t, CHK_OUTSIDE, "process_vm_writev", err, E(EFAULT));
		break;
	}
	check_page(t, s, i, "after outside access");
}

/* ---- children: guard touches and fork policies ----------------------------- */

static struct fz *child_t;	/* valid in a child only */
static volatile unsigned char *child_addr;	/* NULL: no fault expected */
static int child_code;

/* Check the fault, then die of it all the same. */
static void child_sig(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!child_addr)
		fail(child_t, CHK_FORK, "fork child got signal %d at %p code %d",
		     sig, si->si_addr, si->si_code);
	else if (si->si_addr != (void *)child_addr || si->si_code != child_code)
		fail(child_t, CHK_GUARD, "signal %d at %p code %d, expected at %p code %d",
		     sig, si->si_addr, si->si_code, (void *)child_addr,
		     child_code);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Every child: dies with the worker, never outlives a few seconds. */
static void child_setup(struct fz *t)
{
	struct sigaction sa = { .sa_sigaction = child_sig,
				.sa_flags = SA_SIGINFO };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 0);	/* no core dumps of our deaths */
	alarm(10);
	child_t = t;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

static void op_guard(struct fz *t, struct slot *s)
{
	unsigned long gp = below(t, s->guard);
	bool write = chance(t, 1, 2), in_child_vma, allowed;
	volatile unsigned char *a;
	int status, policy = s->dontfork ? SECARENA_FORK_NONE : s->cfg.fork_policy;
	pid_t pid;

	if (chance(t, 1, 2))
		gp += s->guard + s->nr;		/* the trailing guard */
	a = s->base + gp * pg + below(t, pg);
	in_child_vma = policy != SECARENA_FORK_NONE;
	allowed = write ? (s->prot & PROT_WRITE) : readable(s->prot);
	INC(sh->guard_touches);
	pid = fork();
	if (pid < 0) {
		res(-1);
		return;
	}
	if (!pid) {
		child_setup(t);
		child_addr = a;
		child_code = (in_child_vma && !allowed) ? SEGV_ACCERR :
			     SEGV_MAPERR;
		if (write)
			*a = 0x5a;
		else
			(void)*a;
		fail(t, CHK_GUARD, "guard page %lu of arena %p+%zu is %s",
		     gp, s->base, s->len, write ? "writable" : "readable");
		_exit(3);
	}
	if (waitpid(pid, &status, 0) != pid)
		return;
	if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV ||
				    WTERMSIG(status) == SIGBUS)) {
		INC(sh->guard_faults);
		if (WTERMSIG(status) == SIGBUS)
			fail(t, CHK_GUARD, "guard touch raised SIGBUS, not SIGSEGV (policy %d)",
			     policy);
	} else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 3)) {
		fail(t, CHK_GUARD, "guard child ended with status %#x", status);
	}
	check_all(t, s, "after guard child");
}

enum child_end { END_EXIT, END_KILL_READY, END_KILL_NOW };

static void child_report(int pipefd, char c)
{
	if (pipefd >= 0 && write(pipefd, &c, 1) != 1)
		_exit(5);
}

/* In the child: what the policy promises about the inherited arena. */
static void fork_child(struct fz *t, struct slot *s, int policy,
		       enum child_end end, unsigned long wpage,
		       unsigned char wtag, int pipefd)
{
	unsigned char vec[1];
	unsigned long i;
	int fd = open_fd(s), err;
	void *p;

	child_setup(t);
	if (s->state == ST_MAPPED) {
		err = mincore(data_page(s, 0), pg, vec) ? errno : 0;
		if (policy == SECARENA_FORK_NONE) {
			if (err != ENOMEM)
				fail(t, CHK_FORK, "NONE child still maps the arena (mincore %s)",
				     ename(err));
		} else {
			if (err)
				fail(t, CHK_FORK, "policy %d child lost the arena (mincore %s)",
				     policy, ename(err));
			check_all(t, s, "fork child");
			if (policy == SECARENA_FORK_PRIVATE &&
			    (s->prot & PROT_WRITE)) {
				for (i = 0; i < s->nr; i++) {
					s->tag[i] = 0xc0 | (i & 0x3f);
					memset(data_page(s, i), s->tag[i], pg);
				}
				check_all(t, s, "fork child's own writes");
			}
			if (policy == SECARENA_FORK_SHARED && end == END_EXIT &&
			    (s->prot & PROT_WRITE)) {
				memset(data_page(s, wpage), wtag, pg);
			}
		}
	}
	if (fd >= 0) {
		/* The file travelled: the opener owns it, whatever its state. */
		struct secarena_config c = {
			.data_size = pg, .guard_pages = 1,
			.fork_policy = SECARENA_FORK_SHARED,
		};

		err = res(ioctl(fd, SECARENA_IOC_WIPE));
		expect_in(t, CHK_FORK, "WIPE in a child", err, E(EPERM));
		err = res(ioctl(fd, SECARENA_IOC_CONFIGURE, &c));
		expect_in(t, CHK_FORK, "CONFIGURE in a child", err, E(EPERM));
		if (s->accmode != O_WRONLY) {
			p = mmap(NULL, 3 * pg, PROT_READ, MAP_SHARED, fd, 0);
			err = res(p == MAP_FAILED ? -1 : 0);
			expect_in(t, CHK_FORK, "mmap of the opener's arena in a child",
				  err, E(EPERM));
		}
	}
	child_report(pipefd, 'R');
	if (end == END_EXIT)
		_exit(0);
	for (;;) {
		if (s->state == ST_MAPPED && policy != SECARENA_FORK_NONE)
			check_all(t, s, "fork child, waiting to be killed");
		sched_yield();
	}
}

static void op_fork(struct fz *t, struct slot *s)
{
	int policy = s->dontfork ? SECARENA_FORK_NONE : s->cfg.fork_policy;
	enum child_end end = below(t, 3);
	unsigned long wpage = s->nr ? below(t, s->nr) : 0;
	unsigned char wtag = 1 + below(t, 254), c;
	int pipefd[2], status;
	pid_t pid;

	if (policy == SECARENA_FORK_SHARED && end != END_EXIT)
		wpage = ~0UL;	/* a killed child must not write */
	if (pipe2(pipefd, O_CLOEXEC))
		return;
	INC(sh->forks);
	pid = fork();
	if (pid < 0) {
		res(-1);
		close(pipefd[0]);
		close(pipefd[1]);
		return;
	}
	if (!pid) {
		close(pipefd[0]);
		fork_child(t, s, policy, end, wpage, wtag, pipefd[1]);
		_exit(0);
	}
	close(pipefd[1]);
	/* 'R' once the child's checks are done. */
	while (end != END_KILL_NOW && read(pipefd[0], &c, 1) == 1)
		if (c == 'R')
			break;
	if (end == END_KILL_NOW || end == END_KILL_READY) {
		kill(pid, SIGKILL);
		INC(sh->child_kills);
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return;
	if (end == END_EXIT ? !(WIFEXITED(status) && !WEXITSTATUS(status)) :
	    !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) &&
	    !(WIFEXITED(status) && !WEXITSTATUS(status)))
		fail(t, CHK_FORK, "fork child (policy %d) ended with status %#x",
		     policy, status);
	if (s->state == ST_MAPPED) {
		if (policy == SECARENA_FORK_SHARED && end == END_EXIT &&
		    (s->prot & PROT_WRITE) && wpage != ~0UL)
			s->tag[wpage] = wtag;
		check_all(t, s, "parent after fork child");
	}
}

/* Unlocked ioctls on whatever a slot's fd is now: only no crash counts. */
static void op_racy(struct fz *t)
{
	struct slot *s = &t->w->slot[below(t, NR_SLOTS)];
	int fd = __atomic_load_n(&s->fd[0], __ATOMIC_RELAXED);
	struct secarena_config c = { .data_size = pg, .guard_pages = 0 };
	struct secarena_info in;
	int err, e = 0;

	if (fd < 0)
		return;
	switch (below(t, 3)) {
	case 0:
		err = res(ioctl(fd, SECARENA_IOC_INFO, &in));
		break;
	case 1:
		err = res(ioctl(fd, SECARENA_IOC_CONFIGURE, &c));
		e = EINVAL;
		break;
	default:
		err = res(ioctl(fd, SECARENA_IOC_INFO, (void *)1));
		e = EFAULT;
		break;
	}
	expect(t, "unlocked ioctl", err, E(e) | E(EBADF));
}

/* ---- open, close, dup ------------------------------------------------------ */

static void op_open(struct fz *t, struct slot *s)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDWR, O_RDWR,
				     O_RDWR, O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	struct slot *o = &t->w->slot[below(t, NR_SLOTS)];
	int mode = modes[below(t, 10)], fd, err, ofd;
	char path[64];
	eset_t want = OK;

	ofd = __atomic_load_n(&o->fd[0], __ATOMIC_RELAXED);
	if (o != s && ofd >= 0 && chance(t, 1, 8)) {
		/* Another arena's /proc/self/fd: a new, empty arena. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", ofd);
		want |= E(ENOENT);
	} else {
		snprintf(path, sizeof(path), "%s", SECARENA_DEVICE_PATH);
	}
	fd = open(path, mode | O_CLOEXEC);
	err = res(fd);
	if (!expect(t, "open", err, want) || err)
		return;
	memset(&s->state, 0, sizeof(*s) - offsetof(struct slot, state));
	s->state = ST_FRESH;
	s->fd[0] = fd;
	s->fd[1] = -1;
	s->accmode = mode;
	s->cfg.guard_pages = SECARENA_GUARD_PAGES_DEFAULT;
	s->cfg.fork_policy = SECARENA_FORK_PRIVATE;
}

static void op_close(struct fz *t, struct slot *s)
{
	int i = s->fd[0] >= 0 && s->fd[1] >= 0 ? below(t, 2) :
		s->fd[0] >= 0 ? 0 : 1;

	expect(t, "close", res(close(s->fd[i])), OK);
	__atomic_store_n(&s->fd[i], -1, __ATOMIC_RELAXED);
	maybe_free(s);
}

static void op_dup(struct fz *t, struct slot *s)
{
	int i = s->fd[0] >= 0 ? 1 : 0, fd;

	if (s->fd[i] >= 0)
		return;
	fd = chance(t, 1, 2) ? dup(open_fd(s)) :
	     fcntl(open_fd(s), F_DUPFD_CLOEXEC, (int)below(t, 64));
	if (expect(t, "dup", res(fd), OK))
		__atomic_store_n(&s->fd[i], fd, __ATOMIC_RELAXED);
}

/* ---- the op loop ------------------------------------------------------------ */

static int pick_op(struct fz *t)
{
	static unsigned int sum;
	unsigned int r, k;

	if (!sum)
		for (k = 0; k < NR_OPS; k++)
			sum += op_weight[k];
	r = below(t, sum);
	for (k = 0; k < NR_OPS; k++) {
		if (r < op_weight[k])
			return k;
		r -= op_weight[k];
	}
	return OP_TOUCH;
}

static bool op_exclusive(struct fz *t, int kind)
{
	switch (kind) {
	case OP_MUNMAP:
	case OP_MREMAP:
	case OP_GUARD:
	case OP_FORK:
		return true;
	case OP_MMAP:
		return t->w->capless || chance(t, 1, 2);
	default:
		return false;
	}
}

static void die_now(struct fz *t)
{
	struct worker_info *wi = &sh->w[t->w->idx];

	STORE(wi->planned, 1);
	if (chance(t, 1, 2)) {
		INC(sh->self_exits);
		_exit(0);
	}
	INC(sh->self_kills);
	kill(getpid(), SIGKILL);
}

/* Run one op on slot s; ops that do not fit its state become others. */
static void run_op(struct fz *t, struct slot *s, int kind, bool excl)
{
	bool fd = open_fd(s) >= 0, mapped = s->state == ST_MAPPED;

	if (s->state == ST_FREE) {
		t->kind = OP_OPEN;
		op_open(t, s);
		return;
	}
	switch (kind) {
	case OP_MUNMAP:
	case OP_MPROTECT:
	case OP_MREMAP:
	case OP_MADVISE:
	case OP_TOUCH:
	case OP_GUARD:
	case OP_OUTSIDE:
	case OP_MISC:
		if (mapped)
			break;
		/* Not mapped: map it, or recycle a spent slot. */
		if (!fd || (s->state == ST_SPENT && chance(t, 1, 3)))
			kind = fd ? OP_CLOSE : OP_OPEN;
		else
			kind = (excl || !t->w->capless) ? OP_MMAP : OP_INFO;
		break;
	case OP_OPEN:
		kind = fd ? OP_DUP : mapped ? OP_TOUCH : OP_OPEN;
		break;
	case OP_CONFIGURE:
	case OP_INFO:
	case OP_WIPE:
	case OP_BADIOCTL:
	case OP_MMAP:
	case OP_CLOSE:
	case OP_DUP:
		if (!fd)
			kind = mapped ? OP_TOUCH : OP_OPEN;
		if (kind == OP_MMAP && t->w->capless && !excl)
			kind = OP_INFO;
		break;
	}
	t->kind = kind;
	switch (kind) {
	case OP_OPEN:
		if (!fd && !mapped) {
			retire(s);
			op_open(t, s);
		}
		break;
	case OP_CLOSE:
		op_close(t, s);
		break;
	case OP_DUP:
		op_dup(t, s);
		break;
	case OP_CONFIGURE:
		op_configure(t, s);
		break;
	case OP_INFO:
		op_info(t, s);
		break;
	case OP_WIPE:
		op_wipe(t, s);
		break;
	case OP_BADIOCTL:
		op_badioctl(t, s);
		break;
	case OP_MMAP:
		if (mapped && excl && chance(t, 1, 2))
			op_fixed_over(t, s);
		else
			op_mmap(t, s, excl);
		break;
	case OP_MUNMAP:
		op_munmap(t, s);
		break;
	case OP_MPROTECT:
		op_mprotect(t, s);
		break;
	case OP_MREMAP:
		op_mremap(t, s);
		break;
	case OP_MADVISE:
		op_madvise(t, s);
		break;
	case OP_TOUCH:
		op_touch(t, s);
		break;
	case OP_GUARD:
		op_guard(t, s);
		break;
	case OP_FORK:
		op_fork(t, s);
		break;
	case OP_OUTSIDE:
		op_outside(t, s);
		break;
	case OP_MISC:
		op_misc(t, s);
		break;
	}
}

static void *thread_main(void *arg)
{
	struct fz *t = arg;
	struct worker *w = t->w;
	struct worker_info *wi = &sh->w[w->idx];
	struct thread_watch *tw = &wi->th[t->tid];
	struct slot *s;
	uint64_t op;
	bool excl;
	int kind;

	for (;;) {
		op = INC(wi->ops_done);
		if (op >= wi->target)
			break;
		t->op = op;
		kind = pick_op(t);
		t->kind = kind;
		STORE(tw->op, op);
		STORE(tw->kind, kind);
		STORE(tw->start_ns, now_ns());
		if (kind == OP_DIE) {
			INC(sh->op_count[kind]);
			die_now(t);
		} else if (kind == OP_RACY) {
			pthread_rwlock_rdlock(&w->maplock);
			op_racy(t);
			pthread_rwlock_unlock(&w->maplock);
		} else {
			excl = op_exclusive(t, kind);
			s = &w->slot[below(t, NR_SLOTS)];
			if (excl) {
				pthread_rwlock_wrlock(&w->maplock);
				run_op(t, s, kind, true);
				if (chance(t, 1, 8))
					check_vmpin(t);
			} else {
				pthread_rwlock_rdlock(&w->maplock);
				pthread_mutex_lock(&s->lock);
				run_op(t, s, kind, false);
				pthread_mutex_unlock(&s->lock);
			}
			pthread_rwlock_unlock(&w->maplock);
		}
		if (kind != OP_DIE)
			INC(sh->op_count[t->kind]);
		STORE(tw->start_ns, 0);
	}
	return NULL;
}

static void thread_areas(struct fz *t)
{
	struct secarena_config c = { .data_size = pg, .guard_pages = 1 };

	t->scratch = reserve(SCRATCH_PAGES * pg);
	t->edge = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->ro = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!t->scratch || t->edge == MAP_FAILED || t->ro == MAP_FAILED) {
		perror("secarena_fuzz: thread areas");
		exit(2);
	}
	mprotect(t->edge + pg, pg, PROT_NONE);
	memcpy(t->ro, &c, sizeof(c));
	mprotect(t->ro, pg, PROT_READ);
}

/* Lose CAP_IPC_LOCK, so RLIMIT_MEMLOCK binds this worker. */
static int drop_ipc_lock(unsigned long pages)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	struct rlimit rl = { pages * pg, pages * pg };

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	data[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	data[CAP_IPC_LOCK / 32].inheritable &= ~(1U << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -1;
	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

static void worker_main(int idx, unsigned int gen)
{
	static struct fz th[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	struct worker *w = calloc(1, sizeof(*w));
	struct fz boot = { .w = w, .tid = -1 };
	int i;

	if (!w)
		exit(2);
	alarm(opt_worker_s);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	w->idx = idx;
	w->gen = gen;
	w->seed = derive(opt_seed, idx, gen, 0);
	boot.rng = w->seed;
	pthread_rwlock_init(&w->maplock, NULL);
	for (i = 0; i < NR_SLOTS; i++) {
		pthread_mutex_init(&w->slot[i].lock, NULL);
		w->slot[i].fd[0] = w->slot[i].fd[1] = -1;
	}
	w->mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (w->mem_fd < 0) {
		perror("secarena_fuzz: /proc/self/mem");
		exit(2);
	}
	if (chance(&boot, 3, 10)) {
		w->memlock_pages = 8 + below(&boot, 120);
		if (!drop_ipc_lock(w->memlock_pages)) {
			w->capless = true;
			INC(sh->capless_gens);
		}
	}
	for (i = 0; i < opt_threads; i++) {
		th[i].w = w;
		th[i].tid = i;
		th[i].rng = derive(opt_seed, idx, gen, i + 1);
		thread_areas(&th[i]);
	}
	for (i = 1; i < opt_threads; i++)
		if (pthread_create(&tid[i], NULL, thread_main, &th[i]))
			exit(2);
	thread_main(&th[0]);
	for (i = 1; i < opt_threads; i++)
		pthread_join(tid[i], NULL);

	/* Every arena unmapped: nothing may stay pinned. */
	for (i = 0; i < NR_SLOTS; i++)
		retire(&w->slot[i]);
	th[0].kind = OP_MUNMAP;
	check_vmpin(&th[0]);
	exit(0);
}

/* ---- master ------------------------------------------------------------------ */

static uint64_t master_rng;

static pid_t spawn(int idx)
{
	struct worker_info *wi = &sh->w[idx];
	struct fz m = { .rng = master_rng };
	uint64_t left = wi->target - wi->ops_done;
	pid_t pid;

	wi->planned = 0;
	wi->kill_at = 0;
	memset(wi->th, 0, sizeof(wi->th));
	if (chance(&m, 1, 3))
		wi->kill_at = wi->ops_done + 1 + below(&m, left < 3000 ? left : 3000);
	master_rng = m.rng;
	INC(sh->generations);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("secarena_fuzz: fork");
		exit(2);
	}
	if (!pid)
		worker_main(idx, wi->gen);
	wi->pid = pid;
	return pid;
}

static void master_fail(struct worker_info *wi, enum check c, const char *fmt,
			...) __attribute__((format(printf, 3, 4)));

static void master_fail(struct worker_info *wi, enum check c, const char *fmt,
			...)
{
	struct worker w = { .idx = (int)(wi - sh->w), .gen = wi->gen };
	struct fz t = { .w = &w, .tid = -1, .op = wi->ops_done };
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail(&t, c, "%s", msg);
}

/* Watchdog: an op running past its budget is a hang. */
static void watch(struct worker_info *wi)
{
	uint64_t now = now_ns(), start;
	int i;

	for (i = 0; i < opt_threads; i++) {
		start = LOAD(wi->th[i].start_ns);
		/* start > now: the op began after we read the clock. */
		if (!start || start > now ||
		    now - start < opt_budget_ms * 1000000ULL)
			continue;
		master_fail(wi, CHK_BUDGET, "thread %d stuck in op %" PRIu64 " (%s) for %" PRIu64 " ms",
			    i, LOAD(wi->th[i].op), op_name[LOAD(wi->th[i].kind)],
			    (now - start) / 1000000);
		STORE(wi->planned, 1);
		kill(wi->pid, SIGKILL);
		return;
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: secarena_fuzz [-s SEED] [-n OPS] [-p PROCS] [-t THREADS]\n"
		"                     [-b OP_BUDGET_MS] [-w WORKER_SECONDS]\n");
	exit(2);
}

static void print_summary(double secs)
{
	uint64_t ops = 0, fails = 0;
	int i, n = 1;
	char line[1024];
	size_t len = 0;

	/* Started ops: those cut short by a SIGKILL count as run. */
	for (i = 0; i < opt_procs; i++)
		ops += sh->w[i].ops_done;
	for (i = 0; i < NR_CHECKS; i++)
		fails += sh->fails[i];
	printf("TAP version 13\n1..%d\n", NR_CHECKS + 1);
	printf("%s %d - %" PRIu64 " operations run (asked %" PRIu64 ")\n",
	       ops >= opt_ops ? "ok" : "not ok", n++, ops, opt_ops);
	for (i = 0; i < NR_CHECKS; i++) {
		if (sh->fails[i])
			printf("not ok %d - %s # %" PRIu64 " failures, see FAIL lines (replay: -s %" PRIu64 ")\n",
			       n++, check_name[i], sh->fails[i], opt_seed);
		else
			printf("ok %d - %s\n", n++, check_name[i]);
	}
	printf("# kernel %s, seed %" PRIu64 ", %d procs x %d threads, %.1f s, %.0f ops/s\n",
	       uts.release, opt_seed, opt_procs, opt_threads, secs,
	       secs > 0 ? ops / secs : 0.0);
	printf("# ops run: %" PRIu64 " in %" PRIu64 " worker generations (%" PRIu64 " without CAP_IPC_LOCK)\n",
	       ops, sh->generations, sh->capless_gens);
	for (i = 0; i < NR_OPS; i++)
		len += snprintf(line + len, sizeof(line) - len, " %s=%" PRIu64,
				op_name[i], sh->op_count[i]);
	printf("# per op:%s\n", line);
	printf("# faults injected: %" PRIu64 " (workers SIGKILLed by master %" PRIu64 ", self-SIGKILL %" PRIu64 ", self-exit %" PRIu64 ", children SIGKILLed %" PRIu64 ", guard touches %" PRIu64 " of which faulted %" PRIu64 ", fork children %" PRIu64 ")\n",
	       sh->master_kills + sh->self_kills + sh->self_exits +
	       sh->child_kills + sh->guard_touches,
	       sh->master_kills, sh->self_kills, sh->self_exits,
	       sh->child_kills, sh->guard_touches, sh->guard_faults, sh->forks);
	printf("# bad inputs tried: %" PRIu64 " (hostile ioctls %" PRIu64 ", hostile mmaps %" PRIu64 ", hostile munmap/mprotect/mremap/madvise ranges %" PRIu64 ")\n",
	       sh->bad_ioctl + sh->bad_mmap + sh->bad_vma, sh->bad_ioctl,
	       sh->bad_mmap, sh->bad_vma);
	len = 0;
	for (i = 0; i <= NR_ERRNO; i++) {
		if (!sh->errnos[i] || len > sizeof(line) - 40)
			continue;
		len += snprintf(line + len, sizeof(line) - len, " %s=%" PRIu64,
				i == NR_ERRNO ? "other" : ename(i),
				sh->errnos[i]);
	}
	printf("# errno histogram:%s\n", line);
	printf("# failures: %" PRIu64 "\n", fails);
}

int main(int argc, char **argv)
{
	struct rlimit nocore = { 0, 0 };
	struct worker_info *wi;
	uint64_t t0 = now_ns();
	int opt, i, live, status;
	pid_t pid;
	FILE *f;

	while ((opt = getopt(argc, argv, "s:n:p:t:b:w:")) != -1) {
		switch (opt) {
		case 's':
			opt_seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			opt_ops = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			opt_procs = atoi(optarg);
			break;
		case 't':
			opt_threads = atoi(optarg);
			break;
		case 'b':
			opt_budget_ms = atoi(optarg);
			break;
		case 'w':
			opt_worker_s = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (opt_procs < 1 || opt_procs > MAX_WORKERS || opt_threads < 1 ||
	    opt_threads > MAX_THREADS || !opt_ops)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	pg = sysconf(_SC_PAGESIZE);
	uname(&uts);
	/* mmap_region() reported the refused split as ENOMEM before 6.12. */
	{
		int maj = 0, min = 0;

		if (sscanf(uts.release, "%d.%d", &maj, &min) != 2)
			maj = 0;
		fixed_errno = (maj > 6 || (maj == 6 && min >= 12)) ? EINVAL : ENOMEM;
	}
	f = fopen("/sys/module/secarena/parameters/max_arena_pages", "re");
	if (!f || fscanf(f, "%lu", &max_arena_pages) != 1) {
		fprintf(stderr, "secarena_fuzz: secarena.ko is not loaded\n");
		return 2;
	}
	fclose(f);
	if (access(SECARENA_DEVICE_PATH, R_OK | W_OK)) {
		perror("secarena_fuzz: " SECARENA_DEVICE_PATH);
		return 2;
	}
	setrlimit(RLIMIT_CORE, &nocore);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	master_rng = derive(opt_seed, ~0ULL, 0, 0);
	printf("# secarena_fuzz -s %" PRIu64 " -n %" PRIu64 " -p %d -t %d on %s\n",
	       opt_seed, opt_ops, opt_procs, opt_threads, uts.release);
	for (i = 0; i < opt_procs; i++) {
		sh->w[i].target = opt_ops / opt_procs +
				  (i < (int)(opt_ops % opt_procs));
		spawn(i);
	}
	for (live = opt_procs; live;) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < opt_procs && sh->w[i].pid != pid; i++)
				;
			if (i == opt_procs)
				continue;
			wi = &sh->w[i];
			if (!(WIFEXITED(status) && !WEXITSTATUS(status)) &&
			    !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
			      wi->planned) &&
			    !(WIFEXITED(status) && wi->planned))
				master_fail(wi, CHK_DEATH, "worker died unplanned: status %#x (%s)",
					    status, WIFSIGNALED(status) ?
					    strsignal(WTERMSIG(status)) : "exit");
			wi->pid = 0;
			if (wi->ops_done < wi->target) {
				wi->gen++;
				spawn(i);
			} else {
				live--;
			}
		}
		for (i = 0; i < opt_procs; i++) {
			wi = &sh->w[i];
			if (!wi->pid)
				continue;
			if (wi->kill_at && !LOAD(wi->planned) &&
			    LOAD(wi->ops_done) >= wi->kill_at) {
				STORE(wi->planned, 1);
				kill(wi->pid, SIGKILL);
				INC(sh->master_kills);
			}
			watch(wi);
		}
		usleep(5000);
	}
	for (i = 0; i < opt_procs; i++)
		if (sh->w[i].ops_done > sh->w[i].target)
			sh->w[i].ops_done = sh->w[i].target;
	print_summary((now_ns() - t0) / 1e9);
	for (i = 0; i < NR_CHECKS; i++)
		if (sh->fails[i])
			return 1;
	return 0;
}
