/* Sample statistics for comparing repeated runs: mean, standard deviation,
 * Student-t confidence intervals and Welch's unequal-variance t-test.
 * The t distribution (CDF and quantile) is computed here from the
 * regularized incomplete beta function, so nothing beyond libm is needed. */
#ifndef TBENCH_STATS_H
#define TBENCH_STATS_H

#include <stddef.h>

/* Running moments (Welford): numerically stable, one pass. */
struct stats_acc {
	size_t n;
	double mean, m2, min, max;
};

void stats_init(struct stats_acc *a);
void stats_add(struct stats_acc *a, double x);
/* Sample variance (n - 1 in the denominator); 0 when n < 2. */
double stats_var(const struct stats_acc *a);
double stats_sd(const struct stats_acc *a);

double stats_mean_of(const double *x, size_t n);
/* Sample standard deviation of x[0..n-1]; 0 when n < 2. */
double stats_sd_of(const double *x, size_t n);

/* The median of x[0..n-1], sorting x in place; 0 when n is 0. */
double stats_median(double *x, size_t n);

/* The median of n values and its distribution-free interval, the lowest to
 * the highest value: each of n independent values falls below the true
 * median with probability 1/2, so all n fall on one side of it with
 * probability 2 * 2^-n, and the interval covers it with confidence
 * 1 - 2^(1-n) (94% for 5 values, 98% for 7), whatever their distribution. */
struct median_est {
	size_t n;
	double median, lowest, highest;   /* NaN when n is 0 */
	double confidence;                /* 1 - 2^(1-n); 0 when n is 0 */
};

/* The median_est of x[0..n-1], sorting x in place. */
struct median_est stats_median_est(double *x, size_t n);

/* The ratio of rates that replacing parts from[0..n-1] of a time per
 * operation total by to[0..n-1] alone would give, were that time all an
 * operation took: total / (total - sum(from) + sum(to)). NaN when the
 * new time is not > 0. */
double stats_substitute(double total, const double *from, const double *to, size_t n);

/* Regularized incomplete beta I_x(a, b), 0 <= x <= 1, a, b > 0. */
double stats_betainc(double x, double a, double b);
/* P(F > f) for Snedecor's F with df1, df2 degrees of freedom (the one-way
 * analysis of variance's test); NaN when either df is not > 0. */
double stats_f_sf(double f, double df1, double df2);
/* P(T <= t) for Student's t with df > 0 degrees of freedom (df may be fractional). */
double stats_t_cdf(double t, double df);
/* The t with P(T <= t) = p, 0 < p < 1. */
double stats_t_quantile(double p, double df);

/* Half-width of the two-sided confidence interval of the mean at level
 * conf (e.g. 0.95): t_{(1+conf)/2, n-1} * sd / sqrt(n).  NaN when n < 2. */
double stats_ci_half(double sd, size_t n, double conf);

struct welch {
	double t;       /* (mean_b - mean_a) / se */
	double df;      /* Welch-Satterthwaite degrees of freedom */
	double p;       /* two-sided p-value */
	int valid;      /* 0 when n < 2 on either side */
};

/* Welch's unequal-variance t-test of two samples given by their summaries.
 * Both standard deviations zero: p = 0 if the means differ, else 1. */
struct welch stats_welch(double mean_a, double sd_a, size_t n_a,
			 double mean_b, double sd_b, size_t n_b);

/* The estimate of a difference of means, b - a, and what its noise allows:
 * the half-width of its interval and the minimum detectable effect. */
struct diff_est {
	double mean;    /* b - a (paired: the mean of the per-pair differences) */
	double se, df;  /* its standard error and degrees of freedom */
	double ci;      /* half-width of the two-sided interval at the level asked */
	double mde;     /* minimum detectable effect: see stats_mde */
	double t, p;    /* the t statistic and its two-sided p-value */
	size_t pairs;   /* paired: how many pairs; else 0 */
	int valid;      /* 0 when there is too little data for an interval */
	int level;      /* where its variance was taken: enum ci_level (stats_blocks.h) */
	int log_ratio;  /* mean is of per-pair ln(b_i / a_i), not of b_i - a_i */
};

