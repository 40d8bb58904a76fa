// SPDX-License-Identifier: GPL-2.0
/*
 * Wipe proof by scanning all of physical RAM through /proc/kcore.
 *
 * Owner processes put random 64-byte secrets into arenas (getrandom()
 * straight into the arena, then copied across its 16 pages with 8-byte
 * register moves, so no other copy is made). The scanner only ever gets
 * masked = secret ^ mask and mask: it finds candidates by an 8-byte word
 * unmasked into a register and checks them byte by byte, so its own
 * memory never holds a secret for the scan to find.
 *
 * One scan with every owner alive (each secret must be found), then each
 * arena ends a different way (munmap, munmap + close, close + munmap,
 * exit, SIGKILL, a PRIVATE fork child's exit), then one more scan: each
 * of those secrets must be found 0 times. Controls in the second scan:
 * the fork parent's arena, still alive, is found; a plain mlock()ed
 * anonymous buffer freed by munmap() without clearing is found too
 * (unless the kernel zeroes freed pages: init_on_free).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <sys/random.h>
#include <sys/utsname.h>

#include "common.h"

#define ARENA_PAGES	16
#define CHUNK		(1UL << 20)
#define CHUNK_TAIL	(SECRET_LEN + 8)
/* x86-64 kernel text mapping: KCORE_TEXT, RAM seen a second time. */
#define KTEXT_START	0xffffffff80000000ULL

/* ---- /proc/kcore ----------------------------------------------------- */

static struct kcore kc = { .fd = -1 };
static uint64_t text_off;	/* file offset of the kernel text segment */
static uint64_t ram_bytes;
static unsigned int nram;	/* segments of the direct map */

/*
 * kcore_open() keeps every segment with a physical address, the kernel
 * text too: that is RAM the direct map shows already, so it is not scanned.
 */
static bool is_text(const Elf64_Phdr *s)
{
	return s->p_vaddr >= KTEXT_START;
}

/* The RAM (direct map) segments to scan, and one text page for scrubbing. */
static int kcore_ram_open(void)
{
	size_t i;
	int err;

	err = kcore_open(&kc);
	if (err)
		return -err;
	for (i = 0; i < kc.nr; i++) {
		if (is_text(&kc.seg[i])) {
			text_off = kc.seg[i].p_offset;
			continue;
		}
		ram_bytes += kc.seg[i].p_memsz;
		nram++;
	}
	return nram && text_off ? 0 : ENOENT;
}

/*
 * read_kcore() copies each page through one bounce buffer per open file,
 * which is kfree()d without clearing: after a scan that met a secret it
 * holds the last page read. A read of kernel text overwrites it.
 */
static void kcore_scrub_bounce(void)
{
	char page[4096];

	(void)!pread(kc.fd, page, sizeof(page), text_off);
}

/* ---- targets and the candidate filter -------------------------------- */

struct target {
	const char *name;
	unsigned char masked[SECRET_LEN];
	unsigned char mask[SECRET_LEN];
	long count;
};

#define MAX_TARGETS	8
static struct target tgt[MAX_TARGETS];
static unsigned int ntgt;

#define HASH_BITS	16
static uint64_t filter[(1 << HASH_BITS) / 64];
static uint64_t seed;

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline unsigned int hash64(uint64_t v)
{
	return ((v ^ seed) * 0x9e3779b97f4a7c15ULL) >> (64 - HASH_BITS);
}

static inline bool filter_has(unsigned int h)
{
	return filter[h / 64] & (1ULL << (h % 64));
}

/* Bytes j..j+7 of target t's secret, computed into a register. */
static inline uint64_t secret_word(const struct target *t, unsigned int j)
{
	return load64(t->masked + j) ^ load64(t->mask + j);
}

/*
 * Every occurrence starting at byte s has an 8-aligned word at s + j,
 * j < 8, that holds secret bytes j..j+7: the filter has those 8 words of
 * each target, hashed (so not even they are stored). A seed that puts
 * the all-zero or all-one word on a set bit would make every empty page
 * a candidate: pick another.
 */
