// SPDX-License-Identifier: GPL-2.0
/*
 * secarena-stat: the secarena module's counters, the users that hold its
 * pages, and the processes that map /dev/secarena, as tables or as one
 * JSON object.
 *
 * Everything comes from sysfs and /proc; the tool opens no arena. The data
 * size and guard pages of a mapping are known only to SECARENA_IOC_INFO on
 * the arena's own file, and that file cannot be reached harmlessly from
 * outside: opening /proc/PID/fd/N or /proc/PID/map_files/... opens the
 * device again, which makes a new, empty arena, and pidfd_getfd() would
 * take a reference to another process's secret. So a mapping is reported
 * by its whole size, guard pages included.
 *
 * A process that uses libsecarena also has its status page (sizes and
 * counts, no secret: secarena_status.h), a private memfd mapping named
 * "secarena-status", read through /proc/PID/mem: whoever may read that file
 * sees how full the process's arenas are and what it was refused.
 *
 * SECARENA_STAT_SYSFS and SECARENA_STAT_PROC stand in for /sys and /proc,
 * so that tests can run it on a fake tree without the module.
 *
 * Copyright (C) 2026 The secarena authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secarena_status.h"

#define PROG		"secarena-stat"
#define DEVICE		"/dev/secarena"
#define STATUS_MAP	"/memfd:" SECARENA_STATUS_NAME " (deleted)"
/* The fields a version 1 page has; later versions only append. */
#define STATUS_V1_SIZE	(offsetof(struct secarena_status_page, backend) + 16)

enum {
	EXIT_NO_MODULE = 2,
	EXIT_PID = 3,
	EXIT_USAGE = 64,	/* EX_USAGE */
};

/* The one-number attributes of module/device.c, in its order. */
static const char *const counter_names[] = {
	"arenas", "mapped", "pages_in_use", "pages_peak",
	"max_arena_pages", "max_total_pages", "max_user_pages",
	"refused_limit", "refused_user_limit", "refused_hibernation",
	"refused_foreign_mmap", "fork_copy_failed", "revoked_hibernation",
};
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NR_COUNTERS	ARRAY_SIZE(counter_names)

struct value {
	char name[NAME_MAX + 1];
	char text[64];
	bool ok;		/* false: missing or unreadable */
};

struct mapping {
	unsigned long start, end;
};

/* One line of the users attribute. */
struct user {
	uid_t uid;
	unsigned long pages;
	char *name;		/* from getpwuid(), NULL if unknown */
};

struct proc {
	long pid;
	char comm[64];		/* raw bytes: any but NUL, see prctl(2) */
	size_t comm_len;
	struct mapping *map;
	size_t nr_map;
	unsigned long status_at;	/* start of the status page, 0: none */
	int status_err;			/* 0: status read and valid, else errno */
	struct secarena_status_page status;
};

/* Everything the tool shows, read before anything is printed. */
struct report {
	struct value cnt[NR_COUNTERS];
	struct value *par;
	size_t nr_par;
	struct user *users;
	size_t nr_users;
	bool users_ok;		/* false: missing, unreadable or malformed */
	struct proc *procs;
	size_t nr_procs;
	unsigned int unreadable;
};

static const char *sys_root = "/sys";
static const char *proc_root = "/proc";
static long page_size;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xrealloc(NULL, n), s, n);
}

/*
 * Up to size - 1 bytes of a small file, the final newline cut. Returns
 * the length, or -errno. comm may hold any byte but NUL, so no stdio
 * string functions here.
 */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	if (len && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return len;
}

static void read_value(struct value *v, const char *dir, const char *name)
{
	char path[PATH_MAX];
	ssize_t n;

	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	n = read_small(path, v->text, sizeof(v->text));
	v->ok = n >= 0;
	/* A module older than this tool may lack a counter: not worth a word. */
	if (n < 0 && n != -ENOENT)
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(-n));
}

