/* tbench-stats merge; see stats_merge.h. Everything that can be wrong with
 * the input is found before the first byte is written. */
#include "config.h"
#include "stats_merge.h"
#include "stats_merge_state.h"
#include "histogram.h"
#include "json.h"
#include "schema.h"
#include "table.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading ------------------------------------------------------------------ */

const char *merge_text_at(const struct json_node *doc, const char *path)
{
	return json_scalar_text(json_get(doc, path));
}

double merge_num_at(const struct json_node *doc, const char *path)
{
	const struct json_node *n = json_get(doc, path);
	return n && n->type == JSON_NUMBER ? n->num : NAN;
}

int merge_u64_of(const struct json_node *n, uint64_t *out)
{
	char *end;
	if (!n || n->type != JSON_NUMBER || n->text[0] < '0' || n->text[0] > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(n->text, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Two settings agree: both missing or null, equal numbers, or equal text. */
static int same_value(const struct json_node *a, const struct json_node *b)
{
	int a_none = !a || a->type == JSON_NULL, b_none = !b || b->type == JSON_NULL;
	if (a_none || b_none)
		return a_none && b_none;
	if (a->type == JSON_NUMBER && b->type == JSON_NUMBER)
		return a->num == b->num;
	return a->type == b->type && strcmp(json_scalar_text(a), json_scalar_text(b)) == 0;
}

/* What must be equal for several hosts' runs to be one run. */
static const struct {
	enum jpath path;
	const char *what;
} must_agree[] = {
	{ JP_SETTINGS_BACKEND, "backend" },
	{ JP_SETTINGS_MODEL, "client model" },
	{ JP_SETTINGS_CLIENTS_PER_PROCESS, "clients per process" },
	{ JP_SETTINGS_LOADFILE_OPS, "loadfile" },
	{ JP_SETTINGS_LOADFILE_PASS_BYTES, "loadfile" },
	{ JP_SETTINGS_TIMELIMIT_S, "time limit (-t)" },
	{ JP_SETTINGS_WARMUP_S, "warm-up" },
	{ JP_SETTINGS_RUN_ONCE, "--run-once" },
	{ JP_SETTINGS_TARGET_RATE_MB_S, "target rate (-R)" },
	{ JP_SETTINGS_COPY_REPLIES, "--copy-replies" },
	{ JP_SETTINGS_START_AT, "start instant (--start-at)" },
	{ JP_SETTINGS_INJECT_NS, "injected cost (--inject-ns)" },
};

static int check_agree(const struct merge *m, struct errbuf *err)
{
	const struct json_node *first = &m->h[0].doc;
	if (first->type != JSON_OBJECT || !jget(first, JP_SETTINGS) || !jget(first, JP_RESULT))
		return err_set(err, "%s: not a tbench --json document (no settings or result)", m->h[0].path);
	for (size_t i = 1; i < m->n; i++) {
		const struct json_node *doc = &m->h[i].doc;
		if (doc->type != JSON_OBJECT || !jget(doc, JP_SETTINGS) || !jget(doc, JP_RESULT))
			return err_set(err, "%s: not a tbench --json document (no settings or result)",
				       m->h[i].path);
		for (size_t k = 0; k < sizeof(must_agree) / sizeof(must_agree[0]); k++) {
			const char *p = jpath(must_agree[k].path);
			if (same_value(json_get(first, p), json_get(doc, p)))
				continue;
			int lf = strcmp(must_agree[k].what, "loadfile") == 0;
			return err_set(err, "%s: %s is '%s'%s%s%s, %s's is '%s'%s%s%s: runs with another %s "
				       "are not one run and cannot be merged", m->h[i].path, p, merge_text_at(doc, p),
				       lf ? " (" : "", lf ? merge_text_at(doc, jpath(JP_SETTINGS_LOADFILE)) : "", lf ? ")" : "",
				       m->h[0].path, merge_text_at(first, p), lf ? " (" : "",
				       lf ? merge_text_at(first, jpath(JP_SETTINGS_LOADFILE)) : "", lf ? ")" : "",
				       must_agree[k].what);
		}
	}
	return 0;
}

/* Adds a host's result.latency.histogram to m->hist, checking that its
 * buckets are this tbench's and that they hold result.latency.count. */
static int add_histogram(struct merge *m, const struct host *x, struct errbuf *err)
{
	const struct json_node *lat = jget(&x->doc, JP_LATENCY);
	if (!lat || lat->type == JSON_NULL)
		return 0;               /* nothing measured: its status says why */
	const struct json_node *hist = json_get(lat, SK_HISTOGRAM);
	const struct json_node *b = hist ? json_get(hist, SK_BUCKETS) : NULL;
	uint64_t sum, max, count, seen = 0, least = UINT64_MAX;
	if (!b || b->type != JSON_ARRAY || merge_u64_of(json_get(hist, SK_SUM_NS), &sum) < 0 ||
	    merge_u64_of(json_get(hist, SK_MAX_NS), &max) < 0 || merge_u64_of(json_get(lat, SK_COUNT), &count) < 0)
		return err_set(err, "%s: no result.latency.histogram with sum_ns, max_ns and buckets "
			       "(written by an older tbench?): run it again with this version", x->path);
	for (size_t i = 0; i < b->nkids; i++) {
		const struct json_node *e = &b->kids[i];
		uint64_t lo, hi, c;
		if (e->type != JSON_ARRAY || e->nkids != 3 || merge_u64_of(&e->kids[0], &lo) < 0 ||
		    merge_u64_of(&e->kids[1], &hi) < 0 || merge_u64_of(&e->kids[2], &c) < 0)
			return err_set(err, "%s: result.latency.histogram.buckets.%zu: want [low_ns, high_ns, "
				       "count]", x->path, i);
		unsigned k = hist_index(lo);
		uint64_t want_hi = k + 1 < HIST_BUCKETS ? hist_bucket_low(k + 1) : lo;
		if (hist_bucket_low(k) != lo || hi != want_hi)
			return err_set(err, "%s: result.latency.histogram.buckets.%zu: [%" PRIu64 ", %" PRIu64
				       ") ns is not a bucket of this tbench's histogram (another version wrote "
				       "it?)", x->path, i, lo, hi);
		if (c > UINT32_MAX - m->hist.bucket[k])
			return err_set(err, "%s: more than 2^32 operations in the latency bucket [%" PRIu64
				       ", %" PRIu64 ") ns: too many to merge", x->path, lo, hi);
		m->hist.bucket[k] += (uint32_t)c;
		seen += c;
		if (c && lo < least)
			least = lo;
	}
	if (seen != count)
		return err_set(err, "%s: result.latency.histogram holds %" PRIu64 " operations, "
			       "result.latency.count says %" PRIu64, x->path, seen, count);
	if (count && (m->hist.count == 0 || least < m->hist.min_ns))
		m->hist.min_ns = least;
	m->hist.count += count;
	m->hist.sum_ns += sum;
	if (max > m->hist.max_ns)
		m->hist.max_ns = max;
	return 0;
}

static int add_u64(const struct host *x, enum jpath path, uint64_t *total, struct errbuf *err)
{
	uint64_t v;
	if (merge_u64_of(jget(&x->doc, path), &v) < 0)
		return err_set(err, "%s: %s is not a whole number", x->path, jpath(path));
	*total += v;
	return 0;
}

/* "HOST: why" of a run that did not end well, after those before it. */
static void add_error(struct merge *m, const struct host *x, const char *status)
{
	const char *why = json_scalar_text(jget(&x->doc, JP_RESULT_ERROR));
	size_t len = (m->error ? strlen(m->error) + 2 : 0) + strlen(x->name) + strlen(why) +
		     strlen(status) + 16;
	char *s = xrealloc(NULL, len);
	snprintf(s, len, "%s%s%s: %s", m->error ? m->error : "", m->error ? "; " : "", x->name,
		 *why ? why : status);
	free(m->error);
	m->error = s;
}

static int gather(struct merge *m, struct errbuf *err)
{
	if (check_agree(m, err) < 0)
		return -1;
	for (size_t i = 0; i < m->n; i++) {
		const struct host *x = &m->h[i];
		const char *st = json_scalar_text(jget(&x->doc, JP_RESULT_STATUS));
		if (add_histogram(m, x, err) < 0 || add_u64(x, JP_SETTINGS_CLIENTS, &m->clients, err) < 0 ||
		    add_u64(x, JP_SETTINGS_PROCS, &m->procs, err) < 0 ||
		    add_u64(x, JP_RESULT_PAYLOAD_BYTES, &m->payload, err) < 0 ||
		    add_u64(x, JP_RESULT_PAYLOAD_BYTES_ALL_PHASES, &m->payload_all, err) < 0 ||
		    add_u64(x, JP_RESULT_OPS, &m->ops, err) < 0)
			return -1;
		if (strcmp(st, "ok") == 0)
			continue;
		if (m->status == 0)
			m->status = strcmp(st, "interrupted") == 0 ? 2 : 1;
		add_error(m, x, *st ? st : "no status");
	}
	return 0;
}

/* "dir/h1.json" -> "h1" */
static char *name_of_file(const char *path)
{
	const char *base = strrchr(path, '/');
	char *name = xstrdup(base ? base + 1 : path);
	size_t len = strlen(name);
	if (len > 5 && strcmp(name + len - 5, ".json") == 0)
		name[len - 5] = '\0';
	return name;
}

static void merge_free(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		json_free(&m->h[i].doc);
		free(m->h[i].name);
	}
	free(m->h);
	free(m->error);
}

int stats_merge(FILE *out, size_t n, const char *const *paths, const char *const *names,
		struct errbuf *err)
{
	struct merge m = { 0 };
	int rc = -1;

	if (n == 0)
		return err_set(err, "no JSON documents to merge");
	m.h = xrealloc(NULL, n * sizeof(*m.h));
	memset(m.h, 0, n * sizeof(*m.h));
	while (m.n < n) {
		struct host *x = &m.h[m.n];
		x->path = paths[m.n];
		x->name = names && names[m.n] ? xstrdup(names[m.n]) : name_of_file(paths[m.n]);
		m.n++;          /* merge_free frees it from now on */
		if (schema_read_file(&x->doc, x->path, err) < 0)
			goto out;
	}
	if (gather(&m, err) < 0)
		goto out;
	if (merge_put_document(out, &m, err) < 0)
		goto out;
	rc = 0;
out:
	merge_free(&m);
	return rc;
}
