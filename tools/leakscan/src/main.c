// SPDX-License-Identifier: GPL-2.0
/*
 * leakscan: search the memory of running processes for copies of one private
 * key's secret material, of TLS secrets and of named secrets, telling copies
 * inside secure arenas from the rest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "matcher.h"
#include "report.h"
#include "secrets.h"
#include "util.h"

/* A --keylog or --secret option, kept in command-line order. */
struct source {
	int keylog;
	const char *arg;
};

struct opts {
	int json, verbose, dump, files, no_key;
	struct range *ranges;
	size_t nranges;
	const char *keyfile;	/* NULL with --no-key */
	struct source *sources;
	size_t nsources;
	char **pids;
	size_t npids;
};

static void usage(FILE *f)
{
	fputs("usage: leakscan [OPTION]... KEYFILE PID...\n"
	      "       leakscan [OPTION]... (--key KEYFILE | --no-key) PID...\n"
	      "       leakscan --file [OPTION]... KEYFILE FILE...   (a core dump: reported as pid 0)\n"
	      "       leakscan --dump-components [--keylog F]... [--secret N=H]... KEYFILE | --key KEYFILE | --no-key\n"
	      "                (prints every secret in the clear)\n"
	      "options: --json --verbose --arena-range START-END\n"
	      "         --keylog FILE   NSS key log: TLS secrets and TLS 1.3 record keys\n"
	      "         --secret NAME=HEX   a named secret of 16 to 4096 bytes\n"
	      "         --no-key        no key: needs at least one --keylog or --secret\n"
	      "exit: 0 no hit outside arenas, 1 hits outside arenas, 2 error\n", f);
}

static void usage_error(const char *fmt, const char *arg)
{
	fputs("leakscan: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage(stderr);
	exit(EXIT_ERROR);
}

static int parse_hex(const char *s, const char *end, uint64_t *v)
{
	char *stop;

	if (end == s)
		return -1;
	errno = 0;
	*v = strtoull(s, &stop, 16);
	return errno || stop != end ? -1 : 0;
}

static void add_range(struct opts *o, const char *arg)
{
	const char *dash = strchr(arg, '-');
	struct range r;

	if (!dash || parse_hex(arg, dash, &r.start) ||
	    parse_hex(dash + 1, dash + strlen(dash), &r.end) || r.start >= r.end)
		usage_error("bad --arena-range '%s': want hex START-END, START < END", arg);
	o->ranges = xrealloc(o->ranges, (o->nranges + 1) * sizeof(*o->ranges));
	o->ranges[o->nranges++] = r;
}

static void add_source(struct opts *o, int keylog, const char *arg)
{
	o->sources = xrealloc(o->sources, (o->nsources + 1) * sizeof(*o->sources));
	o->sources[o->nsources].keylog = keylog;
	o->sources[o->nsources++].arg = arg;
}

/* A number where KEYFILE was expected, with secrets: --no-key was meant. */
static int looks_like_pid(const struct opts *o)
{
	return o->nsources && o->keyfile && *o->keyfile &&
	       strspn(o->keyfile, "0123456789") == strlen(o->keyfile);
}

/* The first operand is KEYFILE unless --key or --no-key says otherwise. */
static void take_operands(int argc, char **argv, struct opts *o)
{
	if (o->keyfile && o->no_key)
		usage_error("%s", "--key and --no-key exclude each other");
	if (o->no_key && !o->nsources)
		usage_error("%s", "--no-key needs at least one --keylog or --secret");
	if (!o->keyfile && !o->no_key) {
		if (optind >= argc)
			usage_error("%s", "missing KEYFILE");
		o->keyfile = argv[optind++];
	}
	o->pids = argv + optind;
	o->npids = argc - optind;
	if (!o->dump && !o->npids && looks_like_pid(o))
		usage_error("%s", "missing PID (the first operand is KEYFILE; to scan without a key, give --no-key)");
	if (!o->dump && !o->npids)
		usage_error("%s", o->files ? "missing FILE" : "missing PID");
	if (o->dump && o->npids)
		usage_error("%s", "--dump-components takes no PID or FILE");
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "arena-range", required_argument, NULL, 'a' },
		{ "dump-components", no_argument, NULL, 'D' },
		{ "file", no_argument, NULL, 'F' },
		{ "key", required_argument, NULL, 'k' },
		{ "no-key", no_argument, NULL, 'N' },
		{ "keylog", required_argument, NULL, 'L' },
		{ "secret", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "jva:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'a':
			add_range(o, optarg);
			break;
		case 'D':
			o->dump = 1;
			break;
		case 'F':
			o->files = 1;
			break;
		case 'k':
			if (o->keyfile)
				usage_error("%s", "--key given twice");
			o->keyfile = optarg;
			break;
		case 'N':
			o->no_key = 1;
			break;
		case 'L':
		case 'S':
			add_source(o, c == 'L', optarg);
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_CLEAN);
		default:
			usage(stderr);
			exit(EXIT_ERROR);
		}
	}
	take_operands(argc, argv, o);
}

