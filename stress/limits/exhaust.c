// SPDX-License-Identifier: GPL-2.0
/*
 * Exhausting secarena's three budgets, and getting them back:
 *
 *  - RLIMIT_MEMLOCK, as nobody (no CAP_IPC_LOCK): arenas summing to the
 *    limit succeed, one page more is EAGAIN, freeing returns the budget,
 *    the budget is per process, a fork copy is charged to the child.
 *  - max_total_pages: eight unprivileged processes race for a small cap;
 *    together they get exactly the cap, then ENOMEM.
 *  - a memory cgroup: several processes fill a 2 MiB memory.max with
 *    arenas; refusals are ENOMEM and nobody is OOM-killed, in the cgroup
 *    or outside it.
 *
 * Runs as root (it changes module parameters and cgroups) with the module
 * loaded; every change is undone on exit, also when a check fails or the
 * watchdog fires. TAP on stdout, plan last.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "common.h"

#define NOBODY		65534

/* ---- state to restore --------------------------------------------------- */

static long long saved_max_total = -1;
static struct test_cgroup cg;

/* Puts back what the run changed; safe to call more than once. */
static void restore_state(void)
{
	char path[192];
	int i;

	if (saved_max_total >= 0) {
		if (module_param_set("max_total_pages", saved_max_total))
			diag("could not restore max_total_pages=%lld",
			     saved_max_total);
		saved_max_total = -1;
	}
	if (cg.made) {
		/* Whatever is still inside goes, or rmdir cannot succeed. */
		snprintf(path, sizeof(path), "%s/cgroup.kill", cg.path);
		write_text_file(path, "1");
		/*
		 * The kill only sends SIGKILL: up to a second for the tasks
		 * to leave; test_cgroup_remove() then retries rmdir for two.
		 */
		for (i = 0; i < 100 && test_cgroup_key(&cg, "cgroup.events",
							  "populated") > 0; i++)
			usleep(10000);
	}
	if (test_cgroup_remove(&cg))
		diag("could not remove %s or restore %s/cgroup.subtree_control",
		     cg.path, CGROUP_ROOT);
}

static pid_t main_pid;

static void atexit_restore(void)
{
	if (getpid() == main_pid)
		restore_state();
}

