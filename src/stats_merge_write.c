/* tbench-stats merge: the merged document written (see stats_merge.h),
 * from hosts that stats_merge.c found to be one run. */
#include "config.h"
#include "json.h"
#include "schema.h"
#include "stats_merge_state.h"

#include <inttypes.h>
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

/* A count: a whole number, or null. */
static void put_count(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.0f", v);
	else
		fputs("null", f);
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
		struct json_object *latency = schema_latency(&m->hist);
		json_write_value(f, latency);
		json_object_put(latency);
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

/* Whether every host has an object at p; null written when not. */
static int every_host_has(FILE *f, const struct merge *m, enum jpath p)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct json_node *c = jget(&m->h[i].doc, p);
		if (!c || c->type != JSON_OBJECT) {
			fputs("null", f);
			return 0;
		}
	}
	return 1;
}

static void put_cost(FILE *f, const struct merge *m)
{
	if (!every_host_has(f, m, JP_COST))
		return;
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

/* A member of --trace's object at path over every host, after sep; 0 when
 * it is left out: lists (each system call, a histogram's buckets) are each
 * host's own. Counts of tasks and operations are summed, the phase's time
 * is the longest, a flag holds when it holds on every host, the figures
 * per operation are weighted by each host's operations. */
static int put_trace_member(FILE *f, const struct merge *m, const char *sep, const char *path,
			    const struct json_node *k)
{
	static const char *const summed[] = { SK_TASKS, SK_STARTED, SK_ENDED, SK_OPERATIONS };
	char sub[256];

	size_t lists = 0;
	for (size_t i = 0; i < k->nkids; i++)
		lists += k->kids[i].type == JSON_ARRAY;
	if (k->type == JSON_ARRAY || (k->type == JSON_OBJECT && k->nkids && lists == k->nkids))
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, k->key);
	put_key(f, sep, k->key);
	if (k->type == JSON_OBJECT) {
		fputc('{', f);
		for (size_t i = 0, n = 0; i < k->nkids; i++)
			n += put_trace_member(f, m, n ? ", " : " ", sub, &k->kids[i]);
		fputs(" }", f);
	} else if (k->type == JSON_TRUE || k->type == JSON_FALSE) {
		fputs(all_true(m, sub) ? "true" : "false", f);
	} else if (k->type != JSON_NUMBER || strcmp(k->key, SK_TOLERANCE_PCT) == 0) {
		put_node(f, k);
	} else if (strcmp(k->key, SK_WALL_S) == 0) {
		put_num(f, max_of(m, sub));
	} else {
		int sum = 0;
		for (size_t i = 0; i < sizeof(summed) / sizeof(summed[0]); i++)
			sum |= strcmp(k->key, summed[i]) == 0;
		put_num(f, sum ? sum_of(m, sub) : weighted_mean(m, sub, jpath(JP_TRACE_OPERATIONS), NULL));
	}
	return 1;
}

/* --trace's object over every host; null unless every host traced. */
static void put_trace(FILE *f, const struct merge *m)
{
	if (!every_host_has(f, m, JP_TRACE))
		return;
	const struct json_node *t = jget(&m->h[0].doc, JP_TRACE);
	fputc('{', f);
	for (size_t i = 0, n = 0; i < t->nkids; i++)
		n += put_trace_member(f, m, n ? ",\n    " : "\n    ", jpath(JP_TRACE), &t->kids[i]);
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
			known = c && c->type == JSON_OBJECT && merge_u64_of(json_get(c, first->kids[i].key), &v) == 0;
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
		if (strcmp(merge_text_at(&ops->kids[i], SK_NAME), name) == 0)
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
		double c = op ? merge_num_at(op, SK_COUNT) : NAN, avg = op ? merge_num_at(op, SK_AVG_MS) : NAN;
		double mx = op ? merge_num_at(op, SK_MAX_MS) : NAN;
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
			const char *name = merge_text_at(&ops->kids[i], SK_NAME);
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

/* The noise of the hosts' runs: each figure of the worst host, the counts
 * (migrations, CPUs whose frequency changed) summed, disturbed when any
 * host was, with every host's reasons; null when none says. */
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
	double migrations = sum_of(m, jpath(JP_NOISE_CPU_MIGRATIONS));
	double changed = sum_of(m, jpath(JP_NOISE_FREQ_CHANGED_CPUS));   /* NaN: no host exposes it */
	put_key(f, ", ", SK_CPU_MIGRATIONS);
	put_count(f, migrations);
	put_key(f, ", ", SK_CPU_FREQ);
	put_key(f, "{ ", SK_EXPOSED);
	fputs(isfinite(changed) ? "true" : "false", f);
	if (isfinite(changed)) {
		put_key(f, ", ", SK_CHANGED_CPUS);
		put_count(f, changed);
	}
	fputs(" }", f);
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
void merge_put_document(FILE *f, const struct merge *m)
{
	static const struct {
		const char *key;
		void (*put)(FILE *f, const struct merge *m);
	} merged[] = {
		{ SK_RESULT, put_result }, { SK_COST, put_cost }, { SK_NOISE, put_noise }, { SK_TRACE, put_trace },
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