static int no_dots(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Every module parameter, sorted by name; none if the directory is gone. */
static size_t read_params(struct value **out)
{
	char dir[PATH_MAX];
	struct dirent **list;
	int i, n;

	snprintf(dir, sizeof(dir), "%s/module/secarena/parameters", sys_root);
	n = scandir(dir, &list, no_dots, alphasort);
	if (n <= 0) {
		*out = NULL;
		return 0;
	}
	*out = xrealloc(NULL, n * sizeof(**out));
	for (i = 0; i < n; i++) {
		read_value(&(*out)[i], dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return n;
}

/*
 * A decimal number as the kernel prints it: digits, no leading zero, at
 * most max. Advances *s past it; false if there is none.
 */
static bool parse_dec(const char **s, unsigned long max, unsigned long *out)
{
	const char *p = *s;
	unsigned long v = 0;

	if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (max - (*p - '0')) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*s = p;
	*out = v;
	return true;
}

/* One "UID PAGES" line, its newline cut. */
static bool parse_user(const char *line, struct user *u)
{
	/* Pages must stay countable in KiB. */
	unsigned long uid, max_pages = ULONG_MAX / (page_size / 1024);

	if (!parse_dec(&line, (uid_t)-1, &uid) || *line++ != ' ' ||
	    !parse_dec(&line, max_pages, &u->pages) || *line)
		return false;
	u->uid = uid;
	return true;
}

static int cmp_uid(const void *a, const void *b)
{
	uid_t x = ((const struct user *)a)->uid;
	uid_t y = ((const struct user *)b)->uid;

	return (x > y) - (x < y);
}

/*
 * The users attribute, sorted by uid, with each user's name. False when
 * there is nothing to show: the attribute is missing (an older module),
 * denied (it is root's only: *denied_users is set, and main says so once),
 * cannot be read otherwise (said here), or has a line that is not
 * "UID PAGES" (said here; *bad is set, and main exits 1).
 */
static bool read_users(const char *dir, struct user **out, size_t *nr_out,
		       bool *denied_users, bool *bad)
{
	char path[PATH_MAX + sizeof("/users")], *line = NULL;
	struct user *users = NULL, u;
	size_t cap = 0, nr = 0, i;
	unsigned int lineno = 0;
	struct passwd *pw;
	ssize_t len;
	FILE *f;

	*out = NULL;
	*nr_out = 0;
	snprintf(path, sizeof(path), "%s/users", dir);
	f = fopen(path, "re");
	if (!f) {
		if (errno == EACCES || errno == EPERM)
			*denied_users = true;
		else if (errno != ENOENT)
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return false;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		/* A NUL inside the line would hide what follows it. */
		if (strlen(line) != (size_t)len || !parse_user(line, &u)) {
			fprintf(stderr, PROG ": %s:%u: not \"UID PAGES\"\n",
				path, lineno);
			*bad = true;
			goto fail;
		}
		users = xrealloc(users, (nr + 1) * sizeof(*users));
		users[nr++] = u;
	}
	if (ferror(f)) {
		fprintf(stderr, PROG ": %s: %s\n", path,
			strerror(errno ? errno : EIO));
		goto fail;
	}
	free(line);
	fclose(f);

	if (nr)
		qsort(users, nr, sizeof(*users), cmp_uid);
	for (i = 0; i < nr; i++) {
		pw = getpwuid(users[i].uid);
		users[i].name = pw ? xstrdup(pw->pw_name) : NULL;
	}
	*out = users;
	*nr_out = nr;
	return true;

fail:
	free(users);
	free(line);
	fclose(f);
	return false;
}

/* A PID as /proc names it: decimal digits only, no sign, no spaces. */
static long parse_pid(const char *s)
{
	long pid = 0;

	if (!*s || strlen(s) > 9)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		pid = pid * 10 + (*s - '0');
	}
	return pid;
}

static bool is_device(const char *path)
{
	/* The node can be unlinked under a live mapping, e.g. in a chroot. */
	return !strcmp(path, DEVICE) || !strcmp(path, DEVICE " (deleted)");
}

/* The /dev/secarena lines of one maps file; 0 or -errno. */
static int scan_maps(struct proc *p)
{
	char path[PATH_MAX];
	unsigned long start, end;
	size_t cap = 0;
	char *line = NULL, *name;
	int off, err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%ld/maps", proc_root, p->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		off = 0;
		/* start-end perms offset dev inode, then the path if any. */
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n",
			   &start, &end, &off) != 2 || !off)
			continue;
		name = line + off;
		name[strcspn(name, "\n")] = '\0';
		if (!strcmp(name, STATUS_MAP) && end > start) {
			p->status_at = start;
			continue;
		}
		if (!is_device(name) || end <= start)
			continue;
		p->map = xrealloc(p->map, (p->nr_map + 1) * sizeof(*p->map));
		p->map[p->nr_map].start = start;
		p->map[p->nr_map].end = end;
		p->nr_map++;
	}
	if (ferror(f))
		err = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	return err;
}

