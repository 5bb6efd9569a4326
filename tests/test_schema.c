/* The --json document's schema (src/schema.h) against its writer and its
 * readers: the writer's document of a run that has every part (executed,
 * cost and noise sampled, a namespace, a socket, backend counters, traced)
 * starts with schema_version and holds every path of SCHEMA_PATHS, the only paths
 * the row extractor (stats_row.c) and the merger (stats_merge.c) can name,
 * so none reads a member the writer does not write; the merger's document
 * of it does too; and a reader refuses a document of a later version,
 * naming the file, while one without a version (an older tbench's) reads. */
#include "config.h"
#include "json.h"
#include "netns.h"
#include "report.h"
#include "report_json.h"
#include "run.h"
#include "schema.h"
#include "stats_merge.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const full_counter_names[] = { "zerocopy_sends", NULL };

static void full_counters(void *conn, uint64_t *sum)
{
	(void)conn;
	(void)sum;
}

static void backend_no_settings_test(struct json_object *into, const void *settings)
{
	(void)into;
	(void)settings;
}

static const struct backend full_backend = {
	.name = "test", .flags = BACKEND_TCP, .counters = full_counters,
	.counter_names = full_counter_names, .add_settings = backend_no_settings_test,
};

/* A traced execute phase: a task a side, each a second of it on CPU. */
static void full_trace(struct trace_result *t)
{
	t->known = true;
	t->wall_s = 1;
	t->on_ns = 1000000000;
	t->off_ns = 2000000000;
	t->probe_known = true;
	t->probe_ns = 100000000;
	for (int side = 0; side < TRACE_SIDES; side++) {
		t->tasks[side] = 1;
		t->totals.side[side].user_ns = 500000000;
		t->syscall[side][0].ns = 500000000;
		t->syscall[side][0].count = 3;
		t->wake_hist[side][10] = 3;
	}
}

static void full_run(struct run_config *cfg, struct run_result *res, struct loadfile *lf,
		     struct client_stats *client, struct netns_state *ns)
{
	memset(cfg, 0, sizeof(*cfg));
	memset(res, 0, sizeof(*res));
	memset(lf, 0, sizeof(*lf));
	memset(client, 0, sizeof(*client));
	memset(ns, 0, sizeof(*ns));
	lf->path = (char *)"tiny.txt";
	lf->n_ops = 10;
	lf->pass_payload = 1000;
	cfg->lf = lf;
	cfg->backend = &full_backend;
	cfg->bcfg.nclients = 1;
	cfg->bcfg.processes = true;
	cfg->timelimit = 1;
	cfg->start_at = 1e9;
	res->executed = true;
	res->execute_secs = res->total_secs = 1;
	res->nclients = 1;
	res->clients = client;
	for (int i = 0; i < 3; i++) {
		hist_record(&res->all, 1000u << i);
		hist_record(&res->op[OP_WRITEX], 1000u << i);
		stats_record(client, OP_WRITEX, 1000u << i);
	}
	res->ops = client->ops_all = 3;
	res->bytes = res->bytes_all = client->bytes = client->bytes_all = 3000;
	client->passes = 1;
	res->cost.started = res->cost.ended = true;
	res->noise.started = res->noise.ended = true;
	res->noise.start.sys_ok = res->noise.end.sys_ok = true;
	res->noise.end.at_ns = 1000000000;
	res->noise.start.cpus = res->noise.end.cpus = 1;
	res->noise.start.freq_khz[0] = res->noise.end.freq_khz[0] = 1000000;
	for (int i = 0; i < NET_N; i++)
		res->cost.start.net_ok[i] = res->cost.end.net_ok[i] = true;
	res->cost.end.net[NET_SEGS_OUT] = 3;
	res->wire_bytes = 3000;
	res->socket.known = true;
	res->socket.family = AF_INET;
	ns->entered = true;
	ns->mtu = 1500;
	strcpy(ns->device, "lo");
	full_trace(&res->trace);
}

