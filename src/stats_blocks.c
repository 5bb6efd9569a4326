/* Blocks of repetitions and the level of a mean's interval; see stats_blocks.h. */
#include "config.h"
#include "stats_blocks.h"
#include "stats.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *level_name(enum ci_level level)
{
	static const char *const name[] = { "run", "block", "sitting" };
	return level <= LEVEL_SITTING ? name[level] : "run";
}

int level_named(const char *name)
{
	for (int l = LEVEL_RUN; l <= LEVEL_SITTING; l++)
		if (strcmp(name, level_name((enum ci_level)l)) == 0)
			return l;
	return -1;
}

enum { BLOCKS_MIN_REP_BLOCKS = 3 };

size_t blocks_default_reps(size_t n)
{
	size_t b = (size_t)floor(sqrt((double)n));
	return b < 2 ? 2 : b;
}

static const char *sitting_of(const struct block_run *r)
{
	return r->sitting ? r->sitting : "";
}

/* Each run's sitting as an index into blk (the distinct sittings in the
 * order they first appear): how many distinct ones. */
static size_t sitting_blocks(const struct block_run *r, size_t n, size_t *blk)
{
	size_t distinct = 0;
	size_t *first = xrealloc(NULL, (n ? n : 1) * sizeof(size_t));   /* a run of each */
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < distinct && strcmp(sitting_of(&r[first[k]]), sitting_of(&r[i])) != 0)
			k++;
		if (k == distinct)
			first[distinct++] = i;
		blk[i] = k;
	}
	free(first);
	return distinct;
}

/* The blocks of n runs: by sitting into blk when there are 2 or more
 * (*by_sitting set), else how many blocks of b reps. */
static size_t count_blocks(const struct block_run *r, size_t n, size_t b, size_t *blk,
			   int *by_sitting)
{
	size_t sittings = sitting_blocks(r, n, blk);
	*by_sitting = sittings >= 2;
	if (*by_sitting)
		return sittings;
	return n / b ? n / b : n > 0;
}

static int by_order(const void *pa, const void *pb)
{
	const struct block_run *a = pa, *b = pb;
	return (a->order > b->order) - (a->order < b->order);
}

/* Each run's block into blk, runs in order: b consecutive runs a block,
 * a remainder joining the last of the k. */
static void rep_blocks(size_t n, size_t b, size_t k, size_t *blk)
{
	for (size_t i = 0; i < n; i++)
		blk[i] = i / b < k ? i / b : k - 1;
}

/* One-way analysis of variance of the runs in k blocks: the block means
 * into mean[], and the p-value of "the blocks differ more than runs within
 * them" (NaN when no run shares a block: nothing to test against). */
static double anova_p(const struct block_run *r, size_t n, const size_t *blk, size_t k,
		      double *mean)
{
	size_t *cnt = xrealloc(NULL, k * sizeof(size_t));
	double grand = 0, ssb = 0, ssw = 0;
	for (size_t j = 0; j < k; j++)
		cnt[j] = 0, mean[j] = 0;
	for (size_t i = 0; i < n; i++) {
		cnt[blk[i]]++;
		mean[blk[i]] += r[i].v;
		grand += r[i].v;
	}
	grand /= (double)n;
	for (size_t j = 0; j < k; j++) {
		mean[j] /= (double)cnt[j];
		ssb += (double)cnt[j] * (mean[j] - grand) * (mean[j] - grand);
	}
	for (size_t i = 0; i < n; i++)
		ssw += (r[i].v - mean[blk[i]]) * (r[i].v - mean[blk[i]]);
	free(cnt);
	double dfb = (double)(k - 1), dfw = (double)(n - k);
	if (!(dfw > 0))
		return NAN;
	if (ssw == 0)
		return ssb > 0 ? 0 : 1;
	return stats_f_sf((ssb / dfb) / (ssw / dfw), dfb, dfw);
}

/* The interval of the mean from a sample x[0..m-1] (runs or block means). */
static void at_level(struct level_est *e, const double *x, size_t m, double conf)
{
	e->n = m;
	e->sd = m > 1 ? stats_sd_of(x, m) : NAN;
	e->se = m > 1 ? e->sd / sqrt((double)m) : NAN;
	e->df = m > 1 ? (double)(m - 1) : NAN;
	e->ci = stats_ci_half(e->sd, m, conf);
}

struct level_est level_estimate(struct block_run *r, size_t n, size_t reps, double conf)
{
	struct level_est e = { LEVEL_RUN, 0, NAN, 0, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
	double *x = xrealloc(NULL, (n ? n : 1) * sizeof(double));
	size_t *blk = xrealloc(NULL, (n ? n : 1) * sizeof(size_t));

	qsort(r, n, sizeof(*r), by_order);
	for (size_t i = 0; i < n; i++)
		x[i] = r[i].v;
	e.mean = n ? stats_mean_of(x, n) : NAN;
	at_level(&e, x, n, conf);
	e.ci_runs = e.ci;
	e.sd_runs = e.sd;
	int by_sitting;
	size_t b = reps ? reps : blocks_default_reps(n);
	e.n_blocks = count_blocks(r, n, b, blk, &by_sitting);
	/* Two blocks of reps by default would put a block-level interval on
	 * 1 df (t 12.7) on the test's 5% of false alarms: reps are blocked
	 * from three up unless --block-reps asks otherwise. Sittings, which
	 * the user made apart, count from two. */
	if (!by_sitting && !reps && e.n_blocks < BLOCKS_MIN_REP_BLOCKS)
		e.n_blocks = 1;
	if (e.n_blocks >= 2) {
		if (!by_sitting)
			rep_blocks(n, b, e.n_blocks, blk);
		e.f_p = anova_p(r, n, blk, e.n_blocks, x);
		if (e.f_p < BLOCKS_ALPHA) {
			e.level = by_sitting ? LEVEL_SITTING : LEVEL_BLOCK;
			at_level(&e, x, e.n_blocks, conf);
		}
	}
	free(x);
	free(blk);
	return e;
}
