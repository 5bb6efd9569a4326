/* Runs grouped into points (equal key columns, e.g. backend, clients,
 * offload), and what is computed from points: the summary of each metric,
 * the comparison of two sweeps, the transport cost against a baseline.
 * Pure functions: tables in, rows out; printing is the caller's. */
#ifndef TBENCH_STATS_SUMMARY_H
#define TBENCH_STATS_SUMMARY_H

#include <stddef.h>

#include "stats.h"
#include "stats_blocks.h"
#include "stats_model.h"
#include "table.h"
#include "util.h"

/* Confidence level of every interval: 95%, the "_ci95" columns. */
#define SUMMARY_CONF 0.95

struct metric_sum {
	size_t n;
	double mean, sd, ci;    /* sd (of the runs), ci (half-width of the interval, at
	                         * level): NaN when n < 2 */
	enum ci_level level;    /* where ci's variance was taken (stats_blocks.h) */
	size_t n_blocks;        /* the blocks the runs fell into */
	double ci_runs;         /* the interval taking the runs as independent */
	size_t n_level;         /* ci's sample: n at the run level, else the blocks */
	double sd_level;        /* its standard deviation: sd, or the block means' */
};

/* The first metric's value of each ok run with its repetition (runs.csv's
 * "rep"), so that two points can be differenced run by run; empty when the
 * input has no rep column or is a summary. */
struct rep_values {
	size_t n;
	char **rep;
	char **sitting;         /* runs.csv's "sitting", "" without one */
	double *v;
	size_t *line;           /* the line of the input each run is on, for messages */
	size_t block_reps;      /* --block-reps: 0 for the default */
};

struct point {
	char **key;             /* the key columns' values */
	char **carry;           /* carried columns: the value all ok runs share, else "mixed" */
	size_t n_ok, n_failed;
	size_t n_disturbed;     /* ok runs left out: judged disturbed (runs.csv's "disturbed") */
	struct metric_sum *m;   /* one per metric */
	size_t *rank;           /* per key: first row with this value (the order of the sweep) */
	struct rep_values reps;
};

struct summary {
	struct strlist keys, carry, metrics;
	size_t npoints;
	struct point *p;
};

/* The rows of runs grouped by the key columns, each metric summarized over
 * the rows whose "status" is "ok" (every row when there is no status
 * column; other rows count in n_failed) and that were not disturbed (their
 * "disturbed" cell, where there is one: those count in n_disturbed). Points are ordered key by key:
 * numbers numerically, other values in the order they first appear.
 * A missing key column is an error; missing metric or carried columns are
 * left out of the summary. 0, or -1 with err set. */
/* flags: SUMMARY_KEEP_DISTURBED counts disturbed ok runs as ok (a machine
 * known to be shared, whose figures are wanted all the same);
 * SUMMARY_BLOCK_REPS(b), reps a block when the runs have no sittings
 * (level_estimate; 0, the default: blocks_default_reps). Each metric's
 * interval is at the level level_estimate chooses. */
enum { SUMMARY_KEEP_DISTURBED = 1 };
#define SUMMARY_BLOCK_REPS(b) ((unsigned)(b) << 8)
#define SUMMARY_BLOCK_REPS_OF(flags) ((size_t)((flags) >> 8))
int summarize_runs(struct summary *s, const struct table *runs, const struct strlist *keys,
		   const struct strlist *metrics, const struct strlist *carry, unsigned flags,
		   struct errbuf *err);
/* A summary.csv read back (key columns, n, n_failed, n_disturbed where it
 * has it, and metric's _mean, _sd and _ci95; _ci95_level and n_blocks
 * where it has them, the interval's df then blocks - 1), points in file order. The metric's n is n, but 1 where
 * it has no _sd and 0 where it has no _mean: a figure some ok runs lack. */
int summary_read_back(struct summary *s, const struct table *t, const struct strlist *keys,
		      const char *metric, struct errbuf *err);
/* Either of the two, whichever t is: a summary when it has "<metric>_mean". */
int summarize_any(struct summary *s, const struct table *t, const struct strlist *keys,
		  const char *metric, unsigned flags, struct errbuf *err);
void summary_free(struct summary *s);
/* The point with these key values, or NULL. */
const struct point *summary_find(const struct summary *s, char *const *key);

/* The first metric of point b minus that of point a. Paired (the
 * Student-t interval of the mean of the per-run differences, n - 1 df)
 * when by_rep is set and their ok runs pair up by rep (and sitting): the
 * same reps on both sides, each once, at least 2; the differences then at
 * the level level_estimate chooses for them (drift common to both sides
 * cancels in them). Else unpaired (Welch), each side at its own level;
 * the difference's level the higher. */