static void fatal_signal(int sig)
{
	if (sig == SIGALRM)
		diag("watchdog: run took too long");
	restore_state();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- unprivileged children ---------------------------------------------- */

static long long cap_eff(void)
{
	char buf[4096], *p;

	if (read_text_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nCapEff:");
	return p ? strtoll(p + 8, NULL, 16) : -1;
}

/*
 * RLIMIT_MEMLOCK = pages (set while still root, so it can be any value),
 * then uid/gid nobody with no groups: no capability is left. A uid change
 * clears the parent-death signal, so it is set again.
 */
static int become_nobody(size_t pages)
{
	struct rlimit rl = { pages * ps, pages * ps };
	pid_t parent = getppid();

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return errno;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(CHILD_ORPHANED);
	if (geteuid() != NOBODY || cap_eff() != 0)
		return EPERM;
	return 0;
}

/* ---- 1. RLIMIT_MEMLOCK ----------------------------------------------------- */

#define RL_PAGES	40
static const size_t rl_sizes[] = { 1, 3, 4, 7, 25 };	/* sum: RL_PAGES */
#define RL_N		(sizeof(rl_sizes) / sizeof(rl_sizes[0]))

static long long base_in_use;	/* pages_in_use when a test starts */

/*
 * mmap of an arena of pages data pages and SECARENA_GUARD_PAGES_MAX guard
 * pages each side, unmapped again at once: 0 or its errno; -1 if the open
 * or the configure before it failed, which is not the refusal looked for.
 */
static int map_widest_guards(size_t pages)
{
	struct arena a;
	int fd, e = -1;

	fd = secarena_open(O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!secarena_configure(fd, pages * ps, SECARENA_GUARD_PAGES_MAX,
				SECARENA_FORK_PRIVATE)) {
		e = arena_map_fd(&a, fd, pages, SECARENA_GUARD_PAGES_MAX);
		if (!e)
			arena_unmap(&a);
	}
	close(fd);
	return e;
}

/* Runs as nobody with RLIMIT_MEMLOCK = RL_PAGES pages. */
static int rlimit_child(void)
{
	long long refused0 = secarena_counter("refused_limit");
	struct arena a[RL_N], x;
	int err[RL_N], e1, e2, e3, e4, e5, e6, e7;
	unsigned int i, ok = 0, refusals = 0;
	long long pin;

	for (i = 0; i < RL_N; i++) {
		err[i] = arena_create(&a[i], rl_sizes[i], 1,
				      SECARENA_FORK_PRIVATE);
		ok += !err[i];
	}
	pin = vm_pin_kb(0);
	tap(ok == RL_N && pin == pages_to_kb(RL_PAGES) &&
	    secarena_counter("pages_in_use") == base_in_use + RL_PAGES,
	    "rlimit: nobody maps 5 arenas (1+3+4+7+25) = RLIMIT_MEMLOCK exactly",
	    "%u/%zu mapped (errno %d %d %d %d %d), VmPin %lld kB, pages_in_use +%lld",
	    ok, RL_N, err[0], err[1], err[2], err[3], err[4], pin,
	    secarena_counter("pages_in_use") - base_in_use);

	/* Guard pages cost nothing, so a wide-guarded page is still over. */
	e1 = arena_create(&x, 1, 1, SECARENA_FORK_PRIVATE);
	refusals += e1 == EAGAIN;
	pin = vm_pin_kb(0);
	tap(e1 == EAGAIN && pin == pages_to_kb(RL_PAGES) &&
	    secarena_counter("pages_in_use") == base_in_use + RL_PAGES,
	    "rlimit: one page more is EAGAIN",
	    "errno %d, VmPin %lld kB", e1, pin);
	if (!e1)
		arena_destroy(&x);

	/* Unmapping the 7-page arena gives exactly 7 pages back. */
	arena_destroy(&a[3]);
	e1 = arena_create(&x, 8, 1, SECARENA_FORK_PRIVATE);
	refusals += e1 == EAGAIN;
	if (!e1)
		arena_destroy(&x);
	e2 = arena_create(&a[3], 7, 1, SECARENA_FORK_PRIVATE);
	e3 = arena_create(&x, 1, 1, SECARENA_FORK_PRIVATE);
	refusals += e3 == EAGAIN;
	if (!e3)
		arena_destroy(&x);
	tap(e1 == EAGAIN && e2 == 0 && e3 == EAGAIN,
	    "rlimit: munmap of 7 pages gives back 7, not 8",
	    "8 pages: errno %d, 7 pages: errno %d, then 1 page: errno %d",
	    e1, e2, e3);

	/* A closed fd whose mapping lives still holds its pages. */
	arena_close(&a[4]);
	e1 = arena_create(&x, 1, 1, SECARENA_FORK_PRIVATE);
	refusals += e1 == EAGAIN;
	if (!e1)
		arena_destroy(&x);
	arena_unmap(&a[4]);
	e2 = arena_create(&a[4], 25, 1, SECARENA_FORK_PRIVATE);
	tap(e1 == EAGAIN && e2 == 0,
	    "rlimit: close keeps the charge while mapped, munmap returns it",
	    "after close: errno %d; after munmap, 25 pages: errno %d", e1, e2);

	for (i = 0; i < RL_N; i++)
		arena_destroy(&a[i]);
	pin = vm_pin_kb(0);
	e1 = arena_create(&x, RL_PAGES + 1, 1, SECARENA_FORK_PRIVATE);
	refusals += e1 == EAGAIN;
	if (!e1)
		arena_destroy(&x);
	e2 = arena_create(&x, RL_PAGES, 1, SECARENA_FORK_PRIVATE);
	e3 = vm_pin_kb(0) == pages_to_kb(RL_PAGES);
	arena_destroy(&x);
	tap(pin == 0 && e1 == EAGAIN && e2 == 0 && e3 &&
	    secarena_counter("pages_in_use") == base_in_use,
	    "rlimit: all freed: one arena of N+1 pages EAGAIN, of N pages fits",
	    "VmPin after free %lld kB, N+1: errno %d, N: errno %d",
	    pin, e1, e2);

	/* The widest guards add nothing to the charge. */
	e4 = map_widest_guards(RL_PAGES + 1);
	refusals += e4 == EAGAIN;
	e5 = map_widest_guards(RL_PAGES - 2);
	tap(e4 == EAGAIN && e5 == 0,
	    "rlimit: 1024 guard pages each side are not charged",
	    "N+1 data pages: errno %d, N-2 data pages: errno %d", e4, e5);

	e6 = (int)(secarena_counter("refused_limit") - refused0);
	e7 = (int)vm_pin_kb(0);
	tap(e6 == (int)refusals && e7 == 0,
	    "rlimit: refused_limit counted each EAGAIN",
	    "refused_limit +%d, EAGAINs seen %u, VmPin at end %d kB",
	    e6, refusals, e7);
	return 0;
}

/*
 * Nobody with the limit full of one PRIVATE arena forks: the copy is
 * charged to the child, which then has no budget left; with the limit
 * lowered below the arena the copy cannot be made: fork still succeeds,
 * the child's range raises SIGBUS, fork_copy_failed counts it.
 */
static int rlimit_fork_child(void)
{
	long long failed0 = secarena_counter("fork_copy_failed");
	long long refused0 = secarena_counter("refused_limit");
	struct rlimit rl = { (RL_PAGES - 1) * ps, (RL_PAGES - 1) * ps };
	struct arena a;
	int e, st;
	pid_t pid;

	e = arena_create(&a, RL_PAGES, 1, SECARENA_FORK_PRIVATE);
	if (e) {
		tap(false, "rlimit fork: parent maps N pages", "errno %d", e);
		return 1;
	}
	memset(a.data, 0x3c, RL_PAGES * ps);

	pid = fork();
	if (pid == 0) {
		struct arena x;
		long long pin = vm_pin_kb(0);
		long long in_use = secarena_counter("pages_in_use");
		bool same = a.data[0] == 0x3c && a.data[RL_PAGES * ps - 1] == 0x3c;

		e = arena_create(&x, 1, 1, SECARENA_FORK_PRIVATE);
		tap(pin == pages_to_kb(RL_PAGES) && same &&
		    in_use == base_in_use + 2 * RL_PAGES && e == EAGAIN,
		    "rlimit fork: PRIVATE copy is charged to the child, whose budget is then full",
		    "child VmPin %lld kB, data copied %d, pages_in_use +%lld, 1 more page: errno %d",
		    pin, same, in_use - base_in_use, e);
		_exit(0);
	}
	st = reap(pid);
	tap(exited_ok(st) && vm_pin_kb(0) == pages_to_kb(RL_PAGES) &&
	    secarena_counter("pages_in_use") == base_in_use + RL_PAGES &&
	    secarena_counter("fork_copy_failed") == failed0,
	    "rlimit fork: child gone, its copy uncharged, parent's charge unchanged",
	    "child %s, pages_in_use +%lld", status_str(st),
	    secarena_counter("pages_in_use") - base_in_use);

	/* The charge made before stays; a new one is held to the new limit. */
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	refused0 = secarena_counter("refused_limit");
	pid = fork();
	if (pid == 0) {
		long long pin = vm_pin_kb(0);

		if (pin != 0)
			_exit(3);
		*(volatile char *)a.data = 1;	/* SIGBUS expected */
		_exit(4);
	}
	st = reap(pid);
	tap(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS &&
	    secarena_counter("fork_copy_failed") == failed0 + 1 &&
	    secarena_counter("refused_limit") == refused0 + 1 &&
	    secarena_counter("pages_in_use") == base_in_use + RL_PAGES,
	    "rlimit fork: copy over the child's limit: fork succeeds, access SIGBUS",
	    "child %s, fork_copy_failed +%lld, refused_limit +%lld",
	    status_str(st), secarena_counter("fork_copy_failed") - failed0,
	    secarena_counter("refused_limit") - refused0);
	arena_destroy(&a);
	return 0;
}

/* The budget is each address space's: every process gets its own N. */
#define RL_PROCS	4
static int rlimit_per_process(void)
{
	int go[2], done[2], rel[2], st[RL_PROCS], i, ok = 0;
	pid_t pid[RL_PROCS];
	long long peak_use;
	char c;

	if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC) ||
	    pipe2(rel, O_CLOEXEC))
		return -1;
	for (i = 0; i < RL_PROCS; i++) {
		pid[i] = fork_tied();
		if (pid[i] == 0) {
			struct arena a, b;
			char r;

			close(go[1]);
			close(rel[1]);
			if (become_nobody(RL_PAGES))
				_exit(2);
			if (read(go[0], &c, 1) != 0)
				_exit(3);
			r = arena_create(&a, RL_PAGES, 1,
					 SECARENA_FORK_PRIVATE) ? 'f' : 'm';
			if (r == 'm' &&
			    arena_create(&b, 1, 1, SECARENA_FORK_PRIVATE) != EAGAIN)
				r = 'x';
			(void)!write(done[1], &r, 1);
			(void)!read(rel[0], &c, 1);
			_exit(r == 'm' ? 0 : 1);
		}
	}
	close(go[0]);
	close(done[1]);
	close(rel[0]);
	close(go[1]);	/* all start at once */
	for (i = 0; i < RL_PROCS; i++)
		if (read(done[0], &c, 1) == 1 && c == 'm')
			ok++;
	peak_use = secarena_counter("pages_in_use") - base_in_use;
	close(rel[1]);
	for (i = 0; i < RL_PROCS; i++)
		st[i] = reap(pid[i]);
	close(done[0]);
	for (i = 0; i < RL_PROCS; i++)
		if (!exited_ok(st[i]))
			ok = -100;
	tap(ok == RL_PROCS && peak_use == RL_PROCS * RL_PAGES &&
	    secarena_counter("pages_in_use") == base_in_use,
	    "rlimit: 4 nobody processes at once each get their own N pages, then EAGAIN",
	    "%d/%d got N and EAGAIN on N+1, pages_in_use peak +%lld",
	    ok, RL_PROCS, peak_use);
	return 0;
}