static void read_comm(struct proc *p)
{
	char path[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%ld/comm", proc_root, p->pid);
	n = read_small(path, p->comm, sizeof(p->comm));
	if (n < 0)
		n = snprintf(p->comm, sizeof(p->comm), "?");
	p->comm_len = n;
}

/* The status page, through PID/mem; sets status_err. */
static void read_status(struct proc *p)
{
	struct secarena_status_page *sp = &p->status;
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%ld/mem", proc_root, p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		p->status_err = errno;
		return;
	}
	memset(sp, 0, sizeof(*sp));
	n = pread(fd, sp, sizeof(*sp), (off_t)p->status_at);
	p->status_err = n < 0 ? errno : 0;
	close(fd);
	if (!p->status_err &&
	    ((size_t)n < STATUS_V1_SIZE || memcmp(sp->magic, SECARENA_STATUS_MAGIC, 8) ||
	     sp->version < 1 || sp->size < STATUS_V1_SIZE))
		p->status_err = EBADMSG;
	sp->backend[sizeof(sp->backend) - 1] = '\0';
}

static bool denied(int err)
{
	return err == -EACCES || err == -EPERM;
}

static bool gone(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* All PIDs under proc_root, ascending: a fake tree has no fixed order. */
static size_t list_pids(long **out)
{
	size_t nr = 0, cap = 0;
	struct dirent *d;
	long *pids = NULL, pid;
	DIR *dir;

	dir = opendir(proc_root);
	if (!dir) {
		fprintf(stderr, PROG ": %s: %s\n", proc_root, strerror(errno));
		exit(1);
	}
	while ((d = readdir(dir))) {
		pid = parse_pid(d->d_name);
		if (pid <= 0)
			continue;
		if (nr == cap) {
			cap = cap ? 2 * cap : 256;
			pids = xrealloc(pids, cap * sizeof(*pids));
		}
		pids[nr++] = pid;
	}
	closedir(dir);
	qsort(pids, nr, sizeof(*pids), cmp_long);
	*out = pids;
	return nr;
}

/*
 * The processes that map the device. One PID (only >= 0) must exist and be
 * readable, or this exits 3; in a scan, processes that exit meanwhile are
 * skipped and unreadable ones counted.
 */
static size_t find_procs(long only, struct proc **out, unsigned int *unreadable)
{
	struct proc *procs = NULL, p;
	size_t nr = 0, nr_pids, i;
	long *pids, one = only;
	char path[PATH_MAX];
	struct stat st;
	int err;

	if (only >= 0) {
		snprintf(path, sizeof(path), "%s/%ld", proc_root, only);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			goto no_pid;
		pids = &one;
		nr_pids = 1;
	} else {
		nr_pids = list_pids(&pids);
	}

	for (i = 0; i < nr_pids; i++) {
		memset(&p, 0, sizeof(p));
		p.pid = pids[i];
		err = scan_maps(&p);
		if (err && only >= 0) {
			if (gone(err))
				goto no_pid;
			fprintf(stderr, PROG ": %s/%ld/maps: %s%s\n", proc_root,
				only, strerror(-err),
				denied(err) ? ": run as root" : "");
			exit(EXIT_PID);
		}
		if (denied(err))
			(*unreadable)++;
		else if (err && !gone(err))
			fprintf(stderr, PROG ": %s/%ld/maps: %s\n", proc_root,
				p.pid, strerror(-err));
		if (!p.nr_map && !p.status_at) {
			free(p.map);
			continue;
		}
		read_comm(&p);
		if (p.status_at)
			read_status(&p);
		procs = xrealloc(procs, (nr + 1) * sizeof(*procs));
		procs[nr++] = p;
	}
	if (only < 0)
		free(pids);
	*out = procs;
	return nr;

no_pid:
	fprintf(stderr, PROG ": no process %ld\n", only);
	exit(EXIT_PID);
}

static unsigned long map_size(const struct mapping *m)
{
	return m->end - m->start;
}

/*
 * A name for a terminal, after a space and padded to width: a process
 * picks its own comm, and a user name comes from whatever NSS says, so
 * anything but printable ASCII (escape sequences, spaces that would shift
 * the columns, other encodings) is shown as \xNN.
 */
static void print_name(const char *s, size_t len, int width)
{
	int out = 0;
	size_t i;

	putchar(' ');
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c > ' ' && c < 0x7f && c != '\\') {
			putchar(c);
			out++;
		} else {
			out += printf("\\x%02x", c);
		}
	}
	printf("%*s", width > out ? width - out : 0, "");
}

