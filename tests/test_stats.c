/* src/stats.c against known answers: textbook t tables, closed forms of the
 * t CDF for df = 1 and 2, and hand-computed samples. */
#include "config.h"
#include "stats.h"
#include "testlib.h"

#include <math.h>

#define CHECK_NEAR(a, b, tol) do { \
	double a_ = (a), b_ = (b); \
	test_checks++; \
	if (!(fabs(a_ - b_) <= (tol))) { \
		test_failures++; \
		fprintf(stderr, "%s:%d: FAILED: %s = %.9g, want %.9g (+-%g)\n", \
			__FILE__, __LINE__, #a, a_, b_, (double)(tol)); \
	} \
} while (0)

static void moments(void)
{
	const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	CHECK_NEAR(stats_mean_of(x, 8), 5, 1e-12);
	CHECK_NEAR(stats_sd_of(x, 8), sqrt(32.0 / 7), 1e-12);   /* sum of squares 32, n-1 = 7 */
	CHECK_NEAR(stats_sd_of(x, 1), 0, 0);

	/* Welford stays exact where the naive formula cancels. */
	struct stats_acc a;
	stats_init(&a);
	stats_add(&a, 1e9 + 4);
	stats_add(&a, 1e9 + 7);
	stats_add(&a, 1e9 + 13);
	stats_add(&a, 1e9 + 16);
	CHECK_NEAR(a.mean, 1e9 + 10, 1e-6);
	CHECK_NEAR(stats_var(&a), 30, 1e-6);
	CHECK_NEAR(a.min, 1e9 + 4, 0);
	CHECK_NEAR(a.max, 1e9 + 16, 0);
	CHECK_EQ_U(a.n, 4);
}

static void t_distribution(void)
{
	/* Two-sided 95% critical values from any t table. */
	CHECK_NEAR(stats_t_quantile(0.975, 1), 12.706, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 2), 4.303, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 3), 3.182, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 10), 2.228, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 30), 2.042, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 1e7), 1.960, 5e-4);  /* the normal limit */
	/* Other columns of the table. */
	CHECK_NEAR(stats_t_quantile(0.95, 5), 2.015, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.995, 3), 5.841, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.9995, 1), 636.619, 5e-3);
	CHECK_NEAR(stats_t_quantile(0.025, 10), -2.228, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.5, 7), 0, 0);
	/* More digits: t(0.975, 1) = tan(0.475 pi) exactly (Cauchy). */
	CHECK_NEAR(stats_t_quantile(0.975, 1), tan(0.475 * M_PI), 1e-9);
	/* df = 2 has the closed form t = (2p-1) sqrt(2 / (4p(1-p))). */
	CHECK_NEAR(stats_t_quantile(0.975, 2), 0.95 * sqrt(2 / (4 * 0.975 * 0.025)), 1e-9);

	/* CDF: df = 1 is Cauchy, 1/2 + atan(t)/pi; df = 2 is 1/2 + t / (2 sqrt(2 + t^2)). */
	CHECK_NEAR(stats_t_cdf(1, 1), 0.75, 1e-12);
	CHECK_NEAR(stats_t_cdf(-3, 1), 0.5 + atan(-3) / M_PI, 1e-12);
	CHECK_NEAR(stats_t_cdf(2, 2), 0.5 + 2 / (2 * sqrt(6)), 1e-12);
	CHECK_NEAR(stats_t_cdf(0, 4.5), 0.5, 1e-15);
	CHECK_NEAR(stats_t_cdf(2.228, 10), 0.975, 5e-5);
	CHECK_NEAR(stats_t_cdf(INFINITY, 3), 1, 0);
	/* Round trip, fractional df as Welch produces. */
	for (double df = 1.5; df < 200; df *= 1.7)
		for (double p = 0.6; p < 0.9999; p = 1 - (1 - p) / 3)
			CHECK_NEAR(stats_t_cdf(stats_t_quantile(p, df), df), p, 1e-10);

	/* The incomplete beta at known points: I_x(1, 1) = x, I_x(a, 1) = x^a. */
	CHECK_NEAR(stats_betainc(0.3, 1, 1), 0.3, 1e-14);
	CHECK_NEAR(stats_betainc(0.6, 3, 1), 0.216, 1e-14);
	CHECK_NEAR(stats_betainc(0.6, 2, 2), 3 * 0.36 - 2 * 0.216, 1e-14);  /* 3x^2 - 2x^3 */
	CHECK(isnan(stats_t_quantile(1, 3)));
	CHECK(isnan(stats_t_quantile(0.9, 0)));
}