static void run_child_test(const char *name, int (*fn)(void), size_t memlock)
{
	pid_t pid = fork_tied();
	int st, err;

	if (pid == 0) {
		char what[128];

		err = become_nobody(memlock);
		snprintf(what, sizeof(what),
			 "%s: dropped to nobody: uid 65534, no groups, CapEff 0",
			 name);
		tap(!err, what, "errno %d", err);
		_exit(err ? 1 : fn());
	}
	st = reap(pid);
	if (!exited_ok(st))
		tap(false, name, "child %s", status_str(st));
}

static void test_rlimit(void)
{
	base_in_use = secarena_counter("pages_in_use");
	run_child_test("rlimit", rlimit_child, RL_PAGES);
	run_child_test("rlimit fork", rlimit_fork_child, RL_PAGES);
	if (rlimit_per_process())
		tap(false, "rlimit: per-process budgets", "setup failed");
}

/* ---- 2. max_total_pages across processes ------------------------------- */

#define CAP_PROCS	8
#define CAP_PAGES	480
#define MAX_REFUSALS	8

struct cap_report {
	int ready, done;
	unsigned int pages, arenas, refusals;
	int errs[MAX_REFUSALS];
};

static const size_t cap_sizes[] = { 1, 2, 3, 5, 8, 13 };

