/* Medians over repetitions and paired comparisons, as the benchmarks under
 * bench/ report them: the runs of a CSV grouped by point (key columns) and
 * variant; per group the median of one figure and its distribution-free
 * interval; per variant against a base, the statistic of each pair of runs
 * (equal pair-by value, e.g. rep: run back to back, under the same load),
 * their median and its interval. No assumption of normality: a handful of
 * runs on a shared machine. */
#ifndef TBENCH_STATS_PAIRED_H
#define TBENCH_STATS_PAIRED_H

#include <stddef.h>

#include "stats.h"
#include "table.h"

/* What one pair of runs, variant v and base b, gives. */
enum paired_stat {
	PAIRED_RATIO,   /* v / b (b > 0) */
	PAIRED_COST,    /* 1e6/v - 1e6/b (both > 0): of rates, the µs per operation v adds */
};

struct paired_spec {
	const char *figure;        /* the column of the figure */
	struct strlist keys;       /* the columns that name a point */
	const char *variant;       /* the column that names a variant; NULL: none */
	const char *base;          /* the variant the others pair with; NULL: no pairs */
	const char *pair_by;       /* runs with equal values here pair up */
	enum paired_stat stat;
	struct strlist where;      /* NAME=VALUE: a run counts when all match */
	struct strlist positive;   /* columns a run needs a number > 0 in (-1, 0, nan: failed) */
	struct strlist alias;      /* VALUE=NAME: runs of variant VALUE count as NAME */
	const char *per;           /* a column: the figure x 1e6 / (its value x per_scale) */
	double per_scale;
};

struct paired_group {
	char **key;                /* spec.keys.n values */
	char *variant;             /* "" without a variant column */
	size_t n;                  /* runs */
	double *x;                 /* their figures */
	char **pair;               /* their pair-by values */
	struct median_est fig;     /* of x */
	struct median_est paired;  /* of the pairs' statistic (n: pairs); against the base only */
	double of_medians;         /* the statistic of the two medians; NaN without */
	int is_base;
	size_t nkeys;
	size_t *rank;              /* per key, then the variant: where its value first
	                            * appeared (the order of values that are no number) */
};

struct paired_result {
	size_t n, nkeys;
	struct paired_group *g;    /* points in key order (numbers numerically, else as
	                            * they first appear), variants as they first appear */
};

/* The groups of t under spec. 0, or -1 with err set (a missing column, a
 * malformed --where or alias). */
int paired_compute(struct paired_result *r, const struct table *t, const struct paired_spec *spec,
		   struct errbuf *err);
void paired_free(struct paired_result *r);

#endif
