/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the secarena selftests: the device and its arenas,
 * sysfs counters and module parameters, VmPin, forked children, and
 * physical memory: the arena's frames found through /proc/kcore, and what
 * /proc/PID/pagemap shows of them (nothing).
 *
 * Nothing here uses ASSERT_*: forked children must not longjmp into the
 * harness, so helpers return values and the tests assert on them.
 */
#ifndef SECARENA_HELPERS_H
#define SECARENA_HELPERS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/secarena.h>

#define SECARENA_SYSFS_DIR	"/sys/class/misc/secarena"
#define SECARENA_PARAM_DIR	"/sys/module/secarena/parameters"

/* Secrets the tests plant and then look for. */
#define SECRET_LEN		64

/* Exit code of a tied child whose parent was gone before it started. */
#define CHILD_ORPHANED		99

/*
 * For code running in a forked child: report the failed condition and
 * exit 1, so the parent's ASSERT on the exit code fails with a reason.
 */
#define CHILD_CHECK(cond) do {						\
	if (!(cond)) {							\
		int __saved_errno = errno;				\
									\
		fprintf(stderr, "# %s:%d: child: check failed: %s (errno %d)\n", \
			__FILE__, __LINE__, #cond, __saved_errno);	\
		_exit(1);						\
	}								\
} while (0)

static inline size_t page_size(void)
{
	static size_t size;

	if (!size)
		size = (size_t)sysconf(_SC_PAGESIZE);
	return size;
}

/* ---- files ---------------------------------------------------------- */

/* Whole small file into buf, NUL-terminated: its length, or -errno. */
static inline ssize_t read_text_file(const char *path, char *buf, size_t size)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done + 1 < size) {
		n = read(fd, buf + done, size - 1 - done);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		done += n;
	}
	buf[done] = '\0';
	close(fd);
	return done;
}

/* Write str to path in one write(): 0, or the errno of the failure. */
static inline int write_text_file(const char *path, const char *str)
{
	size_t len = strlen(str);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = write(fd, str, len);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = EIO;
	close(fd);
	return err;
}

/* "123\n" exactly: the value; anything else: -1. */
static inline long long parse_decimal_line(const char *s)
{
	long long v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (p[0] != '\n' || p[1] != '\0')
		return -1;
	return v;
}

static inline long long read_decimal_file(const char *path)
{
	char buf[64];

	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return parse_decimal_line(buf);
}

/* ---- sysfs counters and module parameters --------------------------- */

/* /sys/class/misc/secarena/<name>, or -1 if unreadable or malformed. */
static inline long long secarena_counter(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), SECARENA_SYSFS_DIR "/%s", name);
	return read_decimal_file(path);
}

/* /sys/module/secarena/parameters/<name>, or -1. */
static inline long long module_param_get(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), SECARENA_PARAM_DIR "/%s", name);
	return read_decimal_file(path);
}

/* 0, or the errno of the write. */
static inline int module_param_set(const char *name, long long value)
{
	char path[256], val[32];

	snprintf(path, sizeof(path), SECARENA_PARAM_DIR "/%s", name);
	snprintf(val, sizeof(val), "%lld\n", value);
	return write_text_file(path, val);
}

/* ---- /proc/PID/status and /proc/PID/maps ---------------------------- */

/* A "Field:   N kB" line of /proc/PID/status (pid 0: self) in kB, or -1. */
static inline long long proc_status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	long long kb = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			if (sscanf(line + flen + 1, "%lld kB", &kb) != 1)
				kb = -1;
			break;
		}
	}
	fclose(f);
	return kb;
}

/* True if the running kernel is major.minor or newer. */
static inline bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/* Pinned memory of a process (pid 0: self) in kB, or -1. */
static inline long long vm_pin_kb(pid_t pid)
{
	return proc_status_kb(pid, "VmPin");
}

static inline long long pages_to_kb(size_t pages)
{
	return (long long)(pages * (page_size() / 1024));
}

/* 1 if a line of /proc/PID/maps (pid 0: self) contains needle, 0 if not, -1. */
static inline int maps_contain(pid_t pid, const char *needle)
{
	char path[64], line[512];
	int found = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			found = 1;
	fclose(f);
	return found;
}

/* ---- the device and its arenas -------------------------------------- */

