#include "config.h"
#include "histogram.h"

#include <string.h>

static void tally_merge(struct hist_tally *dst, const struct hist_tally *src)
{
	if (dst->count == 0 || src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
}

uint64_t hist_bucket_low(unsigned i)
{
	if (i < HIST_SUB)
		return i;
	unsigned exp = (i >> HIST_SUB_BITS) + HIST_SUB_BITS - 1;
	uint64_t sub = i & (HIST_SUB - 1);
	return (HIST_SUB + sub) << (exp - HIST_SUB_BITS);
}

void hist_merge(struct histogram *dst, const struct histogram *src)
{
	if (src->count == 0)
		return;
	tally_merge(&dst->tally, &src->tally);
	for (unsigned i = hist_index(src->min_ns), last = hist_index(src->max_ns); i <= last; i++)
		dst->bucket[i] += src->bucket[i];
}

void hist_merge_rows(struct histogram *dst, const struct hist_tally *tally,
		     const uint16_t row_of[HIST_ROWS], const uint32_t (*rows)[HIST_SUB],
		     unsigned nrows)
{
	if (tally->count == 0)
		return;
	tally_merge(&dst->tally, tally);
	for (unsigned r = 0; r < HIST_ROWS; r++) {
		unsigned j = row_of[r];
		if (j == 0 || j > nrows)
			continue;
		for (unsigned k = 0; k < HIST_SUB; k++)
			dst->bucket[r * HIST_SUB + k] += rows[j - 1][k];
	}
}

uint64_t hist_quantile(const struct histogram *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count + 0.5);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;

	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen < rank)
			continue;
		uint64_t lo = hist_bucket_low(i);
		uint64_t hi = i + 1 < HIST_BUCKETS ? hist_bucket_low(i + 1) : lo;
		uint64_t mid = lo + (hi - lo) / 2;
		return mid > h->max_ns ? h->max_ns : mid;
	}
	return h->max_ns;
}

double hist_mean_ns(const struct histogram *h)
{
	return h->count ? (double)h->sum_ns / (double)h->count : 0.0;
}
