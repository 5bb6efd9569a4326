/* tbench-stats merge; see stats_merge.h. Everything that can be wrong with
 * the input is found before the first byte is written. */
#include "config.h"
#include "stats_merge.h"
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

struct host {
	const char *path;
	char *name;
	struct json_node doc;
};

struct merge {
	struct host *h;
	size_t n;
	struct histogram hist;          /* every host's execute phase */
	int status;                     /* index into status_names */
	char *error;                    /* "HOST: why; HOST: why"; NULL when all were ok */
	uint64_t clients, procs, payload, payload_all, ops;
};

static const char *const status_names[] = { "ok", "failed", "interrupted" };

/* ---- reading ------------------------------------------------------------------ */

static const char *text_at(const struct json_node *doc, const char *path)
{
	return json_scalar_text(json_get(doc, path));
}

/* A number at path, NaN when absent, null or not a number. */
static double num_at(const struct json_node *doc, const char *path)
{
	const struct json_node *n = json_get(doc, path);
	return n && n->type == JSON_NUMBER ? n->num : NAN;
}

/* A whole non-negative number, read from its text so that no digit is lost. */
static int u64_of(const struct json_node *n, uint64_t *out)
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
				       "are not one run and cannot be merged", m->h[i].path, p, text_at(doc, p),
				       lf ? " (" : "", lf ? text_at(doc, jpath(JP_SETTINGS_LOADFILE)) : "", lf ? ")" : "",
				       m->h[0].path, text_at(first, p), lf ? " (" : "",
				       lf ? text_at(first, jpath(JP_SETTINGS_LOADFILE)) : "", lf ? ")" : "",
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
	uint64_t sum, max, count, seen = 0;
	if (!b || b->type != JSON_ARRAY || u64_of(json_get(hist, SK_SUM_NS), &sum) < 0 ||
	    u64_of(json_get(hist, SK_MAX_NS), &max) < 0 || u64_of(json_get(lat, SK_COUNT), &count) < 0)
		return err_set(err, "%s: no result.latency.histogram with sum_ns, max_ns and buckets "
			       "(written by an older tbench?): run it again with this version", x->path);
	for (size_t i = 0; i < b->nkids; i++) {
		const struct json_node *e = &b->kids[i];
		uint64_t lo, hi, c;
		if (e->type != JSON_ARRAY || e->nkids != 3 || u64_of(&e->kids[0], &lo) < 0 ||
		    u64_of(&e->kids[1], &hi) < 0 || u64_of(&e->kids[2], &c) < 0)
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
	}
	if (seen != count)
		return err_set(err, "%s: result.latency.histogram holds %" PRIu64 " operations, "
			       "result.latency.count says %" PRIu64, x->path, seen, count);
	m->hist.count += count;
	m->hist.sum_ns += sum;
	if (max > m->hist.max_ns)
		m->hist.max_ns = max;
	return 0;
}

static int add_u64(const struct host *x, enum jpath path, uint64_t *total, struct errbuf *err)
{
	uint64_t v;
	if (u64_of(jget(&x->doc, path), &v) < 0)
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

/* ---- sums and weighted means over the hosts ---------------------------------------- */

/* The sum of a figure; NaN when no host has it. */
static double sum_of(const struct merge *m, const char *path)
{
	double total = 0;
	int known = 0;
	for (size_t i = 0; i < m->n; i++) {
		double v = num_at(&m->h[i].doc, path);
		if (isfinite(v)) {
			total += v;
			known = 1;
		}
	}
	return known ? total : NAN;
}

static double max_of(const struct merge *m, const char *path)
{
	double best = NAN;
	for (size_t i = 0; i < m->n; i++) {
		double v = num_at(&m->h[i].doc, path);
		if (isfinite(v) && !(v <= best))
			best = v;
	}
	return best;
}

/* Sum of value x weight over the hosts, divided by the sum of the weights:
 * a figure per operation over every host's operations. NaN when a host
 * lacks the figure or its weight (a mean over some hosts would mislead). */
static double weighted_mean(const struct merge *m, const char *path, const char *weight_path,
			    const char *weight_factor)
{
	double total = 0, weights = 0;
	for (size_t i = 0; i < m->n; i++) {
		double v = num_at(&m->h[i].doc, path), w = num_at(&m->h[i].doc, weight_path);
		if (weight_factor)
			w *= num_at(&m->h[i].doc, weight_factor);
		if (!isfinite(v) || !isfinite(w))
			return NAN;
		total += v * w;
		weights += w;
	}
	return weights > 0 ? total / weights : NAN;
}

/* ---- writing --------------------------------------------------------------------------- */

static void put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6f", v);
	else
		fputs("null", f);
}

