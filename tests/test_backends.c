/* Every backend in the registry, end to end through the driver: one pass of
 * tiny.txt at 1, 4 and 16 clients, as threads and as processes, must count
 * exactly the loadfile's payload. Then timed runs of the socketpair and
 * splice backends, and the failures they must report: a peer out of step
 * ("lost sync") and a server that hangs up mid-run (named in the error).
 * First, each backend's contract: its own options (flags unique over all
 * backends, each with help, a value name and a parser into its settings). */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "testlib.h"
#include "wire.h"
#include "registry.h"
#include "schema.h"

static struct loadfile lf;

static struct run_config config(const struct backend *be, unsigned n, bool processes)
{
	struct run_config cfg = {
		.lf = &lf, .backend = be, .warmup_exact = true,
	};
	cfg.bcfg.nclients = n;
	cfg.bcfg.processes = processes;
	return cfg;
}

static uint64_t expected_bytes(uint64_t ops)
{
	return (ops / lf.n_ops) * lf.pass_payload + loadfile_payload_prefix(&lf, ops % lf.n_ops);
}

/* A backend whose start() fails without a SERVER argument needs a peer this
 * test does not have. */
static bool needs_server(const struct backend *be)
{
	struct backend_config bcfg = { .nclients = 1 };
	struct errbuf err;
	void *run = NULL;

	if (!be->start)
		return false;
	if (be->start(&bcfg, &run, &err) < 0) {
		printf("  skipping %s: cannot start without a SERVER (%s)\n", be->name, err.msg);
		return true;
	}
	if (be->stop && run)
		be->stop(run);
	return false;
}