struct arena {
	int fd;
	unsigned int guard_pages;
	size_t data_pages;
	size_t len;		/* the whole mapping, guards included */
	char *base;		/* first byte of the low guard */
	char *data;		/* first data byte */
	char *high_guard;	/* first byte of the high guard */
};

static inline size_t arena_len(size_t data_pages, unsigned int guard_pages)
{
	return (data_pages + 2 * (size_t)guard_pages) * page_size();
}

static inline int secarena_open(int flags)
{
	return open(SECARENA_DEVICE_PATH, flags);
}

static inline int secarena_configure(int fd, uint64_t data_size,
				     uint32_t guard_pages, uint32_t fork_policy)
{
	struct secarena_config cfg = {
		.data_size = data_size,
		.guard_pages = guard_pages,
		.fork_policy = fork_policy,
	};

	return ioctl(fd, SECARENA_IOC_CONFIGURE, &cfg);
}

/* Filled with 0xa5 first, so fields the kernel leaves alone show up. */
static inline int secarena_get_info(int fd, struct secarena_info *info)
{
	memset(info, 0xa5, sizeof(*info));
	return ioctl(fd, SECARENA_IOC_INFO, info);
}

static inline int secarena_wipe(int fd)
{
	return ioctl(fd, SECARENA_IOC_WIPE);
}

/*
 * Map fd (configured with this geometry, or not configured) read-write:
 * 0, or the errno of mmap().
 */
static inline int arena_map_fd(struct arena *a, int fd, size_t data_pages,
			       unsigned int guard_pages)
{
	void *p;

	a->fd = fd;
	a->guard_pages = guard_pages;
	a->data_pages = data_pages;
	a->len = arena_len(data_pages, guard_pages);
	p = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		a->base = NULL;
		a->data = NULL;
		a->high_guard = NULL;
		return errno;
	}
	a->base = p;
	a->data = a->base + guard_pages * page_size();
	a->high_guard = a->data + data_pages * page_size();
	return 0;
}

/*
 * Open (O_RDWR | extra_flags), configure and map an arena: 0, or the errno
 * of the step that failed (the fd is then closed).
 */
static inline int arena_create_flags(struct arena *a, size_t data_pages,
				     unsigned int guard_pages,
				     uint32_t fork_policy, int extra_flags)
{
	int fd, err;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	fd = secarena_open(O_RDWR | extra_flags);
	if (fd < 0)
		return errno;
	if (secarena_configure(fd, data_pages * page_size(), guard_pages,
			       fork_policy)) {
		err = errno;
		close(fd);
		return err;
	}
	err = arena_map_fd(a, fd, data_pages, guard_pages);
	if (err) {
		close(fd);
		a->fd = -1;
	}
	return err;
}

static inline int arena_create(struct arena *a, size_t data_pages,
			       unsigned int guard_pages, uint32_t fork_policy)
{
	return arena_create_flags(a, data_pages, guard_pages, fork_policy,
				  O_CLOEXEC);
}

/* munmap of the whole mapping: 0 or errno. */
static inline int arena_unmap(struct arena *a)
{
	if (!a->base)
		return 0;
	if (munmap(a->base, a->len))
		return errno;
	a->base = NULL;
	a->data = NULL;
	a->high_guard = NULL;
	return 0;
}

static inline void arena_destroy(struct arena *a)
{
	arena_unmap(a);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
}

/* ---- secrets -------------------------------------------------------- */

static inline int random_secret(unsigned char secret[SECRET_LEN])
{
	return getrandom(secret, SECRET_LEN, 0) == SECRET_LEN ? 0 : -1;
}

/* Tile len bytes (a multiple of SECRET_LEN) with copies of secret. */
static inline void fill_with_secret(void *dst, size_t len,
				    const unsigned char secret[SECRET_LEN])
{
	size_t off;

	for (off = 0; off + SECRET_LEN <= len; off += SECRET_LEN)
		memcpy((char *)dst + off, secret, SECRET_LEN);
}

/* Whether every SECRET_LEN slot of len bytes holds secret. */
static inline bool tiled_with_secret(const void *buf, size_t len,
				     const unsigned char secret[SECRET_LEN])
{
	size_t off;

	for (off = 0; off + SECRET_LEN <= len; off += SECRET_LEN)
		if (memcmp((const char *)buf + off, secret, SECRET_LEN))
			return false;
	return true;
}