/*
 * Cycle through the sizes until one is refused, then take single pages
 * until refused too: once a one-page arena is refused, the cap is full.
 */
static void cap_worker(struct cap_report *r, int idx, int go, int rel)
{
	static struct arena a[CAP_PAGES];
	size_t size = cap_sizes[idx % 6];
	int k = idx, e;
	char c;

	if (become_nobody(4 * CAP_PAGES))
		_exit(2);
	__atomic_store_n(&r->ready, 1, __ATOMIC_SEQ_CST);
	if (read(go, &c, 1) != 0)
		_exit(3);
	while (r->arenas < CAP_PAGES) {
		e = arena_create(&a[r->arenas], size, 1, SECARENA_FORK_PRIVATE);
		if (e) {
			if (r->refusals < MAX_REFUSALS)
				r->errs[r->refusals] = e;
			r->refusals++;
			if (size == 1)
				break;
			size = 1;
			continue;
		}
		r->pages += size;
		r->arenas++;
		if (size != 1)
			size = cap_sizes[++k % 6];
		/* Two CPUs: let the others in, so that all of them race. */
		sched_yield();
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
	(void)!read(rel, &c, 1);
	_exit(0);
}

static bool wait_flags(struct cap_report *r, int n, bool done, double secs)
{
	double end = now_s() + secs;
	int i, all;

	do {
		for (i = 0, all = 1; i < n; i++)
			if (!__atomic_load_n(done ? &r[i].done : &r[i].ready,
					     __ATOMIC_SEQ_CST))
				all = 0;
		if (all)
			return true;
		usleep(20000);
	} while (now_s() < end);
	return false;
}

static void test_global_cap(void)
{
	long long in_use0 = secarena_counter("pages_in_use");
	long long mapped0 = secarena_counter("mapped");
	long long arenas0 = secarena_counter("arenas");
	long long peak0 = secarena_counter("pages_peak");
	long long refused0 = secarena_counter("refused_limit");
	long long old = module_param_get("max_total_pages");
	unsigned int pages = 0, arenas = 0, refusals = 0, bad_err = 0, i, j;
	struct cap_report *r;
	long long in_use, peak, mapped, refused;
	int go[2], rel[2], st[CAP_PROCS], e, failed = 0;
	pid_t pid[CAP_PROCS];
	struct arena x;
	bool all_done;

	if (old < 0 || in_use0 < 0) {
		tap(false, "cap: read max_total_pages and pages_in_use", NULL);
		return;
	}
	saved_max_total = old;
	e = module_param_set("max_total_pages", in_use0 + CAP_PAGES);
	tap(!e && module_param_get("max_total_pages") == in_use0 + CAP_PAGES &&
	    secarena_counter("max_total_pages") == in_use0 + CAP_PAGES,
	    "cap: max_total_pages set to pages_in_use + 480",
	    "was %lld, errno %d", old, e);

	r = mmap(NULL, sizeof(*r) * CAP_PROCS, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED || pipe2(go, O_CLOEXEC) || pipe2(rel, O_CLOEXEC)) {
		tap(false, "cap: setup", "errno %d", errno);
		return;
	}
	memset(r, 0, sizeof(*r) * CAP_PROCS);
	for (i = 0; i < CAP_PROCS; i++) {
		pid[i] = fork_tied();
		if (pid[i] == 0) {
			close(go[1]);
			close(rel[1]);
			cap_worker(&r[i], i, go[0], rel[0]);
		}
	}
	close(go[0]);
	close(rel[0]);
	/* Everyone is nobody before the race starts. */
	all_done = wait_flags(r, CAP_PROCS, false, 30);
	close(go[1]);
	all_done = all_done && wait_flags(r, CAP_PROCS, true, 60);

	for (i = 0; i < CAP_PROCS; i++) {
		pages += r[i].pages;
		arenas += r[i].arenas;
		refusals += r[i].refusals;
		if (r[i].refusals < 1 || r[i].refusals > MAX_REFUSALS)
			bad_err++;
		for (j = 0; j < r[i].refusals && j < MAX_REFUSALS; j++)
			bad_err += r[i].errs[j] != ENOMEM;
	}
	in_use = secarena_counter("pages_in_use");
	peak = secarena_counter("pages_peak");
	mapped = secarena_counter("mapped");
	refused = secarena_counter("refused_limit");
	tap(all_done && pages == CAP_PAGES,
	    "cap: 8 nobody processes racing got exactly the cap in all",
	    "%u pages in %u arenas%s", pages, arenas,
	    all_done ? "" : ", not all workers finished");
	{
		char per[256];
		int off = 0;

		for (i = 0; i < CAP_PROCS; i++)
			off += snprintf(per + off, sizeof(per) - off, "%s%u",
					i ? "," : "", r[i].pages);
		diag("cap: pages per process: %s", per);
	}
	tap(all_done && bad_err == 0,
	    "cap: every refusal was ENOMEM, each process was refused",
	    "%u refusals, %u not ENOMEM or missing", refusals, bad_err);
	tap(in_use == in_use0 + CAP_PAGES && mapped == mapped0 + arenas &&
	    peak == (peak0 > in_use0 + CAP_PAGES ? peak0 : in_use0 + CAP_PAGES),
	    "cap: pages_in_use and mapped at the peak, pages_peak follows",
	    "pages_in_use %lld (start %lld), mapped +%lld, pages_peak %lld (was %lld)",
	    in_use, in_use0, mapped - mapped0, peak, peak0);
	tap(refused - refused0 == refusals,
	    "cap: refused_limit counted each refusal",
	    "+%lld, refusals seen %u", refused - refused0, refusals);

	/* The cap binds root as well: CAP_IPC_LOCK only lifts the rlimit. */
	e = arena_create(&x, 1, 1, SECARENA_FORK_PRIVATE);
	if (!e)
		arena_destroy(&x);
	tap(e == ENOMEM, "cap: root's one-page mmap at the full cap is ENOMEM",
	    "errno %d", e);

	close(rel[1]);
	for (i = 0; i < CAP_PROCS; i++) {
		st[i] = reap(pid[i]);
		failed += !exited_ok(st[i]);
	}
	tap(failed == 0 && secarena_counter("pages_in_use") == in_use0 &&
	    secarena_counter("mapped") == mapped0 &&
	    secarena_counter("arenas") == arenas0,
	    "cap: all exited, pages_in_use, mapped and arenas back to start",
	    "%d workers failed, pages_in_use %lld, mapped %lld, arenas %lld",
	    failed, secarena_counter("pages_in_use"), secarena_counter("mapped"),
	    secarena_counter("arenas"));
	e = arena_create(&x, CAP_PAGES, 1, SECARENA_FORK_PRIVATE);
	if (!e)
		arena_destroy(&x);
	tap(e == 0, "cap: the freed budget can be taken again in one arena",
	    "errno %d", e);
	munmap(r, sizeof(*r) * CAP_PROCS);

	restore_state();
	tap(module_param_get("max_total_pages") == old,
	    "cap: max_total_pages restored", "now %lld, was %lld",
	    module_param_get("max_total_pages"), old);
}

/* ---- 3. the memory cgroup ------------------------------------------------- */

#define MCG_PROCS	4
#define MCG_MAX		(2 << 20)
#define BYSTANDER_MB	16

struct mcg_report {
	int ready, done;
	unsigned int pages, arenas, err;
};

static const size_t mcg_sizes[MCG_PROCS] = { 8, 5, 16, 3 };

/*
 * Everything a worker touches after joining the cgroup was faulted in
 * before: the stack, its arrays, the report page. Then the only charges
 * it makes are the arenas' own (and their vma and page tables), and the
 * report is a plain store: a pipe write would allocate a page in the
 * full cgroup.
 */
static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char stack[65536];
	size_t i;

	for (i = 0; i < sizeof(stack); i += 512)
		stack[i] = 0;
}

