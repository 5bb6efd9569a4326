/* tbench-stats merge: the merged document written (see stats_merge.h),
 * from hosts that stats_merge.c found to be one run. */
#include "config.h"
#include "json.h"
#include "schema.h"
#include "stats_merge_state.h"

#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[] = { "ok", "failed", "interrupted" };

/* ---- sums and weighted means over the hosts ---------------------------------------- */

/* The sum of a figure; NaN when no host has it. */
static double sum_of(const struct merge *m, const char *path)
{
	double total = 0;
	int known = 0;
	for (size_t i = 0; i < m->n; i++) {
		double v = merge_num_at(&m->h[i].doc, path);
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
		double v = merge_num_at(&m->h[i].doc, path);
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
		double v = merge_num_at(&m->h[i].doc, path), w = merge_num_at(&m->h[i].doc, weight_path);
		if (weight_factor)
			w *= merge_num_at(&m->h[i].doc, weight_factor);
		if (!isfinite(v) || !isfinite(w))
			return NAN;
		total += v * w;
		weights += w;
	}
	return weights > 0 ? total / weights : NAN;
}

/* ---- writing --------------------------------------------------------------------------- */

typedef struct json_object jobj;

/* A figure: null when not finite. */
static jobj *num(double v)
{
	return json_fixed("%.6f", v);
}

/* A count: a whole number, or null. */
static jobj *count(double v)
{
	return json_fixed("%.0f", v);
}

/* A value as it was read: numbers keep the text they had. */
static jobj *copy_node(const struct json_node *n)
{
	jobj *o = NULL;

	if (!n || n->type == JSON_NULL)
		return NULL;
	if (n->type == JSON_TRUE || n->type == JSON_FALSE)
		return json_object_new_boolean(n->type == JSON_TRUE);
	if (n->type == JSON_NUMBER)
		return json_object_new_double_s(n->num, n->text);
	if (n->type == JSON_STRING)
		return json_object_new_string(n->text);
	o = n->type == JSON_ARRAY ? json_object_new_array() : json_object_new_object();
	for (size_t i = 0; o && i < n->nkids; i++) {
		if (n->type == JSON_ARRAY)
			json_object_array_add(o, copy_node(&n->kids[i]));
		else
			json_put(o, n->kids[i].key, copy_node(&n->kids[i]));
	}
	return o;
}

/* The first host's settings, with the clients and processes of all. */
static jobj *settings(const struct merge *m, const struct json_node *s)
{
	jobj *o = json_object_new_object();

	for (size_t i = 0; i < s->nkids; i++) {
		const char *key = s->kids[i].key;
		if (strcmp(key, SK_CLIENTS) == 0)
			json_put(o, key, json_object_new_uint64(m->clients));
		else if (strcmp(key, SK_PROCS) == 0)
			json_put(o, key, json_object_new_uint64(m->procs));
		else
			json_put(o, key, copy_node(&s->kids[i]));
	}
	return o;
}

static jobj *cpu(const struct merge *m)
{
	static const char *const names[] = { SK_USER_S, SK_SYSTEM_S, SK_CLIENTS_USER_S,
					     SK_CLIENTS_SYSTEM_S, SK_OTHERS_USER_S, SK_OTHERS_SYSTEM_S };
	char path[64];
	double total = 0;
	jobj *o = json_object_new_object();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s.%s", jpath(JP_CPU), names[i]);
		double v = sum_of(m, path);
		json_put(o, names[i], num(v));
		if (i < 2 && isfinite(v))
			total += v;
	}
	json_put(o, SK_CPU_US_PER_MB,
		 json_fixed("%.3f", m->payload_all ? total * 1e6 / (m->payload_all / 1e6) : 0));
	return o;
}

static jobj *result(const struct merge *m)
{
	jobj *o = json_object_new_object();

	json_put(o, SK_STATUS, json_string(status_names[m->status]));
	json_put(o, SK_PARTIAL, json_object_new_boolean(m->status != 0));
	json_put(o, SK_ERROR, json_string(m->error ? m->error : ""));
	json_put(o, SK_MB_PER_SEC, num(sum_of(m, jpath(JP_RESULT_MB_PER_SEC))));
	json_put(o, SK_OPS_PER_SEC, num(sum_of(m, jpath(JP_RESULT_OPS_PER_SEC))));
	json_put(o, SK_EXECUTE_S, num(max_of(m, jpath(JP_RESULT_EXECUTE_S))));
	json_put(o, SK_TOTAL_S, num(max_of(m, jpath(JP_RESULT_TOTAL_S))));
	json_put(o, SK_PAYLOAD_BYTES, json_object_new_uint64(m->payload));
	json_put(o, SK_PAYLOAD_BYTES_ALL_PHASES, json_object_new_uint64(m->payload_all));
	json_put(o, SK_OPS, json_object_new_uint64(m->ops));
	json_put(o, SK_MAX_LATENCY_MS, num(max_of(m, jpath(JP_RESULT_MAX_LATENCY_MS))));
	json_put(o, SK_LATENCY, m->hist.count ? schema_latency(&m->hist) : NULL);
	json_put(o, SK_CPU, cpu(m));
	return o;
}