enum pairing {
	PAIR_NONE,              /* unpaired: Welch's difference of the means */
	PAIR_BY_REP,            /* the mean of the per-rep differences b - a */
	PAIR_RATIO,             /* the mean of the per-rep ln(b / a): log_ratio */
};
struct diff_est point_difference(const struct point *a, const struct point *b, enum pairing by_rep);
/* "paired", "paired-ratio" or "unpaired", for the method columns. */
const char *diff_method(const struct diff_est *d);

struct comparison_row {
	const struct point *a, *b;      /* one may be NULL: the point is only in the other */
	double change_pct;              /* 100 (mean_b / mean_a - 1); NaN unless both > 0 */
	struct diff_est d;              /* mean_b - mean_a, its interval and MDE */
	double change_lo_pct, change_hi_pct, mde_pct;   /* d's interval and MDE against mean_a;
	                                 * of a log ratio, 100 (exp(x) - 1) of its mean, ends, MDE */
	double half_width_pct;          /* (change_hi_pct - change_lo_pct) / 2 */
	struct welch w;                 /* t, df, p: d's (Welch's, or the paired test's) */
	const char *verdict;            /* "yes", "no", "n/a", "only in A", "only in B",
					 * "sittings" (compare_sittings) */
	struct equiv_est eq;            /* against --equivalent's margin: compare_equivalence */
	size_t runs_to_resolve;         /* --resolve: compare_resolve; 0 none */
};

struct comparison {
	size_t nrows;
	struct comparison_row *rows;    /* A's points in A's order, then those only in B */
	size_t nratio;                  /* common points with both means > 0 */
	double geomean;                 /* geometric mean of B/A over those */
	size_t ncommon, nsig, nup, ndown;
	size_t nsittings;               /* significant, but within the sittings' difference */
};

/* Compares the first metric of two summaries with the same keys, point by
 * point: Welch's t-test, significant when p < alpha. */
/* The keys two inputs (runs.csv or summary.csv tables) are compared on:
 * backend, clients, model when both have it, and every knob column either
 * has; a knob column one of them lacks is added to it, "-" in every row
 * (an older sweep did not vary it). */
struct strlist comparison_keys(struct table *a, struct table *b);
/* When no point of a is in b (and both have points): the dimensions whose
 * values differ, "mtu (A: 1500; B: 9000); model (A: ...; B: ...)";
 * else NULL. Free it. */
char *comparison_mismatch(const struct summary *a, const struct summary *b);
/* by_rep: pair the runs of A and B by rep (point_difference) where they
 * can be; only when A and B ran interleaved, repetition by repetition.
 * PAIR_RATIO: the pairs' log ratios (every run above 0: compare_ratio_check
 * first), the change and its interval 100 (exp(x) - 1) of theirs. */
void compare_summaries(struct comparison *c, const struct summary *a, const struct summary *b,
		       double alpha, enum pairing by_rep);
/* The sittings of A and B differ by sittings_pct % (a yardstick's change,
 * its sign ignored): a significant change whose interval lies within
 * +-|sittings_pct| % of A's mean is not called significant ("sittings"),
 * and leaves nsig, nup and ndown for nsittings. */
void compare_sittings(struct comparison *c, double sittings_pct);
/* Each side's figure over its own sitting's yardstick: the sittings differ
 * by y_pct % (B's yardstick against A's), with 95% interval y_lo_pct to
 * y_hi_pct. A point's change becomes that of (B/A) / (yB/yA), its interval
 * the relative half-widths of B/A and of yB/yA combined in quadrature
 * (first-order delta method), significant when it excludes 0; t, p and mde
 * have no meaning there (NaN), nor has the difference's mde. */
void compare_relative(struct comparison *c, double y_pct, double y_lo_pct, double y_hi_pct);
/* For PAIR_RATIO: 0 when every run of s (read from the file name) is
 * above 0, else -1 with err naming the file and line of the first not. */
int compare_ratio_check(const struct summary *s, const char *name, struct errbuf *err);
void comparison_free(struct comparison *c);

struct cost_row {
	const struct point *p, *base;
	double cost_us, ci_us;          /* ci: half-width of the 95% interval */
};

/* Transport cost per operation of every point of s (keys backend, clients,
 * then any; metric ops_per_sec): 1e6/ops(point) - 1e6/ops(baseline) at the
 * same client count, from the baseline's point that shares the most of the
 * point's other keys.
 * The interval combines both by the delta method. Returns the number of rows
 * in *rows (free it); points without a baseline are left out. */
size_t cost_rows(struct cost_row **rows, const struct summary *s, const char *baseline);

/* One layer of an operation's cost at one client count: the mean of a
 * level (a point "backend[:setting]") minus the mean of the level below. */
