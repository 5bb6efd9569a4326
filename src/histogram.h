/* Log-linear latency histogram: 64 buckets per power of two, each 1/64 of
 * its values wide or less, and a quantile is its bucket's midpoint: known to
 * within 1/128 (0.8%) of its value. 8 KiB each; a client's are kept by
 * rows instead, a row a power of two (run.h's client_stats). */
#ifndef TBENCH_HISTOGRAM_H
#define TBENCH_HISTOGRAM_H

#include <stdint.h>

enum {
	HIST_SUB_BITS = 6,
	HIST_SUB = 1 << HIST_SUB_BITS,
	HIST_MAX_EXP = 36,       /* 2^37 ns = 137 s; longer values clamp (max_ns is exact) */
	HIST_BUCKETS = (HIST_MAX_EXP - HIST_SUB_BITS + 2) * HIST_SUB,
	HIST_ROWS = HIST_BUCKETS / HIST_SUB,   /* a row: one power of two's buckets */
};

/* What a histogram keeps besides its buckets. */
struct hist_tally {
	uint64_t count, sum_ns, max_ns, min_ns;
};

struct histogram {
	union {
		struct hist_tally tally;
		struct {
			uint64_t count, sum_ns, max_ns, min_ns;
		};
	};
	uint32_t bucket[HIST_BUCKETS];
};

static inline unsigned hist_index(uint64_t ns)
{
	if (ns < HIST_SUB)
		return (unsigned)ns;
	unsigned exp = 63 - (unsigned)__builtin_clzll(ns);
	if (exp > HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	return ((exp - HIST_SUB_BITS + 1) << HIST_SUB_BITS) +
	       (unsigned)((ns >> (exp - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

static inline void hist_tally_add(struct hist_tally *t, uint64_t ns)
{
	if (t->count == 0 || ns < t->min_ns)
		t->min_ns = ns;
	t->count++;
	t->sum_ns += ns;
	if (ns > t->max_ns)
		t->max_ns = ns;
}

static inline void hist_record(struct histogram *h, uint64_t ns)
{
	hist_tally_add(&h->tally, ns);
	h->bucket[hist_index(ns)]++;
}

/* Smallest value that falls in bucket i. */
uint64_t hist_bucket_low(unsigned i);
/* Reads only src's buckets from min_ns to max_ns: with thousands of
 * clients the pages of buckets no operation reached are never touched.
 * Into a zeroed dst, a copy. */
void hist_merge(struct histogram *dst, const struct histogram *src);
/* The same from a histogram kept by rows elsewhere: its tally, and for each
 * row r with 0 < row_of[r] <= nrows the buckets rows[row_of[r] - 1]. */
void hist_merge_rows(struct histogram *dst, const struct hist_tally *tally,
		     const uint16_t row_of[HIST_ROWS], const uint32_t (*rows)[HIST_SUB],
		     unsigned nrows);
/* Value at quantile q (0..1): the midpoint of its bucket, never above max. */
uint64_t hist_quantile(const struct histogram *h, double q);
double hist_mean_ns(const struct histogram *h);

#endif