/* A member of cost.per_operation over every host: task counts summed,
 * bytes per segment weighted by segments, the rest by operations. */
static jobj *cost_figure(const struct merge *m, const char *group, const char *key)
{
	char path[160];
	double v;

	snprintf(path, sizeof(path), "%s.%s%s%s", jpath(JP_PER_OP), group ? group : "", group ? "." : "", key);
	if (strcmp(key, SK_TASKS) == 0)
		v = sum_of(m, path);
	else if (strcmp(key, SK_PAYLOAD_BYTES_PER_SEGMENT) == 0)
		v = weighted_mean(m, path, jpath(JP_COST_OPERATIONS), jpath(JP_PER_OP_SEGMENTS_OUT));
	else
		v = weighted_mean(m, path, jpath(JP_COST_OPERATIONS), NULL);
	return num(v);
}

/* Whether every host has an object at p. */
static bool every_host_has(const struct merge *m, enum jpath p)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct json_node *c = jget(&m->h[i].doc, p);
		if (!c || c->type != JSON_OBJECT)
			return false;
	}
	return true;
}

/* cost over every host; null unless every host has one. */
static jobj *cost(const struct merge *m)
{
	if (!every_host_has(m, JP_COST))
		return NULL;
	const struct json_node *per = jget(&m->h[0].doc, JP_PER_OP);
	jobj *o = json_object_new_object(), *per_op = json_object_new_object();
	for (size_t i = 0; per && i < per->nkids; i++) {
		const struct json_node *k = &per->kids[i];
		if (k->type != JSON_OBJECT) {
			json_put(per_op, k->key, cost_figure(m, NULL, k->key));
			continue;
		}
		jobj *group = json_object_new_object();
		for (size_t j = 0; j < k->nkids; j++)
			json_put(group, k->kids[j].key, cost_figure(m, k->key, k->kids[j].key));
		json_put(per_op, k->key, group);
	}
	json_put(o, SK_PER_OPERATION, per_op);
	json_put(o, SK_OPERATIONS, count(sum_of(m, jpath(JP_COST_OPERATIONS))));
	json_put(o, SK_DEVICE, copy_node(jget(&m->h[0].doc, JP_COST_DEVICE)));
	json_put(o, SK_NOT_AVAILABLE, copy_node(jget(&m->h[0].doc, JP_COST_NOT_AVAILABLE)));
	return o;
}

/* Whether every host has true at path. */
static int all_true(const struct merge *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct json_node *n = json_get(&m->h[i].doc, path);
		if (!n || n->type != JSON_TRUE)
			return 0;
	}
	return 1;
}

/* Whether --trace's member k at path is merged: lists (each system call, a
 * histogram's buckets) are each host's own, and left out. */
static bool trace_merged(const struct json_node *k)
{
	size_t lists = 0;

	for (size_t i = 0; i < k->nkids; i++)
		lists += k->kids[i].type == JSON_ARRAY;
	return !(k->type == JSON_ARRAY || (k->type == JSON_OBJECT && k->nkids && lists == k->nkids));
}

/* A member of --trace's object at path over every host, added to into
 * unless left out (trace_merged). Counts of tasks and operations are
 * summed, the phase's time is the longest, a flag holds when it holds on
 * every host, the figures per operation are weighted by each host's
 * operations. */
static void trace_member(jobj *into, const struct merge *m, const char *path,
			 const struct json_node *k)
{
	static const char *const summed[] = { SK_TASKS, SK_STARTED, SK_ENDED, SK_OPERATIONS,
					      SK_SAMPLES };
	char sub[256];
	jobj *v;

	if (!trace_merged(k))
		return;
	snprintf(sub, sizeof(sub), "%s.%s", path, k->key);
	if (k->type == JSON_OBJECT) {
		v = json_object_new_object();
		for (size_t i = 0; i < k->nkids; i++)
			trace_member(v, m, sub, &k->kids[i]);
	} else if (k->type == JSON_TRUE || k->type == JSON_FALSE) {
		v = json_object_new_boolean(all_true(m, sub));
	} else if (k->type != JSON_NUMBER || strcmp(k->key, SK_TOLERANCE_PCT) == 0) {
		v = copy_node(k);
	} else if (strcmp(k->key, SK_WALL_S) == 0) {
		v = num(max_of(m, sub));
	} else {
		int sum = 0;
		for (size_t i = 0; i < sizeof(summed) / sizeof(summed[0]); i++)
			sum |= strcmp(k->key, summed[i]) == 0;
		v = num(sum ? sum_of(m, sub) : weighted_mean(m, sub, jpath(JP_TRACE_OPERATIONS), NULL));
	}
	json_put(into, k->key, v);
}

