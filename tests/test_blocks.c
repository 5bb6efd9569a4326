/* The level of an interval (src/stats_blocks.c) against answers worked out
 * by hand below: runs without drift keep the run-level interval they had;
 * a step between blocks of reps, or between sittings, moves the interval to
 * the block means; a comparison takes its level from the per-rep
 * differences when paired (drift common to both sides cancels) and from
 * each side when not. */
#include "config.h"
#include "stats.h"
#include "stats_blocks.h"
#include "stats_summary.h"
#include "table.h"
#include "testlib.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* P(F > f) against identities: F(1, df) is t(df) squared, and F(d, d) has
 * its median at 1. */
static void f_distribution(void)
{
	double t = 2.5;
	CHECK_NEAR(stats_f_sf(t * t, 1, 4), 2 * (1 - stats_t_cdf(t, 4)), 1e-12);
	CHECK_NEAR(stats_f_sf(1, 7, 7), 0.5, 1e-12);
	CHECK_NEAR(stats_f_sf(0, 3, 5), 1, 0);
	CHECK(isnan(stats_f_sf(1, 0, 5)));
}

/* One point (pipe, 1 client) of x over reps, in sittings where given. */
static void summarize_csv(struct summary *s, struct table *t, const char *csv, unsigned flags)
{
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients"), metrics = strlist_split("x");
	struct strlist carry = { 0, NULL };
	CHECK(table_parse(t, "t.csv", csv, strlen(csv), &err) == 0);
	CHECK(summarize_runs(s, t, &keys, &metrics, &carry, flags, &err) == 0);
	strlist_free(&keys);
	strlist_free(&metrics);
}

/* Blocks alike: 13.1 13.0 12.7 | 13.0 13.2 12.8, block means 12.933 and
 * 13.000. SS between 3 (2 x 0.0333^2) = 0.00667 on 1 df, within 0.0867 +
 * 0.08 = 0.1667 on 4: F = 0.16, p = 0.71, no block effect. The interval is
 * the runs' as before: sd 0.18619 (sum of squares 0.17333 over 5),
 * t(0.975, 5) 2.5706 x 0.18619 / sqrt 6 = 0.19539. */
static void no_drift(void)
{
	static const char csv[] = "backend,clients,rep,x\n"
		"pipe,1,1,13.1\npipe,1,2,13.0\npipe,1,3,12.7\npipe,1,4,13.0\npipe,1,5,13.2\npipe,1,6,12.8\n";
	struct table t;
	struct summary s;
	summarize_csv(&s, &t, csv, SUMMARY_BLOCK_REPS(3));
	const struct metric_sum *m = &s.p[0].m[0];
	CHECK_EQ_U(m->level, LEVEL_RUN);
	CHECK_EQ_U(m->n_blocks, 2);
	CHECK_NEAR(m->ci, 0.19539, 5e-5);
	CHECK_NEAR(m->ci, stats_ci_half(m->sd, 6, SUMMARY_CONF), 1e-12);
	CHECK_NEAR(m->ci_runs, m->ci, 0);
	CHECK_EQ_U(m->n_level, 6);
	summary_free(&s);
	table_free(&t);
}

/* A step: 13.1 13.0 12.7 | 14.2 14.0 14.5 (the reps 1-3 and 8-10),
 * in file order shuffled to check that blocks follow the reps. Block means
 * 12.933 and 14.233: SS between 3 x 2 x 0.65^2 = 2.535 on 1 df, within
 * 0.0867 + 0.1267 = 0.2133 on 4: F = 47.5, p = 0.0023: blocks. The sample
 * is the 2 block means: sd 1.3 / sqrt 2 = 0.91924, interval t(0.975, 1)
 * 12.706 x 0.91924 / sqrt 2 = 8.2591, against the runs' 0.7781 (sd
 * 0.74140): two blocks say little, and the interval says so. */
static const char step_csv[] = "backend,clients,rep,x\n"
	"pipe,1,4,14.2\npipe,1,1,13.1\npipe,1,2,13.0\npipe,1,3,12.7\npipe,1,5,14.0\npipe,1,6,14.5\n";

