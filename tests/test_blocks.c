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

/* ---- the paired ratio: compare --paired --ratio ------------------------------------ */

/* Two one-point sweeps a and b (pipe, 1 client, x over reps) compared
 * pair by pair on ln(b / a); tables and summaries for the caller to free. */
struct ratio_case {
	struct table t[2];
	struct summary s[2];
	struct comparison c;
};

static const struct comparison_row *ratio_compare(struct ratio_case *rc, const char *a,
						  const char *b, unsigned flags)
{
	summarize_csv(&rc->s[0], &rc->t[0], a, flags);
	summarize_csv(&rc->s[1], &rc->t[1], b, flags);
	compare_summaries(&rc->c, &rc->s[0], &rc->s[1], 0.05, PAIR_RATIO);
	CHECK_EQ_U(rc->c.nrows, 1);
	return &rc->c.rows[0];
}

static void ratio_free(struct ratio_case *rc)
{
	comparison_free(&rc->c);
	for (int i = 0; i < 2; i++) {
		summary_free(&rc->s[i]);
		table_free(&rc->t[i]);
	}
}

#define RATIO_HEAD "backend,clients,rep,x\n"

/* B = A x 1.05 exactly: every ln(b / a) is ln 1.05 (105/100, 210/200 and
 * 420/400 are the one double), sd 0: a change of 5% with no width. */
static void ratio_exact(void)
{
	struct ratio_case rc;
	const struct comparison_row *r = ratio_compare(&rc, RATIO_HEAD "pipe,1,1,100\npipe,1,2,200\npipe,1,3,400\n",
						       RATIO_HEAD "pipe,1,1,105\npipe,1,2,210\npipe,1,3,420\n", 0);
	CHECK_STR(diff_method(&r->d), "paired-ratio");
	CHECK_EQ_U(r->d.pairs, 3);
	CHECK_NEAR(r->d.mean, log(1.05), 1e-15);
	CHECK_NEAR(r->change_pct, 5.0, 1e-9);
	CHECK_NEAR(r->change_lo_pct, 5.0, 1e-9);
	CHECK_NEAR(r->change_hi_pct, 5.0, 1e-9);
	CHECK_NEAR(r->half_width_pct, 0, 1e-12);
	CHECK_STR(r->verdict, "yes");
	ratio_free(&rc);
}

/* d = ln 1.02, ln 1.04, ln 1.03 (A 100 each; B 102, 104, 103): mean
 * (0.0198026 + 0.0392207 + 0.0295588) / 3 = 0.0295274, sd 0.0097091,
 * se sd / sqrt 3 = 0.0056055, t(0.975, 2) = 4.3027: half-width in ln
 * 0.0241187. The change 100 (exp(0.0295274) - 1) = 2.99676%, its ends
 * 100 (exp(0.0295274 -+ 0.0241187) - 1) = 0.54233% and 5.51111%,
 * half_width_pct (5.51111 - 0.54233) / 2 = 2.48439; t = 0.0295274 /
 * 0.0056055 = 5.2675 on 2 df. The MDE (4.3027 + t(0.80, 2) 1.0607) x se
 * = 0.030065 in ln, 100 (exp(0.030065) - 1) = 3.0522%. */
static void ratio_by_hand(void)
{
	struct ratio_case rc;
	const struct comparison_row *r = ratio_compare(&rc, RATIO_HEAD "pipe,1,1,100\npipe,1,2,100\npipe,1,3,100\n",
						       RATIO_HEAD "pipe,1,1,102\npipe,1,2,104\npipe,1,3,103\n", 0);
	CHECK_EQ_U(r->d.level, LEVEL_RUN);
	CHECK_NEAR(r->d.mean, 0.0295274, 1e-7);
	CHECK_NEAR(r->d.se, 0.0056055, 1e-7);
	CHECK_NEAR(r->d.ci, 0.0241187, 1e-7);
	CHECK_NEAR(r->d.df, 2, 0);
	CHECK_NEAR(r->w.t, 5.2675, 1e-4);
	CHECK_NEAR(r->change_pct, 2.99676, 1e-5);
	CHECK_NEAR(r->change_lo_pct, 0.54233, 1e-5);
	CHECK_NEAR(r->change_hi_pct, 5.51111, 1e-5);
	CHECK_NEAR(r->half_width_pct, 2.48439, 1e-5);
	CHECK_NEAR(r->mde_pct, 100 * expm1((4.30265 + stats_t_quantile(0.80, 2)) * 0.0056055), 1e-3);
	CHECK_STR(r->verdict, "yes");
	ratio_free(&rc);
}

/* A against itself to within 0.2%: d = ln(B/A) of A 100 101 99 100 102 98
 * and B 100.2 100.8 99.1 99.9 102.1 97.9 has mean -2.68e-6 and sd
 * 0.00154556, se 0.00063097; the 90% interval (two one-sided tests at 5%)
 * -2.68e-6 -+ t(0.95, 5) 2.01505 x se, in percent -0.12733% to +0.12696%:
 * equivalent within 1%, shown 0.12733%; within 0.1% the noise cannot tell
 * (not significant either). */