static inline bool contains_secret(const void *buf, size_t len,
				   const unsigned char secret[SECRET_LEN])
{
	return memmem(buf, len, secret, SECRET_LEN) != NULL;
}

static inline bool all_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* ---- pipes ---------------------------------------------------------- */

static inline int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* 0, or -1 on error or end of file before len bytes. */
static inline int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* ---- children ------------------------------------------------------- */

/*
 * fork() whose child is SIGKILLed when the test process dies, so a failed
 * ASSERT in the parent never leaves a child (and its arena) behind.
 */
static inline pid_t fork_tied(void)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(CHILD_ORPHANED);
	}
	return pid;
}

/*
 * Reap pid: the signal that killed it, or 0 if it exited (its exit code
 * then in *exit_code when exit_code is not NULL); -1 if waitpid() failed.
 */
static inline int wait_child(pid_t pid, int *exit_code)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	if (exit_code)
		*exit_code = WEXITSTATUS(status);
	return 0;
}

/*
 * Run fn(arg) in a tied child that exits with fn's return value: the
 * signal that killed the child, or 0 if it exited (exit code in
 * *exit_code); -1 if it could not be run.
 */
static inline int child_fatal_signal(int (*fn)(void *), void *arg,
				     int *exit_code)
{
	pid_t pid = fork_tied();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	return wait_child(pid, exit_code);
}

/*
 * Drop every id and so every capability (no SECBIT_KEEP_CAPS): the process
 * is then an ordinary user, uid and gid both @id. 0, or the errno.
 */
static inline int become_user(uid_t id)
{
	if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id))
		return errno;
	return 0;
}

/* ---- touching memory in a child ------------------------------------- */

struct fault_report {
	int signal;		/* fatal signal, 0 if the access went through */
	int exit_code;		/* when signal is 0 */
	int fault_signo;	/* what the SIGSEGV/SIGBUS handler saw */
	int fault_code;		/* si_code */
	void *fault_addr;	/* si_addr */
};

static inline struct fault_report **fault_report_slot(void)
{
	static struct fault_report *slot;

	return &slot;
}

/* Record siginfo, then return: SA_RESETHAND makes the retry fatal. */
static inline void record_fault(int sig, siginfo_t *si, void *uctx)
{
	struct fault_report *r = *fault_report_slot();

	(void)sig;
	(void)uctx;
	r->fault_signo = si->si_signo;
	r->fault_code = si->si_code;
	r->fault_addr = si->si_addr;
}

struct access_probe {
	volatile char *addr;
	bool write;
};

static inline int access_probe_child(void *arg)
{
	struct access_probe *probe = arg;
	struct sigaction sa = {
		.sa_sigaction = record_fault,
		.sa_flags = SA_SIGINFO | SA_RESETHAND,
	};

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	if (probe->write)
		*probe->addr = 0x5a;
	else
		(void)*probe->addr;
	return 0;
}

/*
 * Read or write one byte at addr in a forked child and report how that
 * ended: 0 with *rep filled, or -1 if the child could not be run.
 */
static inline int access_in_child(void *addr, bool write,
				  struct fault_report *rep)
{
	struct access_probe probe = { .addr = addr, .write = write };
	struct fault_report *shared;
	int sig, code = -1;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -1;
	memset(shared, 0, sizeof(*shared));
	*fault_report_slot() = shared;
	sig = child_fatal_signal(access_probe_child, &probe, &code);
	*rep = *shared;
	rep->signal = sig;
	rep->exit_code = sig == 0 ? code : -1;
	munmap(shared, sizeof(*shared));
	return sig < 0 ? -1 : 0;
}

/* ---- physical memory: /proc/PID/pagemap and /proc/kcore -------------- */

/*
 * An arena is VM_PFNMAP (special PTEs, see module/vma.c), and the pagemap
 * walker skips such vmas: /proc/PID/pagemap reports its data pages as not
 * present and gives no PFN, to root as to anyone. That is part of the
 * protection (a root process can no longer look up where a secret lives
 * and go straight to it in /proc/kcore), and guarded.pagemap_hides_the_data
 * holds the module to it. The wipe tests still need the frames, so
 * arena_data_pfns() finds them by content instead: see below.
 */