static void mcg_worker(struct mcg_report *r, int idx, int go, int rel)
{
	static struct arena a[MCG_MAX / 4096];
	size_t size = mcg_sizes[idx];
	char c;

	/* Callees' frames lie below this one: those pages are now present. */
	prefault_stack();
	memset(a, 0, sizeof(a));
	errno = 0;
	r->pages = 0;
	if (become_nobody(16384))
		_exit(2);
	__atomic_store_n(&r->ready, 1, __ATOMIC_SEQ_CST);
	if (read(go, &c, 1) != 0)
		_exit(3);
	while (r->arenas < MCG_MAX / 4096) {
		int e = arena_create(&a[r->arenas], size, 1,
				     SECARENA_FORK_PRIVATE);

		if (e) {
			r->err = e;
			break;
		}
		r->pages += size;
		r->arenas++;
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
	(void)!read(rel, &c, 1);
	_exit(0);
}

/* Outside the cgroup: memory and an arena that must be intact at the end. */
static void bystander(int rel, int *ready)
{
	size_t len = BYSTANDER_MB << 20, i;
	struct arena a;
	char *buf, c;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || arena_create(&a, 4, 1, SECARENA_FORK_PRIVATE))
		_exit(2);
	memset(buf, 0x77, len);
	memset(a.data, 0x66, 4 * ps);
	__atomic_store_n(ready, 1, __ATOMIC_SEQ_CST);
	(void)!read(rel, &c, 1);
	for (i = 0; i < len; i += ps)
		if (buf[i] != 0x77)
			_exit(3);
	for (i = 0; i < 4 * ps; i++)
		if (a.data[i] != 0x66)
			_exit(4);
	_exit(0);
}

/* Its 4 arena pages are counted before the cgroup's workers start. */
static bool bystander_ready(int *ready)
{
	double end = now_s() + 30;

	while (!__atomic_load_n(ready, __ATOMIC_SEQ_CST)) {
		if (now_s() > end)
			return false;
		usleep(10000);
	}
	return true;
}

/*
 * A "key value" line of /proc/vmstat, or -1: test_cgroup_key() is the
 * same for the cgroup's files, with a buffer too small for this one.
 */
