/* The row of runs.csv for one run. Every column is named once, in
 * stats_row.c, with where its value comes from: the run's --json document
 * (written by src/report_json.c), a value the sweep gives (--set NAME=VALUE:
 * backend, offload, read-back offload flags, exit status...), or a rule
 * over both. A value that is missing or null is an empty cell. */
#ifndef TBENCH_STATS_ROW_H
#define TBENCH_STATS_ROW_H

#include <stddef.h>

#include "json.h"
#include "table.h"

/* A knob's cell when the sweep did not vary it: the system's default. */
#define ROW_NOT_VARIED "-"

struct row_setting {
	const char *name, *value;
};

struct row_input {
	const struct json_node *json;           /* NULL: the run left no JSON */
	const struct row_setting *set;          /* --set values; the last of a name wins */
	size_t nset;
	/* CPU seconds (user, system) of a server outside tbench, read before
	 * and after the run: they replace the JSON's "others" figures. */
	int server_cpu_measured;
	double server_start[2], server_end[2];
};

size_t row_ncols(void);
const char *row_col_name(size_t i);
/* 1 when NAME is a column that --set may give. */
int row_col_settable(const char *name);
/* 1 when column i is a figure: a number per run, summarized by default. */
int row_col_is_figure(size_t i);
/* 1 when column i is a knob of the sweep (tbench-stats row --knobs). */
int row_col_is_knob(size_t i);
int row_is_knob(const char *name);
/* A runs.csv or summary.csv older than the knob columns read as this
 * layout: its "tso", "gso" and "gro" were the read-backs, now "tso_read",
 * "gso_read", "gro_read" (renamed when t has no column of the new name). */
void row_upgrade_table(struct table *t);
/* The columns of t that name a point: backend, clients, model (those t
 * has), then every knob column t has. */
struct strlist row_dimensions(const struct table *t);
/* What a summary carries along for its points: the columns of t that name
 * a point, a knob or a read-back and are not among keys. */
struct strlist row_carried(const struct table *t, const struct strlist *keys);
/* The figure column that NAME names: a column name, or the dotted JSON
 * path it is read from ("cost.per_operation.segments_out"). NULL if none. */
const char *row_figure_column(const char *name);

/* A part of a side's time in --trace's breakdown: the parts of a side add
 * up to its tasks' time over the execute phase, per operation. */
struct row_part {
	const char *side, *column, *label;   /* side: "clients" or "servers" */
};
/* The parts, clients' then servers', each side's in the order they stack
 * (user, each group of system calls, softirq, run-queue wait, blocked),
 * at most max into out; how many were written. */
size_t row_trace_parts(struct row_part *out, size_t max);
/* The figures of each side that are counts per operation, not parts of its
 * time (wake-ups, those across CPUs), labelled by their keys. */
size_t row_trace_counts(struct row_part *out, size_t max);

/* 1 when a runs.csv "disturbed" cell says the run was disturbed: not
 * empty (not known) and not "no". */
int row_disturbed(const char *cell);

/* The row's cells, row_ncols() of them; free with row_free. */
char **row_make(const struct row_input *in);
void row_free(char **cells);

#endif