/* A value as it was read, on one line: numbers keep the text they had. */
static void put_node(FILE *f, const struct json_node *n)
{
	static const char *const words[] = { "null", "false", "true" };
	if (!n) {
		fputs("null", f);
		return;
	}
	switch (n->type) {
	case JSON_NULL:
	case JSON_FALSE:
	case JSON_TRUE:
		fputs(words[n->type], f);
		break;
	case JSON_NUMBER:
		fputs(n->text, f);
		break;
	case JSON_STRING:
		json_write_string(f, n->text);
		break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		fputc(n->type == JSON_ARRAY ? '[' : '{', f);
		for (size_t i = 0; i < n->nkids; i++) {
			fputs(i ? ", " : (n->type == JSON_OBJECT ? " " : ""), f);
			if (n->type == JSON_OBJECT) {
				json_write_string(f, n->kids[i].key);
				fputs(": ", f);
			}
			put_node(f, &n->kids[i]);
		}
		fputs(n->type == JSON_ARRAY ? "]" : (n->nkids ? " }" : "}"), f);
		break;
	}
}

static void put_key(FILE *f, const char *sep, const char *key)
{
	fputs(sep, f);
	json_write_string(f, key);
	fputs(": ", f);
}

/* The first host's settings, with the clients and processes of all. */
static void put_settings(FILE *f, const struct merge *m, const struct json_node *s)
{
	fputc('{', f);
	for (size_t i = 0; i < s->nkids; i++) {
		put_key(f, i ? ",\n    " : "\n    ", s->kids[i].key);
		if (strcmp(s->kids[i].key, SK_CLIENTS) == 0)
			fprintf(f, "%" PRIu64, m->clients);
		else if (strcmp(s->kids[i].key, SK_PROCS) == 0)
			fprintf(f, "%" PRIu64, m->procs);
		else
			put_node(f, &s->kids[i]);
	}
	fputs("\n  }", f);
}

static void put_figure(FILE *f, const char *key, double v)
{
	put_key(f, ",\n    ", key);
	put_num(f, v);
}

static void put_result(FILE *f, const struct merge *m)
{
	static const char *const cpu[] = { SK_USER_S, SK_SYSTEM_S, SK_CLIENTS_USER_S, SK_CLIENTS_SYSTEM_S,
					   SK_OTHERS_USER_S, SK_OTHERS_SYSTEM_S };
	char path[64];
	double cpu_total = 0;

	fprintf(f, "{\n    " SKEY(SK_STATUS) "\"%s\",\n    " SKEY(SK_PARTIAL) "%s,\n    " SKEY(SK_ERROR),
		status_names[m->status], m->status ? "true" : "false");
	json_write_string(f, m->error ? m->error : "");
	put_figure(f, SK_MB_PER_SEC, sum_of(m, jpath(JP_RESULT_MB_PER_SEC)));
	put_figure(f, SK_OPS_PER_SEC, sum_of(m, jpath(JP_RESULT_OPS_PER_SEC)));
	put_figure(f, SK_EXECUTE_S, max_of(m, jpath(JP_RESULT_EXECUTE_S)));
	put_figure(f, SK_TOTAL_S, max_of(m, jpath(JP_RESULT_TOTAL_S)));
	fprintf(f, ",\n    " SKEY(SK_PAYLOAD_BYTES) "%" PRIu64 ",\n    " SKEY(SK_PAYLOAD_BYTES_ALL_PHASES)
		"%" PRIu64 ",\n    " SKEY(SK_OPS) "%" PRIu64, m->payload, m->payload_all, m->ops);
	put_figure(f, SK_MAX_LATENCY_MS, max_of(m, jpath(JP_RESULT_MAX_LATENCY_MS)));
	put_key(f, ",\n    ", SK_LATENCY);
	if (m->hist.count) {
		fputs("{ ", f);
		schema_put_latency(f, &m->hist);
		fputs(" }", f);
	} else {
		fputs("null", f);
	}
	fputs(",\n    " SKEY(SK_CPU) "{", f);
	for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++) {
		snprintf(path, sizeof(path), "%s.%s", jpath(JP_CPU), cpu[i]);
		double v = sum_of(m, path);
		put_key(f, i ? ", " : " ", cpu[i]);
		put_num(f, v);
		if (i < 2 && isfinite(v))
			cpu_total += v;
	}
	put_key(f, ", ", SK_CPU_US_PER_MB);
	fprintf(f, "%.3f }\n  }", m->payload_all ? cpu_total * 1e6 / (m->payload_all / 1e6) : 0);
}

