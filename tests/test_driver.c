/* End-to-end runs of the driver with the real nop and pipe backends, as
 * threads and as processes: the counted bytes must be exactly what the
 * loadfile says for the passes done, and failures must end the run. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "report.h"
#include "testlib.h"
#include "registry.h"

static struct loadfile lf;

static struct run_config config(const char *backend, unsigned n, bool processes)
{
	struct run_config cfg = {
		.lf = &lf, .backend = backend_find(backend), .warmup_exact = true,
	};
	cfg.bcfg.nclients = n;
	cfg.bcfg.processes = processes;
	return cfg;
}

/* Bytes a client must have counted after `ops` operations in all. */
static uint64_t expected_bytes(uint64_t ops)
{
	return (ops / lf.n_ops) * lf.pass_payload + loadfile_payload_prefix(&lf, ops % lf.n_ops);
}

static void run_once(const char *backend, unsigned n, bool processes)
{
	struct run_config cfg = config(backend, n, processes);
	struct run_result res;

	cfg.run_once = true;
	CHECK(driver_run(&cfg, NULL, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  %s %u %s: %s\n", backend, n, processes ? "procs" : "threads", res.error.msg);
	CHECK_EQ_U(res.bytes, n * lf.pass_payload);
	CHECK(res.execute_secs > 0);
	for (unsigned i = 0; res.clients && i < n; i++) {
		CHECK_EQ_U(res.clients[i].passes, 1);
		CHECK_EQ_U(res.clients[i].ops_all, lf.n_ops);
		CHECK_EQ_U(res.clients[i].bytes, lf.pass_payload);
	}
	run_result_free(&res);
}

/* A timed run stops mid-pass: the bytes still match the ops done. */
static void run_timed(const char *backend, unsigned n, bool processes)
{
	struct run_config cfg = config(backend, n, processes);
	struct run_result res;

	cfg.timelimit = 0.6;
	cfg.warmup = 0.2;
	CHECK(driver_run(&cfg, NULL, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  %s: %s\n", backend, res.error.msg);
	/* Ended by the limit: never before it; the upper bound only catches a
	 * hang, as a loaded machine can delay the end by seconds. */
	CHECK(res.execute_secs >= 0.6 - 1e-9 && res.execute_secs < 60);
	CHECK(res.total_secs >= res.execute_secs);
	CHECK(res.bytes > 0 && res.bytes <= res.bytes_all);
	uint64_t sum = 0;
	for (unsigned i = 0; res.clients && i < n; i++) {
		const struct client_stats *c = &res.clients[i];
		CHECK_EQ_U(c->bytes_all, expected_bytes(c->ops_all));
		CHECK_EQ_U(c->passes, c->ops_all / lf.n_ops);
		sum += c->bytes;
	}
	CHECK_EQ_U(sum, res.bytes);
	CHECK(res.ops > 0 && res.ops == res.all.count);
	run_result_free(&res);
}

/* A backend that fails on its 50th exchange, or in open() for client 2. */
static _Atomic int calls;
static int flaky_open(void *run, const struct backend_config *cfg, unsigned client,
		      void **conn, struct errbuf *err)
{
	(void)run;
	*conn = NULL;
	if (cfg->port && client == 2)
		return err_set(err, "flaky: refused for client %u", client);
	return 0;
}
static int flaky_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	(void)conn; (void)send; (void)recv;
	if (++calls == 50)
		return err_set(err, "flaky: peer went away");
	return 0;
}
static void flaky_close(void *conn) { (void)conn; }
static const struct backend flaky = {
	.name = "flaky", .summary = "fails on purpose", .open = flaky_open,
	.exchange = flaky_exchange, .close = flaky_close,
};

static void run_failing(bool processes, bool in_open)
{
	struct run_config cfg = config("nop", 4, processes);
	struct run_result res;

	cfg.backend = &flaky;
	cfg.timelimit = 600;
	cfg.bcfg.port = in_open ? "fail-open" : NULL;
	calls = 0;
	uint64_t t = now_ns();
	CHECK(driver_run(&cfg, NULL, &res) == RUN_FAILED);
	CHECK((now_ns() - t) / 1e9 < 300);   /* not the 600 s time limit, however loaded the machine */
	if (in_open) {
		CHECK(strstr(res.error.msg, "client 2: flaky: refused") != NULL);
	} else if (!processes) {
		CHECK(strstr(res.error.msg, "line ") != NULL);
		CHECK(strstr(res.error.msg, "flaky: peer went away") != NULL);
	}
	fprintf(stderr, "  failure reported as: %s\n", res.error.msg);
	run_result_free(&res);
}

/* A backend whose server stops answering: on exchange number `stall_at`
 * (0: in the set-up exchange) it blocks until the run gives up on it. */
static _Atomic int stall_calls, stall_at;
static int stall_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	(void)conn; (void)send; (void)recv; (void)err;
	if (atomic_fetch_add(&stall_calls, 1) == stall_at)
		for (;;)
			pause();   /* threads: left behind; processes: killed */
	return 0;
}
static const struct backend stalling = {
	.name = "stalling", .summary = "stops answering", .open = flaky_open,
	.exchange = stall_exchange, .close = flaky_close,
};

/* Every exchange has a bound: the run fails after --timeout, naming the
 * client, the loadfile line and the peer, not after the time limit. */
static void run_stalled(bool processes, int at)
{
	struct run_config cfg = config("nop", 1, processes);
	struct run_result res;

	cfg.backend = &stalling;
	cfg.timelimit = 600;
	cfg.timeout = 1;
	stall_calls = 0;
	stall_at = at;
	uint64_t t = now_ns();
	CHECK(driver_run(&cfg, NULL, &res) == RUN_FAILED);
	double took = (now_ns() - t) / 1e9;
	CHECK(took >= 1 && took < 300);   /* the timeout, not the 600 s limit; generous for a loaded machine */
	CHECK(strstr(res.error.msg, "client 0") != NULL);
	CHECK(strstr(res.error.msg, "--timeout") != NULL);
	CHECK(strstr(res.error.msg, at ? " line " : "connecting to") != NULL);
	fprintf(stderr, "  stall reported as: %s (after %.1f s)\n", res.error.msg, took);
	run_result_free(&res);
}

/* dbench's warm-up: at least its minimum, and until every client counted
 * bytes; then the execute phase starts and the run lasts the time limit. */
static void run_dbench_warmup(void)
{
	struct run_config cfg = config("nop", 2, true);
	struct run_result res;

	cfg.warmup_exact = false;
	cfg.warmup = 1;
	cfg.timelimit = 1;
	uint64_t t = now_ns();
	CHECK(driver_run(&cfg, NULL, &res) == RUN_OK);
	CHECK(res.executed);
	CHECK(res.execute_secs >= 1 - 1e-9);
	CHECK((now_ns() - t) / 1e9 >= 2 - 1e-3);
	CHECK(res.bytes > 0 && res.bytes < res.bytes_all);   /* the warm-up's bytes are not counted */
	run_result_free(&res);
}

/* A live child of `parent` other than the caller, from /proc; 0 if none.
 * Zombies are skipped: a dead child not yet reaped is no client to kill. */
static pid_t other_child(pid_t parent)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (proc && !found && (e = readdir(proc))) {
		char path[64], line[512], state;
		int ppid;
		pid_t pid = (pid_t)atoi(e->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(line, 1, sizeof(line) - 1, f) : 0;
		if (f)
			fclose(f);
		line[n] = '\0';
		char *p = strrchr(line, ')');   /* the name may hold spaces and parentheses */
		if (p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 && ppid == parent &&
		    state != 'Z' && state != 'X')
			found = pid;
	}
	if (proc)
		closedir(proc);
	return found;
}

/* The killer: any child of `parent` but itself is a client process. It
 * waits 1 s, so that the run is usually under way, then up to 60 s more for
 * a client, however slowly they are forked. */
static int kill_a_client(pid_t parent)
{
	sleep_ns(1000000000);
	for (int i = 0; i < 6000; i++) {
		pid_t pid = other_child(parent);
		if (pid > 0)
			return kill(pid, SIGKILL) == 0 ? 0 : 1;
		sleep_ns(10000000);
	}
	fprintf(stderr, "  killer: no client process of %d within 60 s\n", (int)parent);
	return 1;
}

/* A client process killed from outside ends the run at once, named. */
static void run_killed_client(void)
{
	struct run_config cfg = config("pipe", 2, true);
	struct run_result res;
	int status;

	cfg.timelimit = 600;
	pid_t self = getpid();
	pid_t killer = fork();
	if (killer == 0)
		_exit(kill_a_client(self));
	uint64_t t = now_ns();
	CHECK(driver_run(&cfg, NULL, &res) == RUN_FAILED);
	CHECK((now_ns() - t) / 1e9 < 300);   /* not the 600 s limit */
	CHECK(strstr(res.error.msg, "killed by signal 9") != NULL);
	fprintf(stderr, "  killed client reported as: %s\n", res.error.msg);
	CHECK(waitpid(killer, &status, 0) == killer && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	run_result_free(&res);
}

/* What the driver told its observer. */
struct told {
	unsigned prepared, released, cleanup, passes;
	unsigned phases[PHASE_DONE + 1];
	uint64_t shown[3], total[3];
};

static void told_prepared(void *ctx, unsigned ready, unsigned total, double secs)
{
	struct told *t = ctx;

	CHECK(ready <= total && secs >= 0);
	t->prepared++;
}

static void told_released(void *ctx)
{
	((struct told *)ctx)->released++;
}

static void told_phase(void *ctx, enum phase phase)
{
	((struct told *)ctx)->phases[phase]++;
}

static void told_cleanup(void *ctx, unsigned left, double secs)
{
	struct told *t = ctx;

	CHECK(left <= 3 && secs >= 0);
	t->cleanup++;
}

static void told_passes(void *ctx, unsigned client, const struct pass_time *p, uint64_t shown,
			uint64_t total)
{
	struct told *t = ctx;

	CHECK(client < 3 && (shown == 0 || p != NULL));
	if (client < 3)
		t->shown[client] = shown, t->total[client] = total;
	t->passes++;
}

/* --show-execute-time's records: one per pass, held until the end and told
 * to the observer after the run, with the set-up, the phases and the end. */
static void run_pass_times(void)
{
	struct run_config cfg = config("nop", 3, true);
	struct run_result res;
	struct told t = { 0 };
	struct run_observer obs = {
		.ctx = &t, .prepared = told_prepared, .released = told_released,
		.phase = told_phase, .cleanup = told_cleanup, .passes = told_passes,
	};

	cfg.run_once = true;
	cfg.show_execute_time = true;
	CHECK(driver_run(&cfg, &obs, &res) == RUN_OK);
	for (unsigned i = 0; res.clients && i < 3; i++) {
		CHECK_EQ_U(res.clients[i].passes, 1);
		CHECK_EQ_U(t.shown[i], 1);
		CHECK_EQ_U(t.total[i], 1);
	}
	CHECK(t.prepared >= 1);
	CHECK_EQ_U(t.released, 1);
	CHECK_EQ_U(t.phases[PHASE_EXECUTE], 1);
	CHECK_EQ_U(t.phases[PHASE_DONE], 1);
	CHECK(t.cleanup >= 2);   /* the first line and the last */
	CHECK_EQ_U(t.passes, 3);
	run_result_free(&res);
}

/* The time left of a long execute phase: once a minute on a terminal's
 * stderr, never among dbench's lines on stdout, nothing off a terminal. */
static void live_time_left(void)
{
	char *out = NULL, *err = NULL;
	size_t outlen = 0, errlen = 0;
	FILE *o = open_memstream(&out, &outlen), *e = open_memstream(&err, &errlen);
	CHECK(o && e);
	if (!o || !e)
		return;
	struct report_live live = { .out = o, .err = e, .timelimit = 150, .err_is_tty = true };
	struct run_observer obs = report_live_observer(&live);
	for (unsigned sec = 58; sec <= 121; sec++) {
		struct run_progress p = { .phase = PHASE_EXECUTE, .clients = 1, .sec = sec };
		obs.progress(obs.ctx, &p);
	}
	live.err_is_tty = false;
	struct run_progress p = { .phase = PHASE_EXECUTE, .clients = 1, .sec = 60 };
	obs.progress(obs.ctx, &p);
	CHECK(fclose(o) == 0 && fclose(e) == 0);
	CHECK(strcmp(err, "tbench: 1 min 30 s of the execute phase left\n"
		      "tbench: 0 min 30 s of the execute phase left\n") == 0);
	CHECK(strstr(out, "left") == NULL && strstr(out, "execute  60 sec") != NULL);
	free(out);
	free(err);
}

/* A run of many client threads sizes the process's hash of private
 * futexes for them and their servers, not for the CPUs. */
static void futex_hash_sized(void)
{
	enum { PR_FUTEX_HASH_ = 78, GET_SLOTS = 2 };   /* Linux 6.16 */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = 8 * (unsigned)(cpus > 0 ? cpus : 1) + 8;

	if (prctl(PR_FUTEX_HASH_, GET_SLOTS, 0UL, 0UL, 0UL) < 0) {
		printf("  SKIPPED the futex hash's size: PR_FUTEX_HASH: %s (Linux before 6.16)\n",
		       strerror(errno));
		return;
	}
	run_once("pipe", n, false);
	int slots = prctl(PR_FUTEX_HASH_, GET_SLOTS, 0UL, 0UL, 0UL);
	printf("  %u client threads: %d futex hash slots\n", n, slots);
	CHECK(slots >= 2 * (int)n);
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096];
	struct errbuf err;
	static const unsigned counts[] = { 1, 4, 64 };

	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	if (loadfile_read(path, NULL, &lf, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	futex_hash_sized();   /* first: the later runs size it too */
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			run_once("nop", counts[i], p);
			run_once("pipe", counts[i], p);
		}
	run_timed("nop", 4, false);
	run_timed("pipe", 4, false);
	run_timed("pipe", 4, true);
	run_failing(false, false);
	run_failing(false, true);
	run_failing(true, true);
	run_stalled(true, 0);
	run_stalled(true, 5);
	run_stalled(false, 5);
	run_dbench_warmup();
	run_killed_client();
	run_pass_times();
	live_time_left();
	loadfile_free(&lf);
	return test_done("test_driver");
}