#define PAGEMAP_PRESENT		(1ULL << 63)
#define PAGEMAP_SWAPPED		(1ULL << 62)
#define PAGEMAP_PFN_MASK	((1ULL << 55) - 1)

/* The /proc/PID/pagemap entry (pid 0: self) of addr's page: 0 or -errno. */
static inline int pagemap_entry(pid_t pid, const void *addr, uint64_t *ent)
{
	off_t off = (off_t)((uintptr_t)addr / page_size()) * 8;
	char path[64];
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, ent, sizeof(*ent), off);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	return n == sizeof(*ent) ? 0 : -EIO;
}

/* The PT_LOAD segments of /proc/kcore that have a physical address. */
struct kcore {
	int fd;
	size_t nr;
	Elf64_Phdr *seg;
};

/* 0, or -errno (EACCES/EPERM: needs CAP_SYS_RAWIO; ENOENT: no kcore). */
static inline int kcore_open(struct kcore *kc)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	size_t i;
	int err;

	kc->nr = 0;
	kc->seg = NULL;
	kc->fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (kc->fd < 0)
		return -errno;
	err = -EINVAL;
	if (pread(kc->fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum)
		goto fail;
	ph = calloc(eh.e_phnum, sizeof(*ph));
	err = -ENOMEM;
	if (!ph)
		goto fail;
	err = -EIO;
	if (pread(kc->fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff) !=
	    (ssize_t)(eh.e_phnum * sizeof(*ph))) {
		free(ph);
		goto fail;
	}
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_paddr != (Elf64_Addr)-1)
			ph[kc->nr++] = ph[i];
	kc->seg = ph;
	return 0;
fail:
	close(kc->fd);
	kc->fd = -1;
	return err;
}

static inline void kcore_close(struct kcore *kc)
{
	if (kc->fd >= 0)
		close(kc->fd);
	free(kc->seg);
	kc->fd = -1;
	kc->seg = NULL;
	kc->nr = 0;
}

/* len bytes of RAM at paddr: 0; -ENOENT if no segment holds all of them. */
static inline int kcore_read_phys(struct kcore *kc, uint64_t paddr, void *buf,
				  size_t len)
{
	size_t i;

	for (i = 0; i < kc->nr; i++) {
		Elf64_Phdr *s = &kc->seg[i];

		if (paddr < s->p_paddr || paddr + len > s->p_paddr + s->p_memsz)
			continue;
		if (pread(kc->fd, buf, len, s->p_offset + (paddr - s->p_paddr)) !=
		    (ssize_t)len)
			return -EIO;
		return 0;
	}
	return -ENOENT;
}

/* Whether physical page pfn holds secret anywhere: 1, 0, or -errno. */
static inline int kcore_page_holds(struct kcore *kc, uint64_t pfn,
				   const unsigned char secret[SECRET_LEN])
{
	char *page = malloc(page_size());
	int ret;

	if (!page)
		return -ENOMEM;
	ret = kcore_read_phys(kc, pfn * page_size(), page, page_size());
	if (!ret)
		ret = contains_secret(page, page_size(), secret);
	explicit_bzero(page, page_size());
	free(page);
	return ret;
}

/* How many of the pages hold secret, or -errno. */
static inline int kcore_pages_holding(struct kcore *kc, const uint64_t *pfns,
				      size_t n,
				      const unsigned char secret[SECRET_LEN])
{
	int found = 0, ret;
	size_t i;

	for (i = 0; i < n; i++) {
		ret = kcore_page_holds(kc, pfns[i], secret);
		if (ret < 0)
			return ret;
		found += ret;
	}
	return found;
}

/*
 * Finding the frames of an arena's data pages by their contents.
 *
 * Each data page gets a stamp in its first bytes: a nonce fresh to the
 * call and the page's index. One pass over every RAM segment of
 * /proc/kcore, in large chunks, looks at the first bytes of each frame
 * and notes the frames that carry the nonce. A noted frame can also be a
 * copy of a stamp rather than the page itself: the chunk buffer holds the
 * pages it read, and a later read of the buffer's own frames (in the same
 * chunk, or a later one) sees them again. So the buffer's copies are
 * erased as soon as they are noted, and a noted frame only counts if it
 * follows the page: stamped while the stamp is on, holding the saved bytes
 * once they are put back. Each page must end with exactly one such frame.
 */
