/* Sample statistics for comparing repeated runs; see stats.h. */
#include "config.h"
#include "stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

void stats_init(struct stats_acc *a)
{
	a->n = 0;
	a->mean = a->m2 = 0;
	a->min = INFINITY;
	a->max = -INFINITY;
}

void stats_add(struct stats_acc *a, double x)
{
	a->n++;
	double d = x - a->mean;
	a->mean += d / (double)a->n;
	a->m2 += d * (x - a->mean);
	if (x < a->min)
		a->min = x;
	if (x > a->max)
		a->max = x;
}

double stats_var(const struct stats_acc *a)
{
	return a->n < 2 ? 0 : a->m2 / (double)(a->n - 1);
}

double stats_sd(const struct stats_acc *a)
{
	return sqrt(stats_var(a));
}

double stats_mean_of(const double *x, size_t n)
{
	struct stats_acc a;
	stats_init(&a);
	for (size_t i = 0; i < n; i++)
		stats_add(&a, x[i]);
	return a.mean;
}

double stats_sd_of(const double *x, size_t n)
{
	struct stats_acc a;
	stats_init(&a);
	for (size_t i = 0; i < n; i++)
		stats_add(&a, x[i]);
	return stats_sd(&a);
}

enum { CF_MAX_TERMS = 1000 };
static const double cf_tiny = 1e-300;

/* One Lentz step with coefficient aa: updates c and d, returns the factor
 * by which the fraction's value changes. */
static double lentz_step(double aa, double *c, double *d)
{
	*d = 1 + aa * *d;
	if (fabs(*d) < cf_tiny)
		*d = cf_tiny;
	*c = 1 + aa / *c;
	if (fabs(*c) < cf_tiny)
		*c = cf_tiny;
	*d = 1 / *d;
	return *d * *c;
}

/* Continued fraction of the incomplete beta function, modified Lentz's
 * method (Numerical Recipes 6.4); converges quickly for x < (a+1)/(a+b+2).
 * Each round takes the even then the odd coefficient. */
static double betacf(double x, double a, double b)
{
	const double eps = 1e-15;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap;

	if (fabs(d) < cf_tiny)
		d = cf_tiny;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= CF_MAX_TERMS; m++) {
		int m2 = 2 * m;
		h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
		double del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d);
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double stats_betainc(double x, double a, double b)
{
	if (!(a > 0) || !(b > 0) || isnan(x))
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * betacf(x, a, b) / a;
	return 1 - exp(lbt) * betacf(1 - x, b, a) / b;
}