static int filter_build(void)
{
	unsigned int t, j, tries;

	for (tries = 0; tries < 100; tries++) {
		if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
			return -1;
		memset(filter, 0, sizeof(filter));
		for (t = 0; t < ntgt; t++)
			for (j = 0; j < 8; j++) {
				unsigned int h = hash64(secret_word(&tgt[t], j));

				filter[h / 64] |= 1ULL << (h % 64);
			}
		if (!filter_has(hash64(0)) && !filter_has(hash64(~0ULL)))
			return 0;
	}
	return -1;
}

static bool verify(const unsigned char *p, const struct target *t)
{
	unsigned int i;

	for (i = 0; i < SECRET_LEN; i++)
		if (p[i] != (unsigned char)(t->masked[i] ^ t->mask[i]))
			return false;
	return true;
}

/*
 * The word at buf + w matched the filter. buf holds len bytes of this
 * chunk plus up to CHUNK_TAIL of the next (rd in all); an occurrence is
 * this chunk's if it starts in [0, len).
 */
static bool candidate(const unsigned char *buf, size_t w, size_t len,
		      size_t rd, uint64_t v)
{
	bool hit = false;
	unsigned int t, j;

	for (t = 0; t < ntgt; t++)
		for (j = 0; j < 8; j++) {
			if (v != secret_word(&tgt[t], j) || w < j)
				continue;
			if (w - j >= len || w - j + SECRET_LEN > rd)
				continue;
			if (verify(buf + w - j, &tgt[t])) {
				tgt[t].count++;
				hit = true;
			}
		}
	return hit;
}

static unsigned char *scan_buf;

/* Count every target in all RAM segments: seconds taken, or -1. */
static double scan(void)
{
	double t0 = now_s();
	unsigned int t;
	size_t s;

	for (t = 0; t < ntgt; t++)
		tgt[t].count = 0;
	for (s = 0; s < kc.nr; s++) {
		const Elf64_Phdr *sg = &kc.seg[s];
		uint64_t off;

		if (is_text(sg))
			continue;
		for (off = 0; off < sg->p_memsz; off += CHUNK) {
			size_t len = sg->p_memsz - off < CHUNK ?
				     sg->p_memsz - off : CHUNK;
			size_t rd = sg->p_memsz - off < CHUNK + CHUNK_TAIL ?
				    sg->p_memsz - off : CHUNK + CHUNK_TAIL;
			size_t w, lim;
			ssize_t n;
			bool hit = false;

			n = pread(kc.fd, scan_buf, rd, sg->p_offset + off);
			if (n != (ssize_t)rd) {
				diag("kcore read at paddr 0x%llx: %zd (errno %d)",
				     (unsigned long long)(sg->p_paddr + off), n,
				     errno);
				return -1;
			}
			lim = rd < len + 8 ? rd : len + 8;
			for (w = 0; w + 8 <= lim; w += 8) {
				uint64_t v = load64(scan_buf + w);

				if (filter_has(hash64(v)))
					hit |= candidate(scan_buf, w, len, rd, v);
			}
			/* Our copy of a live secret must not outlive the chunk. */
			if (hit)
				explicit_bzero(scan_buf, rd);
		}
	}
	kcore_scrub_bounce();
	return now_s() - t0;
}

/* ---- owners ------------------------------------------------------------ */

enum kind { K_ARENA, K_ANON, K_FORK };

struct msg {
	char tag;		/* 's' secret, 'p' fork child's pid, 'k' done */
	int val;
	unsigned char masked[SECRET_LEN];
	unsigned char mask[SECRET_LEN];
};

struct owner {
	const char *name;
	enum kind kind;
	pid_t pid;
	int cmd, rep;
	int target;		/* index in tgt[] */
	int child_target;	/* K_FORK: the fork child's secret */
};

/*
 * getrandom() into region, then copies of it across len bytes, one
 * 8-byte register at a time: vector registers could hold all 64 bytes at
 * once and be saved in the task's FPU state.
 */
static int plant(volatile uint64_t *region, size_t len)
{
	size_t i, words = SECRET_LEN / 8;

	if (getrandom((void *)region, SECRET_LEN, 0) != SECRET_LEN)
		return -1;
	for (i = words; i < len / 8; i++)
		region[i] = region[i % words];
	return 0;
}