static void print_users(const struct user *users, size_t nr)
{
	unsigned long kib_per_page = page_size / 1024;
	const char *name;
	size_t i;

	printf("\n%-10s %-16s %10s %12s\n", "UID", "USER", "PAGES", "KiB");
	if (!nr)
		printf("(none)\n");
	for (i = 0; i < nr; i++) {
		name = users[i].name ? users[i].name : "-";
		printf("%-10u", (unsigned int)users[i].uid);
		print_name(name, strlen(name), 16);
		printf(" %10lu %12lu\n", users[i].pages,
		       users[i].pages * kib_per_page);
	}
}

static const char *status_problem(int err)
{
	return err == EBADMSG ? "not a secarena status page" : strerror(err);
}

/* Whether the latest refusal was of a block larger than an arena. */
static bool refused_too_large(const struct secarena_status_page *sp)
{
	return sp->last_refused_size > sp->arena_size;
}

/*
 * What the library of each process says: its arenas, and what it refused.
 * A line per process that was refused memory tells what to raise: the
 * arena size when a block was larger than an arena, else their number (or
 * size). OpenSSL's secure heap takes both from OPENSSL_SECARENA or the
 * secarena section of openssl.cnf.
 */
static void print_library(const struct report *r, bool always)
{
	char arenas[48];
	size_t i;
	bool any = false;

	for (i = 0; i < r->nr_procs; i++)
		any |= r->procs[i].status_at != 0;
	if (!any && !always)
		return;
	printf("%s%-7s %-16s %-12s %9s %12s %12s %8s %12s\n", always ? "" : "\n", "PID", "COMM",
	       "BACKEND", "ARENAS", "ARENA-SIZE", "CAPACITY", "REFUSED", "LAST-REFUSED");
	if (!any)
		printf("(none)\n");
	for (i = 0; i < r->nr_procs; i++) {
		const struct proc *p = &r->procs[i];
		const struct secarena_status_page *sp = &p->status;

		if (!p->status_at)
			continue;
		printf("%-7ld", p->pid);
		print_name(p->comm, p->comm_len, 16);
		if (p->status_err) {
			printf(" status unreadable: %s%s\n", status_problem(p->status_err),
			       p->status_err == EACCES || p->status_err == EPERM ?
			       ": run as root" : "");
			continue;
		}
		snprintf(arenas, sizeof(arenas), "%llu/%llu", (unsigned long long)sp->arenas,
			 (unsigned long long)sp->max_arenas);
		printf(" %-12s %9s %12llu %12llu %8llu %12llu\n",
		       sp->backend[0] ? sp->backend : "-", arenas,
		       (unsigned long long)sp->arena_size, (unsigned long long)sp->capacity,
		       (unsigned long long)sp->refused,
		       (unsigned long long)sp->last_refused_size);
	}
	for (i = 0; i < r->nr_procs; i++) {
		const struct proc *p = &r->procs[i];
		const struct secarena_status_page *sp = &p->status;

		if (!p->status_at || p->status_err || !sp->refused)
			continue;
		printf("\npid %ld refused %llu allocations; the latest asked for %llu bytes",
		       p->pid, (unsigned long long)sp->refused,
		       (unsigned long long)sp->last_refused_size);
		if (refused_too_large(sp))
			printf(", more than an arena of %llu bytes holds: raise size=\n",
			       (unsigned long long)sp->arena_size);
		else
			printf(" while %llu of %llu bytes in %llu of at most %llu arenas were taken: "
			       "raise arenas= or size=\n",
			       (unsigned long long)sp->held_at_last_refusal,
			       (unsigned long long)sp->capacity, (unsigned long long)sp->arenas,
			       (unsigned long long)sp->max_arenas);
		printf("  (for OpenSSL: in OPENSSL_SECARENA or the secarena section of openssl.cnf)\n");
	}
}