/* A member of cost.per_operation over every host: task counts summed,
 * bytes per segment weighted by segments, the rest by operations. */
static void put_cost_figure(FILE *f, const struct merge *m, const char *sep, const char *group,
			    const char *key)
{
	char path[160];
	snprintf(path, sizeof(path), "%s.%s%s%s", jpath(JP_PER_OP), group ? group : "", group ? "." : "", key);
	put_key(f, sep, key);
	double v;
	if (strcmp(key, SK_TASKS) == 0)
		v = sum_of(m, path);
	else if (strcmp(key, SK_PAYLOAD_BYTES_PER_SEGMENT) == 0)
		v = weighted_mean(m, path, jpath(JP_COST_OPERATIONS), jpath(JP_PER_OP_SEGMENTS_OUT));
	else
		v = weighted_mean(m, path, jpath(JP_COST_OPERATIONS), NULL);
	put_num(f, v);
}

static void put_cost(FILE *f, const struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct json_node *c = jget(&m->h[i].doc, JP_COST);
		if (!c || c->type != JSON_OBJECT) {
			fputs("null", f);
			return;
		}
	}
	const struct json_node *per = jget(&m->h[0].doc, JP_PER_OP);
	fputs("{\n    " SKEY(SK_PER_OPERATION) "{", f);
	for (size_t i = 0; per && i < per->nkids; i++) {
		const struct json_node *k = &per->kids[i];
		const char *sep = i ? ",\n      " : "\n      ";
		if (k->type != JSON_OBJECT) {
			put_cost_figure(f, m, sep, NULL, k->key);
			continue;
		}
		put_key(f, sep, k->key);
		fputc('{', f);
		for (size_t j = 0; j < k->nkids; j++)
			put_cost_figure(f, m, j ? ", " : " ", k->key, k->kids[j].key);
		fputs(" }", f);
	}
	fprintf(f, "\n    },\n    " SKEY(SK_OPERATIONS) "%.0f,\n    " SKEY(SK_DEVICE),
		sum_of(m, jpath(JP_COST_OPERATIONS)));
	put_node(f, jget(&m->h[0].doc, JP_COST_DEVICE));
	fputs(",\n    " SKEY(SK_NOT_AVAILABLE), f);
	put_node(f, jget(&m->h[0].doc, JP_COST_NOT_AVAILABLE));
	fputs("\n  }", f);
}

/* The backend's own counts, summed; null where a host has none. */
static void put_counters(FILE *f, const struct merge *m)
{
	const struct json_node *first = jget(&m->h[0].doc, JP_BACKEND_COUNTERS);
	if (!first || first->type != JSON_OBJECT) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	for (size_t i = 0; i < first->nkids; i++) {
		uint64_t total = 0, v;
		int known = 1;
		for (size_t h = 0; h < m->n && known; h++) {
			const struct json_node *c = jget(&m->h[h].doc, JP_BACKEND_COUNTERS);
			known = c && c->type == JSON_OBJECT && u64_of(json_get(c, first->kids[i].key), &v) == 0;
			total += known ? v : 0;
		}
		put_key(f, i ? ", " : " ", first->kids[i].key);
		if (known)
			fprintf(f, "%" PRIu64, total);
		else
			fputs("null", f);
	}
	fputs(first->nkids ? " }" : "}", f);
}

/* The entry of operation `name` in a host's operations, or NULL. */
static const struct json_node *op_named(const struct json_node *doc, const char *name)
{
	const struct json_node *ops = jget(doc, JP_OPERATIONS);
	for (size_t i = 0; ops && ops->type == JSON_ARRAY && i < ops->nkids; i++)
		if (strcmp(text_at(&ops->kids[i], SK_NAME), name) == 0)
			return &ops->kids[i];
	return NULL;
}

/* One operation over every host: counts summed, the mean weighted by
 * them, the worst of the maxima. The hosts keep no histogram per
 * operation, so its percentiles are null here. */
