/* The level a mean's interval is computed at (Kalibera and Jones,
 * "Rigorous benchmarking in reasonable time", 2013): repetitions that drift
 * over time are not independent, and an interval that takes them as such is
 * too narrow. The runs are grouped in blocks (the sittings of a merged
 * dataset, else consecutive reps), a one-way analysis of variance asks
 * whether the blocks differ more than runs within them, and if they do the
 * block means are the sample. See docs/method.md, "Levels of variance". */
#ifndef TBENCH_STATS_BLOCKS_H
#define TBENCH_STATS_BLOCKS_H

#include <stddef.h>

/* LEVEL_RUN is 0: a summary or difference that says nothing is at it. */
enum ci_level { LEVEL_RUN, LEVEL_BLOCK, LEVEL_SITTING };

/* Between-block variance is taken as real when the F-test finds it at this level. */
#define BLOCKS_ALPHA 0.05

/* One run of a point: its figure, its place in time (the rep, or the row)
 * and its sitting (runs.csv's "sitting"; NULL or "" when it has none). */
struct block_run {
	double v, order;
	const char *sitting;
};

struct level_est {
	enum ci_level level;
	size_t n_blocks;        /* blocks the runs fell into; 1 when they could not be
	                         * split, 0 without runs */
	double f_p;             /* the F-test's p-value; NaN when there was none */
	size_t n;               /* the sample at the level: runs, or blocks */
	double mean;            /* the mean of the runs */
	double sd;              /* of the runs, or of the block means; NaN when n < 2 */
	double sd_runs;         /* of the runs */
	double se, df, ci;      /* of the mean at the level; ci at conf; NaN when n < 2 */
	double ci_runs;         /* the interval taking the runs as independent */
};

/* The block size when none is asked: max(2, floor(sqrt(n))), so that the
 * blocks (the interval's df) and the runs within them (the test's) grow
 * alike; see docs/method.md. */
size_t blocks_default_reps(size_t n);
/* The level and interval (at conf) of the mean of r[0..n-1], sorted in
 * place by order. The blocks: the distinct sittings when there are 2 or
 * more, else n / reps runs in order (reps 0: blocks_default_reps), a
 * remainder joining the last; at least 1 (0 for no runs). */
struct level_est level_estimate(struct block_run *r, size_t n, size_t reps, double conf);
/* "run", "block", "sitting". */
const char *level_name(enum ci_level level);
/* The level a name says, or -1. */
int level_named(const char *name);

#endif