static void print_tables(const struct report *r)
{
	char name[NAME_MAX + 16], range[40];
	size_t i, j;

	for (i = 0; i < NR_COUNTERS; i++)
		printf("%-28s %s\n", r->cnt[i].name,
		       r->cnt[i].ok ? r->cnt[i].text : "-");
	for (i = 0; i < r->nr_par; i++) {
		snprintf(name, sizeof(name), "parameters/%s", r->par[i].name);
		printf("%-28s %s\n", name, r->par[i].ok ? r->par[i].text : "-");
	}

	if (r->users_ok)
		print_users(r->users, r->nr_users);

	printf("\n%-7s %-16s %-25s %12s %8s\n",
	       "PID", "COMM", "START-END", "SIZE", "PAGES");
	for (i = 0, j = 0; i < r->nr_procs; i++)
		j += r->procs[i].nr_map;
	if (!j)
		printf("(none)\n");
	for (i = 0; i < r->nr_procs; i++) {
		const struct proc *p = &r->procs[i];

		for (j = 0; j < p->nr_map; j++) {
			const struct mapping *m = &p->map[j];

			snprintf(range, sizeof(range), "%08lx-%08lx",
				 m->start, m->end);
			printf("%-7ld", p->pid);
			print_name(p->comm, p->comm_len, 16);
			printf(" %-25s %12lu %8lu\n", range, map_size(m),
			       map_size(m) / page_size);
		}
	}
	print_library(r, false);
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629), or 0. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	unsigned int cp, min;
	size_t n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not UTF-8. */
	min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void json_ascii(unsigned char c)
{
	if (c == '"' || c == '\\')
		printf("\\%c", c);
	else if (c == '\n')
		fputs("\\n", stdout);
	else if (c == '\t')
		fputs("\\t", stdout);
	else if (c < 0x20 || c == 0x7f)
		printf("\\u%04x", c);
	else
		putchar(c);
}

/*
 * A JSON string must be valid UTF-8, and comm is whatever bytes the
 * process chose, cut at 15 bytes, maybe inside a character: a byte that
 * is not part of a well-formed sequence becomes U+FFFD.
 */
