/* bench_core: the core's side-by-side benchmarks.
 *
 *  throughput  tbench's nop backend against a bare loop doing the same
 *              memcpy()s (and against that loop plus one read of tbench's
 *              clock, or of clock_gettime(), an operation), and its pipe
 *              backend against a bare pipe ping-pong of the same sizes;
 *              interleaved, the order reversed every repetition, same
 *              loadfile, same budget.
 *  parse       loadfile_read() of each file given, median of several runs.
 *  rss         resident memory of the real tbench binary at several client
 *              counts, threads and (optionally) --processes.
 *
 * Raw numbers go to --csv, the tables (medians) to --md. Not a test: built
 * with `make bench`, never part of `make check`. This file: the command
 * line, --from-csv's rows, and parse time; bench/core.h says where the
 * rest is. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"
#include "stats.h"
#include "table.h"
#include "util.h"

/* ---- rows of an earlier run's CSV (--from-csv) ---------------------------- */

static struct row *rows;
static size_t n_rows;

static void load_csv(const char *path)
{
	struct table t;
	struct errbuf err;

	if (table_read(&t, path, &err) < 0)
		die("--from-csv: %s", err.msg);
	if (t.ncols < 6)
		die("--from-csv: %s has %zu columns: not a CSV of bench_core's", path, t.ncols);
	rows = calloc(t.nrows ? t.nrows : 1, sizeof(*rows));
	if (!rows)
		die("out of memory");
	for (size_t i = 0; i < t.nrows; i++) {
		char **f = t.rows[i];
		struct row *r = &rows[n_rows++];

		snprintf(r->kind, sizeof(r->kind), "%s", f[0]);
		snprintf(r->bench, sizeof(r->bench), "%s", f[1]);
		r->clients = (unsigned)strtoul(f[2], NULL, 10);
		r->rep = (unsigned)strtoul(f[3], NULL, 10);
		snprintf(r->variant, sizeof(r->variant), "%s", f[4]);
		for (size_t c = 5; c < t.ncols && c < 9; c++)
			if (*f[c])
				r->v[r->n_v++] = strtod(f[c], NULL);
	}
	table_free(&t);
}

size_t csv_row_count(void)
{
	return n_rows;
}

const struct row *csv_row(size_t i)
{
	return &rows[i];
}

const struct row *find_row(const char *kind, const char *bench, unsigned clients,
			   unsigned rep, const char *variant)
{
	const struct row *found = NULL;

	for (size_t i = 0; i < n_rows; i++) {
		const struct row *r = &rows[i];
		if (strcmp(r->kind, kind) == 0 && strcmp(r->bench, bench) == 0 &&
		    r->clients == clients && r->rep == rep &&
		    (!variant || strcmp(r->variant, variant) == 0))
			found = r;
	}
	return found;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench_core: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

double median(const double *v, unsigned n)
{
	double s[64];

	if (n == 0 || n > 64)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	return stats_median(s, n);
}

/* ---- parse time ---------------------------------------------------------- */

static void parse_times(const struct settings *s)
{
	if (s->md)
		fprintf(s->md, "## Parse time (loadfile_read: read + parse + size model)\n\n"
			"| loadfile | bytes | operations | runs | median ms | min ms | max ms |\n"
			"|---|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned f = 0; f < s->n_parse; f++) {
		double ms[64] = { 0 };
		size_t n_ops = 0;
		long long size = -1;
		FILE *fp = fopen(s->parse_files[f], "r");

		if (fp) {
			fseek(fp, 0, SEEK_END);
			size = ftell(fp);
			fclose(fp);
		}
		for (unsigned r = 0; r < s->parse_runs; r++) {
			struct loadfile lf;
			struct errbuf err;
			uint64_t t0 = now_ns();
			/* --from-csv: parsed once, for the operation count only. */
			if (r == 0 || !s->from_csv) {
				if (loadfile_read(s->parse_files[f], NULL, &lf, &err) < 0)
					die("%s", err.msg);
				ms[r] = (now_ns() - t0) / 1e6;
				n_ops = lf.n_ops;
				loadfile_free(&lf);
			}
			if (s->from_csv) {
				const struct row *x = find_row("parse", s->parse_files[f], 0, r + 1, "ms");
				if (!x || x->n_v < 1)
					die("--from-csv: no parse row %u for %s", r + 1, s->parse_files[f]);
				ms[r] = x->v[0];
				continue;
			}
			if (s->csv)
				fprintf(s->csv, "parse,%s,,%u,ms,%.3f,,,\n", s->parse_files[f], r + 1, ms[r]);
		}
		struct median_est m = stats_median_est(ms, s->parse_runs);   /* sorts ms */
		if (!s->from_csv)
			fprintf(stderr, "parse %s: median %.1f ms\n", s->parse_files[f], m.median);
		if (s->md)
			fprintf(s->md, "| `%s` | %lld | %zu | %u | %.1f | %.1f | %.1f |\n",
				s->parse_files[f], size, n_ops, s->parse_runs,
				m.median, m.lowest, m.highest);
	}
	if (s->md)
		fputc('\n', s->md);
}

/* ---- command line -------------------------------------------------------- */

static unsigned parse_list(const char *arg, unsigned *out)
{
	unsigned n = 0;
	char *end;

	for (const char *p = arg; *p && n < MAX_LIST; p = *end ? end + 1 : end) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v == 0 || (*end && *end != ','))
			die("bad list '%s'", arg);
		out[n++] = (unsigned)v;
	}
	return n;
}