struct layer_row {
	const char *clients;            /* the client count, as the key holds it */
	const char *minuend, *subtrahend; /* levels; subtrahend "" for the first */
	char *name, *label;             /* "copy_wakeup", "copy + wake-up (pipe − nop)" */
	enum path_relation relation;    /* a layer, or different paths (stats_model.h) */
	const struct point *a, *b;      /* their points; b NULL for the first */
	double mean;                    /* mean(a) - mean(b) */
	struct diff_est d;              /* its interval: paired by rep where the runs
	                                 * pair up, else Welch's (point_difference) */
	double ci, df;                  /* d's half-width of the 95% interval and df */
	double bottom, top;             /* mean(b) (0 for the first) and mean(a): the stack */
	struct equiv_est eq;            /* the layer against --equivalent's margin:
	                                 * layers_equivalence; n/a for the first */
};

/* The decomposition of the first metric of s (keys backend, clients, then
 * any) along levels (e.g. nop,tcp:off,tcp:on; a setting is an offload or
 * NAME=VALUE keys joined by ':', tcp:mtu=1500:offload=off), per client
 * count in the order of s: each level present at that count minus the one
 * present below it; the first alone, with its own Student-t interval.
 * Levels missing at a count are skipped, so a layer may span two steps.
 * Each row is named by m's step where it is one, and says whether it is a
 * layer or a difference of different paths (model_relation); it points at
 * levels' strings. Returns the
 * number of rows in *rows (free with layer_rows_free). */
size_t decompose(struct layer_row **rows, const struct summary *s, const struct strlist *levels,
		 const struct decomp_model *m);
/* The whole model at each client count: the stack as decompose() takes it,
 * then every other step of m whose two levels the count has. The rows
 * point at m's levels: free them before m. */
size_t decompose_model(struct layer_row **rows, const struct summary *s,
		       const struct decomp_model *m);
void layer_rows_free(struct layer_row *rows, size_t n);

/* --equivalent MARGIN: "3%" (percent of the reference mean: A's in a
 * comparison, the level below in a decomposition) or "0.5" (the figure's
 * units). 0, or -1 with err saying what is wrong. */
struct equiv_margin {
	double value;           /* > 0 */
	int relative;           /* value is a percentage */
};
int equiv_margin_parse(struct equiv_margin *m, const char *text, struct errbuf *err);

/* The equivalence of d within +-m at level alpha (stats_equivalence), its
 * interval and shown margin in m's units: percent of ref when relative
 * (n/a unless ref > 0). */
struct equiv_est equivalence_of(const struct diff_est *d, double ref, const struct equiv_margin *m,
				double alpha);
/* --resolve EFFECT: every compared row's runs_to_resolve, the runs a side
 * two sweeps with A's and B's standard deviations would need for an MDE of
 * EFFECT (percent of A's mean when relative): stats_runs_to_resolve, at
 * most COMPARE_RESOLVE_MAX; 0 where a side has fewer than 2 runs. Of a
 * log ratio, the standard deviations of the runs' logs and EFFECT a rise
 * of ln(1 + EFFECT/100) (percent only). */
#define COMPARE_RESOLVE_MAX 100000
void compare_resolve(struct comparison *c, const struct equiv_margin *effect);
/* Fills every compared row's eq, B - A against A's mean; a log ratio's
 * by stats_equivalence_ratio (a margin in percent only, else n/a). */
void compare_equivalence(struct comparison *c, const struct equiv_margin *m, double alpha);
/* Fills every layer's eq at 1 - SUMMARY_CONF: the layer (minuend minus
 * subtrahend) against the subtrahend's mean; the first level has none. */
void layers_equivalence(struct layer_row *rows, size_t n, const struct equiv_margin *m);

/* A verdict for bisection, "FIGURE<THRESHOLD[%]" or "FIGURE>THRESHOLD[%]":
 * '<' is bad when B - A lies below the threshold (a drop bigger than it),
 * '>' when above; with '%' the threshold is a change in percent of A. */
struct verdict_rule {
	char *figure;
	int below;              /* 1 for '<', 0 for '>' */
	double threshold;
	int relative;           /* the threshold in percent of A's mean */
};

enum verdict { VERDICT_GOOD, VERDICT_BAD, VERDICT_UNSURE };

/* 0, or -1 with err saying what is wrong with text. Free with verdict_rule_free. */
int verdict_rule_parse(struct verdict_rule *r, const char *text, struct errbuf *err);
void verdict_rule_free(struct verdict_rule *r);
/* A compared point against the rule, from the 95% interval of its change
 * (*lo, *hi: in percent when the rule is relative): bad when the interval
 * lies wholly beyond the threshold, good when wholly on the near side of
 * it, else unsure (the interval straddles it, or there is none). */
enum verdict verdict_of(const struct comparison_row *row, const struct verdict_rule *r,
			double *lo, double *hi);

#endif