static long long vmstat(const char *key)
{
	char buf[8192], *line, *save;
	size_t klen = strlen(key);

	if (read_text_file("/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return atoll(line + klen + 1);
	return -1;
}

/*
 * memory.max = MCG_MAX and no swap, or reclaim could push the workers' own
 * pages out: 0 or errno.
 */
static int cgroup_setup(void)
{
	char max[32];

	snprintf(max, sizeof(max), "%d", MCG_MAX);
	return -test_cgroup_make(&cg, "secarena-limits", max);
}

static long long cg_value(const char *file)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", cg.path, file);
	return read_decimal_file(path);
}

static void test_memcg_race(void)
{
	long long oom0 = vmstat("oom_kill");
	long long start = secarena_counter("pages_in_use");
	long long in_use0 = start;
	long long cur, events_max, cg_oom, cg_kill, oom1, in_use;
	int go[2], rel[2], brel[2], st[MCG_PROCS], bst, e, i, failed = 0;
	unsigned int pages = 0, arenas = 0, bad = 0;
	pid_t pid[MCG_PROCS], by;
	struct mcg_report *r;
	double end;
	bool ok;

	e = cgroup_setup();
	tap(!e, "memcg race: cgroup with memory.max = 2 MiB, no swap", "%s: errno %d",
	    cg.path, e);
	if (e)
		goto out;

	r = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	if (r == MAP_FAILED || pipe2(go, O_CLOEXEC) || pipe2(rel, O_CLOEXEC) ||
	    pipe2(brel, O_CLOEXEC)) {
		tap(false, "memcg race: setup", "errno %d", errno);
		goto out;
	}
	memset(r, 0, ps);
	by = fork_tied();
	if (by == 0) {
		close(brel[1]);
		close(go[1]);
		close(rel[1]);
		bystander(brel[0], &r[MCG_PROCS].ready);
	}
	close(brel[0]);
	if (!bystander_ready(&r[MCG_PROCS].ready))
		tap(false, "memcg race: bystander started", NULL);
	in_use0 = secarena_counter("pages_in_use");
	for (i = 0; i < MCG_PROCS; i++) {
		pid[i] = fork_tied();
		if (pid[i] == 0) {
			close(go[1]);
			close(rel[1]);
			close(brel[1]);
			mcg_worker(&r[i], i, go[0], rel[0]);
		}
	}
	close(go[0]);
	close(rel[0]);
	end = now_s() + 30;
	for (i = 0; i < MCG_PROCS; i++) {
		while (!__atomic_load_n(&r[i].ready, __ATOMIC_SEQ_CST) &&
		       now_s() < end)
			usleep(20000);
		e = test_cgroup_enter(&cg, pid[i]);
		if (e || !r[i].ready)
			failed++;
	}
	tap(failed == 0, "memcg race: 4 nobody workers moved into the cgroup",
	    "%d failed", failed);
	close(go[1]);
	end = now_s() + 60;
	for (i = 0, ok = true; i < MCG_PROCS; i++) {
		while (!__atomic_load_n(&r[i].done, __ATOMIC_SEQ_CST) &&
		       now_s() < end)
			usleep(20000);
		ok = ok && r[i].done;
		pages += r[i].pages;
		arenas += r[i].arenas;
		bad += r[i].err != ENOMEM;
	}
	in_use = secarena_counter("pages_in_use") - in_use0;
	cur = cg_value("memory.current");
	events_max = test_cgroup_key(&cg, "memory.events", "max");
	diag("memcg race: workers hold %u pages in %u arenas (%u+%u+%u+%u), memory.current %lld, events max %lld oom %lld",
	     pages, arenas, r[0].pages, r[1].pages, r[2].pages, r[3].pages,
	     cur, events_max, test_cgroup_key(&cg, "memory.events", "oom"));
	tap(ok && bad == 0,
	    "memcg race: every worker was refused with ENOMEM",
	    "errnos %u %u %u %u", r[0].err, r[1].err, r[2].err, r[3].err);
	/* Most of 2 MiB is arena pages: it is the memcg that stopped them. */
	tap(ok && in_use == pages && pages >= MCG_MAX / 4096 / 2 &&
	    cur >= (long long)(pages * ps) && cur <= MCG_MAX && events_max >= 1,
	    "memcg race: arenas fill the cgroup up to memory.max",
	    "%u pages, pages_in_use +%lld, memory.current %lld, events max %lld",
	    pages, in_use, cur, events_max);

	close(rel[1]);
	for (i = 0; i < MCG_PROCS; i++) {
		st[i] = reap(pid[i]);
		failed += !exited_ok(st[i]);
	}
	close(brel[1]);
	bst = reap(by);
	cg_oom = test_cgroup_key(&cg, "memory.events", "oom");
	cg_kill = test_cgroup_key(&cg, "memory.events", "oom_kill");
	oom1 = vmstat("oom_kill");
	tap(failed == 0 && cg_kill == 0,
	    "memcg race: no worker was OOM-killed (memory.events oom_kill 0)",
	    "worker status %s %s %s %s; oom_kill %lld, oom %lld",
	    status_str(st[0]), status_str(st[1]), status_str(st[2]),
	    status_str(st[3]), cg_kill, cg_oom);
	tap(oom1 == oom0, "memcg race: /proc/vmstat oom_kill unchanged",
	    "%lld -> %lld", oom0, oom1);
	tap(exited_ok(bst),
	    "memcg race: bystander outside the cgroup lived, its memory and arena intact",
	    "%s", status_str(bst));
	tap(secarena_counter("pages_in_use") == start &&
	    cg_value("memory.current") < MCG_MAX / 4,
	    "memcg race: pages uncharged after exit",
	    "pages_in_use %lld (start %lld), memory.current %lld",
	    secarena_counter("pages_in_use"), start, cg_value("memory.current"));
	munmap(r, ps);
out:
	restore_state();
	tap(!cg.made && access(cg.path, F_OK) && !cg.enabled_memory,
	    "memcg race: cgroup removed, subtree_control restored", NULL);
}

/*
 * The same limit, but every mmap is one step the parent orders after
 * reading memory.current: arenas are granted while the cgroup keeps
 * MCG_HEADROOM pages free, then each worker asks for more than is left.
 * Only the arena's data pages ever meet the full cgroup, so any OOM kill
 * here would be the module's doing. The headroom is 16 pages for vmas,
 * files and page tables, plus what the two CPUs' memcg stocks may hold
 * charged in advance (64 pages each): memory.current counts those, but a
 * charge that finds the counter full can reach the OOM killer before the
 * stocks are drained (their drain is asynchronous). (In the free-for-all of
 * test_memcg_race() the next mmap's vm_area_struct charge meets it too,
 * and that one may invoke the memcg OOM killer: see the report.)
 */
#define MCG_HEADROOM	(16 + 2 * 64)

struct step_slot {
	int ready, seq, err;
	unsigned int size;
};

static void step_worker(struct step_slot *w, int cmd)
{
	static struct arena a[MCG_MAX / 4096];
	unsigned int n = 0;
	char c;

	prefault_stack();
	memset(a, 0, sizeof(a));
	errno = 0;
	if (become_nobody(16384))
		_exit(2);
	__atomic_store_n(&w->ready, 1, __ATOMIC_SEQ_CST);
	/* A pipe read allocates nothing in the cgroup; 'x' or EOF ends. */
	while (read(cmd, &c, 1) == 1 && c == 'm' && n < MCG_MAX / 4096) {
		int e = arena_create(&a[n], w->size, 1, SECARENA_FORK_PRIVATE);

		n += !e;
		w->err = e;
		__atomic_add_fetch(&w->seq, 1, __ATOMIC_SEQ_CST);
	}
	_exit(0);
}

/* One mmap of size pages by worker w: its errno, or -1 if it never answered. */
static int step(struct step_slot *w, int cmd, unsigned int size)
{
	int seq = __atomic_load_n(&w->seq, __ATOMIC_SEQ_CST);
	double end = now_s() + 20;

	w->size = size;
	if (write(cmd, "m", 1) != 1)
		return -1;
	while (__atomic_load_n(&w->seq, __ATOMIC_SEQ_CST) == seq) {
		if (now_s() > end)
			return -1;
		usleep(1000);
	}
	return w->err;
}

static void test_memcg(void)
{
	long long oom0 = vmstat("oom_kill");
	long long start = secarena_counter("pages_in_use");
	long long in_use0 = start;
	long long cur, before, after, ev_max, cg_oom, cg_kill, in_use;
	unsigned int pages = 0, granted = 0, refused = 0, held[MCG_PROCS] = { 0 };
	int cmd[MCG_PROCS][2], brel[2], st[MCG_PROCS], bst, e, i, bad = 0;
	bool full[MCG_PROCS] = { false }, more = true;
	struct step_slot *w;
	pid_t pid[MCG_PROCS], by;
	double end;

	e = cgroup_setup();
	tap(!e, "memcg: cgroup with memory.max = 2 MiB, no swap", "%s: errno %d",
	    cg.path, e);
	if (e)
		goto out;
	w = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	if (w == MAP_FAILED || pipe2(brel, O_CLOEXEC)) {
		tap(false, "memcg: setup", "errno %d", errno);
		goto out;
	}
	memset(w, 0, ps);
	by = fork_tied();
	if (by == 0) {
		close(brel[1]);
		bystander(brel[0], &w[MCG_PROCS].ready);
	}
	close(brel[0]);
	if (!bystander_ready(&w[MCG_PROCS].ready))
		tap(false, "memcg: bystander started", NULL);
	in_use0 = secarena_counter("pages_in_use");
	for (i = 0; i < MCG_PROCS; i++) {
		if (pipe2(cmd[i], O_CLOEXEC))
			cmd[i][0] = cmd[i][1] = -1;
		pid[i] = fork_tied();
		if (pid[i] == 0) {
			int j;

			/* Only its own command pipe stays open. */
			for (j = 0; j < i; j++)
				close(cmd[j][1]);
			close(cmd[i][1]);
			close(brel[1]);
			step_worker(&w[i], cmd[i][0]);
		}
		close(cmd[i][0]);
	}
	end = now_s() + 30;
	for (i = 0; i < MCG_PROCS; i++) {
		while (!__atomic_load_n(&w[i].ready, __ATOMIC_SEQ_CST) &&
		       now_s() < end)
			usleep(10000);
		if (!w[i].ready || test_cgroup_enter(&cg, pid[i]))
			bad++;
	}
	tap(bad == 0, "memcg: 4 nobody workers moved into the cgroup",
	    "%d failed", bad);

	/* Round robin, each worker its own size, while the headroom lasts. */
	bad = 0;
	while (more) {
		more = false;
		for (i = 0; i < MCG_PROCS; i++) {
			if (full[i])
				continue;
			cur = cg_value("memory.current");
			if (cur < 0 || MCG_MAX - cur <
			    (long long)((mcg_sizes[i] + MCG_HEADROOM) * ps)) {
				full[i] = true;
				continue;
			}
			e = step(&w[i], cmd[i][1], mcg_sizes[i]);
			if (e) {
				bad++;
				full[i] = true;
				diag("memcg: worker %d, %zu pages, memory.current %lld: errno %d",
				     i, mcg_sizes[i], cur, e);
				continue;
			}
			held[i] += mcg_sizes[i];
			pages += mcg_sizes[i];
			granted++;
			more = true;
		}
	}
	in_use = secarena_counter("pages_in_use") - in_use0;
	cur = cg_value("memory.current");
	tap(bad == 0 && in_use == pages && pages >= 160,
	    "memcg: arenas granted while headroom is left all succeed",
	    "%u arenas, %u pages (%u+%u+%u+%u), pages_in_use +%lld, memory.current %lld, %d failed",
	    granted, pages, held[0], held[1], held[2], held[3], in_use, cur,
	    bad);

	/*
	 * Now each asks for more than is left. memory.current includes what
	 * the per-CPU stocks hold charged in advance (up to 64 pages each,
	 * given back to a charge that fails), so ask for 2 x 64 + 8 more.
	 */
	bad = 0;
	for (i = 0; i < MCG_PROCS; i++) {
		unsigned int size;

		before = cg_value("memory.current");
		size = (MCG_MAX - before) / ps + 2 * 64 + 8;
		e = step(&w[i], cmd[i][1], size);
		after = cg_value("memory.current");
		refused += e == ENOMEM;
		bad += e != ENOMEM;
		diag("memcg: worker %d asks %u pages at memory.current %lld: errno %d, memory.current after %lld",
		     i, size, before, e, after);
	}
	ev_max = test_cgroup_key(&cg, "memory.events", "max");
	cg_oom = test_cgroup_key(&cg, "memory.events", "oom");
	tap(bad == 0 && secarena_counter("pages_in_use") - in_use0 == pages,
	    "memcg: over what is left: ENOMEM for each worker, the attempt's pages given back",
	    "%u ENOMEM of %d, pages_in_use +%lld", refused, MCG_PROCS,
	    secarena_counter("pages_in_use") - in_use0);
	tap(ev_max >= MCG_PROCS && cg_oom == 0,
	    "memcg: memory.events: the limit was hit, the OOM path never entered",
	    "max %lld, oom %lld", ev_max, cg_oom);

	for (i = 0; i < MCG_PROCS; i++) {
		close(cmd[i][1]);
		st[i] = reap(pid[i]);
		bad += !exited_ok(st[i]);
	}
	close(brel[1]);
	bst = reap(by);
	cg_kill = test_cgroup_key(&cg, "memory.events", "oom_kill");
	tap(bad == 0 && cg_kill == 0,
	    "memcg: no worker was OOM-killed (memory.events oom_kill 0)",
	    "workers: %s, %s, %s, %s; oom_kill %lld",
	    status_str(st[0]), status_str(st[1]), status_str(st[2]),
	    status_str(st[3]), cg_kill);
	tap(vmstat("oom_kill") == oom0, "memcg: /proc/vmstat oom_kill unchanged",
	    "%lld -> %lld", oom0, vmstat("oom_kill"));
	tap(exited_ok(bst),
	    "memcg: bystander outside the cgroup lived, its memory and arena intact",
	    "%s", status_str(bst));
	tap(secarena_counter("pages_in_use") == start &&
	    cg_value("memory.current") < MCG_MAX / 4,
	    "memcg: pages uncharged after exit",
	    "pages_in_use %lld (start %lld), memory.current %lld",
	    secarena_counter("pages_in_use"), start, cg_value("memory.current"));
	munmap(w, ps);
out:
	restore_state();
	tap(!cg.made && access(cg.path, F_OK) && !cg.enabled_memory,
	    "memcg: cgroup removed, subtree_control restored", NULL);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	tap_init();
	main_pid = getpid();
	if (geteuid() != 0 || access(SECARENA_DEVICE_PATH, R_OK | W_OK)) {
		tap(false, "runs as root with /dev/secarena", NULL);
		return tap_done();
	}
	atexit(atexit_restore);
	signal(SIGINT, fatal_signal);
	signal(SIGTERM, fatal_signal);
	signal(SIGALRM, fatal_signal);
	signal(SIGSEGV, fatal_signal);
	alarm(240);

	test_rlimit();
	test_global_cap();
	test_memcg();
	/* Opt-in: it can end in a memcg OOM kill the module does not cause. */
	if (argc > 1 && !strcmp(argv[1], "--memcg-race"))
		test_memcg_race();
	return tap_done();
}