double stats_t_cdf(double t, double df)
{
	if (!(df > 0) || isnan(t))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	/* P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2) */
	double tail = 0.5 * stats_betainc(df / (df + t * t), df / 2, 0.5);
	return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
	if (!(df > 0) || !(p > 0) || !(p < 1))
		return NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	/* Upper tail 1-p is computed directly, so p close to 1 keeps its precision. */
	double q = 1 - p, lo = 0, hi = 1;
	while (0.5 * stats_betainc(df / (df + hi * hi), df / 2, 0.5) > q) {
		lo = hi;
		hi *= 2;
		if (hi > 1e300)
			return INFINITY;
	}
	for (int i = 0; i < 300 && hi - lo > 1e-14 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (0.5 * stats_betainc(df / (df + mid * mid), df / 2, 0.5) > q)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

double stats_ci_half(double sd, size_t n, double conf)
{
	if (n < 2 || !(conf > 0) || !(conf < 1))
		return NAN;
	return stats_t_quantile((1 + conf) / 2, (double)(n - 1)) * sd / sqrt((double)n);
}

/* Two-sided p-value of t with df degrees of freedom. */
static double t_two_sided_p(double t, double df)
{
	return stats_betainc(df / (df + t * t), df / 2, 0.5);
}

struct welch stats_welch(double mean_a, double sd_a, size_t n_a,
			 double mean_b, double sd_b, size_t n_b)
{
	struct welch w = { .t = NAN, .df = NAN, .p = NAN, .valid = 0 };

	if (n_a < 2 || n_b < 2)
		return w;
	w.valid = 1;
	double va = sd_a * sd_a / (double)n_a, vb = sd_b * sd_b / (double)n_b;
	double se2 = va + vb;
	if (!(se2 > 0)) {
		w.t = mean_a == mean_b ? 0 : copysign(INFINITY, mean_b - mean_a);
		w.df = (double)(n_a + n_b - 2);
		w.p = mean_a == mean_b ? 1 : 0;
		return w;
	}
	w.t = (mean_b - mean_a) / sqrt(se2);
	w.df = se2 * se2 / (va * va / (double)(n_a - 1) + vb * vb / (double)(n_b - 1));
	w.p = t_two_sided_p(w.t, w.df);
	return w;
}

double stats_mde(double se, double df, double conf, double power)
{
	if (!(se >= 0) || !(df > 0))
		return NAN;
	return (stats_t_quantile((1 + conf) / 2, df) + stats_t_quantile(power, df)) * se;
}

/* The MDE of stats_runs_to_resolve's two samples of n runs each. */
static double mde_of_runs(double sd_a, double sd_b, size_t n, double conf, double power)
{
	double va = sd_a * sd_a / (double)n, vb = sd_b * sd_b / (double)n, se2 = va + vb;
	double df = se2 > 0 ? se2 * se2 / ((va * va + vb * vb) / (double)(n - 1)) : (double)(2 * n - 2);
	return stats_mde(sqrt(se2), df, conf, power);
}

size_t stats_runs_to_resolve(double sd_a, double sd_b, double effect, double conf, double power,
			     size_t max)
{
	if (!(effect > 0) || !(sd_a >= 0) || !(sd_b >= 0) || !isfinite(sd_a + sd_b) || max < 2)
		return 0;
	/* The MDE falls as n grows: double n until it is small enough, then
	 * halve the step back to the first n that is. */
	size_t lo = 1, hi = 2;
	while (mde_of_runs(sd_a, sd_b, hi, conf, power) > effect) {
		if (hi >= max)
			return 0;
		lo = hi;
		hi = hi * 2 > max ? max : hi * 2;
	}
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (mde_of_runs(sd_a, sd_b, mid, conf, power) > effect)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* The interval, MDE, t and p of d once its mean, se and df are known. */
static void diff_finish(struct diff_est *d, double conf)
{
	d->valid = 1;
	d->ci = d->se > 0 ? stats_t_quantile((1 + conf) / 2, d->df) * d->se : 0;
	d->mde = stats_mde(d->se, d->df, conf, STATS_MDE_POWER);
	if (d->se > 0) {
		d->t = d->mean / d->se;
		d->p = t_two_sided_p(d->t, d->df);
	} else {
		d->t = d->mean == 0 ? 0 : copysign(INFINITY, d->mean);
		d->p = d->mean == 0 ? 1 : 0;
	}
}

static const struct diff_est diff_none = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, 0, 0, 0 };

struct diff_est stats_diff_se(double mean, double se, double df, double conf)
{
	struct diff_est e = diff_none;
	if (!(df > 0) || !(se >= 0))
		return e;
	e.mean = mean;
	e.se = se;
	e.df = df;
	diff_finish(&e, conf);
	return e;
}

double stats_f_sf(double f, double df1, double df2)
{
	if (!(df1 > 0) || !(df2 > 0) || isnan(f))
		return NAN;
	if (f <= 0)
		return 1;
	if (isinf(f))
		return 0;
	return stats_betainc(df2 / (df2 + df1 * f), df2 / 2, df1 / 2);
}

struct diff_est stats_diff_paired(const double *d, size_t n, double conf)
{
	struct diff_est e = diff_none;
	if (n < 2)
		return e;
	e.pairs = n;
	e.mean = stats_mean_of(d, n);
	e.se = stats_sd_of(d, n) / sqrt((double)n);
	e.df = (double)(n - 1);
	diff_finish(&e, conf);
	return e;
}

struct diff_est stats_diff_welch(double mean_a, double sd_a, size_t n_a,
				 double mean_b, double sd_b, size_t n_b, double conf)
{
	struct diff_est e = diff_none;
	struct welch w = stats_welch(mean_a, sd_a, n_a, mean_b, sd_b, n_b);
	if (!w.valid)
		return e;
	e.mean = mean_b - mean_a;
	e.se = sqrt(sd_a * sd_a / (double)n_a + sd_b * sd_b / (double)n_b);
	e.df = w.df;
	diff_finish(&e, conf);
	return e;
}

/* The verdict of the (1 - 2 alpha) interval [lo, hi] of d against the
 * bounds (below, above): Schuirmann's two one-sided tests. */
static enum equivalence tost_verdict(const struct diff_est *d, double lo, double hi,
				     double below, double above, double alpha)
{
	if (lo > below && hi < above)
		return EQUIV_EQUIVALENT;
	return d->p < alpha ? EQUIV_DIFFERENT : EQUIV_CANNOT_TELL;
}

/* The (1 - 2 alpha) interval of d into *lo, *hi; 0 when d or alpha will not do. */
static int tost_interval(const struct diff_est *d, double alpha, double *lo, double *hi)
{
	if (!d->valid || !(alpha > 0 && alpha < 0.5))
		return 0;
	double half = d->se > 0 ? stats_t_quantile(1 - alpha, d->df) * d->se : 0;
	*lo = d->mean - half;
	*hi = d->mean + half;
	return 1;
}

struct equiv_est stats_equivalence(const struct diff_est *d, double margin, double alpha)
{
	struct equiv_est e = { EQUIV_NONE, NAN, NAN, NAN };
	if (!(margin > 0) || !isfinite(margin) || !tost_interval(d, alpha, &e.lo, &e.hi))
		return e;
	e.shown = fmax(fabs(e.lo), fabs(e.hi));
	e.verdict = tost_verdict(d, e.lo, e.hi, -margin, margin, alpha);
	return e;
}

struct equiv_est stats_equivalence_ratio(const struct diff_est *d, double margin_pct, double alpha)
{
	struct equiv_est e = { EQUIV_NONE, NAN, NAN, NAN };
	double lo, hi;
	if (!(margin_pct > 0) || !isfinite(margin_pct) || !tost_interval(d, alpha, &lo, &hi))
		return e;
	/* a margin of 100% or more has no lower bound: B can fall to nothing */
	double below = margin_pct < 100 ? log1p(-margin_pct / 100) : -INFINITY;
	e.verdict = tost_verdict(d, lo, hi, below, log1p(margin_pct / 100), alpha);
	e.lo = 100 * expm1(lo);
	e.hi = 100 * expm1(hi);
	e.shown = fmax(fabs(e.lo), fabs(e.hi));
	return e;
}

const char *equivalence_word(enum equivalence v)
{
	static const char *const word[] = {
		[EQUIV_NONE] = "n/a", [EQUIV_EQUIVALENT] = "equivalent",
		[EQUIV_DIFFERENT] = "different", [EQUIV_CANNOT_TELL] = "cannot tell",
	};
	return word[v];
}

double stats_geomean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0))
			return NAN;
		s += log(x[i]);
	}
	return exp(s / (double)n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_median(double *x, size_t n)
{
	if (n == 0)
		return 0;
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

struct median_est stats_median_est(double *x, size_t n)
{
	struct median_est m = { n, NAN, NAN, NAN, 0 };

	if (n == 0)
		return m;
	m.median = stats_median(x, n);
	m.lowest = x[0];
	m.highest = x[n - 1];
	m.confidence = 1 - ldexp(1, 1 - (int)n);
	return m;
}

double stats_substitute(double total, const double *from, const double *to, size_t n)
{
	double t = total;

	for (size_t i = 0; i < n; i++)
		t += to[i] - from[i];
	return t > 0 ? total / t : NAN;
}
