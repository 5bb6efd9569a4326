/* tbench-stats merge (src/stats_merge.c) on two real --json documents of
 * tbench -b tcp (1 and 2 clients, tests/data/merge-a.json and -b.json):
 * one document merged alone keeps its figures; two give the sums, and
 * latency percentiles equal to those recomputed here from the union of
 * both histograms' buckets with tbench's rule; runs that are not one run,
 * a host that failed and a document without histogram are told apart;
 * --trace's figures of a traced run (tests/data/run-trace.json) merged. */
#include "config.h"
#include "json.h"
#include "stats_merge.h"
#include "table.h"
#include "testlib.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA TBENCH_SRCDIR "/tests/data/"
static const char *const a_path = DATA "merge-a.json", *const b_path = DATA "merge-b.json";

static double num(const struct json_node *doc, const char *path)
{
	const struct json_node *n = json_get(doc, path);
	return n && n->type == JSON_NUMBER ? n->num : NAN;
}

static const char *text(const struct json_node *doc, const char *path)
{
	return json_scalar_text(json_get(doc, path));
}

/* Runs the merge into *out (parsed); 0, or -1 with err set. */
static int merge(struct json_node *out, size_t n, const char *const *paths, const char *const *names,
		 struct errbuf *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		perror("open_memstream");
		exit(1);
	}
	int rc = stats_merge(f, n, paths, names, err);
	fclose(f);
	if (rc == 0 && json_parse(out, "merged", buf, len, err) < 0) {
		fprintf(stderr, "the merged document does not parse: %s\n", err->msg);
		rc = -2;
	}
	free(buf);
	return rc;
}