static void step_drift(void)
{
	struct table t;
	struct summary s;
	summarize_csv(&s, &t, step_csv, SUMMARY_BLOCK_REPS(3));
	const struct metric_sum *m = &s.p[0].m[0];
	CHECK_EQ_U(m->level, LEVEL_BLOCK);
	CHECK_EQ_U(m->n_blocks, 2);
	CHECK_EQ_U(m->n_level, 2);
	CHECK_NEAR(m->mean, 13.58333, 1e-5);
	CHECK_NEAR(m->sd, 0.74140, 1e-5);       /* _sd stays the runs' */
	CHECK_NEAR(m->sd_level, 0.91924, 1e-5);
	CHECK_NEAR(m->ci, stats_t_quantile(0.975, 1) * 0.65, 1e-9);
	CHECK_NEAR(m->ci, 8.2591, 1e-4);
	CHECK_NEAR(m->ci_runs, 0.7781, 1e-4);
	CHECK(m->ci > m->ci_runs);
	summary_free(&s);
	/* the F-test itself: 2.535 / (0.21333 / 4) on 1 and 4 df */
	struct block_run r[] = { { 14.2, 4, NULL }, { 13.1, 1, NULL }, { 13.0, 2, NULL },
				 { 12.7, 3, NULL }, { 14.0, 5, NULL }, { 14.5, 6, NULL } };
	struct level_est e = level_estimate(r, 6, 3, SUMMARY_CONF);
	CHECK_NEAR(e.f_p, stats_f_sf(2.535 / (0.64 / 3 / 4), 1, 4), 1e-9);
	CHECK(e.f_p < 0.003 && e.f_p > 0.002);
	CHECK_NEAR(r[0].v, 13.1, 0);            /* sorted by rep */
	/* By default (blocks of max(2, floor(sqrt 6)) = 2 reps): 13.05,
	 * 12.7+14.2, 14.25: within-block spread hides the step (F 1.78 on 2
	 * and 3 df, p 0.31): the runs' interval, and the summary says so. */
	table_free(&t);
	summarize_csv(&s, &t, step_csv, 0);
	CHECK_EQ_U(s.p[0].m[0].n_blocks, 3);
	CHECK_EQ_U(s.p[0].m[0].level, LEVEL_RUN);
	summary_free(&s);
	table_free(&t);
	/* By default, two blocks are no blocks: 4 runs (2 blocks of 2) with a
	 * step stay at the run level, however clear the step (F on 1 and 2 df
	 * would give a block interval on 1 df 5% of the time with none). */
	static const char four[] = "backend,clients,rep,x\n"
		"pipe,1,1,13.1\npipe,1,2,13.0\npipe,1,3,14.2\npipe,1,4,14.3\n";
	summarize_csv(&s, &t, four, 0);
	CHECK_EQ_U(s.p[0].m[0].n_blocks, 1);
	CHECK_EQ_U(s.p[0].m[0].level, LEVEL_RUN);
	summary_free(&s);
	table_free(&t);
	summarize_csv(&s, &t, four, SUMMARY_BLOCK_REPS(2));   /* asked for: two blocks */
	CHECK_EQ_U(s.p[0].m[0].n_blocks, 2);
	CHECK_EQ_U(s.p[0].m[0].level, LEVEL_BLOCK);
	summary_free(&s);
	table_free(&t);
}

/* The same step as two sittings, each starting at rep 1: blocks are the
 * sittings whatever --block-reps says, with the same answer, 8.2591. Two
 * sittings that agree (and one run each, no within-sitting spread to test
 * against) stay at the run level. */
static void sittings(void)
{
	static const char csv[] = "backend,clients,rep,sitting,x\n"
		"pipe,1,1,boot-a 23:00,13.1\npipe,1,2,boot-a 23:00,13.0\npipe,1,3,boot-a 23:00,12.7\n"
		"pipe,1,1,boot-b 01:00,14.2\npipe,1,2,boot-b 01:00,14.0\npipe,1,3,boot-b 01:00,14.5\n";
	static const char lone[] = "backend,clients,rep,sitting,x\n"
		"pipe,1,1,a,13.1\npipe,1,1,b,14.2\n";
	struct table t;
	struct summary s;
	summarize_csv(&s, &t, csv, SUMMARY_BLOCK_REPS(2));
	CHECK_EQ_U(s.p[0].m[0].level, LEVEL_SITTING);
	CHECK_EQ_U(s.p[0].m[0].n_blocks, 2);
	CHECK_NEAR(s.p[0].m[0].ci, 8.2591, 1e-4);
	CHECK_EQ_U(s.p[0].n_ok, 6);
	summary_free(&s);
	table_free(&t);
	summarize_csv(&s, &t, lone, 0);
	CHECK_EQ_U(s.p[0].m[0].level, LEVEL_RUN);
	summary_free(&s);
	table_free(&t);
}