/* --trace's object over every host; null unless every host traced. */
static jobj *trace(const struct merge *m)
{
	if (!every_host_has(m, JP_TRACE))
		return NULL;
	const struct json_node *t = jget(&m->h[0].doc, JP_TRACE);
	jobj *o = json_object_new_object();
	for (size_t i = 0; i < t->nkids; i++)
		trace_member(o, m, jpath(JP_TRACE), &t->kids[i]);
	return o;
}

/* The backend's own counts, summed; null where a host has none. */
static jobj *counters(const struct merge *m)
{
	const struct json_node *first = jget(&m->h[0].doc, JP_BACKEND_COUNTERS);
	if (!first || first->type != JSON_OBJECT)
		return NULL;
	jobj *o = json_object_new_object();
	for (size_t i = 0; i < first->nkids; i++) {
		uint64_t total = 0, v;
		int known = 1;
		for (size_t h = 0; h < m->n && known; h++) {
			const struct json_node *c = jget(&m->h[h].doc, JP_BACKEND_COUNTERS);
			known = c && c->type == JSON_OBJECT && merge_u64_of(json_get(c, first->kids[i].key), &v) == 0;
			total += known ? v : 0;
		}
		json_put(o, first->kids[i].key, known ? json_object_new_uint64(total) : NULL);
	}
	return o;
}

/* The entry of operation `name` in a host's operations, or NULL. */
static const struct json_node *op_named(const struct json_node *doc, const char *name)
{
	const struct json_node *ops = jget(doc, JP_OPERATIONS);
	for (size_t i = 0; ops && ops->type == JSON_ARRAY && i < ops->nkids; i++)
		if (strcmp(merge_text_at(&ops->kids[i], SK_NAME), name) == 0)
			return &ops->kids[i];
	return NULL;
}

/* One operation over every host: counts summed, the mean weighted by
 * them, the worst of the maxima. The hosts keep no histogram per
 * operation, so its percentiles are null here. */
static jobj *operation(const struct merge *m, const char *name)
{
	double n = 0, total_ms = 0, max = NAN;
	jobj *o = json_object_new_object();

	for (size_t h = 0; h < m->n; h++) {
		const struct json_node *op = op_named(&m->h[h].doc, name);
		double c = op ? merge_num_at(op, SK_COUNT) : NAN, avg = op ? merge_num_at(op, SK_AVG_MS) : NAN;
		double mx = op ? merge_num_at(op, SK_MAX_MS) : NAN;
		if (!isfinite(c) || !isfinite(avg))
			continue;
		n += c;
		total_ms += c * avg;
		if (isfinite(mx) && !(mx <= max))
			max = mx;
	}
	json_put(o, SK_NAME, json_string(name));
	json_put(o, SK_COUNT, count(n));
	json_put(o, SK_AVG_MS, num(n > 0 ? total_ms / n : NAN));
	json_put(o, SK_P50_MS, NULL);
	json_put(o, SK_P99_MS, NULL);
	json_put(o, SK_P999_MS, NULL);
	json_put(o, SK_MAX_MS, num(max));
	return o;
}

/* Every operation any host ran, in the order they first appear. */
static jobj *operations(const struct merge *m)
{
	jobj *a = json_object_new_array();

	for (size_t h = 0; h < m->n; h++) {
		const struct json_node *ops = jget(&m->h[h].doc, JP_OPERATIONS);
		for (size_t i = 0; ops && ops->type == JSON_ARRAY && i < ops->nkids; i++) {
			const char *name = merge_text_at(&ops->kids[i], SK_NAME);
			int seen = 0;
			for (size_t e = 0; e < h && !seen; e++)
				seen = op_named(&m->h[e].doc, name) != NULL;
			if (!seen)
				json_object_array_add(a, operation(m, name));
		}
	}
	return a;
}