static int send_secret(int fd, const volatile uint64_t *secret)
{
	struct msg m = { .tag = 's' };
	uint64_t mask[SECRET_LEN / 8];
	unsigned int i;

	if (getrandom(mask, sizeof(mask), 0) != sizeof(mask))
		return -1;
	for (i = 0; i < SECRET_LEN / 8; i++) {
		uint64_t v = secret[i] ^ mask[i];

		memcpy(m.masked + 8 * i, &v, 8);
	}
	memcpy(m.mask, mask, sizeof(mask));
	return write(fd, &m, sizeof(m)) == sizeof(m) ? 0 : -1;
}

static void reply(int fd, char tag, int val)
{
	struct msg m = { .tag = tag, .val = val };

	(void)!write(fd, &m, sizeof(m));
}

static void fork_child_main(struct arena *a, int cmd, int rep)
{
	char c;

	if (plant((volatile uint64_t *)a->data, ARENA_PAGES * ps) ||
	    send_secret(rep, (volatile uint64_t *)a->data))
		_exit(2);
	(void)!read(cmd, &c, 1);
	_exit(0);
}

static void owner_main(enum kind kind, int cmd, int rep)
{
	size_t len = ARENA_PAGES * ps;
	int kid_cmd[2] = { -1, -1 };
	volatile uint64_t *data;
	struct arena a = { .fd = -1 };
	pid_t kid = -1;
	char c;
	int st;

	if (kind == K_ANON) {
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || mlock(p, len))
			_exit(2);
		data = p;
	} else {
		if (arena_create(&a, ARENA_PAGES, 1, SECARENA_FORK_PRIVATE))
			_exit(2);
		data = (volatile uint64_t *)a.data;
	}
	if (plant(data, len) || send_secret(rep, data))
		_exit(2);

	while (read(cmd, &c, 1) == 1) {
		switch (c) {
		case 'u':	/* munmap; for K_ANON without clearing */
			reply(rep, 'k', kind == K_ANON ? munmap((void *)data, len) :
			      arena_unmap(&a));
			break;
		case 'c':
			arena_close(&a);
			reply(rep, 'k', 0);
			break;
		case 'f':	/* a PRIVATE fork child with its own secret */
			if (pipe(kid_cmd)) {
				reply(rep, 'p', -1);
				break;
			}
			kid = fork();
			if (kid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				close(kid_cmd[1]);
				fork_child_main(&a, kid_cmd[0], rep);
			}
			close(kid_cmd[0]);
			reply(rep, 'p', kid);
			break;
		case 'g':	/* the fork child exits; its status back */
			close(kid_cmd[1]);
			st = kid > 0 ? reap(kid) : -1;
			reply(rep, 'k', st);
			break;
		case 'x':
			_exit(0);
		}
	}
	_exit(0);
}

static int owner_start(struct owner *o)
{
	int down[2], up[2];

	if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC))
		return -1;
	o->pid = fork_tied();
	if (o->pid < 0)
		return -1;
	if (o->pid == 0) {
		close(down[1]);
		close(up[0]);
		owner_main(o->kind, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	o->cmd = down[1];
	o->rep = up[0];
	return 0;
}

static int get_msg(struct owner *o, struct msg *m)
{
	return read(o->rep, m, sizeof(*m)) == sizeof(*m) ? 0 : -1;
}

static int add_target(const char *name, const struct msg *m)
{
	struct target *t = &tgt[ntgt];

	if (m->tag != 's' || ntgt == MAX_TARGETS)
		return -1;
	t->name = name;
	memcpy(t->masked, m->masked, SECRET_LEN);
	memcpy(t->mask, m->mask, SECRET_LEN);
	return ntgt++;
}

/* One command, one 'k' reply: its value, or -1000 on a broken pipe. */
static int command(struct owner *o, char c)
{
	struct msg m;

	if (write(o->cmd, &c, 1) != 1 || get_msg(o, &m) || m.tag != 'k')
		return -1000;
	return m.val;
}

/* init_on_free=1 on the command line, or on by default and not turned off. */
static bool init_on_free(void)
{
	char cmdline[4096], path[128], line[256];
	struct utsname u;
	bool def = false;
	FILE *f;

	if (read_text_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		cmdline[0] = '\0';
	if (strstr(cmdline, "init_on_free=1"))
		return true;
	if (strstr(cmdline, "init_on_free=0") || uname(&u))
		return false;
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, "CONFIG_INIT_ON_FREE_DEFAULT_ON=y\n"))
			def = true;
	fclose(f);
	return def;
}

