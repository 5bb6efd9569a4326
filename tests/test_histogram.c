/* The latency histogram: bucket edges, quantiles against exact answers
 * within the histogram's stated precision (half a bucket: 1/128 of the
 * value), operations a few per cent apart told apart, merging; a client's
 * histograms kept by rows equal whole ones, and are cleared in place. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "run.h"
#include "testlib.h"

static struct histogram h, h2;

static int close_to(uint64_t got, uint64_t want)
{
	double rel = fabs((double)got - (double)want) / (double)want;
	if (rel > 0.5 / HIST_SUB)
		fprintf(stderr, "  got %llu want %llu (%.2f%% off)\n",
			(unsigned long long)got, (unsigned long long)want, rel * 100);
	return rel <= 0.5 / HIST_SUB;
}

static void test_buckets(void)
{
	/* Every value lands in a bucket whose range holds it; ranges are increasing. */
	for (uint64_t v = 0; v < (1ull << 30); v = v < 64 ? v + 1 : v + v / 7 + 1) {
		unsigned i = hist_index(v);
		CHECK(i < HIST_BUCKETS);
		CHECK(hist_bucket_low(i) <= v);
		if (i + 1 < HIST_BUCKETS)
			CHECK(v < hist_bucket_low(i + 1));
	}
	for (unsigned i = 1; i < HIST_BUCKETS; i++)
		CHECK(hist_bucket_low(i) > hist_bucket_low(i - 1));
	CHECK_EQ_U(hist_index(UINT64_MAX), HIST_BUCKETS - 1);
}

static void test_quantiles(void)
{
	memset(&h, 0, sizeof(h));
	CHECK_EQ_U(hist_quantile(&h, 0.5), 0);
	/* 1..100000 ns once each: the q quantile is q * 100000. */
	for (uint64_t v = 1; v <= 100000; v++)
		hist_record(&h, v);
	CHECK_EQ_U(h.count, 100000);
	CHECK_EQ_U(h.max_ns, 100000);
	CHECK(close_to(hist_quantile(&h, 0.50), 50000));
	CHECK(close_to(hist_quantile(&h, 0.99), 99000));
	CHECK(close_to(hist_quantile(&h, 0.999), 99900));
	CHECK(hist_quantile(&h, 1.0) <= h.max_ns);
	CHECK(fabs(hist_mean_ns(&h) - 50000.5) < 1e-6);

	/* A skewed mix: 990 fast, 10 slow: p99 is fast, p99.9 slow. */
	memset(&h2, 0, sizeof(h2));
	for (int i = 0; i < 990; i++)
		hist_record(&h2, 20000);
	for (int i = 0; i < 10; i++)
		hist_record(&h2, 5000000);
	CHECK(close_to(hist_quantile(&h2, 0.99), 20000));
	CHECK(close_to(hist_quantile(&h2, 0.999), 5000000));
	CHECK(close_to(hist_quantile(&h2, 0.5), 20000));
}

/* Latencies 1% apart anywhere from 1 us to 100 s: each p99 within 1% of
 * its value, and no two of them reported as one. */
static void test_resolution(void)
{
	static struct histogram a;
	uint64_t last = 0;

	for (double v = 1000; v < 1e11; v *= 1.01) {
		memset(&a, 0, sizeof(a));
		for (int i = 0; i < 100; i++)
			hist_record(&a, (uint64_t)v);
		uint64_t p99 = hist_quantile(&a, 0.99);
		CHECK(close_to(p99, (uint64_t)v));
		CHECK(p99 > last);
		last = p99;
	}
}

static void test_merge(void)
{
	struct histogram *sum = calloc(1, sizeof(*sum));

	hist_merge(sum, &h);
	hist_merge(sum, &h2);
	CHECK_EQ_U(sum->count, h.count + h2.count);
	/* Merging reads only min_ns to max_ns: every operation is still there. */
	uint64_t in_buckets = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		in_buckets += sum->bucket[i];
	CHECK_EQ_U(in_buckets, sum->count);
	CHECK_EQ_U(sum->min_ns, 1);
	CHECK_EQ_U(sum->max_ns, 5000000);
	CHECK_EQ_U(sum->sum_ns, h.sum_ns + h2.sum_ns);
	free(sum);
}

/* Values from a few ns to the clamp, over three operations, recorded in a
 * client's rows and in whole histograms: the merged rows are the same. */
static void record_both(struct client_stats *c, struct histogram *whole, unsigned n, unsigned seed)
{
	static const int ops[] = { OP_WRITEX, OP_READX, OP_CLOSE };

	srand(seed);
	for (unsigned i = 0; i < n; i++) {
		int k = rand() % 3;
		uint64_t ns = (uint64_t)rand() >> (rand() % 31);
		if (i % 1000 == 0)
			ns = (uint64_t)1 << 40;   /* past HIST_MAX_EXP: the last bucket */
		stats_record(c, ops[k], ns);
		hist_record(&whole[ops[k]], ns);
	}
}

static void check_rows_equal(const struct client_stats *c, const struct histogram *whole)
{
	struct histogram *merged = calloc(1, sizeof(*merged));

	CHECK(merged != NULL);
	if (!merged)
		return;
	for (int op = 0; op < OP_COUNT; op++) {
		memset(merged, 0, sizeof(*merged));
		if (stats_op_used(c, op))
			stats_merge_op(merged, c, op);
		CHECK(memcmp(merged, &whole[op], sizeof(*merged)) == 0);
	}
	free(merged);
}

static void test_client_rows(void)
{
	struct client_stats *c = calloc(1, sizeof(*c));
	struct histogram *whole = calloc(OP_COUNT, sizeof(*whole));

	CHECK(c && whole);
	if (!c || !whole) {
		free(c);
		free(whole);
		return;
	}
	record_both(c, whole, 20000, 7);
	check_rows_equal(c, whole);
	/* Rows are handed out once each, one per power of two an operation
	 * reached, none to an operation never recorded. */
	unsigned reached = 0, elsewhere = 0;
	for (int op = 0; op < OP_COUNT; op++)
		for (unsigned r = 0; r < HIST_ROWS; r++) {
			reached += c->row_of[op][r] != 0;
			elsewhere += c->row_of[op][r] != 0 && whole[op].count == 0;
		}
	CHECK_EQ_U(c->rows_used, reached);
	CHECK_EQ_U(elsewhere, 0);
	/* Cleared at the warm-up's end, then counted again from nothing. */
	stats_clear_ops(c);
	memset(whole, 0, OP_COUNT * sizeof(*whole));
	CHECK_EQ_U(c->rows_used, 0);
	CHECK_EQ_U(c->used_ops, 0);
	unsigned left = 0;
	for (size_t i = 0; i < STATS_ROWS; i++)
		for (unsigned k = 0; k < HIST_SUB; k++)
			left += c->row[i][k] != 0;
	CHECK_EQ_U(left, 0);
	record_both(c, whole, 5000, 11);
	check_rows_equal(c, whole);
	free(whole);
	free(c);
}

int main(void)
{
	test_buckets();
	test_quantiles();
	test_resolution();
	test_merge();
	test_client_rows();
	return test_done("test_histogram");
}