#define PFN_NONCE_LEN	16
#define PFN_STAMP_LEN	(PFN_NONCE_LEN + sizeof(uint64_t))
#define PFN_SCAN_CHUNK	(1UL << 20)
/* Room for every page plus this many frames that turn out to be copies. */
#define PFN_SCAN_SPARE	64

struct pfn_candidate {
	size_t index;
	uint64_t pfn;
	bool stamped;		/* re-read while the stamp was on: held it */
};

struct pfn_scan {
	unsigned char nonce[PFN_NONCE_LEN];
	size_t pages;
	struct pfn_candidate *cand;
	size_t nr, max;
	bool overflow;
};

static inline void pfn_stamp_make(const struct pfn_scan *sc, size_t index,
				  unsigned char stamp[PFN_STAMP_LEN])
{
	uint64_t idx = index;

	memcpy(stamp, sc->nonce, PFN_NONCE_LEN);
	memcpy(stamp + PFN_NONCE_LEN, &idx, sizeof(idx));
}

/* Note a frame that starts with our nonce (overlapping segments: once). */
static inline void pfn_scan_note(struct pfn_scan *sc, const unsigned char *page,
				 uint64_t pfn)
{
	uint64_t idx;
	size_t i;

	memcpy(&idx, page + PFN_NONCE_LEN, sizeof(idx));
	if (idx >= sc->pages)
		return;
	for (i = 0; i < sc->nr; i++)
		if (sc->cand[i].pfn == pfn && sc->cand[i].index == idx)
			return;
	if (sc->nr == sc->max) {
		sc->overflow = true;
		return;
	}
	sc->cand[sc->nr].index = idx;
	sc->cand[sc->nr].pfn = pfn;
	sc->cand[sc->nr].stamped = false;
	sc->nr++;
}

/* Whether another segment covers all of segment i (kernel text in RAM). */
static inline bool kcore_segment_covered(const struct kcore *kc, size_t i)
{
	const Elf64_Phdr *s = &kc->seg[i];
	size_t j;

	for (j = 0; j < kc->nr; j++) {
		const Elf64_Phdr *o = &kc->seg[j];

		if (j == i || s->p_paddr < o->p_paddr ||
		    s->p_paddr + s->p_memsz > o->p_paddr + o->p_memsz)
			continue;
		/* Of two equal segments, scan the first. */
		if (o->p_paddr != s->p_paddr || o->p_memsz != s->p_memsz || j < i)
			return true;
	}
	return false;
}

/* One pass over physical RAM, noting the frames that carry the nonce. */
static inline int pfn_scan_ram(struct pfn_scan *sc, struct kcore *kc,
			       unsigned char *buf)
{
	const uint64_t ps = page_size();
	uint64_t pa, end, len, off;
	size_t i;
	ssize_t n;

	for (i = 0; i < kc->nr; i++) {
		const Elf64_Phdr *s = &kc->seg[i];

		if (kcore_segment_covered(kc, i))
			continue;
		pa = (s->p_paddr + ps - 1) / ps * ps;
		end = (s->p_paddr + s->p_memsz) / ps * ps;
		while (pa < end) {
			len = end - pa < PFN_SCAN_CHUNK ? end - pa : PFN_SCAN_CHUNK;
			n = pread(kc->fd, buf, len,
				  s->p_offset + (pa - s->p_paddr));
			if (n < 0)
				return -errno;
			n -= n % ps;
			if (n == 0)
				return -EIO;
			for (off = 0; off < (uint64_t)n; off += ps) {
				if (memcmp(buf + off, sc->nonce, PFN_NONCE_LEN))
					continue;
				pfn_scan_note(sc, buf + off, (pa + off) / ps);
				/* Our copy, not to be found again. */
				explicit_bzero(buf + off, PFN_STAMP_LEN);
			}
			pa += n;
		}
	}
	return 0;
}

