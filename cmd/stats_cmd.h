/* What tbench-stats's subcommands share (stats_cmd.c): the message and
 * exit status of a bad command line or input, the option parser, and
 * reading a results directory, runs.csv or summary.csv as a table or a
 * summary. One file per family of subcommands: stats_summary_cmd.c
 * (summarize, cost, decompose), stats_compare_cmd.c (compare),
 * stats_row_cmd.c (row, select, proc-cpu), stats_merge_cmd.c (merge),
 * stats_paired_cmd.c (paired, substitute);
 * tbench_stats.c is the main. */
#ifndef TBENCH_STATS_CMD_H
#define TBENCH_STATS_CMD_H

#include <popt.h>
#include <stdio.h>

#include "stats_summary.h"
#include "table.h"

#define STATS_PROG "tbench-stats"

/* "tbench-stats: " and the message on standard error, then exit(code). */
__attribute__((format(printf, 2, 3), noreturn))
void die(int code, const char *fmt, ...);

/* The command line of subcommand cmd (argv[0]) through popt: table's
 * entries (POPT_TABLEEND last) store their values, except those with a
 * val, the repeatable ones (--where), each value of which goes to
 * repeated(ctx, val, value). The operands go to operands[0..max); returns
 * how many. An unknown option (named), a missing value or more than max
 * operands is bad usage. Values and operands live until the process ends. */
int stats_options(const char *cmd, int argc, char **argv, const struct poptOption *table,
		  void (*repeated)(void *ctx, int val, const char *value), void *ctx,
		  const char **operands, int max);

/* A CSV file as a table, an older layout read as the new (row_upgrade_table). */
void read_table(struct table *t, const char *path);
/* The keys given (comma-separated), or those of the file (row_dimensions). */
struct strlist keys_of(const char *keys, const struct table *t);
/* --block-reps B of subcommand cmd, as given (NULL: not given): the reps
 * of a block of level_estimate, 2 or more; bad usage else. */
void block_reps_set(const char *cmd, const char *text);
/* $TBENCH_KEEP_DISTURBED=1: disturbed runs count as ok in every summary;
 * and --block-reps's, where it was given. */
unsigned summary_flags(void);
/* Disturbed runs were left out of the summary: a note on standard error. */
void note_disturbed(const struct summary *s, const char *file);
/* A results directory (its runs.csv, else its summary.csv), a runs.csv or
 * a summary.csv, read as a table. */
void load_results(const char *arg, struct table *t);
/* A table of results as a summary of one metric; the table is freed. */
void summary_of(struct table *t, const struct strlist *keys, const char *metric, struct summary *s);
/* One input of cost or decompose as a summary of one metric. */
void load_summary(const char *arg, const char *keys, const char *metric, struct summary *s);
/* A figure named by its column or by the JSON path it is read from; a
 * name of neither is taken as it is (a column of some other CSV). */
const char *figure_named(const char *name);

/* --equivalent MARGIN of subcommand cmd parsed into m; bad usage if it is not one. */
void equivalent_option(const char *cmd, const char *text, struct equiv_margin *m);
/* "±1.84%" (or in the figure's units without '%'), or "-" when v is not finite. */
void fmt_margin(char *buf, size_t len, const struct equiv_margin *m, double v);
/* --equivalent's CSV columns, after the older ones so that readers by
 * position keep working: the verdict, the margin, the interval it was
 * judged on and the least margin it could have shown, "_pct" when the
 * margin is one. Each writes nothing when m->value is 0 (no option); the
 * caller ends the line. */
void put_equivalence_head(FILE *o, const struct equiv_margin *m);
void put_equivalence(FILE *o, const struct equiv_margin *m, const struct equiv_est *e);
/* The same without the line's end, for a table with columns after them. */

/* The subcommands: argv[0] is the subcommand's name. Each exits on an
 * error (die) and returns when its output is written. */
void cmd_summarize(int argc, char **argv);
void cmd_cost(int argc, char **argv);
void cmd_decompose(int argc, char **argv);
void cmd_compare(int argc, char **argv);
void cmd_row(int argc, char **argv);
void cmd_select(int argc, char **argv);
void cmd_proc_cpu(int argc, char **argv);
void cmd_merge(int argc, char **argv);
void cmd_paired(int argc, char **argv);
void cmd_substitute(int argc, char **argv);

#endif