static void load(struct json_node *doc, const char *path)
{
	struct errbuf err;
	if (json_read_file(doc, path, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

/* ---- tbench's quantile rule, recomputed from bucket lists -------------------------- */

struct bucket {
	double lo, hi, count;
};

static int by_low(const void *a, const void *b)
{
	double x = ((const struct bucket *)a)->lo, y = ((const struct bucket *)b)->lo;
	return (x > y) - (x < y);
}

/* The value at quantile q of the union of the documents' histograms, in
 * ms: rank round(q * count) (at least 1), the first bucket whose running
 * count reaches it, its midpoint, never above the maximum. */
static double union_quantile_ms(const struct json_node *const *docs, size_t ndocs, double q)
{
	struct bucket all[4096];
	size_t n = 0;
	double count = 0, max_ns = 0;
	for (size_t d = 0; d < ndocs; d++) {
		const struct json_node *b = json_get(docs[d], "result.latency.histogram.buckets");
		for (size_t i = 0; b && i < b->nkids && n < 4096; i++, n++) {
			all[n] = (struct bucket){ b->kids[i].kids[0].num, b->kids[i].kids[1].num,
						  b->kids[i].kids[2].num };
			count += all[n].count;
		}
		max_ns = fmax(max_ns, num(docs[d], "result.latency.histogram.max_ns"));
	}
	qsort(all, n, sizeof(all[0]), by_low);
	double rank = floor(q * count + 0.5), seen = 0;
	rank = rank < 1 ? 1 : rank > count ? count : rank;
	for (size_t i = 0; i < n; i++) {
		seen += all[i].count;
		if (seen >= rank)
			return fmin(all[i].lo + floor((all[i].hi - all[i].lo) / 2), max_ns) / 1e6;
	}
	return max_ns / 1e6;
}

/* ---- the checks ------------------------------------------------------------------- */

static void merge_one(const struct json_node *a)
{
	static const char *const same[] = { "count", "avg_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms" };
	struct json_node m;
	struct errbuf err;
	const char *paths[] = { a_path };

	CHECK(merge(&m, 1, paths, NULL, &err) == 0);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		char path[64];
		snprintf(path, sizeof(path), "result.latency.%s", same[i]);
		CHECK(strcmp(text(&m, path), text(a, path)) == 0);
		if (strcmp(text(&m, path), text(a, path)) != 0)
			fprintf(stderr, "  %s: merged alone %s, tbench wrote %s\n", path, text(&m, path), text(a, path));
	}
	CHECK(strcmp(text(&m, "result.mb_per_sec"), text(a, "result.mb_per_sec")) == 0);
	CHECK(strcmp(text(&m, "result.ops"), text(a, "result.ops")) == 0);
	CHECK_EQ_U(json_get(&m, "result.latency.histogram.buckets")->nkids,
		   json_get(a, "result.latency.histogram.buckets")->nkids);
	CHECK(strcmp(text(&m, "hosts.0.name"), "merge-a") == 0);
	CHECK(strcmp(text(&m, "settings.backend"), "tcp") == 0);
	json_free(&m);
}

static void merge_two(const struct json_node *a, const struct json_node *b)
{
	struct json_node m, r;
	struct errbuf err;
	const char *paths[] = { a_path, b_path }, *rpaths[] = { b_path, a_path };
	const char *names[] = { "alpha", "beta" };
	const struct json_node *docs[] = { a, b };

	CHECK(merge(&m, 2, paths, names, &err) == 0);
	CHECK(strcmp(text(&m, "result.status"), "ok") == 0);
	CHECK(strcmp(text(&m, "result.error"), "") == 0);
	CHECK_NEAR(num(&m, "result.mb_per_sec"), num(a, "result.mb_per_sec") + num(b, "result.mb_per_sec"), 2e-6);
	CHECK_NEAR(num(&m, "result.ops_per_sec"), num(a, "result.ops_per_sec") + num(b, "result.ops_per_sec"), 2e-6);
	CHECK_NEAR(num(&m, "result.ops"), num(a, "result.ops") + num(b, "result.ops"), 0);
	CHECK_NEAR(num(&m, "result.payload_bytes"), num(a, "result.payload_bytes") + num(b, "result.payload_bytes"), 0);
	CHECK_NEAR(num(&m, "settings.clients"), 3, 0);
	CHECK_EQ_U(json_get(&m, "clients")->nkids, 3);
	CHECK(strcmp(text(&m, "clients.2.host"), "beta") == 0 && num(&m, "clients.2.id") == 2);
	CHECK(strcmp(text(&m, "hosts.1.name"), "beta") == 0);
	CHECK(strcmp(text(&m, "hosts.1.mb_per_sec"), text(b, "result.mb_per_sec")) == 0);

	double count = num(a, "result.latency.count") + num(b, "result.latency.count");
	double sum = num(a, "result.latency.histogram.sum_ns") + num(b, "result.latency.histogram.sum_ns");
	CHECK_NEAR(num(&m, "result.latency.count"), count, 0);
	CHECK_NEAR(num(&m, "result.latency.histogram.sum_ns"), sum, 0);
	CHECK_NEAR(num(&m, "result.latency.avg_ms"), sum / count / 1e6, 1e-6);
	CHECK_NEAR(num(&m, "result.latency.max_ms"),
		   fmax(num(a, "result.latency.max_ms"), num(b, "result.latency.max_ms")), 0);
	CHECK_NEAR(num(&m, "result.latency.p50_ms"), union_quantile_ms(docs, 2, 0.50), 1e-6);
	CHECK_NEAR(num(&m, "result.latency.p99_ms"), union_quantile_ms(docs, 2, 0.99), 1e-6);
	CHECK_NEAR(num(&m, "result.latency.p999_ms"), union_quantile_ms(docs, 2, 0.999), 1e-6);
	/* A figure per operation is weighted by each host's operations. */
	double ca = num(a, "cost.operations"), cb = num(b, "cost.operations");
	CHECK_NEAR(num(&m, "cost.per_operation.clients.cpu_user_us"),
		   (num(a, "cost.per_operation.clients.cpu_user_us") * ca +
		    num(b, "cost.per_operation.clients.cpu_user_us") * cb) / (ca + cb), 1e-6);

	/* The order of the hosts changes no figure of the merged run. */
	CHECK(merge(&r, 2, rpaths, NULL, &err) == 0);
	CHECK(strcmp(text(&r, "result.latency.p99_ms"), text(&m, "result.latency.p99_ms")) == 0);
	CHECK(strcmp(text(&r, "result.latency.avg_ms"), text(&m, "result.latency.avg_ms")) == 0);
	CHECK(strcmp(text(&r, "result.ops"), text(&m, "result.ops")) == 0);
	json_free(&r);
	json_free(&m);
}

/* b's text with the first `from` replaced by `to`, in a temporary file. */
static char *changed_copy(const char *from, const char *to)
{
	struct errbuf err;
	size_t len;
	char *t = read_text_file(b_path, 1 << 20, &len, &err), *at = t ? strstr(t, from) : NULL;
	char *path = strdup("/tmp/test_merge.XXXXXX");
	int fd = path ? mkstemp(path) : -1;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!at || !f) {
		fprintf(stderr, "changed_copy: no '%s' in %s, or no temporary file\n", from, b_path);
		exit(1);
	}
	fprintf(f, "%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
	if (fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	free(t);
	return path;
}

/* Merging a with b changed so: refused, with a message holding `want`. */
static void refused(const char *from, const char *to, const char *want)
{
	struct json_node m;
	struct errbuf err;
	char *bad = changed_copy(from, to);
	const char *paths[] = { a_path, bad };

	CHECK(merge(&m, 2, paths, NULL, &err) == -1);
	CHECK(strstr(err.msg, want) != NULL);
	if (!strstr(err.msg, want))
		fprintf(stderr, "  message '%s' lacks '%s'\n", err.msg, want);
	unlink(bad);
	free(bad);
}

static void incompatible(void)
{
	refused("\"backend\": \"tcp\"", "\"backend\": \"pipe\"",
		"settings.backend is 'pipe', " DATA "merge-a.json's is 'tcp': runs with another backend");
	refused("\"timelimit_s\": 1,", "\"timelimit_s\": 2,", "another time limit (-t)");
	refused("\"loadfile_ops\": ", "\"loadfile_ops\": 1", "another loadfile");
	refused("\"model\": \"processes\"", "\"model\": \"threads\"", "another client model");
	refused("\"sum_ns\"", "\"sum_nx\"", "no result.latency.histogram");
	refused("\"buckets\": [[", "\"buckets\": [[3, 5, 0], [", "[3, 5) ns is not a bucket");
	refused("\"count\": ", "\"count\": 1", "result.latency.count says 1");
}

/* A host that failed makes the merged run fail, naming it. */
static void failed_host(void)
{
	struct json_node m;
	struct errbuf err;
	char *bad = changed_copy("\"status\": \"ok\",\n    \"partial\": false,\n    \"error\": \"\"",
				 "\"status\": \"failed\",\n    \"partial\": true,\n    \"error\": \"server died\"");
	const char *paths[] = { a_path, bad }, *names[] = { "h1", "h2" };

	CHECK(merge(&m, 2, paths, names, &err) == 0);
	CHECK(strcmp(text(&m, "result.status"), "failed") == 0);
	CHECK(strcmp(text(&m, "result.partial"), "true") == 0);
	CHECK(strcmp(text(&m, "result.error"), "h2: server died") == 0);
	CHECK(strcmp(text(&m, "hosts.0.status"), "ok") == 0 && strcmp(text(&m, "hosts.1.status"), "failed") == 0);
	json_free(&m);
	unlink(bad);
	free(bad);
}

/* --trace's figures of two hosts (the same traced run twice): per
 * operation as each host's, tasks and operations summed, each host's
 * lists of system calls left out. */
static void traced(void)
{
	const char *paths[] = { DATA "run-trace.json", DATA "run-trace.json" }, *names[] = { "h1", "h2" };
	struct json_node one, m;
	struct errbuf err;

	load(&one, paths[0]);
	CHECK(merge(&m, 2, paths, names, &err) == 0);
	CHECK_NEAR(num(&m, "trace.operations"), 2 * num(&one, "trace.operations"), 0);
	CHECK_NEAR(num(&m, "trace.per_operation.clients.tasks"), 2 * num(&one, "trace.per_operation.clients.tasks"), 0);
	CHECK_NEAR(num(&m, "trace.per_operation.servers.user_us"), num(&one, "trace.per_operation.servers.user_us"), 1e-5);
	CHECK_NEAR(num(&m, "trace.per_operation.clients.syscall_groups_us.send_recv"),
		   num(&one, "trace.per_operation.clients.syscall_groups_us.send_recv"), 1e-5);
	CHECK_NEAR(num(&m, "trace.per_operation.softirq_us.net_rx"), num(&one, "trace.per_operation.softirq_us.net_rx"), 1e-5);
	CHECK(json_get(&m, "trace.reconciled")->type == JSON_TRUE);
	CHECK(json_get(&m, "trace.per_operation.clients.syscalls") == NULL);
	json_free(&m);
	json_free(&one);
	const char *untraced[] = { a_path };
	CHECK(merge(&m, 1, untraced, NULL, &err) == 0);
	CHECK(json_get(&m, "trace") == NULL);   /* written before --trace was: none made up */
	json_free(&m);
}

int main(void)
{
	struct json_node a, b;
	load(&a, a_path);
	load(&b, b_path);
	merge_one(&a);
	merge_two(&a, &b);
	incompatible();
	failed_host();
	traced();
	json_free(&a);
	json_free(&b);
	return test_done("test_merge");
}