static void put_operation(FILE *f, const struct merge *m, const char *name)
{
	double count = 0, total_ms = 0, max = NAN;
	for (size_t h = 0; h < m->n; h++) {
		const struct json_node *op = op_named(&m->h[h].doc, name);
		double c = op ? num_at(op, SK_COUNT) : NAN, avg = op ? num_at(op, SK_AVG_MS) : NAN;
		double mx = op ? num_at(op, SK_MAX_MS) : NAN;
		if (!isfinite(c) || !isfinite(avg))
			continue;
		count += c;
		total_ms += c * avg;
		if (isfinite(mx) && !(mx <= max))
			max = mx;
	}
	fputs("\n    { " SKEY(SK_NAME), f);
	json_write_string(f, name);
	fprintf(f, ", " SKEY(SK_COUNT) "%.0f, " SKEY(SK_AVG_MS), count);
	put_num(f, count > 0 ? total_ms / count : NAN);
	fputs(", " SKEY(SK_P50_MS) "null, " SKEY(SK_P99_MS) "null, " SKEY(SK_P999_MS) "null, "
	      SKEY(SK_MAX_MS), f);
	put_num(f, max);
	fputs(" }", f);
}

/* Every operation any host ran, in the order they first appear. */
static void put_operations(FILE *f, const struct merge *m)
{
	int first = 1;
	fputc('[', f);
	for (size_t h = 0; h < m->n; h++) {
		const struct json_node *ops = jget(&m->h[h].doc, JP_OPERATIONS);
		for (size_t i = 0; ops && ops->type == JSON_ARRAY && i < ops->nkids; i++) {
			const char *name = text_at(&ops->kids[i], SK_NAME);
			int seen = 0;
			for (size_t e = 0; e < h && !seen; e++)
				seen = op_named(&m->h[e].doc, name) != NULL;
			if (seen)
				continue;
			fputs(first ? "" : ",", f);
			put_operation(f, m, name);
			first = 0;
		}
	}
	fputs("\n  ]", f);
}

/* Every host's clients, numbered again from 0, each with its host. */
static void put_clients(FILE *f, const struct merge *m)
{
	size_t id = 0;
	fputc('[', f);
	for (size_t h = 0; h < m->n; h++) {
		const struct json_node *cl = jget(&m->h[h].doc, JP_CLIENTS);
		for (size_t i = 0; cl && cl->type == JSON_ARRAY && i < cl->nkids; i++) {
			const struct json_node *c = &cl->kids[i];
			fprintf(f, "%s\n    { " SKEY(SK_ID) "%zu, " SKEY(SK_HOST), id ? "," : "", id);
			json_write_string(f, m->h[h].name);
			for (size_t k = 0; c->type == JSON_OBJECT && k < c->nkids; k++) {
				if (strcmp(c->kids[k].key, SK_ID) == 0)
					continue;
				put_key(f, ", ", c->kids[k].key);
				put_node(f, &c->kids[k]);
			}
			fputs(" }", f);
			id++;
		}
	}
	fputs("\n  ]", f);
}

/* The reasons of host doc's noise not yet in names[0..*n): appended. */
static void add_reasons(const struct json_node *doc, const char **names, size_t max, size_t *n)
{
	const struct json_node *r = jget(doc, JP_NOISE_REASONS);
	for (size_t i = 0; r && r->type == JSON_ARRAY && i < r->nkids; i++) {
		const char *name = json_scalar_text(&r->kids[i]);
		size_t k = 0;
		while (k < *n && strcmp(names[k], name) != 0)
			k++;
		if (k == *n && *n < max)
			names[(*n)++] = name;
	}
}

/* The noise of the hosts' runs: each figure of the worst host, disturbed
 * when any host was, with every host's reasons; null when none says. */
static void put_noise(FILE *f, const struct merge *m)
{
	static const char *const worst[] = { SK_STEAL_PCT, SK_OTHER_CPU_PCT, SK_OUTSIDE_RUNNABLE,
					     SK_LONGEST_STALL_S, SK_OVERRUN_S };
	const char *reasons[32];
	size_t nreasons = 0, judged = 0, disturbed = 0;
	char path[64];

	for (size_t h = 0; h < m->n; h++) {
		const struct json_node *d = jget(&m->h[h].doc, JP_NOISE_DISTURBED);
		judged += d && (d->type == JSON_TRUE || d->type == JSON_FALSE);
		disturbed += d && d->type == JSON_TRUE;
		add_reasons(&m->h[h].doc, reasons, sizeof(reasons) / sizeof(reasons[0]), &nreasons);
	}
	if (!judged) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	for (size_t k = 0; k < sizeof(worst) / sizeof(worst[0]); k++) {
		snprintf(path, sizeof(path), "%s.%s", jpath(JP_NOISE), worst[k]);
		put_key(f, k ? ", " : " ", worst[k]);
		put_num(f, max_of(m, path));
	}
	fprintf(f, ", " SKEY(SK_HOSTS_JUDGED) "%zu, " SKEY(SK_HOSTS_DISTURBED) "%zu, " SKEY(SK_DISTURBED)
		"%s, " SKEY(SK_REASONS) "[",
		judged, disturbed, disturbed ? "true" : "false");
	for (size_t k = 0; k < nreasons; k++) {
		fputs(k ? ", " : "", f);
		json_write_string(f, reasons[k]);
	}
	fputs("] }", f);
}