/* A and B both drift by the same step; B = A + 1 + e, e = 0.1 -0.1 0 0
 * 0.1 -0.1. Paired by rep, the differences 1.1 0.9 1.0 1.0 1.1 0.9 have
 * block means 1.0 and 1.0 (F = 0): the run level, mean 1.0, sd 0.089443,
 * interval 2.57058 x 0.036515 = 0.093864. Unpaired, each side's block
 * means are 0.91924 apart in sd (A as step_drift; B 13.933, 15.233):
 * Welch's se sqrt(0.4225 + 0.4225) = 0.91924 on 2 df, interval 4.3027 x
 * 0.91924 = 3.9552, at the block level. */
static const char pair_csv[] = "backend,clients,rep,x\n"
	"a,1,1,13.1\na,1,2,13.0\na,1,3,12.7\na,1,4,14.2\na,1,5,14.0\na,1,6,14.5\n"
	"b,1,1,14.2\nb,1,2,13.9\nb,1,3,13.7\nb,1,4,15.2\nb,1,5,15.1\nb,1,6,15.4\n"
	/* c steady, d steps away from it: the drift is in the difference,
	 * 1 1 1 2 2 2: no spread within blocks, so blocks; means 1 and 2,
	 * se 0.5 on 1 df: 12.706 x 0.5 = 6.3531 about 1.5. */
	"c,1,1,13.0\nc,1,2,13.1\nc,1,3,12.9\nc,1,4,13.0\nc,1,5,13.1\nc,1,6,12.9\n"
	"d,1,1,14.0\nd,1,2,14.1\nd,1,3,13.9\nd,1,4,15.0\nd,1,5,15.1\nd,1,6,14.9\n";

static void compare_drift(void)
{
	struct table t;
	struct summary s;
	summarize_csv(&s, &t, pair_csv, SUMMARY_BLOCK_REPS(3));
	CHECK_EQ_U(s.npoints, 4);
	const struct point *a = &s.p[0], *b = &s.p[1], *c = &s.p[2], *d = &s.p[3];
	struct diff_est e = point_difference(a, b, 1);
	CHECK_EQ_U(e.pairs, 6);
	CHECK_EQ_U(e.level, LEVEL_RUN);
	CHECK_NEAR(e.mean, 1.0, 1e-12);
	CHECK_NEAR(e.ci, 0.093864, 1e-6);
	e = point_difference(a, b, 0);
	CHECK_EQ_U(e.pairs, 0);
	CHECK_EQ_U(e.level, LEVEL_BLOCK);
	CHECK_NEAR(e.mean, 1.0, 1e-12);
	CHECK_NEAR(e.df, 2, 1e-9);
	CHECK_NEAR(e.ci, 3.9552, 1e-4);
	e = point_difference(c, d, 1);
	CHECK_EQ_U(e.pairs, 6);
	CHECK_EQ_U(e.level, LEVEL_BLOCK);
	CHECK_NEAR(e.mean, 1.5, 1e-12);
	CHECK_NEAR(e.ci, 6.3531, 1e-4);
	summary_free(&s);
	table_free(&t);
}

/* A summary read back keeps its level: step_drift's, written as
 * summarize writes it; the block means' sd had back from the interval,
 * 8.2591 x sqrt 2 / 12.706 = 0.91924, so that Welch's test uses it. */
static void read_back(void)
{
	static const char csv[] = "backend,clients,n,x_mean,x_sd,x_ci95,n_blocks,x_ci95_level,x_ci95_runs\n"
		"pipe,1,6,13.58333,0.74140,8.2591,2,block,0.7781\n"
		"tcp,1,6,13.58333,0.74140,0.7781,2,run,0.7781\n";
	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients");
	CHECK(table_parse(&t, "t.csv", csv, strlen(csv), &err) == 0);
	CHECK(summary_read_back(&s, &t, &keys, "x", &err) == 0);
	CHECK_EQ_U(s.p[0].m[0].level, LEVEL_BLOCK);
	CHECK_EQ_U(s.p[0].m[0].n_level, 2);
	CHECK_NEAR(s.p[0].m[0].sd_level, 0.91924, 1e-4);
	CHECK_EQ_U(s.p[1].m[0].level, LEVEL_RUN);
	CHECK_EQ_U(s.p[1].m[0].n_level, 6);
	struct diff_est e = point_difference(&s.p[1], &s.p[0], 0);
	CHECK_EQ_U(e.level, LEVEL_BLOCK);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
}

int main(void)
{
	f_distribution();
	no_drift();
	step_drift();
	sittings();
	compare_drift();
	read_back();
	return test_done("test_blocks");
}
