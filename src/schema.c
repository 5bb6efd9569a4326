/* The --json document's paths, its latency object and its version; see
 * schema.h. */
#include "config.h"
#include "schema.h"

#include <math.h>
#include <stdlib.h>

static const char *const paths[JP_COUNT] = {
	[JP_NONE] = NULL,
#define SCHEMA_PATH(id, path) [JP_##id] = path,
	SCHEMA_PATHS(SCHEMA_PATH)
#undef SCHEMA_PATH
};

const char *jpath(enum jpath p)
{
	return p < JP_COUNT ? paths[p] : NULL;
}

const struct json_node *jget(const struct json_node *doc, enum jpath p)
{
	return doc && jpath(p) ? json_get(doc, jpath(p)) : NULL;
}

void schema_add_latency_figures(struct json_object *o, const struct histogram *h)
{
	json_put(o, SK_COUNT, json_object_new_uint64(h->count));
	json_put(o, SK_AVG_MS, json_fixed("%.6f", hist_mean_ns(h) / 1e6));
	json_put(o, SK_P50_MS, json_fixed("%.6f", hist_quantile(h, 0.50) / 1e6));
	json_put(o, SK_P99_MS, json_fixed("%.6f", hist_quantile(h, 0.99) / 1e6));
	json_put(o, SK_P999_MS, json_fixed("%.6f", hist_quantile(h, 0.999) / 1e6));
	json_put(o, SK_MAX_MS, json_fixed("%.6f", h->max_ns / 1e6));
}

/* The non-empty buckets as [low_ns, high_ns, count] (a bucket holds low <=
 * ns < high; the last, which clamps, has high = low), with the exact sum and
 * maximum: enough to merge runs and recompute hist_quantile's figures. */
static struct json_object *histogram(const struct histogram *h)
{
	struct json_object *o = json_object_new_object(), *buckets = json_object_new_array();

	json_put(o, SK_SUM_NS, json_object_new_uint64(h->sum_ns));
	json_put(o, SK_MAX_NS, json_object_new_uint64(h->max_ns));
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		uint64_t lo = hist_bucket_low(i), hi = i + 1 < HIST_BUCKETS ? hist_bucket_low(i + 1) : lo;
		json_object_array_add(buckets, json_bucket(lo, hi, h->bucket[i]));
	}
	json_put(o, SK_BUCKETS, buckets);
	return o;
}

struct json_object *schema_latency(const struct histogram *h)
{
	struct json_object *o = json_object_new_object();

	schema_add_latency_figures(o, h);
	json_put(o, SK_HISTOGRAM, histogram(h));
	return o;
}

int schema_check(const struct json_node *doc, const char *path, struct errbuf *err)
{
	const struct json_node *v = json_get(doc, SK_SCHEMA_VERSION);

	if (!v)
		return 0;       /* written before the version was: version 1 */
	if (v->type != JSON_NUMBER || !(v->num >= 1) || v->num != floor(v->num))
		return err_set(err, "%s: %s is '%s', not a whole number from 1: not a tbench --json "
			       "document?", path, SK_SCHEMA_VERSION, json_scalar_text(v));
	if (v->num > SCHEMA_VERSION)
		return err_set(err, "%s: %s %s is newer than this program reads (%d): read it with "
			       "the tbench-stats of the tbench that wrote it", path, SK_SCHEMA_VERSION,
			       v->text, SCHEMA_VERSION);
	return 0;
}

int schema_read_file(struct json_node *doc, const char *path, struct errbuf *err)
{
	if (json_read_file(doc, path, err) < 0)
		return -1;
	if (schema_check(doc, path, err) < 0) {
		json_free(doc);
		return -1;
	}
	return 0;
}