/* Each host's own figures, as its tbench wrote them. */
static void put_hosts(FILE *f, const struct merge *m)
{
	static const struct {
		const char *key;
		enum jpath from;
	} kept[] = {
		{ SK_STATUS, JP_RESULT_STATUS }, { SK_ERROR, JP_RESULT_ERROR },
		{ SK_CLIENTS, JP_SETTINGS_CLIENTS }, { SK_MB_PER_SEC, JP_RESULT_MB_PER_SEC },
		{ SK_OPS_PER_SEC, JP_RESULT_OPS_PER_SEC }, { SK_OPS, JP_RESULT_OPS },
		{ SK_EXECUTE_S, JP_RESULT_EXECUTE_S }, { SK_MAX_LATENCY_MS, JP_RESULT_MAX_LATENCY_MS },
		{ SK_AVG_MS, JP_LATENCY_AVG_MS }, { SK_P50_MS, JP_LATENCY_P50_MS },
		{ SK_P99_MS, JP_LATENCY_P99_MS }, { SK_P999_MS, JP_LATENCY_P999_MS },
		{ SK_START_AT, JP_SETTINGS_START_AT }, { SK_NETNS, JP_NETNS },
		{ SK_TBENCH_VERSION, JP_TBENCH_VERSION }, { SK_NOISE, JP_NOISE },
	};
	fputc('[', f);
	for (size_t h = 0; h < m->n; h++) {
		fprintf(f, "%s\n    { " SKEY(SK_NAME), h ? "," : "");
		json_write_string(f, m->h[h].name);
		fputs(", " SKEY(SK_FILE), f);
		json_write_string(f, m->h[h].path);
		for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
			put_key(f, ", ", kept[k].key);
			put_node(f, jget(&m->h[h].doc, kept[k].from));
		}
		fputs(" }", f);
	}
	fputs("\n  ]", f);
}

/* The document: this schema's version, then the first host's members in
 * their order, merged where the hosts' figures differ, the others as the
 * first host has them. */
static void put_document(FILE *f, const struct merge *m)
{
	static const struct {
		const char *key;
		void (*put)(FILE *f, const struct merge *m);
	} merged[] = {
		{ SK_RESULT, put_result }, { SK_COST, put_cost }, { SK_NOISE, put_noise },
		{ SK_BACKEND_COUNTERS, put_counters }, { SK_OPERATIONS, put_operations },
		{ SK_CLIENTS, put_clients },
	};
	enum { NMERGED = sizeof(merged) / sizeof(merged[0]) };
	const struct json_node *doc = &m->h[0].doc;

	fprintf(f, "{\n  " SKEY(SK_SCHEMA_VERSION) "%d", SCHEMA_VERSION);
	for (size_t i = 0; i < doc->nkids; i++) {
		const struct json_node *k = &doc->kids[i];
		size_t w = 0;
		if (strcmp(k->key, SK_SCHEMA_VERSION) == 0)
			continue;
		while (w < NMERGED && strcmp(merged[w].key, k->key) != 0)
			w++;
		put_key(f, ",\n  ", k->key);
		if (strcmp(k->key, SK_SETTINGS) == 0 && k->type == JSON_OBJECT)
			put_settings(f, m, k);
		else if (w < NMERGED)
			merged[w].put(f, m);
		else if (strcmp(k->key, SK_HOSTS) != 0)
			put_node(f, k);
		else
			fputs("null", f);   /* a merged document merged again: its hosts are below */
	}
	put_key(f, ",\n  ", SK_HOSTS);
	put_hosts(f, m);
	fputs("\n}\n", f);
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
	put_document(out, &m);
	rc = 0;
out:
	merge_free(&m);
	return rc;
}