static void json_string(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;

	putchar('"');
	while (i < len) {
		n = s[i] < 0x80 ? 1 : utf8_len(s + i, len - i);
		if (n > 1)
			fwrite(s + i, 1, n, stdout);
		else if (n == 1)
			json_ascii(s[i]);
		else
			fputs("\\ufffd", stdout);
		i += n ? n : 1;
	}
	putchar('"');
}

/* A counter is a number; anything else is kept, as a string. */
static void json_value(const struct value *v)
{
	size_t len = strlen(v->text);

	if (!v->ok)
		fputs("null", stdout);
	else if (len && strspn(v->text, "0123456789") == len &&
		 (v->text[0] != '0' || len == 1))
		fputs(v->text, stdout);
	else
		json_string(v->text, len);
}

static void json_member(const char *indent, const struct value *v, bool last)
{
	fputs(indent, stdout);
	json_string(v->name, strlen(v->name));
	fputs(": ", stdout);
	json_value(v);
	puts(last ? "" : ",");
}

static void json_users(const struct user *users, size_t nr)
{
	size_t i;

	printf("  \"users\": [%s", nr ? "\n" : "");
	for (i = 0; i < nr; i++) {
		printf("    {\"uid\": %u, \"user\": ", (unsigned int)users[i].uid);
		if (users[i].name)
			json_string(users[i].name, strlen(users[i].name));
		else
			fputs("null", stdout);
		printf(", \"pages\": %lu}%s\n", users[i].pages,
		       i + 1 == nr ? "" : ",");
	}
	printf("%s],\n", nr ? "  " : "");
}

/* The status page as an object; null without one; {"error": ...} unread. */
static void json_library(const struct proc *p)
{
	const struct secarena_status_page *sp = &p->status;
	const char *problem;

	if (!p->status_at) {
		printf("null");
		return;
	}
	if (p->status_err) {
		problem = status_problem(p->status_err);
		printf("{\"error\": ");
		json_string(problem, strlen(problem));
		printf("}");
		return;
	}
	printf("{\"backend\": ");
	json_string(sp->backend, strlen(sp->backend));
	printf(", \"arenas\": %llu, \"max_arenas\": %llu, \"arena_size\": %llu, "
	       "\"capacity\": %llu, \"refused\": %llu, \"last_refused_size\": %llu, "
	       "\"held_at_last_refusal\": %llu}",
	       (unsigned long long)sp->arenas, (unsigned long long)sp->max_arenas,
	       (unsigned long long)sp->arena_size, (unsigned long long)sp->capacity,
	       (unsigned long long)sp->refused, (unsigned long long)sp->last_refused_size,
	       (unsigned long long)sp->held_at_last_refusal);
}

static void print_json(const struct report *r)
{
	unsigned long total;
	size_t i, j;

	puts("{\n  \"module\": {");
	for (i = 0; i < NR_COUNTERS; i++)
		json_member("    ", &r->cnt[i], false);
	printf("    \"parameters\": {%s", r->nr_par ? "\n" : "");
	for (i = 0; i < r->nr_par; i++)
		json_member("      ", &r->par[i], i + 1 == r->nr_par);
	printf("%s}\n  },\n", r->nr_par ? "    " : "");

	/* null, like a missing counter, when there is nothing to show. */
	if (r->users_ok)
		json_users(r->users, r->nr_users);
	else
		puts("  \"users\": null,");

	printf("  \"processes\": [%s", r->nr_procs ? "\n" : "");
	for (i = 0; i < r->nr_procs; i++) {
		const struct proc *p = &r->procs[i];

		printf("    {\n      \"pid\": %ld,\n      \"comm\": ", p->pid);
		json_string(p->comm, p->comm_len);
		puts(",\n      \"mappings\": [");
		total = 0;
		for (j = 0; j < p->nr_map; j++) {
			const struct mapping *m = &p->map[j];

			printf("        {\"start\": \"0x%lx\", \"end\": \"0x%lx\", \"size\": %lu, \"pages\": %lu}%s\n",
			       m->start, m->end, map_size(m),
			       map_size(m) / page_size,
			       j + 1 == p->nr_map ? "" : ",");
			total += map_size(m);
		}
		printf("      ],\n      \"size\": %lu,\n      \"library\": ", total);
		json_library(p);
		printf("\n    }%s\n", i + 1 == r->nr_procs ? "" : ",");
	}
	printf("%s],\n", r->nr_procs ? "  " : "");
	printf("  \"unreadable\": %u\n}\n", r->unreadable);
}