static void run_once(const struct backend *be, unsigned n, bool processes)
{
	struct run_config cfg = config(be, n, processes);
	struct run_result res;

	cfg.run_once = true;
	CHECK(driver_run(&cfg, NULL, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  %s %u %s: %s\n", be->name, n, processes ? "procs" : "threads",
			res.error.msg);
	CHECK_EQ_U(res.bytes, n * lf.pass_payload);
	for (unsigned i = 0; res.clients && i < n; i++) {
		CHECK_EQ_U(res.clients[i].passes, 1);
		CHECK_EQ_U(res.clients[i].bytes, lf.pass_payload);
	}
	run_result_free(&res);
}

/* Stopped mid-pass by the clock: the bytes still match the ops done. */
static void run_timed(const char *name, unsigned n, bool processes)
{
	struct run_config cfg = config(backend_find(name), n, processes);
	struct run_result res;

	cfg.timelimit = 2;
	cfg.warmup = 0.5;
	CHECK(driver_run(&cfg, NULL, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  %s timed: %s\n", name, res.error.msg);
	/* Ended by the limit: never before it; the upper bound only catches a
	 * hang, as a loaded machine can delay the end by seconds. */
	CHECK(res.execute_secs >= 2 - 1e-9 && res.execute_secs < 60);
	if (res.execute_secs >= 60)
		fprintf(stderr, "  %s timed: %.1f s, status %d\n", name, res.execute_secs, res.status);
	CHECK(res.bytes > 0 && res.bytes <= res.bytes_all);
	uint64_t sum = 0;
	for (unsigned i = 0; res.clients && i < n; i++) {
		const struct client_stats *c = &res.clients[i];
		CHECK(c->ops_all > 0);
		CHECK_EQ_U(c->bytes_all, expected_bytes(c->ops_all));
		CHECK_EQ_U(c->passes, c->ops_all / lf.n_ops);
		sum += c->bytes;
	}
	CHECK_EQ_U(sum, res.bytes);
	printf("  %s, %u %s: %.1f MB/sec\n", name, n, processes ? "procs" : "threads",
	       1e-6 * (double)res.bytes / res.execute_secs);
	run_result_free(&res);
}

/* ---- a peer out of step ------------------------------------------------ */

/* Reads one 47-byte request and answers with the wrong reply length. */
static void *liar(void *arg)
{
	int fd = *(int *)arg;
	uint8_t req[47], reply[39] = { 0 };

	if (read_full(fd, req, sizeof(req)) == 0) {
		put_be32(reply, 99);
		if (write_full(fd, reply, sizeof(reply)) < 0)
			perror("liar: write");
	}
	return NULL;
}

static void lost_sync(void)
{
	static uint8_t buf[WIRE_LIMIT];
	struct errbuf err;
	pthread_t t;
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(pthread_create(&t, NULL, liar, &sv[1]) == 0);
	CHECK(wire_exchange(sv[0], sv[0], buf, 47, 39, "socketpair server 7", &err) < 0);
	CHECK(strstr(err.msg, "lost sync with socketpair server 7") != NULL);
	fprintf(stderr, "  lost sync reported as: %s\n", err.msg);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* ---- a server that hangs up mid-run ------------------------------------ */

/* Wraps a real backend; on the 50th exchange asks for a reply over the
 * wire limit, which the real server refuses by closing the connection. */
static const struct backend *inner;
static _Atomic int calls;

static int hangup_open(void *run, const struct backend_config *cfg, unsigned client,
		       void **conn, struct errbuf *err)
{
	return inner->open(run, cfg, client, conn, err);
}

static int hangup_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	if (++calls == 50)
		recv = WIRE_LIMIT;
	return inner->exchange(conn, send, recv, err);
}

static void hangup_close(void *conn)
{
	inner->close(conn);
}

static const struct backend hangup = {
	.name = "hangup", .summary = "a real backend whose server hangs up",
	.open = hangup_open, .exchange = hangup_exchange, .close = hangup_close,
};

static void server_hangs_up(const char *name, bool processes)
{
	struct run_config cfg = config(&hangup, 4, processes);
	struct run_result res;
	char peer[64];

	inner = backend_find(name);
	calls = 0;
	cfg.timelimit = 600;
	uint64_t t = now_ns();
	CHECK(driver_run(&cfg, NULL, &res) == RUN_FAILED);
	CHECK((now_ns() - t) / 1e9 < 300);   /* not the 600 s time limit, however loaded the machine */
	snprintf(peer, sizeof(peer), "%s server ", name);
	CHECK(strstr(res.error.msg, peer) != NULL);
	CHECK(strstr(res.error.msg, "client ") != NULL);
	fprintf(stderr, "  hang-up reported as: %s\n", res.error.msg);
	run_result_free(&res);
}

/* What options.c and report_json.c rely on, for every backend built. */
static void contracts(void)
{
	for (size_t b = 0; backends[b]; b++) {
		const struct backend *be = backends[b];

		CHECK(be->name && *be->name && be->summary && *be->summary);
		CHECK(strcspn(be->name, " ,\t\n") == strlen(be->name));   /* one word in -b list */
		/* Its settings reach --json: a backend with options adds them. */
		CHECK(be->add_settings != NULL);
		CHECK(!be->options || be->add_settings != backend_no_settings);
		struct json_object *members = json_object_new_object();
		be->add_settings(members, be->settings);
		CHECK(!be->options || json_object_object_length(members) > 0);
		json_object_put(members);
		for (const struct backend_option *o = be->options; o && o->flag; o++) {
			CHECK(be->settings && o->parse && o->arg && *o->arg && o->help && *o->help);
			CHECK(strncmp(o->flag, "-", 1) != 0);
			for (size_t c = 0; backends[c]; c++)
				for (const struct backend_option *p = backends[c]->options; p && p->flag; p++)
					CHECK(p == o || strcmp(p->flag, o->flag) != 0);
		}
		printf("  %s: options and settings as the contract has them\n", be->name);
	}
}

/* tcp-zc's threshold, which --json once left out: the default, and as given. */
static void zerocopy_threshold_recorded(void)
{
	const struct backend *zc = backend_find("tcp-zc");
	struct json_object *o = json_object_new_object(), *t;
	char *argv[] = { (char *)"4096" };

	CHECK(zc != NULL);
	zc->add_settings(o, zc->settings);
	CHECK(json_object_object_get_ex(o, SK_ZEROCOPY_THRESHOLD, &t) && t != NULL);
	CHECK(zc->options && zc->options[0].parse(zc->settings, argv[0], NULL) == 0);
	json_object_put(o);
	o = json_object_new_object();
	zc->add_settings(o, zc->settings);
	CHECK(json_object_object_get_ex(o, SK_ZEROCOPY_THRESHOLD, &t) && json_object_get_uint64(t) == 4096);
	json_object_put(o);
	printf("  tcp-zc: zerocopy_threshold in the settings\n");
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	static const unsigned counts[] = { 1, 4, 16 };
	char path[4096];
	struct errbuf err;

	signal(SIGPIPE, SIG_IGN);   /* as tbench does: a closed peer is an error */
	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	if (loadfile_read(path, NULL, &lf, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	contracts();
	for (size_t b = 0; backends[b]; b++) {
		if (needs_server(backends[b]))
			continue;
		for (int p = 0; p < 2; p++)
			for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
				run_once(backends[b], counts[i], p);
		printf("  %s: run-once at 1, 4, 16 clients, threads and processes\n",
		       backends[b]->name);
	}
	run_timed("socketpair", 4, false);
	run_timed("splice", 4, false);
	run_timed("splice", 4, true);
	lost_sync();
	server_hangs_up("socketpair", false);
	server_hangs_up("socketpair", true);
	server_hangs_up("splice", false);
	server_hangs_up("splice", true);
	zerocopy_threshold_recorded();   /* last: it sets tcp-zc's threshold */
	loadfile_free(&lf);
	return test_done("test_backends");
}