/* Re-read one noted frame's first bytes: whether they equal want. */
static inline int pfn_frame_holds(struct kcore *kc, uint64_t pfn,
				  const unsigned char *want)
{
	unsigned char head[PFN_STAMP_LEN];
	int ret;

	ret = kcore_read_phys(kc, pfn * page_size(), head, sizeof(head));
	if (!ret)
		ret = !memcmp(head, want, sizeof(head));
	explicit_bzero(head, sizeof(head));
	return ret;
}

/*
 * arena_data_pfns() below, through a /proc/kcore opened earlier: kcore
 * checks CAP_SYS_RAWIO at open only, so a process that opened it as root
 * can still find the frames of an arena it maps after dropping to an
 * ordinary user.
 */
static inline int arena_data_pfns_in(struct kcore *kc, char *data,
				     size_t pages, uint64_t *pfns)
{
	unsigned char stamp[PFN_STAMP_LEN], *saved = NULL, *buf;
	struct pfn_scan sc = { .pages = pages };
	size_t i, j, found;
	int err, ret;

	if (!pages)
		return -EINVAL;
	buf = mmap(NULL, PFN_SCAN_CHUNK, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sc.max = pages + PFN_SCAN_SPARE;
	sc.cand = calloc(sc.max, sizeof(*sc.cand));
	saved = calloc(pages, PFN_STAMP_LEN);
	err = -ENOMEM;
	if (buf == MAP_FAILED || !sc.cand || !saved)
		goto out;
	err = -EIO;
	if (getrandom(sc.nonce, sizeof(sc.nonce), 0) != sizeof(sc.nonce))
		goto out;

	for (i = 0; i < pages; i++) {
		memcpy(saved + i * PFN_STAMP_LEN, data + i * page_size(),
		       PFN_STAMP_LEN);
		pfn_stamp_make(&sc, i, stamp);
		memcpy(data + i * page_size(), stamp, PFN_STAMP_LEN);
	}
	err = pfn_scan_ram(&sc, kc, buf);
	for (j = 0; !err && j < sc.nr; j++) {
		pfn_stamp_make(&sc, sc.cand[j].index, stamp);
		ret = pfn_frame_holds(kc, sc.cand[j].pfn, stamp);
		if (ret < 0)
			err = ret;
		sc.cand[j].stamped = ret > 0;
	}
	for (i = 0; i < pages; i++)
		memcpy(data + i * page_size(), saved + i * PFN_STAMP_LEN,
		       PFN_STAMP_LEN);
	if (!err && sc.overflow)
		err = -ENOENT;

	for (i = 0; !err && i < pages; i++) {
		found = 0;
		for (j = 0; !err && j < sc.nr; j++) {
			if (sc.cand[j].index != i || !sc.cand[j].stamped)
				continue;
			ret = pfn_frame_holds(kc, sc.cand[j].pfn,
					      saved + i * PFN_STAMP_LEN);
			if (ret < 0)
				err = ret;
			if (ret > 0) {
				pfns[i] = sc.cand[j].pfn;
				found++;
			}
		}
		if (!err && found != 1)
			err = -ENOENT;
	}
out:
	explicit_bzero(stamp, sizeof(stamp));
	explicit_bzero(sc.nonce, sizeof(sc.nonce));
	if (saved)
		explicit_bzero(saved, pages * PFN_STAMP_LEN);
	free(saved);
	free(sc.cand);
	if (buf != MAP_FAILED) {
		explicit_bzero(buf, PFN_SCAN_CHUNK);
		munmap(buf, PFN_SCAN_CHUNK);
	}
	return err;
}

/*
 * PFNs of the data pages of this process's arena mapped at data, found in
 * physical RAM through /proc/kcore (pagemap no longer shows them): 0;
 * -ENOENT unless every page was found in exactly one frame; -EINVAL for
 * pid != 0 (finding a page means writing to it, so only its own process
 * can); another -errno (kcore_open()'s among them) on failure. It scans
 * all of RAM once per call: seconds under TCG.
 *
 * The first PFN_STAMP_LEN bytes of each page are changed during the call
 * and put back exactly before it returns; nothing else may use the pages
 * meanwhile.
 */
static inline int arena_data_pfns(pid_t pid, char *data, size_t pages,
				  uint64_t *pfns)
{
	struct kcore kc;
	int err;

	if (pid || !pages)
		return -EINVAL;
	err = kcore_open(&kc);
	if (err)
		return err;
	err = arena_data_pfns_in(&kc, data, pages, pfns);
	kcore_close(&kc);
	return err;
}

/* ---- mounts --------------------------------------------------------- */

/*
 * A fresh tmpfs (exec and dev allowed) on dir, in a mount namespace of
 * this test process and its children only: nothing global changes and it
 * goes away with the process. 0, or the errno of the failing step.
 */
static inline int private_tmpfs_at(const char *dir)
{
	if (unshare(CLONE_NEWNS))
		return errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return errno;
	if (mount("secarena-test", dir, "tmpfs", 0, "mode=0755,size=64m"))
		return errno;
	return 0;
}

/* ---- a memory cgroup of the test's own -------------------------------- */

#define CGROUP_ROOT	"/sys/fs/cgroup"

/* Whether a whitespace-separated word is in a small file. */
static inline bool file_has_word(const char *path, const char *word)
{
	char buf[512], *tok, *save;

	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, "\n ", &save); tok;
	     tok = strtok_r(NULL, "\n ", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

struct test_cgroup {
	char path[128];
	bool made;
	bool enabled_memory;	/* +memory was added to the root for it */
};

/*
 * A child of the cgroup2 root with memory.max set and no swap: 0, or why
 * not: -ENOENT (no cgroup2 at CGROUP_ROOT), -EOPNOTSUPP (no memory
 * controller), -EPERM (not root), another -errno. test_cgroup_remove()
 * undoes every part that was done, including on failure.
 */
static inline int test_cgroup_make(struct test_cgroup *cg, const char *name,
				   const char *memory_max)
{
	char path[256];
	int err;

	memset(cg, 0, sizeof(*cg));
	if (access(CGROUP_ROOT "/cgroup.controllers", R_OK))
		return -ENOENT;
	if (!file_has_word(CGROUP_ROOT "/cgroup.controllers", "memory"))
		return -EOPNOTSUPP;
	if (geteuid() != 0)
		return -EPERM;
	if (!file_has_word(CGROUP_ROOT "/cgroup.subtree_control", "memory")) {
		err = write_text_file(CGROUP_ROOT "/cgroup.subtree_control",
				      "+memory");
		if (err)
			return -err;
		cg->enabled_memory = true;
	}
	snprintf(cg->path, sizeof(cg->path), CGROUP_ROOT "/%s-%d", name,
		 getpid());
	if (mkdir(cg->path, 0755))
		return -errno;
	cg->made = true;
	snprintf(path, sizeof(path), "%s/memory.max", cg->path);
	err = write_text_file(path, memory_max);
	if (err)
		return -err;
	snprintf(path, sizeof(path), "%s/memory.swap.max", cg->path);
	if (!access(path, W_OK)) {
		err = write_text_file(path, "0");
		if (err)
			return -err;
	}
	return 0;
}

/* Move process pid into the cgroup: 0 or errno. */
static inline int test_cgroup_enter(struct test_cgroup *cg, pid_t pid)
{
	char path[256], val[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg->path);
	snprintf(val, sizeof(val), "%d", pid);
	return write_text_file(path, val);
}

/* A "key value" line of one of the cgroup's files, or -1. */
static inline long long test_cgroup_key(struct test_cgroup *cg,
					const char *file, const char *key)
{
	char path[256], buf[1024], *line, *save;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "%s/%s", cg->path, file);
	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return atoll(line + klen + 1);
	return -1;
}

/* Undo test_cgroup_make(): 0, or -1 if something could not be undone. */
static inline int test_cgroup_remove(struct test_cgroup *cg)
{
	int i, ret = 0;

	/* It empties once its dead tasks are fully gone. */
	for (i = 0; cg->made && i < 200; i++) {
		if (!rmdir(cg->path) || errno != EBUSY)
			break;
		usleep(10000);
	}
	if (cg->made && !access(cg->path, F_OK))
		ret = -1;
	cg->made = false;
	if (cg->enabled_memory &&
	    write_text_file(CGROUP_ROOT "/cgroup.subtree_control", "-memory"))
		ret = -1;
	cg->enabled_memory = false;
	return ret;
}

#endif /* SECARENA_HELPERS_H */