static void usage(void)
{
	fputs("usage: bench_core [--loadfile F] [--reps N] [--secs S] [--warmup S]\n"
	      "                  [--clients 1,2,16] [--parse FILE]... [--parse-runs N]\n"
	      "                  [--tbench PATH] [--rss-clients 1,64,512] [--rss-secs S]\n"
	      "                  [--rss-processes] [--csv FILE] [--md FILE]\n"
	      "                  [--only throughput|parse|rss] [--from-csv FILE]\n"
	      "                  [--csv-append FILE]\n"
	      "--from-csv FILE: write the --md tables from an earlier run's CSV (same\n"
	      "settings), measuring nothing but the loadfiles' sizes.\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct settings s = {
		.reps = 5, .secs = 2, .warmup = 0.5, .parse_runs = 7, .rss_secs = 3,
		.do_throughput = 1, .do_parse = 1, .do_rss = 1,
	};
	const char *only = NULL;

	s.n_clients = parse_list("1,2,16", s.clients);
	s.n_rss = parse_list("1,64,512", s.rss_clients);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--rss-processes") == 0) {
			s.rss_processes = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (strcmp(a, "--loadfile") == 0)
			s.loadfile = v;
		else if (strcmp(a, "--reps") == 0)
			s.reps = (unsigned)atoi(v);
		else if (strcmp(a, "--secs") == 0)
			s.secs = atof(v);
		else if (strcmp(a, "--warmup") == 0)
			s.warmup = atof(v);
		else if (strcmp(a, "--clients") == 0)
			s.n_clients = parse_list(v, s.clients);
		else if (strcmp(a, "--parse") == 0 && s.n_parse < MAX_LIST)
			s.parse_files[s.n_parse++] = v;
		else if (strcmp(a, "--parse-runs") == 0)
			s.parse_runs = (unsigned)atoi(v);
		else if (strcmp(a, "--tbench") == 0)
			s.tbench = v;
		else if (strcmp(a, "--rss-clients") == 0)
			s.n_rss = parse_list(v, s.rss_clients);
		else if (strcmp(a, "--rss-secs") == 0)
			s.rss_secs = atof(v);
		else if (strcmp(a, "--csv") == 0) {
			if (!(s.csv = fopen(v, "w")))
				die("%s: %s", v, strerror(errno));
			fprintf(s.csv, "kind,benchmark,clients,rep,variant,value,value2,value3,value4\n");
		} else if (strcmp(a, "--md") == 0) {
			if (!(s.md = fopen(v, "w")))
				die("%s: %s", v, strerror(errno));
		} else if (strcmp(a, "--csv-append") == 0) {
			if (!(s.csv = fopen(v, "a")))
				die("%s: %s", v, strerror(errno));
		} else if (strcmp(a, "--only") == 0)
			only = v;
		else if (strcmp(a, "--from-csv") == 0) {
			load_csv(v);
			s.from_csv = 1;
		}
		else
			usage();
	}
	if (s.reps < 1 || s.reps > 64 || s.parse_runs < 1 || s.parse_runs > 64 || s.secs <= 0)
		die("--reps and --parse-runs: 1 to 64; --secs above 0");
	if (only) {
		s.do_throughput = strcmp(only, "throughput") == 0;
		s.do_parse = strcmp(only, "parse") == 0;
		s.do_rss = strcmp(only, "rss") == 0;
	}
	if (!s.loadfile)
		s.loadfile = TBENCH_SRCDIR "/loadfiles/default.txt";
	signal(SIGPIPE, SIG_IGN);
	/* Now, once: tbench's runs and the bare+clock loop read the same clock. */
	struct errbuf err;
	if (clock_init(&err) < 0)
		die("%s", err.msg);

	if (s.do_parse)
		parse_times(&s);
	if (s.do_throughput)
		throughput(&s);
	if (s.do_rss && (s.tbench || s.from_csv))
		rss(&s);
	if (s.csv)
		fclose(s.csv);
	if (s.md)
		fclose(s.md);
	return 0;
}