static void ratio_equivalent(void)
{
	struct ratio_case rc;
	const struct comparison_row *r = ratio_compare(&rc,
		RATIO_HEAD "pipe,1,1,100\npipe,1,2,101\npipe,1,3,99\npipe,1,4,100\npipe,1,5,102\npipe,1,6,98\n",
		RATIO_HEAD "pipe,1,1,100.2\npipe,1,2,100.8\npipe,1,3,99.1\npipe,1,4,99.9\npipe,1,5,102.1\n"
		"pipe,1,6,97.9\n", 0);
	struct equiv_margin m = { 1, 1 };
	compare_equivalence(&rc.c, &m, 0.05);
	CHECK_EQ_U(r->d.level, LEVEL_RUN);
	CHECK_STR(equivalence_word(r->eq.verdict), "equivalent");
	CHECK_NEAR(r->eq.lo, -0.12733, 1e-5);
	CHECK_NEAR(r->eq.hi, 0.12696, 1e-5);
	CHECK_NEAR(r->eq.shown, 0.12733, 1e-5);
	m.value = 0.1;
	compare_equivalence(&rc.c, &m, 0.05);
	CHECK_STR(equivalence_word(r->eq.verdict), "cannot tell");
	m = (struct equiv_margin){ 1, 0 };      /* a margin in the figure's units has no ratio */
	compare_equivalence(&rc.c, &m, 0.05);
	CHECK_STR(equivalence_word(r->eq.verdict), "n/a");
	ratio_free(&rc);
}

/* The margin is symmetric in percent, so a little asymmetric in ln: at 2%
 * the bounds are ln 0.98 = -0.020203 and ln 1.02 = +0.019803. A 90%
 * interval of ln 0.981 to ln 1.019 (-1.9% to +1.9%) lies within them; one
 * of ln 0.979 to ln 1.0199 (-2.1%: below ln 0.98) does not, though its
 * ends in ln, -0.021224 and +0.019705, are each within 0.0203 of 0. */
static void ratio_margin_bounds(void)
{
	double t = stats_t_quantile(0.95, 10);
	struct diff_est d = stats_diff_se((log(0.981) + log(1.019)) / 2,
					  (log(1.019) - log(0.981)) / 2 / t, 10, 0.95);
	struct equiv_est e = stats_equivalence_ratio(&d, 2, 0.05);
	CHECK_STR(equivalence_word(e.verdict), "equivalent");
	CHECK_NEAR(e.lo, -1.9, 1e-9);
	CHECK_NEAR(e.hi, 1.9, 1e-9);
	d = stats_diff_se((log(0.979) + log(1.0199)) / 2, (log(1.0199) - log(0.979)) / 2 / t, 10, 0.95);
	e = stats_equivalence_ratio(&d, 2, 0.05);
	CHECK(e.verdict != EQUIV_EQUIVALENT);
	CHECK_NEAR(e.shown, 2.1, 1e-9);
	CHECK_STR(equivalence_word(stats_equivalence_ratio(&d, 0, 0.05).verdict), "n/a");
}

/* A run not above 0 has no ratio: named by file and line (line 3: the
 * header, then rep 1, then rep 2). */
static void ratio_not_positive(void)
{
	struct table t;
	struct summary s;
	struct errbuf err;
	summarize_csv(&s, &t, RATIO_HEAD "pipe,1,1,100\npipe,1,2,0\npipe,1,3,90\n", 0);
	CHECK(compare_ratio_check(&s, "a.csv", &err) < 0);
	CHECK(strstr(err.msg, "a.csv:3:") != NULL);
	summary_free(&s);
	table_free(&t);
	summarize_csv(&s, &t, RATIO_HEAD "pipe,1,1,100\npipe,1,2,-5\n", 0);
	CHECK(compare_ratio_check(&s, "a.csv", &err) < 0);
	summary_free(&s);
	table_free(&t);
	summarize_csv(&s, &t, RATIO_HEAD "pipe,1,1,100\npipe,1,2,0.5\n", 0);
	CHECK(compare_ratio_check(&s, "a.csv", &err) == 0);
	summary_free(&s);
	table_free(&t);
}

/* B a steady factor of A that steps, x1.10 for reps 1-3 and x1.20 for
 * 4-6 (A 50 to 300, so that the differences B - A are all unlike): the
 * ratios do not vary within a block, so the blocks of 3 differ (F
 * infinite) and the interval is of the 2 block means, ln 1.1 and ln 1.2:
 * mean 0.138816, se |ln 1.2 - ln 1.1| / 2 = 0.0435057 on 1 df, half-width
 * 12.7062 x se = 0.552792; the change 100 (exp(0.138816) - 1) = 14.8913%. */
static void ratio_drift(void)
{
	struct ratio_case rc;
	const struct comparison_row *r = ratio_compare(&rc,
		RATIO_HEAD "pipe,1,1,50\npipe,1,2,100\npipe,1,3,150\npipe,1,4,200\npipe,1,5,250\npipe,1,6,300\n",
		RATIO_HEAD "pipe,1,1,55\npipe,1,2,110\npipe,1,3,165\npipe,1,4,240\npipe,1,5,300\npipe,1,6,360\n",
		SUMMARY_BLOCK_REPS(3));
	CHECK_EQ_U(r->d.level, LEVEL_BLOCK);
	CHECK_EQ_U(r->d.pairs, 6);
	CHECK_NEAR(r->d.df, 1, 0);
	CHECK_NEAR(r->d.mean, 0.138816, 1e-6);
	CHECK_NEAR(r->d.ci, 0.552792, 1e-5);
	CHECK_NEAR(r->change_pct, 14.8913, 1e-4);
	CHECK_NEAR(r->half_width_pct, (r->change_hi_pct - r->change_lo_pct) / 2, 1e-12);
	ratio_free(&rc);
}

int main(void)
{
	f_distribution();
	no_drift();
	step_drift();
	sittings();
	compare_drift();
	read_back();
	ratio_exact();
	ratio_by_hand();
	ratio_equivalent();
	ratio_margin_bounds();
	ratio_not_positive();
	ratio_drift();
	return test_done("test_blocks");
}