/*
 * debug_pagealloc=on unmaps every freed page from the direct map, and
 * kcore reads an unmapped page as zeros: a freed page is invisible to the
 * scan whatever it holds.  make check-debug boots with it on.
 */
static bool debug_pagealloc(void)
{
	char cmdline[4096];

	if (read_text_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		return false;
	return strstr(cmdline, "debug_pagealloc=on");
}

/* A count line: at least min (alive) or exactly 0 (gone). */
static void tap_count_is(const struct target *t, const char *when, long min,
			 long planted)
{
	char name[192];

	snprintf(name, sizeof(name), "%s: %s", when, t->name);
	if (min)
		tap(t->count >= min, name, "count=%ld (%ld planted)", t->count,
		    planted);
	else
		tap(t->count == 0, name, "count=%ld, must be 0", t->count);
}

/*
 * The anonymous buffer freed without clearing: still there, unless the
 * kernel clears freed pages itself.
 */
static void control(const struct target *t, bool zeroing)
{
	if (debug_pagealloc())
		tap(t->count == 0,
		    "control: debug_pagealloc unmaps freed pages, so kcore cannot see the freed anonymous buffer",
		    "count=%ld", t->count);
	else if (zeroing)
		tap(t->count == 0,
		    "control: kernel zeroes freed pages (init_on_free), so the freed anonymous buffer is gone too",
		    "count=%ld", t->count);
	else
		tap(t->count >= 1,
		    "control: anonymous mlock()ed buffer freed by munmap without clearing is still in RAM",
		    "count=%ld, init_on_free off", t->count);
}

int main(void)
{
	struct owner own[] = {
		{ "munmap (fd still open)", .kind = K_ARENA },
		{ "munmap then close", .kind = K_ARENA },
		{ "close then munmap", .kind = K_ARENA },
		{ "exit with the arena mapped", .kind = K_ARENA },
		{ "SIGKILL with the arena mapped", .kind = K_ARENA },
		{ "fork parent (PRIVATE), still mapped", .kind = K_FORK },
		{ "anonymous mlock()ed buffer, munmap without clearing", .kind = K_ANON },
	};
	enum { O_MUNMAP, O_MUNMAP_CLOSE, O_CLOSE_MUNMAP, O_EXIT, O_KILL, O_FORK,
	       O_ANON, NOWN };
	long long in_use0, in_use;
	bool zeroing = init_on_free();
	double t1, t2, t3;
	struct msg m;
	int e, i, st, r[8];
	pid_t kid = -1;

	setvbuf(stdout, NULL, _IONBF, 0);
	tap_init();
	alarm(300);
	e = kcore_ram_open();
	tap(!e, "kcore: RAM segments found", "%u segments, %llu MiB of RAM, errno %d",
	    nram, (unsigned long long)(ram_bytes >> 20), e);
	if (e)
		return tap_done();
	scan_buf = mmap(NULL, CHUNK + CHUNK_TAIL, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	/* Locked: a migrated buffer page could leave a copy behind. */
	if (scan_buf == MAP_FAILED || mlock(scan_buf, CHUNK + CHUNK_TAIL)) {
		tap(false, "kcore: scan buffer", "errno %d", errno);
		return tap_done();
	}
	in_use0 = secarena_counter("pages_in_use");

	for (i = 0; i < NOWN; i++) {
		own[i].target = -1;
		if (!owner_start(&own[i]) && !get_msg(&own[i], &m))
			own[i].target = add_target(own[i].name, &m);
		if (own[i].target < 0) {
			tap(false, "owners: start and plant", "%s", own[i].name);
			return tap_done();
		}
	}
	/* The fork child: its pid from the parent, its secret from itself. */
	e = write(own[O_FORK].cmd, "f", 1) != 1;
	for (i = 0; i < 2 && !e; i++) {
		e = get_msg(&own[O_FORK], &m);
		if (!e && m.tag == 'p')
			kid = m.val;
		else if (!e) {
			own[O_FORK].child_target =
				add_target("PRIVATE fork child's own copy", &m);
			e = own[O_FORK].child_target < 0;
		}
	}
	in_use = secarena_counter("pages_in_use");
	tap(!e && kid > 0 && in_use == in_use0 + 7 * ARENA_PAGES,
	    "owners: 6 arenas + 1 fork copy + 1 anonymous buffer planted",
	    "pages_in_use +%lld", in_use - in_use0);
	if (e || kid <= 0 || filter_build()) {
		tap(false, "owners: fork child and filter", NULL);
		return tap_done();
	}

	t1 = scan();
	tap(t1 >= 0, "scan 1, all alive", "%.1f s for %llu MiB", t1,
	    (unsigned long long)(ram_bytes >> 20));
	for (i = 0; i < (int)ntgt; i++)
		tap_count_is(&tgt[i], "alive", 1, 1024);

	/* Each arena ends its own way. */
	r[0] = command(&own[O_MUNMAP], 'u');
	r[1] = command(&own[O_MUNMAP_CLOSE], 'u');
	r[2] = command(&own[O_MUNMAP_CLOSE], 'c');
	r[3] = command(&own[O_CLOSE_MUNMAP], 'c');
	r[4] = command(&own[O_CLOSE_MUNMAP], 'u');
	(void)!write(own[O_EXIT].cmd, "x", 1);
	st = reap(own[O_EXIT].pid);
	r[5] = exited_ok(st) ? 0 : -1;
	kill(own[O_KILL].pid, SIGKILL);
	st = reap(own[O_KILL].pid);
	r[6] = st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : -1;
	st = command(&own[O_FORK], 'g');
	r[7] = exited_ok(st) ? 0 : -1;
	e = command(&own[O_ANON], 'u');
	in_use = secarena_counter("pages_in_use");
	tap(!r[0] && !r[1] && !r[2] && !r[3] && !r[4] && !r[5] && !r[6] &&
	    !r[7] && !e && in_use == in_use0 + ARENA_PAGES,
	    "endings done; only the fork parent's arena is left",
	    "results %d %d %d %d %d %d %d %d %d, pages_in_use +%lld",
	    r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], e,
	    in_use - in_use0);

	t2 = scan();
	tap(t2 >= 0, "scan 2, after the endings", "%.1f s", t2);
	for (i = 0; i < NOWN; i++) {
		struct target *t = &tgt[own[i].target];

		if (i == O_FORK)
			tap_count_is(t, "still alive", 1, 1024);
		else if (i == O_ANON)
			control(t, zeroing);
		else
			tap_count_is(t, "after", 0, 0);
	}
	tap_count_is(&tgt[own[O_FORK].child_target], "after its exit", 0, 0);

	/* The fork parent goes too: now no arena secret is left at all. */
	for (i = 0; i < NOWN; i++) {
		if (i == O_EXIT || i == O_KILL)
			continue;
		(void)!write(own[i].cmd, "x", 1);
		st = reap(own[i].pid);
		if (!exited_ok(st))
			tap(false, "owner exits", "%s: %s", own[i].name,
			    status_str(st));
	}
	in_use = secarena_counter("pages_in_use");
	tap(in_use == in_use0, "owners gone, pages_in_use back",
	    "%lld (start %lld)", in_use, in_use0);
	t3 = scan();
	tap(t3 >= 0, "scan 3, every owner gone", "%.1f s", t3);
	tap_count_is(&tgt[own[O_FORK].target], "after its exit", 0, 0);
	for (i = 0, e = 0; i < (int)ntgt; i++)
		if (i != own[O_ANON].target)
			e += tgt[i].count != 0;
	tap(e == 0, "scan 3: no arena secret anywhere in RAM",
	    "%d of %u found; scans took %.1f + %.1f + %.1f s", e, ntgt - 1,
	    t1, t2, t3);
	explicit_bzero(tgt, sizeof(tgt));
	kcore_close(&kc);
	return tap_done();
}