static void confidence(void)
{
	/* {2,4,4,4,5,5,7,9}: sd sqrt(32/7), n 8, t(0.975, 7) = 2.3646 */
	CHECK_NEAR(stats_ci_half(sqrt(32.0 / 7), 8, 0.95), 2.3646 * sqrt(32.0 / 7) / sqrt(8), 1e-4);
	/* n = 2: t(0.975, 1) * sd / sqrt 2 */
	CHECK_NEAR(stats_ci_half(1, 2, 0.95), 12.7062 / sqrt(2), 1e-4);
	CHECK(isnan(stats_ci_half(1, 1, 0.95)));
}

static void welch(void)
{
	/* A = {1,2,3,4,5}: mean 3, var 2.5; B = {4,6,8,10,12}: mean 8, var 10.
	 * se^2 = 2.5/5 + 10/5 = 2.5, t = 5 / sqrt(2.5) = 3.16228,
	 * df = 2.5^2 / (0.5^2/4 + 2^2/4) = 6.25 / 1.0625 = 5.88235,
	 * p = 0.02004 (numerical integration of the t density). */
	struct welch w = stats_welch(3, sqrt(2.5), 5, 8, sqrt(10), 5);
	CHECK(w.valid);
	CHECK_NEAR(w.t, 3.16228, 1e-5);
	CHECK_NEAR(w.df, 5.88235, 1e-5);
	CHECK_NEAR(w.p, 0.02004, 1e-5);

	/* Equal variances and sizes: df = 2n - 2 = 4; the samples of tests/data:
	 * {100,102,98} vs {110,112,108}: t = 10/sqrt(8/3) = 6.12372, p = 0.003602. */
	w = stats_welch(100, 2, 3, 110, 2, 3);
	CHECK_NEAR(w.t, 6.12372, 1e-5);
	CHECK_NEAR(w.df, 4, 1e-12);
	CHECK_NEAR(w.p, 0.003602, 1e-6);
	/* {100,110,90} vs {101,111,91}: t = 0.122474, p = 0.90843 */
	w = stats_welch(100, 10, 3, 101, 10, 3);
	CHECK_NEAR(w.p, 0.90843, 1e-5);
	/* Sign follows B - A. */
	w = stats_welch(110, 2, 3, 100, 2, 3);
	CHECK_NEAR(w.t, -6.12372, 1e-5);
	CHECK_NEAR(w.p, 0.003602, 1e-6);

	/* Degenerate: one run, or no spread at all. */
	CHECK(!stats_welch(1, 0, 1, 2, 1, 5).valid);
	w = stats_welch(5, 0, 3, 5, 0, 3);
	CHECK(w.valid && w.p == 1);
	w = stats_welch(5, 0, 3, 6, 0, 3);
	CHECK(w.valid && w.p == 0);
}

static void geomean(void)
{
	const double r[] = { 1.1, 1.01 };
	CHECK_NEAR(stats_geomean(r, 2), sqrt(1.1 * 1.01), 1e-12);
	const double s[] = { 2, 8 };
	CHECK_NEAR(stats_geomean(s, 2), 4, 1e-12);
	const double bad[] = { 2, 0 };
	CHECK(isnan(stats_geomean(bad, 2)));
	CHECK(isnan(stats_geomean(s, 0)));
}

int main(void)
{
	moments();
	t_distribution();
	confidence();
	welch();
	geomean();
	return test_done("test_stats");
}