/* The power that the minimum detectable effect is the effect for. */
#define STATS_MDE_POWER 0.80

/* The smallest true difference that a two-sided test at level conf would
 * detect with probability power, given the standard error se of the
 * difference and its df:  (t_{(1+conf)/2, df} + t_{power, df}) * se.
 * (Normal approximation of the noncentral t, the usual sample-size formula.) */
double stats_mde(double se, double df, double conf, double power);
/* The fewest runs a side, n, with which two samples of standard deviations
 * sd_a and sd_b, n runs each, compared by Welch's test (se sqrt((sd_a^2 +
 * sd_b^2) / n), Welch-Satterthwaite df), have an MDE (stats_mde) of effect
 * or less: the runs it takes to resolve a change of that size at this
 * noise. 0 when more than max would be needed, or an input is not usable. */
size_t stats_runs_to_resolve(double sd_a, double sd_b, double effect, double conf, double power,
			     size_t max);

/* Paired: d[0..n-1] the per-pair differences b_i - a_i; se = sd(d)/sqrt(n),
 * df = n - 1: a Student-t interval of the mean difference. n < 2: not valid. */
struct diff_est stats_diff_paired(const double *d, size_t n, double conf);
/* A Student-t interval (and MDE, t, p) of a mean difference whose standard
 * error se and df are known; df not > 0: not valid. */
struct diff_est stats_diff_se(double mean, double se, double df, double conf);
/* Unpaired: Welch's standard error sqrt(sd_a^2/n_a + sd_b^2/n_b) and the
 * Welch-Satterthwaite df, as stats_welch; either n < 2: not valid. */
struct diff_est stats_diff_welch(double mean_a, double sd_a, size_t n_a,
				 double mean_b, double sd_b, size_t n_b, double conf);

/* "No difference" as a claim: is the true difference within +-margin?
 * Two one-sided tests (Schuirmann's TOST) at level alpha, each of
 * "difference <= -margin" and ">= +margin", reject both exactly when the
 * (1 - 2 alpha) interval of the difference lies inside (-margin, +margin).
 * Equivalent then (even when also significant: a difference too small to
 * matter); else different when the two-sided test at alpha finds one (the
 * (1 - alpha) interval excludes 0); else the noise cannot tell. */
enum equivalence { EQUIV_NONE, EQUIV_EQUIVALENT, EQUIV_DIFFERENT, EQUIV_CANNOT_TELL };

struct equiv_est {
	enum equivalence verdict;       /* EQUIV_NONE: d not valid, or no margin */
	double lo, hi;                  /* the (1 - 2 alpha) interval of the difference */
	double shown;                   /* max(|lo|, |hi|): the least margin this noise
	                                 * would have shown equivalent (any above it) */
};

struct equiv_est stats_equivalence(const struct diff_est *d, double margin, double alpha);
/* The same on d a mean log ratio ln(B/A) (stats_diff_se of the per-pair
 * logs), the margin in percent of A: the two tests against ln(1 - m/100)
 * and ln(1 + m/100), symmetric in percent, not quite in log. lo, hi and
 * shown in percent: 100 (exp(x) - 1) of the interval's ends, shown the
 * larger of |lo| and |hi|, so that equivalent is shown < margin still. */
struct equiv_est stats_equivalence_ratio(const struct diff_est *d, double margin_pct, double alpha);
/* "equivalent", "different", "cannot tell", or "n/a". */
const char *equivalence_word(enum equivalence v);

/* Geometric mean of x[0..n-1] (all > 0); NaN if n == 0 or any x <= 0. */
double stats_geomean(const double *x, size_t n);

#endif