/* --library --json: the processes with a status page, nothing of the module. */
static void print_library_json(const struct report *r)
{
	size_t i, n = 0;

	printf("{\n  \"processes\": [");
	for (i = 0; i < r->nr_procs; i++) {
		const struct proc *p = &r->procs[i];

		if (!p->status_at)
			continue;
		printf("%s\n    {\"pid\": %ld, \"comm\": ", n++ ? "," : "", p->pid);
		json_string(p->comm, p->comm_len);
		printf(", \"library\": ");
		json_library(p);
		printf("}");
	}
	printf("%s],\n  \"unreadable\": %u\n}\n", n ? "\n  " : "", r->unreadable);
}

static void print_usage(FILE *f)
{
	fputs("usage: " PROG " [-p PID] [--library] [--json]\n"
	      "  -p, --pid PID  only this process\n"
	      "  -l, --library  only what libsecarena's status pages say (no module needed)\n"
	      "  -j, --json     one JSON object instead of tables\n"
	      "  -h, --help     this help\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "library", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool json = false, library = false, denied_users = false, bad_users = false;
	struct report r = {};
	char dir[PATH_MAX];
	struct stat st;
	long pid = -1;		/* all */
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "p:jlh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = parse_pid(optarg);
			if (pid < 0) {
				fprintf(stderr, PROG ": bad PID '%s'\n", optarg);
				print_usage(stderr);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'l':
			library = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (getenv("SECARENA_STAT_SYSFS"))
		sys_root = getenv("SECARENA_STAT_SYSFS");
	if (getenv("SECARENA_STAT_PROC"))
		proc_root = getenv("SECARENA_STAT_PROC");
	page_size = sysconf(_SC_PAGESIZE);

	/* The libraries' own view needs no module: any backend has a page. */
	if (library) {
		r.nr_procs = find_procs(pid, &r.procs, &r.unreadable);
		if (json)
			print_library_json(&r);
		else
			print_library(&r, true);
		goto out;
	}

	snprintf(dir, sizeof(dir), "%s/class/misc/secarena", sys_root);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": module not loaded (no %s): modprobe secarena\n",
			dir);
		return EXIT_NO_MODULE;
	}
	for (i = 0; i < NR_COUNTERS; i++)
		read_value(&r.cnt[i], dir, counter_names[i]);
	r.nr_par = read_params(&r.par);
	r.users_ok = read_users(dir, &r.users, &r.nr_users, &denied_users,
				&bad_users);

	r.nr_procs = find_procs(pid, &r.procs, &r.unreadable);
	if (json)
		print_json(&r);
	else
		print_tables(&r);
	if (denied_users)
		fprintf(stderr, PROG ": users not readable: run as root\n");
out:
	if (r.unreadable)
		fprintf(stderr, PROG ": %u processes not readable: run as root\n",
			r.unreadable);

	for (i = 0; i < r.nr_procs; i++)
		free(r.procs[i].map);
	free(r.procs);
	for (i = 0; i < r.nr_users; i++)
		free(r.users[i].name);
	free(r.users);
	free(r.par);

	/* A full disk or a closed pipe must not pass for success. */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": writing output: %s\n", strerror(errno));
		return 1;
	}
	/* All else was shown, but users in a form the tool cannot read is an error. */
	return bad_users ? 1 : 0;
}
