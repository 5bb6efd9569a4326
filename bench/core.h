/* What bench_core's parts share: the settings of a run, the rows of an
 * earlier run's CSV (--from-csv), and the parts themselves: throughput
 * (core_throughput.c, its bare loops in core_bare.c), parse time
 * (bench_core.c) and resident memory (core_rss.c). */
#ifndef TBENCH_BENCH_CORE_H
#define TBENCH_BENCH_CORE_H

#include <stdbool.h>
#include <stdio.h>

#include "loadfile.h"

#define MAX_LIST 16

struct settings {
	const char *loadfile;
	unsigned reps;
	double secs, warmup;
	unsigned clients[MAX_LIST], n_clients;
	const char *parse_files[MAX_LIST];
	unsigned n_parse, parse_runs;
	const char *tbench;
	unsigned rss_clients[MAX_LIST], n_rss;
	double rss_secs;
	int rss_processes;
	FILE *csv, *md;
	int do_throughput, do_parse, do_rss;
	int from_csv;          /* --from-csv: tables from a CSV, nothing measured */
};

/* The CSV's columns: kind,benchmark,clients,rep,variant,value,...,value4. */
struct row {
	char kind[16], bench[256], variant[32];
	unsigned clients, rep;
	double v[4];
	int n_v;
};

/* The rows of --from-csv's file; find_row(): the last that matches (a
 * repeated measurement replaces an earlier one), variant NULL: any. */
size_t csv_row_count(void);
const struct row *csv_row(size_t i);
const struct row *find_row(const char *kind, const char *bench, unsigned clients,
			   unsigned rep, const char *variant);

__attribute__((format(printf, 1, 2), noreturn))
void die(const char *fmt, ...);
/* The median of n (at most 64) values, which are not changed. */
double median(const double *v, unsigned n);

/* ops_per_cpu: every operation of the run (warm-up too) per CPU-second the
 * process used for it (all threads, user + system, set-up included). Stolen
 * time and other tenants' load do not change it; what the harness adds does. */
struct sample {
	double ops_per_sec, mb_per_sec, secs, ops_per_cpu;
	bool measured;
};

/* Process CPU seconds so far, every thread, user + system. */
double cpu_secs(void);

/* n bare loops over lf's operations, as tbench's n clients of backend
 * ("nop": memcpy()s, "pipe": a pipe ping-pong), with_clock reading a
 * clock once an operation (CLOCK_NONE, CLOCK_RUN, CLOCK_GETTIME). */
enum { CLOCK_NONE, CLOCK_RUN, CLOCK_GETTIME };
struct sample run_bare(const struct settings *s, const struct loadfile *lf,
		       const char *backend, unsigned n, int with_clock);

void throughput(const struct settings *s);
void rss(const struct settings *s);

#endif
