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

/* Regularized incomplete beta I_x(a, b), 0 <= x <= 1, a, b > 0. */
double stats_betainc(double x, double a, double b);
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

/* Geometric mean of x[0..n-1] (all > 0); NaN if n == 0 or any x <= 0. */
double stats_geomean(const double *x, size_t n);

#endif