/* Every host's clients, numbered again from 0, each with its host. */
static jobj *clients(const struct merge *m)
{
	size_t id = 0;
	jobj *a = json_object_new_array();

	for (size_t h = 0; h < m->n; h++) {
		const struct json_node *cl = jget(&m->h[h].doc, JP_CLIENTS);
		for (size_t i = 0; cl && cl->type == JSON_ARRAY && i < cl->nkids; i++) {
			const struct json_node *c = &cl->kids[i];
			jobj *o = json_object_new_object();
			json_put(o, SK_ID, json_object_new_uint64(id++));
			json_put(o, SK_HOST, json_string(m->h[h].name));
			for (size_t k = 0; c->type == JSON_OBJECT && k < c->nkids; k++)
				if (strcmp(c->kids[k].key, SK_ID) != 0)
					json_put(o, c->kids[k].key, copy_node(&c->kids[k]));
			json_object_array_add(a, o);
		}
	}
	return a;
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

/* cpu_freq over the hosts: exposed when any host exposes it, the CPUs
 * whose frequency changed summed. */
static jobj *cpu_freq(const struct merge *m)
{
	double changed = sum_of(m, jpath(JP_NOISE_FREQ_CHANGED_CPUS));   /* NaN: no host exposes it */
	jobj *o = json_object_new_object();

	json_put(o, SK_EXPOSED, json_object_new_boolean(isfinite(changed)));
	if (isfinite(changed))
		json_put(o, SK_CHANGED_CPUS, count(changed));
	return o;
}

/* The noise of the hosts' runs: each figure of the worst host, the counts
 * (migrations, CPUs whose frequency changed) summed, disturbed when any
 * host was, with every host's reasons; null when none says. */
static jobj *noise(const struct merge *m)
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
	if (!judged)
		return NULL;
	jobj *o = json_object_new_object(), *why = json_object_new_array();
	for (size_t k = 0; k < sizeof(worst) / sizeof(worst[0]); k++) {
		snprintf(path, sizeof(path), "%s.%s", jpath(JP_NOISE), worst[k]);
		json_put(o, worst[k], num(max_of(m, path)));
	}
	json_put(o, SK_CPU_MIGRATIONS, count(sum_of(m, jpath(JP_NOISE_CPU_MIGRATIONS))));
	json_put(o, SK_CPU_FREQ, cpu_freq(m));
	json_put(o, SK_HOSTS_JUDGED, json_object_new_uint64(judged));
	json_put(o, SK_HOSTS_DISTURBED, json_object_new_uint64(disturbed));
	json_put(o, SK_DISTURBED, json_object_new_boolean(disturbed > 0));
	for (size_t k = 0; k < nreasons; k++)
		json_object_array_add(why, json_string(reasons[k]));
	json_put(o, SK_REASONS, why);
	return o;
}

/* Each host's own figures, as its tbench wrote them. */
static jobj *hosts(const struct merge *m)
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
	jobj *a = json_object_new_array();

	for (size_t h = 0; h < m->n; h++) {
		jobj *o = json_object_new_object();
		json_put(o, SK_NAME, json_string(m->h[h].name));
		json_put(o, SK_FILE, json_string(m->h[h].path));
		for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++)
			json_put(o, kept[k].key, copy_node(jget(&m->h[h].doc, kept[k].from)));
		json_object_array_add(a, o);
	}
	return a;
}

/* The document: this schema's version, then the first host's members in
 * their order, merged where the hosts' figures differ, the others as the
 * first host has them. */
int merge_put_document(FILE *f, const struct merge *m, struct errbuf *err)
{
	static const struct {
		const char *key;
		jobj *(*make)(const struct merge *m);
	} merged[] = {
		{ SK_RESULT, result }, { SK_COST, cost }, { SK_NOISE, noise }, { SK_TRACE, trace },
		{ SK_BACKEND_COUNTERS, counters }, { SK_OPERATIONS, operations },
		{ SK_CLIENTS, clients },
	};
	enum { NMERGED = sizeof(merged) / sizeof(merged[0]) };
	const struct json_node *doc = &m->h[0].doc;
	jobj *out = json_object_new_object();

	json_put(out, SK_SCHEMA_VERSION, json_object_new_int(SCHEMA_VERSION));
	for (size_t i = 0; i < doc->nkids; i++) {
		const struct json_node *k = &doc->kids[i];
		size_t w = 0;
		if (strcmp(k->key, SK_SCHEMA_VERSION) == 0)
			continue;
		while (w < NMERGED && strcmp(merged[w].key, k->key) != 0)
			w++;
		if (strcmp(k->key, SK_SETTINGS) == 0 && k->type == JSON_OBJECT)
			json_put(out, k->key, settings(m, k));
		else if (w < NMERGED)
			json_put(out, k->key, merged[w].make(m));
		else if (strcmp(k->key, SK_HOSTS) != 0)   /* a merged document merged again: */
			json_put(out, k->key, copy_node(k));   /* its hosts are below */
	}
	json_put(out, SK_HOSTS, hosts(m));
	int rc = json_write_doc(f, out);
	json_object_put(out);
	return rc < 0 ? err_set(err, "merge: out of memory writing the document") : 0;
}