/* Writes the full run's document to path, as tbench --json does. */
static void write_document(const char *path)
{
	struct run_config cfg;
	struct run_result res;
	struct loadfile lf;
	struct client_stats client;
	struct netns_state ns;
	struct json_out j;
	struct errbuf err;
	const char *argv[] = { "tbench", "1" };

	full_run(&cfg, &res, &lf, &client, &ns);
	struct report_options ro = { .netns = &ns };
	if (report_json_open(&j, path, &err) < 0 || report_json_write(&j, &cfg, &ro, &res, 2, argv, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
}

/* Every path of the schema is in doc, and not null (the run had every
 * part): the writer's and the merger's documents alike. */
static void every_path(const struct json_node *doc, const char *what)
{
	for (int p = JP_NONE + 1; p < JP_COUNT; p++) {
		const struct json_node *n = jget(doc, (enum jpath)p);
		CHECK(n && n->type != JSON_NULL);
		if (!n || n->type == JSON_NULL)
			fprintf(stderr, "  %s: %s %s\n", what, jpath((enum jpath)p), n ? "is null" : "is missing");
	}
}

static void writer_and_merger(const char *path)
{
	struct json_node doc, merged;
	struct errbuf err;
	char *text = NULL;
	size_t len = 0;

	CHECK(schema_read_file(&doc, path, &err) == 0);
	CHECK(doc.nkids > 0 && strcmp(doc.kids[0].key, SK_SCHEMA_VERSION) == 0);
	CHECK(jpath(JP_NONE) == NULL && jget(&doc, JP_NONE) == NULL);
	const struct json_node *v = json_get(&doc, SK_SCHEMA_VERSION);
	CHECK(v && v->type == JSON_NUMBER && v->num == SCHEMA_VERSION);
	every_path(&doc, "the writer's document");
	json_free(&doc);

	FILE *f = open_memstream(&text, &len);
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(stats_merge(f, 1, &path, NULL, &err) == 0);
	CHECK(fclose(f) == 0);
	CHECK(json_parse(&merged, "merged", text, len, &err) == 0);
	CHECK(schema_check(&merged, "merged", &err) == 0);
	CHECK(merged.nkids > 0 && strcmp(merged.kids[0].key, SK_SCHEMA_VERSION) == 0);
	every_path(&merged, "the merged document");
	json_free(&merged);
	free(text);
}

/* schema_check of a document whose only member is `member`. */
static int check_version(const char *member, struct errbuf *err)
{
	struct json_node doc;
	struct errbuf perr;
	if (json_parse(&doc, "v.json", member, strlen(member), &perr) < 0) {
		fprintf(stderr, "%s\n", perr.msg);
		exit(1);
	}
	int rc = schema_check(&doc, "dir/v.json", err);
	json_free(&doc);
	return rc;
}

static void versions(void)
{
	struct errbuf err;
	char newer[64];

	CHECK(check_version("{ \"tbench_version\": \"old\" }", &err) == 0);  /* before versions */
	CHECK(check_version("{ \"schema_version\": 1 }", &err) == 0);
	snprintf(newer, sizeof(newer), "{ \"schema_version\": %d }", SCHEMA_VERSION + 1);
	CHECK(check_version(newer, &err) < 0);
	CHECK(strstr(err.msg, "dir/v.json: schema_version") == err.msg && strstr(err.msg, "newer"));
	CHECK(check_version("{ \"schema_version\": \"one\" }", &err) < 0);
	CHECK(strstr(err.msg, "dir/v.json") == err.msg);
	CHECK(check_version("{ \"schema_version\": 0.5 }", &err) < 0);
}

int main(void)
{
	char path[] = "/tmp/test_schema.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	write_document(path);
	writer_and_merger(path);
	versions();
	unlink(path);
	return test_done("test_schema");
}