static pid_t parse_pid(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT32_MAX)
		usage_error("bad PID '%s'", s);
	if (v == getpid())
		usage_error("refusing to scan own pid %s (the scanner holds the key)", s);
	return (pid_t)v;
}

/* Every pid is checked before any is scanned: an error means no report. */
static struct pidscan *open_pids(const struct opts *o)
{
	struct pidscan *scans = xcalloc(o->npids, sizeof(*scans));
	size_t i;

	for (i = 0; i < o->npids; i++)
		if (o->files ? scan_open_file(&scans[i], o->pids[i]) :
		    scan_open(&scans[i], parse_pid(o->pids[i])))
			exit(EXIT_ERROR);
	return scans;
}

static int scan_all(const struct opts *o, struct run *run,
		    const struct matcher *m)
{
	size_t i;

	for (i = 0; i < run->nscans; i++)
		if (scan_run(&run->scans[i], run->ps, m, o->ranges, o->nranges))
			return -1;
	return 0;
}

static int load_targets(const struct opts *o, struct keyinfo *ki,
			struct secrets *sec)
{
	size_t i;
	int ret = 0;

	memset(ki, 0, sizeof(*ki));
	secrets_init(sec, ki);
	if (o->keyfile && key_load(o->keyfile, ki)) {
		if (looks_like_pid(o))
			fprintf(stderr, "leakscan: the first operand is KEYFILE; to scan without a key, give --no-key\n");
		return -1;
	}
	for (i = 0; i < o->nsources && !ret; i++)
		ret = o->sources[i].keylog ? keylog_load(sec, o->sources[i].arg) :
		      named_secret_add(sec, o->sources[i].arg);
	/* the lookup tables hold copies of every secret: not needed any more */
	secrets_done(sec);
	return ret;
}

int main(int argc, char **argv)
{
	struct secrets sec;
	struct keyinfo ki;
	struct patset ps;
	struct matcher *m;
	struct opts o;
	struct run run;
	size_t i;
	int ret;

	parse_args(argc, argv, &o);
	if (load_targets(&o, &ki, &sec)) {
		ret = EXIT_ERROR;
		goto out_targets;
	}
	if (o.dump) {
		dump_components(&ki, stdout);
		ret = EXIT_CLEAN;
		goto out_targets;
	}
	memset(&run, 0, sizeof(run));
	run.scans = open_pids(&o);
	run.nscans = o.npids;
	patset_build(&ps, &ki);
	m = matcher_build(&ps);
	run.keyfile = o.keyfile;
	run.ki = &ki;
	run.sec = &sec;
	run.ps = &ps;
	run.ranges = o.ranges;
	run.nranges = o.nranges;
	run.verbose = o.verbose;
	if (scan_all(&o, &run, m)) {
		ret = EXIT_ERROR;
	} else {
		if (o.json)
			report_json(&run, stdout);
		else
			report_text(&run, stdout);
		ret = run_total(&run, 0) ? EXIT_LEAK : EXIT_CLEAN;
	}
	for (i = 0; i < run.nscans; i++)
		scan_close(&run.scans[i]);
	free(run.scans);
	matcher_free(m);
	patset_free(&ps);
out_targets:
	secrets_free(&sec);
	key_free(&ki);
	free(o.ranges);
	free(o.sources);
	if (fflush(stdout))
		return EXIT_ERROR;
	return ret;
}
