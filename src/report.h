/* What the user reads (report_text.c): tbench's progress lines, operation
 * table and Throughput line (parsed by mmtests and LKP), --cost's blocks
 * and the notes on standard error. The --json document: report_json.h. */
#ifndef TBENCH_REPORT_H
#define TBENCH_REPORT_H

#include <stdio.h>

#include "netns.h"
#include "run.h"

/* What the report says besides the figures. */
struct report_options {
	bool sync_open, sync_dirs;   /* dbench's -s and -S: they change the Throughput line */
	bool per_client;             /* --per-client-results */
	bool quiet;                  /* -q: no progress lines */
	const struct netns_state *netns;   /* the run's network namespace and offloads */
};

/* dbench's lines before the run: version, and what it is about to do. */
void report_header(FILE *f, const struct run_config *cfg, const struct report_options *ro);

/* The driver's observer (run.h) for dbench's lines while the run goes:
 * set-up, progress and cleanup lines on out unless quiet, mmtests'
 * "completed in" lines on out, warnings on err. live is its context, and
 * must outlive the run. */
struct report_live {
	FILE *out, *err;
	bool quiet;              /* -q: no set-up, progress or cleanup lines */
	double timelimit;        /* the execute phase's seconds (0: none), for... */
	bool err_is_tty;         /* ...the time left, a minute apart, on a terminal */
};
struct run_observer report_live_observer(struct report_live *live);

/* A whole run's operation table and Throughput line, as dbench prints them. */
void report_summary(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		    const struct run_result *res);
/* What dbench does not print, for standard error: a failed or interrupted
 * run's figures, marked partial, and a warning when a client covered less
 * than one pass of the loadfile. */
void report_notes(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		  const struct run_result *res);

/* --cost: CPU, switches, perf counters and network counters per operation. */
void report_cost(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		 const struct run_result *res);

/* --cost: the noise of the execute phase (src/noise.h), after the cost. */
void report_noise(FILE *f, const struct run_config *cfg, const struct run_result *res);
/* --trace: where the run's tasks spent the execute phase (src/trace.h). */
void report_trace(FILE *f, const struct run_config *cfg, const struct run_result *res);
/* One line (for stderr) when the run was disturbed, with why; else nothing. */
void report_disturbed(FILE *f, const struct run_config *cfg, const struct run_result *res);

/* 0, or the errno of the first failed write to f (stdout) by any report. */
int report_write_error(FILE *f);

#endif
